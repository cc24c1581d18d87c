/**
 * A read-only connection to a WAL-mode database creates the database's -wal and -shm when they
 * are not there, as any connection does, and never removes them: only the last read-write
 * connection to close does, under an exclusive lock on the file that no other connection may
 * hold. Run beside no registry, `a2a-registry backup`, `import`'s check and `check` each left an
 * empty registry.db-wal and a 32 KiB registry.db-shm in the data directory.
 *
 * So a reader notes which of the two are missing before it opens, and once it has closed, if it
 * created any, opens and closes a read-write connection that reads the schema's version and
 * nothing else: SQLite then removes them itself, and only if no other connection has the
 * database open (a registry or an import that started meanwhile keeps them, and uses them on).
 * That close checkpoints nothing into the file: the log the reader created is empty (one that
 * has frames, written by a process that started meanwhile, is left as it is), and a file the
 * registry recorded damaged is not opened so at all.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { damageRecordFile } from './damage-record.js';

const READ_COMPANIONS = ['-wal', '-shm'] as const;

/** Call before opening `file` read-only; call what it returns once that connection is closed. */
export function tidyAfterReading(file: string): () => void {
  const missing = READ_COMPANIONS.filter((suffix) => !fs.existsSync(`${file}${suffix}`));
  return () => {
    if (!missing.some((suffix) => fs.existsSync(`${file}${suffix}`))) return;
    if (fs.existsSync(damageRecordFile(file))) return;
    if ((fs.statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0) > 0) return;
    try {
      const db = new Database(file, { fileMustExist: true, timeout: 0 });
      try {
        db.pragma('schema_version');
      } finally {
        db.close();
      }
    } catch {
      // An empty log and its index left beside the file harm nothing: the next connection uses them.
    }
  };
}
