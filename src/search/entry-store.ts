/**
 * What the index keeps per entry for hits: id, kind, name, description, interfaces, skill ids
 * and names, tool names (no documents, no texts: the text lives in FlexSearch as postings only,
 * filterable attributes in ./attributes.ts).
 *
 * Entries get a small *entry number* and every unit (the entry itself, each skill, each tool)
 * a *unit id*; both are recycled through free lists so the typed arrays stay dense. Unit ids
 * are what FlexSearch stores; the unit rows of ./tables.ts (U_ENTRY, I_ORDINAL) turn a posting
 * back into an entry and a skill or tool in O(1).
 */
import type { EntryInterface, EntryKind } from '../contract/types.js';
import { I_ORDINAL, I_SHIFT, U_ENTRY, U_SHIFT, type Tables } from './tables.js';

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

/** What a hit shows of an entry, plus its numbers. Filterable attributes live in ./attributes.ts. */
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
  /** Unit ids: [0] the entry itself, then one per skill, then one per tool. */
  readonly units: Int32Array;
}

/** A unit's position inside its entry: 0 = the entry itself, k = skills[k-1] or tools[k-1]. */
export type UnitOrdinal = number;

class IdAllocator {
  private next = 0;
  private readonly free: number[] = [];
  take(): number {
    return this.free.pop() ?? this.next++;
  }
  give(n: number): void {
    this.free.push(n);
  }
  /** One past the largest number ever handed out. */
  get bound(): number {
    return this.next;
  }
}

export class EntryStore {
  private readonly byId = new Map<string, EntryRecord>();
  /** By entry number; undefined for free numbers. */
  readonly entries: (EntryRecord | undefined)[] = [];
  /** By entry number: the entry id (undefined for free numbers). */
  readonly entryIds: (string | undefined)[] = [];
  private readonly entryNumbers = new IdAllocator();
  private readonly unitIds = new IdAllocator();
  private liveUnitCount = 0;

  constructor(private readonly tables: Tables) {}

  get size(): number {
    return this.byId.size;
  }

  /** Number of live units (entries themselves, skills and tools). */
  get unitCount(): number {
    return this.liveUnitCount;
  }

  /** One past the largest unit id in use. */
  get unitBound(): number {
    return this.unitIds.bound;
  }

  /** One past the largest entry number in use. */
  get entryBound(): number {
    return this.entryNumbers.bound;
  }

  get(id: string): EntryRecord | undefined {
    return this.byId.get(id);
  }

  /** Reserves an entry number and `unitCount` unit ids (and their table rows). */
  allocate(unitCount: number): { no: number; units: Int32Array } {
    const no = this.entryNumbers.take();
    const units = new Int32Array(unitCount);
    for (let i = 0; i < unitCount; i++) units[i] = this.unitIds.take();
    this.tables.reserve(this.entryNumbers.bound, this.unitIds.bound);
    return { no, units };
  }

  /** Makes a record (built on an `allocate` result) visible. */
  commit(record: EntryRecord): void {
    this.byId.set(record.id, record);
    this.entries[record.no] = record;
    this.entryIds[record.no] = record.id;
    this.tables.updatedAt[record.no] = record.updatedAt;
    const t = this.tables.units;
    const info = this.tables.info;
    const units = record.units;
    for (let i = 0; i < units.length; i++) {
      t[(units[i]! << U_SHIFT) + U_ENTRY] = record.no;
      info[(units[i]! << I_SHIFT) + I_ORDINAL] = i;
    }
    this.liveUnitCount += units.length;
  }

  /** Frees numbers from `allocate` that were never committed. */
  discard(no: number, units: Int32Array): void {
    for (const u of units) this.unitIds.give(u);
    this.entryNumbers.give(no);
  }

  /** Every unit id in use. */
  *liveUnits(): Generator<number> {
    for (const e of this.entries) if (e) yield* e.units;
  }

  /** Forgets the record and frees its numbers (after its postings are gone). */
  release(record: EntryRecord): void {
    this.byId.delete(record.id);
    this.entries[record.no] = undefined;
    this.entryIds[record.no] = undefined;
    const t = this.tables.units;
    const units = record.units;
    for (let i = 0; i < units.length; i++) {
      t[(units[i]! << U_SHIFT) + U_ENTRY] = -1;
      this.unitIds.give(units[i]!);
    }
    this.liveUnitCount -= units.length;
    this.entryNumbers.give(record.no);
  }
}
