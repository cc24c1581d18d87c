/**
 * The same registry through each door, over HTTP on 127.0.0.1, on generated entries:
 * - one search (1–3 words) as an A2A SendMessage, an MCP tools/call search_agents, and an ARD
 *   POST /search: what each door adds to the shared operation;
 * - the AI Catalog's first page (100 entries with their documents mapped) served from the
 *   change-feed cache, against the same page built on every request (the same server code with
 *   REGISTRY_PUBLIC_READ=false, where every request is authorised through the list operation),
 *   and a revalidation (If-None-Match, 304).
 * Entries are loaded through the service; the servers run in this process (the load generator
 * shares its core, the same for every door: compare the rows, not the absolute figures).
 *
 *   npx tsx bench/doors.ts [--entries 5000] [--seconds 8] [--concurrency 16]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/observability/logger.js';
import { startRegistry } from '../src/server.js';
import { generateQueries, streamEntries, subjectOfGenerated } from './lib/generate-entries.js';
import { jsonRpcSender, printLoad, runLoad, type LoadResult } from './lib/http-load.js';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '5000' },
    seconds: { type: 'string', default: '8' },
    concurrency: { type: 'string', default: '16' },
  },
});
const entries = Number(values.entries);
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);
const token = 'bench-admin-token-0123456789';
const env = { REGISTRY_TOKENS: `admin:${token}`, REGISTRY_RATE_LIMITS: 'false', LOG_LEVEL: 'warn' };

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-doors-'));
const serve = (extra: Record<string, string> = {}) =>
  startRegistry(loadConfig({ ...process.env, ...env, ...extra, PORT: '0', HOST: '127.0.0.1', REGISTRY_DATA_DIR: dataDir }), createLogger('warn')).then(
    async (registry) => {
      await registry.ready; // it listens before its index has loaded
      return registry;
    },
  );
const loader = await serve();
for (const entry of streamEntries(entries, 11)) await loader.service.register(subjectOfGenerated(entry), { principal: 'admin', isAdmin: true });
console.log(`${loader.service.indexSize} entries; ${concurrency} concurrent clients; ${seconds} s per phase; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
await loader.close();

const texts = generateQueries(500, 3, false).map((q) => q.text);
const results: LoadResult[] = [];
const phase = async (label: string, send: (i: number) => Promise<boolean>) => {
  await runLoad('warm-up', { seconds: 1, concurrency }, send);
  results.push(await runLoad(label, { seconds, concurrency }, send));
};

const open = await serve();
try {
  const a2a = jsonRpcSender(open.url, undefined, 'TASK_STATE_COMPLETED');
  await phase('A2A SendMessage search', (i) => a2a([{ data: { search: { query: texts[i % texts.length], filter: { kind: 'agent' }, limit: 10 } }, mediaType: 'application/json' }]));
  await phase('MCP tools/call search_agents', async (i) => {
    const res = await fetch(`${open.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'search_agents', arguments: { query: texts[i % texts.length], limit: 10 } } }),
    });
    const body = (await res.json()) as { result?: { structuredContent?: unknown; isError?: boolean } };
    return res.ok && !body.result?.isError && body.result?.structuredContent !== undefined;
  });
  await phase('ARD POST /search', async (i) => {
    const res = await fetch(`${open.url}/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: { text: texts[i % texts.length], filter: { type: 'application/a2a-agent-card+json' } }, pageSize: 10 }),
    });
    await res.arrayBuffer();
    return res.ok;
  });
  await phase('catalog page 1, cached', async () => {
    const res = await fetch(`${open.url}/.well-known/ai-catalog.json`);
    await res.arrayBuffer();
    return res.ok;
  });
  const etag = (await fetch(`${open.url}/.well-known/ai-catalog.json`)).headers.get('etag')!;
  await phase('catalog page 1, 304', async () => {
    const res = await fetch(`${open.url}/.well-known/ai-catalog.json`, { headers: { 'if-none-match': etag } });
    await res.arrayBuffer();
    return res.status === 304;
  });
} finally {
  await open.close();
}

const closed = await serve({ REGISTRY_PUBLIC_READ: 'false' });
try {
  await phase('catalog page 1, built per request', async () => {
    const res = await fetch(`${closed.url}/.well-known/ai-catalog.json`, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    return res.ok;
  });
} finally {
  await closed.close();
}
for (const r of results) printLoad(r);
fs.rmSync(dataDir, { recursive: true, force: true });
