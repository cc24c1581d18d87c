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
 * Bounded by answers (REGISTRY_SEARCH_CACHE_ENTRIES) and by bytes (REGISTRY_SEARCH_CACHE_BYTES),
 * least recently used first, and the answers it hands out are frozen: they are shared by every
 * request that asks the same, so nobody may edit one, and their JSON is made once
 * (src/lib/shared-json.ts). An answer's bytes are the parsed answer and its JSON, as memory-size.ts
 * counts them: a count of answers or of hits alone bounded nothing, as a hit is as large as the
 * texts of its entry (20 hits of the longest descriptions and skill texts are 72 KB of JSON and
 * about 150 KB counted so, where a common one is 15 KB and about 50 KB).
 */
import type { SearchPage } from '../contract/types.js';
import { shareJson, sharedMemoryBytes } from '../lib/shared-json.js';

interface Kept {
  page: SearchPage;
  bytes: number;
}

export class SearchCache {
  readonly #pages = new Map<string, Kept>();
  readonly #maxPages: number;
  readonly #maxBytes: number;
  #bytes = 0;
  /** The index (and its version) every kept answer came from. */
  #index: object | undefined;
  #version: number | undefined;
  /** Lookups answered from the cache, and not (metrics). */
  found = 0;
  missed = 0;

  /** `maxPages` 0 turns the cache off; `maxBytes` bounds what the kept answers hold. */
  constructor(maxPages: number, maxBytes: number) {
    this.#maxPages = Math.max(0, Math.floor(maxPages));
    this.#maxBytes = Math.max(0, Math.floor(maxBytes));
  }

  /** About how many bytes the kept answers hold (metrics). */
  get bytes(): number {
    return this.#bytes;
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
    // Its JSON is made here rather than by its first answer: made once either way.
    const bytes = sharedMemoryBytes(frozen);
    if (bytes > this.#maxBytes) return frozen;
    const previous = this.#pages.get(key);
    if (previous) {
      this.#pages.delete(key);
      this.#bytes -= previous.bytes;
    }
    this.#pages.set(key, { page: frozen, bytes });
    this.#bytes += bytes;
    for (const [oldKey, old] of this.#pages) {
      if (this.#pages.size <= this.#maxPages && this.#bytes <= this.#maxBytes) break;
      this.#pages.delete(oldKey);
      this.#bytes -= old.bytes;
    }
    return frozen;
  }

  #clear(index: object, version: number): void {
    this.#pages.clear();
    this.#bytes = 0;
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
