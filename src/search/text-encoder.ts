/**
 * Turns text into search terms, the same way for indexed fields and for queries:
 *
 * - identifiers are split: `get_weather`, `getWeather`, `get-weather`, `GetWeather`,
 *   `HTTPServer` → `get weather`, `http server`; but a name whose capitals follow a single
 *   lower-case letter or only digits is one word, as people type it: `iPhone`, `iOS`, `eBay`,
 *   `jQuery`, `3D`, `2FA` → `iphone`, `ios`, `ebay`, `jquery`, `3d`, `2fa` (they were `phone`,
 *   `os`, `bay`, `query`, `3`, `fa`: "ios" found no "iOS", "3d" no "3D", and "query" every jQuery);
 * - case and accents are folded (NFKD, combining marks dropped, lower case), plus the letters
 *   NFKD does not decompose: `ß` → `ss`, `æ` → `ae`, `ø` → `o`, `ł` → `l`, ... so "traduccion"
 *   finds "Traducción", "citta" finds "città", "uberweisung" finds "Überweisung", "strasse"
 *   finds "Straße"; Greek's final sigma is sigma (`ς` → `σ`), and Arabic letters written either
 *   way are one (`ى` `ي`, `ة` `ه`; Persian `ی` `ک` are Arabic `ي` `ك`); the digits of every
 *   script are ASCII digits (`٢٠٢٤`, `۲۰۲۴`, `२०२४`, `๒๐๒๔` → `2024`), as full-width ones are (NFKD);
 * - words are runs of letters and digits with the marks that belong to them (the vowel signs of
 *   Devanagari, Tamil, Thai...: "हिन्दी" is one word, not three pieces); Han, Hiragana and
 *   Katakana characters are words of their own (those scripts do not separate words with
 *   spaces), their voicing marks kept (ジ is not シ); Thai, Lao, Khmer and Myanmar text, also
 *   written without spaces, is split into words by ICU's dictionaries (Intl.Segmenter):
 *   "บริการพยากรณ์อากาศ" → `บริการ พยากรณ์ อากาศ`;
 * - emoji are words of their own ("🌤 Weather" → `🌤 weather`): a pictograph, its skin tone and
 *   presentation selector dropped (👍🏽 → 👍), a ZWJ sequence as its pictographs, a flag as its
 *   pair of regional indicators. The pictographs used as punctuation (©, ®, ™, arrows, bullets,
 *   check and question marks) are separators like other symbols;
 * - marks that only guide pronunciation or rendering are folded away with the accents: Arabic
 *   harakat and tatweel, Hebrew points, variation selectors, soft hyphens, zero-width joiners;
 *   ™, ℠ and ℡ are separators (NFKD would spell them out: "Weather™" → `weathertm`);
 * - single ASCII letters and a short list of stop words (English, German, Spanish, Italian,
 *   Indonesian) are dropped, except from a tag or a query's field-scoped word made only of
 *   them (keepShortAlone); terms are cut at MAX_TERM_LENGTH characters;
 * - but a single letter followed by `++` or `#` and no letter (C++, C#, F#, G++; "C++17" too)
 *   is a word with its symbols: `c++`, `c#`. Those names were no words at all, so "C++" found
 *   nothing and "C# developer" every developer. Elsewhere `+` and `#` separate words, as any
 *   punctuation does ("a+b", "issue#12", "#hashtag").
 * - and a capital letter written as a word of its own, other than A and I (R, C, X, "Plan B"),
 *   is a term, as is "IT" in capitals (IT support, ITSupport): those are names, and "R
 *   language" searched only "language", "IT helpdesk" only "helpdesk". Lower case ("r", "it"),
 *   a letter inside an identifier (getX, XCoordinate) or starting a compound (E-Mail) and "It"
 *   at a sentence's start are dropped as before.
 *
 * The output never contains spaces: a term is one word, whatever the language.
 */

export const MAX_TERM_LENGTH = 40;

/**
 * Diacritics of the Latin, Greek and Cyrillic scripts; Hebrew points, Arabic harakat and tatweel
 * (optional vowel and elongation marks: "محمد" finds "مُحَمَّد"); and what only selects a
 * rendering or is invisible: variation selectors (emoji presentation, ideographic variants), soft
 * hyphens, zero-width (non-)joiners, word joiners, byte order marks.
 */
const COMBINING_MARKS =
  /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u0610-\u061a\u0640\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed\ufe00-\ufe0f\u{e0100}-\u{e01ef}\u00ad\u200c\u200d\u2060\ufeff]/gu;
/**
 * Also Greek's final sigma, `ς` → `σ`: one letter, which lower-casing writes `ς` only at a word's
 * end as it judges it ("ΟΔΟΣ" is `οδος` but "ΟΔΟΣ.GR" `οδοσ`), and which people type either way
 * ("οδοσ" found no "οδός"). And the Arabic letters written either way, as Arabic search engines
 * fold them (Lucene's Arabic and Persian normalisers): alef maksura and yeh at a word's end (ى,
 * ي: "مستشفى", "مستشفي"), teh marbuta and heh (ة, ه: "مدرسة", "مدرسه"), and the Persian yeh and
 * keheh that Persian keyboards type for the Arabic yeh and kaf (ی, ک: "کتاب" found no "كتاب").
 * And every decimal digit (general category Nd) that NFKD leaves (it makes the full-width and
 * mathematical ones ASCII) is its ASCII digit: Arabic-Indic, Persian, Devanagari, Bengali,
 * Thai... ("٢٠٢٤", "۲۰۲۴", "२०२४", "๒๐๒๔" found no "2024", nor "2024" them); digitOf.
 */
const NOT_DECOMPOSED = /[ßæœøłđðþıĸŀςىةیک]|[^\P{Nd}0-9]/gu;
const FOLDS: Readonly<Record<string, string>> = {
  ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i', ĸ: 'k', ŀ: 'l', ς: 'σ',
  ى: 'ي', ة: 'ه', ی: 'ي', ک: 'ك',
};
const DECIMAL_DIGIT = /^\p{Nd}$/u;
const DIGITS = new Map<string, string>();
/**
 * The ASCII digit of a decimal digit (Nd), from the Unicode version Node.js knows. Unicode
 * encodes decimal digits only in runs of ten, zero to nine in order (its stability policy for
 * Numeric_Type=Decimal), and where runs follow each other (the mathematical digits, U+1D7CE-1D7FF,
 * five sets in one run of 50) each starts at a zero: a digit's value is its distance from its
 * run's first code point, modulo 10. Looked up once per digit (at most 50 code points back).
 */
function digitOf(c: string): string {
  let d = DIGITS.get(c);
  if (d === undefined) {
    const cp = c.codePointAt(0)!;
    let first = cp;
    while (first > 0 && DECIMAL_DIGIT.test(String.fromCodePoint(first - 1))) first--;
    DIGITS.set(c, (d = String((cp - first) % 10)));
  }
  return d;
}
/**
 * lower→Upper and digit→Upper boundaries (`getWeather`, `base64Encode`), not after a single
 * lower-case letter or digits alone that start the word (`iPhone`, `2FA` stay one word: the
 * lookbehind asks for a character before the lower-case letter, and a letter before the digits).
 */
const CAMEL = /(?<=[\p{L}\p{N}\p{M}]\p{Ll}|\p{L}\p{M}*\p{N}+)(?=\p{Lu})/gu;
/**
 * A word of one letter, digits and one capital ("A2A", "B2B", "P2P", "W3C"): one word, as
 * letterDigitsLetter reads it in ASCII text; its last capital is lower-cased so CAMEL leaves it.
 */
const LETTER_DIGITS_LETTER = /(?<![\p{L}\p{N}\p{M}])(\p{L}\p{N}+)(\p{Lu})(?![\p{L}\p{N}\p{M}])/gu;
/**
 * Acronym followed by a word (`HTTPServer` → `HTTP Server`); not an acronym's plural, whose `s`
 * ends the word (`APIs`, `PDFs`, `URLsToFetch`: isAcronymPlural).
 */
const ACRONYM = /(\p{Lu})(\p{Lu}(?!s(?![\p{Ll}\p{N}\p{M}]))\p{Ll})/gu;
/**
 * Ideographic scripts: every character is a word, with its marks (a voicing mark, which NFKD
 * separates from its kana). Applied after folding, so half-width katakana (ｼﾞ) is split like
 * full-width (ジ).
 */
const IDEOGRAPHS = /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]\p{M}*)/gu;
/** Kana, CJK ideographs (unified, extension A, compatibility) and, by their high surrogates, extensions B and later. */
const HAS_IDEOGRAPH = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\ud840-\ud88f]/;
/** Thai, Lao, Myanmar and Khmer: scripts without spaces between words, whose words ICU finds by dictionary. */
const HAS_UNSPACED = /[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]/;
const UNSPACED_RUN = /[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]+/g;
let segmenter: Intl.Segmenter | undefined;
/** A run of unspaced text with a space between its words (and around it). */
function spaceWords(run: string): string {
  segmenter ??= new Intl.Segmenter('th', { granularity: 'word' });
  let out = ' ';
  for (const { segment } of segmenter.segment(run)) out += `${segment} `;
  return out;
}
/** Symbols NFKD spells out in letters, which would join the word before them. */
const SPELLED_SYMBOLS = /[\u2120-\u2122]/g;
/**
 * Pictographs used as punctuation: legal marks, double punctuation, arrows, bullets and squares,
 * check and cross marks, question and exclamation marks, plus and minus.
 */
const PUNCTUATION_PICTOGRAPHS =
  '[\\u00a9\\u00ae\\u203c\\u2049\\u2122\\u2139\\u2194-\\u21ff\\u25a0-\\u25ff\\u2611\\u2705\\u2714\\u2716\\u2733\\u2734\\u2747\\u274c\\u274e\\u2753-\\u2757\\u2795-\\u2797\\u27a1\\u27b0\\u27bf\\u2934\\u2935\\u2b05-\\u2b07\\u2b1b\\u2b1c\\u3030\\u303d]';
/**
 * A word: a letter with `++` or `#` (C++, C#); a flag (two regional indicators); a pictograph,
 * unless it is one used as punctuation; or letters and digits with their marks.
 */
const WORDS = new RegExp(
  `[a-z](?:\\+\\+|#)(?!\\p{L})|\\p{RI}{2}|(?!${PUNCTUATION_PICTOGRAPHS})\\p{Extended_Pictographic}|[\\p{L}\\p{N}][\\p{L}\\p{N}\\p{M}]*`,
  'gu',
);
/**
 * The same words in text as written (wordSpans): the letter of C++ in either case, a pictograph
 * with its presentation selector, skin tone or ZWJ sequence, letters with the marks that fold away
 * (accents as combining characters, zero-width joiners, soft hyphens).
 */
const WORD_SPANS = new RegExp(
  `[A-Za-z](?:\\+\\+|#)(?!\\p{L})|\\p{RI}{2}|(?!${PUNCTUATION_PICTOGRAPHS})\\p{Extended_Pictographic}(?:[\\ufe0e\\ufe0f\\u{1f3fb}-\\u{1f3ff}]|\\u200d\\p{Extended_Pictographic})*|[\\p{L}\\p{N}][\\p{L}\\p{N}\\p{M}\\u00ad\\u200c\\u200d\\u2060]*`,
  'gu',
);
const IDEOGRAPH_SPAN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]\p{M}*|[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]+/gu;
const SIMPLE_TERM = /^[a-z0-9]+$/;

/**
 * Written words that are names despite the rules that drop single letters and stop words: a
 * capital letter other than A and I with no letter, digit or mark next to it (not C++ or C#,
 * which are words already, nor the first letter of a compound such as E-Mail or T-Shirt), and
 * "IT" in capitals before no lower-case letter or digit (before a capital that starts a word:
 * ITSupport). Marked in text before case folding (NAME_MARK), as the folded text no longer
 * tells "IT" from "it".
 */
const WRITTEN_NAMES = /(?<![\p{L}\p{N}\p{M}])(?:[B-HJ-Z](?![\p{L}\p{N}\p{M}]|\+\+|#|-\p{L})|IT(?![\p{Ll}\p{N}\p{M}]|\p{Lu}(?!\p{Ll})))/gu;
/**
 * Follows a written name through folding and word matching (a spacing mark, Devanagari visarga:
 * kept by NFKD and lower-casing, matched as part of the word, never after a Latin letter in real
 * text); `push` drops it and keeps the term. A space after it ends the word where ITSupport's
 * capitals would have.
 */
const NAME_MARK = '\u0903';

const STOP_WORDS: ReadonlySet<string> = new Set(
  [
    // English
    'an', 'and', 'are', 'as', 'at', 'be', 'by', 'for', 'from', 'in', 'into', 'is', 'it', 'its', 'of', 'on', 'or',
    'the', 'to', 'with', 'this', 'that', 'via', 'your', 'you', 'our', 'we', 'can', 'will', 'my',
    // German
    'der', 'die', 'das', 'und', 'mit', 'fur', 'von', 'zu', 'den', 'dem', 'ein', 'eine', 'ist', 'im', 'auf', 'beim',
    // Spanish
    'el', 'la', 'los', 'las', 'del', 'en', 'con', 'para', 'por', 'un', 'una', 'es', 'al', 'mi',
    // Italian
    'il', 'lo', 'gli', 'le', 'di', 'per', 'della', 'dei',
    // Indonesian
    'dan', 'yang', 'di', 'ke', 'dari', 'untuk', 'dengan', 'ini', 'itu',
  ],
);

/** Case- and accent-folds a string (no splitting). Used for tags and other exact-match keys too. */
export function fold(text: string): string {
  let s = text.normalize('NFKD').replace(COMBINING_MARKS, '').toLowerCase();
  if (NOT_DECOMPOSED.test(s)) s = s.replace(NOT_DECOMPOSED, (c) => FOLDS[c] ?? digitOf(c));
  return s;
}

export interface TokenizeOptions {
  /** Stop after this many terms (bounds work on hostile input). */
  maxTerms?: number;
  /** Only the first maxChars characters are read. */
  maxChars?: number;
  /**
   * When the text has no other word, its single letters and stop words are its terms: a tag is a
   * label, not prose ("r", "x", "it" are whole tags), and a query's `tags:x` names one. Text
   * with other words drops them as usual ("text-to-speech" is `text speech`), so phrases and
   * what is indexed elsewhere are unchanged. Read where tags are indexed and where a query
   * names a field (./query.ts).
   */
  keepShortAlone?: boolean;
  /**
   * Every word, single letters and stop words too, whatever else the text has: a tag's words as
   * its key compares them (./attributes.ts tagKey), so "text-to-speech" is `text to speech`.
   */
  keepShort?: boolean;
}

/** The terms of `text`, in order, duplicates kept. */
export function tokenize(text: string, options: TokenizeOptions = {}): string[] {
  const maxTerms = options.maxTerms ?? Infinity;
  const s = options.maxChars !== undefined && text.length > options.maxChars ? text.slice(0, options.maxChars) : text;
  const out: string[] = [];
  const ascii = ASCII.test(s);
  const keepShort = options.keepShort === true;
  if (ascii) tokenizeAscii(s, out, maxTerms, keepShort);
  else tokenizeUnicode(s, out, maxTerms, keepShort);
  if (out.length > 0 || keepShort || options.keepShortAlone !== true) return out;
  if (ascii) tokenizeAscii(s, out, maxTerms, true);
  else tokenizeUnicode(s, out, maxTerms, true);
  return out;
}

const ASCII = /^[\x00-\x7f]*$/;

function push(out: string[], raw: string, keepShort: boolean): void {
  if (!raw) return;
  if (raw.endsWith(NAME_MARK)) {
    // A written name (WRITTEN_NAMES): a single letter or "it", kept.
    out.push(raw.slice(0, -1));
    return;
  }
  if (!keepShort && isDroppedTerm(raw)) return;
  out.push(raw.length > MAX_TERM_LENGTH ? raw.slice(0, MAX_TERM_LENGTH) : raw);
}

/** push for the run of ASCII text `s[start, end)`; a name WRITTEN_NAMES would mark is kept. */
function pushAscii(out: string[], s: string, start: number, end: number, atBoundary: boolean, keepShort: boolean): void {
  const raw = s.slice(start, end).toLowerCase();
  if (atBoundary && isWrittenName(s, start, end)) out.push(raw);
  else push(out, raw, keepShort);
}

/** Whether `s[start, end)`, a run that starts at a word boundary, is a name WRITTEN_NAMES marks (ASCII text). */
function isWrittenName(s: string, start: number, end: number): boolean {
  const next = end < s.length ? s.charCodeAt(end) : 32;
  if (end - start === 1) {
    const c = s.charCodeAt(start);
    // Not the first letter of a compound (E-Mail).
    if (next === 45 && end + 1 < s.length && (isUpper(s.charCodeAt(end + 1)) || isLower(s.charCodeAt(end + 1)))) return false;
    // A capital letter alone, not A or I; not a letter of an identifier (XCoordinate).
    return isUpper(c) && c !== 65 && c !== 73 && !isUpper(next) && !isLower(next) && !isDigit(next);
  }
  // "IT" before no lower-case letter or digit: after it a boundary or a capital that starts a word.
  return end - start === 2 && s.charCodeAt(start) === 73 && s.charCodeAt(start + 1) === 84 && !isLower(next) && !isDigit(next);
}

/** General path: regular expressions with Unicode classes. */
function tokenizeUnicode(text: string, out: string[], maxTerms: number, keepShort: boolean): void {
  let s = text
    .replace(WRITTEN_NAMES, `$&${NAME_MARK} `)
    .replace(LETTER_DIGITS_LETTER, (_, head: string, last: string) => head + last.toLowerCase())
    .replace(CAMEL, ' ').replace(ACRONYM, '$1 $2').replace(SPELLED_SYMBOLS, ' ');
  // Before folding: the dictionaries know the words as written (NFKD splits Thai's sara am).
  if (HAS_UNSPACED.test(s)) s = s.replace(UNSPACED_RUN, spaceWords);
  s = fold(s);
  if (HAS_IDEOGRAPH.test(s)) s = s.replace(IDEOGRAPHS, ' $1 ');
  for (const m of s.matchAll(WORDS)) {
    push(out, m[0], keepShort);
    if (out.length >= maxTerms) return;
  }
}

/** Whether `s[start, end)` is a word's start (`atBoundary`) of only digits: "3" of 3D, "2" of 2FA. */
function digitsFrom(s: string, start: number, end: number, atBoundary: boolean): boolean {
  if (!atBoundary) return false;
  for (let k = start; k < end; k++) if (!isDigit(s.charCodeAt(k))) return false;
  return true;
}

/**
 * Whether the capital at `end` ends a word that is one letter, digits and that capital ("A2A",
 * "B2B", "P2P", "E2E", "W3C"; `s[start, end)` starts the word): a name, one word. Split at the
 * digits as base64Encode is, "A2A" was `a2` (its last letter alone, dropped), so "a2a" as typed
 * found no card saying "A2A", and "A2A" typed found every "A2".
 */
function letterDigitsLetter(s: string, start: number, end: number, atBoundary: boolean): boolean {
  if (!atBoundary || end - start < 2 || isDigit(s.charCodeAt(start))) return false;
  for (let k = start + 1; k < end; k++) if (!isDigit(s.charCodeAt(k))) return false;
  const next = end + 1 < s.length ? s.charCodeAt(end + 1) : 32;
  return !isUpper(next) && !isLower(next) && !isDigit(next);
}

const isUpper = (c: number): boolean => c >= 65 && c <= 90;
/**
 * Whether `s[at]`, a lower-case letter after two capitals or more, is the `s` of an acronym's
 * plural ("APIs", "PDFs", "IDs", "URLsToFetch"): an `s` that ends the word, or comes before a
 * capital. It was read as an acronym before a word (HTTPServer), so "APIs" was `ap` and the
 * stop word "is", "PDFs" `pd fs` and "IDs" `ds`: "api", "pdf" and "id" found none of them.
 * Read as one word, `apis` is a form of "api" as any plural is of its word.
 */
const isAcronymPlural = (s: string, at: number): boolean => {
  if (s.charCodeAt(at) !== 115) return false;
  const next = at + 1 < s.length ? s.charCodeAt(at + 1) : 32;
  return !isLower(next) && !isDigit(next);
};
const isLower = (c: number): boolean => c >= 97 && c <= 122;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/** After a lone letter at `i`: the length of `++` or `#` there when no letter follows them (C++, C#), else 0. */
function languageSymbols(s: string, i: number): number {
  const c = s.charCodeAt(i);
  const n = c === 35 ? 1 : c === 43 && s.charCodeAt(i + 1) === 43 ? 2 : 0;
  if (n === 0) return 0;
  const next = i + n < s.length ? s.charCodeAt(i + n) : 32;
  return isUpper(next) || isLower(next) ? 0 : n;
}

/** Fast path for ASCII text (most cards): one scan, same boundaries as tokenizeUnicode. */
function tokenizeAscii(s: string, out: string[], maxTerms: number, keepShort: boolean): void {
  const n = s.length;
  let start = -1;
  // The word being read starts after a non-word character, not at a split of an identifier.
  let atBoundary = false;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? s.charCodeAt(i) : 32;
    const up = isUpper(c);
    if (up || isLower(c) || isDigit(c)) {
      if (start < 0) {
        start = i;
        atBoundary = true;
      } else if (up) {
        const p = s.charCodeAt(i - 1);
        // getWeather, base64Encode | HTTPServer; not iPhone, 3D (CAMEL), nor APIs (ACRONYM)
        if ((isLower(p) && (i - 1 > start || !atBoundary)) || (isDigit(p) && !digitsFrom(s, start, i, atBoundary) && !letterDigitsLetter(s, start, i, atBoundary)) || (isUpper(p) && i + 1 < n && isLower(s.charCodeAt(i + 1)) && !isAcronymPlural(s, i + 1))) {
          pushAscii(out, s, start, i, atBoundary, keepShort);
          if (out.length >= maxTerms) return;
          start = i;
          atBoundary = false;
        }
      }
    } else if (start >= 0) {
      // C++, C#: a letter with its symbols (see the rules above).
      const symbols = i === start + 1 && !isDigit(s.charCodeAt(start)) ? languageSymbols(s, i) : 0;
      if (symbols > 0) push(out, s.slice(start, i + symbols).toLowerCase(), keepShort);
      else pushAscii(out, s, start, i, atBoundary, keepShort);
      if (out.length >= maxTerms) return;
      if (symbols > 0) i += symbols - 1;
      start = -1;
    }
  }
}

/**
 * Where the words of `text` are, as written (start, end offsets): the runs tokenize reads its
 * terms from, by the same rules (a word with its marks, an emoji, C++; Thai, Lao, Khmer and
 * Myanmar words by dictionary; each Han or kana character). `tokenize` of a span gives its terms
 * (several for an identifier: getWeather). For marking matched words in a text (the web page).
 */
export function wordSpans(text: string): [start: number, end: number][] {
  const out: [number, number][] = [];
  for (const m of text.matchAll(WORD_SPANS)) {
    const word = m[0];
    const at = m.index;
    if (HAS_UNSPACED.test(word)) {
      segmenter ??= new Intl.Segmenter('th', { granularity: 'word' });
      for (const s of segmenter.segment(word)) if (s.isWordLike) out.push([at + s.index, at + s.index + s.segment.length]);
    } else if (HAS_IDEOGRAPH.test(word)) {
      for (const p of word.matchAll(IDEOGRAPH_SPAN)) out.push([at + p.index, at + p.index + p[0].length]);
    } else {
      out.push([at, at + word.length]);
    }
  }
  return out;
}

/**
 * Words written together by a dash, an underscore or a change of case: "e-mail", "x_ray",
 * "TextToSpeech" (text past ASCII; joinedTerms scans ASCII itself). Global: read with matchAll.
 * JOINED_HINT tells whether a text, or a piece, may have one at all.
 */
const WRITTEN_TOGETHER = /[\p{L}\p{N}\p{M}]+(?:[-_\u2010\u2011]+[\p{L}\p{N}\p{M}]+)*/gu;
const JOINED_HINT = /[\p{L}\p{N}][-_\u2010\u2011]+[\p{L}\p{N}]|\p{Ll}\p{Lu}/u;

/**
 * The words of `text` written together that lose a part as prose (a single letter or a stop word:
 * "e-mail", "x-ray", "T-Shirt", "text-to-speech", "SpeechToText", "step-by-step"), or whose
 * every part is a word joined to the next by a hyphen ("co-pilot", "web-hooks", "pre-processing",
 * "gpt-4"), as one word each: `email`, `xray`, `tshirt`, `texttospeech`, `speechtotext`,
 * `stepbystep`, `copilot`, `webhooks`, `preprocessing`, `gpt4`. Prose files "e-mail" as `mail`
 * alone, so "email" found it only as a typo of "mail" (half a word, and not at all as "emai"
 * typed); the index files the joined word beside the parts, as a query does (./query.ts
 * joinedAlternative: "e-mail" also searches "email"). A hyphenated word's parts are words, and a
 * query's "copilot" was read as "co pilot" (./expansion.ts addSplits), but only as written:
 * "webhook" found no "web-hooks", "preprocess" no "pre-processing", "copil" as typed no
 * "co-pilot"; the joined word takes forms, completions and typos as any word does. Words written
 * together by an underscore or a change of case that lose nothing ("get_weather", "GitHub") need
 * no joined word: they are identifiers more than words, a query's "github" is read as "git hub",
 * and a joined word for each (most tool names) would cost the index heap for little; nor a text
 * that is a slug (SLUG: "weather-forecast"), nor numbers ("2024-01-15"). At most `maxWords` words
 * a piece (a longer run is rarely one word), at most `maxTerms` joined words a text.
 */
export function joinedTerms(text: string, maxWords: number, maxTerms = 16): string[] {
  const out: string[] = [];
  const hyphenated = !SLUG.test(text);
  ascii: {
    // Most texts are ASCII: one scan finds the pieces of letters and digits joined by a dash, an
    // underscore or a capital after a lower-case letter, and tokenises one only when a part of it
    // (between those) may be a dropped word; most are names such as get_weather. (Scanning with
    // WRITTEN_TOGETHER and tokenising every such piece cost a fifth of tokenising the texts.)
    // Past ASCII, the regular expressions below.
    const n = text.length;
    let start = -1;
    let part = -1;
    let joined = false;
    let short = false;
    // A hyphen joins two of its parts: it may be a hyphenated word (joinedWord tells).
    let hyphen = false;
    for (let i = 0; i <= n; i++) {
      const c = i < n ? text.charCodeAt(i) : 32;
      if (c > 127) {
        out.length = 0;
        break ascii;
      }
      if (isUpper(c) || isLower(c) || isDigit(c)) {
        if (start < 0) {
          start = part = i;
          joined = short = hyphen = false;
        } else if (part < 0) {
          part = i;
        } else if (isUpper(c) && isLower(text.charCodeAt(i - 1))) {
          joined = true;
          short ||= isDroppedPart(text, part, i);
          part = i;
        }
      } else if ((c === 45 || c === 95) && start >= 0 && i + 1 < n && isWordChar(text.charCodeAt(i + 1))) {
        joined = true;
        hyphen ||= c === 45;
        short ||= isDroppedPart(text, part, i);
        part = -1;
      } else if (start >= 0) {
        if (joined && (short || (hyphen && hyphenated) || isDroppedPart(text, part, i)) && addJoined(text.slice(start, i), maxWords, hyphenated, out, maxTerms) && out.length >= maxTerms) break;
        start = part = -1;
      }
    }
    return out;
  }
  if (!JOINED_HINT.test(text)) return out;
  for (const m of text.matchAll(WRITTEN_TOGETHER)) {
    const piece = m[0];
    if (JOINED_HINT.test(piece) && addJoined(piece, maxWords, hyphenated, out, maxTerms) && out.length >= maxTerms) break;
  }
  return out;
}

const isWordChar = (c: number): boolean => isUpper(c) || isLower(c) || isDigit(c);
/** Whether `text[start, end)` (letters and digits) may be a word prose drops: a single letter, a stop word. */
const isDroppedPart = (text: string, start: number, end: number): boolean => end - start <= 6 && isDroppedTerm(text.slice(start, end).toLowerCase());

/**
 * joinedTerms of one piece written together, added to `out`; whether one was. A piece of more
 * words that starts with a letter (letterJoined: "e-mail-sender", "E-Mail-Versand") also files
 * the letter with its next part (`email`): only the whole (`emailsender`) was filed, so "email"
 * found the piece only as a typo of "mail".
 */
function addJoined(piece: string, maxWords: number, hyphenated: boolean, out: string[], maxTerms: number): boolean {
  const joined = joinedWord(piece, maxWords, hyphenated);
  if (joined === undefined || out.includes(joined)) return false;
  out.push(joined);
  const prefixed = letterJoined(piece);
  const word = prefixed === undefined ? undefined : tokenize(prefixed, { maxTerms: 1 })[0];
  if (word !== undefined && out.length < maxTerms && !out.includes(word)) out.push(word);
  return true;
}

/**
 * A single letter that starts a hyphenated word ("E-" of "E-mail", "e-" of "e-mail-sender", "X-"
 * of "X-Ray"), its hyphens and its next part: prose drops the letter (`mail`), where people type
 * it joined to that part.
 */
const LETTER_PREFIX = /(?<![\p{L}\p{N}\p{M}_\-\u2010\u2011])([A-Za-z])[-\u2010\u2011]+(\p{L}[\p{L}\p{N}\p{M}]*)/gu;

/**
 * `text` with the single letter starting each hyphenated word joined to its next part, in lower
 * case so tokenize reads the two as one word (as "eBay"): "E-mail Sender" and "e-mail-sender"
 * are both `email sender`, as a query typed "email sender" is. Undefined when it has none. A name
 * so read is its entry's second name term (./search-index.ts nameTerm), so its name typed in
 * either spelling is the name.
 */
export function letterJoined(text: string): string | undefined {
  // Most names have no hyphen (every skill's and tool's is read: ./search-index.ts otherNameTerms).
  if (!HYPHENS.test(text)) return undefined;
  let changed = false;
  const out = text.replace(LETTER_PREFIX, (piece, letter: string, next: string) => {
    // Not before a word prose drops too: "x-to-y" says no word "xto".
    if (isDroppedTerm(fold(next))) return piece;
    changed = true;
    return letter.toLowerCase() + next;
  });
  return changed ? out : undefined;
}

/**
 * The one word a piece written together stands for, when prose loses a part of it ("e-mail":
 * `email`), or with `hyphenated` when it is a hyphenated word ("co-pilot": `copilot`; joinedTerms).
 */
function joinedWord(piece: string, maxWords: number, hyphenated: boolean): string | undefined {
  const all = tokenize(piece, { keepShort: true, maxTerms: maxWords + 1 });
  if (all.length < 2 || all.length > maxWords) return undefined;
  const joined = all.join('');
  if (joined.length > MAX_TERM_LENGTH || isDroppedTerm(joined)) return undefined;
  if (hyphenated && isHyphenated(piece, all.length)) return joined;
  // Else only when prose loses a part: "IT_Support" is `it support` as prose too (a written name).
  return all.some(isDroppedTerm) && tokenize(piece).length !== all.length ? joined : undefined;
}

/**
 * A text that is one lower-case piece joined by hyphens: a slug ("weather-forecast",
 * "get-weather"), an identifier as get_weather is, which most MCP servers' and many tools' names
 * are. Its hyphenated word is not filed as one (joinedTerms): at 50,000 generated entries, whose
 * servers are all so named, that was 0.79 more postings an entry, for a word nobody types.
 */
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)+$/;
/** Hyphens and the dashes typed for them (WRITTEN_TOGETHER), not an underscore. */
const HYPHENS = /[-\u2010\u2011]+/;
const HAS_LETTER = /\p{L}/u;

/**
 * Whether `piece`, read as `words` words, is a hyphenated word: its parts, between hyphens, are
 * its words one each (no underscore or change of case inside: "get_weather-v2" is an
 * identifier), and it has a letter ("2024-01-15" is a date, not a word).
 */
const isHyphenated = (piece: string, words: number): boolean =>
  !piece.includes('_') && piece.split(HYPHENS).length === words && HAS_LETTER.test(piece);

/**
 * `text` with each piece written together that prose loses a part of written as its one word
 * (joinedTerms): "send e-mail now" is "send email now". Undefined when it has none. Its words
 * make the phrases such a text says read the other way (`"send email"` finds "send e-mail",
 * whose prose words are `send mail`); only texts joinedTerms finds a word in need it. Not a
 * hyphenated word that loses nothing ("co-pilot"): its parts are the text's words already, and
 * reading the text again for it (a second copy of its words for phrases) would have tripled the
 * words that readings add in the relevance bench's corpus of real cards and toolspecs ("read-only",
 * "rate-limit", "URL-encoded" in long tool descriptions); a quoted phrase is read both ways
 * instead (./query.ts with hyphenJoined, ./expansion.ts addPhraseSplits).
 */
export function joinedReading(text: string, maxWords: number): string | undefined {
  let changed = false;
  const reading = text.replace(WRITTEN_TOGETHER, (piece) => {
    const joined = JOINED_HINT.test(piece) ? joinedWord(piece, maxWords, false) : undefined;
    if (joined === undefined) return piece;
    changed = true;
    return joined;
  });
  return changed ? reading : undefined;
}

/**
 * `text` with each hyphenated piece joinedTerms files as one word written as that word:
 * "Co-Pilot Studio" is "copilot Studio", "Text-to-Speech" "texttospeech", "e-mail-sender"
 * "emailsender" (a slug only when it loses a part, as joinedTerms reads it). Undefined when it
 * has none. Not pieces joined by an underscore or a change of case (identifiers: "get_a_quote").
 * A name so read is its entry's, skill's or tool's other name term (./search-index.ts
 * otherNameTerms): "copilot" typed named no "Co-Pilot", whose words are `co pilot`; a quoted
 * phrase so read its other phrase (./query.ts): `"co-pilot for writers"` finds "copilot for writers".
 */
export function hyphenJoined(text: string, maxWords: number): string | undefined {
  if (!HYPHENS.test(text)) return undefined;
  const hyphenated = !SLUG.test(text);
  let changed = false;
  const reading = text.replace(WRITTEN_TOGETHER, (piece) => {
    const joined = HYPHENS.test(piece) && !piece.includes('_') ? joinedWord(piece, maxWords, hyphenated) : undefined;
    if (joined === undefined) return piece;
    changed = true;
    return joined;
  });
  return changed ? reading : undefined;
}

/**
 * Whether `term` is one only capitals make a term (WRITTEN_NAMES: "R", "IT"): the same words
 * typed in lower case do not have it. What compares a whole name leaves such terms out, so
 * "r studio" still names "R Studio".
 */
export function isCaseMadeTerm(term: string): boolean {
  return term === 'it' || (term.length === 1 && term >= 'a' && term <= 'z');
}

/**
 * Whether tokenize drops `term` from prose (a single ASCII letter or a stop word), unless the
 * options keep it: what a tag's words lose in the text search's phrase pairs (./search-index.ts).
 */
export function isDroppedTerm(term: string): boolean {
  return (term.length === 1 && term >= 'a' && term <= 'z') || STOP_WORDS.has(term);
}

/** True when `term` is already in normalised form (fast path for re-encoding a term). */
export function isSimpleTerm(term: string): boolean {
  return SIMPLE_TERM.test(term);
}
