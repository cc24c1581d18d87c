/**
 * Registration throughput over HTTP (JSON-RPC SendMessage, durable: each acknowledged
 * registration is committed) against the same server answering a no-op message (a request the
 * executor declines at once: the full A2A round trip and its task write, no registry work),
 * measured in one run and printed as a ratio.
 *
 *   npx tsx bench/register.ts [--seconds 10] [--concurrency 16]        (SQLite, in a temp dir)
 *   DATABASE_URL=postgres://... npx tsx bench/register.ts              (PostgreSQL)
 */
import { parseArgs } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnRegistry } from '../test/support/registry.js';
import { benchCard } from './lib/bench-card.js';
import { jsonRpcSender, printLoad, runLoad } from './lib/http-load.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, concurrency: { type: 'string', default: '16' } } });
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);
const token = 'bench-admin-token-0123456789';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-register-'));
// The server runs in its own process, as in production, so the load generator does not share its core.
const registry = await spawnRegistry({ REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: `admin:${token}` });
console.log(`storage: ${process.env.DATABASE_URL ? 'postgres' : 'sqlite'}; ${concurrency} concurrent clients; ${seconds} s per phase`);

const card = (i: number) => benchCard(`Bench Agent ${i}`, `https://bench-${process.pid}-${i}.example.org/a2a`);

const noop = jsonRpcSender(registry.url, token, 'TASK_STATE_REJECTED');
const register = jsonRpcSender(registry.url, token, 'TASK_STATE_COMPLETED');
const noopPart = [{ data: { noop: {} }, mediaType: 'application/json' }];

// Warm up both paths (JIT, connection pool, prepared statements).
await runLoad('warm-up', { seconds: 1, concurrency }, (i) => (i % 2 ? noop(noopPart) : register([{ data: { register: { agentCard: card(1e9 + i) } }, mediaType: 'application/json' }])));

const baseline = await runLoad('no-op round trip', { seconds, concurrency }, () => noop(noopPart));
const registrations = await runLoad('registration (durable)', { seconds, concurrency }, (i) =>
  register([{ data: { register: { agentCard: card(i) } }, mediaType: 'application/json' }]),
);
printLoad(baseline);
printLoad(registrations);
console.log(`ratio registration / no-op: ${(registrations.perSecond / baseline.perSecond).toFixed(2)} (target >= 0.50)`);
await registry.stop();
fs.rmSync(dataDir, { recursive: true, force: true });
