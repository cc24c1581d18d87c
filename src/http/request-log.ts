/**
 * Per-request scope and one log line per request, for every door: the request id (taken from
 * X-Request-Id when it is sane), the method as the door names it, whether it streams, the
 * client address; the executor or door fills in the operation, task state and error code.
 */
import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { Logger } from '../observability/logger.js';
import { runInScope, type RequestScope } from '../observability/request-scope.js';

/** How a door names a request: its method (JSON-RPC method, REST route, tool...) and whether it streams. */
export type RequestNamer = (req: Request) => { method: string; streaming: boolean };

const byRoute: RequestNamer = (req) => ({ method: `${req.method} ${req.path}`, streaming: false });

/** Opens a request scope and writes one log line when the response ends. */
export function requestScope(log: Logger, name: RequestNamer = byRoute): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const incoming = req.header('x-request-id');
    const requestId = incoming && /^[\w.-]{1,64}$/.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', requestId);
    const { method, streaming } = name(req);
    const scope: RequestScope = { requestId, method, streaming, clientAddress: req.ip };
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
