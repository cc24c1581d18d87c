/**
 * HEAD of an event stream (GET /a2a/rest/tasks/{id}:subscribe, whose GET route express answers
 * HEAD with): the answer ends once its headers are out, as a HEAD's must (RFC 9110 9.3.2: the
 * GET's header fields, no content). It was held open as the stream it stood for, events written
 * into a body no one sends: a watch's HEAD never ended, its connection stuck (a request after it
 * on the same connection was never answered) and the subscription counted open until the watch
 * ended. Ending the answer closes the request's scope, which ends the subscription; what the
 * stream still writes is dropped. Mounted after the request scope, which says whether the
 * request streams.
 */
import type { RequestHandler, Response } from 'express';
import { currentScope } from '../observability/request-scope.js';

export const headOfStreams: RequestHandler = (req, res, next) => {
  if (req.method !== 'HEAD' || !currentScope()?.streaming) return next();
  const flushHeaders = res.flushHeaders.bind(res);
  res.flushHeaders = (): void => {
    flushHeaders();
    if (String(res.getHeader('content-type') ?? '').startsWith('text/event-stream')) res.end();
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  res.write = ((...args: unknown[]): boolean => (res.writableEnded ? false : write(...args))) as Response['write'];
  next();
};
