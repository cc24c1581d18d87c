/**
 * Who may read GET /metrics. The metrics describe the registry's traffic (operations, refusals,
 * entry counts, latency): on a registry whose reads are public anyone may read them unless the
 * operator sets REGISTRY_METRICS_TOKEN; on a closed one (REGISTRY_PUBLIC_READ=false) they are
 * no more public than the entries, and were: an anonymous scrape answered 200 where every door
 * answered 401. There, the administrator's token reads them (or the metrics token, when set,
 * which is the scraper's own credential: then it alone does, as on an open registry).
 */
import type { RequestHandler } from 'express';
import { AUTH_REALM, QUERY_TOKEN_REFUSAL } from '../auth/access.js';
import { TokenAuthenticator } from '../auth/tokens.js';
import { authorizationHeaders, hasQueryToken } from './authentication.js';

export interface MetricsAccess {
  /** REGISTRY_METRICS_TOKEN: when set, the one bearer token that reads the metrics. */
  metricsToken?: string;
  publicRead: boolean;
  authenticator: TokenAuthenticator;
}

/** The principal the metrics token names: it is checked by an authenticator of its own, never the registry's. */
const METRICS_SCRAPER = 'metrics scraper';

/**
 * Refuses a token in the URL, as every door does (auth/access.ts QUERY_TOKEN_REFUSAL): a scraper
 * configured with ?access_token= was served, the token left in every log and proxy on the way,
 * and on a closed registry told only that it needs the header.
 */
const urlTokenGuard: RequestHandler = (req, res, next) => {
  if (!hasQueryToken(req.url)) return next();
  res.status(401).setHeader('WWW-Authenticate', QUERY_TOKEN_REFUSAL.challenge).json({ error: QUERY_TOKEN_REFUSAL.message });
};

/** Refuses a scrape with a token in its URL, or without the token the registry's settings ask for. */
export function metricsGuard(access: MetricsAccess): RequestHandler {
  const { metricsToken, publicRead, authenticator } = access;
  if (metricsToken === undefined && publicRead) return urlTokenGuard;
  // The header is read, and the token compared, by the one TokenAuthenticator every door uses
  // (same Bearer syntax, constant-time digests): the metrics token alone when set, else the admin's.
  const scraper = metricsToken === undefined ? undefined : new TokenAuthenticator(new Map([[metricsToken, METRICS_SCRAPER]]));
  const needs = scraper
    ? '"Authorization: Bearer <REGISTRY_METRICS_TOKEN>"'
    : '"Authorization: Bearer <the admin token>" on this registry (REGISTRY_PUBLIC_READ=false); give a scraper a token of its own with REGISTRY_METRICS_TOKEN';
  const admits = (authorization: string): boolean => (scraper ? scraper.callerFor(authorization).principal !== undefined : authenticator.callerFor(authorization).isAdmin);
  return (req, res, next) =>
    urlTokenGuard(req, res, () => {
      // Exactly one Authorization header, as on every door: which of two counted would depend on their order.
      const sent = authorizationHeaders(req) ?? [];
      if (sent.length === 1 && admits(sent[0]!)) return next();
      res.status(401).setHeader('WWW-Authenticate', `Bearer realm="${AUTH_REALM}"`).json({ error: `GET /metrics needs ${needs}.` });
    });
}
