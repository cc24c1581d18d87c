/**
 * Allow-listed JWKS URLs as trust roots (REGISTRY_TRUSTED_JKU), fetched through the outbound
 * guard: a real JWKS server on 127.0.0.1 (allowed with REGISTRY_FETCH_ALLOW, as an operator would
 * for an internal key server), key rotation at the publisher, a card's own jku that is never
 * fetched, and the guard refusing loopback when not allowed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { JWK } from 'jose';
import { cacheLifetimeMs } from '../src/lib/cache-lifetime.js';
import { AllowList, GuardedFetcher } from '../src/net/index.js';
import { createLogger } from '../src/observability/logger.js';
import { runInScope } from '../src/observability/request-scope.js';
import { signCard } from '../src/trust/card-signing.js';
import { generateSigningKey, parseSigningKey, type SigningKey } from '../src/trust/jwks.js';
import { TrustRoots, guardedJwksFetch } from '../src/trust/trust-roots.js';
import { loadConfig } from '../src/config/config.js';
import { ACCEPTED_ALGORITHMS, createSignatureVerifier } from '../src/validation/signature.js';
import { errorOf, op, resultOf, sdkClient, type WireJson } from './support/client.js';
import { callTool, connectMcp, structured } from './support/mcp-client.js';
import { v1Card } from './support/documents.js';
import { serveCard } from './support/freshness.js';
import { selfSignedCertificate, startOrigin, waitFor } from './support/origin-server.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';
import { tempDir } from './support/temp.js';

/** A publisher's key server: serves `sets[path]` (with `caching[path]` headers), counts requests per path. */
const sets: Record<string, { keys: JWK[] }> = {};
const caching: Record<string, Record<string, string>> = {};
const requests: Record<string, number> = {};
/** Paths whose server is down: answered 503. */
const down = new Set<string>();
let server: http.Server;
let base: string;

async function key(kid: string): Promise<{ signing: SigningKey; publicJwk: JWK }> {
  const pair = await generateSigningKey('ES256', kid);
  return { signing: await parseSigningKey(pair.privateJwk, kid, ACCEPTED_ALGORITHMS), publicJwk: pair.publicJwk };
}

let first: Awaited<ReturnType<typeof key>>;
let rotated: Awaited<ReturnType<typeof key>>;
let attacker: Awaited<ReturnType<typeof key>>;
let revocable: Awaited<ReturnType<typeof key>>;

before(async () => {
  [first, rotated, attacker, revocable] = await Promise.all([key('pub-2026-a'), key('pub-2026-b'), key('attacker'), key('pub-revocable')]);
  sets['/jwks.json'] = { keys: [first.publicJwk] };
  sets['/attacker.json'] = { keys: [attacker.publicJwk] };
  server = http.createServer((req, res) => {
    const path = req.url ?? '';
    requests[path] = (requests[path] ?? 0) + 1;
    if (down.has(path)) return res.writeHead(503).end();
    const set = sets[path];
    if (!set) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/jwk-set+json', ...caching[path] }).end(JSON.stringify(set));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

let n = 0;
const card = () => v1Card(`JKU Agent ${++n}`, `https://jku-${n}.example.org/a2a`);

describe('trust roots from allow-listed JWKS URLs', () => {
  test('fetched through the guard; a kid the set lacks makes it fetch again (rotation); a card\'s own jku is never fetched', async () => {
    const fetcher = new GuardedFetcher({ maxBytes: 10_240, allow: AllowList.parse('127.0.0.1') });
    const roots = await TrustRoots.open({ jkuUrls: [`${base}/jwks.json`], fetchJwks: guardedJwksFetch(fetcher), log: createLogger('silent'), jkuRetryMs: 0, sighup: false });
    try {
      assert.equal((await roots.lookup('pub-2026-a', undefined)).keys.length, 1);
      const before = roots.fingerprint;
      sets['/jwks.json'] = { keys: [first.publicJwk, rotated.publicJwk] };
      assert.equal((await roots.lookup('pub-2026-b', `${base}/jwks.json`)).keys.length, 1, 'the rotated key, fetched on demand');
      assert.notEqual(roots.fingerprint, before);
      const seen = requests['/attacker.json'] ?? 0;
      const lookup = await roots.lookup('attacker', `${base}/attacker.json`);
      assert.equal(lookup.keys.length, 0);
      assert.match(lookup.note!, /is not one of the registry's trusted JWKS URLs/);
      assert.equal(requests['/attacker.json'] ?? 0, seen, 'never requested');
    } finally {
      roots.close();
      sets['/jwks.json'] = { keys: [first.publicJwk] };
    }
  });
});

describe('the wall clock stepping back (NTP)', () => {
  test('a kid the set lacks still makes it fetch again: the rotated key verifies at once, not once the clock has caught up', async (t) => {
    const stepped = await key('pub-stepped-new');
    sets['/stepped.json'] = { keys: [first.publicJwk] };
    const realNow = Date.now;
    t.after(() => void (Date.now = realNow));
    const fetcher = new GuardedFetcher({ maxBytes: 10_240, allow: AllowList.parse('127.0.0.1') });
    const roots = await TrustRoots.open({ jkuUrls: [`${base}/stepped.json`], fetchJwks: guardedJwksFetch(fetcher), log: createLogger('silent'), jkuRetryMs: 0, sighup: false });
    try {
      Date.now = () => realNow() - 3_600_000;
      sets['/stepped.json'] = { keys: [first.publicJwk, stepped.publicJwk] };
      assert.equal((await roots.lookup('pub-stepped-new', `${base}/stepped.json`)).keys.length, 1, 'the new key, fetched on demand');
    } finally {
      Date.now = realNow;
      roots.close();
    }
  });
});

describe('a new key behind the same kid (rotation without a new kid)', () => {
  test('a signature the cached key does not verify makes the set that holds the kid fetch again (rate-limited): the card verifies', async () => {
    const before = await key('pub-same-kid');
    const after = await key('pub-same-kid');
    sets['/same-kid.json'] = { keys: [before.publicJwk] };
    const fetcher = new GuardedFetcher({ maxBytes: 10_240, allow: AllowList.parse('127.0.0.1') });
    const open = (jkuRetryMs?: number) =>
      TrustRoots.open({ jkuUrls: [`${base}/same-kid.json`], fetchJwks: guardedJwksFetch(fetcher), log: createLogger('silent'), jkuRetryMs, sighup: false });
    const roots = await open(0);
    try {
      const verifier = createSignatureVerifier(roots);
      const old = await verifier.verifyAgentCard(await signCard(card(), before.signing), '1.0');
      assert.equal(old.verification.verified, true);
      // The publisher replaces the key, keeping its kid, and signs with the new one.
      sets['/same-kid.json'] = { keys: [after.publicJwk] };
      const fetched = requests['/same-kid.json']!;
      const renewed = await verifier.verifyAgentCard(await signCard(card(), after.signing), '1.0');
      assert.deepEqual(renewed.verification.signatures, [{ status: 'verified', kid: 'pub-same-kid', alg: 'ES256', jwks: `${base}/same-kid.json` }]);
      assert.equal(requests['/same-kid.json'], fetched + 1, 'fetched again once');
      // A card the new key did not sign is still refused, after no further fetch than the rate allows.
      const forged = await signCard(card(), attacker.signing, {});
      const signatures = forged.signatures as { protected: string; signature: string }[];
      const header = Buffer.from(JSON.stringify({ alg: 'ES256', kid: 'pub-same-kid', typ: 'JOSE' })).toString('base64url');
      const tampered = { ...forged, signatures: [{ protected: header, signature: signatures[0]!.signature }] };
      assert.equal((await verifier.verifyAgentCard(tampered, '1.0')).verification.signatures[0]!.status, 'invalid');
    } finally {
      roots.close();
    }
    // With the default rate (once a minute), a failing signature does not make the set fetch again at once.
    const limited = await open();
    try {
      const fetched = requests['/same-kid.json']!;
      const stale = await createSignatureVerifier(limited).verifyAgentCard(await signCard(card(), before.signing), '1.0');
      assert.equal(stale.verification.signatures[0]!.status, 'invalid');
      assert.equal(requests['/same-kid.json'], fetched, 'no fetch beside the one at opening');
    } finally {
      limited.close();
    }
  });
});

describe('a refresh the trust roots schedule after a fetch a request asked for', () => {
  test('runs outside that request: its log lines carry no request id (the timer held the request until then)', async () => {
    const scoped = await key('pub-scoped');
    sets['/scoped.json'] = { keys: [first.publicJwk] };
    const lines: string[] = [];
    const fetcher = new GuardedFetcher({ maxBytes: 10_240, allow: AllowList.parse('127.0.0.1') });
    const roots = await TrustRoots.open({
      jkuUrls: [`${base}/scoped.json`],
      fetchJwks: guardedJwksFetch(fetcher),
      log: createLogger('warn', { write: (line: string) => lines.push(line) }),
      jkuRetryMs: 0,
      jkuRefreshMs: 100,
      jkuMinRefreshMs: 100,
      sighup: false,
    });
    try {
      // A kid the set lacks, met while serving a request: the set is fetched in its scope, and the next fetch scheduled.
      sets['/scoped.json'] = { keys: [first.publicJwk, scoped.publicJwk] };
      const verified = await runInScope({ requestId: 'req-held-by-timer', streaming: false }, async () =>
        createSignatureVerifier(roots).verifyAgentCard(await signCard(card(), scoped.signing), '1.0'),
      );
      assert.equal(verified.verification.verified, true);
      // The publisher goes down: the scheduled refresh fails and says so.
      down.add('/scoped.json');
      await waitFor(() => lines.some((l) => l.includes('/scoped.json could not be fetched')), 'the scheduled refresh to fail', 5_000);
      const warning = JSON.parse(lines.find((l) => l.includes('/scoped.json could not be fetched'))!) as { requestId?: string };
      assert.equal(warning.requestId, undefined, 'the scheduled refresh is not the request\'s');
    } finally {
      roots.close();
      down.delete('/scoped.json');
    }
  });
});

describe('a key the publisher removes from its JWKS (revocation)', () => {
  test('the answer\'s Cache-Control or Expires says when the set is fetched again, within the bounds: the removed key stops being trusted then', async () => {
    const revoked = await key('pub-revoked');
    sets['/revoking.json'] = { keys: [revoked.publicJwk] };
    caching['/revoking.json'] = { 'cache-control': 'public, max-age=0' };
    sets['/silent.json'] = { keys: [first.publicJwk] };
    const fetcher = new GuardedFetcher({ maxBytes: 10_240, allow: AllowList.parse('127.0.0.1') });
    // The longest lifetime stays an hour: only the answer's headers can make a fetch come sooner.
    const roots = await TrustRoots.open({
      jkuUrls: [`${base}/revoking.json`, `${base}/silent.json`],
      fetchJwks: guardedJwksFetch(fetcher),
      log: createLogger('silent'),
      jkuMinRefreshMs: 100,
      sighup: false,
    });
    let changes = 0;
    roots.onChange(() => changes++);
    try {
      const verifier = createSignatureVerifier(roots);
      assert.equal((await verifier.verifyAgentCard(await signCard(card(), revoked.signing), '1.0')).verification.verified, true);
      const silent = requests['/silent.json']!;
      sets['/revoking.json'] = { keys: [] };
      await waitFor(() => changes > 0, 'the set fetched again after its max-age=0, bounded to the least interval', 5000);
      assert.equal(roots.size, 1, 'the removed key is no longer trusted');
      assert.equal((await roots.lookup('pub-revoked', undefined)).keys.length, 0);
      assert.equal(requests['/silent.json'], silent, 'a set whose answer gives no lifetime waits the longest interval');
    } finally {
      roots.close();
    }
  });

  test('the lifetime an answer gives: max-age (less Age) before Expires; no-store, no-cache or a bad date mean at once; nothing said, undefined', () => {
    const now = Date.parse('2026-12-03T12:00:00Z');
    assert.equal(cacheLifetimeMs({ cacheControl: 'public, max-age=300' }, now), 300_000);
    assert.equal(cacheLifetimeMs({ cacheControl: 'max-age="300"', age: '100' }, now), 200_000);
    assert.equal(cacheLifetimeMs({ cacheControl: 'max-age=60', expires: 'Thu, 03 Dec 2026 13:00:00 GMT' }, now), 60_000);
    assert.equal(cacheLifetimeMs({ expires: 'Thu, 03 Dec 2026 12:10:00 GMT', date: 'Thu, 03 Dec 2026 12:05:00 GMT' }, now), 300_000, 'measured against the server\'s Date');
    assert.equal(cacheLifetimeMs({ expires: 'Thu, 03 Dec 2026 12:10:00 GMT' }, now), 600_000);
    assert.equal(cacheLifetimeMs({ expires: '0' }, now), 0);
    assert.equal(cacheLifetimeMs({ cacheControl: 'no-cache, max-age=3600' }, now), 0);
    assert.equal(cacheLifetimeMs({ cacheControl: 'No-Store' }, now), 0);
    assert.equal(cacheLifetimeMs({ cacheControl: 'public' }, now), undefined);
    assert.equal(cacheLifetimeMs({}, now), undefined);
  });
});

describe('an allow-listed JWKS that cannot be fetched', () => {
  test('its last good keys stay trusted, across a restart too (the saved copy), until REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS after that fetch', async () => {
    const publisher = await key('pub-outage');
    sets['/outage.json'] = { keys: [publisher.publicJwk] };
    const savedJwksFile = `${tempDir()}/trusted-jwks.json`;
    const fetcher = new GuardedFetcher({ maxBytes: 10_240, allow: AllowList.parse('127.0.0.1') });
    const open = (jkuMaxStaleMs: number) =>
      TrustRoots.open({ jkuUrls: [`${base}/outage.json`], fetchJwks: guardedJwksFetch(fetcher), log: createLogger('silent'), savedJwksFile, jkuMaxStaleMs, jkuMinRefreshMs: 100, sighup: false });
    const signed = await signCard(card(), publisher.signing);
    const up = await open(60_000);
    up.close();
    assert.equal(fs.statSync(savedJwksFile).mode & 0o777, 0o600, 'saved beside the data, for its user alone');
    down.add('/outage.json');
    try {
      // A restart while the publisher's server is down: the saved copy's keys, not none.
      const restarted = await open(60_000);
      try {
        assert.equal((await createSignatureVerifier(restarted).verifyAgentCard(signed, '1.0')).verification.verified, true);
      } finally {
        restarted.close();
      }
      // Down for longer than the longest the keys may be used: they stop being trusted while the
      // registry runs, and the listeners hear it (the registry re-evaluates the cards they verified).
      const expiring = await open(2_500);
      let changes = 0;
      expiring.onChange(() => changes++);
      try {
        assert.equal(expiring.size, 1, 'the saved copy, younger than the bound');
        await waitFor(() => changes > 0, 'the keys dropped once the bound passed', 8000);
        assert.equal(expiring.size, 0);
        assert.equal((await createSignatureVerifier(expiring).verifyAgentCard(signed, '1.0')).verification.verified, false);
      } finally {
        expiring.close();
      }
      // At start-up, a saved copy older than the bound is not used; a longer bound uses it.
      const late = await open(2_500);
      const lenient = await open(60_000);
      assert.deepEqual([late.size, lenient.size], [0, 1]);
      late.close();
      lenient.close();
    } finally {
      down.delete('/outage.json');
    }
  });
});

describe('an allow-listed JWKS that was down for a while', () => {
  test('its retries back off only up to five minutes (here scaled down), not up to the refresh interval: a publisher back after an outage is seen soon', async () => {
    const publisher = await key('pub-back');
    sets['/back.json'] = { keys: [publisher.publicJwk] };
    down.add('/back.json');
    const fetcher = new GuardedFetcher({ maxBytes: 10_240, allow: AllowList.parse('127.0.0.1') });
    // Retries after 100, 200, 400 ms, then every 400 ms; uncapped they would double up to the
    // refresh interval (a minute here, an hour by default): 800, 1,600, 3,200 ms...
    const roots = await TrustRoots.open({
      jkuUrls: [`${base}/back.json`],
      fetchJwks: guardedJwksFetch(fetcher),
      log: createLogger('silent'),
      jkuMinRefreshMs: 100,
      jkuMaxRetryMs: 400,
      jkuRefreshMs: 60_000,
      sighup: false,
      watch: false,
    });
    try {
      assert.equal(roots.size, 0, 'down at start-up: no key');
      await waitFor(() => (requests['/back.json'] ?? 0) >= 7, 'six retries while down', 8000);
      down.delete('/back.json');
      await waitFor(() => roots.size === 1, 'the key, at the next retry (uncapped: 6.4 s later)', 1500);
    } finally {
      roots.close();
      down.delete('/back.json');
    }
  });
});

describe('REGISTRY_TRUSTED_JKU_SCOPE=site', () => {
  test('a key from an allow-listed JWKS verifies only cards whose every endpoint is on the JWKS URL\'s host or under it; off-site, its signature is unknown-key, saying why', async () => {
    const publisher = await key('site-key');
    sets['/site.json'] = { keys: [publisher.publicJwk] };
    const jku = `http://keys.test:${new URL(base).port}/site.json`;
    const fetcher = new GuardedFetcher({ maxBytes: 10_240, allow: AllowList.parse('keys.test,127.0.0.1'), resolve: async () => ['127.0.0.1'] });
    const open = (jkuScope: 'any' | 'site') => TrustRoots.open({ jkuUrls: [jku], jkuScope, fetchJwks: guardedJwksFetch(fetcher), log: createLogger('silent'), sighup: false });
    const [scoped, unscoped] = await Promise.all([open('site'), open('any')]);
    try {
      assert.notEqual(scoped.fingerprint, unscoped.fingerprint, 'switching the scope re-evaluates the stored cards');
      const statusOf = async (roots: TrustRoots, urls: string[], signedFor = jku) => {
        const signed = await signCard({ ...card(), supportedInterfaces: urls.map((url) => ({ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' })) }, publisher.signing, { jku: signedFor });
        const result = await createSignatureVerifier(roots).verifyAgentCard(signed, '1.0');
        // Anyone may read the public status; the detail (the JWKS URL and its host) is for the
        // operator and authenticated callers. A verified signature names the set of its key (jwks).
        const reasons = result.verification.signatures.map((s) => s.reason ?? '');
        assert.ok(!JSON.stringify(reasons).includes('keys.test:'), 'no JWKS URL in the public reasons');
        return (result.detailed ?? result.verification).signatures[0]!;
      };
      assert.equal((await statusOf(scoped, ['https://keys.test/a2a'])).status, 'verified');
      assert.equal((await statusOf(scoped, ['https://agent.keys.test/a2a', 'https://KEYS.test./rest'])).status, 'verified', 'under it, any spelling');
      for (const urls of [['https://victim.example.org/a2a'], ['https://agent.keys.test/a2a', 'https://victim.example.org/rest'], ['https://evilkeys.test/a2a'], ['https://keys.test.example.org/a2a']]) {
        const status = await statusOf(scoped, urls);
        assert.equal(status.status, 'unknown-key', urls.join(' '));
        const at = urls.length - 1;
        assert.ok(
          status.reason!.startsWith(`the trusted key "site-key" (from ${jku}) vouches only for cards whose endpoints are on keys.test or under it (REGISTRY_TRUSTED_JKU_SCOPE=site), and /supportedInterfaces/${at}/url "${urls[at]}" is not`),
          status.reason,
        );
      }
      assert.equal((await statusOf(unscoped, ['https://victim.example.org/a2a'])).status, 'verified', 'the default: any card');
      // A host is compared as endpoints are (lib/endpoint-url.ts normalHost): a JWKS at an IP
      // address vouches for that address written as an IPv4-mapped IPv6 address too.
      const ipJku = `${base}/site.json`;
      const atIp = await TrustRoots.open({ jkuUrls: [ipJku], jkuScope: 'site', fetchJwks: guardedJwksFetch(fetcher), log: createLogger('silent'), sighup: false });
      try {
        assert.equal((await statusOf(atIp, ['https://[::ffff:127.0.0.1]/a2a', 'http://127.0.0.1./rest'], ipJku)).status, 'verified');
        assert.equal((await statusOf(atIp, ['https://[::ffff:127.0.0.2]/a2a'], ipJku)).status, 'unknown-key');
      } finally {
        atIp.close();
      }
      assert.equal(loadConfig({ REGISTRY_TRUSTED_JKU_SCOPE: 'site' }).trust.jkuScope, 'site');
      assert.equal(loadConfig({}).trust.jkuScope, 'any');
      assert.throws(() => loadConfig({ REGISTRY_TRUSTED_JKU_SCOPE: 'host' }), /REGISTRY_TRUSTED_JKU_SCOPE.*must be "any".*or "site"/);
    } finally {
      scoped.close();
      unscoped.close();
    }
  });
});

describe('an https JWKS URL', () => {
  test('a redirect to plain http is not followed: the keys a network attacker could serve there are never trusted', async () => {
    const { key: tlsKey, cert } = selfSignedCertificate('keys.test');
    const secure = await startOrigin({ tls: { key: tlsKey, cert, host: 'keys.test' } });
    // The publisher's https URL redirects to plain http, where anyone on the path can answer.
    secure.route('/jwks.json', (_req, res) => void res.writeHead(302, { location: `${base}/attacker.json` }).end());
    const fetcher = new GuardedFetcher({ maxBytes: 10_240, allow: AllowList.parse('keys.test,127.0.0.1'), resolve: async () => ['127.0.0.1'], ca: cert });
    const seen = requests['/attacker.json'] ?? 0;
    const roots = await TrustRoots.open({ jkuUrls: [`${secure.url}/jwks.json`], fetchJwks: guardedJwksFetch(fetcher), log: createLogger('silent'), jkuRetryMs: 0, sighup: false });
    try {
      const lookup = await roots.lookup('attacker', undefined);
      assert.equal(lookup.keys.length, 0);
      assert.ok(
        lookup.noteDetail!.includes(`refused to follow the redirect from ${secure.url}/jwks.json to ${base}/attacker.json: it leaves https for plain http`),
        lookup.noteDetail,
      );
      assert.ok(!lookup.note!.includes(secure.url), 'the public note names no allow-listed URL');
      assert.equal(requests['/attacker.json'] ?? 0, seen, 'the plain http URL was never requested');
      assert.equal(roots.size, 0);
    } finally {
      roots.close();
      await secure.close();
    }
  });
});

describe('a plain http JWKS URL', () => {
  test('start-up warns that anyone on the network path could replace the keys (not for the local host), a key in its query masked', () => {
    const { warnings } = loadConfig({
      REGISTRY_TRUSTED_JKU: 'http://keys.example.com/jwks.json, https://keys.example.com/jwks.json, http://127.0.0.1:8080/jwks.json, http://localhost/jwks.json, http://keys.example.net/jwks.json?token=WarnedSecret9',
    });
    assert.deepEqual(warnings, [
      'REGISTRY_TRUSTED_JKU lists http://keys.example.com/jwks.json, a plain http URL: anyone on the network path to it can answer with their own keys, and every card those sign then verifies; publish the key set at an https URL',
      'REGISTRY_TRUSTED_JKU lists http://keys.example.net/jwks.json?token=***, a plain http URL: anyone on the network path to it can answer with their own keys, and every card those sign then verifies; publish the key set at an https URL',
    ]);
  });
});

describe('an allow-listed JWKS URL with a key in its query', () => {
  test('is named with its query values masked: in the log, in the detail of a failed fetch and in the key set a verified signature names', async () => {
    const publisher = await key('pub-query');
    const path = '/query.json?token=JkuQuerySecret42';
    // Keys, one of them with private material the log warns about (naming the set).
    sets[path] = { keys: [publisher.publicJwk, { ...(await key('pub-query-private')).publicJwk, d: 'x' }] };
    const lines: string[] = [];
    const fetcher = new GuardedFetcher({ maxBytes: 10_240, allow: AllowList.parse('127.0.0.1') });
    const roots = await TrustRoots.open({
      jkuUrls: [`${base}${path}`],
      fetchJwks: guardedJwksFetch(fetcher),
      log: createLogger('warn', { write: (line: string) => lines.push(line) }),
      jkuRetryMs: 0,
      watch: false,
      sighup: false,
    });
    down.add(path);
    try {
      const verifier = createSignatureVerifier(roots);
      const verified = await verifier.verifyAgentCard(await signCard(card(), publisher.signing), '1.0');
      assert.equal(verified.verification.jwks, `${base}/query.json?token=***`, 'the set a verified signature names');
      // A kid no set holds: the set is fetched again, fails (503), and the detail names it.
      const unknown = await roots.lookup('pub-nobody', undefined);
      assert.match(unknown.noteDetail ?? '', /the JWKS at http:\/\/127\.0\.0\.1:\d+\/query\.json\?token=\*\*\* could not be fetched \(.*503/);
      assert.ok(lines.some((l) => /holds private key material/.test(l)) && lines.some((l) => /could not be fetched/.test(l)), lines.join('\n'));
      const leaked = [...lines, JSON.stringify(unknown), JSON.stringify(verified)].filter((l) => l.includes('JkuQuerySecret42'));
      assert.deepEqual(leaked, [], 'no line or answer holds the key');
    } finally {
      down.delete(path);
      roots.close();
      await fetcher.close();
    }
  });
});

describe('a registry with REGISTRY_TRUSTED_JKU', () => {
  let registry: TestRegistry;
  before(async () => {
    sets['/revocable.json'] = { keys: [revocable.publicJwk] };
    registry = await startTestRegistry({
      REGISTRY_TRUSTED_JKU: `${base}/jwks.json,${base}/revocable.json`,
      REGISTRY_FETCH_ALLOW: '127.0.0.1',
      // The operator's bound on how long a fetched key set is used (the answers give no lifetime).
      REGISTRY_TRUSTED_JKU_REFRESH_SECONDS: '1',
    });
  });
  after(async () => {
    await registry.close();
    fs.rmSync(registry.dataDir, { recursive: true, force: true });
  });

  test('verifies cards signed by the published keys; a card pointing at its own key set stays unverified', async () => {
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const verified = resultOf(await op(alice, { register: { agentCard: await signCard(card(), first.signing, { jku: `${base}/jwks.json` }) } }));
    assert.equal(verified.verified, true);
    assert.equal(verified.kid, 'pub-2026-a');
    const seen = requests['/attacker.json'] ?? 0;
    const borrowed = resultOf(await op(alice, { register: { agentCard: await signCard(card(), attacker.signing, { jku: `${base}/attacker.json` }) } }));
    assert.equal(borrowed.verified, false);
    assert.equal(borrowed.signatures[0].status, 'unknown-key');
    assert.equal(requests['/attacker.json'] ?? 0, seen, 'a jku in a card is not a trust root');
    // The last good copy of each set, kept in the data directory for a restart during an outage.
    const saved = JSON.parse(fs.readFileSync(`${registry.dataDir}/trusted-jwks.json`, 'utf8'));
    assert.deepEqual(Object.keys(saved).sort(), [`${base}/jwks.json`, `${base}/revocable.json`].sort());
  });

  test('a published key that is no public key (its members missing) is left out: the set\'s other keys stay trusted, and the registry goes on', async () => {
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const jku = `${base}/jwks.json`;
    const good = sets['/jwks.json']!;
    // A publisher's broken deploy: an EC key without its coordinates, an RSA key without "e".
    sets['/jwks.json'] = { keys: [...good.keys, { kty: 'EC', kid: 'broken-ec', crv: 'P-256' }, { kty: 'RSA', kid: 'broken-rsa', n: 'A'.repeat(400) }] };
    try {
      // Two fetches later (REGISTRY_TRUSTED_JKU_REFRESH_SECONDS=1), one surely read the broken set.
      // Before, the trust roots' fingerprint threw on such a key: an unhandled rejection after the
      // scheduled fetch (the registry process crashed), every later lookup failed.
      const seen = requests['/jwks.json'] ?? 0;
      await waitFor(() => (requests['/jwks.json'] ?? 0) >= seen + 2, 'the set fetched again, twice', 10_000);
      const verified = resultOf(await op(alice, { register: { agentCard: await signCard(card(), first.signing, { jku }) } }));
      assert.equal(verified.verified, true, 'the good key of the set is still trusted');
      const borrowed = { ...attacker.signing, kid: 'broken-ec', jwk: { ...attacker.signing.jwk, kid: 'broken-ec' } };
      const unknown = resultOf(await op(alice, { register: { agentCard: await signCard(card(), borrowed, { jku }) } }));
      assert.deepEqual([unknown.verified, unknown.signatures[0].status], [false, 'unknown-key'], 'a key left out verifies nothing, and refuses nothing');
    } finally {
      sets['/jwks.json'] = good;
    }
  });

  test('a key removed from an allow-listed JWKS: the cards it verified become unverified at the next fetch (REGISTRY_TRUSTED_JKU_REFRESH_SECONDS)', async () => {
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const jku = `${base}/revocable.json`;
    const registered = resultOf(await op(alice, { register: { agentCard: await signCard(card(), revocable.signing, { jku }) } }));
    assert.equal(registered.verified, true);
    sets['/revocable.json'] = { keys: [] };
    const verifiedNow = async () => resultOf(await op(alice, { get: { id: registered.id } })).verified as boolean;
    await waitFor(async () => !(await verifiedNow()), 'the entry re-evaluated after the key set was fetched again', 10_000);
    const listed = resultOf(await op(alice, { list: { filter: { verified: true } } }));
    assert.ok(!listed.entries.some((e: { id: string }) => e.id === registered.id), 'list follows');
  });
});

describe('two allow-listed publishers, one kid', () => {
  test('a publisher that adds another\'s kid to its set neither unverifies the other\'s cards nor has its own listed as the other\'s: every door names the JWKS of the verifying key', async () => {
    const [publisherA, publisherB, bUnderA, bNew, nobody] = await Promise.all([key('a-2026'), key('b-2026'), key('a-2026'), key('b-new'), key('a-2026')]);
    const [urlA, urlB] = [`${base}/publisher-a.json`, `${base}/publisher-b.json`];
    sets['/publisher-a.json'] = { keys: [publisherA.publicJwk] };
    sets['/publisher-b.json'] = { keys: [publisherB.publicJwk] };
    const registry = await startTestRegistry({ REGISTRY_TRUSTED_JKU: `${urlA},${urlB}`, REGISTRY_FETCH_ALLOW: '127.0.0.1', REGISTRY_TRUSTED_JKU_REFRESH_SECONDS: '1' });
    const mcp = await connectMcp(registry.url, 'trust-jku-test');
    try {
      const [alice, bob, anonymous] = await Promise.all([sdkClient(registry.url, { token: TOKENS.alice }), sdkClient(registry.url, { token: TOKENS.bob }), sdkClient(registry.url)]);
      // A's card, signed without a jku: verified, by A's set.
      const acme = resultOf(await op(alice, { register: { agentCard: await signCard(card(), publisherA.signing) } }));
      assert.deepEqual([acme.verified, acme.kid, acme.jwks], [true, 'a-2026', urlA]);
      assert.deepEqual(acme.signatures, [{ status: 'verified', kid: 'a-2026', alg: 'ES256', jwks: urlA }]);
      // Stored while its key is unknown: verified once B publishes it, in the same change of keys
      // as B's key under A's kid (so its re-evaluation has run when it is verified).
      const canary = resultOf(await op(bob, { register: { agentCard: await signCard(card(), bNew.signing) } }));
      assert.equal(canary.verified, false);

      sets['/publisher-b.json'] = { keys: [publisherB.publicJwk, bUnderA.publicJwk, bNew.publicJwk] };
      const get = async (id: string) => resultOf(await op(anonymous, { get: { id } }));
      await waitFor(async () => (await get(canary.id)).verified === true, 'the stored cards re-evaluated after B\'s set changed', 10_000);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const stayed = await get(acme.id);
      assert.deepEqual([stayed.verified, stayed.kid, stayed.jwks], [true, 'a-2026', urlA], "A's card stays verified, by A's set (it was unknown-key: the kid is held by several trusted JWKS)");
      assert.deepEqual(stayed.signatures, [{ status: 'verified', kid: 'a-2026', alg: 'ES256', jwks: urlA }]);

      // B's key under A's kid, with B's jku or without one: verified, and said to be B's.
      const named = resultOf(await op(bob, { register: { agentCard: await signCard(card(), bUnderA.signing, { jku: urlB }) } }));
      const unnamed = resultOf(await op(bob, { register: { agentCard: await signCard(card(), bUnderA.signing) } }));
      for (const registered of [named, unnamed]) {
        assert.deepEqual([registered.verified, registered.kid, registered.jwks], [true, 'a-2026', urlB]);
        const entry = await get(registered.id);
        assert.deepEqual([entry.kid, entry.jwks, entry.signatures], ['a-2026', urlB, [{ status: 'verified', kid: 'a-2026', alg: 'ES256', jwks: urlB }]]);
      }
      // B's key under A's kid with A's jku: A's key did not make it.
      const borrowed = errorOf(await op(bob, { register: { agentCard: await signCard(card(), bUnderA.signing, { jku: urlA }) } }));
      assert.equal(borrowed.code, 'SIGNATURE_INVALID');
      // A key neither set holds, under the shared kid: no set's key verifies it.
      assert.equal(errorOf(await op(bob, { validate: { agentCard: await signCard(card(), nobody.signing) } })).code, 'SIGNATURE_INVALID');

      // Every door that names the kid names the set: search and list hits, MCP, ARD and the AI Catalog.
      const hit = resultOf(await op(anonymous, { search: { query: 'JKU Agent', filter: { verified: true }, limit: 100 } })).results.find((h: WireJson) => h.id === named.id);
      assert.deepEqual([hit.kid, hit.jwks], ['a-2026', urlB]);
      const listed = resultOf(await op(anonymous, { list: { filter: { verified: true } } })).entries;
      assert.deepEqual(
        [acme.id, named.id].map((id) => listed.find((e: WireJson) => e.id === id)).map((e: WireJson) => [e.kid, e.jwks]),
        [['a-2026', urlA], ['a-2026', urlB]],
      );
      const viaMcp = structured(await callTool(mcp, 'get_agent', { id: named.id }));
      assert.deepEqual([viaMcp.kid, viaMcp.jwks, viaMcp.signatures[0].jwks], ['a-2026', urlB, urlB]);
      const mcpHits = await callTool(mcp, 'search_agents', { query: 'JKU Agent', filter: { verified: true }, limit: 50 });
      assert.equal(structured(mcpHits).results.find((h: WireJson) => h.id === acme.id).jwks, urlA);
      assert.match((mcpHits.content[0] as { text: string }).text, new RegExp(`signature verified \\(kid a-2026 from ${urlB.replace(/[.]/g, '\\.')}\\)`));
      for (const [id, jwks] of [[acme.id, urlA], [named.id, urlB]] as const) {
        const ard = (await (await fetch(`${registry.url}/agents/${id}`)).json()) as WireJson;
        assert.deepEqual([ard.metadata.verifiedKid, ard.metadata.verifiedJwks], ['a-2026', jwks]);
      }
      const catalog = (await (await fetch(`${registry.url}/.well-known/ai-catalog.json`)).json()) as WireJson;
      assert.equal(catalog.entries.find((e: WireJson) => e.metadata?.registryId === named.id).metadata.verifiedJwks, urlB);
    } finally {
      await mcp.close();
      await registry.close();
      fs.rmSync(registry.dataDir, { recursive: true, force: true });
    }
  });
});

describe('REGISTRY_REQUIRE_VERIFIED, a refreshed card by a kid no trusted JWKS holds while one cannot be fetched', () => {
  test('the owner\'s refresh answer has the detail a registration gets; the public health says it whole, pointing to no details', async () => {
    const [publisher, unknown] = await Promise.all([key('req-2026'), key('req-new')]);
    sets['/required.json'] = { keys: [publisher.publicJwk] };
    const origin = await startOrigin();
    const registry = await startTestRegistry({
      REGISTRY_TRUSTED_JKU: `${base}/required.json`,
      REGISTRY_REQUIRE_VERIFIED: 'true',
      REGISTRY_FETCH_ALLOW: '127.0.0.1',
      REGISTRY_TRUSTED_JKU_REFRESH_SECONDS: '1',
    });
    try {
      const [alice, bob, anonymous] = await Promise.all([sdkClient(registry.url, { token: TOKENS.alice }), sdkClient(registry.url, { token: TOKENS.bob }), sdkClient(registry.url)]);
      const agent = card();
      serveCard(origin, await signCard(agent, publisher.signing), '/required');
      const registered = resultOf(await op(alice, { register: { url: `${origin.url}/required` } }));
      assert.equal(registered.verified, true);
      // The publisher's key server goes down (its keys stay trusted for a while); the source
      // serves the card signed by a key no trusted set holds.
      down.add('/required.json');
      const seen = requests['/required.json'] ?? 0;
      await waitFor(() => (requests['/required.json'] ?? 0) >= seen + 1, 'a failed fetch of the set', 10_000);
      const resigned = await signCard({ ...agent, description: 'Signed by a new key.' }, unknown.signing);
      serveCard(origin, resigned, '/required');

      const refused = errorOf(await op(alice, { refresh: { id: registered.id } }));
      assert.equal(refused.code, 'SIGNATURE_INVALID');
      assert.match(refused.message, /none of the card's signature is by one\. See the details for each signature\.$/);
      assert.match(refused.details[0].message, new RegExp(`the JWKS at ${base.replace(/[.]/g, '\\.')}/required\\.json could not be fetched`), 'the owner is told which, as a registrant is');
      const inline = errorOf(await op(bob, { register: { agentCard: resigned } }));
      assert.deepEqual(refused.details, inline.details, 'the details a registration of the card gets');

      const { health } = resultOf(await op(anonymous, { get: { id: registered.id } }));
      assert.equal(health.reason, 'SIGNATURE_INVALID');
      assert.doesNotMatch(health.message, /See the details/, 'health has no details to point to');
      assert.match(
        health.message,
        /none of the card's signature is by one: signature 0 by kid "req-new": no trusted key has kid "req-new"; a trusted JWKS that may hold it could not be fetched just now; the registry's operator can see which, and why, in its log\.$/,
      );
      assert.ok(!health.message.includes(base), 'no allow-listed JWKS URL in what anyone may read');
    } finally {
      down.delete('/required.json');
      await registry.close();
      await origin.close();
      fs.rmSync(registry.dataDir, { recursive: true, force: true });
    }
  });
});

describe('the guard still applies to allow-listed JWKS URLs', () => {
  test('a loopback JWKS URL without REGISTRY_FETCH_ALLOW is refused before any request; cards stay unverified and say why', async () => {
    const seen = requests['/jwks.json'] ?? 0;
    const registry = await startTestRegistry({ REGISTRY_TRUSTED_JKU: `${base}/jwks.json` });
    try {
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      const signed = await signCard(card(), first.signing);
      const result = resultOf(await op(alice, { register: { agentCard: signed } }));
      assert.equal(result.verified, false);
      assert.match(result.signatures[0].reason, /could not be fetched \(.*loopback/);
      assert.equal(requests['/jwks.json'] ?? 0, seen, 'nothing was sent');

      // Only authenticated callers learn the operator's JWKS URLs and why a fetch failed: anonymous
      // ones (validate is open to anyone, entries are public) get the status and a generic reason.
      const operatorDetail = new RegExp(`${base.replace(/[.]/g, '\\.')}|loopback`);
      const validated = resultOf(await op(alice, { validate: { agentCard: signed } }));
      assert.match(validated.signatures[0].reason, /the JWKS at http:\/\/127\.0\.0\.1:\d+\/jwks\.json could not be fetched \(.*loopback/);
      const anonymous = await sdkClient(registry.url);
      const mcp = await connectMcp(registry.url, 'anonymous');
      const anonymousAnswers = [
        resultOf(await op(anonymous, { validate: { agentCard: signed } })),
        resultOf(await op(anonymous, { get: { id: result.id } })),
        structured(await callTool(mcp, 'validate_document', { agentCard: signed })),
      ];
      await mcp.close();
      for (const answer of anonymousAnswers) {
        assert.equal(answer.verified, false);
        assert.equal(answer.signatures[0].status, 'unknown-key');
        assert.match(answer.signatures[0].reason, /a trusted JWKS that may hold it could not be fetched just now; the registry's operator can see which, and why, in its log/);
        assert.doesNotMatch(JSON.stringify(answer), operatorDetail, 'no allow-listed URL nor fetch error for anonymous callers');
      }
    } finally {
      await registry.close();
      fs.rmSync(registry.dataDir, { recursive: true, force: true });
    }
  });
});

describe('a kid several trust roots hold', () => {
  test('another trusted publisher cannot sign as a kid the keys file holds; a kid several JWKS hold is verified by the key that verifies it, its set named', async () => {
    const [operators, impostor, shared, sharedImpostor] = await Promise.all([key('acme'), key('acme'), key('shared'), key('shared')]);
    const dir = fs.mkdtempSync('/tmp/a2a-registry-kids-');
    const file = `${dir}/jwks.json`;
    fs.writeFileSync(file, JSON.stringify({ keys: [operators.publicJwk] }));
    sets['/publisher.json'] = { keys: [shared.publicJwk] };
    sets['/impostor.json'] = { keys: [impostor.publicJwk, sharedImpostor.publicJwk] };
    const lines: string[] = [];
    const fetcher = new GuardedFetcher({ maxBytes: 10_240, allow: AllowList.parse('127.0.0.1') });
    const roots = await TrustRoots.open({
      keysFile: file,
      jkuUrls: [`${base}/publisher.json`, `${base}/impostor.json`],
      fetchJwks: guardedJwksFetch(fetcher),
      log: createLogger('warn', { write: (line: string) => lines.push(line) }),
      watch: false,
      sighup: false,
    });
    try {
      assert.ok(lines.some((l) => /kid \\"acme\\" is held by several trust roots/.test(l)), 'the operator is told');
      const verifier = createSignatureVerifier(roots);
      const statusOf = async (signing: SigningKey, jku?: string) => {
        const result = await verifier.verifyAgentCard(await signCard(card(), signing, jku ? { jku } : {}), '1.0');
        return (result.detailed ?? result.verification).signatures[0]!;
      };

      assert.equal((await statusOf(operators.signing)).status, 'verified');
      const borrowed = await statusOf(impostor.signing);
      assert.equal(borrowed.status, 'invalid', 'the kid names the key of the keys file, which did not sign');
      assert.equal((await statusOf(impostor.signing, `${base}/impostor.json`)).status, 'invalid', 'a jku does not override the keys file');

      assert.deepEqual(await statusOf(operators.signing), { status: 'verified', kid: 'acme', alg: 'ES256', jwks: 'registry' }, "the operator's own keys");
      const publisher = { status: 'verified', kid: 'shared', alg: 'ES256', jwks: `${base}/publisher.json` };
      assert.deepEqual(await statusOf(shared.signing, `${base}/publisher.json`), publisher, 'the jku names the set');
      // Without a jku, each set's key under the kid is tried: a signature verifies with one only,
      // which says whose it is. The impostor's key under "shared" neither unverifies the
      // publisher's cards nor passes for the publisher's: its set is named.
      assert.deepEqual(await statusOf(shared.signing), publisher);
      assert.deepEqual(await statusOf(sharedImpostor.signing), { ...publisher, jwks: `${base}/impostor.json` });
      assert.equal((await statusOf(sharedImpostor.signing, `${base}/publisher.json`)).status, 'invalid', 'the jku names the set, whose key did not sign');
      const nobodys = await key('shared');
      assert.equal((await statusOf(nobodys.signing)).status, 'invalid', 'no set\'s key under the kid verifies it');
    } finally {
      roots.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
