/**
 * The HTTP half of bench/scale.ts on its own, over data directories that already hold a saved
 * index (issue 22 point 4: search throughput over HTTP at 1M within 80 % of that at 10k), so that
 * one change can be measured in minutes instead of a fill and a re-index. Per variant (node flags,
 * a checkout) and directory, a registry in a process of its own over a copy of the directory,
 * its answer cache off; bench/scale.ts's query mix (1-3 words with one or two filters, and a
 * fifth with filters only) as JSON-RPC SendMessage from `--concurrency` clients; the processes
 * measured in turn, `--rounds` times, so the machine's load falls on each alike. Per phase:
 * requests per second, the registry's CPU time per request (what a busy machine disturbs least),
 * and its garbage collection in that phase (from --trace-gc: scavenges, mark-compacts and their
 * pauses, per request).
 *
 *   npm run build && node --import tsx bench/scale-http.ts --dir 10000=/tmp/s/10000 --dir 1000000=/tmp/s/1000000 \
 *        [--variant base=] [--variant 'semi64=--max-semi-space-size=64'] [--variant 'other=@<checkout>'] \
 *        [--seconds 10] [--rounds 3] [--concurrency 16] [--queries 1000] [--profile-dir <dir>]
 *
 * `--dir size=<dir>`: a data directory filled by bench/scale.ts (`--data-dir`) whose registry has
 * been started once (so it holds `search-index.snapshot`); it is copied per process (the registry
 * writes its snapshot back at shutdown). `--variant name=<node flags>` (repeatable; default one,
 * `base=`): the flags each process runs with, beside `--trace-gc` and NODE_OPTIONS (give 1M heap
 * room there). `--variant name=<flags>@<checkout>` runs that built checkout's registry instead.
 * `--profile-dir` writes each process's CPU profile there (--cpu-prof) and prints its self time
 * by folder and function within the measured phases only (start-up and loading left out);
 * `--summarize <file.cpuprofile>` prints a whole profile's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { BUILT_MAIN, REPO_ROOT } from '../test/support/built.js';
import { generateQueries } from './lib/generate-entries.js';
import { jsonRpcSender, runLoad } from './lib/http-load.js';
import { cpuMsOf } from './lib/process-cpu.js';

const { values } = parseArgs({
  options: {
    dir: { type: 'string', multiple: true, default: [] },
    variant: { type: 'string', multiple: true, default: [] },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '16' },
    queries: { type: 'string', default: '1000' },
    'profile-dir': { type: 'string', default: '' },
    summarize: { type: 'string', default: '' },
  },
});

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * Self time of a CPU profile by where the code is: the search index, GC, the rest by package;
 * only the samples within `windows` (monotonic µs, the clock V8 stamps samples with) when given.
 */
function summarize(file: string, windows?: readonly [number, number][]): void {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (windows && !windows.some(([from, to]) => at >= from && at <= to)) return;
    self.set(id, (self.get(id) ?? 0) + delta);
  });
  const parts = new Map<string, number>();
  const fns = new Map<string, number>();
  let total = 0;
  for (const [id, us] of self) {
    const { functionName, url } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    total += us;
    const part = url.includes('/src/search/')
      ? 'src/search'
      : url.includes('/dist/src/') || url.includes('/src/')
        ? `src/${url.split(/\/src\//).pop()!.split('/')[0]}`
        : url.includes('node_modules/')
          ? `npm ${url.split('node_modules/').pop()!.split('/').slice(0, url.includes('node_modules/@') ? 2 : 1).join('/')}`
          : url.startsWith('node:')
            ? 'node:'
            : functionName.startsWith('(')
              ? functionName
              : 'native';
    parts.set(part, (parts.get(part) ?? 0) + us);
    const fn = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}`;
    fns.set(fn, (fns.get(fn) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1)} %`.padStart(7);
  console.log(`${file}: ${(total / 1e6).toFixed(1)} s busy`);
  for (const [part, us] of [...parts].sort((a, b) => b[1] - a[1]).slice(0, 14)) console.log(`  ${pct(us)}  ${part}`);
  console.log('  top functions (self):');
  for (const [fn, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${pct(us)}  ${fn}`);
}

if (values.summarize) {
  summarize(values.summarize);
  process.exit(0);
}

const dirs = values.dir.map((d) => {
  const [size, dir] = d.split(/=(.*)/s);
  if (!size || !dir || !fs.existsSync(path.join(dir, 'search-index.snapshot'))) throw new Error(`--dir ${d}: expected size=<data directory holding search-index.snapshot>`);
  return { size: Number(size), dir };
});
const variants = (values.variant.length ? values.variant : ['base=']).map((v) => {
  const [name, rest = ''] = v.split(/=(.*)/s);
  const [flags, checkout] = rest.split('@');
  return { name: name!, flags: flags!.split(' ').filter(Boolean), checkout: checkout ? path.resolve(checkout) : REPO_ROOT };
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const concurrency = Number(values.concurrency);
const TOKEN = 'bench-admin-token-0123456789';

// bench/scale.ts's mix: 1-3 words with one or two filters, and a fifth with filters only.
const count = Number(values.queries);
const queries = [...generateQueries(count, 3, true), ...generateQueries(Math.floor(count / 4), 5, true).map((q) => ({ ...q, text: '' }))];
const parts = queries.map((q) => [{ data: { search: { query: q.text, ...(q.filter ? { filter: q.filter } : {}), limit: 20 } }, mediaType: 'application/json' }]);

const profileName = (variant: string, size: number): string => `${variant}-${size}.cpuprofile`;
/** Monotonic µs, the clock of a CPU profile's samples. */
const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

/** One --trace-gc line: its kind and pause. */
interface GcEvent {
  kind: 'scavenge' | 'mark-compact' | 'other';
  ms: number;
}
interface Child {
  label: string;
  size: number;
  proc: ChildProcess;
  work: string;
  url: string;
  gc: GcEvent[];
  /** The measured phases (monotonic µs), for the profile. */
  phases: [number, number][];
  send: (i: number) => Promise<boolean>;
}

async function start(size: number, dir: string, variant: (typeof variants)[number]): Promise<Child> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-scale-http-'));
  const copying = performance.now();
  fs.cpSync(dir, work, { recursive: true });
  const copied = (performance.now() - copying) / 1000;
  const profileDir = values['profile-dir'];
  const args = [
    '--trace-gc',
    ...variant.flags,
    ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${profileName(variant.name, size)}`] : []),
    path.join(variant.checkout, BUILT_MAIN),
  ];
  const starting = performance.now();
  const proc = spawn(process.execPath, args, {
    cwd: variant.checkout,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info', // as bench/scale.ts's processes (and npm start) run
      REGISTRY_DATA_DIR: work,
      REGISTRY_TOKENS: `admin:${TOKEN}`,
      REGISTRY_RATE_LIMITS: 'false',
      REGISTRY_REFRESH_SECONDS: '0',
      REGISTRY_SEARCH_CACHE_ENTRIES: '0',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const gc: GcEvent[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: proc.stdout! }).on('line', (line) => {
      // "[pid:0x…]   1234 ms: Scavenge 1900.1 (2000.2) -> 1899.9 (2000.2) MB, pooled: 0 MB, 1.23 / 0.00 ms  (average mu = …"
      const m = /ms: (Scavenge|Mark-Compact|Minor Mark-Sweep|Mark-Sweep)[^,]*,.*? ([\d.]+) \/ [\d.]+ ms/.exec(line);
      if (m) {
        gc.push({ kind: m[1] === 'Scavenge' || m[1] === 'Minor Mark-Sweep' ? 'scavenge' : 'mark-compact', ms: Number(m[2]) });
        return;
      }
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'registry listening') resolve(String(entry.url));
      } catch {
        /* another line */
      }
    });
    proc.once('exit', (code) => reject(new Error(`the registry (${variant.name}, ${size}) exited (${code}) before listening`)));
  });
  for (;;) {
    if (await fetch(`${url}/readyz`).then((r) => r.ok, () => false)) break;
    if (performance.now() - starting > 900_000) throw new Error('not ready in 15 minutes');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const label = `${variant.name} ${size}`;
  console.log(`${label}: copied in ${copied.toFixed(1)} s, ready after ${((performance.now() - starting) / 1000).toFixed(1)} s`);
  const search = jsonRpcSender(url, undefined, 'TASK_STATE_COMPLETED');
  return { label, size, proc, work, url, gc, phases: [], send: (i) => search(parts[i % parts.length]!) };
}

/** Waits until the process idles (under 5 % of a core over 2 s; 15 % when profiled: the sampling costs that on a busy machine). */
async function idle(pid: number): Promise<void> {
  const limit = values['profile-dir'] ? 300 : 100;
  for (;;) {
    const before = cpuMsOf(pid);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const after = cpuMsOf(pid);
    if (before === undefined || after === undefined || after - before < limit) return;
  }
}

const children: Child[] = [];
const stop = async () => {
  for (const c of children) {
    await new Promise<void>((resolve) => {
      if (c.proc.exitCode !== null) return resolve();
      c.proc.once('exit', () => resolve());
      c.proc.kill('SIGTERM');
    });
    fs.rmSync(c.work, { recursive: true, force: true });
  }
};
try {
  console.log(`node ${process.version}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; ${queries.length} queries, ${concurrency} clients, ${rounds} rounds of ${seconds} s`);
  for (const variant of variants) for (const { size, dir } of dirs) children.push(await start(size, dir, variant));
  for (const c of children) {
    await idle(c.proc.pid!);
    await runLoad('warm-up', { seconds: 2, concurrency }, c.send);
  }
  const rates = new Map<string, number[]>();
  const cpus = new Map<string, number[]>();
  for (let round = 1; round <= rounds; round++) {
    for (const c of children) {
      await idle(c.proc.pid!);
      const gcFrom = c.gc.length;
      const cpu0 = cpuMsOf(c.proc.pid)!;
      const from = monotonicUs();
      const r = await runLoad(c.label, { seconds, concurrency }, c.send);
      c.phases.push([from, monotonicUs()]);
      const cpu = (cpuMsOf(c.proc.pid)! - cpu0) / r.requests;
      const events = c.gc.slice(gcFrom);
      const sum = (kind: GcEvent['kind']) => events.filter((e) => e.kind === kind).reduce((s, e) => s + e.ms, 0);
      const n = (kind: GcEvent['kind']) => events.filter((e) => e.kind === kind).length;
      console.log(
        `#${round} ${c.label.padEnd(24)} ${r.perSecond.toFixed(0).padStart(6)} req/s  CPU ${cpu.toFixed(3)} ms/req  p50 ${r.p50Ms.toFixed(1)} p99 ${r.p99Ms.toFixed(1)} ms  ` +
          `GC: ${n('scavenge')} scavenges ${sum('scavenge').toFixed(0)} ms, ${n('mark-compact')} mark-compacts ${sum('mark-compact').toFixed(0)} ms ` +
          `(${((sum('scavenge') + sum('mark-compact')) / r.requests).toFixed(3)} ms/req)${r.errors ? `  ${r.errors} ERRORS` : ''}`,
      );
      (rates.get(c.label) ?? rates.set(c.label, []).get(c.label)!).push(r.perSecond);
      (cpus.get(c.label) ?? cpus.set(c.label, []).get(c.label)!).push(cpu);
    }
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log('\nmedians over the rounds:');
  for (const c of children) console.log(`${c.label.padEnd(24)} ${med(rates.get(c.label)!).toFixed(0).padStart(6)} req/s  CPU ${med(cpus.get(c.label)!).toFixed(3)} ms/req`);
  for (const variant of variants) {
    const [small, ...large] = dirs.map((d) => `${variant.name} ${d.size}`).sort((a, b) => Number(a.split(' ').pop()) - Number(b.split(' ').pop()));
    for (const l of large) {
      const ratios = rates.get(l)!.map((r, i) => r / rates.get(small!)![i]!);
      const cpuRatios = cpus.get(small!)!.map((c, i) => c / cpus.get(l)![i]!);
      console.log(`${l} / ${small}: rate ${ratios.map((r) => r.toFixed(2)).join(', ')} (median ${med(ratios).toFixed(2)}); CPU per request ${cpuRatios.map((r) => r.toFixed(2)).join(', ')} (median ${med(cpuRatios).toFixed(2)})`);
    }
  }
} finally {
  await stop();
}
if (values['profile-dir']) {
  console.log('\nCPU profiles, the measured phases only:');
  for (const c of children) summarize(path.join(values['profile-dir'], profileName(c.label.split(' ')[0]!, c.size)), c.phases);
}
