/**
 * The SQLite store's group commit (src/storage/sqlite/write-queue.ts) and its durable tasks
 * (src/storage/sqlite/task-records.ts, src/tasks/task-rows.ts): writes queued together share one
 * transaction, each in its own savepoint, settle only after COMMIT (and, with an off-loop sync,
 * only after a sync that started after it), and behave as if run one
 * after another; task rows are exactly the SDK's, readable and writable by `DatabaseTaskStore`
 * both ways.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { Task } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { DatabaseTaskStore } from '@a2a-js/sdk/server/database';
import { SqliteStore } from '../src/storage/sqlite/index.js';
import { StorageUnavailableError } from '../src/storage/faults.js';
import { WriteQueue } from '../src/storage/sqlite/write-queue.js';
import { fromTaskRow, toTaskRow } from '../src/tasks/task-rows.js';
import { actor, entryWrite } from './support/store-fixtures.js';
import { RUN_TYPESCRIPT } from './support/typescript-source.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'registry-group-commit-'));
  dirs.push(dir);
  return join(dir, 'registry.db');
}

/** A raw connection with a scratch table, and a log of the transaction statements it runs. */
function scratchDb() {
  const file = tempFile();
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (n INTEGER PRIMARY KEY)');
  const log: string[] = [];
  const exec = db.exec.bind(db);
  db.exec = (sql: string) => {
    log.push(sql);
    return exec(sql);
  };
  // The queue runs BEGIN, COMMIT, SAVEPOINT... as statements compiled once: log each run.
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    const statement = prepare(sql);
    if (!/^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/.test(sql)) return statement;
    const run = statement.run.bind(statement);
    statement.run = (...params: unknown[]) => {
      log.push(sql);
      return run(...params);
    };
    return statement;
  }) as typeof db.prepare;
  return { file, db, log, insert: (n: number) => (d: Database.Database) => void d.prepare('INSERT INTO t VALUES (?)').run(n) };
}

describe('WriteQueue', () => {
  it('commits the jobs of one turn in one transaction, each in a savepoint, settling after COMMIT', async () => {
    const { file, db, log, insert } = scratchDb();
    const queue = new WriteQueue(() => db);
    const events: string[] = [];
    const jobs = Array.from({ length: 50 }, (_, n) =>
      queue.run(insert(n)).then(() => {
        events.push(`resolved ${n}`);
        // Acknowledged means committed: another connection already sees it.
        const other = new Database(file, { readonly: true });
        try {
          assert.ok(other.prepare('SELECT 1 FROM t WHERE n = ?').get(n));
        } finally {
          other.close();
        }
      }),
    );
    assert.deepEqual(log, [], 'nothing runs before the turn ends');
    await Promise.all(jobs);
    assert.deepEqual(log.filter((s) => s === 'BEGIN IMMEDIATE' || s === 'COMMIT'), ['BEGIN IMMEDIATE', 'COMMIT']);
    assert.equal(log.filter((s) => s === 'SAVEPOINT job').length, 50);
    assert.equal(events.length, 50);
    db.close();
  });

  it('caps the batch size and commits the rest in later transactions', async () => {
    const { db, log, insert } = scratchDb();
    const queue = new WriteQueue(() => db, 16);
    await Promise.all(Array.from({ length: 40 }, (_, n) => queue.run(insert(n))));
    assert.equal(log.filter((s) => s === 'COMMIT').length, 3);
    assert.equal((db.prepare('SELECT count(*) AS c FROM t').get() as { c: number }).c, 40);
    db.close();
  });

  it('rolls back only the job that failed', async () => {
    const { db, insert } = scratchDb();
    const queue = new WriteQueue(() => db);
    const results = await Promise.allSettled([
      queue.run(insert(1)),
      queue.run((d) => {
        insert(2)(d);
        throw new Error('job 2 fails after writing');
      }),
      queue.run(insert(1)), // a constraint violation: fails alone too
      queue.run((d) => {
        insert(3)(d);
        return 'three';
      }),
      // An async job would write outside the transaction: refused.
      queue.run(async (d) => insert(4)(d)),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'rejected', 'fulfilled', 'rejected'],
    );
    assert.match(String((results[1] as PromiseRejectedResult).reason), /job 2 fails/);
    assert.match(String((results[2] as PromiseRejectedResult).reason), /UNIQUE/);
    assert.equal((results[3] as PromiseFulfilledResult<string>).value, 'three');
    assert.match(String((results[4] as PromiseRejectedResult).reason), /synchronous/);
    assert.deepEqual(
      (db.prepare('SELECT n FROM t ORDER BY n').all() as { n: number }[]).map((r) => r.n),
      [1, 3],
    );
    assert.equal(db.inTransaction, false);
    db.close();
  });


  it('runs a job queued alone as its own transaction without a savepoint, in arrival order; a failing one rolls back alone', async () => {
    const { db, log, insert } = scratchDb();
    const queue = new WriteQueue(() => db);
    const results = await Promise.allSettled([
      queue.run(insert(1)),
      queue.run(insert(2)),
      queue.run((d) => {
        insert(3)(d);
        insert(4)(d);
        return 'big';
      }, { alone: true }),
      queue.run(insert(5)),
      queue.run((d) => {
        insert(6)(d);
        throw new Error('the alone job fails after writing');
      }, { alone: true }),
      queue.run(insert(7)),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
    );
    assert.equal((results[2] as PromiseFulfilledResult<string>).value, 'big');
    assert.match(String((results[4] as PromiseRejectedResult).reason), /alone job fails/);
    // [1, 2] | [3, 4] alone | [5] | [6] alone, rolled back | [7]
    assert.deepEqual(
      log.filter((s) => s !== 'RELEASE job'),
      [
        'BEGIN IMMEDIATE', 'SAVEPOINT job', 'SAVEPOINT job', 'COMMIT',
        'BEGIN IMMEDIATE', 'COMMIT',
        'BEGIN IMMEDIATE', 'SAVEPOINT job', 'COMMIT',
        'BEGIN IMMEDIATE', 'ROLLBACK',
        'BEGIN IMMEDIATE', 'SAVEPOINT job', 'COMMIT',
      ],
    );
    assert.deepEqual(
      (db.prepare('SELECT n FROM t ORDER BY n').all() as { n: number }[]).map((r) => r.n),
      [1, 2, 3, 4, 5, 7],
    );
    assert.equal(db.inTransaction, false);
    db.close();
  });
  it('with a sync, settles a batch only after a sync that started after its COMMIT, one sync at a time', async () => {
    const { db, log, insert } = scratchDb();
    const syncs: Array<{ done: () => void; fail: (error: Error) => void; committedBefore: number }> = [];
    const queue = new WriteQueue(() => db, 128, {
      sync: {
        later: () =>
          new Promise<void>((resolve, reject) => {
            syncs.push({ done: resolve, fail: reject, committedBefore: log.filter((s) => s === 'COMMIT').length });
          }),
        now: () => assert.fail('flush only'),
      },
    });
    const settled: number[] = [];
    const first = queue.run(insert(1)).then(() => settled.push(1));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(syncs.length, 1, 'the first batch committed and its sync started');
    assert.equal(syncs[0]!.committedBefore, 1);
    // Writes queued while that sync runs wait for its end, then commit together, before the next sync.
    const second = queue.run(insert(2)).then(() => settled.push(2));
    await new Promise((resolve) => setImmediate(resolve));
    const alsoSecond = assert.rejects(queue.run(insert(20)), /EIO/); // its sync fails below
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(log.filter((s) => s === 'COMMIT').length, 1, 'nothing more commits while the sync runs');
    assert.equal(syncs.length, 1, 'one sync at a time');
    assert.deepEqual(settled, [], 'nothing is acknowledged before its sync');
    syncs[0]!.done();
    await first;
    assert.deepEqual(settled, [1]);
    await new Promise((resolve) => setImmediate(resolve));
    const transaction = ['BEGIN IMMEDIATE', 'SAVEPOINT job', 'RELEASE job'];
    assert.deepEqual(log, [...transaction, 'COMMIT', ...transaction, 'SAVEPOINT job', 'RELEASE job', 'COMMIT'], 'both queued writes in one transaction');
    assert.equal(syncs.length, 2, 'the next sync covers them');
    assert.equal(syncs[1]!.committedBefore, 2);
    // A failed sync acknowledges nothing it covered.
    const third = queue.run(insert(3));
    syncs[1]!.fail(new Error('EIO'));
    await assert.rejects(second, /EIO/);
    await new Promise((resolve) => setImmediate(resolve));
    syncs[2]!.done();
    await third;
    await alsoSecond;
    assert.deepEqual(settled, [1]);
    db.close();
  });

  it('with a sync, flush commits and syncs at once, settling what a running sync covers too', async () => {
    const { db, insert } = scratchDb();
    let synced = 0;
    const queue = new WriteQueue(() => db, 128, { sync: { later: () => new Promise<void>(() => undefined), now: () => void synced++ } });
    const running = queue.run(insert(1));
    await new Promise((resolve) => setImmediate(resolve));
    const queued = queue.run(insert(2));
    queue.flush();
    assert.equal(synced, 1);
    await Promise.all([running, queued]);
    assert.equal((db.prepare('SELECT count(*) AS c FROM t').get() as { c: number }).c, 2);
    db.close();
  });
});

describe('SqliteStore group commit', () => {
  it('runs conflicting writes of one batch as if one after another', async (t) => {
    const store = new SqliteStore({ file: tempFile() });
    await store.open();
    t.after(() => store.close());
    const url = 'https://batch.example.com/a2a';
    const [created, unchanged, updated, forbidden, byAdmin] = await Promise.all([
      store.upsert(entryWrite('agent', url, '1'), actor('alice')),
      store.upsert(entryWrite('agent', url, '1'), actor('alice')),
      store.upsert(entryWrite('agent', url, '2'), actor('alice')),
      store.upsert(entryWrite('agent', url, '3'), actor('mallory')),
      store.upsert(entryWrite('agent', url, '3'), actor('root', true)),
    ]);
    assert.ok(created?.status === 'created' && created.entry.revision === 1);
    assert.ok(unchanged?.status === 'unchanged' && unchanged.entry.revision === 1);
    assert.ok(updated?.status === 'updated' && updated.entry.revision === 2);
    assert.equal(forbidden?.status, 'forbidden');
    assert.ok(byAdmin?.status === 'updated' && byAdmin.entry.revision === 3 && byAdmin.entry.owner === 'alice');
    const id = created.entry.id;
    const [removed, again] = await Promise.all([
      store.remove(id, actor('alice')),
      store.remove(id, actor('alice')),
    ]);
    assert.equal(removed.status, 'deleted');
    assert.equal(again.status, 'not-found');
    assert.deepEqual(
      (await store.changesSince(0, 100)).map((c) => c.op),
      ['upsert', 'upsert', 'upsert', 'delete'],
    );
  });

  it('fails the whole batch when the write lock cannot be had, and recovers', async (t) => {
    const file = tempFile();
    const store = new SqliteStore({ file, busyTimeoutMs: 50 });
    await store.open();
    t.after(() => store.close());
    const blocker = new Database(file);
    blocker.exec('BEGIN IMMEDIATE');
    const results = await Promise.allSettled([
      store.upsert(entryWrite('agent', 'https://busy.example.com/a'), actor('alice')),
      store.tasks.save(toTaskRow({ tenant: '', owner: 'alice' }, sampleTask())),
      store.tasks.prune({ maxAgeMs: 0, maxCount: 0 }),
    ]);
    blocker.exec('ROLLBACK');
    blocker.close();
    for (const r of results) {
      assert.equal(r.status, 'rejected');
      assert.match(String(r.reason), /locked|busy/i);
    }
    assert.deepEqual(await store.count(), { agent: 0, 'mcp-server': 0 });
    const ok = await store.upsert(entryWrite('agent', 'https://busy.example.com/a'), actor('alice'));
    assert.equal(ok.status, 'created');
  });

  it('keeps every write acknowledged by a batch when the writer is SIGKILLed', async () => {
    // The crash test's writer (test/support/storage-writer.ts) with 8 concurrent workers, so
    // the kill lands while batches of several writes are being committed.
    const file = tempFile();
    const writer = join(dirname(fileURLToPath(import.meta.url)), 'support', 'storage-writer.ts');
    const child = spawn(process.execPath, [...RUN_TYPESCRIPT, writer, 'sqlite', file, 'g', '8'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const acks: { id: string; revision: number; contentHash: string }[] = [];
    const exited = new Promise((resolve) => child.on('exit', resolve));
    const lines = createInterface({ input: child.stdout });
    const drained = new Promise((resolve) => lines.once('close', resolve));
    // Only a writer that never gets to 200 acknowledgements is killed by this guard; the kill the
    // test is about comes at the 200th. It was 20 s, which a loaded CI machine (tsx compiling the
    // writer, 8 workers) can spend before the 200th: then "only N writes acknowledged".
    const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
    lines.on('line', (line) => {
      const [word, id, revision, contentHash] = line.split(' ');
      if (word !== 'ack' || !id || !revision || !contentHash) return;
      acks.push({ id, revision: Number(revision), contentHash });
      if (acks.length === 200) setTimeout(() => child.kill('SIGKILL'), Math.floor(Math.random() * 50));
    });
    await exited;
    await drained;
    clearTimeout(guard);
    assert.ok(acks.length >= 200, `only ${acks.length} writes acknowledged`);

    const raw = new Database(file);
    assert.equal(raw.pragma('integrity_check', { simple: true }), 'ok');
    raw.close();
    const store = new SqliteStore({ file });
    await store.open();
    try {
      for (const ack of acks) {
        const stored = await store.get(ack.id, ack.revision);
        assert.equal(stored?.contentHash, ack.contentHash, `acknowledged ${ack.id} r${ack.revision} is missing`);
      }
    } finally {
      await store.close();
    }
  });

  it('commits writes still queued when the store is closed', async () => {
    const file = tempFile();
    const store = new SqliteStore({ file });
    await store.open();
    const pending = store.upsert(entryWrite('agent', 'https://closing.example.com/a'), actor('alice'));
    await store.close();
    const outcome = await pending;
    assert.equal(outcome.status, 'created');
    const reopened = new SqliteStore({ file });
    await reopened.open();
    try {
      assert.ok(outcome.status === 'created' && (await reopened.get(outcome.entry.id)));
    } finally {
      await reopened.close();
    }
  });
});

/** A task with every part of the row filled in: status message, history, artifacts, metadata. */
function sampleTask(overrides: Record<string, unknown> = {}): Task {
  const id = crypto.randomUUID();
  const contextId = crypto.randomUUID();
  return Task.fromJSON({
    id,
    contextId,
    status: {
      state: 'TASK_STATE_COMPLETED',
      timestamp: '2025-06-01T12:34:56.789Z',
      message: {
        messageId: crypto.randomUUID(),
        role: 'ROLE_AGENT',
        taskId: id,
        contextId,
        parts: [{ text: 'Registered «Invoice Agent» ✓' }],
        metadata: { tookMs: 3 },
      },
    },
    history: [
      {
        messageId: crypto.randomUUID(),
        role: 'ROLE_USER',
        taskId: id,
        contextId,
        parts: [
          { data: { op: 'register', card: { name: 'Invoice Agent', skills: [{ id: 'x', tags: ['a', 'b'] }] } }, mediaType: 'application/json' },
          { raw: Buffer.from('binary\u0000bytes').toString('base64'), filename: 'card.json', mediaType: 'application/octet-stream' },
        ],
        extensions: ['https://example.com/ext'],
      },
    ],
    artifacts: [
      {
        artifactId: 'registration',
        name: 'registration',
        description: 'the stored entry',
        parts: [
          { data: { id: crypto.randomUUID(), revision: 1, nested: { list: [1, 2.5, null, true] } } },
          { url: 'https://example.com/entries/1', filename: 'entry.json', mediaType: 'application/json' },
        ],
        metadata: { kind: 'agent' },
      },
    ],
    metadata: { requestId: 'r-1', numbers: [1, 2, 3] },
    ...overrides,
  });
}

describe('another process holding the write lock', () => {
  it('is waited for from a timer, the event loop free; held longer than the store waits, the write fails as storage unavailable (locked)', async (t) => {
    const file = tempFile();
    const store = new SqliteStore({ file, busyTimeoutMs: 1000 });
    await store.open();
    t.after(() => store.close());
    // Another writer on the file (as `a2a-registry import` is), in the middle of a transaction.
    const other = new Database(file);
    let ticks = 0;
    let onTick = (): void => undefined;
    const ticker = setInterval(() => {
      ticks++;
      onTick();
    }, 10);
    try {
      other.exec('BEGIN IMMEDIATE');
      let settled = false;
      const waiting = store.upsert(entryWrite('agent', 'https://locked.example.com/1'), actor('alice')).finally(() => (settled = true));
      // SQLite's busy handler waited synchronously: no timer ran, nothing was answered, until the
      // write failed a second later. Counted in timer turns, not milliseconds (a loaded machine
      // runs fewer turns in 300 ms, and failed "ticks >= 10"): five turns go by while it waits.
      ticks = 0;
      await new Promise<void>((resolve) => (onTick = () => ticks >= 5 && resolve()));
      assert.equal(settled, false, `the event loop kept running while the write waited (${ticks} timer turns, the write still waiting)`);
      other.exec('COMMIT');
      assert.equal((await waiting).status, 'created', 'the write lands once the lock is free');

      other.exec('BEGIN IMMEDIATE');
      const started = Date.now();
      await assert.rejects(store.upsert(entryWrite('agent', 'https://locked.example.com/2'), actor('alice')), (error: unknown) => {
        assert.ok(error instanceof StorageUnavailableError, String(error));
        assert.equal(error.fault.reason, 'locked');
        assert.match(error.message, /locked by another process's write/);
        return true;
      });
      assert.ok(Date.now() - started >= 900, 'it waited as long as the store waits');
      assert.equal(store.fault?.reason, 'locked', '/readyz reports it');
      other.exec('ROLLBACK');
      assert.equal((await store.upsert(entryWrite('agent', 'https://locked.example.com/2'), actor('alice'))).status, 'created');
      assert.equal(store.fault, undefined, 'a write that succeeds clears it');
    } finally {
      clearInterval(ticker);
      other.close();
    }
  });
});

describe('durable task rows on SQLite', () => {
  it('are the SDK row format: DatabaseTaskStore reads ours and we read its, identically', async (t) => {
    const file = tempFile();
    const store = new SqliteStore({ file });
    await store.open();
    t.after(() => store.close());
    // The SDK's own store on its own connection to the same file.
    const kysely = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new Database(file) }) });
    t.after(() => kysely.destroy());
    const sdk = new DatabaseTaskStore(kysely);
    const alice = new ServerCallContext({ user: { isAuthenticated: true, userName: 'alice' } });
    const aliceScope = { tenant: '', owner: 'alice' };
    const tenant = new ServerCallContext({ tenant: 'acme', user: { isAuthenticated: true, userName: 'alice' } });
    const ours = async (id: string, scope = aliceScope) => {
      const row = await store.tasks.load(scope, id);
      return row ? fromTaskRow(row) : undefined;
    };

    const tasks = [
      sampleTask(),
      sampleTask({ status: { state: 'TASK_STATE_WORKING' }, artifacts: [], history: [], metadata: undefined }),
      Task.fromJSON({ id: crypto.randomUUID(), contextId: '' }),
    ];
    for (const [i, task] of tasks.entries()) {
      const mine = { ...task, id: `${task.id.slice(0, 30)}-ours${i}` };
      const theirs = { ...task, id: `${task.id.slice(0, 30)}-sdk${i}` };
      await store.tasks.save(toTaskRow(aliceScope, mine));
      await sdk.save(theirs, alice);
      for (const saved of [mine, theirs]) {
        const byUs = await ours(saved.id);
        const bySdk = await sdk.load(saved.id, alice);
        assert.deepEqual(bySdk, byUs);
        assert.deepEqual(Task.toJSON(bySdk!), Task.toJSON(saved));
      }
      // And the rows themselves are the same, column for column (apart from the id).
      const raw = new Database(file, { readonly: true });
      try {
        const row = (id: string) => ({ ...(raw.prepare('SELECT * FROM tasks WHERE id = ?').get(id) as object), id: 'x' });
        assert.deepEqual(row(mine.id), row(theirs.id));
      } finally {
        raw.close();
      }
    }

    // Scope: tenant and owner are the SDK's, so other callers see nothing.
    const scoped = sampleTask();
    await store.tasks.save(toTaskRow({ tenant: 'acme', owner: 'alice' }, scoped));
    assert.ok(await sdk.load(scoped.id, tenant));
    assert.equal(await sdk.load(scoped.id, alice), undefined);
    assert.equal(await ours(tasks[0]!.id, { tenant: '', owner: 'bob' }), undefined);

    // Saving again overwrites, through either store.
    const first = { ...tasks[0]!, id: `${tasks[0]!.id.slice(0, 30)}-ours0` };
    await store.tasks.save(toTaskRow(aliceScope, { ...first, metadata: { n: 'again' } }));
    assert.deepEqual((await sdk.load(first.id, alice))?.metadata, { n: 'again' });
    await sdk.save({ ...first, metadata: { n: 'sdk' } }, alice);
    assert.deepEqual((await ours(first.id))?.metadata, { n: 'sdk' });
    const listed = await store.tasks.list(aliceScope, { limit: 100, withArtifacts: true, withHistory: true });
    assert.equal(listed.total, 6);
  });

  it('snapshots the row when save is called', async (t) => {
    const store = new SqliteStore({ file: tempFile() });
    await store.open();
    t.after(() => store.close());
    const scope = { tenant: '', owner: 'alice' };
    const row = toTaskRow(scope, sampleTask());
    const saving = store.tasks.save(row);
    row.metadata = JSON.stringify({ edited: 'after save was called' });
    await saving;
    assert.deepEqual(JSON.parse((await store.tasks.load(scope, row.id))!.metadata!), { requestId: 'r-1', numbers: [1, 2, 3] });
  });
});
