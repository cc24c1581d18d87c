/** What the liveness and readiness probes share, in the running registry's app and in the one serving while it starts. */
import type { RequestHandler } from 'express';

export const PROBE_PATHS = ['/healthz', '/readyz'];

/**
 * Probes answer the moment's state: a cache between a load balancer and the registry (Varnish
 * keeps an answer without Cache-Control for 120 s by default) would go on saying "ready" for a
 * registry that is stopping, or "not ready" for one that has recovered.
 */
export const probesNotStored: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};
