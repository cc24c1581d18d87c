/**
 * The MCP door: the registry's discovery (and registration) tools over MCP Streamable HTTP at /mcp, with the
 * official TypeScript SDK. Stateless: every POST gets a new McpServer and transport (no session
 * state to lose or leak between clients; any replica can answer any request), answering with
 * plain JSON rather than an SSE stream, since no tool streams. GET and DELETE /mcp (a
 * server-to-client stream, ending a session) mean nothing without sessions: 405.
 *
 * In front of the SDK, as on the A2A door: metrics, refusals in JSON-RPC form, DNS-rebinding
 * protection (the Host must be PUBLIC_URL's host or one of REGISTRY_MCP_ALLOWED_HOSTS; a
 * browser Origin must be PUBLIC_URL's host or one of REGISTRY_CORS_ORIGINS), the flood guard,
 * our body parser and limits, the request scope and log line, and the door-level access rule
 * (http/authentication.ts: a bearer token makes the Caller; an unusable one, or none on a closed
 * registry, is refused with 401 and WWW-Authenticate), and the JSON-RPC envelope and
 * MCP-Protocol-Version (envelope-guard.ts), and a batch's share of the request budget, one request a
 * message (batch-budget.ts). Between the transport and the SDK's handlers, requests whose params the
 * SDK would refuse are answered -32602, and tool calls whose arguments the tool does not take
 * get the tool's BAD_REQUEST (params-guard.ts); tools/list is answered from memory once made,
 * its schemas in MCP's default dialect, JSON Schema 2020-12 (tools-list-cache.ts); a batch's answers share one bound (batch-answer-cap.ts).
 */
import type { Request, RequestHandler, Response } from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, isJSONRPCErrorResponse, isJSONRPCNotification, isJSONRPCResultResponse, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Door, DoorContext } from '../composition/door.js';
import { authenticate, requestCaller } from '../http/authentication.js';
import { bodyErrorHandler, failureFormat, methodNamed, sendFailure } from '../http/errors.js';
import { jsonBody } from '../http/json-body.js';
import { requestScope, scopedErrorHandler, type RequestNamer } from '../http/request-log.js';
import { isObject } from '../lib/json.js';
import { requireJsonRpcBody } from '../protocol/jsonrpc-media-type.js';
import { isA2AMethod } from '../protocol/request-guard.js';
import { currentScope, runInScope, type BatchCall, type RequestScope } from '../observability/request-scope.js';
import { capBatchAnswers } from './batch-answer-cap.js';
import { mcpBatchBudget } from './batch-budget.js';
import { mcpAcceptGuard, mcpEnvelopeGuard, mcpProtocolVersionGuard } from './envelope-guard.js';
import { mcpFailureFormat } from './failure-format.js';
import { guardParams } from './params-guard.js';
import { MCP_PATH } from './paths.js';
import { answerToolsListFrom, type ToolsListCache } from './tools-list-cache.js';
import { TOOL_NAMES, WRITING_TOOLS, registerTools } from './tools.js';

const JSONRPC_SERVER_ERROR = -32000;

/** MCP methods a client sends to this server (bounded metrics labels). */
const MCP_METHODS = new Set(['initialize', 'notifications/initialized', 'ping', 'tools/list', 'tools/call', 'notifications/cancelled', 'logging/setLevel']);
const TOOLS = new Set<string>(TOOL_NAMES);

const INSTRUCTIONS =
  'This server is an A2A agent registry: it knows A2A agents (with their skills and endpoints) and MCP servers (with their tools). ' +
  'To find an agent for a task call search_agents; to find tools call search_mcp_servers; then get_agent or get_mcp_server with an id for the full card or toolspec. ' +
  'validate_document checks an agent card or toolspec; register_agent and register_mcp_server store one, or have the registry fetch it by URL (they need a registry token); ' +
  'refresh_entry fetches an entry registered that way again. Results carry health when the registry checks the live agent: filter {"health": "ok"} for agents that answer.';

/** The JSON-RPC errors the SDK answers with, named as the log line and metrics name refusals. */
const RPC_ERROR_NAMES: Record<number, string> = {
  [ErrorCode.ParseError]: 'PARSE_ERROR',
  [ErrorCode.InvalidRequest]: 'INVALID_REQUEST',
  [ErrorCode.MethodNotFound]: 'METHOD_NOT_FOUND',
  [ErrorCode.InvalidParams]: 'INVALID_PARAMS',
  [ErrorCode.InternalError]: 'INTERNAL',
};

/**
 * The JSON-RPC error code of a refusal the SDK answered itself: an error response (a method this
 * server does not handle), or a tools/call result with isError that no tool of ours produced
 * (ours, and the argument check before the SDK, record their outcome first): an SDK refusal
 * ("MCP error -32602: ..."), or a tool that threw (an internal error).
 */
function sdkRefusalCode(message: JSONRPCMessage): number | undefined {
  if (isJSONRPCErrorResponse(message)) return message.error.code;
  if (!isJSONRPCResultResponse(message) || message.result.isError !== true) return undefined;
  const content = message.result.content;
  const first: unknown = Array.isArray(content) ? content[0] : undefined;
  const text = isObject(first) && typeof first.text === 'string' ? first.text : '';
  const code = /^MCP error (-?\d+):/.exec(text)?.[1];
  return code === undefined ? ErrorCode.InternalError : Number(code);
}

/**
 * Records what the SDK refused in the scope of the call it answers, so the log line and metrics
 * say so: they counted an unknown tool, out-of-range arguments and unknown methods as answered
 * (outcome OK). The call's answer is sent in its scope (a batch's calls each run in their own:
 * runCallsInScopes); an outcome a tool recorded first stands.
 */
function recordSdkRefusals(transport: Transport): void {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const scope = currentScope();
    const code = !scope || scope.taskState ? undefined : sdkRefusalCode(message);
    if (scope && code !== undefined) {
      Object.assign(scope, { taskState: code === ErrorCode.InternalError ? 'FAILED' : 'REJECTED', errorCode: RPC_ERROR_NAMES[code] ?? 'ERROR' });
    }
    return send(message, options);
  };
}

/** The methods this MCP server answers (tools only: no resources, prompts, logging or tasks). */
const ANSWERED_METHODS = 'initialize, ping, tools/list and tools/call';
/** MCP 2025-11-25's task methods: A2A v0.3 has two of these names too, and an MCP client means its own. */
const MCP_TASK_METHODS = new Set(['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel']);

/** Why a method is not found here, and what to do instead. */
function unknownMethodMessage(method: string): string {
  const shown = JSON.stringify(method.slice(0, 64));
  return isA2AMethod(method) && !MCP_TASK_METHODS.has(method)
    ? `Method not found: ${shown} is an A2A method, and this is the registry's MCP endpoint, which answers ${ANSWERED_METHODS}. Send A2A JSON-RPC requests to /a2a/jsonrpc, or call this server's tools (tools/list names them).`
    : `Method not found: ${shown}. This MCP server offers tools only: it answers ${ANSWERED_METHODS} (and notifications).`;
}

/**
 * Gives the SDK's bare "Method not found" (-32601) what to do instead: an A2A method sent here
 * (SendMessage, message/send: the registry is an A2A agent too) is pointed to the A2A endpoint,
 * any other is told the methods this server answers. `body` is the request's: one call or a
 * batch, whose answers are matched to their calls by id.
 */
function explainUnknownMethods(transport: Transport, body: unknown): void {
  const methods = new Map<unknown, string>();
  for (const call of Array.isArray(body) ? body : [body]) {
    if (isObject(call) && typeof call.method === 'string' && 'id' in call) methods.set(call.id, call.method);
  }
  if (methods.size === 0) return;
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (!isJSONRPCErrorResponse(message) || message.error.code !== ErrorCode.MethodNotFound || message.error.message !== 'Method not found') return send(message, options);
    const method = methods.get(message.id);
    return send(method === undefined ? message : { ...message, error: { ...message.error, message: unknownMethodMessage(method) } }, options);
  };
}

/** The JSON-RPC method of one message, with the tool's name for tools/call. */
function describeCall(message: unknown): { method: string; tool?: string } {
  if (!isObject(message) || typeof message.method !== 'string') return { method: 'none' };
  const params = isObject(message.params) ? message.params : {};
  return { method: message.method.slice(0, 64), tool: message.method === 'tools/call' && typeof params.name === 'string' ? params.name.slice(0, 64) : undefined };
}

/** A call's name in the log line: "tools/call search_agents", "initialize", ... */
function callName(message: unknown): string {
  const { method, tool } = describeCall(message);
  return tool ? `${method} ${tool}` : method;
}

/** A call's metrics label: its name, from a fixed set. */
function callLabel(message: unknown): string {
  const { method, tool } = describeCall(message);
  if (!MCP_METHODS.has(method)) return 'other';
  if (method !== 'tools/call') return method;
  return `tools/call ${tool && TOOLS.has(tool) ? tool : 'other'}`;
}

/**
 * For the log line: the call's name; a batch is "batch", and its line lists its calls
 * (runCallsInScopes). A request with no body read (it did not parse, or never arrived in full) is
 * named by its route, `POST /mcp`, as one with another method is (`GET /mcp`): it was "none", as
 * if a call without a method had come.
 */
const nameMcpRequest: RequestNamer = (req) => {
  const method = req.method !== 'POST' || req.body === undefined ? `${req.method} ${MCP_PATH}` : Array.isArray(req.body) ? 'batch' : callName(req.body);
  return { method, streaming: false };
};

/**
 * For metrics: the same, from a fixed set. A batch whose calls ran is counted call by call, under
 * each call's label; "batch" counts one refused as a whole (its envelope, a token, the Accept
 * header), before any call ran.
 */
function mcpMethodLabel(req: Request): string {
  if (req.method !== 'POST') return `${req.method} ${MCP_PATH}`;
  return Array.isArray(req.body) ? 'batch' : callLabel(req.body);
}

/**
 * Runs each message of a batch in a scope of its own, listed in the request's (scope.calls): a
 * tool records its operation and outcome in the scope it runs in (tools.ts), and the SDK's
 * refusals are recorded in the scope their answer is sent from (recordSdkRefusals). With one
 * scope for all, every call overwrote the others' operation, a failed call's outcome was taken
 * for the batch's, and metrics counted one request, "other", for the lot. Call after the
 * other wrappers of onmessage, so that theirs run inside the call's scope too.
 */
function runCallsInScopes(transport: Transport, request: RequestScope): void {
  const deliver = transport.onmessage;
  if (!deliver) throw new Error('runCallsInScopes: connect the server to the transport first');
  const calls: BatchCall[] = [];
  request.calls = calls;
  transport.onmessage = (message, extra) => {
    const scope: RequestScope = {
      requestId: request.requestId,
      method: callName(message),
      streaming: false,
      clientAddress: request.clientAddress,
      get closed(): AbortSignal | undefined {
        return request.closed;
      },
    };
    calls.push({ scope, label: callLabel(message) });
    runInScope(scope, () => deliver(message, extra));
  };
}

/**
 * Leaves cancellation notifications (notifications/cancelled) unread. A call here cannot be
 * cancelled (a tool runs its operation to the end), and MCP lets a receiver ignore a
 * cancellation of a request it cannot cancel; in a stateless request, the only request a
 * cancellation can name is one of its own batch. Read, it made the SDK drop that request's
 * answer (a cancelled request gets none) while the transport waited for every answer of the
 * batch: the HTTP request hung with no answer at all, a registration it held stored but never
 * acknowledged. Ignored, the call is answered as any other, and the client ignores an answer
 * to a request it cancelled, as MCP asks of it.
 */
function ignoreCancellations(transport: Transport): void {
  const deliver = transport.onmessage;
  if (!deliver) throw new Error('ignoreCancellations: connect the server to the transport first');
  transport.onmessage = (message, extra) => {
    if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') return;
    deliver(message, extra);
  };
}

/** The request as the SDK's transport reads it: its headers (from rawHeaders, as sent; HTTP/2 pseudo-headers left out) and URL; the body is passed parsed. */
function webRequestOf(req: Request): globalThis.Request {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) if (!raw[i]!.startsWith(':')) headers.append(raw[i]!, raw[i + 1]!);
  // The Host was checked (rebindingGuard): it makes a URL, with the target's path and query. An
  // absolute-form target (`POST http://host/mcp HTTP/1.1`, as a proxy sends it, which express
  // routes by its path) made `http://hosthttp://host/mcp`, no URL: a 500 and an error line.
  const target = req.originalUrl.startsWith('/') ? req.originalUrl : ((url) => `${url.pathname}${url.search}`)(new URL(req.originalUrl));
  return new globalThis.Request(`http://${req.headers.host ?? '127.0.0.1'}${target}`, { method: req.method, headers });
}

/**
 * Hands the request to the SDK's transport and sends its answer, in JSON (enableJsonResponse: no
 * stream). A batch is answered with an array (JSON-RPC 2.0, section 6), also when it holds one
 * request: the SDK answers a batch whose answers are one response with that response alone, a
 * bare object a client matching a batch's answers by position or by id in an array cannot read.
 * (Its refusals of the whole request, an object with id null, stay objects, as JSON-RPC has it.)
 */
async function answerOverTransport(transport: WebStandardStreamableHTTPServerTransport, req: Request, res: Response): Promise<void> {
  const answer = await transport.handleRequest(webRequestOf(req), { parsedBody: req.body });
  let text = await answer.text();
  if (Array.isArray(req.body) && answer.status === 200 && text.startsWith('{')) text = `[${text}]`;
  if (res.headersSent || res.writableEnded) return; // the client went away meanwhile
  res.status(answer.status);
  answer.headers.forEach((value, name) => {
    if (name !== 'content-length') res.setHeader(name, value);
  });
  if (text === '') res.end();
  else res.setHeader('Content-Length', Buffer.byteLength(text)).end(text);
}

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

/** Host names the endpoint answers: PUBLIC_URL's (all loopback names when it is one), and the configured extras. */
export function allowedHostsFor(publicUrl: string, extra: string[]): Set<string> {
  const own = new URL(publicUrl).hostname.toLowerCase().replace(/\.$/, '');
  return new Set([own, ...(LOOPBACK.includes(own) ? LOOPBACK : []), ...extra]);
}

/**
 * The host a Host header names, lower-cased, when it is exactly `host[:port]` (RFC 9110 7.2: a
 * reg-name, an IPv4 address or a bracketed IPv6 literal, then an optional decimal port); else
 * undefined. Read as a URL it was normalised first: "evil@127.0.0.1:3000" (userinfo),
 * "127.0.0.1:3000/x", "0x7f.1" all came out as 127.0.0.1 and passed. The port is not compared:
 * a rebinding page is told apart by its name, and a port-forward or proxy may change the port.
 */
export function hostOfHostHeader(header: string | undefined): string | undefined {
  const m = header === undefined ? null : /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(?::\d{1,5})?$/.exec(header);
  // A fully qualified name's final dot ("registry.example.com.", which a client may be given and
  // send) names the same host: it was refused as another's.
  return m ? m[1]!.toLowerCase().replace(/(?<=[^.])\.$/, '') : undefined;
}

/**
 * DNS-rebinding protection. A page on attacker.example whose name is made to resolve to this
 * server sends Host: attacker.example (refused); a page on another origin calling the real
 * host sends its Origin (refused unless the operator allowed it). MCP requires it of servers; the
 * other doors check no Host (README, "DNS rebinding"): what they answer without a token, the open
 * catalogs publish to every origin anyway, everything else needs a token a page never sends on its
 * own, and the check would refuse the clients they serve by other names (a Service name, 127.0.0.1
 * behind a proxy).
 */
function rebindingGuard(hosts: Set<string>, corsOrigins: string[] | '*', scope: RequestHandler): RequestHandler {
  return (req, res, next) => {
    const refuse = (message: string) => {
      // The body is never read (nor drained: a refused client could stream one without end, past
      // every limit, until the request timeout): the connection closes after the answer.
      res.setHeader('Connection', 'close');
      // In a request scope of its own (`scope`: the door's, which names a request with no body
      // read by its route, POST /mcp): a refused rebinding attempt, which an operator wants to
      // see, was answered with no X-Request-Id and logged nowhere.
      scope(req, res, () => sendFailure(req, res, { httpStatus: 403, jsonRpcCode: JSONRPC_SERVER_ERROR, reason: 'FORBIDDEN_HOST', message }));
    };
    const hostname = hostOfHostHeader(req.headers.host);
    if (!hostname || !hosts.has(hostname)) {
      return refuse(
        `Host "${String(req.headers.host ?? '').slice(0, 100)}" is not this registry's (${[...hosts].join(', ')}). Connect to PUBLIC_URL's host; operators add other names with REGISTRY_MCP_ALLOWED_HOSTS.`,
      );
    }
    const origin = req.header('origin');
    if (origin !== undefined && corsOrigins !== '*' && !corsOrigins.includes(origin)) {
      let originHost: string | undefined;
      try {
        originHost = new URL(origin).hostname.toLowerCase();
      } catch {
        originHost = undefined;
      }
      if (!originHost || !hosts.has(originHost)) {
        return refuse(`Origin "${origin.slice(0, 100)}" may not call this MCP endpoint; operators allow browser origins with REGISTRY_CORS_ORIGINS.`);
      }
    }
    next();
  };
}

export const mcpDoor: Door = {
  name: 'mcp',
  failureFormats: () => [{ paths: [MCP_PATH], format: mcpFailureFormat }],
  mount(app, ctx: DoorContext) {
    const { core, publicUrl, card } = ctx;
    const { config, log, metrics, abuse } = core;
    const hosts = allowedHostsFor(publicUrl, config.mcpAllowedHosts);
    if (hosts.has('0.0.0.0') || hosts.has('[::]')) {
      log.warn({ publicUrl }, 'PUBLIC_URL names no host clients can use: the MCP endpoint will refuse every request until PUBLIC_URL (or REGISTRY_MCP_ALLOWED_HOSTS) names one');
    }
    const serverInfo = { name: 'a2a-agent-registry', title: typeof card.name === 'string' ? card.name : undefined, version: String(card.version ?? '0.0.0') };
    const limits = { maxDocumentBytes: config.maxDocumentBytes, maxJsonDepth: config.hardening.maxJsonDepth, maxQueryChars: config.hardening.maxQueryChars };
    const toolsList: ToolsListCache = {};
    // One JSON Schema validator for every request's McpServer. Left out, each server built its
    // own (a new Ajv instance, its meta-schemas compiled): building and connecting a server took
    // 193 µs of CPU, now 80 µs (in-process, 2026-12-06), of a ping's 0.8-1 ms on the built server. The SDK uses it only to
    // check a client's answer to elicitation, which this server never asks for, so nothing of one
    // request reaches another through it. (The server itself stays per request: the SDK refuses to
    // connect one to a second transport, and the tools hold the request's caller.)
    const jsonSchemaValidator = new AjvJsonSchemaValidator();

    const answer: RequestHandler = async (req, res, next) => {
      if (req.method === 'OPTIONS') {
        // Which methods the path takes (RFC 9110 9.3.7), as every other route answers it: this
        // answered 405, saying OPTIONS is no "stream or session". (A browser's CORS preflight
        // is answered before, by the CORS middleware.)
        res.setHeader('Allow', 'POST');
        res.status(200).type('text/plain').send('POST');
        return;
      }
      if (req.method !== 'POST') {
        // -32000, as the MCP SDK's transport and its stateless server example answer 405, with the
        // reason this door's other refusals carry: it was -32600, "Invalid Request", of a request
        // that sent no JSON-RPC message at all.
        const scope = currentScope();
        if (scope) Object.assign(scope, { taskState: 'REJECTED', errorCode: 'METHOD_NOT_ALLOWED' });
        res.setHeader('Allow', 'POST');
        res.status(405).json({
          jsonrpc: '2.0',
          id: null,
          error: {
            code: JSONRPC_SERVER_ERROR,
            message: `This MCP endpoint is stateless: send every request as a POST (no ${methodNamed(req)} stream or session).`,
            data: { reason: 'METHOD_NOT_ALLOWED' },
          },
        });
        return;
      }
      const scope: RequestScope | undefined = currentScope();
      const server = new McpServer(serverInfo, { instructions: INSTRUCTIONS, jsonSchemaValidator });
      const checkArguments = registerTools(server, { operations: core.operations, caller: requestCaller(req), log, limits });
      // McpServer declares tools.listChanged: true, a promise of notifications/tools/list_changed.
      // A stateless endpoint has no stream to send them on (GET is 405), and the tools never change.
      server.server.registerCapabilities({ tools: { listChanged: false } });
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
        ignoreCancellations(transport);
        answerToolsListFrom(toolsList, transport);
        guardParams(transport, {
          tools: TOOLS,
          checkArguments,
          refused: () => {
            const call = currentScope();
            if (call) Object.assign(call, { taskState: 'REJECTED', errorCode: 'INVALID_PARAMS' });
          },
        });
        recordSdkRefusals(transport);
        explainUnknownMethods(transport, req.body);
        if (scope && Array.isArray(req.body)) runCallsInScopes(transport, scope);
        if (Array.isArray(req.body)) capBatchAnswers(transport, req.body, WRITING_TOOLS);
        await answerOverTransport(transport, req, res);
      } catch (err) {
        next(err);
      }
    };

    app.all(
      MCP_PATH,
      metrics.middleware({ door: 'mcp', method: mcpMethodLabel }),
      failureFormat(mcpFailureFormat),
      // Counted first: the rebinding guard's refusals are logged, and a line per request no budget
      // counts would let one address write to the log without limit.
      abuse.floodGuard(),
      rebindingGuard(hosts, config.hardening.corsOrigins, requestScope(log, nameMcpRequest)),
      // Bodies of any declared type are read, so a wrong Content-Type is refused with the request's
      // id and reason (requireJsonRpcBody, as on the A2A JSON-RPC endpoint): the SDK refused it
      // unread, with id null and no reason, unlike a wrong charset.
      jsonBody({ limit: config.maxBodyBytes, maxDepth: config.hardening.maxJsonDepth, anyType: true }),
      scopedErrorHandler(log, nameMcpRequest, bodyErrorHandler(log, 'a JSON-RPC request such as {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}')),
      requestScope(log, nameMcpRequest),
      authenticate(core.authenticator, { publicRead: config.publicRead }),
      requireJsonRpcBody,
      mcpEnvelopeGuard,
      mcpAcceptGuard,
      mcpProtocolVersionGuard,
      mcpBatchBudget(abuse),
      answer,
    );
  },
};
