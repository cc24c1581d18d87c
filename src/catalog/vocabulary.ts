/**
 * The names the discovery standards give things, and how this registry spells its own in them:
 * media types (AI Catalog `mediaType`, ARD `type`), `urn:air:` identifiers and the URLs every
 * registered document is served at. Pure functions of the registry's public URL.
 */
import type { EntryKind } from '../contract/types.js';

export const MEDIA_TYPES = {
  catalog: 'application/ai-catalog+json',
  a2aAgentCard: 'application/a2a-agent-card+json',
  mcpServerCard: 'application/mcp-server-card+json',
  /** An ARD search service: its `url` is the base of POST /search and GET /agents. */
  registry: 'application/ai-registry+json',
} as const;

export const mediaTypeOf = (kind: EntryKind): string => (kind === 'agent' ? MEDIA_TYPES.a2aAgentCard : MEDIA_TYPES.mcpServerCard);

/** The kinds a set of media types asks for (unknown types ask for nothing). */
export function kindsOf(mediaTypes: string[]): Set<EntryKind> {
  const kinds = new Set<EntryKind>();
  for (const raw of mediaTypes) {
    const type = raw.split(';')[0]!.trim().toLowerCase();
    if (type === MEDIA_TYPES.a2aAgentCard || type === 'application/agent-card+json') kinds.add('agent');
    if (type === MEDIA_TYPES.mcpServerCard || type === 'application/mcp-server+json') kinds.add('mcp-server');
  }
  return kinds;
}

/** What the standards' documents need to know about this registry. */
export interface Site {
  /** PUBLIC_URL without a trailing slash. */
  publicUrl: string;
  /** The `<publisher>` segment of every urn:air identifier this registry issues. */
  publisher: string;
  name: string;
  description: string;
  version: string;
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
export const catalogPageUrn = (site: Site, page: number): string => `urn:air:${site.publisher}:catalog:page-${page}`;

/**
 * What a GET /agents/{ref} reference names: an entry by id (and, from a URN, the kind it must
 * be: `urn:air:<host>:mcp-server:<id of an agent>` is no identifier of ours), or one of the
 * registry's own entries.
 */
export type EntryRef = { id: string; kind?: EntryKind } | { self: string };

/** Accepts an entry id or one of our URNs (agent, mcp-server, registry); undefined for another publisher's URN. */
export function parseEntryRef(site: Site, ref: string): EntryRef | undefined {
  if (!ref.toLowerCase().startsWith('urn:')) return { id: ref };
  const m = /^urn:air:([^:]+):([^:]+):([^:]+)$/i.exec(ref);
  if (!m || m[1]!.toLowerCase() !== site.publisher) return undefined;
  if (m[2]!.toLowerCase() === 'registry') return { self: m[3]! };
  if (m[2] !== 'agent' && m[2] !== 'mcp-server') return undefined;
  return { id: m[3]!, kind: m[2] };
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
