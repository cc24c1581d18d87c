/**
 * The request media type on the JSON-RPC binding: a body MUST be sent as `application/json` (A2A
 * v1.0 section 9.1, v0.3 section 3.2.1). One that is not (text/plain, what fetch sends for a
 * string body; application/x-www-form-urlencoded, what `curl -d` sends; application/a2a+json;
 * no Content-Type at all) is refused with HTTP 415 and ContentTypeNotSupportedError (-32005, as
 * on HTTP+JSON), never run. The door reads the body anyway (json-body.ts `anyType`), so the refusal carries the request's
 * id: the SDK refused it unread, and its answer said `"id": null` for a request whose id was
 * plain to see, which a client matching answers to requests cannot place. The MCP endpoint
 * (JSON-RPC too, application/json only) refuses a wrong type with it as well.
 */
import type { RequestHandler } from 'express';
import { jsonRpcIdOf } from '../http/json-body.js';
import { sendFailure } from '../http/errors.js';
import { currentScope } from '../observability/request-scope.js';

/**
 * The one request media type of the JSON-RPC binding. Not application/a2a+json, which A2A
 * registers for HTTP+JSON (section 14.1): @a2a-js/sdk 1.3's JSON-RPC handler refuses it too,
 * and did so with id null.
 */
const JSONRPC_BODY_TYPES = ['application/json'];

const CONTENT_TYPE_NOT_SUPPORTED = -32005;

/** 415 for a JSON-RPC request whose body is not declared JSON. */
export const requireJsonRpcBody: RequestHandler = (req, res, next) => {
  // null: no body (the shape guard says it is empty); a string: a JSON type. An empty body
  // (Content-Length: 0) has no media type to refuse either: without a Content-Type it was told it
  // "has a body but no Content-Type", and the shape guards tell it is empty, on either door.
  if (req.method !== 'POST' || req.headers['content-length'] === '0' || req.is(JSONRPC_BODY_TYPES) !== false) return next();
  const sent = req.headers['content-type'];
  const scope = currentScope();
  if (scope) scope.errorCode = 'CONTENT_TYPE_NOT_SUPPORTED';
  sendFailure(req, res, {
    httpStatus: 415,
    jsonRpcCode: CONTENT_TYPE_NOT_SUPPORTED,
    reason: 'CONTENT_TYPE_NOT_SUPPORTED',
    message: sent
      ? `The request body is ${sent.slice(0, 100)}; this JSON-RPC endpoint reads JSON: send Content-Type: application/json.`
      : 'The request has a body but no Content-Type; send Content-Type: application/json.',
    id: jsonRpcIdOf(req.body),
  });
};
