/**
 * The HTTP application every door mounts onto: security headers, health and readiness, and
 * metrics (rate-limited like the doors) first; the doors' routes in between (see composition/doors.ts); then the answers for
 * unknown routes and for bugs, in the caller's binding, never as HTML.
 */
import express, { type Express, type RequestHandler } from 'express';
import type { TrustProxy } from '../config/config.js';
import type { Logger } from '../observability/logger.js';
import type { RegistryMetrics } from '../observability/metrics.js';
import { failureFormatOfPath, internalErrorHandler, notFoundHandler, sendFailure, type PathFailureFormat } from './errors.js';
import { handlerChain } from './handler-chain.js';
import { metricsGuard, type MetricsAccess } from './metrics-access.js';
import { PROBE_PATHS, probesNotStored } from './probes.js';
import { requestScope } from './request-log.js';
import { securityHeaders, type SecurityOptions } from './security.js';

export interface Readiness {
  /** Why the registry is not ready, or undefined when it is. */
  check(): Promise<string | undefined>;
  /** What is wrong though the registry serves (no trusted key to verify cards with), said beside either answer. */
  warnings(): string[];
}

export interface HttpAppDeps {
  security: SecurityOptions;
  /** Express "trust proxy": what req.ip (rate limits, logs) is taken from. */
  trustProxy: TrustProxy;
  readiness: Readiness;
  /** Where a readiness check that failed is told with its cause (/readyz, open to anyone, says only that it failed). */
  log: Logger;
  metrics: RegistryMetrics;
  /** Who may GET /metrics. */
  metricsAccess: MetricsAccess;
  /** The per-address request budget (rate-limit.ts), which /metrics is counted against. */
  floodGuard: RequestHandler;
  /** The doors' failure formats by path, for the refusals made here before any door's route. */
  failureFormats: readonly PathFailureFormat[];
}

/**
 * A request with more than one Host field line is refused 400, as HTTP/1.1 requires (RFC 9112
 * 3.2: MUST). Node keeps the first and drops the others, while a proxy in front may have routed
 * it by another: the MCP endpoint's Host check (DNS rebinding) and every URL made from the Host
 * would then read a host the request was not sent to. (Node itself refuses one without Host.)
 */
const oneHostField =
  (formats: readonly PathFailureFormat[]): RequestHandler =>
  (req, res, next) => {
    let hosts = 0;
    for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.length === 4 && req.rawHeaders[i]!.toLowerCase() === 'host') hosts++;
    if (hosts <= 1) return next();
    res.setHeader('Connection', 'close');
    // In the binding of the door the path belongs to (MCP: a JSON-RPC error; ARD: its error object),
    // as the door's own refusals are: this runs before any door's route sets its format.
    const format = failureFormatOfPath(formats, req.path);
    if (format) res.locals.failureFormat = format;
    sendFailure(req, res, {
      httpStatus: 400,
      jsonRpcCode: -32600, // JSON-RPC's Invalid Request
      reason: 'BAD_REQUEST',
      message: `The request has ${hosts} Host header fields; HTTP/1.1 takes exactly one (RFC 9112 3.2): send one, naming the host the request is for.`,
    });
  };

export function createHttpApp(deps: HttpAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', typeof deps.trustProxy === 'object' ? [...deps.trustProxy] : deps.trustProxy);
  app.use(securityHeaders(deps.security));
  app.use(oneHostField(deps.failureFormats));

  app.get(PROBE_PATHS, probesNotStored);
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    // /readyz is open to anyone: the kind of failure and what to do. The error's own words (a file
    // system's or a database engine's, which may name the server's paths) go to the log alone.
    const reason = await deps.readiness.check().catch((err: unknown) => {
      deps.log.error({ err }, 'the readiness check failed');
      return 'the readiness check failed (the cause is in the log); if it goes on, restart the registry';
    });
    const warnings = deps.readiness.warnings();
    const said = warnings.length > 0 ? { warnings } : {};
    if (reason) res.status(503).json({ status: 'not ready', reason, ...said });
    else res.json({ status: 'ready', ...said });
  });
  // Counted against the address's budget like any door's request, before the token is checked: a
  // closed registry's /metrics takes the admin token, which could be guessed here without limit.
  // A scraper is counted as any other caller (with the admin token, exempt as everywhere).
  app.get('/metrics', deps.floodGuard, metricsGuard(deps.metricsAccess), deps.metrics.handler());
  return app;
}

/**
 * Mounted after every door: unknown routes and unhandled errors. A request no door took (a
 * scanner's /.env, /wp-login.php, a mistyped path) is counted against its address's request
 * budget and logged with a request id like any other; it was neither, so path scans were free
 * and invisible. One a door took on and passed along (it has its scope) was counted there.
 */
export function finishHttpApp(app: Express, log: Logger, floodGuard: RequestHandler): void {
  const countedAndScoped = handlerChain([floodGuard, requestScope(log)]);
  app.use((req, res, next) => {
    if ((res.locals as { scope?: unknown }).scope) return next();
    countedAndScoped(req, res, next);
  });
  app.use(notFoundHandler);
  app.use(internalErrorHandler(log));
}
