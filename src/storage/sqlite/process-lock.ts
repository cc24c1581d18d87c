/**
 * One registry process per SQLite database. SQLite lets any number of processes open the file,
 * but each registry keeps its search index, watches and snapshot position from its own writes
 * (there is no change-log follower on SQLite): a second registry started on the same data
 * directory (a second container on one volume, a service started twice) served, each of the two
 * searching only what it had written itself while `get` and `list` showed everything.
 *
 * The lock is a small SQLite file beside the database (`registry.db.lock`), written once in
 * EXCLUSIVE locking mode: SQLite then holds its file lock until the connection closes, and the
 * operating system drops it when the process dies, so a crash leaves no stale lock. `a2a-registry
 * import` does not take it: it may write beside a running registry (which replays its changes
 * at the next start).
 *
 * An import (any store opened without `singleProcess`) holds a shared lock on a second file,
 * `registry.db.import-lock`, while it has the database open, and `restore` takes that one
 * exclusively: a restore is refused while an import writes, and an import while a restore runs.
 * `restore --force` beside an import moved the database aside under it, and the documents the
 * import went on storing went with the moved file. Shared: imports may run side by side. The
 * same kind of lock as above (an SQLite file's own locks, dropped with the process): a read
 * transaction kept open holds SHARED, an EXCLUSIVE one keeps every reader out.
 */
import Database from 'better-sqlite3';
import { makeLockFile, processLockFile } from './lock-file.js';

const BUSY = /^SQLITE_(BUSY|LOCKED)/;

/** Another process (a running registry) holds the database's lock. */
export class DatabaseInUseError extends Error {}

/** The file whose lock keeps a restore and imports apart (see above). */
export const importLockFile = (file: string): string => `${file}.import-lock`;

/**
 * Opens `lockFile`, a lock beside the database `file`, created if missing (makeLockFile).
 * No busy timeout: a lock held by a running registry or import is not going to be released soon.
 */
function openLockFile(file: string, lockFile: string): Database.Database {
  makeLockFile(file, lockFile);
  return new Database(lockFile, { timeout: 0 });
}

/** Opens the import lock of `file` (the database). */
const openImportLock = (file: string): Database.Database => openLockFile(file, importLockFile(file));

const busy = (error: unknown): boolean => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && BUSY.test(code);
};

/**
 * An import's share of the import lock of `file` (the database), held until the handle is closed;
 * refused (DatabaseInUseError) while a restore holds the lock.
 */
export function shareWithImports(file: string): Database.Database {
  const db = openImportLock(file);
  try {
    db.exec('BEGIN');
    db.prepare('SELECT count(*) FROM sqlite_master').get();
  } catch (error) {
    db.close();
    if (busy(error)) {
      throw new DatabaseInUseError(
        `a2a-registry restore is replacing the SQLite database ${file} (it holds ${importLockFile(file)}): run the import once the restore is done, against the restored database`,
      );
    }
    throw error;
  }
  return db;
}

/**
 * The import lock of `file` (the database) for this process alone, held until the handle is
 * closed; refused (DatabaseInUseError) while an import holds its share.
 */
export function lockOutImports(file: string): Database.Database {
  const db = openImportLock(file);
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    db.close();
    if (busy(error)) throw new DatabaseInUseError(`an a2a-registry import is writing to the SQLite database ${file} (it holds ${importLockFile(file)})`);
    throw error;
  }
  return db;
}

/** Takes the lock of `file` (the database) for this process; close the handle to release it. */
export function lockForThisProcess(file: string): Database.Database {
  const lockFile = processLockFile(file);
  const db = openLockFile(file, lockFile);
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = MEMORY');
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL, since TEXT NOT NULL)');
    // A write takes the EXCLUSIVE lock, which this locking mode keeps until the handle closes.
    db.transaction(() => {
      db.prepare('DELETE FROM holder').run();
      db.prepare('INSERT INTO holder (pid, since) VALUES (?, ?)').run(process.pid, new Date().toISOString());
    })();
  } catch (error) {
    db.close();
    if (busy(error)) {
      throw new DatabaseInUseError(
        `another registry process is already serving the SQLite database ${file} (it holds ${lockFile}). ` +
          'A SQLite registry is one process: a second one would search only the entries it registered itself. ' +
          'Stop the other one, give this one another REGISTRY_DATA_DIR, or run several replicas on PostgreSQL (DATABASE_URL).',
      );
    }
    throw error;
  }
  return db;
}

/**
 * Whether a registry process holds the lock of `file` (the database) now, told without taking
 * it or creating anything: a read of the lock file, which a registry's EXCLUSIVE lock refuses.
 * (The read holds a shared lock for a moment: a registry starting in that moment is refused as
 * if another one served the file.) No lock file, or one that cannot be read: no.
 */
export function registryHoldsLock(file: string): boolean {
  let db: Database.Database;
  try {
    db = new Database(processLockFile(file), { readonly: true, fileMustExist: true, timeout: 0 });
  } catch {
    return false;
  }
  try {
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return false;
  } catch (error) {
    return busy(error);
  } finally {
    db.close();
  }
}
