/**
 * Storage faults are named (issue 12, point 5): when the database cannot be written, writes are
 * refused with an error that says storage is unavailable (HTTP 503 on HTTP+JSON, a JSON-RPC error
 * whose message says so), searches keep answering from the index, /readyz reports the fault until
 * a write probe succeeds, and nothing acknowledged is lost.
 *
 * - SQLite, disk full: for real, on a small tmpfs filled up (needs root to mount; skipped
 *   otherwise);
 * - SQLite, file deleted: for real (the data directory removed under the running registry);
 * - SQLite, read-only: simulated with PRAGMA query_only on the store's connection (a file system
 *   cannot be remounted read-only while the database is open: the kernel answers EBUSY);
 * - PostgreSQL, read-only and unreachable: for real (default_transaction_read_only, a stopped server).
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { v1Card } from './support/documents.js';
import { dataPart, message, op, resultOf, sdkClient, stateOf, streamEventJson, type WireJson } from './support/client.js';
import { storageEngines } from './support/engines.js';
import { rawPost } from './support/raw-http.js';
import { TOKENS, TOKENS_ENV, logCapture, spawnRegistry, startTestRegistry, type TestRegistry } from './support/registry.js';
import { tempDir } from './support/temp.js';
import { fill, mountTmpfs } from './support/tmpfs.js';
import { sendWithPush, webhook } from './support/watch-stream.js';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/observability/logger.js';
import { startRegistry } from '../src/server.js';
import { SQLITE_SCHEMA_VERSION, SqliteStore } from '../src/storage/sqlite/index.js';
import { tidyAfterReading } from '../src/storage/sqlite/reading-leftovers.js';
import { recordDamage } from '../src/storage/sqlite/damage-record.js';
import { RefreshLoop } from '../src/freshness/refresh-loop.js';
import { StorageProbe } from '../src/composition/maintenance.js';
import { FaultState, StorageUnavailableError } from '../src/storage/faults.js';
import { CHANGE_LOCK_KEY } from '../src/storage/postgres/migrations.js';
import { actor, entryWrite } from './support/store-fixtures.js';
import { metricValue } from './support/metrics.js';
import { checkCommand } from '../src/cli/commands/check.js';
import { backupCommand } from '../src/cli/commands/backup.js';
import { migrateCommand } from '../src/cli/commands/migrate.js';
import { restoreCommand } from '../src/cli/commands/restore.js';
import { importCommand } from '../src/cli/commands/import.js';
import { restoreSqlite } from '../src/storage/sqlite/backup.js';
import { finishUnfinishedRestore } from '../src/storage/sqlite/restore-swap.js';

/** A file's SHA-256 (comparing the bytes of two large files, assert prints a diff of gigabytes). */
const digestOf = (file: string): string => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const sendMessage = (parts: unknown[]) =>
  JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'SendMessage', params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts } } });
const registerPart = (name: string) => ({ data: { register: { agentCard: v1Card(name, `https://${name.toLowerCase().replace(/\W+/g, '-')}.example.org/a2a`) } }, mediaType: 'application/json' });

/** v0.3 message/send (no A2A-Version header) of a register. */
const legacySendMessage = (name: string) =>
  JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'message/send', params: { message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'data', data: registerPart(name).data }] } } });

/** A registration over JSON-RPC (v1.0, and v0.3 when `legacy`) and over HTTP+JSON, as raw answers. */
async function registerBoth(registry: TestRegistry, name: string, legacy = false) {
  const headers = { authorization: `Bearer ${TOKENS.alice}` };
  const jsonRpc = await rawPost(`${registry.url}/a2a/jsonrpc`, sendMessage([registerPart(name)]), { headers });
  const rest = await rawPost(`${registry.url}/a2a/rest/message:send`, JSON.stringify({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [registerPart(`${name} rest`)] } }), { headers });
  const legacyJsonRpc = legacy ? await rawPost(`${registry.url}/a2a/jsonrpc`, legacySendMessage(`${name} v0.3`), { headers: { ...headers, 'A2A-Version': '' } }) : undefined;
  return { jsonRpc, rest, legacyJsonRpc };
}

/**
 * The PostgreSQL registries' statement timeout in the tests that wait one out on a lock another
 * session holds (REGISTRY_POSTGRES_STATEMENT_TIMEOUT_MS): by default 15 s, three such waits made
 * 45 s of this file. 4 s still leaves the statements that must not time out (a registration, the
 * probe) a wide margin on a loaded machine.
 */
const STATEMENT_TIMEOUT_MS = 4000;
const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000;

/**
 * Refused after the statement timeout the registry was given, not the default: the setting takes
 * effect (and the lock was waited for, not failed at once).
 */
function assertWaitedOutTimeout(startedAt: number): void {
  const waited = performance.now() - startedAt;
  assert.ok(waited >= STATEMENT_TIMEOUT_MS - 50 && waited < DEFAULT_STATEMENT_TIMEOUT_MS, `refused after ${Math.round(waited)} ms: the statement timeout is ${STATEMENT_TIMEOUT_MS} ms`);
}

/**
 * registerBoth's two registrations (v1.0 JSON-RPC and HTTP+JSON) sent at once, for writes that
 * each wait out the statement timeout on a lock another session holds: one wait, not two.
 */
async function registerBothAtOnce(registry: TestRegistry, name: string): Promise<Awaited<ReturnType<typeof registerBoth>>> {
  const headers = { authorization: `Bearer ${TOKENS.alice}` };
  const signal = AbortSignal.timeout(60_000);
  const startedAt = performance.now();
  const [jsonRpc, rest] = await Promise.all([
    rawPost(`${registry.url}/a2a/jsonrpc`, sendMessage([registerPart(name)]), { headers, signal }),
    rawPost(`${registry.url}/a2a/rest/message:send`, JSON.stringify({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [registerPart(`${name} rest`)] } }), { headers, signal }),
  ]);
  assertWaitedOutTimeout(startedAt);
  return { jsonRpc, rest, legacyJsonRpc: undefined };
}

/** Another session on the registry's database, to hold locks (its errors once the server ends it ignored). */
async function otherSession(databaseUrl: string): Promise<pg.Client> {
  const session = new pg.Client({ connectionString: databaseUrl });
  await session.connect();
  session.on('error', () => undefined);
  return session;
}

/**
 * Both bindings refuse the write as a protocol error that says storage is unavailable (and why),
 * and when to retry: Retry-After, and in the error itself (a JSON-RPC client reads the error).
 */
function assertRefused(answers: Awaited<ReturnType<typeof registerBoth>>, why: RegExp): void {
  for (const [version, answer] of [['v1.0', answers.jsonRpc], ['v0.3', answers.legacyJsonRpc]] as const) {
    if (!answer) continue;
    const error = answer.json!.error as WireJson;
    assert.ok(error, `JSON-RPC ${version} answers an error, not a task: ${answer.text.slice(0, 200)}`);
    assert.equal(error.code, -32603, version);
    assert.match(error.message, /^Storage is unavailable: /, version);
    assert.match(error.message, why, version);
    assert.equal(error.data[0].reason, 'STORAGE_UNAVAILABLE', version);
    assert.equal(error.data[0].metadata?.retryAfterSeconds, '5', `${version}: the retry time is in the error's ErrorInfo`);
    assert.equal(error.data[0].domain, 'a2a-registry', `${version}: the registry's own reason, in its domain`);
    assert.equal(answer.headers.get('retry-after'), '5', version);
  }
  assert.equal(answers.rest.status, 503);
  assert.equal(answers.rest.json!.error.status, 'UNAVAILABLE');
  assert.match(answers.rest.json!.error.message, why);
  assert.equal(answers.rest.headers.get('retry-after'), '5');
  assert.equal(answers.rest.json!.error.details[0].metadata?.retryAfterSeconds, '5');
  assert.equal(answers.rest.json!.error.details[0].domain, 'a2a-registry');
}

async function readiness(registry: { url: string }): Promise<{ status: number; reason?: string }> {
  const res = await fetch(`${registry.url}/readyz`);
  const body = (await res.json()) as { reason?: string };
  return { status: res.status, reason: body.reason };
}

async function eventually<T>(ms: number, check: () => Promise<T | undefined | false>, what: string): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Searches are answered from the index while writes are refused. */
async function assertSearchable(registry: TestRegistry, query: string, expected: number): Promise<void> {
  const anonymous = await sdkClient(registry.url);
  const page = resultOf(await op(anonymous, { search: { query } }));
  assert.equal(page.total, expected);
}

/** `text` matched literally in a RegExp (a file's path). */
const quoted = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Overwrites the middle page of a table's or an index's b-tree in `file` with garbage, as a disk
 * error or a bad copy leaves it; `torn`: zeroes its second half instead, as a write cut short does
 * (its header whole: SQLite reads the page without an error).
 */
function damagePage(file: string, tree: string, how: 'garbage' | 'torn' = 'garbage'): void {
  // Leaving no -wal or -shm its read-only connection created, as the commands under test do not.
  const tidy = tidyAfterReading(file);
  const db = new Database(file, { readonly: true });
  const pages = db.prepare('SELECT pageno FROM dbstat WHERE name = ? ORDER BY pageno').all(tree) as { pageno: number }[];
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  db.close();
  tidy();
  assert.ok(pages.length > 2, `${tree} spans pages`);
  const handle = fs.openSync(file, 'r+');
  const at = (pages[pages.length >> 1]!.pageno - 1) * pageSize;
  if (how === 'torn') fs.writeSync(handle, Buffer.alloc(pageSize / 2), 0, pageSize / 2, at + pageSize / 2);
  else fs.writeSync(handle, Buffer.alloc(pageSize, 0x5a), 0, pageSize, at);
  fs.closeSync(handle);
}

// Two tests at a time: each has its registry, data directory and tmpfs of its own and changes
// nothing of this process's, and most of their time is waiting (fsync, child processes, timers).
describe('SQLite storage faults', { concurrency: 2 }, () => {
  test('disk full (a real, full tmpfs): writes refused and named, searches answered, not ready until space is back', async (t) => {
    const mount = mountTmpfs(24);
    if (typeof mount === 'string') return t.skip(mount);
    const dataDir = path.join(mount.dir, 'data');
    const running: TestRegistry[] = [];
    // One hook, in order: the registries let go of their files, then the file system goes.
    t.after(async () => {
      for (const r of running) await r.close();
      mount.unmount();
    });
    const registry = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir });
    running.push(registry);
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const acknowledged: string[] = [];
    for (const name of ['Full Disk One', 'Full Disk Two']) acknowledged.push(resultOf(await op(alice, { register: { agentCard: v1Card(name, `https://${name.replace(/ /g, '-').toLowerCase()}.example.org/a2a`) } })).id);
    assert.deepEqual(await readiness(registry), { status: 200, reason: undefined });

    fill(mount.dir);
    // The write-ahead log may still have room from before the disk filled (a checkpoint resets it
    // without shrinking it): writes that fit there are durable and acknowledged. Write until one
    // needs a new block; from then on every write is refused, named.
    for (let i = 0; i < 1000 && !(await registerBoth(registry, `Spare Room ${i}`)).jsonRpc.json!.error; i++);
    assertRefused(await registerBoth(registry, 'Full Disk Three'), /the disk holding the database is full/);
    await assertSearchable(registry, 'Full Disk', 2);
    assert.equal(resultOf(await op(alice, { get: { id: acknowledged[0] } })).name, 'Full Disk One', 'reads from storage still work');
    const notReady = await readiness(registry);
    assert.equal(notReady.status, 503);
    assert.match(notReady.reason!, /storage is unavailable: the disk holding the database is full \(SQLITE_FULL/);
    assert.match(await (await fetch(`${registry.url}/metrics`)).text(), /^registry_storage_writable 0$/m);

    fs.rmSync(path.join(mount.dir, 'filler'));
    fs.rmSync(path.join(mount.dir, 'filler-small'));
    await eventually(10_000, async () => (await readiness(registry)).status === 200, '/readyz is ready again once a write probe succeeds');
    assert.match(await (await fetch(`${registry.url}/metrics`)).text(), /^registry_storage_writable 1$/m);
    acknowledged.push(resultOf(await op(alice, { register: { agentCard: v1Card('Full Disk Four', 'https://full-disk-four.example.org/a2a') } })).id);

    await registry.close();
    const again = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir });
    running.push(again);
    const reader = await sdkClient(again.url, { token: TOKENS.alice });
    for (const id of acknowledged) assert.equal(stateOf(await op(reader, { get: { id } })), 'TASK_STATE_COMPLETED', `acknowledged ${id} survived`);
    assert.equal(resultOf(await op(reader, { search: { query: 'Full Disk Three' } })).results.filter((h: WireJson) => h.name === 'Full Disk Three').length, 0, 'the refused write is not there');
  });

  test('a background checkpoint that fails for a full disk (a real, full tmpfs) makes /readyz not ready, though the write before it was acknowledged', async (t) => {
    const mount = mountTmpfs(24);
    if (typeof mount === 'string') return t.skip(mount);
    const dataDir = path.join(mount.dir, 'data');
    let registry: TestRegistry | undefined;
    t.after(async () => {
      await registry?.close();
      mount.unmount();
    });
    registry = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir });
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const register = async (name: string) => op(alice, { register: { agentCard: v1Card(name, `https://${name.replace(/ /g, '-').toLowerCase()}.example.org/a2a`) } });
    // A burst leaves the write-ahead log large enough for a registration once the disk is full
    // (a checkpoint resets the log without shrinking it), while the database file cannot grow.
    await Promise.all(Array.from({ length: 20 }, (_, i) => register(`Checkpoint Burst ${i}`)));
    await new Promise((r) => setTimeout(r, 1000)); // the burst's checkpoint
    assert.deepEqual(await readiness(registry), { status: 200, reason: undefined });

    fill(mount.dir);
    const written = await register('Checkpoint After Fill');
    assert.equal(stateOf(written), 'TASK_STATE_COMPLETED', 'the write fits the log: acknowledged');
    // Its checkpoint cannot copy it into the file: storage is not writable, though no write failed yet.
    const notReady = await eventually(5000, async () => ((await readiness(registry!)).status === 503 ? readiness(registry!) : undefined), '/readyz not ready after the checkpoint failed');
    assert.match(notReady.reason!, /storage is unavailable: the disk holding the database is full \(SQLITE_FULL/);
    assert.match(await (await fetch(`${registry.url}/metrics`)).text(), /^registry_storage_writable 0$/m);

    // Started again on the full disk (the log still holds what the file could not take): not ready either.
    await registry.close();
    registry = undefined;
    registry = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir });
    const restarted = await eventually(5000, async () => ((await readiness(registry!)).status === 503 ? readiness(registry!) : undefined), '/readyz not ready after a start on a full disk');
    assert.match(restarted.reason!, /the disk holding the database is full/);

    fs.rmSync(path.join(mount.dir, 'filler'));
    fs.rmSync(path.join(mount.dir, 'filler-small'));
    await eventually(10_000, async () => (await readiness(registry!)).status === 200, '/readyz is ready again once a write probe succeeds');
    const reader = await sdkClient(registry.url, { token: TOKENS.alice });
    assert.equal(resultOf(await op(reader, { get: { id: resultOf(written).id } })).name, 'Checkpoint After Fill', 'the acknowledged write survived');
  });

  test('the database file deleted under the running registry: re-created from the open connection, nothing lost; when it cannot be, writes are refused before they change anything, and neither the refusal nor /readyz names a path', async (t) => {
    const parent = tempDir('registry-deleted-');
    // The registries close before the directory goes: a store closing on a deleted file
    // re-creates it, which would leave the directory behind.
    const opened: TestRegistry[] = [];
    t.after(async () => {
      for (const each of opened) await each.close();
      fs.rmSync(parent, { recursive: true, force: true });
    });
    const dataDir = path.join(parent, 'data');
    const log = logCapture();
    const registry = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir, LOG_LEVEL: 'error' }, undefined, log.stream);
    opened.push(registry);
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const register = async (name: string) => op(alice, { register: { agentCard: v1Card(name, `https://${name.replace(/ /g, '-').toLowerCase()}.example.org/a2a`) } });
    const ids = [resultOf(await register('Deleted One')).id];

    // The whole data directory goes: the next commit notices and re-creates the file.
    fs.rmSync(dataDir, { recursive: true, force: true });
    ids.push(resultOf(await register('Deleted Two')).id);
    assert.ok(fs.existsSync(path.join(dataDir, 'registry.db')), 'the file is back');

    // Now it cannot be re-created (a file where the directory should be): writes are refused, named.
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.writeFileSync(dataDir, 'not a directory');
    const refused = await registerBoth(registry, 'Deleted Three', true);
    assertRefused(refused, /the database file was deleted and cannot be re-created: something other than a directory is where its data directory was; move it away\. This request changed nothing: the registry cannot store anything right now \(searches are still answered\)\. Retry later/);
    // The kind of fault and what to do, never the server's path (it said `mkdir '/tmp/.../data'`).
    for (const text of [refused.jsonRpc.text, refused.rest.text, refused.legacyJsonRpc!.text]) assert.ok(!text.includes(parent), `no path in ${text.slice(0, 300)}`);
    // Refused before it changed anything: the entry is still there, now and once storage recovers
    // (it was removed in the connection at once, and the re-created file kept it removed).
    const unregistered = await rawPost(`${registry.url}/a2a/rest/message:send`, JSON.stringify({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ data: { unregister: { id: ids[0] } }, mediaType: 'application/json' }] } }), { headers: { authorization: `Bearer ${TOKENS.alice}` } });
    assert.equal(unregistered.status, 503, unregistered.text.slice(0, 300));
    assert.match(unregistered.json!.error.message, /This request changed nothing/);
    assert.equal(resultOf(await op(alice, { get: { id: ids[0] } })).name, 'Deleted One', 'a refused unregister removes nothing');
    await assertSearchable(registry, 'Deleted', 2);
    const notReady = (await readiness(registry)).reason!;
    // Its code is why it could not be re-created (mkdir found a file: EEXIST), not the deletion's ENOENT.
    assert.match(notReady, /^storage is unavailable: the database file was deleted and cannot be re-created: something other than a directory is where its data directory was; move it away \(EEXIST, since /);
    assert.ok(!notReady.includes(parent), `/readyz names no path: ${notReady}`);
    // The operator's log keeps the full cause, path and all.
    const logged = await eventually(5000, async () => log.lines.find((l) => String(l.msg).startsWith('storage is unavailable: the database file was deleted')), 'the fault logged');
    assert.match(String(logged.detail), new RegExp(`${quoted(dataDir)}`), JSON.stringify(logged));
    fs.rmSync(dataDir);
    await eventually(10_000, async () => (await readiness(registry)).status === 200, 'ready again once the probe re-created the file');
    // The refused writes changed nothing: neither the registrations nor the removal are stored.
    const listed = resultOf(await op(alice, { list: {} })).entries.map((e: WireJson) => e.name).sort();
    assert.deepEqual(listed, ['Deleted One', 'Deleted Two']);
    await assertSearchable(registry, 'Deleted', 2);
    const retried = resultOf(await register('Deleted Three'));
    assert.equal(retried.changed, true, 'a retry of the refused registration stores it');
    ids.push(retried.id, resultOf(await register('Deleted Four')).id);

    await registry.close();
    opened.splice(0);
    const again = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir });
    opened.push(again);
    const reader = await sdkClient(again.url, { token: TOKENS.alice });
    for (const id of ids) assert.equal(resultOf(await op(reader, { get: { id } })).id, id, `acknowledged ${id} survived`);
  });

  test('a background checkpoint failing on the deleted file after a write found why it cannot be re-created: the fault keeps the write\'s finding (what to do), not the checkpoint\'s bare "missing"', async (t) => {
    const parent = tempDir('registry-deleted-checkpoint-');
    const dataDir = path.join(parent, 'data');
    const notices: string[] = [];
    // Its background checkpoint due 2 s after a write (the open's first): its thread opens its
    // connection then, on the deleted file (one opened before would checkpoint the deleted inode).
    const store = new SqliteStore({ file: path.join(dataDir, 'registry.db'), notice: (message) => void notices.push(message), checkpointDelayMs: 2000 });
    t.after(async () => {
      fs.rmSync(dataDir, { force: true });
      await store.close();
      fs.rmSync(parent, { recursive: true, force: true });
    });
    const opened = Date.now();
    await store.open();
    await store.upsert(entryWrite('agent', 'https://before.example.org/a2a', '1', 'Before'), actor('alice'));
    fs.rmSync(dataDir, { recursive: true, force: true });
    assert.ok(Date.now() - opened < 2000, 'deleted before the first background checkpoint was due');
    fs.writeFileSync(dataDir, 'not a directory');
    await assert.rejects(store.upsert(entryWrite('agent', 'https://refused.example.org/a2a', '1', 'Refused'), actor('alice')), /cannot be re-created: something other than a directory is where its data directory was; move it away/);
    const found = store.fault!;
    await eventually(6000, async () => notices.find((n) => n.startsWith('a background checkpoint of the WAL failed')), 'the checkpoint failed on the deleted file');
    // It was replaced by the checkpoint's "the database file is missing (deleted or moved)": /readyz
    // lost what to do, and the registry's log (which says each finding once) the file system's words.
    assert.deepEqual(store.fault, found);
  });

  test('the write-ahead log deleted or replaced under the running registry: the database re-created from the open connection, every acknowledged write kept through a SIGKILL', async () => {
    const dataDir = tempDir('registry-wal-deleted-');
    const env = { REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: TOKENS_ENV };
    const wal = path.join(dataDir, 'registry.db-wal');
    const registry = await spawnRegistry(env);
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const register = async (name: string) => op(alice, { register: { agentCard: v1Card(name, `https://${name.replace(/ /g, '-').toLowerCase()}.example.org/a2a`) } });
    const recreations = () => registry.logs.filter((l) => String(l.msg).startsWith("the database's write-ahead log was")).map((l) => String(l.msg));
    const pastCheckpoint = () => new Promise((r) => setTimeout(r, 1000));
    const kept = resultOf(await register('Wal Kept')).id;
    const dropped = resultOf(await register('Wal Dropped')).id;
    // Past the background checkpoint (250 ms after a write): what follows lives in the log alone.
    await pastCheckpoint();
    fs.rmSync(wal);
    // SQLite goes on appending to the deleted log's inode: without the check these were
    // acknowledged, and gone (the unregistered entry back) after the kill below.
    const added = resultOf(await register('Wal Added')).id;
    assert.equal(stateOf(await op(alice, { unregister: { id: dropped } })), 'TASK_STATE_COMPLETED');
    assert.equal(recreations().length, 1, 'the re-creation is logged');
    assert.match(recreations()[0]!, /log was deleted while the registry was running; the database was re-created from the open connection/);
    assert.ok(fs.existsSync(wal), 'a new log beside the re-created database');

    // Another file where the log is: the same (it would be replayed on the database at the next start).
    await pastCheckpoint();
    fs.writeFileSync(`${wal}.other`, 'not this database\'s log');
    fs.renameSync(`${wal}.other`, wal);
    const replacedAt = resultOf(await register('Wal Replaced')).id;
    assert.equal(recreations().length, 2);
    assert.match(recreations()[1]!, /log was replaced by another file \(removed\)/);
    assert.notEqual(fs.readFileSync(wal, 'utf8'), "not this database's log");

    // No false alarm: checkpoints (the background thread's connection re-opened) keep the new log.
    await pastCheckpoint();
    const later = resultOf(await register('Wal Later')).id;
    await pastCheckpoint();
    const last = resultOf(await register('Wal Last')).id;
    assert.equal(recreations().length, 2, 'nothing re-created in normal operation');
    assert.equal((await readiness(registry)).status, 200);
    // Within the checkpoint's delay of the last write.
    registry.child.kill('SIGKILL');
    await registry.exited;

    const restarted = await spawnRegistry(env);
    try {
      const reader = await sdkClient(restarted.url, { token: TOKENS.alice });
      const listed = resultOf(await op(reader, { list: {} })).entries.map((e: WireJson) => e.id);
      for (const id of [kept, added, replacedAt, later, last]) assert.ok(listed.includes(id), `acknowledged ${id} survived`);
      assert.ok(!listed.includes(dropped), 'the acknowledged unregistration survived');
    } finally {
      await restarted.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a write refused as STORAGE_UNAVAILABLE (a protocol error, not a task) leaves no task behind for GetTask or ListTasks, on every binding and streamed', async (t) => {
    const parent = tempDir('registry-refused-tasks-');
    const dataDir = path.join(parent, 'data');
    const registry = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir, GRPC_PORT: '0' });
    t.after(async () => {
      await registry.close();
      fs.rmSync(parent, { recursive: true, force: true });
    });
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const listTasks = async () => (await alice.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 100, pageToken: '', statusTimestampAfter: undefined })).tasks.map((task) => task.id);
    const accepted = await op(alice, { register: { agentCard: v1Card('Kept Task', 'https://kept-task.example.org/a2a') } });
    assert.deepEqual(await listTasks(), [accepted.id]);

    // The data directory replaced by a file: the database cannot be re-created, writes are refused.
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.writeFileSync(dataDir, 'not a directory');
    const headers = { authorization: `Bearer ${TOKENS.alice}` };
    assertRefused(await registerBoth(registry, 'Refused Task', true), /deleted/);
    const streamed = await rawPost(`${registry.url}/a2a/jsonrpc`, sendMessage([registerPart('Refused Streamed')]).replace('"SendMessage"', '"SendStreamingMessage"'), { headers });
    assert.equal(streamed.json?.error?.data?.[0]?.reason ?? streamed.events?.at(-1)?.error?.data?.[0]?.reason, 'STORAGE_UNAVAILABLE', streamed.text.slice(0, 300));
    const overRest = await rawPost(`${registry.url}/a2a/rest/message:stream`, JSON.stringify({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [registerPart('Refused Rest Streamed')] } }), { headers });
    assert.equal(overRest.status, 503, overRest.text.slice(0, 300));
    const grpcClient = sdkClient(registry.url, { token: TOKENS.alice, binding: 'GRPC' });
    await assert.rejects(op(await grpcClient, { register: { agentCard: v1Card('Refused Grpc', 'https://refused-grpc.example.org/a2a') } }), /Storage is unavailable/);

    // No id the client was never given: ListTasks shows the accepted write's task alone (it
    // showed a FAILED task for each refusal), now and once storage takes writes again.
    assert.deepEqual(await listTasks(), [accepted.id]);
    assert.equal(registry.core.tasks.memoryUsage.tasks, 0, 'nothing held in memory either');
    fs.rmSync(dataDir);
    await eventually(10_000, async () => (await readiness(registry)).status === 200, 'ready again once the probe re-created the file');
    assert.deepEqual(await listTasks(), [accepted.id]);
  });

  test('storage down under a watch: that its progress cannot be stored, nor its lease renewed, nor free watches looked for, is logged once, not at every attempt, and that each works again', async (t) => {
    const parent = tempDir('registry-watch-outage-');
    const dataDir = path.join(parent, 'data');
    const messages: string[] = [];
    const capture = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line) messages.push((JSON.parse(line) as { msg: string }).msg);
        done();
      },
    });
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', REGISTRY_TOKENS: TOKENS_ENV, REGISTRY_DATA_DIR: dataDir, REGISTRY_FETCH_ALLOW: '127.0.0.1' });
    // Leases renewed, and free watches looked for, every 0.2 s (by default every 13 and 10 s).
    Object.assign(config.watches, { leaseMs: 3000, renewEveryMs: 200, claimEveryMs: 200 });
    const registry = await startRegistry(config, createLogger('info', capture));
    // The webhook answers after half a second: the watch's progress moves (the push delivered) once storage is down.
    const hook = await webhook(() => 200, undefined, 500);
    t.after(async () => {
      await registry.close();
      await hook.close();
      fs.rmSync(parent, { recursive: true, force: true });
    });
    await registry.ready;
    const bob = await sdkClient(registry.url, { token: TOKENS.bob });
    await sendWithPush(bob, { filter: { tags: ['outage'] } }, { url: hook.url, token: 'outage' });
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const card = v1Card('Outage One', 'https://outage-one.example.org/a2a') as WireJson;
    card.skills[0].tags = ['outage'];
    resultOf(await op(alice, { register: { agentCard: card } }));
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.writeFileSync(dataDir, 'not a directory');
    const failures = ['watch progress could not be stored', 'watch leases could not be renewed', 'watches nobody runs could not be looked for'];
    for (const failure of failures) await eventually(5000, async () => messages.some((m) => m.startsWith(failure)), `"${failure}" logged`);
    // Stored every second: before, every attempt logged it again (with its stack), for as long as storage was down.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    for (const failure of failures) assert.equal(messages.filter((m) => m.startsWith(failure)).length, 1, `"${failure}" logged once`);
    fs.rmSync(dataDir);
    for (const recovery of ['watch progress is stored again', 'watch leases are renewed again', 'watches nobody runs are looked for again']) {
      await eventually(10_000, async () => messages.includes(recovery), `"${recovery}" logged`);
    }
  });

  test('a corrupt database file: the registry does not start, names the file and what to do, and leaves the file untouched', async (t) => {
    const dataDir = tempDir('registry-corrupt-');
    const first = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir });
    let closed = false;
    t.after(async () => {
      if (!closed) await first.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    const alice = await sdkClient(first.url, { token: TOKENS.alice });
    resultOf(await op(alice, { register: { agentCard: v1Card('Corrupt One', 'https://corrupt-one.example.org/a2a') } }));
    await first.close();
    closed = true;

    // The header overwritten, as a bad copy or a disk error would leave it.
    const file = path.join(dataDir, 'registry.db');
    const handle = fs.openSync(file, 'r+');
    fs.writeSync(handle, Buffer.alloc(100, 0x5a), 0, 100, 0);
    fs.closeSync(handle);
    const before = fs.readFileSync(file);

    await assert.rejects(startTestRegistry({ REGISTRY_DATA_DIR: dataDir }), (error: Error) => {
      assert.match(error.message, new RegExp(`the database file ${quoted(file)} is corrupt \\(SQLITE_NOTADB\\)`));
      assert.match(error.message, /left untouched\. Restore it from a backup, or move it .* aside to start with an empty registry/);
      return true;
    });
    assert.deepEqual(fs.readFileSync(file), before, 'the corrupt file is exactly as it was');
  });

  test('REGISTRY_SQLITE_CHECK_HOURS past what a Node timer holds (24.8 days; up to 8760 hours is allowed): one background check, then none until its time, not one check after another', async (t) => {
    const dataDir = tempDir('registry-check-hours-');
    const lines: { msg: string }[] = [];
    const capture = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line));
        done();
      },
    });
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', REGISTRY_TOKENS: TOKENS_ENV, REGISTRY_DATA_DIR: dataDir, REGISTRY_SQLITE_CHECK_HOURS: '8760' });
    config.sqliteFirstCheckAfterMs = 0;
    const registry = await startRegistry(config, createLogger('info', capture));
    t.after(async () => {
      await registry.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    await registry.ready;
    const checked = () => lines.filter((l) => /^database integrity checked/.test(l.msg)).length;
    await eventually(20_000, async () => checked() >= 1, 'the first background check ran');
    // A check of this small file takes a few milliseconds: back to back, hundreds would have come by now.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(checked(), 1, 'the next check waits the year it was told to');
  });

  test('damage in the middle of the database file (an index page, a table page overwritten): found after start, named in the log with what SQLite reports and what to do, writes refused, /readyz not ready, registry_storage_damaged 1, reads that land on it named; `a2a-registry check` says so (exit 1), and whole for a healthy file (exit 0); `backup` of it refused naming the file and the repair, nothing left at the destination, `migrate` too; `import` into it refused before it writes anything; closed, nothing checkpointed into it (its write-ahead log, with a write acknowledged since the last checkpoint, left beside it, said in the log)', async (t) => {
    const dataDir = tempDir('registry-damaged-');
    const file = path.join(dataDir, 'registry.db');
    const running: { close(): Promise<void> }[] = [];
    t.after(async () => {
      for (const each of running) await each.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    // A few hundred entries, through the store (one group commit: a registry's worth of pages without a registry's cost).
    const store = new SqliteStore({ file });
    await store.open();
    await Promise.all(Array.from({ length: 300 }, (_, i) => store.upsert(entryWrite('agent', `https://damaged-${i}.example.org/a2a`, '1', `Damaged ${i} ${'x'.repeat(200)}`), actor('alice'))));
    await store.close();
    const quiet = { out: () => undefined, err: () => undefined, color: false };
    assert.equal(await checkCommand({ dataDir, quick: false, json: false }, quiet), 0, '`check` finds a healthy file whole');
    // Its read-only connection (import's check too) left an empty registry.db-wal and registry.db-shm beside a file it only read.
    assert.deepEqual(fs.readdirSync(dataDir).filter((name) => /-(wal|shm)$/.test(name)), [], 'nothing left beside the file it read');
    // Whole, with a record of damage beside it (a repair in place): said plainly, the record left to the operator.
    recordDamage(file, { foundAt: '2026-12-01T00:00:00.000Z', code: 'CORRUPT', message: 'found in a test' });
    for (const quick of [false, true]) {
      const told: string[] = [];
      assert.equal(await checkCommand({ dataDir, quick, json: false }, { ...quiet, out: (text: string) => void told.push(text) }), 0);
      assert.match(
        told.join(''),
        new RegExp(
          `^ok ${quoted(file)}: SQLite's ${quick ? 'quick_check' : 'integrity_check'} found no damage \\(.+\\)\n${quoted(file)}\\.damaged says it was found damaged at 2026-12-01T00:00:00\\.000Z \\(found in a test\\), but the file is whole now\\. ` +
            `If you repaired it in place, remove ${quoted(file)}\\.damaged: while it is there, a registry started on the file refuses writes${quick ? '; --quick does not compare every index with its table: check without it first' : ''}\\. A restore .+ moves it aside itself\\.\n$`,
        ),
      );
    }
    assert.ok(fs.existsSync(`${file}.damaged`), 'the record is not removed by the check');
    fs.rmSync(`${file}.damaged`);
    // A copy to damage on its own below (its table alone, not the index damaged first here).
    const spare = tempDir('registry-damaged-spare-');
    t.after(() => fs.rmSync(spare, { recursive: true, force: true }));
    const spareFile = path.join(spare, 'registry.db');
    fs.copyFileSync(file, spareFile);

    const damage = (tree: string): void => damagePage(file, tree);
    /** A registry on the data directory, its log lines kept. */
    const start = async (env: Record<string, string> = {}) => {
      const lines: { msg: string; [key: string]: unknown }[] = [];
      const capture = new Writable({
        write(chunk: Buffer, _enc, done) {
          for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line));
          done();
        },
      });
      const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', REGISTRY_TOKENS: TOKENS_ENV, REGISTRY_DATA_DIR: dataDir, ...env });
      // The first background check at once, not a minute after the index has loaded.
      config.sqliteFirstCheckAfterMs = 0;
      const registry = await startRegistry(config, createLogger('info', capture));
      running.push(registry);
      await registry.ready;
      return { registry: Object.assign(registry, { dataDir }), lines };
    };
    const fileInMessage = new RegExp(quoted(file));

    // An index page: start-up reads none of it, and the registry was ready, taking writes into the file.
    damage('entries_updated_list_idx');
    const first = await start();
    // Generous: a loaded machine starts the check's process slowly (it returns as soon as the check says so).
    const reason = await eventually(30_000, async () => {
      const ready = await readiness(first.registry);
      return ready.status === 503 && ready.reason;
    }, 'not ready once the background check found the damage').catch((error: Error) => assert.fail(`${error.message}; logged: ${JSON.stringify(first.lines.filter((l) => /integrity|damaged/.test(l.msg)))}`));
    assert.match(reason, /^storage is unavailable: the database file is damaged \(SQLite's quick_check found \d+ problems?, the first: Tree \d+ page \d+.*\): the operator must repair it \(see the log\) and restart the registry \(INTEGRITY_CHECK, since .*\); writes are refused/);
    const logged = first.lines.find((l) => /is damaged: SQLite's quick_check found/.test(l.msg));
    assert.ok(logged, 'the damage is logged');
    assert.equal(logged.level, 50, 'as an error');
    assert.match(logged.msg, fileInMessage, 'naming the file');
    assert.match(logged.msg, /a2a-registry restore --force <backup>.*sqlite3 .* \.recover/, 'and what to do');
    assert.ok(Array.isArray(logged.problems) && (logged.problems as string[]).length > 0, "with SQLite's messages");
    assertRefused(await registerBoth(first.registry, 'Damaged New'), /the database file is damaged/);
    assert.equal(await metricValue(first.registry.url, 'registry_storage_damaged', ''), 1);
    assert.equal(await metricValue(first.registry.url, 'registry_storage_writable', ''), 0);
    await first.registry.close();
    running.splice(0);
    const record = `${file}.damaged`;
    assert.match(JSON.parse(fs.readFileSync(record, 'utf8')).message, /^the database file is damaged \(SQLite's quick_check found/, 'the damage is recorded beside the file');

    const said: string[] = [];
    const output = { out: () => undefined, err: (text: string) => void said.push(text), color: false };
    assert.equal(await checkCommand({ dataDir, quick: false, json: false }, output), 1, '`check` finds the damage');
    assert.match(said.join(''), /^damaged .*registry\.db: SQLite's integrity_check found \d+ (or more )?problems?:\n {2}.+\n[^]*a2a-registry restore --force/);

    // Its header overwritten (a copy of it): no SQLite database at all, damaged as well (exit 1), not a usage error.
    const headless = tempDir('registry-headless-');
    fs.copyFileSync(file, path.join(headless, 'registry.db'));
    const handle = fs.openSync(path.join(headless, 'registry.db'), 'r+');
    fs.writeSync(handle, Buffer.alloc(100, 0x5a), 0, 100, 0);
    fs.closeSync(handle);
    said.length = 0;
    assert.equal(await checkCommand({ dataDir: headless, quick: true, json: false }, output), 1);
    assert.match(said.join(''), /registry\.db is not an SQLite database \(it does not begin with "SQLite format 3"\), so not a registry database: restore it from a backup/);

    // A table page too, with no background check (the saved index spares start-up the scan): a read that lands on it is refused as storage unavailable, not an internal error, and says so as the check does.
    damage('entries');
    const remedy = `Stop the registry and restore the latest good backup \\(a2a-registry restore --force <backup>, which keeps ${quoted(file)} beside it\\); without a backup, recover what SQLite can still read: sqlite3 ${quoted(file)} \\.recover \\| sqlite3 recovered\\.db, then a2a-registry restore --force recovered\\.db \\(entries on the damaged pages are lost: register them again\\); a sqlite3 built without the sqlite_dbpage table \\(Debian 12's\\) fails on \\.recover with "SQL logic error" and leaves recovered\\.db empty: use \\.dump instead, its closing ROLLBACK turned into COMMIT \\(README, Backups, has the command\\)\\. Check the disk too`;

    // The copy reads the damaged page: SQLite's bare "database disk image is malformed" was all it said.
    said.length = 0;
    const backupFile = path.join(dataDir, 'backup.db');
    assert.equal(await backupCommand(backupFile, { dataDir, force: false, json: false }, output), 1);
    assert.match(
      said.join(''),
      new RegExp(`^a2a-registry: the database file ${quoted(file)} is damaged \\(SQLite: database disk image is malformed, SQLITE_CORRUPT\\), so it cannot be backed up: nothing was written to ${quoted(backupFile)}\\. a2a-registry check --data-dir ${quoted(dataDir)} lists what SQLite finds\\. ${remedy}`),
    );
    assert.deepEqual(fs.readdirSync(dataDir).filter((name) => name.startsWith('backup.db')), [], 'no backup, nor its copy in progress, left');
    // migrate --from it reads the page too: "the migration failed, nothing was committed: database disk image is malformed" was all it said.
    said.length = 0;
    assert.equal(await migrateCommand({ from: dataDir, to: 'postgres://127.0.0.1:1/registry', force: false, batchSize: 100, json: false }, output), 1);
    assert.match(
      said.join(''),
      new RegExp(`^a2a-registry: the database file ${quoted(file)} is damaged \\(SQLite: database disk image is malformed, SQLITE_CORRUPT\\), so it cannot be migrated: nothing was committed to postgres://127\\.0\\.0\\.1:1/registry\\. a2a-registry check --data-dir ${quoted(dataDir)} lists what SQLite finds\\. ${remedy}`),
    );
    // An index page torn (a copy of the healthy file): read without an error, its records copied as they are (VACUUM INTO), the copy's b-trees
    // sound (quick_check: ok) and its index disagreeing with its table. That backup was written silently; integrity_check of the copy refuses it.
    const torn = tempDir('registry-torn-');
    t.after(() => fs.rmSync(torn, { recursive: true, force: true }));
    const tornFile = path.join(torn, 'registry.db');
    fs.copyFileSync(spareFile, tornFile);
    damagePage(tornFile, 'entries_updated_list_idx', 'torn');
    said.length = 0;
    const tornBackup = path.join(torn, 'backup.db');
    assert.equal(await backupCommand(tornBackup, { dataDir: torn, force: false, json: false }, output), 1);
    assert.match(
      said.join(''),
      new RegExp(
        `^a2a-registry: the database file ${quoted(tornFile)} is damaged: SQLite's integrity_check of its copy found \\d+ (or more )?problems?: .+\\. So it cannot be backed up: nothing was written to ${quoted(tornBackup)}\\. ` +
          `a2a-registry check --data-dir ${quoted(torn)} lists what SQLite finds\\. Stop the registry and restore the latest good backup \\(a2a-registry restore --force <backup>, which keeps ${quoted(tornFile)} beside it\\)`,
      ),
    );
    assert.deepEqual(fs.readdirSync(torn), ['registry.db'], 'no backup, nor its copy in progress, left; nor a -wal or -shm beside the file it read');
    // Nor is such a copy restored (a backup an earlier release wrote without that check): quick_check finds it whole, integrity_check does not.
    const silentCopy = path.join(torn, 'silent-backup.db');
    const tornReader = new Database(tornFile, { readonly: true, fileMustExist: true });
    tornReader.prepare('VACUUM INTO ?').run(silentCopy);
    tornReader.close();
    said.length = 0;
    const restoreTarget = tempDir('registry-restore-torn-');
    t.after(() => fs.rmSync(restoreTarget, { recursive: true, force: true }));
    assert.equal(await restoreCommand(silentCopy, { dataDir: restoreTarget, force: false, json: false }, output), 1);
    assert.match(said.join(''), new RegExp(`${quoted(silentCopy)} fails SQLite's integrity check \\(\\d+ (or more )?problems?: .+\\): restore another backup`));
    assert.deepEqual(fs.readdirSync(restoreTarget), [], 'nothing restored');

    // An import checks the file first: without the check it wrote until a statement landed on a damaged page (here one does, and its transaction rolls back; where none does, it reported success, its rows in the damaged file).
    const cards = path.join(dataDir, 'cards.jsonl');
    fs.writeFileSync(cards, ['Imported One', 'Imported Two'].map((name) => JSON.stringify(v1Card(name, `https://${name.toLowerCase().replace(' ', '-')}.example.org/a2a`))).join('\n') + '\n');
    const before = digestOf(file);
    // The registry's record names the file: refused at once, as the check refuses it (STORAGE_UNAVAILABLE, stored 0), naming the record.
    const printed: string[] = [];
    assert.equal(await importCommand([cards], { owner: 'alice', batchSize: 500, json: true, dataDir }, { ...output, out: (text: string) => void printed.push(text) }), 1);
    const refused = JSON.parse(printed.join('')).error;
    assert.equal(refused.code, 'STORAGE_UNAVAILABLE');
    assert.equal(refused.stored, 0);
    assert.match(
      refused.message,
      new RegExp(`^nothing was imported: the database file ${quoted(file)} was found damaged at .+ \\(${quoted(record)} says: the database file is damaged \\(SQLite's quick_check found .+\\)\\. Nothing was written into it\\. ${remedy}.+\\. The restore moves ${quoted(record)} aside with the file$`),
    );
    // Without the record, the import's own check finds the damage.
    fs.renameSync(record, `${record}.aside`);
    said.length = 0;
    assert.equal(await importCommand([cards], { owner: 'alice', batchSize: 500, json: false, dataDir }, output), 1);
    fs.renameSync(`${record}.aside`, record);
    assert.match(said.join(''), new RegExp(`^a2a-registry: nothing was imported: the database file ${quoted(file)} is damaged: SQLite's quick_check found \\d+ problems?: .+\\. Nothing was written into it\\. ${remedy}`));
    assert.equal(digestOf(file), before, 'nothing was written into the file');

    // Its record removed by hand (the file is still damaged): this start knows nothing of it until a read lands on it.
    fs.rmSync(record);
    const second = await start({ REGISTRY_SQLITE_CHECK_HOURS: '0' });
    assert.equal((await readiness(second.registry)).status, 200, 'nothing read the damaged page yet');
    // Listed page by page until a page lands on it.
    let listed: Awaited<ReturnType<typeof rawPost>> | undefined;
    for (let page = 0, token: string | undefined; page < 4; page++) {
      const list = { list: { pageSize: 100, ...(token ? { pageToken: token } : {}) } };
      listed = await rawPost(`${second.registry.url}/a2a/rest/message:send`, JSON.stringify({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ data: list, mediaType: 'application/json' }] } }), {
        headers: { authorization: `Bearer ${TOKENS.alice}` },
      });
      if (listed.status !== 200) break;
      token = listed.json!.task.artifacts[0].parts[0].data.nextPageToken;
    }
    assert.equal(listed!.status, 503, listed!.text.slice(0, 300));
    assert.match(listed!.json!.error.message, /^Storage is unavailable: the database file is damaged \(SQLite found a corrupt page: SQLITE_CORRUPT/);
    assert.match((await readiness(second.registry)).reason!, /^storage is unavailable: the database file is damaged \(SQLite found a corrupt page: SQLITE_CORRUPT/);
    // A lasting fault: no write probe clears it, no write goes into the file (a registration here once succeeded, and cleared the fault).
    assertRefused(await registerBoth(second.registry, 'Damaged Later'), /the database file is damaged/);
    assert.equal((await readiness(second.registry)).status, 503);
    const read = second.lines.find((l) => /SQLite reported the database file .* damaged while the registry used it/.test(l.msg));
    assert.ok(read, 'the corrupt page is logged');
    assert.match(read.msg, fileInMessage);
    assert.match(read.msg, /a2a-registry restore --force <backup>/);
    // Closed knowing the file damaged: no last checkpoint into it, its log left beside it, said.
    await second.registry.close();
    running.splice(0);
    assert.ok(second.lines.some((l) => /is damaged: closed without checkpointing its write-ahead log into it/.test(l.msg)), 'the shutdown says it kept the log');
    assert.ok(fs.existsSync(`${file}-wal`), 'the log is left beside the file');

    // Restarted on the file unrepaired: damaged from its first second (the record the last run left), and the kept log is not folded into the file (its close checkpointed it; the store's own case, a log holding a write, below).
    const [keptFile, keptLog] = [digestOf(file), digestOf(`${file}-wal`)];
    const third = await start({ REGISTRY_SQLITE_CHECK_HOURS: '0' });
    assert.match((await readiness(third.registry)).reason ?? 'ready', /^storage is unavailable: the database file is damaged \(SQLite found a corrupt page: SQLITE_CORRUPT/);
    assertRefused(await registerBoth(third.registry, 'Damaged Restarted'), /the database file is damaged/);
    await third.registry.close();
    running.splice(0);
    assert.ok(third.lines.some((l) => l.level === 50 && new RegExp(`^the database file ${quoted(file)} was found damaged at .+ \\(${quoted(record)} says: `).test(l.msg)), 'the start says why');
    assert.equal(digestOf(file), keptFile, 'nothing was checkpointed into the damaged file');
    assert.equal(digestOf(`${file}-wal`), keptLog, 'its log is kept as it was');

    // A write acknowledged (its pages in the WAL), then a read that lands on the damaged page: the store knows it damaged, and the write is in its log alone.
    damagePage(spareFile, 'entries');
    const notices: string[] = [];
    // Its background checkpoint 2.5 s after a write (250 ms by default): a loaded machine's reads took
    // longer than 250 ms to land on the damaged page, and the checkpoint begun before the damage
    // was known (as it may) went on writing the file after it was hashed below; at load 12 (CI
    // beside four other runs) they took longer than 1 s.
    const writer = new SqliteStore({ file: spareFile, notice: (message) => void notices.push(message), checkpointDelayMs: 2500 });
    await writer.open();
    const written = Date.now();
    await writer.upsert(entryWrite('agent', 'https://after-damage.example.org/a2a', '1', 'After Damage'), actor('alice'));
    await assert.rejects(async () => {
      for (let after: string | undefined, page = 0; page < 10; page++) after = (await writer.list({ limit: 100, ...(after ? { after } : {}) })).next;
    }, (error: Error) => error instanceof StorageUnavailableError && error.fault.lasting === true);
    assert.ok(Date.now() - written < 2500, 'the damage was found before the background checkpoint was due');
    const atDamage = digestOf(spareFile);
    // Past the moment the background checkpointer would have copied the write into the file.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, written + 2650 - Date.now())));
    await writer.close();
    assert.equal(digestOf(spareFile), atDamage, 'nothing was checkpointed into the damaged file, in the background or at close');
    assert.ok(fs.statSync(`${spareFile}-wal`).size > 0, 'its write-ahead log is left beside it');
    assert.match(notices.at(-1) ?? '', new RegExp(`^the database file ${quoted(spareFile)} is damaged: closed without checkpointing its write-ahead log into it; ${quoted(spareFile)}-wal \\(\\d+ bytes\\) is left beside it with what was written since the last checkpoint \\(sqlite3 ${quoted(spareFile)} \\.recover, or \\.dump where \\.recover fails \\(README, Backups\\), reads both;`));
    // The acknowledged write is there for sqlite3's .recover, which reads the file with its log.
    const reader = new Database(spareFile, { readonly: true, fileMustExist: true });
    assert.deepEqual(reader.prepare("SELECT owner FROM entries WHERE kind = 'agent' AND identity_url = ?").get('https://after-damage.example.org/a2a'), { owner: 'alice' });
    reader.close();
    // Opened again unrepaired (as a restart opens it): damaged from the open, a write refused, and the log holding the acknowledged write not folded into the file (its first background checkpoint ran 250 ms after the open, its close checkpointed).
    const [spareKept, spareLog] = [digestOf(spareFile), digestOf(`${spareFile}-wal`)];
    const reopened = new SqliteStore({ file: spareFile });
    running.push(reopened);
    await reopened.open();
    assert.equal(reopened.fault?.lasting, true, 'damaged from the open');
    assert.equal((await reopened.list({ limit: 1 })).entries[0]?.name, 'After Damage', 'reads are served (the newest entry, from the kept log)');
    await assert.rejects(reopened.upsert(entryWrite('agent', 'https://after-restart.example.org/a2a', '1', 'After Restart'), actor('alice')), /^StorageUnavailableError: Storage is unavailable: the database file is damaged \(SQLite found a corrupt page: SQLITE_CORRUPT/);
    await new Promise((resolve) => setTimeout(resolve, 400));
    await reopened.close();
    running.splice(0);
    assert.equal(digestOf(spareFile), spareKept, 'nothing was checkpointed into the damaged file on a restart');
    assert.equal(digestOf(`${spareFile}-wal`), spareLog, 'its log, with the acknowledged write, is kept as it was');

    // Its schema an older release's (taken back one version), opened by this one unrepaired: the
    // pending migration ran into the damaged file (the open read-write); now the store opens it
    // read-only and refuses, naming the file, the record and the repair, and writes nothing.
    const older = new Database(spareFile);
    older.prepare('DELETE FROM registry_migrations WHERE version = ?').run(SQLITE_SCHEMA_VERSION);
    older.close();
    const olderKept = digestOf(spareFile);
    await assert.rejects(
      new SqliteStore({ file: spareFile }).open(),
      new RegExp(
        `^Error: the database file ${quoted(spareFile)} was found damaged at .+ \\(${quoted(spareFile)}\\.damaged says: the database file is damaged .+\\), and its schema is version ${SQLITE_SCHEMA_VERSION - 1}, older than this release's ${SQLITE_SCHEMA_VERSION}: ` +
          `bringing it up to date would write into the damaged file, so the registry does not start on it\\. Stop the registry and restore the latest good backup .+\\. The restored file is brought up to date when the registry starts on it$`,
      ),
    );
    assert.equal(digestOf(spareFile), olderKept, 'no migration was written into the damaged file');
    const versions = new Database(spareFile, { readonly: true });
    assert.deepEqual(versions.prepare('SELECT max(version) AS v FROM registry_migrations').get(), { v: SQLITE_SCHEMA_VERSION - 1 }, 'nor into its log');
    versions.close();
  });

  test("a corrupt page met only by an entry's list of revisions (get's history): recorded as the file's damage, writes refused, as get's own read does, not an internal error", async () => {
    const file = path.join(tempDir('registry-damaged-revisions-'), 'registry.db');
    const store = new SqliteStore({ file });
    await store.open();
    let id = '';
    for (let v = 1; v <= 12; v++) {
      const outcome = await store.upsert(entryWrite('agent', 'https://revisions.example.org/a2a', String(v), `Revisions ${'x'.repeat(300)}`), actor('alice'));
      assert.ok('entry' in outcome);
      id = outcome.entry.id;
    }
    await store.close();
    // The leaf holding the oldest revisions: the current one (another leaf) still reads.
    const reader = new Database(file, { readonly: true });
    const leaves = reader.prepare("SELECT pageno FROM dbstat WHERE name = 'entry_revisions' AND pagetype = 'leaf' ORDER BY path").all() as { pageno: number }[];
    const pageSize = reader.pragma('page_size', { simple: true }) as number;
    reader.close();
    assert.ok(leaves.length > 1, 'the revisions span several leaves');
    const handle = fs.openSync(file, 'r+');
    fs.writeSync(handle, Buffer.alloc(pageSize, 0x5a), 0, pageSize, (leaves[0]!.pageno - 1) * pageSize);
    fs.closeSync(handle);
    const damaged = new SqliteStore({ file });
    const fault = () => damaged.fault;
    try {
      await damaged.open();
      assert.equal((await damaged.get(id))?.revision, 12, 'the current revision reads');
      assert.equal(fault(), undefined, 'nothing read the damaged page yet');
      await assert.rejects(damaged.revisions(id, 100), (error: Error) => {
        assert.ok(error instanceof StorageUnavailableError, `${error.name}: ${error.message}`);
        assert.match(error.message, /^Storage is unavailable: the database file is damaged \(SQLite found a corrupt page: SQLITE_CORRUPT/);
        return true;
      });
      assert.equal(fault()?.lasting, true, 'the damage is recorded');
      await assert.rejects(damaged.upsert(entryWrite('agent', 'https://after-revisions.example.org/a2a'), actor('alice')), /^StorageUnavailableError: Storage is unavailable: the database file is damaged/);
    } finally {
      await damaged.close();
    }
  });

  test('an emptied (0-byte) database file where a registry had data: the registry does not start, names the file, what is wrong and what to do, and leaves the saved index; a new data directory with an empty or no file starts', async (t) => {
    const dataDir = tempDir('registry-emptied-');
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const first = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir });
    try {
      const alice = await sdkClient(first.url, { token: TOKENS.alice });
      resultOf(await op(alice, { register: { agentCard: v1Card('Emptied One', 'https://emptied-one.example.org/a2a') } }));
    } finally {
      await first.close();
    }
    const file = path.join(dataDir, 'registry.db');
    const snapshot = path.join(dataDir, 'search-index.snapshot');
    const saved = digestOf(snapshot);
    // As a failed copy, a full disk or a truncation leaves it.
    fs.truncateSync(file, 0);
    for (const extra of ['-wal', '-shm']) fs.rmSync(`${file}${extra}`, { force: true });
    const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    // It started empty and saved its empty index over this one, the last trace of the data.
    // A registry that starts all the same is closed, or the test would wait for it.
    const refusal = () => startTestRegistry({ REGISTRY_DATA_DIR: dataDir }).then((started) => started.close());
    await assert.rejects(refusal(), (error: Error) => {
      assert.match(error.message, new RegExp(`^the database file ${escaped(file)} is empty \\(0 bytes\\), but the saved search index ${escaped(snapshot)} is of a database whose change log had reached position [1-9]\\d* \\(1 entry, saved `));
      assert.match(error.message, /a failed copy, a full disk or a truncation/);
      assert.match(error.message, new RegExp(`Restore the database from a backup \\(a2a-registry restore --force <backup>\\), or, to start with an empty registry on purpose, remove ${escaped(file)} and ${escaped(snapshot)}\\.$`));
      return true;
    });
    assert.equal(fs.statSync(file).size, 0, 'the database file is as it was');
    assert.equal(digestOf(snapshot), saved, 'the saved index is as it was');

    // A write-ahead log with something in it is evidence too: SQLite would delete it.
    fs.rmSync(snapshot);
    fs.writeFileSync(`${file}-wal`, Buffer.alloc(4096, 1));
    await assert.rejects(refusal(), /is empty \(0 bytes\), but its write-ahead log .*registry\.db-wal holds 4096 bytes .* remove .*registry\.db and .*registry\.db-wal\.$/);
    assert.equal(fs.statSync(`${file}-wal`).size, 4096, 'the write-ahead log is as it was');

    // A new data directory: an empty file (created, never written) and no file at all both start.
    fs.rmSync(`${file}-wal`);
    for (const make of [() => fs.truncateSync(file, 0), () => fs.rmSync(file)]) {
      make();
      const fresh = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir });
      await fresh.close();
    }
  });

  test('a saved index this database did not load is not written over while nothing is indexed; one it saved is removed once its entries are deleted', async (t) => {
    const dataDir = tempDir('registry-unsaved-');
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const snapshot = path.join(dataDir, 'search-index.snapshot');
    const first = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir });
    try {
      const alice = await sdkClient(first.url, { token: TOKENS.alice });
      resultOf(await op(alice, { register: { agentCard: v1Card('Unsaved One', 'https://unsaved-one.example.org/a2a') } }));
    } finally {
      await first.close();
    }
    const saved = digestOf(snapshot);
    // The database gone (not emptied): a new one starts, the index saved beside the old one is not its own.
    for (const extra of ['', '-wal', '-shm']) fs.rmSync(path.join(dataDir, `registry.db${extra}`), { force: true });
    const second = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir });
    await second.close();
    assert.equal(digestOf(snapshot), saved, 'not written over by an empty index (it wrote entries:0 over it)');

    // Its own saved index, its entries deleted since: removed, not left holding them.
    fs.rmSync(snapshot);
    let id: string;
    const third = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir });
    try {
      const alice = await sdkClient(third.url, { token: TOKENS.alice });
      id = String(resultOf(await op(alice, { register: { agentCard: v1Card('Unsaved Two', 'https://unsaved-two.example.org/a2a') } })).id);
    } finally {
      await third.close();
    }
    assert.ok(fs.existsSync(snapshot), 'saved at shutdown');
    const fourth = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir });
    try {
      const alice = await sdkClient(fourth.url, { token: TOKENS.alice });
      assert.equal(resultOf(await op(alice, { unregister: { id } })).deleted, true);
    } finally {
      await fourth.close();
    }
    assert.ok(!fs.existsSync(snapshot), 'the index of deleted entries is not kept');
  });

  test('a restore killed at any moment while it puts its copy in place (a crash image taken before each of its renames and removals): the next start finishes it, never begins an empty registry, never replays the old write-ahead log into the new file; the replaced database keeps its log; an import, `check`, `backup` and `migrate` refuse until then, the next restore finishes it first; a copy gone is said, nothing created', async (t) => {
    const dir = tempDir('registry-restore-swap-');
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const urlsIn = (file: string): string[] => {
      const db = new Database(file);
      try {
        return (db.prepare('SELECT identity_url AS url FROM entries ORDER BY url').all() as { url: string }[]).map((r) => r.url);
      } finally {
        db.close();
      }
    };
    // The backup (a copy as `a2a-registry backup` makes it), then the data directory restored
    // into: that registry killed with its last commits in its -wal (copied while open: a crash image).
    const live = path.join(dir, 'live');
    const running = new SqliteStore({ file: path.join(live, 'registry.db'), singleProcess: true });
    await running.open();
    await running.upsert(entryWrite('agent', 'https://backed-up.example.org/a2a'), actor('alice'));
    const backup = path.join(dir, 'backup.db');
    const reader = new Database(path.join(live, 'registry.db'), { readonly: true });
    reader.prepare('VACUUM INTO ?').run(backup);
    reader.close();
    for (const name of ['old-one', 'old-two']) await running.upsert(entryWrite('agent', `https://${name}.example.org/a2a`), actor('alice'));
    const dataDir = path.join(dir, 'data');
    fs.mkdirSync(dataDir, { mode: 0o700 });
    for (const suffix of ['', '-wal']) fs.copyFileSync(path.join(live, `registry.db${suffix}`), path.join(dataDir, `registry.db${suffix}`));
    await running.close();
    const file = path.join(dataDir, 'registry.db');
    assert.ok(fs.statSync(`${file}-wal`).size > 0, 'the database restored over has commits in its -wal');

    // Each moment a SIGKILL or a power loss may stop the swap at: the folder as it is then, copied.
    const images: string[] = [];
    let last = '';
    const image = (): void => {
      // One image per state of the folder (a removal of a file not there changes nothing).
      const listing = fs.readdirSync(dataDir).sort().join(' ');
      if (listing === last) return;
      last = listing;
      const to = path.join(dir, `image-${images.length}`);
      fs.cpSync(dataDir, to, { recursive: true });
      images.push(to);
    };
    const { renameSync, rmSync } = fs;
    let swapping = false;
    // Patched for this process (the other test running meanwhile is passed through): the swap runs on the restore's own thread.
    fs.renameSync = (from: fs.PathLike, to: fs.PathLike): void => {
      if (String(from).startsWith(dataDir)) {
        swapping = true;
        image();
      }
      renameSync(from, to);
    };
    fs.rmSync = (target: fs.PathLike, options?: fs.RmOptions): void => {
      if (swapping && String(target).startsWith(dataDir)) image();
      rmSync(target, options);
    };
    let restored;
    try {
      restored = await restoreSqlite(backup, file, { overwrite: true });
    } finally {
      fs.renameSync = renameSync;
      fs.rmSync = rmSync;
    }
    assert.ok(restored.replaced);
    assert.ok(images.length >= 4, `${images.length} moments`);
    assert.ok(images.some((at) => !fs.existsSync(path.join(at, 'registry.db'))), 'one moment has no registry.db at all');

    // The worst moment (the database moved aside, its copy not yet in place), before any start:
    // an import (no process lock: it may not finish the swap) and `check` refuse, saying what to
    // do; with the copy gone (removed by hand), the start refuses, naming how to undo, and creates nothing.
    const worst = images.find((at) => !fs.existsSync(path.join(at, 'registry.db')))!;
    const worstFile = path.join(worst, 'registry.db');
    const underWay = /^a restore of .*backup\.db into .*registry\.db stopped half way \(.*registry\.db\.restore-unfinished records it\).*Start the registry \(it finishes the restore as it starts, and says so\) or run the restore again/;
    // Opened all the same (the failure this pins), it is closed: the test fails instead of waiting on it.
    const openAndClose = async (store: SqliteStore): Promise<void> => {
      await store.open();
      await store.close();
    };
    await assert.rejects(openAndClose(new SqliteStore({ file: worstFile })), (error: Error) => underWay.test(error.message));
    const said: string[] = [];
    const output = { out: () => undefined, err: (text: string) => void said.push(text), color: false };
    assert.equal(await checkCommand({ dataDir: worst, quick: true, json: false }, output), 1);
    assert.match(said.join(''), new RegExp(`^a2a-registry: ${underWay.source.slice(1)}`));
    // backup and migrate read the database too: they copied the one the restore was replacing, or said there was none.
    const oldInPlace = images.find((at) => fs.existsSync(path.join(at, 'registry.db')) && fs.existsSync(path.join(at, 'registry.db.restore-unfinished')));
    assert.ok(oldInPlace, 'a moment with the record written and the replaced database still in place');
    for (const at of [worst, oldInPlace]) {
      said.length = 0;
      const copy = path.join(dir, 'copy-during-restore.db');
      assert.equal(await backupCommand(copy, { dataDir: at, force: false, json: false }, output), 1, said.join(''));
      assert.equal(await migrateCommand({ from: at, to: 'postgres://127.0.0.1:1/registry', force: false, batchSize: 100, json: false }, output), 1, said.join(''));
      assert.equal(said.length, 2, said.join(''));
      for (const text of said) assert.match(text, new RegExp(`^a2a-registry: ${underWay.source.slice(1)}`));
      assert.ok(!fs.existsSync(copy), 'no backup written');
    }
    const copyGone = path.join(dir, 'copy-gone');
    fs.cpSync(worst, copyGone, { recursive: true });
    for (const name of fs.readdirSync(copyGone)) if (/\.restore-\d+\.tmp$/.test(name)) fs.rmSync(path.join(copyGone, name));
    await assert.rejects(openAndClose(new SqliteStore({ file: path.join(copyGone, 'registry.db'), singleProcess: true })), (error: Error) => {
      assert.match(error.message, /its copy .*registry\.db\.restore-\d+\.tmp is gone, so it cannot be finished; there is no database at .*registry\.db, and starting would begin an empty registry\. Restore again \(a2a-registry restore --force .*backup\.db\), or undo it: mv .*registry\.db\.replaced-\S+ .*registry\.db; mv .*registry\.db\.replaced-\S+-wal .*registry\.db-wal; (mv \S+-shm \S+-shm; )?rm .*registry\.db\.restore-unfinished\.$/);
      return true;
    });
    assert.ok(!fs.existsSync(path.join(copyGone, 'registry.db')), 'no empty database created');
    // The next restore finishes it too, first, and says so (here refused after that: a database is in place, no --force).
    const restoreAgain = path.join(dir, 'restore-again');
    fs.cpSync(worst, restoreAgain, { recursive: true });
    await assert.rejects(restoreSqlite(backup, path.join(restoreAgain, 'registry.db'), { overwrite: false }), (error: Error) => {
      assert.match(error.message, /registry\.db exists \(the restore of .*backup\.db, stopped half way, was finished first; the database it replaced is kept as .*registry\.db\.replaced-\S+\): pass --force/);
      return true;
    });
    assert.deepEqual(urlsIn(path.join(restoreAgain, 'registry.db')), ['https://backed-up.example.org/a2a']);

    // Every moment, finished as the start finishes it (the worst through a registry's start itself, above and here).
    for (const [i, at] of images.entries()) {
      const database = path.join(at, 'registry.db');
      const recorded = fs.existsSync(`${database}.restore-unfinished`);
      const told: string[] = [];
      if (at === worst) {
        const store = new SqliteStore({ file: database, singleProcess: true, notice: (message) => told.push(message) });
        await store.open();
        await store.close();
        assert.ok(told.some((m) => /^a restore of .*backup\.db had stopped half way through putting its copy in place .*: it was finished; the database it replaced is kept as .*registry\.db\.replaced-/.test(m)), told.join(' | '));
      } else {
        assert.equal(finishUnfinishedRestore(database)?.finished, recorded ? true : undefined, `moment ${i}`);
      }
      // Before, a moment without registry.db started empty (the copy removed as a leftover).
      assert.deepEqual(urlsIn(database), ['https://backed-up.example.org/a2a'], `moment ${i}: the restored database, whole (no old -wal replayed into it)`);
      const replaced = fs.readdirSync(at).filter((name) => /^registry\.db\.replaced-.*Z$/.test(name));
      assert.equal(replaced.length, 1, `moment ${i}: ${fs.readdirSync(at).join(', ')}`);
      assert.deepEqual(urlsIn(path.join(at, replaced[0]!)), ['https://backed-up.example.org/a2a', 'https://old-one.example.org/a2a', 'https://old-two.example.org/a2a'], `moment ${i}: the replaced database with its log`);
      assert.deepEqual(fs.readdirSync(at).filter((name) => /restore/.test(name)), [], `moment ${i}: no record, no copy left`);
    }
  });

  test('the database file replaced under a store: a registry is told to restart, a process writing beside it (an import) that what it wrote went with the file it had open', async (t) => {
    const dir = tempDir('registry-replaced-');
    const file = path.join(dir, 'registry.db');
    const stores = [new SqliteStore({ file, singleProcess: true }), new SqliteStore({ file })];
    t.after(async () => {
      for (const store of stores) await store.close().catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const other = path.join(dir, 'other.db');
    for (const [i, store] of stores.entries()) {
      await store.open();
      await store.upsert(entryWrite('agent', `https://replaced-${i}.example.com/a`), actor('alice'));
      // Another file in its place, as a restore (or a hand) puts one.
      fs.copyFileSync(file, other);
      fs.renameSync(other, file);
      await assert.rejects(store.upsert(entryWrite('agent', `https://replaced-${i}-again.example.com/a`), actor('alice')), (error: Error) => {
        assert.ok(error instanceof StorageUnavailableError);
        assert.equal(error.fault.code, 'REPLACED');
        // "restart the registry to use it" was said to an import too, which has no registry to restart.
        if (i === 0) assert.match(error.message, /while the registry was running; restart the registry to use it$/);
        else assert.match(error.message, /while this process was writing to it; what it wrote went with the file it had open$/);
        return true;
      });
      await store.close().catch(() => undefined);
      for (const extra of ['-wal', '-shm']) fs.rmSync(`${file}${extra}`, { force: true });
    }
  });

  test('the write-ahead log deleted under a process writing beside the registry (an import): its writes refused, named', async (t) => {
    const dir = tempDir('registry-wal-import-');
    const file = path.join(dir, 'registry.db');
    const store = new SqliteStore({ file });
    t.after(async () => {
      await store.close().catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    });
    await store.open();
    await store.upsert(entryWrite('agent', 'https://wal-import.example.com/a'), actor('alice'));
    fs.rmSync(`${file}-wal`);
    // Not re-created: a registry beside it may be writing the same file.
    await assert.rejects(store.upsert(entryWrite('agent', 'https://wal-import-again.example.com/a'), actor('alice')), (error: Error) => {
      assert.ok(error instanceof StorageUnavailableError);
      assert.equal(error.fault.code, 'WAL_LOST');
      assert.match(error.message, /write-ahead log \(registry\.db-wal\) was deleted while this process was writing to it; what it wrote since the last checkpoint went with it$/);
      return true;
    });
  });

  test('a write refused after its commit: its change stays pending (watch positions and the saved index stop before it) until it is published', async (t) => {
    const parent = tempDir('registry-refused-');
    const dir = path.join(parent, 'data');
    // The directory replaced by a file in the middle of a write, between the check before BEGIN
    // and the one after COMMIT (a trigger of this connection's calls it): the race a check before
    // the write cannot close.
    let vanish = false;
    const store = new SqliteStore({
      file: path.join(dir, 'registry.db'),
      onConnection: (db) => {
        db.function('vanish_data_dir', () => {
          if (!vanish) return 0;
          vanish = false;
          fs.rmSync(dir, { recursive: true, force: true });
          fs.writeFileSync(dir, 'not a directory');
          return 1;
        });
        db.exec('CREATE TEMP TRIGGER IF NOT EXISTS vanish_data_dir AFTER INSERT ON changes BEGIN SELECT vanish_data_dir(); END');
      },
    });
    t.after(async () => {
      await store.close();
      fs.rmSync(parent, { recursive: true, force: true });
    });
    await store.open();
    let publish: (() => void) | undefined;
    const announced: string[][] = [];
    store.onUnacknowledgedChanges((ids) => {
      announced.push(ids);
      return new Promise<void>((resolve) => (publish = resolve));
    });
    await store.upsert(entryWrite('agent', 'https://refused-one.example.com/a'), actor('alice'));
    assert.equal(store.ownChanges.firstPending(), undefined);
    // The file cannot be re-created (a file where its directory was): the commit is refused after it committed.
    vanish = true;
    await assert.rejects(store.upsert(entryWrite('agent', 'https://refused-two.example.com/a'), actor('alice')), (error: unknown) => {
      assert.ok(error instanceof StorageUnavailableError);
      // It is in the connection, and kept if storage recovers: the refusal must not say it was not stored.
      assert.match(error.message, /^Storage is unavailable: the database file was deleted and cannot be re-created: .*; this write was committed to the open database before the fault was found, so it may have been stored or not .*: read it back \(get\) before sending it again$/);
      assert.ok(error.consequence);
      return true;
    });
    const refused = await store.lastChangeSeq();
    // Refused before its BEGIN, the next write changes nothing (it was committed to the connection too).
    await assert.rejects(store.upsert(entryWrite('agent', 'https://refused-three.example.com/a'), actor('alice')), (error: unknown) => {
      assert.ok(error instanceof StorageUnavailableError);
      assert.equal(error.consequence, undefined);
      return true;
    });
    assert.equal(await store.lastChangeSeq(), refused, 'nothing committed');
    // Before, it stopped being pending as soon as it was refused: a watch stored its position past
    // it while nothing had published it yet, and a crash before it was published lost its event.
    assert.equal(store.ownChanges.firstPending(), refused, 'pending while not published');
    fs.rmSync(dir);
    assert.equal(await store.probeWrites(), true);
    assert.equal(announced.length, 1, 'announced once storage takes writes again');
    assert.equal(store.ownChanges.firstPending(), refused, 'pending while its publication runs');
    publish!();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(store.ownChanges.firstPending(), undefined, 'published: no longer pending');
  });

  test('read-only (simulated with PRAGMA query_only): writes refused and named, the probe clears it', async (t) => {
    const dir = tempDir('registry-readonly-');
    let connection: Database.Database | undefined;
    const store = new SqliteStore({ file: path.join(dir, 'registry.db'), onConnection: (db) => (connection = db) });
    // The store closes before its directory goes (closing re-creates a deleted database file).
    t.after(async () => {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    await store.open();
    await store.upsert(entryWrite('agent', 'https://readonly.example.com/a'), actor('alice'));
    connection!.pragma('query_only = ON');
    await assert.rejects(store.upsert(entryWrite('agent', 'https://readonly.example.com/b'), actor('alice')), (error: unknown) => {
      assert.ok(error instanceof StorageUnavailableError);
      assert.equal(error.fault.reason, 'read-only');
      assert.match(error.message, /the database is read-only/);
      return true;
    });
    assert.equal(store.fault?.reason, 'read-only');
    assert.equal((await store.count()).agent, 1, 'reads still work');
    assert.equal(await store.probeWrites(), false);
    assert.equal(store.fault?.reason, 'read-only');
    connection!.pragma('query_only = OFF');
    assert.equal(await store.probeWrites(), true);
    assert.equal(store.fault, undefined);
  });

  test('storage down under the refresh loop: logged once when its rounds start failing and once when they succeed again (with how long), debug lines between', { timeout: 10_000 }, async (t) => {
    const dir = tempDir('registry-refresh-outage-');
    let connection: Database.Database | undefined;
    const store = new SqliteStore({ file: path.join(dir, 'registry.db'), onConnection: (db) => (connection = db) });
    const lines: { level: number; msg: string; failedRounds?: number; failedForSeconds?: number }[] = [];
    let seen: (() => void) | undefined;
    const capture = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line) as (typeof lines)[number]);
        seen?.();
        done();
      },
    });
    const logged = (what: (l: (typeof lines)[number]) => boolean) =>
      new Promise<void>((resolve) => {
        seen = () => lines.some(what) && resolve();
        seen();
      });
    const loop = new RefreshLoop(store, { checkDue: async () => 'skipped' }, createLogger('debug', capture), { tickMs: 10, intervalMs: 60_000, leaseMs: 60_000, probe: false });
    t.after(async () => {
      await loop.stop();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    await store.open();
    await loop.start();
    connection!.pragma('query_only = ON');
    // Before, every tick (up to every 30 s) logged "refresh round failed" at error, with its stack, for as long as storage was down.
    await logged((l) => l.msg === 'refresh round failed again' && lines.filter((m) => m.msg === 'refresh round failed again').length >= 3);
    connection!.pragma('query_only = OFF');
    await logged((l) => l.msg === 'refresh rounds succeed again');
    const said = lines.filter((l) => l.level >= 30).map((l) => l.msg);
    assert.deepEqual(said, ['refresh rounds fail; retried every tick, logged again when one succeeds', 'refresh rounds succeed again']);
    const end = lines.find((l) => l.msg === 'refresh rounds succeed again')!;
    assert.ok(end.failedRounds! >= 4 && end.failedForSeconds! >= 0, JSON.stringify(end));
  });
});

// Tests that move this process's wall clock (Date.now): not beside others (the describe above runs two at once).
describe('SQLite storage faults: the wall clock steps (NTP)', () => {
  test('the wall clock stepping back (NTP) during an outage does not stop the write probe: ready again once storage is', async (t) => {
    const dir = tempDir('registry-probe-clock-');
    let connection: Database.Database | undefined;
    const store = new SqliteStore({ file: path.join(dir, 'registry.db'), onConnection: (db) => (connection = db) });
    const realNow = Date.now;
    t.after(async () => {
      Date.now = realNow;
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    await store.open();
    const probe = new StorageProbe(store, createLogger('silent'));
    connection!.pragma('query_only = ON');
    await assert.rejects(store.upsert(entryWrite('agent', 'https://probe-clock.example.com/a'), actor('alice')), StorageUnavailableError);
    assert.match((await probe.notReady()) ?? '', /read-only/, 'not ready: the probe fails');
    // The clock steps back an hour; storage takes writes again.
    Date.now = () => realNow() - 3_600_000;
    connection!.pragma('query_only = OFF');
    // A probe runs at most once a second.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.equal(await probe.notReady(), undefined, 'ready again: the probe ran and succeeded');
  });

  test('a write waiting for another process\'s write lock waits REGISTRY_SQLITE_LOCK_WAIT_MS though the wall clock steps forward (NTP) meanwhile', async (t) => {
    const dir = tempDir('registry-lock-clock-');
    const file = path.join(dir, 'registry.db');
    const store = new SqliteStore({ file, busyTimeoutMs: 5000 });
    const realNow = Date.now;
    let holder: Database.Database | undefined;
    t.after(async () => {
      Date.now = realNow;
      if (holder?.inTransaction) holder.exec('ROLLBACK');
      holder?.close();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    await store.open();
    holder = new Database(file);
    holder.exec('BEGIN IMMEDIATE');
    const write = store.upsert(entryWrite('agent', 'https://lock-clock.example.com/a'), actor('alice'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The write is waiting (it tried once); the clock steps an hour forward, then the lock is let go.
    Date.now = () => realNow() + 3_600_000;
    await new Promise((resolve) => setTimeout(resolve, 300));
    holder.exec('ROLLBACK');
    const written = await write;
    Date.now = realNow;
    assert.equal(written.status, 'created');
  });

  test('storage down under the refresh loop while the wall clock steps back: the outage is logged with how long it really lasted', { timeout: 10_000 }, async (t) => {
    const dir = tempDir('registry-refresh-clock-');
    let connection: Database.Database | undefined;
    const store = new SqliteStore({ file: path.join(dir, 'registry.db'), onConnection: (db) => (connection = db) });
    const lines: { msg: string; failedForSeconds?: number }[] = [];
    let seen: (() => void) | undefined;
    const capture = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line) as (typeof lines)[number]);
        seen?.();
        done();
      },
    });
    const logged = (msg: string) =>
      new Promise<void>((resolve) => {
        seen = () => lines.some((l) => l.msg === msg) && resolve();
        seen();
      });
    const loop = new RefreshLoop(store, { checkDue: async () => 'skipped' }, createLogger('debug', capture), { tickMs: 10, intervalMs: 60_000, leaseMs: 60_000, probe: false });
    const realNow = Date.now;
    t.after(async () => {
      Date.now = realNow;
      await loop.stop();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    await store.open();
    await loop.start();
    connection!.pragma('query_only = ON');
    await logged('refresh round failed again');
    Date.now = () => realNow() - 3_600_000;
    connection!.pragma('query_only = OFF');
    await logged('refresh rounds succeed again');
    Date.now = realNow;
    const end = lines.find((l) => l.msg === 'refresh rounds succeed again')!;
    assert.ok(end.failedForSeconds! >= 0 && end.failedForSeconds! < 60, JSON.stringify(end));
  });
});

describe('PostgreSQL storage faults', () => {
  const [, postgres] = storageEngines();
  /** A fresh database, and the short statement timeout of the tests that wait one out. */
  const lockTestEnv = async (): Promise<Record<string, string>> => ({ ...(await postgres!.env()), REGISTRY_POSTGRES_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) });

  /** Runs `work` on a connection to the server's maintenance database, with the name of `url`'s database. */
  async function asAdmin<T>(url: string, work: (client: pg.Client, database: string) => Promise<T>): Promise<T> {
    const target = new URL(url);
    const database = target.pathname.slice(1);
    target.pathname = '/postgres';
    const client = new pg.Client({ connectionString: target.toString() });
    await client.connect();
    try {
      return await work(client, database);
    } finally {
      await client.end();
    }
  }
  const admin = (url: string, sql: string) =>
    asAdmin(url, async (client, database) => {
      await client.query(sql.replaceAll('$db', `"${database}"`).replaceAll('$name', `'${database}'`));
    });
  /**
   * Drops every session on the database, so the pool reconnects with the database's new settings.
   * pg_terminate_backend only signals: until the old sessions are gone, a query can still reach one
   * and run with the old settings, so this waits for them to be gone, and then a little for the
   * registry to see its sockets close.
   */
  async function kickSessions(url: string): Promise<void> {
    await asAdmin(url, async (client, database) => {
      const { rows } = await client.query<{ now: Date }>('SELECT now() AS now');
      await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
      await eventually(10_000, async () => {
        const left = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND backend_start < $2', [database, rows[0]!.now]);
        return left.rows[0]!.n === 0;
      }, 'the old sessions are gone');
    });
    await new Promise((r) => setTimeout(r, 100));
  }

  test('read-only: writes refused and named, searches answered, ready again once it takes writes', async (t) => {
    const skip = postgres!.skip();
    if (skip) return t.skip(skip);
    const env = await postgres!.env();
    const registry = await startTestRegistry(env);
    t.after(() => registry.close());
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const id = resultOf(await op(alice, { register: { agentCard: v1Card('Readonly One', 'https://readonly-one.example.org/a2a') } })).id;

    await admin(env.DATABASE_URL!, 'ALTER DATABASE $db SET default_transaction_read_only = on');
    await kickSessions(env.DATABASE_URL!);
    assertRefused(await registerBoth(registry, 'Readonly Two'), /the database is read-only/);
    await assertSearchable(registry, 'Readonly', 1);
    assert.equal(resultOf(await op(alice, { get: { id } })).name, 'Readonly One');
    assert.match((await readiness(registry)).reason!, /storage is unavailable: the database is read-only \(25006/);

    await admin(env.DATABASE_URL!, 'ALTER DATABASE $db RESET default_transaction_read_only');
    await kickSessions(env.DATABASE_URL!);
    await eventually(15_000, async () => (await readiness(registry)).status === 200, 'ready once the database takes writes');
    assert.equal(stateOf(await op(alice, { register: { agentCard: v1Card('Readonly Three', 'https://readonly-three.example.org/a2a') } })), 'TASK_STATE_COMPLETED');
  });

  test('unreachable: writes refused and named, searches answered, ready again when it is back', async (t) => {
    const skip = postgres!.skip();
    if (skip) return t.skip(skip);
    if (!postgres!.server?.controllable) return t.skip('the PostgreSQL server is not ours to stop (TEST_DATABASE_URL)');
    const registry = await startTestRegistry(await postgres!.env());
    t.after(() => registry.close());
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    resultOf(await op(alice, { register: { agentCard: v1Card('Unreachable One', 'https://unreachable-one.example.org/a2a') } }));
    await postgres!.server.halt();
    let resumed = false;
    t.after(async () => {
      if (!resumed) await postgres!.server!.resume();
    });
    assertRefused(await registerBoth(registry, 'Unreachable Two', true), /the database server cannot be reached/);
    // The catalog doors read storage too: their 503 says when to retry, as the A2A doors' does.
    for (const path of ['/.well-known/ai-catalog.json', '/agents']) {
      const answer = await fetch(`${registry.url}${path}`);
      assert.equal(answer.status, 503, path);
      assert.equal(answer.headers.get('retry-after'), '5', path);
      assert.equal(((await answer.json()) as { retryAfterSeconds?: number }).retryAfterSeconds, 5, path);
    }
    await assertSearchable(registry, 'Unreachable', 1);
    assert.equal((await readiness(registry)).status, 503);
    // The metrics an outage is watched by are scraped: only the entry counts, read from storage, are left out.
    // Before, the failed count failed the whole scrape (503 "metrics are unavailable right now").
    const scrape = await fetch(`${registry.url}/metrics`);
    assert.equal(scrape.status, 200);
    const metrics = await scrape.text();
    assert.match(metrics, /^registry_storage_writable 0$/m);
    assert.doesNotMatch(metrics, /^registry_entries\{/m);
    await postgres!.server.resume();
    resumed = true;
    await eventually(20_000, async () => (await readiness(registry)).status === 200, 'ready once the server is back');
    assert.equal(stateOf(await op(alice, { register: { agentCard: v1Card('Unreachable Three', 'https://unreachable-three.example.org/a2a') } })), 'TASK_STATE_COMPLETED');
    assert.match(await (await fetch(`${registry.url}/metrics`)).text(), /^registry_entries\{kind="agent"\} 2$/m, 'counted again once storage answers');
  });

  // The three wait out the statement timeout on a lock another session holds, each with a registry
  // and a database of its own (advisory locks are per database too): side by side, one wait of
  // the file's instead of three. (Not beside the tests above: `unreachable` stops the server.)
  describe('a lock another session holds', { concurrency: true }, () => {
    test('a lock held past the statement timeout, and no connection left (53300): writes refused as STORAGE_UNAVAILABLE, not failed tasks; /readyz stays ready while only locked rows fail, not while no connection opens', { timeout: 90_000 }, async (t) => {
      const skip = postgres!.skip();
      if (skip) return t.skip(skip);
      const env = await lockTestEnv();
      // A role that is no superuser: a connection limit does not apply to superusers.
      const role = `registry_${process.pid}_${Date.now().toString(36)}`;
      await admin(env.DATABASE_URL!, `CREATE ROLE ${role} LOGIN`);
      await admin(env.DATABASE_URL!, `ALTER DATABASE $db OWNER TO ${role}`);
      const url = new URL(env.DATABASE_URL!);
      url.username = role;
      const registry = await startTestRegistry({ ...env, DATABASE_URL: url.toString() });
      t.after(() => registry.close());
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      const id = resultOf(await op(alice, { register: { agentCard: v1Card('Locked One', 'https://locked-one.example.org/a2a') } })).id;

      // Another session holds the entries table past the registry's statement timeout.
      const holder = await otherSession(env.DATABASE_URL!);
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE entries IN ACCESS EXCLUSIVE MODE');
      // A read waits for that lock too, beside the writes (one wait): refused as a read's wait,
      // not as a write's nor as storage down. Before, it said "a write waited longer than the
      // statement timeout" and recorded the store's fault, as a write's refusal does.
      const [refusals, read] = await Promise.all([
        registerBothAtOnce(registry, 'Locked Two'),
        rawPost(`${registry.url}/a2a/jsonrpc`, sendMessage([{ data: { get: { id } }, mediaType: 'application/json' }]), { signal: AbortSignal.timeout(60_000) }),
      ]);
      assertRefused(refusals, /a write waited longer than the statement timeout, for a lock another session or replica holds/);
      const readError = read.json!.error as WireJson;
      assert.match(readError.message, /^The read waited too long for a lock: a read waited longer than the statement timeout, for a lock another session or replica holds on a table .*; the read changed nothing: try again shortly\.$/);
      assert.doesNotMatch(readError.message, /a write|cannot store|unavailable/i);
      assert.equal(readError.data[0].reason, 'STORAGE_UNAVAILABLE');
      assert.equal(read.headers.get('retry-after'), '5');
      // The probe (its own row) still writes: the lock refuses the writes that need it, and every replica alike.
      assert.equal((await readiness(registry)).status, 200);
      await holder.query('ROLLBACK');
      await holder.end();
      assert.equal(stateOf(await op(alice, { register: { agentCard: v1Card('Locked Four', 'https://locked-four.example.org/a2a') } })), 'TASK_STATE_COMPLETED');

      await admin(env.DATABASE_URL!, 'ALTER DATABASE $db CONNECTION LIMIT 0');
      await kickSessions(env.DATABASE_URL!);
      assertRefused(await registerBoth(registry, 'Limited One'), /the database server has no connection left for the registry/);
      assert.match((await readiness(registry)).reason!, /storage is unavailable: the database server has no connection left .*\(53300/);
      await admin(env.DATABASE_URL!, 'ALTER DATABASE $db CONNECTION LIMIT -1');
      await eventually(15_000, async () => (await readiness(registry)).status === 200, 'ready once connections are taken again');
      assert.equal(stateOf(await op(alice, { register: { agentCard: v1Card('Limited Two', 'https://limited-two.example.org/a2a') } })), 'TASK_STATE_COMPLETED');
    });

    test('the change-log lock held by another session (every write takes it): writes refused as STORAGE_UNAVAILABLE, /readyz not ready until it is free', { timeout: 90_000 }, async (t) => {
      const skip = postgres!.skip();
      if (skip) return t.skip(skip);
      const env = await lockTestEnv();
      const registry = await startTestRegistry(env);
      t.after(() => registry.close());
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      resultOf(await op(alice, { register: { agentCard: v1Card('Changelog One', 'https://changelog-one.example.org/a2a') } }));

      const holder = await otherSession(env.DATABASE_URL!);
      t.after(() => holder.end().catch(() => undefined));
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1)', [CHANGE_LOCK_KEY]);
      assertRefused(await registerBothAtOnce(registry, 'Changelog Two'), /a write waited longer than the statement timeout, for a lock another session or replica holds/);
      // A watch started meanwhile commits its rows (the watch's, its task's) without that lock:
      // no proof that entries can be written. Before, its commit cleared the fault, and /readyz
      // (probing only a store with a fault) said ready while the lock was held.
      const watching = alice.sendMessageStream({ tenant: '', message: message([dataPart({ watch: { query: 'changelog', initial: false } })]), configuration: undefined, metadata: undefined });
      assert.equal(streamEventJson((await watching.next()).value!).task?.status?.state, 'TASK_STATE_WORKING', 'the watch started (stored)');
      await watching.return(undefined);
      // The write probe takes that lock too (waiting a second): no write can commit, so not ready.
      const locked = await readiness(registry);
      assert.equal(locked.status, 503);
      assert.match(locked.reason!, /storage is unavailable: a write waited longer than the statement timeout/);
      await holder.query('ROLLBACK');
      await eventually(15_000, async () => (await readiness(registry)).status === 200, 'ready once the lock is free');
      assert.equal(stateOf(await op(alice, { register: { agentCard: v1Card('Changelog Four', 'https://changelog-four.example.org/a2a') } })), 'TASK_STATE_COMPLETED');
    });

    test("an entry's row locked by another session: writing that entry is refused after the statement timeout as busy, not as storage down; other writes go on and /readyz stays ready", { timeout: 90_000 }, async (t) => {
      const skip = postgres!.skip();
      if (skip) return t.skip(skip);
      const env = await lockTestEnv();
      const registry = await startTestRegistry(env);
      t.after(() => registry.close());
      const [alice, bob] = await Promise.all([sdkClient(registry.url, { token: TOKENS.alice }), sdkClient(registry.url, { token: TOKENS.bob })]);
      const id = resultOf(await op(alice, { register: { agentCard: v1Card('Busy One', 'https://busy-one.example.org/a2a') } })).id;

      const holder = await otherSession(env.DATABASE_URL!);
      t.after(() => holder.end().catch(() => undefined));
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM entries WHERE id = $1 FOR UPDATE', [id]);
      const headers = { authorization: `Bearer ${TOKENS.alice}` };
      const startedAt = performance.now();
      const changed = (binding: string) => ({ data: { register: { agentCard: { ...v1Card('Busy One', 'https://busy-one.example.org/a2a'), version: binding } } }, mediaType: 'application/json' });
      const [jsonRpc, rest, others] = await Promise.all([
        rawPost(`${registry.url}/a2a/jsonrpc`, sendMessage([changed('2.0.0')]), { headers, signal: AbortSignal.timeout(60_000) }),
        rawPost(`${registry.url}/a2a/rest/message:send`, JSON.stringify({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [changed('3.0.0')] } }), { headers, signal: AbortSignal.timeout(60_000) }),
        // Once the writes of the locked entry wait: another principal's, and its owner's new entry
        // (an update waiting for its row does not hold up its owner's other registrations).
        new Promise((r) => setTimeout(r, 500)).then(() =>
          Promise.all([
            op(bob, { register: { agentCard: v1Card('Busy Other', 'https://busy-other.example.org/a2a') } }),
            op(alice, { register: { agentCard: v1Card('Busy Mine', 'https://busy-mine.example.org/a2a') } }),
          ]),
        ),
      ]);
      assertWaitedOutTimeout(startedAt);
      assert.deepEqual(others.map(stateOf), ['TASK_STATE_COMPLETED', 'TASK_STATE_COMPLETED'], 'other entries are written meanwhile');
      const busy = /^The entry is busy: another request is writing it \(or its URLs\), or another database session holds it, and this write waited for it longer than a write may \(57014\)\. Retry shortly\.$/;
      const error = jsonRpc.json!.error as WireJson;
      assert.match(error.message, busy);
      assert.doesNotMatch(error.message, /unavailable|cannot store|readyz/i);
      // Still the contract's STORAGE_UNAVAILABLE: a protocol error that says when to retry.
      assert.equal(error.code, -32603);
      assert.equal(error.data[0].reason, 'STORAGE_UNAVAILABLE');
      assert.equal(error.data[0].metadata?.retryAfterSeconds, '5');
      assert.equal(jsonRpc.headers.get('retry-after'), '5');
      assert.equal(rest.status, 503);
      assert.match(rest.json!.error.message, busy);
      assert.equal(rest.json!.error.details[0].reason, 'STORAGE_UNAVAILABLE');
      assert.equal(rest.headers.get('retry-after'), '5');
      assert.equal((await readiness(registry)).status, 200);
      await holder.query('ROLLBACK');
      assert.equal(resultOf(await op(alice, { register: { agentCard: { ...v1Card('Busy One', 'https://busy-one.example.org/a2a'), version: '4.0.0' } } })).revision, 2);
    });
  });
});

describe('fault names', () => {
  test('SQLite and PostgreSQL error codes map to the fault they mean; other errors are not faults', async () => {
    const { sqliteFault, postgresFault } = await import('../src/storage/faults.js');
    const reason = (f: ReturnType<typeof sqliteFault>) => f?.reason;
    assert.equal(reason(sqliteFault({ code: 'SQLITE_FULL' })), 'disk-full');
    assert.equal(reason(sqliteFault({ code: 'SQLITE_READONLY' })), 'read-only');
    assert.equal(reason(sqliteFault({ code: 'SQLITE_READONLY_DBMOVED' })), 'missing');
    assert.equal(reason(sqliteFault({ code: 'SQLITE_CORRUPT' })), 'corrupt');
    assert.equal(reason(sqliteFault({ code: 'SQLITE_NOTADB' })), 'corrupt');
    assert.equal(reason(sqliteFault({ code: 'SQLITE_IOERR_WRITE' })), 'io');
    assert.equal(reason(sqliteFault({ code: 'SQLITE_CONSTRAINT_UNIQUE' })), undefined);
    assert.equal(reason(sqliteFault(new Error('bug'))), undefined);
    assert.equal(reason(postgresFault({ code: '53100' })), 'disk-full');
    assert.equal(reason(postgresFault({ code: '25006' })), 'read-only');
    assert.equal(reason(postgresFault({ code: 'XX001' })), 'corrupt');
    assert.equal(reason(postgresFault({ code: '57P01' })), 'unreachable');
    assert.equal(reason(postgresFault({ code: 'ECONNREFUSED' })), 'unreachable');
    assert.equal(reason(postgresFault(new Error('Connection terminated unexpectedly'))), 'unreachable');
    assert.equal(reason(postgresFault({ code: '23505' })), undefined);
    // The registry's state, not the request: they were failed tasks, "UNAVAILABLE", logged as internal errors.
    assert.equal(reason(postgresFault({ code: '57014' })), 'locked');
    assert.equal(reason(postgresFault({ code: '55P03' })), 'locked');
    // A wait for some rows (PostgreSQL names the tuple) is that write's refusal, not the store's fault.
    assert.equal(postgresFault({ code: '57014' })!.scope, undefined);
    assert.equal(postgresFault({ code: '57014', where: 'PL/pgSQL function registry_record_change(uuid,text) line 5 at PERFORM' })!.scope, undefined);
    for (const where of ['while locking tuple (0,1) in relation "entries"', 'while updating tuple (0,1) in relation "entries"', 'while inserting index tuple (0,2) in relation "url_claims_pkey"']) {
      const rows = postgresFault({ code: '57014', where })!;
      assert.deepEqual([rows.reason, rows.scope], ['locked', 'rows'], where);
    }
    const faults = new FaultState(postgresFault);
    const refusal = faults.wrap({ code: '55P03', where: 'while locking tuple (3,7) in relation "entries"' });
    assert.ok(refusal instanceof StorageUnavailableError && refusal.fault.scope === 'rows');
    const current = () => faults.current;
    assert.equal(current(), undefined, 'not a fault of the store: /readyz does not report it');
    // A read's wait for a lock is that read's refusal, worded as a read's, on either engine: no write waited.
    const sqliteFaults = new FaultState(sqliteFault);
    for (const [state, code] of [[faults, '57014'], [faults, '55P03'], [sqliteFaults, 'SQLITE_BUSY']] as const) {
      const read = state.wrapRead({ code });
      assert.ok(read instanceof StorageUnavailableError && read.fault.scope === 'read', code);
      assert.match(read.message, /^The read waited too long for a lock: a read /, code);
      assert.equal(state.current, undefined, `${code}: a read's wait is not a fault of the store`);
    }
    faults.wrap({ code: '57014' });
    assert.equal(current()?.reason, 'locked');
    assert.equal(reason(postgresFault({ code: '53300' })), 'refused');
    assert.equal(reason(postgresFault({ code: '28P01' })), 'refused');
    assert.match(postgresFault({ code: '28P01' })!.message, /refuses the registry's credentials \(was the password changed\?\)/);
    assert.equal(reason(postgresFault(new Error('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string'))), 'refused');
  });
});
