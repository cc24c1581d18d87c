/**
 * The tools/list answer, made once per door and then answered from memory. It is the same for
 * every caller and request (the tools and their schemas are fixed by the door's configuration:
 * the query limit), yet the SDK built it anew for every call, converting nine zod schemas to JSON
 * Schema: about 3 ms of CPU a call (0.3 s for a batch of 100), the larger part of a tools/list. The first call is answered by the SDK
 * (so the list is what it makes, in MCP's default dialect: inDefaultDialect), and its result kept.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJSONRPCRequest, isJSONRPCResultResponse, type Result } from '@modelcontextprotocol/sdk/types.js';
import { isObject } from '../lib/json.js';

/** The dialect the SDK declares on every schema it converts from zod (its converter's fixed target). */
const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

/**
 * The tools with their input and output schemas in MCP's default dialect, JSON Schema 2020-12:
 * without the `"$schema": "http://json-schema.org/draft-07/schema#"` the SDK puts on each. MCP
 * 2025-11-25 (Basic, "JSON Schema Usage"): a schema without `$schema` "defaults to JSON Schema
 * 2020-12"; implementations "MUST support at least 2020-12" (draft-07 is optional) and "MUST
 * handle unsupported dialects gracefully by returning an appropriate error", so a client that
 * supports 2020-12 alone, as the specification lets it, refused every tool. The keywords the
 * tools' schemas use (type, properties, required, additionalProperties, enum, const, pattern,
 * items as one schema, min/max*) mean the same in both dialects: left without `$schema`, they are
 * read alike by a 2020-12 client and by an older one that assumes draft-07 (reach-mcp.test.ts
 * compiles them with Ajv's 2020-12 dialect, strictly).
 */
function inDefaultDialect(result: Result): Result {
  if (!Array.isArray(result.tools)) return result;
  const plain = (schema: unknown): unknown => {
    if (!isObject(schema) || schema.$schema !== DRAFT_07) return schema;
    const { $schema: _draft07, ...rest } = schema;
    return rest;
  };
  const tools: unknown[] = result.tools;
  return {
    ...result,
    tools: tools.map((tool) =>
      isObject(tool) ? { ...tool, inputSchema: plain(tool.inputSchema), ...('outputSchema' in tool ? { outputSchema: plain(tool.outputSchema) } : {}) } : tool,
    ),
  };
}

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
    if (isJSONRPCResultResponse(message) && asked.delete(message.id)) {
      cache.result ??= inDefaultDialect(message.result);
      return send({ ...message, result: cache.result }, options);
    }
    return send(message, options);
  };
}
