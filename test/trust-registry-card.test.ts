/**
 * The registry's own card (issue 15, point 5): signed when REGISTRY_SIGNING_KEY is set, its public
 * key served at /.well-known/jwks.json (the signature's jku), verifiable as A2A §8.4.3 says and
 * with the registry's own verifier; SDK clients still work against the signed card.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AgentCard, verifyAgentCardSignature } from '@a2a-js/sdk';
import { base64url, decodeProtectedHeader, flattenedVerify, importJWK, type JWK } from 'jose';
import { signCard } from '../src/trust/card-signing.js';
import { generateSigningKey, parseJwks, parseSigningKey } from '../src/trust/jwks.js';
import { loadRegistrySigningKey } from '../src/trust/registry-signing-key.js';
import { ACCEPTED_ALGORITHMS, createSignatureVerifier } from '../src/validation/signature.js';
import { BIN, ensureBuilt } from './support/built.js';
import { errorOf, op, resultOf, sdkClient, type WireJson } from './support/client.js';
import { v1Card } from './support/documents.js';
import { serveCard } from './support/freshness.js';
import { startOrigin, type OriginServer } from './support/origin-server.js';
import { TOKENS, logCapture, startTestRegistry, tempDir, type TestRegistry } from './support/registry.js';

const dir = tempDir('a2a-registry-own-card-');
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const get = (registry: TestRegistry, p: string, headers: Record<string, string> = {}) => fetch(`${registry.url}${p}`, { headers });

describe('REGISTRY_SIGNING_KEY set', () => {
  let registry: TestRegistry;
  /** The key the registry signed with before (REGISTRY_RETIRED_SIGNING_KEYS), published for two more minutes. */
  let retired: Awaited<ReturnType<typeof generateSigningKey>>;
  /** One past its "exp" (seconds) at start-up: not published, and logged so. */
  let expired: Awaited<ReturnType<typeof generateSigningKey>>;
  let expiredAt: number;
  const log = logCapture();
  before(async () => {
    // Retired keys: one still published (its "exp" two minutes away), one past its "exp".
    retired = await generateSigningKey('ES256', 'registry-2025');
    expired = await generateSigningKey('ES256', 'registry-2024');
    const now = Math.floor(Date.now() / 1000);
    expiredAt = now - 60;
    const retiredKeys = { keys: [{ ...retired.publicJwk, exp: now + 120 }, { ...expired.publicJwk, exp: expiredAt }] };
    fs.writeFileSync(path.join(dir, 'retired-keys.json'), JSON.stringify(retiredKeys));
    // As WebCrypto exports a key (crypto.subtle.exportKey): key_ops ["sign"] and ext, no alg; the
    // operator adds its kid.
    const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
    const privateJwk = { ...(await crypto.subtle.exportKey('jwk', pair.privateKey)), kid: 'registry-2026' };
    assert.deepEqual([privateJwk.key_ops, privateJwk.ext, privateJwk.alg], [['sign'], true, undefined]);
    fs.writeFileSync(path.join(dir, 'registry-key.json'), JSON.stringify(privateJwk), { mode: 0o600 });
    // With gRPC on: its interface is added to the card before the card is signed.
    registry = await startTestRegistry(
      { REGISTRY_SIGNING_KEY: path.join(dir, 'registry-key.json'), REGISTRY_RETIRED_SIGNING_KEYS: path.join(dir, 'retired-keys.json'), GRPC_PORT: '0', LOG_LEVEL: 'warn' },
      undefined,
      log.stream,
    );
  });
  after(async () => {
    await registry.close();
    fs.rmSync(registry.dataDir, { recursive: true, force: true });
  });

  test('the card is signed, names the JWKS as its jku, and verifies (A2A §8.4.3) against the served keys, its security requirements covered', async () => {
    const card = (await (await get(registry, '/.well-known/agent-card.json', { 'A2A-Version': '1.0' })).json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    // Two signatures by the same key: over the card as A2A §8.4.1 says, and over the form
    // @a2a-js/sdk 1.3 verifies (without the requirements that have no scopes).
    assert.equal(card.signatures.length, 2);
    const header = decodeProtectedHeader(card.signatures[0]);
    assert.deepEqual(header, { alg: 'ES256', kid: 'registry-2026', typ: 'JOSE', jku: `${registry.url}/.well-known/jwks.json` });
    assert.deepEqual(decodeProtectedHeader(card.signatures[1]), header);

    const res = await get(registry, '/.well-known/jwks.json');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/jwk-set+json');
    const etag = res.headers.get('etag')!;
    const jwks = (await res.json()) as { keys: JWK[] };
    assert.deepEqual(jwks.keys.map((k) => k.kid), ['registry-2026', 'registry-2025'], 'the current key, then the retired one still before its "exp"');
    assert.equal(jwks.keys[0]!.d, undefined, 'never the private key');
    // Not the private key's key_ops ["sign"]: published so, no verifier could import the key.
    assert.deepEqual([jwks.keys[0]!.key_ops, jwks.keys[0]!.ext, jwks.keys[0]!.use, jwks.keys[0]!.alg], [undefined, undefined, 'sig', 'ES256']);
    assert.deepEqual(parseJwks(jwks, 'served').problems, [], 'a registry that allow-lists this JWKS trusts the key');
    assert.equal((await get(registry, '/.well-known/jwks.json', { 'If-None-Match': etag })).status, 304);
    // Any origin may read the keys, as it may read the card they sign: a browser-based agent
    // that reads the card checks its signature with them (the revalidating GET's preflight too).
    const crossOrigin = await get(registry, '/.well-known/jwks.json', { Origin: 'https://agents.example.net' });
    assert.equal(crossOrigin.headers.get('access-control-allow-origin'), '*');
    assert.equal(crossOrigin.headers.get('cross-origin-resource-policy'), 'cross-origin');
    const preflight = await fetch(`${registry.url}/.well-known/jwks.json`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://agents.example.net', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'if-none-match' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');

    // A client that follows the jku (here: this registry's own URL) verifies as A2A §8.4.3 says:
    // RFC 8785 of the card without "signatures" and default values: here the fields holding an
    // empty list or map (the bearer requirement's scope list, the public-read requirement's
    // schemes); the bearer entry, no default, stays.
    const empty = (v: unknown) => typeof v === 'object' && v !== null && Object.keys(v).length === 0;
    const jcs = (v: unknown): string =>
      v === null || typeof v !== 'object'
        ? JSON.stringify(v)
        : Array.isArray(v)
          ? `[${v.map(jcs).join(',')}]`
          : `{${Object.keys(v)
              .filter((k) => !empty((v as Record<string, unknown>)[k]))
              .sort()
              .map((k) => `${JSON.stringify(k)}:${jcs((v as Record<string, unknown>)[k])}`)
              .join(',')}}`;
    const { signatures, ...unsigned } = card;
    const served = ((await (await fetch(header.jku as string)).json()) as { keys: JWK[] }).keys.find((k) => k.kid === header.kid)!;
    await flattenedVerify({ ...signatures[0], payload: base64url.encode(jcs(unsigned)) }, await importJWK(served, 'ES256'), { algorithms: ['ES256'] });
    assert.deepEqual(card.securityRequirements, [{ schemes: { bearer: { list: [] } } }, { schemes: {} }], 'bearer, or no credentials (public reads)');
    assert.ok(card.securitySchemes, 'the security schemes are covered too');
    // @a2a-js/sdk 1.3's verifier, whose canonicalizeAgentCard removes a requirement without scopes
    // (and the empty one) as an empty value, accepts the card by the second signature.
    await verifyAgentCardSignature(async () => importJWK(served, 'ES256') as Promise<CryptoKey>)(card as unknown as AgentCard);
    await assert.rejects(
      verifyAgentCardSignature(async () => importJWK(served, 'ES256') as Promise<CryptoKey>)({ ...card, signatures: [card.signatures[0]] } as unknown as AgentCard),
      /No valid signatures/,
      'the first signature is over what A2A §8.4.1 says, which the SDK does not compute',
    );
    assert.ok(
      card.supportedInterfaces.some((i: { protocolBinding: string }) => i.protocolBinding === 'GRPC'),
      'the gRPC interface is covered too',
    );
    // ...and with the registry's own verifier, trusting those keys.
    const verifier = createSignatureVerifier({
      configured: true,
      fingerprint: 'test',
      lookup: async (kid) => ({ keys: jwks.keys.filter((k) => k.kid === kid).map((jwk) => ({ kid, jwk, source: 'jwks' })) }),
    });
    const { verification, warnings } = await verifier.verifyAgentCard(card, '1.0');
    assert.equal(verification.verified, true);
    assert.deepEqual(verification.signatures.map((s) => s.status), ['verified', 'verified']);
    assert.deepEqual(warnings, [], 'the first signature covers every requirement: no warning');
  });

  test('a retired key (REGISTRY_RETIRED_SIGNING_KEYS) is published until its "exp": copies of the card it signed still verify', async () => {
    const res = await get(registry, '/.well-known/jwks.json');
    const maxAge = Number(/max-age=(\d+)/.exec(res.headers.get('cache-control')!)![1]);
    assert.ok(maxAge > 0 && maxAge <= 120, `cached no longer than the retired key is published (max-age ${maxAge})`);
    const jwks = (await res.json()) as { keys: JWK[] };
    assert.ok(jwks.keys.every((k) => k.d === undefined), 'never a private member');
    // A copy of the card signed before the rotation, by the retired key, verifies against the served set.
    const { signatures: _, ...card } = (await (await get(registry, '/.well-known/agent-card.json', { 'A2A-Version': '1.0' })).json()) as Record<string, unknown>;
    const copy = await signCard(card, await parseSigningKey(retired.privateJwk, 'retired', ACCEPTED_ALGORITHMS), { jku: `${registry.url}/.well-known/jwks.json` });
    const verifier = createSignatureVerifier({
      configured: true,
      fingerprint: 'test',
      lookup: async (kid) => ({ keys: jwks.keys.filter((k) => k.kid === kid).map((jwk) => ({ kid, jwk, source: 'jwks' })) }),
    });
    const { verification } = await verifier.verifyAgentCard(copy, '1.0');
    assert.deepEqual([verification.verified, verification.kid], [true, 'registry-2025']);
    // The key past its "exp" at start-up is not published, and the log says why (kid and expiry,
    // never key material). Before, it was dropped without a word.
    assert.deepEqual(jwks.keys.map((k) => k.kid).sort(), ['registry-2025', 'registry-2026']);
    const dropped = log.lines.filter((l) => l.kid === 'registry-2024');
    assert.equal(dropped.length, 1, JSON.stringify(dropped));
    assert.deepEqual([dropped[0]!.level, dropped[0]!.expiredAt], [40, new Date(expiredAt * 1000).toISOString()]);
    assert.match(String(dropped[0]!.msg), /^REGISTRY_RETIRED_SIGNING_KEYS: the key with kid "registry-2024" expired at \S+ \(its "exp"\), so it is not published/);
    assert.ok(!JSON.stringify(dropped).includes(String(expired.publicJwk.x)), 'no key material');

    // What start-up refuses (invalid configuration, naming the variable): private key material,
    // the current key's kid, an "exp" that is no time.
    const current = path.join(dir, 'registry-key.json');
    const refused = async (keys: unknown[], why: RegExp) => {
      fs.writeFileSync(path.join(dir, 'bad-retired.json'), JSON.stringify({ keys }));
      await assert.rejects(loadRegistrySigningKey(current, path.join(dir, 'bad-retired.json')), why);
    };
    await refused([retired.privateJwk], /^Error: invalid configuration: REGISTRY_RETIRED_SIGNING_KEYS: .*keys\[0\] holds private key material: it would be published\. List only the public half/);
    await refused([{ ...retired.publicJwk, kid: 'registry-2026' }], /keys\[0\] has kid "registry-2026", as the current key \(REGISTRY_SIGNING_KEY\) has/);
    await refused([{ ...retired.publicJwk, exp: '2027-01-01' }], /keys\[0\] \(kid "registry-2025"\) has "exp" "2027-01-01", which is no time: give the seconds since 1970-01-01 UTC/);
  });

  test('the v0.3 (superset) variant carries the same signature, which still covers its v1.0 card', async () => {
    const superset = (await (await get(registry, '/.well-known/agent-card.json')).json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.ok(superset.url && superset.protocolVersion, 'the superset variant');
    const jwks = (await (await get(registry, '/.well-known/jwks.json')).json()) as { keys: JWK[] };
    const verifier = createSignatureVerifier({
      configured: true,
      fingerprint: 'test',
      lookup: async (kid) => ({ keys: jwks.keys.filter((k) => k.kid === kid).map((jwk) => ({ kid, jwk, source: 'jwks' })) }),
    });
    assert.equal((await verifier.verifyAgentCard(superset, '1.0')).verification.verified, true);
    // And as a user checks it: the card fetched without A2A-Version, `a2a-registry verify` (it
    // said "This card mixes A2A generations" and checked no signature).
    ensureBuilt();
    fs.writeFileSync(path.join(dir, 'superset.json'), JSON.stringify(superset));
    fs.writeFileSync(path.join(dir, 'served-jwks.json'), JSON.stringify(jwks));
    const verified = spawnSync(process.execPath, [BIN, 'verify', path.join(dir, 'superset.json'), '--jwks', path.join(dir, 'served-jwks.json')], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    assert.equal(verified.status, 0, verified.stdout + verified.stderr);
    assert.match(verified.stdout, /^✓ verified .*superset\.json: by kid registry-2026 \(ES256\)/);
    assert.match(verified.stderr, /superset\.json is a superset card .*: checking the v1\.0 card inside it/);
  });

  test('SDK clients work against the signed card', async () => {
    for (const binding of ['JSONRPC', 'GRPC'] as const) {
      const client = await sdkClient(registry.url, { binding });
      assert.equal(client.transport.protocolName, binding);
      assert.ok(Array.isArray(resultOf(await op(client, { search: { query: 'anything' } })).results));
    }
  });
});

describe("the registry's own endpoints", () => {
  let registry: TestRegistry;
  let origin: OriginServer;
  before(async () => {
    origin = await startOrigin();
    registry = await startTestRegistry({ REGISTRY_FETCH_ALLOW: '127.0.0.1', GRPC_PORT: '0' });
  });
  after(async () => {
    await registry.close();
    await origin.close();
    fs.rmSync(registry.dataDir, { recursive: true, force: true });
  });

  test('only an admin may register them: the registry\'s own card, inline or by URL, and any spelling of its URLs, are FORBIDDEN (url-reserved) to others', async () => {
    const [bob, alice, admin] = await Promise.all([TOKENS.bob, TOKENS.alice, TOKENS.admin].map((token) => sdkClient(registry.url, { token })));
    const own = (await (await get(registry, '/.well-known/agent-card.json', { 'A2A-Version': '1.0' })).json()) as WireJson;
    const urls: string[] = own.supportedInterfaces.map((i: WireJson) => i.url);
    assert.ok(urls.some((u) => /^127\.0\.0\.1:\d+$/.test(u)), 'the gRPC interface too');
    const inline = errorOf(await op(bob, { register: { agentCard: own } }));
    assert.equal(inline.code, 'FORBIDDEN');
    assert.equal(inline.message, `${urls[0]} is an endpoint of this registry itself (its own agent card lists it): only an admin may register an entry that lists the registry's own endpoints. List only endpoints that are yours.`);
    assert.deepEqual(
      inline.details.map((d: WireJson) => [d.path, d.rule]),
      urls.map((_, i) => [`/supportedInterfaces/${i}/url`, 'url-reserved']),
    );
    assert.match(inline.details[0].hint, /only an admin may register the registry's own endpoints/);
    // By URL: the card the registry serves.
    const byUrl = errorOf(await op(bob, { register: { url: registry.url } }));
    assert.deepEqual([byUrl.code, byUrl.details[0].rule], ['FORBIDDEN', 'url-reserved']);
    // Every spelling the identity rules take for the same endpoint: scheme, default port, case,
    // trailing slash, a query string, a tenant.
    const { port } = new URL(registry.url);
    for (const [url, tenant] of [
      [`HTTPS://127.0.0.1:${port}/a2a/rest/`, undefined],
      [`http://127.0.0.1:${port}//a2a/jsonrpc?agent=bob`, undefined],
      [`http://127.0.0.1:${port}/a2a/jsonrpc`, 'bobs-tenant'],
    ] as const) {
      const card = v1Card('Not The Registry', url) as WireJson;
      if (tenant) card.supportedInterfaces[0].tenant = tenant;
      const refused = errorOf(await op(bob, { register: { agentCard: card } }));
      assert.deepEqual([refused.code, refused.details.map((d: WireJson) => [d.path, d.rule])], ['FORBIDDEN', [['/supportedInterfaces/0/url', 'url-reserved']]], url);
    }
    // Another path on the registry's host is anyone's to list (nothing of the registry's is there).
    assert.equal(resultOf(await op(bob, { register: { agentCard: v1Card('Beside The Registry', `http://127.0.0.1:${port}/agents/bob`) } })).created, true);

    // A refresh of a non-admin's entry whose source now serves the registry's endpoints: refused alike.
    serveCard(origin, v1Card('Alice Fetched', 'https://alice-fetched.own-card.example.org/a2a'), '/alice');
    const fetched = resultOf(await op(alice, { register: { url: `${origin.url}/alice` } }));
    serveCard(origin, { ...v1Card('Alice Fetched', urls[1]!) }, '/alice');
    const refreshed = errorOf(await op(alice, { refresh: { id: fetched.id } }));
    assert.deepEqual([refreshed.code, refreshed.details.map((d: WireJson) => [d.path, d.rule])], ['FORBIDDEN', [['/supportedInterfaces/0/url', 'url-reserved']]]);
    assert.match(refreshed.message, /^The card at .*\/alice\/\.well-known\/agent-card\.json was refused \(the last good revision is kept\): .* is an endpoint of this registry itself/);
    const entry = resultOf(await op(alice, { get: { id: fetched.id } }));
    assert.deepEqual([entry.revision, entry.health.status, entry.health.reason], [1, 'invalid', 'url-reserved']);

    // An admin's update of another principal's entry acts for its owner, as a refresh does: the
    // entry stays alice's and its URLs would be hers (and the registry's own card, below, could
    // not be registered any more). Refused, saying whose entry it is; the entry as it was.
    const alicesCard = v1Card('Alice Inline', 'https://alice-inline.own-card.example.org/a2a') as WireJson;
    const alices = resultOf(await op(alice, { register: { agentCard: alicesCard } }));
    alicesCard.supportedInterfaces.push({ url: urls[1], protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' });
    const byAdmin = errorOf(await op(admin, { register: { agentCard: alicesCard } }));
    assert.deepEqual([byAdmin.code, byAdmin.details.map((d: WireJson) => [d.path, d.rule])], ['FORBIDDEN', [['/supportedInterfaces/1/url', 'url-reserved']]]);
    assert.match(byAdmin.message, new RegExp(`^${urls[1]} is an endpoint of this registry itself .*updates entry ${alices.id}, which belongs to principal "alice"`));
    assert.equal(resultOf(await op(alice, { get: { id: alices.id } })).revision, 1);
    // An admin may: the registry listed in itself, the admin's entry.
    const listed = resultOf(await op(admin, { register: { agentCard: own } }));
    assert.equal(listed.created, true);
    assert.equal(resultOf(await op(alice, { get: { id: listed.id } })).owner, 'admin');
  });

  test('validate, asked with a token, declines them as register would (FORBIDDEN, url-reserved); an admin\'s, and an anonymous one, say valid', async () => {
    const [bob, admin, anonymous] = await Promise.all([TOKENS.bob, TOKENS.admin, undefined].map((token) => sdkClient(registry.url, token ? { token } : {})));
    const { port } = new URL(registry.url);
    const card = v1Card('Validated Lookalike', `https://127.0.0.1:${port}/a2a/rest?agent=bob`) as WireJson;
    const registered = errorOf(await op(bob, { register: { agentCard: card } }));
    const validated = errorOf(await op(bob, { validate: { agentCard: card } }));
    assert.deepEqual([validated.code, validated.message, validated.details], [registered.code, registered.message, registered.details]);
    assert.equal(validated.details[0].rule, 'url-reserved');
    assert.equal(resultOf(await op(admin, { validate: { agentCard: card } })).valid, true, 'an admin may register it');
    assert.equal(resultOf(await op(anonymous, { validate: { agentCard: card } })).valid, true, 'an anonymous caller may be an admin without its token');
  });
});

describe('without REGISTRY_SIGNING_KEY', () => {
  test('no signatures, no JWKS', async () => {
    const registry = await startTestRegistry();
    try {
      const card = (await (await get(registry, '/.well-known/agent-card.json', { 'A2A-Version': '1.0' })).json()) as Record<string, unknown>;
      assert.equal(card.signatures, undefined);
      assert.equal((await get(registry, '/.well-known/jwks.json')).status, 404);
    } finally {
      await registry.close();
      fs.rmSync(registry.dataDir, { recursive: true, force: true });
    }
  });

  test('a key that cannot sign stops start-up, naming the variable', async () => {
    const { publicJwk } = await generateSigningKey('ES256', 'public-only');
    fs.writeFileSync(path.join(dir, 'public.json'), JSON.stringify(publicJwk));
    await assert.rejects(startTestRegistry({ REGISTRY_SIGNING_KEY: path.join(dir, 'public.json') }), /REGISTRY_SIGNING_KEY: .*no private part/);
  });
});
