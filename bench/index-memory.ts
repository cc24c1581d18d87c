/**
 * Search index at scale, in-process (issue 22): where the heap goes, the cost of an update and
 * a removal, and saving / loading the index snapshot.
 *
 *   node --expose-gc --import tsx bench/index-memory.ts [--sizes 100000] [--samples 1000]
 *
 * (--sizes takes a comma list, e.g. 100000,1000000.)
 *
 * Per size: builds an index from generated entries (./lib/generate-entries.ts; no storage, no
 * validation), then prints
 * - build time, and heap (heapUsed + arrayBuffers after a full GC) per entry;
 * - index.upsert of an entry it holds (another generated document) and index.remove: p50/p99;
 * - the snapshot: copying the state (the synchronous part), writing the file, reading it back
 *   and loading it into an empty index (what a restart does before replaying the change log);
 * - the heap by structure, measured by dropping each in turn: postings, hit records, tables,
 *   attribute pool, words for phrases, vocabulary.
 * On a shared machine, p99s are mostly the process waiting for a core (compare its CPU time).
 * Give the heap room at 1M (NODE_OPTIONS=--max-old-space-size=6144).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createSearchIndex } from '../src/search/index.js';
import { readIndexSnapshot, writeIndexSnapshot, SNAPSHOT_FORMAT } from '../src/search/snapshot-file.js';
import type { IndexedEntry, KeywordIndex } from '../src/search/types.js';
import { positiveNumbers } from './lib/args.js';
import { describeGenerated, streamEntries } from './lib/generate-entries.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '100000' },
    /** Updates and removals timed per size. */
    samples: { type: 'string', default: '1000' },
  },
});
const args = { sizes: positiveNumbers(values.sizes), samples: Number(values.samples) };
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const heap = (): number => {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
const mib = (b: number): string => `${(b / 2 ** 20).toFixed(0)} MiB`;
const pct = (a: number[], p: number): string => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(a.length * p))]!.toFixed(3);
/** Entry `i`'s id, shaped as the registry's are (UUIDs, which the index keeps as their bytes: src/search/entry-ids.ts). */
const idOf = (i: number): string => `00000000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`;
const entryOf = (i: number, description: IndexedEntry['description'], t: number): IndexedEntry => ({
  id: idOf(i),
  owner: `owner-${i % 1000}`,
  listSeq: t,
  description,
});

/** Saves `index` to `file` (its own frame, so nothing of the saved state outlives it). */
async function save(index: KeywordIndex, file: string): Promise<{ bytes: number; copyMs: number; copyCpu: NodeJS.CpuUsage; writeMs: number }> {
  let t = performance.now();
  const c0 = process.cpuUsage();
  const saved = index.saveState!();
  const copyMs = performance.now() - t;
  const copyCpu = process.cpuUsage(c0);
  t = performance.now();
  try {
    const { bytes } = await writeIndexSnapshot(file, { format: SNAPSHOT_FORMAT, version: 'bench', seq: 0, entries: index.size, savedAt: new Date().toISOString() }, saved.parts);
    return { bytes, copyMs, copyCpu, writeMs: performance.now() - t };
  } finally {
    saved.release();
  }
}

console.log(`node ${process.version}; ${os.cpus().length} cores; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
for (const size of args.sizes) {
  console.log(`\n== ${size} entries (in-process index) ==`);
  let index: KeywordIndex = createSearchIndex();
  index.search({ text: 'warm up', offset: 0, limit: 1 });
  const h0 = heap();
  let t = performance.now();
  let i = 0;
  for (const e of streamEntries(size, 7)) {
    index.upsert(entryOf(i, describeGenerated(e), i));
    i++;
  }
  const buildS = (performance.now() - t) / 1000;
  const h1 = heap();
  console.log(`build: ${buildS.toFixed(1)} s (${Math.round(size / buildS)}/s); heap +${mib(h1 - h0)}, ${((h1 - h0) / size / 1024).toFixed(2)} KiB/entry`);

  // Updates and removals of entries it holds.
  const every = Math.max(1, Math.floor(size / args.samples));
  const ups: number[] = [];
  // Other generated documents for existing ids: updates that change what is indexed.
  let k = 0;
  for (const e of streamEntries(Math.min(size, args.samples), 99)) {
    const t0 = performance.now();
    index.upsert(entryOf(k * every, describeGenerated(e), size + k));
    ups.push(performance.now() - t0);
    k++;
  }
  const rms: number[] = [];
  for (let j = 0; j < args.samples; j++) {
    const t0 = performance.now();
    index.remove(idOf((j * every + 1) % size));
    rms.push(performance.now() - t0);
  }
  console.log(`index.upsert (changed entry): p50 ${pct(ups, 0.5)} ms, p99 ${pct(ups, 0.99)} ms (${ups.length}); index.remove: p50 ${pct(rms, 0.5)} ms, p99 ${pct(rms, 0.99)} ms (${rms.length})`);

  // Snapshot: copy (synchronous), write, read, load.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-index-'));
  try {
    const file = path.join(dir, 'search-index.snapshot');
    const { bytes, copyMs, copyCpu, writeMs } = await save(index, file);
    const expected = index.search({ text: 'translate document', offset: 0, limit: 20 });
    const sizeBefore = index.size;
    index = createSearchIndex();
    gc();
    t = performance.now();
    const read = await readIndexSnapshot(file, () => undefined);
    const readMs = performance.now() - t;
    if (!read.ok) throw new Error(read.reason);
    t = performance.now();
    const restored = createSearchIndex();
    restored.loadState!(read.state);
    const loadMs = performance.now() - t;
    read.state.clear();
    index = restored;
    const same = JSON.stringify(index.search({ text: 'translate document', offset: 0, limit: 20 })) === JSON.stringify(expected) && index.size === sizeBefore;
    console.log(
      `snapshot: ${mib(bytes)}; copy ${copyMs.toFixed(0)} ms (event loop held; CPU ${((copyCpu.user + copyCpu.system) / 1000).toFixed(0)} ms), write ${(writeMs / 1000).toFixed(1)} s; read ${(readMs / 1000).toFixed(1)} s + load ${loadMs.toFixed(0)} ms = ${((readMs + loadMs) / 1000).toFixed(1)} s; same answers: ${same}`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }

  // Heap by structure (the restored index), dropping each part in turn.
  const ix = index as unknown as Record<string, Record<string, unknown>>;
  const parts: [string, () => void][] = [
    ['postings (term-index)', () => void (ix.terms = {})],
    ['hit records (entry-store)', () => void (ix.store = {})],
    ['attribute pool and dictionaries', () => void (ix.attrs = {})],
    ['words for phrases', () => void (ix.phrases = {})],
    ['tables (entry rows, unit slots)', () => void (ix.tables = {})],
    ['vocabulary (terms, stems)', () => void (ix.vocabulary = {})],
  ];
  let prev = heap();
  const total = prev - h0;
  const rows: string[] = [];
  for (const [name, drop] of parts) {
    drop();
    const h = heap();
    rows.push(`  ${name}: ${mib(prev - h)} (${Math.round((prev - h) / size)} B/entry)`);
    prev = h;
  }
  console.log(`heap by structure (of ${mib(total)}, ${Math.round(total / size)} B/entry after the restore):\n${rows.join('\n')}\n  rest: ${mib(prev - h0)}`);
}
