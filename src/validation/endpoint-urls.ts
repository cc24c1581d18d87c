/**
 * The URLs that identify an entry — every interface URL of an agent card, an MCP server's URL —
 * and the rules they must meet, as errors with a JSON path and a hint:
 * - no control characters (WHATWG parsing would silently drop some of them, so that
 *   "https://alice.exa\nmple.com" would be read as another host than it shows);
 * - an absolute URL, and no template left unfilled ("{BASE_URL}/a2a", "https://<host>/a2a",
 *   "YOUR_AGENT_URL"): an entry is found and called by its URLs, and a sample's template would
 *   be the same identity for every agent made from that sample (the first to register it would
 *   own it). Braces and angle brackets never appear unencoded in a real URL (RFC 3986), so they
 *   are refused wherever they are; fill-me-in words are refused where the string is no URL at
 *   all. A URL that is one but points nowhere useful (a loopback or RFC 2606 example host, a
 *   host named "your-domain") stays a warning (./urls.ts): local and documentation setups use
 *   them, and the words are a guess;
 * - no credentials (`user:pass@`): they would be published to everyone, and they make one
 *   endpoint look like many;
 * - no host label written in Unicode that mixes look-alike scripts ("аlice.example.com" with a
 *   Cyrillic "а"): it would pose as another principal's host to everyone reading it; nor one
 *   whose every letter that is not ASCII looks like an ASCII one ("раураl.com", all Cyrillic,
 *   reads as "paypal.com"), by Unicode's confusables (UTS #39, through `unhomoglyph`);
 * - the scheme (lib/endpoint-url.ts `parseEndpoint`): http or https; a gRPC interface may also
 *   be a gRPC address (`host:port`, `[ipv6]:port`, `dns:///host:port`), a custom binding's
 *   interface ws/wss. Everything else (javascript:,
 *   file:, data:, ftp:, …) is refused.
 *
 * Each accepted URL has a normal form (lib/endpoint-url.ts), which is what storage compares.
 */
import { createRequire } from 'node:module';
import { domainToASCII, domainToUnicode } from 'node:url';
import type { Finding } from '../contract/types.js';
import { isUriBinding, parseEndpoint } from '../lib/endpoint-url.js';
import { isObject, pointer, quote, type JsonObject } from '../lib/json.js';
import { percentDecodedOrUndefined } from '../lib/percent-decoding.js';
import { withoutPassword } from '../lib/url-password.js';
import type { Generation, Verdict } from './types.js';
import { classifyUrl } from './urls.js';

/** One endpoint URL of a document, where it sits and which binding it speaks. */
export interface EndpointUrl {
  /** JSON Pointer of the URL inside the stored document. */
  path: string;
  url: string;
  /** The protocol binding ("JSONRPC", "GRPC", "HTTP+JSON", a URI) or "MCP". */
  binding: string;
  /** The tenant requests to it carry (a v1.0 interface's `tenant`): part of what the endpoint is (lib/endpoint-url.ts withTenant). */
  tenant?: string;
}

export type EndpointCheck = { ok: true; normalized: string } | { ok: false; finding: Finding };

/** The endpoint URLs of a card of the given generation (strings only; the schema reports the rest). */
export function cardEndpointUrls(card: JsonObject, generation: Generation): EndpointUrl[] {
  const out: EndpointUrl[] = [];
  if (generation === '1.0') {
    const list = Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : [];
    list.forEach((i, n) => {
      if (!isObject(i) || typeof i.url !== 'string') return;
      const endpoint: EndpointUrl = { path: pointer('/supportedInterfaces', n, 'url'), url: i.url, binding: typeof i.protocolBinding === 'string' ? i.protocolBinding : '' };
      if (typeof i.tenant === 'string' && i.tenant !== '') endpoint.tenant = i.tenant;
      out.push(endpoint);
    });
    return out;
  }
  if (typeof card.url === 'string') out.push({ path: '/url', url: card.url, binding: typeof card.preferredTransport === 'string' ? card.preferredTransport : 'JSONRPC' });
  const extra = Array.isArray(card.additionalInterfaces) ? card.additionalInterfaces : [];
  extra.forEach((i, n) => {
    if (isObject(i) && typeof i.url === 'string') out.push({ path: pointer('/additionalInterfaces', n, 'url'), url: i.url, binding: typeof i.transport === 'string' ? i.transport : '' });
  });
  return out;
}

/** The server URL of an MCP registration, when it is a string. */
export function mcpEndpointUrls(server: unknown): EndpointUrl[] {
  return isObject(server) && typeof server.url === 'string' ? [{ path: '/mcpServer/url', url: server.url, binding: 'MCP' }] : [];
}

function schemeHint(raw: string, binding: string): string {
  if (/^[A-Za-z0-9.-]+:\d+(\/|$)/.test(raw)) return `Write it with its scheme: "https://${raw}".`;
  if (binding === 'MCP') return 'Give the http(s) URL of the MCP endpoint, e.g. "https://mcp.example.org/mcp".';
  if (binding === 'GRPC') return 'A gRPC interface is an https URL ("https://grpc.example.org/a2a") or a gRPC address: host:port ("grpc.example.org:443", "10.1.2.3:443"), [ipv6]:port or dns:///host:port.';
  return 'Give the http(s) URL clients send A2A requests to, e.g. "https://agent.example.org/a2a".';
}

/** A template marker ("{BASE_URL}", "${HOST}", "{{url}}", "<your-host>"), or the first brace or angle bracket. */
const TEMPLATE_MARKER = /\$?\{\{?[^{}<>]*\}?\}|<[^<>{}]*>|[{}<>]/;

/** How to fix a placeholder left in an endpoint URL. */
function placeholderHint(binding: string, placeholder: string): string {
  const example = binding === 'MCP' ? '"https://mcp.example.org/mcp"' : '"https://agent.example.org/a2a"';
  const what = binding === 'MCP' ? 'the MCP server' : 'the agent';
  return `Replace ${placeholder} with the public address clients reach ${what} at (e.g. ${example}) before registering: an entry is found and called by its URL, and an unfilled template would be the same for every ${binding === 'MCP' ? 'server' : 'agent'} made from one sample.`;
}

/**
 * Scripts whose letters pass for one another ("а" Cyrillic, "a" Latin; "ο" Greek, "o" Latin): a
 * host label mixing two of them reads as another name than it is, as browsers know (they show
 * such a name in its ASCII xn-- form). Scripts that are written together (Latin with Han, kana or
 * Hangul) are not among them.
 */
const LOOKALIKE_SCRIPTS: readonly [string, RegExp][] = [
  ['Latin', /\p{Script=Latin}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
  ['Greek', /\p{Script=Greek}/u],
  ['Armenian', /\p{Script=Armenian}/u],
  ['Cherokee', /\p{Script=Cherokee}/u],
];

/**
 * Whether a URL's host may be written in Unicode: the text has a character past ASCII, or its
 * authority a percent escape, which URL parsing decodes as UTF-8 before IDNA
 * ("https://%D0%B0lice.example.com" is the host "аlice.example.com", Cyrillic "а"): so written,
 * a host that mixes look-alike scripts passed unchecked, and a page or client that decodes
 * escapes to show a URL shows the look-alike.
 */
function writtenInUnicode(raw: string): boolean {
  return /[^\u0000-\u007f]/.test(raw) || /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*%/.test(raw);
}

/** The first label of a host (in Unicode) that mixes look-alike scripts, with them. */
function mixedScriptLabel(host: string): { label: string; scripts: string[] } | undefined {
  for (const label of host.split('.')) {
    const scripts = LOOKALIKE_SCRIPTS.filter(([, letters]) => letters.test(label)).map(([name]) => name);
    if (scripts.length > 1) return { label, scripts };
  }
  return undefined;
}

/**
 * The ASCII character `c` looks like, or `c` (Unicode's confusables, UTS #39: `unhomoglyph`).
 * Loaded on the first host written in Unicode: most registries never see one, and building its
 * table of 6,000 characters costs tens of milliseconds at start-up.
 */
let lookalikeOf: ((c: string) => string) | undefined;

/** The ASCII name `host` (in Unicode) passes for when each of its letters that is not ASCII looks like an ASCII one, or undefined. */
function asciiLookalike(host: string): string | undefined {
  if (!/[^\u0000-\u007f]/.test(host)) return undefined;
  lookalikeOf ??= createRequire(import.meta.url)('unhomoglyph') as (c: string) => string;
  // Character by character: the ASCII letters stay as written ("rn" is not read as "m").
  const read = host.replace(/[^\u0000-\u007f]/gu, lookalikeOf);
  return /^[\u0000-\u007f]*$/.test(read) ? read.toLowerCase() : undefined;
}

/** `text` with its percent escapes decoded as UTF-8, or as written when they are not UTF-8. */
function percentDecoded(text: string): string {
  if (!text.includes('%')) return text;
  return percentDecodedOrUndefined(text) ?? text;
}

/** A gRPC address (`host:port`, `dns:///host:port`) whose host name has a character past ASCII. */
const UNICODE_GRPC_ADDRESS = /^(dns:(?:\/\/[^/\s]*)?\/)?([^\s/:[\]@]*[^\u0000-\u007f][^\s/:[\]@]*):(\d{1,5})$/;

/** Checks one endpoint URL; on success returns its normal form. */
export function checkEndpointUrl(e: EndpointUrl): EndpointCheck {
  const parsed = parseEndpoint(e.url, e.binding);
  const fail = (rule: string, message: string, hint: string): EndpointCheck => ({ ok: false, finding: { path: e.path, rule, message, hint } });
  // A URL that reads as one but breaks a rule (control characters, credentials, a scheme such as
  // data:, whose text may hold angle brackets) is told that first.
  const marker = parsed.ok || parsed.problem.kind === 'unparseable' ? TEMPLATE_MARKER.exec(e.url)?.[0] : undefined;
  if (marker !== undefined) {
    return fail('url-placeholder', `${quote(e.url)} is a template, not a URL: ${quote(marker)} was never filled in`, placeholderHint(e.binding, quote(marker)));
  }
  // A host written in Unicode that reads as another name: mixed look-alike scripts in a label,
  // or every letter past ASCII like an ASCII one. `asciiHost` is its real (xn--) name, `asciiForm`
  // the URL or gRPC address written with it, as `how` (browsers, DNS) shows it.
  const lookalikeHost = (unicodeHost: string, asciiHost: string, asciiForm: string, how: string): EndpointCheck | undefined => {
    const mixed = mixedScriptLabel(unicodeHost);
    const lookalike = mixed === undefined ? asciiLookalike(unicodeHost) : undefined;
    if (mixed === undefined && lookalike === undefined) return undefined;
    const asAscii = `if this really is the host's name, write it in its ASCII form, as ${how} shows it: ${quote(asciiForm)}.`;
    if (mixed === undefined) {
      return fail(
        'url-lookalike-host',
        `the host of ${quote(e.url)} is written in letters that look like the ASCII name ${quote(lookalike)}, so it reads as that name but is another (${asciiHost})`,
        `Write the host's real name; ${asAscii}`,
      );
    }
    return fail(
      'url-mixed-script',
      `the host of ${quote(e.url)} mixes ${mixed.scripts.join(' and ')} letters in ${quote(mixed.label)}, so it reads as another name than it is (${asciiHost})`,
      `Correct the look-alike letters; ${asAscii}`,
    );
  };
  if (parsed.ok) {
    // Only what is written in Unicode: a host written in its xn-- form shows what it is.
    const ascii = `${parsed.url.protocol}//${parsed.url.host}${parsed.url.pathname === '/' ? '' : parsed.url.pathname}${parsed.url.search}`;
    const found = writtenInUnicode(e.url) ? lookalikeHost(domainToUnicode(parsed.url.hostname), parsed.url.hostname, ascii, 'browsers') : undefined;
    return found ?? { ok: true, normalized: parsed.normalized };
  }
  const what = e.binding === 'MCP' ? 'the MCP server URL' : 'the interface URL';
  const problem = parsed.problem;
  // A gRPC address whose host is written in Unicode ("bücher.example:443") was told it "is not
  // an absolute URL", with a hint to write host:port, which it is. gRPC clients resolve the name
  // as written, and DNS names are ASCII: its ASCII (IDNA) form is the address to give.
  // gRPC reads its target as a URI, whose percent escapes it decodes ("dns:///%D0%B0lice.example.com:443"
  // is the host "аlice.example.com", Cyrillic "а"): that was refused as "the scheme dns".
  const unicodeAddress = e.binding === 'GRPC' && problem.kind !== 'control' && problem.kind !== 'credentials' ? UNICODE_GRPC_ADDRESS.exec(percentDecoded(e.url)) : null;
  const asciiHost = unicodeAddress ? domainToASCII(unicodeAddress[2]!) : '';
  if (unicodeAddress && asciiHost && Number(unicodeAddress[3]) <= 65535) {
    const ascii = `${unicodeAddress[1] ?? ''}${asciiHost}:${unicodeAddress[3]}`;
    // A look-alike is told as one, as the same host in an https URL is, not how to spell it in ASCII.
    const lookalike = lookalikeHost(domainToUnicode(asciiHost), asciiHost, ascii, 'DNS');
    if (lookalike) return lookalike;
    return fail(
      'invalid-url',
      `${quote(e.url)} is a gRPC address whose host is written in Unicode, which gRPC clients look up as written, and DNS names are ASCII`,
      `Write the host in its ASCII form, as DNS has it: ${quote(ascii)}.`,
    );
  }
  switch (problem.kind) {
    case 'control': {
      const cp = `U+${problem.codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
      return fail('url-control-character', `${quote(e.url)} contains the control character ${cp} at position ${problem.at}`, `Remove it: ${what} must be plain text, without tabs, line breaks or other control characters.`);
    }
    case 'credentials': {
      const how = e.binding === 'MCP' ? '' : '; declare how clients authenticate in "securitySchemes"';
      // The message is stored and shown to whoever reads the finding: the password is masked.
      return fail('url-credentials', `${quote(withoutPassword(e.url) ?? 'the URL')} contains a user name or password`, `Remove the credentials from the URL (they would be published to everyone)${how}.`);
    }
    case 'unparseable':
      if (classifyUrl(e.url, false) === 'placeholder') return fail('url-placeholder', `${quote(e.url)} is a placeholder, not a URL`, placeholderHint(e.binding, 'it'));
      return fail('invalid-url', `${quote(e.url)} is not an absolute URL`, schemeHint(e.url, e.binding));
    case 'scheme': {
      const allowed = isUriBinding(e.binding) ? 'http, https, ws or wss' : e.binding === 'GRPC' ? 'http or https (or be a gRPC address: host:port, [ipv6]:port or dns:///host:port)' : 'http or https';
      return fail('url-scheme', `${quote(e.url)} uses the scheme "${problem.scheme}"; ${what} must use ${allowed}`, schemeHint(e.url, e.binding));
    }
  }
}

/** An endpoint URL of a document that passed its checks, with its normal form. */
export interface CheckedEndpoint extends EndpointUrl {
  normalized: string;
}

/** Every endpoint URL checked once: the errors of those that break a rule (in document order), and the others. */
export function checkEndpointUrls(endpoints: readonly EndpointUrl[]): { errors: Finding[]; checked: CheckedEndpoint[] } {
  const errors: Finding[] = [];
  const checked: CheckedEndpoint[] = [];
  for (const e of endpoints) {
    const check = checkEndpointUrl(e);
    if (check.ok === false) errors.push(check.finding);
    else checked.push({ ...e, normalized: check.normalized });
  }
  return { errors, checked };
}

/**
 * The endpoints of each accepted document, as its validation checked them, so that a
 * registration's claims (registry/endpoint-claims.ts) are read from them instead of parsing and
 * checking every URL again. Beside the verdict, not in it: verdicts are shown as they are (the
 * CLI's validate --json), and a verdict is dropped with its registration.
 */
const checkedEndpointsOf = new WeakMap<Verdict, readonly CheckedEndpoint[]>();

/** Records the endpoints of an accepted verdict (all of its endpoint URLs, each checked). */
export function withCheckedEndpoints(verdict: Verdict, checked: readonly CheckedEndpoint[]): Verdict {
  checkedEndpointsOf.set(verdict, checked);
  return verdict;
}

/** The endpoints validation checked for `verdict`, when it recorded them. */
export function checkedEndpoints(verdict: Verdict): readonly CheckedEndpoint[] | undefined {
  return checkedEndpointsOf.get(verdict);
}
