/**
 * The search index of the registry: `createSearchIndex()` builds the in-memory SearchIndex
 * (./types.ts) the registry keeps in step with storage. Design notes in ./search-index.ts.
 */
import { PostingsIndex, type SearchIndexOptions } from './search-index.js';
import type { KeywordIndex } from './types.js';

export type { SearchIndexOptions } from './search-index.js';
export { DEFAULT_MAX_CANDIDATES, DEFAULT_MAX_POSTINGS } from './search-index.js';
export { DEFAULT_TOTAL_LIMIT } from './setting-defaults.js';

export type { IndexPage, IndexQuery, IndexedEntry, KeywordIndex, SearchIndex } from './types.js';
export { GROUP_LIMIT } from './ranking.js';

/** A new, empty index. The options bound the work of one search (defaults suit 100,000 entries). */
export function createSearchIndex(options: SearchIndexOptions = {}): KeywordIndex {
  return new PostingsIndex(options);
}
