/**
 * Search index benchmark: build time, memory per entry and query latency of the registry's
 * SearchIndex (its own posting lists in typed arrays, src/search), per relevance feature, against an earlier version
 * of the index (--compare) and MiniSearch over the same units.
 *
 *   node --expose-gc --import tsx bench/search.ts [--sizes 10000,100000] [--queries 2000]
 *        [--seed 42] [--no-minisearch] [--mini-queries N] [--compare <checkout>]
 *        [--default-only] [--repeat N]
 *
 * Entries come from ./lib/generate-entries.ts (agents with 2-8 skills, MCP servers with 3-15
 * tools, five languages). Queries: 1-3 vocabulary words, one in five with its last word cut
 * short (prefix), without and with one or two filters; empty text with filters; the plain
 * queries with a typo in a word of five letters or more; query syntax (a phrase, OR, -word,
 * field:word, word*); phrases of two and three words the entries say (their prose words next to
 * each other), alone and left out of a word.
 *
 * Every query runs on each configuration in turn (the same index with word forms, typos and
 * WordNet switched on one after the other, and `--compare`'s index, e.g. a `git worktree` or
 * `git archive` of main with node_modules linked), so machine load hits all of them alike.
 * `--default-only` measures the default configuration alone (and `--compare`'s index).
 * `--repeat N` runs each query N times back to back and keeps its fastest time: on a machine
 * shared with other work this filters out the query being preempted (which dominates p99 at a
 * high load average), at the price of warm caches for the repeated query, so read it as a lower
 * bound beside the single-run figures.
 *
 * Memory is the heap plus array buffers (the index's typed arrays live there) after a full GC,
 * before and after building (run with --expose-gc, or the memory figures are skipped).
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import MiniSearch from 'minisearch';
import type { SearchFilter } from '../src/contract/types.js';
import type { SkillDescription, ToolDescription } from '../src/contract/description.js';
import type { ResultsPer } from '../src/contract/types.js';
import { createSearchIndex } from '../src/search/index.js';
import type { PostingsIndex } from '../src/search/search-index.js';
import type { IndexPage, IndexQuery, IndexedEntry } from '../src/search/types.js';
import { isMainModule } from '../src/lib/entry-point.js';
import { tokenize } from '../src/search/text-encoder.js';
import { atLeastOne, positiveNumbers } from './lib/args.js';
import { generateEntries, generateQueries, indexedGenerated, withTimes, type GeneratedQuery } from './lib/generate-entries.js';

export { generateEntries, streamEntries, describeGenerated, generateQueries } from './lib/generate-entries.js';

interface Args {
  sizes: number[];
  queries: number;
  seed: number;
  minisearch: boolean;
  /** Queries per kind for MiniSearch (default: --queries); it is two orders of magnitude slower. */
  miniQueries?: number;
  /** A checkout whose src/search/index.ts is measured beside this one. */
  compare?: string;
  /** Only the default configuration (and --compare's). */
  defaultOnly: boolean;
  /** Runs per query; the fastest counts. */
  repeat: number;
}

function readArgs(): Args {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '10000,100000' },
      /** Queries per kind. */
      queries: { type: 'string', default: '2000' },
      seed: { type: 'string', default: '42' },
      'no-minisearch': { type: 'boolean', default: false },
      'mini-queries': { type: 'string' },
      compare: { type: 'string' },
      'default-only': { type: 'boolean', default: false },
      repeat: { type: 'string', default: '1' },
    },
  });
  return {
    sizes: positiveNumbers(values.sizes),
    queries: Number(values.queries),
    seed: Number(values.seed),
    minisearch: !values['no-minisearch'],
    ...(values['mini-queries'] !== undefined ? { miniQueries: Number(values['mini-queries']) } : {}),
    ...(values.compare !== undefined ? { compare: values.compare } : {}),
    defaultOnly: values['default-only'],
    repeat: atLeastOne(values.repeat),
  };
}

const gc = (globalThis as { gc?: () => void }).gc;
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 20));

/** Heap and array buffers in use after a full collection (after a tick, so temporaries of the caller are gone). */
async function settledHeap(): Promise<number | undefined> {
  if (!gc) return undefined;
  await tick();
  gc();
  await tick();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
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

/** Runs every query on each runner in turn (rotating who goes first); latency per runner (the fastest of `repeat` runs). */
function measureInterleaved(queries: readonly GeneratedQuery[], runners: ((q: GeneratedQuery) => number)[], repeat = 1): Latency[] {
  for (let i = 0; i < Math.min(200, queries.length); i++) for (const run of runners) run(queries[i]!);
  const times = runners.map(() => [] as number[]);
  const results = runners.map(() => 0);
  queries.forEach((q, k) => {
    for (let j = 0; j < runners.length; j++) {
      const r = (j + k) % runners.length;
      let best = Infinity;
      let found = 0;
      for (let rep = 0; rep < repeat; rep++) {
        const t = performance.now();
        found = runners[r]!(q);
        best = Math.min(best, performance.now() - t);
      }
      results[r]! += found;
      times[r]!.push(best);
    }
  });
  return times.map((ts, r) => {
    ts.sort((a, b) => a - b);
    const at = (p: number): number => ts[Math.min(ts.length - 1, Math.floor(p * ts.length))]!;
    return { p50: at(0.5), p99: at(0.99), mean: ts.reduce((a, b) => a + b, 0) / ts.length, avgResults: results[r]! / queries.length };
  });
}

/** The queries with one letter changed in a word of five letters or more (when they have one). */
function withTypos(queries: readonly GeneratedQuery[], seed: number): GeneratedQuery[] {
  let x = seed >>> 0;
  const rand = (n: number): number => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x % n;
  };
  return queries.map((q) => {
    const words = q.text.split(' ');
    const i = words.findIndex((w) => w.length >= 5);
    if (i < 0) return q;
    const w = words[i]!;
    const at = 1 + rand(w.length - 1);
    words[i] = w.slice(0, at) + 'aeiou'[rand(5)] + w.slice(at + 1);
    return { text: `${words.join(' ')} ` };
  });
}

/** Queries with operators over vocabulary words. */
function withSyntax(count: number, seed: number): GeneratedQuery[] {
  const words = generateQueries(count * 2, seed, false).map((q) => q.text.split(' ')[0]!).filter((w) => w.length >= 4);
  const forms = [
    (a: string, b: string) => `"${a} ${b}"`,
    (a: string, b: string) => `${a} OR ${b}`,
    (a: string, b: string) => `${a} -${b}`,
    (a: string) => `tags:${a}`,
    (a: string) => `name:${a}`,
    (a: string) => `${a.slice(0, 4)}*`,
  ];
  return Array.from({ length: count }, (_, i) => ({ text: forms[i % forms.length]!(words[i % words.length]!, words[(i * 7 + 3) % words.length]!) }));
}

/**
 * Phrases the entries say: two or three of a text's prose words next to each other (a skill's
 * description or example, a tool's description), quoted; one in four left out of its first word
 * (`word -"a b"`), which reads the phrase's units as an exclusion.
 */
function withPhrases(entries: readonly IndexedEntry[], count: number, seed: number): GeneratedQuery[] {
  let x = seed >>> 0;
  const rand = (n: number): number => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x % n;
  };
  const out: GeneratedQuery[] = [];
  for (let tries = 0; out.length < count && tries < count * 20; tries++) {
    const d = entries[rand(entries.length)]!.description;
    const texts = [...d.skills.flatMap((k) => [k.description, ...k.examples]), ...d.tools.map((t) => t.description)].filter((t): t is string => !!t);
    if (texts.length === 0) continue;
    const words = tokenize(texts[rand(texts.length)]!);
    const n = 2 + rand(2);
    if (words.length < n) continue;
    const at = rand(words.length - n + 1);
    const phrase = `"${words.slice(at, at + n).join(' ')}"`;
    out.push({ text: out.length % 4 === 3 ? `${words[at]} -${phrase}` : phrase });
  }
  return out;
}

/** Generated entries as the registry would hand them to the index (JSON round trip, as stored). */
function makeEntries(size: number, seed: number): IndexedEntry[] {
  return generateEntries(size, seed).map(indexedGenerated);
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

  const typos = withTypos(plain, args.seed + 3);
  const syntax = withSyntax(args.queries, args.seed + 4);
  const phrases = withPhrases(entries, args.queries, args.seed + 5);
  // Exact names of skills and tools, as pasted from a catalog (the name clause finds their units).
  const names: GeneratedQuery[] = [];
  const step = Math.max(1, Math.floor(entries.length / args.queries));
  for (let i = 0; i < entries.length && names.length < args.queries; i += step) {
    const d = entries[i]!.description;
    const name = d.skills[0]?.name ?? d.tools[0]?.name;
    if (name) names.push({ text: name });
  }

  // --- the registry's index (and --compare's)
  type Searchable = { search(q: IndexQuery): IndexPage | Promise<IndexPage>; upsert(e: IndexedEntry): void; remove(id: string): void; size: number };
  const built: { label: string; index: Searchable }[] = [];
  const makers: { label: string; create: () => Searchable }[] = [];
  if (args.compare) {
    const mod = (await import(`${args.compare.replace(/\/$/, '')}/src/search/index.ts`)) as { createSearchIndex: () => Searchable };
    // A checkout from before entries were indexed with their place in list's order reads it as
    // their time (withTimes), so both indexes order ties alike.
    const withBothTimes = (index: Searchable): Searchable => ({
      search: (q) => index.search(q),
      upsert: (e) => index.upsert(withTimes(e)),
      remove: (id) => index.remove(id),
      get size() {
        return index.size;
      },
    });
    makers.push({ label: `--compare ${args.compare}`, create: () => withBothTimes(mod.createSearchIndex()) });
  }
  makers.push({ label: 'src/search (this checkout)', create: () => createSearchIndex() });
  let heap0: number | undefined;
  let heap1: number | undefined;
  let t: number;
  for (const m of makers) {
    heap0 = await settledHeap();
    t = performance.now();
    const index = m.create();
    for (const e of entries) index.upsert(e);
    const buildMs = performance.now() - t;
    heap1 = await settledHeap();
    const perEntry = heap0 !== undefined && heap1 !== undefined ? (heap1 - heap0) / size : undefined;
    console.log(`\n${m.label}: build ${(buildMs / 1000).toFixed(2)} s, heap + array buffers +${mib(perEntry === undefined ? undefined : perEntry * size)} (${perEntry === undefined ? 'n/a' : `${perEntry.toFixed(0)} B`} per entry)`);
    const stats = (index as Partial<PostingsIndex>).stats;
    if (stats) {
      const names = stats.nameFilterBytes !== undefined ? `; skill and tool names' filter ${mib(stats.nameFilterBytes)}` : '';
      console.log(`  of which words for phrases ${mib(stats.phraseBytes)} (${(stats.phraseBytes / size).toFixed(0)} B per entry)${names}; ${stats.vocabularyTerms} distinct terms`);
    }
    built.push({ label: m.label, index });
  }
  const current = built.at(-1)!.index as PostingsIndex;

  // Configurations, each adding one feature; the compared index runs as it is.
  const off = { wordForms: false, typos: false, wordNet: false };
  type Config = { label: string; index: Searchable; setup?: () => void; resultsPer?: ResultsPer };
  const features: Config[] = [
    { label: 'exact words, per match', index: current, setup: () => current.setMatching(off), resultsPer: 'match' },
    { label: 'exact words, per entry', index: current, setup: () => current.setMatching(off), resultsPer: 'entry' },
    { label: '+ word forms', index: current, setup: () => current.setMatching({ ...off, wordForms: true }), resultsPer: 'entry' },
    { label: '+ typos', index: current, setup: () => current.setMatching({ ...off, wordForms: true, typos: true }), resultsPer: 'entry' },
  ];
  const configs: Config[] = [
    ...built.slice(0, -1).map((b) => ({ label: 'compared index', index: b.index })),
    ...(args.defaultOnly ? [] : features),
    { label: '+ WordNet (default)', index: current, setup: () => current.setMatching({}), resultsPer: 'entry' },
  ];
  for (const [kind, queries] of [
    ['1-3 words, no filter', plain],
    ['1-3 words, with filters', filtered],
    ['empty text, filters only', listing],
    ['a typo in a word', typos],
    ['syntax ("a b", OR, -w, f:w, w*)', syntax],
    ['phrases the entries say ("a b c", w -"a b")', phrases],
    ["a skill's or tool's exact name", names],
  ] as const) {
    console.log(`  ${kind}:`);
    const results = measureInterleaved(queries, configs.map((c) => (q: GeneratedQuery) => {
      c.setup?.();
      const page = c.index.search({ text: q.text, filter: q.filter, offset: 0, limit: 20, ...(c.resultsPer ? { resultsPer: c.resultsPer } : {}) }) as IndexPage;
      return page.total;
    }), args.repeat);
    results.forEach((l, i) => console.log(row(`    ${configs[i]!.label}`, l)));
  }
  current.setMatching({});
  const index = current;
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
  // Keep the indexes (and the entries) alive until measured.
  if (built.reduce((n, b) => n + b.index.size, 0) + mini.documentCount + entries.length < 0) console.log('unreachable');
}

async function main(): Promise<void> {
  const args = readArgs();
  if (!gc) console.log('(run with node --expose-gc for heap figures)');
  console.log(`search bench: sizes ${args.sizes.join(', ')}; ${args.queries} queries per kind${args.repeat > 1 ? `, each the fastest of ${args.repeat} runs` : ''}; node ${process.version}; seed ${args.seed}`);
  console.log(`load average at start: ${loadAverage()} (latencies are wall clock, in-process; other load inflates them)`);
  for (const size of args.sizes) await benchSize(size, args);
  console.log(`\nload average at end: ${loadAverage()}`);
}

if (isMainModule(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
