#!/usr/bin/env node
// Entry point of the `a2a-registry` command. Runs the built CLI (`npm run build` creates dist/).
import { main } from '../dist/src/cli/main.js';

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`a2a-registry: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
