/**
 * Optional hybrid ranking (REGISTRY_EMBEDDINGS_URL): the keyword index fused with nearness of
 * meaning from an embeddings service (./embeddings.ts), by reciprocal rank fusion (done inside
 * the keyword index, which owns filters and entry numbers: ./search-index.ts `fuse`).
 *
 * - Entries: every upsert is embedded in the background, in batches (name, description, skills
 *   or tools, cut to EMBED_TEXT_CHARS); until its vector arrives an entry takes part in the
 *   keyword ranking only. A vector that arrives after the entry changed again is dropped.
 * - Queries: the query text is embedded when searched (memoised), with QUERY_TIMEOUT_MS to
 *   answer. Results per match, empty queries and failures use the keyword ranking alone.
 * - Failures degrade, never fail a search: a failed query embedding is logged (at most once a
 *   minute), counted (`onFailure`), and queries skip the service for BACKOFF_MS; failed entry
 *   batches are retried with exponential backoff up to MAX_BACKOFF_MS.
 *
 * Vectors live in the keyword index as int8 (one byte per dimension per entry, plus 4 bytes), not
 * in storage: after a restart entries are embedded again.
 */
import type { EntryDescription } from '../contract/description.js';
import { clearableTimeout } from '../lib/clearable-timeout.js';
import { codePointPrefix } from '../lib/code-points.js';
import type { Embedder } from './embeddings.js';
import { parseQuery } from './query.js';
import { WordMemo } from './related-words.js';
import type { IndexPage, IndexQuery, IndexedEntry, KeywordIndex, ListingShown, SearchIndex } from './types.js';

/** Characters of an entry's text sent to be embedded. */
export const EMBED_TEXT_CHARS = 2_000;
/** Entries per embeddings request. */
const BATCH_SIZE = 32;
export const QUERY_TIMEOUT_MS = 1_500;
const BACKOFF_MS = 30_000;
const MAX_BACKOFF_MS = 5 * 60_000;
const LOG_INTERVAL_MS = 60_000;

export type EmbeddingStage = 'query' | 'entries';

export interface HybridOptions {
  /** Called on every failure (metrics). */
  onFailure?: (stage: EmbeddingStage, err: Error) => void;
  /** Warnings, at most one a minute per stage. */
  warn?: (message: string, err: Error) => void;
  queryTimeoutMs?: number;
}

/** The text an entry is embedded from. */
export function embeddingText(d: EntryDescription): string {
  const parts = [d.name, d.description, d.provider ?? ''];
  for (const k of d.skills) parts.push(k.name, k.description, k.tags.join(', '));
  for (const t of d.tools) parts.push(t.title ?? t.name, t.description);
  // Cut between characters: half an emoji sent (a lone surrogate, "\ud83c" in the JSON) is text
  // a service may refuse, and with it the batch of 32 entries, at every retry.
  return codePointPrefix(parts.filter(Boolean).join('\n'), EMBED_TEXT_CHARS);
}

export class HybridSearchIndex implements SearchIndex {
  /** Entry id → the version of its text waiting to be embedded. */
  private readonly pending = new Map<string, { version: number; text: string }>();
  /** Entry id → version of its latest upsert. */
  private readonly versions = new Map<string, number>();
  private version = 0;
  private running = false;
  private retryAt = 0;
  private backoff = 1_000;
  private queriesResumeAt = 0;
  private readonly lastWarned = new Map<EmbeddingStage, number>();
  private readonly queryVectors = new WordMemo<Promise<Float32Array>>(1024);
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  /** Resolves when the queue is empty (tests, benchmarks). */
  private idleWaiters: (() => void)[] = [];
  readonly stats = { queryFailures: 0, entryFailures: 0, embeddedEntries: 0, fusedSearches: 0 };

  constructor(
    readonly keyword: KeywordIndex,
    private readonly embedder: Embedder,
    private readonly o: HybridOptions = {},
  ) {}

  get size(): number {
    return this.keyword.size;
  }

  upsert(entry: IndexedEntry): void {
    this.keyword.upsert(entry);
    const version = ++this.version;
    this.versions.set(entry.id, version);
    this.pending.set(entry.id, { version, text: embeddingText(entry.description) });
    this.schedule(0);
  }

  remove(id: string): void {
    this.keyword.remove(id);
    this.versions.delete(id);
    this.pending.delete(id);
  }

  searchNow(query: IndexQuery): IndexPage {
    return this.keyword.search(query);
  }

  listingSteps(every: number, below?: number, until?: number, shown?: ListingShown): { count: number; places: number[] } {
    return this.keyword.listingSteps(every, below, until, shown);
  }

  async search(query: IndexQuery): Promise<IndexPage> {
    const text = query.text?.trim() ?? '';
    // Text of operators and bare fields alone ("tags:", "NOT") is a listing: no ranking to fuse,
    // so the service is not asked (nor waited on).
    const listing = !text || !parseQuery(text).hasText;
    if (listing || query.resultsPer === 'match' || this.keyword.embeddings.count === 0 || Date.now() < this.queriesResumeAt) {
      return this.keyword.search(query);
    }
    let embedding: Float32Array;
    try {
      embedding = await this.queryVectors.get(text, (t) => {
        // The bound's timer is cleared once the service has answered: left for its whole time, it
        // held the search's request (the async context it was made in) that long after the answer.
        // Its message is how a failure at the bound is told (the embeddings client quotes it). The
        // bound never counts the registry's loading of its HTTP client (undici, on a process's
        // first request): a query is embedded only once an entry has been (above), by a request
        // that loaded it.
        const ms = this.o.queryTimeoutMs ?? QUERY_TIMEOUT_MS;
        const bound = clearableTimeout(ms, `a search waits ${ms} ms for its query's embedding`);
        const p = this.embedder
          .embed([t], bound.signal)
          .finally(bound.clear)
          .then((v) => v[0]!);
        // A failed answer is not remembered.
        p.catch(() => this.queryVectors.delete(t));
        return p;
      });
    } catch (err) {
      this.stats.queryFailures++;
      this.queriesResumeAt = Date.now() + BACKOFF_MS;
      this.fail('query', err as Error, `query embeddings failed; keyword ranking only for ${BACKOFF_MS / 1000} s`);
      return this.keyword.search(query);
    }
    this.stats.fusedSearches++;
    return this.keyword.search({ ...query, embedding });
  }

  /** Resolves once every entry upserted so far has been embedded or has failed once. */
  whenIdle(): Promise<void> {
    if (!this.running && this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops background embedding. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.wakeIdle();
  }

  private schedule(delay: number): void {
    if (this.closed || this.running || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.drain();
    }, Math.max(delay, this.retryAt - Date.now(), 0));
    this.timer.unref?.();
  }

  private async drain(): Promise<void> {
    if (this.running || this.closed) return;
    this.running = true;
    try {
      while (this.pending.size > 0 && !this.closed) {
        const batch = [...this.pending].slice(0, BATCH_SIZE);
        let vectors: Float32Array[];
        try {
          vectors = await this.embedder.embed(batch.map(([, p]) => p.text));
        } catch (err) {
          this.stats.entryFailures++;
          this.fail('entries', err as Error, `embedding ${this.pending.size} entries failed; retrying in ${Math.round(this.backoff / 1000)} s`);
          this.retryAt = Date.now() + this.backoff;
          this.backoff = Math.min(MAX_BACKOFF_MS, this.backoff * 2);
          this.wakeIdle();
          return;
        }
        this.backoff = 1_000;
        batch.forEach(([id, p], i) => {
          // Changed or removed while being embedded: its newer version is (or was) queued.
          if (this.versions.get(id) !== p.version) return;
          if (this.pending.get(id)?.version === p.version) this.pending.delete(id);
          if (this.keyword.setEmbedding(id, vectors[i]!)) this.stats.embeddedEntries++;
        });
      }
    } finally {
      this.running = false;
      if (this.pending.size > 0 && !this.closed) this.schedule(0);
      else this.wakeIdle();
    }
  }

  private wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private fail(stage: EmbeddingStage, err: Error, message: string): void {
    this.o.onFailure?.(stage, err);
    const last = this.lastWarned.get(stage) ?? 0;
    if (Date.now() - last < LOG_INTERVAL_MS) return;
    this.lastWarned.set(stage, Date.now());
    this.o.warn?.(`${message}: ${err.message}`, err);
  }
}
