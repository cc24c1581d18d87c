/**
 * A consistent copy of the embedded database, taken while the registry runs (`a2a-registry
 * backup`). Copying registry.db with cp is not one: the committed writes may still be in
 * registry.db-wal, and a write during the copy tears it. `VACUUM INTO` reads the database in one
 * read transaction (in WAL mode, beside the running registry's writes, which it does not block)
 * and writes a compact, self-contained file: no -wal to go with it.
 *
 * The copy is written beside its destination under a temporary name, checked (`integrity_check`,
 * and that it is a registry's database), synced, and only then given its name: a backup that
 * failed half way never sits where a restore would take it from. It holds what the database
 * holds, webhook tokens included, so it is created for its user alone (0600).
 *
 * A restore (`a2a-registry restore`) puts a checked copy in the database's place, with the
 * registry stopped (it takes the registry's own lock, so a running one refuses it); the database
 * it replaces is kept beside it with its -wal and -shm, moved together: a -wal left beside
 * another database would be replayed into it.
 *
 * Reading and writing whole databases (the copy, its checks, its fsync) happens in a worker
 * thread (./backup-steps.ts): given an AbortSignal (the command's Ctrl-C or SIGTERM), a backup or
 * a restore stops at once, removes its temporary copy and rejects with BackupInterrupted. It
 * never stops half way through putting the copy in place: those renames are a few system calls
 * on this thread, done before a signal is even looked at. A SIGKILL or a power loss between them
 * is another matter: they run under a record the next registry start or restore finishes them
 * from (./restore-swap.ts), so the registry never starts empty where a database was.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { removeStaleBackupCopies, removeStaleTemporaries } from './leftovers.js';
import { DatabaseInUseError, importLockFile, lockForThisProcess, lockOutImports } from './process-lock.js';
import { whyCannotRead, whyCannotWrite } from '../../lib/write-access.js';
import { whyNotAnSqliteDatabase } from './database-file.js';
import { roleInDatabase } from './database-companions.js';
import { SwapNotBegun, finishUnfinishedRestore, restoreRecordFile, restoreUnderWay, swapIntoPlace } from './restore-swap.js';
import { giveTo, ownerForNewFiles } from './file-owner.js';
import { BackupError, isDiskFull, restoreNoRoom, whyNotABackup, type CopyFacts } from './backup-steps.js';
import { syncPath } from './sync-path.js';
import type { BackupJob, BackupJobReply } from './backup-worker.js';

export { BackupError } from './backup-steps.js';

export interface SqliteBackup extends CopyFacts {
  file: string;
  bytes: number;
  /** Copies earlier backups to the same file left when killed half way, removed. */
  removedLeftovers?: string[];
}

/** A backup or restore stopped by its signal (the command's Ctrl-C, SIGTERM): its temporary copy is removed, nothing was put in place. */
export class BackupInterrupted extends Error {
  constructor(readonly reason: unknown) {
    super('interrupted');
  }
}

interface CopyOptions {
  overwrite: boolean;
  /** Aborted: stop the copy, remove it, reject with BackupInterrupted. */
  signal?: AbortSignal;
}

/** The temporary copy and the journal SQLite writes beside it while it fills it. */
function removeCopy(tmp: string): void {
  for (const suffix of ['', '-journal']) fs.rmSync(`${tmp}${suffix}`, { force: true });
}

/**
 * An empty file for the copy, its user's alone (it holds webhook tokens) from the moment it
 * exists; VACUUM INTO fills it as it would a new file. One of this name is left by an earlier
 * run whose pid was this one's.
 */
function createCopy(tmp: string): void {
  removeCopy(tmp);
  fs.closeSync(fs.openSync(tmp, 'wx', 0o600));
}

/**
 * Runs `job` in a worker thread. When `signal` aborts first, `tmp` (if any) is removed at once and
 * the promise rejects with BackupInterrupted, without waiting for the thread: it may be inside
 * one long SQLite call, which nothing interrupts, and the caller ends the process.
 */
function inWorker(job: BackupJob, signal: AbortSignal | undefined, tmp?: string): Promise<BackupJobReply & { ok: true }> {
  if (signal?.aborted) return Promise.reject(new BackupInterrupted(signal.reason));
  const worker = new Worker(new URL('./backup-worker.js', import.meta.url), { workerData: job });
  return new Promise<BackupJobReply & { ok: true }>((resolve, reject) => {
    const onAbort = (): void => {
      if (tmp) removeCopy(tmp);
      worker.unref();
      reject(new BackupInterrupted(signal!.reason));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const settle = (): void => signal?.removeEventListener('abort', onAbort);
    worker.once('message', (reply: BackupJobReply) => {
      settle();
      if (reply.ok) return resolve(reply);
      if (reply.code === undefined) return reject(new BackupError(reply.message, reply.usage));
      reject(Object.assign(new Error(reply.message), { code: reply.code }));
    });
    worker.once('error', (err) => {
      settle();
      reject(err);
    });
  });
}

/** Copies the database at `source` to `destination`; never over an existing file unless `overwrite`. */
export async function backupSqlite(source: string, destination: string, options: CopyOptions): Promise<SqliteBackup> {
  // Run as another user than the registry's (its data directory is 0700), the database was
  // said not to exist: "point --data-dir at the registry's data directory", which it was.
  const unreadable = whyCannotRead(source);
  if (unreadable) {
    throw new BackupError(`cannot read the registry database ${source}: ${unreadable}; run the backup as the registry's user, or as one who may read its data directory`, true);
  }
  // A restore killed while it put its copy in place: the file there may be the database it was
  // replacing, or none. A copy of it was made without a word, a backup of the data the restore
  // was to replace (or "no registry database"); `check` and `import` refuse it alike.
  const underWay = restoreUnderWay(source);
  if (underWay) throw new BackupError(underWay);
  if (!fs.existsSync(source)) {
    throw new BackupError(`there is no registry database at ${source}: point --data-dir (REGISTRY_DATA_DIR) at the registry's data directory`, true);
  }
  // An empty registry.db or a device there was "an SQLite database but not a registry's".
  const notADatabase = whyNotAnSqliteDatabase(source, 'a registry database', "point --data-dir (REGISTRY_DATA_DIR) at the registry's data directory");
  if (notADatabase) throw new BackupError(notADatabase.message, notADatabase.folder);
  const dest = path.resolve(destination);
  // Written over the running database's log or lock, the backup lost acknowledged writes at the next crash, or let a second registry start.
  const role = roleInDatabase(dest, source);
  if (role) throw new BackupError(`${destination} is ${role}: give the backup a file outside the database's own (e.g. ${path.join(path.dirname(dest), 'registry-backup.db')})`, true);
  if (fs.statSync(dest, { throwIfNoEntry: false })?.isDirectory()) {
    // --force replaces a file, never a folder: it failed with a raw EISDIR after the whole copy.
    throw new BackupError(`${destination} is a folder: name the backup file, e.g. ${path.join(destination, 'registry-backup.db')}`, true);
  }
  if (fs.existsSync(dest) && !options.overwrite) {
    throw new BackupError(`${destination} already exists: choose another file, or pass --force to replace it`, true);
  }
  if (!fs.existsSync(path.dirname(dest))) throw new BackupError(`the folder ${path.dirname(dest)} does not exist: create it first`, true);

  const tmp = `${dest}.${process.pid}.tmp`;
  // As large as the database each: what earlier backups to this file, killed half way, left.
  const leftovers = removeStaleBackupCopies(dest);
  try {
    createCopy(tmp);
  } catch (err) {
    // It was "the backup failed: EACCES: permission denied, open '<file>.<pid>.tmp'": a file the user never named, and no fix.
    const why = /^(EACCES|EPERM|EROFS)$/.test((err as NodeJS.ErrnoException).code ?? '') ? whyCannotWrite(dest) : undefined;
    if (why) throw new BackupError(`cannot write the backup ${destination}: ${why}; write it to a folder this user may write, or run the backup as a user who may write there`, true);
    throw err;
  }
  try {
    const facts = (await inWorker({ kind: 'backup', source, tmp, destination }, options.signal, tmp)).facts!;
    // From here to the return, nothing waits: a signal is looked at once the copy has its name.
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
    removeCopy(tmp);
  }
}

export interface SqliteRestore extends CopyFacts {
  file: string;
  /** Where the database it replaced was moved (with its -wal and -shm), if there was one. */
  replaced?: string;
  /** Temporary files an earlier restore (or re-creation) killed half way had left beside the database, removed. */
  removedLeftovers?: string[];
  /** An earlier restore killed half way through its swap, finished before this one (./restore-swap.ts). */
  finishedEarlier?: EarlierRestore;
  /**
   * Entries the file held only in part (its current revision, or its entry row, missing: a file
   * `sqlite3 .recover` rebuilt from a damaged one), left out so that they can be registered again.
   */
  leftOutEntries?: string[];
}

/** An earlier restore's swap, finished; `finished` false when its copy was gone (this restore took its place). */
export interface EarlierRestore {
  backup: string;
  /** Where the database it replaced is kept, if there was one. */
  replaced?: string;
  finished: boolean;
}

/**
 * The swap an earlier restore was killed in, finished (./restore-swap.ts): what it restored, and
 * where the database it replaced is. Its copy gone, the replaced files are gathered under their
 * replaced name and this restore takes its place (its record removed): nothing is lost.
 */
function finishEarlierRestore(database: string): EarlierRestore | undefined {
  const earlier = finishUnfinishedRestore(database);
  if (!earlier?.swap) return undefined;
  if (!earlier.finished) fs.rmSync(earlier.record, { force: true });
  const { backup, replaced } = earlier.swap;
  return { backup, ...(replaced ? { replaced } : {}), finished: earlier.finished };
}

/**
 * Puts the backup at `backup` in place of the database at `database` (the registry stopped).
 * An existing database is replaced only with `overwrite`, and kept beside as
 * `registry.db.replaced-<time>`.
 */
export async function restoreSqlite(backup: string, database: string, options: CopyOptions): Promise<SqliteRestore> {
  const unreadable = whyCannotRead(backup);
  if (unreadable) throw new BackupError(`cannot read the backup ${backup}: ${unreadable}`, true);
  if (!fs.existsSync(backup)) throw new BackupError(`there is no backup at ${backup}`, true);
  const role = roleInDatabase(backup, database);
  if (role) throw new BackupError(`${backup} is ${role}, not a backup: give the file a2a-registry backup wrote`, true);
  // Said before the whole file is read (a folder, an empty file, another kind of file).
  const notABackup = whyNotABackup(backup, database);
  if (notABackup) throw notABackup;
  let facts = (await inWorker({ kind: 'check', backup }, options.signal)).facts!;
  // The registry's lock, then the import lock: no registry running on the database, and no import
  // writing to it (its database would be moved aside under it, and what it stored went with it).
  let lock: ReturnType<typeof lockForThisProcess> | undefined;
  let importLock: ReturnType<typeof lockOutImports>;
  try {
    lock = lockForThisProcess(database);
    importLock = lockOutImports(database);
  } catch (err) {
    const held = lock !== undefined;
    lock?.close();
    if (err instanceof DatabaseInUseError) {
      throw new BackupError(
        held
          ? `${err.message}: let it finish, or stop it and run it again once the backup is restored; then restore`
          : `a registry is running on ${database} (it holds ${database}.lock): stop it, then restore`,
      );
    }
    // Run as another user than the registry's: "EACCES: permission denied, open '....lock'" named
    // neither the user nor what it lacks.
    const why = /^(EACCES|EPERM|EROFS)$/.test((err as NodeJS.ErrnoException).code ?? '')
      ? whyCannotWrite(database, [`${database}.lock`, importLockFile(database), `${database}-wal`, `${database}-shm`])
      : undefined;
    if (why) throw new BackupError(`cannot restore into ${database}: ${why}; run the restore as the registry's user`);
    if (isDiskFull(err)) throw restoreNoRoom(database, backup);
    throw err;
  }
  const tmp = `${database}.restore-${process.pid}.tmp`;
  // Run as root (sudo), what the restore puts in place is the registry's user's to open (./file-owner.ts).
  const owner = ownerForNewFiles(database);
  try {
    // The lock files are the registry's to open too (this restore may have made them).
    giveTo(owner, [`${database}.lock`, importLockFile(database)]);
    // Holding the lock: a swap an earlier restore was killed in is finished first (its copy is
    // a leftover only once that is done), then what one killed earlier left behind goes (./leftovers.ts).
    const earlier = finishEarlierRestore(database);
    const leftovers = removeStaleTemporaries(database);
    let replaced: string | undefined;
    if (fs.existsSync(database)) {
      if (!options.overwrite) {
        const finished = earlier ? ` (the restore of ${earlier.backup}, stopped half way, was finished first${earlier.replaced ? `; the database it replaced is kept as ${earlier.replaced}` : ''})` : '';
        throw new BackupError(`${database} exists${finished}: pass --force to replace it (it is kept beside, as ${path.basename(database)}.replaced-<time>)`, true);
      }
      replaced = `${database}.replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    }
    createCopy(tmp);
    const { restored } = await inWorker({ kind: 'restore', backup, tmp, ...(replaced ? { current: database } : {}) }, options.signal, tmp);
    // What the copy left out is not restored: the summary counts what was put in place.
    const leftOut = restored?.leftOutEntries ?? [];
    if (restored?.facts) facts = restored.facts;
    giveTo(owner, [tmp]);
    // From here to the return, nothing waits. The database with its WAL (committed writes a
    // checkpoint has not copied in yet), its shared memory and the record of its damage
    // (./damage-record.ts) move aside, and the copy takes its place, under a record that lets
    // whoever takes the lock next finish it after a crash (./restore-swap.ts).
    try {
      swapIntoPlace(database, { copy: tmp, ...(replaced ? { replaced } : {}), backup });
    } catch (err) {
      if (err instanceof SwapNotBegun) {
        // EBUSY on a rename: the file is a mount point (`-v ./registry.db:/data/registry.db`), which no rename moves.
        const mounted = (err.cause as NodeJS.ErrnoException).code === 'EBUSY' ? ` (is ${path.basename(database)} mounted on its own, as a container's file volume? mount its folder instead)` : '';
        throw new BackupError(`${database} is as it was: the restore could not ${replaced ? 'move it aside to put its copy in place' : 'put its copy there'} (${err.message})${mounted}; fix that, then restore again`);
      }
      // A rename or sync refused (a full disk, permissions): said as the half-done swap it may be, not "as it was".
      if (!fs.existsSync(restoreRecordFile(database))) throw err;
      throw new BackupError(
        `the restore stopped while it put its copy in place (${(err as Error).message}); ${restoreRecordFile(database)} records how far it got. ` +
          'Fix that, then start the registry or run the restore again: either finishes it',
      );
    }
    return {
      file: database,
      ...facts,
      ...(replaced ? { replaced } : {}),
      ...(leftovers.length > 0 ? { removedLeftovers: leftovers } : {}),
      ...(earlier ? { finishedEarlier: earlier } : {}),
      ...(leftOut.length > 0 ? { leftOutEntries: leftOut } : {}),
    };
  } finally {
    // Named in the record of a swap that stopped half way, the copy is what finishes it.
    if (!fs.existsSync(restoreRecordFile(database))) removeCopy(tmp);
    importLock.close();
    lock.close();
  }
}
