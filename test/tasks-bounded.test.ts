/**
 * Tasks and the change log stay bounded (issue 12, point 2): the in-memory task store's caps
 * (count, bytes, time to live), durable tasks pruned after their retention, the change log
 * trimmed (a replica behind the trimmed point reloads its index and signals a resync), freed
 * space returned (SQLite), and databases written by earlier releases upgraded (their read and
 * anonymous tasks dropped). On SQLite and PostgreSQL where storage is involved.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { ListTasksRequest, Message, Task, TaskState } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { shareJsonText } from '../src/lib/shared-json.js';
import { ChangeFeed } from '../src/registry/change-feed.js';
import { IndexFollower } from '../src/registry/index-follower.js';
import { PageTokens } from '../src/registry/page-token.js';
import { SearchCache } from '../src/registry/search-cache.js';
import { RegistryService } from '../src/registry/service.js';
import { createSearchIndex } from '../src/search/index.js';
import { POSTGRES_MIGRATIONS, PostgresStore } from '../src/storage/postgres/index.js';
import { SQLITE_MIGRATIONS, SqliteStore } from '../src/storage/sqlite/index.js';
import { UnstorableTextError } from '../src/storage/common.js';
import type { RegistryStore, TaskRow } from '../src/storage/types.js';
import { BoundedTaskMemory, footprintOf } from '../src/tasks/bounded-memory.js';
import { RegistryTaskStore } from '../src/tasks/registry-task-store.js';
import { fromTaskRow, toTaskRow } from '../src/tasks/task-rows.js';
import { createDocumentValidator } from '../src/validation/index.js';
import { NO_TRUSTED_KEYS, createSignatureVerifier } from '../src/validation/signature.js';
import { createLogger } from '../src/observability/logger.js';
import { currentScope } from '../src/observability/request-scope.js';
import { v1Card } from './support/documents.js';
import { op, resultOf, sdkClient, stream, streamEventJson, type WireJson } from './support/client.js';
import { storageEngines } from './support/engines.js';
import { TOKENS, startTestRegistry, tempDir } from './support/registry.js';
import { sendWithPush, webhook } from './support/watch-stream.js';
import { actor, entryWrite } from './support/store-fixtures.js';
import { heapAfterGc } from './support/heap.js';

const sampleTask = (id: string, text = 'x') =>
  Task.fromJSON({ id, contextId: 'c', status: { state: 'TASK_STATE_COMPLETED', timestamp: new Date().toISOString() }, artifacts: [{ artifactId: 'a', parts: [{ text }] }], history: [{ messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] }] });
/** The sample task as first saved, with the timestamp the stored one got. */
const sampleTaskWithId = (id: string, stored: Task) => {
  const task = sampleTask(id, 'original');
  task.status!.timestamp = stored.status!.timestamp;
  return task;
};

/** Waits for a condition (no fixed sleeps): polls every 25 ms up to `ms`. */
async function eventually(ms: number, check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('the in-memory task store', () => {
  const put = (memory: BoundedTaskMemory, id: string, owner = 'alice', text = 'x') => {
    const task = sampleTask(id, text);
    memory.put({ tenant: '', owner, id, task, updated: Date.now(), durable: false, ...footprintOf(task) });
  };

  test('keeps at most maxTasks, oldest save out first', () => {
    const memory = new BoundedTaskMemory({ maxTasks: 3, maxBytes: 1e9, ttlMs: 60_000 });
    for (const id of ['a', 'b', 'c', 'd']) put(memory, id);
    assert.equal(memory.size, 3);
    assert.equal(memory.get('', 'alice', 'a'), undefined);
    put(memory, 'b'); // saved again: now the newest
    put(memory, 'e');
    assert.deepEqual(memory.scope('', 'alice').map((h) => h.id).sort(), ['b', 'd', 'e']);
  });

  test('keeps at most about maxBytes, and counts replaced tasks once', () => {
    const one = footprintOf(sampleTask('t0', 'y'.repeat(1000))).bytes;
    // Its text, and the objects around it: task, status, artifact, parts, message (a few hundred bytes).
    assert.ok(one > 1000 && one < 3000, `a task of 1,000 characters is about that many bytes and its objects (${one})`);
    // Held, it also takes its place in the memory (its record and key).
    const probe = new BoundedTaskMemory({ maxTasks: 1000, maxBytes: 1e9, ttlMs: 60_000 });
    put(probe, 't0', 'alice', 'y'.repeat(1000));
    const each = probe.bytes;
    assert.ok(each > one && each < one + 500, `${each} for a task of ${one}`);
    const memory = new BoundedTaskMemory({ maxTasks: 1000, maxBytes: each * 3, ttlMs: 60_000 });
    for (let i = 0; i < 10; i++) put(memory, `t${i}`, 'alice', 'y'.repeat(1000));
    assert.equal(memory.size, 3);
    assert.ok(memory.bytes <= each * 3);
    put(memory, 't9', 'alice', 'y'.repeat(1000));
    assert.equal(memory.size, 3);
    assert.ok(memory.bytes <= each * 3);
    // Binary parts count by their bytes, not element by element.
    const binary = footprintOf({ raw: new Uint8Array(5000) }).bytes;
    assert.ok(binary >= 5000 && binary < 5300, String(binary));
  });

  test('a kept search answer the tasks share is counted once while any of them holds it, with its JSON; not by its JSON length alone', () => {
    const hits = Array.from({ length: 20 }, (_, i) => ({ id: `0000000${i}`, kind: 'agent' as const, name: `Agent ${i}`, description: `Agent ${i} translates invoices.`, score: 1.25 - i / 100, match: { type: 'agent' as const, name: `Agent ${i}`, fields: ['name'] }, interfaces: [{ url: `https://a${i}.example.org/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }], verified: false }));
    const answer = new SearchCache(4, 10_000_000).set('invoices', {}, 1, { results: hits, total: 20 });
    shareJsonText(answer, '1. Agent 0 [agent] (name) https://a0.example.org/a2a');
    const searchTask = (id: string) => ({
      id,
      contextId: 'c',
      status: { state: 'TASK_STATE_COMPLETED', timestamp: new Date().toISOString() },
      artifacts: [{ artifactId: 'a', name: 'search-results', parts: [{ text: '1. Agent 0 [agent] (name) https://a0.example.org/a2a' }, { data: answer, mediaType: 'application/json' }] }],
      history: [{ messageId: 'm', role: 'ROLE_USER', parts: [{ data: { search: { query: 'invoices' } }, mediaType: 'application/json' }] }],
    });
    const own = footprintOf(searchTask('s1'));
    assert.deepEqual(own.shared, [answer], 'the answer is left out of the walk, to be counted once');
    assert.ok(own.bytes < 2000, `the task's own objects: ${own.bytes}`);
    const memory = new BoundedTaskMemory({ maxTasks: 100, maxBytes: 1e9, ttlMs: 60_000 });
    const hold = (id: string) => memory.put({ tenant: '', owner: 'alice', id, task: searchTask(id) as unknown as Task, updated: Date.now(), durable: false, ...footprintOf(searchTask(id)) });
    hold('s1');
    const first = memory.bytes;
    // The parsed answer (objects, slots, strings) and its JSON's bytes: about three times its JSON's length.
    const json = JSON.stringify(answer).length;
    assert.ok(first > 2.5 * json, `one search's task counts ${first} bytes for an answer of ${json} bytes of JSON`);
    hold('s2');
    hold('s3');
    const each = (memory.bytes - first) / 2;
    assert.ok(each < own.bytes + 500, `a task sharing the answer counts its own objects only (${each})`);
    memory.remove('', 'alice', 's1');
    memory.remove('', 'alice', 's3');
    assert.equal(memory.bytes, first, 'the answer is counted while a task holds it');
    memory.remove('', 'alice', 's2');
    assert.equal(memory.bytes, 0);
  });

  test('the bytes counted for tasks held in memory are about the memory they hold (distinct searches over HTTP, each answer held by its task)', async (t) => {
    const registry = await startTestRegistry();
    t.after(() => registry.close());
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    for (let i = 0; i < 30; i++) await op(alice, { register: { agentCard: v1Card(`Memory ${i} Agent`, `https://memory-${i}.example.org/a2a`) } });
    // Each query is new (a miss of the search cache): its answer is made for it and held by its task, and by the cache.
    const search = async (from: number, count: number) => {
      for (let i = from; i < from + count; i++) assert.equal((await op(alice, { search: { query: `invoices agent ${i}` } })).status.state, 'TASK_STATE_COMPLETED');
    };
    await search(0, 50);
    const held = () => {
      heapAfterGc();
      const usage = process.memoryUsage();
      return { real: usage.heapUsed + usage.arrayBuffers, counted: registry.core.tasks.memoryUsage.bytes };
    };
    const before = held();
    await search(50, 400);
    const after = held();
    assert.equal(registry.core.tasks.memoryUsage.tasks, 450, 'every search is held (the registrations are durable, not among them)');
    const [real, counted] = [after.real - before.real, after.counted - before.counted];
    t.diagnostic(`400 tasks of searches: ${(real / 1e6).toFixed(1)} MB held, ${(counted / 1e6).toFixed(1)} MB counted`);
    // Counted by JSON length, their JSON in slices of Buffer's pool, these held 24.7 MB counted as 5.8 MB.
    assert.ok(real < 1.5 * counted && real > 0.6 * counted, `400 tasks of searches hold ${(real / 1e6).toFixed(1)} MB, counted ${(counted / 1e6).toFixed(1)} MB`);
  });

  test('forgets tasks after their time to live, on access and on a sweep', () => {
    let now = 1_000_000;
    const memory = new BoundedTaskMemory({ maxTasks: 100, maxBytes: 1e9, ttlMs: 1000 }, () => now);
    put(memory, 'a');
    put(memory, 'b', 'bob');
    now += 500;
    put(memory, 'c');
    now += 600; // a and b expired, c has 400 ms left
    assert.equal(memory.get('', 'alice', 'a'), undefined);
    assert.deepEqual(memory.scope('', 'alice').map((h) => h.id), ['c']);
    memory.sweep();
    assert.equal(memory.size, 1);
    now += 500;
    memory.sweep();
    assert.equal(memory.size, 0);
    assert.equal(memory.bytes, 0);
  });

  test('a time to live is counted on a clock that only goes forward: a step forward of the wall clock (NTP) does not expire every task at once', (t) => {
    const realNow = Date.now;
    t.after(() => void (Date.now = realNow));
    let step = 0;
    Date.now = () => realNow() + step;
    const memory = new BoundedTaskMemory({ maxTasks: 100, maxBytes: 1e9, ttlMs: 60_000 });
    put(memory, 'a');
    step = 3_600_000;
    assert.equal(memory.get('', 'alice', 'a')?.id, 'a', 'an hour ahead on the wall clock, the task saved a moment ago is still there');
    memory.sweep();
    assert.equal(memory.size, 1);
  });

  test('with byOwner, over a bound the owner holding the most loses its oldest task: tasks over the count, bytes over the bytes', () => {
    const byCount = new BoundedTaskMemory({ maxTasks: 4, maxBytes: 1e9, ttlMs: 60_000, byOwner: true });
    put(byCount, 'a1');
    put(byCount, 'a2');
    for (let i = 0; i < 10; i++) put(byCount, `b${i}`, 'bob');
    assert.deepEqual(byCount.scope('', 'alice').map((h) => h.id), ['a1', 'a2'], "bob's flood pushes out his own tasks");
    assert.deepEqual(byCount.scope('', 'bob').map((h) => h.id), ['b8', 'b9']);
    // Two holding as much: the older task goes.
    put(byCount, 'c0', 'carol');
    assert.deepEqual(byCount.all().map((h) => h.id), ['a2', 'b8', 'b9', 'c0']);

    const probe = new BoundedTaskMemory({ maxTasks: 1000, maxBytes: 1e9, ttlMs: 60_000 });
    put(probe, 'big', 'bob', 'y'.repeat(10_000));
    const big = probe.bytes;
    const byBytes = new BoundedTaskMemory({ maxTasks: 1000, maxBytes: big * 3, ttlMs: 60_000, byOwner: true });
    for (let i = 0; i < 5; i++) put(byBytes, `a${i}`);
    for (let i = 0; i < 6; i++) put(byBytes, `b${i}`, 'bob', 'y'.repeat(10_000));
    assert.equal(byBytes.scope('', 'alice').length, 5, "alice's five small tasks stay: bob holds the most bytes");
    assert.ok(byBytes.bytes <= big * 3);
    assert.deepEqual(byBytes.scope('', 'bob').map((h) => h.id), ['b4', 'b5'], 'bob keeps his newest');
    for (const held of byBytes.all()) byBytes.remove('', held.owner, held.id);
    assert.equal(byBytes.size, 0);
    assert.equal(byBytes.bytes, 0);

    // A large task of a caller holding nothing else, beside another's many small ones: it fits,
    // and is kept (it was pushed out by its own saving: its owner held the most bytes).
    const small = new BoundedTaskMemory({ maxTasks: 1000, maxBytes: 1e9, ttlMs: 60_000 });
    put(small, 's', 'bob', 'y'.repeat(1000));
    const mixed = new BoundedTaskMemory({ maxTasks: 1000, maxBytes: big + 3 * small.bytes, ttlMs: 60_000, byOwner: true });
    for (let i = 0; i < 4; i++) put(mixed, `b${i}`, 'bob', 'y'.repeat(1000));
    put(mixed, 'large', 'alice', 'y'.repeat(10_000));
    assert.deepEqual(mixed.scope('', 'alice').map((h) => h.id), ['large'], 'the task just saved is kept');
    assert.ok(mixed.bytes <= big + 3 * small.bytes);
    assert.ok(mixed.scope('', 'bob').length < 4, 'bob lost a task instead');
    // Alone over the bound, it goes first, as before, and nobody else's task with it.
    const tiny = new BoundedTaskMemory({ maxTasks: 1000, maxBytes: 4 * small.bytes, ttlMs: 60_000, byOwner: true });
    for (let i = 0; i < 3; i++) put(tiny, `b${i}`, 'bob', 'y'.repeat(1000));
    put(tiny, 'huge', 'alice', 'y'.repeat(10_000));
    assert.deepEqual(tiny.all().map((h) => h.id), ['b0', 'b1', 'b2']);
  });

  test('its caps and time to live are configuration, end to end', async (t) => {
    const registry = await startTestRegistry({ REGISTRY_TASK_MEMORY_COUNT: '3', REGISTRY_TASK_MEMORY_TTL_SECONDS: '1' });
    t.after(() => registry.close());
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const searches: WireJson[] = [];
    for (let i = 0; i < 5; i++) searches.push(await op(alice, { search: { query: `bounded ${i}` } }));
    const listed = await alice.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 50, pageToken: '', statusTimestampAfter: undefined });
    assert.deepEqual(new Set(listed.tasks.map((x) => x.id)), new Set(searches.slice(2).map((s) => s.id)), 'the three newest are kept');
    await assert.rejects(alice.getTask({ tenant: '', id: searches[0]!.id, historyLength: undefined }), /not found/i);
    await eventually(5000, async () => (await alice.getTask({ tenant: '', id: searches[4]!.id, historyLength: undefined }).catch(() => undefined)) === undefined, 'the newest task expires after 1 s');
    registry.core.tasks.sweep();
    assert.deepEqual(registry.core.tasks.memoryUsage, { tasks: 0, bytes: 0 });

    // One principal's flood of reads pushes out its own tasks, not another's (GetTask still finds it).
    const bob = await sdkClient(registry.url, { token: TOKENS.bob });
    const mine = await op(alice, { search: { query: 'kept for alice' } });
    for (let i = 0; i < 5; i++) await op(bob, { search: { query: `flood ${i}` } });
    assert.equal((await alice.getTask({ tenant: '', id: mine.id, historyLength: undefined })).id, mine.id);
    assert.equal(registry.core.tasks.memoryUsage.tasks, 3);
  });
});

describe('durable tasks and the memory of reads', () => {
  test("accepted writes neither count against REGISTRY_TASK_MEMORY_COUNT nor push a read's task out; those the cache let go are read back", async (t) => {
    const registry = await startTestRegistry({ REGISTRY_TASK_MEMORY_COUNT: '5' });
    t.after(() => registry.close());
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const get = (id: string) => alice.getTask({ tenant: '', id, historyLength: undefined }).then((task) => task.id, () => undefined);
    const searches: string[] = [];
    for (let i = 0; i < 5; i++) searches.push((await op(alice, { search: { query: `kept ${i}` } })).id);
    for (const id of searches) assert.equal(await get(id), id);
    // More registrations than the durable tasks' cache holds (here 5, the memory's count).
    const registrations: string[] = [];
    for (let i = 0; i < 7; i++) {
      const registered = await op(alice, { register: { agentCard: v1Card(`Cached ${i}`, `https://cached-${i}.example.org/a2a`) } });
      assert.equal(registered.status.state, 'TASK_STATE_COMPLETED');
      registrations.push(registered.id);
    }
    for (const id of searches) assert.equal(await get(id), id, `search ${searches.indexOf(id)} is still held`);
    assert.equal(registry.core.tasks.memoryUsage.tasks, 5, 'the memory of reads holds the five searches');
    assert.equal(registry.core.tasks.cacheUsage.tasks, 5, 'the cache holds the five newest registrations');
    const metrics = await (await fetch(`${registry.url}/metrics`)).text();
    assert.match(metrics, /^registry_tasks_in_memory 5$/m);
    assert.match(metrics, /^registry_durable_tasks_cached 5$/m, 'an operator sees the cache of durable tasks too');
    const cachedBytes = Number(/^registry_durable_task_cache_bytes (\d+)$/m.exec(metrics)?.[1]);
    assert.ok(cachedBytes > 5 * 500 && cachedBytes === registry.core.tasks.cacheUsage.bytes, String(cachedBytes));
    for (const id of registrations) assert.equal(await get(id), id, `registration ${registrations.indexOf(id)}`);
    const listed = await alice.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 50, pageToken: '', statusTimestampAfter: undefined });
    assert.deepEqual(new Set(listed.tasks.map((x) => x.id)), new Set([...searches, ...registrations]));
    assert.equal(listed.totalSize, 12);
    // The one read back (the oldest) is cached again; searches are still not pushed out.
    assert.equal(registry.core.tasks.cacheUsage.tasks, 5);
    for (const id of searches) assert.equal(await get(id), id);
  });

  test('a write that changed nothing stores no task: a registration answered "changed": false is held as a read\'s, so re-sending a card cannot fill the task table', async (t) => {
    const registry = await startTestRegistry();
    t.after(() => registry.close());
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const card = v1Card('Unchanged Agent', 'https://unchanged.example.org/a2a');
    card.description += ` ${'y'.repeat(6000)}`;
    const first = await op(alice, { register: { agentCard: card } });
    assert.equal(resultOf(first).changed, true);
    const again: string[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await op(alice, { register: { agentCard: card } });
      assert.equal(answer.status.state, 'TASK_STATE_COMPLETED');
      assert.equal(resultOf(answer).changed, false);
      again.push(answer.id);
    }
    const scope = { tenant: '', owner: 'alice' };
    const stored = await registry.store.tasks.list(scope, { limit: 100, withArtifacts: false, withHistory: false });
    // Each re-sent 8 KB card added a row holding the whole document.
    assert.deepEqual(stored.rows.map((row) => row.id), [first.id], 'only the write that changed something is stored');
    for (const id of again) assert.equal(await registry.store.tasks.load(scope, id), undefined);
    assert.equal(registry.core.tasks.memoryUsage.tasks, 5, 'held as reads are, within REGISTRY_TASK_MEMORY_*');
    // The client still fetches and lists them, as a read's.
    for (const id of again) assert.equal((await alice.getTask({ tenant: '', id, historyLength: undefined })).status?.state, TaskState.TASK_STATE_COMPLETED);
    const listed = await alice.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 50, pageToken: '', statusTimestampAfter: undefined });
    assert.deepEqual(new Set(listed.tasks.map((x) => x.id)), new Set([first.id, ...again]));
    // Unregistering an entry that is not there writes nothing either (a refusal, in memory).
    const absent = await op(alice, { unregister: { id: 'no-such-entry' } });
    assert.equal(absent.status.state, 'TASK_STATE_REJECTED');
    assert.equal((await registry.store.tasks.list(scope, { limit: 100, withArtifacts: false, withHistory: false })).total, 1);
  });

  test('a durable task read back from the database is saved to it again, though the cache let it go in between', async () => {
    const saved: TaskRow[] = [];
    const stored = new Map<string, TaskRow>();
    const records = {
      save: async (row: TaskRow) => (saved.push(row), stored.set(row.id, row), true),
      load: async (_scope: unknown, id: string) => stored.get(id),
      remove: async () => undefined,
      list: async () => ({ rows: [], total: 0 }),
      prune: async () => 0,
      existing: async () => [],
    };
    const store = new RegistryTaskStore(records, { maxTasks: 1, maxBytes: 1e6, ttlMs: 60_000 });
    const context = new ServerCallContext({ user: { isAuthenticated: true, userName: 'alice' } });
    const working = (id: string) => Task.fromJSON({ id, contextId: 'c', status: { state: 'TASK_STATE_WORKING', timestamp: new Date().toISOString() } });
    // A watch's task, stored by an earlier process: read back (the SDK loads before it saves)...
    stored.set('w1', toTaskRow({ tenant: '', owner: 'alice' }, working('w1')));
    const loaded = (await store.load('w1', context))!;
    // ...then pushed out of the cache (one task here) by another durable task read back.
    stored.set('w2', toTaskRow({ tenant: '', owner: 'alice' }, working('w2')));
    await store.load('w2', context);
    loaded.status = { ...loaded.status!, state: TaskState.TASK_STATE_CANCELED };
    await store.save(loaded, context);
    assert.deepEqual(saved.map((row) => [row.id, row.status_state]), [['w1', 'TASK_STATE_CANCELED']]);
  });

  test('a value the storage cannot hold (a U+0000 on PostgreSQL) is answered as invalid params, not as an internal error, whatever store method meets it', async () => {
    const refuse = async (): Promise<never> => {
      throw new UnstorableTextError('a\u0000b');
    };
    const records = { save: refuse, load: refuse, remove: async () => undefined, list: refuse, prune: async () => 0, existing: async () => [] };
    const store = new RegistryTaskStore(records, { maxTasks: 10, maxBytes: 1e6, ttlMs: 60_000 });
    const context = new ServerCallContext({ user: { isAuthenticated: true, userName: 'alice' } });
    const invalidParams = (error: unknown): boolean => {
      assert.ok(error instanceof RequestMalformedError, String(error));
      assert.match(error.message, /holds the character U\+0000 \(NUL\) at position 1, which the registry's storage \(PostgreSQL\) cannot hold: remove it/);
      return true;
    };
    await assert.rejects(store.load('a\u0000b', context), invalidParams);
    await assert.rejects(store.list(ListTasksRequest.fromJSON({ contextId: 'a\u0000b' }), context), invalidParams);
    store.keepDurably('w1');
    await assert.rejects(store.save(Task.fromJSON({ id: 'w1', contextId: 'a\u0000b', status: { state: 'TASK_STATE_WORKING' } }), context), invalidParams);
  });
});

describe('anonymous tasks', () => {
  test("an anonymous caller's finished tasks are not kept in memory (no later request can reach them); a principal's are", async (t) => {
    const registry = await startTestRegistry();
    t.after(() => registry.close());
    const anonymous = await sdkClient(registry.url);
    for (let i = 0; i < 3; i++) assert.equal((await op(anonymous, { search: { query: `anonymous ${i}` } })).status.state, 'TASK_STATE_COMPLETED');
    assert.deepEqual(registry.core.tasks.memoryUsage, { tasks: 0, bytes: 0 });
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const mine = await op(alice, { search: { query: 'kept' } });
    assert.equal(registry.core.tasks.memoryUsage.tasks, 1);
    assert.equal((await alice.getTask({ tenant: '', id: mine.id, historyLength: undefined })).id, mine.id);
  });
});

describe('tasks in memory are copies', () => {
  test('edits to a saved or a loaded task (the way the SDK edits them) do not reach the stored one', async () => {
    const records = { save: async () => assert.fail('not durable'), load: async () => undefined, remove: async () => undefined, list: async () => ({ rows: [], total: 0 }), prune: async () => 0, existing: async () => [] };
    const store = new RegistryTaskStore(records, { maxTasks: 10, maxBytes: 1e6, ttlMs: 60_000 });
    const context = new ServerCallContext({ user: { isAuthenticated: true, userName: 'alice' } });
    const task = sampleTask('t1', 'original');
    await store.save(task, context);
    // What the SDK does to a task it holds: reassign fields, push artifacts, reassign an artifact's parts.
    task.status = { ...task.status!, state: TaskState.TASK_STATE_FAILED };
    task.history = [];
    task.artifacts[0]!.parts = [];
    task.artifacts.push({ artifactId: 'b', name: 'late', description: '', parts: [], metadata: undefined, extensions: [] });
    const loaded = (await store.load('t1', context))!;
    assert.equal(loaded.status!.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(loaded.artifacts.length, 1);
    assert.equal(loaded.artifacts[0]!.parts.length, 1);
    loaded.artifacts[0]!.parts = [...loaded.artifacts[0]!.parts, ...loaded.artifacts[0]!.parts];
    loaded.artifacts[0]!.name = 'renamed';
    loaded.metadata = { edited: true };
    const again = (await store.load('t1', context))!;
    assert.deepEqual(Task.toJSON(again), Task.toJSON(sampleTaskWithId('t1', again)));
  });

  test('a streamed search (artifact chunks appended by the SDK) is whole when fetched later, also when its client left before reading it', async (t) => {
    const registry = await startTestRegistry();
    t.after(() => registry.close());
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    for (let i = 0; i < 12; i++) await op(alice, { register: { agentCard: v1Card(`Chunked Agent ${i}`, `https://chunked-${i}.example.org/a2a`) } });
    const events = await stream(alice, [{ data: { search: { query: 'Chunked Agent', limit: 12 } }, mediaType: 'application/json' }]);
    const taskId = events[0]!.task.id;
    const chunks = events.filter((e) => e.artifactUpdate).length;
    assert.ok(chunks >= 3, `several chunks (${chunks})`);
    const fetched = Task.toJSON(await alice.getTask({ tenant: '', id: taskId, historyLength: undefined })) as WireJson;
    assert.equal(fetched.status.state, 'TASK_STATE_COMPLETED');
    const results = fetched.artifacts[0].parts.filter((p: WireJson) => p.data).flatMap((p: WireJson) => p.data.results);
    assert.equal(results.length, 12);
    assert.equal(new Set(results.map((h: WireJson) => h.id)).size, 12);

    // A client that leaves before its stream is read (here while its search runs: the server has
    // seen the connection close before the first event) does not leave the task WORKING: the
    // answer was computed, so the task still ends COMPLETED with the whole artifact, for GetTask.
    const search = registry.service.search.bind(registry.service);
    let searching!: () => void;
    const entered = new Promise<void>((resolve) => (searching = resolve));
    registry.service.search = async (...args) => {
      const closed = currentScope()?.closed;
      searching();
      // Answers once the server has seen the client leave.
      if (closed && !closed.aborted) await once(closed, 'abort', { signal: AbortSignal.timeout(5000) });
      return search(...args);
    };
    t.after(() => (registry.service.search = search));
    const contextId = crypto.randomUUID();
    const leaving = new AbortController();
    const left = (async () => {
      const request = { tenant: '', message: Message.fromJSON({ messageId: crypto.randomUUID(), role: 'ROLE_USER', contextId, parts: [{ data: { search: { query: 'Chunked Agent', limit: 12 } }, mediaType: 'application/json' }] }), configuration: undefined, metadata: undefined };
      for await (const event of alice.sendMessageStream(request, { signal: leaving.signal })) assert.fail(`no event reaches a client that left: ${JSON.stringify(streamEventJson(event))}`);
    })().catch((error: unknown) => assert.equal((error as Error).name, 'AbortError'));
    await entered;
    leaving.abort();
    await left;
    let leftTask: WireJson | undefined;
    await eventually(
      3000,
      async () => {
        const listed = await alice.listTasks(ListTasksRequest.fromJSON({ contextId, includeArtifacts: true }));
        leftTask = listed.tasks[0] && (Task.toJSON(listed.tasks[0]) as WireJson);
        return leftTask?.status.state === 'TASK_STATE_COMPLETED';
      },
      'the task of a stream whose client left ends COMPLETED (it stayed WORKING)',
    );
    const leftResults = leftTask!.artifacts[0].parts.filter((p: WireJson) => p.data).flatMap((p: WireJson) => p.data.results);
    assert.equal(leftResults.length, 12, 'with the whole answer');
  });
});

const engines = storageEngines();

for (const engine of engines) {
  describe(`storage stays bounded (${engine.name})`, () => {
    test('housekeeping prunes durable tasks past their retention and trims the change log', async (t) => {
      const skip = engine.skip();
      if (skip) return t.skip(skip);
      const registry = await startTestRegistry({
        ...(await engine.env()),
        REGISTRY_TASK_RETENTION_HOURS: '0.0001', // 0.36 s
        REGISTRY_CHANGES_RETENTION_HOURS: '0.0001',
      });
      t.after(() => registry.close());
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      const registered = await op(alice, { register: { agentCard: v1Card('Pruned Agent', 'https://pruned.example.org/a2a') } });
      const seq = await registry.store.lastChangeSeq();
      assert.ok(seq > 0);
      await eventually(10_000, async () => (await registry.core.housekeeping.run()).prunedTasks === 1, 'the registration task is pruned once older than 0.36 s');
      assert.equal(await registry.store.tasks.load({ tenant: '', owner: 'alice' }, registered.id), undefined);
      assert.equal(await registry.store.changesTrimmedThrough(), seq);
      assert.deepEqual(await registry.store.changesSince(0, 10), []);
      assert.equal(await registry.store.lastChangeSeq(), seq);
      // The entry itself is not touched by any of this.
      const entry = resultOf(await op(alice, { get: { id: resultOf(registered).id } }));
      assert.equal(entry.name, 'Pruned Agent');
    });

    test("one principal's watches, started and canceled, push out only its own oldest tasks beyond REGISTRY_TASK_RETENTION_COUNT, keep no matches once ended, and a pruned task is gone from GetTask too", async (t) => {
      const skip = engine.skip();
      if (skip) return t.skip(skip);
      const env = { ...(await engine.env()), REGISTRY_TASK_RETENTION_COUNT: '6', REGISTRY_FETCH_ALLOW: '127.0.0.1' };
      const registry = await startTestRegistry(env);
      t.after(() => registry.close());
      const hook = await webhook(() => 200);
      t.after(() => hook.close());
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      const bob = await sdkClient(registry.url, { token: TOKENS.bob });
      // alice's two acknowledgements, the oldest tasks; each card 6 KB, so a watch's initial matches are large.
      const acknowledgements: string[] = [];
      for (const i of [1, 2]) {
        const card = v1Card(`Flooded Agent ${i}`, `https://flooded-${i}.example.org/a2a`);
        card.description += ` floodedword ${'z'.repeat(6000)}`;
        acknowledgements.push((await op(alice, { register: { agentCard: card } })).id);
      }
      // bob starts and cancels eight watches of them (the audit: 1,240 in 20 s, ~48 KB each kept for a week).
      const watches: string[] = [];
      for (let i = 0; i < 8; i++) {
        const task = await sendWithPush(bob, { query: 'floodedword' }, { url: hook.url, token: 'hook-token' });
        assert.equal(task.status.state, 'TASK_STATE_WORKING');
        if (i === 0) {
          // Running, its task holds its initial matches (both cards).
          await eventually(10_000, async () => {
            const running = Task.toJSON(await bob.getTask({ tenant: '', id: task.id, historyLength: undefined })) as WireJson;
            return running.artifacts?.some((a: WireJson) => a.name === 'watch-results') === true;
          }, 'the initial matches in the running watch\'s task');
        }
        const canceled = Task.toJSON(await bob.cancelTask({ tenant: '', id: task.id, metadata: undefined })) as WireJson;
        assert.equal(canceled.status.state, 'TASK_STATE_CANCELED');
        watches.push(task.id);
      }
      // Ended, a watch's task is its final status: the matches are neither answered nor stored.
      const ended = Task.toJSON(await bob.getTask({ tenant: '', id: watches[0]!, historyLength: undefined })) as WireJson;
      assert.equal(ended.status.state, 'TASK_STATE_CANCELED');
      assert.match(ended.status.message.parts[0].text, /The watch was canceled/);
      assert.deepEqual(ended.artifacts ?? [], []);
      const bobScope = { tenant: '', owner: 'bob' };
      for (const id of watches) {
        const row = await registry.store.tasks.load(bobScope, id);
        assert.ok(row && (row.artifacts ?? '').length < 100, `watch ${watches.indexOf(id)}: ${row?.artifacts?.length} bytes of artifacts stored (12 KB and more before)`);
      }
      // 10 tasks, 6 kept: alice keeps her 2 (fewer than a share), bob his newest 4. Before, the
      // newest 6 of the table were kept, all bob's: alice's ListTasks was empty.
      assert.equal((await registry.core.housekeeping.run()).prunedTasks, 4);
      const listed = await alice.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 50, pageToken: '', statusTimestampAfter: undefined });
      assert.deepEqual(listed.tasks.map((x) => x.id), [...acknowledgements].reverse());
      const bobs = await bob.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 50, pageToken: '', statusTimestampAfter: undefined });
      assert.deepEqual(bobs.tasks.map((x) => x.id), watches.slice(4).reverse());
      // A pruned task is gone from GetTask too: the copy cached when the watch ended answered it
      // while ListTasks listed nothing, until the cache's time to live ran out.
      for (const id of watches.slice(0, 4)) await assert.rejects(bob.getTask({ tenant: '', id, historyLength: undefined }), /not found/i, `pruned watch ${watches.indexOf(id)}`);
      for (const id of watches.slice(4)) assert.equal((await bob.getTask({ tenant: '', id, historyLength: undefined })).status?.state, TaskState.TASK_STATE_CANCELED);
      if (engine.name !== 'postgres') return;
      // Another replica (on PostgreSQL) forgets the tasks one replica pruned at its next housekeeping round.
      const replica = await startTestRegistry(env);
      t.after(() => replica.close());
      await replica.core.housekeeping.run(); // its first round, at its start, over before the prune
      const bobThere = await sdkClient(replica.url, { token: TOKENS.bob });
      const kept = watches[4]!;
      assert.equal((await bobThere.getTask({ tenant: '', id: kept, historyLength: undefined })).status?.state, TaskState.TASK_STATE_CANCELED, 'read back, and cached, there');
      await registry.store.tasks.prune({ maxAgeMs: 86_400_000, maxCount: 5 }); // bob's share is 3 now: his oldest kept one goes
      assert.equal(await registry.store.tasks.load(bobScope, kept), undefined);
      await replica.core.housekeeping.run();
      await assert.rejects(bobThere.getTask({ tenant: '', id: kept, historyLength: undefined }), /not found/i, 'forgotten there');
    });

    test('a registration and its task commit together: when the task row cannot be written, neither is', async (t) => {
      const skip = engine.skip();
      if (skip) return t.skip(skip);
      const env = await engine.env();
      const registry = await startTestRegistry(env);
      t.after(() => registry.close());
      // A trigger that refuses every task row, on a connection of its own.
      const refuseTasks = async (on: boolean) => {
        if (engine.name === 'sqlite') {
          const db = new Database(join(registry.dataDir, 'registry.db'));
          try {
            db.exec(on ? "CREATE TRIGGER refuse_tasks BEFORE INSERT ON tasks BEGIN SELECT RAISE(ABORT, 'no task rows'); END" : 'DROP TRIGGER refuse_tasks');
          } finally {
            db.close();
          }
          return;
        }
        const client = new pg.Client({ connectionString: env.DATABASE_URL });
        await client.connect();
        try {
          await client.query(
            on
              ? `CREATE FUNCTION refuse_tasks() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no task rows'; END $$;
                 CREATE TRIGGER refuse_tasks BEFORE INSERT ON tasks FOR EACH ROW EXECUTE FUNCTION refuse_tasks()`
              : 'DROP TRIGGER refuse_tasks ON tasks; DROP FUNCTION refuse_tasks()',
          );
        } finally {
          await client.end();
        }
      };
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      const card = v1Card('Atomic Agent', 'https://atomic.example.org/a2a');
      await refuseTasks(true);
      const refused = await op(alice, { register: { agentCard: card } });
      assert.equal(refused.status.state, 'TASK_STATE_FAILED');
      assert.equal((await registry.store.count()).agent ?? 0, 0, 'the entry was not committed without its task');
      await refuseTasks(false);
      const accepted = await op(alice, { register: { agentCard: card } });
      assert.equal(accepted.status.state, 'TASK_STATE_COMPLETED');
      assert.equal(resultOf(accepted).created, true);
      // Durable as answered: the stored row is the task the client got.
      const row = await registry.store.tasks.load({ tenant: '', owner: 'alice' }, accepted.id);
      assert.ok(row);
      assert.deepEqual(Task.toJSON(fromTaskRow(row)), accepted);
      // Held in memory as that row: GetTask answers the task the client got, as it will after a restart.
      const fetched = await alice.getTask({ tenant: '', id: accepted.id, historyLength: undefined });
      assert.deepEqual(Task.toJSON(fetched), accepted);
      const listed = await alice.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 100, pageToken: '', historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: true });
      assert.deepEqual(listed.tasks.filter((task) => task.id === accepted.id).map((task) => Task.toJSON(task)), [accepted]);
    });

    test('a database written by an earlier release drops its read and anonymous tasks when upgraded', async (t) => {
      const skip = engine.skip();
      if (skip) return t.skip(skip);
      const scope = (owner: string) => ({ tenant: '', owner });
      const task = (name: string, state: string) =>
        Task.fromJSON({ id: crypto.randomUUID(), contextId: 'c', status: { state, timestamp: new Date().toISOString() }, artifacts: [{ artifactId: 'a', name, parts: [{ data: { ok: 1 } }] }] });
      const registration = task('registration', 'TASK_STATE_COMPLETED');
      const unregistration = task('unregistration', 'TASK_STATE_COMPLETED');
      const rows: TaskRow[] = [
        toTaskRow(scope('alice'), registration),
        toTaskRow(scope('alice'), unregistration),
        toTaskRow(scope('alice'), task('search-results', 'TASK_STATE_COMPLETED')),
        toTaskRow(scope('alice'), task('entry', 'TASK_STATE_COMPLETED')),
        toTaskRow(scope('alice'), Task.fromJSON({ id: crypto.randomUUID(), contextId: 'c', status: { state: 'TASK_STATE_REJECTED' } })),
        toTaskRow(scope(''), task('registration', 'TASK_STATE_COMPLETED')), // anonymous: every anonymous caller could read it
        toTaskRow(scope(''), task('search-results', 'TASK_STATE_COMPLETED')),
      ];
      const columns = Object.keys(rows[0]!);
      let store: RegistryStore;
      if (engine.name === 'sqlite') {
        const file = join(tempDir(), 'registry.db');
        const db = new Database(file);
        db.pragma('journal_mode = WAL');
        db.exec(`CREATE TABLE registry_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
        db.exec(SQLITE_MIGRATIONS[0]!.sql!);
        db.prepare(`INSERT INTO registry_migrations VALUES (1, 'v1', '2026-01-01')`).run();
        const insert = db.prepare(`INSERT INTO tasks (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`);
        for (const row of rows) insert.run(row);
        // Lots of dead weight, as a registry that stored every search had.
        const big = toTaskRow(scope(''), task('search-results', 'TASK_STATE_COMPLETED'));
        for (let i = 0; i < 2000; i++) insert.run({ ...big, id: `bulk-${i}`, artifacts: JSON.stringify([{ name: 'search-results', text: 'z'.repeat(2000) }]) });
        db.pragma('wal_checkpoint(TRUNCATE)');
        assert.equal(db.pragma('auto_vacuum', { simple: true }), 0);
        db.close();
        const before = statSync(file).size;
        store = new SqliteStore({ file });
        await store.open();
        t.after(() => store.close());
        const after = new Database(file, { readonly: true });
        assert.equal(after.pragma('auto_vacuum', { simple: true }), 2, 'incremental auto-vacuum is on');
        after.close();
        assert.ok(statSync(file).size < before / 4, `the file shrank (${before} -> ${statSync(file).size} bytes)`);
      } else {
        const url = await engine.server!.createDatabase('upgrade');
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          await client.query(`CREATE TABLE registry_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
          await client.query(POSTGRES_MIGRATIONS[0]!.sql);
          await client.query(`INSERT INTO registry_migrations (version, name) VALUES (1, 'v1')`);
          for (const row of rows) {
            await client.query(`INSERT INTO tasks (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`, columns.map((c) => row[c as keyof TaskRow]));
          }
        } finally {
          await client.end();
        }
        store = new PostgresStore({ url });
        await store.open();
        t.after(() => store.close());
      }
      const kept = await store.tasks.list(scope('alice'), { limit: 100, withArtifacts: true, withHistory: true });
      assert.deepEqual(new Set(kept.rows.map((r) => r.id)), new Set([registration.id, unregistration.id]));
      assert.equal((await store.tasks.list(scope(''), { limit: 100, withArtifacts: false, withHistory: false })).total, 0);
      assert.equal(await store.changesTrimmedThrough(), 0);
    });

    test('a database written by an earlier release moves tasks stored under a tenant to none, where they are looked up', async (t) => {
      const skip = engine.skip();
      if (skip) return t.skip(skip);
      // What an earlier release stored when requests named a tenant: tasks, a watch and a push config under it.
      const task = (id: string, name: string) =>
        Task.fromJSON({ id, contextId: 'c', status: { state: 'TASK_STATE_COMPLETED', timestamp: new Date().toISOString() }, artifacts: [{ artifactId: 'a', name, parts: [{ data: { ok: 1 } }] }] });
      const [a, b, c] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
      const rows: TaskRow[] = [
        toTaskRow({ tenant: 'acme', owner: 'alice' }, task(a, 'registration')),
        // One id under two tenants (no release made this; kept: the row under none, else the first tenant's).
        toTaskRow({ tenant: '', owner: 'alice' }, task(b, 'kept')),
        toTaskRow({ tenant: 'globex', owner: 'alice' }, task(b, 'dropped')),
        toTaskRow({ tenant: 'zeta', owner: 'alice' }, task(c, 'dropped')),
        toTaskRow({ tenant: 'acme', owner: 'alice' }, task(c, 'kept')),
        toTaskRow({ tenant: 'acme', owner: 'bob' }, task(a, 'bob')),
      ];
      const watch = { id: crypto.randomUUID(), tenant: 'acme', owner: 'alice', principal: 'alice', contextId: 'c', request: '{"query":"x"}', pushConfigs: '[]', createdAt: Date.now(), expiresAt: Date.now() + 60_000, seqFloor: 0, deliveredSeq: 0, position: 0 };
      const url = engine.name === 'postgres' ? await engine.server!.createDatabase('tenants') : undefined;
      const file = join(tempDir(), 'registry.db');
      const open = async () => {
        const opened: RegistryStore = url ? new PostgresStore({ url }) : new SqliteStore({ file });
        await opened.open();
        return opened;
      };
      const raw = async (sql: string): Promise<unknown[]> => {
        if (!url) {
          const db = new Database(file);
          try {
            return sql.trimStart().startsWith('SELECT') ? db.prepare(sql).all() : (db.exec(sql), []);
          } finally {
            db.close();
          }
        }
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          return (await client.query(sql)).rows;
        } finally {
          await client.end();
        }
      };
      const before = await open();
      for (const row of rows) await before.tasks.save(row);
      assert.equal(await before.watches.create(watch, 'replica-1', Date.now() + 60_000), 'created');
      await before.close();
      // Back to the schema before that migration (the later ones run again too, as they can).
      const tenantless = (engine.name === 'sqlite' ? SQLITE_MIGRATIONS : POSTGRES_MIGRATIONS).find((m) => m.name === 'tasks under no tenant')!.version;
      await raw(`DELETE FROM registry_migrations WHERE version >= ${tenantless}`);
      await raw(`INSERT INTO push_notification_configs (tenant, owner, task_id, config_id, config_data, protocol_version) VALUES ('acme', 'alice', '${a}', 'p1', '{}', '1.0')`);

      const store = await open();
      t.after(() => store.close());
      const alice = { tenant: '', owner: 'alice' };
      const nameOf = async (owner: string, id: string) => JSON.parse((await store.tasks.load({ tenant: '', owner }, id))?.artifacts ?? '[{}]')[0].name;
      assert.equal(await nameOf('alice', a), 'registration');
      assert.equal(await nameOf('alice', b), 'kept');
      assert.equal(await nameOf('alice', c), 'kept');
      assert.equal(await nameOf('bob', a), 'bob', "another principal's task of that id stays its own");
      assert.equal((await store.tasks.list(alice, { limit: 100, withArtifacts: false, withHistory: false })).total, 3);
      assert.deepEqual(await raw('SELECT DISTINCT tenant FROM tasks'), [{ tenant: '' }]);
      assert.deepEqual(await raw('SELECT tenant, task_id FROM push_notification_configs'), [{ tenant: '', task_id: a }]);
      assert.equal((await store.watches.get(watch.id))?.tenant, '');
    });
  });
}

describe('a replica behind the trimmed change log', () => {
  test('reloads its index from the entries and signals a resync to the feed', async (t) => {
    const postgres = engines[1]!;
    const skip = postgres.skip();
    if (skip) return t.skip(skip);
    const url = (await postgres.env()).DATABASE_URL!;
    const writer = new PostgresStore({ url });
    await writer.open();
    t.after(() => writer.close());
    const created = [];
    for (let i = 0; i < 3; i++) created.push(await writer.upsert(entryWrite('agent', `https://resync.example.com/${i}`, '1', `Resync Agent ${i}`), actor('alice')));
    // Everything this replica would need to replay is gone.
    assert.equal(await writer.trimChanges(0), 3);

    const store = new PostgresStore({ url });
    await store.open();
    t.after(() => store.close());
    const feed = new ChangeFeed();
    const resyncs: string[] = [];
    const changes: string[] = [];
    feed.subscribe((change) => changes.push(change.id), (reason) => resyncs.push(reason));
    const service = new RegistryService({
      store,
      index: createSearchIndex(),
      newIndex: createSearchIndex,
      validator: createDocumentValidator({ maxDocumentBytes: 10_240 }),
      verifier: createSignatureVerifier(NO_TRUSTED_KEYS),
      pageTokens: new PageTokens('resync-test-secret-0123456789'),
      feed,
      publicRead: true,
    });
    // Its position is from before the trim (it was cut off meanwhile).
    const follower = new IndexFollower(store, service, createLogger('silent'), { pollMs: 60_000 }, 0);
    await follower.start();
    t.after(() => follower.stop());
    assert.equal(resyncs.length, 1);
    assert.match(resyncs[0]!, /trimmed/);
    assert.equal(service.indexSize, 3);
    assert.equal(follower.notInStep, undefined);
    const reader = { isAdmin: false };
    assert.equal((await service.search({ query: 'Resync Agent' }, reader)).total, 3);

    // After the reload it follows the log again, change by change.
    const more = await writer.upsert(entryWrite('agent', 'https://resync.example.com/more', '1', 'Resync Agent more'), actor('alice'));
    assert.ok('entry' in more);
    await follower.wake();
    assert.deepEqual(changes, [more.entry.id]);
    assert.equal(service.indexSize, 4);
    assert.equal(resyncs.length, 1);
  });
});
