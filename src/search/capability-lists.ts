/**
 * The entries offering each capability value (what the `capabilities` filter asks: a skill's id,
 * or its name when it has none, and a tool's name, ./entry-store.ts offeredCapabilities), so a
 * listing by a value few entries offer reads those entries instead of walking every entry (at
 * 1,000,000 entries the walk took 24-110 ms, docs/scaling.md).
 *
 * Not a table by value: real catalogs have about as many distinct skill ids and tool names as
 * skills and tools, and a dictionary entry for each would not fit issue 22's heap budget. The
 * values are hashed into BUCKETS buckets instead, and a bucket lists the entries offering a value
 * that falls in it: at 1,000,000 entries about a hundred a bucket, of which the asked value's own
 * are sorted out by the filter's exact test (the caller's). Memory: 4 bytes a posting (about six
 * an entry with the generated entries: 25 MB at 1M) plus room to grow, and three arrays of
 * BUCKETS counters.
 *
 * A posting is the entry number and the low bits of its generation (./recency-lists.ts
 * RecencyLists.generation: bumped by every commit and removal of a number). An entry's postings
 * go stale when it is removed or its number is used again (an upsert takes a new number), and
 * are dropped lazily: a bucket is compacted in place when a read finds half of it stale, or when
 * it is full; the arena when a third of it is left behind by buckets that moved. Work stays per
 * entry, whatever the corpus. A stale posting whose generation bits come round again names a
 * live entry at worst, which the caller's exact test rules out.
 */

import { capabilityHash } from './capability-bits.js';
import { int32Part, type IndexState } from './index-state.js';
import { ORD_BITS } from './tables.js';

const BUCKET_BITS = 16;
const BUCKETS = 1 << BUCKET_BITS;
/** Entry numbers are below 2 ** (31 - ORD_BITS) (./tables.ts MAX_ENTRIES): number << GEN_BITS | generation is a non-negative Int32. */
const GEN_BITS = ORD_BITS;
const GEN_MASK = (1 << GEN_BITS) - 1;

const bucketOf = (value: string): number => capabilityHash(value) >>> (32 - BUCKET_BITS);

export class CapabilityLists {
  private off = new Int32Array(BUCKETS);
  private len = new Int32Array(BUCKETS);
  private cap = new Int32Array(BUCKETS);
  private arena = new Int32Array(1 << 16);
  private end = 0;
  /** Arena room no bucket holds any more (left behind when a bucket moved to the end). */
  private garbage = 0;
  /** Scratch of `add`: the buckets of one entry. */
  private readonly scratch = new Set<number>();

  /** `generation(no)`: entry number `no`'s current generation. */
  constructor(private readonly generation: (no: number) => number) {}

  /** Entry number `no` (committed: its generation is current) offers `values`. */
  add(no: number, values: Iterable<string>): void {
    const buckets = this.scratch;
    buckets.clear();
    for (const v of values) buckets.add(bucketOf(v));
    const posting = (no << GEN_BITS) | (this.generation(no) & GEN_MASK);
    for (const b of buckets) {
      if (this.len[b] === this.cap[b]) this.makeRoom(b);
      this.arena[this.off[b]! + this.len[b]!++] = posting;
    }
  }

  /**
   * The entry numbers whose current entries may offer one of `values` (a superset: other
   * values share their buckets), each once, pushed to `out`; false (with `out` left as it was
   * given) as soon as there are more than `atMost`, or at once when the buckets hold more than
   * twice as many postings (a bucket that is half stale is compacted only when read).
   */
  offering(values: Iterable<string>, atMost: number, out: number[]): boolean {
    const start = out.length;
    const buckets = new Set<number>();
    for (const v of values) buckets.add(bucketOf(v));
    // Far too many even if half of them were stale (and compacted): no read of each posting's
    // generation (a random read by entry number: a few milliseconds for a common value at 1M).
    let held = 0;
    for (const b of buckets) held += this.len[b]!;
    if (held > 2 * atMost) return false;
    const seen = buckets.size > 1 ? new Set<number>() : undefined;
    // Stale postings count against `atMost` too, until a bucket half stale is compacted.
    let postings = 0;
    for (const b of buckets) {
      const from = this.off[b]!;
      const n = this.len[b]!;
      let stale = 0;
      for (let i = from, to = from + n; i < to; i++) {
        const no = this.arena[i]! >>> GEN_BITS;
        if ((this.generation(no) & GEN_MASK) !== (this.arena[i]! & GEN_MASK)) {
          stale++;
          continue;
        }
        if (seen) {
          if (seen.has(no)) continue;
          seen.add(no);
        }
        out.push(no);
      }
      if (stale * 2 > n) this.compact(b);
      postings += this.len[b]!;
      if (postings > atMost) {
        out.length = start;
        return false;
      }
    }
    return true;
  }

  /** Postings held (stale ones included), and the arena's length in Int32s: for stats and tests. */
  get size(): { postings: number; arena: number } {
    let postings = 0;
    for (let b = 0; b < BUCKETS; b++) postings += this.len[b]!;
    return { postings, arena: this.arena.length };
  }

  /**
   * Its arrays into `state`, copied (they change in place). Laid out anew first (stale postings
   * dropped, a quarter of each bucket as room), so the room buckets took as they doubled while
   * the index was built goes back at the first save after it (44 -> 33 MB at 1M).
   */
  save(state: IndexState): void {
    for (let b = 0; b < BUCKETS; b++) this.compact(b);
    this.layOut(this.off, this.len, this.arena);
    state.set('capabilities.off', this.off.slice());
    state.set('capabilities.len', this.len.slice());
    state.set('capabilities.cap', this.cap.slice());
    state.set('capabilities.arena', this.arena.slice(0, this.end));
  }

  /** Takes over what `save` wrote (into a new, empty instance). */
  load(state: IndexState): void {
    const off = int32Part(state, 'capabilities.off');
    const len = int32Part(state, 'capabilities.len');
    const cap = int32Part(state, 'capabilities.cap');
    const arena = int32Part(state, 'capabilities.arena');
    if (off.length !== BUCKETS || len.length !== BUCKETS || cap.length !== BUCKETS) throw new Error('the saved capability lists are inconsistent');
    for (let b = 0; b < BUCKETS; b++) {
      if (len[b]! > cap[b]! || off[b]! + cap[b]! > arena.length) throw new Error('the saved capability lists are inconsistent');
    }
    this.layOut(off, len, arena);
  }

  /** The buckets (`off`, `len` into `arena`) copied into a new arena in bucket order, each with a quarter of its postings as room. */
  private layOut(off: Int32Array, len: Int32Array, arena: Int32Array): void {
    const newOff = new Int32Array(BUCKETS);
    const cap = new Int32Array(BUCKETS);
    let end = 0;
    for (let b = 0; b < BUCKETS; b++) {
      newOff[b] = end;
      cap[b] = len[b] === 0 ? 0 : Math.max(4, len[b]! + (len[b]! >>> 2));
      end += cap[b]!;
    }
    const laid = new Int32Array(Math.max(1 << 16, end + (end >>> 4)));
    for (let b = 0; b < BUCKETS; b++) laid.set(arena.subarray(off[b]!, off[b]! + len[b]!), newOff[b]!);
    this.off = newOff;
    this.len = len.slice();
    this.cap = cap;
    this.arena = laid;
    this.end = end;
    this.garbage = 0;
  }

  /** Drops bucket `b`'s stale postings, in place, order kept. */
  private compact(b: number): void {
    const from = this.off[b]!;
    let kept = from;
    for (let i = from, to = from + this.len[b]!; i < to; i++) {
      const p = this.arena[i]!;
      if ((this.generation(p >>> GEN_BITS) & GEN_MASK) === (p & GEN_MASK)) this.arena[kept++] = p;
    }
    this.len[b] = kept - from;
  }

  /** Room for one more posting in bucket `b`: its stale ones dropped, or the bucket moved to the arena's end with twice the room. */
  private makeRoom(b: number): void {
    this.compact(b);
    if (this.len[b]! < this.cap[b]!) return;
    const cap = Math.max(4, this.cap[b]! * 2);
    if (this.end + cap > this.arena.length) {
      if (this.garbage * 3 > this.end) this.compactArena();
      if (this.end + cap > this.arena.length) {
        const grown = new Int32Array(Math.max(this.end + cap, Math.ceil(this.arena.length * 1.5)));
        grown.set(this.arena.subarray(0, this.end));
        this.arena = grown;
      }
    }
    const from = this.off[b]!;
    this.arena.copyWithin(this.end, from, from + this.len[b]!);
    this.garbage += this.cap[b]!;
    this.off[b] = this.end;
    this.cap[b] = cap;
    this.end += cap;
  }

  /** Every bucket moved together, in bucket order, each with its room (the stale postings dropped first). */
  private compactArena(): void {
    let end = 0;
    for (let b = 0; b < BUCKETS; b++) {
      this.compact(b);
      // A bucket that shrank gives back most of its room.
      if (this.len[b]! * 4 < this.cap[b]!) this.cap[b] = Math.max(4, this.len[b]! * 2);
      end += this.cap[b]!;
    }
    const arena = new Int32Array(Math.max(1 << 16, end + (end >>> 3)));
    let at = 0;
    for (let b = 0; b < BUCKETS; b++) {
      arena.set(this.arena.subarray(this.off[b]!, this.off[b]! + this.len[b]!), at);
      this.off[b] = at;
      at += this.cap[b]!;
    }
    this.arena = arena;
    this.end = at;
    this.garbage = 0;
  }
}
