/**
 * End-to-end search throughput over HTTP (JSON-RPC SendMessage with a `search` data part of 1-3
 * words, with or without filters) against the same server answering a no-op message (a request
 * the executor declines at once: the full A2A round trip with its task write, no registry work),
 * measured in one run and printed as a ratio; then the same searches over the A2A gRPC binding
 * (GRPC_PORT, one HTTP/2 channel), printed as a ratio to JSON-RPC. The registry is loaded with generated entries first (through the
 * service, so loading does not dominate the run).
 *
 * With --rounds n the JSON-RPC and gRPC search phases alternate n times (on a busy machine,
 * drift then weighs on both alike) and the ratio is of their totals.
 *
 * Load generator and server share the machine, so requests per second also measure the
 * clients (a gRPC client encodes and decodes protobuf; fetch parses JSON). Each phase therefore
 * also prints the server's own CPU time per request (process_cpu_seconds_total from its
 * /metrics, before and after): what a binding costs the registry. --grpc-channels n spreads the
 * gRPC calls over n HTTP/2 connections (default 1, what a gRPC client opens; fetch opens one
 * connection per concurrent request).
 *
 *   npx tsx bench/search-http.ts [--entries 10000] [--seconds 10] [--concurrency 16] [--rounds 1] [--grpc-channels 1]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/observability/logger.js';
import { startRegistry } from '../src/server.js';
import { generateQueries, streamEntries, subjectOfGenerated } from './lib/generate-entries.js';
import { spawnRegistry } from '../test/support/registry.js';
import { TaskState } from '@a2a-js/sdk';
import { grpcSender } from './lib/grpc-load.js';
import { jsonRpcSender, printLoad, runLoad, type LoadResult } from './lib/http-load.js';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '1' },
    'grpc-channels': { type: 'string', default: '1' },
  },
});
const entries = Number(values.entries);
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);
const rounds = Math.max(1, Number(values.rounds));
const grpcChannels = Math.max(1, Number(values['grpc-channels']));
const token = 'bench-admin-token-0123456789';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-search-'));
// Load the entries in-process (fast), then serve them from a separate process, as in
// production, so the load generator does not share the server's core.
const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: `admin:${token}`, LOG_LEVEL: 'warn' });
const loader = await startRegistry(config, createLogger('warn'));

const loadStarted = performance.now();
for (const entry of streamEntries(entries, 11)) await loader.service.register(subjectOfGenerated(entry), { principal: 'admin', isAdmin: true });
console.log(`loaded ${loader.service.indexSize} entries in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s (${loader.store.engine}); ${concurrency} concurrent clients; ${seconds} s per phase`);
await loader.close();
// Anonymous searches from one address would trip the per-address read limit: this measures throughput.
// Loading the index of a large registry takes a while on a busy machine: allow it.
const registry = await spawnRegistry({ REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: `admin:${token}`, REGISTRY_RATE_LIMITS: 'false', GRPC_PORT: '0' }, { startTimeoutMs: 180_000 });
const grpcUrl = String(registry.logs.find((line) => line.msg === 'registry listening')?.grpcUrl);

const queries = [...generateQueries(500, 3, false), ...generateQueries(500, 4, true)].map((q) => [
  { data: { search: { query: q.text, ...(q.filter ? { filter: q.filter } : {}), limit: 20 } }, mediaType: 'application/json' },
]);
const noop = jsonRpcSender(registry.url, undefined, 'TASK_STATE_REJECTED');
const search = jsonRpcSender(registry.url, undefined, 'TASK_STATE_COMPLETED');
const noopPart = [{ data: { noop: {} }, mediaType: 'application/json' }];

const grpcSearch = grpcSender(grpcUrl, undefined, TaskState.TASK_STATE_COMPLETED, grpcChannels);

/** The registry process's CPU time so far (user + system), from its own /metrics. */
async function serverCpuSeconds(): Promise<number> {
  const text = await (await fetch(`${registry.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('process_cpu_seconds_total '));
  if (!line) throw new Error('the registry\'s /metrics has no process_cpu_seconds_total');
  return Number(line.split(' ')[1]);
}

interface Phase extends LoadResult {
  /** The server's CPU seconds spent on the phase. */
  cpuSeconds: number;
}

/** One load phase, printed with the server's CPU time per request. */
async function phase(label: string, send: (i: number) => Promise<boolean>): Promise<Phase> {
  const before = await serverCpuSeconds();
  const result = await runLoad(label, { seconds, concurrency }, send);
  const cpuSeconds = (await serverCpuSeconds()) - before;
  printLoad(result);
  console.log(`${''.padEnd(28)} server CPU ${((cpuSeconds * 1000) / result.requests).toFixed(2)} ms/request`);
  return { ...result, cpuSeconds };
}

await runLoad('warm-up', { seconds: 1, concurrency }, (i) => (i % 3 === 0 ? noop(noopPart) : i % 3 === 1 ? search(queries[i % queries.length]!) : grpcSearch(queries[i % queries.length]!)));
const baseline = await phase('no-op round trip', () => noop(noopPart));
const overJsonRpc: Phase[] = [];
const overGrpc: Phase[] = [];
for (let round = 1; round <= rounds; round++) {
  const suffix = rounds > 1 ? ` #${round}` : '';
  overJsonRpc.push(await phase(`search over JSON-RPC${suffix}`, (i) => search(queries[i % queries.length]!)));
  overGrpc.push(await phase(`search over gRPC${suffix}`, (i) => grpcSearch(queries[i % queries.length]!)));
}
const requests = (results: Phase[]) => results.reduce((n, r) => n + r.requests, 0);
const perSecond = (results: Phase[]) => requests(results) / results.reduce((t, r) => t + r.seconds, 0);
const cpuPerRequest = (results: Phase[]) => results.reduce((t, r) => t + r.cpuSeconds, 0) / requests(results);
console.log(`ratio search / no-op: ${(perSecond(overJsonRpc) / baseline.perSecond).toFixed(2)} (target >= 0.80)`);
console.log(
  `search over gRPC (${grpcChannels} channel${grpcChannels > 1 ? 's' : ''}) / over JSON-RPC: ${(perSecond(overGrpc) / perSecond(overJsonRpc)).toFixed(2)} × the requests per second, ` +
    `${(cpuPerRequest(overGrpc) / cpuPerRequest(overJsonRpc)).toFixed(2)} × the server CPU per request ` +
    `(${(cpuPerRequest(overGrpc) * 1000).toFixed(2)} vs ${(cpuPerRequest(overJsonRpc) * 1000).toFixed(2)} ms)`,
);
grpcSearch.close();
await registry.stop();
fs.rmSync(dataDir, { recursive: true, force: true });
