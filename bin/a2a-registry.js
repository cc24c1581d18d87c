#!/usr/bin/env node
// Entry point of the `a2a-registry` command: runs the built CLI (dist/, made by `npm run build`).
import module from 'node:module';

// Node keeps the compiled code of the modules a command loads (in os.tmpdir()/node-compile-cache,
// or NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it off), as npm does for itself: a
// later run of the command skips compiling them again (bench/cli-cpu.ts, docs/benchmarks.md).
// When the directory cannot be written (another user's) it quietly does without.
module.enableCompileCache?.();

let cli;
try {
  cli = await import('../dist/src/cli/main.js');
} catch (err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes('/dist/src/cli/main.js')) throw err;
  process.stderr.write(`a2a-registry: not built yet: run \`npm run build\` in ${new URL('..', import.meta.url).pathname}\n`);
  process.exit(1);
}

cli.main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`a2a-registry: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
