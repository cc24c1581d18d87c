/**
 * The names the discovery standards give things, and how this registry spells its own in them:
 * media types (AI Catalog `mediaType`, ARD `type`), `urn:air:` identifiers and the URLs every
 * registered document is served at. Pure functions of the registry's public URL.
 */
import type { EntryKind } from '../contract/types.js';
import { quote } from '../lib/json.js';

export const MEDIA_TYPES = {
  catalog: 'application/ai-catalog+json',
  a2aAgentCard: 'application/a2a-agent-card+json',
  mcpServerCard: 'application/mcp-server-card+json',
  /** An ARD search service: its `url` is the base of POST /search and GET /agents. */
  registry: 'application/ai-registry+json',
} as const;

export const mediaTypeOf = (kind: EntryKind): string => (kind === 'agent' ? MEDIA_TYPES.a2aAgentCard : MEDIA_TYPES.mcpServerCard);

/**
 * The kind of entry a media type names (its parameters, case and spaces aside; the older
 * `application/agent-card+json` and `application/mcp-server+json` too), or undefined for any
 * other type: an ARD `type` filter naming one is refused (ACCEPTED_TYPES_SAID), as the other
 * doors refuse an unknown kind, instead of answering no results.
 */
function kindOfMediaType(raw: string): EntryKind | undefined {
  const type = bareType(raw);
  if (type === MEDIA_TYPES.a2aAgentCard || type === 'application/agent-card+json') return 'agent';
  if (type === MEDIA_TYPES.mcpServerCard || type === 'application/mcp-server+json') return 'mcp-server';
  return undefined;
}

/** A media type without its parameters, case and spaces. */
const bareType = (raw: string): string => raw.split(';')[0]!.trim().toLowerCase();

/**
 * The types of the registry's own entries in its catalogs (its ARD search service, the nested
 * catalog of each next page), which no registered entry has: types this registry lists, so a
 * `type` filter naming them is answered (nothing registered matches), not refused as unknown.
 */
const OWN_ENTRY_TYPES: ReadonlySet<string> = new Set([MEDIA_TYPES.registry, MEDIA_TYPES.catalog]);

/**
 * The kinds of registered entries a `type` filter's media types name (POST /search's array, GET
 * /agents' comma list): empty when they name only the registry's own entry types, a filter that
 * matches nothing registered. A type this registry does not list is refused with what `unknown`
 * makes of it and its index.
 */
export function kindsOfMediaTypes(types: readonly string[], unknown: (type: string, index: number) => Error): Set<EntryKind> {
  const kinds = new Set<EntryKind>();
  types.forEach((type, i) => {
    const kind = kindOfMediaType(type);
    if (kind !== undefined) kinds.add(kind);
    else if (!OWN_ENTRY_TYPES.has(bareType(type))) throw unknown(type, i);
  });
  return kinds;
}

/** The media types a `type` filter takes, as its refusals say them. */
export const ACCEPTED_TYPES_SAID = `${MEDIA_TYPES.a2aAgentCard} (agents) or ${MEDIA_TYPES.mcpServerCard} (MCP servers)`;

/** What the standards' documents need to know about this registry. */
export interface Site {
  /** PUBLIC_URL without a trailing slash. */
  publicUrl: string;
  /** The `<publisher>` segment of every urn:air identifier this registry issues. */
  publisher: string;
  name: string;
  description: string;
  version: string;
  /** REGISTRY_REQUIRE_VERIFIED: the registry publishes only agent cards it verified (./entries.ts cardWithheld). */
  publishesOnlyVerified: boolean;
}

/**
 * ARD identifiers are `urn:air:<publisher>:<namespace>:<name>` with the publisher a domain name.
 * The registry is the publisher of its own listings, so it is PUBLIC_URL's host name (no port:
 * a port is not part of a domain, and ':' separates segments). Characters a segment cannot hold
 * (an IPv6 literal's brackets and colons) become '-'.
 */
export function urnPublisher(publicUrl: string): string {
  return new URL(publicUrl).hostname.toLowerCase().replace(/[^a-z0-9.-]/g, '-') || 'localhost';
}

/** Namespaces under the publisher: registered entries by kind, the registry itself, catalog pages. */
export const entryUrn = (site: Site, kind: EntryKind, id: string): string => `urn:air:${site.publisher}:${kind}:${id}`;
export const registryUrn = (site: Site, part: string): string => `urn:air:${site.publisher}:registry:${part}`;

/** The catalog documents that are paged, by the name their pages' identifiers give them. */
export const CATALOG_DOCUMENTS = { 'ai-catalog': '/.well-known/ai-catalog.json', ard: '/.well-known/ard.json' } as const;
export type CatalogDocumentName = keyof typeof CATALOG_DOCUMENTS;

/**
 * A catalog page's nested-catalog entry: `urn:air:<publisher>:catalog:<document>:page-<n>:<after>`.
 * It holds all its URL holds (which document, which page, continuing after which position), so
 * one identifier names one page for good and GET /agents/{identifier} can answer it: `page-2`
 * alone named page 2 of either document, continuing wherever the list stood when it was read.
 */
export const catalogPageUrn = (site: Site, document: CatalogDocumentName, page: number, after: string): string =>
  `urn:air:${site.publisher}:catalog:${document}:page-${page}:${after}`;

/**
 * A range's nested-catalog entry: `urn:air:<publisher>:catalog:<document>:range:<from>[:<until>]`,
 * all its URL holds (./catalog.ts CatalogPage), as a page's identifier is.
 */
export const catalogRangeUrn = (site: Site, document: CatalogDocumentName, from: string, until: string | undefined): string =>
  `urn:air:${site.publisher}:catalog:${document}:range:${from}${until === undefined ? '' : `:${until}`}`;

/**
 * What a GET /agents/{ref} reference names: an entry by id (and, from a URN, the kind it must
 * be: `urn:air:<host>:mcp-server:<id of an agent>` is no identifier of ours), one of the
 * registry's own entries, or a catalog page.
 */
export type EntryRef =
  | { id: string; kind?: EntryKind }
  | { self: string }
  | { page: { document: CatalogDocumentName; page: number; after: string } }
  | { range: { document: CatalogDocumentName; from: string; until?: string } }
  /** A well-formed identifier this registry does not have: why, for the 404. */
  | { absent: string }
  /** Not an ARD identifier: what is wrong with it, for the 400. */
  | { malformed: string };

/** A publisher segment: a domain name (ARD 4.2.1: a fully qualified domain name). */
const DOMAIN_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;
/** What a URN's namespace-specific string may hold once decoded (RFC 8141 pchar, "/"; "%" of an encoded octet, checked apart). */
const NSS_CHARACTERS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*$/;

/**
 * Why `ref` (which starts with "urn:") is not an ARD identifier
 * `urn:air:<publisher>[:<namespace>...]:<name>`; undefined when it is one. `ownPublisher` passes
 * as it is (an IPv6 literal's is no domain name).
 */
function ardIdentifierProblem(ref: string, ownPublisher: string): string | undefined {
  const expected = 'ARD identifiers are urn:air:<publisher>:<namespace>:<name>';
  const nid = /^urn:([^:]*)(?::|$)/i.exec(ref)![1]!;
  if (nid.toLowerCase() !== 'air') return `its namespace is ${quote(nid, 40)}, not "air": ${expected}`;
  const segments = ref.split(':').slice(2);
  const empty = segments.findIndex((s) => s === '');
  if (segments.length < 2) return `it has ${segments[0] ? 'a publisher but no name' : 'no publisher'}: ${expected}`;
  if (empty >= 0) return `its ${empty === 0 ? 'publisher' : `segment ${empty + 1} after urn:air:`} is empty: ${expected}`;
  const bad = [...ref].find((c) => !NSS_CHARACTERS.test(c));
  if (bad !== undefined) return `it holds ${JSON.stringify(bad)}, which a URN cannot (RFC 8141): percent-encode the whole identifier once, as one path segment`;
  // In a URN "%" only begins an encoded octet, "%" and two hex digits (RFC 8141 pct-encoded): one
  // that does not (`...:agent:%zz`, sent as %25zz) passed as a name, looked up, and was 404.
  const stray = /%(?![0-9A-Fa-f]{2})/.exec(ref);
  if (stray) return `it holds ${quote(ref.slice(stray.index, stray.index + 3), 10)}, a "%" not followed by two hex digits, which a URN cannot (RFC 8141: "%" begins an encoded octet such as %3A): send the identifier as the registry gave it, percent-encoded once as one path segment`;
  const publisher = segments[0]!;
  if (publisher !== ownPublisher && !DOMAIN_NAME.test(publisher)) return `its publisher ${quote(publisher, 100)} is not a domain name: ${expected}`;
  return undefined;
}

/** This registry's namespaces, for telling a case slip from an identifier it never issued. */
const OWN_NAMESPACES = new Set(['agent', 'mcp-server', 'registry', 'catalog']);

/**
 * Reads GET /agents/{ref} as ARD ADR-0010 (Proposed) has it: an identifier is validated (a
 * malformed one is a 400 saying what is wrong), then looked up exactly, case-sensitively (a
 * well-formed identifier this registry has not issued is a 404). A ref that is no URN at all is an
 * entry id, which this registry also accepts.
 */
export function parseEntryRef(site: Site, ref: string): EntryRef {
  if (!/^urn:/i.test(ref)) return { id: ref };
  const problem = ardIdentifierProblem(ref, site.publisher);
  if (problem) return { malformed: `${quote(ref, 200)} is not an ARD identifier: ${problem}.` };
  const ours = `urn:air:${site.publisher}:`;
  const [namespace = '', ...rest] = ref.slice(ours.length).split(':');
  const name = rest.join(':');
  if (ref.startsWith(ours)) {
    if ((namespace === 'agent' || namespace === 'mcp-server') && rest.length === 1) return { id: name, kind: namespace };
    if (namespace === 'registry' && rest.length === 1) return { self: name };
    const page = /^(ai-catalog|ard):page-([1-9][0-9]{0,6}):([A-Za-z0-9_.-]{1,512})$/.exec(name);
    if (namespace === 'catalog' && page) return { page: { document: page[1] as CatalogDocumentName, page: Number(page[2]), after: page[3]! } };
    const range = /^(ai-catalog|ard):range:([A-Za-z0-9_.-]{1,512})(?::([A-Za-z0-9_.-]{1,512}))?$/.exec(name);
    if (namespace === 'catalog' && range) return { range: { document: range[1] as CatalogDocumentName, from: range[2]!, ...(range[3] === undefined ? {} : { until: range[3] }) } };
  }
  const shown = quote(ref, 200);
  if (ref.toLowerCase().startsWith(ours.toLowerCase()) && (!ref.startsWith(ours) || (namespace !== namespace.toLowerCase() && OWN_NAMESPACES.has(namespace.toLowerCase())))) {
    return { absent: `The registry has no entry ${shown}: identifiers are compared exactly, case-sensitively; this registry's are ${ours}<agent|mcp-server>:<id> in lower case.` };
  }
  if (!ref.startsWith(ours)) {
    return { absent: `The registry has no entry ${shown}: its identifiers start ${ours} (an identifier another registry returned is resolved at that registry, its "source").` };
  }
  return { absent: `The registry has no entry ${shown}: its identifiers are ${ours}agent:<id>, ${ours}mcp-server:<id> and ${ours}registry:<name>.` };
}

const seg = encodeURIComponent;

/** Stable, read-only URLs of what is registered: the card as registered; the MCP document as registered and its Server Card. */
export const documentPaths = {
  agentCard: (id: string) => `/agents/${seg(id)}/card.json`,
  mcpDocument: (id: string) => `/mcp-servers/${seg(id)}/document.json`,
  mcpServerCard: (id: string) => `/mcp-servers/${seg(id)}/server-card.json`,
};

/** The URL a catalog entry of this kind points at. */
export const documentUrl = (site: Site, kind: EntryKind, id: string): string =>
  site.publicUrl + (kind === 'agent' ? documentPaths.agentCard(id) : documentPaths.mcpServerCard(id));
