/**
 * How the MCP endpoint words a refusal made before the MCP SDK sees the request (flood, body,
 * host, auth; the port's answer while the registry starts up): a JSON-RPC error, like the SDK's
 * own, whose data names the reason and, for a refusal that passes, when to retry.
 */
import type { FailureFormatter } from '../http/errors.js';

const JSONRPC_SERVER_ERROR = -32000;

export const mcpFailureFormat: FailureFormatter = (failure) => {
  const data: Record<string, unknown> = { reason: failure.reason };
  if (failure.retryAfterSeconds !== undefined) data.retryAfterSeconds = failure.retryAfterSeconds;
  // The request's id when the refusal came after the body was read (a refused token), as on A2A.
  // A body's media type refused (a charset other than UTF-8) takes the code the MCP SDK gives a
  // wrong Content-Type, -32000, not A2A's -32005.
  const code = failure.reason === 'CONTENT_TYPE_NOT_SUPPORTED' ? JSONRPC_SERVER_ERROR : failure.jsonRpcCode;
  return { body: { jsonrpc: '2.0', id: failure.id ?? null, error: { code, message: failure.message, data } } };
};
