/**
 * What reads and refusals cost the database: the registry (its own process, as `npm start` runs
 * it, SQLite) answers N searches and M refused registrations (half anonymous, half with a token
 * but an invalid card), and the database file (with its WAL) is measured before and after, with
 * the server's RSS. Reads and refusals keep their tasks in bounded memory, so the file must stay
 * the same size within 1 MB.
 *
 *   npx tsx bench/task-growth.ts [--searches 100000] [--refused 10000] [--connections 20]
 *   npx tsx bench/task-growth.ts --repo /path/to/another/checkout     (the same run against another version)
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { REPO_ROOT } from '../test/support/built.js';
import { benchCard } from './lib/bench-card.js';

const { values } = parseArgs({
  options: {
    searches: { type: 'string', default: '100000' },
    refused: { type: 'string', default: '10000' },
    connections: { type: 'string', default: '20' },
    repo: { type: 'string', default: REPO_ROOT },
  },
});
const searches = Number(values.searches);
const refused = Number(values.refused);
const connections = Number(values.connections);
const TOKEN = 'bench-writer-token-0123456789';
const MIB = 1024 * 1024;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-growth-'));
const child = spawn(process.execPath, ['--import', 'tsx', path.join(values.repo, 'src/main.ts')], {
  cwd: values.repo,
  env: { ...process.env, PORT: '0', HOST: '127.0.0.1', REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: `bench:${TOKEN}`, REGISTRY_RATE_LIMITS: 'false', LOG_LEVEL: 'info' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise<string>((resolve, reject) => {
  const lines = readline.createInterface({ input: child.stdout! });
  lines.on('line', (line) => {
    if (!line.includes('registry listening')) return;
    lines.close();
    child.stdout!.resume();
    resolve((JSON.parse(line) as { url: string }).url);
  });
  child.once('exit', (code) => reject(new Error(`the registry exited (${code}) before listening`)));
});

/** The database file and its WAL (and shared memory), in bytes. */
function databaseBytes(): { file: number; wal: number } {
  const size = (name: string) => fs.statSync(path.join(dataDir, name), { throwIfNoEntry: false })?.size ?? 0;
  return { file: size('registry.db'), wal: size('registry.db-wal') };
}
const rss = () => Number(/^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

let n = 0;
const rpc = (parts: unknown[]) => JSON.stringify({ jsonrpc: '2.0', id: ++n, method: 'SendMessage', params: { message: { messageId: `m-${n}`, role: 'ROLE_USER', parts } } });
const QUERIES = ['translate invoices', 'weather forecast', 'files', 'finance tax', 'calendar', 'search documents', 'pdf', 'summarize'];

/** Sends `amount` requests; counts the answers that ended in `expect`. */
async function send(label: string, amount: number, body: (i: number) => { body: string; token?: string }, expect: string) {
  let ok = 0;
  let other = '';
  const started = performance.now();
  const result = await autocannon({
    url,
    // autocannon spreads `amount` over the connections: never more connections than requests.
    connections: Math.min(connections, amount),
    amount,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: '/a2a/jsonrpc',
        setupRequest: (request) => {
          const next = body(n);
          return { ...request, body: next.body, headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...(next.token ? { authorization: `Bearer ${next.token}` } : {}) } };
        },
        onResponse: (_status, text) => {
          if (text.includes(`"state":"${expect}"`)) ok++;
          else other ||= text.slice(0, 200);
        },
      },
    ],
  });
  const seconds = (performance.now() - started) / 1000;
  console.log(`${label.padEnd(26)} ${result.requests.total} sent in ${seconds.toFixed(1)} s (${(result.requests.total / seconds).toFixed(0)} req/s), ${ok} ${expect}${other ? `; other answers, e.g. ${other}` : ''}`);
}

// One registration first, so the file holds an entry (and the write path has been used).
await send('one registration', 1, () => ({ body: rpc([{ data: { register: { agentCard: benchCard('Growth Agent', 'https://growth.example.org/a2a') } }, mediaType: 'application/json' }]), token: TOKEN }), 'TASK_STATE_COMPLETED');
const before = databaseBytes();
const rssBefore = rss();
console.log(`${values.repo === REPO_ROOT ? 'this checkout' : values.repo}; database before: file ${(before.file / MIB).toFixed(2)} MiB + WAL ${(before.wal / MIB).toFixed(2)} MiB; server RSS ${rssBefore.toFixed(0)} MiB`);

await send('searches', searches, (i) => ({ body: rpc([{ data: { search: { query: QUERIES[i % QUERIES.length], limit: 10 } }, mediaType: 'application/json' }]) }), 'TASK_STATE_COMPLETED');
await send('refused registrations', refused, (i) =>
  i % 2
    ? { body: rpc([{ data: { register: { agentCard: benchCard(`Anonymous ${i}`, `https://anon-${i}.example.org/a2a`) } }, mediaType: 'application/json' }]) } // no token: UNAUTHENTICATED
    : { body: rpc([{ data: { register: { agentCard: { name: `Invalid ${i}` } } }, mediaType: 'application/json' }]), token: TOKEN }, // VALIDATION_FAILED
  'TASK_STATE_REJECTED',
);

const after = databaseBytes();
const grew = after.file + after.wal - (before.file + before.wal);
console.log(`database after:  file ${(after.file / MIB).toFixed(2)} MiB + WAL ${(after.wal / MIB).toFixed(2)} MiB; server RSS ${rss().toFixed(0)} MiB`);
console.log(`growth: ${(grew / MIB).toFixed(2)} MiB (target: within 1 MiB) -> ${Math.abs(grew) <= MIB ? 'OK' : 'TOO MUCH'}`);
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
fs.rmSync(dataDir, { recursive: true, force: true });
