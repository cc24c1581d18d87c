/**
 * Write latency at size (issue 22): updates (register of a changed document) and removals,
 * one at a time, straight on the SQLite store of a data directory holding `--size` generated
 * entries — with nothing else running, and beside a scan of every entry like the one the start-up
 * signature re-evaluation ran (CardTrust.reevaluateAll: a batch of entries read at a time, a turn
 * of the event loop after each), the old way (500 at a time, a turn every 512 entries) and the
 * newer (64). It now reads only the cards checked against other trust roots (bench/reevaluation.ts),
 * but a full scan beside writes is still what rebuilding the index without a snapshot does.
 *
 *   npx tsx bench/write-latency.ts --size 1000000 --data-dir /tmp/registry-1m [--samples 200]
 *
 * The data directory is filled the first time (bench/lib/fill-data-dir.ts, as bench/scale.ts):
 * the generated entries (bench/lib/generate-entries.ts, seed 7, as bench/import.ts) written as
 * JSON lines and imported with `a2a-registry import`'s code (owner "bench"); keep the directory
 * to measure again.
 * Timed: the store's `upsert`/`remove` as `register`/`unregister` call them (validation is not
 * timed), until their commit is durable.
 */
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { checkDocument, entryWriteOf } from '../src/registry/documents.js';
import { SqliteStore } from '../src/storage/sqlite/index.js';
import { createDocumentValidator } from '../src/validation/index.js';
import { subjectOfGenerated, type GeneratedEntry } from './lib/generate-entries.js';
import { describeFill, filledDataDir, sampledEntries } from './lib/fill-data-dir.js';

interface Args {
  size: number;
  dataDir: string;
  samples: number;
}

function readArgs(): Args {
  const { values } = parseArgs({
    options: {
      size: { type: 'string', default: '100000' },
      /** Required: filled on the first run, reused after. */
      'data-dir': { type: 'string', default: '' },
      /** Updates timed per line (and half as many removals). */
      samples: { type: 'string', default: '200' },
    },
  });
  if (!values['data-dir']) throw new Error('--data-dir <dir> is required (filled on the first run, reused after)');
  return { size: Number(values.size), dataDir: values['data-dir'], samples: Number(values.samples) };
}

const ADMIN = { principal: 'admin', isAdmin: true };
const percentile = (samples: number[], p: number): string => ([...samples].sort((a, b) => a - b)[Math.floor((samples.length * p) / 100)] ?? NaN).toFixed(2);

/** Updates then removals of `picks`, one at a time; beside a scan of `scanBatch` entries a read (0: none). */
async function measure(args: Args, picks: GeneratedEntry[], scanBatch: number, yieldEvery: number, round: number): Promise<void> {
  const store = new SqliteStore({ file: path.join(args.dataDir, 'registry.db') });
  await store.open();
  const validator = createDocumentValidator({ maxDocumentBytes: 1_000_000 });
  let scanning = scanBatch > 0;
  let scanned = 0;
  const scan = (async () => {
    if (!scanning) return;
    for await (const _ of store.scan({ batchSize: scanBatch })) {
      if (!scanning) break;
      if (++scanned % yieldEvery === 0) await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  try {
    const updates: number[] = [];
    const ids: string[] = [];
    for (const entry of picks) {
      const copy = structuredClone(entry);
      if (copy.kind === 'agent') copy.document.description = `${copy.document.description} (revised ${round})`;
      else copy.document.mcpServer.description = `${copy.document.mcpServer.description ?? ''} (revised ${round})`;
      const subject = subjectOfGenerated(copy);
      const { write } = entryWriteOf(subject, checkDocument(validator, subject));
      const t = performance.now();
      const outcome = await store.upsert(write, ADMIN);
      updates.push(performance.now() - t);
      if ('entry' in outcome) ids.push(outcome.entry.id);
    }
    const removals: number[] = [];
    // Half of them removed (the next round re-creates them: its "updates" then include creations).
    for (const id of ids.slice(0, Math.floor(ids.length / 2))) {
      const t = performance.now();
      await store.remove(id, ADMIN);
      removals.push(performance.now() - t);
    }
    const beside = scanBatch > 0 ? `beside a scan (${scanBatch} a read, a turn every ${yieldEvery}; ${scanned} entries scanned meanwhile)` : 'nothing else running';
    console.log(
      `${beside.padEnd(72)} update p50 ${percentile(updates, 50)} / p99 ${percentile(updates, 99)} ms; removal p50 ${percentile(removals, 50)} / p99 ${percentile(removals, 99)} ms; load ${os.loadavg()[0]!.toFixed(1)}`,
    );
  } finally {
    scanning = false;
    await scan;
    await store.close();
  }
}

const args = readArgs();
console.log(describeFill(args.dataDir, args.size, await filledDataDir(args.dataDir, args.size)));
const picks = sampledEntries(args.size, args.samples);
console.log(`${args.size.toLocaleString('en-US')} entries, ${picks.length} updates and ${Math.floor(picks.length / 2)} removals per line, Node ${process.version}`);
const round = Date.now();
await measure(args, picks, 0, 1, round);
await measure(args, picks, 500, 512, round + 1);
await measure(args, picks, 64, 64, round + 2);
