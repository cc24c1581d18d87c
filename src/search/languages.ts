/**
 * The languages the index knows word forms for, how an entry's language is found, and their
 * stemmers.
 *
 * Stemmers: Snowball's German, Spanish, French, Italian, Indonesian and Portuguese, and Porter's
 * English, from @orama/stemmers. They run on folded terms (./text-encoder.ts), at indexing and at
 * query time alike, so both sides agree even when a query is typed without accents.
 *
 * Detection: an entry's language is that of its whole text (name, description, skills or tools
 * together), never guessed word by word: the language whose stop words (the Snowball lists from
 * @orama/stopwords) occur most often in it, a word shared by several lists counting for each in
 * part. Text with too few stop words (a bare name, "Weather Assistant") is English, the language
 * most cards are written in. A caller may instead declare the language (IndexedEntry.language).
 * Measured: a few microseconds per entry; the trigram detectors on npm (franc, eld, tinyld) took
 * 150–640 µs per card here, which would add 15–60 s to indexing 100,000 entries.
 */
import { stemmer as stemDe } from '@orama/stemmers/german';
import { stemmer as stemEn } from '@orama/stemmers/english';
import { stemmer as stemEs } from '@orama/stemmers/spanish';
import { stemmer as stemFr } from '@orama/stemmers/french';
import { stemmer as stemId } from '@orama/stemmers/indonesian';
import { stemmer as stemIt } from '@orama/stemmers/italian';
import { stemmer as stemPt } from '@orama/stemmers/portuguese';
import { stopwords as stopDe } from '@orama/stopwords/german';
import { stopwords as stopEn } from '@orama/stopwords/english';
import { stopwords as stopEs } from '@orama/stopwords/spanish';
import { stopwords as stopFr } from '@orama/stopwords/french';
import { stopwords as stopId } from '@orama/stopwords/indonesian';
import { stopwords as stopIt } from '@orama/stopwords/italian';
import { stopwords as stopPt } from '@orama/stopwords/portuguese';
import { fold } from './text-encoder.js';

/** ISO 639-1 codes, by language id (the id is what the index stores: 3 bits). */
export const LANGUAGES = ['en', 'de', 'es', 'fr', 'it', 'id', 'pt'] as const;
export type Language = (typeof LANGUAGES)[number];
export const ENGLISH = 0;
export const LANGUAGE_COUNT = LANGUAGES.length;

const STEMMERS: readonly ((word: string) => string)[] = [stemEn, stemDe, stemEs, stemFr, stemIt, stemId, stemPt];
const STOP_LISTS: readonly (readonly string[])[] = [stopEn, stopDe, stopEs, stopFr, stopIt, stopId, stopPt];

/** Words shorter than this are not stemmed (stemmers leave them alone or mangle them). */
const MIN_STEM_LENGTH = 3;

/** The language id of an ISO 639-1 code or a BCP 47 tag (`pt-BR`), or undefined. */
export function languageId(tag: string | undefined): number | undefined {
  if (!tag) return undefined;
  const i = (LANGUAGES as readonly string[]).indexOf(tag.slice(0, 2).toLowerCase());
  return i >= 0 && (tag.length === 2 || tag[2] === '-' || tag[2] === '_') ? i : undefined;
}

/** The stem of a folded term in language `lang`. */
export function stem(term: string, lang: number): string {
  if (term.length < MIN_STEM_LENGTH) return term;
  const s = STEMMERS[lang]!(term);
  // The stemmers keep what they do not recognise; a folded term stays ASCII-folded.
  return s.length > 0 ? fold(s) : term;
}

/** Stop word → per-language weights (a word in k lists weighs 1/k in each). */
const STOP_WEIGHTS: ReadonlyMap<string, Float64Array> = (() => {
  const langsOf = new Map<string, number[]>();
  STOP_LISTS.forEach((list, lang) => {
    for (const w of new Set(list.map((s) => fold(s)))) {
      if (w.length < 2) continue;
      const l = langsOf.get(w);
      if (l) l.push(lang);
      else langsOf.set(w, [lang]);
    }
  });
  const out = new Map<string, Float64Array>();
  for (const [w, langs] of langsOf) {
    const weights = new Float64Array(LANGUAGE_COUNT);
    for (const l of langs) weights[l] = 1 / langs.length;
    out.set(w, weights);
  }
  return out;
})();

/** Least stop-word evidence for a language other than English to be chosen: one word of its own. */
const MIN_EVIDENCE = 1;

/**
 * Detects the language of a text from its words (folded, as tokenize() gives them, but with
 * the stop words kept: see wordsForDetection).
 */
export function detectLanguage(words: Iterable<string>): number {
  const score = new Float64Array(LANGUAGE_COUNT);
  for (const w of words) {
    const weights = STOP_WEIGHTS.get(w);
    if (!weights) continue;
    for (let l = 0; l < LANGUAGE_COUNT; l++) score[l]! += weights[l]!;
  }
  let best = ENGLISH;
  for (let l = 1; l < LANGUAGE_COUNT; l++) if (score[l]! > score[best]!) best = l;
  return best !== ENGLISH && score[best]! < MIN_EVIDENCE ? ENGLISH : best;
}

const WORDS = /[\p{L}\p{N}]+/gu;
const ASCII = /^[\x00-\x7f]*$/;

/** Folded words of `text`, stop words included, at most `max` (for detectLanguage). */
export function wordsForDetection(text: string, out: string[], max: number): void {
  if (out.length >= max || !text) return;
  if (ASCII.test(text)) return asciiWords(text.toLowerCase(), out, max);
  for (const m of fold(text).matchAll(WORDS)) {
    out.push(m[0]);
    if (out.length >= max) return;
  }
}

/**
 * The same words for ASCII text (most cards), in one scan: folding ASCII is lower-casing
 * (nothing to decompose), and its letters and digits are [a-z0-9]. Indexing an entry detects
 * its language first, and the Unicode path (normalising, a match array per word) was a fifth
 * of the index update's time.
 */
function asciiWords(lower: string, out: string[], max: number): void {
  let start = -1;
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 32;
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      out.push(lower.slice(start, i));
      if (out.length >= max) return;
      start = -1;
    }
  }
}
