/**
 * Several express handlers run as ONE router layer, in order, with express's own rules: a
 * handler that calls `next(err)`, throws, or returns a promise that rejects passes the error to
 * the next error handler (four parameters) of the chain, and past the chain's end to the app's.
 *
 * Why: the A2A doors' middleware (metrics, flood guard, body, request scope, version, credentials,
 * shape checks, answer wrappers) were a dozen `app.use` layers, and express's router pays per
 * layer and request: the path matched and the URL trimmed and restored, a params object, a
 * `debug` call whose arguments are an array even when debugging is off. Under durable
 * registrations that was ≈ 15 % of the bytes a request allocates (garbage collection) and ≈ 3 %
 * of its time. All of them share one mount path, so one layer gives each the same `req.url` and
 * `req.baseUrl` as before.
 *
 * What it does not keep: express's per-handler tracing channel (`router.handle.request`, for
 * APM tools) sees the chain as one handler; `next('route')` continues with the next handler and
 * `next('router')` leaves the chain as it would have left those layers.
 */
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';

export type ChainHandler = RequestHandler | ErrorRequestHandler;

const isErrorHandler = (handler: ChainHandler): handler is ErrorRequestHandler => handler.length === 4;
const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';

export function handlerChain(handlers: readonly ChainHandler[]): RequestHandler {
  const list = [...handlers];
  return (req: Request, res: Response, done: NextFunction) => {
    let i = 0;
    const next = (err?: unknown): void => {
      if (err === 'router') return done(err);
      const error: unknown = err === 'route' ? undefined : err;
      while (i < list.length) {
        const handler = list[i++]!;
        // As express's layers: request handlers are skipped while an error is pending, error handlers otherwise.
        if (isErrorHandler(handler) !== Boolean(error)) continue;
        try {
          const ret: unknown = isErrorHandler(handler) ? handler(error, req, res, next) : (handler as RequestHandler)(req, res, next);
          if (isThenable(ret)) ret.then(undefined, (rejection: unknown) => next(rejection || new Error('Rejected promise')));
        } catch (thrown) {
          next(thrown);
        }
        return;
      }
      if (error) done(error);
      else done();
    };
    next();
  };
}
