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
import {
  A_HINTS_SHIFT,
  A_MCP,
  A_PROFILE_MAX,
  A_PROFILE_SHIFT,
  A_SKILL,
  A_STREAMING,
  A_TOOL,
  mimeKey,
  tagKey,
  type Attributes,
} from './attributes.js';
import { HINT_DESTRUCTIVE, HINT_IDEMPOTENT, HINT_OPEN_WORLD, HINT_READ_ONLY } from './entry-store.js';
import { F_OWNER, F_PROFILE, F_SHIFT, I_POOL, I_SHIFT } from './tables.js';

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
 *
 * Three tests, cheapest first: `attrPasses` on a unit's U_ATTR bits (kind, streaming, skill or
 * tool, tool hints, binding/version through the profile), `entryPasses` once per entry (owner),
 * `poolPasses` on a skill's pooled tags and modes.
 */
export class CompiledFilter {
  /** True when `entryPasses` is needed (an owner is given). */
  readonly entryLevel: boolean;
  /** True when `poolPasses` is needed (tags or modes are given). */
  readonly poolLevel: boolean;
  /** True when hits must be skills or tools (tags, modes, tool hints). */
  readonly unitLevel: boolean;
  private readonly impossible: boolean;
  /** Bits of U_ATTR that must equal `attrWant` (kind, streaming, skill/tool, hints). */
  private readonly attrMask: number;
  private readonly attrWant: number;
  /** -1: any owner; else the owner id. */
  private readonly ownerId: number;
  private readonly binding: string | undefined;
  private readonly version: string | undefined;
  private readonly profileMemo: Uint8Array;
  private readonly tagIds: Int32Array | undefined;
  private readonly inputModes: readonly string[] | undefined;
  private readonly outputModes: readonly string[] | undefined;
  private readonly inputMemo: Uint8Array;
  private readonly outputMemo: Uint8Array;
  // The tables as of compile time (they are only replaced when the index grows).
  private readonly entryInfo: Int32Array;
  private readonly unitInfo: Int32Array;
  private readonly pool: Int32Array;

  constructor(
    filter: SearchFilter | undefined,
    private readonly attrs: Attributes,
  ) {
    const f: Partial<Record<keyof SearchFilter, unknown>> = typeof filter === 'object' && filter !== null ? filter : {};
    let impossible = false;
    let kind = f.kind === 'agent' || f.kind === 'mcp-server' ? f.kind : undefined;
    let attrMask = 0;
    let attrWant = 0;

    const streaming = cleanBool(f.streaming);
    if (streaming !== undefined) {
      attrMask |= A_STREAMING;
      if (streaming) attrWant |= A_STREAMING;
    }
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

    let hints = false;
    const hint = (v: unknown, bit: number): void => {
      const b = cleanBool(v);
      if (b === undefined) return;
      hints = true;
      attrMask |= bit << A_HINTS_SHIFT;
      if (b) attrWant |= bit << A_HINTS_SHIFT;
    };
    hint(f.readOnly, HINT_READ_ONLY);
    hint(f.destructive, HINT_DESTRUCTIVE);
    hint(f.idempotent, HINT_IDEMPOTENT);
    hint(f.openWorld, HINT_OPEN_WORLD);

    const skillLevel = tags !== undefined || this.inputModes !== undefined || this.outputModes !== undefined;
    if (skillLevel && hints) impossible = true;
    if (hints) {
      if (kind === 'agent') impossible = true;
      kind = 'mcp-server';
      attrMask |= A_TOOL;
      attrWant |= A_TOOL;
    } else if (skillLevel) {
      if (kind === 'mcp-server') impossible = true;
      kind = 'agent';
      attrMask |= A_SKILL;
      attrWant |= A_SKILL;
    }
    if (kind !== undefined) {
      attrMask |= A_MCP;
      if (kind === 'mcp-server') attrWant |= A_MCP;
    }
    this.attrMask = attrMask;
    this.attrWant = attrWant;
    this.impossible = impossible;
    this.unitLevel = skillLevel || hints;
    this.poolLevel = skillLevel;
    this.entryLevel = ownerId >= 0;

    this.entryInfo = attrs.tables.entryInfo;
    this.unitInfo = attrs.tables.info;
    this.pool = attrs.pool;
  }

  /** Kind, streaming, skill/tool, tool hints, binding and version, from a unit's U_ATTR. */
  attrPasses(attr: number, entryNo: number): boolean {
    if (this.impossible || (attr & this.attrMask) !== this.attrWant) return false;
    if (this.binding !== undefined || this.version !== undefined) {
      let profile = attr >>> A_PROFILE_SHIFT;
      if (profile >= A_PROFILE_MAX) profile = this.entryInfo[(entryNo << F_SHIFT) + F_PROFILE]!;
      let memo = this.profileMemo[profile]!;
      if (memo === UNKNOWN) {
        memo = this.profilePasses(profile) ? PASS : FAIL;
        this.profileMemo[profile] = memo;
      }
      if (memo !== PASS) return false;
    }
    return true;
  }

  /** The owner, for entry number `no` (only meaningful when `entryLevel`). */
  entryPasses(no: number): boolean {
    return this.entryInfo[(no << F_SHIFT) + F_OWNER] === this.ownerId;
  }

  /** Tags and modes of a skill (only meaningful when `poolLevel`). */
  poolPasses(uid: number): boolean {
    let at = this.unitInfo[(uid << I_SHIFT) + I_POOL]!;
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
