/**
 * An MCP server's tools, as `tools/list` returns them (every page), through the official MCP
 * TypeScript SDK client over Streamable HTTP — with the SDK's requests going through the
 * outbound guard (its `fetch` is the Fetcher's fetchFunction).
 *
 * The list is read with a loose result schema rather than `client.listTools()`: listTools
 * compiles every tool's outputSchema with ajv for later calls, and a hostile server's schema
 * must not run through a compiler here (see NOTES.md on ajv); the registry's own validator checks
 * the tools afterwards with its size and depth bounds, and says precisely what is wrong.
 *
 * The SDK is imported on first use: it takes a few seconds to load on a busy machine, and a
 * registry that never lists an MCP server's tools should not start slower for it.
 */
import { z } from 'zod';
import { codePointPrefix } from '../lib/code-points.js';
import { issueMessage } from '../lib/issue-words.js';
import { schemaAt, valueAt } from '../lib/zod-paths.js';
import { asksRetryAfter, retryAfterMs } from '../lib/retry-after.js';
import { FetchError, type FetchFunction } from '../net/index.js';

/** A page of tools/list, loosely: the tools exactly as sent, the cursor if any. */
const ToolsPage = z.looseObject({
  tools: z.array(z.unknown()),
  nextCursor: z.string().optional(),
});

/**
 * Pages read at most: a server whose cursor never ends does not keep the registry busy. One page
 * per 512 bytes of the size limit (20 at the default 10 KB, which holds about a hundred small
 * tools) is more than any honest server needs to fit its tools into that limit.
 */
export const maxToolPages = (maxBytes: number): number => Math.max(20, Math.ceil(maxBytes / 512));

export class ToolListError extends Error {
  constructor(
    message: string,
    readonly reason: 'too-large' | 'too-many-pages' | 'protocol',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ToolListError';
  }
}

export interface ListToolsOptions {
  fetch: FetchFunction;
  /** Cancels the whole exchange (the caller's deadline). */
  signal: AbortSignal;
  timeoutMs: number;
  /** The tools' JSON may not grow past this many bytes (the document size limit). */
  maxBytes: number;
  clientVersion: string;
}

/** The longest part of what a server sent that an error message repeats. */
const MAX_QUOTED_CHARS = 200;

/**
 * The MCP SDK's Streamable HTTP failures as the guard's own: an HTTP error status, or an answer
 * that is not JSON nor an event stream. The SDK's message holds the server's whole answer body
 * (a 404 page's HTML, thousands of characters) and names no status; these name the status, the
 * fix, and the rule (`http-status`, `content-type`) a card's fetch is refused with.
 */
function transportFailure(
  error: unknown,
  url: URL,
  StreamableHTTPError: new (...args: never[]) => Error & { code?: number },
  retryAfter: string | undefined,
): FetchError | undefined {
  if (!(error instanceof StreamableHTTPError)) return undefined;
  const { code } = error;
  if (code === -1) {
    const type = /Unexpected content type: (.*)$/s.exec(error.message)?.[1]?.slice(0, MAX_QUOTED_CHARS) ?? '?';
    // The SDK writes a missing header as "null".
    const said = type === 'null' ? 'without a Content-Type' : `with Content-Type "${type}"`;
    return new FetchError('content-type', url.href, `${url.href} answered ${said}; an MCP server answers JSON-RPC as application/json or text/event-stream`);
  }
  if (code === undefined || code < 300 || code > 599) return undefined;
  const hint =
    code === 401 || code === 403
      ? ': the registry lists tools without credentials, so the server must answer tools/list without them (or register the toolspec inline)'
      : code === 404 || code === 405
        ? ': check that this is the server\'s Streamable HTTP endpoint (often ending in /mcp)'
        : '';
  // The SDK keeps no headers: the Retry-After of a 429 or 503 is the one the exchange's fetch saw (withRetryAfterSeen).
  const waitMs = asksRetryAfter(code) ? retryAfterMs(retryAfter) : undefined;
  const asked = waitMs === undefined ? '' : ` (Retry-After: ${retryAfter!.trim().slice(0, MAX_QUOTED_CHARS)})`;
  return new FetchError('http-status', url.href, `${url.href} answered HTTP ${code} to the MCP client${asked}${hint}`, { status: code, retryAfterMs: waitMs });
}

/**
 * The exchange's fetch, noting the Retry-After of the last answer that was a 429 or 503: the
 * SDK's error names only the status, and a refresh's next check waits for what the server asked.
 */
function withRetryAfterSeen(fetch: FetchFunction, seen: { retryAfter?: string }): FetchFunction {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (asksRetryAfter(response.status)) seen.retryAfter = response.headers.get('retry-after') ?? undefined;
    return response;
  };
}

/**
 * A schema error the SDK threw itself (an answer that is no JSON-RPC message at all), whose message
 * is its issues as pretty-printed JSON, in a line. The results of initialize and tools/list are
 * checked here instead (checkedAnswer), in plain words.
 */
function protocolFailure(error: unknown, url: URL): ToolListError | undefined {
  const issues = (error as { issues?: unknown } | null)?.issues;
  if (!Array.isArray(issues) || issues.length === 0) return undefined;
  const said = issues.slice(0, 3).map((issue: { path?: unknown[]; message?: unknown }) => {
    const at = Array.isArray(issue.path) && issue.path.length > 0 ? issue.path.join('.') : '(the result)';
    return `${at}: ${codePointPrefix(String(issue.message), MAX_QUOTED_CHARS)}`;
  });
  return new ToolListError(`${url.href} did not answer as an MCP server (${said.join('; ')})`, 'protocol', { cause: error });
}

/**
 * The result of a request to the server (`which`: initialize, tools/list), checked here rather
 * than by the SDK: its error was zod's text ("tools: Invalid input: expected array, received
 * string"), which names neither the request nor what an MCP server sends. Said instead in the
 * words of every refused argument (lib/issue-words.ts): which part of the answer is wrong (its
 * path from the result, "serverInfo.version"), what it takes and what came, after the answer's
 * form (`form`).
 */
function checkedAnswer<S extends z.ZodType>(schema: S, result: unknown, url: URL, which: string, form: string): z.infer<S> {
  const checked = schema.safeParse(result);
  if (checked.success) return checked.data;
  // The result itself is named as such ("The value" says nothing of where).
  const said = checked.error.issues.slice(0, 3).map((issue) => {
    const path = issue.path.length === 0 ? [] : [issue.path.map(String).join('.')];
    return codePointPrefix(issueMessage(issue, path, schemaAt(schema, issue.path), valueAt(result, issue.path)).replace(/^The value\b/, 'The result'), MAX_QUOTED_CHARS);
  });
  throw new ToolListError(`${url.href} did not answer ${which} as an MCP server does, with ${form}: ${said.join('; ')}`, 'protocol');
}

const toolsPage = (result: unknown, url: URL, page: number): z.infer<typeof ToolsPage> =>
  checkedAnswer(ToolsPage, result, url, page === 1 ? 'tools/list' : `page ${page} of tools/list`, '{"tools": [...], "nextCursor"?: "..."}');

/** What initialize answers, as its error names it. */
const INITIALIZE_FORM = '{"protocolVersion": "...", "capabilities": {...}, "serverInfo": {"name": "...", "version": "..."}}';

/**
 * The exchange's requests, sent where the server moved once an answer came from another origin.
 * The SDK sends every request to the URL it was given, and a redirect that leaves the origin
 * carries no mcp-session-id (the guard does not hand a session to another origin): a server that
 * moved, and issued its session from there, got each later request without it and refused it.
 * Its session is the new origin's, so the requests after the first go there directly.
 */
function followingTheMove(fetch: FetchFunction, url: URL): FetchFunction {
  let moved: string | undefined;
  return async (input, init) => {
    const target = moved !== undefined && !(input instanceof Request) && String(input) === url.href ? moved : input;
    const response = await fetch(target, init);
    if (moved === undefined && response.url && new URL(response.url).origin !== url.origin) moved = response.url;
    return response;
  };
}

/** Connects, lists every page of tools, disconnects. Throws ToolListError, or what the transport threw (a FetchError). */
export async function listMcpTools(url: URL, options: ListToolsOptions): Promise<unknown[]> {
  const [{ Client }, { StreamableHTTPClientTransport, StreamableHTTPError }, { InitializeResultSchema }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  const client = new Client({ name: 'a2a-agent-registry', version: options.clientVersion }, { capabilities: {} });
  // connect() sends initialize with the SDK's result schema, whose error is zod's text: it is
  // given one that takes anything, and the answer is checked here with the SDK's schema, as a
  // page of tools/list is (checkedAnswer). connect() then reads what the check returns.
  const request = client.request.bind(client);
  client.request = ((sent, schema, requestOptions) =>
    sent.method === 'initialize'
      ? request(sent, z.unknown(), requestOptions).then((result) => checkedAnswer(InitializeResultSchema, result, url, 'initialize', INITIALIZE_FORM))
      : request(sent, schema, requestOptions)) as typeof client.request;
  // Redirects are the guarded fetch's to follow (at most 3, every hop checked, no credentials or
  // session carried to another origin), as for every other outbound request: the SDK's own policy follows
  // only those within the origin, and an MCP server that moved to another host failed.
  const seen: { retryAfter?: string } = {};
  const transport = new StreamableHTTPClientTransport(url, { fetch: withRetryAfterSeen(followingTheMove(options.fetch, url), seen), redirectPolicy: 'follow' });
  const requestOptions = { signal: options.signal, timeout: options.timeoutMs };
  try {
    await client.connect(transport, requestOptions);
    const tools: unknown[] = [];
    let bytes = 2;
    let cursor: string | undefined;
    const maxPages = maxToolPages(options.maxBytes);
    for (let page = 1; ; page++) {
      const result = toolsPage(await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, z.unknown(), requestOptions), url, page);
      for (const tool of result.tools) {
        bytes += Buffer.byteLength(JSON.stringify(tool) ?? 'null') + 1;
        if (bytes > options.maxBytes) {
          throw new ToolListError(`${url.href} lists more tools than fit in ${options.maxBytes} bytes (the document size limit)`, 'too-large');
        }
        tools.push(tool);
      }
      cursor = result.nextCursor;
      if (cursor === undefined) return tools;
      if (page >= maxPages) {
        throw new ToolListError(`${url.href} kept answering tools/list with a next page after ${maxPages} pages`, 'too-many-pages');
      }
    }
  } catch (error) {
    throw transportFailure(error, url, StreamableHTTPError, seen.retryAfter) ?? protocolFailure(error, url) ?? error;
  } finally {
    // Ending the session politely is best effort: a server that does not answer costs nothing more.
    if (transport.sessionId !== undefined && !options.signal.aborted) await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}
