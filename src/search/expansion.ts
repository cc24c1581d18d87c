/**
 * Parsed query (./query.ts) → what to look up: for every clause, the terms and phrases that
 * satisfy it, each with a weight relative to an exact match and whether it counts as a full
 * ("strong") or a partial ("weak") match of the clause in the ranking.
 *
 *   variant                     weight   counts as   restricted to
 *   the word itself             1        strong      -
 *   a longer word (prefix)      0.8      strong      -
 *   another form (same stem)    0.85     strong      entries of the stemmer's language
 *   operator synonym            0.9      strong      -
 *   a typo away (1 edit)        0.55     weak        -    (two edits: 0.45)
 *   WordNet synonym             ≤ 0.6    weak        -
 *   WordNet hypernym / similar  ≤ 0.45   weak        -
 *
 * Typos: words of TYPO_MIN_LENGTH letters or more match terms one edit away, words of
 * TYPO_LONG_LENGTH or more two edits away; only when the word itself (with its forms) is rare
 * in the index (fewer than `typoBelow` units), so a word that is common and correctly spelt is
 * not diluted by its look-alikes (weather / whether / heather).
 *
 * A quoted word or phrase is matched as written: no forms, typos or related words (a phrase
 * still picks up the operator's synonyms for it as a whole, and a word of it read as two words
 * the index holds side by side: addPhraseSplits).
 */
import { ENGLISH, LANGUAGE_COUNT, stem } from './languages.js';
import type { ParsedClause, ParsedQuery, Scope, WordAlternative } from './query.js';
import { MAX_JOINED_WORDS, MAX_PHRASE_WORDS, MAX_PREFIX_EXPANSIONS } from './query.js';
import type { RelatedWords } from './related-words.js';
import type { Vocabulary } from './vocabulary.js';

export const PREFIX_WEIGHT = 0.8;
export const FORM_WEIGHT = 0.85;
export const TYPO_WEIGHT = [1, 0.55, 0.45] as const;
export const TYPO_MIN_LENGTH = 5;
export const TYPO_LONG_LENGTH = 9;
/** Terms a typo may stand for, per word; words of one query looked up for typos (each walk is bounded too). */
const MAX_TYPO_TERMS = 6;
const MAX_TYPO_WORDS = 8;
/** Word forms looked up per word (all languages together). */
const MAX_FORMS = 24;
/** Related terms used per word, and forms looked up per related term. */
const MAX_RELATED = 12;
const MAX_FORMS_PER_RELATED = 4;
/** Lookups per clause, all variants together. */
const MAX_TERMS_PER_CLAUSE = 64;

/** The shortest part of a word read as two or more (addSplits): "js" of "nodejs". */
const MIN_SPLIT_PART = 2;
/** Readings of one word as several, at most. */
const MAX_SPLITS = 2;
/** Words one word is read as, at most (addSplits): "listopenpullrequests" is `list open pull requests`. */
const MAX_SPLIT_PARTS = 4;
/** Terms the last part of a word typed so far completes to, per reading (addSplits). */
const MAX_SPLIT_COMPLETIONS = 4;
/** Readings of a quoted phrase with one of its words as two, at most (addPhraseSplits). */
const MAX_PHRASE_SPLITS = 4;

/** No language restriction. */
export const ANY_LANGUAGE = -1;

export interface PlanTerm {
  readonly term: string;
  readonly weight: number;
  readonly strong: boolean;
  /** Language id whose entries it may match, or ANY_LANGUAGE. */
  readonly lang: number;
  /** A word a typo away from the word typed (addTypos): what the query may have meant to name. */
  readonly typo?: true;
}

export interface PlanPhrase {
  readonly words: readonly string[];
  readonly weight: number;
  readonly strong: boolean;
  /**
   * The phrase with its last word completed (a quote still open as it is typed): the
   * completions of a clause share one budget of postings, so a prefix's many terms cost what one
   * phrase does.
   */
  readonly completion?: true;
}

export interface PlanClause {
  readonly terms: PlanTerm[];
  readonly phrases: PlanPhrase[];
  /** FIELD_* bits it must match in (0: any). */
  readonly fields: number;
  readonly scope: Scope;
}

/** An English dictionary: tells a word from a typo (WordNet). */
export interface Dictionary {
  knows(word: string): boolean;
}

export interface ExpansionOptions {
  wordForms: boolean;
  /**
   * When given, an English word found in no entry gets other English forms only when the
   * dictionary knows it: the stem of a typo conflates unrelated words ("invoce" and
   * "invocation" share Porter's stem "invoc"), while its typo variants find what was meant.
   * Its plural it gets all the same (isPluralOf: "api" finds "APIs").
   */
  dictionary?: Dictionary;
  typos: boolean;
  /** Typo variants are looked up for words found in fewer units than this. */
  typoBelow: number;
  related?: RelatedWords;
  /** Languages that have entries (bit set): stems are computed only for those. */
  languages: number;
}

export interface ExpansionContext {
  readonly vocabulary: Vocabulary;
  /** Units holding `term` (0 when none). */
  postings(term: string): number;
}

export function planQuery(q: ParsedQuery, ctx: ExpansionContext, o: ExpansionOptions): { clauses: PlanClause[]; excluded: PlanClause[] } {
  const budget = { typoWords: MAX_TYPO_WORDS };
  return {
    clauses: q.clauses.map((c) => planClause(c, ctx, o, false, budget)),
    // Excluding a word excludes its forms too ("-invoice" also leaves out "invoices"), but not
    // its look-alikes or related words.
    excluded: q.excluded.map((c) => planClause(c, ctx, { ...o, typos: false, related: undefined }, true, budget)),
  };
}

function planClause(c: ParsedClause, ctx: ExpansionContext, o: ExpansionOptions, excluding: boolean, budget: { typoWords: number }): PlanClause {
  const out: PlanClause = { terms: [], phrases: [], fields: c.fields, scope: c.scope };
  const seen = new Map<string, number>();
  const addTerm = (t: PlanTerm): void => {
    if (out.terms.length >= MAX_TERMS_PER_CLAUSE || !ctx.vocabulary.has(t.term)) return;
    const key = `${t.lang}|${t.term}`;
    const at = seen.get(key);
    if (at === undefined) {
      seen.set(key, out.terms.length);
      out.terms.push(t);
    } else {
      const prev = out.terms[at]!;
      if (t.weight > prev.weight || (t.strong && !prev.strong)) out.terms[at] = { ...t, weight: Math.max(t.weight, prev.weight), strong: t.strong || prev.strong };
    }
  };
  for (const alt of c.alternatives) {
    if (alt.kind === 'phrase') {
      out.phrases.push({ words: alt.words, weight: 1, strong: true });
      if (alt.prefix) {
        const typed = alt.words.slice(0, -1);
        for (const t of ctx.vocabulary.expand(alt.words[alt.words.length - 1]!, MAX_PREFIX_EXPANSIONS)) {
          out.phrases.push({ words: [...typed, t], weight: PREFIX_WEIGHT, strong: true, completion: true });
        }
      }
      addPhraseSplits(alt.words, alt.prefix === true, out, ctx);
      // Its words written as one ("machine learning" also finds "machinelearning", `tags:MachineLearning` a tag "machinelearning").
      if (alt.words.length <= MAX_JOINED_WORDS) addTerm({ term: alt.words.join(''), weight: 1, strong: true, lang: ANY_LANGUAGE });
      if (!excluding) addRelated(alt.words.join(' '), 1, out, addTerm, ctx, o, true);
      continue;
    }
    const before = out.terms.length;
    addTerm({ term: alt.word, weight: 1, strong: true, lang: ANY_LANGUAGE });
    // A quoted word typed so far (`"weath`) is completed, but takes no other forms.
    if (alt.prefix) {
      for (const t of ctx.vocabulary.expand(alt.word, MAX_PREFIX_EXPANSIONS)) addTerm({ term: t, weight: PREFIX_WEIGHT, strong: true, lang: ANY_LANGUAGE });
    }
    if (alt.exact) continue;
    // Read as more than two words, or as words the last of which is typed so far, only when the
    // index has no such word, nor one it completes to (an identifier typed as one word).
    addSplits(alt.word, out.terms.length === before, alt.prefix === true, out, ctx);
    const unknownEnglish = o.dictionary !== undefined && ctx.postings(alt.word) === 0 && !o.dictionary.knows(alt.word);
    const forms = o.wordForms ? formsOf(alt.word, ctx.vocabulary, o.languages).filter((f) => !unknownEnglish || f.lang !== ENGLISH || isPluralOf(f.term, alt.word)) : [];
    for (const f of forms) addTerm({ term: f.term, weight: FORM_WEIGHT, strong: true, lang: f.lang });
    if (o.typos && alt.word.length >= TYPO_MIN_LENGTH && budget.typoWords > 0 && addTypos(alt, forms, ctx, o, addTerm)) budget.typoWords--;
    if (o.related) {
      addRelated(alt.word, 1, out, addTerm, ctx, o, false);
      // The operator's file and WordNet list base forms: "invoices" → the rules of "invoice".
      for (const f of forms) if (f.lang === ENGLISH) addRelated(f.term, FORM_WEIGHT, out, addTerm, ctx, o, false);
    }
  }
  return out;
}

/**
 * A word read as words that entries hold side by side: "github" is "GitHub", "javascript"
 * "JavaScript" and "gpt4" "GPT-4", which the tokenizer files as `git hub`, `java script` and
 * `gpt 4` (it splits camelCase and snake_case, so that getWeather finds "weather"), and which
 * people type in lower case, or without the dash; and a tool's name so typed, of up to
 * MAX_SPLIT_PARTS words: "getweathertool" is "GetWeatherTool", "fetchstockquote"
 * "fetch_stock_quote" (read as two words at most, they found nothing). Each reading whose parts
 * are all terms of the index becomes a phrase, worth the word itself; a reading whose parts are
 * never adjacent in one text matches nothing, so spurious ones cost a lookup, not a wrong hit.
 * Of more than two words, and a word typed so far (`typing`) with its last part completed as a
 * last word is (a phrase completed, worth a prefix: "getweath" is `get weather`), only when the
 * word is `unknown`: no term, nor the start of one. Looked up in the vocabulary
 * only: nothing is added to the index per entry (a joined word filed for every identifier in a
 * name cost some 100 B an entry, docs/scaling.md).
 */
function addSplits(word: string, unknown: boolean, typing: boolean, out: PlanClause, ctx: ExpansionContext): void {
  for (const split of splitsOf(word, ctx, false, unknown ? MAX_SPLIT_PARTS : 2)) out.phrases.push({ words: split, weight: 1, strong: true });
  if (!typing || !unknown) return;
  for (const read of splitsOf(word, ctx, true, MAX_SPLIT_PARTS)) {
    const typed = read.slice(0, -1);
    for (const t of ctx.vocabulary.expand(read.at(-1)!, MAX_SPLIT_COMPLETIONS)) {
      if (t !== read.at(-1)) out.phrases.push({ words: [...typed, t], weight: PREFIX_WEIGHT, strong: true, completion: true });
    }
  }
}

/**
 * The readings of `word` as two to `maxParts` words the index holds (addSplits), fewer words
 * first, at most MAX_SPLITS; with `lastTyped`, its last part only the start of a word.
 */
function splitsOf(word: string, ctx: ExpansionContext, lastTyped = false, maxParts = 2): string[][] {
  const out: string[][] = [];
  const isPart = (from: number, to: number): boolean => {
    // Between letters and digits a part may be one character: "gpt4" is "GPT-4", "web3" "Web 3".
    const cut = (at: number): boolean => at === 0 || at === word.length || isDigit(word.charCodeAt(at - 1)) !== isDigit(word.charCodeAt(at));
    return to - from >= MIN_SPLIT_PART || (cut(from) && cut(to));
  };
  const read = (from: number, parts: number, taken: string[]): void => {
    if (parts === 1) {
      const last = word.slice(from);
      if (isPart(from, word.length) && (lastTyped || ctx.vocabulary.has(last))) out.push([...taken, last]);
      return;
    }
    for (let i = from + 1; i < word.length && out.length < MAX_SPLITS; i++) {
      if (isPart(from, i) && ctx.vocabulary.has(word.slice(from, i))) read(i, parts - 1, [...taken, word.slice(from, i)]);
    }
  };
  for (let parts = 2; parts <= maxParts && out.length < MAX_SPLITS; parts++) read(0, parts, []);
  return out.slice(0, MAX_SPLITS);
}

/**
 * A quoted phrase with a word read as two (splitsOf), one word at a time, and with each such
 * word read as its first split at once: `"copilot for writers"` finds "co-pilot for writers",
 * `"copilot for preprocessing"` "co-pilot for pre-processing" and `"javascript developer"`
 * "JavaScript developer", whose words are `co pilot`, `pre processing`, `java script` (a
 * hyphenated word's joined word is a term, not one of the words kept for phrases:
 * ./text-encoder.ts joinedReading). At most MAX_PHRASE_SPLITS phrases, each as exact as the
 * phrase; the last word typed so far is completed, not split. Looked up in the vocabulary only,
 * as addSplits is.
 */
function addPhraseSplits(words: readonly string[], typing: boolean, out: PlanClause, ctx: ExpansionContext): void {
  let added = 0;
  const add = (read: readonly string[]): void => {
    // The phrase read with a hyphenated word joined (./query.ts) splits back into the phrase as written.
    if (added >= MAX_PHRASE_SPLITS || read.length > MAX_PHRASE_WORDS || out.phrases.some((p) => sameWords(p.words, read))) return;
    out.phrases.push({ words: read, weight: 1, strong: true });
    added++;
  };
  const last = typing ? words.length - 1 : words.length;
  const splits = words.map((w, i) => (i < last ? splitsOf(w, ctx) : []));
  // Every word so read first (a phrase of several hyphenated words), then each alone.
  if (splits.filter((s) => s.length > 0).length > 1) add(words.flatMap((w, i) => splits[i]![0] ?? [w]));
  words.forEach((_, i) => {
    for (const split of splits[i]!) add([...words.slice(0, i), ...split, ...words.slice(i + 1)]);
  });
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const sameWords = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((w, i) => w === b[i]);

/**
 * Whether `term` is `word` with a plural's `s` or `es`: the one English form an unknown word
 * keeps (ExpansionOptions.dictionary), as WordNet knows no acronym or product name ("api",
 * "pdf", "sdk"), and an index whose entries say only "APIs" had "api" find none of them. A
 * typo's plural is as unlikely in an index as the typo (the conflation that rule is for,
 * "invoce" with "invocation", comes from the stem, not a plural).
 */
const isPluralOf = (term: string, word: string): boolean => term === `${word}s` || term === `${word}es`;

/** Terms sharing the word's stem, per language that has entries (the word itself left out). */
function formsOf(word: string, vocabulary: Vocabulary, languages: number): { term: string; lang: number }[] {
  const out: { term: string; lang: number }[] = [];
  for (let lang = 0; lang < LANGUAGE_COUNT && out.length < MAX_FORMS; lang++) {
    if ((languages & (1 << lang)) === 0) continue;
    for (const t of vocabulary.formsOf(stemOf(word, lang), lang)) {
      if (t !== word && out.length < MAX_FORMS) out.push({ term: t, lang });
    }
  }
  return out;
}

function addTypos(
  alt: WordAlternative,
  forms: readonly { term: string }[],
  ctx: ExpansionContext,
  o: ExpansionOptions,
  addTerm: (t: PlanTerm) => void,
): boolean {
  let found = ctx.postings(alt.word);
  for (const f of forms) {
    if (found >= o.typoBelow) break;
    found += ctx.postings(f.term);
  }
  if (found >= o.typoBelow) return false;
  const distance = alt.word.length >= TYPO_LONG_LENGTH ? 2 : 1;
  for (const s of ctx.vocabulary.similar(alt.word, distance, MAX_TYPO_TERMS)) {
    addTerm({ term: s.term, weight: TYPO_WEIGHT[s.distance as 1 | 2], strong: false, lang: ANY_LANGUAGE, typo: true });
  }
  return true;
}

function addRelated(
  key: string,
  scale: number,
  out: PlanClause,
  addTerm: (t: PlanTerm) => void,
  ctx: ExpansionContext,
  o: ExpansionOptions,
  phraseOnly: boolean,
): void {
  const related = o.related?.related(key) ?? [];
  let used = 0;
  for (const r of related) {
    if (used++ >= MAX_RELATED) break;
    if (phraseOnly && !r.strong) continue;
    const weight = r.weight * scale;
    if (r.words.length > 1) {
      if (!out.phrases.some((p) => p.words.join(' ') === r.words.join(' '))) out.phrases.push({ words: r.words, weight, strong: r.strong });
      continue;
    }
    const word = r.words[0]!;
    addTerm({ term: word, weight, strong: r.strong, lang: ANY_LANGUAGE });
    // WordNet's words are English: their English forms too ("humorous" → humor).
    if (o.wordForms && (o.languages & (1 << ENGLISH)) !== 0) {
      const forms = ctx.vocabulary.formsOf(stemOf(word, ENGLISH), ENGLISH);
      for (let i = 0; i < forms.length && i < MAX_FORMS_PER_RELATED; i++) {
        addTerm({ term: forms[i]!, weight: weight * FORM_WEIGHT, strong: r.strong, lang: ENGLISH });
      }
    }
  }
}

/** Stems of query words, memoised (stemmers cost microseconds; queries repeat words). */
const stemMemo = new Map<string, string>();
function stemOf(word: string, lang: number): string {
  const key = `${lang}${word}`;
  let s = stemMemo.get(key);
  if (s === undefined) {
    s = stem(word, lang);
    if (stemMemo.size >= 20_000) stemMemo.clear();
    stemMemo.set(key, s);
  }
  return s;
}
