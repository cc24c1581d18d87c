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
 *   the two search phases, not the cached search the phase names);
 * - sized (only when asked, `--phases noop,sized,...`): the SDK's no-op again, answering every
 *   message with the artifacts of one real search answer of the registry (about 17 KB): what
 *   the SDK itself reaches with an answer of a search's size, against its own small answer;
 * - sized-register (only when asked): the SDK's no-op sent the registration phase's messages
 *   (each carrying an agent card), which it echoes in the task's history as the registry does.
 *
 * The phases are interleaved for several rounds (so a noisy neighbour hurts all of them
 * alike) and each figure is the median over rounds. Targets: search >= 80 % and registration
 * >= 50 % of the no-op. Each phase also reports its server's CPU time per request (Linux
 * /proc), and the ratios by it: on a busy machine requests per second follow the share of the
 * cores each process gets, the CPU per request much less. The no-op runs once more after the
 * last round, and each registry run is also compared with the mean of the no-op runs just
 * before and after it ("paired by round": the median and range of those ratios), which a
 * machine whose speed drifts during the run moves far less than the ratio of the medians.
 *
 *   npx tsx bench/round-trip.ts [--entries 10000] [--seconds 5] [--rounds 3] [--connections 20]
 *   DATABASE_URL=postgres://... npx tsx bench/round-trip.ts      (registrations in PostgreSQL)
 *   PROFILE_DIR=/tmp/prof npx tsx bench/round-trip.ts            (the registry writes a --cpu-prof there; PROFILE_ALL=1: the no-op too)
 *   npx tsx bench/round-trip.ts --phases noop,sized,search        (also the SDK's no-op answering a search answer's artifacts)
 *   npx tsx bench/round-trip.ts --phases noop,sized-register,register (also the SDK's no-op sent registration messages)
 *   npx tsx bench/round-trip.ts --repo ../main                    (another checkout's built registry: before/after)
 *   npx tsx bench/round-trip.ts --base ../main                    (this checkout and ../main side by side, alternated)
 *   npx tsx bench/round-trip.ts --base . --base-env LOG_LEVEL=warn (one build, two settings, alternated)
 *
 * With --base (or --base-env), every registry phase runs on a second set of registry processes
 * too (the base: another checkout's build, and/or other environment variables), the two
 * alternated within each round and their order swapped from round to round, so that a load
 * that moves during the run hurts both alike: the A/B a change needs on a shared machine.
 * --env KEY=VALUE sets a variable for the measured registry (not the base).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT, ensureBuilt } from '../test/support/built.js';
import { benchCard } from './lib/bench-card.js';
import { generateQueries } from './lib/generate-entries.js';
import { measurePhase, median, registerGenerated, startChild, startRegistryChild, type ChildServer, type JsonRpcPhase, type PhaseResult } from './lib/registry-process.js';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '20' },
    /**
     * A subset of the phases (noop,declined,search,uncached,register), e.g. to profile one of them
     * alone; `sized` adds the SDK's no-op answering with a search answer's artifacts,
     * `sized-register` the SDK's no-op sent registration messages.
     */
    phases: { type: 'string', default: 'noop,declined,search,uncached,register' },
    /** Another checkout whose built dist/ serves as the registry (e.g. an earlier version, for before/after figures). */
    repo: { type: 'string', default: REPO_ROOT },
    /** A second registry build to alternate with (its phases are named "base: ..."). */
    base: { type: 'string' },
    /** KEY=VALUE: environment for the measured registry, or for the base. */
    env: { type: 'string', multiple: true, default: [] },
    'base-env': { type: 'string', multiple: true, default: [] },
  },
});
const envOf = (pairs: string[]): Record<string, string> =>
  Object.fromEntries(
    pairs.map((pair) => {
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new Error(`--env and --base-env take KEY=VALUE, not "${pair}"`);
      return [pair.slice(0, eq), pair.slice(eq + 1)];
    }),
  );
const repo = path.resolve(values.repo);
const thisCheckout = repo === path.resolve(REPO_ROOT);
const entries = Number(values.entries);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const TOKEN = 'bench-admin-token-0123456789';

// --- the servers ----------------------------------------------------------------------------

const registryEnv: Record<string, string> = {
  PORT: '0',
  HOST: '127.0.0.1',
  REGISTRY_TOKENS: `admin:${TOKEN}`,
  // One client address sends everything: this measures throughput, not the limiter.
  REGISTRY_RATE_LIMITS: 'false',
  LOG_LEVEL: 'info',
};
const wanted = new Set(values.phases.split(','));
const dataDirs: string[] = [];

/** One registry build's processes (each phase's own, see above) over `entries` generated entries. */
interface Registries {
  label: string;
  searching: ChildServer;
  uncached?: ChildServer;
  registering?: ChildServer;
}
/** A data folder holding the generated entries, registered in-process with `checkout`'s own code (so its schema). */
async function loadData(checkout: string, env: Record<string, string>): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-round-trip-'));
  dataDirs.push(dataDir);
  await registerGenerated(checkout, { ...registryEnv, ...env, REGISTRY_DATA_DIR: dataDir }, entries);
  return dataDir;
}
/** A copy of a data folder no process has open (one SQLite file per process). */
function copyData(dataDir: string, suffix: string): string {
  const dir = `${dataDir}-${suffix}`;
  dataDirs.push(dir);
  fs.cpSync(dataDir, dir, { recursive: true });
  return dir;
}
/** The processes of one registry build over `dataDir` (loaded, fast, in-process first) and copies of it. */
async function startRegistries(label: string, checkout: string, env: Record<string, string>, dataDir: string): Promise<Registries> {
  const served = { ...registryEnv, ...env, REGISTRY_DATA_DIR: dataDir };
  // The uncached and the registering registries serve copies of the same data, made before any process opens it.
  const uncachedDir = wanted.has('uncached') ? copyData(dataDir, 'uncached') : undefined;
  const registeringDir = wanted.has('register') ? copyData(dataDir, 'registering') : undefined;
  // The registry as `npm start` runs it: the compiled dist/ (rebuilt first when src/ is newer).
  const searching = await startRegistryChild(checkout, served);
  // A checkout from before the search cache ignores the variable: its "cache off" figure is its search figure.
  const uncached = uncachedDir ? await startRegistryChild(checkout, { ...served, REGISTRY_DATA_DIR: uncachedDir, REGISTRY_SEARCH_CACHE_ENTRIES: '0' }) : undefined;
  const registering = registeringDir ? await startRegistryChild(checkout, { ...served, REGISTRY_DATA_DIR: registeringDir }) : undefined;
  return { label, searching, uncached, registering };
}

if (thisCheckout) ensureBuilt();
const measuredEnv = envOf(values.env);
const baseEnv = envOf(values['base-env']);
const base = values.base !== undefined || values['base-env'].length > 0 ? path.resolve(values.base ?? repo) : undefined;
const measuredData = await loadData(repo, measuredEnv);
// The same build reads the same data: a copy, made before either registry opens it.
const baseData = base === undefined ? undefined : base === repo ? copyData(measuredData, 'base') : await loadData(base, baseEnv);
const sdk = await startChild('bench/lib/sdk-noop-server.ts', repo, {}, (line) => /^listening (\S+)/.exec(line)?.[1]);
const measuredRegistries = await startRegistries('', repo, measuredEnv, measuredData);
const baseRegistries = base && baseData ? await startRegistries('base: ', base, baseEnv, baseData) : undefined;
const describe = (checkout: string, env: Record<string, string>) =>
  `${path.resolve(checkout) === path.resolve(REPO_ROOT) ? 'this checkout' : checkout}${Object.keys(env).length ? ` (${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ')})` : ''}`;
console.log(
  `${describe(repo, measuredEnv)}${base ? `, base ${describe(base, baseEnv)}` : ''}; ${entries} entries (${process.env.DATABASE_URL ? 'postgres' : 'sqlite'}); ${connections} connections; ${rounds} rounds of ${seconds} s per phase; ` +
    `${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`,
);

// --- the requests ---------------------------------------------------------------------------

let sequence = 0;
const rpc = (parts: unknown[]) =>
  JSON.stringify({ jsonrpc: '2.0', id: ++sequence, method: 'SendMessage', params: { message: { messageId: `m-${sequence}`, role: 'ROLE_USER', parts } } });
/** A unique agent card to register (each request's own name and URL). */
const registrationBody = () => rpc([{ data: { register: { agentCard: benchCard(`Bench Agent ${sequence}`, `https://bench-${process.pid}-${sequence}.example.org/a2a`) } }, mediaType: 'application/json' }]);
const queries = [...generateQueries(500, 3, false), ...generateQueries(500, 4, true)].map((q) => ({
  data: { search: { query: q.text, ...(q.filter ? { filter: q.filter } : {}), limit: 20 } },
  mediaType: 'application/json',
}));

interface Phase extends JsonRpcPhase {
  key: string;
  name: string;
  /** How many distinct requests the phase asks in turn: each asked once before its warm-up bursts. */
  distinct?: number;
}
const noopPhase: Phase = { key: 'noop', name: 'SDK no-op (InMemoryTaskStore)', url: sdk.url, pid: sdk.pid, body: () => rpc([{ text: 'hello' }]), expect: 'TASK_STATE_COMPLETED' };
/** The registry phases of one build, in the order they run. */
const registryPhases = ({ label, searching, uncached, registering }: Registries): Phase[] => [
  // The registry's fixed cost: a message it declines at once (no operation runs; the task is REJECTED).
  { key: 'declined', name: `${label}registry declined (no work)`, url: searching.url, pid: searching.pid, body: () => rpc([{ data: { noSuchOperation: {} }, mediaType: 'application/json' }]), expect: 'TASK_STATE_REJECTED' },
  { key: 'search', name: `${label}registry search`, url: searching.url, pid: searching.pid, body: () => rpc([queries[sequence % queries.length]]), expect: 'TASK_STATE_COMPLETED', distinct: queries.length },
  { key: 'uncached', name: `${label}registry search, cache off`, url: uncached?.url ?? '', pid: uncached?.pid, body: () => rpc([queries[sequence % queries.length]]), expect: 'TASK_STATE_COMPLETED', distinct: queries.length },
  {
    key: 'register',
    name: `${label}registry registration (durable)`,
    url: registering?.url ?? '',
    pid: registering?.pid,
    token: TOKEN,
    body: registrationBody,
    expect: 'TASK_STATE_COMPLETED',
  },
];
// The SDK's no-op answering with what the registry answers a search (its artifacts, taken from one
// real answer of the measured registry): the SDK's own round trip for an answer of that size, the
// bound a search's ratio to the small no-op meets whatever the registry does.
const sized = wanted.has('sized') ? await startSizedNoop(measuredRegistries.searching.url) : undefined;
const sizedPhase: Phase | undefined = sized && { key: 'sized', name: 'SDK no-op, a search answer\'s artifacts', url: sized.url, pid: sized.pid, body: () => rpc([{ text: 'hello' }]), expect: 'TASK_STATE_COMPLETED' };
const measuredPhases = registryPhases(measuredRegistries).filter((p) => wanted.has(p.key));
const basePhases = baseRegistries ? registryPhases(baseRegistries).filter((p) => wanted.has(p.key)) : [];
const sizedRegisterPhase: Phase | undefined = wanted.has('sized-register') ? { key: 'sized-register', name: 'SDK no-op, a registration message', url: sdk.url, pid: sdk.pid, body: registrationBody, expect: 'TASK_STATE_COMPLETED' } : undefined;
/** The SDK's phases, first in every round. */
const sdkPhases = [...(wanted.has('noop') ? [noopPhase] : []), ...(sizedPhase ? [sizedPhase] : []), ...(sizedRegisterPhase ? [sizedRegisterPhase] : [])];
const phases = [...sdkPhases, ...measuredPhases, ...basePhases];
/** Round r's order: the no-op, then each registry phase with its base twin right after it (or, every other round, before it). */
const roundOrder = (r: number): Phase[] => [
  ...sdkPhases,
  ...measuredPhases.flatMap((p, i) => (basePhases[i] ? (r % 2 === 0 ? [p, basePhases[i]] : [basePhases[i], p]) : [p])),
];

const run = (phase: Phase, duration: number) => measurePhase(phase, connections, duration);

/**
 * Warm-up, not counted: bursts of 1 s until one is no faster than the best before it by more than
 * 5 % (2 at least, 10 at most). One burst was the warm-up before, and both servers were still
 * speeding up two rounds later (a run of 10 rounds of 3 s: the no-op 6,142, 7,081, then 7,369-
 * 8,020 req/s; the cached search 1,774, 3,804, then 4,140-5,322): its JIT still tiering up the
 * request path, and the search phase's first round still filling its answer cache with the 1,000
 * queries (now asked before its bursts). The median of 3-5 rounds then counted one or two of those rounds. Bursts of every phase,
 * the no-op's included, so the warm-up favours neither side.
 */
async function warmUp(phase: Phase): Promise<number[]> {
  // Each of its distinct requests once (that many requests in a row ask each, wherever the turn
  // stands), so the search phase's bursts measure its answer cache, not its filling.
  if (phase.distinct) await measurePhase(phase, connections, 0, phase.distinct);
  const rates: number[] = [];
  while (rates.length < 10) {
    const { perSecond } = await run(phase, 1);
    const best = Math.max(0, ...rates);
    rates.push(perSecond);
    if (rates.length >= 2 && perSecond <= best * 1.05) break;
  }
  return rates;
}
for (const phase of phases) {
  const rates = await warmUp(phase);
  console.log(`warm-up: ${phase.name}: ${rates.length} s (${rates.map((r) => r.toFixed(0)).join(', ')} req/s)`);
}
const measured = new Map<string, PhaseResult[]>(phases.map((p) => [p.name, []]));
for (let r = 0; r < rounds; r++) for (const phase of roundOrder(r)) measured.get(phase.name)!.push(await run(phase, seconds));
// The no-op once more after the last round: each round's phases then sit between two no-op
// measurements (their round's and the next's), for the paired ratios below.
const closingNoop = wanted.has('noop') ? await run(noopPhase, seconds) : undefined;

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
    `${phase.name.padEnd(40)} ${perSecond.toFixed(0).padStart(6)} req/s (rounds: ${runs.map((r) => r.perSecond.toFixed(0)).join(', ')})  p50 ${median(runs.map((r) => r.p50))} ms  p99 ${median(runs.map((r) => r.p99))} ms${cpuText}${wrong ? `  WRONG ANSWERS ${wrong}: ${runs.find((r) => r.sample)?.sample}` : ''}`,
  );
}
const noop = rate.get(noopPhase.name);
const noopCpu = cpu.get(noopPhase.name);
const sizedNoop = sizedPhase && rate.get(sizedPhase.name);
if (noop && sizedNoop) console.log(`SDK no-op with a search answer's artifacts / no-op: ${((sizedNoop / noop) * 100).toFixed(0)} % (what the SDK itself reaches with an answer that size)`);
for (const [label, own, registries] of [['', measuredPhases, measuredRegistries], ['base: ', basePhases, baseRegistries]] as const) {
  if (!registries) continue;
  const rateOf = (key: string) => rate.get(own.find((p) => p.key === key)?.name ?? '');
  const [declined, search, uncachedSearch, register] = ['declined', 'search', 'uncached', 'register'].map(rateOf);
  if (noop && declined) console.log(`${label}declined / no-op:     ${((declined / noop) * 100).toFixed(0)} % (the registry's fixed cost per request)`);
  if (noop && search) console.log(`${label}search / no-op:       ${((search / noop) * 100).toFixed(0)} % (target >= 80 %)${await cacheSummary(registries.searching.url)}`);
  if (noop && uncachedSearch) console.log(`${label}search, cache off / no-op: ${((uncachedSearch / noop) * 100).toFixed(0)} %`);
  if (noop && register) console.log(`${label}registration / no-op: ${((register / noop) * 100).toFixed(0)} % (target >= 50 %)`);
  // The same ratios by the server's CPU time per request (no-op's / the phase's): what the phase
  // would reach against the no-op with a core each to itself.
  if (noopCpu) {
    const shares = own.flatMap((p) => (cpu.get(p.name) ? [`${p.key} ${((noopCpu / cpu.get(p.name)!) * 100).toFixed(0)} %`] : []));
    if (shares.length > 0) console.log(`${label}by CPU per request (no-op's / the phase's): ${shares.join(', ')}`);
  }
}
// Paired by round: each run against the mean of the no-op runs just before and after it. This
// machine's speed can move by half within a minute, and a ratio of medians taken minutes apart
// moves with it; the paired ratios show how far (their median and range).
if (closingNoop) {
  const noopRuns = [...measured.get(noopPhase.name)!, closingNoop];
  const bracket = (r: number, of: (result: PhaseResult) => number | undefined): number | undefined => {
    const [before, after] = [of(noopRuns[r]!), of(noopRuns[r + 1]!)];
    return before === undefined || after === undefined ? undefined : (before + after) / 2;
  };
  const percent = (xs: number[]) => `${(median(xs) * 100).toFixed(0)} % (rounds ${(Math.min(...xs) * 100).toFixed(0)}-${(Math.max(...xs) * 100).toFixed(0)} %)`;
  for (const phase of [...sdkPhases.slice(1), ...measuredPhases, ...basePhases]) {
    const runs = measured.get(phase.name)!;
    const byRate = runs.map((result, r) => result.perSecond / bracket(r, (n) => n.perSecond)!);
    const byCpu = runs.flatMap((result, r) => {
      const noopCpu = bracket(r, (n) => n.cpuPerRequestMs);
      return noopCpu === undefined || result.cpuPerRequestMs === undefined ? [] : [noopCpu / result.cpuPerRequestMs];
    });
    console.log(`paired by round, ${phase.name} / no-op: ${percent(byRate)}${byCpu.length === runs.length ? `; by CPU ${percent(byCpu)}` : ''}`);
  }
}
console.log(`load average after: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);

const children = [sdk, sized, ...[measuredRegistries, baseRegistries].flatMap((r) => (r ? [r.searching, r.uncached, r.registering] : []))];
await Promise.all(children.map((child) => child?.stop()));
for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });

/** The SDK's no-op server answering every message with the artifacts of one search answer of the registry at `url`. */
async function startSizedNoop(url: string): Promise<ChildServer> {
  const res = await fetch(new URL('/a2a/jsonrpc', url), { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0' }, body: rpc([queries[0]]) });
  const answer = (await res.json()) as { result?: { task?: { artifacts?: unknown[] } } };
  const artifacts = answer.result?.task?.artifacts;
  if (!artifacts?.length) throw new Error(`the registry's search answer has no artifacts: ${JSON.stringify(answer).slice(0, 300)}`);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-sized-')), 'artifacts.json');
  dataDirs.push(path.dirname(file));
  fs.writeFileSync(file, JSON.stringify(artifacts));
  console.log(`the sized no-op answers with ${Buffer.byteLength(JSON.stringify(artifacts))} bytes of artifacts`);
  return startChild('bench/lib/sdk-noop-server.ts', repo, { NOOP_ARTIFACTS_FILE: file }, (line) => /^listening (\S+)/.exec(line)?.[1]);
}

/** How many searches the registry answered from its search cache (its /metrics), as a sentence tail. */
async function cacheSummary(url: string): Promise<string> {
  const text = await fetch(new URL('/metrics', url)).then((r) => r.text(), () => '');
  const count = (result: string) => Number(new RegExp(`^registry_search_cache_lookups_total\\{result="${result}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
  const found = count('found');
  const missed = count('missed');
  return Number.isFinite(found) ? `; ${found} of ${found + missed} searches answered from the search cache` : '';
}
