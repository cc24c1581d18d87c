/**
 * The tools/list answer, made once per door and then answered from memory. It is the same for
 * every caller and request (the tools and their schemas are fixed by the door's configuration:
 * the query limit), yet the SDK built it anew for every call, converting nine zod schemas to JSON
 * Schema: about 3 ms of CPU a call (0.3 s for a batch of 100), the larger part of a tools/list. The first call is answered by the SDK
 * (so the list is exactly what it makes), and its result kept.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJSONRPCRequest, isJSONRPCResultResponse, type Result } from '@modelcontextprotocol/sdk/types.js';

export interface ToolsListCache {
  result?: Result;
}

/**
 * Answers tools/list from `cache` once it holds the list, else lets the SDK answer and keeps its
 * list. Install before guardParams, whose wrapper must see the request first (it refuses a cursor).
 */
export function answerToolsListFrom(cache: ToolsListCache, transport: Transport): void {
  const deliver = transport.onmessage;
  if (!deliver) throw new Error('answerToolsListFrom: connect the server to the transport first');
  const asked = new Set<string | number>();
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message) && message.method === 'tools/list') {
      // A send that fails means the client has gone: there is nobody left to tell.
      if (cache.result) return void transport.send({ jsonrpc: '2.0', id: message.id, result: cache.result }).catch(() => undefined);
      asked.add(message.id);
    }
    deliver(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (isJSONRPCResultResponse(message) && asked.delete(message.id)) cache.result ??= message.result;
    return send(message, options);
  };
}
