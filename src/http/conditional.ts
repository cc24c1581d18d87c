/**
 * Cacheable GET answers for documents that change rarely (the registry's card, catalogs,
 * registered documents): a strong ETag over the exact bytes served, Last-Modified, the door's
 * Cache-Control, 412 on a failed If-Match (or, without one, If-Unmodified-Since), and 304 Not
 * Modified on a matching If-None-Match (or, without one, a fresh If-Modified-Since), as RFC 9110
 * section 13.2.2 orders them.
 */
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { sendFailure } from './errors.js';

/** A strong validator for these exact bytes. */
export const etagOf = (body: Buffer | string): string => `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

/** HTTP dates have one-second precision: round down so If-Modified-Since comparisons hold. */
export const httpDate = (d: Date): Date => new Date(Math.floor(d.getTime() / 1000) * 1000);

export interface CacheableBody {
  body: Buffer;
  contentType: string;
  cacheControl: string;
  /** Defaults to etagOf(body). */
  etag?: string;
  lastModified?: Date;
}

const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
/** The three forms of an HTTP-date (RFC 9110 5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms. */
const HTTP_DATE = new RegExp(
  `^(?:${DAY}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT|(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, \\d{2}-${MONTH}-\\d{2} ${TIME} GMT|(${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4}))$`,
);

/**
 * The time an HTTP-date names, or undefined for anything else: If-Modified-Since is ignored
 * unless it is one (RFC 9110 13.1.3: MUST). Date.parse takes far more ("2026", "1", "tomorrow
 * 2026-12-08"), and a 304 answered what no client can have meant as a date. An asctime date has no
 * zone and is GMT (Date.parse would read it in the server's zone).
 */
export function parseHttpDate(value: string): number | undefined {
  const form = HTTP_DATE.exec(value);
  if (!form) return undefined;
  const time = Date.parse(form[1] === undefined ? value : `${value} GMT`);
  return Number.isNaN(time) ? undefined : time;
}

/** True when the request's validators say the client already has this representation. */
export function notModified(req: Request, etag: string, lastModified?: Date): boolean {
  const inm = req.header('if-none-match');
  if (inm !== undefined) return inm.split(',').some((tag) => tag.trim() === etag || tag.trim() === `W/${etag}` || tag.trim() === '*');
  const ims = req.header('if-modified-since');
  const since = ims === undefined ? undefined : parseHttpDate(ims.trim());
  return lastModified !== undefined && since !== undefined && since >= httpDate(lastModified).getTime();
}

/**
 * True when If-Match, or without it If-Unmodified-Since, says the representation is no longer
 * the one the client holds (RFC 9110 13.2.2, steps 1 and 2): If-Match compares strongly (a weak
 * tag never matches), `*` matches any current representation.
 */
function preconditionFailed(req: Request, etag: string, lastModified?: Date): boolean {
  const im = req.header('if-match');
  if (im !== undefined) return !im.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*');
  const ius = req.header('if-unmodified-since');
  const since = ius === undefined ? undefined : parseHttpDate(ius.trim());
  return lastModified !== undefined && since !== undefined && httpDate(lastModified).getTime() > since;
}

/**
 * Answers 412 when If-Match or If-Unmodified-Since fails (see preconditionFailed), in the door's
 * binding, naming the current ETag; true when it did.
 */
export function refusedPrecondition(req: Request, res: Response, etag: string, lastModified?: Date): boolean {
  if (!preconditionFailed(req, etag, lastModified)) return false;
  // The refusal is JSON, whatever the representation's own type would have been, and not to be
  // stored: a cache keeping it under the URL (its key has no If-Match) would refuse everyone.
  res.removeHeader('Content-Type');
  res.setHeader('Cache-Control', 'no-store');
  sendFailure(req, res, {
    httpStatus: 412,
    jsonRpcCode: -32600, // JSON-RPC's Invalid Request (no JSON-RPC route is cacheable: never sent)
    reason: 'PRECONDITION_FAILED',
    message: `The document at ${req.baseUrl}${req.path.slice(0, 200)} is no longer the one ${req.header('if-match') === undefined ? 'If-Unmodified-Since' : 'If-Match'} names: it is now ETag ${etag}. GET it again without the condition.`,
  });
  return true;
}

/**
 * Answers 200 with the body (no body for HEAD), 304 with the validators only, or 412 when
 * If-Match or If-Unmodified-Since fails, which an origin server must not answer with the
 * representation (RFC 9110 13.1.1, 13.1.4): a client resuming or checking a copy by its ETag was
 * sent a body other than the one it named.
 */
export function sendCacheable(req: Request, res: Response, answer: CacheableBody): void {
  const etag = answer.etag ?? etagOf(answer.body);
  res.setHeader('ETag', etag);
  // Never later than the answer's own Date (RFC 9110 8.8.2.1: MUST): a revision dated ahead of
  // this clock (written while it stood behind another's, or before it stepped back) is said to be
  // modified now.
  const lastModified = answer.lastModified && new Date(Math.min(answer.lastModified.getTime(), Date.now()));
  if (lastModified) res.setHeader('Last-Modified', httpDate(lastModified).toUTCString());
  res.setHeader('Cache-Control', answer.cacheControl);
  if (refusedPrecondition(req, res, etag, lastModified)) return;
  if (notModified(req, etag, lastModified)) {
    res.status(304).end();
    return;
  }
  res.setHeader('Content-Type', answer.contentType);
  // Set here for HEAD too, which sends no body for node to count: a HEAD said nothing of the size
  // a GET would bring (RFC 9110 9.3.2: the same header fields as GET).
  res.setHeader('Content-Length', answer.body.length);
  res.status(200).end(req.method === 'HEAD' ? undefined : answer.body);
}
