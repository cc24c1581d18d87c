/**
 * Test harness: real registries on 127.0.0.1 (random port, temp data dir), in-process through the
 * same composition root as `npm start`, or as a child process for restart and crash tests; and
 * SDK clients that talk to them over real HTTP.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { Writable } from 'node:stream';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfig, type RegistryConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/observability/logger.js';
import { startRegistry, type RunningRegistry } from '../../src/server.js';
import { BUILT_MAIN, REPO_ROOT, ensureBuilt } from './built.js';
import { tempDir } from './temp.js';

export { REPO_ROOT } from './built.js';
export { removeTempDir, tempDir } from './temp.js';
export const CORPUS_DIR = fileURLToPath(new URL('../fixtures/corpus/', import.meta.url));

export const TOKENS = {
  admin: 'admin-token-0123456789abcdef',
  alice: 'alice-token-0123456789abcdef',
  bob: 'bob-token-0123456789abcdef-xyz',
} as const;
export const TOKENS_ENV = Object.entries(TOKENS)
  .map(([p, t]) => `${p}:${t}`)
  .join(',');

/** The page-token secret the harness's registries share unless a test says otherwise (see startTestRegistry). */
export const TEST_PAGE_TOKEN_SECRET = 'test-harness-page-token-secret-0123456789';

export interface TestRegistry extends RunningRegistry {
  dataDir: string;
}

/** A log destination that keeps every line written to it, parsed, in `lines`. */
export function logCapture(): { lines: Record<string, unknown>[]; stream: Writable } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, stream };
}

/**
 * Starts a registry in this process. `env` overrides the test defaults; `adjust` changes what no
 * variable sets (a watch lease's timing) before it starts. `logTo`: where its log lines go (a
 * logCapture's stream, with LOG_LEVEL in `env`: the tests' default level is silent).
 */
export async function startTestRegistry(
  env: Record<string, string | undefined> = {},
  adjust?: (config: RegistryConfig) => void,
  logTo?: Writable,
): Promise<TestRegistry> {
  const dataDir = env.REGISTRY_DATA_DIR ?? tempDir();
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    REGISTRY_TOKENS: TOKENS_ENV,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // The tests' HTTP clients run in this process, beside the server: on a loaded machine the
    // loop can take more than the default 5 s between a client reusing an idle keep-alive
    // connection (its own limit is the server's less a margin) and the server reading the
    // request, by which time the server has closed the connection as idle: ECONNRESET (cli.test's
    // backup test, its registrations going on beside the CLI). Not what any test is about; a
    // test of the keep-alive timeout sets its own (connections.test).
    REGISTRY_KEEP_ALIVE_TIMEOUT_SECONDS: '120',
    // Set, as a deployment of several replicas sets it: unset, the key is derived from the tokens
    // through scrypt (about 60 ms of CPU a start, on purpose), hundreds of times a suite. The
    // tests of that derivation unset it (REGISTRY_PAGE_TOKEN_SECRET: undefined).
    REGISTRY_PAGE_TOKEN_SECRET: TEST_PAGE_TOKEN_SECRET,
    ...env,
    REGISTRY_DATA_DIR: dataDir,
  });
  adjust?.(config);
  const registry = await startRegistry(config, createLogger(config.logLevel, logTo));
  // Tests search right after starting: wait for the index (start-up itself does not).
  await registry.ready;
  return Object.assign(registry, { dataDir });
}

export interface ChildRegistry {
  url: string;
  child: ChildProcess;
  /** Every log line the child wrote, parsed. */
  logs: Record<string, unknown>[];
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/**
 * Child registries still running. A test that fails before stopping its child must neither leave
 * a registry running (holding its data directory) nor keep the test process alive through the
 * child's pipes: after the file's last test, or at exit, whatever is left is killed.
 */
const running = new Set<ChildProcess>();
const killRunning = (): void => {
  for (const child of running) child.kill('SIGKILL');
};
after(killRunning);
process.once('exit', killRunning);

/** How long a child may take to listen: generous, for a CI machine under load. */
const START_TIMEOUT_MS = 60_000;

/**
 * Starts the built registry as a child process (as `npm start` runs it) and waits until it
 * listens; `startTimeoutMs` for one with much to load (benchmarks).
 */
export async function spawnRegistry(
  env: Record<string, string>,
  options: { startTimeoutMs?: number; /** Resolve once it listens, before its search index has loaded. */ listeningOnly?: boolean } = {},
): Promise<ChildRegistry> {
  const startTimeoutMs = options.startTimeoutMs ?? START_TIMEOUT_MS;
  ensureBuilt();
  const child = spawn(process.execPath, [path.join(REPO_ROOT, BUILT_MAIN)], {
    cwd: REPO_ROOT,
    // A data directory of its own unless the test names one: the child runs in the checkout, where
    // the default ./data would collect what it saves (a PostgreSQL replica's search index snapshot).
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', REGISTRY_DATA_DIR: tempDir(), REGISTRY_PAGE_TOKEN_SECRET: TEST_PAGE_TOKEN_SECRET, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => {
      running.delete(child);
      resolve(code ?? signal ?? -1);
    }),
  );
  let listeningAt: string | undefined;
  let indexLoaded = false;
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`registry did not start in ${startTimeoutMs / 1000} s: ${stderr}`));
    }, startTimeoutMs);
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        // It listens before its index has loaded; tests search at once, so wait for both.
        if (entry.msg === 'registry listening') listeningAt = String(entry.url);
        // 'search index loaded', or '… loaded from its snapshot and the change log' on a restart.
        if (typeof entry.msg === 'string' && entry.msg.startsWith('search index loaded')) indexLoaded = true;
        if (listeningAt !== undefined && (indexLoaded || options.listeningOnly)) {
          clearTimeout(timer);
          resolve(listeningAt);
        }
      } catch {
        /* not a log line */
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`registry exited (${code}) before listening: ${stderr}`));
    });
  });
  return {
    url,
    child,
    logs,
    exited,
    stop: (signal: NodeJS.Signals = 'SIGTERM') => {
      child.kill(signal);
      return stopped(child, exited);
    },
  };
}

/**
 * How long a stopped child may take to exit before it is killed: far beyond a registry's own
 * shutdown (its grace, an index save), so only a process stuck at exit reaches it.
 */
const EXIT_TIMEOUT_MS = 90_000;

/**
 * `exited`, or SIGKILL (said on stderr) once a stopped child has not exited in EXIT_TIMEOUT_MS.
 * Node.js can deadlock at exit (its main thread and a V8 compiler thread waiting on each other:
 * nodejs/node#54918), seen once in a child whose test had passed: waited for without a bound, a
 * stuck child held its file's run, and CI's, until CI's own limit ended it, naming nothing.
 */
function stopped(child: ChildProcess, exited: Promise<number | string>): Promise<number | string> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<void>((resolve) => (timer = setTimeout(resolve, EXIT_TIMEOUT_MS)));
  return Promise.race([exited, stuck]).then((outcome) => {
    clearTimeout(timer);
    if (outcome !== undefined) return outcome;
    process.stderr.write(`registry child ${child.pid} had not exited ${EXIT_TIMEOUT_MS / 1000} s after it was stopped: killed (SIGKILL)\n`);
    child.kill('SIGKILL');
    return exited;
  });
}
