/**
 * Group commit for one better-sqlite3 connection.
 *
 * With synchronous=FULL every COMMIT fsyncs the WAL, and better-sqlite3 does it on the event
 * loop: one transaction per write caps the whole process at a few hundred writes per second
 * and stalls every other request during each fsync. So writes are queued instead, and all the
 * jobs queued in one turn of the event loop (up to `maxBatchSize`) run in ONE
 * `BEGIN IMMEDIATE … COMMIT`: one fsync for the batch.
 *
 * - Durability is unchanged: a job's promise settles only after the COMMIT returned, so a
 *   resolved write is committed and synced, exactly as before.
 * - Jobs are synchronous and run one after another, in arrival order, inside the batch: two
 *   conflicting jobs (a create then an update of the same entry) see each other's writes, as
 *   if they had been separate transactions.
 * - Each job runs in its own SAVEPOINT, so a job that throws rolls back its own writes only
 *   and rejects alone; the others in the batch still commit.
 * - If the batch as a whole fails (BEGIN or COMMIT fails, or an error such as SQLITE_FULL makes
 *   SQLite abandon the transaction), nothing of it was committed and every job rejects.
 * - `beforeBegin` runs before BEGIN: it may refuse the batch (throw) before anything of it is
 *   written, e.g. when the database file was deleted and cannot be re-created. A write refused
 *   then has no effect at all, so its refusal can say so.
 * - `beforeAcknowledge` runs after COMMIT and before any promise settles: it may refuse to
 *   acknowledge the batch (throw), e.g. when the database file was deleted under the connection
 *   (between `beforeBegin` and COMMIT) and the commit went to an unlinked inode.
 * - A batch refused after its COMMIT (by `beforeAcknowledge`, or a failed sync) rejects every
 *   job, yet the connection holds what they wrote (and a re-created file, or the next sync, may
 *   keep it): each job rejects with `refusedAfterCommit`'s error, which says so. A job that must
 *   know what became of its batch registers a callback with `afterBatch`: it is told once, when
 *   the batch is acknowledged (before its promises settle), refused after its commit, or rolled
 *   back (a job that failed in its savepoint: at once).
 * - With a `sync` (the connection runs with synchronous=NORMAL: COMMIT writes the WAL but does
 *   not fsync it), the fsync happens off the event loop: a committed batch settles only once a
 *   sync that started after its COMMIT has finished. One sync runs at a time, and every batch
 *   committed meanwhile waits for the next one (group commit across batches), so requests keep
 *   being served during the fsync instead of the whole process stalling for it. `flush` syncs
 *   synchronously. A failed sync rejects every batch it covered (not acknowledged).
 * - And since a job queued while a sync runs is acknowledged after the next sync at the
 *   earliest, it waits for the running sync to end before it runs: then everything queued
 *   meanwhile runs in ONE transaction, right before that next sync starts. Acknowledged no later
 *   than before, in fewer, larger transactions: the pages all the jobs touch (the tables' last
 *   pages, the indexes' shared ones) are written to the WAL once for the lot instead of once per
 *   turn of the event loop, with one BEGIN and COMMIT.
 *
 * - A job queued `alone` (a bulk import's batch of documents) is a transaction of its own, without
 *   the savepoint: a savepoint makes SQLite copy every page the job touches first into a
 *   statement journal (kept in memory: the store sets temp_store=MEMORY, as a file it doubled
 *   the write system calls), for a job of hundreds of documents megabytes held for nothing. If
 *   such a job throws, its transaction is rolled back (the job rejects alone: no other job
 *   shares it).
 *
 * - Another process's write lock (`a2a-registry import` beside a running registry): BEGIN fails
 *   with SQLITE_BUSY at once (the connection's busy timeout is near zero: SQLite's busy handler
 *   waits synchronously, and a registry waiting in it answered nothing, not even /healthz, for
 *   as long as the import's transaction lasted). With `lockWaitMs` the batch goes back to the
 *   head of the queue and BEGIN is tried again every few milliseconds from a timer, the event
 *   loop free meanwhile, until it gets the lock or `lockWaitMs` has passed (then its jobs reject
 *   with the SQLITE_BUSY error). With `yieldLockMs` (the import's side) the next transaction
 *   waits that long after a job queued `alone` committed, so that the other process's retries
 *   find the lock free between two long transactions instead of starving behind them.
 *
 * Reads do not go through the queue: a batch runs synchronously from BEGIN to COMMIT, so no
 * other query on the connection can see it half done, and WAL readers see the last commit.
 */
import type Database from 'better-sqlite3';
import { prepare } from './statements.js';

/** A unit of work run inside the batch's transaction; must be synchronous. */
export type WriteJob<T> = (db: Database.Database) => T;

interface Queued {
  job: WriteJob<unknown>;
  /** Its own transaction, without a savepoint (see above). */
  alone: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Makes what the connection committed durable (fsync of the WAL), for a connection with synchronous=NORMAL. */
export interface DurableSync {
  /** Off the event loop. */
  later(): Promise<void>;
  /** At once (closing). */
  now(): void;
}

export interface WriteQueueOptions {
  /** Before BEGIN, on the connection the batch will use (it may replace it): throwing refuses the batch, nothing written. */
  beforeBegin?: () => void;
  beforeAcknowledge?: (db: Database.Database) => void;
  /** The error a batch refused after its COMMIT rejects its jobs with (its writes may be kept: see above); by default the cause itself. */
  refusedAfterCommit?: (error: unknown) => unknown;
  /** Without it, COMMIT itself must be durable (synchronous=FULL). */
  sync?: DurableSync;
  /** How long a batch waits, off the event loop, for another process's write lock (see above); without it BUSY fails the batch. */
  lockWaitMs?: number;
  /** A pause after each `alone` job's transaction, leaving the lock to other processes (see above). */
  yieldLockMs?: number;
}

/** The first and the longest pause between two tries of BEGIN while another process holds the write lock. */
const LOCK_RETRY_FIRST_MS = 2;
const LOCK_RETRY_MAX_MS = 10;

/** SQLITE_BUSY and its extended codes: another connection holds a lock this one needs. */
const isBusy = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
};

/** A committed batch waiting for its sync: settles its jobs, or rejects them all. */
interface Committed {
  settle(): void;
  fail(error: unknown): void;
}

/** What became of a batch (see afterBatch). */
export type BatchOutcome = 'acknowledged' | 'refused' | 'rolled-back';

/** Tells the callbacks a batch's jobs registered with `afterBatch` what became of it. */
function tell(callbacks: readonly ((outcome: BatchOutcome) => void)[], outcome: BatchOutcome): void {
  for (const callback of callbacks) callback(outcome);
}

export class WriteQueue {
  readonly #connection: () => Database.Database;
  readonly #maxBatchSize: number;
  readonly #beforeBegin: (() => void) | undefined;
  readonly #beforeAcknowledge: ((db: Database.Database) => void) | undefined;
  readonly #refusedAfterCommit: (error: unknown) => unknown;
  readonly #sync: DurableSync | undefined;
  #pending: Queued[] = [];
  #scheduled: NodeJS.Immediate | undefined;
  /** Committed batches no sync has covered yet. */
  #unsynced: Committed[] = [];
  /** The batches the running sync covers (undefined when none runs). */
  #syncing: Committed[] | undefined;
  /** While a batch runs: who its jobs asked to tell what became of it (afterBatch). */
  #told: ((outcome: BatchOutcome) => void)[] | undefined;
  readonly #lockWaitMs: number | undefined;
  readonly #yieldLockMs: number;
  /** The timer of the next try for the write lock, or of the end of a pause leaving it to others; nothing commits before it fires. */
  #paused: NodeJS.Timeout | undefined;
  /** Since when BEGIN has found the lock taken, and how many times in a row. */
  #lockedSince: number | undefined;
  #lockedTries = 0;
  /** Closing: flush waits for the lock synchronously (the store raises the busy timeout). */
  #flushing = false;

  constructor(connection: () => Database.Database, maxBatchSize = 128, options: WriteQueueOptions = {}) {
    this.#connection = connection;
    this.#maxBatchSize = Math.max(1, maxBatchSize);
    this.#beforeBegin = options.beforeBegin;
    this.#beforeAcknowledge = options.beforeAcknowledge;
    this.#refusedAfterCommit = options.refusedAfterCommit ?? ((error) => error);
    this.#sync = options.sync;
    this.#lockWaitMs = options.lockWaitMs;
    this.#yieldLockMs = options.yieldLockMs ?? 0;
  }

  /**
   * Queues `job`; resolves with its result once the transaction that ran it has committed.
   * `alone`: the job is a transaction of its own, without a savepoint (a large job: see above).
   */
  run<T>(job: WriteJob<T>, options: { alone?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ job, alone: options.alone === true, resolve: resolve as (value: unknown) => void, reject });
      // While a sync runs, the job waits for its end (see above); while the queue is paused, for the timer.
      if (this.#syncing || this.#paused) return;
      // setImmediate, not a microtask: it runs after the current I/O callbacks, so every
      // request that arrived in this turn of the event loop joins the same batch.
      this.#scheduled ??= setImmediate(() => this.#flushBatch());
    });
  }

  /**
   * Called from inside a job: `callback` is told once what became of the job's batch (see
   * above): acknowledged, refused after its commit (the write is in the database although its
   * promise rejected), or rolled back. Outside a job it does nothing.
   */
  afterBatch(callback: (outcome: BatchOutcome) => void): void {
    this.#told?.push(callback);
  }

  /** Commits everything queued now, synchronously (before closing the connection). */
  flush(): void {
    if (this.#scheduled) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    clearTimeout(this.#paused);
    this.#paused = undefined;
    this.#flushing = true;
    while (this.#pending.length > 0) this.#commit(this.#nextBatch());
    // Everything committed is made durable now, including what the running sync covers (its
    // late completion then settles nothing twice: a promise settles once).
    const waiting = [...(this.#syncing ?? []), ...this.#unsynced.splice(0)];
    if (!this.#sync || waiting.length === 0) return;
    try {
      this.#sync.now();
    } catch (error) {
      const refused = this.#refusedAfterCommit(error);
      for (const batch of waiting) batch.fail(refused);
      return;
    }
    for (const batch of waiting) batch.settle();
  }

  #flushBatch(): void {
    this.#scheduled = undefined;
    this.#commit(this.#nextBatch());
    // Beyond the cap, the rest waits for the next turn, so other requests get the loop in
    // between (and new arrivals join them).
    if (this.#pending.length > 0 && !this.#paused) this.#scheduled = setImmediate(() => this.#flushBatch());
  }

  /** Nothing commits for `ms`; then what is queued does (unless a sync runs: its end does that). */
  #pause(ms: number): void {
    this.#paused = setTimeout(() => {
      this.#paused = undefined;
      if (this.#pending.length > 0 && !this.#syncing && !this.#scheduled) this.#flushBatch();
    }, ms);
  }

  /**
   * BEGIN found another process's write lock: the batch goes back to the head of the queue and
   * is tried again from a timer. False when it must fail instead (no waiting configured, waited
   * long enough, or closing).
   */
  #waitForLock(batch: Queued[], error: unknown): boolean {
    if (this.#lockWaitMs === undefined || this.#flushing || !isBusy(error)) return false;
    // The wait on the monotonic clock: on the wall clock, a step forward (NTP) while another
    // process held the lock failed the write at its next try, however short the wait had been.
    const now = performance.now();
    this.#lockedSince ??= now;
    if (now - this.#lockedSince >= this.#lockWaitMs) {
      this.#lockedSince = undefined;
      this.#lockedTries = 0;
      return false;
    }
    this.#pending.unshift(...batch);
    this.#pause(Math.min(LOCK_RETRY_MAX_MS, LOCK_RETRY_FIRST_MS * 2 ** this.#lockedTries++));
    return true;
  }

  /** The jobs of the next transaction, in arrival order: up to the cap, a job queued `alone` on its own. */
  #nextBatch(): Queued[] {
    const alone = this.#pending.findIndex((queued) => queued.alone);
    if (alone === 0) return this.#pending.splice(0, 1);
    return this.#pending.splice(0, Math.min(this.#maxBatchSize, alone === -1 ? Infinity : alone));
  }

  #commit(batch: Queued[]): void {
    const outcomes: Outcome[] = [];
    let db: Database.Database | undefined;
    const told: ((outcome: BatchOutcome) => void)[] = [];
    let committedAt = false;
    this.#told = told;
    try {
      this.#beforeBegin?.();
      db = this.#connection();
      // IMMEDIATE takes the write lock before the first read, so each job's read-check-write
      // (e.g. upsert's "does this identity exist?") cannot race another process.
      try {
        control(db, 'BEGIN IMMEDIATE');
      } catch (error) {
        this.#told = undefined;
        if (this.#waitForLock(batch, error)) return;
        throw error;
      }
      this.#lockedSince = undefined;
      this.#lockedTries = 0;
      if (batch.length === 1 && batch[0]!.alone) {
        const outcome = runAlone(db, batch[0]!.job);
        // A failed job alone: its transaction is rolled back (nothing else shares it) and it rejects.
        if (!outcome.ok) {
          this.#told = undefined;
          if (db.inTransaction) control(db, 'ROLLBACK');
          batch[0]!.reject(outcome.error);
          tell(told, 'rolled-back');
          return;
        }
        outcomes.push(outcome);
        if (this.#yieldLockMs > 0 && !this.#flushing) this.#pause(this.#yieldLockMs);
      } else {
        for (const { job } of batch) {
          const from = told.length;
          const outcome = runInSavepoint(db, job);
          // Its savepoint rolled back, a failed job's writes are not part of the batch: those it
          // asked to tell hear so now (its change numbers may go to the next job, or to another process).
          if (!outcome.ok) tell(told.splice(from), 'rolled-back');
          outcomes.push(outcome);
        }
      }
      this.#told = undefined;
      control(db, 'COMMIT');
      committedAt = true;
      this.#beforeAcknowledge?.(db);
    } catch (error) {
      this.#told = undefined;
      // Not acknowledged: every job fails, including those that succeeded. Before COMMIT nothing
      // of the batch is in the database; after it, what it wrote is, unacknowledged.
      try {
        if (db?.inTransaction) control(db, 'ROLLBACK');
      } catch {
        // The connection is unusable; the original error says why.
      }
      const refusal = committedAt ? this.#refusedAfterCommit(error) : error;
      for (const { reject } of batch) reject(refusal);
      tell(told, committedAt ? 'refused' : 'rolled-back');
      return;
    }
    // Settled once: a flush (closing) settles the batches a running sync covers, and that sync's
    // late completion must not tell their jobs' callbacks again.
    let settled = false;
    const committed: Committed = {
      settle: () => {
        if (settled) return;
        settled = true;
        tell(told, 'acknowledged');
        batch.forEach(({ resolve, reject }, i) => {
          const outcome = outcomes[i]!;
          if (outcome.ok) resolve(outcome.value);
          else reject(outcome.error);
        });
      },
      fail: (error) => {
        if (settled) return;
        settled = true;
        batch.forEach(({ reject }) => reject(error));
        tell(told, 'refused');
      },
    };
    if (!this.#sync) return committed.settle();
    this.#unsynced.push(committed);
    this.#startSync(this.#sync);
  }

  /** Starts a sync covering every batch committed so far, unless one runs (then the next one will). */
  #startSync(sync: DurableSync): void {
    if (this.#syncing || this.#unsynced.length === 0) return;
    const covered = this.#unsynced.splice(0);
    this.#syncing = covered;
    sync.later().then(
      () => covered.forEach((batch) => batch.settle()),
      (error: unknown) => {
        const refused = this.#refusedAfterCommit(error);
        covered.forEach((batch) => batch.fail(refused));
      },
    ).finally(() => {
      this.#syncing = undefined;
      // What was queued during the sync commits now, and its commit starts the next sync.
      if (this.#pending.length > 0 && !this.#scheduled && !this.#paused) this.#flushBatch();
      this.#startSync(sync);
    });
  }
}

/**
 * Runs a transaction-control statement (BEGIN, COMMIT, SAVEPOINT...) compiled once per
 * connection: `db.exec` parses it anew every time, and every job pays for two of them
 * (SAVEPOINT, RELEASE) and every batch for two more.
 */
function control(db: Database.Database, sql: string): void {
  prepare(db, sql).run();
}

/** Runs a job that is its transaction's only one; its error is its outcome. */
function runAlone(db: Database.Database, job: WriteJob<unknown>): Outcome {
  try {
    const value = job(db);
    if (value instanceof Promise) throw new TypeError('A write job must be synchronous.');
    return { ok: true, value };
  } catch (error) {
    return { ok: false, error };
  }
}

/**
 * Runs one job in a savepoint. A job error is its own outcome; an error that leaves the
 * transaction unusable (SQLite rolled it back, or the savepoint cannot be undone) is thrown so
 * that the whole batch fails.
 */
function runInSavepoint(db: Database.Database, job: WriteJob<unknown>): Outcome {
  control(db, 'SAVEPOINT job');
  let outcome: Outcome;
  try {
    const value = job(db);
    // An async job would write after COMMIT, outside any transaction: refuse it.
    if (value instanceof Promise) throw new TypeError('A write job must be synchronous.');
    outcome = { ok: true, value };
  } catch (error) {
    if (!db.inTransaction) throw error;
    control(db, 'ROLLBACK TO job');
    outcome = { ok: false, error };
  }
  control(db, 'RELEASE job');
  return outcome;
}
