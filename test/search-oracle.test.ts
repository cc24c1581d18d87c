/**
 * The search index against a plain scan of the same data (the oracle below, written
 * straightforwardly), over generated entries and fast-check queries and filters with a fixed
 * seed: same hits, same totals, grouping, paging exactly once, ordering by matched words,
 * `match.fields`; and after random upserts and removals.
 *
 * The oracle tokenizes with the index's own `tokenize` (text normalisation has its own tests in
 * ./search-index.test.ts); everything else (filters, grouping, listing order) is re-implemented
 * here from the documented semantics. Queries end with a space, so no prefix expansion applies.
 * The index runs with exact words only (no word forms, typos or related words, which have their
 * own tests), per match and, in `checkPerEntry`, per entry.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { EntryKind, SearchFilter, SearchHit } from '../src/contract/types.js';
import type { EntryDescription } from '../src/contract/description.js';
import type { ResultsPer } from '../src/contract/types.js';
import { createSearchIndex, type IndexPage, type SearchIndex, type SearchIndexOptions } from '../src/search/index.js';
import { MAX_MATCHES_PER_HIT, SPREAD_UNITS, type PostingsIndex } from '../src/search/search-index.js';
import { ATTR_LOG_SIZE } from '../src/search/tables.js';
import type { IndexedEntry } from '../src/search/types.js';
import { MAX_JOINED_WORDS } from '../src/search/query.js';
import { isDroppedTerm, joinedReading, joinedTerms, tokenize } from '../src/search/text-encoder.js';
import { FIELD_DESCRIPTION, FIELD_EXAMPLES, FIELD_NAME, FIELD_PROVIDER, FIELD_TAGS, FIELD_TITLE } from '../src/search/fields.js';
import { MAX_PHRASE_UNIT_WORDS, TAG_PROSE, phraseSalt, phraseWord, termHash } from '../src/search/phrases.js';
import { describeGenerated, generateEntries, vocabularyWords } from '../bench/lib/generate-entries.js';
import { DOMAINS, MODES } from '../bench/lib/vocabulary.js';

const GROUP = 3;
const SEED = 20_251_129;

// ---------------------------------------------------------------- the oracle

type Field = 'name' | 'title' | 'tags' | 'provider' | 'description' | 'examples';
const FIELD_ORDER: Field[] = ['name', 'title', 'tags', 'provider', 'description', 'examples'];

interface OracleUnit {
  key: string;
  entry: IndexedEntry;
  ordinal: number;
  type: 'agent' | 'mcp-server' | 'skill' | 'tool';
  terms: Map<Field, Set<string>>;
  /** The field texts, for phrases. */
  texts: [Field, (string | undefined)[]][];
  tags?: string[];
  inputModes?: string[];
  outputModes?: string[];
  hints?: { readOnly: boolean; destructive: boolean; idempotent: boolean; openWorld: boolean };
}

const plainFold = (s: string): string => s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().trim();
/**
 * A tag as the tags filter compares it: its words folded, however they are separated (white space,
 * any punctuation) or joined (by a change of case, as MachineLearning and XMLParser, or written as
 * one word; the generated tags are ASCII): all are the words written as one.
 */
const tagWords = (s: string): string =>
  plainFold(s.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z])([A-Z][a-z])/g, '$1 $2'))
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .join('');

const capitalized = (w: string): string => w.charAt(0).toUpperCase() + w.slice(1);
/** A two-word tag as cards spell it: dashed, camelCase, snake_case, title case, dotted, one word. */
const SPELLINGS: readonly ((a: string, b: string) => string)[] = [
  (a, b) => `${a}-${b}`,
  (a, b) => `${a}.${b}`,
  (a, b) => capitalized(a) + capitalized(b),
  (a, b) => `${a}_${b}`,
  (a, b) => `${capitalized(a)} ${capitalized(b)}`,
  (a, b) => a + b,
];
/** The generated tags are one word each: a skill with two or more gets its first two as a tag of two words too, spelt by turns. */
function withTwoWordTags(d: EntryDescription, entryNo: number): EntryDescription {
  return {
    ...d,
    skills: d.skills.map((k, i) => (k.tags.length < 2 ? k : { ...k, tags: [...k.tags, SPELLINGS[(entryNo + i) % SPELLINGS.length]!(k.tags[0]!, k.tags[1]!)] })),
  };
}

/**
 * Capabilities the generated entries lack: a skill without an id (its name counts: ODD_NAMES),
 * ids and tool names JSON writes escaped or past ASCII (ODD_IDS), and descriptions quoting a
 * capability of other entries (`"forecast-weather"`), which the filter must not take for one.
 */
const ODD_NAMES = ['Report "weekly"', 'Ünïcode résumé'];
const ODD_IDS = ['say "hi"', 'back\\slash', 'tab\tand\u2028line', 'emoji-\u{1F600}'];
function withOddCapabilities(d: EntryDescription, entryNo: number): EntryDescription {
  const odd = ODD_IDS[entryNo % ODD_IDS.length]!;
  return {
    ...d,
    description: entryNo % 3 === 0 ? `${d.description} "forecast-weather" "get_forecast" ${JSON.stringify(odd)}` : d.description,
    skills: d.skills.map((k, i) =>
      i === 0 && entryNo % 5 === 0 ? { ...k, id: '', name: ODD_NAMES[entryNo % 2]! } : i === 1 && entryNo % 7 === 0 ? { ...k, id: odd } : k,
    ),
    tools: d.tools.map((t, i) => (i === 0 && entryNo % 4 === 1 ? { ...t, name: odd } : t)),
  };
}

const mime = (s: string): string => plainFold(s.split(';')[0]!);

function termsOf(fields: [Field, (string | undefined)[]][]): Map<Field, Set<string>> {
  const out = new Map<Field, Set<string>>();
  for (const [field, texts] of fields) {
    const set = new Set<string>();
    // A tag keeps its every word, letters and stop words too, as the index files it; words
    // written together that prose reads without a part ("E-Mail" is `mail`) are one word too
    // (`email`). The parts and the joined word are the index's own tokenizer's: what is tested
    // here is that the index files and finds them.
    for (const t of texts) if (t) for (const term of [...tokenize(t, { keepShort: field === 'tags' }), ...joinedTerms(t, MAX_JOINED_WORDS)]) set.add(term);
    if (set.size) out.set(field, set);
  }
  return out;
}

const textsOf = (texts: [Field, (string | undefined)[]][]) => ({ texts, terms: termsOf(texts) });

/** Whether `words` occur one after the other in `terms`. */
function runs(terms: readonly string[], words: readonly string[]): boolean {
  for (let i = 0; i + words.length <= terms.length; i++) if (words.every((w, k) => terms[i + k] === w)) return true;
  return false;
}

/**
 * The fields of unit `u` that say the phrase `words` (one text's words, next to each other): its
 * prose words (stop words and single letters left out); a tag's every word, and for a phrase not
 * scoped to tags its prose words too. Or that hold the words written as one (`ab`), which a
 * phrase of up to MAX_JOINED_WORDS words also matches.
 */
function phraseFields(u: OracleUnit, words: readonly string[], tagsOnly: boolean): Field[] {
  const joined = words.length <= MAX_JOINED_WORDS ? words.join('') : undefined;
  return FIELD_ORDER.filter((field) => {
    if (tagsOnly && field !== 'tags') return false;
    if (joined !== undefined && u.terms.get(field)?.has(joined)) return true;
    const texts = u.texts.filter(([f]) => f === field).flatMap(([, t]) => t.filter((x): x is string => !!x));
    return texts.some((t) => runs(tokenize(t, { keepShort: field === 'tags' }), words) || (field === 'tags' && !tagsOnly && runs(tokenize(t), words)));
  });
}

const FIELD_BITS: Record<Field, number> = { name: FIELD_NAME, title: FIELD_TITLE, tags: FIELD_TAGS, provider: FIELD_PROVIDER, description: FIELD_DESCRIPTION, examples: FIELD_EXAMPLES };
const hashedWords = new WeakMap<OracleUnit, number[]>();
/**
 * The unit's words as the index keeps them for phrases (./phrases.ts): each text of two words or
 * more in order (a tag's every word, then its prose words apart; then the text read with a word
 * written in parts as one), as 16-bit hashes salted by the field and the text's parity.
 */
function phraseWordsOf(u: OracleUnit): number[] {
  let out = hashedWords.get(u);
  if (out) return out;
  out = [];
  let texts = 0;
  const add = (words: readonly string[], kind: number): void => {
    if (words.length < 2) return;
    const salt = phraseSalt(kind, texts++ & 1);
    for (const w of words) out!.push(phraseWord(termHash(w), salt));
  };
  for (const [field, fieldTexts] of u.texts) {
    for (const t of fieldTexts) {
      if (!t) continue;
      const words = tokenize(t, { keepShort: field === 'tags' });
      add(words, FIELD_BITS[field]);
      if (field === 'tags' && words.length > 1 && words.some(isDroppedTerm)) add(tokenize(t), TAG_PROSE);
      const reading = joinedReading(t, MAX_JOINED_WORDS);
      if (reading !== undefined) add(tokenize(reading), field === 'tags' ? TAG_PROSE : FIELD_BITS[field]);
    }
  }
  out.length = Math.min(out.length, MAX_PHRASE_UNIT_WORDS);
  hashedWords.set(u, out);
  return out;
}

/**
 * phraseFields as the index answers it: the fields of the phrase's rarest word (fewest units,
 * the first of equals) whose words, hashed as that field keeps them, the unit has next to each
 * other. A word the unit lacks has the hash of the one next to an occurrence of the rarest word
 * with a probability of 1 / 65,536: such collisions are hits, which the test counts.
 */
function hashedPhraseFields(u: OracleUnit, words: readonly string[], tagsOnly: boolean, rarest: string): Field[] {
  const joined = words.length <= MAX_JOINED_WORDS ? words.join('') : undefined;
  const kept = phraseWordsOf(u);
  const has = (kind: number): boolean =>
    words.length < 2 ||
    [0, 1].some((parity) => {
      const run = words.map((w) => phraseWord(termHash(w), phraseSalt(kind, parity)));
      return kept.some((_, i) => run.every((h, k) => kept[i + k] === h));
    });
  return FIELD_ORDER.filter((field) => {
    if (tagsOnly && field !== 'tags') return false;
    if (joined !== undefined && u.terms.get(field)?.has(joined)) return true;
    return u.terms.get(field)?.has(rarest) === true && (has(FIELD_BITS[field]) || (field === 'tags' && !tagsOnly && has(TAG_PROSE)));
  });
}

function unitsOf(entry: IndexedEntry): OracleUnit[] {
  const d = entry.description;
  const units: OracleUnit[] = [
    {
      key: `${entry.id}/self`,
      entry,
      ordinal: 0,
      type: d.kind,
      ...textsOf([['name', [d.name]], ['description', [d.description]], ['provider', [d.provider]]]),
    },
  ];
  d.skills.forEach((s, i) =>
    units.push({
      key: `${entry.id}/${s.id}`,
      entry,
      ordinal: 1 + i,
      type: 'skill',
      ...textsOf([['name', [s.name]], ['tags', s.tags], ['description', [s.description]], ['examples', s.examples]]),
      tags: s.tags,
      inputModes: s.inputModes?.length ? s.inputModes : d.defaultInputModes,
      outputModes: s.outputModes?.length ? s.outputModes : d.defaultOutputModes,
    }),
  );
  d.tools.forEach((t, i) =>
    units.push({
      key: `${entry.id}/${t.name}`,
      entry,
      ordinal: 1 + d.skills.length + i,
      type: 'tool',
      ...textsOf([['name', [t.name]], ['title', [t.title, t.annotationTitle]], ['description', [t.description]]]),
      hints: { readOnly: t.hints.readOnlyHint, destructive: t.hints.destructiveHint, idempotent: t.hints.idempotentHint, openWorld: t.hints.openWorldHint },
    }),
  );
  return units;
}

function modeOk(declared: string, asked: string): boolean {
  const [dt, ds] = mime(declared).split('/');
  const [at, as] = mime(asked).split('/');
  if (mime(declared) === mime(asked) || ['*', '*/*'].includes(mime(declared)) || ['*', '*/*'].includes(mime(asked))) return true;
  return dt === at && ds !== undefined && as !== undefined && (ds === '*' || as === '*');
}

function versionOk(actual: string | undefined, asked: string): boolean {
  // A prefix on a dot boundary, or the asked version is the declared one with zero parts added ("0.3.0" for "0.3").
  return actual !== undefined && (actual === asked || actual.startsWith(`${asked}.`) || (asked.startsWith(`${actual}.`) && /^(\.0+)+$/.test(asked.slice(actual.length))));
}

const list = (v: string[] | undefined): string[] | undefined => (v && v.length ? v : undefined);

/** Does the unit pass the filter? (Documented semantics, written out plainly.) */
function passes(u: OracleUnit, f: SearchFilter): boolean {
  const d: EntryDescription = u.entry.description;
  const hintKeys = (['readOnly', 'destructive', 'idempotent', 'openWorld'] as const).filter((k) => f[k] !== undefined);
  const tags = list(f.tags);
  const inModes = list(f.inputModes);
  const outModes = list(f.outputModes);
  const skillLevel = tags !== undefined || inModes !== undefined || outModes !== undefined;
  if (f.kind !== undefined && d.kind !== f.kind) return false;
  if (f.owner !== undefined && u.entry.owner !== f.owner) return false;
  // The entry's capabilities, as its catalog entry lists them: skill ids (names without one), tool names.
  const capabilities = list(f.capabilities);
  if (capabilities && ![...d.skills.map((s) => s.id || s.name), ...d.tools.map((t) => t.name)].some((c) => capabilities.includes(c))) return false;
  if (f.streaming !== undefined && d.streaming !== f.streaming) return false;
  if (f.protocolBinding !== undefined || f.protocolVersion !== undefined) {
    const ok = d.interfaces.some(
      (i) =>
        (f.protocolBinding === undefined || i.protocolBinding.toLowerCase() === f.protocolBinding.toLowerCase()) &&
        (f.protocolVersion === undefined || versionOk(i.protocolVersion ?? d.protocolVersion, f.protocolVersion)),
    );
    if (!ok) return false;
  }
  if (hintKeys.length > 0) {
    if (skillLevel || u.type !== 'tool') return false;
    for (const k of hintKeys) if (u.hints![k] !== f[k]) return false;
  }
  if (skillLevel) {
    if (u.type !== 'skill') return false;
    if (tags && !u.tags!.some((t) => tags.some((x) => tagWords(x) === tagWords(t)))) return false;
    if (inModes && !u.inputModes!.some((m) => inModes.some((a) => modeOk(m, a)))) return false;
    if (outModes && !u.outputModes!.some((m) => outModes.some((a) => modeOk(m, a)))) return false;
  }
  return true;
}

class Oracle {
  readonly entries = new Map<string, { entry: IndexedEntry; units: OracleUnit[] }>();
  upsert(e: IndexedEntry): void {
    this.entries.set(e.id, { entry: e, units: unitsOf(e) });
  }
  remove(id: string): void {
    this.entries.delete(id);
  }
  /** An oracle holding what this one holds now. */
  copy(): Oracle {
    const out = new Oracle();
    for (const [id, e] of this.entries) out.entries.set(id, e);
    return out;
  }
  /** Matching units with their matched-word count and fields. */
  match(words: string[], f: SearchFilter): Map<string, { unit: OracleUnit; words: number; fields: string[] }> {
    const out = new Map<string, { unit: OracleUnit; words: number; fields: string[] }>();
    for (const { units } of this.entries.values()) {
      for (const u of units) {
        let matched = 0;
        const fields = new Set<Field>();
        for (const w of words) {
          let hit = false;
          for (const [field, terms] of u.terms) {
            if (terms.has(w)) {
              hit = true;
              fields.add(field);
            }
          }
          if (hit) matched++;
        }
        if (matched > 0 && passes(u, f)) out.set(u.key, { unit: u, words: matched, fields: FIELD_ORDER.filter((x) => fields.has(x)) });
      }
    }
    return out;
  }
  /** Empty text: the exact expected listing. */
  listing(f: SearchFilter): string[] {
    const unitLevel = [f.tags, f.inputModes, f.outputModes].some((x) => x && x.length) || ['readOnly', 'destructive', 'idempotent', 'openWorld'].some((k) => f[k as keyof SearchFilter] !== undefined);
    // Newest registered first, as `list` orders: the larger place in its order (list_seq); two
    // entries given one place (storage never gives them) by id.
    const entries = [...this.entries.values()].sort((a, b) => b.entry.listSeq - a.entry.listSeq || (a.entry.id < b.entry.id ? -1 : a.entry.id > b.entry.id ? 1 : 0));
    const out: string[] = [];
    for (const { units } of entries) {
      if (!unitLevel) {
        if (passes(units[0]!, f)) out.push(units[0]!.key);
        continue;
      }
      out.push(...units.slice(1).filter((u) => passes(u, f)).slice(0, GROUP).map((u) => u.key));
    }
    return out;
  }
}

// ---------------------------------------------------------------- helpers

const keyOf = (h: SearchHit): string => `${h.id}/${h.match.id ?? 'self'}`;

/** Exact words only: what the oracle implements. */
const EXACT: SearchIndexOptions = { wordForms: false, typos: false, wordNet: false };

function allPages(index: SearchIndex, text: string, filter: SearchFilter, pageSize: number, resultsPer: ResultsPer = 'match'): { hits: SearchHit[]; total: number } {
  const run = (offset: number): IndexPage => index.search({ text, filter, offset, limit: pageSize, resultsPer }) as IndexPage;
  const first = run(0);
  const hits = [...first.hits];
  for (let offset = pageSize; offset < first.total; offset += pageSize) {
    const page = run(offset);
    assert.equal(page.total, first.total, 'total changes between pages');
    assert.ok(page.hits.length > 0, `empty page at ${offset} of ${first.total}`);
    hits.push(...page.hits);
  }
  return { hits, total: first.total };
}

function checkAgainstOracle(index: SearchIndex, oracle: Oracle, words: string[], filter: SearchFilter, pageSize: number): void {
  const text = `${words.join(' ')} `;
  const expected = oracle.match(tokenize(text), filter);
  const perEntry = new Map<string, number>();
  for (const m of expected.values()) perEntry.set(m.unit.entry.id, (perEntry.get(m.unit.entry.id) ?? 0) + 1);
  const expectedTotal = [...perEntry.values()].reduce((s, n) => s + Math.min(GROUP, n), 0);

  const { hits, total } = allPages(index, text, filter, pageSize);
  const ctx = `query ${JSON.stringify(text)} filter ${JSON.stringify(filter)}`;
  assert.equal(total, expectedTotal, `total, ${ctx}`);
  assert.equal(hits.length, total, `hits over all pages, ${ctx}`);
  const keys = hits.map(keyOf);
  assert.equal(new Set(keys).size, keys.length, `a hit came twice, ${ctx}`);

  const shown = new Map<string, SearchHit[]>();
  let previous = Infinity;
  for (const h of hits) {
    const m = expected.get(keyOf(h));
    assert.ok(m, `unexpected hit ${keyOf(h)}, ${ctx}`);
    assert.equal(Math.floor(h.score), m.words, `matched words of ${keyOf(h)}, ${ctx}`);
    assert.deepEqual(h.match.fields, m.fields, `fields of ${keyOf(h)}, ${ctx}`);
    assert.ok(h.score <= previous, `order: ${h.score} after ${previous}, ${ctx}`);
    previous = h.score;
    assert.equal(h.kind, m.unit.entry.description.kind);
    shown.set(h.id, [...(shown.get(h.id) ?? []), h]);
  }
  checkTies(hits.map((h) => expected.get(keyOf(h))!.unit), ctx);
  for (const [id, n] of perEntry) {
    const mine = shown.get(id) ?? [];
    assert.equal(mine.length, Math.min(GROUP, n), `hits shown for ${id}, ${ctx}`);
    const more = mine.map((h) => h.moreInEntry ?? 0);
    assert.deepEqual(more, mine.map((_, i) => (i === mine.length - 1 && n > GROUP ? n - GROUP : 0)), `moreInEntry of ${id}, ${ctx}`);
    // The shown hits are the entry's best by matched words.
    const shownKeys = new Set(mine.map(keyOf));
    const worstShown = Math.min(...mine.map((h) => Math.floor(h.score)));
    for (const m of expected.values()) {
      if (m.unit.entry.id === id && !shownKeys.has(m.unit.key)) assert.ok(m.words <= worstShown, `${m.unit.key} folded although better, ${ctx}`);
    }
  }
}

/**
 * Hits of units alike (one pool entry's in two slots: the same texts, so the same relevance) come
 * newest registered first, as `list` orders (the larger place; the same place by id).
 */
function checkTies(units: readonly OracleUnit[], ctx: string): void {
  const seen = new Map<EntryDescription, Map<number, IndexedEntry>>();
  for (const u of units) {
    const alike = seen.get(u.entry.description) ?? new Map<number, IndexedEntry>();
    seen.set(u.entry.description, alike);
    const before = alike.get(u.ordinal);
    if (before) {
      const inOrder = before.listSeq > u.entry.listSeq || (before.listSeq === u.entry.listSeq && before.id < u.entry.id);
      assert.ok(inOrder, `tie order: ${u.key} (place ${u.entry.listSeq}) after ${before.id} (place ${before.listSeq}), ${ctx}`);
    }
    alike.set(u.ordinal, u.entry);
  }
}

/** Results per entry: one hit per entry with a matching unit, ranked by the words its units match together. */
function checkPerEntry(index: SearchIndex, oracle: Oracle, words: string[], filter: SearchFilter, pageSize: number): void {
  const text = `${words.join(' ')} `;
  const queryWords = tokenize(text);
  const expected = oracle.match(queryWords, filter);
  const byEntry = new Map<string, { unit: OracleUnit; words: number; fields: string[] }[]>();
  for (const m of expected.values()) byEntry.set(m.unit.entry.id, [...(byEntry.get(m.unit.entry.id) ?? []), m]);
  const { hits, total } = allPages(index, text, filter, pageSize, 'entry');
  const ctx = `per entry, query ${JSON.stringify(text)} filter ${JSON.stringify(filter)}`;
  assert.equal(total, byEntry.size, `total, ${ctx}`);
  assert.deepEqual(new Set(hits.map((h) => h.id)), new Set(byEntry.keys()), `entries, ${ctx}`);
  let previous = Infinity;
  for (const h of hits) {
    const units = byEntry.get(h.id)!;
    // Words matched by any unit of the entry: its best match's count fully, the others' for
    // less in an entry of more than SPREAD_UNITS skills or tools.
    const union = queryWords.filter((w) => units.some((m) => [...m.unit.terms.values()].some((set) => set.has(w)))).length;
    assert.ok(h.score <= previous, `order, ${ctx}`);
    previous = h.score;
    const best = expected.get(keyOf(h))!;
    assert.ok(best, `match of ${h.id} is not a matching unit, ${ctx}`);
    assert.equal(best.words, Math.max(...units.map((m) => m.words)), `best match of ${h.id}, ${ctx}`);
    const skillsAndTools = oracle.entries.get(h.id)!.units.length - 1;
    const words = best.words + Math.min(1, SPREAD_UNITS / skillsAndTools) * (union - best.words);
    assert.ok(h.score >= words - 1e-9 && h.score < words + 1, `words of ${h.id}: ${h.score} for ${words}, ${ctx}`);
    const others = (h.matches ?? []).map((m) => `${h.id}/${m.id ?? 'self'}`);
    assert.equal(others.length, Math.min(MAX_MATCHES_PER_HIT, units.length - 1), `matches of ${h.id}, ${ctx}`);
    assert.equal(h.moreInEntry ?? 0, Math.max(0, units.length - 1 - MAX_MATCHES_PER_HIT), `moreInEntry of ${h.id}, ${ctx}`);
    for (const o of others) assert.ok(expected.has(o) && o !== keyOf(h), `${o} listed under matches, ${ctx}`);
  }
  checkTies(hits.map((h) => expected.get(keyOf(h))!.unit), ctx);
}

/**
 * A quoted phrase of two words (in `tags:` when `tagsOnly`): the units saying it in a field
 * (phraseFields), at most GROUP per entry, and as `match.fields` the fields that say it, not the
 * fields of its rarer word (a phrase in a description, its rarer word in the name too, was
 * weighed and reported as in the name).
 */
function checkPhrase(index: SearchIndex, oracle: Oracle, phrase: string, tagsOnly: boolean, pageSize: number, counts: { exact: number; collisions: number }): void {
  const text = `${tagsOnly ? 'tags:' : ''}"${phrase}" `;
  const words = tokenize(phrase, { keepShort: tagsOnly });
  const units = [...oracle.entries.values()].flatMap((e) => e.units);
  const df = (w: string): number => units.filter((u) => [...u.terms.values()].some((set) => set.has(w))).length;
  const rarest = words.reduce((best, w) => (df(w) < df(best) ? w : best));
  const expected = new Map<string, { unit: OracleUnit; fields: Field[] }>();
  for (const u of units) {
    const fields = hashedPhraseFields(u, words, tagsOnly, rarest);
    if (fields.length === 0) continue;
    expected.set(u.key, { unit: u, fields });
    if (phraseFields(u, words, tagsOnly).join() === fields.join()) counts.exact++;
    else counts.collisions++;
  }
  const perEntry = new Map<string, number>();
  for (const m of expected.values()) perEntry.set(m.unit.entry.id, (perEntry.get(m.unit.entry.id) ?? 0) + 1);
  const { hits, total } = allPages(index, text, {}, pageSize);
  const ctx = `query ${JSON.stringify(text)}`;
  assert.ok(expected.size > 0, `some unit says ${ctx}`);
  assert.equal(total, [...perEntry.values()].reduce((sum, n) => sum + Math.min(GROUP, n), 0), `total, ${ctx}`);
  assert.equal(hits.length, total, `hits over all pages, ${ctx}`);
  for (const h of hits) {
    const m = expected.get(keyOf(h));
    assert.ok(m, `unexpected hit ${keyOf(h)}, ${ctx}`);
    assert.deepEqual(h.match.fields, m.fields, `fields of ${keyOf(h)}, ${ctx}`);
    assert.ok(h.score >= 1, `score of ${keyOf(h)}, ${ctx}`);
  }
}

function checkListing(index: SearchIndex, oracle: Oracle, filter: SearchFilter, pageSize: number): void {
  const { hits, total } = allPages(index, '', filter, pageSize);
  const expected = oracle.listing(filter);
  // Per entry: the first unit of each entry, the others under `matches`.
  const perEntry = allPages(index, '', filter, pageSize, 'entry');
  const firstOfEntry = expected.filter((key, i) => expected.findIndex((k) => k.split('/')[0] === key.split('/')[0]) === i);
  assert.deepEqual(perEntry.hits.map(keyOf), firstOfEntry, `listing per entry, filter ${JSON.stringify(filter)}`);
  assert.equal(perEntry.total, firstOfEntry.length);
  assert.equal(total, expected.length, `listing total, filter ${JSON.stringify(filter)}`);
  assert.deepEqual(hits.map(keyOf), expected, `listing, filter ${JSON.stringify(filter)}`);
}

// ---------------------------------------------------------------- arbitraries

const words = [...new Set(vocabularyWords().flatMap((w) => [...tokenize(w), ...joinedTerms(w, MAX_JOINED_WORDS)]))].sort();
const tags = [...new Set(DOMAINS.flatMap((d) => d.tags))];
/** Two-word tags the generated skills carry, each asked for in every spelling. */
const twoWordTags = [
  ...new Set(entries(60, SEED).flatMap((e) => e.description.skills.flatMap((k) => (k.tags.length > 2 ? [`${k.tags[0]} ${k.tags[1]}`] : [])))),
]
  .slice(0, 4)
  .flatMap((pair) => SPELLINGS.map((spell) => spell(...(pair.split(' ') as [string, string]))));
const wordArb = fc.constantFrom(...words, 'zzzunknown');
/** Two words next to each other in a generated entry's text (as prose reads it), and the two-word tags' words. */
const phrases = [
  ...new Set(
    entries(120, SEED).flatMap((e) =>
      unitsOf(e).flatMap((u) =>
        u.texts.flatMap(([, texts]) =>
          texts.flatMap((t) => {
            const w = t ? tokenize(t) : [];
            return w.slice(1).map((b, i) => `${w[i]} ${b}`);
          }),
        ),
      ),
    ),
  ),
].sort();
const tagPhrases = [...new Set(twoWordTags.map((t) => tokenize(t, { keepShort: true })).filter((w) => w.length === 2).map((w) => w.join(' ')))];
const queryArb = fc.array(wordArb, { minLength: 1, maxLength: 3 });

/**
 * Skill ids and tool names of generated entries (shared by many), and others' spellings of them;
 * the odd ones, and the name of skills that have an id (which does not count).
 */
const capabilityValues = [
  ...new Set(entries(60, SEED).flatMap((e) => [...e.description.skills.map((s) => s.id), ...e.description.tools.map((t) => t.name)])),
]
  .filter((c) => c !== '' && !ODD_IDS.includes(c))
  .slice(0, 40)
  .concat(ODD_NAMES, ODD_IDS, ODD_IDS.map((c) => c.toUpperCase()), [mostCommonNameOfSkillsWithIds()]);

/** The name most skills that have an id carry (a capability of none of them). */
function mostCommonNameOfSkillsWithIds(): string {
  const counts = new Map<string, number>();
  for (const e of entries(200, SEED)) for (const k of e.description.skills) if (k.id) counts.set(k.name, (counts.get(k.name) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0]![0];
}

const filterArb: fc.Arbitrary<SearchFilter> = fc.record(
  {
    kind: fc.constantFrom<EntryKind>('agent', 'mcp-server'),
    owner: fc.constantFrom('owner-0', 'owner-1', 'owner-3', 'owner-42', 'owner-nobody'),
    capabilities: fc.array(fc.constantFrom(...capabilityValues, capabilityValues[0]!.toUpperCase(), 'no-such-capability'), { minLength: 1, maxLength: 3 }),
    streaming: fc.boolean(),
    protocolBinding: fc.constantFrom('JSONRPC', 'jsonrpc', 'GRPC', 'HTTP+JSON', 'MCP', 'SOAP'),
    protocolVersion: fc.constantFrom('1', '1.0', '1.0.1', '0.3', '0.3.0', '2.0'),
    tags: fc.array(fc.constantFrom(...tags, ...twoWordTags, 'WEATHER', 'Finance', 'no-such-tag'), { maxLength: 3 }),
    inputModes: fc.array(fc.constantFrom(...MODES, 'TEXT/PLAIN', 'image/gif', '*/*'), { maxLength: 2 }),
    outputModes: fc.array(fc.constantFrom(...MODES, 'audio/*'), { maxLength: 2 }),
    readOnly: fc.boolean(),
    destructive: fc.boolean(),
    idempotent: fc.boolean(),
    openWorld: fc.boolean(),
  },
  { requiredKeys: [] },
);

/** Mostly one or two keys: a record with many keys tends to filter everything out. */
const sparseFilterArb: fc.Arbitrary<SearchFilter> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({}) },
  { weight: 6, arbitrary: filterArb.map((f) => Object.fromEntries(Object.entries(f).slice(0, 1))) },
  { weight: 3, arbitrary: filterArb.map((f) => Object.fromEntries(Object.entries(f).slice(0, 2))) },
  { weight: 1, arbitrary: filterArb },
);

/** Generated entries, their places in list's order their times in ms (random order: they arrive out of it). */
function entries(count: number, seed: number): IndexedEntry[] {
  return generateEntries(count, seed).map((g, i) => ({ id: g.id, owner: g.owner, listSeq: Date.parse(g.updatedAt), description: withOddCapabilities(withTwoWordTags(describeGenerated(g), i), i) }));
}

/**
 * Random changes to 60 slots: an upsert puts entry `source` of a 300-entry pool in slot `slot`;
 * a removal empties the slot. An entry new in its slot is registered in minute `minute` (at most
 * `minutes`), and gets the place in list's order such a registration gets: after every earlier
 * one of its minute (PLACES_A_MINUTE a minute), whatever its id; an update keeps the place, as
 * storage does. Many share a minute, and their ids do not follow their places: an order by time,
 * then id (the index's before SNAPSHOT_FORMAT 22) is not list's.
 */
const changeArb = (minutes: number) =>
  fc.oneof(
    fc.record({ kind: fc.constant('upsert' as const), slot: fc.integer({ min: 0, max: 59 }), source: fc.integer({ min: 0, max: 299 }), minute: fc.integer({ min: 0, max: minutes }) }),
    fc.record({ kind: fc.constant('remove' as const), slot: fc.integer({ min: 0, max: 59 }) }),
  );
type Change = { kind: 'upsert'; slot: number; source: number; minute: number } | { kind: 'remove'; slot: number };
const PLACES_A_MINUTE = 4096;
/** Registrations so far (changeArb's new entries), for their places within their minute. */
let registrations = 0;

/** Applies `changes` (changeArb's) to the index and the oracle alike. */
function applyChanges(index: SearchIndex, oracle: Oracle, pool: IndexedEntry[], changes: readonly Change[]): void {
  for (const c of changes) {
    // Half the slots have UUIDs as the registry's ids are (kept as bytes: src/search/entry-ids.ts), half
    // other ids (kept as text): two places alike (a minute's 4,097th registration) then compare ids of both kinds.
    const id = c.slot % 2 === 0 ? `0189${((c.slot * 7919) & 0xffff).toString(16).padStart(4, '0')}-ac96-774b-bcce-b302099a${c.slot.toString(16).padStart(4, '0')}` : `slot-${c.slot}`;
    if (c.kind === 'upsert') {
      const listSeq = oracle.entries.get(id)?.entry.listSeq ?? c.minute * PLACES_A_MINUTE + (registrations++ % PLACES_A_MINUTE);
      const e: IndexedEntry = { ...pool[c.source]!, id, listSeq };
      index.upsert(e);
      oracle.upsert(e);
    } else {
      index.remove(id);
      oracle.remove(id);
    }
  }
}

// ---------------------------------------------------------------- tests

describe('search index vs a plain scan', () => {
  const data = entries(800, SEED);
  // Budget off: the oracle sees everything, so must the index.
  const index = createSearchIndex({ ...EXACT, maxPostings: 1e9, maxCandidates: 1e9 });
  const oracle = new Oracle();
  for (const e of data) {
    index.upsert(e);
    oracle.upsert(e);
  }
  // Owners of generated entries are skewed: make sure the filter values above exist.
  assert.ok(data.some((e) => e.owner === 'owner-0'));

  it('text queries with filters: same hits, totals, grouping, fields and order', () => {
    fc.assert(
      fc.property(queryArb, sparseFilterArb, fc.integer({ min: 1, max: 60 }), (q, f, pageSize) => {
        checkAgainstOracle(index, oracle, q, f, pageSize);
        checkPerEntry(index, oracle, q, f, pageSize);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('quoted phrases: the units saying them, and where', () => {
    const counts = { exact: 0, collisions: 0 };
    fc.assert(
      fc.property(fc.constantFrom(...phrases), fc.integer({ min: 5, max: 60 }), (phrase, pageSize) => checkPhrase(index, oracle, phrase, false, pageSize, counts)),
      { seed: SEED + 5, numRuns: 150 },
    );
    for (const phrase of tagPhrases) checkPhrase(index, oracle, phrase, true, 50, counts);
    // Hash collisions are rare (1 in 65,536 an occurrence of the rarest word): none here.
    assert.ok(counts.exact > 1000 && counts.collisions * 1000 < counts.exact, `${counts.collisions} collisions in ${counts.exact} units matched`);
  });

  it('empty text with filters: the exact listing, newest first', () => {
    // Each two-word tag in each spelling (most filters above ask for none of them).
    for (const tag of twoWordTags) checkListing(index, oracle, { tags: [tag] }, 200);
    // Each capability value alone (the odd ones too), and by entry kind.
    for (const c of capabilityValues) {
      if (ODD_NAMES.includes(c) || ODD_IDS.includes(c)) assert.ok(oracle.listing({ capabilities: [c] }).length > 0, `some entry offers ${JSON.stringify(c)}`);
      checkListing(index, oracle, { capabilities: [c] }, 200);
      checkListing(index, oracle, { capabilities: [c], kind: 'mcp-server' }, 50);
    }
    fc.assert(
      fc.property(sparseFilterArb, fc.integer({ min: 5, max: 200 }), (f, pageSize) => {
        checkListing(index, oracle, f, pageSize);
      }),
      { seed: SEED + 1, numRuns: 150 },
    );
  });
});

describe('search index vs a plain scan, under upserts and removals', () => {
  it('stays equal to the oracle through random changes', () => {
    const pool = entries(300, SEED + 3);
    const index = createSearchIndex({ ...EXACT, maxPostings: 1e9, maxCandidates: 1e9 });
    const oracle = new Oracle();
    fc.assert(
      // Twenty minutes: many registrations in each, among them one pool entry's in two slots,
      // whose hits tie (checkTies); their ids do not follow their places.
      fc.property(fc.array(changeArb(20), { minLength: 1, maxLength: 40 }), queryArb, sparseFilterArb, (changes, q, f) => {
        applyChanges(index, oracle, pool, changes);
        assert.equal(index.size, oracle.entries.size);
        checkAgainstOracle(index, oracle, q, f, 25);
        checkPerEntry(index, oracle, q, f, 25);
        checkListing(index, oracle, f, 25);
      }),
      { seed: SEED + 4, numRuns: 120 },
    );
  });
});

describe('listings by capabilities, from the entries offering them (src/search/capability-lists.ts)', () => {
  // Every listing by capabilities reads the entries offering them when they are fewer than its list.
  const options: SearchIndexOptions = { ...EXACT, offeredShare: 1 };
  const capabilityFilterArb: fc.Arbitrary<SearchFilter> = fc
    .record({
      capabilities: fc.array(fc.constantFrom(...capabilityValues, 'no-such-capability'), { minLength: 1, maxLength: 3 }),
      kind: fc.constantFrom(undefined, 'agent' as const, 'mcp-server' as const),
      owner: fc.constantFrom(undefined, 'owner-0', 'owner-1'),
      readOnly: fc.constantFrom(undefined, true),
    })
    .map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as SearchFilter);

  it('stays equal to the oracle through random changes (new entry numbers, removals, numbers used again), and after a save and load', () => {
    const pool = entries(300, SEED + 3);
    let index = createSearchIndex(options);
    const oracle = new Oracle();
    let round = 0;
    fc.assert(
      // Six minutes: many registrations in each, ordered by their places in it, not by their ids.
      fc.property(fc.array(changeArb(5), { minLength: 1, maxLength: 40 }), capabilityFilterArb, fc.integer({ min: 3, max: 40 }), (changes, f, pageSize) => {
        applyChanges(index, oracle, pool, changes);
        checkListing(index, oracle, f, pageSize);
        if (++round % 20 === 0) {
          // Loaded from a saved state, then changed further: the lists grow past what was saved.
          const saved = index.saveState!();
          index = createSearchIndex(options);
          index.loadState!(saved.parts);
          saved.release();
          checkListing(index, oracle, f, pageSize);
        }
      }),
      { seed: SEED + 21, numRuns: 200 },
    );
  });
});

describe('search index vs a plain scan, with the bitmaps of filters asked for again', () => {
  // Every filtered text search uses its filter's bitmap from the filter's second search on.
  const options: SearchIndexOptions = { ...EXACT, maxPostings: 1e9, maxCandidates: 1e9, filterBitmapsAbove: 0 };
  const bitmapsKept = (index: SearchIndex): number => (index as unknown as PostingsIndex).stats.filterBitmaps;

  it('stays equal to the oracle through random changes, the bitmaps brought up to date, dropped and built anew', () => {
    const pool = entries(300, SEED + 3);
    // Two bitmaps kept at most: most filters' are dropped and built again later.
    const index = createSearchIndex({ ...options, filterBitmaps: 2 });
    const oracle = new Oracle();
    let used = 0;
    fc.assert(
      fc.property(fc.array(changeArb(1e6), { minLength: 1, maxLength: 40 }), queryArb, sparseFilterArb, (changes, q, f) => {
        applyChanges(index, oracle, pool, changes);
        checkAgainstOracle(index, oracle, q, f, 25);
        checkPerEntry(index, oracle, q, f, 25);
        checkAgainstOracle(index, oracle, q, f, 7);
        // Listings use the same bitmaps (their population as the total, where it is one).
        checkListing(index, oracle, f, 25);
        used = Math.max(used, bitmapsKept(index));
      }),
      { seed: SEED + 5, numRuns: 200 },
    );
    assert.equal(used, 2, 'filter bitmaps were kept (and so used)');
  });

  it('stays equal to the oracle when a few filters are asked again and again through random changes (bitmaps and their units brought up to date)', () => {
    const pool = entries(300, SEED + 3);
    const index = createSearchIndex(options);
    const oracle = new Oracle();
    // Kept from their second search on and never dropped: each search brings them up to date.
    const filters: SearchFilter[] = [
      { tags: [tags[0]!] },
      { tags: [tags[1]!, tags[2]!] },
      { inputModes: ['text/plain'] },
      { outputModes: ['application/json'], streaming: true },
      { readOnly: true },
      { kind: 'mcp-server', destructive: false },
      { owner: 'owner-0', kind: 'agent' },
      // What an entry offers is a lasting test too (an upsert takes a new entry number).
      { capabilities: [capabilityValues[0]!] },
      { capabilities: [capabilityValues[1]!, capabilityValues[2]!, 'no-such-capability'], kind: 'agent' },
      { capabilities: [ODD_IDS[0]!, capabilityValues[3]!], readOnly: true },
    ];
    fc.assert(
      fc.property(fc.array(changeArb(1e6), { minLength: 1, maxLength: 12 }), queryArb, fc.constantFrom(...filters), fc.integer({ min: 3, max: 40 }), (changes, q, f, pageSize) => {
        applyChanges(index, oracle, pool, changes);
        checkAgainstOracle(index, oracle, q, f, 25);
        checkPerEntry(index, oracle, q, f, 25);
        checkListing(index, oracle, f, pageSize);
      }),
      { seed: SEED + 7, numRuns: 300 },
    );
    assert.equal(bitmapsKept(index), filters.length, 'every filter kept its bitmap');
  });

  it('a bitmap is built anew when more entries changed than the log of changes holds', () => {
    const pool = entries(300, SEED + 6);
    const index = createSearchIndex(options);
    const oracle = new Oracle();
    applyChanges(index, oracle, pool, pool.map((_, i): Change => ({ kind: 'upsert', slot: i % 60, source: i, minute: i })));
    const filters: SearchFilter[] = [{ streaming: true }, { kind: 'mcp-server', readOnly: true }, { inputModes: ['text/plain'] }];
    // Three of the commonest words: many postings, most entries.
    const counts = new Map<string, number>();
    for (const e of pool) for (const w of new Set(tokenize(JSON.stringify(e.description)))) counts.set(w, (counts.get(w) ?? 0) + 1);
    const query = words.filter((w) => counts.has(w)).sort((a, b) => counts.get(b)! - counts.get(a)!).slice(0, 3);
    for (const filter of filters) {
      checkAgainstOracle(index, oracle, query, filter, 25);
      checkPerEntry(index, oracle, query, filter, 25);
    }
    assert.equal(bitmapsKept(index), filters.length);
    // Slots 0-19 change (other entries, some removed), then only slots 20-59, more often than
    // the log holds (an upsert logs its entry number two or three times): the first changes are
    // no longer in the log when the bitmaps are next used.
    const early = Array.from({ length: 20 }, (_, slot): Change => (slot % 4 === 3 ? { kind: 'remove', slot } : { kind: 'upsert', slot, source: 100 + slot * 7, minute: 900 }));
    const many = Array.from({ length: ATTR_LOG_SIZE }, (_, i): Change => ({ kind: 'upsert', slot: 20 + (i % 40), source: (i * 7) % 300, minute: 1000 + i }));
    applyChanges(index, oracle, pool, [...early, ...many]);
    for (const filter of filters) {
      checkAgainstOracle(index, oracle, query, filter, 25);
      checkPerEntry(index, oracle, query, filter, 25);
    }
    // And after fewer changes than it holds.
    applyChanges(index, oracle, pool, many.slice(0, 50));
    for (const filter of filters) checkAgainstOracle(index, oracle, query, filter, 25);
  });
});

describe('one entry at a time (IndexQuery.onlyId: what a standing search asks per change)', () => {
  it('an entry is a hit with onlyId exactly when the full search has it, with the same hit', () => {
    const data = entries(400, SEED + 7);
    // Word forms, typos and related words on (a watch matches as a search does); budget off, as the full search must see everything.
    const index = createSearchIndex({ maxPostings: 1e9, maxCandidates: 1e9 });
    for (const e of data) index.upsert(e);
    const textArb = fc.oneof(queryArb.map((q) => q.join(' ')), fc.constant(''));
    fc.assert(
      fc.property(textArb, sparseFilterArb, fc.integer({ min: 0, max: 340 }), (text, filter, from) => {
        const full = new Map(allPages(index, text, filter, 100, 'entry').hits.map((h) => [h.id, h]));
        for (const e of data.slice(from, from + 60)) {
          const one = index.search({ text, filter, offset: 0, limit: 1, onlyId: e.id }) as IndexPage;
          const ctx = `entry ${e.id}, query ${JSON.stringify(text)} filter ${JSON.stringify(filter)}`;
          assert.deepEqual(one.hits[0], full.get(e.id), ctx);
          assert.equal(one.total, full.has(e.id) ? 1 : 0, ctx);
        }
      }),
      { seed: SEED + 8, numRuns: 80 },
    );
  });
});

describe('candidate limits', () => {
  it('bound the work on huge result sets, keep the best hits and paging consistent', () => {
    const index = createSearchIndex({ ...EXACT, maxCandidates: 300 });
    for (const e of entries(400, SEED + 5)) index.upsert(e);
    const unbounded = createSearchIndex({ ...EXACT, maxPostings: 1e9, maxCandidates: 1e9 });
    for (const e of entries(400, SEED + 5)) unbounded.upsert(e);
    const text = 'weather forecast get ';
    const capped = allPages(index, text, {}, 50);
    const full = allPages(unbounded, text, {}, 50);
    assert.ok(capped.total < full.total, `${capped.total} vs ${full.total}`);
    assert.ok(capped.total <= 300);
    assert.equal(new Set(capped.hits.map(keyOf)).size, capped.total);
    // The best hits survive the cut.
    assert.deepEqual(capped.hits.slice(0, 10).map(keyOf), full.hits.slice(0, 10).map(keyOf));
    // A posting limit as well: still consistent, still the best first.
    const tight = createSearchIndex({ ...EXACT, maxCandidates: 300, maxPostings: 2000 });
    for (const e of entries(400, SEED + 5)) tight.upsert(e);
    const t = allPages(tight, text, {}, 50);
    assert.equal(new Set(t.hits.map(keyOf)).size, t.total);
    assert.deepEqual(t.hits.slice(0, 3).map(keyOf), full.hits.slice(0, 3).map(keyOf));
  });

  it("charge a skill- or tool-level filter's test of a posting to the posting budget, and nothing else", () => {
    const built = (options: SearchIndexOptions): SearchIndex => {
      const index = createSearchIndex({ ...EXACT, ...options });
      for (const e of entries(400, SEED + 5)) index.upsert(e);
      return index;
    };
    const unbounded = built({ maxPostings: 1e9, maxCandidates: 1e9 });
    const text = 'weather forecast get ';
    // Enough postings for the whole search while only reading counts; not once each test costs 8 more.
    const uncharged = built({ maxPostings: 2000, maxCandidates: 1e9, unitCheckCost: 0 });
    const charged = built({ maxPostings: 2000, maxCandidates: 1e9, unitCheckCost: 8 });
    for (const filter of [{ inputModes: ['text/plain'] }, { tags: ['weather', 'forecast', 'travel'] }, { readOnly: true }] as SearchFilter[]) {
      const full = allPages(unbounded, text, filter, 50);
      assert.ok(full.total > 20, `${JSON.stringify(filter)}: ${full.total} hits, too few to tell`);
      assert.deepEqual(allPages(uncharged, text, filter, 50), full, `${JSON.stringify(filter)} within the budget`);
      const first = charged.search({ text, filter, offset: 0, limit: 10, resultsPer: 'match' }) as IndexPage;
      assert.equal(first.totalExact, false, `${JSON.stringify(filter)}: the charged tests cut the search`);
      assert.ok(first.total < full.total, `${JSON.stringify(filter)}: ${first.total} of ${full.total}`);
      // What a cut search shows is still made of matching entries, each once.
      const cut = allPages(charged, text, filter, 50, 'entry');
      const matching = new Set(allPages(unbounded, text, filter, 50, 'entry').hits.map((h) => h.id));
      assert.equal(new Set(cut.hits.map((h) => h.id)).size, cut.hits.length);
      for (const hit of cut.hits) assert.ok(matching.has(hit.id), `${JSON.stringify(filter)}: ${hit.id} does not match`);
    }
    // An entry-level filter tests no unit: the cost changes nothing.
    for (const filter of [{}, { kind: 'agent' }, { streaming: true }] as SearchFilter[]) {
      assert.deepEqual(allPages(charged, text, filter, 50), allPages(uncharged, text, filter, 50), JSON.stringify(filter));
    }
  });
});

describe('a budget spent before a page of results was found', () => {
  // 800 entries sharing a word, oldest first (postings are read newest first); the 40 oldest
  // have an owner of their own, so the newest postings all belong to entries the filter leaves out.
  const data = entries(800, SEED + 41)
    .sort((a, b) => a.listSeq - b.listSeq)
    .map((e, i) => ({ ...e, owner: i < 40 ? 'owner-rare' : e.owner, description: { ...e.description, description: `${e.description.description ?? ''} lighthouse` } }));
  const built = (options: SearchIndexOptions): SearchIndex => {
    const index = createSearchIndex({ ...EXACT, ...options });
    for (const e of data) index.upsert(e);
    return index;
  };
  const filter: SearchFilter = { owner: 'owner-rare' };

  it('reads on, once, where postings skipped on a bit cost a fraction of a read, and fills the page', () => {
    const full = built({ maxPostings: 1e9, maxCandidates: 1e9 });
    // 200 postings are those of entries of other owners; half a budget more, at 1/16 a skipped
    // posting, reaches the owner's 40.
    const index = built({ maxPostings: 200 });
    for (const resultsPer of ['entry', 'match'] as const) {
      const want = full.search({ text: 'lighthouse', filter, offset: 0, limit: 20, resultsPer }) as IndexPage;
      assert.equal(want.hits.length, 20);
      const got = index.search({ text: 'lighthouse', filter, offset: 0, limit: 20, resultsPer }) as IndexPage;
      assert.deepEqual(got.hits, want.hits, resultsPer);
      // Every page of the search reads the same postings: the second page follows the first.
      const next = index.search({ text: 'lighthouse', filter, offset: 20, limit: 20, resultsPer }) as IndexPage;
      const wantNext = full.search({ text: 'lighthouse', filter, offset: 20, limit: 20, resultsPer }) as IndexPage;
      assert.deepEqual(next.hits, wantNext.hits, resultsPer);
      assert.equal(next.total, got.total, resultsPer);
    }
  });

  it('reads on only once: a filter whose matches lie further still gets a short page, said to be cut', () => {
    // 20 postings and 10 more at 1/16 a skipped one: 180 postings, none of the owner's.
    const index = built({ maxPostings: 20 });
    const page = index.search({ text: 'lighthouse', filter, offset: 0, limit: 20 }) as IndexPage;
    assert.equal(page.hits.length, 0);
    assert.equal(page.totalExact, false);
    // A search that finds a page within its budget reads no further.
    const unfiltered = index.search({ text: 'lighthouse', offset: 0, limit: 20 }) as IndexPage;
    assert.equal(unfiltered.hits.length, 20);
    assert.equal(unfiltered.total, 20);
  });
});

describe('the total limit (IndexPage.totalExact)', () => {
  const LIMIT = 7;
  /** Every page of a listing, following pages while they come (a bounded total says "at least"). */
  function pagesWhileFull(index: SearchIndex, filter: SearchFilter, pageSize: number, resultsPer: ResultsPer): { hits: SearchHit[]; first: IndexPage } {
    const first = index.search({ text: '', filter, offset: 0, limit: pageSize, resultsPer }) as IndexPage;
    const hits = [...first.hits];
    for (let offset = pageSize, page = first; page.hits.length === pageSize; offset += pageSize) {
      page = index.search({ text: '', filter, offset, limit: pageSize, resultsPer }) as IndexPage;
      // Past the limit the total grows with the offset asked, and stays a lower bound.
      if (page.totalExact === false) assert.ok(page.total >= Math.min(offset + page.hits.length, LIMIT));
      hits.push(...page.hits);
    }
    return { hits, first };
  }
  function checkBoundedListing(index: SearchIndex, oracle: Oracle, filter: SearchFilter, pageSize: number): void {
    const ctx = `filter ${JSON.stringify(filter)}, page size ${pageSize}`;
    const expected = oracle.listing(filter);
    const perMatch = pagesWhileFull(index, filter, pageSize, 'match');
    assert.deepEqual(perMatch.hits.map(keyOf), expected, `listing per match, ${ctx}`);
    const firstOfEntry = expected.filter((key, i) => expected.findIndex((k) => k.split('/')[0] === key.split('/')[0]) === i);
    const perEntry = pagesWhileFull(index, filter, pageSize, 'entry');
    assert.deepEqual(perEntry.hits.map(keyOf), firstOfEntry, `listing per entry, ${ctx}`);
    for (const [{ first }, all] of [
      [perMatch, expected.length],
      [perEntry, firstOfEntry.length],
    ] as const) {
      // Exact below the limit; at or past it a lower bound at least the limit (and the page).
      if (all < LIMIT) {
        assert.equal(first.total, all, `exact total, ${ctx}`);
        assert.equal(first.totalExact, undefined, ctx);
      } else if (first.totalExact === false) {
        assert.ok(first.total >= Math.max(LIMIT, first.hits.length) && first.total <= all, `bounded total ${first.total} of ${all}, ${ctx}`);
      } else {
        assert.equal(first.total, all, `exact total, ${ctx}`);
      }
    }
  }

  it('listings stop counting at the limit, keep their order and page on past it', () => {
    const data = entries(800, SEED);
    const index = createSearchIndex({ ...EXACT, totalLimit: LIMIT });
    const oracle = new Oracle();
    for (const e of data) {
      index.upsert(e);
      oracle.upsert(e);
    }
    const all = index.search({ text: '', offset: 0, limit: 5 }) as IndexPage;
    assert.equal(all.totalExact, false);
    assert.equal(all.total, LIMIT);
    fc.assert(
      fc.property(sparseFilterArb, fc.integer({ min: 5, max: 200 }), (f, pageSize) => checkBoundedListing(index, oracle, f, pageSize)),
      { seed: SEED + 11, numRuns: 100 },
    );
    // The order is saved with the index: an index loaded from a saved state lists the same.
    const saved = index.saveState!();
    const loaded = createSearchIndex({ ...EXACT, totalLimit: LIMIT });
    loaded.loadState!(saved.parts);
    saved.release();
    fc.assert(
      fc.property(sparseFilterArb, fc.integer({ min: 5, max: 200 }), (f, pageSize) => checkBoundedListing(loaded, oracle, f, pageSize)),
      { seed: SEED + 13, numRuns: 60 },
    );
  });

  it("listings of filters asked again stop counting at the limit alike (their kept bitmaps' population as the total)", () => {
    const pool = entries(300, SEED + 3);
    // Every listing uses its filter's bitmap from its second ask on (by capabilities too, not the entries offering them).
    const index = createSearchIndex({ ...EXACT, totalLimit: LIMIT, filterBitmapsAbove: 0, offeredShare: 0 });
    const oracle = new Oracle();
    const filters: SearchFilter[] = [
      { kind: 'mcp-server' },
      { streaming: true, kind: 'agent' },
      { owner: 'owner-0' },
      // Counted by entries although skill- or tool-level: each entry the bitmap allows has such a unit.
      { readOnly: true },
      { inputModes: ['text/plain'] },
      // Not counted by the bitmap: a tag, two unit-level keys.
      { tags: [tags[0]!] },
      { tags: [tags[1]!], outputModes: ['application/json'] },
      { capabilities: [capabilityValues[0]!, capabilityValues[1]!] },
    ];
    fc.assert(
      fc.property(fc.array(changeArb(100), { minLength: 1, maxLength: 30 }), fc.constantFrom(...filters), fc.integer({ min: 2, max: 9 }), (changes, f, pageSize) => {
        applyChanges(index, oracle, pool, changes);
        checkBoundedListing(index, oracle, f, pageSize);
      }),
      { seed: SEED + 14, numRuns: 150 },
    );
    assert.equal((index as unknown as PostingsIndex).stats.filterBitmaps, filters.length, 'every filter kept its bitmap');
  });

  it('listings by capabilities read from the entries offering them stop counting at the limit as a walk does', () => {
    const data = entries(800, SEED);
    // Always from the entries offering them, however many (more than the limit, mostly).
    const index = createSearchIndex({ ...EXACT, totalLimit: LIMIT, offeredShare: 1, filterBitmaps: 0 });
    const oracle = new Oracle();
    for (const e of data) {
      index.upsert(e);
      oracle.upsert(e);
    }
    const offered = new Map<string, number>();
    for (const e of data) for (const c of new Set([...e.description.skills.map((k) => k.id || k.name), ...e.description.tools.map((t) => t.name)])) offered.set(c, (offered.get(c) ?? 0) + 1);
    const common = [...offered].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([c]) => c);
    assert.ok(offered.get(common[0]!)! > LIMIT * 2, `the commonest value is offered ${offered.get(common[0]!)} times`);
    const capabilityArb = fc
      .record({
        capabilities: fc.array(fc.constantFrom(...common), { minLength: 1, maxLength: 3 }),
        kind: fc.constantFrom(undefined, 'agent' as const, 'mcp-server' as const),
      })
      .map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as SearchFilter);
    fc.assert(
      fc.property(capabilityArb, fc.integer({ min: 2, max: 9 }), (f, pageSize) => checkBoundedListing(index, oracle, f, pageSize)),
      { seed: SEED + 15, numRuns: 100 },
    );
  });

  it('listings stay in order through upserts out of time order and removals', () => {
    const pool = entries(300, SEED + 3);
    const index = createSearchIndex({ ...EXACT, totalLimit: LIMIT });
    const oracle = new Oracle();
    fc.assert(
      // Few distinct minutes: equal times are ordered by id.
      fc.property(fc.array(changeArb(100), { minLength: 1, maxLength: 60 }), sparseFilterArb, (changes, f) => {
        applyChanges(index, oracle, pool, changes);
        checkBoundedListing(index, oracle, f, 4);
      }),
      { seed: SEED + 12, numRuns: 150 },
    );
  });

  it('an index loaded from a saved state lists as the saving index did when saved, late arrivals and removals included, and keeps its order as it changes', () => {
    const pool = entries(300, SEED + 14);
    const listing = (index: SearchIndex, f: SearchFilter): string[] => pagesWhileFull(index, f, 5, 'match').hits.map(keyOf);
    fc.assert(
      fc.property(
        fc.array(changeArb(100), { minLength: 1, maxLength: 80 }),
        fc.array(changeArb(100), { maxLength: 30 }),
        fc.array(sparseFilterArb, { minLength: 1, maxLength: 4 }),
        (before, after, filters) => {
          const index = createSearchIndex({ ...EXACT, totalLimit: LIMIT });
          const oracle = new Oracle();
          // The pool first, out of time order: the lists' side parts fill and merge.
          for (const e of pool) {
            index.upsert(e);
            oracle.upsert(e);
          }
          applyChanges(index, oracle, pool, before);
          const listed = filters.map((f) => listing(index, f));
          const saved = index.saveState!();
          const atSave = oracle.copy();
          // The saving index goes on changing while its state is held: the loaded one is as saved.
          applyChanges(index, oracle, pool, after);
          const loaded = createSearchIndex({ ...EXACT, totalLimit: LIMIT });
          loaded.loadState!(saved.parts);
          saved.release();
          filters.forEach((f, i) => {
            assert.deepEqual(listing(loaded, f), listed[i], `loaded listing, filter ${JSON.stringify(f)}`);
            checkBoundedListing(loaded, atSave, f, 5);
          });
          // The same changes to the loaded index: joins compare with its restored lists.
          applyChanges(loaded, atSave, pool, after);
          for (const f of filters) {
            checkBoundedListing(loaded, atSave, f, 5);
            assert.deepEqual(listing(loaded, f), listing(index, f), `listing after changes, filter ${JSON.stringify(f)}`);
          }
        },
      ),
      { seed: SEED + 14, numRuns: 25 },
    );
  });

  it('an index loaded with a late arrival whose newer neighbour had left places what joins after it in list\'s order', () => {
    const [a, b, c, d] = entries(4, SEED + 15);
    const at = (e: IndexedEntry, place: number): IndexedEntry => ({ ...e, listSeq: place });
    const index = createSearchIndex(EXACT);
    index.upsert(at(a!, 10));
    index.upsert(at(b!, 30));
    // Older than the newest: a side member, placed above a.
    index.upsert(at(c!, 20));
    // The main part's newest leaves (its member stays, stale).
    index.remove(b!.id);
    const saved = index.saveState!();
    const loaded = createSearchIndex(EXACT);
    loaded.loadState!(saved.parts);
    saved.release();
    // Newer than every live main member, older than the side member: it must not go after it.
    loaded.upsert(at(d!, 15));
    const listed = (loaded.search({ text: '', offset: 0, limit: 10, resultsPer: 'entry' }) as IndexPage).hits.map((h) => h.id);
    assert.deepEqual(listed, [c!.id, d!.id, a!.id]);
  });

  it('a text search cut by the work bounds says its total is a lower bound', () => {
    const data = entries(400, SEED + 5);
    const bounded = createSearchIndex({ ...EXACT, maxCandidates: 300 });
    const unbounded = createSearchIndex({ ...EXACT, maxPostings: 1e9, maxCandidates: 1e9 });
    for (const e of data) {
      bounded.upsert(e);
      unbounded.upsert(e);
    }
    const cut = bounded.search({ text: 'weather forecast get ', offset: 0, limit: 10 }) as IndexPage;
    const full = unbounded.search({ text: 'weather forecast get ', offset: 0, limit: 10 }) as IndexPage;
    assert.equal(cut.totalExact, false);
    assert.ok(cut.total < full.total);
    assert.equal(full.totalExact, undefined);
    assert.equal((bounded.search({ text: 'zzzunknown ', offset: 0, limit: 10 }) as IndexPage).totalExact, undefined);
  });
});

describe('settling: a text search stops collecting entries once its page is decided', () => {
  it('gives the same pages as a search that reads every posting, with a total that is exact or a lower bound', () => {
    const data = entries(800, SEED + 9);
    // Default matching (word forms, typos, related words: weak and strong variants); budget off,
    // so the only difference is settling, here as early as it may (after every group it can).
    const eager = createSearchIndex({ maxPostings: 1e9, maxCandidates: 1e9, settleAfter: 1 });
    const full = createSearchIndex({ maxPostings: 1e9, maxCandidates: 1e9, settleAfter: Infinity });
    for (const e of data) {
      eager.upsert(e);
      full.upsert(e);
    }
    // Typos and words being typed, besides whole words.
    const textArb = fc.oneof(
      queryArb.map((q) => q.join(' ')),
      fc.tuple(queryArb, fc.integer({ min: 1, max: 3 })).map(([q, cut]) => q.join(' ').slice(0, -cut)),
      queryArb.map((q) => q.map((w) => (w.length > 4 ? w.slice(1) : w)).join(' ')),
    );
    let settled = 0;
    fc.assert(
      fc.property(textArb, sparseFilterArb, fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 30 }), (text, filter, offset, limit) => {
        const query = { text, filter, offset, limit, resultsPer: 'entry' as const };
        const a = eager.search(query) as IndexPage;
        const b = full.search(query) as IndexPage;
        const ctx = `query ${JSON.stringify(text)} filter ${JSON.stringify(filter)} offset ${offset} limit ${limit}`;
        assert.deepEqual(a.hits, b.hits, ctx);
        assert.equal(b.totalExact, undefined, ctx);
        if (a.totalExact === false) {
          settled++;
          assert.ok(a.total >= Math.min(b.total, offset + a.hits.length) && a.total <= b.total, `total ${a.total} of ${b.total}, ${ctx}`);
        } else {
          assert.equal(a.total, b.total, ctx);
        }
        // A caller asking for exact counts up to a limit (a watch) gets them.
        const counted = eager.search({ ...query, totalLimit: 50 }) as IndexPage;
        assert.deepEqual(counted.hits, b.hits, ctx);
        if (b.total < 50) assert.deepEqual([counted.total, counted.totalExact], [b.total, undefined], ctx);
        else assert.ok(counted.total >= 50, ctx);
      }),
      { seed: SEED + 14, numRuns: 400 },
    );
    // The early stop was taken, not just allowed.
    assert.ok(settled > 40, `${settled} settled searches`);
  });
});

describe('conjunction: a search with many postings reads only the entries having the most clauses', () => {
  it('gives the same pages as a search that reads every posting, when a page of them outrank the rest', () => {
    const data = entries(800, SEED + 21);
    // Default matching (weak and strong variants); no budget and no settling, so the only
    // difference is the conjunction, here for every search of two clauses or more.
    const conj = createSearchIndex({ maxPostings: 1e9, maxCandidates: 1e9, settleAfter: Infinity, conjunctionAbove: 1 });
    const full = createSearchIndex({ maxPostings: 1e9, maxCandidates: 1e9, settleAfter: Infinity, conjunctionAbove: Infinity });
    for (const e of data) {
      conj.upsert(e);
      full.upsert(e);
    }
    // Words found together (two or three of one skill's description), whole or being typed, and
    // random words.
    const together = fc.tuple(fc.integer({ min: 0, max: data.length - 1 }), fc.integer({ min: 2, max: 3 }), fc.nat()).map(([i, n, at]) => {
      const d = data[i]!.description;
      const words = (d.skills[at % Math.max(1, d.skills.length)]?.description ?? d.description ?? '').split(/\s+/).filter((w) => w.length > 2);
      return Array.from({ length: Math.min(n, words.length) }, (_, k) => words[(at + k * 3) % words.length]!).join(' ');
    });
    // A word of an entry's own name excluded ("-word"): a search that restarts after narrowing
    // (the page not decided) must still leave out the entries whose own text has it.
    const nameWord = fc.tuple(fc.integer({ min: 0, max: data.length - 1 }), fc.nat()).map(([i, at]) => {
      const words = data[i]!.description.name.split(/\s+/).filter((w) => w.length > 2);
      return words[at % words.length] ?? 'weather';
    });
    const textArb = fc.oneof(
      { weight: 3, arbitrary: together },
      { weight: 1, arbitrary: together.map((t) => t.slice(0, -2)) },
      { weight: 1, arbitrary: queryArb.map((q) => q.join(' ')) },
      { weight: 1, arbitrary: fc.tuple(together, nameWord).map(([t, w]) => `${t} -${w}`) },
    );
    let narrowed = 0;
    fc.assert(
      fc.property(textArb, sparseFilterArb, fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 30 }), (text, filter, offset, limit) => {
        const query = { text, filter, offset, limit, resultsPer: 'entry' as const };
        const a = conj.search(query) as IndexPage;
        const b = full.search(query) as IndexPage;
        const ctx = `query ${JSON.stringify(text)} filter ${JSON.stringify(filter)} offset ${offset} limit ${limit}`;
        assert.deepEqual(a.hits, b.hits, ctx);
        assert.equal(b.totalExact, undefined, ctx);
        if (a.totalExact === false) {
          // Only the entries having the most clauses were counted.
          narrowed++;
          assert.ok(a.total >= offset + a.hits.length && a.total <= b.total, `total ${a.total} of ${b.total}, ${ctx}`);
        } else {
          assert.equal(a.total, b.total, ctx);
        }
        // A caller asking for exact counts (a watch) is not narrowed.
        const counted = conj.search({ ...query, totalLimit: 50 }) as IndexPage;
        assert.deepEqual([counted.hits, counted.total, counted.totalExact], [b.hits, b.total, undefined], ctx);
      }),
      { seed: SEED + 22, numRuns: 400 },
    );
    // The narrowing was taken, not just allowed.
    assert.ok(narrowed > 25, `${narrowed} narrowed searches`);
  });
});
