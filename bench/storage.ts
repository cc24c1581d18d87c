/**
 * Write throughput of the SQLite store under concurrent "requests" (durable: every write is
 * awaited, i.e. committed with synchronous=FULL, before the next one starts).
 *
 *   phase "task save":          each request saves one realistic durable task (what an accepted write costs
 *                               besides its entry; reads and refusals keep their tasks in memory)
 *   phase "upsert + task save": each request registers an entry, then saves its task
 *
 * For each concurrency (1, 16, 64) it prints ops/s, p50/p99 latency of one request and the
 * worst event-loop stall seen meanwhile (a synchronous fsync blocks every other request).
 *
 *   npx tsx bench/storage.ts [--seconds 3] [--concurrency 1,16,64] [--rounds 1]
 *   npx tsx bench/storage.ts --store /path/to/other/src/storage/sqlite/index.ts   (compare a version)
 */
import { parseArgs } from 'node:util';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Task } from '@a2a-js/sdk';
import type { EntryWrite, RegistryStore } from '../src/storage/types.js';
import { toTaskRow } from '../src/tasks/task-rows.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '1,16,64' },
    rounds: { type: 'string', default: '1' },
    store: { type: 'string' },
  },
});
const seconds = Number(values.seconds);
const levels = values.concurrency.split(',').map(Number);
const rounds = Number(values.rounds);
const storeModule = values.store ? pathToFileURL(resolve(values.store)).href : '../src/storage/sqlite/index.js';
const { SqliteStore } = (await import(storeModule)) as {
  SqliteStore: new (options: { file: string }) => RegistryStore;
};

const scope = { tenant: '', owner: 'bench' };
let counter = 0;

/** A finished registration task as the executor leaves it: user message, status message, one artifact. */
function task(): Task {
  const id = randomUUID();
  const contextId = randomUUID();
  return Task.fromJSON({
    id,
    contextId,
    status: {
      state: 'TASK_STATE_COMPLETED',
      timestamp: new Date().toISOString(),
      message: { messageId: randomUUID(), role: 'ROLE_AGENT', taskId: id, contextId, parts: [{ text: 'Registered.' }] },
    },
    history: [
      {
        messageId: randomUUID(),
        role: 'ROLE_USER',
        taskId: id,
        contextId,
        parts: [{ data: { op: 'register', card: card(counter) }, mediaType: 'application/json' }],
      },
    ],
    artifacts: [
      {
        artifactId: randomUUID(),
        name: 'registration',
        parts: [{ data: { id: randomUUID(), revision: 1, status: 'created', kind: 'agent' }, mediaType: 'application/json' }],
      },
    ],
  });
}

function card(i: number) {
  return {
    name: `Bench Agent ${i}`,
    description: 'Translates invoices and checks VAT for small businesses.',
    version: '1.0.0',
    supportedInterfaces: [{ url: `https://bench-${i}.example.org/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    skills: [
      { id: 'translate', name: 'Translate invoice', description: 'Translates an invoice.', tags: ['finance', 'translation'] },
      { id: 'vat', name: 'Check VAT', description: 'Checks the VAT lines of an invoice.', tags: ['finance', 'tax'] },
    ],
  };
}

function entry(): EntryWrite {
  const i = counter++;
  const url = `https://bench-${i}.example.org/a2a`;
  const documentText = JSON.stringify(card(i));
  return {
    kind: 'agent',
    identityUrl: url,
    name: `Bench Agent ${i}`,
    description: 'Translates invoices and checks VAT for small businesses.',
    protocolVersion: '1.0',
    interfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    documentText,
    contentHash: createHash('sha256').update(documentText).digest('hex'),
    urls: [`http://bench-${i}.example.org/a2a`],
  };
}

const phases: { name: string; request: (store: RegistryStore) => Promise<unknown> }[] = [
  { name: 'task save', request: (store) => store.tasks.save(toTaskRow(scope, task())) },
  {
    name: 'upsert + task save',
    request: async (store) => {
      await store.upsert(entry(), { principal: 'bench', isAdmin: false });
      await store.tasks.save(toTaskRow(scope, task()));
    },
  },
];

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]! : NaN;
}

async function measure(store: RegistryStore, request: (s: RegistryStore) => Promise<unknown>, concurrency: number) {
  const latencies: number[] = [];
  const loop = monitorEventLoopDelay({ resolution: 1 });
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  loop.enable();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        // Each request arrives as I/O would, in a later turn of the event loop, and waits for
        // its turn (without this, a store that resolves synchronously never lets the loop turn).
        await new Promise(setImmediate);
        await request(store);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  loop.disable();
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    ops: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    stall: loop.max / 1e6,
  };
}

const dir = mkdtempSync(join(tmpdir(), 'a2a-bench-storage-'));
try {
  console.log(`store: ${values.store ?? 'src/storage/sqlite'}; ${seconds} s per run; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log('phase                 conc     ops/s    p50 ms    p99 ms  max loop stall ms');
  for (let round = 0; round < rounds; round++) {
    for (const phase of phases) {
      for (const concurrency of levels) {
        // A fresh database per run, so runs do not slow down as the file grows.
        const store = new SqliteStore({ file: join(dir, `r${round}-${phase.name.replace(/\W+/g, '-')}-${concurrency}.db`) });
        await store.open();
        await phase.request(store); // warm up: prepare statements, create the WAL
        const r = await measure(store, phase.request, concurrency);
        await store.close();
        console.log(
          `${phase.name.padEnd(20)} ${String(concurrency).padStart(5)} ${r.ops.toFixed(0).padStart(9)} ` +
            `${r.p50.toFixed(2).padStart(9)} ${r.p99.toFixed(2).padStart(9)} ${r.stall.toFixed(1).padStart(18)}`,
        );
      }
    }
  }
  console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
