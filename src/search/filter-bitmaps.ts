/**
 * Bitmaps of the entries that pass a filter's lasting entry-level tests (kind, streaming,
 * verified, health, owner, binding and version, the capabilities offered, and the skill and tool
 * signatures a skill- or tool-level filter implies), and for a skill- or tool-level filter the
 * verdicts of the units tested so far, kept for the filters that searches ask for again.
 *
 * A text search with a filter reads every posting's entry state (4 MB at 1,000,000 entries), on
 * an entry's first posting its mark and attributes (1 and 4 MB), and with a skill- or tool-level
 * filter each posting's unit (its block's base, attributes, pooled tags and modes: up to four
 * random reads in tables of 4-30 MB). With the filter's bitmap (125 KB at 1,000,000 entries, in
 * the L2 cache) the postings of entries that fail it are skipped with a bit test, and an entry it
 * allows needs no test of its own: the bitmap is exact (see `lastingDecides` in ./filters.ts for
 * the tests that change with time, which a search still runs itself). The units' verdicts (16
 * bits an entry: 2.2 MB at 1M) are filled in as searches meet entries (`unitPassesKept`): the
 * first posting of an entry tests its first VERDICT_ORDS skills or tools at once (one block, read
 * in order), and every posting after is answered by one read, without the unit block's base.
 *
 * Kept current lazily: the tables log the entry numbers whose attributes or liveness changed
 * (Tables.attrLog); every upsert allocates a new number and unit block, and a removal clears
 * the number's liveness, so the log names every entry whose verdict or units may have changed.
 * When a kept bitmap is used again, the entries logged since it was last used are tested again
 * with the filter of the search at hand (compiled against the current attributes, so a mode or
 * tag that appeared since is known to it), and their units' verdicts are forgotten (a number is
 * used again only for another entry). An entry's units and their ordinals never change while it
 * keeps its number (compacting the unit blocks moves them, in order), so the other verdicts stay
 * true. When more changed than the log holds, the bitmap is built anew and every verdict forgotten.
 *
 * A bitmap is built the second time a filter is asked for, so a filter used once costs nothing:
 * one pass over the entry numbers (about 15 ms at 1,000,000), or over the members of the owner's
 * or tags' lists when the filter names them (much shorter; the bitmap then holds only them).
 *
 * What is kept, within `capacity` bitmaps and `maxBytes`, follows how often each filter is asked
 * for (counts halved every AGE_EVERY asks, so that they follow what is asked now). When the room
 * is taken, a filter's bitmap is built only if it was asked for at least twice as often as those
 * it pushes out (`outweighs`). Dropping the least recently used instead thrashed once more
 * filters were in use than fit (1,000 searches in turn with 350 distinct filters at 1M): each
 * bitmap was pushed out before its filter's next search, so searches kept paying for builds they
 * never used, slower than with no bitmaps at all (docs/scaling.md, "Kept bitmaps under many
 * filters"). The units' verdicts (2.2 MB at 1M, sixteen times an entry bitmap, and worth less)
 * take what room the entry bitmaps leave: an entry bitmap may push out any filter's verdicts,
 * verdicts only those of filters asked for at most half as often.
 */
import { bitmapOf, bitmapWords, forEachBit, withRoom } from './entry-bits.js';
import { ATTR_LOG_SIZE, E_COUNT, E_SHIFT, M_LIVE, type Tables } from './tables.js';

/** What a kept bitmap needs of a compiled filter (./filters.ts). */
export interface LastingFilter {
  /**
   * Equal for filters whose lasting tests give an entry not changed since (its number not
   * logged) the same verdict, whatever values came and went meanwhile; undefined: no such tests.
   */
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
  /** For a skill- or tool-level filter, its units' verdicts by entry number: see `unitPassesKept`. */
  readonly units: Uint16Array | undefined;
}

/** The ordinals whose verdicts an entry keeps (1 to 15: its first fifteen skills or tools). */
export const VERDICT_ORDS = 15;
/** Set in an entry's verdicts once its units were tested (bit ord - 1: unit `ord` passes). */
const TESTED = 1 << VERDICT_ORDS;

/**
 * Whether unit `ord` (1 to VERDICT_ORDS) of entry number `no` passes `filter`, from the entry's
 * verdicts in `units` (the filter's kept FilterBits.units); the first time, its units up to
 * VERDICT_ORDS are tested and recorded (one block, read in order).
 */
export function unitPassesKept(units: Uint16Array, no: number, ord: number, filter: LastingFilter, tables: Tables): boolean {
  let verdicts = units[no]!;
  if (verdicts === 0) {
    verdicts = TESTED;
    const base = tables.unitBase[no]!;
    const count = Math.min(tables.entries[(no << E_SHIFT) + E_COUNT]!, VERDICT_ORDS + 1);
    for (let k = 1; k < count; k++) if (filter.unitPasses(base + k)) verdicts |= 1 << (k - 1);
    units[no] = verdicts;
  }
  return (verdicts & (1 << (ord - 1))) !== 0;
}

/** A bitmap of every entry that may pass a filter, or undefined (any may). */
type Within = () => Int32Array | undefined;

interface Kept {
  bits: Int32Array;
  /** The units' verdicts (unit-level filters). */
  units: Uint16Array | undefined;
  /** Tables.attrVersion when the bits were last brought up to date. */
  version: number;
}

/**
 * Whether a filter asked for `asks` times may push out what a filter asked for `keptAsks` times
 * keeps: when asked at least twice as often. Filters asked for about as often (searches in
 * turn) would otherwise push each other out in turn, since in the middle of a round those asked
 * already are one ahead.
 */
const outweighs = (asks: number, keptAsks: number): boolean => asks >= 2 * keptAsks;

/** How often filters were asked for is remembered for up to this many filters. */
const MAX_ASKED = 1024;
/** Every this many asks, every filter's count is halved (and the zeros forgotten). */
const AGE_EVERY = 4096;

export class FilterBitmaps {
  readonly #capacity: number;
  /** The bytes the kept bitmaps may take together (the one in use may exceed it alone). */
  readonly #maxBytes: number;
  /** In least recently used order. */
  readonly #kept = new Map<string, Kept>();
  /** How often each filter was asked for lately (kept or not). */
  readonly #asks = new Map<string, number>();
  #asksSinceAging = 0;
  /** Bitmaps built so far (each costs a pass over the entries or a list's members). */
  #built = 0;

  constructor(capacity: number, maxBytes: number) {
    this.#capacity = Math.max(0, Math.floor(capacity));
    this.#maxBytes = maxBytes;
  }

  /** Bitmaps kept, how many of them with their units' verdicts, their bytes, and bitmaps built so far. */
  get stats(): { bitmaps: number; verdicts: number; bytes: number; built: number } {
    let verdicts = 0;
    for (const k of this.#kept.values()) if (k.units !== undefined) verdicts++;
    return { bitmaps: this.#kept.size, verdicts, bytes: this.#bytes(), built: this.#built };
  }

  /** Forgets every bitmap (the tables were replaced). */
  clear(): void {
    this.#kept.clear();
    this.#asks.clear();
    this.#asksSinceAging = 0;
  }

  /**
   * The bitmaps of the entries below `entryBound` that are live and pass `filter`'s lasting
   * tests and, when there is room, their units' verdicts, up to date with `tables`; undefined
   * for a filter without such tests, asked for the first time, or asked for less often than the
   * kept ones it would push out. `within`, asked only when a bitmap is built, may give a bitmap
   * of every entry that may pass (the filter's owner's or tags' lists): the build then tests only
   * those. Valid until the next call (updated in place).
   */
  get(filter: LastingFilter, tables: Tables, entryBound: number, within: Within): FilterBits | undefined {
    const key = filter.bitmapKey;
    if (key === undefined || this.#capacity === 0) return undefined;
    const asks = this.#ask(key);
    let kept = this.#kept.get(key);
    if (kept !== undefined) {
      this.#kept.delete(key);
      this.#refresh(kept, filter, tables, entryBound, within);
    } else {
      if (asks < 2 || !this.#makeRoom(4 * withRoom(bitmapWords(entryBound)), asks, false)) return undefined;
      kept = { bits: build(filter, tables, entryBound, within), units: undefined, version: tables.attrVersion };
      this.#built++;
    }
    // Most recently used last.
    this.#kept.set(key, kept);
    if (filter.unitLevel && kept.units === undefined && this.#makeRoom(2 * withRoom(entryBound), asks, true)) {
      kept.units = new Uint16Array(withRoom(entryBound));
    }
    // Grown past the budget (more entries since they were made): the others give way.
    for (let over = this.#bytes() - this.#maxBytes; over > 0 && this.#kept.size > 1; ) {
      over -= this.#drop(this.#leastAsked(key, true) ?? this.#leastAsked(key, false)!);
    }
    return { entries: kept.bits, units: kept.units };
  }

  /** Counts an ask for `key`; its count, now. */
  #ask(key: string): number {
    const known = this.#asks.has(key);
    if (++this.#asksSinceAging >= AGE_EVERY || (!known && this.#asks.size >= MAX_ASKED)) this.#age();
    // Still full after aging: the filters not kept are forgotten.
    if (!known && this.#asks.size >= MAX_ASKED) for (const k of this.#asks.keys()) if (!this.#kept.has(k)) this.#asks.delete(k);
    const asks = (this.#asks.get(key) ?? 0) + 1;
    this.#asks.set(key, asks);
    return asks;
  }

  /** Halves every count, forgetting the filters whose count falls to 0. */
  #age(): void {
    this.#asksSinceAging = 0;
    for (const [k, n] of this.#asks) {
      if (n > 1) this.#asks.set(k, n >>> 1);
      else this.#asks.delete(k);
    }
  }

  /**
   * Makes room for `bytes` more (an entry bitmap, or with `verdicts` a filter's units'
   * verdicts) for a filter asked for `asks` times, by dropping verdicts, then (for an entry
   * bitmap) bitmaps it outweighs; false, with nothing dropped, when that is not enough.
   */
  #makeRoom(bytes: number, asks: number, verdicts: boolean): boolean {
    const fits = (count: number, total: number): boolean => (verdicts || count < this.#capacity) && (total <= this.#maxBytes || count === 0);
    let count = this.#kept.size;
    let total = this.#bytes() + bytes;
    if (fits(count, total)) return true;
    const asked = (k: string): number => this.#asks.get(k) ?? 0;
    // In the order they go: verdicts, then entry bitmaps, each the least asked for first (then
    // the least recently used: the sort is stable).
    const byAsks = [...this.#kept].sort(([a], [b]) => asked(a) - asked(b));
    const out: [string, Kept, 'verdicts' | 'all'][] = [];
    for (const [k, kept] of byAsks) {
      // Verdicts free bytes, not places.
      if (total <= this.#maxBytes) break;
      if (kept.units === undefined || (verdicts && !outweighs(asks, asked(k)))) continue;
      out.push([k, kept, 'verdicts']);
      total -= kept.units.byteLength;
    }
    for (const [k, kept] of verdicts ? [] : byAsks) {
      if (fits(count, total) || !outweighs(asks, asked(k))) break;
      out.push([k, kept, 'all']);
      count--;
      total -= kept.bits.byteLength;
    }
    if (!fits(count, total)) return false;
    for (const [k, kept, what] of out) {
      if (what === 'verdicts') kept.units = undefined;
      else this.#kept.delete(k);
    }
    return true;
  }

  /** The least asked for of the kept filters but `spare`: of those with verdicts (`verdicts`), or of all. */
  #leastAsked(spare: string, verdicts: boolean): string | undefined {
    let least: string | undefined;
    let fewest = Infinity;
    for (const [k, kept] of this.#kept) {
      const asks = this.#asks.get(k) ?? 0;
      if (k !== spare && (!verdicts || kept.units !== undefined) && asks < fewest) [least, fewest] = [k, asks];
    }
    return least;
  }

  /** Drops `key`'s verdicts, or its bitmap when it has none; the bytes freed. */
  #drop(key: string): number {
    const kept = this.#kept.get(key)!;
    if (kept.units !== undefined) {
      const freed = kept.units.byteLength;
      kept.units = undefined;
      return freed;
    }
    this.#kept.delete(key);
    return kept.bits.byteLength;
  }

  #bytes(): number {
    let bytes = 0;
    for (const k of this.#kept.values()) bytes += k.bits.byteLength + (k.units?.byteLength ?? 0);
    return bytes;
  }

  /** Tests again the entries logged since `kept` was last brought up to date (or builds it anew). */
  #refresh(kept: Kept, filter: LastingFilter, tables: Tables, entryBound: number, within: Within): void {
    const behind = tables.attrVersion - kept.version;
    if (behind === 0) return;
    kept.version = tables.attrVersion;
    const units = kept.units === undefined || kept.units.length >= entryBound ? kept.units : grownUnits(kept.units, entryBound);
    kept.units = units;
    // Past the log, or as many changes as a pass over every entry costs: built anew.
    if (behind > ATTR_LOG_SIZE || behind > entryBound) {
      kept.bits = build(filter, tables, entryBound, within);
      units?.fill(0);
      this.#built++;
      return;
    }
    const bits = grown(kept.bits, entryBound);
    for (let v = tables.attrVersion - behind; v < tables.attrVersion; v++) {
      const no = tables.attrLog[v & (ATTR_LOG_SIZE - 1)]!;
      const bit = 1 << (no & 31);
      if (passesLasting(filter, tables, no)) bits[no >>> 5]! |= bit;
      else bits[no >>> 5]! &= ~bit;
      if (units !== undefined) units[no] = 0;
    }
    kept.bits = bits;
  }
}

/** `units` (shorter than `bound`) copied into room for `bound` numbers and an eighth more. */
function grownUnits(units: Uint16Array, bound: number): Uint16Array {
  const room = new Uint16Array(withRoom(bound));
  room.set(units);
  return room;
}

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
function build(filter: LastingFilter, tables: Tables, entryBound: number, withinOf: Within): Int32Array {
  const within = withinOf();
  const bits = bitmapOf(NO_BITS, bitmapWords(entryBound));
  const test = (no: number): void => {
    if (passesLasting(filter, tables, no)) bits[no >>> 5]! |= 1 << (no & 31);
  };
  if (within === undefined) {
    for (let no = 0; no < entryBound; no++) test(no);
  } else {
    forEachBit(within, bitmapWords(entryBound), (no) => {
      if (no < entryBound) test(no);
    });
  }
  return bits;
}
