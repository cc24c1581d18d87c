/**
 * The guarded implementation of `Fetcher` (see fetcher.ts for the rules it enforces).
 *
 * Built on undici: each hop (the first URL and every redirect) resolves and checks the host,
 * then sends through an undici Agent whose connector `lookup` answers only with the addresses
 * that were checked (pinned-agents.ts) — so the socket goes to a checked address, never to a
 * second DNS answer, while TLS keeps the host name for SNI and certificate checks. Redirects are followed
 * here (undici's own redirect handling would skip our checks). One deadline (an AbortSignal)
 * covers resolution, connection, redirects, headers and body, not the registry's own loading of
 * undici on a process's first request (Deadline.outside); the body is read through a counter
 * that cuts it off at the cap.
 */
import type { Response as UndiciResponse } from 'undici';
import { AllowList, describeAddress, type AddressRule, parseAddress, restrictedRange, RULE_WORDING, normaliseHost } from './address-policy.js';
import { LookupLimiter, NETWORK_LOOKUP_SLOTS, serversResolver, systemLookupSlots, systemResolver, type Resolver } from './dns.js';
import { PinnedAgents, loadUndici, undiciLoaded, type CheckedAddress } from './pinned-agents.js';
import { ACCEPT_ENCODING, codingRefusal, REFUSED_CODING_HEADER, refusedCodingOf } from './content-codings.js';
import { otherThanUtf8 } from '../lib/charset.js';
import { contentCodings } from '../lib/content-codings.js';
import {
  FetchError,
  type CheckedUrl,
  type FetchFailureReason,
  type FetchFunction,
  type FetchOptions,
  type FetchPurpose,
  type Fetcher,
  type GetJsonOptions,
  type JsonDocument,
  type NotModified,
  type PostResult,
} from './fetcher.js';
import { clipped } from '../lib/clipped.js';
import { asksRetryAfter, retryAfterMs as retryAfterMsOf } from '../lib/retry-after.js';
import { DEFAULT_FETCH_TIMEOUT_MS } from './setting-defaults.js';
import { TIMEOUT_MESSAGE } from '../lib/clearable-timeout.js';

export type { Resolver } from './dns.js';

/** One finished request, for metrics. Called exactly once per getJson/postJson/check/fetch call. */
export interface FetchEvent {
  purpose: FetchPurpose;
  outcome: 'ok' | 'not-modified' | 'failed';
  reason?: FetchFailureReason;
  seconds: number;
}

/**
 * A host name refused for what it resolves to: the caller is told neither the rule nor the
 * address (FetchError `non-public`), the operator is, here (the registry logs it).
 */
export interface NameRefusal {
  purpose: FetchPurpose;
  url: string;
  host: string;
  address: string;
  rule: AddressRule;
}

export interface FetchObserver {
  fetched(event: FetchEvent): void;
  refusedName?(refusal: NameRefusal): void;
}

/** A service the operator configured by URL, for one purpose (REGISTRY_EMBEDDINGS_URL: `embeddings`). */
export interface OperatorEndpoint {
  purpose: FetchPurpose;
  url: string;
}

export interface GuardedFetcherOptions {
  /** Largest accepted answer body in bytes (the registry passes its document size limit). */
  maxBytes: number;
  /** Whole-request deadline in milliseconds (default 5000). */
  timeoutMs?: number;
  /** Operator exceptions to the address rules (REGISTRY_FETCH_ALLOW). */
  allow?: AllowList;
  /**
   * Services the operator named by URL: requests of that purpose to that URL's origin pass the
   * address rules (such a service is often on localhost or a private network). Nothing else
   * does: another purpose, another origin, or a redirect away from it is checked as usual.
   */
  operatorEndpoints?: readonly OperatorEndpoint[];
  /** Redirects followed per request (default 3). */
  maxRedirects?: number;
  userAgent?: string;
  /** Resolves host names (tests); default: `dnsServers` if given, else the system resolver. */
  resolve?: Resolver;
  /** DNS servers to ask instead of the system resolver (REGISTRY_DNS_SERVERS): IP addresses with optional ports. */
  dnsServers?: readonly string[];
  /** Lookups in flight at most (default: half of libuv's thread pool for the system resolver, 64 otherwise). */
  maxLookups?: number;
  observer?: FetchObserver;
  /** Certificate authorities to trust instead of Node's (tests; operators use NODE_EXTRA_CA_CERTS). */
  ca?: string | Buffer | (string | Buffer)[];
  /** How long the loading of the HTTP client may take, in ms (tests); default CLIENT_LOAD_LIMIT_MS. */
  clientLoadLimitMs?: number;
}

export const DEFAULT_MAX_REDIRECTS = 3;

/**
 * How long the registry's own loading of its HTTP client (undici, on a process's first request)
 * may take, outside the request's deadline: a second or two on a loaded machine; one that takes
 * this long is stuck (a damaged installation, a file system that does not answer). ready() has
 * it, and a request waits for the load through ready().
 */
const CLIENT_LOAD_LIMIT_MS = 30_000;

/**
 * ready()'s refusal of a load past that bound, told so by ready() and by the request that waited
 * for it; `still`: a later caller's, refused at once while that same load goes on.
 */
class ClientNotLoaded extends Error {
  constructor(limitMs: number, still = false) {
    super(
      still
        ? `the registry's HTTP client (undici) did not load within ${limitMs / 1000} s and is still loading: requests are not sent until it has loaded (or the registry is restarted); the registry's machine is overloaded, or its installation is damaged (install its dependencies again)`
        : `the registry's HTTP client (undici) did not load within ${limitMs / 1000} s; the registry's machine is overloaded, or its installation is damaged (install its dependencies again)`,
    );
  }
}

/**
 * The load of the HTTP client ready() last gave up on, while it goes on. A pending import is not
 * started again (loadUndici keeps it; the module loader would too): every later request waited
 * the whole bound on this same load, 30 s each (a webhook's event, a registration's MCP
 * fetchTools), and then failed as the first did. They fail at once instead, until it ends:
 * loaded, requests go on; failed, loadUndici starts another, which the next request waits for
 * again. Module-wide, as the load is.
 */
let abandonedLoad: Promise<unknown> | undefined;

/** What a load of the HTTP client that failed (not one past its bound) is told as. */
const clientLoadFailed = (said: string): string =>
  `the registry's HTTP client (undici) failed to load (${clipped(said, 300)}); the next request tries again, and if it keeps failing the registry's installation is damaged (install its dependencies again)`;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/**
 * The Fetch standard's "bad ports" (fetch.spec.whatwg.org/#port-blocking). undici refuses them
 * without connecting, but said only "bad port", reported as a connection failure: an agent on
 * port 6000 or 10080 was "unreachable", a webhook there was accepted and then failed every
 * delivery. Refused here, by policy, saying which port and what to do.
 */
const BLOCKED_PORTS = new Set([
  '1', '7', '9', '11', '13', '15', '17', '19', '20', '21', '22', '23', '25', '37', '42', '43', '53', '69', '77', '79',
  '87', '95', '101', '102', '103', '104', '109', '110', '111', '113', '115', '117', '119', '123', '135', '137',
  '139', '143', '161', '179', '389', '427', '465', '512', '513', '514', '515', '526', '530', '531', '532',
  '540', '548', '554', '556', '563', '587', '601', '636', '989', '990', '993', '995', '1719', '1720', '1723',
  '2049', '3659', '4045', '4190', '5060', '5061', '6000', '6566', '6665', '6666', '6667', '6668', '6669', '6679',
  '6697', '10080',
]);
/** How an address refusal is lifted: said by every one. */
const ALLOW_HINT = 'the registry fetches only public addresses unless REGISTRY_FETCH_ALLOW lists the host, the address or its range';
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);
/**
 * The only request headers carried on by a redirect that leaves the origin: how to answer (media
 * types, the protocol version asked for, validators), none of them a secret. The Fetch standard
 * drops Authorization there and leaves cookies to the credentials mode; every other header goes
 * on, and a 307/308 (method and body kept) carried an MCP session id (mcp-session-id: whoever
 * holds it speaks in that session), a registrant's API key header or a webhook's
 * X-A2A-Notification-Token to whatever origin a server named. Kept by name rather than dropped
 * by name: a caller's header of any name may be a secret.
 */
const CROSS_ORIGIN_HEADERS = new Set([
  'accept',
  'accept-encoding',
  'accept-language',
  'content-type',
  'content-language',
  'user-agent',
  'a2a-version',
  'mcp-protocol-version',
  'if-none-match',
  'if-modified-since',
]);

/**
 * One request's time budget: a timer we own (so a timeout is told apart from the caller's
 * abort), and the callers' signals followed only until the request ends — listeners on a
 * long-lived signal (one MCP exchange's) are removed, not left to pile up.
 */
class Deadline {
  private readonly controller = new AbortController();
  private handle: NodeJS.Timeout;
  /** When the timer fires (performance.now()): moved on by the time spent outside it. */
  private dueAt: number;
  private expired = false;
  /** Within outside(): the registry is loading what the request needs. */
  private loading = false;
  /** The request ended while the registry was loading what it needs (outside()): nothing was sent. */
  private endedLoading = false;
  private readonly followed: Array<{ signal: AbortSignal; listener: () => void }> = [];
  private readonly startedAt = performance.now();
  /** A caller's deadline (not this one's timer) ended the request: how it is told (callersDeadline). */
  private callerTimeout: { afterMs: number; said?: string } | undefined;
  /**
   * A caller's deadline had passed before the request began (an MCP SDK's notice that it gave up
   * on a request, sent as the exchange's deadline passed): nothing was looked up or sent, and a
   * failure saying the lookup took too long blamed the DNS resolver for it.
   */
  readonly passedBeforeStart: boolean = false;

  constructor(readonly ms: number, callers: readonly (AbortSignal | undefined)[] = []) {
    this.dueAt = performance.now() + ms;
    this.handle = setTimeout(() => this.expire(), ms);
    this.handle.unref();
    for (const signal of callers) {
      if (!signal) continue;
      if (signal.aborted) {
        this.callerAbort(signal);
        this.passedBeforeStart = this.expired;
        break;
      }
      const listener = (): void => this.callerAbort(signal);
      signal.addEventListener('abort', listener, { once: true });
      this.followed.push({ signal, listener });
    }
  }

  /**
   * A caller's signal that aborts because its own time ran out (AbortSignal.timeout: one whole
   * MCP exchange's deadline) is a timeout too, told with what the request was waiting for (a
   * DNS answer, the headers): not a cancellation.
   */
  private callerAbort(signal: AbortSignal): void {
    if (signal.reason instanceof DOMException && signal.reason.name === 'TimeoutError') {
      // Told as the caller's, not as this timer's ms: a search's 1.5 s for its query's embedding,
      // or an MCP exchange's whole deadline, was told "within 5000 ms (the registry's fetch timeout)".
      if (!this.controller.signal.aborted) {
        const said = signal.reason.message && signal.reason.message !== TIMEOUT_MESSAGE ? signal.reason.message : undefined;
        this.callerTimeout = { afterMs: Math.round(performance.now() - this.startedAt), said };
      }
      this.expire();
    } else this.controller.abort(new Error('cancelled by the caller'));
  }

  private expire(): void {
    if (this.controller.signal.aborted) return;
    this.expired = true;
    this.endedLoading = this.loading;
    this.controller.abort(new Error(`deadline of ${this.ms} ms passed`));
  }

  /**
   * Runs `load`, the registry's own loading of what the request needs (its HTTP client, on a
   * process's first request), outside the deadline: the timer stops before it begins (a module's
   * loading may block the thread in the call itself) and then goes on with what was left.
   * Counted in it, that loading (a second or two on a loaded machine) made a process's first
   * request fail as a timeout of a server that answered at once. The wait's bound is the load's
   * own (GuardedFetcher.ready), and a caller's abort still ends it.
   */
  async outside<T>(load: () => Promise<T>): Promise<T> {
    const { signal } = this.controller;
    if (signal.aborted) throw signal.reason;
    clearTimeout(this.handle);
    const left = this.dueAt - performance.now();
    this.loading = true;
    let listener = (): void => undefined;
    const ended = new Promise<never>((_, reject) => {
      listener = () => reject(signal.reason);
      signal.addEventListener('abort', listener, { once: true });
    });
    try {
      return await Promise.race([load(), ended]);
    } finally {
      signal.removeEventListener('abort', listener);
      this.loading = false;
      if (!signal.aborted) {
        this.dueAt = performance.now() + left;
        this.handle = setTimeout(() => this.expire(), Math.max(0, left));
        this.handle.unref();
      }
    }
  }

  /** The request ended while the registry was loading what it needs (outside()): nothing was sent. */
  get endedWhileLoading(): boolean {
    return this.endedLoading;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get timedOut(): boolean {
    return this.expired;
  }

  /**
   * When a caller's deadline ended the request (its signal aborted with a TimeoutError), how that
   * is told: "its caller's deadline passed after 1203 ms", with the signal's reason when the
   * caller gave one (not Node's "The operation was aborted due to timeout"). Undefined when this
   * request's own timer did.
   */
  get callersDeadline(): string | undefined {
    const ended = this.callerTimeout;
    if (!ended || !this.expired) return undefined;
    return `its caller's deadline passed after ${ended.afterMs} ms${ended.said ? ` (${ended.said})` : ''}`;
  }

  get callerAborted(): boolean {
    return this.controller.signal.aborted && !this.expired;
  }

  dispose(): void {
    clearTimeout(this.handle);
    for (const { signal, listener } of this.followed) signal.removeEventListener('abort', listener);
    this.followed.length = 0;
  }
}

interface Exchange {
  response: UndiciResponse;
  url: URL;
}

interface HopRequest {
  method: string;
  headers: Record<string, string>;
  body?: BodyInitLike;
}

type BodyInitLike = string | Uint8Array | ArrayBuffer | URLSearchParams | ReadableStream<Uint8Array> | Blob;

/**
 * A header's value as a message quotes it: the server chose it, up to the 16 KB of headers undici
 * takes, and a refusal (kept as an entry's health, logged) carries no more than its start.
 */
const quotedHeader = (value: string): string => clipped(value, 200);

export class GuardedFetcher implements Fetcher {
  private readonly allow: AllowList;
  /** Origins allowed per purpose (operatorEndpoints). */
  private readonly operatorOrigins = new Map<FetchPurpose, Set<string>>();
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly maxRedirects: number;
  private readonly userAgent: string;
  private readonly resolve: Resolver;
  private readonly lookups: LookupLimiter;
  /** REGISTRY_DNS_SERVERS: each query is cancelled at its request's deadline, so none is shared. */
  private readonly cancellableLookups: boolean;
  private readonly observer?: FetchObserver;
  private readonly agents: PinnedAgents;
  /** close() has begun: a fetch that fails from now on was cut by the registry's own shutdown. */
  private closing = false;
  private readonly clientLoadLimitMs: number;

  constructor(options: GuardedFetcherOptions) {
    this.allow = options.allow ?? AllowList.EMPTY;
    for (const { purpose, url } of options.operatorEndpoints ?? []) {
      const origins = this.operatorOrigins.get(purpose) ?? new Set<string>();
      origins.add(new URL(url).origin);
      this.operatorOrigins.set(purpose, origins);
    }
    this.timeoutMs = options.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
    this.maxBytes = options.maxBytes;
    this.maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
    this.userAgent = options.userAgent ?? 'a2a-agent-registry';
    const servers = options.dnsServers?.length ? options.dnsServers : undefined;
    this.resolve = options.resolve ?? (servers ? serversResolver(servers) : systemResolver);
    const system = !options.resolve && !servers;
    this.cancellableLookups = !options.resolve && servers !== undefined;
    this.lookups = new LookupLimiter(Math.max(1, options.maxLookups ?? (system ? systemLookupSlots() : NETWORK_LOOKUP_SLOTS)));
    this.observer = options.observer;
    this.agents = new PinnedAgents({ ca: options.ca });
    this.clientLoadLimitMs = options.clientLoadLimitMs ?? CLIENT_LOAD_LIMIT_MS;
  }

  /**
   * Loads the HTTP client (undici) the first request would load: see Fetcher.ready. Within
   * clientLoadLimitMs, for every caller alike (a request waits for the load through this): a load
   * that never ended kept every caller waiting for it (a webhook's event, a registration's MCP
   * fetchTools) forever. Its callers go on when it rejects, and their request tells the failure.
   * A load given up on that is still under way is not waited for again (abandonedLoad).
   */
  async ready(): Promise<void> {
    if (undiciLoaded()) return;
    const limitMs = this.clientLoadLimitMs;
    const load = loadUndici();
    if (load === abandonedLoad) throw new ClientNotLoaded(limitMs, true);
    let limit: NodeJS.Timeout | undefined;
    const passed = new Promise<never>((_, reject) => {
      limit = setTimeout(() => {
        abandonedLoad = load;
        reject(new ClientNotLoaded(limitMs));
      }, limitMs);
      limit.unref();
    });
    try {
      await Promise.race([load, passed]);
    } finally {
      clearTimeout(limit);
    }
  }

  /** Closes the kept connections (shutdown). */
  close(): Promise<void> {
    this.closing = true;
    return this.agents.close();
  }

  async check(url: string | URL, options: Pick<FetchOptions, 'purpose' | 'signal'>): Promise<CheckedUrl> {
    const started = process.hrtime.bigint();
    const deadline = new Deadline(this.timeoutMs, [options.signal]);
    const state = { url: String(url) };
    try {
      const parsed = parseUrl(url);
      const addresses = await this.admit(parsed, deadline, options.purpose);
      this.report(options.purpose, started, 'ok');
      return { operatorAllowed: this.operatorAllowed(parsed, addresses, options.purpose) };
    } catch (error) {
      throw this.failed(options.purpose, started, error, state.url, deadline);
    } finally {
      deadline.dispose();
    }
  }

  async getJson(url: string | URL, options: GetJsonOptions): Promise<JsonDocument | NotModified> {
    const started = process.hrtime.bigint();
    const deadline = new Deadline(options.timeoutMs ?? this.timeoutMs, [options.signal]);
    const state = { url: String(url) };
    const maxBytes = options.maxBytes ?? this.maxBytes;
    try {
      const headers: Record<string, string> = { accept: 'application/json', ...lowerKeys(options.headers) };
      if (options.ifNoneMatch) headers['if-none-match'] = options.ifNoneMatch;
      if (options.ifModifiedSince) headers['if-modified-since'] = options.ifModifiedSince;
      const { response, url: finalUrl } = await this.exchange(parseUrl(url), { method: 'GET', headers }, deadline, state, 'follow', options.purpose);
      try {
        const etag = response.headers.get('etag') ?? undefined;
        const lastModified = response.headers.get('last-modified') ?? undefined;
        if (response.status === 304 && (options.ifNoneMatch || options.ifModifiedSince)) {
          this.report(options.purpose, started, 'not-modified');
          return { notModified: true, status: 304, url: finalUrl.href, etag, lastModified };
        }
        expectSuccess(response, finalUrl);
        expectReadableCoding(response, finalUrl);
        const contentType = response.headers.get('content-type') ?? '';
        if (!isJsonMediaType(contentType)) {
          throw new FetchError(
            'content-type',
            finalUrl.href,
            contentType
              ? `${finalUrl.href} answered with Content-Type "${quotedHeader(contentType)}"; the registry only accepts JSON (application/json or application/*+json)`
              : `${finalUrl.href} answered without a Content-Type; the registry only accepts JSON (application/json or application/*+json)`,
          );
        }
        const bytes = await readAll(response, finalUrl, maxBytes, deadline);
        // Read as UTF-8 whatever charset is declared (a server that labels ASCII JSON latin1 is
        // common, and harmless); when that fails under another charset, the charset is the fault.
        const otherCharset = otherThanUtf8(contentType);
        const notUtf8 = (): FetchError =>
          new FetchError(
            'content-type',
            finalUrl.href,
            `${finalUrl.href} answered with Content-Type "${quotedHeader(contentType)}", a body in charset ${otherCharset}; JSON is read as UTF-8 only (RFC 8259): serve it as UTF-8, with Content-Type: application/json (charset=utf-8 or no charset)`,
          );
        let text: string;
        try {
          text = decodeUtf8(bytes, finalUrl);
        } catch (error) {
          throw otherCharset === undefined ? error : notUtf8();
        }
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch (error) {
          if (otherCharset !== undefined) throw notUtf8();
          throw new FetchError('invalid-json', finalUrl.href, `${finalUrl.href} did not answer with valid JSON: ${(error as Error).message}`);
        }
        this.report(options.purpose, started, 'ok');
        const caching = {
          cacheControl: response.headers.get('cache-control') ?? undefined,
          expires: response.headers.get('expires') ?? undefined,
          date: response.headers.get('date') ?? undefined,
          age: response.headers.get('age') ?? undefined,
        };
        return { notModified: false, status: response.status, url: finalUrl.href, text, value, bytes: bytes.byteLength, contentType, etag, lastModified, caching };
      } finally {
        await discard(response);
      }
    } catch (error) {
      throw this.failed(options.purpose, started, error, state.url, deadline);
    } finally {
      deadline.dispose();
    }
  }

  async postJson(url: string | URL, body: unknown, options: FetchOptions): Promise<PostResult> {
    const started = process.hrtime.bigint();
    const deadline = new Deadline(options.timeoutMs ?? this.timeoutMs, [options.signal]);
    const state = { url: String(url) };
    try {
      // A JSON media type of the caller's own (a v1.0 notification is application/a2a+json) stands.
      const headers = { accept: 'application/json', 'content-type': 'application/json', ...lowerKeys(options.headers) };
      // A webhook that redirects is answered as it is: re-posting a notification elsewhere is not ours to decide.
      const { response, url: finalUrl } = await this.exchange(
        parseUrl(url),
        { method: 'POST', headers, body: JSON.stringify(body) },
        deadline,
        state,
        'manual',
        options.purpose,
        options.secretOverHttpRefusal,
      );
      try {
        expectNoRedirect(response, finalUrl);
        expectSuccess(response, finalUrl);
        // The status is the answer; the body is left unread (discarded below), whatever its size.
        this.report(options.purpose, started, 'ok');
        return { status: response.status, url: finalUrl.href, contentType: response.headers.get('content-type') ?? undefined };
      } finally {
        await discard(response);
      }
    } catch (error) {
      throw this.failed(options.purpose, started, error, state.url, deadline);
    } finally {
      deadline.dispose();
    }
  }

  fetchFunction(options: FetchOptions): FetchFunction {
    return async (input, init) => {
      const started = process.hrtime.bigint();
      const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
      const deadline = new Deadline(options.timeoutMs ?? this.timeoutMs, [options.signal, signal ?? undefined]);
      const state = { url: input instanceof Request ? input.url : String(input) };
      const maxBytes = options.maxBytes ?? this.maxBytes;
      let settled = false;
      const finish = (error?: unknown): FetchError | undefined => {
        if (settled) return undefined;
        settled = true;
        deadline.dispose();
        if (error === undefined) {
          this.report(options.purpose, started, 'ok');
          return undefined;
        }
        return this.failed(options.purpose, started, error, state.url, deadline);
      };
      try {
        const request = await toHopRequest(input, init, { ...lowerKeys(options.headers) });
        const mode = init?.redirect ?? (input instanceof Request ? input.redirect : 'follow');
        const { response, url: finalUrl } = await this.exchange(parseUrl(state.url), request, deadline, state, mode, options.purpose);
        const refusedCoding = refusedCodingOf(response.headers);
        if (!refusedCoding) checkDeclaredLength(response, finalUrl, maxBytes);
        const source = response.body && !NULL_BODY_STATUSES.has(response.status) ? (response.body as ReadableStream<Uint8Array>) : null;
        const body = !source
          ? null
          : refusedCoding
            ? refusedBody(source, codingRefusal(refusedCoding, finalUrl.href), finish)
            : guardedStream(source, finalUrl, maxBytes, deadline, response.headers.get('content-encoding') ?? undefined, finish);
        if (!body) finish();
        const answer = new Response(body, { status: response.status, statusText: response.statusText, headers: headerPairs(response.headers) });
        Object.defineProperty(answer, 'url', { value: finalUrl.href });
        return answer;
      } catch (error) {
        throw finish(error) ?? error;
      }
    };
  }

  /**
   * Sends one request, following redirects ('follow'), returning them ('manual') or refusing
   * them ('error'); every hop is admitted (resolved, checked, pinned) first. The caller owns the
   * returned response.
   */
  private async exchange(
    first: URL,
    request: HopRequest,
    deadline: Deadline,
    state: { url: string },
    mode: RequestRedirect,
    purpose: FetchPurpose,
    secretOverHttpRefusal?: string,
  ): Promise<Exchange> {
    let url = first;
    // The codings asked for are the registry's, whatever a caller set: an answer in zstd is not
    // decoded, its body refused if read (content-codings.ts). Setting it leaves undici's decoding as it is.
    let current: HopRequest = { ...request, headers: { 'user-agent': this.userAgent, ...request.headers, 'accept-encoding': ACCEPT_ENCODING } };
    for (let hop = 0; ; hop++) {
      state.url = url.href;
      const addresses = await this.admit(url, deadline, purpose);
      // Decided on the addresses this request connects to: the answer when the URL was checked
      // (a webhook configured) may have been the operator's network, and this one the internet.
      if (secretOverHttpRefusal !== undefined && url.protocol === 'http:' && !this.operatorAllowed(url, addresses, purpose)) {
        throw new FetchError('credentials', url.href, `refused to send to ${url.href}: ${secretOverHttpRefusal}`);
      }
      // The registry's own loading of its HTTP client is no part of the server's time.
      if (!undiciLoaded()) {
        await deadline.outside(() => this.ready()).catch((error: unknown) => {
          if (deadline.signal.aborted || error instanceof FetchError) throw error;
          if (error instanceof ClientNotLoaded) throw new FetchError('timeout', url.href, `the request to ${url.href} was not sent: ${error.message}`, { cause: error, notSent: true });
          // A load that failed is the registry's, not the server's: it was told as "could not fetch <url>: ...".
          const said = error instanceof Error ? error.message : String(error);
          throw new FetchError('connect', url.href, `the request to ${url.href} was not sent: ${clientLoadFailed(said)}`, { cause: error });
        });
      }
      const dispatcher = await this.agents.for(url, addresses, deadline.ms);
      const { fetch: undiciFetch } = await loadUndici();
      const response = await undiciFetch(url, {
        method: current.method,
        headers: current.headers,
        body: current.body as never,
        duplex: current.body instanceof ReadableStream ? 'half' : undefined,
        redirect: 'manual',
        dispatcher,
        signal: deadline.signal,
      });
      if (!REDIRECT_STATUSES.has(response.status) || mode === 'manual') return { response, url };
      await discard(response);
      if (mode === 'error') throw new FetchError('bad-redirect', url.href, `${url.href} redirected (HTTP ${response.status}) where no redirect was expected`);
      const location = response.headers.get('location');
      if (!location) throw new FetchError('bad-redirect', url.href, `${url.href} answered HTTP ${response.status} without a Location header`);
      if (hop >= this.maxRedirects) {
        throw new FetchError('redirects', url.href, `${first.href} redirected more than ${this.maxRedirects} times (last to ${quotedHeader(location)}); the registry follows at most ${this.maxRedirects}`);
      }
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new FetchError('bad-redirect', url.href, `${url.href} redirected to "${quotedHeader(location)}", which is not a URL`);
      }
      // An https source is never downgraded: whoever is on the network path of a plain http hop
      // can answer in its place (a JWKS with their keys, a card of their choosing).
      if (url.protocol === 'https:' && next.protocol === 'http:') {
        throw new FetchError(
          'bad-redirect',
          url.href,
          `refused to follow the redirect from ${url.href} to ${next.href}: it leaves https for plain http, where anyone on the network path could change the answer; redirect to an https URL (or give the final https URL)`,
        );
      }
      current = redirectedRequest(current, response.status, url, next);
      url = next;
    }
  }

  /** REGISTRY_FETCH_ALLOW lists the URL's host by name, or the operator configured its origin for `purpose`: any address it resolves to is accepted. */
  private hostAllowed(url: URL, purpose: FetchPurpose): boolean {
    return (parseAddress(url.hostname) === undefined && this.allow.allowsHost(url.hostname)) || this.operatorOrigins.get(purpose)?.has(url.origin) === true;
  }

  /** The operator allows `url` for `purpose` whatever its rules say: by its host, or by every one of these addresses it resolved to. */
  private operatorAllowed(url: URL, addresses: readonly CheckedAddress[], purpose: FetchPurpose): boolean {
    return this.hostAllowed(url, purpose) || addresses.every(({ address }) => this.allow.allowsAddress(parseAddress(address)!));
  }

  /** Checks scheme, credentials and every address of the host; answers the addresses to connect to. */
  private async admit(url: URL, deadline: Deadline, purpose: FetchPurpose): Promise<CheckedAddress[]> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new FetchError('scheme', url.href, `refused to fetch ${url.href}: only http and https URLs are fetched, not ${url.protocol.replace(/:$/, '')}`);
    }
    if (url.username || url.password) {
      throw new FetchError('credentials', url.href, `refused to fetch ${url.href.replace(/\/\/[^@/]*@/, '//…@')}: a URL with a user name or password is not fetched`);
    }
    if (BLOCKED_PORTS.has(url.port)) {
      throw new FetchError(
        'port',
        url.href,
        `refused to fetch ${url.href}: port ${url.port} is one of the Fetch standard's blocked ports (SMTP, X11, IRC, SIP, ...), which no fetch client connects to; serve it on another port (e.g. 443, 80 or 8080)`,
      );
    }
    const host = url.hostname;
    const literal = parseAddress(host);
    const hostAllowed = this.hostAllowed(url, purpose);
    let answers: readonly string[];
    if (literal) {
      answers = [literal.toString()];
    } else {
      const started = Date.now();
      const waited = { queued: false };
      try {
        const name = normaliseHost(host);
        const lookup = (signal: AbortSignal): Promise<readonly string[]> => this.resolve(name, signal);
        // A lookup that cannot be cancelled is shared by every request for its name (dns.ts); the
        // servers' queries are each cancelled at their own request's deadline.
        answers = this.cancellableLookups ? await this.lookups.run(lookup, deadline.signal, waited) : await this.lookups.runShared(name, lookup, deadline.signal, waited);
      } catch (error) {
        if (deadline.timedOut && !deadline.passedBeforeStart) {
          const seconds = Math.max(0.1, Math.floor((Date.now() - started) / 100) / 10);
          const queue = waited.queued ? `, waiting behind the ${this.lookups.max} lookups already in flight` : '';
          const caller = deadline.callersDeadline;
          const passed = caller ? `when ${caller}` : `past the request's deadline of ${deadline.ms} ms (REGISTRY_FETCH_TIMEOUT_MS)`;
          throw new FetchError(
            'timeout',
            url.href,
            `looking up ${host} took longer than ${seconds} s${queue}, ${passed}: the DNS resolver is slow or does not answer`,
            { cause: error },
          );
        }
        if (deadline.signal.aborted) throw error;
        const code = errorCode(error) ?? 'no answer';
        throw new FetchError('dns', url.href, `could not resolve ${host} (${code})`, { cause: error });
      }
      if (answers.length === 0) throw new FetchError('dns', url.href, `${host} resolves to no address`);
    }
    const checked: CheckedAddress[] = [];
    for (const answer of answers) {
      const address = parseAddress(answer);
      if (!address) throw new FetchError('dns', url.href, `${host} resolved to "${answer}", which is not an IP address`);
      if (!hostAllowed && !this.allow.allowsAddress(address)) {
        const rule = restrictedRange(address);
        if (rule && literal) {
          throw new FetchError(rule, url.href, `refused to fetch ${url.href}: ${describeAddress(address)} is ${RULE_WORDING[rule]} (rule "${rule}"); ${ALLOW_HINT}`, { refused: true });
        }
        if (rule) {
          // The message reaches the caller (and, with probes on, an entry's public health): neither
          // the address nor its kind is told, or anyone could map the operator's internal names
          // (that one exists, that another is the metadata service). The operator's log says both.
          this.observer?.refusedName?.({ purpose, url: url.href, host, address: answer, rule });
          throw new FetchError(
            'non-public',
            url.href,
            `refused to fetch ${url.href}: ${host} resolves to an address the registry may not contact (loopback, private, link-local or another range that is not public; which one is in the registry's log) (rule "non-public"); ${ALLOW_HINT}`,
            { refused: true, rule },
          );
        }
      }
      // Connect to the answer as given: re-serialising could change it (ipaddr.js reads "::10.0.0.1" as IPv4-mapped).
      checked.push({ address: literal ? address.toString() : answer, family: address.kind() === 'ipv4' ? 4 : 6 });
    }
    return checked;
  }

  private report(purpose: FetchPurpose, started: bigint, outcome: FetchEvent['outcome'], reason?: FetchFailureReason): void {
    this.observer?.fetched({ purpose, outcome, reason, seconds: Number(process.hrtime.bigint() - started) / 1e9 });
  }

  /** Turns whatever went wrong into a FetchError, reports it, and returns it to be thrown. */
  private failed(purpose: FetchPurpose, started: bigint, error: unknown, url: string, deadline: Deadline): FetchError {
    // Its connection destroyed by close() (undici's UND_ERR_DESTROYED): the other side is not to blame.
    const fetchError =
      this.closing && !(error instanceof FetchError)
        ? new FetchError('shutdown', url, `the request to ${url} was cut short by the registry's shutdown`, { cause: error })
        : toFetchError(error, url, deadline);
    // The metric names the address rule, for the operator: the caller's error does not.
    this.report(purpose, started, 'failed', fetchError.rule ?? fetchError.reason);
    return fetchError;
  }
}

function parseUrl(url: string | URL): URL {
  try {
    return new URL(String(url));
  } catch {
    throw new FetchError('invalid-url', String(url), `"${String(url)}" is not an absolute URL`);
  }
}

/** The request to send after a redirect, as the Fetch standard has it. */
function redirectedRequest(request: HopRequest, status: number, from: URL, to: URL): HopRequest {
  let { method, body } = request;
  const headers = { ...request.headers };
  if ((status === 303 && method !== 'GET' && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
    method = 'GET';
    body = undefined;
    for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']) delete headers[name];
  } else if (body instanceof ReadableStream) {
    throw new FetchError('bad-redirect', from.href, `${from.href} redirected a streamed ${method} body (HTTP ${status}), which cannot be sent again`);
  }
  if (from.origin !== to.origin) for (const name of Object.keys(headers)) if (!CROSS_ORIGIN_HEADERS.has(name)) delete headers[name];
  return { method, headers, body };
}

async function toHopRequest(input: string | URL | Request, init: RequestInit | undefined, defaults: Record<string, string>): Promise<HopRequest> {
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
  const headers = { ...defaults, ...headerPairsToRecord(input instanceof Request ? input.headers : undefined), ...headerPairsToRecord(init?.headers) };
  let body = init?.body as BodyInitLike | null | undefined;
  if (body == null && input instanceof Request && input.body && method !== 'GET' && method !== 'HEAD') {
    body = new Uint8Array(await input.arrayBuffer());
  }
  return { method, headers, body: body ?? undefined };
}

function headerPairsToRecord(headers: HeadersInit | undefined): Record<string, string> {
  if (!headers) return {};
  return Object.fromEntries(new Headers(headers).entries());
}

/** An answer's headers as the server sent them: a Content-Encoding the guard hid from fetch is put back. */
function headerPairs(headers: UndiciResponse['headers']): [string, string][] {
  return [...headers.entries()].map(([name, value]) => [name === REFUSED_CODING_HEADER ? 'content-encoding' : name, value]);
}

function lowerKeys(headers: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
}

/**
 * A POST answered with a redirect (postJson does not follow one) fails saying where it pointed:
 * "answered HTTP 301" alone did not tell a webhook's owner that the fix is to configure the URL
 * it redirects to (commonly its https:// or trailing-slash form).
 */
function expectNoRedirect(response: UndiciResponse, url: URL): void {
  if (!REDIRECT_STATUSES.has(response.status)) return;
  const location = response.headers.get('location');
  let target: string | undefined;
  try {
    target = location ? new URL(location, url).href : undefined;
  } catch {
    target = undefined;
  }
  const where = target ? `a redirect to ${target.slice(0, 500)}` : 'a redirect';
  throw new FetchError(
    'http-status',
    url.href,
    `${url.href} answered HTTP ${response.status} (${where}); a notification is not re-sent where a webhook redirects: configure the URL it should be sent to`,
    { status: response.status },
  );
}

function expectSuccess(response: UndiciResponse, url: URL): void {
  if (response.status >= 200 && response.status < 300) return;
  const retryAfter = asksRetryAfter(response.status) ? (response.headers.get('retry-after') ?? undefined) : undefined;
  const retryAfterMs = retryAfterMsOf(retryAfter);
  const asked = retryAfterMs === undefined ? '' : ` (Retry-After: ${quotedHeader(retryAfter!.trim())})`;
  throw new FetchError('http-status', url.href, `${url.href} answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}${asked}`, {
    status: response.status,
    retryAfterMs,
  });
}

/**
 * A body in a coding the guard refused (content-codings.ts) is not read as a document: its status
 * was what a caller that does not read it needed (a webhook's 2xx, a redirect, a 404).
 */
function expectReadableCoding(response: UndiciResponse, url: URL): void {
  const refusal = refusedCodingOf(response.headers);
  if (refusal) throw codingRefusal(refusal, url.href);
}

/** application/json, or any application/<something>+json (jwk-set+json, problem+json, ...). */
export function isJsonMediaType(contentType: string): boolean {
  const essence = contentType.split(';')[0]!.trim().toLowerCase();
  return essence === 'application/json' || /^application\/[a-z0-9!#$&^_.-]+\+json$/.test(essence);
}

function checkDeclaredLength(response: UndiciResponse, url: URL, maxBytes: number): void {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    throw new FetchError('too-large', url.href, `${url.href} declares ${declared} bytes; the limit is ${maxBytes} bytes`);
  }
}

/** Reads the whole body, cut off (and its connection closed) past the cap. */
async function readAll(response: UndiciResponse, url: URL, maxBytes: number, deadline: Deadline): Promise<Uint8Array> {
  checkDeclaredLength(response, url, maxBytes);
  if (!response.body) return new Uint8Array(0);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        const error = new FetchError('too-large', url.href, `${url.href} sent more than ${maxBytes} bytes; the limit is ${maxBytes} bytes`);
        await reader.cancel(error).catch(() => undefined);
        throw error;
      }
      chunks.push(value);
    }
  } catch (error) {
    throw toFetchError(error, url.href, deadline, response.headers.get('content-encoding') ?? undefined);
  }
  return Buffer.concat(chunks, total);
}

/**
 * The body passed through a byte counter, for callers that read it themselves (fetchFunction):
 * past `maxBytes` the source is cancelled (the server's connection closes) and the stream errors
 * with `too-large`. `done` is called once, when the body ends, fails or is cancelled by its reader.
 * `contentEncoding` is the answer's, for a body that does not decompress as it declares.
 */
function guardedStream(
  source: ReadableStream<Uint8Array>,
  url: URL,
  maxBytes: number,
  deadline: Deadline,
  contentEncoding: string | undefined,
  done: (error?: unknown) => FetchError | undefined,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let total = 0;
  let finished = false;
  const end = (error?: unknown): unknown => {
    if (finished) return error;
    finished = true;
    if (error !== undefined) {
      const translated = toFetchError(error, url.href, deadline, contentEncoding);
      return done(translated) ?? translated;
    }
    done();
    return undefined;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: ended, value } = await reader.read();
        if (ended) {
          end();
          controller.close();
          return;
        }
        total += value.byteLength;
        if (total > maxBytes) {
          const error = new FetchError('too-large', url.href, `${url.href} sent more than ${maxBytes} bytes; the limit is ${maxBytes} bytes`);
          reader.cancel(error).catch(() => undefined);
          controller.error(end(error));
          return;
        }
        controller.enqueue(value);
      } catch (error) {
        controller.error(end(error));
      }
    },
    async cancel(reason) {
      end();
      await reader.cancel(reason).catch(() => undefined);
    },
  });
}

/**
 * The body of an answer in a coding the guard refused, for callers that read it themselves
 * (fetchFunction): its first read fails with `refusal` (the server's connection closed, no byte of
 * it read); cancelled unread, it is no failure. `done` is called once, as for guardedStream.
 */
function refusedBody(source: ReadableStream<Uint8Array>, refusal: FetchError, done: (error?: unknown) => FetchError | undefined): ReadableStream<Uint8Array> {
  let finished = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (finished) return;
        finished = true;
        await source.cancel(refusal).catch(() => undefined);
        controller.error(done(refusal) ?? refusal);
      },
      async cancel(reason) {
        if (!finished) {
          finished = true;
          done();
        }
        await source.cancel(reason).catch(() => undefined);
      },
    },
    // Pulled only when read: a body left unread, or cancelled, is not refused.
    { highWaterMark: 0 },
  );
}

function decodeUtf8(bytes: Uint8Array, url: URL): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new FetchError('invalid-json', url.href, `${url.href} sent a body that is not UTF-8 text`);
  }
}

/** Releases a response we are done with: an unread body is cancelled (its connection closes rather than draining it). */
async function discard(response: UndiciResponse): Promise<void> {
  if (response.body && !response.bodyUsed) await response.body.cancel().catch(() => undefined);
}

/** The first error in the chain of causes that has a code (a system or undici error). */
function codedError(error: unknown): { code: string; message?: unknown } | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return e as { code: string; message?: unknown };
  }
  return undefined;
}

function errorCode(error: unknown): string | undefined {
  return codedError(error)?.code;
}

/**
 * What undici's and Node's codes mean, for the people who read a failure (a registration's
 * error, an entry's health): "could not fetch …: UND_ERR_SOCKET" said nothing to them. The code
 * stays in parentheses for whoever searches for it.
 */
const FAILURE_WORDING: Record<string, string> = {
  UND_ERR_SOCKET: 'the server closed the connection before its answer was complete',
  UND_ERR_HEADERS_OVERFLOW: "the answer's headers are larger than the registry reads (16 KB)",
  ECONNREFUSED: 'the connection was refused (nothing listens on that port)',
  ECONNRESET: 'the server reset the connection',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
};

/**
 * undici's UND_ERR_SOCKET is a hang-up, but for these of its messages: it closed the connection
 * itself on an answer HTTP/1.1 does not allow it, which was told as "the server closed the
 * connection before its answer was complete" to whoever had to mend the server.
 */
const SOCKET_ERROR_WORDING: Record<string, string> = {
  'bad response':
    'the server sent an interim HTTP 100 (Continue) answer the registry did not ask for (it sends no Expect: 100-continue) and does not accept, or an answer before the request: send the final answer alone',
  'bad upgrade': 'the server switched protocols (HTTP 101) though the registry did not ask it to',
};

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/**
 * Whether Node's decompressor refused the body's bytes: undici undoes a Content-Encoding of gzip
 * (x-gzip), deflate and br with node:zlib (zstd is kept from it, its body refused unread:
 * content-codings.ts), and its errors are theirs (the server's bytes are not what the
 * header says; not a connection failure). zlib says Z_DATA_ERROR for bytes that are not that
 * format (a body sent uncompressed, a bad checksum, junk after the end) and Z_NEED_DICT for a
 * deflate stream made with a preset dictionary, which HTTP has no way to give; undici reads with
 * Z_SYNC_FLUSH, so a body that ends early is no error. Brotli's are ERR__ERROR_FORMAT_* (and a
 * dictionary it was not given). Running out of memory is the registry's, not the body's.
 */
function isUndecodableBody(code: string): boolean {
  if (code === 'Z_DATA_ERROR' || code === 'Z_NEED_DICT') return true;
  return code.startsWith('ERR__ERROR_FORMAT_') || code === 'ERR__ERROR_DICTIONARY_NOT_SET';
}

/** What a content coding's bytes are called, where its token is not the name people know. */
const CODING_NAMES: Record<string, string> = { 'x-gzip': 'gzip', br: 'brotli (br)' };

/**
 * A body that does not decompress as its Content-Encoding declares: the server answered, with
 * no valid document (invalid-json, as a body that is not UTF-8 text), and its message says which
 * coding and how to mend it. The commonest cause is a body sent uncompressed under the header.
 */
function undecodableBody(error: unknown, url: string, code: string, contentEncoding: string | undefined): FetchError {
  const codings = contentCodings(contentEncoding);
  const cause = (error instanceof Error && error.cause instanceof Error ? error.cause : error) as { message?: unknown };
  const said = typeof cause.message === 'string' && cause.message !== '' ? `${cause.message}, ${code}` : code;
  const declared = contentEncoding ? `Content-Encoding: ${contentEncoding.trim()}` : 'a Content-Encoding';
  const what = codings.length === 1 ? `is not valid ${CODING_NAMES[codings[0]!] ?? codings[0]}` : 'does not decompress as that header declares';
  return new FetchError(
    'invalid-json',
    url,
    `${url} answered with ${declared}, but its body ${what} (${said}): the server must send the body compressed as its Content-Encoding declares, or send it uncompressed without that header`,
    { cause: error },
  );
}

/**
 * Maps an undici/Node/DOM error to a FetchError with the reason a metric and a person need.
 * `contentEncoding` is the answer's, when the error came while its body was read.
 */
function toFetchError(error: unknown, url: string, deadline: Deadline, contentEncoding?: string): FetchError {
  if (error instanceof FetchError) return error;
  if (deadline.passedBeforeStart) {
    return new FetchError('timeout', url, `the request to ${url} was not sent: the deadline its caller set had passed before it began`, { cause: error, notSent: true });
  }
  // Only a caller's time runs out here (the request's own waits outside()): not the server's doing.
  if (deadline.endedWhileLoading && deadline.timedOut) {
    return new FetchError('timeout', url, `the request to ${url} was not sent: its caller's deadline passed while the registry was still loading its HTTP client (undici)`, { cause: error, notSent: true });
  }
  if (deadline.timedOut) {
    const caller = deadline.callersDeadline;
    const message = caller ? `no complete answer from ${url}: ${caller}` : `no complete answer from ${url} within ${deadline.ms} ms (the registry's fetch timeout)`;
    return new FetchError('timeout', url, message, { cause: error });
  }
  if (deadline.callerAborted) return new FetchError('aborted', url, `the request to ${url} was cancelled`, { cause: error });
  const code = errorCode(error);
  if (code && isUndecodableBody(code)) return undecodableBody(error, url, code, contentEncoding);
  if (code && TIMEOUT_CODES.has(code)) {
    return new FetchError('timeout', url, `no complete answer from ${url} within ${deadline.ms} ms (${code})`, { cause: error });
  }
  if (code && (/^ERR_TLS|CERT|SSL|^ERR_SSL/.test(code) || code === 'EPROTO')) {
    return new FetchError('tls', url, `TLS with ${url} failed (${code})`, { cause: error });
  }
  const said = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
  const socketMessage = code === 'UND_ERR_SOCKET' ? codedError(error)?.message : undefined;
  const wording = (typeof socketMessage === 'string' ? SOCKET_ERROR_WORDING[socketMessage] : undefined) ?? (code ? FAILURE_WORDING[code] : undefined);
  const detail = wording ? `${wording} (${code})` : (code ?? said);
  return new FetchError('connect', url, `could not fetch ${url}: ${detail}`, { cause: error });
}
