/**
 * The total limit over real HTTP (REGISTRY_SEARCH_TOTAL_LIMIT, here 3): past it a search's
 * `total` is a lower bound marked `totalExact: false`, page tokens still reach every result in
 * order, and the doors say "at least" (A2A, MCP); a watch still counts up to what it may follow.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@a2a-js/sdk/client';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { op, resultOf, sdkClient, type WireJson } from './support/client.js';
import { v1Card } from './support/documents.js';
import { callTool, connectMcp, structured } from './support/mcp-client.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';

const LIMIT = 3;
const COUNT = 8;
let registry: TestRegistry;
let writer: Client;
let reader: Client;
let mcp: McpClient;
/** Registered ids, oldest first. */
const ids: string[] = [];

const search = async (args: WireJson): Promise<WireJson> => resultOf(await op(reader, { search: args }));

before(async () => {
  registry = await startTestRegistry({ REGISTRY_SEARCH_TOTAL_LIMIT: String(LIMIT) });
  writer = await sdkClient(registry.url, { token: TOKENS.alice });
  reader = await sdkClient(registry.url);
  for (let i = 0; i < COUNT; i++) {
    const card = v1Card(`Ledger Agent ${i}`, `https://ledger-${i}.example.org/a2a/jsonrpc`);
    ids.push(resultOf(await op(writer, { register: { agentCard: card } })).id);
  }
  mcp = await connectMcp(registry.url, 'search-totals');
});
after(async () => {
  await mcp.close();
  await registry.close();
});

describe('the total limit', () => {
  test('a listing past the limit says "at least" and its page tokens reach every entry, newest first', async () => {
    const first = await search({ limit: 2 });
    assert.equal(first.totalExact, false);
    assert.ok(first.total >= LIMIT && first.total < COUNT, `total ${first.total}`);
    const seen: string[] = first.results.map((h: WireJson) => h.id);
    let token: string | undefined = first.nextPageToken;
    while (token) {
      const page = await search({ limit: 2, pageToken: token });
      seen.push(...page.results.map((h: WireJson) => h.id));
      token = page.nextPageToken;
    }
    // Newest first (registrations in the same millisecond go by id): as one page of all shows them.
    const whole = await search({ limit: 100 });
    assert.equal(whole.totalExact, undefined, 'a page past the limit counts what it shows');
    assert.deepEqual(seen, whole.results.map((h: WireJson) => h.id));
    assert.deepEqual([...seen].sort(), [...ids].sort(), 'every entry once');
  });

  test('below the limit the total is exact and says nothing more', async () => {
    const page = await search({ query: '', filter: { owner: 'nobody-here' } });
    assert.equal(page.total, 0);
    assert.equal('totalExact' in page, false);
  });

  test('the MCP tools answer the same page and write "at least" in their text', async () => {
    const viaMcp = await callTool(mcp, 'search_agents', { limit: 2 });
    const data = structured(viaMcp);
    assert.deepEqual(data, await search({ limit: 2, filter: { kind: 'agent' } }));
    assert.equal(data.totalExact, false);
    const [summary] = viaMcp.content as Array<{ type: string; text: string }>;
    assert.match(summary!.text, new RegExp(`at least ${data.total} match\\(es\\) in all`));
  });

  test('the A2A answer writes "at least" in its text part', async () => {
    const task = await op(reader, { search: { limit: 2 } });
    const text = JSON.stringify(task);
    assert.match(text, /at least \d+ match\(es\) in all/);
  });
});
