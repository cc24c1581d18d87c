/**
 * Mixed load against one registry in its own process (started as `npm start` starts it, on
 * 127.0.0.1, rate limits raised out of the way): many concurrent clients (autocannon) sending
 * searches and registrations of unique agents for a bounded time. Prints throughput, latency
 * percentiles overall and per kind, error counts (anything but a completed answer or a
 * rate-limit refusal is an error; the run fails if there is one) and the server's peak RSS,
 * sampled from /proc/<pid>/status.
 *
 * Soak mode runs longer, registers a bounded pool of agents (updates after the first round, so
 * the data stops growing) and prints memory at intervals: RSS and heap should stay flat.
 *
 *   npx tsx bench/load.ts [--seconds 20] [--connections 50] [--writes 0.2]
 *   npx tsx bench/load.ts --soak 300 [--interval 15] [--pool 2000]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { spawnRegistry } from '../test/support/registry.js';
import { benchCard } from './lib/bench-card.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    connections: { type: 'string', default: '50' },
    writes: { type: 'string', default: '0.2' },
    soak: { type: 'string' },
    interval: { type: 'string', default: '15' },
    pool: { type: 'string', default: '2000' },
  },
});
const soakSeconds = values.soak ? Number(values.soak) : undefined;
const seconds = soakSeconds ?? Number(values.seconds);
const connections = Number(values.connections);
const writeShare = Number(values.writes);
const pool = Number(values.pool);
const intervalSeconds = Number(values.interval);
for (const [name, v] of Object.entries({ seconds, connections, writeShare, pool, intervalSeconds })) {
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a non-negative number`);
}

const TOKEN = 'bench-writer-token-0123456789';
const QUERIES = ['translate invoices', 'weather forecast', 'files', 'finance tax', 'calendar', 'search documents', 'pdf', 'summarize', 'translation', 'vat'];
const SAMPLE_MS = 250;

// --- the server -----------------------------------------------------------------------------

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-load-'));
const registry = await spawnRegistry({
  REGISTRY_DATA_DIR: dataDir,
  // Not the admin: rate limits apply to this principal, only raised far above what the run sends.
  REGISTRY_TOKENS: `bench:${TOKEN}`,
  REGISTRY_RATE_WRITES_PER_MINUTE: '10000000',
  REGISTRY_RATE_READS_PER_MINUTE: '10000000',
  REGISTRY_RATE_REQUESTS_PER_MINUTE: '10000000',
});
// spawnRegistry keeps every log line it reads; a long run must not fill this process instead.
registry.child.stdout!.removeAllListeners('data');
registry.child.stdout!.resume();
const serverPid = registry.child.pid!;

/**
 * The server's memory from /proc/<pid>/status, in MiB: VmRSS, VmHWM (peak RSS), and RSS split
 * into anonymous memory (JS heap, malloc) and file-backed pages (mapped code, SQLite files).
 */
function serverMemory(): { rss: number; peak: number; anon: number; file: number } {
  const status = fs.readFileSync(`/proc/${serverPid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024, anon: kb('RssAnon') / 1024, file: (kb('RssFile') + kb('RssShmem')) / 1024 };
}

/** JS heap in use and reserved, from the server's own /metrics (prom-client default metrics), in MiB. */
async function serverHeap(): Promise<{ used: number; total: number; external: number }> {
  const text = await (await fetch(`${registry.url}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  return { used: value('nodejs_heap_size_used_bytes'), total: value('nodejs_heap_size_total_bytes'), external: value('nodejs_external_memory_bytes') };
}

// --- the requests ---------------------------------------------------------------------------

let sequence = 0;
function card(n: number) {
  const name = `Load Agent ${n}`;
  return benchCard(name, `https://load-${process.pid}-${n}.example.org/a2a`, `${name} translates and checks invoices (${sequence}).`);
}

type Kind = 'search' | 'register';
interface Context {
  kind?: Kind;
  started?: bigint;
}
const latencies: Record<Kind, number[]> = { search: [], register: [] };
const counts = { completed: 0, rateLimited: 0, errors: 0 };
const errorSamples: string[] = [];

function body(kind: Kind): string {
  const n = ++sequence;
  const data =
    kind === 'register'
      ? { register: { agentCard: card(soakSeconds ? n % pool : n) } }
      : { search: { query: QUERIES[n % QUERIES.length], limit: 10 } };
  return JSON.stringify({ jsonrpc: '2.0', id: n, method: 'SendMessage', params: { message: { messageId: `m-${n}`, role: 'ROLE_USER', parts: [{ data, mediaType: 'application/json' }] } } });
}

function classify(status: number, text: string): 'completed' | 'rateLimited' | 'error' {
  if (status === 429) return 'rateLimited';
  try {
    const answer = JSON.parse(text) as { result?: { task?: { status?: { state?: string; message?: { parts?: Array<{ data?: { error?: { code?: string } } }> } } } } };
    const taskStatus = answer.result?.task?.status;
    if (taskStatus?.state === 'TASK_STATE_COMPLETED') return 'completed';
    if (taskStatus?.message?.parts?.some((p) => p.data?.error?.code === 'RATE_LIMITED')) return 'rateLimited';
  } catch {
    /* not JSON: an error */
  }
  return 'error';
}

// --- the run --------------------------------------------------------------------------------

const memory: Array<{ t: number; rss: number }> = [];
let peakSampled = 0;
const sampler = setInterval(() => {
  const m = serverMemory();
  peakSampled = Math.max(peakSampled, m.rss);
}, SAMPLE_MS);

const loadBefore = os.loadavg();
console.log(
  `registry pid ${serverPid} at ${registry.url}; ${connections} connections for ${seconds} s; ${Math.round(writeShare * 100)}% registrations ` +
    `(${soakSeconds ? `pool of ${pool} agents` : 'unique agents'}); machine: ${os.cpus().length} cores, load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`,
);
const startMemory = serverMemory();
console.log(`server RSS before: ${startMemory.rss.toFixed(1)} MiB`);

const started = Date.now();
let reporter: NodeJS.Timeout | undefined;
if (soakSeconds) {
  console.log('   t(s)       RSS      anon      file   heap used  heap total  external    requests   (MiB)');
  const col = (n: number, w = 9) => n.toFixed(1).padStart(w);
  reporter = setInterval(() => {
    void serverHeap().then((heap) => {
      const m = serverMemory();
      memory.push({ t: (Date.now() - started) / 1000, rss: m.rss });
      console.log(
        `${((Date.now() - started) / 1000).toFixed(0).padStart(7)} ${col(m.rss)} ${col(m.anon)} ${col(m.file)} ${col(heap.used, 11)} ${col(heap.total, 11)} ${col(heap.external)} ${String(counts.completed + counts.rateLimited + counts.errors).padStart(11)}`,
      );
    });
  }, intervalSeconds * 1000);
}

const result = await autocannon({
  url: registry.url,
  connections,
  duration: seconds,
  timeout: 30,
  requests: [
    {
      method: 'POST',
      path: '/a2a/jsonrpc',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${TOKEN}` },
      setupRequest: (request, context) => {
        const ctx = context as Context;
        ctx.kind = Math.random() < writeShare ? 'register' : 'search';
        ctx.started = process.hrtime.bigint();
        return { ...request, body: body(ctx.kind) };
      },
      onResponse: (status, text, context) => {
        const ctx = context as Context;
        if (ctx.kind && ctx.started) latencies[ctx.kind].push(Number(process.hrtime.bigint() - ctx.started) / 1e6);
        const outcome = classify(status, text);
        if (outcome === 'completed') counts.completed++;
        else if (outcome === 'rateLimited') counts.rateLimited++;
        else {
          counts.errors++;
          if (errorSamples.length < 5) errorSamples.push(`HTTP ${status}: ${text.slice(0, 200)}`);
        }
      },
    },
  ],
});
clearInterval(sampler);
clearInterval(reporter);

// --- the report -----------------------------------------------------------------------------

const end = serverMemory();
const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
};
const total = result.requests.total;
const connectionErrors = result.errors;
console.log(`\n${total} requests in ${result.duration.toFixed(1)} s: ${(total / result.duration).toFixed(0)} req/s (mean ${result.requests.average.toFixed(0)} req/s per second)`);
console.log(`latency all        p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms  max ${result.latency.max} ms`);
for (const kind of ['search', 'register'] as const) {
  const l = latencies[kind];
  console.log(`latency ${kind.padEnd(10)} p50 ${pct(l, 0.5).toFixed(1)} ms  p99 ${pct(l, 0.99).toFixed(1)} ms  (${l.length} requests)`);
}
console.log(`completed ${counts.completed}, rate-limited ${counts.rateLimited}, errors ${counts.errors + connectionErrors} (answers ${counts.errors}, connection errors/timeouts ${connectionErrors}/${result.timeouts})`);
console.log(`server RSS: start ${startMemory.rss.toFixed(1)} MiB, end ${end.rss.toFixed(1)} MiB, peak ${Math.max(end.peak, peakSampled).toFixed(1)} MiB (VmHWM)`);
console.log(`load average after: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
if (soakSeconds && memory.length >= 4) {
  // Compare the second half with the first (after warm-up): a leak shows as steady growth.
  const half = Math.floor(memory.length / 2);
  const avg = (xs: typeof memory) => xs.reduce((s, m) => s + m.rss, 0) / xs.length;
  const first = avg(memory.slice(1, half));
  const second = avg(memory.slice(half));
  console.log(`soak: mean RSS ${first.toFixed(1)} MiB in the first half (after the first sample), ${second.toFixed(1)} MiB in the second (${(((second - first) / first) * 100).toFixed(1)}%)`);
}
for (const sample of errorSamples) console.log(`  error: ${sample}`);

await registry.stop();
fs.rmSync(dataDir, { recursive: true, force: true });
if (counts.errors + connectionErrors > 0) process.exitCode = 1;
