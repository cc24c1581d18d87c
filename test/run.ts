/**
 * `npm test`'s runner: node:test's run() over the test files in the order they are named, three
 * at a time (CONCURRENCY), with the spec reporter.
 *
 * Why not `node --test a b c`: it sorts the files it is given by name, whatever order they are
 * named in, so the longest file (the web page's, alphabetically last) started last and ran alone
 * for a minute while the other worker idled. Given `files`, run() keeps their order, so naming the
 * slowest files first lets the short ones fill in around them and the workers end together.
 * (package.json names the web page's two browser files third and fifth, after the two slowest:
 * left to the glob, which names them last, they ran alone at the end and took CI past its limit.)
 *
 *   node --import ./test/support/typescript-hooks.mjs test/run.ts test/cli.test.ts test/import.test.ts test/*.test.ts
 *
 * A file named twice (once first, again by the glob) runs once, where first named. The test files'
 * processes inherit this one's flags (`--import ./test/support/typescript-hooks.mjs`: the
 * sources compiled once and kept, loaded by hooks on the process's own thread; with tsx's each
 * file's process took about 0.4 s more CPU to load the registry, and CI's test stages are
 * CPU-bound). After the summary it prints the slowest files (the time of their tests, their
 * process's start-up not counted) so the order stays right.
 */
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, relative } from 'node:path';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';
import { compileAhead } from './support/typescript-hooks.mjs';

/**
 * Files run at once: three, on CI's two cores. Most files wait more than they compute (fsync,
 * child processes starting, PostgreSQL, timers): two at a time left the cores idle about a third
 * of the time (the whole suite at load 6-10: 849 s two at a time, 578 s three at a time, the same
 * CPU). TEST_CONCURRENCY=n to try another number.
 */
const CONCURRENCY = Number(process.env.TEST_CONCURRENCY ?? 3);
if (!Number.isInteger(CONCURRENCY) || CONCURRENCY < 1) {
  console.error(`TEST_CONCURRENCY must be a whole number of files from 1 up, not ${JSON.stringify(process.env.TEST_CONCURRENCY)}`);
  process.exit(2);
}
const SLOWEST_SHOWN = 15;

/**
 * The test files' processes keep their compiled code in Node's compile cache, as the CLI and the
 * built registry already do (in the same os.tmpdir()/node-compile-cache): each file loads the
 * registry's sources anew, and about a tenth of that load's CPU was compiling them again.
 * NODE_DISABLE_COMPILE_CACHE=1 or a NODE_COMPILE_CACHE of one's own wins.
 */
if (process.env.NODE_COMPILE_CACHE === undefined && process.env.NODE_DISABLE_COMPILE_CACHE === undefined) {
  process.env.NODE_COMPILE_CACHE = join(tmpdir(), 'node-compile-cache');
}

const args = process.argv.slice(2);
const named = [...new Set(args.map((file) => resolve(file)))];
if (named.length === 0 || args.some((arg) => arg.startsWith('-'))) {
  console.error(
    'usage: node --import ./test/support/typescript-hooks.mjs test/run.ts <test file>... (the slowest first); it takes no options: ' +
      'for a pattern or another reporter run `node --import ./test/support/typescript-hooks.mjs --test [options] <test file>...`',
  );
  process.exit(2);
}
/**
 * TEST_SKIP_FILES="test/web.test.ts test/web-forms.test.ts": files left out of this run. CI's second Node.js version
 * leaves out the web page's browser tests and the search index's and validators' in-memory tests
 * (.ci/run says why). A name that is not among the files is an error, so a typo cannot skip
 * nothing in silence.
 */
const skipped = (process.env.TEST_SKIP_FILES ?? '').split(/[\s,]+/).filter(Boolean).map((file) => resolve(file));
const unknown = skipped.filter((file) => !named.includes(file));
if (unknown.length > 0) {
  console.error(`TEST_SKIP_FILES names files this run does not have: ${unknown.map((file) => relative(process.cwd(), file)).join(', ')}`);
  process.exit(2);
}
const files = named.filter((file) => !skipped.includes(file));
if (skipped.length > 0) console.log(`left out (TEST_SKIP_FILES): ${skipped.map((file) => relative(process.cwd(), file)).join(', ')}`);

/** Seconds of top-level tests per file. */
const secondsByFile = new Map<string, number>();
const count = (data: { file?: string; nesting: number; details: { duration_ms: number } }): void => {
  if (data.nesting !== 0 || data.file === undefined) return;
  secondsByFile.set(data.file, (secondsByFile.get(data.file) ?? 0) + data.details.duration_ms / 1000);
};

/**
 * The sources the test files' processes load (src/ and test/), compiled here at once and kept
 * (typescript-hooks.mjs): after a change, or in a fresh checkout, every file's process would
 * otherwise compile what it is the first to load, starting esbuild's service in each.
 */
const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const sources = ['src', 'test'].flatMap((dir) =>
  readdirSync(join(REPO_ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(REPO_ROOT, dir, file)),
);
await compileAhead(sources);

const stream = run({ files, concurrency: CONCURRENCY });
stream.on('test:pass', count);
stream.on('test:fail', (data) => {
  count(data);
  // As `node --test` does: a failing test fails the run, one marked todo does not.
  if (data.todo === undefined || data.todo === false) process.exitCode = 1;
});
const report = stream.compose(new spec());
report.pipe(process.stdout, { end: false });
report.once('end', () => {
  const slowest = [...secondsByFile].sort((a, b) => b[1] - a[1]).slice(0, SLOWEST_SHOWN);
  const lines = slowest.map(([file, seconds]) => `  ${seconds.toFixed(1).padStart(6)} s  ${relative(process.cwd(), file)}`);
  process.stdout.write(`\nslowest files (seconds of their tests; name the slowest first in package.json's "test"):\n${lines.join('\n')}\n`);
});
