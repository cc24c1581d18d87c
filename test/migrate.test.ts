/**
 * `a2a-registry migrate`: a registry filled through its API on SQLite (several owners, revisions, an
 * unregistered entry, a sourced entry, a signed card) is copied to a real PostgreSQL database while
 * it runs; a registry started on that database answers get, get of an old revision, list (with a
 * page token handed out by the SQLite registry), search and GetTask exactly as the SQLite one did,
 * and numbers new entries and revisions after the copied ones. A database that already holds
 * registry data is refused unless --force; bad sources and an unreachable server are said clearly.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import Database from 'better-sqlite3';
import pg from 'pg';
import { migrateCommand } from '../src/cli/commands/migrate.js';
import { importCommand } from '../src/cli/commands/import.js';
import { BIN, REPO_ROOT, ensureBuilt } from './support/built.js';
import { SQLITE_SCHEMA_VERSION } from '../src/storage/sqlite/migrations.js';
import type { Output } from '../src/cli/output.js';
import { signCard } from '../src/trust/card-signing.js';
import { generateSigningKey, parseSigningKey } from '../src/trust/jwks.js';
import { ACCEPTED_ALGORITHMS } from '../src/validation/signature.js';
import { op, resultOf, sdkClient, type WireJson } from './support/client.js';
import { mcpServer, toolspec, v1Card } from './support/documents.js';
import { serveCard } from './support/freshness.js';
import { startOrigin, type OriginServer } from './support/origin-server.js';
import { freePort } from './support/ports.js';
import { usePostgres } from './support/postgres.js';
import { TOKENS, removeTempDir, startTestRegistry, tempDir, type TestRegistry } from './support/registry.js';
import { dataOf, sendWithPush, webhook } from './support/watch-stream.js';

const postgres = usePostgres();

interface Run {
  code: number;
  out: string;
  err: string;
}

async function migrate(options: { from?: string; to?: string; force?: boolean; replaceNul?: boolean; batchSize?: number; json?: boolean }): Promise<Run> {
  let out = '';
  let err = '';
  const o: Output = { out: (s) => (out += s), err: (s) => (err += s), color: false };
  const code = await migrateCommand({ force: false, batchSize: 1000, json: false, ...options }, o);
  return { code, out, err };
}

const getTask = (client: Client, id: string) => client.getTask({ tenant: '', id, historyLength: undefined }).then((t) => Task.toJSON(t) as WireJson);

let origin: OriginServer;
const work = tempDir('a2a-registry-migrate-');
before(async () => {
  origin = await startOrigin();
});
after(async () => {
  await origin.close();
  removeTempDir(work);
});

/** Everything the test compares, read through the API. */
async function observe(registry: TestRegistry, ids: string[], tasks: { id: string; token: keyof typeof TOKENS }[], pageToken: string): Promise<WireJson> {
  const [anonymous, alice, bob] = await Promise.all([sdkClient(registry.url), sdkClient(registry.url, { token: TOKENS.alice }), sdkClient(registry.url, { token: TOKENS.bob })]);
  const seen: WireJson = { entries: {}, first: {}, tasks: {} };
  for (const id of ids) {
    seen.entries[id] = resultOf(await op(anonymous, { get: { id } }));
    seen.first[id] = resultOf(await op(anonymous, { get: { id, revision: 1 } }));
  }
  seen.list = resultOf(await op(anonymous, { list: { pageSize: 2 } }));
  seen.nextPage = resultOf(await op(anonymous, { list: { pageSize: 2, pageToken } }));
  seen.alices = resultOf(await op(alice, { list: { filter: { mine: true }, withDocuments: true } }));
  seen.verified = resultOf(await op(anonymous, { list: { filter: { verified: true } } }));
  seen.search = resultOf(await op(anonymous, { search: { query: 'migration' } }));
  seen.searchTools = resultOf(await op(anonymous, { search: { query: 'files', filter: { kind: 'mcp-server' } } }));
  const clients = { alice, bob, admin: alice } as const;
  for (const task of tasks) {
    const fetched = await getTask(clients[task.token], task.id);
    seen.tasks[task.id] = { state: fetched.status?.state, artifacts: fetched.artifacts };
  }
  return seen;
}

describe('migrate SQLite to PostgreSQL', () => {
  test('a registry on the copy answers get, revisions, list, search and GetTask as the SQLite one did', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const key = await generateSigningKey('ES256', 'migrate-key');
    const signing = await parseSigningKey(key.privateJwk, 'migrate-key', ACCEPTED_ALGORITHMS);
    const jwks = path.join(work, 'jwks.json');
    fs.writeFileSync(jwks, JSON.stringify({ keys: [key.publicJwk] }));
    const env = { REGISTRY_TRUSTED_KEYS: jwks, REGISTRY_FETCH_ALLOW: '127.0.0.1', REGISTRY_PAGE_TOKEN_SECRET: 'migrate-test-page-token-secret-0123456789' };

    const sqlite = await startTestRegistry(env);
    const databaseUrl = await postgres.server.createDatabase('migrate');
    let onPostgres: TestRegistry | undefined;
    try {
      const [alice, bob] = await Promise.all([sdkClient(sqlite.url, { token: TOKENS.alice }), sdkClient(sqlite.url, { token: TOKENS.bob })]);
      const tasks: { id: string; token: 'alice' | 'bob' }[] = [];
      const register = async (client: Client, token: 'alice' | 'bob', body: unknown): Promise<string> => {
        const task = await op(client, { register: body });
        tasks.push({ id: task.id, token });
        return resultOf(task).id;
      };
      const card = v1Card('Migration Ledger Agent', 'https://ledger.migrate.example.org/a2a');
      const ledger = await register(alice, 'alice', { agentCard: card });
      await register(alice, 'alice', { agentCard: { ...card, description: 'Keeps the migration ledger, second revision.' } });
      await register(alice, 'alice', { agentCard: { ...card, description: 'Keeps the migration ledger, third revision.' } });
      const signed = await register(alice, 'alice', { agentCard: await signCard(v1Card('Migration Signed Agent', 'https://signed.migrate.example.org/a2a'), signing) });
      const files = await register(bob, 'bob', { mcpServer: mcpServer('migration-files', 'https://files.migrate.example.org/mcp'), toolspec: toolspec() });
      serveCard(origin, v1Card('Migration Sourced Agent', 'https://sourced.migrate.example.org/a2a'), '/sourced');
      const sourced = await register(bob, 'bob', { url: `${origin.url}/sourced` });
      const gone = await register(bob, 'bob', { agentCard: v1Card('Migration Gone Agent', 'https://gone.migrate.example.org/a2a') });
      const unregistration = await op(bob, { unregister: { id: gone } });
      tasks.push({ id: unregistration.id, token: 'bob' });
      const ids = [ledger, signed, files, sourced];
      // A standing search that pushes to a webhook: it goes on from the PostgreSQL registry.
      const hook = await webhook(() => 200);
      t.after(() => hook.close());
      const pushed = await sendWithPush(bob, { filter: { tags: ['migrated-watch'] } }, { url: hook.url, token: 'migrated-token' });
      await hook.waitFor((b) => b.artifactUpdate?.artifact?.name === 'watch-results', 'initial matches pushed');
      const pageToken = String(resultOf(await op(alice, { list: { pageSize: 2 } })).nextPageToken);
      const before = await observe(sqlite, ids, tasks, pageToken);
      assert.equal(before.entries[ledger].revisions.length, 3);
      assert.equal(before.entries[signed].verified, true);
      assert.ok(before.entries[sourced].source?.url, 'the sourced entry carries its source');
      assert.ok(before.entries[sourced].health?.status, 'and its health');
      assert.equal(before.search.results.length, 4, 'the four entries named Migration… are found');
      assert.equal(before.nextPage.entries.length, 2);
      assert.equal(before.tasks[tasks[0]!.id].state, 'TASK_STATE_COMPLETED');

      // While the SQLite registry runs: the copy is a snapshot of it. Small batches, so paging is exercised.
      const run = await migrate({ from: sqlite.dataDir, to: databaseUrl, batchSize: 2, json: true });
      assert.equal(run.code, 0, run.err);
      const summary = JSON.parse(run.out) as WireJson;
      assert.equal(summary.rows.entries, 4);
      assert.equal(summary.rows.entry_revisions, 6);
      assert.equal(summary.rows.entry_freshness, 1);
      assert.equal(summary.rows.watches, 1);
      assert.ok(summary.rows.tasks >= 8, `the durable write tasks are carried (${summary.rows.tasks})`);
      assert.match(run.err, /entries: 4 of 4/, 'progress is printed');
      await sqlite.close();

      // As an operator switches: the same data directory (its SQLite-era saved index is not this database's), DATABASE_URL set.
      // Its URL names the replica (application_name): the registry's own session names were how migrate --force saw replicas, and the URL's wins.
      onPostgres = await startTestRegistry({ ...env, DATABASE_URL: `${databaseUrl}?application_name=registry-replica-1`, REGISTRY_DATA_DIR: sqlite.dataDir });
      const afterwards = await observe(onPostgres, ids, tasks, pageToken);
      assert.deepEqual(afterwards, before);

      // New writes are numbered after the copied ones: a new entry lists first, a new revision is 4.
      const alicePg = await sdkClient(onPostgres.url, { token: TOKENS.alice });
      const newer = resultOf(await op(alicePg, { register: { agentCard: v1Card('Migration Newer Agent', 'https://newer.migrate.example.org/a2a') } }));
      assert.equal(resultOf(await op(alicePg, { list: { pageSize: 1 } })).entries[0].id, newer.id);
      const fourth = resultOf(await op(alicePg, { register: { agentCard: { ...card, description: 'Keeps the migration ledger, fourth revision.' } } }));
      assert.deepEqual([fourth.id, fourth.revision], [ledger, 4]);
      // Another principal still cannot take alice's URL: the claims came along.
      const bobPg = await sdkClient(onPostgres.url, { token: TOKENS.bob });
      const taken = await op(bobPg, { register: { agentCard: v1Card('Migration Thief', 'https://ledger.migrate.example.org/a2a') } });
      assert.equal(taken.status.state, 'TASK_STATE_REJECTED');
      // The watch was carried, released: the PostgreSQL registry runs it, pushing with its token.
      await onPostgres.core.restoreWatches();
      assert.equal(onPostgres.core.watches.size, 1, 'the watch runs on PostgreSQL');
      const tagged = v1Card('Migration Watched Agent', 'https://watched.migrate.example.org/a2a') as WireJson;
      tagged.skills[0].tags = ['migrated-watch'];
      const watched = resultOf(await op(alicePg, { register: { agentCard: tagged } }));
      await hook.waitFor((b) => b.artifactUpdate && dataOf(b.artifactUpdate.artifact).hit?.id === watched.id, 'the new match pushed from PostgreSQL');
      assert.ok(hook.requests.every((r) => r.token === 'migrated-token'));
      assert.equal((await getTask(bobPg, pushed.id)).status.state, 'TASK_STATE_WORKING');
      // Replacing the data under a running replica would leave the replaced entries in its index.
      const underReplica = await migrate({ from: sqlite.dataDir, to: databaseUrl, force: true });
      assert.equal(underReplica.code, 1, underReplica.err);
      assert.match(underReplica.err, /is in use by a running registry \(1 replica is running on it\): stop every replica on it, then run the migration again with --force/);
      await onPostgres.close();
      onPostgres = undefined;

      // The database now holds registry data: refused without --force, replaced with it.
      const again = await migrate({ from: sqlite.dataDir, to: databaseUrl });
      assert.equal(again.code, 2, again.err);
      assert.match(again.err, /already holds registry data \(6 entries, .*\): .*pass --force/);
      // With the password as a query parameter (this server trusts 127.0.0.1 and ignores it): the summary masks it.
      // A generated admin token beside the database is not in it: the summary says how to give it to the replicas.
      const adminToken = path.join(sqlite.dataDir, 'admin-token');
      fs.writeFileSync(adminToken, 'generated-admin-token-0123456789\n', { mode: 0o600 });
      const forced = await migrate({ from: sqlite.dataDir, to: `${databaseUrl}?password=S3CRET`, force: true });
      fs.rmSync(adminToken);
      assert.equal(forced.code, 0, forced.err);
      assert.ok(
        forced.out.includes(
          `The admin token the SQLite registry generated is in ${adminToken}, which is not in the database: give every replica that token (REGISTRY_ADMIN_TOKEN_FILE=${adminToken}, or the file's first line in REGISTRY_ADMIN_TOKEN)`,
        ),
        forced.out,
      );
      assert.match(forced.out, / to postgres:\/\/\S+\?password=\*\*\* in [\d.]+ s\n/);
      assert.doesNotMatch(forced.out + forced.err, /S3CRET/);
      assert.match(forced.out, /migrated 4 entries \(6 revisions, 1 freshness record, /);
      assert.match(forced.out, /replaced/);
      assert.match(forced.out, /and 1 watch from /);
      // The stopped registry's database was only read: its read-only connection left an empty -wal and -shm beside it.
      assert.deepEqual(['-wal', '-shm'].filter((s) => fs.existsSync(path.join(sqlite.dataDir, `registry.db${s}`))), [], 'nothing written beside the database migrated from');

      // U+0000 that a release before stored on SQLite (a trusted kid, a message's context id): found
      // before anything is written, the rows named; carried as U+FFFD when asked. The copy failed
      // part way, "invalid byte sequence for encoding UTF8: 0x00".
      const file = new Database(path.join(sqlite.dataDir, 'registry.db'));
      file.pragma('busy_timeout = 10000');
      file.prepare("UPDATE entry_revisions SET verified_kid = 'migrate' || char(0) || 'key' WHERE entry_id = ?").run(signed);
      const taskId = tasks[0]!.id;
      file.prepare("UPDATE tasks SET context_id = 'ctx' || char(0) || 'old' WHERE id = ?").run(taskId);
      file.close();
      const copy = new pg.Client({ connectionString: databaseUrl });
      await copy.connect();
      t.after(() => copy.end());
      const held = async () => (await copy.query("SELECT count(*)::int AS n, max(verified_kid) AS kid FROM entry_revisions WHERE verified_kid IS NOT NULL")).rows[0];
      const heldBefore = await held();
      const refused = await migrate({ from: sqlite.dataDir, to: databaseUrl, force: true });
      assert.equal(refused.code, 1, refused.err);
      assert.equal(
        refused.err,
        `a2a-registry: ${path.join(sqlite.dataDir, 'registry.db')} holds 2 values with the character U+0000 (NUL), which PostgreSQL's text cannot hold (stored before the registry refused it): ` +
          `entry_revisions (entry_id "${signed}", revision 1): verified_kid; tasks (tenant "", owner "alice", id "${taskId}"): context_id. Nothing was written. ` +
          'Run the migration again with --replace-nul to carry each with U+FFFD (the replacement character) in its place, or first remove those rows on the SQLite registry (unregister the entries named)\n',
      );
      assert.deepEqual(await held(), heldBefore, 'nothing written');
      const replaced = await migrate({ from: sqlite.dataDir, to: databaseUrl, force: true, replaceNul: true });
      assert.equal(replaced.code, 0, replaced.err);
      assert.match(replaced.out, /\n2 values holding U\+0000 \(NUL\) were carried with U\+FFFD in its place \(--replace-nul\)\.\n/);
      assert.equal((await held()).kid, 'migrate\uFFFDkey');
      assert.deepEqual((await copy.query('SELECT context_id FROM tasks WHERE id = $1', [taskId])).rows, [{ context_id: 'ctx\uFFFDold' }]);
    } finally {
      await onPostgres?.close();
      await sqlite.close().catch(() => undefined);
      removeTempDir(sqlite.dataDir);
    }
  });

  test('bad sources and targets are refused, saying what to change', async (t) => {
    const missing = await migrate({ from: path.join(work, 'nowhere'), to: 'postgres://127.0.0.1:1/x' });
    assert.equal(missing.code, 2);
    assert.match(missing.err, /there is no registry data directory or database at .*nowhere/);
    // REGISTRY_DATA_DIR= (empty) is unset, as for the registry and backup: ./data, not the path "",
    // and said as they say it.
    const dataDir = process.env.REGISTRY_DATA_DIR;
    process.env.REGISTRY_DATA_DIR = '';
    try {
      const unset = await migrate({ to: 'postgres://127.0.0.1:1/x' });
      const data = path.resolve('data');
      const [warning, ...rest] = unset.err.split('\n');
      assert.equal(warning, `a2a-registry: warning: REGISTRY_DATA_DIR is set but empty: taken as unset, so its default, ./data (${data}) (an unset shell variable?)`);
      // Whatever ./data is where the tests run (absent, or a folder another run left), it is ./data that is read.
      assert.ok(
        [`a2a-registry: there is no registry data directory or database at ${data}:`, `a2a-registry: ${data} holds no registry database`, 'a2a-registry: PostgreSQL at postgres://127.0.0.1:1/x cannot be reached'].some((said) => rest.join('\n').startsWith(said)),
        unset.err,
      );
      // Its flag given, the variable is not read: neither said nor checked.
      process.env.REGISTRY_DATA_DIR = ' /data';
      assert.match((await migrate({ from: path.join(work, 'nowhere'), to: 'postgres://127.0.0.1:1/x' })).err, /^a2a-registry: there is no registry data directory or database at .*nowhere/);
      assert.match((await migrate({ to: 'postgres://127.0.0.1:1/x' })).err, /^a2a-registry: invalid configuration: REGISTRY_DATA_DIR begins or ends with whitespace/);
    } finally {
      if (dataDir === undefined) delete process.env.REGISTRY_DATA_DIR;
      else process.env.REGISTRY_DATA_DIR = dataDir;
    }

    const emptyDir = path.join(work, 'empty');
    fs.mkdirSync(emptyDir);
    assert.match((await migrate({ from: emptyDir, to: 'postgres://127.0.0.1:1/x' })).err, /holds no registry database \(no .*registry\.db\)/);

    const text = path.join(work, 'notes.txt');
    fs.writeFileSync(text, 'not a database, just some words that are long enough to be a header.\n'.repeat(20));
    // A --from that is there but the wrong file fails the command (1); one that is not there is usage (2).
    const notDb = await migrate({ from: text, to: 'postgres://127.0.0.1:1/x' });
    assert.equal(notDb.code, 1);
    assert.match(notDb.err, /is not an SQLite database/);

    // An empty file, a device or a folder named registry.db, said as restore says a wrong backup
    // (they were "an SQLite database but not a registry's" and "disk I/O error").
    const empty = path.join(work, 'empty.db');
    fs.writeFileSync(empty, '');
    const folderDir = path.join(work, 'folder');
    fs.mkdirSync(path.join(folderDir, 'registry.db'), { recursive: true });
    const wrong = await Promise.all([empty, '/dev/null', folderDir].map((from) => migrate({ from, to: 'postgres://127.0.0.1:1/x' })));
    assert.deepEqual(wrong.map((r) => r.code), [1, 1, 2], wrong.map((r) => r.err).join(''));
    const giveFrom = "give --from the SQLite registry's data directory (REGISTRY_DATA_DIR) or its registry.db\n";
    assert.deepEqual(wrong.map((r) => r.err), [
      `a2a-registry: ${empty} is empty (0 bytes), not a registry database: ${giveFrom}`,
      `a2a-registry: /dev/null is a character device, not a registry database: ${giveFrom}`,
      `a2a-registry: ${folderDir}/registry.db is a folder, not a registry database: ${giveFrom}`,
    ]);

    const other = path.join(work, 'other.db');
    new Database(other).exec('CREATE TABLE t (x)').close();
    assert.match((await migrate({ from: other, to: 'postgres://127.0.0.1:1/x' })).err, /an SQLite database but not a registry's/);

    const registry = await startTestRegistry();
    await registry.close();
    const file = path.join(registry.dataDir, 'registry.db');
    const db = new Database(file);
    db.prepare("INSERT INTO registry_migrations (version, name, applied_at) VALUES (99, 'future', '2030-01-01')").run();
    db.close();
    const newer = await migrate({ from: registry.dataDir, to: 'postgres://127.0.0.1:1/x', json: true });
    assert.equal(newer.code, 1);
    assert.match(newer.err, /written by a newer release \(schema 99/);
    assert.equal(JSON.parse(newer.out).error.code, 'MIGRATE_FAILED');
    new Database(file).prepare('DELETE FROM registry_migrations WHERE version >= ?').run(SQLITE_SCHEMA_VERSION);
    assert.match((await migrate({ from: registry.dataDir, to: 'postgres://127.0.0.1:1/x' })).err, /written by an older release .*start this release's registry on it once/);
    new Database(file).prepare("INSERT INTO registry_migrations (version, name, applied_at) VALUES (?, 'the newest', '2030-01-01')").run(SQLITE_SCHEMA_VERSION);

    const notPostgres = await migrate({ from: registry.dataDir, to: 'mysql://127.0.0.1/x' });
    assert.equal(notPostgres.code, 2);
    assert.match(notPostgres.err, /--to must be a postgres:\/\/ or postgresql:\/\/ URL/);

    const unparsable = await migrate({ from: registry.dataDir, to: 'postgres://registry:hunter2@[::1/registry' });
    assert.equal(unparsable.code, 2, unparsable.err);
    assert.match(unparsable.err, /--to is not a valid URL: write it as postgres:\/\/user:password@host:5432\/database/);

    const port = await freePort();
    const unreachable = await migrate({ from: registry.dataDir, to: `postgres://registry:hunter2@127.0.0.1:${port}/registry` });
    assert.equal(unreachable.code, 1, unreachable.err);
    assert.match(unreachable.err, new RegExp(`PostgreSQL at postgres://registry:\\*\\*\\*@127\\.0\\.0\\.1:${port}/registry cannot be reached: .*ECONNREFUSED`));
    assert.doesNotMatch(unreachable.err, /hunter2/, 'the password is not printed');
    // Nor as a query parameter, as pg also reads it (and sslpassword, and every parameter not known to be harmless).
    const inQuery = await migrate({ from: registry.dataDir, to: `postgres://registry@127.0.0.1:${port}/registry?sslmode=disable&password=hunter2&sslpassword=hunter3` });
    assert.equal(inQuery.code, 1, inQuery.err);
    assert.match(inQuery.err, new RegExp(`PostgreSQL at postgres://registry@127\\.0\\.0\\.1:${port}/registry\\?sslmode=disable&password=\\*\\*\\*&sslpassword=\\*\\*\\* cannot be reached`));
    assert.doesNotMatch(inQuery.err, /hunter[23]/, 'the password is not printed');
    // Nor a password with an unencoded '/' (user "127.0.0.1", password "<port>/hunter2"): the URL
    // parses as host 127.0.0.1, the password in its path, and was printed whole.
    const slash = await migrate({ from: registry.dataDir, to: `postgres://127.0.0.1:${port}/hunter2@db.example.org/registry` });
    assert.equal(slash.code, 1, slash.err);
    assert.match(slash.err, /PostgreSQL at postgres:\/\/\*\*\*@db\.example\.org\/registry cannot be reached/);
    assert.doesNotMatch(slash.err, /hunter2/, 'the password is not printed');

    if (postgres.skipReason) return t.skip(postgres.skipReason);
    // A failure part way leaves the target as it was: a source entry whose id PostgreSQL cannot take.
    const broken = await startTestRegistry();
    const alice = await sdkClient(broken.url, { token: TOKENS.alice });
    await op(alice, { register: { agentCard: v1Card('Migration Broken Agent', 'https://broken.migrate.example.org/a2a') } });
    await broken.close();
    const brokenDb = new Database(path.join(broken.dataDir, 'registry.db'));
    brokenDb.pragma('foreign_keys = OFF');
    brokenDb.exec("UPDATE entries SET id = 'not-a-uuid'");
    brokenDb.close();
    const target = await postgres.server.createDatabase('migrate_fail');
    const failed = await migrate({ from: broken.dataDir, to: target });
    assert.equal(failed.code, 1, failed.err);
    assert.match(failed.err, /the migration failed, nothing was committed: invalid input syntax for type uuid/);
    const client = new pg.Client({ connectionString: target });
    await client.connect();
    try {
      assert.equal(Number((await client.query('SELECT count(*) AS n FROM entries')).rows[0].n), 0);
      // A database a newer release has migrated is not written to.
      await client.query("INSERT INTO registry_migrations (version, name) VALUES (99, 'future')");
      const newerTarget = await migrate({ from: registry.dataDir, to: target });
      assert.equal(newerTarget.code, 1, newerTarget.err);
      assert.match(newerTarget.err, /has schema version 99, but this registry release only knows versions up to \d+\. It was written by a newer release/);
    } finally {
      await client.end();
      removeTempDir(broken.dataDir);
      removeTempDir(registry.dataDir);
    }
  });

  test('Ctrl-C part way: it says nothing was committed and to run it again (--json too), ends as the signal does; the database holds nothing, and running it again migrates', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    ensureBuilt();
    const dataDir = tempDir();
    try {
      const lines = path.join(dataDir, 'many.jsonl');
      fs.writeFileSync(lines, Array.from({ length: 3000 }, (_, i) => JSON.stringify(v1Card(`Wombat ${i}`, `https://wombat-${i}.example.org/a2a`))).join('\n'));
      const quiet: Output = { out: () => undefined, err: () => undefined, color: false };
      assert.equal(await importCommand([lines], { owner: 'alice', batchSize: 500, json: true, dataDir }, quiet), 0);
      const target = await postgres.server.createDatabase('migrate_int');
      const redacted = target.replace(/:[^:@/]*@/, ':***@');
      for (const json of [false, true]) {
        const child = spawn(process.execPath, [BIN, 'migrate', ...(json ? ['--json'] : []), '--batch-size', '5', '--from', dataDir, '--to', target], { cwd: REPO_ROOT, stdio: 'pipe' });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
        child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
        for (const deadline = Date.now() + 30_000; !/entries: /.test(stderr) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
        child.kill('SIGINT');
        assert.deepEqual(await exited, { code: null, signal: 'SIGINT' }, stderr);
        const message = `the migration was interrupted (SIGINT): nothing was committed to ${redacted} (the copy's transaction was rolled back; at most the registry's empty tables were created, which a new run uses; the SQLite database is only read). Run it again to migrate`;
        assert.match(stderr, new RegExp(`a2a-registry: ${message.replace(/[.*()?+[\]\\]/g, '\\$&')}\n$`));
        if (json) assert.deepEqual(JSON.parse(stdout), { error: { code: 'INTERRUPTED', message } });
        else assert.equal(stdout, '');
        const client = new pg.Client({ connectionString: target });
        await client.connect();
        try {
          assert.equal(Number((await client.query('SELECT count(*) AS n FROM entries')).rows[0].n), 0, 'nothing committed');
        } finally {
          await client.end();
        }
      }
      const again = await migrate({ from: dataDir, to: target, json: true });
      assert.equal(again.code, 0, again.err);
      assert.equal(JSON.parse(again.out).rows.entries, 3000);
    } finally {
      removeTempDir(dataDir);
    }
  });
});
