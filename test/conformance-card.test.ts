/**
 * The well-known card per requested protocol version (spec 3.6, 8.2, 8.6): v1.0 clients that
 * say so get the v1.0 card; every other request (v0.3 clients send no version) gets the
 * legacy-compatible superset, which the official v0.3 schema accepts and which keeps every v1.0
 * field. Each variant has its own ETag and 304s; Vary: A2A-Version keeps caches honest. The
 * card's top-level security requirements follow REGISTRY_PUBLIC_READ.
 * Also pins @a2a-js/sdk's own v0.3 translation of a card (toCompatAgentCard, reached through its
 * legacy card handler): ours must contain it, so an SDK upgrade that changes it shows here.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import express from 'express';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { AgentCard } from '@a2a-js/sdk';
import { agentCardHandler } from '@a2a-js/sdk/server/express';
import { createDocumentValidator } from '../src/validation/index.js';
import type { WireJson } from './support/client.js';
import { REPO_ROOT, startTestRegistry, type TestRegistry } from './support/registry.js';

let registry: TestRegistry;
const cardUrl = () => `${registry.url}/.well-known/agent-card.json`;
const getCard = async (headers: Record<string, string> = {}, query = '') => {
  const res = await fetch(`${cardUrl()}${query}`, { headers });
  return { res, card: (await res.json()) as WireJson };
};
const schema = (file: string) => JSON.parse(fs.readFileSync(`${REPO_ROOT}schemas/${file}`, 'utf8'));

function compile(file: string, draft: 'draft-07' | '2020-12') {
  const ajv = draft === '2020-12' ? new Ajv2020({ allErrors: true, strict: false }) : new Ajv({ allErrors: true, strict: false });
  addFormats.default(ajv);
  return ajv.compile(schema(file));
}

/** Every member of `part`, recursively, is in `whole` with the same value ('' is proto3's absent string). */
function assertContains(whole: unknown, part: unknown, path = '$'): void {
  if (part === '' && whole === undefined) return;
  if (typeof part !== 'object' || part === null) return assert.deepEqual(whole, part, path);
  assert.equal(Array.isArray(whole), Array.isArray(part), `${path}: array vs object`);
  assert.ok(typeof whole === 'object' && whole !== null, `${path} is missing`);
  if (Array.isArray(part)) assert.equal((whole as unknown[]).length, part.length, `${path}.length`);
  for (const [key, value] of Object.entries(part)) assertContains((whole as Record<string, unknown>)[key], value, `${path}.${key}`);
}

/** The v0.3 card @a2a-js/sdk's own legacy card handler serves for the v1.0 card `v1`. */
async function sdkLegacyCard(v1: WireJson): Promise<WireJson> {
  const app = express();
  app.use('/card', agentCardHandler({ agentCardProvider: async () => AgentCard.fromJSON(v1), legacyCompat: { enabled: true } }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    return (await (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/card`)).json()) as WireJson;
  } finally {
    server.close();
  }
}

before(async () => {
  registry = await startTestRegistry();
});
after(() => registry.close());

describe('the card per requested version', () => {
  test('without a version: the superset card, valid against the v0.3 schema, with every v1.0 field', async () => {
    const { res, card } = await getCard();
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(card.url, `${registry.url}/a2a/jsonrpc`);
    assert.equal(card.preferredTransport, 'JSONRPC');
    assert.equal(card.protocolVersion, '0.3');
    assert.equal(card.additionalInterfaces, undefined, 'only v0.3 interfaces are listed for v0.3 clients, and there is one');
    const v03 = compile('a2a-agent-card-v0.3.schema.json', 'draft-07');
    assert.ok(v03(card), JSON.stringify(v03.errors));
    const verdict = createDocumentValidator({ maxDocumentBytes: 10240 }).validateAgentCard(
      Object.fromEntries(Object.entries(card).filter(([k]) => k !== 'supportedInterfaces')),
      Buffer.byteLength(JSON.stringify(card)),
    );
    assert.equal(verdict.valid, true, JSON.stringify(verdict.errors));

    const { card: v1 } = await getCard({ 'A2A-Version': '1.0' });
    assertContains(card, v1);
    assert.deepEqual(card.securitySchemes.bearer.httpAuthSecurityScheme, v1.securitySchemes.bearer.httpAuthSecurityScheme);
    assert.equal(card.securitySchemes.bearer.type, 'http');
    assert.equal(card.securitySchemes.bearer.scheme, 'Bearer');
    assert.deepEqual(card.security, [{ bearer: [] }, {}]);
    const register = card.skills.find((s: WireJson) => s.id === 'register');
    assert.deepEqual(register.security, [{ bearer: [] }]);
  });

  test('A2A-Version 0.3 (or 0.3.0, or an empty header), or any version that is no 1.x (2.0, 0.2, a typo), is the same as none', async () => {
    const plain = await getCard();
    // Only a 1.x client gets the plain v1.0 card: 2.0 got it, though README says any other request gets the superset.
    for (const headers of [{ 'A2A-Version': '0.3' }, { 'A2A-Version': '0.3.0' }, { 'A2A-Version': '' }, { 'A2A-Version': '2.0' }, { 'A2A-Version': '10.1' }, { 'A2A-Version': '0.2' }, { 'A2A-Version': 'v1' }]) {
      const { res, card } = await getCard(headers);
      assert.deepEqual(card, plain.card, JSON.stringify(headers));
      assert.equal(res.headers.get('etag'), plain.res.headers.get('etag'));
    }
  });

  for (const [label, headers, query] of [
    ['A2A-Version: 1.0', { 'A2A-Version': '1.0' }, ''],
    ['A2A-Version: 1.0.0 (patch ignored)', { 'A2A-Version': '1.0.0' }, ''],
    ['A2A-Version: 1.1 (a 1.x client)', { 'A2A-Version': '1.1' }, ''],
    ['?A2A-Version=1.0 (query parameter)', {}, '?A2A-Version=1.0'],
    ['A2A-Version: 1.0 beside ?A2A-Version=2.0 (the header decides)', { 'A2A-Version': '1.0' }, '?A2A-Version=2.0'],
  ] as const) {
    test(`${label}: the v1.0 card, valid against the strict v1.0 schema`, async () => {
      const { res, card } = await getCard(headers, query);
      assert.equal(res.status, 200);
      for (const legacyField of ['url', 'preferredTransport', 'protocolVersion', 'security', 'additionalInterfaces']) {
        assert.equal(card[legacyField], undefined, legacyField);
      }
      const v1 = compile('a2a-agent-card-v1.0.schema.json', '2020-12');
      assert.ok(v1(card), JSON.stringify(v1.errors));
      assert.ok(AgentCard.fromJSON(card).supportedInterfaces.length === 3);
    });
  }

  test('each variant has its own ETag and 304; Vary names A2A-Version', async () => {
    const legacy = await fetch(cardUrl());
    const v1 = await fetch(cardUrl(), { headers: { 'A2A-Version': '1.0' } });
    const legacyTag = legacy.headers.get('etag')!;
    const v1Tag = v1.headers.get('etag')!;
    assert.ok(legacyTag && v1Tag && legacyTag !== v1Tag);
    for (const res of [legacy, v1]) assert.match(res.headers.get('vary') ?? '', /A2A-Version/i);
    assert.equal((await fetch(cardUrl(), { headers: { 'if-none-match': legacyTag } })).status, 304);
    assert.equal((await fetch(cardUrl(), { headers: { 'if-none-match': v1Tag, 'A2A-Version': '1.0' } })).status, 304);
    // A tag of the other variant does not match.
    assert.equal((await fetch(cardUrl(), { headers: { 'if-none-match': v1Tag } })).status, 200);
    assert.equal((await fetch(cardUrl(), { headers: { 'if-none-match': legacyTag, 'A2A-Version': '1.0' } })).status, 200);
    const head = await fetch(cardUrl(), { method: 'HEAD', headers: { 'A2A-Version': '1.0' } });
    assert.equal(head.headers.get('etag'), v1Tag);
  });
});

describe('with several v0.3 transports (gRPC on)', () => {
  test('the v0.3 card lists them all in additionalInterfaces, the main url and preferredTransport first (v0.3 5.6), and stays valid against the official v0.3 schema', async () => {
    const withGrpc = await startTestRegistry({ GRPC_PORT: '0' });
    try {
      const card = (await (await fetch(`${withGrpc.url}/.well-known/agent-card.json`)).json()) as WireJson;
      // It left the main one out: [{GRPC}] only.
      assert.deepEqual(card.additionalInterfaces, [
        { url: card.url, transport: card.preferredTransport },
        { url: withGrpc.grpcUrl, transport: 'GRPC' },
      ]);
      assert.deepEqual([card.url, card.preferredTransport], [`${withGrpc.url}/a2a/jsonrpc`, 'JSONRPC']);
      const project = compile('a2a-agent-card-v0.3.schema.json', 'draft-07');
      assert.ok(project(card), JSON.stringify(project.errors));
      const ajv = new Ajv({ strict: false });
      ajv.addSchema(JSON.parse(fs.readFileSync(`${REPO_ROOT}test/fixtures/reference/a2a-v0.3.0.schema.json`, 'utf8')), 'a2a-v0.3.0');
      const official = ajv.getSchema('a2a-v0.3.0#/definitions/AgentCard')!;
      assert.ok(official(card), JSON.stringify(official.errors));
      // The SDK's own translation, plus the main entry it leaves out.
      const sdk = await sdkLegacyCard((await (await fetch(`${withGrpc.url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json()) as WireJson);
      assert.deepEqual(card.additionalInterfaces, [{ url: sdk.url, transport: sdk.preferredTransport }, ...sdk.additionalInterfaces]);
      assertContains({ ...card, additionalInterfaces: card.additionalInterfaces.slice(1) }, sdk);
    } finally {
      await withGrpc.close();
    }
  });
});

describe('security requirements', () => {
  test('public reads: bearer, or nothing; the skills that need a token (register, watch, unregister, refresh) say so, in both generations', async () => {
    const { card } = await getCard({ 'A2A-Version': '1.0' });
    assert.deepEqual(card.securityRequirements, [{ schemes: { bearer: { list: [] } } }, { schemes: {} }]);
    // watch too: an anonymous {"watch": ...} is refused UNAUTHENTICATED (below), but its skill declared nothing.
    const needing = ['register', 'watch', 'unregister', 'refresh'];
    const { card: legacy } = await getCard();
    for (const skill of card.skills as WireJson[]) {
      const v03 = legacy.skills.find((s: WireJson) => s.id === skill.id);
      if (needing.includes(skill.id)) {
        assert.deepEqual(skill.securityRequirements, [{ schemes: { bearer: { list: [] } } }], skill.id);
        assert.deepEqual(v03.security, [{ bearer: [] }], `${skill.id}, v0.3`);
      } else {
        assert.equal(skill.securityRequirements, undefined, skill.id);
        assert.equal(v03.security, undefined, `${skill.id}, v0.3`);
      }
    }
    const anonymousWatch = await fetch(`${registry.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: { message: { messageId: 'w', role: 'ROLE_USER', parts: [{ data: { watch: { query: 'x' } } }] } } }),
    });
    assert.match(await anonymousWatch.text(), /"code":"UNAUTHENTICATED"/);
  });

  test('REGISTRY_PUBLIC_READ=false: the bearer token only', async () => {
    const closed = await startTestRegistry({ REGISTRY_PUBLIC_READ: 'false' });
    try {
      const v1 = (await (await fetch(`${closed.url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json()) as WireJson;
      assert.deepEqual(v1.securityRequirements, [{ schemes: { bearer: { list: [] } } }]);
      const legacy = (await (await fetch(`${closed.url}/.well-known/agent-card.json`)).json()) as WireJson;
      assert.deepEqual(legacy.security, [{ bearer: [] }]);
    } finally {
      await closed.close();
    }
  });
});

describe('@a2a-js/sdk behaviour this relies on (fails when an upgrade changes it)', () => {
  test("our superset contains the SDK's own v0.3 translation of the card", async () => {
    const { card: v1 } = await getCard({ 'A2A-Version': '1.0' });
    const { card: ours } = await getCard();
    const sdk = await sdkLegacyCard(v1);
    assert.equal(sdk.protocolVersion, '0.3');
    assert.ok(Array.isArray(sdk.supportedInterfaces), 'the SDK embeds the v1.0 interfaces');
    assertContains(ours, sdk);
  });
});
