/**
 * The params of MCP requests, checked on the transport's way in, before the SDK's handlers.
 *
 * Why: the SDK parses a request's params with its own schema inside the handler it registered,
 * and a mismatch escapes as a ZodError, which it answers as JSON-RPC -32603 (internal error)
 * with the zod issues as multi-line JSON for a message (`tools/call` with `"arguments": "x"`).
 * The same schemas, applied here, answer -32602 (invalid params) with one line that says where
 * and what, and the SDK runs only requests it will accept. This sits after the transport's own
 * checks (Accept, content type, protocol version, JSON-RPC envelope), which keep their answers;
 * a method not listed here keeps the SDK's (-32601 for one this server does not handle).
 *
 * Task augmentation (`params.task`, MCP 2025-11-25) is dropped on the way in: a receiver that
 * does not declare the tasks capability "MUST process requests of that type normally, ignoring
 * any task-augmentation metadata", and this server declares none (its tools answer at once).
 * The SDK refused such a tools/call with -32603, "Server does not support task creation".
 *
 * A tools/list cursor is refused: MCP's pagination says "Invalid cursors SHOULD result in an
 * error with code -32602", and every cursor is invalid here, where tools/list answers all the
 * tools at once and gives no nextCursor. The SDK ignored it and answered the whole list again,
 * which a client paging by hand reads as a second page.
 *
 * A tools/call whose arguments the tool's input schema does not take is answered here too, as
 * that tool's refusal (a tool error, tools.ts): the SDK answered it with its own text.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type CallToolResult,
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  isJSONRPCRequest,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { describeJsonType, isObject, pointer, resolvePointer } from '../lib/json.js';

/** The SDK's schemas of the requests this server answers (those its handlers parse with). */
const REQUEST_SCHEMAS: ReadonlyMap<string, z.ZodType> = new Map<string, z.ZodType>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
]);

/** zod's type names in the words of JSON. */
const JSON_TYPE_NAMES: Record<string, string> = { record: 'an object', object: 'an object', array: 'an array', string: 'a string', number: 'a number', int: 'an integer', boolean: 'a boolean' };
const MAX_ISSUES = 3;

function issueText(issue: z.core.$ZodIssue, request: JSONRPCRequest): string {
  const at = pointer('', ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p)));
  if (issue.code === 'invalid_type') {
    const found = resolvePointer(request, at);
    const expected = JSON_TYPE_NAMES[issue.expected] ?? issue.expected;
    return found === undefined ? `${at}: missing (${expected})` : `${at}: expected ${expected}, got ${describeJsonType(found)}`;
  }
  return `${at}: ${issue.message.replace(/\s+/g, ' ')}`;
}

/** What is wrong with a request's params, in one line; undefined when the SDK will accept them. */
function paramsProblem(request: JSONRPCRequest, tools: ReadonlySet<string>): string | undefined {
  const schema = REQUEST_SCHEMAS.get(request.method);
  const parsed = schema?.safeParse(request);
  if (!parsed) return undefined;
  if (parsed.success) {
    if (request.method === 'tools/list' && isObject(request.params) && request.params.cursor !== undefined) {
      return `Invalid params for tools/list: /params/cursor: this server issues no cursors (tools/list answers every tool at once, without nextCursor); leave cursor out.`;
    }
    // An unknown tool is a protocol error (MCP "Tools", Error Handling: -32602, "Unknown tool");
    // the SDK answered it as a tool's own failed result, which a client does not read as "no such tool".
    const name = request.method === 'tools/call' && isObject(request.params) ? request.params.name : undefined;
    if (typeof name === 'string' && !tools.has(name)) return `Unknown tool: ${JSON.stringify(name.slice(0, 100))}. This server's tools are ${[...tools].join(', ')} (tools/list describes them).`;
    return undefined;
  }
  const issues = parsed.error.issues;
  const more = issues.length > MAX_ISSUES ? ` (and ${issues.length - MAX_ISSUES} more)` : '';
  return `Invalid params for ${request.method}: ${issues.slice(0, MAX_ISSUES).map((i) => issueText(i, request)).join('; ')}${more}.`;
}

/** The request without its task augmentation (`params.task`), which this server ignores. */
function withoutTask(request: JSONRPCRequest): JSONRPCRequest {
  if (!isObject(request.params) || !('task' in request.params)) return request;
  const { task: _ignored, ...params } = request.params;
  return { ...request, params };
}

export interface ParamsGuard {
  /** The tools the server has: a call to another is -32602. */
  tools: ReadonlySet<string>;
  /** The refusal of a tool call's arguments, as the tool's error result, or undefined when the tool takes them. */
  checkArguments: (tool: string, args: unknown) => CallToolResult | undefined;
  /** Told when the guard answers -32602. */
  refused: () => void;
}

/** The tool a tools/call request names and its arguments (params already checked by paramsProblem). */
function toolCall(request: JSONRPCRequest): { name: string; args: unknown } | undefined {
  if (request.method !== 'tools/call' || !isObject(request.params) || typeof request.params.name !== 'string') return undefined;
  return { name: request.params.name, args: request.params.arguments };
}

/**
 * Wraps the transport's delivery to the connected server (call after server.connect): a request
 * whose params the SDK would refuse, or that calls a tool not in `tools`, is answered -32602 here,
 * and `refused` is told; a tool call with arguments its tool does not take gets the tool's refusal.
 */
export function guardParams(transport: Transport, guard: ParamsGuard): void {
  const deliver = transport.onmessage;
  if (!deliver) throw new Error('guardParams: connect the server to the transport first');
  // A send that fails means the client has gone: there is nobody left to tell.
  const answer = (message: Parameters<Transport['send']>[0]) => void transport.send(message).catch(() => undefined);
  transport.onmessage = (received, extra) => {
    if (!isJSONRPCRequest(received)) return deliver(received, extra);
    const message = withoutTask(received);
    const problem = paramsProblem(message, guard.tools);
    if (problem !== undefined) {
      guard.refused();
      return answer({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InvalidParams, message: problem } });
    }
    const call = toolCall(message);
    const refusal = call && guard.checkArguments(call.name, call.args);
    if (refusal) return answer({ jsonrpc: '2.0', id: message.id, result: refusal });
    deliver(message, extra);
  };
}
