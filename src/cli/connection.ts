/**
 * How the CLI reaches a registry, without the A2A client itself: the connection settings from
 * the global options (--registry, --token, --timeout, the admin-token fallback), the fetch every
 * request goes through, the three failures the commands map to exit codes, and the message parts
 * the commands build. Apart from ./client.ts (the @a2a-js/sdk client, which brings in jose: about
 * 60 ms of CPU to load) so that what does not talk to a registry (validate, backup, --help, a
 * usage error) does not load the SDK; ./remote.ts loads the client when a command connects.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Part } from '@a2a-js/sdk';
import type { ErrorBody, ErrorCode } from '../contract/types.js';
import { ADMIN_TOKEN_FILE } from '../auth/admin-token-file.js';
import { dataDirOf } from '../config/empty-setting.js';
import { retryAfterMs } from '../lib/retry-after.js';
import { shownSettingValue } from '../lib/url-password.js';
import { thisProcessUser } from '../lib/write-access.js';
import { isObject, type JsonObject } from '../lib/json.js';
import { codePointLength, codePointPrefix } from '../lib/code-points.js';
import { RedirectRefused, answeredAt, httpFetch } from './http-fetch.js';
import { UnusableAnswer } from './unusable-answer.js';

export const DEFAULT_REGISTRY_URL = 'http://127.0.0.1:8080';
export const DEFAULT_TIMEOUT_SECONDS = 30;

/**
 * The most the CLI reads of an answer that is not an event stream: 256 MiB, decoded. A registry's
 * largest is a page of 100 entries or hits (`list`, `search`), each holding at most about twice
 * what its document does (its name and description in the data and the text part), and a
 * document is at most 1 MiB (REGISTRY_MAX_DOCUMENT_BYTES at its highest): some 200 MiB at worst,
 * a few hundred KB in practice. Without a bound, a server or proxy answering without end was
 * read until --timeout, the CLI holding all of it (gigabytes in 30 s over a fast link). An event
 * stream (a streamed search, a watch) is bounded event by event instead, by the A2A SDK's parser
 * (4 MiB an event).
 */
export const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

export { isObject, type JsonObject };

// --- failures ------------------------------------------------------------------------------

/** The registry answered the request and declined it: a REJECTED (or FAILED) task. */
export class RegistryDeclined extends Error {
  constructor(
    readonly state: string,
    readonly error: ErrorBody,
  ) {
    super(`${error.code}: ${error.message}`);
  }
}

/** Nothing usable answered at the registry URL: connection refused, DNS, timeout, no agent card. */
export class RegistryUnreachable extends Error {}

/** The registry answered, but not as the contract says (an HTTP or JSON-RPC error, an odd task). */
export class RegistryProtocolError extends Error {}

/** The failure class of anything a registry call threw; the SDK may wrap our errors in its own. */
export function classify(err: unknown): RegistryDeclined | RegistryUnreachable | RegistryProtocolError {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof RegistryDeclined || e instanceof RegistryUnreachable || e instanceof RegistryProtocolError) return e;
  }
  const named = namedRefusal(err);
  if (named) return named;
  const message = err instanceof Error ? err.message : String(err);
  // SDK errors can embed a whole response body; one line is enough to act on.
  return new RegistryProtocolError(oneLine(message));
}

/**
 * Refusals the registry answers as a JSON-RPC error rather than a task, naming them in a
 * google.rpc.ErrorInfo: its reason, and the contract's code a script reads. A request body over
 * REGISTRY_MAX_BODY_BYTES (REQUEST_TOO_LARGE, refused at the door) always carries a document over
 * the document limit (the configuration makes sure of it), so it is the contract's TOO_LARGE.
 */
const NAMED_REFUSALS = new Map<string, ErrorCode>([
  ['STORAGE_UNAVAILABLE', 'STORAGE_UNAVAILABLE'],
  ['STARTING_UP', 'STARTING_UP'],
  ['RATE_LIMITED', 'RATE_LIMITED'],
  ['REQUEST_TOO_LARGE', 'TOO_LARGE'],
]);

/**
 * A JSON-RPC error whose `data[0]` is the registry's ErrorInfo (storage unavailable, starting up,
 * rate limited): that reason as the code (with the retry time when the ErrorInfo carries it), as a
 * declined task's error, so scripts can tell "retry later" from a broken answer.
 */
function namedRefusal(err: unknown): RegistryDeclined | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const data = (e as { data?: unknown }).data;
    const info = Array.isArray(data) ? data[0] : undefined;
    const code = isObject(info) && typeof info.reason === 'string' ? NAMED_REFUSALS.get(info.reason) : undefined;
    if (!code || !isObject(info)) continue;
    const error: ErrorBody = { code, message: oneLine(e.message) };
    const retry = isObject(info.metadata) ? Number(info.metadata.retryAfterSeconds) : Number.NaN;
    if (Number.isInteger(retry) && retry >= 0) error.retryAfterSeconds = retry;
    return new RegistryDeclined('REFUSED', error);
  }
  return undefined;
}

export const oneLine = (s: string, max = 300): string => {
  const flat = s.replace(/\s+/g, ' ').trim();
  // Cut between characters, never inside a surrogate pair (../lib/clipped.ts).
  return codePointLength(flat) > max ? `${codePointPrefix(flat, max - 1)}…` : flat;
};

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ECONNRESET: 'connection reset',
  EPIPE: 'the connection was closed while the request was being sent',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed',
  CERT_HAS_EXPIRED: 'TLS certificate has expired',
  // An https:// URL for a registry that serves plain HTTP (npm start does): OpenSSL's own words name neither.
  ERR_SSL_WRONG_VERSION_NUMBER: 'the server there does not speak TLS; if the registry serves plain HTTP, give an http:// URL',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is self-signed; to trust it, set NODE_EXTRA_CA_CERTS to that certificate (a PEM file)',
  SELF_SIGNED_CERT_IN_CHAIN: 'its TLS certificate comes from a CA this machine does not trust; set NODE_EXTRA_CA_CERTS to the CA certificate (a PEM file)',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'its TLS certificate comes from a CA this machine does not trust; set NODE_EXTRA_CA_CERTS to the CA certificate (a PEM file)',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its TLS certificate cannot be checked (an intermediate certificate missing on the server, or a private CA: set NODE_EXTRA_CA_CERTS)',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its TLS certificate is for another host name',
};

/** The system or undici code of a network failure (ECONNREFUSED, EPIPE, UND_ERR_SOCKET), found through its causes. */
export function networkCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; (isObject(e) || e instanceof Error) && depth < 8; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_REASONS[code]) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** "connection refused" rather than undici's "fetch failed". */
function networkReason(err: unknown): string {
  const code = networkCode(err);
  if (code) return NETWORK_REASONS[code]!;
  const message = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
  return oneLine(message, 120);
}

// --- connection settings -------------------------------------------------------------------

export interface ConnectionOptions {
  registry?: string;
  token?: string;
  timeout?: number;
}

export interface Connection {
  /** Base URL; the agent card is read from <url>/.well-known/agent-card.json. */
  url: string;
  token?: string;
  /** Where the token came from, for messages such as "the admin token in ./data/admin-token". */
  tokenSource: 'option' | 'admin-token-file' | 'none';
  /**
   * The admin-token file's token (never one the user gave) was refused at the registry's door
   * (HTTP 401): the file is another registry's (the one whose data directory is here). Set by the
   * fetch, which then sends every request without it.
   */
  adminTokenRefused?: boolean;
  /**
   * Without a token: why the registry's admin-token file, there to be used, was not (this user may
   * not read it: the CLI run as another user than the registry's), for the hint after a refusal.
   */
  unreadableTokenFile?: string;
  /**
   * Set by the fetch when a request carrying the token was redirected to another origin (an
   * http:// URL the registry's proxy sends on to https://): the registry's base URL there. As
   * fetch does, the token is not sent on to another origin, so the registry saw none.
   */
  tokenLeftAt?: string;
  /** What to tell the user of the settings read (REGISTRY_DATA_DIR given empty, taken as unset), as the registry says it at start-up. */
  warnings?: string[];
  timeoutMs: number;
  /** A watch: its event stream stays open past the timeout (which still bounds the wait for its headers). */
  openStreams?: boolean;
}

/**
 * The registry's base URL from whatever URL of it the user has at hand: the base itself, its
 * agent card (…/.well-known/agent-card.json, or any other well-known document), an A2A endpoint
 * (…/a2a/jsonrpc, …/a2a/rest, or a route below them such as …/a2a/rest/message:send) or its MCP
 * endpoint (…/mcp). A registry mounted under a path prefix keeps it. Query and fragment are dropped.
 */
export function registryBase(url: URL): string {
  let path = url.pathname;
  const wellKnown = path.indexOf('/.well-known/');
  if (wellKnown !== -1) path = path.slice(0, wellKnown);
  else {
    const a2a = path.search(/\/a2a(\/|$)/);
    if (a2a !== -1) path = path.slice(0, a2a);
    else path = path.replace(/\/mcp\/*$/, '');
  }
  return `${url.origin}${path.replace(/\/+$/, '')}`;
}

/** Thrown for a --registry that is empty or not an absolute http(s) URL, or an empty --token: a usage error. */
export class BadConnectionOption extends Error {}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/**
 * `--token` (or A2A_REGISTRY_TOKEN, which commander maps onto it) wins. Otherwise, on the
 * registry's own machine, the admin token the registry generated in its data directory is used
 * if this user can read it. Only for a loopback registry URL: that token must never be sent to
 * another host just because a file of that name happens to be in the working directory.
 */
export function resolveConnection(options: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): Connection {
  if (options.registry !== undefined && options.registry.trim() === '') {
    // `--registry "$STAGING_URL"` with the variable unset went to http://127.0.0.1:8080, the
    // registry on this machine, with its admin token: `rm` removed the entry there instead.
    throw new BadConnectionOption(`--registry (or A2A_REGISTRY_URL) is empty: an unset shell variable? Give the registry's URL, or leave both out for ${DEFAULT_REGISTRY_URL}`);
  }
  const raw = options.registry ?? DEFAULT_REGISTRY_URL;
  // Shown with a password in it masked (it was shown whole: a usage error ends up in CI logs).
  const shown = shownSettingValue(raw);
  const given = shown === undefined ? '--registry' : `--registry "${shown}"`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BadConnectionOption(`${given} is not a URL (expected e.g. ${DEFAULT_REGISTRY_URL})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadConnectionOption(`${given} must be an http:// or https:// URL`);
  const base = registryBase(url);
  const timeoutMs = (options.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
  if (options.token !== undefined && options.token.trim() === '') {
    // `--token "$ALICE_TOKEN"` with the variable unset was no token, so on the registry's machine
    // the command ran with its admin token instead: registered as admin, removed what alice may not.
    throw new BadConnectionOption(
      '--token (or A2A_REGISTRY_TOKEN) is empty: an unset shell variable? Give the token, or leave both out (on the registry\'s machine its generated admin token is then used)',
    );
  }
  if (options.token) return { url: base, token: options.token, tokenSource: 'option', timeoutMs };
  if (LOOPBACK_HOSTS.has(url.hostname)) {
    // Read as the registry reads it: given empty (an unset shell variable), it is ./data, and said so.
    const { dataDir, warnings } = dataDirOf(env);
    const said = warnings.length > 0 ? { warnings } : {};
    const file = path.join(dataDir, ADMIN_TOKEN_FILE);
    try {
      const token = readFileSync(file, 'utf8').trim();
      if (token) return { url: base, token, tokenSource: 'admin-token-file', timeoutMs, ...said };
    } catch (err) {
      // No token file: go on without a token (reads are public by default). One this user may
      // not read is said if the registry then asks for a token: "when readable" did not say it was there.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') {
        const why = code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (err as Error).message;
        return { url: base, tokenSource: 'none', unreadableTokenFile: `${thisProcessUser()} may not read the registry's admin token in ${file} (${why})`, timeoutMs, ...said };
      }
    }
    return { url: base, tokenSource: 'none', timeoutMs, ...said };
  }
  return { url: base, tokenSource: 'none', timeoutMs };
}

/** Whether requests carry a token: one given, or the data directory's admin token while the registry takes it. */
export const sendsToken = (connection: Connection): boolean => connection.token !== undefined && !connection.adminTokenRefused;

/**
 * The fetch every request goes through: adds the bearer token, and turns a network failure or a
 * registry that does not answer within the timeout into RegistryUnreachable. The timeout bounds
 * the whole answer, headers and body: a registry that stalls half way through a body (a streamed
 * search, heartbeats and all) would otherwise be waited on for ever. Only a watch's event
 * stream, open for as long as the watch (`openStreams`), is free of it once its headers came.
 */
export function registryFetch(connection: Connection): typeof fetch {
  const seconds = connection.timeoutMs / 1000;
  return async (input, init) => {
    const controller = new AbortController();
    let answering = false;
    // Once the headers are in, the body being read fails with this reason (./http-fetch.ts errors it with it).
    const timer = setTimeout(
      () => controller.abort(answering ? new RegistryUnreachable(`cannot reach the registry at ${connection.url}: the answer was not complete within ${seconds} s`) : undefined),
      connection.timeoutMs,
    );
    const outer = init?.signal;
    if (outer) outer.addEventListener('abort', () => controller.abort(outer.reason), { once: true });
    const send = (): Promise<Response> => {
      const headers = new Headers(init?.headers);
      // Every answer the CLI reads from a registry is JSON: the card's GET, which names no type,
      // says so (a server or proxy choosing by Accept answers it JSON rather than a web page). The
      // SDK's transports name theirs (the JSON-RPC and event-stream types), which stay.
      if (!headers.has('accept')) headers.set('accept', 'application/json');
      if (sendsToken(connection)) headers.set('authorization', `Bearer ${connection.token}`);
      return httpFetch(input, { ...init, headers, signal: controller.signal });
    };
    let response: Response;
    try {
      response = await send();
      // The admin token of the data directory here, sent to a registry on this machine that does
      // not know it (another registry's, in the folder the command runs in): the request again
      // without it, as the user, who gave no token, would have sent it. A public read then
      // succeeds; what needs a token is declined for want of one, and the hint says this file's
      // token was refused (./remote.ts).
      if (response.status === 401 && connection.tokenSource === 'admin-token-file' && !connection.adminTokenRefused && canResend(input, init)) {
        connection.adminTokenRefused = true;
        await response.body?.cancel();
        response = await send();
      }
      connection.tokenLeftAt ??= tokenLeftBehind(connection, input, response);
      if (response.status === 401 || response.status === 429) throw await refusedAtDoor(response);
    } catch (err) {
      clearTimeout(timer);
      if (err instanceof RegistryDeclined || outer?.aborted) throw err;
      const unusable = causeOf(err, UnusableAnswer);
      if (unusable) throw new RegistryUnreachable(notARegistry(connection.url, input, init?.method, oneLine(unusable.message, 200)), { cause: err });
      const redirect = causeOf(err, RedirectRefused);
      if (redirect) {
        throw new RegistryUnreachable(
          `cannot reach the registry at ${connection.url}: ${redirect.method} ${pathOf(input)} was redirected (HTTP ${redirect.status}) to ${redirect.location}, where a JSON-RPC request would arrive as a GET without its body: give ${registryBase(new URL(redirect.location))} as --registry or A2A_REGISTRY_URL`,
          { cause: err },
        );
      }
      const reason = controller.signal.aborted ? `no answer within ${seconds} s` : networkReason(err);
      throw new RegistryUnreachable(`cannot reach the registry at ${connection.url}: ${reason}`, { cause: err });
    }
    if (!registryAnswer(response)) {
      clearTimeout(timer);
      await response.body?.cancel().catch(() => undefined);
      throw new RegistryUnreachable(notARegistry(connection.url, input, init?.method, `${httpStatus(response)}, ${contentKind(response)}, not the registry's JSON`));
    }
    const streamed = /^text\/event-stream\s*(;|$)/i.test(response.headers.get('content-type') ?? '');
    // An answer that says it is longer than any registry's is not read at all.
    const declared = Number(response.headers.get('content-length') ?? '');
    if (!streamed && declared > MAX_ANSWER_BYTES) {
      clearTimeout(timer);
      await response.body?.cancel().catch(() => undefined);
      throw new RegistryUnreachable(notARegistry(connection.url, input, init?.method, `${httpStatus(response)}, ${tooLong(`${declared.toLocaleString('en-US')} bytes long (Content-Length), more than`)}`));
    }
    answering = true;
    if (connection.openStreams && streamed) clearTimeout(timer);
    // Left to fire on a body read in full long before: aborting a finished answer does nothing,
    // and an unreferenced timer never keeps the command from exiting.
    else timer.unref();
    return withBodyFailures(response, !streamed, (err) => {
      // The timeout's (RegistryUnreachable already), or an abort the caller asked for: as they came.
      if (err instanceof RegistryUnreachable || outer?.aborted) return err;
      // Bytes that are no answer (compressed ones that do not decode): as when found before the body.
      if (err instanceof UnusableAnswer) return new RegistryUnreachable(notARegistry(connection.url, input, init?.method, oneLine(err.message, 200)), { cause: err });
      return new RegistryUnreachable(`cannot reach the registry at ${connection.url}: the connection closed mid-answer (${networkReason(err)})`, { cause: err });
    });
  };
}

/** "<what> the 256 MiB (268,435,456 bytes) the CLI reads of an answer, ...": an answer past MAX_ANSWER_BYTES. */
const tooLong = (what: string): string =>
  `${what} the ${MAX_ANSWER_BYTES / 1024 / 1024} MiB (${MAX_ANSWER_BYTES.toLocaleString('en-US')} bytes) the CLI reads of an answer, more than any registry answers with`;

/**
 * `response`, whose body, when reading it fails, fails with `told(error)`; when `capped`, past
 * MAX_ANSWER_BYTES (decoded) too, with `told` of an UnusableAnswer saying so, the rest not read.
 * Whatever fails while a body is read is the connection (cut: node:http's "aborted", ECONNRESET;
 * a TLS error) unless it is the CLI's own doing, and is told as a registry that cannot be
 * reached, exit 3, which scripts retry: it was node:http's "aborted", which reached the user as
 * an error the registry answered ("the registry answered with an error: aborted", exit 1) or as
 * no registry at all.
 */
function withBodyFailures(response: Response, capped: boolean, told: (err: unknown) => unknown): Response {
  if (!response.body) return response;
  const reader = response.body.getReader();
  let received = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        received += value.byteLength;
        if (capped && received > MAX_ANSWER_BYTES) {
          await reader.cancel().catch(() => undefined);
          return controller.error(told(new UnusableAnswer(`${httpStatus(response)}, ${tooLong('a body longer than')}`)));
        }
        controller.enqueue(value);
      } catch (err) {
        controller.error(told(err));
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return answeredAt(new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers }), response.url, response.redirected);
}

/**
 * Whether an answer can be a registry's: its card and JSON-RPC answers, errors included, are JSON
 * (an SSE stream for a streamed one). Anything else came from another server at that URL (a web
 * server with an error page, `python3 -m http.server` answering 501 to a POST) or a proxy that
 * could not reach the registry (a 502 page).
 */
function registryAnswer(response: Response): boolean {
  const type = response.headers.get('content-type') ?? '';
  return /^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(type) || /^text\/event-stream\s*(;|$)/i.test(type);
}

/**
 * "no A2A registry at <url> (POST /a2a/jsonrpc was answered HTTP 501 Unsupported method, text/html,
 * not the registry's JSON); check --registry": what answered (`answered`), never its page (raw
 * HTML was printed).
 */
function notARegistry(url: string, input: Parameters<typeof fetch>[0], method: string | undefined, answered: string): string {
  return `no A2A registry at ${url} (${method ?? 'GET'} ${pathOf(input)} was answered ${answered}); check --registry or A2A_REGISTRY_URL, or the proxy in front of the registry`;
}

const urlOf = (input: Parameters<typeof fetch>[0]): string => (typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);

/** The path a request was sent to ("/a2a/jsonrpc"), for messages. */
function pathOf(input: Parameters<typeof fetch>[0]): string {
  try {
    return new URL(urlOf(input)).pathname;
  } catch {
    return urlOf(input);
  }
}

/**
 * The registry's base URL at the origin a request was redirected to (http -> https is another),
 * which its bearer token was not sent on to; undefined when it sent none or was answered at the
 * origin it was sent to.
 */
function tokenLeftBehind(connection: Connection, input: Parameters<typeof fetch>[0], response: Response): string | undefined {
  if (!connection.token || connection.adminTokenRefused || !response.redirected) return undefined;
  try {
    const at = new URL(response.url);
    return at.origin !== new URL(urlOf(input)).origin ? registryBase(at) : undefined;
  } catch {
    return undefined;
  }
}

const httpStatus = (response: Response): string => `HTTP ${response.status}${response.statusText ? ` ${oneLine(response.statusText, 60)}` : ''}`;

function contentKind(response: Response): string {
  const type = response.headers.get('content-type');
  return type ? oneLine(type.split(';')[0]!, 60) : 'no content type';
}

/** The first error of class `type` in `err`'s chain of causes. */
function causeOf<T extends Error>(err: unknown, type: new (...args: never[]) => T): T | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof type) return e;
  }
  return undefined;
}

/** A request that can be sent again as it was: its body (a JSON-RPC request, a string) was not a stream consumed by the first. */
function canResend(input: Parameters<typeof fetch>[0], init: Parameters<typeof fetch>[1]): boolean {
  const body = init?.body;
  return !(input instanceof Request) && (body === undefined || body === null || typeof body === 'string' || body instanceof URLSearchParams || body instanceof ArrayBuffer || ArrayBuffer.isView(body) || body instanceof Blob);
}

/**
 * HTTP 401 or 429: the registry refused the request at its door, before any task: the token
 * (unknown or malformed; or none, on a closed registry), or too many requests or streams from this
 * address. Each is reported as the contract's code, as a declined task's would be, so scripts see
 * UNAUTHENTICATED or RATE_LIMITED (with retryAfterSeconds) and people see which token was sent
 * (the admin-token file's, which they never typed) or when to retry.
 */
async function refusedAtDoor(response: Response): Promise<RegistryDeclined> {
  const limited = response.status === 429;
  let message = limited ? 'The registry refused the request: too many requests (HTTP 429).' : 'The registry refused the request: it needs a valid bearer token (HTTP 401).';
  let reason: unknown;
  try {
    const body: unknown = await response.json();
    // JSON-RPC {"error": {"message", "data": [ErrorInfo]}} and HTTP+JSON {"error": {"message", "details": [ErrorInfo]}} alike.
    if (isObject(body) && isObject(body.error)) {
      if (typeof body.error.message === 'string') message = body.error.message;
      const info = [body.error.data, body.error.details].find(Array.isArray)?.[0];
      if (isObject(info)) reason = info.reason;
    }
  } catch {
    // Not JSON: the generic message stands.
  }
  if (!limited) return new RegistryDeclined('REFUSED', { code: 'UNAUTHENTICATED', message });
  // RATE_LIMITED, or TOO_MANY_STREAMS for the stream cap.
  const code = (typeof reason === 'string' && /^[A-Z_]{1,40}$/.test(reason) ? reason : 'RATE_LIMITED') as ErrorCode;
  const error: ErrorBody = { code, message };
  // Seconds, or an HTTP-date (RFC 9110 §10.2.3), as a proxy in front of the registry may send it:
  // a date was dropped, and no header at all was read as Number(null), "retry after 0 s".
  const retryAfter = retryAfterMs(response.headers.get('retry-after') ?? undefined);
  if (retryAfter !== undefined) error.retryAfterSeconds = Math.ceil(retryAfter / 1000);
  return new RegistryDeclined('REFUSED', error);
}

// --- parts ---------------------------------------------------------------------------------

export const dataPart = (value: JsonObject): Part => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' });

/** A document as a file part: the registry measures and stores exactly these bytes. */
export const filePart = (bytes: Buffer, filename: 'agent-card.json' | 'toolspec.json'): Part => ({
  content: { $case: 'raw', value: bytes },
  metadata: undefined,
  filename,
  mediaType: 'application/json',
});
