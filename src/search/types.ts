/**
 * The search seam: an in-memory index over every current entry. Each registry process keeps
 * its own; storage is the source of truth and the index is rebuilt from it at start-up and
 * kept in step with every committed change.
 */
import type { SearchFilter, SearchHit } from '../contract/types.js';
import type { EntryDescription } from '../contract/description.js';
import type { EntryHealth, EntrySource } from '../contract/freshness.js';

/** What the index needs of an entry: identity, ownership, recency and its description. */
export interface IndexedEntry {
  id: string;
  owner: string;
  /** ISO-8601; recency breaks score ties. */
  updatedAt: string;
  description: EntryDescription;
  /** Shown on hits, filtered by `health`; see SearchFilter.health. */
  health?: EntryHealth;
  drift?: boolean;
  /** Where the registry fetches the document (shown on hits). */
  source?: EntrySource;
  /** A signature of the card verified with a trusted key (and which key). */
  verified?: boolean;
  kid?: string;
}

export interface IndexQuery {
  /** Free text; empty or absent lists what matches the filter. */
  text?: string;
  filter?: SearchFilter;
  /** Zero-based position of the first hit to return. */
  offset: number;
  limit: number;
  /**
   * Leave out entries unhealthy (unreachable or invalid) since before this time (ms since the
   * epoch), unless the filter asks for a health itself (REGISTRY_HIDE_UNHEALTHY_SECONDS).
   */
  hideUnhealthyBefore?: number;
  /**
   * Only this entry may match: "does this entry match this query?", answered by the same rules
   * as any search (standing searches ask it on every change).
   */
  onlyId?: string;
}

export interface IndexPage {
  hits: SearchHit[];
  /** Total number of (grouped) hits for the query, across all pages. */
  total: number;
}

export interface SearchIndex {
  /** Adds or replaces the entry (by id); visible to the next search. */
  upsert(entry: IndexedEntry): void;
  remove(id: string): void;
  search(query: IndexQuery): IndexPage;
  /** Number of entries indexed. */
  readonly size: number;
}
