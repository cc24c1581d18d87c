/**
 * SIGTERM in the middle of a load of registrations, on a child process started exactly as
 * `npm start` starts it: every acknowledged registration is there after a restart, and every
 * request in flight either completed or was refused cleanly: a connection error or a complete
 * JSON-RPC answer, never a hung connection and never a truncated or malformed success.
 * And `npm start` itself, stopped by a SIGTERM to npm: the signal reaches the registry. And a
 * client holding a request open holds shutdown for REGISTRY_SHUTDOWN_GRACE_SECONDS only, 5 s by
 * default, so the index save after it fits Docker's default stop timeout (10 s; the grace was
 * 10 s, and docker stop killed the registry before it saved its index). A second signal cuts
 * what is still in flight at once (it was ignored), and the index is still saved.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { lockForThisProcess } from '../src/storage/sqlite/process-lock.js';
import { REPO_ROOT, ensureBuilt } from './support/built.js';
import { v1Card } from './support/documents.js';
import { RawA2AClient, metadata as grpcMetadata } from './support/grpc.js';
import { connect } from './support/raw-connection.js';
import { TOKENS, TOKENS_ENV, spawnRegistry, startTestRegistry, tempDir } from './support/registry.js';
import { sendMessageBody } from './support/raw-http.js';

const WRITERS = 16;
const REQUEST_TIMEOUT_MS = 15_000;

type Outcome =
  | { kind: 'acknowledged'; id: string; url: string }
  | { kind: 'refused'; detail: string } // a complete JSON-RPC error or a REJECTED/FAILED task
  | { kind: 'connection'; detail: string } // the connection was refused or closed: nothing was acknowledged
  | { kind: 'hung' | 'malformed'; detail: string };

async function register(base: string, url: string): Promise<Outcome> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${base}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.alice}` },
      body: sendMessageBody([{ data: { register: { agentCard: v1Card(`Shutdown ${url}`, url) } }, mediaType: 'application/json' }]),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    text = await res.text();
  } catch (err) {
    const name = (err as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') return { kind: 'hung', detail: url };
    return { kind: 'connection', detail: String((err as Error & { cause?: Error }).cause?.message ?? err) };
  }
  let body: { result?: { task?: { status?: { state?: string }; artifacts?: Array<{ parts: Array<{ data?: { id?: string } }> }> } }; error?: { code?: number } };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return { kind: 'malformed', detail: `HTTP ${res.status}: ${text.slice(0, 200)}` };
  }
  const state = body.result?.task?.status?.state;
  if (state === 'TASK_STATE_COMPLETED') {
    const id = body.result!.task!.artifacts?.[0]?.parts.find((p) => p.data?.id)?.data?.id;
    if (!id) return { kind: 'malformed', detail: `a success without an id: ${text.slice(0, 200)}` };
    return { kind: 'acknowledged', id, url };
  }
  if (body.error && Number.isInteger(body.error.code)) return { kind: 'refused', detail: `JSON-RPC ${body.error.code}` };
  if (state === 'TASK_STATE_REJECTED' || state === 'TASK_STATE_FAILED') return { kind: 'refused', detail: state };
  return { kind: 'malformed', detail: `HTTP ${res.status}: ${text.slice(0, 200)}` };
}

test('SIGTERM under a load of registrations: acknowledged ones survive, in-flight ones end cleanly', async (t) => {
  const dataDir = tempDir();
  const env = { REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: TOKENS_ENV, REGISTRY_RATE_LIMITS: 'false' };
  const registry = await spawnRegistry(env);
  const outcomes: Outcome[] = [];
  let exited = false;
  void registry.exited.then(() => (exited = true));

  let sequence = 0;
  const writers = Array.from({ length: WRITERS }, async (_, w) => {
    // Keep writing until the server is gone and this writer has seen it refuse a connection.
    for (;;) {
      const outcome = await register(registry.url, `https://shutdown.example.org/${w}/${++sequence}`);
      outcomes.push(outcome);
      if (outcome.kind === 'connection' && exited) return;
      if (outcome.kind === 'hung' || outcome.kind === 'malformed') return;
      if (outcome.kind === 'connection') await new Promise((r) => setTimeout(r, 20));
    }
  });

  // Let the load run, then stop the server in the middle of it.
  const started = Date.now();
  while (outcomes.filter((o) => o.kind === 'acknowledged').length < 100 && Date.now() - started < 20_000) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const inFlightAtSignal = sequence - outcomes.length;
  const signalled = Date.now();
  registry.child.kill('SIGTERM');
  const code = await registry.exited;
  const shutdownMs = Date.now() - signalled;
  await Promise.all(writers);

  const count = (kind: Outcome['kind']) => outcomes.filter((o) => o.kind === kind).length;
  t.diagnostic(
    `in flight at SIGTERM: ${inFlightAtSignal}; acknowledged ${count('acknowledged')}, refused ${count('refused')}, connection errors ${count('connection')}; exit ${code} after ${shutdownMs} ms`,
  );
  assert.equal(code, 0, 'graceful shutdown exits 0');
  assert.ok(shutdownMs < 10_000, `shut down in ${shutdownMs} ms`);
  assert.ok(inFlightAtSignal > 0, 'requests were in flight when the signal came');
  assert.deepEqual(outcomes.filter((o) => o.kind === 'hung'), [], 'no request hung');
  assert.deepEqual(outcomes.filter((o) => o.kind === 'malformed'), [], 'no truncated or malformed answer');
  assert.ok(registry.logs.some((l) => l.msg === 'shutting down: finishing in-flight requests'), 'registry.logs.some((l) => l.msg === \'shutting down: finishing in-flight requests\')');
  assert.ok(registry.logs.some((l) => l.msg === 'registry stopped'), 'registry.logs.some((l) => l.msg === \'registry stopped\')');
  const timeline = registry.logs.filter((l) => l.msg !== 'request').slice(-4).map((l) => `${String(l.time).slice(11)} ${String(l.msg)}`);
  t.diagnostic(`shutdown log: ${timeline.join(' | ')}`);

  const acknowledged = outcomes.filter((o): o is Extract<Outcome, { kind: 'acknowledged' }> => o.kind === 'acknowledged');
  const restarted = await spawnRegistry(env);
  try {
    const missing: string[] = [];
    // Read them back in parallel batches (list would do too, but get checks each id exactly).
    for (let i = 0; i < acknowledged.length; i += 16) {
      await Promise.all(
        acknowledged.slice(i, i + 16).map(async ({ id, url }) => {
          const res = await fetch(`${restarted.url}/a2a/jsonrpc`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
            body: sendMessageBody([{ data: { get: { id } }, mediaType: 'application/json' }]),
          });
          const body = (await res.json()) as { result?: { task?: { status?: { state?: string }; artifacts?: Array<{ parts: Array<{ data?: { interfaces?: Array<{ url: string }> } }> }> } } };
          const entry = body.result?.task?.artifacts?.[0]?.parts.find((p) => p.data)?.data;
          if (body.result?.task?.status?.state !== 'TASK_STATE_COMPLETED' || entry?.interfaces?.[0]?.url !== url) missing.push(id);
        }),
      );
    }
    assert.deepEqual(missing, [], `${missing.length} of ${acknowledged.length} acknowledged registrations are missing`);
    assert.equal((await fetch(`${restarted.url}/readyz`)).status, 200);
  } finally {
    await restarted.stop();
  }
});

test('a request in flight when shutdown starts is answered with Connection: close', async () => {
  const registry = await startTestRegistry();
  const body = sendMessageBody([{ text: 'weather' }]);
  const c = await connect(registry.url);
  // Headers and half the body before shutdown starts, the rest after: the request is in flight.
  c.socket.write(`POST /a2a/jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 20)}`);
  await sleep(200);
  const closed = registry.close();
  await sleep(100);
  c.socket.write(body.slice(20));
  await c.closed;
  await closed;
  const text = c.received();
  assert.match(text, /^HTTP\/1\.1 200 /, text.slice(0, 200));
  assert.match(text, /\r\nconnection: close\r\n/i, text.slice(0, 400));
});

test('a connection no request was sent on (a browser\'s preconnection) does not hold shutdown for the grace period', async () => {
  const registry = await startTestRegistry();
  const idle = await connect(registry.url);
  const started = performance.now();
  await registry.close();
  const took = performance.now() - started;
  assert.ok(took < 3000, `close took ${Math.round(took)} ms`);
  assert.ok((await idle.closed) < 5000, 'the connection was closed');
  assert.equal(idle.received(), '', 'nothing was answered on it');
});

/** A request whose body never completes: a byte of it every 200 ms (so no request timeout cuts it). Stops when the server hangs up. */
async function trickle(url: string): Promise<Awaited<ReturnType<typeof connect>>> {
  const c = await connect(url);
  c.socket.write('POST /a2a/jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2000\r\n\r\n{"jsonrpc":');
  const sending = setInterval(() => c.socket.write(' '), 200);
  void c.closed.then(() => clearInterval(sending));
  return c;
}

test('a request that never completes holds shutdown for the default grace, 5 s, and the index is saved within Docker\'s default stop timeout (10 s)', async () => {
  const registry = await spawnRegistry({ REGISTRY_TOKENS: TOKENS_ENV });
  // A change since start-up, so shutdown saves the index.
  const body = sendMessageBody([{ data: { register: { agentCard: v1Card('Saved at shutdown', 'https://saved.example.org/a2a') } }, mediaType: 'application/json' }]);
  const registered = await fetch(`${registry.url}/a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.alice}` }, body });
  assert.equal(registered.status, 200);
  const held = await trickle(registry.url);
  await sleep(300);
  const signalled = performance.now();
  registry.child.kill('SIGTERM');
  const cutAfter = (await held.closed) - (signalled - held.opened);
  const code = await registry.exited;
  const took = performance.now() - signalled;
  assert.equal(code, 0);
  assert.ok(cutAfter > 4500 && cutAfter < 7000, `the held request was cut off ${Math.round(cutAfter)} ms after the signal`);
  assert.ok(registry.logs.some((l) => l.msg === 'search index saved'), 'the index was saved');
  assert.ok(took < 8000, `stopped ${Math.round(took)} ms after the signal: within Docker's 10 s with room`);
});

test('REGISTRY_SHUTDOWN_GRACE_SECONDS sets how long a request in flight may hold shutdown', async () => {
  const registry = await startTestRegistry({ REGISTRY_SHUTDOWN_GRACE_SECONDS: '1' });
  const held = await trickle(registry.url);
  await sleep(200);
  const started = performance.now();
  await registry.close();
  const took = performance.now() - started;
  assert.ok(took > 900 && took < 3000, `close took ${Math.round(took)} ms`);
  assert.ok((await held.closed) < 5000, 'the held request was cut off');
});

test('a second SIGTERM or SIGINT cuts the requests still in flight at once, HTTP and gRPC (it was ignored: the grace ran out, or a SIGKILL lost the index save); the index is saved, exit 0', async (t) => {
  // An agent's server that never answers: a registration by URL over gRPC waits on it.
  let fetched: () => void = () => undefined;
  const fetching = new Promise<void>((resolve) => (fetched = resolve));
  const silent = http.createServer(() => fetched());
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.after(() => silent.closeAllConnections());
  t.after(() => silent.close());
  // The registration's fetch waits as long as the grace: at the default 5 s it could end (answered
  // FETCH_FAILED, not cut) before a loaded machine had sent the second signal.
  const registry = await spawnRegistry({ REGISTRY_TOKENS: TOKENS_ENV, REGISTRY_SHUTDOWN_GRACE_SECONDS: '60', GRPC_PORT: '0', REGISTRY_FETCH_ALLOW: '127.0.0.1', REGISTRY_FETCH_TIMEOUT_MS: '60000' });
  t.after(() => registry.stop('SIGKILL'));
  const grpcUrl = String(registry.logs.find((l) => l.msg === 'registry listening')?.grpcUrl);
  const grpcClient = new RawA2AClient(`127.0.0.1:${grpcUrl.split(':').at(-1)}`);
  t.after(() => grpcClient.close());
  const cardUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/.well-known/agent-card.json`;
  const grpcCall = grpcClient.send([{ data: { register: { url: cardUrl } }, mediaType: 'application/json' }], grpcMetadata({ authorization: `Bearer ${TOKENS.alice}` }));
  await fetching;
  // When the call ended, taken as it ends: timed after the exit, it counted the index save too.
  const grpcEnded = grpcCall.then(() => performance.now());
  const body = sendMessageBody([{ data: { register: { agentCard: v1Card('Saved after a second signal', 'https://second.example.org/a2a') } }, mediaType: 'application/json' }]);
  const registered = await fetch(`${registry.url}/a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.alice}` }, body });
  assert.equal(registered.status, 200);
  const held = await trickle(registry.url);
  registry.child.kill('SIGTERM');
  for (let i = 0; i < 500 && !registry.logs.some((l) => l.msg === 'shutting down: finishing in-flight requests'); i++) await sleep(20);
  await sleep(200);
  const second = performance.now();
  registry.child.kill('SIGINT');
  // The requests are cut at once (below); the exit waits for the index save and storage's close,
  // seconds on a loaded machine, and comes long before the 60 s grace would have run out.
  const code = await Promise.race([registry.exited, sleep(20_000).then(() => 'still running 20 s after the second signal')]);
  assert.equal(code, 0, registry.logs.map((l) => l.msg).join(' | '));
  const heldCut = (await held.closed) - (second - held.opened);
  assert.ok(heldCut < 3000, `the held request was cut off at the second signal (${Math.round(heldCut)} ms after it)`);
  const answer = await grpcCall;
  assert.ok(answer.error, 'the gRPC call was cut, not answered');
  const grpcCut = (await grpcEnded) - second;
  assert.ok(grpcCut < 3000, `the gRPC call was cut at the second signal (${Math.round(grpcCut)} ms after it)`);
  assert.ok(registry.logs.some((l) => l.msg === 'stopping now: requests still in flight are cut off' && l.signal === 'SIGINT'), 'said why');
  assert.ok(registry.logs.some((l) => l.msg === 'search index saved'), 'the index was saved');
  assert.equal(registry.logs.at(-1)?.msg, 'registry stopped');
});

/** Whether something accepts connections at `port` on 127.0.0.1. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

test('`npm start` stopped by a SIGTERM to npm: the registry gets it, drains and stops; its port closes and the data directory\'s lock is released', { timeout: 90_000 }, async () => {
  ensureBuilt();
  const dataDir = tempDir();
  // Its own process group: a registry the signal did not reach (npm's shell does not pass it on)
  // outlives npm, and is killed with the group at the end.
  const npm = spawn('npm', ['start'], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: TOKENS_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  try {
    const logs: Record<string, unknown>[] = [];
    const exited = new Promise<number | string>((resolve) => npm.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
    const outputEnded = new Promise<void>((resolve) => npm.once('close', () => resolve()));
    const listening = new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: npm.stdout! }).on('line', (line) => {
        if (!line.startsWith('{')) return; // npm's own lines ("> a2a-agent-registry@0.1.0 start")
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (entry.msg === 'registry listening') resolve(String(entry.url));
      });
      void exited.then((code) => reject(new Error(`npm start exited (${code}) before the registry listened`)));
    });
    const port = Number(new URL(await listening).port);
    npm.kill('SIGTERM');
    const code = await exited;
    assert.equal(code, 0, `npm ends as the registry does: stopped cleanly (its log: ${logs.map((l) => l.msg).join(' | ')})`);
    await outputEnded;
    assert.ok(logs.some((l) => l.msg === 'shutting down: finishing in-flight requests'), 'the registry was told');
    assert.ok(logs.some((l) => l.msg === 'registry stopped'), 'the registry stopped before npm exited');
    assert.equal(await answers(port), false, 'nothing answers on its port');
    // Another registry may take the data directory now.
    lockForThisProcess(path.join(dataDir, 'registry.db')).close();
  } finally {
    try {
      process.kill(-npm.pid!, 'SIGKILL');
    } catch {
      // the group is gone: nothing outlived npm
    }
  }
});

test('a request never answered is logged as aborted, without a status: a client that went away, and a registration by URL (and a JSON-RPC body not all come) cut by shutdown, which is not the agent\'s FETCH_FAILED', async (t) => {
  // An agent's server that takes its time: the registration's fetch is in flight meanwhile.
  const slow = http.createServer((_req, res) => void setTimeout(() => res.setHeader('content-type', 'application/json').end('{}'), 4000));
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  t.after(() => slow.closeAllConnections());
  t.after(() => slow.close());
  const cardUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/.well-known/agent-card.json`;
  const registry = await spawnRegistry({ REGISTRY_TOKENS: TOKENS_ENV, REGISTRY_FETCH_ALLOW: '127.0.0.1', REGISTRY_SHUTDOWN_GRACE_SECONDS: '1' });
  t.after(() => registry.stop('SIGKILL'));
  const registerByUrl = (signal?: AbortSignal) =>
    fetch(`${registry.url}/a2a/rest/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.alice}` },
      body: JSON.stringify({ message: { messageId: 'by-url', role: 'ROLE_USER', parts: [{ data: { register: { url: cardUrl } } }] } }),
      signal,
    }).catch((err: Error) => err.name);
  const requestLines = () => registry.logs.filter((l) => l.msg === 'request' && l.operation === 'register');

  // The client goes away: it was logged "status": 200, though nothing was answered.
  const gone = new AbortController();
  const abandoned = registerByUrl(gone.signal);
  await sleep(500);
  gone.abort();
  await abandoned;
  for (let i = 0; i < 100 && requestLines().length < 1; i++) await sleep(50);
  const [left] = requestLines();
  assert.equal(left?.aborted, true, JSON.stringify(left));
  assert.equal(left?.status, undefined, JSON.stringify(left));

  // Shutdown cuts a registration whose fetch outlasts the grace period: it was logged "status":
  // 200, REJECTED FETCH_FAILED, blaming the agent's server for the registry's own shutdown.
  await sleep(3800); // the first fetch has ended
  const cut = registerByUrl();
  // And a JSON-RPC request whose body has not all come (it is named once read): it went unlogged.
  const unread = await connect(registry.url);
  unread.socket.write(
    `POST /a2a/jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nX-Request-Id: req-unread-body\r\nContent-Length: 100\r\n\r\n{"jsonrpc"`,
  );
  await sleep(500);
  assert.equal(await registry.stop(), 0);
  await cut;
  const line = requestLines()[1];
  assert.equal(line?.aborted, true, JSON.stringify(line));
  assert.equal(line?.status, undefined, JSON.stringify(line));
  assert.notEqual(line?.errorCode, 'FETCH_FAILED', JSON.stringify(line));
  if (line?.errorCode !== undefined) assert.equal(line.errorCode, 'UNAVAILABLE', JSON.stringify(line));
  await unread.closed;
  const unreadLine = registry.logs.find((l) => l.msg === 'request' && l.requestId === 'req-unread-body');
  assert.equal(unreadLine?.aborted, true, JSON.stringify(unreadLine));
  assert.equal(unreadLine?.status, undefined, JSON.stringify(unreadLine));
});
