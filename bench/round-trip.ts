/**
 * The registry's A2A round trips against the strongest honest baseline, side by side in one run:
 *
 * - no-op: a minimal @a2a-js/sdk server (bench/lib/sdk-noop-server.ts: express, the SDK's
 *   JSON-RPC handler and its InMemoryTaskStore, an executor that answers at once), in its own
 *   process;
 * - declined: the registry (its own process, the built dist/ as `npm start` runs it, logging at
 *   info) answering a message it declines at once (an unknown operation: no registry work, a
 *   REJECTED task): its fixed cost per request (authentication, version negotiation, limits,
 *   logging, metrics, security headers);
 * - search: the same registry answering JSON-RPC `search` messages over generated entries (1,000
 *   distinct queries in turn: after the first round, every one is answered from the search
 *   cache, REGISTRY_SEARCH_CACHE_ENTRIES; the run prints how many were);
 * - search, cache off: the same searches on a second registry process over a copy of the same
 *   data, with REGISTRY_SEARCH_CACHE_ENTRIES=0 (every search runs the index);
 * - registration: a third registry process over a copy of the same data, registering unique
 *   agent cards durably (each answer waits for the commit). Its own process so that its writes
 *   do not empty the search phase's cache: every write changes the index and with it every
 *   score, so the cache rightly starts over after one, and with registrations in the same
 *   process each search round would first ask its 1,000 queries of the index again (a mix of
 *   the two search phases, not the cached search the phase names).
 *
 * The phases are interleaved for several rounds (so a noisy neighbour hurts all of them
 * alike) and each figure is the median over rounds. Targets: search >= 80 % and registration
 * >= 50 % of the no-op. Each phase also reports its server's CPU time per request (Linux
 * /proc), and the ratios by it: on a busy machine requests per second follow the share of the
 * cores each process gets, the CPU per request much less.
 *
 *   npx tsx bench/round-trip.ts [--entries 10000] [--seconds 5] [--rounds 3] [--connections 20]
 *   DATABASE_URL=postgres://... npx tsx bench/round-trip.ts      (registrations in PostgreSQL)
 *   PROFILE_DIR=/tmp/prof npx tsx bench/round-trip.ts            (the registry writes a --cpu-prof there)
 *   npx tsx bench/round-trip.ts --repo ../main                    (another checkout's built registry: before/after)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT, ensureBuilt } from '../test/support/built.js';
import { benchCard } from './lib/bench-card.js';
import { generateQueries } from './lib/generate-entries.js';
import { measurePhase, median, registerGenerated, startChild, startRegistryChild, type JsonRpcPhase } from './lib/registry-process.js';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '20' },
    /** A subset of the phases (noop,declined,search,uncached,register), e.g. to profile one of them alone. */
    phases: { type: 'string', default: 'noop,declined,search,uncached,register' },
    /** Another checkout whose built dist/ serves as the registry (e.g. an earlier version, for before/after figures). */
    repo: { type: 'string', default: REPO_ROOT },
  },
});
const repo = path.resolve(values.repo);
const thisCheckout = repo === path.resolve(REPO_ROOT);
const entries = Number(values.entries);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const TOKEN = 'bench-admin-token-0123456789';

// --- the servers ----------------------------------------------------------------------------

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-round-trip-'));
const registryEnv: Record<string, string> = {
  PORT: '0',
  HOST: '127.0.0.1',
  REGISTRY_DATA_DIR: dataDir,
  REGISTRY_TOKENS: `admin:${TOKEN}`,
  // One client address sends everything: this measures throughput, not the limiter.
  REGISTRY_RATE_LIMITS: 'false',
  LOG_LEVEL: 'info',
};
// Load the entries in-process (fast, through the service; with the served checkout's own code, so
// its schema), then serve them from a separate process.
if (thisCheckout) ensureBuilt();
await registerGenerated(repo, registryEnv, entries);

const wanted = new Set(values.phases.split(','));
// The uncached and the registering registries serve copies of the same data (one SQLite file per process).
const uncachedDir = `${dataDir}-uncached`;
const registeringDir = `${dataDir}-registering`;
if (wanted.has('uncached')) fs.cpSync(dataDir, uncachedDir, { recursive: true });
if (wanted.has('register')) fs.cpSync(dataDir, registeringDir, { recursive: true });

const sdk = await startChild('bench/lib/sdk-noop-server.ts', repo, {}, (line) => /^listening (\S+)/.exec(line)?.[1]);
// The registry as `npm start` runs it: the compiled dist/ (rebuilt first when src/ is newer).
const registry = await startRegistryChild(repo, registryEnv);
// A checkout from before the search cache ignores the variable: its "cache off" figure is its search figure.
const uncached = wanted.has('uncached') ? await startRegistryChild(repo, { ...registryEnv, REGISTRY_DATA_DIR: uncachedDir, REGISTRY_SEARCH_CACHE_ENTRIES: '0' }) : undefined;
const registering = wanted.has('register') ? await startRegistryChild(repo, { ...registryEnv, REGISTRY_DATA_DIR: registeringDir }) : undefined;
console.log(
  `${thisCheckout ? 'this checkout' : repo}; ${entries} entries (${process.env.DATABASE_URL ? 'postgres' : 'sqlite'}); ${connections} connections; ${rounds} rounds of ${seconds} s per phase; ` +
    `${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`,
);

// --- the requests ---------------------------------------------------------------------------

let sequence = 0;
const rpc = (parts: unknown[]) =>
  JSON.stringify({ jsonrpc: '2.0', id: ++sequence, method: 'SendMessage', params: { message: { messageId: `m-${sequence}`, role: 'ROLE_USER', parts } } });
const queries = [...generateQueries(500, 3, false), ...generateQueries(500, 4, true)].map((q) => ({
  data: { search: { query: q.text, ...(q.filter ? { filter: q.filter } : {}), limit: 20 } },
  mediaType: 'application/json',
}));

interface Phase extends JsonRpcPhase {
  name: string;
}
const allPhases: Array<Phase & { key: string }> = [
  { key: 'noop', name: 'SDK no-op (InMemoryTaskStore)', url: sdk.url, pid: sdk.pid, body: () => rpc([{ text: 'hello' }]), expect: 'TASK_STATE_COMPLETED' },
  // The registry's fixed cost: a message it declines at once (no operation runs; the task is REJECTED).
  { key: 'declined', name: 'registry declined (no work)', url: registry.url, pid: registry.pid, body: () => rpc([{ data: { noSuchOperation: {} }, mediaType: 'application/json' }]), expect: 'TASK_STATE_REJECTED' },
  { key: 'search', name: 'registry search', url: registry.url, pid: registry.pid, body: () => rpc([queries[sequence % queries.length]]), expect: 'TASK_STATE_COMPLETED' },
  { key: 'uncached', name: 'registry search, cache off', url: uncached?.url ?? '', pid: uncached?.pid, body: () => rpc([queries[sequence % queries.length]]), expect: 'TASK_STATE_COMPLETED' },
  {
    key: 'register',
    name: 'registry registration (durable)',
    url: registering?.url ?? '',
    pid: registering?.pid,
    token: TOKEN,
    body: () => rpc([{ data: { register: { agentCard: benchCard(`Bench Agent ${sequence}`, `https://bench-${process.pid}-${sequence}.example.org/a2a`) } }, mediaType: 'application/json' }]),
    expect: 'TASK_STATE_COMPLETED',
  },
];
const phases = allPhases.filter((p) => wanted.has(p.key));

const run = (phase: Phase, duration: number) => measurePhase(phase, connections, duration);

// Warm-up (JIT, prepared statements, connection pools), not counted.
for (const phase of phases) await run(phase, 1);
const measured = new Map<string, Awaited<ReturnType<typeof run>>[]>(phases.map((p) => [p.name, []]));
for (let r = 0; r < rounds; r++) for (const phase of phases) measured.get(phase.name)!.push(await run(phase, seconds));

const rate = new Map<string, number>();
const cpu = new Map<string, number>();
for (const phase of phases) {
  const runs = measured.get(phase.name)!;
  const perSecond = median(runs.map((r) => r.perSecond));
  rate.set(phase.name, perSecond);
  const cpus = runs.flatMap((r) => (r.cpuPerRequestMs === undefined ? [] : [r.cpuPerRequestMs]));
  if (cpus.length === runs.length) cpu.set(phase.name, median(cpus));
  const wrong = runs.reduce((s, r) => s + r.wrong, 0);
  const cpuText = cpu.has(phase.name) ? `  CPU ${(cpu.get(phase.name)! * 1000).toFixed(0)} µs/request` : '';
  console.log(
    `${phase.name.padEnd(34)} ${perSecond.toFixed(0).padStart(6)} req/s (rounds: ${runs.map((r) => r.perSecond.toFixed(0)).join(', ')})  p50 ${median(runs.map((r) => r.p50))} ms  p99 ${median(runs.map((r) => r.p99))} ms${cpuText}${wrong ? `  WRONG ANSWERS ${wrong}: ${runs.find((r) => r.sample)?.sample}` : ''}`,
  );
}
const [noop, declined, search, uncachedSearch, register] = allPhases.map((p) => rate.get(p.name));
if (noop && declined) console.log(`declined / no-op:     ${((declined / noop) * 100).toFixed(0)} % (the registry's fixed cost per request)`);
if (noop && search) console.log(`search / no-op:       ${((search / noop) * 100).toFixed(0)} % (target >= 80 %)${await cacheSummary(registry.url)}`);
if (noop && uncachedSearch) console.log(`search, cache off / no-op: ${((uncachedSearch / noop) * 100).toFixed(0)} %`);
if (noop && register) console.log(`registration / no-op: ${((register / noop) * 100).toFixed(0)} % (target >= 50 %)`);
// The same ratios by the server's CPU time per request (no-op's / the phase's): what the phase
// would reach against the no-op with a core each to itself.
const [noopCpu, ...cpuOf] = allPhases.map((p) => cpu.get(p.name));
if (noopCpu) {
  const shares = allPhases.slice(1).flatMap((p, i) => (cpuOf[i] ? [`${p.key} ${((noopCpu / cpuOf[i]!) * 100).toFixed(0)} %`] : []));
  if (shares.length > 0) console.log(`by CPU per request (no-op's / the phase's): ${shares.join(', ')}`);
}
console.log(`load average after: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);

await Promise.all([sdk.stop(), registry.stop(), uncached?.stop(), registering?.stop()]);
for (const dir of [dataDir, uncachedDir, registeringDir]) fs.rmSync(dir, { recursive: true, force: true });

/** How many searches the registry answered from its search cache (its /metrics), as a sentence tail. */
async function cacheSummary(url: string): Promise<string> {
  const text = await fetch(new URL('/metrics', url)).then((r) => r.text(), () => '');
  const count = (result: string) => Number(new RegExp(`^registry_search_cache_lookups_total\\{result="${result}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
  const found = count('found');
  const missed = count('missed');
  return Number.isFinite(found) ? `; ${found} of ${found + missed} searches answered from the search cache` : '';
}
