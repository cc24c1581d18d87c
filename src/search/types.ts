/**
 * The search seam: an in-memory index over every current entry. Each registry process keeps
 * its own; storage is the source of truth and the index is rebuilt from it at start-up and
 * kept in step with every committed change.
 */
import type { ResultsPer, SearchFilter, SearchHit } from '../contract/types.js';
import type { EntryDescription } from '../contract/description.js';
import type { EntryHealth, EntrySource } from '../contract/freshness.js';
import type { IndexState, SavedState } from './index-state.js';

/** What the index needs of an entry: identity, ownership, recency and its description. */
export interface IndexedEntry {
  id: string;
  owner: string;
  /**
   * Its place in `list`'s order (StoredEntry.listSeq, storage's list_seq; larger is newer, no two
   * entries share one): newest first breaks score ties and orders a search without text, exactly
   * as `list` orders. Set once, when the entry is created: an update must not move an entry past
   * a page token's position.
   */
  listSeq: number;
  description: EntryDescription;
  /**
   * The language of its text, when declared (ISO 639-1 or a BCP 47 tag: `de`, `pt-BR`);
   * otherwise detected from the text. Languages without word forms are treated as English.
   */
  language?: string;
  /** Shown on hits, filtered by `health`; see SearchFilter.health. */
  health?: EntryHealth;
  drift?: boolean;
  /** Where the registry fetches the document (shown on hits). */
  source?: EntrySource;
  /** A signature of the card verified with a trusted key (and which key, of which key set). */
  verified?: boolean;
  kid?: string;
  jwks?: string;
}

/**
 * What a listing shows (the registry's `list`): the entries of its filter, without the agents
 * the caller may not see (REGISTRY_REQUIRE_VERIFIED). Entries it leaves out are no part of its
 * steps: counted, a range of the catalog's tree that held only them came out empty.
 */
export interface ListingShown {
  filter?: Pick<SearchFilter, 'kind' | 'owner' | 'health' | 'verified'>;
  hideUnverifiedAgents?: boolean;
}

export interface IndexQuery {
  /** Free text; empty or absent lists what matches the filter. */
  text?: string;
  filter?: SearchFilter;
  /** Zero-based position of the first hit to return. */
  offset: number;
  limit: number;
  /** One hit per entry (default) or per matching skill, tool or entry text. */
  resultsPer?: ResultsPer;
  /**
   * The query text's embedding (./hybrid.ts): with text and results per entry, the keyword
   * ranking is fused with the entries nearest to it. Ignored when no entry has an embedding of
   * its length.
   */
  embedding?: Float32Array;
  /**
   * Leave out entries unhealthy (unreachable or invalid) since before this time (ms since the
   * epoch), unless the filter asks for a health itself (REGISTRY_HIDE_UNHEALTHY_SECONDS).
   */
  hideUnhealthyBefore?: number;
  /**
   * Leave out agents whose card is not verified by a trusted key (REGISTRY_REQUIRE_VERIFIED: a
   * card that stopped verifying is not served); MCP servers, which have no signatures, stay.
   */
  hideUnverifiedAgents?: boolean;
  /**
   * Only this entry may match: "does this entry match this query?", answered by the same rules
   * as any search (standing searches ask it on every change).
   */
  onlyId?: string;
  /**
   * `total` is exact up to this many hits (default: the index's own limit,
   * REGISTRY_SEARCH_TOTAL_LIMIT); a standing search asks for one more than it may follow.
   */
  totalLimit?: number;
}

export interface IndexPage {
  hits: SearchHit[];
  /**
   * Total number of hits for the query (entries, or grouped matches), across all pages: exact
   * unless `totalExact` is false, when it is a lower bound (counting stopped at the total
   * limit, or the search's work bounds left matches out).
   */
  total: number;
  totalExact?: false;
  /** Why nothing matched, where the index knows it at no cost (SearchPage.reason). */
  reason?: string;
}

export interface SearchIndex {
  /**
   * A copy of the whole index, to save beside the data (./snapshot-file.ts); absent where the
   * index cannot be restored from one (hybrid ranking).
   */
  saveState?(): SavedState;
  /** Takes over a saved state (into a new, empty index); throws when it does not fit. */
  loadState?(state: IndexState): void;
  /** Adds or replaces the entry (by id); visible to the next search. */
  upsert(entry: IndexedEntry): void;
  remove(id: string): void;
  /** The keyword index answers at once; hybrid ranking (./hybrid.ts) may wait on an embeddings service. */
  search(query: IndexQuery): IndexPage | Promise<IndexPage>;
  /**
   * Keyword matching only, answered at once: standing searches decide per change whether an
   * entry is in their results, which must not wait on (or call) an embeddings service.
   */
  searchNow(query: IndexQuery): IndexPage;
  /**
   * The listing newest registered first (storage's default `list` order), in steps of `every`
   * entries, over the part of it below list place `below` (from the newest when undefined) down
   * to list place `until` included (to the oldest when undefined): how many entries that part
   * holds, and the list places of its entries number every, 2·every, ... (each the last of a step).
   * Only the entries the listing shows count (`shown`: its filter, and agents hidden from its
   * caller left out), so a step holds `every` listed entries, but for entries the index does not
   * hold yet. Walks that part of the order in memory (and the newer entries above it).
   */
  listingSteps(every: number, below?: number, until?: number, shown?: ListingShown): { count: number; places: number[] };
  /** Number of entries indexed. */
  readonly size: number;
  /**
   * Changes whenever an answer of `search` may change (every upsert, removal, load, embedding
   * or matching option), so an answer kept with it stays right while it is unchanged. Absent
   * where answers change without the index changing (hybrid ranking: the embeddings service
   * comes and goes), so nothing may keep its answers.
   */
  readonly resultsVersion?: number;
}

/** The in-memory index itself: answers synchronously, and keeps the embeddings hybrid ranking fuses with. */
export interface KeywordIndex extends SearchIndex {
  search(query: IndexQuery): IndexPage;
  /** Stores an entry's embedding (cleared by the next upsert of the entry); false when it cannot. */
  setEmbedding(id: string, vector: Float32Array): boolean;
  /** Entries with an embedding, and the embeddings' length. */
  readonly embeddings: { count: number; dimensions: number };
}
