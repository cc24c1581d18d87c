/**
 * GET /.well-known/agent-card.json, negotiated on the requested protocol version:
 * - `A2A-Version: 1.x` (header, or the query parameter): the v1.0 card exactly as the spec
 *   models it (what @a2a-js/sdk 1.x clients ask for: they send the header);
 * - anything else (another major version too), above all no version at all: the
 *   legacy-compatible superset card. A request
 *   without a version is a v0.3 request (spec 3.6.2), and v0.3 clients never send one; v1.0
 *   clients that send none (python a2a-sdk, conformance kits) still find every v1.0 field in it.
 *   Always serving the superset would hand v1.0 clients that ask precisely a card with fields
 *   their schema does not have; always serving v1.0 leaves every v0.3 client unable to read it.
 * Each variant is cacheable on its own: a strong ETag over its exact bytes, Last-Modified from
 * when the card was built, Cache-Control max-age, 304 on a matching If-None-Match (or a fresh
 * If-Modified-Since), and Vary: A2A-Version so shared caches keep the variants apart.
 */
import type { RequestHandler } from 'express';
import { etagOf, sendCacheable } from '../http/conditional.js';
import { requestedVersion, VERSION_PARAMETER } from './versions.js';
import { majorMinor } from './version-numbers.js';

export interface CardVariants {
  /** The v1.0 card. */
  v1: Record<string, unknown>;
  /** The superset card for v0.3 (and version-less) requests. */
  legacyCompatible: Record<string, unknown>;
}

interface Representation {
  body: Buffer;
  etag: string;
}

function representation(card: Record<string, unknown>): Representation {
  const body = Buffer.from(JSON.stringify(card));
  return { body, etag: etagOf(body) };
}

/**
 * True when the requested version (header or query) is a 1.x: a client of that major version
 * reads the v1.0 card. Any other (a 2.0, whose card no one knows yet; 0.2; a typo) gets the
 * superset, as a request without a version does: it is the card every generation can read.
 */
function wantsV1(version: string | undefined): boolean {
  const mm = version === undefined ? undefined : majorMinor(version);
  return mm !== undefined && mm.split('.')[0] === '1';
}

export function cardEndpoint(cards: CardVariants, maxAgeSeconds: number, builtAt: Date = new Date()): RequestHandler {
  const v1 = representation(cards.v1);
  const legacyCompatible = representation(cards.legacyCompatible);
  return (req, res) => {
    res.vary(VERSION_PARAMETER);
    sendCacheable(req, res, {
      ...(wantsV1(requestedVersion(req)) ? v1 : legacyCompatible),
      lastModified: builtAt,
      cacheControl: `public, max-age=${maxAgeSeconds}`,
      contentType: 'application/json; charset=utf-8',
    });
  };
}
