/**
 * Response-side security for a public JSON API (and the web page's own policy):
 * - helmet headers, tuned for an API: a CSP that allows nothing (the web page's HTML gets
 *   PAGE_CONTENT_SECURITY_POLICY instead), no framing,
 *   no referrer, nosniff. Cross-Origin-Resource-Policy follows the CORS setting, since an answer
 *   meant to be read by browsers on other origins must not be blocked by it (the documents open
 *   to every origin, the registry's agent card among them, say cross-origin themselves: open-reads.ts);
 * - CORS, off unless REGISTRY_CORS_ORIGINS names origins (or *). Tokens travel in the
 *   Authorization header, never in cookies, so credentials mode is never needed. The public
 *   documents open to every origin answer their own preflight first (open-reads.ts);
 * - an answer sanitizer: the SDK answers an unexpected exception with its message (-32603 on
 *   JSON-RPC, HTTP 500 on HTTP+JSON, an SSE error event mid-stream). Messages like "Cannot read
 *   properties of null" or "Maximum call stack size exceeded" tell an attacker what broke, so
 *   they are replaced by a generic text; the full error stays in the logs.
 */
import { ERROR_INFO_TYPE, fromRestErrorBody, toJsonRpcError } from '@a2a-js/sdk/errors';
import cors from 'cors';
import type { Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import { refusalOfAnswer } from '../observability/metrics.js';
import { currentScope } from '../observability/request-scope.js';
import { RETRY_AFTER_BY_REASON, retryNamedIn } from '../tasks/storage-unavailable.js';
import { errorInfo, statusNameOf } from './errors.js';
import { RATE_LIMITED_REASON } from './retry-later.js';
import { openReadPreflights, PREFLIGHT_MAX_AGE_SECONDS } from './open-reads.js';

export interface SecurityOptions {
  /** Browser origins allowed to call the registry: none, '*' or a list. */
  corsOrigins: string[] | '*';
  /**
   * Paths (app.use prefixes) whose GET answers every origin may read, whatever corsOrigins says
   * (open-reads.ts): their preflight is answered before the configured CORS, which would
   * answer it for its own origins only.
   */
  openReads?: readonly string[];
}

/**
 * The web page's policy (src/web): every script, style, image and API call from the registry
 * itself, nothing inline, nothing from another origin, no plugins, forms, framing or <base>
 * tricks; Trusted Types lock the DOM's HTML sinks (the page never writes HTML from strings).
 * Only the page's HTML answers carry it; every other answer keeps `default-src 'none'`.
 */
export const PAGE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

/** Replaces the API policy helmet set with the page's, on the page's HTML answers. */
export const pageContentSecurityPolicy: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', PAGE_CONTENT_SECURITY_POLICY);
  next();
};

export const INTERNAL_MESSAGE = 'Internal error; the request was not completed. Retry later; if it persists, report it with the X-Request-Id of the answer.';
const JSONRPC_INTERNAL_ERROR = -32603;

/**
 * The headers a helmet middleware sets, captured once: ours are the same on every answer, so
 * one middleware sets them all instead of helmet's dozen chained ones on every request (a few
 * per cent of a search's CPU time). helmet stays the source of the values.
 */
function capturedHeaders(middleware: RequestHandler): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  const capture = { setHeader: (name: string, value: unknown) => headers.push([name, String(value)]), removeHeader: () => undefined };
  let finished = false;
  middleware({} as Request, capture as unknown as Response, (err?: unknown) => {
    if (err) throw err;
    finished = true;
  });
  if (!finished) throw new Error('helmet did not set its headers synchronously');
  return headers;
}

/** helmet's headers (and CORS when configured), mounted before every route. */
export function securityHeaders(options: SecurityOptions): RequestHandler[] {
  const corsOn = options.corsOrigins === '*' || options.corsOrigins.length > 0;
  const headers = capturedHeaders(
    helmet({
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
      crossOriginResourcePolicy: { policy: corsOn ? 'cross-origin' : 'same-origin' },
      referrerPolicy: { policy: 'no-referrer' },
      // HSTS only means something over https; includeSubDomains would decide for the operator's whole domain.
      strictTransportSecurity: { maxAge: 31536000, includeSubDomains: false },
      xFrameOptions: { action: 'deny' },
    }),
  );
  const handlers: RequestHandler[] = [
    (_req, res, next) => {
      for (const [name, value] of headers) res.setHeader(name, value);
      next();
    },
    openReadPreflights(options.openReads ?? [], options.corsOrigins),
  ];
  if (corsOn) {
    handlers.push(
      cors({
        origin: options.corsOrigins === '*' ? '*' : options.corsOrigins,
        // The methods the doors answer: GET and POST, and DELETE for the HTTP+JSON binding's
        // DeleteTaskPushNotificationConfig (DELETE /tasks/{id}/pushNotificationConfigs/{configId});
        // without it a browser's preflight fails and the app cannot delete a config. No route takes PUT or PATCH.
        methods: ['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS'],
        // MCP clients in a browser (the MCP Inspector's direct mode) send and read the MCP headers too.
        allowedHeaders: [
          'Content-Type', 'Authorization', 'A2A-Version', 'A2A-Extensions', 'X-A2A-Extensions', 'X-Request-Id', 'If-None-Match',
          'Mcp-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID',
        ],
        exposedHeaders: ['X-Request-Id', 'Retry-After', 'ETag', 'Last-Modified', 'A2A-Extensions', 'X-A2A-Extensions', 'Mcp-Session-Id', 'WWW-Authenticate'],
        maxAge: PREFLIGHT_MAX_AGE_SECONDS,
      }) as RequestHandler,
    );
  }
  return handlers;
}

interface ErrorEnvelope {
  jsonrpc?: unknown;
  error?: { code?: unknown; message?: unknown; data?: unknown; status?: unknown; details?: unknown };
}

const isErrorEnvelope = (body: unknown): body is ErrorEnvelope =>
  typeof body === 'object' && body !== null && 'error' in body && typeof (body as ErrorEnvelope).error === 'object' && (body as ErrorEnvelope).error !== null;

/**
 * Refusals of ours that are errors on purpose and say what is wrong and when to retry
 * (STORAGE_UNAVAILABLE; RATE_LIMITED, a watch's renewal over the write budget).
 */
const STATED_REASONS: ReadonlySet<string> = new Set([...RETRY_AFTER_BY_REASON.keys(), RATE_LIMITED_REASON]);

/** The ErrorInfo reason of an error body (JSON-RPC `data`, google.rpc.Status `details`). */
function reasonOf(error: NonNullable<ErrorEnvelope['error']>): string | undefined {
  const infos: unknown = error.data ?? error.details;
  if (!Array.isArray(infos)) return undefined;
  const info: unknown = infos[0];
  return info && typeof info === 'object' && typeof (info as { reason?: unknown }).reason === 'string' ? (info as { reason: string }).reason : undefined;
}

/** When to retry a stated refusal, from its ErrorInfo (seconds); undefined for any other error. */
function statedRetryAfter(error: NonNullable<ErrorEnvelope['error']>): number | undefined {
  const reason = reasonOf(error);
  if (reason === undefined || !STATED_REASONS.has(reason)) return undefined;
  const infos = (error.data ?? error.details) as Array<{ metadata?: { retryAfterSeconds?: unknown } }>;
  const seconds = Number(infos[0]?.metadata?.retryAfterSeconds);
  return Number.isInteger(seconds) && seconds >= 0 ? seconds : RETRY_AFTER_BY_REASON.get(reason);
}

/** Replaces the message of an internal error in a JSON-RPC or google.rpc.Status body; true when it did. */
function scrub(body: ErrorEnvelope, httpStatus: number): boolean {
  const error = body.error!;
  const reason = reasonOf(error);
  if (reason && STATED_REASONS.has(reason)) {
    // Its message is ours and meant for the client; give it the status name the SDK cannot
    // (UNAVAILABLE for 503, RESOURCE_EXHAUSTED for 429).
    if (body.jsonrpc === undefined) error.status = statusNameOf(httpStatus);
    return false;
  }
  if (body.jsonrpc === '2.0' && error.code === JSONRPC_INTERNAL_ERROR) {
    error.message = INTERNAL_MESSAGE;
    error.data = [errorInfo('INTERNAL')];
    return true;
  }
  if (body.jsonrpc === undefined && httpStatus >= 500) {
    error.message = INTERNAL_MESSAGE;
    error.details = [errorInfo('INTERNAL')];
    return true;
  }
  return false;
}

/**
 * The SDK's v0.3 JSON-RPC converter answers an A2AError it has no code for with its message and
 * no `data`, dropping the ErrorInfo: a storage fault (or the index still loading, or a renewal
 * over the write budget) reached a v0.3 client as an internal error with no reason and no retry
 * time. The refusal the request met is named in its scope (by the executor, the task store or
 * the request handler): its ErrorInfo goes back in.
 */
function restoreStatedReason(body: ErrorEnvelope, legacy: boolean): boolean {
  const error = body.error!;
  // Only there: elsewhere a -32603 without data is some other failure, whose message is scrubbed.
  if (!legacy || body.jsonrpc !== '2.0' || error.code !== JSONRPC_INTERNAL_ERROR || error.data !== undefined) return false;
  const named = retryNamedIn(currentScope());
  if (named === undefined) return false;
  error.data = [errorInfo(named.reason, { retryAfterSeconds: String(named.seconds) })];
  return true;
}

/** JSON-RPC codes of the standard errors (A2A 9.5), whose reasons name no A2A error class of the SDK's. */
const STANDARD_ERROR_CODES: ReadonlyMap<string, number> = new Map([
  ['PARSE_ERROR', -32700],
  ['INVALID_REQUEST', -32600],
  ['METHOD_NOT_FOUND', -32601],
]);

/**
 * The JSON-RPC code an error answer is counted under (metrics' `code`): a JSON-RPC error's own;
 * for a google.rpc.Status (HTTP+JSON), whose `code` is the HTTP status, the code the JSON-RPC
 * binding gives the error its ErrorInfo reason names, by the SDK's own mapping (TASK_NOT_FOUND
 * -32001, INVALID_PARAMS -32602; a reason it has no error for, INTERNAL or STORAGE_UNAVAILABLE,
 * -32603, as JSON-RPC answers them). Counted by HTTP status, 400 lumped task-not-cancelable,
 * unsupported operation and invalid params together, and the same error counted differently on
 * the two bindings.
 */
function rpcCodeOf(body: ErrorEnvelope): number | undefined {
  const error = body.error!;
  if (body.jsonrpc !== undefined) return typeof error.code === 'number' ? error.code : undefined;
  const reason = reasonOf(error);
  const standard = STANDARD_ERROR_CODES.get(reason ?? '');
  if (standard !== undefined) return standard;
  const details = reason === undefined ? [] : [{ '@type': ERROR_INFO_TYPE, reason }];
  return toJsonRpcError(fromRestErrorBody({ details }, { statusCode: typeof error.code === 'number' ? error.code : 500 })).code;
}

/** The body of an `event: error` SSE frame (the SDK writes one when a stream breaks); undefined for any other chunk. */
function errorFrameBody(chunk: string): ErrorEnvelope | undefined {
  const m = /^event: error\ndata: (.*)\n\n$/s.exec(chunk);
  if (!m) return undefined;
  try {
    const body: unknown = JSON.parse(m[1]!);
    return isErrorEnvelope(body) ? body : undefined;
  } catch {
    return undefined; // not JSON: left as it is
  }
}

/**
 * Wraps res.json and res.write of A2A requests. Mount it right before the SDK's handlers: our
 * own refusals (sent earlier through sendFailure) are already safe and carry a reason.
 * Also records the JSON-RPC error code of an error answer for metrics (res.locals.rpcErrorCode,
 * see rpcCodeOf), or, for a refusal of the request's shape (ErrorInfo reason INVALID_PARAMS), its
 * reason (res.locals.failureReason, counted REFUSED as the door's own refusals): a JSON body's, and an `event: error` frame's, the error that ends a stream
 * (v0.3 tasks/resubscribe answers every error so, and any stream that breaks after its first
 * event): counted only from JSON bodies, a failed resubscribe counted as a success.
 * `isLegacy` says whether a request is v0.3 (the A2A doors tell, from the version they negotiated).
 */
export function answerSanitizer(isLegacy: (req: Request) => boolean = () => false): RequestHandler {
  return (req, res, next) => {
    const legacy = isLegacy(req);
    const locals = res.locals as { failureReason?: string; rpcErrorCode?: number };
    /** Restores a stated reason, scrubs an internal message, records the code; true when the body changed. */
    const mend = (body: ErrorEnvelope, httpStatus: number): boolean => {
      const restored = restoreStatedReason(body, legacy);
      const retryAfter = statedRetryAfter(body.error!);
      if (retryAfter !== undefined && !res.headersSent) {
        res.setHeader('Retry-After', String(retryAfter));
        // A rate limit is HTTP 429 on JSON-RPC too, as the flood guard answers it (errors.ts
        // sendFailure), so proxies and HTTP clients react to it; the SDK answered 200.
        if (body.jsonrpc !== undefined && reasonOf(body.error!) === RATE_LIMITED_REASON) res.status(429);
      }
      const scrubbed = scrub(body, httpStatus);
      // A refusal of the request's shape the SDK's handler answered counts as the door's own do (REFUSED).
      const refusal = refusalOfAnswer(reasonOf(body.error!));
      const code = refusal === undefined ? rpcCodeOf(body) : undefined;
      if (locals.failureReason === undefined) {
        if (refusal !== undefined) locals.failureReason = refusal;
        else if (code !== undefined) locals.rpcErrorCode = code;
      }
      return restored || scrubbed;
    };
    const json = res.json.bind(res);
    res.json = ((body: unknown) => {
      if (isErrorEnvelope(body) && locals.failureReason === undefined) mend(body, res.statusCode);
      return json(body);
    }) as Response['json'];
    const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      const body = typeof chunk === 'string' && chunk.startsWith('event: error') ? errorFrameBody(chunk) : undefined;
      // An HTTP+JSON frame's status is in its body (the answer's own is the stream's 200).
      const frameStatus = body?.jsonrpc === undefined && typeof body?.error?.code === 'number' ? body.error.code : 500;
      if (body && mend(body, frameStatus)) return write(`event: error\ndata: ${JSON.stringify(body)}\n\n`, ...rest);
      return write(chunk, ...rest);
    }) as Response['write'];
    next();
  };
}
