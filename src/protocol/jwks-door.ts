/**
 * GET /.well-known/jwks.json: the public keys of the registry's own signing key
 * (REGISTRY_SIGNING_KEY), which signs its agent card, and of the keys it signed with before
 * (REGISTRY_RETIRED_SIGNING_KEYS), each until its "exp"; the card's signature names this URL as
 * its `jku`. Absent (404) when the registry signs nothing. Cacheable like the card: a strong ETag
 * over the bytes served, max-age (never past the next retired key's "exp"), 304 on a matching
 * If-None-Match.
 */
import type { Request, Response } from 'express';
import type { Door } from '../composition/door.js';
import { etagOf, sendCacheable } from '../http/conditional.js';
import { openToAllOrigins } from '../http/open-reads.js';
import { publishedKeys } from '../trust/registry-signing-key.js';

export const JWKS_PATH = '/.well-known/jwks.json';

export const jwksDoor: Door = {
  name: 'jwks',
  // The keys that check the registry's signed card: every origin may read them, as the card
  // itself, or a browser-based agent could read the card and not check its signature.
  openReads: (config) => (config.trust.signingKeyFile === undefined ? [] : [JWKS_PATH]),
  mount(app, { core }) {
    const key = core.signingKey;
    if (!key) return;
    const maxAge = core.config.cardMaxAgeSeconds;
    // Made again only when a retired key's "exp" has passed.
    let made: { body: Buffer; etag: string; changesAt?: number } | undefined;
    const serve = (req: Request, res: Response): void => {
      const now = Date.now();
      if (!made || (made.changesAt !== undefined && now >= made.changesAt)) {
        const { keys, changesAt } = publishedKeys(key, now);
        const body = Buffer.from(JSON.stringify({ keys }));
        made = { body, etag: etagOf(body), changesAt };
      }
      // A cache keeps a retired key no longer than it is published.
      const age = made.changesAt === undefined ? maxAge : Math.min(maxAge, Math.ceil((made.changesAt - now) / 1000));
      sendCacheable(req, res, { body: made.body, etag: made.etag, contentType: 'application/jwk-set+json', cacheControl: `public, max-age=${age}` });
    };
    app.get(JWKS_PATH, openToAllOrigins, serve);
    app.head(JWKS_PATH, openToAllOrigins, serve);
  },
};
