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
import { Kysely, PostgresDialect } from 'kysely';
import { DatabaseTaskStore } from '@a2a-js/sdk/server/database';
import type { TaskStore } from '@a2a-js/sdk/server';
import { v4 as uuidv4 } from 'uuid';
import type { EntryKind, RevisionSummary } from '../../contract/types.js';
import type {
  Actor,
  Change,
  ChangeSubscription,
  DeleteOutcome,
  EntryWrite,
  ListQuery,
  CheckOutcome,
  FreshnessWrite,
  ListResult,
  RegistryStore,
  RetentionPolicy,
  ReviseOutcome,
  StoredEntry,
  UpsertOutcome,
} from '../types.js';
import {
  CURRENT_JOIN,
  ENTRY_COLUMNS,
  FINISHED_TASK_STATES,
  FRESHNESS_COLUMNS,
  REVISION_JOIN,
  effectiveFreshness,
  freshnessValues,
  freshnessVisiblyChanged,
  clampLimit,
  decodeCursor,
  encodeCursor,
  isEntryKind,
  isUuid,
  normalizeSeq,
  rowToEntry,
  type EntryRowFields,
} from '../common.js';
import { migratePostgres } from './migrations.js';
import { listenForChanges } from './listen.js';

export interface PostgresStoreOptions {
  /** postgres:// or postgresql:// connection URL. */
  url: string;
  /** Connections per process (default 10). Mind max_connections × replicas. */
  poolMax?: number;
  /** Rows per batch in `scan()`. */
  scanBatchSize?: number;
  /** Server-side limit for one statement (ms, default 15 s). */
  statementTimeoutMs?: number;
  /** Told when a pooled connection breaks (it is replaced by itself); e.g. to log it. */
  onConnectionError?: (error: Error) => void;
}

interface EntryRow extends EntryRowFields {
  list_seq: string;
}

/** How often `upsert` retries when the entry it found vanished (deleted) before it locked it. */
const MAX_UPSERT_ATTEMPTS = 5;
const PING_TIMEOUT_MS = 3000;

/** Removes the password from a URL before it appears in an error message. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured PostgreSQL database';
  }
}

type Queryable = Pick<pg.PoolClient, 'query'>;

export class PostgresStore implements RegistryStore {
  readonly engine = 'postgres';
  readonly taskStore: TaskStore;

  readonly #url: string;
  readonly #pool: pg.Pool;
  readonly #kysely: Kysely<unknown>;
  readonly #scanBatchSize: number;
  #opened = false;
  #closed = false;
  /** Open change subscriptions, closed with the store so none outlives it. */
  readonly #subscriptions = new Set<ChangeSubscription>();

  constructor(options: PostgresStoreOptions) {
    this.#url = options.url;
    this.#scanBatchSize = Math.max(1, options.scanBatchSize ?? 500);
    this.#pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolMax ?? 10,
      // Fail a request quickly when the database is unreachable instead of queueing forever.
      connectionTimeoutMillis: 5000,
      // Give idle connections back, so replicas × pool size does not pin max_connections.
      idleTimeoutMillis: 30_000,
      // A runaway query must not hold a connection (and locks) indefinitely...
      statement_timeout: options.statementTimeoutMs ?? 15_000,
      // ...nor a client that died mid-transaction keep its row locks.
      idle_in_transaction_session_timeout: 30_000,
      // Client-side backstop when the server cannot even answer (network partition).
      query_timeout: (options.statementTimeoutMs ?? 15_000) + 5000,
      // Notice half-open connections after a failover instead of waiting on them.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      application_name: 'a2a-registry',
    });
    // An idle client whose connection drops (database restart, failover) emits 'error' on
    // the pool; without a listener Node would crash the process. The pool already discards
    // that client and opens fresh connections on demand, which is how we recover by ourselves.
    const onConnectionError = options.onConnectionError ?? (() => undefined);
    this.#pool.on('error', (error) => onConnectionError(error));
    // A connection that drops while checked out (a query in flight when the server restarts)
    // makes pg emit 'error' on that client, and pg-pool listens only on idle ones: the
    // emit would be an uncaught exception. The failed query already rejects, and the client,
    // now marked unusable, is discarded on release; this listener only absorbs the echo.
    // Registered per connection so it also covers Kysely's (the SDK task store's) checkouts.
    this.#pool.on('connect', (client) => {
      client.on('error', (error) => onConnectionError(error));
    });
    this.#kysely = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: this.#pool }) });
    this.taskStore = new DatabaseTaskStore(this.#kysely);
  }

  async open(): Promise<void> {
    if (this.#opened) return;
    if (this.#closed) throw new Error('PostgresStore was closed; create a new instance.');
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw new Error(`Cannot connect to ${redact(this.#url)}: ${(error as Error).message}`, { cause: error });
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
    } catch (error) {
      failure = error as Error;
      throw error;
    } finally {
      client.release(failure);
    }
    this.#opened = true;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.#subscriptions].map((subscription) => subscription.close()));
    // Kysely ends the pool only if it ever used it; end it here otherwise.
    await this.#kysely.destroy();
    if (!this.#pool.ending) await this.#pool.end();
  }

  async ping(): Promise<boolean> {
    if (this.#closed) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
    });
    // pool.query releases a failed connection as broken, so the pool heals itself.
    const probe = this.#pool.query('SELECT 1').then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([probe, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Runs `fn` in a transaction on one connection. On any error the connection is released
   * as broken and discarded: after a failed query we cannot be sure what state it is in.
   */
  async #transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    let failure: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release(failure);
    }
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
    await db.query(
      `INSERT INTO entry_revisions (entry_id, revision, name, description, protocol_version,
         interfaces, document_text, content_hash, author, created_at, origin)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
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

  async #recordChange(db: Queryable, id: string, op: Change['op']): Promise<void> {
    await db.query('SELECT registry_record_change($1, $2)', [id, op]);
  }

  /**
   * Per-identity atomicity across replicas: `INSERT ... ON CONFLICT (kind, identity_url) DO
   * NOTHING` either creates the entry or, if another transaction holds or committed that
   * identity, waits for it and inserts nothing. The existing row is then locked with
   * `SELECT ... FOR UPDATE`, so the owner check, the content comparison and the new revision
   * happen while no one else can touch this entry. If the row disappeared in between (a
   * concurrent unregister), the whole transaction is retried and will create it afresh.
   */
  async upsert(write: EntryWrite, actor: Actor): Promise<UpsertOutcome> {
    for (let attempt = 1; attempt <= MAX_UPSERT_ATTEMPTS; attempt++) {
      const outcome = await this.#transaction(async (db): Promise<UpsertOutcome | undefined> => {
        const now = new Date();
        const id = uuidv4();
        const inserted = await db.query<{ id: string }>(
          `INSERT INTO entries (id, kind, identity_url, owner, current_revision, created_at, updated_at)
           VALUES ($1, $2, $3, $4, 1, $5, $5)
           ON CONFLICT (kind, identity_url) DO NOTHING
           RETURNING id`,
          [id, write.kind, write.identityUrl, actor.principal, now],
        );
        if (inserted.rowCount === 1) {
          await this.#insertRevision(db, id, 1, write, actor.principal, now);
          if (write.freshness) await this.#writeFreshness(db, id, write.freshness);
          await this.#recordChange(db, id, 'upsert');
          return { status: 'created', entry: (await this.#current(db, id))! };
        }

        // Lock the entry row alone: locking through the revisions join would make a
        // concurrent revision bump look like a vanished row (EvalPlanQual re-checks the join).
        const locked = await db.query<{ id: string }>(
          'SELECT id FROM entries WHERE kind = $1 AND identity_url = $2 FOR UPDATE',
          [write.kind, write.identityUrl],
        );
        const existingId = locked.rows[0]?.id;
        if (existingId === undefined) return undefined; // deleted meanwhile: retry
        const existing = (await this.#current(db, existingId))!;
        if (existing.owner !== actor.principal && !actor.isAdmin) return { status: 'forbidden', existing };
        const freshness = write.freshness === undefined ? undefined : effectiveFreshness(existing, write.freshness);
        if (freshness !== undefined) await this.#writeFreshness(db, existing.id, freshness);
        if (existing.contentHash === write.contentHash) {
          if (freshness !== undefined && freshnessVisiblyChanged(existing, freshness)) {
            await this.#recordChange(db, existing.id, 'upsert');
            return { status: 'unchanged', entry: (await this.#current(db, existing.id))!, freshened: true };
          }
          return { status: 'unchanged', entry: write.freshness !== undefined ? (await this.#current(db, existing.id))! : existing };
        }

        const revision = existing.revision + 1;
        await this.#insertRevision(db, existing.id, revision, write, actor.principal, now);
        // The owner is left alone: an admin fixing an entry does not take it over.
        await db.query('UPDATE entries SET current_revision = $2, updated_at = $3 WHERE id = $1', [
          existing.id,
          revision,
          now,
        ]);
        await this.#recordChange(db, existing.id, 'upsert');
        return { status: 'updated', entry: (await this.#current(db, existing.id))! };
      });
      if (outcome) return outcome;
    }
    throw new Error(
      `Could not register ${write.identityUrl}: it was deleted and re-created concurrently ${MAX_UPSERT_ATTEMPTS} times in a row.`,
    );
  }

  async get(id: string, revision?: number): Promise<StoredEntry | undefined> {
    if (!isUuid(id)) return undefined;
    const key = id.toLowerCase();
    if (revision === undefined) return this.#current(this.#pool, key);
    if (!Number.isSafeInteger(revision) || revision < 1 || revision > 2_147_483_647) return undefined;
    const { rows } = await this.#pool.query<EntryRow>(
      `SELECT ${ENTRY_COLUMNS} FROM ${REVISION_JOIN} WHERE e.id = $1 AND r.revision = $2`,
      [key, revision],
    );
    return rows[0] ? rowToEntry(rows[0]) : undefined;
  }

  async revisions(id: string, limit: number): Promise<RevisionSummary[]> {
    if (!isUuid(id)) return [];
    const { rows } = await this.#pool.query<{ revision: number | string; created_at: Date | string }>(
      'SELECT revision, created_at FROM entry_revisions WHERE entry_id = $1 ORDER BY revision DESC LIMIT $2',
      [id.toLowerCase(), clampLimit(limit)],
    );
    return rows.map((row) => ({
      revision: Number(row.revision),
      updatedAt: row.created_at instanceof Date ? row.created_at.toISOString() : row.created_at,
    }));
  }

  async list(query: ListQuery): Promise<ListResult> {
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
    if (query.after !== undefined) {
      params.push(decodeCursor(query.after));
      where.push(`e.list_seq < $${params.length}`);
    }
    params.push(limit + 1);
    const { rows } = await this.#pool.query<EntryRow>(
      `SELECT ${ENTRY_COLUMNS} FROM ${CURRENT_JOIN}
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY e.list_seq DESC LIMIT $${params.length}`,
      params,
    );
    const page = rows.slice(0, limit);
    const result: ListResult = { entries: page.map(rowToEntry) };
    if (rows.length > limit) result.next = encodeCursor(Number(page[page.length - 1]!.list_seq));
    return result;
  }

  async remove(id: string, actor: Actor): Promise<DeleteOutcome> {
    if (!isUuid(id)) return { status: 'not-found' };
    const key = id.toLowerCase();
    return this.#transaction(async (db): Promise<DeleteOutcome> => {
      const locked = await db.query('SELECT id FROM entries WHERE id = $1 FOR UPDATE', [key]);
      if (locked.rowCount === 0) return { status: 'not-found' };
      const existing = (await this.#current(db, key))!;
      if (existing.owner !== actor.principal && !actor.isAdmin) return { status: 'forbidden', existing };
      // entry_revisions go with it (ON DELETE CASCADE).
      await db.query('DELETE FROM entries WHERE id = $1', [key]);
      await this.#recordChange(db, key, 'delete');
      return { status: 'deleted', entry: existing };
    });
  }

  async *scan(): AsyncIterable<StoredEntry> {
    // Keyset batches: bounded memory, and no transaction or cursor held open while the
    // consumer works through a batch.
    let after = 0;
    for (;;) {
      const { rows } = await this.#pool.query<EntryRow>(
        `SELECT ${ENTRY_COLUMNS} FROM ${CURRENT_JOIN}
         WHERE e.list_seq > $1 ORDER BY e.list_seq ASC LIMIT $2`,
        [after, this.#scanBatchSize],
      );
      for (const row of rows) yield rowToEntry(row);
      if (rows.length < this.#scanBatchSize) return;
      after = Number(rows[rows.length - 1]!.list_seq);
    }
  }

  async count(): Promise<Record<EntryKind, number>> {
    const { rows } = await this.#pool.query<{ kind: string; n: string }>(
      'SELECT kind, count(*) AS n FROM entries GROUP BY kind',
    );
    const counts: Record<EntryKind, number> = { agent: 0, 'mcp-server': 0 };
    for (const row of rows) if (isEntryKind(row.kind)) counts[row.kind] = Number(row.n);
    return counts;
  }

  async changesSince(seq: number, limit: number): Promise<Change[]> {
    const { rows } = await this.#pool.query<{ seq: string; entry_id: string; op: Change['op'] }>(
      'SELECT seq, entry_id, op FROM changes WHERE seq > $1 ORDER BY seq ASC LIMIT $2',
      [normalizeSeq(seq), clampLimit(limit)],
    );
    return rows.map((row) => ({ seq: Number(row.seq), id: row.entry_id, op: row.op }));
  }

  async lastChangeSeq(): Promise<number> {
    const { rows } = await this.#pool.query<{ seq: string }>('SELECT coalesce(max(seq), 0) AS seq FROM changes');
    return Number(rows[0]?.seq ?? 0);
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
    if (this.#closed) throw new Error('PostgresStore is closed.');
    const listener = await listenForChanges(this.#url, onChange, { onError });
    const subscription: ChangeSubscription = {
      close: async () => {
        this.#subscriptions.delete(subscription);
        await listener.close();
      },
    };
    this.#subscriptions.add(subscription);
    return subscription;
  }

  async revise(id: string, write: EntryWrite, expectRevision: number): Promise<ReviseOutcome> {
    if (!isUuid(id)) return { status: 'not-found' };
    const key = id.toLowerCase();
    return this.#transaction(async (db): Promise<ReviseOutcome> => {
      const locked = await db.query('SELECT id FROM entries WHERE id = $1 FOR UPDATE', [key]);
      if (locked.rowCount === 0) return { status: 'not-found' };
      const existing = (await this.#current(db, key))!;
      if (existing.revision !== expectRevision) return { status: 'stale', entry: existing };
      if (write.identityUrl !== existing.identityUrl) {
        // Serialised with registrations of that identity by the unique key: the UPDATE below
        // fails on a concurrent insert, and this check catches a committed one.
        const other = await db.query<{ id: string }>('SELECT id FROM entries WHERE kind = $1 AND identity_url = $2', [write.kind, write.identityUrl]);
        const otherId = other.rows[0]?.id;
        if (otherId !== undefined && otherId !== key) return { status: 'conflict', existing: (await this.#current(db, otherId))! };
      }
      if (write.freshness !== undefined) await this.#writeFreshness(db, key, write.freshness);
      if (existing.contentHash === write.contentHash) {
        if (write.freshness !== undefined && freshnessVisiblyChanged(existing, write.freshness)) await this.#recordChange(db, key, 'upsert');
        return { status: 'unchanged', entry: (await this.#current(db, key))! };
      }
      const now = new Date();
      const revision = existing.revision + 1;
      // The owner writes it: the refresh acts for them, as the source they gave says.
      await this.#insertRevision(db, key, revision, { ...write, origin: 'refresh' }, existing.owner, now);
      await db.query('UPDATE entries SET current_revision = $2, updated_at = $3, identity_url = $4 WHERE id = $1', [
        key,
        revision,
        now,
        write.identityUrl,
      ]);
      await this.#recordChange(db, key, 'upsert');
      return { status: 'updated', entry: (await this.#current(db, key))! };
    });
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
    const { rows } = await this.#pool.query<{ entry_id: string }>(
      `UPDATE entry_freshness SET next_check_at = $1
       WHERE entry_id IN (
         SELECT entry_id FROM entry_freshness
         WHERE next_check_at <= now() AND (source_url IS NOT NULL OR $2)
         ORDER BY next_check_at LIMIT $3
         FOR UPDATE SKIP LOCKED)
       RETURNING entry_id`,
      [retryAt, includeUnsourced, clampLimit(limit)],
    );
    return rows.map((r) => r.entry_id);
  }

  async scheduleProbes(at: string): Promise<number> {
    const result = await this.#pool.query(
      `INSERT INTO entry_freshness (entry_id, next_check_at)
       SELECT e.id, $1 FROM entries e WHERE e.kind = 'agent'
       ON CONFLICT (entry_id) DO NOTHING`,
      [at],
    );
    return result.rowCount ?? 0;
  }

  async pruneTasks(policy: RetentionPolicy): Promise<number> {
    const cutoff = Date.now() - policy.maxAgeMs;
    const finished = [...FINISHED_TASK_STATES];
    return this.#transaction(async (db) => {
      // The first task beyond the newest maxCount. All tasks count towards the limit, but
      // only finished ones are removed: a running task may still be resumed.
      const boundary = await db.query<{ status_last_updated: string; id: string; tenant: string; owner: string }>(
        `SELECT status_last_updated, id, tenant, owner FROM tasks
         ORDER BY status_last_updated DESC, id DESC, tenant DESC, owner DESC
         LIMIT 1 OFFSET $1`,
        [Math.max(0, Math.floor(policy.maxCount))],
      );
      const b = boundary.rows[0];
      const deleted = b
        ? await db.query(
            `DELETE FROM tasks WHERE status_state = ANY($1::text[])
               AND (status_last_updated < $2
                    OR (status_last_updated, id, tenant, owner) <= ($3::bigint, $4, $5, $6))`,
            [finished, cutoff, b.status_last_updated, b.id, b.tenant, b.owner],
          )
        : await db.query('DELETE FROM tasks WHERE status_state = ANY($1::text[]) AND status_last_updated < $2', [
            finished,
            cutoff,
          ]);
      const removed = deleted.rowCount ?? 0;
      if (removed > 0) {
        await db.query(
          `DELETE FROM push_notification_configs p WHERE NOT EXISTS (
             SELECT 1 FROM tasks t WHERE t.tenant = p.tenant AND t.owner = p.owner AND t.id = p.task_id)`,
        );
      }
      return removed;
    });
  }
}
