/**
 * An empty (0-byte) SQLite database file where a registry's data was: a failed copy, a full disk
 * or a truncation leaves one. SQLite opens it as a new, empty database (and deletes a write-ahead
 * log beside it), so the registry started empty without a word, then saved its empty search
 * index over the one that was left, the last trace of the data. A corrupt file is refused
 * (sqlite/store.ts); an empty one is refused too, but only where the data directory shows that a
 * registry had data here: a new data directory may hold an empty file (created, never written),
 * and starts. `a2a-registry import` is refused alike: it opened the empty file as a new database
 * and stored its documents there, the start after it then finding a database with something in it.
 *
 * The evidence, read without changing anything:
 * - the saved search index (../registry/index-snapshots.ts) at a position past 0: only a change
 *   log that held changes gives one (an index that never held an entry is not saved);
 * - a write-ahead log with something in it: SQLite writes the file's header before it makes one.
 */
import fs from 'node:fs';
import { readSnapshotMeta } from '../search/snapshot-file.js';

/** What would begin an empty registry: the registry's start, or an import. */
export type EmptiedDatabaseUse = 'start' | 'import';

const WORDS: Record<EmptiedDatabaseUse, { would: string; onPurpose: string }> = {
  start: { would: 'starting would begin an empty registry', onPurpose: 'to start with an empty registry on purpose' },
  import: { would: 'importing would begin an empty registry holding the imported documents alone', onPurpose: 'to import into an empty registry on purpose' },
};

/** Throws, naming the files and what to do, when `databaseFile` is empty and the data shows it was not. */
export async function refuseEmptiedDatabase(databaseFile: string, snapshotFile: string, use: EmptiedDatabaseUse = 'start'): Promise<void> {
  if (sizeOf(databaseFile) !== 0) return;
  const evidence: string[] = [];
  const toRemove: string[] = [];
  const meta = await readSnapshotMeta(snapshotFile);
  if (meta && meta.seq > 0) {
    evidence.push(
      `the saved search index ${snapshotFile} is of a database whose change log had reached position ${meta.seq} ` +
        `(${meta.entries} ${meta.entries === 1 ? 'entry' : 'entries'}, saved ${meta.savedAt})`,
    );
    toRemove.push(snapshotFile);
  }
  const wal = `${databaseFile}-wal`;
  const walBytes = sizeOf(wal);
  if (walBytes !== undefined && walBytes > 0) {
    evidence.push(`its write-ahead log ${wal} holds ${walBytes} bytes (SQLite deletes it when it opens an empty file)`);
    toRemove.push(wal);
  }
  if (evidence.length === 0) return;
  const words = WORDS[use];
  throw new Error(
    `the database file ${databaseFile} is empty (0 bytes), but ${evidence.join(', and ')}: the database was lost ` +
      `(a failed copy, a full disk or a truncation leaves an empty file), and ${words.would}. ` +
      'Nothing was changed. Restore the database from a backup (a2a-registry restore --force <backup>), or, ' +
      `${words.onPurpose}, remove ${[databaseFile, ...toRemove].join(' and ')}.`,
  );
}

/** The file's size, or undefined when there is none (or it cannot be looked at: opening will say why). */
function sizeOf(file: string): number | undefined {
  try {
    const stat = fs.statSync(file);
    return stat.isFile() ? stat.size : undefined;
  } catch {
    return undefined;
  }
}
