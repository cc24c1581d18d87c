/**
 * The HTTP surface: a thin transport layer over the SDK's request handler. It owns what the SDK
 * does not: body limits and binding-shaped errors, the well-known card with caching headers,
 * health and readiness, per-request scope and one log line per request.
 */
import { randomUUID } from 'node:crypto';
import express, { type Express, type RequestHandler } from 'express';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { jsonRpcHandler, restHandler, type UserBuilder } from '@a2a-js/sdk/server/express';
import type { Logger } from '../observability/logger.js';
import { runInScope, type RequestScope } from '../observability/request-scope.js';
import type { RegistryMetrics } from '../observability/metrics.js';
import { cardEndpoint } from './card-endpoint.js';
import { bodyErrorHandler, internalErrorHandler, notFoundHandler } from './http-errors.js';
import type { AbuseControl } from './rate-limit.js';
import { jsonRpcShapeGuard, restShapeGuard, verifyBody } from './request-guard.js';
import { answerSanitizer, securityHeaders, type SecurityOptions } from './security.js';

export const JSONRPC_PATH = '/a2a/jsonrpc';
export const REST_PATH = '/a2a/rest';
export const CARD_PATH = '/.well-known/agent-card.json';

export interface Readiness {
  /** Why the registry is not ready, or undefined when it is. */
  check(): Promise<string | undefined>;
}

export interface AppDeps {
  cardJson: Record<string, unknown>;
  cardMaxAgeSeconds: number;
  requestHandler: A2ARequestHandler;
  userBuilder: UserBuilder;
  maxBodyBytes: number;
  readiness: Readiness;
  log: Logger;
  /** Deepest JSON nesting accepted in a body (checked on the bytes, before parsing). */
  maxJsonDepth: number;
  security: SecurityOptions;
  /** Express "trust proxy": what req.ip (rate limits, logs) is taken from. */
  trustProxy: boolean | number;
  abuse: AbuseControl;
  metrics: RegistryMetrics;
  /** When set, GET /metrics needs it as a bearer token. */
  metricsToken?: string;
}

const STREAMING_METHODS = new Set(['SendStreamingMessage', 'SubscribeToTask', 'message/stream', 'tasks/resubscribe']);

/** Opens a request scope (id, method, streaming) and writes one log line when the response ends. */
function requestScope(log: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const incoming = req.header('x-request-id');
    const requestId = incoming && /^[\w.-]{1,64}$/.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', requestId);
    const body: unknown = req.body;
    const rpcMethod = body && typeof body === 'object' && 'method' in body && typeof body.method === 'string' ? body.method : undefined;
    const scope: RequestScope = {
      requestId,
      method: rpcMethod ?? `${req.method} ${req.path}`,
      streaming: rpcMethod ? STREAMING_METHODS.has(rpcMethod) : /:(stream|subscribe)$/.test(req.path),
      clientAddress: req.ip,
    };
    res.locals.scope = scope; // for the metrics middleware, which runs outside this async scope
    res.on('close', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const line = {
        requestId,
        http: `${req.method} ${req.originalUrl.slice(0, 200)}`,
        status: res.statusCode,
        method: scope.method,
        operation: scope.operation,
        taskState: scope.taskState,
        errorCode: scope.errorCode,
        durationMs: Math.round(durationMs * 100) / 100,
      };
      if (req.path === '/healthz' || req.path === '/readyz') log.debug(line, 'request');
      else log.info(line, 'request');
    });
    runInScope(scope, next);
  };
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy);
  app.use(securityHeaders(deps.security));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const reason = await deps.readiness.check().catch((err: unknown) => `readiness check failed: ${(err as Error).message}`);
    if (reason) res.status(503).json({ status: 'not ready', reason });
    else res.json({ status: 'ready' });
  });
  const card = cardEndpoint(deps.cardJson, deps.cardMaxAgeSeconds);
  app.get(CARD_PATH, card);
  app.head(CARD_PATH, card);
  app.get('/metrics', deps.metrics.handler(deps.metricsToken));

  // Our own parser and limit in front of the SDK's (which would answer 413 with an HTML page);
  // once a body is parsed, the SDK's express.json() leaves it alone.
  const json = express.json({
    limit: deps.maxBodyBytes,
    type: ['application/json', 'application/a2a+json', 'application/*+json'],
    verify: verifyBody(deps.maxJsonDepth),
  });
  // Order matters: count everything, refuse floods before reading bodies, check shapes before
  // the SDK, and scrub internal errors out of whatever the SDK answers.
  app.use([JSONRPC_PATH, REST_PATH], deps.metrics.middleware(), deps.abuse.floodGuard(), json, bodyErrorHandler(deps.log), requestScope(deps.log), deps.abuse.streamCap());
  app.use(JSONRPC_PATH, jsonRpcShapeGuard);
  app.use(REST_PATH, restShapeGuard);
  app.use([JSONRPC_PATH, REST_PATH], answerSanitizer);

  app.use(
    JSONRPC_PATH,
    jsonRpcHandler({ requestHandler: deps.requestHandler, userBuilder: deps.userBuilder, legacyCompat: { enabled: true } }),
  );
  app.use(REST_PATH, restHandler({ requestHandler: deps.requestHandler, userBuilder: deps.userBuilder }));

  app.use(notFoundHandler);
  app.use(internalErrorHandler(deps.log));
  return app;
}
