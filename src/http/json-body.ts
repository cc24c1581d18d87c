/**
 * JSON request bodies for every door: our own parser and limit (an SDK's default parser would
 * answer an oversized body with an HTML 413 page), with nesting depth and UTF-8 checked on the
 * raw bytes before JSON.parse. Failures reach bodyErrorHandler (./errors.ts) with a `type` it
 * turns into an answer in the door's binding.
 */
import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';
import { isWellFormedUtf8, nestsDeeperThan } from '../lib/json-depth.js';
import { declaredCharset } from '../lib/charset.js';

/** An error body-parser passes on to the error handler with our `type`. */
class BodyRejected extends Error {
  readonly status = 400;
  constructor(
    readonly type: 'entity.too.deep' | 'entity.invalid.utf8',
    message: string,
  ) {
    super(message);
  }
}

/**
 * A body declared in a charset other than UTF-8 (`application/json; charset=latin1`,
 * `charset=utf-16`), refused with 415: JSON exchanged between systems MUST be UTF-8 (RFC 8259
 * section 8.1; A2A 14.1 and MCP say so too). body-parser would refuse latin1 with id null and decode
 * UTF-16 or UTF-32, whose bytes the depth check (which reads UTF-8 bytes) can be fooled by.
 */
export class CharsetRefused extends Error {
  readonly type = 'charset.unsupported';
  readonly status = 415;
  constructor(
    readonly charset: string,
    /** The JSON-RPC request's id, read from the body in the charset it declares (null when unreadable). */
    readonly id: string | number | null,
  ) {
    super(`unsupported charset "${charset}"`);
  }
}

/** The id of a JSON-RPC request sent in `charset`, for a refusal to carry; null when it cannot be read. */
function idInCharset(body: unknown, charset: string): string | number | null {
  if (!Buffer.isBuffer(body)) return null;
  // The declared charset first; then as ASCII, which most charsets agree with on JSON's syntax
  // (a label TextDecoder does not know, such as utf-32; UTF-8 bytes labelled utf-16).
  const decodings = [() => new TextDecoder(charset).decode(body), () => body.toString('latin1')];
  for (const decode of decodings) {
    try {
      const id = jsonRpcIdOf(JSON.parse(decode()));
      if (id !== null) return id;
    } catch {
      // Not readable this way: try the next.
    }
  }
  return null;
}

/** express.json `verify`: runs on the raw body before JSON.parse. */
function verifyBody(maxDepth: number) {
  return (_req: IncomingMessage, _res: unknown, buf: Buffer, encoding: string): void => {
    if (/^utf-?8$/i.test(encoding) && !isWellFormedUtf8(buf)) throw new BodyRejected('entity.invalid.utf8', 'not UTF-8');
    if (nestsDeeperThan(buf, maxDepth)) {
      throw new BodyRejected('entity.too.deep', `The request body nests JSON deeper than ${maxDepth} levels (REGISTRY_MAX_JSON_DEPTH).`);
    }
  };
}

export interface JsonBodyOptions {
  /** Largest body in bytes (REGISTRY_MAX_BODY_BYTES). */
  limit: number;
  /** Deepest nesting (REGISTRY_MAX_JSON_DEPTH). */
  maxDepth: number;
  /** Media types parsed as JSON; others are left unparsed for the door to refuse in its own words. */
  types?: string[];
  /**
   * Read every body as JSON, whatever its declared type (or none), for a door that refuses a
   * wrong type in an answer that needs the body: a JSON-RPC refusal carries the request's id.
   */
  anyType?: boolean;
}

/**
 * Content-Encodings body-parser decodes but the registry does not take. zstd: body-parser decodes
 * it where node's zlib has it (22.15 and later, experimental), so whether a zstd body was answered
 * or refused 415 depended on the runtime, while the 415 and the README name gzip, deflate and br;
 * and a zstd frame may ask its decoder for a window of up to 128 MB (gzip's is 32 KB), whatever the
 * body's size. Refused as body-parser refuses an encoding it lacks, before the body is read.
 */
const REFUSED_ENCODINGS: ReadonlySet<string> = new Set(['zstd']);

/** Whether the request's body is in a Content-Encoding the registry refuses (read as body-parser reads it: one coding, case aside). */
export function refusedEncoding(req: IncomingMessage): string | undefined {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  return REFUSED_ENCODINGS.has(encoding) ? encoding : undefined;
}

/** body-parser's refusal of a Content-Encoding it does not decode (type encoding.unsupported). */
class EncodingRefused extends Error {
  readonly type = 'encoding.unsupported';
  readonly status = 415;
  constructor(readonly encoding: string) {
    super(`unsupported content encoding "${encoding}"`);
  }
}

/** The error body-parser's own check would give, for a body refused before it is read whole. */
class BodyTooLarge extends Error {
  readonly type = 'entity.too.large';
  readonly status = 413;
  constructor(
    /** The declared length; undefined for a chunked body (refused once past the limit). */
    readonly length: number | undefined,
    readonly limit: number,
  ) {
    super('request entity too large');
  }
}

export function jsonBody(options: JsonBodyOptions): RequestHandler {
  const types = options.types ?? ['application/json', 'application/*+json'];
  const parse = express.json({ limit: options.limit, type: options.anyType ? () => true : types, verify: verifyBody(options.maxDepth) });
  const raw = express.raw({ limit: options.limit, type: () => true });
  /** parse, or the refusal of a body declared in another charset than UTF-8. */
  const read: RequestHandler = (req, res, next) => {
    const charset = declaredCharset(req.headers['content-type']);
    if (charset === undefined || charset === 'utf-8') return parse(req, res, next);
    if (charset === 'utf8') {
      // A common misspelling of UTF-8 (body-parser knows only "utf-8"): the same encoding, read as such.
      req.headers['content-type'] = req.headers['content-type']!.replace(/charset\s*=\s*"?utf8"?/i, 'charset=utf-8');
      return parse(req, res, next);
    }
    if (!options.anyType) return next(new CharsetRefused(charset, null));
    // JSON-RPC: read the body anyway (within the same limits), so the refusal carries its id.
    raw(req, res, (error?: unknown) => next(error ?? new CharsetRefused(charset, idInCharset(req.body, charset))));
  };
  return (req, res, next) => {
    // req.is answers null for a request without a body, false for a body of another type.
    const parsed = options.anyType ? req.is('*/*') !== null : Boolean(req.is(types));
    if (!parsed) return parse(req, res, next);
    const encoding = refusedEncoding(req);
    if (encoding) return next(new EncodingRefused(encoding));
    // A body over the limit is refused at once. body-parser refuses it too, but only once the
    // client has sent all of it (it reads the rest off first), so a client declaring gigabytes,
    // or sending chunks without end, kept the connection draining until the request timeout.
    // The connection closes after the answer: the rest of the body is never read.
    const refuse = (length: number | undefined): void => {
      res.setHeader('Connection', 'close');
      next(new BodyTooLarge(length, options.limit));
    };
    const declared = Number(req.headers['content-length']);
    if (declared > options.limit) return refuse(declared);
    if (req.headers['content-length'] !== undefined) return read(req, res, next);
    // Chunked: counted as it arrives, beside body-parser's own reading (which then drains).
    let received = 0;
    let refused = false;
    const count = (chunk: Buffer): void => {
      received += chunk.length;
      if (received <= options.limit) return;
      refused = true;
      req.off('data', count);
      refuse(undefined);
    };
    req.on('data', count);
    read(req, res, (error?: unknown) => {
      req.off('data', count);
      // After a refusal, body-parser's own (once the connection closed) is not answered again.
      if (!refused) next(error);
    });
  };
}

/** The id of a parsed JSON-RPC request body, or null when it has no usable one (a refusal then answers with id null). */
export function jsonRpcIdOf(body: unknown): string | number | null {
  return typeof body === 'object' && body !== null && 'id' in body && (typeof body.id === 'string' || typeof body.id === 'number') ? body.id : null;
}
