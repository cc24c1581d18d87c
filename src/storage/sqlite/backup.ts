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
 *
 * A restore (`a2a-registry restore`) puts a checked copy in the database's place, with the
 * registry stopped (it takes the registry's own lock, so a running one refuses it); the database
 * it replaces is kept beside it with its -wal and -shm, moved together: a -wal left beside
 * another database would be replayed into it.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SQLITE_SCHEMA_VERSION } from './migrations.js';
import { removeStaleBackupCopies, removeStaleTemporaries } from './leftovers.js';
import { DatabaseInUseError, lockForThisProcess } from './process-lock.js';
import { whyCannotRead, whyCannotWrite } from '../../lib/write-access.js';
import { readLastChangeSeq } from './store.js';
import { whyNotAnSqliteDatabase } from './database-file.js';

export interface SqliteBackup {
  file: string;
  bytes: number;
  entries: number;
  revisions: number;
  /** The change-log position the copy holds (what a restored registry goes on from). */
  changeSeq: number;
  schemaVersion: number;
  /** Copies earlier backups to the same file left when killed half way, removed. */
  removedLeftovers?: string[];
}

/**
 * A backup that cannot be made, and why; `usage` when the fix is in the command line (a file
 * that is not there or may not be read, a folder named as a file, a file in the way without
 * --force), not when a file that was read is the wrong one (not a registry's database, damaged,
 * another release's): that is the command failing on it, as `validate` fails on a card that is
 * not JSON (README's exit status table).
 */
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
    changeSeq: readLastChangeSeq(db),
  };
}

/** Copies the database at `source` to `destination`; never over an existing file unless `overwrite`. */
export function backupSqlite(source: string, destination: string, options: { overwrite: boolean }): SqliteBackup {
  // Run as another user than the registry's (its data directory is 0700), the database was
  // said not to exist: "point --data-dir at the registry's data directory", which it was.
  const unreadable = whyCannotRead(source);
  if (unreadable) {
    throw new BackupError(`cannot read the registry database ${source}: ${unreadable}; run the backup as the registry's user, or as one who may read its data directory`, true);
  }
  if (!fs.existsSync(source)) {
    throw new BackupError(`there is no registry database at ${source}: point --data-dir (REGISTRY_DATA_DIR) at the registry's data directory`, true);
  }
  // An empty registry.db or a device there was "an SQLite database but not a registry's".
  const notADatabase = whyNotAnSqliteDatabase(source, 'a registry database', "point --data-dir (REGISTRY_DATA_DIR) at the registry's data directory");
  if (notADatabase) throw new BackupError(notADatabase.message, notADatabase.folder);
  const dest = path.resolve(destination);
  if (sameFile(source, dest)) throw new BackupError(`${destination} is the database itself: give the backup another file`, true);
  if (fs.statSync(dest, { throwIfNoEntry: false })?.isDirectory()) {
    // --force replaces a file, never a folder: it failed with a raw EISDIR after the whole copy.
    throw new BackupError(`${destination} is a folder: name the backup file, e.g. ${path.join(destination, 'registry-backup.db')}`, true);
  }
  if (fs.existsSync(dest) && !options.overwrite) {
    throw new BackupError(`${destination} already exists: choose another file, or pass --force to replace it`, true);
  }
  if (!fs.existsSync(path.dirname(dest))) throw new BackupError(`the folder ${path.dirname(dest)} does not exist: create it first`, true);

  const tmp = `${dest}.${process.pid}.tmp`;
  fs.rmSync(tmp, { force: true });
  // As large as the database each: what earlier backups to this file, killed half way, left.
  const leftovers = removeStaleBackupCopies(dest);
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
    return { file: dest, bytes: fs.statSync(dest).size, ...facts, ...(leftovers.length > 0 ? { removedLeftovers: leftovers } : {}) };
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

export interface SqliteRestore extends Omit<SqliteBackup, 'file' | 'bytes'> {
  file: string;
  /** Where the database it replaced was moved (with its -wal and -shm), if there was one. */
  replaced?: string;
  /** Temporary files an earlier restore (or re-creation) killed half way had left beside the database, removed. */
  removedLeftovers?: string[];
}

/** Why `file` cannot be a backup, or undefined; as ./database-file.ts says it for every command. */
function whyNotABackup(file: string): BackupError | undefined {
  const why = whyNotAnSqliteDatabase(file, 'a backup', 'give the file a2a-registry backup wrote');
  return why && new BackupError(why.message, why.folder);
}

/** Checks that `file` is a whole registry database this release can open; returns what it holds. */
function checkedCopy(file: string): Omit<SqliteBackup, 'file' | 'bytes'> {
  const notABackup = whyNotABackup(file);
  if (notABackup) throw notABackup;
  let copy: Database.Database;
  try {
    copy = new Database(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new BackupError(`${file} cannot be opened as an SQLite database: ${(err as Error).message}`);
  }
  try {
    let check: unknown;
    try {
      check = copy.pragma('quick_check', { simple: true });
    } catch (err) {
      throw new BackupError(`${file} is not an SQLite database (${(err as Error).message})`);
    }
    if (check !== 'ok') throw new BackupError(`${file} fails SQLite's integrity check (${String(check)}): restore another backup`);
    const facts = describe(copy, file);
    if (facts.schemaVersion > SQLITE_SCHEMA_VERSION) {
      throw new BackupError(`${file} was written by a newer release (schema ${facts.schemaVersion}; this one reads up to ${SQLITE_SCHEMA_VERSION}): restore it with that release or a later one`);
    }
    return facts;
  } finally {
    copy.close();
  }
}

/**
 * Copies the database at `file` as SQLite reads it, its -wal included: a database file copied
 * from a registry that crashed (a recovered disk) holds its last commits in the -wal beside it,
 * which a copy of the file alone dropped, though the summary, read through SQLite, counted them.
 * The copy is its user's alone (it holds webhook tokens) from the moment it exists.
 */
function copyThroughSqlite(file: string, copy: string): void {
  // VACUUM INTO writes only a new file: one of this name is left by an earlier run whose pid was this one's.
  fs.rmSync(copy, { force: true });
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const umask = process.umask(0o077);
  try {
    db.prepare('VACUUM INTO ?').run(copy);
  } finally {
    process.umask(umask);
    db.close();
  }
}

/**
 * The watches (standing searches) a restored database holds were current with it when the backup
 * was taken, and have told their clients of changes since, which the restore undoes: each is
 * marked behind its change log (position 0), so the registry sends it a `resync` with its current
 * matches when it starts. Before, a watch found itself current and its webhook, told of entries
 * added since the backup, never heard they are gone. Its event numbers go on past those the
 * replaced database had reserved (a watch that sent many events since the backup had reserved
 * more): a client that orders events by number would drop the ones that repeat a number.
 */
function rewindWatches(copy: string, current: string | undefined): void {
  const floors = current ? reservedEventNumbers(current) : new Map<string, number>();
  const db = new Database(copy, { fileMustExist: true });
  try {
    if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'watches'").get()) return;
    db.transaction(() => {
      db.prepare('UPDATE watches SET change_seq = 0').run();
      const raise = db.prepare('UPDATE watches SET seq_floor = ? WHERE id = ? AND seq_floor < ?');
      for (const [id, floor] of floors) raise.run(floor, id, floor);
    })();
  } finally {
    db.close();
  }
  // Closed cleanly, a -wal it made is checkpointed and gone; none may go into place with it.
  for (const suffix of ['-wal', '-shm']) fs.rmSync(`${copy}${suffix}`, { force: true });
}

/** The event numbers each watch of the database being replaced has reserved (none when it cannot be read: it may be why it is replaced). */
function reservedEventNumbers(database: string): Map<string, number> {
  try {
    const db = new Database(database, { readonly: true, fileMustExist: true });
    try {
      if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'watches'").get()) return new Map();
      return new Map((db.prepare('SELECT id, seq_floor FROM watches').all() as { id: string; seq_floor: number }[]).map((r) => [r.id, r.seq_floor]));
    } finally {
      db.close();
    }
  } catch {
    return new Map();
  }
}

/**
 * Puts the backup at `backup` in place of the database at `database` (the registry stopped).
 * An existing database is replaced only with `overwrite`, and kept beside as
 * `registry.db.replaced-<time>`.
 */
export function restoreSqlite(backup: string, database: string, options: { overwrite: boolean }): SqliteRestore {
  const unreadable = whyCannotRead(backup);
  if (unreadable) throw new BackupError(`cannot read the backup ${backup}: ${unreadable}`, true);
  if (!fs.existsSync(backup)) throw new BackupError(`there is no backup at ${backup}`, true);
  if (sameFile(backup, database)) throw new BackupError(`${backup} is the database itself`, true);
  const facts = checkedCopy(backup);
  let lock: Database.Database;
  try {
    lock = lockForThisProcess(database);
  } catch (err) {
    if (err instanceof DatabaseInUseError) {
      throw new BackupError(`a registry is running on ${database} (it holds ${database}.lock): stop it, then restore`);
    }
    // Run as another user than the registry's: "EACCES: permission denied, open '....lock'" named
    // neither the user nor what it lacks.
    const why = /^(EACCES|EPERM|EROFS)$/.test((err as NodeJS.ErrnoException).code ?? '') ? whyCannotWrite(database, [`${database}.lock`, `${database}-wal`, `${database}-shm`]) : undefined;
    if (why) throw new BackupError(`cannot restore into ${database}: ${why}; run the restore as the registry's user`);
    throw err;
  }
  const tmp = `${database}.restore-${process.pid}.tmp`;
  try {
    // Holding the lock: what an earlier restore killed half way left behind goes (./leftovers.ts).
    const leftovers = removeStaleTemporaries(database);
    let replaced: string | undefined;
    if (fs.existsSync(database)) {
      if (!options.overwrite) {
        throw new BackupError(`${database} exists: pass --force to replace it (it is kept beside, as ${path.basename(database)}.replaced-<time>)`, true);
      }
      replaced = `${database}.replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    }
    copyThroughSqlite(backup, tmp);
    rewindWatches(tmp, replaced ? database : undefined);
    syncPath(tmp, 'r');
    if (replaced) {
      // The database with its WAL (committed writes a checkpoint has not copied in yet) and its shared memory.
      for (const suffix of ['', '-wal', '-shm']) {
        if (fs.existsSync(`${database}${suffix}`)) fs.renameSync(`${database}${suffix}`, `${replaced}${suffix}`);
      }
    }
    // A -wal or -shm without their database (left by hand, or a crash) must not meet the restored one.
    for (const suffix of ['-wal', '-shm']) fs.rmSync(`${database}${suffix}`, { force: true });
    fs.renameSync(tmp, database);
    syncPath(path.dirname(database), 'r');
    return { file: database, ...facts, ...(replaced ? { replaced } : {}), ...(leftovers.length > 0 ? { removedLeftovers: leftovers } : {}) };
  } finally {
    fs.rmSync(tmp, { force: true });
    lock.close();
  }
}
