/**
 * Bitmaps of the entries that pass a filter's lasting tests (kind, streaming, verified, health,
 * owner, binding and version; for a skill- or tool-level filter, that one of the entry's skills or
 * tools passes), and for a skill- or tool-level filter of the units that pass it, kept for the
 * filters that searches ask for again.
 *
 * A text search with a filter reads every posting's entry state (4 MB at 1,000,000 entries), on
 * an entry's first posting its mark and attributes (1 and 4 MB), and with a skill- or tool-level
 * filter each posting's unit (its block's base, attributes, pooled tags and modes: four random
 * reads in tables of 4-30 MB). With the filter's bitmap (125 KB at 1,000,000 entries, in the L2
 * cache) the postings of entries that fail it are skipped with a bit test, and an entry it
 * allows needs no test of its own: the bitmap is exact (see `lastingDecides` in ./filters.ts for
 * the tests that change with time, which a search still runs itself). The units' bitmap (a bit
 * per unit slot: 0.9 MB at 1M) replaces a unit's attributes, pool offset and pool reads by one bit.
 *
 * Kept current lazily: the tables log the entry numbers whose attributes or liveness changed
 * (Tables.attrLog); every upsert allocates a new number and unit block, and a removal clears
 * the number's liveness, so the log names every entry whose verdict or units may have changed.
 * When a kept bitmap is used again, the entries logged since it was last used are tested again
 * (their units too), with the filter of the search at hand (compiled against the current
 * attributes, so a mode or tag that appeared since is known to it). When more changed than the
 * log holds, the bitmap is built anew.
 *
 * A bitmap is built the second time a filter is asked for, so a filter used once costs nothing:
 * one pass over the entry numbers (about 15 ms at 1,000,000), or over the members of the owner's
 * or tags' lists when the filter names them (a superset, much shorter). At most `capacity` are
 * kept, the least recently used dropped.
 */
import { bitmapOf, bitmapWords } from './entry-bits.js';
import { ATTR_LOG_SIZE, E_COUNT, E_SHIFT, M_LIVE, type Tables } from './tables.js';

/** What a kept bitmap needs of a compiled filter (./filters.ts). */
export interface LastingFilter {
  /** Equal for filters whose lasting tests are equal; undefined: no such tests. */
  readonly bitmapKey: string | undefined;
  /** True when hits must be skills or tools that pass `unitPasses`. */
  readonly unitLevel: boolean;
  /** The lasting entry-level tests of entry number `no` (not its liveness). */
  entryPassesLasting(no: number): boolean;
  /** The unit-level test of the unit in slot `slot` (when `unitLevel`). */
  unitPasses(slot: number): boolean;
}

/** A kept filter's bitmaps, as a search uses them (valid until the next `get`: updated in place). */
export interface FilterBits {
  /** A bit per entry number: set for the live entries that pass. */
  readonly entries: Int32Array;
  /** For a skill- or tool-level filter, a bit per unit slot: set for the passing units of the entries that pass. */
  readonly units: Int32Array | undefined;
}

interface Kept {
  /** Undefined while the filter passes more than `share` of the entries (not kept, see `selective`). */
  bits: Int32Array | undefined;
  /** The units' bits (unit-level filters, while `bits` is kept). */
  units: Int32Array | undefined;
  /** Entries set in `bits` (or passing, when it is undefined). */
  count: number;
  /** Tables.attrVersion when the bits (or the count) were last brought up to date. */
  version: number;
}

/** Filters asked for once are remembered (to build their bitmap the second time) up to this many. */
const MAX_ASKED = 1024;

export class FilterBitmaps {
  readonly #capacity: number;
  /** The bytes the kept bitmaps may take together (the one in use may exceed it alone). */
  readonly #maxBytes: number;
  /** The largest share of the entries a filter may pass for its bitmap to be kept (see `selective`). */
  readonly #share: number;
  /** In least recently used order. */
  readonly #kept = new Map<string, Kept>();
  readonly #asked = new Set<string>();

  constructor(capacity: number, maxBytes: number, share: number) {
    this.#capacity = Math.max(0, Math.floor(capacity));
    this.#maxBytes = maxBytes;
    this.#share = share;
  }

  /** How many bitmaps are kept (filters passing too many entries have none), and their bytes. */
  get stats(): { bitmaps: number; bytes: number } {
    let bitmaps = 0;
    let bytes = 0;
    for (const k of this.#kept.values()) {
      if (k.bits === undefined) continue;
      bitmaps++;
      bytes += bytesOf(k);
    }
    return { bitmaps, bytes };
  }

  /** Forgets every bitmap (the tables were replaced). */
  clear(): void {
    this.#kept.clear();
    this.#asked.clear();
  }

  /**
   * The bitmaps of the entries below `entryBound` that are live and pass `filter`'s lasting
   * tests and of their units (slots below `unitBound`) that pass, up to date with `tables`;
   * undefined for a filter without such tests or asked for the first time. `within`, when given,
   * holds every entry that may pass (the filter's owner's or tags' lists): a build tests only
   * those. Valid until the next call (updated in place).
   */
  get(filter: LastingFilter, tables: Tables, entryBound: number, unitBound: number, within?: Int32Array): FilterBits | undefined {
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
      kept = build(filter, tables, entryBound, unitBound, this.#share, within);
    } else {
      this.#kept.delete(key);
      this.#refresh(kept, filter, tables, entryBound, unitBound, within);
    }
    // The least recently used go first, down to the capacity and the byte budget.
    let bytes = bytesOf(kept);
    for (const k of this.#kept.values()) bytes += bytesOf(k);
    for (const [oldest, k] of this.#kept) {
      if (this.#kept.size < this.#capacity && bytes <= this.#maxBytes) break;
      this.#kept.delete(oldest);
      bytes -= bytesOf(k);
    }
    this.#kept.set(key, kept);
    return kept.bits === undefined ? undefined : { entries: kept.bits, units: kept.units };
  }

  /** Tests again the entries logged since `kept` was last brought up to date (or builds it anew). */
  #refresh(kept: Kept, filter: LastingFilter, tables: Tables, entryBound: number, unitBound: number, within: Int32Array | undefined): void {
    const behind = tables.attrVersion - kept.version;
    if (behind === 0) return;
    // Past the log, or as many changes as a pass over every entry costs, or a filter that passed
    // too many entries to keep its bits once enough changed to tell otherwise: count it anew.
    if (behind > ATTR_LOG_SIZE || behind > entryBound || (kept.bits === undefined && behind * 4 > kept.count)) {
      Object.assign(kept, build(filter, tables, entryBound, unitBound, this.#share, within));
      return;
    }
    const bits = kept.bits;
    if (bits === undefined) return;
    const room = grown(bits, entryBound);
    const units = kept.units === undefined ? undefined : grown(kept.units, unitBound);
    let count = kept.count;
    for (let v = kept.version; v < tables.attrVersion; v++) {
      const no = tables.attrLog[v & (ATTR_LOG_SIZE - 1)]!;
      const bit = 1 << (no & 31);
      const was = (room[no >>> 5]! & bit) !== 0;
      const is = passes(filter, tables, no, units);
      if (is === was) continue;
      room[no >>> 5]! ^= bit;
      count += is ? 1 : -1;
    }
    const keep = selective(count, entryBound, this.#share);
    kept.bits = keep ? room : undefined;
    kept.units = keep ? units : undefined;
    kept.count = count;
    kept.version = tables.attrVersion;
  }
}

const bytesOf = (k: Kept): number => (k.bits?.byteLength ?? 0) + (k.units?.byteLength ?? 0);

/** `bits` with room for `bound` numbers (a copy when it had to grow). */
function grown(bits: Int32Array, bound: number): Int32Array {
  const room = bitmapOf(bits, bitmapWords(bound));
  if (room !== bits) room.set(bits);
  return room;
}

/**
 * Whether entry number `no` is live and passes `filter`'s lasting tests, and, for a unit-level
 * filter, has a unit that passes; sets `units`' bits of its block to its units' verdicts. (The
 * bits of a removed entry's block are left: its entry bit, cleared, keeps a search from them,
 * and the block's next entry is logged and tested when it is allocated.)
 */
function passes(filter: LastingFilter, tables: Tables, no: number, units: Int32Array | undefined): boolean {
  if ((tables.marks[no]! & M_LIVE) === 0 || !filter.entryPassesLasting(no)) return false;
  if (units === undefined) return true;
  const base = tables.unitBase[no]!;
  const end = base + tables.entries[(no << E_SHIFT) + E_COUNT]!;
  let any = false;
  for (let slot = base; slot < end; slot++) {
    const bit = 1 << (slot & 31);
    if (filter.unitPasses(slot)) {
      units[slot >>> 5]! |= bit;
      any = true;
    } else {
      units[slot >>> 5]! &= ~bit;
    }
  }
  return any;
}

/**
 * Whether a filter passing `count` entries keeps its bits: at most `share` of the entries (by
 * default every filter: an entry the bitmap allows needs no test of its own, so even a filter
 * passing most entries saves a read of their attributes; see docs/scaling.md).
 */
const selective = (count: number, entryBound: number, share: number): boolean => count <= entryBound * share;

const NO_BITS = new Int32Array(0);

function build(filter: LastingFilter, tables: Tables, entryBound: number, unitBound: number, share: number, within: Int32Array | undefined): Kept {
  const bits = bitmapOf(NO_BITS, bitmapWords(entryBound));
  const units = filter.unitLevel ? bitmapOf(NO_BITS, bitmapWords(unitBound)) : undefined;
  let count = 0;
  const test = (no: number): void => {
    if (!passes(filter, tables, no, units)) return;
    bits[no >>> 5]! |= 1 << (no & 31);
    count++;
  };
  if (within === undefined) {
    for (let no = 0; no < entryBound; no++) test(no);
  } else {
    const words = Math.min(within.length, bitmapWords(entryBound));
    for (let w = 0; w < words; w++) {
      for (let word = within[w]!; word !== 0; word &= word - 1) {
        const no = (w << 5) | (31 - Math.clz32(word & -word));
        if (no < entryBound) test(no);
      }
    }
  }
  const keep = selective(count, entryBound, share);
  return { bits: keep ? bits : undefined, units: keep ? units : undefined, count, version: tables.attrVersion };
}
