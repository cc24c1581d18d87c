/**
 * The ErrorInfo of an A2A error, kept for v0.3 JSON-RPC clients. The SDK's v0.3 JSON-RPC layer
 * (legacyCompat) answers an A2AError with its code and message only: the google.rpc.ErrorInfo
 * the v1.0 converter puts in `data`, with its reason and metadata (the field a request lacks,
 * `{"field": "id"}`), never reached a v0.3 client, which saw "id is required" (a push config's
 * task) without the field the other bindings name, and TaskNotFound without its reason. That layer keeps the `data` of the
 * SDK's JSON-RPC error classes (JsonRpcRequestMalformedError, ...), which the v1.0 converter
 * answers exactly as it answers their plain counterparts. So the JSON-RPC door hands the SDK a
 * request handler whose A2A errors are those classes, carrying their ErrorInfo as `data`.
 */
import {
  A2AError,
  isJsonRpcError,
  JsonRpcContentTypeNotSupportedError,
  JsonRpcExtendedAgentCardNotConfiguredError,
  JsonRpcExtensionSupportRequiredError,
  JsonRpcInvalidAgentResponseError,
  JsonRpcPushNotificationNotSupportedError,
  JsonRpcRequestMalformedError,
  JsonRpcTaskNotCancelableError,
  JsonRpcTaskNotFoundError,
  JsonRpcUnsupportedOperationError,
  JsonRpcVersionNotSupportedError,
  type JsonRpcA2AErrorOptions,
} from '@a2a-js/sdk/errors';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { wrapHandlerMethods } from './handler-methods.js';

/** The JSON-RPC class of each A2A error, by the error's name. */
const JSON_RPC_CLASSES: Readonly<Record<string, new (options?: JsonRpcA2AErrorOptions) => A2AError>> = {
  TaskNotFoundError: JsonRpcTaskNotFoundError,
  TaskNotCancelableError: JsonRpcTaskNotCancelableError,
  PushNotificationNotSupportedError: JsonRpcPushNotificationNotSupportedError,
  UnsupportedOperationError: JsonRpcUnsupportedOperationError,
  ContentTypeNotSupportedError: JsonRpcContentTypeNotSupportedError,
  InvalidAgentResponseError: JsonRpcInvalidAgentResponseError,
  ExtendedAgentCardNotConfiguredError: JsonRpcExtendedAgentCardNotConfiguredError,
  ExtensionSupportRequiredError: JsonRpcExtensionSupportRequiredError,
  VersionNotSupportedError: JsonRpcVersionNotSupportedError,
  RequestMalformedError: JsonRpcRequestMalformedError,
};

/** An A2A error as its JSON-RPC class with its ErrorInfo as data; anything else as it is. */
function withErrorData(error: unknown): unknown {
  if (!(error instanceof A2AError) || isJsonRpcError(error)) return error;
  const JsonRpcClass = JSON_RPC_CLASSES[error.name];
  if (!JsonRpcClass) return error; // the registry's own (storage): the answer sanitizer restores theirs
  const converted = new JsonRpcClass({ message: error.message, metadata: error.metadata, data: [error.toErrorInfo()] });
  // Where it was thrown, for the SDK's console line about a stream that failed (not here).
  if (error.stack !== undefined) converted.stack = error.stack;
  return converted;
}

async function* rethrowingWithData<T>(events: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* events;
  } catch (error) {
    throw withErrorData(error);
  }
}

const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> =>
  typeof value === 'object' && value !== null && typeof (value as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === 'function';

/** `handler`, whose methods' A2A errors (rejections, and those a stream throws) carry their ErrorInfo as JSON-RPC data. */
export function withJsonRpcErrorData(handler: A2ARequestHandler): A2ARequestHandler {
  return wrapHandlerMethods(handler, (result) => {
    if (result instanceof Promise) {
      return result.catch((error: unknown) => {
        throw withErrorData(error);
      });
    }
    return isAsyncIterable(result) ? rethrowingWithData(result) : result;
  });
}
