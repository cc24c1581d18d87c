/**
 * One behaviour suite for `RegistryStore`, run against every engine: a real SQLite file in a
 * temporary directory, and a real PostgreSQL server (test/support/postgres.ts). Each test
 * gets a fresh, empty database.
 */
import { after, before, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Task, TaskState } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import type { RegistryStore, StoredEntry } from '../src/storage/types.js';
import { SQLITE_MIGRATIONS, SqliteStore } from '../src/storage/sqlite/index.js';
import { POSTGRES_MIGRATIONS, PostgresStore } from '../src/storage/postgres/index.js';
import { fromTaskRow, toTaskRow } from '../src/tasks/task-rows.js';
import { RegistryTaskStore } from '../src/tasks/registry-task-store.js';
import { createStore } from '../src/storage/create-store.js';
import { DELETE_BATCH_ROWS, InvalidCursorError, SchemaTooNewError, UnstorableTextError } from '../src/storage/common.js';
import { startPostgres, type TestPostgres } from './support/postgres.js';
import { actor, entryWrite } from './support/store-fixtures.js';
import { otherSpellings } from '../src/lib/endpoint-url.js';
import { nextHealth } from '../src/registry/health.js';
import type { HealthStatus } from '../src/contract/freshness.js';

interface Target {
  /** A new store instance on this test's database (not yet opened). */
  makeStore(options?: { scanBatchSize?: number; poolMax?: number; connectTimeoutMs?: number; statementTimeoutMs?: number }): RegistryStore;
  /** The connection URL (PostgreSQL only). */
  url?: string;
  /** Runs SQL directly against the database, bypassing the store. */
  raw(sql: string): Promise<unknown[]>;
}

/** The pids of a PostgreSQL store's pooled sessions on `target`'s database (its listeners are named a2a-registry-listener). */
async function poolSessions(target: Target): Promise<number[]> {
  const rows = await target.raw("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'a2a-registry' ORDER BY pid");
  return rows.map((row) => (row as { pid: number }).pid);
}

interface Engine {
  name: string;
  /** The schema versions its migrations apply, in order. */
  versions: number[];
  /** Set when the engine should run but cannot: its tests fail with this error. */
  failure(): Error | undefined;
  /** Undefined when the engine can run; otherwise why it is skipped. */
  skip(): string | undefined;
  fresh(): Promise<Target>;
}

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const sqliteEngine: Engine = {
  name: 'sqlite',
  versions: SQLITE_MIGRATIONS.map((m) => m.version),
  failure: () => undefined,
  skip: () => undefined,
  async fresh() {
    const dir = mkdtempSync(join(tmpdir(), 'registry-sqlite-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    // A nested path: the store must create REGISTRY_DATA_DIR itself.
    const file = join(dir, 'data', 'registry.db');
    return {
      makeStore: (options) => new SqliteStore({ file, ...options }),
      async raw(sql) {
        const db = new Database(file);
        try {
          const stmt = db.prepare(sql);
          return stmt.reader ? stmt.all() : (stmt.run(), []);
        } finally {
          db.close();
        }
      },
    };
  },
};

let server: TestPostgres | undefined;
let pgSkipReason: string | undefined;
let pgFailure: Error | undefined;

const postgresEngine: Engine = {
  name: 'postgres',
  versions: POSTGRES_MIGRATIONS.map((m) => m.version),
  failure: () => pgFailure,
  skip: () => pgSkipReason,
  async fresh() {
    const url = await server!.createDatabase('store');
    return {
      url,
      makeStore: (options) => new PostgresStore({ url, poolMax: 5, ...options }),
      async raw(sql) {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          return (await client.query(sql)).rows as unknown[];
        } finally {
          await client.end();
        }
      },
    };
  },
};

before(async () => {
  let started;
  try {
    started = await startPostgres();
  } catch (error) {
    // CI without PostgreSQL: every PostgreSQL test fails with this (the SQLite ones still run).
    pgFailure = error instanceof Error ? error : new Error(String(error));
    return;
  }
  if (started.ok) {
    server = started.pg;
    cleanups.unshift(async () => server?.stop());
  } else {
    pgSkipReason = started.skipReason;
    console.warn(`# skipping PostgreSQL storage tests: ${pgSkipReason}`);
  }
});

/** Opens a store on a fresh database and closes it when the test ends. */
async function openFresh(t: TestContext, engine: Engine, options?: { scanBatchSize?: number; statementTimeoutMs?: number }) {
  const target = await engine.fresh();
  const store = target.makeStore(options);
  await store.open();
  t.after(() => store.close());
  return { target, store };
}

async function listAll(store: RegistryStore, query: { kind?: 'agent' | 'mcp-server'; owner?: string; orderBy?: 'createdAt' | 'updatedAt' }, limit: number) {
  const seen: StoredEntry[] = [];
  let after: string | undefined;
  let pages = 0;
  do {
    const page = await store.list({ ...query, limit, ...(after ? { after } : {}) });
    assert.ok(page.entries.length <= limit);
    seen.push(...page.entries);
    after = page.next;
    pages++;
    assert.ok(pages < 1000, 'paging does not terminate');
  } while (after);
  return seen;
}

// The two engines' suites side by side (SQLite mostly waits on fsync, PostgreSQL on its server),
// and PostgreSQL's four tests at a time (each on a database of its own, waiting on the server);
// SQLite's one at a time (a suite inherits its parent's concurrency, hence the explicit 1). The
// tests declared with aloneTest run after both, one at a time: those that move this process's
// clock (Date), which beside other tests would date their writes wrongly, and the one that times
// how long the event loop is held, which other tests' work would hold too.
describe('the stores side by side', { concurrency: true }, () => {
  for (const engine of [sqliteEngine, postgresEngine]) describe(`RegistryStore on ${engine.name}`, { concurrency: engine.name === 'postgres' ? 4 : 1 }, () => storeTests(engine, 'side by side'));
});
for (const engine of [sqliteEngine, postgresEngine]) describe(`RegistryStore on ${engine.name}: alone`, { concurrency: 1 }, () => storeTests(engine, 'alone'));

/** The store tests of `engine`: those of `phase` ('alone': those declared with aloneTest). */
function storeTests(engine: Engine, phase: 'side by side' | 'alone'): void {
    const declare = (name: string, fn: (t: TestContext) => Promise<void>) =>
      it(name, async (t) => {
        const failure = engine.failure();
        if (failure) throw failure;
        const reason = engine.skip();
        if (reason) {
          t.skip(reason);
          return;
        }
        await fn(t);
      });
    const test = (name: string, fn: (t: TestContext) => Promise<void>) => phase === 'side by side' && declare(name, fn);
    const aloneTest = (name: string, fn: (t: TestContext) => Promise<void>) => phase === 'alone' && declare(name, fn);

    test('a new entry is answered as it reads back: kinds, versions, verification, origin', async (t) => {
      const { store } = await openFresh(t, engine);
      const verification = { verified: true, kid: 'key-1', alg: 'ES256', signatures: [{ status: 'verified' as const, kid: 'key-1', alg: 'ES256' }], keyset: 'k' };
      const mcp = entryWrite('mcp-server', 'https://m.example.com/mcp');
      const writes = [
        entryWrite('agent', 'https://a.example.com/a2a'),
        { ...entryWrite('agent', 'https://b.example.com/a2a'), verification },
        { ...entryWrite('agent', 'https://c.example.com/a2a'), origin: 'refresh' as const },
        mcp,
      ];
      assert.equal(mcp.protocolVersion, undefined);
      for (const write of writes) {
        const outcome = await store.upsert(write, actor('alice'));
        assert.equal(outcome.status, 'created');
        if (outcome.status !== 'created') continue;
        assert.deepEqual(outcome.entry, await store.get(outcome.entry.id), write.identityUrl);
      }
    });

    test('a write whose text differs but whose document is the same JSON changes nothing, on registration and refresh', async (t) => {
      const { store } = await openFresh(t, engine);
      const alice = actor('alice');
      const first = entryWrite('agent', 'https://same.example.com/a2a');
      const created = await store.upsert(first, alice);
      assert.equal(created.status, 'created');
      const id = created.status === 'created' ? created.entry.id : '';
      // Another text of the same document (pretty-printed, keys in another order): another hash.
      const { name, ...rest } = JSON.parse(first.documentText) as Record<string, unknown>;
      const otherText = JSON.stringify({ ...rest, name }, null, 2);
      const sameInOtherWords = { ...first, documentText: otherText, contentHash: createHash('sha256').update(otherText).digest('hex') };
      assert.notEqual(sameInOtherWords.contentHash, first.contentHash);
      assert.equal((await store.upsert(sameInOtherWords, alice)).status, 'unchanged');
      assert.equal((await store.revise(id, sameInOtherWords, 1)).status, 'unchanged');
      assert.equal((await store.get(id))!.revision, 1);
      assert.equal((await store.get(id))!.documentText, first.documentText, 'the stored text is kept');
      // Another document in other words is a new revision.
      const changedText = JSON.stringify({ ...rest, name: 'Renamed' }, null, 2);
      assert.equal((await store.upsert({ ...first, documentText: changedText, contentHash: createHash('sha256').update(changedText).digest('hex') }, alice)).status, 'updated');
      assert.equal((await store.get(id))!.revision, 2);
    });

    // ---- issue 16: freshness records, refresh revisions, check claims ----

    const health = (status: 'ok' | 'unreachable' | 'invalid', since: string, failures = 0, checkedAt = since) => ({
      status,
      since,
      checkedAt,
      failures,
      ...(status === 'ok' ? {} : { reason: 'timeout', message: 'no answer' }),
    });

    test('freshness: a write sets, replaces and removes the record; list filters by health', async (t) => {
      const { store } = await openFresh(t, engine);
      const alice = actor('alice');
      const t0 = '2026-12-01T10:00:00.000Z';
      const source = { url: 'https://a.example.com/.well-known/agent-card.json', fetchedAt: t0, etag: '"v1"', lastModified: 'Tue, 01 Dec 2026 09:00:00 GMT' };
      const created = await store.upsert({ ...entryWrite('agent', 'https://a.example.com/a2a'), freshness: { source, health: health('ok', t0), drift: false, nextCheckAt: t0 } }, alice);
      assert.equal(created.status, 'created');
      assert.deepEqual(created.entry.source, source);
      assert.deepEqual(created.entry.health, health('ok', t0));
      assert.equal(created.entry.drift, false);
      assert.equal(created.entry.revisionOrigin, undefined);
      assert.deepEqual(await store.get(created.entry.id, 1), created.entry, 'a revision read carries the entry\'s freshness');
      const plain = await store.upsert(entryWrite('agent', 'https://b.example.com/a2a'), alice);
      assert.equal(plain.status === 'created' && plain.entry.health, undefined);

      // Same document, only times moved: unchanged, no change recorded.
      let seq = await store.lastChangeSeq();
      const t1 = '2026-12-01T11:00:00.000Z';
      const same = await store.upsert({ ...entryWrite('agent', 'https://a.example.com/a2a'), freshness: { source: { ...source, fetchedAt: t1 }, health: health('ok', t0, 0, t1), drift: false } }, alice);
      assert.equal(same.status, 'unchanged');
      assert.equal(same.status === 'unchanged' && same.freshened, undefined);
      assert.equal(same.status === 'unchanged' && same.entry.health?.checkedAt, t1);
      assert.equal(await store.lastChangeSeq(), seq);
      // A registration by URL writes its own ok check: the status goes on, so does its since.
      const t2 = '2026-12-01T11:30:00.000Z';
      const again = await store.upsert({ ...entryWrite('agent', 'https://a.example.com/a2a'), freshness: { source: { ...source, fetchedAt: t2 }, health: health('ok', t2), drift: false } }, alice);
      assert.equal(again.status === 'unchanged' && again.freshened, undefined);
      assert.deepEqual(again.status === 'unchanged' && again.entry.health, health('ok', t0, 0, t2));
      assert.equal(await store.lastChangeSeq(), seq);

      // Same document, health changed: unchanged but freshened, and a change recorded.
      const worse = await store.upsert({ ...entryWrite('agent', 'https://a.example.com/a2a'), freshness: { source, health: health('invalid', t1, 1) } }, alice);
      assert.ok(worse.status === 'unchanged' && worse.freshened);
      assert.equal(worse.entry.health?.status, 'invalid');
      assert.equal(worse.entry.health?.reason, 'timeout');
      assert.equal(worse.entry.drift, undefined);
      assert.ok((await store.lastChangeSeq()) > seq);
      assert.deepEqual((await store.list({ limit: 10, health: 'invalid' })).entries.map((e) => e.id), [created.entry.id]);
      assert.deepEqual((await store.list({ limit: 10, health: 'ok' })).entries, []);

      // An inline re-registration removes the record.
      seq = await store.lastChangeSeq();
      const inline = await store.upsert({ ...entryWrite('agent', 'https://a.example.com/a2a'), freshness: null }, alice);
      assert.ok(inline.status === 'unchanged' && inline.freshened);
      assert.equal(inline.entry.source, undefined);
      assert.equal(inline.entry.health, undefined);
      assert.ok((await store.lastChangeSeq()) > seq);
    });

    test('freshness: a failing record keeps when its run of failures began; one stored before there was one reads it as its since', async (t) => {
      const { target, store } = await openFresh(t, engine);
      const created = await store.upsert(entryWrite('agent', 'https://run.example.com/a2a'), actor('alice'));
      assert.ok(created.status === 'created');
      const id = created.entry.id;
      const [t0, t1, t2] = ['2026-12-01T10:00:00.000Z', '2026-12-01T11:00:00.000Z', '2026-12-01T12:00:00.000Z'];
      // Invalid, then unreachable: another status since t1, the same run since t0.
      const unreachable = { ...health('unreachable', t1, 2), failingSince: t0 };
      assert.equal((await store.recordCheck(id, { health: unreachable, drift: false }))?.change, 'logged');
      assert.deepEqual((await store.get(id))?.health, unreachable);
      // Only the run's start moved (no release writes that, but readers would see it): logged.
      assert.equal((await store.recordCheck(id, { health: { ...unreachable, failingSince: t1 }, drift: false }))?.change, 'logged');
      const ok = health('ok', t2);
      await store.recordCheck(id, { health: ok, drift: false });
      assert.deepEqual((await store.get(id))?.health, ok, 'ok: no run of failures');
      const raw = async () => (await target.raw(`SELECT failing_since AS f, health_since AS s FROM entry_freshness`)) as { f: string | Date | null; s: string | Date }[];
      assert.deepEqual((await raw()).map((r) => r.f), [null]);

      // A failing record as a release before this column left it: the migration gives its run the
      // record's since, and a record read without one (written beside it by such a release) has it too.
      await store.recordCheck(id, { health: { ...health('invalid', t2, 1), failingSince: t2 }, drift: true });
      await store.close();
      const version = (engine.name === 'sqlite' ? SQLITE_MIGRATIONS : POSTGRES_MIGRATIONS).find((m) => m.name === 'health failing since')!.version;
      await target.raw('ALTER TABLE entry_freshness DROP COLUMN failing_since');
      await target.raw(`DELETE FROM registry_migrations WHERE version >= ${version}`);
      const upgraded = target.makeStore();
      await upgraded.open();
      t.after(() => upgraded.close());
      const [row] = await raw();
      assert.equal(new Date(row!.f!).toISOString(), t2, 'filled in from health_since');
      assert.deepEqual((await upgraded.get(id))?.health, { ...health('invalid', t2, 1), failingSince: t2 });
      await target.raw('UPDATE entry_freshness SET failing_since = NULL');
      assert.equal((await upgraded.get(id))?.health?.failingSince, t2, 'read as its since');
    });

    test('freshness: checks recorded through the store keep one run of failures across kinds, which only an ok ends', async (t) => {
      const { store } = await openFresh(t, engine);
      const created = await store.upsert(entryWrite('agent', 'https://kinds.example.com/a2a'), actor('alice'));
      assert.ok(created.status === 'created');
      const id = created.entry.id;
      // What the checks find, each a minute after the last, and the run each belongs to.
      const steps: [HealthStatus, number | undefined][] = [
        ['ok', undefined], ['invalid', 1], ['unreachable', 1], ['unreachable', 1], ['invalid', 1], ['ok', undefined], ['unreachable', 6], ['invalid', 6],
      ];
      const at = (minute: number) => new Date(Date.UTC(2026, 11, 1, 10, minute)).toISOString();
      for (const [i, [status, runFrom]] of steps.entries()) {
        const previous = (await store.get(id))?.health;
        const next = nextHealth(previous, { status, ...(status === 'ok' ? {} : { reason: 'timeout' }) }, at(i));
        await store.recordCheck(id, { health: next, drift: false });
        const read = (await store.get(id))?.health;
        assert.deepEqual(read, next, `check ${i}: read back as written`);
        assert.equal(read?.failingSince, runFrom === undefined ? undefined : at(runFrom), `check ${i} (${status})`);
      }
    });

    test('freshness: a release before failing_since, recording checks beside this one (PostgreSQL), leaves no stale run of failures', async (t) => {
      // One process holds a SQLite file, so two releases never write one at once.
      if (engine.name !== 'postgres') return t.skip('PostgreSQL only: replicas of two releases share a database');
      const { target, store } = await openFresh(t, engine);
      const created = await store.upsert(entryWrite('agent', 'https://older.example.com/a2a'), actor('alice'));
      assert.ok(created.status === 'created');
      const id = created.entry.id;
      const at = (minute: number) => new Date(Date.UTC(2026, 11, 1, 10, minute)).toISOString();
      // The previous release's write: its upsert sets its own columns, never failing_since.
      const olderRelease = async (h: ReturnType<typeof health>) => {
        const values: Record<string, string | number | boolean | null> = {
          health_status: h.status, checked_at: h.checkedAt, health_since: h.since, failures: h.failures,
          health_reason: h.reason ?? null, health_message: h.message ?? null, drift: false,
        };
        const literal = (v: string | number | boolean | null) => (typeof v === 'string' ? `'${v}'` : String(v));
        const columns = Object.keys(values).join(', ');
        await target.raw(
          `INSERT INTO entry_freshness (entry_id, ${columns}) VALUES ('${id}', ${Object.values(values).map(literal).join(', ')})
           ON CONFLICT (entry_id) DO UPDATE SET (${columns}) = (${Object.keys(values).map((c) => `EXCLUDED.${c}`).join(', ')})`,
        );
      };
      const stored = async () => {
        const [row] = (await target.raw(`SELECT failing_since AS f FROM entry_freshness WHERE entry_id = '${id}'`)) as { f: Date | null }[];
        return row!.f === null ? null : row!.f.toISOString();
      };

      // This release records a failure: its run begins.
      await store.recordCheck(id, { health: nextHealth(undefined, { status: 'invalid', reason: 'timeout' }, at(1)), drift: false });
      assert.equal((await store.get(id))?.health?.failingSince, at(1));
      // The older one records an ok check, which ends the run, then a failure, which begins another.
      await olderRelease(health('ok', at(2)));
      assert.equal(await stored(), null, 'ok: no run of failures');
      await olderRelease(health('unreachable', at(3), 1));
      assert.equal(await stored(), at(3), 'the first failure of a run begins it');
      assert.deepEqual((await store.get(id))?.health, { ...health('unreachable', at(3), 1), failingSince: at(3) });
      await olderRelease(health('unreachable', at(3), 2, at(4)));
      assert.deepEqual((await store.get(id))?.health, { ...health('unreachable', at(3), 2, at(4)), failingSince: at(3) }, 'a later one keeps it');
      // This release carries it on, through a change of kind.
      const next = nextHealth((await store.get(id))?.health, { status: 'invalid', reason: 'timeout' }, at(5));
      assert.equal(next.failingSince, at(3));
      await store.recordCheck(id, { health: next, drift: false });
      assert.deepEqual((await store.get(id))?.health, next);
      // A record the older release inserts: a run begun with its status.
      await target.raw(`DELETE FROM entry_freshness WHERE entry_id = '${id}'`);
      await olderRelease(health('invalid', at(6), 1));
      assert.equal(await stored(), at(6));
      assert.equal((await store.get(id))?.health?.failingSince, at(6));
    });

    test('revise: the next revision from a refresh, same owner, identity may move; stale, conflict, not found', async (t) => {
      const { store } = await openFresh(t, engine);
      const first = await store.upsert(entryWrite('agent', 'https://r.example.com/a2a', '1'), actor('alice'));
      assert.ok(first.status === 'created');
      const other = await store.upsert(entryWrite('agent', 'https://taken.example.com/a2a'), actor('bob'));
      assert.ok(other.status === 'created');
      const id = first.entry.id;
      const t0 = '2026-12-01T10:00:00.000Z';
      const freshness = { source: { url: 'https://r.example.com/card.json', fetchedAt: t0 }, health: health('ok', t0), drift: false };

      const seq = await store.lastChangeSeq();
      const moved = await store.revise(id, { ...entryWrite('agent', 'https://moved.example.com/a2a', '2'), freshness }, 1);
      assert.ok(moved.status === 'updated');
      assert.equal(moved.entry.revision, 2);
      assert.equal(moved.entry.owner, 'alice');
      assert.equal(moved.entry.revisionOrigin, 'refresh');
      assert.equal(moved.entry.identityUrl, 'https://moved.example.com/a2a');
      assert.deepEqual(moved.entry.source, freshness.source);
      assert.ok((await store.lastChangeSeq()) > seq);
      assert.equal((await store.get(id, 1))?.revisionOrigin, undefined);
      // The old identity is free again, the new one is this entry's.
      const again = await store.upsert(entryWrite('agent', 'https://moved.example.com/a2a', '3'), actor('alice'));
      assert.ok(again.status === 'updated' && again.entry.id === id && again.entry.revision === 3);

      assert.equal((await store.revise(id, entryWrite('agent', 'https://moved.example.com/a2a', '4'), 2)).status, 'stale');
      const conflict = await store.revise(id, entryWrite('agent', 'https://taken.example.com/a2a', '4'), 3);
      assert.ok(conflict.status === 'conflict' && conflict.existing.id === other.entry.id);
      assert.equal((await store.get(id))?.revision, 3, 'nothing stored on conflict');
      // Another spelling of an entry's identity is that entry, as a registration finds it: the
      // http spelling of alice's own other agent is a conflict, not a second entry of that agent.
      const mine = await store.upsert(entryWrite('agent', 'https://mine.example.com/a2a'), actor('alice'));
      assert.ok(mine.status === 'created');
      const respelled = { ...entryWrite('agent', 'http://mine.example.com/a2a', '4'), identityAliases: otherSpellings('http://mine.example.com/a2a') };
      const spelling = await store.revise(id, respelled, 3);
      assert.deepEqual(spelling.status === 'conflict' && spelling.existing.id, mine.entry.id);
      assert.equal((await store.get(id))?.identityUrl, 'https://moved.example.com/a2a', 'nothing stored on conflict');
      const unchanged = await store.revise(id, { ...entryWrite('agent', 'https://moved.example.com/a2a', '3'), freshness }, 3);
      assert.ok(unchanged.status === 'unchanged' && unchanged.entry.revision === 3 && unchanged.entry.health?.status === 'ok');
      assert.equal((await store.revise('00000000-0000-4000-8000-000000000000', entryWrite('agent', 'https://x.example.com'), 1)).status, 'not-found');
      assert.equal((await store.revise('not-a-uuid', entryWrite('agent', 'https://x.example.com'), 1)).status, 'not-found');
    });

    test('recordCheck: quiet when only times move, logged when what readers see changes', async (t) => {
      const { store } = await openFresh(t, engine);
      const created = await store.upsert(entryWrite('agent', 'https://c.example.com/a2a'), actor('alice'));
      assert.ok(created.status === 'created');
      const id = created.entry.id;
      const t0 = '2026-12-01T10:00:00.000Z';
      const t1 = '2026-12-01T11:00:00.000Z';
      let seq = await store.lastChangeSeq();
      const first = await store.recordCheck(id, { health: health('ok', t0), drift: false, nextCheckAt: t1 });
      assert.equal(first?.change, 'logged');
      assert.ok((await store.lastChangeSeq()) > seq);
      seq = await store.lastChangeSeq();
      const quiet = await store.recordCheck(id, { health: health('ok', t0, 0, t1), drift: false, nextCheckAt: t1 });
      assert.equal(quiet?.change, 'quiet');
      assert.equal(quiet?.entry.health?.checkedAt, t1);
      assert.equal(await store.lastChangeSeq(), seq);
      const failing = await store.recordCheck(id, { health: health('unreachable', t1, 1), drift: false });
      assert.equal(failing?.change, 'logged');
      assert.equal(failing?.entry.health?.failures, 1);
      const drifted = await store.recordCheck(id, { health: health('unreachable', t1, 1), drift: true });
      assert.equal(drifted?.change, 'logged');
      assert.equal(await store.recordCheck('00000000-0000-4000-8000-000000000000', {}), undefined);
    });

    test('claimDue: each due entry goes to one claimer, however many claim at once', async (t) => {
      const { target, store } = await openFresh(t, engine);
      const second = target.makeStore();
      await second.open();
      t.after(() => second.close());
      const past = '2026-01-01T00:00:00.000Z';
      const future = '2999-01-01T00:00:00.000Z';
      const due: string[] = [];
      for (let i = 0; i < 40; i++) {
        const r = await store.upsert(
          { ...entryWrite('agent', `https://due-${i}.example.com/a2a`), freshness: { source: { url: `https://due-${i}.example.com/card.json`, fetchedAt: past }, nextCheckAt: past } },
          actor('alice'),
        );
        assert.ok(r.status === 'created');
        due.push(r.entry.id);
      }
      const later = await store.upsert({ ...entryWrite('agent', 'https://later.example.com/a2a'), freshness: { source: { url: 'https://later.example.com/card.json', fetchedAt: past }, nextCheckAt: future } }, actor('alice'));
      const unsourced = await store.upsert({ ...entryWrite('agent', 'https://probe.example.com/a2a'), freshness: { nextCheckAt: past } }, actor('alice'));
      assert.ok(later.status === 'created' && unsourced.status === 'created');

      const retryAt = new Date(Date.now() + 60_000).toISOString();
      const claims = await Promise.all([store, second, store, second].map((s) => s.claimDue(15, retryAt, false)));
      const claimed = claims.flat();
      assert.equal(claimed.length, 40, `claims: ${claims.map((c) => c.length).join(', ')}`);
      assert.deepEqual([...new Set(claimed)].sort(), [...due].sort(), 'every due sourced entry exactly once');
      assert.deepEqual(await store.claimDue(100, retryAt, false), [], 'claimed entries are no longer due');
      assert.deepEqual(await second.claimDue(100, retryAt, true), [unsourced.entry.id], 'probing claims unsourced entries too');

      const mcp = await store.upsert(entryWrite('mcp-server', 'https://mcp.example.com/mcp'), actor('alice'));
      const plainAgent = await store.upsert(entryWrite('agent', 'https://plain.example.com/a2a'), actor('alice'));
      assert.ok(mcp.status === 'created' && plainAgent.status === 'created');
      assert.equal(await store.scheduleProbes(past), 1, 'only the agent without a record');
      assert.equal(await store.scheduleProbes(past), 0);
      assert.deepEqual(await store.claimDue(100, retryAt, true), [plainAgent.entry.id]);
    });

    aloneTest("claimDue: an entry due by the registry's clock is claimed, whatever the database server's clock says", async (t) => {
      const { store } = await openFresh(t, engine);
      // The registry's host an hour ahead of the database server's (PostgreSQL on another host).
      const ahead = Date.now() + 3_600_000;
      const dueAt = new Date(ahead - 60_000).toISOString();
      const due = await store.upsert(
        { ...entryWrite('agent', 'https://skewed.example.com/a2a'), freshness: { source: { url: 'https://skewed.example.com/card.json', fetchedAt: dueAt }, nextCheckAt: dueAt } },
        actor('alice'),
      );
      assert.ok(due.status === 'created');
      t.mock.timers.enable({ apis: ['Date'], now: ahead });
      let claimed: string[];
      try {
        claimed = await store.claimDue(10, new Date(ahead + 60_000).toISOString(), false);
      } finally {
        t.mock.timers.reset();
      }
      assert.deepEqual(claimed, [due.entry.id], 'due a minute ago by the clock that scheduled it');
    });

    aloneTest("PostgreSQL: watch leases are kept on the database server's clock: a replica whose clock runs ahead does not take over the watches another one holds", async (t) => {
      if (engine.name !== 'postgres') return; // SQLite: one process runs the watches, on one clock
      const { target, store } = await openFresh(t, engine);
      const other = target.makeStore();
      await other.open();
      t.after(() => other.close());
      const leaseMs = 40_000;
      const id = crypto.randomUUID();
      const row = {
        id, tenant: '', owner: 'alice', principal: 'alice', contextId: 'ctx', request: '{}', pushConfigs: '[]',
        createdAt: Date.now(), expiresAt: Date.now() + 3_600_000, seqFloor: 0, deliveredSeq: 0, position: 0,
      };
      assert.equal(await store.watches.create(row, 'replica-a', Date.now() + leaseMs), 'created');
      /** As replica B, whose host's clock runs a minute ahead of A's. */
      const asAhead = async <T>(fn: () => Promise<T>): Promise<T> => {
        t.mock.timers.enable({ apis: ['Date'], now: Date.now() + 60_000 });
        try {
          return await fn();
        } finally {
          t.mock.timers.reset();
        }
      };
      assert.deepEqual(await asAhead(() => other.watches.claim('replica-b', Date.now() + leaseMs, Date.now())), [], 'A holds it for 40 s more');
      assert.deepEqual(await store.watches.renewLeases('replica-a', Date.now() + leaseMs), [id], 'and renews it');
      assert.deepEqual(await asAhead(() => other.watches.claim('replica-b', Date.now() + leaseMs, Date.now())), []);
      // Paused (after failing to run) for 5 s: read back as 5 s from now on either clock.
      await store.watches.releaseUntil('replica-a', id, Date.now() + 5000);
      const until = await asAhead(async () => (await other.watches.pausedUntil(id, Date.now()))! - Date.now());
      assert.ok(until > 3000 && until <= 5000, `paused for ${until} ms more`);
      await store.watches.release('', id);
      // Let go: taken.
      assert.deepEqual((await asAhead(() => other.watches.claim('replica-b', Date.now() + leaseMs, Date.now()))).map((r) => r.id), [id]);
    });

    test('creates, updates, leaves unchanged, forbids, and lets an admin update', async (t) => {
      const { store } = await openFresh(t, engine);
      assert.equal(store.engine, engine.name);
      const alice = actor('alice');
      const url = 'https://agents.example.com/a2a';

      const created = await store.upsert(entryWrite('agent', url, '1', 'Invoice Agent'), alice);
      assert.equal(created.status, 'created');
      const entry = created.entry;
      // A time-ordered UUID (v7): new entries go at the end of the id-keyed indexes.
      assert.match(entry.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.equal(entry.revision, 1);
      assert.equal(entry.owner, 'alice');
      assert.equal(entry.kind, 'agent');
      assert.equal(entry.name, 'Invoice Agent');
      assert.equal(entry.protocolVersion, '1.0');
      assert.equal(entry.identityUrl, url);
      assert.deepEqual(entry.interfaces, [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }]);
      assert.equal(entry.createdAt, entry.updatedAt);
      assert.ok(!Number.isNaN(Date.parse(entry.createdAt)));
      assert.deepEqual(await store.get(entry.id), entry);

      const same = await store.upsert(entryWrite('agent', url, '1', 'Invoice Agent'), alice);
      assert.equal(same.status, 'unchanged');
      assert.ok(same.status === 'unchanged');
      assert.equal(same.entry.id, entry.id);
      assert.equal(same.entry.revision, 1);

      const updated = await store.upsert(entryWrite('agent', url, '2', 'Invoice Agent'), alice);
      assert.equal(updated.status, 'updated');
      assert.ok(updated.status === 'updated');
      assert.equal(updated.entry.id, entry.id);
      assert.equal(updated.entry.revision, 2);
      assert.equal(updated.entry.createdAt, entry.createdAt);
      assert.ok(updated.entry.updatedAt >= entry.updatedAt);

      const seqBefore = await store.lastChangeSeq();
      const forbidden = await store.upsert(entryWrite('agent', url, '3'), actor('mallory'));
      assert.equal(forbidden.status, 'forbidden');
      assert.ok(forbidden.status === 'forbidden');
      assert.equal(forbidden.existing.owner, 'alice');
      assert.equal((await store.get(entry.id))?.revision, 2, 'a forbidden write changes nothing');
      assert.equal(await store.lastChangeSeq(), seqBefore, 'a forbidden write records no change');

      // Another owner with an identical document is still forbidden (ownership first).
      const forbiddenSame = await store.upsert(entryWrite('agent', url, '2', 'Invoice Agent'), actor('mallory'));
      assert.equal(forbiddenSame.status, 'forbidden');

      const byAdmin = await store.upsert(entryWrite('agent', url, '3', 'Invoice Agent'), actor('root', true));
      assert.equal(byAdmin.status, 'updated');
      assert.ok(byAdmin.status === 'updated');
      assert.equal(byAdmin.entry.revision, 3);
      assert.equal(byAdmin.entry.owner, 'alice', 'an admin update keeps the original owner');
      const revisions = await store.revisions(entry.id, 10);
      assert.deepEqual(revisions.map((r) => r.revision), [3, 2, 1]);
      assert.equal(revisions[0]!.updatedAt, byAdmin.entry.updatedAt);
      assert.equal(revisions[2]!.updatedAt, entry.updatedAt);
      assert.deepEqual((await store.revisions(entry.id.toUpperCase(), 2)).map((r) => r.revision), [3, 2]);
      assert.deepEqual(await store.revisions('not-a-uuid', 10), []);

      // Same URL, other kind: a different identity, which only the URL's owner may create.
      const borrowed = await store.upsert(entryWrite('mcp-server', url), actor('bob'));
      assert.deepEqual(borrowed, { status: 'url-taken', url: 'http://agents.example.com/a2a' });
      const mcp = await store.upsert(entryWrite('mcp-server', url), actor('alice'));
      assert.equal(mcp.status, 'created');
      assert.ok(mcp.status === 'created');
      assert.notEqual(mcp.entry.id, entry.id);
      assert.equal(mcp.entry.protocolVersion, undefined);
      assert.deepEqual(await store.count(), { agent: 1, 'mcp-server': 1 });
    });

    test('keeps previous revisions retrievable', async (t) => {
      const { store } = await openFresh(t, engine);
      const url = 'https://revisions.example.com/mcp';
      const first = await store.upsert(entryWrite('mcp-server', url, '1', 'v1 name'), actor('alice'));
      assert.ok(first.status === 'created');
      await store.upsert(entryWrite('mcp-server', url, '2', 'v2 name'), actor('alice'));
      await store.upsert(entryWrite('mcp-server', url, '3', 'v3 name'), actor('alice'));
      const id = first.entry.id;

      const r1 = await store.get(id, 1);
      const r2 = await store.get(id, 2);
      const current = await store.get(id);
      assert.equal(r1?.revision, 1);
      assert.equal(r1?.name, 'v1 name');
      assert.equal(r1?.documentText, entryWrite('mcp-server', url, '1', 'v1 name').documentText);
      assert.equal(r1?.contentHash, first.entry.contentHash);
      assert.equal(r1?.updatedAt, first.entry.updatedAt);
      assert.equal(r2?.name, 'v2 name');
      assert.equal(current?.revision, 3);
      assert.equal(current?.name, 'v3 name');
      assert.deepEqual(await store.get(id, 3), current);
      for (const r of [r1, r2, current]) assert.equal(r?.createdAt, first.entry.createdAt);

      assert.equal(await store.get(id, 4), undefined);
      assert.equal(await store.get(id, 0), undefined);
      assert.equal(await store.get('00000000-0000-4000-8000-000000000000'), undefined);
      assert.equal(await store.get('not-a-uuid'), undefined);
      assert.equal(await store.get('not-a-uuid', 1), undefined);
    });

    test('a revision is never dated before the one it follows, though the clock stepped back since it was written (a registration and a refresh)', async (t) => {
      const { target, store } = await openFresh(t, engine);
      const url = 'https://stepped-back.example.com/a2a';
      const first = await store.upsert(entryWrite('agent', url, '1'), actor('alice'));
      assert.ok(first.status === 'created');
      // Written while the clock stood an hour ahead (NTP then stepped it back), or by a replica whose clock is.
      const ahead = new Date(Date.now() + 3_600_000).toISOString();
      await target.raw(`UPDATE entries SET updated_at = '${ahead}'`);
      await target.raw(`UPDATE entry_revisions SET created_at = '${ahead}'`);
      const second = await store.upsert(entryWrite('agent', url, '2'), actor('alice'));
      assert.ok(second.status === 'updated');
      const refreshed = await store.revise(first.entry.id, entryWrite('agent', url, '3'), 2);
      assert.ok(refreshed.status === 'updated');
      let before = Date.parse(ahead);
      for (const revision of [2, 3]) {
        const stored = await store.get(first.entry.id, revision);
        const at = Date.parse(stored!.updatedAt);
        // Strictly after it, and no further ahead of the clock than it stood (a whole second a revision ran ahead without end).
        assert.ok(at > before && at - before < 1000, `revision ${revision} dated ${stored!.updatedAt}, not just after the one before (${new Date(before).toISOString()})`);
        before = at;
      }
      const [listed] = (await store.list({ orderBy: 'updatedAt', limit: 1 })).entries;
      assert.ok(Date.parse(listed!.updatedAt) >= Date.parse(ahead), 'the entry as listed too');
    });

    test('lists every entry exactly once, newest first, with kind and owner filters', async (t) => {
      const { store } = await openFresh(t, engine);
      const created: StoredEntry[] = [];
      for (let i = 0; i < 23; i++) {
        const kind = i % 3 === 0 ? 'mcp-server' : 'agent';
        const owner = i % 2 === 0 ? 'alice' : 'bob';
        const outcome = await store.upsert(entryWrite(kind, `https://list.example.com/${i}`), actor(owner));
        assert.ok(outcome.status === 'created');
        created.push(outcome.entry);
      }
      // Updating an old entry must not move it: the order is by creation.
      await store.upsert(entryWrite('mcp-server', 'https://list.example.com/0', '2'), actor('alice'));

      const newestFirst = created.map((e) => e.id).reverse();
      for (const limit of [1, 5, 7, 23, 100]) {
        const all = await listAll(store, {}, limit);
        assert.deepEqual(all.map((e) => e.id), newestFirst, `limit ${limit}`);
      }
      const first = await store.list({ limit: 23 });
      assert.equal(first.entries.length, 23);
      assert.equal(first.next, undefined, 'no next page after the last entry');
      assert.equal((await store.list({ limit: 5 })).entries.length, 5);
      const updated = first.entries.find((e) => e.identityUrl === 'https://list.example.com/0');
      assert.equal(updated?.revision, 2, 'list returns current revisions');
      // Each entry's place in that order (the search index orders by it), kept by an update.
      const places = first.entries.map((e) => e.listSeq);
      assert.ok(places.every((p, i) => Number.isSafeInteger(p) && (i === 0 || p < places[i - 1]!)), places.join(', '));
      assert.equal(updated?.listSeq, created[0]!.listSeq);

      const mcp = await listAll(store, { kind: 'mcp-server' }, 3);
      assert.deepEqual(mcp.map((e) => e.id), newestFirst.filter((id) => created.find((e) => e.id === id)!.kind === 'mcp-server'));
      const bob = await listAll(store, { owner: 'bob' }, 4);
      assert.deepEqual(bob.map((e) => e.id), newestFirst.filter((id) => created.find((e) => e.id === id)!.owner === 'bob'));
      const aliceAgents = await listAll(store, { owner: 'alice', kind: 'agent' }, 2);
      assert.deepEqual(
        aliceAgents.map((e) => e.id),
        created.filter((e) => e.owner === 'alice' && e.kind === 'agent').map((e) => e.id).reverse(),
      );
      assert.deepEqual((await store.list({ owner: 'nobody', limit: 10 })).entries, []);

      // Deleting the entry a cursor points at does not break the walk.
      const page = await store.list({ limit: 4 });
      const cursorEntry = page.entries.at(-1)!;
      assert.equal((await store.remove(cursorEntry.id, actor(cursorEntry.owner))).status, 'deleted');
      const rest = await store.list({ limit: 100, after: page.next! });
      assert.deepEqual(rest.entries.map((e) => e.id), newestFirst.slice(4));

      await assert.rejects(store.list({ limit: 5, after: 'garbage' }), InvalidCursorError);

      // A range of the listing (the AI Catalog's nested catalogs): from one position up to the
      // entry another follows, that entry included; the walk from there is the next range's.
      const third = await store.list({ limit: 3, after: page.next! });
      const range = await store.list({ limit: 100, after: page.next!, until: third.next! });
      assert.deepEqual(range.entries.map((e) => e.id), newestFirst.slice(4, 7));
      assert.equal(range.next, undefined, 'the range ends there');
      const short = await store.list({ limit: 2, after: page.next!, until: third.next! });
      assert.deepEqual(short.entries.map((e) => e.id), newestFirst.slice(4, 6));
      assert.deepEqual((await store.list({ limit: 100, after: short.next!, until: third.next! })).entries.map((e) => e.id), [newestFirst[6]]);
      await assert.rejects(store.list({ limit: 5, until: 'garbage' }), InvalidCursorError);
      await assert.rejects(store.list({ limit: 5, orderBy: 'updatedAt', until: third.next! }), InvalidCursorError);
    });

    test('lists most recently changed first with orderBy updatedAt, each entry once, equal times newest registered first', async (t) => {
      const { store } = await openFresh(t, engine);
      const created: StoredEntry[] = [];
      for (let i = 0; i < 12; i++) {
        const outcome = await store.upsert(entryWrite(i % 3 === 0 ? 'mcp-server' : 'agent', `https://changed.example.com/${i}`), actor('alice'));
        assert.ok(outcome.status === 'created');
        created.push(outcome.entry);
      }
      // Later than every registration, so the two updates are the most recent changes.
      await new Promise((resolve) => setTimeout(resolve, 5));
      for (const i of [0, 5]) assert.equal((await store.upsert(entryWrite(i % 3 === 0 ? 'mcp-server' : 'agent', `https://changed.example.com/${i}`, '2'), actor('alice'))).status, 'updated');
      const current = await listAll(store, {}, 100);
      const byId = new Map(current.map((e) => [e.id, e]));
      const position = new Map(created.map((e, i) => [e.id, i]));
      // Newest change first; entries changed in the same millisecond, newest registered first.
      const expected = [...created]
        .sort((a, b) => byId.get(b.id)!.updatedAt.localeCompare(byId.get(a.id)!.updatedAt) || position.get(b.id)! - position.get(a.id)!)
        .map((e) => e.id);
      assert.deepEqual(expected.slice(0, 2), [created[5]!.id, created[0]!.id], 'the entries updated last come first');
      for (const limit of [1, 4, 5, 100]) {
        assert.deepEqual((await listAll(store, { orderBy: 'updatedAt' }, limit)).map((e) => e.id), expected, `limit ${limit}`);
      }
      const servers = await listAll(store, { kind: 'mcp-server', orderBy: 'updatedAt' }, 2);
      assert.deepEqual(servers.map((e) => e.id), expected.filter((id) => byId.get(id)!.kind === 'mcp-server'));
      // The default order did not move: newest registered first.
      assert.deepEqual(current.map((e) => e.id), created.map((e) => e.id).reverse());

      // A page token continues its own order only.
      const byCreation = await store.list({ limit: 3 });
      const byChange = await store.list({ limit: 3, orderBy: 'updatedAt' });
      await assert.rejects(store.list({ limit: 3, orderBy: 'updatedAt', after: byCreation.next! }), InvalidCursorError);
      await assert.rejects(store.list({ limit: 3, after: byChange.next! }), InvalidCursorError);

      // A position past 9999-12-31 is none a write made (updated_at has a four-digit year), and
      // PostgreSQL cannot read its time: it was an internal error there, an empty page on SQLite.
      const cursorOf = (text: string) => Buffer.from(text).toString('base64url');
      const latest = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
      for (const text of ['v2.999999999999999.1', `v2.${latest + 1}.1`, 'v2.300000000000000.9']) {
        await assert.rejects(store.list({ limit: 3, orderBy: 'updatedAt', after: cursorOf(text) }), InvalidCursorError, text);
      }
      // The latest time and the earliest are read: every entry is before the one, none before the other.
      assert.equal((await store.list({ limit: 100, orderBy: 'updatedAt', after: cursorOf(`v2.${latest}.1`) })).entries.length, created.length);
      assert.deepEqual((await store.list({ limit: 100, orderBy: 'updatedAt', after: cursorOf('v2.0.1') })).entries, []);
    });

    test('removes: owner yes, others forbidden, admin yes, unknown not found', async (t) => {
      const { store } = await openFresh(t, engine);
      const a = await store.upsert(entryWrite('agent', 'https://rm.example.com/a'), actor('alice'));
      const b = await store.upsert(entryWrite('agent', 'https://rm.example.com/b'), actor('alice'));
      assert.ok(a.status === 'created' && b.status === 'created');
      await store.upsert(entryWrite('agent', 'https://rm.example.com/a', '2'), actor('alice'));

      const denied = await store.remove(a.entry.id, actor('mallory'));
      assert.equal(denied.status, 'forbidden');
      assert.ok(denied.status === 'forbidden');
      assert.equal(denied.existing.id, a.entry.id);
      assert.ok(await store.get(a.entry.id));

      const deleted = await store.remove(a.entry.id, actor('alice'));
      assert.equal(deleted.status, 'deleted');
      assert.ok(deleted.status === 'deleted');
      assert.equal(deleted.entry.revision, 2);
      assert.equal(await store.get(a.entry.id), undefined);
      assert.equal(await store.get(a.entry.id, 1), undefined, 'revisions go with the entry');
      assert.equal((await store.remove(a.entry.id, actor('alice'))).status, 'not-found');

      assert.equal((await store.remove(b.entry.id, actor('root', true))).status, 'deleted');
      assert.equal((await store.remove('00000000-0000-4000-8000-000000000000', actor('root', true))).status, 'not-found');
      assert.equal((await store.remove('nope', actor('alice'))).status, 'not-found');
      assert.deepEqual(await store.count(), { agent: 0, 'mcp-server': 0 });

      // The identity is free again: registering it creates a new entry.
      const again = await store.upsert(entryWrite('agent', 'https://rm.example.com/a'), actor('bob'));
      assert.equal(again.status, 'created');
      assert.ok(again.status === 'created');
      assert.notEqual(again.entry.id, a.entry.id);
      assert.equal(again.entry.revision, 1);
    });

    test('records every change with a monotonically increasing sequence', async (t) => {
      const { store } = await openFresh(t, engine);
      assert.equal(await store.lastChangeSeq(), 0);
      assert.deepEqual(await store.changesSince(0, 10), []);

      const a = await store.upsert(entryWrite('agent', 'https://chg.example.com/a'), actor('alice'));
      const b = await store.upsert(entryWrite('mcp-server', 'https://chg.example.com/b'), actor('alice'));
      assert.ok(a.status === 'created' && b.status === 'created');
      await store.upsert(entryWrite('agent', 'https://chg.example.com/a'), actor('alice')); // unchanged
      await store.upsert(entryWrite('agent', 'https://chg.example.com/a', '2'), actor('alice'));
      await store.remove(b.entry.id, actor('mallory')); // forbidden
      await store.remove(b.entry.id, actor('alice'));

      const changes = await store.changesSince(0, 100);
      assert.deepEqual(
        changes.map((c) => [c.id, c.op]),
        [
          [a.entry.id, 'upsert'],
          [b.entry.id, 'upsert'],
          [a.entry.id, 'upsert'],
          [b.entry.id, 'delete'],
        ],
      );
      for (let i = 1; i < changes.length; i++) assert.ok(changes[i]!.seq > changes[i - 1]!.seq);
      assert.equal(await store.lastChangeSeq(), changes.at(-1)!.seq);
      assert.deepEqual(await store.changesSince(changes[1]!.seq, 100), changes.slice(2));
      assert.deepEqual(await store.changesSince(0, 2), changes.slice(0, 2));
      assert.deepEqual(await store.changesSince(changes.at(-1)!.seq, 100), []);
      for (const c of changes) assert.equal(typeof c.seq, 'number');
    });

    test('another spelling of an identity (http for https, a web port) is the same entry: upsert and importEntries update it, under the new spelling', async (t) => {
      const { store } = await openFresh(t, engine);
      const spelled = (url: string, version: string) => ({ ...entryWrite('agent', url, version), identityAliases: otherSpellings(url) });
      const first = await store.upsert(spelled('https://respell.example.com/a2a', '1'), actor('alice'));
      assert.equal(first.status, 'created');
      const id = first.status === 'created' ? first.entry.id : '';
      const moved = await store.upsert(spelled('http://respell.example.com/a2a', '2'), actor('alice'));
      assert.deepEqual(moved.status === 'updated' && [moved.entry.id, moved.entry.revision, moved.entry.identityUrl], [id, 2, 'http://respell.example.com/a2a']);
      assert.equal((await store.upsert(spelled('https://respell.example.com:80/a2a', '3'), actor('bob'))).status, 'forbidden', 'nor is it anyone else\'s by a spelling');
      // The bulk path too: a stored entry by another spelling, and two spellings of a new one in one batch.
      const imported = await store.importEntries(
        [spelled('https://respell.example.com/a2a', '3'), spelled('https://fresh.example.com/a2a', '1'), spelled('http://fresh.example.com:443/a2a', '2')],
        actor('alice'),
      );
      assert.deepEqual(imported.map((o) => o.status), ['updated', 'created', 'updated']);
      assert.equal(imported[0]!.status === 'updated' && imported[0]!.id, id);
      assert.equal(imported[2]!.status === 'updated' && imported[2]!.id, imported[1]!.status === 'created' && imported[1]!.id);
      assert.equal((await store.list({ limit: 10 })).entries.length, 2, 'one entry per agent');
    });

    test('spellings of one endpoint written at once make one entry: any caller (an admin too), one instance or two, upsert or importEntries', async (t) => {
      const { target, store } = await openFresh(t, engine);
      // A second instance: on PostgreSQL another replica, on SQLite another connection to the file.
      const other = target.makeStore();
      await other.open();
      t.after(() => other.close());
      const spelled = (url: string, version: string) => ({ ...entryWrite('agent', url, version), identityAliases: otherSpellings(url) });
      const spellings = (host: string) => [`https://${host}/a2a`, `http://${host}/a2a`, `http://${host}:443/a2a`, `https://${host}:80/a2a`];
      const idOf = (o: { status: string }) => ('entry' in o ? (o.entry as StoredEntry).id : 'id' in o ? String(o.id) : o.status);
      const alice = actor('alice');
      const admin = actor('root', true);
      const rounds = [
        { who: alice, on: [store], how: 'upsert' },
        { who: admin, on: [store], how: 'upsert' },
        { who: admin, on: [store, other], how: 'upsert' },
        { who: alice, on: [store, other], how: 'upsert' },
        { who: alice, on: [store, other], how: 'import' },
        { who: admin, on: [other, store], how: 'both' },
      ] as const;
      let agents = 0;
      for (const [n, round] of rounds.entries()) {
        for (let repeat = 0; repeat < 3; repeat++) {
          const host = `spelling-${n}-${repeat}.example.com`;
          const outcomes = await Promise.all(
            spellings(host).map(async (url, i) => {
              const instance = round.on[i % round.on.length]!;
              const write = spelled(url, String(i + 1));
              if (round.how === 'upsert' || (round.how === 'both' && i % 2 === 0)) return instance.upsert(write, round.who);
              return (await instance.importEntries([write], round.who))[0]!;
            }),
          );
          agents++;
          const statuses = outcomes.map((o) => o.status).sort();
          assert.deepEqual(statuses, ['created', 'updated', 'updated', 'updated'], `${host}: one created, the others update it (${statuses.join(', ')})`);
          assert.equal(new Set(outcomes.map(idOf)).size, 1, `${host}: one entry`);
          const entry = await store.get(idOf(outcomes[0]!));
          assert.equal(entry?.revision, 4, `${host}: each write is a revision of that entry`);
          assert.equal(entry?.owner, round.who.principal);
        }
        assert.equal((await store.count()).agent, agents, `round ${n}: one entry per agent`);
      }
    });

    test('importEntries: one transaction, the rules of upsert per write, a refused write leaves nothing; getMany reads a batch', async (t) => {
      const { store } = await openFresh(t, engine);
      const bobs = await store.upsert(entryWrite('agent', 'https://imp.example.com/bob'), actor('bob'));
      assert.equal(bobs.status, 'created');
      const before = await store.lastChangeSeq();
      // A write listing bob's URL beside its own: refused, and its own URL is not claimed either.
      const grabby = entryWrite('agent', 'https://imp.example.com/grabby');
      grabby.urls = [...grabby.urls, ...entryWrite('agent', 'https://imp.example.com/bob').urls].sort();
      const writes = [
        entryWrite('agent', 'https://imp.example.com/a'),
        entryWrite('agent', 'https://imp.example.com/bob', '2'), // bob's identity
        grabby,
        entryWrite('mcp-server', 'https://imp.example.com/b'),
      ];
      const outcomes = await store.importEntries(writes, actor('alice'));
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['created', 'forbidden', 'url-taken', 'created'],
      );
      assert.ok(outcomes[1]!.status === 'forbidden' && outcomes[1]!.id === (bobs.status === 'created' ? bobs.entry.id : ''));
      const ids = outcomes.flatMap((o) => (o.status === 'created' ? [o.id] : []));
      // One change per stored write, after the ones before.
      const changes = await store.changesSince(before, 100);
      assert.deepEqual(changes.map((c) => [c.id, c.op]), ids.map((id) => [id, 'upsert']));
      // Nothing of the refused writes: grabby's own URL is free for anyone.
      const free = await store.upsert(entryWrite('agent', 'https://imp.example.com/grabby'), actor('carol'));
      assert.equal(free.status, 'created');
      // Again: unchanged, no change recorded; an update is a new revision.
      const again = await store.importEntries([entryWrite('agent', 'https://imp.example.com/a'), entryWrite('mcp-server', 'https://imp.example.com/b', '2')], actor('alice'));
      assert.deepEqual(again.map((o) => o.status), ['unchanged', 'updated']);
      assert.deepEqual(await store.importEntries([], actor('alice')), []);

      const many = await store.getMany([...ids, crypto.randomUUID(), 'not-a-uuid', ids[0]!.toUpperCase()]);
      assert.deepEqual(new Set(many.map((e) => e.id)), new Set(ids));
      const b = many.find((e) => e.kind === 'mcp-server')!;
      assert.equal(b.revision, 2);
      assert.equal(b.owner, 'alice');
      assert.deepEqual(await store.getMany([]), []);
    });

    test('scans every current entry in batches and counts by kind', async (t) => {
      const { store } = await openFresh(t, engine, { scanBatchSize: 4 });
      const ids = new Set<string>();
      for (let i = 0; i < 13; i++) {
        const outcome = await store.upsert(
          entryWrite(i < 9 ? 'agent' : 'mcp-server', `https://scan.example.com/${i}`),
          actor('alice'),
        );
        assert.ok(outcome.status === 'created');
        ids.add(outcome.entry.id);
      }
      await store.upsert(entryWrite('agent', 'https://scan.example.com/0', '2'), actor('alice'));
      const scanned: StoredEntry[] = [];
      for await (const entry of store.scan()) scanned.push(entry);
      assert.equal(scanned.length, 13);
      assert.deepEqual(new Set(scanned.map((e) => e.id)), ids);
      assert.equal(scanned.find((e) => e.identityUrl === 'https://scan.example.com/0')?.revision, 2);
      assert.deepEqual(await store.count(), { agent: 9, 'mcp-server': 4 });
      // A batch size of the caller's (a background scan's small batches): the same entries, in the same order.
      for (const batchSize of [1, 3, 13, 64]) {
        const again: StoredEntry[] = [];
        for await (const entry of store.scan({ batchSize })) again.push(entry);
        assert.deepEqual(again.map((e) => e.id), scanned.map((e) => e.id), `batchSize ${batchSize}`);
      }

      // Exactly a multiple of the batch size, and empty.
      const { store: empty } = await openFresh(t, engine, { scanBatchSize: 4 });
      for await (const _ of empty.scan()) assert.fail('an empty store scans nothing');
      assert.deepEqual(await empty.count(), { agent: 0, 'mcp-server': 0 });
    });

    test('migrations are idempotent, data survives close and reopen, newer schemas are refused', async (t) => {
      const target = await engine.fresh();
      const first = target.makeStore();
      await first.open();
      const created = await first.upsert(entryWrite('agent', 'https://durable.example.com/a'), actor('alice'));
      assert.ok(created.status === 'created');
      await first.upsert(entryWrite('agent', 'https://durable.example.com/a', '2'), actor('alice'));
      let seq = await first.lastChangeSeq();
      await first.close();
      assert.equal(await first.ping(), false, 'a closed store is not alive');

      for (let round = 0; round < 2; round++) {
        const again = target.makeStore();
        await again.open();
        try {
          const entry = await again.get(created.entry.id);
          assert.equal(entry?.revision, 2);
          assert.equal((await again.get(created.entry.id, 1))?.contentHash, created.entry.contentHash);
          assert.equal(await again.lastChangeSeq(), seq);
          assert.deepEqual(await again.count(), { agent: 1 + round, 'mcp-server': 0 });
          // New writes continue the sequence rather than restarting it.
          await again.upsert(entryWrite('agent', `https://durable.example.com/r${round}`), actor('alice'));
          const next = await again.lastChangeSeq();
          assert.ok(next > seq);
          seq = next;
        } finally {
          await again.close();
        }
      }
      const versions = (await target.raw('SELECT version FROM registry_migrations ORDER BY version')) as {
        version: number;
      }[];
      assert.deepEqual(versions.map((v) => Number(v.version)), engine.versions, 'each migration applied once');

      await target.raw(
        `INSERT INTO registry_migrations (version, name, applied_at) VALUES (999, 'from the future', '2099-01-01T00:00:00Z')`,
      );
      const tooOld = target.makeStore();
      await assert.rejects(tooOld.open(), (error: unknown) => {
        assert.ok(error instanceof SchemaTooNewError);
        assert.match(error.message, /schema version 999/);
        assert.match(error.message, /newer release/);
        return true;
      });
      await tooOld.close();
    });

    test('a database from before freshness (schema 1) upgrades: entries and revisions kept, freshness records taken', async () => {
      const target = await engine.fresh();
      const old = target.makeStore();
      await old.open();
      const created = await old.upsert(entryWrite('agent', 'https://upgrade.example.com/a'), actor('alice'));
      assert.ok(created.status === 'created');
      await old.upsert(entryWrite('agent', 'https://upgrade.example.com/a', '2'), actor('alice'));
      await old.close();
      // Back to what a registry before issue 16 left behind: no freshness table, no revision origin.
      await target.raw('DROP TABLE entry_freshness');
      await target.raw('ALTER TABLE entry_revisions DROP COLUMN origin');
      // ...nor the task lifecycle's state (issue 12).
      await target.raw('DROP TABLE registry_state');
      // ... and before issue 15: no URL claims, no verification columns.
      await target.raw('DROP TABLE entry_urls');
      await target.raw('DROP TABLE url_claims');
      await target.raw('ALTER TABLE entry_revisions DROP COLUMN verification');
      await target.raw('ALTER TABLE entry_revisions DROP COLUMN verified_kid');
      // ... and before issue 19: no watch definitions.
      await target.raw('DROP TABLE watches');
      // ... nor the trust keyset of each entry (issue 22).
      await target.raw('DROP INDEX entries_trust_idx');
      await target.raw('ALTER TABLE entries DROP COLUMN trust_keyset');
      // ... nor the listing by update time.
      await target.raw('DROP INDEX entries_updated_list_idx');
      await target.raw('DROP INDEX entries_kind_updated_idx');
      await target.raw('DELETE FROM registry_migrations WHERE version > 1');

      const upgraded = target.makeStore();
      await upgraded.open();
      try {
        const entry = await upgraded.get(created.entry.id);
        assert.equal(entry?.revision, 2);
        assert.equal(entry?.revisionOrigin, undefined, 'old revisions were registrations');
        assert.equal(entry?.health, undefined);
        assert.equal((await upgraded.get(created.entry.id, 1))?.contentHash, created.entry.contentHash);
        const at = '2026-12-01T10:00:00.000Z';
        const checked = await upgraded.recordCheck(created.entry.id, { health: { status: 'ok', checkedAt: at, since: at, failures: 0 }, drift: false });
        assert.equal(checked?.entry.health?.status, 'ok');
        assert.deepEqual((await upgraded.list({ limit: 10, health: 'ok' })).entries.map((e) => e.id), [created.entry.id]);
        const versions = (await target.raw('SELECT version FROM registry_migrations ORDER BY version')) as { version: number }[];
        assert.deepEqual(versions.map((v) => Number(v.version)), engine.versions);
      } finally {
        await upgraded.close();
      }
    });

    test('several instances opening one fresh database at once migrate it exactly once', async () => {
      const target = await engine.fresh();
      const stores = Array.from({ length: 5 }, () => target.makeStore());
      try {
        await Promise.all(stores.map((s) => s.open()));
        for (const s of stores) assert.equal(await s.ping(), true);
        const versions = (await target.raw('SELECT version FROM registry_migrations')) as { version: number }[];
        assert.deepEqual(versions.map((v) => Number(v.version)).sort((a, b) => a - b), engine.versions);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });

    test('50 concurrent upserts of one identity leave one entry', async (t) => {
      const { target, store } = await openFresh(t, engine);
      const url = 'https://race.example.com/agent';
      const identical = await Promise.all(
        Array.from({ length: 50 }, () => store.upsert(entryWrite('agent', url), actor('alice'))),
      );
      assert.equal(identical.filter((o) => o.status === 'created').length, 1);
      assert.equal(identical.filter((o) => o.status === 'unchanged').length, 49);
      assert.equal(new Set(identical.map((o) => ('entry' in o ? o.entry.id : 'existing' in o ? o.existing.id : 'url' in o ? o.url : o.status))).size, 1);

      const distinct = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.upsert(entryWrite('agent', url, `v${i + 2}`), actor('alice'))),
      );
      assert.ok(distinct.every((o) => o.status === 'updated'));
      const revisions = distinct.map((o) => (o.status === 'updated' ? o.entry.revision : 0)).sort((x, y) => x - y);
      assert.deepEqual(revisions, Array.from({ length: 50 }, (_, i) => i + 2), 'each update got its own revision');
      assert.deepEqual(await store.count(), { agent: 1, 'mcp-server': 0 });
      assert.equal((await store.changesSince(0, 1000)).length, 51);

      // Several independent store instances (separate pools / connections) racing.
      const others = Array.from({ length: 4 }, () => target.makeStore());
      await Promise.all(others.map((s) => s.open()));
      try {
        const many = await Promise.all(
          others.flatMap((s, n) =>
            Array.from({ length: 25 }, () => s.upsert(entryWrite('mcp-server', 'https://race.example.com/mcp'), actor(`owner${n}`))),
          ),
        );
        assert.equal(many.filter((o) => o.status === 'created').length, 1);
        const winner = many.find((o) => o.status === 'created');
        assert.ok(winner && winner.status === 'created');
        for (const o of many) {
          if (o.status === 'created') continue;
          // The creator's later calls are unchanged; everybody else's are forbidden.
          assert.equal(o.status, o.status === 'unchanged' ? 'unchanged' : 'forbidden');
          if (o.status === 'unchanged') assert.equal(o.entry.owner, winner.entry.owner);
          if (o.status === 'forbidden') assert.notEqual(o.existing.owner, undefined);
        }
        assert.deepEqual(await store.count(), { agent: 1, 'mcp-server': 1 });
      } finally {
        await Promise.all(others.map((s) => s.close()));
      }
    });

    test('keeps durable task rows (the SDK layout), scoped, listed newest first, and prunes finished ones', async (t) => {
      const { store } = await openFresh(t, engine);
      const alice = { tenant: '', owner: 'alice' };
      const bob = { tenant: '', owner: 'bob' };
      const now = Date.now();
      const states = [
        'TASK_STATE_COMPLETED',
        'TASK_STATE_WORKING',
        'TASK_STATE_REJECTED',
        'TASK_STATE_FAILED',
        'TASK_STATE_INPUT_REQUIRED',
        'TASK_STATE_CANCELED',
      ];
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const id = crypto.randomUUID();
        ids.push(id);
        const task = Task.fromJSON({
          id,
          contextId: i % 2 ? 'ctx-odd' : 'ctx-even',
          // Tasks 0..5 are two hours old, 6..11 recent; index order is age order.
          status: { state: states[i % states.length], timestamp: new Date(now - (i < 6 ? 7_200_000 : 60_000) + i * 1000).toISOString() },
          artifacts: [{ artifactId: 'a1', name: 'registration', parts: [{ text: `result ${i}` }] }],
          history: [],
          metadata: { n: i },
        });
        await store.tasks.save(toTaskRow(alice, task));
      }
      const loaded = fromTaskRow((await store.tasks.load(alice, ids[0]!))!);
      assert.equal(loaded.id, ids[0]);
      const wire = Task.toJSON(loaded) as { status?: { state?: string }; artifacts?: { parts: { text?: string }[] }[] };
      assert.equal(wire.status?.state, 'TASK_STATE_COMPLETED');
      assert.equal(wire.artifacts?.[0]?.parts[0]?.text, 'result 0');
      assert.equal(await store.tasks.load(bob, ids[0]!), undefined, 'tasks are scoped to their owner');

      // Saving again overwrites (the SDK upserts on the task table's primary key).
      await store.tasks.save(toTaskRow(alice, Task.fromJSON({ ...wire, metadata: { n: 'again' } })));
      assert.deepEqual(fromTaskRow((await store.tasks.load(alice, ids[0]!))!).metadata, { n: 'again' });

      // Newest first, in keyset pages; filters; artifacts only when asked for.
      const all = { limit: 100, withArtifacts: false, withHistory: true };
      const first = await store.tasks.list(alice, { ...all, limit: 5 });
      assert.equal(first.total, 12);
      assert.deepEqual(first.rows.map((r) => r.id), [11, 10, 9, 8, 7].map((i) => ids[i]));
      assert.ok(first.rows.every((r) => r.artifacts === null));
      const last = first.rows[4]!;
      const rest = await store.tasks.list(alice, { ...all, before: { updated: last.status_last_updated, id: last.id } });
      assert.deepEqual(rest.rows.map((r) => r.id), [6, 5, 4, 3, 2, 1, 0].map((i) => ids[i]));
      const odd = await store.tasks.list(alice, { ...all, contextId: 'ctx-odd', state: 'TASK_STATE_WORKING', withArtifacts: true });
      assert.deepEqual(odd.rows.map((r) => r.id), [7, 1].map((i) => ids[i]));
      assert.equal(odd.total, 2);
      assert.ok(odd.rows[0]!.artifacts);
      const recent = await store.tasks.list(alice, { ...all, updatedAfter: now - 3_600_000 });
      assert.equal(recent.total, 6);
      assert.equal((await store.tasks.list(bob, all)).total, 0);

      // Nothing is old or beyond the count: nothing goes.
      assert.equal(await store.tasks.prune({ maxAgeMs: 86_400_000, maxCount: 100 }), 0);
      // Older than an hour: the finished ones among 0..5 (0 completed, 2 rejected, 3 failed, 5 canceled).
      assert.equal(await store.tasks.prune({ maxAgeMs: 3_600_000, maxCount: 100 }), 4);
      for (const i of [0, 2, 3, 5]) assert.equal(await store.tasks.load(alice, ids[i]!), undefined);
      for (const i of [1, 4]) assert.ok(await store.tasks.load(alice, ids[i]!), 'unfinished tasks are kept');
      // Keep the newest 3 of the 8 left (11, 10, 9): finished older ones go (6, 8); 7 is working.
      assert.equal(await store.tasks.prune({ maxAgeMs: 86_400_000, maxCount: 3 }), 2);
      const left = await store.tasks.list(alice, all);
      assert.deepEqual(new Set(left.rows.map((r) => r.id)), new Set([1, 4, 7, 9, 10, 11].map((i) => ids[i]!)));
      // maxAge 0: every finished task left (9 failed, 11 canceled) goes.
      assert.equal(await store.tasks.prune({ maxAgeMs: 0, maxCount: 0 }), 2);
    });

    test('a finished task is never saved back unfinished: the row stays, the save says so; finished over finished still replaces it', async (t) => {
      const { store } = await openFresh(t, engine);
      const alice = { tenant: '', owner: 'alice' };
      const id = crypto.randomUUID();
      const at = (state: string, text: string, taskId = id) =>
        Task.fromJSON({ id: taskId, contextId: 'ctx', status: { state, timestamp: new Date().toISOString(), message: { messageId: text, role: 'ROLE_AGENT', parts: [{ text }] } }, metadata: { text } });
      const stored = async () => {
        const row = (await store.tasks.load(alice, id))!;
        return [row.status_state, fromTaskRow(row).metadata?.text];
      };
      const saved = [
        await store.tasks.save(toTaskRow(alice, at('TASK_STATE_WORKING', 'started'))),
        await store.tasks.save(toTaskRow(alice, at('TASK_STATE_WORKING', 'event'))),
        await store.tasks.save(toTaskRow(alice, at('TASK_STATE_CANCELED', 'canceled'))),
      ];
      // A replica's outdated copy (a renewal read WORKING before the cancel): refused in the statement.
      saved.push(await store.tasks.save(toTaskRow(alice, at('TASK_STATE_WORKING', 'renewed'))));
      assert.deepEqual(await stored(), ['TASK_STATE_CANCELED', 'canceled']);
      saved.push(await store.tasks.save(toTaskRow(alice, Task.fromJSON({ id, contextId: 'ctx', metadata: { text: 'no status' } }))));
      assert.deepEqual(await stored(), ['TASK_STATE_CANCELED', 'canceled'], 'nor by one without a status');
      // A watch's end written over the CANCELED status the SDK stored (its matches dropped).
      saved.push(await store.tasks.save(toTaskRow(alice, at('TASK_STATE_CANCELED', 'ended'))));
      assert.deepEqual(await stored(), ['TASK_STATE_CANCELED', 'ended'], 'finished over finished');
      assert.deepEqual(saved, [true, true, true, false, false, true], 'what each save said');

      // Through the registry's task store: a change that would bring it back is not stored, and
      // the caller gets the finished task as stored.
      const tasks = new RegistryTaskStore(store.tasks, { maxTasks: 10, maxBytes: 1e6, ttlMs: 60_000 });
      const answer = await tasks.update(alice, id, (task) => {
        task.status = { ...task.status!, state: TaskState.TASK_STATE_WORKING };
        task.metadata = { text: 'renewed' };
      });
      assert.deepEqual([answer?.status?.state, answer?.metadata?.text], [TaskState.TASK_STATE_CANCELED, 'ended']);
      assert.deepEqual(await stored(), ['TASK_STATE_CANCELED', 'ended']);
      // The SDK's save of a copy it loaded WORKING, the task canceled meanwhile (another replica):
      // the stored task stands, and is what the next load answers.
      const context = new ServerCallContext({ user: { isAuthenticated: true, userName: 'alice' } });
      const other = crypto.randomUUID();
      await store.tasks.save(toTaskRow(alice, at('TASK_STATE_WORKING', 'started', other)));
      const copy = (await tasks.load(other, context))!;
      await store.tasks.save(toTaskRow(alice, at('TASK_STATE_CANCELED', 'canceled', other)));
      copy.metadata = { text: 'event' };
      await tasks.save(copy, context);
      assert.equal((await store.tasks.load(alice, other))?.status_state, 'TASK_STATE_CANCELED');
      assert.deepEqual([(await tasks.load(other, context))?.status?.state, (await tasks.load(other, context))?.metadata?.text], [TaskState.TASK_STATE_CANCELED, 'canceled']);
    });

    test('a value holding U+0000 is found nowhere; on PostgreSQL, whose text cannot hold it, a write of one is refused BAD_REQUEST, unsent', async (t) => {
      const { target, store } = await openFresh(t, engine);
      const alice = { tenant: '', owner: 'alice' };
      const nul = 'a\u0000b';
      const task = (id: string, contextId: string) =>
        toTaskRow(alice, Task.fromJSON({ id, contextId, status: { state: 'TASK_STATE_COMPLETED', timestamp: new Date().toISOString() }, artifacts: [], history: [] }));
      const watch = (id: string, contextId: string) => ({
        id, tenant: '', owner: 'alice', principal: 'alice', contextId, request: '{}', pushConfigs: '[]',
        createdAt: Date.now(), expiresAt: Date.now() + 60_000, seqFloor: 0, deliveredSeq: 0, position: 0,
      });
      const stored = await store.upsert(entryWrite('agent', 'https://nul.example.com/a2a'), actor('alice'));
      assert.ok(stored.status === 'created');
      await store.tasks.save(task(crypto.randomUUID(), 'ctx'));
      assert.equal(await store.watches.create(watch(crypto.randomUUID(), 'ctx'), 'holder', Date.now() + 60_000), 'created');

      // Lookups: as of a value nothing has, on both engines.
      assert.equal(await store.tasks.load(alice, nul), undefined);
      assert.equal(await store.tasks.load({ tenant: '', owner: nul }, nul), undefined);
      assert.deepEqual(await store.tasks.list(alice, { contextId: nul, limit: 10, withArtifacts: false, withHistory: false }), { rows: [], total: 0 });
      await store.tasks.remove(alice, nul);
      assert.equal(await store.watches.get(nul), undefined);
      await store.watches.update(nul, { expiresAt: Date.now() });
      await store.watches.remove(nul);
      assert.deepEqual(await store.watches.claim('holder', Date.now(), Number.MAX_SAFE_INTEGER, nul), []);
      await store.watches.release('holder', nul);
      await store.watches.releaseUntil('holder', nul, Date.now());
      assert.equal(await store.watches.pausedUntil(nul, Date.now()), undefined);
      assert.equal(await store.watches.acknowledge(nul, 'holder'), false);
      await store.watches.requestHandover?.(nul);
      await store.watches.declineHandover?.(nul);
      assert.equal(await store.watches.countFor(nul, Date.now()), 0);
      assert.deepEqual((await store.list({ owner: nul, limit: 10 })).entries, []);
      assert.equal((await store.list({ owner: 'alice', limit: 10 })).entries.length, 1);

      // Writes: SQLite stores it; PostgreSQL refuses it as the request's, before sending anything.
      const kid = { ...entryWrite('agent', 'https://nul-kid.example.com/a2a'), verification: { verified: true, kid: nul, alg: 'ES256', signatures: [{ status: 'verified' as const, kid: nul, alg: 'ES256' }], keyset: 'k' } };
      const writes: [string, () => Promise<unknown>][] = [
        ['a task in a context', () => store.tasks.save(task(crypto.randomUUID(), nul))],
        ['a watch in a context', () => store.watches.create(watch(crypto.randomUUID(), nul), 'holder', Date.now() + 60_000)],
        ['an entry verified by a kid', () => store.upsert(kid, actor('alice'))],
      ];
      const seq = await store.lastChangeSeq();
      for (const [what, write] of writes) {
        if (engine.name === 'sqlite') {
          await write();
          continue;
        }
        await assert.rejects(write(), (error: unknown) => {
          assert.ok(error instanceof UnstorableTextError, `${what}: ${String(error)}`);
          assert.equal(error.code, 'BAD_REQUEST');
          assert.equal(error.message, `"a\\u0000b" holds the character U+0000 (NUL) at position 1, which the registry's storage (PostgreSQL) cannot hold: remove it.`);
          return true;
        });
      }
      if (engine.name === 'postgres') {
        assert.equal(await store.lastChangeSeq(), seq, 'nothing written');
        assert.deepEqual(await target.raw('SELECT count(*)::int AS n FROM tasks'), [{ n: 1 }]);
        assert.deepEqual(await target.raw('SELECT count(*)::int AS n FROM watches'), [{ n: 1 }]);
        assert.equal(store.fault, undefined, 'the client\'s value, not a fault of storage');
      }
      // The store goes on as before (the refused statements' connections too).
      await store.tasks.save(task(crypto.randomUUID(), 'ctx'));
      assert.equal((await store.tasks.list(alice, { contextId: 'ctx', limit: 10, withArtifacts: false, withHistory: false })).total, 2);
    });

    test('PostgreSQL migration 14: task and push config ids of any length, their tables and the tasks kept, neither rewritten', async (t) => {
      if (engine.name !== 'postgres') return t.skip('PostgreSQL only: SQLite\'s column types bound nothing');
      const { target, store } = await openFresh(t, engine);
      const alice = { tenant: '', owner: 'alice' };
      const saved = (id: string, contextId: string) =>
        toTaskRow(alice, Task.fromJSON({ id, contextId, status: { state: 'TASK_STATE_COMPLETED', timestamp: new Date().toISOString() }, artifacts: [], history: [] }));
      const before = crypto.randomUUID();
      await store.tasks.save(saved(before, 'ctx-before'));
      await store.close();
      // Back to version 13: the SDK's varchar columns and its context index.
      const c = 'COLLATE "C"';
      await target.raw(`ALTER TABLE tasks ALTER COLUMN tenant TYPE varchar(255) ${c}, ALTER COLUMN owner TYPE varchar(255) ${c}, ALTER COLUMN id TYPE varchar(36) ${c},
        ALTER COLUMN context_id TYPE varchar(36) ${c}, ALTER COLUMN status_state TYPE varchar(255) ${c}, ALTER COLUMN protocol_version TYPE varchar(255)`);
      await target.raw(`ALTER TABLE push_notification_configs ALTER COLUMN tenant TYPE varchar(255) ${c}, ALTER COLUMN owner TYPE varchar(255) ${c},
        ALTER COLUMN task_id TYPE varchar(36) ${c}, ALTER COLUMN config_id TYPE varchar(36) ${c}, ALTER COLUMN protocol_version TYPE varchar(255)`);
      await target.raw('DROP INDEX tasks_scope_context_prefix_updated_idx');
      await target.raw('CREATE INDEX tasks_scope_context_updated_idx ON tasks (tenant, owner, context_id, status_last_updated, id)');
      const version = POSTGRES_MIGRATIONS.find((m) => m.name === 'task and push config columns as text')!.version;
      await target.raw(`DELETE FROM registry_migrations WHERE version >= ${version}`);
      const files = async () => (await target.raw(`SELECT relname, pg_relation_filenode(oid) AS f FROM pg_class WHERE relname IN ('tasks', 'tasks_pkey', 'push_notification_configs') ORDER BY relname`)) as unknown[];
      const filesBefore = await files();

      const upgraded = target.makeStore();
      await upgraded.open();
      t.after(() => upgraded.close());
      assert.deepEqual(await files(), filesBefore, 'no table or key rewritten: a moment\'s lock, as a release before this one reads on');
      const columns = (await target.raw(
        `SELECT table_name || '.' || column_name || ' ' || data_type || coalesce(' ' || collation_name, '') AS c FROM information_schema.columns
         WHERE table_name IN ('tasks', 'push_notification_configs') AND data_type NOT IN ('bigint') ORDER BY table_name, ordinal_position`,
      )) as { c: string }[];
      assert.deepEqual(columns.map((r) => r.c), [
        'push_notification_configs.tenant text C', 'push_notification_configs.owner text C', 'push_notification_configs.task_id text C',
        'push_notification_configs.config_id text C', 'push_notification_configs.config_data text', 'push_notification_configs.protocol_version text',
        'tasks.tenant text C', 'tasks.owner text C', 'tasks.id text C', 'tasks.context_id text C', 'tasks.status_state text C',
        'tasks.status text', 'tasks.artifacts text', 'tasks.history text', 'tasks.metadata text', 'tasks.protocol_version text',
      ]);
      assert.deepEqual(
        (await target.raw(`SELECT indexname FROM pg_indexes WHERE tablename = 'tasks' ORDER BY indexname`)).map((r) => (r as { indexname: string }).indexname),
        ['tasks_pkey', 'tasks_scope_context_prefix_updated_idx', 'tasks_scope_updated_idx', 'tasks_updated_idx'],
      );
      // 1,024 characters of 4 bytes each: 4 KB, which no btree entry holds whole.
      const long = Array.from({ length: 1024 }, (_, i) => String.fromCodePoint(0x1f300 + ((i * 7919) % 700))).join('');
      const after = crypto.randomUUID();
      await upgraded.tasks.save(saved(after, long));
      const query = { limit: 10, withArtifacts: false, withHistory: false };
      assert.deepEqual((await upgraded.tasks.list(alice, { ...query, contextId: long })).rows.map((r) => r.id), [after]);
      assert.deepEqual((await upgraded.tasks.list(alice, { ...query, contextId: 'ctx-before' })).rows.map((r) => r.id), [before]);
      assert.equal((await upgraded.tasks.load(alice, after))?.context_id, long);
      // A release before this one lists by the column alone (no index of it left): the same tasks.
      assert.deepEqual(await target.raw(`SELECT id FROM tasks WHERE tenant = '' AND owner = 'alice' AND context_id = 'ctx-before'`), [{ id: before }]);
      // ListTasks by context can read the new index (as a table of many tasks would; two are read faster whole).
      const client = new pg.Client({ connectionString: target.url });
      await client.connect();
      try {
        await client.query('SET enable_seqscan = off');
        const plan = await client.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT id FROM tasks WHERE tenant = '' AND owner = 'alice' AND left(context_id, 128) = left($1, 128) AND context_id = $1 ORDER BY status_last_updated DESC, id DESC`,
          ['ctx-before'],
        );
        assert.match(plan.rows.map((r) => r['QUERY PLAN']).join('\n'), /Index Scan Backward using tasks_scope_context_prefix_updated_idx/);
      } finally {
        await client.end();
      }
    });

    test("prunes beyond the count by owner: the owners holding the most lose their oldest, down to a share, and one holding fewer loses none", async (t) => {
      const { store } = await openFresh(t, engine);
      const now = Date.now();
      let n = 0;
      /** A task of `owner`, `minutesAgo` old (finished unless said), stored; its id. */
      const task = async (owner: string, minutesAgo: number, state = 'TASK_STATE_COMPLETED'): Promise<string> => {
        const id = `task-${owner}-${++n}`;
        const status = { state, timestamp: new Date(now - minutesAgo * 60_000).toISOString() };
        await store.tasks.save(toTaskRow({ tenant: '', owner }, Task.fromJSON({ id, contextId: 'c', status, artifacts: [], history: [] })));
        return id;
      };
      // alice's acknowledgement is the oldest task of all, carol's three next; bob's flood of
      // eleven (one still running, his oldest) comes after them.
      const alice = [await task('alice', 100)];
      const carol = [await task('carol', 90), await task('carol', 89), await task('carol', 88)];
      const bobRunning = await task('bob', 80, 'TASK_STATE_WORKING');
      const bob: string[] = [];
      for (let i = 0; i < 10; i++) bob.push(await task('bob', 70 - i));
      const ids = async (owner: string) => (await store.tasks.list({ tenant: '', owner }, { limit: 100, withArtifacts: false, withHistory: false })).rows.map((r) => r.id);
      // 15 tasks, 8 kept: alice (1) and carol (3) keep theirs, bob keeps his newest 4 (8 - 1 - 3)
      // and his running one. Before, the newest 8 of the table were kept: all bob's.
      assert.equal(await store.tasks.prune({ maxAgeMs: 86_400_000, maxCount: 8 }), 6);
      assert.deepEqual(await ids('alice'), alice);
      assert.deepEqual(await ids('carol'), [...carol].reverse());
      assert.deepEqual(await ids('bob'), [...bob.slice(6).reverse(), bobRunning]);
      // Stable: the next round removes nothing (bob's running task counts, and is not removed).
      assert.equal(await store.tasks.prune({ maxAgeMs: 86_400_000, maxCount: 8 }), 0);
      // Two owners over an equal split share it: carol keeps 2 of her 3, bob 2 and his running one.
      assert.equal(await store.tasks.prune({ maxAgeMs: 86_400_000, maxCount: 5 }), 3);
      assert.deepEqual(await ids('alice'), alice);
      assert.deepEqual(await ids('carol'), [carol[2], carol[1]]);
      assert.deepEqual(await ids('bob'), [bob[9], bob[8], bobRunning]);
    });

    test('holds an owner to its entry quota atomically, however many registrations race', async (t) => {
      const { target, store } = await openFresh(t, engine);
      // A second instance: on PostgreSQL another replica, on SQLite another connection to the file.
      const other = target.makeStore();
      await other.open();
      t.after(() => other.close());
      const quota = { maxEntriesPerOwner: 5 };
      const outcomes = await Promise.all(
        Array.from({ length: 24 }, (_, i) => (i % 2 ? store : other).upsert(entryWrite('agent', `https://quota.example.com/${i}`), actor('alice'), quota)),
      );
      assert.equal(outcomes.filter((o) => o.status === 'created').length, 5, 'exactly the quota is created, never more');
      const refused = outcomes.filter((o) => o.status === 'quota-exceeded');
      assert.equal(refused.length, 19);
      assert.deepEqual(refused[0], { status: 'quota-exceeded', quota: 'entries', limit: 5 });
      assert.equal((await store.list({ owner: 'alice', limit: 100 })).entries.length, 5);
      // Updating an entry it has is not a new one; another owner has its own quota; no quota, no limit.
      const mine = outcomes.find((o) => o.status === 'created')!;
      assert.ok(mine.status === 'created');
      assert.equal((await store.upsert(entryWrite('agent', mine.entry.identityUrl, '2'), actor('alice'), quota)).status, 'updated');
      assert.equal((await store.upsert(entryWrite('agent', 'https://quota.example.com/bob'), actor('bob'), quota)).status, 'created');
      assert.equal((await store.upsert(entryWrite('agent', 'https://quota.example.com/more'), actor('alice'))).status, 'created');
    });

    test('an owner one entry short of its quota registering one new agent several times at once: one entry, the others update it, none is refused the quota', async (t) => {
      const { target, store } = await openFresh(t, engine);
      const other = target.makeStore();
      await other.open();
      t.after(() => other.close());
      const quota = { maxEntriesPerOwner: 3 };
      for (let i = 0; i < 2; i++) assert.equal((await store.upsert(entryWrite('agent', `https://edge.example.com/${i}`), actor('alice'), quota)).status, 'created');
      const url = 'https://edge.example.com/last';
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 ? store : other).upsert({ ...entryWrite('agent', url, `v${i}`), identityAliases: otherSpellings(url) }, actor('alice'), quota)),
      );
      assert.deepEqual(outcomes.map((o) => o.status).sort(), ['created', 'updated', 'updated', 'updated', 'updated', 'updated']);
      assert.equal((await store.count()).agent, 3);
      assert.equal((await store.upsert(entryWrite('agent', 'https://edge.example.com/more'), actor('alice'), quota)).status, 'quota-exceeded');
    });

    test('keeps at most maxRevisions revisions of an entry; numbering goes on', async (t) => {
      const { store } = await openFresh(t, engine);
      const url = 'https://revisions.example.com/a';
      const quota = { maxRevisions: 3 };
      let id = '';
      for (let v = 1; v <= 7; v++) {
        const outcome = await store.upsert(entryWrite('agent', url, `v${v}`), actor('alice'), quota);
        assert.ok('entry' in outcome);
        assert.equal(outcome.entry.revision, v);
        id = outcome.entry.id;
      }
      assert.equal(await store.oldestRevision(id), 5);
      for (const revision of [1, 2, 3, 4]) assert.equal(await store.get(id, revision), undefined, `revision ${revision} left the history`);
      for (const revision of [5, 6, 7]) assert.equal((await store.get(id, revision))?.revision, revision);
      assert.equal((await store.get(id))?.revision, 7);
      assert.equal(await store.oldestRevision(crypto.randomUUID()), undefined);
      // A refresh (a revision the registry writes from the entry's source) trims the same way.
      const refreshed = await store.revise(id, entryWrite('agent', url, 'v8'), 7, quota);
      assert.equal(refreshed.status, 'updated');
      assert.equal(await store.oldestRevision(id), 6);
    });

    test('trims the change log and says how far; the sequence never goes back', async (t) => {
      const { target, store } = await openFresh(t, engine);
      for (let i = 0; i < 4; i++) await store.upsert(entryWrite('agent', `https://trim.example.com/${i}`), actor('alice'));
      const last = await store.lastChangeSeq();
      assert.equal(await store.changesTrimmedThrough(), 0);
      assert.equal(await store.trimChanges(60_000), 0, 'nothing is old enough');
      // Age the first three changes (as if written two days ago).
      const old = new Date(Date.now() - 2 * 86_400_000).toISOString();
      const firstThree = (await store.changesSince(0, 3)).map((c) => c.seq);
      await target.raw(`UPDATE changes SET at = '${old}' WHERE seq <= ${firstThree[2]}`);
      assert.equal(await store.trimChanges(86_400_000), 3);
      assert.equal(await store.changesTrimmedThrough(), firstThree[2]);
      assert.deepEqual((await store.changesSince(0, 10)).map((c) => c.seq), [last]);
      assert.equal(await store.lastChangeSeq(), last);
      // Trimmed to nothing, the sequence still stands where it was, and goes on from there.
      await target.raw(`UPDATE changes SET at = '${old}'`);
      assert.equal(await store.trimChanges(86_400_000), 1);
      assert.equal(await store.lastChangeSeq(), last);
      await store.upsert(entryWrite('agent', 'https://trim.example.com/next'), actor('alice'));
      assert.ok((await store.lastChangeSeq()) > last);
      await store.reclaimSpace();
    });

    aloneTest("PostgreSQL: the change log is aged on the database server's clock, which dated it, not the registry host's", async (t) => {
      if (engine.name !== 'postgres') return; // SQLite: one clock dates and ages them
      const { store } = await openFresh(t, engine);
      await store.upsert(entryWrite('agent', 'https://trim-skew.example.com/a2a'), actor('alice'));
      // The registry's host an hour ahead of the database server's; a minute's retention.
      t.mock.timers.enable({ apis: ['Date'], now: Date.now() + 3_600_000 });
      let trimmed: number;
      try {
        trimmed = await store.trimChanges(60_000);
      } finally {
        t.mock.timers.reset();
      }
      assert.equal(trimmed, 0, 'a change written a moment ago is kept');
      assert.equal(await store.changesTrimmedThrough(), 0);
    });

    test('trims a change log and prunes tasks too large for one statement, batch by batch, the watermark moving with each', async (t) => {
      // A backlog (housekeeping held up for days, or a busy registry): on PostgreSQL one DELETE of
      // it outlasted the statement timeout, was cancelled and rolled back, every round, for ever.
      // What bounds a statement's time is the rows it deletes: on PostgreSQL a statement-level
      // trigger records how many each DELETE removed, and none may remove more than a batch
      // (DELETE_BATCH_ROWS). Before, the test set a statement timeout calibrated to cancel one
      // DELETE of everything (a third of a timed one, tens of milliseconds): on a loaded machine a
      // batch, or a read, outlasted it too, and the test failed in CI again and again.
      const { target } = await openFresh(t, engine);
      // Many batches of either table on both engines (5,000 rows a batch on PostgreSQL, 1,000 on
      // SQLite): 12 of changes and 6 of tasks on each, as the checks below need (more than 10 and
      // more than 5). SQLite had 30,000 rows, 2.5 times the batches the checks look for, at 2.5 times the cost.
      const rows = engine.name === 'postgres' ? 60_000 : 12_000;
      const old = new Date(Date.now() - 2 * 86_400_000).toISOString();
      if (engine.name === 'postgres') {
        await target.raw(`INSERT INTO changes (entry_id, op, at) SELECT gen_random_uuid(), 'upsert', '${old}' FROM generate_series(1, ${rows})`);
        await target.raw(
          `INSERT INTO tasks (tenant, owner, id, context_id, status_last_updated, status_state, status)
           SELECT '', 'alice', 'bulk-' || i, 'c', i, 'TASK_STATE_COMPLETED', '{}' FROM generate_series(1, ${rows / 2}) i`,
        );
        await target.raw('CREATE TABLE deletes_seen (tbl text NOT NULL, removed bigint NOT NULL)');
        await target.raw(
          `CREATE FUNCTION note_deletes() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN INSERT INTO deletes_seen SELECT TG_TABLE_NAME, count(*) FROM gone; RETURN NULL; END $$`,
        );
        for (const table of ['changes', 'tasks']) {
          await target.raw(`CREATE TRIGGER note_${table}_deletes AFTER DELETE ON ${table} REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION note_deletes()`);
        }
      } else {
        const series = (n: number) => `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${n})`;
        await target.raw(`${series(rows)} INSERT INTO changes (entry_id, op, at) SELECT lower(hex(randomblob(16))), 'upsert', '${old}' FROM n`);
        await target.raw(
          `${series(rows / 2)} INSERT INTO tasks (tenant, owner, id, context_id, status_last_updated, status_state, status)
           SELECT '', 'alice', 'bulk-' || i, 'c', i, 'TASK_STATE_COMPLETED', '{}' FROM n`,
        );
      }
      const store = target.makeStore({});
      await store.open();
      t.after(() => store.close());
      const through = await store.lastChangeSeq();
      await store.upsert(entryWrite('agent', 'https://backlog.example.com/a'), actor('alice')); // recent: kept
      const batches: number[] = [];
      const trimmed = await store.trimChanges(86_400_000, { progress: (removed) => batches.push(removed) });
      assert.equal(trimmed, rows);
      assert.ok(batches.length > 10, `trimmed in batches (${batches.length})`);
      assert.equal(await store.changesTrimmedThrough(), through);
      assert.equal((await store.changesSince(0, 10)).length, 1, 'the recent change is kept');
      const pruned: number[] = [];
      assert.equal(await store.tasks.prune({ maxAgeMs: 86_400_000, maxCount: 0 }, { progress: (n) => pruned.push(n) }), rows / 2);
      assert.ok(pruned.length > 5, `pruned in batches (${pruned.length})`);
      if (engine.name === 'postgres') {
        // Every row went, none in a statement of more than a batch (the last may find none left).
        const seen = (await target.raw(
          'SELECT tbl, count(*) FILTER (WHERE removed > 0)::int AS statements, max(removed)::int AS most, sum(removed)::int AS removed FROM deletes_seen GROUP BY tbl ORDER BY tbl',
        )) as unknown[];
        assert.deepEqual(seen, [
          { tbl: 'changes', statements: rows / DELETE_BATCH_ROWS, most: DELETE_BATCH_ROWS, removed: rows },
          { tbl: 'tasks', statements: rows / 2 / DELETE_BATCH_ROWS, most: DELETE_BATCH_ROWS, removed: rows / 2 },
        ]);
      }
      assert.equal((await store.tasks.list({ tenant: '', owner: 'alice' }, { limit: 10, withArtifacts: false, withHistory: false })).total, 0);
      // Shutdown stops a deletion between two batches; what went stays gone.
      await target.raw(`UPDATE changes SET at = '${old}'`);
      const stop = new AbortController();
      stop.abort();
      assert.equal(await store.trimChanges(0, { signal: stop.signal }), 0);
      assert.equal(await store.trimChanges(0), 1);
    });

    aloneTest("gives a large prune's space back to the file system a little at a time: the event loop is never held for all of it", async (t) => {
      if (engine.name !== 'sqlite') return; // PostgreSQL's autovacuum does this on the server
      const { target, store } = await openFresh(t, engine);
      // About 12 MB freed, 12 or more transactions of 1 MiB (RECLAIM_BATCH_PAGES): each holds the
      // loop a twelfth of the time or so, far under the third the check allows, while giving it all
      // back at once holds it for all of it (20,000 rows, 40 MB, made no stronger a check at 3 times the cost).
      const rows = 6000;
      await target.raw(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows})
         INSERT INTO tasks (tenant, owner, id, context_id, status_last_updated, status_state, status, artifacts)
         SELECT '', 'alice', 'bulk-' || i, 'c', i, 'TASK_STATE_COMPLETED', '{}', hex(randomblob(1000)) FROM n`,
      );
      assert.equal(await store.tasks.prune({ maxAgeMs: 0, maxCount: 0 }), rows);
      // How long the event loop was held at once while the space went back (about 12 MB).
      let held = 0;
      let tick = performance.now();
      const ticker = setInterval(() => {
        held = Math.max(held, performance.now() - tick);
        tick = performance.now();
      }, 5);
      const started = performance.now();
      try {
        await store.reclaimSpace();
      } finally {
        clearInterval(ticker);
      }
      const took = performance.now() - started;
      assert.ok(held < took / 3, `the loop was held at most ${Math.round(held)} ms at once, of ${Math.round(took)} ms`);
      assert.deepEqual(await target.raw('PRAGMA freelist_count'), [{ freelist_count: 0 }], 'every free page went back');
    });

    aloneTest('writes waiting for a busy pool wait their turn, though the wall clock steps forward (NTP) meanwhile; contention is never an error or a storage fault', async (t) => {
      if (engine.name !== 'postgres') return; // one SQLite connection, no pool
      const target = await engine.fresh();
      const setup = target.makeStore();
      await setup.open();
      const created = await setup.upsert(entryWrite('agent', 'https://busy.example.com/a2a'), actor('alice'));
      assert.ok(created.status === 'created');
      await setup.close();
      // Two connections, and a pool wait that times out after 250 ms: the tenth write queues far longer.
      // (Not less: the same limit bounds opening a connection, which took over 100 ms on a loaded CI machine.)
      const store = target.makeStore({ poolMax: 2, connectTimeoutMs: 250 });
      await store.open();
      t.after(() => store.close());
      const holder = new pg.Client({ connectionString: target.url });
      await holder.connect();
      t.after(() => holder.end());
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM entries WHERE id = $1 FOR UPDATE', [created.entry.id]);
      const writes = Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => store.upsert(entryWrite('agent', 'https://busy.example.com/a2a', `v${i + 2}`), actor('alice'))),
      );
      // Every connection is now stuck behind the row lock and the others wait for the pool, past its timeout.
      await new Promise((r) => setTimeout(r, 500));
      // Meanwhile the wall clock steps an hour forward: the waits are not over for that.
      const realNow = Date.now;
      Date.now = () => realNow() + 3_600_000;
      t.after(() => void (Date.now = realNow));
      await new Promise((r) => setTimeout(r, 500));
      await holder.query('COMMIT');
      const outcomes = await writes;
      Date.now = realNow;
      assert.deepEqual(outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason)), []);
      assert.ok(outcomes.every((o) => o.status === 'fulfilled' && o.value.status === 'updated'));
      assert.equal(store.fault, undefined, 'contention is not a storage fault');
    });

    test('a deadlock the store retries leaves its connection in the pool: the retry runs on the same session, no new connection is opened', async (t) => {
      if (engine.name !== 'postgres') return; // one SQLite connection, no pool
      const target = await engine.fresh();
      // This database's sessions look for a deadlock after 200 ms of waiting (not a second).
      await target.raw(`DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET deadlock_timeout = 200', current_database()); END $$`);
      const store = target.makeStore({ poolMax: 1 });
      await store.open();
      t.after(() => store.close());
      const created = await store.upsert(entryWrite('agent', 'https://deadlock.example.com/a2a'), actor('alice'));
      assert.ok(created.status === 'created');
      const sessions = () => poolSessions(target);
      const before = await sessions();
      assert.equal(before.length, 1);
      const holder = new pg.Client({ connectionString: target.url });
      await holder.connect();
      t.after(() => holder.end());
      // The holder's session looks only after 10 s: the store's, waiting first, finds the deadlock and is failed (40P01).
      await holder.query("SET deadlock_timeout = '10s'");
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM entries WHERE id = $1 FOR UPDATE', [created.entry.id]);
      // A removal takes the entry's URL claims, then the entry: it waits for the holder, the claims taken...
      const removal = store.remove(created.entry.id, actor('alice'));
      while (Number((await holder.query('SELECT count(*) AS n FROM pg_locks WHERE pid = $1 AND NOT granted', [before[0]])).rows[0].n) === 0) {
        await new Promise((r) => setTimeout(r, 5));
      }
      // ...and the holder waits for the claims: a deadlock, which fails the store's transaction, and the store runs it again.
      await holder.query('SELECT url FROM url_claims FOR UPDATE');
      await holder.query('COMMIT');
      assert.equal((await removal).status, 'deleted');
      // Before, the connection was discarded after the deadlock and the retry opened a new one.
      assert.deepEqual(await sessions(), before, 'the retry ran on the connection the deadlock was found on');
    });

    test('a read refused after the statement timeout (a table another session holds) leaves its connection in the pool: the next statement runs on the same session', async (t) => {
      if (engine.name !== 'postgres') return; // one SQLite connection, no pool
      const { target, store } = await openFresh(t, engine, { statementTimeoutMs: 200 });
      const sessions = () => poolSessions(target);
      const before = await sessions();
      assert.equal(before.length, 1);
      const holder = new pg.Client({ connectionString: target.url });
      await holder.connect();
      t.after(() => holder.end());
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE entries IN ACCESS EXCLUSIVE MODE');
      const id = '00000000-0000-4000-8000-000000000001';
      await assert.rejects(store.get(id), /^StorageUnavailableError: The read waited too long for a lock/);
      await holder.query('ROLLBACK');
      assert.equal(await store.get(id), undefined);
      // Before, the connection was discarded after the refusal and the next read opened a new one.
      assert.deepEqual(await sessions(), before, 'the next read ran on the connection the refused one ran on');
    });

    test('a request waiting for a new connection that is slow to open is served by one freed meanwhile: not refused as if the database were unreachable', async (t) => {
      if (engine.name !== 'postgres') return; // one SQLite connection, no pool
      const target = await engine.fresh();
      // The database reached through a proxy that, once the stores are open, lets no new connection
      // through (a loaded host slow to open one); the connection each store opened serves on.
      let holdNew = false;
      const sockets = new Set<net.Socket>();
      const upstream = new URL(target.url!);
      const proxy = net.createServer((socket) => {
        sockets.add(socket);
        if (holdNew) return;
        const server = net.connect(Number(upstream.port), upstream.hostname);
        sockets.add(server);
        socket.pipe(server).pipe(socket);
        socket.on('error', () => server.destroy());
        server.on('error', () => socket.destroy());
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      t.after(() => {
        for (const socket of sockets) socket.destroy();
        proxy.close();
      });
      const viaProxy = new URL(target.url!);
      viaProxy.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
      // Two stores, one for each way a request comes to wait for a new connection, side by side (one
      // wait for both). A second's wait: no shorter, or a loaded machine's opening of the store's
      // own first connection, bound by the same limit, fails the test.
      const openStore = async () => {
        const store = new PostgresStore({ url: viaProxy.toString(), poolMax: 2, connectTimeoutMs: 1000 });
        await store.open();
        t.after(() => store.close());
        return store;
      };
      const [queuing, direct] = await Promise.all([openStore(), openStore()]);
      const write = (store: RegistryStore, host: string, version?: string) => store.upsert(entryWrite('agent', `https://${host}.example.com/a2a`, version), actor('alice'));
      const created = await write(queuing, 'direct');
      assert.ok(created.status === 'created');
      assert.equal((await write(queuing, 'queued')).status, 'created');
      holdNew = true;
      const outcomes = (
        await Promise.all([
          // Two writes at once: the first takes the open connection, the second waits for a new one,
          // which does not open; the first is done long before that wait runs out.
          Promise.allSettled([write(queuing, 'queued', 'v2'), write(queuing, 'queued', 'v3')]),
          // A write that asks while the open connection is busy (the pool has room: a new one is
          // opened for it), then freed.
          (async () => {
            const holder = new pg.Client({ connectionString: target.url });
            await holder.connect();
            t.after(() => holder.end());
            await holder.query('BEGIN');
            await holder.query('SELECT id FROM entries WHERE id = $1 FOR UPDATE', [created.entry.id]);
            const first = write(direct, 'direct', 'v2');
            await new Promise((r) => setTimeout(r, 20));
            const second = write(direct, 'direct', 'v3');
            await new Promise((r) => setTimeout(r, 20));
            await holder.query('COMMIT');
            return Promise.allSettled([first, second]);
          })(),
        ])
      ).flat();
      assert.deepEqual(outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason)), []);
      assert.ok(outcomes.every((o) => o.status === 'fulfilled' && o.value.status === 'updated'));
      assert.equal(queuing.fault, undefined, 'the database answered throughout');
      assert.equal(direct.fault, undefined, 'the database answered throughout');
    });

    test('pings while open', async (t) => {
      const { store } = await openFresh(t, engine);
      assert.equal(await store.ping(), true);
    });

    test('announces committed changes to subscribers where other processes write', async (t) => {
      const { target, store } = await openFresh(t, engine);
      if (engine.name === 'sqlite') {
        // One process owns the file: nothing to subscribe to (see RegistryStore).
        assert.equal(store.subscribeToChanges, undefined);
        return;
      }
      assert.ok(store.subscribeToChanges);
      const heard: (number | undefined)[] = [];
      const errors: Error[] = [];
      const subscription = await store.subscribeToChanges((seq) => heard.push(seq), (err) => errors.push(err));
      // A write from another instance (another replica, as far as the database knows).
      const other = target.makeStore();
      await other.open();
      try {
        const created = await other.upsert(entryWrite('agent', 'https://notify.example.com/a'), actor('alice'));
        assert.ok(created.status === 'created');
        await store.upsert(entryWrite('agent', 'https://notify.example.com/a'), actor('alice')); // unchanged: silent
        await other.remove(created.entry.id, actor('alice'));
        const last = await store.lastChangeSeq();
        const until = Date.now() + 5000;
        while (!heard.includes(last) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
        assert.deepEqual(heard, (await store.changesSince(0, 10)).map((c) => c.seq));
        assert.deepEqual(errors, []);
      } finally {
        await other.close();
        await subscription.close();
      }
      // Closed: no further callbacks.
      const count = heard.length;
      await store.upsert(entryWrite('agent', 'https://notify.example.com/b'), actor('alice'));
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(heard.length, count);
    });
}

describe('createStore', () => {
  it('picks PostgreSQL for postgres:// and postgresql:// URLs, SQLite otherwise', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'registry-create-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    assert.equal(createStore({ dataDir: dir }).engine, 'sqlite');
    assert.equal(createStore({ dataDir: dir, databaseUrl: '' }).engine, 'sqlite');
    assert.equal(createStore({ dataDir: dir, databaseUrl: 'postgres://u@localhost/db' }).engine, 'postgres');
    assert.equal(createStore({ dataDir: dir, databaseUrl: 'postgresql://u@localhost/db' }).engine, 'postgres');
    const sqlite = createStore({ dataDir: join(dir, 'nested') });
    await sqlite.open();
    assert.equal(await sqlite.ping(), true);
    await sqlite.close();
    const reopened = new Database(join(dir, 'nested', 'registry.db'), { readonly: true });
    assert.equal((reopened.pragma('journal_mode', { simple: true }) as string).toLowerCase(), 'wal');
    reopened.close();
  });
});

describe('SQLite: the change numbers this process wrote', () => {
  it('are forgotten as the log is trimmed, though nothing else walks it (no saved index, no watch): every one was kept until a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'registry-own-changes-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const store = new SqliteStore({ file: join(dir, 'registry.db') });
    await store.open();
    cleanups.push(() => store.close());
    store.ownChanges.startAt(0);
    for (let i = 0; i < 20; i++) await store.upsert(entryWrite('agent', `https://own-changes-${i}.example.com/a`), actor('alice'));
    assert.equal(store.ownChanges.size, 20);
    // Housekeeping's round, with nothing old enough to trim yet.
    assert.equal(await store.trimChanges(86_400_000), 0);
    assert.equal(store.ownChanges.size, 0, 'forgotten once walked past');
  });
});
