/**
 * Per-request scope and one log line per request, for every door: the request id (taken from
 * X-Request-Id when it is sane), the method as the door names it, whether it streams, the
 * client address; the executor or door fills in the operation, task state and error code.
 */
import { randomUUID } from 'node:crypto';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { escapeUnprinted } from '../lib/json.js';
import type { Logger } from '../observability/logger.js';
import { answeredStatus, arrivalOf, callOutcome, requestOutcome } from '../observability/request-outcome.js';
import { runInScope, type RequestScope } from '../observability/request-scope.js';

/** How a door names a request: its method (JSON-RPC method, REST route, tool...) and whether it streams. */
export type RequestNamer = (req: Request) => { method: string; streaming: boolean };

/**
 * A request no door names otherwise (the web page, a path no door takes) by its method and path,
 * the path's first 64 characters: it is the caller's to make as long as a request line may be,
 * and the line's `http` shows it already (cut at 200).
 */
const byRoute: RequestNamer = (req) => ({ method: `${req.method} ${req.path.slice(0, 64)}`, streaming: false });

/** Query parameters the A2A HTTP+JSON binding defines: their values are logged as sent (percent-encoded). */
const LOGGED_QUERY_PARAMETERS = new Set(['pageSize', 'pageToken', 'historyLength', 'contextId', 'status', 'statusTimestampAfter', 'includeArtifacts', 'tenant']);

/**
 * What could hold another parameter once decoded: a server or proxy that also splits on ';'
 * reads `?pageSize=1;access_token=...` as two, where URLSearchParams reads pageSize's value.
 */
const CARRIES_ANOTHER_PARAMETER = /[;&]/;

/** The userinfo (`user:password@`) of an absolute-form request target. */
const ABSOLUTE_FORM_USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i;

/**
 * The name of a parameter the binding does not define, shown (its value withheld) only when it
 * reads as a parameter's name and came with a value: a token sent alone (`?sk-...`, or a base64
 * one ending in `=`, `?dG9r...=`) is, to URLSearchParams, a name with an empty value, and was
 * logged whole as `<token>=[redacted]`.
 */
const SHOWN_NAME = /^[A-Za-z_][\w.-]{0,31}$/;

/**
 * The request's URL for the log: every query value other than the binding's own parameters is
 * replaced, and so is a binding parameter's value (or any name) that could carry another
 * parameter, so a token a client put in the query string (`?access_token=...`,
 * `?pageSize=1;access_token=...`, `?<token>`) never reaches the logs.
 */
export function loggableUrl(target: string): string {
  // An absolute-form target (`GET http://user:password@host/path HTTP/1.1`, as proxies send it,
  // and which express routes by its path) may carry credentials: they were logged as sent.
  const originalUrl = target.replace(ABSOLUTE_FORM_USERINFO, '$1[redacted]@');
  const q = originalUrl.indexOf('?');
  if (q < 0) return originalUrl.slice(0, 200);
  // Each parameter is judged by its decoded name and value (URLSearchParams reads one pair at a
  // time as it reads the whole query: split on '&', empty pairs skipped) and shown as sent, still
  // percent-encoded. Shown decoded, `?contextId=%E2%80%AE...` put a right-to-left override (or
  // %C2%9B, a one-character CSI to some terminals) raw into the JSON line, which JSON leaves as it
  // is: the rest of the line read reversed in a log viewer. The request line holds printable ASCII only.
  const shown = originalUrl
    .slice(q + 1)
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const [[name, value]] = [...new URLSearchParams(pair)] as [[string, string]];
      const rawName = pair.split('=', 1)[0]!;
      if (CARRIES_ANOTHER_PARAMETER.test(name)) return '[redacted]';
      if (LOGGED_QUERY_PARAMETERS.has(name)) return `${rawName}=${CARRIES_ANOTHER_PARAMETER.test(value) ? '[redacted]' : pair.slice(rawName.length + 1)}`;
      // Another name is shown only when it reads as one and has a value: `?<token>` alone is a
      // name with no value, and was logged as `<token>=[redacted]`.
      return value !== '' && SHOWN_NAME.test(name) ? `${rawName}=[redacted]` : '[redacted]';
    });
  return `${originalUrl.slice(0, Math.min(q, 200))}?${shown.join('&')}`.slice(0, 400);
}

/**
 * Why a request's `closed` signal fires, made once: aborting without a reason builds a
 * DOMException (and captures its stack) on every request.
 */
const CLIENT_GONE = new DOMException('The response ended or the client went away.', 'AbortError');

/**
 * The request's id: the client's X-Request-Id when it is sane (its logs and ours then share it),
 * else a new one; made once per request (the flood guard, before the scope, may ask first).
 */
export function requestIdOf(req: Request, res: Response): string {
  const locals = res.locals as { requestId?: string };
  if (locals.requestId === undefined) {
    const incoming = req.header('x-request-id');
    locals.requestId = incoming && /^[\w.-]{1,64}$/.test(incoming) ? incoming : randomUUID();
  }
  return locals.requestId;
}

/** Opens a request scope and writes one log line when the response ends. */
export function requestScope(log: Logger, name: RequestNamer = byRoute): RequestHandler {
  return (req, res, next) => {
    const started = arrivalOf(res);
    const requestId = requestIdOf(req, res);
    res.setHeader('X-Request-Id', requestId);
    const { method, streaming } = name(req);
    // The `closed` signal is made when first asked for: only streams ask for it, so the other
    // requests make and abort no AbortController (a few µs each; too little to show in
    // bench/round-trip.ts on a loaded machine).
    let closed: AbortController | undefined;
    let gone = false;
    const scope: RequestScope = {
      requestId,
      method,
      streaming,
      clientAddress: req.ip,
      get closed(): AbortSignal {
        if (!closed) {
          closed = new AbortController();
          if (gone) closed.abort(CLIENT_GONE);
        }
        return closed.signal;
      },
    };
    res.locals.scope = scope; // for the metrics middleware, which runs outside this async scope
    const logLine = () => {
      gone = true;
      closed?.abort(CLIENT_GONE);
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      // An answer that never ended (the client went away, or shutdown cut the connection) has no
      // status; the metrics count it ABORTED unless its task ended first. The outcome's code is
      // the one the metrics count the request under (request-outcome.ts).
      const status = answeredStatus(res);
      const line = {
        requestId,
        http: `${req.method} ${loggableUrl(req.originalUrl)}`,
        status,
        aborted: status === undefined ? true : undefined,
        // The caller's own text where a JSON-RPC or MCP body names an unknown method or tool: its
        // C1 and bidirectional controls, which JSON leaves raw, escaped ("GetTask\u202e..."
        // reversed the rest of the line in a log viewer).
        method: scope.method === undefined ? undefined : escapeUnprinted(scope.method),
        operation: scope.operation,
        taskState: scope.taskState,
        errorCode: requestOutcome(res, scope).code,
        // A batch's calls, each as a single request's line names it.
        calls: scope.calls?.map(({ scope: call }) => ({ method: call.method === undefined ? undefined : escapeUnprinted(call.method), operation: call.operation, taskState: call.taskState, errorCode: callOutcome(res, call).code })),
        durationMs: Math.round(durationMs * 100) / 100,
      };
      if (req.path === '/healthz' || req.path === '/readyz') log.debug(line, 'request');
      else log.info(line, 'request');
    };
    // A scope opened for a request whose connection is already gone (a body error handler's,
    // after the client left mid-body) would wait for a 'close' that has been emitted.
    if (res.closed) logLine();
    else res.on('close', logLine);
    runInScope(scope, next);
  };
}

/**
 * `handler` (a door's body error handler) run inside a request scope of its own. A door whose
 * scope opens after its body parser (it names requests by their JSON-RPC method) otherwise
 * answered a body that did not parse, was too large or had the wrong type with no X-Request-Id
 * and no log line at all, and logged no body that never came in full: the kinds of request an
 * operator could not see.
 */
export function scopedErrorHandler(log: Logger, name: RequestNamer, handler: ErrorRequestHandler): ErrorRequestHandler {
  const scope = requestScope(log, name);
  // A body that never arrived in full (the client went away mid-body, the server cut it at
  // REGISTRY_REQUEST_TIMEOUT_SECONDS, shutdown cut the connection) is logged too: "aborted", or
  // the 408 the server answered. It went unlogged, and only the metrics counted it.
  return (err, req, res, next) => scope(req, res, () => handler(err, req, res, next));
}
