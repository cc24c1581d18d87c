/**
 * The log's standard output destination (pino's default: sonic-boom, asynchronous, flushed
 * synchronously on exit), pinned for whoever changes it (docs/benchmarks.md, 2026-12-04 evening,
 * tried one write per event-loop turn). In processes of their own writing to a real pipe, as
 * `npm start` does (the built dist/): no line is held back while the process goes on, and none is
 * lost when the process exits in the middle of a burst of lines, by process.exit (the SIGTERM
 * shutdown's way out) or by an uncaught exception.
 *
 * And a log that cannot be written costs log lines, never the registry: with its standard output
 * on a device that is always full (/dev/full, whose writes fail with ENOSPC) or on a file system
 * that fills up (a real tmpfs, root only), the registry answers, counts the lines it dropped
 * (registry_log_lines_dropped_total), says so on standard error and, once the log takes lines
 * again, in a warning line, and ends on SIGTERM. (pino's default destination threw on the failed
 * write, and its exit hook then retried it for ever: the process answered nothing and outlived
 * SIGTERM.)
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { BUILT_MAIN, REPO_ROOT, ensureBuilt } from './support/built.js';
import { eventually } from './support/eventually.js';
import { metricValue } from './support/metrics.js';
import { freePort } from './support/ports.js';
import { rawPost } from './support/raw-http.js';
import { tempDir } from './support/temp.js';
import { fill, mountTmpfs } from './support/tmpfs.js';

const LOGGER = pathToFileURL(path.join(REPO_ROOT, 'dist/src/observability/logger.js')).href;
/** Lines written in one turn: ~40 KB, more than one write takes while the first is in flight. */
const LINES = 400;

/** Runs `script` (an ES module) in a Node.js process of its own with `flags`; resolves with its whole stdout, stderr and exit code. */
function runChild(script: string, { flags = [], env = {} }: { flags?: string[]; env?: Record<string, string> } = {}): Promise<{ stdout: string; stderr: string; code: number | null }> {
  ensureBuilt();
  const child = spawn(process.execPath, [...flags, '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ stdout, stderr, code })));
}

/**
 * Runs `then` after writing LINES numbered lines in one turn (`before` first); resolves with the
 * child's whole stdout and exit code.
 */
function childWriting(then: string, before = '', env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string; code: number | null }> {
  const script = `
    const { createLogger } = await import(${JSON.stringify(LOGGER)});
    const log = createLogger('info');
    ${before}
    for (let i = 0; i < ${LINES}; i++) log.info({ n: i, pad: 'x'.repeat(60) }, 'line');
    ${then}`;
  return runChild(script, { env });
}

/** Every line, in order, each whole JSON. */
function assertAllLines(stdout: string): void {
  const lines = stdout.trimEnd().split('\n');
  assert.equal(lines.length, LINES, `${LINES} lines, got ${lines.length}`);
  lines.forEach((line, i) => assert.equal((JSON.parse(line) as { n: number }).n, i));
}

test('process.exit in the middle of a turn: every line of the turn is written, in order', async () => {
  const { stdout, code } = await childWriting('process.exit(0);');
  assert.equal(code, 0);
  assertAllLines(stdout);
});

test('an exit the registry decides waits for the lines before it: none is written after it, none out of order', async () => {
  // The marker is written straight to standard output once drained() resolves: had it resolved
  // early, the lines still waiting would come after it (they would be written at exit).
  const { stdout, code } = await childWriting(`
    const { stdoutDestination } = await import(${JSON.stringify(LOGGER.replace('logger.js', 'log-destination.js'))});
    await stdoutDestination().drained(5000);
    (await import('node:fs')).writeSync(1, 'END\\n');
    process.exit(0);`);
  assert.equal(code, 0);
  assert.ok(stdout.endsWith('END\n'), `the marker is last: ${JSON.stringify(stdout.slice(-80))}`);
  assertAllLines(stdout.slice(0, -'END\n'.length));
});

test('an uncaught exception in the middle of a turn: every line is written before the process dies', async () => {
  const { stdout, stderr, code } = await childWriting(`throw new Error('boom');`);
  assert.equal(code, 1);
  assert.match(stderr, /boom/);
  assertAllLines(stdout);
});

test("with libuv's thread pool busy (as a database's fsyncs on a loaded disk keep it), the lines before an exit or a crash are all written, in order", async () => {
  // One thread in the pool (UV_THREADPOOL_SIZE=1), kept busy by a key derivation of some tenths
  // of a second: a log written through the pool had its first line waiting behind it, and the
  // exit's synchronous flush wrote the 399 after it first (CI saw it, at load, without the pbkdf2).
  const busyPool = `(await import('node:crypto')).pbkdf2('p', 's', 300000, 64, 'sha512', () => {});`;
  for (const then of ['process.exit(0);', `throw new Error('boom');`]) {
    const { stdout, code } = await childWriting(then, busyPool, { UV_THREADPOOL_SIZE: '1' });
    assert.equal(code, then.startsWith('throw') ? 1 : 0);
    assertAllLines(stdout);
  }
});

test("the writing thread's sequence numbers wrap as its Int32 slots do: the writes past 2^31 still end (the log stopped for good there)", async () => {
  const { WriteThread } = await import('../src/observability/write-thread.js');
  const file = path.join(tempDir(), 'out');
  const fd = fs.openSync(file, 'w');
  try {
    const thread = new WriteThread(fd, { sequenceFrom: 2 ** 31 - 3 });
    for (let i = 0; i < 6; i++) {
      const outcome = await Promise.race([
        new Promise((resolve) => thread.write(Buffer.from(`${i}\n`), resolve)),
        // Not unref'd: a write in flight (Atomics.waitAsync) holds no event loop, and on Node.js 22
        // the test runner, finding the loop empty, cancelled the test as never settled.
        new Promise((resolve) => setTimeout(resolve, 10_000, `write ${i} never ended`)),
      ]);
      assert.deepEqual(outcome, { written: 2 });
    }
    assert.equal(fs.readFileSync(file, 'utf8'), '0\n1\n2\n3\n4\n5\n');
  } finally {
    fs.closeSync(fd);
  }
});

test('standard output, a pipe, stays blocking once the log writes (the writing thread made process.stdout, which set it non-blocking)', { skip: !fs.existsSync('/proc/self/fdinfo') && 'no /proc here' }, async () => {
  // O_NONBLOCK: every full pipe was an EAGAIN and a 100 ms wait, and the log fell behind a reader that paused.
  const { stdout, code } = await childWriting(`
    const { stdoutDestination } = await import(${JSON.stringify(LOGGER.replace('logger.js', 'log-destination.js'))});
    await stdoutDestination().drained(5000);
    const flags = parseInt((await import('node:fs')).readFileSync('/proc/self/fdinfo/1', 'utf8').match(/^flags:\\s+(\\d+)/m)[1], 8);
    (await import('node:fs')).writeSync(1, 'NONBLOCK=' + ((flags & 0o4000) !== 0) + '\\n');`);
  assert.equal(code, 0);
  assert.ok(stdout.endsWith('NONBLOCK=false\n'), stdout.slice(-80));
});

test('where no thread can be started (the permission model without --allow-worker), the lines are written all the same, and that is said once', { skip: !process.allowedNodeEnvironmentFlags.has('--permission') && 'no --permission in this Node.js' }, async () => {
  const script = `
    const { createLogger } = await import(${JSON.stringify(LOGGER)});
    const log = createLogger('info');
    log.info('first');
    setTimeout(() => log.info('second'), 50);`;
  const { stdout, stderr, code } = await runChild(script, { flags: ['--permission', '--allow-fs-read=*'] });
  assert.equal(code, 0, stderr);
  assert.deepEqual(stdout.trimEnd().split('\n').map((line) => (JSON.parse(line) as { msg: string }).msg), ['first', 'second']);
  assert.match(stderr, /^a2a-registry: the log's writing thread could not be started: .+; log lines are written through libuv's thread pool instead\n$/);
});

test('a line is written while the process goes on (a tail stays live)', async () => {
  ensureBuilt();
  const script = `
    const { createLogger } = await import(${JSON.stringify(LOGGER)});
    createLogger('info').info('alive');
    setInterval(() => {}, 60_000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const first = await new Promise<string>((resolve) => readline.createInterface({ input: child.stdout }).once('line', resolve));
    assert.equal((JSON.parse(first) as { msg: string }).msg, 'alive');
  } finally {
    child.kill('SIGKILL');
  }
});

test('a reader that stops reading: the lines waiting are bounded, those past the bound dropped and told once it reads again', { timeout: 120_000 }, async () => {
  ensureBuilt();
  // About 20 MB of lines in bursts, while nobody reads the pipe; then the reader comes back.
  const total = 120_000;
  const script = `
    const { createLogger } = await import(${JSON.stringify(LOGGER)});
    const log = createLogger('info');
    const pad = 'x'.repeat(100);
    let n = 0;
    const burst = () => {
      for (let i = 0; i < 10000; i++) log.info({ n: n++, pad }, 'line');
      if (n < ${total}) setImmediate(burst);
      else process.stderr.write('written\\n');
    };
    burst();
    setInterval(() => {}, 60_000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    child.stdout.pause();
    await new Promise<void>((resolve) => child.stderr.on('data', (d: Buffer) => d.toString().includes('written') && resolve()));
    const numbers: number[] = [];
    const warning = await new Promise<{ lostLines: number; reason: string; msg: string }>((resolve) =>
      readline.createInterface({ input: child.stdout }).on('line', (line) => {
        const entry = JSON.parse(line) as { n?: number; lostLines?: number; reason: string; msg: string };
        if (entry.n !== undefined) numbers.push(entry.n);
        if (entry.lostLines !== undefined) resolve(entry as { lostLines: number; reason: string; msg: string });
      }),
    );
    assert.equal(warning.reason, 'backlog');
    assert.match(warning.msg, /^\d+ log lines were lost: the log could not be written \(its reader did not keep up: more than 8 MB of lines were waiting\) from \S+ until now$/);
    // Every line is either written, in order, or counted as lost; the process went on.
    await eventually(async () => numbers.length + warning.lostLines === total, `${total} lines written or counted (${numbers.length} written, ${warning.lostLines} lost)`);
    assert.ok(warning.lostLines > total / 2, `most were dropped: ${warning.lostLines}`);
    assert.ok(numbers.every((n, i) => i === 0 || n > numbers[i - 1]!), 'in order');
  } finally {
    child.kill('SIGKILL');
  }
});

/** A built registry whose standard output is `stdout` (an open file), on a port of its own; stderr is read. */
async function registryLoggingTo(stdout: number, env: Record<string, string> = {}): Promise<{ url: string; child: ChildProcess; stderr: () => string; exited: Promise<number | string> }> {
  ensureBuilt();
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(REPO_ROOT, BUILT_MAIN)], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', REGISTRY_DATA_DIR: tempDir(), REGISTRY_TOKENS: 'admin:admin-token-0123456789abcdef' },
    stdio: ['ignore', stdout, 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const url = `http://127.0.0.1:${port}`;
  try {
    await eventually(async () => (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined))?.status === 200, 'the registry is ready', 60_000);
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`${(err as Error).message}; its stderr: ${stderr}`);
  }
  return { url, child, stderr: () => stderr, exited };
}

test('an exception nothing caught, or a rejection nothing handled, in the running registry is logged as a fatal JSON line with its stack, and the process exits 1', { timeout: 120_000 }, async () => {
  // The registry's own process, with a module loaded first that fails on a signal, as a defect would fail in a callback.
  const failing = `process.on('SIGUSR2', () => { throw new Error('thrown-by-test'); }); process.on('SIGWINCH', () => { Promise.reject(new Error('rejected-by-test')); });`;
  const ended = await Promise.all(
    (['SIGUSR2', 'SIGWINCH'] as const).map(async (signal) => {
      const out = tempDir();
      const file = fs.openSync(path.join(out, 'stdout'), 'w');
      const registry = await registryLoggingTo(file, { NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(failing)}` }).finally(() => fs.closeSync(file));
      registry.child.kill(signal);
      const code = await Promise.race([registry.exited, new Promise((resolve) => setTimeout(resolve, 15_000, 'still running'))]);
      if (code !== 1) registry.child.kill('SIGKILL');
      const lines = fs.readFileSync(path.join(out, 'stdout'), 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as { level: number; msg: string; origin?: string; err?: { message: string; stack: string } });
      return { code, last: lines.at(-1)! };
    }),
  );
  for (const [{ code, last }, message, said] of [
    [ended[0]!, 'thrown-by-test', 'an exception nothing caught'],
    [ended[1]!, 'rejected-by-test', 'a promise rejected with nothing to handle it'],
  ] as const) {
    assert.equal(code, 1);
    assert.equal(last.level, 60, JSON.stringify(last));
    assert.equal(last.msg, `the registry stops: ${said} (a defect: report it with this line)`);
    assert.equal(last.err?.message, message);
    assert.match(last.err!.stack, new RegExp(`Error: ${message}\\n +at `));
  }
});

/** A search over HTTP+JSON, as the audit sent them: answered 200, with results. */
async function search(url: string): Promise<void> {
  const answer = await rawPost(`${url}/a2a/rest/message:send`, JSON.stringify({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'invoices' }] } }), {
    signal: AbortSignal.timeout(5000),
  });
  assert.equal(answer.status, 200, answer.text);
}

/** SIGTERM ends it, promptly and cleanly. */
async function assertStopsOnSigterm(registry: { child: ChildProcess; exited: Promise<number | string> }): Promise<void> {
  registry.child.kill('SIGTERM');
  const ended = await Promise.race([registry.exited, new Promise((resolve) => setTimeout(resolve, 15_000, 'still running 15 s after SIGTERM'))]);
  if (ended !== 0) registry.child.kill('SIGKILL');
  assert.equal(ended, 0);
}

test('standard output on a full device (/dev/full): requests answered, dropped lines counted and told on stderr, SIGTERM ends it', { timeout: 120_000 }, async (t) => {
  if (!fs.existsSync('/dev/full')) return t.skip('no /dev/full here');
  const full = fs.openSync('/dev/full', 'w');
  const registry = await registryLoggingTo(full).finally(() => fs.closeSync(full));
  t.after(() => registry.child.kill('SIGKILL'));
  for (let i = 0; i < 40; i++) await search(registry.url);
  assert.equal((await fetch(`${registry.url}/healthz`)).status, 200);
  // Every line since start goes nowhere: the 40 request lines among them, once their write has been tried (lines wait a second after a failed write).
  const dropped = () => metricValue(registry.url, 'registry_log_lines_dropped_total', '');
  await eventually(async () => (await dropped()) >= 40, 'the request lines are counted as dropped');
  await assertStopsOnSigterm(registry);
  const told = registry.stderr().trimEnd().split('\n');
  assert.equal(told.filter((line) => line.includes('the log (standard output) cannot be written (ENOSPC)')).length, 1, registry.stderr());
  assert.match(told.at(-1)!, /^a2a-registry: \d+ log lines were lost since \S+: the log \(standard output\) could not be written \(ENOSPC\)$/);
});

test('the log file\'s file system fills up (a real tmpfs), then has room again: requests answered throughout, the loss is a warning line', { timeout: 120_000 }, async (t) => {
  const mount = mountTmpfs(1, 'registry-full-log-');
  if (typeof mount === 'string') return t.skip(mount);
  let registry: Awaited<ReturnType<typeof registryLoggingTo>> | undefined;
  // The registry lets go of its log file (exits) before the file system goes.
  t.after(async () => {
    if (registry) {
      registry.child.kill('SIGKILL');
      await registry.exited;
    }
    mount.unmount();
  });
  const dir = mount.dir;
  const logFile = path.join(dir, 'registry.log');
  const log = fs.openSync(logFile, 'a');
  registry = await registryLoggingTo(log).finally(() => fs.closeSync(log));
  const fillers = fill(dir);
  for (let i = 0; i < 40; i++) await search(registry.url);
  assert.equal((await fetch(`${registry.url}/healthz`)).status, 200);
  // Each of the 40 request lines is written (the log file's last block had room for a few) or dropped and counted.
  // A line the disk had room for only the start of stays a broken line of its own (the next write begins a new line).
  const parsed = (line: string): { level: number; msg: string; lostLines?: number; reason?: string } | undefined => {
    try {
      return JSON.parse(line);
    } catch {
      return undefined;
    }
  };
  const records = () => fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean).map(parsed);
  const requestLines = () => records().filter((line) => line?.msg === 'request').length;
  const counted = () => metricValue(registry!.url, 'registry_log_lines_dropped_total', '');
  await eventually(async () => requestLines() + (await counted()) >= 40, 'every request line is written or counted as dropped');
  const dropped = await counted();
  assert.ok(dropped >= 20, `lines dropped while the disk was full: ${dropped}`);
  const writtenWhileFull = requestLines();

  for (const filler of fillers) fs.rmSync(filler);
  await search(registry.url);
  await eventually(async () => records().some((line) => line?.lostLines !== undefined), 'a warning says lines were lost', 10_000);
  const warning = records().find((line) => line?.lostLines !== undefined)!;
  assert.equal(warning.level, 40);
  assert.equal(warning.reason, 'ENOSPC');
  assert.ok(warning.lostLines! >= dropped, `${warning.lostLines} lost, ${dropped} counted before`);
  assert.match(warning.msg, /^\d+ log lines were lost: the log could not be written \(ENOSPC\) from \S+ until now$/);
  await eventually(async () => requestLines() > writtenWhileFull, 'request lines are written again', 10_000);
  assert.ok(records().filter((line) => line === undefined).length <= 1, 'one broken line at most, where the disk filled up');
  assert.match(registry.stderr(), /the log \(standard output\) cannot be written \(ENOSPC\)/);
  await assertStopsOnSigterm(registry);
});
