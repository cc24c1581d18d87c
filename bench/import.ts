/**
 * Bulk import benchmark (issue 22, point 5): `a2a-registry import` of generated documents with
 * full validation, into a fresh SQLite data directory and (when PostgreSQL's binaries are
 * installed) a fresh PostgreSQL database.
 *
 *   npx tsx bench/import.ts [--sizes 10000,100000] [--engines sqlite,postgres] [--batch-size 500] [--threads worker,main]
 *        [--pg-settings shared_buffers=512MB,max_wal_size=4GB]
 *
 * Per size: writes the generated entries (bench/lib/generate-entries.ts: 70 % A2A v1.0 cards,
 * 30 % {mcpServer, toolspec} documents) as one JSON-lines file, runs the import command's code
 * in-process (runImport: read, parse, detect the kind, validate, verify, store in batches of one
 * transaction) and prints documents/s; then imports the same file again (every document
 * "unchanged": the idempotent re-import) and prints that rate too. On PostgreSQL a registry runs
 * in-process on the same database during the first import, and the bench prints how long after
 * the import ended its index held every imported entry (the batched follower catching up), and
 * what reading the changed entries costs the follower: one query per entry (as it did) against
 * one query per batch of 500 (getMany, as it does), side by side over the same entries.
 *
 * --pg-settings: settings for the PostgreSQL server the bench starts, beyond the test server's
 * (whose 32 MB of shared buffers suit many small test databases, not a 100,000-entry import).
 *
 * --threads: where documents are checked — "worker" (a worker thread beside the storing main
 * thread, the default with more than one core for an input of 2,000 documents or 4 MiB or more)
 * and/or "main" (everything on the main thread, the default on one core or for a smaller input); with both, each SQLite import runs once per mode, alternately, so they
 * can be compared side by side. Each line also gives the CPU time the main thread and the whole
 * process used: on a machine shared with other work the documents/s depend on the load, the CPU
 * time much less (the main thread's is what bounds the rate when the cores are free).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/observability/logger.js';
import { startRegistry } from '../src/server.js';
import { PostgresStore } from '../src/storage/postgres/index.js';
import { runImport, DEFAULT_BATCH_SIZE } from '../src/cli/commands/import.js';
import type { Refusal } from '../src/cli/import-preparation.js';
import { startPostgres, type TestPostgres } from '../test/support/postgres.js';
import { positiveNumbers } from './lib/args.js';
import { writeJsonLines } from './lib/fill-data-dir.js';

type Thread = 'worker' | 'main';

interface Args {
  sizes: number[];
  engines: string[];
  batchSize: number;
  threads: (Thread | undefined)[];
  /** PostgreSQL server settings beyond the test server's (name=value). */
  pgSettings: Record<string, string>;
}

function readArgs(): Args {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '10000,100000' },
      engines: { type: 'string', default: 'sqlite,postgres' },
      'batch-size': { type: 'string', default: String(DEFAULT_BATCH_SIZE) },
      /** worker and/or main; without it, the import's own choice (by the number of cores and the input's size). */
      threads: { type: 'string' },
      /** name=value,name=value */
      'pg-settings': { type: 'string', default: '' },
    },
  });
  const pgSettings: Record<string, string> = {};
  for (const pair of values['pg-settings'].split(',')) {
    const at = pair.indexOf('=');
    if (at > 0) pgSettings[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return {
    sizes: positiveNumbers(values.sizes),
    engines: values.engines.split(','),
    batchSize: Number(values['batch-size']),
    threads: values.threads === undefined ? [undefined] : values.threads.split(',').filter((t): t is Thread => t === 'worker' || t === 'main'),
    pgSettings,
  };
}

const cpuSeconds = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1e6;

async function importOnce(label: string, env: NodeJS.ProcessEnv, file: string, batchSize: number, thread?: Thread): Promise<void> {
  const config = loadConfig(env);
  const process0 = process.cpuUsage();
  const main0 = process.threadCpuUsage();
  let firstRefusal: Refusal | undefined;
  const summary = await runImport(config, [file], { owner: 'bench', batchSize, ...(thread ? { thread } : {}) }, (r) => {
    firstRefusal ??= r;
  });
  const cpu = `CPU ${cpuSeconds(process.threadCpuUsage(main0)).toFixed(1)} s main thread, ${cpuSeconds(process.cpuUsage(process0)).toFixed(1)} s process`;
  const stored = summary.created + summary.updated + summary.unchanged;
  console.log(
    `${(thread ? `${label} (${thread})` : label).padEnd(36)} ${stored} stored (${summary.created} created, ${summary.unchanged} unchanged), ${summary.refused} refused: ` +
      `${summary.seconds.toFixed(1)} s, ${summary.perSecond.toLocaleString('en-US')} documents/s; ${cpu}; load ${os.loadavg()[0]!.toFixed(1)}`,
  );
  if (summary.refused > 0) console.log('  first refusal:', JSON.stringify(firstRefusal).slice(0, 400));
}

/** The follower's reads of changed entries: one query each, against one per batch of 500, over the same changes. */
async function followerReads(url: string): Promise<void> {
  const store = new PostgresStore({ url });
  await store.open();
  try {
    // The first 5,000 changed entries, read from the log as the follower reads it (1,000 at most a call).
    const ids: string[] = [];
    let seq = 0;
    while (ids.length < 5000) {
      const changes = await store.changesSince(seq, 1000);
      if (changes.length === 0) break;
      ids.push(...changes.map((c) => c.id));
      seq = changes[changes.length - 1]!.seq;
    }
    let t = performance.now();
    for (const id of ids) await store.get(id);
    const one = (performance.now() - t) / ids.length;
    t = performance.now();
    for (let i = 0; i < ids.length; i += 500) await store.getMany(ids.slice(i, i + 500));
    const batched = (performance.now() - t) / ids.length;
    console.log(`${'follower reads'.padEnd(28)} ${ids.length} changed entries: ${(one * 1000).toFixed(0)} µs each one by one, ${(batched * 1000).toFixed(0)} µs each in batches of 500 (${(one / batched).toFixed(1)}×)`);
  } finally {
    await store.close();
  }
}

const args = readArgs();
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-import-'));
let postgres: TestPostgres | undefined;
try {
  if (args.engines.includes('postgres')) {
    const started = await startPostgres({ settings: args.pgSettings });
    if (started.ok) postgres = started.pg;
    else console.log(`PostgreSQL skipped: ${started.skipReason}`);
  }
  console.log(`batch size ${args.batchSize}, Node ${process.version}, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  for (const size of args.sizes) {
    const file = path.join(work, `entries-${size}.jsonl`);
    const bytes = writeJsonLines(file, size);
    console.log(`\n== ${size.toLocaleString('en-US')} documents (${(bytes / 2 ** 20).toFixed(0)} MiB of JSON lines) ==`);
    if (args.engines.includes('sqlite')) {
      for (const thread of args.threads) {
        const dataDir = fs.mkdtempSync(path.join(work, 'data-'));
        const env = { ...process.env, REGISTRY_DATA_DIR: dataDir, DATABASE_URL: '' };
        await importOnce('SQLite, import', env, file, args.batchSize, thread);
        await importOnce('SQLite, same file again', env, file, args.batchSize, thread);
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    }
    if (postgres) {
      const env = { ...process.env, REGISTRY_DATA_DIR: work, DATABASE_URL: await postgres.createDatabase('bench_import') };
      // A replica following the change log while the import runs.
      const replica = await startRegistry(
        loadConfig({ PORT: '0', HOST: '127.0.0.1', REGISTRY_DATA_DIR: work, DATABASE_URL: env.DATABASE_URL, REGISTRY_TOKENS: 'admin:bench-admin-token-0123456789', REGISTRY_REFRESH_SECONDS: '0', LOG_LEVEL: 'warn' }),
        createLogger('warn'),
      );
      try {
        await replica.ready;
        await importOnce('PostgreSQL, import', env, file, args.batchSize, args.threads[0]);
        const ended = performance.now();
        while (replica.service.indexSize < size) await new Promise((r) => setTimeout(r, 20));
        console.log(`${''.padEnd(28)} a running replica's index held all ${size} entries ${((performance.now() - ended) / 1000).toFixed(2)} s after the import ended`);
      } finally {
        await replica.close();
      }
      await importOnce('PostgreSQL, same file again', env, file, args.batchSize, args.threads[0]);
      await followerReads(env.DATABASE_URL);
    }
    fs.rmSync(file, { force: true });
  }
  console.log(`\nload ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
} finally {
  await postgres?.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
