/**
 * The embedded default store: one SQLite file in REGISTRY_DATA_DIR, through better-sqlite3.
 *
 * Every write (entry upserts and removals, task saves, pruning) goes through one WriteQueue
 * on the connection: the writes queued in the same turn of the event loop are committed
 * together, in one `BEGIN IMMEDIATE` transaction (group commit; see write-queue.ts), and each
 * resolves only once the WAL holding that COMMIT has been fsynced. The fsync runs off the event
 * loop (syncWal), one at a time, covering every batch committed before it started: the
 * connection runs with synchronous=NORMAL (COMMIT does not fsync) and the store does the fsync
 * FULL would have done, without stalling every other request for it. Within the batch the
 * jobs run one after another, so within one process writes are serialised as before. Across
 * processes, `BEGIN IMMEDIATE` takes SQLite's write lock before reading, so the
 * read-check-write of `upsert` is atomic.
 *
 * Reads run directly on the connection: a batch runs synchronously from BEGIN to COMMIT, so
 * a read never sees one half done.
 *
 * Faults are named (storage/faults.ts): SQLITE_FULL, read-only, corrupt and I/O errors become
 * StorageUnavailableError. A database file deleted under the running process is noticed after
 * each commit (SQLite itself would keep writing to the unlinked inode, and everything would be
 * lost at the next start): the store re-creates the file from its open connection (VACUUM
 * INTO), so nothing acknowledged is lost, or refuses to acknowledge if it cannot. Its write-ahead
 * log (registry.db-wal) is watched the same way: SQLite keeps appending to a deleted log's
 * unlinked inode, and every commit since the last checkpoint would be lost with the process, so
 * a deleted log (or one replaced by another file) is dealt with the same way: the database
 * re-created from the connection, which still reads the unlinked log, with a new log.
 *
 * Space: incremental auto-vacuum (migration 3) and a bounded WAL, checkpointed by a background
 * thread (checkpointer.ts) rather than inside COMMIT; `reclaimSpace` gives freed pages back to
 * the file system after pruning.
 */
import { chmodSync, existsSync, openSync, closeSync, fdatasync, fdatasyncSync, renameSync, rmSync, statSync, statfsSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import type { EntryKind, RevisionSummary } from '../../contract/types.js';
import type { CardVerification } from '../../contract/verification.js';
import { timeOrderedId } from '../../lib/time-ordered-id.js';
import { coveringClaims } from '../../lib/endpoint-url.js';
import type {
  AcceptedUpsert,
  AcknowledgementRow,
  Actor,
  BatchedDeletion,
  Change,
  DeleteOutcome,
  EntryWrite,
  ListQuery,
  CheckOutcome,
  FreshnessWrite,
  ImportOutcome,
  ImportQuota,
  ListResult,
  RegistryStore,
  ReviseOutcome,
  ScanOptions,
  StoredEntry,
  TaskRecords,
  WatchRecords,
  UpsertOutcome,
  WriteQuota,
  UrlTakenOutcome,
} from '../types.js';
import {
  CURRENT_JOIN,
  ENTRY_COLUMNS,
  FRESHNESS_COLUMNS,
  REVISION_JOIN,
  effectiveFreshness,
  freshnessValues,
  freshnessVisiblyChanged,
  UrlTaken,
  clampLimit,
  SQLITE_DELETE_BATCH_ROWS,
  listCursor,
  listKeyset,
  insertedEntry,
  isUuid,
  normalizeSeq,
  rowToEntry,
  verificationColumns,
  sameDocument,
  trustKeyset,
  checkedKeyset,
  type EntryRowFields,
  revisionTime,
} from '../common.js';
import { FaultState, MAY_HAVE_BEEN_STORED, StorageUnavailableError, sqliteFault, storageFault, type StorageFault } from '../faults.js';
import { OwnChanges } from '../own-changes.js';
import { BackgroundCheckpointer, type CheckpointFailure } from './checkpointer.js';
import { syncPath } from './sync-path.js';
import { damageRemedy, describeDamage, problemCount, type IntegrityCheckKind, type IntegrityReport } from './integrity.js';
import { checkIntegrityInChild, type RunningIntegrityCheck } from './integrity-process.js';
import { damageRecordFile, readDamageRecord, recordDamage, removeDamageRecord } from './damage-record.js';
import { SQLITE_SCHEMA_VERSION, ensureIncrementalAutoVacuum, migrateSqlite, schemaVersionOf } from './migrations.js';
import { prepare } from './statements.js';
import { SqliteTaskRecords, saveTaskRowIn } from './task-records.js';
import { SqliteWatchRecords } from './watch-records.js';
import { WriteQueue, type WriteJob } from './write-queue.js';
import { importLockFile, lockForThisProcess, shareWithImports } from './process-lock.js';
import { giveTo, ownerForNewFiles } from './file-owner.js';
import { removeStaleTemporaries } from './leftovers.js';
import { finishUnfinishedRestore, restoreUnderWay, unfinishableRestore } from './restore-swap.js';
import { makeDirectories } from '../../lib/make-directories.js';
import { cannotWriteDatabase } from './unwritable.js';
import { DEFAULT_SQLITE_LOCK_WAIT_MS } from '../setting-defaults.js';

/**
 * The change log around a trim's cutoff: the first change at or after it (`young`), and the
 * log's ends. Read by the primary key only: the old changes are walked up to the first young
 * one, which regular trimming keeps few; `max(seq) WHERE at < cutoff` read every change in the
 * log (no index on `at`) on the event loop at every housekeeping round. (PostgreSQL keeps that
 * query: there a sequential scan off the event loop beats walking the key after a backlog.)
 */
interface TrimBounds {
  young: number | null;
  oldest: number | null;
  newest: number | null;
}

/** The sequence to trim through (every change before the first young one), or undefined: nothing is old enough. */
function trimPoint({ young, oldest, newest }: TrimBounds): number | undefined {
  if (oldest === null || newest === null) return undefined;
  if (young === null) return newest;
  return young > oldest ? young - 1 : undefined;
}

/** The data directory and the database file, when the registry creates them: its user's alone. */
const PRIVATE_DIR_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;

export interface SqliteStoreOptions {
  /** Path of the database file; its directory is created if missing. */
  file: string;
  /** How long a write waits for another process's write lock before failing (ms; off the event loop once open). */
  busyTimeoutMs?: number;
  /** Rows per batch in `scan()`. */
  scanBatchSize?: number;
  /** Most writes committed in one transaction (group commit); the rest wait for the next. */
  maxWriteBatch?: number;
  /** Told about what the store did by itself (e.g. re-created a deleted database file). */
  notice?: (message: string, details: Record<string, unknown>) => void;
  /** Called with every connection the store opens (tests: e.g. PRAGMA query_only to make it read-only). */
  onConnection?: (db: Database.Database) => void;
  /**
   * A serving registry: no other process holding this option may open the database meanwhile
   * (./process-lock.ts); `open` refuses, saying so. The CLI's import leaves it out, and holds a
   * share of the import lock instead, which keeps a restore off the file while it is open.
   */
  singleProcess?: boolean;
  /**
   * How long after a write the background checkpoint runs (ms; default 250: checkpointer.ts).
   * Tests that must find damage before any checkpoint could start set it longer.
   */
  checkpointDelayMs?: number;
}

/** The serving connection's synchronous wait for a lock (ms): none; waits happen off the event loop (write-queue.ts). */
const SERVING_BUSY_TIMEOUT_MS = 0;
/**
 * Longest an import's transaction runs (ms); the rest of its batch goes in the next one. Well
 * below REGISTRY_SQLITE_LOCK_WAIT_MS's default (5 s), so a registry's write waiting meanwhile
 * gets the lock in time, with room for the COMMIT and a loaded machine.
 */
const IMPORT_TRANSACTION_MS = 500;
/** How long an import leaves the write lock free after each of its transactions (ms): several of a waiting registry's tries. */
const IMPORT_LOCK_YIELD_MS = 30;
/** Free pages given back to the file system per transaction (reclaimSpace): 1 MiB of 4 KiB pages. */
const RECLAIM_BATCH_PAGES = 256;
/** The WAL is truncated back to this after checkpoints, so a burst of writes does not leave it large. */
const WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;
/** SQLite's automatic checkpoint (in COMMIT), only a safety net behind the background one: 4,000 pages ≈ 16 MB. */
const SAFETY_NET_CHECKPOINT_PAGES = 4000;
/** After a disk-full fault, writes are probed again only once this much is free (a few registrations with their WAL and index pages). */
const MIN_FREE_BYTES_AFTER_DISK_FULL = 1024 * 1024;

interface EntryRow extends EntryRowFields {
  list_seq: number;
}

/**
 * What `#upsertIn` did; `upsert` answers with the entry, read back unless the step already knows
 * it (a new entry without a freshness record), `importEntries` needs only the id.
 */
type UpsertStep =
  | { status: 'created' | 'updated' | 'unchanged'; id: string; freshened?: boolean; entry?: StoredEntry }
  | { status: 'forbidden'; id: string }
  | { status: 'quota-exceeded'; quota: 'entries'; limit: number }
  | UrlTakenOutcome;

/** Highest committed change sequence (0 when none), trimmed ones included (also read from a backup's copy). */
export function readLastChangeSeq(db: Database.Database): number {
  const row = prepare(
    db,
    `SELECT max(coalesce((SELECT max(seq) FROM changes), 0),
                (SELECT value FROM registry_state WHERE key = 'changes_trimmed_through')) AS seq`,
  ).get() as { seq: number | null };
  return row.seq ?? 0;
}

export class SqliteStore implements RegistryStore {
  readonly engine = 'sqlite';
  /** Another process (an import) may write the file too: what this one wrote (./own-changes.ts). */
  readonly ownChanges = new OwnChanges();
  readonly tasks: TaskRecords;
  readonly watches: WatchRecords;

  readonly #file: string;
  readonly #busyTimeoutMs: number;
  readonly #scanBatchSize: number;
  readonly #writes: WriteQueue;
  readonly #faults = new FaultState((error) => this.#classify(error));
  readonly #notice: NonNullable<SqliteStoreOptions['notice']>;
  readonly #onConnection: SqliteStoreOptions['onConnection'];
  readonly #checkpointDelayMs: number | undefined;
  readonly #singleProcess: boolean;
  /** The held lock of ./process-lock.ts (singleProcess), or the import lock's share (not singleProcess), released at close. */
  #processLock: Database.Database | undefined;
  #db: Database.Database | undefined;
  /** The file the connection has open (device and inode), to notice it being deleted or replaced. */
  #identity: FileIdentity | undefined;
  /** Its write-ahead log as the connection opened it, likewise (undefined until it exists). */
  #walIdentity: FileIdentity | undefined;
  #closed = false;
  #checkpointer: BackgroundCheckpointer | undefined;
  /** The WAL's descriptor (see #walDescriptor), descriptors to close once no sync uses them, and syncs running. */
  #walFd: number | undefined;
  readonly #retiredWalFds: number[] = [];
  #walSyncing = 0;
  /** Entries changed by commits that were refused (see onUnacknowledgedChanges), until a write succeeds. */
  readonly #unacknowledged = new Set<string>();
  /** Their change-log sequences: pending (OwnChanges) until published. */
  readonly #unacknowledgedSeqs: number[] = [];
  #unacknowledgedListener: ((ids: string[]) => Promise<void>) | undefined;
  /**
   * The file found damaged (an integrity check, or SQLite reporting a corrupt page): a lasting
   * fault, which no write probe clears, until the operator repairs the file and restarts.
   */
  #damage: StorageFault | undefined;
  /** The integrity check running (at most one), stopped when the store closes. */
  #integrityCheck: { running: RunningIntegrityCheck; report: Promise<IntegrityReport> } | undefined;

  constructor(options: SqliteStoreOptions) {
    this.#file = resolve(options.file);
    this.#busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_SQLITE_LOCK_WAIT_MS;
    this.#scanBatchSize = Math.max(1, options.scanBatchSize ?? 500);
    this.#notice = options.notice ?? (() => undefined);
    this.#onConnection = options.onConnection;
    this.#checkpointDelayMs = options.checkpointDelayMs;
    this.#singleProcess = options.singleProcess === true;
    this.#writes = new WriteQueue(() => this.#requireDb(), options.maxWriteBatch, {
      // Checked before each batch too: a file gone that cannot be re-created refuses the batch
      // before it writes anything. Checked only after the commit, a refused write was in the
      // connection all the same (an unregister refused as "cannot store anything" had removed
      // the entry, and the re-created file kept it removed).
      beforeBegin: () => this.#checkFileIdentity(),
      beforeAcknowledge: () => this.#checkFileIdentity(),
      refusedAfterCommit: (error) => this.#refusedAfterCommit(error),
      sync: { later: () => this.#syncWal(), now: () => this.#syncWalNow() },
      // Another process's write lock is waited for off the event loop (write-queue.ts).
      lockWaitMs: this.#busyTimeoutMs,
      // Not a serving registry (an import): it leaves the lock free for a moment after each of
      // its long transactions, for a registry running beside it.
      yieldLockMs: this.#singleProcess ? 0 : IMPORT_LOCK_YIELD_MS,
    });
    this.tasks = new SqliteTaskRecords(
      () => this.#requireDb(),
      (job, options) => this.#write(job, options),
      (fn) => this.#read(fn),
    );
    this.watches = new SqliteWatchRecords(
      () => this.#requireDb(),
      (job) => this.#write(job),
      (fn) => this.#read(fn),
      this.#singleProcess,
    );
  }

  get fault(): StorageFault | undefined {
    return this.#damage ?? this.#faults.current;
  }

  async open(): Promise<void> {
    if (this.#db) return;
    if (this.#closed) throw new Error('SqliteStore was closed; create a new instance.');
    // An import run as root (sudo) gives the files it creates to the registry's user (./file-owner.ts).
    const owner = this.#singleProcess ? undefined : ownerForNewFiles(this.#file);
    const created = owner ? [importLockFile(this.#file), this.#file, `${this.#file}-wal`, `${this.#file}-shm`].filter((file) => !existsSync(file)) : [];
    if (this.#singleProcess) {
      try {
        this.#processLock = lockForThisProcess(this.#file);
      } catch (error) {
        throw this.#openError(error);
      }
      // Holding the lock, no restore is running: one killed while it put its copy in place is
      // finished first (its copy would otherwise be removed below, and an empty registry begun
      // where the database was moved aside: ./restore-swap.ts).
      try {
        this.#finishUnfinishedRestore();
      } catch (error) {
        this.#releaseProcessLock();
        throw error;
      }
      // A restore's or a re-creation's temporary file whose process is gone was left by one killed half way (./leftovers.ts).
      for (const file of removeStaleTemporaries(this.#file)) {
        this.#notice('removed a temporary file left beside the database by a restore or re-creation that stopped half way', { file });
      }
    } else {
      // Writing beside the registry (an import): no restore may replace the file meanwhile.
      try {
        this.#processLock = shareWithImports(this.#file);
      } catch (error) {
        throw this.#openError(error);
      }
      // Not holding the process lock, an import may not finish a restore's swap (a registry
      // starting may be finishing it): it would have stored into an empty database in its place.
      const underWay = restoreUnderWay(this.#file);
      if (underWay) {
        this.#releaseProcessLock();
        throw new Error(underWay);
      }
    }
    try {
      // Before the connection: a file an earlier run found damaged is opened read-only (#connectDamaged), and gets no checkpoint from this one.
      this.#recallDamage();
      this.#db = this.#connect();
      giveTo(owner, created);
    } catch (error) {
      this.#releaseProcessLock();
      throw this.#openError(error);
    }
    this.#tellIfReadableByOthers();
    this.#identity = identityOf(this.#file);
    this.#walIdentity = identityOf(`${this.#file}-wal`);
    // Known damaged: no background checkpoint, ever (the log kept beside the file stays as it is).
    if (this.#damage) return;
    this.#checkpointer = new BackgroundCheckpointer(this.#file, this.#busyTimeoutMs, (failure) => this.#checkpointFailed(failure), this.#checkpointDelayMs);
    // What the last run's closing checkpoint could not fold in (a full disk) is tried now, so a
    // start on a disk that cannot take it says so before any write does.
    this.#checkpointer.written();
  }

  /** A restore's swap a SIGKILL or power loss stopped half way, finished and said; its copy gone, the start refused (./restore-swap.ts). */
  #finishUnfinishedRestore(): void {
    const earlier = finishUnfinishedRestore(this.#file);
    if (!earlier) return;
    const { record, swap } = earlier;
    if (!swap) {
      this.#notice('removed the record of a restore that stopped before it moved any file', { file: record });
      return;
    }
    if (!earlier.finished) throw new Error(unfinishableRestore(this.#file, swap, record));
    this.#notice(
      `a restore of ${swap.backup} had stopped half way through putting its copy in place (killed, or a power loss): it was finished${swap.replaced ? `; the database it replaced is kept as ${swap.replaced}` : ''}`,
      { file: this.#file, backup: swap.backup, ...(swap.replaced ? { replaced: swap.replaced } : {}) },
    );
  }

  /**
   * Says so when the database file is open to other users. The registry creates it 0600, but
   * releases before that left it as the umask gave it (0644 under the usual 022), and an upgrade
   * kept it so, silently: every local user could read the push configs' webhook tokens. Its mode
   * is the operator's to change (something of theirs may read it), so it is told, not changed.
   */
  #tellIfReadableByOthers(): void {
    if (process.platform === 'win32') return; // no POSIX modes
    const mode = statSync(this.#file).mode & 0o777;
    if ((mode & 0o077) === 0) return;
    const octal = mode.toString(8).padStart(4, '0');
    this.#notice(
      `${this.#file} is readable by other users (mode ${octal}; releases before the registry made its files private, 0600, created it by the umask), and it holds the webhook tokens of push configs: run chmod 600 ${this.#file} (and its -wal and -shm, if there)`,
      { file: this.#file, mode: octal },
    );
  }

  /** Opens the file with the store's pragmas and brings its schema up to date. */
  #connect(): Database.Database {
    if (this.#damage) return this.#connectDamaged(this.#damage);
    // The database holds the push configs' webhook tokens: readable by the registry's user only
    // (SQLite gives its -wal and -shm files the database file's mode).
    makeDirectories(dirname(this.#file), PRIVATE_DIR_MODE);
    closeSync(openSync(this.#file, 'a', PRIVATE_FILE_MODE));
    const db = new Database(this.#file);
    try {
      // WAL: readers never block the writer and a commit is one sequential append.
      db.pragma('journal_mode = WAL');
      // NORMAL: in WAL mode, NORMAL only fsyncs the WAL at checkpoints, so on its own a power
      // loss or OS crash could roll back transactions we already acknowledged. FULL would fsync
      // the WAL inside every COMMIT, on the event loop (better-sqlite3 is synchronous): ~6 ms
      // during which nothing else is served. Instead the write queue acknowledges a commit only
      // after syncWal has fsynced the WAL off the event loop: what FULL guarantees, without the
      // stall. (A mere process crash loses nothing in either mode; the OS holds the pages.)
      db.pragma('synchronous = NORMAL');
      // While opening (the migrations), wait for a concurrent writer (another process on the
      // same file) instead of failing at once with SQLITE_BUSY; see below for afterwards.
      db.pragma(`busy_timeout = ${this.#busyTimeoutMs}`);
      // Off by default in SQLite; entry_revisions relies on ON DELETE CASCADE.
      db.pragma('foreign_keys = ON');
      // After a checkpoint the WAL file is cut back to this size instead of staying as large as
      // the biggest burst ever was.
      db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
      // Checkpoints run in a background thread (checkpointer.ts); SQLite's own, inside COMMIT
      // on the event loop, only if that thread falls far behind.
      db.pragma(`wal_autocheckpoint = ${SAFETY_NET_CHECKPOINT_PAGES}`);
      migrateSqlite(db, this.#file);
      // Every queued write runs in a savepoint (write-queue.ts), and SQLite keeps a savepoint's
      // statement journal (the pages it touches, as they were) in a temporary file once it passes
      // 64 KiB, which a registration's ten-odd pages do: a file created, written page by page and
      // deleted per batch, three of every four write system calls of a registration and most of
      // its reads. In memory instead; set after the migrations, whose VACUUM and index builds
      // keep spilling to disk.
      db.pragma('temp_store = MEMORY');
      // Serving, SQLite's busy handler would wait for another process's write lock (an import's
      // transaction) synchronously: the event loop held, nothing answered, for as long as that
      // transaction lasts. The write queue waits for it from a timer instead (write-queue.ts).
      db.pragma(`busy_timeout = ${SERVING_BUSY_TIMEOUT_MS}`);
      this.#onConnection?.(db);
    } catch (error) {
      db.close();
      throw error;
    }
    return db;
  }

  /**
   * A file an earlier run found damaged (#recallDamage) is opened read-only: SQLite itself then
   * writes nothing into it, neither a migration nor a pragma (journal_mode) nor the checkpoint a
   * read-write connection makes as the last one to close. Opened read-write, a start on it ran
   * the release's pending migrations into the damaged file, and met its bad pages half way or
   * not at all. Reads are served; writes are refused before they reach SQLite (#write).
   *
   * Its schema must be this release's: every statement the store prepares is written for it, and
   * an older schema would need its migrations, which are writes. Such a file stops the start
   * (as a corrupt one does), naming the file, the record and the repair: a restored or recovered
   * file is whole, and is brought up to date when the registry starts on it.
   */
  #connectDamaged(damage: StorageFault): Database.Database {
    const db = new Database(this.#file, { readonly: true, fileMustExist: true });
    try {
      const found = schemaVersionOf(db, this.#file);
      if (found < SQLITE_SCHEMA_VERSION) {
        throw new Error(
          `the database file ${this.#file} was found damaged at ${damage.since} (${damageRecordFile(this.#file)} says: ${damage.message}), and its schema is version ${found}, ` +
            `older than this release's ${SQLITE_SCHEMA_VERSION}: bringing it up to date would write into the damaged file, so the registry does not start on it. ` +
            `${damageRemedy(this.#file)}. The restored file is brought up to date when the registry starts on it`,
        );
      }
      // As a serving connection's (#connect): reads never wait on the busy handler, sorts stay in memory.
      db.pragma(`busy_timeout = ${SERVING_BUSY_TIMEOUT_MS}`);
      db.pragma('temp_store = MEMORY');
      this.#onConnection?.(db);
    } catch (error) {
      db.close();
      throw error;
    }
    return db;
  }

  async close(): Promise<void> {
    try {
      await this.#closeDatabase();
    } finally {
      // Last: no other registry may open the file before this one is done with it.
      this.#releaseProcessLock();
    }
  }

  #releaseProcessLock(): void {
    this.#processLock?.close();
    this.#processLock = undefined;
  }

  async #closeDatabase(): Promise<void> {
    const db = this.#db;
    this.#closed = true;
    // A check reads the whole file (seconds per 100,000 entries): a shutdown does not wait for it (no verdict is lost, the next start checks again).
    this.#integrityCheck?.running.stop();
    if (!db) return;
    // Its connection closed first: the last checkpoint below then has the file to itself.
    await this.#checkpointer?.close();
    try {
      // Writes already queued are committed (and their promises settled) before the handle goes,
      // waiting for another process's write lock as long as a write would.
      if (db.open) db.pragma(`busy_timeout = ${this.#busyTimeoutMs}`);
      this.#writes.flush();
    } finally {
      const current = this.#db ?? db;
      this.#db = undefined;
      // Nothing more goes into a damaged file, its last checkpoint neither: the log stays beside it.
      const walKeeper = this.#damage && current.open ? this.#keepWal() : undefined;
      try {
        // A file deleted under us still has everything in the open connection: put it back first.
        if (this.#fileMoved()) this.#restoreFile(current);
        // Fold the WAL back into the main file so the database is one self-contained file at
        // rest (copyable, and the next open has nothing to replay).
        if (current.open && !this.#damage) current.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        // The file is gone or the disk is full: nothing more to save here; the fault was reported.
      } finally {
        if (current.open) current.close();
        walKeeper?.close();
        this.#retireWal();
      }
    }
  }

  /**
   * SQLite checkpoints the WAL into the file as the last connection to it closes (then deletes
   * the log), which the store's own is at shutdown. A read-only connection never checkpoints: one
   * held open across that close, with the log open (a read), and closed after it leaves the log
   * as it is, beside the damaged file, with every write acknowledged since the last checkpoint
   * (sqlite3's .recover reads the file and its log together; a restore moves both aside). Said in
   * the log; undefined (SQLite will checkpoint, as before) if the file cannot be read at all.
   */
  #keepWal(): Database.Database | undefined {
    const wal = `${this.#file}-wal`;
    let keeper: Database.Database | undefined;
    try {
      keeper = new Database(this.#file, { readonly: true, fileMustExist: true });
      keeper.pragma('schema_version');
    } catch (error) {
      keeper?.close();
      this.#notice(`the database file ${this.#file} is damaged, and its write-ahead log could not be kept beside it at shutdown: SQLite checkpoints it into the file as it closes (${(error as Error).message})`, { file: this.#file, wal });
      return undefined;
    }
    const bytes = statSync(wal, { throwIfNoEntry: false })?.size ?? 0;
    this.#notice(
      `the database file ${this.#file} is damaged: closed without checkpointing its write-ahead log into it; ${wal} (${bytes} bytes) is left beside it with what was written since the last checkpoint ` +
        `(sqlite3 ${this.#file} .recover, or .dump where .recover fails (README, Backups), reads both; a2a-registry restore --force moves both aside)`,
      { file: this.#file, wal, walBytes: bytes },
    );
    return keeper;
  }

  // ---- faults ----

  /**
   * A file that cannot be opened as a database is the operator's to decide about: say which file,
   * what is wrong and what to do, and leave it as it is (nothing is written to a corrupt file).
   */
  #openError(error: unknown): Error {
    const fault = sqliteFault(error);
    // Not writable where it is (./unwritable.ts): the file, this process's user and the access it lacks.
    if (fault?.reason !== 'corrupt') return cannotWriteDatabase(this.#file, error) ?? (error instanceof Error ? error : new Error(String(error)));
    return new Error(
      `the database file ${this.#file} is corrupt (${fault.code}); it was left untouched. ` +
        'Restore it from a backup, or move it (with any -wal and -shm files beside it) aside to start with an empty registry.',
      { cause: error },
    );
  }

  /**
   * Damage an earlier run found in the file, from its record (./damage-record.ts): the store is
   * damaged from the start, as it was when that run stopped (writes refused, nothing checkpointed,
   * the log kept at close), said in the log. A record of another file (replaced since: the
   * operator's repair) is removed, and that said too.
   */
  #recallDamage(): void {
    const recalled = readDamageRecord(this.#file);
    const record = damageRecordFile(this.#file);
    if (recalled.state === 'stale') {
      removeDamageRecord(this.#file);
      this.#notice(`removed ${record}, which no longer describes ${this.#file}: ${recalled.why}`, { file: this.#file, record });
      return;
    }
    if (recalled.state !== 'damaged') return;
    const { foundAt, code, message } = recalled.record;
    this.#damage = { reason: 'corrupt', code, message, since: foundAt, lasting: true };
    this.#notice(
      `the database file ${this.#file} was found damaged at ${foundAt} (${record} says: ${message}); nothing is written into it and its write-ahead log is not checkpointed into it. ` +
        `${damageRemedy(this.#file)}. The restore moves ${record} aside with the file`,
      { file: this.#file, record, foundAt, code },
    );
  }

  /**
   * Damage just found is written down beside the file (./damage-record.ts), so a registry
   * restarted on it knows at once, before its first checkpoint. Failing that, said: a restart
   * would know only at its integrity check, and may checkpoint the kept log into the file first.
   */
  #rememberDamage(damage: StorageFault): void {
    try {
      recordDamage(this.#file, { foundAt: damage.since, code: damage.code, message: damage.message });
    } catch (error) {
      this.#notice(
        `the damage could not be recorded in ${damageRecordFile(this.#file)} (${(error as Error).message}): a registry restarted on ${this.#file} before it is repaired knows it damaged only once its integrity check finds it, and may checkpoint the write-ahead log into it before that`,
        { file: this.#file },
      );
    }
  }

  /** Names what a driver error means for storage; refines I/O errors from the file system's state. */
  #classify(error: unknown): StorageFault | undefined {
    const fault = sqliteFault(error);
    if (fault?.reason !== 'io') return fault;
    try {
      if (statfsSync(dirname(this.#file)).bavail === 0) return storageFault('disk-full', fault.code);
      closeSync(openSync(this.#file, 'r+'));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') return storageFault('read-only', `${fault.code}/${code}`);
      if (code === 'ENOENT') return storageFault('missing', `${fault.code}/${code}`);
    }
    return fault;
  }

  /**
   * A background checkpoint failed. For a storage reason (the disk full, the file read-only, an
   * I/O error) the database cannot take writes, though the writes before it were acknowledged
   * (they fit the write-ahead log, whose pages the checkpoint could not copy into the file): the
   * fault is recorded, as a failed write's is, so /readyz says so until a write probe succeeds.
   * A registry started on a full disk was ready until its first write failed. Another process's
   * lock passes on its own: the next checkpoint tries again.
   */
  #checkpointFailed(failure: CheckpointFailure): void {
    this.#notice('a background checkpoint of the WAL failed; SQLite checkpoints in COMMIT once the WAL is large', { file: this.#file, message: failure.message, code: failure.code });
    const fault = failure.code === undefined ? undefined : this.#classify(Object.assign(new Error(failure.message), { code: failure.code }));
    if (fault?.reason === 'corrupt') this.#corruptionFound(failure.message, fault.code);
    else if (fault && fault.reason !== 'locked') this.#faults.record(fault);
  }

  /**
   * A storage error, named (../faults.ts). SQLite finding a corrupt page makes the whole file
   * damaged: what else is damaged is unknown, so nothing more is written into it.
   */
  #failed(error: unknown, read = false): unknown {
    const named = read ? this.#faults.wrapRead(error) : this.#faults.wrap(error);
    if (!(named instanceof StorageUnavailableError) || named.fault.reason !== 'corrupt') return named;
    this.#corruptionFound(error instanceof Error ? error.message : String(error), named.fault.code);
    // Refused after its commit, it still says what became of the write.
    return new StorageUnavailableError(this.#damage!, { cause: error, consequence: named.consequence });
  }

  /**
   * A batch refused after its commit (the file went between the check before BEGIN and the one
   * after COMMIT, or the fsync failed): the refusal says the write may have been stored, since
   * the connection holds it and keeps it if storage recovers.
   */
  #refusedAfterCommit(error: unknown): unknown {
    const named = this.#failed(error);
    if (!(named instanceof StorageUnavailableError) || named.fault.scope !== undefined) return named;
    return new StorageUnavailableError(named.fault, { cause: named.cause ?? error, consequence: MAY_HAVE_BEEN_STORED });
  }

  /** SQLite reported a corrupt page while the store used the file: damaged, said once, and checked through for the rest. */
  #corruptionFound(message: string, code: string): void {
    if (this.#damage) return;
    this.#damage = {
      ...storageFault('corrupt', code, `the database file is damaged (SQLite found a corrupt page: ${code}): the operator must repair it (see the log) and restart the registry`),
      lasting: true,
    };
    this.#stopCheckpoints();
    this.#rememberDamage(this.#damage);
    this.#notice(`SQLite reported the database file ${this.#file} damaged while the registry used it (${code}: ${message}); nothing more is written into it. ${damageRemedy(this.#file)}`, {
      file: this.#file,
      code,
      message,
    });
    // Where else it is damaged, for the operator: the check logs what it finds.
    if (!this.#closed) void this.checkIntegrity().catch(() => undefined);
  }

  /**
   * The background checkpointer copies the WAL into the file a moment after each write: a write
   * acknowledged just before the damage was found would go into the damaged file. It stops; the
   * log keeps those writes (and the closing checkpoint is skipped too: #keepWal).
   */
  #stopCheckpoints(): void {
    void this.#checkpointer?.close();
  }

  /**
   * Checks the file through (./integrity.ts) in a child process, beside the running store; one
   * at a time (a second call gets the running check's report). Damage found is a lasting fault:
   * logged with what SQLite reports and what to do, writes refused from then on.
   */
  checkIntegrity(check: IntegrityCheckKind = 'quick_check'): Promise<IntegrityReport> {
    if (this.#closed || !this.#db) return Promise.reject(new Error('the store is not open'));
    if (this.#integrityCheck) return this.#integrityCheck.report;
    const running = checkIntegrityInChild(this.#file, check);
    const report = running.report
      .then((found) => {
        if (!found.ok) this.#damageFound(found);
        return found;
      })
      .finally(() => (this.#integrityCheck = undefined));
    this.#integrityCheck = { running, report };
    return report;
  }

  #damageFound(report: IntegrityReport): void {
    const problems = problemCount(report);
    if (!this.#damage) {
      this.#stopCheckpoints();
      this.#damage = {
        ...storageFault(
          'corrupt',
          'INTEGRITY_CHECK',
          `the database file is damaged (SQLite's ${report.check} found ${problems}, the first: ${report.problems[0]}): the operator must repair it (see the log) and restart the registry`,
        ),
        lasting: true,
      };
      this.#rememberDamage(this.#damage);
    }
    this.#notice(
      `${describeDamage(report)}. Nothing more is written into it. ${damageRemedy(this.#file)}`,
      { file: this.#file, check: report.check, problems: report.problems, seconds: report.seconds },
    );
  }

  /** A write through the group commit; storage faults come back named, a success clears the fault. */
  #write<T>(job: WriteJob<T>, options: { alone?: boolean } = {}): Promise<T> {
    this.#requireDb();
    if (this.#damage) return Promise.reject(new StorageUnavailableError(this.#damage));
    return this.#writes.run(job, options).then(
      (value) => {
        this.#faults.clear();
        this.#checkpointer?.written();
        this.#announceUnacknowledged();
        return value;
      },
      (error: unknown) => {
        throw this.#failed(error);
      },
    );
  }

  onUnacknowledgedChanges(listener: (ids: string[]) => Promise<void>): void {
    this.#unacknowledgedListener = listener;
  }

  /**
   * A write succeeded: the database takes writes again, and what refused commits left in it is
   * kept with it (the re-created file holds it, the last sync covered it). Tell whoever follows
   * storage which entries those commits changed; their changes stay pending until published.
   */
  #announceUnacknowledged(): void {
    if (this.#unacknowledged.size === 0 || !this.#unacknowledgedListener) return;
    const ids = [...this.#unacknowledged];
    const seqs = this.#unacknowledgedSeqs.splice(0);
    this.#unacknowledged.clear();
    // Not published (the listener failed): they stay pending, so no watch position nor saved
    // index passes them, and the next start replays them (watches send a resync).
    void this.#unacknowledgedListener(ids).then(
      () => seqs.forEach((seq) => this.ownChanges.settled(seq, true)),
      () => undefined,
    );
  }

  /**
   * A read on the connection; a corrupt or vanished file comes back named. A lock it met (another
   * process holding the file exclusively: reads wait for no write's lock in WAL mode) is that
   * read's refusal, not a fault of the store (FaultState.wrapRead).
   */
  async #read<T>(fn: () => T): Promise<T> {
    try {
      return fn();
    } catch (error) {
      throw this.#failed(error, true);
    }
  }

  /**
   * fdatasyncs the WAL (what synchronous=FULL does in COMMIT), off the event loop: the data and
   * the file's size, not its times, as SQLite's own sync of the WAL.
   */
  async #syncWal(): Promise<void> {
    const fd = this.#walDescriptor();
    this.#walSyncing++;
    try {
      await new Promise<void>((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
    } catch (error) {
      throw walSyncError(error);
    } finally {
      this.#walSyncing--;
      if (this.#walSyncing === 0) this.#closeRetiredWal();
    }
  }

  #syncWalNow(): void {
    try {
      fdatasyncSync(this.#walDescriptor());
    } catch (error) {
      throw walSyncError(error);
    }
  }

  /**
   * The WAL, kept open while the connection is (SQLite deletes it only when its last connection
   * closes, and ours is open): one system call per sync. Opened, its directory is fsynced once,
   * as SQLite does for a file it created, so the file itself survives a power loss.
   */
  #walDescriptor(): number {
    if (this.#walFd !== undefined) return this.#walFd;
    let fd: number | undefined;
    try {
      fd = openSync(`${this.#file}-wal`, 'r');
      syncPath(dirname(this.#file), 'r');
      this.#walFd = fd;
      return fd;
    } catch (error) {
      if (fd !== undefined) closeSync(fd);
      throw walSyncError(error);
    }
  }

  /** The connection changes (re-created file, closing): the WAL descriptor is closed once no sync uses it. */
  #retireWal(): void {
    if (this.#walFd !== undefined) this.#retiredWalFds.push(this.#walFd);
    this.#walFd = undefined;
    if (this.#walSyncing === 0) this.#closeRetiredWal();
  }

  #closeRetiredWal(): void {
    for (const fd of this.#retiredWalFds.splice(0)) closeSync(fd);
  }

  /** True when the path no longer holds the file the connection has open (deleted or replaced). */
  #fileMoved(): boolean {
    const now = identityOf(this.#file);
    return now === undefined || this.#identity === undefined || now.dev !== this.#identity.dev || now.ino !== this.#identity.ino;
  }

  /**
   * How the path of the write-ahead log differs from the log the connection writes: 'deleted',
   * 'replaced' (another file there), or undefined (the same file). SQLite keeps its log open, at
   * the same inode, as long as the connection is open: a checkpoint (PASSIVE by the background
   * thread, TRUNCATE at close) and journal_size_limit truncate it in place, and it is deleted
   * only when the last connection closes. A log that did not exist yet when the connection
   * opened is taken as it first appears.
   */
  #walMoved(): WalLoss | undefined {
    const now = identityOf(`${this.#file}-wal`);
    if (this.#walIdentity === undefined) {
      this.#walIdentity = now;
      return undefined;
    }
    if (now === undefined) return 'deleted';
    return now.dev !== this.#walIdentity.dev || now.ino !== this.#walIdentity.ino ? 'replaced' : undefined;
  }

  /**
   * Runs after every commit, before it is acknowledged. If the file or its write-ahead log was
   * deleted, the commit went to an unlinked inode that vanishes with the process: re-create the
   * file from the connection and acknowledge, or refuse to acknowledge. A log replaced by another
   * file is one deleted too (most often the background checkpointer's connection, opened after
   * the deletion, made a new empty one): the connection still writes the unlinked one, and the
   * other file, replayed on the database at the next start, could only damage it.
   */
  #checkFileIdentity(): void {
    if (this.#fileMoved()) return this.#recreate(undefined);
    const wal = this.#walMoved();
    if (wal) this.#recreate(wal);
  }

  /** Re-creates the database file from the connection (`wal`: its log was lost, else the file itself), or refuses. */
  #recreate(wal: WalLoss | undefined): void {
    const db = this.#requireDb();
    try {
      this.#restoreFile(db, wal);
    } catch (error) {
      if (error instanceof StorageUnavailableError) throw error;
      const what = wal ? `the database's write-ahead log (${basename(this.#file)}-wal) was ${WAL_LOSSES[wal]}` : 'the database file was deleted';
      // The file system's own words name the server's paths: they go to the log (detail), and
      // clients, /readyz included, are told the kind of fault and what to do.
      const code = (error as NodeJS.ErrnoException).code;
      // The code /readyz shows is why it could not be re-created (EEXIST, EACCES, ENOSPC...):
      // what was lost is in the message; a cause without a code is told by what was lost.
      const fault = storageFault('missing', code ?? (wal ? 'WAL_LOST' : 'ENOENT'), `${what} and cannot be re-created: ${whyNotRecreated(code)}`);
      throw this.#faults.record({ ...fault, detail: error instanceof Error ? error.message : String(error) });
    }
  }

  /**
   * Writes the open connection's database (WAL included: the connection reads the log it has
   * open, deleted or not) to the configured path, then switches to that file. Refuses if another
   * file now sits at the database's path (it may be a restored backup: the operator decides, by
   * restarting). With its log lost (`wal`), the database file is still there and is replaced by
   * the copy, and whatever is at the log's path removed: only by a serving registry, the one
   * process on the file (an import's copy would drop what the registry beside it writes meanwhile).
   */
  #restoreFile(db: Database.Database, wal?: WalLoss): void {
    if (wal && !this.#singleProcess) {
      throw this.#faults.record(
        storageFault('missing', 'WAL_LOST', `the database's write-ahead log (${basename(this.#file)}-wal) was ${WAL_LOSSES[wal]} while this process was writing to it; what it wrote since the last checkpoint went with it`),
      );
    }
    if (!wal && identityOf(this.#file) !== undefined) {
      // Not a serving registry (an import): there is no registry of its to restart, and what it
      // wrote is in the file it had open, wherever that went.
      const replaced = this.#singleProcess
        ? 'the database file was replaced by another file while the registry was running; restart the registry to use it'
        : 'the database file was replaced by another file while this process was writing to it; what it wrote went with the file it had open';
      throw this.#faults.record(storageFault('missing', 'REPLACED', replaced));
    }
    makeDirectories(dirname(this.#file), PRIVATE_DIR_MODE);
    const temporary = `${this.#file}.restoring-${process.pid}`;
    rmSync(temporary, { force: true });
    try {
      db.prepare('VACUUM INTO ?').run(temporary);
      chmodSync(temporary, PRIVATE_FILE_MODE);
      // On disk before it takes the database's place (with the log lost, over a file that holds
      // all but the last commits).
      syncPath(temporary, 'r');
      renameSync(temporary, this.#file);
      syncPath(dirname(this.#file), 'r');
    } catch (error) {
      // A copy that failed half way (often: the disk is full) is no use, and as large as the database.
      rmSync(temporary, { force: true });
      throw error;
    }
    rmSync(`${this.#file}-wal`, { force: true });
    rmSync(`${this.#file}-shm`, { force: true });
    const next = this.#connect();
    // VACUUM INTO writes a file without auto-vacuum: turn it back on (quick on a fresh copy).
    ensureIncrementalAutoVacuum(next);
    if (this.#db === db) this.#db = next;
    this.#identity = identityOf(this.#file);
    this.#walIdentity = identityOf(`${this.#file}-wal`);
    this.#retireWal();
    this.#checkpointer?.reopen();
    db.close();
    if (!wal) this.#notice('the database file was deleted while the registry was running; it was re-created from the open connection', { file: this.#file });
    else this.#notice(`the database's write-ahead log was ${WAL_LOSSES[wal]} while the registry was running; the database was re-created from the open connection, which still read the log it had open`, { file: this.#file, wal: `${this.#file}-wal` });
  }

  async probeWrites(): Promise<boolean> {
    if (!this.#db) return false;
    // The probe's one-page update can still fit in the write-ahead log of a full disk while a
    // registration cannot: a full disk counts as full until it has room for real writes again,
    // otherwise /readyz would flap between ready and not with every refused registration.
    if (this.fault?.reason === 'disk-full' && !this.#hasRoomForWrites()) return false;
    try {
      await this.#write((db) => {
        prepare(db, "UPDATE registry_state SET value = ? WHERE key = 'write_probe'").run(Date.now());
      });
      return true;
    } catch {
      return false;
    }
  }

  #hasRoomForWrites(): boolean {
    try {
      const { bavail, bsize } = statfsSync(dirname(this.#file));
      return bavail * bsize >= MIN_FREE_BYTES_AFTER_DISK_FULL;
    } catch {
      return true; // cannot tell: let the write itself decide
    }
  }

  async ping(): Promise<boolean> {
    try {
      const db = this.#db;
      if (!db) return false;
      db.prepare('SELECT 1').get();
      return true;
    } catch {
      return false;
    }
  }

  #requireDb(): Database.Database {
    if (!this.#db) throw new Error('SqliteStore is not open: call open() first.');
    return this.#db;
  }

  #currentById(db: Database.Database, id: string): StoredEntry | undefined {
    const row = prepare(db, `SELECT ${ENTRY_COLUMNS} FROM ${CURRENT_JOIN} WHERE e.id = ?`).get(id) as
      | EntryRow
      | undefined;
    return row ? rowToEntry(row) : undefined;
  }

  #recordChange(db: Database.Database, entryId: string, op: Change['op'], at: string): number {
    const info = prepare(db, 'INSERT INTO changes (entry_id, op, at) VALUES (?, ?, ?)').run(entryId, op, at);
    const seq = Number(info.lastInsertRowid);
    this.ownChanges.add(seq);
    this.#writes.afterBatch((outcome) => {
      // Refused after its commit, the change is in the database all the same: nothing publishes
      // it (the writer was refused), so it is announced once storage takes writes again, and
      // stays pending until then. Settled at once, a watch stored its position past it before
      // anything had published it, and a crash meanwhile lost its event for good.
      if (outcome === 'refused') {
        this.#unacknowledged.add(entryId);
        this.#unacknowledgedSeqs.push(seq);
        return;
      }
      // Acknowledged: published, so in the index (a saved index may pass it from now on).
      // Rolled back: no such change, and SQLite gives its number to the next change written,
      // maybe by another process (an import): not this process's own any more.
      this.ownChanges.settled(seq, outcome === 'acknowledged');
    });
    return seq;
  }

  #insertRevision(
    db: Database.Database,
    id: string,
    revision: number,
    write: EntryWrite,
    author: string,
    at: string,
  ): void {
    const { verification, verifiedKid } = verificationColumns(write.verification);
    prepare(
      db,
      `INSERT INTO entry_revisions (entry_id, revision, name, description, protocol_version,
         interfaces, document_text, content_hash, author, created_at, origin, verification, verified_kid)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      id,
      revision,
      write.name,
      write.description,
      write.protocolVersion ?? null,
      JSON.stringify(write.interfaces),
      write.documentText,
      write.contentHash,
      author,
      at,
      write.origin ?? 'register',
      verification,
      verifiedKid,
    );
  }

  /** Replaces (or with null removes) the entry's freshness record. */
  #writeFreshness(db: Database.Database, id: string, freshness: FreshnessWrite | null): void {
    if (freshness === null) {
      prepare(db, 'DELETE FROM entry_freshness WHERE entry_id = ?').run(id);
      return;
    }
    prepare(
      db,
      `INSERT OR REPLACE INTO entry_freshness (entry_id, ${FRESHNESS_COLUMNS.join(', ')})
       VALUES (?, ${FRESHNESS_COLUMNS.map(() => '?').join(', ')})`,
    ).run(id, ...freshnessValues(freshness));
  }

  /**
   * Claims `urls` for `owner`: each URL nobody holds becomes theirs. Throws UrlTaken when another
   * principal holds one, before writing anything (so a bulk import's refusal needs no savepoint
   * to undo it). The queue's BEGIN IMMEDIATE serialises writers, so the check cannot race.
   */
  #claimUrls(db: Database.Database, urls: readonly string[], owner: string): void {
    if (urls.length === 0) return;
    // One lookup and one insert per URL (a document names a handful): half the cost of the
    // same through json_each, which every registration paid.
    const holder = prepare(db, 'SELECT owner FROM url_claims WHERE url = ?');
    const holderOf = (url: string) => (holder.get(url) as { owner: string } | undefined)?.owner;
    const heldByOther = (url: string) => {
      const held = holderOf(url);
      return held !== undefined && held !== owner;
    };
    // A URL under a tenant is also taken when another principal holds the URL without one,
    // unless the claimant held it first (before that URL was claimed; see coveringClaims).
    const taken = urls.filter((url) => {
      const held = holderOf(url);
      return held === undefined ? coveringClaims(url).some(heldByOther) : held !== owner;
    });
    if (taken.length > 0) {
      // The first in SQLite's order (bytes of the UTF-8), as one query ordered by url would name.
      const url = taken.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))[0]!;
      throw new UrlTaken(url, heldByOther(url) ? undefined : coveringClaims(url).find(heldByOther));
    }
    const claim = prepare(db, 'INSERT INTO url_claims (url, owner) VALUES (?, ?) ON CONFLICT (url) DO NOTHING');
    for (const url of urls) claim.run(url, owner);
  }

  /** Records that the entry uses `urls` (already claimed). */
  #useUrls(db: Database.Database, entryId: string, urls: readonly string[]): void {
    const use = prepare(db, 'INSERT INTO entry_urls (entry_id, url) VALUES (?, ?) ON CONFLICT DO NOTHING');
    for (const url of urls) use.run(entryId, url);
  }

  /** Makes `urls` the entry's claimed URLs, releasing the claims nobody uses any more. */
  #setEntryUrls(db: Database.Database, entryId: string, urls: readonly string[]): void {
    const list = JSON.stringify(urls);
    const dropped = prepare(db, `DELETE FROM entry_urls WHERE entry_id = ? AND url NOT IN (SELECT value FROM json_each(?)) RETURNING url`).all(entryId, list) as { url: string }[];
    this.#useUrls(db, entryId, urls);
    this.#releaseUrls(db, dropped.map((r) => r.url));
  }

  #releaseUrls(db: Database.Database, urls: readonly string[]): void {
    if (urls.length === 0) return;
    prepare(
      db,
      `DELETE FROM url_claims WHERE url IN (SELECT value FROM json_each(?))
         AND NOT EXISTS (SELECT 1 FROM entry_urls u WHERE u.url = url_claims.url)`,
    ).run(JSON.stringify(urls));
  }

  async upsert(write: EntryWrite, actor: Actor, quota: WriteQuota = {}, acknowledgement?: AcknowledgementRow): Promise<UpsertOutcome> {
    // The queue's transaction is BEGIN IMMEDIATE: the write lock is taken before the lookup,
    // so two processes cannot both see "absent" and race (the UNIQUE constraint would then
    // fail one of them), nor both count an owner's entries and overshoot its quota, nor both
    // claim one URL.
    const outcome = this.#write((db): UpsertOutcome => {
      const step = this.#upsertIn(db, write, actor, quota);
      if (step.status === 'quota-exceeded' || step.status === 'url-taken') return step;
      if (step.status === 'forbidden') return { status: 'forbidden', existing: this.#currentById(db, step.id)! };
      const entry = step.entry ?? this.#currentById(db, step.id)!;
      const accepted: AcceptedUpsert = step.freshened ? { status: step.status, entry, freshened: true } : { status: step.status, entry };
      const row = acknowledgement?.(accepted);
      if (row) saveTaskRowIn(db, row);
      return accepted;
    });
    return outcome.catch((error: unknown) => {
      if (error instanceof UrlTaken) return error.outcome;
      throw error;
    });
  }

  async importEntries(writes: readonly EntryWrite[], actor: Actor, quota: ImportQuota = {}): Promise<ImportOutcome[]> {
    if (writes.length === 0) return [];
    // One transaction and one fsync for the batch, queued alone (no savepoint around it: see
    // write-queue.ts). A refused write leaves nothing behind without a savepoint of its own:
    // #upsertIn refuses (ownership, a taken URL) before it writes anything, except after
    // a freshness record, which imports do not carry (a write that does gets a savepoint).
    //
    // A registry running on the same file waits for the lock this transaction holds
    // (REGISTRY_SQLITE_LOCK_WAIT_MS) and its write fails past that: however large the batch, the
    // transaction ends once it has run for IMPORT_TRANSACTION_MS, with the writes done so far
    // (at least one); the caller passes the rest again.
    return this.#write(
      (db): ImportOutcome[] => {
        const started = performance.now();
        const outcomes: ImportOutcome[] = [];
        for (const write of writes) {
          outcomes.push(this.#importOneIn(db, write, actor, quota));
          if (performance.now() - started >= IMPORT_TRANSACTION_MS) break;
        }
        return outcomes;
      },
      { alone: true },
    );
  }

  /** One write of importEntries, inside its transaction. */
  #importOneIn(db: Database.Database, write: EntryWrite, actor: Actor, quota: ImportQuota): ImportOutcome {
    const guarded = write.freshness !== undefined;
    // Prepared once per connection.
    if (guarded) prepare(db, 'SAVEPOINT import_one').run();
    let outcome: ImportOutcome;
    try {
      const step = this.#upsertIn(db, write, actor, quota);
      // No entry quota (ImportQuota): #upsertIn cannot answer 'quota-exceeded' here.
      if (step.status === 'quota-exceeded') throw new Error('an import was held to an entry quota');
      outcome = step.status === 'url-taken' || step.status === 'forbidden' ? step : { status: step.status, id: step.id };
    } catch (error) {
      // Any other error fails the whole batch (its transaction is rolled back), as it is.
      if (!(error instanceof UrlTaken)) throw error;
      outcome = error.outcome;
    }
    if (guarded) {
      if (outcome.status === 'url-taken') prepare(db, 'ROLLBACK TO import_one').run();
      prepare(db, 'RELEASE import_one').run();
    }
    return outcome;
  }

  /** The document of one revision (read only when a write's hash differs from the stored one). */
  #documentText(db: Database.Database, id: string, revision: number): string {
    return (prepare(db, 'SELECT document_text FROM entry_revisions WHERE entry_id = ? AND revision = ?').get(id, revision) as { document_text: string }).document_text;
  }

  /**
   * The one write path of `upsert` and `importEntries`, inside the caller's transaction: the
   * identity lookup, ownership, quota, URL claims (a refused claim throws UrlTaken: the caller
   * rolls back), the new entry or revision and its change. Reads back only what it must.
   */
  #upsertIn(db: Database.Database, write: EntryWrite, actor: Actor, quota: WriteQuota): UpsertStep {
    type Found = { id: string; owner: string; revision: number; content_hash: string; updated_at: string };
    let found = prepare(
      db,
      `SELECT e.id, e.owner, e.current_revision AS revision, r.content_hash, e.updated_at FROM entries e
         JOIN entry_revisions r ON r.entry_id = e.id AND r.revision = e.current_revision
       WHERE e.kind = ? AND e.identity_url = ?`,
    ).get(write.kind, write.identityUrl) as Found | undefined;
    // Else another spelling of the same endpoint (http for https, ...), in one statement: a new
    // entry (most of a bulk import) looks them all up.
    if (!found && write.identityAliases?.length) {
      found = prepare(
        db,
        `SELECT e.id, e.owner, e.current_revision AS revision, r.content_hash, e.updated_at FROM entries e
           JOIN entry_revisions r ON r.entry_id = e.id AND r.revision = e.current_revision
         WHERE e.kind = ? AND e.identity_url IN (SELECT value FROM json_each(?)) LIMIT 1`,
      ).get(write.kind, JSON.stringify(write.identityAliases)) as Found | undefined;
    }
    const now = new Date().toISOString();

    if (!found) {
      const max = quota.maxEntriesPerOwner;
      if (max !== undefined) {
        // Counted up to the limit only: an owner's count costs what the quota allows, not what the
        // owner holds (an import may give one owner a million entries; a full count took tens of ms).
        const owned = (prepare(db, 'SELECT count(*) AS n FROM (SELECT 1 FROM entries WHERE owner = ? LIMIT ?)').get(actor.principal, max) as { n: number }).n;
        if (owned >= max) return { status: 'quota-exceeded', quota: 'entries', limit: max };
      }
      this.#claimUrls(db, write.urls, actor.principal);
      // Time-ordered (UUIDv7): a new entry's rows go at the end of the id-keyed B-trees (entries,
      // its revisions, its URLs) instead of a random page each, which is most of what a bulk
      // import's inserts cost once the database outgrows the page cache.
      const id = timeOrderedId();
      // The change row comes first so its sequence can double as the entry's list
      // position: monotonic, never reused, newest highest.
      const seq = this.#recordChange(db, id, 'upsert', now);
      prepare(
        db,
        `INSERT INTO entries (id, list_seq, kind, identity_url, owner, current_revision, created_at, updated_at, trust_keyset)
         VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)`,
      ).run(id, seq, write.kind, write.identityUrl, actor.principal, now, now, trustKeyset(write));
      this.#insertRevision(db, id, 1, write, actor.principal, now);
      // A new entry uses no URL yet: nothing to drop or release.
      this.#useUrls(db, id, write.urls);
      if (!write.freshness) return { status: 'created', id, entry: insertedEntry(id, write, actor.principal, now, seq) };
      this.#writeFreshness(db, id, write.freshness);
      return { status: 'created', id };
    }

    if (found.owner !== actor.principal && !actor.isAdmin) return { status: 'forbidden', id: found.id };
    const unchanged = sameDocument(write, found.content_hash, () => this.#documentText(db, found.id, found.revision));
    if (write.freshness !== undefined) {
      const existing = this.#currentById(db, found.id)!;
      const freshness = effectiveFreshness(existing, write.freshness);
      this.#writeFreshness(db, found.id, freshness);
      if (unchanged && freshnessVisiblyChanged(existing, freshness)) {
        this.#recordChange(db, found.id, 'upsert', now);
        return { status: 'unchanged', id: found.id, freshened: true };
      }
    }
    if (unchanged) return { status: 'unchanged', id: found.id };
    // The owner stays as it is: an admin fixing someone's entry does not take it over, and
    // claims its URLs in the owner's name.
    this.#claimUrls(db, write.urls, found.owner);
    const revision = found.revision + 1;
    const revisedAt = revisionTime(found.updated_at).toISOString();
    this.#insertRevision(db, found.id, revision, write, actor.principal, revisedAt);
    this.#setEntryUrls(db, found.id, write.urls);
    // Found under another spelling: the entry takes the one its owner now registers.
    prepare(db, 'UPDATE entries SET current_revision = ?, updated_at = ?, trust_keyset = ?, identity_url = ? WHERE id = ?').run(
      revision,
      revisedAt,
      trustKeyset(write),
      write.identityUrl,
      found.id,
    );
    if (quota.maxRevisions !== undefined) {
      // Older revisions leave the history; the numbering goes on from the current one.
      prepare(db, 'DELETE FROM entry_revisions WHERE entry_id = ? AND revision <= ?').run(found.id, revision - quota.maxRevisions);
    }
    this.#recordChange(db, found.id, 'upsert', now);
    return { status: 'updated', id: found.id };
  }

  async updateVerification(id: string, revision: number, verification: CardVerification, announce: boolean): Promise<StoredEntry | undefined> {
    this.#requireDb();
    if (!isUuid(id)) return undefined;
    id = id.toLowerCase();
    const columns = verificationColumns(verification);
    return this.#write((db): StoredEntry | undefined => {
      const updated = prepare(
        db,
        `UPDATE entry_revisions SET verification = ?, verified_kid = ?
         WHERE entry_id = ? AND revision = ?
           AND revision = (SELECT current_revision FROM entries WHERE id = entry_revisions.entry_id)`,
      ).run(columns.verification, columns.verifiedKid, id, revision).changes;
      if (updated === 0) return undefined;
      prepare(db, 'UPDATE entries SET trust_keyset = ? WHERE id = ?').run(checkedKeyset(verification), id);
      if (announce) this.#recordChange(db, id, 'upsert', new Date().toISOString());
      return this.#currentById(db, id);
    });
  }

  async get(id: string, revision?: number): Promise<StoredEntry | undefined> {
    if (!isUuid(id)) return undefined;
    // Ids are stored lowercase; accept any case, as PostgreSQL's uuid type does.
    const key = id.toLowerCase();
    return this.#read(() => {
      const db = this.#requireDb();
      if (revision === undefined) return this.#currentById(db, key);
      if (!Number.isSafeInteger(revision) || revision < 1) return undefined;
      const row = prepare(db, `SELECT ${ENTRY_COLUMNS} FROM ${REVISION_JOIN} WHERE e.id = ? AND r.revision = ?`).get(key, revision) as
        | EntryRow
        | undefined;
      return row ? rowToEntry(row) : undefined;
    });
  }

  async getMany(ids: readonly string[]): Promise<StoredEntry[]> {
    const keys = ids.filter(isUuid).map((id) => id.toLowerCase());
    if (keys.length === 0) return [];
    return this.#read(() => {
      const rows = prepare(this.#requireDb(), `SELECT ${ENTRY_COLUMNS} FROM ${CURRENT_JOIN} WHERE e.id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(keys)) as EntryRow[];
      return rows.map(rowToEntry);
    });
  }

  async oldestRevision(id: string): Promise<number | undefined> {
    if (!isUuid(id)) return undefined;
    return this.#read(() => {
      const row = prepare(this.#requireDb(), 'SELECT min(revision) AS r FROM entry_revisions WHERE entry_id = ?').get(id.toLowerCase()) as {
        r: number | null;
      };
      return row.r ?? undefined;
    });
  }

  async revisions(id: string, limit: number): Promise<RevisionSummary[]> {
    if (!isUuid(id)) return [];
    // Through #read, as get: a corrupt page met here is the file's damage (recorded: writes
    // refused, not ready), not an internal error that leaves the registry looking healthy.
    const rows = await this.#read(
      () =>
        prepare(
          this.#requireDb(),
          'SELECT revision, created_at FROM entry_revisions WHERE entry_id = ? ORDER BY revision DESC LIMIT ?',
        ).all(id.toLowerCase(), clampLimit(limit)) as { revision: number; created_at: string }[],
    );
    return rows.map((row) => ({ revision: row.revision, updatedAt: row.created_at }));
  }

  async list(query: ListQuery): Promise<ListResult> {
    const limit = clampLimit(query.limit);
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (query.kind !== undefined) {
      where.push('e.kind = ?');
      params.push(query.kind);
    }
    if (query.owner !== undefined) {
      where.push('e.owner = ?');
      params.push(query.owner);
    }
    if (query.health !== undefined) {
      where.push('f.health_status = ?');
      params.push(query.health);
    }
    if (query.verified !== undefined) where.push(query.verified ? 'r.verified_kid IS NOT NULL' : 'r.verified_kid IS NULL');
    if (query.hideUnverifiedAgents) where.push("(e.kind <> 'agent' OR r.verified_kid IS NOT NULL)");
    const keyset = listKeyset(query.orderBy, query.after, (value) => {
      params.push(value);
      return '?';
    }, query.until);
    if (keyset.where) where.push(keyset.where);
    const rows = await this.#read(
      () =>
        prepare(
          this.#requireDb(),
          `SELECT ${ENTRY_COLUMNS} FROM ${CURRENT_JOIN}
           ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
           ORDER BY ${keyset.orderBy} LIMIT ?`,
        ).all(...params, limit + 1) as EntryRow[],
    );
    const page = rows.slice(0, limit);
    const result: ListResult = { entries: page.map(rowToEntry) };
    if (rows.length > limit) result.next = listCursor(query.orderBy, result.entries[limit - 1]!, page[limit - 1]!.list_seq);
    return result;
  }

  async remove(id: string, actor: Actor): Promise<DeleteOutcome> {
    this.#requireDb();
    if (!isUuid(id)) return { status: 'not-found' };
    const key = id.toLowerCase();
    return this.#write((db): DeleteOutcome => {
      const existing = this.#currentById(db, key);
      if (!existing) return { status: 'not-found' };
      if (existing.owner !== actor.principal && !actor.isAdmin) {
        return { status: 'forbidden', existing };
      }
      const urls = prepare(db, 'SELECT url FROM entry_urls WHERE entry_id = ?').all(key) as { url: string }[];
      // entry_revisions and entry_urls go with it (ON DELETE CASCADE).
      prepare(db, 'DELETE FROM entries WHERE id = ?').run(key);
      this.#releaseUrls(db, urls.map((r) => r.url));
      this.#recordChange(db, key, 'delete', new Date().toISOString());
      return { status: 'deleted', entry: existing };
    });
  }

  async *scan(options: ScanOptions = {}): AsyncIterable<StoredEntry> {
    // Keyset batches rather than one `.all()`: memory stays bounded by the batch size, and
    // no read transaction is held open across the consumer's awaits.
    const batchSize = Math.max(1, options.batchSize ?? this.#scanBatchSize);
    const keyset = options.outsideKeyset;
    let after = 0;
    for (;;) {
      const rows = await this.#read(() => {
        const db = this.#requireDb();
        if (keyset === undefined) {
          return prepare(db, `SELECT ${ENTRY_COLUMNS} FROM ${CURRENT_JOIN} WHERE e.list_seq > ? ORDER BY e.list_seq ASC LIMIT ?`).all(after, batchSize) as EntryRow[];
        }
        // The partial index names the entries; only theirs are read (migration 7).
        return prepare(
          db,
          `SELECT ${ENTRY_COLUMNS} FROM ${CURRENT_JOIN}
           WHERE e.trust_keyset IS NOT NULL AND e.trust_keyset <> ? AND e.list_seq > ? ORDER BY e.list_seq ASC LIMIT ?`,
        ).all(keyset, after, batchSize) as EntryRow[];
      });
      for (const row of rows) yield rowToEntry(row);
      if (rows.length < batchSize) return;
      after = rows[rows.length - 1]!.list_seq;
    }
  }

  async count(): Promise<Record<EntryKind, number>> {
    const rows = await this.#read(
      () => prepare(this.#requireDb(), 'SELECT kind, count(*) AS n FROM entries GROUP BY kind').all() as { kind: EntryKind; n: number }[],
    );
    const counts: Record<EntryKind, number> = { agent: 0, 'mcp-server': 0 };
    for (const row of rows) counts[row.kind] = row.n;
    return counts;
  }

  async changesSince(seq: number, limit: number): Promise<Change[]> {
    const rows = await this.#read(
      () =>
        prepare(this.#requireDb(), 'SELECT seq, entry_id, op, at FROM changes WHERE seq > ? ORDER BY seq ASC LIMIT ?').all(
          normalizeSeq(seq),
          clampLimit(limit),
        ) as { seq: number; entry_id: string; op: Change['op']; at: string }[],
    );
    // mark: as changeMark builds it.
    return rows.map((row) => ({ seq: row.seq, id: row.entry_id, op: row.op, mark: `${row.entry_id} ${row.op} ${row.at}` }));
  }

  async lastChangeSeq(): Promise<number> {
    return this.#read(() => readLastChangeSeq(this.#requireDb()));
  }

  async revise(id: string, write: EntryWrite, expectRevision: number, quota: Pick<WriteQuota, 'maxRevisions'> = {}): Promise<ReviseOutcome> {
    if (!isUuid(id)) return { status: 'not-found' };
    id = id.toLowerCase();
    const outcome = this.#write((db): ReviseOutcome => {
      const existing = this.#currentById(db, id);
      if (!existing) return { status: 'not-found' };
      if (existing.revision !== expectRevision) return { status: 'stale', entry: existing };
      if (write.identityUrl !== existing.identityUrl) {
        // Under any spelling of the new identity (identityAliases), as a registration looks it up.
        const other = prepare(db, 'SELECT id FROM entries WHERE kind = ? AND identity_url IN (SELECT value FROM json_each(?)) AND id <> ? LIMIT 1').get(
          write.kind,
          JSON.stringify([write.identityUrl, ...(write.identityAliases ?? [])]),
          id,
        ) as { id: string } | undefined;
        if (other) return { status: 'conflict', existing: this.#currentById(db, other.id)! };
      }
      const now = new Date().toISOString();
      if (write.freshness !== undefined) this.#writeFreshness(db, id, write.freshness);
      if (sameDocument(write, existing.contentHash, () => existing.documentText)) {
        if (write.freshness !== undefined && freshnessVisiblyChanged(existing, write.freshness)) this.#recordChange(db, id, 'upsert', now);
        return { status: 'unchanged', entry: this.#currentById(db, id)! };
      }
      // The fetched document's URLs are claimed for the owner, as a registration's would be.
      this.#claimUrls(db, write.urls, existing.owner);
      const revision = existing.revision + 1;
      const revisedAt = revisionTime(existing.updatedAt).toISOString();
      // The owner writes it: the refresh acts for them, as the source they gave says.
      this.#insertRevision(db, id, revision, { ...write, origin: 'refresh' }, existing.owner, revisedAt);
      this.#setEntryUrls(db, id, write.urls);
      prepare(db, 'UPDATE entries SET current_revision = ?, updated_at = ?, identity_url = ?, trust_keyset = ? WHERE id = ?').run(
        revision,
        revisedAt,
        write.identityUrl,
        trustKeyset(write),
        id,
      );
      if (quota.maxRevisions !== undefined) {
        prepare(db, 'DELETE FROM entry_revisions WHERE entry_id = ? AND revision <= ?').run(id, revision - quota.maxRevisions);
      }
      this.#recordChange(db, id, 'upsert', now);
      return { status: 'updated', entry: this.#currentById(db, id)! };
    });
    return outcome.catch((error: unknown) => {
      if (error instanceof UrlTaken) return error.outcome;
      throw error;
    });
  }

  async recordCheck(id: string, freshness: FreshnessWrite): Promise<CheckOutcome | undefined> {
    if (!isUuid(id)) return undefined;
    id = id.toLowerCase();
    return this.#write((db): CheckOutcome | undefined => {
      const existing = this.#currentById(db, id);
      if (!existing) return undefined;
      this.#writeFreshness(db, id, freshness);
      const logged = freshnessVisiblyChanged(existing, freshness);
      if (logged) this.#recordChange(db, id, 'upsert', new Date().toISOString());
      return { entry: this.#currentById(db, id)!, change: logged ? 'logged' : 'quiet' };
    });
  }

  async claimDue(limit: number, retryAt: string, includeUnsourced: boolean): Promise<string[]> {
    const now = new Date().toISOString();
    // One write transaction (BEGIN IMMEDIATE): another process on the same file waits for it,
    // then sees the claimed rows already moved forward.
    return this.#write((db): string[] => {
      const rows = prepare(
        db,
        `UPDATE entry_freshness SET next_check_at = ?
         WHERE entry_id IN (
           SELECT entry_id FROM entry_freshness
           WHERE next_check_at IS NOT NULL AND next_check_at <= ? AND (source_url IS NOT NULL OR ?)
           ORDER BY next_check_at LIMIT ?)
         RETURNING entry_id`,
      ).all(retryAt, now, includeUnsourced ? 1 : 0, clampLimit(limit)) as { entry_id: string }[];
      return rows.map((r) => r.entry_id);
    });
  }

  async scheduleRefreshes(now: string, latest: string): Promise<number> {
    return this.#write((db): number => {
      const unscheduled = prepare(db, 'UPDATE entry_freshness SET next_check_at = ? WHERE source_url IS NOT NULL AND next_check_at IS NULL').run(now).changes;
      const later = prepare(db, 'UPDATE entry_freshness SET next_check_at = ? WHERE source_url IS NOT NULL AND next_check_at > ?').run(latest, latest).changes;
      return unscheduled + later;
    });
  }

  async scheduleProbes(at: string): Promise<number> {
    return this.#write(
      (db): number =>
        prepare(
          db,
          `INSERT INTO entry_freshness (entry_id, next_check_at)
           SELECT e.id, ? FROM entries e
           WHERE e.kind = 'agent' AND NOT EXISTS (SELECT 1 FROM entry_freshness f WHERE f.entry_id = e.id)`,
        ).run(at).changes,
    );
  }

  async probedWithoutSource(limit: number): Promise<string[]> {
    return this.#read(() =>
      (
        prepare(
          this.#requireDb(),
          'SELECT entry_id FROM entry_freshness WHERE source_url IS NULL AND (health_status IS NOT NULL OR drift IS NOT NULL) LIMIT ?',
        ).all(clampLimit(limit)) as { entry_id: string }[]
      ).map((r) => r.entry_id),
    );
  }

  async changeMark(seq: number): Promise<string | undefined> {
    return this.#read(() => {
      const row = prepare(this.#requireDb(), 'SELECT entry_id, op, at FROM changes WHERE seq = ?').get(normalizeSeq(seq)) as
        | { entry_id: string; op: string; at: string }
        | undefined;
      return row && `${row.entry_id} ${row.op} ${row.at}`;
    });
  }

  async changesTrimmedThrough(): Promise<number> {
    return this.#read(() => {
      const row = prepare(this.#requireDb(), "SELECT value FROM registry_state WHERE key = 'changes_trimmed_through'").get() as
        | { value: number }
        | undefined;
      return row?.value ?? 0;
    });
  }

  async trimChanges(maxAgeMs: number, options: BatchedDeletion = {}): Promise<number> {
    const cutoff = new Date(Date.now() - maxAgeMs).toISOString();
    const bounds = await this.#read(
      () =>
        prepare(
          this.#requireDb(),
          'SELECT (SELECT seq FROM changes WHERE at >= ? ORDER BY seq LIMIT 1) AS young, (SELECT min(seq) FROM changes) AS oldest, (SELECT max(seq) FROM changes) AS newest',
        ).get(cutoff) as TrimBounds,
    );
    // The positions walked along the log (OwnChanges: the saved index's, the watches') pass what
    // is trimmed before it goes: past a trimmed change they cannot tell whose it was, and stayed
    // behind for good (the watches of a registry idle longer than the log is kept, with its saved
    // index off, sent a resync at every restart). Walked to the log's end, every round: the
    // change numbers this process wrote are kept until a walk passes them, and where nothing
    // else walks (no saved index: it is off, or hybrid ranking; no watch active) every number
    // it ever wrote was kept (about 2 MB per 100,000 writes) until a restart.
    if (bounds.newest !== null) await this.ownChanges.publishedThrough(bounds.newest, this);
    const through = trimPoint(bounds);
    if (through === undefined) return 0;
    // Oldest first, a bounded batch per transaction: each holds the write lock, and the event
    // loop, for a moment however long the log has grown. Each batch moves the watermark with it:
    // a reader never finds changes missing below it.
    let removed = 0;
    while (!options.signal?.aborted && !this.#closed) {
      const batch = await this.#write((db) => {
        const top = prepare(db, 'SELECT seq FROM changes WHERE seq <= ? ORDER BY seq LIMIT 1 OFFSET ?').get(through, SQLITE_DELETE_BATCH_ROWS - 1) as
          | { seq: number }
          | undefined;
        const upTo = top?.seq ?? through;
        const deleted = prepare(db, 'DELETE FROM changes WHERE seq <= ?').run(upTo).changes;
        prepare(db, "UPDATE registry_state SET value = max(value, ?) WHERE key = 'changes_trimmed_through'").run(upTo);
        return { deleted, last: upTo === through };
      }, { alone: true });
      removed += batch.deleted;
      if (batch.deleted > 0) options.progress?.(removed);
      if (batch.last) break;
    }
    return removed;
  }

  async reclaimSpace(options: Pick<BatchedDeletion, 'signal'> = {}): Promise<void> {
    // Free pages go back to the file system (auto_vacuum is INCREMENTAL), then the WAL is folded
    // into the file and cut back, so the file shrinks now rather than at the next restart. A few
    // pages per transaction: each page freed moves one from the file's end, and all of a large
    // prune's pages at once held the event loop for most of a minute (400 MB of pruned tasks).
    while (!options.signal?.aborted && !this.#closed) {
      const left = await this.#write((db): number => {
        db.exec(`PRAGMA incremental_vacuum(${RECLAIM_BATCH_PAGES})`);
        return db.pragma('freelist_count', { simple: true }) as number;
      }, { alone: true });
      if (left === 0) break;
    }
    await this.#read(() => this.#requireDb().pragma('wal_checkpoint(TRUNCATE)'));
  }
}

/** How the write-ahead log the connection writes left its path, and in words. */
type WalLoss = 'deleted' | 'replaced';
const WAL_LOSSES: Record<WalLoss, string> = { deleted: 'deleted', replaced: 'replaced by another file (removed)' };

/** Why the database file could not be written again where it was, by the file system's error code, without the path it names. */
function whyNotRecreated(code: string | undefined): string {
  switch (code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return 'the disk holding the data directory is full (or its quota spent); free space there';
    case 'EROFS':
      return 'the file system holding the data directory is read-only; make it writable';
    case 'EACCES':
    case 'EPERM':
      return "the registry's user may not write its data directory; give it back its permissions";
    case 'ENOTDIR':
    case 'EEXIST':
      return 'something other than a directory is where its data directory was; move it away';
    case 'ENOENT':
      return 'its data directory cannot be made again (a directory above it is gone); restore it';
    default:
      return `the file system refused it (${code ?? 'an I/O error'}); the operator finds the cause in the log`;
  }
}

interface FileIdentity {
  dev: number;
  ino: number;
}

/** The device and inode at `file`, or undefined when nothing is there (or its directory is not one). */
function identityOf(file: string): FileIdentity | undefined {
  try {
    const stats = statSync(file, { throwIfNoEntry: false });
    return stats ? { dev: stats.dev, ino: stats.ino } : undefined;
  } catch {
    return undefined;
  }
}

/** A failed fsync of the WAL, named as SQLite names its own (SQLITE_IOERR_FSYNC), so that fault handling classifies it. */
function walSyncError(error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  return Object.assign(new Error(`could not fsync the write-ahead log: ${message}`, { cause: error }), { code: 'SQLITE_IOERR_FSYNC' });
}
