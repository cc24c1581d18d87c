/**
 * Search filters, applied beside the posting lists on the index's dense attributes
 * (./attributes.ts, ./tables.ts). A filter compiles, once per search,
 * into an entry-level test and, for skill- or tool-level keys, a unit-level test.
 *
 * Semantics (every key optional; an absent key or an empty list does not filter):
 * - kind: the entry's kind.
 * - owner: exact match.
 * - streaming: the card's `capabilities.streaming` (MCP servers count as not streaming).
 * - verified: a signature of the card verified with a trusted key (MCP servers never are).
 * - protocolBinding / protocolVersion: some interface of the entry has that binding (case
 *   and separators insensitive: ./attributes.ts bindingKey) and that version, where "1.0" also
 *   accepts "1.0.0" and "1.0.1" (prefix on a dot boundary), and "1.0.0" accepts "1.0" (the same version). When both are given, one interface must satisfy both. An interface without a
 *   version of its own has its card's generation ("0.3" / "1.0").
 * - tags: the hit is a skill carrying ANY of the given tags (case and accent insensitive; white
 *   space, punctuation and a change of case between a tag's words alike, MachineLearning is
 *   machine-learning and Node.js node-js, as for `tags:`: ./attributes.ts tagKey).
 * - inputModes / outputModes: the hit is a skill accepting (producing) ANY of the given MIME
 *   types, by its own modes or, when it lists none, the card's defaults. Wildcards work both
 *   ways: the card's `text/*` (or `*` / `*\/*`) accepts an asked `text/plain`, an asked `text/*`
 *   accepts the card's `text/plain`. Case and parameters (`;charset=...`) are ignored.
 * - readOnly / destructive / idempotent / openWorld: the hit is an MCP tool whose annotation
 *   hint, with the MCP defaults applied (false / true / false / true), equals the value; a
 *   read-only tool counts as not destructive and idempotent (../registry/tool-hints.ts).
 *
 * Tool-hint keys imply kind "mcp-server"; skill keys (tags, modes) imply kind "agent" (only
 * skills have them). Either makes only skills or tools hits: an entry's own name/description
 * match cannot satisfy them and is left out. Contradictions (hints with kind "agent", hints with
 * skill keys) match nothing.
 * - capabilities: the entry offers ANY of the given capabilities, as its catalog entry lists them
 *   (ARD's `capabilities`): a skill's id (its name when it has none) or a tool's name, compared
 *   exactly. An entry-level key: the entry's capability signature (./capability-bits.ts, in its
 *   signature row, and the first two words in the members of the list of all entries, which a
 *   listing walks) rules out most entries that offer none; the record of the rest is read
 *   (./entry-store.ts hasCapability), last. A listing by values few entries offer reads only
 *   those entries (./capability-lists.ts), each tested in full. A kept bitmap (./filter-bitmaps.ts) holds the
 *   verdict, since what an entry offers is fixed while it keeps its number.
 * - health: the entry's latest check had that status ("ok", "unreachable", "invalid"); entries
 *   never checked have none and do not match. "any" matches every entry, and, like any health
 *   value, turns off the operator's default of hiding entries unhealthy for too long
 *   (`hideUnhealthyBefore`).
 */
import type { SearchFilter } from '../contract/types.js';
import { clipped } from '../lib/clipped.js';
import { longerThan } from '../lib/code-points.js';
import {
  A_HEALTH_MASK,
  A_HEALTH_SHIFT,
  A_HINTS_SHIFT,
  A_IN_SHIFT,
  A_MCP,
  A_MODE_BITS,
  A_MODE_MASK,
  A_OUT_SHIFT,
  A_PROFILE_MAX,
  A_PROFILE_SHIFT,
  A_SKILL,
  A_STREAMING,
  A_TOOL,
  HEALTH_CODES,
  A_VERIFIED,
  bindingKey,
  mimeKey,
  modeBit,
  tagKey,
  type Attributes,
} from './attributes.js';
import type { LastingFilter } from './filter-bitmaps.js';
import type { WalkFilter } from './recency-lists.js';
import { HINT_DESTRUCTIVE, HINT_IDEMPOTENT, HINT_OPEN_WORLD, HINT_READ_ONLY, askedCapabilities, type AskedCapabilities } from './entry-store.js';
import { E_OWNER, E_PROFILE, E_SHIFT, M_MCP, S_CAPS_HI, S_CAPS_LO, S_CAPS_MORE, S_HINTS, S_IN, S_OUT, S_SHIFT, S_TAGS_HI, S_TAGS_LO } from './tables.js';
import { mayOffer, wordsMayOffer } from './capability-bits.js';

/**
 * Bounds on hostile filters. A value's length is in characters (code points), as the doors count
 * it (operations/request-schemas.ts): counted in UTF-16 units, a value of 200 emoji the doors take
 * was past it and dropped, so the key filtered nothing and the search matched every entry.
 */
const MAX_LIST = 32;
const MAX_VALUE_LENGTH = 256;
const overLength = (v: string): boolean => longerThan(v, MAX_VALUE_LENGTH);

/** A filter value as a reason quotes it: JSON-quoted, cut to 40 characters (between characters). */
const quoted = (v: string): string => JSON.stringify(clipped(v, 40));

/**
 * A list filter's values as a reason quotes them: as written, but only those the filter kept
 * (cleanList's own test, so that the count and singular/plural match what is quoted, and a value
 * the filter ignored, such as "" or 42, is not named); the first three, then how many more.
 */
const quotedList = (v: unknown, key: (s: string) => string): string => {
  const values = Array.isArray(v) ? v.slice(0, MAX_LIST).filter((x): x is string => typeof x === 'string' && !overLength(x) && key(x) !== '') : [];
  const shown = values.slice(0, 3).map(quoted).join(', ');
  return values.length > 3 ? `${shown} and ${values.length - 3} more` : shown;
};

const cleanList = (v: unknown, key: (s: string) => string): string[] | undefined => {
  if (!Array.isArray(v)) return undefined;
  const out: string[] = [];
  for (const x of v.slice(0, MAX_LIST)) {
    if (typeof x !== 'string' || overLength(x)) continue;
    const k = key(x);
    if (k) out.push(k);
  }
  return out.length ? out : undefined;
};
const cleanString = (v: unknown): string | undefined =>
  typeof v === 'string' && !overLength(v) && v.trim() ? v.trim() : undefined;
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

/**
 * Version "1.0" accepts "1.0", "1.0.0", "1.0.1"; not "1.01". An asked version that only adds
 * zero parts to the declared one is the same version: "0.3.0" accepts an interface declaring
 * "0.3" (a v1.0 card's v0.3 interface), as "0.3" accepts "0.3.0"; "1.0.0" does not accept "1.0.1".
 */
export function versionMatches(actual: string | undefined, asked: string): boolean {
  if (!actual) return false;
  if (actual === asked) return true;
  if (actual.length > asked.length) return actual.startsWith(asked) && actual[asked.length] === '.';
  return asked.startsWith(actual) && /^(\.0+)+$/.test(asked.slice(actual.length));
}

const UNKNOWN = 0;
const PASS = 1;
const FAIL = 2;

/**
 * A filter prepared for one search against the current attributes (valid until the index
 * changes). A class, not closures, so hot loops call the same methods on every search.
 *
 * Two tests: `entryPasses` once per entry and search (kind, streaming, owner, binding and
 * version through the interface profile, and signatures that rule out entries with no
 * matching skill or tool), `unitPasses` per skill or tool (skill or tool, tool hints, a
 * skill's pooled tags and modes).
 */
export class CompiledFilter implements WalkFilter, LastingFilter {
  /** True when no entry-level key is given (`entryPasses` is then always true). */
  readonly entryFree: boolean;
  /** True when hits must be skills or tools (tags, modes, tool hints). */
  readonly unitLevel: boolean;
  /** True when nothing can pass (an unknown owner or tag, contradictory keys). */
  readonly impossible: boolean;
  /** Why nothing can pass, naming the filter's key (SearchPage.reason), when `impossible`. */
  readonly impossibleReason: string | undefined;
  /**
   * What `entryPassesLasting` tests, as a key (./filter-bitmaps.ts); undefined when it tests
   * nothing, or nothing passes, or the search asks about one entry.
   */
  readonly bitmapKey: string | undefined;
  /**
   * True when `entryPassesLasting` is the whole of `entryPasses` (no time-dependent test, no
   * single entry asked about): an entry a kept bitmap of the filter allows then passes.
   */
  readonly lastingDecides: boolean;
  /**
   * The entry's `M_MCP` mark (./tables.ts) the filter's kind needs (a tool hint implies MCP
   * servers, a skill key agents), or -1 (any kind): a search tests it on the 1-byte marks before
   * reading anything else of the entry.
   */
  readonly kindMark: number;
  /** E_ATTR bits that must equal `entryWant` (kind, streaming). */
  private readonly entryMask: number;
  private readonly entryWant: number;
  /** unitAttr bits that must equal `unitWant` (skill or tool, hints). */
  private readonly unitMask: number;
  private readonly unitWant: number;
  private readonly poolLevel: boolean;
  /** -1: any owner; else the owner id. */
  readonly ownerId: number;
  private readonly binding: string | undefined;
  private readonly version: string | undefined;
  private readonly profileMemo: Uint8Array;
  /** The tag ids asked (any of them), when tags are. */
  readonly tagIds: Int32Array | undefined;
  private readonly inputModes: readonly string[] | undefined;
  private readonly outputModes: readonly string[] | undefined;
  private readonly inputMemo: Uint8Array;
  private readonly outputMemo: Uint8Array;
  /** Signatures a matching entry must intersect (0: not constrained); see ./tables.ts. */
  private readonly tagsLo: number;
  private readonly tagsHi: number;
  private readonly inSig: number;
  private readonly outSig: number;
  /** The same modes as a skill's A_IN_SHIFT / A_OUT_SHIFT bits (./attributes.ts), or 0 (not asked). */
  private readonly inUnitBits: number;
  private readonly outUnitBits: number;
  /** The unit's mode bits decide its modes (a bit per known mode, no tags asked): no pool read. */
  private readonly unitBitsDecide: boolean;
  private readonly hintSig: number;
  // The tables as of compile time (they are only replaced when the index changes).
  private readonly entries: Int32Array;
  private readonly entryAttr: Int32Array;
  private readonly signatures: Int32Array;
  private readonly unitAttr: Int32Array;
  private readonly unitPool: Int32Array;
  private readonly pool: Int32Array;

  /** Entries unhealthy since before this (ms) are left out; undefined: none are. */
  private readonly hideUnhealthyBefore: number | undefined;
  /** The one entry number a standing search asks about (IndexQuery.onlyId), or -1. */
  readonly onlyEntry: number;
  /**
   * Agents whose card is not verified are left out (IndexQuery.hideUnverifiedAgents); MCP
   * servers, which have no signatures, pass. An "or" of two E_ATTR bits, so not in entryMask.
   */
  private readonly hideUnverifiedAgents: boolean;
  /** The capabilities asked (any of them), and the test of an entry's (the index's entry store). */
  private readonly capabilities: AskedCapabilities | undefined;
  /** Their signature bits (./capability-bits.ts askedBits), or undefined (none asked). */
  private readonly capabilityBits: Int32Array | undefined;
  private readonly hasCapability: (no: number, asked: AskedCapabilities) => boolean;

  constructor(
    filter: SearchFilter | undefined,
    private readonly attrs: Attributes,
    options: {
      hideUnhealthyBefore?: number;
      onlyEntry?: number;
      hideUnverifiedAgents?: boolean;
      hasCapability?: (no: number, asked: AskedCapabilities) => boolean;
    } = {},
  ) {
    this.onlyEntry = options.onlyEntry ?? -1;
    this.hideUnverifiedAgents = options.hideUnverifiedAgents === true;
    const f: Partial<Record<keyof SearchFilter, unknown>> = typeof filter === 'object' && filter !== null ? filter : {};
    let impossible = false;
    let impossibleReason: string | undefined;
    // The first key found to leave nothing, said as a search's reason is (search-index.ts noWordsReason).
    const nothingPasses = (why: string): void => {
      impossible = true;
      impossibleReason ??= `the filter leaves no entry: ${why}; remove or change that key of the filter`;
    };
    let kind = f.kind === 'agent' || f.kind === 'mcp-server' ? f.kind : undefined;
    let entryMask = 0;
    let entryWant = 0;
    let unitMask = 0;
    let unitWant = 0;

    const streaming = cleanBool(f.streaming);
    if (streaming !== undefined) {
      entryMask |= A_STREAMING;
      if (streaming) entryWant |= A_STREAMING;
    }
    if (f.health === 'ok' || f.health === 'unreachable' || f.health === 'invalid') {
      entryMask |= A_HEALTH_MASK << A_HEALTH_SHIFT;
      entryWant |= HEALTH_CODES[f.health] << A_HEALTH_SHIFT;
    }
    this.hideUnhealthyBefore = f.health === undefined && attrs.unhealthySince.size > 0 ? options.hideUnhealthyBefore : undefined;
    const verified = cleanBool(f.verified);
    if (verified !== undefined) {
      entryMask |= A_VERIFIED;
      if (verified) entryWant |= A_VERIFIED;
    }
    let ownerId = -1;
    if (typeof f.owner === 'string') {
      // Trimmed, as the other string filters are: a principal has no white space around it
      // (REGISTRY_TOKENS' names are trimmed), and " alice" found none of alice's entries.
      const owner = f.owner.trim();
      const id = attrs.owners.find(owner);
      if (id === undefined) nothingPasses(`no entry belongs to the "owner" ${quoted(owner)}`);
      else ownerId = id;
    }
    this.ownerId = ownerId;
    const binding = cleanString(f.protocolBinding);
    this.binding = binding === undefined ? undefined : bindingKey(binding);
    this.version = cleanString(f.protocolVersion);
    this.profileMemo = new Uint8Array(attrs.profiles.length);

    const capabilities = cleanList(f.capabilities, (c) => c.trim());
    this.capabilities = capabilities && askedCapabilities(capabilities);
    this.capabilityBits = this.capabilities?.bits;
    // Without the entry store to ask, no entry is known to offer one.
    this.hasCapability = options.hasCapability ?? (() => false);

    const tags = cleanList(f.tags, tagKey);
    if (tags) {
      const ids = tags.map((t) => attrs.tags.find(t)).filter((id): id is number => id !== undefined);
      if (ids.length === 0) nothingPasses(`no skill has ${tags.length === 1 ? 'the tag' : 'any of the tags'} ${quotedList(f.tags, tagKey)} ("tags")`);
      this.tagIds = Int32Array.from(ids);
    }
    this.inputModes = cleanList(f.inputModes, mimeKey);
    this.outputModes = cleanList(f.outputModes, mimeKey);
    this.inputMemo = new Uint8Array(this.inputModes ? attrs.modes.bound : 0);
    this.outputMemo = new Uint8Array(this.outputModes ? attrs.modes.bound : 0);

    let hints = false;
    const hint = (v: unknown, bit: number): void => {
      const b = cleanBool(v);
      if (b === undefined) return;
      hints = true;
      unitMask |= bit << A_HINTS_SHIFT;
      if (b) unitWant |= bit << A_HINTS_SHIFT;
    };
    hint(f.readOnly, HINT_READ_ONLY);
    hint(f.destructive, HINT_DESTRUCTIVE);
    hint(f.idempotent, HINT_IDEMPOTENT);
    hint(f.openWorld, HINT_OPEN_WORLD);

    const skillLevel = tags !== undefined || this.inputModes !== undefined || this.outputModes !== undefined;
    const hintKeys = '"readOnly", "destructive", "idempotent" or "openWorld"';
    const skillKeys = '"tags", "inputModes" or "outputModes"';
    if (skillLevel && hints) nothingPasses(`${hintKeys} ask for an MCP server's tools and ${skillKeys} for an agent's skills, which no entry has both of`);
    if (hints) {
      if (kind === 'agent') nothingPasses(`${hintKeys} ask for an MCP server's tools, and "kind" is "agent"`);
      kind = 'mcp-server';
      unitMask |= A_TOOL;
      unitWant |= A_TOOL;
    } else if (skillLevel) {
      if (kind === 'mcp-server') nothingPasses(`${skillKeys} ask for an agent's skills, and "kind" is "mcp-server"`);
      kind = 'agent';
      unitMask |= A_SKILL;
      unitWant |= A_SKILL;
    }
    // What no MCP server has, asked of MCP servers only: they count as not streaming, and have no
    // signatures to verify (the contract's "keys that exclude each other", said as the others are:
    // they answered no entry without a word).
    if (kind === 'mcp-server') {
      const servers = hints ? `${hintKeys} ask for an MCP server's tools` : '"kind" is "mcp-server"';
      if (streaming === true) nothingPasses(`"streaming" is true and ${servers} (MCP servers do not stream)`);
      if (verified === true) nothingPasses(`"verified" is true and ${servers} (MCP servers are never verified: only an agent's card carries signatures)`);
    }
    if (kind !== undefined) {
      entryMask |= A_MCP;
      if (kind === 'mcp-server') entryWant |= A_MCP;
    }
    this.kindMark = kind === undefined ? -1 : kind === 'mcp-server' ? M_MCP : 0;
    // Entry signatures: the bits of every tag id asked, of every declared mode an asked mode
    // accepts, of every hint combination the asked hints allow.
    let tagsLo = 0;
    let tagsHi = 0;
    for (const id of this.tagIds ?? []) {
      if (id & 32) tagsHi |= 1 << (id & 31);
      else tagsLo |= 1 << (id & 31);
    }
    this.tagsLo = tagsLo;
    this.tagsHi = tagsHi;
    // The declared modes an asked mode accepts, as the entry signature's bits (id & 31) and as a
    // skill's own mode bits (./attributes.ts modeBit): one pass over the known modes for both.
    const modeBits = (asked: readonly string[] | undefined, key: string): { sig: number; unit: number } => {
      let sig = 0;
      let unit = 0;
      if (!asked) return { sig, unit };
      for (let id = 0; id < attrs.modes.bound; id++) {
        const declared = attrs.modes.value(id);
        if (declared === undefined || !asked.some((a) => mimeMatches(declared, a))) continue;
        sig |= 1 << (id & 31);
        unit |= modeBit(id);
      }
      if (sig === 0) nothingPasses(`no agent declares a mode ${asked.length === 1 ? 'that' : 'any of'} ${quotedList(f[key as 'inputModes'], mimeKey)} ${asked.length === 1 ? 'accepts' : 'accept'} ("${key}")`);
      return { sig, unit };
    };
    const inputs = modeBits(this.inputModes, 'inputModes');
    const outputs = modeBits(this.outputModes, 'outputModes');
    this.inSig = inputs.sig;
    this.outSig = outputs.sig;
    this.inUnitBits = inputs.unit;
    this.outUnitBits = outputs.unit;
    // Every mode id below A_MODE_BITS: a bit each.
    this.unitBitsDecide = attrs.modes.bound <= A_MODE_BITS && this.tagIds === undefined;
    let hintSig = 0;
    if (hints) {
      const mask = unitMask >>> A_HINTS_SHIFT;
      const want = unitWant >>> A_HINTS_SHIFT;
      for (let v = 0; v < 16; v++) if ((v & mask) === (want & mask)) hintSig |= 1 << v;
    }
    this.hintSig = hintSig;

    this.entryMask = entryMask;
    this.entryWant = entryWant;
    this.unitMask = unitMask;
    this.unitWant = unitWant;
    this.impossible = impossible;
    // Not where unverified agents are hidden: the dictionaries hold their owners and tags too, so
    // a reason given for an owner no entry has, and none for one only hidden entries have, would
    // tell which owners and tags exist among the hidden (both answered "nothing" alike before).
    this.impossibleReason = impossible && !this.hideUnverifiedAgents ? impossibleReason : undefined;
    this.unitLevel = skillLevel || hints;
    this.poolLevel = skillLevel;
    this.entryFree =
      !impossible &&
      entryMask === 0 &&
      !this.hideUnverifiedAgents &&
      ownerId < 0 &&
      this.binding === undefined &&
      this.version === undefined &&
      !this.unitLevel &&
      this.hideUnhealthyBefore === undefined &&
      this.capabilities === undefined &&
      this.onlyEntry < 0;

    const lasting =
      !impossible &&
      this.onlyEntry < 0 &&
      (entryMask !== 0 || this.hideUnverifiedAgents || ownerId >= 0 || this.binding !== undefined || this.version !== undefined || this.unitLevel || this.capabilities !== undefined);
    // By the values asked, not their ids: a value no entry has any more is forgotten and may come
    // back under another id (./dictionary.ts), and keyed by ids its filter then kept a bitmap
    // beside the old one, which another value could take over with the old id. Either way a
    // kept bitmap stays right for the entries not changed since (./filter-bitmaps.ts): an entry
    // holding a value keeps its id, and one that takes a value new or back is logged. The tags
    // and modes asked themselves (the unit-level tests read them, not only the signature bits
    // they map to, shared by many tags or modes), known or not (one unknown now may be known at
    // the next search: the entries that have it then are logged), and whether a mode's signature
    // bit is its own (`entryDecides`: a count of entries then trusts the bitmap).
    const modesAsked = this.inputModes !== undefined || this.outputModes !== undefined;
    this.bitmapKey = lasting
      ? JSON.stringify([
          entryMask,
          entryWant,
          this.hideUnverifiedAgents,
          ownerId >= 0 ? attrs.owners.value(ownerId)! : null,
          this.binding ?? null,
          this.version ?? null,
          unitMask,
          unitWant,
          tags ? [...new Set(tags)].sort() : null,
          this.inputModes ? [...this.inputModes].sort() : null,
          this.outputModes ? [...this.outputModes].sort() : null,
          modesAsked ? attrs.modes.bound <= 32 : null,
          // Compared exactly: the values as given, in code unit order.
          this.capabilities ? [...this.capabilities.values].sort() : null,
        ])
      : undefined;

    // What an entry offers is fixed while it keeps its number (an upsert takes a new number,
    // logged), so the capabilities are lasting tests too, and a kept bitmap decides them.
    this.lastingDecides = this.hideUnhealthyBefore === undefined && this.onlyEntry < 0;

    this.entries = attrs.tables.entries;
    this.entryAttr = attrs.tables.entryAttr;
    this.signatures = attrs.tables.signatures;
    this.unitAttr = attrs.tables.unitAttr;
    this.unitPool = attrs.tables.unitPool;
    this.pool = attrs.pool;
  }

  /** The capabilities asked for (any of them), compared exactly; undefined when none are. */
  get askedCapabilities(): ReadonlySet<string> | undefined {
    return this.capabilities?.values;
  }

  /**
   * What `entryPasses` tests of an entry's E_ATTR alone (kind, streaming, verified, health,
   * binding and version): false rules the entry out, true leaves the other tests to it.
   */
  attributesPass(attr: number): boolean {
    if (this.impossible || !this.attrBitsPass(attr)) return false;
    return this.binding === undefined && this.version === undefined ? true : this.profileMatches(attr, -1);
  }

  /**
   * Whether an entry that passes `entryPasses` surely has a skill or tool that passes
   * `unitPasses`, so a count of entries need not test its units: when the filter has one skill-
   * or tool-level key and the entry's signature for it is exact (tool hints; modes while every
   * mode id is below 32), or one tag and the entry is known to carry it (`tagged`: from the tag's
   * list).
   */
  entryDecides(tagged: boolean): boolean {
    if (!this.unitLevel || this.impossible) return true;
    if (!this.poolLevel) return true;
    const keys = (this.tagIds ? 1 : 0) + (this.inputModes ? 1 : 0) + (this.outputModes ? 1 : 0);
    if (keys !== 1) return false;
    if (this.tagIds) return tagged && this.tagIds.length === 1;
    return this.attrs.modes.bound <= 32;
  }

  /**
   * Whether a walk's own tests (`attributesPass`, and `signatureWordsPass` when it has the
   * signatures) leave `entryPasses` nothing to test: the walk is over the owner's list when the
   * filter names one (`owned`), over the tag's list when it names one tag (`tagged`), and no
   * unhealthy entries are hidden.
   */
  walkDecides(walk: { signatures: boolean; owned: boolean; tagged: boolean }): boolean {
    if (this.impossible || this.onlyEntry >= 0 || this.hideUnhealthyBefore !== undefined || this.capabilities !== undefined) return false;
    if (this.ownerId >= 0 && !walk.owned) return false;
    // attributesPass lets the rare entries with a very large interface-profile id through.
    if ((this.binding !== undefined || this.version !== undefined) && this.attrs.profiles.length >= A_PROFILE_MAX) return false;
    if (this.tagIds && !(walk.tagged && this.tagIds.length === 1)) return false;
    return (this.inSig | this.outSig | this.hintSig) === 0 || walk.signatures;
  }

  /** What `entryPasses` tests of an entry's skill-mode and tool-hint signatures alone. */
  signatureWordsPass(inputs: number, outputs: number, hints: number): boolean {
    if (!this.unitLevel) return true;
    if (this.inSig !== 0 && (inputs & this.inSig) === 0) return false;
    if (this.outSig !== 0 && (outputs & this.outSig) === 0) return false;
    return this.hintSig === 0 || (hints & this.hintSig) !== 0;
  }

  /** What `entryPasses` tests of the first two words of an entry's capability signature alone. */
  capabilityWordsPass(lo: number, hi: number): boolean {
    return this.capabilityBits === undefined || wordsMayOffer(this.capabilityBits, lo, hi);
  }

  /** Kind, streaming, owner, binding and version, and capabilities, of entry number `no`. */
  entryPasses(no: number): boolean {
    if (this.impossible) return false;
    if (this.onlyEntry >= 0 && no !== this.onlyEntry) return false;
    const attr = this.entryAttr[no]!;
    if (!this.attrBitsPass(attr)) return false;
    if (this.hideUnhealthyBefore !== undefined && (attr >>> A_HEALTH_SHIFT) & A_HEALTH_MASK) {
      const since = this.attrs.unhealthySince.get(no);
      if (since !== undefined && since < this.hideUnhealthyBefore) return false;
    }
    return this.restPasses(no, attr) && this.offers(no);
  }

  /**
   * The tests of `entryPasses` whose verdict changes only when the entry's attributes do (not
   * hiding long-unhealthy entries, which changes with the time), or its number (what it offers).
   */
  entryPassesLasting(no: number): boolean {
    if (this.impossible) return false;
    const attr = this.entryAttr[no]!;
    return this.attrBitsPass(attr) && this.restPasses(no, attr) && this.offers(no);
  }

  /** Whether entry number `no` offers one of the capabilities asked (true when none are). */
  private offers(no: number): boolean {
    if (this.capabilities === undefined) return true;
    // The signature first; then, last, the skills' and tools' strings in the entry's record.
    const row = no << S_SHIFT;
    const e = this.signatures;
    return mayOffer(this.capabilityBits!, e[row + S_CAPS_LO]!, e[row + S_CAPS_HI]!, e[row + S_CAPS_MORE]!) && this.hasCapability(no, this.capabilities);
  }

  /** The E_ATTR bits asked for (kind, streaming, verified, health), and an agent's verification when unverified ones are hidden. */
  private attrBitsPass(attr: number): boolean {
    if ((attr & this.entryMask) !== this.entryWant) return false;
    return !this.hideUnverifiedAgents || (attr & (A_MCP | A_VERIFIED)) !== 0;
  }

  /** Owner, binding and version, and the signatures, of entry number `no` with attributes `attr`. */
  private restPasses(no: number, attr: number): boolean {
    if (this.ownerId >= 0 && this.entries[(no << E_SHIFT) + E_OWNER] !== this.ownerId) return false;
    if ((this.binding !== undefined || this.version !== undefined) && !this.profileMatches(attr, no)) return false;
    // Last: the signatures are the largest table (a read is likely a cache miss).
    if (this.unitLevel && !this.signaturesMatch(no << S_SHIFT)) return false;
    return true;
  }

  /** Binding and version, by the entry's interface profile (`no` -1: unknown, a large profile id passes). */
  private profileMatches(attr: number, no: number): boolean {
    let profile = (attr >>> A_PROFILE_SHIFT) & A_PROFILE_MAX;
    if (profile >= A_PROFILE_MAX) {
      if (no < 0) return true;
      profile = this.entries[(no << E_SHIFT) + E_PROFILE]!;
    }
    let memo = this.profileMemo[profile]!;
    if (memo === UNKNOWN) {
      memo = this.profilePasses(profile) ? PASS : FAIL;
      this.profileMemo[profile] = memo;
    }
    return memo === PASS;
  }

  /** Whether the entry may have a skill or tool that passes `unitPasses` (no false negatives). */
  private signaturesMatch(row: number): boolean {
    const e = this.signatures;
    if ((this.tagsLo | this.tagsHi) !== 0 && ((e[row + S_TAGS_LO]! & this.tagsLo) | (e[row + S_TAGS_HI]! & this.tagsHi)) === 0) return false;
    if (this.inSig !== 0 && (e[row + S_IN]! & this.inSig) === 0) return false;
    if (this.outSig !== 0 && (e[row + S_OUT]! & this.outSig) === 0) return false;
    if (this.hintSig !== 0 && (e[row + S_HINTS]! & this.hintSig) === 0) return false;
    return true;
  }

  /** Skill or tool, tool hints, tags and modes of the unit in slot `slot` (when `unitLevel`). */
  unitPasses(slot: number): boolean {
    const attr = this.unitAttr[slot]!;
    if ((attr & this.unitMask) !== this.unitWant) return false;
    if (!this.poolLevel) return true;
    // Modes on the unit's own word first: the pool is another random read.
    if (this.inUnitBits !== 0 && ((attr >>> A_IN_SHIFT) & A_MODE_MASK & this.inUnitBits) === 0) return false;
    if (this.outUnitBits !== 0 && ((attr >>> A_OUT_SHIFT) & A_MODE_MASK & this.outUnitBits) === 0) return false;
    if (this.unitBitsDecide) return true;
    let at = this.unitPool[slot]!;
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
        const declared = this.attrs.modes.value(id)!;
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
      if (this.binding !== undefined && bindingKey(p.bindings[i]!) !== this.binding) continue;
      if (this.version !== undefined && !versionMatches(p.versions[i], this.version)) continue;
      return true;
    }
    return false;
  }
}
