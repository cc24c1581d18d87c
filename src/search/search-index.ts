/**
 * The registry's SearchIndex (./types.ts): postings per unit (./term-index.ts); query expansion,
 * filters, ranking, grouping and paging on the index's own compact tables.
 *
 * Units: every entry is indexed as one unit for itself (agent: name, description, provider;
 * MCP server: name, description), one per skill (name, tags, description, examples) and one per
 * tool (name, title + annotation title, description). A unit's id encodes its entry number and
 * position (./tables.ts). Units are matched on their own: a skill does not inherit the words of
 * its agent's name. Postings hold the terms as written (folded); word forms, typos and related
 * words are found at query time through the vocabulary (./vocabulary.ts, ./expansion.ts), so
 * they cost no postings. Each entry's language is detected once (./languages.ts) and kept in
 * its row; a unit's words are kept in order as 16-bit hashes for phrases (./phrases.ts).
 *
 * Text query (./query.ts): clauses (words, OR-groups, phrases, field- or scope-restricted),
 * each expanded to the terms that satisfy it (./expansion.ts). Every posting adds to its unit
 * the weight of the fields it matched (./fields.ts) × a mild IDF factor (a rare term weighs up
 * to twice a ubiquitous one; a variant's at most the word typed's) × the variant's weight (exact
 * 1, other form 0.85, ...). The
 * relevance key of a unit is
 *     clauses matched strongly + WEAK_CLAUSE × clauses matched only weakly
 *       + weighted score / (largest possible weighted score)
 * so matching more of the query comes first, a typo or a WordNet word counts for half a word,
 * and for the same words the field weights and variant weights decide (an exact form above a
 * stemmed one). Ties go to the newer entry, then the smaller id (./ranking.ts).
 *
 * Results per entry (the default): an entry's key is its best unit's plus the clauses only its
 * other units match (a query's words may be spread over its skills), each less in an entry of
 * more than SPREAD_UNITS skills or tools;
 * the hit shows that unit as `match` and the others under `matches`. Results per match: units
 * are hits, at most GROUP_LIMIT per entry.
 *
 * Excluded words (`-word`): a skill or tool containing one (or another form of it) is no hit;
 * when the entry's own name, description or provider contains it, the whole entry is left out.
 *
 * Work is bounded (SearchIndexOptions): postings are read rarest clause first, best field first,
 * newest first, and a search collects at most `maxCandidates` units and reads at most
 * `maxPostings` postings (a skill- or tool-level filter's test of one costing `unitCheckCost`
 * more). Below the limits results and `total` are exact; past them the least
 * relevant matches are left out and `total` counts what was collected (a lower bound, which the
 * page says: `totalExact` false). At
 * 100,000 generated entries (bench/search.ts) 87% of unfiltered and 99% of filtered queries
 * stay below the defaults, and the first page differed from an unbounded search's in under 1%.
 * A search per entry also settles (PostingsIndex.settle) once its page is decided: from there it
 * reads the postings only of the entries that may still be on the page, so its page is the same
 * and its `total` a lower bound.
 *
 * Empty text lists what matches the filter, newest registered first, as `list` orders (score 0, `match.fields` empty), by
 * walking the entries in that order (./recency-lists.ts: all of them, or the filter's owner's or
 * tag's when shorter) until the page is full and `totalLimit` hits are counted; past that limit
 * `total` is a lower bound (`totalExact` false), so a listing costs what it shows, not what the
 * index holds:
 * - without a skill- or tool-level filter key: one hit per entry (`match.type` agent or
 *   mcp-server), since the question is "which agents/servers";
 * - with one (tags, input/output modes, tool hints): per entry, its first matching skill or tool
 *   as `match` and the others in `matches` (per match: one hit per skill or tool, up to
 *   GROUP_LIMIT per entry).
 *
 * Text with characters but no searchable words ("!!!", "the") matches nothing.
 *
 * Not re-entrant (one search at a time, as in a single Node.js thread): scratch state is reused
 * across searches, with a search stamp in the per-entry state instead of clearing.
 */
import { clipped } from '../lib/clipped.js';
import type { ResultsPer, SearchHit, SearchMatch } from '../contract/types.js';
import type { EntryDescription } from '../contract/description.js';
import type { IndexPage, IndexQuery, IndexedEntry, KeywordIndex, ListingShown } from './types.js';
import { Attributes, mimeKey, tagKey } from './attributes.js';
import {
  EntryStore,
  HINT_DESTRUCTIVE,
  HINT_IDEMPOTENT,
  HINT_OPEN_WORLD,
  HINT_READ_ONLY,
  offeredCapabilities,
  type EntryRecord,
} from './entry-store.js';
import { ANY_LANGUAGE, planQuery, type PlanClause, type PlanPhrase } from './expansion.js';
import {
  FIELD_DESCRIPTION,
  FIELD_EXAMPLES,
  FIELD_NAME,
  FIELD_PROVIDER,
  FIELD_TAGS,
  FIELD_TITLE,
  fieldNames,
  fieldScore,
} from './fields.js';
import { CompiledFilter } from './filters.js';
import { part, type IndexState, type SavedState } from './index-state.js';
import { TermIndex } from './term-index.js';
import { ENGLISH, LANGUAGE_COUNT, detectLanguage, languageId, wordsForDetection } from './languages.js';
import { NameFilter } from './name-filter.js';
import { MAX_NAME_WORDS, MAX_PHRASE_UNIT_WORDS, PhraseWords, TAG_PROSE, phraseSalt, phraseWord, termHash } from './phrases.js';
import { MAX_CLAUSES, MAX_JOINED_WORDS, MAX_PHRASE_WORDS, parseQuery, type ParsedClause, type ParsedQuery, type Scope } from './query.js';
import { GROUP_LIMIT, kthLargest, page, popcount, selectTop, type RankContext } from './ranking.js';
import { Conjunction, nonMemberBound } from './conjunction.js';
import { bitCount, bitmapOf, bitmapWords, forEachBit } from './entry-bits.js';
import { FilterBitmaps, VERDICT_ORDS, unitPassesKept } from './filter-bitmaps.js';
import { combineRelatedWords, type RelatedWords } from './related-words.js';
import { RecencyLists, type RecencyList } from './recency-lists.js';
import { E_BASE, E_COUNT, E_OWNER, E_SHIFT, M_LANG_MASK, M_LIVE, M_MCP, MAX_UNITS_PER_ENTRY, ORD_BITS, ORD_MASK, Tables, unitId } from './tables.js';
import { CapabilityLists } from './capability-lists.js';
import { hyphenJoined, isCaseMadeTerm, isDroppedTerm, joinedReading, joinedTerms, letterJoined, tokenize } from './text-encoder.js';
import { Vocabulary } from './vocabulary.js';
import { WordNet } from './wordnet.js';
import { DEFAULT_TOTAL_LIMIT } from './setting-defaults.js';

/** Characters of one field that are indexed (documents are size-limited anyway). */
const MAX_FIELD_CHARS = 20_000;
/** Distinct terms indexed per unit. */
const MAX_UNIT_TERMS = 2_000;
/** Largest page a caller can ask for. */
const MAX_LIMIT = 1_000;
/** Upper bound of fieldScore × IDF factor for one clause (keeps the normalised part < 1). */
const MAX_WORD_SCORE = 17.25 * 2 * 1.0001;
/** A clause matched only by weak variants (typos, WordNet) counts this much of a clause. */
export const WEAK_CLAUSE = 0.5;
/**
 * Skills and tools an entry may have before the query words that only its other skills or tools
 * match (not its best match) count less: each counts SPREAD_UNITS / (its skills and tools), as
 * BM25 normalises a long document's matches, so an MCP server with dozens of long tool
 * descriptions no longer wins on words scattered over them ("summarize a pdf": one tool says
 * "summarize", another "PDF") over an entry whose one match says it. Up to three skills or tools
 * (an agent with a translate skill and an invoice skill) they count fully, as before.
 */
export const SPREAD_UNITS = 3;
/**
 * Postings a clause reads for its weak variants (typos, WordNet words), all together: a weak
 * term that would pass it is skipped (the common ones, "information" for "data", add work and
 * little else), so related words cost a bounded amount even at 100,000 entries.
 */
export const MAX_WEAK_POSTINGS = 2_000;
/** Other matching skills or tools listed with a result per entry. */
export const MAX_MATCHES_PER_HIT = 10;
/** Words read from an entry to detect its language. */
const DETECTION_WORDS = 300;
/** Hybrid ranking: entries taken from each ranking, and reciprocal rank fusion's constant. */
export const FUSION_DEPTH = 100;
const RRF_K = 60;
/** Fused keys sit above every keyword key. */
const FUSED_BASE = 1000;

/** 2 for a term in one unit, close to 1 for a term in every unit. */
const idfFactor = (units: number, df: number): number =>
  units <= 1 ? 2 : 1 + Math.log(1 + units / df) / Math.log(1 + units);

/** Distinct terms a unit looks up in its own list before it files them in a Map too. */
const LINEAR_UNIT_TERMS = 24;

/**
 * An entry's whole name (an agent's or MCP server's) as one term (./text-encoder.ts's terms,
 * space-separated after a space: no word has a space, so it meets no word, and it stays out of
 * the vocabulary), filed under the name field. A query whose words are exactly a name's, in its
 * order, looks it up as one more clause (nameClause): someone typing "Currency Agent" or
 * "Weather" means the entry of that name, which ranked below entries that say the words more
 * often. Names of more words than a phrase may have are not filed. Skills' and tools' names are
 * not filed: a term per unit cost ~130 bytes an entry (6 units on average in bench/lib's
 * generated entries), which the heap at 1M entries (issue 22: at most 2 GiB) has no room for.
 * The same clause finds them through their words instead, kept for phrases with the number of
 * the name's (./phrases.ts PhraseWords.nameIs; phraseGroups `wholeName`). A name written with
 * hyphens that reads otherwise with them joined ("E-mail Sender", "Co-Pilot") is filed so read
 * too, an entry's, a skill's or a tool's (otherNameTerms), so both spellings typed name it.
 */
const NAME_MARK = ' ';
const nameTerm = (all: readonly string[]): string | undefined => {
  // Case aside: a name's "R" or "IT" are terms only when typed in capitals (./text-encoder.ts).
  const words = all.some(isCaseMadeTerm) ? all.filter((w) => !isCaseMadeTerm(w)) : all;
  return words.length > 0 && words.length <= MAX_PHRASE_WORDS ? NAME_MARK + words.join(' ') : undefined;
};
const isNameTerm = (term: string): boolean => term.startsWith(NAME_MARK);
/**
 * The name terms of a name written with hyphens read otherwise than `whole` (its words): with a
 * single letter before a hyphen joined to its next part ("E-mail Sender": `email sender`,
 * ./text-encoder.ts letterJoined), and with each hyphenated word as one ("Co-Pilot": `copilot`,
 * "Text-to-Speech": `texttospeech`, "e-mail-sender": `emailsender`: hyphenJoined), so the name
 * typed either way names it ("email sender" and "copilot" named no "E-mail Sender", `mail
 * sender`, and no "Co-Pilot", `co pilot`). Filed for an entry's name and a skill's or tool's
 * alike: only the few names that change so have one (a term per name cost skills and tools ~130
 * bytes an entry: nameTerm).
 */
const otherNameTerms = (text: string, whole: string | undefined): string[] => {
  const clipped = clippedField(text);
  const out: string[] = [];
  for (const reading of [letterJoined(clipped), hyphenJoined(clipped, MAX_JOINED_WORDS)]) {
    const term = reading === undefined ? undefined : nameTerm(tokenize(reading));
    if (term !== undefined && term !== whole && !out.includes(term)) out.push(term);
  }
  return out;
};
/**
 * How many words a skill's or tool's name has, as PhraseWords.nameIs compares it (./phrases.ts):
 * its `words`, plus the letters and "it" of its `text` that are no word because they were
 * written in lower case ("r studio" is `studio`, and two words long, so a skill named "Studio"
 * is not what it names; "get_a_quote" is `get quote`, three words long as "get a quote" is).
 * An entry's name term leaves such words out on both sides: "r studio" names "R Studio".
 */
const nameLength = (words: readonly string[], text: string): number => {
  const caseMade = (all: readonly string[]): number => all.filter(isCaseMadeTerm).length;
  return words.length + caseMade(tokenize(text, { maxChars: MAX_FIELD_CHARS, keepShort: true })) - caseMade(words);
};
/**
 * The words of a query of words (nameClause) with each piece written together as its one word
 * (the clauses' joined alternative, ./query.ts: "GitHub" is `git hub` and `github`), or undefined
 * when it has none. A name that is one word in lower case ("github", as most MCP servers are
 * named) has the name term `github`, which the words typed in camelCase, `git hub`, are not, so
 * "GitHub" typed ranked the server "github" as any tool saying "GitHub" in its name.
 */
const joinedWords = (clauses: readonly ParsedClause[]): string[] | undefined => {
  const words: string[] = [];
  let any = false;
  let previous: string | undefined;
  for (const c of clauses) {
    let word: string | undefined;
    let joined: string | undefined;
    for (const a of c.alternatives) {
      if (a.kind !== 'word') return undefined;
      if (a.joined) joined = a.word;
      else word = a.word;
    }
    if (joined === undefined) words.push(word!);
    // The clauses of one piece share its joined word: it is one word of the name.
    else if (joined !== previous) words.push(joined);
    any ||= joined !== undefined;
    previous = joined;
  }
  return any ? words : undefined;
};
/** A text cut as an index reads it. */
const clippedField = (text: string): string => (text.length > MAX_FIELD_CHARS ? text.slice(0, MAX_FIELD_CHARS) : text);
/** A skill's or tool's name as its terms in names: its words, and its joined terms (`xray` of "X-ray": a query of one word may be one). */
interface UnitName {
  words: readonly string[];
  joined: readonly string[];
}
/** Whether a name of `words`, `length` long, is one a query can name exactly (nameClause; PhraseWords.nameIs counts at most MAX_NAME_WORDS). */
const nameable = (words: readonly string[], length: number): boolean => words.length > 0 && words.length <= MAX_PHRASE_WORDS && length <= MAX_NAME_WORDS;

/**
 * Field texts of one unit → distinct terms, the mask of fields each occurs in, and the words of
 * each text in order, for phrases (./phrases.ts). Words written together that prose reads
 * without a part ("e-mail" is `mail`), and hyphenated words ("co-pilot"), are also filed as one
 * word (`email`, `copilot`: ./text-encoder.ts joinedTerms).
 * Most units (a card, a skill) have a few dozen terms at most: they are found in the unit's own
 * list, and only a longer unit files them in a Map as well (a Map cleared for every unit grew
 * its table anew each time: most of what indexing an entry allocated).
 */
class UnitTerms {
  private terms: string[] = [];
  private slots: number[] = [];
  /** Term → its place in `terms`, once there are more than LINEAR_UNIT_TERMS. */
  private readonly places = new Map<string, number>();
  /** phraseWord hashes of the unit's texts of two words or more, back to back, and how many texts. */
  private words: number[] = [];
  private texts = 0;
  /** Words of the unit's name (addName), and of a skill's or tool's name its terms (for the NameFilter). */
  private nameWords = 0;
  private unitName: UnitName | undefined;
  addText(text: string | undefined, field: number): void {
    if (!text) return;
    if (field === FIELD_TAGS) this.addTag(text);
    else this.addTerms(tokenize(text, { maxChars: MAX_FIELD_CHARS }), field);
    this.addJoined(text, field);
  }
  /** The text's joined terms (nameJoined), noted in `field`; returns them. */
  private addJoined(text: string, field: number): string[] {
    const clipped = clippedField(text);
    const joined = joinedTerms(clipped, MAX_JOINED_WORDS);
    if (joined.length === 0) return joined;
    for (const t of joined) this.note(t, field);
    // The text read with those words ("send e-mail" as `send email`), so a phrase written
    // either way finds it. A tag's goes with the words prose reads of it (TAG_PROSE).
    const reading = joinedReading(clipped, MAX_JOINED_WORDS);
    if (reading !== undefined) this.addPhraseText(tokenize(reading, { maxChars: MAX_FIELD_CHARS }), field === FIELD_TAGS ? TAG_PROSE : field);
    return joined;
  }
  /**
   * A tag is a label, every word of it meant: its single letters and stop words are terms too
   * ("text-to-speech" is `text to speech`, "IT-Support" `it support`, "x-ray" `x ray`), so that
   * `tags:text-to-speech` is that tag and not "text-speech", and `tags:it-support` not every
   * "support" tag, as for the tags filter (./attributes.ts tagKey). Its words without them are
   * kept as well, apart (TAG_PROSE): the words of prose drop them ("text to speech" is `text
   * speech`), and `"text to speech"` still finds the tag, but `tags:text-speech` does not.
   * Such tags are rare, so the postings they add are few.
   */
  private addTag(text: string): void {
    const words = tokenize(text, { maxChars: MAX_FIELD_CHARS, keepShort: true });
    this.addTerms(words, FIELD_TAGS);
    if (words.length > 1 && words.some(isDroppedTerm)) this.addPhraseText(tokenize(text, { maxChars: MAX_FIELD_CHARS }), TAG_PROSE);
  }
  /**
   * The unit's name, its first text (so its words start the unit's words for phrases, and
   * `nameWords` says how long it is: nameLength): its words, and with `fileWhole` (an entry's
   * own name) the whole name as one term (nameTerm).
   */
  addName(text: string | undefined, fileWhole: boolean): void {
    if (!text) return;
    const words = tokenize(text, { maxChars: MAX_FIELD_CHARS });
    this.nameWords = nameLength(words, text);
    this.addTerms(words, FIELD_NAME);
    const joined = this.addJoined(text, FIELD_NAME);
    if (!fileWhole) this.unitName = { words, joined };
    const whole = nameTerm(words);
    if (fileWhole && whole !== undefined) this.note(whole, FIELD_NAME);
    for (const other of otherNameTerms(text, whole)) this.note(other, FIELD_NAME);
  }
  private addTerms(words: readonly string[], field: number): void {
    for (const t of words) this.note(t, field);
    this.addPhraseText(words, field);
  }
  /**
   * The words of one text, in order, kept for phrases as words of `field` (a FIELD_* bit or
   * TAG_PROSE), salted by the text's parity (./phrases.ts): a text of one word says no phrase.
   */
  private addPhraseText(words: readonly string[], field: number): void {
    if (words.length < 2 || this.words.length >= MAX_PHRASE_UNIT_WORDS) return;
    const salt = phraseSalt(field, this.texts++ & 1);
    const n = Math.min(words.length, MAX_PHRASE_UNIT_WORDS - this.words.length);
    for (let i = 0; i < n; i++) this.words.push(phraseWord(termHash(words[i]!), salt));
  }
  addTexts(texts: readonly string[], field: number): void {
    for (const t of texts) this.addText(t, field);
  }
  take(): { terms: string[]; slots: number[]; words: number[]; nameWords: number; unitName: UnitName | undefined } {
    const taken = { terms: this.terms, slots: this.slots, words: this.words, nameWords: this.nameWords, unitName: this.unitName };
    this.terms = [];
    this.slots = [];
    this.words = [];
    this.texts = 0;
    this.nameWords = 0;
    this.unitName = undefined;
    if (this.places.size > 0) this.places.clear();
    return taken;
  }
  /** Term `t` seen in `field`: its mask gains the field, or it joins the unit's terms (up to MAX_UNIT_TERMS). */
  private note(t: string, field: number): void {
    const terms = this.terms;
    let at = -1;
    if (terms.length <= LINEAR_UNIT_TERMS) {
      for (let i = 0; i < terms.length; i++) {
        if (terms[i] === t) {
          at = i;
          break;
        }
      }
    } else {
      at = this.places.get(t) ?? -1;
    }
    if (at >= 0) {
      this.slots[at]! |= field;
      return;
    }
    if (terms.length >= MAX_UNIT_TERMS) return;
    terms.push(t);
    this.slots.push(field);
    if (terms.length === LINEAR_UNIT_TERMS + 1) terms.forEach((term, i) => this.places.set(term, i));
    else if (terms.length > LINEAR_UNIT_TERMS + 1) this.places.set(t, terms.length - 1);
  }
}

/**
 * Scores are accumulated in fixed point (× SCORE_SCALE, always < 2^24) with the matched field
 * bits above them (<< FIELDS_SHIFT) in one Int32.
 */
const SCORE_SCALE = 1024;
const SCORE_MASK = 0xffffff;
const FIELDS_SHIFT = 24;

/** Results per entry rank one hit per entry: none folded. */
const ONE_HIT = (): number => 1;

/**
 * `seen`, by entry number: the search's stamp (SEEN_STAMP bits, `epoch << 24`: an entry whose
 * stamp is not this search's has no state) | its state + 2 (below SEEN_STAMP).
 */
const STAMP_SHIFT = 24;
const SEEN_STATE = (1 << STAMP_SHIFT) - 1;
const SEEN_STAMP = ~SEEN_STATE;
/** Stamps go up to this, then the array is cleared (one fill per 127 searches). */
const MAX_EPOCH = 127;
/** An entry's state in a search (`seen`): left out (filter, excluded word), or passes with no candidate yet. */
const ENTRY_REJECTED = -1;
const ENTRY_NO_GROUP = -2;

/** Scope codes of a posting group. */
const SCOPE_ANY = 0;
const SCOPE_ENTRY = 1;
const SCOPE_SKILL = 2;
const SCOPE_TOOL = 3;
const SCOPES = { any: SCOPE_ANY, entry: SCOPE_ENTRY, skill: SCOPE_SKILL, tool: SCOPE_TOOL } as const;

/** Units having a phrase (phraseGroups), by the mask of the fields saying it, oldest first; how many; postings read. */
interface FoundPhrase {
  slots: [mask: number, ids: number[]][];
  df: number;
  read: number;
}

/** Postings of one term (or phrase) in one slot: they all add the same to a unit's score. */
interface PostingGroup {
  /** The clause's index, and its bit. */
  clause: number;
  bit: number;
  /** Counts as a full match of the clause. */
  strong: boolean;
  /** Field mask. */
  slot: number;
  ids: ArrayLike<number>;
  /** fieldScore × IDF × variant weight × SCORE_SCALE. */
  add: number;
  /** Language id the entry must have, or ANY_LANGUAGE. */
  lang: number;
  scope: number;
  /** The term or phrase looked up (its number in the search). */
  source: number;
}

export interface SearchIndexOptions {
  /**
   * Most units a search collects as candidates. Postings are read rarest clause first, best
   * field first within a clause, newest first within a field; once this many units are
   * collected, the remaining postings only add clauses and fields to units already collected.
   * `total` then counts the collected units (a lower bound). Default DEFAULT_MAX_CANDIDATES.
   */
  maxCandidates?: number;
  /** Most postings (term occurrences) read per search, same order. Default DEFAULT_MAX_POSTINGS. */
  maxPostings?: number;
  /**
   * Postings of the budget (`maxPostings`) that testing a posting's skill or tool against a
   * skill- or tool-level filter (tags, modes, tool hints) costs on top of reading it: such a test
   * reads the unit's attributes at random, several times a posting's cost. Default
   * DEFAULT_UNIT_CHECK_COST; 0 counts only the postings.
   */
  unitCheckCost?: number;
  /**
   * A text search (results per entry) may stop collecting entries once it has read this many
   * postings with as many left, when the rest can no longer change its page (PostingsIndex.settle):
   * `total` is then a lower bound. Default SETTLE_MIN_POSTINGS; Infinity never settles.
   */
  settleAfter?: number;
  /**
   * A text search (results per entry, two clauses or more) with more postings than this (and
   * at most ten budgets) first finds the entries having most of its clauses (./conjunction.ts)
   * and reads only their postings, when at least a page of them outrank every other entry (else
   * it reads as usual): the page is then the one a full read gives, `total` a lower bound.
   * Default: `maxPostings` (searches the budget would cut); Infinity never.
   */
  conjunctionAbove?: number;
  /**
   * `total` is exact up to this many hits (IndexPage.totalExact); a listing stops counting
   * here once its page is full. Default DEFAULT_TOTAL_LIMIT (REGISTRY_SEARCH_TOTAL_LIMIT).
   */
  totalLimit?: number;
  /**
   * Filters whose entry-level bitmaps are kept (./filter-bitmaps.ts): a text search with more
   * postings than `filterBitmapsAbove` and a filter asked for before skips the postings of
   * entries the filter rules out with a bit test. Default DEFAULT_FILTER_BITMAPS; 0 keeps none.
   * Which are kept follows how often each filter is asked for (./filter-bitmaps.ts).
   */
  filterBitmaps?: number;
  /** The bytes the kept bitmaps may take together. Default DEFAULT_FILTER_BITMAP_BYTES. */
  filterBitmapBytes?: number;
  /** See `filterBitmaps`. Default DEFAULT_FILTER_BITMAPS_ABOVE postings. */
  filterBitmapsAbove?: number;
  /**
   * A listing by capabilities reads the entries offering the values (./capability-lists.ts)
   * instead of walking its recency list when they are at most this share of the list (more than
   * its total limit too: they stop where the walk would). Default DEFAULT_OFFERED_SHARE.
   */
  offeredShare?: number;
  /** Match other forms of a word (stemming in the entry's language). Default true. */
  wordForms?: boolean;
  /** Match words a typo away. Default true. */
  typos?: boolean;
  /** Typo variants are looked up for words found in fewer units than this. Default 10. */
  typoBelow?: number;
  /** Related English words from WordNet. Default true. */
  wordNet?: boolean;
  /** The operator's synonyms (./synonyms.ts), consulted before WordNet. */
  synonyms?: RelatedWords;
}

/**
 * Enough for every query of a 10,000-entry registry and most at 100,000 (generated data,
 * bench/search.ts); bounds the rest (a query for three of the commonest words) to a few ms.
 */
export const DEFAULT_MAX_CANDIDATES = 30_000;
export const DEFAULT_MAX_POSTINGS = 100_000;
/**
 * 64 filters' bitmaps, within 32 MiB: at 1,000,000 entries an entry-level filter's takes 140 KB,
 * a skill- or tool-level filter's about 2 MB with its units' verdicts (so about 16 of those).
 */
export const DEFAULT_FILTER_BITMAPS = 64;
export const DEFAULT_FILTER_BITMAP_BYTES = 32 * 2 ** 20;
/**
 * Below this many postings a search's reads of entry states stay within a few cache lines'
 * worth of work: the bitmap (and bringing it up to date) would not pay.
 */
export const DEFAULT_FILTER_BITMAPS_ABOVE = 4096;
/**
 * A listing by capabilities reads the entries offering them, one by one in random order (their
 * rows, then their records: about 0.3 µs each at 1M), instead of walking a recency list (about
 * 12 ns a member, in order) when they are fewer than this share of the list.
 */
export const DEFAULT_OFFERED_SHARE = 1 / 64;
/**
 * A unit-level filter's test of a posting reads the unit's row and attributes at random (two to
 * four cache misses at 1,000,000 entries): measured at 1M, 0.2-0.6 us against ~0.05 us for a
 * posting read and rejected on the entry's mark.
 */
export const DEFAULT_UNIT_CHECK_COST = 4;
export const DEFAULT_TYPO_BELOW = 10;

/**
 * A text search settles (stops collecting new entries, see PostingsIndex.settle) only when at
 * least this many postings were read and at least this many are left to read: a search that
 * reads fewer costs little at any size and keeps an exact `total` (SearchIndexOptions.settleAfter).
 */
export const SETTLE_MIN_POSTINGS = 8_192;
/** Pages ending deeper than this (offset + limit) are not settled early. */
const MAX_SETTLE_RANK = 2_000;
/**
 * Searches with more postings than this many budgets do not narrow (./conjunction.ts): counting
 * and narrowing cost about 5 ns a posting together, which at 1,000,000 postings and more is
 * more than a search the budget cuts costs (measured at 1M entries: 18 against 8 ms).
 */
const CONJUNCTION_MAX_BUDGETS = 10;
/** Margin for the floating-point sums compared when settling (keys differ by far more). */
const SETTLE_EPSILON = 1e-9;
/**
 * A search whose posting budget is spent before it found EXTEND_BELOW results (a selective
 * filter spends it on the postings of the entries it leaves out) reads on, once, for this share
 * of a budget more, in which a posting skipped on a bit (the filter's entry bitmap, or another
 * kind's mark: a few ns in cache) costs SKIPPED_POSTING of one read (the entry's state,
 * attributes and unit: a few hundred ns at 1,000,000 entries). Without it, searches whose
 * matches lay past the newest `maxPostings` postings answered short or empty pages: at 1M, 73 of
 * 2,000 generated searches with filters, 34 of them empty ("map" with one tag: no hits of 339);
 * with it 8, 6 of them empty, for about 0.2 ms more a filtered search on average
 * (docs/scaling.md, "Pages the budget left short").
 */
const EXTRA_BUDGET = 0.5;
/**
 * A page of results (the registry's default search limit). Not the page asked for: every page
 * of a search must read the same postings, or a cut search's totals and order would change from
 * one page to the next.
 */
const EXTEND_BELOW = 20;
const SKIPPED_POSTING = 1 / 16;
const SKIP_REFUND = 1 - SKIPPED_POSTING;

/** Multiplier of the candidate hash (Fibonacci hashing). */
const HASH_MUL = 0x9e3779b1 | 0;

/**
 * The in-memory keyword index: posting lists in typed arrays (./term-index.ts), entry records
 * and dense attributes (./entry-store.ts, ./tables.ts, ./attributes.ts), ranked per entry. Its
 * updates and removals cost what the entry has, not what the corpus has (docs/scaling.md).
 */
export class PostingsIndex implements KeywordIndex {
  private readonly maxCandidates: number;
  private readonly maxPostings: number;
  private readonly unitCheckCost: number;
  private readonly settleAfter: number;
  private readonly conjunctionAbove: number;
  private readonly totalLimit: number;
  private wordForms = true;
  private typos = true;
  private typoBelow = DEFAULT_TYPO_BELOW;
  private related: RelatedWords | undefined;
  private dictionary: WordNet | undefined;
  private readonly tables = new Tables();
  private readonly store = new EntryStore(this.tables);
  /** An owner or tag no entry has any more (Attributes.forgetUnused): its listing order goes too. */
  private readonly attrs = new Attributes(this.tables, {
    owner: (id) => this.recency.forgetOwner(id),
    tag: (id) => this.recency.forgetTag(id),
  });
  private readonly phrases = new PhraseWords(this.tables);
  /** The skills' and tools' names, so that a query naming none skips looking for them (nameClause). */
  private readonly names = new NameFilter();
  /** Searches that read postings to find skills and tools named as their query (nameClause; for tests). */
  private nameScans = 0;
  /** A term's last posting gone (TermIndex.forgetEmptied), the vocabulary forgets it too (a name term is not in it). */
  private readonly terms = new TermIndex(
    (no) => this.store.recycle(no),
    ORD_BITS,
    (term) => this.vocabulary.remove(term),
  );
  private readonly tagScratch: number[] = [];
  /** EntryIds.compare, bound once (a ranking's tie-break). */
  private readonly compareIds = (a: number, b: number): number => this.store.ids.compare(a, b);
  /** Entries newest first, in all and per owner and tag, for listings (./recency-lists.ts). */
  private readonly recency = new RecencyLists({
    entryId: (no) => this.store.ids.get(no),
    compareIds: this.compareIds,
    listSeqs: () => this.tables.listSeq,
    attributes: () => this.tables.entryAttr,
    signatures: () => this.tables.signatures,
  });
  /** The entries offering each capability value, by bucket (./capability-lists.ts): listings by capabilities. */
  private readonly capabilityLists = new CapabilityLists((no) => this.recency.generation(no));
  private readonly vocabulary = new Vocabulary();
  private readonly unitTerms = new UnitTerms();
  /** Entries per language id. */
  private readonly languageCounts = new Int32Array(LANGUAGE_COUNT);
  /** Units removed since the posting lists were last cleaned up (TermIndex.cleanup). */
  private churn = 0;
  /** Bumped by every change that may change an answer (see SearchIndex.resultsVersion). */
  private changes = 0;

  // Per-search scratch (entry rows hold the rest).
  private epoch = 0;
  /** Candidates by position: unit id, strong and weak clause bits, score | field bits, key. */
  private candIds: Int32Array = new Int32Array(0);
  private candWords: Int32Array = new Int32Array(0);
  private candWeak: Int32Array = new Int32Array(0);
  private candScore: Int32Array = new Int32Array(0);
  private candKeys: Float64Array = new Float64Array(0);
  /** Open-addressing hash set of unit id + 1: units a skill or tool filter or an excluded word rejected in this search. */
  private hash: Int32Array = new Int32Array(0);
  /** The entries whose own text has one of this search's excluded words (see exclude). */
  private excludedEntries: number[] = [];
  /** This search's skills and tools named as its query is (nameClause), and the phrase that stands for them in its plan. */
  private namedUnits: { phrase: PlanPhrase; found: FoundPhrase } | undefined;
  /**
   * Per-search state by entry number, one Int32 an entry: the search's stamp and the state
   * (SEEN_STAMP, SEEN_STATE), the state being ENTRY_REJECTED, ENTRY_NO_GROUP or the entry's
   * group (below); a listing keeps the entry's hit count there. 4 bytes an entry (0.4 MB at
   * 100,000 entries, within the CPU's L2 cache; 4 MB at 1,000,000) where an entry row takes 32:
   * the accumulation reads it for every posting.
   */
  private seen: Int32Array = new Int32Array(0);
  /**
   * A bit per entry number: set when the entry has a state in `seen` this epoch (all clear
   * between searches). 125 KB at 1,000,000 entries, in the L2 cache: the first posting of an
   * entry (most of a long search's) tests a bit here instead of reading `seen` (4 MB, a likely
   * cache miss), and writes its state there without waiting for a read.
   */
  private met: Int32Array = new Int32Array(0);
  private metDirty = false;
  /**
   * Groups: the entries with candidates in this search, numbered as first met. By group: its
   * candidate count; for results per entry its best candidate, strong and
   * weak clause bits and the head of its candidates' list (linked through candNext). Dense and
   * small, so the per-entry pass reads them in cache.
   */
  private groupHits: Int32Array = new Int32Array(0);
  private groupBest: Int32Array = new Int32Array(0);
  private groupStrong: Int32Array = new Int32Array(0);
  private groupWeak: Int32Array = new Int32Array(0);
  private groupHead: Int32Array = new Int32Array(0);
  /** By candidate position: its group, and the next candidate of its group. */
  private candGroup: Int32Array = new Int32Array(0);
  private candNext: Int32Array = new Int32Array(0);
  /** Results per entry, by group (then fused additions): the entry's best unit id and the entry's key. */
  private groupIds: Int32Array = new Int32Array(0);
  private groupKeys: Float64Array = new Float64Array(0);
  /**
   * A settled search's entries that may still reach the page: a bit per entry number (all clear
   * between searches: 125 KB at 1,000,000 entries, in the L2 cache, where `seen` takes 4 MB),
   * and the same entries listed (to clear them).
   */
  private members: Int32Array = new Int32Array(0);
  private memberEntries: Int32Array = new Int32Array(0);
  /** Min-heap of the best lower bounds while settling. */
  private settleHeap: Float64Array = new Float64Array(0);
  /** The entries having most clauses of a search (see match). */
  private readonly conjunction = new Conjunction();
  /** The entries a search's owner or tags allow (see namedEntries): a bit per entry number, clear between searches. */
  private named: Int32Array = new Int32Array(0);
  private namedWords = 0;
  /** The entries frequent filters allow, kept between searches (./filter-bitmaps.ts). */
  private readonly filterBitmaps: FilterBitmaps;
  private readonly filterBitmapsAbove: number;
  private readonly offeredShare: number;
  /** Embeddings (hybrid ranking), by entry number: int8 × dims, and a scale (0: none). */
  private dims = 0;
  private vectors: Int8Array = new Int8Array(0);
  private vectorScale: Float32Array = new Float32Array(0);
  private embedded = 0;

  constructor(options: SearchIndexOptions = {}) {
    const positive = (v: number | undefined, dflt: number): number => (v !== undefined && v > 0 ? Math.floor(v) : dflt);
    this.maxCandidates = positive(options.maxCandidates, DEFAULT_MAX_CANDIDATES);
    this.maxPostings = positive(options.maxPostings, DEFAULT_MAX_POSTINGS);
    this.unitCheckCost = options.unitCheckCost !== undefined && options.unitCheckCost >= 0 ? Math.floor(options.unitCheckCost) : DEFAULT_UNIT_CHECK_COST;
    this.settleAfter = options.settleAfter === Infinity ? Infinity : positive(options.settleAfter, SETTLE_MIN_POSTINGS);
    this.conjunctionAbove = options.conjunctionAbove === Infinity ? Infinity : positive(options.conjunctionAbove, this.maxPostings);
    this.totalLimit = positive(options.totalLimit, DEFAULT_TOTAL_LIMIT);
    this.filterBitmaps = new FilterBitmaps(
      options.filterBitmaps !== undefined && options.filterBitmaps >= 0 ? options.filterBitmaps : DEFAULT_FILTER_BITMAPS,
      options.filterBitmapBytes !== undefined && options.filterBitmapBytes >= 0 ? options.filterBitmapBytes : DEFAULT_FILTER_BITMAP_BYTES,
    );
    this.filterBitmapsAbove = options.filterBitmapsAbove !== undefined && options.filterBitmapsAbove >= 0 ? Math.floor(options.filterBitmapsAbove) : DEFAULT_FILTER_BITMAPS_ABOVE;
    this.offeredShare = options.offeredShare !== undefined && options.offeredShare >= 0 ? options.offeredShare : DEFAULT_OFFERED_SHARE;
    this.setMatching(options);
  }

  /**
   * Changes how query words are expanded (word forms, typos, WordNet, synonyms), as the
   * constructor's options do; the index itself is unchanged, so one index can be measured
   * with each (bench/search.ts).
   */
  setMatching(options: Pick<SearchIndexOptions, 'wordForms' | 'typos' | 'typoBelow' | 'wordNet' | 'synonyms'>): void {
    this.changes++;
    this.wordForms = options.wordForms ?? true;
    this.typos = options.typos ?? true;
    this.typoBelow = options.typoBelow !== undefined && options.typoBelow > 0 ? Math.floor(options.typoBelow) : DEFAULT_TYPO_BELOW;
    this.dictionary = options.wordNet === false ? undefined : (this.dictionary ?? new WordNet());
    this.related = combineRelatedWords([options.synonyms, this.dictionary]);
  }

  /** Sizes of the parts that relevance features add (bench/search.ts). */
  get stats(): {
    vocabularyTerms: number;
    /** Terms with postings (the vocabulary's, and the names filed whole). */
    indexedTerms: number;
    phraseBytes: number;
    embeddingBytes: number;
    filterBitmaps: number;
    filterVerdicts: number;
    filterBitmapBytes: number;
    filterBitmapsBuilt: number;
    /** Postings of the capability lists (stale ones included) and the bytes of their arena. */
    capabilityPostings: number;
    capabilityBytes: number;
    /** Per attribute dictionary, the values known and the bound of their ids (./attributes.ts). */
    attributes: Attributes['dictionaries'];
    /** Listing orders held by owner and by tag (./recency-lists.ts). */
    listingLists: { owners: number; tags: number };
    /** Bytes of the filter of skill and tool names, and the searches that looked for units so named (nameClause). */
    nameFilterBytes: number;
    nameScans: number;
  } {
    const kept = this.filterBitmaps.stats;
    const offered = this.capabilityLists.size;
    return {
      capabilityPostings: offered.postings,
      capabilityBytes: offered.arena * 4,
      vocabularyTerms: this.vocabulary.size,
      indexedTerms: this.terms.termCount,
      phraseBytes: this.phrases.bytes,
      embeddingBytes: this.vectors.byteLength + this.vectorScale.byteLength,
      filterBitmaps: kept.bitmaps,
      filterVerdicts: kept.verdicts,
      filterBitmapBytes: kept.bytes,
      filterBitmapsBuilt: kept.built,
      attributes: this.attrs.dictionaries,
      listingLists: this.recency.listCounts,
      nameFilterBytes: this.names.bytes,
      nameScans: this.nameScans,
    };
  }

  get size(): number {
    return this.store.size;
  }

  get resultsVersion(): number {
    return this.changes;
  }

  /**
   * Every structure as it is now (copies, or parts left unchanged until `release`: see
   * SavedState), for ./snapshot-file.ts to write while the index goes on changing. Embeddings
   * are not included (hybrid ranking re-embeds at start).
   */
  saveState(): SavedState {
    const state: IndexState = new Map();
    this.tables.save(state, this.store.entryBound, this.store.unitBound);
    this.store.save(state);
    this.attrs.save(state);
    this.phrases.save(state);
    this.names.save(state);
    const release = this.terms.save(state);
    this.vocabulary.save(state);
    this.recency.save(state);
    this.capabilityLists.save(state);
    state.set('index.languageCounts', this.languageCounts.slice());
    state.set('index.churn', this.churn);
    return { parts: state, release };
  }

  /** Takes over a saved state; only into a new, empty index. Throws when the state is not one this code saved. */
  loadState(state: IndexState): void {
    if (this.store.entryBound > 0) throw new Error('PostingsIndex: a saved state loads only into an empty index');
    this.changes++;
    this.filterBitmaps.clear();
    this.tables.load(state);
    this.store.load(state);
    this.attrs.load(state);
    this.phrases.load(state);
    this.names.load(state);
    // The vocabulary first: the terms forget any saved without postings, and tell it.
    this.vocabulary.load(state);
    this.terms.load(state);
    this.languageCounts.set(part<Int32Array>(state, 'index.languageCounts'));
    this.churn = part(state, 'index.churn');
    this.recency.load(state);
    this.capabilityLists.load(state);
    // The attribute values an older release saved that no entry has (after the recency lists,
    // which go with them).
    this.attrs.forgetUnused();
  }

  /** The owner and tags whose recency lists entry number `no` is in. */
  private listsOf(no: number): { ownerId: number; tagIds: readonly number[] } {
    const row = no << E_SHIFT;
    const rows = this.tables.entries;
    // The tag array is reused: read at once by the caller.
    return { ownerId: rows[row + E_OWNER]!, tagIds: this.attrs.tagsOf(rows[row + E_BASE]!, rows[row + E_COUNT]!, this.tagScratch) };
  }

  upsert(entry: IndexedEntry): void {
    this.changes++;
    const old = this.store.get(entry.id);
    if (old) this.drop(old);
    const d: EntryDescription = entry.description;
    const unitCount = Math.min(MAX_UNITS_PER_ENTRY, 1 + d.skills.length + d.tools.length);
    const lang = languageId(entry.language) ?? detectEntryLanguage(d);
    const { no, base } = this.store.allocate(unitCount);
    const record: EntryRecord = {
      no,
      id: entry.id,
      kind: d.kind,
      listSeq: entry.listSeq,
      name: d.name,
      description: d.description,
      interfaces: d.interfaces.map((i) => ({ ...i })),
      skills: d.skills.map((k) => ({ id: k.id, name: k.name })),
      tools: d.tools.map((t) => ({ name: t.name })),
      verified: entry.verified === true,
      kid: entry.verified === true ? entry.kid : undefined,
      jwks: entry.verified === true ? entry.jwks : undefined,
      unitCount,
      language: lang,
      ...(entry.health ? { health: { ...entry.health } } : {}),
      ...(entry.drift !== undefined ? { drift: entry.drift } : {}),
      ...(entry.source ? { source: { ...entry.source } } : {}),
    };
    const a = this.attrs;
    const u = this.unitTerms;
    const defaultIn = d.defaultInputModes.map(mimeKey);
    const defaultOut = d.defaultOutputModes.map(mimeKey);
    let entrySet = false;
    try {
      a.setEntry(no, d.kind === 'mcp-server', d.streaming, record.verified, entry.owner, d.interfaces, d.protocolVersion, lang, entry.health);
      entrySet = true;
      a.setCapabilities(no, offeredCapabilities(record.skills, record.tools));
      u.addName(d.name, true);
      u.addText(d.description, FIELD_DESCRIPTION);
      u.addText(d.provider, FIELD_PROVIDER);
      this.index(unitId(no, 0), base, lang);
      a.setSelf(base);
      for (let ord = 1; ord < unitCount; ord++) {
        const k = d.skills[ord - 1];
        if (k) {
          u.addName(k.name, false);
          u.addTexts(k.tags, FIELD_TAGS);
          u.addText(k.description, FIELD_DESCRIPTION);
          u.addTexts(k.examples, FIELD_EXAMPLES);
          this.index(unitId(no, ord), base + ord, lang);
          a.setSkill(no, base + ord, {
            tags: [...new Set(k.tags.map(tagKey).filter(Boolean))],
            inputModes: k.inputModes?.length ? k.inputModes.map(mimeKey) : defaultIn,
            outputModes: k.outputModes?.length ? k.outputModes.map(mimeKey) : defaultOut,
          });
          continue;
        }
        const t = d.tools[ord - 1 - d.skills.length]!;
        u.addName(t.name, false);
        u.addText(t.title, FIELD_TITLE);
        u.addText(t.annotationTitle, FIELD_TITLE);
        u.addText(t.description, FIELD_DESCRIPTION);
        this.index(unitId(no, ord), base + ord, lang);
        a.setTool(
          no,
          base + ord,
          (t.hints.readOnlyHint ? HINT_READ_ONLY : 0) |
            (t.hints.destructiveHint ? HINT_DESTRUCTIVE : 0) |
            (t.hints.idempotentHint ? HINT_IDEMPOTENT : 0) |
            (t.hints.openWorldHint ? HINT_OPEN_WORLD : 0),
        );
      }
    } catch (err) {
      // Leave nothing half-indexed behind.
      u.take();
      for (let ord = 0; ord < unitCount; ord++) {
        a.clearUnit(base + ord);
        this.phrases.clear(base + ord);
      }
      if (entrySet) a.clearEntry(no);
      this.store.discard(no, unitCount);
      this.terms.removeEntry(no);
      this.terms.forgetEmptied();
      a.forgetUnused();
      throw err;
    }
    this.terms.commit(no);
    if (this.names.full) this.rebuildNames();
    // The old version's words the new one has not kept (kept ones are not forgotten and filed again).
    this.terms.forgetEmptied();
    this.store.commit(record);
    this.languageCounts[lang]!++;
    const lists = this.listsOf(no);
    this.recency.add(no, lists.ownerId, lists.tagIds);
    // After the lists: its postings carry the generation they gave the number.
    this.capabilityLists.add(no, offeredCapabilities(record.skills, record.tools));
    // The old version's owner, tags, modes and interface list the new one has not kept.
    a.forgetUnused();
  }

  remove(id: string): void {
    this.changes++;
    const old = this.store.get(id);
    if (!old) return;
    this.drop(old);
    this.terms.forgetEmptied();
    this.attrs.forgetUnused();
  }

  searchNow(query: IndexQuery): IndexPage {
    return this.search(query);
  }

  listingSteps(every: number, below = Infinity, until = -Infinity, shown: ListingShown = {}): { count: number; places: number[] } {
    const seqs = this.tables.listSeq;
    const places: number[] = [];
    let count = 0;
    const filter = new CompiledFilter(shown.filter, this.attrs, { hideUnverifiedAgents: shown.hideUnverifiedAgents });
    if (filter.impossible) return { count, places };
    this.recency.all.walk(
      (no) => {
        const seq = seqs[no]!;
        if (seq < until) return false;
        if (!filter.entryFree && !filter.entryPasses(no)) return true;
        if (++count % every === 0) places.push(seq);
        return true;
      },
      undefined,
      below,
    );
    return { count, places };
  }

  search(query: IndexQuery): IndexPage {
    let onlyEntry: number | undefined;
    if (query.onlyId !== undefined) {
      onlyEntry = this.store.numberOf(query.onlyId);
      if (onlyEntry === undefined) return { hits: [], total: 0 };
    }
    const filter = new CompiledFilter(query.filter, this.attrs, {
      hideUnhealthyBefore: query.hideUnhealthyBefore,
      hideUnverifiedAgents: query.hideUnverifiedAgents,
      onlyEntry,
      hasCapability: (no, asked) => this.store.hasCapability(no, asked),
    });
    // One entry the filter rules out is no hit, whatever the text: skip planning the query.
    if (onlyEntry !== undefined && !this.mayPass(filter, onlyEntry)) return { hits: [], total: 0 };
    // A filter no entry can pass (an owner no entry has, contradictory keys): nothing, whatever
    // the text, and which key left nothing, as a query without searchable words says why.
    if (filter.impossible) return filter.impossibleReason === undefined || onlyEntry !== undefined ? { hits: [], total: 0 } : { hits: [], total: 0, reason: filter.impossibleReason };
    const offset = Number.isFinite(query.offset) ? Math.max(0, Math.floor(query.offset)) : 0;
    const limit = Number.isFinite(query.limit) ? Math.min(MAX_LIMIT, Math.max(0, Math.floor(query.limit))) : 0;
    const perEntry = (query.resultsPer ?? 'entry') !== ('match' satisfies ResultsPer);
    const totalLimit = query.totalLimit !== undefined && query.totalLimit > 0 ? Math.floor(query.totalLimit) : this.totalLimit;
    const parsed = parseQuery(query.text);
    this.nextEpoch();
    if (this.seen.length < this.store.entryBound) {
      const seen = new Int32Array(Math.max(1024, this.store.entryBound * 2));
      seen.set(this.seen);
      this.seen = seen;
    }
    this.met = bitmapOf(this.met, bitmapWords(this.store.entryBound));
    if (!parsed.hasText) return this.list(filter, offset, limit, perEntry, undefined, totalLimit);
    const plan = planQuery(
      parsed,
      { vocabulary: this.vocabulary, postings: (t) => this.postingCount(t) },
      {
        wordForms: this.wordForms,
        typos: this.typos,
        typoBelow: this.typoBelow,
        related: this.related,
        dictionary: this.dictionary,
        languages: this.languageMask(),
      },
    );
    const excluded = this.exclude(plan.excluded);
    this.namedUnits = undefined;
    const named = this.nameClause(parsed, query.text ?? '', plan.clauses);
    if (named) plan.clauses.push(named);
    if (plan.clauses.length === 0) {
      // Only exclusions ("-beta"): list what is left; no searchable words at all: nothing, and
      // why, when the text had none (its words all stop words or single letters, as "the").
      if (plan.excluded.length > 0) return this.list(filter, offset, limit, perEntry, excluded, totalLimit);
      return parsed.clauses.length === 0 ? { hits: [], total: 0, reason: noWordsReason(query.text ?? '') } : { hits: [], total: 0 };
    }
    const semantic = perEntry && query.embedding && this.embedded > 0 ? this.quantizeQuery(query.embedding) : undefined;
    // A caller that asks for exact counts (a watch) gets them up to its limit: a search stops early
    // (settles) only past it. Other searches settle once their pages are decided.
    const exactTo = query.totalLimit !== undefined && query.totalLimit > 0 ? Math.floor(query.totalLimit) : 0;
    return this.match(plan.clauses, excluded, filter, offset, limit, perEntry, semantic, exactTo);
  }

  /**
   * One more clause when the query's words are exactly the name of an entry, a skill or a tool,
   * in order (case, accents, spacing and punctuation aside: the same terms, so `get_weather`,
   * `getWeather`, `get-weather` and "Get Weather" are one name; and a piece written together as
   * its one word, joinedWords: "GitHub" names "github"): the entries and units so named
   * match it, so they rank above units that have the words but another name ("get weather
   * forecast", or the words in a description). Only for a query of plain words and quoted
   * phrases, searched in any field or in names, in one scope; and only when something has that
   * name, so other queries keep their clauses (and a query of one word its one-clause ranking).
   *
   * A query of one word that nothing has as typed, only a typo away (`planned`: its clause has
   * no strong term), is taken for the name its nearest such word is, if something has that name:
   * "Sumarizer" names "Summarizer". It matched every "summarizer" alike (a typo each), so the
   * agent of that name ranked as any entry saying it ("Quick Summarizer" above it, by its newer
   * place). Its clause is weak, as the typo is: it counts for half a word, the same as the typo.
   */
  private nameClause(parsed: ParsedQuery, text: string, planned: readonly PlanClause[]): PlanClause | undefined {
    const clauses = parsed.clauses;
    if (clauses.length === 0 || clauses.length >= MAX_CLAUSES) return undefined;
    for (const c of clauses) {
      // A word's joined alternative ("github" of "GitHub") is no word of the name.
      if (c.alternatives.filter((a) => a.kind !== 'word' || !a.joined).length !== 1 || (c.fields !== 0 && c.fields !== FIELD_NAME) || c.scope !== clauses[0]!.scope) return undefined;
    }
    // The query's words as typed, a repeated one too: the clauses keep "Echo Echo" as one "echo".
    // Else without its fillers ("github mcp server": `github`), or with each piece written
    // together as its one word ("GitHub" names the server "github").
    const scope = clauses[0]!.scope;
    const subject = parsed.subjectWords;
    const joined = joinedWords(clauses);
    const named =
      this.namedAs(parsed.words, text, 1, scope) ??
      (subject && subject.length > 0 ? this.namedAs(subject, subject.join(' '), 1, scope) : undefined) ??
      (joined ? this.namedAs(joined, joined.join(' '), 1, scope) : undefined);
    if (named !== undefined || parsed.words.length !== 1) return named;
    const only = planned[0];
    if (only === undefined) return undefined;
    // A word read as the words of a name ("getweather": `get weather`, ./expansion.ts addSplits)
    // names what has that name: "getWeather" and "get_weather" rank above "GetWeatherTool".
    for (const p of only.phrases) {
      const meant = p.weight === 1 && !p.completion ? this.namedAs(p.words, p.words.join(' '), 1, clauses[0]!.scope) : undefined;
      if (meant !== undefined) return meant;
    }
    if (only.phrases.length > 0 || only.terms.some((t) => t.strong)) return undefined;
    for (const t of only.terms) {
      const meant = t.typo ? this.namedAs([t.term], text, t.weight, clauses[0]!.scope) : undefined;
      if (meant !== undefined) return meant;
    }
    return undefined;
  }

  /**
   * The name clause (nameClause) of the name `words`, worth `weight` (1: the words as typed,
   * strong; less: a typo's, weak), or undefined when no entry, skill or tool has that name.
   */
  private namedAs(words: readonly string[], text: string, weight: number, scope: Scope): PlanClause | undefined {
    const term = nameTerm(words);
    const entries = term !== undefined && this.terms.count(term) > 0;
    // Skills and tools so named, found now (their units are the clause's postings: groupsOf),
    // unless none has that name: reading the rarest word's postings cost every search.
    const length = nameLength(words, text);
    const found = nameable(words, length) && this.names.mayHold(words, length) ? this.findNamed(words, length) : undefined;
    const units = found !== undefined && found.df > 0;
    if (!entries && !units) return undefined;
    const strong = weight === 1;
    const phrase: PlanPhrase = { words, weight, strong };
    if (units) this.namedUnits = { phrase, found };
    return {
      terms: entries ? [{ term: term!, weight, strong, lang: ANY_LANGUAGE }] : [],
      phrases: units ? [phrase] : [],
      fields: FIELD_NAME,
      scope,
    };
  }

  /**
   * The entries a search's filter may pass, as bits (`named`), when marking them costs less than
   * the random reads it saves (a few hundred ns a posting of another entry, at 1,000,000
   * entries): the owner's or tags' lists (`listedEntries`), or else those offering a capability
   * it asks for, when fewer than an eighth of the postings (each a random read of its
   * generation); else undefined. A superset (stale members, other values sharing a capability
   * bucket): the filter's own tests still run on what passes.
   */
  private namedEntries(filter: CompiledFilter, postings: number): Int32Array | undefined {
    return this.listedEntries(filter, postings) ?? this.offeredBits(filter, Math.min(this.store.entryBound / 4, postings / 8));
  }

  /**
   * The entries a filter's bitmap is built from when it is first kept (./filter-bitmaps.ts
   * build): those of the owner's or tags' lists, or those offering a capability asked for (a
   * superset either way), as bits in `named`; undefined (every entry number) when the filter
   * names none. Marking them costs less than the full pass it replaces, however many postings
   * the search has.
   */
  private bitmapWithin(filter: CompiledFilter): Int32Array | undefined {
    return this.listedEntries(filter, Infinity) ?? this.offeredBits(filter, Infinity);
  }

  /**
   * The members of the filter's owner's or tags' recency lists (the shorter), as bits in
   * `named`, when they are a quarter of the index at most and at most 16 a posting to read
   * (about 1 ns a member to mark); else undefined.
   */
  private listedEntries(filter: CompiledFilter, postings: number): Int32Array | undefined {
    let lists: RecencyList[] | undefined;
    let size = Infinity;
    if (filter.ownerId >= 0) {
      const list = this.recency.owner(filter.ownerId);
      lists = list ? [list] : [];
      size = list?.size ?? 0;
    }
    if (filter.tagIds) {
      const tagLists = [...filter.tagIds].map((t) => this.recency.tag(t)).filter((l): l is RecencyList => l !== undefined);
      const tagged = tagLists.reduce((sum, l) => sum + l.size, 0);
      if (tagged < size) {
        lists = tagLists;
        size = tagged;
      }
    }
    if (!lists || size * 4 > this.store.entryBound || size > postings * 16) return undefined;
    const named = this.namedRoom();
    for (const list of lists) list.mark(named);
    return named;
  }

  /** The entries offering a capability the filter asks for (./capability-lists.ts: a superset), as bits in `named`, when at most `atMost`; else undefined. */
  private offeredBits(filter: CompiledFilter, atMost: number): Int32Array | undefined {
    const asked = filter.askedCapabilities;
    if (asked === undefined) return undefined;
    const offering: number[] = [];
    if (!this.capabilityLists.offering(asked, atMost, offering)) return undefined;
    const named = this.namedRoom();
    for (const no of offering) named[no >>> 5]! |= 1 << (no & 31);
    return named;
  }

  /** `named`, sized for every entry number and empty, to be marked (until `clearNamed`). */
  private namedRoom(): Int32Array {
    const words = bitmapWords(this.store.entryBound);
    this.named = bitmapOf(this.named, words);
    this.namedWords = words;
    return this.named;
  }

  /** Clears `named` (what namedEntries or bitmapWithin marked). */
  private clearNamed(): void {
    if (this.namedWords > 0) {
      this.named.fill(0, 0, this.namedWords);
      this.namedWords = 0;
    }
  }

  /** A new search: every entry's state in `seen` (stamped with the epoch) becomes unknown. */
  private nextEpoch(): void {
    if (this.metDirty) {
      this.met.fill(0);
      this.metDirty = false;
    }
    if (++this.epoch > MAX_EPOCH) {
      this.epoch = 1;
      this.seen.fill(0);
    }
  }

  /** Whether entry number `no` (or, with a skill- or tool-level filter, one of its units) passes the filter's attributes. */
  private mayPass(filter: CompiledFilter, no: number): boolean {
    if (!filter.entryFree && !filter.entryPasses(no)) return false;
    if (!filter.unitLevel) return true;
    const row = no << E_SHIFT;
    const base = this.tables.entries[row + E_BASE]!;
    const count = this.tables.entries[row + E_COUNT]!;
    for (let ord = 0; ord < count; ord++) if (filter.unitPasses(base + ord)) return true;
    return false;
  }

  private languageMask(): number {
    let mask = 0;
    for (let l = 0; l < LANGUAGE_COUNT; l++) if (this.languageCounts[l]! > 0) mask |= 1 << l;
    return mask;
  }

  /** The skills and tools named `words`, `length` long (phraseGroups `wholeName`). */
  private findNamed(words: readonly string[], length: number): FoundPhrase {
    this.nameScans++;
    return this.phraseGroups(words, FIELD_NAME, this.maxPostings, true, length);
  }

  /**
   * The name filter built anew from the entries' records, for twice the skills and tools they
   * have (at least): when as many names were added as it was sized for (an index that doubled),
   * it forgets the removed units' names too.
   */
  private rebuildNames(): void {
    this.names.reset(2 * this.store.unitCount);
    for (const no of this.store.liveNumbers()) {
      const r = this.store.record(no);
      // Units 1.. are the skills, then the tools, up to the entry's unit count (upsert).
      const units = Math.min(r.unitCount - 1, r.skills.length + r.tools.length);
      for (let i = 0; i < units; i++) this.addName((i < r.skills.length ? r.skills[i]! : r.tools[i - r.skills.length]!).name);
    }
  }

  /** Notes a skill's or tool's name in the name filter, as UnitTerms.addName reads it. */
  private addName(text: string): void {
    if (!text) return;
    const words = tokenize(text, { maxChars: MAX_FIELD_CHARS });
    this.noteName({ words, joined: joinedTerms(clippedField(text), MAX_JOINED_WORDS) }, nameLength(words, text));
  }

  /**
   * Notes a skill's or tool's name, `length` long, in the name filter: its words, and each of its
   * joined terms alone, since a query of one word finds the units having it in their names
   * (phraseGroups) and compares only the name's length (PhraseWords.nameIs): `xray` names "X-ray".
   */
  private noteName(name: UnitName, length: number): void {
    if (nameable(name.words, length)) this.names.add(name.words, length);
    for (const j of name.joined) if (length <= MAX_NAME_WORDS) this.names.add([j], length);
  }

  private postingCount(term: string): number {
    return this.terms.count(term);
  }

  private index(id: number, slot: number, lang: number): void {
    const { terms, slots, words, nameWords, unitName } = this.unitTerms.take();
    if (unitName !== undefined) this.noteName(unitName, nameWords);
    for (const t of terms) if (!isNameTerm(t)) this.vocabulary.add(t, lang);
    this.terms.add(id, terms, slots);
    this.phrases.set(slot, words, nameWords);
  }

  private drop(record: EntryRecord): void {
    const lists = this.listsOf(record.no);
    this.recency.remove(record.no, lists.ownerId, lists.tagIds);
    const base = this.tables.entries[(record.no << E_SHIFT) + E_BASE]!;
    for (let ord = 0; ord < record.unitCount; ord++) {
      this.attrs.clearUnit(base + ord);
      this.phrases.clear(base + ord);
    }
    this.attrs.clearEntry(record.no);
    this.languageCounts[record.language]!--;
    this.clearEmbedding(record.no);
    this.store.release(record);
    // Hands the number back to the store once no posting names it.
    this.terms.removeEntry(record.no);
    this.attrs.unhealthySince.delete(record.no);
    this.attrs.maybeCompact(() => this.store.liveUnitSlots());
    this.phrases.maybeCompact(() => this.store.liveUnitSlots());
    this.churn += record.unitCount;
    // Long lists keep a few dead postings, which hold their entries' numbers back: once in a
    // while, as many units removed as the index has, all of them go (terms go as their last
    // posting does, see TermIndex).
    if (this.churn > Math.max(100_000, 2 * this.store.unitCount)) {
      this.churn = 0;
      this.terms.cleanup();
    }
  }

  private ensureCandidates(n: number): void {
    if (this.candIds.length >= n) return;
    const size = Math.max(1024, n, this.candIds.length * 2);
    const grow = (a: Int32Array): Int32Array => {
      const out = new Int32Array(size);
      out.set(a);
      return out;
    };
    this.candIds = grow(this.candIds);
    this.candWords = grow(this.candWords);
    this.candWeak = grow(this.candWeak);
    this.candScore = grow(this.candScore);
    const keys = new Float64Array(size);
    keys.set(this.candKeys);
    this.candKeys = keys;
  }

  /** Room for `n` candidates' groups (match only: a listing needs none). */
  private ensureGroups(n: number): void {
    if (this.candGroup.length >= n) return;
    const size = Math.max(1024, n, this.candGroup.length * 2);
    this.candGroup = new Int32Array(size);
    this.candNext = new Int32Array(size);
    this.groupHits = new Int32Array(size);
    this.groupBest = new Int32Array(size);
    this.groupStrong = new Int32Array(size);
    this.groupWeak = new Int32Array(size);
    this.groupHead = new Int32Array(size);
  }

  /** A cleared rejection hash of at least 2 × `n` slots; returns its bit count. */
  private clearHash(n: number): number {
    let bits = 10;
    while (1 << bits < 2 * n) bits++;
    const size = 1 << bits;
    if (this.hash.length < size) this.hash = new Int32Array(size);
    else this.hash.fill(0, 0, size);
    return bits;
  }

  /**
   * Applies excluded clauses: stamps entries whose own text has one as rejected for this search
   * (ENTRY_REJECTED) and returns the other units that have one (undefined when there are none).
   */
  private exclude(clauses: readonly PlanClause[]): Set<number> | undefined {
    const entries: number[] = [];
    this.excludedEntries = entries;
    if (clauses.length === 0) return undefined;
    const units = new Set<number>();
    for (const g of this.groupsOf(clauses, 0)) {
      for (let i = 0; i < g.ids.length; i++) {
        const id = g.ids[i]!;
        if (g.lang !== ANY_LANGUAGE && this.languageOf(id as number) !== g.lang) continue;
        if (g.scope !== SCOPE_ANY && !this.inScope(id as number, g.scope)) continue;
        if ((id & ORD_MASK) === 0) entries.push(id >>> ORD_BITS);
        else units.add(id);
      }
    }
    this.rejectExcluded();
    return units;
  }

  /**
   * Stamps the search's excluded entries (exclude) rejected in the current epoch: when the
   * search starts and again when it restarts in a new epoch (a conjunction that did not decide
   * the page), which would otherwise forget them.
   */
  private rejectExcluded(): void {
    const seen = this.seen;
    const met = this.met;
    const rejected = (this.epoch << STAMP_SHIFT) | (ENTRY_REJECTED + 2);
    for (const e of this.excludedEntries) {
      seen[e] = rejected;
      met[e >>> 5]! |= 1 << (e & 31);
    }
    if (this.excludedEntries.length > 0) this.metDirty = true;
  }

  private languageOf(id: number): number {
    return this.tables.marks[id >>> ORD_BITS]! & M_LANG_MASK;
  }

  private inScope(id: number, scope: number): boolean {
    const ord = id & ORD_MASK;
    if (scope === SCOPE_ENTRY) return ord === 0;
    if (ord === 0) return false;
    const mcp = (this.tables.marks[id >>> ORD_BITS]! & M_MCP) !== 0;
    return scope === SCOPE_TOOL ? mcp : !mcp;
  }

  /** The posting groups of clauses (clause index = position + `first`), with their total postings per clause. */
  private groupsOf(clauses: readonly PlanClause[], first: number, clausePostings?: number[]): PostingGroup[] {
    const unitCount = Math.max(1, this.store.unitCount);
    const groups: PostingGroup[] = [];
    let source = 0;
    clauses.forEach((c, i) => {
      const clause = first + i;
      const bit = 1 << clause;
      const scope = SCOPES[c.scope];
      let total = 0;
      let weak = 0;
      // A variant (a longer word, another form, a typo, a related word) is rarer than the word
      // typed, often much rarer, and IDF alone would weigh it above the word: "Weatherly" (a
      // prefix match, 0.8) ranked above an agent named "Weather". It weighs at most as the word
      // typed does, when the index has that word.
      let typedIdf = 0;
      for (const t of c.terms) {
        if (t.weight < 1) continue;
        const df = this.terms.count(t.term);
        if (df > 0) typedIdf = Math.max(typedIdf, idfFactor(unitCount, df));
      }
      const idfOf = (df: number, weight: number): number => {
        const idf = idfFactor(unitCount, df);
        return weight < 1 && typedIdf > 0 && idf > typedIdf ? typedIdf : idf;
      };
      for (const t of c.terms) {
        const df = this.terms.count(t.term);
        if (df === 0) continue;
        const slots = this.terms.lookup(t.term);
        if (!t.strong) {
          // Typos and WordNet words widen a clause, never by more than MAX_WEAK_POSTINGS.
          if (weak + df > MAX_WEAK_POSTINGS) continue;
          weak += df;
        }
        total += df;
        const weight = idfOf(df, t.weight) * t.weight * SCORE_SCALE;
        source++;
        for (let slot = 0; slot < slots.length; slot++) {
          const ids = slots[slot];
          if (!ids || ids.length === 0 || (c.fields !== 0 && (slot & c.fields) === 0)) continue;
          groups.push({ clause, bit, strong: t.strong, slot, ids, add: Math.round(fieldScore(slot) * weight), lang: t.lang, scope, source });
        }
      }
      let completions = this.maxPostings;
      for (const p of c.phrases) {
        const found = p === this.namedUnits?.phrase
          ? this.namedUnits.found
          : p.completion
          ? this.phraseGroups(p.words, c.fields, completions, true)
          : p.strong
            ? this.phraseGroups(p.words, c.fields, this.maxPostings, true)
            : this.phraseGroups(p.words, c.fields, MAX_WEAK_POSTINGS - weak, false);
        if (p.completion) completions -= found.read;
        if (!p.strong) weak += found.read;
        source++;
        for (const [slot, ids] of found.slots) {
          total += ids.length;
          const weight = idfOf(found.df, p.weight) * p.weight * SCORE_SCALE;
          groups.push({ clause, bit, strong: p.strong, slot, ids, add: Math.round(fieldScore(slot) * weight), lang: ANY_LANGUAGE, scope, source });
        }
      }
      if (clausePostings) clausePostings[clause] = total;
    });
    return groups;
  }

  /**
   * Units having the phrase: the postings of its rarest word whose unit has the phrase's words
   * next to each other, in order, in one text of a field of that word's (./phrases.ts), by the
   * mask of the fields that say the phrase, and how many units that makes. A prose phrase also
   * reads a tag's words without its stop words (TAG_PROSE); a phrase in `tags:` does not, as a
   * tag is matched with its every word (`tags:text-speech` is not the tag "text-to-speech").
   * With `wholeName` (the query's nameLength), the skills and tools whose name is the phrase (of
   * that length: PhraseWords.nameIs; `fields` is then FIELD_NAME, and an entry's own name is its
   * name term).
   */
  private phraseGroups(
    words: readonly string[],
    fields: number,
    budget: number,
    partial: boolean,
    wholeName = 0,
  ): FoundPhrase {
    const slots: FoundPhrase['slots'] = [];
    let rarest: ReturnType<TermIndex['lookup']> | undefined;
    let rarestDf = Infinity;
    for (const w of words) {
      const df = this.terms.count(w);
      if (df === 0) return { slots, df: 0, read: 0 };
      if (df < rarestDf) {
        rarest = this.terms.lookup(w);
        rarestDf = df;
      }
    }
    // A weak phrase whose rarest word is too common for its budget is not looked at; a strong
    // one reads the newest `budget` postings.
    if (rarestDf > budget && !partial) return { slots, df: 0, read: 0 };
    let left = budget;
    const hashes = words.map(termHash);
    // The phrase's words as each field keeps them, in a text of either parity: made on first use.
    const salted = new Map<number, [number[], number[]]>();
    const nameRun = wholeName > 0 ? hashes.map((h) => phraseWord(h, phraseSalt(FIELD_NAME, 0))) : undefined;
    const inField = (unitSlot: number, field: number): boolean => {
      // One word: the postings said it.
      if (hashes.length < 2) return true;
      let runs = salted.get(field);
      if (!runs) {
        const run = (parity: number): number[] => hashes.map((h) => phraseWord(h, phraseSalt(field, parity)));
        salted.set(field, (runs = [run(0), run(1)]));
      }
      return this.phrases.has(unitSlot, runs[0], runs[1]);
    };
    const proseTags = (fields & FIELD_TAGS) === 0;
    const unitBase = this.tables.unitBase;
    const marks = this.tables.marks;
    let df = 0;
    rarest!.forEach((ids, slot) => {
      const asked = fields !== 0 ? slot & fields : slot;
      if (!ids || asked === 0) return;
      // Kept units by the mask of the fields saying the phrase (mostly one).
      const kept = new Map<number, number[]>();
      for (let i = ids.length - 1; i >= 0 && left > 0; i--, left--) {
        const id = ids[i] as number;
        // A removed entry's posting (./term-index.ts).
        if ((marks[id >>> ORD_BITS]! & M_LIVE) === 0) continue;
        const unitSlot = unitBase[id >>> ORD_BITS]! + (id & ORD_MASK);
        let mask = 0;
        if (nameRun !== undefined) mask = (id & ORD_MASK) !== 0 && this.phrases.nameIs(unitSlot, nameRun, wholeName) ? FIELD_NAME : 0;
        else for (let rest = asked; rest !== 0; rest &= rest - 1) {
          const field = rest & -rest;
          if (inField(unitSlot, field) || (field === FIELD_TAGS && proseTags && inField(unitSlot, TAG_PROSE))) mask |= field;
        }
        if (mask === 0) continue;
        const list = kept.get(mask);
        if (list) list.push(id);
        else kept.set(mask, [id]);
      }
      for (const [mask, list] of kept) {
        // Oldest first, as the postings file them (the accumulation reads from the end).
        slots.push([mask, list.reverse()]);
        df += list.length;
      }
    });
    return { slots, df, read: Math.min(rarestDf, budget) };
  }

  private match(
    clauses: readonly PlanClause[],
    excludedUnits: Set<number> | undefined,
    filter: CompiledFilter,
    offset: number,
    limit: number,
    perEntry: boolean,
    semantic: Float32Array | undefined,
    exactTo: number,
    conjunctive = true,
  ): IndexPage {
    // 1. Look every term up and split the postings into groups of equal contribution: one per
    //    (term, field mask) or (phrase, field mask).
    const clausePostings = new Array<number>(clauses.length).fill(0);
    let groups = this.groupsOf(clauses, 0, clausePostings);
    // A standing search asks about one entry (onlyId): keep only that entry's postings (one
    // tight pass) rather than accumulate every unit that has the words.
    const only = filter.onlyEntry;
    if (only >= 0) {
      groups = groups.map((g) => ({ ...g, ids: postingsOf(g.ids, only) }));
      clausePostings.fill(0);
      for (const g of groups) clausePostings[g.clause]! += g.ids.length;
    }
    // Rarest clause first: every unit matching all the clauses has the rarest one, so collecting
    // its units first finds them all even when the limits below cut the commoner clauses short.
    // Within a clause, best contribution first: a unit's first posting for a clause is its best.
    groups.sort(
      (a, b) => clausePostings[a.clause]! - clausePostings[b.clause]! || a.clause - b.clause || b.add - a.add || a.ids.length - b.ids.length,
    );
    let postings = 0;
    for (const g of groups) postings += g.ids.length;

    // 2. Accumulate. An entry is filtered on first sight and its verdict kept in `seen`, read
    //    first for every posting; an entry's first candidate gives it a group, whose candidates
    //    are linked (groupHead, candNext). Without duplicates possible (one group per unit at
    //    most), nothing needs deduplicating; otherwise a unit met again is looked for among its
    //    entry's candidates (a few, in arrays sized to the search, so in cache: a hash of unit
    //    ids, used before, cost a cache miss a posting), and units a skill or tool filter (or an
    //    excluded word) rejected are remembered in a hash, so they are not tested again. An
    //    entry not met before in this search has neither. The grouped total is counted on the
    //    way (an entry's first GROUP_LIMIT candidates).
    const maxCandidates = this.maxCandidates;
    this.ensureCandidates(Math.min(maxCandidates, postings));
    this.ensureGroups(Math.min(maxCandidates, postings));
    // A unit has one slot per term, so it can be met twice only through two terms or phrases.
    const dedupe = new Set(groups.map((g) => g.source)).size > 1;
    const rejectable = filter.unitLevel || excludedUnits !== undefined;
    const hashBits = dedupe && rejectable ? this.clearHash(Math.min(postings, maxCandidates * 4)) : 10;
    const hashShift = 32 - hashBits;
    const hashMask = (1 << hashBits) - 1;
    const hashRoom = 1 << (hashBits - 2);
    const hash = this.hash;
    let hashUsed = 0;
    const stamp = this.epoch << STAMP_SHIFT;
    const rejected = stamp | (ENTRY_REJECTED + 2);
    const seen = this.seen;
    const met = this.met;
    this.metDirty = true;
    const marks = this.tables.marks;
    const candIds = this.candIds;
    const candWords = this.candWords;
    const candWeak = this.candWeak;
    const candScore = this.candScore;
    const candGroup = this.candGroup;
    const groupHits = this.groupHits;
    const groupHead = this.groupHead;
    const candNext = this.candNext;
    const entryFree = filter.entryFree;
    const unitLevel = filter.unitLevel;
    const unitCheckCost = this.unitCheckCost;
    const tables = this.tables;
    const unitBase = tables.unitBase;
    let n = 0;
    let total = 0;
    let groupCount = 0;
    let budget = this.maxPostings;
    // Whether the bounds left a posting unread or a unit uncollected: `total` is then a lower bound.
    let cut = false;
    const norm = 1 / (clauses.length * MAX_WORD_SCORE * SCORE_SCALE);
    // Settling (see settle): once the page's entries are decided, the rest of the postings are
    // read only for the entries that may still be on it (`members`, a bit per entry number).
    const rank = offset + limit;
    const maySettle = perEntry && !semantic && only < 0 && limit > 0 && rank <= MAX_SETTLE_RANK;
    // A filter naming an owner or tags allows only their lists' entries, and a filter asked for
    // before only the entries of its bitmap: the others' postings are skipped with a bit test,
    // not a read of the entry's tables (the same postings are read).
    const kept =
      postings > this.filterBitmapsAbove && only < 0
        ? this.filterBitmaps.get(filter, this.tables, this.store.entryBound, () => this.bitmapWithin(filter))
        : undefined;
    const named = kept?.entries ?? this.namedEntries(filter, postings);
    // A kept bitmap holds only live entries that pass the filter's lasting tests, and every one
    // that can match (built from the owner's or tags' lists, it leaves out the others); when
    // those are all its entry-level tests, an entry it allows is not tested again (no read of
    // its mark or attributes). The units' verdicts recorded by earlier searches answer the
    // unit-level test.
    const entryDecided = kept !== undefined && filter.lastingDecides;
    const keptUnits = kept?.units;
    const kindMark = entryDecided ? -1 : filter.kindMark;
    // Many postings and two clauses or more: read only the postings of the entries having the
    // most clauses (./conjunction.ts: every clause, or all but one...), a page of them at least;
    // the others are dropped in a tight pass. Not for a caller that asks for exact counts (a watch).
    const allGroups = groups;
    let conjClauses = 0;
    if (
      conjunctive &&
      maySettle &&
      exactTo === 0 &&
      clauses.length >= 2 &&
      postings > this.conjunctionAbove &&
      postings <= this.maxPostings * CONJUNCTION_MAX_BUDGETS
    ) {
      conjClauses = this.conjunction.collect(groups, marks, this.store.entryBound, ORD_BITS, rank, named);
      if (conjClauses > 0) {
        groups = this.conjunction.narrow(groups, ORD_BITS, named);
        postings = 0;
        for (const g of groups) postings += g.ids.length;
      }
      this.conjunction.clear();
    }
    // What the loop below tests the named entries on (narrowing kept only theirs already).
    const allowed = conjClauses > 0 ? undefined : named;
    let members: Int32Array | undefined;
    let memberCount = 0;
    /** Whether a posting of an entry that passes the filter but could not reach the page was skipped. */
    let skippedOne = false;
    let nextCheck = this.settleAfter;
    let unread = postings;
    // Whether the budget was spent with fewer than EXTEND_BELOW results, and read on (EXTRA_BUDGET).
    let extended = false;
    let skipRefund = 0;
    const extend = (): boolean => {
      if (extended || (perEntry ? groupCount : total) >= EXTEND_BELOW) return false;
      extended = true;
      skipRefund = SKIP_REFUND;
      return true;
    };
    const lastClause = groups.length > 0 ? groups[groups.length - 1]!.clause : -1;
    for (let gi = 0; gi < groups.length; gi++) {
      const g = groups[gi]!;
      if (budget <= 0) {
        if (extend()) budget += this.maxPostings * EXTRA_BUDGET;
        else {
          cut = true;
          break;
        }
      }
      const read = this.maxPostings - budget;
      // Only in the last clause (the groups are in clause order): before it, an entry not met yet
      // may still match two clauses or more, which the entries met so far seldom beat.
      if (
        maySettle &&
        members === undefined &&
        read >= nextCheck &&
        g.clause === lastClause &&
        groupCount >= rank &&
        groupCount >= exactTo &&
        Math.min(budget, unread) >= this.settleAfter
      ) {
        memberCount = this.settle(groups, gi, clauses.length, n, groupCount, rank, norm);
        if (memberCount >= 0) members = this.members;
        // A check is a pass over the candidates, several times cheaper a candidate than reading
        // a posting: at most one per an eighth as many postings read.
        nextCheck = read + ((n + groupCount) >>> 3);
      }
      unread -= g.ids.length;
      const ids = g.ids;
      const bit = g.bit;
      const strong = g.strong;
      const add = g.add;
      const fields = g.slot << FIELDS_SHIFT;
      const lang = g.lang;
      const scope = g.scope;
      // Newest postings first (lists are appended to), so a cut keeps recent entries. The
      // budget ends at posting `stop`, which moves up by the cost of each unit test.
      let stop = ids.length - budget;
      let i = ids.length - 1;
      // Spent with fewer than EXTEND_BELOW results, the budget is extended once (EXTRA_BUDGET).
      for (; i >= 0 && (i >= stop || (extend() && (stop -= this.maxPostings * EXTRA_BUDGET) <= i)); i--) {
        const id = ids[i] as number;
        const e = id >>> ORD_BITS;
        if (members !== undefined) {
          // Settled: a member passed the tests below when first met; of the others, only
          // whether one that passes them was skipped matters (`total` is then a lower bound).
          if ((members[e >>> 5]! & (1 << (e & 31))) === 0) {
            if (!skippedOne && (allowed === undefined || (allowed[e >>> 5]! & (1 << (e & 31))) !== 0) && (kindMark < 0 || (marks[e]! & M_MCP) === kindMark)) skippedOne = true;
            continue;
          }
        } else {
          // Past the budget (`extended`), a posting skipped on a bit costs a fraction of one read.
          if (allowed !== undefined && (allowed[e >>> 5]! & (1 << (e & 31))) === 0) {
            stop -= skipRefund;
            continue;
          }
          // Another kind than the filter's: skipped on the entry's 1-byte mark (1 MB at 1M entries,
          // in cache) instead of its search state and attributes (4 MB each), as entryPasses would.
          if (kindMark >= 0 && (marks[e]! & M_MCP) !== kindMark) {
            stop -= skipRefund;
            continue;
          }
        }
        // An entry not met yet in this search has no state to read.
        const known = (met[e >>> 5]! & (1 << (e & 31))) !== 0;
        const state = known ? seen[e]! : 0;
        if (state === rejected) continue;
        // Skill and tool filters never take an entry's own unit: rejected without a memory read.
        if (unitLevel && (id & ORD_MASK) === 0) continue;
        if (lang !== ANY_LANGUAGE && (marks[e]! & M_LANG_MASK) !== lang) continue;
        if (scope !== SCOPE_ANY && !this.inScope(id, scope)) continue;
        let group = known ? (state & SEEN_STATE) - 2 : ENTRY_NO_GROUP;
        if (dedupe && known) {
          let pos = -1;
          for (let c = group >= 0 ? groupHead[group]! : -1; c >= 0; c = candNext[c]!) {
            if (candIds[c] === id) {
              pos = c;
              break;
            }
          }
          if (pos >= 0) {
            const w = candWords[pos]!;
            const weak = candWeak[pos]!;
            if (((w | weak) & bit) === 0) {
              if (strong) candWords[pos] = w | bit;
              else candWeak[pos] = weak | bit;
              // Scores stay below 2^24: the addition never carries into the field bits.
              candScore[pos] = (candScore[pos]! + add) | fields;
            } else {
              if (strong && (w & bit) === 0) candWords[pos] = w | bit;
              candScore[pos]! |= fields;
            }
            continue;
          }
          if (hashUsed > 0) {
            let found = false;
            for (let h = Math.imul(id, HASH_MUL) >>> hashShift, k = hash[h]!; k !== 0; h = (h + 1) & hashMask, k = hash[h]!) {
              if (k === id + 1) {
                found = true;
                break;
              }
            }
            if (found) continue;
          }
        }
        if (n >= maxCandidates) {
          cut = true;
          continue;
        }
        if (!known) {
          // Not live: a removed entry whose postings are not compacted away yet (./term-index.ts).
          group = entryDecided || ((marks[e]! & M_LIVE) !== 0 && (entryFree || filter.entryPasses(e))) ? ENTRY_NO_GROUP : ENTRY_REJECTED;
          seen[e] = stamp | (group + 2);
          met[e >>> 5]! |= 1 << (e & 31);
          if (group === ENTRY_REJECTED) continue;
        }
        let unitFails = false;
        if (unitLevel) {
          stop += unitCheckCost;
          const ord = id & ORD_MASK;
          // With kept verdicts, one read by entry number (not the unit block's base and the unit).
          unitFails = keptUnits !== undefined && ord <= VERDICT_ORDS ? !unitPassesKept(keptUnits, e, ord, filter, tables) : !filter.unitPasses(unitBase[e]! + ord);
        }
        if (unitFails || excludedUnits?.has(id)) {
          if (dedupe && hashUsed < hashRoom) {
            // The hash never fills (at most a quarter of it is used); the unit is not in it.
            let h = Math.imul(id, HASH_MUL) >>> hashShift;
            while (hash[h] !== 0) h = (h + 1) & hashMask;
            hash[h] = id + 1;
            hashUsed++;
          }
          continue;
        }
        if (group === ENTRY_NO_GROUP) {
          group = groupCount++;
          seen[e] = stamp | (group + 2);
          groupHits[group] = 0;
          groupHead[group] = -1;
        }
        if (groupHits[group]!++ < GROUP_LIMIT) total++;
        candGroup[n] = group;
        candNext[n] = groupHead[group]!;
        groupHead[group] = n;
        candIds[n] = id;
        candWords[n] = strong ? bit : 0;
        candWeak[n] = strong ? 0 : bit;
        candScore[n++] = add | fields;
      }
      // Postings left unread in this group: the budget is spent (what was read and tested).
      if (i >= 0) cut = true;
      budget = i + 1 - stop;
    }

    // Whether the work bounds (not settling, which is rank-safe) left postings or units out.
    const boundsCut = cut;
    if (members !== undefined) {
      // Postings of entries that could not reach the page were skipped: `total` is a lower bound.
      if (skippedOne) cut = true;
      const entries = this.memberEntries;
      for (let i = 0; i < memberCount; i++) members[entries[i]! >>> 5] = 0;
    }

    // 3. Relevance keys.
    const candKeys = this.candKeys;
    for (let i = 0; i < n; i++) {
      const strong = candWords[i]!;
      candKeys[i] = popcount(strong) + WEAK_CLAUSE * popcount(candWeak[i]! & ~strong) + (candScore[i]! & SCORE_MASK) * norm;
    }
    // (A kept filter bitmap stays as it is.)
    this.clearNamed();
    if (conjClauses > 0) {
      // Entries lacking a clause were not counted.
      cut = true;
      this.entryKeys(n, groupCount);
      if (this.settleHeap.length < rank) this.settleHeap = new Float64Array(Math.max(64, rank));
      // Unless a page of the entries found outrank every entry lacking a clause, read as usual.
      // When the work bounds cut even their postings short, their keys are lower bounds and the
      // page an approximation, as any cut search's is (kept: its entries have more of the words
      // than a usual read's, which would be cut too).
      const decided =
        groupCount >= rank &&
        (boundsCut ||
          nonMemberBound(allGroups, clauses.length, norm, WEAK_CLAUSE, conjClauses) + SETTLE_EPSILON <
            kthLargest(this.groupKeys, groupCount, rank, this.settleHeap));
      if (!decided) {
        this.nextEpoch();
        this.rejectExcluded();
        return this.match(clauses, excludedUnits, filter, offset, limit, perEntry, semantic, exactTo, false);
      }
    }
    const page =
      perEntry && clauses.length === 1 && !semantic
        ? this.finishPerEntryOneClause(n, groupCount, offset, limit)
        : perEntry
          ? this.finishPerEntry(n, groupCount, offset, limit, semantic ? { query: semantic, filter, excludedUnits } : undefined, conjClauses > 0)
          : this.finish(n, total, offset, limit, true);
    if (cut) page.totalExact = false;
    return page;
  }

  /**
   * Whether a search per entry can stop collecting entries before posting group `from` (rank-safe
   * early termination, as MaxScore/WAND do, but at group boundaries: postings within a group are
   * in insertion order, not in the ranking's tie order). Every bound is on relevance keys as
   * finishPerEntry computes them: an entry's key is at least its best unit's key now (unit keys
   * only grow) and, without weak variants, at least its clause count now; and at most every clause it has or that the unread groups hold (1 a clause with a
   * strong variant left, 0.5 weak only) plus the best score one of its units can reach (its score
   * now plus the largest contribution of each unread clause it has not matched). An entry with no candidate yet can get at most the unread groups' part.
   * When that is below the `rank`-th best lower bound, no such entry reaches the first `rank`
   * places, and neither does a known entry whose upper bound is below it: the page is then decided
   * among the others (the members), whose postings are still all read, so their keys, `match`,
   * `matches` and folded counts come out as a full read gives them. Returns the number of members
   * (their bits set in `members`, listed in `memberEntries`), or -1 when the page is not decided.
   */
  private settle(groups: readonly PostingGroup[], from: number, clauseCount: number, n: number, groupCount: number, rank: number, norm: number): number {
    // What the unread groups can still add: by clause, the largest contribution and whether a
    // strong variant is left.
    const maxAdd = new Array<number>(clauseCount).fill(0);
    let unreadBits = 0;
    let unreadStrong = 0;
    let unreadWeak = false;
    for (let i = from; i < groups.length; i++) {
      const g = groups[i]!;
      if (g.ids.length === 0) continue;
      unreadBits |= g.bit;
      if (g.strong) unreadStrong |= g.bit;
      else unreadWeak = true;
      if (g.add > maxAdd[g.clause]!) maxAdd[g.clause] = g.add;
    }
    let unreadScore = 0;
    for (const a of maxAdd) unreadScore += a;
    const unseenBound = popcount(unreadStrong) + WEAK_CLAUSE * popcount(unreadBits & ~unreadStrong) + unreadScore * norm;

    // Per entry (group): the best unit key now, the best unit score, the clause bits.
    if (this.groupKeys.length < groupCount) {
      this.groupIds = new Int32Array(Math.max(1024, groupCount * 2));
      this.groupKeys = new Float64Array(this.groupIds.length);
    }
    const lower = this.groupKeys;
    const bestScore = this.groupBest;
    const strongBits = this.groupStrong;
    const weakBits = this.groupWeak;
    lower.fill(-1, 0, groupCount);
    // A unit of the entry not met yet can score at most the unread clauses' best.
    bestScore.fill(unreadScore, 0, groupCount);
    strongBits.fill(0, 0, groupCount);
    weakBits.fill(0, 0, groupCount);
    const candWords = this.candWords;
    const candWeak = this.candWeak;
    const candScore = this.candScore;
    const candGroup = this.candGroup;
    for (let i = 0; i < n; i++) {
      const k = candGroup[i]!;
      const strong = candWords[i]!;
      const weak = candWeak[i]!;
      const score = candScore[i]! & SCORE_MASK;
      const key = popcount(strong) + WEAK_CLAUSE * popcount(weak & ~strong) + score * norm;
      if (key > lower[k]!) lower[k] = key;
      // The unit's score can still grow by the unread clauses it has not matched (once each).
      let most = score;
      for (let open = unreadBits & ~(strong | weak); open !== 0; open &= open - 1) most += maxAdd[31 - Math.clz32(open & -open)]!;
      if (most > bestScore[k]!) bestScore[k] = most;
      strongBits[k]! |= strong;
      weakBits[k]! |= weak;
    }

    // Without weak variants an entry's key is its best unit's key plus its other units' clauses
    // (each spreadWeight of one), so at least 1 + spreadWeight × (the clauses its units matched
    // so far - 1): its best unit has one clause or more, and one counts there at least as much.
    if (!unreadWeak) {
      const head = this.groupHead;
      const candIds = this.candIds;
      for (let k = 0; k < groupCount; k++) {
        if (weakBits[k] !== 0) continue;
        const clauses = popcount(strongBits[k]!);
        if (clauses === 0) continue;
        const least = 1 + this.spreadWeight(candIds[head[k]!]! >>> ORD_BITS) * (clauses - 1);
        if (least > lower[k]!) lower[k] = least;
      }
    }

    // The rank-th best lower bound.
    if (groupCount < rank) return -1;
    if (this.settleHeap.length < rank) this.settleHeap = new Float64Array(Math.max(64, rank));
    const threshold = kthLargest(lower, groupCount, rank, this.settleHeap);
    if (!(unseenBound + SETTLE_EPSILON < threshold)) return -1;

    // The members: known entries whose upper bound reaches the threshold.
    this.members = bitmapOf(this.members, bitmapWords(this.store.entryBound));
    if (this.memberEntries.length < groupCount) this.memberEntries = new Int32Array(Math.max(1024, groupCount * 2));
    const members = this.members;
    const entries = this.memberEntries;
    const head = this.groupHead;
    const candIds = this.candIds;
    let count = 0;
    for (let k = 0; k < groupCount; k++) {
      const strong = strongBits[k]! | unreadStrong;
      const upper = popcount(strong) + WEAK_CLAUSE * popcount((weakBits[k]! | unreadBits) & ~strong) + bestScore[k]! * norm;
      if (upper + SETTLE_EPSILON < threshold) continue;
      const e = candIds[head[k]!]! >>> ORD_BITS;
      members[e >>> 5]! |= 1 << (e & 31);
      entries[count++] = e;
    }
    return count;
  }

  /** How much a clause only an entry's other skills or tools match counts (SPREAD_UNITS), by entry number. */
  private spreadWeight(no: number): number {
    const skillsAndTools = this.tables.entries[(no << E_SHIFT) + E_COUNT]! - 1;
    return skillsAndTools <= SPREAD_UNITS ? 1 : SPREAD_UNITS / skillsAndTools;
  }

  /**
   * Per entry (group of candidates), over the first `n` candidates (keys computed): its best
   * candidate (`groupBest`), clause bits (`groupStrong`, `groupWeak`), and its best unit's id and
   * key (`groupIds`, `groupKeys`): the best unit's key plus the clauses only its other units match.
   */
  private entryKeys(n: number, groupCount: number): void {
    // Each group's best candidate and clause bits. Its candidates were linked through candNext
    // as they came, so the shown entries' other matches need no second pass.
    const candIds = this.candIds;
    const candKeys = this.candKeys;
    const candWords = this.candWords;
    const candWeak = this.candWeak;
    const candGroup = this.candGroup;
    const best = this.groupBest;
    const strongBits = this.groupStrong;
    const weakBits = this.groupWeak;
    best.fill(-1, 0, groupCount);
    for (let i = 0; i < n; i++) {
      const k = candGroup[i]!;
      if (best[k]! < 0) {
        best[k] = i;
        strongBits[k] = candWords[i]!;
        weakBits[k] = candWeak[i]!;
        continue;
      }
      strongBits[k]! |= candWords[i]!;
      weakBits[k]! |= candWeak[i]!;
      const b = best[k]!;
      if (candKeys[i]! > candKeys[b]! || (candKeys[i] === candKeys[b] && (candIds[i]! & ORD_MASK) < (candIds[b]! & ORD_MASK))) best[k] = i;
    }
    if (this.groupIds.length < groupCount) {
      this.groupIds = new Int32Array(Math.max(1024, groupCount * 2));
      this.groupKeys = new Float64Array(this.groupIds.length);
    }
    for (let k = 0; k < groupCount; k++) {
      const b = best[k]!;
      const strong = strongBits[k]!;
      this.groupIds[k] = candIds[b]!;
      // The best unit's key, plus the clauses only its other units match (less in an entry of
      // many skills or tools: SPREAD_UNITS).
      const bestBits = candWords[b]! | candWeak[b]!;
      const others = popcount(strong & ~bestBits) + WEAK_CLAUSE * popcount(weakBits[k]! & ~strong & ~bestBits);
      this.groupKeys[k] = candKeys[b]! + (others === 0 ? 0 : others * this.spreadWeight(candIds[b]! >>> ORD_BITS));
    }
  }

  /**
   * Results per entry over the first `n` candidates (keys computed), in `groupCount` groups
   * (`keyed`: entryKeys already ran).
   */
  private finishPerEntry(
    n: number,
    groupCount: number,
    offset: number,
    limit: number,
    semantic?: { query: Float32Array; filter: CompiledFilter; excludedUnits: Set<number> | undefined },
    keyed = false,
  ): IndexPage {
    if (!keyed) this.entryKeys(n, groupCount);
    const next = this.candNext;
    const candIds = this.candIds;
    const candKeys = this.candKeys;
    const best = this.groupBest;
    const head = this.groupHead;
    let count = groupCount;
    if (semantic) count = this.fuse(groupCount, semantic.query, semantic.filter, semantic.excludedUnits);
    const ranked = page(this.rankContext(this.groupIds, this.groupKeys, ONE_HIT), count, offset, limit, 1);
    const hits = ranked.map((r) => {
      // The entry's group (none when it was found by meaning alone: no words matched).
      const k = this.groupOf(r.id >>> ORD_BITS);
      if (k < 0) return this.hit(r.id, r.key, 0, undefined, 0);
      const bestPos = best[k]!;
      const others: number[] = [];
      for (let i = head[k]!; i >= 0; i = next[i]!) if (i !== bestPos) others.push(i);
      others.sort((a, b) => candKeys[b]! - candKeys[a]! || (candIds[a]! & ORD_MASK) - (candIds[b]! & ORD_MASK));
      return this.hit(
        r.id,
        r.key,
        this.candScore[bestPos]! >>> FIELDS_SHIFT,
        others.slice(0, MAX_MATCHES_PER_HIT).map((pos) => this.matchOf(candIds[pos]!, this.candScore[pos]! >>> FIELDS_SHIFT)),
        Math.max(0, others.length - MAX_MATCHES_PER_HIT),
      );
    });
    return { hits, total: count };
  }

  /** The group of entry `no` in this search, or -1 when it has no candidate. */
  private groupOf(no: number): number {
    const state = this.seen[no]!;
    return (state & SEEN_STAMP) === this.epoch << STAMP_SHIFT ? Math.max(-1, (state & SEEN_STATE) - 2) : -1;
  }

  /**
   * Results per entry for a one-clause query: an entry's key is then its best unit's key, so
   * the unit ranking cut to one hit per entry is the entry ranking, without a pass over the
   * entries; the shown entries' other matches come from one sequential scan of the candidates.
   */
  private finishPerEntryOneClause(n: number, groupCount: number, offset: number, limit: number): IndexPage {
    const candIds = this.candIds;
    const candKeys = this.candKeys;
    const candGroup = this.candGroup;
    const ranked = page(this.rankContext(candIds, candKeys, ONE_HIT), n, offset, limit, 1);
    // Each shown entry's place in `ranked`, by group (groupBest is free scratch here).
    const shownAt = this.groupBest;
    shownAt.fill(-1, 0, groupCount);
    ranked.forEach((r, k) => {
      shownAt[candGroup[r.pos]!] = k;
    });
    const others: number[][] = ranked.map(() => []);
    if (ranked.length > 0) {
      for (let i = 0; i < n; i++) {
        const k = shownAt[candGroup[i]!]!;
        if (k >= 0 && i !== ranked[k]!.pos) others[k]!.push(i);
      }
    }
    const hits = ranked.map((r, k) => {
      const list = others[k]!;
      list.sort((a, b) => candKeys[b]! - candKeys[a]! || (candIds[a]! & ORD_MASK) - (candIds[b]! & ORD_MASK));
      return this.hit(
        r.id,
        r.key,
        this.candScore[r.pos]! >>> FIELDS_SHIFT,
        list.slice(0, MAX_MATCHES_PER_HIT).map((pos) => this.matchOf(candIds[pos]!, this.candScore[pos]! >>> FIELDS_SHIFT)),
        Math.max(0, list.length - MAX_MATCHES_PER_HIT),
      );
    });
    return { hits, total: groupCount };
  }

  /**
   * Hybrid ranking: reciprocal rank fusion of the keyword ranking's first FUSION_DEPTH entries
   * and the FUSION_DEPTH entries nearest the query's embedding (among those that pass the
   * filter). Fused entries come first, by fused score (which their `score` reports); the other
   * keyword matches follow in keyword order. Rewrites the group arrays; returns their length.
   */
  private fuse(groupCount: number, query: Float32Array, filter: CompiledFilter, excludedUnits: Set<number> | undefined): number {
    const ctx = this.rankContext(this.groupIds, this.groupKeys, ONE_HIT);
    const keywordTop = selectTop(ctx, groupCount, FUSION_DEPTH);
    const fused = new Map<number, number>();
    keywordTop.forEach((pos, rank) => fused.set(pos, 1 / (RRF_K + rank + 1)));
    // Positions by entry number, for entries found by both.
    const posOf = new Map<number, number>();
    for (const pos of keywordTop) posOf.set(this.groupIds[pos]! >>> ORD_BITS, pos);
    let count = groupCount;
    this.nearest(query, filter, excludedUnits).forEach(({ no, unit }, rank) => {
      let pos = posOf.get(no);
      if (pos === undefined) {
        // A keyword match below the keyword list's depth keeps its keyword rank.
        if (this.groupOf(no) >= 0) return;
        pos = count++;
        if (this.groupIds.length <= pos) {
          const ids = new Int32Array(Math.max(1024, this.groupIds.length * 2));
          ids.set(this.groupIds);
          const keys = new Float64Array(ids.length);
          keys.set(this.groupKeys);
          this.groupIds = ids;
          this.groupKeys = keys;
        }
        this.groupIds[pos] = unit;
        posOf.set(no, pos);
      }
      fused.set(pos, (fused.get(pos) ?? 0) + 1 / (RRF_K + rank + 1));
    });
    // Above every keyword key (at most MAX_CLAUSES + 1), so fused results come first.
    for (const [pos, score] of fused) this.groupKeys[pos] = FUSED_BASE + score;
    return count;
  }

  /** The FUSION_DEPTH entries whose embedding is nearest `query` (int8, see quantizeQuery), best first. */
  private nearest(query: Float32Array, filter: CompiledFilter, excludedUnits: Set<number> | undefined): { no: number; unit: number }[] {
    const dims = this.dims;
    const vectors = this.vectors;
    const rows = this.tables.entries;
    const seen = this.seen;
    const rejected = (this.epoch << STAMP_SHIFT) | (ENTRY_REJECTED + 2);
    const top: { no: number; unit: number; sim: number }[] = [];
    let worst = -Infinity;
    const bound = this.store.entryBound;
    for (let no = 0; no < bound; no++) {
      if (this.vectorScale[no] === 0) continue;
      const row = no << E_SHIFT;
      // Rejected in this search (filter, or an excluded word in the entry's own text).
      if (seen[no] === rejected) continue;
      if (!(filter.entryFree || filter.entryPasses(no))) continue;
      let dot = 0;
      const at = no * dims;
      for (let i = 0; i < dims; i++) dot += vectors[at + i]! * query[i]!;
      const sim = dot * this.vectorScale[no]!;
      if (top.length >= FUSION_DEPTH && sim <= worst) continue;
      let unit = unitId(no, 0);
      if (filter.unitLevel) {
        const base = rows[row + E_BASE]!;
        const count = rows[row + E_COUNT]!;
        unit = -1;
        for (let ord = 1; ord < count && unit < 0; ord++) {
          if (filter.unitPasses(base + ord) && !excludedUnits?.has(unitId(no, ord))) unit = unitId(no, ord);
        }
        if (unit < 0) continue;
      }
      top.push({ no, unit, sim });
      if (top.length > FUSION_DEPTH * 2) {
        top.sort((a, b) => b.sim - a.sim);
        top.length = FUSION_DEPTH;
        worst = top[FUSION_DEPTH - 1]!.sim;
      }
    }
    top.sort((a, b) => b.sim - a.sim || a.no - b.no);
    return top.slice(0, FUSION_DEPTH);
  }

  /**
   * Stores an entry's embedding for hybrid ranking (./hybrid.ts), as int8 with one scale per
   * entry (a quarter of float32's memory; cosine order is kept to about 1%). Returns false when
   * the entry is unknown or the vector's length differs from the others'. An upsert clears it.
   */
  setEmbedding(id: string, vector: Float32Array): boolean {
    this.changes++;
    const rec = this.store.get(id);
    if (!rec || vector.length === 0) return false;
    if (this.dims === 0) this.dims = vector.length;
    if (vector.length !== this.dims) return false;
    const need = this.store.entryBound;
    if (this.vectorScale.length < need) {
      const size = Math.max(1024, need * 2);
      const scale = new Float32Array(size);
      scale.set(this.vectorScale);
      this.vectorScale = scale;
      const vectors = new Int8Array(size * this.dims);
      vectors.set(this.vectors);
      this.vectors = vectors;
    }
    let norm = 0;
    let max = 0;
    for (const x of vector) {
      norm += x * x;
      if (Math.abs(x) > max) max = Math.abs(x);
    }
    if (norm === 0 || max === 0) return false;
    const at = rec.no * this.dims;
    for (let i = 0; i < this.dims; i++) this.vectors[at + i] = Math.round((vector[i]! / max) * 127);
    if (this.vectorScale[rec.no] === 0) this.embedded++;
    // cosine(v, q) ≈ Σ int8(v)·q × max / (127 · |v|) for a unit-length q.
    this.vectorScale[rec.no] = max / (127 * Math.sqrt(norm));
    return true;
  }

  /** Entries with an embedding, and the embeddings' length (0 before the first). */
  get embeddings(): { count: number; dimensions: number } {
    return { count: this.embedded, dimensions: this.dims };
  }

  /** The query embedding as unit-length float32 of the stored length, or undefined when it does not fit. */
  private quantizeQuery(v: Float32Array): Float32Array | undefined {
    if (v.length !== this.dims) return undefined;
    let norm = 0;
    for (const x of v) norm += x * x;
    if (norm === 0) return undefined;
    const inv = 1 / Math.sqrt(norm);
    return Float32Array.from(v, (x) => x * inv);
  }

  private clearEmbedding(no: number): void {
    if (no < this.vectorScale.length && this.vectorScale[no] !== 0) {
      this.vectorScale[no] = 0;
      this.embedded--;
    }
  }

  private rankContext(ids: Int32Array, keys: Float64Array, hitsOf: (entryNo: number) => number): RankContext {
    return { ids, keys, hitsOf, entryRows: this.tables.entries, listSeq: this.tables.listSeq, compareIds: this.compareIds };
  }

  /**
   * Empty text: what passes the filter, newest first. Walks the shortest recency list that can
   * hold every match (all entries, or the filter's owner's or tag's) from its newest end, and
   * stops once the page is full and `totalLimit` hits are counted: the walk order is the
   * listing's order, so the page needs no ranking, and the rest only adds to `total`.
   */
  private list(filter: CompiledFilter, offset: number, limit: number, perEntry: boolean, excludedUnits: Set<number> | undefined, totalLimit: number): IndexPage {
    if (filter.impossible) return { hits: [], total: 0 };
    const entryRows = this.tables.entries;
    const unitLevel = filter.unitLevel;
    const groupLimit = perEntry ? 1 : GROUP_LIMIT;
    const seen = this.seen;
    const rejected = (this.epoch << STAMP_SHIFT) | (ENTRY_REJECTED + 2);
    const end = offset + limit;
    const cap = Math.max(totalLimit, end);
    // The page's units in order, and (results per match) each one's count of folded hits.
    const shown: number[] = [];
    const folded: number[] = [];
    let total = 0;
    const only = filter.onlyEntry;
    const { list, owned, tagged } = only >= 0 ? { list: undefined, owned: false, tagged: false } : this.listToWalk(filter);
    if (only < 0 && (!list || !this.recency.anyAttributesPass(filter))) return { hits: [], total: 0 };
    // Whether a kept bitmap's population would be the total: every entry test is a lasting one,
    // and the listing counts entries, each a hit (the entry itself, or with a skill- or tool-level
    // filter per entry a unit it surely has).
    const countable = filter.lastingDecides && !excludedUnits && (!unitLevel || (perEntry && filter.entryDecides(false)));
    // Whether the walk's own tests decide every entry test (never for capabilities, so it holds
    // whether or not the entries offering them are read instead: asked once, for both uses below).
    const walkDecides = list !== undefined && filter.walkDecides({ signatures: list.hasSignatures, owned, tagged });
    // Or whether the walk decides alone: its own tests decide the entries and counting past the
    // page tests no unit (one tag): a bitmap would add its upkeep only (its units' verdicts, for
    // the page's entries, pushed out and made again in turn by other filters': 28 µs a listing
    // of tags asked in turn at 1M).
    const walkAlone = !countable && perEntry && !excludedUnits && walkDecides && filter.entryDecides(tagged);
    // A filter asked for again over a long list: the entries its kept bitmap allows
    // (./filter-bitmaps.ts, from its second search or listing on), the others skipped with a bit
    // test; with a skill- or tool-level filter, its units' verdicts kept too.
    const kept =
      list !== undefined && list.size > this.filterBitmapsAbove && !walkAlone
        ? this.filterBitmaps.get(filter, this.tables, this.store.entryBound, () => this.bitmapWithin(filter))
        : undefined;
    this.clearNamed();
    const keptUnits = kept?.units;
    const counted = countable && kept !== undefined;
    // Capabilities few entries offer: those entries, newest first, instead of the walk (each
    // then passes every test of the filter itself, in `visit`).
    const offered = list !== undefined && !counted ? this.offeredEntries(filter, Math.floor(list.size * this.offeredShare)) : undefined;
    // Whether the walk's own tests leave none to the entry's row (read by number: a cache miss).
    const walked = walkDecides && offered === undefined;
    // The entries the bitmap allows, unless the walk's own tests decide them anyway (a bit read
    // a member would then be all it adds).
    const bits = counted || !walked ? kept?.entries : undefined;
    // An entry the bitmap allows passes every entry test (they are all lasting ones).
    const bitsDecide = bits !== undefined && filter.lastingDecides;
    // Counting entries past the page: whether one that passes the entry tests has a unit that passes.
    const decided = perEntry && !excludedUnits && filter.entryDecides(tagged && offered === undefined);
    const unitPasses = (no: number, base: number, ord: number): boolean =>
      keptUnits !== undefined && ord <= VERDICT_ORDS ? unitPassesKept(keptUnits, no, ord, filter, this.tables) : filter.unitPasses(base + ord);
    const visit = (no: number): boolean => {
      if (bits !== undefined && (bits[no >>> 5]! & (1 << (no & 31))) === 0) return true;
      if (!(filter.entryFree || walked || bitsDecide || filter.entryPasses(no))) return true;
      // Stamped by an excluded word in the entry's own text.
      if (excludedUnits && seen[no] === rejected) return true;
      if (!unitLevel) {
        // The entry itself stands for the entry.
        if (total >= offset && total < end) {
          shown.push(unitId(no, 0));
          folded.push(0);
        }
        return ++total < cap;
      }
      if (decided && (total < offset || total >= end)) return ++total < cap;
      const base = entryRows[(no << E_SHIFT) + E_BASE]!;
      const count = entryRows[(no << E_SHIFT) + E_COUNT]!;
      let hits = 0;
      let last = -1;
      for (let ord = 1; ord < count; ord++) {
        if (!unitPasses(no, base, ord) || excludedUnits?.has(unitId(no, ord))) continue;
        const at = total + hits;
        if (hits < groupLimit && at >= offset && at < end) {
          shown.push(unitId(no, ord));
          folded.push(0);
          if (hits === groupLimit - 1) last = shown.length - 1;
        }
        hits++;
        // Results per entry show its first passing unit (the others are listed for shown hits only).
        if (perEntry) break;
      }
      // The entry's last shown hit (results per match) says how many more it has.
      if (last >= 0 && hits > groupLimit) folded[last] = hits - groupLimit;
      total += Math.min(groupLimit, hits);
      return total < cap;
    };
    let complete = true;
    if (list && counted) {
      // Only the page is visited; the total is the bitmap's population, bounded as a walk's.
      const words = bitmapWords(this.store.entryBound);
      const population = bitCount(bits!, words);
      const toPage = (no: number): boolean => visit(no) && total < end;
      // A walk meets one of them about every list.size / population members: when that walk to
      // the page would pass more members than there are of them, they are sorted instead.
      if (population * population <= end * list.size) {
        const few: number[] = [];
        forEachBit(bits!, words, (no) => few.push(no));
        this.recency.inListingOrder(few).every(toPage);
      } else list.walk(toPage, filter);
      total = Math.min(population, cap);
      complete = population < cap;
    } else if (offered) complete = offered.every(visit);
    else if (list) complete = list.walk(visit, filter);
    // A standing search asks about one entry (onlyId): look at it alone.
    else if ((this.tables.marks[only]! & M_LIVE) !== 0) visit(only);
    const page: IndexPage = { hits: [], total };
    if (!complete) page.totalExact = false;
    page.hits = shown.map((id, k) => {
      if (!perEntry || !unitLevel) return this.hit(id, 0, -1, undefined, folded[k]!);
      // The entry's other skills or tools that pass the filter.
      const no = id >>> ORD_BITS;
      const row = no << E_SHIFT;
      const base = entryRows[row + E_BASE]!;
      const count = entryRows[row + E_COUNT]!;
      const others: SearchMatch[] = [];
      let more = 0;
      for (let ord = (id & ORD_MASK) + 1; ord < count; ord++) {
        if (!unitPasses(no, base, ord) || excludedUnits?.has(unitId(no, ord))) continue;
        if (others.length < MAX_MATCHES_PER_HIT) others.push(this.matchOf(unitId(no, ord), -1));
        else more++;
      }
      return this.hit(id, 0, -1, others, more);
    });
    return page;
  }

  /**
   * The live entries that may offer a capability `filter` asks for, in the order a walk of a
   * recency list meets them (newest registered first: the larger `listSeq`, as `list` orders),
   * when there are at most `atMost`; undefined otherwise (or when it asks for none). More of them
   * than the total limit is no reason to walk instead: read in this order they stop where the
   * walk would (once that many are counted), and the walk, meeting them among every other entry,
   * took twice as long at 1M (13,000 offering a value: 28 ms).
   */
  private offeredEntries(filter: CompiledFilter, atMost: number): number[] | undefined {
    const asked = filter.askedCapabilities;
    if (asked === undefined) return undefined;
    const out: number[] = [];
    if (!this.capabilityLists.offering(asked, atMost, out)) return undefined;
    const marks = this.tables.marks;
    return this.recency.inListingOrder(out.filter((no) => (marks[no]! & M_LIVE) !== 0));
  }

  /**
   * The shortest recency list holding every entry that may pass `filter` (undefined: none can),
   * and whether it is the list of the filter's owner or of its one tag.
   */
  private listToWalk(filter: CompiledFilter): { list: RecencyList | undefined; owned: boolean; tagged: boolean } {
    let list: RecencyList | undefined = this.recency.all;
    let owned = false;
    if (filter.ownerId >= 0) {
      const ownerList = this.recency.owner(filter.ownerId);
      if (!ownerList || ownerList.size < list.size) {
        list = ownerList;
        owned = true;
      }
    }
    // One tag: its list (several: the others, not merged here).
    if (list && filter.tagIds?.length === 1) {
      const tagList = this.recency.tag(filter.tagIds[0]!);
      if (!tagList || tagList.size < list.size) return { list: tagList, owned: false, tagged: true };
    }
    return { list, owned, tagged: false };
  }

  /** Results per match over the first `n` candidates. */
  private finish(n: number, total: number, offset: number, limit: number, withFields: boolean): IndexPage {
    if (offset >= total || limit === 0) return { hits: [], total };
    const seen = this.seen;
    const groupHits = this.groupHits;
    const ranked = page(this.rankContext(this.candIds, this.candKeys, (no) => groupHits[(seen[no]! & SEEN_STATE) - 2]!), n, offset, limit);
    return {
      hits: ranked.map((r) =>
        withFields
          ? this.hit(r.id, r.key, this.candScore[r.pos]! >>> FIELDS_SHIFT, undefined, r.moreInEntry)
          : this.hit(r.id, 0, -1, undefined, r.moreInEntry),
      ),
      total,
    };
  }

  /** What unit `id` is, for `match` and `matches`; `fieldBits` -1: no fields (listing). */
  private matchOf(id: number, fieldBits: number): SearchMatch {
    const rec = this.store.record(id >>> ORD_BITS);
    const ord = id & ORD_MASK;
    const fields = fieldBits >= 0 ? [...fieldNames(fieldBits)] : [];
    if (ord === 0) return { type: rec.kind === 'agent' ? 'agent' : 'mcp-server', name: rec.name, fields };
    if (ord <= rec.skills.length) {
      const k = rec.skills[ord - 1]!;
      return { type: 'skill', id: k.id, name: k.name, fields };
    }
    const t = rec.tools[ord - 1 - rec.skills.length]!;
    return { type: 'tool', id: t.name, name: t.name, fields };
  }

  private hit(id: number, key: number, fieldBits: number, matches: SearchMatch[] | undefined, moreInEntry: number): SearchHit {
    const rec = this.store.record(id >>> ORD_BITS);
    const hit: SearchHit = {
      id: rec.id,
      kind: rec.kind,
      name: rec.name,
      description: rec.description,
      // Fused (hybrid) keys carry the fusion score above FUSED_BASE.
      score: Math.round((key >= FUSED_BASE ? key - FUSED_BASE : key) * 10_000) / 10_000,
      match: this.matchOf(id, fieldBits),
      interfaces: rec.interfaces.map((i) => ({ ...i })),
      verified: rec.verified,
    };
    if (matches && matches.length > 0) hit.matches = matches;
    if (rec.kid !== undefined) hit.kid = rec.kid;
    if (rec.jwks !== undefined) hit.jwks = rec.jwks;
    if (moreInEntry > 0) hit.moreInEntry = moreInEntry;
    if (rec.health) hit.health = { ...rec.health };
    if (rec.drift !== undefined) hit.drift = rec.drift;
    if (rec.source) hit.source = { ...rec.source };
    return hit;
  }
}

/** Characters of the query a no-words reason quotes. */
const QUOTED_QUERY_CHARS = 60;

/** Why a query of no word search looks for (only stop words, single letters or signs) matched nothing. */
function noWordsReason(text: string): string {
  const trimmed = text.trim();
  // Cut between characters, never inside a surrogate pair (../lib/clipped.ts).
  const quoted = clipped(trimmed, QUOTED_QUERY_CHARS);
  return `the query has no word search looks for: "${quoted}" is only words too common or too short to search (stop words, single letters) or signs; search for a more specific word`;
}

/** The language of an entry's text: its name, description, and its skills' or tools' texts. */
function detectEntryLanguage(d: EntryDescription): number {
  const words: string[] = [];
  wordsForDetection(d.description, words, DETECTION_WORDS);
  for (const k of d.skills) {
    wordsForDetection(k.description, words, DETECTION_WORDS);
    for (const e of k.examples) wordsForDetection(e, words, DETECTION_WORDS);
  }
  for (const t of d.tools) wordsForDetection(t.description, words, DETECTION_WORDS);
  if (words.length === 0) return ENGLISH;
  return detectLanguage(words);
}

/** The postings in `ids` of entry number `entry`'s units (unit ids carry the entry number above ORD_BITS). */
function postingsOf(ids: ArrayLike<number>, entry: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < ids.length; i++) if (ids[i]! >>> ORD_BITS === entry) out.push(ids[i]!);
  return out;
}
