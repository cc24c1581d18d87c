/**
 * The content codings the registry's outbound requests take, and the guard that refuses an
 * answer in any other when its headers arrive, before a decoder is made for its body.
 *
 * undici's fetch undoes whatever Content-Encoding an answer declares among gzip (x-gzip),
 * deflate, br and, where node:zlib has it (Node 22.15 and later, 24), zstd, whatever the request
 * asked for; one it does not know passes undecoded. A zstd frame's header may ask its decoder for
 * a window of up to 128 MB (zlib's windowLogMax of 27), whatever the body's size, reserved when
 * the header is read: any origin the registry fetches (a card's URL, which anyone may register, an
 * MCP server, a webhook receiver, a JWKS host) could have each fetch reserve that much, while the
 * body itself is capped at a few KB. gzip and deflate decode in a 32 KB window, brotli in at most
 * 16 MB (as the registry's own doors take them). So the registry asks for those codings
 * (ACCEPT_ENCODING) and refuses the others, as its inbound side refuses a zstd body
 * (src/http/json-body.ts).
 *
 * The guard is an undici interceptor on every Agent the fetcher sends through (pinned-agents.ts),
 * so every request (getJson, postJson, the fetch function for SDKs; every redirect hop) has it.
 * It aborts the request at the answer's headers: fetch then rejects with a RefusedContentCoding
 * as its cause, which the fetcher turns into its FetchError (guarded-fetcher.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { FetchError } from './fetcher.js';

/** What the registry asks for, for http and https alike (undici's fetch asks for br over https only). */
export const ACCEPT_ENCODING = 'gzip, deflate, br';

/** The codings an answer may come in (x-gzip is gzip's old name; identity is none). */
const TAKEN_CODINGS: ReadonlySet<string> = new Set(['identity', 'gzip', 'x-gzip', 'deflate', 'br']);

/** undici's fetch refuses more codings than this on one body (each one a decoder). */
const MAX_CODINGS = 5;

/** An answer whose Content-Encoding the guard refused; `why` says it in a clause that follows the header. */
export class RefusedContentCoding extends Error {
  override readonly name = 'RefusedContentCoding';
  readonly code = 'REGISTRY_REFUSED_CONTENT_CODING';

  constructor(
    /** The header as the answer sent it. */
    readonly contentEncoding: string,
    readonly why: string,
  ) {
    super(`refused an answer with Content-Encoding: ${contentEncoding}, ${why}`);
  }
}

/** Why an answer in this Content-Encoding is refused (a clause: "which ..."), or undefined when it is taken. */
export function refusedCodings(contentEncoding: string): string | undefined {
  // Empty entries are skipped, as undici reads them (a body then passes undecoded, harmlessly).
  const codings = contentEncoding.toLowerCase().split(',').map((coding) => coding.trim()).filter((coding) => coding !== '');
  const other = codings.find((coding) => !TAKEN_CODINGS.has(coding));
  if (other !== undefined) {
    const said = codings.length > 1 ? `and the registry does not decode ${other}` : 'which the registry does not decode';
    return other === 'zstd' ? `${said} (decoding zstd can take up to 128 MB of memory, whatever the body's size)` : said;
  }
  if (codings.length > MAX_CODINGS) return `compressed ${codings.length} times over, more than the ${MAX_CODINGS} codings the registry decodes`;
  return undefined;
}

/**
 * The fetcher's failure for a refused answer: a body came back that the registry will not read
 * (invalid-json, as a body that does not decompress as declared), saying what to send instead.
 */
export function codingRefusal(refusal: RefusedContentCoding, url: string): FetchError {
  const header = refusal.contentEncoding.trim();
  const shown = header.length > 100 ? `${header.slice(0, 100)}…` : header;
  return new FetchError(
    'invalid-json',
    url,
    `${url} answered with Content-Encoding: ${shown}, ${refusal.why}: send the body compressed with gzip, deflate or br, or uncompressed (the registry asks with Accept-Encoding: ${ACCEPT_ENCODING})`,
    { cause: refusal },
  );
}

/** Whether undici's fetch decodes this answer's body: not for HEAD or CONNECT, nor for a status without a body. */
function bodyDecoded(method: string, status: number): boolean {
  if (method === 'HEAD' || method === 'CONNECT') return false;
  return status >= 200 && status !== 204 && status !== 205 && status !== 304;
}

function headerValue(value: IncomingHttpHeaders[string]): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * Passes everything on to the request's handler (undici's fetch) but an answer in a refused
 * coding, whose request is aborted before the handler sees its headers: fetch never makes its
 * decoder, and no byte of the body is read (the connection is closed).
 */
class CodingGuard implements Dispatcher.DispatchHandler {
  constructor(
    private readonly method: string,
    private readonly handler: Dispatcher.DispatchHandler,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.handler.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestUpgrade']>>): void {
    this.handler.onRequestUpgrade?.(...args);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, statusMessage?: string): void {
    const contentEncoding = headerValue(headers['content-encoding']);
    const why = contentEncoding !== undefined && bodyDecoded(this.method, statusCode) ? refusedCodings(contentEncoding) : undefined;
    if (why !== undefined) {
      controller.abort(new RefusedContentCoding(contentEncoding!, why));
      return;
    }
    this.handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.handler.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.handler.onResponseError?.(controller, error);
  }
}

/** The interceptor for Dispatcher.compose: each request's handler wrapped in a CodingGuard. */
export const refuseUntakenCodings: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (options, handler) =>
  dispatch(options, new CodingGuard(String(options.method).toUpperCase(), handler));

/** The RefusedContentCoding that ended a request, found among an error's causes (fetch wraps it in a TypeError). */
export function refusedCodingIn(error: unknown): RefusedContentCoding | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof RefusedContentCoding) return e;
  }
  return undefined;
}
