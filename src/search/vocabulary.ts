/**
 * Every term the index has seen, and what query-time matching needs to know about terms without
 * touching postings:
 *
 * - prefix expansion ("transl" → translate, translation, ...), through a sorted array and binary
 *   search, instead of filing every prefix of every term in the posting lists (which costs
 *   several times the memory);
 * - word forms: for each language, stem → the terms of that language's entries with that stem
 *   ("invoic" → invoice, invoices, invoicing). A term is stemmed once per language it is seen
 *   in, so indexing pays per distinct term, not per occurrence, and postings stay one per term:
 *   a stemmed query word is answered by looking up the terms that share its stem, restricted to
 *   entries of that language;
 * - typos: terms within a small edit distance of a query word (`similar`), by a walk over the
 *   sorted array that shares the work of common prefixes (a trie walk without a trie).
 *
 * A term is removed when its last posting goes (./term-index.ts says so), from the terms and
 * stems at once. New terms wait in a pending set, and removed ones in a set of their own, until
 * the next expansion merges both into the sorted array: so a write costs what its terms cost,
 * and an expansion or typo walk sees only terms that have postings, as in an index built anew
 * (a removed term kept in the array took one of a prefix's or a typo's few places from a live
 * one).
 */
import { part, type IndexState } from './index-state.js';
import { LANGUAGE_COUNT, stem } from './languages.js';

/** A term sharing a word's stem, and the language whose stemmer says so. */
export interface WordForm {
  readonly term: string;
  readonly lang: number;
}

/** A term near a word, and its distance. */
export interface SimilarTerm {
  readonly term: string;
  readonly distance: number;
}

export class Vocabulary {
  /** term → bit set of the languages it has been seen in. */
  private readonly terms = new Map<string, number>();
  /** Per language: stem → term, or the terms, with that stem. */
  private readonly stems: Map<string, string | string[]>[] = Array.from({ length: LANGUAGE_COUNT }, () => new Map());
  private sorted: string[] = [];
  /** Terms not yet in `sorted`. */
  private pending = new Set<string>();
  /** Terms still in `sorted` that are no longer terms. */
  private removed = new Set<string>();

  save(state: IndexState): void {
    state.set('vocabulary.terms', new Map(this.terms));
    state.set('vocabulary.stems', this.stems.map((m) => new Map([...m].map(([s, t]) => [s, typeof t === 'string' ? t : [...t]]))));
    state.set('vocabulary.sorted', this.removed.size === 0 ? [...this.sorted] : this.sorted.filter((t) => !this.removed.has(t)));
    state.set('vocabulary.pending', [...this.pending]);
  }

  load(state: IndexState): void {
    for (const [t, mask] of part<Map<string, number>>(state, 'vocabulary.terms')) this.terms.set(t, mask);
    part<Map<string, string | string[]>[]>(state, 'vocabulary.stems').forEach((m, lang) => {
      for (const [s, t] of m) this.stems[lang]?.set(s, t);
    });
    this.sorted = part(state, 'vocabulary.sorted');
    this.pending = new Set(part<string[]>(state, 'vocabulary.pending'));
    this.removed.clear();
  }

  /** Records `term`, seen in an entry of language `lang`. */
  add(term: string, lang: number): void {
    const mask = this.terms.get(term);
    const bit = 1 << lang;
    if (mask === undefined) {
      this.terms.set(term, bit);
      // Removed and back before an expansion merged the removal: it is in `sorted` still.
      if (!this.removed.delete(term)) this.pending.add(term);
    } else if ((mask & bit) === 0) {
      this.terms.set(term, mask | bit);
    } else {
      return;
    }
    const byStem = this.stems[lang]!;
    const s = stem(term, lang);
    const known = byStem.get(s);
    if (known === undefined) byStem.set(s, term);
    else if (typeof known === 'string') byStem.set(s, [known, term]);
    else known.push(term);
  }

  has(term: string): boolean {
    return this.terms.has(term);
  }

  get size(): number {
    return this.terms.size;
  }

  /** Terms of language `lang` whose stem is `stemmed` (the word's own form included). */
  formsOf(stemmed: string, lang: number): readonly string[] {
    const known = this.stems[lang]!.get(stemmed);
    return known === undefined ? [] : typeof known === 'string' ? [known] : known;
  }

  /**
   * Up to `max` terms that start with `prefix` (longer than it), shortest first, then in
   * alphabetical order; at most `scanLimit` terms of the range are looked at.
   */
  expand(prefix: string, max: number, scanLimit = 256): string[] {
    if (max <= 0 || !prefix) return [];
    this.merge();
    const list = this.sorted;
    const found: string[] = [];
    for (let i = lowerBound(list, prefix); i < list.length && found.length < scanLimit; i++) {
      const t = list[i]!;
      if (!t.startsWith(prefix)) break;
      if (t.length > prefix.length) found.push(t);
    }
    if (found.length > max) {
      found.sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
      found.length = max;
    }
    return found;
  }

  /**
   * Terms other than `word` within `maxDistance` edits of it (insertions, deletions,
   * substitutions and swaps of two neighbouring letters: optimal string alignment distance) that
   * start with the same letter (as most typing mistakes leave it, and it divides the work by the
   * alphabet), nearest first, at most `max`; the walk stops after `visitLimit` trie nodes.
   */
  similar(word: string, maxDistance: number, max: number, visitLimit = 5_000): SimilarTerm[] {
    if (max <= 0 || maxDistance <= 0 || word.length < 2) return [];
    this.merge();
    const list = this.sorted;
    const first = word[0]!;
    const lo = lowerBound(list, first);
    const hi = lowerBound(list, String.fromCharCode(first.charCodeAt(0) + 1));
    const found: SimilarTerm[] = [];
    new EditWalk(word, maxDistance, list, visitLimit, found).run(lo, hi);
    found.sort((a, b) => a.distance - b.distance || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0));
    return found.length > max ? found.slice(0, max) : found;
  }

  /** Forgets `term` (no entry has it any more), in every language it was seen in. */
  remove(term: string): void {
    const mask = this.terms.get(term);
    if (mask === undefined) return;
    this.terms.delete(term);
    for (let lang = 0; lang < LANGUAGE_COUNT; lang++) if (mask & (1 << lang)) this.dropForm(term, lang);
    if (!this.pending.delete(term)) this.removed.add(term);
  }

  private dropForm(term: string, lang: number): void {
    const byStem = this.stems[lang]!;
    const s = stem(term, lang);
    const known = byStem.get(s);
    if (known === term) byStem.delete(s);
    else if (Array.isArray(known)) {
      const rest = known.filter((t) => t !== term);
      byStem.set(s, rest.length === 1 ? rest[0]! : rest);
    }
  }

  private merge(): void {
    if (this.removed.size > 0) {
      const removed = this.removed;
      this.removed = new Set();
      if (removed.size > 64) {
        this.sorted = this.sorted.filter((t) => !removed.has(t));
      } else {
        for (const t of removed) {
          const at = lowerBound(this.sorted, t);
          if (this.sorted[at] === t) this.sorted.splice(at, 1);
        }
      }
    }
    if (this.pending.size === 0) return;
    const pending = [...this.pending];
    this.pending = new Set();
    if (pending.length > 64) {
      this.sorted = this.sorted.concat(pending).sort();
      return;
    }
    for (const t of pending) this.sorted.splice(lowerBound(this.sorted, t), 0, t);
  }
}

/** First index whose term is >= `key`. */
function lowerBound(list: readonly string[], key: string): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Depth-first walk over the sorted term list as if it were a trie: the terms in [lo, hi) share
 * their first `depth` characters, and one dynamic-programming row per node gives the distance of
 * the word to that prefix. A subtree is skipped once every cell of its row exceeds the bound.
 */
class EditWalk {
  private visits = 0;
  private readonly n: number;
  /** One row per depth, reused (the walk is depth-first). */
  private readonly rows: Int32Array[] = [];

  constructor(
    private readonly word: string,
    private readonly k: number,
    private readonly list: readonly string[],
    private readonly visitLimit: number,
    private readonly found: SimilarTerm[],
  ) {
    this.n = word.length;
  }

  /** Walks the terms [lo, hi), which all start with the word's first character. */
  run(lo: number, hi: number): void {
    if (lo >= hi) return;
    const root = this.row(0);
    for (let j = 0; j <= this.n; j++) root[j] = j;
    const first = this.row(1);
    first[0] = 1;
    for (let j = 1; j <= this.n; j++) first[j] = j - 1;
    this.node(lo, hi, 1, first, root, this.word.charCodeAt(0));
  }

  private row(depth: number): Int32Array {
    let r = this.rows[depth];
    if (!r) {
      r = new Int32Array(this.n + 1);
      this.rows[depth] = r;
    }
    return r;
  }

  /**
   * Terms [lo, hi) share the prefix of length `depth`, whose row is `row`; `prev` is the
   * parent's row and `prevChar` the prefix's last character (for swaps).
   */
  private node(lo: number, hi: number, depth: number, row: Int32Array, prev: Int32Array | undefined, prevChar: number): void {
    const list = this.list;
    const n = this.n;
    let i = lo;
    // A term equal to the prefix sorts first in its range.
    if (i < hi && list[i]!.length === depth) {
      if (depth > 0 && row[n]! <= this.k && list[i] !== this.word) this.found.push({ term: list[i]!, distance: row[n]! });
      i++;
    }
    while (i < hi) {
      if (++this.visits > this.visitLimit) return;
      const c = list[i]!.charCodeAt(depth);
      // End of the run of terms with character c at `depth`.
      let a = i + 1;
      let b = hi;
      while (a < b) {
        const mid = (a + b) >>> 1;
        if (list[mid]!.charCodeAt(depth) === c) a = mid + 1;
        else b = mid;
      }
      const end = a;
      const next = this.row(depth + 1);
      next[0] = depth + 1;
      let best = next[0];
      for (let j = 1; j <= n; j++) {
        const wc = this.word.charCodeAt(j - 1);
        const cost = wc === c ? 0 : 1;
        let v = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + cost);
        if (prev && j > 1 && wc === prevChar && this.word.charCodeAt(j - 2) === c) v = Math.min(v, prev[j - 2]! + 1);
        next[j] = v;
        if (v < best) best = v;
      }
      if (best <= this.k) this.node(i, end, depth + 1, next, row, c);
      i = end;
    }
  }
}
