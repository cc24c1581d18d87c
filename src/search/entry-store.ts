/**
 * What the index keeps per entry for hits: id, kind, name, description, interfaces, skill ids
 * and names, tool names (no documents, no texts: the text lives in ./term-index.ts as postings only,
 * filterable attributes in ./attributes.ts and ./tables.ts).
 *
 * Entries get a small *entry number* (recycled through a free list, so tables stay dense) and a
 * contiguous block of unit slots in the tables' unit arrays (bump-allocated; compacted when
 * more than half of the slots belong to removed entries).
 */
import type { EntryInterface, EntryKind } from '../contract/types.js';
import type { EntryHealth, EntrySource } from '../contract/freshness.js';
import { E_BASE, E_COUNT, E_SHIFT, MAX_ENTRIES, type Tables } from './tables.js';

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
  /** Milliseconds since the epoch (0 when unparseable). */
  readonly updatedAt: number;
  readonly name: string;
  readonly description: string;
  readonly interfaces: readonly EntryInterface[];
  readonly skills: readonly SkillRecord[];
  readonly tools: readonly ToolRecord[];
  readonly verified: boolean;
  readonly kid?: string;
  /** Indexed units: the entry itself, then skills, then tools (capped at MAX_UNITS_PER_ENTRY). */
  readonly unitCount: number;
  /** Language id of its text (./languages.ts). */
  readonly language: number;
  readonly health?: EntryHealth;
  readonly drift?: boolean;
  readonly source?: EntrySource;
}

export class EntryStore {
  private readonly byId = new Map<string, EntryRecord>();
  /** By entry number; undefined for free numbers. */
  readonly entries: (EntryRecord | undefined)[] = [];
  /** By entry number: the entry id (undefined for free numbers). */
  readonly entryIds: (string | undefined)[] = [];
  private nextNumber = 0;
  private readonly freeNumbers: number[] = [];
  private unitEnd = 0;
  private unitGarbage = 0;
  private liveUnitCount = 0;

  constructor(private readonly tables: Tables) {}

  get size(): number {
    return this.byId.size;
  }

  /** Number of indexed units (entries themselves, skills and tools). */
  get unitCount(): number {
    return this.liveUnitCount;
  }

  /** One past the largest entry number in use. */
  get entryBound(): number {
    return this.nextNumber;
  }

  get(id: string): EntryRecord | undefined {
    return this.byId.get(id);
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
    this.tables.entries[row + E_BASE] = base;
    this.tables.entries[row + E_COUNT] = unitCount;
    return { no, base };
  }

  /** Makes a record (built on an `allocate` result) visible. */
  commit(record: EntryRecord): void {
    this.byId.set(record.id, record);
    this.entries[record.no] = record;
    this.entryIds[record.no] = record.id;
    this.tables.updatedAt[record.no] = record.updatedAt;
    this.liveUnitCount += record.unitCount;
  }

  /**
   * Frees the unit slots `allocate` reserved for a record that was never committed. The number
   * itself stays reserved until `recycle` (postings may still name it: ./term-index.ts).
   */
  discard(no: number, unitCount: number): void {
    this.unitGarbage += unitCount;
    this.tables.entries[(no << E_SHIFT) + E_COUNT] = 0;
  }

  /** Entry number `no` (discarded or released) names nothing any more: it may be reused. */
  recycle(no: number): void {
    this.freeNumbers.push(no);
  }

  /** Forgets the record and frees its numbers (after its postings are gone). */
  release(record: EntryRecord): void {
    this.byId.delete(record.id);
    this.entries[record.no] = undefined;
    this.entryIds[record.no] = undefined;
    this.liveUnitCount -= record.unitCount;
    this.discard(record.no, record.unitCount);
  }

  /** Moves every live entry's unit block to the front, dropping the slots of removed ones. */
  private compactUnits(): void {
    const t = this.tables;
    const attr = new Int32Array(Math.max(4096, (this.unitEnd - this.unitGarbage) * 2));
    const pool = new Int32Array(attr.length).fill(-1);
    const pairs = new Int32Array(attr.length).fill(-1);
    let at = 0;
    for (const rec of this.entries) {
      if (!rec) continue;
      const row = rec.no << E_SHIFT;
      const base = t.entries[row + E_BASE]!;
      const count = t.entries[row + E_COUNT]!;
      attr.set(t.unitAttr.subarray(base, base + count), at);
      pool.set(t.unitPool.subarray(base, base + count), at);
      pairs.set(t.unitPairs.subarray(base, base + count), at);
      t.entries[row + E_BASE] = at;
      at += count;
    }
    t.unitAttr = attr;
    t.unitPool = pool;
    t.unitPairs = pairs;
    this.unitEnd = at;
    this.unitGarbage = 0;
  }

  /** Unit slots of every live entry, for the attribute pool's compaction. */
  *liveUnitSlots(): Generator<number> {
    const t = this.tables;
    for (const rec of this.entries) {
      if (!rec) continue;
      const row = rec.no << E_SHIFT;
      const base = t.entries[row + E_BASE]!;
      for (let i = 0; i < rec.unitCount; i++) yield base + i;
    }
  }
}
