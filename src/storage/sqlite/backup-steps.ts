/**
 * The steps of a backup and a restore (./backup.ts) that read or write a whole database: the
 * copy, its checks and its fsync. They run in a worker thread (./backup-worker.ts), so the
 * command's own thread stays free to answer Ctrl-C or SIGTERM at once while a large database is
 * copied, and to remove the half-written copy before it exits.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sqliteFault } from '../faults.js';
import { checkAndRepair, checkIntegrity, damagedRead, failedRepair, problemCount, type IntegrityReport } from './integrity.js';
import { SQLITE_SCHEMA_VERSION } from './migrations.js';
import { readLastChangeSeq } from './store.js';
import { whyNotAnSqliteDatabase } from './database-file.js';
import { tidyAfterReading } from './reading-leftovers.js';
import { syncPath } from './sync-path.js';

/** What a copy holds: the facts a backup and a restore report. */
export interface CopyFacts {
  entries: number;
  revisions: number;
  /** The change-log position the copy holds (what a restored registry goes on from). */
  changeSeq: number;
  schemaVersion: number;
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

/** How long a copy waits for a lock another connection holds (a running registry's checkpoint holds it for a moment). */
const BUSY_TIMEOUT_MS = 10_000;


/** Facts about a registry database (the source, or the copy to check it). */
export function describe(db: Database.Database, where: string): CopyFacts {
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

/**
 * Copies the live database at `source` into `tmp` (an empty file, created 0600 by the caller: the
 * copy holds webhook tokens), in one read transaction beside the registry's writes, then checks
 * the copy and syncs it. Returns what the copy holds. `destination`: the name it is for, in messages.
 */
export function copyLiveDatabase(source: string, tmp: string, destination: string): CopyFacts {
  let db: Database.Database;
  const tidy = tidyAfterReading(source);
  try {
    db = new Database(source, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new BackupError(`${source} cannot be opened: ${(err as Error).message}`);
  }
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    describe(db, source);
    // VACUUM INTO writes into an empty file as into a new one, keeping the file's mode.
    db.prepare('VACUUM INTO ?').run(tmp);
  } catch (err) {
    if (err instanceof BackupError) throw err;
    if (sqliteFault(err)?.reason === 'corrupt') throw new BackupError(damagedSource(source, destination, err as Error));
    if (sqliteFault(err)?.reason === 'disk-full') {
      throw new BackupError(noRoom(path.dirname(tmp), `nothing was written to ${destination}`, `the copy needs up to ${mib(source)} there (the size of ${source})`, 'or write the backup to another disk'));
    }
    throw new BackupError(`copying ${source} failed: ${(err as Error).message}`);
  } finally {
    db.close();
    tidy();
  }
  // integrity_check, not quick_check: VACUUM INTO copies each index's records as the source's
  // index holds them (SQLite's transfer of an empty table), so an index page of the source that
  // is torn or holds wrong keys without being unreadable gives a copy whose b-trees are sound
  // (quick_check: ok) and whose index disagrees with its table, which only integrity_check sees.
  // Such backups were written silently. The copy is compact and read once more; about as long as quick_check (docs/scaling.md).
  const report = checkIntegrity(tmp, 'integrity_check');
  if (!report.ok) throw new BackupError(damagedCopy(source, destination, report));
  let facts: CopyFacts;
  const copy = new Database(tmp, { readonly: true, fileMustExist: true });
  try {
    facts = describe(copy, 'the copy');
  } finally {
    copy.close();
  }
  syncPath(tmp, 'r');
  return facts;
}

/**
 * The copy of `source` fails integrity_check: the damage came with what it copied (a fresh file,
 * written just now), so the source is named damaged, as damagedSource names one whose read failed.
 */
function damagedCopy(source: string, destination: string, report: IntegrityReport): string {
  return (
    `the database file ${source} is damaged: SQLite's integrity_check of its copy found ${problemCount(report)}: ${report.problems.join('; ')}. ` +
    `So it cannot be backed up: nothing was written to ${destination}. ${checkAndRepair(source)}`
  );
}

/**
 * SQLite found a corrupt page while the copy read the database: which file, that no backup was
 * made, and how to repair it (./integrity.ts). The copy read that far is removed by the caller; a
 * backup of a damaged file is no backup.
 */
const damagedSource = (source: string, destination: string, err: Error): string => damagedRead(source, err, `so it cannot be backed up: nothing was written to ${destination}`);

/**
 * Why `file` cannot be a backup, or undefined; as ./database-file.ts says it for every command.
 * Given the `database` it would replace, an empty file is said to be what a failed repair of that
 * database leaves too (README, Backups: `sqlite3 registry.db .recover | sqlite3 recovered.db` with
 * a sqlite3 that cannot run .recover), with the repair that works: told a backup only, the operator
 * repairing a database without one was sent looking for a backup they do not have.
 */
export function whyNotABackup(file: string, database?: string): BackupError | undefined {
  const fix = 'give the file a2a-registry backup wrote';
  const why = whyNotAnSqliteDatabase(file, 'a backup', fix, database === undefined ? fix : `${fix}; or, if it is a repair's output, the repair failed. ${failedRepair(database, file)}`);
  return why && new BackupError(why.message, why.folder);
}

/** Checks that `file` is a whole registry database this release can open; returns what it holds. */
export function checkedCopy(file: string): CopyFacts {
  const notABackup = whyNotABackup(file);
  if (notABackup) throw notABackup;
  // integrity_check, as a backup's own copy is checked (copyLiveDatabase): a backup an earlier
  // release wrote from a torn index page passes quick_check (its b-trees sound) while its index
  // disagrees with its table, and a file like that is not one to restore.
  let report: IntegrityReport;
  try {
    report = checkIntegrity(file, 'integrity_check');
  } catch (err) {
    throw new BackupError(`${file} cannot be opened as an SQLite database: ${(err as Error).message}`);
  }
  if (!report.ok) throw new BackupError(`${file} fails SQLite's integrity check (${problemCount(report)}: ${report.problems.join('; ')}): restore another backup`);
  // A backup may be a stopped registry's registry.db (WAL mode): no -wal or -shm of this read stays beside it.
  const tidy = tidyAfterReading(file);
  const copy = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const facts = describe(copy, file);
    if (facts.schemaVersion > SQLITE_SCHEMA_VERSION) {
      throw new BackupError(`${file} was written by a newer release (schema ${facts.schemaVersion}; this one reads up to ${SQLITE_SCHEMA_VERSION}): restore it with that release or a later one`);
    }
    return facts;
  } finally {
    copy.close();
    tidy();
  }
}

/**
 * Copies the backup at `backup` into `tmp` (an empty file, created 0600 by the caller) as SQLite
 * reads it, its -wal included: a database file copied from a registry that crashed (a recovered
 * disk) holds its last commits in the -wal beside it, which a copy of the file alone dropped,
 * though the summary, read through SQLite, counted them. Then rewinds its watches against the
 * database it replaces (`current`, if any) and syncs it.
 */
export function copyBackup(backup: string, tmp: string, current: string | undefined): RestoredCopy {
  try {
    const tidy = tidyAfterReading(backup);
    const db = new Database(backup, { readonly: true, fileMustExist: true });
    try {
      db.prepare('VACUUM INTO ?').run(tmp);
    } finally {
      db.close();
      tidy();
    }
    const leftOut = leaveOutUnreadable(tmp);
    rewindWatches(tmp, current);
    syncPath(tmp, 'r');
    return leftOut;
  } catch (err) {
    // `tmp` is `<database>.restore-<pid>.tmp` (./backup.ts).
    if (isDiskFull(err)) throw restoreNoRoom(tmp.replace(/\.restore-\d+\.tmp$/, ''), backup);
    throw err;
  }
}

/** SQLite's "database or disk is full", or the file system's ENOSPC (a sync, a rename). */
export const isDiskFull = (err: unknown): boolean => sqliteFault(err)?.reason === 'disk-full' || (err as NodeJS.ErrnoException | null)?.code === 'ENOSPC';

const mib = (file: string): string => `${(fs.statSync(file).size / 1024 / 1024).toFixed(1)} MiB`;

/**
 * A copy stopped by a full disk: which disk (SQLite's own words, "database or disk is full", named
 * no file, and the backup's said "copying <the registry's database> failed", as if its disk were
 * the full one), that nothing was put in place, and what room it needs.
 */
function noRoom(folder: string, untouched: string, needs: string, otherwise: string): string {
  return `the disk holding ${folder} is full, so ${untouched}: ${needs}. Free some space there, ${otherwise}`;
}

/** A restore into `database` stopped by a full disk (its copy of `backup`, or its lock files). */
export function restoreNoRoom(database: string, backup: string): BackupError {
  return new BackupError(noRoom(path.dirname(database), `${database} is as it was`, `the restore's copy needs up to ${mib(backup)} there (the size of ${backup})`, 'then restore again'));
}

/** What a restore's copy left out of the file it was given (./backup.ts reports it). */
export interface RestoredCopy {
  /** Ids of entries left out: their current revision, or their entry row, was not in the file. */
  leftOutEntries: string[];
  /** What the copy holds once they are left out (only when some were). */
  facts?: CopyFacts;
}

/**
 * A file `sqlite3 .recover` (or `.dump`) rebuilt from a damaged database (README, Backups) holds
 * what SQLite could still read: an entry whose revisions were on the damaged pages, or revisions,
 * URLs and health of an entry whose own row was. Such an entry was never shown (get, list and
 * search read its current revision) yet held its identity and URLs: registering it again, as the
 * README says to, failed INTERNAL for good (UNIQUE constraint on entries.identity_url) and `rm`
 * said NOT_FOUND. The copy drops what cannot be read whole (an entry without its current
 * revision, rows of an entry that is not there, URL claims no entry lists any more) and records a
 * removal in the change log for each such entry, so a saved search index or a replica that still
 * holds it drops it too. A backup the registry wrote holds none of these: nothing changes.
 */
function leaveOutUnreadable(copy: string): RestoredCopy {
  const db = new Database(copy, { fileMustExist: true });
  try {
    const has = (table: string): boolean => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
    if (!has('entries') || !has('entry_revisions') || !has('changes')) return { leftOutEntries: [] };
    const dependents = ['entry_revisions', 'entry_freshness', 'entry_urls'].filter(has);
    return db.transaction(() => {
      const unreadable = db
        .prepare(
          'SELECT id FROM entries e WHERE NOT EXISTS (SELECT 1 FROM entry_revisions r WHERE r.entry_id = e.id AND r.revision = e.current_revision)',
        )
        .pluck()
        .all() as string[];
      const orphaned = db
        .prepare(dependents.map((table) => `SELECT entry_id FROM ${table} WHERE entry_id NOT IN (SELECT id FROM entries)`).join(' UNION '))
        .pluck()
        .all() as string[];
      const leftOut = [...new Set([...unreadable, ...orphaned])];
      if (leftOut.length === 0) return { leftOutEntries: [] };
      const ids = JSON.stringify(leftOut);
      // The URLs the left-out entries used, whose claims go with them unless a kept entry uses
      // one too. Only theirs: an entry kept whose own URL rows were lost keeps its claims.
      const theirUrls = dependents.includes('entry_urls') ? JSON.stringify(db.prepare('SELECT DISTINCT url FROM entry_urls WHERE entry_id IN (SELECT value FROM json_each(?))').pluck().all(ids)) : '[]';
      for (const table of dependents) db.prepare(`DELETE FROM ${table} WHERE entry_id IN (SELECT value FROM json_each(?))`).run(ids);
      db.prepare('DELETE FROM entries WHERE id IN (SELECT value FROM json_each(?))').run(ids);
      if (has('url_claims') && has('entry_urls')) {
        db.prepare('DELETE FROM url_claims WHERE url IN (SELECT value FROM json_each(?)) AND NOT EXISTS (SELECT 1 FROM entry_urls u WHERE u.url = url_claims.url)').run(theirUrls);
      }
      const at = new Date().toISOString();
      const removal = db.prepare("INSERT INTO changes (entry_id, op, at) VALUES (?, 'delete', ?)");
      for (const id of leftOut) removal.run(id, at);
      return { leftOutEntries: leftOut, facts: describe(db, copy) };
    })();
  } finally {
    db.close();
    // Closed cleanly, a -wal it made is checkpointed and gone; none may go into place with it.
    for (const suffix of ['-wal', '-shm']) fs.rmSync(`${copy}${suffix}`, { force: true });
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

/**
 * The event numbers each watch of the database being replaced has reserved (none when it cannot
 * be read: it may be why it is replaced). Another process reading it (a sqlite3 shell) is waited
 * for, as a backup waits: a lock held for a moment is no reason to lose them.
 */
function reservedEventNumbers(database: string): Map<string, number> {
  // Its -wal and -shm go aside with it: none this read created may go with them.
  const tidy = tidyAfterReading(database);
  try {
    const db = new Database(database, { readonly: true, fileMustExist: true });
    try {
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'watches'").get()) return new Map();
      return new Map((db.prepare('SELECT id, seq_floor FROM watches').all() as { id: string; seq_floor: number }[]).map((r) => [r.id, r.seq_floor]));
    } finally {
      db.close();
    }
  } catch {
    return new Map();
  } finally {
    tidy();
  }
}
