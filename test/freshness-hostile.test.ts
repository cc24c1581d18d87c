/**
 * Issue 16, the hard cases, over real HTTP against a registry on 127.0.0.1 (SQLite):
 * - hostile servers (slow body, huge body, redirect loop, redirect to 127.0.0.1, a DNS answer
 *   pointing inside) each cost at most one fetch timeout and are declined with the rule;
 * - the refresh loop never holds up requests, even when every source hangs;
 * - REGISTRY_PROBE: inline agents checked at their well-known card, with drift;
 * - REGISTRY_HIDE_UNHEALTHY_SECONDS: long-unhealthy entries leave default search results;
 * - probing turned off: what probes left is cleared at the next start (SQLite and PostgreSQL).
 * The registry allows only the host name "localhost" (REGISTRY_FETCH_ALLOW=localhost), so the
 * literal 127.0.0.1 stays refused; a second registry runs the default (empty) allow list.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Client } from '@a2a-js/sdk/client';
import { takeOutboundViolations } from './support/outbound-tripwire.js';
import { startOrigin, waitFor, type OriginServer } from './support/origin-server.js';
import { makeDue, nextCheckAt, serveCard, setStoredIdentity } from './support/freshness.js';
import { mcpServer, toolspec, v1Card } from './support/documents.js';
import { errorOf, op, registerByUrl, resultOf, sdkClient, type WireJson } from './support/client.js';
import { eventually } from './support/eventually.js';
import { usePostgres } from './support/postgres.js';
import { TOKENS, logCapture, startTestRegistry, type TestRegistry } from './support/registry.js';
import { tempDir } from './support/temp.js';
import { watch } from './support/watch-stream.js';

const TIMEOUT_MS = 1000;
/**
 * "At most one timeout": less than two, which leaves the request's own work room on a loaded
 * 2-core machine while still telling one timeout from a second (a redirect or retry that
 * started the clock again) or from none (a hang).
 */
const ONE_TIMEOUT = 2 * TIMEOUT_MS;

let registry: TestRegistry;
let origin: OriginServer;
let alice: Client;
let anonymous: Client;
let local = '';
const postgres = usePostgres();

before(async () => {
  origin = await startOrigin();
  local = `http://localhost:${origin.port}`;
  registry = await startTestRegistry({
    REGISTRY_FETCH_ALLOW: 'localhost',
    REGISTRY_FETCH_TIMEOUT_MS: String(TIMEOUT_MS),
    REGISTRY_PROBE: 'true',
    // Longer than a round of hanging sources (two fetch timeouts): an unhealthy entry is checked
    // again as it passes this limit, and within that round it would be claimed a second time.
    // Six seconds, not three: on a loaded machine (CI's two cores running three test files) the
    // search right after the failing check came more than three seconds after it.
    REGISTRY_HIDE_UNHEALTHY_SECONDS: '6',
  });
  [alice, anonymous] = await Promise.all([sdkClient(registry.url, { token: TOKENS.alice }), sdkClient(registry.url)]);
  // Warm up (first-use costs of the HTTP client, the SDK and the first lookup of "localhost") so
  // the timings below are the fetches'.
  serveCard(origin, v1Card('Warm-up Agent', 'https://agents.example.org/warm-up/a2a'), '/warm-up');
  await registerByUrl(alice, `${local}/warm-up`);
});
after(async () => {
  await registry.close();
  await origin.close();
});
afterEach(() => assert.deepEqual(takeOutboundViolations(), [], 'a connection left for a non-loopback address'));

async function timedRegister(url: string): Promise<{ error: WireJson; ms: number }> {
  const started = performance.now();
  const error = errorOf(await op(alice, { register: { url } }));
  return { error, ms: performance.now() - started };
}

describe('hostile servers cost at most one timeout', () => {
  test('a slow body (a byte every 50 ms, forever)', async () => {
    let closed = false;
    origin.route('/slow/.well-known/agent-card.json', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"name":"');
      const timer = setInterval(() => res.write('a'), 50);
      res.on('close', () => {
        clearInterval(timer);
        closed = true;
      });
    });
    const { error, ms } = await timedRegister(`${local}/slow`);
    assert.equal(error.code, 'FETCH_FAILED');
    assert.equal(error.details[0].rule, 'timeout');
    assert.match(error.message, new RegExp(`within ${TIMEOUT_MS} ms`));
    assert.ok(ms < ONE_TIMEOUT, `${Math.round(ms)} ms`);
    await waitFor(() => closed, 'the slow server to see its connection closed');
  });

  test('no headers at all', async () => {
    origin.route('/silent/.well-known/agent-card.json', () => undefined);
    const { error, ms } = await timedRegister(`${local}/silent`);
    assert.equal(error.details[0].rule, 'timeout');
    assert.ok(ms < ONE_TIMEOUT, `${Math.round(ms)} ms`);
  });

  test('an MCP server that never answers (fetchTools): one timeout, whose reason is in the details as for a card', async () => {
    origin.route('/mcp-silent', () => undefined);
    const started = performance.now();
    const error = errorOf(await op(alice, { register: { mcpServer: mcpServer('silent-mcp', `${local}/mcp-silent`), fetchTools: true } }));
    assert.equal(error.code, 'FETCH_FAILED');
    assert.equal(error.details?.[0]?.rule, 'timeout', JSON.stringify(error));
    // Told as the exchange's deadline: the guard told it as its own request's ("within 1000 ms (the registry's fetch timeout)").
    assert.match(error.message, new RegExp(`: its caller's deadline passed after \\d+ ms \\(REGISTRY_FETCH_TIMEOUT_MS: ${TIMEOUT_MS} ms for the whole MCP exchange\\)`), error.message);
    assert.doesNotMatch(error.message, /fetch timeout/);
    assert.ok(performance.now() - started < ONE_TIMEOUT);
  });

  test('an MCP server whose answer is an event stream that never ends: one timeout, said as one (not a DNS lookup)', async () => {
    let closed = false;
    origin.route('/mcp-endless-stream', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const timer = setInterval(() => res.write(': still here\n\n'), 50);
      res.on('close', () => {
        clearInterval(timer);
        closed = true;
      });
    });
    const started = performance.now();
    const error = errorOf(await op(alice, { register: { mcpServer: mcpServer('endless-stream', `${local}/mcp-endless-stream`), fetchTools: true } }));
    assert.equal(error.code, 'FETCH_FAILED');
    assert.equal(error.details?.[0]?.rule, 'timeout', JSON.stringify(error));
    // Told as the exchange's deadline: the guard told it as its own request's ("within 1000 ms (the registry's fetch timeout)").
    assert.match(error.message, new RegExp(`: its caller's deadline passed after \\d+ ms \\(REGISTRY_FETCH_TIMEOUT_MS: ${TIMEOUT_MS} ms for the whole MCP exchange\\)`), error.message);
    assert.doesNotMatch(error.message, /fetch timeout/);
    // Before: the SDK's notice that it gave up, sent after the deadline, was the failure told: "looking up localhost took longer…".
    assert.doesNotMatch(error.message, /looking up|DNS/);
    assert.ok(performance.now() - started < ONE_TIMEOUT);
    await waitFor(() => closed, 'the MCP server to see its stream closed');
  });

  test('an MCP server whose event stream grows past the size limit: TOO_LARGE as soon as it does, not a timeout', async () => {
    let sent = 0;
    let closed = false;
    origin.route('/mcp-huge-stream', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = `: ${'x'.repeat(16 * 1024)}\n\n`;
      const pump = (): void => {
        while (!closed && res.write(chunk)) sent += chunk.length;
        if (!closed) res.once('drain', pump);
      };
      res.on('close', () => (closed = true));
      pump();
    });
    const started = performance.now();
    const error = errorOf(await op(alice, { register: { mcpServer: mcpServer('huge-stream', `${local}/mcp-huge-stream`), fetchTools: true } }));
    const ms = performance.now() - started;
    assert.equal(error.code, 'TOO_LARGE', JSON.stringify(error));
    assert.equal(error.details?.[0]?.rule, 'too-large');
    // Before: the stream was cut at the cap, but the exchange waited for its deadline and failed as a timeout.
    assert.ok(ms < TIMEOUT_MS, `${Math.round(ms)} ms`);
    await waitFor(() => closed, 'the MCP server to see its stream closed');
    assert.ok(sent < 8 * 1024 * 1024, `stopped early (${sent} bytes written)`);
  });

  test('a huge body is cut off at the size limit', async () => {
    let sent = 0;
    let closed = false;
    origin.route('/huge/.well-known/agent-card.json', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(16 * 1024, 0x20);
      const pump = (): void => {
        while (!closed && res.write(chunk)) sent += chunk.length;
        if (!closed) res.once('drain', pump);
      };
      res.on('close', () => (closed = true));
      pump();
    });
    const { error, ms } = await timedRegister(`${local}/huge`);
    assert.equal(error.code, 'TOO_LARGE');
    assert.ok(ms < ONE_TIMEOUT, `${Math.round(ms)} ms`);
    await waitFor(() => closed, 'the huge server to see its connection closed');
    assert.ok(sent < 8 * 1024 * 1024, `stopped early (${sent} bytes written)`);
  });

  test('a redirect loop', async () => {
    origin.route('/loop/.well-known/agent-card.json', (_req, res) => void res.writeHead(302, { location: '/loop/.well-known/agent-card.json' }).end());
    const { error, ms } = await timedRegister(`${local}/loop`);
    assert.equal(error.details[0].rule, 'redirects');
    assert.match(error.message, /redirected more than 3 times/);
    assert.equal(origin.hits.get('/loop/.well-known/agent-card.json'), 4);
    assert.ok(ms < ONE_TIMEOUT, `${Math.round(ms)} ms`);
  });

  test('a redirect to 127.0.0.1 (only the name localhost is allowed)', async () => {
    serveCard(origin, v1Card('Redirect Target', 'https://agents.example.org/redirected/a2a'), '/target');
    origin.route('/to-ip/.well-known/agent-card.json', (_req, res) =>
      void res.writeHead(302, { location: `http://127.0.0.1:${origin.port}/target/.well-known/agent-card.json` }).end(),
    );
    const { error } = await timedRegister(`${local}/to-ip`);
    assert.equal(error.details[0].rule, 'loopback');
    assert.match(error.message, /refused to fetch http:\/\/127\.0\.0\.1:\d+\/target\/\.well-known\/agent-card\.json: 127\.0\.0\.1 is a loopback address/);
    assert.equal(origin.hits.get('/target/.well-known/agent-card.json'), undefined, 'the target was never fetched');
    // Through the allowed name it works: the rule is about the address, not the card.
    assert.equal(resultOf(await op(alice, { register: { url: `${local}/target` } })).created, true);
  });

  test('a DNS answer pointing inside, with the default (empty) allow list', async () => {
    const { lines: logs, stream } = logCapture();
    const strict = await startTestRegistry({ REGISTRY_FETCH_TIMEOUT_MS: String(TIMEOUT_MS), LOG_LEVEL: 'info' }, undefined, stream);
    try {
      const client = await sdkClient(strict.url, { token: TOKENS.alice });
      serveCard(origin, v1Card('Inside Agent', 'https://agents.example.org/inside/a2a'), '/inside');
      const started = performance.now();
      const error = errorOf(await op(client, { register: { url: `${local}/inside` } }));
      assert.equal(error.code, 'FETCH_FAILED');
      // Neither the address nor its kind is told the caller (who could map the operator's internal
      // names with it); the operator's log says both.
      assert.equal(error.details[0].rule, 'non-public');
      assert.match(error.message, /localhost resolves to an address the registry may not contact \(loopback, private, link-local or another range that is not public/);
      assert.ok(!/127\.0\.0\.1|::1|a loopback address/.test(JSON.stringify(error)), 'what the name resolves to is not told');
      const logged = logs.find((line) => line.host === 'localhost' && line.rule === 'loopback');
      assert.ok(logged, 'the log names the rule');
      assert.match(String(logged.address), /^(127\.0\.0\.1|::1)$/);
      assert.equal(logged.origin, local);
      assert.ok(performance.now() - started < ONE_TIMEOUT);
      assert.equal(origin.hits.get('/inside/.well-known/agent-card.json'), undefined, 'refused before connecting');
      const mcpError = errorOf(await op(client, { register: { mcpServer: mcpServer('inside-mcp', `${local}/mcp`), fetchTools: true } }));
      assert.equal(mcpError.details[0].rule, 'non-public');
    } finally {
      await strict.close();
    }
  });
});

describe('a card whose body does not decompress as its Content-Encoding declares', () => {
  test('is declined as no valid document, saying which coding and how to mend it; a refresh finds the entry invalid, not unreachable', async () => {
    const card = v1Card('Labelled Agent', 'https://agents.example.org/labelled/a2a');
    const url = `${local}/labelled/.well-known/agent-card.json`;
    // Sent uncompressed under Content-Encoding: gzip (a server or proxy that labels what it did not compress).
    serveCard(origin, card, '/labelled', { 'content-encoding': 'gzip' });
    const error = errorOf(await op(alice, { register: { url } }));
    assert.equal(error.code, 'VALIDATION_FAILED', JSON.stringify(error));
    assert.equal(error.details[0].rule, 'invalid-json');
    assert.match(error.message, /answered with Content-Encoding: gzip, but its body is not valid gzip \(incorrect header check, Z_DATA_ERROR\): the server must send the body compressed as its Content-Encoding declares, or send it uncompressed without that header/);

    serveCard(origin, card, '/labelled');
    const { id } = resultOf(await op(alice, { register: { url } }));
    serveCard(origin, { ...card, description: 'Changed, and labelled gzip.' }, '/labelled', { 'content-encoding': 'gzip' });
    makeDue(registry.dataDir, id);
    await registry.refresher!.runOnce();
    const entry = resultOf(await op(anonymous, { get: { id } }));
    assert.equal(entry.health.status, 'invalid');
    assert.equal(entry.health.reason, 'invalid-json');
    assert.match(entry.health.message, /is not valid gzip/);
    assert.equal(entry.revision, 1);
  });
});

describe('a card in a Content-Encoding the registry does not decode', () => {
  test('zstd on a 200 is declined saying what to send; a misconfigured coding (none, utf-8) registers, read as sent; a 404 in zstd is http-status, the entry unreachable', async () => {
    const card = v1Card('Coded Agent', 'https://agents.example.org/coded/a2a');
    const url = `${local}/coded/.well-known/agent-card.json`;
    serveCard(origin, card, '/coded', { 'content-encoding': 'zstd' });
    const error = errorOf(await op(alice, { register: { url } }));
    assert.equal(error.code, 'VALIDATION_FAILED', JSON.stringify(error));
    assert.equal(error.details[0].rule, 'invalid-json');
    assert.match(error.message, /answered with Content-Encoding: zstd, which the registry does not decode \(decoding zstd can take up to 128 MB of memory, whatever the body's size\): send the body compressed with gzip, deflate or br, or uncompressed/);

    // Servers that label what they did not compress: undici never decoded these, and they registered (before, refused as zstd was).
    let id = '';
    for (const [i, coding] of ['none', 'utf-8'].entries()) {
      serveCard(origin, { ...card, description: `Labelled ${coding}.` }, '/coded', { 'content-encoding': coding });
      const registered = resultOf(await op(alice, { register: { url } }));
      // Each a new revision: the body as sent, read.
      assert.deepEqual([registered.revision, registered.changed, registered.health.status], [i + 1, true, 'ok'], coding);
      id = registered.id;
    }

    // A 404 is a 404, whatever its coding: the entry unreachable (before, invalid-json).
    origin.route('/coded/.well-known/agent-card.json', (_req, res) => void res.writeHead(404, { 'content-type': 'text/html', 'content-encoding': 'zstd' }).end('<h1>Not Found</h1>'));
    makeDue(registry.dataDir, id);
    await registry.refresher!.runOnce();
    const entry = resultOf(await op(anonymous, { get: { id } }));
    assert.equal(entry.health.status, 'unreachable');
    assert.equal(entry.health.reason, 'http-status');
  });
});

describe('the refresh loop never holds up requests', () => {
  test('while every source hangs, searches answer at once; each hanging source costs one timeout', async () => {
    const ids: string[] = [];
    const hanging = new Set<number>();
    for (let i = 0; i < 16; i++) {
      const base = `/busy/${i}`;
      const text = `${JSON.stringify(v1Card(`Busy Agent ${i}`, `https://agents.example.org/busy-${i}/a2a`))}`;
      origin.route(`${base}/.well-known/agent-card.json`, (_req, res) => {
        if (hanging.has(i)) return; // never answers
        res.writeHead(200, { 'content-type': 'application/json' }).end(text);
      });
      ids.push(resultOf(await op(alice, { register: { url: `${local}${base}` } })).id);
      hanging.add(i);
    }
    makeDue(registry.dataDir, ...ids);
    const started = performance.now();
    const round = registry.refresher!.runOnce();
    const latencies: number[] = [];
    let roundDone = false;
    void round.then(() => (roundDone = true));
    while (!roundDone) {
      const t = performance.now();
      const hits = resultOf(await op(anonymous, { search: { query: 'busy agent' } })).results;
      latencies.push(performance.now() - t);
      assert.ok(hits.length > 0);
    }
    const checked = await round;
    const roundMs = performance.now() - started;
    assert.equal(checked, 16);
    // 16 hanging sources, 8 at a time: two waves of one timeout each.
    assert.ok(roundMs >= TIMEOUT_MS && roundMs < 2 * ONE_TIMEOUT, `round took ${Math.round(roundMs)} ms`);
    assert.ok(latencies.length >= 3, `only ${latencies.length} searches ran during the round`);
    // A search that waited for the round would take a timeout or more.
    const worst = Math.max(...latencies);
    assert.ok(worst < TIMEOUT_MS / 2, `a search took ${Math.round(worst)} ms during the round (${latencies.map(Math.round).join(', ')})`);
    for (const id of ids) {
      const entry = resultOf(await op(anonymous, { get: { id } }));
      assert.equal(entry.health.status, 'unreachable');
      assert.equal(entry.health.reason, 'timeout');
      assert.equal(entry.revision, 1);
    }
  });
});

describe('REGISTRY_PROBE: agents registered inline', () => {
  test('ok while the live card matches; drift when it differs; invalid; unreachable', async () => {
    const own = await startOrigin();
    try {
      const card = v1Card('Probed Agent', `http://localhost:${own.port}/a2a`);
      own.json('/.well-known/agent-card.json', card);
      const { id } = resultOf(await op(alice, { register: { agentCard: card } }));
      const probeOnce = async () => {
        makeDue(registry.dataDir, id);
        await registry.refresher!.runOnce();
        return resultOf(await op(anonymous, { get: { id } }));
      };
      let entry = await probeOnce();
      assert.equal(own.hits.get('/.well-known/agent-card.json'), 1, 'the well-known card at the origin of the primary interface');
      assert.equal(entry.health.status, 'ok');
      assert.equal(entry.drift, false);
      assert.equal(entry.source, undefined, 'probing is not a source: the registered revision stays');
      // Re-registering the same card (a heartbeat) keeps what the probes found.
      assert.equal(resultOf(await op(alice, { register: { agentCard: card } })).changed, false);
      assert.deepEqual((resultOf(await op(anonymous, { get: { id } }))).health, entry.health);

      // A body that is no card at all (not JSON) differs from the registered revision: drift,
      // as a refresh records it (before, the probe kept the previous drift, false).
      own.route('/.well-known/agent-card.json', (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end('<html>Down for maintenance</html>');
      });
      entry = await probeOnce();
      assert.equal(entry.health.status, 'invalid');
      assert.equal(entry.health.reason, 'invalid-json');
      assert.equal(entry.drift, true);

      own.json('/.well-known/agent-card.json', { ...card, description: 'Something else now.' });
      entry = await probeOnce();
      assert.equal(entry.health.status, 'ok');
      assert.equal(entry.drift, true);
      assert.equal(entry.revision, 1);
      const hit = resultOf(await op(anonymous, { search: { query: 'probed agent' } })).results.find((h: WireJson) => h.id === id);
      assert.equal(hit.drift, true);

      own.json('/.well-known/agent-card.json', { name: 'not a card' });
      entry = await probeOnce();
      assert.equal(entry.health.status, 'invalid');
      assert.match(entry.health.message, /is not valid/);

      await own.close();
      entry = await probeOnce();
      assert.equal(entry.health.status, 'unreachable');
      assert.equal(entry.health.reason, 'connect');
      assert.equal(entry.health.failures, 2);
    } finally {
      await own.close().catch(() => undefined);
    }
  });

  test('a placeholder primary URL is unreachable, saying why; a WebSocket one is probed at its HTTP origin', async () => {
    const own = await startOrigin();
    try {
      // A placeholder, which earlier releases registered (with a warning) and stored as written,
      // has no origin to probe: the check must record that, not fail with "Invalid URL" every
      // round and leave the entry unchecked.
      const placeholder = resultOf(await op(alice, { register: { agentCard: v1Card('Template Agent', 'https://template.example.org/a2a') } })).id;
      setStoredIdentity(registry.dataDir, placeholder, '{BASE_URL}/a2a');
      const card = v1Card('Socket Agent', `ws://localhost:${own.port}/socket`);
      card.supportedInterfaces[0]!.protocolBinding = 'https://bindings.example.org/websocket';
      own.json('/.well-known/agent-card.json', card);
      const socket = resultOf(await op(alice, { register: { agentCard: card } })).id;
      makeDue(registry.dataDir, placeholder, socket);
      await registry.refresher!.runOnce();

      const unprobed = resultOf(await op(anonymous, { get: { id: placeholder } }));
      assert.equal(unprobed.health?.status, 'unreachable');
      assert.equal(unprobed.health.reason, 'invalid-url');
      assert.match(unprobed.health.message, /"\{BASE_URL\}\/a2a" is not an absolute http\(s\) or ws\(s\) URL/);

      const probed = resultOf(await op(anonymous, { get: { id: socket } }));
      assert.equal(own.hits.get('/.well-known/agent-card.json'), 1, 'the card at http://localhost:<port>, the origin ws:// upgrades from');
      assert.equal(probed.health?.status, 'ok');
      assert.equal(probed.drift, false);
    } finally {
      await own.close();
    }
  });

  for (const engine of ['sqlite', 'postgres'] as const) {
    test(`probing turned off: the next start clears what probes left (an unreachable verdict hid the entry for good), and search finds it again (${engine})`, async (t) => {
      if (engine === 'postgres' && postgres.skipReason) return t.skip(postgres.skipReason);
      const storage = engine === 'postgres' ? { DATABASE_URL: await postgres.server.createDatabase('probe-off') } : { REGISTRY_DATA_DIR: tempDir() };
      const settings = { ...storage, REGISTRY_FETCH_ALLOW: 'localhost', REGISTRY_FETCH_TIMEOUT_MS: String(TIMEOUT_MS), REGISTRY_HIDE_UNHEALTHY_SECONDS: '1' };
      const gone = await startOrigin();
      const card = v1Card(`Vanished Probe Agent ${engine}`, `http://localhost:${gone.port}/a2a`);
      await gone.close();
      const probing = await startTestRegistry({ ...settings, REGISTRY_PROBE: 'true' });
      let id = '';
      try {
        const owner = await sdkClient(probing.url, { token: TOKENS.alice });
        id = resultOf(await op(owner, { register: { agentCard: card } })).id;
        await probing.refresher!.runOnce();
        assert.equal(resultOf(await op(owner, { get: { id } })).health?.status, 'unreachable');
        await new Promise((resolve) => setTimeout(resolve, 1200));
        assert.deepEqual(resultOf(await op(owner, { search: { query: card.name } })).results, [], 'hidden while unreachable');
      } finally {
        await probing.close();
      }
      const plain = await startTestRegistry(settings);
      try {
        const reader = await sdkClient(plain.url);
        await eventually(async () => resultOf(await op(reader, { get: { id } })).health === undefined, 'the probe\'s verdict cleared');
        assert.equal(resultOf(await op(reader, { get: { id } })).drift, undefined);
        // The stored record is cleared first, then the index: get may see the one before search the other.
        await eventually(async () => resultOf(await op(reader, { search: { query: card.name } })).results.some((h: WireJson) => h.id === id && h.health === undefined), 'found again');
      } finally {
        await plain.close();
      }
    });
  }

  test('REGISTRY_PROBE=true with REGISTRY_REFRESH_SECONDS=0 (no loop to probe on) stops start-up, saying so', async () => {
    await assert.rejects(startTestRegistry({ REGISTRY_PROBE: 'true', REGISTRY_REFRESH_SECONDS: '0' }), /REGISTRY_PROBE=true needs the refresh loop, which REGISTRY_REFRESH_SECONDS=0 turns off/);
  });

  test('MCP servers registered inline are not probed', async () => {
    const { id } = resultOf(await op(alice, { register: { mcpServer: mcpServer('unprobed', 'https://mcp.example.org/unprobed'), toolspec: toolspec() } }));
    await registry.refresher!.runOnce();
    assert.equal(resultOf(await op(anonymous, { get: { id } })).health, undefined);
  });
});

describe('REGISTRY_HIDE_UNHEALTHY_SECONDS', () => {
  test('entries unhealthy for longer leave default results; a health filter (or "any") brings them back', async () => {
    serveCard(origin, v1Card('Wombat Tracker Up', 'https://agents.example.org/wombat-up/a2a'), '/wombat-up');
    serveCard(origin, v1Card('Wombat Tracker Down', 'https://agents.example.org/wombat-down/a2a'), '/wombat-down');
    const up = resultOf(await op(alice, { register: { url: `${local}/wombat-up` } })).id;
    const down = resultOf(await op(alice, { register: { url: `${local}/wombat-down` } })).id;
    // A standing search over them is told when the failing one is hidden, not an interval later.
    const watching = watch(alice, { query: 'wombat tracker' });
    await watching.waitFor((e) => e.artifactUpdate?.artifact?.name === 'watch-results', 'the initial matches');
    origin.route('/wombat-down/.well-known/agent-card.json', (_req, res) => void res.writeHead(410).end());
    makeDue(registry.dataDir, down);
    await registry.refresher!.runOnce();
    const ids = async (filter?: WireJson) =>
      new Set(resultOf(await op(anonymous, { search: { query: 'wombat tracker', ...(filter ? { filter } : {}) } })).results.map((h: WireJson) => h.id));

    assert.ok((await ids()).has(down), 'just failed: still shown');
    await waitFor(async () => !(await ids()).has(down), 'the failing entry to be hidden after 6 s', 20_000);
    // Its next check is due as it passes the limit (REGISTRY_REFRESH_SECONDS is an hour here):
    // that check, failing again, tells the watch it left the results.
    await registry.refresher!.runOnce();
    const removed = await watching.waitForEvent((e) => e.event === 'removed' && e.hit?.id === down, 'the hidden entry\'s removal');
    assert.equal(removed.hit.name, 'Wombat Tracker Down');
    watching.disconnect();
    assert.ok((await ids()).has(up));
    assert.ok((await ids({ health: 'any' })).has(down));
    assert.ok((await ids({ health: 'unreachable' })).has(down));
    assert.ok(!(await ids({ health: 'ok' })).has(down));
    // Listing is not searching: list shows every entry.
    const listed = resultOf(await op(anonymous, { list: { pageSize: 100 } })).entries.map((e: WireJson) => e.id);
    assert.ok(listed.includes(down));
  });

  test('failures of alternating kinds are one run: the entry is hidden 6 s after the first, though its status changed just now', async () => {
    // Its source answers an HTML page (invalid), then 503 (unreachable), then HTML again: its
    // status, and health.since with it, changed at every check. Hiding counted from since, so
    // such an entry was never hidden, while one answering 404 every time was.
    serveCard(origin, v1Card('Quokka Flapper', 'https://agents.example.org/quokka-flapper/a2a'), '/quokka-flapper');
    const id = resultOf(await op(alice, { register: { url: `${local}/quokka-flapper` } })).id;
    const answer = (status: number, type: string) =>
      origin.route('/quokka-flapper/.well-known/agent-card.json', (_req, res) => void res.writeHead(status, { 'content-type': type }).end('<html></html>'));
    const refreshed = async (status: number, type: string): Promise<WireJson> => {
      answer(status, type);
      await op(alice, { refresh: { id } });
      return resultOf(await op(anonymous, { get: { id } })).health;
    };
    const found = async (filter?: WireJson) =>
      resultOf(await op(anonymous, { search: { query: 'quokka flapper', ...(filter ? { filter } : {}) } })).results.some((h: WireJson) => h.id === id);

    const first = await refreshed(200, 'text/html');
    assert.equal(first.status, 'invalid');
    assert.equal(first.failingSince, first.since, 'the run begins with the first failure');
    await new Promise((resolve) => setTimeout(resolve, 3200));
    const second = await refreshed(503, 'text/plain');
    assert.equal(second.status, 'unreachable');
    assert.equal(second.failures, 2);
    assert.notEqual(second.since, first.since, 'since: when this status began');
    assert.equal(second.failingSince, first.failingSince, 'failingSince: when the run of failures began');
    assert.ok(await found(), 'unhealthy for 3 s: still shown');
    // Checked again as it passes the limit (so standing searches are told it left), counted from the run's start too.
    assert.equal(nextCheckAt(registry.dataDir, id), new Date(Date.parse(first.failingSince) + 6001).toISOString());
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(first.failingSince) + 6200 - Date.now())));
    const third = await refreshed(200, 'text/html');
    assert.equal(third.status, 'invalid');
    assert.ok(third.failures >= 3, 'the loop may have checked it as it passed the limit, too');
    assert.equal(third.failingSince, first.failingSince);
    assert.ok(Date.now() - Date.parse(third.since) < 6000, 'its status began under 6 s ago');
    assert.ok(!(await found()), 'failing for over 6 s: hidden');
    assert.ok(await found({ health: 'any' }));

    // An ok check ends the run: the next failure begins another.
    serveCard(origin, v1Card('Quokka Flapper', 'https://agents.example.org/quokka-flapper/a2a'), '/quokka-flapper');
    await op(alice, { refresh: { id } });
    const healthy = resultOf(await op(anonymous, { get: { id } })).health;
    assert.equal(healthy.status, 'ok');
    assert.equal(healthy.failingSince, undefined);
    const again = await refreshed(503, 'text/plain');
    assert.equal(again.failures, 1);
    assert.equal(again.failingSince, again.since);
    assert.ok(await found(), 'a new run: shown');
  });
});
