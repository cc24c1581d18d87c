/**
 * Search filters, applied outside FlexSearch on the index's dense attributes (./attributes.ts,
 * ./tables.ts; FlexSearch tags drop matches, see NOTES.md). A filter compiles, once per search,
 * into an entry-level test and, for skill- or tool-level keys, a unit-level test.
 *
 * Semantics (every key optional; an absent key or an empty list does not filter):
 * - kind: the entry's kind.
 * - owner: exact match.
 * - streaming: the card's `capabilities.streaming` (MCP servers count as not streaming).
 * - protocolBinding / protocolVersion: some interface of the entry has that binding (case
 *   insensitive) and that version, where "1.0" also accepts "1.0.0" and "1.0.1" (prefix on a dot
 *   boundary). When both are given, one interface must satisfy both. An interface without a
 *   version of its own has its card's generation ("0.3" / "1.0").
 * - tags: the hit is a skill carrying ANY of the given tags (case and accent insensitive).
 * - inputModes / outputModes: the hit is a skill accepting (producing) ANY of the given MIME
 *   types, by its own modes or, when it lists none, the card's defaults. Wildcards work both
 *   ways: the card's `text/*` (or `*` / `*\/*`) accepts an asked `text/plain`, an asked `text/*`
 *   accepts the card's `text/plain`. Case and parameters (`;charset=...`) are ignored.
 * - readOnly / destructive / idempotent / openWorld: the hit is an MCP tool whose annotation
 *   hint, with the MCP defaults applied (false / true / false / true), equals the value.
 *
 * Tool-hint keys imply kind "mcp-server"; skill keys (tags, modes) imply kind "agent" (only
 * skills have them). Either makes only skills or tools hits: an entry's own name/description
 * match cannot satisfy them and is left out. Contradictions (hints with kind "agent", hints with
 * skill keys) match nothing.
 */
import type { SearchFilter } from '../contract/types.js';
import { FLAG_MCP, FLAG_STREAMING, IS_TOOL, mimeKey, tagKey, type Attributes } from './attributes.js';
import { HINT_DESTRUCTIVE, HINT_IDEMPOTENT, HINT_OPEN_WORLD, HINT_READ_ONLY } from './entry-store.js';
import { E_FLAGS, E_OWNER, E_PROFILE, E_SHIFT, U_HINTS, U_POOL, U_SHIFT } from './tables.js';

/** Bounds on hostile filters. */
const MAX_LIST = 32;
const MAX_VALUE_LENGTH = 256;

const cleanList = (v: unknown, key: (s: string) => string): string[] | undefined => {
  if (!Array.isArray(v)) return undefined;
  const out: string[] = [];
  for (const x of v.slice(0, MAX_LIST)) {
    if (typeof x !== 'string' || x.length > MAX_VALUE_LENGTH) continue;
    const k = key(x);
    if (k) out.push(k);
  }
  return out.length ? out : undefined;
};
const cleanString = (v: unknown): string | undefined =>
  typeof v === 'string' && v.length <= MAX_VALUE_LENGTH && v.trim() ? v.trim() : undefined;
const cleanBool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);

/** Whether a declared mode and an asked mode (both mimeKey'd) are compatible. */
export function mimeMatches(declared: string, asked: string): boolean {
  if (declared === asked) return true;
  if (declared === '*' || declared === '*/*' || asked === '*' || asked === '*/*') return true;
  const ds = declared.indexOf('/');
  const as = asked.indexOf('/');
  if (ds < 0 || as < 0 || declared.slice(0, ds) !== asked.slice(0, as)) return false;
  return declared.slice(ds + 1) === '*' || asked.slice(as + 1) === '*';
}

/** Version "1.0" accepts "1.0", "1.0.0", "1.0.1"; not "1.01". */
export function versionMatches(actual: string | undefined, asked: string): boolean {
  if (!actual) return false;
  return actual === asked || (actual.length > asked.length && actual.startsWith(asked) && actual[asked.length] === '.');
}

const UNKNOWN = 0;
const PASS = 1;
const FAIL = 2;

/**
 * A filter prepared for one search against the current attributes (valid until the index
 * changes). A class, not closures, so hot loops call the same methods on every search.
 */
export class CompiledFilter {
  /** True when no entry-level key filters (entryPasses is always true then). */
  readonly entryFree: boolean;
  /** True when hits must be skills or tools (tags, modes, tool hints). */
  readonly unitLevel: boolean;
  private readonly impossible: boolean;
  /** -1: any kind; else the FLAG_MCP bit value wanted. */
  private readonly kindWant: number;
  /** -1: any; else the FLAG_STREAMING bit value wanted. */
  private readonly streamingWant: number;
  /** -1: any owner; else the owner id. */
  private readonly ownerId: number;
  private readonly binding: string | undefined;
  private readonly version: string | undefined;
  private readonly profileMemo: Uint8Array;
  private readonly toolLevel: boolean;
  private readonly hintMask: number;
  private readonly hintWant: number;
  private readonly tagIds: Int32Array | undefined;
  private readonly inputModes: readonly string[] | undefined;
  private readonly outputModes: readonly string[] | undefined;
  private readonly inputMemo: Uint8Array;
  private readonly outputMemo: Uint8Array;
  // The tables as of compile time (they are only replaced when the index grows).
  private readonly entryRows: Int32Array;
  private readonly unitRows: Int32Array;
  private readonly pool: Int32Array;

  constructor(
    filter: SearchFilter | undefined,
    private readonly attrs: Attributes,
  ) {
    const f: Partial<Record<keyof SearchFilter, unknown>> = typeof filter === 'object' && filter !== null ? filter : {};
    let impossible = false;
    let kind = f.kind === 'agent' || f.kind === 'mcp-server' ? f.kind : undefined;

    const streaming = cleanBool(f.streaming);
    this.streamingWant = streaming === undefined ? -1 : streaming ? FLAG_STREAMING : 0;
    let ownerId = -1;
    if (typeof f.owner === 'string') {
      const id = attrs.owners.find(f.owner);
      if (id === undefined) impossible = true;
      else ownerId = id;
    }
    this.ownerId = ownerId;
    this.binding = cleanString(f.protocolBinding)?.toLowerCase();
    this.version = cleanString(f.protocolVersion);
    this.profileMemo = new Uint8Array(attrs.profiles.length);

    const tags = cleanList(f.tags, tagKey);
    if (tags) {
      const ids = tags.map((t) => attrs.tags.find(t)).filter((id): id is number => id !== undefined);
      if (ids.length === 0) impossible = true;
      this.tagIds = Int32Array.from(ids);
    }
    this.inputModes = cleanList(f.inputModes, mimeKey);
    this.outputModes = cleanList(f.outputModes, mimeKey);
    this.inputMemo = new Uint8Array(this.inputModes ? attrs.modes.size : 0);
    this.outputMemo = new Uint8Array(this.outputModes ? attrs.modes.size : 0);

    let hintMask = 0;
    let hintWant = 0;
    const hint = (v: unknown, bit: number): void => {
      const b = cleanBool(v);
      if (b === undefined) return;
      hintMask |= bit;
      if (b) hintWant |= bit;
    };
    hint(f.readOnly, HINT_READ_ONLY);
    hint(f.destructive, HINT_DESTRUCTIVE);
    hint(f.idempotent, HINT_IDEMPOTENT);
    hint(f.openWorld, HINT_OPEN_WORLD);
    this.hintMask = hintMask | IS_TOOL;
    this.hintWant = hintWant | IS_TOOL;

    const skillLevel = tags !== undefined || this.inputModes !== undefined || this.outputModes !== undefined;
    const toolLevel = hintMask !== 0;
    if (skillLevel && toolLevel) impossible = true;
    if (toolLevel) {
      if (kind === 'agent') impossible = true;
      kind = 'mcp-server';
    } else if (skillLevel) {
      if (kind === 'mcp-server') impossible = true;
      kind = 'agent';
    }
    this.kindWant = kind === undefined ? -1 : kind === 'mcp-server' ? FLAG_MCP : 0;
    this.impossible = impossible;
    this.toolLevel = toolLevel;
    this.unitLevel = skillLevel || toolLevel;
    this.entryFree =
      !impossible &&
      this.kindWant < 0 &&
      this.streamingWant < 0 &&
      ownerId < 0 &&
      this.binding === undefined &&
      this.version === undefined;

    this.entryRows = attrs.tables.entries;
    this.unitRows = attrs.tables.units;
    this.pool = attrs.pool;
  }

  /** The entry-level keys (kind, owner, streaming, binding, version) for entry number `no`. */
  entryPasses(no: number): boolean {
    if (this.impossible) return false;
    const row = no << E_SHIFT;
    const flags = this.entryRows[row + E_FLAGS]!;
    if (this.kindWant >= 0 && (flags & FLAG_MCP) !== this.kindWant) return false;
    if (this.streamingWant >= 0 && (flags & FLAG_STREAMING) !== this.streamingWant) return false;
    if (this.ownerId >= 0 && this.entryRows[row + E_OWNER] !== this.ownerId) return false;
    if (this.binding !== undefined || this.version !== undefined) {
      const profile = this.entryRows[row + E_PROFILE]!;
      let memo = this.profileMemo[profile]!;
      if (memo === UNKNOWN) {
        memo = this.profilePasses(profile) ? PASS : FAIL;
        this.profileMemo[profile] = memo;
      }
      if (memo !== PASS) return false;
    }
    return true;
  }

  /** The skill/tool-level keys for unit `uid` (only meaningful when `unitLevel`). */
  unitPasses(uid: number): boolean {
    const row = uid << U_SHIFT;
    if (this.toolLevel) return (this.unitRows[row + U_HINTS]! & this.hintMask) === this.hintWant;
    let at = this.unitRows[row + U_POOL]!;
    if (at < 0) return false;
    const p = this.pool;
    const nTags = p[at++]!;
    const tagIds = this.tagIds;
    if (tagIds !== undefined) {
      let ok = false;
      for (let k = 0; k < nTags && !ok; k++) ok = tagIds.includes(p[at + k]!);
      if (!ok) return false;
    }
    at += nTags;
    const nIn = p[at++]!;
    if (this.inputModes !== undefined && !this.anyMode(p, at, nIn, this.inputModes, this.inputMemo)) return false;
    at += nIn;
    const nOut = p[at++]!;
    if (this.outputModes !== undefined && !this.anyMode(p, at, nOut, this.outputModes, this.outputMemo)) return false;
    return true;
  }

  private anyMode(p: Int32Array, at: number, n: number, asked: readonly string[], memo: Uint8Array): boolean {
    for (let k = 0; k < n; k++) {
      const id = p[at + k]!;
      let m = memo[id]!;
      if (m === UNKNOWN) {
        const declared = this.attrs.modes.values[id]!;
        m = asked.some((a) => mimeMatches(declared, a)) ? PASS : FAIL;
        memo[id] = m;
      }
      if (m === PASS) return true;
    }
    return false;
  }

  private profilePasses(profile: number): boolean {
    const p = this.attrs.profiles[profile];
    if (!p) return false;
    for (let i = 0; i < p.bindings.length; i++) {
      if (this.binding !== undefined && p.bindings[i] !== this.binding) continue;
      if (this.version !== undefined && !versionMatches(p.versions[i], this.version)) continue;
      return true;
    }
    return false;
  }
}
