/**
 * The AI Catalog (`application/ai-catalog+json`, spec version 1.0), which is also the ARD
 * manifest: `specVersion`, the registry as `host`, and `entries`. Page 1 starts with the
 * registry's own entries (its search service, its A2A card, its MCP endpoint).
 *
 * Large registries are split the way the AI Catalog organises large catalogs, by nested-catalog
 * entries (`application/ai-catalog+json`), as a tree a client that caps nesting depth (the AI
 * Catalog recommends 4) reads whole: a catalog lists one page (100 entries, newest first) and
 * ends with at most 100 nested catalogs, the ranges the rest of its listing is cut into, each
 * 100·100^k entries for the smallest k that makes 100 ranges hold it (the last range less). A
 * range is a catalog of the same shape: its page, then its rest cut in ranges 100 times smaller.
 * Depth grows with log100 of the entries: the first page's nested catalogs are leaves up to
 * 10,100 entries; at most two levels deep up to 1,000,100; three up to 100,000,100.
 *
 * A range is two positions of the `list` order, its page tokens: `from` (it starts after that
 * entry) and `until` (it ends with that one; none: the last entry), so sibling ranges share no
 * entry and miss none, however the registry changes between the requests of a walk (an entry
 * registered meanwhile is on the first page, read again). Where they are cut comes from the
 * search index's listing order in memory (ListPage.parts), not from storage.
 *
 * Older releases chained pages instead (`?page=N&after=...`, each page's last entry the next
 * page, so page N was N-1 levels deep): such a URL, a client may hold, is still served as it
 * was, the next page of its chain included.
 */
import type { ListPage } from '../contract/types.js';
import { PAGE_TOKEN_INVALID, badRequest } from '../contract/errors.js';
import { quote } from '../lib/json.js';
import { pageToken } from '../operations/request-schemas.js';
import { tokenOutOfLimits, tokenRefused, type TokenWords } from './ard.js';
import { catalogEntryOf, registryEntries, type CatalogEntry } from './entries.js';
import { CATALOG_DOCUMENTS, MEDIA_TYPES, catalogPageUrn, catalogRangeUrn, type CatalogDocumentName, type Site } from './vocabulary.js';

export const CATALOG_SPEC_VERSION = '1.0';
/** Entries per page: the most one `list` answers. */
export const CATALOG_PAGE_SIZE = 100;
/** Nested catalogs a catalog ends with at most: the ranges its rest is cut into. */
export const CATALOG_RANGES = 100;
const MAX_PAGE = 1_000_000;

export interface HostInfo {
  displayName: string;
  identifier?: string;
  documentationUrl?: string;
}

export interface AiCatalog {
  specVersion: string;
  host: HostInfo;
  entries: CatalogEntry[];
}

/** Which catalog: the first page (the root), a range, or page N of the older releases' chain, continuing after a list position. */
export type CatalogPage = { page: 1 } | { page: number; after: string } | { range: CatalogRange };
/** The listing from position `from` (after that entry) to `until` (that entry included; none: to the end). */
export interface CatalogRange {
  from: string;
  until?: string;
}

/** How to reach a page of the catalog after the first. */
const FOLLOW_THE_LINK = 'Follow the url of the last entry (application/ai-catalog+json) of the previous page.';
const AFTER_NOT_VALID = 'The catalog page\'s "after" is not valid: follow the url of the previous page\'s last entry (application/ai-catalog+json) unchanged, or leave page and after out for the first page.';

/**
 * The catalog page's `after` is the registry's list token: refused in the catalog's words (the
 * registry says "pass the nextPageToken of the previous page", a name the catalog, whose pages are
 * addressed by `page` and `after`, does not have), at the query parameter that carried it.
 */
export const CATALOG_AFTER: TokenWords = { notIssued: AFTER_NOT_VALID, otherQuery: AFTER_NOT_VALID, otherOperation: AFTER_NOT_VALID, path: '/query/after' };

/** How to reach a range. */
const FOLLOW_A_RANGE = 'Follow the url of a nested catalog entry (application/ai-catalog+json) unchanged.';
const rangeWords = (name: 'from' | 'until'): TokenWords => {
  const said = `The catalog range's "${name}" is not valid: follow the url of a nested catalog entry (application/ai-catalog+json) unchanged, or leave the query out for the first page.`;
  return { notIssued: said, otherQuery: said, otherOperation: said, path: `/query/${name}` };
};
/** A range's positions, refused in the catalog's words at the parameter that carried them. */
export const CATALOG_FROM = rangeWords('from');
export const CATALOG_UNTIL = rangeWords('until');

/** `?from=...[&until=...]`: a range (see the module comment); BAD_REQUEST saying what is wrong. */
function catalogRangeOf(query: Record<string, unknown>): CatalogPage {
  const { page, after, from, until } = query;
  if (page !== undefined || after !== undefined) {
    throw badRequest('A catalog is addressed either by "from" (and "until") or by "page" and "after", not both: follow the url of a nested catalog entry (application/ai-catalog+json) unchanged.', [
      { path: `/query/${page !== undefined ? 'page' : 'after'}`, message: 'not with from or until', hint: FOLLOW_A_RANGE },
    ]);
  }
  if (from === undefined) {
    throw badRequest('A catalog range is addressed by "from", with "until" unless it runs to the end, exactly as its nested catalog entry links to it; leave both out for the first page.', [
      { path: '/query', message: '"until" without "from"', hint: FOLLOW_A_RANGE },
    ]);
  }
  const range: CatalogRange = { from: oneToken(from, 'from', CATALOG_FROM) };
  if (until !== undefined) range.until = oneToken(until, 'until', CATALOG_UNTIL);
  return { range };
}

/** A range's position as the query gave it: one value, within the limits of a token (else refused in `words`). */
function oneToken(value: unknown, name: string, words: TokenWords): string {
  if (typeof value !== 'string') {
    throw badRequest(`"${name}" is given more than once: a catalog range is addressed by one "from" and at most one "until", exactly as its nested catalog entry links to it.`, [
      { path: `/query/${name}`, message: 'repeated', hint: FOLLOW_A_RANGE },
    ]);
  }
  const outOfLimits = tokenOutOfLimits(pageToken, value);
  if (outOfLimits) throw tokenRefused(PAGE_TOKEN_INVALID, words, outOfLimits);
  return value;
}

/**
 * Reads `?page=N&after=...` (both, or neither for page 1); BAD_REQUEST otherwise, saying which is
 * wrong: one without the other; a `page` that is no number from 2 (its own message, at
 * /query/page); an `after` empty or longer than any token, which is no token the registry issued
 * (page-token-invalid, its detail saying which, as the other doors say it). All were told "page
 * and after must come together", though both had come.
 */
export function catalogPageOf(query: Record<string, unknown>): CatalogPage {
  const { page, after } = query;
  if (query.from !== undefined || query.until !== undefined) return catalogRangeOf(query);
  if (page === undefined && after === undefined) return { page: 1 };
  if (page === undefined || after === undefined) {
    throw badRequest('A catalog page is addressed by "page" (2 or more) and "after" together, exactly as the previous page links to it; leave both out for the first page.', [
      { path: '/query', message: `${page === undefined ? '"after" without "page"' : '"page" without "after"'}: page and after must come together`, hint: FOLLOW_THE_LINK },
    ]);
  }
  if (typeof page !== 'string' || typeof after !== 'string') {
    const repeated = typeof page !== 'string' ? 'page' : 'after';
    throw badRequest(`"${repeated}" is given more than once: a catalog page is addressed by one "page" and one "after", exactly as the previous page links to it.`, [
      { path: `/query/${repeated}`, message: 'repeated', hint: FOLLOW_THE_LINK },
    ]);
  }
  const n = /^[0-9]{1,7}$/.test(page) ? Number(page) : NaN;
  if (!(n >= 2 && n <= MAX_PAGE)) {
    throw badRequest(
      `"page" is the number of a catalog page after the first: a whole number from 2 to ${MAX_PAGE}, in digits (got ${quote(page, 20)}). Follow the url of the previous page's last entry (application/ai-catalog+json) unchanged, or leave page and after out for the first page.`,
      [{ path: '/query/page', message: `not 2..${MAX_PAGE}`, hint: FOLLOW_THE_LINK }],
    );
  }
  const outOfLimits = tokenOutOfLimits(pageToken, after);
  if (outOfLimits) throw tokenRefused(PAGE_TOKEN_INVALID, CATALOG_AFTER, outOfLimits);
  return { page: n, after };
}

export function hostInfo(site: Site, documentationUrl?: string): HostInfo {
  const host: HostInfo = { displayName: site.name, identifier: new URL(site.publicUrl).hostname };
  if (documentationUrl) host.documentationUrl = documentationUrl;
  return host;
}

/**
 * The nested-catalog entry that links to page `page` of `document`, continuing after list
 * position `after`. GET /agents/{its identifier} answers the same entry.
 */
export function catalogPageEntry(site: Site, document: CatalogDocumentName, page: number, after: string): CatalogEntry {
  return {
    identifier: catalogPageUrn(site, document, page, after),
    displayName: `${site.name}: catalog page ${page}`,
    type: MEDIA_TYPES.catalog,
    mediaType: MEDIA_TYPES.catalog,
    url: `${site.publicUrl}${CATALOG_DOCUMENTS[document]}?page=${page}&after=${encodeURIComponent(after)}`,
    description: `More registered agents and MCP servers (entries ${(page - 1) * CATALOG_PAGE_SIZE + 1} onwards, newest first).`,
  };
}

/** The nested-catalog entry that links to `range` of `document`. GET /agents/{its identifier} answers the same entry. */
export function catalogRangeEntry(site: Site, document: CatalogDocumentName, range: CatalogRange): CatalogEntry {
  const query = `from=${encodeURIComponent(range.from)}${range.until === undefined ? '' : `&until=${encodeURIComponent(range.until)}`}`;
  return {
    identifier: catalogRangeUrn(site, document, range.from, range.until),
    displayName: `${site.name}: more entries`,
    type: MEDIA_TYPES.catalog,
    mediaType: MEDIA_TYPES.catalog,
    url: `${site.publicUrl}${CATALOG_DOCUMENTS[document]}?${query}`,
    description: 'More registered agents and MCP servers, newest first: a page of them, and nested catalogs for the rest of this range.',
  };
}

/**
 * One catalog of `document` (ai-catalog.json or ard.json), whose links stay on that document:
 * the registry's own entries first on the first page, `list`'s page, then the nested catalogs
 * of the rest. A range and the first page link each range of the rest (`list.parts`); a page of
 * the older releases' chain links the next page.
 */
export function catalogDocument(site: Site, host: HostInfo, page: CatalogPage, list: ListPage, document: CatalogDocumentName): AiCatalog {
  const listed = list.entries.map((view) => catalogEntryOf(site, view));
  const out: CatalogEntry[] = 'page' in page && page.page === 1 ? [...registryEntries(site), ...listed] : listed;
  const next = list.nextPageToken;
  if (next && 'after' in page) out.push(catalogPageEntry(site, document, page.page + 1, next));
  else if (next) {
    const starts = [next, ...(list.parts ?? [])];
    const end = 'range' in page ? page.range.until : undefined;
    starts.forEach((from, i) => {
      const until = i + 1 < starts.length ? starts[i + 1] : end;
      out.push(catalogRangeEntry(site, document, until === undefined ? { from } : { from, until }));
    });
  }
  return { specVersion: CATALOG_SPEC_VERSION, host, entries: out };
}
