/**
 * The outbound guard (src/net) against real servers on 127.0.0.1: which addresses it refuses
 * (every range, as URL literals and as DNS answers from a resolver hook — nothing here resolves a
 * real name), that the connection goes to the address it checked, redirects, the deadline, the
 * body cap, the content codings asked for and refused, JSON-only answers, conditional requests,
 * the fetch-compatible function and POSTs, and the bound on the registry's loading of its HTTP client.
 * The outbound tripwire stops and records any connection to a non-loopback address, and every
 * test ends by asserting there was none.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, afterEach, before, describe, test } from 'node:test';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { fetch as undiciFetch } from 'undici';
import ipaddr from 'ipaddr.js';
import { ensureBuilt, REPO_ROOT } from './support/built.js';
import { takeOutboundViolations } from './support/outbound-tripwire.js';
import { selfSignedCertificate, startOrigin, waitFor, type OriginServer } from './support/origin-server.js';
import { AllowList, FetchError, GuardedFetcher, type FetchEvent, type NameRefusal, type Resolver } from '../src/net/index.js';
import { restrictedRange, type AddressRule } from '../src/net/address-policy.js';
import { loadConfig } from '../src/config/config.js';
import { clearableTimeout } from '../src/lib/clearable-timeout.js';
import { RegistryMetrics } from '../src/observability/metrics.js';

/** Host names for the resolver hook: what each "resolves" to. */
const DNS: Record<string, string[]> = {
  'agent.test': ['127.0.0.1'],
  'other.test': ['127.0.0.1'],
  'inside.test': ['10.1.2.3'],
  'mixed.test': ['93.184.216.34', '127.0.0.1'],
  'metadata.test': ['169.254.169.254'],
  'mapped.test': ['::ffff:10.0.0.1'],
  'v6-local.test': ['fd12:3456::1'],
};
const resolveTest: Resolver = async (host) => {
  const answer = DNS[host];
  if (!answer) throw Object.assign(new Error(`queryA ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return answer;
};

let origin: OriginServer;
let events: FetchEvent[] = [];
const observer = { fetched: (e: FetchEvent) => void events.push(e) };

/** A fetcher that allows the test host names agent.test and other.test (both 127.0.0.1). */
const fetcher = (options: Partial<ConstructorParameters<typeof GuardedFetcher>[0]> = {}) =>
  new GuardedFetcher({ maxBytes: 10_240, timeoutMs: 2000, allow: AllowList.parse('agent.test,other.test'), resolve: resolveTest, observer, ...options });

const at = (host: string, path: string): string => `http://${host}:${origin.port}${path}`;

/**
 * A zstd frame of `content` whose header declares a 128 MB window (window log 27, the most
 * node:zlib's decoder takes by default) and no content size, so a decoder must reserve the whole
 * window; zlib's own compressor declares the size of what it compresses in one call, and a window
 * no larger. Raw blocks (RFC 8878, 3.1.1).
 */
function zstdFrame(content: Buffer): Buffer {
  const header = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, (27 - 10) << 3]);
  const blocks: Buffer[] = [];
  for (let at = 0; at === 0 || at < content.length; at += 65_536) {
    const piece = content.subarray(at, at + 65_536);
    const last = at + 65_536 >= content.length ? 1 : 0;
    const word = last | (piece.length << 3);
    blocks.push(Buffer.from([word & 0xff, (word >> 8) & 0xff, word >> 16]), piece);
  }
  return Buffer.concat([header, ...blocks]);
}

/** Why the memory of a zstd answer cannot be measured here, if it cannot. */
function zstdSkip(): string | false {
  if (!('zstdDecompressSync' in zlib)) return "node:zlib has no zstd before Node 22.15: undici passes a zstd body undecoded, so no decoder would reserve its window";
  if (!fs.existsSync('/proc/self/status')) return "the process's address space is read from /proc/self/status (Linux)";
  return false;
}

/** The process's address space (Linux's VmSize), resident memory and array buffers, in bytes. */
function memory(): { reserved: number; rss: number; arrayBuffers: number } {
  const { rss, arrayBuffers } = process.memoryUsage();
  const size = /^VmSize:\s+(\d+) kB$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return { reserved: Number(size?.[1] ?? NaN) * 1024, rss, arrayBuffers };
}

async function refusal(promise: Promise<unknown>): Promise<FetchError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof FetchError, `expected a FetchError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the request to fail');
}

before(async () => {
  origin = await startOrigin();
});
after(() => origin.close());
afterEach(() => {
  assert.deepEqual(takeOutboundViolations(), [], 'a connection left for a non-loopback address');
  events = [];
});

describe('address rules', () => {
  const samples: [string, string | undefined][] = [
    ['0.0.0.0', 'unspecified'], ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'], ['172.16.0.1', 'private'], ['172.31.255.255', 'private'], ['192.168.1.1', 'private'],
    ['100.64.0.1', 'cgnat'], ['100.127.255.254', 'cgnat'],
    ['127.0.0.1', 'loopback'], ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'link-local'], ['169.254.0.1', 'link-local'], ['168.63.129.16', 'cloud-platform'],
    ['192.0.0.8', 'reserved'], ['192.0.2.1', 'documentation'], ['198.51.100.7', 'documentation'], ['203.0.113.9', 'documentation'],
    ['192.88.99.1', 'reserved'], ['198.18.0.1', 'reserved'], ['198.19.255.1', 'reserved'],
    ['224.0.0.1', 'multicast'], ['239.255.255.250', 'multicast'], ['240.0.0.1', 'reserved'], ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'], ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'ipv4-mapped'], ['::ffff:8.8.8.8', 'ipv4-mapped'], ['::ffff:0:10.0.0.1', 'ipv4-mapped'], ['::a00:1', 'ipv4-compatible'],
    ['64:ff9b::7f00:1', 'nat64'], ['64:ff9b:1::a00:1', 'nat64'],
    ['fc00::1', 'private'], ['fd12:3456::1', 'private'], ['fe80::1', 'link-local'], ['febf::1', 'link-local'], ['fec0::1', 'private'],
    ['ff02::1', 'multicast'], ['2001::1', 'teredo'], ['2001:db8::1', 'documentation'], ['3fff::1', 'documentation'],
    ['2001:2::1', 'reserved'], ['2001:10::1', 'reserved'], ['2002:7f00:1::1', '6to4'], ['100::1', 'reserved'], ['5f00::1', 'reserved'], ['4000::1', 'reserved'],
    // Public unicast: not refused.
    ['8.8.8.8', undefined], ['1.1.1.1', undefined], ['93.184.216.34', undefined], ['100.63.255.255', undefined], ['100.128.0.0', undefined],
    ['172.32.0.1', undefined], ['169.253.255.255', undefined], ['168.63.129.15', undefined], ['168.63.129.17', undefined], ['223.255.255.255', undefined],
    ['2606:4700:4700::1111', undefined], ['2a00:1450:4001::1', undefined], ['2001:4860:4860::8888', undefined],
  ];
  for (const [address, rule] of samples) {
    test(`${address} → ${rule ?? 'public'}`, () => {
      assert.equal(restrictedRange(ipaddr.parse(address)), rule);
    });
  }

  test('every refused range is refused as a URL literal, by check() and by getJson(), before connecting', async () => {
    const f = fetcher({ allow: AllowList.EMPTY });
    for (const [address, rule] of samples.filter(([, r]) => r)) {
      const host = address.includes(':') ? `[${address}]` : address;
      const checked = await refusal(f.check(`http://${host}:${origin.port}/card`, { purpose: 'agent-card' }));
      assert.equal(checked.reason, rule, address);
      assert.equal(checked.refused, true);
      const fetched = await refusal(f.getJson(`https://${host}/card`, { purpose: 'agent-card' }));
      assert.equal(fetched.reason, rule, address);
      assert.match(fetched.message, /REGISTRY_FETCH_ALLOW/);
    }
    assert.equal(origin.requests.length, 0);
  });

  test('a DNS answer pointing inside is refused, even beside a public one, without saying what the name resolves to nor its kind', async () => {
    const refusedNames: NameRefusal[] = [];
    const f = fetcher({ observer: { ...observer, refusedName: (refused) => void refusedNames.push(refused) } });
    // The message reaches the caller (and, with probes on, an entry's public health): neither the
    // internal address nor its kind is told (a caller could map the operator's internal names:
    // which exist, which is the metadata service); the operator's metric and log say both.
    const cases: [string, AddressRule, string][] = [
      ['inside.test', 'private', '10.1.2.3'],
      ['mixed.test', 'loopback', '127.0.0.1'],
      ['metadata.test', 'link-local', '169.254.169.254'],
      ['mapped.test', 'ipv4-mapped', '::ffff:10.0.0.1'],
      ['v6-local.test', 'private', 'fd12:3456::1'],
    ];
    for (const [host, rule, address] of cases) {
      const error = await refusal(f.getJson(at(host, '/card'), { purpose: 'agent-card' }));
      assert.equal(error.reason, 'non-public', host);
      assert.equal(error.refused, true);
      assert.equal(error.message, `refused to fetch ${at(host, '/card')}: ${host} resolves to an address the registry may not contact (loopback, private, link-local or another range that is not public; which one is in the registry's log) (rule "non-public"); the registry fetches only public addresses unless REGISTRY_FETCH_ALLOW lists the host, the address or its range`);
      assert.equal(error.rule, rule, host);
      assert.deepEqual(refusedNames.at(-1), { purpose: 'agent-card', url: at(host, '/card'), host, address, rule });
      assert.deepEqual(events.at(-1), { purpose: 'agent-card', outcome: 'failed', reason: rule, seconds: events.at(-1)!.seconds }, 'the metric names the rule');
    }
    // An address the caller wrote itself is named as written.
    assert.match((await refusal(f.getJson('http://10.1.2.3/card', { purpose: 'agent-card' }))).message, /10\.1\.2\.3 is a private-network address/);
    assert.equal(origin.requests.length, 0);
  });

  test('scheme, credentials and malformed URLs are refused by policy', async () => {
    const f = fetcher();
    assert.equal((await refusal(f.getJson('ftp://agent.test/card', { purpose: 'agent-card' }))).reason, 'scheme');
    assert.equal((await refusal(f.getJson('file:///etc/passwd', { purpose: 'agent-card' }))).reason, 'scheme');
    const credentials = await refusal(f.getJson(at('user:secret@agent.test', '/card'), { purpose: 'agent-card' }));
    assert.equal(credentials.reason, 'credentials');
    assert.doesNotMatch(credentials.message, /secret/);
    assert.equal((await refusal(f.getJson('not a url', { purpose: 'agent-card' }))).reason, 'invalid-url');
    const unknown = await refusal(f.getJson(at('nowhere.test', '/card'), { purpose: 'agent-card' }));
    assert.equal(unknown.reason, 'dns');
    assert.equal(unknown.refused, false);
    assert.match(unknown.message, /could not resolve nowhere\.test \(ENOTFOUND\)/);
  });

  test("the Fetch standard's blocked ports are refused by policy, naming the port, before resolving or connecting", async () => {
    const f = fetcher();
    for (const port of ['6000', '10080', '25', '5060']) {
      // nowhere.test does not resolve: a refusal that names the port came before any lookup.
      const checked = await refusal(f.check(`http://nowhere.test:${port}/hook`, { purpose: 'webhook' }));
      assert.equal(checked.reason, 'port', port);
      assert.equal(checked.refused, true);
      assert.match(checked.message, new RegExp(`port ${port} is one of the Fetch standard's blocked ports.*another port`));
      // Before, undici's own refusal came out as a connection failure saying only "bad port".
      const fetched = await refusal(f.getJson(`http://agent.test:${port}/card`, { purpose: 'agent-card' }));
      assert.equal(fetched.reason, 'port', port);
      assert.equal(fetched.refused, true);
    }
    origin.route('/to-bad-port', (_req, res) => void res.writeHead(302, { location: 'http://agent.test:6000/card' }).end());
    const redirected = await refusal(f.getJson(at('agent.test', '/to-bad-port'), { purpose: 'agent-card' }));
    assert.equal(redirected.reason, 'port');
    assert.equal(redirected.url, 'http://agent.test:6000/card');
    await f.check(at('agent.test', '/card'), { purpose: 'webhook' });
    await f.check('http://agent.test:8080/card', { purpose: 'webhook' });
  });

  test('legacy IPv4 spellings are normalised by the URL parser and still refused', async () => {
    const f = fetcher({ allow: AllowList.EMPTY });
    for (const host of ['0x7f.1', '2130706433', '0177.0.0.1', '127.1', '[::ffff:7f00:1]']) {
      const error = await refusal(f.getJson(`http://${host}:${origin.port}/`, { purpose: 'agent-card' }));
      assert.ok(error.reason === 'loopback' || error.reason === 'ipv4-mapped', `${host}: ${error.reason}`);
    }
  });

  test('other spellings of an inside address are read as the URL parser reads them, and refused before any lookup or connection', async () => {
    const asked: string[] = [];
    const f = fetcher({ allow: AllowList.EMPTY, resolve: async (host) => (asked.push(host), ['93.184.216.34']) });
    const port = origin.port;
    const hits = origin.requests.length;
    const cases: [string, string][] = [
      [`http://0x7f000001:${port}/`, 'loopback'], [`http://017700000001:${port}/`, 'loopback'], [`http://127.0.0.1.:${port}/`, 'loopback'],
      [`http://%31%32%37.0.0.1:${port}/`, 'loopback'], [`http://127.0.0.1%2e:${port}/`, 'loopback'], [`http://\uff11\uff12\uff17.0.0.1:${port}/`, 'loopback'],
      [`http://127\u30020\u30020\u30021:${port}/`, 'loopback'], [`HTTP://127.0.0.1:${port}/`, 'loopback'], [`http://0:${port}/`, 'unspecified'],
      // A backslash ends the host of an http URL, as a slash does: what follows is the path.
      [`http:\\\\127.0.0.1:${port}\\card`, 'loopback'], [`http://127.0.0.1:${port}\\@agent.test/`, 'loopback'], [`http://127.0.0.1:${port}#@agent.test/`, 'loopback'],
      [`http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/`, 'ipv4-mapped'], [`http://[::127.0.0.1]:${port}/`, 'ipv4-compatible'], [`http://[64:ff9b::127.0.0.1]:${port}/`, 'nat64'],
      [`http://[2002:7f00:1::]:${port}/`, '6to4'], [`http://[0:0:0:0:0:0:0:1]:${port}/`, 'loopback'], [`http://[::]:${port}/`, 'unspecified'],
      [`http://[fe80::1%25lo]:${port}/`, 'invalid-url'], // no zone ids in URLs
      [`http://agent.test@127.0.0.1:${port}/`, 'credentials'],
    ];
    for (const [url, reason] of cases) {
      const error = await refusal(f.getJson(url, { purpose: 'agent-card' }));
      assert.equal(error.reason, reason, url);
    }
    assert.deepEqual(asked, []);
    assert.equal(origin.requests.length, hits);
  });

  test('the allow list: host names (any address), addresses and CIDR ranges, IPv4-mapped forms match', async () => {
    const list = AllowList.parse(' Agent.TEST. , 10.0.0.0/8, 127.0.0.1, [::1], fd00::/8 ');
    assert.equal(list.allowsHost('agent.test'), true);
    assert.equal(list.allowsHost('other.test'), false);
    for (const a of ['10.9.8.7', '127.0.0.1', '::1', 'fd00::5', '::ffff:10.1.1.1', '::ffff:127.0.0.1']) assert.equal(list.allowsAddress(ipaddr.parse(a)), true, a);
    for (const a of ['127.0.0.2', '11.0.0.1', 'fe80::1', '::2']) assert.equal(list.allowsAddress(ipaddr.parse(a)), false, a);
    assert.throws(() => AllowList.parse('10.0.0.0/33'), /"10\.0\.0\.0\/33" is not a CIDR range/);
    assert.throws(() => AllowList.parse('exa mple.com'), /is not a host name, an IP address or a CIDR range/);
    assert.throws(() => AllowList.parse('http://example.com'), /is not a host name/);

    origin.json('/allowed', { ok: true });
    const byAddress = fetcher({ allow: AllowList.parse('127.0.0.1/32') });
    assert.deepEqual((await byAddress.getJson(`${origin.url}/allowed`, { purpose: 'agent-card' }) as { value: unknown }).value, { ok: true });
    const byRange = fetcher({ allow: AllowList.parse('127.0.0.0/8'), resolve: async () => ['127.0.0.1'] });
    assert.equal((await byRange.getJson(at('any-name.test', '/allowed'), { purpose: 'agent-card' })).status, 200);
    // A host name written in Unicode is its ASCII form, as the URL's host is (it was refused as "not a host name").
    const idn = AllowList.parse('Bücher.test');
    assert.equal(idn.allowsHost(new URL(at('bücher.test', '/')).hostname), true);
    const byIdn = fetcher({ allow: idn, resolve: async () => ['127.0.0.1'] });
    assert.equal((await byIdn.getJson(at('BÜCHER.test', '/allowed'), { purpose: 'agent-card' })).status, 200);
    assert.equal((await refusal(fetcher({ allow: idn, resolve: async () => ['127.0.0.1'] }).getJson(at('bucher.test', '/allowed'), { purpose: 'agent-card' }))).rule, 'loopback');
    // localhost is a host name like any other: through the system resolver (/etc/hosts), when allowed.
    const localhost = new GuardedFetcher({ maxBytes: 1024, allow: AllowList.parse('localhost') });
    assert.equal((await localhost.getJson(`http://localhost:${origin.port}/allowed`, { purpose: 'agent-card' })).status, 200);
    const v6 = await startOrigin({ listenOn: '::1' });
    try {
      v6.json('/six', { six: true });
      assert.equal(v6.url, `http://[::1]:${v6.port}`);
      assert.equal((await refusal(fetcher().getJson(`${v6.url}/six`, { purpose: 'agent-card' }))).reason, 'loopback');
      assert.deepEqual((await fetcher({ allow: AllowList.parse('::1') }).getJson(`${v6.url}/six`, { purpose: 'agent-card' }) as { value: unknown }).value, { six: true });
    } finally {
      await v6.close();
    }
    const notAllowed = new GuardedFetcher({ maxBytes: 1024 });
    assert.equal((await refusal(notAllowed.getJson(`http://localhost:${origin.port}/allowed`, { purpose: 'agent-card' }))).rule, 'loopback');
  });

  test('the tripwire itself stops a connection to a non-loopback address (the safety net works)', async () => {
    await assert.rejects(undiciFetch('http://10.255.255.1:8089/'), (error: Error) => /tripwire/.test(String((error.cause as Error | undefined)?.message ?? error.message)));
    assert.deepEqual(takeOutboundViolations(), ['10.255.255.1:8089']);
  });
});

describe('pinned connections', () => {
  test('the socket goes to the checked address: a second, different DNS answer is never used', async () => {
    origin.json('/pinned', { pinned: true });
    let calls = 0;
    // Rebinding: the first answer is allowed, every later one points elsewhere.
    const rebinding: Resolver = async () => (++calls === 1 ? ['127.0.0.1'] : ['10.0.0.1']);
    const f = fetcher({ allow: AllowList.parse('127.0.0.1'), resolve: rebinding });
    const doc = await f.getJson(at('rebind.test', '/pinned'), { purpose: 'agent-card' });
    assert.deepEqual((doc as { value: unknown }).value, { pinned: true });
    assert.equal(calls, 1, 'the host was resolved once, by the guard');
    assert.equal(origin.requests.at(-1)!.headers.host, `rebind.test:${origin.port}`, 'the Host header keeps the name');
  });

  test('https: the connection is pinned while SNI and the certificate check use the host name', async () => {
    const { key, cert } = selfSignedCertificate('agent.test');
    const servernames: string[] = [];
    const secure = await startOrigin({ tls: { key, cert, host: 'agent.test' }, onServername: (name) => servernames.push(name) });
    try {
      secure.json('/card', { secure: true });
      const trusted = fetcher({ ca: cert });
      const doc = await trusted.getJson(`${secure.url}/card`, { purpose: 'agent-card' });
      assert.deepEqual((doc as { value: unknown }).value, { secure: true });
      assert.deepEqual(servernames, ['agent.test']);
      // The same certificate for another name fails verification: the host name is what is checked.
      const other = await refusal(trusted.getJson(`https://other.test:${secure.port}/card`, { purpose: 'agent-card' }));
      assert.equal(other.reason, 'tls');
      const untrusted = await refusal(fetcher().getJson(`${secure.url}/card`, { purpose: 'agent-card' }));
      assert.equal(untrusted.reason, 'tls');
      assert.match(untrusted.message, /TLS with https:\/\/agent\.test:\d+\/card failed \(/);
    } finally {
      await secure.close();
    }
  });
});

describe('redirects', () => {
  const hop = (from: string, to: string, status = 302) =>
    origin.route(from, (_req, res) => void res.writeHead(status, { location: to }).end());

  test('up to three are followed, each checked again; the final URL is reported', async () => {
    hop('/r1', '/r2', 301);
    hop('/r2', at('other.test', '/r3'), 307);
    hop('/r3', '/three', 308);
    origin.json('/three', { after: 3 });
    const doc = await fetcher().getJson(at('agent.test', '/r1'), { purpose: 'agent-card' });
    assert.equal(doc.url, at('other.test', '/three'));
    assert.deepEqual((doc as { value: unknown }).value, { after: 3 });
  });

  test('a fourth redirect, and a loop, are refused', async () => {
    hop('/r0', '/r1');
    const four = await refusal(fetcher().getJson(at('agent.test', '/r0'), { purpose: 'agent-card' }));
    assert.equal(four.reason, 'redirects');
    assert.match(four.message, /redirected more than 3 times/);
    hop('/loop', '/loop');
    const before = origin.hits.get('/loop') ?? 0;
    assert.equal((await refusal(fetcher().getJson(at('agent.test', '/loop'), { purpose: 'agent-card' }))).reason, 'redirects');
    assert.equal((origin.hits.get('/loop') ?? 0) - before, 4, 'the first request and three redirects');
  });

  test('a redirect to 127.0.0.1 (or inside) is refused when only the host name is allowed', async () => {
    hop('/to-ip', `${origin.url}/three`);
    hop('/to-inside', at('inside.test', '/x'));
    hop('/to-metadata', 'http://169.254.169.254/latest/meta-data/');
    const before = origin.hits.get('/three') ?? 0;
    const toIp = await refusal(fetcher().getJson(at('agent.test', '/to-ip'), { purpose: 'agent-card' }));
    assert.equal(toIp.reason, 'loopback');
    assert.equal(toIp.url, `${origin.url}/three`);
    assert.equal((await refusal(fetcher().getJson(at('agent.test', '/to-inside'), { purpose: 'agent-card' }))).reason, 'non-public');
    assert.equal((await refusal(fetcher().getJson(at('agent.test', '/to-metadata'), { purpose: 'agent-card' }))).reason, 'link-local');
    assert.equal(origin.hits.get('/three') ?? 0, before, 'the refused target was not fetched');
  });

  test('bad redirects: no Location, another scheme, not a URL', async () => {
    origin.route('/no-location', (_req, res) => void res.writeHead(302).end());
    hop('/to-file', 'file:///etc/passwd');
    hop('/to-garbage', 'http://[nope');
    assert.equal((await refusal(fetcher().getJson(at('agent.test', '/no-location'), { purpose: 'agent-card' }))).reason, 'bad-redirect');
    assert.equal((await refusal(fetcher().getJson(at('agent.test', '/to-file'), { purpose: 'agent-card' }))).reason, 'scheme');
    assert.equal((await refusal(fetcher().getJson(at('agent.test', '/to-garbage'), { purpose: 'agent-card' }))).reason, 'bad-redirect');
    // Quoted by its start only, however long the server made it.
    hop('/to-long-garbage', `http://[${'x'.repeat(10_000)}`);
    const long = await refusal(fetcher().getJson(at('agent.test', '/to-long-garbage'), { purpose: 'agent-card' }));
    assert.match(long.message, /redirected to "http:\/\/\[x{192}…", which is not a URL$/);
  });

  test('https is never downgraded: a redirect to plain http is refused naming both URLs; http to https is followed', async () => {
    const { key, cert } = selfSignedCertificate('agent.test');
    const secure = await startOrigin({ tls: { key, cert, host: 'agent.test' } });
    try {
      const plain = at('agent.test', '/plain-card');
      origin.json('/plain-card', { substituted: true });
      secure.route('/card', (_req, res) => void res.writeHead(302, { location: plain }).end());
      secure.json('/secure-card', { secure: true });
      const f = fetcher({ ca: cert });
      const card = await refusal(f.getJson(`${secure.url}/card`, { purpose: 'agent-card' }));
      assert.equal(card.reason, 'bad-redirect');
      assert.equal(card.url, `${secure.url}/card`);
      assert.ok(card.message.includes(`from ${secure.url}/card to ${plain}: it leaves https for plain http`), card.message);
      // The MCP SDK's fetch follows redirects through the same rule.
      const mcp = await refusal(f.fetchFunction({ purpose: 'mcp' })(`${secure.url}/card`, { method: 'POST', body: '{}' }));
      assert.equal(mcp.reason, 'bad-redirect');
      assert.equal(origin.hits.get('/plain-card') ?? 0, 0, 'nothing was sent over plain http');
      // An upgrade is fine.
      hop('/upgrade', `${secure.url}/secure-card`);
      assert.deepEqual((await f.getJson(at('agent.test', '/upgrade'), { purpose: 'agent-card' }) as { value: unknown }).value, { secure: true });
    } finally {
      await secure.close();
    }
  });

  test('credentials are dropped when a redirect leaves the origin, kept within it', async () => {
    hop('/same', '/echo');
    hop('/cross', at('other.test', '/echo'));
    origin.route('/echo', (req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ auth: req.headers.authorization ?? null })));
    const fetch = fetcher().fetchFunction({ purpose: 'mcp' });
    const same = await fetch(at('agent.test', '/same'), { headers: { Authorization: 'Bearer s3cret' } });
    assert.deepEqual(await same.json(), { auth: 'Bearer s3cret' });
    const cross = await fetch(at('agent.test', '/cross'), { headers: { Authorization: 'Bearer s3cret' } });
    assert.deepEqual(await cross.json(), { auth: null });
  });

  test('a 307/308 to another origin carries the body and content headers, no session id, token or custom secret header', async () => {
    // Two servers on 127.0.0.1, on different ports: two origins, as an MCP server that moved is.
    const other = await startOrigin();
    try {
      other.route('/mcp', async (req, res) => {
        let body = '';
        for await (const chunk of req) body += String(chunk);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, body }));
      });
      hop('/moved-307', `http://other.test:${other.port}/mcp`, 307);
      hop('/moved-308', `http://other.test:${other.port}/mcp`, 308);
      origin.route('/mcp', async (req, res) => {
        for await (const _chunk of req);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
      const secrets = {
        'Mcp-Session-Id': 'session-of-agent-test',
        'X-A2A-Notification-Token': 'webhook-token',
        'X-Api-Key': 'registrant-key',
        Authorization: 'Bearer s3cret',
        Cookie: 'sid=1',
      };
      const sent = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Protocol-Version': '2025-06-18' };
      const fetch = fetcher().fetchFunction({ purpose: 'mcp' });
      for (const path of ['/moved-307', '/moved-308']) {
        const answer = await fetch(at('agent.test', path), { method: 'POST', body: '{"jsonrpc":"2.0"}', headers: { ...sent, ...secrets } });
        assert.deepEqual(await answer.json(), { method: 'POST', body: '{"jsonrpc":"2.0"}' }, path);
        const { headers } = other.requests.at(-1)!;
        for (const name of Object.keys(secrets)) assert.equal(headers[name.toLowerCase()], undefined, `${path}: ${name} reached the other origin`);
        assert.equal(headers['content-type'], 'application/json');
        assert.equal(headers.accept, 'application/json, text/event-stream');
        assert.equal(headers['mcp-protocol-version'], '2025-06-18');
      }
      // Within the origin every header goes on: the session is that server's.
      hop('/same-307', '/mcp', 307);
      await (await fetch(at('agent.test', '/same-307'), { method: 'POST', body: '{}', headers: secrets })).arrayBuffer();
      assert.equal(origin.requests.at(-1)!.headers['mcp-session-id'], 'session-of-agent-test');
      assert.equal(origin.requests.at(-1)!.headers['x-api-key'], 'registrant-key');
    } finally {
      await other.close();
    }
  });

  test('POST is redirected as GET on 302/303 and kept with its body on 307', async () => {
    hop('/post-302', '/method');
    hop('/post-307', '/method', 307);
    origin.route('/method', async (req, res) => {
      let body = '';
      for await (const chunk of req) body += String(chunk);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, body }));
    });
    const fetch = fetcher().fetchFunction({ purpose: 'mcp' });
    assert.deepEqual(await (await fetch(at('agent.test', '/post-302'), { method: 'POST', body: '{"a":1}' })).json(), { method: 'GET', body: '' });
    assert.deepEqual(await (await fetch(at('agent.test', '/post-307'), { method: 'POST', body: '{"a":1}' })).json(), { method: 'POST', body: '{"a":1}' });
  });
});

describe('hostile servers cost at most one timeout', () => {
  const TIMEOUT = 400;
  const timed = async (promise: Promise<unknown>): Promise<{ error: FetchError; ms: number }> => {
    const started = Date.now();
    const error = await refusal(promise);
    return { error, ms: Date.now() - started };
  };

  test('no answer at all', async () => {
    origin.route('/silent', () => undefined);
    const { error, ms } = await timed(fetcher({ timeoutMs: TIMEOUT }).getJson(at('agent.test', '/silent'), { purpose: 'agent-card' }));
    assert.equal(error.reason, 'timeout');
    assert.match(error.message, /no complete answer from http:\/\/agent\.test:\d+\/silent within 400 ms/);
    // Without the deadline it would wait forever; the slack is for a loaded machine's timers.
    assert.ok(ms >= TIMEOUT - 20 && ms < TIMEOUT + 1500, `${ms} ms`);
  });

  test('a slow body (a byte at a time, forever)', async () => {
    let closed = false;
    origin.route('/slow-body', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"a":"');
      const timer = setInterval(() => res.write('x'), 20);
      res.on('close', () => {
        clearInterval(timer);
        closed = true;
      });
    });
    const { error, ms } = await timed(fetcher({ timeoutMs: TIMEOUT }).getJson(at('agent.test', '/slow-body'), { purpose: 'agent-card' }));
    assert.equal(error.reason, 'timeout');
    assert.ok(ms < TIMEOUT + 1500, `${ms} ms`);
    await waitFor(() => closed, 'the server to see its connection closed');
  });

  test('slow redirects: one deadline for the whole chain, not one per hop', async () => {
    for (const [from, to] of [['/slow-1', '/slow-2'], ['/slow-2', '/slow-3'], ['/slow-3', '/slow-4']]) {
      origin.route(from!, (_req, res) => void setTimeout(() => res.writeHead(302, { location: to }).end(), 300));
    }
    origin.route('/slow-4', (_req, res) => void setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'), 300));
    const { error, ms } = await timed(fetcher({ timeoutMs: TIMEOUT }).getJson(at('agent.test', '/slow-1'), { purpose: 'agent-card' }));
    assert.equal(error.reason, 'timeout');
    // Each hop is within the deadline, the chain (1.2 s) is not; cut off at the deadline, with slack.
    assert.ok(ms < TIMEOUT + 700, `${ms} ms`);
  });

  test('a huge body: refused from Content-Length before reading, cut off at the cap when streamed', async () => {
    origin.route('/declared-huge', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(50 * 1024 * 1024) });
      res.write('{"pad":"');
    });
    const declared = await refusal(fetcher().getJson(at('agent.test', '/declared-huge'), { purpose: 'agent-card' }));
    assert.equal(declared.reason, 'too-large');
    assert.match(declared.message, /declares 52428800 bytes; the limit is 10240 bytes/);

    let sent = 0;
    let closed = false;
    origin.route('/endless', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(4096, 0x61);
      const pump = (): void => {
        while (!closed && res.write(chunk)) sent += chunk.length;
        if (!closed) res.once('drain', pump);
      };
      res.on('close', () => (closed = true));
      pump();
    });
    const { error, ms } = await timed(fetcher().getJson(at('agent.test', '/endless'), { purpose: 'agent-card' }));
    assert.equal(error.reason, 'too-large');
    assert.match(error.message, /sent more than 10240 bytes/);
    assert.ok(ms < 3000, `${ms} ms`);
    await waitFor(() => closed, 'the server to see its connection closed');
    assert.ok(sent < 10 * 1024 * 1024, `the server was stopped early (${sent} bytes written)`);
  });

  test('a compressed body is capped after decompression (a gzip bomb)', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(5 * 1024 * 1024, 0x20));
    origin.route('/bomb', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(bomb));
    const error = await refusal(fetcher().getJson(at('agent.test', '/bomb'), { purpose: 'agent-card' }));
    assert.equal(error.reason, 'too-large');
  });

  test('the caller can cancel (reason aborted, not timeout)', async () => {
    origin.route('/hang', () => undefined);
    const controller = new AbortController();
    const pending = fetcher().getJson(at('agent.test', '/hang'), { purpose: 'agent-card', signal: controller.signal });
    await waitFor(() => (origin.hits.get('/hang') ?? 0) > 0, 'the request to arrive');
    controller.abort();
    assert.equal((await refusal(pending)).reason, 'aborted');
  });

  test("a caller's deadline that ends a request is told as the caller's, not as the guard's own fetch timeout", async () => {
    origin.route('/slow-answer', () => undefined);
    const url = at('agent.test', '/slow-answer');
    // Node's own TimeoutError message says nothing: the caller's deadline is told by its time alone.
    const plain = await refusal(fetcher({ timeoutMs: 5000 }).getJson(url, { purpose: 'agent-card', signal: AbortSignal.timeout(100) }));
    assert.equal(plain.reason, 'timeout');
    assert.match(plain.message, /^no complete answer from http:\/\/agent\.test:\d+\/slow-answer: its caller's deadline passed after \d+ ms$/, plain.message);
    // A caller that says why (clearableTimeout's message, an MCP exchange's or a search's) is quoted.
    const bound = clearableTimeout(100, 'a search waits 100 ms for its query embedding');
    try {
      const said = await refusal(fetcher({ timeoutMs: 5000 }).fetchFunction({ purpose: 'embeddings' })(url, { signal: bound.signal }));
      assert.match(said.message, /: its caller's deadline passed after \d+ ms \(a search waits 100 ms for its query embedding\)$/, said.message);
    } finally {
      bound.clear();
    }
    // The guard's own deadline is told as before.
    const own = await refusal(fetcher({ timeoutMs: 100 }).getJson(url, { purpose: 'agent-card', signal: AbortSignal.timeout(5000) }));
    assert.equal(own.message, `no complete answer from ${url} within 100 ms (the registry's fetch timeout)`);
  });

  test("a request begun after its caller's deadline had passed is not sent, and says so (not a slow DNS lookup)", async () => {
    let lookups = 0;
    const f = fetcher({ resolve: async (host, signal) => (lookups++, resolveTest(host, signal)) });
    const over = AbortSignal.timeout(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const hits = origin.requests.length;
    // An MCP SDK's notice that it gave up on a request goes out as its exchange's deadline passes:
    // it was told as "looking up agent.test took longer than 0.1 s …: the DNS resolver is slow".
    for (const late of [
      fetcher().getJson(at('agent.test', '/card'), { purpose: 'agent-card', signal: over }),
      f.fetchFunction({ purpose: 'mcp', signal: over })(at('agent.test', '/mcp'), { method: 'POST', body: '{}' }),
      // An address, not a name: no lookup to blame, but not sent either.
      fetcher({ allow: AllowList.parse('127.0.0.1') }).fetchFunction({ purpose: 'mcp' })(`${origin.url}/mcp`, { signal: over }),
    ]) {
      const error = await refusal(late);
      assert.equal(error.reason, 'timeout');
      assert.match(error.message, /^the request to http:\/\/[^ ]+\/(card|mcp) was not sent: the deadline its caller set had passed before it began$/);
    }
    assert.equal(lookups, 0);
    assert.equal(origin.requests.length, hits);
  });

  test('a connection refused is reported as connect', async () => {
    const closedPort = await startOrigin();
    const port = closedPort.port;
    await closedPort.close();
    const error = await refusal(fetcher().getJson(`http://agent.test:${port}/`, { purpose: 'agent-card' }));
    assert.equal(error.reason, 'connect');
    assert.match(error.message, /the connection was refused \(nothing listens on that port\) \(ECONNREFUSED\)/);
  });

  test("a server that hangs up early, sends headers past the limit, an interim 100 or a 101, is told in words, not undici's codes alone", async () => {
    const raw = net.createServer((socket) => {
      socket.on('error', () => undefined);
      socket.once('data', (request) => {
        if (request.toString().startsWith('GET /big-headers')) {
          socket.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-big: ${'a'.repeat(100_000)}\r\ncontent-length: 2\r\n\r\n{}`);
        } else if (request.toString().startsWith('GET /continue')) {
          socket.end('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
        } else if (request.toString().startsWith('GET /upgrade')) {
          socket.end('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n');
        } else {
          socket.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"a":');
        }
      });
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    const port = (raw.address() as AddressInfo).port;
    try {
      const early = await refusal(fetcher().getJson(`http://agent.test:${port}/early`, { purpose: 'agent-card' }));
      assert.equal(early.reason, 'connect');
      assert.match(early.message, /: the server closed the connection before its answer was complete \(UND_ERR_SOCKET\)$/);
      const big = await refusal(fetcher().getJson(`http://agent.test:${port}/big-headers`, { purpose: 'agent-card' }));
      assert.match(big.message, /: the answer's headers are larger than the registry reads \(16 KB\) \(UND_ERR_HEADERS_OVERFLOW\)$/);
      // undici closes the connection itself on these (same code): they were told as the server hanging up.
      const interim = await refusal(fetcher().getJson(`http://agent.test:${port}/continue`, { purpose: 'agent-card' }));
      assert.equal(interim.reason, 'connect');
      assert.match(interim.message, /: the server sent an interim HTTP 100 \(Continue\) answer the registry did not ask for .*: send the final answer alone \(UND_ERR_SOCKET\)$/);
      const upgrade = await refusal(fetcher().getJson(`http://agent.test:${port}/upgrade`, { purpose: 'agent-card' }));
      assert.match(upgrade.message, /: the server switched protocols \(HTTP 101\) though the registry did not ask it to \(UND_ERR_SOCKET\)$/);
    } finally {
      raw.close();
    }
  });
});

describe('getJson', () => {
  test('JSON media types only, with a clear message', async () => {
    origin.route('/html', (_req, res) => void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html></html>'));
    origin.route('/untyped', (_req, res) => {
      res.removeHeader('content-type');
      res.writeHead(200).end('{}');
    });
    origin.route('/jwks', (_req, res) => void res.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end('{"keys":[]}'));
    const html = await refusal(fetcher().getJson(at('agent.test', '/html'), { purpose: 'agent-card' }));
    assert.equal(html.reason, 'content-type');
    assert.match(html.message, /answered with Content-Type "text\/html; charset=utf-8"; the registry only accepts JSON \(application\/json or application\/\*\+json\)/);
    assert.match((await refusal(fetcher().getJson(at('agent.test', '/untyped'), { purpose: 'agent-card' }))).message, /without a Content-Type/);
    // A server's header is quoted by its start only: a refusal is kept as an entry's health and logged.
    origin.route('/long-type', (_req, res) => void res.writeHead(200, { 'content-type': `text/plain; x=${'y'.repeat(10_000)}` }).end('{}'));
    const long = await refusal(fetcher().getJson(at('agent.test', '/long-type'), { purpose: 'agent-card' }));
    assert.match(long.message, /answered with Content-Type "text\/plain; x=y{186}…"; the registry only accepts JSON/);
    assert.ok(long.message.length < 600, `${long.message.length} characters`);
    assert.deepEqual((await fetcher().getJson(at('agent.test', '/jwks'), { purpose: 'jwks' }) as { value: unknown }).value, { keys: [] });
  });

  test('not JSON, not UTF-8, and error statuses', async () => {
    origin.route('/broken', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":'));
    origin.route('/latin1', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(Buffer.from([0x22, 0xe9, 0x22])));
    origin.route('/gone', (_req, res) => void res.writeHead(410, { 'content-type': 'application/json' }).end('{}'));
    const broken = await refusal(fetcher().getJson(at('agent.test', '/broken'), { purpose: 'agent-card' }));
    assert.equal(broken.reason, 'invalid-json');
    assert.match(broken.message, /did not answer with valid JSON/);
    assert.equal((await refusal(fetcher().getJson(at('agent.test', '/latin1'), { purpose: 'agent-card' }))).reason, 'invalid-json');
    // Declared in another charset, and not UTF-8 JSON: the charset is the fault, and is named.
    origin.route('/utf16', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json; charset="UTF-16"' }).end(Buffer.from('{"a":1}', 'utf16le')));
    origin.route('/latin1-declared', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json; charset=latin1' }).end(Buffer.from([0x22, 0xe9, 0x22])));
    for (const path of ['/utf16', '/latin1-declared']) {
      const declared = await refusal(fetcher().getJson(at('agent.test', path), { purpose: 'agent-card' }));
      assert.equal(declared.reason, 'content-type', path);
      assert.match(declared.message, /a body in charset (utf-16|latin1); JSON is read as UTF-8 only \(RFC 8259\)/, path);
    }
    const gone = await refusal(fetcher().getJson(at('agent.test', '/gone'), { purpose: 'agent-card' }));
    assert.equal(gone.reason, 'http-status');
    assert.equal(gone.status, 410);
    assert.match(gone.message, /answered HTTP 410 Gone/);
  });

  test('a body that does not decompress as its Content-Encoding declares is invalid-json, naming the coding and the fix, not a connection failure', async () => {
    const card = '{"name":"Plain Agent"}';
    const cases: [path: string, coding: string, body: Buffer, named: string][] = [
      // The commonest: a server (or a proxy) that labels an uncompressed body.
      ['/plain-gzip', 'gzip', Buffer.from(card), 'gzip'],
      ['/plain-x-gzip', 'x-gzip', Buffer.from(card), 'gzip'],
      // Its checksum altered (a plain body may read as raw deflate that decodes to junk, which is then not UTF-8).
      ['/bad-deflate', 'deflate', Buffer.from(zlib.deflateSync(card).map((byte, i, all) => (i === all.length - 1 ? byte ^ 1 : byte))), 'deflate'],
      ['/plain-br', 'br', Buffer.from(card), 'brotli \\(br\\)'],
      ['/gzip-then-junk', 'gzip', Buffer.concat([zlib.gzipSync(card), Buffer.from('junk')]), 'gzip'],
    ];
    for (const [path, coding, body, named] of cases) {
      origin.route(path, (_req, res) => void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding }).end(body));
      events = [];
      const error = await refusal(fetcher().getJson(at('agent.test', path), { purpose: 'refresh' }));
      assert.equal(error.reason, 'invalid-json', `${path}: ${error.message}`);
      assert.match(
        error.message,
        new RegExp(`answered with Content-Encoding: ${coding}, but its body is not valid ${named} \\([^)]*(Z_DATA_ERROR|ERR__ERROR_FORMAT_\\w+)\\): the server must send the body compressed as its Content-Encoding declares, or send it uncompressed without that header$`),
        path,
      );
      assert.deepEqual(events.map((e) => e.reason), ['invalid-json'], `${path}: the metric's reason`);
    }
    // The same through the fetch function (an MCP server's answer), when its body is read.
    const response = await fetcher().fetchFunction({ purpose: 'mcp' })(at('agent.test', '/plain-gzip'));
    await assert.rejects(response.text(), (error: Error) => error instanceof FetchError && error.reason === 'invalid-json' && /is not valid gzip/.test(error.message));
  });

  test('the registry asks for gzip, deflate and br, on every path and every hop, and answers in them are decoded', async () => {
    const card = { name: 'Compressed Agent' };
    const text = JSON.stringify(card);
    const bodies: [coding: string, body: Buffer][] = [
      ['gzip', zlib.gzipSync(text)],
      ['x-gzip', zlib.gzipSync(text)],
      ['deflate', zlib.deflateSync(text)],
      ['br', zlib.brotliCompressSync(text)],
      ['identity', Buffer.from(text)],
      // Applied in order: gzip first, then br.
      ['gzip, br', zlib.brotliCompressSync(zlib.gzipSync(text))],
      ['BR', zlib.brotliCompressSync(text)],
    ];
    const f = fetcher();
    for (const [coding, body] of bodies) {
      const path = `/coded-${coding.replace(/\W+/g, '-')}`;
      origin.route(path, (_req, res) => void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding }).end(body));
      assert.deepEqual((await f.getJson(at('agent.test', path), { purpose: 'agent-card' }) as { value: unknown }).value, card, coding);
      assert.deepEqual(await (await f.fetchFunction({ purpose: 'mcp' })(at('agent.test', path))).json(), card, `${coding} through the fetch function`);
    }
    // What each request asked for: the registry's codings, a redirect's hop too, whatever a caller set.
    origin.route('/moved-coded', (_req, res) => void res.writeHead(302, { location: '/coded-gzip' }).end());
    origin.route('/hook-coded', (_req, res) => void res.writeHead(204).end());
    origin.requests.length = 0;
    await f.getJson(at('agent.test', '/moved-coded'), { purpose: 'agent-card' });
    await f.fetchFunction({ purpose: 'mcp', headers: { 'Accept-Encoding': 'zstd' } })(at('agent.test', '/coded-br'), { method: 'POST', body: '{}' });
    await f.postJson(at('agent.test', '/hook-coded'), {}, { purpose: 'webhook' });
    assert.deepEqual(
      origin.requests.map((r) => [r.path, r.headers['accept-encoding']]),
      [['/moved-coded', 'gzip, deflate, br'], ['/coded-gzip', 'gzip, deflate, br'], ['/coded-br', 'gzip, deflate, br'], ['/hook-coded', 'gzip, deflate, br']],
    );
  });

  test('an answer in zstd (whose frame may ask for a 128 MB window) is never decoded: its body, when read as a document, is invalid-json saying what to send; its status stands', async () => {
    const card = Buffer.from('{"name":"Zstd Agent"}');
    // A frame zlib decodes (where it has zstd): undici's fetch would read it.
    if ('zstdDecompressSync' in zlib) assert.deepEqual(zlib.zstdDecompressSync(zstdFrame(card)), card);
    origin.route('/zstd', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'zstd' }).end(zstdFrame(card)));
    const f = fetcher();
    events = [];
    const said = `${at('agent.test', '/zstd')} answered with Content-Encoding: zstd, which the registry does not decode (decoding zstd can take up to 128 MB of memory, whatever the body's size): send the body compressed with gzip, deflate or br, or uncompressed (the registry asks with Accept-Encoding: gzip, deflate, br)`;
    const error = await refusal(f.getJson(at('agent.test', '/zstd'), { purpose: 'refresh' }));
    assert.equal(error.reason, 'invalid-json');
    assert.equal(error.message, said);
    assert.deepEqual(events.map((e) => e.reason), ['invalid-json'], "the metric's reason");
    // Through the fetch function (an MCP server's answer): the answer as sent, its body refused when read.
    events = [];
    const mcp = await f.fetchFunction({ purpose: 'mcp' })(at('agent.test', '/zstd'), { method: 'POST', body: '{}' });
    assert.equal(mcp.status, 200);
    assert.equal(mcp.headers.get('content-encoding'), 'zstd');
    assert.deepEqual([...mcp.headers.keys()].filter((name) => name.includes('refused')), [], 'the guard\'s marker is not passed on');
    const read = await refusal(mcp.text());
    assert.equal(read.reason, 'invalid-json');
    assert.equal(read.message, said);
    assert.deepEqual(events.map((e) => e.reason), ['invalid-json']);
    // Left unread (cancelled), it is no failure.
    events = [];
    await (await f.fetchFunction({ purpose: 'mcp' })(at('agent.test', '/zstd'), { method: 'POST', body: '{}' })).body?.cancel();
    assert.deepEqual(events.map((e) => e.outcome), ['ok']);
    // A webhook's 2xx is a delivery, its body never read: before, it failed as invalid-json and was sent again and again.
    assert.equal((await f.postJson(at('agent.test', '/zstd'), {}, { purpose: 'webhook' })).status, 200);
    // A status that is a failure is that failure; a redirect is followed.
    origin.route('/zstd-missing', (_req, res) => void res.writeHead(404, { 'content-type': 'text/html', 'content-encoding': 'zstd' }).end(zstdFrame(Buffer.from('<h1>Not Found</h1>'))));
    assert.equal((await refusal(f.getJson(at('agent.test', '/zstd-missing'), { purpose: 'agent-card' }))).reason, 'http-status');
    assert.equal((await refusal(f.postJson(at('agent.test', '/zstd-missing'), {}, { purpose: 'webhook' }))).reason, 'http-status');
    origin.route('/zstd-moved', (_req, res) => void res.writeHead(301, { location: '/plain-card', 'content-encoding': 'zstd' }).end(zstdFrame(Buffer.from('moved'))));
    origin.route('/plain-card', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(card));
    assert.deepEqual((await f.getJson(at('agent.test', '/zstd-moved'), { purpose: 'agent-card' }) as { value: unknown }).value, { name: 'Zstd Agent' });
    // zstd among codings undici would decode, and more codings than it decodes (undici aborted those, reported as connect).
    const refused: [coding: string, said: string][] = [
      ['gzip, ZSTD', "gzip, ZSTD, and the registry does not decode zstd (decoding zstd can take up to 128 MB of memory, whatever the body's size): send"],
      ['zstd, br', "zstd, br, and the registry does not decode zstd (decoding zstd can take up to 128 MB of memory, whatever the body's size): send"],
      ['gzip,gzip,gzip,gzip,gzip,gzip', 'gzip,gzip,gzip,gzip,gzip,gzip, which names 6 codings, more than the 5 the registry decodes: send'],
    ];
    for (const [coding, said] of refused) {
      origin.route('/other-coding', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding }).end(card));
      const other = await refusal(f.getJson(at('agent.test', '/other-coding'), { purpose: 'agent-card' }));
      assert.equal(other.reason, 'invalid-json', coding);
      assert.ok(other.message.includes(`answered with Content-Encoding: ${said} the body compressed with gzip, deflate or br, or uncompressed`), other.message);
      assert.equal((await f.postJson(at('agent.test', '/other-coding'), {}, { purpose: 'webhook' })).status, 200, `a webhook's answer in ${coding}`);
    }
    // An answer whose body is not decoded passes: a 304 (a refresh's notModified), a HEAD's.
    origin.route('/zstd-conditional', (req, res) => {
      if (req.method === 'HEAD' || req.headers['if-none-match'] === '"z"') return void res.writeHead(req.method === 'HEAD' ? 200 : 304, { etag: '"z"', 'content-encoding': 'zstd' }).end();
      res.writeHead(200, { 'content-type': 'application/json', etag: '"z"' }).end(card);
    });
    assert.equal((await f.getJson(at('agent.test', '/zstd-conditional'), { purpose: 'refresh', ifNoneMatch: '"z"' })).notModified, true);
    assert.equal((await f.fetchFunction({ purpose: 'mcp' })(at('agent.test', '/zstd-conditional'), { method: 'HEAD' })).status, 200);
  });

  test('a coding undici does not decode (a misconfigured none, utf-8, chunked; compress) passes undecoded, as it always did, zstd behind one too', async () => {
    const card = { name: 'Mislabelled Agent' };
    const f = fetcher();
    // Each such coding stops undici's decoding: what is behind it is passed as it came.
    for (const coding of ['none', 'utf-8', 'UTF-8', 'binary', 'text/html', 'chunked', 'compress', 'x-unknown', 'zstd, none', 'gzip, identity']) {
      origin.route('/mislabelled', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding }).end(JSON.stringify(card)));
      assert.deepEqual((await f.getJson(at('agent.test', '/mislabelled'), { purpose: 'agent-card' }) as { value: unknown }).value, card, coding);
      const response = await f.fetchFunction({ purpose: 'mcp' })(at('agent.test', '/mislabelled'));
      assert.equal(response.headers.get('content-encoding'), coding);
      assert.deepEqual(await response.json(), card, `${coding} through the fetch function`);
    }
    // The guard's marker is its own: a server that sends it is not taken at its word.
    origin.route('/marked', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json', 'x-a2a-registry-refused-content-encoding': 'zstd' }).end(JSON.stringify(card)));
    assert.deepEqual((await f.getJson(at('agent.test', '/marked'), { purpose: 'agent-card' }) as { value: unknown }).value, card);
  });

  test('an answer declaring a 128 MB zstd window reserves no memory: no decoder is made, no byte of its body decoded', { skip: zstdSkip() }, async () => {
    const header = zstdFrame(Buffer.alloc(1000, 0x20)).subarray(0, 100);
    let closed = 0;
    origin.route('/zstd-window', (req, res) => {
      res.on('close', () => closed++);
      // The frame's header, then its block's first bytes, and the rest never: an answer that would hold its decoder until the deadline.
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'zstd' }).write(header);
    });
    const f = fetcher({ timeoutMs: 3000 });
    // Every decoder the registry uses, and zlib's threads, made before measuring.
    origin.route('/warm', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(zlib.gzipSync('{}')));
    await f.getJson(at('agent.test', '/warm'), { purpose: 'refresh' });
    const before = memory();
    const hits = origin.hits.get('/zstd-window') ?? 0;
    const requests = 16;
    const pending = Promise.allSettled(Array.from({ length: requests }, () => f.getJson(at('agent.test', '/zstd-window'), { purpose: 'refresh' })));
    // Measured once all are refused or, were they not, while their bodies are held open.
    await Promise.race([pending, waitFor(() => origin.hits.get('/zstd-window') === hits + requests, 'the requests').then(() => new Promise((resolve) => setTimeout(resolve, 500)))]);
    const during = memory();
    const results = await pending;
    await f.close();
    const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MB`;
    // A window is reserved when the frame's header is read (128 MB of address space each; 2 GB
    // for the 16) and written only as the body decodes: resident memory alone would not show it.
    // The bound is 4 windows: the process's own threads and heaps move its address space too.
    assert.ok(during.reserved - before.reserved < 4 * 128 * 2 ** 20, `address space grew by ${mb(during.reserved - before.reserved)}`);
    assert.ok(during.rss - before.rss < 32 * 2 ** 20, `resident memory grew by ${mb(during.rss - before.rss)}`);
    assert.ok(during.arrayBuffers - before.arrayBuffers < 8 * 2 ** 20, `array buffers grew by ${mb(during.arrayBuffers - before.arrayBuffers)}`);
    for (const result of results) {
      assert.equal(result.status, 'rejected');
      assert.equal((result.reason as FetchError).reason, 'invalid-json');
    }
    await waitFor(() => closed === requests, 'the registry to close each connection');
  });

  test('conditional requests: ETag and Last-Modified sent back, 304 answers notModified', async () => {
    const lastModified = 'Tue, 01 Dec 2026 10:00:00 GMT';
    origin.route('/conditional', (req, res) => {
      if (req.headers['if-none-match'] === '"v1"' || req.headers['if-modified-since'] === lastModified) return void res.writeHead(304, { etag: '"v1"' }).end();
      res.writeHead(200, { 'content-type': 'application/json', etag: '"v1"', 'last-modified': lastModified }).end('\ufeff{"v":1}');
    });
    const first = await fetcher().getJson(at('agent.test', '/conditional'), { purpose: 'refresh' });
    assert.equal(first.notModified, false);
    if (first.notModified) return;
    assert.deepEqual(first.value, { v: 1 });
    assert.equal(first.text, '{"v":1}', 'byte-order mark removed');
    assert.equal(first.etag, '"v1"');
    assert.equal(first.lastModified, lastModified);
    assert.equal(first.bytes, 10);
    assert.deepEqual(await fetcher().getJson(at('agent.test', '/conditional'), { purpose: 'refresh', ifNoneMatch: '"v1"' }), { notModified: true, status: 304, url: at('agent.test', '/conditional'), etag: '"v1"', lastModified: undefined });
    assert.equal((await fetcher().getJson(at('agent.test', '/conditional'), { purpose: 'refresh', ifModifiedSince: lastModified })).notModified, true);
    assert.equal(origin.requests.at(-1)!.headers['if-modified-since'], lastModified);
    assert.equal(origin.requests.at(-1)!.headers.accept, 'application/json');
    assert.match(String(origin.requests.at(-1)!.headers['user-agent']), /^a2a-agent-registry/);
  });
});

describe('postJson (webhooks)', () => {
  test('posts JSON, answers with the status (the body unread), refuses what getJson refuses; a redirect is not followed', async () => {
    const received: unknown[] = [];
    origin.route('/hook', async (req, res) => {
      let body = '';
      for await (const chunk of req) body += String(chunk);
      received.push({ type: req.headers['content-type'], body: JSON.parse(body), auth: req.headers.authorization });
      res.writeHead(202, { 'content-type': 'text/plain' }).end('accepted');
    });
    origin.route('/hook-moved', (_req, res) => void res.writeHead(302, { location: '/hook' }).end());
    origin.route('/hook-down', (_req, res) => void res.writeHead(503).end());
    const f = fetcher();
    const answer = await f.postJson(at('agent.test', '/hook'), { event: 'updated' }, { purpose: 'webhook', headers: { Authorization: 'Bearer t' } });
    assert.deepEqual(answer, { status: 202, url: at('agent.test', '/hook'), contentType: 'text/plain' });
    assert.deepEqual(received, [{ type: 'application/json', body: { event: 'updated' }, auth: 'Bearer t' }]);
    const moved = await refusal(f.postJson(at('agent.test', '/hook-moved'), {}, { purpose: 'webhook' }));
    assert.equal(moved.reason, 'http-status');
    assert.equal(moved.status, 302);
    // Saying where it pointed, and what to do: the owner configures that URL (it said "answered HTTP 302" alone).
    assert.match(moved.message, /answered HTTP 302 \(a redirect to http:\/\/agent\.test:\d+\/hook\); a notification is not re-sent where a webhook redirects: configure the URL/);
    assert.equal((await refusal(f.postJson(at('agent.test', '/hook-down'), {}, { purpose: 'webhook' }))).status, 503);
    assert.equal((await refusal(f.postJson('http://169.254.169.254/hook', {}, { purpose: 'webhook' }))).reason, 'link-local');
    assert.equal(received.length, 1);
  });
});

describe('fetchFunction (for SDKs)', () => {
  test('a streamed answer passes as it arrives; the cap and the deadline still apply', async () => {
    let release: () => void = () => undefined;
    origin.route('/events', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      release = () => res.end('data: two\n\n');
    });
    const fetch = fetcher().fetchFunction({ purpose: 'mcp' });
    const response = await fetch(at('agent.test', '/events'));
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    assert.equal(response.url, at('agent.test', '/events'));
    const reader = response.body!.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), 'data: one\n\n');
    release();
    assert.equal(new TextDecoder().decode((await reader.read()).value), 'data: two\n\n');
    assert.equal((await reader.read()).done, true);

    origin.route('/big', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(Buffer.alloc(20_000, 0x20)));
    const big = await fetch(at('agent.test', '/big'));
    await assert.rejects(big.text(), (error: Error) => error instanceof FetchError && error.reason === 'too-large');

    origin.route('/stall', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).write('{'));
    const slow = await fetcher({ timeoutMs: 300 }).fetchFunction({ purpose: 'mcp' })(at('agent.test', '/stall'));
    await assert.rejects(slow.text(), (error: Error) => error instanceof FetchError && error.reason === 'timeout');
  });

  test('a request given a longer deadline than the fetcher\'s (the embeddings service\'s 10 s) gets all of it', async () => {
    // Headers after 1.5 s, then the body 1.5 s later: each past the fetcher's 1 s, all within the request's 5 s.
    origin.route('/slow-service', (_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"data":');
        setTimeout(() => res.end('[]}'), 1500);
      }, 1500);
    });
    const f = fetcher({ timeoutMs: 1000 });
    const response = await f.fetchFunction({ purpose: 'embeddings', timeoutMs: 5000 })(at('agent.test', '/slow-service'), { method: 'POST', body: '{}' });
    assert.deepEqual(await response.json(), { data: [] });
    // Its own deadline still holds.
    const short = await refusal(f.fetchFunction({ purpose: 'embeddings', timeoutMs: 300 })(at('agent.test', '/slow-service'), { method: 'POST', body: '{}' }));
    assert.equal(short.reason, 'timeout');
    assert.match(short.message, /within 300 ms/);
  });

  test('a request given a longer deadline than the fetcher\'s gets all of it to connect, too (a TLS handshake answered late)', async () => {
    // A TLS front that passes each connection on to the server only 1.2 s after accepting it:
    // the handshake (the connect phase, for undici) ends past the fetcher's 200 ms, within the
    // request's 3 s. (undici's connect timer ticks every half second: it fired within 1 s.)
    const { key, cert } = selfSignedCertificate('agent.test');
    const secure = await startOrigin({ tls: { key, cert, host: 'agent.test' } });
    const late = net.createServer((socket) => {
      setTimeout(() => {
        const server = net.connect(secure.port, '127.0.0.1');
        socket.pipe(server).pipe(socket);
        socket.on('error', () => server.destroy());
        server.on('error', () => socket.destroy());
      }, 1200);
    });
    await new Promise<void>((resolve) => late.listen(0, '127.0.0.1', resolve));
    try {
      secure.json('/late', { late: true });
      const f = fetcher({ ca: cert, timeoutMs: 200 });
      const url = `https://agent.test:${(late.address() as AddressInfo).port}/late`;
      const response = await f.fetchFunction({ purpose: 'embeddings', timeoutMs: 3000 })(url);
      assert.deepEqual(await response.json(), { late: true });
      // The fetcher's own deadline still cuts it, as a timeout within 200 ms.
      const short = await refusal(f.getJson(url, { purpose: 'agent-card' }));
      assert.equal(short.reason, 'timeout');
      assert.match(short.message, /within 200 ms/);
      await f.close();
    } finally {
      late.close();
      await secure.close();
    }
  });

  test('refusals reject the call; 204 answers have no body', async () => {
    const fetch = fetcher().fetchFunction({ purpose: 'mcp' });
    await assert.rejects(fetch('http://10.0.0.1/mcp', { method: 'POST', body: '{}' }), (error: Error) => error instanceof FetchError && error.reason === 'private');
    origin.route('/empty', (_req, res) => void res.writeHead(204).end());
    const empty = await fetch(at('agent.test', '/empty'), { method: 'DELETE' });
    assert.equal(empty.status, 204);
    assert.equal(empty.body, null);
  });
});

describe('observer (metrics)', () => {
  test('one event per request: purpose, outcome, reason, seconds', async () => {
    origin.json('/observed', {});
    const f = fetcher();
    await f.getJson(at('agent.test', '/observed'), { purpose: 'probe' });
    await refusal(f.getJson('http://10.0.0.1/', { purpose: 'refresh' }));
    const fetch = f.fetchFunction({ purpose: 'mcp' });
    await (await fetch(at('agent.test', '/observed'))).text();
    assert.deepEqual(events.map(({ purpose, outcome, reason }) => ({ purpose, outcome, reason })), [
      { purpose: 'probe', outcome: 'ok', reason: undefined },
      { purpose: 'refresh', outcome: 'failed', reason: 'private' },
      { purpose: 'mcp', outcome: 'ok', reason: undefined },
    ]);
    assert.ok(events.every((e) => e.seconds >= 0 && e.seconds < 5));
  });

  test('Prometheus metrics: fetches by purpose and outcome, failures by reason, latency', async () => {
    origin.json('/metered', {});
    const metrics = new RegistryMetrics();
    const f = fetcher({ observer: metrics.fetchObserver() });
    await f.getJson(at('agent.test', '/metered'), { purpose: 'agent-card' });
    await refusal(f.getJson('http://169.254.169.254/', { purpose: 'agent-card' }));
    await refusal(f.getJson(at('agent.test', '/nope'), { purpose: 'refresh' }));
    const text = await metrics.registry.metrics();
    assert.match(text, /registry_fetches_total\{purpose="agent-card",outcome="ok"\} 1/);
    assert.match(text, /registry_fetches_total\{purpose="agent-card",outcome="failed"\} 1/);
    assert.match(text, /registry_fetch_failures_total\{purpose="agent-card",reason="link-local"\} 1/);
    assert.match(text, /registry_fetch_failures_total\{purpose="refresh",reason="http-status"\} 1/);
    assert.match(text, /registry_fetch_duration_seconds_count\{purpose="agent-card"\} 2/);
  });
});

describe('configuration', () => {
  test('REGISTRY_FETCH_ALLOW and REGISTRY_FETCH_TIMEOUT_MS', () => {
    const config = loadConfig({ REGISTRY_FETCH_ALLOW: 'agents.internal, 10.0.0.0/8', REGISTRY_FETCH_TIMEOUT_MS: '2500' });
    assert.equal(config.fetch.timeoutMs, 2500);
    assert.equal(config.fetch.allow.allowsHost('agents.internal'), true);
    assert.equal(config.fetch.allow.allowsAddress(ipaddr.parse('10.2.3.4')), true);
    assert.equal(loadConfig({}).fetch.allow.isEmpty, true);
    assert.equal(loadConfig({}).fetch.timeoutMs, 5000);
    assert.throws(() => loadConfig({ REGISTRY_FETCH_ALLOW: 'ok.example, 300.1.1.1/8' }), /invalid configuration: REGISTRY_FETCH_ALLOW must list host names, IP addresses or CIDR ranges: "300\.1\.1\.1\/8" is not a CIDR range/);
    assert.throws(() => loadConfig({ REGISTRY_FETCH_TIMEOUT_MS: '10' }), /REGISTRY_FETCH_TIMEOUT_MS must be a whole number from 100 to 120000 \(got "10"\); e\.g\. REGISTRY_FETCH_TIMEOUT_MS=5000 \(the default\)$/);
  });
});

describe("the registry's loading of its HTTP client", () => {
  test('a load that fails is tried again by the next request, not kept failing every request until a restart', async () => {
    // A process of its own, whose first resolution of undici fails (a module hook), as a file
    // system that failed a read once would make it; later ones pass.
    ensureBuilt();
    const script = `
      import http from 'node:http';
      import { registerHooks } from 'node:module';
      let failed = false;
      registerHooks({ resolve: (s, c, n) => { if (s === 'undici' && !failed) { failed = true; throw new Error('the first load of undici failed'); } return n(s, c); } });
      const { GuardedFetcher, AllowList } = await import('./dist/src/net/index.js');
      const server = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const url = 'http://127.0.0.1:' + server.address().port + '/card';
      const fetcher = new GuardedFetcher({ maxBytes: 1024, allow: AllowList.parse('127.0.0.1') });
      const first = await fetcher.getJson(url, { purpose: 'agent-card' }).then(() => 'fetched', (e) => e.message);
      const second = await fetcher.getJson(url, { purpose: 'agent-card' }).then((d) => JSON.stringify(d.value), (e) => e.message);
      await fetcher.close();
      server.close();
      console.log(JSON.stringify({ first, second }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO_ROOT, timeout: 10_000 });
    const { first, second } = JSON.parse(stdout) as { first: string; second: string };
    // The registry's own failure, not the server's ("could not fetch <url>: ...").
    assert.match(first, /^the request to http:\/\/127\.0\.0\.1:\d+\/card was not sent: the registry's HTTP client \(undici\) failed to load \(the first load of undici failed\); the next request tries again/, first);
    assert.equal(second, '{"ok":true}', 'the second request loaded undici and was answered');
  });

  test('a load that never ends: ready() gives up at its bound, and the request after it, not waiting for it again, says it was not sent (the embeddings client too, not "no answer within 10000 ms")', async () => {
    // A process of its own, whose undici never finishes loading (a module hook: its evaluation
    // waits forever); this one loaded it long ago. The bound is 0.3 s here, 30 s in the registry.
    ensureBuilt();
    const script = `
      import http from 'node:http';
      import { registerHooks } from 'node:module';
      registerHooks({ load: (u, c, n) => (u.includes('/node_modules/undici/') ? { format: 'module', source: 'await new Promise(() => {});', shortCircuit: true } : n(u, c)) });
      const { GuardedFetcher } = await import('./dist/src/net/index.js');
      const { OpenAIEmbeddings } = await import('./dist/src/search/embeddings.js');
      const server = http.createServer((req, res) => res.end('{}'));
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const url = 'http://127.0.0.1:' + server.address().port + '/v1/embeddings';
      const fetcher = new GuardedFetcher({ maxBytes: 1024, clientLoadLimitMs: 300, operatorEndpoints: [{ purpose: 'embeddings', url }] });
      const ready = await fetcher.ready().then(() => 'loaded', (e) => e.message);
      const client = new OpenAIEmbeddings({ url, model: 'm', fetch: (o) => fetcher.fetchFunction(o) });
      const started = performance.now();
      const embed = await client.embed(['x']).then(() => 'embedded', (e) => e.message);
      const embedMs = performance.now() - started;
      console.log(JSON.stringify({ ready, embed, embedMs }));
      process.exit(0);
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO_ROOT, timeout: 10_000 }).catch((e: { stdout?: string; killed?: boolean }) => {
      throw new Error(e.killed ? 'ready() still waited after 10 s: a load that never ends kept its callers (webhooks, MCP fetchTools) waiting forever' : String(e), { cause: e });
    });
    const { ready, embed, embedMs } = JSON.parse(stdout) as { ready: string; embed: string; embedMs: number };
    assert.equal(ready, "the registry's HTTP client (undici) did not load within 0.3 s; the registry's machine is overloaded, or its installation is damaged (install its dependencies again)");
    // The load given up on still under way: the request after it fails at once, saying so, not
    // after waiting the bound again on that same load (30 s for every request in the registry).
    assert.match(embed, /^embeddings service http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings \(model m\): the request to http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings was not sent: the registry's HTTP client \(undici\) did not load within 0\.3 s and is still loading: requests are not sent until it has loaded \(or the registry is restarted\);/, embed);
    assert.ok(embedMs < 200, `the request waited ${Math.round(embedMs)} ms on the load already given up on`);
  });
});
