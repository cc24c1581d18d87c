/**
 * Durable tasks on SQLite, in the SDK's `tasks` table (the layout @a2a-js/sdk's
 * DatabaseTaskStore and its `a2a-db` tools use, so they keep reading what we write). Saves and
 * pruning go through the store's write queue (group commit); reads run on the connection with
 * statements compiled once.
 */
import type Database from 'better-sqlite3';
import { FINISHED_TASK_STATES, SQLITE_DELETE_BATCH_ROWS, TASK_SAVE_KEEPS_FINISHED, taskShare } from '../common.js';
import type { BatchedDeletion, RetentionPolicy, TaskKey, TaskListQuery, TaskRecords, TaskRow, TaskScope } from '../types.js';
import { prepare } from './statements.js';
import type { WriteJob } from './write-queue.js';

/**
 * DatabaseTaskStore.save's upsert: the key is the table's primary key (tenant, owner, id); a
 * finished task is not replaced by an unfinished one (TASK_SAVE_KEEPS_FINISHED).
 */
const SAVE_SQL = `
  INSERT INTO tasks (tenant, owner, id, context_id, status_last_updated, status_state,
                     status, artifacts, history, metadata, protocol_version)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (tenant, owner, id) DO UPDATE SET
    context_id = excluded.context_id, status_last_updated = excluded.status_last_updated,
    status_state = excluded.status_state, status = excluded.status, artifacts = excluded.artifacts,
    history = excluded.history, metadata = excluded.metadata, protocol_version = excluded.protocol_version
  WHERE ${TASK_SAVE_KEEPS_FINISHED}`;

const KEY_COLUMNS = 'tenant, owner, id, context_id, status_last_updated, status_state, status, metadata, protocol_version';

/**
 * Writes a task row inside the caller's transaction (a save, or an acknowledgement with its write):
 * false when the stored row was kept (finished, and `row` is not).
 * Bound by position: named parameters made better-sqlite3 look each one up in a copy of the row.
 */
export function saveTaskRowIn(db: Database.Database, row: TaskRow): boolean {
  const { changes } = prepare(db, SAVE_SQL).run(
    row.tenant,
    row.owner,
    row.id,
    row.context_id,
    row.status_last_updated,
    row.status_state,
    row.status,
    row.artifacts,
    row.history,
    row.metadata,
    row.protocol_version,
  );
  // An upsert whose update the condition skips changes no row.
  return changes > 0;
}

export class SqliteTaskRecords implements TaskRecords {
  constructor(
    private readonly db: () => Database.Database,
    /** Runs a write job in the store's group commit, with its fault handling (`alone`: a transaction of its own, write-queue.ts). */
    private readonly write: <T>(job: WriteJob<T>, options?: { alone?: boolean }) => Promise<T>,
    /** Runs a read with the store's fault handling. */
    private readonly read: <T>(fn: () => T) => Promise<T>,
  ) {}

  save(row: TaskRow): Promise<boolean> {
    // Copied now: the caller may reuse the object before the batch is flushed.
    const values = { ...row };
    return this.write((db) => saveTaskRowIn(db, values));
  }

  async remove(scope: TaskScope, id: string): Promise<void> {
    await this.write((db) => prepare(db, 'DELETE FROM tasks WHERE tenant = ? AND owner = ? AND id = ?').run(scope.tenant, scope.owner, id));
  }

  load(scope: TaskScope, id: string): Promise<TaskRow | undefined> {
    return this.read(
      () =>
        prepare(this.db(), `SELECT ${KEY_COLUMNS}, artifacts, history FROM tasks WHERE tenant = ? AND owner = ? AND id = ?`).get(
          scope.tenant,
          scope.owner,
          id,
        ) as TaskRow | undefined,
    );
  }

  existing(keys: readonly TaskKey[]): Promise<TaskKey[]> {
    if (keys.length === 0) return Promise.resolve([]);
    // One statement whatever the number of keys (a JSON array of them), each looked up by the primary key.
    const list = JSON.stringify(keys.map((k) => [k.tenant, k.owner, k.id]));
    return this.read(
      () =>
        prepare(
          this.db(),
          `SELECT t.tenant, t.owner, t.id FROM json_each(?) AS k JOIN tasks AS t
             ON t.tenant = json_extract(k.value, '$[0]') AND t.owner = json_extract(k.value, '$[1]') AND t.id = json_extract(k.value, '$[2]')`,
        ).all(list) as TaskKey[],
    );
  }

  list(scope: TaskScope, query: TaskListQuery): Promise<{ rows: TaskRow[]; total: number }> {
    return this.read(() => {
      const db = this.db();
      const where = ['tenant = ?', 'owner = ?'];
      const params: (string | number)[] = [scope.tenant, scope.owner];
      if (query.contextId) {
        where.push('context_id = ?');
        params.push(query.contextId);
      }
      if (query.state) {
        where.push('status_state = ?');
        params.push(query.state);
      }
      if (query.updatedAfter !== undefined) {
        where.push('status_last_updated >= ?');
        params.push(query.updatedAfter);
      }
      const filter = where.join(' AND ');
      const total = (prepare(db, `SELECT count(*) AS n FROM tasks WHERE ${filter}`).get(...params) as { n: number }).n;
      const page = [...params];
      let keyset = '';
      if (query.before) {
        keyset = ' AND (status_last_updated < ? OR (status_last_updated = ? AND id < ?))';
        page.push(query.before.updated, query.before.updated, query.before.id);
      }
      const columns = `${KEY_COLUMNS}, ${query.withArtifacts ? 'artifacts' : 'NULL AS artifacts'}, ${query.withHistory ? 'history' : 'NULL AS history'}`;
      const rows = prepare(
        db,
        `SELECT ${columns} FROM tasks WHERE ${filter}${keyset} ORDER BY status_last_updated DESC, id DESC LIMIT ?`,
      ).all(...page, query.limit) as TaskRow[];
      return { rows, total };
    });
  }

  async prune(policy: RetentionPolicy, options: BatchedDeletion = {}): Promise<number> {
    const finished = FINISHED_TASK_STATES.map(() => '?').join(', ');
    // Past their age first, whoever's; then, if the tasks left are more than the count, each
    // owner over its share of it (taskShare) loses its oldest finished tasks down to the share.
    // (All tasks count towards the limit, but only finished ones are ever removed: a running
    // task may still be resumed.)
    let removed = await this.#deleteWhere(`status_state IN (${finished}) AND status_last_updated < ?`, [...FINISHED_TASK_STATES, Date.now() - policy.maxAgeMs], 0, options);
    const owners = await this.read(
      () => prepare(this.db(), 'SELECT tenant, owner, count(*) AS n FROM tasks GROUP BY tenant, owner').all() as Array<TaskScope & { n: number }>,
    );
    const share = taskShare(owners.map((o) => o.n), policy.maxCount);
    for (const owner of owners) {
      if (share === undefined || owner.n <= share || options.signal?.aborted) continue;
      // The owner's first task beyond its newest `share` (by its own index): it and every finished one older go.
      const boundary = await this.read(
        () =>
          prepare(
            this.db(),
            `SELECT status_last_updated, id FROM tasks WHERE tenant = ? AND owner = ?
             ORDER BY status_last_updated DESC, id DESC LIMIT 1 OFFSET ?`,
          ).get(owner.tenant, owner.owner, share) as { status_last_updated: number; id: string } | undefined,
      );
      if (!boundary) continue;
      removed = await this.#deleteWhere(
        `tenant = ? AND owner = ? AND status_state IN (${finished}) AND (status_last_updated, id) <= (?, ?)`,
        [owner.tenant, owner.owner, ...FINISHED_TASK_STATES, boundary.status_last_updated, boundary.id],
        removed,
        options,
      );
    }
    if (removed > 0) {
      // Push-notification configs of tasks that no longer exist are dead weight.
      await this.write((db) =>
        prepare(
          db,
          `DELETE FROM push_notification_configs AS p WHERE NOT EXISTS (
             SELECT 1 FROM tasks t WHERE t.tenant = p.tenant AND t.owner = p.owner AND t.id = p.task_id)`,
        ).run(),
      );
    }
    return removed;
  }

  /**
   * Deletes the tasks matching `condition`, a bounded batch per transaction: each holds the write
   * lock, and the event loop (better-sqlite3 is synchronous), for a moment, however many tasks
   * have piled up. In no particular order: the condition fixes what goes, and sorting would read
   * every task each time. `removed`: how many went before (progress counts on from it); returns
   * that with this condition's added.
   */
  async #deleteWhere(condition: string, params: readonly (string | number)[], removed: number, options: BatchedDeletion): Promise<number> {
    while (!options.signal?.aborted) {
      const deleted = await this.write(
        (db): number =>
          prepare(
            db,
            `DELETE FROM tasks WHERE rowid IN (
               SELECT rowid FROM tasks WHERE ${condition} LIMIT ${SQLITE_DELETE_BATCH_ROWS})`,
          ).run(...params).changes,
        // Its own transaction, without a savepoint that would first copy every page it touches.
        { alone: true },
      );
      removed += deleted;
      if (deleted > 0) options.progress?.(removed);
      if (deleted < SQLITE_DELETE_BATCH_ROWS) break;
    }
    return removed;
  }
}
