/**
 * `a2a-registry import`: real files (a directory of JSON files and a JSON-lines file) into a real
 * SQLite data directory and a real PostgreSQL database, with the checks of a registration. A bad
 * document in the middle is reported (file, line, path, message, hint) and skipped while the
 * others are stored; importing again changes nothing; the registry finds the imported entries
 * after a restart (SQLite) or live (a running PostgreSQL replica); ownership is that of an online
 * registration (another principal's identity or URL is refused).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import diagnostics from 'node:diagnostics_channel';
import { describe, test } from 'node:test';
import { importCommand, runImport as runImportIn, type ImportJson } from '../src/cli/commands/import.js';
import { checkCommand } from '../src/cli/commands/check.js';
import { SQLITE_SCHEMA_VERSION } from '../src/storage/sqlite/migrations.js';
import { lockForThisProcess } from '../src/storage/sqlite/process-lock.js';
import type { Refusal } from '../src/cli/import-preparation.js';
import { WORKER_MIN_BYTES, WORKER_MIN_DOCUMENTS, threadFor } from '../src/cli/import-preparers.js';
import { loadConfig } from '../src/config/config.js';
import type { Output } from '../src/cli/output.js';
import { errorOf, op, resultOf, sdkClient, type WireJson } from './support/client.js';
import { mcpServer, toolspec, v03Card, v1Card } from './support/documents.js';
import { BIN, REPO_ROOT, ensureBuilt } from './support/built.js';
import pg from 'pg';
import Database from 'better-sqlite3';
import { freePort } from './support/ports.js';
import { usePostgres } from './support/postgres.js';
import { TOKENS, removeTempDir, startTestRegistry, tempDir } from './support/registry.js';

const postgres = usePostgres();

interface Run {
  code: number;
  out: string;
  err: string;
}

async function runImport(sources: string[], options: { owner?: string; dataDir?: string; databaseUrl?: string; batchSize?: number; json?: boolean }): Promise<Run> {
  let out = '';
  let err = '';
  const o: Output = { out: (s) => (out += s), err: (s) => (err += s), color: false };
  const code = await importCommand(sources, { owner: options.owner ?? 'alice', batchSize: options.batchSize ?? 500, json: options.json ?? false, ...options }, o);
  return { code, out, err };
}

const summaryOf = (run: Run): ImportJson => JSON.parse(run.out) as ImportJson;

/** Runs `body` with a fresh work folder (the sources) and data directory, both removed after. */
async function inTempDirs(body: (work: string, dataDir: string) => Promise<void>): Promise<void> {
  const work = tempDir();
  const dataDir = tempDir();
  try {
    await body(work, dataDir);
  } finally {
    removeTempDir(work);
    removeTempDir(dataDir);
  }
}

/**
 * `count` cards saying "numbatline" alike (names of one length: one relevance for each), as one
 * JSON-lines file: an import stores many of them within one millisecond (into PostgreSQL, a
 * batch has one created_at), and their ids' order there is random (UUIDv7).
 */
function writeBatch(dir: string, count: number): string {
  const file = path.join(dir, 'numbats.jsonl');
  const card = (i: number) => ({
    ...v1Card(`Numbat ${String(i).padStart(2, '0')}`, `https://numbat-${i}.example.org/a2a`),
    description: 'Numbatline agent.',
    skills: [{ id: 'dig', name: 'Dig', description: 'Digs.', tags: ['burrows'] }],
  });
  fs.writeFileSync(file, Array.from({ length: count }, (_, i) => JSON.stringify(card(i))).join('\n') + '\n');
  return file;
}

/**
 * A named pipe at `file` (a *.jsonl name: the import reads it as it reads a file) that the test
 * fills as it chooses: the import waits for the next line, so it is still running, part way, when
 * the test acts, however fast the machine. (A file of 20,000 documents was written for that, long
 * enough not to be done first, and each test then imported all of them again.) `close` lets go
 * of it whether or not the import ever opened it, so a failing test fails instead of hanging.
 */
function linesPipe(file: string): { write(lines: readonly string[]): Promise<void>; end(): void; close(): void } {
  execFileSync('mkfifo', [file]);
  // Opening it for writing waits for a reader (the import); meanwhile the writes queue here.
  const writer = fs.createWriteStream(file);
  writer.on('error', () => undefined); // the reader stopped (interrupted, failed) before all was written
  return {
    // Settles once the lines are in the pipe (a pipe holds 64 KiB: most of them read by then), or the reader has gone.
    write: (lines) => new Promise((resolve) => writer.write(lines.map((l) => `${l}\n`).join(''), () => resolve())),
    end: () => writer.end(),
    close: () => {
      if (writer.pending) fs.closeSync(fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)); // lets the waiting open finish
      writer.destroy();
    },
  };
}

/**
 * `owner`'s entries come in searches as `list` shows them (newest registered first): a search
 * without text lists them in that order, and the hits of `word` (every one of equal relevance)
 * come in it. The index ordered entries of one millisecond by id.
 */
async function assertListOrder(client: Awaited<ReturnType<typeof sdkClient>>, owner: string, word: string): Promise<void> {
  const listed: string[] = [];
  let pageToken: string | undefined;
  do {
    const page = resultOf(await op(client, { list: { filter: { owner }, pageSize: 100, ...(pageToken ? { pageToken } : {}) } }));
    listed.push(...(page.entries as WireJson[]).map((e) => e.id as string));
    pageToken = page.nextPageToken;
  } while (pageToken);
  const searched = async (query: string): Promise<WireJson[]> => resultOf(await op(client, { search: { query, filter: { owner }, limit: 100 } })).results;
  assert.deepEqual((await searched('')).map((h) => h.id), listed, 'a search without text lists as list does');
  const hits = await searched(word);
  assert.equal(new Set(hits.map((h) => h.score)).size, 1, 'every hit ties');
  assert.deepEqual(hits.map((h) => h.id), listed.filter((id) => hits.some((h) => h.id === id)), `"${word}": ties as list orders them`);
}

/** A directory of cards (two JSON files) and a JSON-lines file with a bad line and a non-JSON line among good ones. */
function writeSources(dir: string): { cards: string; lines: string } {
  const cards = path.join(dir, 'cards');
  fs.mkdirSync(cards);
  fs.writeFileSync(path.join(cards, 'alpaca.json'), JSON.stringify(v1Card('Alpaca Accountant', 'https://alpaca.example.org/a2a'), null, 2));
  fs.writeFileSync(path.join(cards, 'bison.json'), JSON.stringify(v03Card('Bison Broker', 'https://bison.example.org/a2a'), null, 2));
  fs.writeFileSync(path.join(cards, 'notes.txt'), 'not a document: ignored');
  const bad = v1Card('Broken Badger', 'badger.example.org/a2a');
  const lines = path.join(dir, 'more.jsonl');
  fs.writeFileSync(
    lines,
    [
      JSON.stringify({ mcpServer: mcpServer('cassowary-files', 'https://cassowary.example.org/mcp'), toolspec: toolspec() }),
      JSON.stringify(bad),
      '{"name": "Dingo", ',
      '',
      JSON.stringify(v1Card('Echidna Estimator', 'https://echidna.example.org/a2a')),
    ].join('\n') + '\n',
  );
  return { cards, lines };
}

/**
 * Documents whose identity an earlier document of the import has, that earlier one refused (bob
 * owns its identity or one of its URLs, or it fails validation): each later one is judged on its
 * own, and only one that was stored makes a later one a repeat. Imported as alice into `target`
 * (where bob's entries are imported first), with `batchSize` 2 (the repeats in other batches than
 * the first, overlapping on PostgreSQL) and 500 (all in one). Every document's line, code and
 * message; a second run changes nothing.
 */
async function assertRefusedFirstTakesNothing(work: string, target: (batch: number) => { dataDir: string } | { databaseUrl: string }): Promise<void> {
  const bobs = path.join(work, 'bob.jsonl');
  fs.writeFileSync(bobs, [v1Card('Quoll Quoter', 'https://quoll.example.org/a2a'), v1Card('Zorilla Zipper', 'https://zorilla.example.org/a2a')].map((c) => JSON.stringify(c)).join('\n') + '\n');
  const grabby = v1Card('Yak Yodeller', 'https://yak.example.org/a2a');
  grabby.supportedInterfaces.push({ url: 'https://zorilla.example.org/a2a', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' });
  const lines = path.join(work, 'alice.jsonl');
  fs.writeFileSync(
    lines,
    [
      v1Card('Quoll Again', 'https://quoll.example.org/a2a'), // 1: bob's identity
      { ...v1Card('Quoll Again', 'https://quoll.example.org/a2a'), version: '2.0.0' }, // 2: bob's too, said so
      grabby, // 3: one of bob's URLs
      v1Card('Yak Yodeller', 'https://yak.example.org/a2a'), // 4: the same identity without it: stored
      { ...v1Card('Yak Yodeller', 'https://yak.example.org/a2a'), version: '3.0.0' }, // 5: a repeat of line 4
      { ...v1Card('Wallaby Writer', 'https://wallaby.example.org/a2a'), skills: 'none' }, // 6: invalid
      v1Card('Wallaby Writer', 'https://wallaby.example.org/a2a'), // 7: stored
    ]
      .map((c) => JSON.stringify(c))
      .join('\n') + '\n',
  );
  for (const batchSize of [2, 500]) {
    assert.equal((await runImport([bobs], { ...target(batchSize), owner: 'bob' })).code, 0);
    const first = await runImport([lines], { ...target(batchSize), batchSize, json: true });
    assert.equal(first.code, 1, first.err);
    const summary = summaryOf(first);
    // Lines 2 and 4 were refused as DUPLICATE_IDENTITY of lines 1 and 3, "the one imported", which were not; line 4, not stored, made line 5 no repeat.
    assert.deepEqual(
      summary.refusals.map((r) => [r.line, r.code]),
      [[1, 'FORBIDDEN'], [2, 'FORBIDDEN'], [3, 'FORBIDDEN'], [5, 'DUPLICATE_IDENTITY'], [6, 'VALIDATION_FAILED']],
      `batch size ${batchSize}`,
    );
    assert.deepEqual([summary.created, summary.updated, summary.unchanged, summary.refused], [2, 0, 0, 5], `batch size ${batchSize}`);
    const repeat = summary.refusals.find((r) => r.line === 5)!;
    assert.match(repeat.message, /alice\.jsonl:5: the same agent \(https:\/\/yak\.example\.org\/a2a\) as line 4 of this import/);
    assert.match(repeat.details[0]!.hint ?? '', /the one at .*alice\.jsonl:4 is the one imported/);
    assert.match(summary.refusals[1]!.message, /quoll\.example\.org/);
    const again = summaryOf(await runImport([lines], { ...target(batchSize), batchSize, json: true }));
    assert.deepEqual([again.created, again.updated, again.unchanged, again.refused], [0, 0, 2, 5], `batch size ${batchSize}: again`);
    assert.deepEqual(again.refusals.map((r) => [r.line, r.code]), summary.refusals.map((r) => [r.line, r.code]));
  }
}

describe('import into SQLite', () => {
  test('a bad document in the middle is reported and skipped; re-import is idempotent; the registry finds the entries after a restart', async () => {
    const work = tempDir();
    const dataDir = tempDir();
    try {
      const { cards, lines } = writeSources(work);
      const first = await runImport([cards, lines], { dataDir, batchSize: 2 });
      assert.equal(first.code, 1, first.err);
      // The schema violation: where (file:line and the column of the offending member), what, and how to fix it.
      assert.match(first.err, /✗ refused .*more\.jsonl:2: VALIDATION_FAILED/);
      assert.match(first.err, /more\.jsonl:2:\d+ {2}\/supportedInterfaces\/0\/url: "badger\.example\.org\/a2a" is not an absolute URL/);
      assert.match(first.err, /hint: Give the http\(s\) URL/);
      // Not JSON: line and column.
      assert.match(first.err, /more\.jsonl:3: NOT_JSON\n {2}.*more\.jsonl:3:\d+: not valid JSON/);
      assert.match(first.out, /imported 4 of 6 documents .*: 4 created, 0 updated, 0 unchanged, 2 refused/);

      const again = summaryOf(await runImport([cards, lines], { dataDir, json: true }));
      assert.deepEqual([again.documents, again.imported, again.created, again.updated, again.unchanged, again.refused], [6, 4, 0, 0, 4, 2]);
      assert.deepEqual(
        again.refusals.map((r) => [path.basename(r.file), r.line, r.code]),
        [
          ['more.jsonl', 2, 'VALIDATION_FAILED'],
          ['more.jsonl', 3, 'NOT_JSON'],
        ],
      );
      assert.ok(again.refusals[0]!.details.some((d) => d.location?.line === 2), 'findings carry their place in the file');
      assert.equal(summaryOf(await runImport([writeBatch(work, 30)], { dataDir, json: true })).created, 30);

      const registry = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir });
      try {
        const client = await sdkClient(registry.url, { token: TOKENS.bob });
        for (const [query, name] of [
          ['alpaca', 'Alpaca Accountant'],
          ['bison', 'Bison Broker'],
          ['cassowary', 'cassowary-files'],
          ['echidna', 'Echidna Estimator'],
        ]) {
          const hits = resultOf(await op(client, { search: { query } })).results as WireJson[];
          assert.equal(hits.length, 1, query);
          const entry = resultOf(await op(client, { get: { id: hits[0]!.id } }));
          assert.equal(entry.name, name);
          assert.equal(entry.owner, 'alice', 'imported entries belong to --owner');
          assert.equal(entry.revision, 1);
        }
        assert.equal(resultOf(await op(client, { search: { query: 'badger' } })).results.length, 0);
        // Indexed at start-up in list's order.
        await assertListOrder(client, 'alice', 'numbatline');
        // The file's bytes are the stored document, as for an uploaded file.
        const alpaca = resultOf(await op(client, { search: { query: 'alpaca' } })).results[0];
        const stored = resultOf(await op(client, { get: { id: alpaca.id } }));
        assert.deepEqual(stored.document, JSON.parse(fs.readFileSync(path.join(cards, 'alpaca.json'), 'utf8')));
        // An online registration by bob, whose identity alice's next import claims.
        resultOf(await op(client, { register: { agentCard: v1Card('Fennec Finder', 'https://fennec.example.org/a2a') } }));
      } finally {
        await registry.close();
      }

      const fennec = path.join(work, 'fennec.json');
      fs.writeFileSync(fennec, JSON.stringify({ ...v1Card('Fennec Finder', 'https://fennec.example.org/a2a'), version: '9.9.9' }));
      const taken = await runImport([fennec], { dataDir, json: true });
      assert.equal(taken.code, 1);
      const refused = summaryOf(taken);
      assert.equal(refused.refusals[0]!.code, 'FORBIDDEN');
      assert.match(refused.refusals[0]!.message, /already registered as entry .* by another principal/);
      // Everything refused: nothing was imported, and the summary says so (it said "imported 1 documents").
      assert.deepEqual([refused.documents, refused.imported, refused.refused], [1, 0, 1]);
      const told = await runImport([fennec], { dataDir });
      assert.equal(told.code, 1);
      assert.match(told.err, /✗ refused .*fennec\.json: FORBIDDEN[^]*\n\n$/, 'a blank line after the refusals, on their stream');
      assert.match(told.out, /^imported 0 of 1 document into .* \(SQLite\) in [\d.]+ s \([\d,]+\/s\): 0 created, 0 updated, 0 unchanged, 1 refused\n$/);
      // Imported as --owner admin (the default), it was told "only its owner or an admin may update it",
      // as if it should have been allowed: an import never updates another principal's entry.
      const asAdmin = summaryOf(await runImport([fennec], { dataDir, owner: 'admin', json: true }));
      assert.equal(asAdmin.refusals[0]!.code, 'FORBIDDEN');
      assert.match(asAdmin.refusals[0]!.message, /^https:\/\/fennec\.example\.org\/a2a is already registered as entry \S+ by another principal; an import stores and updates the entries of its --owner \("admin"\) only, never another principal's \(with --owner admin too: it does not update as an admin does online\)\.$/);
      assert.match(asAdmin.refusals[0]!.details[0]!.hint!, /^Import it with --owner set to that entry's owner \(a2a-registry get \S+ shows it\), or leave it out\.$/);
    } finally {
      removeTempDir(work);
      removeTempDir(dataDir);
    }
  });

  test('checked in a worker thread or on the main thread: the same answers; a small input starts no worker thread', async () => {
    const work = tempDir();
    const dirs = [tempDir(), tempDir(), tempDir()];
    /** The worker threads started (node:diagnostics_channel tells of each new one). */
    let workers = 0;
    const started = (): void => void workers++;
    diagnostics.subscribe('worker_threads', started);
    try {
      const { cards, lines } = writeSources(work);
      const summaries: ImportJson[] = [];
      const threadsStarted: number[] = [];
      // undefined: the import's own choice, which for six documents is the main thread (a worker's
      // start cost about 1 s of CPU under tsx, 0.4 s built, for an import checked in milliseconds).
      for (const [i, thread] of (['worker', 'main', undefined] as const).entries()) {
        const config = loadConfig({ REGISTRY_DATA_DIR: dirs[i]!, LOG_LEVEL: 'warn' });
        const refusals: Refusal[] = [];
        workers = 0;
        summaries.push({ ...(await runImportIn(config, [cards, lines], { owner: 'alice', batchSize: 2, thread }, (r) => void refusals.push(r))), refusals });
        threadsStarted.push(workers);
      }
      const answers = summaries.map(({ created, updated, unchanged, refused, withWarnings, refusals }) => ({ created, updated, unchanged, refused, withWarnings, refusals }));
      assert.deepEqual(answers[0], answers[1]);
      assert.deepEqual(answers[2], answers[1]);
      assert.deepEqual([answers[0]!.created, answers[0]!.refused], [4, 2]);
      // Storage starts a thread of its own (SQLite's checkpoints) whichever way documents are checked.
      const [forced, main, chosen] = threadsStarted;
      assert.equal(forced, main! + 1, 'the checks\' worker thread, when asked for');
      assert.equal(chosen, main, 'no worker thread for six documents');

      // A worker where the input may be large: as many documents as WORKER_MIN_DOCUMENTS (lines
      // of a few bytes: 10,000 refusals of 13 bytes each took 1.8 s of CPU), as many bytes as
      // WORKER_MIN_BYTES (a sparse file: only its size is read), or a size not known up front
      // (standard input, a named pipe).
      const short = (name: string, count: number): string => {
        const file = path.join(work, name);
        fs.writeFileSync(file, '{"name":"x"}\n'.repeat(count));
        return file;
      };
      // With alpaca.json's one and the 5 lines of more.jsonl (one blank): one fewer than the limit.
      const fewer = short('fewer.jsonl', WORKER_MIN_DOCUMENTS - 7);
      const big = path.join(work, 'big.jsonl');
      fs.writeFileSync(big, '');
      fs.truncateSync(big, WORKER_MIN_BYTES);
      const fifo = path.join(work, 'pipe.jsonl');
      execFileSync('mkfifo', [fifo]);
      const small = path.join(cards, 'alpaca.json');
      for (const [files, thread] of [
        [[small, lines, fewer], 'main'],
        [[small, lines, fewer, small], 'worker'],
        [[short('as-many.ndjson', WORKER_MIN_DOCUMENTS)], 'worker'],
        [[small, big], 'worker'],
        [[small, '-'], 'worker'],
        [[fifo], 'worker'],
      ] as const) {
        assert.equal(await threadFor(files, 2), thread, files.join(' '));
      }
      // One core: no worker, whatever the size (the messages would only cost).
      assert.equal(await threadFor([big, '-'], 1), 'main');
    } finally {
      diagnostics.unsubscribe('worker_threads', started);
      removeTempDir(work);
      for (const dir of dirs) removeTempDir(dir);
    }
  });

  test('two documents of one identity (under any of its spellings) in one import: the later is refused naming both lines, so importing again changes nothing', () =>
    inTempDirs(async (work, dataDir) => {
      const lines = path.join(work, 'twice.jsonl');
      fs.writeFileSync(
        lines,
        [
          v1Card('Gooda Agent', 'https://gooda.example.org/a2a'),
          v1Card('Other Agent', 'https://other.example.org/a2a'),
          { ...v1Card('Gooda Agent', 'https://gooda.example.org/a2a'), version: '2.0.0' },
          // Its http spelling: a registration of it updates the https entry.
          v1Card('Gooda Again', 'http://gooda.example.org/a2a'),
        ]
          .map((card) => JSON.stringify(card))
          .join('\n') + '\n',
      );
      // Two a batch: the first copy in another batch than the later ones, which share one.
      const first = await runImport([lines], { dataDir, batchSize: 2 });
      assert.equal(first.code, 1, 'refused, as other refusals are');
      assert.match(first.err, /✗ refused .*twice\.jsonl:3: DUPLICATE_IDENTITY\n {2}.*twice\.jsonl:3: the same agent \(https:\/\/gooda\.example\.org\/a2a\) as line 1 of this import: one document per identity; remove one of them\./);
      assert.match(first.err, /twice\.jsonl:4: the same agent \(http:\/\/gooda\.example\.org\/a2a\) as line 1 of this import/);
      assert.match(first.out, /2 created, 0 updated, 0 unchanged, 2 refused/);
      const revisions = (): number => {
        const db = new Database(path.join(dataDir, 'registry.db'), { readonly: true });
        try {
          return (db.prepare('SELECT count(*) AS n FROM entry_revisions').get() as { n: number }).n;
        } finally {
          db.close();
        }
      };
      const stored = revisions();
      assert.equal(stored, 2);
      // It was "0 created, 2 updated": the later copy, then the first again, each a revision, every run.
      const again = await runImport([lines], { dataDir, batchSize: 2, json: true });
      assert.equal(again.code, 1);
      const summary = summaryOf(again);
      assert.deepEqual([summary.created, summary.updated, summary.unchanged, summary.refused], [0, 0, 2, 2]);
      assert.deepEqual(summary.refusals.map((r) => [r.line, r.code]), [[3, 'DUPLICATE_IDENTITY'], [4, 'DUPLICATE_IDENTITY']]);
      assert.equal(revisions(), stored, 'nothing written');
    }));

  test('a document whose identity an earlier one has, that one refused (another principal owns the identity or a URL, or it is invalid), is judged on its own: only one stored makes a later one a repeat', () =>
    // A data directory for each batch size, in the work folder (removed with it).
    inTempDirs((work) => assertRefusedFirstTakesNothing(work, (batch) => ({ dataDir: path.join(work, `data-${batch}`) }))));

  test('a document with a key given twice or a number JSON cannot hold (1e400) is refused at its line and column, as the registry refuses its upload; one read rounded is imported', () =>
    inTempDirs(async (work, dataDir) => {
      const lines = path.join(work, 'numbers.jsonl');
      const card = (name: string, host: string): string => JSON.stringify(v1Card(name, `https://${host}.example.org/a2a`));
      const twice = card('Twice Agent', 'twice').replace('{"name"', '{"skills":[],"name"');
      const huge = card('Huge Agent', 'huge').replace('"capabilities":{', '"capabilities":{"extensions":[{"uri":"https://ext.example.org/x","params":{"big":1e400}}],');
      const long = card('Long Agent', 'long').replace('"capabilities":{', '"capabilities":{"extensions":[{"uri":"https://ext.example.org/x","params":{"id":12345678901234567890}}],');
      fs.writeFileSync(lines, `${twice}\n${huge}\n${long}\n`);
      const run = await runImport([lines], { dataDir, json: true });
      assert.equal(run.code, 1, run.err);
      const summary = summaryOf(run);
      assert.deepEqual([summary.created, summary.refused], [1, 2]);
      assert.deepEqual(
        summary.refusals.map((r) => [r.line, r.code, r.details.map((d) => [d.path, d.rule, d.location])]),
        [
          [1, 'VALIDATION_FAILED', [['/skills', 'duplicate-key', { file: lines, line: 1, column: twice.lastIndexOf('"skills"') + 1 }]]],
          [2, 'VALIDATION_FAILED', [['/capabilities/extensions/0/params/big', 'number-out-of-range', { file: lines, line: 2, column: huge.indexOf('"big"') + 1 }]]],
        ],
      );
      assert.match(summary.refusals[0]!.message, /"skills" is given twice in this object \(also at column 2\)/);
      assert.match(summary.refusals[1]!.message, /1e400 is beyond the largest number JSON here can hold/);
    }));

  test('a document that is not UTF-8 (a card saved as Latin-1, a UTF-16 file) is refused at its first such byte, as the registry refuses its upload (it was stored with U+FFFD for its letters); a UTF-16 JSON-lines file once, not line by line; a UTF-8 byte-order mark at any line', async () => {
    const work = tempDir();
    const dataDir = tempDir();
    try {
      const card = JSON.stringify(v1Card('Zurich Assistant', 'https://zurich.example.org/a2a'));
      const lines = path.join(work, 'latin1.jsonl');
      const utf8Line = JSON.stringify(v1Card('Utrecht Assistant', 'https://utrecht.example.org/a2a'));
      fs.writeFileSync(lines, Buffer.concat([Buffer.from(card.replace('Zurich', 'Z\u00fcrich'), 'latin1'), Buffer.from(`\n${utf8Line}\n`)]));
      const utf16 = path.join(work, 'utf16.json');
      fs.writeFileSync(utf16, Buffer.from(`\ufeff${card}`, 'utf16le'));
      // JSON lines saved as UTF-16 (Windows PowerShell's `>`), CRLF: split at its 0x0A bytes, each line after the first was refused on its own, one more for the byte after the last.
      const utf16Lines = path.join(work, 'utf16.jsonl');
      fs.writeFileSync(utf16Lines, Buffer.from(`\ufeff${card}\r\n${utf8Line}\r\n`, 'utf16le'));
      const run = await runImport([lines, utf16, utf16Lines], { dataDir, json: true });
      assert.equal(run.code, 1, run.err);
      const summary = summaryOf(run);
      assert.deepEqual([summary.imported, summary.refused], [1, 3]);
      const saveAsUtf8 = 'JSON is UTF-8: save it as UTF-8';
      assert.deepEqual(
        summary.refusals.map((r) => [r.line, r.code, r.message]),
        [
          [1, 'NOT_JSON', `${lines}:1:${card.indexOf('Zurich') + 2}: not valid JSON: byte 0xFC is not UTF-8 (saved as Latin-1 or Windows-1252?); ${saveAsUtf8}`],
          [undefined, 'NOT_JSON', `${utf16}:1:1: not valid JSON: it is UTF-16 (it begins with a UTF-16 byte-order mark); ${saveAsUtf8}`],
          [1, 'NOT_JSON', `${utf16Lines}:1:1: not valid JSON: it is UTF-16 (it begins with a UTF-16 byte-order mark); ${saveAsUtf8} (the rest of it was not read)`],
        ],
      );
      // UTF-8 with a byte-order mark, two such files joined (`cat a.jsonl b.jsonl`): the second
      // file's first line, line 2, was refused as "An agent card must be a JSON object; this document is undefined".
      const joined = path.join(work, 'joined.jsonl');
      const withBom = (name: string): string => `\ufeff${JSON.stringify(v1Card(name, `https://${name.toLowerCase()}.example.org/a2a`))}\r\n`;
      fs.writeFileSync(joined, withBom('Vaduz') + withBom('Valletta'));
      const both = await runImport([joined], { dataDir, json: true });
      assert.equal(both.code, 0, both.out);
      assert.deepEqual([summaryOf(both).created, summaryOf(both).refused], [2, 0]);
    } finally {
      removeTempDir(work);
      removeTempDir(dataDir);
    }
  });

  test('a line far longer than any registration (80 MB on stdin) is refused unread, in bounded memory; the next line is imported', async () => {
    ensureBuilt();
    const dataDir = tempDir();
    try {
      // The CLI as a user runs it, with a 40 MB heap: the line must stream past, never be held
      // (readline held it whole, and past ~512 MB died with "Invalid string length").
      const child = spawn(process.execPath, ['--max-old-space-size=40', BIN, 'import', '--json', '--data-dir', dataDir, '--owner', 'alice', '-'], { cwd: REPO_ROOT, stdio: 'pipe' });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      child.stdin.on('error', () => undefined); // the old CLI dies mid-line: its pipe closes
      const chunk = Buffer.alloc(1024 * 1024, 'a');
      const write = (data: Buffer | string): Promise<unknown> =>
        child.stdin.write(data) ? Promise.resolve() : Promise.race([new Promise((resolve) => child.stdin.once('drain', resolve)), exited]);
      await write('{"name": "');
      for (let i = 0; i < 80 && child.exitCode === null; i++) await write(chunk);
      await write('"}\r\n' + JSON.stringify(v1Card('Ibex Indexer', 'https://ibex.example.org/a2a')) + '\n');
      child.stdin.end();
      const code = await exited;
      assert.equal(code, 1, stderr);
      const summary = JSON.parse(stdout) as ImportJson;
      assert.deepEqual([summary.created, summary.refused], [1, 1]);
      const [refusal] = summary.refusals;
      assert.deepEqual([refusal!.file, refusal!.line, refusal!.code], ['standard input', 1, 'TOO_LARGE']);
      assert.match(refusal!.message, /^Line 1 is 8\d,\d{3},\d{3} bytes, more than one registration may carry \(65,536 bytes, REGISTRY_MAX_BODY_BYTES\)/);
    } finally {
      removeTempDir(dataDir);
    }
  });

  test('5,000 refusals in a 36 MB heap, their reader slow: printed as they come (--json: one document, in input order), none kept', async () => {
    ensureBuilt();
    const work = tempDir();
    try {
      // Each refusal (7 findings with hints) is 2 to 3.5 KB printed: 10 to 16 MB in all, which
      // the import kept until the end ("JavaScript heap out of memory"), and a pipe's writes are
      // queued in memory while its reader does not take them. 5,000 in 36 MB show it as 10,000 in
      // 45 MB (and 20,000 in 64 MB) did, at half the CPU: an import that keeps the refusals until
      // the end dies of "heap out of memory" with 5,000 in 30, 35 and 40 MB (--json and not); one
      // that writes without waiting for the reader dies in 30 to 45 MB with --json, and in some
      // runs without (its memory depends on how far it gets in the reader's pause). This import
      // passes with 5,000 in 28 MB (and dies in 25): 36 MB leaves a margin both ways.
      const total = 5_000;
      const lines = path.join(work, 'bad.jsonl');
      fs.writeFileSync(lines, '{"name":"x"}\n'.repeat(total));
      for (const json of [true, false]) {
        const dataDir = path.join(work, `data-${json}`);
        const child = spawn(process.execPath, ['--max-old-space-size=36', BIN, 'import', ...(json ? ['--json'] : []), '--data-dir', dataDir, lines], { cwd: REPO_ROOT, stdio: 'pipe' });
        const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
        const printed = json ? child.stdout : child.stderr;
        const other = json ? child.stderr : child.stdout;
        // The start, the end and the size of what it printed; what the other stream says whole.
        let head = '';
        let tail = '';
        let bytes = 0;
        printed.setEncoding('utf8').on('data', (d: string) => {
          if (head.length < 2000) head += d;
          tail = (tail + d).slice(-2000);
          bytes += d.length;
        });
        let said = '';
        other.setEncoding('utf8').on('data', (d: string) => (said += d));
        // A slow reader: nothing taken for the first two seconds.
        printed.pause();
        setTimeout(() => printed.resume(), 2000);
        assert.equal(await exited, 1, `${said}\n${tail}`);
        assert.ok(bytes > 7_500_000, `every refusal printed (${bytes} bytes)`);
        if (json) {
          assert.match(head, /^\{\n {2}"refusals": \[\n {4}\{\n {6}"file": ".*bad\.jsonl",\n {6}"line": 1,\n {6}"code": "UNSUPPORTED_VERSION"/);
          assert.match(tail, /"line": 5000,\n {12}"column": 1\n {10}\}\n {8}\}\n {6}\]\n {4}\}\n {2}\],\n {2}"engine": "sqlite",\n {2}"documents": 5000,[^]*"refused": 5000,[^]*\n\}\n$/);
        } else {
          assert.match(head, /^✗ refused .*bad\.jsonl:1: UNSUPPORTED_VERSION\n/);
          assert.match(tail, /bad\.jsonl:5000:1 {2}\/skills: required field "skills" is missing/);
          assert.match(said, /imported 0 of 5,000 documents .*: 0 created, 0 updated, 0 unchanged, 5,000 refused\n$/);
        }
      }
    } finally {
      removeTempDir(work);
    }
  });

  test('Ctrl-C or SIGTERM part way: it says how many were stored and to run it again (--json too), ends as the signal does; running it again finishes', async () => {
    ensureBuilt();
    const work = tempDir();
    try {
      // Given through a named pipe, the first 250 lines at first: it is part way when the signal
      // comes, for certain (at most 500 of 600 stored), and running it again stores the rest.
      const total = 600;
      const cards = Array.from({ length: total }, (_, i) => JSON.stringify(v1Card(`Quokka ${i}`, `https://quokka-${i}.example.org/a2a`)));
      for (const [signal, json] of [['SIGINT', false], ['SIGTERM', true]] as const) {
        const lines = path.join(work, `many-${signal}.jsonl`);
        const pipe = linesPipe(lines);
        const dataDir = path.join(work, `data-${signal}`);
        const database = path.join(dataDir, 'registry.db');
        const count = (): number => {
          if (!fs.existsSync(database)) return 0;
          const db = new Database(database, { readonly: true });
          try {
            return (db.prepare('SELECT count(*) AS n FROM entries').get() as { n: number }).n;
          } catch {
            return 0; // not created yet
          } finally {
            db.close();
          }
        };
        const child = spawn(process.execPath, [BIN, 'import', ...(json ? ['--json'] : []), '--owner', 'alice', '--batch-size', '100', '--data-dir', dataDir, lines], { cwd: REPO_ROOT, stdio: 'pipe' });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
        child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
        let stored: number;
        try {
          void pipe.write(cards.slice(0, 250));
          for (const deadline = Date.now() + 30_000; count() === 0 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
          // 250 lines more (about 190 KB), most of them read when this settles: the signal finds it
          // checking and storing them, as part way through a long import.
          await pipe.write(cards.slice(250, 500));
          child.kill(signal);
          // It printed nothing, and ended as the signal does (the shell's 130 or 143).
          assert.deepEqual(await exited, { code: null, signal }, stderr);
          stored = count();
        } finally {
          pipe.close();
        }
        assert.ok(stored > 0 && stored < total, `stopped part way (${stored} stored)`);
        const message =
          `the import was interrupted (${signal}): ${stored.toLocaleString('en-US')} documents stored before it stopped (a transaction commits whole or not at all: nothing is half-written); ` +
          'run the same import again to finish (what is stored already comes out unchanged).';
        assert.equal(stderr, `a2a-registry: ${message}\n`);
        if (json) assert.deepEqual(JSON.parse(stdout), { error: { code: 'INTERRUPTED', message, stored } });
        else assert.equal(stdout, '');
        // The same import again, its lines whole in a file of the same name this time.
        fs.rmSync(lines);
        fs.writeFileSync(lines, cards.join('\n'));
        const again = summaryOf(await runImport([lines], { dataDir, json: true }));
        assert.deepEqual([again.created + again.unchanged, again.unchanged, again.refused], [total, stored, 0]);
      }
    } finally {
      removeTempDir(work);
    }
  });

  test('the wrong input formats say what to do: pretty-printed JSON on stdin or in a *.jsonl file (once, not per line), an empty or blank JSON-lines file, an array of cards, JSON lines in a *.json file, half an MCP server document, a tools/list response or a list of tools alone, tools beside their server', async () => {
    ensureBuilt();
    const work = tempDir();
    try {
      const card = fs.readFileSync(path.join(REPO_ROOT, 'examples', 'agent-card.json'), 'utf8');
      assert.match(card, /^\{\n/, 'the example card is pretty-printed');
      // `cat card.json | a2a-registry import -`: it refused each of its 44 lines as not JSON.
      const dataDir = path.join(work, 'data');
      const child = spawn(process.execPath, [BIN, 'import', '--data-dir', dataDir, '-'], { cwd: REPO_ROOT, stdio: 'pipe' });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      child.stdin.on('error', () => undefined); // it stops reading after the first line
      child.stdin.end(card);
      assert.equal(await exited, 1, stderr);
      assert.equal(
        stderr,
        '✗ refused standard input:1: NOT_JSON\n' +
          '  standard input:1: not JSON lines: the line is "{" alone, as a pretty-printed JSON document begins; standard input holds one whole document per line, so the rest of it was not read.\n' +
          '  error   standard input:1:1  (document): one document per line expected [json-lines]\n' +
          '          hint: Pass its file instead (a2a-registry import card.json), or put each document on one line: jq -c . cards.json | a2a-registry import -\n' +
          // The blank line that sets the summary off from the refusals, on their stream.
          '\n',
      );
      assert.match(stdout, /^imported 0 of 1 document into /);

      const pretty = path.join(work, 'pretty.jsonl');
      fs.writeFileSync(pretty, card);
      const array = path.join(work, 'array.json');
      fs.writeFileSync(array, JSON.stringify([JSON.parse(card), JSON.parse(card)], null, 2));
      const prettyArray = path.join(work, 'array.ndjson');
      fs.writeFileSync(prettyArray, fs.readFileSync(array));
      // JSON lines in a *.json file: "unexpected text after the JSON value", with nothing on what to do.
      const linesAsJson = path.join(work, 'lines.json');
      fs.writeFileSync(linesAsJson, [v1Card('Xerus Xeroxer', 'https://xerus.example.org/a2a'), v1Card('Yapok Yeller', 'https://yapok.example.org/a2a')].map((c) => JSON.stringify(c)).join('\n') + '\n');
      const lines = path.join(work, 'fine.jsonl');
      fs.writeFileSync(lines, JSON.stringify(v1Card('Wombat Writer', 'https://wombat.example.org/a2a')) + '\n');
      // Half an MCP server document: taken for an agent card, refused with eight findings of a card's members, none the one missing.
      const halves = path.join(work, 'halves.jsonl');
      fs.writeFileSync(halves, [{ mcpServer: mcpServer('kiwi-files', 'https://kiwi.example.org/mcp') }, { toolspec: toolspec() }].map((d) => JSON.stringify(d)).join('\n') + '\n');
      // A saved tools/list response and a bare list of tools: "toolspec": <this document> led to a second refusal.
      const bareTools = path.join(work, 'tools.jsonl');
      fs.writeFileSync(bareTools, [{ jsonrpc: '2.0', id: 1, result: toolspec() }, toolspec().tools, { mcpServer: mcpServer('kea-files', 'https://kea.example.org/mcp'), ...toolspec() }].map((d) => JSON.stringify(d)).join('\n') + '\n');
      // A JSON-lines file holding no document (empty, or blank lines alone: a wrong path, an export
      // that failed): imported as 0 documents, exit 0, where an empty directory is refused.
      const empty = path.join(work, 'empty.jsonl');
      fs.writeFileSync(empty, '');
      const blank = path.join(work, 'blank.ndjson');
      fs.writeFileSync(blank, '\n  \n\n');
      const run = await runImport([empty, blank, pretty, array, prettyArray, linesAsJson, halves, bareTools, lines], { dataDir, json: true });
      assert.equal(run.code, 1);
      const summary = summaryOf(run);
      assert.deepEqual([summary.documents, summary.created, summary.refused], [12, 1, 11], 'one refusal per wrong source, the next file read');
      const said = summary.refusals.map((r) => [r.file, r.line, r.code, r.message, r.details.map((d) => d.hint)]);
      const emptyHint = 'Check that this is the file you meant (an export that failed leaves an empty one), or leave it out';
      assert.deepEqual(said, [
        [empty, undefined, 'NOT_JSON', `${empty}: no documents: the file is empty (0 bytes).`, [emptyHint]],
        [blank, undefined, 'NOT_JSON', `${blank}: no documents: it holds blank lines only.`, [emptyHint]],
        [
          pretty,
          1,
          'NOT_JSON',
          `${pretty}:1: not JSON lines: the line is "{" alone, as a pretty-printed JSON document begins; a JSON-lines file holds one whole document per line, so the rest of it was not read.`,
          [`A file of one document: name it *.json. Or put each document on one line: jq -c . ${pretty} > cards.jsonl, then import cards.jsonl`],
        ],
        [
          array,
          undefined,
          'VALIDATION_FAILED',
          'An agent card must be a JSON object; this document is an array (of 2 values).',
          [`To import the documents the array holds, put them one per line: jq -c '.[]' ${array} > cards.jsonl, then import cards.jsonl`],
        ],
        [
          prettyArray,
          1,
          'NOT_JSON',
          `${prettyArray}:1: not JSON lines: the line is "[" alone, as an array written over many lines (pretty-printed) begins; a JSON-lines file holds one whole document per line, so the rest of it was not read.`,
          [`Put each document on one line: jq -c '.[]' ${prettyArray} > cards.jsonl, then import cards.jsonl`],
        ],
        [
          linesAsJson,
          undefined,
          'NOT_JSON',
          `${linesAsJson}:2:1: not valid JSON: unexpected text after the JSON value`,
          [`Name it *.jsonl, which an import reads one document per line: mv ${linesAsJson} ${path.join(work, 'lines.jsonl')}, then import that`],
        ],
        [
          halves,
          1,
          'VALIDATION_FAILED',
          'An MCP server document needs both "mcpServer" and "toolspec"; this one has no "toolspec".',
          ['Add the server\'s tools (its tools/list result): {"mcpServer": {...}, "toolspec": {"tools": [...]}}.'],
        ],
        [
          halves,
          2,
          'VALIDATION_FAILED',
          'An MCP server document needs both "mcpServer" and "toolspec"; this one has no "mcpServer".',
          ['Add the server whose tools these are: {"mcpServer": {"name": "files", "url": "https://mcp.example.com/mcp"}, "toolspec": {...}}.'],
        ],
        ...[`<its "result">`, '{"tools": <this array>}'].map((toolspecIs, i) => [
          bareTools,
          i + 1,
          'VALIDATION_FAILED',
          'A toolspec on its own has no server to register: import MCP servers as {"mcpServer": {"name": ..., "url": ...}, "toolspec": {"tools": [...]}}.',
          [`Wrap it: {"mcpServer": {"name": "files", "url": "https://mcp.example.com/mcp"}, "toolspec": ${toolspecIs}}.`],
        ]),
        // Its tools beside its server: "a bare toolspec without its server", and the wrapping said put the server inside the toolspec.
        [
          bareTools,
          3,
          'VALIDATION_FAILED',
          'An MCP server document keeps its tools under "toolspec"; this one has "tools" beside "mcpServer".',
          ['Move it: {"mcpServer": {...}, "toolspec": {"tools": [...]}}.'],
        ],
      ]);
      assert.deepEqual(summary.refusals.slice(-5, -3).map((r) => r.details.map((d) => [d.path, d.rule])), [[['/toolspec', 'required']], [['/mcpServer', 'required']]]);
    } finally {
      removeTempDir(work);
    }
  });

  test('restore --force is refused while an import writes to the database, naming it (the import went on into the file moved aside); an import is refused while a restore runs', async () => {
    ensureBuilt();
    const work = tempDir();
    const bin = (args: string[]): Promise<Run> =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_ROOT, stdio: 'pipe' });
        let out = '';
        let err = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
        child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
        child.on('close', (code) => resolve({ code: code ?? -1, out, err }));
      });
    try {
      const dataDir = path.join(work, 'data');
      const database = path.join(dataDir, 'registry.db');
      const first = path.join(work, 'first.jsonl');
      fs.writeFileSync(first, JSON.stringify(v1Card('Xerus Xplorer', 'https://xerus.example.org/a2a')) + '\n');
      assert.equal((await bin(['import', '--data-dir', dataDir, first])).code, 0);
      const backup = path.join(work, 'backup.db');
      assert.equal((await bin(['backup', '--data-dir', dataDir, backup])).code, 0);

      // Given through a named pipe: the import is still running when the restore is tried, for
      // certain (the first 250 lines given, the rest after), and goes on storing after it.
      const total = 600;
      const cards = Array.from({ length: total }, (_, i) => JSON.stringify(v1Card(`Yak ${i}`, `https://yak-${i}.example.org/a2a`)));
      const lines = path.join(work, 'many.jsonl');
      const pipe = linesPipe(lines);
      const count = (): number => {
        const db = new Database(database, { readonly: true });
        try {
          return (db.prepare('SELECT count(*) AS n FROM entries').get() as { n: number }).n;
        } finally {
          db.close();
        }
      };
      let imported: Run;
      try {
        const importing = bin(['import', '--batch-size', '100', '--data-dir', dataDir, lines]);
        void pipe.write(cards.slice(0, 250));
        for (const deadline = Date.now() + 30_000; count() <= 1 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
        const restore = await bin(['restore', '--force', '--data-dir', dataDir, backup]);
        assert.equal(restore.code, 1, restore.err);
        assert.equal(
          restore.err,
          `a2a-registry: an a2a-registry import is writing to the SQLite database ${database} (it holds ${database}.import-lock): let it finish, or stop it and run it again once the backup is restored; then restore\n`,
        );
        await pipe.write(cards.slice(250));
        pipe.end();
        imported = await importing;
      } finally {
        pipe.close();
      }
      // It stopped with "the database file was replaced ... restart the registry", its documents in registry.db.replaced-*.
      assert.equal(imported.code, 0, imported.err);
      assert.match(imported.out, /^imported 600 documents .*: 600 created/, 'no refusal above it: no blank line first');
      assert.equal(count(), total + 1);
      assert.deepEqual(fs.readdirSync(dataDir).filter((f) => f.includes('replaced')), []);

      // The other way round: while a restore holds the lock, an import stores nothing.
      const { lockOutImports } = await import('../src/storage/sqlite/process-lock.js');
      const restoring = lockOutImports(database);
      try {
        const refused = await runImport([first], { dataDir, json: true });
        assert.equal(refused.code, 1, refused.err);
        const { error } = JSON.parse(refused.out) as { error: { code: string; message: string; stored: number } };
        assert.deepEqual(error, {
          code: 'STORAGE_UNAVAILABLE',
          message: `nothing was imported: a2a-registry restore is replacing the SQLite database ${database} (it holds ${database}.import-lock): run the import once the restore is done, against the restored database`,
          stored: 0,
        });
      } finally {
        restoring.close();
      }
    } finally {
      removeTempDir(work);
    }
  });

  test('a reader that goes away (`import ... 2>&1 | head`) stops the import, not as a success', async () => {
    ensureBuilt();
    const dataDir = tempDir();
    try {
      // Refusals go to stderr as they are found: their reader leaves after the first.
      const child = spawn(process.execPath, [BIN, 'import', '--data-dir', dataDir, '-'], { cwd: REPO_ROOT, stdio: 'pipe' });
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      child.stdout.resume();
      child.stderr.once('data', () => child.stderr.destroy());
      child.stdin.on('error', () => undefined); // it may stop before reading every line
      child.stdin.end('{"not": "a card"}\n'.repeat(5000));
      // It exited 0, as `search | head` does: a script with pipefail took the import as done.
      assert.equal(await exited, 1);
    } finally {
      removeTempDir(dataDir);
    }
  });

  test('symbolic links to files in a directory are imported (they were skipped without a word), each file once; a ConfigMap volume too', async () => {
    const work = tempDir();
    const dataDir = tempDir();
    try {
      // A ConfigMap volume: the files in a hidden timestamped directory, "..data" linking to it,
      // and one link per key at the top, which is all `ls` shows.
      const mounted = path.join(work, 'cards');
      const real = path.join(mounted, '..2026_12_02_20_00_00.000000001');
      fs.mkdirSync(real, { recursive: true });
      fs.writeFileSync(path.join(real, 'jackal.json'), JSON.stringify(v1Card('Jackal Journal', 'https://jackal.example.org/a2a')));
      fs.writeFileSync(path.join(real, 'more.jsonl'), JSON.stringify(v1Card('Kudu Keeper', 'https://kudu.example.org/a2a')) + '\n');
      fs.symlinkSync(path.basename(real), path.join(mounted, '..data'));
      for (const name of ['jackal.json', 'more.jsonl']) fs.symlinkSync(path.join('..data', name), path.join(mounted, name));

      const summary = summaryOf(await runImport([mounted], { dataDir, json: true }));
      assert.deepEqual([summary.created, summary.unchanged, summary.refused], [2, 0, 0], 'each card once');

      // A link beside a plain file is read too (it was skipped without a word, and a directory of
      // links alone was said to hold no *.json files).
      const mixed = path.join(work, 'mixed');
      fs.mkdirSync(mixed);
      fs.symlinkSync(path.join(real, 'jackal.json'), path.join(mixed, 'jackal.json'));
      fs.writeFileSync(path.join(mixed, 'lynx.json'), JSON.stringify(v1Card('Lynx Lookout', 'https://lynx.example.org/a2a')));
      const again = summaryOf(await runImport([mixed], { dataDir, json: true }));
      assert.deepEqual([again.created, again.unchanged], [1, 1]);
      fs.rmSync(path.join(mixed, 'lynx.json'));
      const linksOnly = await runImport([mixed], { dataDir, json: true });
      assert.equal(linksOnly.code, 0, linksOnly.out);
      assert.equal(summaryOf(linksOnly).unchanged, 1);
    } finally {
      removeTempDir(work);
      removeTempDir(dataDir);
    }
  });

  test('a file reached by two paths is read once: named twice, named beside the directory holding it, a hard link', () =>
    inTempDirs(async (work, dataDir) => {
      const dir = path.join(work, 'cards');
      fs.mkdirSync(dir);
      const lines = path.join(dir, 'both.jsonl');
      fs.writeFileSync(lines, [v1Card('Marmot Mapper', 'https://marmot.example.org/a2a'), v1Card('Newt Notary', 'https://newt.example.org/a2a')].map((c) => JSON.stringify(c)).join('\n') + '\n');
      fs.linkSync(lines, path.join(dir, 'hard-link.jsonl'));
      const run = await runImport([lines, dir, path.join(work, '.', 'cards', 'both.jsonl'), lines], { dataDir, json: true });
      assert.equal(run.code, 0, run.out);
      const summary = summaryOf(run);
      assert.deepEqual([summary.documents, summary.created, summary.unchanged], [2, 2, 0], 'each document read once');
    }));

  test('a symbolic link that points nowhere, in a directory or named, is a file that cannot be read: exit 2, the link and its target named, nothing imported; so is a named pipe or device in a directory, read when named', () =>
    inTempDirs(async (work, dataDir) => {
      const dir = path.join(work, 'cards');
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, 'a-okapi.json'), JSON.stringify(v1Card('Okapi Organiser', 'https://okapi.example.org/a2a')));
      fs.symlinkSync('../gone/puffin.json', path.join(dir, 'puffin.json'));
      const inDirectory = await runImport([dir], { dataDir });
      assert.equal(inDirectory.code, 2, inDirectory.err);
      assert.equal(
        inDirectory.err,
        `a2a-registry: cannot read ${path.join(dir, 'puffin.json')}: it is a symbolic link to ../gone/puffin.json (${path.join(work, 'gone', 'puffin.json')}), which does not exist; remove the link or restore its target\n`,
      );
      const named = await runImport([path.join(dir, 'puffin.json')], { dataDir, json: true });
      assert.equal(named.code, 2, named.out);
      assert.equal(JSON.parse(named.out).error.code, 'READ_ERROR');
      assert.match(JSON.parse(named.out).error.message, /puffin\.json: it is a symbolic link to \.\.\/gone\/puffin\.json/);
      assert.ok(!fs.existsSync(path.join(dataDir, 'registry.db')), 'nothing was imported');

      // A named pipe (or a link to a device) with an importable name in the directory: it was
      // skipped without a word. Not read (a pipe may wait for ever for a writer): said, as exit 2.
      fs.rmSync(path.join(dir, 'puffin.json'));
      const pipe = path.join(dir, 'quokka.jsonl');
      const writer = linesPipe(pipe);
      try {
        const inPipe = await runImport([dir], { dataDir });
        assert.equal(inPipe.code, 2, inPipe.err);
        assert.equal(
          inPipe.err,
          `a2a-registry: cannot read ${pipe}: it is a named pipe, not a file; an import reads the files of a directory, not its pipes, devices or sockets ` +
            '(a pipe may wait for ever for a writer): remove it or move it out of the directory, or, to read it, name it on the command line too\n',
        );
        assert.ok(!fs.existsSync(path.join(dataDir, 'registry.db')), 'nothing was imported');
        // Named on the command line too: read, once.
        // Settles once the import opened the pipe and read it.
        const written = writer.write([JSON.stringify(v1Card('Quokka Quoter', 'https://quokka.example.org/a2a'))]);
        writer.end();
        // Checked on the main thread: a pipe would start the checks' worker (0.4 s or more) for two documents.
        const config = loadConfig({ REGISTRY_DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
        const alsoNamed = await runImportIn(config, [dir, pipe], { owner: 'alice', batchSize: 500, thread: 'main' });
        await written;
        assert.deepEqual([alsoNamed.created, alsoNamed.refused], [2, 0]);
      } finally {
        writer.close();
      }
      fs.rmSync(pipe);
      fs.symlinkSync('/dev/null', path.join(dir, 'null.json'));
      const device = await runImport([dir], { dataDir, json: true });
      assert.equal(device.code, 2, device.out);
      assert.match(JSON.parse(device.out).error.message, /null\.json: it is a character device, not a file/);
    }));

  test('storage that cannot be opened (a data directory that is a file, or below one) is STORAGE_UNAVAILABLE with --json, as the README says', () =>
    inTempDirs(async (work, dataDir) => {
      const lines = path.join(work, 'one.jsonl');
      fs.writeFileSync(lines, JSON.stringify(v1Card('Sable Searcher', 'https://sable.example.org/a2a')) + '\n');
      const file = path.join(dataDir, 'a-file');
      fs.writeFileSync(file, 'not a directory');
      for (const [where, why] of [
        [file, /is a file, not a directory/],
        [path.join(file, 'data'), /cannot open the database file/],
      ] as const) {
        const run = await runImport([lines], { dataDir: where, json: true });
        assert.equal(run.code, 1, run.err);
        const { error } = JSON.parse(run.out) as { error: { code: string; message: string; stored: number } };
        // It said IMPORT_FAILED: only an unreachable PostgreSQL server was STORAGE_UNAVAILABLE.
        assert.equal(error.code, 'STORAGE_UNAVAILABLE', error.message);
        assert.equal(error.stored, 0);
        assert.match(error.message, /^nothing was imported: /);
        assert.match(error.message, why);
        assert.match(error.message, /Check that --data-dir \(REGISTRY_DATA_DIR\)/);
      }
      // A registry.db that is no SQLite database at all (a text file): said as `a2a-registry check`
      // says it. It was called damaged (SQLITE_NOTADB), with the disk to blame.
      const textDir = path.join(dataDir, 'text');
      fs.mkdirSync(textDir);
      fs.writeFileSync(path.join(textDir, 'registry.db'), 'this is not a database\n');
      const text = await runImport([lines], { dataDir: textDir, json: true });
      assert.equal(text.code, 1, text.err);
      const { error } = JSON.parse(text.out) as { error: { code: string; message: string; stored: number } };
      assert.deepEqual([error.code, error.stored], ['STORAGE_UNAVAILABLE', 0]);
      let checked = '';
      assert.equal(await checkCommand({ dataDir: textDir, quick: true, json: false }, { out: (s) => (checked += s), err: (s) => (checked += s), color: false }), 1);
      assert.equal(`a2a-registry: nothing was imported: ${error.message.replace(/^nothing was imported: /, '')}\n`, text.err);
      assert.equal(checked, `a2a-registry: ${error.message.replace(/^nothing was imported: /, '')}\n`, 'the words of check');
      assert.match(checked, /registry\.db is not an SQLite database \(it does not begin with "SQLite format 3"\), so not a registry database: restore it from a backup/);
      // A database a newer release wrote: the import's refusal, not the registry's start's ("Refusing to start ...").
      const newerDir = path.join(dataDir, 'newer');
      fs.mkdirSync(newerDir);
      const newer = new Database(path.join(newerDir, 'registry.db'));
      newer.exec('CREATE TABLE registry_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
      newer.prepare("INSERT INTO registry_migrations (version, name, applied_at) VALUES (99, 'from the future', '2099-01-01T00:00:00Z')").run();
      newer.close();
      const refused = await runImport([lines], { dataDir: newerDir, json: true });
      assert.equal(refused.code, 1, refused.err);
      const tooNew = (JSON.parse(refused.out) as { error: { code: string; message: string; stored: number } }).error;
      assert.deepEqual([tooNew.code, tooNew.stored], ['STORAGE_UNAVAILABLE', 0]);
      assert.equal(
        tooNew.message,
        `nothing was imported: the registry database at ${path.join(newerDir, 'registry.db')} has schema version 99, but this registry release only knows versions up to ${SQLITE_SCHEMA_VERSION}. ` +
          'It was written by a newer release: import with that release (or a newer one). Nothing was written into it',
      );
    }));

  test('a newer release does not upgrade the schema of a database an older release\'s registry is running on (that registry would not start on it again): refused, nothing written; with the registry stopped, it is upgraded', () =>
    inTempDirs(async (work, dataDir) => {
      const file = path.join(dataDir, 'registry.db');
      const older = new Database(file);
      older.exec(fs.readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'upgrade', '3ed8ca1-registry.sql'), 'utf8'));
      older.close();
      const versionOf = (): number => {
        const db = new Database(file, { readonly: true });
        try {
          return (db.prepare('SELECT max(version) AS v FROM registry_migrations').get() as { v: number }).v;
        } finally {
          db.close();
        }
      };
      const lines = path.join(work, 'one.jsonl');
      fs.writeFileSync(lines, JSON.stringify(v1Card('Tenrec Tracker', 'https://tenrec.example.org/a2a')) + '\n');
      // The running registry's lock (an older release's registry holds it as this one's does).
      const registryLock = lockForThisProcess(file);
      try {
        const run = await runImport([lines], { dataDir, json: true });
        assert.equal(run.code, 1, run.err);
        const { error } = JSON.parse(run.out) as { error: { code: string; message: string; stored: number } };
        assert.deepEqual([error.code, error.stored], ['STORAGE_UNAVAILABLE', 0]);
        assert.equal(
          error.message,
          `nothing was imported: the registry database at ${file} has schema version 6, older than this release's ${SQLITE_SCHEMA_VERSION}, and a registry is running on it ` +
            `(it holds ${file}.lock): importing would upgrade the schema under that registry, of an older release, which would then not start on the database again. ` +
            "Nothing was written into it. Import with the running registry's release, or stop the registry, import, and start this release on the database",
        );
        assert.equal(versionOf(), 6, 'the schema is as it was');
      } finally {
        registryLock.close();
      }
      const stopped = await runImport([lines], { dataDir, json: true });
      assert.equal(stopped.code, 0, stopped.out);
      assert.equal(versionOf(), SQLITE_SCHEMA_VERSION);
    }));

  test('an emptied (0-byte) database file where a registry had data is refused as the registry\'s start is, naming the evidence (the saved index, in REGISTRY_INDEX_SNAPSHOT_DIR too, or the write-ahead log) and what to do; nothing is written', () =>
    inTempDirs(async (work, dataDir) => {
      const snapshotDir = tempDir();
      const saved = process.env.REGISTRY_INDEX_SNAPSHOT_DIR;
      process.env.REGISTRY_INDEX_SNAPSHOT_DIR = snapshotDir;
      try {
        const registry = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir, REGISTRY_INDEX_SNAPSHOT_DIR: snapshotDir });
        try {
          const alice = await sdkClient(registry.url, { token: TOKENS.alice });
          resultOf(await op(alice, { register: { agentCard: v1Card('Emptied Import', 'https://emptied-import.example.org/a2a') } }));
        } finally {
          await registry.close();
        }
        const file = path.join(dataDir, 'registry.db');
        const snapshot = path.join(snapshotDir, 'search-index.snapshot');
        const index = fs.readFileSync(snapshot);
        // As a failed copy, a full disk or a truncation leaves it.
        fs.truncateSync(file, 0);
        for (const extra of ['-wal', '-shm']) fs.rmSync(`${file}${extra}`, { force: true });
        const lines = path.join(work, 'one.jsonl');
        fs.writeFileSync(lines, JSON.stringify(v1Card('Wombat Finder', 'https://wombat.example.org/a2a')) + '\n');
        const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        // It opened the empty file as a new database and stored the document there: "1 created".
        const run = await runImport([lines], { dataDir, json: true });
        assert.equal(run.code, 1, run.err);
        const { error } = JSON.parse(run.out) as { error: { code: string; message: string; stored: number } };
        assert.deepEqual([error.code, error.stored], ['STORAGE_UNAVAILABLE', 0]);
        assert.match(
          error.message,
          new RegExp(`^nothing was imported: the database file ${escaped(file)} is empty \\(0 bytes\\), but the saved search index ${escaped(snapshot)} is of a database whose change log had reached position [1-9]\\d* \\(1 entry, saved `),
        );
        assert.match(error.message, /a failed copy, a full disk or a truncation leaves an empty file\), and importing would begin an empty registry holding the imported documents alone\. Nothing was changed\./);
        assert.match(error.message, new RegExp(`Restore the database from a backup \\(a2a-registry restore --force <backup>\\), or, to import into an empty registry on purpose, remove ${escaped(file)} and ${escaped(snapshot)}\\.$`));
        assert.equal(fs.statSync(file).size, 0, 'the database file is as it was');
        assert.deepEqual(fs.readFileSync(snapshot), index, 'the saved index is as it was');

        // A write-ahead log with something in it is evidence too (SQLite would delete it).
        fs.rmSync(snapshot);
        fs.writeFileSync(`${file}-wal`, Buffer.alloc(4096, 1));
        const walRun = await runImport([lines], { dataDir });
        assert.equal(walRun.code, 1);
        assert.match(walRun.err, new RegExp(`^a2a-registry: nothing was imported: the database file ${escaped(file)} is empty \\(0 bytes\\), but its write-ahead log ${escaped(file)}-wal holds 4096 bytes .* remove ${escaped(file)} and ${escaped(file)}-wal\\.\\n$`));
        assert.equal(fs.statSync(`${file}-wal`).size, 4096, 'the write-ahead log is as it was');
        assert.equal(fs.statSync(file).size, 0);

        // A new data directory: an empty file (created, never written) is imported into.
        fs.rmSync(`${file}-wal`);
        const fresh = await runImport([lines], { dataDir, json: true });
        assert.equal(fresh.code, 0, fresh.err);
        assert.equal(summaryOf(fresh).created, 1);
      } finally {
        if (saved === undefined) delete process.env.REGISTRY_INDEX_SNAPSHOT_DIR;
        else process.env.REGISTRY_INDEX_SNAPSHOT_DIR = saved;
        removeTempDir(snapshotDir);
      }
    }));

  test('reads the settings it uses alone: the image\'s HOST=0.0.0.0 without PUBLIC_URL, a bad PORT or a missing REGISTRY_ADMIN_TOKEN_FILE, which only serving needs, do not stop it; an empty DATABASE_URL is said', () =>
    inTempDirs(async (work, dataDir) => {
      const serverOnly: Record<string, string | undefined> = { HOST: '0.0.0.0', PUBLIC_URL: undefined, PORT: 'abc', REGISTRY_ADMIN_TOKEN_FILE: '/missing/admin-token', DATABASE_URL: '' };
      const saved = Object.fromEntries(Object.keys(serverOnly).map((name) => [name, process.env[name]]));
      const setEnv = (values: Record<string, string | undefined>): void => {
        for (const [name, value] of Object.entries(values)) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      };
      setEnv(serverOnly);
      try {
        const card = path.join(work, 'gnu.json');
        fs.writeFileSync(card, JSON.stringify(v1Card('Gnu Tracker', 'https://gnu.example.org/a2a')));
        const run = await runImport([card], { dataDir, json: true });
        assert.equal(run.code, 0, run.err);
        assert.equal(summaryOf(run).created, 1);
        assert.equal(run.err, `a2a-registry: warning: DATABASE_URL is set but empty: taken as unset, so SQLite in ${dataDir} (an unset shell variable?)\n`);
      } finally {
        setEnv(saved);
      }
    }));

  test('exempt from the entry quota (REGISTRY_MAX_ENTRIES_PER_OWNER), as an admin is, whatever --owner; REGISTRY_MAX_REVISIONS caps the revisions kept', () =>
    inTempDirs(async (work, dataDir) => {
      const saved = { entries: process.env.REGISTRY_MAX_ENTRIES_PER_OWNER, revisions: process.env.REGISTRY_MAX_REVISIONS };
      process.env.REGISTRY_MAX_ENTRIES_PER_OWNER = '1';
      process.env.REGISTRY_MAX_REVISIONS = '2';
      try {
        const lines = path.join(work, 'three.jsonl');
        fs.writeFileSync(lines, ['Tapir', 'Urial', 'Vicuna'].map((name) => JSON.stringify(v1Card(`${name} Tracker`, `https://${name.toLowerCase()}.example.org/a2a`))).join('\n'));
        const first = summaryOf(await runImport([lines], { dataDir, owner: 'alice', json: true }));
        assert.deepEqual([first.created, first.refused], [3, 0], 'three entries for alice, over her quota of 1');
        for (const version of ['2.0.0', '3.0.0', '4.0.0']) {
          const card = path.join(work, `tapir-${version}.json`);
          fs.writeFileSync(card, JSON.stringify({ ...v1Card('Tapir Tracker', 'https://tapir.example.org/a2a'), version }));
          assert.equal(summaryOf(await runImport([card], { dataDir, owner: 'alice', json: true })).updated, 1);
        }
      } finally {
        for (const [name, value] of [['REGISTRY_MAX_ENTRIES_PER_OWNER', saved.entries], ['REGISTRY_MAX_REVISIONS', saved.revisions]] as const) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      }
      const db = new Database(path.join(dataDir, 'registry.db'), { readonly: true });
      try {
        const revisions = db.prepare("SELECT r.revision FROM entry_revisions r JOIN entries e ON e.id = r.entry_id WHERE e.identity_url LIKE '%tapir%' ORDER BY r.revision").all() as { revision: number }[];
        assert.deepEqual(revisions.map((r) => r.revision), [3, 4], 'the last two of four revisions kept');
      } finally {
        db.close();
      }
    }));

  test('usage: an unreadable source is exit 2 and nothing is imported; one met part way says what was stored before it', async () => {
    const dataDir = tempDir();
    try {
      const run = await runImport([path.join(dataDir, 'missing.jsonl')], { dataDir });
      assert.equal(run.code, 2);
      assert.match(run.err, /cannot read .*missing\.jsonl: no such file/);
      // A device has no size to check first: it was read for ever (`import /dev/zero`); now only past the longest request.
      const device = await runImport(['/dev/zero'], { dataDir });
      assert.equal(device.code, 2, device.err);
      assert.match(device.err, /^a2a-registry: \/dev\/zero is over [\d,]+ bytes; it was not read further: is it the right file\?\n$/);
      // Met part way, after batches were stored: it said the same, as if nothing had been imported.
      const lines = path.join(dataDir, 'before.jsonl');
      fs.writeFileSync(lines, ['Kudu', 'Lemur', 'Mara', 'Nilgai', 'Oribi'].map((n) => JSON.stringify(v1Card(n, `https://${n.toLowerCase()}.example.org/a2a`))).join('\n') + '\n');
      const partWay = await runImport([lines, '/dev/zero'], { dataDir, batchSize: 2, json: true });
      assert.equal(partWay.code, 2, partWay.err);
      const { error } = JSON.parse(partWay.out) as { error: { code: string; message: string; stored: number } };
      assert.equal(error.code, 'READ_ERROR');
      assert.equal(error.stored, 4, 'the two batches read before it');
      assert.match(error.message, /^\/dev\/zero is over [\d,]+ bytes; .* The import stopped there, with 4 documents stored before it, which stay stored; fix or remove that source and run the same import again/);
      assert.equal(partWay.err, `a2a-registry: ${error.message}\n`);
      // --data-dir beside a PostgreSQL URL: as for serve, the URL decides, so the directory named
      // would be ignored (it was, silently: the entries went to PostgreSQL). Refused before
      // anything is read or connected to (the source is missing, the server is not there).
      const both = await runImport([path.join(dataDir, 'missing.jsonl')], { dataDir, databaseUrl: 'postgres://registry:secret@127.0.0.1:1/registry' });
      assert.equal(both.code, 2);
      assert.equal(
        both.err,
        'a2a-registry: warning: --database-url carries a password, which every user of this machine can read in the process list (ps) while the command runs, ' +
          'and the shell may keep in its history: give the URL in DATABASE_URL, or on the first line of a file only this user reads, named by DATABASE_URL_FILE, instead\n' +
          `a2a-registry: --data-dir names the SQLite database to import into, but --database-url (postgres://registry:***@127.0.0.1:1/registry) selects PostgreSQL, as it does for serve, ` +
          `and the data directory would be ignored: drop --data-dir to import into PostgreSQL, or drop --database-url to import into the SQLite database in ${dataDir}\n`,
      );
      const exported = process.env.DATABASE_URL;
      process.env.DATABASE_URL = 'postgres://registry@127.0.0.1:1/registry';
      try {
        const fromEnvironment = await runImport([path.join(dataDir, 'missing.jsonl')], { dataDir, json: true });
        assert.equal(fromEnvironment.code, 2);
        assert.match(JSON.parse(fromEnvironment.out).error.message, /but DATABASE_URL \(postgres:\/\/registry@127\.0\.0\.1:1\/registry\) selects PostgreSQL.*or unset DATABASE_URL to import into the SQLite database in /);
      } finally {
        if (exported === undefined) delete process.env.DATABASE_URL;
        else process.env.DATABASE_URL = exported;
      }
      // From DATABASE_URL_FILE: named so, not as DATABASE_URL (not set, whose unsetting changed nothing).
      const urlFile = path.join(dataDir, 'database-url');
      fs.writeFileSync(urlFile, 'postgres://registry:secret@127.0.0.1:1/registry\n', { mode: 0o600 });
      const exportedFile = process.env.DATABASE_URL_FILE;
      process.env.DATABASE_URL_FILE = urlFile;
      try {
        const fromFile = await runImport([path.join(dataDir, 'missing.jsonl')], { dataDir });
        assert.equal(fromFile.code, 2);
        assert.match(fromFile.err, /but DATABASE_URL_FILE \(postgres:\/\/registry:\*\*\*@127\.0\.0\.1:1\/registry\) selects PostgreSQL.*or unset DATABASE_URL_FILE to import into the SQLite database in /);
      } finally {
        if (exportedFile === undefined) delete process.env.DATABASE_URL_FILE;
        else process.env.DATABASE_URL_FILE = exportedFile;
      }
    } finally {
      removeTempDir(dataDir);
    }
  });
});

describe('import by a user who may not read every source', () => {
  // An operator's import reads files others wrote. A directory below the source it may not list
  // was "nothing was imported: EACCES: permission denied, scandir" (exit 1, as if storage had
  // failed); a file it may not read stopped the import at its turn, after the documents before
  // it were stored, reported as a usage error. Both are now found before anything is stored.
  // As root (who reads everything) the CLI runs as nobody; as anyone else the files are made unreadable.
  test('an unreadable directory or file below the source is exit 2, named, and nothing is imported', async () => {
    ensureBuilt();
    const asRoot = process.getuid?.() === 0;
    const work = tempDir();
    fs.chmodSync(work, 0o755);
    const dataDir = path.join(work, 'data');
    fs.mkdirSync(dataDir, { mode: 0o777 });
    fs.chmodSync(dataDir, 0o777);
    const source = (name: string, unreadable: 'directory' | 'file'): { dir: string; hidden: string } => {
      const dir = path.join(work, name);
      fs.mkdirSync(dir, { mode: 0o755 });
      fs.writeFileSync(path.join(dir, 'a-readable.json'), JSON.stringify(v1Card('Readable Ray', `https://${name}-ray.example.org/a2a`)));
      const hidden = path.join(dir, unreadable === 'directory' ? 'secret' : 'z-secret.json');
      if (unreadable === 'directory') fs.mkdirSync(hidden, { mode: 0o700 });
      else fs.writeFileSync(hidden, JSON.stringify(v1Card('Secret Seal', `https://${name}-seal.example.org/a2a`)), { mode: 0o600 });
      if (!asRoot) fs.chmodSync(hidden, 0o000);
      return { dir, hidden };
    };
    const run = (dir: string): Promise<{ code: number | null; stderr: string }> => {
      const child = spawn(process.execPath, [BIN, 'import', '--data-dir', dataDir, dir], { cwd: REPO_ROOT, stdio: 'pipe', ...(asRoot ? { uid: 65534, gid: 65534 } : {}) });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.stdout.resume();
      return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
    };
    try {
      const sources = [source('with-directory', 'directory'), source('with-file', 'file')];
      const runs = await Promise.all(sources.map((s) => run(s.dir)));
      runs.forEach((r, i) => {
        assert.equal(r.code, 2, r.stderr);
        assert.equal(r.stderr, `a2a-registry: cannot read ${sources[i]!.hidden}: permission denied\n`);
      });
      assert.ok(!fs.existsSync(path.join(dataDir, 'registry.db')), 'nothing was stored');
    } finally {
      if (!asRoot) for (const s of ['with-directory/secret', 'with-file/z-secret.json']) fs.chmodSync(path.join(work, s), 0o700);
      removeTempDir(work);
    }
  });
});

describe('import run as root', () => {
  // `sudo a2a-registry import` beside a registry running as its own user: the database and the
  // import lock it created were root's (0600), so the registry did not start on a database the
  // import created, and every later import as the registry's user failed on the lock.
  test('the files it creates beside the database are the owner\'s of the database, or of the data directory when there is none', async (t) => {
    if (process.getuid?.() !== 0) return t.skip('giving files to another user needs root');
    const user = 65534;
    await inTempDirs(async (work, dataDir) => {
      fs.chownSync(dataDir, user, user);
      const file = path.join(work, 'cards.jsonl');
      fs.writeFileSync(file, `${JSON.stringify(v1Card('Rooted Rita', 'https://rooted-rita.example.org/a2a'))}\n`);
      const notTheUsers = () => fs.readdirSync(dataDir).filter((f) => fs.statSync(path.join(dataDir, f)).uid !== user || fs.statSync(path.join(dataDir, f)).gid !== user);
      // A data directory the registry's user made, no database in it yet.
      const first = await runImport([file], { dataDir });
      assert.equal(first.code, 0, first.err);
      assert.deepEqual(fs.readdirSync(dataDir).sort(), ['registry.db', 'registry.db.import-lock']);
      assert.deepEqual(notTheUsers(), [], 'the database and the import lock it created');
    });
  });
});

describe('import beside a running SQLite registry', () => {
  test('the registry keeps answering promptly, and its own registrations succeed within its lock wait, while the import holds the write lock again and again', async () => {
    ensureBuilt();
    const work = tempDir();
    const dataDir = tempDir();
    // A registration waits this long for the import's lock, then fails (STORAGE_UNAVAILABLE,
    // locked). An import transaction of a whole 5,000-document batch held it for seconds (past
    // the 5 s the wait was, on a loaded machine); one ends after half a second now.
    const lockWaitMs = 2000;
    const registry = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir, REGISTRY_SQLITE_LOCK_WAIT_MS: String(lockWaitMs) });
    try {
      const file = path.join(work, 'bulk.jsonl');
      // Two batches of --batch-size 5,000 (the boundary is the point, below), the first one many of
      // the import's half-second transactions: the lock is taken again and again while the probes
      // run. (20,000 proved no more, at three times the time.)
      const count = 6_000;
      const lines = Array.from({ length: count }, (_, i) => JSON.stringify(v1Card(`Bulk Agent ${i}`, `https://bulk-${i}.example.org/a2a`)));
      // One agent twice, at the end of the first batch and at the start of the second: the earlier
      // line is stored and the later refused, whichever batch is stored first (the later line used
      // to be stored over it, a revision more at every run of the same import).
      const twice = (description: string) => JSON.stringify({ ...v1Card('Twice Agent', 'https://twice.example.org/a2a'), description });
      lines[4999] = twice('The earlier line.');
      lines[5000] = twice('The later line.');
      fs.writeFileSync(file, lines.join('\n') + '\n');
      const client = await sdkClient(registry.url, { token: TOKENS.bob });
      // Large transactions: each holds SQLite's write lock for seconds.
      const child = spawn(process.execPath, [BIN, 'import', '--json', '--batch-size', '5000', '--data-dir', dataDir, '--owner', 'alice', file], { cwd: REPO_ROOT, stdio: 'pipe' });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      let stdout = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      let running = true;
      void exited.then(() => (running = false));
      // Probe while the import runs, every 20 ms: the registry's health and searches answer
      // all along, and its registrations wait their turn for the lock and succeed. (That its
      // event loop is never held waiting for the lock is shown below, with the lock held.)
      // Back to back, the probes took as much CPU as the import, which they slowed threefold.
      const answered = { health: 0, search: 0 };
      const probe = async (name: keyof typeof answered, request: () => Promise<unknown>) => {
        while (running) {
          await request();
          answered[name]++;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      const registrations: WireJson[] = [];
      await Promise.all([
        probe('health', async () => assert.equal((await fetch(`${registry.url}/healthz`)).status, 200)),
        probe('search', async () => resultOf(await op(client, { search: { query: 'weather' } }))),
        (async () => {
          for (let i = 0; running; i++) {
            registrations.push(await op(client, { register: { agentCard: v1Card(`Online Agent ${i}`, `https://online-${i}.example.org/a2a`) } }));
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        })(),
      ]);
      assert.equal(await exited, 1, stderr);
      const summary = JSON.parse(stdout) as ImportJson;
      assert.deepEqual(summary.refusals.map((r) => [r.line, r.code]), [[5001, 'DUPLICATE_IDENTITY']]);
      assert.equal(summary.created, count - 1);
      assert.ok(answered.health > 0 && answered.search > 0, `answered during the import: ${JSON.stringify(answered)}`);
      assert.ok(registrations.length >= 3, `registrations were tried during the import (${registrations.length})`);
      for (const task of registrations) assert.equal(task.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(task.status));
      const db = new Database(path.join(dataDir, 'registry.db'), { readonly: true });
      try {
        const stored = db.prepare(`SELECT document_text FROM entry_revisions WHERE document_text LIKE '%Twice Agent%'`).all() as { document_text: string }[];
        assert.deepEqual(stored.map((r) => (JSON.parse(r.document_text) as { description: string }).description), ['The earlier line.']);
      } finally {
        db.close();
      }
      // The wait is the setting's: a lock held longer than it fails a registration then, not after
      // the default 5 s. Meanwhile the registry's event loop (this test's too: it runs in this
      // process) goes on turning: it waits for the lock from a timer. Counted in turns of a 1 ms
      // timer and in answers, not in milliseconds, so a loaded machine slows it without failing
      // it; a blocking busy wait would hold the loop still for the whole wait (a turn or two).
      const holder = new Database(path.join(dataDir, 'registry.db'));
      holder.exec('BEGIN IMMEDIATE');
      const released = setTimeout(() => holder.exec('ROLLBACK'), lockWaitMs + 1000);
      try {
        const started = performance.now();
        let waiting = true;
        let turns = 0;
        const turn = (): void => {
          if (!waiting) return;
          turns++;
          setTimeout(turn, 1);
        };
        const refusal = op(client, { register: { agentCard: v1Card('Late Agent', 'https://late.example.org/a2a') } })
          .then(
            () => assert.fail('registered while the lock was held'),
            (error: unknown) => error as Error,
          )
          .finally(() => (waiting = false));
        turn();
        let healthy = 0;
        while (waiting) {
          assert.equal((await fetch(`${registry.url}/healthz`)).status, 200);
          if (waiting) healthy++;
        }
        const refused = await refusal;
        const waited = performance.now() - started;
        assert.match(refused.message, /locked by another process's write/);
        assert.ok(waited >= lockWaitMs && waited < 5000, `failed after ${Math.round(waited)} ms`);
        assert.ok(turns >= 50 && healthy >= 1, `while the registration waited ${Math.round(waited)} ms for the lock, the event loop turned ${turns} times and /healthz answered ${healthy} times`);
      } finally {
        clearTimeout(released);
        if (holder.inTransaction) holder.exec('ROLLBACK');
        holder.close();
      }
    } finally {
      await registry.close();
      removeTempDir(work);
      removeTempDir(dataDir);
    }
  });
});

describe('import into PostgreSQL', () => {
  test('a database that cannot be reached: with --json, an {"error"} document on stdout', async () => {
    const dataDir = tempDir();
    try {
      const run = await runImport([path.join(writeSources(dataDir).cards)], { databaseUrl: `postgres://registry@127.0.0.1:${await freePort()}/registry`, json: true });
      assert.equal(run.code, 1);
      const { error } = JSON.parse(run.out) as { error: { code: string; message: string; stored: number } };
      assert.equal(error.code, 'STORAGE_UNAVAILABLE');
      assert.equal(error.stored, 0, 'the count stored, as when it stops part way');
      assert.match(error.message, /^nothing was imported: Cannot connect to postgres:\/\/registry@127\.0\.0\.1:\d+\/registry: connect ECONNREFUSED/);
    } finally {
      removeTempDir(dataDir);
    }
  });

  test('a database that does not exist: STORAGE_UNAVAILABLE, nothing imported', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const work = tempDir();
    try {
      const url = new URL(postgres.server.url);
      url.pathname = '/no_such_database';
      const run = await runImport([writeSources(work).cards], { databaseUrl: url.href, json: true });
      assert.equal(run.code, 1, run.err);
      const { error } = JSON.parse(run.out) as { error: { code: string; message: string; stored: number } };
      assert.equal(error.code, 'STORAGE_UNAVAILABLE', error.message);
      assert.equal(error.stored, 0);
      assert.match(error.message, /^nothing was imported: .*no_such_database/);
    } finally {
      removeTempDir(work);
    }
  });

  test('the database stops part way: what was stored, and to run it again, is said (--json too); running it again finishes', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    if (!postgres.server.controllable) return t.skip('needs a PostgreSQL server this test can stop');
    const databaseUrl = await postgres.server.createDatabase('import_stop');
    const work = tempDir();
    const count = async (): Promise<number> => {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM entries')).rows[0]!.n);
      } finally {
        await client.end();
      }
    };
    try {
      // Given through a named pipe: 120 lines first, the server stopped once some are stored (part
      // way for certain: at most 120 of 400), then the rest, which it cannot store.
      const total = 400;
      const cards = Array.from({ length: total }, (_, i) => JSON.stringify(v1Card(`Marmot ${i}`, `https://marmot-${i}.example.org/a2a`)));
      const lines = path.join(work, 'many.jsonl');
      const pipe = linesPipe(lines);
      let run: Run;
      try {
        const running = runImport([lines], { databaseUrl, batchSize: 50, json: true });
        void pipe.write(cards.slice(0, 120));
        let stored = 0;
        for (const deadline = Date.now() + 30_000; stored === 0 && Date.now() < deadline; ) {
          stored = await count().catch(() => 0);
          if (stored === 0) await new Promise((r) => setTimeout(r, 20));
        }
        assert.ok(stored > 0 && stored < total, `stopped part way (${stored} stored)`);
        await postgres.server.halt();
        try {
          void pipe.write(cards.slice(120));
          pipe.end();
          run = await running;
        } finally {
          await postgres.server.resume();
        }
      } finally {
        pipe.close();
      }
      assert.equal(run.code, 1, run.out);
      const { error } = JSON.parse(run.out) as { error: { code: string; message: string; stored: number } };
      assert.equal(error.code, 'STORAGE_UNAVAILABLE');
      // The server stops under a batch (its connection ended: 57P01, the batch rolled back), while
      // one commits (whether it landed cannot be known, and is said), or between two (none can be made).
      assert.match(
        error.message,
        /^the import stopped: (The database connection was lost: .*(the write was rolled back|the write was being committed, and may have been stored or not)|Storage is unavailable: ).*\. The [\d,]+ documents stored before it stay stored; run the same import again to finish/,
      );
      const held = await count();
      if (/the write was being committed, and may have been stored or not/.test(error.message)) {
        assert.ok(held === error.stored || held === error.stored + 50, `the count said (${error.stored}), or that and the batch being committed (50): the database holds ${held}`);
      } else assert.equal(error.stored, held, 'the count said is what the database holds');
      assert.match(run.err, /a2a-registry: the import stopped: /);

      // The same import again, its lines whole in a file of the same name this time.
      fs.rmSync(lines);
      fs.writeFileSync(lines, cards.join('\n'));
      const again = summaryOf(await runImport([lines], { databaseUrl, json: true }));
      assert.deepEqual([again.created + again.unchanged, again.refused, again.unchanged], [total, 0, held]);
    } finally {
      removeTempDir(work);
    }
  });

  test('a document whose identity an earlier one has, that one refused when stored, is judged on its own, also when batches overlap', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const urls = new Map<number, string>();
    for (const batch of [2, 500]) urls.set(batch, await postgres.server.createDatabase('import'));
    await inTempDirs((work) => assertRefusedFirstTakesNothing(work, (batch) => ({ databaseUrl: urls.get(batch)! })));
  });

  test('a running replica finds imported entries live; another principal\'s URL is refused', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const databaseUrl = await postgres.server.createDatabase('import');
    const registry = await startTestRegistry({ DATABASE_URL: databaseUrl });
    const work = tempDir();
    try {
      const client = await sdkClient(registry.url, { token: TOKENS.bob });
      resultOf(await op(client, { register: { agentCard: v1Card('Gecko Guide', 'https://gecko.example.org/a2a') } }));
      const { cards, lines } = writeSources(work);
      const grabby = v1Card('Hyrax Helper', 'https://hyrax.example.org/a2a');
      grabby.supportedInterfaces.push({ url: 'https://gecko.example.org/a2a', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' });
      const grabbyFile = path.join(work, 'hyrax.json');
      fs.writeFileSync(grabbyFile, JSON.stringify(grabby));

      const run = await runImport([cards, lines, grabbyFile], { databaseUrl, batchSize: 2, json: true });
      assert.equal(run.code, 1);
      const summary = summaryOf(run);
      assert.deepEqual([summary.engine, summary.created, summary.refused], ['postgres', 4, 3]);
      assert.equal(summary.refusals.find((r) => r.file === grabbyFile)?.code, 'FORBIDDEN');

      // Live: the replica's follower picks the imported entries up from the change log.
      const deadline = Date.now() + 10_000;
      let hits: WireJson[] = [];
      while (Date.now() < deadline) {
        hits = resultOf(await op(client, { search: { query: 'echidna' } })).results;
        if (hits.length > 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(hits.length, 1, 'the running registry finds an imported entry');
      assert.equal(resultOf(await op(client, { get: { id: hits[0].id } })).owner, 'alice');
      assert.equal(resultOf(await op(client, { search: { query: 'hyrax' } })).results.length, 0);

      // A batch stored in one statement, with one created_at: the replica's index orders it as list does.
      assert.equal(summaryOf(await runImport([writeBatch(work, 30)], { databaseUrl, json: true })).created, 30);
      const found = Date.now() + 10_000;
      while (Date.now() < found && resultOf(await op(client, { search: { query: 'numbatline' } })).total < 30) await new Promise((r) => setTimeout(r, 50));
      await assertListOrder(client, 'alice', 'numbatline');

      const again = summaryOf(await runImport([cards, lines], { databaseUrl, json: true }));
      assert.deepEqual([again.documents, again.imported, again.created, again.updated, again.unchanged, again.refused], [6, 4, 0, 0, 4, 2]);
      // Bob's entry is untouched.
      const gecko = resultOf(await op(client, { search: { query: 'gecko' } })).results;
      assert.equal(gecko.length, 1);
      assert.equal(errorOf(await op(await sdkClient(registry.url, { token: TOKENS.alice }), { unregister: { id: gecko[0].id } })).code, 'FORBIDDEN');
    } finally {
      await registry.close();
      removeTempDir(registry.dataDir);
      removeTempDir(work);
    }
  });
});
