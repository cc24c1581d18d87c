/**
 * Who may read GET /metrics. The metrics describe the registry's traffic (operations, refusals,
 * entry counts, latency): on a registry whose reads are public anyone may read them unless the
 * operator sets REGISTRY_METRICS_TOKEN; on a closed one (REGISTRY_PUBLIC_READ=false) they are
 * no more public than the entries, and were: an anonymous scrape answered 200 where every door
 * answered 401. There, the administrator's token reads them (or the metrics token, when set,
 * which is the scraper's own credential: then it alone does, as on an open registry).
 */
import { hash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { AUTH_REALM } from '../auth/access.js';
import type { TokenAuthenticator } from '../auth/tokens.js';
import { authorizationHeaders } from './authentication.js';

export interface MetricsAccess {
  /** REGISTRY_METRICS_TOKEN: when set, the one bearer token that reads the metrics. */
  metricsToken?: string;
  publicRead: boolean;
  authenticator: TokenAuthenticator;
}

const sha256 = (s: string): Buffer => hash('sha256', s, 'buffer');

/** Refuses a scrape without the token the registry's settings ask for; undefined when the metrics are open. */
export function metricsGuard(access: MetricsAccess): RequestHandler | undefined {
  const { metricsToken, publicRead, authenticator } = access;
  if (metricsToken === undefined && publicRead) return undefined;
  const expected = metricsToken === undefined ? undefined : sha256(metricsToken);
  const needs = expected
    ? '"Authorization: Bearer <REGISTRY_METRICS_TOKEN>"'
    : '"Authorization: Bearer <the admin token>" on this registry (REGISTRY_PUBLIC_READ=false); give a scraper a token of its own with REGISTRY_METRICS_TOKEN';
  const admits = (token: string): boolean => (expected ? timingSafeEqual(sha256(token), expected) : authenticator.callerFor(`Bearer ${token}`).isAdmin);
  return (req, res, next) => {
    // Exactly one Authorization header, as on every door: which of two counted would depend on their order.
    const sent = authorizationHeaders(req) ?? [];
    const token = sent.length === 1 ? /^Bearer\s+(\S+)\s*$/i.exec(sent[0]!)?.[1] : undefined;
    if (token !== undefined && admits(token)) return next();
    res.status(401).setHeader('WWW-Authenticate', `Bearer realm="${AUTH_REALM}"`).json({ error: `GET /metrics needs ${needs}.` });
  };
}
