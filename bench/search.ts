/**
 * Search index benchmark: build time, heap per entry and query latency of the registry's
 * SearchIndex (FlexSearch-based, src/search) against MiniSearch over the same units.
 *
 *   node --expose-gc --import tsx bench/search.ts [--sizes 10000,100000] [--queries 2000]
 *        [--seed 42] [--no-minisearch] [--mini-queries N]
 *
 * Entries come from ./lib/generate-entries.ts (agents with 2-8 skills, MCP servers with 3-15
 * tools, five languages). Queries are 1-3 vocabulary words, one in five with its last word cut
 * short (prefix), without and with one or two filters. Heap is measured with a full GC before
 * and after building (run with --expose-gc, or the heap figures are skipped).
 */
import { loadavg } from 'node:os';
import MiniSearch from 'minisearch';
import type { SearchFilter } from '../src/contract/types.js';
import type { EntryDescription, SkillDescription, ToolDescription } from '../src/contract/description.js';
import { createSearchIndex } from '../src/search/index.js';
import type { IndexedEntry, KeywordIndex } from '../src/search/types.js';
import { describeGenerated, generateEntries, generateQueries, type GeneratedQuery } from './lib/generate-entries.js';

export { generateEntries, streamEntries, describeGenerated, generateQueries } from './lib/generate-entries.js';

interface Args {
  sizes: number[];
  queries: number;
  seed: number;
  minisearch: boolean;
  /** Queries per kind for MiniSearch (default: --queries); it is two orders of magnitude slower. */
  miniQueries?: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { sizes: [10_000, 100_000], queries: 2000, seed: 42, minisearch: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = (): string => argv[++i] ?? '';
    if (a === '--sizes') args.sizes = next().split(',').map(Number).filter((n) => n > 0);
    else if (a === '--queries') args.queries = Number(next());
    else if (a === '--seed') args.seed = Number(next());
    else if (a === '--no-minisearch') args.minisearch = false;
    else if (a === '--mini-queries') args.miniQueries = Number(next());
  }
  return args;
}

const gc = (globalThis as { gc?: () => void }).gc;
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 20));

/** Heap in use after a full collection (after a tick, so temporaries of the caller are gone). */
async function settledHeap(): Promise<number | undefined> {
  if (!gc) return undefined;
  await tick();
  gc();
  await tick();
  gc();
  return process.memoryUsage().heapUsed;
}

interface Latency {
  p50: number;
  p99: number;
  mean: number;
  /** Average `total` (or result count) per query. */
  avgResults: number;
}

function measure(queries: readonly GeneratedQuery[], run: (q: GeneratedQuery) => number): Latency {
  for (let i = 0; i < Math.min(200, queries.length); i++) run(queries[i]!);
  const times: number[] = [];
  let results = 0;
  for (const q of queries) {
    const t = performance.now();
    results += run(q);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const at = (p: number): number => times[Math.min(times.length - 1, Math.floor(p * times.length))]!;
  return { p50: at(0.5), p99: at(0.99), mean: times.reduce((a, b) => a + b, 0) / times.length, avgResults: results / queries.length };
}

/** Generated entries as the registry would hand them to the index (JSON round trip, as stored). */
function makeEntries(size: number, seed: number): IndexedEntry[] {
  return generateEntries(size, seed).map((g) => ({
    id: g.id,
    owner: g.owner,
    updatedAt: g.updatedAt,
    description: JSON.parse(JSON.stringify(describeGenerated(g))) as EntryDescription,
  }));
}

// ---------------------------------------------------------------------------------------------
// MiniSearch over the same units, with a plain filter callback: what a user might pick instead.

interface MiniDoc {
  id: number;
  name: string;
  tags: string;
  description: string;
  examples: string;
}

type MiniUnit = { entry: IndexedEntry; skill?: SkillDescription; tool?: ToolDescription };

function plainFilter(f: SearchFilter | undefined): ((u: MiniUnit) => boolean) | undefined {
  if (!f) return undefined;
  const hints = f.readOnly !== undefined || f.destructive !== undefined || f.idempotent !== undefined || f.openWorld !== undefined;
  return ({ entry, skill, tool }) => {
    const d = entry.description;
    if (f.kind && d.kind !== f.kind) return false;
    if (f.owner !== undefined && entry.owner !== f.owner) return false;
    if (f.streaming !== undefined && d.streaming !== f.streaming) return false;
    if (f.protocolBinding && !d.interfaces.some((i) => i.protocolBinding.toLowerCase() === f.protocolBinding!.toLowerCase())) return false;
    if (f.protocolVersion) {
      const v = f.protocolVersion;
      if (!d.interfaces.some((i) => i.protocolVersion === v || (i.protocolVersion ?? '').startsWith(`${v}.`))) return false;
    }
    if (f.tags && !(skill && skill.tags.some((t) => f.tags!.some((x) => x.toLowerCase() === t.toLowerCase())))) return false;
    if (f.inputModes && !(skill && (skill.inputModes?.length ? skill.inputModes : d.defaultInputModes).some((m) => f.inputModes!.includes(m)))) return false;
    if (hints) {
      if (!tool) return false;
      if (f.readOnly !== undefined && tool.hints.readOnlyHint !== f.readOnly) return false;
      if (f.destructive !== undefined && tool.hints.destructiveHint !== f.destructive) return false;
    }
    return true;
  };
}

function buildMini(entries: readonly IndexedEntry[]): { mini: MiniSearch<MiniDoc>; units: MiniUnit[] } {
  const units: MiniUnit[] = [];
  const mini = new MiniSearch<MiniDoc>({
    fields: ['name', 'tags', 'description', 'examples'],
    storeFields: [],
    searchOptions: { boost: { name: 3, tags: 2.5, description: 1.5 }, combineWith: 'OR' },
  });
  const docs: MiniDoc[] = [];
  const flush = (): void => {
    mini.addAll(docs);
    docs.length = 0;
  };
  for (const entry of entries) {
    const d = entry.description;
    docs.push({ id: units.length, name: d.name, tags: '', description: `${d.description} ${d.provider ?? ''}`, examples: '' });
    units.push({ entry });
    for (const s of d.skills) {
      docs.push({ id: units.length, name: s.name, tags: s.tags.join(' '), description: s.description, examples: s.examples.join(' ') });
      units.push({ entry, skill: s });
    }
    for (const t of d.tools) {
      docs.push({ id: units.length, name: `${t.name} ${t.title ?? ''} ${t.annotationTitle ?? ''}`, tags: '', description: t.description, examples: '' });
      units.push({ entry, tool: t });
    }
    if (docs.length > 10_000) flush();
  }
  flush();
  return { mini, units };
}

// ---------------------------------------------------------------------------------------------

const loadAverage = (): string => loadavg().map((l) => l.toFixed(2)).join(' ');
const fmt = (ms: number): string => (ms < 10 ? ms.toFixed(3) : ms.toFixed(1));
const mib = (b: number | undefined): string => (b === undefined ? 'n/a' : `${(b / 2 ** 20).toFixed(1)} MiB`);

function row(label: string, l: Latency): string {
  return `  ${label.padEnd(34)} p50 ${fmt(l.p50).padStart(7)} ms   p99 ${fmt(l.p99).padStart(7)} ms   mean ${fmt(l.mean).padStart(7)} ms   avg total ${l.avgResults.toFixed(0)}`;
}

async function benchSize(size: number, args: Args): Promise<void> {
  console.log(`\n=== ${size.toLocaleString('en-US')} entries ===`);
  const t0 = performance.now();
  const entries = makeEntries(size, args.seed);
  const units = entries.reduce((n, e) => n + 1 + e.description.skills.length + e.description.tools.length, 0);
  console.log(`generated ${entries.length} entries (${units} units: entries, skills, tools) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const plain = generateQueries(args.queries, args.seed + 1, false);
  const filtered = generateQueries(args.queries, args.seed + 2, true);
  const listing: GeneratedQuery[] = filtered.map((q) => ({ text: '', filter: q.filter }));

  // --- the registry's index
  let heap0 = await settledHeap();
  let t = performance.now();
  const index: KeywordIndex = createSearchIndex();
  for (const e of entries) index.upsert(e);
  const buildMs = performance.now() - t;
  let heap1 = await settledHeap();
  const perEntry = heap0 !== undefined && heap1 !== undefined ? (heap1 - heap0) / size : undefined;
  console.log(`\nsrc/search (FlexSearch ${'0.8'}): build ${(buildMs / 1000).toFixed(2)} s, heap +${mib(perEntry === undefined ? undefined : perEntry * size)} (${perEntry === undefined ? 'n/a' : `${perEntry.toFixed(0)} B`} per entry)`);
  const run = (q: GeneratedQuery): number => index.search({ text: q.text, filter: q.filter, offset: 0, limit: 20 }).total;
  console.log(row('1-3 words, no filter', measure(plain, run)));
  console.log(row('1-3 words, with filters', measure(filtered, run)));
  console.log(row('empty text, filters only', measure(listing, run)));
  // Updates: replace existing entries with other generated content, then remove some.
  const upTimes: number[] = [];
  for (let i = 0; i < 500; i++) {
    const target = entries[(i * 7919) % entries.length]!;
    const source = entries[(i * 104729 + 1) % entries.length]!;
    const s = performance.now();
    index.upsert({ ...source, id: target.id });
    upTimes.push(performance.now() - s);
  }
  upTimes.sort((a, b) => a - b);
  const rmTimes: number[] = [];
  for (let i = 0; i < 200; i++) {
    const s = performance.now();
    index.remove(entries[(i * 31337) % entries.length]!.id);
    rmTimes.push(performance.now() - s);
  }
  rmTimes.sort((a, b) => a - b);
  console.log(`  upsert (replace) p50 ${fmt(upTimes[250]!)} ms  p99 ${fmt(upTimes[495]!)} ms;  remove p50 ${fmt(rmTimes[100]!)} ms  p99 ${fmt(rmTimes[198]!)} ms`);

  if (!args.minisearch) return;
  // --- MiniSearch over the same units
  heap0 = await settledHeap();
  t = performance.now();
  const { mini, units: miniUnits } = buildMini(entries);
  const miniBuild = performance.now() - t;
  heap1 = await settledHeap();
  const miniPerEntry = heap0 !== undefined && heap1 !== undefined ? (heap1 - heap0) / size : undefined;
  console.log(`\nMiniSearch 7 (4 fields, OR, prefix on last word, filter callback): build ${(miniBuild / 1000).toFixed(2)} s, heap +${mib(miniPerEntry === undefined ? undefined : miniPerEntry * size)} (${miniPerEntry === undefined ? 'n/a' : `${miniPerEntry.toFixed(0)} B`} per entry)`);
  const runMini = (q: GeneratedQuery): number => {
    const f = plainFilter(q.filter);
    const res = mini.search(q.text, {
      prefix: (_term, i, terms) => i === terms.length - 1 && terms[i]!.length >= 3,
      filter: f ? (r) => f(miniUnits[r.id as number]!) : undefined,
    });
    return res.length;
  };
  const mq = args.miniQueries ?? args.queries;
  console.log(row('1-3 words, no filter', measure(plain.slice(0, mq), runMini)));
  console.log(row('1-3 words, with filters', measure(filtered.slice(0, mq), runMini)));
  // Keep both indexes (and the entries) alive until measured.
  if (index.size + mini.documentCount + entries.length < 0) console.log('unreachable');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (!gc) console.log('(run with node --expose-gc for heap figures)');
  console.log(`search bench: sizes ${args.sizes.join(', ')}; ${args.queries} queries per kind; node ${process.version}; seed ${args.seed}`);
  console.log(`load average at start: ${loadAverage()} (latencies are wall clock, in-process; other load inflates them)`);
  for (const size of args.sizes) await benchSize(size, args);
  console.log(`\nload average at end: ${loadAverage()}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
