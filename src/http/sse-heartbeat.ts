/**
 * Keeps quiet SSE streams open: a comment line (`: keep-alive`) once a stream has sent nothing
 * for the heartbeat interval (REGISTRY_SSE_HEARTBEAT_SECONDS, 15 s by default). A watch
 * (SendStreamingMessage with {"watch"}, SubscribeToTask) can go minutes without an event, and
 * what sits between it and its client cuts a response that idle: proxies at their read timeout
 * (nginx: 60 s, some load balancers 30 s), Node's fetch (undici) at 300 s. The client's stream
 * then ended with an error although the watch ran on. SSE clients skip comment lines (the SSE
 * standard; the A2A SDKs of both generations do). Mounted after the request scope, which says
 * whether the request streams.
 */
import type { RequestHandler, Response } from 'express';
import { currentScope } from '../observability/request-scope.js';

const HEARTBEAT = ': keep-alive\n\n';

export function sseHeartbeat(intervalMs: number): RequestHandler {
  return (_req, res, next) => {
    if (!currentScope()?.streaming) return next();
    // Measured on the monotonic clock: on the wall clock, a step back (NTP correcting a clock
    // that ran ahead) left every quiet stream without a heartbeat until the clock had caught up
    // again (an hour's step, an hour), and the proxies in front cut them all.
    let lastWrite = performance.now();
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    res.write = ((...args: unknown[]): boolean => {
      lastWrite = performance.now();
      return write(...args);
    }) as Response['write'];
    // Checked three times an interval, so a quiet stream is never silent much longer than one.
    const timer = setInterval(() => {
      if (res.writableEnded || res.destroyed || !res.headersSent) return;
      // Only an event stream: a streaming request refused before it started is a plain JSON answer.
      if (!String(res.getHeader('content-type') ?? '').startsWith('text/event-stream')) return;
      if (performance.now() - lastWrite >= intervalMs) res.write(HEARTBEAT);
    }, Math.max(1, Math.floor(intervalMs / 3)));
    timer.unref();
    res.once('close', () => clearInterval(timer));
    next();
  };
}
