/**
 * The text-matching layer: term → unit postings, in typed arrays.
 *
 * - A posting list per (term, slot): the units having the term, in the order they were added
 *   (oldest first; callers read from the end for "newest first"). The slot is the mask of the
 *   fields the term occurs in (./fields.ts), so a lookup says, per unit, *where* it matched and
 *   no second per-field index is needed.
 * - All lists live in one Int32Array arena (4 bytes a posting plus growth room); a list that
 *   outgrows its room moves to the arena's end, and the arena is compacted when more than a
 *   third of it is left behind. FlexSearch, used before, kept postings in JS arrays plus a
 *   per-unit register of them (about 35 bytes a posting at 100,000 entries) and removed a unit
 *   by splicing every list holding it: time that grew with the corpus.
 * - Removal is by *entry number* and costs what the entry has, not what the corpus has: each
 *   entry keeps the ids of the lists holding its postings; removing it counts one dead posting
 *   in each of those lists. A list is compacted (one pass, order kept) when it is short or an
 *   eighth of it is dead, so a posting is read a bounded number of times per removal. The
 *   entry number is handed back (`onRecycle`) only when its last dead posting is gone, so a
 *   posting never names a later entry; until then the caller must treat the number as removed
 *   (the search skips entry rows with no units) and `count` leaves dead postings out.
 * - A list left empty by a compaction is freed, and a term left without lists is forgotten, when
 *   the write is done (`forgetEmptied`: an update that keeps a word keeps its term): the ids are
 *   used again for new ones, the lists' room becomes garbage of the arena, and `onForget` tells
 *   the caller (the vocabulary forgets the term too). Without this every word ever indexed
 *   stayed, with its lists, in memory and in every saved index: a registry whose cards came and
 *   went with words of their own grew without limit. A list holds no posting only once it held
 *   nothing but dead postings, which a removal compacts at once (see above), so forgetting costs
 *   the write a walk of the lists it emptied, never a pass over the corpus.
 * - Lookups hand back views into the arena without copying: read-only, and only until the next
 *   change. They may hold postings of removed entries (see above).
 */

import { part, type IndexState } from './index-state.js';

/** Per-slot posting lists of one term; index = slot (field mask), with holes. */
export type SlotLists = readonly (Int32Array | undefined)[];

/** A list this short is compacted as soon as a removal touches it. */
const SHORT_LIST = 256;

const EMPTY: SlotLists = [];

const grown = <T extends Int32Array | Uint8Array>(a: T, need: number, fill = 0): T => {
  if (a.length >= need) return a;
  const out = new (a.constructor as new (n: number) => T)(Math.max(need, Math.ceil(a.length * 1.5), 1024));
  out.set(a);
  if (fill !== 0) out.fill(fill, a.length);
  return out;
};

export class TermIndex {
  private readonly termIds = new Map<string, number>();
  /** By term id: the term (undefined: a free id, in `freeTerms`). */
  private termNames: (string | undefined)[] = [];
  /** Term ids of forgotten terms, to be used again. */
  private freeTerms: number[] = [];
  /** By term id: its first list (-1: none); lists of a term are chained through listNext. */
  private termFirst = new Int32Array(1024).fill(-1);
  /** List ids in use or free: free lists are chained through listNext from `freeList` (-1: none). */
  private listCount = 0;
  private freeList = -1;
  /** By list id: its term (-1: a free list). */
  private listTerm = new Int32Array(1024);
  private listSlot = new Uint8Array(1024);
  private listNext = new Int32Array(1024);
  private listOff = new Int32Array(1024);
  private listLen = new Int32Array(1024);
  private listCap = new Int32Array(1024);
  /** Dead postings in the list (0: clean). */
  private listDead = new Int32Array(1024);
  private arena = new Int32Array(1 << 16);
  private arenaEnd = 0;
  private arenaGarbage = 0;
  /** By entry number: offset of its list ids in `records` ([count, list ids...]), or -1. */
  private entryRecord = new Int32Array(1024).fill(-1);
  private records = new Int32Array(1 << 16);
  private recordsEnd = 0;
  private recordsGarbage = 0;
  /** By entry number: dead postings not yet compacted away (> 0: the number is not reusable). */
  private deadLeft = new Int32Array(1024);
  /** Saved states still being written: lists are not compacted in place meanwhile (see `save`). */
  private frozen = 0;
  /** Lists a removal would have compacted while a saved state was being written: compacted by `catchUp`. */
  private deferred: number[] = [];
  /** Terms with a list that a compaction left empty: freed by `forgetEmptied`. */
  private emptied: number[] = [];
  /**
   * Terms with a list left with only dead postings while a saved state was being written: the
   * caller forgets those without a live posting at once (`forgetEmptied`), this index once their
   * lists are compacted.
   */
  private deadTerms: number[] = [];
  /** The entry whose units are being added, and the lists they went to. */
  private openEntry = -1;
  private openLists: number[] = [];

  /**
   * `onRecycle(no)`: entry number `no` names no posting any more and may be reused.
   * `onForget(term)`: no unit has `term` any more (told again when this index frees it, if a
   * save being written held its lists back then).
   */
  constructor(
    private readonly onRecycle: (no: number) => void,
    private readonly ordBits: number,
    private readonly onForget: (term: string) => void = () => {},
  ) {}

  /**
   * Its arrays into `state` (between changes: no entry may be open): copies of the small ones,
   * views of the arena and the entry records, which stay unchanged until the returned release
   * is called: appends go past a list's saved length or to new room at the arena's end,
   * compactions of the whole arena or the records write new arrays, and lists are not
   * compacted in place (nor freed: a list is freed once a compaction left it empty).
   */
  save(state: IndexState): () => void {
    if (this.openEntry >= 0) throw new Error('TermIndex: cannot save while an entry is being added');
    // Lists left with dead postings by removals during an earlier save: a term they held alone
    // is forgotten, not saved.
    this.catchUp();
    this.forgetEmptied();
    const n = this.listCount;
    // The terms numbered anew, without the free ids; lists keep their ids (entries' records name
    // them), the free ones saved empty and found free again by `load`.
    const terms: string[] = [];
    const termFirst = new Int32Array(this.termIds.size);
    for (const [term, t] of this.termIds) {
      termFirst[terms.length] = this.termFirst[t]!;
      terms.push(term);
    }
    state.set('terms.terms', terms);
    state.set('terms.termFirst', termFirst);
    state.set('terms.listSlot', this.listSlot.slice(0, n));
    state.set('terms.listNext', this.listNext.slice(0, n));
    state.set('terms.listOff', this.listOff.slice(0, n));
    state.set('terms.listLen', this.listLen.slice(0, n));
    state.set('terms.listCap', this.listCap.slice(0, n));
    state.set('terms.listDead', this.listDead.slice(0, n));
    state.set('terms.arena', this.arena.subarray(0, this.arenaEnd));
    state.set('terms.arenaGarbage', this.arenaGarbage);
    state.set('terms.entryRecord', this.entryRecord.slice());
    state.set('terms.records', this.records.subarray(0, this.recordsEnd));
    state.set('terms.recordsGarbage', this.recordsGarbage);
    state.set('terms.deadLeft', this.deadLeft.slice());
    this.frozen++;
    let released = false;
    return () => {
      if (!released) this.frozen--;
      released = true;
    };
  }

  /**
   * Takes over what `save` wrote (into a new, empty TermIndex). A term saved without postings
   * (by a release that never forgot one) is forgotten here: load the caller's vocabulary first.
   */
  load(state: IndexState): void {
    const terms = part<string[]>(state, 'terms.terms');
    this.termIds.clear();
    terms.forEach((t, i) => this.termIds.set(t, i));
    this.termNames = [...terms];
    this.freeTerms = [];
    this.termFirst = part(state, 'terms.termFirst');
    this.listSlot = part(state, 'terms.listSlot');
    this.listNext = part(state, 'terms.listNext');
    this.listOff = part(state, 'terms.listOff');
    this.listLen = part(state, 'terms.listLen');
    this.listCap = part(state, 'terms.listCap');
    this.listDead = part(state, 'terms.listDead');
    this.listCount = this.listOff.length;
    this.arena = part(state, 'terms.arena');
    this.arenaEnd = this.arena.length;
    this.arenaGarbage = part(state, 'terms.arenaGarbage');
    this.entryRecord = part(state, 'terms.entryRecord');
    this.records = part(state, 'terms.records');
    this.recordsEnd = this.records.length;
    this.recordsGarbage = part(state, 'terms.recordsGarbage');
    this.deadLeft = part(state, 'terms.deadLeft');
    const lists = [this.termFirst.length === terms.length, ...[this.listSlot, this.listNext, this.listLen, this.listCap, this.listDead].map((a) => a.length === this.listCount)];
    if (lists.includes(false)) throw new Error('the saved term index is inconsistent');
    this.findFree();
  }

  /**
   * After a load: each list's term, and the free lists (on no term's chain); lists a removal
   * would have compacted (saved while another save was being written) wait for `catchUp`, the
   * caller forgetting at once the terms they leave without a live posting; empty lists, and
   * terms left without lists (saved by a release that kept them), are forgotten.
   */
  private findFree(): void {
    const n = this.listCount;
    this.listTerm = new Int32Array(n).fill(-1);
    this.freeList = -1;
    this.deferred = [];
    this.emptied = [];
    this.deadTerms = [];
    for (let t = 0; t < this.termNames.length; t++) {
      let empty = this.termFirst[t]! < 0;
      let live = 0;
      for (let l = this.termFirst[t]!; l >= 0; l = this.listNext[l]!) {
        if (l >= n || this.listTerm[l] !== -1) throw new Error('the saved term index is inconsistent');
        this.listTerm[l] = t;
        if (this.listLen[l] === 0) empty = true;
        if (this.listDead[l]! > 0 && this.compactable(l)) this.deferred.push(l);
        live += this.listLen[l]! - this.listDead[l]!;
      }
      if (empty) this.emptied.push(t);
      else if (live === 0) this.deadTerms.push(t);
    }
    // From the highest id down, so that new lists take the lowest first.
    for (let l = n - 1; l >= 0; l--) {
      if (this.listTerm[l] !== -1) continue;
      if (this.listLen[l] !== 0) throw new Error('the saved term index is inconsistent');
      this.freeListId(l);
    }
    this.forgetEmptied();
  }

  /** Indexes unit `uid` of entry `uid >>> ordBits`: distinct `terms`, each under slot `slots[i]`. Call `commit` after the entry's last unit. */
  add(uid: number, terms: readonly string[], slots: readonly number[]): void {
    const no = uid >>> this.ordBits;
    if (this.openEntry !== no) {
      if (this.openEntry >= 0) this.commit(this.openEntry);
      this.openEntry = no;
    }
    for (let i = 0; i < terms.length; i++) {
      const l = this.listOf(terms[i]!, slots[i]!);
      this.append(l, uid);
      this.openLists.push(l);
    }
  }

  /** Closes the record of entry `no`'s postings (what `removeEntry` undoes). */
  commit(no: number): void {
    if (this.openEntry !== no) return;
    const lists = this.openLists;
    this.openEntry = -1;
    this.openLists = [];
    this.deadLeft = grown(this.deadLeft, no + 1);
    this.entryRecord = grown(this.entryRecord, no + 1, -1);
    if (this.entryRecord[no]! >= 0) throw new Error(`TermIndex: entry number ${no} is already indexed`);
    if (lists.length === 0) return;
    if (this.recordsEnd + lists.length + 1 > this.records.length) this.compactRecords(lists.length + 1);
    const at = this.recordsEnd;
    this.records[at] = lists.length;
    for (let i = 0; i < lists.length; i++) this.records[at + 1 + i] = lists[i]!;
    this.recordsEnd += lists.length + 1;
    this.entryRecord[no] = at;
  }

  /**
   * Removes every posting of entry `no` (its committed or open units). The number comes back
   * through `onRecycle` once no list holds it any more (at once when it had no postings).
   */
  removeEntry(no: number): void {
    this.catchUp();
    let lists: ArrayLike<number>;
    if (this.openEntry === no) {
      lists = this.openLists;
      this.openEntry = -1;
      this.openLists = [];
    } else {
      const at = no < this.entryRecord.length ? this.entryRecord[no]! : -1;
      lists = at < 0 ? [] : this.records.subarray(at + 1, at + 1 + this.records[at]!);
      if (at >= 0) {
        this.recordsGarbage += lists.length + 1;
        this.entryRecord[no] = -1;
      }
    }
    this.deadLeft = grown(this.deadLeft, no + 1);
    this.deadLeft[no] = lists.length;
    if (lists.length === 0) {
      this.onRecycle(no);
      return;
    }
    // Copied: the records' room may be reused before the loop ends.
    const touched = Int32Array.from(lists);
    // A list may hold several of the entry's units: count them all before compacting any.
    for (let i = 0; i < touched.length; i++) this.listDead[touched[i]!]!++;
    for (let i = 0; i < touched.length; i++) {
      const l = touched[i]!;
      if (this.listDead[l]! === 0 || !this.compactable(l)) continue;
      if (this.frozen === 0) {
        this.compactList(l);
      } else {
        this.deferred.push(l);
        if (this.listDead[l] === this.listLen[l]) this.deadTerms.push(this.listTerm[l]!);
      }
    }
  }

  /**
   * Whether list `l`, which has dead postings, is compacted now: short lists at once; long ones
   * when an eighth is dead (a posting is read at most 8 times per removal: the cost stays per
   * entry, whatever the corpus).
   */
  private compactable(l: number): boolean {
    const len = this.listLen[l]!;
    return len <= SHORT_LIST || this.listDead[l]! * 8 >= len;
  }

  /** Compacts the lists whose compaction waited for a saved state to be written (when none is being written now). */
  private catchUp(): void {
    if (this.frozen > 0 || this.deferred.length === 0) return;
    const lists = this.deferred;
    this.deferred = [];
    // A list is compacted once (its dead count is 0 after), and a list forgotten meanwhile is free (-1).
    for (const l of lists) if (this.listTerm[l]! >= 0 && this.listDead[l]! > 0) this.compactList(l);
  }

  /** Units that have `term` (dead postings not counted). */
  count(term: string): number {
    const t = this.termIds.get(term);
    if (t === undefined) return 0;
    let n = 0;
    for (let l = this.termFirst[t]!; l >= 0; l = this.listNext[l]!) n += this.listLen[l]! - this.listDead[l]!;
    return n;
  }

  /** The slot lists of `term` (empty when unknown). */
  lookup(term: string): SlotLists {
    const t = this.termIds.get(term);
    if (t === undefined) return EMPTY;
    const out: (Int32Array | undefined)[] = [];
    for (let l = this.termFirst[t]!; l >= 0; l = this.listNext[l]!) {
      const len = this.listLen[l]!;
      if (len === 0) continue;
      const off = this.listOff[l]!;
      out[this.listSlot[l]!] = this.arena.subarray(off, off + len);
    }
    return out;
  }

  /** Terms known (each has a posting, live or dead). */
  get termCount(): number {
    return this.termIds.size;
  }

  /** Compacts every list with dead postings (freeing every held-back number and forgetting the terms left without any), then the arena if much of it is garbage. */
  cleanup(): void {
    if (this.frozen > 0) return;
    this.deferred = [];
    for (let l = 0; l < this.listCount; l++) if (this.listDead[l]! > 0 && this.listTerm[l]! >= 0) this.compactList(l);
    if (this.arenaGarbage * 3 > this.arenaEnd) this.compactArena();
  }

  private listOf(term: string, slot: number): number {
    let t = this.termIds.get(term);
    if (t === undefined) {
      t = this.freeTerms.pop() ?? this.termNames.length;
      this.termIds.set(term, t);
      this.termNames[t] = term;
      this.termFirst = grown(this.termFirst, t + 1, -1);
    }
    let last = -1;
    for (let l = this.termFirst[t]!; l >= 0; l = this.listNext[l]!) {
      if (this.listSlot[l] === slot) return l;
      last = l;
    }
    let l = this.freeList;
    if (l >= 0) {
      this.freeList = this.listNext[l]!;
    } else {
      l = this.listCount++;
      if (l >= this.listOff.length) {
        const n = l + 1;
        this.listSlot = grown(this.listSlot, n);
        this.listNext = grown(this.listNext, n);
        this.listOff = grown(this.listOff, n);
        this.listLen = grown(this.listLen, n);
        this.listCap = grown(this.listCap, n);
        this.listDead = grown(this.listDead, n);
        this.listTerm = grown(this.listTerm, n);
      }
    }
    this.listTerm[l] = t;
    this.listSlot[l] = slot;
    this.listNext[l] = -1;
    this.listOff[l] = 0;
    this.listLen[l] = 0;
    this.listCap[l] = 0;
    this.listDead[l] = 0;
    if (last < 0) this.termFirst[t] = l;
    else this.listNext[last] = l;
    return l;
  }

  private append(l: number, uid: number): void {
    const len = this.listLen[l]!;
    if (len === this.listCap[l]!) this.relocate(l, len < 4 ? 4 : len < 1024 ? len * 2 : len + (len >>> 1));
    this.arena[this.listOff[l]! + len] = uid;
    this.listLen[l] = len + 1;
  }

  /** Gives list `l` room for `cap` postings: in place at the arena's end, or moved there. */
  private relocate(l: number, cap: number): void {
    const off = this.listOff[l]!;
    const oldCap = this.listCap[l]!;
    if (off + oldCap === this.arenaEnd && oldCap > 0) {
      this.reserve(cap - oldCap);
      this.arenaEnd += cap - oldCap;
      this.listCap[l] = cap;
      return;
    }
    if (this.arenaGarbage + oldCap > 65_536 && (this.arenaGarbage + oldCap) * 3 > this.arenaEnd) {
      // Compacting moves every list; `l` gets its new room there.
      this.compactArena(l, cap);
      return;
    }
    this.reserve(cap);
    const at = this.arenaEnd;
    this.arena.copyWithin(at, off, off + this.listLen[l]!);
    this.arenaEnd += cap;
    this.arenaGarbage += oldCap;
    this.listOff[l] = at;
    this.listCap[l] = cap;
  }

  private reserve(extra: number): void {
    const need = this.arenaEnd + extra;
    if (need <= this.arena.length) return;
    const out = new Int32Array(Math.max(need, Math.ceil(this.arena.length * 1.5)));
    out.set(this.arena.subarray(0, this.arenaEnd));
    this.arena = out;
  }

  /** Rewrites the arena with every list packed (room for a quarter more); list `grow` gets `growCap`. */
  private compactArena(grow = -1, growCap = 0): void {
    let total = 0;
    const caps = new Int32Array(this.listCount);
    for (let l = 0; l < this.listCount; l++) {
      const len = this.listLen[l]!;
      const cap = l === grow ? growCap : len === 0 ? 0 : len + (len >>> 2) + 2;
      caps[l] = cap;
      total += cap;
    }
    const out = new Int32Array(Math.max(1 << 16, total + (total >>> 3)));
    let at = 0;
    for (let l = 0; l < this.listCount; l++) {
      const off = this.listOff[l]!;
      out.set(this.arena.subarray(off, off + this.listLen[l]!), at);
      this.listOff[l] = at;
      this.listCap[l] = caps[l]!;
      at += caps[l]!;
    }
    this.arena = out;
    this.arenaEnd = at;
    this.arenaGarbage = 0;
  }

  /** Drops the dead postings of list `l`, keeping the order of the others. */
  private compactList(l: number): void {
    const arena = this.arena;
    const off = this.listOff[l]!;
    const end = off + this.listLen[l]!;
    const shift = this.ordBits;
    const deadLeft = this.deadLeft;
    let w = off;
    for (let r = off; r < end; r++) {
      const uid = arena[r]!;
      const no = uid >>> shift;
      // Dead postings keep their number from reuse, so a number with some left is a removed entry.
      if (deadLeft[no]! > 0) {
        if (--deadLeft[no]! === 0) this.onRecycle(no);
        continue;
      }
      arena[w++] = uid;
    }
    this.listLen[l] = w - off;
    this.listDead[l] = 0;
    if (w === off) this.emptied.push(this.listTerm[l]!);
  }

  /**
   * Frees the lists that compactions left empty, and forgets the terms left without lists (see
   * the top). Call when a write is done, before the next search: until then a forgotten word
   * is still in the caller's vocabulary.
   */
  forgetEmptied(): void {
    if (this.openEntry >= 0) return;
    if (this.deadTerms.length > 0) {
      const dead = this.deadTerms;
      this.deadTerms = [];
      for (const t of dead) {
        const term = this.termNames[t];
        if (term !== undefined && this.count(term) === 0) this.onForget(term);
      }
    }
    if (this.emptied.length === 0) return;
    const terms = this.emptied;
    this.emptied = [];
    for (const t of terms) if (this.termNames[t] !== undefined) this.prune(t);
    // The freed lists' room, given back once it is a third of the arena (as when a list moves:
    // the pass is paid for by the garbage it drops).
    if (this.arenaGarbage > 65_536 && this.arenaGarbage * 3 > this.arenaEnd) this.compactArena();
  }

  /** Frees term `t`'s empty lists; without lists left, forgets it: its id becomes free. */
  private prune(t: number): void {
    let prev = -1;
    for (let l = this.termFirst[t]!; l >= 0; ) {
      const next = this.listNext[l]!;
      if (this.listLen[l] === 0) {
        if (prev < 0) this.termFirst[t] = next;
        else this.listNext[prev] = next;
        this.freeListId(l);
      } else {
        prev = l;
      }
      l = next;
    }
    if (this.termFirst[t]! >= 0) return;
    const term = this.termNames[t]!;
    this.termNames[t] = undefined;
    this.termIds.delete(term);
    this.freeTerms.push(t);
    this.onForget(term);
  }

  /** Puts empty list `l` on the free chain; its room becomes garbage. */
  private freeListId(l: number): void {
    this.arenaGarbage += this.listCap[l]!;
    this.listOff[l] = 0;
    this.listCap[l] = 0;
    this.listDead[l] = 0;
    this.listTerm[l] = -1;
    this.listNext[l] = this.freeList;
    this.freeList = l;
  }

  /** Rewrites the per-entry records without the removed ones' room (ensuring `extra` more). */
  private compactRecords(extra: number): void {
    const live = this.recordsEnd - this.recordsGarbage;
    const out = new Int32Array(Math.max(1 << 16, Math.ceil((live + extra) * 1.5)));
    let at = 0;
    for (let no = 0; no < this.entryRecord.length; no++) {
      const off = this.entryRecord[no]!;
      if (off < 0) continue;
      const n = this.records[off]! + 1;
      out.set(this.records.subarray(off, off + n), at);
      this.entryRecord[no] = at;
      at += n;
    }
    this.records = out;
    this.recordsEnd = at;
    this.recordsGarbage = 0;
  }
}
