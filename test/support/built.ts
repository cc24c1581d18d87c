/**
 * The built registry (dist/), which child processes run as `npm start` and the `a2a-registry`
 * command do: starting compiled JavaScript takes a fraction of a second where `--import tsx`
 * compiles the sources again in every child. `npm test` builds first (pretest); a test file run
 * on its own rebuilds here when a source or schema file is newer than the build, so it never tests
 * stale code.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Entry points in the repository, relative to its root. */
export const BUILT_MAIN = 'dist/src/main.js';
export const BIN = 'bin/a2a-registry.js';
/** The build steps `npm run build` runs first: the code (scripts/build-server.mjs), then the precompiled validators (src/validation/precompile.ts). */
const BUILD_SERVER = 'scripts/build-server.mjs';
const PRECOMPILE = 'dist/src/validation/precompile.js';

let checked = false;

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(file) : statSync(file).mtimeMs);
  }
  return newest;
}

function builtAt(): number {
  try {
    return statSync(join(REPO_ROOT, BUILT_MAIN)).mtimeMs;
  } catch {
    return 0;
  }
}

/** Builds dist/ when it is missing or older than src/ (once per test process). */
export function ensureBuilt(): void {
  if (checked) return;
  checked = true;
  if (builtAt() >= Math.max(newestSource(join(REPO_ROOT, 'src')), newestSource(join(REPO_ROOT, 'schemas')))) return;
  execFileSync(process.execPath, [BUILD_SERVER], { cwd: REPO_ROOT, stdio: 'inherit' });
  // The precompiled validators, as npm run build makes them; registries started in-process from
  // src/ load them too (a stale one is never used, only slower: src/validation/precompiled.ts).
  execFileSync(process.execPath, [PRECOMPILE], { cwd: REPO_ROOT, stdio: 'inherit' });
}
