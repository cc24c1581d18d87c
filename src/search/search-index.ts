/**
 * The registry's SearchIndex (./types.ts): FlexSearch postings per unit, filters and ranking
 * on the index's own compact structures.
 *
 * Units: every entry is indexed as one unit for itself (agent: name, description, provider;
 * MCP server: name, description), one per skill (name, tags, description, examples) and one per
 * tool (name, title + annotation title, description). Hits are units.
 *
 * Text query: each query word (and, for the last word, up to 16 longer vocabulary terms) is
 * looked up in FlexSearch; every posting adds to its unit the weight of the fields it matched
 * (./fields.ts) times a mild IDF factor (rare words weigh up to twice as much as ubiquitous
 * ones). The relevance key, reported as the hit's `score`, is
 *     matched words + weighted score / (largest possible weighted score)
 * so a unit matching more of the query's words always ranks first, and for the same number of
 * words the field weights decide (name > title > tags > provider > description > examples).
 * Ties go to the newer entry, then the smaller id (./ranking.ts). Units are matched on their
 * own: a skill does not inherit words of its agent's name.
 *
 * Empty text lists what matches the filter, newest first (score 0, `match.fields` empty):
 * - without a skill- or tool-level filter key: one hit per entry (`match.type` agent or
 *   mcp-server), since the question is "which agents/servers";
 * - with one (tags, input/output modes, tool hints): one hit per matching skill or tool (up to
 *   GROUP_LIMIT per entry, like text hits), since the filter is about skills or tools.
 *
 * Text with characters but no searchable words ("!!!", "the") matches nothing.
 *
 * Not re-entrant (one search at a time, as in a single Node.js thread): per-unit scratch arrays
 * are reused across searches with an epoch stamp instead of being cleared.
 */
import type { SearchHit, SearchMatch } from '../contract/types.js';
import type { EntryDescription } from '../registry/describe.js';
import type { IndexPage, IndexQuery, IndexedEntry, SearchIndex } from './types.js';
import { Attributes, mimeKey, tagKey } from './attributes.js';
import {
  EntryStore,
  HINT_DESTRUCTIVE,
  HINT_IDEMPOTENT,
  HINT_OPEN_WORLD,
  HINT_READ_ONLY,
  type EntryRecord,
} from './entry-store.js';
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
import type { Id } from 'flexsearch';
import { TermIndex } from './flexsearch-index.js';
import { MAX_PREFIX_EXPANSIONS, parseQuery, type ParsedQuery } from './query.js';
import { GROUP_LIMIT, page, type RankContext } from './ranking.js';
import { E_EPOCH, E_HITS, E_SHIFT, I_ORDINAL, I_SHIFT, Tables, U_ATTR, U_ENTRY, U_EPOCH, U_POS, U_SHIFT } from './tables.js';
import { tokenize } from './text-encoder.js';
import { Vocabulary } from './vocabulary.js';

/** Characters of one field that are indexed (documents are size-limited anyway). */
const MAX_FIELD_CHARS = 20_000;
/** Distinct terms indexed per unit. */
const MAX_UNIT_TERMS = 2_000;
/** Largest page a caller can ask for. */
const MAX_LIMIT = 1_000;
/** A term found only through prefix expansion counts this much of an exact match. */
const PREFIX_FACTOR = 0.8;
/** Upper bound of fieldScore × IDF factor for one word (keeps the normalised part < 1). */
const MAX_WORD_SCORE = 17.25 * 2 * 1.0001;

const popcount = (x: number): number => {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
};

/** 2 for a term in one unit, close to 1 for a term in every unit. */
const idfFactor = (units: number, df: number): number =>
  units <= 1 ? 2 : 1 + Math.log(1 + units / df) / Math.log(1 + units);

function growInt32(a: Int32Array, min: number): Int32Array {
  return a.length >= min ? a : new Int32Array(Math.max(min, a.length * 2, 1024));
}
function growFloat64(a: Float64Array, min: number): Float64Array {
  return a.length >= min ? a : new Float64Array(Math.max(min, a.length * 2, 1024));
}

/** Field texts of one unit → distinct terms and, for each, the mask of fields it occurs in. */
class UnitTerms {
  private readonly masks = new Map<string, number>();
  addText(text: string | undefined, field: number): void {
    if (!text) return;
    for (const t of tokenize(text, { maxChars: MAX_FIELD_CHARS })) {
      const m = this.masks.get(t);
      if (m !== undefined) this.masks.set(t, m | field);
      else if (this.masks.size < MAX_UNIT_TERMS) this.masks.set(t, field);
    }
  }
  addTexts(texts: readonly string[], field: number): void {
    for (const t of texts) this.addText(t, field);
  }
  take(): { terms: string[]; slots: number[] } {
    const terms = [...this.masks.keys()];
    const slots = [...this.masks.values()];
    this.masks.clear();
    return { terms, slots };
  }
}

/**
 * Scores are accumulated in fixed point (× SCORE_SCALE, always < 2^24) with the matched field
 * bits above them (<< FIELDS_SHIFT) in one Int32.
 */
const SCORE_SCALE = 1024;
const SCORE_MASK = 0xffffff;
const FIELDS_SHIFT = 24;

/** Postings of one term in one slot: they all add the same to a unit's score. */
interface PostingGroup {
  /** The query word's index, and its bit. */
  word: number;
  bit: number;
  /** Field mask. */
  slot: number;
  ids: readonly Id[];
  /** fieldScore × IDF × prefix factor × SCORE_SCALE. */
  add: number;
}

export interface SearchIndexOptions {
  /**
   * Most units a search collects as candidates. Postings are read rarest query word first, best
   * field first within a word, newest first within a field; once this many units are collected,
   * the remaining postings only add words and fields to units already collected. `total` then
   * counts the collected units (a lower bound). Default DEFAULT_MAX_CANDIDATES.
   */
  maxCandidates?: number;
  /** Most postings (term occurrences) read per search, same order. Default DEFAULT_MAX_POSTINGS. */
  maxPostings?: number;
}

/**
 * Enough for every query of a 10,000-entry registry and nine in ten at 100,000 (generated data,
 * bench/search.ts); bounds the rest (a query for three of the commonest words).
 */
export const DEFAULT_MAX_CANDIDATES = 30_000;
export const DEFAULT_MAX_POSTINGS = 100_000;

export class FlexSearchIndex implements SearchIndex {
  private readonly maxCandidates: number;
  private readonly maxPostings: number;
  private readonly tables = new Tables();
  private readonly store = new EntryStore(this.tables);
  private readonly attrs = new Attributes(this.tables);
  private readonly terms = new TermIndex();
  private readonly vocabulary = new Vocabulary();
  private readonly unitTerms = new UnitTerms();
  /** Units removed since the vocabulary was last swept. */
  private churn = 0;

  // Per-search scratch (the rest lives in the table rows).
  private epoch = 0;
  // Candidate arrays, by position (U_POS): unit id, matched-word bits, score | fields, key.
  private candUnits: Int32Array = new Int32Array(0);
  private candWords: Int32Array = new Int32Array(0);
  private candScore: Int32Array = new Int32Array(0);
  private candKeys: Float64Array = new Float64Array(0);

  constructor(options: SearchIndexOptions = {}) {
    const positive = (v: number | undefined, dflt: number): number => (v !== undefined && v > 0 ? Math.floor(v) : dflt);
    this.maxCandidates = positive(options.maxCandidates, DEFAULT_MAX_CANDIDATES);
    this.maxPostings = positive(options.maxPostings, DEFAULT_MAX_POSTINGS);
  }

  get size(): number {
    return this.store.size;
  }

  upsert(entry: IndexedEntry): void {
    const old = this.store.get(entry.id);
    if (old) this.drop(old);
    const d: EntryDescription = entry.description;
    const { no, units } = this.store.allocate(1 + d.skills.length + d.tools.length);
    const updatedAt = Date.parse(entry.updatedAt);
    const record: EntryRecord = {
      no,
      id: entry.id,
      kind: d.kind,
      updatedAt: Number.isFinite(updatedAt) ? updatedAt : 0,
      name: d.name,
      description: d.description,
      interfaces: d.interfaces.map((i) => ({ ...i })),
      skills: d.skills.map((k) => ({ id: k.id, name: k.name })),
      tools: d.tools.map((t) => ({ name: t.name })),
      units,
    };
    const a = this.attrs;
    const defaultIn = d.defaultInputModes.map(mimeKey);
    const defaultOut = d.defaultOutputModes.map(mimeKey);
    try {
      const entryAttr = a.setEntry(no, d.kind === 'mcp-server', d.streaming, entry.owner, d.interfaces, d.protocolVersion);
      const u = this.unitTerms;
      u.addText(d.name, FIELD_NAME);
      u.addText(d.description, FIELD_DESCRIPTION);
      u.addText(d.provider, FIELD_PROVIDER);
      this.index(units[0]!);
      a.setSelf(units[0]!, entryAttr);
      d.skills.forEach((k, i) => {
        const uid = units[1 + i]!;
        u.addText(k.name, FIELD_NAME);
        u.addTexts(k.tags, FIELD_TAGS);
        u.addText(k.description, FIELD_DESCRIPTION);
        u.addTexts(k.examples, FIELD_EXAMPLES);
        this.index(uid);
        a.setSkill(uid, entryAttr, {
          tags: [...new Set(k.tags.map(tagKey).filter(Boolean))],
          inputModes: k.inputModes?.length ? k.inputModes.map(mimeKey) : defaultIn,
          outputModes: k.outputModes?.length ? k.outputModes.map(mimeKey) : defaultOut,
        });
      });
      d.tools.forEach((t, i) => {
        const uid = units[1 + d.skills.length + i]!;
        u.addText(t.name, FIELD_NAME);
        u.addText(t.title, FIELD_TITLE);
        u.addText(t.annotationTitle, FIELD_TITLE);
        u.addText(t.description, FIELD_DESCRIPTION);
        this.index(uid);
        a.setTool(
          uid,
          entryAttr,
          (t.hints.readOnlyHint ? HINT_READ_ONLY : 0) |
            (t.hints.destructiveHint ? HINT_DESTRUCTIVE : 0) |
            (t.hints.idempotentHint ? HINT_IDEMPOTENT : 0) |
            (t.hints.openWorldHint ? HINT_OPEN_WORLD : 0),
        );
      });
    } catch (err) {
      // Leave nothing half-indexed behind.
      this.unitTerms.take();
      for (const uid of units) {
        this.terms.remove(uid);
        a.clearUnit(uid);
      }
      this.store.discard(no, units);
      throw err;
    }
    this.store.commit(record);
  }

  remove(id: string): void {
    const old = this.store.get(id);
    if (old) this.drop(old);
  }

  search(query: IndexQuery): IndexPage {
    const filter = new CompiledFilter(query.filter, this.attrs);
    const offset = Number.isFinite(query.offset) ? Math.max(0, Math.floor(query.offset)) : 0;
    const limit = Number.isFinite(query.limit) ? Math.min(MAX_LIMIT, Math.max(0, Math.floor(query.limit))) : 0;
    const parsed = parseQuery(query.text);
    this.prepareScratch();
    if (!parsed.hasText) return this.list(filter, offset, limit);
    if (parsed.words.length === 0) return { hits: [], total: 0 };
    return this.match(parsed, filter, offset, limit);
  }

  private index(uid: number): void {
    const { terms, slots } = this.unitTerms.take();
    for (const t of terms) this.vocabulary.add(t);
    this.terms.add(uid, terms, slots);
  }

  private drop(record: EntryRecord): void {
    for (const uid of record.units) {
      this.terms.remove(uid);
      this.attrs.clearUnit(uid);
    }
    this.store.release(record);
    this.attrs.maybeCompact(() => this.store.liveUnits());
    this.churn += record.units.length;
    if (this.churn > Math.max(100_000, 2 * this.store.unitCount)) {
      this.churn = 0;
      this.terms.cleanup();
      this.vocabulary.sweep((t) => this.terms.has(t));
    }
  }

  private prepareScratch(): void {
    const ub = this.store.unitBound;
    if (this.candUnits.length < ub) {
      this.candUnits = growInt32(this.candUnits, ub);
      this.candWords = growInt32(this.candWords, ub);
      this.candScore = growInt32(this.candScore, ub);
      this.candKeys = growFloat64(this.candKeys, ub);
    }
    if (++this.epoch >= 0x3ffffff0) {
      this.epoch = 1;
      this.tables.resetEpochs();
    }
  }

  /**
   * The entry's candidate count in this search so far, or -1 when the filter's entry-level
   * test (owner) rejects it; stamps the entry on first sight.
   */
  private entryHits(no: number, filter: CompiledFilter): number {
    const rows = this.tables.entries;
    const row = no << E_SHIFT;
    if (rows[row + E_EPOCH] === this.epoch) return rows[row + E_HITS]!;
    rows[row + E_EPOCH] = this.epoch;
    const hits = filter.entryLevel && !filter.entryPasses(no) ? -1 : 0;
    rows[row + E_HITS] = hits;
    return hits;
  }

  private match(q: ParsedQuery, filter: CompiledFilter, offset: number, limit: number): IndexPage {
    const unitCount = Math.max(1, this.store.unitCount);
    const words = q.words;

    // 1. Look every term up (the last word also through its prefix expansions) and split the
    //    postings into groups of equal contribution: one per (term, field mask).
    const groups: PostingGroup[] = [];
    const wordPostings = new Array<number>(words.length).fill(0);
    for (let w = 0; w < words.length; w++) {
      const word = words[w]!;
      const expanded = w === words.length - 1 && q.prefixLast ? this.vocabulary.expand(word, MAX_PREFIX_EXPANSIONS) : [];
      for (let t = -1; t < expanded.length; t++) {
        const term = t < 0 ? word : expanded[t]!;
        if (!this.vocabulary.has(term)) continue;
        const slots = this.terms.lookup(term);
        let df = 0;
        for (const ids of slots) if (ids) df += ids.length;
        if (df === 0) continue;
        wordPostings[w]! += df;
        const weight = idfFactor(unitCount, df) * (t < 0 ? 1 : PREFIX_FACTOR) * SCORE_SCALE;
        for (let slot = 0; slot < slots.length; slot++) {
          const ids = slots[slot];
          if (ids && ids.length) groups.push({ word: w, bit: 1 << w, slot, ids, add: Math.round(fieldScore(slot) * weight) });
        }
      }
    }
    // Rarest word first: every unit matching all the words has the rarest one, so collecting its
    // units first finds them all even when the limits below cut the commoner words short. Within
    // a word, best contribution first: a unit's first posting for a word is its best for it.
    groups.sort((a, b) => wordPostings[a.word]! - wordPostings[b.word]! || a.word - b.word || b.add - a.add || a.ids.length - b.ids.length);

    // 2. Accumulate. A unit is filtered on first sight and, if it passes, gets a position in the
    //    candidate arrays; a rejected one is stamped -epoch, so its later postings cost one
    //    compare. The grouped total is counted on the way (an entry's first GROUP_LIMIT hits).
    const epoch = this.epoch;
    const rows = this.tables.units;
    const entryRows = this.tables.entries;
    const candUnits = this.candUnits;
    const candWords = this.candWords;
    const candScore = this.candScore;
    const poolLevel = filter.poolLevel;
    const maxCandidates = this.maxCandidates;
    let n = 0;
    let total = 0;
    let budget = this.maxPostings;
    for (const g of groups) {
      if (budget <= 0) break;
      const ids = g.ids;
      const bit = g.bit;
      const add = g.add;
      const fields = g.slot << FIELDS_SHIFT;
      // Newest postings first (FlexSearch appends), so a cut keeps recent entries.
      const stop = Math.max(0, ids.length - budget);
      budget -= ids.length - stop;
      for (let i = ids.length - 1; i >= stop; i--) {
        const u = ids[i] as number;
        const r = u << U_SHIFT;
        const stamp = rows[r + U_EPOCH]!;
        if (stamp === epoch) {
          const pos = rows[r + U_POS]!;
          const w = candWords[pos]!;
          if ((w & bit) === 0) {
            candWords[pos] = w | bit;
            candScore[pos] = (candScore[pos]! + add) | fields;
          } else {
            candScore[pos]! |= fields;
          }
        } else if (stamp !== -epoch && n < maxCandidates) {
          const e = rows[r + U_ENTRY]!;
          if (e < 0 || !filter.attrPasses(rows[r + U_ATTR]!, e)) {
            rows[r + U_EPOCH] = -epoch;
            continue;
          }
          const hits = this.entryHits(e, filter);
          if (hits < 0 || (poolLevel && !filter.poolPasses(u))) {
            rows[r + U_EPOCH] = -epoch;
            continue;
          }
          entryRows[(e << E_SHIFT) + E_HITS] = hits + 1;
          if (hits < GROUP_LIMIT) total++;
          rows[r + U_EPOCH] = epoch;
          rows[r + U_POS] = n;
          candUnits[n] = u;
          candWords[n] = bit;
          candScore[n++] = add | fields;
        }
      }
    }

    // 3. Relevance keys.
    const norm = 1 / (words.length * MAX_WORD_SCORE * SCORE_SCALE);
    const candKeys = this.candKeys;
    for (let i = 0; i < n; i++) candKeys[i] = popcount(candWords[i]!) + (candScore[i]! & SCORE_MASK) * norm;
    return this.finish(n, total, offset, limit, true);
  }

  private list(filter: CompiledFilter, offset: number, limit: number): IndexPage {
    const entries = this.store.entries;
    const rows = this.tables.units;
    const entryRows = this.tables.entries;
    const candUnits = this.candUnits;
    const candKeys = this.candKeys;
    const unitLevel = filter.unitLevel;
    let n = 0;
    let total = 0;
    for (let no = 0; no < entries.length; no++) {
      const rec = entries[no];
      if (rec === undefined) continue;
      const units = rec.units;
      // Without unit-level keys the entry's own row stands for the entry; with them, every
      // skill or tool is tested.
      const first = unitLevel ? 1 : 0;
      const last = unitLevel ? units.length : 1;
      let hits = 0;
      for (let ord = first; ord < last; ord++) {
        const u = units[ord]!;
        if (!filter.attrPasses(rows[(u << U_SHIFT) + U_ATTR]!, no)) continue;
        if (hits === 0 && this.entryHits(no, filter) < 0) break;
        if (filter.poolLevel && !filter.poolPasses(u)) continue;
        hits++;
        candUnits[n] = u;
        candKeys[n++] = 0;
      }
      if (hits === 0) continue;
      entryRows[(no << E_SHIFT) + E_HITS] = hits;
      total += Math.min(GROUP_LIMIT, hits);
    }
    this.candScore.fill(0, 0, n);
    return this.finish(n, total, offset, limit, false);
  }

  private finish(n: number, total: number, offset: number, limit: number, withFields: boolean): IndexPage {
    if (offset >= total || limit === 0) return { hits: [], total };
    const ctx: RankContext = {
      units: this.candUnits,
      keys: this.candKeys,
      unitRows: this.tables.units,
      unitInfo: this.tables.info,
      entryRows: this.tables.entries,
      entryInfo: this.tables.entryInfo,
      updatedAt: this.tables.updatedAt,
      entryIds: this.store.entryIds,
    };
    const ranked = page(ctx, n, offset, limit);
    return { hits: ranked.map((r) => this.hit(r.uid, r.key, withFields ? this.candScore[r.pos]! >>> FIELDS_SHIFT : -1, r.moreInEntry)), total };
  }

  /** `fieldBits` -1: no fields (listing). */
  private hit(uid: number, key: number, fieldBits: number, moreInEntry: number): SearchHit {
    const rec = this.store.entries[this.tables.units[(uid << U_SHIFT) + U_ENTRY]!]!;
    const ord = this.tables.info[(uid << I_SHIFT) + I_ORDINAL]!;
    const fields = fieldBits >= 0 ? [...fieldNames(fieldBits)] : [];
    let match: SearchMatch;
    if (ord === 0) {
      match = { type: rec.kind === 'agent' ? 'agent' : 'mcp-server', name: rec.name, fields };
    } else if (ord <= rec.skills.length) {
      const k = rec.skills[ord - 1]!;
      match = { type: 'skill', id: k.id, name: k.name, fields };
    } else {
      const t = rec.tools[ord - 1 - rec.skills.length]!;
      match = { type: 'tool', id: t.name, name: t.name, fields };
    }
    const hit: SearchHit = {
      id: rec.id,
      kind: rec.kind,
      name: rec.name,
      description: rec.description,
      score: Math.round(key * 10_000) / 10_000,
      match,
      interfaces: rec.interfaces.map((i) => ({ ...i })),
    };
    if (moreInEntry > 0) hit.moreInEntry = moreInEntry;
    return hit;
  }
}
