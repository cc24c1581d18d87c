/**
 * Filterable attributes as numbers in the rows of ./tables.ts, so a filter test reads the row a
 * search already has in cache instead of chasing entry objects around the heap (measured: at
 * 100,000 entries, object-based tests cost more than the text matching itself).
 *
 * Entry rows: kind and streaming flags, owner id, interface-profile id (the entry's list of
 * (binding, version) pairs, interned: a handful of distinct profiles cover most entries).
 * Unit rows: tool hints, and for skills an offset into a pooled Int32Array holding the skill's
 * tag ids and effective input/output mode ids (its own modes, or the card defaults).
 *
 * String values are interned into small dictionaries (ids never reused); the pool is compacted
 * when more than half of it belongs to removed units.
 */
import type { EntryInterface } from '../contract/types.js';
import { E_FLAGS, E_OWNER, E_PROFILE, E_SHIFT, U_HINTS, U_POOL, U_SHIFT, type Tables } from './tables.js';
import { fold } from './text-encoder.js';

export const FLAG_MCP = 1;
export const FLAG_STREAMING = 2;

/** Unit hint byte: IS_TOOL plus the HINT_* bits (MCP defaults applied). */
export const IS_TOOL = 128;

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

  setEntry(no: number, mcp: boolean, streaming: boolean, owner: string, interfaces: readonly EntryInterface[], generation: string | undefined): void {
    const row = no << E_SHIFT;
    const e = this.tables.entries;
    e[row + E_FLAGS] = (mcp ? FLAG_MCP : 0) | (streaming ? FLAG_STREAMING : 0);
    e[row + E_OWNER] = this.owners.id(owner);
    const bindings = interfaces.map((i) => i.protocolBinding.toLowerCase());
    const versions = interfaces.map((i) => i.protocolVersion ?? generation);
    const signature = JSON.stringify([bindings, versions]);
    const before = this.profileIds.size;
    const id = this.profileIds.id(signature);
    if (id === before) this.profiles.push({ bindings, versions });
    e[row + E_PROFILE] = id;
  }

  setTool(uid: number, hints: number): void {
    const row = uid << U_SHIFT;
    this.tables.units[row + U_HINTS] = IS_TOOL | hints;
    this.tables.units[row + U_POOL] = -1;
  }

  setPlain(uid: number): void {
    const row = uid << U_SHIFT;
    this.tables.units[row + U_HINTS] = 0;
    this.tables.units[row + U_POOL] = -1;
  }

  setSkill(uid: number, a: SkillAttributes): void {
    const need = 3 + a.tags.length + a.inputModes.length + a.outputModes.length;
    if (this.poolEnd + need > this.pool.length) {
      const out = new Int32Array(Math.max(this.pool.length * 2, this.poolEnd + need));
      out.set(this.pool.subarray(0, this.poolEnd));
      this.pool = out;
    }
    const p = this.pool;
    let at = this.poolEnd;
    const row = uid << U_SHIFT;
    this.tables.units[row + U_HINTS] = 0;
    this.tables.units[row + U_POOL] = at;
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
    const row = uid << U_SHIFT;
    const off = this.tables.units[row + U_POOL]!;
    if (off >= 0) this.poolGarbage += this.segmentLength(off);
    this.tables.units[row + U_POOL] = -1;
    this.tables.units[row + U_HINTS] = 0;
  }

  /** Compacts the pool when mostly garbage; `liveUnits` lists every unit id in use. */
  maybeCompact(liveUnits: () => Iterable<number>): void {
    if (this.poolGarbage < 65_536 || this.poolGarbage * 2 < this.poolEnd) return;
    const out = new Int32Array(Math.max(1024, (this.poolEnd - this.poolGarbage) * 2));
    let at = 0;
    const t = this.tables.units;
    for (const uid of liveUnits()) {
      const row = uid << U_SHIFT;
      const off = t[row + U_POOL]!;
      if (off < 0) continue;
      const len = this.segmentLength(off);
      out.set(this.pool.subarray(off, off + len), at);
      t[row + U_POOL] = at;
      at += len;
    }
    this.pool = out;
    this.poolEnd = at;
    this.poolGarbage = 0;
  }
}
