/**
 * GET /.well-known/agent-card.json: always the v1.0 card (never a v0.3 translation), cacheable:
 * a strong ETag over the exact bytes served, Last-Modified from when this card was built,
 * Cache-Control max-age, and 304 on a matching If-None-Match (or a fresh If-Modified-Since).
 */
import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';

export function cardEndpoint(cardJson: Record<string, unknown>, maxAgeSeconds: number, builtAt: Date = new Date()): RequestHandler {
  const body = Buffer.from(JSON.stringify(cardJson));
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  // HTTP dates have one-second precision: round down so If-Modified-Since comparisons hold.
  const lastModified = new Date(Math.floor(builtAt.getTime() / 1000) * 1000);
  const lastModifiedHeader = lastModified.toUTCString();

  return (req, res) => {
    res.setHeader('ETag', etag);
    res.setHeader('Last-Modified', lastModifiedHeader);
    res.setHeader('Cache-Control', `public, max-age=${maxAgeSeconds}`);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    const inm = req.header('if-none-match');
    const ims = req.header('if-modified-since');
    const notModified = inm
      ? inm.split(',').some((tag) => tag.trim() === etag || tag.trim() === `W/${etag}` || tag.trim() === '*')
      : ims !== undefined && !Number.isNaN(Date.parse(ims)) && Date.parse(ims) >= lastModified.getTime();
    if (notModified) {
      res.status(304).end();
      return;
    }
    res.status(200).end(req.method === 'HEAD' ? undefined : body);
  };
}
