/**
 * Built checkouts' registries side by side, for before/after figures on a busy machine: each
 * checkout's registry (the built dist/, as `npm start` runs it) in its own process over a copy
 * of one database of generated entries, and their phases alternated (ABBA order) for several
 * pairs, so load from other work falls on all of them alike. Per checkout and phase: the
 * server's CPU time per request (Linux /proc; what a busy machine disturbs least) and requests
 * per second, medians and ranges over the pairs.
 *
 * Phases: `register` (durable registrations of unique agent cards: each answer waits for the
 * commit), `declined` (a message the registry declines at once: its fixed cost per request) and
 * `search` (JSON-RPC searches, 1,000 distinct queries in turn as bench/round-trip.ts asks them:
 * after the warm-up, answered from the search cache). With `register` among the phases, the
 * searches after it start over on an emptied cache (every write changes the scores): put
 * `search` first, or measure it on its own.
 *
 *   npx tsx bench/side-by-side.ts ../main .                          (before, after)
 *   npx tsx bench/side-by-side.ts --phases register --pairs 6 --seconds 8 ../main .
 *
 * The database is filled with the first checkout's code, so later ones migrate it forward when
 * they open it. Each checkout must be built (`npm run build`); this one is rebuilt when src/ is newer.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT, ensureBuilt } from '../test/support/built.js';
import { benchCard } from './lib/bench-card.js';
import { generateQueries } from './lib/generate-entries.js';
import { measurePhase, median, registerGenerated, startRegistryChild, type ChildServer, type JsonRpcPhase } from './lib/registry-process.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    entries: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '6' },
    pairs: { type: 'string', default: '4' },
    connections: { type: 'string', default: '20' },
    phases: { type: 'string', default: 'register,declined' },
  },
});
const checkouts = (positionals.length > 0 ? positionals : ['.']).map((p) => path.resolve(p));
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const phaseNames = values.phases.split(',');
const TOKEN = 'bench-admin-token-0123456789';
if (checkouts.some((c) => c === path.resolve(REPO_ROOT))) ensureBuilt();

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-side-by-side-'));
const registryEnv: Record<string, string> = {
  PORT: '0',
  HOST: '127.0.0.1',
  REGISTRY_TOKENS: `admin:${TOKEN}`,
  // One client address sends everything: this measures throughput, not the limiter.
  REGISTRY_RATE_LIMITS: 'false',
  LOG_LEVEL: 'info',
};
await registerGenerated(checkouts[0]!, { ...registryEnv, REGISTRY_DATA_DIR: dataDir }, Number(values.entries));

const servers: Array<{ checkout: string; dir: string; child: ChildServer }> = [];
for (const [i, checkout] of checkouts.entries()) {
  const dir = `${dataDir}-${i}`;
  fs.cpSync(dataDir, dir, { recursive: true });
  servers.push({ checkout, dir, child: await startRegistryChild(checkout, { ...registryEnv, REGISTRY_DATA_DIR: dir }) });
}
console.log(
  `${checkouts.join(' vs ')}; ${values.entries} entries; ${connections} connections; ${values.pairs} pairs of ${seconds} s per phase; ` +
    `${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`,
);

let sequence = 0;
const rpc = (parts: unknown[]) =>
  JSON.stringify({ jsonrpc: '2.0', id: ++sequence, method: 'SendMessage', params: { message: { messageId: `m-${sequence}`, role: 'ROLE_USER', parts } } });
// The queries of bench/round-trip.ts's search phases, in the same order.
const queries = [...generateQueries(500, 3, false), ...generateQueries(500, 4, true)].map((q) => ({
  data: { search: { query: q.text, ...(q.filter ? { filter: q.filter } : {}), limit: 20 } },
  mediaType: 'application/json',
}));
const PHASES: Record<string, Omit<JsonRpcPhase, 'url' | 'pid'>> = {
  register: {
    token: TOKEN,
    body: () => rpc([{ data: { register: { agentCard: benchCard(`Bench Agent ${sequence}`, `https://bench-${process.pid}-${sequence}.example.org/a2a`) } }, mediaType: 'application/json' }]),
    expect: 'TASK_STATE_COMPLETED',
  },
  declined: { token: TOKEN, body: () => rpc([{ data: { noSuchOperation: {} }, mediaType: 'application/json' }]), expect: 'TASK_STATE_REJECTED' },
  search: { body: () => rpc([queries[sequence % queries.length]]), expect: 'TASK_STATE_COMPLETED' },
};
for (const name of phaseNames) if (!PHASES[name]) throw new Error(`unknown phase "${name}" (${Object.keys(PHASES).join(', ')})`);
const phaseOf = (name: string, server: (typeof servers)[number]): JsonRpcPhase => ({ ...PHASES[name]!, url: server.child.url, pid: server.child.pid });

// Warm-up (JIT, prepared statements), not counted.
for (const server of servers) for (const name of phaseNames) await measurePhase(phaseOf(name, server), connections, 2);
const results = new Map<string, Array<{ perSecond: number; cpuUs: number }>>();
for (let pair = 0; pair < Number(values.pairs); pair++) {
  for (const server of pair % 2 === 0 ? servers : [...servers].reverse()) {
    for (const name of phaseNames) {
      const r = await measurePhase(phaseOf(name, server), connections, seconds);
      if (r.wrong > 0) throw new Error(`${server.checkout} ${name}: ${r.wrong} wrong answers, e.g. ${r.sample}`);
      const key = `${name.padEnd(9)} ${server.checkout}`;
      const cpuUs = (r.cpuPerRequestMs ?? NaN) * 1000;
      (results.get(key) ?? results.set(key, []).get(key)!).push({ perSecond: r.perSecond, cpuUs });
      console.log(`  ${key}: ${r.perSecond.toFixed(0)} req/s, CPU ${cpuUs.toFixed(0)} µs/request (load ${os.loadavg()[0]!.toFixed(1)})`);
    }
  }
}
const range = (xs: number[]) => `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
for (const [key, runs] of results) {
  console.log(`${key}: CPU µs/request ${range(runs.map((r) => r.cpuUs))}, req/s ${range(runs.map((r) => r.perSecond))}`);
}
console.log(`load average after: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);

await Promise.all(servers.map((s) => s.child.stop()));
for (const dir of [dataDir, ...servers.map((s) => s.dir)]) fs.rmSync(dir, { recursive: true, force: true });
