/** The MCP SDK's client against a registry's /mcp door, and readers for its tool results. */
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { WireJson } from './client.js';

/** Connects to `${registryUrl}/mcp`, with a bearer token when given; close it when done. */
export async function connectMcp(registryUrl: string, name: string, token?: string): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${registryUrl}/mcp`), { requestInit: { headers } }));
  return client;
}

export const callTool = async (client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

/** The structured content of a successful tool call (fails the test on a tool error). */
export function structured(r: CallToolResult): WireJson {
  assert.ok(!r.isError, `expected a result, got an error: ${JSON.stringify(r.content)}`);
  return r.structuredContent as WireJson;
}

/** The text of a tool error (fails the test on a result). */
export function errorText(r: CallToolResult): string {
  assert.equal(r.isError, true, `expected a tool error, got ${JSON.stringify(r.structuredContent)}`);
  return (r.content[0] as { text: string }).text;
}
