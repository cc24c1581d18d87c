/**
 * The embedded default store: one SQLite file in REGISTRY_DATA_DIR, through better-sqlite3.
 *
 * Every write (entry upserts and removals, task saves, pruning) goes through one WriteQueue
 * on the connection: the writes queued in the same turn of the event loop are committed
 * together, in one `BEGIN IMMEDIATE` transaction and one fsync (group commit; see
 * write-queue.ts), and each resolves only once that COMMIT has returned. Within the batch the
 * jobs run one after another, so within one process writes are serialised as before. Across
 * processes, `BEGIN IMMEDIATE` takes SQLite's write lock before reading, so the
 * read-check-write of `upsert` is atomic.
 *
 * Reads run directly on the connection: a batch runs synchronously from BEGIN to COMMIT, so
 * a read never sees one half done.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { TaskStore } from '@a2a-js/sdk/server';
import { v4 as uuidv4 } from 'uuid';
import type { EntryKind, RevisionSummary } from '../../contract/types.js';
import type {
  Actor,
  Change,
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
  isUuid,
  normalizeSeq,
  rowToEntry,
  type EntryRowFields,
} from '../common.js';
import { migrateSqlite } from './migrations.js';
import { prepare } from './statements.js';
import { SqliteTaskStore } from './task-store.js';
import { WriteQueue } from './write-queue.js';

export interface SqliteStoreOptions {
  /** Path of the database file; its directory is created if missing. */
  file: string;
  /** How long a write waits for another process's write lock before failing (ms). */
  busyTimeoutMs?: number;
  /** Rows per batch in `scan()`. */
  scanBatchSize?: number;
  /** Most writes committed in one transaction (group commit); the rest wait for the next. */
  maxWriteBatch?: number;
}

interface EntryRow extends EntryRowFields {
  list_seq: number;
}

export class SqliteStore implements RegistryStore {
  readonly engine = 'sqlite';
  readonly taskStore: TaskStore;

  readonly #file: string;
  readonly #busyTimeoutMs: number;
  readonly #scanBatchSize: number;
  readonly #kysely: Kysely<unknown>;
  readonly #writes: WriteQueue;
  #db: Database.Database | undefined;
  #closed = false;

  constructor(options: SqliteStoreOptions) {
    this.#file = resolve(options.file);
    this.#busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    this.#scanBatchSize = Math.max(1, options.scanBatchSize ?? 500);
    // Kysely opens its "connection" lazily, on the first task-store query, by calling this
    // function: by then open() has run, and the SDK shares our better-sqlite3 handle (one
    // file handle, one WAL, the same pragmas) instead of opening a second one.
    this.#kysely = new Kysely<unknown>({
      dialect: new SqliteDialect({ database: async () => this.#requireDb() }),
    });
    this.#writes = new WriteQueue(() => this.#requireDb(), options.maxWriteBatch);
    // Saves go through the write queue; loads and lists are the SDK's DatabaseTaskStore.
    this.taskStore = new SqliteTaskStore(this.#kysely, this.#writes);
  }

  async open(): Promise<void> {
    if (this.#db) return;
    // The SDK task store's Kysely cannot be revived once destroyed by close().
    if (this.#closed) throw new Error('SqliteStore was closed; create a new instance.');
    mkdirSync(dirname(this.#file), { recursive: true });
    const db = new Database(this.#file);
    try {
      // WAL: readers never block the writer and a commit is one sequential append.
      db.pragma('journal_mode = WAL');
      // FULL: in WAL mode, NORMAL only fsyncs the WAL at checkpoints, so a power loss or OS
      // crash can roll back transactions we already acknowledged. FULL fsyncs the WAL on
      // every commit, which is what "a resolved write is durable" requires. (A mere process
      // crash loses nothing in either mode; the OS still holds the written pages.)
      db.pragma('synchronous = FULL');
      // Wait for a concurrent writer (another process on the same file) instead of failing
      // at once with SQLITE_BUSY.
      db.pragma(`busy_timeout = ${this.#busyTimeoutMs}`);
      // Off by default in SQLite; entry_revisions relies on ON DELETE CASCADE.
      db.pragma('foreign_keys = ON');
      migrateSqlite(db, this.#file);
    } catch (error) {
      db.close();
      throw error;
    }
    this.#db = db;
  }

  async close(): Promise<void> {
    const db = this.#db;
    this.#closed = true;
    if (!db) return;
    // Writes already queued are committed (and their promises settled) before the handle goes.
    this.#writes.flush();
    this.#db = undefined;
    try {
      // Fold the WAL back into the main file so the database is one self-contained file at
      // rest (copyable, and the next open has nothing to replay).
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      // Kysely only closes the handle if it ever opened it; close it here in every case.
      await this.#kysely.destroy().catch(() => undefined);
      if (db.open) db.close();
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
    return Number(info.lastInsertRowid);
  }

  #insertRevision(
    db: Database.Database,
    id: string,
    revision: number,
    write: EntryWrite,
    author: string,
    at: string,
  ): void {
    prepare(
      db,
      `INSERT INTO entry_revisions (entry_id, revision, name, description, protocol_version,
         interfaces, document_text, content_hash, author, created_at, origin)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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

  async upsert(write: EntryWrite, actor: Actor): Promise<UpsertOutcome> {
    this.#requireDb();
    // The queue's transaction is BEGIN IMMEDIATE: the write lock is taken before the lookup,
    // so two processes cannot both see "absent" and race (the UNIQUE constraint would then
    // fail one of them).
    return this.#writes.run((db): UpsertOutcome => {
      const found = prepare(db, 'SELECT id FROM entries WHERE kind = ? AND identity_url = ?').get(
        write.kind,
        write.identityUrl,
      ) as { id: string } | undefined;
      const now = new Date().toISOString();

      if (!found) {
        const id = uuidv4();
        // The change row comes first so its sequence can double as the entry's list
        // position: monotonic, never reused, newest highest.
        const seq = this.#recordChange(db, id, 'upsert', now);
        prepare(
          db,
          `INSERT INTO entries (id, list_seq, kind, identity_url, owner, current_revision, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, 1, ?, ?)`,
        ).run(id, seq, write.kind, write.identityUrl, actor.principal, now, now);
        this.#insertRevision(db, id, 1, write, actor.principal, now);
        if (write.freshness) this.#writeFreshness(db, id, write.freshness);
        return { status: 'created', entry: this.#currentById(db, id)! };
      }

      const existing = this.#currentById(db, found.id)!;
      if (existing.owner !== actor.principal && !actor.isAdmin) {
        return { status: 'forbidden', existing };
      }
      const freshness = write.freshness === undefined ? undefined : effectiveFreshness(existing, write.freshness);
      if (freshness !== undefined) this.#writeFreshness(db, existing.id, freshness);
      if (existing.contentHash === write.contentHash) {
        if (freshness !== undefined && freshnessVisiblyChanged(existing, freshness)) {
          this.#recordChange(db, existing.id, 'upsert', now);
          return { status: 'unchanged', entry: this.#currentById(db, existing.id)!, freshened: true };
        }
        return { status: 'unchanged', entry: write.freshness !== undefined ? this.#currentById(db, existing.id)! : existing };
      }
      const revision = existing.revision + 1;
      // The owner stays as it is: an admin fixing someone's entry does not take it over.
      this.#insertRevision(db, existing.id, revision, write, actor.principal, now);
      prepare(db, 'UPDATE entries SET current_revision = ?, updated_at = ? WHERE id = ?').run(
        revision,
        now,
        existing.id,
      );
      this.#recordChange(db, existing.id, 'upsert', now);
      return { status: 'updated', entry: this.#currentById(db, existing.id)! };
    });
  }

  async get(id: string, revision?: number): Promise<StoredEntry | undefined> {
    const db = this.#requireDb();
    if (!isUuid(id)) return undefined;
    // Ids are stored lowercase; accept any case, as PostgreSQL's uuid type does.
    id = id.toLowerCase();
    if (revision === undefined) return this.#currentById(db, id);
    if (!Number.isSafeInteger(revision) || revision < 1) return undefined;
    const row = prepare(db, `SELECT ${ENTRY_COLUMNS} FROM ${REVISION_JOIN} WHERE e.id = ? AND r.revision = ?`).get(id, revision) as
      | EntryRow
      | undefined;
    return row ? rowToEntry(row) : undefined;
  }

  async revisions(id: string, limit: number): Promise<RevisionSummary[]> {
    const db = this.#requireDb();
    if (!isUuid(id)) return [];
    const rows = prepare(
      db,
      'SELECT revision, created_at FROM entry_revisions WHERE entry_id = ? ORDER BY revision DESC LIMIT ?',
    ).all(id.toLowerCase(), clampLimit(limit)) as { revision: number; created_at: string }[];
    return rows.map((row) => ({ revision: row.revision, updatedAt: row.created_at }));
  }

  async list(query: ListQuery): Promise<ListResult> {
    const db = this.#requireDb();
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
    if (query.after !== undefined) {
      where.push('e.list_seq < ?');
      params.push(decodeCursor(query.after));
    }
    const rows = prepare(
      db,
      `SELECT ${ENTRY_COLUMNS} FROM ${CURRENT_JOIN}
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY e.list_seq DESC LIMIT ?`,
    ).all(...params, limit + 1) as EntryRow[];
    const page = rows.slice(0, limit);
    const result: ListResult = { entries: page.map(rowToEntry) };
    if (rows.length > limit) result.next = encodeCursor(page[page.length - 1]!.list_seq);
    return result;
  }

  async remove(id: string, actor: Actor): Promise<DeleteOutcome> {
    this.#requireDb();
    if (!isUuid(id)) return { status: 'not-found' };
    id = id.toLowerCase();
    return this.#writes.run((db): DeleteOutcome => {
      const existing = this.#currentById(db, id);
      if (!existing) return { status: 'not-found' };
      if (existing.owner !== actor.principal && !actor.isAdmin) {
        return { status: 'forbidden', existing };
      }
      // entry_revisions go with it (ON DELETE CASCADE).
      prepare(db, 'DELETE FROM entries WHERE id = ?').run(id);
      this.#recordChange(db, id, 'delete', new Date().toISOString());
      return { status: 'deleted', entry: existing };
    });
  }

  async *scan(): AsyncIterable<StoredEntry> {
    // Keyset batches rather than one `.all()`: memory stays bounded by the batch size, and
    // no read transaction is held open across the consumer's awaits.
    let after = 0;
    for (;;) {
      const db = this.#requireDb();
      const rows = prepare(
        db,
        `SELECT ${ENTRY_COLUMNS} FROM ${CURRENT_JOIN}
         WHERE e.list_seq > ? ORDER BY e.list_seq ASC LIMIT ?`,
      ).all(after, this.#scanBatchSize) as EntryRow[];
      for (const row of rows) yield rowToEntry(row);
      if (rows.length < this.#scanBatchSize) return;
      after = rows[rows.length - 1]!.list_seq;
    }
  }

  async count(): Promise<Record<EntryKind, number>> {
    const db = this.#requireDb();
    const rows = prepare(db, 'SELECT kind, count(*) AS n FROM entries GROUP BY kind').all() as {
      kind: EntryKind;
      n: number;
    }[];
    const counts: Record<EntryKind, number> = { agent: 0, 'mcp-server': 0 };
    for (const row of rows) counts[row.kind] = row.n;
    return counts;
  }

  async changesSince(seq: number, limit: number): Promise<Change[]> {
    const db = this.#requireDb();
    const rows = prepare(db, 'SELECT seq, entry_id, op FROM changes WHERE seq > ? ORDER BY seq ASC LIMIT ?').all(
      normalizeSeq(seq),
      clampLimit(limit),
    ) as { seq: number; entry_id: string; op: Change['op'] }[];
    return rows.map((row) => ({ seq: row.seq, id: row.entry_id, op: row.op }));
  }

  async lastChangeSeq(): Promise<number> {
    const db = this.#requireDb();
    const row = prepare(db, 'SELECT max(seq) AS seq FROM changes').get() as { seq: number | null };
    return row.seq ?? 0;
  }

  async revise(id: string, write: EntryWrite, expectRevision: number): Promise<ReviseOutcome> {
    this.#requireDb();
    if (!isUuid(id)) return { status: 'not-found' };
    id = id.toLowerCase();
    return this.#writes.run((db): ReviseOutcome => {
      const existing = this.#currentById(db, id);
      if (!existing) return { status: 'not-found' };
      if (existing.revision !== expectRevision) return { status: 'stale', entry: existing };
      if (write.identityUrl !== existing.identityUrl) {
        const other = prepare(db, 'SELECT id FROM entries WHERE kind = ? AND identity_url = ?').get(write.kind, write.identityUrl) as
          | { id: string }
          | undefined;
        if (other && other.id !== id) return { status: 'conflict', existing: this.#currentById(db, other.id)! };
      }
      const now = new Date().toISOString();
      if (write.freshness !== undefined) this.#writeFreshness(db, id, write.freshness);
      if (existing.contentHash === write.contentHash) {
        if (write.freshness !== undefined && freshnessVisiblyChanged(existing, write.freshness)) this.#recordChange(db, id, 'upsert', now);
        return { status: 'unchanged', entry: this.#currentById(db, id)! };
      }
      const revision = existing.revision + 1;
      // The owner writes it: the refresh acts for them, as the source they gave says.
      this.#insertRevision(db, id, revision, { ...write, origin: 'refresh' }, existing.owner, now);
      prepare(db, 'UPDATE entries SET current_revision = ?, updated_at = ?, identity_url = ? WHERE id = ?').run(
        revision,
        now,
        write.identityUrl,
        id,
      );
      this.#recordChange(db, id, 'upsert', now);
      return { status: 'updated', entry: this.#currentById(db, id)! };
    });
  }

  async recordCheck(id: string, freshness: FreshnessWrite): Promise<CheckOutcome | undefined> {
    this.#requireDb();
    if (!isUuid(id)) return undefined;
    id = id.toLowerCase();
    return this.#writes.run((db): CheckOutcome | undefined => {
      const existing = this.#currentById(db, id);
      if (!existing) return undefined;
      this.#writeFreshness(db, id, freshness);
      const logged = freshnessVisiblyChanged(existing, freshness);
      if (logged) this.#recordChange(db, id, 'upsert', new Date().toISOString());
      return { entry: this.#currentById(db, id)!, change: logged ? 'logged' : 'quiet' };
    });
  }

  async claimDue(limit: number, retryAt: string, includeUnsourced: boolean): Promise<string[]> {
    this.#requireDb();
    const now = new Date().toISOString();
    // One write transaction (BEGIN IMMEDIATE): another process on the same file waits for it,
    // then sees the claimed rows already moved forward.
    return this.#writes.run((db): string[] => {
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

  async scheduleProbes(at: string): Promise<number> {
    this.#requireDb();
    return this.#writes.run(
      (db): number =>
        prepare(
          db,
          `INSERT INTO entry_freshness (entry_id, next_check_at)
           SELECT e.id, ? FROM entries e
           WHERE e.kind = 'agent' AND NOT EXISTS (SELECT 1 FROM entry_freshness f WHERE f.entry_id = e.id)`,
        ).run(at).changes,
    );
  }

  async pruneTasks(policy: RetentionPolicy): Promise<number> {
    this.#requireDb();
    const finished = FINISHED_TASK_STATES.map(() => '?').join(', ');
    const cutoff = Date.now() - policy.maxAgeMs;
    return this.#writes.run((db): number => {
      // The first task beyond the newest maxCount (all tasks count towards the limit, but
      // only finished ones are ever removed: a running task may still be resumed).
      const boundary = prepare(
        db,
        `SELECT status_last_updated, id, tenant, owner FROM tasks
         ORDER BY status_last_updated DESC, id DESC, tenant DESC, owner DESC
         LIMIT 1 OFFSET ?`,
      ).get(Math.max(0, Math.floor(policy.maxCount))) as
        | { status_last_updated: number; id: string; tenant: string; owner: string }
        | undefined;
      let removed: number;
      if (boundary) {
        removed = prepare(
          db,
          `DELETE FROM tasks WHERE status_state IN (${finished})
             AND (status_last_updated < ?
                  OR (status_last_updated, id, tenant, owner) <= (?, ?, ?, ?))`,
        ).run(
          ...FINISHED_TASK_STATES,
          cutoff,
          boundary.status_last_updated,
          boundary.id,
          boundary.tenant,
          boundary.owner,
        ).changes;
      } else {
        removed = prepare(
          db,
          `DELETE FROM tasks WHERE status_state IN (${finished}) AND status_last_updated < ?`,
        ).run(...FINISHED_TASK_STATES, cutoff).changes;
      }
      if (removed > 0) {
        // Push-notification configs of tasks that no longer exist are dead weight.
        prepare(
          db,
          `DELETE FROM push_notification_configs AS p WHERE NOT EXISTS (
             SELECT 1 FROM tasks t WHERE t.tenant = p.tenant AND t.owner = p.owner AND t.id = p.task_id)`,
        ).run();
      }
      return removed;
    });
  }
}
