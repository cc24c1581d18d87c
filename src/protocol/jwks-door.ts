/**
 * GET /.well-known/jwks.json: the public keys of the registry's own signing key
 * (REGISTRY_SIGNING_KEY), which signs its agent card; the card's signature names this URL as its
 * `jku`. Absent (404) when the registry signs nothing. Cacheable like the card: a strong ETag over
 * the bytes served, max-age, 304 on a matching If-None-Match.
 */
import type { Request, Response } from 'express';
import type { Door } from '../composition/door.js';
import { etagOf, sendCacheable } from '../http/conditional.js';
import { openToAllOrigins } from '../http/open-reads.js';

export const JWKS_PATH = '/.well-known/jwks.json';

export const jwksDoor: Door = {
  name: 'jwks',
  // The keys that check the registry's signed card: every origin may read them, as the card
  // itself, or a browser-based agent could read the card and not check its signature.
  openReads: (config) => (config.trust.signingKeyFile === undefined ? [] : [JWKS_PATH]),
  mount(app, { core }) {
    const key = core.signingKey;
    if (!key) return;
    const body = Buffer.from(JSON.stringify({ keys: [key.publicJwk] }));
    const answer = { body, etag: etagOf(body), contentType: 'application/jwk-set+json', cacheControl: `public, max-age=${core.config.cardMaxAgeSeconds}` };
    const serve = (req: Request, res: Response): void => sendCacheable(req, res, answer);
    app.get(JWKS_PATH, openToAllOrigins, serve);
    app.head(JWKS_PATH, openToAllOrigins, serve);
  },
};
