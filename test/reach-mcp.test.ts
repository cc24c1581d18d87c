/**
 * The MCP door end to end with the MCP SDK's own client over Streamable HTTP on 127.0.0.1:
 * tools and their schemas, the same answers as the A2A operations, validation errors with paths
 * and hints, authentication, DNS-rebinding protection, rate limits, metrics and the log line.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ErrorCode, ListResourcesResultSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client as A2AClient } from '@a2a-js/sdk/client';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/observability/logger.js';
import { startRegistry, type RunningRegistry } from '../src/server.js';
import { errorOf, op, resultOf, sdkClient, type WireJson } from './support/client.js';
import { mcpServer, toolspec, v03Card, v1Card } from './support/documents.js';
import { connect, sendEndlessBody } from './support/raw-connection.js';
import { TOKENS, TOKENS_ENV, tempDir } from './support/registry.js';

const logs: Record<string, unknown>[] = [];
const capture = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

interface Started {
  registry: RunningRegistry;
  dataDir: string;
}
const started: Started[] = [];

async function start(env: Record<string, string> = {}): Promise<RunningRegistry> {
  const dataDir = tempDir('a2a-registry-mcp-');
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', REGISTRY_TOKENS: TOKENS_ENV, REGISTRY_DATA_DIR: dataDir, ...env });
  const registry = await startRegistry(config, createLogger('info', capture));
  await registry.ready;
  started.push({ registry, dataDir });
  return registry;
}

let registry: RunningRegistry;
let writer: A2AClient;
let reader: A2AClient;
const ids = { invoice: '', weather: '', files: '' };
const clients: Client[] = [];

async function mcpClient(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'registry-test', version: '1.0.0' });
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

/** POSTs `body` to /mcp over node:http, which sends only the headers given (fetch adds Accept, and sets Host itself). */
function rawMcpPost(headers: Record<string, string>, body: string): Promise<{ status: number; body: WireJson }> {
  const { port } = new URL(registry.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as WireJson }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

let anonymous: Client;
const call = async (name: string, args: Record<string, unknown>, client: Client = anonymous): Promise<CallToolResult> =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;
const structured = (r: CallToolResult): WireJson => {
  assert.ok(!r.isError, `expected a result, got an error: ${JSON.stringify(r.content)}`);
  assert.ok(r.structuredContent, 'structuredContent');
  return r.structuredContent as WireJson;
};
const errorText = (r: CallToolResult): string => {
  assert.equal(r.isError, true, `expected a tool error, got ${JSON.stringify(r.structuredContent)}`);
  return (r.content[0] as { text: string }).text;
};
const a2a = async (data: unknown): Promise<WireJson> => resultOf(await op(reader, data));
/** The JSON text after a tool error's text: {"error": {code, message, details?, retryAfterSeconds?}}. */
const errorJson = (r: CallToolResult): WireJson => {
  assert.equal(r.isError, true);
  return JSON.parse((r.content[1] as { text: string }).text) as WireJson;
};

before(async () => {
  registry = await start({ REGISTRY_RATE_LIMITS: 'false' });
  writer = await sdkClient(registry.url, { token: TOKENS.alice });
  reader = await sdkClient(registry.url);
  ids.invoice = resultOf(await op(writer, { register: { agentCard: v1Card() } })).id;
  ids.weather = resultOf(await op(writer, { register: { agentCard: v03Card() } })).id;
  const bobClient = await sdkClient(registry.url, { token: TOKENS.bob });
  ids.files = resultOf(await op(bobClient, { register: { mcpServer: mcpServer(), toolspec: toolspec() } })).id;
  anonymous = await mcpClient(registry.url);
});

after(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  for (const { registry: r, dataDir } of started) {
    await r.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

describe('MCP tools', () => {
  test('tools with input and output schemas, annotations and descriptions for a model; only the register and refresh tools write', async () => {
    // No notifications/tools/list_changed will come: the endpoint is stateless and its tools fixed.
    assert.deepEqual(anonymous.getServerCapabilities()?.tools, { listChanged: false });
    const { tools } = await anonymous.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [
      'get_agent', 'get_mcp_server', 'list_agents', 'refresh_entry', 'register_agent', 'register_mcp_server', 'search_agents', 'search_mcp_servers', 'validate_document',
    ]);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.equal(tool.outputSchema?.type, 'object', `${tool.name} outputSchema`);
      // Writes may fetch from the agent or server they name (register by URL, fetchTools, refresh): an open world.
      // They are destructive: a changed document replaces the current one, and a revision past
      // REGISTRY_MAX_REVISIONS deletes the oldest (MCP: false means "only additive updates").
      const writes = tool.name.startsWith('register_') || tool.name === 'refresh_entry';
      assert.deepEqual(
        { readOnly: tool.annotations?.readOnlyHint, destructive: tool.annotations?.destructiveHint, idempotent: tool.annotations?.idempotentHint, openWorld: tool.annotations?.openWorldHint },
        { readOnly: !writes, destructive: writes, idempotent: true, openWorld: writes },
        tool.name,
      );
      assert.ok((tool.description ?? '').length > 120, `${tool.name} has a description a model can choose by`);
      assert.ok(tool.title, `${tool.name} title`);
    }
    const search = tools.find((t) => t.name === 'search_agents')!;
    const props = search.inputSchema.properties as WireJson;
    assert.deepEqual(Object.keys(props).sort(), ['filter', 'limit', 'pageToken', 'query']);
    assert.equal(props.filter.additionalProperties, false, 'a misspelt filter key is an error, as over A2A');
    assert.ok(props.query.description && props.filter.properties.tags.description, 'arguments are described');
    const instructions = anonymous.getInstructions();
    assert.match(instructions ?? '', /search_agents/);
  });

  test('the search tools publish the query limit in force (REGISTRY_MAX_QUERY_CHARS), not the schema ceiling', async () => {
    const queryOf = (tools: Array<{ name: string; inputSchema: { properties?: unknown } }>, name: string): WireJson =>
      (tools.find((t) => t.name === name)!.inputSchema.properties as WireJson).query;
    // Published 10,000 (the contract schema's ceiling) while 1,001 characters were refused.
    const { tools } = await anonymous.listTools();
    for (const name of ['search_agents', 'search_mcp_servers']) assert.equal(queryOf(tools, name).maxLength, 1000, name);
    const short = await start({ REGISTRY_MAX_QUERY_CHARS: '50' });
    const client = await mcpClient(short.url);
    const published = (await client.listTools()).tools;
    for (const name of ['search_agents', 'search_mcp_servers']) {
      assert.equal(queryOf(published, name).maxLength, 50, name);
      assert.equal(structured(await call(name, { query: 'x'.repeat(50) }, client)).total, 0, `${name}: the limit itself is taken`);
      // Named by the tool called, as its other argument errors are (it said "search").
      const tooLong = await call(name, { query: 'x'.repeat(51) }, client);
      assert.match(errorText(tooLong), new RegExp(`^BAD_REQUEST: The "${name}" arguments are not valid: /arguments/query: the query is 51 characters; the limit is 50 \\(REGISTRY_MAX_QUERY_CHARS\\)`), name);
      assert.equal(errorJson(tooLong).error.details[0].path, '/arguments/query', name);
      // Characters as maxLength counts them, code points: 50 emoji are 50 (100 UTF-16 units).
      assert.equal(structured(await call(name, { query: '🌤'.repeat(50) }, client)).total, 0, `${name}: 50 emoji`);
      assert.match(errorText(await call(name, { query: '🌤'.repeat(51) }, client)), /the query is 51 characters; the limit is 50/, name);
    }
    // Each registry publishes its own limit (the schemas are kept per limit).
    assert.equal(queryOf((await anonymous.listTools()).tools, 'search_agents').maxLength, 1000);
    // A filter value too, as its published maxLength (200) counts: 200 emoji are taken (they were refused past 100).
    const owner = (tools.find((t) => t.name === 'search_agents')!.inputSchema.properties as WireJson).filter.properties.owner;
    assert.equal(owner.maxLength, 200);
    assert.ok(structured(await call('search_agents', { query: 'invoice' })).total > 0);
    assert.equal(structured(await call('search_agents', { query: 'invoice', filter: { owner: '🌤'.repeat(200) } })).total, 0, 'taken, and applied');
    assert.match(errorText(await call('search_agents', { query: 'invoice', filter: { owner: '🌤'.repeat(201) } })), /\/arguments\/filter\/owner/);
  });

  test('search_agents answers exactly what the A2A search answers, for agents only', async () => {
    const viaMcp = await call('search_agents', { query: 'invoice' });
    const data = structured(viaMcp);
    assert.deepEqual(data, await a2a({ search: { query: 'invoice', filter: { kind: 'agent' } } }));
    assert.ok(data.results.length > 0 && data.results.every((h: WireJson) => h.kind === 'agent'));
    const [summary, json] = viaMcp.content as Array<{ type: string; text: string }>;
    assert.match(summary!.text, new RegExp(`Invoice Agent \\(id ${ids.invoice}\\)`), 'the short text names the id get_agent needs');
    assert.deepEqual(JSON.parse(json!.text), data, 'the JSON as text for clients that ignore structured content');

    const weather = structured(await call('search_agents', { query: 'forecast', filter: { tags: ['weather'], protocolVersion: '0.3' } }));
    assert.deepEqual([...new Set(weather.results.map((h: WireJson) => h.id))], [ids.weather]);
    assert.equal(structured(await call('search_agents', { query: 'workspace' })).total, 0, 'MCP servers are not agents');
    assert.equal(structured(await call('search_mcp_servers', { query: 'workspace' })).total, 1, 'the word is there, on an MCP server');
  });

  test('search pages follow nextPageToken', async () => {
    // One result per agent (the default): the two agents on two pages.
    const first = structured(await call('search_agents', { limit: 1 }));
    assert.equal(first.results.length, 1);
    assert.ok(first.nextPageToken);
    const second = structured(await call('search_agents', { limit: 1, pageToken: first.nextPageToken }));
    assert.equal(second.results.length, 1);
    assert.notEqual(second.results[0].id, first.results[0].id);
    // A token is bound to its arguments; the refusal names the tool's (it named A2A's resultsPer).
    const other = errorText(await call('search_agents', { filter: { tags: ['tax'] }, limit: 1, pageToken: first.nextPageToken }));
    assert.match(other, /^BAD_REQUEST: The pageToken belongs to another search_agents call: send the same query, filter and limit as the call whose answer gave it, or start again without pageToken\./);
    assert.doesNotMatch(other, /resultsPer/);
    // One search tool's token sent to the other, with the same query and limit, says whose it is (it
    // was told to send the same query, filter and limit, which it had: the tool adds its kind to
    // the filter); with other arguments too, it is another call's.
    const agentsToServers = await call('search_mcp_servers', { limit: 1, pageToken: first.nextPageToken });
    assert.match(errorText(agentsToServers), /^BAD_REQUEST: The pageToken is a nextPageToken of search_agents, not of search_mcp_servers: pass it to the tool whose answer gave it, or call search_mcp_servers without pageToken for its first page\./);
    assert.deepEqual(errorJson(agentsToServers).error.details, [{ path: '/arguments/pageToken', message: 'issued for this search with filter kind "agent"', rule: 'page-token-other-query' }]);
    assert.match(errorText(await call('search_mcp_servers', { limit: 2, pageToken: first.nextPageToken })), /^BAD_REQUEST: The pageToken belongs to another search_mcp_servers call/);
    const bob = await sdkClient(registry.url, { token: TOKENS.bob });
    const filesTwo = resultOf(await op(bob, { register: { mcpServer: mcpServer('files-two', 'https://mcp.example.org/files-two/mcp'), toolspec: toolspec() } })).id;
    try {
      const servers = structured(await call('search_mcp_servers', { query: 'workspace', limit: 1 }));
      assert.ok(servers.nextPageToken);
      const serversToAgents = await call('search_agents', { query: 'workspace', limit: 1, pageToken: servers.nextPageToken });
      assert.match(errorText(serversToAgents), /^BAD_REQUEST: The pageToken is a nextPageToken of search_mcp_servers, not of search_agents: pass it to the tool whose answer gave it/);
      assert.deepEqual(errorJson(serversToAgents).error.details.map((d: WireJson) => d.message), ['issued for this search with filter kind "mcp-server"']);
    } finally {
      resultOf(await op(bob, { unregister: { id: filesTwo } }));
    }
    // A token the registry did not issue is named where the call has it, as every finding of a tool's arguments (it said /pageToken).
    for (const refused of [await call('search_agents', { pageToken: 'garbage' }), await call('list_agents', { pageToken: 'garbage' }), await call('search_agents', { filter: { tags: ['tax'] }, limit: 1, pageToken: first.nextPageToken })]) {
      assert.deepEqual(errorJson(refused).error.details.map((d: WireJson) => d.path), ['/arguments/pageToken']);
    }
    const listed = structured(await call('list_agents', { pageSize: 1 }));
    // A signature of other characters was an internal error (timingSafeEqual threw on their longer UTF-8).
    for (const [tool, token] of [['list_agents', listed.nextPageToken], ['search_agents', first.nextPageToken]] as const) {
      const unread = await call(tool, { pageToken: `${token.slice(0, -1)}é` });
      assert.match(errorText(unread), /^BAD_REQUEST: The pageToken is not valid: pass the nextPageToken of the previous page unchanged/);
      assert.deepEqual(errorJson(unread).error.details, [{ path: '/arguments/pageToken', message: 'not a token this registry issued', rule: 'page-token-invalid' }]);
    }
    // An empty one too (a schema error without the rule, "Too small").
    assert.deepEqual(errorJson(await call('list_agents', { pageToken: '' })).error.details.map((d: WireJson) => d.rule), ['page-token-invalid']);
    assert.match(errorText(await call('list_agents', { pageSize: 1, health: 'ok', pageToken: listed.nextPageToken })), /^BAD_REQUEST: .*another list_agents call: send the same owner, mine, health and verified/);
    // A token of the other kind of tool says whose it is (it said to send the same owner, mine, health and verified).
    const searchToList = await call('list_agents', { pageSize: 1, pageToken: first.nextPageToken });
    assert.match(errorText(searchToList), /^BAD_REQUEST: The pageToken is a nextPageToken of a search tool \(search_agents or search_mcp_servers\), not of list_agents: pass it to the tool whose answer gave it/);
    assert.deepEqual(errorJson(searchToList).error.details.map((d: WireJson) => d.path), ['/arguments/pageToken']);
    assert.match(errorText(await call('search_agents', { limit: 1, pageToken: listed.nextPageToken })), /^BAD_REQUEST: The pageToken is a nextPageToken of list_agents, not of search_agents/);
  });

  test('search_mcp_servers finds tools, filtered by their annotation hints', async () => {
    const all = structured(await call('search_mcp_servers', { query: 'file' }));
    assert.deepEqual(all, await a2a({ search: { query: 'file', filter: { kind: 'mcp-server' } } }));
    assert.ok(all.results.some((h: WireJson) => [h.match, ...(h.matches ?? [])].some((m: WireJson) => m?.name === 'write_file')), 'the other matching tools of a server are listed with it');
    const readOnly = structured(await call('search_mcp_servers', { query: 'file', filter: { readOnly: true } }));
    assert.deepEqual(readOnly.results.map((h: WireJson) => [h.id, h.match.type, h.match.id]), [[ids.files, 'tool', 'read_file']]);
    // capabilities, as A2A search and ARD take them: tool names (skill ids for search_agents), exactly.
    const byTool = structured(await call('search_mcp_servers', { filter: { capabilities: ['write_file'] } }));
    assert.deepEqual(byTool, await a2a({ search: { filter: { kind: 'mcp-server', capabilities: ['write_file'] } } }));
    assert.deepEqual(byTool.results.map((h: WireJson) => h.id), [ids.files]);
    assert.deepEqual(structured(await call('search_agents', { filter: { capabilities: ['check-vat', 'write_file'] } })).results.map((h: WireJson) => h.id), [ids.invoice]);
  });

  test('get_agent and get_mcp_server answer the entry with its document as registered; the other kind is not found there', async () => {
    const agent = structured(await call('get_agent', { id: ids.invoice }));
    assert.deepEqual(agent, await a2a({ get: { id: ids.invoice } }));
    assert.deepEqual(agent.document, v1Card());
    const server = structured(await call('get_mcp_server', { id: ids.files }));
    assert.deepEqual(server.document, { mcpServer: mcpServer(), toolspec: toolspec() });
    assert.match(errorText(await call('get_agent', { id: ids.files })), /^NOT_FOUND: .*MCP server; call get_mcp_server/);
    assert.match(errorText(await call('get_mcp_server', { id: ids.weather })), /^NOT_FOUND: .*call get_agent/);
    const missing = await call('get_agent', { id: 'no-such-id' });
    assert.match(errorText(missing), /^NOT_FOUND: No entry has id "no-such-id"/);
    assert.deepEqual(errorJson(missing), { error: errorOf(await op(reader, { get: { id: 'no-such-id' } })) }, 'the error object A2A answers');
    assert.match(errorText(await call('get_agent', { id: ids.invoice, revision: 7 })), /has no revision 7/);
    // The catalog documents name entries by urn:air identifier: sent as an id, it is answered with the id to use.
    const byIdentifier = errorText(await call('get_agent', { id: `urn:air:127.0.0.1:agent:${ids.invoice}` }));
    assert.match(byIdentifier, /^NOT_FOUND: .*is a catalog \(AI Catalog \/ ARD\) identifier; .*entry id, its last segment: "([^"]+)"/);
    assert.equal(/last segment: "([^"]+)"/.exec(byIdentifier)![1], ids.invoice);
  });

  test('list_agents lists agents only, newest first, page by page', async () => {
    const first = structured(await call('list_agents', { pageSize: 1 }));
    assert.deepEqual(first.entries.map((e: WireJson) => e.id), [ids.weather]);
    const second = structured(await call('list_agents', { pageSize: 1, pageToken: first.nextPageToken }));
    assert.deepEqual(second.entries.map((e: WireJson) => e.id), [ids.invoice]);
    assert.equal(second.nextPageToken, undefined);
    assert.deepEqual(structured(await call('list_agents', {})), await a2a({ list: { filter: { kind: 'agent' } } }));
  });

  test('search_agents without a query lists newest registered first, as list_agents, an update moving nothing; its description says so', async () => {
    // It said "newest first" and ordered by the last change: an update put the older entry first.
    const card = (name: string, version = '1.0.0') => ({
      ...v1Card(name, `https://${name.toLowerCase().replace(' ', '-')}.example.org/a2a`),
      version,
      skills: [{ id: 's', name: 'Climb', description: 'Climbs.', tags: ['ibexline'] }],
    });
    const older = resultOf(await op(writer, { register: { agentCard: card('Ibex Older') } })).id;
    const newer = resultOf(await op(writer, { register: { agentCard: card('Ibex Newer') } })).id;
    resultOf(await op(writer, { register: { agentCard: card('Ibex Older', '1.0.1') } }));
    const searched = structured(await call('search_agents', { filter: { tags: ['ibexline'] } })).results.map((h: WireJson) => h.id);
    assert.deepEqual(searched, [newer, older]);
    const listed = structured(await call('list_agents', { pageSize: 100 })).entries.map((e: WireJson) => e.id);
    assert.deepEqual(listed.filter((id: string) => id === older || id === newer), searched);
    const { tools } = await anonymous.listTools();
    const described = (name: string): string => (tools.find((t) => t.name === name)!.inputSchema.properties as WireJson).query.description;
    for (const name of ['search_agents', 'search_mcp_servers']) assert.match(described(name), /newest registered first/, name);
    assert.match(tools.find((t) => t.name === 'list_agents')!.description!, /newest registered first/);
    for (const id of [older, newer]) resultOf(await op(writer, { unregister: { id } }));
  });

  test('validate_document gives the same errors, with paths and hints, as A2A validate and register', async () => {
    const broken = { ...v1Card(), skills: [{ id: 's', name: 'S', description: 'd', tags: 'finance' }], version: 3 };
    const verdict = structured(await call('validate_document', { agentCard: broken }));
    const rejected = errorOf(await op(reader, { validate: { agentCard: broken } }));
    assert.equal(verdict.valid, false);
    assert.equal(verdict.code, rejected.code);
    assert.deepEqual(verdict.errors, rejected.details);
    assert.ok(verdict.errors.some((e: WireJson) => e.path === '/skills/0/tags' && e.hint), 'errors point into the document and say how to fix them');
    assert.deepEqual(verdict.errors, errorOf(await op(writer, { register: { agentCard: broken } })).details, 'register refuses it with the same errors');

    const valid = structured(await call('validate_document', { agentCard: v1Card() }));
    assert.deepEqual(valid, await a2a({ validate: { agentCard: v1Card() } }));
    assert.equal(valid.valid, true);

    const badTool = { tools: [{ name: 'x', description: 'd', inputSchema: { type: 'string' } }] };
    const toolVerdict = structured(await call('validate_document', { toolspec: badTool, mcpServer: mcpServer() }));
    assert.equal(toolVerdict.valid, false);
    assert.deepEqual(toolVerdict.errors, errorOf(await op(reader, { validate: { toolspec: badTool, mcpServer: mcpServer() } })).details);
    assert.equal(structured(await call('validate_document', { toolspec: toolspec() })).valid, true);

    assert.match(errorText(await call('validate_document', {})), /^BAD_REQUEST: Give exactly one document/);
    assert.match(errorText(await call('validate_document', { agentCard: v1Card(), toolspec: toolspec() })), /^BAD_REQUEST: /);
    const huge = { ...v1Card(), description: 'x'.repeat(20_000) };
    assert.equal(structured(await call('validate_document', { agentCard: huge })).code, 'TOO_LARGE');
  });

  test('register_agent and register_mcp_server store with the caller\'s token, as A2A register does', async () => {
    const bob = await mcpClient(registry.url, TOKENS.bob);
    const card = v1Card('Receipt Agent', 'https://receipts.example.org/a2a');
    const registered = structured(await call('register_agent', { agentCard: card }, bob));
    assert.equal(registered.created, true);
    assert.ok(registered.warnings.length > 0, 'placeholder URLs are warned about, as over A2A');
    const entry = await a2a({ get: { id: registered.id } });
    assert.equal(entry.owner, 'bob');
    assert.deepEqual(entry.document, card);
    const again = structured(await call('register_agent', { agentCard: card }, bob));
    assert.deepEqual([again.id, again.changed, again.revision], [registered.id, false, 1], 'the same card again changes nothing');

    assert.match(errorText(await call('register_agent', { agentCard: card })), /^UNAUTHENTICATED: Registering needs a registry token/);
    const alice = await mcpClient(registry.url, TOKENS.alice);
    assert.match(errorText(await call('register_agent', { agentCard: card }, alice)), /^FORBIDDEN: /, 'another principal cannot take it over');
    const invalid = errorText(await call('register_agent', { agentCard: { ...card, skills: 'none' } }, bob));
    assert.match(invalid, /^VALIDATION_FAILED: /);
    assert.match(invalid, /\n- \/skills: /, 'each error with its path');
    // One refusal reads alike on both doors: its findings, ten at most, then how many more (A2A's text listed five, the rest unsaid).
    const faulty = { name: 5, description: 6, version: 7, skills: 'none', capabilities: 'none', defaultInputModes: 'x', defaultOutputModes: 'y', supportedInterfaces: 'z', provider: 2, iconUrl: 3, documentationUrl: 4 };
    const overMcp = errorText(await call('register_agent', { agentCard: faulty }, bob));
    const overA2A = await op(await sdkClient(registry.url, { token: TOKENS.bob }), { register: { agentCard: faulty } });
    assert.equal(overA2A.status.message.parts[0].text, overMcp);
    assert.match(overMcp, /^VALIDATION_FAILED: (.*\n){11}- … and \d+ more$/);

    const server = structured(await call('register_mcp_server', { mcpServer: mcpServer('notes', 'https://notes.example.org/mcp'), toolspec: toolspec() }, bob));
    assert.equal(server.kind, 'mcp-server');
    assert.equal(structured(await call('get_mcp_server', { id: server.id })).document.mcpServer.name, 'notes');
    await op(await sdkClient(registry.url, { token: TOKENS.bob }), { unregister: { id: server.id } });
    await op(await sdkClient(registry.url, { token: TOKENS.bob }), { unregister: { id: registered.id } });
  });

  test('register_agent with a number past a double\'s range (1e400, which the SDK\'s clients write as null) is refused at its path, as over A2A', async () => {
    const card = JSON.stringify(v1Card('Huge Mcp Agent', 'https://hugemcp.example.org/a2a')).replace('"capabilities":{', '"capabilities":{"extensions":[{"uri":"https://ext.example.org/x","params":{"big":1e400}}],');
    const body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"register_agent","arguments":{"agentCard":${card}}}}`;
    const res = await fetch(`${registry.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TOKENS.bob}` },
      body,
    });
    const result = ((await res.json()) as WireJson).result as CallToolResult;
    assert.match(errorText(result), /^VALIDATION_FAILED: .*\/capabilities\/extensions\/0\/params\/big: this number is beyond the largest number JSON here can hold \(about 1\.8e308\)/);
    assert.deepEqual(errorJson(result).error.details.map((d: WireJson) => [d.path, d.rule]), [['/capabilities/extensions/0/params/big', 'number-out-of-range']]);
  });

  test('a refusal of the arguments found while the tool runs names them under /arguments, where the call has them; a document\'s findings stay at the document', async () => {
    const alice = await mcpClient(registry.url, TOKENS.alice);
    const paths = (r: CallToolResult) => errorJson(r).error.details.map((d: WireJson) => d.path);
    // An entry registered inline has nothing to refresh: its id.
    const refresh = await call('refresh_entry', { id: ids.invoice }, alice);
    assert.match(errorText(refresh), /^BAD_REQUEST: .*registered with its document inline/);
    assert.deepEqual(paths(refresh), ['/arguments/id']);
    // An owner beside mine: list_agents takes the list's filter keys as its arguments (it said /list/filter/owner).
    const both = await call('list_agents', { mine: true, owner: 'bob' }, alice);
    assert.match(errorText(both), /^BAD_REQUEST: Give either "mine": true or an "owner", not both\./);
    assert.deepEqual(paths(both), ['/arguments/owner']);
    assert.deepEqual(paths(await call('search_agents', { query: 'invoice', pageToken: 'garbage' })), ['/arguments/pageToken']);
    // A card's findings are its own paths, as A2A's are (not under /arguments/agentCard).
    const invalid = await call('register_agent', { agentCard: { ...v1Card('Paths Agent', 'https://paths.example.org/a2a'), skills: 'none' } }, alice);
    assert.ok(paths(invalid).includes('/skills'), JSON.stringify(paths(invalid)));
    assert.ok(!paths(invalid).some((p: string) => p.startsWith('/arguments')), JSON.stringify(paths(invalid)));
  });

  test('arguments outside the schema are refused before anything runs', async () => {
    assert.match(errorText(await call('search_agents', { filter: { tagz: ['x'] } })), /tagz/);
    assert.match(errorText(await call('search_agents', { limit: 500 })), /limit/);
    // Refused as every other refusal is: "CODE: message", then the operation's JSON error with a
    // finding at the argument's path. It was the SDK's one text, "MCP error -32602: Input
    // validation error: Invalid arguments for tool get_agent: Too small: ... at id".
    for (const [tool, args, path, message] of [
      ['search_agents', { limit: 0 }, '/arguments/limit', '"limit" must be a whole number from 1 to 100; got the number 0'],
      ['get_agent', { id: '' }, '/arguments/id', '"id" must not be empty: give a string of 1 to 100 characters'],
      ['list_agents', { pageSize: 101 }, '/arguments/pageSize', '"pageSize" must be a whole number from 1 to 100; got the number 101'],
      // Past the safe-integer range: the documented bound, once (it was told zod's int range beside it).
      ['search_agents', { limit: 1e300 }, '/arguments/limit', '"limit" must be a whole number from 1 to 100; got the number 1e+300'],
      ['list_agents', { pageSize: -1e300 }, '/arguments/pageSize', '"pageSize" must be a whole number from 1 to 100; got the number -1e+300'],
      ['search_mcp_servers', { filter: { readOnly: 'true' } }, '/arguments/filter/readOnly', '"readOnly" must be true or false; got the string "true"'],
      // In plain words, which argument and what to give (it was zod's "Invalid input: expected string, received undefined").
      ['get_agent', {}, '/arguments/id', '"id" is required: the entry id, as search and list results give it (a string of 1 to 100 characters)'],
      ['search_agents', { limit: '20' }, '/arguments/limit', '"limit" must be a whole number from 1 to 100; got the string "20"'],
      ['list_agents', { health: 'down' }, '/arguments/health', '"health" must be one of "ok", "unreachable", "invalid"; got the string "down"'],
    ] as const) {
      const refusal = await call(tool, args);
      assert.match(errorText(refusal), new RegExp(`^BAD_REQUEST: The "${tool}" arguments are not valid: ${path}: `), tool);
      const { error } = errorJson(refusal);
      assert.equal(error.code, 'BAD_REQUEST', tool);
      assert.deepEqual(error.details.map((d: WireJson) => [d.path, d.message]), [[path, message]], tool);
    }
    assert.equal(errorJson(await call('search_agents', { filter: { streaming: 'true' } })).error.details[0].hint, 'Write true without quotes.', 'with the hint A2A gives');
    // The same finding the A2A door gives for the same argument, at its own path.
    const viaA2A = errorOf(await op(reader, { get: { id: '' } }));
    assert.equal(viaA2A.code, 'BAD_REQUEST');
    assert.equal(errorJson(await call('get_agent', { id: '' })).error.details[0].message, viaA2A.details[0].message);
    assert.match(errorText(await call('search_agents', { query: 'x'.repeat(1001) })), /^BAD_REQUEST: The "search_agents" arguments are not valid: \/arguments\/query: .*limit is 1000 \(REGISTRY_MAX_QUERY_CHARS\)/);
    // An argument a tool does not take was dropped: {"text": ...} (ARD's name for the query)
    // listed every agent, {"rev": 1} answered the current revision, each as if asked.
    // Said once, in the tool's words: it read "... which takes query, filter, limit, pageToken (text)
    // (Accepted keys here: query, filter, limit, pageToken)".
    const unknown = await call('search_agents', { text: 'no such words' });
    assert.equal(
      errorText(unknown),
      'BAD_REQUEST: The "search_agents" arguments are not valid: /arguments: "text" is not an argument of search_agents, which takes query, filter, limit, pageToken.\n' +
        '- /arguments: "text" is not an argument of search_agents, which takes query, filter, limit, pageToken',
    );
    assert.deepEqual(errorJson(unknown).error.details, [{ path: '/arguments', message: '"text" is not an argument of search_agents, which takes query, filter, limit, pageToken' }]);
    assert.match(errorText(await call('get_agent', { id: ids.weather, rev: 1 })), /: "rev" is not an argument of get_agent, which takes id, revision\.\n/);
    assert.match(errorText(await call('list_agents', { limit: 1, kind: 'agent' })), /: "limit", "kind" are not arguments of list_agents, which takes pageSize, pageToken, owner, mine, health, verified\.\n/);
    // Many: the first ten and how many more (contract/findings.ts); 2,000 short keys were each named, three times.
    const many = await call('search_agents', { query: 'x', ...Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, 1])) });
    assert.equal(errorJson(many).error.details[0].message, `${Array.from({ length: 10 }, (_, i) => `"k${i}"`).join(', ')} and 1,990 more are not arguments of search_agents, which takes query, filter, limit, pageToken`);
    assert.ok(JSON.stringify(many).length < 2000, JSON.stringify(many).slice(0, 3000));
    // With another problem, each is said: the unknown argument first.
    assert.deepEqual(errorJson(await call('search_agents', { text: 'x', limit: 0 })).error.details.map((d: WireJson) => d.path), ['/arguments', '/arguments/limit']);
    const { tools } = await anonymous.listTools();
    for (const tool of tools) assert.equal(tool.inputSchema.additionalProperties, false, `${tool.name} says it takes no other argument`);
  });

  test('a tool\'s published inputSchema refuses the arguments the tool refuses as malformed: a blank filter value too', async () => {
    // The schemas said minLength 1 for a filter value, and the tool refuses one of only white
    // space: a client checking its arguments against inputSchema sent it, and was refused.
    const { tools } = await anonymous.listTools();
    const ajv = new Ajv({ strict: false });
    const accepts = (tool: string, args: unknown): boolean => ajv.validate(tools.find((t) => t.name === tool)!.inputSchema, args);
    for (const [tool, args] of [
      ['search_agents', { filter: { tags: [' '] } }],
      ['search_agents', { filter: { owner: '\t' } }],
      ['search_agents', { filter: { protocolBinding: ' \n ' } }],
      ['search_mcp_servers', { filter: { capabilities: ['\u00a0'] } }],
      ['list_agents', { owner: '  ' }],
    ] as const) {
      assert.match(errorText(await call(tool, args)), /must not be blank/, `${tool} refuses ${JSON.stringify(args)}`);
      assert.equal(accepts(tool, args), false, `${tool}'s inputSchema refuses ${JSON.stringify(args)} too`);
    }
    // A value with a character (white space around it) is taken by both.
    for (const [tool, args] of [['search_agents', { filter: { tags: [' invoices '], owner: 'alice' } }], ['list_agents', { owner: ' alice' }]] as const) {
      assert.ok(!(await call(tool, args)).isError, `${tool} takes ${JSON.stringify(args)}`);
      assert.equal(accepts(tool, args), true, `${tool}'s inputSchema takes ${JSON.stringify(args)}`);
    }
    // ...and means what the value without it means, as a tag's does: a principal has no white space around
    // it (REGISTRY_TOKENS' names are trimmed). " alice" found nothing on search, while ARD's POST /search trimmed it.
    const aliceIds = [ids.invoice, ids.weather].sort();
    for (const owner of [' alice', 'alice\t']) {
      assert.deepEqual(structured(await call('search_agents', { filter: { owner } })).results.map((h: WireJson) => h.id).sort(), aliceIds, `search_agents owner ${JSON.stringify(owner)}`);
      assert.deepEqual(structured(await call('list_agents', { owner })).entries.map((e: WireJson) => e.id).sort(), aliceIds, `list_agents owner ${JSON.stringify(owner)}`);
      assert.deepEqual(resultOf(await op(reader, { search: { filter: { owner } } })).results.map((h: WireJson) => h.id).sort(), aliceIds, `A2A search owner ${JSON.stringify(owner)}`);
    }
  });

  test('input and output schemas are JSON Schema 2020-12, MCP\'s default dialect, without a $schema naming draft-07', async () => {
    // MCP 2025-11-25 ("JSON Schema Usage"): no $schema means 2020-12, the one dialect every
    // implementation must support; the SDK declared draft-07 on each, which a client supporting
    // 2020-12 alone refuses. The first answer (the SDK's, on a registry of its own) and the kept one alike.
    const fresh = await mcpClient((await start()).url);
    const { tools } = await fresh.listTools();
    assert.deepEqual((await fresh.listTools()).tools, tools, 'the kept answer is the first');
    const ajv = new Ajv2020({ strict: true });
    for (const tool of tools) {
      for (const [which, schema] of [['inputSchema', tool.inputSchema], ['outputSchema', tool.outputSchema]] as const) {
        assert.ok(schema, `${tool.name} ${which}`);
        assert.equal(schema.$schema, undefined, `${tool.name} ${which} declares no other dialect`);
        // Valid 2020-12, each keyword one that dialect knows (strict: an unknown keyword throws).
        assert.doesNotThrow(() => ajv.compile(schema), `${tool.name} ${which}`);
      }
    }
    // Still read by the SDK's own client, which validates structuredContent against outputSchema.
    assert.ok(structured(await call('search_agents', { query: 'invoice' }, fresh)));
  });
});

describe('MCP search answers', () => {
  test("the search tools' outputSchema describes every field their hits carry: the match, the other matches (it described neither)", async () => {
    const { tools } = await anonymous.listTools();
    for (const [tool, query] of [['search_agents', 'invoice'], ['search_mcp_servers', 'file']] as const) {
      const hitSchema = (tools.find((t) => t.name === tool)!.outputSchema as WireJson).properties.results.items;
      const hits: WireJson[] = structured(await call(tool, { query })).results;
      // An entry with two matching parts: its match and its matches.
      assert.ok(hits.some((h) => h.matches?.length > 0), `${tool} "${query}" has a hit with matches`);
      assert.ok(hitSchema.required.includes('match'), `${tool}: every hit has a match`);
      for (const hit of hits) {
        for (const key of Object.keys(hit)) assert.ok(key in hitSchema.properties, `${tool}: the hit's "${key}" is described`);
        for (const match of [hit.match, ...(hit.matches ?? [])]) {
          for (const key of Object.keys(match)) assert.ok(key in hitSchema.properties.match.properties, `${tool}: the match's "${key}" is described`);
          assert.ok(hitSchema.properties.matches.items.properties.type.enum.includes(match.type), `${tool}: match type ${match.type}`);
        }
      }
    }
  });
});

describe('MCP endpoint', () => {
  test('a bearer token makes the caller; an unknown token is refused with 401 before MCP', async () => {
    const alice = await mcpClient(registry.url, TOKENS.alice);
    const mine = structured(await call('list_agents', { mine: true }, alice));
    assert.deepEqual(mine.entries.map((e: WireJson) => e.id).sort(), [ids.invoice, ids.weather].sort());
    assert.match(errorText(await call('list_agents', { mine: true })), /^UNAUTHENTICATED: /);

    await assert.rejects(mcpClient(registry.url, 'not-a-registry-token-0000'), /401|not recognised/);
    const raw = await fetch(`${registry.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer wrong-token-xxxxxxxxxxxx' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'call-7', method: 'tools/list' }),
    });
    assert.equal(raw.status, 401);
    assert.match(raw.headers.get('www-authenticate') ?? '', /^Bearer .*error="invalid_token"/);
    const body = (await raw.json()) as WireJson;
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.error.data.reason, 'INVALID_CREDENTIAL');
    // The request's id, as the A2A JSON-RPC door answers it (JSON-RPC: null only when none could be read).
    assert.equal(body.id, 'call-7');
  });

  test('DNS-rebinding protection: only PUBLIC_URL\'s host, and browser origins the operator allowed', async () => {
    const port = new URL(registry.url).port;
    const post = (headers: Record<string, string>) =>
      rawMcpPost({ 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }));
    const rebound = await post({ host: `attacker.example:${port}` });
    assert.equal(rebound.status, 403);
    assert.match(rebound.body.error.message, /attacker\.example.*REGISTRY_MCP_ALLOWED_HOSTS/);
    const foreign = await post({ host: `127.0.0.1:${port}`, origin: 'https://attacker.example' });
    assert.equal(foreign.status, 403);
    assert.match(foreign.body.error.message, /REGISTRY_CORS_ORIGINS/);
    assert.equal((await post({ host: `localhost:${port}`, origin: `http://localhost:${port}` })).status, 200, 'loopback names are one host');
    assert.equal((await post({ host: 'LOCALHOST' })).status, 200, 'a host name is case-insensitive, the port optional');
    assert.equal((await post({ host: `localhost.:${port}` })).status, 200, "a fully qualified name's final dot names the same host");
    // The Host is compared as sent, not read as a URL (which took the host after a userinfo, or before a path).
    for (const host of [`attacker.example@127.0.0.1:${port}`, `127.0.0.1:${port}/x`, `127.0.0.1:${port}@attacker.example`, '0x7f.1', '127.0.0.1:port']) {
      const answer = await post({ host });
      assert.equal(answer.status, 403, host);
      assert.equal(answer.body.error.data.reason, 'FORBIDDEN_HOST', host);
    }

    // A refused request's body is not read: it was drained without limit (a client streaming one
    // without end kept the connection, reading megabytes a second, until the request timeout).
    const endless = await sendEndlessBody(registry.url, `POST /mcp HTTP/1.1\r\nHost: attacker.example\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`, 1_500);
    assert.ok(endless.closed, `the registry closed the connection (got ${JSON.stringify(endless.received.slice(0, 100))})`);
    assert.match(endless.received, /^HTTP\/1\.1 403 [^]*\r\nconnection: close\r\n/i);
  });

  test('a browser MCP client on an origin in REGISTRY_CORS_ORIGINS passes the preflight and is answered', async () => {
    const open = await start({ REGISTRY_CORS_ORIGINS: 'https://app.example', REGISTRY_RATE_LIMITS: 'false' });
    const preflight = await fetch(`${open.url}/mcp`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, mcp-protocol-version, authorization' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://app.example');
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Mcp-Protocol-Version/i);
    const res = await fetch(`${open.url}/mcp`, {
      method: 'POST',
      headers: { origin: 'https://app.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example');
    assert.equal(((await res.json()) as WireJson).result.tools.length, 9);
    const other = await fetch(`${open.url}/mcp`, {
      method: 'POST',
      headers: { origin: 'https://other.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/list' }),
    });
    assert.equal(other.status, 403);
  });

  test('stateless: GET and DELETE are 405, OPTIONS names POST, POST answers JSON', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${registry.url}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get('allow'), 'POST');
      // The MCP SDK's code for a 405 (it was -32600, Invalid Request, of a request that sent no JSON-RPC message).
      const refusal = (await res.json()) as WireJson;
      assert.equal(refusal.error.code, -32000, method);
      assert.equal(refusal.error.data.reason, 'METHOD_NOT_ALLOWED', method);
    }
    // OPTIONS asks which methods the path takes, and is answered as on every other route (it was 405).
    const options = await fetch(`${registry.url}/mcp`, { method: 'OPTIONS' });
    assert.equal(options.status, 200);
    assert.equal(options.headers.get('allow'), 'POST');
    const res = await fetch(`${registry.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"',
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as WireJson;
    assert.equal(body.error.code, -32700, 'a body that is not JSON is a JSON-RPC parse error');
    // JSON that is no object is shown an MCP request (it was shown an A2A SendMessage).
    const notAnObject = await fetch(`${registry.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '"tools/list"' });
    assert.equal(notAnObject.status, 400);
    assert.match(((await notAnObject.json()) as WireJson).error.message, /not an object: send one JSON object \(a JSON-RPC request such as \{"jsonrpc": "2\.0", "id": 1, "method": "tools\/list"\}\)\.$/);
    // MCP messages are UTF-8: another charset is refused as the SDK refuses another media type.
    const latin1 = await fetch(`${registry.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=latin1', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
    });
    assert.equal(latin1.status, 415);
    const refused = (await latin1.json()) as WireJson;
    assert.equal(refused.error.code, -32000);
    assert.match(refused.error.message, /charset=latin1; JSON requests are read as UTF-8 only/);
    assert.equal(refused.error.data.reason, 'CONTENT_TYPE_NOT_SUPPORTED');
    // Another media type is refused the same way, with the request's id (the SDK answered id null, no reason).
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const wrongType = await fetch(`${registry.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': type, accept: 'application/json, text/event-stream' },
        body: '{"jsonrpc": "2.0", "id": 12, "method": "tools/list"}',
      });
      assert.equal(wrongType.status, 415, type);
      const answer = (await wrongType.json()) as WireJson;
      assert.equal(answer.id, 12, type);
      assert.equal(answer.error.code, -32000);
      assert.equal(answer.error.message, `The request body is ${type}; this JSON-RPC endpoint reads JSON: send Content-Type: application/json.`);
      assert.equal(answer.error.data.reason, 'CONTENT_TYPE_NOT_SUPPORTED');
    }
    // Streamable HTTP needs Accept to name JSON and SSE: without it (or with fetch's */*) the SDK
    // answered 406 with id null and no header to send; now the request's id and the header.
    for (const [accept, id, came] of [[undefined, 13, 'no Accept header came'], ['*/*', 'q-14', 'it came with Accept: */*'], ['application/json', null, 'it came with Accept: application/json']] as const) {
      // A batch (id null) has no one id to answer with.
      const body = id === null ? '[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]' : JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' });
      const res = await rawMcpPost({ 'content-type': 'application/json', ...(accept ? { accept } : {}) }, body);
      assert.equal(res.status, 406, String(accept));
      assert.equal(res.body.id, id, String(accept));
      assert.equal(res.body.error.code, -32000);
      assert.equal(res.body.error.message, `Not Acceptable: MCP Streamable HTTP requests must accept both JSON and an event stream (${came}). Send the header Accept: application/json, text/event-stream.`);
      assert.equal(res.body.error.data.reason, 'NOT_ACCEPTABLE');
    }
    // Media types are case-insensitive (RFC 9110 8.3.1): both accepted in capitals is both accepted (it was 406).
    const capitals = await rawMcpPost({ 'content-type': 'application/json', accept: 'Application/JSON, Text/Event-Stream' }, '{"jsonrpc": "2.0", "id": 15, "method": "ping"}');
    assert.equal(capitals.status, 200, JSON.stringify(capitals.body));
    assert.deepEqual(capitals.body, { jsonrpc: '2.0', id: 15, result: {} });
  });

  test('a body that is no JSON-RPC message is Invalid Request (-32600) naming the member, with its id when usable (the SDK said "Parse error", id null)', async () => {
    const post = (body: string) =>
      fetch(`${registry.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body });
    const cases: Array<[string, string, unknown]> = [
      [JSON.stringify({ id: 4, method: 'tools/list' }), '"jsonrpc" must be "2.0"', 4],
      [JSON.stringify({ jsonrpc: '2.0', id: 'q', params: {} }), '"method" must be the name of an MCP method, e.g. "tools/list"', 'q'],
      [JSON.stringify({ jsonrpc: '2.0', id: null, method: 'tools/list' }), '"id" must be a string or an integer: MCP does not allow null (leave "id" out only for a notification, which gets no answer).', null],
      // Each says what came: a fraction or a boolean was told "MCP does not allow null".
      [JSON.stringify({ jsonrpc: '2.0', id: 1.5, method: 'tools/list' }), '"id" must be a string or an integer: 1.5 is not an integer.', null],
      [JSON.stringify({ jsonrpc: '2.0', id: true, method: 'tools/list' }), '"id" must be a string or an integer: it is a boolean.', null],
      // An int64 id is an integer, but read rounded: it was told it must be "an integer".
      ['{"jsonrpc": "2.0", "id": 12345678901234567890, "method": "tools/list"}', '"id" must be a string or an integer: 12345678901234567000 is an integer past 2^53 - 1, which is read rounded and could not be answered as sent: send a larger id as a string.', null],
      [JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list', params: [1] }), '"params" must be a JSON object', 5],
      ['', 'the request body is empty', null],
      // JSON-RPC 2.0 section 6: an empty batch is Invalid Request (the SDK answered 202, no body).
      ['[]', 'the batch is empty', null],
      // What else the SDK's schema refuses was -32700 "Parse error: Invalid JSON-RPC message", id null, naming nothing.
      [JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'ping', extra: 1 }), '"extra" is not a member of a JSON-RPC request, whose members are "jsonrpc", "id", "method" and "params": leave it out.', 6],
      [JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized', x: 1 }), '"x" is not a member of a JSON-RPC notification, whose members are "jsonrpc", "method" and "params": leave it out.', null],
      [JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping', params: { _meta: 5 } }), '"params._meta" must be a JSON object (or left out), not an integer.', 7],
      [JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'ping', params: { _meta: { progressToken: {} } } }), '"params._meta.progressToken" must be a string or an integer, not an object.', 8],
      // A response (to a request of the server's) is answered with id null: its id is the server's request's.
      [JSON.stringify({ jsonrpc: '2.0', id: 9, result: 5 }), '"result" must be a JSON object, not an integer.', null],
      [JSON.stringify({ jsonrpc: '2.0', result: {} }), 'a response\'s "id" must be the id of the server\'s request it answers, a string or an integer.', null],
      [JSON.stringify({ jsonrpc: '2.0', id: 9, error: 'x' }), '"error" must be a JSON object with an integer "code" and a string "message"', null],
      [JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping', result: {} }), 'a message has "method" (a request or a notification) or "result" / "error" (a response to a request of the server\'s), not both.', null],
    ];
    for (const [body, problem, id] of cases) {
      const res = await post(body);
      assert.equal(res.status, 400, body);
      const answer = (await res.json()) as WireJson;
      assert.equal(answer.id, id, body);
      assert.equal(answer.error.code, -32600, body);
      assert.ok(answer.error.message.startsWith(`Invalid Request: ${problem}`), `${body}: ${answer.error.message}`);
      assert.equal(answer.error.data.reason, 'INVALID_REQUEST');
    }
    // No body at all (no Content-Length nor Transfer-Encoding: `curl -X POST`), with a Content-Type
    // or without, is an empty body too: the SDK answered 415 "Content-Type must be application/json",
    // and -32700 "Parse error: Invalid JSON", neither with a reason. An empty body declared
    // (Content-Length: 0) without a Content-Type was told it "has a body but no Content-Type".
    const { port } = new URL(registry.url);
    for (const headers of ['', 'Content-Type: application/json\r\n', 'Content-Length: 0\r\n']) {
      const conversation = await connect(registry.url);
      conversation.socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: application/json, text/event-stream\r\n${headers}Connection: close\r\n\r\n`);
      await conversation.closed;
      const [head, answer] = conversation.received().split('\r\n\r\n') as [string, string];
      assert.match(head, /^HTTP\/1\.1 400 /, headers);
      const refusal = JSON.parse(answer) as WireJson;
      assert.deepEqual([refusal.id, refusal.error.code, refusal.error.data.reason], [null, -32600, 'INVALID_REQUEST'], headers);
      assert.ok(refusal.error.message.startsWith('Invalid Request: the request body is empty. Send one JSON-RPC 2.0 request'), `${headers}: ${refusal.error.message}`);
    }
    // A notification (no id) and a batch are the SDK's, as before.
    assert.equal((await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))).status, 202);
    assert.equal((await post(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }]))).status, 200);
    // A batch with an unusable member names it (the SDK: -32700 "Parse error: Invalid JSON-RPC message" for JSON that parsed).
    for (const [batch, problem] of [
      [[{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: null, method: 'ping' }], 'message 2 of 2 in the batch: "id" must be a string or an integer: MCP does not allow null'],
      [[{ jsonrpc: '2.0', id: 1, method: 'ping' }, 5], 'message 2 of 2 in the batch: it is an integer, not a JSON-RPC message object'],
      [[{ jsonrpc: '2.0', id: 1, method: 'ping', extra: true }], 'message 1 of 1 in the batch: "extra" is not a member of a JSON-RPC request'],
      // The SDK's bound is 100: each message is a request of its own, held and answered at once.
      [Array.from({ length: 33 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })), 'the batch has 33 messages; send at most 32 per request'],
    ] as const) {
      const res = await post(JSON.stringify(batch));
      assert.equal(res.status, 400);
      const answer = (await res.json()) as WireJson;
      assert.equal(answer.id, null);
      assert.equal(answer.error.code, -32600);
      assert.ok(answer.error.message.startsWith(`Invalid Request: ${problem}`), answer.error.message);
      assert.equal(answer.error.data.reason, 'INVALID_REQUEST');
    }
  });

  test('a batch is answered with an array, one request too; a batch with initialize or two requests with one id is refused before anything runs', async () => {
    const post = (body: unknown, token?: string) =>
      fetch(`${registry.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
    // JSON-RPC 2.0 section 6: the SDK answered a batch with one answer as that answer alone, an object.
    for (const batch of [
      [{ jsonrpc: '2.0', id: 1, method: 'ping' }],
      [{ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 'only', method: 'tools/list' }],
    ]) {
      const res = await post(batch);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const answer = (await res.json()) as WireJson;
      assert.ok(Array.isArray(answer), JSON.stringify(answer).slice(0, 200));
      assert.equal(answer.length, 1);
      assert.equal(answer[0].id, batch.at(-1)!.id);
      assert.ok(answer[0].result, JSON.stringify(answer[0]).slice(0, 200));
    }
    // Single requests are answered with an object, as ever, and a batch of notifications with 202.
    assert.ok(!Array.isArray(await (await post({ jsonrpc: '2.0', id: 2, method: 'ping' })).json()));
    assert.equal((await post([{ jsonrpc: '2.0', method: 'notifications/initialized' }])).status, 202);
    // A request and its cancellation in one batch: the SDK dropped the request's answer and the
    // transport waited for it, so no answer came at all. A tool cannot be cancelled: it is answered.
    const cancelled = (await (
      await post([
        { jsonrpc: '2.0', id: 'c-1', method: 'tools/call', params: { name: 'list_agents', arguments: {} } },
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c-1', reason: 'no longer needed' } },
      ])
    ).json()) as WireJson;
    assert.equal(cancelled.length, 1);
    assert.equal(cancelled[0].id, 'c-1');
    assert.ok(Array.isArray(cancelled[0].result.structuredContent.entries), JSON.stringify(cancelled[0]).slice(0, 200));

    const refused = async (batch: unknown[], problem: string, token?: string) => {
      const res = await post(batch, token);
      assert.equal(res.status, 400);
      const answer = (await res.json()) as WireJson;
      assert.equal(answer.id, null);
      assert.equal(answer.error.code, -32600);
      assert.equal(answer.error.message, `Invalid Request: ${problem}.`);
      assert.equal(answer.error.data.reason, 'INVALID_REQUEST');
    };
    // Two requests with one id both ran (here, two registrations), and one answer came back.
    const register = (id: unknown, host: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'register_agent', arguments: { agentCard: v1Card('Twin Agent', `https://${host}.example.org/a2a`) } } });
    await refused(
      [register(7, 'twin-one'), { jsonrpc: '2.0', id: '7', method: 'ping' }, register(7, 'twin-two')],
      'messages 1 and 3 of 3 in the batch both have "id": 7; give each request of a batch an id of its own, which its answer carries',
      TOKENS.alice,
    );
    const twins = structured(await call('search_agents', { query: 'twin agent' })).results.filter((hit: WireJson) => hit.name === 'Twin Agent');
    assert.equal(twins.length, 0, 'neither registration ran');
    // initialize in a batch: the SDK said "Only one initialization request is allowed", id null, no reason.
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    await refused(
      [initialize, { jsonrpc: '2.0', id: 2, method: 'ping' }],
      'message 1 of 2 in the batch is initialize, which may not be sent in a batch: send initialize alone, as the first request, and the batch after it',
    );
    // Batches are MCP 2025-03-26's (and that of a request without MCP-Protocol-Version): 2025-06-18
    // removed them ("MUST be a single JSON-RPC request, notification, or response"). The SDK ran
    // one sent with a later version, writes too, as a 2025-03-26 batch.
    const versioned = (version: string, batch: unknown[]) =>
      fetch(`${registry.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': version, authorization: `Bearer ${TOKENS.alice}` },
        body: JSON.stringify(batch),
      });
    // Nor had the versions before 2025-03-26, which added them (2024-11-05's schema has no batch):
    // one sent with 2024-11-05 ran as a 2025-03-26 batch.
    for (const [version, why] of [['2025-06-18', 'MCP 2025-06-18 removed batches'], ['2025-11-25', 'MCP 2025-06-18 removed batches'], ['2024-11-05', 'MCP 2025-03-26 added batches'], ['2024-10-07', 'MCP 2025-03-26 added batches']]) {
      const res = await versioned(version!, [register('v-1', `batched-${version}`), { jsonrpc: '2.0', id: 'v-2', method: 'ping' }]);
      assert.equal(res.status, 400, version);
      const answer = (await res.json()) as WireJson;
      assert.equal(answer.id, null);
      assert.equal(answer.error.code, -32600);
      assert.equal(
        answer.error.message,
        `Invalid Request: MCP-Protocol-Version ${version} takes one JSON-RPC message per POST (${why}), and this request holds a batch of 2: send each message in a POST of its own, or send MCP-Protocol-Version: 2025-03-26, the version with batches.`,
      );
      assert.equal(answer.error.data.reason, 'INVALID_REQUEST');
    }
    const batched = structured(await call('search_agents', { query: 'twin agent' })).results.filter((hit: WireJson) => hit.name === 'Twin Agent');
    assert.equal(batched.length, 0, 'no registration of a refused batch ran');
    const of2025_03 = await versioned('2025-03-26', [{ jsonrpc: '2.0', id: 'v-3', method: 'ping' }]);
    assert.equal(of2025_03.status, 200);
    assert.deepEqual(await of2025_03.json(), [{ jsonrpc: '2.0', id: 'v-3', result: {} }]);
  });

  test('an unknown method says what this server answers; an A2A method is pointed to the A2A endpoint (the SDK said only "Method not found")', async () => {
    const rpc = async (method: string): Promise<WireJson> => {
      const res = await fetch(`${registry.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 3, method, params: {} }),
      });
      const body = (await res.json()) as WireJson;
      assert.equal(body.id, 3);
      assert.equal(body.error.code, -32601, method);
      return body.error;
    };
    for (const method of ['SendMessage', 'message/send']) {
      assert.equal(
        (await rpc(method)).message,
        `Method not found: "${method}" is an A2A method, and this is the registry's MCP endpoint, which answers initialize, ping, tools/list and tools/call. Send A2A JSON-RPC requests to /a2a/jsonrpc, or call this server's tools (tools/list names them).`,
      );
    }
    // MCP's own names are no A2A methods here, tasks/get included (A2A v0.3 has one too).
    for (const method of ['resources/list', 'tasks/get']) {
      assert.equal((await rpc(method)).message, `Method not found: "${method}". This MCP server offers tools only: it answers initialize, ping, tools/list and tools/call (and notifications).`);
    }
    // In a batch too, each unknown call's answer explained by its own method (the SDK's bare words before).
    const res = await fetch(`${registry.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 'a', method: 'SendMessage', params: {} },
        { jsonrpc: '2.0', id: 'b', method: 'ping' },
        { jsonrpc: '2.0', id: 7, method: 'prompts/list', params: {} },
      ]),
    });
    const answers = new Map(((await res.json()) as WireJson[]).map((answer) => [answer.id, answer]));
    assert.match(answers.get('a')!.error.message, /^Method not found: "SendMessage" is an A2A method, and this is the registry's MCP endpoint/);
    assert.deepEqual(answers.get('b')!.result, {});
    assert.equal(answers.get(7)!.error.message, 'Method not found: "prompts/list". This MCP server offers tools only: it answers initialize, ping, tools/list and tools/call (and notifications).');
  });

  test('an MCP-Protocol-Version the endpoint does not speak is 400 with the request\'s own id (the SDK answered id null)', async () => {
    const post = (body: unknown, version: string) =>
      fetch(`${registry.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': version },
        body: JSON.stringify(body),
      });
    for (const id of [7, 'call-7']) {
      const res = await post({ jsonrpc: '2.0', id, method: 'tools/list' }, '1999-01-01');
      assert.equal(res.status, 400);
      const body = (await res.json()) as WireJson;
      assert.equal(body.id, id);
      assert.equal(body.error.code, -32000);
      assert.match(body.error.message, /^Bad Request: Unsupported protocol version: 1999-01-01 \(supported versions: 2025-11-25, /);
      assert.equal(body.error.data.reason, 'UNSUPPORTED_PROTOCOL_VERSION');
    }
    // initialize negotiates the version (the header is not checked), and a supported one passes.
    const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }, '1999-01-01');
    assert.equal(init.status, 200);
    assert.equal(((await init.json()) as WireJson).id, 1);
    assert.equal((await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, '2025-06-18')).status, 200);
    // Sent twice (a client's and a proxy's, joined): the same version is that version; two are
    // refused asking for one (they were "Unsupported protocol version: 2025-06-18, 2025-06-18").
    const same = await post({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, '2025-06-18, 2025-06-18');
    assert.equal(same.status, 200, await same.clone().text());
    const two = await post({ jsonrpc: '2.0', id: 4, method: 'tools/list' }, '2025-06-18, 2025-03-26');
    assert.equal(two.status, 400);
    const twoBody = (await two.json()) as WireJson;
    assert.equal(twoBody.id, 4);
    assert.match(twoBody.error.message, /^Bad Request: MCP-Protocol-Version was sent more than once, with different versions \(2025-06-18, 2025-03-26\): send exactly one/);
    assert.equal(twoBody.error.data.reason, 'UNSUPPORTED_PROTOCOL_VERSION');
    // A notification and a batch (no one id: null) are refused alike: the SDK answered them
    // without the reason, and called two versions one unsupported version.
    const notification = { jsonrpc: '2.0', method: 'notifications/initialized' };
    for (const [body, version, said] of [
      [notification, '1999-01-01', /^Bad Request: Unsupported protocol version: 1999-01-01 \(supported versions: 2025-11-25, .*\)\. Send the version initialize negotiated/],
      [notification, '2025-06-18, 2025-03-26', /^Bad Request: MCP-Protocol-Version was sent more than once, with different versions \(2025-06-18, 2025-03-26\): send exactly one/],
      [[{ jsonrpc: '2.0', id: 5, method: 'ping' }], '1999-01-01', /^Bad Request: Unsupported protocol version: 1999-01-01 /],
      // An empty header was "Unsupported protocol version:  (supported versions: …)", the value invisible.
      [notification, '', /^Bad Request: Unsupported protocol version: an empty MCP-Protocol-Version header \(supported versions: 2025-11-25, /],
    ] as const) {
      const res = await post(body, version);
      assert.equal(res.status, 400, version);
      const answer = (await res.json()) as WireJson;
      assert.equal(answer.id, null);
      assert.equal(answer.error.code, -32000);
      assert.match(answer.error.message, said);
      assert.equal(answer.error.data?.reason, 'UNSUPPORTED_PROTOCOL_VERSION', JSON.stringify(answer));
    }
  });

  test('params the SDK cannot read (tools/call "arguments" that is no object) are invalid params (-32602) in one line, not an internal error', async () => {
    // The SDK's own client sends what it is given: "arguments" as a string.
    const notAnObject = 'x' as unknown as Record<string, unknown>;
    await assert.rejects(
      anonymous.request({ method: 'tools/call', params: { name: 'search_agents', arguments: notAnObject } }, CallToolResultSchema),
      (err: unknown) => {
        assert.ok(err instanceof McpError, String(err));
        assert.equal(err.code, ErrorCode.InvalidParams);
        assert.match(err.message, /Invalid params for tools\/call: \/params\/arguments: expected an object, got a string\.$/);
        return true;
      },
    );
    // On the wire, with the headers Streamable HTTP needs: the JSON-RPC error as a client reads it.
    const post = async (params: unknown): Promise<WireJson> => {
      const res = await fetch(`${registry.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 41, method: 'tools/call', params }),
      });
      assert.equal(res.status, 200);
      return (await res.json()) as WireJson;
    };
    for (const [params, where] of [
      [{ name: 'search_agents', arguments: 'x' }, '/params/arguments: expected an object, got a string'],
      [{ name: 'search_agents', arguments: [1] }, '/params/arguments: expected an object, got an array'],
      [{ arguments: {} }, '/params/name: missing (a string)'],
    ] as const) {
      const body = await post(params);
      assert.equal(body.id, 41);
      assert.equal(body.error.code, -32602, JSON.stringify(body));
      assert.equal(body.error.message, `Invalid params for tools/call: ${where}.`);
    }
    assert.equal(structured(await call('search_agents', { query: 'invoice' })).results.length > 0, true, 'the next call is answered as ever');
    // A tools/list cursor: this server gives none, so every one is invalid (MCP pagination:
    // "Invalid cursors SHOULD result in an error with code -32602"); the whole list came again.
    const listed = await anonymous.listTools();
    assert.equal(listed.nextCursor, undefined);
    await assert.rejects(anonymous.listTools({ cursor: 'page-2' }), (err: unknown) => {
      assert.ok(err instanceof McpError, String(err));
      assert.equal(err.code, ErrorCode.InvalidParams);
      assert.match(err.message, /Invalid params for tools\/list: \/params\/cursor: this server issues no cursors .*leave cursor out\.$/);
      return true;
    });
  });

  test('a task-augmented tools/call (params.task, MCP 2025-11-25) is answered normally: the server declares no tasks capability', async () => {
    // "Receivers that do not declare the task capability ... MUST process requests of that type
    // normally, ignoring any task-augmentation metadata": the SDK answered -32603.
    assert.equal(anonymous.getServerCapabilities()?.tasks, undefined);
    const answer = (await anonymous.request(
      { method: 'tools/call', params: { name: 'search_agents', arguments: { query: 'invoice' }, task: { ttl: 60_000 } } },
      CallToolResultSchema,
    )) as CallToolResult;
    const direct = structured(await call('search_agents', { query: 'invoice' }));
    assert.deepEqual(structured(answer).results.map((hit: WireJson) => hit.id), direct.results.map((hit: WireJson) => hit.id));
  });

  test('one log line per request, naming the tool and its operation', async () => {
    await call('search_agents', { query: 'weather' });
    const line = [...logs].reverse().find((l) => l.msg === 'request' && l.method === 'tools/call search_agents');
    assert.ok(line, 'logged');
    assert.equal(line.operation, 'search');
    assert.equal(line.taskState, 'COMPLETED');
    assert.equal(line.status, 200);
    assert.match(String(line.requestId), /^[\w.-]+$/);
  });

  test('refusals before a tool runs (an unknown tool, arguments outside its schema, an unknown method) are logged and counted as refused, not answered', async () => {
    const lastLine = (method: string) => [...logs].reverse().find((l) => l.msg === 'request' && l.method === method);
    // Arguments outside the tool's schema are the tool's refusal (BAD_REQUEST), as any other tool refusal is recorded.
    assert.match(errorText(await call('search_agents', { limit: 1000 })), /^BAD_REQUEST: /);
    assert.equal(lastLine('tools/call search_agents')?.taskState, 'REJECTED');
    assert.equal(lastLine('tools/call search_agents')?.errorCode, 'BAD_REQUEST');
    // An unknown tool is a JSON-RPC error (MCP: a protocol error, -32602), naming the tools there are;
    // it was a tool result with isError, "Tool no_such_tool not found".
    await assert.rejects(call('no_such_tool', {}), (err: unknown) => {
      assert.ok(err instanceof McpError, String(err));
      assert.equal(err.code, ErrorCode.InvalidParams);
      assert.match(err.message, /Unknown tool: "no_such_tool"\. This server's tools are search_agents, .*get_agent.* \(tools\/list describes them\)\.$/);
      return true;
    });
    assert.equal(lastLine('tools/call no_such_tool')?.errorCode, 'INVALID_PARAMS');
    await assert.rejects(anonymous.request({ method: 'resources/list', params: {} }, ListResourcesResultSchema), (err: unknown) => err instanceof McpError && err.code === ErrorCode.MethodNotFound);
    assert.equal(lastLine('resources/list')?.taskState, 'REJECTED');
    assert.equal(lastLine('resources/list')?.errorCode, 'METHOD_NOT_FOUND');

    const text = await (await fetch(`${registry.url}/metrics`)).text();
    const line = (labels: string) => text.split('\n').find((l) => l.startsWith('registry_requests_total{') && l.includes(labels));
    assert.ok(line('method="tools/call search_agents",operation="none",outcome="REJECTED",code="BAD_REQUEST",door="mcp"'), text);
    assert.ok(line('method="tools/call other",operation="none",outcome="REJECTED",code="INVALID_PARAMS",door="mcp"'));
    assert.ok(line('method="other",operation="none",outcome="REJECTED",code="METHOD_NOT_FOUND",door="mcp"'));
    assert.equal(line('method="tools/call other",operation="none",outcome="OK"'), undefined, 'not counted as answered');
  });
});

describe('MCP rate limits and metrics', () => {
  test('the same read budget as A2A, counted in metrics by door', async () => {
    const limited = await start({ REGISTRY_RATE_READS_PER_MINUTE: '3' });
    const client = await mcpClient(limited.url);
    const a2aReader = await sdkClient(limited.url);
    assert.equal(structured(await call('search_agents', { query: 'a' }, client)).total, 0);
    await op(a2aReader, { search: { query: 'b' } }); // A2A and MCP draw on one budget
    structured(await call('list_agents', {}, client));
    await client.listTools(); // the SDK's client now checks results against the tools' output schemas
    const refusal = await call('search_agents', { query: 'c' }, client);
    const refused = errorText(refusal);
    assert.match(refused, /^RATE_LIMITED: Too many reads .* Retry after \d+ s\./);
    // The wait as a number, as A2A (and gRPC and ARD) give it, in the error object A2A carries.
    const { error } = errorJson(refusal);
    assert.equal(error.code, 'RATE_LIMITED');
    assert.ok(Number.isInteger(error.retryAfterSeconds) && error.retryAfterSeconds >= 1, JSON.stringify(error));
    assert.equal(error.retryAfterSeconds, Number(/Retry after (\d+) s\./.exec(refused)![1]));
    const overA2A = errorOf(await op(a2aReader, { search: { query: 'd' } }));
    assert.deepEqual(Object.keys(error).sort(), Object.keys(overA2A).sort(), 'the same fields as the A2A error');
    assert.equal(overA2A.code, 'RATE_LIMITED');

    const text = await (await fetch(`${limited.url}/metrics`)).text();
    const line = (labels: string) => text.split('\n').find((l) => l.startsWith('registry_requests_total{') && l.includes(labels));
    assert.ok(line('method="tools/call search_agents",operation="search",outcome="COMPLETED",code="none",door="mcp"'), text);
    assert.ok(line('method="tools/call search_agents",operation="search",outcome="REJECTED",code="RATE_LIMITED",door="mcp"'));
    assert.ok(line('method="tools/call list_agents",operation="list",outcome="COMPLETED"'));
    assert.ok(line('method="initialize",operation="none"'));
    assert.ok(line('method="SendMessage",operation="search",outcome="COMPLETED",code="none",door="a2a"'), 'the A2A door keeps its labels');
  });
  test('a batch counts and logs each call as a single request would be, and each call draws on the read budget', async () => {
    const fresh = await start({ REGISTRY_RATE_READS_PER_MINUTE: '4' });
    const batch = (calls: unknown[]) =>
      fetch(`${fresh.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(calls) });
    const tool = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    const res = await batch([
      tool(1, 'get_agent', { id: 'nope' }),
      tool(2, 'search_agents', { query: 'weather' }),
      tool(3, 'search_agents', { query: 'invoice' }),
      tool(4, 'search_agents', { text: 'x' }),
      tool(5, 'no_such_tool', {}),
      { jsonrpc: '2.0', id: 6, method: 'ping' },
      { jsonrpc: '2.0', id: 7, method: 'resources/list' },
    ]);
    assert.equal(res.status, 200);
    const answers = new Map(((await res.json()) as WireJson[]).map((answer) => [answer.id, answer]));
    assert.match(answers.get(1)!.result.content[0].text, /^NOT_FOUND: /);
    assert.equal(answers.get(2)!.result.isError, undefined);
    // The read budget (4 a minute) counts each call that ran an operation: the get and two searches,
    // then one more; the refused arguments ran none.
    const more = (await (await batch([tool(8, 'search_agents', { query: 'a' }), tool(9, 'search_agents', { query: 'b' })])).json()) as WireJson[];
    assert.deepEqual(more.map((answer) => /^RATE_LIMITED: /.test(answer.result.content[0].text)).sort(), [false, true]);

    const text = await (await fetch(`${fresh.url}/metrics`)).text();
    const count = (labels: string) => Number(text.split('\n').find((l) => l.startsWith(`registry_requests_total{${labels},door="mcp"} `))?.split(' ').at(-1) ?? 0);
    assert.equal(count('method="tools/call get_agent",operation="get",outcome="REJECTED",code="NOT_FOUND"'), 1, text);
    assert.equal(count('method="tools/call search_agents",operation="search",outcome="COMPLETED",code="none"'), 3);
    assert.equal(count('method="tools/call search_agents",operation="search",outcome="REJECTED",code="RATE_LIMITED"'), 1);
    assert.equal(count('method="tools/call search_agents",operation="none",outcome="REJECTED",code="BAD_REQUEST"'), 1);
    assert.equal(count('method="tools/call other",operation="none",outcome="REJECTED",code="INVALID_PARAMS"'), 1);
    assert.equal(count('method="ping",operation="none",outcome="OK",code="none"'), 1);
    assert.equal(count('method="other",operation="none",outcome="REJECTED",code="METHOD_NOT_FOUND"'), 1);
    assert.ok(!text.includes('method="batch"'), 'a batch whose calls ran is counted call by call');

    // One line for the request (the log's unit), listing its calls as single requests' lines name them.
    const line = [...logs].reverse().find((l) => l.msg === 'request' && l.method === 'batch' && Array.isArray(l.calls) && l.calls.length === 7) as WireJson | undefined;
    assert.ok(line, 'logged');
    assert.equal(line.operation, undefined);
    assert.equal(line.taskState, undefined);
    assert.deepEqual(line.calls, [
      { method: 'tools/call get_agent', operation: 'get', taskState: 'REJECTED', errorCode: 'NOT_FOUND' },
      { method: 'tools/call search_agents', operation: 'search', taskState: 'COMPLETED' },
      { method: 'tools/call search_agents', operation: 'search', taskState: 'COMPLETED' },
      { method: 'tools/call search_agents', taskState: 'REJECTED', errorCode: 'BAD_REQUEST' },
      { method: 'tools/call no_such_tool', taskState: 'REJECTED', errorCode: 'INVALID_PARAMS' },
      { method: 'ping' },
      { method: 'resources/list', taskState: 'REJECTED', errorCode: 'METHOD_NOT_FOUND' },
    ]);

    // A batch refused as a whole (no Accept) ran no call: it counts once, as "batch".
    const refused = await fetch(`${fresh.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([tool(10, 'search_agents', {})]) });
    assert.equal(refused.status, 406);
    const after = await (await fetch(`${fresh.url}/metrics`)).text();
    assert.ok(after.includes('registry_requests_total{method="batch",operation="none",outcome="REJECTED",code="NOT_ACCEPTABLE",door="mcp"} 1'), after);
  });
});

describe('MCP batches cost what their messages cost', () => {
  test('each message of a batch is a request of the request budget, a batch that does not fit is refused whole (429), and its answers share 1 MiB', async () => {
    const budgeted = await start({ REGISTRY_RATE_REQUESTS_PER_MINUTE: '40' });
    const post = (body: unknown) =>
      fetch(`${budgeted.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(body) });
    const pings = (n: number) => Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'ping' }));

    // 32 tools/list (32 requests of the 40): 1.1 MB of answers, from a body of 1.5 KB. The
    // answers past 1 MiB are left out, each saying so; the list is the same in every answer.
    const listed = await post(Array.from({ length: 32 }, (_, i) => ({ jsonrpc: '2.0', id: `list-${i}`, method: 'tools/list' })));
    assert.equal(listed.status, 200);
    const answers = (await listed.json()) as WireJson[];
    assert.deepEqual(answers.map((answer) => answer.id).sort(), Array.from({ length: 32 }, (_, i) => `list-${i}`).sort());
    const lists = answers.filter((answer) => answer.result);
    const leftOut = answers.filter((answer) => answer.error);
    assert.ok(lists.length >= 1 && leftOut.length >= 1, `${lists.length} answered, ${leftOut.length} left out`);
    assert.ok(lists.reduce((bytes, answer) => bytes + Buffer.byteLength(JSON.stringify(answer)), 0) <= 1024 * 1024);
    for (const list of lists) assert.deepEqual(list.result, lists[0]!.result);
    assert.equal(lists[0]!.result.tools.length, 9);
    for (const answer of leftOut) {
      assert.equal(answer.error.code, -32000);
      assert.equal(answer.error.data.reason, 'BATCH_ANSWER_TOO_LARGE');
      assert.match(answer.error.message, /^This call ran, but its answer \([\d,]+ bytes\) is left out: a batch's answers take at most 1,048,576 bytes together, and the answers before it took [\d,]+ bytes\. Send it again alone, or in a smaller batch\.$/);
    }
    const line = [...logs].reverse().find((l) => l.msg === 'request' && l.method === 'batch' && Array.isArray(l.calls) && l.calls.length === 32) as WireJson;
    assert.equal(line.calls.filter((c: WireJson) => c.errorCode === 'BATCH_ANSWER_TOO_LARGE' && c.taskState === 'REJECTED').length, leftOut.length);

    // 33 spent: 9 pings need 8 more than their first, and 7 are left. Refused whole, nothing run,
    // spending nothing but the request itself, as the flood guard answers (429, Retry-After).
    const refused = await post(pings(9));
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    const refusal = (await refused.json()) as WireJson;
    assert.equal(refusal.id, null);
    assert.equal(refusal.error.code, -32603);
    assert.equal(refusal.error.data.reason, 'RATE_LIMITED');
    assert.equal(refusal.error.data.retryAfterSeconds, Number(refused.headers.get('retry-after')));
    assert.match(
      refusal.error.message,
      /^Too many requests from this address: a batch counts each of its messages as a request, so this batch of 9 needs 8 more than its first, and this address has 7 left this minute \(the limit is 40 per minute\): send fewer messages per batch, or retry after \d+ s\.$/,
    );
    // 34 spent: 7 pings take the last 6 and their own; then the budget is spent, for a lone ping too.
    const fits = await post(pings(7));
    assert.equal(fits.status, 200);
    assert.equal(((await fits.json()) as WireJson[]).length, 7);
    const spent = await post({ jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.equal(spent.status, 429);
    assert.equal(((await spent.json()) as WireJson).error.data.reason, 'RATE_LIMITED');
  });
});

describe('MCP quotas and storage faults', () => {
  test('over a quota the tool answers QUOTA_EXCEEDED naming the limit, as A2A does', async () => {
    const limited = await start({ REGISTRY_RATE_LIMITS: 'false', REGISTRY_MAX_ENTRIES_PER_OWNER: '1' });
    const bob = await mcpClient(limited.url, TOKENS.bob);
    structured(await call('register_agent', { agentCard: v1Card('Quota One', 'https://quota-one.example.org/a2a') }, bob));
    const refused = errorText(await call('register_agent', { agentCard: v1Card('Quota Two', 'https://quota-two.example.org/a2a') }, bob));
    assert.match(refused, /^QUOTA_EXCEEDED: Principal "bob" has as many entries as one principal may register, or more: the limit is 1 \(REGISTRY_MAX_ENTRIES_PER_OWNER=1\)\. /);
    assert.match(refused, /raise REGISTRY_MAX_ENTRIES_PER_OWNER/);
    const overA2A = errorOf(await op(await sdkClient(limited.url, { token: TOKENS.bob }), { register: { agentCard: v1Card('Quota Three', 'https://quota-three.example.org/a2a') } }));
    assert.equal(overA2A.code, 'QUOTA_EXCEEDED', 'one rule under both doors');
  });

  test('storage that cannot be written: the write tool says so, the read tools still answer', async () => {
    const faulty = await start({ REGISTRY_RATE_LIMITS: 'false' });
    const { dataDir } = started.find((each) => each.registry === faulty)!;
    const bob = await mcpClient(faulty.url, TOKENS.bob);
    structured(await call('register_agent', { agentCard: v1Card('Stored Agent', 'https://stored.example.org/a2a') }, bob));
    // The data directory replaced by a file: the database can neither be written nor re-created.
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.writeFileSync(dataDir, 'not a directory');
    try {
      const refused = errorText(await call('register_agent', { agentCard: v1Card('Lost Agent', 'https://lost.example.org/a2a') }, bob));
      assert.match(refused, /^STORAGE_UNAVAILABLE: .*the database file was deleted and cannot be re-created/);
      const hits = structured(await call('search_agents', { query: 'Stored Agent' }, bob));
      assert.deepEqual(hits.results.map((hit: WireJson) => hit.name), ['Stored Agent'], 'searches answer from the index');
    } finally {
      fs.rmSync(dataDir);
    }
  });
});
