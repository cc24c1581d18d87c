/**
 * Runs the TypeScript sources (src/, test/, bench/, examples/) in a Node.js process without a
 * build: `node --import ./test/support/typescript-hooks.mjs <file.ts>`. `npm test` runs every
 * test file's process so.
 *
 * Why not tsx, which did this before: CI's test stages are CPU-bound, and every test file's
 * process loads the registry's sources anew. tsx's hooks run on a loader thread of their own,
 * every one of the process's 2,000-odd module loads (node_modules' included) a message there and
 * back, and tsx resolves each import through its own path lookups: about 0.5 s of CPU a process
 * over the 0.8 s the built JavaScript takes to load. These hooks run on the process's own thread
 * (module.registerHooks, synchronous) and touch only the repository's own .ts files: an import of
 * `./x.js` from a .ts file is `./x.ts` when that exists (the sources import each other by their
 * built names, as NodeNext requires), and a .ts file loads as the JavaScript esbuild makes of it,
 * with the options the build uses (scripts/build-server.mjs: tsconfig.json's ES2022 target and
 * class fields). Everything else goes to Node.js's own resolution and loading untouched.
 *
 * The JavaScript is kept in .cache/typescript-hooks/, a file per source text (named by its hash,
 * so an edited file is compiled anew and a stale one never read); esbuild is loaded only when a
 * source is not there yet. Stack traces name the .ts files' lines (inline source maps).
 *
 * Node.js before 22.15 has no registerHooks: there tsx's hooks are loaded instead.
 */
import module from 'node:module';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE_DIR = `${REPO_ROOT}.cache/typescript-hooks/`;
const REPO_URL = pathToFileURL(REPO_ROOT).href;
/**
 * What the JavaScript made of a source depends on besides its text: changed, every source is
 * compiled anew (the cache's files are named by a hash of this, the path and the text).
 */
const TRANSFORM_OPTIONS = {
  loader: 'ts',
  format: 'esm',
  target: 'node22',
  sourcemap: 'inline',
  // tsconfig.json's compiler options, which the build's (tsconfig.build.json) extends, read from
  // it: its target's class fields (ES2022: defined, not assigned), unused imports dropped as tsc
  // drops them.
  tsconfigRaw: { compilerOptions: JSON.parse(readFileSync(`${REPO_ROOT}tsconfig.json`, 'utf8')).compilerOptions },
};
const OPTIONS_KEY = JSON.stringify(TRANSFORM_OPTIONS);

/** Where the JavaScript of this source, at this path, is kept. */
const keptFile = (path, source) =>
  `${CACHE_DIR}${createHash('sha1').update(OPTIONS_KEY).update('\0').update(path).update('\0').update(source).digest('hex')}.js`;

/** Keeps a compiled source: written aside, then renamed, so a reader never sees half a file. */
const keep = (kept, code) => {
  mkdirSync(CACHE_DIR, { recursive: true });
  const aside = `${kept}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(aside, code);
  renameSync(aside, kept);
};

let esbuild;
const loadEsbuild = () => (esbuild ??= module.createRequire(import.meta.url)('esbuild'));

/** The JavaScript of a source, from the cache or compiled (and kept). */
const javaScriptOf = (path) => {
  const source = readFileSync(path, 'utf8');
  const kept = keptFile(path, source);
  try {
    return readFileSync(kept, 'utf8');
  } catch {
    const { code } = loadEsbuild().transformSync(source, { ...TRANSFORM_OPTIONS, sourcefile: path });
    keep(kept, code);
    return code;
  }
};

/** A week: what is kept of sources that are no longer (edited since, or deleted) goes after that. */
const KEPT_UNUSED_MS = 7 * 24 * 3600 * 1000;

/**
 * Deletes the kept JavaScript of sources that are not among `current` (edited or deleted since,
 * or bench/ and examples/ files, compiled when loaded) once it is older than a week: every edit
 * keeps another file, and the cache would otherwise only grow.
 */
const forgetOld = (current) => {
  let names;
  try {
    names = readdirSync(CACHE_DIR);
  } catch {
    return; // nothing kept yet
  }
  const before = Date.now() - KEPT_UNUSED_MS;
  for (const name of names) {
    const file = `${CACHE_DIR}${name}`;
    if (current.has(file)) continue;
    try {
      if (statSync(file).mtimeMs < before) unlinkSync(file);
    } catch {
      // Gone already (another run forgetting it too).
    }
  }
};

/**
 * Compiles, in this process and all at once, the sources (absolute paths) whose JavaScript is not
 * kept yet; returns how many. test/run.ts calls it before the test files' processes start: one
 * each would otherwise start esbuild's service (about 0.2 s of CPU) for the sources it is the first
 * to load, its own test file at least.
 */
export async function compileAhead(paths) {
  const missing = [];
  const current = new Set();
  for (const path of paths) {
    const source = readFileSync(path, 'utf8');
    const kept = keptFile(path, source);
    current.add(kept);
    if (!existsSync(kept)) missing.push({ path, source, kept });
  }
  forgetOld(current);
  if (missing.length === 0) return 0;
  const { transform, stop } = loadEsbuild();
  try {
    await Promise.all(
      missing.map(async ({ path, source, kept }) => keep(kept, (await transform(source, { ...TRANSFORM_OPTIONS, sourcefile: path })).code)),
    );
  } finally {
    // Its service process is not needed past this (the caller runs for the whole suite).
    await stop();
  }
  return missing.length;
}

if (typeof module.registerHooks !== 'function') {
  await import('tsx/esm');
} else {
  /** A repository file of ours (not a dependency's), by URL. */
  const isOurs = (url) => url.startsWith(REPO_URL) && !url.includes('/node_modules/');
  const isTypeScript = (url) => url.endsWith('.ts') && isOurs(url);

  /** Whether a file exists, by URL: asked once per URL (the same few hundred imports recur). */
  const existing = new Map();
  const exists = (url) => {
    let found = existing.get(url);
    if (found === undefined) existing.set(url, (found = existsSync(fileURLToPath(url))));
    return found;
  };

  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      // `./x.js` (or a file: URL of one: a worker's entry) named from our TypeScript, or as an
      // entry point: the .ts source when there is one.
      if (specifier.endsWith('.js') && (context.parentURL === undefined || isTypeScript(context.parentURL))) {
        const relative = specifier.startsWith('./') || specifier.startsWith('../');
        if (relative || specifier.startsWith('file:')) {
          const url = relative ? (context.parentURL === undefined ? undefined : new URL(specifier, context.parentURL).href) : specifier;
          if (url !== undefined && isOurs(url)) {
            const source = `${url.slice(0, -3)}.ts`;
            if (exists(source)) return { url: source, format: 'module', shortCircuit: true };
          }
        }
      }
      return nextResolve(specifier, context);
    },
    load(url, context, nextLoad) {
      if (!isTypeScript(url)) return nextLoad(url, context);
      return { format: 'module', source: javaScriptOf(fileURLToPath(url)), shortCircuit: true };
    },
  });
  // As tsx did: an error's stack names the .ts file's line, not the compiled one's.
  process.setSourceMapsEnabled(true);
}
