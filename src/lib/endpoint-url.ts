/**
 * The one normal form of the URLs that identify entries (every interface URL of an agent, an MCP
 * server's URL), so that two spellings of one endpoint compare equal wherever identity is decided:
 * "same agent" on re-registration, and "this URL belongs to another principal".
 *
 * WHATWG URL parsing does most of the work (scheme and host lower-cased, IDNA, IPv4 forms such as
 * `0x7f.1` canonicalised, default port dropped, `.`/`..`/`%2e` segments resolved); on top of it:
 * - the fragment is dropped (it never reaches the server), and an empty query (`…/a2a?`) too;
 * - percent-encoding is normalised (RFC 3986 §6.2.2.2): escapes of unreserved characters are
 *   decoded (`%61%32a` → `a2a`), the others upper-cased (`%2f` → `%2F`);
 * - trailing slashes of the path are insignificant (`/a2a/` ≡ `/a2a`, `https://h/` ≡ `https://h`),
 *   and so are repeated ones (`//a2a` ≡ `/a2a`: nginx, in front of many agents, merges them by
 *   default, so `https://h//a2a` reaches the agent at `https://h/a2a`);
 * - a trailing dot of the host name is dropped (`alice.example.com.` is the same DNS name);
 * - an IPv4-mapped IPv6 address is its IPv4 address (`[::ffff:203.0.113.7]` connects to
 *   `203.0.113.7`), which WHATWG parsing leaves as it is.
 * An endpoint is its URL and the tenant its requests carry (`withTenant`): keys of identities and
 * claims carry both; a claim leaves the URL's query string out (`claimKey`: a query is no ownership
 * boundary between principals).
 *
 * Pure and dependency-free: validation reports problems with it, storage keys on it (and its
 * migration backfills with it).
 */

/** Schemes an endpoint URL may have (see `endpointSchemeAllowed`). */
export const HTTP_SCHEMES: ReadonlySet<string> = new Set(['http:', 'https:']);
/** WebSocket URLs, which the A2A spec shows for custom (URI-identified) bindings (§12). */
export const WEBSOCKET_SCHEMES: ReadonlySet<string> = new Set(['ws:', 'wss:']);

/** C0 controls, DEL and C1 controls: WHATWG parsing silently drops some of them (tab, newlines). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export type EndpointUrlProblem =
  | { kind: 'control'; at: number; codePoint: number }
  | { kind: 'unparseable' }
  | { kind: 'credentials' }
  | { kind: 'scheme'; scheme: string };

export type ParsedEndpointUrl = { ok: true; url: URL; normalized: string } | { ok: false; problem: EndpointUrlProblem };

/** The index of the first control character in `raw`, or -1. */
export function controlCharacterAt(raw: string): number {
  const m = CONTROL.exec(raw);
  return m ? m.index : -1;
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** Decodes escapes of unreserved characters and upper-cases the hex digits of the others. */
function normalizePercentEncoding(s: string): string {
  if (!s.includes('%')) return s;
  return s.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(c) ? c : `%${hex.toUpperCase()}`;
  });
}

/** An IPv4-mapped IPv6 address as WHATWG serialises it ("[::ffff:7f00:1]"). */
const IPV4_MAPPED = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/;

/**
 * The host of a parsed URL as the normal form writes it: without a trailing dot, an IPv4-mapped
 * IPv6 address as its IPv4 address. Whatever compares hosts of endpoints (the site a trusted key
 * vouches for) compares these, so that one host is one host everywhere.
 */
export function normalHost(url: URL): string {
  let host = url.hostname;
  if (host.length > 1 && host.endsWith('.') && !host.startsWith('[')) host = host.slice(0, -1);
  const mapped = IPV4_MAPPED.exec(host);
  if (!mapped) return host;
  const [high, low] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** The normal form of a parsed URL (see the module comment). */
export function normalizeParsedUrl(url: URL): string {
  const host = normalHost(url);
  const port = url.port ? `:${url.port}` : '';
  const path = normalizePercentEncoding(url.pathname).replace(/\/{2,}/g, '/').replace(/\/$/, '');
  const query = url.search.length > 1 ? normalizePercentEncoding(url.search) : '';
  return `${url.protocol}//${host}${port}${path}${query}`;
}

/**
 * Parses an endpoint URL and normalises it. Refuses what must never identify an entry: control
 * characters (checked on the raw text, before WHATWG parsing drops them), a string that is not an
 * absolute URL, and credentials (`user:pass@`). The scheme is the caller's rule.
 */
export function parseEndpointUrl(raw: string): ParsedEndpointUrl {
  const at = controlCharacterAt(raw);
  if (at >= 0) return { ok: false, problem: { kind: 'control', at, codePoint: raw.codePointAt(at)! } };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, problem: { kind: 'unparseable' } };
  }
  if (url.username !== '' || url.password !== '') return { ok: false, problem: { kind: 'credentials' } };
  return { ok: true, url, normalized: normalizeParsedUrl(url) };
}

/**
 * `host:port`, the gRPC address form ("grpc.example.com:443", "10.1.2.3:443", "[2001:db8::1]:50051"),
 * a name's trailing dot allowed ("grpc.example.com.:443", the same host, as in an https URL).
 */
const GRPC_ADDRESS = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.?):(\d{1,5})$/;
/** gRPC's DNS target, `dns:[//dns-server]/host:port` (gRPC naming): the same address, resolved by DNS. */
const GRPC_DNS_TARGET = /^dns:(?:\/\/[^/\s]*)?\/(?!\/)/;

/**
 * The `https://host:port` URL of a gRPC address, as gRPC clients dial it and the README and
 * PUBLIC_GRPC_URL take it: `host:port` (a name or an IPv4 address), `[ipv6]:port`, or the DNS
 * target `dns:///host:port`; undefined for anything else. A gRPC address has no scheme of its
 * own: WHATWG parsing reads "grpc.acme.org:443" as the scheme "grpc.acme.org:" and refuses
 * "10.1.2.3:443" and "[2001:db8::1]:50051", so whatever reads an interface's URL as a URL (its
 * warnings, its normal form) reads this one.
 */
export function grpcAddressUrl(raw: string): URL | undefined {
  const address = grpcAddressOf(raw);
  if (address === undefined) return undefined;
  try {
    return new URL(`https://${address}`);
  } catch {
    return undefined; // a port past 65535, an IPv6 address that is none
  }
}

/** The `host:port` a gRPC address is written as (without its `dns:///`), or undefined when it has not that shape. */
function grpcAddressOf(raw: string): string | undefined {
  const address = raw.replace(GRPC_DNS_TARGET, '');
  return GRPC_ADDRESS.test(address) ? address : undefined;
}

/** A custom binding is named by a URI (A2A §5.8). */
export const isUriBinding = (binding: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(binding);

/**
 * The rule for an endpoint of the given binding ("JSONRPC", "GRPC", "HTTP+JSON", a URI, or
 * "MCP"): http or https; for a gRPC interface also a gRPC address (`grpcAddressUrl`: the
 * `host:port` the A2A specification shows for gRPC, "grpc.example.com:443", "10.1.2.3:443",
 * `[ipv6]:port` or `dns:///host:port`, normalised as `https://host:port`); for a custom
 * (URI-named) binding also ws or wss, as in the specification's custom-binding example.
 */
export function parseEndpoint(raw: string, binding: string): ParsedEndpointUrl {
  const parsed = parseEndpointUrl(raw);
  // "grpc.example.com:443" parses as scheme "grpc.example.com:" with path "443", "dns:///h:443"
  // as scheme "dns:"; "10.1.2.3:443" not at all. (Control characters and credentials are told first.)
  if (binding === 'GRPC' && (parsed.ok || parsed.problem.kind === 'unparseable') && grpcAddressOf(raw) !== undefined) {
    const url = grpcAddressUrl(raw);
    return url ? { ok: true, url, normalized: normalizeParsedUrl(url) } : { ok: false, problem: { kind: 'unparseable' } };
  }
  if (!parsed.ok) return parsed;
  const scheme = parsed.url.protocol;
  if (HTTP_SCHEMES.has(scheme) && parsed.url.hostname !== '') return parsed;
  if (WEBSOCKET_SCHEMES.has(scheme) && isUriBinding(binding)) return parsed;
  return { ok: false, problem: { kind: 'scheme', scheme: scheme.slice(0, -1) } };
}

/** The normal form of an endpoint, or undefined when it breaks the rules of `parseEndpoint`. */
export function normalizeEndpoint(raw: string, binding: string): string | undefined {
  const parsed = parseEndpoint(raw, binding);
  return parsed.ok ? parsed.normalized : undefined;
}

/**
 * An explicit port 80 or 443 after the host of a normal form (whose own scheme's default port is
 * already gone): `http://h:443/a2a` is the plain spelling of `https://h/a2a`, `https://h:80/a2a`
 * the secure one of `http://h/a2a`.
 */
const WEB_PORT = /^([a-z]+:\/\/(?:\[[^\]]*\]|[^/:?]*)):(?:80|443)(?=[/?]|$)/;

/**
 * The `http` spelling of a normal form (without tenant) on its own port: `https`, `ws` and `wss`
 * become `http`, and a port naming the other scheme's default (`http://h:443`, `https://h:80`) is
 * dropped. The secure and plain spellings of one endpoint are one claim (nobody may list the
 * plain-http spelling of someone else's endpoint), a WebSocket URL too (its handshake is an HTTP
 * request to that host, port and path), and so is a URL naming the other scheme's port (the
 * `host:443` of a gRPC address written as `http://`): otherwise it would point at another
 * principal's host, port and path under a key of its own.
 */
function httpSpelling(url: string): string {
  return url.replace(/^(?:https|wss?):/, 'http:').replace(WEB_PORT, '$1');
}

/**
 * The key a principal claims with a normalised URL: its `http` spelling (see httpSpelling)
 * without its query string. A query is no ownership boundary between principals: a server may
 * ignore it (or any parameter added to it, in any order), so `https://h/a2a?x=1` (or `?agent=a&x=1`)
 * would list the agent of whoever holds `https://h/a2a` (or `?agent=a`); agents of several
 * principals at one URL are told apart by A2A v1.0's `AgentInterface.tenant`, which the claim
 * keeps. The query still tells one principal's entries apart: identities keep it.
 * An endpoint key with a tenant (`withTenant`) gives the claim key of its URL with that tenant.
 */
export function claimKey(normalized: string): string {
  const { url, tenant } = splitTenant(normalized);
  // A normal form has a '?' only where its query starts: WHATWG encodes one in a path as %3F.
  const query = url.indexOf('?');
  return withTenant(httpSpelling(query < 0 ? url : url.slice(0, query)), tenant);
}

/**
 * The other normal forms of the same endpoint as `normalized` (those with its claim key): its
 * `http`/`https` (and `ws`/`wss`) spellings, on the default port or naming the other scheme's
 * (`http://h:443/a2a`). An entry stored under one of them is the same agent or server: an owner
 * moving it from http to https updates it instead of registering it twice. Of an endpoint key with
 * a tenant, the spellings with that tenant. Empty for what is no URL (a placeholder identity).
 */
export function otherSpellings(identity: string): string[] {
  // A placeholder kept as written ("https://{HOST}/a2a") identifies nothing but itself.
  const { url } = splitTenant(identity);
  const parsed = parseEndpointUrl(url);
  return parsed.ok && parsed.normalized === url ? otherSpellingsOfNormalForm(identity) : [];
}

/** The schemes of an endpoint's spellings, in the order they are listed. */
const SPELLING_SCHEMES = ['http', 'https', 'ws', 'wss'] as const;

/**
 * `otherSpellings` of an endpoint key known to be a normal form (with its tenant), such as one
 * made from a checked endpoint: a registration has parsed its URL already, so it is not parsed again.
 */
export function otherSpellingsOfNormalForm(identity: string): string[] {
  const { url: normalized, tenant } = splitTenant(identity);
  const m = /^http:\/\/(\[[^\]]*\]|[^/:?]*)(:\d+)?(.*)$/.exec(httpSpelling(normalized));
  if (!m) return [];
  const [, host, port, rest] = m;
  // Each has the claim key by construction (its scheme is one httpSpelling maps to http, and a
  // port it adds is the other scheme's web port, before the normal form's path, query or end), so
  // none is keyed again: every registration looks these up, and eight claimKey calls cost more
  // than the rest of this function. Built in one loop: the chain of map, flatMap and filter
  // it replaces made as many arrays as spellings.
  const spellings: string[] = [];
  const add = (spelling: string) => {
    if (spelling !== normalized) spellings.push(withTenant(spelling, tenant));
  };
  for (const scheme of SPELLING_SCHEMES) {
    if (port) add(`${scheme}://${host}${port}${rest}`);
    else {
      add(`${scheme}://${host}${rest}`);
      add(`${scheme}://${host}:${scheme === 'http' || scheme === 'ws' ? 443 : 80}${rest}`);
    }
  }
  return spellings;
}

/** What identifies an entry by its endpoints: its primary endpoint's key and every endpoint it claims. */
export interface EndpointIdentity {
  /** The endpoint key of the first endpoint (undefined when it is no URL, e.g. a placeholder). */
  primary: string | undefined;
  /** Claim keys of every endpoint that is a URL, without duplicates, sorted. */
  claims: string[];
}

/** The identity of an entry from its endpoints, in order (interfaces, or the MCP server URL). */
export function endpointIdentity(endpoints: readonly { url: string; protocolBinding: string; tenant?: unknown }[]): EndpointIdentity {
  const claims = new Set<string>();
  let primary: string | undefined;
  endpoints.forEach((e, i) => {
    const normalized = normalizeEndpoint(e.url, e.protocolBinding);
    const key = normalized === undefined ? undefined : withTenant(normalized, typeof e.tenant === 'string' ? e.tenant : undefined);
    if (i === 0) primary = key;
    if (key !== undefined) claims.add(claimKey(key));
  });
  return { primary, claims: [...claims].sort() };
}

/**
 * A2A v1.0 `AgentInterface.tenant` ("Tenant ID to be used in the request when calling the
 * agent"): one multi-tenant host serves different agents at one URL, told apart by the tenant its
 * requests carry. So an endpoint is its URL and its tenant: its key (an identity, a claim) is the
 * URL's normal form or claim key, followed for a tenant by `#tenant=` and the tenant
 * percent-encoded. A normal form never has a fragment, so nothing else reads as a tenant; an
 * endpoint without a tenant (every v0.3 interface, every MCP server) keeps the key it had. Tenant
 * ids are opaque: compared exactly, as the agent receives them.
 */
const TENANT_MARK = '#tenant=';

/** The key of the endpoint at `key` (a normal form or claim key) under `tenant`; none or "" is no tenant. */
export function withTenant(key: string, tenant: string | undefined): string {
  return tenant ? `${key}${TENANT_MARK}${encodeURIComponent(tenant)}` : key;
}

/** An endpoint key's URL part and tenant (see `withTenant`). */
export function splitTenant(key: string): { url: string; tenant: string | undefined } {
  const at = key.lastIndexOf(TENANT_MARK);
  if (at < 0) return { url: key, tenant: undefined };
  try {
    return { url: key.slice(0, at), tenant: decodeURIComponent(key.slice(at + TENANT_MARK.length)) };
  } catch {
    // Not one withTenant wrote (a placeholder kept as written): no tenant.
    return { url: key, tenant: undefined };
  }
}

/**
 * The claims that hold `key` too: for a claim key with a tenant, its URL without the tenant (none
 * for a key without one). Whoever holds a URL holds it under every tenant against other
 * principals: an agent that is not multi-tenant ignores the tenant of a request, so another
 * principal listing `https://h/a2a` under tenant `x` would list the holder's agent. A tenant still
 * tells agents apart for whoever claims first (one multi-tenant host, one agent per tenant, of
 * several principals), and the URL itself may be claimed after such claims of others: those stay
 * their holders' (the stores check covering claims only for a key the claimant does not hold yet),
 * new ones under it are its holder's alone. Refusing the URL instead would let anyone who listed
 * one tenant of it first keep its owner out. (A query string needs no covering claim: claim keys
 * have none, see claimKey.)
 */
export function coveringClaims(key: string): string[] {
  const { url, tenant } = splitTenant(key);
  return tenant === undefined ? [] : [url];
}

/** The claims that must not be another principal's for `keys` to be claimed: each, and those covering it. */
export function claimsToCheck(keys: readonly string[]): string[] {
  return keys.flatMap((key) => [key, ...coveringClaims(key)]);
}

/** An endpoint as people read it in a message: its URL, and its tenant when it has one. */
export function shownEndpoint(url: string, tenant: string | undefined): string {
  return tenant ? `${url} (tenant ${JSON.stringify(tenant)})` : url;
}

/** An endpoint key (an identity or claim) as people read it in a message. */
export function shownEndpointKey(key: string): string {
  const { url, tenant } = splitTenant(key);
  return shownEndpoint(url, tenant);
}
