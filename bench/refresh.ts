/**
 * Refreshing entries from their sources (issue 16): a registry (in this process, so the refresh
 * loop shares the event loop with the requests it must not hold up) with N entries registered
 * by URL from an origin server on 127.0.0.1, then:
 *   1. registrations by URL per second (each one fetches its card),
 *   2. a refresh round where every source answers 304 (conditional requests),
 *   3. a round where every card changed (N new revisions through the store and change feed),
 *   4. search latency over HTTP while a round runs, against the same searches idle.
 *
 *   npx tsx bench/refresh.ts [--sources 1000]                 (SQLite, in a temp dir)
 *   npx tsx bench/refresh.ts --postgres                       (a throwaway local PostgreSQL server)
 *   DATABASE_URL=postgres://... npx tsx bench/refresh.ts      (PostgreSQL you run)
 */
import { parseArgs } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { startOrigin } from '../test/support/origin-server.js';
import { serveCard } from '../test/support/freshness.js';
import { TOKENS, startTestRegistry, tempDir } from '../test/support/registry.js';
import { startPostgres, type TestPostgres } from '../test/support/postgres.js';
import { benchCard } from './lib/bench-card.js';
import { jsonRpcSender, printLoad, runLoad } from './lib/http-load.js';

const { values } = parseArgs({ options: { sources: { type: 'string', default: '1000' }, postgres: { type: 'boolean', default: false } } });
const N = Number(values.sources);
let server: TestPostgres | undefined;
if (values.postgres) {
  const started = await startPostgres();
  if (!started.ok) throw new Error(`--postgres: ${started.skipReason}`);
  server = started.pg;
}
const databaseUrl = server ? await server.createDatabase('bench_refresh') : process.env.DATABASE_URL;

const origin = await startOrigin();
const dataDir = tempDir('a2a-bench-refresh-');
const registry = await startTestRegistry({
  REGISTRY_DATA_DIR: dataDir,
  REGISTRY_FETCH_ALLOW: '127.0.0.1',
  REGISTRY_RATE_LIMITS: 'false',
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
});
console.log(`storage: ${databaseUrl ? 'postgres' : 'sqlite'}; ${N} sources on one origin at 127.0.0.1; 8 checks in flight (the loop's default)`);

const cardOf = (i: number, version: string) => ({ ...benchCard(`Refreshed Agent ${i}`, `https://refresh-${process.pid}-${i}.example.org/a2a`), version });
for (let i = 0; i < N; i++) serveCard(origin, cardOf(i, '1.0.0'), `/s/${i}`);

/** Makes every source due now, as if the interval had passed. */
async function dueAll(): Promise<void> {
  if (!databaseUrl) {
    const db = new Database(path.join(dataDir, 'registry.db'));
    db.prepare(`UPDATE entry_freshness SET next_check_at = '2000-01-01T00:00:00.000Z'`).run();
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`UPDATE entry_freshness SET next_check_at = now() - interval '1 second'`);
  await client.end();
}

async function round(label: string): Promise<void> {
  await dueAll();
  const started = performance.now();
  const checked = await registry.refresher!.runOnce();
  const s = (performance.now() - started) / 1000;
  console.log(`${label.padEnd(36)} ${checked} sources in ${s.toFixed(2)} s = ${(checked / s).toFixed(0)} sources/s`);
}

const register = jsonRpcSender(registry.url, TOKENS.admin, 'TASK_STATE_COMPLETED');
const registrations = await runLoad('register by URL (fetch + store)', { seconds: 600, concurrency: 16, maxRequests: N }, (i) =>
  register([{ data: { register: { url: `${origin.url}/s/${i}` } }, mediaType: 'application/json' }]),
);
printLoad(registrations);

await round('refresh round, every source 304');
for (let i = 0; i < N; i++) serveCard(origin, cardOf(i, '2.0.0'), `/s/${i}`);
await round('refresh round, every card changed');
await round('refresh round, 304 again');

// Search latency idle, then while a round of N refreshes (all changed) runs.
const search = jsonRpcSender(registry.url, undefined, 'TASK_STATE_COMPLETED');
const query = (i: number) => search([{ data: { search: { query: `refreshed agent ${i % 50}`, limit: 10 } }, mediaType: 'application/json' }]);
const idle = await runLoad('search, idle', { seconds: 3, concurrency: 4 }, query);
for (let i = 0; i < N; i++) serveCard(origin, cardOf(i, '3.0.0'), `/s/${i}`);
await dueAll();
const started = performance.now();
const refreshing = registry.refresher!.runOnce();
let done = false;
void refreshing.then(() => (done = true));
// The same searches, four at a time, until the round ends.
const latencies: number[] = [];
let next = 0;
await Promise.all(
  Array.from({ length: 4 }, async () => {
    while (!done) {
      const t0 = performance.now();
      await query(next++);
      latencies.push(performance.now() - t0);
    }
  }),
);
const checked = await refreshing;
const roundS = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
printLoad(idle);
printLoad({ label: 'search, during a round of changes', requests: latencies.length, errors: 0, seconds: roundS, perSecond: latencies.length / roundS, p50Ms: pct(0.5), p99Ms: pct(0.99) });
console.log(`  (the round: ${checked} sources, every card changed, in ${roundS.toFixed(2)} s)`);

await registry.close();
await origin.close();
await server?.stop();
fs.rmSync(dataDir, { recursive: true, force: true });
