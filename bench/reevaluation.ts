/**
 * The start-up re-evaluation of stored signatures at size (issue 22): every start, once the index
 * has loaded, a registry checks again the signed cards whose signatures were checked against
 * other trust roots than those in force (CardTrust.reevaluateAll). It used to find them by
 * reading every stored entry (48-54 s at 1,000,000, every write beside it slowed); the store now
 * keeps an index of them (the entries' `trust_keyset`), so a start whose trust roots have not
 * changed reads nothing. Over a data directory of `--size` generated entries, this prints:
 *
 * - the read of every entry the old way took (64 a read, a turn of the event loop after each);
 * - the re-evaluation as a start runs it: nothing stale;
 * - the same once `--stale` entries carry a verification against other roots: just those read;
 * - the migration that fills the column (what the first start of this version does to an older
 *   database), measured by taking the column away again and re-opening.
 *
 *   npx tsx bench/reevaluation.ts --size 1000000 --data-dir /tmp/registry-1m [--stale 1000]
 *
 * The data directory is filled the first time (bench/lib/fill-data-dir.ts, as bench/scale.ts and
 * bench/write-latency.ts do) and changed in place: keep it for other runs.
 */
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import type { CardVerification } from '../src/contract/verification.js';
import { CardTrust } from '../src/registry/card-trust.js';
import { ChangeFeed } from '../src/registry/change-feed.js';
import { SqliteStore } from '../src/storage/sqlite/index.js';
import { createSignatureVerifier, NO_TRUSTED_KEYS } from '../src/validation/signature.js';
import { describeFill, filledDataDir } from './lib/fill-data-dir.js';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '100000' },
    /** Required: filled on the first run, reused after. */
    'data-dir': { type: 'string', default: '' },
    /** Entries given a verification against other trust roots before the second re-evaluation. */
    stale: { type: 'string', default: '1000' },
  },
});
if (!values['data-dir']) throw new Error('--data-dir <dir> is required (filled on the first run, reused after)');
const size = Number(values.size);
const dataDir = values['data-dir'];
const staleCount = Number(values.stale);
const file = path.join(dataDir, 'registry.db');

console.log(describeFill(dataDir, size, await filledDataDir(dataDir, size)));
console.log(`${size.toLocaleString('en-US')} entries, Node ${process.version}, load ${os.loadavg()[0]!.toFixed(1)}`);

const seconds = (since: number): string => `${((performance.now() - since) / 1000).toFixed(3)} s`;
const verifier = createSignatureVerifier(NO_TRUSTED_KEYS);

/** Opens the store (timed: migrations included), runs `body`, closes it. */
async function withStore(label: string, body: (store: SqliteStore) => Promise<void>): Promise<void> {
  const store = new SqliteStore({ file });
  const opening = performance.now();
  await store.open();
  console.log(`${label}: open ${seconds(opening)}`);
  try {
    await body(store);
  } finally {
    await store.close();
  }
}

async function reevaluate(store: SqliteStore, label: string): Promise<void> {
  const trust = new CardTrust({ store, feed: new ChangeFeed(), verifier, requireVerified: false });
  const t = performance.now();
  const { checked, changed } = await trust.reevaluateAll();
  console.log(`  ${label.padEnd(62)} ${seconds(t)} (${checked} checked, ${changed} changed)`);
}

await withStore('the data directory', async (store) => {
  let read = 0;
  const t = performance.now();
  for await (const _ of store.scan({ batchSize: 64 })) if (++read % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
  console.log(`  ${'every entry read, as the re-evaluation found its cards before'.padEnd(62)} ${seconds(t)} (${read} entries)`);
  await reevaluate(store, 're-evaluation at a start, nothing stale');

  // Cards checked against roots no longer in force: a signature the re-evaluation finds gone.
  const db = new Database(file, { readonly: true });
  const picked = db.prepare(`SELECT id, current_revision AS revision FROM entries WHERE kind = 'agent' ORDER BY id LIMIT ?`).all(staleCount) as { id: string; revision: number }[];
  db.close();
  const old: CardVerification = { verified: false, signatures: [{ status: 'unknown-key', kid: 'k', alg: 'ES256', reason: 'bench' }], keyset: 'older roots' };
  await Promise.all(picked.map((p) => store.updateVerification(p.id, p.revision, old, false)));
  await reevaluate(store, `re-evaluation with ${picked.length} cards checked against other roots`);
});

// The first start of this version over an older database: the migration fills the column.
{
  const db = new Database(file);
  db.exec(`DROP INDEX entries_trust_idx; ALTER TABLE entries DROP COLUMN trust_keyset; DELETE FROM registry_migrations WHERE version = 7`);
  db.close();
}
await withStore('the same directory as an older release left it (the migration fills the column)', async (store) => {
  await reevaluate(store, 're-evaluation after the migration');
});
