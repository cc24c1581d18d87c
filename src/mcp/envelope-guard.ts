/**
 * The JSON-RPC envelope, the Accept header and the MCP-Protocol-Version of an MCP request, checked
 * before the SDK's transport reads them, so that refusals carry the request's id.
 *
 * The envelope: the SDK answers every JSON body that is no JSON-RPC message (no "jsonrpc", an id
 * that is null or a fraction, a "method" that is no string, "params" that are no object, an empty
 * body) with -32700 "Parse error: Invalid JSON-RPC message" and id null: a parse error of a body
 * that parsed, saying nothing of what to fix; and so a member MCP's messages do not have (`"extra"`),
 * a `_meta` that is no object, a response whose result is no object or whose error has no code.
 * This answers -32600 (Invalid Request) naming the member, and what a message of its kind has,
 * with the request's id when it has a usable one, as the A2A door does (protocol/request-guard.ts).
 * A batch whose members all pass (and which holds no initialize nor two requests with one id) and
 * anything else that passes go on to the SDK, which keeps its own checks.
 */
import type { Request, RequestHandler, Response } from 'express';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { sendFailure, type HttpFailure } from '../http/errors.js';
import { describeJsonType, isObject, unsafeIntegerIdNote } from '../lib/json.js';
import { currentScope } from '../observability/request-scope.js';
import { MCP_PROTOCOL_VERSIONS } from './paths.js';

const JSONRPC_INVALID_REQUEST = -32600;
const JSONRPC_SERVER_ERROR = -32000;

/** An id MCP accepts: a string or an integer (MCP: "MUST be a string or integer", not null). */
const isUsableId = (id: unknown): id is string | number => typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));

/** A refusal before the SDK (400 unless said), recorded in the request scope (log line, metrics) as REJECTED with its reason. */
function refuse(req: Request, res: Response, failure: Pick<HttpFailure, 'jsonRpcCode' | 'reason' | 'message' | 'id'> & { httpStatus?: number }): void {
  const scope = currentScope();
  if (scope) Object.assign(scope, { taskState: 'REJECTED', errorCode: failure.reason });
  sendFailure(req, res, { httpStatus: 400, ...failure });
}

/**
 * Why `id` (not a string nor a safe integer) is not usable, naming what came: every unusable id was
 * told "MCP does not allow null", a fraction (1.5) or a boolean too.
 */
function idProblem(id: unknown): string {
  const unsafe = unsafeIntegerIdNote(id);
  if (unsafe) return unsafe;
  if (id === null) return 'MCP does not allow null (leave "id" out only for a notification, which gets no answer)';
  return typeof id === 'number' ? `${String(id)} is not an integer` : `it is ${describeJsonType(id)}`;
}

/** The members of each kind of JSON-RPC message, as MCP reads them (the SDK's schemas refuse any other). */
const REQUEST_MEMBERS = ['jsonrpc', 'id', 'method', 'params'];
const NOTIFICATION_MEMBERS = ['jsonrpc', 'method', 'params'];
const RESULT_MEMBERS = ['jsonrpc', 'id', 'result'];
const ERROR_MEMBERS = ['jsonrpc', 'id', 'error'];
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** `names` as a sentence lists them: "a", "b" and "c". */
const listed = (names: readonly string[]): string => `${names.slice(0, -1).map((n) => JSON.stringify(n)).join(', ')} and ${JSON.stringify(names.at(-1))}`;

/** A member of `body` that a message of its kind does not have, told with the members it has, or undefined. */
function extraMember(body: Record<string, unknown>, members: readonly string[], kind: string): string | undefined {
  const extra = Object.keys(body).find((name) => !members.includes(name));
  return extra === undefined ? undefined : `${JSON.stringify(extra.slice(0, 64))} is not a member of a JSON-RPC ${kind}, whose members are ${listed(members)}: leave it out`;
}

/** What is wrong with a `_meta` (MCP's general field: an object, its progressToken a string or an integer), or undefined. */
function metaProblem(meta: unknown, at: string): string | undefined {
  if (!isObject(meta)) return `"${at}" must be a JSON object (or left out), not ${describeJsonType(meta)}`;
  if ('progressToken' in meta && !isUsableId(meta.progressToken)) return `"${at}.progressToken" must be a string or an integer, not ${describeJsonType(meta.progressToken)}`;
  const related = meta[RELATED_TASK];
  if (related !== undefined && !(isObject(related) && typeof related.taskId === 'string')) return `"${at}.${RELATED_TASK}" must be a JSON object with a string "taskId"`;
  return undefined;
}

/**
 * What is wrong with a response (to a request of the server's: `result` or `error`), or
 * undefined: a result is an object answering an id, an error has an integer code and a string
 * message.
 */
function responseProblem(body: Record<string, unknown>): string | undefined {
  if ('method' in body) return 'a message has "method" (a request or a notification) or "result" / "error" (a response to a request of the server\'s), not both';
  if ('result' in body && 'error' in body) return 'a response has "result" or "error", not both';
  if ('result' in body) {
    if (!isUsableId(body.id)) return `a response's "id" must be the id of the server's request it answers, a string or an integer${'id' in body ? `: ${idProblem(body.id)}` : ''}`;
    if (!isObject(body.result)) return `"result" must be a JSON object, not ${describeJsonType(body.result)}`;
    if ('_meta' in body.result) return metaProblem(body.result._meta, 'result._meta') ?? extraMember(body, RESULT_MEMBERS, 'response');
    return extraMember(body, RESULT_MEMBERS, 'response');
  }
  if ('id' in body && !isUsableId(body.id)) return `"id" must be a string or an integer: ${idProblem(body.id)}`;
  const error = body.error;
  if (!isObject(error) || typeof error.message !== 'string' || !(typeof error.code === 'number' && Number.isSafeInteger(error.code))) {
    return '"error" must be a JSON object with an integer "code" and a string "message", e.g. {"code": -32601, "message": "Method not found"}';
  }
  return extraMember(body, ERROR_MEMBERS, 'error response');
}

/** What is wrong with a single JSON-RPC message's envelope, or undefined. */
function envelopeProblem(body: Record<string, unknown>): string | undefined {
  if (body.jsonrpc !== '2.0') return '"jsonrpc" must be "2.0"';
  if ('result' in body || 'error' in body) return responseProblem(body) ?? (JSONRPCMessageSchema.safeParse(body).success ? undefined : 'it is no JSON-RPC 2.0 response as MCP defines them');
  if (typeof body.method !== 'string' || body.method === '') return '"method" must be the name of an MCP method, e.g. "tools/list"';
  if ('id' in body && !isUsableId(body.id)) return `"id" must be a string or an integer: ${idProblem(body.id)}`;
  if ('params' in body && !isObject(body.params)) return '"params" must be a JSON object';
  // The SDK refused these as a whole with -32700 "Parse error: Invalid JSON-RPC message", id null.
  const extra = 'id' in body ? extraMember(body, REQUEST_MEMBERS, 'request') : extraMember(body, NOTIFICATION_MEMBERS, 'notification');
  if (extra !== undefined) return extra;
  const meta = isObject(body.params) && '_meta' in body.params ? metaProblem(body.params._meta, 'params._meta') : undefined;
  if (meta !== undefined) return meta;
  // Whatever else the SDK's schema refuses (a rule of a later SDK), told as no message rather than its "Parse error".
  return JSONRPCMessageSchema.safeParse(body).success ? undefined : 'it is no JSON-RPC 2.0 message as MCP defines them (a request, a notification or a response)';
}

/**
 * The bound on a batch's messages: the SDK's is 100. Each message is a request of its own (run,
 * counted and budgeted as one: batch-budget.ts), but all are held and answered at once, in one
 * answer built in memory; a client batching its calls needs a few, and 32 leaves it room.
 */
const MAX_BATCH_MESSAGES = 32;

/** A batch's member as its refusals name it: counted from 1, with the batch's size ("message 2 of 3 in the batch"). */
const memberOf = (index: number, batch: unknown[]): string => `message ${index + 1} of ${batch.length} in the batch`;

/**
 * What is wrong with a batch (MCP 2025-03-26; later versions send none), or undefined; nothing of
 * a batch refused here runs. The SDK refused a batch with one unusable member as a whole with
 * -32700 "Parse error: Invalid JSON-RPC message", id null: a parse error of JSON that parsed,
 * naming neither the member nor the problem. Two requests with one id each ran (writes too), but
 * the SDK keys answers by id, so one answer came back for both; and initialize in a batch was
 * told "Only one initialization request is allowed" (id null, no reason) of a batch holding one.
 */
function batchProblem(batch: unknown[]): string | undefined {
  if (batch.length > MAX_BATCH_MESSAGES) return `the batch has ${batch.length} messages; send at most ${MAX_BATCH_MESSAGES} per request`;
  const firstWithId = new Map<string | number, number>();
  for (const [index, message] of batch.entries()) {
    const problem = isObject(message) ? envelopeProblem(message) : `it is ${describeJsonType(message)}, not a JSON-RPC message object`;
    if (problem) return `${memberOf(index, batch)}: ${problem}`;
    const request = message as Record<string, unknown>;
    if (request.method === 'initialize') {
      return `${memberOf(index, batch)} is initialize, which may not be sent in a batch: send initialize alone, as the first request, and the batch after it`;
    }
    // Requests only: a batch's responses (to requests of the server's) are read by their ids too, but answer nothing.
    if (typeof request.method !== 'string' || !isUsableId(request.id)) continue;
    const earlier = firstWithId.get(request.id);
    if (earlier !== undefined) {
      return `messages ${earlier + 1} and ${index + 1} of ${batch.length} in the batch both have "id": ${JSON.stringify(request.id)}; give each request of a batch an id of its own, which its answer carries`;
    }
    firstWithId.set(request.id, index);
  }
  return undefined;
}

const refuseBatch = (req: Request, res: Response, problem: string): void =>
  refuse(req, res, { jsonRpcCode: JSONRPC_INVALID_REQUEST, reason: 'INVALID_REQUEST', message: `Invalid Request: ${problem}.`, id: null });

/** POSTs to the MCP endpoint whose body is one message, or a batch, with an unusable envelope, refused as Invalid Request. */
export const mcpEnvelopeGuard: RequestHandler = (req, res, next) => {
  if (req.method !== 'POST') return next();
  const body: unknown = req.body;
  // No body at all (neither Content-Length nor Transfer-Encoding: `curl -X POST`) is left unread
  // (undefined), as the A2A door's shape guard reads it: it went on to the SDK, which answered
  // 415 "Content-Type must be application/json" without one, and -32700 "Parse error: Invalid
  // JSON", id null, with one. An empty body declared as such (Content-Length: 0) is read as {}.
  const empty = body === undefined || (req.headers['content-length'] === '0' && isObject(body) && Object.keys(body).length === 0);
  // An empty batch is Invalid Request (JSON-RPC 2.0, section 6); the SDK answered 202 with no body,
  // as for a batch of notifications, leaving the client waiting for an answer that never came.
  const emptyBatch = Array.isArray(body) && body.length === 0;
  if (Array.isArray(body) && !emptyBatch) {
    const problem = batchProblem(body);
    return problem === undefined ? next() : refuseBatch(req, res, problem);
  }
  if (!empty && !emptyBatch && !isObject(body)) return next(); // bodies the parser did not read
  const problem = empty ? 'the request body is empty' : emptyBatch ? 'the batch is empty' : envelopeProblem(body as Record<string, unknown>);
  if (!problem) return next();
  const message = `Invalid Request: ${problem}. Send one JSON-RPC 2.0 request, e.g. {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}.`;
  // A response's id is the server's request's, not one the client waits on an answer for.
  const id = isObject(body) && !('result' in body || 'error' in body) && isUsableId(body.id) ? body.id : null;
  refuse(req, res, { jsonRpcCode: JSONRPC_INVALID_REQUEST, reason: 'INVALID_REQUEST', message, id });
};

/** Leaves `name` (lower case) with the one value `value`, where the SDK reads it: the door builds the transport's request from rawHeaders (mcp-door.ts webRequestOf). */
function setOneHeaderValue(req: Request, name: string, value: string): void {
  req.headers[name] = value;
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) if (raw[i]!.toLowerCase() === name) raw.splice(i, 2);
  raw.push(name, value);
}

/**
 * The one MCP version with JSON-RPC batches, 2025-03-26 (and the version a request without
 * MCP-Protocol-Version is taken for). It added them: 2024-11-05's messages (and the SDK's older
 * 2024-10-07) are single, their schema without JSONRPCBatchRequest; 2025-06-18 removed them, its
 * transport saying "The body of the POST request MUST be a single JSON-RPC request, notification,
 * or response", and later versions keep that. A batch sent with 2024-11-05 ran as a 2025-03-26
 * one, as those of later versions had.
 */
const VERSION_WITH_BATCHES = '2025-03-26';

/** How a version without batches came to have none, for the refusal. */
const withoutBatches = (version: string): string =>
  version < VERSION_WITH_BATCHES ? `MCP ${VERSION_WITH_BATCHES} added batches` : 'MCP 2025-06-18 removed batches';

/**
 * The SDK's refusal of an MCP-Protocol-Version it does not speak (MCP 2025-11-25, transports:
 * "MUST respond with 400 Bad Request"), answered here with the request's own id: the SDK
 * answers every transport-level error with id null (JSON-RPC 2.0 keeps null for an id that could
 * not be read), so a client could not tie the refusal to its request. The same check as the
 * SDK's (its version list, the header as it reads it, initialize exempt: the version is not
 * negotiated yet), with the same status, code and text (plus what to send instead). A batch (no
 * one id to give) and a notification are refused the same way with id null: left to the SDK,
 * they got its text without the reason, a header sent twice with two versions was called one
 * unsupported version ("Unsupported protocol version: 2025-06-18, 2025-03-26"), and the log
 * line and metrics counted the refusal as answered.
 *
 * A batch sent with a version that has no batches (every one but 2025-03-26) is refused whole,
 * before any call runs, saying to send its messages one by one: the SDK ran it as it runs a
 * 2025-03-26 batch, so a client of another version that batched by mistake got answers MCP
 * does not define, and one written to the letter of its version could not read them.
 */
export const mcpProtocolVersionGuard: RequestHandler = (req, res, next) => {
  const header = req.headers['mcp-protocol-version'];
  if (req.method !== 'POST' || header === undefined) return next();
  let version = Array.isArray(header) ? header.join(', ') : header;
  // The header sent twice arrives joined ("2025-06-18, 2025-06-18": a client and a proxy that each
  // add it). The same version twice is that version, handed to the SDK as one (it compares the
  // whole value); two versions are refused as more than one, not as one version unsupported.
  const copies = new Set(version.split(',').map((copy) => copy.trim()).filter((copy) => copy !== ''));
  if (copies.size === 1 && version.includes(',') && MCP_PROTOCOL_VERSIONS.includes([...copies][0]!)) {
    version = [...copies][0]!;
    setOneHeaderValue(req, 'mcp-protocol-version', version);
  }
  const body: unknown = req.body;
  if (MCP_PROTOCOL_VERSIONS.includes(version)) {
    if (!Array.isArray(body) || version === VERSION_WITH_BATCHES) return next();
    const problem =
      `MCP-Protocol-Version ${version} takes one JSON-RPC message per POST (${withoutBatches(version)}), and this request holds a batch of ${body.length}: ` +
      `send each message in a POST of its own, or send MCP-Protocol-Version: 2025-03-26, the version with batches`;
    return refuseBatch(req, res, problem);
  }
  if (isObject(body) && body.method === 'initialize') return next();
  const message =
    copies.size > 1
      ? `Bad Request: MCP-Protocol-Version was sent more than once, with different versions (${version.slice(0, 64)}): send exactly one, the version initialize negotiated (supported versions: ${MCP_PROTOCOL_VERSIONS.join(', ')}).`
      : // An empty header was told as "Unsupported protocol version:  (…)", its value invisible.
        `Bad Request: Unsupported protocol version: ${copies.size === 0 ? 'an empty MCP-Protocol-Version header' : version.slice(0, 64)} (supported versions: ${MCP_PROTOCOL_VERSIONS.join(', ')}). Send the version initialize negotiated, or leave MCP-Protocol-Version out.`;
  refuse(req, res, { jsonRpcCode: JSONRPC_SERVER_ERROR, reason: 'UNSUPPORTED_PROTOCOL_VERSION', message, id: isObject(body) && isUsableId(body.id) ? body.id : null });
};

/**
 * MCP Streamable HTTP: a POST "MUST include an Accept header, listing both application/json and
 * text/event-stream". The SDK refuses one that does not with 406 and id null, and its message
 * does not say which header to send (a client without Accept, or with fetch's and curl's default
 * of any type, read "Client must accept both ..."). The same check as the SDK's (a substring test of
 * each type, as it makes it: Accept is a list), answered with the request's id when it has a
 * usable one (a batch has none), naming the header to send and what came. Media types are
 * case-insensitive (RFC 9110 8.3.1), and the SDK's test is not: it refused "Accept:
 * Application/JSON, Text/Event-Stream" with 406, telling a client that accepted both to accept
 * both. The header passes in lower case, as the SDK then reads it.
 */
export const mcpAcceptGuard: RequestHandler = (req, res, next) => {
  if (req.method !== 'POST') return next();
  const accept = req.headers.accept;
  const types = accept?.toLowerCase();
  if (types?.includes('application/json') && types.includes('text/event-stream')) {
    if (types !== accept) setOneHeaderValue(req, 'accept', types);
    return next();
  }
  const body: unknown = req.body;
  const sent = accept === undefined ? 'no Accept header came' : `it came with Accept: ${accept.slice(0, 100)}`;
  const message = `Not Acceptable: MCP Streamable HTTP requests must accept both JSON and an event stream (${sent}). Send the header Accept: application/json, text/event-stream.`;
  refuse(req, res, { httpStatus: 406, jsonRpcCode: JSONRPC_SERVER_ERROR, reason: 'NOT_ACCEPTABLE', message, id: isObject(body) && isUsableId(body.id) ? body.id : null });
};
