/**
 * The content codings the registry's outbound requests take, and the guard that keeps undici's
 * fetch from decoding an answer in zstd (or in more codings than it decodes).
 *
 * undici's fetch undoes the Content-Encoding an answer declares, from its last coding back, while
 * each is gzip (x-gzip), deflate, br or, where node:zlib has it (Node 22.15 and later, 24), zstd,
 * whatever the request asked for; at the first coding it does not know (identity, compress, a
 * misconfigured server's none or utf-8) it decodes nothing and passes the body as it came, and
 * more than 5 codings (empty entries counted) it refuses by aborting the request. A zstd frame's
 * header may ask its decoder for a window of up to 128 MB (zlib's windowLogMax of 27), whatever
 * the body's size, reserved when the header is read: any origin the registry fetches (a card's
 * URL, which anyone may register, an MCP server, a webhook receiver, a JWKS host) could have each
 * fetch reserve that much, while the body itself is capped at a few KB. gzip and deflate decode
 * in a 32 KB window, brotli in at most 16 MB (as the registry's own doors take them). So the
 * registry asks for those codings (ACCEPT_ENCODING), and an answer undici would decode as zstd,
 * on any runtime, is refused, as its inbound side refuses a zstd body (src/http/json-body.ts).
 *
 * The guard is an undici interceptor on every Agent the fetcher sends through (pinned-agents.ts),
 * so every request (getJson, postJson, the fetch function for SDKs; every redirect hop) has it.
 * It does not end the answer: it hides a refused Content-Encoding from fetch (the header passed
 * on as REFUSED_CODING_HEADER instead), so fetch makes no decoder and the answer is what it was
 * in every other way. Its status stands (a 404 is http-status, a redirect is followed, a webhook's
 * 2xx a delivery, whose body is never read); only a reader of its body as a document (getJson, a
 * body read through the fetch function) fails, with the refusal, before a byte of it is read
 * (guarded-fetcher.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { DECODED_CODINGS, MAX_CODINGS } from '../lib/content-codings.js';
import { FetchError } from './fetcher.js';
import { clipped } from '../lib/clipped.js';

/** What the registry asks for, for http and https alike (undici's fetch asks for br over https only). */
export const ACCEPT_ENCODING = 'gzip, deflate, br';

/**
 * Where the guard puts a Content-Encoding it hid from fetch, for the fetcher to read: never sent
 * on to a caller, and one an answer brings itself is dropped.
 */
export const REFUSED_CODING_HEADER = 'x-a2a-registry-refused-content-encoding';


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

/**
 * Why an answer in this Content-Encoding is refused (a clause: "which ..."), or undefined when
 * undici's fetch may have it: read as undici reads it, so a coding it does not decode (none,
 * utf-8, compress) passes, undecoded, as it always has, and so does zstd behind one (zstd, none).
 */
export function refusedCodings(contentEncoding: string): string | undefined {
  const codings = contentEncoding.toLowerCase().split(',').map((coding) => coding.trim());
  if (codings.length > MAX_CODINGS) return `which names ${codings.length} codings, more than the ${MAX_CODINGS} the registry decodes`;
  for (let i = codings.length - 1; i >= 0; i--) {
    const coding = codings[i]!;
    if (DECODED_CODINGS.has(coding)) continue;
    if (coding !== 'zstd') return undefined;
    const said = codings.length > 1 ? 'and the registry does not decode zstd' : 'which the registry does not decode';
    return `${said} (decoding zstd can take up to 128 MB of memory, whatever the body's size)`;
  }
  return undefined;
}

/**
 * The fetcher's failure for the body of a refused answer, when it is to be read: a body came back
 * that the registry will not read (invalid-json, as a body that does not decompress as declared),
 * saying what to send instead.
 */
export function codingRefusal(refusal: RefusedContentCoding, url: string): FetchError {
  const header = refusal.contentEncoding.trim();
  const shown = clipped(header, 100);
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
 * Passes everything on to the request's handler (undici's fetch), but the headers of an answer in
 * a refused coding without their Content-Encoding, which goes as REFUSED_CODING_HEADER: fetch
 * makes no decoder for its body, and the fetcher reads none of it.
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
    // The marker is the guard's alone: a server's own header of that name would pass for a refusal.
    const { [REFUSED_CODING_HEADER]: _sent, ...passed } = headers;
    const contentEncoding = headerValue(headers['content-encoding']);
    if (contentEncoding !== undefined && bodyDecoded(this.method, statusCode) && refusedCodings(contentEncoding) !== undefined) {
      delete passed['content-encoding'];
      passed[REFUSED_CODING_HEADER] = contentEncoding;
    }
    this.handler.onResponseStart?.(controller, statusCode, passed, statusMessage);
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
export const hideRefusedCodings: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (options, handler) =>
  dispatch(options, new CodingGuard(String(options.method).toUpperCase(), handler));

/** The refusal of an answer whose Content-Encoding the guard hid from fetch, or undefined when it hid none. */
export function refusedCodingOf(headers: { get(name: string): string | null }): RefusedContentCoding | undefined {
  const contentEncoding = headers.get(REFUSED_CODING_HEADER);
  if (contentEncoding === null) return undefined;
  return new RefusedContentCoding(contentEncoding, refusedCodings(contentEncoding) ?? 'which the registry does not decode');
}
