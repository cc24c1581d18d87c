/**
 * Bitmaps of the entries that pass a filter's lasting entry-level tests (kind, streaming,
 * verified, health, owner, binding and version, and the skill and tool signatures a skill- or
 * tool-level filter implies), and for a skill- or tool-level filter the verdicts of the units
 * tested so far, kept for the filters that searches ask for again.
 *
 * A text search with a filter reads every posting's entry state (4 MB at 1,000,000 entries), on
 * an entry's first posting its mark and attributes (1 and 4 MB), and with a skill- or tool-level
 * filter each posting's unit (its block's base, attributes, pooled tags and modes: up to four
 * random reads in tables of 4-30 MB). With the filter's bitmap (125 KB at 1,000,000 entries, in
 * the L2 cache) the postings of entries that fail it are skipped with a bit test, and an entry it
 * allows needs no test of its own: the bitmap is exact (see `lastingDecides` in ./filters.ts for
 * the tests that change with time, which a search still runs itself). The units' verdicts (two
 * bits per unit slot: 1.8 MB at 1M) are filled in as searches test units (`unitVerdict`), so a
 * unit tested once for the filter is then answered by one read.
 *
 * Kept current lazily: the tables log the entry numbers whose attributes or liveness changed
 * (Tables.attrLog); every upsert allocates a new number and unit block, and a removal clears
 * the number's liveness, so the log names every entry whose verdict or units may have changed.
 * When a kept bitmap is used again, the entries logged since it was last used are tested again
 * with the filter of the search at hand (compiled against the current attributes, so a mode or
 * tag that appeared since is known to it). Units' verdicts stay true until the unit blocks are
 * compacted (Tables.unitMoves), which voids them all. When more changed than the log holds, the
 * bitmap is built anew.
 *
 * A bitmap is built the second time a filter is asked for, so a filter used once costs nothing:
 * one pass over the entry numbers (about 15 ms at 1,000,000), or over the members of the owner's
 * or tags' lists when the filter names them (much shorter; the bitmap then holds only them). At
 * most `capacity` are kept, within `maxBytes`, the least recently used dropped first.
 */
import { bitmapOf, bitmapWords } from './entry-bits.js';
import { ATTR_LOG_SIZE, M_LIVE, type Tables } from './tables.js';

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
  /** For a skill- or tool-level filter, two bits per unit slot: its verdict, see `unitVerdict`. */
  readonly units: Int32Array | undefined;
}

/** A unit's verdict in FilterBits.units: not tested yet (0), fails, passes. */
const UNIT_FAILS = 1;
const UNIT_PASSES = 3;

/**
 * Whether the unit in slot `slot` passes `filter`, from its verdict in `units` (the filter's
 * kept FilterBits.units), tested and recorded there the first time.
 */
export function unitVerdict(units: Int32Array, slot: number, filter: LastingFilter): boolean {
  const word = slot >>> 4;
  const shift = (slot & 15) << 1;
  const verdict = (units[word]! >>> shift) & 3;
  if (verdict !== 0) return verdict === UNIT_PASSES;
  const passes = filter.unitPasses(slot);
  units[word]! |= (passes ? UNIT_PASSES : UNIT_FAILS) << shift;
  return passes;
}

/** Two bits a slot: the verdicts of the slots below `unitBound` take a bitmap of this many numbers. */
const verdictBound = (unitBound: number): number => unitBound * 2;

/** A bitmap of every entry that may pass a filter, or undefined (any may). */
type Within = () => Int32Array | undefined;

interface Kept {
  bits: Int32Array;
  /** The units' verdicts (unit-level filters). */
  units: Int32Array | undefined;
  /** Tables.attrVersion when the bits were last brought up to date. */
  version: number;
  /** Tables.unitMoves when the units' verdicts were recorded. */
  unitMoves: number;
}

/** Filters asked for once are remembered (to build their bitmap the second time) up to this many. */
const MAX_ASKED = 1024;

export class FilterBitmaps {
  readonly #capacity: number;
  /** The bytes the kept bitmaps may take together (the one in use may exceed it alone). */
  readonly #maxBytes: number;
  /** In least recently used order. */
  readonly #kept = new Map<string, Kept>();
  readonly #asked = new Set<string>();

  constructor(capacity: number, maxBytes: number) {
    this.#capacity = Math.max(0, Math.floor(capacity));
    this.#maxBytes = maxBytes;
  }

  /** How many bitmaps are kept, and their bytes. */
  get stats(): { bitmaps: number; bytes: number } {
    let bytes = 0;
    for (const k of this.#kept.values()) bytes += bytesOf(k);
    return { bitmaps: this.#kept.size, bytes };
  }

  /** Forgets every bitmap (the tables were replaced). */
  clear(): void {
    this.#kept.clear();
    this.#asked.clear();
  }

  /**
   * The bitmaps of the entries below `entryBound` that are live and pass `filter`'s lasting
   * tests and of their units (slots below `unitBound`) that pass, up to date with `tables`;
   * undefined for a filter without such tests or asked for the first time. `within`, asked only
   * when a bitmap is built, may give a bitmap of every entry that may pass (the filter's owner's
   * or tags' lists): the build then tests only those. Valid until the next call (updated in place).
   */
  get(filter: LastingFilter, tables: Tables, entryBound: number, unitBound: number, within: Within): FilterBits | undefined {
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
      kept = build(filter, tables, entryBound, unitBound, within);
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
    return { entries: kept.bits, units: kept.units };
  }

  /** Tests again the entries logged since `kept` was last brought up to date (or builds it anew). */
  #refresh(kept: Kept, filter: LastingFilter, tables: Tables, entryBound: number, unitBound: number, within: Within): void {
    // Verdicts are by slot. A new entry's block takes slots never used before (blocks are
    // appended) until the blocks are compacted: then every verdict may be another unit's.
    if (kept.unitMoves !== tables.unitMoves) {
      kept.units?.fill(0);
      kept.unitMoves = tables.unitMoves;
    }
    const behind = tables.attrVersion - kept.version;
    if (behind === 0) return;
    // Past the log, or as many changes as a pass over every entry costs: built anew.
    if (behind > ATTR_LOG_SIZE || behind > entryBound) {
      Object.assign(kept, build(filter, tables, entryBound, unitBound, within));
      return;
    }
    const bits = grown(kept.bits, entryBound);
    for (let v = kept.version; v < tables.attrVersion; v++) {
      const no = tables.attrLog[v & (ATTR_LOG_SIZE - 1)]!;
      const bit = 1 << (no & 31);
      if (passesLasting(filter, tables, no)) bits[no >>> 5]! |= bit;
      else bits[no >>> 5]! &= ~bit;
    }
    kept.bits = bits;
    if (kept.units !== undefined) kept.units = grown(kept.units, verdictBound(unitBound));
    kept.version = tables.attrVersion;
  }
}

const bytesOf = (k: Kept): number => k.bits.byteLength + (k.units?.byteLength ?? 0);

/** `bits` with room for `bound` numbers (a copy when it had to grow). */
function grown(bits: Int32Array, bound: number): Int32Array {
  const room = bitmapOf(bits, bitmapWords(bound));
  if (room !== bits) room.set(bits);
  return room;
}

const passesLasting = (filter: LastingFilter, tables: Tables, no: number): boolean =>
  (tables.marks[no]! & M_LIVE) !== 0 && filter.entryPassesLasting(no);

const NO_BITS = new Int32Array(0);

/**
 * A filter's bitmap, built anew. Every filter asked for again keeps one, however many entries it
 * passes: an entry the bitmap allows needs no test of its own, so even a filter passing most
 * entries saves a read of their attributes (docs/scaling.md).
 */
function build(filter: LastingFilter, tables: Tables, entryBound: number, unitBound: number, withinOf: Within): Kept {
  const within = withinOf();
  const bits = bitmapOf(NO_BITS, bitmapWords(entryBound));
  const units = filter.unitLevel ? bitmapOf(NO_BITS, bitmapWords(verdictBound(unitBound))) : undefined;
  const test = (no: number): void => {
    if (passesLasting(filter, tables, no)) bits[no >>> 5]! |= 1 << (no & 31);
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
  return { bits, units, version: tables.attrVersion, unitMoves: tables.unitMoves };
}
