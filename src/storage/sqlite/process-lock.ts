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
 */
import { closeSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { makeDirectories } from '../../lib/make-directories.js';

const BUSY = /^SQLITE_(BUSY|LOCKED)/;

/** Another process (a running registry) holds the database's lock. */
export class DatabaseInUseError extends Error {}

/** Takes the lock of `file` (the database) for this process; close the handle to release it. */
export function lockForThisProcess(file: string): Database.Database {
  const lockFile = `${file}.lock`;
  makeDirectories(dirname(file), 0o700);
  closeSync(openSync(lockFile, 'a', 0o600));
  // No busy timeout: a lock held by a running registry is not going to be released.
  const db = new Database(lockFile, { timeout: 0 });
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
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && BUSY.test(code)) {
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
