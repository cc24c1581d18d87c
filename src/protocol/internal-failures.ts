/**
 * Internal failures of the request handler logged, with their stack and the request's id. A
 * method that throws something other than an A2A error (a bug, a store answering something
 * unexpected) is answered as an internal error, with a message asking the client to report the
 * request's X-Request-Id; on JSON-RPC and HTTP+JSON nothing else was written (the SDK answers it
 * and drops the error, the answer sanitizer replaces its message), so the request id led an
 * operator to the request's line alone, never to the cause. Only the gRPC door logged it (the
 * message, without a stack).
 *
 * The error then goes on as the generic internal error (INTERNAL_MESSAGE), whose gRPC status the
 * call guard knows as already logged. Streams are left as they are: the SDK logs an error in a
 * stream itself (the console, bridged into the log). A refusal the scope names (storage
 * unavailable, over a budget) is no internal failure and is left alone too.
 */
import { A2AError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { INTERNAL_MESSAGE } from '../http/security.js';
import type { Logger } from '../observability/logger.js';
import { currentScope } from '../observability/request-scope.js';
import { retryNamedIn } from '../tasks/storage-unavailable.js';
import { wrapHandlerMethods } from './handler-methods.js';

export function logInternalFailures(handler: A2ARequestHandler, log: Logger): A2ARequestHandler {
  return wrapHandlerMethods(handler, (result, method) => {
    if (!(result instanceof Promise)) return result;
    return result.catch((error: unknown) => {
      if (error instanceof A2AError || retryNamedIn(currentScope()) !== undefined) throw error;
      log.error({ err: error, method }, 'request failed with an internal error');
      throw new Error(INTERNAL_MESSAGE, { cause: error });
    });
  });
}
