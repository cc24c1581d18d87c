/**
 * The discovery standards over plain HTTP on 127.0.0.1: the AI Catalog and the ARD manifest
 * checked against the shapes the specifications define, catalogs paginated by nested catalog
 * entries a client follows, the ARD search, list and get, every registered document at its
 * stable URL with ETag/304, errors as ARD names them, access and rate limits shared with the
 * other doors, and catalogs cached until the change feed moves.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { domainToUnicode } from 'node:url';
import type { Client as A2AClient } from '@a2a-js/sdk/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { errorOf, op, resultOf, sdkClient, type WireJson } from './support/client.js';
import {
  aiCatalogSchema,
  ardEntrySchema,
  ardErrorSchema,
  ardListResponseSchema,
  ardManifestSchema,
  ardSearchResponseSchema,
  assertShape,
  serverCardSchema,
} from './support/discovery-shapes.js';
import { mcpServer, toolspec, v03Card, v1Card } from './support/documents.js';
import { sendEndlessBody } from './support/raw-connection.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';

const registries: TestRegistry[] = [];
async function start(env: Record<string, string> = {}): Promise<TestRegistry> {
  const registry = await startTestRegistry(env);
  registries.push(registry);
  return registry;
}
after(async () => {
  for (const r of registries) {
    await r.close();
    fs.rmSync(r.dataDir, { recursive: true, force: true });
  }
});

let registry: TestRegistry;
let writer: A2AClient;
const ids = { invoice: '', weather: '', files: '' };

const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers });
async function getJson(url: string, headers: Record<string, string> = {}): Promise<{ res: Response; body: WireJson }> {
  const res = await get(url, headers);
  return { res, body: (await res.json()) as WireJson };
}
async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ res: Response; body: WireJson }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { res, body: (await res.json()) as WireJson };
}
/** What the registry answers a POST whose body never ends, once it has closed the connection (within 1.5 s). */
async function refusedUnread(path: string, contentType: string): Promise<string> {
  const endless = await sendEndlessBody(registry.url, `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\nTransfer-Encoding: chunked\r\n\r\n`, 1_500);
  assert.ok(endless.closed, `${path}: the registry closed the connection (got ${JSON.stringify(endless.received.slice(0, 100))})`);
  return endless.received;
}
function assertArdError(answer: { res: Response; body: WireJson }, status: number, errorCode: string, message?: RegExp): void {
  assert.equal(answer.res.status, status, JSON.stringify(answer.body));
  assertShape(ardErrorSchema, answer.body, 'the error');
  assert.equal(answer.body.errorCode, errorCode);
  if (message) assert.match(answer.body.message, message);
}
const urn = (kind: string, id: string) => `urn:air:127.0.0.1:${kind}:${id}`;

before(async () => {
  registry = await start({ REGISTRY_RATE_LIMITS: 'false' });
  writer = await sdkClient(registry.url, { token: TOKENS.alice });
  ids.invoice = resultOf(await op(writer, { register: { agentCard: v1Card() } })).id;
  ids.weather = resultOf(await op(writer, { register: { agentCard: v03Card() } })).id;
  ids.files = resultOf(await op(writer, { register: { mcpServer: mcpServer(), toolspec: toolspec() } })).id;
});

describe('AI Catalog and ARD manifest', () => {
  test('the catalog lists the registry itself and every entry, in the shape the AI Catalog and ARD define', async () => {
    const { res, body } = await getJson(`${registry.url}/.well-known/ai-catalog.json`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/ai-catalog+json; charset=utf-8');
    assertShape(aiCatalogSchema, body, 'ai-catalog.json');
    assertShape(ardManifestSchema, body, 'ai-catalog.json as an ARD manifest');
    assert.equal(body.specVersion, '1.0');
    assert.equal(body.host.displayName, 'A2A Agent Registry');

    const entries: WireJson[] = body.entries;
    assert.deepEqual(
      entries.slice(0, 3).map((e) => [e.identifier, e.mediaType, e.url]),
      [
        [urn('registry', 'search'), 'application/ai-registry+json', `${registry.url}/`],
        [urn('registry', 'a2a'), 'application/a2a-agent-card+json', `${registry.url}/.well-known/agent-card.json`],
        [urn('registry', 'mcp'), 'application/mcp-server-card+json', `${registry.url}/mcp/server-card`],
      ],
    );
    assert.equal(new Set(entries.map((e) => e.identifier)).size, entries.length, 'identifiers are unique');
    for (const e of entries) assert.equal(e.type, e.mediaType, 'ARD `type` and AI Catalog `mediaType` agree');

    const invoice = entries.find((e) => e.identifier === urn('agent', ids.invoice))!;
    const entry = resultOf(await op(writer, { get: { id: ids.invoice } }));
    assert.deepEqual(invoice, {
      identifier: urn('agent', ids.invoice),
      displayName: 'Invoice Agent',
      type: 'application/a2a-agent-card+json',
      mediaType: 'application/a2a-agent-card+json',
      url: `${registry.url}/agents/${ids.invoice}/card.json`,
      description: 'Invoice Agent translates and checks invoices.',
      tags: ['finance', 'translation', 'tax'],
      capabilities: ['translate-invoice', 'check-vat'],
      representativeQueries: ['Translate this invoice into German', 'Is the VAT on this invoice right?'],
      version: '1.2.0',
      updatedAt: entry.updatedAt,
      metadata: { registryId: ids.invoice, kind: 'agent', revision: 1, verified: false, protocolVersion: '1.0' },
    });
    const files = entries.find((e) => e.identifier === urn('mcp-server', ids.files))!;
    assert.equal(files.mediaType, 'application/mcp-server-card+json');
    assert.deepEqual(files.capabilities, ['read_file', 'write_file']);
    assert.equal(files.metadata.documentUrl, `${registry.url}/mcp-servers/${ids.files}/document.json`);
    assert.equal(entries.find((e) => e.identifier === urn('agent', ids.weather))!.representativeQueries, undefined, 'fewer than two examples: no representativeQueries');

    // Every url is served, with the media type the entry declares.
    for (const e of entries) {
      const doc = await get(e.url as string);
      if (e.mediaType === 'application/ai-registry+json') continue; // the ARD API base (POST /search)
      assert.equal(doc.status, 200, e.url);
      assert.equal(doc.headers.get('content-type')!.split(';')[0], e.mediaType === 'application/a2a-agent-card+json' && e.identifier.endsWith(':registry:a2a') ? 'application/json' : e.mediaType, e.url);
    }
    assert.deepEqual(await (await get(invoice.url)).json(), v1Card(), 'the card exactly as registered');
  });

  test('/.well-known/ard.json is the same manifest; its registry entry leads to the ARD search', async () => {
    const catalog = await (await get(`${registry.url}/.well-known/ai-catalog.json`)).text();
    const res = await get(`${registry.url}/.well-known/ard.json`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    const manifest = (await res.json()) as WireJson;
    assert.deepEqual(manifest, JSON.parse(catalog));
    for (const entry of manifest.entries) assertShape(ardEntrySchema, entry, `ARD entry ${entry.identifier}`);
    const search = manifest.entries.find((e: WireJson) => e.type === 'application/ai-registry+json');
    const answer = await post(new URL('search', search.url).href, { query: { text: 'weather forecast' } });
    assert.equal(answer.res.status, 200);
    assert.equal(answer.body.results[0].identifier, urn('agent', ids.weather));
  });

  test('ETag, Cache-Control and 304; the catalog is cached until a change is published, then rebuilt', async () => {
    let lists = 0;
    const list = registry.store.list.bind(registry.store);
    registry.store.list = (query) => {
      lists++;
      return list(query);
    };
    try {
      const first = await get(`${registry.url}/.well-known/ai-catalog.json`);
      await first.arrayBuffer();
      const etag = first.headers.get('etag')!;
      assert.match(etag, /^"[\w-]{27}"$/);
      assert.equal(first.headers.get('cache-control'), 'public, max-age=60');
      const again = await get(`${registry.url}/.well-known/ai-catalog.json`, { 'if-none-match': etag });
      assert.equal(again.status, 304);
      assert.equal(await again.text(), '');
      assert.equal(lists, 0, 'served from the cache built by the earlier tests: no storage read');

      const id = resultOf(await op(writer, { register: { agentCard: v1Card('Fresh Agent', 'https://fresh.example.org/a2a') } })).id;
      const changed = await get(`${registry.url}/.well-known/ai-catalog.json`, { 'if-none-match': etag });
      assert.equal(changed.status, 200);
      assert.notEqual(changed.headers.get('etag'), etag);
      const body = (await changed.json()) as WireJson;
      assert.ok(body.entries.some((e: WireJson) => e.identifier === urn('agent', id)));
      assert.equal(lists, 1);
      await (await get(`${registry.url}/.well-known/ai-catalog.json`)).arrayBuffer();
      assert.equal(lists, 1, 'the rebuilt page is cached again');
      await Promise.all([1, 2, 3].map(async () => (await get(`${registry.url}/.well-known/ard.json`)).arrayBuffer()));
      assert.equal(lists, 2, 'concurrent requests share one build');
    } finally {
      registry.store.list = list;
    }
  });

  test('cross-origin readable: any origin may GET the public documents', async () => {
    // The registry's own A2A card too, in both generations (the catalogs name it: a page that reads them could not read it).
    const documents: Array<[string, string?]> = [['/.well-known/ai-catalog.json'], ['/.well-known/ard.json'], [`/agents/${ids.invoice}/card.json`], ['/mcp/server-card'], ['/.well-known/agent-card.json'], ['/.well-known/agent-card.json', '1.0']];
    for (const [path, version] of documents) {
      const res = await get(`${registry.url}${path}`, { origin: 'https://somewhere.example', ...(version ? { 'a2a-version': version } : {}) });
      assert.equal(res.status, 200, path);
      await res.arrayBuffer();
      assert.equal(res.headers.get('access-control-allow-origin'), '*', path);
      assert.match(res.headers.get('access-control-expose-headers') ?? '', /ETag/);
      assert.equal(res.headers.get('cross-origin-resource-policy'), 'cross-origin');
    }
    // A path that is not valid percent-encoding: its 400 is readable from another origin too (it had no CORS headers).
    for (const path of ['/agents/%ff', '/mcp-servers/%ff/document.json']) {
      const res = await get(`${registry.url}${path}`, { origin: 'https://somewhere.example' });
      await res.arrayBuffer();
      assert.equal(res.status, 400, path);
      assert.equal(res.headers.get('access-control-allow-origin'), '*', path);
    }
    const search = await post(`${registry.url}/search`, { query: { text: 'x' } }, { origin: 'https://somewhere.example' });
    assert.equal(search.res.headers.get('access-control-allow-origin'), null, 'the API follows REGISTRY_CORS_ORIGINS');
  });

  test('cross-origin preflight: a browser on any origin may send a conditional GET (If-None-Match) for the documents open to every origin, and only for those', async () => {
    const preflight = (base: string, path: string, method = 'GET', headers = 'if-none-match') =>
      fetch(`${base}${path}`, { method: 'OPTIONS', headers: { origin: 'https://somewhere.example', 'access-control-request-method': method, 'access-control-request-headers': headers } });
    const assertOpen = async (res: Response, what: string) => {
      assert.equal(res.status, 204, what);
      assert.equal(res.headers.get('access-control-allow-origin'), '*', what);
      assert.deepEqual(res.headers.get('access-control-allow-methods')?.split(/,\s*/), ['GET', 'HEAD'], what);
      const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/);
      for (const header of ['if-none-match', 'if-modified-since', 'cache-control', 'a2a-version']) assert.ok(allowed.includes(header), `${what}: ${header} in ${allowed.join(', ')}`);
      assert.ok(Number(res.headers.get('access-control-max-age')) > 0, what);
    };
    const open = [
      '/.well-known/ai-catalog.json',
      '/.well-known/ard.json',
      '/agents',
      `/agents/${encodeURIComponent(urn('agent', ids.invoice))}`,
      `/agents/${ids.invoice}/card.json`,
      `/mcp-servers/${ids.files}/document.json`,
      `/mcp-servers/${ids.files}/server-card.json`,
      '/mcp/server-card',
      '/.well-known/agent-card.json',
    ];
    // It was 200 with Allow: GET, HEAD and no Access-Control-* header: the browser refused the GET.
    for (const path of open) await assertOpen(await preflight(registry.url, path, 'GET', 'if-none-match, cache-control'), path);
    // The GET it lets through: 304 on the ETag, readable by that origin.
    const first = await get(`${registry.url}/.well-known/ai-catalog.json`, { origin: 'https://somewhere.example' });
    await first.arrayBuffer();
    const again = await get(`${registry.url}/.well-known/ai-catalog.json`, { origin: 'https://somewhere.example', 'if-none-match': first.headers.get('etag')! });
    assert.equal(again.status, 304);
    assert.equal(again.headers.get('access-control-allow-origin'), '*');

    // The API is not opened: POST /search, the A2A and MCP endpoints keep REGISTRY_CORS_ORIGINS (off here);
    // nor is another method on an open path; a plain OPTIONS still says which methods a path takes.
    for (const [path, method] of [['/search', 'POST'], ['/a2a/jsonrpc', 'POST'], ['/mcp', 'POST'], ['/.well-known/agent-card.json', 'POST'], ['/agents', 'POST']] as const) {
      const res = await preflight(registry.url, path, method, 'content-type');
      await res.arrayBuffer();
      assert.equal(res.headers.get('access-control-allow-origin'), null, `${method} ${path}`);
    }
    const plain = await fetch(`${registry.url}/.well-known/ai-catalog.json`, { method: 'OPTIONS' });
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get('allow'), 'GET, HEAD');

    // With REGISTRY_CORS_ORIGINS naming origins, the open documents stay open to every origin, their
    // preflight too (the configured CORS answered it for its own origins only); the API keeps to the list.
    const listed = await start({ REGISTRY_CORS_ORIGINS: 'https://app.example', REGISTRY_RATE_LIMITS: 'false' });
    await assertOpen(await preflight(listed.url, '/.well-known/ai-catalog.json'), 'with REGISTRY_CORS_ORIGINS');
    const api = await preflight(listed.url, '/search', 'POST', 'content-type');
    assert.equal(api.headers.get('access-control-allow-origin'), null, 'POST /search: not a listed origin');
    // A listed origin may send its token to the open documents, as to POST /search and /mcp (the
    // preflight did not allow Authorization, so the browser refused such a GET); others read without one.
    const allowsToken = (res: Response) => (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/).includes('authorization');
    for (const path of ['/.well-known/ai-catalog.json', '/agents', `/agents/${ids.invoice}/card.json`]) {
      const fromListed = await fetch(`${listed.url}${path}`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' } });
      assert.equal(fromListed.status, 204, path);
      assert.ok(allowsToken(fromListed), `${path}: ${fromListed.headers.get('access-control-allow-headers')}`);
      assert.match(fromListed.headers.get('vary') ?? '', /origin/i, path);
      assert.ok(!allowsToken(await preflight(listed.url, path, 'GET', 'authorization')), `${path}: another origin`);
    }
    const searchPreflight = await fetch(`${listed.url}/search`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' } });
    assert.ok(allowsToken(searchPreflight), 'POST /search, as before');
    const withToken = await get(`${listed.url}/.well-known/ai-catalog.json`, { origin: 'https://app.example', authorization: `Bearer ${TOKENS.alice}` });
    await withToken.arrayBuffer();
    assert.equal(withToken.status, 200);
    assert.equal(withToken.headers.get('access-control-allow-origin'), '*');
    const everyOrigin = await start({ REGISTRY_CORS_ORIGINS: '*', REGISTRY_RATE_LIMITS: 'false' });
    assert.ok(allowsToken(await preflight(everyOrigin.url, '/agents', 'GET', 'authorization')), 'REGISTRY_CORS_ORIGINS=*');

    const listedCard = await get(`${listed.url}/.well-known/agent-card.json`, { origin: 'https://somewhere.example' });
    await listedCard.arrayBuffer();
    assert.equal(listedCard.headers.get('access-control-allow-origin'), '*', 'the A2A card, with REGISTRY_CORS_ORIGINS');
    await assertOpen(await preflight(listed.url, '/.well-known/agent-card.json'), 'the A2A card, with REGISTRY_CORS_ORIGINS');

    // Reads closed: the documents are not open to other origins, nor is their preflight; the
    // registry's own cards (MCP Server Card, A2A card) stay open, as their GET does.
    const closed = await start({ REGISTRY_PUBLIC_READ: 'false', REGISTRY_RATE_LIMITS: 'false' });
    const refused = await preflight(closed.url, '/.well-known/ai-catalog.json');
    await refused.arrayBuffer();
    assert.equal(refused.headers.get('access-control-allow-origin'), null, 'reads closed');
    for (const path of ['/mcp/server-card', '/.well-known/agent-card.json']) {
      await assertOpen(await preflight(closed.url, path), `${path}, reads closed`);
      const card = await get(`${closed.url}${path}`, { origin: 'https://somewhere.example' });
      await card.arrayBuffer();
      assert.equal(card.status, 200, path);
      assert.equal(card.headers.get('access-control-allow-origin'), '*', path);
      assert.equal(card.headers.get('cross-origin-resource-policy'), 'cross-origin', path);
    }
    // A HEAD, and a 304 revalidation by the ETag the card exposes, are readable too.
    const head = await fetch(`${closed.url}/.well-known/agent-card.json`, { method: 'HEAD', headers: { origin: 'https://somewhere.example' } });
    assert.equal(head.headers.get('access-control-allow-origin'), '*');
    const revalidated = await get(`${closed.url}/.well-known/agent-card.json`, { origin: 'https://somewhere.example', 'if-none-match': head.headers.get('etag')! });
    assert.equal(revalidated.status, 304);
    assert.equal(revalidated.headers.get('access-control-allow-origin'), '*');
  });
});

describe('large catalogs', () => {
  test('a catalog ends with nested catalogs of the rest, a tree: a client that caps nesting at depth 4 reaches every entry once; older page URLs still chain', async () => {
    const big = await start({ REGISTRY_RATE_LIMITS: 'false' });
    const caller = { principal: 'alice', isAdmin: false };
    // More than 500: a spec-following client's depth cap (4) ended the older releases' chain of pages there.
    // Registered concurrently: the writes share commits, as a busy registry's do.
    const ids = await Promise.all(
      Array.from({ length: 605 }, async (_, i) => {
        const card = v1Card(`Agent ${i}`, `https://a${i}.example.org/a2a`);
        const text = JSON.stringify(card);
        return (await big.service.register({ type: 'agent-card', card, documentText: text, sizeBytes: Buffer.byteLength(text) }, caller)).id!;
      }),
    );
    const registered = new Set(ids.map((id) => urn('agent', id)));
    const agentsOf = (body: WireJson): string[] => body.entries.filter((e: WireJson) => e.identifier.includes(':agent:')).map((e: WireJson) => e.identifier);
    const nestedOf = (body: WireJson): WireJson[] => body.entries.filter((e: WireJson) => e.mediaType === 'application/ai-catalog+json');
    const rangeIds: string[] = [];
    const pageIds: string[] = [];
    for (const document of ['/.well-known/ai-catalog.json', '/.well-known/ard.json']) {
      // As a client that follows nested catalogs, at most 4 deep, does it.
      const seen: string[] = [];
      let deepest = 0;
      const read = async (url: string, depth: number): Promise<WireJson> => {
        assert.ok(depth <= 4, `${url} is nested ${depth} deep`);
        deepest = Math.max(deepest, depth);
        const { res, body } = await getJson(url);
        assert.equal(res.status, 200, url);
        assertShape(aiCatalogSchema, body, url);
        assertShape(ardManifestSchema, body, url);
        const nested = nestedOf(body);
        assert.deepEqual(body.entries.slice(body.entries.length - nested.length), nested, 'the nested catalogs come last');
        assert.ok(agentsOf(body).length <= 100 && nested.length <= 100, 'a page and at most 100 nested catalogs');
        seen.push(...agentsOf(body));
        for (const entry of nested) {
          assert.ok(entry.url.startsWith(`${big.url}${document}?`), `${entry.url} stays on the document it started from`);
          // A range's identifier names that range of that document, and looking it up answers the same entry.
          rangeIds.push(entry.identifier);
          const lookup = await getJson(`${big.url}/agents/${encodeURIComponent(entry.identifier)}`);
          assert.equal(lookup.res.status, 200, JSON.stringify(lookup.body));
          assert.deepEqual(lookup.body, entry);
          await read(entry.url, depth + 1);
        }
        return body;
      };
      const root = await read(`${big.url}${document}`, 0);
      assert.equal(seen.length, registered.size, 'no entry twice');
      assert.deepEqual(new Set(seen), registered);
      // 605: 100 on the first page, the other 505 in six ranges of 100 (the last 5), one level down.
      assert.equal(deepest, 1);
      assert.equal(nestedOf(root).length, 6);

      // The chain of pages older releases linked (?page=N&after=...): a URL a client holds still
      // answers its page and links the next, to the end. Page 2 continues where the first range starts.
      let url: string | undefined = `${big.url}${document}?page=2&after=${encodeURIComponent(new URL(nestedOf(root)[0].url).searchParams.get('from')!)}`;
      const chained = agentsOf(root);
      let pages = 1;
      while (url) {
        const { res, body } = await getJson(url);
        assert.equal(res.status, 200, url);
        assertShape(aiCatalogSchema, body, `page ${pages + 1}`);
        pages++;
        const nested = nestedOf(body);
        assert.ok(nested.length <= 1);
        if (nested.length) {
          assert.equal(body.entries.at(-1), nested[0], 'the next page comes last');
          // A page's identifier names that one page of that document (page-2 alone named either
          // document's, wherever the list stood), and looking it up answers the same entry.
          pageIds.push(nested[0].identifier);
          const lookup = await getJson(`${big.url}/agents/${encodeURIComponent(nested[0].identifier)}`);
          assert.equal(lookup.res.status, 200, JSON.stringify(lookup.body));
          assert.deepEqual(lookup.body, nested[0]);
          assert.ok(nested[0].url.startsWith(`${big.url}${document}?page=${pages + 1}&after=`), 'pages stay on the document they started from');
        }
        chained.push(...agentsOf(body));
        url = nested[0]?.url;
      }
      assert.equal(pages, 7);
      assert.deepEqual(new Set(chained), registered);
      assert.equal(chained.length, registered.size);
    }
    assert.equal(new Set(rangeIds).size, 12, `one identifier per range and document: ${rangeIds.join(', ')}`);
    assert.equal(new Set(pageIds).size, 10, `one identifier per page and document: ${pageIds.join(', ')}`);

    // Ranges are positions, not counts: an entry registered during a walk is on the first page
    // (read again), and the ranges the walk holds still hold each older entry once.
    const before = (await getJson(`${big.url}/.well-known/ai-catalog.json`)).body;
    const lateCard = v1Card('Late Agent', 'https://late.example.org/a2a');
    const lateText = JSON.stringify(lateCard);
    const late = urn('agent', (await big.service.register({ type: 'agent-card', card: lateCard, documentText: lateText, sizeBytes: Buffer.byteLength(lateText) }, caller)).id!);
    const walked = agentsOf(before);
    for (const range of nestedOf(before)) walked.push(...agentsOf((await getJson(range.url)).body));
    assert.equal(walked.length, registered.size);
    assert.deepEqual(new Set(walked), registered);
    const now = (await getJson(`${big.url}/.well-known/ai-catalog.json`)).body;
    assert.equal(agentsOf(now)[0], late);

    // A range forged, altered or of two parameters given wrong is refused saying which, in the catalog's words.
    const range = new URL(nestedOf(now)[0].url);
    const from = range.searchParams.get('from')!;
    const until = range.searchParams.get('until')!;
    const rangeRefused = (name: string) =>
      new RegExp(`^The catalog range's "${name}" is not valid: follow the url of a nested catalog entry \\(application/ai-catalog\\+json\\) unchanged, or leave the query out for the first page\\.$`);
    for (const [query, name] of [[`from=forged&until=${until}`, 'from'], [`from=${from}&until=forged`, 'until'], [`from=`, 'from'], [`from=${from}&until=${'a'.repeat(513)}`, 'until']] as const) {
      const refused = await getJson(`${big.url}/.well-known/ai-catalog.json?${query}`);
      assertArdError(refused, 400, 'INVALID_ARGUMENT', rangeRefused(name));
      assert.deepEqual(refused.body.details.map((d: WireJson) => [d.path, d.rule]), [[`/query/${name}`, 'page-token-invalid']], query);
    }
    assertArdError(await getJson(`${big.url}/.well-known/ai-catalog.json?until=${until}`), 400, 'INVALID_ARGUMENT', /^A catalog range is addressed by "from"/);
    assertArdError(await getJson(`${big.url}/.well-known/ai-catalog.json?from=${from}&from=${from}`), 400, 'INVALID_ARGUMENT', /^"from" is given more than once/);
    const mixed = await getJson(`${big.url}/.well-known/ai-catalog.json?page=2&after=${from}&from=${from}`);
    assertArdError(mixed, 400, 'INVALID_ARGUMENT', /^A catalog is addressed either by "from" \(and "until"\) or by "page" and "after", not both/);
    assert.deepEqual(mixed.body.details.map((d: WireJson) => d.path), ['/query/page']);
    const forgedRange = `urn:air:127.0.0.1:catalog:ai-catalog:range:${from}:forged`;
    assertArdError(await getJson(`${big.url}/agents/${encodeURIComponent(forgedRange)}`), 404, 'NOT_FOUND', /no catalog range/);

    // Deeper trees, as the catalog's 100 by 100 makes them past 10,100 entries, on this registry's
    // 606 with pages of 10 cut in at most 3 ranges: each range cut again, the depth logarithmic.
    const ranges: Array<{ pageToken?: string; until?: string; depth: number }> = [{ depth: 0 }];
    const listed: string[] = [];
    let deepest = 0;
    for (let node = ranges.pop(); node; node = ranges.pop()) {
      const { depth, ...bounds } = node;
      deepest = Math.max(deepest, depth);
      const page = await big.service.list({ pageSize: 10, split: 3, ...bounds }, caller);
      assert.ok(page.entries.length <= 10);
      listed.push(...page.entries.map((e) => urn('agent', e.id)));
      const starts = page.nextPageToken ? [page.nextPageToken, ...(page.parts ?? [])] : [];
      assert.ok(starts.length <= 3, `${starts.length} ranges`);
      starts.forEach((start, i) => ranges.push({ pageToken: start, depth: depth + 1, ...((starts[i + 1] ?? bounds.until) === undefined ? {} : { until: starts[i + 1] ?? bounds.until }) }));
    }
    assert.equal(listed.length, registered.size + 1, 'no entry twice');
    assert.deepEqual(new Set(listed), new Set([...registered, late]));
    // 606 = 10 + 3 ranges of 270 (10 + 3 of 90 (10 + 3 of 30 (10 + 2 of 10))), the last ones shorter.
    assert.equal(deepest, 4);

    const forged = pageIds[0]!.replace(/:[^:]+$/, ':forged');
    assertArdError(await getJson(`${big.url}/agents/${encodeURIComponent(forged)}`), 404, 'NOT_FOUND', /no catalog page/);
    assertArdError(await getJson(`${big.url}/.well-known/ai-catalog.json?page=2`), 400, 'INVALID_ARGUMENT', /"page" .* and "after" together/);
    // Both given, one of them wrong: each says which (they were told "page and after must come together", and no rule).
    const afterRefused = /^The catalog page's "after" is not valid: follow the url of the previous page's last entry \(application\/ai-catalog\+json\) unchanged, or leave page and after out for the first page\.$/;
    for (const [after, detail] of [['', 'it is empty'], ['a'.repeat(513), 'it is longer than 512 characters, which no page token is']]) {
      const outOfLimits = await getJson(`${big.url}/.well-known/ai-catalog.json?page=2&after=${after}`);
      assertArdError(outOfLimits, 400, 'INVALID_ARGUMENT', afterRefused);
      assert.deepEqual(outOfLimits.body.details, [{ path: '/query/after', message: `not a token this registry issued: ${detail}`, rule: 'page-token-invalid' }]);
    }
    for (const page of ['0', '1', 'abc', '2.0', '10000000']) {
      const badPage = await getJson(`${big.url}/.well-known/ard.json?page=${page}&after=x`);
      assertArdError(badPage, 400, 'INVALID_ARGUMENT', new RegExp(`^"page" is the number of a catalog page after the first: a whole number from 2 to 1000000, in digits \\(got "${page.replace('.', '\\.')}"\\)\\. Follow the url`));
      assert.deepEqual(badPage.body.details.map((d: WireJson) => [d.path, d.message]), [['/query/page', 'not 2..1000000']]);
    }
    assertArdError(await getJson(`${big.url}/.well-known/ai-catalog.json?page=2&page=3&after=x`), 400, 'INVALID_ARGUMENT', /^"page" is given more than once/);
    // In the catalog's words (it said "The pageToken is not valid: pass the nextPageToken ...",
    // names the catalog does not have), and the ARD list's (whose answers carry pageToken).
    const forgedAfter = await getJson(`${big.url}/.well-known/ai-catalog.json?page=2&after=forged`);
    assertArdError(forgedAfter, 400, 'INVALID_ARGUMENT', /^The catalog page's "after" is not valid: follow the url of the previous page's last entry \(application\/ai-catalog\+json\) unchanged, or leave page and after out for the first page\.$/);
    assert.deepEqual(forgedAfter.body.details.map((d: WireJson) => d.path), ['/query/after']);
    const ardMessage = /^The pageToken is not valid: send the pageToken of the previous answer unchanged, or leave it out for the first page\.$/;
    const forgedToken = await getJson(`${big.url}/agents?pageToken=forged`);
    assertArdError(forgedToken, 400, 'INVALID_ARGUMENT', ardMessage);
    assert.deepEqual(forgedToken.body.details.map((d: WireJson) => d.path), ['/query/pageToken']);
    // Well-formed and forged, or issued for another listing: at /query/pageToken too (it said /pageToken).
    const firstPage = await getJson(`${big.url}/agents?pageSize=1`);
    const signedForged = await getJson(`${big.url}/agents?pageToken=${encodeURIComponent(`${firstPage.body.pageToken.split('.')[0]}.forgedsignatureforgedsi`)}`);
    assertArdError(signedForged, 400, 'INVALID_ARGUMENT', ardMessage);
    assert.deepEqual(signedForged.body.details.map((d: WireJson) => d.path), ['/query/pageToken']);
    // A signature of other characters (an internal error: timingSafeEqual threw on their longer
    // UTF-8), and a token empty or longer than any issued (no rule): refused as any token not
    // issued, the last two saying which, as POST /search says it (their detail said only "not a position").
    for (const [pageToken, detail] of [
      [`${firstPage.body.pageToken.slice(0, -1)}é`, 'not a position this registry issued'],
      ['', 'not a token this registry issued: it is empty'],
      ['x'.repeat(3000), 'not a token this registry issued: it is longer than 2048 characters, which no page token is'],
    ] as const) {
      const unread = await getJson(`${big.url}/agents?pageToken=${encodeURIComponent(pageToken)}`);
      assertArdError(unread, 400, 'INVALID_ARGUMENT', ardMessage);
      assert.deepEqual(unread.body.details, [{ path: '/query/pageToken', message: detail, rule: 'page-token-invalid' }]);
    }
    const otherListing = await getJson(`${big.url}/agents?pageSize=1&filter=${encodeURIComponent('verified = false')}&pageToken=${encodeURIComponent(firstPage.body.pageToken)}`);
    assertArdError(otherListing, 400, 'INVALID_ARGUMENT', /^The pageToken belongs to another listing: send the same filter and orderBy as the request whose answer gave it \(pageSize may change\), or start again without pageToken\.$/);
    assert.deepEqual(otherListing.body.details.map((d: WireJson) => d.path), ['/query/pageToken']);
  });
});

describe('registered documents at stable URLs', () => {
  test('cards, MCP documents and Server Cards, with ETag, Last-Modified and 304', async () => {
    const cardUrl = `${registry.url}/agents/${ids.invoice}/card.json`;
    const res = await get(cardUrl);
    assert.equal(res.headers.get('content-type'), 'application/a2a-agent-card+json; charset=utf-8');
    assert.deepEqual(await res.json(), v1Card());
    const etag = res.headers.get('etag')!;
    assert.equal(res.headers.get('cache-control'), 'public, max-age=60');
    assert.ok(res.headers.get('last-modified'));
    assert.equal((await get(cardUrl, { 'if-none-match': etag })).status, 304);
    assert.equal((await get(cardUrl, { 'if-modified-since': res.headers.get('last-modified')! })).status, 304);
    // Only an HTTP-date counts (RFC 9110 13.1.3: anything else is ignored); its obsolete asctime form, in GMT, too.
    assert.equal((await get(cardUrl, { 'if-modified-since': '2099-01-01' })).status, 200, 'no HTTP-date: ignored, not a 304');
    const asctime = new Date(res.headers.get('last-modified')!).toUTCString().replace(/^(\w{3}), (\d{2}) (\w{3}) (\d{4}) (\S+) GMT$/, (_, day, date, month, year, time) => `${day} ${month} ${date.replace(/^0/, ' ')} ${time} ${year}`);
    assert.equal((await get(cardUrl, { 'if-modified-since': asctime })).status, 304, asctime);
    // A revision dated ahead of this clock (written while it stood behind another replica's, or before
    // it stepped back): Last-Modified is never later than the answer's own Date (RFC 9110 8.8.2.1: MUST).
    const ahead = resultOf(await op(writer, { register: { agentCard: v1Card('Ahead Agent', 'https://ahead.example.org/a2a') } })).id as string;
    try {
      const db = new Database(path.join(registry.dataDir, 'registry.db'));
      const anHourAhead = new Date(Date.now() + 3_600_000).toISOString();
      db.prepare('UPDATE entries SET updated_at = ? WHERE id = ?').run(anHourAhead, ahead);
      db.prepare('UPDATE entry_revisions SET created_at = ? WHERE entry_id = ?').run(anHourAhead, ahead);
      db.close();
      const served = await get(`${registry.url}/agents/${ahead}/card.json`);
      assert.equal(served.status, 200);
      assert.ok(Date.parse(served.headers.get('last-modified')!) <= Date.parse(served.headers.get('date')!), `Last-Modified ${served.headers.get('last-modified')}, Date ${served.headers.get('date')}`);
    } finally {
      resultOf(await op(writer, { unregister: { id: ahead } }));
    }
    // If-Match and If-Unmodified-Since (a client resuming or checking its copy): 412 when they fail, never another body (RFC 9110 13.1.1, 13.1.4).
    assert.equal((await get(cardUrl, { 'if-match': etag })).status, 200);
    assert.equal((await get(cardUrl, { 'if-match': `"other", ${etag}` })).status, 200);
    const stale = await get(cardUrl, { 'if-match': '"an-older-etag"' });
    assert.equal(stale.status, 412);
    assert.equal(stale.headers.get('cache-control'), 'no-store', 'a refusal no cache keeps for the URL');
    const refusal = (await stale.json()) as WireJson;
    assert.deepEqual([refusal.errorCode, refusal.registryCode], ['INVALID_ARGUMENT', 'PRECONDITION_FAILED']);
    assert.match(refusal.message, new RegExp(`is no longer the one If-Match names: it is now ETag ${etag}\\.`));
    assert.equal((await get(cardUrl, { 'if-match': `W/${etag}` })).status, 412, 'If-Match compares strongly');
    assert.equal((await get(cardUrl, { 'if-unmodified-since': res.headers.get('last-modified')! })).status, 200);
    assert.equal((await get(cardUrl, { 'if-unmodified-since': 'Mon, 01 Jan 2024 00:00:00 GMT' })).status, 412);
    const head = await fetch(cardUrl, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('etag'), etag);
    assert.equal(head.headers.get('content-length'), res.headers.get('content-length'), 'HEAD gives the size GET does');
    const revision = await get(`${cardUrl}?revision=1`);
    assert.equal(revision.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(revision.headers.get('etag'), etag);

    // An update changes the document and its ETag at the same URL.
    const updated = { ...v1Card(), description: 'Now also reads receipts.' };
    resultOf(await op(writer, { register: { agentCard: updated } }));
    const after = await get(cardUrl, { 'if-none-match': etag });
    assert.equal(after.status, 200);
    assert.deepEqual(await after.json(), updated);
    assert.deepEqual(await (await get(`${cardUrl}?revision=1`)).json(), v1Card(), 'older revisions stay at their URL');

    const doc = await get(`${registry.url}/mcp-servers/${ids.files}/document.json`);
    assert.equal(doc.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.deepEqual(await doc.json(), { mcpServer: mcpServer(), toolspec: toolspec() });
    const card = await getJson(`${registry.url}/mcp-servers/${ids.files}/server-card.json`);
    assert.equal(card.res.headers.get('content-type'), 'application/mcp-server-card+json; charset=utf-8');
    assertShape(serverCardSchema, card.body, 'the Server Card');
    assert.deepEqual(card.body, {
      $schema: 'https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json',
      name: 'org.example.mcp/files',
      version: '1.0.0',
      description: 'Reads and writes files in a workspace.',
      title: 'files',
      remotes: [{ type: 'streamable-http', url: 'https://mcp.example.org/files/mcp' }],
    });

    assertArdError(await getJson(`${registry.url}/agents/${ids.files}/card.json`), 404, 'NOT_FOUND', new RegExp(`MCP server; its document is at ${registry.url}/mcp-servers/${ids.files}/document.json`));
    assertArdError(await getJson(`${registry.url}/mcp-servers/${ids.invoice}/document.json`), 404, 'NOT_FOUND', /an agent/);
    assertArdError(await getJson(`${registry.url}/agents/nope/card.json`), 404, 'NOT_FOUND');
    // A query value that is not valid percent-encoded UTF-8 is refused naming it, as on the A2A
    // doors: it was read as U+FFFD, and the refusal said it got "\uFFFD", which was never sent.
    for (const url of [`${cardUrl}?revision=%ff`, `${registry.url}/agents?filter=%ff`, `${registry.url}/.well-known/ai-catalog.json?page=2&after=%E2%82`]) {
      const field = /\?(?:page=2&)?(\w+)=/.exec(url)![1]!;
      const undecodable = await getJson(url);
      assertArdError(undecodable, 400, 'INVALID_ARGUMENT', new RegExp(`^The query parameter ${field} is not valid percent-encoded UTF-8: encode its value as UTF-8 bytes, each byte outside A-Z, a-z, 0-9 and -\\._~ as %XX\\.$`));
      assert.deepEqual(undecodable.body.details, [{ path: `/query/${field}`, message: 'not valid percent-encoded UTF-8' }], url);
    }
    // A path of the door no route takes is told the door's paths (it was pointed at the A2A endpoints).
    for (const path of [`/agents/${ids.invoice}/other.json`, `/mcp-servers/${ids.files}`]) {
      const missing = await getJson(`${registry.url}${path}`);
      assertArdError(missing, 404, 'NOT_FOUND', /^No route GET \/[^ ]+\. The discovery paths are GET \/\.well-known\/ai-catalog\.json, .*\/mcp-servers\/\{id\}\/server-card\.json, and POST \/search\.$/);
    }
    // A revision is refused in get's words on every door, saying what was sent; a number of ten
    // digits is a revision the entry does not have, as get says (this door said "revision must be a
    // positive whole number.").
    assertArdError(await getJson(`${cardUrl}?revision=x`), 400, 'INVALID_ARGUMENT', /^"revision" must be a whole number of 1 or more; got the string "x"\.$/);
    const zero = await getJson(`${cardUrl}?revision=0`);
    assertArdError(zero, 400, 'INVALID_ARGUMENT');
    assert.equal(zero.body.message, `${errorOf(await op(writer, { get: { id: ids.invoice, revision: 0 } })).details[0].message}.`);
    assert.deepEqual(zero.body.details, [{ path: '/query/revision', message: '"revision" must be a whole number of 1 or more; got the number 0' }]);
    assertArdError(await getJson(`${cardUrl}?revision=1234567890`), 404, 'NOT_FOUND', new RegExp(`^Entry "${ids.invoice}" has no revision 1234567890: its current revision is \\d+\\.$`));
    assertArdError(await getJson(`${registry.url}/agents/${ids.invoice}/other.json`), 404, 'NOT_FOUND', /No route/);
  });

  test('a Server Card keeps text in any script whole: limits counted in characters, never half an emoji', async () => {
    // 98 weather emoji (196 UTF-16 units) fit the draft's 100-character description; 150 do not,
    // and are cut to 99 characters and an ellipsis, not to half a surrogate pair.
    const fits = `天气 ${'🌤'.repeat(95)}`;
    const long = '🌤'.repeat(150);
    const doc = (description: string, url: string) => ({ mcpServer: { ...mcpServer('Météo Čeština', url), description }, toolspec: toolspec() });
    const fitsId = resultOf(await op(writer, { register: doc(fits, 'https://mcp.example.org/meteo/mcp') })).id;
    const longId = resultOf(await op(writer, { register: doc(long, 'https://mcp.example.org/meteo-long/mcp') })).id;
    const card = (await getJson(`${registry.url}/mcp-servers/${fitsId}/server-card.json`)).body;
    assertShape(serverCardSchema, card, 'the Server Card');
    assert.equal(card.description, fits);
    // Accents folded as search folds them ("m-t-o" before), so the name says what the server is called.
    assert.equal(card.name, 'org.example.mcp/meteo-cestina');
    assert.equal(card.title, 'Météo Čeština');
    const cut = (await getJson(`${registry.url}/mcp-servers/${longId}/server-card.json`)).body;
    assertShape(serverCardSchema, cut, 'the Server Card');
    assert.equal(cut.description, `${'🌤'.repeat(99)}…`);
    // A name in another script is its ASCII (IDNA) form, which reads back as the name (it was "server", for every such name).
    const chineseId = resultOf(await op(writer, { register: { mcpServer: mcpServer('天气服务 🌤', 'https://mcp.example.org/tianqi/mcp'), toolspec: toolspec() } })).id;
    const chinese = (await getJson(`${registry.url}/mcp-servers/${chineseId}/server-card.json`)).body;
    assertShape(serverCardSchema, chinese, 'the Server Card');
    assert.equal(chinese.name, 'org.example.mcp/xn--zfrv5m22mc1e');
    assert.equal(domainToUnicode(chinese.name.split('/')[1]), '天气服务');
    // Words in other scripts stand between dots, as labels of a host name do, so each decodes (joined
    // by "-", "xn--a-xn--b" decoded as neither); a long name is cut between words, with a hash of the
    // whole name, so two names alike up to the cut stay two names (they were cut at 100 characters,
    // mid-label, into one name).
    const nameOf = async (name: string, path: string) => {
      const id = resultOf(await op(writer, { register: { mcpServer: mcpServer(name, `https://mcp.example.org/${path}/mcp`), toolspec: toolspec() } })).id;
      const body = (await getJson(`${registry.url}/mcp-servers/${id}/server-card.json`)).body;
      assertShape(serverCardSchema, body, 'the Server Card');
      resultOf(await op(writer, { unregister: { id } }));
      return body.name.split('/')[1] as string;
    };
    const mixed = await nameOf('Météo 天气 服务', 'mixed');
    assert.equal(mixed, 'meteo.xn--rss235b.xn--zfr188b');
    assert.equal(domainToUnicode(mixed), 'meteo.天气.服务');
    const longName = `天气服务 ${'forecast '.repeat(12)}`;
    const [first, second] = [await nameOf(`${longName}甲`, 'long-1'), await nameOf(`${longName}乙`, 'long-2')];
    assert.notEqual(first, second);
    for (const local of [first, second]) {
      assert.ok(local.length <= 100, local);
      assert.match(domainToUnicode(local), /^天气服务\.forecast(-forecast)+\.[0-9a-f]{8}$/, local);
    }
    // The file's other tests count the MCP servers registered here.
    for (const id of [fitsId, longId, chineseId]) resultOf(await op(writer, { unregister: { id } }));
  });

  test("the registry's own MCP Server Card leads an MCP client to its endpoint", async () => {
    const { res, body } = await getJson(`${registry.url}/mcp/server-card`);
    assert.equal(res.status, 200);
    assertShape(serverCardSchema, body, 'the registry Server Card');
    assert.equal(body.remotes[0].url, `${registry.url}/mcp`);
    assert.ok(body.remotes[0].supportedProtocolVersions.includes('2025-06-18'));
    const client = new Client({ name: 'card-follower', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(body.remotes[0].url)));
    try {
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'search_agents'));
    } finally {
      await client.close();
    }
  });
});

describe('ARD API', () => {
  test('POST /search: ARD results, one per entry, scores 0–100 relative to the best hit, stable across pages', async () => {
    const whole = await post(`${registry.url}/search`, { query: { text: 'invoice' }, pageSize: 100 });
    assert.equal(whole.res.status, 200);
    assert.equal(whole.res.headers.get('cache-control'), 'no-store');
    assertShape(ardSearchResponseSchema, whole.body, 'the search answer');
    const results: WireJson[] = whole.body.results;
    // The invoice agent is a best hit (100); other tests of the file register agents with its
    // skills, which tie with it, newest registered first.
    assert.equal(results.find((r) => r.identifier === urn('agent', ids.invoice))?.score, 100);
    assert.equal(results[0].score, 100);
    assert.ok(results.every((r) => r.source === `${registry.url}/`));
    assert.equal(new Set(results.map((r) => r.identifier)).size, results.length, 'one result per entry');
    assert.ok(results.every((r, i) => i === 0 || r.score <= results[i - 1]!.score));

    const a2a = resultOf(await op(writer, { search: { query: 'invoice', limit: 100 } }));
    const best = a2a.results[0].score;
    for (const r of results) {
      const hit = a2a.results.find((h: WireJson) => h.id === r.metadata.registryId);
      assert.equal(r.score, Math.round((100 * hit.score) / best), 'round(100 × score / best score of the query)');
    }

    // Paged one at a time, every result keeps its score.
    const paged: WireJson[] = [];
    let pageToken: string | undefined;
    do {
      const page = await post(`${registry.url}/search`, { query: { text: 'invoice' }, pageSize: 1, ...(pageToken ? { pageToken } : {}) });
      assertShape(ardSearchResponseSchema, page.body, 'a page');
      paged.push(...page.body.results);
      pageToken = page.body.pageToken;
    } while (pageToken);
    for (const r of results) assert.equal(paged.find((p) => p.identifier === r.identifier)?.score, r.score);
    // A token sent with another query is refused in ARD's words (it named limit and resultsPer, A2A's fields).
    const first = await post(`${registry.url}/search`, { query: { text: 'invoice' }, pageSize: 1 });
    const other = await post(`${registry.url}/search`, { query: { text: 'invoice' }, pageSize: 2, pageToken: first.body.pageToken });
    assertArdError(other, 400, 'INVALID_ARGUMENT', /^The pageToken belongs to another search: send the same query \(text and filter\) and pageSize .* or start again without pageToken\.$/);
    // A token of the other route says whose it is, as A2A's and MCP's do (each was told it was not issued).
    const listed = await getJson(`${registry.url}/agents?pageSize=1`);
    const listToSearch = await post(`${registry.url}/search`, { query: { text: 'invoice' }, pageSize: 1, pageToken: listed.body.pageToken });
    assertArdError(listToSearch, 400, 'INVALID_ARGUMENT', /^The pageToken is a listing's \(GET \/agents\), not POST \/search's: send it with the listing whose answer gave it, or start again without pageToken/);
    assert.deepEqual(listToSearch.body.details, [{ path: '/pageToken', message: 'issued by list', rule: 'page-token-other-operation' }]);
    const searchToList = await getJson(`${registry.url}/agents?pageSize=1&pageToken=${encodeURIComponent(first.body.pageToken)}`);
    assertArdError(searchToList, 400, 'INVALID_ARGUMENT', /^The pageToken is a search's \(POST \/search\), not GET \/agents': send it with the search whose answer gave it, or start again without pageToken/);
    assert.deepEqual(searchToList.body.details, [{ path: '/query/pageToken', message: 'issued by search', rule: 'page-token-other-operation' }]);
    // The registry's own search token (A2A's nextPageToken) too, in this route's words at its parameter (A2A's, at /pageToken).
    const a2aSearched = resultOf(await op(writer, { search: { query: 'invoice', limit: 1 } }));
    assert.deepEqual((await getJson(`${registry.url}/agents?pageToken=${encodeURIComponent(a2aSearched.nextPageToken)}`)).body.details, searchToList.body.details);
    // Sent to POST /search, it is told it is A2A's, not this route's (it was told it was not valid).
    const a2aToSearch = await post(`${registry.url}/search`, { query: { text: 'invoice' }, pageSize: 1, pageToken: a2aSearched.nextPageToken });
    assertArdError(a2aToSearch, 400, 'INVALID_ARGUMENT', /^The pageToken is the nextPageToken of an A2A search \(or an MCP search tool's\), not a pageToken of POST \/search, .*send this search without pageToken for its first page/);
    assert.deepEqual(a2aToSearch.body.details, [{ path: '/pageToken', message: "an A2A or MCP search's nextPageToken, not POST /search's", rule: 'page-token-invalid' }]);
    // Altered anywhere, a token is refused as not issued: the first page's best score beside the
    // registry's token was not signed, and 0, -5 or 1e308 was taken and changed the later pages'
    // scores; a space or newline added was skipped by base64url decoding, and the token read.
    const [payload, ...signature] = first.body.pageToken.split('.');
    const cursor = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const withBest = (b: number) => [Buffer.from(JSON.stringify({ ...cursor, b })).toString('base64url'), ...signature].join('.');
    for (const pageToken of [withBest(0), withBest(-5), withBest(1e308), ` ${first.body.pageToken}`, `${first.body.pageToken} `, `${first.body.pageToken}\n`]) {
      const altered = await post(`${registry.url}/search`, { query: { text: 'invoice' }, pageSize: 1, pageToken });
      assertArdError(altered, 400, 'INVALID_ARGUMENT', /^The pageToken is not valid: send the pageToken of the previous answer unchanged, or leave it out for the first page\.$/);
      assert.deepEqual(altered.body.details, [{ path: '/pageToken', message: 'not a position this registry issued', rule: 'page-token-invalid' }], JSON.stringify(pageToken));
    }
    // Unaltered, it goes on (the whole of it signed, still well within ARD's 2,048 characters).
    assert.equal((await post(`${registry.url}/search`, { query: { text: 'invoice' }, pageSize: 1, pageToken: first.body.pageToken })).res.status, 200);
  });

  test('POST /search filters: type, tags, publisher; federation modes', async () => {
    const mcp = await post(`${registry.url}/search`, { query: { text: 'file', filter: { type: ['application/mcp-server-card+json'] } }, federation: 'none', pageSize: 2 });
    assertShape(ardSearchResponseSchema, mcp.body, 'the answer');
    assert.deepEqual(mcp.body.results.map((r: WireJson) => r.identifier), [urn('mcp-server', ids.files)]);
    assert.equal(mcp.body.results[0].url, `${registry.url}/mcp-servers/${ids.files}/server-card.json`);
    assert.ok(mcp.body.results[0].capabilities.length === 1, 'the tool that matched');

    const tagged = await post(`${registry.url}/search`, { query: { text: 'forecast invoice', filter: { tags: 'weather' } } });
    assert.deepEqual(tagged.body.results.map((r: WireJson) => r.identifier), [urn('agent', ids.weather)], 'a bare scalar is a one-element list');
    // Spellings of one tag (case, spaces, dashes, underscores, words joined in camelCase or written
    // as one aside) are one tag of the entry, in the spelling most of its skills use, as the tags
    // filter finds any of them by any other.
    const card = v1Card('Model Agent', 'https://models.example.org/a2a');
    const spelt = ['Machine Learning', 'machine-learning', 'machine_learning', 'machine-learning', 'MachineLearning', 'machinelearning'];
    const runtime = ['Node.js', 'node-js'];
    card.skills = spelt.map((tag, i) => ({ ...card.skills[0]!, id: `train-${i}`, tags: [tag, i === 3 ? 'Vision' : 'vision', ...(runtime[i] ? [runtime[i]] : [])] }));
    const model = resultOf(await op(writer, { register: { agentCard: card } })).id;
    try {
      const entry = await getJson(`${registry.url}/agents/${model}`);
      assert.deepEqual(entry.body.tags, ['machine-learning', 'vision', 'Node.js'], 'Node.js and node-js: one tag, as tags:node-js reads both');
      const found = await post(`${registry.url}/search`, { query: { text: 'invoice', filter: { tags: ['MACHINE LEARNING'] } } });
      assert.deepEqual(found.body.results.map((r: WireJson) => r.identifier), [urn('agent', model)]);
      // The skills A2A search finds: every spelling, by any of them.
      const skills = async (filter: Record<string, unknown>) => {
        const [hit] = resultOf(await op(writer, { search: { query: 'invoice', filter } })).results;
        return [hit.match, ...(hit.matches ?? [])].map((m: WireJson) => m.id).sort();
      };
      const learning = ['train-0', 'train-1', 'train-2', 'train-3', 'train-4', 'train-5'];
      assert.deepEqual(await skills({ tags: ['MachineLearning'] }), learning);
      assert.deepEqual(await skills({ tags: ['machine_learning'] }), learning);
      assert.deepEqual(await skills({ tags: ['machinelearning'] }), learning);
    } finally {
      await op(writer, { unregister: { id: model } });
    }
    // capabilities (ARD 4.2: skill ids, tool names, as the catalog entries list them): any of the
    // values, exactly; the same filter on A2A search, with text or without. It was refused as unsupported.
    const capable = (text: string, capabilities: unknown) => post(`${registry.url}/search`, { query: { text, filter: { capabilities } } });
    const found = async (text: string, capabilities: unknown) => (await capable(text, capabilities)).body.results.map((r: WireJson) => r.identifier).sort();
    const a2aFound = async (search: Record<string, unknown>) => resultOf(await op(writer, { search })).results.map((h: WireJson) => h.id).sort();
    // Other tests of the file register more agents with the invoice agent's skills: compared with A2A, and by inclusion.
    const both = await found('invoice file forecast', ['write_file', 'check-vat']);
    assert.ok(both.includes(urn('agent', ids.invoice)) && both.includes(urn('mcp-server', ids.files)) && !both.includes(urn('agent', ids.weather)), JSON.stringify(both));
    const sameOnA2A = await a2aFound({ query: 'invoice file forecast', filter: { capabilities: ['write_file', 'check-vat'] } });
    assert.deepEqual(both, sameOnA2A.map((id: string) => `urn:air:127.0.0.1:${id === ids.files ? 'mcp-server' : 'agent'}:${id}`).sort(), 'as A2A search finds them');
    const scalar = await found('invoice', 'check-vat');
    assert.ok(scalar.includes(urn('agent', ids.invoice)) && !scalar.includes(urn('mcp-server', ids.files)), 'a bare scalar is a one-element list');
    for (const none of ['Check VAT', 'check', 'write', 'Write_File', 'invoice']) assert.deepEqual(await found('invoice file', [none]), [], `"${none}" is no capability`);
    assert.deepEqual(await a2aFound({ query: 'invoice file', filter: { capabilities: ['write_file'] } }), [ids.files]);
    assert.deepEqual(await a2aFound({ filter: { capabilities: ['forecast', 'read_file'] } }), [ids.weather, ids.files].sort(), 'listed by filter alone');
    assertArdError(await capable('x', 'check-vat,write_file'), 400, 'INVALID_ARGUMENT', /\/query\/filter\/capabilities: .*as an array, \["check-vat","write_file"\]/);
    // Names that differ in case only are two capabilities (the filter tells them apart, as MCP and
    // A2A do): the entry lists both. It dropped "read_FILE", which the filter still found it by.
    const cased = toolspec();
    cased.tools[1]!.name = 'read_FILE';
    const casedId = resultOf(await op(writer, { register: { mcpServer: mcpServer('cased', 'https://mcp.example.org/cased/mcp'), toolspec: cased } })).id;
    try {
      assert.deepEqual((await getJson(`${registry.url}/agents/${casedId}`)).body.capabilities, ['read_file', 'read_FILE']);
      assert.deepEqual(await found('file', ['read_FILE']), [urn('mcp-server', casedId)]);
    } finally {
      await op(writer, { unregister: { id: casedId } });
    }
    const readOnly = await post(`${registry.url}/search`, { query: { text: 'file', filter: { readOnly: ['true'] } } });
    assert.deepEqual(readOnly.body.results.map((r: WireJson) => r.metadata.matchedName), ['read_file']);
    const elsewhere = await post(`${registry.url}/search`, { query: { text: 'invoice', filter: { publisher: ['other.example'] } } });
    assert.deepEqual(elsewhere.body, { results: [] });
    // A type no entry here has is refused (below), as the other doors refuse an unknown kind.
    const parquet = await post(`${registry.url}/search`, { query: { text: 'invoice', filter: { type: 'application/parquet' } } });
    assertArdError(parquet, 400, 'INVALID_ARGUMENT', /\/query\/filter\/type: "application\/parquet" is not a media type this registry lists/);
    const referrals = await post(`${registry.url}/search`, { query: { text: 'invoice' }, federation: 'referrals' });
    assert.deepEqual(referrals.body.referrals, []);
  });

  test('POST /search errors as ARD names them', async () => {
    const search = (body: unknown) => post(`${registry.url}/search`, body);
    assertArdError(await search({ query: {} }), 400, 'INVALID_ARGUMENT', /\/query\/text/);
    assertArdError(await search({ query: { text: '  ' } }), 400, 'INVALID_ARGUMENT', /query\.text is required/);
    assertArdError(await search({ query: { text: 'x' }, pageSize: 101 }), 400, 'INVALID_ARGUMENT', /pageSize/);
    // Past the safe-integer range: the documented bound, once (zod's int range was said beside it).
    const huge = await search({ query: { text: 'x' }, pageSize: 1e300 });
    assertArdError(huge, 400, 'INVALID_ARGUMENT', /^The search request is not valid: \/pageSize: "pageSize" must be a whole number from 1 to 100; got the number 1e\+300\.$/);
    assert.deepEqual(huge.body.details, [{ path: '/pageSize', message: '"pageSize" must be a whole number from 1 to 100; got the number 1e+300' }]);
    assertArdError(await search({ query: { text: 'x' }, limit: 5 }), 400, 'INVALID_ARGUMENT', /limit/);
    // With the hints the A2A door gives for the same mistakes (this door said only what was wrong).
    const limited = await search({ query: { text: 'x' }, limit: 5 });
    assert.match(limited.body.message, /^The search request is not valid: \/: Unrecognized key: "limit" \(Accepted keys here: query, federation, pageSize, pageToken\)\.$/);
    assert.equal(limited.body.details[0].hint, 'Accepted keys here: query, federation, pageSize, pageToken.');
    assertArdError(await search({ query: { text: 'x', txt: 1 } }), 400, 'INVALID_ARGUMENT', /\/query: Unrecognized key: "txt" \(Accepted keys here: @context, text, filter\)/);
    const quoted = await search({ query: { text: 'x' }, pageSize: '5' });
    assertArdError(quoted, 400, 'INVALID_ARGUMENT', /\/pageSize: .* \(Write 5 without quotes\)\.$/);
    assert.equal(quoted.body.details[0].hint, 'Write 5 without quotes.');
    assertArdError(await search({ query: { text: 'x', filter: { 'trustManifest.attestations.type': ['SOC2'] } } }), 400, 'INVALID_ARGUMENT', /not supported here\. Supported: type/);
    assertArdError(await search({ query: { text: 'x', filter: { protocolBinding: ['JSONRPC', 'GRPC'] } } }), 400, 'INVALID_ARGUMENT', /one value/);
    // A token that does not decode (no cursor of this door, or one whose registry token is made up) has
    // the detail of every token not issued (this door's own refusal had no rule, the other A2A's words).
    const wrapped = (t: string) => Buffer.from(JSON.stringify({ t, b: 1 })).toString('base64url');
    for (const pageToken of ['bm9wZQ', wrapped('garbage'), wrapped(`eyJwIjoxfQ.${'a'.repeat(21)}é`)]) {
      const undecodable = await search({ query: { text: 'x' }, pageToken });
      assertArdError(undecodable, 400, 'INVALID_ARGUMENT', /^The pageToken is not valid: send the pageToken of the previous answer unchanged, or leave it out for the first page\.$/);
      assert.deepEqual(undecodable.body.details, [{ path: '/pageToken', message: 'not a position this registry issued', rule: 'page-token-invalid' }], pageToken);
    }
    // One empty or past the schema's 2,048 characters too, saying which (it was "Too small", without the rule).
    for (const [pageToken, why] of [['', 'it is empty'], ['a'.repeat(2049), 'it is longer than 2048 characters, which no page token is']]) {
      const outOfLimits = await search({ query: { text: 'x' }, pageToken });
      assertArdError(outOfLimits, 400, 'INVALID_ARGUMENT', /^The pageToken is not valid: send the pageToken of the previous answer unchanged, or leave it out for the first page\.$/);
      assert.deepEqual(outOfLimits.body.details, [{ path: '/pageToken', message: `not a token this registry issued: ${why}`, rule: 'page-token-invalid' }]);
    }
    assertArdError(await search({ query: { text: 'x'.repeat(1001) } }), 400, 'INVALID_ARGUMENT', /REGISTRY_MAX_QUERY_CHARS/);
    // A body over REGISTRY_MAX_BODY_BYTES (64 KB here) is told what a search holds, naming the
    // limits: it was told about "Documents", which no search carries.
    const oversized = await search({ query: { text: 'x' }, pad: 'x'.repeat(70_000) });
    assertArdError(oversized, 413, 'INVALID_ARGUMENT', /^The request body is 700\d\d bytes; the limit is 65536 bytes \(REGISTRY_MAX_BODY_BYTES\)\. A search request is far smaller: its query\.text takes at most 1000 characters \(REGISTRY_MAX_QUERY_CHARS\) and each filter key at most 20 values of 200 characters: send the search request alone\.$/);
    assert.equal(oversized.body.registryCode, 'REQUEST_TOO_LARGE');
    assertArdError(await search('{"query": '), 400, 'INVALID_ARGUMENT', /not valid JSON/);
    // JSON that is no object is shown this door's request (it was shown an A2A JSON-RPC SendMessage).
    const notAnObject = await search('"translate invoices"');
    assertArdError(notAnObject, 400, 'INVALID_ARGUMENT', /^The request body is valid JSON but a string, not an object: send one JSON object \(POST \/search takes \{"query": \{"text": "translate invoices"\}, "pageSize": 10\}\)\.$/);
    // The registry's code for a request of the wrong shape, as an array body gets (it was JSON-RPC's INVALID_REQUEST).
    assert.equal(notAnObject.body.registryCode, 'BAD_REQUEST');
    assert.equal((await search('[]')).body.registryCode, 'BAD_REQUEST');
    // curl -d without -H 'content-type: application/json' sends a form: the body was never read,
    // and the answer said "/query: expected object, received undefined".
    const asForm = async (headers: Record<string, string>) => {
      const res = await fetch(`${registry.url}/search`, { method: 'POST', headers, body: JSON.stringify({ query: { text: 'invoice' } }) });
      return { res, body: (await res.json()) as WireJson };
    };
    const form = await asForm({ 'content-type': 'application/x-www-form-urlencoded' });
    assertArdError(form, 415, 'INVALID_ARGUMENT', /application\/x-www-form-urlencoded; POST \/search reads JSON: send Content-Type: application\/json/);
    // Every 415 of the door has one shape, and the registryCode the A2A HTTP+JSON door gives the
    // same body (the media type's was UNSUPPORTED_MEDIA_TYPE, the charset's CONTENT_TYPE_NOT_SUPPORTED).
    assert.equal(form.body.registryCode, 'CONTENT_TYPE_NOT_SUPPORTED');
    const plain = await asForm({ 'content-type': 'text/plain' });
    assertArdError(plain, 415, 'INVALID_ARGUMENT', /text\/plain/);
    assert.equal(plain.body.registryCode, 'CONTENT_TYPE_NOT_SUPPORTED');
    const latin1 = await asForm({ 'content-type': 'application/json; charset=latin1' });
    assertArdError(latin1, 415, 'INVALID_ARGUMENT', /charset=latin1; JSON requests are read as UTF-8 only/);
    assert.equal(latin1.body.registryCode, 'CONTENT_TYPE_NOT_SUPPORTED');
    const compressed = await asForm({ 'content-type': 'application/json', 'content-encoding': 'compress' });
    assertArdError(compressed, 415, 'INVALID_ARGUMENT', /Content-Encoding: compress, which the registry does not decode/);
    assert.equal(compressed.body.registryCode, 'UNSUPPORTED_ENCODING');
    for (const refused of [form, plain, latin1, compressed]) assert.deepEqual(Object.keys(refused.body).sort(), ['errorCode', 'message', 'registryCode']);
    assert.equal((await asForm({ 'content-type': 'application/ard+json' })).res.status, 200, 'a +json type is JSON');
    // No body (fetch sends Content-Length: 0 and no Content-Type): told what the search needs, not that its body has no type.
    const bodiless = await fetch(`${registry.url}/search`, { method: 'POST' });
    assertArdError({ res: bodiless, body: (await bodiless.json()) as WireJson }, 400, 'INVALID_ARGUMENT', /"query" is required: give an object/);
    // Refused unread: a body without end is not drained, the connection closes.
    assert.match(await refusedUnread('/search', 'text/plain'), /^HTTP\/1\.1 415 [^]*\r\nconnection: close\r\n/i);
    const details = (await search({ query: {} })).body.details;
    assert.equal(details[0].path, '/query/text');
    const explore = await post(`${registry.url}/explore`, { resultType: { facets: [{ field: 'type' }] } });
    assertArdError(explore, 501, 'UNIMPLEMENTED');
    // It reads no body, and drains none: a body without end was read until the request timeout.
    assert.match(await refusedUnread('/explore', 'application/json'), /^HTTP\/1\.1 501 [^]*\r\nconnection: close\r\n/i);
  });

  const searchFiltered = (filter: unknown) => post(`${registry.url}/search`, { query: { text: 'x', filter } });

  test('POST /search takes at most 20 values per filter key, as A2A search does, and says so', async () => {
    const search = searchFiltered;
    const tags = (n: number) => Array.from({ length: n }, (_, i) => `tag${i}`);
    // The README's "at most 20 values per filter", the limit of A2A search (and MCP search_agents).
    assert.equal((await search({ tags: tags(20) })).res.status, 200);
    assert.equal(resultOf(await op(writer, { search: { query: 'x', filter: { tags: tags(20) } } })).total, 0);
    for (const n of [21, 33]) {
      const over = await search({ tags: tags(n) });
      assertArdError(over, 400, 'INVALID_ARGUMENT', /\/query\/filter\/tags: at most 20 values/);
      assert.deepEqual(over.body.details.map((d: WireJson) => [d.path, d.message]), [['/query/filter/tags', 'at most 20 values']]);
    }
    assert.equal(errorOf(await op(writer, { search: { query: 'x', filter: { tags: tags(21) } } })).code, 'BAD_REQUEST', 'A2A refuses the 21st value too');
  });

  test('POST /search takes filter values as long as A2A search does, and refuses a longer one rather than cutting it short', async () => {
    const search = searchFiltered;
    const tag = (n: number) => 't'.repeat(n);
    // 200 characters a value, as A2A search (it took 256 here, and cut one-value keys at 200).
    assert.equal((await search({ tags: [tag(200)] })).res.status, 200);
    assert.equal(resultOf(await op(writer, { search: { query: 'x', filter: { tags: [tag(200)] } } })).total, 0);
    assertArdError(await search({ tags: ['weather', tag(201)] }), 400, 'INVALID_ARGUMENT', /\/query\/filter\/tags\/1: at most 200 characters/);
    assert.equal(errorOf(await op(writer, { search: { query: 'x', filter: { tags: [tag(201)] } } })).code, 'BAD_REQUEST', 'A2A refuses it too');
    // A key's own limit, from the search's schema: a protocol version is a short string.
    const version = await search({ protocolVersion: '1.0'.padEnd(21, '0') });
    assertArdError(version, 400, 'INVALID_ARGUMENT', /\/query\/filter\/protocolVersion: "protocolVersion" must be a string of 1 to 20 characters; got one longer/);
    assert.deepEqual(version.body.details.map((d: WireJson) => d.path), ['/query/filter/protocolVersion']);
    assert.equal(errorOf(await op(writer, { search: { query: 'x', filter: { protocolVersion: '1.0'.padEnd(21, '0') } } })).code, 'BAD_REQUEST', 'A2A refuses it too');
    assertArdError(await search({ owner: `o${tag(230)}` }), 400, 'INVALID_ARGUMENT', /\/query\/filter\/owner: at most 200 characters/);
  });

  test('POST /search names any unsupported filter key whatever its value; a supported key with a wrong value says what it takes', async () => {
    const search = searchFiltered;
    // Whatever the value of an unsupported key, the answer lists the supported ones.
    for (const filter of [{ bogus: 1 }, { bogus: '1' }, { bogus: null }, { bogus: { a: 1 } }, { bogus: 1, tags: 3 }]) {
      const answer = await search(filter);
      assertArdError(answer, 400, 'INVALID_ARGUMENT', /Filter key\(s\) "bogus" are not supported here\. Supported: type .*verified/);
      assert.deepEqual(answer.body.details.map((d: WireJson) => d.path), ['/query/filter/bogus'], JSON.stringify(filter));
    }
    // Names an object has by inheritance are keys like any other (they passed as supported, then
    // "constructor" got "Unrecognized key" at /query/filter and "toString" "takes true or false").
    for (const key of ['constructor', 'toString', 'hasOwnProperty']) {
      const answer = await search({ [key]: true });
      assertArdError(answer, 400, 'INVALID_ARGUMENT', new RegExp(`Filter key\\(s\\) "${key}" are not supported here\\. Supported: type `));
      assert.deepEqual(answer.body.details.map((d: WireJson) => d.path), [`/query/filter/${key}`]);
    }
    // An empty key, or one longer than 128 characters, is a key like any other: it was "/query/filter/:
    // The value is not valid: Invalid key in record", naming neither the key nor the supported ones.
    for (const key of ['', 'k'.repeat(129)]) {
      const answer = await search({ [key]: 'a' });
      assertArdError(answer, 400, 'INVALID_ARGUMENT', new RegExp(`^Filter key\\(s\\) "${key.slice(0, 58)}(…|") are not supported here\\. Supported: type `));
      assert.deepEqual(answer.body.details.map((d: WireJson) => d.path), [`/query/filter/${key}`]);
    }
    // Many: the first ten named, the first 50 findings and one saying how many more (contract/findings.ts).
    // Each had its finding, its hint listing the supported keys: 2,000 short keys were answered 500 KB.
    const many = await search(Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, 1])));
    assertArdError(many, 400, 'INVALID_ARGUMENT', /^Filter key\(s\) "k0", "k1", .*"k9" and 1,990 more are not supported here\. Supported: type /);
    assert.equal(many.body.details.length, 51);
    assert.deepEqual(many.body.details[50], {
      path: '/query/filter/k50',
      rule: 'more-findings',
      message: 'and 1,950 more findings, not listed: a refusal lists the first 50',
      hint: 'Fix the ones listed (they are likely alike), then send the request again to see any left.',
    });
    assert.ok(JSON.stringify(many.body).length < 20_000, String(JSON.stringify(many.body).length));
    assertArdError(await getJson(`${registry.url}/agents?constructor=1`), 400, 'INVALID_ARGUMENT', /^"constructor" is not a query parameter of GET \/agents, which takes filter, orderBy, pageSize, pageToken; to search/);
    // A supported key with a value of the wrong type: what it takes, where.
    const version = await search({ protocolVersion: 1.0 });
    assertArdError(version, 400, 'INVALID_ARGUMENT', /\/query\/filter\/protocolVersion: expected a string, got an integer/);
    assert.match(version.body.details[0].hint, /"protocolVersion" takes one A2A protocol version per search: a string\./);
    assertArdError(await search({ streaming: 1 }), 400, 'INVALID_ARGUMENT', /\/query\/filter\/streaming: expected true or false, got an integer/);
    assertArdError(await search({ tags: ['weather', 7] }), 400, 'INVALID_ARGUMENT', /\/query\/filter\/tags\/1: expected a string, got an integer/);
    assertArdError(await search({ owner: null }), 400, 'INVALID_ARGUMENT', /\/query\/filter\/owner: expected a string, got null/);
    assert.equal((await search({ protocolVersion: '1.0', streaming: 'false', readOnly: false })).res.status, 200, 'strings and booleans as before');
    // health and the yes/no keys as the other doors spell them: "OK", " ok", "TRUE" passed here
    // (lower-cased, trimmed), where A2A and MCP search refuse them; refused, saying how to write them.
    for (const health of ['OK', ' ok', 'Any']) {
      const shouted = await search({ health });
      assertArdError(shouted, 400, 'INVALID_ARGUMENT', /^Filter "health" takes one of ok, unreachable, invalid, any\.$/);
      assert.equal(shouted.body.details[0].hint, `Write it in lower case, without spaces: {"health": "${health.trim().toLowerCase()}"}.`);
    }
    assert.equal(errorOf(await op(writer, { search: { query: 'x', filter: { health: 'OK' } } })).code, 'BAD_REQUEST', 'as A2A search refuses it');
    for (const yes of ['TRUE', ' true', 'False']) {
      const shouted = await search({ streaming: yes });
      assertArdError(shouted, 400, 'INVALID_ARGUMENT', /^Filter "streaming" takes true or false\.$/);
      assert.match(shouted.body.details[0].hint, /^Write (true|false) \(a JSON boolean, or the string "(true|false)" in lower case\)\.$/);
    }
    assert.equal((await search({ health: ['ok'], verified: 'true' })).res.status, 200, 'as they write them');
    // A blank value, or none, is refused where it is, as A2A search refuses it: a blank tag was
    // dropped ({"tags": ["finance", " "]} asked for finance), an empty array ignored, a blank
    // type matched nothing, and a blank owner was told it gave "0 values".
    // An empty one is told as empty (it was told "only white space").
    const blankSaid = 'must not be blank \\(only white space\\)';
    for (const [filter, path, said] of [[{ tags: ['finance', ' '] }, '/query/filter/tags/1', blankSaid], [{ owner: ' ' }, '/query/filter/owner', blankSaid], [{ type: '  ' }, '/query/filter/type', blankSaid], [{ publisher: [''] }, '/query/filter/publisher/0', 'must not be empty']] as const) {
      const blank = await search(filter);
      assertArdError(blank, 400, 'INVALID_ARGUMENT', new RegExp(`${path}: ${said}: give the value, or leave the key out`));
      assert.deepEqual(blank.body.details.map((d: WireJson) => d.path), [path]);
    }
    assert.match(errorOf(await op(writer, { search: { query: 'x', filter: { owner: ' ' } } })).message, /owner: must not be blank \(only white space\)/, 'as A2A says it');
    assertArdError(await search({ tags: [] }), 400, 'INVALID_ARGUMENT', /\/query\/filter\/tags: expected at least one value, got an empty array/);
    assertArdError(await search({ type: [] }), 400, 'INVALID_ARGUMENT', /\/query\/filter\/type: expected at least one value/);
    // A string is a one-value list (ARD 7.1): "weather,forecast" asked for that one tag, which
    // nothing carries, and answered no results; it is refused, showing the array to send.
    const listed = await post(`${registry.url}/search`, { query: { text: 'forecast', filter: { tags: 'weather, forecast' } } });
    assertArdError(listed, 400, 'INVALID_ARGUMENT', /\/query\/filter\/tags: "weather, forecast" would be one value with commas in it .*send several values as an array, \["weather","forecast"\]/);
    assert.match(listed.body.details[0].hint, /\{"tags":\["weather, forecast"\]\}/);
    const types = await search({ type: 'application/a2a-agent-card+json,application/mcp-server-card+json' });
    assertArdError(types, 400, 'INVALID_ARGUMENT', /\/query\/filter\/type: .*as an array, \["application\/a2a-agent-card\+json","application\/mcp-server-card\+json"\]/);
    assertArdError(await search({ protocolBinding: 'JSONRPC,GRPC' }), 400, 'INVALID_ARGUMENT', /\/query\/filter\/protocolBinding: "JSONRPC,GRPC" is a comma-separated list, and "protocolBinding" takes one value/);
    const asArrays = await post(`${registry.url}/search`, { query: { text: 'forecast', filter: { tags: ['weather', 'forecast'], type: ['application/a2a-agent-card+json', 'application/mcp-server-card+json'] } } });
    assert.deepEqual(asArrays.body.results.map((r: WireJson) => r.identifier), [urn('agent', ids.weather)], 'the arrays it shows find the entry');
  });

  test('POST /search: several values for a key filtered by one value are refused as that, naming them; an unknown type is refused, naming the types', async () => {
    const search = searchFiltered;
    // The registry's search filters by one owner, binding, version and health: two values were
    // refused as if they were not values at all ("takes one of ok, unreachable, invalid, any" to
    // ["ok", "unreachable"]), or with "takes one value here" and no word of which.
    const several: Array<[string, string[]]> = [
      ['health', ['ok', 'unreachable']],
      ['owner', ['alice', 'bob']],
      ['protocolBinding', ['JSONRPC', 'GRPC']],
      ['protocolVersion', ['0.3', '1.0']],
    ];
    for (const [key, values] of several) {
      const answer = await search({ [key]: values });
      assertArdError(answer, 400, 'INVALID_ARGUMENT', new RegExp(`^Filter "${key}" takes one value here; send one of ${values.map((v) => `"${v.replace('.', '\\.')}"`).join(', ')} per search\\.$`));
      assert.equal(answer.body.details[0].path, `/query/filter/${key}`);
      assert.equal(answer.body.details[0].message, '2 values');
      assert.match(answer.body.details[0].hint, new RegExp(`this registry filters by one ${key} at a time: e\\.g\\. \\{"${key}":"${values[0]!.replace('.', '\\.')}"\\}`));
      assert.equal((await search({ [key]: [values[0], values[0]] })).res.status, 200, `${key}: one value, twice`);
    }
    // A health value that is none is still told the values, where it is.
    const wrong = await search({ health: ['ok', 'OK'] });
    assertArdError(wrong, 400, 'INVALID_ARGUMENT', /^Filter "health" takes one of ok, unreachable, invalid, any\.$/);
    assert.deepEqual(wrong.body.details.map((d: WireJson) => [d.path, d.hint]), [['/query/filter/health/1', 'Write it in lower case, without spaces: {"health": "ok"}.']]);
    // The supported keys' list says which take one value.
    assertArdError(await search({ bogus: 1 }), 400, 'INVALID_ARGUMENT', /owner \(one registering principal per search\)/);

    // A type no entry here has answered 200 and no results, silently; now 400 naming the types.
    for (const [type, path] of [[['application/a2a-agent-card+jsn'], '/query/filter/type/0'], ['agent', '/query/filter/type'], [['application/a2a-agent-card+json', 'application/parquet'], '/query/filter/type/1']] as const) {
      const answer = await search({ type });
      const shown = JSON.stringify(Array.isArray(type) ? type.at(-1) : type);
      assertArdError(answer, 400, 'INVALID_ARGUMENT', new RegExp(`^The search request is not valid: ${path.replace(/\//g, '\\/')}: ${shown.replace(/[.+]/g, '\\$&')} is not a media type this registry lists\\.$`));
      assert.deepEqual(answer.body.details.map((d: WireJson) => [d.path, d.hint]), [[path, '"type" takes application/a2a-agent-card+json (agents) or application/mcp-server-card+json (MCP servers).']]);
    }
    // The types the registry's own catalog gives its search service and its next pages are types it
    // lists (they were refused as "not a media type this registry lists"): no registered entry has
    // them, so alone they match nothing, and beside another type they add nothing to it.
    for (const type of ['application/ai-registry+json', ['Application/AI-Catalog+JSON']]) {
      const none = await search({ type });
      assert.equal(none.res.status, 200, JSON.stringify(none.body));
      assert.deepEqual(none.body, { results: [] });
    }
    const agentsOrCatalogs = await post(`${registry.url}/search`, { query: { text: 'invoice', filter: { type: ['application/a2a-agent-card+json', 'application/ai-catalog+json'] } } });
    assert.ok(agentsOrCatalogs.body.results.some((r: WireJson) => r.identifier === urn('agent', ids.invoice)), JSON.stringify(agentsOrCatalogs.body));
    assert.ok(agentsOrCatalogs.body.results.every((r: WireJson) => r.type === 'application/a2a-agent-card+json'));
    const registries = await getJson(`${registry.url}/agents?filter=${encodeURIComponent("type = 'application/ai-registry+json'")}`);
    assert.equal(registries.res.status, 200, JSON.stringify(registries.body));
    assert.deepEqual(registries.body, { items: [] });
    // Spelt as before: parameters, case and the older names are the same types.
    for (const type of ['Application/A2A-Agent-Card+JSON; version=1.0', 'application/agent-card+json', 'application/mcp-server+json']) {
      assert.equal((await search({ type })).res.status, 200, type);
    }
    const listed = await getJson(`${registry.url}/agents?filter=${encodeURIComponent("type = 'agent'")}`);
    assertArdError(listed, 400, 'INVALID_ARGUMENT', /^The filter's type = '\.\.\.' names "agent", which is not a media type this registry lists: it takes application\/a2a-agent-card\+json \(agents\) or application\/mcp-server-card\+json \(MCP servers\)\.$/);
    assert.equal(listed.body.details[0].path, '/query/filter');
    const mixed = await getJson(`${registry.url}/agents?filter=${encodeURIComponent("type = 'application/mcp-server-card+json,application/x' AND verified = false")}`);
    assertArdError(mixed, 400, 'INVALID_ARGUMENT', /names "application\/x", which is not a media type/);
    assert.equal((await getJson(`${registry.url}/agents?filter=${encodeURIComponent("type = 'application/mcp-server-card+json, application/a2a-agent-card+json'")}`)).res.status, 200);
  });

  test('GET /agents/{id}: the full ARD entry by id or identifier, with ETag; GET /agents lists', async () => {
    const catalog = (await (await get(`${registry.url}/.well-known/ai-catalog.json`)).json()) as WireJson;
    for (const ref of [ids.weather, urn('agent', ids.weather), encodeURIComponent(urn('agent', ids.weather))]) {
      const { res, body } = await getJson(`${registry.url}/agents/${ref}`);
      assert.equal(res.status, 200, ref);
      assertShape(ardEntrySchema, body, 'the entry');
      assert.deepEqual(body, catalog.entries.find((e: WireJson) => e.identifier === urn('agent', ids.weather)));
      assert.equal(res.headers.get('cache-control'), 'public, max-age=60');
      assert.equal((await get(`${registry.url}/agents/${ref}`, { 'if-none-match': res.headers.get('etag')! })).status, 304);
    }
    const own = await getJson(`${registry.url}/agents/${urn('registry', 'search')}`);
    assert.equal(own.body.type, 'application/ai-registry+json');
    assertArdError(await getJson(`${registry.url}/agents/urn:air:other.example:agent:${ids.weather}`), 404, 'NOT_FOUND', /its identifiers start urn:air:127\.0\.0\.1: \(an identifier another registry returned is resolved at that registry/);
    // ARD ADR-0010: the lookup is exact and case-sensitive (a case slip is a valid identifier this
    // registry does not have, and is told so); a malformed identifier is 400 saying what is wrong.
    for (const slip of [`URN:AIR:127.0.0.1:agent:${ids.weather}`, urn('AGENT', ids.weather), urn('agent', ids.weather.toUpperCase()), urn('Registry', 'search')]) {
      assertArdError(await getJson(`${registry.url}/agents/${slip}`), 404, 'NOT_FOUND', /compared exactly, case-sensitively/);
    }
    const malformed: Array<[string, RegExp]> = [
      ['urn:isbn:0451450523', /not an ARD identifier: its namespace is "isbn", not "air"/],
      ['urn:air:127.0.0.1', /it has a publisher but no name/],
      [`urn:air::agent:${ids.weather}`, /its publisher is empty/],
      [`${urn('agent', '')}`, /segment 3 after urn:air: is empty/],
      [`urn:air:not_a_domain:agent:x`, /its publisher "not_a_domain" is not a domain name/],
      [encodeURIComponent(urn('agent', 'a b')), /holds " ", which a URN cannot \(RFC 8141\)/],
      // "%" begins an encoded octet in a URN, or is no URN (it was looked up as a name, and 404).
      [encodeURIComponent(urn('agent', '%zz')), /holds "%zz", a "%" not followed by two hex digits, which a URN cannot \(RFC 8141/],
      [`urn:air:other.example:agent:x${encodeURIComponent('%')}`, /holds "%", a "%" not followed by two hex digits/],
    ];
    for (const [ref, message] of malformed) {
      assertArdError(await getJson(`${registry.url}/agents/${ref}`), 400, 'INVALID_ARGUMENT', message);
    }
    // A path segment that is not valid percent-encoded UTF-8 is refused naming what the segment
    // holds on this door, and how to send it: it was "(e.g. a task id)", the A2A doors' words.
    for (const [path, what, segment] of [
      ['/agents/%ff', 'identifier \\(or entry id\\)', '%ff'],
      [`/agents/${urn('agent', '%zz')}`, 'identifier \\(or entry id\\)', 'urn:air:127.0.0.1:agent:%zz'],
      ['/agents/%E2%82/card.json', 'entry id', '%E2%82'],
      ['/mcp-servers/%ff/server-card.json', 'entry id', '%ff'],
    ]) {
      const undecodable = await getJson(`${registry.url}${path}`);
      const rule = 'percent-encode it once, as one path segment, as UTF-8 bytes, each byte outside A-Z, a-z, 0-9 and -\\._~ as %XX';
      assertArdError(undecodable, 400, 'INVALID_ARGUMENT', new RegExp(`^The ${what} in the path, "${segment}", is not valid percent-encoded UTF-8: ${rule}\\.$`));
      assert.equal(undecodable.body.registryCode, 'INVALID_PATH', path);
    }
    // An encoded octet is a URN's own: a well-formed identifier this registry does not hold.
    assertArdError(await getJson(`${registry.url}/agents/${encodeURIComponent(urn('agent', 'a%3Ab'))}`), 404, 'NOT_FOUND');
    // ARD 5.3.4: a 404 requires revalidation. It had no Cache-Control, so a cache could keep it for
    // a heuristic lifetime (RFC 9111 4.2.2) and hide an entry registered, or a card verified, after.
    for (const path of [`/agents/${urn('agent', 'no-such-entry')}`, '/agents/no-such-entry/card.json', '/mcp-servers/no-such-entry/server-card.json', `/mcp-servers/${ids.weather}/document.json`]) {
      const missing = await getJson(`${registry.url}${path}`);
      assertArdError(missing, 404, 'NOT_FOUND');
      assert.equal(missing.res.headers.get('cache-control'), 'no-cache', path);
    }
    // An id longer than any entry's (ids are at most 100 characters) is refused naming the limit, in
    // `get`'s words on the other doors, not echoed; it was looked up and answered 404 "No entry has id".
    const tooLong = '"id" must be a string of 1 to 100 characters; got one longer';
    for (const [path, where] of [
      [`/agents/${'x'.repeat(5000)}`, '/identifier'],
      [`/agents/${'x'.repeat(101)}`, '/identifier'],
      [`/agents/${urn('agent', 'x'.repeat(101))}`, '/identifier'],
      [`/agents/${'x'.repeat(101)}/card.json`, '/id'],
      [`/mcp-servers/${'x'.repeat(101)}/document.json`, '/id'],
      [`/mcp-servers/${'x'.repeat(101)}/server-card.json?revision=1`, '/id'],
    ] as const) {
      const refused = await getJson(`${registry.url}${path}`);
      assertArdError(refused, 400, 'INVALID_ARGUMENT', new RegExp(`^The entry id in the ${where === '/id' ? 'path' : 'identifier'} is not valid: ${tooLong}\\.$`));
      assert.deepEqual(refused.body.details, [{ path: where, message: tooLong }], path.slice(0, 40));
    }
    // ARD 5.3.4: a value that is no identifier is 400 INVALID_ARGUMENT (MUST), as ARD's conformance
    // test probes with "not-a-valid-ard-urn"; a plain entry id is accepted too, but one that names no
    // entry was 404 NOT_FOUND, as if it were an identifier this registry does not hold.
    for (const plain of ['not-a-valid-ard-urn', 'x'.repeat(100)]) {
      const refused = await getJson(`${registry.url}/agents/${plain}`);
      assertArdError(refused, 400, 'INVALID_ARGUMENT', new RegExp(`^"${plain}" is not an ARD identifier, and no entry has it as its id: look an entry up by its identifier, urn:air:127\\.0\\.0\\.1:<agent\\|mcp-server>:<id>`));
      assert.equal(refused.body.details[0].path, '/identifier');
    }
    // An entry id no entry has (unregistered, or another registry's) is an id not held: 404, as
    // `get` answers it on the other doors, in any case.
    for (const unknown of ['01a252c5-d6d1-7737-b79f-5cb268b8ff10', '01A252C5-D6D1-7737-B79F-5CB268B8FF10']) {
      const missing = await getJson(`${registry.url}/agents/${unknown}`);
      assertArdError(missing, 404, 'NOT_FOUND');
      assert.equal(missing.res.headers.get('cache-control'), 'no-cache');
    }
    // GET /agents/{identifier} takes no query: ?revision=1 answered the current entry as if it were revision 1's.
    const revision = await getJson(`${registry.url}/agents/${urn('agent', ids.weather)}?revision=1`);
    assertArdError(revision, 400, 'INVALID_ARGUMENT', /^"revision" is not a query parameter of GET \/agents\/\{identifier\}, which takes none: an older revision is read from the entry's document, at its url with \?revision=N/);
    assert.equal(revision.body.details[0].path, '/query/revision');
    assertArdError(await getJson(`${registry.url}/agents/${ids.weather}?fields=all`), 400, 'INVALID_ARGUMENT', /^"fields" is not a query parameter of GET \/agents\/\{identifier\}, which takes none\.$/);
    // A plain id that is an entry's, in any case, is the entry, as the other doors' get finds it.
    assert.equal((await getJson(`${registry.url}/agents/${ids.files.toUpperCase()}`)).body.identifier, urn('mcp-server', ids.files));
    // An identifier names the kind too: the agent's id under mcp-server is no identifier of this registry's.
    assertArdError(await getJson(`${registry.url}/agents/${urn('mcp-server', ids.weather)}`), 404, 'NOT_FOUND', new RegExp(`is an agent, identified as ${urn('agent', ids.weather)}`));
    assertArdError(await getJson(`${registry.url}/agents/${urn('agent', ids.files)}`), 404, 'NOT_FOUND', /is an MCP server/);
    // The identifier given to the A2A get (the documents above name entries by it) says which id to send instead.
    const byIdentifier = errorOf(await op(writer, { get: { id: urn('mcp-server', ids.files) } }));
    assert.equal(byIdentifier.code, 'NOT_FOUND');
    assert.ok(byIdentifier.message.includes(`is a catalog (AI Catalog / ARD) identifier; the registry's operations take the entry id, its last segment: "${ids.files}"`), byIdentifier.message);

    const list = await getJson(`${registry.url}/agents?pageSize=2`);
    assertShape(ardListResponseSchema, list.body, 'GET /agents');
    assert.equal(list.body.items.length, 2);
    const next = await getJson(`${registry.url}/agents?pageSize=2&pageToken=${encodeURIComponent(list.body.pageToken)}`);
    assert.ok(next.body.items.length >= 1);
    const servers = await getJson(`${registry.url}/agents?filter=${encodeURIComponent("type = 'application/mcp-server-card+json'")}`);
    assert.deepEqual(servers.body.items.map((e: WireJson) => e.identifier), [urn('mcp-server', ids.files)]);
    // ARD Appendix A's publisherId (comma-separated, any of them), the <publisher> segment of the
    // identifiers, as POST /search's publisher reads it: every entry listed here is this registry's.
    // It was refused as an unsupported expression.
    const filtered = (filter: string) => getJson(`${registry.url}/agents?filter=${encodeURIComponent(filter)}`);
    const published = await filtered("publisherId = 'other.example, 127.0.0.1' AND type = 'application/mcp-server-card+json'");
    assert.deepEqual(published.body.items.map((e: WireJson) => e.identifier), [urn('mcp-server', ids.files)]);
    const elsewhere = await filtered("publisherId = 'other.example'");
    assert.equal(elsewhere.res.status, 200);
    assert.deepEqual(elsewhere.body, { items: [] });
    // A clause after one that matches nothing is still read: a wrong one is refused, not answered empty.
    // The clause refused is named, not the whole filter.
    assertArdError(await filtered("publisherId = 'other.example' AND verified = maybe"), 400, 'INVALID_ARGUMENT', /^The filter's clause "verified = maybe" is not one this registry reads: the filter supports the clauses .*publisherId = '<publisher domains, comma-separated>'/);
    assertArdError(await filtered("publisherId = ' , '"), 400, 'INVALID_ARGUMENT', /^The filter's publisherId = '\.\.\.' names no publisher/);
    assertArdError(await getJson(`${registry.url}/agents?filter=${encodeURIComponent('displayName = x')}`), 400, 'INVALID_ARGUMENT', /type = /);
    // Clauses joined by AND that contradict each other match nothing, as two types do (the last
    // verified clause was taken alone: every unverified entry); the same value twice is that value.
    for (const contradiction of ["verified = true AND verified = false", "verified = false AND type = 'application/mcp-server-card+json' AND verified = 'true'", "type = 'application/mcp-server-card+json' AND type = 'application/a2a-agent-card+json'"]) {
      const none = await getJson(`${registry.url}/agents?filter=${encodeURIComponent(contradiction)}`);
      assert.equal(none.res.status, 200);
      assert.deepEqual(none.body.items, [], contradiction);
    }
    const unverifiedTwice = await getJson(`${registry.url}/agents?filter=${encodeURIComponent('verified = false AND verified = false')}`);
    assert.deepEqual(unverifiedTwice.body.items, (await getJson(`${registry.url}/agents?filter=${encodeURIComponent('verified = false')}`)).body.items);
    assert.ok(unverifiedTwice.body.items.length > 0);
    assertArdError(await getJson(`${registry.url}/agents?pageSize=0`), 400, 'INVALID_ARGUMENT');
    // A size in the range but not in plain digits says what came (it was told only "1 to 100").
    assertArdError(await getJson(`${registry.url}/agents?pageSize=1e1`), 400, 'INVALID_ARGUMENT', /^pageSize must be a whole number from 1 to 100, in digits \(got "1e1"\)\.$/);
    assertArdError(await getJson(`${registry.url}/agents?orderBy=name`), 400, 'INVALID_ARGUMENT');
    // A filter field beside filter, as ARD's Appendix A table may be read, is refused saying where it goes (every entry was answered).
    const beside = await getJson(`${registry.url}/agents?type=${encodeURIComponent('application/mcp-server-card+json')}`);
    assertArdError(beside, 400, 'INVALID_ARGUMENT', /^type is a filter field, not a query parameter of GET \/agents: put it in filter .*\?filter=type = 'application\/a2a-agent-card\+json'\.$/);
    assert.equal(beside.body.details[0].path, '/query/type');
    assertArdError(await getJson(`${registry.url}/agents?pageSize=2&updatedAfter=2026-01-01T00:00:00Z`), 400, 'INVALID_ARGUMENT', /^updatedAfter is a filter field/);
    // Another parameter is refused naming the ones GET /agents takes (?limit=1 listed 20 entries, ?q= every entry).
    const limited = await getJson(`${registry.url}/agents?limit=1`);
    assertArdError(limited, 400, 'INVALID_ARGUMENT', /^"limit" is not a query parameter of GET \/agents, which takes filter, orderBy, pageSize, pageToken \(did you mean pageSize\?\); to search by text, POST \/search\.$/);
    assert.deepEqual(limited.body.details.map((d: WireJson) => d.path), ['/query/limit']);
    assertArdError(await getJson(`${registry.url}/agents?pageSize=2&q=weather`), 400, 'INVALID_ARGUMENT', /^"q" is not a query parameter of GET \/agents, which takes filter, orderBy, pageSize, pageToken; to search by text, POST \/search\.$/);
  });

  test('GET /agents?orderBy=updatedAt desc lists the entries most recently changed first, as A2A list does with orderBy', async () => {
    // Without it the walk is newest registered first; "updatedAt" alone (ascending, AIP-132) was
    // read as "updatedAt desc" and listed by registration too, so a client keeping a copy in step
    // by updatedAt stopped before the old entries changed since.
    const own = await start();
    const client = await sdkClient(own.url, { token: TOKENS.alice });
    const register = async (name: string, version = '1.0.0') =>
      resultOf(await op(client, { register: { agentCard: { ...v1Card(name, `https://${name.toLowerCase()}.example.org/a2a`), version } } })).id as string;
    const first = await register('First');
    const second = await register('Second');
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(await register('First', '1.0.1'), first);
    const names = (body: WireJson) => body.items.map((e: WireJson) => e.displayName);
    assert.deepEqual(names((await getJson(`${own.url}/agents`)).body), ['Second', 'First'], 'newest registered first by default');
    assert.deepEqual(names((await getJson(`${own.url}/agents?orderBy=createdAt%20desc`)).body), ['Second', 'First']);
    const changed = await getJson(`${own.url}/agents?orderBy=${encodeURIComponent('updatedAt DESC')}&pageSize=1`);
    assert.deepEqual(names(changed.body), ['First']);
    const rest = await getJson(`${own.url}/agents?orderBy=${encodeURIComponent('updatedAt desc')}&pageSize=1&pageToken=${encodeURIComponent(changed.body.pageToken)}`);
    assert.deepEqual(names(rest.body), ['Second']);
    // A token goes on in the order it was issued in.
    assertArdError(await getJson(`${own.url}/agents?pageSize=1&pageToken=${encodeURIComponent(changed.body.pageToken)}`), 400, 'INVALID_ARGUMENT');
    for (const ascending of ['updatedAt', 'updatedAt asc', 'createdAt']) {
      const refused = await getJson(`${own.url}/agents?orderBy=${encodeURIComponent(ascending)}`);
      assertArdError(refused, 400, 'INVALID_ARGUMENT', /^orderBy takes "updatedAt desc" \(most recently changed first\) or "createdAt desc"/);
      assert.equal(refused.body.details[0].message, 'ascending order is not offered');
    }
    // What was sent is quoted cut between characters, never inside an emoji ("\ud83c" in the message).
    const emoji = `x${'🌦'.repeat(80)}`;
    const order = await getJson(`${own.url}/agents?orderBy=${encodeURIComponent(emoji)}`);
    assertArdError(order, 400, 'INVALID_ARGUMENT', new RegExp(`got "x${'🌦'.repeat(59)}"\\.$`, 'u'));
    const parameter = await getJson(`${own.url}/agents?${encodeURIComponent(emoji)}=1`);
    assertArdError(parameter, 400, 'INVALID_ARGUMENT', new RegExp(`^"x${'🌦'.repeat(59)}" is not a query parameter`, 'u'));
    assert.equal(parameter.body.details[0].path, `/query/x${'🌦'.repeat(59)}`);

    // The A2A list, the operation behind GET /agents.
    const listed = (page: WireJson) => page.entries.map((e: WireJson) => e.id);
    assert.deepEqual(listed(resultOf(await op(client, { list: {} }))), [second, first]);
    const byChange = resultOf(await op(client, { list: { orderBy: 'updatedAt', pageSize: 1 } }));
    assert.deepEqual(listed(byChange), [first]);
    assert.deepEqual(listed(resultOf(await op(client, { list: { orderBy: 'updatedAt', pageSize: 1, pageToken: byChange.nextPageToken } }))), [second]);
    assert.match(errorOf(await op(client, { list: { pageSize: 1, pageToken: byChange.nextPageToken } })).message, /another query/);
    const unknown = errorOf(await op(client, { list: { orderBy: 'name' } }));
    assert.equal(unknown.code, 'BAD_REQUEST');
    assert.equal(unknown.details[0].path, '/parts/0/data/list/orderBy');
  });

  test('metrics count the door by route', async () => {
    const text = await (await get(`${registry.url}/metrics`)).text();
    const has = (labels: string) => text.split('\n').some((l) => l.startsWith('registry_requests_total{') && l.includes(labels));
    assert.ok(has('method="POST /search",operation="search",outcome="COMPLETED",code="none",door="catalog"'));
    assert.ok(has('method="POST /search",operation="none",outcome="REFUSED",code="PARSE_ERROR",door="catalog"'));
    assert.ok(has('method="GET /.well-known/ai-catalog.json",operation="list",outcome="COMPLETED"'));
    assert.ok(has('method="GET /agents/{id}/card.json",operation="get",outcome="REJECTED",code="NOT_FOUND"'));
  });

  test('requests refused before a route matched (a token refused, a method no route takes, OPTIONS) count under the route of their path, an unknown path as "other"', async () => {
    const fresh = await start({ REGISTRY_PUBLIC_READ: 'false', REGISTRY_RATE_LIMITS: 'false' });
    const mistyped = { authorization: 'Bearer not-a-token-of-this-registry' };
    assert.equal((await get(`${fresh.url}/.well-known/ai-catalog.json`)).status, 401);
    assert.equal((await post(`${fresh.url}/search`, { query: { text: 'x' } }, mistyped)).res.status, 401);
    assert.equal((await get(`${fresh.url}/agents/some-id/card.json`, mistyped)).status, 401);
    assert.equal((await fetch(`${fresh.url}/search`, { method: 'PUT', headers: { authorization: `Bearer ${TOKENS.alice}` } })).status, 405);
    assert.equal((await fetch(`${fresh.url}/agents`, { method: 'OPTIONS', headers: { authorization: `Bearer ${TOKENS.alice}` } })).status, 200);
    assert.equal((await get(`${fresh.url}/agents/a/b/c`, { authorization: `Bearer ${TOKENS.alice}` })).status, 404);
    const text = await (await get(`${fresh.url}/metrics`, { authorization: `Bearer ${TOKENS.admin}` })).text();
    const count = (labels: string) => Number(text.split('\n').find((l) => l.startsWith(`registry_requests_total{${labels},door="catalog"} `))?.split(' ').at(-1) ?? 0);
    assert.equal(count('method="GET /.well-known/ai-catalog.json",operation="none",outcome="REFUSED",code="CREDENTIAL_REQUIRED"'), 1, text);
    assert.equal(count('method="POST /search",operation="none",outcome="REFUSED",code="INVALID_CREDENTIAL"'), 1, text);
    assert.equal(count('method="GET /agents/{id}/card.json",operation="none",outcome="REFUSED",code="INVALID_CREDENTIAL"'), 1, text);
    assert.equal(count('method="PUT /search",operation="none",outcome="REFUSED",code="METHOD_NOT_ALLOWED"'), 1, text);
    assert.equal(count('method="OPTIONS /agents",operation="none",outcome="OK",code="none"'), 1, text);
    assert.equal(count('method="other",operation="none",outcome="REFUSED",code="NOT_FOUND"'), 1, text);
  });
});

describe('access and limits, as on every door', () => {
  test('closed reads: a token is needed, and answers are private', async () => {
    const closed = await start({ REGISTRY_PUBLIC_READ: 'false', REGISTRY_RATE_LIMITS: 'false' });
    const alice = { authorization: `Bearer ${TOKENS.alice}` };
    assertArdError(await getJson(`${closed.url}/.well-known/ai-catalog.json`), 401, 'UNAUTHENTICATED', /needs a token for every call/);
    assertArdError(await post(`${closed.url}/search`, { query: { text: 'x' } }), 401, 'UNAUTHENTICATED');
    const res = await get(`${closed.url}/.well-known/ai-catalog.json`, { ...alice, origin: 'https://somewhere.example' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'private, max-age=60');
    assert.equal(res.headers.get('access-control-allow-origin'), null, 'not open to other origins when reads are closed');
    assert.equal((await get(`${closed.url}/.well-known/ai-catalog.json`, alice)).status, 200);
    // The registry's own MCP Server Card stays open, as its A2A card does: it tells a client where to connect.
    for (const path of ['/.well-known/agent-card.json', '/mcp/server-card']) {
      const open = await get(`${closed.url}${path}`);
      assert.equal(open.status, 200, path);
      await open.arrayBuffer();
    }
    const card = await getJson(`${closed.url}/mcp/server-card`);
    assert.equal(card.body.remotes[0].url, `${closed.url}/mcp`);
  });

  test('an unknown token is refused with 401 even where reads are public', async () => {
    const answer = await getJson(`${registry.url}/.well-known/ai-catalog.json`, { authorization: 'Bearer not-a-token-000000000' });
    assertArdError(answer, 401, 'UNAUTHENTICATED', /not recognised/);
    assert.match(answer.res.headers.get('www-authenticate') ?? '', /^Bearer/);
    // Readable by a page on another origin, as the document itself is.
    assert.match(answer.res.headers.get('access-control-expose-headers') ?? '', /\bWWW-Authenticate\b/);
  });

  test('rate limits: the shared read budget, and the flood guard, answer 429 RATE_LIMIT_EXCEEDED with Retry-After', async () => {
    const limited = await start({ REGISTRY_RATE_READS_PER_MINUTE: '2', REGISTRY_RATE_REQUESTS_PER_MINUTE: '6' });
    const search = () => post(`${limited.url}/search`, { query: { text: 'x' } });
    const catalog = () => getJson(`${limited.url}/.well-known/ai-catalog.json`);
    assert.equal((await search()).res.status, 200);
    assert.equal((await catalog()).res.status, 200);
    // The catalog page the first GET built and kept is a read too, as a search answered from the
    // search cache is: it was counted only when built, never when served from memory.
    const kept = await catalog();
    assertArdError(kept, 429, 'RATE_LIMIT_EXCEEDED', /Too many reads/);
    assert.ok(Number(kept.res.headers.get('retry-after')) >= 1);
    // So is a search or a listing whose filter can match nothing here, answered without the search
    // or the list (another publisher): it was answered 200, whatever the budget.
    const refused = await post(`${limited.url}/search`, { query: { text: 'x', filter: { publisher: 'other.example' } } });
    assertArdError(refused, 429, 'RATE_LIMIT_EXCEEDED', /Too many reads/);
    assert.ok(Number(refused.res.headers.get('retry-after')) >= 1);
    assert.ok(refused.body.retryAfterSeconds >= 1);
    assertArdError(await getJson(`${limited.url}/agents?filter=${encodeURIComponent("publisherId = 'other.example'")}`), 429, 'RATE_LIMIT_EXCEEDED', /Too many reads/);
    let flood: { res: Response; body: WireJson } | undefined;
    for (let i = 0; i < 5 && !flood; i++) {
      const answer = await getJson(`${limited.url}/mcp/server-card`);
      if (answer.res.status === 429) flood = answer;
    }
    assert.ok(flood, 'the flood guard refused');
    assertArdError(flood, 429, 'RATE_LIMIT_EXCEEDED', /Too many requests from this address/);
    // When to ask again is readable by a page on another origin, as the document itself is.
    assert.equal(flood.res.headers.get('access-control-allow-origin'), '*');
    assert.match(flood.res.headers.get('access-control-expose-headers') ?? '', /\bRetry-After\b/);
  });
});
