/**
 * Runs an integrity check (./integrity.ts) in a child process. better-sqlite3 is synchronous and
 * a check reads the whole file, about 2 s per 100,000 entries (docs/scaling.md), which on the
 * event loop would stop everything for as long. A worker thread would not stop the
 * event loop, but it cannot be stopped either while SQLite is in its check (a thread is only
 * terminated between JavaScript calls): a shutdown, and the process's exit, waited for the rest
 * of the check. A child process is killed at once, its read lock going with it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { IntegrityCheckKind, IntegrityReport } from './integrity.js';
import type { IntegrityChildReply } from './integrity-child.js';

/** A check stopped before it ended (the registry closing): no verdict. */
export class IntegrityCheckStopped extends Error {
  constructor() {
    super('the integrity check was stopped before it ended');
  }
}

/**
 * The options the child takes from this process's: the module loaders (`--import tsx` in the
 * tests) and nothing else (not a --test runner's, an inspector's port or a heap limit sized for serving).
 */
function loaderOptions(execArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i]!;
    if (/^--(import|require|loader|experimental-loader)=/.test(arg)) kept.push(arg);
    else if (/^--(import|require|loader|experimental-loader)$/.test(arg) && i + 1 < execArgv.length) kept.push(arg, execArgv[++i]!);
  }
  return kept;
}

export interface RunningIntegrityCheck {
  /** The report; rejects when the check could not run (the child failed) or was stopped. */
  readonly report: Promise<IntegrityReport>;
  /** Kills the child: `report` rejects with IntegrityCheckStopped. */
  stop(): void;
}

export function checkIntegrityInChild(file: string, check: IntegrityCheckKind): RunningIntegrityCheck {
  let child: ChildProcess | undefined;
  let stopped = false;
  const report = new Promise<IntegrityReport>((resolve, reject) => {
    child = fork(new URL('./integrity-child.js', import.meta.url), [file, check], {
      execArgv: loaderOptions(process.execArgv),
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'json',
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-2000)));
    let reply: IntegrityChildReply | undefined;
    child.on('message', (message: IntegrityChildReply) => (reply = message));
    child.on('error', (error) => reject(error));
    child.on('exit', (code, signal) => {
      if (stopped) return reject(new IntegrityCheckStopped());
      if (reply && 'report' in reply) return resolve(reply.report);
      if (reply) return reject(Object.assign(new Error(reply.error), reply.code ? { code: reply.code } : {}));
      reject(new Error(`the integrity check's process ended without a report (${signal ?? `exit status ${code}`})${stderr ? `: ${stderr.trim()}` : ''}`));
    });
  });
  return {
    report,
    stop: () => {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      stopped = true;
      child.kill('SIGKILL');
    },
  };
}
