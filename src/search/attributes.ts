/**
 * Filterable attributes as numbers in the rows of ./tables.ts, so a filter test reads the row a
 * search already has in cache instead of chasing entry objects around the heap (measured: at
 * 100,000 entries, object-based tests cost more than the text matching itself).
 *
 * Entry rows carry E_ATTR (kind, streaming and verified flags, health, interface-profile id: the
 * entry's list of (binding, version) pairs, interned, so a handful of profiles cover most entries;
 * the entry's language for word forms) and the owner id. Unit slots carry whether the unit is a skill or a tool and a tool's hints; skills
 * point into a pooled Int32Array holding their tag ids and effective input/output mode ids
 * (their own modes, or the card defaults). Per entry, signatures (bit sets) of its skills' tags
 * and modes and its tools' hints let skill/tool filters reject whole entries at once.
 *
 * String values are interned into dictionaries (./dictionary.ts) that count their references:
 * an entry its owner and interface list, a skill's segment its tags and modes (counted as they
 * are set, released as the unit or entry is cleared). A value nothing references any more is
 * forgotten when the write is done (`forgetUnused`), with what is kept by its id (an interface
 * list's profile here, the owner's or tag's listing order: `onForget`), and its id is used again.
 * Nothing else holds a freed id: the rows, signatures and pool segments of live entries
 * reference only live values (an entry's signature row is cleared when its number is filled
 * again), and those of removed ones are never read as live. So memory and the saved index
 * follow the values the entries have now, however many came and went. The pool is compacted
 * when more than half of it belongs to removed units.
 */
import type { EntryInterface } from '../contract/types.js';
import { failingSince, type EntryHealth } from '../contract/freshness.js';
import { E_ATTR, E_COUNT, E_OWNER, E_PROFILE, E_SHIFT, M_LANG_MASK, M_LIVE, M_MCP, S_CAPS_HI, S_CAPS_LO, S_CAPS_MORE, S_HINTS, S_IN, S_OUT, S_SHIFT, S_TAGS_HI, S_TAGS_LO, type Tables } from './tables.js';
import { capabilitySignature } from './capability-bits.js';
import { Dictionary } from './dictionary.js';
import { part, type IndexState } from './index-state.js';
import { fold, tokenize } from './text-encoder.js';

// E_ATTR bits of an entry row.
export const A_MCP = 1;
export const A_STREAMING = 2;
/** The interface-profile id starts here; ids from A_PROFILE_MAX on are read from E_PROFILE. */
export const A_PROFILE_SHIFT = 2;
export const A_PROFILE_MAX = (1 << 23) - 1;
/** The entry's language id (./languages.ts), 3 bits above the profile id. */
export const A_LANG_SHIFT = 25;
export const A_LANG_MASK = 7;
/** Two bits of health above the language: 0 unknown, then HEALTH_CODES. */
export const A_HEALTH_SHIFT = 28;
export const A_HEALTH_MASK = 3;
export const HEALTH_CODES = { ok: 1, unreachable: 2, invalid: 3 } as const;
/** Bit 30, above the health: a signature of the card verified with a trusted key. */
export const A_VERIFIED = 1 << 30;

// unitAttr bits of a unit slot.
export const A_SKILL = 1;
export const A_TOOL = 2;
/** Tool hints (HINT_* of ./entry-store.ts, MCP defaults applied) start here. */
export const A_HINTS_SHIFT = 2;
/**
 * A skill's input modes and output modes, a bit per mode id modulo A_MODE_BITS (`modeBit`),
 * from A_IN_SHIFT and A_OUT_SHIFT: a mode filter tests them on the unit's attribute word, and
 * reads the skill's modes in the pool only when more modes than bits are known (then the bits
 * only rule skills out). Derived from the pool, so set again when a saved index loads.
 */
export const A_MODE_BITS = 13;
export const A_IN_SHIFT = 6;
export const A_OUT_SHIFT = A_IN_SHIFT + A_MODE_BITS;
export const A_MODE_MASK = (1 << A_MODE_BITS) - 1;
export const modeBit = (id: number): number => 1 << id % A_MODE_BITS;

/** An entry's mark (./tables.ts) from its E_ATTR: live, kind and language. */
const markOf = (attr: number): number => M_LIVE | ((attr & A_MCP) !== 0 ? M_MCP : 0) | ((attr >>> A_LANG_SHIFT) & A_LANG_MASK & M_LANG_MASK);

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

/**
 * A tag's key: its words as the tokenizer reads them (case and accents folded; split at white
 * space, dashes, any punctuation and a change of case, as in camelCase and XMLParser; single
 * letters and stop words kept), written as one word, so that "Machine Learning",
 * "machine-learning", "MachineLearning" and "machinelearning", "GitHub" and "github", "Node.js",
 * "node-js" and "nodejs", "CI/CD" and "ci-cd" are one tag each to the tags filter and the catalog,
 * as they are to `tags:` (which reads words, and a word as two or two as one:
 * ./expansion.ts addSplits). A tag of no word ("-", "$") keeps its folded text: it would be empty.
 */
export const tagKey = (tag: string): string => tokenize(tag, { keepShort: true }).join('') || fold(tag).trim();

/**
 * A protocol binding as the protocolBinding filter compares it: case and the separators people
 * write in its name aside ("JSON-RPC", the protocol's own spelling, and "json_rpc" are JSONRPC;
 * "http json" is HTTP+JSON), where only the exact spelling matched. Compared, not stored: the
 * saved profiles keep their lower-cased bindings.
 */
export const bindingKey = (binding: string): string => {
  const lower = binding.trim().toLowerCase();
  return lower.replace(/[\s\p{Pd}_+]+/gu, '') || lower;
};

export class Attributes {
  /** Skill segments: [nTags, tag ids..., nIn, mode ids..., nOut, mode ids...]. */
  pool: Int32Array = new Int32Array(1024);
  private poolEnd = 0;
  private poolGarbage = 0;

  readonly owners = new Dictionary();
  readonly tags = new Dictionary();
  readonly modes = new Dictionary();
  private readonly profileIds = new Dictionary();
  /** By interface-profile id (undefined: a free id). */
  readonly profiles: (InterfaceProfile | undefined)[] = [];
  /**
   * Entry number → since when it has been unhealthy (ms: its failed checks' run, whatever their
   * kinds, health.failingSince), for entries whose health is not ok.
   */
  readonly unhealthySince = new Map<number, number>();

  /** `onForget.owner(id)`, `onForget.tag(id)`: no entry has that owner, no skill that tag, any more (`forgetUnused`). */
  constructor(
    readonly tables: Tables,
    private readonly onForget: { owner?: (id: number) => void; tag?: (id: number) => void } = {},
  ) {}

  save(state: IndexState): void {
    // Shared, not copied: appends go past poolEnd, a compaction writes a new pool.
    state.set('attrs.pool', this.pool.subarray(0, this.poolEnd));
    state.set('attrs.poolGarbage', this.poolGarbage);
    // By id, a free id's value undefined (SNAPSHOT_FORMAT 24): nothing forgotten is saved.
    state.set('attrs.owners', this.owners.saved());
    state.set('attrs.tags', this.tags.saved());
    state.set('attrs.modes', this.modes.saved());
    state.set('attrs.profileIds', this.profileIds.saved());
    state.set('attrs.profiles', this.profiles.map((p) => p && { bindings: [...p.bindings], versions: [...p.versions] }));
    state.set('attrs.unhealthySince', new Map(this.unhealthySince));
  }

  /**
   * Takes over what `save` wrote (into new, empty attributes; the tables loaded first), counting
   * what the live entries and skills reference. Call `forgetUnused` once whatever is kept by
   * owner and tag id is loaded too: it forgets the values an index saved before values were
   * forgotten still has.
   */
  load(state: IndexState): void {
    this.pool = part(state, 'attrs.pool');
    this.poolEnd = this.pool.length;
    this.poolGarbage = part(state, 'attrs.poolGarbage');
    this.owners.load(part(state, 'attrs.owners'));
    this.tags.load(part(state, 'attrs.tags'));
    this.modes.load(part(state, 'attrs.modes'));
    this.profileIds.load(part(state, 'attrs.profileIds'));
    this.profiles.push(...part<(InterfaceProfile | undefined)[]>(state, 'attrs.profiles'));
    if (this.profiles.length !== this.profileIds.bound) throw new Error('the saved interface profiles are inconsistent');
    for (const [no, since] of part<Map<number, number>>(state, 'attrs.unhealthySince')) this.unhealthySince.set(no, since);
    // The marks and the dense attributes are not saved: derived from the rows (after the tables loaded).
    const { entries, marks, entryAttr, unitAttr, unitPool } = this.tables;
    for (let no = 0; no < marks.length; no++) {
      const row = no << E_SHIFT;
      // (Not logged: what is derived from the attributes is built after loading.)
      entryAttr[no] = entries[row + E_ATTR]!;
      marks[no] = entries[row + E_COUNT] === 0 ? 0 : markOf(entries[row + E_ATTR]!);
      if (marks[no] === 0) continue;
      this.owners.retain(entries[row + E_OWNER]!);
      this.profileIds.retain(entries[row + E_PROFILE]!);
    }
    // The skills' mode bits, from their segments (an index saved before they existed has none),
    // and their tags and modes counted.
    for (let slot = 0; slot < unitAttr.length; slot++) {
      const at = unitPool[slot]!;
      if (at < 0 || (unitAttr[slot]! & A_SKILL) === 0) continue;
      unitAttr[slot] = A_SKILL | this.modeBitsAt(at);
      this.forSegment(at, this.retainTag, this.retainMode);
    }
  }

  /**
   * Forgets the owners, tags, modes and interface lists nothing references any more (./dictionary.ts),
   * with what is kept by their ids. Call when a write is done.
   */
  forgetUnused(): void {
    this.owners.forgetUnused(this.onForget.owner);
    this.tags.forgetUnused(this.onForget.tag);
    this.modes.forgetUnused();
    this.profileIds.forgetUnused((id) => (this.profiles[id] = undefined));
    this.profiles.length = this.profileIds.bound;
  }

  /** Per dictionary, the values known and the bound of their ids (stats and tests). */
  get dictionaries(): Record<'owners' | 'tags' | 'modes' | 'interfaceLists', { values: number; ids: number }> {
    const of = (d: Dictionary): { values: number; ids: number } => ({ values: d.size, ids: d.bound });
    return { owners: of(this.owners), tags: of(this.tags), modes: of(this.modes), interfaceLists: of(this.profileIds) };
  }

  /** Calls `tag` with each tag id and `mode` with each input and output mode id of the skill segment at `at` of the pool. */
  private forSegment(at: number, tag: (id: number) => void, mode: (id: number) => void): void {
    const p = this.pool;
    for (let k = p[at++]!; k > 0; k--) tag(p[at++]!);
    for (let k = p[at++]!; k > 0; k--) mode(p[at++]!);
    for (let k = p[at++]!; k > 0; k--) mode(p[at++]!);
  }

  /** The A_IN_SHIFT and A_OUT_SHIFT bits of the skill segment at `at` of the pool. */
  private modeBitsAt(at: number): number {
    const p = this.pool;
    at += 1 + p[at]!;
    let inputs = 0;
    for (let k = p[at++]!; k > 0; k--) inputs |= modeBit(p[at++]!);
    let outputs = 0;
    for (let k = p[at++]!; k > 0; k--) outputs |= modeBit(p[at++]!);
    return (inputs << A_IN_SHIFT) | (outputs << A_OUT_SHIFT);
  }

  /**
   * Fills the entry row's filter attributes, counting its owner and interface list (released by
   * `clearEntry`). Throws, if at all, before it counts anything.
   */
  setEntry(
    no: number,
    mcp: boolean,
    streaming: boolean,
    verified: boolean,
    owner: string,
    interfaces: readonly EntryInterface[],
    generation: string | undefined,
    language: number,
    health?: Pick<EntryHealth, 'status' | 'since' | 'failingSince'>,
  ): void {
    const row = no << E_SHIFT;
    const e = this.tables.entries;
    const bindings = interfaces.map((i) => i.protocolBinding.toLowerCase());
    const versions = interfaces.map((i) => i.protocolVersion ?? generation);
    const signature = JSON.stringify([bindings, versions]);
    const id = this.profileIds.acquire(signature);
    // A new value's id (a free one, or one past the end).
    this.profiles[id] ??= { bindings, versions };
    const healthCode = health ? HEALTH_CODES[health.status] : 0;
    e[row + E_ATTR] =
      (mcp ? A_MCP : 0) |
      (streaming ? A_STREAMING : 0) |
      (verified ? A_VERIFIED : 0) |
      (Math.min(id, A_PROFILE_MAX) << A_PROFILE_SHIFT) |
      ((language & A_LANG_MASK) << A_LANG_SHIFT) |
      (healthCode << A_HEALTH_SHIFT);
    const unhealthySince = failingSince(health);
    if (unhealthySince !== undefined) this.unhealthySince.set(no, Date.parse(unhealthySince) || 0);
    else this.unhealthySince.delete(no);
    this.tables.marks[no] = markOf(e[row + E_ATTR]!);
    this.tables.setAttr(no, e[row + E_ATTR]!);
    e[row + E_OWNER] = this.owners.acquire(owner);
    e[row + E_PROFILE] = id;
    this.tables.signatures.fill(0, no << S_SHIFT, (no + 1) << S_SHIFT);
  }

  /** Releases what `setEntry` counted for entry number `no` (its row still as it set it). */
  clearEntry(no: number): void {
    const row = no << E_SHIFT;
    this.owners.release(this.tables.entries[row + E_OWNER]!);
    this.profileIds.release(this.tables.entries[row + E_PROFILE]!);
  }

  /** The capabilities entry `no` offers (./capability-bits.ts), after `setEntry`. */
  setCapabilities(no: number, values: Iterable<string>): void {
    const sig = capabilitySignature(values);
    const row = no << S_SHIFT;
    const e = this.tables.signatures;
    e[row + S_CAPS_LO] = sig.lo;
    e[row + S_CAPS_HI] = sig.hi;
    e[row + S_CAPS_MORE] = sig.more;
  }

  /** The entry itself, at unit slot `slot`. */
  setSelf(slot: number): void {
    this.tables.unitAttr[slot] = 0;
    this.tables.unitPool[slot] = -1;
  }

  /** A tool of entry `no`, at unit slot `slot`. */
  setTool(no: number, slot: number, hints: number): void {
    this.tables.unitAttr[slot] = A_TOOL | (hints << A_HINTS_SHIFT);
    this.tables.unitPool[slot] = -1;
    this.tables.signatures[(no << S_SHIFT) + S_HINTS]! |= 1 << hints;
  }

  /** A skill of entry `no`, at unit slot `slot`. */
  setSkill(no: number, slot: number, a: SkillAttributes): void {
    const need = 3 + a.tags.length + a.inputModes.length + a.outputModes.length;
    if (this.poolEnd + need > this.pool.length) {
      const out = new Int32Array(Math.max(this.pool.length * 2, this.poolEnd + need));
      out.set(this.pool.subarray(0, this.poolEnd));
      this.pool = out;
    }
    const p = this.pool;
    let at = this.poolEnd;
    this.tables.unitPool[slot] = at;
    const e = this.tables.signatures;
    const row = no << S_SHIFT;
    p[at++] = a.tags.length;
    for (const t of a.tags) {
      const id = this.tags.acquire(t);
      p[at++] = id;
      e[row + (id & 32 ? S_TAGS_HI : S_TAGS_LO)]! |= 1 << (id & 31);
    }
    p[at++] = a.inputModes.length;
    for (const m of a.inputModes) {
      const id = this.modes.acquire(m);
      p[at++] = id;
      e[row + S_IN]! |= 1 << (id & 31);
    }
    p[at++] = a.outputModes.length;
    for (const m of a.outputModes) {
      const id = this.modes.acquire(m);
      p[at++] = id;
      e[row + S_OUT]! |= 1 << (id & 31);
    }
    this.tables.unitAttr[slot] = A_SKILL | this.modeBitsAt(this.poolEnd);
    this.poolEnd = at;
  }

  // Bound once (`forSegment` runs for every skill cleared, and every skill at a load).
  private readonly retainTag = (id: number): void => this.tags.retain(id);
  private readonly retainMode = (id: number): void => this.modes.retain(id);
  private readonly releaseTag = (id: number): void => this.tags.release(id);
  private readonly releaseMode = (id: number): void => this.modes.release(id);

  private segmentLength(off: number): number {
    const p = this.pool;
    const nTags = p[off]!;
    const nIn = p[off + 1 + nTags]!;
    const nOut = p[off + 2 + nTags + nIn]!;
    return 3 + nTags + nIn + nOut;
  }

  /** The distinct tag ids of the skills in unit slots [base, base + count), into `out` (emptied first). */
  tagsOf(base: number, count: number, out: number[]): number[] {
    out.length = 0;
    const p = this.pool;
    for (let slot = base; slot < base + count; slot++) {
      const off = this.tables.unitPool[slot]!;
      if (off < 0) continue;
      // A few tags an entry: a linear check is cheaper than a Set.
      for (let k = 0; k < p[off]!; k++) if (!out.includes(p[off + 1 + k]!)) out.push(p[off + 1 + k]!);
    }
    return out;
  }

  /** Forgets the attributes of unit slot `slot` (a skill's tags and modes released). */
  clearUnit(slot: number): void {
    const off = this.tables.unitPool[slot]!;
    if (off >= 0) {
      this.poolGarbage += this.segmentLength(off);
      this.forSegment(off, this.releaseTag, this.releaseMode);
    }
    this.tables.unitPool[slot] = -1;
    this.tables.unitAttr[slot] = 0;
  }

  /** Compacts the pool when mostly garbage; `liveSlots` lists every unit slot in use. */
  maybeCompact(liveSlots: () => Iterable<number>): void {
    if (this.poolGarbage < 65_536 || this.poolGarbage * 2 < this.poolEnd) return;
    const out = new Int32Array(Math.max(1024, (this.poolEnd - this.poolGarbage) * 2));
    let at = 0;
    const slots = this.tables.unitPool;
    for (const slot of liveSlots()) {
      const off = slots[slot]!;
      if (off < 0) continue;
      const len = this.segmentLength(off);
      out.set(this.pool.subarray(off, off + len), at);
      slots[slot] = at;
      at += len;
    }
    this.pool = out;
    this.poolEnd = at;
    this.poolGarbage = 0;
  }
}
