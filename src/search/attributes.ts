/**
 * Filterable attributes as numbers in the rows of ./tables.ts, so a filter test reads the row a
 * search already has in cache instead of chasing entry objects around the heap (measured: at
 * 100,000 entries, object-based tests cost more than the text matching itself).
 *
 * Every unit row carries U_ATTR: its entry's kind and streaming flags and interface-profile id
 * (the entry's list of (binding, version) pairs, interned: a handful of distinct profiles cover
 * most entries), whether it is a skill or a tool, and a tool's hints. Entry rows hold the owner
 * id. Skills point into a pooled Int32Array holding their tag ids and effective input/output
 * mode ids (their own modes, or the card defaults).
 *
 * String values are interned into small dictionaries (ids never reused); the pool is compacted
 * when more than half of it belongs to removed units.
 */
import type { EntryInterface } from '../contract/types.js';
import { F_OWNER, F_PROFILE, F_SHIFT, I_POOL, I_SHIFT, U_ATTR, U_SHIFT, type Tables } from './tables.js';
import { fold } from './text-encoder.js';

// The U_ATTR bits of a unit row.
export const A_MCP = 1;
export const A_STREAMING = 2;
export const A_SKILL = 4;
export const A_TOOL = 8;
/** Tool hints (HINT_* of ./entry-store.ts, MCP defaults applied) start here. */
export const A_HINTS_SHIFT = 4;
/** The interface-profile id starts here; ids from A_PROFILE_MAX on are read from F_PROFILE. */
export const A_PROFILE_SHIFT = 8;
export const A_PROFILE_MAX = (1 << 23) - 1;

/** Interned strings → dense ids. */
export class Dictionary {
  private readonly ids = new Map<string, number>();
  readonly values: string[] = [];
  id(value: string): number {
    let id = this.ids.get(value);
    if (id === undefined) {
      id = this.values.length;
      this.ids.set(value, id);
      this.values.push(value);
    }
    return id;
  }
  find(value: string): number | undefined {
    return this.ids.get(value);
  }
  get size(): number {
    return this.values.length;
  }
}

export interface InterfaceProfile {
  /** Lower-cased bindings and versions, pairwise (version may be undefined). */
  readonly bindings: readonly string[];
  readonly versions: readonly (string | undefined)[];
}

/** Skill attributes as the pool stores them. */
export interface SkillAttributes {
  tags: readonly string[];
  inputModes: readonly string[];
  outputModes: readonly string[];
}

/** Folded MIME type without parameters: `Text/Plain; charset=utf-8` → `text/plain`. */
export function mimeKey(mode: string): string {
  const semi = mode.indexOf(';');
  return fold(semi >= 0 ? mode.slice(0, semi) : mode).trim();
}

/** Folded tag: case and accents ignored. */
export const tagKey = (tag: string): string => fold(tag).trim();

export class Attributes {
  /** Skill segments: [nTags, tag ids..., nIn, mode ids..., nOut, mode ids...]. */
  pool: Int32Array = new Int32Array(1024);
  private poolEnd = 0;
  private poolGarbage = 0;

  readonly owners = new Dictionary();
  readonly tags = new Dictionary();
  readonly modes = new Dictionary();
  private readonly profileIds = new Dictionary();
  readonly profiles: InterfaceProfile[] = [];

  constructor(readonly tables: Tables) {}

  /** Stores the entry's owner and profile; returns the U_ATTR bits its units share. */
  setEntry(no: number, mcp: boolean, streaming: boolean, owner: string, interfaces: readonly EntryInterface[], generation: string | undefined): number {
    const row = no << F_SHIFT;
    const e = this.tables.entryInfo;
    e[row + F_OWNER] = this.owners.id(owner);
    const bindings = interfaces.map((i) => i.protocolBinding.toLowerCase());
    const versions = interfaces.map((i) => i.protocolVersion ?? generation);
    const signature = JSON.stringify([bindings, versions]);
    const before = this.profileIds.size;
    const id = this.profileIds.id(signature);
    if (id === before) this.profiles.push({ bindings, versions });
    e[row + F_PROFILE] = id;
    return (mcp ? A_MCP : 0) | (streaming ? A_STREAMING : 0) | (Math.min(id, A_PROFILE_MAX) << A_PROFILE_SHIFT);
  }

  /** The entry itself. */
  setSelf(uid: number, entryAttr: number): void {
    this.tables.units[(uid << U_SHIFT) + U_ATTR] = entryAttr;
    this.tables.info[(uid << I_SHIFT) + I_POOL] = -1;
  }

  setTool(uid: number, entryAttr: number, hints: number): void {
    this.tables.units[(uid << U_SHIFT) + U_ATTR] = entryAttr | A_TOOL | (hints << A_HINTS_SHIFT);
    this.tables.info[(uid << I_SHIFT) + I_POOL] = -1;
  }

  setSkill(uid: number, entryAttr: number, a: SkillAttributes): void {
    const need = 3 + a.tags.length + a.inputModes.length + a.outputModes.length;
    if (this.poolEnd + need > this.pool.length) {
      const out = new Int32Array(Math.max(this.pool.length * 2, this.poolEnd + need));
      out.set(this.pool.subarray(0, this.poolEnd));
      this.pool = out;
    }
    const p = this.pool;
    let at = this.poolEnd;
    this.tables.units[(uid << U_SHIFT) + U_ATTR] = entryAttr | A_SKILL;
    this.tables.info[(uid << I_SHIFT) + I_POOL] = at;
    p[at++] = a.tags.length;
    for (const t of a.tags) p[at++] = this.tags.id(t);
    p[at++] = a.inputModes.length;
    for (const m of a.inputModes) p[at++] = this.modes.id(m);
    p[at++] = a.outputModes.length;
    for (const m of a.outputModes) p[at++] = this.modes.id(m);
    this.poolEnd = at;
  }

  private segmentLength(off: number): number {
    const p = this.pool;
    const nTags = p[off]!;
    const nIn = p[off + 1 + nTags]!;
    const nOut = p[off + 2 + nTags + nIn]!;
    return 3 + nTags + nIn + nOut;
  }

  /** Forgets a unit's attributes. */
  clearUnit(uid: number): void {
    const row = uid << I_SHIFT;
    const off = this.tables.info[row + I_POOL]!;
    if (off >= 0) this.poolGarbage += this.segmentLength(off);
    this.tables.info[row + I_POOL] = -1;
    this.tables.units[(uid << U_SHIFT) + U_ATTR] = 0;
  }

  /** Compacts the pool when mostly garbage; `liveUnits` lists every unit id in use. */
  maybeCompact(liveUnits: () => Iterable<number>): void {
    if (this.poolGarbage < 65_536 || this.poolGarbage * 2 < this.poolEnd) return;
    const out = new Int32Array(Math.max(1024, (this.poolEnd - this.poolGarbage) * 2));
    let at = 0;
    const t = this.tables.info;
    for (const uid of liveUnits()) {
      const row = uid << I_SHIFT;
      const off = t[row + I_POOL]!;
      if (off < 0) continue;
      const len = this.segmentLength(off);
      out.set(this.pool.subarray(off, off + len), at);
      t[row + I_POOL] = at;
      at += len;
    }
    this.pool = out;
    this.poolEnd = at;
    this.poolGarbage = 0;
  }
}
