/**
 * PostgreSQL full-text search as the index (issue 22, point 6: the plan for beyond one
 * machine's memory), measured: generated entries in a table with a weighted tsvector and a GIN
 * index, plus the filter attributes as columns; typical queries with and without filters timed,
 * and their plans (EXPLAIN ANALYZE) printed. A measurement for docs/scaling.md, not an
 * implementation: the registry does not search this way.
 *
 *   npx tsx bench/pg-fts.ts [--entries 100000] [--queries 300]
 *
 * Needs PostgreSQL's server binaries (as the tests: test/support/postgres.ts starts a throwaway
 * server with fsync on; TEST_DATABASE_URL uses another). Entries: bench/lib/generate-entries.ts
 * (70 % A2A agents with skills and tags, 30 % MCP servers with tools, five languages); queries:
 * its generateQueries (1-3 vocabulary words, one in five with its last word cut short as if
 * being typed; filtered ones with one or two of kind, tags, input mode, binding, protocol
 * version, streaming, read-only, destructive, owner).
 *
 * The text configuration is 'simple' (no stemming: the entries are in five languages; a real
 * index would pick the configuration per entry language). Words are ANDed, the last one as a
 * prefix (`word:*`), ranked by ts_rank_cd with the weights name A, skill/tool names B,
 * descriptions C, tags D.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { SearchFilter } from '../src/contract/types.js';
import { startPostgres } from '../test/support/postgres.js';
import { describeGenerated, generateQueries, streamEntries, type GeneratedEntry } from './lib/generate-entries.js';

function readArgs(): { entries: number; queries: number } {
  const { values } = parseArgs({
    options: {
      entries: { type: 'string', default: '100000' },
      /** Queries per kind: text only, text with filters, filters only. */
      queries: { type: 'string', default: '300' },
    },
  });
  return { entries: Number(values.entries), queries: Number(values.queries) };
}

const SCHEMA = `
  CREATE TABLE search_documents (
    id               text PRIMARY KEY,
    kind             text NOT NULL,
    owner            text NOT NULL,
    updated_at       timestamptz NOT NULL,
    protocol_version text,
    streaming        boolean NOT NULL,
    tags             text[] NOT NULL,
    input_modes      text[] NOT NULL,
    bindings         text[] NOT NULL,
    read_only        boolean,
    destructive      boolean,
    document         tsvector NOT NULL
  );`;

const INDEXES = [
  'CREATE INDEX search_documents_fts ON search_documents USING gin (document)',
  'CREATE INDEX search_documents_tags ON search_documents USING gin (tags)',
  'CREATE INDEX search_documents_modes ON search_documents USING gin (input_modes)',
  'CREATE INDEX search_documents_kind ON search_documents (kind, updated_at DESC)',
  'CREATE INDEX search_documents_owner ON search_documents (owner, updated_at DESC)',
  // Filters without an index of their own (binding, version, read-only...) walk the newest first and stop at 20.
  'CREATE INDEX search_documents_updated ON search_documents (updated_at DESC, id)',
];

/** One row per entry: the attributes the filters need, and the text by weight. */
function rowOf(entry: GeneratedEntry) {
  const d = describeGenerated(entry);
  const tools = d.tools;
  return {
    id: entry.id,
    kind: d.kind,
    owner: entry.owner,
    updated_at: entry.updatedAt,
    protocol_version: d.protocolVersion ?? null,
    streaming: d.streaming,
    tags: [...new Set(d.skills.flatMap((s) => s.tags))],
    input_modes: [...new Set([...d.defaultInputModes, ...d.skills.flatMap((s) => s.inputModes ?? [])])],
    bindings: [...new Set(d.interfaces.map((i) => i.protocolBinding))],
    read_only: tools.length > 0 ? tools.every((t) => t.hints.readOnlyHint) : null,
    destructive: tools.length > 0 ? tools.some((t) => t.hints.destructiveHint) : null,
    a: d.name,
    b: [...d.skills.map((s) => s.name), ...tools.map((t) => `${t.name.replace(/[_-]/g, ' ')} ${t.title ?? ''}`)].join(' '),
    c: [d.description, ...d.skills.map((s) => `${s.description} ${s.examples.join(' ')}`), ...tools.map((t) => t.description)].join(' '),
    dd: [...new Set(d.skills.flatMap((s) => s.tags))].join(' '),
  };
}

async function load(client: pg.Client, count: number): Promise<void> {
  let batch: ReturnType<typeof rowOf>[] = [];
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    await client.query(
      `INSERT INTO search_documents
       SELECT r.id, r.kind, r.owner, r.updated_at, r.protocol_version, r.streaming, r.tags, r.input_modes, r.bindings, r.read_only, r.destructive,
              setweight(to_tsvector('simple', r.a), 'A') || setweight(to_tsvector('simple', r.b), 'B') ||
              setweight(to_tsvector('simple', r.c), 'C') || setweight(to_tsvector('simple', r.dd), 'D')
       FROM json_populate_recordset(NULL::search_rows, $1::json) AS r`,
      [JSON.stringify(batch)],
    );
    batch = [];
  };
  for (const entry of streamEntries(count, 7)) {
    batch.push(rowOf(entry));
    if (batch.length >= 1000) await flush();
  }
  await flush();
}

/** The query's words as a tsquery text: ANDed, the last one a prefix (it may still be being typed). */
function tsquery(text: string): string | undefined {
  const words = text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
  if (words.length === 0) return undefined;
  return words.map((w, i) => (i === words.length - 1 ? `${w}:*` : w)).join(' & ');
}

/** A search as SQL: the filters as conditions on the columns, the words as a tsquery. */
function sqlOf(text: string, filter: SearchFilter | undefined): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const where: string[] = [];
  const param = (v: unknown): string => {
    params.push(v);
    return `$${params.length}`;
  };
  const q = tsquery(text);
  const query = q === undefined ? undefined : param(q);
  if (query) where.push(`document @@ to_tsquery('simple', ${query})`);
  if (filter?.kind) where.push(`kind = ${param(filter.kind)}`);
  if (filter?.owner) where.push(`owner = ${param(filter.owner)}`);
  if (filter?.tags) where.push(`tags @> ${param(filter.tags)}::text[]`);
  if (filter?.inputModes) where.push(`input_modes @> ${param(filter.inputModes)}::text[]`);
  if (filter?.protocolBinding) where.push(`${param(filter.protocolBinding)} = ANY (bindings)`);
  if (filter?.protocolVersion) where.push(`protocol_version = ${param(filter.protocolVersion)}`);
  if (filter?.streaming !== undefined) where.push(`streaming = ${param(filter.streaming)}`);
  if (filter?.readOnly !== undefined) where.push(`read_only = ${param(filter.readOnly)}`);
  if (filter?.destructive !== undefined) where.push(`destructive = ${param(filter.destructive)}`);
  const order = query ? `ts_rank_cd('{0.1, 0.2, 0.4, 1.0}', document, to_tsquery('simple', ${query})) DESC, id` : 'updated_at DESC, id';
  return { sql: `SELECT id FROM search_documents ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order} LIMIT 20`, params };
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function timeQueries(client: pg.Client, label: string, queries: { text: string; filter?: SearchFilter }[]): Promise<void> {
  const ms: number[] = [];
  let hits = 0;
  for (const q of queries) {
    const { sql, params } = sqlOf(q.text, q.filter);
    const started = performance.now();
    const { rowCount } = await client.query(sql, params);
    ms.push(performance.now() - started);
    hits += rowCount ?? 0;
  }
  ms.sort((a, b) => a - b);
  console.log(`${label.padEnd(34)} p50 ${percentile(ms, 50).toFixed(2)} ms  p90 ${percentile(ms, 90).toFixed(2)} ms  p99 ${percentile(ms, 99).toFixed(2)} ms  (${queries.length} queries, ${(hits / queries.length).toFixed(1)} hits on average)`);
}

async function explain(client: pg.Client, label: string, text: string, filter?: SearchFilter): Promise<void> {
  const { sql, params } = sqlOf(text, filter);
  const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`, params);
  console.log(`\n-- ${label}: ${JSON.stringify(text)}${filter ? ` ${JSON.stringify(filter)}` : ''}`);
  for (const row of rows) console.log(`   ${row['QUERY PLAN']}`);
}

const args = readArgs();
const started = await startPostgres();
if (!started.ok) {
  console.log(`skipped: ${started.skipReason}`);
  process.exit(0);
}
const server = started.pg;
const client = new pg.Client({ connectionString: await server.createDatabase('bench_fts') });
await client.connect();
try {
  console.log(`${args.entries.toLocaleString('en-US')} generated entries, PostgreSQL ${(await client.query('SHOW server_version')).rows[0].server_version}, Node ${process.version}, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  await client.query(SCHEMA);
  await client.query(
    `CREATE TYPE search_rows AS (id text, kind text, owner text, updated_at timestamptz, protocol_version text, streaming boolean, tags text[],
       input_modes text[], bindings text[], read_only boolean, destructive boolean, a text, b text, c text, dd text)`,
  );
  let t = performance.now();
  await load(client, args.entries);
  const loadS = (performance.now() - t) / 1000;
  t = performance.now();
  for (const index of INDEXES) await client.query(index);
  await client.query('VACUUM ANALYZE search_documents');
  const indexS = (performance.now() - t) / 1000;
  const sizes = (
    await client.query<{ table: string; fts: string; all: string }>(
      `SELECT pg_size_pretty(pg_table_size('search_documents')) AS table,
              pg_size_pretty(pg_relation_size('search_documents_fts')) AS fts,
              pg_size_pretty(pg_indexes_size('search_documents')) AS all`,
    )
  ).rows[0]!;
  console.log(`load (tsvector built in SQL): ${loadS.toFixed(1)} s (${Math.round(args.entries / loadS)}/s); indexes + VACUUM ANALYZE: ${indexS.toFixed(1)} s`);
  console.log(`sizes: table ${sizes.table}, GIN on the tsvector ${sizes.fts}, all indexes ${sizes.all}`);

  // Warm the cache the way a running server's would be, then time.
  await timeQueries(client, 'warm-up', generateQueries(100, 99, true));
  console.log('');
  await timeQueries(client, 'text only', generateQueries(args.queries, 1, false));
  await timeQueries(client, 'text with 1-2 filters', generateQueries(args.queries, 2, true));
  await timeQueries(
    client,
    'filters only (newest first)',
    generateQueries(args.queries, 3, true).map((q) => ({ text: '', filter: q.filter })),
  );

  await explain(client, 'two words, the last a prefix', 'invoice transl');
  await explain(client, 'one word with a tag filter', 'invoice', { tags: ['finance'] });
  await explain(client, 'a common word with a kind filter', 'data', { kind: 'mcp-server' });
  await explain(client, 'filters only', '', { kind: 'agent', streaming: true });
  await explain(client, 'filters only, one without an index', '', { protocolBinding: 'GRPC', readOnly: true });
  console.log(`\nload ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
} finally {
  await client.end();
  await server.stop();
}
