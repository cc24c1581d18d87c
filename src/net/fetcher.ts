/**
 * The one way the registry sends requests out: the `Fetcher` interface.
 *
 * Everything that reaches another server — fetching an agent card given by URL, refreshing and
 * probing entries, talking to an MCP server through the MCP SDK, fetching a JWKS for a signature,
 * posting a push notification to a webhook — depends on this interface and gets the guarded
 * implementation (`GuardedFetcher`) from the composition root. Code never calls global `fetch`,
 * `http.request` or an SDK's own transport without passing it the guard's `fetchFunction`.
 *
 * What every request gets, whichever method sends it:
 * - **http and https only**; no user name or password inside the URL; none of the Fetch
 *   standard's blocked ports (SMTP, X11, IRC, SIP, ...), which undici never connects to.
 * - **Every address checked**: the host is resolved and every address it resolves to must be
 *   public unicast (see address-policy.ts for the refused ranges: loopback, private, link-local
 *   and 169.254.169.254, CGNAT, multicast, reserved, IPv4 embedded in IPv6, ...), unless the
 *   operator allows the host, address or range in REGISTRY_FETCH_ALLOW. One refused address
 *   refuses the request: a name that resolves both outside and inside is not trusted. A service
 *   the operator configured by URL for one purpose (the embeddings service,
 *   REGISTRY_EMBEDDINGS_URL) is allowed for that purpose and that origin only.
 * - **Pinned connection**: the socket connects to an address that was checked, never to a fresh
 *   DNS answer (no DNS rebinding); TLS still verifies and sends SNI for the host name.
 * - **Redirects**: at most 3, each target checked again like the first URL; a redirect that
 *   leaves the origin carries only the headers that say how to answer (media types, protocol
 *   versions, validators): credentials, tokens, an MCP session id and any other header stay
 *   behind; none from https to plain http (a downgrade).
 * - **One deadline** (default 5 s) for the whole request: resolution, connect, every redirect,
 *   headers and body. A slow server costs at most this long. The registry's own loading of its
 *   HTTP client (undici), on a process's first request, is not counted: the request waits for it
 *   outside the deadline (30 s at most).
 * - **Bounded lookups** (dns.ts): a few at once (the system resolver holds a libuv thread per
 *   lookup), each within the request's deadline; or the operator's DNS servers (REGISTRY_DNS_SERVERS).
 * - **Body cap** (default: the document size limit): a declared Content-Length above it is refused
 *   before reading, and a body that grows past it is cut off.
 * - **Content codings**: `Accept-Encoding: gzip, deflate, br`; an answer in zstd (whose decoder
 *   may reserve 128 MB) is never decoded: its status stands, and its body, if read as a document,
 *   is refused unread (content-codings.ts).
 * - Refusals happen **before any connection** is made and throw a `FetchError` whose `reason`
 *   names the rule (a metric label too); its message says what to change. A host name refused for
 *   what it resolves to is `non-public` (its `rule`, the metric and the operator's log name the
 *   range; its caller is told neither that nor the address).
 *
 * Methods, by user:
 * - `getJson` — cards (register by URL, refresh, probe), JWKS: a GET of a JSON document, with
 *   conditional requests (ETag / Last-Modified → `notModified`), JSON media types only.
 * - `postJson` — webhooks (push notifications): a POST of a JSON body; redirects not followed;
 *   the answer's status is the receiver's verdict, its body is not read (see PostResult).
 * - `fetchFunction` — SDKs that accept a custom `fetch` (the MCP SDK's
 *   StreamableHTTPClientTransport): a fetch-compatible function with the same guard, no media
 *   type rule (SSE passes), the body capped and bounded in time per request.
 * - `fetchFunction` also serves the embeddings client (search/embeddings.ts), purpose `embeddings`.
 * - `check` — refuse a URL early (e.g. when a webhook is configured) without sending anything.
 */
import type { CachingHeaders } from '../lib/cache-lifetime.js';
import type { AddressRule } from './address-policy.js';

/** Why a request is made: a bounded metric label, and context in messages. */
export type FetchPurpose = 'agent-card' | 'refresh' | 'probe' | 'mcp' | 'jwks' | 'webhook' | 'embeddings';
export const FETCH_PURPOSES: readonly FetchPurpose[] = ['agent-card', 'refresh', 'probe', 'mcp', 'jwks', 'webhook', 'embeddings'];

/**
 * Why a request did not succeed. Address rules and `scheme`, `credentials`, `port`, `invalid-url` are
 * refusals by the guard's policy (nothing was sent); the others are what happened on the way.
 */
export type FetchFailureReason =
  | AddressRule
  /**
   * A host name resolves to an address an address rule refuses. Which rule, and the address,
   * are not told to the caller (only to the operator: metrics, log): a caller that could read them
   * could map the operator's internal names (which exist, and on which kind of network).
   */
  | 'non-public'
  | 'invalid-url'
  | 'scheme'
  | 'credentials'
  | 'port'
  | 'dns'
  | 'connect'
  | 'tls'
  | 'timeout'
  | 'aborted'
  /** Cut by the registry's own shutdown (its connections closed), not by the other side. */
  | 'shutdown'
  | 'redirects'
  | 'bad-redirect'
  | 'http-status'
  | 'too-large'
  | 'content-type'
  | 'invalid-json';

/** Reasons that are the guard's policy, decided before any connection. */
const POLICY_REASONS = new Set<FetchFailureReason>(['invalid-url', 'scheme', 'credentials', 'port']);

export class FetchError extends Error {
  override readonly name = 'FetchError';
  /** The guard refused by policy (an address rule, the scheme, ...); nothing was sent to that URL. */
  readonly refused: boolean;

  constructor(
    /** Machine-readable: which rule refused or what failed. */
    readonly reason: FetchFailureReason,
    /** The URL that was refused or failed (after redirects, the one that did). */
    readonly url: string,
    message: string,
    options: { status?: number; retryAfterMs?: number; refused?: boolean; cause?: unknown; rule?: AddressRule; notSent?: boolean } = {},
  ) {
    super(message, { cause: options.cause });
    this.notSent = options.notSent ?? false;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.refused = options.refused ?? POLICY_REASONS.has(reason);
    this.rule = options.rule;
  }

  /** For `non-public`: the address rule that refused the name's answer, for the operator's metrics; never in the message. */
  readonly rule: AddressRule | undefined;

  /**
   * For `timeout`: the request ended before it was sent (a deadline passed, or the registry's
   * HTTP client did not load in time), and the message says which. Otherwise it is the answer
   * that did not come in time: a caller that tells the wait it allowed (the embeddings client's
   * "within 10000 ms") tells it only then.
   */
  readonly notSent: boolean;

  /** HTTP status of the answer, for `http-status`. */
  readonly status: number | undefined;

  /** For `http-status` 429 and 503: how long the server asked to be left alone (its Retry-After), in ms. */
  readonly retryAfterMs: number | undefined;
}

export interface FetchOptions {
  purpose: FetchPurpose;
  /** Extra request headers (User-Agent, Accept and, for postJson, Content-Type have defaults). */
  headers?: Record<string, string>;
  /** Whole-request deadline in milliseconds; defaults to the fetcher's (REGISTRY_FETCH_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Largest accepted answer body in bytes; defaults to the fetcher's (the document size limit). */
  maxBytes?: number;
  /** Cancels the request (the FetchError's reason is then `aborted`). */
  signal?: AbortSignal;
  /**
   * postJson's request carries a secret (a webhook's token or credentials): over plain http it is sent
   * only where the operator allows it (REGISTRY_FETCH_ALLOW lists the host, or every address it
   * resolves to NOW, the addresses the socket connects to), else refused with reason
   * `credentials` and this text. Checked when the request is sent, not only when the URL was
   * given: a name that resolved to the operator's network then may resolve to the internet later.
   */
  secretOverHttpRefusal?: string;
}

export interface GetJsonOptions extends FetchOptions {
  /** Validators from an earlier fetch: when the server answers 304, getJson resolves `notModified`. */
  ifNoneMatch?: string;
  ifModifiedSince?: string;
}

export interface JsonDocument {
  notModified: false;
  status: number;
  /** The URL the document came from, after redirects. */
  url: string;
  /** The body as sent (UTF-8, byte-order mark removed). */
  text: string;
  /** The body parsed (JSON.parse; callers apply their own depth and shape checks). */
  value: unknown;
  /** Size of the body in bytes. */
  bytes: number;
  contentType: string;
  etag?: string;
  lastModified?: string;
  /** How long the server says the document may be used (see src/lib/cache-lifetime.ts). */
  caching?: CachingHeaders;
}

export interface NotModified {
  notModified: true;
  status: 304;
  url: string;
  etag?: string;
  lastModified?: string;
}

/**
 * A webhook's answer: its status says the notification was taken. Its body is not read: what a
 * receiver says beyond that is of no use, and reading it cost a 2xx answer with a body past the
 * cap (or slower than the deadline) its success — the notification retried (delivered again)
 * and, for a watch, the watch ended FAILED although every delivery had been accepted.
 */
export interface PostResult {
  status: number;
  url: string;
  contentType?: string;
}

/** The fetch signature SDKs accept (the MCP SDK's FetchLike). */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface Fetcher {
  /** GET a JSON document. Throws FetchError on a refusal, a failure, a non-2xx answer or a non-JSON body. */
  getJson(url: string | URL, options: GetJsonOptions): Promise<JsonDocument | NotModified>;
  /** POST `body` as JSON. Throws FetchError on a refusal, a failure or a non-2xx answer. */
  postJson(url: string | URL, body: unknown, options: FetchOptions): Promise<PostResult>;
  /**
   * A fetch-compatible function with the guard (addresses, pinning, redirects, deadline and body
   * cap per call; any media type). Rejects with FetchError.
   */
  fetchFunction(options: FetchOptions): FetchFunction;
  /** Resolves and checks a URL without sending anything; throws the FetchError a request would. */
  check(url: string | URL, options: Pick<FetchOptions, 'purpose' | 'signal'>): Promise<CheckedUrl>;
  /**
   * Resolves once the fetcher's own modules are loaded (loading them if they are not): the
   * guarded fetcher loads its HTTP client (undici) on its first request, a second or more on a
   * busy machine. A request's own deadline never counts it; a caller that bounds its requests in
   * time by its own clock (a webhook's retry window) waits for this first, so that the registry's
   * own loading is not counted against that clock either. Rejects when they have not loaded within
   * the bound a request's wait for them has (30 s): such a caller goes on, and its request fails
   * saying so.
   */
  ready?(): Promise<void>;
}

/** What `check` found out about a URL it accepts. */
export interface CheckedUrl {
  /**
   * The operator allowed where it goes: REGISTRY_FETCH_ALLOW lists its host, or every address it
   * resolves to, or it is a service the operator configured for the purpose. Such a target is on
   * a network the operator vouches for (its own, often private), not anywhere on the internet.
   */
  operatorAllowed: boolean;
}
