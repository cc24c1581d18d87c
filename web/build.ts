/**
 * Builds the web page's client (web/src) into dist/web: content-hashed files under assets/ and
 * a manifest.json the web door (src/web) reads to write the page's HTML. Run by `npm run build`;
 * `tsx web/build.ts --check` also fails when the first page's assets exceed the budget.
 *
 * The search page loads only the entry script, its stylesheet and the icon; the entry and
 * validate pages (with the diff and JSON-location libraries) are chunks loaded when visited.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { assetType, compressed, ENCODED_FORMS, isCompressible, type WebManifest } from '../src/web/assets.js';

const WEB_DIR = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(WEB_DIR, '..');
export const DEFAULT_OUT_DIR = path.join(REPO_ROOT, 'dist', 'web');

/** The first page (HTML aside) must stay under this many bytes of assets, as served uncompressed. */
export const FIRST_PAGE_BUDGET_BYTES = 100 * 1024;

export interface AssetSize {
  file: string;
  bytes: number;
  gzipBytes: number;
}

export interface WebBuildResult {
  manifest: WebManifest;
  outDir: string;
  sizes: AssetSize[];
  /** What the search page loads: the entry script with its static imports, the stylesheet, the icon. */
  firstPage: { files: string[]; bytes: number; gzipBytes: number };
}

const hashOf = (data: Buffer | string) => createHash('sha256').update(data).digest('hex').slice(0, 10);

/**
 * Builds into `outDir`, replaced whole (no stale hashed file survives) and at once: the build
 * goes to a sibling folder first, so a registry starting meanwhile never reads half a build.
 * A build that gives the files already there leaves them in place: the web page's two browser
 * test files build as they start, side by side, and each starts its registry meanwhile.
 */
export async function buildWebAssets(outDir: string = DEFAULT_OUT_DIR): Promise<WebBuildResult> {
  const staging = `${outDir}.building-${process.pid}`;
  try {
    const result = await buildInto(staging);
    if (sameFiles(staging, outDir)) return { ...result, outDir };
    const old = `${outDir}.old-${process.pid}`;
    if (fs.existsSync(outDir)) fs.renameSync(outDir, old);
    fs.renameSync(staging, outDir);
    fs.rmSync(old, { recursive: true, force: true });
    return { ...result, outDir };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** Whether two folders hold the same files with the same bytes. */
function sameFiles(a: string, b: string): boolean {
  if (!fs.existsSync(b)) return false;
  const list = (dir: string) => (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[]).filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name))).sort();
  const files = list(a);
  const there = list(b);
  return files.length === there.length && files.every((file, i) => file === there[i] && fs.readFileSync(path.join(a, file)).equals(fs.readFileSync(path.join(b, file))));
}

async function buildInto(outDir: string): Promise<WebBuildResult> {
  const assetsDir = path.join(outDir, 'assets');
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(assetsDir, { recursive: true });

  const result = await esbuild.build({
    absWorkingDir: WEB_DIR,
    entryPoints: { main: 'src/main.tsx', styles: 'src/styles.css' },
    outdir: assetsDir,
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    minify: true,
    target: ['chrome111', 'firefox115', 'safari16.4'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: path.join(WEB_DIR, 'tsconfig.json'),
    metafile: true,
    logLevel: 'warning',
    // Bundled libraries' license comments stay, at the end of the file that holds their code.
    legalComments: 'eof',
  });

  const outputs = result.metafile.outputs;
  const name = (output: string) => path.relative(assetsDir, path.resolve(WEB_DIR, output));
  const entryOf = (entry: string) => {
    const found = Object.entries(outputs).find(([, o]) => o.entryPoint === entry);
    if (!found) throw new Error(`web build: no output for ${entry}`);
    return found;
  };
  const [scriptPath] = entryOf('src/main.tsx');
  const [stylePath] = entryOf('src/styles.css');

  const iconSource = fs.readFileSync(path.join(WEB_DIR, 'src', 'icon.svg'));
  const icon = `icon-${hashOf(iconSource)}.svg`;
  fs.writeFileSync(path.join(assetsDir, icon), iconSource);

  // The entry script and every chunk it imports statically, transitively (dynamic imports load later).
  const loaded = new Set<string>();
  const visit = (output: string) => {
    if (loaded.has(output)) return;
    loaded.add(output);
    for (const i of outputs[output]?.imports ?? []) if (i.kind === 'import-statement') visit(i.path);
  };
  visit(scriptPath);
  const files = fs.readdirSync(assetsDir).sort();
  const manifest: WebManifest = { script: name(scriptPath), style: name(stylePath), icon, preload: [...loaded].slice(1).map(name), files };
  fs.writeFileSync(path.join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);

  // Each text asset's compressed forms, made once here rather than at every start of the
  // registry, written beside it (when smaller) for the web door to serve.
  const sizes = files.map((file) => {
    const where = path.join(assetsDir, file);
    const data = fs.readFileSync(where);
    const forms = isCompressible(assetType(file)) ? compressed(data) : {};
    for (const { encoding, suffix } of ENCODED_FORMS) {
      const form = forms[encoding];
      if (form) fs.writeFileSync(where + suffix, form);
    }
    return { file, bytes: data.length, gzipBytes: (forms.gzip ?? data).length };
  });
  const firstFiles = [...[...loaded].map(name), manifest.style, manifest.icon];
  const first = sizes.filter((s) => firstFiles.includes(s.file));
  return {
    manifest,
    outDir,
    sizes,
    firstPage: {
      files: firstFiles,
      bytes: first.reduce((n, s) => n + s.bytes, 0),
      gzipBytes: first.reduce((n, s) => n + s.gzipBytes, 0),
    },
  };
}

const isEntryPoint = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isEntryPoint) {
  const built = await buildWebAssets();
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  for (const s of built.sizes) console.log(`  ${s.file.padEnd(36)} ${kb(s.bytes).padStart(9)}  (gzip ${kb(s.gzipBytes)})`);
  console.log(
    `web: first page ${kb(built.firstPage.bytes)} of assets (gzip ${kb(built.firstPage.gzipBytes)}), budget ${kb(FIRST_PAGE_BUDGET_BYTES)} -> ${path.relative(REPO_ROOT, built.outDir)}`,
  );
  if (process.argv.includes('--check') && built.firstPage.bytes > FIRST_PAGE_BUDGET_BYTES) {
    console.error('web: the first page is over its budget');
    process.exit(1);
  }
}
