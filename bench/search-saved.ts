/**
 * Query latency of a large search index without building it each run (issue 22 point 4: 1M
 * entries in-process). The first run builds the index from the generated entries of
 * bench/search.ts (same seed, so the same entries) and saves it to `--index-file`; later runs
 * load that file (seconds instead of a quarter of an hour at 1,000,000 entries). The file is
 * refused, and rebuilt, when it was saved by another snapshot format.
 *
 *   node --expose-gc --import tsx bench/search-saved.ts --size 1000000 [--index-file <file>]
 *        [--queries 2000] [--seed 42] [--repeat 3] [--compare <checkout>]
 *
 * Query kinds, as in bench/search.ts (same seeds): 1-3 words without filters, with one or two
 * filters, and empty text with filters (a listing); default matching, limit 20, results per
 * entry. Each query runs `--repeat` times back to back and its fastest time counts (see
 * bench/search.ts: on a shared machine this filters out the process waiting for a core).
 * `--compare <checkout>` (a `git worktree` of another version with node_modules) loads the same
 * saved index into that version's index too and runs each query on both in turn, so the load
 * hits both alike (give the heap room for two: --max-old-space-size=8192 at 1M).
 *
 * Then, as a server sees them, the filtered queries asked in turn (`--rounds`, default 3), each
 * once a round, every query's time counting: this is what the kept filter bitmaps are for (a
 * filter's bitmap is built on its second search and pays off only if it is still kept at its
 * next ones), which the fastest of back-to-back runs above cannot show: there the runs after the
 * first find the bitmap their first run asked for. Each round's figures are printed; the last
 * round's are the steady state.
 *
 * Give the heap room at 1M (NODE_OPTIONS=--max-old-space-size=6144). Default file:
 * $TMPDIR/a2a-bench-search-<size>-<seed>.snapshot (about 1.4 GB at 1M; delete it when done).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createSearchIndex } from '../src/search/index.js';
import type { PostingsIndex } from '../src/search/search-index.js';
import { SNAPSHOT_FORMAT, readIndexSnapshot, writeIndexSnapshot } from '../src/search/snapshot-file.js';
import { atLeastOne } from './lib/args.js';
import { generateQueries, indexedGenerated, streamEntries, type GeneratedQuery } from './lib/generate-entries.js';
import { DOMAINS } from './lib/vocabulary.js';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '1000000' },
    /** Default: $TMPDIR/a2a-bench-search-<size>-<seed>.snapshot. */
    'index-file': { type: 'string', default: '' },
    /** Queries per kind. */
    queries: { type: 'string', default: '2000' },
    seed: { type: 'string', default: '42' },
    /** Runs per query; the fastest counts. */
    repeat: { type: 'string', default: '3' },
    /** Another version's checkout, measured on the same saved index. */
    compare: { type: 'string', default: '' },
    /** Rounds of the filtered queries asked in turn, each once a round (0: none). */
    rounds: { type: 'string', default: '3' },
    /** Queries per filter key in the section "each filter key alone" (0: skip it). */
    'per-key': { type: 'string', default: '40' },
    /** Only that section (skip the query kinds and the rounds). */
    'keys-only': { type: 'boolean', default: false },
  },
});
const args = {
  size: Number(values.size),
  file: values['index-file'],
  queries: Number(values.queries),
  seed: Number(values.seed),
  repeat: atLeastOne(values.repeat),
  compare: values.compare.replace(/\/$/, ''),
  rounds: Number(values.rounds),
  perKey: Number(values['per-key']),
  keysOnly: values['keys-only'],
};
const file = args.file || path.join(os.tmpdir(), `a2a-bench-search-${args.size}-${args.seed}.snapshot`);
const load = (): string => os.loadavg().map((l) => l.toFixed(2)).join(' ');
console.log(`search bench over a saved index: ${args.size} entries, ${args.queries} queries per kind, fastest of ${args.repeat}; node ${process.version}; load average ${load()}`);

const index = createSearchIndex() as unknown as PostingsIndex;
const started = performance.now();
const saved = fs.existsSync(file) ? await readIndexSnapshot(file, (meta) => (meta.format !== SNAPSHOT_FORMAT || meta.entries !== args.size ? 'another format or size' : undefined)) : undefined;
if (saved?.ok) {
  index.loadState(saved.state);
  console.log(`loaded ${index.size} entries from ${file} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
} else {
  if (saved) console.log(`not using ${file}: ${saved.reason}`);
  // The entries of bench/search.ts (generateEntries with the same seed), streamed.
  for (const g of streamEntries(args.size, args.seed)) index.upsert(indexedGenerated(g));
  console.log(`built ${index.size} entries in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const state = index.saveState();
  try {
    await writeIndexSnapshot(file, { format: SNAPSHOT_FORMAT, version: 'bench', seq: 0, entries: index.size, savedAt: new Date().toISOString() }, state.parts);
  } finally {
    state.release();
  }
  console.log(`saved to ${file}`);
}

/** The other version's index over the same saved file (--compare). */
interface Searchable {
  search(q: { text: string; filter?: GeneratedQuery['filter']; offset: number; limit: number }): { total: number };
}
let other: Searchable | undefined;
if (args.compare) {
  const mod = (await import(`${args.compare}/src/search/index.ts`)) as { createSearchIndex(): Searchable & { loadState(s: unknown): void } };
  const snap = (await import(`${args.compare}/src/search/snapshot-file.ts`)) as { readIndexSnapshot: typeof readIndexSnapshot };
  const loaded = await snap.readIndexSnapshot(file, () => undefined);
  if (!loaded.ok) throw new Error(`${args.compare} cannot load ${file}: ${loaded.reason}`);
  const index = mod.createSearchIndex();
  index.loadState(loaded.state);
  other = index;
  console.log(`compared with ${args.compare} (the same file loaded into its index)`);
}

const filtered = generateQueries(args.queries, args.seed + 2, true);
const kinds: [string, GeneratedQuery[]][] = [
  ['1-3 words, no filter', generateQueries(args.queries, args.seed + 1, false)],
  ['1-3 words, with filters', filtered],
  ['empty text, filters only', filtered.map((q) => ({ text: '', filter: q.filter }))],
];
const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
const fmt = (ms: number): string => (ms < 10 ? ms.toFixed(3) : ms.toFixed(1));
/** p50, p90, p99 and mean of `times` (sorted in place), as both sections print them. */
const figures = (times: number[]): string => {
  const t = times.sort((a, b) => a - b);
  const mean = t.reduce((sum, x) => sum + x, 0) / t.length;
  return `p50 ${fmt(pct(t, 0.5)).padStart(7)} ms   p90 ${fmt(pct(t, 0.9)).padStart(7)} ms   p99 ${fmt(pct(t, 0.99)).padStart(7)} ms   mean ${fmt(mean).padStart(7)} ms`;
};
const versions: [string, Searchable][] = other ? [['this', index], [path.basename(args.compare), other]] : [['', index]];
for (const [label, queries] of args.keysOnly ? [] : kinds) {
  const run = (ix: Searchable, q: GeneratedQuery): number => ix.search({ text: q.text, filter: q.filter, offset: 0, limit: 20 }).total;
  for (const [, ix] of versions) for (let i = 0; i < Math.min(200, queries.length); i++) run(ix, queries[i]!);
  const times = versions.map((): number[] => []);
  const results = versions.map(() => 0);
  for (const q of queries) {
    const best = versions.map(() => Infinity);
    for (let r = 0; r < args.repeat; r++) {
      versions.forEach(([, ix], v) => {
        const t = performance.now();
        const total = run(ix, q);
        best[v] = Math.min(best[v]!, performance.now() - t);
        if (r === 0) results[v]! += total;
      });
    }
    best.forEach((b, v) => times[v]!.push(b));
  }
  versions.forEach(([name], v) => {
    const title = name ? `${label}, ${name}` : label;
    console.log(`  ${title.padEnd(26)} ${figures(times[v]!)}   avg total ${(results[v]! / queries.length).toFixed(0)}`);
  });
}

// The filtered queries in turn, each once a round (with --compare, each query on both in turn).
const inTurn: [string, GeneratedQuery[]][] = [
  ['1-3 words, with filters', filtered],
  ['empty text, filters only', filtered.map((q) => ({ text: '', filter: q.filter }))],
];
for (const [label, queries] of args.rounds > 0 && !args.keysOnly ? inTurn : []) {
  console.log(`  in turn, ${label}: ${new Set(queries.map((q) => JSON.stringify(q.filter))).size} distinct filters in ${queries.length} queries`);
  for (let round = 1; round <= args.rounds; round++) {
    const times = versions.map((): number[] => []);
    for (const q of queries) {
      versions.forEach(([, ix], v) => {
        const t = performance.now();
        ix.search({ text: q.text, filter: q.filter, offset: 0, limit: 20 });
        times[v]!.push(performance.now() - t);
      });
    }
    versions.forEach(([name], v) => {
      const title = `round ${round}${name ? `, ${name}` : ''}`;
      console.log(`    ${title.padEnd(24)} ${figures(times[v]!)}`);
    });
  }
}

// Each filter key alone (issue 22 point 4: no key may make a listing or a text search visit every
// entry), as a listing and beside 1-3 words: p50, p99 and the slowest of `--per-key` queries, each
// the fastest of `--repeat`. Capability values are drawn from the first entries of the same stream
// (so the index has them: mostly values many entries share, some only one has), and made up (none).
if (args.perKey > 0) {
  const p = { state: args.seed + 3, next(): number { this.state = (Math.imul(this.state, 1_103_515_245) + 12_345) >>> 0; return this.state / 2 ** 32; } };
  const one = <T>(xs: readonly T[]): T => xs[Math.floor(p.next() * xs.length)]!;
  const offered: string[] = [];
  for (const g of streamEntries(Math.min(args.size, 20_000), args.seed)) {
    if (g.kind === 'agent') for (const k of g.document.skills) offered.push(k.id || k.name);
    else for (const t of g.document.toolspec.tools) offered.push(t.name);
  }
  const tags = [...new Set(DOMAINS.flatMap((d) => d.tags))];
  const keys: [string, () => GeneratedQuery['filter']][] = [
    ['capabilities (offered)', () => ({ capabilities: [one(offered)] })],
    ['capabilities (3 offered)', () => ({ capabilities: [one(offered), one(offered), one(offered)] })],
    ['capabilities (none has)', () => ({ capabilities: [`no-such-capability-${Math.floor(p.next() * 1e6)}`] })],
    ['capabilities + kind agent', () => ({ capabilities: [one(offered)], kind: 'agent' })],
    ['kind', () => ({ kind: one(['agent', 'mcp-server'] as const) })],
    ['owner', () => ({ owner: `owner-${Math.floor(p.next() * 500)}` })],
    ['tags', () => ({ tags: [one(tags)] })],
    ['inputModes', () => ({ inputModes: [one(['text/plain', 'application/json', 'image/png', 'application/pdf'])] })],
    ['outputModes', () => ({ outputModes: [one(['text/plain', 'application/json', 'image/png', 'application/pdf'])] })],
    ['protocolBinding', () => ({ protocolBinding: one(['JSONRPC', 'HTTP+JSON', 'GRPC']) })],
    ['protocolVersion', () => ({ protocolVersion: one(['1.0', '0.3', '1.0.1']) })],
    ['binding + version', () => ({ protocolBinding: 'GRPC', protocolVersion: '0.3' })],
    ['streaming', () => ({ streaming: p.next() < 0.5 })],
    ['verified true', () => ({ verified: true })],
    ['verified false', () => ({ verified: false })],
    ['health ok', () => ({ health: 'ok' })],
    ['health any', () => ({ health: 'any' })],
    ['readOnly', () => ({ readOnly: p.next() < 0.5 })],
    ['destructive', () => ({ destructive: p.next() < 0.5 })],
    ['idempotent', () => ({ idempotent: p.next() < 0.5 })],
    ['openWorld', () => ({ openWorld: p.next() < 0.5 })],
    ['readOnly + owner', () => ({ readOnly: true, owner: `owner-${Math.floor(p.next() * 500)}` })],
    ['tags + outputModes', () => ({ tags: [one(tags)], outputModes: ['application/json'] })],
  ];
  const texts = generateQueries(args.perKey, args.seed + 4, false).map((q) => q.text);
  console.log(`  each filter key alone, ${args.perKey} queries a key, fastest of ${args.repeat}: p50 / p99 / slowest (ms), avg total`);
  for (const [name, make] of keys) {
    const filters = Array.from({ length: args.perKey }, make);
    for (const [mode, text] of [['listing', () => ''], ['1-3 words', (i: number) => texts[i]!]] as const) {
      const times = versions.map((): number[] => []);
      const totals = versions.map(() => 0);
      filters.forEach((filter, i) => {
        versions.forEach(([, ix], v) => {
          let best = Infinity;
          for (let r = 0; r < args.repeat; r++) {
            const t = performance.now();
            const total = ix.search({ text: text(i), filter, offset: 0, limit: 20 }).total;
            best = Math.min(best, performance.now() - t);
            if (r === 0) totals[v]! += total;
          }
          times[v]!.push(best);
        });
      });
      versions.forEach(([vname], v) => {
        const t = times[v]!.sort((a, b) => a - b);
        const title = `${name}, ${mode}${vname ? `, ${vname}` : ''}`;
        console.log(`    ${title.padEnd(44)} ${fmt(pct(t, 0.5)).padStart(7)} / ${fmt(pct(t, 0.99)).padStart(7)} / ${fmt(t[t.length - 1]!).padStart(7)}   ${(totals[v]! / filters.length).toFixed(0)}`);
      });
    }
  }
}
console.log(`load average at end: ${load()}`);
