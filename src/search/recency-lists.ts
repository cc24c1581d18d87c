/**
 * Entries in the order a listing shows them (newest first: `updatedAt` descending, then id
 * ascending), for the whole index, per owner and per skill tag, so a listing (empty text) walks
 * the newest entries first and stops once its page is full and its total has reached the
 * tracking limit, instead of visiting every entry (./search-index.ts `list`). The owner's or
 * the tag's list is walked instead of the whole index when the filter names one and it is
 * shorter: a selective filter then costs what it selects.
 *
 * A list holds (entry number, generation) pairs. Leaving is lazy: every commit or removal of an
 * entry number bumps its generation, so a member whose generation is not its number's current
 * one is stale and skipped (a list mostly stale is compacted). Joining: an entry newer than the
 * list's newest is appended to its sorted main part (a live registry's registrations and
 * updates); an older one (a health change keeps the entry's time; an index loaded from storage
 * in id order) goes into a small sorted side part, merged into the main part once it holds a
 * sixteenth as many (at most MAX_SIDE), so each costs a bounded share of one linear merge. A walk merges the two.
 * Not saved with the index: rebuilt (one sort) when a saved index loads.
 */
import { S_HINTS, S_IN, S_OUT, S_SHIFT } from './tables.js';

/** Ids by entry number (undefined: free), and updatedAt, attributes and signatures by entry number. */
export interface RecencySource {
  readonly entryIds: readonly (string | undefined)[];
  updatedAt(): Float64Array;
  attributes(): Int32Array;
  /** ./tables.ts `signatures` (S_SHIFT slots an entry). */
  signatures(): Int32Array;
}

/** What a walk asks of a filter before it reads anything by entry number. */
export interface WalkFilter {
  /** The entry's E_ATTR (./attributes.ts) may pass. */
  attributesPass(attr: number): boolean;
  /** The entry's skill-mode and tool-hint signatures (./tables.ts S_IN, S_OUT, S_HINTS) may pass. */
  signatureWordsPass(inputs: number, outputs: number, hints: number): boolean;
}

/**
 * A side part merges into the main part past a sixteenth of its size, within these bounds: an
 * insertion moves at most MAX_SIDE members, and a merge (linear in the list) comes at most
 * once per MIN_SIDE insertions.
 */
const MIN_SIDE = 256;
const MAX_SIDE = 4096;

/** Fields of a member: entry number, generation, E_ATTR, then (with signatures) S_IN, S_OUT, S_HINTS. */
const F_NO = 0;
const F_GEN = 1;
const F_ATTR = 2;
const F_IN = 3;
const F_OUT = 4;
const F_HINTS = 5;
const FIELDS = 6;

/** Before in listing order (newer, or as new with the smaller id). */
const newer = (atA: number, idA: string, atB: number, idB: string): boolean => atA > atB || (atA === atB && idA < idB);

/**
 * One list: a sorted main part (oldest first) and a sorted side part of late arrivals. Each
 * member carries a copy of its entry's filter attributes and (for the list of all entries) its
 * skill-mode and tool-hint signatures, current while the member is: a walk tests them in its
 * own sequential array, so the entries a filter rejects cost no random read (a walk over
 * 1,000,000 entries that passed no filter took about 300 ms reading them by entry number).
 */
export class RecencyList {
  /** Fields per member. */
  private readonly width: number;
  private main: Int32Array<ArrayBuffer>;
  private length = 0;
  private side: Int32Array<ArrayBuffer> = new Int32Array(0);
  /** The side members' updatedAt as they joined (a stale member's number may now hold another time). */
  private sideAts = new Float64Array(0);
  private sideLength = 0;
  private stale = 0;
  private lastAt = -Infinity;
  private lastId = '';

  constructor(
    private readonly src: RecencySource,
    private readonly gen: () => Int32Array,
    private readonly withSignatures: boolean,
  ) {
    this.width = withSignatures ? FIELDS : 3;
    this.main = new Int32Array(4 * this.width);
  }

  /** Whether members carry their signatures (a walk tests them: WalkFilter). */
  get hasSignatures(): boolean {
    return this.withSignatures;
  }

  /** Members, stale ones included (a walk's cost is at most this). */
  get size(): number {
    return this.length + this.sideLength;
  }

  /** Entry number `no` (generation `g`, committed) joins. */
  add(no: number, g: number): void {
    const at = this.src.updatedAt()[no]!;
    const id = this.src.entryIds[no]!;
    if (this.length === 0 || newer(at, id, this.lastAt, this.lastId)) {
      if ((this.length + 1) * this.width > this.main.length) this.main = grow(this.main, this.main.length * 2);
      this.fill(this.main, this.length++, no, g);
      this.lastAt = at;
      this.lastId = id;
      return;
    }
    this.insertSide(no, g, at, id);
    if (this.sideLength > Math.min(MAX_SIDE, Math.max(MIN_SIDE, this.length >>> 4))) this.merge();
  }

  /**
   * Takes the members at `ranks` (ascending: oldest first; 'all': the first `count`) of
   * `byRank`, FIELDS fields a member in listing order (into an empty list).
   */
  load(ranks: Int32Array | 'all', byRank: Int32Array<ArrayBuffer>, count: number): void {
    const w = this.width;
    if (ranks === 'all' && w === FIELDS) {
      // Every member, in order: the array itself (it has room past `count`).
      this.main = byRank;
      this.length = count;
    } else {
      const n = ranks === 'all' ? count : ranks.length;
      this.main = new Int32Array((n + (n >>> 3) + 4) * w);
      const main = this.main;
      for (let i = 0; i < n; i++) {
        const from = (ranks === 'all' ? i : ranks[i]!) * FIELDS;
        for (let f = 0; f < w; f++) main[i * w + f] = byRank[from + f]!;
      }
      this.length = n;
    }
    this.setLast(this.length > 0 ? this.main[(this.length - 1) * w + F_NO]! : undefined);
  }

  /**
   * Sets the bit of every member's entry number in `bits` (a bit per number), stale members
   * too: a superset of the live members, for a search to skip every other entry with a bit test.
   */
  mark(bits: Int32Array): void {
    const w = this.width;
    for (const [a, n] of [
      [this.main, this.length],
      [this.side, this.sideLength],
    ] as const) {
      for (let i = 0; i < n; i++) {
        const no = a[i * w + F_NO]!;
        bits[no >>> 5]! |= 1 << (no & 31);
      }
    }
  }

  /** One member became stale. */
  dropped(): void {
    if (++this.stale > 64 && this.stale * 2 > this.size) this.merge();
  }

  /**
   * Calls `visit` with the numbers of the live members that `filter` may pass, newest first,
   * until it returns false. Returns true when every member was looked at.
   */
  walk(visit: (no: number) => boolean, filter?: WalkFilter): boolean {
    const gen = this.gen();
    const w = this.width;
    const sig = this.withSignatures;
    // Live and maybe passing: the member at `i` of `a`.
    // (The filter first: it reads the member's own fields; the generation is a read by number.)
    const candidate = (a: Int32Array, i: number): boolean => {
      const o = i * w;
      if (filter && !(filter.attributesPass(a[o + F_ATTR]!) && (!sig || filter.signatureWordsPass(a[o + F_IN]!, a[o + F_OUT]!, a[o + F_HINTS]!)))) return false;
      return gen[a[o + F_NO]!] === a[o + F_GEN];
    };
    const main = this.main;
    let i = this.length - 1;
    if (this.sideLength === 0) {
      // The common case: no late arrivals.
      for (; i >= 0; i--) if (candidate(main, i) && !visit(main[i * w + F_NO]!)) return false;
      return true;
    }
    const side = this.side;
    const at = this.src.updatedAt();
    const ids = this.src.entryIds;
    let j = this.sideLength - 1;
    while (i >= 0 && !candidate(main, i)) i--;
    while (j >= 0 && !candidate(side, j)) j--;
    while (i >= 0 || j >= 0) {
      let no: number;
      const a = i >= 0 ? main[i * w + F_NO]! : -1;
      const b = j >= 0 ? side[j * w + F_NO]! : -1;
      if (b < 0 || (a >= 0 && newer(at[a]!, ids[a]!, at[b]!, ids[b]!))) {
        no = a;
        for (i--; i >= 0 && !candidate(main, i); i--);
      } else {
        no = b;
        for (j--; j >= 0 && !candidate(side, j); j--);
      }
      if (!visit(no)) return false;
    }
    return true;
  }

  /** Writes member `no` (generation `g`) at position `i` of `a`. */
  private fill(a: Int32Array, i: number, no: number, g: number): void {
    writeMember(a, i * this.width, no, g, this.src.attributes(), this.withSignatures ? this.src.signatures() : undefined);
  }

  /** The newest member of the main part is `no` (undefined: none), whose time and id an `add` compares with. */
  private setLast(no: number | undefined): void {
    this.lastAt = no === undefined ? -Infinity : this.src.updatedAt()[no]!;
    this.lastId = no === undefined ? '' : this.src.entryIds[no]!;
  }

  private insertSide(no: number, g: number, at: number, id: string): void {
    const w = this.width;
    if (this.sideLength === this.sideAts.length) {
      const size = Math.max(16, this.sideLength * 2);
      this.side = grow(this.side, size * w);
      const ats = new Float64Array(size);
      ats.set(this.sideAts);
      this.sideAts = ats;
    }
    // Binary search for the first member newer than the new one (oldest first).
    const ids = this.src.entryIds;
    let lo = 0;
    let hi = this.sideLength;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (newer(this.sideAts[mid]!, ids[this.side[mid * w + F_NO]!] ?? '', at, id)) hi = mid;
      else lo = mid + 1;
    }
    this.side.copyWithin((lo + 1) * w, lo * w, this.sideLength * w);
    this.sideAts.copyWithin(lo + 1, lo, this.sideLength);
    this.fill(this.side, lo, no, g);
    this.sideAts[lo] = at;
    this.sideLength++;
  }

  /** Merges the side part into the main part, leaving stale members out. */
  private merge(): void {
    const live: number[] = [];
    this.walk((no) => {
      live.push(no);
      return true;
    });
    this.replace(live.reverse());
  }

  /** The members become `nos` (live, oldest first). */
  private replace(nos: readonly number[]): void {
    const gen = this.gen();
    this.main = new Int32Array(Math.max(4, nos.length + (nos.length >>> 3)) * this.width);
    this.length = 0;
    for (const no of nos) this.fill(this.main, this.length++, no, gen[no]!);
    this.side = new Int32Array(0);
    this.sideAts = new Float64Array(0);
    this.sideLength = 0;
    this.stale = 0;
    this.setLast(nos[nos.length - 1]);
  }
}

/**
 * Writes member `no` (generation `g`) at offset `o` of `a`: its number, generation and filter
 * attributes, and with `signatures` its skill-mode and tool-hint signatures.
 */
function writeMember(a: Int32Array, o: number, no: number, g: number, attributes: Int32Array, signatures: Int32Array | undefined): void {
  a[o + F_NO] = no;
  a[o + F_GEN] = g;
  a[o + F_ATTR] = attributes[no]!;
  if (signatures) {
    const row = no << S_SHIFT;
    a[o + F_IN] = signatures[row + S_IN]!;
    a[o + F_OUT] = signatures[row + S_OUT]!;
    a[o + F_HINTS] = signatures[row + S_HINTS]!;
  }
}

const grow = (a: Int32Array, size: number): Int32Array<ArrayBuffer> => {
  const out = new Int32Array(size);
  out.set(a);
  return out;
};

export class RecencyLists {
  /** By entry number: its generation (bumped by every commit and removal of the number). */
  private gen = new Int32Array(1024);
  /** Every entry. */
  readonly all: RecencyList;
  private readonly byOwner: (RecencyList | undefined)[] = [];
  private readonly byTag: (RecencyList | undefined)[] = [];
  private readonly generations = (): Int32Array => this.gen;
  /**
   * Live entries by filter attributes (E_ATTR value → count): a few thousand distinct values at
   * most, so a filter no entry's attributes pass (a binding MCP servers do not have with a
   * tool hint) is answered without a walk over every entry.
   */
  private readonly attributeCounts = new Map<number, number>();

  constructor(private readonly src: RecencySource) {
    this.all = new RecencyList(src, this.generations, true);
  }

  /** The owner's list (undefined: the owner has no entries). */
  owner(ownerId: number): RecencyList | undefined {
    return this.byOwner[ownerId];
  }

  /** The list of entries with a skill tagged `tagId`. */
  tag(tagId: number): RecencyList | undefined {
    return this.byTag[tagId];
  }

  /** Whether some live entry's attributes pass `filter` (false: none can match it). */
  anyAttributesPass(filter: WalkFilter): boolean {
    for (const attr of this.attributeCounts.keys()) if (filter.attributesPass(attr)) return true;
    return false;
  }

  /** Entry number `no` (committed: its `updatedAt`, id and attributes set) joins the lists of its owner and tags. */
  add(no: number, ownerId: number, tagIds: Iterable<number>): void {
    const g = this.bump(no);
    this.countAttributes(this.src.attributes()[no]!, 1);
    this.all.add(no, g);
    (this.byOwner[ownerId] ??= new RecencyList(this.src, this.generations, false)).add(no, g);
    // With signatures: a tag and a mode or hint together are tested in the tag's list.
    for (const t of tagIds) (this.byTag[t] ??= new RecencyList(this.src, this.generations, true)).add(no, g);
  }

  /** Entry number `no` (its attributes still set) leaves its lists. */
  remove(no: number, ownerId: number, tagIds: Iterable<number>): void {
    this.countAttributes(this.src.attributes()[no]!, -1);
    this.bump(no);
    this.all.dropped();
    this.byOwner[ownerId]?.dropped();
    for (const t of tagIds) this.byTag[t]?.dropped();
  }

  /**
   * Builds every list from the live entries (into empty lists, after a saved index loaded): one
   * sort of the entries, then each list is its members in that order.
   */
  rebuild(bound: number, lists: (no: number) => { ownerId: number; tagIds: Iterable<number> }): void {
    if (this.all.size > 0) throw new Error('RecencyLists: rebuild only into empty lists');
    const at = this.src.updatedAt();
    const ids = this.src.entryIds;
    const members: number[] = [];
    for (let no = 0; no < bound; no++) if (ids[no] !== undefined) members.push(no);
    // A native sort of 64-bit keys (time, number), then runs of equal times in id order: a
    // comparator reading strings for every comparison took about a second at 1,000,000 entries.
    const keys = new BigInt64Array(members.length);
    let exact = true;
    for (let i = 0; i < members.length; i++) {
      const t = at[members[i]!]!;
      if (!(t >= 0 && t < 2 ** 41)) exact = false;
      keys[i] = (BigInt(Math.max(0, Math.min(Math.floor(t), 2 ** 41 - 1))) << 22n) | BigInt(members[i]!);
    }
    keys.sort();
    let order = Array.from(keys, (k) => Number(k & 0x3fffffn));
    const before = (a: number, b: number): number => (newer(at[a]!, ids[a]!, at[b]!, ids[b]!) ? 1 : newer(at[b]!, ids[b]!, at[a]!, ids[a]!) ? -1 : 0);
    if (!exact) order = order.sort(before);
    else {
      for (let i = 0; i < order.length; ) {
        let j = i + 1;
        while (j < order.length && at[order[j]!] === at[order[i]!]) j++;
        if (j - i > 1) {
          const run = order.slice(i, j).sort(before);
          for (let k = i; k < j; k++) order[k] = run[k - i]!;
        }
        i = j;
      }
    }
    // The entries' tables are read in number order (sequentially), each member's fields put by
    // its rank in the order; each list is then its members' ranks, sorted, read forwards: a
    // pass in listing order read the tables at random (about 10 s at 1M on a busy machine).
    const rank = new Int32Array(bound).fill(-1);
    order.forEach((no, r) => (rank[no] = r));
    // Room for an eighth more: it becomes the list of all entries as it is.
    const byRank = new Int32Array((order.length + (order.length >>> 3) + 4) * FIELDS);
    const attributes = this.src.attributes();
    const signatures = this.src.signatures();
    const ownerRanks: number[][] = [];
    const tagRanks: number[][] = [];
    for (let no = 0; no < bound; no++) {
      const r = rank[no]!;
      if (r < 0) continue;
      const { ownerId, tagIds } = lists(no);
      (ownerRanks[ownerId] ??= []).push(r);
      for (const t of tagIds) (tagRanks[t] ??= []).push(r);
      this.countAttributes(attributes[no]!, 1);
      writeMember(byRank, r * FIELDS, no, this.bump(no), attributes, signatures);
    }
    ownerRanks.forEach((ranks, ownerId) => {
      (this.byOwner[ownerId] = new RecencyList(this.src, this.generations, false)).load(Int32Array.from(ranks).sort(), byRank, ranks.length);
    });
    tagRanks.forEach((ranks, tagId) => {
      (this.byTag[tagId] = new RecencyList(this.src, this.generations, true)).load(Int32Array.from(ranks).sort(), byRank, ranks.length);
    });
    // Last: it takes `byRank` itself.
    this.all.load('all', byRank, order.length);
  }

  /** One live entry more (+1) or fewer (-1) with attributes `attr`. */
  private countAttributes(attr: number, change: 1 | -1): void {
    const left = (this.attributeCounts.get(attr) ?? 0) + change;
    if (left > 0) this.attributeCounts.set(attr, left);
    else this.attributeCounts.delete(attr);
  }

  private bump(no: number): number {
    if (no >= this.gen.length) {
      const gen = new Int32Array(Math.max(no + 1, this.gen.length * 2));
      gen.set(this.gen);
      this.gen = gen;
    }
    return (this.gen[no] = (this.gen[no]! + 1) | 0);
  }
}
