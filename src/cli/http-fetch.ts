/**
 * The CLI's fetch: the Fetch API's request and Response, sent with node:http(s) instead of
 * the global fetch. Each command is a process of its own, and the global fetch's first request
 * costs about 0.2 s of CPU (undici's HTTP parser compiled from WebAssembly, on threads of its
 * own), about half of what a command like `search` spends; node:http is already in the process.
 * bench/cli-cpu.ts measures it.
 *
 * What the registry's client asks of a fetch, as fetch does it: the method, headers (and a
 * User-Agent when they name none, "a2a-agent-registry/<version> (cli)") and a body (a string or
 * bytes), an AbortSignal whose reason rejects the request, or errors the body being read, and a
 * real Response whose body streams (SSE), its `url` and `redirected` as fetch sets them. An
 * answer no Response can hold (a status HTTP has not, such as 600, or a 101 nothing asked for)
 * rejects the fetch, its cause an UnusableAnswer naming it.
 *
 * Redirects are followed as fetch follows them (WHATWG fetch, "HTTP-redirect fetch"), up to 20:
 * a GET or HEAD whatever the status; a POST answered 307 or 308 (Caddy's http -> https redirect)
 * is sent on with its method and body, which are in memory. Sent to another origin (http -> https
 * is one), a redirected request leaves its credentials behind (Authorization: the registry's
 * token). Where fetch would send a POST on as a GET without its body (301, 302, 303) it is
 * refused instead, the rejection's cause a RedirectRefused naming the Location: a JSON-RPC
 * request sent on as a bodiless GET reaches nothing that can answer it. `redirect: 'manual'`
 * gives the redirect as it came, `redirect: 'error'` rejects at the first.
 *
 * A compressed answer (gzip, deflate, br), which the CLI does not ask for but a proxy may send all
 * the same, is decoded as fetch decodes it (./content-codings.ts); one in another coding (zstd)
 * rejects the fetch, an UnusableAnswer naming the coding.
 *
 * Not done here, as the registry's client needs none of it: a Request object or a streamed body
 * as input (handed to the global fetch, which refuses to send a streamed body on at a redirect,
 * having none left to send).
 */
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { contentCodings } from '../lib/content-codings.js';
import { decodedBody, undecodable } from './content-codings.js';
import { UnusableAnswer } from './unusable-answer.js';
import { readPackageVersion } from '../lib/package-info.js';

type FetchInput = Parameters<typeof fetch>[0];
type FetchInit = Parameters<typeof fetch>[1];

/** Statuses whose answer has no body: a Response refuses one for them. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;

export const httpFetch: typeof fetch = async (input: FetchInput, init?: FetchInit): Promise<Response> => {
  const body = init?.body;
  if (input instanceof Request || (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array))) {
    return fetch(input, init);
  }
  const method = (init?.method ?? 'GET').toUpperCase();
  const headers: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
  headers['user-agent'] ??= cliUserAgent();
  if (typeof body === 'string' || body instanceof Uint8Array) headers['content-length'] = String(Buffer.byteLength(body));
  let url = new URL(String(input));
  for (let redirects = 0; ; redirects++) {
    const response = await send(url, method, headers, body ?? undefined, init?.signal ?? undefined);
    const location = response.headers.get('location');
    if (!REDIRECTS.has(response.status) || location === null || init?.redirect === 'manual') return answeredAt(response, url.href, redirects > 0);
    await response.body?.cancel();
    if (init?.redirect === 'error') throw new TypeError('fetch failed', { cause: new Error('unexpected redirect') });
    if (redirects === MAX_REDIRECTS) throw new TypeError('fetch failed', { cause: new Error('redirect count exceeded') });
    const next = new URL(location, url);
    if (becomesGet(response.status, method)) throw new TypeError('fetch failed', { cause: new RedirectRefused(method, response.status, next.href) });
    // As fetch: credentials are not sent on to another origin (the registry's token to whatever
    // host a redirect names).
    if (next.origin !== url.origin) for (const name of CREDENTIAL_HEADERS) delete headers[name];
    url = next;
  }
};

/**
 * The CLI names itself, as fetch did ("node"): firewalls in front of a registry (WAF rules) refuse
 * requests without a User-Agent, and the registry's operator can tell the CLI's requests apart.
 * Named as the registry's own outbound requests are (a2a-agent-registry/<version> (+<its URL>),
 * `import`'s (import)).
 */
let userAgent: string | undefined;
const cliUserAgent = (): string => (userAgent ??= `a2a-agent-registry/${readPackageVersion()} (cli)`);

/** As fetch's: the Response's `url` is where it was answered, `redirected` whether a redirect led there. */
export function answeredAt(response: Response, url: string, redirected: boolean): Response {
  return Object.defineProperties(response, { url: { value: url }, redirected: { value: redirected } });
}

/** Where fetch sends a request on as a GET without its body: a POST answered 301 or 302, anything but a GET or HEAD answered 303. */
const becomesGet = (status: number, method: string): boolean => (status === 303 && method !== 'GET' && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST');

/**
 * A redirect that fetch would follow as a GET without the request's body (a POST answered 301,
 * 302 or 303), refused: the cause of the fetch's rejection, naming where it pointed.
 */
export class RedirectRefused extends Error {
  constructor(
    readonly method: string,
    readonly status: number,
    readonly location: string,
  ) {
    super(`${method} answered HTTP ${status}, a redirect to ${location} that would be followed as a GET without the request's body`);
  }
}

/** Headers a redirect to another origin does not carry on. */
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie'];

async function send(url: URL, method: string, headers: Record<string, string>, body: string | Uint8Array | undefined, signal: AbortSignal | undefined): Promise<Response> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('fetch failed', { cause: new Error(`unknown scheme ${url.protocol}`) });
  // Loaded when a request is sent: node:https (TLS) alone adds tens of milliseconds to every
  // command, those that send nothing (--help, validate, sign) included.
  const { request: newRequest } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise<Response>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const request = newRequest(url, { method, headers });
    let answer: IncomingMessage | undefined;
    // As fetch: before the answer the request rejects with the signal's reason, after it the body
    // being read fails with it.
    const abort = () => {
      const reason: unknown = signal!.reason;
      if (answer) answer.destroy(reason instanceof Error ? reason : new Error(String(reason)));
      else reject(reason);
      request.destroy();
    };
    signal?.addEventListener('abort', abort, { once: true });
    request.on('error', (err) => {
      signal?.removeEventListener('abort', abort);
      if (!answer) reject(new TypeError('fetch failed', { cause: tlsNamed(err) }));
    });
    request.on('response', (res) => {
      answer = res;
      res.on('close', () => signal?.removeEventListener('abort', abort));
      const status = res.statusCode ?? 0;
      // Thrown here, in an event handler, an error would end the process: every answer that no
      // Response can hold rejects the fetch instead.
      const unusable = (cause: Error): void => {
        res.destroy();
        reject(new TypeError('fetch failed', { cause }));
      };
      // A status HTTP has not (600, 999), or an interim one as the answer (a 101 with no upgrade
      // asked for): a Response takes 200 to 599 only (its constructor throws a RangeError).
      if (status < 200 || status > 599) return unusable(new UnusableAnswer(`HTTP ${status}${res.statusMessage ? ` ${res.statusMessage}` : ''}, which is no HTTP status (200 to 599)`));
      const hasBody = !NULL_BODY_STATUSES.has(status) && method !== 'HEAD';
      const respond = (body: Readable | null): void => {
        try {
          const answerHeaders = new Headers();
          for (let i = 0; i < res.rawHeaders.length; i += 2) answerHeaders.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
          resolve(new Response(body ? (Readable.toWeb(body) as ReadableStream<Uint8Array>) : null, { status, statusText: res.statusMessage ?? '', headers: answerHeaders }));
        } catch (err) {
          unusable(err as Error);
        }
      };
      if (!hasBody) {
        res.resume();
        return respond(null);
      }
      // A compressed answer, though none was asked for (./content-codings.ts); a redirect's body
      // is not read, as fetch does not decode it.
      const codings = REDIRECTS.has(status) && res.headers.location !== undefined ? [] : contentCodings(res.headers['content-encoding']);
      if (codings.length === 0) return respond(res);
      const why = undecodable(codings);
      if (why !== undefined) return unusable(new UnusableAnswer(why));
      decodedBody(res, codings).then(respond, unusable);
    });
    request.end(body);
  });
}

/**
 * A TLS handshake that fails while the request is being written is "write EPROTO
 * ...:SSL routines:...:wrong version number:...": named here by OpenSSL's reason, as Node names
 * such a failure met while connecting (ERR_SSL_WRONG_VERSION_NUMBER) and as fetch reported it,
 * so the CLI says what it means (an https:// URL for a plain-HTTP registry).
 */
function tlsNamed(err: NodeJS.ErrnoException): Error {
  const reason = err.code === 'EPROTO' ? /:SSL routines:[^:]*:([^:]+):/.exec(err.message)?.[1] : undefined;
  if (reason === undefined) return err;
  return Object.assign(new Error(reason, { cause: err }), { code: `ERR_SSL_${reason.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}` });
}
