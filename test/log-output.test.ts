/**
 * The log's standard output destination (pino's default: sonic-boom, asynchronous, flushed
 * synchronously on exit), pinned for whoever changes it (docs/benchmarks.md, 2026-12-04 evening,
 * tried one write per event-loop turn). In processes of their own writing to a real pipe, as
 * `npm start` does (the built dist/): no line is held back while the process goes on, and none is
 * lost when the process exits in the middle of a burst of lines, by process.exit (the SIGTERM
 * shutdown's way out) or by an uncaught exception.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { REPO_ROOT, ensureBuilt } from './support/built.js';

const LOGGER = pathToFileURL(path.join(REPO_ROOT, 'dist/src/observability/logger.js')).href;
/** Lines written in one turn: ~40 KB, more than one write takes while the first is in flight. */
const LINES = 400;

/** Runs `then` after writing LINES numbered lines in one turn; resolves with the child's whole stdout and exit code. */
function childWriting(then: string): Promise<{ stdout: string; stderr: string; code: number | null }> {
  ensureBuilt();
  const script = `
    const { createLogger } = await import(${JSON.stringify(LOGGER)});
    const log = createLogger('info');
    for (let i = 0; i < ${LINES}; i++) log.info({ n: i, pad: 'x'.repeat(60) }, 'line');
    ${then}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ stdout, stderr, code })));
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

test('an uncaught exception in the middle of a turn: every line is written before the process dies', async () => {
  const { stdout, stderr, code } = await childWriting(`throw new Error('boom');`);
  assert.equal(code, 1);
  assert.match(stderr, /boom/);
  assertAllLines(stdout);
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
