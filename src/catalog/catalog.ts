/**
 * The AI Catalog (`application/ai-catalog+json`, spec version 1.0), which is also the ARD
 * manifest: `specVersion`, the registry as `host`, and `entries`. Page 1 starts with the
 * registry's own entries (its search service, its A2A card, its MCP endpoint).
 *
 * Large registries are split the way the AI Catalog organises large catalogs: a page ends with
 * a nested-catalog entry (`application/ai-catalog+json`) whose `url` is the next page, so any
 * client that follows nested catalogs reads them all. A page is one `list` page (newest first);
 * its `after` is the list's page token, so page N+1 continues where page N stopped even if
 * entries were registered in between (an entry updated during a walk moves to page 1).
 */
import type { EntryView } from '../contract/types.js';
import { PAGE_TOKEN_INVALID, badRequest } from '../contract/errors.js';
import { pageToken } from '../operations/request-schemas.js';
import { tokenOutOfLimits, tokenRefused, type TokenWords } from './ard.js';
import { catalogEntryOf, registryEntries, type CatalogEntry } from './entries.js';
import { CATALOG_DOCUMENTS, MEDIA_TYPES, catalogPageUrn, type CatalogDocumentName, type Site } from './vocabulary.js';

export const CATALOG_SPEC_VERSION = '1.0';
/** Entries per page: the most one `list` answers. */
export const CATALOG_PAGE_SIZE = 100;
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

/** Which page: the first, or page N continuing after a list position. */
export type CatalogPage = { page: 1 } | { page: number; after: string };

/** How to reach a page of the catalog after the first. */
const FOLLOW_THE_LINK = 'Follow the url of the last entry (application/ai-catalog+json) of the previous page.';
const AFTER_NOT_VALID = 'The catalog page\'s "after" is not valid: follow the url of the previous page\'s last entry (application/ai-catalog+json) unchanged, or leave page and after out for the first page.';

/**
 * The catalog page's `after` is the registry's list token: refused in the catalog's words (the
 * registry says "pass the nextPageToken of the previous page", a name the catalog, whose pages are
 * addressed by `page` and `after`, does not have), at the query parameter that carried it.
 */
export const CATALOG_AFTER: TokenWords = { notIssued: AFTER_NOT_VALID, otherQuery: AFTER_NOT_VALID, otherOperation: AFTER_NOT_VALID, path: '/query/after' };

/**
 * Reads `?page=N&after=...` (both, or neither for page 1); BAD_REQUEST otherwise, saying which is
 * wrong: one without the other; a `page` that is no number from 2 (its own message, at
 * /query/page); an `after` empty or longer than any token, which is no token the registry issued
 * (page-token-invalid, its detail saying which, as the other doors say it). All were told "page
 * and after must come together", though both had come.
 */
export function catalogPageOf(query: Record<string, unknown>): CatalogPage {
  const { page, after } = query;
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
      `"page" is the number of a catalog page after the first: a whole number from 2 to ${MAX_PAGE}, in digits (got ${JSON.stringify(page.slice(0, 20))}). Follow the url of the previous page's last entry (application/ai-catalog+json) unchanged, or leave page and after out for the first page.`,
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

/** One page of the catalog, served as `document` (ai-catalog.json or ard.json): the next page link stays on the same document. */
export function catalogDocument(site: Site, host: HostInfo, page: CatalogPage, entries: EntryView[], nextAfter: string | undefined, document: CatalogDocumentName): AiCatalog {
  const listed = entries.map((view) => catalogEntryOf(site, view));
  const out: CatalogEntry[] = page.page === 1 ? [...registryEntries(site), ...listed] : listed;
  if (nextAfter) out.push(catalogPageEntry(site, document, page.page + 1, nextAfter));
  return { specVersion: CATALOG_SPEC_VERSION, host, entries: out };
}
