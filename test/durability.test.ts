/**
 * What the registry acknowledged survives: a graceful restart (entries and tasks, GetTask after
 * restart) and a SIGKILL in the middle of a stream of registrations. The registry runs as a
 * child process exactly as `npm start` runs it, on a real SQLite file.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Task } from '@a2a-js/sdk';
import { v1Card } from './support/documents.js';
import { errorOf, op, resultOf, sdkClient, stateOf, type WireJson } from './support/client.js';
import { waitFor } from './support/origin-server.js';
import { TOKENS, TOKENS_ENV, spawnRegistry, tempDir } from './support/registry.js';

test('entries and tasks survive a graceful restart', async () => {
  const dataDir = tempDir();
  const env = { REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: TOKENS_ENV };
  const first = await spawnRegistry(env);
  const client = await sdkClient(first.url, { token: TOKENS.alice });
  const task = await op(client, { register: { agentCard: v1Card('Durable Agent', 'https://durable.example.org/a2a') } });
  const { id } = resultOf(task);
  assert.equal(await first.stop('SIGTERM'), 0, 'graceful shutdown exits 0');
  assert.ok(first.logs.some((l) => l.msg === 'registry stopped'));

  const second = await spawnRegistry(env);
  try {
    const again = await sdkClient(second.url, { token: TOKENS.alice });
    const entry = resultOf(await op(again, { get: { id } }));
    assert.equal(entry.name, 'Durable Agent');
    const fetched = Task.toJSON(await again.getTask({ tenant: '', id: task.id, historyLength: undefined })) as WireJson;
    assert.equal(stateOf(fetched), 'TASK_STATE_COMPLETED');
    assert.equal(fetched.artifacts[0].name, 'registration');
    const hits = resultOf(await op(again, { search: { query: 'durable' } })).results;
    assert.ok(hits.some((h: WireJson) => h.id === id), 'the index is rebuilt from storage');
  } finally {
    await second.stop();
  }
});

test('every acknowledged registration survives SIGKILL mid-stream', async () => {
  const dataDir = tempDir();
  const env = { REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: TOKENS_ENV };
  const registry = await spawnRegistry(env);
  const client = await sdkClient(registry.url, { token: TOKENS.alice });
  const acknowledged: string[] = [];
  let stop = false;
  const writers = Array.from({ length: 4 }, async (_, w) => {
    for (let i = 0; !stop; i++) {
      try {
        const task = await op(client, { register: { agentCard: v1Card(`Crash ${w}-${i}`, `https://crash.example.org/${w}/${i}`) } });
        acknowledged.push(resultOf(task).id);
      } catch {
        return; // the server died: this request was never acknowledged
      }
    }
  });
  // Once the first registration is acknowledged (a loaded machine can take seconds to get there),
  // a pseudo-random moment between 300 and 1,300 ms later, for variety but bounded.
  await waitFor(() => acknowledged.length > 0, 'a first acknowledged registration', 60_000);
  const delay = 300 + Math.floor(Math.random() * 1000);
  await new Promise((r) => setTimeout(r, delay));
  registry.child.kill('SIGKILL');
  await registry.exited;
  stop = true;
  await Promise.all(writers);
  assert.ok(acknowledged.length > 0, 'some registrations were acknowledged before the kill');

  const restarted = await spawnRegistry(env);
  try {
    const reader = await sdkClient(restarted.url, { token: TOKENS.alice });
    for (const id of acknowledged) {
      const task = await op(reader, { get: { id } });
      assert.equal(stateOf(task), 'TASK_STATE_COMPLETED', `acknowledged entry ${id} is missing: ${JSON.stringify(stateOf(task) === 'TASK_STATE_REJECTED' ? errorOf(task) : task)}`);
    }
    const ready = await fetch(`${restarted.url}/readyz`);
    assert.equal(ready.status, 200);
  } finally {
    await restarted.stop();
  }
});

test('a second registry on the same SQLite data directory refuses to start, naming it (each searched only its own writes); after the first crashes, the next one starts', async () => {
  const dataDir = tempDir();
  const env = { REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: TOKENS_ENV };
  const first = await spawnRegistry(env);
  try {
    const client = await sdkClient(first.url, { token: TOKENS.alice });
    const { id } = resultOf(await op(client, { register: { agentCard: v1Card('Lone Agent', 'https://lone.example.org/a2a') } }));
    await assert.rejects(spawnRegistry(env), (error: Error) => {
      assert.match(error.message, /exited \(1\)/);
      assert.match(error.message, /another registry process is already serving the SQLite database \S+registry\.db/);
      assert.match(error.message, /another REGISTRY_DATA_DIR, or run several replicas on PostgreSQL \(DATABASE_URL\)/);
      return true;
    });
    const hits = resultOf(await op(client, { search: { query: 'lone' } })).results;
    assert.deepEqual(hits.map((h: WireJson) => h.id), [id], 'the first one goes on serving');
    // A crash leaves no stale lock: the operating system releases it with the process.
    first.child.kill('SIGKILL');
    await first.exited;
    const next = await spawnRegistry(env);
    try {
      const reader = await sdkClient(next.url);
      assert.deepEqual(resultOf(await op(reader, { search: { query: 'lone' } })).results.map((h: WireJson) => h.id), [id]);
    } finally {
      await next.stop();
    }
  } finally {
    first.child.kill('SIGKILL');
  }
});
