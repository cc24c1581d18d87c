/**
 * Trust for cards the registry fetches itself (issues 15 and 16 together): a card registered by
 * URL gets the signature and URL-ownership checks of an inline one, at registration and at
 * every refresh. A refreshed card with an invalid signature, or one that lists another
 * principal's URL, never becomes a revision: the last good one stays and the entry's health
 * says why. Real registry and card origin on 127.0.0.1, a real JWKS file.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@a2a-js/sdk/client';
import { signCard } from '../src/trust/card-signing.js';
import { generateSigningKey, parseSigningKey, type SigningKey } from '../src/trust/jwks.js';
import { ACCEPTED_ALGORITHMS } from '../src/validation/signature.js';
import { errorOf, op, resultOf, sdkClient, type WireJson } from './support/client.js';
import { v1Card } from './support/documents.js';
import { serveCard as serveCardAt } from './support/freshness.js';
import { startOrigin, type OriginServer } from './support/origin-server.js';
import { TOKENS, startTestRegistry, tempDir, type TestRegistry } from './support/registry.js';

const dir = tempDir('a2a-registry-trust-fresh-');
let registry: TestRegistry;
let origin: OriginServer;
let key: SigningKey;
let alice: Client;
let bob: Client;
let anonymous: Client;

before(async () => {
  const pair = await generateSigningKey('ES256', 'fresh-key');
  key = await parseSigningKey(pair.privateJwk, 'fresh-key', ACCEPTED_ALGORITHMS);
  fs.writeFileSync(path.join(dir, 'jwks.json'), JSON.stringify({ keys: [pair.publicJwk] }));
  origin = await startOrigin();
  registry = await startTestRegistry({ REGISTRY_TRUSTED_KEYS: path.join(dir, 'jwks.json'), REGISTRY_FETCH_ALLOW: '127.0.0.1', REGISTRY_RATE_LIMITS: 'false' });
  [alice, bob, anonymous] = await Promise.all([
    sdkClient(registry.url, { token: TOKENS.alice }),
    sdkClient(registry.url, { token: TOKENS.bob }),
    sdkClient(registry.url),
  ]);
});
after(async () => {
  await registry.close();
  await origin.close();
  fs.rmSync(registry.dataDir, { recursive: true, force: true });
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('cards registered by URL', () => {
  const base = '/signed-agent';
  const interfaceUrl = 'https://fetched.trust.example.org/a2a';
  let id = '';

  test('a signed card fetched by URL is verified, and its URL belongs to its registrant', async () => {
    serveCard(await signCard(v1Card('Fetched Signed Agent', interfaceUrl), key), base);
    const result = resultOf(await op(alice, { register: { url: `${origin.url}${base}` } }));
    assert.equal(result.created, true);
    assert.equal(result.verified, true);
    assert.equal(result.kid, 'fresh-key');
    id = result.id;
    const entry = resultOf(await op(anonymous, { get: { id } }));
    assert.equal(entry.verified, true);
    assert.ok(entry.source, 'registered by URL');
    // bob cannot list a spelling of it, inline.
    const refused = errorOf(await op(bob, { register: { agentCard: v1Card('Bob Copy', 'HTTPS://Fetched.Trust.Example.org:443/a2a/') } }));
    assert.equal(refused.code, 'FORBIDDEN');
  });

  test('a tampered card at the source is not taken on refresh: SIGNATURE_INVALID, the verified revision stays, health invalid', async () => {
    const tampered = (await signCard(v1Card('Fetched Signed Agent', interfaceUrl), key)) as WireJson;
    tampered.description = 'Changed after signing.';
    serveCard(tampered, base);
    const error = errorOf(await op(alice, { refresh: { id } }));
    assert.equal(error.code, 'SIGNATURE_INVALID');
    const entry = resultOf(await op(anonymous, { get: { id } }));
    assert.equal(entry.revision, 1);
    assert.equal(entry.verified, true);
    assert.notEqual(entry.document.description, 'Changed after signing.');
    assert.equal(entry.health.status, 'invalid');
    assert.equal(entry.health.reason, 'SIGNATURE_INVALID');
  });

  test("a card at the source that lists another principal's URL is not taken either", async () => {
    // Under another query string too: a query is no ownership boundary (a server may ignore it).
    resultOf(await op(bob, { register: { agentCard: v1Card('Bob Agent', 'https://bob.trust.example.org/a2a?agent=bob') } }));
    const card = v1Card('Fetched Signed Agent', interfaceUrl) as WireJson;
    card.supportedInterfaces.push({ url: 'https://bob.trust.example.org/a2a/?agent=alice', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' });
    serveCard(await signCard(card, key), base);
    const error = errorOf(await op(alice, { refresh: { id } }));
    assert.equal(error.code, 'FORBIDDEN');
    assert.match(error.message, /now lists https:\/\/bob\.trust\.example\.org\/a2a\/\?agent=alice \(https:\/\/bob\.trust\.example\.org\/a2a\/ under a query string\), which an entry of another principal uses/);
    assert.doesNotMatch(error.message, /\bbob\b(?!\.)/, 'never names the other owner');
    // The details and rule a registration of the same card gets (the health's reason too).
    const registered = errorOf(await op(alice, { register: { agentCard: await signCard(card, key) } }));
    assert.deepEqual(registered.details.map((d: WireJson) => [d.path, d.rule]), [['/supportedInterfaces/1/url', 'url-taken']]);
    assert.deepEqual(error.details, registered.details);
    const entry = resultOf(await op(anonymous, { get: { id } }));
    assert.equal(entry.revision, 1);
    assert.equal(entry.health.status, 'invalid');
    assert.equal(entry.health.reason, 'url-taken');
  });

  test('a card at the source whose primary interface is another entry\'s is refused as a registration of it is: FORBIDDEN, rule identity-taken, with the paths', async () => {
    // Bob's entry: the same details as alice registering that card would get.
    const bobs = resultOf(await op(bob, { register: { agentCard: v1Card('Bob Primary Agent', 'https://bob-primary.trust.example.org/a2a') } }));
    const moved = v1Card('Fetched Signed Agent', 'https://bob-primary.trust.example.org/a2a');
    serveCard(await signCard(moved, key), base);
    const error = errorOf(await op(alice, { refresh: { id } }));
    assert.equal(error.code, 'FORBIDDEN');
    assert.match(error.message, new RegExp(`now names https://bob-primary\\.trust\\.example\\.org/a2a as its primary interface, which is registered as entry ${bobs.id} by another principal; the last good revision is kept`));
    const registered = errorOf(await op(alice, { register: { agentCard: await signCard(moved, key) } }));
    assert.deepEqual(registered.details.map((d: WireJson) => [d.path, d.rule]), [['/supportedInterfaces/0/url', 'identity-taken']]);
    assert.deepEqual(error.details, registered.details);
    assert.equal(resultOf(await op(anonymous, { get: { id } })).health.reason, 'identity-taken');

    // Another entry of alice's own: a registration would update that one; a refresh cannot make two entries one.
    const own = resultOf(await op(alice, { register: { agentCard: v1Card('Alice Other Agent', 'https://alice-other.trust.example.org/a2a') } }));
    serveCard(await signCard(v1Card('Fetched Signed Agent', 'https://alice-other.trust.example.org/a2a'), key), base);
    const mine = errorOf(await op(alice, { refresh: { id } }));
    assert.equal(mine.code, 'FORBIDDEN');
    assert.match(mine.message, new RegExp(`registered as entry ${own.id}, another entry of the same owner; the last good revision is kept`));
    assert.deepEqual(mine.details.map((d: WireJson) => [d.path, d.rule]), [['/supportedInterfaces/0/url', 'identity-taken']]);
    assert.match(mine.details[0].hint, /unregister one of them/);
    const entry = resultOf(await op(anonymous, { get: { id } }));
    assert.deepEqual([entry.revision, entry.health.status, entry.health.reason], [1, 'invalid', 'identity-taken']);
  });

  test('a properly signed new version becomes the next revision, verified; an unsigned one the next, unverified', async () => {
    const updated = v1Card('Fetched Signed Agent', interfaceUrl) as WireJson;
    updated.description = 'A new version, signed again.';
    serveCard(await signCard(updated, key), base);
    const result = resultOf(await op(alice, { refresh: { id } }));
    assert.equal(result.changed, true);
    assert.equal(result.revision, 2);
    assert.equal(result.verified, true);
    assert.equal(result.revisionOrigin, 'refresh');
    const hit = resultOf(await op(anonymous, { search: { query: 'Fetched Signed Agent', filter: { verified: true } } })).results;
    assert.deepEqual(hit.map((h: WireJson) => h.id), [id]);

    const unsigned = v1Card('Fetched Signed Agent', interfaceUrl) as WireJson;
    unsigned.description = 'A third version, unsigned.';
    serveCard(unsigned, base);
    const third = resultOf(await op(alice, { refresh: { id } }));
    assert.equal(third.revision, 3);
    assert.equal(third.verified, false);
    const none = resultOf(await op(anonymous, { search: { query: 'Fetched Signed Agent', filter: { verified: true } } })).results;
    assert.deepEqual(none, []);
  });
});

function serveCard(card: unknown, base: string): void {
  serveCardAt(origin, card, base);
}
