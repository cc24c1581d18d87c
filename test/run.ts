/**
 * `npm test`'s runner: node:test's run() over the test files in the order they are named, two at
 * a time, with the spec reporter.
 *
 * Why not `node --test a b c`: it sorts the files it is given by name, whatever order they are
 * named in, so the longest file (the web page's, alphabetically last) started last and ran alone
 * for a minute while the other worker idled. Given `files`, run() keeps their order, so naming the
 * slowest files first lets the short ones fill in around them and both workers end together.
 * (package.json leaves the web page's file to the glob, which names it last: its checks are timed
 * in a real browser, and beside the CLI's processes one of them timed out.)
 *
 *   node --import tsx test/run.ts test/cli.test.ts test/import.test.ts test/*.test.ts
 *
 * A file named twice (once first, again by the glob) runs once, where first named. The test files'
 * processes inherit this one's flags (`--import tsx`). After the summary it prints the slowest
 * files (the time of their tests, their process's start-up not counted) so the order stays right.
 */
import { resolve, relative } from 'node:path';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';

/** Files run at once: two (CI's two cores); TEST_CONCURRENCY=n to try another number. */
const CONCURRENCY = Number(process.env.TEST_CONCURRENCY ?? 2);
if (!Number.isInteger(CONCURRENCY) || CONCURRENCY < 1) {
  console.error(`TEST_CONCURRENCY must be a whole number of files from 1 up, not ${JSON.stringify(process.env.TEST_CONCURRENCY)}`);
  process.exit(2);
}
const SLOWEST_SHOWN = 15;

const args = process.argv.slice(2);
const files = [...new Set(args.map((file) => resolve(file)))];
if (files.length === 0 || args.some((arg) => arg.startsWith('-'))) {
  console.error(
    'usage: node --import tsx test/run.ts <test file>... (the slowest first); it takes no options: ' +
      'for a pattern or another reporter run `node --import tsx --test [options] <test file>...`',
  );
  process.exit(2);
}

/** Seconds of top-level tests per file. */
const secondsByFile = new Map<string, number>();
const count = (data: { file?: string; nesting: number; details: { duration_ms: number } }): void => {
  if (data.nesting !== 0 || data.file === undefined) return;
  secondsByFile.set(data.file, (secondsByFile.get(data.file) ?? 0) + data.details.duration_ms / 1000);
};

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
