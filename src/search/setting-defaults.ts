/**
 * The search index's default for what a setting configures: an index made without the value uses
 * it, and config/config.ts gives it to the setting left unset. Here, importing nothing, so
 * configuration reads it without loading the index.
 */

/** Like Elasticsearch's track_total_hits: exact counts up to here, "at least" beyond (REGISTRY_SEARCH_TOTAL_LIMIT). */
export const DEFAULT_TOTAL_LIMIT = 10_000;
