/**
 * Cacheable GET answers for documents that change rarely (the registry's card, catalogs,
 * registered documents): a strong ETag over the exact bytes served, Last-Modified, the door's
 * Cache-Control, and 304 Not Modified on a matching If-None-Match (or, without one, a fresh
 * If-Modified-Since), as RFC 9110 section 13 orders them.
 */
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';

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

/** True when the request's validators say the client already has this representation. */
export function notModified(req: Request, etag: string, lastModified?: Date): boolean {
  const inm = req.header('if-none-match');
  if (inm !== undefined) return inm.split(',').some((tag) => tag.trim() === etag || tag.trim() === `W/${etag}` || tag.trim() === '*');
  const ims = req.header('if-modified-since');
  return lastModified !== undefined && ims !== undefined && !Number.isNaN(Date.parse(ims)) && Date.parse(ims) >= httpDate(lastModified).getTime();
}

/** Answers 200 with the body (no body for HEAD), or 304 with the validators only. */
export function sendCacheable(req: Request, res: Response, answer: CacheableBody): void {
  const etag = answer.etag ?? etagOf(answer.body);
  res.setHeader('ETag', etag);
  if (answer.lastModified) res.setHeader('Last-Modified', httpDate(answer.lastModified).toUTCString());
  res.setHeader('Cache-Control', answer.cacheControl);
  if (notModified(req, etag, answer.lastModified)) {
    res.status(304).end();
    return;
  }
  res.setHeader('Content-Type', answer.contentType);
  // Set here for HEAD too, which sends no body for node to count: a HEAD said nothing of the size
  // a GET would bring (RFC 9110 9.3.2: the same header fields as GET).
  res.setHeader('Content-Length', answer.body.length);
  res.status(200).end(req.method === 'HEAD' ? undefined : answer.body);
}
