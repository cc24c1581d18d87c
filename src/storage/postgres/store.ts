/**
 * The scaled-out store: PostgreSQL shared by any number of registry replicas.
 *
 * Every write is one transaction on one pooled connection. A resolved write has committed,
 * and PostgreSQL's COMMIT returns only after the WAL is flushed (synchronous_commit, checked
 * at open). Concurrency between replicas is settled by the database, never by process memory:
 * see `upsert` for the per-identity protocol and `registry_record_change` (migrations.ts) for
 * why change sequences follow commit order.
 */
import pg from 'pg';
import type { EntryKind, RevisionSummary } from '../../contract/types.js';
import type { CardVerification } from '../../contract/verification.js';
import { timeOrderedId } from '../../lib/time-ordered-id.js';
import { claimKey, claimsToCheck, coveringClaims } from '../../lib/endpoint-url.js';
import type {
  AcknowledgementRow,
  Actor,
  BatchedDeletion,
  Change,
  ChangeSubscription,
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
} from '../types.js';
import {
  CURRENT_JOIN,
  ENTRY_COLUMNS,
  FRESHNESS_COLUMNS,
  REVISION_JOIN,
  effectiveFreshness,
  freshnessValues,
  freshnessVisiblyChanged,
  clampLimit,
  listCursor,
  listKeyset,
  insertedEntry,
  isEntryKind,
  isUuid,
  normalizeSeq,
  rowToEntry,
  verificationColumns,
  sameDocument,
  trustKeyset,
  checkedKeyset,
  type EntryRowFields,
  DELETE_BATCH_ROWS,
  UnstorableTextError,
  revisionTime,
} from '../common.js';
import { FaultState, StorageUnavailableError, loginRefusal, lostConnection, postgresFault, type StorageFault } from '../faults.js';
import { CHANGE_LOCK_KEY, OWNER_LOCK_NAMESPACE, migratePostgres, quoteIdentifier } from './migrations.js';
import { listenForChanges, listenOn, type ChangeListener } from './listen.js';
import { PostgresTaskRecords, saveTaskRowIn } from './task-records.js';
import { PostgresWatchRecords } from './watch-records.js';
import { withoutPassword } from '../../lib/url-password.js';
import { rewindWatchesIfRestored } from './restore-marker.js';
import { holdReplicaPresence } from './presence.js';
import { refuseUnstorable, statementsOf, unstorable, type Statements } from './text-values.js';
import { withoutRowData } from './row-data.js';
import { DEFAULT_POSTGRES_STATEMENT_TIMEOUT_MS } from '../setting-defaults.js';
import { within } from '../../lib/within.js';

export interface PostgresStoreOptions {
  /** postgres:// or postgresql:// connection URL. */
  url: string;
  /** Connections per process (default 10). Mind max_connections × replicas. */
  poolMax?: number;
  /** Rows per batch in `scan()`. */
  scanBatchSize?: number;
  /** Server-side limit for one statement (ms, default DEFAULT_POSTGRES_STATEMENT_TIMEOUT_MS). */
  statementTimeoutMs?: number;
  /** How long opening a connection may take before the database counts as unreachable (ms, default 5 s). */
  connectTimeoutMs?: number;
  /** Told when a pooled connection breaks (it is replaced by itself); e.g. to log it. */
  onConnectionError?: (error: Error) => void;
  /** Told about what the store did by itself (e.g. rewound the watches of a restored database). */
  notice?: (message: string, details: Record<string, unknown>) => void;
}

interface EntryRow extends EntryRowFields {
  list_seq: string;
}

/**
 * How often `upsert` retries when the entry it found vanished (deleted) before it locked it, a
 * URL claim it saw was released before it locked it, or PostgreSQL broke a deadlock between
 * claims by failing it.
 */
const MAX_UPSERT_ATTEMPTS = 5;
/** SQLSTATEs after which a transaction may simply be run again. */
const RETRYABLE = new Set(['40P01', '40001']);

/**
 * Whether the session a statement failed on with `error` is usable again (once ROLLBACK succeeds
 * on it, inside a transaction): only after an SQL error a live server answered (a deadlock, a
 * serialization failure, a statement or lock timeout, a constraint), which ends the statement
 * (and aborts its transaction) and nothing more. A lost connection (a socket error, class 08,
 * 57P0x: the server shut the session down, a FATAL), the client's own query timeout (the
 * statement may still run) or anything else is in doubt: that connection is discarded.
 */
function sessionSurvives(error: unknown): boolean {
  if (!(error instanceof pg.DatabaseError) || error.code === undefined || !/^[0-9A-Z]{5}$/.test(error.code)) return false;
  if (error.severity === 'FATAL' || error.severity === 'PANIC') return false;
  return !error.code.startsWith('08') && !error.code.startsWith('57P');
}

/** Thrown inside `#transaction` to roll back and still resolve (with `value`). */
class Rollback<T> {
  constructor(readonly value: T) {}
}
/** An upsert's outcome as a bulk import reports it (the entry's id, not the entry). */
function importOutcome(outcome: UpsertOutcome): ImportOutcome {
  if (outcome.status === 'forbidden') return { status: 'forbidden', id: outcome.existing.id };
  // No entry quota (ImportQuota): an import's upsert cannot answer 'quota-exceeded'.
  if (outcome.status === 'quota-exceeded') throw new Error('an import was held to an entry quota');
  if (outcome.status === 'url-taken') return outcome;
  return { status: outcome.status, id: outcome.entry.id };
}
const PING_TIMEOUT_MS = 3000;
/** How long the write probe waits for the change-log lock, which a change holds for milliseconds. */
const PROBE_LOCK_TIMEOUT_MS = 1000;
/** pg-pool's error when no connection became free (or could be opened) within connectionTimeoutMillis. */
const POOL_WAIT_TIMEOUT = /timeout exceeded when trying to connect/i;
/** pg-pool's error when the new connection it opened for a request did not open within connectionTimeoutMillis. */
const NEW_CONNECTION_TIMEOUT = /Connection terminated due to connection timeout/i;

/**
 * What became of a request's work when the connection it ran on was lost (see lostConnection):
 * a read, or a transaction before its COMMIT was sent (the server rolls back a transaction whose
 * session ends), changed nothing; a statement on its own, or a COMMIT sent and not answered, may
 * have taken effect or not.
 */
const NOTHING_WRITTEN = 'nothing was written: send the request again';
const ROLLED_BACK = 'the write was rolled back, nothing was written: send the request again';
const MAY_HAVE_COMMITTED = 'the write was being committed, and may have been stored or not: read it back (get, GetTask) before sending it again';
const MAY_HAVE_RUN = 'its statement may have taken effect or not: read back what it changes before sending it again';

/** The URL without its password, for error messages. */
const redact = (url: string): string => withoutPassword(url) ?? 'the configured PostgreSQL database';

/** Statements in a transaction, or on the pool: each has its parameters checked first (text-values.ts). */
type Queryable = Statements;

export class PostgresStore implements RegistryStore {
  readonly engine = 'postgres';
  readonly tasks: TaskRecords;
  readonly watches: WatchRecords;

  readonly #url: string;
  readonly #notice: NonNullable<PostgresStoreOptions['notice']>;
  readonly #pool: pg.Pool;
  /** The health checks' connection, apart from the requests' (see the constructor). */
  readonly #probePool: pg.Pool;
  readonly #scanBatchSize: number;
  readonly #poolMax: number;
  readonly #connectTimeoutMs: number;
  /** The longest a request waits for a busy pool (see #connect). */
  readonly #contentionWaitMs: number;
  readonly #faults = new FaultState(postgresFault);
  /** The transactions (their statements) that took the change-log lock: see #transaction's commit. */
  readonly #changeLocked = new WeakSet<Queryable>();
  /** Told when a write transaction recorded its change (reportChangesRecorded). */
  #changeRecorded: (() => void) | undefined;
  readonly #onConnectionError: (error: Error) => void;
  #opened = false;
  #closed = false;
  /** Open change subscriptions, closed with the store so none outlives it. */
  readonly #subscriptions = new Set<ChangeSubscription>();

  constructor(options: PostgresStoreOptions) {
    this.#url = options.url;
    this.#notice = options.notice ?? (() => undefined);
    this.#scanBatchSize = Math.max(1, options.scanBatchSize ?? 500);
    this.#poolMax = options.poolMax ?? 10;
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 5000;
    const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_POSTGRES_STATEMENT_TIMEOUT_MS;
    this.#contentionWaitMs = 2 * (statementTimeoutMs + 5000);
    const connection: pg.PoolConfig = {
      connectionString: options.url,
      // Fail a request quickly when the database is unreachable instead of queueing forever.
      connectionTimeoutMillis: this.#connectTimeoutMs,
      // Give idle connections back, so replicas × pool size does not pin max_connections.
      idleTimeoutMillis: 30_000,
      // A runaway query must not hold a connection (and locks) indefinitely...
      statement_timeout: statementTimeoutMs,
      // ...nor a client that died mid-transaction keep its row locks.
      idle_in_transaction_session_timeout: 30_000,
      // Client-side backstop when the server cannot even answer (network partition).
      query_timeout: statementTimeoutMs + 5000,
      // Notice half-open connections after a failover instead of waiting on them.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      application_name: 'a2a-registry',
    };
    this.#pool = new pg.Pool({ ...connection, max: this.#poolMax });
    // The health checks' own connection (ping, probeWrites): in the requests' pool they waited
    // behind every request for a connection, so a pool kept busy by slow statements (writes
    // waiting for a lock, a burst of them) made /readyz say "storage is unreachable" after the
    // ping's 3 s, on every replica alike, and a load balancer took them all out of rotation,
    // searches (answered from the index) included, while the database answered at once.
    this.#probePool = new pg.Pool({ ...connection, max: 1 });
    // An idle client whose connection drops (database restart, failover) emits 'error' on
    // the pool; without a listener Node would crash the process. The pool already discards
    // that client and opens fresh connections on demand, which is how we recover by ourselves.
    const onConnectionError = options.onConnectionError ?? (() => undefined);
    this.#onConnectionError = onConnectionError;
    for (const pool of [this.#pool, this.#probePool]) {
      pool.on('error', (error) => onConnectionError(error));
      // A connection that drops while checked out (a query in flight when the server restarts)
      // makes pg emit 'error' on that client, and pg-pool listens only on idle ones: the
      // emit would be an uncaught exception. The failed query already rejects, and the client,
      // now marked unusable, is discarded on release; this listener only absorbs the echo.
      // Registered per connection, so it covers every checkout.
      pool.on('connect', (client) => {
        client.on('error', (error) => onConnectionError(error));
      });
    }
    this.tasks = new PostgresTaskRecords(
      (text, params) => this.#query(text, params),
      (fn) => this.#transaction(fn),
      (text, params) => this.#read(text, params),
    );
    this.watches = new PostgresWatchRecords(
      (text, params) => this.#query(text, params),
      (fn) => this.#transaction(fn),
      (channel, onPayload, onError) => this.#listen(() => listenOn(this.#url, channel, onPayload, { onError })),
      (text, params) => this.#read(text, params),
    );
  }

  get fault(): StorageFault | undefined {
    return this.#faults.current;
  }

  /**
   * One statement on the pool; an unreachable or broken database comes back as a named fault.
   * `read`: it changes nothing, so when the connection it ran on is lost under it (the server
   * ended that session: pg_terminate_backend, a pooler or failover dropping connections), it
   * runs once more on a fresh one. Before, the request was refused as if the database could not
   * be reached, while any other connection would have answered it.
   */
  async #query<R extends pg.QueryResultRow>(text: string, params: unknown[] = [], read = false): Promise<pg.QueryResult<R>> {
    refuseUnstorable(params);
    for (let attempt = 1; ; attempt++) {
      const client = await this.#checkout();
      let failure: Error | undefined;
      try {
        return await client.query<R>(text, params);
      } catch (error) {
        failure = error instanceof Error ? error : new Error(String(error));
        if (read && attempt === 1 && lostConnection(error, NOTHING_WRITTEN)) continue;
        throw this.#failed(error, read ? NOTHING_WRITTEN : MAY_HAVE_RUN, read);
      } finally {
        // A connection lost or in doubt after its statement failed is discarded; one whose
        // statement the server refused (a lock or statement timeout, a constraint) serves on:
        // discarding it too (as pool.query does) made the next request open a new one.
        client.release(failure && !sessionSurvives(failure) ? failure : undefined);
      }
    }
  }

  /** A statement that only reads (see #query): run again on a fresh connection when its own is lost under it. */
  #read<R extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    return this.#query<R>(text, params, true);
  }

  /**
   * A pooled connection for a statement or a transaction (#connect; `pool`: the probes' own,
   * where nothing queues for long); one that cannot be had is a named fault.
   */
  async #checkout(pool?: pg.Pool): Promise<pg.PoolClient> {
    try {
      return await (pool ? pool.connect() : this.#connect());
    } catch (error) {
      throw this.#faults.wrap(error);
    }
  }

  /**
   * A pooled connection. pg-pool applies connectionTimeoutMillis both to opening a connection
   * and to waiting in its queue for a busy one, so under contention (many writes waiting on one
   * owner's lock or one entry's row, every connection checked out) a request would time out as
   * if the database were unreachable: answered "Internal error" or "storage unavailable", and
   * /readyz would turn not ready. A wait that timed out while every connection was open and
   * busy is contention: keep waiting (bounded by two statement timeouts, which bound how long a
   * connection can stay busy). A timeout with room for another connection is the database not
   * answering, and stays an error, unless a connection stands idle: pg-pool binds a request to
   * the new connection it opens for it, and does not hand it one that is freed meanwhile, so a
   * new connection slow to open (a loaded host) failed that request while an open one sat idle
   * (a write refused "storage unavailable", /readyz not ready, though the database answered).
   * That request is served by the idle connection instead.
   */
  async #connect(): Promise<pg.PoolClient> {
    // On the monotonic clock: on the wall clock, a step forward (NTP) ended every wait at once.
    const deadline = performance.now() + this.#contentionWaitMs;
    for (;;) {
      try {
        return await this.#pool.connect();
      } catch (error) {
        const message = error instanceof Error ? error.message : '';
        const waited = POOL_WAIT_TIMEOUT.test(message);
        // Every connection open and none idle: this request waited its turn in the queue.
        const contended = waited && this.#pool.totalCount >= this.#poolMax && this.#pool.idleCount === 0;
        // A connection freed while this request waited for the new one opened for it.
        const passedOver = (waited || NEW_CONNECTION_TIMEOUT.test(message)) && this.#pool.idleCount > 0;
        if (!(contended || passedOver) || performance.now() >= deadline || this.#closed) throw error;
      }
    }
  }

  /**
   * A write that takes the change-log lock, as every change does (registry_record_change), but
   * waits for it a second at most: held by another session, or by a replica stopped in the
   * middle of a write, that lock blocks every write, and the probe fails (/readyz: not ready)
   * until it is free. A lock on some rows blocks only the writes that need them, not the probe.
   */
  async probeWrites(): Promise<boolean> {
    if (this.#closed) return false;
    try {
      await this.#transaction(async (db) => {
        await db.query(`SET LOCAL lock_timeout = ${PROBE_LOCK_TIMEOUT_MS}`);
        await db.query('SELECT pg_advisory_xact_lock($1)', [CHANGE_LOCK_KEY]);
        this.#changeLocked.add(db);
        await db.query("UPDATE registry_state SET value = $1 WHERE key = 'write_probe'", [Date.now()]);
      }, this.#probePool);
      return true;
    } catch {
      return false;
    }
  }

  async open(): Promise<void> {
    if (this.#opened) return;
    if (this.#closed) throw new Error('PostgresStore was closed; create a new instance.');
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw this.#cannotConnect(error);
    }
    let presence: ChangeSubscription;
    try {
      // Before anything is read: `migrate --force` must see this replica from now on (./presence.ts).
      presence = await this.#listen(() => holdReplicaPresence(this.#url, this.#onConnectionError));
    } catch (error) {
      client.release();
      throw this.#cannotConnect(error);
    }
    let failure: Error | undefined;
    try {
      const { rows } = await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
      if (rows[0]?.synchronous_commit === 'off') {
        throw new Error(
          'PostgreSQL runs with synchronous_commit=off: a committed registration could be lost in a ' +
            'crash after it was acknowledged. Set synchronous_commit to on (the default) for this database or role.',
        );
      }
      await migratePostgres(client, redact(this.#url));
      const rewound = await rewindWatchesIfRestored(client);
      if (rewound !== undefined) {
        this.#notice(
          `this database was restored from a dump (its tables were created anew since the registry last ran on it): its ${rewound} watches were marked behind the change log, ` +
            'so each sends its clients a resync with its current matches (what they were told since the dump is undone). Restore with every replica stopped; see the README, Backups.',
          { database: redact(this.#url), watches: rewound },
        );
      }
    } catch (error) {
      failure = error as Error;
      await presence.close();
      // A migration's error quotes rows too (a unique index over duplicates: "Key (…)=(…) is duplicated").
      throw withoutRowData(error);
    } finally {
      client.release(failure);
    }
    this.#opened = true;
  }

  /** Why opening failed: the driver's words, and what to fix when the server refused the login (loginRefusal). */
  #cannotConnect(error: unknown): Error {
    const refusal = loginRefusal(error) ?? missingDatabase(error, this.#url);
    return new Error(`Cannot connect to ${redact(this.#url)}: ${(error as Error).message}${refusal ? `; ${refusal}` : ''}`, { cause: error });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.#subscriptions].map((subscription) => subscription.close()));
    await Promise.all([this.#pool, this.#probePool].filter((pool) => !pool.ending).map((pool) => pool.end()));
  }

  async ping(): Promise<boolean> {
    if (this.#closed) return false;
    // pool.query releases a failed connection as broken, so the pool heals itself.
    const probe = this.#probePool.query('SELECT 1').then(
      () => true,
      () => false,
    );
    return (await within(probe, PING_TIMEOUT_MS)) ?? false;
  }

  /**
   * Runs `fn` in a transaction on one connection (of `pool`, the probes', when given). After an
   * error the connection goes back to the pool only when the error was the request's, answered
   * by the server on a live session, and the ROLLBACK then succeeded (sessionSurvives);
   * otherwise it is discarded (pg-pool's release(err)): we cannot be sure what state it is in.
   */
  async #transaction<T>(fn: (db: Statements) => Promise<T>, pool?: pg.Pool): Promise<T> {
    const client = await this.#checkout(pool);
    let failure: Error | undefined;
    /** COMMIT was sent: a connection lost from then on leaves the write's outcome unknown. */
    let committing = false;
    try {
      await client.query('BEGIN');
      const db = statementsOf(client);
      const result = await fn(db);
      committing = true;
      await client.query('COMMIT');
      // A committed write proves the database takes writes (again); a lock every write waits for
      // (the change-log lock, the entries table: reason 'locked') only one that took the
      // change-log lock after it, as every entry change and the write probe do. Before, a task's
      // or a watch's row committing beside the held lock cleared the fault: /readyz, which probes
      // only a store with a fault, said ready while no entry could be written, and a probe failing
      // after such a commit recorded the fault anew in its own words.
      if (this.#faults.current?.reason !== 'locked' || this.#changeLocked.has(db)) this.#faults.clear();
      return result;
    } catch (error) {
      if (error instanceof Rollback) {
        // A decision, not a failure: the connection is fine, once rolled back.
        try {
          await client.query('ROLLBACK');
        } catch (rollback) {
          failure = rollback instanceof Error ? rollback : new Error(String(rollback));
          throw rollback;
        }
        return error.value as T;
      }
      // A statement refused before it was sent (text-values.ts) leaves the connection as it was,
      // and is the request's refusal, no fault of storage.
      const refused = error instanceof UnstorableTextError;
      const rolledBack = await client.query('ROLLBACK').then(
        () => true,
        () => false,
      );
      // Discarding a healthy connection after every failure (a deadlock the caller simply retries,
      // a statement timeout, a constraint) made the pool open a new one for the next request, a
      // TCP and login round trip, which under load could itself time out (see #connect).
      if (!rolledBack || !(refused || sessionSurvives(error))) failure = error instanceof Error ? error : new Error(String(error));
      throw refused ? error : this.#failed(error, committing ? MAY_HAVE_COMMITTED : ROLLED_BACK);
    } finally {
      client.release(failure);
    }
  }

  /**
   * What a failed statement throws: a named fault (faults.ts), or the error itself; either way
   * without the row data PostgreSQL quotes in it (./row-data.ts), taken out once it is classified.
   * A connection lost under it is told as such, with `ifLost`: what became of the request's work.
   * `read`: a statement that only reads, whose wait for a lock is its own refusal (FaultState.wrapRead).
   */
  #failed(error: unknown, ifLost: string, read = false): unknown {
    const lost = lostConnection(error, ifLost);
    const named = lost ? new StorageUnavailableError(lost, { cause: error }) : error;
    const thrown = read ? this.#faults.wrapRead(named) : this.#faults.wrap(named);
    withoutRowData(error);
    return thrown;
  }

  async #current(db: Queryable, id: string): Promise<StoredEntry | undefined> {
    const { rows } = await db.query<EntryRow>(`SELECT ${ENTRY_COLUMNS} FROM ${CURRENT_JOIN} WHERE e.id = $1`, [id]);
    return rows[0] ? rowToEntry(rows[0]) : undefined;
  }

  async #insertRevision(
    db: Queryable,
    id: string,
    revision: number,
    write: EntryWrite,
    author: string,
    at: Date,
  ): Promise<void> {
    const { verification, verifiedKid } = verificationColumns(write.verification);
    await db.query(
      `INSERT INTO entry_revisions (entry_id, revision, name, description, protocol_version,
         interfaces, document_text, content_hash, author, created_at, origin, verification, verified_kid)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [
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
      ],
    );
  }

  /** Replaces (or with null removes) the entry's freshness record. */
  async #writeFreshness(db: Queryable, id: string, freshness: FreshnessWrite | null): Promise<void> {
    if (freshness === null) {
      await db.query('DELETE FROM entry_freshness WHERE entry_id = $1', [id]);
      return;
    }
    const columns = FRESHNESS_COLUMNS.join(', ');
    await db.query(
      `INSERT INTO entry_freshness (entry_id, ${columns})
       VALUES ($1, ${FRESHNESS_COLUMNS.map((_, i) => `$${i + 2}`).join(', ')})
       ON CONFLICT (entry_id) DO UPDATE SET (${columns}) = (${FRESHNESS_COLUMNS.map((c) => `EXCLUDED.${c}`).join(', ')})`,
      [id, ...freshnessValues(freshness)],
    );
  }

  /**
   * Locks the claims a write will touch, and claims `urls` for `owner`; rolls the transaction
   * back with 'url-taken' when another principal holds one (or with a retry when a claim changed
   * hands while it was being locked).
   *
   * Concurrency: the primary key of url_claims admits one owner per URL. Every writer locks the
   * claims it adds *and* those it may release (`releasable`: the URLs the entry uses now), FOR
   * UPDATE and in URL order, before it locks any entry row: one lock order for everyone, so
   * writers sharing URLs queue instead of deadlocking (a rare deadlock left, e.g. with a use
   * added meanwhile, makes PostgreSQL fail one writer, which is run again). A claim nobody holds
   * is inserted, in URL order too; an INSERT that meets a concurrent uncommitted claim of the
   * same URL waits for it and then inserts nothing, and the claims are read again, locked, on a
   * fresh snapshot that sees that commit.
   * Answers the claims it inserted (nobody's before: see #storedUnderOtherSpelling).
   */
  async #claimUrls(db: Queryable, urls: readonly string[], owner: string, releasable: readonly string[]): Promise<Set<string>> {
    const touched = [...new Set([...urls, ...releasable])];
    const before = touched.length === 0 ? [] : (await db.query<{ url: string; owner: string }>('SELECT url, owner FROM url_claims WHERE url = ANY($1::text[]) ORDER BY url FOR UPDATE', [touched])).rows;
    if (urls.length === 0) return new Set();
    const heldFirst = new Set(before.filter((r) => r.owner === owner).map((r) => r.url));
    const inserted = await db.query<{ url: string }>(
      `INSERT INTO url_claims (url, owner) SELECT u, $2 FROM unnest($1::text[]) AS u ORDER BY u ON CONFLICT (url) DO NOTHING RETURNING url`,
      [urls, owner],
    );
    const claimedAnew = new Set(inserted.rows.map((r) => r.url));
    const { rows } = await db.query<{ url: string; owner: string }>(
      'SELECT url, owner FROM url_claims WHERE url = ANY($1::text[]) ORDER BY url FOR UPDATE',
      [urls],
    );
    if (rows.length < urls.length) throw new Rollback(undefined);
    const taken = rows.find((r) => r.owner !== owner);
    if (taken) throw new Rollback({ status: 'url-taken', url: taken.url } satisfies UpsertOutcome);
    // A URL under a tenant is also taken when another principal holds the URL without one,
    // unless the claimant held it first (see coveringClaims). Read, not locked: a claim of that
    // URL committed meanwhile is as if it had come after this one.
    const fresh = urls.filter((url) => !heldFirst.has(url));
    const covering = [...new Set(fresh.flatMap(coveringClaims))];
    if (covering.length === 0) return claimedAnew;
    const held = await db.query<{ url: string }>('SELECT url FROM url_claims WHERE url = ANY($1::text[]) AND owner <> $2', [covering, owner]);
    const heldByOther = new Set(held.rows.map((r) => r.url));
    const under = fresh.filter((url) => coveringClaims(url).some((c) => heldByOther.has(c))).sort()[0];
    if (under !== undefined) {
      const heldAs = coveringClaims(under).find((c) => heldByOther.has(c))!;
      throw new Rollback({ status: 'url-taken', url: under, heldAs } satisfies UpsertOutcome);
    }
    return claimedAnew;
  }

  /** The URLs entry `id` uses now (read without locks: the claims are locked from it). */
  async #entryUrls(db: Queryable, id: string | undefined): Promise<string[]> {
    if (id === undefined) return [];
    const { rows } = await db.query<{ url: string }>('SELECT url FROM entry_urls WHERE entry_id = $1', [id]);
    return rows.map((r) => r.url);
  }

  /**
   * `#claimUrls` for an upsert that saw the entry as `seen` (undefined: absent). A claim refused
   * for a new entry may be the entry's own URL, just claimed by a concurrent registration of the
   * same identity, under any of its spellings (every spelling claims one key): if that entry is
   * now visible, the upsert starts over (and will answer 'forbidden' or update it, as if it had
   * come second). Looked up under the write's spelling alone, another principal's registration of
   * `https://h/a2a` made one of `http://h/a2a` at the same moment 'url-taken', a secondary URL of
   * another agent, where SQLite, and PostgreSQL a moment later, answer 'forbidden' (identity-taken).
   */
  async #claimForUpsert(db: Queryable, write: EntryWrite, owner: string, seen: { id: string } | undefined): Promise<Set<string>> {
    try {
      return await this.#claimUrls(db, write.urls, owner, await this.#entryUrls(db, seen?.id));
    } catch (error) {
      if (seen === undefined && error instanceof Rollback && error.value !== undefined) {
        const now = await db.query('SELECT 1 FROM entries WHERE kind = $1 AND identity_url = ANY($2::text[]) LIMIT 1', [
          write.kind,
          [write.identityUrl, ...(write.identityAliases ?? [])],
        ]);
        if ((now.rowCount ?? 0) > 0) throw new Rollback(undefined);
      }
      throw error;
    }
  }

  /**
   * Whether an entry is stored under another spelling (identityAliases) of one of these new
   * entries' identities: asked once their URLs are claimed, and if so the creation starts over
   * (and then updates that entry). The entries' unique key catches a concurrent creation under
   * the same spelling only; every spelling of an identity claims one key (claimKey: its http
   * spelling, "http://h/a2a" for "https://h/a2a" and "http://h:443/a2a"), locked FOR UPDATE by
   * #claimUrls until commit, so creations of one endpoint under several spellings take turns
   * there, whoever makes them (an admin, an import), on any replica; after the lock, this read
   * sees the entry of one that came first. A write whose identity's claim this transaction
   * inserted (`claimedAnew`) needs no read: no entry used that claim, nor could one have been
   * committed meanwhile without it.
   */
  async #storedUnderOtherSpelling(db: Queryable, writes: readonly EntryWrite[], claimedAnew: ReadonlySet<string>): Promise<boolean> {
    const spellings = writes.flatMap((w) => (w.identityAliases?.length && !claimedAnew.has(claimKey(w.identityUrl)) ? w.identityAliases.map((alias) => [w.kind, alias] as const) : []));
    if (spellings.length === 0) return false;
    const { rowCount } = await db.query(
      'SELECT 1 FROM unnest($1::text[], $2::text[]) AS t(kind, url) JOIN entries e ON e.kind = t.kind AND e.identity_url = t.url LIMIT 1',
      [spellings.map((s) => s[0]), spellings.map((s) => s[1])],
    );
    return (rowCount ?? 0) > 0;
  }

  /** Makes `urls` the entry's claimed URLs, releasing the claims nobody uses any more. */
  async #setEntryUrls(db: Queryable, entryId: string, urls: readonly string[]): Promise<void> {
    const dropped = await db.query<{ url: string }>(
      'DELETE FROM entry_urls WHERE entry_id = $1 AND NOT (url = ANY($2::text[])) RETURNING url',
      [entryId, urls],
    );
    if (urls.length > 0) {
      await db.query('INSERT INTO entry_urls (entry_id, url) SELECT $1, u FROM unnest($2::text[]) AS u ON CONFLICT DO NOTHING', [entryId, urls]);
    }
    await this.#releaseUrls(db, dropped.rows.map((r) => r.url));
  }

  /**
   * Releases the claims of `urls` that no entry uses any more. They are locked FOR UPDATE
   * (normally already, by `#claimUrls` or `remove`), so the DELETE, on a fresh snapshot, sees
   * every use committed by a writer that held them before.
   */
  async #releaseUrls(db: Queryable, urls: readonly string[]): Promise<void> {
    if (urls.length === 0) return;
    await db.query('SELECT url FROM url_claims WHERE url = ANY($1::text[]) ORDER BY url FOR UPDATE', [urls]);
    await db.query(
      `DELETE FROM url_claims c WHERE c.url = ANY($1::text[])
         AND NOT EXISTS (SELECT 1 FROM entry_urls u WHERE u.url = c.url)`,
      [urls],
    );
  }

  async #recordChange(db: Queryable, id: string, op: Change['op']): Promise<void> {
    await db.query('SELECT registry_record_change($1, $2)', [id, op]);
    this.#changeLocked.add(db);
    this.#changeRecorded?.();
  }

  /**
   * Per-identity atomicity across replicas: `INSERT ... ON CONFLICT (kind, identity_url) DO
   * NOTHING` either creates the entry or, if another transaction holds or committed that
   * identity, waits for it and inserts nothing. The existing row is then locked with
   * `SELECT ... FOR UPDATE`, so the owner check, the content comparison and the new revision
   * happen while no one else can touch this entry. If the row disappeared in between (a
   * concurrent unregister), the whole transaction is retried and will create it afresh.
   * The entry's URLs are claimed before any of this (`#claimUrls`); a refusal rolls back. The
   * identity is also looked up under its other spellings (http for https, a web port), and a
   * creation under another spelling committed meanwhile is found once the claims are locked
   * (`#storedUnderOtherSpelling`): the write starts over and updates that entry.
   */
  async upsert(write: EntryWrite, actor: Actor, quota: WriteQuota = {}, acknowledgement?: AcknowledgementRow): Promise<UpsertOutcome> {
    for (let attempt = 1; attempt <= MAX_UPSERT_ATTEMPTS; attempt++) {
      const outcome = await this.#transaction(async (db) => {
        const done = await this.#upsertIn(db, write, actor, quota);
        // The acknowledging task commits with the write: one transaction, one WAL flush.
        const row = done && 'entry' in done ? acknowledgement?.(done) : undefined;
        if (row) await saveTaskRowIn(db, row);
        return done;
      }).catch((error: unknown) => {
        if (attempt < MAX_UPSERT_ATTEMPTS && RETRYABLE.has((error as { code?: string }).code ?? '')) return undefined;
        throw error;
      });
      if (outcome) return outcome;
    }
    throw new Error(
      `Could not register ${write.identityUrl}: it was deleted and re-created concurrently ${MAX_UPSERT_ATTEMPTS} times in a row.`,
    );
  }

  /**
   * A bulk import: the writes of `upsert`, each in a savepoint of one transaction (one commit,
   * one WAL flush for the batch). A write that must start over (see `upsert`) is run again
   * from its savepoint; a deadlock or serialisation failure runs the whole batch again.
   */
  async importEntries(writes: readonly EntryWrite[], actor: Actor, quota: ImportQuota = {}): Promise<ImportOutcome[]> {
    if (writes.length === 0) return [];
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#transaction(async (db) => {
          const outcomes: (ImportOutcome | undefined)[] = writes.map(() => undefined);
          const changed: string[] = [];
          await this.#importInBulk(db, writes, actor, outcomes, changed);
          for (const [i, write] of writes.entries()) {
            outcomes[i] ??= importOutcome(await this.#upsertInSavepoint(db, write, actor, quota, changed));
          }
          // The changes last, in one statement: the change-log lock is held from here to COMMIT only.
          if (changed.length > 0) {
            await db.query(`SELECT registry_record_change(c.id, 'upsert') FROM unnest($1::uuid[]) WITH ORDINALITY AS c(id, n) ORDER BY c.n`, [changed]);
            this.#changeLocked.add(db);
            this.#changeRecorded?.();
          }
          return outcomes as ImportOutcome[];
        });
      } catch (error) {
        if (attempt < MAX_UPSERT_ATTEMPTS && RETRYABLE.has((error as { code?: string }).code ?? '')) continue;
        throw error;
      }
    }
  }

  /**
   * The common cases of a bulk import in a few statements for the whole batch instead of a dozen
   * round trips per write: a document already stored as it is ('unchanged', nothing written),
   * and a new entry whose URLs are free or already its owner's (created together: claims,
   * entries, revisions, URL uses). Sets their outcomes; every other write (an update, another
   * principal's identity or URL, a second write of one identity, a freshness record) is left for
   * the one-by-one path of `upsert`. If a concurrent writer got in between
   * (a claim or an identity taken meanwhile), the bulk step is undone and everything goes the
   * one-by-one way, which settles such races.
   */
  async #importInBulk(db: Queryable, writes: readonly EntryWrite[], actor: Actor, outcomes: (ImportOutcome | undefined)[], changed: string[]): Promise<void> {
    const key = (kind: string, url: string): string => `${kind} ${url}`;
    const found = await db.query<{ kind: string; identity_url: string; id: string; owner: string; content_hash: string }>(
      `SELECT e.kind, e.identity_url, e.id, e.owner, r.content_hash
       FROM entries e JOIN entry_revisions r ON r.entry_id = e.id AND r.revision = e.current_revision
       WHERE (e.kind, e.identity_url) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
      [writes.map((w) => w.kind), writes.map((w) => w.identityUrl)],
    );
    const existing = new Map(found.rows.map((r) => [key(r.kind, r.identity_url), r]));
    // A write whose identity is stored under another spelling updates that entry: one by one.
    const aliased = writes.flatMap((w, i) => (existing.has(key(w.kind, w.identityUrl)) ? [] : (w.identityAliases ?? []).map((alias) => [i, w.kind, alias] as const)));
    const respelled = new Set<number>();
    if (aliased.length > 0) {
      const stored = await db.query<{ i: number }>(
        `SELECT DISTINCT t.i FROM unnest($1::int[], $2::text[], $3::text[]) AS t(i, kind, url) JOIN entries e ON e.kind = t.kind AND e.identity_url = t.url`,
        [aliased.map((a) => a[0]), aliased.map((a) => a[1]), aliased.map((a) => a[2])],
      );
      for (const row of stored.rows) respelled.add(row.i);
    }
    const seen = new Set<string>();
    const creates: number[] = [];
    writes.forEach((write, i) => {
      const k = key(write.kind, write.identityUrl);
      const first = !seen.has(k);
      // Another spelling later in the batch is the same entry: it goes one by one, after this one.
      for (const spelling of [write.identityUrl, ...(write.identityAliases ?? [])]) seen.add(key(write.kind, spelling));
      if (!first || write.freshness !== undefined || respelled.has(i)) return;
      const entry = existing.get(k);
      if (!entry) creates.push(i);
      else if (entry.content_hash === write.contentHash && (entry.owner === actor.principal || actor.isAdmin)) outcomes[i] = { status: 'unchanged', id: entry.id };
    });
    if (creates.length === 0) return;
    const wanted = [...new Set(creates.flatMap((i) => claimsToCheck(writes[i]!.urls)))].sort();
    const held = await db.query<{ url: string }>('SELECT url FROM url_claims WHERE url = ANY($1::text[]) AND owner <> $2', [wanted, actor.principal]);
    const others = new Set(held.rows.map((r) => r.url));
    const bulk = creates.filter((i) => !claimsToCheck(writes[i]!.urls).some((u) => others.has(u)));
    if (bulk.length === 0) return;
    const urls = [...new Set(bulk.flatMap((i) => writes[i]!.urls))].sort();
    const ids = bulk.map(() => timeOrderedId());
    const now = new Date();
    await db.query('SAVEPOINT import_bulk');
    try {
      if (urls.length > 0) {
        // In URL order, as #claimUrls locks them: writers sharing URLs queue instead of deadlocking.
        const newClaims = await db.query<{ url: string }>(
          'INSERT INTO url_claims (url, owner) SELECT u, $2 FROM unnest($1::text[]) AS u ORDER BY u ON CONFLICT (url) DO NOTHING RETURNING url',
          [urls, actor.principal],
        );
        const claims = await db.query<{ owner: string }>('SELECT owner FROM url_claims WHERE url = ANY($1::text[]) ORDER BY url FOR UPDATE', [urls]);
        if (claims.rows.length < urls.length || claims.rows.some((c) => c.owner !== actor.principal)) throw new Rollback(undefined);
        // One created meanwhile under another spelling (a registration, another import) goes one by one.
        const claimedAnew = new Set(newClaims.rows.map((r) => r.url));
        if (await this.#storedUnderOtherSpelling(db, bulk.map((i) => writes[i]!), claimedAnew)) throw new Rollback(undefined);
      }
      const inserted = await db.query(
        `INSERT INTO entries (id, kind, identity_url, owner, current_revision, created_at, updated_at, trust_keyset)
         SELECT t.id, t.kind, t.url, $4, 1, $5, $5, t.trust_keyset FROM unnest($1::uuid[], $2::text[], $3::text[], $6::text[]) AS t(id, kind, url, trust_keyset)
         ON CONFLICT (kind, identity_url) DO NOTHING`,
        [ids, bulk.map((i) => writes[i]!.kind), bulk.map((i) => writes[i]!.identityUrl), actor.principal, now, bulk.map((i) => trustKeyset(writes[i]!))],
      );
      if (inserted.rowCount !== bulk.length) throw new Rollback(undefined);
      const column = <T>(f: (w: EntryWrite) => T): T[] => bulk.map((i) => f(writes[i]!));
      const verification = bulk.map((i) => verificationColumns(writes[i]!.verification));
      await db.query(
        `INSERT INTO entry_revisions (entry_id, revision, name, description, protocol_version,
           interfaces, document_text, content_hash, author, created_at, origin, verification, verified_kid)
         SELECT t.id, 1, t.name, t.description, t.protocol_version, t.interfaces, t.document_text, t.content_hash, $9, $10, t.origin, t.verification, t.verified_kid
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $11::text[], $12::text[])
           AS t(id, name, description, protocol_version, interfaces, document_text, content_hash, origin, verification, verified_kid)`,
        [
          ids,
          column((w) => w.name),
          column((w) => w.description),
          column((w) => w.protocolVersion ?? null),
          column((w) => JSON.stringify(w.interfaces)),
          column((w) => w.documentText),
          column((w) => w.contentHash),
          column((w) => w.origin ?? 'register'),
          actor.principal,
          now,
          verification.map((v) => v.verification),
          verification.map((v) => v.verifiedKid),
        ],
      );
      const uses = bulk.flatMap((i, n) => writes[i]!.urls.map((url) => [ids[n]!, url] as const));
      if (uses.length > 0) {
        await db.query('INSERT INTO entry_urls (entry_id, url) SELECT * FROM unnest($1::uuid[], $2::text[]) ON CONFLICT DO NOTHING', [uses.map((u) => u[0]), uses.map((u) => u[1])]);
      }
      await db.query('RELEASE SAVEPOINT import_bulk');
    } catch (error) {
      if (!(error instanceof Rollback)) throw error;
      await db.query('ROLLBACK TO SAVEPOINT import_bulk');
      await db.query('RELEASE SAVEPOINT import_bulk');
      return;
    }
    bulk.forEach((i, n) => {
      outcomes[i] = { status: 'created', id: ids[n]! };
      changed.push(ids[n]!);
    });
  }

  async #upsertInSavepoint(db: Queryable, write: EntryWrite, actor: Actor, quota: WriteQuota, changed: string[]): Promise<UpsertOutcome> {
    for (let attempt = 1; attempt <= MAX_UPSERT_ATTEMPTS; attempt++) {
      await db.query('SAVEPOINT import_one');
      let outcome: UpsertOutcome | undefined;
      let undo = false;
      const deferred: string[] = [];
      try {
        outcome = await this.#upsertIn(db, write, actor, quota, deferred);
        undo = outcome === undefined;
      } catch (error) {
        if (!(error instanceof Rollback)) throw error;
        outcome = error.value as UpsertOutcome | undefined;
        undo = true;
      }
      // A refusal or a start-over leaves nothing of this write behind.
      if (undo) await db.query('ROLLBACK TO SAVEPOINT import_one');
      else changed.push(...deferred);
      await db.query('RELEASE SAVEPOINT import_one');
      if (outcome) return outcome;
    }
    throw new Error(`Could not import ${write.identityUrl}: it was deleted and re-created concurrently ${MAX_UPSERT_ATTEMPTS} times in a row.`);
  }

  /**
   * Records an upsert of entry `id` in the change log, or, for a bulk import, leaves it in
   * `deferred` to be recorded at the end of the batch: recording takes the change-log lock until
   * commit (see registry_record_change), which would otherwise make every other writer wait for
   * the whole batch.
   */
  async #upserted(db: Queryable, id: string, deferred: string[] | undefined): Promise<void> {
    if (deferred) deferred.push(id);
    else await this.#recordChange(db, id, 'upsert');
  }

  /** The body of `upsert`'s transaction (see above); undefined: start over. */
  async #upsertIn(db: Queryable, write: EntryWrite, actor: Actor, quota: WriteQuota, deferred?: string[]): Promise<UpsertOutcome | undefined> {
    const now = new Date();
    const id = timeOrderedId();
    const max = quota.maxEntriesPerOwner;
    // The URLs are claimed first, in the name of the entry's owner (the actor, for a new
    // entry): a new entry's row would otherwise already be inserted, and other registrations
    // of its identity waiting on it, when a claim fails. Whoever may not update the entry is
    // told so before any claim.
    // The identity as written, else another spelling of the same endpoint (http for https, ...).
    const found = await db.query<{ id: string; owner: string; identity_url: string }>(
      'SELECT id, owner, identity_url FROM entries WHERE kind = $1 AND identity_url = ANY($2::text[]) ORDER BY identity_url = $3 DESC LIMIT 1',
      [write.kind, [write.identityUrl, ...(write.identityAliases ?? [])], write.identityUrl],
    );
    const seen = found.rows[0];
    /** The spelling the entry is stored under: another one than the write's is updated, not created again. */
    const identity = seen?.identity_url ?? write.identityUrl;
    if (seen && seen.owner !== actor.principal && !actor.isAdmin) {
      const existing = await this.#current(db, seen.id);
      if (existing) return { status: 'forbidden', existing };
    }
    if (max !== undefined && !seen) {
      // One owner's creations take turns across replicas (the lock lasts until commit), so the
      // count below cannot be overtaken by a concurrent creation: no overshoot. Creations only:
      // an update waiting for its entry's row (locked by another request or session) would
      // otherwise hold up every new entry of its owner, each refused after the statement timeout.
      await db.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [OWNER_LOCK_NAMESPACE, actor.principal]);
      // Counted up to the limit only: an owner's count costs what the quota allows, not what the
      // owner holds (an import may give one owner a million entries; a full count took tens of ms).
      const owned = await db.query<{ n: string }>('SELECT count(*) AS n FROM (SELECT 1 FROM entries WHERE owner = $1 LIMIT $2) AS owned', [actor.principal, max]);
      if (Number(owned.rows[0]?.n ?? 0) >= max) {
        // Its identity created meanwhile (by a registration whose turn came first): an update, not a new entry.
        const meanwhile = await db.query('SELECT 1 FROM entries WHERE kind = $1 AND identity_url = ANY($2::text[]) LIMIT 1', [write.kind, [write.identityUrl, ...(write.identityAliases ?? [])]]);
        if ((meanwhile.rowCount ?? 0) > 0) return undefined;
        return { status: 'quota-exceeded', quota: 'entries', limit: max };
      }
    }
    const claimedAnew = await this.#claimForUpsert(db, write, seen?.owner ?? actor.principal, seen);
    // Created meanwhile under another spelling: start over, to update it.
    if (!seen && (await this.#storedUnderOtherSpelling(db, [write], claimedAnew))) throw new Rollback(undefined);
    const inserted =
      identity !== write.identityUrl
        ? { rowCount: 0, rows: [] }
        : await db.query<{ list_seq: string }>(
            `INSERT INTO entries (id, kind, identity_url, owner, current_revision, created_at, updated_at, trust_keyset)
             VALUES ($1, $2, $3, $4, 1, $5, $5, $6)
             ON CONFLICT (kind, identity_url) DO NOTHING
             RETURNING list_seq`,
            [id, write.kind, write.identityUrl, actor.principal, now, trustKeyset(write)],
          );
    if (inserted.rowCount === 1) {
      // Claimed above in the name of whoever held the identity then: if that was someone
      // else who unregistered meanwhile, start over.
      if (seen && seen.owner !== actor.principal) throw new Rollback(undefined);
      await this.#insertRevision(db, id, 1, write, actor.principal, now);
      if (write.freshness) await this.#writeFreshness(db, id, write.freshness);
      await this.#setEntryUrls(db, id, write.urls);
      await this.#upserted(db, id, deferred);
      // Without a freshness record the new entry is what was written: no round trip to read it back.
      const entry = write.freshness ? (await this.#current(db, id))! : insertedEntry(id, write, actor.principal, now.toISOString(), Number(inserted.rows[0]!.list_seq));
      return { status: 'created', entry };
    }

    // Lock the entry row alone: locking through the revisions join would make a
    // concurrent revision bump look like a vanished row (EvalPlanQual re-checks the join).
    const locked = await db.query<{ id: string }>(
      'SELECT id FROM entries WHERE kind = $1 AND identity_url = $2 FOR UPDATE',
      [write.kind, identity],
    );
    const existingId = locked.rows[0]?.id;
    if (existingId === undefined) return undefined; // deleted meanwhile: retry
    const existing = (await this.#current(db, existingId))!;
    if (existing.owner !== actor.principal && !actor.isAdmin) throw new Rollback({ status: 'forbidden', existing } satisfies UpsertOutcome);
    // The URLs were claimed in the name of the owner seen before locking; owners never change.
    if (existing.owner !== (seen?.owner ?? actor.principal)) throw new Rollback(undefined);
    const freshness = write.freshness === undefined ? undefined : effectiveFreshness(existing, write.freshness);
    if (freshness !== undefined) await this.#writeFreshness(db, existing.id, freshness);
    if (sameDocument(write, existing.contentHash, () => existing.documentText)) {
      // Same document, same URLs: its claims are the entry's already.
      if (freshness !== undefined && freshnessVisiblyChanged(existing, freshness)) {
        await this.#upserted(db, existing.id, deferred);
        return { status: 'unchanged', entry: (await this.#current(db, existing.id))!, freshened: true };
      }
      return { status: 'unchanged', entry: write.freshness !== undefined ? (await this.#current(db, existing.id))! : existing };
    }

    const revision = existing.revision + 1;
    const revisedAt = revisionTime(existing.updatedAt, now.getTime());
    await this.#insertRevision(db, existing.id, revision, write, actor.principal, revisedAt);
    await this.#setEntryUrls(db, existing.id, write.urls);
    // The owner is left alone: an admin fixing an entry does not take it over. Found under
    // another spelling, the entry takes the one its owner now registers.
    await db.query('UPDATE entries SET current_revision = $2, updated_at = $3, trust_keyset = $4, identity_url = $5 WHERE id = $1', [
      existing.id,
      revision,
      revisedAt,
      trustKeyset(write),
      write.identityUrl,
    ]);
    if (quota.maxRevisions !== undefined) {
      // Older revisions leave the history; the numbering goes on from the current one.
      await db.query('DELETE FROM entry_revisions WHERE entry_id = $1 AND revision <= $2', [existing.id, revision - quota.maxRevisions]);
    }
    await this.#upserted(db, existing.id, deferred);
    return { status: 'updated', entry: (await this.#current(db, existing.id))! };
  }

  async get(id: string, revision?: number): Promise<StoredEntry | undefined> {
    if (!isUuid(id)) return undefined;
    const key = id.toLowerCase();
    if (revision === undefined) {
      const { rows } = await this.#read<EntryRow>(`SELECT ${ENTRY_COLUMNS} FROM ${CURRENT_JOIN} WHERE e.id = $1`, [key]);
      return rows[0] ? rowToEntry(rows[0]) : undefined;
    }
    if (!Number.isSafeInteger(revision) || revision < 1 || revision > 2_147_483_647) return undefined;
    const { rows } = await this.#read<EntryRow>(
      `SELECT ${ENTRY_COLUMNS} FROM ${REVISION_JOIN} WHERE e.id = $1 AND r.revision = $2`,
      [key, revision],
    );
    return rows[0] ? rowToEntry(rows[0]) : undefined;
  }

  async getMany(ids: readonly string[]): Promise<StoredEntry[]> {
    const keys = ids.filter(isUuid).map((id) => id.toLowerCase());
    if (keys.length === 0) return [];
    const { rows } = await this.#read<EntryRow>(`SELECT ${ENTRY_COLUMNS} FROM ${CURRENT_JOIN} WHERE e.id = ANY($1::uuid[])`, [keys]);
    return rows.map(rowToEntry);
  }

  async revisions(id: string, limit: number): Promise<RevisionSummary[]> {
    if (!isUuid(id)) return [];
    const { rows } = await this.#read<{ revision: number | string; created_at: Date | string }>(
      'SELECT revision, created_at FROM entry_revisions WHERE entry_id = $1 ORDER BY revision DESC LIMIT $2',
      [id.toLowerCase(), clampLimit(limit)],
    );
    return rows.map((row) => ({
      revision: Number(row.revision),
      updatedAt: row.created_at instanceof Date ? row.created_at.toISOString() : row.created_at,
    }));
  }

  async list(query: ListQuery): Promise<ListResult> {
    // An owner PostgreSQL cannot hold owns nothing (text-values.ts).
    if (unstorable(query.owner)) return { entries: [] };
    const limit = clampLimit(query.limit);
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (query.kind !== undefined) {
      params.push(query.kind);
      where.push(`e.kind = $${params.length}`);
    }
    if (query.owner !== undefined) {
      params.push(query.owner);
      where.push(`e.owner = $${params.length}`);
    }
    if (query.health !== undefined) {
      params.push(query.health);
      where.push(`f.health_status = $${params.length}`);
    }
    if (query.verified !== undefined) where.push(query.verified ? 'r.verified_kid IS NOT NULL' : 'r.verified_kid IS NULL');
    if (query.hideUnverifiedAgents) where.push("(e.kind <> 'agent' OR r.verified_kid IS NOT NULL)");
    const keyset = listKeyset(query.orderBy, query.after, (value, type) => {
      params.push(value);
      return `$${params.length}::${type === 'timestamp' ? 'timestamptz' : 'bigint'}`;
    }, query.until);
    if (keyset.where) where.push(keyset.where);
    params.push(limit + 1);
    const { rows } = await this.#read<EntryRow>(
      `SELECT ${ENTRY_COLUMNS} FROM ${CURRENT_JOIN}
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY ${keyset.orderBy} LIMIT $${params.length}`,
      params,
    );
    const page = rows.slice(0, limit);
    const result: ListResult = { entries: page.map(rowToEntry) };
    if (rows.length > limit) result.next = listCursor(query.orderBy, result.entries[limit - 1]!, Number(page[limit - 1]!.list_seq));
    return result;
  }

  async remove(id: string, actor: Actor): Promise<DeleteOutcome> {
    if (!isUuid(id)) return { status: 'not-found' };
    const key = id.toLowerCase();
    // Releasing the entry's URL claims can deadlock with a registration that holds them and
    // waits for this entry: PostgreSQL then fails one of the two, and it is simply run again.
    return this.#retryingDeadlocks(() => this.#transaction(async (db): Promise<DeleteOutcome> => {
      // The claims before the entry, in the order every writer takes them (see #claimUrls).
      const uses = await this.#entryUrls(db, key);
      if (uses.length > 0) await db.query('SELECT url FROM url_claims WHERE url = ANY($1::text[]) ORDER BY url FOR UPDATE', [uses]);
      const locked = await db.query('SELECT id FROM entries WHERE id = $1 FOR UPDATE', [key]);
      if (locked.rowCount === 0) return { status: 'not-found' };
      const existing = (await this.#current(db, key))!;
      if (existing.owner !== actor.principal && !actor.isAdmin) return { status: 'forbidden', existing };
      // entry_revisions and entry_urls go with it (ON DELETE CASCADE); then its claims.
      const urls = await db.query<{ url: string }>('DELETE FROM entry_urls WHERE entry_id = $1 RETURNING url', [key]);
      await db.query('DELETE FROM entries WHERE id = $1', [key]);
      await this.#releaseUrls(db, urls.rows.map((r) => r.url));
      await this.#recordChange(db, key, 'delete');
      return { status: 'deleted', entry: existing };
    }));
  }

  async #retryingDeadlocks<T>(run: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run();
      } catch (error) {
        if (attempt >= MAX_UPSERT_ATTEMPTS || !RETRYABLE.has((error as { code?: string }).code ?? '')) throw error;
      }
    }
  }

  async updateVerification(id: string, revision: number, verification: CardVerification, announce: boolean): Promise<StoredEntry | undefined> {
    if (!isUuid(id)) return undefined;
    const key = id.toLowerCase();
    const columns = verificationColumns(verification);
    return this.#transaction(async (db) => {
      // Locking the entry keeps a new revision from being written meanwhile.
      const locked = await db.query<{ current_revision: number }>('SELECT current_revision FROM entries WHERE id = $1 FOR UPDATE', [key]);
      if (locked.rows[0]?.current_revision !== revision) return undefined;
      await db.query('UPDATE entry_revisions SET verification = $3, verified_kid = $4 WHERE entry_id = $1 AND revision = $2', [
        key,
        revision,
        columns.verification,
        columns.verifiedKid,
      ]);
      await db.query('UPDATE entries SET trust_keyset = $2 WHERE id = $1', [key, checkedKeyset(verification)]);
      if (announce) await this.#recordChange(db, key, 'upsert');
      return this.#current(db, key);
    });
  }

  async *scan(options: ScanOptions = {}): AsyncIterable<StoredEntry> {
    const batchSize = Math.max(1, options.batchSize ?? this.#scanBatchSize);
    const keyset = options.outsideKeyset;
    // Keyset batches: bounded memory, and no transaction or cursor held open while the
    // consumer works through a batch.
    let after = 0;
    for (;;) {
      // With a keyset, the partial index names the entries; only theirs are read (migration 6).
      const { rows } =
        keyset === undefined
          ? await this.#read<EntryRow>(`SELECT ${ENTRY_COLUMNS} FROM ${CURRENT_JOIN} WHERE e.list_seq > $1 ORDER BY e.list_seq ASC LIMIT $2`, [after, batchSize])
          : await this.#read<EntryRow>(
              `SELECT ${ENTRY_COLUMNS} FROM ${CURRENT_JOIN}
               WHERE e.trust_keyset IS NOT NULL AND e.trust_keyset <> $3 AND e.list_seq > $1 ORDER BY e.list_seq ASC LIMIT $2`,
              [after, batchSize, keyset],
            );
      for (const row of rows) yield rowToEntry(row);
      if (rows.length < batchSize) return;
      after = Number(rows[rows.length - 1]!.list_seq);
    }
  }

  async count(): Promise<Record<EntryKind, number>> {
    const { rows } = await this.#read<{ kind: string; n: string }>(
      'SELECT kind, count(*) AS n FROM entries GROUP BY kind',
    );
    const counts: Record<EntryKind, number> = { agent: 0, 'mcp-server': 0 };
    for (const row of rows) if (isEntryKind(row.kind)) counts[row.kind] = Number(row.n);
    return counts;
  }

  async changesSince(seq: number, limit: number): Promise<Change[]> {
    // mark: as changeMark builds it.
    const { rows } = await this.#read<{ seq: string; entry_id: string; op: Change['op']; mark: string }>(
      "SELECT seq, entry_id, op, entry_id::text || ' ' || op || ' ' || extract(epoch FROM at)::text AS mark FROM changes WHERE seq > $1 ORDER BY seq ASC LIMIT $2",
      [normalizeSeq(seq), clampLimit(limit)],
    );
    return rows.map((row) => ({ seq: Number(row.seq), id: row.entry_id, op: row.op, mark: row.mark }));
  }

  async lastChangeSeq(): Promise<number> {
    const { rows } = await this.#read<{ seq: string }>(
      `SELECT greatest(coalesce((SELECT max(seq) FROM changes), 0),
                       (SELECT value FROM registry_state WHERE key = 'changes_trimmed_through')) AS seq`,
    );
    return Number(rows[0]?.seq ?? 0);
  }

  reportChangesRecorded(listener: () => void): void {
    this.#changeRecorded = listener;
  }

  async changeMark(seq: number): Promise<string | undefined> {
    // The time as epoch seconds: its text does not depend on the connection's TimeZone.
    const { rows } = await this.#read<{ mark: string }>(
      "SELECT entry_id::text || ' ' || op || ' ' || extract(epoch FROM at)::text AS mark FROM changes WHERE seq = $1",
      [seq],
    );
    return rows[0]?.mark;
  }

  async changesTrimmedThrough(): Promise<number> {
    const { rows } = await this.#read<{ value: string }>("SELECT value FROM registry_state WHERE key = 'changes_trimmed_through'");
    return Number(rows[0]?.value ?? 0);
  }

  async trimChanges(maxAgeMs: number, options: BatchedDeletion = {}): Promise<number> {
    // Aged on the clock that dated the changes (`at` defaults to the server's now()), not the
    // registry host's: with the server's clock behind by more than a short retention (hours may
    // be a fraction), changes just written were trimmed, and every replica following them
    // reloaded its whole index.
    const last = await this.#read<{ seq: string | null }>("SELECT max(seq) AS seq FROM changes WHERE at < now() - $1 * interval '1 millisecond'", [maxAgeMs]);
    const through = last.rows[0]?.seq;
    if (through === null || through === undefined) return 0;
    // Oldest first, a bounded batch per transaction (one DELETE of a million changes would
    // outlast the statement timeout every time, and the log would grow for ever). Each batch
    // moves the watermark with it: a reader never finds changes missing below it.
    let removed = 0;
    while (!options.signal?.aborted && !this.#closed) {
      const batch = await this.#transaction(async (db) => {
        const top = await db.query<{ seq: string }>('SELECT seq FROM changes WHERE seq <= $1 ORDER BY seq LIMIT 1 OFFSET $2', [through, DELETE_BATCH_ROWS - 1]);
        const upTo = top.rows[0]?.seq ?? through;
        const deleted = await db.query('DELETE FROM changes WHERE seq <= $1', [upTo]);
        await db.query("UPDATE registry_state SET value = greatest(value, $1) WHERE key = 'changes_trimmed_through'", [upTo]);
        return { deleted: deleted.rowCount ?? 0, last: top.rows.length === 0 || upTo === through };
      });
      removed += batch.deleted;
      if (batch.deleted > 0) options.progress?.(removed);
      if (batch.last) break;
    }
    return removed;
  }

  /** Autovacuum makes deleted rows' space reusable; giving it back to the OS would need VACUUM FULL (an exclusive lock). */
  async reclaimSpace(): Promise<void> {}

  async oldestRevision(id: string): Promise<number | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await this.#read<{ r: number | null }>('SELECT min(revision) AS r FROM entry_revisions WHERE entry_id = $1', [id.toLowerCase()]);
    return rows[0]?.r ?? undefined;
  }

  /**
   * Other replicas write to the same database: LISTEN for their commits on a dedicated
   * connection (not the pool), reconnecting by itself. `undefined` after a reconnection means
   * notifications may have been missed: catch up with `changesSince`.
   */
  async subscribeToChanges(
    onChange: (seq: number | undefined) => void,
    onError: (err: Error) => void,
  ): Promise<ChangeSubscription> {
    return this.#listen(() => listenForChanges(this.#url, onChange, { onError }));
  }

  /** A listener as a subscription the store closes with itself. */
  async #listen(open: () => Promise<ChangeListener>): Promise<ChangeSubscription> {
    if (this.#closed) throw new Error('PostgresStore is closed.');
    const listener = await open();
    const subscription: ChangeSubscription = {
      close: async () => {
        this.#subscriptions.delete(subscription);
        await listener.close();
      },
    };
    this.#subscriptions.add(subscription);
    return subscription;
  }

  /** Another entry (not `id`) whose identity is the write's under any of its spellings (identityAliases), as a registration looks it up. */
  async #otherIdentityHolder(db: Queryable, write: EntryWrite, id: string): Promise<string | undefined> {
    const other = await db.query<{ id: string }>('SELECT id FROM entries WHERE kind = $1 AND identity_url = ANY($2::text[]) AND id <> $3 LIMIT 1', [
      write.kind,
      [write.identityUrl, ...(write.identityAliases ?? [])],
      id,
    ]);
    return other.rows[0]?.id;
  }

  async revise(id: string, write: EntryWrite, expectRevision: number, quota: Pick<WriteQuota, 'maxRevisions'> = {}): Promise<ReviseOutcome> {
    if (!isUuid(id)) return { status: 'not-found' };
    const key = id.toLowerCase();
    const outcome = await this.#transaction(async (db): Promise<ReviseOutcome | undefined> => {
      // The fetched document's URLs are claimed for the owner first, as a registration's are
      // (claims before entry rows: the one lock order); owners never change.
      const seen = await db.query<{ owner: string; identity_url: string }>('SELECT owner, identity_url FROM entries WHERE id = $1', [key]);
      const row = seen.rows[0];
      if (!row) return { status: 'not-found' };
      if (write.identityUrl !== row.identity_url) {
        // Another entry's identity is a conflict before it is a URL claim (checked again below, locked).
        const otherId = await this.#otherIdentityHolder(db, write, key);
        if (otherId !== undefined) return { status: 'conflict', existing: (await this.#current(db, otherId))! };
      }
      await this.#claimUrls(db, write.urls, row.owner, await this.#entryUrls(db, key));
      const locked = await db.query('SELECT id FROM entries WHERE id = $1 FOR UPDATE', [key]);
      if (locked.rowCount === 0) return { status: 'not-found' };
      const existing = (await this.#current(db, key))!;
      if (existing.revision !== expectRevision) return { status: 'stale', entry: existing };
      if (write.identityUrl !== existing.identityUrl) {
        // Serialised with registrations of that identity by the unique key: the UPDATE below
        // fails on a concurrent insert, and this check catches a committed one.
        const otherId = await this.#otherIdentityHolder(db, write, key);
        if (otherId !== undefined) return { status: 'conflict', existing: (await this.#current(db, otherId))! };
      }
      if (write.freshness !== undefined) await this.#writeFreshness(db, key, write.freshness);
      if (sameDocument(write, existing.contentHash, () => existing.documentText)) {
        if (write.freshness !== undefined && freshnessVisiblyChanged(existing, write.freshness)) await this.#recordChange(db, key, 'upsert');
        return { status: 'unchanged', entry: (await this.#current(db, key))! };
      }
      const now = revisionTime(existing.updatedAt);
      const revision = existing.revision + 1;
      // The owner writes it: the refresh acts for them, as the source they gave says.
      await this.#insertRevision(db, key, revision, { ...write, origin: 'refresh' }, existing.owner, now);
      await this.#setEntryUrls(db, key, write.urls);
      await db.query('UPDATE entries SET current_revision = $2, updated_at = $3, identity_url = $4, trust_keyset = $5 WHERE id = $1', [
        key,
        revision,
        now,
        write.identityUrl,
        trustKeyset(write),
      ]);
      if (quota.maxRevisions !== undefined) {
        await db.query('DELETE FROM entry_revisions WHERE entry_id = $1 AND revision <= $2', [key, revision - quota.maxRevisions]);
      }
      await this.#recordChange(db, key, 'upsert');
      return { status: 'updated', entry: (await this.#current(db, key))! };
    });
    if (outcome) return outcome;
    // A claim changed hands while it was being locked: the entry moved on, as far as this refresh knows.
    const current = await this.get(key);
    return current ? { status: 'stale', entry: current } : { status: 'not-found' };
  }

  async recordCheck(id: string, freshness: FreshnessWrite): Promise<CheckOutcome | undefined> {
    if (!isUuid(id)) return undefined;
    const key = id.toLowerCase();
    return this.#transaction(async (db): Promise<CheckOutcome | undefined> => {
      const locked = await db.query('SELECT id FROM entries WHERE id = $1 FOR UPDATE', [key]);
      if (locked.rowCount === 0) return undefined;
      const existing = (await this.#current(db, key))!;
      await this.#writeFreshness(db, key, freshness);
      const logged = freshnessVisiblyChanged(existing, freshness);
      if (logged) await this.#recordChange(db, key, 'upsert');
      return { entry: (await this.#current(db, key))!, change: logged ? 'logged' : 'quiet' };
    });
  }

  /**
   * Each due row goes to exactly one replica: the rows are locked (SKIP LOCKED: a replica never
   * waits for, nor takes, rows another one is claiming) and moved forward in the same statement,
   * so a later claim no longer sees them due.
   */
  async claimDue(limit: number, retryAt: string, includeUnsourced: boolean): Promise<string[]> {
    // Due by the registry's clock, which wrote every next_check_at (an interval, a lease, a
    // Retry-After, "now" for a first probe), as SQLite compares them: the database server's
    // now() is another host's clock. A server an hour behind held every probe and refresh an
    // hour; one ahead of the lease re-claimed checks still running, and fetched a source that
    // had asked to be left alone (Retry-After) that much early.
    const { rows } = await this.#query<{ entry_id: string }>(
      `UPDATE entry_freshness SET next_check_at = $1
       WHERE entry_id IN (
         SELECT entry_id FROM entry_freshness
         WHERE next_check_at <= $4 AND (source_url IS NOT NULL OR $2)
         ORDER BY next_check_at LIMIT $3
         FOR UPDATE SKIP LOCKED)
       RETURNING entry_id`,
      [retryAt, includeUnsourced, clampLimit(limit), new Date()],
    );
    return rows.map((r) => r.entry_id);
  }

  async scheduleRefreshes(now: string, latest: string): Promise<number> {
    const result = await this.#query(
      `UPDATE entry_freshness SET next_check_at = CASE WHEN next_check_at IS NULL THEN $1::timestamptz ELSE $2::timestamptz END
       WHERE source_url IS NOT NULL AND (next_check_at IS NULL OR next_check_at > $2::timestamptz)`,
      [now, latest],
    );
    return result.rowCount ?? 0;
  }

  async scheduleProbes(at: string): Promise<number> {
    const result = await this.#query(
      `INSERT INTO entry_freshness (entry_id, next_check_at)
       SELECT e.id, $1 FROM entries e WHERE e.kind = 'agent'
       ON CONFLICT (entry_id) DO NOTHING`,
      [at],
    );
    return result.rowCount ?? 0;
  }

  async probedWithoutSource(limit: number): Promise<string[]> {
    const result = await this.#read<{ entry_id: string }>(
      'SELECT entry_id FROM entry_freshness WHERE source_url IS NULL AND (health_status IS NOT NULL OR drift IS NOT NULL) LIMIT $1',
      [clampLimit(limit)],
    );
    return result.rows.map((r) => r.entry_id);
  }
}

/**
 * What to do about a database that does not exist (SQLSTATE 3D000), or undefined for any other
 * error: the server's words (`database "registry" does not exist`) say neither that the registry
 * creates its tables but not the database, nor how to create it for the role it logs in as.
 */
function missingDatabase(error: unknown, url: string): string | undefined {
  if ((error as { code?: unknown } | null)?.code !== '3D000') return undefined;
  let database = '<name>';
  let role = '<the role in DATABASE_URL>';
  try {
    const parsed = new URL(url);
    const name = decodeURIComponent(parsed.pathname.slice(1));
    if (name !== '') database = quoteIdentifier(name);
    if (parsed.username !== '') role = quoteIdentifier(decodeURIComponent(parsed.username));
  } catch {
    // A URL pg could connect with but URL cannot parse: the placeholders stay.
  }
  return `the registry creates its tables, not the database: create it first (as a PostgreSQL superuser: CREATE DATABASE ${database} OWNER ${role}), or fix DATABASE_URL if it names the wrong one`;
}
