/**
 * The bytes a batch's answers may take together. A batch is one HTTP answer, built in memory
 * whole before it is sent (JSON, no stream), and its messages are cheap to ask for: one POST of 6
 * KB asking 100 times for tools/list was answered with 3.5 MB. Past the cap, a call's answer is
 * replaced by a short error that says so (the call ran: a read can be asked again, alone or in a
 * smaller batch), except the first answer sent, which is answered whatever its size as a request
 * of its own would be, and the answer of a tool that writes, which is never lost (a registration
 * stored must be acknowledged; it is a few KB).
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJSONRPCErrorResponse, isJSONRPCResultResponse, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { isObject } from '../lib/json.js';
import { currentScope } from '../observability/request-scope.js';
import { formatBytes } from '../validation/size.js';

const MAX_BATCH_ANSWER_BYTES = 1024 * 1024;
const JSONRPC_SERVER_ERROR = -32000;

/** The ids of the batch's calls of the tools in `writes`. */
function writingCalls(batch: unknown[], writes: ReadonlySet<string>): Set<unknown> {
  const ids = new Set<unknown>();
  for (const message of batch) {
    if (!isObject(message) || message.method !== 'tools/call' || !isObject(message.params)) continue;
    if (typeof message.params.name === 'string' && writes.has(message.params.name)) ids.add(message.id);
  }
  return ids;
}

/** Keeps the answers to `batch` within MAX_BATCH_ANSWER_BYTES (call after the other wrappers of send, so this one runs first). */
export function capBatchAnswers(transport: Transport, batch: unknown[], writes: ReadonlySet<string>): void {
  const writing = writingCalls(batch, writes);
  let used = 0;
  const send = transport.send.bind(transport);
  transport.send = (message: JSONRPCMessage, options) => {
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return send(message, options);
    const bytes = Buffer.byteLength(JSON.stringify(message));
    if (used === 0 || used + bytes <= MAX_BATCH_ANSWER_BYTES || writing.has(message.id)) {
      used += bytes;
      return send(message, options);
    }
    // The call's scope (runCallsInScopes): its log line and metrics say its answer was left out.
    const scope = currentScope();
    if (scope) Object.assign(scope, { taskState: scope.taskState ?? 'REJECTED', errorCode: 'BATCH_ANSWER_TOO_LARGE' });
    const error = {
      code: JSONRPC_SERVER_ERROR,
      message:
        `This call ran, but its answer (${formatBytes(bytes)}) is left out: a batch's answers take at most ` +
        `${formatBytes(MAX_BATCH_ANSWER_BYTES)} together, and the answers before it took ${formatBytes(used)}. ` +
        'Send it again alone, or in a smaller batch.',
      data: { reason: 'BATCH_ANSWER_TOO_LARGE', maxBytes: MAX_BATCH_ANSWER_BYTES },
    };
    return send({ jsonrpc: '2.0', id: message.id, error }, options);
  };
}
