/**
 * Cuts an SSE stream whose client does not read (see lib/stream-backlog.ts): once more than
 * MAX_UNSENT_STREAM_BYTES wait in the process, the connection is closed, which ends the stream
 * (the request scope's `closed` signal fires) and frees what was waiting. Mounted after the
 * request scope, which says whether the request streams.
 */
import type { RequestHandler, Response } from 'express';
import { MAX_UNSENT_STREAM_BYTES, SLOW_READER } from '../lib/stream-backlog.js';
import { currentScope } from '../observability/request-scope.js';

export function cutSlowReaders(limitBytes = MAX_UNSENT_STREAM_BYTES): RequestHandler {
  return (_req, res, next) => {
    const scope = currentScope();
    if (!scope?.streaming) return next();
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    res.write = ((...args: unknown[]): boolean => {
      if (res.destroyed) return false;
      const taken = write(...args);
      // writableLength counts what the socket has not taken yet, in the response and the socket.
      if (!taken && res.writableLength > limitBytes) {
        scope.errorCode = SLOW_READER;
        res.destroy();
      }
      return taken;
    }) as Response['write'];
    next();
  };
}
