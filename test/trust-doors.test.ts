/**
 * Trust through every door (issue 15): registering through the MCP door is held to the same URL
 * ownership, scheme and signature rules as A2A `register` (one service), and the `verified` flag
 * and filter work through MCP search/list, the ARD search and list, and the AI Catalog. A real
 * registry on 127.0.0.1 with a real JWKS file, the MCP SDK's client, plain HTTP for ARD.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { signCard } from '../src/trust/card-signing.js';
import { generateSigningKey, parseSigningKey, type SigningKey } from '../src/trust/jwks.js';
import { ACCEPTED_ALGORITHMS } from '../src/validation/signature.js';
import { errorOf, op, resultOf, sdkClient, type WireJson } from './support/client.js';
import { mcpServer, toolspec, v1Card } from './support/documents.js';
import { callTool, connectMcp, errorText, structured } from './support/mcp-client.js';
import { TOKENS, startTestRegistry, tempDir, type TestRegistry } from './support/registry.js';

const dir = tempDir('a2a-registry-trust-doors-');
let registry: TestRegistry;
let trusted: SigningKey;
let stranger: SigningKey;
const clients: Client[] = [];
const ids = { signed: '', unsigned: '', strangers: '', server: '' };

async function mcpClient(token?: string): Promise<Client> {
  const client = await connectMcp(registry.url, 'trust-doors-test', token);
  clients.push(client);
  return client;
}
const call = callTool;
async function getJson(url: string): Promise<{ status: number; body: WireJson }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as WireJson };
}
async function postJson(url: string, body: unknown): Promise<{ status: number; body: WireJson }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as WireJson };
}
const sorted = (list: string[]) => [...list].sort();

before(async () => {
  const [t, s] = await Promise.all([generateSigningKey('ES256', 'doors-trusted'), generateSigningKey('ES256', 'doors-stranger')]);
  trusted = await parseSigningKey(t.privateJwk, 'doors-trusted', ACCEPTED_ALGORITHMS);
  stranger = await parseSigningKey(s.privateJwk, 'doors-stranger', ACCEPTED_ALGORITHMS);
  const jwks = path.join(dir, 'jwks.json');
  fs.writeFileSync(jwks, JSON.stringify({ keys: [t.publicJwk] }));
  registry = await startTestRegistry({ REGISTRY_TRUSTED_KEYS: jwks, REGISTRY_RATE_LIMITS: 'false' });
});
after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await registry.close();
  fs.rmSync(registry.dataDir, { recursive: true, force: true });
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('registering through the MCP door', () => {
  let alice: Client;
  let bob: Client;
  before(async () => {
    [alice, bob] = await Promise.all([mcpClient(TOKENS.alice), mcpClient(TOKENS.bob)]);
  });

  test('a signed card is verified; the result carries verified, kid and each signature', async () => {
    const card = await signCard(v1Card('Doors Signed Ledger', 'https://ledger.doors.example.org/a2a'), trusted);
    const result = structured(await call(alice, 'register_agent', { agentCard: card }));
    assert.equal(result.verified, true);
    assert.equal(result.kid, 'doors-trusted');
    assert.equal(result.jwks, 'registry');
    assert.deepEqual(result.signatures, [{ status: 'verified', kid: 'doors-trusted', alg: 'ES256', jwks: 'registry' }]);
    ids.signed = result.id;
  });

  test('unsigned and unknown-key cards are registered unverified, with a warning', async () => {
    const unsigned = structured(await call(alice, 'register_agent', { agentCard: v1Card('Doors Unsigned Ledger', 'https://plain.doors.example.org/a2a') }));
    assert.equal(unsigned.verified, false);
    assert.ok(unsigned.warnings.some((w: WireJson) => /sign/i.test(w.message)), JSON.stringify(unsigned.warnings));
    ids.unsigned = unsigned.id;
    const card = await signCard(v1Card('Doors Stranger Ledger', 'https://stranger.doors.example.org/a2a'), stranger);
    const strangers = structured(await call(alice, 'register_agent', { agentCard: card }));
    assert.equal(strangers.verified, false);
    assert.equal(strangers.signatures[0].status, 'unknown-key');
    ids.strangers = strangers.id;
  });

  test('a tampered card is refused with SIGNATURE_INVALID and never stored', async () => {
    const card = (await signCard(v1Card('Doors Tampered Ledger', 'https://tampered.doors.example.org/a2a'), trusted)) as WireJson;
    card.description = 'Something the key holder never signed.';
    const refused = await call(alice, 'register_agent', { agentCard: card });
    assert.match(errorText(refused), /^SIGNATURE_INVALID: [\s\S]*\/signatures\/0/);
    // The signature's path is the card's, as the document's other findings, on MCP and A2A alike (not under the request's arguments).
    const details = (r: WireJson[]) => r.map((d) => [d.path, d.rule]);
    const mcpError = JSON.parse((refused.content as { text: string }[])[1]!.text).error;
    assert.deepEqual(details(mcpError.details), [['/signatures/0', 'signature-invalid']]);
    const a2aError = errorOf(await op(await sdkClient(registry.url, { token: TOKENS.alice }), { register: { agentCard: card } }));
    assert.deepEqual([a2aError.code, ...details(a2aError.details)], ['SIGNATURE_INVALID', ['/signatures/0', 'signature-invalid']]);
    const found = structured(await call(alice, 'search_agents', { query: 'Doors Tampered Ledger' }));
    assert.ok(!found.results.some((h: WireJson) => h.name === 'Doors Tampered Ledger'));
  });

  test("bob cannot claim a spelling of alice's URL, as an agent interface or as his MCP server's URL", async () => {
    const variant = 'HTTPS://Ledger.Doors.Example.org:443/a2a/#x';
    const asAgent = errorText(await call(bob, 'register_agent', { agentCard: v1Card('Bob Ledger', variant) }));
    assert.match(asAgent, /^FORBIDDEN: /);
    assert.ok(asAgent.includes(variant), 'names the conflicting URL');
    assert.ok(!/alice/.test(asAgent), 'never names the other owner');
    const asServer = errorText(await call(bob, 'register_mcp_server', { mcpServer: mcpServer('bob-files', 'https://ledger.doors.example.org/a2a?'), toolspec: toolspec() }));
    assert.match(asServer, /^FORBIDDEN: /);
  });

  test('schemes other than http(s) are refused with the JSON path', async () => {
    const agent = errorText(await call(bob, 'register_agent', { agentCard: v1Card('Bob Script', 'javascript:alert(1)') }));
    assert.match(agent, /^VALIDATION_FAILED: [\s\S]*\/supportedInterfaces\/0\/url/);
    const server = errorText(await call(bob, 'register_mcp_server', { mcpServer: mcpServer('bob-ftp', 'ftp://files.doors.example.org/mcp'), toolspec: toolspec() }));
    assert.match(server, /^VALIDATION_FAILED: [\s\S]*\/mcpServer\/url/);
    const result = structured(await call(bob, 'register_mcp_server', { mcpServer: mcpServer('bob-files', 'https://bob.doors.example.org/mcp'), toolspec: toolspec() }));
    assert.equal(result.verified, undefined, 'MCP servers have no signatures');
    ids.server = result.id;
  });
});

describe('the verified flag and filter on every door', () => {
  let anonymous: Client;
  before(async () => {
    anonymous = await mcpClient();
  });

  test('A2A search and list', async () => {
    const a2a = await sdkClient(registry.url);
    const hits = async (verified: boolean) =>
      resultOf(await op(a2a, { search: { query: 'ledger', filter: { verified } } })).results.map((h: WireJson) => h.id);
    assert.deepEqual(await hits(true), [ids.signed]);
    assert.deepEqual(sorted(await hits(false)), sorted([ids.unsigned, ids.strangers]));
    const listed = resultOf(await op(a2a, { list: { filter: { verified: true } } })).entries;
    assert.deepEqual(listed.map((e: WireJson) => [e.id, e.verified, e.kid, e.jwks]), [[ids.signed, true, 'doors-trusted', 'registry']]);
    assert.match(errorOf(await op(a2a, { list: { filter: { verified: 'yes' } } })).code, /BAD_REQUEST/);
  });

  test('MCP search_agents and list_agents: hits and entries say verified (and kid), and filter on it', async () => {
    const all = structured(await call(anonymous, 'search_agents', { query: 'ledger' }));
    const signed = all.results.find((h: WireJson) => h.id === ids.signed);
    assert.equal(signed.verified, true);
    assert.equal(signed.kid, 'doors-trusted');
    assert.equal(all.results.find((h: WireJson) => h.id === ids.unsigned).verified, false);
    const text = (await call(anonymous, 'search_agents', { query: 'ledger', filter: { verified: true } })).content[0] as { text: string };
    assert.match(text.text, /Doors Signed Ledger .*signature verified \(kid doors-trusted, one of the registry operator's own keys\)/);
    const only = structured(await call(anonymous, 'search_agents', { query: 'ledger', filter: { verified: true } }));
    assert.deepEqual(only.results.map((h: WireJson) => h.id), [ids.signed]);
    const others = structured(await call(anonymous, 'search_agents', { query: 'ledger', filter: { verified: false } }));
    assert.deepEqual(sorted(others.results.map((h: WireJson) => h.id)), sorted([ids.unsigned, ids.strangers]));
    const listed = structured(await call(anonymous, 'list_agents', { verified: true }));
    assert.deepEqual(listed.entries.map((e: WireJson) => [e.id, e.verified, e.kid, e.jwks]), [[ids.signed, true, 'doors-trusted', 'registry']]);
    const unverified = structured(await call(anonymous, 'list_agents', { verified: false }));
    assert.deepEqual(sorted(unverified.entries.map((e: WireJson) => e.id)), sorted([ids.unsigned, ids.strangers]));
    const entry = structured(await call(anonymous, 'get_agent', { id: ids.signed }));
    assert.equal(entry.verified, true);
    assert.deepEqual(entry.signatures, [{ status: 'verified', kid: 'doors-trusted', alg: 'ES256', jwks: 'registry' }]);
  });

  test('ARD search: the verified filter key, and verified/verifiedKid in each result\'s metadata', async () => {
    const all = await postJson(`${registry.url}/search`, { query: { text: 'ledger' } });
    assert.equal(all.status, 200, JSON.stringify(all.body));
    const byId = new Map(all.body.results.map((r: WireJson) => [r.metadata.registryId, r.metadata]));
    const signed = byId.get(ids.signed) as WireJson;
    assert.equal(signed.verified, true);
    assert.equal(signed.verifiedKid, 'doors-trusted');
    assert.equal(signed.verifiedJwks, 'registry', "the key set: the operator's own keys");
    assert.equal((byId.get(ids.unsigned) as WireJson).verified, false);
    assert.equal((byId.get(ids.unsigned) as WireJson).verifiedKid, undefined);
    const only = await postJson(`${registry.url}/search`, { query: { text: 'ledger', filter: { verified: true } } });
    assert.deepEqual(only.body.results.map((r: WireJson) => r.metadata.registryId), [ids.signed]);
    const others = await postJson(`${registry.url}/search`, { query: { text: 'ledger', filter: { verified: 'false' } } });
    assert.deepEqual(sorted(others.body.results.map((r: WireJson) => r.metadata.registryId)), sorted([ids.unsigned, ids.strangers]));
    const bad = await postJson(`${registry.url}/search`, { query: { text: 'ledger', filter: { verified: 'maybe' } } });
    assert.equal(bad.status, 400);
  });

  test('ARD list: verified = true, alone or with a type clause; the catalog entries say verified', async () => {
    const list = async (filter: string) => {
      const { status, body } = await getJson(`${registry.url}/agents?filter=${encodeURIComponent(filter)}`);
      assert.equal(status, 200, JSON.stringify(body));
      return body.items;
    };
    const ids_ = (entries: WireJson[]) => entries.map((e) => e.metadata?.registryId).filter(Boolean);
    assert.deepEqual(ids_(await list('verified = true')), [ids.signed]);
    assert.deepEqual(ids_(await list("type = 'application/a2a-agent-card+json' AND verified = true")), [ids.signed]);
    assert.deepEqual(sorted(ids_(await list("type = 'application/a2a-agent-card+json' and verified = false"))), sorted([ids.unsigned, ids.strangers]));
    assert.deepEqual(ids_(await list("type = 'application/mcp-server-card+json' AND verified = true")), []);
    const bad = await getJson(`${registry.url}/agents?filter=${encodeURIComponent('verified = perhaps')}`);
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /verified = true\|false/);

    const catalog = await getJson(`${registry.url}/.well-known/ai-catalog.json`);
    const entries: WireJson[] = catalog.body.entries;
    const meta = (id: string) => entries.find((e) => e.metadata?.registryId === id)?.metadata;
    assert.equal(meta(ids.signed).verified, true);
    assert.equal(meta(ids.signed).verifiedKid, 'doors-trusted');
    assert.equal(meta(ids.signed).verifiedJwks, 'registry');
    assert.equal(meta(ids.unsigned).verified, false);
    assert.equal(meta(ids.server).verified, undefined, 'MCP servers are never signed');
  });
});
