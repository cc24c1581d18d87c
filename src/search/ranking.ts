/**
 * Ranking and paging over candidate units.
 *
 * Total order (deterministic): relevance key desc (matched query words first, then the
 * field-weighted score), then the entry's place in `list`'s order desc (its `list_seq`: newest
 * registered first, exactly as `list` orders), then the entry id asc and the entry number asc
 * (reached only by entries given the same place, which storage never gives), then the unit's
 * position in its entry asc. Ties are broken by what an update does not change, so an update that
 * leaves an entry's relevance as it was keeps its place, and a search walked page by page meets
 * it once (../registry/search-cursor.ts).
 *
 * The place is storage's own sequence, not the registration time and id: entries created in
 * one millisecond (a registration burst; a PostgreSQL import batch shares one `created_at`) went
 * by their UUIDv7 ids' random bits. Ids made strictly increasing within a process (a monotonic
 * v7, ties to the larger id) would not do either: they follow list_seq only where one step takes
 * both, and a PostgreSQL write takes its id and time before its claims and its list_seq at the
 * insert (concurrent registrations swap), replicas and an `a2a-registry import` process make
 * ids and times of their own, and entries stored before would keep their random order. list_seq
 * is what `list` orders by, comes with every row read, and takes the 8 bytes an entry the time
 * took: no memory added, and ids keep their 73 random bits (../lib/time-ordered-id.ts).
 *
 * Grouping (results per match): an entry contributes at most GROUP_LIMIT hits, its best ones in
 * that order; the last one shown carries `moreInEntry` (how many were folded). Results per entry
 * rank one candidate per entry (its best unit, with the entry's key) through the same code. The grouped list is the ordered
 * candidate list minus each entry's hits beyond GROUP_LIMIT: a fixed total order, so
 * offset/limit paging returns every grouped hit exactly once.
 *
 * Only the page is sorted: a bounded heap picks the best M candidates (M grows until the page is
 * covered once grouping has dropped what it drops), so a query matching 100,000 units costs
 * O(n log M) comparisons, nearly all of them one number compare.
 */

import { E_SHIFT, E_SHOWN, ORD_BITS, ORD_MASK } from './tables.js';

export const GROUP_LIMIT = 3;

/** Set bits of a 32-bit word (a search's clause bits). */
export const popcount = (x: number): number => {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
};

export interface RankContext {
  /** Candidates: unit ids and their relevance keys (higher is better), by position. */
  readonly ids: Int32Array;
  readonly keys: Float64Array;
  /** Candidates of entry number `no` in this search (for moreInEntry); read for shown hits only. */
  readonly hitsOf: (no: number) => number;
  /** Entry rows (./tables.ts): E_SHOWN (scratch). */
  readonly entryRows: Int32Array;
  /** The place in `list`'s order (larger: newer) by entry number. */
  readonly listSeq: Float64Array;
  /** How the ids of two entry numbers order as strings (./entry-ids.ts EntryIds.compare). */
  readonly compareIds: (a: number, b: number) => number;
}

export interface RankedHit {
  /** Position in the candidate arrays. */
  pos: number;
  id: number;
  key: number;
  /** Set on an entry's last shown hit when more of its hits were folded. */
  moreInEntry: number;
}

/** True when candidate position `a` orders before position `b`. */
function before(ctx: RankContext, a: number, b: number): boolean {
  const ka = ctx.keys[a]!;
  const kb = ctx.keys[b]!;
  if (ka !== kb) return ka > kb;
  const ua = ctx.ids[a]!;
  const ub = ctx.ids[b]!;
  const ea = ua >>> ORD_BITS;
  const eb = ub >>> ORD_BITS;
  if (ea !== eb) {
    const ta = ctx.listSeq[ea]!;
    const tb = ctx.listSeq[eb]!;
    if (ta !== tb) return ta > tb;
    const byId = ctx.compareIds(ea, eb);
    return byId !== 0 ? byId < 0 : ea < eb;
  }
  return (ua & ORD_MASK) < (ub & ORD_MASK);
}

function byOrder(ctx: RankContext, positions: number[]): number[] {
  return positions.sort((a, b) => (before(ctx, a, b) ? -1 : before(ctx, b, a) ? 1 : 0));
}

// A heap of positions kept "worst first": heap[0] is the worst of the best m seen so far.
function siftUp(ctx: RankContext, heap: Int32Array, i: number): void {
  const x = heap[i]!;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!before(ctx, heap[p]!, x)) break;
    heap[i] = heap[p]!;
    i = p;
  }
  heap[i] = x;
}

function siftDown(ctx: RankContext, heap: Int32Array, size: number, i: number): void {
  const x = heap[i]!;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= size) break;
    const r = l + 1;
    const c = r < size && before(ctx, heap[l]!, heap[r]!) ? r : l;
    if (!before(ctx, x, heap[c]!)) break;
    heap[i] = heap[c]!;
    i = c;
  }
  heap[i] = x;
}

/** Positions of the best `m` of the first `n` candidates, best first. */
export function selectTop(ctx: RankContext, n: number, m: number): number[] {
  if (m >= n) return byOrder(ctx, Array.from({ length: n }, (_, i) => i));
  const heap = new Int32Array(m);
  let size = 0;
  const keys = ctx.keys;
  for (let i = 0; i < n; i++) {
    if (size < m) {
      heap[size] = i;
      siftUp(ctx, heap, size++);
    } else {
      // Fast reject on the relevance key alone; full comparison only on ties or wins.
      if (keys[i]! < keys[heap[0]!]!) continue;
      if (before(ctx, i, heap[0]!)) {
        heap[0] = i;
        siftDown(ctx, heap, size, 0);
      }
    }
  }
  return byOrder(ctx, Array.from(heap.subarray(0, size)));
}

/**
 * The `k`-th largest of `values[0, n)` (1 <= k <= n): a min-heap of the `k` largest seen, in
 * `heap` (scratch, at least `k` long), so O(n log k) without sorting or allocating.
 */
export function kthLargest(values: Float64Array, n: number, k: number, heap: Float64Array): number {
  let size = 0;
  for (let j = 0; j < n; j++) {
    const v = values[j]!;
    if (size < k) {
      let i = size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (heap[parent]! <= v) break;
        heap[i] = heap[parent]!;
        i = parent;
      }
      heap[i] = v;
    } else if (v > heap[0]!) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= size) break;
        const c = l + 1 < size && heap[l + 1]! < heap[l]! ? l + 1 : l;
        if (heap[c]! >= v) break;
        heap[i] = heap[c]!;
        i = c;
      }
      heap[i] = v;
    }
  }
  return heap[0]!;
}

/**
 * Grouped hits [offset, offset + limit) of the first `n` candidates, at most `groupLimit` per
 * entry (1 when every candidate is a different entry already).
 */
export function page(ctx: RankContext, n: number, offset: number, limit: number, groupLimit = GROUP_LIMIT): RankedHit[] {
  const needed = offset + limit;
  if (limit <= 0 || n === 0) return [];
  const rows = ctx.entryRows;
  let m = Math.min(n, needed + 16);
  for (;;) {
    const top = selectTop(ctx, n, m);
    const out: RankedHit[] = [];
    let kept = 0;
    for (const pos of top) {
      const row = (ctx.ids[pos]! >>> ORD_BITS) << E_SHIFT;
      const shown = rows[row + E_SHOWN]!;
      if (shown >= groupLimit) continue;
      rows[row + E_SHOWN] = shown + 1;
      if (kept >= offset) {
        const hits = ctx.hitsOf(ctx.ids[pos]! >>> ORD_BITS);
        const more = shown + 1 === groupLimit && hits > groupLimit ? hits - groupLimit : 0;
        out.push({ pos, id: ctx.ids[pos]!, key: ctx.keys[pos]!, moreInEntry: more });
      }
      kept++;
      if (kept >= needed) break;
    }
    for (const pos of top) rows[((ctx.ids[pos]! >>> ORD_BITS) << E_SHIFT) + E_SHOWN] = 0;
    if (kept >= needed || m >= n) return out;
    m = Math.min(n, m * 4);
  }
}
