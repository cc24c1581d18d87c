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
import type { FetchFunction } from '../net/index.js';

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

/** Connects, lists every page of tools, disconnects. Throws ToolListError, or what the transport threw (a FetchError). */
export async function listMcpTools(url: URL, options: ListToolsOptions): Promise<unknown[]> {
  const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]);
  const client = new Client({ name: 'a2a-agent-registry', version: options.clientVersion }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(url, { fetch: options.fetch });
  const requestOptions = { signal: options.signal, timeout: options.timeoutMs };
  try {
    await client.connect(transport, requestOptions);
    const tools: unknown[] = [];
    let bytes = 2;
    let cursor: string | undefined;
    const maxPages = maxToolPages(options.maxBytes);
    for (let page = 1; ; page++) {
      const result = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ToolsPage, requestOptions);
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
  } finally {
    // Ending the session politely is best effort: a server that does not answer costs nothing more.
    if (transport.sessionId !== undefined && !options.signal.aborted) await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}
