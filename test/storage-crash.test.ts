/**
 * Crash tests: what a store acknowledged must survive the writer being killed (SIGKILL, no
 * chance to flush or close) and, on PostgreSQL, the database server restarting under a live
 * store.
 *
 * The kill moment is random but seeded: set STORAGE_CRASH_SEED to replay a failing run (the
 * seed in use is printed as a test diagnostic).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import type { RegistryStore } from '../src/storage/types.js';
import { SqliteStore } from '../src/storage/sqlite/index.js';
import { PostgresStore, listenForChanges } from '../src/storage/postgres/index.js';
import { startPostgres, type TestPostgres } from './support/postgres.js';
import { actor, entryWrite, seededRandom } from './support/store-fixtures.js';
import { RUN_TYPESCRIPT } from './support/typescript-source.js';

const here = dirname(fileURLToPath(import.meta.url));
const writerScript = join(here, 'support', 'storage-writer.ts');
const seed = Number(process.env.STORAGE_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const random = seededRandom(seed);

interface Ack {
  id: string;
  revision: number;
  contentHash: string;
}

/**
 * Runs the writer until it has acknowledged `minAcks` writes, waits a random extra moment,
 * and SIGKILLs it. Returns every acknowledgement it printed.
 */
async function runAndKill(args: string[], minAcks: number, extraMs: number): Promise<Ack[]> {
  const child = spawn(process.execPath, [...RUN_TYPESCRIPT, writerScript, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const acks: Ack[] = [];
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(signal ?? code)),
  );
  let killTimer: NodeJS.Timeout | undefined;
  const lines = createInterface({ input: child.stdout });
  const drained = new Promise<void>((resolve) => lines.once('close', resolve));
  lines.on('line', (line) => {
    const [word, id, revision, contentHash] = line.split(' ');
    if (word !== 'ack' || !id || !revision || !contentHash) return;
    acks.push({ id, revision: Number(revision), contentHash });
    if (acks.length === minAcks) killTimer = setTimeout(() => child.kill('SIGKILL'), extraMs);
  });
  // A writer that never gets going must not hang the suite.
  const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const how = await exited;
  clearTimeout(guard);
  clearTimeout(killTimer);
  // Drain what the pipe still holds: those lines were acknowledged before the kill.
  await drained;
  assert.equal(how, 'SIGKILL', `writer ended by itself (${String(how)}): ${stderr}`);
  assert.ok(acks.length >= minAcks, `writer acknowledged only ${acks.length} writes: ${stderr}`);
  return acks;
}

/** Every acknowledged revision is stored with the acknowledged content. */
async function assertAcknowledgedPresent(store: RegistryStore, acks: Ack[]): Promise<void> {
  for (const ack of acks) {
    const stored = await store.get(ack.id, ack.revision);
    assert.ok(stored, `acknowledged ${ack.id} revision ${ack.revision} is missing`);
    assert.equal(stored.contentHash, ack.contentHash);
    const current = await store.get(ack.id);
    assert.ok(current && current.revision >= ack.revision);
  }
  // The change feed is in step with the data: every acknowledged entry has a change.
  const seen = new Set<string>();
  let seq = 0;
  for (;;) {
    const batch = await store.changesSince(seq, 1000);
    if (batch.length === 0) break;
    for (const change of batch) seen.add(change.id);
    seq = batch.at(-1)!.seq;
  }
  for (const ack of acks) assert.ok(seen.has(ack.id), `no change recorded for ${ack.id}`);
}

describe('SQLite survives SIGKILL of the writer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'registry-crash-'));
  const file = join(dir, 'registry.db');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps every acknowledged write, with an intact database', async (t) => {
    t.diagnostic(`STORAGE_CRASH_SEED=${seed}`);
    const all: Ack[] = [];
    // Each round costs a child start-up (~2 s under tsx), so two rounds; the seed varies
    // the kill point between runs.
    for (let round = 0; round < 2; round++) {
      const minAcks = 1 + Math.floor(random() * 120);
      const extraMs = Math.floor(random() * 200);
      const acks = await runAndKill(['sqlite', file, `s${round}`], minAcks, extraMs);
      t.diagnostic(`round ${round}: killed after ${acks.length} acknowledged writes (+${extraMs} ms)`);
      all.push(...acks);

      // A plain connection first: opening replays the WAL left by the killed writer.
      const raw = new Database(file);
      try {
        assert.equal(raw.pragma('integrity_check', { simple: true }), 'ok');
        assert.deepEqual(raw.pragma('foreign_key_check'), []);
      } finally {
        raw.close();
      }
      const store = new SqliteStore({ file });
      await store.open();
      try {
        await assertAcknowledgedPresent(store, all);
      } finally {
        await store.close();
      }
    }
  });
});

describe('PostgreSQL', () => {
  let server: TestPostgres | undefined;
  let skipReason: string | undefined;
  let failure: Error | undefined;
  before(async () => {
    try {
      const started = await startPostgres();
      if (started.ok) server = started.pg;
      else skipReason = started.skipReason;
    } catch (error) {
      // CI without PostgreSQL: fail each test loudly rather than skip.
      failure = error instanceof Error ? error : new Error(String(error));
    }
  });
  after(async () => server?.stop());

  it('keeps every acknowledged write when the writer is SIGKILLed', async (t) => {
    if (failure) throw failure;
    if (skipReason) return t.skip(skipReason);
    t.diagnostic(`STORAGE_CRASH_SEED=${seed}`);
    const url = await server!.createDatabase('crash');
    const all: Ack[] = [];
    for (let round = 0; round < 2; round++) {
      const minAcks = 1 + Math.floor(random() * 60);
      const extraMs = Math.floor(random() * 200);
      // Four concurrent workers, so the kill lands with several transactions in flight.
      const acks = await runAndKill(['postgres', url, `p${round}`, '4'], minAcks, extraMs);
      t.diagnostic(`round ${round}: killed after ${acks.length} acknowledged writes (+${extraMs} ms)`);
      all.push(...acks);
      const store = new PostgresStore({ url });
      await store.open();
      try {
        await assertAcknowledgedPresent(store, all);
      } finally {
        await store.close();
      }
    }
  });

  it('recovers by itself when the server restarts under a live store', async (t) => {
    if (failure) throw failure;
    if (skipReason) return t.skip(skipReason);
    if (!server!.controllable) return t.skip('TEST_DATABASE_URL is set: cannot restart that server');
    const url = await server!.createDatabase('restart');
    const store = new PostgresStore({ url, poolMax: 4 });
    await store.open();
    const notified: (number | undefined)[] = [];
    const listener = await listenForChanges(url, (seq) => notified.push(seq), { retryMs: 50, maxRetryMs: 200 });
    const acks: Ack[] = [];
    let failures = 0;
    let running = true;
    let n = 0;
    const loop = (async () => {
      while (running) {
        const i = n++;
        try {
          const outcome = await store.upsert(entryWrite('agent', `https://restart.example.com/${i}`, `${i}`), actor('w'));
          if (outcome.status !== 'created') throw new Error(`unexpected ${outcome.status}`);
          acks.push({ id: outcome.entry.id, revision: outcome.entry.revision, contentHash: outcome.entry.contentHash });
        } catch {
          failures++;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    })();
    const waitFor = async (what: string, cond: () => boolean | Promise<boolean>, ms = 15_000) => {
      const until = Date.now() + ms;
      while (!(await cond())) {
        if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    try {
      await waitFor('writes before the restart', () => acks.length >= 10);
      await waitFor('a notification', () => notified.some((s) => typeof s === 'number'));
      const beforeRestart = acks.length;

      await server!.halt();
      assert.equal(await store.ping(), false, 'ping is false (not an exception) while the server is down');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await store.ping(), false);
      const failuresWhileDown = failures;
      await server!.resume();

      await waitFor('ping after the restart', () => store.ping());
      await waitFor('writes after the restart', () => acks.length >= beforeRestart + 10);
      // The listener reconnected on its own and said so (undefined = "catch up").
      await waitFor('the listener to reconnect', () => notified.includes(undefined));
      const afterReconnect = notified.lastIndexOf(undefined);
      await waitFor('notifications after the reconnect', () =>
        notified.slice(afterReconnect + 1).some((s) => typeof s === 'number'),
      );
      running = false;
      await loop;
      t.diagnostic(
        `${acks.length} writes acknowledged (${beforeRestart} before the restart), ` +
          `${failures} failed (${failuresWhileDown} by the end of the outage)`,
      );
      assert.ok(failuresWhileDown > 0, 'writes during the outage failed rather than hanging');
      const seqs = notified.filter((s): s is number => typeof s === 'number');
      for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i]! > seqs[i - 1]!, 'notifications arrive in commit order');

      await assertAcknowledgedPresent(store, acks);
      // And from a brand-new pool, to be sure nothing is served from a stale connection.
      const fresh = new PostgresStore({ url });
      await fresh.open();
      try {
        await assertAcknowledgedPresent(fresh, acks);
        assert.deepEqual(await fresh.count(), await store.count());
      } finally {
        await fresh.close();
      }
    } finally {
      running = false;
      await loop;
      await listener.close();
      await store.close();
    }
  });
});
