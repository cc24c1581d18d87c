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
import { badRequest } from '../contract/errors.js';
import { catalogEntryOf, registryEntries, type CatalogEntry } from './entries.js';
import { CATALOG_DOCUMENTS, MEDIA_TYPES, catalogPageUrn, type CatalogDocumentName, type Site } from './vocabulary.js';

export const CATALOG_SPEC_VERSION = '1.0';
/** Entries per page: the most one `list` answers. */
export const CATALOG_PAGE_SIZE = 100;
const MAX_PAGE = 1_000_000;
const MAX_CURSOR_CHARS = 512;

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

/** Reads `?page=N&after=...` (both, or neither for page 1); BAD_REQUEST otherwise. */
export function catalogPageOf(query: Record<string, unknown>): CatalogPage {
  const { page, after } = query;
  if (page === undefined && after === undefined) return { page: 1 };
  const n = typeof page === 'string' && /^[0-9]{1,7}$/.test(page) ? Number(page) : NaN;
  if (!(n >= 2 && n <= MAX_PAGE) || typeof after !== 'string' || after.length === 0 || after.length > MAX_CURSOR_CHARS) {
    throw badRequest('A catalog page is addressed by "page" (2 or more) and "after" together, exactly as the previous page links to it; leave both out for the first page.', [
      { path: '/query', message: 'page and after must come together', hint: 'Follow the url of the last entry (application/ai-catalog+json) of the previous page.' },
    ]);
  }
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
