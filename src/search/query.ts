/**
 * Query text → clauses, with the syntax people know from search engines and Google's Agent
 * Registry:
 *
 *   translate invoice        every word is a clause; more matched clauses rank higher
 *   "pull request"           a phrase: its words next to each other, in this order, as written
 *   -deprecated, NOT beta    leave out what has the word (see ParsedClause.negated)
 *   github OR gitlab         either word satisfies the clause (OR binds tighter than the
 *                            implicit AND: `a b OR c` is a AND (b OR c))
 *   tags:finance             the word in one field: name (displayName), title, tags (tag),
 *                            description, examples (example), provider
 *   skill:translate          the word in a skill; tool:, agent: and server: (mcp:) likewise
 *                            (agent: and server: mean the entry's own name, description, provider)
 *   transl*                  every word that starts with "transl"
 *
 * The last word is also matched as a prefix when the text ends right after it (search as you
 * type), as before; in a quote not closed yet too (`"pull req`). A `field:` prefix the parser
 * does not know (`https:`, `10:30`) is ordinary text. Bounds on hostile input: only the first
 * MAX_QUERY_CHARS characters are read and at most MAX_CLAUSES clauses kept (each needs a bit in
 * the ranking's word sets).
 */
import { codePointPrefix } from '../lib/code-points.js';
import { FIELD_DESCRIPTION, FIELD_EXAMPLES, FIELD_NAME, FIELD_PROVIDER, FIELD_TAGS, FIELD_TITLE } from './fields.js';
import { MAX_TERM_LENGTH, hyphenJoined, joinedReading, tokenize } from './text-encoder.js';

/**
 * The most REGISTRY_MAX_QUERY_CHARS allows: the doors refuse a query longer than the operator's
 * limit, and the parser reads all of what they accept, characters counted as code points as the
 * doors count them (it read 512 characters, so the words past
 * them in a longer query, 1,000 by default, were dropped without a word). Work stays bounded by
 * MAX_CLAUSES.
 */
export const MAX_QUERY_CHARS = 10_000;
/** Clauses (positive and negated) per query: the ranking keeps one bit per positive clause. */
export const MAX_CLAUSES = 32;
/** Back-compatible name: distinct words kept from a query. */
export const MAX_QUERY_WORDS = MAX_CLAUSES;
/** Alternatives (OR) per clause, and words per phrase. */
export const MAX_ALTERNATIVES = 8;
export const MAX_PHRASE_WORDS = 8;
/** A phrase, or a piece of words written together, of up to this many words is also looked up written as one word. */
export const MAX_JOINED_WORDS = 3;
/** A word is matched as a prefix only with at least this many characters... */
export const MIN_PREFIX_LENGTH = 3;
/** ...and is expanded to at most this many longer terms. */
export const MAX_PREFIX_EXPANSIONS = 16;

/** Which units a clause may match: any, the entry's own text, skills, or tools. */
export type Scope = 'any' | 'entry' | 'skill' | 'tool';

export interface WordAlternative {
  readonly kind: 'word';
  /** Normalised term (./text-encoder.ts). */
  readonly word: string;
  /** Also match longer terms starting with it (`word*`, or the last word as typed). */
  readonly prefix: boolean;
  /** Quoted: the exact form only (no word forms, typos or related words). */
  readonly exact: boolean;
  /**
   * The words of one written piece as one word (joinedAlternative): an alternative to each of
   * them, not a word typed (an entry's name is not compared with it).
   */
  readonly joined?: true;
}

export interface PhraseAlternative {
  readonly kind: 'phrase';
  /** At least two normalised terms, adjacent in one field in this order. */
  readonly words: readonly string[];
  /** The last word may also be a longer term starting with it (a quote still open as it is typed). */
  readonly prefix?: true;
}

export type Alternative = WordAlternative | PhraseAlternative;

export interface ParsedClause {
  /** Any one of these satisfies the clause. */
  readonly alternatives: readonly Alternative[];
  /**
   * Excluding clause: a skill or tool containing it is not a hit, and when the entry's own name,
   * description or provider contains it, the whole entry is left out.
   */
  readonly negated: boolean;
  /** FIELD_* bits the clause must match in (0: any field). */
  readonly fields: number;
  readonly scope: Scope;
}

export interface ParsedQuery {
  /** False when the text is empty or blank: the search lists what matches the filter. */
  readonly hasText: boolean;
  /** Positive clauses, in query order (may be empty for text like "!!!" or "the"). */
  readonly clauses: readonly ParsedClause[];
  /** Negated clauses. */
  readonly excluded: readonly ParsedClause[];
  /**
   * The words of the positive clauses in query order, a repeated word repeated ("Echo Echo"),
   * which `clauses` keeps once: what an entry's whole name is compared with (the exact-name
   * clause of ./search-index.ts).
   */
  readonly words: readonly string[];
  /**
   * `words` without the fillers left out of `clauses`, when there are any: a name compared with
   * them too, so "github mcp server" names the server "github", "weather forecast please" the
   * skill "Weather forecast" (while "MCP Gateway" still names "MCP Gateway").
   */
  readonly subjectWords?: readonly string[];
}

const FIELD_PREFIXES: Readonly<Record<string, { fields: number; scope: Scope }>> = {
  name: { fields: FIELD_NAME, scope: 'any' },
  displayname: { fields: FIELD_NAME, scope: 'any' },
  title: { fields: FIELD_TITLE, scope: 'any' },
  tag: { fields: FIELD_TAGS, scope: 'any' },
  tags: { fields: FIELD_TAGS, scope: 'any' },
  description: { fields: FIELD_DESCRIPTION, scope: 'any' },
  example: { fields: FIELD_EXAMPLES, scope: 'any' },
  examples: { fields: FIELD_EXAMPLES, scope: 'any' },
  provider: { fields: FIELD_PROVIDER, scope: 'any' },
  skill: { fields: 0, scope: 'skill' },
  skills: { fields: 0, scope: 'skill' },
  tool: { fields: 0, scope: 'tool' },
  tools: { fields: 0, scope: 'tool' },
  agent: { fields: 0, scope: 'entry' },
  server: { fields: 0, scope: 'entry' },
  mcp: { fields: 0, scope: 'entry' },
};

/** One piece of query text: a bare run of characters or a quoted phrase, with its operators. */
interface Piece {
  text: string;
  quoted: boolean;
  negated: boolean;
  field?: { fields: number; scope: Scope };
  /** Ends in `*`. */
  star: boolean;
  /** The text ends right after this piece (the last word may be a prefix): a quote still open does. */
  atEnd: boolean;
}

/** What a word may start with: a letter, a digit, an emoji (./text-encoder.ts). Sticky: read at an index (an emoji is two code units). */
const WORD_START = /[\p{L}\p{N}\p{Extended_Pictographic}\p{RI}]/uy;
const startsWord = (text: string, at: number): boolean => {
  WORD_START.lastIndex = at;
  return WORD_START.test(text);
};
/** What a word may end with, as typed so far: a letter, a digit, or one of their marks (हिंदी, किता). */
const WORD_END = /[\p{L}\p{N}\p{M}]$/u;
/** A word of a script written without spaces (Chinese, Japanese, Thai, Lao, Khmer, Myanmar): each is whole. */
const UNSPACED_WORD = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
/** A piece that is one word after a leading dot: a name such as ".NET" or ".io" (written out, not typed halfway). */
const DOTTED_NAME = /^\.[\p{L}\p{N}]+$/u;

/** Splits text into pieces: whitespace separates; quotes group; `-`, `field:` and `*` attach. */
function pieces(raw: string): Piece[] {
  const out: Piece[] = [];
  let i = 0;
  const n = raw.length;
  while (i < n) {
    while (i < n && /\s/.test(raw[i]!)) i++;
    if (i >= n) break;
    let negated = false;
    // `-beta`, and `--beta` alike (a doubled dash, as in a command-line flag, searched "beta").
    const dashes = leadingDashes(raw, i);
    if (dashes > 0 && i + dashes < n && (raw[i + dashes] === '"' || startsWord(raw, i + dashes))) {
      negated = true;
      i += dashes;
    }
    // A known field with nothing after it yet (`tags:` as someone types) names no word: it was
    // searched as the word "tags", filling the results with every entry that says it.
    const bareField = /^([A-Za-z]+):(?=\s|$)/.exec(raw.slice(i, i + 20));
    if (bareField && FIELD_PREFIXES[bareField[1]!.toLowerCase()]) {
      i += bareField[0].length;
      continue;
    }
    let field: Piece['field'];
    // `tags:-beta` leaves out the tag, as `-tags:beta` does (it searched "tags" and "beta").
    // Whatever follows a known field is its value, punctuation first too (`tags:.NET`,
    // `name:(beta)`, `tags:'finance'`): the field's name was searched as a word, and the value
    // anywhere. A value of no word (`tags:*`) is ignored, as `tags:` is. A `/` or `:` next reads
    // as a URL or a time, text as before.
    const fieldMatch = /^([A-Za-z]+):([-\u2013\u2014\u2212]*)(?=[^\s/:])/u.exec(raw.slice(i, i + 40));
    if (fieldMatch) {
      const known = FIELD_PREFIXES[fieldMatch[1]!.toLowerCase()];
      if (known) {
        field = known;
        if (fieldMatch[2]) negated = true;
        i += fieldMatch[0].length;
      }
    }
    if (raw[i] === '"') {
      // A quote not closed yet (`"weath`, `weather "fore` as someone types) runs to the end of
      // the text, its last word typed so far: it was that word exactly, which no entry has.
      const close = raw.indexOf('"', i + 1);
      const end = close < 0 ? n : close;
      out.push({ text: raw.slice(i + 1, end), quoted: true, negated, field, star: false, atEnd: close < 0 });
      i = close < 0 ? n : close + 1;
      continue;
    }
    let j = i;
    while (j < n && !/\s/.test(raw[j]!) && raw[j] !== '"') j++;
    let text = raw.slice(i, j);
    const star = text.endsWith('*');
    if (star) text = text.replace(/\*+$/, '');
    out.push({ text, quoted: false, negated, field, star, atEnd: j >= n });
    i = j;
  }
  return out;
}

/**
 * Double quotation marks other than `"`: typographic ones, which phones and word processors put
 * in place of `"` as it is typed ("smart quotes"), guillemets, low-9 marks; and the corner
 * brackets Japanese (and Chinese) quote with, 「」 and 『』 (also half-width ｢｣): 「天気予報」
 * was its four characters found apart and anywhere, not the phrase.
 */
const QUOTATION_MARKS = /[\u201C\u201D\u201E\u201F\u00AB\u00BB\u300C-\u300F\uFF62\uFF63]/g;
/** Full-width ASCII (U+FF01–U+FF5E), as a Chinese or Japanese input method types it: `ｔａｇｓ：`, `ＮＯＴ`, `＂`. */
const FULL_WIDTH_ASCII = /[\uFF01-\uFF5E]/g;
const halfWidth = (c: string): string => String.fromCharCode(c.charCodeAt(0) - 0xfee0);

export function parseQuery(text: string | undefined): ParsedQuery {
  // “pull request” is a phrase as "pull request" is: it was two words, found apart and anywhere.
  // Full-width letters and signs are the ASCII ones (the words fold so anyway, ./text-encoder.ts):
  // `tags：finance` searched "tags" and "finance", `ＮＯＴ beta` the word "not".
  const raw = typeof text === 'string' ? codePointPrefix(text, MAX_QUERY_CHARS).replace(FULL_WIDTH_ASCII, halfWidth).replace(QUOTATION_MARKS, '"') : '';
  if (!raw.trim()) return { hasText: false, clauses: [], excluded: [], words: [] };
  const clauses: ParsedClause[] = [];
  const excluded: ParsedClause[] = [];
  const words: string[] = [];
  const seen = new Set<string>();
  let pendingOr = false;
  const list = pieces(raw);
  // Text of operators and bare fields alone ("tags:", "NOT", "OR" as someone starts typing) is
  // ignored, as each is after a word: the search lists what the filter matches, as for no text,
  // where it answered nothing.
  // A field whose value has no word yet (`tags:-` on the way to `tags:-beta`, `tags:*`) likewise,
  // and a quote, dash or star with no word yet (`"` on the way to `"pull request"`, `-` to
  // `-beta`): those answered nothing, emptying the results at the first key typed.
  if (list.every((piece) => (isBare(piece) && (piece.text === 'OR' || piece.text === 'NOT')) || (namesNoWordYet(piece) && alternativesOf(piece).length === 0))) {
    return { hasText: false, clauses: [], excluded: [], words: [] };
  }
  for (let p = 0; p < list.length; p++) {
    const piece = list[p]!;
    // OR / NOT as operators (upper case, as in search engines; lower-case "or" stays a word).
    if (isBare(piece)) {
      if (isOr(list, p) && clauses.length > 0) {
        pendingOr = true;
        continue;
      }
      // A NOT with no word after it yet ("weather NOT", as someone types) leaves nothing out: it
      // was searched as the word "not", and as a prefix ("notes", "notify"). (A last OR is "or",
      // a stop word.)
      // A NOT before another ("NOT NOT x", "weather NOT NOT") adds nothing: the last of the run
      // is the operator. Marking the next NOT negated made it the word "not", left out.
      if (piece.text === 'NOT') {
        const next = list[p + 1];
        if (next && !(isBare(next) && next.text === 'NOT')) list[p + 1] = { ...next, negated: true };
        continue;
      }
    }
    const alternatives = alternativesOf(piece);
    if (alternatives.length === 0) {
      pendingOr = false;
      continue;
    }
    const fields = piece.field?.fields ?? 0;
    const scope = piece.field?.scope ?? 'any';
    // One bare piece can hold several words (`get_weather`, `deep-learning`): each is a clause.
    // Left out, or on either side of OR, they are one phrase: `-text-to-speech` leaves out what
    // says "text to speech", as `-"text to speech"` does (it left out everything saying "text" or
    // "speech"), and `speech-to-text OR transcription` is either (it was speech AND (text OR
    // transcription)). After a field too: `tags:machine-learning` is the tag, as
    // `tags:"machine learning"` and the filter {"tags": ["machine-learning"]} are (it found a
    // skill tagged "machine" and "deep-learning").
    const operand = piece.negated || pendingOr || isOr(list, p + 1) || piece.field !== undefined;
    const joined = piece.quoted || operand ? undefined : joinedAlternative(piece, alternatives);
    const groups: Alternative[][] = piece.quoted
      ? [alternatives]
      : operand && alternatives.length > 1
        ? [[{ kind: 'phrase', words: alternatives.map((a) => (a.kind === 'word' ? a.word : a.words.join(' '))) }]]
        : alternatives.map((a) => (joined ? [a, joined] : [a]));
    for (const group of groups) {
      const key = `${piece.negated}|${fields}|${scope}|${group.map(altKey).join('|')}`;
      if (piece.negated) {
        if (excluded.length + clauses.length < MAX_CLAUSES && !seen.has(key)) excluded.push({ alternatives: group, negated: true, fields, scope });
        seen.add(key);
        // An OR whose word after it is left out ("weather OR -rain forecast") joins nothing: it
        // stayed pending and made the next word an alternative (weather OR forecast).
        pendingOr = false;
        continue;
      }
      const prev = clauses[clauses.length - 1];
      if (pendingOr && prev && prev.fields === fields && prev.scope === scope) {
        const merged = [...prev.alternatives, ...group.filter((a) => !prev.alternatives.some((b) => altKey(a) === altKey(b)))];
        clauses[clauses.length - 1] = { ...prev, alternatives: merged.slice(0, MAX_ALTERNATIVES) };
      } else {
        if (!seen.has(key) && excluded.length + clauses.length < MAX_CLAUSES) clauses.push({ alternatives: group, negated: false, fields, scope });
        for (const a of group) {
          if (a.kind === 'word') {
            if (!a.joined) words.push(a.word);
          } else words.push(...a.words);
        }
      }
      seen.add(key);
      pendingOr = false;
    }
  }
  const kept = withoutFillers(clauses);
  const left = kept.length < clauses.length ? clauses.filter((c) => !kept.includes(c)).map(plainWord) : [];
  if (left.length === 0) return { hasText: true, clauses: kept, excluded, words };
  return { hasText: true, clauses: kept, excluded, words, subjectWords: words.filter((w) => !left.includes(w)) };
}

/**
 * Words that carry no subject in a request written as a sentence: question words, "do", "me",
 * "please", "need". Ranking counts matched clauses first, so in "how do I get the weather
 * forecast?" an FAQ entry saying "how", "do" and "get" ranked above the weather forecast. Not
 * "agent" or "tool", though nearly every entry is one: in "reputation score for agents" or "user
 * agent parser" the word is the subject (bench/relevance.ts lost a judged hit without it). A query
 * of only such words still searches them ("how"); quoted or after a field, such a word is kept
 * as written. The last word too is left out ("jokes please" searched every "please…"), though
 * it may be the start of a longer one: "what" on the way to "whatsapp" finds it a key later.
 */
const FILLERS: ReadonlySet<string> = new Set([
  'how', 'what', 'which', 'who', 'whom', 'where', 'when', 'why', 'do', 'does', 'did', 'me',
  'please', 'need', 'want', 'some', 'something', 'anything',
  // The same in the other languages the index stems, folded ("qué" is "que"); not those that are
  // also names or subjects ("eu", "io", "apa", "chi", "suche"; in English "us": "US tax forms").
  // Spanish
  'que', 'como', 'donde', 'cual', 'cuales', 'quien', 'necesito', 'quiero', 'busco', 'yo',
  // German
  'wie', 'was', 'wo', 'welche', 'welcher', 'welches', 'wer', 'brauche', 'ich',
  // French
  'comment', 'quoi', 'quel', 'quelle', 'quels', 'quelles', 'ou', 'qui', 'besoin', 'je',
  // Italian
  'cosa', 'quale', 'quali',
  // Portuguese
  'onde', 'qual', 'quais', 'quem', 'preciso',
  // Indonesian
  'bagaimana', 'dimana', 'siapa',
]);

/** The word of a clause of one plain word (not quoted, not after a field), else undefined. */
const plainWord = (c: ParsedClause | undefined): string | undefined => {
  const only = c?.alternatives.length === 1 ? c.alternatives[0]! : undefined;
  return only?.kind === 'word' && !only.exact && c!.fields === 0 && c!.scope === 'any' ? only.word : undefined;
};

/**
 * The kind of entry a query names, as developers write it: "mcp", and "server" or "servers"
 * right after it ("github mcp server", "postgres mcp"). Every MCP server is one, and its own
 * text seldom says so (its name and tools say what it does), so those words ranked first
 * whatever mentions MCP servers in its description: in the relevance bench's corpus "github mcp
 * server" put the server "github" fifth, "playwright mcp server" playwright fourth. Left out as
 * fillers are (FILLERS); "server" alone stays ("web server", "smtp server" name a subject).
 */
const isKindWord = (clauses: readonly ParsedClause[], at: number): boolean => {
  const word = plainWord(clauses[at]);
  return word === 'mcp' || ((word === 'server' || word === 'servers') && plainWord(clauses[at - 1]) === 'mcp');
};

function withoutFillers(clauses: ParsedClause[]): ParsedClause[] {
  const kept = clauses.filter((c, at) => !FILLERS.has(plainWord(c) ?? '') && !isKindWord(clauses, at));
  return kept.length > 0 ? kept : clauses;
}

/**
 * Dashes that leave out the word they start: `-`, and what phones and word processors make of it
 * as it is typed (`--` becomes an em dash, a dash before a word can become an en dash), and the
 * minus sign.
 */
const EXCLUDING_DASHES = new Set(['-', '\u2013', '\u2014', '\u2212']);

/** How many dashes that exclude start the text at `at`. */
function leadingDashes(raw: string, at: number): number {
  let k = at;
  while (k < raw.length && EXCLUDING_DASHES.has(raw[k]!)) k++;
  return k - at;
}

/** A piece of a field, or of only quotes, dashes and stars, so far: words are still to come. */
const namesNoWordYet = (piece: Piece): boolean => piece.field !== undefined || [...piece.text.trim()].every((c) => c === '*' || EXCLUDING_DASHES.has(c));

/** A piece written alone, without quotes, field, `-` or `*`: what can be an operator. */
const isBare = (piece: Piece): boolean => !piece.quoted && !piece.field && !piece.negated && !piece.star;

/** Whether piece `p` is an OR with a piece after it (the operator; a last OR is the word "or"). */
function isOr(list: readonly Piece[], p: number): boolean {
  const piece = list[p];
  return piece !== undefined && isBare(piece) && piece.text === 'OR' && p + 1 < list.length;
}

function altKey(a: Alternative): string {
  return a.kind === 'word' ? `${a.word}${a.prefix ? '*' : ''}${a.exact ? '!' : ''}` : `"${a.words.join(' ')}${a.prefix ? '*' : ''}"`;
}

/** The text after its last white space: the word being typed (a stop word, when it was dropped). */
const lastChunk = (text: string): string => text.slice(text.search(/\S+$/));

/**
 * A piece of several words written together, as one word: "GitHub", "OpenAPI", "gpt-4",
 * "text-to-speech", "e-mail" are also "github", "openapi", "gpt4", "texttospeech", "email", which
 * entries write too. An alternative of each of its words' clauses, so a unit that has the word
 * matches them all, as one that has the words does (GitHub's "git" and "hub" alone found no
 * "github"). Its single letters and stop words are in it ("e-mail", "texttospeech"), as the
 * written word has them. At most MAX_JOINED_WORDS words: a longer run is rarely one word.
 */
function joinedAlternative(piece: Piece, alternatives: readonly Alternative[]): WordAlternative | undefined {
  const all = tokenize(piece.text, { maxTerms: MAX_JOINED_WORDS + 1, keepShort: true });
  if (all.length < 2 || all.length > MAX_JOINED_WORDS) return undefined;
  const word = all.join('');
  if (word.length > MAX_TERM_LENGTH || alternatives.some((a) => a.kind === 'word' && a.word === word)) return undefined;
  const typing = piece.atEnd && !piece.negated && WORD_END.test(piece.text);
  return { kind: 'word', word, prefix: piece.star || typing, exact: true, joined: true };
}

/** A quoted text's words: a phrase, or one exact word; `typing`: its last word is a prefix. */
function quotedAlternative(words: string[], typing: boolean): Alternative {
  if (words.length === 1) return { kind: 'word', word: words[0]!, prefix: typing, exact: true };
  return typing ? { kind: 'phrase', words, prefix: true } : { kind: 'phrase', words };
}

/** The alternatives a piece stands for: its words, or one phrase when quoted (two when it has a word written in parts). */
function alternativesOf(piece: Piece): Alternative[] {
  // A field's value of only a letter or a stop word is kept (`tags:x`, `skill:r`): dropped as
  // prose, it left the clause empty and the search found nothing, though such tags are indexed.
  // A tag's every word is (`tags:text-to-speech`, `tags:it-support`), as the index files tags
  // (./search-index.ts addTag): without them, the first found "text-speech" and the second
  // every "support" tag.
  const words = tokenize(piece.text, {
    maxTerms: MAX_PHRASE_WORDS * 4,
    keepShortAlone: piece.field !== undefined,
    keepShort: piece.field?.fields === FIELD_TAGS,
  });
  if (words.length === 0) return [];
  if (piece.quoted) {
    let distinctRun = words.slice(0, MAX_PHRASE_WORDS);
    // In a quote still open, the last word as typed so far is a prefix, as it is unquoted: still
    // a phrase of the words as written, the last one completed (`"pull req` finds "pull request").
    const typed = piece.atEnd && !piece.negated && words.length <= MAX_PHRASE_WORDS && WORD_END.test(piece.text) && tokenize(lastChunk(piece.text)).at(-1) === words.at(-1);
    // One too short to complete yet (`"pull re`) is left out, as a letter is (`"pull r`): the
    // phrase of those two words found nothing, between `"pull` and `"pull req` which find it. A
    // word of a script written without spaces (天, a Thai word) is whole as typed.
    const tooShort = typed && words.at(-1)!.length < MIN_PREFIX_LENGTH && !UNSPACED_WORD.test(words.at(-1)!);
    if (tooShort && distinctRun.length > 1) distinctRun = distinctRun.slice(0, -1);
    const typing = typed && !tooShort;
    const quoted = [quotedAlternative(distinctRun, typing)];
    // A prose phrase with a word written in parts is also read with it as one word: `"send
    // e-mail"` (prose: `send mail`) finds "send email" too, as the index files "send e-mail"'s
    // pairs both ways (./search-index.ts UnitTerms); and a hyphenated word too, which the index
    // keeps for phrases only as written: `"co-pilot for writers"` finds "copilot for writers"
    // (the other way round: ./expansion.ts addPhraseSplits). Not when that is one word: the
    // phrase's words are looked up written as one already (`"Co-Pilot"`: copilot), and a second
    // alternative would make the quote no name (./search-index.ts nameClause).
    const prose = piece.field === undefined && !tooShort;
    const lossless = prose ? joinedReading(piece.text, MAX_JOINED_WORDS) : undefined;
    const phraseWords = (text: string | undefined): string[] => (text === undefined ? [] : tokenize(text, { maxTerms: MAX_PHRASE_WORDS * 4 }).slice(0, MAX_PHRASE_WORDS));
    const joinedWords = prose ? phraseWords(hyphenJoined(lossless ?? piece.text, MAX_JOINED_WORDS)) : [];
    const readWords = joinedWords.length > 1 ? joinedWords : phraseWords(lossless);
    if (readWords.length > 0 && readWords.join(' ') !== distinctRun.join(' ')) quoted.push(quotedAlternative(readWords, typing));
    return quoted;
  }
  const out: WordAlternative[] = [];
  // A word written after a dot of its own (".NET", ".py") is a name, not the start of a longer
  // word: ".NET" as a prefix found every "network".
  const dotted = DOTTED_NAME.test(piece.text);
  for (let i = 0; i < words.length && out.length < MAX_ALTERNATIVES; i++) {
    const word = words[i]!;
    const last = i === words.length - 1;
    // `transl*`, or the last word of the text typed so far ("transl" → translate). A word left
    // out is left out as written unless starred: "weather -beta" also dropped "Betaville".
    const typing = piece.atEnd && !piece.negated && !dotted && WORD_END.test(piece.text);
    const prefix = last && word.length >= MIN_PREFIX_LENGTH && (piece.star || typing);
    out.push({ kind: 'word', word, prefix, exact: false });
  }
  return out;
}
