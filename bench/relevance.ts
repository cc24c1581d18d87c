/**
 * Relevance benchmark (issue 18): recall@5 and MRR of the search index on a judged query set.
 *
 *   npx tsx bench/relevance.ts [--verbose] [--json] [--only <category>] [--config <name>]
 *
 * Prints one row per configuration, each adding one feature of issue 18 to the one before, so
 * the rows are the before/after of each change (--config runs one; --verbose lists every query
 * that is not perfect for it).
 *
 * Documents: the shared corpus of real agent cards and MCP toolspecs, copied into
 * bench/relevance/corpus/ (sources and commits in its SOURCES.tsv files), plus 15 cards written
 * for this benchmark in bench/relevance/authored/cards.json (the gaps the issue names, and cards
 * in German, Spanish, French, Italian, Indonesian and Portuguese, which the corpus lacks). Every
 * document that parses is indexed, valid or not: relevance is about the words, and the
 * validator's verdict is tested elsewhere.
 *
 * Queries: bench/relevance/queries.tsv, written before any tuning, with the entries judged
 * relevant to each. Results are compared per entry (an entry's first hit is its rank).
 *
 * The last configuration adds bench/relevance/synonyms.txt, an operator's synonym file written
 * after seeing which related-word queries still failed: it shows what the mechanism does for an
 * operator who knows their users' words, not how well anything generalises.
 *
 * Measures, averaged over queries:
 * - recall@5: relevant entries among the first five / min(5, relevant entries);
 * - MRR: 1 / rank of the first relevant entry (0 when none is returned).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { McpServerDocument } from '../src/contract/types.js';
import type { EntryDescription } from '../src/contract/description.js';
import { describeAgentCard, describeMcpServer } from '../src/registry/describe.js';
import type { ResultsPer } from '../src/contract/types.js';
import { createSearchIndex, type SearchIndexOptions } from '../src/search/index.js';
import { Synonyms } from '../src/search/synonyms.js';
import type { IndexedEntry, SearchIndex } from '../src/search/types.js';
import { isMainModule } from '../src/lib/entry-point.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DATA = path.join(HERE, 'relevance');

export interface JudgedQuery {
  category: string;
  query: string;
  relevant: string[];
}

export interface Scores {
  queries: number;
  recallAt5: number;
  mrr: number;
}

/** Every benchmark document, as the registry would hand it to the index. */
export function loadEntries(): IndexedEntry[] {
  const entries: IndexedEntry[] = [];
  // One place in list's order for all (ties go by id), as when they shared a registration time.
  const listSeq = 0;
  const rows = fs.readFileSync(path.join(DATA, 'corpus', 'entries.tsv'), 'utf8').trim().split('\n').slice(1);
  for (const row of rows) {
    const [id, file] = row.split('\t') as [string, string];
    let json: unknown;
    try {
      json = JSON.parse(fs.readFileSync(path.join(DATA, 'corpus', file), 'utf8'));
    } catch {
      continue;
    }
    let description: EntryDescription;
    if (file.startsWith('toolspecs/')) {
      const doc = { mcpServer: { name: id, url: `https://mcp.example.org/${id}` }, toolspec: json } as McpServerDocument;
      description = describeMcpServer(doc);
    } else {
      const card = json as Record<string, unknown>;
      description = describeAgentCard(card, Array.isArray(card.supportedInterfaces) ? '1.0' : '0.3');
    }
    entries.push({ id, owner: 'bench', listSeq, description });
  }
  const authored = JSON.parse(fs.readFileSync(path.join(DATA, 'authored', 'cards.json'), 'utf8')) as { id: string; card: unknown }[];
  for (const { id, card } of authored) entries.push({ id, owner: 'bench', listSeq, description: describeAgentCard(card, '1.0') });
  return entries;
}

export function loadQueries(): JudgedQuery[] {
  return fs
    .readFileSync(path.join(DATA, 'queries.tsv'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map((l) => {
      const [category, query, relevant] = l.split('\t') as [string, string, string];
      return { category, query, relevant: relevant.split(',').map((s) => s.trim()).filter(Boolean) };
    });
}

export interface BenchConfig {
  name: string;
  options: SearchIndexOptions;
  resultsPer: ResultsPer;
}

/** Each configuration adds one change to the previous one. */
export function configs(): BenchConfig[] {
  const none: SearchIndexOptions = { wordForms: false, typos: false, wordNet: false };
  return [
    { name: 'syntax, per match', options: none, resultsPer: 'match' },
    { name: '+ results per entry', options: none, resultsPer: 'entry' },
    { name: '+ word forms', options: { ...none, wordForms: true }, resultsPer: 'entry' },
    { name: '+ typos', options: { ...none, wordForms: true, typos: true }, resultsPer: 'entry' },
    { name: '+ WordNet', options: {}, resultsPer: 'entry' },
    { name: '+ operator synonyms', options: { synonyms: Synonyms.load(path.join(DATA, 'synonyms.txt')) }, resultsPer: 'entry' },
  ];
}

/** Entry ids in rank order (an entry's first hit places it). */
export function rankEntries(index: SearchIndex, query: string, resultsPer: ResultsPer = 'entry'): string[] {
  const page = index.search({ text: query, offset: 0, limit: 100, resultsPer });
  if (page instanceof Promise) throw new Error('the benchmark runs the keyword index, which answers synchronously');
  const seen = new Set<string>();
  for (const hit of page.hits) seen.add(hit.id);
  return [...seen];
}

export function score(ranked: readonly string[], relevant: readonly string[]): { recallAt5: number; rr: number; firstRank: number } {
  const rel = new Set(relevant);
  const top5 = ranked.slice(0, 5).filter((id) => rel.has(id)).length;
  const first = ranked.findIndex((id) => rel.has(id));
  return { recallAt5: top5 / Math.min(5, rel.size), rr: first < 0 ? 0 : 1 / (first + 1), firstRank: first < 0 ? -1 : first + 1 };
}

export function evaluate(index: SearchIndex, queries: readonly JudgedQuery[], resultsPer: ResultsPer, verbose = false): Map<string, Scores> {
  const sums = new Map<string, { n: number; r: number; m: number }>();
  const add = (key: string, r: number, m: number): void => {
    const s = sums.get(key) ?? { n: 0, r: 0, m: 0 };
    s.n++;
    s.r += r;
    s.m += m;
    sums.set(key, s);
  };
  for (const q of queries) {
    const ranked = rankEntries(index, q.query, resultsPer);
    const s = score(ranked, q.relevant);
    add('all', s.recallAt5, s.rr);
    add(q.category, s.recallAt5, s.rr);
    if (verbose && (s.recallAt5 < 1 || s.rr < 1)) {
      console.log(`  [${q.category}] ${JSON.stringify(q.query)}: recall@5 ${s.recallAt5.toFixed(2)}, first relevant at ${s.firstRank < 0 ? '-' : s.firstRank}; want ${q.relevant.join(',')}; top 5: ${ranked.slice(0, 5).join(', ') || '(none)'}`);
    }
  }
  const out = new Map<string, Scores>();
  for (const [k, s] of sums) out.set(k, { queries: s.n, recallAt5: s.r / s.n, mrr: s.m / s.n });
  return out;
}

const CATEGORIES = ['all', 'plain', 'forms', 'lang', 'typo', 'related', 'syntax', 'multi', 'names'];

function main(): void {
  const argv = process.argv.slice(2);
  const verbose = argv.includes('--verbose');
  const json = argv.includes('--json');
  const arg = (name: string): string | undefined => {
    const at = argv.indexOf(name);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  const only = arg('--only');
  const configName = arg('--config');
  const entries = loadEntries();
  const queries = loadQueries().filter((q) => !only || q.category === only);
  const ids = new Set(entries.map((e) => e.id));
  for (const q of queries) for (const r of q.relevant) if (!ids.has(r)) throw new Error(`query ${JSON.stringify(q.query)} judges unknown entry "${r}"`);
  const runs = configs().filter((c) => !configName || c.name === configName);
  if (runs.length === 0) throw new Error(`no configuration "${configName}"; one of: ${configs().map((c) => c.name).join(' | ')}`);
  if (!json) {
    console.log(`relevance bench: ${entries.length} entries, ${queries.length} judged queries; cells are recall@5 / MRR`);
    console.log(`  ${'configuration'.padEnd(22)} ${CATEGORIES.map((c) => `${c} (${queries.filter((q) => c === 'all' || q.category === c).length})`.padEnd(13)).join(' ')}`);
  }
  const out: Record<string, Record<string, Scores>> = {};
  for (const config of runs) {
    const index = createSearchIndex(config.options);
    for (const e of entries) index.upsert(e);
    if (verbose && !json) console.log(`\n${config.name}:`);
    const scores = evaluate(index, queries, config.resultsPer, verbose && !json);
    out[config.name] = Object.fromEntries(scores);
    if (!json) {
      const cell = (k: string): string => {
        const sc = scores.get(k);
        return (sc ? `${sc.recallAt5.toFixed(3)}/${sc.mrr.toFixed(3)}` : '-').padEnd(13);
      };
      console.log(`  ${config.name.padEnd(22)} ${CATEGORIES.map(cell).join(' ')}`);
    }
  }
  if (json) console.log(JSON.stringify(out));
}

if (isMainModule(import.meta.url)) main();
