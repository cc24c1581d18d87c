/**
 * Servers in processes of their own for the HTTP benchmarks (bench/round-trip.ts,
 * bench/side-by-side.ts), and one timed phase of JSON-RPC requests against one of them, with the
 * server's CPU time per request (Linux /proc).
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { BUILT_MAIN, REPO_ROOT } from '../../test/support/built.js';
import { streamEntries, subjectOfGenerated } from './generate-entries.js';
import { cpuMsOf } from './process-cpu.js';

/**
 * Registers `count` generated entries (seed 11) in-process with a built checkout's own code (so
 * its schema), into the registry `env` configures (REGISTRY_DATA_DIR), then closes it.
 */
export async function registerGenerated(checkout: string, env: Record<string, string>, count: number): Promise<void> {
  const built = async <T>(module: string): Promise<T> => (await import(pathToFileURL(path.join(checkout, 'dist/src', module)).href)) as T;
  const { loadConfig } = await built<typeof import('../../src/config/config.js')>('config/config.js');
  const { createLogger } = await built<typeof import('../../src/observability/logger.js')>('observability/logger.js');
  const { startRegistry } = await built<typeof import('../../src/server.js')>('server.js');
  const loader = await startRegistry(loadConfig({ ...process.env, ...env, LOG_LEVEL: 'warn' }), createLogger('warn'));
  try {
    for (const entry of streamEntries(count, 11)) await loader.service.register(subjectOfGenerated(entry), { principal: 'admin', isAdmin: true });
  } finally {
    await loader.close();
  }
}

export interface ChildServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `node <script>` (TypeScript through tsx, from this checkout) in `cwd` and resolves with
 * its URL once a line of its standard output names it. With PROFILE_DIR set, a built registry
 * writes a CPU profile there (with PROFILE_ALL=1 too, every other server, e.g. the SDK's no-op).
 */
export async function startChild(script: string, cwd: string, env: Record<string, string>, urlOf: (line: string) => string | undefined): Promise<ChildServer> {
  const profileDir = process.env.PROFILE_DIR;
  const args = [
    ...(script.endsWith('.ts') ? ['--import', 'tsx'] : []),
    ...(profileDir && (script.endsWith(BUILT_MAIN) || process.env.PROFILE_ALL) ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    script,
  ];
  const child = spawn(process.execPath, args, { cwd: script.endsWith('.ts') ? REPO_ROOT : cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    // A URL known before any line (a registry given its port): the caller waits for it to answer.
    const known = urlOf('');
    if (known) {
      child.stdout!.resume();
      return resolve(known);
    }
    const lines = readline.createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const url = urlOf(line);
      if (url) {
        lines.close();
        // Keep draining (the registry logs a line per request) without parsing it here.
        child.stdout!.resume();
        resolve(url);
      }
    });
    child.once('exit', (code) => reject(new Error(`${script} exited (${code}) before listening`)));
  });
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * The registry of a built checkout, as `npm start` runs it, once it is ready (its index loaded).
 * With PORT=0 its URL is read from its "registry listening" line; a registry logging above info
 * (LOG_LEVEL=warn) writes none, so it is given a free port instead.
 */
export async function startRegistryChild(checkout: string, env: Record<string, string>): Promise<ChildServer> {
  const quiet = env.LOG_LEVEL !== undefined && !['trace', 'debug', 'info'].includes(env.LOG_LEVEL);
  const port = quiet && (env.PORT ?? '0') === '0' ? String(await freePort(env.HOST ?? '127.0.0.1')) : undefined;
  const known = port ? `http://${env.HOST ?? '127.0.0.1'}:${port}` : undefined;
  const child = await startChild(path.join(checkout, BUILT_MAIN), checkout, port ? { ...env, PORT: port } : env, (line) => {
    if (known) return known;
    if (!line) return undefined;
    try {
      const entry = JSON.parse(line) as { msg?: string; url?: string };
      return entry.msg === 'registry listening' ? entry.url : undefined;
    } catch {
      return undefined;
    }
  });
  // The registry listens before its search index has loaded (GET /readyz says when it has):
  // measure only a ready registry.
  for (const started = Date.now(); ; ) {
    const ready = await fetch(new URL('/readyz', child.url)).then((r) => r.ok, () => false);
    if (ready) break;
    if (Date.now() - started > 120_000) throw new Error('the registry did not become ready within 120 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return child;
}

export interface JsonRpcPhase {
  url: string;
  token?: string;
  body: () => string;
  /** The task state a correct answer ends in. */
  expect: string;
  /** The server process answering it, whose CPU time per request is measured. */
  pid?: number;
}

export interface PhaseResult {
  perSecond: number;
  /** Undefined where /proc cannot tell. */
  cpuPerRequestMs: number | undefined;
  p50: number;
  p99: number;
  wrong: number;
  sample: string;
}

/** `connections` clients POSTing the phase's JSON-RPC bodies for `duration` seconds (or, given `amount`, that many requests). */
export async function measurePhase(phase: JsonRpcPhase, connections: number, duration: number, amount?: number): Promise<PhaseResult> {
  let wrong = 0;
  let sample = '';
  const cpuBefore = cpuMsOf(phase.pid);
  const result = await autocannon({
    url: phase.url,
    connections,
    ...(amount === undefined ? { duration } : { amount }),
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: '/a2a/jsonrpc',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...(phase.token ? { authorization: `Bearer ${phase.token}` } : {}) },
        setupRequest: (request) => ({ ...request, body: phase.body() }),
        onResponse: (status, text) => {
          if (status !== 200 || !text.includes(`"state":"${phase.expect}"`)) {
            wrong++;
            sample ||= `HTTP ${status}: ${text.slice(0, 300)}`;
          }
        },
      },
    ],
  });
  const cpuAfter = cpuMsOf(phase.pid);
  const cpuPerRequestMs = cpuBefore !== undefined && cpuAfter !== undefined && result.requests.total > 0 ? (cpuAfter - cpuBefore) / result.requests.total : undefined;
  return { perSecond: result.requests.total / result.duration, cpuPerRequestMs, p50: result.latency.p50, p99: result.latency.p99, wrong: wrong + result.errors, sample };
}

/** A port nothing listens on now, for a child to listen on (a bench's, so the race is harmless). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The middle value (for an even count, the upper of the two middle ones). */
export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
