/**
 * Issue 16 end to end, over real HTTP with the A2A SDK client against a registry on 127.0.0.1
 * (SQLite), fetching from real servers on 127.0.0.1 (REGISTRY_FETCH_ALLOW=127.0.0.1):
 * register by URL and with fetchTools (a real MCP server built with the MCP SDK), the same
 * checks as inline, refresh (conditional requests, new revisions marked as refreshes, the last
 * good revision kept), the refresh operation, health on entries and hits and the health filter,
 * and the refresh loop on its own. The outbound tripwire asserts nothing left for another
 * address. Hostile servers, probing and hiding unhealthy entries: freshness-hostile.test.ts;
 * several replicas on PostgreSQL: freshness-replicas.test.ts.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type http from 'node:http';
import { after, afterEach, before, describe, test } from 'node:test';
import type { ServerResponse } from 'node:http';
import type { Client } from '@a2a-js/sdk/client';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool, connectMcp, errorText, structured } from './support/mcp-client.js';
import { takeOutboundViolations } from './support/outbound-tripwire.js';
import { startOrigin, waitFor, type OriginServer } from './support/origin-server.js';
import { makeDue as makeDueIn, nextCheckAt, serveCard as serveCardAt } from './support/freshness.js';
import { sampleTools, startMcpServer, type TestMcpServer } from './support/mcp-server.js';
import { mcpServer, v03Card, v1Card } from './support/documents.js';
import { errorOf, op, resultOf, sdkClient, type WireJson } from './support/client.js';
import { TOKENS, TOKENS_ENV, removeTempDir, spawnRegistry, startTestRegistry, tempDir, type TestRegistry } from './support/registry.js';
import { slowUndiciLoad } from './support/slow-undici.js';
import { followRequestTimers } from './support/request-timers.js';
import { watch } from './support/watch-stream.js';

let registry: TestRegistry;
let origin: OriginServer;
let mcp: TestMcpServer;
let alice: Client;
let bob: Client;
let admin: Client;
let anonymous: Client;
let n = 0;

before(async () => {
  [origin, mcp] = await Promise.all([startOrigin(), startMcpServer({ tools: sampleTools(5), pageSize: 2 })]);
  registry = await startTestRegistry({ REGISTRY_FETCH_ALLOW: '127.0.0.1' });
  [alice, bob, admin, anonymous] = await Promise.all([
    sdkClient(registry.url, { token: TOKENS.alice }),
    sdkClient(registry.url, { token: TOKENS.bob }),
    sdkClient(registry.url, { token: TOKENS.admin }),
    sdkClient(registry.url),
  ]);
});
after(async () => {
  await registry.close();
  await Promise.all([origin.close(), mcp.close()]);
});
afterEach(() => assert.deepEqual(takeOutboundViolations(), [], 'a connection left for a non-loopback address'));

const serveCard = (card: unknown, base: string, headers: Record<string, string> = {}): string => serveCardAt(origin, card, base, headers);
const makeDue = (...ids: string[]): void => makeDueIn(registry.dataDir, ...ids);

const fresh = () => {
  const i = ++n;
  return { base: `/agents/${i}`, interfaceUrl: `https://agents.example.org/${i}/a2a`, name: `Fresh Agent ${i}` };
};

const get = async (id: string, revision?: number) => resultOf(await op(anonymous, { get: revision ? { id, revision } : { id } }));

/**
 * A registry process of its own (this one loaded undici long ago), whose loading of undici is
 * slowed by 3 s as on a loaded machine, with a fetch timeout of 2.5 s: its first outbound request
 * pays the load, longer than the timeout. The timeout leaves room for the exchange itself on a
 * loaded machine: at 1 s, fetchTools' whole MCP exchange (initialize, three pages, the goodbye)
 * failed to fit at load 14-15 with or without the fix.
 */
const slowLoadingRegistry = () =>
  spawnRegistry({
    REGISTRY_TOKENS: TOKENS_ENV,
    REGISTRY_FETCH_ALLOW: '127.0.0.1',
    REGISTRY_FETCH_TIMEOUT_MS: '2500',
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${slowUndiciLoad(3000)}`.trim(),
  });

describe('register by URL', () => {
  test('a base URL: the card at /.well-known/agent-card.json, stored as served, with its source and health', async () => {
    const { base, interfaceUrl, name } = fresh();
    const text = serveCard(v1Card(name, interfaceUrl), base);
    const before = Date.now();
    const result = resultOf(await op(alice, { register: { url: `${origin.url}${base}` } }));
    assert.equal(result.created, true);
    assert.equal(result.kind, 'agent');
    assert.equal(result.protocolVersion, '1.0');
    assert.deepEqual(result.indexed, { skills: 2 });
    const cardUrl = `${origin.url}${base}/.well-known/agent-card.json`;
    assert.equal(result.source.url, cardUrl);
    assert.match(result.source.etag, /^"[0-9a-f]{16}"$/);
    assert.ok(Date.parse(result.source.fetchedAt) >= before - 1000);
    assert.equal(result.health.status, 'ok');

    const entry = await get(result.id);
    assert.equal(entry.owner, 'alice');
    assert.deepEqual(entry.source, result.source);
    assert.deepEqual(entry.health, { status: 'ok', checkedAt: result.source.fetchedAt, since: result.source.fetchedAt, failures: 0 });
    assert.equal(entry.drift, false);
    assert.deepEqual(entry.document, JSON.parse(text));
    assert.equal(entry.contentHash, createHash('sha256').update(text).digest('hex'), 'the bytes as served are what is stored');
    assert.equal(origin.requests.at(-1)!.headers['user-agent']?.startsWith('a2a-agent-registry/'), true);

    const hit = resultOf(await op(anonymous, { search: { query: name } })).results.find((h: WireJson) => h.id === result.id);
    assert.equal(hit.health.status, 'ok');
  });

  test('the card\'s full URL is fetched as given, asking for A2A 1.0; a v0.3 card works the same', async () => {
    const { interfaceUrl, name } = fresh();
    const card = v03Card(name, interfaceUrl);
    origin.json(`/cards/${n}.json`, card);
    const result = resultOf(await op(alice, { register: { url: `${origin.url}/cards/${n}.json` } }));
    assert.equal(result.source.url, `${origin.url}/cards/${n}.json`);
    assert.equal(result.created, true);
    assert.equal(result.protocolVersion, '0.3');
    const request = origin.requests.filter((r) => r.path === `/cards/${n}.json`).at(-1)!;
    assert.equal(request.headers['a2a-version'], '1.0');
    assert.match(request.headers.accept ?? '', /application\/json/);
    const entry = await get(result.id);
    assert.deepEqual(entry.document, card);
    assert.equal(entry.interfaces[0].url, interfaceUrl);
  });

  test('the same checks as an inline registration: an invalid card is declined, nothing stored', async () => {
    const { base, interfaceUrl, name } = fresh();
    const card: Record<string, unknown> = v1Card(name, interfaceUrl);
    delete card.skills;
    serveCard(card, base);
    const inline = errorOf(await op(alice, { validate: { agentCard: card } }));
    const count = await registry.store.count();
    const error = errorOf(await op(alice, { register: { url: `${origin.url}${base}` } }));
    assert.equal(error.code, inline.code);
    assert.equal(error.code, 'VALIDATION_FAILED');
    assert.deepEqual(error.details, inline.details, 'the same findings as the same card inline');
    assert.deepEqual(await registry.store.count(), count);
  });

  test('a fetched card is read from its text as an uploaded file is: a key given twice, or a number JSON cannot hold (1e400), is declined at its path', async () => {
    const { base, interfaceUrl, name } = fresh();
    const text = JSON.stringify(v1Card(name, interfaceUrl)).replace('{"name"', '{"name":"Other Name","name"').replace('"capabilities":{', '"capabilities":{"extensions":[{"uri":"https://ext.example.org/x","params":{"big":1e400}}],');
    origin.route(`${base}/.well-known/agent-card.json`, (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(text));
    const count = await registry.store.count();
    const error = errorOf(await op(alice, { register: { url: `${origin.url}${base}` } }));
    assert.equal(error.code, 'VALIDATION_FAILED');
    assert.deepEqual(error.details.map((d: WireJson) => [d.path, d.rule, d.message.split(':')[0]]), [
      ['/name', 'duplicate-key', '"name" is given twice in this object (also at column 2)'],
      ['/capabilities/extensions/0/params/big', 'number-out-of-range', '1e400 is beyond the largest number JSON here can hold (about 1.8e308)'],
    ]);
    assert.deepEqual(await registry.store.count(), count);
  });

  test('too large, not JSON, not found, refused addresses: declined with what went wrong', async () => {
    origin.route('/huge/.well-known/agent-card.json', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ pad: 'x'.repeat(20_000) })));
    const huge = errorOf(await op(alice, { register: { url: `${origin.url}/huge` } }));
    assert.equal(huge.code, 'TOO_LARGE');
    assert.match(huge.message, /huge\/\.well-known\/agent-card\.json is larger than 10,240 bytes \(the document size limit\)/);

    origin.route('/html/.well-known/agent-card.json', (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>'));
    const html = errorOf(await op(alice, { register: { url: `${origin.url}/html` } }));
    assert.equal(html.code, 'FETCH_FAILED');
    assert.match(html.message, /Content-Type "text\/html"; the registry only accepts JSON/);
    assert.equal(html.details[0].rule, 'content-type');

    // A card in another charset than UTF-8: the charset is named, as the doors' 415 names a request's.
    const { interfaceUrl, name } = fresh();
    const utf16 = Buffer.from(JSON.stringify(v1Card(name, interfaceUrl)), 'utf16le');
    origin.route('/utf16/.well-known/agent-card.json', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json; charset=utf-16' }).end(utf16));
    const wide = errorOf(await op(alice, { register: { url: `${origin.url}/utf16` } }));
    assert.equal(wide.code, 'FETCH_FAILED');
    assert.match(wide.message, /answered with Content-Type "application\/json; charset=utf-16", a body in charset utf-16; JSON is read as UTF-8 only \(RFC 8259\): serve it as UTF-8/);
    assert.equal(wide.details[0].rule, 'content-type');
    // Declared latin1 but ASCII (as some servers label every text): read as the UTF-8 it is.
    const ascii = fresh();
    origin.route('/latin1/.well-known/agent-card.json', (_req, res) =>
      void res.writeHead(200, { 'content-type': 'application/json; charset=ISO-8859-1' }).end(JSON.stringify(v1Card(ascii.name, ascii.interfaceUrl))),
    );
    assert.equal(resultOf(await op(alice, { register: { url: `${origin.url}/latin1` } })).created, true);

    const missing = errorOf(await op(alice, { register: { url: `${origin.url}/nothing-here` } }));
    assert.equal(missing.code, 'FETCH_FAILED');
    assert.match(missing.message, /nothing-here\/\.well-known\/agent-card\.json answered HTTP 404/);

    for (const [url, rule] of [
      ['http://169.254.169.254/latest/meta-data', 'link-local'],
      ['http://10.0.0.7/', 'private'],
      ['http://[::1]/', 'loopback'],
      // Only 127.0.0.1 is allowed, not its neighbours.
      [`http://127.0.0.2:${origin.port}/agents/1`, 'loopback'],
    ] as const) {
      const refused = errorOf(await op(alice, { register: { url } }));
      assert.equal(refused.code, 'FETCH_FAILED', url);
      assert.equal(refused.details[0].rule, rule, url);
      assert.match(refused.message, /REGISTRY_FETCH_ALLOW.*Give a public http\(s\) URL\./);
    }
    const scheme = errorOf(await op(alice, { register: { url: 'ftp://agents.example.org/card.json' } }));
    assert.equal(scheme.code, 'BAD_REQUEST');
    assert.match(scheme.message, /"url" must be an absolute http\(s\) URL/);
    // The URL it quotes is cut between characters: at 200 UTF-16 units it ended in half an emoji ("\ud83c" in the answer).
    const emoji = errorOf(await op(alice, { register: { url: `ftp:///${'🌤'.repeat(300)}` } }));
    assert.match(emoji.message, new RegExp(`\\(got "ftp:///${'🌤'.repeat(191)}…\\)\\.$`, 'u'));
    assert.doesNotMatch(JSON.stringify(emoji), /\\ud83c/);
  });

  test("a registry process's first fetch is not cut by its fetch timeout for the registry's own loading of its HTTP client", async () => {
    // The guard loads undici on its first request (a second or two on a loaded machine): counted
    // in the request's deadline, the first registration by URL after a start failed as a timeout
    // of a source that answered at once.
    const { base, interfaceUrl, name } = fresh();
    serveCard(v1Card(name, interfaceUrl), base);
    const child = await slowLoadingRegistry();
    try {
      const result = resultOf(await op(await sdkClient(child.url, { token: TOKENS.alice }), { register: { url: `${origin.url}${base}` } }));
      assert.equal(result.created, true);
      assert.equal(result.health.status, 'ok');
    } finally {
      await child.stop();
    }
  });

  test('authorisation comes first: an anonymous register by URL fetches nothing', async () => {
    const { base, interfaceUrl, name } = fresh();
    serveCard(v1Card(name, interfaceUrl), base);
    const error = errorOf(await op(anonymous, { register: { url: `${origin.url}${base}` } }));
    assert.equal(error.code, 'UNAUTHENTICATED');
    assert.equal(origin.hits.get(`${base}/.well-known/agent-card.json`), undefined);
  });

  test('malformed requests: url with a document, url in validate, fetchTools without a server', async () => {
    const url = `${origin.url}/agents/1`;
    assert.match(errorOf(await op(alice, { register: { url, agentCard: v1Card() } })).message, /send the URL alone/);
    assert.match(errorOf(await op(alice, { validate: { url } })).message, /"validate" checks the document it is sent; "url" .* goes with "register"/);
    assert.match(errorOf(await op(alice, { register: { fetchTools: true } })).message, /"fetchTools" lists the tools of an MCP server: give its metadata/);
    assert.match(errorOf(await op(alice, { register: { mcpServer: mcpServer(), toolspec: { tools: [] }, fetchTools: true } })).message, /leave out the toolspec/);
    assert.equal(errorOf(await op(alice, { register: { url: 42 } })).code, 'BAD_REQUEST');
  });

  test('ownership: the caller owns it; another principal cannot take it over by URL; inline registration drops the source', async () => {
    const { base, interfaceUrl, name } = fresh();
    serveCard(v1Card(name, interfaceUrl), base);
    const first = resultOf(await op(alice, { register: { url: `${origin.url}${base}` } }));
    const stolen = errorOf(await op(bob, { register: { url: `${origin.url}${base}` } }));
    assert.equal(stolen.code, 'FORBIDDEN');
    const again = resultOf(await op(alice, { register: { url: `${origin.url}${base}` } }));
    assert.equal(again.id, first.id);
    assert.equal(again.changed, false);
    // ok since the first registration: `since` is when the status began, not the latest check
    // (it moved to each registration's time); every door shows the same health.
    assert.equal(again.health.since, first.health.since);
    assert.ok(again.health.checkedAt > first.health.checkedAt);
    assert.deepEqual((await get(first.id)).health, again.health);
    const hit = resultOf(await op(anonymous, { search: { query: name } })).results.find((h: WireJson) => h.id === first.id);
    assert.deepEqual([hit.health, hit.source], [again.health, again.source], 'the hit shows the latest check too');
    const inline = resultOf(await op(alice, { register: { agentCard: v1Card(name, interfaceUrl) } }));
    assert.equal(inline.id, first.id);
    const entry = await get(first.id);
    assert.equal(entry.source, undefined, 'the owner manages it inline now');
    assert.equal(entry.health, undefined);
    assert.equal(errorOf(await op(alice, { refresh: { id: first.id } })).code, 'BAD_REQUEST');
  });
});

describe('register an MCP server with fetchTools', () => {
  test('every page of tools/list through the MCP SDK client becomes the toolspec', async () => {
    const server = mcpServer('paged-files', mcp.url);
    const callsBefore = mcp.listCalls;
    const result = resultOf(await op(alice, { register: { mcpServer: server, fetchTools: true } }));
    assert.equal(result.kind, 'mcp-server');
    assert.deepEqual(result.indexed, { tools: 5 });
    assert.equal(mcp.listCalls - callsBefore, 3, 'three pages of two');
    assert.deepEqual(mcp.methods.slice(0, 3), ['initialize', 'notifications/initialized', 'tools/list']);
    assert.equal(result.source.url, mcp.url);
    const entry = await get(result.id);
    assert.deepEqual(entry.document, { mcpServer: server, toolspec: { tools: mcp.tools } });
    assert.equal(entry.health.status, 'ok');
    const hits = resultOf(await op(anonymous, { search: { query: 'thing number', filter: { kind: 'mcp-server', readOnly: true }, resultsPer: 'match' } })).results;
    assert.deepEqual(hits.filter((h: WireJson) => h.id === result.id).map((h: WireJson) => h.match.id).sort(), ['tool_0', 'tool_2', 'tool_4']);
  });

  test("a registry process's first fetchTools is not cut by the exchange's deadline for the registry's own loading of its HTTP client", async () => {
    // The exchange's one deadline (REGISTRY_FETCH_TIMEOUT_MS for initialize, every page and the
    // goodbye) is the MCP source's own clock, not the guarded fetcher's: it counted undici's
    // loading on a process's first request, so a first fetchTools failed as a timeout of a server
    // that answered at once.
    const child = await slowLoadingRegistry();
    try {
      const result = resultOf(await op(await sdkClient(child.url, { token: TOKENS.alice }), { register: { mcpServer: mcpServer('first-fetch-files', mcp.url), fetchTools: true } }));
      assert.equal(result.kind, 'mcp-server');
      assert.deepEqual(result.indexed, { tools: 5 });
    } finally {
      await child.stop();
    }
  });

  test('a registration with fetchTools leaves no timer of the exchange\'s deadline pending once answered, listed or declined', async () => {
    // The deadline (REGISTRY_FETCH_TIMEOUT_MS) was AbortSignal.timeout's, never cleared: it held
    // the registration's request, its body among it, for that long after the answer.
    const timers = followRequestTimers();
    try {
      resultOf(await op(alice, { register: { mcpServer: mcpServer('timed-files', mcp.url), fetchTools: true } }));
      assert.equal(errorOf(await op(alice, { register: { mcpServer: mcpServer('timed-gone', `${origin.url}/no-mcp-here`), fetchTools: true } })).code, 'FETCH_FAILED');
      assert.equal(await timers.pending(registry.core.config.fetch.timeoutMs), 0, 'the exchange\'s deadline is left pending');
    } finally {
      timers.stop();
    }
  });

  test('an MCP server that moved to another origin (308) is followed there, as a card is: the guard checks the hop', async () => {
    // The MCP SDK's own policy follows redirects within the origin only: this was FETCH_FAILED,
    // "answered HTTP 308 to the MCP client", without saying where it pointed.
    origin.route('/mcp-moved', (_req, res) => void res.writeHead(308, { location: mcp.url }).end());
    const result = resultOf(await op(alice, { register: { mcpServer: mcpServer('moved-files', `${origin.url}/mcp-moved`), fetchTools: true } }));
    assert.equal(result.created, true);
    assert.deepEqual(result.indexed, { tools: 5 });
    // A hop to an address the guard refuses is still refused.
    origin.route('/mcp-inside', (_req, res) => void res.writeHead(308, { location: 'http://192.168.1.20/mcp' }).end());
    const inside = errorOf(await op(alice, { register: { mcpServer: mcpServer('moved-inside', `${origin.url}/mcp-inside`), fetchTools: true } }));
    assert.equal(inside.code, 'FETCH_FAILED');
    assert.match(inside.message, /192\.168\.1\.20 is a private-network address/);
  });

  test('an MCP server with sessions that moved to another origin (307): the exchange goes on where its session was issued', async () => {
    // A redirect that leaves the origin carries no mcp-session-id (the guard keeps a session from
    // other origins): each request sent to the old URL again reached the new server without the
    // session it had issued, and a stateful server that moved was declined.
    const moved = await startOrigin();
    try {
      const SESSION = 'session-issued-by-the-new-origin';
      const answer = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
        void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
      moved.route('/mcp', async (req, res) => {
        if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
        let body = '';
        for await (const chunk of req) body += String(chunk);
        const message = JSON.parse(body) as { id?: number; method: string; params?: { protocolVersion?: string } };
        if (message.method === 'initialize') {
          const result = { protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'stateful', version: '1.0.0' } };
          return answer(res, 200, { jsonrpc: '2.0', id: message.id, result }, { 'mcp-session-id': SESSION });
        }
        if (req.headers['mcp-session-id'] !== SESSION) return answer(res, 400, { jsonrpc: '2.0', id: message.id ?? null, error: { code: -32000, message: 'Bad Request: No valid session ID provided' } });
        if (message.id === undefined) return void res.writeHead(202).end();
        answer(res, 200, { jsonrpc: '2.0', id: message.id, result: { tools: [{ name: 'stateful_tool', description: 'Kept in a session.', inputSchema: { type: 'object' } }] } });
      });
      origin.route('/mcp-stateful-moved', (_req, res) => void res.writeHead(307, { location: `${moved.url}/mcp` }).end());
      const result = resultOf(await op(alice, { register: { mcpServer: mcpServer('stateful-moved', `${origin.url}/mcp-stateful-moved`), fetchTools: true } }));
      assert.deepEqual(result.indexed, { tools: 1 });
      assert.equal(origin.hits.get('/mcp-stateful-moved'), 1, 'only the first request went by the old URL');
    } finally {
      await moved.close();
    }
  });

  test('the tools get the checks of an inline toolspec; refused and unreachable servers are declined', async () => {
    const bad = await startMcpServer({ tools: [{ name: 'broken', description: 'x', inputSchema: { type: 'string' } }] });
    try {
      const error = errorOf(await op(alice, { register: { mcpServer: mcpServer('bad-tools', bad.url), fetchTools: true } }));
      assert.equal(error.code, 'VALIDATION_FAILED');
      assert.ok(error.details.some((d: WireJson) => d.path === '/toolspec/tools/0/inputSchema/type'), JSON.stringify(error.details));
      bad.endlessPages = true;
      bad.tools = sampleTools(1);
      const endless = errorOf(await op(alice, { register: { mcpServer: mcpServer('endless', bad.url), fetchTools: true } }));
      assert.equal(endless.code, 'FETCH_FAILED');
      assert.match(endless.message, /kept answering tools\/list with a next page after 20 pages/);
    } finally {
      await bad.close();
    }
    const refused = errorOf(await op(alice, { register: { mcpServer: mcpServer('inside', 'http://192.168.1.20/mcp'), fetchTools: true } }));
    assert.equal(refused.code, 'FETCH_FAILED');
    assert.match(refused.message, /192\.168\.1\.20 is a private-network address/);
    const gone = errorOf(await op(alice, { register: { mcpServer: mcpServer('gone', `${origin.url}/no-mcp-here`), fetchTools: true } }));
    assert.equal(gone.code, 'FETCH_FAILED');
    // The status and the fix in a line, the rule in details[0] as for a card (before: the SDK's
    // "Error POSTing to endpoint: " and the server's whole answer body, no details).
    origin.route('/mcp-login', (_req, res) => void res.writeHead(401, { 'content-type': 'text/html' }).end(`<html>${'Please sign in. '.repeat(200)}</html>`));
    origin.route('/mcp-page', (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not MCP</html>'));
    const cases: [path: string, rule: string, message: RegExp][] = [
      ['/no-mcp-here', 'http-status', /answered HTTP 404 to the MCP client: check that this is the server's Streamable HTTP endpoint/],
      ['/mcp-login', 'http-status', /answered HTTP 401 to the MCP client: the registry lists tools without credentials/],
      ['/mcp-page', 'content-type', /answered with Content-Type "text\/html"; an MCP server answers JSON-RPC as application\/json or text\/event-stream/],
      // The SDK says "Unexpected content type: null", which read as Content-Type "null".
      ['/mcp-untyped', 'content-type', /answered without a Content-Type; an MCP server answers JSON-RPC/],
    ];
    origin.route('/mcp-untyped', (_req, res) => void res.writeHead(200).end('{"jsonrpc": "2.0"}'));
    // A server whose answers to initialize and tools/list are `initialize` and `list`.
    const answering = (initialize: unknown, list: unknown) => (req: http.IncomingMessage, res: http.ServerResponse) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        // The SDK's GET for a stream of its own (no body) is declined as MCP allows.
        if (req.method !== 'POST') return void res.writeHead(405).end();
        const message = JSON.parse(raw) as { id?: number; method: string };
        if (message.id === undefined) return void res.writeHead(202).end();
        const result = message.method === 'initialize' ? initialize : list;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      });
    };
    // One that answers initialize but not tools/list as MCP does: the SDK's zod text ("tools:
    // Invalid input: expected array, received string") became which part of the answer is wrong.
    origin.route('/mcp-odd-list', answering({ protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'odd', version: '1' } }, { tools: 'read_file', nextCursor: 2 }));
    const odd = errorOf(await op(alice, { register: { mcpServer: mcpServer('odd-list', `${origin.url}/mcp-odd-list`), fetchTools: true } }));
    assert.equal(odd.code, 'FETCH_FAILED');
    assert.match(
      odd.message,
      /did not answer tools\/list as an MCP server does, with \{"tools": \[\.\.\.\], "nextCursor"\?: "\.\.\."\}: "tools" must be a list of values; got the string "read_file"; "nextCursor" must be a string; got the number 2\.$/,
    );
    assert.equal(odd.details?.[0]?.rule, 'protocol');
    // One that does not answer initialize as MCP does: said in the same words (it was zod's,
    // "did not answer as an MCP server (protocolVersion: Invalid input: expected string, received number; ...)").
    origin.route('/mcp-odd-init', answering({ protocolVersion: 2025, capabilities: { tools: {} }, serverInfo: { name: 'odd' } }, { tools: [] }));
    const oddInit = errorOf(await op(alice, { register: { mcpServer: mcpServer('odd-init', `${origin.url}/mcp-odd-init`), fetchTools: true } }));
    assert.equal(oddInit.code, 'FETCH_FAILED');
    assert.match(
      oddInit.message,
      /did not answer initialize as an MCP server does, with \{"protocolVersion": "\.\.\.", "capabilities": \{\.\.\.\}, "serverInfo": \{"name": "\.\.\.", "version": "\.\.\."\}\}: "protocolVersion" must be a string; got the number 2025; "serverInfo\.version" is required: give a string\.$/,
    );
    assert.equal(oddInit.details?.[0]?.rule, 'protocol');
    for (const [path, rule, message] of cases) {
      const error = errorOf(await op(alice, { register: { mcpServer: mcpServer('not-mcp', `${origin.url}${path}`), fetchTools: true } }));
      assert.equal(error.code, 'FETCH_FAILED', path);
      assert.match(error.message, message, path);
      assert.ok(error.message.length < 400 && !error.message.includes('Please sign in'), `${path}: ${error.message.slice(0, 200)}`);
      assert.equal(error.details?.[0]?.rule, rule, path);
    }
  });
});

describe('refresh', () => {
  async function registered(card = v1Card(fresh().name, `https://agents.example.org/r${n}/a2a`)) {
    const base = `/refresh/${n}`;
    serveCard(card, base);
    const result = resultOf(await op(alice, { register: { url: `${origin.url}${base}` } }));
    return { id: result.id as string, base, card, path: `${base}/.well-known/agent-card.json` };
  }

  test('a changed card becomes a new revision, marked as a refresh, same owner; the old one stays readable', async () => {
    const { id, base, card } = await registered();
    const changed = {
      ...card,
      skills: [...card.skills, { id: 'audit', name: 'Audit ledgers', description: 'Audits a ledger', tags: ['audit'] }],
    };
    serveCard(changed, base);
    makeDue(id);
    assert.ok((await registry.refresher!.runOnce()) >= 1);
    const entry = await get(id);
    assert.equal(entry.revision, 2);
    assert.equal(entry.revisionOrigin, 'refresh');
    assert.equal(entry.owner, 'alice');
    assert.deepEqual(entry.document, changed);
    assert.equal(entry.health.status, 'ok');
    assert.equal((await get(id, 1)).revisionOrigin, undefined);
    // The text part for people says the older revision is not the current one, and gives the
    // health as the entry's now, not as that revision's.
    const olderTask = await op(anonymous, { get: { id, revision: 1 } });
    const said: string = olderTask.artifacts[0].parts.find((p: WireJson) => typeof p.text === 'string').text;
    assert.match(said, /, revision 1 \(not the current one: the entry is at revision 2\), owner alice, .*; the entry now: health ok since /);
    const hits = resultOf(await op(anonymous, { search: { query: 'audits ledger' } })).results;
    assert.ok(hits.some((h: WireJson) => h.id === id && h.match.id === 'audit'), 'the index follows the refresh');
  });

  test('conditional requests: the ETag goes back, a 304 changes nothing but the check time (no watch event either)', async () => {
    const tag = `conditional-${n + 1}`;
    const card = v1Card(fresh().name, `https://agents.example.org/r${n}/a2a`);
    card.skills[0]!.tags = [tag];
    const { id, path: cardPath } = await registered(card);
    const first = await get(id);
    const watching = watch(alice, { filter: { tags: [tag] } });
    try {
      await watching.waitFor((e) => e.artifactUpdate?.artifact?.name === 'watch-results', 'the initial matches');
      makeDue(id);
      await registry.refresher!.runOnce();
      // Then a real change: the first event the watch gets. The 304 was none (it was an `updated`).
      const other = v1Card(fresh().name, `https://agents.example.org/c${n}/a2a`);
      other.skills[0]!.tags = [tag];
      const added = resultOf(await op(alice, { register: { agentCard: other } }));
      await watching.waitForEvent((e) => e.event === 'added', 'the next registration');
      assert.deepEqual(watching.watchEvents.map((e) => `${e.event} ${e.hit.id}`), [`added ${added.id}`]);
    } finally {
      watching.disconnect();
    }
    const request = origin.requests.filter((r) => r.path === cardPath).at(-1)!;
    assert.equal(request.headers['if-none-match'], first.source.etag);
    const entry = await get(id);
    assert.equal(entry.revision, 1);
    assert.equal(entry.health.status, 'ok');
    assert.ok(entry.health.checkedAt > first.health.checkedAt);
    assert.equal(entry.health.since, first.health.since);
    assert.ok(entry.source.fetchedAt > first.source.fetchedAt);
  });

  test('conditional requests: Last-Modified goes back as If-Modified-Since when there is no ETag', async () => {
    const { base, interfaceUrl, name } = fresh();
    const card = v1Card(name, interfaceUrl);
    const lastModified = 'Tue, 01 Dec 2026 06:00:00 GMT';
    const cardPath = `${base}/.well-known/agent-card.json`;
    origin.route(cardPath, (req, res) => {
      if (req.headers['if-modified-since'] === lastModified) return void res.writeHead(304, { 'last-modified': lastModified }).end();
      res.writeHead(200, { 'content-type': 'application/json', 'last-modified': lastModified }).end(JSON.stringify(card));
    });
    const { id, source } = resultOf(await op(alice, { register: { url: `${origin.url}${base}` } }));
    assert.equal(source.etag, undefined);
    assert.equal(source.lastModified, lastModified);
    makeDue(id);
    await registry.refresher!.runOnce();
    const request = origin.requests.filter((r) => r.path === cardPath).at(-1)!;
    assert.equal(request.headers['if-modified-since'], lastModified);
    assert.equal(request.headers['if-none-match'], undefined);
    const entry = await get(id);
    assert.equal(entry.revision, 1);
    assert.equal(entry.health.status, 'ok');
    assert.ok(entry.source.fetchedAt > source.fetchedAt);
  });

  test('validators longer than any real one are not kept: the entry and its hits stay small, the refresh fetches in full', async () => {
    const { base, interfaceUrl, name } = fresh();
    const card = v1Card(name, interfaceUrl);
    const cardPath = `${base}/.well-known/agent-card.json`;
    // 15 KB: as long as the fetcher's header limit lets through, longer than the card may be.
    const etag = `"${'e'.repeat(15_000)}"`;
    const lastModified = `Tue, 01 Dec 2026 06:00:00 GMT${' '.repeat(100)}x`;
    origin.route(cardPath, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', etag, 'last-modified': lastModified }).end(JSON.stringify(card));
    });
    const { id, source } = resultOf(await op(alice, { register: { url: `${origin.url}${base}` } }));
    assert.equal(source.etag, undefined, 'the answer does not carry it');
    assert.equal(source.lastModified, undefined);
    const hit = resultOf(await op(anonymous, { search: { query: name } })).results.find((h: WireJson) => h.id === id);
    assert.ok(hit, 'found');
    assert.ok(JSON.stringify(hit).length < 10_000, `a hit of ${JSON.stringify(hit).length} characters`);
    assert.equal((await get(id)).source.etag, undefined, 'nor is it stored');
    makeDue(id);
    await registry.refresher!.runOnce();
    const request = origin.requests.filter((r) => r.path === cardPath).at(-1)!;
    assert.equal(request.headers['if-none-match'], undefined);
    assert.equal(request.headers['if-modified-since'], undefined);
    assert.equal((await get(id)).health.status, 'ok');
  });

  test('a re-serialised but equal card is no new revision', async () => {
    const { id, base, card } = await registered();
    const reordered = Object.fromEntries(Object.entries(card).reverse());
    origin.route(`${base}/.well-known/agent-card.json`, (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reordered)));
    makeDue(id);
    await registry.refresher!.runOnce();
    assert.equal((await get(id)).revision, 1);
  });

  test('an invalid card keeps the last good revision: health invalid, failures counted, drift; fixed, it recovers', async () => {
    const { id, base, card, path: cardPath } = await registered();
    const broken: Record<string, unknown> = { ...card };
    delete broken.skills;
    serveCard(broken, base);
    makeDue(id);
    await registry.refresher!.runOnce();
    let entry = await get(id);
    assert.equal(entry.revision, 1);
    assert.deepEqual(entry.document, card);
    assert.equal(entry.health.status, 'invalid');
    assert.equal(entry.health.failures, 1);
    assert.equal(entry.health.reason, 'VALIDATION_FAILED');
    // What is wrong, and where: the health is read later, by people who did not send the card.
    assert.equal(entry.health.message.startsWith(`The document fetched from ${origin.url}${cardPath} was refused (the last good revision is kept): `), true, entry.health.message);
    assert.match(entry.health.message, /\/skills/);
    assert.equal(entry.drift, true);
    const since = entry.health.since;

    makeDue(id);
    await registry.refresher!.runOnce();
    entry = await get(id);
    assert.equal(entry.health.failures, 2);
    assert.equal(entry.health.since, since, 'since: when the status began');
    assert.equal(entry.health.failingSince, since, 'failingSince: when the failures began');

    origin.route(`${base}/.well-known/agent-card.json`, (_req, res) => void res.writeHead(503).end());
    makeDue(id);
    await registry.refresher!.runOnce();
    entry = await get(id);
    assert.equal(entry.health.status, 'unreachable');
    assert.equal(entry.health.failures, 3);
    assert.equal(entry.health.reason, 'http-status');
    assert.match(entry.health.message, /answered HTTP 503/);
    assert.notEqual(entry.health.since, since, 'another status, another since');
    assert.equal(entry.health.failingSince, since, 'the same run of failures');

    serveCard(card, base);
    makeDue(id);
    await registry.refresher!.runOnce();
    entry = await get(id);
    assert.equal(entry.health.status, 'ok');
    assert.equal(entry.health.failures, 0);
    assert.equal(entry.health.failingSince, undefined);
    assert.equal(entry.health.reason, undefined);
    assert.equal(entry.drift, false);
    assert.equal(entry.revision, 1);
  });

  test('a source that answers 429 or 503 with Retry-After is not asked again before then (at most a day later), nor sooner than the interval', async () => {
    // The next check was always one REGISTRY_REFRESH_SECONDS later: a source down for a day's
    // maintenance, or asking its clients to slow down, was asked again within the hour.
    const { id, base, card } = await registered();
    const hour = 3600_000;
    const day = 24 * hour;
    // Each case the first failure after a good check: one in a row waits the interval (the backoff of failures in a row is the next test's).
    const nextAfter = async (status: number, retryAfter: string | undefined): Promise<{ delayMs: number; health: WireJson }> => {
      serveCard(card, base);
      makeDue(id);
      await registry.refresher!.runOnce();
      origin.route(`${base}/.well-known/agent-card.json`, (_req, res) => void res.writeHead(status, retryAfter === undefined ? {} : { 'retry-after': retryAfter }).end());
      makeDue(id);
      const before = Date.now();
      await registry.refresher!.runOnce();
      return { delayMs: Date.parse(nextCheckAt(registry.dataDir, id)!) - before, health: (await get(id)).health };
    };
    const near = (actual: number, expected: number, what: string): void => assert.ok(Math.abs(actual - expected) < 60_000, `${what}: next check in ${actual} ms, not about ${expected}`);

    const maintenance = await nextAfter(503, '43200');
    near(maintenance.delayMs, 12 * hour, 'Retry-After in seconds');
    assert.equal(maintenance.health.status, 'unreachable');
    assert.equal(maintenance.health.reason, 'http-status');
    assert.match(maintenance.health.message, /answered HTTP 503 Service Unavailable \(Retry-After: 43200\)/);
    near((await nextAfter(429, new Date(Date.now() + 3 * hour).toUTCString())).delayMs, 3 * hour, 'Retry-After as an HTTP-date');
    near((await nextAfter(503, String(365 * 24 * 3600))).delayMs, day, 'a year asked: a day at most');
    near((await nextAfter(503, '5')).delayMs, hour, 'sooner than the interval: the interval');
    near((await nextAfter(503, 'soon')).delayMs, hour, 'no time in it: the interval');
    near((await nextAfter(500, '43200')).delayMs, hour, 'Retry-After means nothing on a 500');
    assert.equal((await nextAfter(503, '43200')).health.failures, 1, 'a failed check');

    serveCard(card, base);
    makeDue(id);
    await registry.refresher!.runOnce();
    assert.equal((await get(id)).health.status, 'ok');
    near(Date.parse(nextCheckAt(registry.dataDir, id)!) - Date.now(), hour, 'back: the interval');
  });

  test('a source that keeps failing waits longer each time: the interval doubled per failure in a row, a day at most, the interval again once it answers', async () => {
    // Checked every interval for ever before, however long it had been down.
    const { id, base, card } = await registered();
    const hour = 3600_000;
    const failOnce = async (status: number, retryAfter?: string): Promise<{ delayMs: number; failures: number }> => {
      origin.route(`${base}/.well-known/agent-card.json`, (_req, res) => void res.writeHead(status, retryAfter === undefined ? {} : { 'retry-after': retryAfter }).end());
      makeDue(id);
      const before = Date.now();
      await registry.refresher!.runOnce();
      return { delayMs: Date.parse(nextCheckAt(registry.dataDir, id)!) - before, failures: (await get(id)).health.failures };
    };
    // Jitter takes up to a tenth of the wait beyond the interval off, never more.
    const backedOff = (actual: number, doubled: number, what: string): void =>
      assert.ok(actual <= doubled + 60_000 && actual >= doubled - (doubled - hour) * 0.1 - 60_000, `${what}: next check in ${actual} ms, not about ${doubled}`);
    for (const [failures, doubled] of [[1, hour], [2, 2 * hour], [3, 4 * hour], [4, 8 * hour], [5, 16 * hour], [6, 24 * hour], [7, 24 * hour]] as const) {
      const check = await failOnce(500);
      assert.equal(check.failures, failures);
      backedOff(check.delayMs, doubled, `failure ${failures} in a row`);
    }
    // A Retry-After shorter than the backoff does not cut it short.
    backedOff((await failOnce(503, '60')).delayMs, 24 * hour, 'Retry-After of a minute after 7 failures');
    serveCard(card, base);
    makeDue(id);
    await registry.refresher!.runOnce();
    assert.equal((await get(id)).health.failures, 0);
    assert.ok(Math.abs(Date.parse(nextCheckAt(registry.dataDir, id)!) - Date.now() - hour) < 60_000, 'answering again: the interval');
  });

  test('an MCP server that answers 503 with Retry-After is not asked again before then either', async () => {
    // The MCP SDK's error names only the status: the Retry-After was lost on the way.
    origin.route('/mcp-busy', (_req, res) => void res.writeHead(307, { location: mcp.url }).end());
    const { id } = resultOf(await op(alice, { register: { mcpServer: mcpServer('busy-files', `${origin.url}/mcp-busy`), fetchTools: true } }));
    origin.route('/mcp-busy', (_req, res) => void res.writeHead(503, { 'retry-after': '7200' }).end());
    makeDue(id);
    const before = Date.now();
    await registry.refresher!.runOnce();
    const delayMs = Date.parse(nextCheckAt(registry.dataDir, id)!) - before;
    assert.ok(Math.abs(delayMs - 2 * 3600_000) < 60_000, `next check in ${delayMs} ms, not about two hours`);
    const { health } = await get(id);
    assert.equal(health.reason, 'http-status');
    assert.match(health.message, /answered HTTP 503 to the MCP client \(Retry-After: 7200\)/);
  });

  test('the refresh operation: owner or admin, answers like register; failures are declined and recorded', async () => {
    const { id, base, card } = await registered();
    serveCard({ ...card, version: '2.0.0' }, base);
    const task = await op(alice, { refresh: { id } });
    assert.equal(task.artifacts[0].name, 'registration');
    const result = resultOf(task);
    assert.equal(result.id, id);
    assert.equal(result.revision, 2);
    assert.equal(result.changed, true);
    assert.equal(result.created, false);
    assert.equal(result.revisionOrigin, 'refresh');
    assert.deepEqual(result.indexed, { skills: 2 });
    assert.match(task.artifacts[0].parts.find((p: WireJson) => p.text).text, /^Updated agent \(A2A 1\.0\) .* revision 2 \(from a refresh\)/);

    const same = resultOf(await op(admin, { refresh: { id } }));
    assert.equal(same.changed, false);
    assert.equal(same.revision, 2);
    assert.equal(errorOf(await op(bob, { refresh: { id } })).code, 'FORBIDDEN');
    assert.equal(errorOf(await op(anonymous, { refresh: { id } })).code, 'UNAUTHENTICATED');
    assert.equal(errorOf(await op(alice, { refresh: { id: '00000000-0000-4000-8000-000000000000' } })).code, 'NOT_FOUND');

    origin.route(`${base}/.well-known/agent-card.json`, (_req, res) => void res.writeHead(500).end());
    const failed = errorOf(await op(alice, { refresh: { id } }));
    assert.equal(failed.code, 'FETCH_FAILED');
    assert.match(failed.message, /answered HTTP 500/);
    const entry = await get(id);
    assert.equal(entry.revision, 2);
    assert.equal(entry.health.status, 'unreachable');
  });

  test('a refresh cut short by the registry\'s own shutdown records nothing: the entry keeps its health and stays in search', async () => {
    // Its fetch outlasts the grace period: shutdown closes the outbound guard under it (reason
    // "shutdown"). That was recorded as the source's failure (unreachable, reason shutdown), and
    // with REGISTRY_HIDE_UNHEALTHY_SECONDS the healthy entry left search after the restart.
    const dataDir = tempDir();
    const settings = { REGISTRY_DATA_DIR: dataDir, REGISTRY_FETCH_ALLOW: '127.0.0.1', REGISTRY_REFRESH_SECONDS: '0' };
    const card = v1Card('Shutdown Cut Agent', 'https://agents.example.org/shutdown-cut/a2a');
    serveCard(card, '/shutdown-cut');
    const stopping = await startTestRegistry({ ...settings, REGISTRY_SHUTDOWN_GRACE_SECONDS: '1' });
    let id = '';
    let health: WireJson;
    try {
      const owner = await sdkClient(stopping.url, { token: TOKENS.alice });
      id = resultOf(await op(owner, { register: { url: `${origin.url}/shutdown-cut` } })).id;
      health = resultOf(await op(owner, { get: { id } })).health;
      assert.equal(health.status, 'ok');
      let asked = false;
      origin.route('/shutdown-cut/.well-known/agent-card.json', (_req, res) => {
        asked = true;
        setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card)), 2500);
      });
      const refreshing = op(owner, { refresh: { id } }).catch((error: unknown) => error);
      await waitFor(() => asked, 'the refresh\'s fetch');
      await stopping.close();
      await refreshing;
    } finally {
      await stopping.close();
    }
    const again = await startTestRegistry({ ...settings, REGISTRY_HIDE_UNHEALTHY_SECONDS: '1' });
    try {
      const reader = await sdkClient(again.url);
      assert.deepEqual(resultOf(await op(reader, { get: { id } })).health, health, 'the health the last real check left');
      await new Promise((resolve) => setTimeout(resolve, 1100));
      assert.ok(resultOf(await op(reader, { search: { query: card.name } })).results.some((h: WireJson) => h.id === id), 'still found');
    } finally {
      await again.close();
      removeTempDir(dataDir);
    }
  });

  test('an MCP server registered with fetchTools is refreshed with tools/list', async () => {
    const server = await startMcpServer({ tools: sampleTools(3, 'alpha') });
    try {
      const { id } = resultOf(await op(alice, { register: { mcpServer: mcpServer('refreshing-tools', server.url), fetchTools: true } }));
      server.tools = sampleTools(4, 'beta');
      const result = resultOf(await op(alice, { refresh: { id } }));
      assert.equal(result.revision, 2);
      assert.deepEqual(result.indexed, { tools: 4 });
      assert.deepEqual((await get(id)).document.toolspec.tools, server.tools);

      // tools/list order means nothing: the same tools in another order are no new revision,
      // and a changed list keeps the stored order (new tools after it).
      const stored = server.tools;
      server.tools = [...stored].reverse();
      const reordered = resultOf(await op(alice, { refresh: { id } }));
      assert.equal(reordered.revision, 2);
      assert.equal(reordered.changed, false);
      const added = sampleTools(1, 'gamma')[0];
      server.tools = [added, ...[...stored].reverse()];
      assert.equal(resultOf(await op(alice, { refresh: { id } })).revision, 3);
      assert.deepEqual((await get(id)).document.toolspec.tools, [...stored, added]);
    } finally {
      await server.close();
    }
  });

  test('search and list: health on hits, the "ok" filter', async () => {
    const good = await registered(v1Card('Ledger Keeper Alpha', `https://agents.example.org/ledger-a/a2a`));
    const bad = await registered(v1Card('Ledger Keeper Beta', `https://agents.example.org/ledger-b/a2a`));
    const inline = resultOf(await op(alice, { register: { agentCard: v1Card('Ledger Keeper Gamma', 'https://agents.example.org/ledger-c/a2a') } }));
    origin.route(bad.path, (_req, res) => void res.writeHead(404).end());
    await op(alice, { refresh: { id: bad.id } });

    const ours = new Set([good.id, bad.id, inline.id]);
    const search = async (filter?: WireJson) =>
      resultOf(await op(anonymous, { search: { query: 'ledger keeper', ...(filter ? { filter } : {}) } })).results.filter((h: WireJson) => ours.has(h.id));
    const all = await search();
    const byId = new Map(all.map((h: WireJson) => [h.id, h]));
    assert.equal((byId.get(good.id) as WireJson).health.status, 'ok');
    assert.equal((byId.get(bad.id) as WireJson).health.status, 'unreachable');
    assert.equal((byId.get(inline.id) as WireJson).health, undefined);
    const ok = await search({ health: 'ok' });
    assert.deepEqual([...new Set(ok.map((h: WireJson) => h.id))], [good.id]);
    const down = await search({ health: 'unreachable' });
    assert.deepEqual([...new Set(down.map((h: WireJson) => h.id))], [bad.id]);

    const listed = resultOf(await op(anonymous, { list: { filter: { health: 'unreachable' }, pageSize: 100 } })).entries;
    assert.ok(listed.some((e: WireJson) => e.id === bad.id));
    assert.ok(listed.every((e: WireJson) => e.health.status === 'unreachable'));
    assert.equal(errorOf(await op(anonymous, { search: { query: 'x', filter: { health: 'fine' } } })).code, 'BAD_REQUEST');
  });

  test('the loop refreshes by itself every REGISTRY_REFRESH_SECONDS, entries registered while it was off (0) included', async () => {
    // Registered while refreshing was off: before, such an entry had no next check, and was never
    // refreshed once refreshing was turned on.
    const dataDir = tempDir();
    const off = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir, REGISTRY_FETCH_ALLOW: '127.0.0.1', REGISTRY_REFRESH_SECONDS: '0' });
    const offCard = v1Card('Registered While Off Agent', 'https://agents.example.org/while-off/a2a');
    serveCard(offCard, '/while-off');
    let offId: string;
    try {
      offId = resultOf(await op(await sdkClient(off.url, { token: TOKENS.alice }), { register: { url: `${origin.url}/while-off` } })).id;
    } finally {
      await off.close();
    }
    serveCard({ ...offCard, version: '9.9.9' }, '/while-off');
    const quick = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir, REGISTRY_FETCH_ALLOW: '127.0.0.1', REGISTRY_REFRESH_SECONDS: '1' });
    try {
      const client = await sdkClient(quick.url, { token: TOKENS.alice });
      const card = v1Card('Self Refreshing Agent', 'https://agents.example.org/self/a2a');
      serveCard(card, '/self');
      const { id } = resultOf(await op(client, { register: { url: `${origin.url}/self` } }));
      serveCard({ ...card, version: '9.9.9' }, '/self');
      await waitFor(async () => (await quick.store.get(id))?.revision === 2, 'the loop to write revision 2');
      assert.equal((await quick.store.get(id))?.revisionOrigin, 'refresh');
      await waitFor(async () => (await quick.store.get(offId))?.revision === 2, 'the loop to refresh the entry registered while it was off');
    } finally {
      await quick.close();
      removeTempDir(dataDir);
    }
  });
});

describe('the MCP and catalog doors', () => {
  const mcpClients: McpClient[] = [];
  after(async () => {
    for (const client of mcpClients) await client.close().catch(() => undefined);
  });
  async function mcpClientFor(token?: string): Promise<McpClient> {
    const client = await connectMcp(registry.url, 'freshness-test', token);
    mcpClients.push(client);
    return client;
  }
  const call = callTool;

  test('MCP: register_agent by url, register_mcp_server with fetchTools, refresh_entry; health and source on entries and hits, the health filter', async () => {
    const owner = await mcpClientFor(TOKENS.alice);
    const reader = await mcpClientFor();
    const { base, interfaceUrl } = fresh();
    const card = v1Card('Harbour Pilot Agent', interfaceUrl);
    serveCard(card, base);

    const registered = structured(await call(owner, 'register_agent', { url: `${origin.url}${base}` }));
    assert.equal(registered.created, true);
    assert.equal(registered.source.url, `${origin.url}${base}/.well-known/agent-card.json`);
    assert.equal(registered.health.status, 'ok');
    const entry = structured(await call(reader, 'get_agent', { id: registered.id }));
    assert.deepEqual(entry, await get(registered.id), 'get_agent answers what the A2A get answers');
    assert.equal(entry.source.url, registered.source.url);
    assert.equal(entry.health.status, 'ok');
    assert.equal(entry.drift, false);

    // Quoted: the name as written (unquoted, related words such as WordNet's "keep" for "harbour" also find other cards, lower).
    const hits = structured(await call(reader, 'search_agents', { query: '"harbour pilot"', filter: { health: 'ok' } })).results;
    assert.ok(hits.some((h: WireJson) => h.id === registered.id && h.health.status === 'ok' && h.source.url === registered.source.url), JSON.stringify(hits));

    assert.match(errorText(await call(owner, 'register_agent', {})), /^BAD_REQUEST: Give exactly one of agentCard .* or url/);
    assert.match(errorText(await call(owner, 'register_agent', { url: `${origin.url}${base}`, agentCard: card })), /^BAD_REQUEST: Give exactly one/);
    assert.match(errorText(await call(owner, 'register_agent', { url: 'http://169.254.169.254/latest' })), /^FETCH_FAILED: .*169\.254\.169\.254/);
    assert.match(errorText(await call(reader, 'register_agent', { url: `${origin.url}${base}` })), /^UNAUTHENTICATED: /);

    serveCard({ ...card, version: '3.0.0' }, base);
    const refreshed = structured(await call(owner, 'refresh_entry', { id: registered.id }));
    assert.deepEqual([refreshed.revision, refreshed.changed, refreshed.revisionOrigin], [2, true, 'refresh']);
    assert.match(errorText(await call(await mcpClientFor(TOKENS.bob), 'refresh_entry', { id: registered.id })), /^FORBIDDEN: /);

    origin.route(`${base}/.well-known/agent-card.json`, (_req, res) => void res.writeHead(503).end());
    assert.match(errorText(await call(owner, 'refresh_entry', { id: registered.id })), /^FETCH_FAILED: .*HTTP 503/);
    const down = await call(reader, 'search_agents', { query: '"harbour pilot"', filter: { health: 'unreachable' } });
    assert.deepEqual([...new Set(structured(down).results.map((h: WireJson) => h.id))], [registered.id]);
    assert.match((down.content[0] as { text: string }).text, /Harbour Pilot Agent \(id [^)]+\).*\[unreachable since /);
    assert.equal(structured(await call(reader, 'search_agents', { query: '"harbour pilot"', filter: { health: 'ok' } })).results.length, 0);
    const listed = structured(await call(reader, 'list_agents', { health: 'unreachable', pageSize: 100 })).entries;
    assert.ok(listed.some((e: WireJson) => e.id === registered.id && e.health.status === 'unreachable'));

    const server = mcpServer('door-fetched-tools', mcp.url);
    const tools = structured(await call(owner, 'register_mcp_server', { mcpServer: server, fetchTools: true }));
    assert.deepEqual(tools.indexed, { tools: 5 });
    assert.equal(tools.source.url, mcp.url);
    assert.deepEqual(structured(await call(reader, 'get_mcp_server', { id: tools.id })).document.toolspec.tools, mcp.tools);
    assert.match(errorText(await call(owner, 'register_mcp_server', { mcpServer: server })), /^BAD_REQUEST: Give exactly one of toolspec/);
    assert.match(errorText(await call(owner, 'register_mcp_server', { mcpServer: server, toolspec: { tools: [] }, fetchTools: true })), /^BAD_REQUEST: Give exactly one of toolspec/);

    // An entry registered inline has nothing to refresh: the tool says how to register it by URL
    // with the tools (it said {"register": {"url": ...}}, the A2A request, which A2A keeps).
    const inline = structured(await call(owner, 'register_agent', { agentCard: v1Card('Harbour Tug Agent', `https://agents.example.org/tug${n}/a2a`) }));
    const notSourced = await call(owner, 'refresh_entry', { id: inline.id });
    assert.equal(
      errorText(notSourced).split('\n')[0],
      `BAD_REQUEST: Entry "${inline.id}" was registered with its document inline, so it has no source to refresh. Register it by URL (register_agent with url) or, for an MCP server, with register_mcp_server and fetchTools: true, and the registry keeps it fresh.`,
    );
    assert.deepEqual(JSON.parse((notSourced.content[1] as { text: string }).text).error.details.map((d: WireJson) => d.path), ['/arguments/id']);
    const viaA2A = errorOf(await op(alice, { refresh: { id: inline.id } }));
    assert.match(viaA2A.message, /Register it by URL \(\{"register": \{"url": "https:\/\/\.\.\."\}\}\)/);
  });

  test('catalog and ARD: health, drift and source in entries\' metadata; the ARD health filter', async () => {
    const { base, interfaceUrl } = fresh();
    const card = v1Card('Lighthouse Keeper Agent', interfaceUrl);
    serveCard(card, base);
    const { id, source } = resultOf(await op(alice, { register: { url: `${origin.url}${base}` } }));
    const inline = resultOf(await op(alice, { register: { agentCard: v1Card('Lighthouse Painter Agent', `https://agents.example.org/painter${n}/a2a`) } }));

    const catalog = (await (await fetch(`${registry.url}/.well-known/ai-catalog.json`)).json()) as WireJson;
    const listed = catalog.entries.find((e: WireJson) => e.metadata?.registryId === id);
    assert.ok(listed, 'the entry is in the catalog');
    assert.deepEqual(
      { health: listed.metadata.health, drift: listed.metadata.drift, sourceUrl: listed.metadata.sourceUrl, since: typeof listed.metadata.healthSince },
      { health: 'ok', drift: false, sourceUrl: source.url, since: 'string' },
    );
    const plain = catalog.entries.find((e: WireJson) => e.metadata?.registryId === inline.id);
    assert.equal(plain.metadata.health, undefined, 'entries the registry never checks carry no health');

    const ard = async (filter: WireJson) => {
      const res = await fetch(`${registry.url}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: { text: 'lighthouse', filter } }) });
      return { status: res.status, body: (await res.json()) as WireJson };
    };
    const ok = await ard({ health: 'ok' });
    assert.deepEqual(ok.body.results.map((r: WireJson) => r.metadata.registryId), [id]);
    assert.equal(ok.body.results[0].metadata.health, 'ok');
    assert.equal(ok.body.results[0].metadata.sourceUrl, source.url);

    origin.route(`${base}/.well-known/agent-card.json`, (_req, res) => void res.writeHead(404).end());
    await op(alice, { refresh: { id } });
    const down = await ard({ health: 'unreachable' });
    assert.deepEqual(down.body.results.map((r: WireJson) => r.metadata.registryId), [id]);
    assert.equal(down.body.results[0].metadata.health, 'unreachable');
    const one = (await (await fetch(`${registry.url}/agents/${id}`)).json()) as WireJson;
    assert.equal(one.metadata.health, 'unreachable', 'the ARD entry follows the check (the catalog cache follows the change feed)');
    const refreshedCatalog = (await (await fetch(`${registry.url}/.well-known/ai-catalog.json`)).json()) as WireJson;
    assert.equal(refreshedCatalog.entries.find((e: WireJson) => e.metadata?.registryId === id).metadata.health, 'unreachable');

    const bad = await ard({ health: 'fine' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /Filter "health" takes one of ok, unreachable, invalid, any/);
  });
});

describe('metrics', () => {
  test('fetches by purpose and outcome, failures by reason, latency', async () => {
    const text = await (await fetch(`${registry.url}/metrics`)).text();
    assert.match(text, /registry_fetches_total\{purpose="agent-card",outcome="ok"\} [1-9]/);
    assert.match(text, /registry_fetches_total\{purpose="refresh",outcome="not-modified"\} [1-9]/);
    assert.match(text, /registry_fetches_total\{purpose="mcp",outcome="ok"\} [1-9]/);
    assert.match(text, /registry_fetch_failures_total\{purpose="agent-card",reason="link-local"\} [1-9]/);
    assert.match(text, /registry_fetch_failures_total\{purpose="refresh",reason="http-status"\} [1-9]/);
    assert.match(text, /registry_fetch_duration_seconds_bucket\{le="5",purpose="agent-card"\} [1-9]/);
    assert.match(text, /registry_requests_total\{method="SendMessage",operation="refresh",outcome="COMPLETED",code="none",door="a2a"\} [1-9]/);
  });
});
