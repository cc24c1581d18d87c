/**
 * Words in order for phrase queries ("pull request"): per unit, the words of each of its texts
 * (a name, a description, each tag and example...) in the order written, as 16-bit hashes in one
 * pooled Uint16Array (a segment [count, hash...] per unit, found through the tables' `unitWords`
 * offsets). A phrase matches a unit that has its rarest word (from the postings) and, in one
 * text of a field of that word's, its words next to each other in its order (PhraseWords.has).
 *
 * A word's hash is salted by the field of its text and by the text's parity (its place among
 * the unit's texts, odd or even): texts are stored back to back with nothing between them, and
 * two texts in a row never share a salt, so a phrase is not read across the end of one text
 * and the start of the next (tags "opens pull" then "request review" do not say "pull request
 * review"). The same word under two salts never has the same hash (the salts differ in their 16
 * bits, and the words of one phrase are checked under one salt).
 *
 * Exact up to the hashes: a unit that has the phrase's rarest word but not the phrase matches
 * only when the word next to one of that word's occurrences has the hash of the phrase's next
 * word by chance (1 in 65,536 per occurrence; any other place needs two such chances). Word
 * pairs kept as a set of 16-bit hashes, before, answered a pair the unit lacked with a
 * probability of its pairs / 65,536 (6% for a tool description of 4,000 pairs), and "pull
 * request review" in any text having "pull request" and "request review" apart. The exact words
 * are not kept: a 1,000,000-entry index has no room for them (issue 22: 2 GiB), nor for ids of
 * them (4 bytes a word), and a search cannot read the documents from storage to confirm its
 * candidates (it answers synchronously, standing searches too; storage may be PostgreSQL).
 * These hashes cost 2 bytes a word of a text of two words or more: 168 B an entry of
 * bench/lib's generated entries, against 124 B for the pair sets (+42 MiB at 1,000,000).
 *
 * Stop words are dropped before the words are kept, on both sides, so "translate this invoice"
 * and "translate invoice" are the same phrase. A phrase is matched, and weighed, in the field
 * that says it (when pairs were kept per unit, "pull request" in a skill's description, with
 * "request", its rarer word, in its name, was weighed as a name, above a skill named "Pull
 * request review"). A tag keeps its every word (`text to speech`), and under TAG_PROSE the
 * words without its stop words and letters (`text speech`): prose phrases read both ("text to
 * speech" finds the tag, as it finds the words in a description), `tags:` only the first
 * (`tags:text-speech` is not the tag "text-to-speech").
 *
 * A unit's name is its first text, so its words start the segment, and the segment's first
 * number holds, beside the count of its words, how long the name is (NAME_SHIFT: the caller's
 * count, ./search-index.ts nameLength): PhraseWords.nameIs tells a skill or tool named exactly
 * "get_weather" from one named "get_weather_forecast", at no cost in memory (a term per skill
 * and tool name cost ~130 bytes an entry: ./search-index.ts nameTerm). A name of one word is
 * not kept (it is no phrase), only counted, and a unit with no segment at all has a name of one
 * word at most.
 *
 * Segments are appended; removing a unit leaves garbage, compacted when more than half of the
 * pool is garbage (as ./attributes.ts does for its pool).
 */
import { part, type IndexState } from './index-state.js';
import type { Tables } from './tables.js';

/** Words kept per unit (a longer text keeps its first ones; the texts after it none). */
export const MAX_PHRASE_UNIT_WORDS = 4_000;
/**
 * A segment's first number: the words kept (below 4,096: MAX_PHRASE_UNIT_WORDS) in its low 12
 * bits, the name's words (0: none, or more than MAX_NAME_WORDS) from NAME_SHIFT.
 */
const COUNT_MASK = 0xfff;
const NAME_SHIFT = 12;
/** The longest name whose words a segment counts. */
export const MAX_NAME_WORDS = 15;

/** 32-bit FNV-1a of a term. */
export function termHash(term: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < term.length; i++) {
    h ^= term.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Not a field: the kind of a tag's words without its stop words and letters (see above). */
export const TAG_PROSE = 64;

/** Per field bit (./fields.ts) and TAG_PROSE, by bit index, and parity: a 16-bit salt, distinct for each. */
const SALTS: readonly number[] = Array.from({ length: 14 }, (_, i) => (Math.imul(i + 1, 0x9e3779b1) >>> 16) & 0xffff);

/** The salt of a text in field `field` (one FIELD_* bit, or TAG_PROSE) at parity `parity` (0 or 1). */
export function phraseSalt(field: number, parity: number): number {
  return SALTS[((31 - Math.clz32(field)) << 1) | parity]!;
}

/** The 16-bit hash kept for a word of termHash `h` in a text of salt `salt` (phraseSalt). */
export function phraseWord(h: number, salt: number): number {
  const x = Math.imul(h, 0x85ebca6b);
  return ((x ^ (x >>> 16)) & 0xffff) ^ salt;
}

export class PhraseWords {
  pool: Uint16Array = new Uint16Array(4096);
  private end = 0;
  private garbage = 0;

  constructor(private readonly tables: Tables) {}

  /** Bytes held by the pool (for memory reports). */
  get bytes(): number {
    return this.pool.byteLength;
  }

  save(state: IndexState): void {
    // Shared, not copied: appends go past `end`, a compaction writes a new pool.
    state.set('phrases.pool', this.pool.subarray(0, this.end));
    state.set('phrases.garbage', this.garbage);
  }

  load(state: IndexState): void {
    this.pool = part(state, 'phrases.pool');
    this.end = this.pool.length;
    this.garbage = part(state, 'phrases.garbage');
  }

  /**
   * Stores the words of unit slot `slot`: phraseWord hashes, its texts' back to back (at most
   * MAX_PHRASE_UNIT_WORDS), beginning with its name's when it has two or more, the name being
   * `nameWords` long.
   */
  set(slot: number, words: readonly number[], nameWords: number): void {
    const n = Math.min(words.length, MAX_PHRASE_UNIT_WORDS);
    if (n === 0) {
      this.tables.unitWords[slot] = -1;
      return;
    }
    if (this.end + n + 1 > this.pool.length) {
      // An eighth more, not twice: doubling left up to half the pool unused (at 1,000,000
      // entries up to some 160 MB), and a pool loaded from a snapshot, exactly its size, doubled
      // at the first upsert. A growth copies the pool once, as doubling did; over a build,
      // about nine times the final pool are copied instead of twice (well under a second at 1M).
      const out = new Uint16Array(Math.max(this.pool.length + (this.pool.length >>> 3), this.end + n + 1 + 4096));
      out.set(this.pool.subarray(0, this.end));
      this.pool = out;
    }
    const at = this.end;
    const pool = this.pool;
    pool[at] = n | ((nameWords <= MAX_NAME_WORDS ? nameWords : 0) << NAME_SHIFT);
    for (let i = 0; i < n; i++) pool[at + 1 + i] = words[i]!;
    this.end += n + 1;
    this.tables.unitWords[slot] = at;
  }

  /**
   * Whether unit slot `slot` has the words `even` or `odd` (phraseWord hashes of one phrase, salted
   * for a text of each parity) next to each other, in this order: one pass over its words.
   */
  has(slot: number, even: readonly number[], odd: readonly number[]): boolean {
    const at = this.tables.unitWords[slot]!;
    if (at < 0) return false;
    const p = this.pool;
    const n = even.length;
    const first0 = even[0]!;
    const first1 = odd[0]!;
    // The last place a run of n words can start.
    const last = at + (p[at]! & COUNT_MASK) - n + 1;
    for (let i = at + 1; i <= last; i++) {
      const h = p[i]!;
      if (h !== first0 && h !== first1) continue;
      const run = h === first0 ? even : odd;
      let k = 1;
      while (k < n && p[i + k] === run[k]) k++;
      if (k === n) return true;
    }
    return false;
  }

  /**
   * Whether the name of unit slot `slot` is exactly the words `run` (phraseWord hashes salted for
   * a name, parity 0: the first text), no more, no fewer: `length` words long as the name's count
   * says (the caller's count, which may add words no phrase keeps). A run of one word is only
   * compared by its length: the caller found the unit by that word's postings in the name field.
   */
  nameIs(slot: number, run: readonly number[], length: number): boolean {
    const at = this.tables.unitWords[slot]!;
    if (at < 0) return length === 1;
    const p = this.pool;
    if (p[at]! >>> NAME_SHIFT !== length) return false;
    if (run.length > 1) for (let k = 0; k < run.length; k++) if (p[at + 1 + k] !== run[k]) return false;
    return true;
  }

  clear(slot: number): void {
    const at = this.tables.unitWords[slot]!;
    if (at >= 0) this.garbage += (this.pool[at]! & COUNT_MASK) + 1;
    this.tables.unitWords[slot] = -1;
  }

  /** Compacts the pool when mostly garbage; `liveSlots` lists every unit slot in use. */
  maybeCompact(liveSlots: () => Iterable<number>): void {
    if (this.garbage < 65_536 || this.garbage * 2 < this.end) return;
    const out = new Uint16Array(Math.max(4096, (this.end - this.garbage) * 2));
    let at = 0;
    const offsets = this.tables.unitWords;
    for (const slot of liveSlots()) {
      const off = offsets[slot]!;
      if (off < 0) continue;
      const len = (this.pool[off]! & COUNT_MASK) + 1;
      out.set(this.pool.subarray(off, off + len), at);
      offsets[slot] = at;
      at += len;
    }
    this.pool = out;
    this.end = at;
    this.garbage = 0;
  }
}
