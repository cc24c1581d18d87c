/**
 * What the HTTP port answers from the moment it listens until the doors are mounted. Storage
 * opens in between: the first start after an upgrade migrates the database (seconds at
 * 1,000,000 entries), and a PostgreSQL replica waits for another's migration. Liveness answers,
 * readiness says why not, and every other request is refused as retryable, as while the search
 * index loads: an A2A error with reason STARTING_UP (a JSON-RPC error on the JSON-RPC endpoint,
 * HTTP 503 and a google.rpc.Status elsewhere), which the answer sanitizer gives Retry-After and
 * its status name, as it does for the doors. The MCP endpoint answers in its own words, as its
 * door refuses a request: HTTP 503 with Retry-After and a JSON-RPC error whose data names the
 * reason and the seconds to wait (it was the google.rpc.Status, no JSON-RPC answer at all).
 */
import { toJsonRpcError, toRestErrorBody } from '@a2a-js/sdk/errors';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { onJsonRpcPath, sendFailure } from '../http/errors.js';
import { jsonRpcIdOf, refusedEncoding } from '../http/json-body.js';
import { PROBE_PATHS, probesNotStored } from '../http/probes.js';
import { answerSanitizer, securityHeaders, type SecurityOptions } from '../http/security.js';
import { STARTING_UP_RETRY_SECONDS } from '../contract/errors.js';
import { mcpFailureFormat } from '../mcp/failure-format.js';
import { MCP_PATH } from '../mcp/paths.js';
import { STARTING_UP_REASON, StorageUnavailableA2AError } from '../tasks/storage-unavailable.js';
import { startingUpPage } from '../web/page-shell.js';
import { wantsHtml } from '../web/web-door.js';

const MESSAGE = 'The registry is starting up: its storage is opening (the first start after an upgrade migrates the database); retry shortly.';
/** The refusal's message: what /readyz says when storage waits for something (its database not reachable yet), else MESSAGE. */
const messageOf = (waiting: string | undefined): string => (waiting === undefined ? MESSAGE : `The registry is starting up: ${waiting}. Retry later.`);
const JSON_RPC_PATH = '/a2a/jsonrpc';
/** The code A2A's JSON-RPC binding answers STARTING_UP with (tasks/storage-unavailable.ts), as the MCP door's refusals take A2A's codes. */
const JSONRPC_INTERNAL_ERROR = -32603;
/** The MCP endpoint itself, not the paths below it (its Server Card is a catalog document). */
const isMcpEndpoint = (path: string): boolean => path === MCP_PATH || path === `${MCP_PATH}/`;

/** `waiting`: why storage is not open yet, when it is more than opening (a database not reachable yet). */
export function createStartingUpApp(security: SecurityOptions, waiting: () => string | undefined = () => undefined): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(securityHeaders(security));
  app.get(PROBE_PATHS, probesNotStored);
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    res.status(503).json({ status: 'not ready', reason: waiting() ?? 'opening storage' });
  });
  // Read for its id only, so a JSON-RPC client can match the refusal to its request. Not a body in
  // an encoding the doors refuse (zstd, whose frame may ask its decoder for a 128 MB window):
  // that one is refused without its id, unread, as the doors would refuse it unread.
  const readId = express.json({ limit: '1mb' });
  for (const path of [JSON_RPC_PATH, MCP_PATH]) app.use(path, (req, res, next) => (refusedEncoding(req) ? next() : readId(req, res, next)));
  app.use(answerSanitizer());
  const refuse: RequestHandler = (req, res) => {
    const error = new StorageUnavailableA2AError(messageOf(waiting()), STARTING_UP_REASON);
    // A browser (re)loading the web page meanwhile is shown a page saying so, not the JSON as text.
    if ((req.method === 'GET' || req.method === 'HEAD') && wantsHtml(req)) {
      res.status(503).setHeader('Retry-After', String(STARTING_UP_RETRY_SECONDS)).setHeader('Cache-Control', 'no-store').type('html').send(startingUpPage(STARTING_UP_RETRY_SECONDS));
      return;
    }
    if (isMcpEndpoint(req.path)) {
      res.locals.failureFormat = mcpFailureFormat;
      const id = jsonRpcIdOf(req.body);
      sendFailure(req, res, { httpStatus: 503, jsonRpcCode: JSONRPC_INTERNAL_ERROR, reason: STARTING_UP_REASON, message: error.message, retryAfterSeconds: STARTING_UP_RETRY_SECONDS, id });
      return;
    }
    // In any case, as express routes it (/A2A/jsonrpc is the endpoint too) and as the doors' refusals choose it.
    if (onJsonRpcPath(req)) res.status(200).json({ jsonrpc: '2.0', id: jsonRpcIdOf(req.body), error: toJsonRpcError(error) });
    else res.status(503).json(toRestErrorBody(error, 503));
  };
  // A body that could not be read is refused the same way (its id unknown).
  const refuseUnread: ErrorRequestHandler = (_err, req, res, _next) => refuse(req, res, () => undefined);
  app.use(refuse);
  app.use(refuseUnread);
  return app;
}
