/**
 * A consistent copy of the embedded database, taken while the registry runs (`a2a-registry
 * backup`). Copying registry.db with cp is not one: the committed writes may still be in
 * registry.db-wal, and a write during the copy tears it. `VACUUM INTO` reads the database in one
 * read transaction (in WAL mode, beside the running registry's writes, which it does not block)
 * and writes a compact, self-contained file: no -wal to go with it.
 *
 * The copy is written beside its destination under a temporary name, checked (`quick_check`,
 * and that it is a registry's database), synced, and only then given its name: a backup that
 * failed half way never sits where a restore would take it from. It holds what the database
 * holds, webhook tokens included, so it is created for its user alone (0600).
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export interface SqliteBackup {
  file: string;
  bytes: number;
  entries: number;
  revisions: number;
  /** The change-log position the copy holds (what a restored registry goes on from). */
  changeSeq: number;
  schemaVersion: number;
}

/** A backup that cannot be made, and why; `usage` when the fix is in the command line. */
export class BackupError extends Error {
  constructor(
    message: string,
    readonly usage = false,
  ) {
    super(message);
  }
}

/** The same file (through links), where both exist. */
function sameFile(a: string, b: string): boolean {
  try {
    const sa = fs.statSync(a);
    const sb = fs.statSync(b);
    return sa.dev === sb.dev && sa.ino === sb.ino;
  } catch {
    return false;
  }
}

function syncPath(file: string, flags: string): void {
  const fd = fs.openSync(file, flags);
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Facts about a registry database (the source, or the copy to check it). */
function describe(db: Database.Database, where: string): Omit<SqliteBackup, 'file' | 'bytes'> {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'registry_migrations'").get();
  if (!table) throw new BackupError(`${where} is an SQLite database but not a registry's (it has no registry_migrations table)`);
  const count = (sql: string): number => Number((db.prepare(sql).get() as { n: number | null }).n ?? 0);
  return {
    schemaVersion: count('SELECT max(version) AS n FROM registry_migrations'),
    entries: count('SELECT count(*) AS n FROM entries'),
    revisions: count('SELECT count(*) AS n FROM entry_revisions'),
    changeSeq: count(
      "SELECT max(coalesce((SELECT max(seq) FROM changes), 0), coalesce((SELECT value FROM registry_state WHERE key = 'changes_trimmed_through'), 0)) AS n",
    ),
  };
}

/** Copies the database at `source` to `destination`; never over an existing file unless `overwrite`. */
export function backupSqlite(source: string, destination: string, options: { overwrite: boolean }): SqliteBackup {
  if (!fs.existsSync(source)) {
    throw new BackupError(`there is no registry database at ${source}: point --data-dir (REGISTRY_DATA_DIR) at the registry's data directory`, true);
  }
  const dest = path.resolve(destination);
  if (sameFile(source, dest)) throw new BackupError(`${destination} is the database itself: give the backup another file`, true);
  if (fs.existsSync(dest) && !options.overwrite) {
    throw new BackupError(`${destination} already exists: choose another file, or pass --force to replace it`, true);
  }
  if (!fs.existsSync(path.dirname(dest))) throw new BackupError(`the folder ${path.dirname(dest)} does not exist: create it first`, true);

  const tmp = `${dest}.${process.pid}.tmp`;
  fs.rmSync(tmp, { force: true });
  try {
    let db: Database.Database;
    try {
      db = new Database(source, { readonly: true, fileMustExist: true });
    } catch (err) {
      throw new BackupError(`${source} cannot be opened: ${(err as Error).message}`);
    }
    try {
      // A running registry's checkpoint may hold the lock for a moment.
      db.pragma('busy_timeout = 10000');
      describe(db, source);
      // The copy holds webhook tokens: its user's alone from the moment it exists.
      const umask = process.umask(0o077);
      try {
        db.prepare('VACUUM INTO ?').run(tmp);
      } finally {
        process.umask(umask);
      }
    } catch (err) {
      if (err instanceof BackupError) throw err;
      throw new BackupError(`copying ${source} failed: ${(err as Error).message}`);
    } finally {
      db.close();
    }

    let facts: Omit<SqliteBackup, 'file' | 'bytes'>;
    const copy = new Database(tmp, { readonly: true, fileMustExist: true });
    try {
      const check = copy.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new BackupError(`the copy failed SQLite's integrity check (${String(check)}); nothing was written to ${destination}`);
      facts = describe(copy, 'the copy');
    } finally {
      copy.close();
    }
    syncPath(tmp, 'r');
    if (options.overwrite) fs.renameSync(tmp, dest);
    else {
      // link() fails on an existing name: a file made there since the check is never replaced.
      try {
        fs.linkSync(tmp, dest);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new BackupError(`${destination} already exists: choose another file, or pass --force to replace it`, true);
        throw err;
      }
      fs.rmSync(tmp, { force: true });
    }
    syncPath(path.dirname(dest), 'r');
    return { file: dest, bytes: fs.statSync(dest).size, ...facts };
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}
