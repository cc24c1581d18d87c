/**
 * Checks the shape of a request before the SDK sees it, so hostile or malformed input gets a
 * precise error instead of reaching code that assumes well-formed JSON-RPC:
 * - while the body is read (http/json-body.ts): its declared length, nesting depth and UTF-8, on the raw bytes;
 * - after it is parsed: the JSON-RPC envelope (no batches, `jsonrpc`, `method` (one of the
 *   negotiated version's, or an error naming where it is), `id`, `params`)
 *   and the parts of a message (at least one; objects; `raw` / v0.3 `file.bytes` strict base64;
 *   a v0.3 part with a `kind` it has, that kind's content, and its file's strings), and the
 *   types of the message's own fields (ids, extensions, referenceTaskIds: message-fields.ts).
 * Without these, `parts: [null]` or `raw: 5` end as -32603 with a JavaScript error message, a
 * deeply nested body overflows the stack inside the SDK, and invalid base64 is silently decoded
 * to garbage (Buffer.from ignores what it cannot read).
 */
import type { RequestHandler } from 'express';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { codePointPrefix } from '../lib/code-points.js';
import { isObject, unsafeIntegerIdNote } from '../lib/json.js';
import { currentScope } from '../observability/request-scope.js';
import { methodNamed, notAnObjectMessage, notFoundHandler, routeTakes, sendFailure } from '../http/errors.js';
import { LEGACY_VERSION, VERSION_PARAMETER, isLegacyRequest, namesVersion } from './versions.js';
import { sendA2AError, type A2ABinding } from './a2a-errors.js';
import { missingLegacyMessageIn, missingMessageIn } from './message-required.js';
import { messageFieldProblem } from './message-fields.js';
import { partWords } from '../operations/part-words.js';

const JSONRPC_INVALID_REQUEST = -32600;
const JSONRPC_METHOD_NOT_FOUND = -32601;
const JSONRPC_INVALID_PARAMS = -32602;
const MAX_ID_CHARS = 256;
/** Methods whose params carry a message with parts (v1.0 and v0.3 names). */
const MESSAGE_METHODS = new Set(['SendMessage', 'SendStreamingMessage', 'message/send', 'message/stream']);
/** Standard base64 (RFC 4648 section 4) with padding; base64url is accepted too. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** The A2A v1.0 JSON-RPC methods (A2A 9.4) and their v0.3 names (A2A 0.3 section 7; ListTasks has none). */
const V1_TO_V03 = new Map<string, string | undefined>([
  ['SendMessage', 'message/send'],
  ['SendStreamingMessage', 'message/stream'],
  ['GetTask', 'tasks/get'],
  ['ListTasks', undefined],
  ['CancelTask', 'tasks/cancel'],
  ['SubscribeToTask', 'tasks/resubscribe'],
  ['CreateTaskPushNotificationConfig', 'tasks/pushNotificationConfig/set'],
  ['GetTaskPushNotificationConfig', 'tasks/pushNotificationConfig/get'],
  ['ListTaskPushNotificationConfigs', 'tasks/pushNotificationConfig/list'],
  ['DeleteTaskPushNotificationConfig', 'tasks/pushNotificationConfig/delete'],
  ['GetExtendedAgentCard', 'agent/getAuthenticatedExtendedCard'],
]);
const V03_TO_V1 = new Map([...V1_TO_V03].filter((pair): pair is [string, string] => pair[1] !== undefined).map(([v1, v03]) => [v03, v1]));

/**
 * The methods whose request has no REQUIRED field, so a JSON-RPC request may omit its params
 * (JSON-RPC 2.0 4: "This member MAY be omitted"): GetExtendedAgentCard, and ListTasks, whose
 * fields are all optional filters (A2A ListTasksRequest). `{"method": "ListTasks"}` lists every
 * task of the caller, as `"params": {}` does; it was refused saying params are required.
 */
const PARAMS_OPTIONAL = new Set(['GetExtendedAgentCard', 'agent/getAuthenticatedExtendedCard', 'ListTasks']);

/** MCP's method names (lifecycle, tools, resources, prompts, completion, logging, notifications), none of them A2A's. */
const MCP_METHOD = /^(?:initialize|ping|(?:tools|resources|prompts|completion|logging|notifications|sampling|elicitation|roots)\/.+)$/;

/** An A2A JSON-RPC method name, of v1.0 or v0.3 (for doors that tell a caller it reached the wrong endpoint). */
export const isA2AMethod = (method: string): boolean => V1_TO_V03.has(method) || V03_TO_V1.has(method);

/**
 * Why `method` is no method of the negotiated version (the header after negotiateVersion), or
 * undefined. The SDK answered a v0.3 name in a v1.0 request (message/send with A2A-Version: 1.0,
 * as clients written for v0.3 send once they add the header) with a bare "Invalid method.", and a
 * v1.0 name without the header with "Method not found: SendMessage": neither said that the
 * method exists in the other version, nor how to reach it.
 */
function unknownMethod(method: string, version: string | undefined, namedVersion: boolean): string | undefined {
  const shown = JSON.stringify(codePointPrefix(method, 64));
  // An MCP client pointed at the A2A endpoint (the registry is an MCP server too) was only shown A2A's methods.
  const mcp = MCP_METHOD.test(method) ? ` ${shown} is an MCP method: MCP clients connect to /mcp (Streamable HTTP).` : '';
  if (version === LEGACY_VERSION) {
    if (V03_TO_V1.has(method)) return undefined;
    if (V1_TO_V03.has(method)) {
      const legacyName = V1_TO_V03.get(method);
      // A client that sent "A2A-Version: 0.3" was told its request had none.
      const why = namedVersion ? `A2A-Version: ${LEGACY_VERSION}` : 'a request without A2A-Version is';
      return `Method not found: ${shown} is an A2A v1.0 method, and this request is v${LEGACY_VERSION} (${why}). Send "A2A-Version: 1.0"${legacyName ? `, or call its v${LEGACY_VERSION} name ${legacyName}` : ''}.`;
    }
    return `Method not found: ${shown}. The A2A v${LEGACY_VERSION} methods are ${[...V03_TO_V1.keys()].join(', ')}; with "A2A-Version: 1.0", ${[...V1_TO_V03.keys()].join(', ')}.${mcp}`;
  }
  if (V1_TO_V03.has(method)) return undefined;
  const current = V03_TO_V1.get(method);
  if (current) return `Method not found: ${shown} is the A2A v${LEGACY_VERSION} name of ${current}, and this request is v1.0 (A2A-Version: 1.0). Call ${current}, or send the request without A2A-Version (v${LEGACY_VERSION}).`;
  return `Method not found: ${shown}. The A2A v1.0 methods are ${[...V1_TO_V03.keys()].join(', ')}.${mcp}`;
}

/** Padded standard base64, or unpadded base64url (a length of 4n+1 cannot encode anything). */
export const isStrictBase64 = (s: string): boolean => (s.length % 4 === 0 && BASE64.test(s)) || (s.length % 4 !== 1 && BASE64URL.test(s));

/** The members of a v1.0 part's content oneof. */
const PART_CONTENTS = ['text', 'raw', 'url', 'data'] as const;

/** What is wrong with a message's parts, or undefined. `at` is the path prefix for messages; `legacy`: a v0.3 request. */
function partsProblem(message: unknown, at: string, legacy = false): string | undefined {
  if (!isObject(message)) return undefined; // the SDK reports a missing or non-object message itself
  const parts = message.parts;
  // A2A 3.3.2 / 9.5: a message without parts is a validation error of the request (-32602,
  // HTTP 400), which is how the spec's own example answers it, not a task the agent declines.
  // Without its parts member (or null) too: ProtoJSON reads an absent or null repeated field as
  // the empty list, as gRPC's binary form has no other, and v0.3 requires `parts`. (Left to the
  // SDK, a v1.0 message without it was a REJECTED task, a v0.3 one an error naming no field.)
  // Examples in the request's generation: v1.0's, copied into a v0.3 request, were refused next for having no "kind".
  const needsAPart = partWords(legacy ? 'v0.3' : 'v1.0').needsAPart;
  if (parts === undefined || parts === null) return `${at}.parts is missing: ${needsAPart}`;
  if (!Array.isArray(parts)) return `${at}.parts must be an array of parts`;
  if (parts.length === 0) return `${at}.parts is empty: ${needsAPart}`;
  for (let i = 0; i < parts.length; i++) {
    const part: unknown = parts[i];
    const here = `${at}.parts[${i}]`;
    if (!isObject(part)) {
      return legacy
        ? `${here} must be an object such as {"kind": "text", "text": "..."} or {"kind": "data", "data": {...}}`
        : `${here} must be an object such as {"text": "..."} or {"data": {...}, "mediaType": "application/json"}`;
    }
    const legacyProblem = legacy ? legacyPartProblem(part, here) : undefined;
    if (legacyProblem) return legacyProblem;
    // null is "not set" for these (ProtoJSON: null is every field's default; the SDK's reader
    // reads it so, as the oneof check below and a v0.3 file's strings do): a client that writes
    // its unset fields as null ("filename": null, "mediaType": null) was refused "must be a string".
    const set = (value: unknown): boolean => value !== undefined && value !== null;
    if (set(part.raw) && typeof part.raw !== 'string') return `${here}.raw must be a base64 string`;
    if (typeof part.raw === 'string' && !isStrictBase64(part.raw)) return `${here}.raw is not valid base64`;
    const file = part.file;
    if (file !== undefined) {
      if (!isObject(file)) return `${here}.file must be an object`;
      if ('bytes' in file && typeof file.bytes !== 'string') return `${here}.file.bytes must be a base64 string`;
      if (typeof file.bytes === 'string' && !isStrictBase64(file.bytes)) return `${here}.file.bytes is not valid base64`;
    }
    for (const key of ['text', 'filename', 'mediaType', 'url'] as const) {
      if (set(part[key]) && typeof part[key] !== 'string') return `${here}.${key} must be a string`;
    }
    // A v1.0 part's content is a oneof (A2A 4.1.6): ProtoJSON refuses a part with two of them,
    // and the SDK took the first it looked for and dropped the rest, so {"text": "x", "data":
    // {"register": ...}} ran a search for "x" and answered COMPLETED. (A v0.3 part says which
    // it is with `kind`; other members are unknown fields there.)
    if (!('kind' in part)) {
      const contents = PART_CONTENTS.filter((key) => part[key] !== undefined && part[key] !== null);
      if (contents.length > 1) {
        return `${here} has ${contents.map((key) => `"${key}"`).join(' and ')}: a part holds exactly one of "text", "raw", "url" and "data"; send each in a part of its own`;
      }
    }
    // A v0.3 file part ({"kind": "file", "file": {"bytes" | "uri", ...}}) in a v1.0 request has no
    // v1.0 content: the SDK read it as an empty part, and the answer said "Part 0 is empty".
    if (!legacy && part.file !== undefined && PART_CONTENTS.every((key) => part[key] === undefined || part[key] === null)) {
      return `${here} is a v${LEGACY_VERSION} file part ("file"), and this request is v1.0: a v1.0 part carries a file as {"raw": "<base64>", "filename": "agent-card.json", "mediaType": "application/json"}, or {"url": "https://..."}`;
    }
    const partMetadata = metadataProblem(part.metadata, `${here}.metadata`);
    if (partMetadata) return partMetadata;
  }
  return metadataProblem(message.metadata, `${at}.metadata`);
}

/**
 * A `metadata` (a request's, its message's, a part's) that is no JSON object, or undefined. It is
 * a google.protobuf.Struct in v1.0 (a map in v0.3), which ProtoJSON refuses as any other value;
 * the SDK carried "x" or 5 along, and the client never learned that its metadata was not read.
 */
function metadataProblem(value: unknown, path: string): string | undefined {
  return value === undefined || value === null || isObject(value) ? undefined : `${path} must be a JSON object (or left out), not ${Array.isArray(value) ? 'an array' : typeof value}`;
}

/**
 * What is wrong with a message's configuration.acceptedOutputModes, or undefined. The SDK read a
 * list that is no array ("text/plain") as no list, and answered with every part, as if the
 * client had said nothing.
 */
function outputModesProblem(configuration: unknown, at: string): string | undefined {
  if (!isObject(configuration)) return undefined;
  const modes = configuration.acceptedOutputModes;
  if (modes === undefined || modes === null) return undefined;
  if (Array.isArray(modes) && modes.every((mode) => typeof mode === 'string')) return undefined;
  return `${at}.acceptedOutputModes must be a list of the media types the client accepts in the answer, e.g. ["application/json", "text/plain"] (or ["text/plain"] for the summaries alone)`;
}

/** The kinds of a v0.3 part (A2A 0.3 6.5). */
const LEGACY_PART_KINDS = new Set(['text', 'file', 'data']);
/** The string members of a v0.3 file (FileWithBytes / FileWithUri) besides its bytes. */
const LEGACY_FILE_STRINGS = ['name', 'mimeType', 'uri'] as const;

/**
 * What is wrong with a v0.3 message part (an object) at `here`, or undefined:
 * - a `kind` it does not know: the SDK said "Invalid v0.3 part kind: undefined", which told a
 *   v1.0 client that forgot its A2A-Version header neither that its request was read as v0.3 nor
 *   what to send;
 * - no content for its kind (A2A 0.3 6.5: a text part's `text`, a data part's `data`, a file
 *   part's `file` holding `bytes` or `uri`; null is none). The SDK's reader read
 *   `{"kind": "file"}` as it reads a file, and its TypeError ended as -32603, an internal error;
 *   a file without bytes or URI got "Invalid file part: missing `bytes` or `uri`" naming no part,
 *   a data part without data an error about translating v1 parts. Worded as v0.3 writes parts
 *   (operations/part-words.ts), as the gRPC guard words its v0.3 service's empty parts;
 * - a file's name, mimeType or uri that is no string.
 */
function legacyPartProblem(part: Record<string, unknown>, here: string): string | undefined {
  const kind = part.kind;
  if (!(typeof kind === 'string' && LEGACY_PART_KINDS.has(kind))) {
    const what = kind === undefined ? 'has no "kind"' : `has kind ${JSON.stringify(codePointPrefix(String(kind), 32))}`;
    return `${here} ${what}: a v${LEGACY_VERSION} part is {"kind": "text", "text": ...}, {"kind": "file", "file": {...}} or {"kind": "data", "data": {...}}. This request is v${LEGACY_VERSION} (no A2A-Version header, or ${LEGACY_VERSION}); for v1.0 parts such as {"text": ...}, send "A2A-Version: 1.0" and call the v1.0 method (SendMessage, SendStreamingMessage)`;
  }
  const words = partWords('v0.3');
  const present = (value: unknown): boolean => value !== undefined && value !== null;
  if (kind === 'text') return present(part.text) ? undefined : `${here} is a text part without its "text": send ${words.textPart}`;
  if (kind === 'data') return present(part.data) ? undefined : `${here} is a data part without its "data": send a data part ${words.dataPart}`;
  const file = part.file;
  const lacks = (what: string) => `${here} is a file part ${what}: send the document's bytes in ${words.fileBytes} (${words.filePart})`;
  if (!present(file)) return lacks('without its "file"');
  if (!isObject(file)) return lacks(`whose "file" is no object`);
  if (!present(file.bytes) && !present(file.uri)) return lacks(`with neither ${words.fileBytes} nor ${words.fileUri}`);
  // The file's strings, as v1.0's filename, mediaType and url are checked (partsProblem): the
  // SDK's reader hands name and mimeType on as they are, and the parser's toLowerCase() of a
  // number ended as -32603; a URI of 5 was told the registry does not fetch URIs. (null is none,
  // as the reader reads it; `bytes` is checked beside v1.0's `raw`.)
  const notString = LEGACY_FILE_STRINGS.find((key) => present(file[key]) && typeof file[key] !== 'string');
  return notString && `${here}.file.${notString} must be a string`;
}

/** Members that turn a parsed JSON object into something String() cannot convert. */
const CONVERSION_MEMBERS = ['toString', 'valueOf'];
/** Opaque maps the SDK carries without converting: documents in data parts, metadata. */
const OPAQUE_KEYS = new Set(['data', 'metadata']);

/**
 * The path of an object carrying a `toString` or `valueOf` member in the protocol fields of a
 * request, or undefined. The SDK converts protocol fields with String() (messageId, ids,
 * tenants, roles...); `{"toString": 0}` makes that throw, which would end as an internal error.
 * Documents and metadata are opaque to the SDK and may hold any keys.
 */
export function conversionTrap(root: unknown, at: string): string | undefined {
  if (typeof root !== 'object' || root === null) return undefined;
  // Every request is walked and almost none has a trap: a node's path is spelled out only for
  // the trap found, from the parent and key each visited node keeps.
  const nodes: unknown[] = [root];
  const parents: number[] = [-1];
  const keys: Array<string | number> = [''];
  const stack: number[] = [0];
  const pathOf = (n: number): string => (n === 0 ? at : `${pathOf(parents[n]!)}${typeof keys[n] === 'number' ? `[${keys[n]}]` : `.${keys[n]}`}`);
  const visit = (value: unknown, parent: number, key: string | number) => {
    if (typeof value !== 'object' || value === null) return;
    stack.push(nodes.length);
    nodes.push(value);
    parents.push(parent);
    keys.push(key);
  };
  while (stack.length > 0) {
    const n = stack.pop()!;
    const node = nodes[n] as object;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) visit(node[i], n, i);
      continue;
    }
    for (const member of CONVERSION_MEMBERS) {
      if (Object.prototype.hasOwnProperty.call(node, member)) return `${pathOf(n)} has a "${member}" member, which no A2A field has`;
    }
    for (const key of Object.keys(node)) if (!OPAQUE_KEYS.has(key)) visit((node as Record<string, unknown>)[key], n, key);
  }
  return undefined;
}

function refuse(req: Parameters<RequestHandler>[0], res: Parameters<RequestHandler>[1], code: number, message: string, id?: string | number | null) {
  const scope = currentScope();
  const reason = code === JSONRPC_INVALID_REQUEST ? 'INVALID_REQUEST' : code === JSONRPC_METHOD_NOT_FOUND ? 'METHOD_NOT_FOUND' : 'INVALID_PARAMS';
  if (scope) scope.errorCode = reason;
  sendFailure(req, res, {
    httpStatus: 400,
    jsonRpcCode: code,
    reason,
    message,
    id,
  });
}

/**
 * Refuses a message request's parts, configuration or metadata (`problem`: partsProblem,
 * outputModesProblem, metadataProblem) as invalid params with the field in its ErrorInfo, as
 * the registry's other invalid-params refusals name theirs (message-required.ts,
 * message-fields.ts); these named it in their words only, so a client could not point at it.
 * Each such problem begins with the field's path as the request has it
 * (params.message.parts[0].filename, on HTTP+JSON message.parts[0].filename), named here as
 * the params' own (message.parts[0].filename), as the other refusals name theirs.
 */
function refuseMessageParams(req: Parameters<RequestHandler>[0], res: Parameters<RequestHandler>[1], binding: A2ABinding, problem: string): void {
  const field = /^\S+/.exec(problem)![0].replace(/^params\./, '').replace(/[:.,]$/, '');
  sendA2AError(req, res, binding, new RequestMalformedError({ message: `${problem}.`, metadata: { field } }));
}

/**
 * Why a body sent to the JSON-RPC endpoint is an HTTP+JSON request instead (no member of a
 * JSON-RPC request), or undefined. Such a body ({"message": {...}}, what POST /message:send
 * takes) was told that "id" is required, and adding one only led to the next refusal.
 * `legacy`: a v0.3 request, which has no HTTP+JSON binding here.
 */
function restBodyOnJsonRpc(body: Record<string, unknown>, legacy: boolean): string | undefined {
  if (['jsonrpc', 'method', 'id', 'params'].some((member) => member in body)) return undefined;
  const send = legacy ? 'message/send' : 'SendMessage';
  const wrap = `{"jsonrpc": "2.0", "id": 1, "method": "${send}", "params": ${'message' in body ? '{"message": {...}}' : '<the body>'}}`;
  const elsewhere = legacy ? '' : ', or POST the body as it is to the HTTP+JSON binding (/a2a/rest/message:send)';
  return `The body has none of "jsonrpc", "method", "id" and "params": it is no JSON-RPC request, and this is the JSON-RPC endpoint. Send it as the params of one, e.g. ${wrap}${elsewhere}.`;
}

/**
 * Why a body sent to the HTTP+JSON binding is a JSON-RPC request instead, or undefined. Its
 * envelope was read as the request, and a SendMessage wrapped in one was told "message is
 * required" though it carried a message (in params).
 */
function jsonRpcBodyOnRest(body: Record<string, unknown>): string | undefined {
  if (!('jsonrpc' in body) && !(typeof body.method === 'string' && 'params' in body)) return undefined;
  const method = typeof body.method === 'string' ? ` (${JSON.stringify(codePointPrefix(body.method, 64))})` : '';
  return `The body is a JSON-RPC request${method}, and this is the HTTP+JSON binding, whose body is the request itself: POST it as it is to the JSON-RPC endpoint (/a2a/jsonrpc), or send its "params" here (POST /message:send takes {"message": {...}})`;
}

/** The JSON-RPC envelope and message parts, on POSTs to the JSON-RPC endpoint. */
export const jsonRpcShapeGuard: RequestHandler = (req, res, next) => {
  if (req.method !== 'POST') return next();
  const body: unknown = req.body;
  if (body === undefined || (isObject(body) && Object.keys(body).length === 0 && req.headers['content-length'] === '0')) {
    return refuse(req, res, JSONRPC_INVALID_REQUEST, 'The request body is empty: send one JSON-RPC 2.0 request object with content-type application/json.');
  }
  if (Array.isArray(body)) {
    return refuse(req, res, JSONRPC_INVALID_REQUEST, 'Batch requests are not supported: send one JSON-RPC 2.0 request object per HTTP request.');
  }
  if (!isObject(body)) return refuse(req, res, JSONRPC_INVALID_REQUEST, 'The request body must be a JSON-RPC 2.0 request object.');
  const restBody = restBodyOnJsonRpc(body, isLegacyRequest(req));
  if (restBody) return refuse(req, res, JSONRPC_INVALID_REQUEST, restBody);
  const { id, method, params } = body;
  if (id === undefined) {
    // A JSON-RPC notification gets no answer, so its outcome would reach no one; every A2A method
    // is a request with an answer (A2A 9.x: each request carries an id).
    return refuse(req, res, JSONRPC_INVALID_REQUEST, '"id" is required: every A2A call is a JSON-RPC request with an answer, and one without an id (a notification) would run with no one told the outcome. Add e.g. "id": 1 (a string or an integer).');
  }
  const idOk = id === null || (typeof id === 'string' && id.length <= MAX_ID_CHARS) || (typeof id === 'number' && Number.isSafeInteger(id));
  if (!idOk) {
    const unsafe = unsafeIntegerIdNote(id);
    return refuse(req, res, JSONRPC_INVALID_REQUEST, `"id" must be a string (at most ${MAX_ID_CHARS} characters), an integer or null${unsafe ? `: ${unsafe}` : ''}.`);
  }
  const usableId = id as string | number | null;
  if (body.jsonrpc !== '2.0') return refuse(req, res, JSONRPC_INVALID_REQUEST, '"jsonrpc" must be "2.0".', usableId);
  if (typeof method !== 'string' || method === '') {
    return refuse(req, res, JSONRPC_INVALID_REQUEST, '"method" must be the name of an A2A method, e.g. "SendMessage".', usableId);
  }
  const notFound = unknownMethod(method, req.header(VERSION_PARAMETER), namesVersion(req));
  if (notFound) return refuse(req, res, JSONRPC_METHOD_NOT_FOUND, notFound, usableId);
  if (params !== undefined && !isObject(params)) return refuse(req, res, JSONRPC_INVALID_PARAMS, '"params" must be a JSON object.', usableId);
  if (params === undefined && !PARAMS_OPTIONAL.has(method)) {
    return refuse(req, res, JSONRPC_INVALID_PARAMS, `"params" is required for ${codePointPrefix(method, 64)}.`, usableId);
  }
  // The SDK reads ListTasks' params as given; without them it would have nothing to read.
  if (params === undefined && method === 'ListTasks') body.params = {};
  if (MESSAGE_METHODS.has(method) && params) {
    const legacy = V03_TO_V1.has(method);
    const problem =
      partsProblem(params.message, 'params.message', legacy) ??
      outputModesProblem(params.configuration, 'params.configuration') ??
      metadataProblem(params.metadata, 'params.metadata');
    if (problem) return refuseMessageParams(req, res, 'JSONRPC', problem);
  }
  const trap = conversionTrap(params, 'params');
  if (trap) return refuse(req, res, JSONRPC_INVALID_PARAMS, `${trap}.`, usableId);
  // Before the SDK's v0.3 reader, which refuses these naming no field; v1.0's message too: the
  // SDK's reader made a string or number message an object without a messageId, and the request
  // handler told a client sending "message": "hi" to add one.
  const missing =
    params && (method === 'message/send' || method === 'message/stream')
      ? missingLegacyMessageIn(params)
      : params && (method === 'SendMessage' || method === 'SendStreamingMessage')
        ? missingMessageIn(params)
        : undefined;
  if (missing) return sendA2AError(req, res, 'JSONRPC', missing);
  // Its ids, extensions and references as sent, before the SDK's readers turn them into strings (message-fields.ts).
  const mistyped = MESSAGE_METHODS.has(method) && params ? messageFieldProblem(params.message, V03_TO_V1.has(method)) : undefined;
  if (mistyped) return sendA2AError(req, res, 'JSONRPC', mistyped);
  next();
};

/** A path no route takes (404 NOT_FOUND), or a method its route does not take (405 METHOD_NOT_ALLOWED), as notFoundHandler answers them. */
function refuseRoute(req: Parameters<RequestHandler>[0], res: Parameters<RequestHandler>[1], status: 404 | 405, message: string): void {
  const reason = status === 404 ? 'NOT_FOUND' : 'METHOD_NOT_ALLOWED';
  const scope = currentScope();
  if (scope) scope.errorCode = reason;
  sendFailure(req, res, { httpStatus: status, jsonRpcCode: JSONRPC_INVALID_REQUEST, reason, message });
}

/**
 * The JSON-RPC endpoint is one path (with or without a trailing slash): a path below it
 * (/a2a/jsonrpc/foo, /a2a/jsonrpc/x/y) is no route, 404 in the JSON-RPC shape as notFoundHandler
 * answers it. The endpoint's mount matches every such path: POST /a2a/jsonrpc/foo was served as
 * the endpoint, and other methods fell through to a 200 with an error object.
 */
export const jsonRpcEndpointOnly: RequestHandler = (req, res, next) => (req.path === '/' ? next() : notFoundHandler(req, res, next));

/**
 * A request with a body that the JSON-RPC endpoint does not take (another method than POST, or
 * a path below it) is refused before its body is read, in a request scope of its own (`scope`:
 * the door's, which names it by route when there is no body to name it by): its 404 or 405
 * carries no id, so nothing in the body is needed, and a client sending a large or slow body
 * there waited for all of it (a slow one got 408), as on HTTP+JSON before restRouteGuard.
 */
export function jsonRpcRouteGuard(scope: RequestHandler): RequestHandler {
  return (req, res, next) => {
    if (!hasBody(req) || (req.method === 'POST' && req.path === '/')) return next();
    scope(req, res, () => notFoundHandler(req, res, next));
  };
}

/** The HTTP+JSON routes of the JSON-RPC methods a client most often sends as a path. */
const REST_ROUTE_OF: Record<string, string> = {
  SendMessage: 'POST /message:send',
  'message/send': 'POST /message:send',
  SendStreamingMessage: 'POST /message:stream',
  'message/stream': 'POST /message:stream',
  ListTasks: 'GET /tasks',
};

/**
 * A JSON-RPC method name sent as an HTTP+JSON path (POST /a2a/rest/message/send,
 * /a2a/rest/SendMessage) that no route takes: 404 saying it is a JSON-RPC method and where it
 * goes. It was the bare "No route", naming the doors but not that the name is a method's.
 */
export const restMethodNameGuard: RequestHandler = (req, res, next) => {
  const name = req.path.replace(/^\/+|\/+$/g, '');
  if (!isA2AMethod(name) || routeTakes(req)) return next();
  const route = REST_ROUTE_OF[name];
  refuseRoute(req, res, 404, `No route ${methodNamed(req)} ${req.baseUrl}${req.path}: "${name}" is a JSON-RPC method name. Send it as a JSON-RPC request to /a2a/jsonrpc${route ? `, or use its HTTP+JSON route, ${route}` : ''}.`);
};

/** How many method-and-path lookups restRouteGuard remembers (then forgets them all and starts again). */
const ROUTE_LOOKUPS_REMEMBERED = 1000;

/** Whether the request comes with a body to read (Content-Length: 0 is none: fetch sends it on a bodyless POST). */
function hasBody(req: Parameters<RequestHandler>[0]): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * A request with a body that no route takes (a path, or a method the path does not take: PUT
 * /tasks, POST /tasks) is refused, 404 or 405 with Allow as notFoundHandler answers it, before
 * its body is read: express reached that answer only past the body parser, so a client sending
 * a large or slow body to a wrong route waited for all of it, and a slow one got 408. A request
 * without a body has nothing to wait for and is left to the routes. The answers are remembered
 * by method and path (the routes do not change once mounted): a message's path is looked up once,
 * a task's at each new id (a few µs: express's layers walked).
 */
export function restRouteGuard(): RequestHandler {
  const lookedUp = new Map<string, boolean>();
  return (req, res, next) => {
    if (!hasBody(req)) return next();
    const key = `${req.method} ${req.path}`;
    let takes = lookedUp.get(key);
    if (takes === undefined) {
      takes = routeTakes(req);
      // (A path is at most the URL's 16 KiB: only short ones are remembered.)
      if (lookedUp.size >= ROUTE_LOOKUPS_REMEMBERED) lookedUp.clear();
      if (key.length <= 256) lookedUp.set(key, takes);
    }
    if (takes) return next();
    notFoundHandler(req, res, next);
  };
}

/** A task's method path (A2A 11.3: POST /tasks/{id}:cancel, /tasks/{id}:subscribe), with or without a tenant: the verb. */
const TASK_VERB_PATH = /\/tasks\/[^/:]+:([^/]*)$/;
/** The task verbs the binding has, and the methods each takes (the SDK's routes). */
const TASK_VERBS: Record<string, readonly string[]> = { cancel: ['POST'], subscribe: ['GET', 'HEAD', 'POST'] };

/**
 * A task's method path asked with a method it does not take, or with a verb the binding does not
 * have: 405 with Allow, or 404 naming the verbs. The SDK's GET /tasks/{id} route took both, with
 * the id "<id>:cancel" (or ":cancle"), and answered "Task not found" of a task that exists; and
 * POST /tasks/{id}:cancle was told to use GET. (A task id holds no ':' here: the registry makes them.)
 */
export const restTaskVerbGuard: RequestHandler = (req, res, next) => {
  const verb = TASK_VERB_PATH.exec(req.path)?.[1];
  if (verb === undefined) return next();
  const allowed = Object.hasOwn(TASK_VERBS, verb) ? TASK_VERBS[verb]! : undefined;
  if (allowed?.includes(req.method)) return next();
  if (req.method === 'OPTIONS' && allowed) {
    // The verb's own methods, as its 405 names them: express's router answered those of every
    // route the path matched, GET /tasks/{id} included, so :cancel listed GET, which is 405 there.
    res.setHeader('Allow', allowed.join(', '));
    res.status(200).type('text/plain').send(allowed.join(', '));
    return;
  }
  const path = `${req.baseUrl}${req.path.slice(0, 200)}`;
  const verbs = 'POST /tasks/{id}:cancel (CancelTask) and GET or POST /tasks/{id}:subscribe (SubscribeToTask); GET /tasks/{id} reads a task';
  if (!allowed) return refuseRoute(req, res, 404, `No route ${methodNamed(req)} ${path}: ":${verb.slice(0, 40)}" is no method of a task. A task's methods are ${verbs}.`);
  res.setHeader('Allow', allowed.join(', '));
  refuseRoute(req, res, 405, `${methodNamed(req)} is not allowed on ${path}: it takes ${allowed.filter((m) => m !== 'HEAD').join(' or ')} (a task's methods: ${verbs}).`);
};

/**
 * What a request body looks like on the HTTP+JSON binding: the example a body that is JSON but no
 * object is shown there (by the body parser's error handler, and by restShapeGuard for an array).
 * It was shown JSON-RPC's envelope, which this binding refuses.
 */
export const REST_BODY_EXAMPLE = 'the request itself, e.g. POST /message:send takes {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "weather"}]}}';

/** Bodies and message parts on the HTTP+JSON binding. */
export const restShapeGuard: RequestHandler = (req, res, next) => {
  if (req.method !== 'POST' || req.body === undefined) return next();
  // An array (what the body parser lets through besides objects) is refused as null or "x" are
  // (errors.ts bodyErrorHandler): invalid request, not params, with the same words.
  if (!isObject(req.body)) return refuse(req, res, JSONRPC_INVALID_REQUEST, notAnObjectMessage('an array', REST_BODY_EXAMPLE));
  const envelope = jsonRpcBodyOnRest(req.body);
  if (envelope) return refuse(req, res, JSONRPC_INVALID_PARAMS, `${envelope}.`);
  if (/\/message:(send|stream)$/.test(req.path)) {
    // Before the SDK's HTTP+JSON reader, which refuses these naming no field.
    const missing = missingMessageIn(req.body);
    if (missing) return sendA2AError(req, res, 'HTTP+JSON', missing);
    const problem = partsProblem(req.body.message, 'message') ?? outputModesProblem(req.body.configuration, 'configuration') ?? metadataProblem(req.body.metadata, 'metadata');
    if (problem) return refuseMessageParams(req, res, 'HTTP+JSON', problem);
    const mistyped = messageFieldProblem(req.body.message, false);
    if (mistyped) return sendA2AError(req, res, 'HTTP+JSON', mistyped);
  }
  const trap = conversionTrap(req.body, 'body');
  if (trap) return refuse(req, res, JSONRPC_INVALID_PARAMS, `${trap}.`);
  next();
};
