/**
 * Registration, ownership, revisions, get/list/unregister: end to end through the SDK client
 * against a real registry on 127.0.0.1 with its real SQLite file.
 */
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { mcpServer, toolspec, v03Card, v1Card } from './support/documents.js';
import { dataPart, errorOf, filePart, op, resultOf, sdkClient, send, type WireJson } from './support/client.js';
import { TOKENS, startTestRegistry, tempDir, type TestRegistry } from './support/registry.js';
import { SqliteStore } from '../src/storage/index.js';
import { pageTokenKeyOf } from '../src/registry/page-token.js';
import type { Client } from '@a2a-js/sdk/client';

let registry: TestRegistry;
let alice: Client;
let bob: Client;
let admin: Client;
let anonymous: Client;
let n = 0;
const uniqueUrl = () => `https://agents.example.org/${++n}/a2a`;

before(async () => {
  // Without a page-token secret: its key is derived from the tokens, as a test below checks.
  registry = await startTestRegistry({ REGISTRY_PAGE_TOKEN_SECRET: undefined });
  [alice, bob, admin, anonymous] = await Promise.all([
    sdkClient(registry.url, { token: TOKENS.alice }),
    sdkClient(registry.url, { token: TOKENS.bob }),
    sdkClient(registry.url, { token: TOKENS.admin }),
    sdkClient(registry.url),
  ]);
});
after(() => registry.close());

describe('register', () => {
  test('a v1.0 card from a data part: created, indexed, retrievable exactly as sent', async () => {
    const card = v1Card('Invoice Agent', uniqueUrl());
    const result = resultOf(await op(alice, { register: { agentCard: card } }));
    assert.equal(result.kind, 'agent');
    assert.equal(result.revision, 1);
    assert.equal(result.created, true);
    assert.equal(result.changed, true);
    assert.equal(result.protocolVersion, '1.0');
    assert.deepEqual(result.indexed, { skills: 2 });
    assert.match(result.id, /^[0-9a-f-]{36}$/);
    const entry = resultOf(await op(anonymous, { get: { id: result.id } }));
    assert.deepEqual(entry.document, card);
    assert.equal(entry.owner, 'alice');
    assert.equal(entry.name, 'Invoice Agent');
    assert.equal(entry.interfaces[0].url, card.supportedInterfaces[0]!.url);
    assert.match(entry.contentHash, /^[0-9a-f]{64}$/);
  });

  test('names and texts that would act on a terminal or read differently are refused, saying where and what', async () => {
    const refused = async (change: (card: WireJson) => void, path: string, rule: RegExp) => {
      const card = v1Card('Display Agent', uniqueUrl()) as WireJson;
      change(card);
      const error = errorOf(await op(alice, { register: { agentCard: card } }));
      assert.equal(error.code, 'VALIDATION_FAILED');
      assert.ok(
        error.details.some((d: WireJson) => d.path === path && rule.test(d.message) && d.hint),
        `${path}: ${JSON.stringify(error.details)}`,
      );
    };
    await refused((c) => (c.name = 'Escapy \u001b[31mRED\u001b]0;pwned\u0007'), '/name', /control character U\+001B at position 7/);
    await refused((c) => (c.name = 'Evil\u202Eexe.txt'), '/name', /bidirectional control U\+202E/);
    await refused((c) => (c.name = '   '), '/name', /only white space/);
    await refused((c) => (c.name = '\u200b\u200d '), '/name', /shows nothing: it is only invisible characters and white space \(U\+200B at position 0\)/);
    await refused((c) => (c.skills[0].id = '  '), '/skills/0/id', /only white space/);
    await refused((c) => (c.version = ' '), '/version', /only white space/);
    await refused((c) => (c.name = 'A\u0000B'), '/name', /control character U\+0000/);
    await refused((c) => (c.skills[0].description = 'Clears \u001b[2J the screen'), '/skills/0/description', /control character U\+001B/);
    await refused((c) => (c.skills[0].tags[0] = 'bad\ud800tag'), '/skills/0/tags/0', /unpaired surrogate/);
    // Ids, versions and URLs are one token: any control character is refused, a line break and a tab too.
    await refused((c) => (c.skills[0].id = 'translate\u001b[31m'), '/skills/0/id', /control character U\+001B at position 9/);
    await refused((c) => (c.version = '1.0\n2.0'), '/version', /control character U\+000A/);
    await refused((c) => (c.documentationUrl = 'https://docs.acme-corp.io/\r\nX-Injected: 1'), '/documentationUrl', /control character U\+000D/);
    await refused((c) => (c.provider = { organization: 'Acme', url: 'https://acme-corp.io/\u007f' }), '/provider/url', /control character U\+007F/);
    await refused((c) => (c.supportedInterfaces[0].protocolVersion = '1.0\t'), '/supportedInterfaces/0/protocolVersion', /control character U\+0009/);
    await refused((c) => (c.iconUrl = 'https://acme-corp.io/\u202Egnp.exe'), '/iconUrl', /bidirectional control U\+202E/);
    // Tabs and line breaks are running text; a bidirectional control there is a warning.
    const card = v1Card('Display Agent', uniqueUrl()) as WireJson;
    card.description = 'Line one.\nLine two,\ttabbed. \u2067\u05e9\u05dc\u05d5\u05dd\u2069';
    const accepted = resultOf(await op(alice, { register: { agentCard: card } }));
    assert.ok(accepted.warnings.some((w: WireJson) => w.path === '/description' && /bidirectional control U\+2067/.test(w.message)), JSON.stringify(accepted.warnings));
    // MCP servers' and tools' names too.
    const server = { ...mcpServer('display-files', uniqueUrl()), name: 'files\u001b[0m' };
    const mcp = errorOf(await op(alice, { register: { mcpServer: server, toolspec: toolspec() } }));
    assert.ok(mcp.details.some((d: WireJson) => d.path === '/mcpServer/name' && /control character/.test(d.message)), JSON.stringify(mcp.details));
    const versioned = errorOf(await op(alice, { register: { mcpServer: { ...mcpServer('display-files', uniqueUrl()), version: '2.1\u0000' }, toolspec: toolspec() } }));
    assert.ok(versioned.details.some((d: WireJson) => d.path === '/mcpServer/version' && /control character U\+0000/.test(d.message) && d.hint), JSON.stringify(versioned.details));
  });

  test('a v0.3 card from an agent-card.json file part keeps its exact bytes', async () => {
    const text = `${JSON.stringify(v03Card('Weather Agent', uniqueUrl()), null, 4)}\n`;
    const task = await send(alice, [filePart(text, 'agent-card.json')]);
    const result = resultOf(task);
    assert.equal(result.protocolVersion, '0.3');
    assert.equal(task.artifacts[0].name, 'registration');
    const entry = resultOf(await op(alice, { get: { id: result.id } }));
    assert.deepEqual(entry.document, JSON.parse(text));
    const { createHash } = await import('node:crypto');
    assert.equal(entry.contentHash, createHash('sha256').update(text).digest('hex'), 'hash of the bytes as received');
  });

  test('an MCP server, inline and as toolspec.json beside its metadata', async () => {
    const server = mcpServer('files', uniqueUrl());
    const inline = resultOf(await op(alice, { register: { mcpServer: server, toolspec: toolspec() } }));
    assert.equal(inline.kind, 'mcp-server');
    assert.deepEqual(inline.indexed, { tools: 2 });
    const entry = resultOf(await op(alice, { get: { id: inline.id } }));
    assert.deepEqual(entry.document, { mcpServer: server, toolspec: toolspec() });
    assert.deepEqual(entry.interfaces, [{ url: server.url, protocolBinding: 'MCP' }]);

    const other = mcpServer('files-2', uniqueUrl());
    const file = resultOf(await send(alice, [filePart(JSON.stringify(toolspec()), 'toolspec.json'), dataPart({ register: { mcpServer: other } })]));
    assert.equal(file.created, true);
    assert.deepEqual(file.indexed, { tools: 2 });
  });

  test('a file part holding a whole MCP server document registers that server, whatever its name; half of one, or its tools beside its server, is told as the CLI tells it', async () => {
    // What `get --document` prints, uploaded as a file: read as an agent card, it was UNSUPPORTED_VERSION with eight card findings.
    const server = mcpServer('files-doc', uniqueUrl());
    const text = JSON.stringify({ mcpServer: server, toolspec: toolspec() }, null, 2);
    const stored = resultOf(await send(alice, [filePart(text, 'files.json')]));
    assert.equal(stored.kind, 'mcp-server');
    assert.deepEqual(stored.indexed, { tools: 2 });
    assert.deepEqual(resultOf(await op(alice, { get: { id: stored.id } })).document, { mcpServer: server, toolspec: toolspec() });
    // Named toolspec.json, it was a toolspec without "tools"; beside {"validate": {}} it is checked as the server it is.
    const checked = resultOf(await send(alice, [filePart(text, 'toolspec.json'), dataPart({ validate: {} })]));
    assert.equal(checked.valid, true);
    assert.equal(checked.kind, 'mcp-server');
    // Its server given again beside it is refused, naming where.
    const twice = errorOf(await send(alice, [filePart(text, 'toolspec.json'), dataPart({ register: { mcpServer: mcpServer('other', uniqueUrl()) } })]));
    assert.equal(twice.code, 'BAD_REQUEST');
    assert.match(twice.message, /File part 0 \("toolspec.json"\) is a whole MCP server document, with its own "mcpServer" and "toolspec": leave "mcpServer" out/);
    assert.deepEqual(twice.details.map((d: WireJson) => d.path), ['/parts/1/data/register/mcpServer']);
    // The CLI's words for a misshapen document (validate, register, import), whatever the file's name.
    const misshapen = async (doc: WireJson, name: string, data?: WireJson) => errorOf(await send(alice, [filePart(JSON.stringify(doc), name), ...(data ? [dataPart(data)] : [])]));
    const half = await misshapen({ mcpServer: server }, 'files.json');
    assert.equal(half.code, 'VALIDATION_FAILED');
    assert.equal(half.message, 'File part 0 ("files.json"): An MCP server document needs both "mcpServer" and "toolspec"; this one has no "toolspec".');
    assert.deepEqual(half.details.map((d: WireJson) => [d.path, d.rule]), [['/toolspec', 'required']]);
    const noServer = await misshapen({ toolspec: toolspec() }, 'mcp.json', { validate: {} });
    assert.deepEqual(noServer.details.map((d: WireJson) => [d.path, d.rule]), [['/mcpServer', 'required']]);
    // Its tools beside its server were stored inside the toolspec, "mcpServer" and all.
    const beside = await misshapen({ mcpServer: server, ...toolspec() }, 'toolspec.json', { register: { mcpServer: mcpServer('beside', uniqueUrl()) } });
    assert.equal(beside.code, 'VALIDATION_FAILED');
    assert.equal(beside.message, 'File part 0 ("toolspec.json"): An MCP server document keeps its tools under "toolspec"; this one has "tools" beside "mcpServer".');
    assert.deepEqual(beside.details.map((d: WireJson) => [d.path, d.rule]), [['/tools', 'misplaced']]);
  });

  test('a file part holding no JSON object is told what it holds and what to send instead, not to rename it', async () => {
    // Each was told "name it agent-card.json or toolspec.json", which then refused it as no object.
    const refusal = async (text: string, name: string) => errorOf(await send(alice, [filePart(text, name)]));
    const cards = await refusal(JSON.stringify([v1Card('One', uniqueUrl()), v1Card('Two', uniqueUrl())]), 'cards.json');
    assert.equal(cards.code, 'BAD_REQUEST');
    assert.equal(
      cards.message,
      'File part 0 ("cards.json") holds an array of 2 values, not a document: a file part carries one JSON object, an agent card, an MCP server document ({"mcpServer": {...}, "toolspec": {...}}) or a toolspec ({"tools": [...]}). ' +
        "To register the documents the array holds, send each in a message of its own (jq -c '.[]' cards.json writes them one per line; the registry's operator can load such a file whole with a2a-registry import).",
    );
    // A bare list of tools: wrapped, beside its server.
    const tools = await refusal(JSON.stringify(toolspec().tools), 'tools.json');
    assert.equal(
      tools.message,
      'File part 0 ("tools.json") holds a bare list of tools (a JSON array); a toolspec is an object: wrap the list as {"tools": [...]}, as tools/list returns it, and send it beside {"data": {"register": {"mcpServer": {"name": "...", "url": "https://..."}}}, "mediaType": "application/json"}.',
    );
    assert.match((await refusal('"agent"', 'x.json')).message, /^File part 0 \("x.json"\) holds a string, not a document: .* Check that the file is the document meant\.$/);
    for (const error of [cards, tools]) assert.doesNotMatch(error.message, /name it/);
  });

  test('an invalid card is REJECTED with paths and nothing is stored', async () => {
    const before = resultOf(await op(admin, { list: { pageSize: 100 } })).entries.length;
    const card: WireJson = v1Card('Broken', uniqueUrl());
    delete card.skills[0].tags;
    const error = errorOf(await op(alice, { register: { agentCard: card } }));
    assert.equal(error.code, 'VALIDATION_FAILED');
    assert.ok(error.details.some((d: WireJson) => d.path === '/skills/0/tags'), JSON.stringify(error.details));
    const afterCount = resultOf(await op(admin, { list: { pageSize: 100 } })).entries.length;
    assert.equal(afterCount, before);
  });

  test('a document over 10 KB is TOO_LARGE', async () => {
    const card = v1Card('Big', uniqueUrl());
    card.description = 'x'.repeat(11_000);
    const error = errorOf(await op(alice, { register: { agentCard: card } }));
    assert.equal(error.code, 'TOO_LARGE');
    assert.match(error.message, /11,\d{3} bytes; the limit is 10,240 bytes/);
  });

  test('a document over the limit is one finding, rule too-large, in the same words, at its own part: a data part\'s document, a file part\'s bytes', async () => {
    const card = v1Card('Big', uniqueUrl());
    card.description = 'x'.repeat(11_000);
    const bytes = (n: number) => `${n.toLocaleString('en-US')} bytes exceeds the limit of 10,240 bytes`;
    const hint = 'Shorten descriptions and examples, or remove fields the registry does not need.';
    const inline = JSON.stringify(card);
    // The data part's was said of the document's root (path ""), the file part's as "11,043 bytes > 10,240 bytes", without a rule.
    for (const [parts, finding] of [
      [[dataPart({ register: { agentCard: card } })], { path: '/parts/0/data/register/agentCard', rule: 'too-large', message: bytes(Buffer.byteLength(inline)), hint }],
      [[dataPart({ validate: { agentCard: card } })], { path: '/parts/0/data/validate/agentCard', rule: 'too-large', message: bytes(Buffer.byteLength(inline)), hint }],
      [[filePart(inline, 'agent-card.json')], { path: '/parts/0/raw', rule: 'too-large', message: bytes(Buffer.byteLength(inline)), hint }],
      [[dataPart({ validate: {} }), filePart(inline, 'agent-card.json')], { path: '/parts/1/raw', rule: 'too-large', message: bytes(Buffer.byteLength(inline)), hint }],
      [
        [dataPart({ register: { mcpServer: mcpServer('big-tools', 'https://big-tools.example.org/mcp'), toolspec: { tools: [{ name: 't', description: 'x'.repeat(11_000), inputSchema: { type: 'object' } }] } } })],
        { path: '/parts/0/data/register/toolspec', rule: 'too-large', message: /^11,\d{3} bytes exceeds the limit of 10,240 bytes$/, hint },
      ],
    ] as const) {
      const error = errorOf(await send(alice, [...parts]));
      assert.equal(error.code, 'TOO_LARGE', JSON.stringify(error).slice(0, 300));
      assert.equal(error.details.length, 1, JSON.stringify(error.details));
      const [detail] = error.details as WireJson[];
      assert.deepEqual([detail!.path, detail!.rule, detail!.hint], [finding.path, finding.rule, finding.hint]);
      if (typeof finding.message === 'string') assert.equal(detail!.message, finding.message);
      else assert.match(detail!.message, finding.message);
    }
  });
});

describe('updates and revisions', () => {
  test('same owner, same URL: same id, revision + 1; identical re-send changes nothing', async () => {
    const url = uniqueUrl();
    const first = resultOf(await op(alice, { register: { agentCard: v1Card('Rev Agent', url) } }));
    const again = resultOf(await op(alice, { register: { agentCard: v1Card('Rev Agent', url) } }));
    assert.equal(again.id, first.id);
    assert.equal(again.revision, 1);
    assert.equal(again.changed, false);
    assert.equal(again.created, false);

    // The same card as a file (pretty-printed, keys in another order) and as a data part: two
    // texts of one document, and neither is a new revision.
    const { name, ...rest } = v1Card('Rev Agent', url);
    for (const parts of [[filePart(JSON.stringify({ ...rest, name }, null, 2), 'agent-card.json')], [dataPart({ register: { agentCard: v1Card('Rev Agent', url) } })]]) {
      const resent = resultOf(await send(alice, parts));
      assert.deepEqual([resent.id, resent.revision, resent.changed], [first.id, 1, false], JSON.stringify(parts).slice(0, 80));
    }

    const changed = v1Card('Rev Agent', url);
    changed.description = 'Now also does receipts.';
    const second = resultOf(await op(alice, { register: { agentCard: changed } }));
    assert.equal(second.id, first.id);
    assert.equal(second.revision, 2);
    assert.equal(second.changed, true);

    const current = resultOf(await op(alice, { get: { id: first.id } }));
    assert.equal(current.revision, 2);
    assert.equal(current.document.description, 'Now also does receipts.');
    const old = resultOf(await op(alice, { get: { id: first.id, revision: 1 } }));
    assert.equal(old.revision, 1);
    assert.equal(old.document.description, v1Card('Rev Agent', url).description);
    assert.equal(errorOf(await op(alice, { get: { id: first.id, revision: 7 } })).code, 'NOT_FOUND');
    // get lists the readable revisions, newest first, with when each was stored: the same list for any revision read.
    assert.deepEqual(
      current.revisions.map((r: WireJson) => r.revision),
      [2, 1],
    );
    assert.equal(current.revisions[0].updatedAt, current.updatedAt);
    assert.equal(current.revisions[1].updatedAt, old.updatedAt);
    assert.deepEqual(old.revisions, current.revisions);
  });

  test('50 parallel registrations of one agent by its owner leave exactly one entry', async () => {
    const url = uniqueUrl();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => {
        const card = v1Card('Parallel Agent', url);
        card.version = `1.0.${i}`;
        return op(alice, { register: { agentCard: card } }).then(resultOf);
      }),
    );
    const ids = new Set(results.map((r) => r.id));
    assert.equal(ids.size, 1);
    assert.equal(results.filter((r) => r.created).length, 1);
    const listed = resultOf(await op(alice, { list: { filter: { owner: 'alice' }, pageSize: 100 } })).entries;
    assert.equal(listed.filter((e: WireJson) => e.name === 'Parallel Agent').length, 1);
    const current = resultOf(await op(alice, { get: { id: [...ids][0] } }));
    assert.equal(current.revision, 50);
  });
});

describe('ownership', () => {
  test('writes without a token are UNAUTHENTICATED; a wrong token is refused by the door (conformance-auth.test.ts)', async () => {
    const error = errorOf(await op(anonymous, { register: { agentCard: v1Card('Anon', uniqueUrl()) } }));
    assert.equal(error.code, 'UNAUTHENTICATED');
    assert.match(error.message, /Authorization: Bearer/);
    const wrong = await sdkClient(registry.url, { token: 'not-a-real-token-123456' });
    await assert.rejects(op(wrong, { unregister: { id: 'x' } }), /not recognised/);
  });

  test('another principal cannot update or unregister; admin can do both and keeps the owner', async () => {
    const url = uniqueUrl();
    const mine = resultOf(await op(alice, { register: { agentCard: v1Card('Owned', url) } }));
    const changed = v1Card('Owned', url);
    changed.version = '9.9.9';
    const taken = errorOf(await op(bob, { register: { agentCard: changed } }));
    assert.equal(taken.code, 'FORBIDDEN');
    assert.match(taken.message, new RegExp(`already registered as entry ${mine.id} by another principal`));
    assert.doesNotMatch(JSON.stringify(taken), /alice/, 'never the owner');
    // The path of each use of the URL, as for a taken secondary URL.
    assert.deepEqual(
      taken.details.map((d: WireJson) => [d.path, d.rule]),
      [['/supportedInterfaces/0/url', 'identity-taken']],
    );
    assert.equal(errorOf(await op(bob, { unregister: { id: mine.id } })).code, 'FORBIDDEN');
    const byAdmin = resultOf(await op(admin, { register: { agentCard: changed } }));
    assert.equal(byAdmin.id, mine.id);
    assert.equal(byAdmin.revision, 2);
    assert.equal(resultOf(await op(admin, { get: { id: mine.id } })).owner, 'alice');
    const removed = resultOf(await op(admin, { unregister: { id: mine.id } }));
    assert.equal(removed.id, mine.id);
    assert.equal(errorOf(await op(alice, { get: { id: mine.id } })).code, 'NOT_FOUND');
  });

  test('the owner unregisters; a second unregister is NOT_FOUND; search no longer finds it', async () => {
    const card = v1Card('Ephemeral Zebra Agent', uniqueUrl());
    const { id } = resultOf(await op(alice, { register: { agentCard: card } }));
    assert.ok(resultOf(await op(anonymous, { search: { query: 'zebra' } })).results.some((h: WireJson) => h.id === id));
    const task = await op(alice, { unregister: { id } });
    assert.equal(task.artifacts[0].name, 'unregistration');
    assert.equal(errorOf(await op(alice, { unregister: { id } })).code, 'NOT_FOUND');
    assert.ok(!resultOf(await op(anonymous, { search: { query: 'zebra' } })).results.some((h: WireJson) => h.id === id));

    // Ids are taken in any case (as get takes them): unregistered by its id in capitals, the entry
    // leaves search too, not only storage (the index was told the id as sent, and kept it).
    const upper = resultOf(await op(alice, { register: { agentCard: v1Card('Ephemeral Quokka Agent', uniqueUrl()) } })).id as string;
    assert.ok(resultOf(await op(anonymous, { search: { query: 'quokka' } })).results.some((h: WireJson) => h.id === upper));
    assert.equal(resultOf(await op(alice, { unregister: { id: upper.toUpperCase() } })).id, upper);
    assert.equal(errorOf(await op(alice, { get: { id: upper } })).code, 'NOT_FOUND');
    assert.deepEqual(resultOf(await op(anonymous, { search: { query: 'quokka' } })).results, []);
  });
});

describe('list', () => {
  test('pages newest first with opaque tokens, each entry exactly once, filtered by kind and owner', async () => {
    for (let i = 0; i < 7; i++) await op(bob, { register: { mcpServer: mcpServer(`pager-${i}`, uniqueUrl()), toolspec: toolspec() } });
    const seen: WireJson[] = [];
    let pageToken: string | undefined;
    do {
      const page = resultOf(await op(anonymous, { list: { filter: { kind: 'mcp-server', owner: 'bob' }, pageSize: 3, ...(pageToken ? { pageToken } : {}) } }));
      assert.ok(page.entries.length <= 3);
      for (const e of page.entries) assert.equal(e.document, undefined, 'list items leave the document out');
      seen.push(...page.entries);
      pageToken = page.nextPageToken;
    } while (pageToken);
    assert.equal(seen.length, 7);
    assert.equal(new Set(seen.map((e) => e.id)).size, 7);
    assert.deepEqual(seen.map((e) => e.name), [6, 5, 4, 3, 2, 1, 0].map((i) => `pager-${i}`));
    assert.ok(seen.every((e) => e.kind === 'mcp-server' && e.owner === 'bob'));
  });

  test('a tampered page token is BAD_REQUEST', async () => {
    const page = resultOf(await op(anonymous, { list: { pageSize: 1 } }));
    assert.ok(page.nextPageToken);
    const tampered = `${page.nextPageToken.slice(0, -2)}xx`;
    assert.equal(errorOf(await op(anonymous, { list: { pageSize: 1, pageToken: tampered } })).code, 'BAD_REQUEST');
    const otherQuery = errorOf(await op(anonymous, { list: { pageSize: 1, pageToken: page.nextPageToken, filter: { kind: 'agent' } } }));
    assert.match(otherQuery.message, /another query/);
  });

  test('a page token is no quick check of a guess of the registry\'s tokens (without REGISTRY_PAGE_TOKEN_SECRET its key was one SHA-256 of them)', async () => {
    const page = resultOf(await op(anonymous, { list: { pageSize: 1 } }));
    const [payload, signature] = String(page.nextPageToken).split('.') as [string, string];
    const signedWith = (key: Buffer): string => createHmac('sha256', createHash('sha256').update(key).digest()).update(payload).digest('base64url').slice(0, 22);
    // What anyone who can list could compute for a guess of every token, billions of guesses a second.
    assert.notEqual(signedWith(Buffer.from(`page-tokens:${Object.values(TOKENS).sort().join(',')}`)), signature);
    // The key is derived through scrypt instead (still from the tokens alone: replicas given the same ones agree).
    assert.equal(signedWith(await pageTokenKeyOf(Object.values(TOKENS))), signature);
  });
});

describe('first start without tokens', () => {
  test('generates an admin token file (0600) that works, and reuses it on the next start', async () => {
    const dataDir = tempDir();
    const first = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: '' });
    const file = path.join(dataDir, 'admin-token');
    const token = fs.readFileSync(file, 'utf8').trim();
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const client = await sdkClient(first.url, { token });
    const result = resultOf(await op(client, { register: { agentCard: v1Card('Local', 'https://local.example.org/a2a') } }));
    assert.equal(resultOf(await op(client, { get: { id: result.id } })).owner, 'admin');
    assert.equal(errorOf(await op(await sdkClient(first.url), { register: { agentCard: v1Card() } })).code, 'UNAUTHENTICATED');
    await first.close();
    const second = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: '' });
    assert.equal(fs.readFileSync(file, 'utf8').trim(), token);
    assert.equal(resultOf(await op(await sdkClient(second.url, { token }), { get: { id: result.id } })).id, result.id);
    await second.close();
  });

  test('an empty admin-token file (a first start stopped while writing it) is replaced; a short token stops start-up, saying what to do', async () => {
    const dataDir = tempDir();
    const file = path.join(dataDir, 'admin-token');
    fs.writeFileSync(file, '', { mode: 0o600 });
    const started = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: '' });
    try {
      const token = fs.readFileSync(file, 'utf8').trim();
      assert.match(token, /^a2ar_.{32}$/);
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      resultOf(await op(await sdkClient(started.url, { token }), { register: { agentCard: v1Card('Replaced', 'https://replaced.example.org/a2a') } }));
      assert.deepEqual(fs.readdirSync(dataDir).filter((f) => f.startsWith('admin-token.')), [], 'no temporary file left behind');
    } finally {
      await started.close();
    }
    fs.writeFileSync(file, 'abc\n');
    await assert.rejects(startTestRegistry({ REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: '' }), /admin-token holds an admin token of 3 characters; tokens need at least 16\. Write a longer one into it, or delete the file/);
    assert.equal(fs.readFileSync(file, 'utf8'), 'abc\n', 'never overwritten');
  });

  test("a data directory it creates, its database and its saved index are its user's alone, whatever the umask", async () => {
    const dataDir = path.join(tempDir(), 'new-data-dir');
    const umask = process.umask(0);
    try {
      const started = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: '' });
      // One entry, so there is an index to save at shutdown (an empty one is not saved).
      const admin = await sdkClient(started.url, { token: fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim() });
      resultOf(await op(admin, { register: { agentCard: v1Card('Private Agent', 'https://private.example.org/a2a') } }));
      await started.close();
    } finally {
      process.umask(umask);
    }
    assert.equal(fs.statSync(dataDir).mode & 0o777, 0o700);
    for (const file of ['registry.db', 'admin-token', 'search-index.snapshot']) assert.equal(fs.statSync(path.join(dataDir, file)).mode & 0o777, 0o600, file);
  });

  test('a database an earlier release created readable by other users (by the umask, before 0600) is told at start, with the fix; a private one is not', async () => {
    // Releases before the registry made its files private left registry.db as the umask gave it
    // (0644 under the usual 022, as 3ed8ca1 did): an upgrade kept the webhook tokens readable by
    // every local user, silently.
    const file = path.join(tempDir(), 'registry.db');
    const opened = async (): Promise<string[]> => {
      const lines: string[] = [];
      const store = new SqliteStore({ file, notice: (message) => lines.push(message) });
      await store.open();
      await store.close();
      return lines.filter((line) => /readable by other users/.test(line));
    };
    assert.deepEqual(await opened(), [], 'one it creates is private');
    fs.chmodSync(file, 0o644);
    const told = await opened();
    assert.equal(told.length, 1, 'told once');
    assert.match(told[0]!, new RegExp(`${file} is readable by other users \\(mode 0644;.*webhook tokens.*chmod 600 ${file}`));
    assert.equal(fs.statSync(file).mode & 0o777, 0o644, 'the mode the operator has is left as it is');
    fs.chmodSync(file, 0o600);
    assert.deepEqual(await opened(), []);
  });

  test('a data directory that cannot be used stops start-up naming REGISTRY_DATA_DIR and the way out', async () => {
    const notADirectory = path.join(tempDir(), 'a-file');
    fs.writeFileSync(notADirectory, 'x');
    // The database says so, with tokens configured or not: it is opened before an admin token is
    // generated (a refused start leaves no token behind).
    for (const tokens of [{ REGISTRY_TOKENS: '' }, {}]) {
      await assert.rejects(
        startTestRegistry({ REGISTRY_DATA_DIR: notADirectory, ...tokens }),
        new RegExp(`cannot open the database file ${notADirectory}/registry.db for writing .*is a file, not a directory\\. Check that REGISTRY_DATA_DIR \\(${notADirectory}\\) is a directory`),
      );
    }
    // A directory where the database file should be (what docker run -v makes of a host file that
    // does not exist): the start said only "EISDIR: illegal operation on a directory".
    const dataDir = tempDir();
    fs.mkdirSync(path.join(dataDir, 'registry.db'));
    await assert.rejects(
      startTestRegistry({ REGISTRY_DATA_DIR: dataDir }),
      new RegExp(
        `^Error: cannot open the database file ${dataDir}/registry\\.db for writing \\(EISDIR: [^)]*\\): ${dataDir}/registry\\.db is a directory, not a file \\(as docker run -v makes for a host file that does not exist\\): move it aside\\. Check that REGISTRY_DATA_DIR`,
      ),
    );
  });

  test('REGISTRY_PUBLIC_READ=false makes every call need a token (the door refuses; see conformance-auth.test.ts)', async () => {
    const closed = await startTestRegistry({ REGISTRY_PUBLIC_READ: 'false' });
    try {
      await assert.rejects(op(await sdkClient(closed.url), { search: { query: 'x' } }), /needs a token/);
      await assert.rejects(op(await sdkClient(closed.url), { validate: { agentCard: v1Card() } }), /needs a token/);
      resultOf(await op(await sdkClient(closed.url, { token: TOKENS.bob }), { list: {} }));
      resultOf(await op(await sdkClient(closed.url, { token: TOKENS.bob }), { validate: { agentCard: v1Card() } }));
    } finally {
      await closed.close();
    }
  });
});
