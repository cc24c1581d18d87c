/**
 * Durable tasks on PostgreSQL, in the SDK's `tasks` table (the layout @a2a-js/sdk's
 * DatabaseTaskStore and its `a2a-db` tools use). Plain parameterised queries on the pool.
 */
import type pg from 'pg';
import { DELETE_BATCH_ROWS, FINISHED_TASK_STATES, TASK_SAVE_KEEPS_FINISHED, taskShare } from '../common.js';
import { TASK_CONTEXT_KEY } from './migrations.js';
import { unstorable, type Statements } from './text-values.js';
import type { BatchedDeletion, RetentionPolicy, TaskKey, TaskListQuery, TaskRecords, TaskRow, TaskScope } from '../types.js';

type Query = <R extends pg.QueryResultRow>(text: string, params: unknown[]) => Promise<pg.QueryResult<R>>;
type Transaction = <T>(fn: (db: Statements) => Promise<T>) => Promise<T>;

const COLUMNS = 'tenant, owner, id, context_id, status_last_updated, status_state, status, metadata, protocol_version';

/** bigint arrives as a string from node-postgres. */
const toRow = (row: TaskRow & { status_last_updated: number | string }): TaskRow => ({ ...row, status_last_updated: Number(row.status_last_updated) });

/**
 * Writes a task row inside the caller's transaction (a save, or an acknowledgement with its
 * write): false when the stored row was kept (finished, and `row` is not; TASK_SAVE_KEEPS_FINISHED,
 * checked on the row as the statement locks it, so a save racing another replica's is decided too).
 */
export async function saveTaskRowIn(db: Statements, row: TaskRow): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO tasks (tenant, owner, id, context_id, status_last_updated, status_state,
                        status, artifacts, history, metadata, protocol_version)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (tenant, owner, id) DO UPDATE SET
       context_id = excluded.context_id, status_last_updated = excluded.status_last_updated,
       status_state = excluded.status_state, status = excluded.status, artifacts = excluded.artifacts,
       history = excluded.history, metadata = excluded.metadata, protocol_version = excluded.protocol_version
     WHERE ${TASK_SAVE_KEEPS_FINISHED}`,
    [row.tenant, row.owner, row.id, row.context_id, row.status_last_updated, row.status_state, row.status, row.artifacts, row.history, row.metadata, row.protocol_version],
  );
  return (rowCount ?? 0) > 0;
}

export class PostgresTaskRecords implements TaskRecords {
  constructor(
    private readonly query: Query,
    private readonly transaction: Transaction,
    /** A statement that only reads: run again on a fresh connection when its own is lost under it (store.ts, #query). */
    private readonly read: Query,
  ) {}

  save(row: TaskRow): Promise<boolean> {
    return this.transaction((db) => saveTaskRowIn(db, row));
  }

  // A task id, context id or owner PostgreSQL cannot hold is none stored (text-values.ts).

  async remove(scope: TaskScope, id: string): Promise<void> {
    if (unstorable(scope.owner, id)) return;
    await this.query('DELETE FROM tasks WHERE tenant = $1 AND owner = $2 AND id = $3', [scope.tenant, scope.owner, id]);
  }

  async load(scope: TaskScope, id: string): Promise<TaskRow | undefined> {
    if (unstorable(scope.owner, id)) return undefined;
    const { rows } = await this.read<TaskRow>(`SELECT ${COLUMNS}, artifacts, history FROM tasks WHERE tenant = $1 AND owner = $2 AND id = $3`, [
      scope.tenant,
      scope.owner,
      id,
    ]);
    return rows[0] ? toRow(rows[0]) : undefined;
  }

  async existing(keys: readonly TaskKey[]): Promise<TaskKey[]> {
    if (keys.length === 0) return [];
    // One statement whatever the number of keys (three parallel arrays), each looked up by the primary key.
    const { rows } = await this.read<TaskKey>(
      `SELECT t.tenant, t.owner, t.id FROM unnest($1::text[], $2::text[], $3::text[]) AS k(tenant, owner, id)
         JOIN tasks t ON t.tenant = k.tenant AND t.owner = k.owner AND t.id = k.id`,
      [keys.map((k) => k.tenant), keys.map((k) => k.owner), keys.map((k) => k.id)],
    );
    return rows;
  }

  async list(scope: TaskScope, query: TaskListQuery): Promise<{ rows: TaskRow[]; total: number }> {
    if (unstorable(scope.owner, query.contextId, query.state)) return { rows: [], total: 0 };
    const params: unknown[] = [scope.tenant, scope.owner];
    const where = ['tenant = $1', 'owner = $2'];
    if (query.contextId) {
      params.push(query.contextId);
      // The prefix the context index keys on, then the whole id (migrations.ts, version 14).
      where.push(`${TASK_CONTEXT_KEY('context_id')} = ${TASK_CONTEXT_KEY(`$${params.length}`)} AND context_id = $${params.length}`);
    }
    if (query.state) {
      params.push(query.state);
      where.push(`status_state = $${params.length}`);
    }
    if (query.updatedAfter !== undefined) {
      params.push(query.updatedAfter);
      where.push(`status_last_updated >= $${params.length}`);
    }
    const filter = where.join(' AND ');
    const counted = await this.read<{ n: string }>(`SELECT count(*) AS n FROM tasks WHERE ${filter}`, params);
    const page = [...params];
    let keyset = '';
    if (query.before) {
      page.push(query.before.updated, query.before.id);
      keyset = ` AND (status_last_updated, id) < ($${page.length - 1}::bigint, $${page.length})`;
    }
    page.push(query.limit);
    const columns = `${COLUMNS}, ${query.withArtifacts ? 'artifacts' : 'NULL AS artifacts'}, ${query.withHistory ? 'history' : 'NULL AS history'}`;
    const { rows } = await this.read<TaskRow>(
      `SELECT ${columns} FROM tasks WHERE ${filter}${keyset} ORDER BY status_last_updated DESC, id DESC LIMIT $${page.length}`,
      page,
    );
    return { rows: rows.map(toRow), total: Number(counted.rows[0]?.n ?? 0) };
  }

  async prune(policy: RetentionPolicy, options: BatchedDeletion = {}): Promise<number> {
    const finished = [...FINISHED_TASK_STATES];
    // Past their age first, whoever's; then, if the tasks left are more than the count, each
    // owner over its share of it (taskShare) loses its oldest finished tasks down to the share.
    // (All tasks count towards the limit, but only finished ones are removed: a running task may
    // still be resumed.)
    let removed = await this.#deleteWhere('status_state = ANY($1::text[]) AND status_last_updated < $2', [finished, Date.now() - policy.maxAgeMs], 0, options);
    const owners = await this.read<TaskScope & { n: string }>('SELECT tenant, owner, count(*) AS n FROM tasks GROUP BY tenant, owner', []);
    const share = taskShare(owners.rows.map((o) => Number(o.n)), policy.maxCount);
    for (const owner of owners.rows) {
      if (share === undefined || Number(owner.n) <= share || options.signal?.aborted) continue;
      // The owner's first task beyond its newest `share` (by its own index): it and every finished one older go.
      const boundary = await this.read<{ status_last_updated: string; id: string }>(
        `SELECT status_last_updated, id FROM tasks WHERE tenant = $1 AND owner = $2
         ORDER BY status_last_updated DESC, id DESC LIMIT 1 OFFSET $3`,
        [owner.tenant, owner.owner, share],
      );
      const b = boundary.rows[0];
      if (!b) continue;
      removed = await this.#deleteWhere(
        `tenant = $1 AND owner = $2 AND status_state = ANY($3::text[]) AND (status_last_updated, id) <= ($4::bigint, $5)`,
        [owner.tenant, owner.owner, finished, b.status_last_updated, b.id],
        removed,
        options,
      );
    }
    if (removed > 0) {
      // Push-notification configs of tasks that no longer exist are dead weight.
      await this.query(
        `DELETE FROM push_notification_configs p WHERE NOT EXISTS (
           SELECT 1 FROM tasks t WHERE t.tenant = p.tenant AND t.owner = p.owner AND t.id = p.task_id)`,
        [],
      );
    }
    return removed;
  }

  /**
   * Deletes the tasks matching `condition`, a bounded batch per statement: one DELETE of millions
   * of rows would outlast the statement timeout every time, and nothing would ever go. In no
   * particular order (the condition fixes what goes; sorting would read the whole table for every
   * batch). By row address (a join on the key gets a nested loop from a planner without
   * statistics); the outer condition checks a row changed meanwhile again. `removed`: how many
   * went before (progress counts on from it); returns that with this condition's added.
   */
  async #deleteWhere(condition: string, params: unknown[], removed: number, options: BatchedDeletion): Promise<number> {
    const batch = `DELETE FROM tasks WHERE ctid = ANY(ARRAY(
                     SELECT ctid FROM tasks WHERE ${condition} LIMIT ${DELETE_BATCH_ROWS}))
                   AND ${condition}`;
    while (!options.signal?.aborted) {
      const deleted = (await this.query(batch, params)).rowCount ?? 0;
      removed += deleted;
      if (deleted > 0) options.progress?.(removed);
      if (deleted < DELETE_BATCH_ROWS) break;
    }
    return removed;
  }
}
