/**
 * Unit ids and the dense per-entry and per-unit tables the search loop reads.
 *
 * A unit's id, which the postings hold (./term-index.ts), is `entryNumber << ORD_BITS | ordinal` (ordinal 0 = the
 * entry itself, k = skills[k-1] or tools[k-1]). A posting therefore names its entry without a
 * lookup, and the loop's random accesses go to *entry* rows (32 bytes × entries: at 100,000
 * entries 3 MB, mostly in cache) instead of a per-unit table ten times larger. Measured at
 * 100,000 entries: a posting cost ~100 ns when it had to read a per-unit row (a cache and TLB
 * miss each), far less with entry rows. Per-unit data that only unit-level filters need sits in
 * dense blocks, one contiguous block per entry (`unitBase`).
 *
 * Entry rows (`entries`, by entry number, 8 slots):
 *   E_EPOCH   unused (a search's per-entry state is in PostingsIndex's compact `seen` array)
 *   E_HITS    unused (same)
 *   E_ATTR    filter bits shared by its units (./attributes.ts): kind, streaming, profile id
 *   E_OWNER   owner id
 *   E_BASE    first slot of its unit block in `unitAttr` / `unitPool`
 *   E_COUNT   number of units (indexed ones: at most MAX_UNITS_PER_ENTRY)
 *   E_SHOWN   paging scratch (hits of the entry placed so far; 0 between searches)
 *   E_PROFILE interface-profile id (when too large for E_ATTR)
 * Entry signatures (`signatures`, by entry number, 8 slots; read by unit-level filters only):
 *   S_TAGS_LO, S_TAGS_HI, S_IN, S_OUT, S_HINTS  bits of its skills' tags and modes and its
 *             tools' hints: an entry whose signature misses the filter's has no matching skill
 *             or tool, and is rejected once instead of unit by unit
 *   S_CAPS_LO, S_CAPS_HI, S_CAPS_MORE  a Bloom signature of the capabilities it offers (every
 *             skill's id, its name when it has none, every tool's name: ./capability-bits.ts),
 *             so the `capabilities` filter reads an entry's record only when these bits allow
 *             it; the list of all entries carries the first two words (./recency-lists.ts)
 * Entry attributes (`entryAttr`, by entry number): a dense copy of E_ATTR (derived, not saved).
 * Unit bases (`unitBase`, by entry number): a dense copy of E_BASE (derived, not saved), which a
 *   unit-level filter reads for each posting it tests: 4 MB at 1,000,000 entries instead of the
 *   32 MB of rows, so fewer of those random reads miss the caches (10-25 % less time for a
 *   search with tool hints at 1M).
 * Entry marks (`marks`, by entry number, one byte; derived from the rows, not saved):
 *   M_LIVE | M_MCP | language: what a search checks for every posting (a removed entry's
 *             postings until they are compacted away, a stemmed form's language, a skill- or
 *             tool-scoped clause). One byte an entry (100 KB at 100,000 entries, 1 MB at
 *             1,000,000) stays in the CPU's cache where the 32-byte rows do not: read from the
 *             rows, these checks were about a third of a search's time at 100,000 entries.
 * Unit blocks (by E_BASE + ordinal):
 *   unitAttr  skill / tool bits, tool hints, a skill's input and output mode bits
 *   unitPool  offset of a skill's tags and modes in the attribute pool, or -1
 *   unitWords offset of the unit's words (for phrases) in their pool (./phrases.ts), or -1
 */

import { part, type IndexState } from './index-state.js';

export const ORD_BITS = 10;
/** Skills or tools past this (minus the entry itself) are not indexed. */
export const MAX_UNITS_PER_ENTRY = 1 << ORD_BITS;
export const ORD_MASK = MAX_UNITS_PER_ENTRY - 1;
/**
 * Unit ids are positive Int32s (postings, candidate arrays; `id + 1` too, in the candidate hash).
 * Room for entry numbers held back while removed entries' postings are compacted away.
 */
export const MAX_ENTRIES = (1 << (31 - ORD_BITS)) - 1;

export const unitId = (entryNo: number, ordinal: number): number => (entryNo << ORD_BITS) | ordinal;

export const E_EPOCH = 0;
export const E_HITS = 1;
export const E_ATTR = 2;
export const E_OWNER = 3;
export const E_BASE = 4;
export const E_COUNT = 5;
export const E_SHOWN = 6;
export const E_PROFILE = 7;
/** log2 of the row size. */
export const E_SHIFT = 3;

/** Entry marks: the language id (./languages.ts) in the low bits, then kind and liveness. */
export const M_LANG_MASK = 7;
export const M_MCP = 8;
/** The number is in use by an entry with units (0: free, or removed with postings left). */
export const M_LIVE = 16;

/**
 * Entry numbers whose attributes or liveness changed are logged (`attrLog`, the last this many),
 * for what is derived from the attributes outside the tables (./filter-bitmaps.ts). A power of 2.
 */
export const ATTR_LOG_SIZE = 4096;

export const S_TAGS_LO = 0;
export const S_TAGS_HI = 1;
export const S_IN = 2;
export const S_OUT = 3;
export const S_HINTS = 4;
export const S_CAPS_LO = 5;
export const S_CAPS_HI = 6;
export const S_CAPS_MORE = 7;
export const S_SHIFT = 3;

export class Tables {
  entries: Int32Array = new Int32Array(0);
  signatures: Int32Array = new Int32Array(0);
  /**
   * By entry number: its place in `list`'s order (IndexedEntry.listSeq): the ranking's tie-break
   * and the recency lists' order, which an update does not change. (It held the registration
   * time in ms before SNAPSHOT_FORMAT 22, in the same 8 bytes.)
   */
  listSeq: Float64Array = new Float64Array(0);
  /** By entry number: M_LIVE | M_MCP | language (set by ./attributes.ts, cleared by ./entry-store.ts). */
  marks: Uint8Array = new Uint8Array(0);
  /**
   * By entry number: a copy of its row's E_ATTR (set by ./attributes.ts; derived, not saved),
   * which an entry-level filter tests on an entry's first posting in a search: 4 bytes an entry
   * in one dense array (4 MB at 1,000,000 entries) instead of a 32-byte row each (32 MB).
   */
  entryAttr: Int32Array = new Int32Array(0);
  /** By entry number: a copy of its row's E_BASE (set through `setBase`; derived, not saved). */
  unitBase: Int32Array = new Int32Array(0);
  unitAttr: Int32Array = new Int32Array(0);
  unitPool: Int32Array = new Int32Array(0);
  unitWords: Int32Array = new Int32Array(0);
  /** The entry numbers of the last ATTR_LOG_SIZE attribute changes, at `version % ATTR_LOG_SIZE`. */
  readonly attrLog = new Int32Array(ATTR_LOG_SIZE);
  /** Attribute changes so far (`setAttr`, `clearLive`). */
  attrVersion = 0;

  /** Makes room for entry numbers below `rows`. */
  reserveEntries(rows: number): void {
    const need = rows << E_SHIFT;
    if (this.entries.length >= need) return;
    let n = Math.max(1024 << E_SHIFT, this.entries.length);
    while (n < need) n *= 2;
    const entries = new Int32Array(n);
    entries.set(this.entries);
    this.entries = entries;
    const signatures = new Int32Array((n >> E_SHIFT) << S_SHIFT);
    signatures.set(this.signatures);
    this.signatures = signatures;
    const listSeq = new Float64Array(n >> E_SHIFT);
    listSeq.set(this.listSeq);
    this.listSeq = listSeq;
    const marks = new Uint8Array(n >> E_SHIFT);
    marks.set(this.marks);
    this.marks = marks;
    const entryAttr = new Int32Array(n >> E_SHIFT);
    entryAttr.set(this.entryAttr);
    this.entryAttr = entryAttr;
    const unitBase = new Int32Array(n >> E_SHIFT);
    unitBase.set(this.unitBase);
    this.unitBase = unitBase;
  }

  /** Entry number `no`'s attributes (E_ATTR, already in its row) in their dense copy; logged. */
  setAttr(no: number, attr: number): void {
    this.entryAttr[no] = attr;
    this.logAttr(no);
  }

  /** Entry number `no` is not live (free, being filled, or removed); logged. */
  clearLive(no: number): void {
    this.marks[no] = 0;
    this.logAttr(no);
  }

  private logAttr(no: number): void {
    this.attrLog[this.attrVersion & (ATTR_LOG_SIZE - 1)] = no;
    this.attrVersion++;
  }

  /** Entry number `no`'s unit block starts at slot `base` (its row and the dense copy). */
  setBase(no: number, base: number): void {
    this.entries[(no << E_SHIFT) + E_BASE] = base;
    this.unitBase[no] = base;
  }


  /** Makes room for unit slots below `slots` (keeping the first `used`). */
  reserveUnits(slots: number, used: number): void {
    if (this.unitAttr.length >= slots) return;
    let n = Math.max(4096, this.unitAttr.length);
    while (n < slots) n *= 2;
    const attr = new Int32Array(n);
    attr.set(this.unitAttr.subarray(0, used));
    const pool = new Int32Array(n).fill(-1);
    pool.set(this.unitPool.subarray(0, used));
    const words = new Int32Array(n).fill(-1);
    words.set(this.unitWords.subarray(0, used));
    this.unitAttr = attr;
    this.unitPool = pool;
    this.unitWords = words;
  }

  /** Copies of the rows of entry numbers below `entryBound` and of the unit slots below `unitEnd`. */
  save(state: IndexState, entryBound: number, unitEnd: number): void {
    state.set('tables.entries', this.entries.slice(0, entryBound << E_SHIFT));
    state.set('tables.signatures', this.signatures.slice(0, entryBound << S_SHIFT));
    state.set('tables.listSeq', this.listSeq.slice(0, entryBound));
    state.set('tables.unitAttr', this.unitAttr.slice(0, unitEnd));
    state.set('tables.unitPool', this.unitPool.slice(0, unitEnd));
    state.set('tables.unitWords', this.unitWords.slice(0, unitEnd));
  }

  load(state: IndexState): void {
    this.entries = part(state, 'tables.entries');
    this.signatures = part(state, 'tables.signatures');
    this.listSeq = part(state, 'tables.listSeq');
    this.unitAttr = part(state, 'tables.unitAttr');
    this.unitPool = part(state, 'tables.unitPool');
    this.unitWords = part(state, 'tables.unitWords');
    // Derived from the rows (./attributes.ts load).
    this.marks = new Uint8Array(this.listSeq.length);
    this.entryAttr = new Int32Array(this.listSeq.length);
    this.unitBase = new Int32Array(this.listSeq.length);
    for (let no = 0; no < this.unitBase.length; no++) this.unitBase[no] = this.entries[(no << E_SHIFT) + E_BASE]!;
    // Search stamps of the saved searches mean nothing to this one's.
    this.resetEpochs();
  }

  /** Clears every search stamp (after the epoch counter wraps). */
  resetEpochs(): void {
    for (let i = E_EPOCH; i < this.entries.length; i += 1 << E_SHIFT) this.entries[i] = 0;
  }
}
