/**
 * Recent search answers, kept while the index is unchanged: a search asked again (same text,
 * filter, limit, results per and page token) is answered without searching. Every answer is
 * kept with the index it came from and that index's `resultsVersion`, which every committed
 * change (local or from another replica, through the change feed), reload and option change
 * bumps: the first lookup after a change finds the cache stale and empties it, so a cached
 * answer is always the answer the index would give now.
 *
 * Answers do not depend on the caller (anyone allowed to search sees the same results), so one
 * cache serves every caller; who may search is checked before the cache is asked. Answers that
 * change without the index changing are never kept: hybrid ranking (no `resultsVersion`) and
 * searches that hide entries unhealthy for too long (the cut-off moves with the clock).
 *
 * Bounded by answers and by hits (least recently used first), and the answers it hands out are
 * frozen: they are shared by every request that asks the same, so nobody may edit one, and
 * their JSON is made once (src/lib/shared-json.ts).
 */
import type { SearchPage } from '../contract/types.js';
import { shareJson } from '../lib/shared-json.js';

/** Hits kept per answer on average before the least recently used answers go (a default page is 20). */
export const CACHED_HITS_PER_ANSWER = 20;

interface Kept {
  page: SearchPage;
  hits: number;
}

export class SearchCache {
  readonly #pages = new Map<string, Kept>();
  readonly #maxPages: number;
  readonly #maxHits: number;
  #hits = 0;
  /** The index (and its version) every kept answer came from. */
  #index: object | undefined;
  #version: number | undefined;
  /** Lookups answered from the cache, and not (metrics). */
  found = 0;
  missed = 0;

  /** `maxPages` 0 turns the cache off. */
  constructor(maxPages: number, maxHits = maxPages * CACHED_HITS_PER_ANSWER) {
    this.#maxPages = Math.max(0, Math.floor(maxPages));
    this.#maxHits = Math.max(0, Math.floor(maxHits));
  }

  get enabled(): boolean {
    return this.#maxPages > 0;
  }

  get size(): number {
    return this.#pages.size;
  }

  /** The answer kept for `key` from this index as it is now, or undefined. */
  get(key: string, index: object, version: number): SearchPage | undefined {
    if (index !== this.#index || version !== this.#version) {
      this.#clear(index, version);
      this.missed++;
      return undefined;
    }
    const kept = this.#pages.get(key);
    if (!kept) {
      this.missed++;
      return undefined;
    }
    // Most recently used last: eviction takes the head.
    this.#pages.delete(key);
    this.#pages.set(key, kept);
    this.found++;
    return kept.page;
  }

  /** Keeps `page` as the answer for `key` from this index as it is now; returns it frozen. */
  set(key: string, index: object, version: number, page: SearchPage): SearchPage {
    if (this.#maxPages === 0) return page;
    const frozen = deepFreeze(page);
    // Every request that asks the same gets this very answer: its JSON is made once.
    shareJson(frozen);
    if (index !== this.#index || version !== this.#version) this.#clear(index, version);
    const hits = Math.max(1, page.results.length);
    if (hits > this.#maxHits) return frozen;
    const previous = this.#pages.get(key);
    if (previous) {
      this.#pages.delete(key);
      this.#hits -= previous.hits;
    }
    this.#pages.set(key, { page: frozen, hits });
    this.#hits += hits;
    for (const [oldKey, old] of this.#pages) {
      if (this.#pages.size <= this.#maxPages && this.#hits <= this.#maxHits) break;
      this.#pages.delete(oldKey);
      this.#hits -= old.hits;
    }
    return frozen;
  }

  #clear(index: object, version: number): void {
    this.#pages.clear();
    this.#hits = 0;
    this.#index = index;
    this.#version = version;
  }
}

/**
 * Freezes an answer and everything in it. Every search the cache misses pays this (a page of 20
 * hits is about 150 objects), so it walks without allocating: indexes for arrays and for-in for
 * plain objects (a search answer is plain data, nothing inherited) instead of Object.values'
 * array per object, which made freezing cost more than serialising the same answer.
 */
function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
  } else {
    for (const key in value) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
