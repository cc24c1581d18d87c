/**
 * Bitmaps of the entries that pass a filter's lasting entry-level tests (kind, streaming,
 * verified, health, owner, binding and version, and the skill and tool signatures), kept for the
 * filters that searches ask for again.
 *
 * A text search with an entry-level filter reads every posting's entry state (4 MB at 1,000,000
 * entries) and, on an entry's first posting, its attributes (another 4 MB), only to reject most
 * of them when the filter is selective. With the filter's bitmap (125 KB at 1,000,000 entries, in
 * the L2 cache) the postings of entries that fail it are skipped with a bit test, as the postings
 * of entries outside a named owner's or tag's list already are (PostingsIndex.namedEntries). The
 * search still runs the filter's own tests on what passes: a bitmap only has to hold every entry
 * that may pass (time-dependent tests such as hiding long-unhealthy entries are left to them).
 *
 * Kept current lazily: the tables log the entry numbers whose attributes or liveness changed
 * (Tables.attrLog); when a kept bitmap is used again, the entries logged since it was last used
 * are tested again, with the filter of the search at hand (compiled against the current
 * attributes, so a mode or tag that appeared since is known to it). An entry's verdict changes
 * only with its own attributes, which are logged. When more changed than the log holds, the
 * bitmap is built anew.
 *
 * A bitmap is built (one pass over every entry number) the second time a filter is asked for, so
 * a filter used once costs nothing; at most `capacity` are kept, the least recently used dropped.
 */
import { bitmapOf, bitmapWords } from './entry-bits.js';
import { ATTR_LOG_SIZE, M_LIVE, type Tables } from './tables.js';

/** What a kept bitmap needs of a compiled filter (./filters.ts). */
export interface LastingFilter {
  /** Equal for filters whose lasting entry-level tests are equal; undefined: no such tests. */
  readonly bitmapKey: string | undefined;
  /** The lasting entry-level tests of entry number `no` (not its liveness). */
  entryPassesLasting(no: number): boolean;
}

interface Kept {
  /** Undefined while the filter passes more than a quarter of the entries (not kept, see `get`). */
  bits: Int32Array | undefined;
  /** Entries set in `bits` (or passing, when it is undefined). */
  count: number;
  /** Tables.attrVersion when the bits (or the count) were last brought up to date. */
  version: number;
}

/** Filters asked for once are remembered (to build their bitmap the second time) up to this many. */
const MAX_ASKED = 1024;

export class FilterBitmaps {
  readonly #capacity: number;
  /** The largest share of the entries a filter may pass for its bitmap to be kept (see `selective`). */
  readonly #share: number;
  /** In least recently used order. */
  readonly #kept = new Map<string, Kept>();
  readonly #asked = new Set<string>();

  constructor(capacity: number, share: number) {
    this.#capacity = Math.max(0, Math.floor(capacity));
    this.#share = share;
  }

  /** How many bitmaps are kept (filters passing too many entries have none), and their bytes. */
  get stats(): { bitmaps: number; bytes: number } {
    let bitmaps = 0;
    let bytes = 0;
    for (const k of this.#kept.values()) {
      if (k.bits === undefined) continue;
      bitmaps++;
      bytes += k.bits.byteLength;
    }
    return { bitmaps, bytes };
  }

  /** Forgets every bitmap (the tables were replaced). */
  clear(): void {
    this.#kept.clear();
    this.#asked.clear();
  }

  /**
   * The bitmap of the entries below `entryBound` that are live and pass `filter`'s lasting tests,
   * up to date with `tables`; undefined for a filter without such tests or asked for the first
   * time. Valid until the next call (it is updated in place).
   */
  get(filter: LastingFilter, tables: Tables, entryBound: number): Int32Array | undefined {
    const key = filter.bitmapKey;
    if (key === undefined || this.#capacity === 0) return undefined;
    let kept = this.#kept.get(key);
    if (kept === undefined) {
      if (!this.#asked.has(key)) {
        if (this.#asked.size >= MAX_ASKED) this.#asked.clear();
        this.#asked.add(key);
        return undefined;
      }
      this.#asked.delete(key);
      kept = build(filter, tables, entryBound, this.#share);
      if (this.#kept.size >= this.#capacity) this.#kept.delete(this.#kept.keys().next().value!);
    } else {
      this.#kept.delete(key);
      this.#refresh(kept, filter, tables, entryBound);
    }
    this.#kept.set(key, kept);
    return kept.bits;
  }

  /** Tests again the entries logged since `kept` was last brought up to date (or builds it anew). */
  #refresh(kept: Kept, filter: LastingFilter, tables: Tables, entryBound: number): void {
    const behind = tables.attrVersion - kept.version;
    if (behind === 0) return;
    // Past the log, or as many changes as a pass over every entry costs, or a filter that passed
    // too many entries to keep its bits once enough changed to tell otherwise: count it anew.
    if (behind > ATTR_LOG_SIZE || behind > entryBound || (kept.bits === undefined && behind * 4 > kept.count)) {
      Object.assign(kept, build(filter, tables, entryBound, this.#share));
      return;
    }
    const bits = kept.bits;
    if (bits === undefined) return;
    const room = bitmapOf(bits, bitmapWords(entryBound));
    if (room !== bits) room.set(bits);
    const marks = tables.marks;
    let count = kept.count;
    for (let v = kept.version; v < tables.attrVersion; v++) {
      const no = tables.attrLog[v & (ATTR_LOG_SIZE - 1)]!;
      const bit = 1 << (no & 31);
      const was = (room[no >>> 5]! & bit) !== 0;
      const is = (marks[no]! & M_LIVE) !== 0 && filter.entryPassesLasting(no);
      if (is === was) continue;
      room[no >>> 5]! ^= bit;
      count += is ? 1 : -1;
    }
    kept.bits = selective(count, entryBound, this.#share) ? room : undefined;
    kept.count = count;
    kept.version = tables.attrVersion;
  }
}

/**
 * Whether skipping by the bitmap pays: a filter passing more than a share of the entries (a
 * quarter by default, as for an owner's or a tag's list: PostingsIndex.namedEntries) rejects few
 * postings, so its bitmap saves little (single searches with `streaming: true` or `kind: agent`
 * at 1,000,000 entries were no faster with it) while it takes one of the kept places.
 */
const selective = (count: number, entryBound: number, share: number): boolean => count <= entryBound * share;

const NO_BITS = new Int32Array(0);

function build(filter: LastingFilter, tables: Tables, entryBound: number, share: number): Kept {
  const bits = bitmapOf(NO_BITS, bitmapWords(entryBound));
  const marks = tables.marks;
  let count = 0;
  for (let no = 0; no < entryBound; no++) {
    if ((marks[no]! & M_LIVE) !== 0 && filter.entryPassesLasting(no)) {
      bits[no >>> 5]! |= 1 << (no & 31);
      count++;
    }
  }
  return { bits: selective(count, entryBound, share) ? bits : undefined, count, version: tables.attrVersion };
}
