/**
 * Relevance benchmark (issue 18): recall@5 and MRR of the search index on a judged query set.
 *
 *   npx tsx bench/relevance.ts [--verbose] [--json] [--only <category>]
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
 * Measures, averaged over queries:
 * - recall@5: relevant entries among the first five / min(5, relevant entries);
 * - MRR: 1 / rank of the first relevant entry (0 when none is returned).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { McpServerDocument } from '../src/contract/types.js';
import { describeAgentCard, describeMcpServer, type EntryDescription } from '../src/registry/describe.js';
import { createSearchIndex } from '../src/search/index.js';
import type { IndexedEntry, SearchIndex } from '../src/search/types.js';

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
  const at = '2026-01-01T00:00:00.000Z';
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
    entries.push({ id, owner: 'bench', updatedAt: at, description });
  }
  const authored = JSON.parse(fs.readFileSync(path.join(DATA, 'authored', 'cards.json'), 'utf8')) as { id: string; card: unknown }[];
  for (const { id, card } of authored) entries.push({ id, owner: 'bench', updatedAt: at, description: describeAgentCard(card, '1.0') });
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

/** Entry ids in rank order (an entry's first hit places it). */
export function rankEntries(index: SearchIndex, query: string): string[] {
  const page = index.search({ text: query, offset: 0, limit: 100 });
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

export function evaluate(index: SearchIndex, queries: readonly JudgedQuery[], verbose = false): Map<string, Scores> {
  const sums = new Map<string, { n: number; r: number; m: number }>();
  const add = (key: string, r: number, m: number): void => {
    const s = sums.get(key) ?? { n: 0, r: 0, m: 0 };
    s.n++;
    s.r += r;
    s.m += m;
    sums.set(key, s);
  };
  for (const q of queries) {
    const ranked = rankEntries(index, q.query);
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

function main(): void {
  const argv = process.argv.slice(2);
  const verbose = argv.includes('--verbose');
  const json = argv.includes('--json');
  const onlyAt = argv.indexOf('--only');
  const only = onlyAt >= 0 ? argv[onlyAt + 1] : undefined;
  const entries = loadEntries();
  const queries = loadQueries().filter((q) => !only || q.category === only);
  const ids = new Set(entries.map((e) => e.id));
  for (const q of queries) for (const r of q.relevant) if (!ids.has(r)) throw new Error(`query ${JSON.stringify(q.query)} judges unknown entry "${r}"`);
  const index = createSearchIndex();
  for (const e of entries) index.upsert(e);
  if (!json) console.log(`relevance bench: ${entries.length} entries, ${queries.length} judged queries`);
  const scores = evaluate(index, queries, verbose && !json);
  if (json) {
    console.log(JSON.stringify(Object.fromEntries(scores)));
    return;
  }
  const order = ['all', 'plain', 'forms', 'lang', 'typo', 'related', 'syntax', 'multi'];
  for (const k of [...order, ...[...scores.keys()].filter((k) => !order.includes(k))]) {
    const s = scores.get(k);
    if (s) console.log(`  ${k.padEnd(8)} ${String(s.queries).padStart(3)} queries   recall@5 ${s.recallAt5.toFixed(3)}   MRR ${s.mrr.toFixed(3)}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main();
