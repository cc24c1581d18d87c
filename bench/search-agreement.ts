/**
 * Do searches answer the same first pages as an earlier version of the index? Runs the
 * generated query kinds of bench/search.ts on this checkout's index and on `--compare`'s (a
 * `git worktree` of main with node_modules linked) over the same entries, and counts the first
 * pages that are identical (the whole hits in order: ids, scores, match with its fields, other
 * matches, folded counts), among them those whose earlier answer was exact, and the totals
 * that are equal where this index says its total is exact (where it says "at least", the
 * total limit or the search's work bounds stopped the count), and the pages with fewer hits
 * than the earlier answer's (against a full read: cut short by the work bounds) and of those
 * the empty ones.
 *
 *   node --expose-gc --import tsx bench/search-agreement.ts --compare <checkout>
 *        [--size 100000 | --index-file <snapshot>] [--queries 500] [--seed 42] [--pages 1]
 *        [--compare-options <json>]
 *
 * `--index-file` loads a saved index (bench/search-saved.ts writes one) into each version in
 * turn instead of building from generated entries (1,000,000 entries: give the heap room,
 * NODE_OPTIONS=--max-old-space-size=6144). `--pages` also compares the pages after the first.
 * `--compare-options <json>` builds the compared index with those SearchIndexOptions: with
 * `'{"maxPostings":1e9,"maxCandidates":1e9,"settleAfter":1e15}'` and `--compare` this very
 * checkout, it compares with a search that reads every posting (slow at 1M: fewer queries).
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { EntryDescription } from '../src/contract/description.js';
import type { SearchFilter } from '../src/contract/types.js';
import { atLeastOne } from './lib/args.js';
import { generateQueries, indexedGenerated, streamEntries, withTimes } from './lib/generate-entries.js';

const { values } = parseArgs({
  options: {
    /** The checkout compared with (a `git worktree` with node_modules); required. */
    compare: { type: 'string', default: '' },
    size: { type: 'string', default: '100000' },
    /** A saved index to load instead of building from `--size` generated entries. */
    'index-file': { type: 'string', default: '' },
    /** Queries per kind. */
    queries: { type: 'string', default: '500' },
    seed: { type: 'string', default: '42' },
    /** Pages compared per query (the first, and those after it). */
    pages: { type: 'string', default: '1' },
    /** SearchIndexOptions (JSON) for the compared index. */
    'compare-options': { type: 'string', default: '{}' },
  },
});
const args = {
  size: Number(values.size),
  file: values['index-file'],
  queries: Number(values.queries),
  seed: Number(values.seed),
  pages: atLeastOne(values.pages),
  compare: values.compare.replace(/\/$/, ''),
  compareOptions: values['compare-options'],
};
if (!args.compare) {
  console.error('usage: bench/search-agreement.ts --compare <checkout> [--size N | --index-file F] [--queries N] [--seed N] [--pages N] [--compare-options JSON]');
  process.exit(2);
}

interface Hit {
  id: string;
  match: { type: string; id?: string; name: string };
  moreInEntry?: number;
}
interface Page {
  hits: Hit[];
  total: number;
  totalExact?: false;
}
interface Index {
  search(q: { text?: string; filter?: SearchFilter; offset: number; limit: number; resultsPer?: 'entry' | 'match' }): Page;
  upsert(e: { id: string; owner: string; listSeq: number; createdAt: string; updatedAt: string; description: EntryDescription }): void;
  loadState?(state: Map<string, unknown>): void;
}
interface Modules {
  createSearchIndex(options?: object): Index;
  readIndexSnapshot(file: string, check: () => undefined): Promise<{ ok: true; state: Map<string, unknown> } | { ok: false; reason: string }>;
}

const LIMIT = 20;
const filtered = generateQueries(args.queries, args.seed + 2, true);
const kinds: [string, { text: string; filter?: SearchFilter; resultsPer?: 'match' }[]][] = [
  ['1-3 words, no filter', generateQueries(args.queries, args.seed + 1, false)],
  ['1-3 words, with filters', filtered],
  ['empty text, filters only', filtered.map((q) => ({ text: '', filter: q.filter }))],
  ['with filters, per match', filtered.map((q) => ({ ...q, resultsPer: 'match' as const }))],
  ['filters only, per match', filtered.map((q) => ({ text: '', filter: q.filter, resultsPer: 'match' as const }))],
];

/** Every query kind's pages on one version of the index (built or loaded, then released). */
async function answers(dir: string, options: object = {}): Promise<Page[][][]> {
  const mod = {
    ...((await import(`${dir}/src/search/index.ts`)) as Pick<Modules, 'createSearchIndex'>),
    ...((await import(`${dir}/src/search/snapshot-file.ts`)) as Pick<Modules, 'readIndexSnapshot'>),
  };
  const index = mod.createSearchIndex(options);
  const started = performance.now();
  if (args.file) {
    const saved = await mod.readIndexSnapshot(args.file, () => undefined);
    if (!saved.ok) throw new Error(`${args.file}: ${saved.reason}`);
    index.loadState!(saved.state);
  } else {
    for (const g of streamEntries(args.size, args.seed)) index.upsert(withTimes(indexedGenerated(g)));
  }
  console.log(`  ${dir}${Object.keys(options).length ? ` ${JSON.stringify(options)}` : ''}: index ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return kinds.map(([, queries]) =>
    queries.map((q) => Array.from({ length: args.pages }, (_, p) => index.search({ text: q.text, filter: q.filter, offset: p * LIMIT, limit: LIMIT, resultsPer: q.resultsPer }))),
  );
}

// Whole hits: ids, scores, the match and its fields, the other matches, folded counts, in order.
const key = (p: Page): string => JSON.stringify(p.hits);

console.log(`search agreement: ${args.file || `${args.size} generated entries`}, ${args.queries} queries per kind, ${args.pages} page(s) of ${LIMIT}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
const here = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
const before = await answers(args.compare, JSON.parse(args.compareOptions) as object);
(globalThis as { gc?: () => void }).gc?.();
const after = await answers(here);
kinds.forEach(([label], k) => {
  let samePages = 0;
  let pages = 0;
  let exact = 0;
  let sameTotals = 0;
  let bounded = 0;
  // Pages whose earlier answer was exact (its total not "at least"): these must not change.
  let wasExact = 0;
  let sameWasExact = 0;
  // Pages with fewer hits than the earlier answer's (against a full read: cut short by the work
  // bounds), and those left empty where it had hits.
  let short = 0;
  let empty = 0;
  const differing: string[] = [];
  after[k]!.forEach((qPages, i) => {
    qPages.forEach((a, p) => {
      const b = before[k]![i]![p]!;
      pages++;
      if (b.totalExact !== false) {
        wasExact++;
        if (key(a) === key(b)) sameWasExact++;
      }
      if (a.hits.length < b.hits.length) {
        short++;
        if (a.hits.length === 0) empty++;
      }
      if (key(a) === key(b)) samePages++;
      else if (differing.length < 3) differing.push(JSON.stringify(kinds[k]![1][i]) + (p > 0 ? ` page ${p + 1}` : ''));
      if (a.totalExact === false) bounded++;
      else {
        exact++;
        if (a.total === b.total) sameTotals++;
      }
    });
  });
  console.log(
    `  ${label.padEnd(26)} same pages ${samePages}/${pages} (of those exact before ${sameWasExact}/${wasExact})   exact totals equal ${sameTotals}/${exact}   "at least" totals ${bounded}   shorter pages ${short} (empty ${empty})` +
      (differing.length ? `\n      differ: ${differing.join('\n              ')}` : ''),
  );
});
console.log(`load average at end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
