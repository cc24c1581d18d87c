/**
 * Standing searches' definitions on SQLite (issue 19; see WatchRecords in ../types.ts). Writes go
 * through the store's write queue (group commit); a create counts and inserts in one job, so
 * the per-principal cap holds however many watches start at once.
 */
import type Database from 'better-sqlite3';
import { WATCH_COLUMNS as COLUMNS, WATCH_UPDATABLE_COLUMNS as UPDATABLE } from '../common.js';
import type { WatchRecords, WatchRow, WatchRowUpdate } from '../types.js';
import { prepare } from './statements.js';
import type { WriteJob } from './write-queue.js';

export class SqliteWatchRecords implements WatchRecords {
  constructor(
    private readonly db: () => Database.Database,
    private readonly write: <T>(job: WriteJob<T>) => Promise<T>,
    private readonly read: <T>(fn: () => T) => Promise<T>,
    /** A serving registry holding the process lock (see WatchRecords.exclusive). */
    readonly exclusive = false,
  ) {}

  create(row: WatchRow, holder: string, leaseUntil: number, max?: number): Promise<'created' | 'quota'> {
    const values = { ...row, holder, leaseUntil };
    return this.write((db) => {
      if (max !== undefined && countFor(db, row.principal, row.createdAt) >= max) return 'quota';
      prepare(
        db,
        `INSERT INTO watches (id, tenant, owner, principal, context_id, request, push_configs, created_at, expires_at,
                              seq_floor, delivered_seq, change_seq, holder, lease_until)
         VALUES (@id, @tenant, @owner, @principal, @contextId, @request, @pushConfigs, @createdAt, @expiresAt,
                 @seqFloor, @deliveredSeq, @position, @holder, @leaseUntil)`,
      ).run(values);
      return 'created';
    });
  }

  acknowledge(id: string, holder: string): Promise<boolean> {
    return this.write((db) => prepare(db, 'UPDATE watches SET delivered_seq = 0 WHERE id = ? AND holder = ?').run(id, holder).changes > 0);
  }

  get(id: string): Promise<WatchRow | undefined> {
    return this.read(() => prepare(this.db(), `SELECT ${COLUMNS} FROM watches WHERE id = ?`).get(id) as WatchRow | undefined);
  }

  update(id: string, change: WatchRowUpdate): Promise<void> {
    const keys = (Object.keys(change) as (keyof WatchRowUpdate)[]).filter((k) => change[k] !== undefined);
    if (keys.length === 0) return Promise.resolve();
    const values = { ...change, id };
    return this.write((db) => {
      prepare(db, `UPDATE watches SET ${keys.map((k) => `${UPDATABLE[k]} = @${k}`).join(', ')} WHERE id = @id`).run(values);
    });
  }

  remove(id: string): Promise<void> {
    return this.write((db) => {
      prepare(db, 'DELETE FROM watches WHERE id = ?').run(id);
    });
  }

  removeHeld(id: string, now: number): Promise<boolean> {
    return this.write((db) => prepare(db, 'DELETE FROM watches WHERE id = ? AND lease_until >= ?').run(id, now).changes > 0);
  }

  claim(holder: string, leaseUntil: number, now: number, onlyId?: string): Promise<WatchRow[]> {
    return this.write((db) =>
      onlyId === undefined
        ? (prepare(db, `UPDATE watches SET holder = ?, lease_until = ? WHERE lease_until < ? RETURNING ${COLUMNS}`).all(holder, leaseUntil, now) as WatchRow[])
        : (prepare(db, `UPDATE watches SET holder = ?, lease_until = ? WHERE lease_until < ? AND id = ? RETURNING ${COLUMNS}`).all(holder, leaseUntil, now, onlyId) as WatchRow[]),
    );
  }

  renewLeases(holder: string, leaseUntil: number): Promise<string[]> {
    return this.write((db) =>
      (prepare(db, 'UPDATE watches SET lease_until = ? WHERE holder = ? RETURNING id').all(leaseUntil, holder) as { id: string }[]).map((r) => r.id),
    );
  }

  release(holder: string, onlyId?: string): Promise<void> {
    return this.write((db) => {
      if (onlyId === undefined) prepare(db, 'UPDATE watches SET lease_until = 0 WHERE holder = ?').run(holder);
      else prepare(db, 'UPDATE watches SET lease_until = 0 WHERE holder = ? AND id = ?').run(holder, onlyId);
    });
  }

  releaseUntil(holder: string, id: string, until: number): Promise<void> {
    return this.write((db) => {
      prepare(db, "UPDATE watches SET holder = '', lease_until = ? WHERE holder = ? AND id = ?").run(until, holder, id);
    });
  }

  pausedUntil(id: string, now: number): Promise<number | undefined> {
    return this.read(
      () => (prepare(this.db(), "SELECT lease_until AS until FROM watches WHERE id = ? AND holder = '' AND lease_until > ?").get(id, now) as { until: number } | undefined)?.until,
    );
  }

  countFor(principal: string, now: number): Promise<number> {
    return this.read(() => countFor(this.db(), principal, now));
  }
}

function countFor(db: Database.Database, principal: string, now: number): number {
  return (prepare(db, 'SELECT count(*) AS n FROM watches WHERE principal = ? AND expires_at > ?').get(principal, now) as { n: number }).n;
}
