/**
 * A2A errors (spec section 3.3.2) that the door answers itself, before the SDK, in exactly the
 * wire shape the SDK gives them (its own converters): on JSON-RPC an error object with the A2A
 * code and a google.rpc.ErrorInfo in `data`, with HTTP 200 as the SDK answers; on HTTP+JSON the
 * binding's HTTP status and a google.rpc.Status body whose ErrorInfo has the A2A reason and the
 * domain a2a-protocol.org (section 11.6).
 */
import type { Request, Response } from 'express';
import { A2AError, restStatusFor, toJsonRpcError, toRestErrorBody } from '@a2a-js/sdk/errors';
import { jsonRpcIdOf } from '../http/json-body.js';
import { currentScope } from '../observability/request-scope.js';

export type A2ABinding = 'JSONRPC' | 'HTTP+JSON';

export function sendA2AError(req: Request, res: Response, binding: A2ABinding, error: A2AError, httpStatus = restStatusFor(error)): void {
  // Marks the answer as ours for metrics and for the answer sanitizer (which leaves it alone).
  res.locals.failureReason = error.reason;
  const scope = currentScope();
  if (scope) scope.errorCode = error.reason;
  if (binding === 'JSONRPC') {
    res.status(200).json({ jsonrpc: '2.0', id: jsonRpcIdOf(req.body), error: toJsonRpcError(error) });
    return;
  }
  res.status(httpStatus).json(toRestErrorBody(error, httpStatus));
}
