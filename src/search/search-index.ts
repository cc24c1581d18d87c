/**
 * The registry's SearchIndex (./types.ts): FlexSearch postings per unit; filters, ranking,
 * grouping and paging on the index's own compact tables.
 *
 * Units: every entry is indexed as one unit for itself (agent: name, description, provider;
 * MCP server: name, description), one per skill (name, tags, description, examples) and one per
 * tool (name, title + annotation title, description). Hits are units. A unit's id encodes its
 * entry number and position (./tables.ts). Units are matched on their own: a skill does not
 * inherit the words of its agent's name.
 *
 * Text query: each query word (and, for the last word, up to 16 longer vocabulary terms) is
 * looked up in FlexSearch; every posting adds to its unit the weight of the fields it matched
 * (./fields.ts) times a mild IDF factor (a rare word weighs up to twice a ubiquitous one). The
 * relevance key, reported as the hit's `score`, is
 *     matched words + weighted score / (largest possible weighted score)
 * so a unit matching more of the query's words always ranks first, and for the same number of
 * words the field weights decide (name > title > tags > provider > description > examples).
 * Ties go to the newer entry, then the smaller id (./ranking.ts).
 *
 * Work is bounded (SearchIndexOptions): postings are read rarest word first, best field first,
 * newest first, and a search collects at most `maxCandidates` units and reads at most
 * `maxPostings` postings. Below the limits results and `total` are exact; past them the least
 * relevant matches are left out and `total` counts what was collected (a lower bound). At
 * 100,000 generated entries (bench/search.ts) 87% of unfiltered and 99% of filtered queries
 * stay below the defaults, and the first page differed from an unbounded search's in under 1%.
 *
 * Empty text lists what matches the filter, newest first (score 0, `match.fields` empty):
 * - without a skill- or tool-level filter key: one hit per entry (`match.type` agent or
 *   mcp-server), since the question is "which agents/servers";
 * - with one (tags, input/output modes, tool hints): one hit per matching skill or tool (up to
 *   GROUP_LIMIT per entry, like text hits), since the filter is about skills or tools.
 *
 * Text with characters but no searchable words ("!!!", "the") matches nothing.
 *
 * Not re-entrant (one search at a time, as in a single Node.js thread): scratch state is reused
 * across searches, with an epoch stamp in the entry rows instead of clearing.
 */
import type { Id } from 'flexsearch';
import type { SearchHit, SearchMatch } from '../contract/types.js';
import type { EntryDescription } from '../contract/description.js';
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
import { TermIndex } from './flexsearch-index.js';
import { MAX_PREFIX_EXPANSIONS, parseQuery, type ParsedQuery } from './query.js';
import { GROUP_LIMIT, page, type RankContext } from './ranking.js';
import { E_BASE, E_COUNT, E_EPOCH, E_HITS, E_SHIFT, MAX_UNITS_PER_ENTRY, ORD_BITS, ORD_MASK, Tables, unitId } from './tables.js';
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
 * Enough for every query of a 10,000-entry registry and most at 100,000 (generated data,
 * bench/search.ts); bounds the rest (a query for three of the commonest words) to a few ms.
 */
export const DEFAULT_MAX_CANDIDATES = 30_000;
export const DEFAULT_MAX_POSTINGS = 100_000;

/** Multiplier of the candidate hash (Fibonacci hashing). */
const HASH_MUL = 0x9e3779b1 | 0;
/** A unit rejected by a unit-level filter, remembered in the candidate hash. */
const REJECTED = -2;

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

  // Per-search scratch (entry rows hold the rest).
  private epoch = 0;
  /** Candidates by position: unit id, matched-word bits, score | field bits, relevance key. */
  private candIds: Int32Array = new Int32Array(0);
  private candWords: Int32Array = new Int32Array(0);
  private candScore: Int32Array = new Int32Array(0);
  private candKeys: Float64Array = new Float64Array(0);
  /** Open-addressing hash: unit id + 1 → candidate position (or REJECTED). */
  private hashKeys: Int32Array = new Int32Array(0);
  private hashVals: Int32Array = new Int32Array(0);

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
    const unitCount = Math.min(MAX_UNITS_PER_ENTRY, 1 + d.skills.length + d.tools.length);
    const { no, base } = this.store.allocate(unitCount);
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
      verified: entry.verified === true,
      kid: entry.verified === true ? entry.kid : undefined,
      unitCount,
      ...(entry.health ? { health: { ...entry.health } } : {}),
      ...(entry.drift !== undefined ? { drift: entry.drift } : {}),
      ...(entry.source ? { source: { ...entry.source } } : {}),
    };
    const a = this.attrs;
    const u = this.unitTerms;
    const defaultIn = d.defaultInputModes.map(mimeKey);
    const defaultOut = d.defaultOutputModes.map(mimeKey);
    try {
      a.setEntry(no, d.kind === 'mcp-server', d.streaming, record.verified, entry.owner, d.interfaces, d.protocolVersion, entry.health);
      u.addText(d.name, FIELD_NAME);
      u.addText(d.description, FIELD_DESCRIPTION);
      u.addText(d.provider, FIELD_PROVIDER);
      this.index(unitId(no, 0));
      a.setSelf(base);
      for (let ord = 1; ord < unitCount; ord++) {
        const k = d.skills[ord - 1];
        if (k) {
          u.addText(k.name, FIELD_NAME);
          u.addTexts(k.tags, FIELD_TAGS);
          u.addText(k.description, FIELD_DESCRIPTION);
          u.addTexts(k.examples, FIELD_EXAMPLES);
          this.index(unitId(no, ord));
          a.setSkill(no, base + ord, {
            tags: [...new Set(k.tags.map(tagKey).filter(Boolean))],
            inputModes: k.inputModes?.length ? k.inputModes.map(mimeKey) : defaultIn,
            outputModes: k.outputModes?.length ? k.outputModes.map(mimeKey) : defaultOut,
          });
          continue;
        }
        const t = d.tools[ord - 1 - d.skills.length]!;
        u.addText(t.name, FIELD_NAME);
        u.addText(t.title, FIELD_TITLE);
        u.addText(t.annotationTitle, FIELD_TITLE);
        u.addText(t.description, FIELD_DESCRIPTION);
        this.index(unitId(no, ord));
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
        this.terms.remove(unitId(no, ord));
        a.clearUnit(base + ord);
      }
      this.store.discard(no, unitCount);
      throw err;
    }
    this.store.commit(record);
  }

  remove(id: string): void {
    const old = this.store.get(id);
    if (old) this.drop(old);
  }

  search(query: IndexQuery): IndexPage {
    let onlyEntry: number | undefined;
    if (query.onlyId !== undefined) {
      const record = this.store.get(query.onlyId);
      if (!record) return { hits: [], total: 0 };
      onlyEntry = record.no;
    }
    const filter = new CompiledFilter(query.filter, this.attrs, { hideUnhealthyBefore: query.hideUnhealthyBefore, onlyEntry });
    const offset = Number.isFinite(query.offset) ? Math.max(0, Math.floor(query.offset)) : 0;
    const limit = Number.isFinite(query.limit) ? Math.min(MAX_LIMIT, Math.max(0, Math.floor(query.limit))) : 0;
    const parsed = parseQuery(query.text);
    if (++this.epoch >= 0x3ffffff0) {
      this.epoch = 1;
      this.tables.resetEpochs();
    }
    if (!parsed.hasText) return this.list(filter, offset, limit);
    if (parsed.words.length === 0) return { hits: [], total: 0 };
    return this.match(parsed, filter, offset, limit);
  }

  private index(id: number): void {
    const { terms, slots } = this.unitTerms.take();
    for (const t of terms) this.vocabulary.add(t);
    this.terms.add(id, terms, slots);
  }

  private drop(record: EntryRecord): void {
    const base = this.tables.entries[(record.no << E_SHIFT) + E_BASE]!;
    for (let ord = 0; ord < record.unitCount; ord++) {
      this.terms.remove(unitId(record.no, ord));
      this.attrs.clearUnit(base + ord);
    }
    this.store.release(record);
    this.attrs.unhealthySince.delete(record.no);
    this.attrs.maybeCompact(() => this.store.liveUnitSlots());
    this.churn += record.unitCount;
    if (this.churn > Math.max(100_000, 2 * this.store.unitCount)) {
      this.churn = 0;
      this.terms.cleanup();
      this.vocabulary.sweep((t) => this.terms.has(t));
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
    this.candScore = grow(this.candScore);
    const keys = new Float64Array(size);
    keys.set(this.candKeys);
    this.candKeys = keys;
  }

  /** A cleared candidate hash of at least 2 × `n` slots; returns its bit count. */
  private clearHash(n: number): number {
    let bits = 10;
    while (1 << bits < 2 * n) bits++;
    const size = 1 << bits;
    if (this.hashKeys.length < size) {
      this.hashKeys = new Int32Array(size);
      this.hashVals = new Int32Array(size);
    } else {
      this.hashKeys.fill(0, 0, size);
    }
    return bits;
  }

  private match(q: ParsedQuery, filter: CompiledFilter, offset: number, limit: number): IndexPage {
    const unitCount = Math.max(1, this.store.unitCount);
    const words = q.words;

    // 1. Look every term up (the last word also through its prefix expansions) and split the
    //    postings into groups of equal contribution: one per (term, field mask).
    const groups: PostingGroup[] = [];
    const wordPostings = new Array<number>(words.length).fill(0);
    let terms = 0;
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
        terms++;
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
    let postings = 0;
    for (const p of wordPostings) postings += p;

    // 2. Accumulate. With a single term a unit has one posting, so nothing needs deduplicating;
    //    otherwise a hash (sized to the search, so it stays in cache) maps unit ids to candidate
    //    positions. An entry is filtered and stamped on first sight; the grouped total is
    //    counted on the way (an entry's first GROUP_LIMIT candidates).
    const maxCandidates = this.maxCandidates;
    this.ensureCandidates(Math.min(maxCandidates, postings));
    const dedupe = terms > 1;
    const hashBits = dedupe ? this.clearHash(Math.min(postings, maxCandidates * 4)) : 10;
    const hashShift = 32 - hashBits;
    const hashMask = (1 << hashBits) - 1;
    const hashRoom = 1 << (hashBits - 2);
    const hashKeys = this.hashKeys;
    const hashVals = this.hashVals;
    let hashUsed = 0;
    const epoch = this.epoch;
    const entryRows = this.tables.entries;
    const candIds = this.candIds;
    const candWords = this.candWords;
    const candScore = this.candScore;
    const entryFree = filter.entryFree;
    const unitLevel = filter.unitLevel;
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
        const id = ids[i] as number;
        let h = 0;
        if (dedupe) {
          h = Math.imul(id, HASH_MUL) >>> hashShift;
          let pos = -1;
          for (let k = hashKeys[h]!; k !== 0; k = hashKeys[h]!) {
            if (k === id + 1) {
              pos = hashVals[h]!;
              break;
            }
            h = (h + 1) & hashMask;
          }
          if (pos >= 0) {
            const w = candWords[pos]!;
            if ((w & bit) === 0) {
              candWords[pos] = w | bit;
              // Scores stay below 2^24: the addition never carries into the field bits.
              candScore[pos] = (candScore[pos]! + add) | fields;
            } else {
              candScore[pos]! |= fields;
            }
            continue;
          }
          if (pos === REJECTED) continue;
        }
        if (n >= maxCandidates) continue;
        const e = id >>> ORD_BITS;
        const row = e << E_SHIFT;
        let hits: number;
        if (entryRows[row + E_EPOCH] === epoch) {
          hits = entryRows[row + E_HITS]!;
        } else {
          entryRows[row + E_EPOCH] = epoch;
          hits = entryFree || filter.entryPasses(e) ? 0 : -1;
          entryRows[row + E_HITS] = hits;
        }
        if (hits < 0) continue;
        if (unitLevel && !filter.unitPasses(entryRows[row + E_BASE]! + (id & ORD_MASK))) {
          if (dedupe && hashUsed < hashRoom) {
            hashKeys[h] = id + 1;
            hashVals[h] = REJECTED;
            hashUsed++;
          }
          continue;
        }
        entryRows[row + E_HITS] = hits + 1;
        if (hits < GROUP_LIMIT) total++;
        if (dedupe) {
          // The hash never fills: candidates take at most half of it, remembered rejections
          // at most a quarter.
          hashKeys[h] = id + 1;
          hashVals[h] = n;
          hashUsed++;
        }
        candIds[n] = id;
        candWords[n] = bit;
        candScore[n++] = add | fields;
      }
    }

    // 3. Relevance keys.
    const norm = 1 / (words.length * MAX_WORD_SCORE * SCORE_SCALE);
    const candKeys = this.candKeys;
    for (let i = 0; i < n; i++) candKeys[i] = popcount(candWords[i]!) + (candScore[i]! & SCORE_MASK) * norm;
    return this.finish(n, total, offset, limit, true);
  }

  private list(filter: CompiledFilter, offset: number, limit: number): IndexPage {
    // Reads only the dense tables (a pass over entry objects would cost a cache miss each).
    const live = this.store.entryIds;
    const entryRows = this.tables.entries;
    const unitLevel = filter.unitLevel;
    this.ensureCandidates(unitLevel ? this.store.unitCount : this.store.size);
    const candIds = this.candIds;
    const candKeys = this.candKeys;
    // The key is the recency itself, so the selection rejects most candidates on one compare.
    const updatedAt = this.tables.updatedAt;
    let n = 0;
    let total = 0;
    for (let no = 0; no < live.length; no++) {
      if (live[no] === undefined || !(filter.entryFree || filter.entryPasses(no))) continue;
      const row = no << E_SHIFT;
      const recency = updatedAt[no]!;
      let hits = 0;
      if (!unitLevel) {
        // The entry itself stands for the entry.
        hits = 1;
        candIds[n] = unitId(no, 0);
        candKeys[n++] = recency;
      } else {
        const base = entryRows[row + E_BASE]!;
        const count = entryRows[row + E_COUNT]!;
        for (let ord = 1; ord < count; ord++) {
          if (!filter.unitPasses(base + ord)) continue;
          hits++;
          candIds[n] = unitId(no, ord);
          candKeys[n++] = recency;
        }
      }
      entryRows[row + E_HITS] = hits;
      total += Math.min(GROUP_LIMIT, hits);
    }
    return this.finish(n, total, offset, limit, false);
  }

  private finish(n: number, total: number, offset: number, limit: number, withFields: boolean): IndexPage {
    if (offset >= total || limit === 0) return { hits: [], total };
    const ctx: RankContext = {
      ids: this.candIds,
      keys: this.candKeys,
      entryRows: this.tables.entries,
      updatedAt: this.tables.updatedAt,
      entryIds: this.store.entryIds,
    };
    const ranked = page(ctx, n, offset, limit);
    return {
      hits: ranked.map((r) =>
        withFields ? this.hit(r.id, r.key, this.candScore[r.pos]! >>> FIELDS_SHIFT, r.moreInEntry) : this.hit(r.id, 0, -1, r.moreInEntry),
      ),
      total,
    };
  }

  /** `fieldBits` -1: no fields (listing). */
  private hit(id: number, key: number, fieldBits: number, moreInEntry: number): SearchHit {
    const rec = this.store.entries[id >>> ORD_BITS]!;
    const ord = id & ORD_MASK;
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
      verified: rec.verified,
    };
    if (rec.kid !== undefined) hit.kid = rec.kid;
    if (moreInEntry > 0) hit.moreInEntry = moreInEntry;
    if (rec.health) hit.health = { ...rec.health };
    if (rec.drift !== undefined) hit.drift = rec.drift;
    if (rec.source) hit.source = { ...rec.source };
    return hit;
  }
}
