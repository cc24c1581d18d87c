/**
 * An answer's body as it was before its content codings (Content-Encoding: gzip, deflate, br),
 * for the CLI's fetch (./http-fetch.ts), decoded as fetch decodes them.
 *
 * The CLI asks for none: it sends no Accept-Encoding. Its answers are small JSON documents the
 * registry never compresses, so asking would only have a proxy in front of it compress them, and
 * load zlib in every command to undo it; and a proxy compressing an event stream may hold its
 * events back until enough of them fill its compressor (a `watch` told of a change late). But a
 * request without Accept-Encoding accepts any coding (RFC 9110, section 12.5.3), and some proxies
 * compress whatever the request says: such an answer is decoded here, zlib loaded only then.
 */
import { Transform, pipeline, type Readable } from 'node:stream';
import { DECODED_CODINGS, MAX_CODINGS } from '../lib/content-codings.js';
import { UnusableAnswer } from './unusable-answer.js';

type Zlib = typeof import('node:zlib');

/** Why a body in these codings cannot be decoded ("compressed as zstd ..."), or undefined when it can. */
export function undecodable(codings: readonly string[]): string | undefined {
  const unknown = codings.find((coding) => !DECODED_CODINGS.has(coding));
  if (unknown !== undefined) return `compressed as ${unknown} (Content-Encoding), which the CLI cannot decode (it decodes gzip, deflate and br)`;
  if (codings.length > MAX_CODINGS) return `compressed ${codings.length} times over (Content-Encoding: ${codings.join(', ')}), more than the ${MAX_CODINGS} the CLI decodes`;
  return undefined;
}

/**
 * `body` decoded, the last coding applied undone first. An error of `body` (the connection cut)
 * is the decoded body's error as it came; bytes that do not decode error it with an
 * UnusableAnswer saying so.
 */
export async function decodedBody(body: Readable, codings: readonly string[]): Promise<Readable> {
  // Until the decoders are piped, nothing else listens to the body: an error meanwhile (the
  // connection cut, the fetch aborted) would end the process. pipeline() passes it on below.
  body.on('error', () => undefined);
  const zlib = await import('node:zlib');
  const decoders = [...codings].reverse().map((coding) => decoder(zlib, coding));
  pipeline([body, ...decoders], () => undefined); // its errors end up on the last decoder, which its reader sees
  return decoders.at(-1)!;
}

/**
 * A decoder of one coding. Its zlib stream is made at the first bytes: "deflate" is the zlib
 * format (RFC 9110), which some servers send without the zlib header (raw deflate), told apart by
 * the first byte as fetch tells them. zlib's own error would reach the reader as a TypeError
 * without a message (Readable.toWeb wraps it so); it is named instead.
 */
function decoder(zlib: Zlib, coding: string): Transform {
  // As fetch: output as each piece of input arrives, so an event stream's events are read as they
  // come; a body that ends without its coding's last bytes is taken as far as it goes.
  const options = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  const make = (first: Buffer): Transform => {
    if (coding === 'br') return zlib.createBrotliDecompress({ flush: zlib.constants.BROTLI_OPERATION_FLUSH, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
    if (coding === 'deflate') return (first[0]! & 0x0f) === 0x08 ? zlib.createInflate(options) : zlib.createInflateRaw(options);
    return zlib.createGunzip(options);
  };
  let inner: Transform | undefined;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (!inner) {
        if (chunk.length === 0) return done();
        inner = make(chunk);
        inner.on('data', (data: Buffer) => this.push(data));
        inner.on('error', (err) => this.destroy(new UnusableAnswer(`${coding}-compressed (Content-Encoding) with bytes that do not decode (${err.message})`)));
      }
      // Its failure is told through 'error' above.
      inner.write(chunk, () => done());
    },
    flush(done) {
      if (!inner) return done();
      inner.once('end', () => done());
      inner.end();
    },
  });
}
