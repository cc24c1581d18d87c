/**
 * Data directories filled with generated entries the way a user would fill one: the documents of
 * ./generate-entries.ts written as JSON lines and loaded with `a2a-registry import`'s code
 * (runImport: the checks of a registration, batches of one transaction; about ten times the rate
 * of validating and writing one document at a time). Benchmarks that need a big registry keep the
 * directory and reuse it (`--data-dir`): a 1M fill is minutes, not something to repeat per run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config.js';
import { runImport, type ImportSummary } from '../../src/cli/commands/import.js';
import type { Refusal } from '../../src/cli/import-preparation.js';
import { createStore } from '../../src/storage/create-store.js';
import { streamEntries, type GeneratedEntry } from './generate-entries.js';

/** The seed of the generated entries every filled directory holds (bench/import.ts writes the same). */
export const FILL_SEED = 7;
/** The principal the imported entries belong to. */
export const FILL_OWNER = 'bench';
/** Written once a fill completed: what the directory holds, checked before it is reused. */
const MARKER = 'bench-fill.json';

/** What a fill did: the import's summary, and the time to write its input. */
export type Fill = ImportSummary & { writeSeconds: number };

interface FillMarker {
  size: number;
  seed: number;
  owner: string;
}

/** The first `size` generated documents as a JSON-lines file, written in chunks (bounded memory); its bytes. */
export function writeJsonLines(file: string, size: number): number {
  const fd = fs.openSync(file, 'w');
  let bytes = 0;
  try {
    let chunk = '';
    for (const entry of streamEntries(size, FILL_SEED)) {
      chunk += `${JSON.stringify(entry.document)}\n`;
      if (chunk.length > 1 << 20) {
        bytes += fs.writeSync(fd, chunk);
        chunk = '';
      }
    }
    bytes += fs.writeSync(fd, chunk);
  } finally {
    fs.closeSync(fd);
  }
  return bytes;
}

/** Imports the first `size` generated documents into `dataDir`'s SQLite database (created if need be). */
export async function fillDataDir(dataDir: string, size: number): Promise<Fill> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-fill-'));
  try {
    const file = path.join(work, 'entries.jsonl');
    const writing = performance.now();
    writeJsonLines(file, size);
    const writeSeconds = (performance.now() - writing) / 1000;
    fs.mkdirSync(dataDir, { recursive: true });
    let firstRefusal: Refusal | undefined;
    const summary = await runImport(loadConfig({ REGISTRY_DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' }), [file], { owner: FILL_OWNER, batchSize: 500 }, (r) => {
      firstRefusal ??= r;
    });
    if (summary.refused > 0) throw new Error(`the fill of ${dataDir} refused ${summary.refused} generated documents; the first: ${JSON.stringify(firstRefusal)}`);
    return { ...summary, writeSeconds };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * `dataDir` holding the first `size` generated entries: filled (and marked) unless a completed
 * fill of the same size is there. An interrupted fill is completed (the import is idempotent); a
 * directory filled at another size is refused rather than measured as if it were this one.
 * Returns the fill's summary, or undefined when the directory was reused.
 */
export async function filledDataDir(dataDir: string, size: number): Promise<Fill | undefined> {
  const markerFile = path.join(dataDir, MARKER);
  if (fs.existsSync(markerFile)) {
    const marker = JSON.parse(fs.readFileSync(markerFile, 'utf8')) as FillMarker;
    if (marker.size === size && marker.seed === FILL_SEED && marker.owner === FILL_OWNER) return undefined;
    throw new Error(`${dataDir} holds ${marker.size} generated entries (seed ${marker.seed}, owner ${marker.owner}), not ${size}: give another --data-dir, or remove it to fill it again`);
  }
  const summary = await fillDataDir(dataDir, size);
  const store = createStore({ dataDir });
  await store.open();
  const counts = await store.count().finally(() => store.close());
  const held = Object.values(counts).reduce((a, b) => a + b, 0);
  if (held !== size) throw new Error(`${dataDir} holds ${held} entries after importing ${size} generated ones: it held others before; give an empty --data-dir`);
  const marker: FillMarker = { size, seed: FILL_SEED, owner: FILL_OWNER };
  fs.writeFileSync(markerFile, `${JSON.stringify(marker)}\n`);
  return summary;
}

/** One line for the log: what the fill did, or that the directory was reused. */
export function describeFill(dataDir: string, size: number, fill: Fill | undefined): string {
  return fill
    ? `filled ${dataDir}: generated documents written as JSON lines in ${fill.writeSeconds.toFixed(1)} s, then a2a-registry import (full validation, batches of 500): ` +
        `${fill.created} created, ${fill.unchanged} already there, in ${fill.seconds.toFixed(1)} s (${fill.perSecond}/s)`
    : `reused ${dataDir} (${size} entries imported by an earlier run)`;
}

/** `count` of the entries a filled directory holds, spread over it (every size/count-th): the ones a bench updates and removes. */
export function sampledEntries(size: number, count: number): GeneratedEntry[] {
  const every = Math.max(1, Math.floor(size / count));
  const picks: GeneratedEntry[] = [];
  let n = 0;
  for (const entry of streamEntries(size, FILL_SEED)) if (n++ % every === 0 && picks.length < count) picks.push(entry);
  return picks;
}
