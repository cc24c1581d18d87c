/**
 * The registry's MCP tools: each builds one operation of the contract from its arguments and
 * runs it through the shared OperationRunner, so answers, authorisation, rate limits and
 * metrics are those of the A2A door. Input schemas reuse the contract's zod schemas
 * (operations/request-schemas.ts) with descriptions for a model choosing tools; output schemas
 * are loose objects (fields other work adds to entries and hits pass through), and every
 * result carries structuredContent, a short text and, as the MCP specification recommends for
 * clients that ignore structured content, the same JSON as text.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Caller } from '../contract/caller.js';
import { PAGE_TOKEN_OTHER_OPERATION, PAGE_TOKEN_OTHER_QUERY, REFRESH_NO_SOURCE, RegistryError, badRequest, rootedAt } from '../contract/errors.js';
import type { EntryKind, EntryView, ErrorBody, Finding, SearchHit, SearchPage } from '../contract/types.js';
import { OWN_KEY_SET, verifyingKeyText } from '../contract/verification.js';
import { namedList } from '../contract/findings.js';
import { codePointPrefix } from '../lib/code-points.js';
import { isObject } from '../lib/json.js';
import { totalText } from '../lib/total-text.js';
import type { Logger } from '../observability/logger.js';
import { currentScope } from '../observability/request-scope.js';
import type { Answer } from '../operations/answer.js';
import type { Operation } from '../operations/operation.js';
import { checkQueryLength, documentSubject, findingsSaid, registerSubject, zodFindings, type ParserLimits } from '../operations/request-parser.js';
import { entryId, listSchema, queryText, searchSchema } from '../operations/request-schemas.js';
import { issuedForKind } from '../registry/page-token.js';
import type { OperationRunner } from '../operations/runner.js';
import { refusalLines, refusalText } from '../operations/summaries.js';

/**
 * What a tool call runs with: the operations, who asks, and the log. A call records its operation
 * and outcome in the scope it runs in (currentScope()): the request's, or in a batch the call's own
 * (mcp-door.ts), so that calls of one batch do not overwrite each other's.
 */
export interface ToolEnv {
  operations: OperationRunner;
  caller: Caller;
  log: Logger;
  /** The query limit is required: the search tools publish it (their query's maxLength). */
  limits: ParserLimits & { maxQueryChars: number };
}

export const TOOL_NAMES = [
  'search_agents',
  'get_agent',
  'list_agents',
  'search_mcp_servers',
  'get_mcp_server',
  'validate_document',
  'register_agent',
  'register_mcp_server',
  'refresh_entry',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];
/** The tools that write (annotated REGISTERS below); the others only read. */
export const WRITING_TOOLS: ReadonlySet<string> = new Set<ToolName>(['register_agent', 'register_mcp_server', 'refresh_entry']);

/** Tools that only read the registry (validate_document checks a document it is given and stores nothing). */
const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/**
 * Registration and refresh write, and may destroy: a changed document replaces the entry's current
 * one, and each new revision past REGISTRY_MAX_REVISIONS deletes the oldest from the history. MCP's
 * destructiveHint: false promises "only additive updates", and a client skips its confirmation on
 * that promise; they were annotated so, on the belief that an update keeps every older revision.
 * Sending the same document again changes nothing (idempotent). Unregistering is left to A2A and
 * the CLI. Registering by URL, with fetchTools, and refreshing reach out to the agent or server
 * named: an open world.
 */
const REGISTERS: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true };

// ---- input schemas, from the contract's ----

const searchArgs = searchSchema.shape;
const searchFilter = searchArgs.filter.unwrap().shape;
const listArgs = listSchema.shape;
const listFilter = listArgs.filter.unwrap().shape;

/**
 * The query, at most the limit in force (REGISTRY_MAX_QUERY_CHARS): tools/list published the
 * contract's ceiling (10,000) as its maxLength, and a client that kept to it was refused past the
 * default 1,000.
 */
const queryArg = (maxQueryChars: number) =>
  queryText(maxQueryChars)
    .optional()
    .describe(
      'Keywords describing what you need, matched against names, descriptions, skills, tags and examples (agents) or tools (MCP servers); case and accents are ignored. Leave it out to list by filter alone, newest registered first (as list_agents lists).',
    );
const limit = searchArgs.limit.describe('Results per page, 1 to 100 (default 20).');
const pageToken = searchArgs.pageToken.describe('nextPageToken of the previous answer, to get the next page of the same search.');
const owner = searchFilter.owner.describe('Only entries registered by this principal.');
const health = searchFilter.health.describe(
  'Health of the live agent or server at its latest check: "ok" keeps only entries that answered with a valid document; "unreachable" or "invalid" finds the failing ones; ' +
    '"any" also shows entries the operator hides by default because they have failed for long. Entries the registry never checks have no health and match only "any" or no health filter.',
);

const agentFilter = z
  .strictObject({
    tags: searchFilter.tags.describe('Skill tags; a skill carrying any of them matches.'),
    capabilities: searchFilter.capabilities.describe('Skill ids (a skill\'s name when it has no id), exactly; an agent offering any of them matches.'),
    inputModes: searchFilter.inputModes.describe('MIME types a skill must accept (any of them), e.g. ["application/pdf"].'),
    outputModes: searchFilter.outputModes.describe('MIME types a skill must produce (any of them), e.g. ["text/plain"].'),
    protocolBinding: searchFilter.protocolBinding.describe('An A2A binding the agent must offer: JSONRPC, GRPC or HTTP+JSON.'),
    protocolVersion: searchFilter.protocolVersion.describe('An A2A protocol version the agent must speak, e.g. "1.0" or "0.3".'),
    streaming: searchFilter.streaming.describe('true: only agents that stream answers; false: only agents that do not.'),
    verified: searchFilter.verified.describe(
      'true: only agents whose card carries a signature the registry verified with a key its operator trusts; false: only the others.',
    ),
    owner,
    health,
  })
  .optional()
  .describe('Narrow the results; every key is optional and keys combine with AND.');

const mcpFilter = z
  .strictObject({
    capabilities: searchFilter.capabilities.describe('Tool names, exactly; a server offering any of them matches.'),
    readOnly: searchFilter.readOnly.describe('true: only tools that declare they do not modify anything (readOnlyHint).'),
    destructive: searchFilter.destructive.describe('false: only tools that do not delete or overwrite (destructiveHint, true when undeclared; read-only tools never are).'),
    idempotent: searchFilter.idempotent.describe('true: only tools safe to call repeatedly (idempotentHint; read-only tools always are).'),
    openWorld: searchFilter.openWorld.describe('false: only tools that stay within their own system (openWorldHint, true when undeclared).'),
    owner,
    health,
  })
  .optional()
  .describe('Narrow the results by the tools\' annotation hints (MCP defaults apply where a hint is absent); keys combine with AND.');

const revision = z.number().int().min(1).optional().describe('An older revision of the entry; the current one when left out.');

const documentUrl = z.string().min(1).max(2048).optional();

const documentArg = (what: string) => z.record(z.string(), z.unknown()).optional().describe(what);

/**
 * A tool's arguments, closed: an argument the tool does not take is refused naming the ones it
 * does (checkArguments). The SDK's default object dropped it silently, so search_agents
 * {"text": "weather"} (ARD's name) or {"pageSize": 5} (list_agents') listed every agent, and
 * get_agent {"rev": 2} gave the current revision, each as if asked.
 */
const toolArguments = <S extends z.ZodRawShape>(shape: S) => z.strictObject(shape);

/**
 * The finding for arguments a tool does not take, naming those it does, in the tool's words. The
 * contract's findings (zodFindings) say an unknown key their own way, for a request's members:
 * "Unrecognized key ... (text)" and a hint listing the accepted keys, which repeated the list.
 */
function unknownArguments(tool: ToolName, schema: z.ZodObject, keys: readonly string[]): Finding {
  // The first few keys and how many more (findings.ts): 6,000 keys sent were named back, each.
  const named = namedList(keys.map((k) => JSON.stringify(codePointPrefix(k, 60))));
  const takes = Object.keys(schema.shape).join(', ');
  return { path: '/arguments', message: `${named} ${keys.length === 1 ? 'is not an argument' : 'are not arguments'} of ${tool}, which takes ${takes}` };
}

/**
 * Every tool's arguments (closed: toolArguments) for one query limit. Tools are registered on
 * every request (the endpoint is stateless) and the limit changes only with the configuration:
 * built once per limit (inputSchemas), not per request.
 */
function inputSchemasFor(maxQueryChars: number) {
  const query = queryArg(maxQueryChars);
  return {
    search_agents: toolArguments({ query, filter: agentFilter, limit, pageToken }),
    search_mcp_servers: toolArguments({ query, filter: mcpFilter, limit, pageToken }),
    get_agent: toolArguments({ id: entryId, revision }),
    get_mcp_server: toolArguments({ id: entryId, revision }),
    list_agents: toolArguments({
      pageSize: listArgs.pageSize.describe('Entries per page, 1 to 100 (default 50).'),
      pageToken: listArgs.pageToken.describe('nextPageToken of the previous answer.'),
      owner: listFilter.owner.describe('Only agents registered by this principal.'),
      mine: listFilter.mine.describe('true: only the agents registered with the bearer token this client sends.'),
      health: listFilter.health.describe('Only agents whose latest check had this outcome: "ok", "unreachable" or "invalid".'),
      verified: listFilter.verified.describe('true: only agents whose card signature the registry verified with a trusted key; false: only the others.'),
    }),
    validate_document: toolArguments({
      agentCard: documentArg('The A2A agent card to check, as a JSON object.'),
      toolspec: documentArg('The MCP toolspec to check: {"tools": [...]}.'),
      mcpServer: documentArg('Optional with toolspec: the server\'s metadata {"name", "url", "description"?, "version"?}, checked as registration would.'),
    }),
    register_agent: toolArguments({
      agentCard: z.record(z.string(), z.unknown()).optional().describe('The agent card, as a JSON object.'),
      url: documentUrl.describe(
        'Instead of agentCard: where the registry fetches the card — the agent\'s base URL (it reads /.well-known/agent-card.json there) or the card\'s own URL.',
      ),
    }),
    register_mcp_server: toolArguments({
      mcpServer: z.record(z.string(), z.unknown()).describe('The server: {"name", "url" (its MCP endpoint), "description"?, "version"?}.'),
      toolspec: z.record(z.string(), z.unknown()).optional().describe('{"tools": [...]} exactly as the server\'s tools/list returns them.'),
      fetchTools: z.boolean().optional().describe('true instead of toolspec: the registry lists the tools at mcpServer.url with MCP tools/list (every page).'),
    }),
    refresh_entry: toolArguments({ id: entryId }),
  } satisfies Record<ToolName, z.ZodObject>;
}
type InputSchemas = ReturnType<typeof inputSchemasFor>;

const inputSchemasByLimit = new Map<number, InputSchemas>();
function inputSchemas(maxQueryChars: number): InputSchemas {
  let inputs = inputSchemasByLimit.get(maxQueryChars);
  if (!inputs) inputSchemasByLimit.set(maxQueryChars, (inputs = inputSchemasFor(maxQueryChars)));
  return inputs;
}

// ---- output schemas (loose: fields other registry work adds pass through) ----

const interfaceOut = z.looseObject({
  url: z.string(),
  protocolBinding: z.string(),
  protocolVersion: z.string().optional(),
  tenant: z.string().optional(),
});
const kindOut = z.enum(['agent', 'mcp-server']);
const healthOut = z
  .looseObject({
    status: z.enum(['ok', 'unreachable', 'invalid']),
    checkedAt: z.string(),
    since: z.string(),
    failures: z.number().int(),
    failingSince: z.string().optional(),
    reason: z.string().optional(),
    message: z.string().optional(),
  })
  .optional()
  .describe('The latest check of the live agent or server (entries registered by URL or with fetchTools; every agent when the operator turns probing on).');
const sourceOut = z
  .looseObject({ url: z.string(), fetchedAt: z.string(), etag: z.string().optional(), lastModified: z.string().optional() })
  .optional()
  .describe('Where the registry fetches the document and refreshes it from (registered by URL or with fetchTools).');
const driftOut = z.boolean().optional().describe('true when the live document differs from the registered revision.');
const jwksOut = z
  .string()
  .optional()
  .describe(`The key set of the key that verified it (a kid is unique within one set only): the URL of a JWKS the operator trusts, or "${OWN_KEY_SET}" for the operator's own keys.`);
/**
 * What of an entry matched: its own text, or one skill or tool. Described, as every hit carries
 * it: the schema said nothing of `match`, `matches` or `moreInEntry`, so a client reading its
 * outputSchema (a model choosing a tool, a client typing its answers) did not know where "the
 * skill that matched" the tool's description promises is.
 */
const matchOut = z.looseObject({
  type: z.enum(['agent', 'skill', 'mcp-server', 'tool']),
  id: z.string().optional().describe("The skill's id or the tool's name; absent when the entry's own text matched."),
  name: z.string(),
  fields: z.array(z.string()).describe('The fields that matched (name, title, tags, description, examples, ...); empty for a search without text.'),
});
const hitOut = z.looseObject({
  id: z.string(),
  kind: kindOut,
  name: z.string(),
  description: z.string(),
  score: z.number(),
  match: matchOut.describe('The best-matching part of the entry.'),
  matches: z.array(matchOut).optional().describe("The entry's other matching skills or tools, best first (at most 10)."),
  moreInEntry: z.number().int().optional().describe('How many more of its skills or tools matched than are listed.'),
  interfaces: z.array(interfaceOut),
  source: sourceOut,
  health: healthOut,
  drift: driftOut,
  verified: z.boolean().describe('A signature of the card verified with a key the registry operator trusts.'),
  kid: z.string().optional().describe('The key that verified it.'),
  jwks: jwksOut,
});
const searchOut = z.looseObject({
  results: z.array(hitOut),
  total: z.number().int(),
  totalExact: z.literal(false).optional().describe('Present when total is a lower bound ("at least").'),
  nextPageToken: z.string().optional(),
  reason: z.string().optional().describe('Why nothing matched, when the registry knows it (a query of no word search looks for).'),
});
const entryOut = z.looseObject({
  id: z.string(),
  kind: kindOut,
  name: z.string(),
  description: z.string(),
  owner: z.string(),
  revision: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
  protocolVersion: z.string().optional(),
  interfaces: z.array(interfaceOut),
  source: sourceOut,
  health: healthOut,
  drift: driftOut,
  verified: z.boolean().describe('A signature of the card verified with a key the registry operator trusts.'),
  kid: z.string().optional().describe('The key that verified it.'),
  jwks: jwksOut,
  document: z.unknown().optional().describe('The card, or {mcpServer, toolspec}, exactly as registered.'),
});
const listOut = z.looseObject({ entries: z.array(entryOut), nextPageToken: z.string().optional() });
const findingOut = z.looseObject({ path: z.string(), message: z.string(), hint: z.string().optional(), rule: z.string().optional() });
const signatureOut = z.looseObject({
  status: z.enum(['verified', 'unknown-key', 'invalid']),
  kid: z.string().optional(),
  alg: z.string().optional(),
  jwks: jwksOut,
  reason: z.string().optional(),
});
const registrationOut = z.looseObject({
  id: z.string(),
  kind: kindOut,
  revision: z.number().int(),
  created: z.boolean(),
  changed: z.boolean().describe('false when the same document was already registered: nothing changed.'),
  protocolVersion: z.string().optional(),
  verified: z.boolean().optional().describe('Agents: a signature of the card verified with a key the registry operator trusts.'),
  kid: z.string().optional().describe('The key that verified it.'),
  jwks: jwksOut,
  signatures: z.array(signatureOut).optional().describe("Agents: each of the card's signatures, in order, with its status."),
  warnings: z.array(z.looseObject({ path: z.string(), message: z.string(), hint: z.string().optional() })),
  source: sourceOut,
  health: healthOut,
  revisionOrigin: z.enum(['register', 'refresh']).optional().describe('"refresh" when a refresh wrote this revision.'),
});
const validationOut = z.looseObject({
  valid: z.boolean(),
  kind: kindOut.optional(),
  protocolVersion: z.string().optional(),
  sizeBytes: z.number().int().optional(),
  verified: z.boolean().optional().describe('Agents: whether register would record the card as verified.'),
  kid: z.string().optional().describe('The key that verified it.'),
  jwks: jwksOut,
  signatures: z.array(signatureOut).optional(),
  code: z.string().optional().describe('Why the document is invalid: VALIDATION_FAILED, TOO_LARGE or UNSUPPORTED_VERSION.'),
  message: z.string().optional(),
  errors: z.array(findingOut),
  warnings: z.array(findingOut),
});

// ---- results ----

function result(structured: Record<string, unknown>, text: string): CallToolResult {
  return { structuredContent: structured, content: [{ type: 'text', text }, { type: 'text', text: JSON.stringify(structured) }] };
}

/**
 * A refusal as a tool error: the code, message and findings as text for a model, then the error
 * object A2A's REJECTED task carries, `{"error": {code, message, details?, retryAfterSeconds?}}`,
 * as JSON text for programs (how long to wait after RATE_LIMITED, as A2A, gRPC and ARD say it).
 * Not as structuredContent: the SDK's client checks structuredContent against the tool's output
 * schema even on an error, and refuses the whole answer when it is not a search page or entry.
 */
function errorResult(error: ErrorBody): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: refusalText(error) }, { type: 'text', text: JSON.stringify({ error }) }] };
}

type Attempt = { answer: Answer } | { refused: RegistryError } | { failed: CallToolResult };

/**
 * Where a tool call has one of the operation's arguments, from its path relative to them
 * (/pageToken, /id): below /arguments by the same name, except where the tool is shaped otherwise.
 */
type ArgumentsOf = (path: string) => string;
const SAME_NAMES: ArgumentsOf = (path) => path;
/** list_agents takes the list's filter keys as its own arguments: /filter/owner is its /owner. */
const FILTER_AS_ARGUMENTS: ArgumentsOf = (path) => path.replace(/^\/filter(?=\/)/, '');

/**
 * Runs one operation for the tool call and records it in the call's scope (log line, metrics). A
 * refusal of the operation's arguments is named where the call has them (`argumentsOf`), under
 * /arguments, as every finding of a tool's arguments is.
 */
async function attempt(env: ToolEnv, operation: () => Operation, argumentsOf: ArgumentsOf = SAME_NAMES): Promise<Attempt> {
  const scope = currentScope();
  try {
    const op = operation();
    if (scope) scope.operation = op.op;
    const answer = await env.operations.answer(op, env.caller);
    if (scope) scope.taskState = 'COMPLETED';
    return { answer };
  } catch (err) {
    if (err instanceof RegistryError) {
      if (scope) Object.assign(scope, { taskState: 'REJECTED', errorCode: err.code });
      return { refused: rootedAt(err, '/arguments', argumentsOf) };
    }
    env.log.error({ err, requestId: scope?.requestId }, 'MCP tool call failed');
    if (scope) Object.assign(scope, { taskState: 'FAILED', errorCode: 'INTERNAL' });
    return { failed: errorResult({ code: 'INTERNAL', message: 'The registry could not complete the request; try again later.' }) };
  }
}

/** The search tool of each kind: each adds its kind to the search's filter. */
const SEARCH_TOOL_OF: Record<EntryKind, string> = { agent: 'search_agents', 'mcp-server': 'search_mcp_servers' };

/**
 * A pageToken sent with other arguments than the page it came from. The registry names the A2A
 * request's fields (resultsPer, which no tool has); the tool names its own arguments. A token the
 * registry did not issue is said in its words (nextPageToken is the tools' name too); either
 * refusal is at /arguments/pageToken (attempt() roots it). A token of another tool is told whose
 * it is, in the tools' words: a search tool's sent to list_agents (A2A's names its operations),
 * and one search tool's sent to the other, which the registry finds issued for the same search
 * with the other tool's kind in its filter (issuedForKind): it was told to send the same query,
 * filter and limit, which it had.
 */
function pageTokenRefusal(err: RegistryError, paging: Paging): RegistryError {
  const other = err.details?.find((d) => d.rule === PAGE_TOKEN_OTHER_OPERATION);
  if (other) return otherToolRefusal(paging.tool === 'list_agents' ? 'a search tool (search_agents or search_mcp_servers)' : 'list_agents', paging.tool, other);
  const query = err.details?.find((d) => d.rule === PAGE_TOKEN_OTHER_QUERY);
  if (!query) return err;
  const issuer = Object.entries(SEARCH_TOOL_OF).find(([kind]) => query.message === issuedForKind(kind))?.[1];
  if (issuer !== undefined && issuer !== paging.tool) return otherToolRefusal(issuer, paging.tool, query);
  return new RegistryError(
    'BAD_REQUEST',
    `The pageToken belongs to another ${paging.tool} call: send the same ${paging.boundTo} as the call whose answer gave it, or start again without pageToken.`,
    [{ path: '/arguments/pageToken', message: `issued for other ${paging.boundTo}`, rule: PAGE_TOKEN_OTHER_QUERY }],
  );
}

/** The refusal of a pageToken `issuer` (a tool, or which tools) gave, sent to `tool`; `finding` is the registry's. */
function otherToolRefusal(issuer: string, tool: string, finding: Finding): RegistryError {
  return new RegistryError(
    'BAD_REQUEST',
    `The pageToken is a nextPageToken of ${issuer}, not of ${tool}: pass it to the tool whose answer gave it, or call ${tool} without pageToken for its first page.`,
    [{ path: '/arguments/pageToken', message: finding.message, rule: finding.rule }],
  );
}

/** The tool a paged call is made with, and the arguments its pageToken is bound to. */
interface Paging {
  tool: string;
  boundTo: string;
}

/** A paged tool's refusals, its pageToken's in its own words. */
const paged = (paging: Paging) => (err: RegistryError) => pageTokenRefusal(err, paging);

/**
 * refresh_entry of an entry registered inline. The registry says how to register it by URL in A2A's
 * words ({"register": {"url": ...}}); the tool names the tools and arguments that do it.
 */
function refreshRefusal(id: string): (err: RegistryError) => RegistryError {
  return (err) => {
    if (!err.details?.some((d) => d.rule === REFRESH_NO_SOURCE)) return err;
    // Its details as they are: at /arguments/id, where the call has the id (attempt() roots them).
    return badRequest(
      `Entry "${id}" was registered with its document inline, so it has no source to refresh. Register it by URL (register_agent with url) or, for an MCP server, with register_mcp_server and fetchTools: true, and the registry keeps it fresh.`,
      err.details,
    );
  };
}

/**
 * attempt(), with registry refusals as tool errors the model can read and act on; `reword` says a
 * refusal in the tool's words where the registry's name another door's requests.
 */
async function run(
  env: ToolEnv,
  operation: () => Operation,
  present: (answer: Answer) => CallToolResult,
  reword?: (err: RegistryError) => RegistryError,
  argumentsOf?: ArgumentsOf,
): Promise<CallToolResult> {
  const outcome = await attempt(env, operation, argumentsOf);
  if ('refused' in outcome && reword) return errorResult(reword(outcome.refused).toBody());
  if ('answer' in outcome) {
    try {
      return present(outcome.answer);
    } catch (err) {
      if (!(err instanceof RegistryError)) throw err;
      return refused(env, err);
    }
  }
  return 'refused' in outcome ? errorResult(outcome.refused.toBody()) : outcome.failed;
}

/** A refusal made before or after the operation ran, recorded like the operation's own. */
function refused(env: ToolEnv, err: RegistryError): CallToolResult {
  const scope = currentScope();
  if (scope) Object.assign(scope, { taskState: 'REJECTED', errorCode: err.code });
  return errorResult(err.toBody());
}

/** A request the door itself declines (BAD_REQUEST), recorded like any refusal. */
function refuse(env: ToolEnv, message: string, details: Finding[]): CallToolResult {
  return refused(env, badRequest(message, details));
}

/**
 * A tool's arguments checked against its input schema, throwing the contract's BAD_REQUEST with
 * a finding per problem, its path under /arguments, as the A2A door refuses an operation's
 * arguments (request-parser.ts). The SDK checked them itself and answered its own text ("MCP
 * error -32602: Input validation error: ... at id"), with neither the CODE: line nor the JSON
 * error of every other refusal. A query past the limit in force is told so first, in the words
 * of every door.
 */
function checkArguments(tool: ToolName, schema: z.ZodObject, args: unknown, maxQueryChars: number): void {
  const given = args ?? {};
  if ('query' in schema.shape && isObject(given) && typeof given.query === 'string') checkQueryLength(given.query, maxQueryChars, '/arguments/query', tool);
  const parsed = schema.safeParse(given);
  if (parsed.success) return;
  // Arguments the tool does not take first (the likeliest mistake: another door's name for one), in the tool's words.
  const unknown = parsed.error.issues.filter((issue) => issue.code === 'unrecognized_keys' && issue.path.length === 0);
  const others = parsed.error.issues.filter((issue) => !unknown.includes(issue));
  const details = [
    ...unknown.map((issue) => unknownArguments(tool, schema, issue.code === 'unrecognized_keys' ? issue.keys : [])),
    ...(others.length > 0 ? zodFindings(new z.ZodError(others), '/arguments', schema, given) : []),
  ];
  throw badRequest(`The ${JSON.stringify(tool)} arguments are not valid: ${findingsSaid(details)}.`, details);
}

/**
 * The refusal of a tools/call whose arguments the tool's input schema does not take, as the
 * tool's error result (recorded in the request scope), or undefined when the tool takes them
 * (or no such tool is registered). params-guard.ts asks it before the SDK runs the call.
 */
export type ArgumentsCheck = (tool: string, args: unknown) => CallToolResult | undefined;

/** Refusals that mean "this document is not valid" (validate_document answers them as a verdict). */
const INVALID_DOCUMENT = new Set(['VALIDATION_FAILED', 'TOO_LARGE', 'UNSUPPORTED_VERSION']);

function invalidDocumentResult(kind: EntryKind, err: RegistryError): CallToolResult {
  const errors = err.details ?? [];
  const structured = { valid: false, kind, code: err.code, message: err.message, errors, warnings: [] };
  const text = [`Invalid ${kind === 'agent' ? 'agent card' : 'MCP toolspec'} (${err.code}): ${err.message}`, ...refusalLines(errors)].join('\n');
  return result(structured, text);
}

const isMatch = (m: unknown): m is { type: string; name: string } => isObject(m) && typeof m.type === 'string' && typeof m.name === 'string';

function searchText(page: SearchPage, what: string): string {
  if (page.results.length === 0) return page.reason ? `No ${what} matched: ${page.reason}.` : `No ${what} matched.`;
  const lines = page.results.map((hit: SearchHit, i) => {
    const match: unknown = (hit as { match?: unknown }).match;
    const inner = isMatch(match) && (match.type === 'skill' || match.type === 'tool') ? ` — ${match.type} "${match.name}"` : '';
    const url = hit.interfaces[0]?.url;
    const state = hit.health && hit.health.status !== 'ok' ? ` [${hit.health.status} since ${hit.health.since}]` : '';
    const signed = hit.verified ? ` — signature verified${hit.kid ? ` (${verifyingKeyText(hit.kid, hit.jwks)})` : ''}` : '';
    return `${i + 1}. ${hit.name} (id ${hit.id})${inner}${url ? ` — ${url}` : ''}${signed}${state}`;
  });
  lines.push(`${totalText(page.total, page.totalExact !== false)} match(es) in all.${page.nextPageToken ? ' More: call again with the same arguments and pageToken.' : ''}`);
  return lines.join('\n');
}

/** get_agent / get_mcp_server show one kind: the other kind is "not found here", with the tool that shows it. */
function requireKind(view: EntryView, kind: EntryKind): EntryView {
  if (view.kind === kind) return view;
  const other = view.kind === 'agent' ? 'get_agent' : 'get_mcp_server';
  throw new RegistryError('NOT_FOUND', `Entry "${view.id}" is ${view.kind === 'agent' ? 'an A2A agent' : 'an MCP server'}; call ${other} for it.`);
}

const dataOf = <T>(answer: Answer): T => answer.data as unknown as T; // the runner spreads the contract's types into a record

// ---- the tools ----

/** Registers every tool on `server` for one request; answers the check of a call's arguments against them. */
export function registerTools(server: McpServer, env: ToolEnv): ArgumentsCheck {
  const inputs = inputSchemas(env.limits.maxQueryChars);
  // The query's length was checked with the arguments (checkArguments), before the SDK's own check.
  const search = (kind: EntryKind, args: { query?: string; filter?: Record<string, unknown>; limit?: number; pageToken?: string }): Promise<CallToolResult> =>
    run(
      env,
      () => ({ op: 'search', request: { query: args.query, filter: { ...args.filter, kind }, limit: args.limit, pageToken: args.pageToken } }),
      (answer) => result(answer.data, searchText(dataOf<SearchPage>(answer), kind === 'agent' ? 'agents' : 'MCP servers')),
      paged({ tool: SEARCH_TOOL_OF[kind], boundTo: 'query, filter and limit' }),
    );

  const get = (kind: EntryKind, args: { id: string; revision?: number }): Promise<CallToolResult> =>
    run(
      env,
      () => (args.revision === undefined ? { op: 'get', id: args.id } : { op: 'get', id: args.id, revision: args.revision }),
      (answer) => {
        requireKind(dataOf<EntryView>(answer), kind);
        return result(answer.data, answer.text);
      },
    );

  server.registerTool(
    'search_agents',
    {
      title: 'Search A2A agents',
      description:
        'Find A2A agents registered in this registry by what they can do. Returns the best-matching agents (and the skill that matched) with their ids, endpoints and relevance scores, best first. ' +
        'Use it when you need an agent for a task ("translate invoices", "book flights"); then call get_agent with an id for its full agent card. For MCP servers and their tools use search_mcp_servers.',
      inputSchema: inputs.search_agents,
      outputSchema: searchOut,
      annotations: { title: 'Search A2A agents', ...READ_ONLY },
    },
    (args) => search('agent', args),
  );

  server.registerTool(
    'search_mcp_servers',
    {
      title: 'Search MCP servers',
      description:
        'Find MCP servers registered in this registry by the tools they offer. Returns the best-matching servers (and the tool that matched) with their ids, URLs and relevance scores, best first. ' +
        'Filter on tool hints, e.g. {"readOnly": true} for tools that change nothing. Then call get_mcp_server with an id for the server\'s full toolspec. For A2A agents use search_agents.',
      inputSchema: inputs.search_mcp_servers,
      outputSchema: searchOut,
      annotations: { title: 'Search MCP servers', ...READ_ONLY },
    },
    (args) => search('mcp-server', args),
  );

  server.registerTool(
    'get_agent',
    {
      title: 'Get an A2A agent',
      description:
        'The full registry entry of one A2A agent by id: its agent card exactly as registered (skills, endpoints, security schemes), owner, revision and timestamps. Use it after search_agents or list_agents to learn how to call the agent.',
      inputSchema: inputs.get_agent,
      outputSchema: entryOut,
      annotations: { title: 'Get an A2A agent', ...READ_ONLY },
    },
    (args) => get('agent', args),
  );

  server.registerTool(
    'get_mcp_server',
    {
      title: 'Get an MCP server',
      description:
        'The full registry entry of one MCP server by id: its URL and metadata and its toolspec (every tool with its input schema and annotations) exactly as registered. Use it after search_mcp_servers to learn how to connect and which tools it has.',
      inputSchema: inputs.get_mcp_server,
      outputSchema: entryOut,
      annotations: { title: 'Get an MCP server', ...READ_ONLY },
    },
    (args) => get('mcp-server', args),
  );

  server.registerTool(
    'list_agents',
    {
      title: 'List A2A agents',
      description:
        'Browse registered A2A agents page by page, newest registered first, without a query (names, ids, endpoints; no cards). Use search_agents to find agents for a task, and search_mcp_servers without a query to browse MCP servers.',
      inputSchema: inputs.list_agents,
      outputSchema: listOut,
      annotations: { title: 'List A2A agents', ...READ_ONLY },
    },
    (args) =>
      run(
        env,
        () => ({
          op: 'list',
          request: { filter: { kind: 'agent', owner: args.owner, mine: args.mine, health: args.health, verified: args.verified }, pageSize: args.pageSize, pageToken: args.pageToken },
        }),
        (answer) => result(answer.data, answer.text),
        paged({ tool: 'list_agents', boundTo: 'owner, mine, health and verified' }),
        FILTER_AS_ARGUMENTS,
      ),
  );

  server.registerTool(
    'validate_document',
    {
      title: 'Validate an agent card or MCP toolspec',
      description:
        'Check an A2A agent card (v1.0 or v0.3) or an MCP toolspec ({"tools": [...]} as tools/list returns it) with the same rules the registry applies when registering; nothing is stored. ' +
        'Returns valid: true with warnings, or valid: false with every error as a JSON Pointer path, a message and a hint on how to fix it. Give exactly one of agentCard or toolspec.',
      inputSchema: inputs.validate_document,
      outputSchema: validationOut,
      annotations: { title: 'Validate a document', ...READ_ONLY },
    },
    async (args) => {
      const kind: EntryKind = args.agentCard !== undefined ? 'agent' : 'mcp-server';
      if ((args.agentCard === undefined) === (args.toolspec === undefined)) {
        return refuse(env, 'Give exactly one document: agentCard (an A2A agent card), or toolspec ({"tools": [...]}) with an optional mcpServer.', [
          { path: '/arguments', message: args.agentCard === undefined ? 'no document' : 'two documents' },
        ]);
      }
      if (args.agentCard !== undefined && args.mcpServer !== undefined) {
        return refuse(env, 'mcpServer goes with a toolspec, not with an agentCard.', [{ path: '/arguments/mcpServer', message: 'not with agentCard' }]);
      }
      const outcome = await attempt(env, () => ({ op: 'validate', subject: documentSubject(args, 'validate', env.limits, '/arguments') }));
      if ('answer' in outcome) return result(outcome.answer.data, outcome.answer.text);
      if ('failed' in outcome) return outcome.failed;
      // An invalid document is the answer to "is it valid?", not a failed call: the same errors,
      // paths and hints as register gives, as structured content.
      return INVALID_DOCUMENT.has(outcome.refused.code) ? invalidDocumentResult(kind, outcome.refused) : errorResult(outcome.refused.toBody());
    },
  );

  const register = (args: Record<string, unknown>): Promise<CallToolResult> =>
    run(env, () => ({ op: 'register', subject: registerSubject(args, env.limits, '/arguments') }), (answer) => result(answer.data, answer.text));

  server.registerTool(
    'register_agent',
    {
      title: 'Register an A2A agent',
      description:
        'Register an A2A agent card (v1.0 or v0.3), or update the one you registered before for the same endpoint (same id, next revision). Needs a registry token (Authorization: Bearer). ' +
        'Give the card itself (agentCard), or its URL (url): the registry fetches the card, checks it the same way, and keeps it fresh from there (health, refresh). ' +
        'The card is validated first; if it is invalid nothing is stored and the errors say where and how to fix it (validate_document checks without storing). Returns the entry id, revision and warnings.',
      inputSchema: inputs.register_agent,
      outputSchema: registrationOut,
      annotations: { title: 'Register an A2A agent', ...REGISTERS },
    },
    (args) => {
      if ((args.agentCard === undefined) === (args.url === undefined)) {
        return refuse(env, 'Give exactly one of agentCard (the card) or url (where the registry fetches it).', [
          { path: '/arguments', message: args.url === undefined ? 'neither agentCard nor url' : 'both agentCard and url' },
        ]);
      }
      return register(args);
    },
  );

  server.registerTool(
    'register_mcp_server',
    {
      title: 'Register an MCP server',
      description:
        'Register an MCP server with its toolspec (the tools/list result), or update the one you registered before for the same server URL. Needs a registry token (Authorization: Bearer). ' +
        'Instead of a toolspec, fetchTools: true has the registry connect to the server (Streamable HTTP) and list its tools itself, then keep them fresh from there. ' +
        'Validated like validate_document; nothing is stored when it is invalid. Returns the entry id, revision and warnings.',
      inputSchema: inputs.register_mcp_server,
      outputSchema: registrationOut,
      annotations: { title: 'Register an MCP server', ...REGISTERS },
    },
    (args) => {
      const fetchTools = args.fetchTools === true;
      if ((args.toolspec === undefined) === !fetchTools) {
        return refuse(env, 'Give exactly one of toolspec ({"tools": [...]}) or fetchTools: true (the registry lists the tools itself).', [
          { path: '/arguments', message: fetchTools ? 'both toolspec and fetchTools' : 'neither toolspec nor fetchTools' },
        ]);
      }
      return register(fetchTools ? { mcpServer: args.mcpServer, fetchTools } : { mcpServer: args.mcpServer, toolspec: args.toolspec });
    },
  );

  server.registerTool(
    'refresh_entry',
    {
      title: 'Refresh a registry entry',
      description:
        'Fetch the document of an entry you registered by URL (or with fetchTools) again now, instead of waiting for the registry\'s periodic refresh. Needs the token of the entry\'s owner (or an admin). ' +
        'A changed, valid document becomes the next revision; an invalid or unreachable one keeps the current revision and is recorded in the entry\'s health. Returns the entry id, revision, source and health.',
      inputSchema: inputs.refresh_entry,
      outputSchema: registrationOut,
      annotations: { title: 'Refresh a registry entry', ...REGISTERS },
    },
    (args) => run(env, () => ({ op: 'refresh', id: args.id }), (answer) => result(answer.data, answer.text), refreshRefusal(args.id)),
  );

  return (tool, args) => {
    if (!Object.hasOwn(inputs, tool)) return undefined;
    const name = tool as ToolName;
    try {
      checkArguments(name, inputs[name], args, env.limits.maxQueryChars);
      return undefined;
    } catch (err) {
      if (!(err instanceof RegistryError)) throw err;
      return refused(env, err);
    }
  };
}
