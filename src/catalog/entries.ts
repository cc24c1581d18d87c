/**
 * Registered entries as the discovery standards show them: one pure mapper from an entry view
 * (with its document) to a catalog entry that is at once an AI Catalog entry (`mediaType`) and
 * an ARD entry (`type`, `capabilities`, `representativeQueries`); and the MCP Server Card of a
 * registered MCP server.
 *
 * Both standards let consumers ignore members they do not know, so one entry carries both
 * spellings of its media type: one document serves /.well-known/ai-catalog.json and
 * /.well-known/ard.json alike. ARD's schema allows only scalar `metadata` values, so metadata
 * stays flat.
 */
import { createHash } from 'node:crypto';
import { domainToASCII } from 'node:url';
import type { EntryKind, EntryView, McpServerDocument } from '../contract/types.js';
import { codePointLength, codePointPrefix } from '../lib/code-points.js';
import { isObject } from '../lib/json.js';
import { describeAgentCard, describeMcpServer } from '../registry/describe.js';
import { tagKey } from '../search/attributes.js';
import { fold } from '../search/text-encoder.js';
import { MEDIA_TYPES, documentPaths, documentUrl, entryUrn, mediaTypeOf, registryUrn, type Site } from './vocabulary.js';
import { MCP_PATH, MCP_SERVER_CARD_PATH } from '../mcp/paths.js';

export interface CatalogEntry {
  identifier: string;
  displayName: string;
  /** ARD's name for the media type. */
  type: string;
  /** The AI Catalog's name for it. */
  mediaType: string;
  url: string;
  description?: string;
  tags?: string[];
  /** ARD: skill ids or tool names, for filtering without fetching the document. */
  capabilities?: string[];
  /** ARD: sample requests the resource serves (2–5), here the skills' examples. */
  representativeQueries?: string[];
  version?: string;
  updatedAt?: string;
  metadata?: Record<string, string | number | boolean>;
}

const MAX_TAGS = 32;
const MAX_CAPABILITIES = 64;
const MAX_QUERIES = 5;
const MAX_QUERY_CHARS = 200;

/**
 * Distinct non-empty strings, first spelling kept, compared case-insensitively, or exactly with
 * `exact`: capabilities (skill ids, tool names) are names that differ in case as MCP, A2A and the
 * `capabilities` filter tell them apart, so "Read" beside "read" was dropped from the entry that
 * the filter found by it.
 */
function distinct(values: string[], max: number, exact = false): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const v of values) {
    const t = v.trim();
    const key = exact ? t : t.toLowerCase();
    if (!t || seen.has(key)) continue;
    seen.add(key);
    out.push(t);
    if (out.length >= max) break;
  }
  return out;
}

/**
 * An entry's tags, one per tag the tags filter tells apart (case, accents and what separates a
 * tag's words, punctuation or a change of case included, aside: ../search/attributes.ts
 * tagKey), each in the spelling most of its skills use (the first of equals), in the order they
 * first appear. "Machine Learning", "machine-learning" and "MachineLearning" (or "Node.js" and
 * "node-js") were several tags of one entry, though asking for any finds them all.
 */
function distinctTags(values: string[], max: number): string[] {
  const spellings = new Map<string, Map<string, number>>();
  for (const v of values) {
    const t = v.trim();
    if (!t) continue;
    const key = tagKey(t);
    let counts = spellings.get(key);
    if (!counts) {
      if (spellings.size >= max) continue;
      spellings.set(key, (counts = new Map()));
    }
    counts.set(t, (counts.get(t) ?? 0) + 1);
  }
  return [...spellings.values()].map((counts) => [...counts].reduce((best, c) => (c[1] > best[1] ? c : best))[0]);
}

const versionOf = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v : undefined);

type EntryHead = Pick<CatalogEntry, 'identifier' | 'displayName' | 'type' | 'mediaType' | 'url' | 'description'>;

/** What every entry of the registry says first, in a catalog or a search result: who, what, where. */
export function entryHead(site: Site, e: { kind: EntryKind; id: string; name: string; description: string }): EntryHead {
  const head: EntryHead = {
    identifier: entryUrn(site, e.kind, e.id),
    displayName: e.name || e.id,
    type: mediaTypeOf(e.kind),
    mediaType: mediaTypeOf(e.kind),
    url: documentUrl(site, e.kind, e.id),
  };
  if (e.description) head.description = e.description;
  return head;
}

/**
 * Whether the registry verified the entry's card signature with a trusted key (and which key), as
 * flat metadata: `verified` for agents (MCP servers are never signed), `verifiedKid` beside it and
 * `verifiedJwks`, the key set that key comes from (a kid is unique within one set only).
 */
export function trustMetadata(e: { kind: EntryKind; verified: boolean; kid?: string; jwks?: string }): Record<string, string | boolean> {
  if (e.kind !== 'agent') return {};
  if (!e.verified || e.kid === undefined) return { verified: e.verified };
  return e.jwks === undefined ? { verified: true, verifiedKid: e.kid } : { verified: true, verifiedKid: e.kid, verifiedJwks: e.jwks };
}

/**
 * Why the registry does not publish an entry's document, or undefined when it does: with
 * REGISTRY_REQUIRE_VERIFIED, an agent card that is not verified (its key no longer trusted) is
 * hidden from discovery, and its card, served bare, would read as one the registry stands behind.
 */
export function cardWithheld(site: Site, e: { kind: EntryKind; verified: boolean }): string | undefined {
  if (!site.publishesOnlyVerified || e.kind !== 'agent' || e.verified) return undefined;
  return 'it is not verified by a key this registry trusts, and the registry publishes only verified cards (REGISTRY_REQUIRE_VERIFIED)';
}

/**
 * The catalog entry of a registered agent or MCP server; `view.document` must be present. An
 * entry whose card is withheld (read by id: discovery leaves it out) says why in
 * `metadata.withheld`, and keeps its `url`: ARD asks every entry for exactly one of `url` and
 * `data`, so a strict client would refuse the entry without it, and the url answers a 404 that
 * says the same.
 */
export function catalogEntryOf(site: Site, view: EntryView): CatalogEntry {
  const entry: CatalogEntry = entryHead(site, view);
  const metadata: Record<string, string | number | boolean> = { registryId: view.id, kind: view.kind, revision: view.revision, ...trustMetadata(view) };
  if (view.kind === 'agent') {
    const card = describeAgentCard(view.document, view.protocolVersion === '0.3' ? '0.3' : '1.0');
    const tags = distinctTags(card.skills.flatMap((s) => s.tags), MAX_TAGS);
    const capabilities = distinct(card.skills.map((s) => s.id || s.name), MAX_CAPABILITIES, true);
    const queries = distinct(card.skills.flatMap((s) => s.examples).filter((q) => q.length <= MAX_QUERY_CHARS), MAX_QUERIES);
    if (tags.length) entry.tags = tags;
    if (capabilities.length) entry.capabilities = capabilities;
    if (queries.length >= 2) entry.representativeQueries = queries;
    const version = isObject(view.document) ? versionOf(view.document.version) : undefined;
    if (version) entry.version = version;
    if (view.protocolVersion) metadata.protocolVersion = view.protocolVersion;
  } else {
    const server = describeMcpServer((isObject(view.document) ? view.document : {}) as unknown as McpServerDocument);
    const capabilities = distinct(server.tools.map((t) => t.name), MAX_CAPABILITIES, true);
    if (capabilities.length) entry.capabilities = capabilities;
    const meta = isObject(view.document) && isObject(view.document.mcpServer) ? view.document.mcpServer : {};
    const version = versionOf(meta.version);
    if (version) entry.version = version;
    if (typeof meta.url === 'string') metadata.serverUrl = meta.url;
    metadata.documentUrl = site.publicUrl + documentPaths.mcpDocument(view.id);
  }
  entry.updatedAt = view.updatedAt;
  const withheld = cardWithheld(site, view);
  if (withheld) metadata.withheld = `The card is not served: ${withheld}.`;
  entry.metadata = { ...metadata, ...freshnessMetadata(view) };
  return entry;
}

/**
 * Where the registry fetches an entry and how its live check went, flattened for `metadata`
 * (ARD allows scalar values only): health, healthSince, drift, sourceUrl. Only what changes
 * when the outcome changes — not the time of every check — so a catalog page keeps its ETag
 * (and crawlers their 304s) across checks that found nothing new; `get` has the rest.
 * Nothing for entries the registry never checks.
 */
export function freshnessMetadata(e: Pick<EntryView, 'health' | 'drift' | 'source'>): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  if (e.health) {
    out.health = e.health.status;
    out.healthSince = e.health.since;
  }
  if (e.drift !== undefined) out.drift = e.drift;
  if (e.source) out.sourceUrl = e.source.url;
  return out;
}

/**
 * The registry itself, first in every catalog: its ARD search service (the `url` ARD clients
 * append /search and /agents to), its A2A card and its MCP endpoint's Server Card.
 */
export function registryEntries(site: Site): CatalogEntry[] {
  const base = { version: site.version };
  return [
    {
      identifier: registryUrn(site, 'search'),
      displayName: `${site.name} (search)`,
      type: MEDIA_TYPES.registry,
      mediaType: MEDIA_TYPES.registry,
      url: `${site.publicUrl}/`,
      description: `ARD search over every registered agent and MCP server: POST ${site.publicUrl}/search, GET ${site.publicUrl}/agents/{id}.`,
      tags: ['registry', 'search', 'a2a', 'mcp'],
      ...base,
    },
    {
      identifier: registryUrn(site, 'a2a'),
      displayName: site.name,
      type: MEDIA_TYPES.a2aAgentCard,
      mediaType: MEDIA_TYPES.a2aAgentCard,
      url: `${site.publicUrl}/.well-known/agent-card.json`,
      description: site.description,
      tags: ['registry', 'a2a'],
      ...base,
    },
    {
      identifier: registryUrn(site, 'mcp'),
      displayName: `${site.name} (MCP)`,
      type: MEDIA_TYPES.mcpServerCard,
      mediaType: MEDIA_TYPES.mcpServerCard,
      url: site.publicUrl + MCP_SERVER_CARD_PATH,
      description: `The registry's discovery tools over MCP (Streamable HTTP at ${site.publicUrl}${MCP_PATH}).`,
      tags: ['registry', 'mcp'],
      ...base,
    },
  ];
}

// ---- MCP Server Cards ----

/** The Server Card schema (SEP-2127 draft, "v2" family). */
export const SERVER_CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json';
const CARD_DESCRIPTION_MAX = 100;

export interface ServerCard {
  $schema: string;
  name: string;
  version: string;
  description: string;
  title?: string;
  remotes?: Array<{ type: 'streamable-http' | 'sse'; url: string; supportedProtocolVersions?: string[] }>;
}

/**
 * At most `max` characters, as the Server Card schema's maxLength counts them (code points): the
 * cut was by UTF-16 units, so a description of emoji or rarer CJK ideographs was cut at half its
 * limit and could end in half a surrogate pair (an invalid character, U+FFFD to every reader).
 */
const shorten = (s: string, max: number): string => (codePointLength(s) <= max ? s : `${codePointPrefix(s, max - 1)}…`);

/** A Server Card `name`: reverse-DNS namespace "/" name, from a host name (an address stays as it is) and a display name. */
export function serverCardName(host: string, name: string): string {
  const labels = host.toLowerCase().replace(/[^a-z0-9.-]/g, '-').split('.').filter(Boolean);
  const namespace = (/[a-z]/.test(host.toLowerCase().replace(/^\[.*\]$/, '')) ? labels.reverse() : labels).join('.') || 'local';
  // Case and accents folded as search folds them ("Météo" is `meteo`: it was `m-t-o`); a word in
  // another script is its ASCII (IDNA) form, as a host name's is ("天气服务" is `xn--zfrv5m22mc1e`,
  // which reads back as the name): every name in Chinese, Arabic or Greek was `server`, one name
  // for every such server of a host. Digits of any script are ASCII digits there too (`२०२४` is
  // `2024`): this is an identifier (the draft's pattern is ASCII), and the card's `title` keeps
  // the name as registered.
  // Such a word stands between dots, as a label of a host name does: joined by "-" to the next,
  // "xn--a-xn--b" decoded as neither.
  const words = fold(name)
    .split(/[^\p{L}\p{N}\p{M}._-]+/u)
    .map((word) => word.replace(/^-+|-+$/g, ''))
    .filter(Boolean)
    .map((word) => (isAscii(word) ? { text: word.replace(/[^a-z0-9._-]+/g, '-'), idna: false } : { text: domainToASCII(word), idna: true, word }))
    .filter((w) => w.text !== '');
  const joined = (list: typeof words): string => list.map((w, i) => (i === 0 ? '' : w.idna || list[i - 1]!.idna ? '.' : '-') + w.text).join('');
  const whole = joined(words);
  if (whole.length <= LOCAL_NAME_MAX) return `${namespace.slice(0, 99)}/${whole || 'server'}`;
  // Too long: cut between words (a cut xn-- label decoded as nothing, and two names that differ
  // only past the cut were one name; a first word too long for the limit is cut between its
  // characters before it is encoded), and a hash of the whole name added so they stay distinct.
  const suffix = `.${createHash('sha256').update(whole).digest('hex').slice(0, 8)}`;
  const budget = LOCAL_NAME_MAX - suffix.length;
  const kept: typeof words = [];
  for (const w of words) {
    const room = budget - joined(kept).length - (kept.length === 0 ? 0 : 1);
    if (w.text.length <= room) {
      kept.push(w);
      continue;
    }
    // Cut within a word only when it is the first: the name keeps at least a part of it.
    if (kept.length > 0) break;
    if (!w.idna) {
      kept.push({ text: w.text.slice(0, room), idna: false });
    } else {
      const chars = [...w.word!];
      for (let n = chars.length - 1; n > 0; n--) {
        const text = domainToASCII(chars.slice(0, n).join(''));
        if (text !== '' && text.length <= room) {
          kept.push({ text, idna: true, word: chars.slice(0, n).join('') });
          break;
        }
      }
    }
    break;
  }
  return `${namespace.slice(0, 99)}/${joined(kept).replace(/[-.]+$/, '')}${suffix}`;
}

/** The Server Card draft's limit for a name's part after "/" that this registry keeps to. */
const LOCAL_NAME_MAX = 100;
const isAscii = (s: string): boolean => /^[\x00-\x7f]*$/.test(s);

/**
 * The Server Card of a registered MCP server, derived from its registration: name from the
 * server URL's host and its name, version as registered (else "r<revision>", the registry's own
 * count), the transport guessed from the URL (an /sse path is the legacy SSE transport). The
 * card lists no tools (cards never do); the toolspec is the entry's document.
 */
export function serverCardOf(view: EntryView): ServerCard {
  const meta = isObject(view.document) && isObject(view.document.mcpServer) ? view.document.mcpServer : {};
  const url = typeof meta.url === 'string' ? meta.url : (view.interfaces[0]?.url ?? '');
  let host = 'local';
  let transport: 'streamable-http' | 'sse' = 'streamable-http';
  try {
    const parsed = new URL(url);
    host = parsed.hostname;
    if (/\/sse\/?$/.test(parsed.pathname)) transport = 'sse';
  } catch {
    // keep the defaults: a stored URL passed validation, this only guards old data
  }
  const card: ServerCard = {
    $schema: SERVER_CARD_SCHEMA,
    name: serverCardName(host, view.name),
    version: versionOf(meta.version) ?? `r${view.revision}`,
    description: shorten(view.description || view.name, CARD_DESCRIPTION_MAX),
    title: shorten(view.name, CARD_DESCRIPTION_MAX),
  };
  if (url) card.remotes = [{ type: transport, url }];
  return card;
}

/** The registry's own MCP endpoint as a Server Card. */
export function registryServerCard(site: Site, protocolVersions: string[]): ServerCard {
  return {
    $schema: SERVER_CARD_SCHEMA,
    name: serverCardName(new URL(site.publicUrl).hostname, 'a2a-agent-registry'),
    version: site.version,
    description: shorten(site.description, CARD_DESCRIPTION_MAX),
    title: shorten(site.name, CARD_DESCRIPTION_MAX),
    remotes: [{ type: 'streamable-http', url: site.publicUrl + MCP_PATH, supportedProtocolVersions: protocolVersions }],
  };
}
