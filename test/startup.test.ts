/**
 * Issue 22 (1): the registry listens at once. Over a store with enough entries that loading the
 * search index takes observable time: /healthz answers 200 and /readyz 503 ("loading the search
 * index (n of m entries)") while it loads; the card is served; searches on every door are
 * refused as retryable (503 + Retry-After, a JSON-RPC error with reason STARTING_UP), never
 * answered from part of the index; a registration committed during the load is acknowledged and
 * is in search once it is ready.
 *
 * And `node <path>/dist/src/main.js` starts the registry however that path is spelt: through a
 * symbolic link, with a space in it, or without the extension (it used to exit 0 at once, silently).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/observability/logger.js';
import { startRegistry, type RunningRegistry } from '../src/server.js';
import { createStore } from '../src/storage/create-store.js';
import { BUILT_MAIN, REPO_ROOT, ensureBuilt } from './support/built.js';
import { v1Card } from './support/documents.js';
import { eventually } from './support/eventually.js';
import { freePort } from './support/ports.js';
import { op, resultOf, sdkClient } from './support/client.js';
import { rawPost, sendMessageBody } from './support/raw-http.js';
import { TOKENS, TOKENS_ENV, removeTempDir, startTestRegistry, tempDir } from './support/registry.js';
import { actor, entryWrite } from './support/store-fixtures.js';
import { EventLog, watch } from './support/watch-stream.js';

/** Enough that loading takes well over the few requests made meanwhile (about a second or more on a CI machine). */
const STORED = 20_000;

const dataDir = tempDir('a2a-registry-startup-');
let registry: RunningRegistry | undefined;
after(async () => {
  await registry?.close();
  removeTempDir(dataDir);
});

async function fillStore(): Promise<void> {
  const store = createStore({ dataDir });
  await store.open();
  const admin = actor('admin', true);
  for (let i = 0; i < STORED; i += 5000) {
    await Promise.all(
      Array.from({ length: Math.min(5000, STORED - i) }, (_, j) => store.upsert(entryWrite('agent', `https://a${i + j}.example.org/a2a`, '1', `Stored agent ${i + j}`), admin)),
    );
  }
  await store.close();
}

async function readiness(url: string): Promise<{ status: number; reason?: string }> {
  const res = await fetch(`${url}/readyz`);
  const body = (await res.json()) as { reason?: string };
  return { status: res.status, reason: body.reason };
}

const searchPart = (query: string) => ({ data: { search: { query } }, mediaType: 'application/json' });

/** A watch opened on a registry over the data directory, which then stops cleanly (the watch's lease released). */
async function openWatchAndStop(): Promise<string> {
  // No saved index: the restart below must build it from the entries (the load this test watches).
  const first = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir, REGISTRY_INDEX_SNAPSHOT_SECONDS: '0' });
  const log = watch(await sdkClient(first.url, { token: TOKENS.bob }), { filter: { tags: ['while-loading'] } });
  try {
    await log.waitFor((e) => e.artifactUpdate?.artifact?.name === 'watch-results', 'initial matches');
    return (await log.waitFor((e) => e.task !== undefined, 'task')).task.id as string;
  } finally {
    log.disconnect();
    await first.close();
  }
}

test('listens before the index is loaded: health at once, readiness says loading, searches refused as retryable, writes kept', { timeout: 120_000 }, async () => {
  const watchId = await openWatchAndStop();
  await fillStore();
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', REGISTRY_TOKENS: TOKENS_ENV, REGISTRY_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  registry = await startRegistry(config, createLogger('silent'));
  const { url } = registry;
  let loaded = false;
  void registry.ready.then(() => (loaded = true));

  const health = await fetch(`${url}/healthz`);
  assert.equal(health.status, 200);
  const loading = await readiness(url);
  assert.equal(loading.status, 503, 'not ready while the index loads');
  assert.match(loading.reason ?? '', new RegExp(`^loading the search index \\(\\d+ of ${STORED} entries\\)$`));

  const card = await fetch(`${url}/.well-known/agent-card.json`);
  assert.equal(card.status, 200, 'the card is served while loading');

  // Searches: a retryable refusal on every door, not an answer from part of the index.
  const jsonRpc = await rawPost(`${url}/a2a/jsonrpc`, sendMessageBody([searchPart('stored agent')]));
  const rpcError = jsonRpc.json!.error as { code: number; message: string; data: { reason: string }[] };
  assert.ok(rpcError, `JSON-RPC answers an error, not a task: ${jsonRpc.text.slice(0, 200)}`);
  assert.equal(rpcError.data[0]!.reason, 'STARTING_UP');
  assert.match(rpcError.message, /starting up: loading the search index \(\d+ of 20000 entries\).*retry/);
  assert.equal(jsonRpc.headers.get('retry-after'), '2');
  const rest = await rawPost(
    `${url}/a2a/rest/message:send`,
    JSON.stringify({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [searchPart('stored agent')] } }),
  );
  assert.equal(rest.status, 503);
  assert.equal(rest.json!.error.status, 'UNAVAILABLE');
  assert.equal(rest.headers.get('retry-after'), '2');
  const ard = await rawPost(`${url}/search`, JSON.stringify({ query: { text: 'stored agent' } }));
  assert.equal(ard.status, 503);
  assert.equal(ard.headers.get('retry-after'), '2');
  assert.match(ard.text, /starting up/);

  // A registration during the load is acknowledged (stored, and published to the index through the feed).
  const registered = await rawPost(
    `${url}/a2a/jsonrpc`,
    sendMessageBody([{ data: { register: { agentCard: v1Card('Zanzibar Loading Agent', 'https://zanzibar.example.org/a2a') } }, mediaType: 'application/json' }]),
    { headers: { authorization: `Bearer ${TOKENS.alice}` } },
  );
  assert.equal(registered.json!.result?.task?.status?.state ?? registered.json!.result?.status?.state, 'TASK_STATE_COMPLETED', registered.text.slice(0, 300));
  assert.equal(loaded, false, `the index loaded before the checks above ran: raise STORED (${STORED})`);
  assert.equal((await readiness(url)).status, 503);
  // A client resuming its watch now: the watch cannot run before the index is loaded, and must
  // not be dropped for it (it was, once: its matches failed with STARTING_UP, taken for a refusal).
  const bob = await sdkClient(url, { token: TOKENS.bob });
  const early = new EventLog((signal) => bob.resubscribeTask({ tenant: '', id: watchId }, { signal }));
  await early.waitFor((e) => e.task !== undefined, 'the task, resumed during the load', 10_000);

  await registry.ready;
  assert.deepEqual(await readiness(url), { status: 200, reason: undefined });
  assert.equal(registry.service.indexSize, STORED + 1, 'every stored entry and the one registered during the load');
  const found = await rawPost(`${url}/a2a/jsonrpc`, sendMessageBody([searchPart('zanzibar')]));
  const task = found.json!.result?.task ?? found.json!.result;
  assert.equal(task.status.state, 'TASK_STATE_COMPLETED', found.text.slice(0, 300));
  const results = task.artifacts[0].parts[0].data.results as { name: string }[];
  assert.deepEqual(
    results.map((r) => r.name),
    ['Zanzibar Loading Agent'],
  );
  const all = await rawPost(`${url}/a2a/jsonrpc`, sendMessageBody([searchPart('stored agent 19999')]));
  assert.ok(((all.json!.result?.task ?? all.json!.result).artifacts[0].parts[0].data.total as number) >= 1, 'the last stored entry is searchable');

  // Once loaded, the watch runs again: resumed, it reports a new match.
  early.disconnect();
  const resumed = new EventLog((signal) => bob.resubscribeTask({ tenant: '', id: watchId }, { signal }));
  try {
    await resumed.waitFor((e) => e.task !== undefined, 'the task, resumed once loaded');
    const alice = await sdkClient(url, { token: TOKENS.alice });
    const card = v1Card('Loading Watch Agent', 'https://loading-watch.example.org/a2a');
    card.skills[0]!.tags = ['while-loading'];
    const added = resultOf(await op(alice, { register: { agentCard: card } }));
    const event = await resumed.waitFor((e) => e.artifactUpdate?.artifact?.name === 'watch-event' && JSON.stringify(e).includes(added.id as string), 'the new match', 10_000);
    assert.ok(event);
  } finally {
    resumed.disconnect();
  }
});

/** Runs `node <script>` (the built registry); resolves once it answers /healthz, or fails with how it exited. */
async function startedAs(script: string): Promise<void> {
  const port = await freePort();
  const child = spawn(process.execPath, [script], {
    cwd: tempDir('a2a-registry-entry-cwd-'),
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', REGISTRY_DATA_DIR: tempDir(), REGISTRY_TOKENS: TOKENS_ENV },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let exited: string | undefined;
  child.on('exit', (code, signal) => (exited = `exited (${code ?? signal}) without listening: ${stderr}`));
  try {
    await eventually(async () => {
      if (exited) throw new Error(`node ${script} ${exited}`);
      return (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.status === 200;
    }, `node ${script} answers /healthz`, 60_000);
  } finally {
    child.kill('SIGKILL');
  }
}

test('`node <path>/dist/src/main.js` starts the registry through a symbolic link, from a folder with a space, or without the extension', { timeout: 180_000 }, async () => {
  ensureBuilt();
  const links = tempDir('a2a-registry-entry-');
  fs.symlinkSync(REPO_ROOT, path.join(links, 'current'));
  await startedAs(path.join(links, 'current', BUILT_MAIN));
  // A real folder with a space in its path (a link would be followed to the checkout's): the
  // build copied there, beside links to what it reads from the package.
  const spaced = path.join(links, 'with space', 'registry');
  fs.mkdirSync(spaced, { recursive: true });
  fs.cpSync(path.join(REPO_ROOT, 'dist'), path.join(spaced, 'dist'), { recursive: true });
  for (const name of ['package.json', 'node_modules', 'schemas', 'agent-card.json']) fs.symlinkSync(path.join(REPO_ROOT, name), path.join(spaced, name));
  await startedAs(path.join(spaced, BUILT_MAIN));
  await startedAs(path.join(REPO_ROOT, BUILT_MAIN.replace(/\.js$/, '')));
});
