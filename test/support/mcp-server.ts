/**
 * A real MCP server for tests, built with the official MCP TypeScript SDK (low-level Server,
 * Streamable HTTP, stateless: a new server and transport per request), on 127.0.0.1. Its
 * tools/list answers in pages; what it lists can be changed while it runs.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export interface TestMcpServer {
  /** The Streamable HTTP endpoint: http://127.0.0.1:<port>/mcp */
  url: string;
  /** What tools/list returns (all pages together); replace it to change the server. */
  tools: unknown[];
  pageSize: number;
  /** tools/list requests received (one per page). */
  listCalls: number;
  /** Every JSON-RPC method received, in order. */
  methods: string[];
  /** Answer tools/list with a next page forever (a hostile server). */
  endlessPages: boolean;
  close(): Promise<void>;
}

export function sampleTools(count: number, prefix = 'tool'): unknown[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `${prefix}_${i}`,
    title: `Tool ${i}`,
    description: `Does thing number ${i} with files.`,
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    annotations: { readOnlyHint: i % 2 === 0 },
  }));
}

export async function startMcpServer(options: { tools?: unknown[]; pageSize?: number } = {}): Promise<TestMcpServer> {
  const state: Omit<TestMcpServer, 'url' | 'close'> = {
    tools: options.tools ?? sampleTools(5),
    pageSize: options.pageSize ?? 2,
    listCalls: 0,
    methods: [],
    endlessPages: false,
  };
  const server = http.createServer(async (req, res) => {
    if (req.url !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    if (req.method !== 'POST') {
      // No standalone SSE stream, no sessions: what a stateless server answers.
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const parsed = JSON.parse(body) as { method?: string } | { method?: string }[];
    for (const m of Array.isArray(parsed) ? parsed : [parsed]) if (m.method) state.methods.push(m.method);
    const mcp = new Server({ name: 'test-files', version: '1.0.0' }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async (request) => {
      state.listCalls++;
      const start = Number(request.params?.cursor ?? 0);
      const page = state.tools.slice(start, start + state.pageSize);
      const next = start + state.pageSize;
      const more = state.endlessPages || next < state.tools.length;
      return { tools: page as never[], ...(more ? { nextCursor: String(state.endlessPages ? next % Math.max(1, state.tools.length) : next) } : {}) };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, parsed);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const result = Object.assign(state, {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return result as TestMcpServer;
}
