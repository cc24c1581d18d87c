/**
 * URL checks that produce warnings: a registry full of `{BASE_URL}` and `localhost` endpoints is
 * useless for discovery, but such cards are still schema-valid (the A2A schemas type URLs as
 * plain strings), so they are registered with a warning that says what to replace.
 */
import type { Finding } from '../contract/types.js';
import { grpcAddressUrl } from '../lib/endpoint-url.js';
import { isObject, pointer, quote, type JsonObject } from '../lib/json.js';
import { withoutPassword } from '../lib/url-password.js';
import { clipped } from '../lib/clipped.js';

export type UrlIssue = 'placeholder' | 'loopback' | 'insecure' | 'invalid' | 'unsafe' | 'credentials';

/**
 * Schemes that are no link to a page: a client, catalog or web page that follows one runs script
 * (javascript:, vbscript:), reads the local machine (file:) or shows inline content (data:). A
 * documentationUrl, iconUrl or provider url of `javascript:alert(1)` passed without a word.
 */
const UNSAFE_SCHEMES: ReadonlySet<string> = new Set(['javascript:', 'vbscript:', 'data:', 'file:']);

/**
 * Template markers and fill-me-in words seen in real cards: {BASE_URL}, ${HOST}, <your-host>,
 * YOUR-DOMAIN, your_server, changeme, xxx. Braces and angle brackets never appear unencoded in
 * a real URL. Cheap substring tests guard the regular expressions: this runs on every URL of
 * every valid document.
 */
function looksLikePlaceholder(raw: string): boolean {
  if (/[{}<>]/.test(raw)) return true;
  if (raw.includes('YOUR') || raw.includes('_HERE')) {
    if (/\bYOUR[A-Z_-]*\b|[A-Z]+_HERE\b/.test(raw)) return true;
  }
  const lower = raw.toLowerCase();
  if (lower.includes('your') && /\byour[-_]|\byour(domain|host|server|agent|app|company|org|site|url|endpoint|api|service)s?\b/.test(lower)) return true;
  if (lower.includes('placeholder')) return true;
  if (lower.includes('change') && /\bchange[-_]?me\b/.test(lower)) return true;
  return lower.includes('xxx') && /\bx{3,}\b/.test(lower);
}

/** Reserved documentation / testing names (RFC 2606, RFC 6761): they never reach a real agent. */
function isReservedExampleHost(host: string): boolean {
  return (
    /(^|\.)example\.(com|org|net)$/.test(host) ||
    /\.(example|invalid|test)$/.test(host) ||
    host === 'example' ||
    host === 'invalid' ||
    host === 'test'
  );
}

function isLoopbackHost(host: string): boolean {
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127(\.\d{1,3}){3}$/.test(host) ||
    host === '0.0.0.0' ||
    host === '[::1]' ||
    host === '[::]' ||
    host === 'host.docker.internal'
  );
}

/** The most important problem of one URL, or undefined when it looks like a real endpoint. */
export function classifyUrl(raw: string, warnInsecureHttp: boolean): UrlIssue | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return looksLikePlaceholder(raw) ? 'placeholder' : 'invalid';
  }
  // The scheme first: "data:text/html,<script>…</script>" or "javascript:…//{x}" runs script
  // whatever else it holds, and was called a placeholder for its brackets, which reads as harmless.
  if (UNSAFE_SCHEMES.has(url.protocol)) return 'unsafe';
  // A user name or password publishes a secret, or disguises the host: "https://trusted.com@evil.net"
  // reads as trusted.com and leads to evil.net (an endpoint URL with one is refused, ./endpoint-urls.ts).
  if (url.username !== '' || url.password !== '') return 'credentials';
  if (looksLikePlaceholder(raw)) return 'placeholder';
  const host = url.hostname.toLowerCase();
  if (url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'ws:' || url.protocol === 'wss:') {
    if (host === '') return 'invalid';
    if (isReservedExampleHost(host)) return 'placeholder';
    if (isLoopbackHost(host)) return 'loopback';
    if (warnInsecureHttp && (url.protocol === 'http:' || url.protocol === 'ws:')) return 'insecure';
  }
  return undefined;
}

/**
 * classifyUrl for the URL of a gRPC interface: a gRPC address (`host:port`, `[ipv6]:port`,
 * `dns:///host:port`) is judged as the https URL it dials. Read as a URL, "10.1.2.3:443" was
 * "not an absolute URL" and "localhost:50051" a URL of the scheme "localhost:", so not loopback.
 * A bare address says nothing of TLS: no insecure-url.
 */
export function classifyGrpcUrl(raw: string, warnInsecureHttp: boolean): UrlIssue | undefined {
  const address = grpcAddressUrl(raw);
  return address ? classifyUrl(address.href, false) : classifyUrl(raw, warnInsecureHttp);
}

/**
 * Whether the `url` member of `node` is a gRPC interface's: a v1.0 interface whose
 * protocolBinding, a v0.3 additional interface whose transport, a v0.3 card whose
 * preferredTransport is GRPC (as endpoint-urls.ts reads their bindings).
 */
const urlIsGrpcAddress = (node: JsonObject): boolean => node.protocolBinding === 'GRPC' || node.transport === 'GRPC' || node.preferredTransport === 'GRPC';

export function urlFinding(path: string, raw: string, issue: UrlIssue): Finding {
  switch (issue) {
    case 'placeholder':
      return {
        path,
        rule: 'placeholder-url',
        message: `${quote(raw)} looks like a placeholder, not a reachable URL`,
        hint: 'Replace it with the public URL of the deployed service before publishing the document.',
      };
    case 'loopback':
      return {
        path,
        rule: 'loopback-url',
        message: `${quote(raw)} points at the local machine, so no other agent can reach it`,
        hint: 'Use the public https URL the service is deployed at.',
      };
    case 'insecure':
      return {
        path,
        rule: 'insecure-url',
        message: `${quote(raw)} uses plain http`,
        hint: 'Serve the endpoint over https; A2A requires TLS in production.',
      };
    case 'unsafe':
      return {
        path,
        rule: 'unsafe-url',
        message: `${quote(clipped(raw, 60))} is a ${new URL(raw).protocol} URL: a client or page that follows it runs script, reads local files or shows inline content, and reaches no page`,
        hint: 'Use the https URL of the page or image it stands for.',
      };
    case 'credentials': {
      const host = new URL(raw).host;
      return {
        path,
        rule: 'credentials-url',
        message: `${quote(withoutPassword(raw) ?? 'the URL')} has a user name or password before its host: a link to it leads to ${quote(host)}, whatever the text before the "@" suggests, and publishes what is in it`,
        hint: `Remove the part before the "@" (use "https://${host}/…"): the URL is shown to everyone, and the web page shows it as text, not as a link.`,
      };
    }
    case 'invalid':
      return {
        path,
        rule: 'invalid-url',
        message: `${quote(raw)} is not an absolute URL`,
        hint: 'Use an absolute URL such as "https://agent.example.org/a2a".',
      };
  }
}

const URL_KEY = /^(url|.*Url)$/;
const MAX_URL_WALK_DEPTH = 16;

/**
 * Warnings for every string under a key named `url` or `…Url` (documentationUrl, iconUrl,
 * tokenUrl, openIdConnectUrl…), wherever it sits in the document. `skipKeys` leaves out
 * free-form subtrees (skill examples, extension params). This runs on every valid document,
 * so the path is kept as a token stack and only turned into a pointer for a finding.
 */
export function urlWarnings(doc: unknown, basePath: string, warnInsecureHttp: boolean, skipKeys: ReadonlySet<string>): Finding[] {
  const out: Finding[] = [];
  const tokens: Array<string | number> = [];
  const walk = (node: unknown, depth: number): void => {
    if (depth > MAX_URL_WALK_DEPTH) return;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item !== 'object' || item === null) continue;
        tokens.push(i);
        walk(item, depth + 1);
        tokens.pop();
      }
      return;
    }
    if (!isObject(node)) return;
    for (const key in node) {
      if (!Object.prototype.hasOwnProperty.call(node, key) || skipKeys.has(key)) continue;
      const value = node[key];
      if (typeof value === 'string') {
        if (!URL_KEY.test(key)) continue;
        const issue = key === 'url' && urlIsGrpcAddress(node) ? classifyGrpcUrl(value, warnInsecureHttp) : classifyUrl(value, warnInsecureHttp);
        if (issue) out.push(urlFinding(pointer(basePath, ...tokens, key), value, issue));
      } else if (typeof value === 'object' && value !== null) {
        tokens.push(key);
        walk(value, depth + 1);
        tokens.pop();
      }
    }
  };
  walk(doc, 0);
  return out;
}
