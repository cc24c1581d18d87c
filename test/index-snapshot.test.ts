/**
 * Issue 22 (1): the search index saved beside the data. A registry saves its index at shutdown;
 * the next start loads it and replays what the change log holds after it (changes committed
 * while the registry was down), and answers exactly as a registry that re-indexed everything.
 * A corrupt, foreign-version or disabled snapshot is not used: the index is rebuilt.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { pbkdf2 } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { runImport } from '../src/cli/commands/import.js';
import { loadConfig } from '../src/config/config.js';
import type { Caller } from '../src/contract/caller.js';
import { createLogger } from '../src/observability/logger.js';
import { SNAPSHOT_FILE } from '../src/registry/index-snapshots.js';
import { startRegistry, type RunningRegistry } from '../src/server.js';
import { createStore } from '../src/storage/create-store.js';
import { SqliteStore } from '../src/storage/index.js';
import { holdPoint } from './support/hold-point.js';
import { usePostgres } from './support/postgres.js';
import { TOKENS_ENV, removeTempDir, spawnRegistry, tempDir } from './support/registry.js';
import { v1Card } from './support/documents.js';
import { actor, entryWrite } from './support/store-fixtures.js';
import { fill, mountTmpfs } from './support/tmpfs.js';

const ADMIN: Caller = { principal: 'admin', isAdmin: true };
const postgres = usePostgres();
const dataDir = tempDir('a2a-registry-snapshot-');
const snapshotFile = path.join(dataDir, SNAPSHOT_FILE);
let running: RunningRegistry | undefined;
after(async () => {
  await running?.close();
  removeTempDir(dataDir);
});

/** Starts a registry over the data directory; returns it (ready), its log lines' messages and the lines. */
async function start(env: Record<string, string> = {}): Promise<{ registry: RunningRegistry; messages: string[]; lines: Record<string, unknown>[] }> {
  const messages: string[] = [];
  const lines: Record<string, unknown>[] = [];
  const capture = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const text of chunk.toString('utf8').split('\n')) {
        if (!text) continue;
        const line = JSON.parse(text) as { msg: string };
        messages.push(line.msg);
        lines.push(line);
      }
      done();
    },
  });
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', REGISTRY_TOKENS: TOKENS_ENV, REGISTRY_DATA_DIR: dataDir, REGISTRY_REFRESH_SECONDS: '0', ...env });
  const registry = await startRegistry(config, createLogger('info', capture));
  running = registry;
  await registry.ready;
  return { registry, messages, lines };
}

async function stop(registry: RunningRegistry): Promise<void> {
  await registry.close();
  running = undefined;
}

/** What searches answer: the same queries, compared across starts. */
async function answers(registry: RunningRegistry): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const query of ['agent', 'stored agent 7', 'later', 'gone', '']) {
    out.push(await registry.service.search({ query, limit: 50 }, ADMIN));
    out.push(await registry.service.search({ query, limit: 50, resultsPer: 'match', filter: { kind: 'agent' } }, ADMIN));
  }
  return out;
}

/**
 * Whether searches order as `list` does (newest registered first): a search without text lists
 * the entries in list's order, and a text search's hits of equal relevance come in it. The
 * entries here were stored in one burst, many in one millisecond: the index ordered those by
 * their ids' random bits.
 */
async function assertListOrder(registry: RunningRegistry, when: string): Promise<void> {
  const listed = (await registry.service.list({ pageSize: 100 }, ADMIN)).entries.map((e) => e.id);
  const place = new Map(listed.map((id, i) => [id, i]));
  const empty = await registry.service.search({ query: '', limit: 100 }, ADMIN);
  assert.deepEqual(empty.results.map((h) => h.id), listed, `${when}: a search without text lists as list does`);
  const hits = (await registry.service.search({ query: 'stored agent', limit: 100 }, ADMIN)).results;
  const ties = hits.filter((h, i) => i > 0 && h.score === hits[i - 1]!.score);
  assert.ok(ties.length > 10, `${when}: ${ties.length} ties`);
  hits.forEach((h, i) => {
    if (i > 0 && h.score === hits[i - 1]!.score) assert.ok(place.get(h.id)! > place.get(hits[i - 1]!.id)!, `${when}: ${h.name} before ${hits[i - 1]!.name}, as list orders them`);
  });
}

/** Commits changes straight to storage, as while the registry is down. */
async function changeWhileDown(change: (store: ReturnType<typeof createStore>) => Promise<void>): Promise<void> {
  const store = createStore({ dataDir });
  await store.open();
  try {
    await change(store);
  } finally {
    await store.close();
  }
}

test('a restart loads the saved index, replays the changes committed after it, and answers as a full re-index does', { timeout: 60_000 }, async () => {
  const admin = actor('admin', true);
  const ids: string[] = [];
  await changeWhileDown(async (store) => {
    for (let i = 0; i < 40; i++) {
      const outcome = await store.upsert(entryWrite('agent', `https://a${i}.example.org/a2a`, '1', `Stored agent ${i}`), admin);
      if ('entry' in outcome) ids.push(outcome.entry.id);
    }
  });

  // First start: nothing saved yet, so every entry is indexed; shutdown saves the index.
  let { registry, messages } = await start();
  assert.ok(messages.some((m) => m.startsWith('no saved search index used (there is none)')), messages.join('\n'));
  await assertListOrder(registry, 'indexed from storage');
  await stop(registry);
  assert.ok(fs.existsSync(snapshotFile));

  // While down: one entry removed, one added, one renamed (all in the change log after the save).
  await changeWhileDown(async (store) => {
    await store.remove(ids[3]!, admin);
    await store.upsert(entryWrite('agent', 'https://later.example.org/a2a', '1', 'Later agent'), admin);
    await store.upsert(entryWrite('agent', 'https://a5.example.org/a2a', '2', 'Stored agent 5 gone'), admin);
  });

  ({ registry, messages } = await start());
  assert.ok(messages.includes('search index loaded from its snapshot and the change log'), messages.join('\n'));
  const restored = await answers(registry);
  await assertListOrder(registry, 'loaded from the snapshot');
  await stop(registry);

  // The same data re-indexed from scratch (snapshots off) answers the same.
  ({ registry, messages } = await start({ REGISTRY_INDEX_SNAPSHOT_SECONDS: '0' }));
  assert.ok(!messages.includes('search index loaded from its snapshot and the change log'));
  const rebuilt = await answers(registry);
  await stop(registry);
  assert.deepEqual(restored, rebuilt);
  const names = (restored[0] as { results: { name: string }[] }).results.map((r) => r.name);
  assert.ok(names.includes('Later agent') && !names.includes('Stored agent 3'), names.join(', '));

  // A corrupt snapshot is not used: the index is rebuilt, with the same answers.
  const bytes = fs.readFileSync(snapshotFile);
  bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
  fs.writeFileSync(snapshotFile, bytes);
  ({ registry, messages } = await start());
  assert.ok(messages.some((m) => m.startsWith('no saved search index used (it')), messages.join('\n'));
  assert.ok(!messages.includes('search index loaded from its snapshot and the change log'));
  assert.deepEqual(await answers(registry), rebuilt);
  await stop(registry);

  // An index saved in format 24, whose words for phrases do not say how many are a unit's name's
  // (a search for a skill's or tool's exact name reads that), is rebuilt, with the same answers.
  const { readIndexSnapshot, writeIndexSnapshot } = await import('../src/search/snapshot-file.js');
  const saved = await readIndexSnapshot(snapshotFile, () => undefined);
  assert.ok(saved.ok, 'the shutdown saved the index');
  await writeIndexSnapshot(snapshotFile, { ...saved.meta, format: 24 }, saved.state);
  ({ registry, messages } = await start());
  assert.ok(messages.some((m) => m.startsWith('no saved search index used (it was written by another version (') && m.includes(', format 24)')), messages.join('\n'));
  assert.deepEqual(await answers(registry), rebuilt);
  await stop(registry);

  // An index saved in format 11, whose tag keys kept a dashed tag's words apart ("machine-learning"
  // filed as "machine learning"), is not loaded as this format: it is rebuilt, with the same answers.
  await writeIndexSnapshot(snapshotFile, { ...saved.meta, format: 11 }, saved.state);
  ({ registry, messages } = await start());
  assert.ok(messages.some((m) => m.startsWith('no saved search index used (it was written by another version (') && m.includes(', format 11)')), messages.join('\n'));
  assert.deepEqual(await answers(registry), rebuilt);
  await stop(registry);
});

test('a snapshot file with a changed byte is refused by its checksum, and its state comes back intact otherwise', async () => {
  const { readIndexSnapshot, writeIndexSnapshot, SNAPSHOT_FORMAT } = await import('../src/search/snapshot-file.js');
  const file = path.join(dataDir, 'unit.snapshot');
  const numbers = Int32Array.from({ length: 100_000 }, (_, i) => i * 7);
  const strings = Array.from({ length: 120_000 }, (_, i) => (i % 5 === 0 ? undefined : `s${i}`));
  const meta = { format: SNAPSHOT_FORMAT, version: 'test', seq: 42, entries: 3, savedAt: new Date().toISOString() };
  await writeIndexSnapshot(file, meta, new Map<string, unknown>([['numbers', numbers], ['strings', strings], ['small', { a: 1 }]]));
  const back = await readIndexSnapshot(file, () => undefined);
  assert.ok(back.ok);
  assert.deepEqual(back.meta, meta);
  assert.deepEqual(back.state.get('numbers'), numbers);
  assert.deepEqual(back.state.get('strings'), strings);
  assert.deepEqual(back.state.get('small'), { a: 1 });
  assert.deepEqual(await readIndexSnapshot(file, () => 'not this one'), { ok: false, reason: 'not this one' });
  const bytes = fs.readFileSync(file);
  bytes[bytes.indexOf(Buffer.from(new Int32Array([7 * 5000]).buffer))]! ^= 1;
  fs.writeFileSync(file, bytes);
  assert.deepEqual(await readIndexSnapshot(file, () => undefined), { ok: false, reason: 'its checksum does not match (the file is corrupt)' });
});

test('an index saved while it goes on changing is written as it was when saved', async () => {
  const { readIndexSnapshot, writeIndexSnapshot, SNAPSHOT_FORMAT } = await import('../src/search/snapshot-file.js');
  const { createSearchIndex } = await import('../src/search/index.js');
  const { describeAgentCard } = await import('../src/registry/describe.js');
  const { v1Card } = await import('./support/documents.js');
  const words = ['alpha', 'beta', 'gamma'];
  const entry = (i: number, round: number) => ({
    id: `e${i}`,
    owner: 'alice',
    // A later round's place is newer, so its members are appended past the saved ends.
    listSeq: round * 10_000 + i,
    description: describeAgentCard(v1Card(`Agent ${i} ${words[(i + round) % 3]}`, `https://a${i}.example.org/a2a`), '1.0'),
  });
  const live = createSearchIndex();
  const before = createSearchIndex();
  for (let i = 0; i < 1500; i++) {
    live.upsert(entry(i, 0));
    before.upsert(entry(i, 0));
  }
  const saved = live.saveState!();
  // Removals and updates that would compact long posting lists in place, and new postings.
  for (let i = 0; i < 1500; i += 2) live.remove(`e${i}`);
  for (let i = 1; i < 1500; i += 4) live.upsert(entry(i, 1));
  const file = path.join(dataDir, 'changing.snapshot');
  await writeIndexSnapshot(file, { format: SNAPSHOT_FORMAT, version: 'test', seq: 0, entries: 1500, savedAt: '' }, saved.parts);
  saved.release();
  const read = await readIndexSnapshot(file, () => undefined);
  assert.ok(read.ok);
  const restored = createSearchIndex();
  restored.loadState!(read.state);
  for (const text of ['alpha', 'agent 7', 'invoice', 'translate german', '']) {
    const q = { text, offset: 0, limit: 40 };
    assert.deepEqual(restored.searchNow(q), before.searchNow(q), text);
  }
  // The live index compacts again once released, and still answers as one built from what is left.
  live.remove('e1');
  assert.equal(live.searchNow({ text: 'agent', offset: 0, limit: 1 }).total, live.size);
});

test('on PostgreSQL, a data directory that does not exist yet (the README\'s REGISTRY_DATA_DIR=./replica-1) is created, and the next start loads the saved index', async (t) => {
  if (postgres.skipReason) return t.skip(postgres.skipReason);
  const databaseUrl = await postgres.server.createDatabase('snapshot');
  const parent = tempDir('a2a-registry-replica-');
  // Nothing else writes there on PostgreSQL (the database is elsewhere, the tokens are configured).
  const replicaDir = path.join(parent, 'replica-1');
  const env = { DATABASE_URL: databaseUrl, REGISTRY_DATA_DIR: replicaDir };
  try {
    // An empty database: nothing indexed, so nothing saved (a replica's first start wrote the
    // snapshot of an empty index; a test's left one in the checkout's ./data).
    let { registry, messages } = await start(env);
    await stop(registry);
    assert.ok(!fs.existsSync(path.join(replicaDir, SNAPSHOT_FILE)), 'an empty index is not saved');
    const store = createStore({ dataDir: replicaDir, databaseUrl });
    await store.open();
    try {
      await store.upsert(entryWrite('agent', 'https://pg-snapshot.example.org/a2a', '1', 'Saved agent'), actor('admin', true));
    } finally {
      await store.close();
    }
    ({ registry, messages } = await start(env));
    await stop(registry);
    assert.ok(fs.existsSync(path.join(replicaDir, SNAPSHOT_FILE)), 'saved at shutdown');
    assert.equal(fs.statSync(replicaDir).mode & 0o777, 0o700, 'the directory is private, as the data directory is');
    ({ registry, messages } = await start(env));
    assert.ok(messages.includes('search index loaded from its snapshot and the change log'), messages.join('\n'));
    assert.equal((await registry.service.search({ query: 'saved', limit: 5 }, ADMIN)).results.length, 1);
    await stop(registry);
  } finally {
    removeTempDir(parent);
  }
});

test('a registry idle for longer than the change log is kept loads its saved index at the next start: the change at its position trimmed away is no sign of another database', async () => {
  const dir = tempDir('a2a-registry-snapshot-idle-');
  const env = { REGISTRY_DATA_DIR: dir };
  try {
    const store = () => createStore({ dataDir: dir });
    const written = store();
    await written.open();
    await written.upsert(entryWrite('agent', 'https://idle-ibis.example.org/a2a', '1', 'Idle Ibis'), actor('admin', true));
    await written.close();
    let { registry, messages } = await start(env);
    await stop(registry);
    assert.ok(fs.existsSync(path.join(dir, SNAPSHOT_FILE)));
    // No write for REGISTRY_CHANGES_RETENTION_HOURS: housekeeping trims every change, the one at
    // the saved index's position too (the last), at its next round or as the registry starts.
    const trimmed = store();
    await trimmed.open();
    assert.equal(await trimmed.trimChanges(0), 1);
    await trimmed.close();
    ({ registry, messages } = await start(env));
    // It was "no saved search index used (the change log holds another change at its position 1:
    // another database's, or a restored backup): indexing every entry", at every such restart.
    assert.ok(messages.includes('search index loaded from its snapshot and the change log'), messages.join('\n'));
    assert.equal((await registry.service.search({ query: 'ibis', limit: 5 }, ADMIN)).results.length, 1);
    await stop(registry);
  } finally {
    removeTempDir(dir);
  }
});

test('SQLite: what `a2a-registry import` wrote while the registry ran is searchable after the restart the README asks for, though the registry saved its index in between', async () => {
  const dir = tempDir('a2a-registry-snapshot-import-');
  const env = { REGISTRY_DATA_DIR: dir };
  const cards = path.join(dir, 'cards.jsonl');
  const importCards = async (name: string): Promise<void> => {
    fs.writeFileSync(cards, [0, 1, 2].map((i) => JSON.stringify(v1Card(`${name} ${i}`, `https://imported-${i}.example.org/a2a`))).join('\n'));
    const summary = await runImport(loadConfig({ REGISTRY_DATA_DIR: dir, LOG_LEVEL: 'warn' }), [cards], { owner: 'admin', batchSize: 500, thread: 'main' });
    assert.equal(summary.refused, 0);
  };
  try {
    await importCards('Quokka');
    let { registry } = await start(env);
    // While it runs: the import renames the entries (another process: the registry does not see it
    // yet), then a registration changes the index, so the shutdown saves it.
    await importCards('Wombat');
    const otter = JSON.stringify(v1Card('Online Otter', 'https://otter.example.org/a2a'));
    await registry.service.register({ type: 'agent-card', card: JSON.parse(otter), documentText: otter, sizeBytes: Buffer.byteLength(otter) }, ADMIN);
    await stop(registry);

    ({ registry } = await start(env));
    const names = async (query: string): Promise<string[]> => (await registry.service.search({ query, limit: 10 }, ADMIN)).results.map((r) => r.name).sort();
    assert.deepEqual(await names('wombat'), ['Wombat 0', 'Wombat 1', 'Wombat 2'], 'the import\'s changes are in the index after the restart');
    assert.deepEqual(await names('quokka'), [], 'the names they replaced are not');
    assert.deepEqual(await names('otter'), ['Online Otter']);
    await stop(registry);
  } finally {
    removeTempDir(dir);
  }
});

test('an entry the index cannot load (a database edited by hand): /readyz says the search index could not be loaded and what to do, not the error\'s own words, which go to the log', async () => {
  const dir = tempDir('a2a-registry-snapshot-unloadable-');
  try {
    const store = createStore({ dataDir: dir });
    await store.open();
    await store.upsert(entryWrite('agent', 'https://edited.example.org/a2a', '1', 'Edited agent'), actor('admin', true));
    await store.close();
    // Not valid JSON, a server path: the parse error quoted its start (`"/tmp/a2a-r"... is not valid JSON`);
    // the log names the entry and its column instead, never the stored value.
    const db = new Database(path.join(dir, 'registry.db'));
    db.prepare('UPDATE entry_revisions SET interfaces = ?').run(`${dir}/not-json`);
    db.close();
    const { registry, lines } = await start({ REGISTRY_DATA_DIR: dir });
    const answer = await fetch(`${registry.url}/readyz`);
    const body = (await answer.json()) as { status: string; reason: string };
    assert.equal(answer.status, 503);
    assert.equal(body.reason, 'the search index could not be loaded (the cause is in the log); restart the registry once it is fixed');
    const logged = lines.find((line) => line.msg === 'loading the search index failed');
    assert.match(String((logged?.err as { message?: unknown } | undefined)?.message), /^Entry [0-9a-f-]{36} cannot be read: its interfaces column does not hold JSON\.$/, JSON.stringify(logged));
    assert.ok(!JSON.stringify(logged).includes(dir), 'the stored value is not in the log');
    await stop(registry);
  } finally {
    removeTempDir(dir);
  }
});

test('SQLite: a registration that failed part way (its change rolled back, its number given to the next writer) does not pass off the change an import then wrote as the registry\'s own', async () => {
  const dir = tempDir('a2a-registry-snapshot-rolled-back-');
  const env = { REGISTRY_DATA_DIR: dir };
  const register = (name: string, url: string) => {
    const text = JSON.stringify(v1Card(name, url));
    return registry.service.register({ type: 'agent-card', card: JSON.parse(text), documentText: text, sizeBytes: Buffer.byteLength(text) }, ADMIN);
  };
  const cards = path.join(dir, 'cards.jsonl');
  const importCard = async (name: string): Promise<void> => {
    fs.writeFileSync(cards, JSON.stringify(v1Card(name, 'https://imported.example.org/a2a')));
    assert.equal((await runImport(loadConfig({ REGISTRY_DATA_DIR: dir, LOG_LEVEL: 'warn' }), [cards], { owner: 'admin', batchSize: 500, thread: 'main' })).refused, 0);
  };
  await importCard('Imported Quokka');
  let { registry } = await start(env);
  try {
    // A write that fails after its change row, as a full disk fails the revision's insert: its
    // transaction (or savepoint) is rolled back, and SQLite gives its change number to the next writer.
    const db = new Database(path.join(dir, 'registry.db'));
    db.exec("CREATE TRIGGER fail_part_way BEFORE INSERT ON entry_revisions WHEN NEW.name = 'Failing Ferret' BEGIN SELECT RAISE(ABORT, 'simulated: disk full'); END");
    db.close();
    await assert.rejects(register('Failing Ferret', 'https://ferret.example.org/a2a'), /simulated: disk full/);
    // The import, another process, writes next (it renames its entry): its change takes the rolled-back number.
    await importCard('Imported Ibex');
    await register('Online Okapi', 'https://okapi.example.org/a2a');
    // Before, the saved index claimed the import's change as applied (its number was one the
    // registry had recorded), and the restart skipped it: the imported entry was never searchable.
    await stop(registry);
    ({ registry } = await start(env));
    const names = async (query: string): Promise<string[]> => (await registry.service.search({ query, limit: 10 }, ADMIN)).results.map((r) => r.name);
    assert.deepEqual(await names('ibex'), ['Imported Ibex']);
    assert.deepEqual(await names('quokka'), [], 'the name it replaced is gone');
    assert.deepEqual(await names('okapi'), ['Online Okapi']);
    await stop(registry);
  } finally {
    await running?.close();
    running = undefined;
    removeTempDir(dir);
  }
});

test('a database restored from a backup, which numbers its new changes from the backup\'s position, is not served the index saved beside the database it replaced', async () => {
  const dir = tempDir('a2a-registry-snapshot-restore-');
  const env = { REGISTRY_DATA_DIR: dir };
  const db = path.join(dir, 'registry.db');
  const backup = path.join(dir, 'backup.db');
  const admin = actor('admin', true);
  const write = async (names: string[]): Promise<void> => {
    const store = createStore({ dataDir: dir });
    await store.open();
    try {
      for (const name of names) await store.upsert(entryWrite('agent', `https://${name.replace(/\W+/g, '-').toLowerCase()}.example.org/a2a`, '1', name), admin);
    } finally {
      await store.close();
    }
  };
  try {
    await write(['Stored agent 1', 'Stored agent 2']);
    fs.copyFileSync(db, backup); // closed cleanly: the file holds everything (no -wal)
    // The database goes on (changes 3 and 4), and the registry saves its index at position 4.
    await write(['Original lineage agent A', 'Original lineage agent B']);
    let { registry } = await start(env);
    await stop(registry);
    assert.ok(fs.existsSync(path.join(dir, SNAPSHOT_FILE)));

    // The backup is restored; new writes take positions 3 and 4 again, with other changes.
    for (const f of ['registry.db-wal', 'registry.db-shm']) fs.rmSync(path.join(dir, f), { force: true });
    fs.copyFileSync(backup, db);
    await write(['Restored lineage agent C', 'Restored lineage agent D']);

    let messages: string[];
    ({ registry, messages } = await start(env));
    assert.ok(messages.some((m) => m.startsWith('no saved search index used (the change log holds another change at its position 4')), messages.join('\n'));
    const names = (await registry.service.search({ query: 'lineage', limit: 10 }, ADMIN)).results.map((r) => r.name).sort();
    assert.deepEqual(names, ['Restored lineage agent C', 'Restored lineage agent D']);
    await stop(registry);

    // The index saved now carries this log's mark: the next start loads it.
    ({ registry, messages } = await start(env));
    assert.ok(messages.includes('search index loaded from its snapshot and the change log'), messages.join('\n'));
    await stop(registry);
  } finally {
    removeTempDir(dir);
  }
});

test('a registry killed while saving its index leaves a temporary file; the next start removes it (every crash mid-save left one, as large as the index, forever)', { timeout: 180_000 }, async () => {
  const dir = tempDir('a2a-registry-snapshot-killed-');
  const env = { REGISTRY_DATA_DIR: dir, REGISTRY_TOKENS: TOKENS_ENV, REGISTRY_INDEX_SNAPSHOT_SECONDS: '1' };
  let sharing: ReturnType<typeof spawn> | undefined;
  try {
    // Enough entries that saving the index takes a moment.
    const cards = path.join(dir, 'cards.jsonl');
    fs.writeFileSync(cards, Array.from({ length: 3000 }, (_, i) => JSON.stringify(v1Card(`Saved Agent ${i}`, `https://saved-${i}.example.org/a2a`))).join('\n'));
    assert.equal((await runImport(loadConfig({ REGISTRY_DATA_DIR: dir, LOG_LEVEL: 'warn' }), [cards], { owner: 'admin', batchSize: 500, thread: 'main' })).refused, 0);
    fs.rmSync(cards);

    // The built registry, as `npm start` runs it, SIGKILLed as soon as it starts writing its
    // index (a rebuilt index is saved at once): the OOM killer or a crash at that moment.
    let child: Awaited<ReturnType<typeof spawnRegistry>>['child'] | undefined;
    const killed = new Promise<string>((resolve) => {
      const watcher = fs.watch(dir, (_event, name) => {
        if (child && name === `${SNAPSHOT_FILE}.${child.pid}.tmp`) {
          child.kill('SIGKILL');
          watcher.close();
          resolve(name);
        }
      });
    });
    const crashed = await spawnRegistry(env, { listeningOnly: true });
    child = crashed.child;
    const left = await killed;
    assert.equal(await crashed.exited, 'SIGKILL');
    // Another crash's leftover (its process is gone), and the file of a process that is still
    // running (a registry sharing the directory by mistake), which must be left alone.
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    const older = `${SNAPSHOT_FILE}.${gone}.tmp`;
    fs.writeFileSync(path.join(dir, older), Buffer.alloc(64 * 1024, 7));
    sharing = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120_000)'], { stdio: 'ignore' });
    const alive = `${SNAPSHOT_FILE}.${sharing.pid}.tmp`;
    fs.writeFileSync(path.join(dir, alive), 'in progress');
    const leftovers = fs.readdirSync(dir).filter((name) => name.endsWith('.tmp')).sort();
    assert.ok(leftovers.includes(older) && leftovers.includes(alive), `planted: ${leftovers.join(', ')}`);

    const { registry, messages } = await start({ REGISTRY_DATA_DIR: dir, REGISTRY_INDEX_SNAPSHOT_SECONDS: '1' });
    try {
      assert.ok(messages.includes('removed the temporary files of search index saves a crash cut short'), messages.join('\n'));
      const remaining = fs.readdirSync(dir).filter((name) => name.endsWith('.tmp'));
      assert.deepEqual(remaining, [alive], `the killed save's ${left} and the older leftover are removed, the running process's file kept`);
      assert.equal((await registry.service.search({ query: 'saved agent 2999', limit: 1 }, ADMIN)).results[0]?.name, 'Saved Agent 2999');
    } finally {
      await stop(registry);
    }
  } finally {
    sharing?.kill('SIGKILL');
    removeTempDir(dir);
  }
});

test('SQLite: an update whose fsync is slow while the index is saved (the thread pool busy) is not left out of the saved index a crash then loads', { timeout: 120_000 }, async () => {
  const dir = tempDir('a2a-registry-snapshot-slow-sync-');
  const env = { REGISTRY_DATA_DIR: dir, REGISTRY_INDEX_SNAPSHOT_SECONDS: '1' };
  const card = (name: string, url = 'https://shelf.example.org/a2a') => {
    const text = JSON.stringify(v1Card(name, url));
    return { type: 'agent-card' as const, card: JSON.parse(text), documentText: text, sizeBytes: Buffer.byteLength(text) };
  };
  const names = async (registry: RunningRegistry, query: string) => (await registry.service.search({ query, limit: 5 }, ADMIN)).results.map((r) => r.name);
  try {
    let { registry, messages } = await start(env);
    await registry.service.register(card('Shelf Agent'), ADMIN);
    const saves = () => messages.filter((m) => m === 'search index saved').length;
    for (const until = Date.now() + 10_000; saves() === 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
    const before = saves();
    assert.ok(before > 0, 'the index was saved');

    // Another write (so the next periodic save has something to save), then, with every thread
    // of the pool busy (slow DNS lookups of refreshes, file I/O and crypto share it in
    // production), an update: committed at once, its fsync waits for a thread, so it is not
    // acknowledged, nor in the index, for a second or two — across the next save.
    await registry.service.register(card('Other Agent', 'https://other.example.org/a2a'), ADMIN);
    const busy = Array.from({ length: 12 }, () => new Promise((resolve) => pbkdf2('x', 'y', 500_000, 32, 'sha512', resolve)));
    const update = registry.service.register(card('Lantern Agent'), ADMIN);
    for (const until = Date.now() + 20_000; saves() === before && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    assert.ok(saves() > before, 'the index was saved meanwhile');
    // What a crash right now leaves on disk: the file just saved.
    const crashed = fs.readFileSync(path.join(dir, SNAPSHOT_FILE));
    await update;
    await Promise.all(busy);
    assert.deepEqual(await names(registry, 'lantern'), ['Lantern Agent']);
    await stop(registry);

    fs.writeFileSync(path.join(dir, SNAPSHOT_FILE), crashed);
    ({ registry, messages } = await start(env));
    try {
      assert.ok(messages.includes('search index loaded from its snapshot and the change log'), messages.join('\n'));
      assert.deepEqual(await names(registry, 'lantern'), ['Lantern Agent'], 'the acknowledged update is searchable after the crash');
      assert.deepEqual(await names(registry, 'shelf'), [], 'the name it replaced is not');
    } finally {
      await stop(registry);
    }
  } finally {
    removeTempDir(dir);
  }
});

test('a save that cannot put the file in place (a directory where it belongs) fails without leaving its temporary file, as large as the index, behind', async () => {
  const dir = tempDir('a2a-registry-snapshot-blocked-');
  try {
    fs.mkdirSync(path.join(dir, SNAPSHOT_FILE));
    const { registry, messages, lines } = await start({ REGISTRY_DATA_DIR: dir, REGISTRY_INDEX_SNAPSHOT_SECONDS: '1' });
    const text = JSON.stringify(v1Card('Blocked Agent', 'https://blocked.example.org/a2a'));
    await registry.service.register({ type: 'agent-card', card: JSON.parse(text), documentText: text, sizeBytes: Buffer.byteLength(text) }, ADMIN);
    for (const until = Date.now() + 10_000; !messages.includes('saving the search index failed; will retry') && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
    assert.ok(messages.includes('saving the search index failed; will retry'), messages.join('\n'));
    assert.deepEqual(fs.readdirSync(dir).filter((name) => name.endsWith('.tmp')), [], 'the failed save removed its temporary file');
    await stop(registry);
    assert.ok(messages.includes('saving the search index at shutdown failed'));
    assert.deepEqual(fs.readdirSync(dir).filter((name) => name.endsWith('.tmp')), []);
    assertStackFree(lines, /^E[A-Z]+$/);
  } finally {
    removeTempDir(dir);
  }
});

/** The index's failed saves are logged as other storage faults are: the message and the code, no stack (they are no bug). */
function assertStackFree(lines: Record<string, unknown>[], code: RegExp): void {
  const failed = lines.filter((line) => /^saving the search index (failed|at shutdown failed)/.test(String(line.msg)));
  assert.ok(failed.length >= 2, JSON.stringify(lines));
  for (const line of failed) {
    assert.equal(line.level, 40);
    assert.match(String(line.code), code, JSON.stringify(line));
    assert.equal(typeof line.err, 'string', JSON.stringify(line));
    assert.ok(!JSON.stringify(line).includes('stack'), JSON.stringify(line));
  }
}

test('a save on a full disk (a real, full tmpfs) is logged with ENOSPC and no stack, while running and at shutdown', async (t) => {
  const mount = mountTmpfs(4, 'registry-full-snapshots-');
  if (typeof mount === 'string') return t.skip(mount);
  const dir = tempDir('a2a-registry-snapshot-full-');
  t.after(() => {
    removeTempDir(dir);
    mount.unmount();
  });
  fill(mount.dir);
  // The database has room; only the index's directory is full.
  const { registry, messages, lines } = await start({ REGISTRY_DATA_DIR: dir, REGISTRY_INDEX_SNAPSHOT_DIR: mount.dir, REGISTRY_INDEX_SNAPSHOT_SECONDS: '1' });
  const text = JSON.stringify(v1Card('Full Disk Index', 'https://full-disk-index.example.org/a2a'));
  await registry.service.register({ type: 'agent-card', card: JSON.parse(text), documentText: text, sizeBytes: Buffer.byteLength(text) }, ADMIN);
  for (const until = Date.now() + 10_000; !messages.includes('saving the search index failed; will retry') && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
  await stop(registry);
  assertStackFree(lines, /^ENOSPC$/);
});

test('/readyz says what the load is doing before it can count entries: counting them, then, from a saved index, replaying the changes since (not "0 of 0 entries")', async (t) => {
  const dir = tempDir('a2a-registry-load-stage-');
  t.after(() => removeTempDir(dir));
  const store = createStore({ dataDir: dir });
  await store.open();
  for (const name of ['Stage Stork', 'Stage Swift', 'Stage Snipe']) await store.upsert(entryWrite('agent', `https://${name.replace(' ', '-').toLowerCase()}.example.org/a2a`, '1', name), actor('admin', true));
  await store.close();
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', REGISTRY_TOKENS: TOKENS_ENV, REGISTRY_DATA_DIR: dir, REGISTRY_REFRESH_SECONDS: '0' });
  /** A start held in `method` of the store (patched for the start only); /readyz's reason while held. */
  const heldIn = async (method: 'count' | 'changesSince'): Promise<string> => {
    const original = SqliteStore.prototype[method];
    const held = holdPoint();
    SqliteStore.prototype[method] = async function (this: SqliteStore, ...args: never[]) {
      await held.hold();
      return (original as (...a: never[]) => Promise<unknown>).apply(this, args);
    } as never;
    const registry = await startRegistry(config, createLogger('silent'));
    try {
      await held.reached;
      SqliteStore.prototype[method] = original as never;
      const answer = await fetch(`${registry.url}/readyz`);
      assert.equal(answer.status, 503);
      return ((await answer.json()) as { reason: string }).reason;
    } finally {
      SqliteStore.prototype[method] = original as never;
      held.release();
      await registry.ready;
      await registry.close();
    }
  };
  // No saved index yet: every entry indexed, once they are counted. Shutdown saves the index.
  assert.equal(await heldIn('count'), 'loading the search index (counting the entries)');
  assert.ok(fs.existsSync(path.join(dir, SNAPSHOT_FILE)));
  assert.equal(await heldIn('changesSince'), 'loading the search index (from the saved index of 3 entries: 0 changed since applied)');
});
