/**
 * Errors that happen before the SDK sees a request (body too large, not JSON, unknown route, a
 * bug) answered in the caller's binding: a JSON-RPC error object on the JSON-RPC endpoint, a
 * google.rpc.Status body (A2A HTTP+JSON binding, section 11.6) elsewhere. Never an HTML page,
 * never a stack trace.
 */
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { A2A_ERROR_DOMAIN } from '@a2a-js/sdk/errors';
import { codePointPrefix } from '../lib/code-points.js';
import { quote } from '../lib/json.js';
import { percentDecodedOrUndefined } from '../lib/percent-decoding.js';
import type { Logger } from '../observability/logger.js';
import { allowedMethods } from './allowed-methods.js';

const JSONRPC_PARSE_ERROR = -32700;
const JSONRPC_INVALID_REQUEST = -32600;
const JSONRPC_INTERNAL_ERROR = -32603;
/** A2A's ContentTypeNotSupportedError, as the HTTP+JSON binding and the SDK use it for a request body's type. */
const JSONRPC_CONTENT_TYPE_NOT_SUPPORTED = -32005;

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  404: 'NOT_FOUND',
  405: 'UNIMPLEMENTED',
  412: 'FAILED_PRECONDITION',
  413: 'INVALID_ARGUMENT',
  415: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

/** The google.rpc.Status name of an HTTP status, as the HTTP+JSON binding's error bodies say it. */
export const statusNameOf = (httpStatus: number): string => STATUS_NAMES[httpStatus] ?? 'UNKNOWN';

/** HTTP statuses a JSON-RPC-shaped failure keeps (see sendFailure); the others are answered 200. */
const KEPT_ON_JSONRPC: ReadonlySet<number> = new Set([404, 405, 415]);

export interface HttpFailure {
  httpStatus: number;
  jsonRpcCode: number;
  message: string;
  reason: string;
  /** The JSON-RPC request id, when the request had a usable one. */
  id?: string | number | null;
  /** Rate limits: sent as Retry-After, and the JSON-RPC answer then uses HTTP 429 too. */
  retryAfterSeconds?: number;
  /** Authentication refusals (HTTP 401): sent as WWW-Authenticate, and the JSON-RPC answer then uses HTTP 401 too. */
  challenge?: string;
}

/**
 * How a door's binding shapes a failure body (MCP: a JSON-RPC error, ARD: {errorCode, message}).
 * A door sets it with `failureFormat` in front of its routes, so the refusals shared by every
 * door (flood guard, body errors) answer in that door's words.
 */
export type FailureFormatter = (failure: HttpFailure) => { status?: number; body: unknown };

/** A door's failure format and the paths (app.use prefixes) it answers under. */
export interface PathFailureFormat {
  paths: readonly string[];
  format: FailureFormatter;
}

/** The format of the door whose paths hold `path` (matched as app.use matches a prefix: in any case, whole segments). */
export function failureFormatOfPath(formats: readonly PathFailureFormat[], path: string): FailureFormatter | undefined {
  const lower = path.toLowerCase();
  return formats.find(({ paths }) => paths.some((p) => lower === p.toLowerCase() || lower.startsWith(`${p.toLowerCase()}/`)))?.format;
}

export const failureFormat =
  (format: FailureFormatter): RequestHandler =>
  (_req, res, next) => {
    res.locals.failureFormat = format;
    next();
  };

/**
 * A door's own words in the refusals shared code makes on its paths, set in front of its routes as
 * failureFormat is. Without them, the A2A doors' words: the catalog's /agents/%ff was told of "a
 * task id", and a path under /mcp-servers no route takes was pointed at the A2A endpoints.
 */
export interface DoorWords {
  /** What the path segment the door's routes take holds, for one that is not valid percent-encoded UTF-8 (internalErrorHandler). */
  pathParameter: (req: Request) => string;
  /** Where the door's routes are, after a 404's "No route ..." (notFoundHandler). */
  routes: string;
}

export const doorWords =
  (words: DoorWords): RequestHandler =>
  (_req, res, next) => {
    res.locals.doorWords = words;
    next();
  };

const doorWordsOf = (res: Response): DoorWords | undefined => (res.locals as { doorWords?: DoorWords }).doorWords;

/** How text is percent-encoded in a URL (RFC 3986 2.1, 2.3), as refusals of one that is not say it. */
export const PERCENT_ENCODING_RULE = 'as UTF-8 bytes, each byte outside A-Z, a-z, 0-9 and -._~ as %XX';

/** The first segment of the request's path that does not percent-decode as UTF-8, as sent. */
function undecodableSegment(req: Request): string | undefined {
  return req.originalUrl
    .split('?', 1)[0]!
    .split('/')
    .find((segment) => percentDecodedOrUndefined(segment) === undefined);
}

/** The refusal of a path that is not valid percent-encoded UTF-8, in the words of the door it came to (doorWords). */
function invalidPathMessage(req: Request, res: Response): string {
  const words = doorWordsOf(res);
  if (!words) return 'The request path is not valid percent-encoded UTF-8 (e.g. a task id).';
  const segment = undecodableSegment(req);
  return `The ${words.pathParameter(req)} in the path${segment === undefined ? '' : `, ${quote(segment, 100)},`} is not valid percent-encoded UTF-8: percent-encode it once, as one path segment, ${PERCENT_ENCODING_RULE}.`;
}

/** The ErrorInfo domain of the reasons the A2A specification defines (A2A 9.5, 10.6, 11.6). */
export const PROTOCOL_DOMAIN = A2A_ERROR_DOMAIN;
/** The ErrorInfo domain of the registry's own reasons (RATE_LIMITED, STORAGE_UNAVAILABLE, TOO_DEEP...). */
export const REGISTRY_DOMAIN = 'a2a-registry';

/**
 * Reasons that name an error the A2A specification defines: its A2A errors (section 3.3.2, the
 * reason being the error type in UPPER_SNAKE_CASE without "Error", whose domain MUST be
 * a2a-protocol.org) and the standard JSON-RPC errors of its JSON-RPC binding (section 9.5), as
 * the SDK names InvalidParamsError (INVALID_PARAMS, in a2a-protocol.org). The same reason must
 * not come in two domains: INVALID_PARAMS was a2a-protocol.org from the SDK and a2a-registry
 * from the registry's own checks.
 */
const PROTOCOL_REASONS: ReadonlySet<string> = new Set([
  'TASK_NOT_FOUND',
  'TASK_NOT_CANCELABLE',
  'PUSH_NOTIFICATION_NOT_SUPPORTED',
  'UNSUPPORTED_OPERATION',
  'CONTENT_TYPE_NOT_SUPPORTED',
  'INVALID_AGENT_RESPONSE',
  'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
  'EXTENSION_SUPPORT_REQUIRED',
  'VERSION_NOT_SUPPORTED',
  'PARSE_ERROR',
  'INVALID_REQUEST',
  'METHOD_NOT_FOUND',
  'INVALID_PARAMS',
  'INTERNAL',
]);

/** The domain an ErrorInfo with this reason carries, on every binding. */
export const errorDomain = (reason: string): string => (PROTOCOL_REASONS.has(reason) ? PROTOCOL_DOMAIN : REGISTRY_DOMAIN);

/** A google.rpc.ErrorInfo (ProtoJSON `Any`: typed by `@type`), in the domain of its reason. */
export function errorInfo(reason: string, metadata?: Record<string, string>): Record<string, unknown> {
  return { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: errorDomain(reason), ...(metadata ? { metadata } : {}) };
}

/**
 * The method a refusal's message names: a HEAD is named as the GET it stands for. A HEAD is
 * answered with the GET's header fields, Content-Length included, which must count the bytes of
 * the body the GET would get (RFC 9110 8.6, 9.3.2); a message naming "HEAD" made it one byte more.
 */
export const methodNamed = (req: Request): string => (req.method === 'HEAD' ? 'GET' : req.method);

/**
 * Whether the request is on the JSON-RPC endpoint, or a path below or beside it, in any case:
 * express matches paths case-insensitively, so /A2A/jsonrpc is the endpoint too (the SDK answers
 * it), and its refusals were a google.rpc.Status no JSON-RPC client reads. Also after a doubled
 * slash (//a2a/jsonrpc: a base URL ending in "/" joined to the path), which no route takes: its
 * 404 is a JSON-RPC error the client can read, as /a2a/jsonrpc/foo's.
 */
export const onJsonRpcPath = (req: Request): boolean => JSONRPC_PATH_PREFIX.test(req.baseUrl) || JSONRPC_PATH_PREFIX.test(req.path);
const JSONRPC_PATH_PREFIX = /^\/+a2a\/jsonrpc/i;

export function sendFailure(req: Request, res: Response, failure: HttpFailure): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  // Metrics read the outcome of requests that never reached the SDK from here.
  res.locals.failureReason = failure.reason;
  const retry = failure.retryAfterSeconds;
  if (retry !== undefined) res.setHeader('Retry-After', String(retry));
  if (failure.challenge !== undefined) res.setHeader('WWW-Authenticate', failure.challenge);
  const retryMetadata = retry === undefined ? undefined : { retryAfterSeconds: String(retry) };
  const format = (res.locals as { failureFormat?: FailureFormatter }).failureFormat;
  if (format) {
    const { status, body } = format(failure);
    res.status(status ?? failure.httpStatus).json(body);
    return;
  }
  if (onJsonRpcPath(req)) {
    // JSON-RPC answers transport-level errors with HTTP 200 and an error object, as the SDK does;
    // a rate limit (429 + Retry-After), a refused credential (401 + WWW-Authenticate), a path no
    // route has (404, as on every other path), a wrong method (405 + Allow) and a body not sent
    // as JSON (415: the binding's media type is application/json) are the exceptions, so proxies,
    // HTTP clients and their auth handlers react to them too.
    // Error details are an array of typed objects (A2A section 9.5), as the SDK's own errors
    // carry them: the reason in a google.rpc.ErrorInfo, the retry time in its metadata (string
    // values, as on gRPC).
    const data = [errorInfo(failure.reason, retryMetadata)];
    const status = retry !== undefined ? 429 : failure.challenge !== undefined || KEPT_ON_JSONRPC.has(failure.httpStatus) ? failure.httpStatus : 200;
    res.status(status).json({ jsonrpc: '2.0', id: failure.id ?? null, error: { code: failure.jsonRpcCode, message: failure.message, data } });
    return;
  }
  res.status(failure.httpStatus).json({
    error: {
      code: failure.httpStatus,
      status: statusNameOf(failure.httpStatus),
      message: failure.message,
      details: [errorInfo(failure.reason, retryMetadata)],
    },
  });
}

interface BodyParserError extends Error {
  type?: string;
  /** The raw body (parse failures). */
  body?: unknown;
  status?: number;
  /** The declared length (null from body-parser for a chunked body). */
  length?: number | null;
  limit?: number;
  /** charset.unsupported: the declared charset, and the request's JSON-RPC id when it was read (CharsetRefused). */
  charset?: string;
  id?: string | number | null;
  /** encoding.unsupported: the Content-Encoding body-parser does not decode. */
  encoding?: string;
}

/** 'null', 'a number', ... when `text` is JSON (and so no object, or it would have parsed); else undefined. */
function jsonKindOf(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/** What a request body looks like on the A2A JSON-RPC endpoint: the example a body that is no object is shown there. */
const A2A_BODY_EXAMPLE = 'a JSON-RPC request such as {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {...}}';

/**
 * The refusal of a request body that is JSON but no object (`kind`: "null", "an array", "a
 * string"...), showing the door's own request body: the same words whether the body parser or a
 * door's shape check finds it (body-parser's strict mode lets arrays through).
 */
export const notAnObjectMessage = (kind: string, bodyExample: string): string => `The request body is valid JSON but ${kind}, not an object: send one JSON object (${bodyExample}).`;

/** What a body over the limit is told of the A2A and MCP doors' bodies, which carry documents (REGISTRY_MAX_DOCUMENT_BYTES). */
const DOCUMENT_BODIES = 'Documents themselves are limited to a few KB: check you are not sending something else.';

/**
 * Turns body-parser failures (too large, not JSON, bad charset) into binding-shaped errors.
 * `bodyExample` shows the door's own request body (a body that is JSON but no object is shown it):
 * POST /search and the MCP endpoint were shown an A2A SendMessage. `tooLargeAdvice` follows the
 * limit in a 413: what the door's bodies hold and so how to fix one over it (POST /search, which
 * carries no document, was told about documents).
 */
export function bodyErrorHandler(log: Logger, bodyExample: string = A2A_BODY_EXAMPLE, tooLargeAdvice: string = DOCUMENT_BODIES): ErrorRequestHandler {
  return (err: BodyParserError, req, res, next) => {
    switch (err.type) {
      case 'entity.too.large':
        return sendFailure(req, res, {
          httpStatus: 413,
          jsonRpcCode: JSONRPC_INVALID_REQUEST,
          reason: 'REQUEST_TOO_LARGE',
          message: `${typeof err.length === 'number' ? `The request body is ${err.length} bytes; the limit is` : 'The request body is over the limit of'} ${err.limit} bytes (REGISTRY_MAX_BODY_BYTES). ${tooLargeAdvice}`,
        });
      case 'entity.parse.failed': {
        // A door that reads bodies of any type (JSON-RPC, to answer with the request's id): a
        // body neither declared JSON nor JSON is refused for its type, the first thing to fix.
        if (req.is(['application/json', 'application/*+json']) === false) {
          const sent = req.headers['content-type'];
          return sendFailure(req, res, {
            httpStatus: 415,
            jsonRpcCode: JSONRPC_CONTENT_TYPE_NOT_SUPPORTED,
            reason: 'CONTENT_TYPE_NOT_SUPPORTED',
            message: `The request body is ${sent ? sent.slice(0, 100) : 'sent without a Content-Type'}, and not JSON: send JSON with Content-Type: application/json.`,
          });
        }
        // body-parser's strict mode refuses JSON that is not an object or array with a syntax
        // error's message ("Unexpected token 'n', "null" is not valid JSON"): say what it is.
        const kind = jsonKindOf(err.body);
        if (kind !== undefined) {
          return sendFailure(req, res, {
            httpStatus: 400,
            jsonRpcCode: JSONRPC_INVALID_REQUEST,
            reason: 'INVALID_REQUEST',
            message: notAnObjectMessage(kind, bodyExample),
          });
        }
        return sendFailure(req, res, {
          httpStatus: 400,
          jsonRpcCode: JSONRPC_PARSE_ERROR,
          reason: 'PARSE_ERROR',
          message: `The request body is not valid JSON: ${codePointPrefix(err.message.replace(/ in JSON at position \d+.*$/, ''), 200)}.`,
        });
      }
      case 'entity.too.deep':
        return sendFailure(req, res, {
          httpStatus: 400,
          jsonRpcCode: JSONRPC_INVALID_REQUEST,
          reason: 'TOO_DEEP',
          message: `${err.message} Documents and requests are a few levels deep; flatten the data.`,
        });
      case 'entity.invalid.utf8':
        return sendFailure(req, res, {
          httpStatus: 400,
          jsonRpcCode: JSONRPC_PARSE_ERROR,
          reason: 'PARSE_ERROR',
          message: 'The request body is not valid UTF-8; send UTF-8 encoded JSON.',
        });
      case 'charset.unsupported':
        // JSON is UTF-8 on the wire (RFC 8259 8.1, A2A 14.1): a body declared otherwise is refused
        // for its media type, as one declared text/plain is, with its id when it could be read.
        return sendFailure(req, res, {
          httpStatus: 415,
          jsonRpcCode: JSONRPC_CONTENT_TYPE_NOT_SUPPORTED,
          reason: 'CONTENT_TYPE_NOT_SUPPORTED',
          message: `The request body is declared charset=${String(err.charset).slice(0, 40)}; JSON requests are read as UTF-8 only (RFC 8259): send UTF-8 with Content-Type: application/json (charset=utf-8 or no charset).`,
          id: err.id ?? null,
        });
      case 'encoding.unsupported':
        // A Content-Encoding body-parser does not decode (compress, x-gzip...): about the
        // compression, not the charset, as this answer used to say.
        return sendFailure(req, res, {
          httpStatus: 415,
          jsonRpcCode: JSONRPC_INVALID_REQUEST,
          reason: 'UNSUPPORTED_ENCODING',
          message: `The request body is sent with Content-Encoding: ${String(err.encoding ?? req.headers['content-encoding']).slice(0, 40)}, which the registry does not decode: send it uncompressed, or compressed with gzip, deflate or br.`,
        });
      case 'request.aborted':
        return;
      default: {
        // A compressed body that does not decompress (zlib's Z_DATA_ERROR and the like): say so,
        // rather than that the request "could not be read".
        const encoding = req.headers['content-encoding'];
        if (err.status === 400 && encoding !== undefined && encoding.toLowerCase() !== 'identity') {
          return sendFailure(req, res, {
            httpStatus: 400,
            jsonRpcCode: JSONRPC_INVALID_REQUEST,
            reason: 'BAD_REQUEST',
            message: `The request body is declared Content-Encoding: ${encoding.slice(0, 40)} but does not decompress (${err.message.slice(0, 100)}): send it compressed as declared, or uncompressed without Content-Encoding.`,
          });
        }
        if (err.status && err.status >= 400 && err.status < 500) {
          return sendFailure(req, res, { httpStatus: err.status, jsonRpcCode: JSONRPC_INVALID_REQUEST, reason: 'BAD_REQUEST', message: 'The request could not be read.' });
        }
        return next(err);
      }
    }
  };
}

/**
 * The request's path, also inside a mount, where req.path is what follows the mount's path ("/"
 * when nothing does: /a2a/jsonrpc is not to be named /a2a/jsonrpc/).
 */
const fullPath = (req: Request): string => {
  if (req.baseUrl === '' || req.path !== '/') return req.baseUrl + req.path;
  return /^[^?]*\/(\?|$)/.test(req.originalUrl) ? `${req.baseUrl}/` : req.baseUrl;
};

/**
 * True when some route of the application takes the request's method at its path (GET implies
 * HEAD; OPTIONS, which express answers itself with Allow, goes with any method).
 */
export function routeTakes(req: Request): boolean {
  const allowed = allowedMethods(req.app, fullPath(req));
  return allowed.includes(req.method) || (req.method === 'OPTIONS' && allowed.length > 0);
}

/** The methods the registry's routes take, one route or another (OPTIONS aside, which every path with a route answers). */
const SERVER_METHODS = ['DELETE', 'GET', 'HEAD', 'POST'];

/** Answers an OPTIONS with the methods `allowed` (RFC 9110 9.3.7), as express's router would. */
function sendAllow(res: Response, allowed: readonly string[]): void {
  res.setHeader('Allow', allowed.join(', '));
  res.status(200).type('text/plain').send(allowed.join(', '));
}

/**
 * OPTIONS on a path of a door with more than one router: answered here with what every route of
 * the application takes at the path. Each express router answers OPTIONS itself with the methods
 * of its own routes at its end, so the first one with a route at the path spoke for all: OPTIONS
 * /a2a/rest/tasks/{id}/pushNotificationConfigs said GET, HEAD (the router that lists configs),
 * leaving out the SDK's POST (create one), which its 405 listed. A path no route takes goes on.
 */
export const answerOptions: RequestHandler = (req, res, next) => {
  if (req.method !== 'OPTIONS') return next();
  const allowed = allowedMethods(req.app, fullPath(req));
  if (allowed.length === 0) return next();
  sendAllow(res, allowed);
};

/**
 * A path asked with a method its routes (`allowed`) do not take: OPTIONS is answered with them
 * in Allow, what express's router answers for it (RFC 9110 9.3.7), as on the A2A endpoints, whose
 * SDK routers get to it (the app's own routes, the well-known card, the catalog and ARD paths,
 * reached notFoundHandler first and answered 405, saying OPTIONS "is not allowed"); any other
 * method is 405 with Allow, in the path's binding.
 */
export function refuseMethod(req: Request, res: Response, allowed: readonly string[], path: string = fullPath(req)): void {
  if (req.method === 'OPTIONS') return sendAllow(res, allowed);
  res.setHeader('Allow', allowed.join(', '));
  sendFailure(req, res, {
    httpStatus: 405,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    reason: 'METHOD_NOT_ALLOWED',
    message: `${methodNamed(req)} is not allowed on ${path}: it takes ${allowed.filter((m) => m !== 'HEAD').join(' or ')}.`,
  });
}

/**
 * No route answered: 405 with `Allow` when some route takes the path with another method (a GET
 * of POST /a2a/rest/message:send), else 404; each says where the registry's doors are. Also
 * called inside a door's mount (version negotiation), hence the path as sent.
 */
export const notFoundHandler: RequestHandler = (req, res) => {
  // `OPTIONS *` asks about the server as a whole, not a resource (RFC 9110 9.3.7): the methods its
  // routes take. It was "No route OPTIONS *", 404.
  if (req.method === 'OPTIONS' && req.originalUrl === '*') return sendAllow(res, SERVER_METHODS);
  const path = fullPath(req);
  const allowed = allowedMethods(req.app, path);
  if (allowed.length > 0 && (req.method === 'OPTIONS' || !allowed.includes(req.method))) return refuseMethod(req, res, allowed, path);
  sendFailure(req, res, {
    httpStatus: 404,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    reason: 'NOT_FOUND',
    message: `No route ${methodNamed(req)} ${path}. ${doorWordsOf(res)?.routes ?? "The registry's card is at /.well-known/agent-card.json; A2A JSON-RPC at /a2a/jsonrpc, HTTP+JSON at /a2a/rest."}`,
  });
};

/**
 * Last resort. An error that carries a 4xx status is the client's mistake (a path parameter that
 * is not valid percent-encoding, `/tasks/%ff%fe`, fails to decode with status 400): answered
 * with that status and logged at info, without a stack. Anything else is a bug: logged with its
 * stack, answered without internals.
 */
export function internalErrorHandler(log: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const status = (err as { status?: unknown; statusCode?: unknown } | null)?.status ?? (err as { statusCode?: unknown } | null)?.statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      const decoding = err instanceof URIError;
      log.info({ status, path: req.path.slice(0, 200), error: err instanceof Error ? codePointPrefix(err.message, 200) : String(err) }, 'request refused');
      sendFailure(req, res, {
        httpStatus: status,
        jsonRpcCode: JSONRPC_INVALID_REQUEST,
        reason: decoding ? 'INVALID_PATH' : 'BAD_REQUEST',
        message: decoding ? invalidPathMessage(req, res) : 'The request could not be read.',
      });
      return;
    }
    log.error({ err, path: req.path }, 'unhandled error');
    sendFailure(req, res, { httpStatus: 500, jsonRpcCode: JSONRPC_INTERNAL_ERROR, reason: 'INTERNAL', message: 'Internal error; the request was not completed.' });
  };
}
