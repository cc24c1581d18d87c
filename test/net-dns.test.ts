/**
 * Host-name lookups of the outbound guard are bounded: a registry given REGISTRY_DNS_SERVERS asks
 * those servers (a real DNS server on 127.0.0.1 here), a lookup that does not finish within the
 * request's deadline fails saying so, and no more lookups run at once than the guard allows (the
 * system resolver holds one of libuv's few threads per lookup until it returns).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { AllowList, FetchError, GuardedFetcher, type Resolver } from '../src/net/index.js';
import { A_GRACE_MS } from '../src/net/dns.js';
import { loadConfig } from '../src/config/config.js';
import { errorOf, op, registerByUrl, resultOf, sdkClient } from './support/client.js';
import { startDnsServer, type DnsServer } from './support/dns-server.js';
import { v1Card } from './support/documents.js';
import { startOrigin, type OriginServer } from './support/origin-server.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';

let dns: DnsServer;
let origin: OriginServer;

before(async () => {
  [dns, origin] = await Promise.all([startDnsServer(), startOrigin()]);
  dns.set('agent.test', ['127.0.0.1']);
  dns.set('silent.test', 'silent');
  // Some forwarders and firewalls drop AAAA queries.
  dns.set('no-aaaa.test', ['127.0.0.1'], { silent: ['AAAA'] });
  origin.json('/.well-known/agent-card.json', v1Card('DNS Agent', 'https://dns-agent.example.org/a2a'));
  // AAAA answers at once, A 400 ms later (past the 250 ms AAAA is given once A has come); the
  // origin listens on IPv4 only, so the name is reachable at its A record alone.
  dns.set('v6-first.test', ['127.0.0.1', '::1'], { lateMs: { A: 400 } });
  origin.json('/no-aaaa/.well-known/agent-card.json', v1Card('No AAAA Agent', 'https://no-aaaa.example.org/a2a'));
  origin.json('/v6-first/.well-known/agent-card.json', v1Card('V6 First Agent', 'https://v6-first.example.org/a2a'));
});
after(async () => {
  await Promise.all([dns.close(), origin.close()]);
});

describe('REGISTRY_DNS_SERVERS', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startTestRegistry({ REGISTRY_DNS_SERVERS: dns.address, REGISTRY_FETCH_ALLOW: '127.0.0.1,::1', REGISTRY_FETCH_TIMEOUT_MS: '1000' });
  });
  after(async () => {
    await registry.close();
    fs.rmSync(registry.dataDir, { recursive: true, force: true });
  });

  test('names are resolved by the servers named: a registration by URL reaches the address they answer', async () => {
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const result = await registerByUrl(alice, `http://agent.test:${origin.port}`);
    assert.equal(result.created, true);
    assert.equal(result.source.url, `http://agent.test:${origin.port}/.well-known/agent-card.json`);
    assert.ok(dns.questions.some((q) => q.name === 'agent.test' && q.type === 'A'), 'asked the configured server');
  });

  test('a server that does not answer costs one deadline, and the error says the lookup took too long', async () => {
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const started = Date.now();
    const error = errorOf(await op(alice, { register: { url: `http://silent.test:${origin.port}` } }));
    const ms = Date.now() - started;
    assert.equal(error.code, 'FETCH_FAILED');
    // The lookup's own time (the deadline also covers what came before it: 0.9 s on a loaded machine).
    assert.match(error.message, /looking up silent\.test took longer than (0\.\d|1) s, past the request's deadline of 1000 ms \(REGISTRY_FETCH_TIMEOUT_MS\)/);
    assert.equal(error.details[0].rule, 'timeout');
    assert.ok(ms < 4000, `answered after ${ms} ms`);
    // The same for an MCP server's tools (fetchTools): its exchange's deadline ran out during the
    // lookup, which came back as a bare abort, "no complete answer", without details.
    const mcp = errorOf(await op(alice, { register: { mcpServer: { name: 'silent-mcp', url: `http://silent.test:${origin.port}/mcp`, description: 'never resolved' }, fetchTools: true } }));
    assert.equal(mcp.code, 'FETCH_FAILED');
    // Told as the exchange's deadline (the guard told it as its own request's, "the request's deadline").
    assert.match(mcp.message, /looking up silent\.test took longer than (0\.\d|1) s, when its caller's deadline passed after \d+ ms \(REGISTRY_FETCH_TIMEOUT_MS: 1000 ms for the whole MCP exchange\)/);
    assert.equal(mcp.details[0].rule, 'timeout');
  });

  test('a name whose AAAA query goes unanswered is fetched at its A records, after a short wait for the AAAA, not at the deadline', async () => {
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const started = Date.now();
    const result = await registerByUrl(alice, `http://no-aaaa.test:${origin.port}/no-aaaa`);
    const ms = Date.now() - started;
    assert.equal(result.created, true);
    assert.equal(result.source.url, `http://no-aaaa.test:${origin.port}/no-aaaa/.well-known/agent-card.json`);
    assert.ok(dns.questions.some((q) => q.name === 'no-aaaa.test' && q.type === 'AAAA'), 'the AAAA records were asked for');
    // Well within the 1 s deadline it waited for until the AAAA answer that never came.
    assert.ok(ms < 900, `registered after ${ms} ms`);
  });

  test('a name whose AAAA answers before its A records is fetched at its A records: A is waited for longer than AAAA (A_GRACE_MS)', async () => {
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    // Given up on 250 ms after the AAAA answer, the A record was dropped and ::1 alone connected to: ECONNREFUSED.
    const result = await registerByUrl(alice, `http://v6-first.test:${origin.port}/v6-first`);
    assert.equal(result.created, true);
    assert.equal(result.source.url, `http://v6-first.test:${origin.port}/v6-first/.well-known/agent-card.json`);
    assert.ok(dns.questions.some((q) => q.name === 'v6-first.test' && q.type === 'A'), 'the A records were asked for');
  });

  test('a name whose A query goes unanswered is fetched at its AAAA records once A has had its wait (A_GRACE_MS), not at the deadline', async () => {
    // AAAA answers at once, A never (dropped, as some forwarders drop AAAA): the origin is on IPv6.
    dns.set('no-a.test', ['::1'], { silent: ['A'] });
    const v6 = await startOrigin({ listenOn: '::1' });
    v6.json('/.well-known/agent-card.json', v1Card('No A Agent', 'https://no-a.example.org/a2a'));
    const f = new GuardedFetcher({ maxBytes: 10_240, timeoutMs: 4000, allow: AllowList.parse('::1'), dnsServers: [dns.address] });
    try {
      const started = Date.now();
      // It timed out: "looking up no-a.test took longer than 4 s", its IPv6 address known after a few milliseconds.
      const doc = await f.getJson(`http://no-a.test:${v6.port}/.well-known/agent-card.json`, { purpose: 'agent-card' });
      const ms = Date.now() - started;
      assert.equal(doc.notModified, false);
      assert.ok(dns.questions.some((q) => q.name === 'no-a.test' && q.type === 'A'), 'the A records were asked for');
      assert.ok(ms >= A_GRACE_MS - 50, `fetched after ${ms} ms: A is waited for longer than AAAA (a name whose A comes 400 ms after its AAAA is fetched at its A records, above)`);
      assert.ok(ms < 3000, `fetched after ${ms} ms, well before the 4 s deadline`);
    } finally {
      await f.close();
      await v6.close();
    }
  });

  test("the other family's answer, when it comes within the short wait, is checked like the first's; one later than that is not used", async () => {
    // A comes at once, AAAA (a private address) 30 ms later: the name resolves inside too, and is refused.
    dns.set('late-private.test', ['127.0.0.1', 'fd12:3456::1'], { lateMs: { AAAA: 30 } });
    // AAAA (the same) 3 s later, past the wait and the deadline: the name's addresses are its A records.
    dns.set('later-private.test', ['127.0.0.1', 'fd12:3456::1'], { lateMs: { AAAA: 3000 } });
    const f = new GuardedFetcher({ maxBytes: 10_240, timeoutMs: 1000, allow: AllowList.parse('127.0.0.1'), dnsServers: [dns.address] });
    try {
      const refused = await f.check(`http://late-private.test:${origin.port}/`, { purpose: 'agent-card' }).then(
        () => assert.fail('a name with a private address is refused'),
        (error: unknown) => error,
      );
      assert.ok(refused instanceof FetchError, String(refused));
      assert.equal(refused.reason, 'non-public');
      assert.equal(refused.rule, 'private');
      assert.match(refused.message, /late-private\.test resolves to an address the registry may not contact/);
      const started = Date.now();
      const doc = await f.getJson(`http://later-private.test:${origin.port}/.well-known/agent-card.json`, { purpose: 'agent-card' });
      assert.equal(doc.notModified, false);
      assert.ok(Date.now() - started < 900, `fetched after ${Date.now() - started} ms`);
    } finally {
      await f.close();
    }
  });

  test('localhost is the loopback address without asking the servers (an embeddings service at http://localhost keeps working)', async () => {
    const f = new GuardedFetcher({ maxBytes: 10_240, allow: AllowList.parse('localhost'), dnsServers: [dns.address] });
    const doc = await f.getJson(`http://localhost:${origin.port}/.well-known/agent-card.json`, { purpose: 'agent-card' });
    assert.equal(doc.notModified, false);
    assert.ok(!dns.questions.some((q) => q.name === 'localhost'), 'not asked of the DNS server');
    await f.close();
  });

  test('a list that is not IP addresses stops start-up naming the item', () => {
    assert.throws(() => loadConfig({ REGISTRY_DNS_SERVERS: '10.0.0.53, dns.example.com' }), /REGISTRY_DNS_SERVERS.*"dns\.example\.com" is not an IP address with an optional port/s);
  });
});

/**
 * A fetcher with two lookup slots whose resolver, like getaddrinfo, cannot be cancelled: every
 * name but agent.test hangs until `hung`'s callbacks are called; `asked` lists the names looked up.
 */
function hangingLookups() {
  const hung: (() => void)[] = [];
  const asked: string[] = [];
  const resolve: Resolver = (host) => {
    asked.push(host);
    if (host === 'agent.test') return Promise.resolve(['127.0.0.1']);
    return new Promise((done) => hung.push(() => done(['127.0.0.1'])));
  };
  const f = new GuardedFetcher({ maxBytes: 10_240, timeoutMs: 300, allow: AllowList.parse('127.0.0.1'), resolve, maxLookups: 2 });
  const at = (host: string) => `http://${host}:${origin.port}/.well-known/agent-card.json`;
  return { hung, asked, f, at };
}

describe('lookups in flight are capped', () => {
  test('past the cap a lookup waits its turn; a hung lookup keeps its slot until it returns, not until its request gave up', async () => {
    // The system resolver's lookups cannot be cancelled: this one, like getaddrinfo, returns when it returns.
    const { hung, asked, f, at } = hangingLookups();
    const failures = await Promise.all(['a.test', 'b.test', 'c.test', 'd.test'].map((h) => f.getJson(at(h), { purpose: 'agent-card' }).then(() => assert.fail('answered'), (e: unknown) => e)));
    assert.deepEqual(asked, ['a.test', 'b.test'], 'two lookups ran, the others waited');
    for (const failure of failures) {
      assert.ok(failure instanceof FetchError);
      assert.equal(failure.reason, 'timeout');
    }
    assert.match((failures[0] as FetchError).message, /^looking up a\.test took longer than 0\.\d s, past the request's deadline of 300 ms/);
    assert.match((failures[3] as FetchError).message, /^looking up d\.test took longer than 0\.\d s, waiting behind the 2 lookups already in flight/);
    // Their requests have given up, but the lookups still run: the next waits too.
    const waiting = f.getJson(at('agent.test'), { purpose: 'agent-card', timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(asked, ['a.test', 'b.test']);
    for (const done of hung) done();
    const doc = await waiting;
    assert.equal(doc.notModified, false);
    assert.deepEqual(asked, ['a.test', 'b.test', 'agent.test']);
    await f.close();
  });

  test('a name already being looked up is not looked up again: a name that never answers holds one slot, however many requests ask for it', async () => {
    const { hung, asked, f, at } = hangingLookups();
    // A burst of registrations (or a refresh round) naming one host whose DNS hangs.
    const failures = await Promise.all([1, 2, 3, 4].map(() => f.getJson(at('hung.test'), { purpose: 'agent-card' }).then(() => assert.fail('answered'), (e: unknown) => e)));
    for (const failure of failures) {
      assert.ok(failure instanceof FetchError);
      assert.match(failure.message, /^looking up hung\.test took longer than 0\.\d s, past the request's deadline of 300 ms/);
    }
    assert.deepEqual(asked, ['hung.test'], 'one lookup, shared');
    // It still runs, in one slot: another name is looked up at once, in the other.
    const doc = await f.getJson(at('agent.test'), { purpose: 'agent-card' });
    assert.equal(doc.notModified, false);
    // Once it returns, the name is looked up anew next time.
    for (const done of hung) done();
    await new Promise((r) => setImmediate(r));
    assert.equal((await f.getJson(at('hung.test'), { purpose: 'agent-card' }).catch((e: unknown) => e)) instanceof FetchError, true);
    assert.deepEqual(asked, ['hung.test', 'agent.test', 'hung.test']);
    for (const done of hung) done();
    await f.close();
  });
});
