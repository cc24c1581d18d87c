/**
 * What the server tells the page about this registry, in `<meta name="registry-config">`
 * (written by page-shell.ts, read by web/src/config.ts): no inline script is needed, and the
 * page adapts to the registry that serves it.
 */
export type FilterType = 'boolean' | 'text' | 'list' | string[];

export interface PageConfig {
  /** The registry's name, from its agent card. */
  name: string;
  /** Path prefix of every URL (PUBLIC_URL's path), "" at the root. */
  base: string;
  /** Keys of the search filter the registry accepts (verified, health, ... appear when supported). */
  filters: string[];
  /**
   * What each search filter key takes: true or false, one text, a list of texts, or one of the
   * given values. The page applies a filter it has no control for when a link carries it
   * (`/?owner=alice`), and leaves out a value the key cannot take.
   */
  filterTypes: Record<string, FilterType>;
  /** Characters of one value of each text filter (a tag, a binding, a version) the registry takes at most. */
  filterMaxChars: Record<string, number>;
  /** Values one list filter (tags) takes at most. */
  maxFilterValues: number;
  /**
   * Searches without a health filter leave out entries unhealthy for a while
   * (REGISTRY_HIDE_UNHEALTHY_SECONDS is set): a search that finds nothing may have hidden them.
   */
  hidesUnhealthy: boolean;
  /** Reads need a token (REGISTRY_PUBLIC_READ=false). */
  readNeedsToken: boolean;
  /** Characters of an entry's id at most: a longer one in a link names no entry. */
  maxIdChars: number;
  /**
   * Revisions `get` lists at most (the newest): an entry listing as many may keep older ones
   * (REGISTRY_MAX_REVISIONS above it, or revisions written by an admin, which are exempt).
   */
  maxRevisionsListed: number;
  /** Characters of a page token at most: a longer one in a link (?p=) is garbled. */
  maxPageTokenChars: number;
  /** Characters of a search's words the registry takes at most (REGISTRY_MAX_QUERY_CHARS). */
  maxQueryChars: number;
  maxDocumentBytes: number;
}
