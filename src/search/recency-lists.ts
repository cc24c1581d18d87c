/**
 * Entries in the order a listing shows them (newest registered first: the entry's place in
 * `list`'s order, `listSeq`, descending, as storage lists them; an update keeps an entry's place;
 * no two entries share a place, and two that did would go by id), for the whole index, per owner
 * and per skill tag, so a listing (empty text) walks the newest entries first and stops once its
 * page is full and its total has reached the tracking limit, instead of visiting every entry
 * (./search-index.ts `list`). The owner's or the tag's list is walked instead of the whole index
 * when the filter names one and it is shorter: a selective filter then costs what it selects.
 *
 * A list holds (entry number, generation) pairs. Leaving is lazy: every commit or removal of an
 * entry number bumps its generation, so a member whose generation is not its number's current
 * one is stale and skipped (a list mostly stale is compacted). Joining: an entry newer than the
 * list's newest is appended to its sorted main part (a live registry's registrations, an index
 * loaded from storage in list's order); an older one (an update or a health change keeps the
 * entry's place; on PostgreSQL, a write committed after one with a later place) goes into a
 * small sorted side part, merged into the main part once it holds a sixteenth as many (at most
 * MAX_SIDE), so each costs a bounded share of one linear merge. A walk merges the two by each
 * side member's place in the main part, found when it joins (`sidePos`), so it reads no place or
 * id by entry number: comparing places there made a listing at 1,000,000 entries three times
 * slower whenever the list had a side part.
 *
 * Saved with the index as they are (members, side parts, generations: RecencyLists.save), so
 * a saved index loads without sorting its entries again (3-4 s of start-up at 1,000,000).
 */
import { Int32Pieces, concatenated, int32Part, part, type IndexState } from './index-state.js';
import { S_CAPS_HI, S_CAPS_LO, S_HINTS, S_IN, S_OUT, S_SHIFT } from './tables.js';

/** Ids by entry number (undefined: free), and list places, attributes and signatures by entry number. */
export interface RecencySource {
  entryId(no: number): string | undefined;
  /** How the ids of two entry numbers order as strings, a free number's as '' (./entry-ids.ts compare). */
  compareIds(a: number, b: number): number;
  /** By entry number: its place in `list`'s order (StoredEntry.listSeq; larger is newer). */
  listSeqs(): Float64Array;
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
  /** The first two words of the entry's capability signature (./tables.ts S_CAPS_LO, S_CAPS_HI) may pass. */
  capabilityWordsPass(lo: number, hi: number): boolean;
}

/**
 * A side part merges into the main part past a sixteenth of its size, within these bounds: an
 * insertion moves at most MAX_SIDE members, and a merge (linear in the list) comes at most
 * once per MIN_SIDE insertions.
 */
const MIN_SIDE = 256;
const MAX_SIDE = 4096;

/**
 * Fields of a member: entry number, generation, E_ATTR, then (with signatures) S_IN, S_OUT,
 * S_HINTS, then (with capabilities: the list of all entries only, 8 bytes a member more: the tag
 * lists, five members an entry, would cost 40) S_CAPS_LO, S_CAPS_HI.
 */
const F_NO = 0;
const F_GEN = 1;
const F_ATTR = 2;
const F_IN = 3;
const F_OUT = 4;
const F_HINTS = 5;
const F_CAPS_LO = 6;
const F_CAPS_HI = 7;
const PLAIN_FIELDS = 3;
const SIGNATURE_FIELDS = 6;
const CAPABILITY_FIELDS = 8;

/** Before in listing order (newer: the larger list place, or the same with the smaller id). */
const newer = (seqA: number, idA: string, seqB: number, idB: string): boolean => seqA > seqB || (seqA === seqB && idA < idB);
/** `newer` for the ids entry numbers `noA` and `noB` hold, compared without making their text. */
const newerThan = (src: RecencySource, seqA: number, noA: number, seqB: number, noB: number): boolean =>
  seqA > seqB || (seqA === seqB && src.compareIds(noA, noB) < 0);

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
  /** The side members' list places as they joined (a stale member's number may now hold another entry's). */
  private sideSeqs = new Float64Array(0);
  /**
   * By side member: how many main members are older (live ones; stale ones anywhere around), so
   * a walk shows main members from that index up before it. The main part only grows at its
   * newer end until a merge empties the side part, so a place stays right.
   */
  private sidePos = new Int32Array(0);
  private sideLength = 0;
  private stale = 0;
  private lastSeq = -Infinity;
  private lastId = '';

  constructor(
    private readonly src: RecencySource,
    private readonly gen: () => Int32Array,
    private readonly withSignatures: boolean,
    private readonly withCapabilities = false,
  ) {
    this.width = withCapabilities ? CAPABILITY_FIELDS : withSignatures ? SIGNATURE_FIELDS : PLAIN_FIELDS;
    this.main = new Int32Array(4 * this.width);
  }

  /** Whether members carry their signatures (a walk tests them: WalkFilter). */
  get hasSignatures(): boolean {
    return this.withSignatures;
  }

  /** Whether members carry their capability signature's first two words (a walk tests them: WalkFilter). */
  get hasCapabilities(): boolean {
    return this.withCapabilities;
  }

  /** Members, stale ones included (a walk's cost is at most this). */
  get size(): number {
    return this.length + this.sideLength;
  }

  /** Entry number `no` (generation `g`, committed) joins. */
  add(no: number, g: number): void {
    const seq = this.src.listSeqs()[no]!;
    // The id's text only when the places tie (the newest member's may belong to an entry gone since).
    if ((this.length === 0 && this.sideLength === 0) || seq > this.lastSeq || (seq === this.lastSeq && (this.src.entryId(no) ?? '') < this.lastId)) {
      // (A list loaded from a saved state may have no room at all.)
      if ((this.length + 1) * this.width > this.main.length) this.main = grow(this.main, Math.max(4 * this.width, this.main.length * 2));
      this.fill(this.main, this.length++, no, g);
      this.lastSeq = seq;
      this.lastId = this.src.entryId(no)!;
      return;
    }
    this.insertSide(no, g, seq);
    if (this.sideLength > Math.min(MAX_SIDE, Math.max(MIN_SIDE, this.length >>> 4))) this.merge();
  }

  /** Fields per member (saveLists below packs lists of one width together). */
  get fieldsPerMember(): number {
    return this.width;
  }

  /** The list as it is now: views of its parts (copy them before the list changes) and its count of stale members. */
  saved(): { main: Int32Array; side: Int32Array; sideSeqs: Float64Array; stale: number } {
    return {
      main: this.main.subarray(0, this.length * this.width),
      side: this.side.subarray(0, this.sideLength * this.width),
      sideSeqs: this.sideSeqs.subarray(0, this.sideLength),
      stale: this.stale,
    };
  }

  /**
   * Takes over saved parts (into an empty list; the generations loaded first). `main` may be a
   * view of a larger array: a join past its end grows it into an array of its own.
   */
  restore(main: Int32Array<ArrayBuffer>, side: Int32Array<ArrayBuffer>, sideSeqs: Float64Array<ArrayBuffer>, stale: number): void {
    const w = this.width;
    this.main = main;
    this.length = main.length / w;
    this.side = side;
    this.sideSeqs = sideSeqs;
    this.sideLength = sideSeqs.length;
    this.stale = stale;
    // A join compares with the newest live member of the main part (the newest one may have
    // left, and its number now hold another entry, of another place)...
    const gen = this.gen();
    let i = this.length - 1;
    while (i >= 0 && gen[main[i * w + F_NO]!] !== main[i * w + F_GEN]) i--;
    this.setLast(i >= 0 ? main[i * w + F_NO]! : undefined);
    // ...or with the newest side member, when newer: whatever joins the main part is then newer
    // than every side member, as their places need.
    this.sidePos = new Int32Array(this.sideLength);
    for (let j = 0; j < this.sideLength; j++) {
      const seq = sideSeqs[j]!;
      const no = side[j * w + F_NO]!;
      this.sidePos[j] = this.placeInMain(seq, no);
      if (seq < this.lastSeq) continue;
      const id = this.src.entryId(no) ?? '';
      if (newer(seq, id, this.lastSeq, this.lastId)) {
        this.lastSeq = seq;
        this.lastId = id;
      }
    }
  }

  /**
   * How many main members are older than (`seq`, the id entry number `of` holds): the index of the
   * oldest live main member newer than it, or the main part's length. A binary search on the live
   * members, each probe taking the nearest live member at or below it (stale members' numbers
   * may hold other places). Ids are compared by entry number, without their text.
   */
  private placeInMain(seq: number, of: number): number {
    const main = this.main;
    const w = this.width;
    const gen = this.gen();
    const seqs = this.src.listSeqs();
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      let k = mid;
      while (k >= lo && gen[main[k * w + F_NO]!] !== main[k * w + F_GEN]) k--;
      const no = k >= lo ? main[k * w + F_NO]! : -1;
      // No live member from lo to mid, or an older one: the place is above mid.
      if (no < 0 || !newerThan(this.src, seqs[no]!, no, seq, of)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
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
   * from the first listed before list place `below` (a binary search: the newer ones cost
   * nothing), until it returns false. Returns true when every member was looked at.
   */
  walk(visit: (no: number) => boolean, filter?: WalkFilter, below = Infinity): boolean {
    const gen = this.gen();
    const w = this.width;
    const sig = this.withSignatures;
    const caps = this.withCapabilities;
    // Live and maybe passing: the member at `i` of `a`.
    // (The filter first: it reads the member's own fields; the generation is a read by number.)
    const candidate = (a: Int32Array, i: number): boolean => {
      const o = i * w;
      if (filter && !(filter.attributesPass(a[o + F_ATTR]!) && (!sig || filter.signatureWordsPass(a[o + F_IN]!, a[o + F_OUT]!, a[o + F_HINTS]!)))) return false;
      if (filter && caps && !filter.capabilityWordsPass(a[o + F_CAPS_LO]!, a[o + F_CAPS_HI]!)) return false;
      return gen[a[o + F_NO]!] === a[o + F_GEN];
    };
    const main = this.main;
    const side = this.side;
    const pos = this.sidePos;
    // From the newest member listed before place `below` (a half place below it never ties):
    // the members newer than that are not looked at.
    let i = below === Infinity ? this.length - 1 : this.placeInMain(below - 0.5, -1) - 1;
    let start = this.sideLength - 1;
    if (below !== Infinity) while (start >= 0 && this.sideSeqs[start]! >= below) start--;
    // Newest first: the main members newer than side member j (from its place up), then j.
    for (let j = start; ; j--) {
      const newerFrom = j >= 0 ? pos[j]! : 0;
      for (; i >= newerFrom; i--) if (candidate(main, i) && !visit(main[i * w + F_NO]!)) return false;
      if (j < 0) return true;
      if (candidate(side, j) && !visit(side[j * w + F_NO]!)) return false;
    }
  }

  /** Writes member `no` (generation `g`) at position `i` of `a`. */
  private fill(a: Int32Array, i: number, no: number, g: number): void {
    writeMember(a, i * this.width, no, g, this.src.attributes(), this.withSignatures ? this.src.signatures() : undefined, this.withCapabilities);
  }

  /** The newest member of the main part is `no` (undefined: none), whose place and id an `add` compares with. */
  private setLast(no: number | undefined): void {
    this.lastSeq = no === undefined ? -Infinity : this.src.listSeqs()[no]!;
    this.lastId = no === undefined ? '' : this.src.entryId(no)!;
  }

  private insertSide(no: number, g: number, seq: number): void {
    const w = this.width;
    if (this.sideLength === this.sideSeqs.length) {
      const size = Math.max(16, this.sideLength * 2);
      this.side = grow(this.side, size * w);
      const seqs = new Float64Array(size);
      seqs.set(this.sideSeqs);
      this.sideSeqs = seqs;
      this.sidePos = grow(this.sidePos, size);
    }
    // Binary search for the first member newer than the new one (oldest first).
    let lo = 0;
    let hi = this.sideLength;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (newerThan(this.src, this.sideSeqs[mid]!, this.side[mid * w + F_NO]!, seq, no)) hi = mid;
      else lo = mid + 1;
    }
    this.side.copyWithin((lo + 1) * w, lo * w, this.sideLength * w);
    this.sideSeqs.copyWithin(lo + 1, lo, this.sideLength);
    this.sidePos.copyWithin(lo + 1, lo, this.sideLength);
    this.fill(this.side, lo, no, g);
    this.sideSeqs[lo] = seq;
    this.sidePos[lo] = this.placeInMain(seq, no);
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
    this.sideSeqs = new Float64Array(0);
    this.sidePos = new Int32Array(0);
    this.sideLength = 0;
    this.stale = 0;
    this.setLast(nos[nos.length - 1]);
  }
}

/**
 * Writes member `no` (generation `g`) at offset `o` of `a`: its number, generation and filter
 * attributes, with `signatures` its skill-mode and tool-hint signatures, and with `capabilities`
 * its capability signature's first two words.
 */
function writeMember(a: Int32Array, o: number, no: number, g: number, attributes: Int32Array, signatures: Int32Array | undefined, capabilities: boolean): void {
  a[o + F_NO] = no;
  a[o + F_GEN] = g;
  a[o + F_ATTR] = attributes[no]!;
  if (signatures) {
    const row = no << S_SHIFT;
    a[o + F_IN] = signatures[row + S_IN]!;
    a[o + F_OUT] = signatures[row + S_OUT]!;
    a[o + F_HINTS] = signatures[row + S_HINTS]!;
    if (capabilities) {
      a[o + F_CAPS_LO] = signatures[row + S_CAPS_LO]!;
      a[o + F_CAPS_HI] = signatures[row + S_CAPS_HI]!;
    }
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
    this.all = new RecencyList(src, this.generations, true, true);
  }

  /** Entry number `no`'s generation, bumped by every commit and removal of the number. */
  generation(no: number): number {
    return no < this.gen.length ? this.gen[no]! : 0;
  }

  /**
   * Entry numbers `nos` (live ones) in listing order, as a walk of a list meets them: newest
   * first, as new with the id that sorts first (`newerThan`). Their places are copied side by side
   * first, so the sort reads them in cache rather than at random in the table.
   */
  inListingOrder(nos: readonly number[]): number[] {
    const n = nos.length;
    const table = this.src.listSeqs();
    const seqs = new Float64Array(n);
    let newest = -Infinity;
    let oldest = Infinity;
    let whole = true;
    for (let i = 0; i < n; i++) {
      const t = table[nos[i]!]!;
      seqs[i] = t;
      if (t > newest) newest = t;
      if (t < oldest) oldest = t;
      whole &&= Number.isInteger(t);
    }
    // The listing order of positions i and j (`newerThan`, the one definition of it).
    const inOrder = (i: number, j: number): number =>
      newerThan(this.src, seqs[i]!, nos[i]!, seqs[j]!, nos[j]!) ? -1 : newerThan(this.src, seqs[j]!, nos[j]!, seqs[i]!, nos[i]!) ? 1 : 0;
    // Room for a position below each key's age.
    const room = 2 ** Math.ceil(Math.log2(n + 1));
    if (n < 2 || !whole || !Number.isSafeInteger((newest - oldest + 1) * room)) return Array.from(nos.keys()).sort(inOrder).map((i) => nos[i]!);
    // A number per entry, its age against the newest (whole places) above its position,
    // sorted natively, then only equal places compared (at 1M: 57,000 entries 37-40 -> 15-21 ms,
    // 13,000 6.6-6.8 -> 2.3-3.2 ms against the comparison of every pair).
    const keys = new Float64Array(n);
    for (let i = 0; i < n; i++) keys[i] = (newest - seqs[i]!) * room + i;
    keys.sort();
    const order = new Array<number>(n);
    for (let k = 0; k < n; k++) order[k] = keys[k]! % room;
    // Equal places: the id that sorts first first.
    for (let k = 0; k < n; ) {
      let end = k + 1;
      while (end < n && seqs[order[end]!] === seqs[order[k]!]) end++;
      if (end - k > 1) {
        const run = order.slice(k, end).sort(inOrder);
        for (let r = 0; r < run.length; r++) order[k + r] = run[r]!;
      }
      k = end;
    }
    return order.map((i) => nos[i]!);
  }

  /** The owner's list (undefined: the owner has no entries). */
  owner(ownerId: number): RecencyList | undefined {
    return this.byOwner[ownerId];
  }

  /** The list of entries with a skill tagged `tagId`. */
  tag(tagId: number): RecencyList | undefined {
    return this.byTag[tagId];
  }

  /**
   * No entry has owner `ownerId` (./attributes.ts forgot it; its id may be used again): its list,
   * whose members are all stale, goes.
   */
  forgetOwner(ownerId: number): void {
    forget(this.byOwner, ownerId);
  }

  /** No skill has tag `tagId` (as `forgetOwner`). */
  forgetTag(tagId: number): void {
    forget(this.byTag, tagId);
  }

  /** Lists held by owner and by tag (stats and tests). */
  get listCounts(): { owners: number; tags: number } {
    const held = (lists: readonly (RecencyList | undefined)[]): number => lists.reduce((n, l) => (l ? n + 1 : n), 0);
    return { owners: held(this.byOwner), tags: held(this.byTag) };
  }

  /** Whether some live entry's attributes pass `filter` (false: none can match it). */
  anyAttributesPass(filter: WalkFilter): boolean {
    for (const attr of this.attributeCounts.keys()) if (filter.attributesPass(attr)) return true;
    return false;
  }

  /** Entry number `no` (committed: its list place, id and attributes set) joins the lists of its owner and tags. */
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
   * Adds the lists' state to `state`, taken at once: members shared (they are only appended
   * past a saved end), side parts and generations copied (they change in place); the lists of
   * a kind are concatenated, so a few parts hold every owner's and tag's list.
   */
  save(state: IndexState): void {
    state.set('recency.generations', this.gen.slice());
    // (attribute, count) pairs, as numbers: a long plain array would be taken for strings (./snapshot-file.ts).
    state.set('recency.attributeCounts', Int32Array.from([...this.attributeCounts].flat()));
    saveLists(state, 'recency.all', [this.all]);
    saveLists(state, 'recency.owners', this.byOwner);
    saveLists(state, 'recency.tags', this.byTag);
  }

  /** Takes over a saved state (into empty lists; the entries' ids, places and attributes loaded). */
  load(state: IndexState): void {
    if (this.all.size > 0) throw new Error('RecencyLists: a saved state loads only into empty lists');
    this.gen = part<Int32Array<ArrayBuffer>>(state, 'recency.generations');
    const counts = part<Int32Array>(state, 'recency.attributeCounts');
    for (let i = 0; i < counts.length; i += 2) this.attributeCounts.set(counts[i]!, counts[i + 1]!);
    loadLists(state, 'recency.all', () => this.all);
    loadLists(state, 'recency.owners', (id) => (this.byOwner[id] = new RecencyList(this.src, this.generations, false)));
    loadLists(state, 'recency.tags', (id) => (this.byTag[id] = new RecencyList(this.src, this.generations, true)));
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

/** Drops the list of `id` from `lists`, and the empty places then at their end. */
function forget(lists: (RecencyList | undefined)[], id: number): void {
  lists[id] = undefined;
  while (lists.length > 0 && lists[lists.length - 1] === undefined) lists.length--;
}

/**
 * Saves `lists` (by id; undefined: none) as four parts: `<name>.shape` (per id: main members,
 * -1 for no list, side members, stale members), and their main parts, side parts and side
 * places, each concatenated in id order. The main parts are shared (Int32Pieces: copying them
 * held the event loop for about a second at 1,000,000 entries), the rest copied.
 */
function saveLists(state: IndexState, name: string, lists: readonly (RecencyList | undefined)[]): void {
  const shape = new Int32Array(lists.length * 3).fill(-1);
  const mains: Int32Array[] = [];
  const sides: Int32Array[] = [];
  const seqs: Float64Array[] = [];
  lists.forEach((list, id) => {
    if (!list) return;
    const v = list.saved();
    shape[id * 3] = v.main.length / list.fieldsPerMember;
    shape[id * 3 + 1] = v.sideSeqs.length;
    shape[id * 3 + 2] = v.stale;
    mains.push(v.main);
    if (v.sideSeqs.length === 0) return;
    sides.push(v.side);
    seqs.push(v.sideSeqs);
  });
  state.set(`${name}.shape`, shape);
  state.set(`${name}.main`, new Int32Pieces(mains));
  state.set(`${name}.side`, new Int32Pieces(sides).joined());
  state.set(`${name}.sideSeqs`, concatenated(seqs, new Float64Array(seqs.reduce((n, a) => n + a.length, 0))));
}

/** Loads lists saved by saveLists, each into the empty list `make(id)` returns. */
function loadLists(state: IndexState, name: string, make: (id: number) => RecencyList): void {
  const shape = part<Int32Array>(state, `${name}.shape`);
  const main = int32Part(state, `${name}.main`);
  const side = part<Int32Array<ArrayBuffer>>(state, `${name}.side`);
  const seqs = part<Float64Array<ArrayBuffer>>(state, `${name}.sideSeqs`);
  let m = 0;
  let s = 0;
  let a = 0;
  for (let id = 0; id * 3 < shape.length; id++) {
    const members = shape[id * 3]!;
    if (members < 0) continue;
    const list = make(id);
    const w = list.fieldsPerMember;
    const sideMembers = shape[id * 3 + 1]!;
    // Side parts shift in place as members join: each its own array.
    list.restore(main.subarray(m, (m += members * w)), side.slice(s, (s += sideMembers * w)), seqs.slice(a, (a += sideMembers)), shape[id * 3 + 2]!);
  }
  if (m !== main.length || s !== side.length || a !== seqs.length) throw new Error(`the saved index's ${name} lists do not match their shape`);
}
