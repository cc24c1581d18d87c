/**
 * What the index keeps per entry for hits: id, kind, name, description, interfaces, skill ids
 * and names, tool names (no documents, no texts: the text lives in ./term-index.ts as postings only,
 * filterable attributes in ./attributes.ts and ./tables.ts).
 *
 * Each entry's hit fields are kept as one compact JSON string, decoded for the few entries a
 * page shows: at 100,000 entries the objects (records, arrays, interface objects) took about
 * 1.4 KiB an entry, the string about a third of that; decoding costs microseconds per hit. The
 * ids, both ways, are in ./entry-ids.ts (a UUID as its 16 bytes).
 *
 * Entries get a small *entry number* (recycled through a free list, so tables stay dense) and a
 * contiguous block of unit slots in the tables' unit arrays (bump-allocated; compacted when
 * more than half of the slots belong to removed entries).
 */
import type { EntryInterface, EntryKind } from '../contract/types.js';
import type { EntryHealth, EntrySource } from '../contract/freshness.js';
import { askedBits } from './capability-bits.js';
import { EntryIds } from './entry-ids.js';
import { part, type IndexState } from './index-state.js';
import { E_BASE, E_COUNT, E_SHIFT, MAX_ENTRIES, type Tables } from './tables.js';

/** Capabilities a search asks for: the values, and each as JSON text (as a packed record holds it). */
export interface AskedCapabilities {
  readonly values: ReadonlySet<string>;
  readonly quoted: readonly string[];
  /** Each value's signature bits (./capability-bits.ts askedBits). */
  readonly bits: Int32Array;
}

export const askedCapabilities = (values: readonly string[]): AskedCapabilities => ({
  values: new Set(values),
  quoted: values.map((v) => JSON.stringify(v)),
  bits: askedBits(values),
});

/** What the `capabilities` filter compares of an entry: every skill's id (its name when it has none) and every tool's name. */
export function* offeredCapabilities(skills: readonly SkillRecord[], tools: readonly ToolRecord[]): Generator<string> {
  for (const s of skills) yield s.id || s.name;
  for (const t of tools) yield t.name;
}

/** What a hit shows of a skill. */
export interface SkillRecord {
  readonly id: string;
  readonly name: string;
}

/** What a hit shows of a tool. */
export interface ToolRecord {
  readonly name: string;
}

/** Tool annotation hints, as bits (MCP defaults applied). */
export const HINT_READ_ONLY = 1;
export const HINT_DESTRUCTIVE = 2;
export const HINT_IDEMPOTENT = 4;
export const HINT_OPEN_WORLD = 8;

/** What a hit shows of an entry, plus its number. Filterable attributes live in the tables. */
export interface EntryRecord {
  readonly no: number;
  readonly id: string;
  readonly kind: EntryKind;
  /** Its place in `list`'s order (IndexedEntry.listSeq). */
  readonly listSeq: number;
  readonly name: string;
  readonly description: string;
  readonly interfaces: readonly EntryInterface[];
  readonly skills: readonly SkillRecord[];
  readonly tools: readonly ToolRecord[];
  readonly verified: boolean;
  readonly kid?: string;
  /** The key set of the key that verified it (SignatureStatus.jwks). */
  readonly jwks?: string;
  /** Indexed units: the entry itself, then skills, then tools (capped at MAX_UNITS_PER_ENTRY). */
  readonly unitCount: number;
  /** Language id of its text (./languages.ts). */
  readonly language: number;
  readonly health?: EntryHealth;
  readonly drift?: boolean;
  readonly source?: EntrySource;
}

/**
 * An entry's record as packed: the hit fields only (number, units, language are in the tables).
 * The skills (id, name pairs) and the tools' names come first, so the `capabilities` filter
 * compares them without decoding the rest (hasCapability).
 */
type Packed = [
  skills: string[],
  tools: string[],
  kind: EntryKind,
  listSeq: number,
  name: string,
  description: string,
  interfaces: readonly PackedInterface[],
  language: number,
  unitCount: number,
  verified: 0 | 1,
  // The members below are left out from the last one present (most entries have none of them).
  kid?: string | null,
  health?: EntryHealth | null,
  drift?: boolean | null,
  source?: EntrySource | null,
  jwks?: string | null,
];

/**
 * An interface as a tuple, trailing members left out: its keys, written out for every interface
 * of every entry, were some 60 characters of an entry's 440 (with the record's trailing empty
 * members, 72 bytes an entry: docs/scaling.md, "Memory").
 */
type PackedInterface = [url: string, protocolBinding: string, protocolVersion?: string | null, tenant?: string];

const packInterface = (i: EntryInterface): PackedInterface =>
  i.tenant !== undefined ? [i.url, i.protocolBinding, i.protocolVersion ?? null, i.tenant] : i.protocolVersion !== undefined ? [i.url, i.protocolBinding, i.protocolVersion] : [i.url, i.protocolBinding];

function unpackInterface([url, protocolBinding, protocolVersion, tenant]: PackedInterface): EntryInterface {
  const i: EntryInterface = { url, protocolBinding };
  if (protocolVersion !== undefined && protocolVersion !== null) i.protocolVersion = protocolVersion;
  if (tenant !== undefined) i.tenant = tenant;
  return i;
}

function pack(r: EntryRecord): string {
  const packed: Packed = [
    r.skills.flatMap((k) => [k.id, k.name]),
    r.tools.map((t) => t.name),
    r.kind,
    r.listSeq,
    r.name,
    r.description,
    r.interfaces.map(packInterface),
    r.language,
    r.unitCount,
    r.verified ? 1 : 0,
    r.kid ?? null,
    r.health ?? null,
    r.drift ?? null,
    r.source ?? null,
    r.jwks ?? null,
  ];
  while (packed.length > 10 && packed[packed.length - 1] === null) packed.pop();
  return JSON.stringify(packed);
}

function unpack(no: number, id: string, text: string): EntryRecord {
  const [skills, tools, kind, listSeq, name, description, interfaces, language, unitCount, verified, kid, health, drift, source, jwks] = JSON.parse(text) as Packed;
  const skillRecords: SkillRecord[] = [];
  for (let i = 0; i < skills.length; i += 2) skillRecords.push({ id: skills[i]!, name: skills[i + 1]! });
  return {
    no,
    id,
    kind,
    listSeq,
    name,
    description,
    interfaces: interfaces.map(unpackInterface),
    skills: skillRecords,
    tools: tools.map((name) => ({ name })),
    verified: verified === 1,
    unitCount,
    language,
    ...(kid !== undefined && kid !== null ? { kid } : {}),
    ...(health !== undefined && health !== null ? { health } : {}),
    ...(drift !== undefined && drift !== null ? { drift } : {}),
    ...(source !== undefined && source !== null ? { source } : {}),
    ...(jwks !== undefined && jwks !== null ? { jwks } : {}),
  };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const CLOSE = 0x5d;

/** The index of the quote closing the JSON string that opens at `at`. */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; ; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i;
    else if (Number.isNaN(c)) throw new RangeError('EntryStore: a packed record ends inside a string');
  }
}

export class EntryStore {
  /** By entry number: the packed record (undefined for free numbers). */
  private readonly packed: (string | undefined)[] = [];
  /** Entry ids by entry number (none for free numbers) and entry numbers by id. */
  readonly ids = new EntryIds();
  /** The last record decoded (a page asks for the same entry's hit and matches in a row). */
  private decoded: EntryRecord | undefined;
  private nextNumber = 0;
  private readonly freeNumbers: number[] = [];
  private unitEnd = 0;
  private unitGarbage = 0;
  private liveUnitCount = 0;

  constructor(private readonly tables: Tables) {}

  get size(): number {
    return this.ids.size;
  }

  /** Number of indexed units (entries themselves, skills and tools). */
  get unitCount(): number {
    return this.liveUnitCount;
  }

  /** One past the largest entry number in use. */
  get entryBound(): number {
    return this.nextNumber;
  }

  /** Copies of its arrays and counters (the tables save their own). */
  save(state: IndexState): void {
    // As long as the numbers: the last ones may never have been committed (an upsert that failed
    // midway discards its number), and `load` checks the length.
    state.set('store.packed', Array.from({ length: this.nextNumber }, (_, no) => this.packed[no]));
    this.ids.save(state, this.nextNumber);
    state.set('store.counters', { nextNumber: this.nextNumber, unitEnd: this.unitEnd, unitGarbage: this.unitGarbage, liveUnitCount: this.liveUnitCount });
    state.set('store.freeNumbers', [...this.freeNumbers]);
  }

  /** Takes over what `save` wrote (into an empty store). */
  load(state: IndexState): void {
    const packed = part<(string | undefined)[]>(state, 'store.packed');
    const c = part<{ nextNumber: number; unitEnd: number; unitGarbage: number; liveUnitCount: number }>(state, 'store.counters');
    if (packed.length !== c.nextNumber) throw new Error('the saved entry records are inconsistent');
    this.ids.load(state);
    for (let no = 0; no < packed.length; no++) {
      if ((packed[no] !== undefined) !== this.ids.has(no)) throw new Error('the saved entry records are inconsistent');
      this.packed[no] = packed[no];
    }
    this.nextNumber = c.nextNumber;
    this.unitEnd = c.unitEnd;
    this.unitGarbage = c.unitGarbage;
    this.liveUnitCount = c.liveUnitCount;
    for (const no of part<number[]>(state, 'store.freeNumbers')) this.freeNumbers.push(no);
  }

  /** One past the last unit slot allocated. */
  get unitBound(): number {
    return this.unitEnd;
  }

  /** The entry number of `id`, or undefined. */
  numberOf(id: string): number | undefined {
    return this.ids.numberOf(id);
  }

  get(id: string): EntryRecord | undefined {
    const no = this.ids.numberOf(id);
    return no === undefined ? undefined : this.record(no);
  }

  /** The record of live entry number `no`. */
  record(no: number): EntryRecord {
    const cached = this.decoded;
    if (cached && cached.no === no) return cached;
    const text = this.packed[no];
    if (text === undefined) throw new RangeError(`EntryStore: entry number ${no} is not in use`);
    return (this.decoded = unpack(no, this.ids.get(no)!, text));
  }

  /**
   * Whether live entry number `no` offers one of `asked` as a capability, as its catalog entry
   * lists them (../catalog/entries.ts): a skill's id (its name when it has none) or a tool's name,
   * compared exactly. Read from the packed record, no table of its own, and not decoded: its
   * first two members, the skills' (id, name) pairs and the tools' names, are JSON strings
   * compared as written with each asked value as JSON.stringify writes it (the record was
   * written by it too, so equal strings are written alike). Decoding it cost a few microseconds
   * an entry: 50 ms for a listing counting 10,000 entries that offer a common value.
   */
  hasCapability(no: number, asked: AskedCapabilities): boolean {
    const text = this.packed[no];
    if (text === undefined) return false;
    // `[[` the skills' (id, name) pairs `],[` the tools' names `],` ...
    const quoted = asked.quoted;
    let at = 2;
    let k = 0;
    let idEmpty = false;
    while (text.charCodeAt(at) === QUOTE) {
      const end = stringEnd(text, at);
      // A skill's id counts, or its name when the id is empty.
      if (k++ % 2 === 0) idEmpty = end === at + 1;
      if (end > at + 1 && (k % 2 === 1 || idEmpty) && quoted.includes(text.slice(at, end + 1))) return true;
      at = end + 1;
      if (text.charCodeAt(at) === COMMA) at++;
    }
    if (text.charCodeAt(at) !== CLOSE) return this.decodedHasCapability(no, asked);
    for (at += 3; text.charCodeAt(at) === QUOTE; ) {
      const end = stringEnd(text, at);
      if (quoted.includes(text.slice(at, end + 1))) return true;
      at = end + 1;
      if (text.charCodeAt(at) === COMMA) at++;
    }
    return text.charCodeAt(at) === CLOSE ? false : this.decodedHasCapability(no, asked);
  }

  /** hasCapability by the decoded record, for a record whose lists hold something else than strings. */
  private decodedHasCapability(no: number, asked: AskedCapabilities): boolean {
    const record = this.record(no);
    for (const c of offeredCapabilities(record.skills, record.tools)) if (asked.values.has(c)) return true;
    return false;
  }

  /** Reserves an entry number and a block of `unitCount` unit slots; returns both. */
  allocate(unitCount: number): { no: number; base: number } {
    let no = this.freeNumbers.pop();
    if (no === undefined) {
      if (this.nextNumber >= MAX_ENTRIES) throw new RangeError(`The search index holds at most ${MAX_ENTRIES} entries.`);
      no = this.nextNumber++;
    }
    this.tables.reserveEntries(this.nextNumber);
    if (this.unitGarbage > 65_536 && this.unitGarbage * 2 > this.unitEnd) this.compactUnits();
    const base = this.unitEnd;
    this.tables.reserveUnits(base + unitCount, base);
    this.unitEnd += unitCount;
    const row = no << E_SHIFT;
    this.tables.setBase(no, base);
    this.tables.entries[row + E_COUNT] = unitCount;
    // Live once its attributes are set (./attributes.ts setEntry).
    this.tables.clearLive(no);
    return { no, base };
  }

  /** Makes a record (built on an `allocate` result) visible. */
  commit(record: EntryRecord): void {
    this.ids.set(record.no, record.id);
    this.packed[record.no] = pack(record);
    this.decoded = undefined;
    this.tables.listSeq[record.no] = record.listSeq;
    this.liveUnitCount += record.unitCount;
  }

  /**
   * Frees the unit slots `allocate` reserved for a record that was never committed. The number
   * itself stays reserved until `recycle` (postings may still name it: ./term-index.ts).
   */
  discard(no: number, unitCount: number): void {
    this.unitGarbage += unitCount;
    this.tables.entries[(no << E_SHIFT) + E_COUNT] = 0;
    this.tables.clearLive(no);
  }

  /** Entry number `no` (discarded or released) names nothing any more: it may be reused. */
  recycle(no: number): void {
    this.freeNumbers.push(no);
  }

  /** Forgets the record and frees its numbers (after its postings are gone). */
  release(record: EntryRecord): void {
    this.ids.delete(record.no);
    this.packed[record.no] = undefined;
    this.decoded = undefined;
    this.liveUnitCount -= record.unitCount;
    this.discard(record.no, record.unitCount);
  }

  /** Moves every live entry's unit block to the front, dropping the slots of removed ones. */
  private compactUnits(): void {
    const t = this.tables;
    const attr = new Int32Array(Math.max(4096, (this.unitEnd - this.unitGarbage) * 2));
    const pool = new Int32Array(attr.length).fill(-1);
    const words = new Int32Array(attr.length).fill(-1);
    let at = 0;
    for (let no = 0; no < this.nextNumber; no++) {
      if (!this.ids.has(no)) continue;
      const row = no << E_SHIFT;
      const base = t.entries[row + E_BASE]!;
      const count = t.entries[row + E_COUNT]!;
      attr.set(t.unitAttr.subarray(base, base + count), at);
      pool.set(t.unitPool.subarray(base, base + count), at);
      words.set(t.unitWords.subarray(base, base + count), at);
      t.setBase(no, at);
      at += count;
    }
    t.unitAttr = attr;
    t.unitPool = pool;
    t.unitWords = words;
    this.unitEnd = at;
    this.unitGarbage = 0;
  }

  /** Numbers of every live entry. */
  *liveNumbers(): Generator<number> {
    for (let no = 0; no < this.nextNumber; no++) if (this.ids.has(no)) yield no;
  }

  /** Unit slots of every live entry, for the attribute pool's compaction. */
  *liveUnitSlots(): Generator<number> {
    const t = this.tables;
    for (const no of this.liveNumbers()) {
      const row = no << E_SHIFT;
      const base = t.entries[row + E_BASE]!;
      const count = t.entries[row + E_COUNT]!;
      for (let i = 0; i < count; i++) yield base + i;
    }
  }
}
