/**
 * `a2a-registry import` of a newer release into a SQLite database an older release's registry is
 * serving: opening the store brings the schema up to date, under the running registry, which
 * then refused to start again on the file ("written by a newer release"), the operator left to
 * restore a backup or upgrade the registry at once. The import does not write then: it says
 * which release to import with, or to stop the registry first. A stopped registry's database is
 * upgraded, as a start of this release would upgrade it (the operator chose this release).
 */
import Database from 'better-sqlite3';
import { SQLITE_SCHEMA_VERSION, schemaVersionOf } from '../storage/sqlite/migrations.js';
import { processLockFile } from '../storage/sqlite/lock-file.js';
import { registryHoldsLock } from '../storage/sqlite/process-lock.js';
import { tidyAfterReading } from '../storage/sqlite/reading-leftovers.js';

/** Throws, naming the file, both versions and what to do, when importing would upgrade the schema of `databaseFile` under a running registry. */
export function refuseUpgradeUnderRegistry(databaseFile: string): void {
  let found: number;
  // The -wal and -shm a read-only connection makes are removed after it (run as root, they were
  // root's, and the store gives only the files it creates to the registry's user).
  const tidy = tidyAfterReading(databaseFile);
  try {
    const db = new Database(databaseFile, { readonly: true, fileMustExist: true });
    try {
      found = schemaVersionOf(db, databaseFile);
    } finally {
      db.close();
    }
  } catch {
    // A newer release's (SchemaTooNewError), no file, one that cannot be read: opening the store says what is wrong.
    return;
  } finally {
    tidy();
  }
  // 0: a new database (no registry has served it), nothing to upgrade under anyone.
  if (found === 0 || found >= SQLITE_SCHEMA_VERSION) return;
  if (!registryHoldsLock(databaseFile)) return;
  throw new Error(
    `the registry database at ${databaseFile} has schema version ${found}, older than this release's ${SQLITE_SCHEMA_VERSION}, and a registry is running on it ` +
      `(it holds ${processLockFile(databaseFile)}): importing would upgrade the schema under that registry, of an older release, which would then not start on the database again. ` +
      'Nothing was written into it. Import with the running registry\'s release, or stop the registry, import, and start this release on the database',
  );
}
