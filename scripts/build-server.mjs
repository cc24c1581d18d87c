/**
 * Builds the registry's code (src/, TypeScript) into dist/src/ as ES modules, one file per source
 * file with its source map: the layout `tsc -p tsconfig.build.json` emitted, so every path
 * relative to a module (schemas, word lists, workers) is the same. Run by `npm run build`.
 *
 * esbuild only strips the types, in about a second where tsc took 9-15 s checking them again:
 * `npm run typecheck` (tsc) checks them, and CI runs it before every build (npm test's pretest).
 * It is the transform tsx applies when the tests run the sources, with the same compiler options
 * (tsconfig.build.json: the ES2022 target, its class-field semantics).
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

await build({
  absWorkingDir: REPO_ROOT,
  entryPoints: ['src/**/*.ts'],
  outbase: 'src',
  outdir: 'dist/src',
  tsconfig: 'tsconfig.build.json',
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: 'linked',
  logLevel: 'warning',
});
