/**
 * Standing searches' definitions on PostgreSQL (issue 19; see WatchRecords in ../types.ts),
 * shared by every replica. A create takes a transaction-scoped advisory lock on the principal
 * before it counts, so two replicas starting watches for the same principal at once cannot
 * together go over the cap; a claim is one UPDATE, so each orphaned watch goes to one replica.
 */
import type pg from 'pg';
import { WATCH_COLUMNS as COLUMNS, WATCH_UPDATABLE_COLUMNS as UPDATABLE } from '../common.js';
import type { ChangeSubscription, HandoverNotice, WatchRecords, WatchRow, WatchRowUpdate } from '../types.js';
import { WATCH_HANDOVER_CHANNEL } from './migrations.js';
import { unstorable, type Statements } from './text-values.js';

type Query = <R extends pg.QueryResultRow>(text: string, params: unknown[]) => Promise<pg.QueryResult<R>>;
type Transaction = <T>(fn: (db: Statements) => Promise<T>) => Promise<T>;
/** LISTENs on a channel on a dedicated connection; `undefined` after a reconnection (see listen.ts). */
type Listen = (channel: string, onPayload: (payload: string | undefined) => void, onError: (err: Error) => void) => Promise<ChangeSubscription>;

/**
 * What starts a decline's payload on the handover channel (declineHandover); a request's is the
 * bare id, as earlier releases send and read it (one of those takes a decline for a request for
 * a watch it does not run, and ignores it). No watch id starts so: it is its task's, a UUID.
 */
const HANDOVER_DECLINED = 'declined:';

/** Lock namespace of the per-principal watch count (pg_advisory_xact_lock(key, hashtext(principal))). */
const WATCH_CAP_LOCK = 0x57a7c4;

/** bigint columns arrive as strings from node-postgres. */
const toRow = (row: Record<string, unknown>): WatchRow => ({
  ...(row as unknown as WatchRow),
  createdAt: Number(row.createdAt),
  expiresAt: Number(row.expiresAt),
  seqFloor: Number(row.seqFloor),
  deliveredSeq: Number(row.deliveredSeq),
  position: Number(row.position),
});

/**
 * Leases (lease_until) are kept on the database server's clock, one clock for every replica. The
 * hub gives its times (a lease's end, "now") on its own host's clock; what counts is how far
 * they are from that host's now, which is laid on the server's: `$n` is that distance in ms.
 * Compared as each replica's own clock said, a replica whose clock ran ahead of another's by
 * more than a lease less its renewal (27 s) found that one's leases run out at every look for
 * free watches (every 10 s), and took its watches over, one replica from the other, for ever:
 * their streams ended "lost", their webhooks sent resyncs.
 */
const serverMs = (param: string): string => `((extract(epoch FROM clock_timestamp()) * 1000)::bigint + ${param}::bigint)`;
/** How far `at` (epoch ms on this host's clock) is from this host's now: what serverMs adds to the server's. */
const fromNow = (at: number): number => Math.round(at - Date.now());

export class PostgresWatchRecords implements WatchRecords {
  constructor(
    private readonly query: Query,
    private readonly transaction: Transaction,
    private readonly listen: Listen,
    /** A statement that only reads: run again on a fresh connection when its own is lost under it (store.ts, #query). */
    private readonly read: Query,
  ) {}

  create(row: WatchRow, holder: string, leaseUntil: number, max?: number): Promise<'created' | 'quota'> {
    return this.transaction(async (db) => {
      if (max !== undefined) {
        await db.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [WATCH_CAP_LOCK, row.principal]);
        const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM watches WHERE principal = $1 AND expires_at > $2', [row.principal, row.createdAt]);
        if (Number(rows[0]!.n) >= max) return 'quota';
      }
      await db.query(
        `INSERT INTO watches (id, tenant, owner, principal, context_id, request, push_configs, created_at, expires_at,
                              seq_floor, delivered_seq, change_seq, holder, lease_until)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, ${serverMs('$14')})`,
        [row.id, row.tenant, row.owner, row.principal, row.contextId, row.request, row.pushConfigs, row.createdAt, row.expiresAt, row.seqFloor, row.deliveredSeq, row.position, holder, fromNow(leaseUntil)],
      );
      return 'created';
    });
  }

  // A watch id or principal PostgreSQL cannot hold is none stored (text-values.ts): nothing to
  // read, change or hand over. A definition holding one (create) is refused by the statement's guard.

  async get(id: string): Promise<WatchRow | undefined> {
    if (unstorable(id)) return undefined;
    const { rows } = await this.read<Record<string, unknown>>(`SELECT ${COLUMNS} FROM watches WHERE id = $1`, [id]);
    return rows[0] ? toRow(rows[0]) : undefined;
  }

  async acknowledge(id: string, holder: string): Promise<boolean> {
    if (unstorable(id)) return false;
    return ((await this.#write('UPDATE watches SET delivered_seq = 0 WHERE id = $1 AND holder = $2', [id, holder])).rowCount ?? 0) > 0;
  }

  async update(id: string, change: WatchRowUpdate): Promise<void> {
    const keys = (Object.keys(change) as (keyof WatchRowUpdate)[]).filter((k) => change[k] !== undefined);
    if (keys.length === 0 || unstorable(id)) return;
    await this.#write(`UPDATE watches SET ${keys.map((k, i) => `${UPDATABLE[k]} = $${i + 2}`).join(', ')} WHERE id = $1`, [id, ...keys.map((k) => change[k])]);
  }

  async remove(id: string): Promise<void> {
    if (unstorable(id)) return;
    await this.#write('DELETE FROM watches WHERE id = $1', [id]);
  }

  async removeHeld(id: string, now: number): Promise<boolean> {
    if (unstorable(id)) return false;
    return ((await this.#write(`DELETE FROM watches WHERE id = $1 AND lease_until >= ${serverMs('$2')}`, [id, fromNow(now)])).rowCount ?? 0) > 0;
  }

  async claim(holder: string, leaseUntil: number, now: number, onlyId?: string): Promise<WatchRow[]> {
    if (unstorable(onlyId)) return [];
    const { rows } =
      onlyId === undefined
        ? await this.#write(`UPDATE watches SET holder = $1, lease_until = ${serverMs('$2')} WHERE lease_until < ${serverMs('$3')} RETURNING ${COLUMNS}`, [holder, fromNow(leaseUntil), fromNow(now)])
        : await this.#write(`UPDATE watches SET holder = $1, lease_until = ${serverMs('$2')} WHERE lease_until < ${serverMs('$3')} AND id = $4 RETURNING ${COLUMNS}`, [
            holder,
            fromNow(leaseUntil),
            fromNow(now),
            onlyId,
          ]);
    return rows.map(toRow);
  }

  async renewLeases(holder: string, leaseUntil: number): Promise<string[]> {
    const { rows } = await this.#write(`UPDATE watches SET lease_until = ${serverMs('$2')} WHERE holder = $1 RETURNING id`, [holder, fromNow(leaseUntil)]);
    return rows.map((r) => String(r.id));
  }

  async release(holder: string, onlyId?: string): Promise<void> {
    if (unstorable(onlyId)) return;
    if (onlyId === undefined) await this.#write('UPDATE watches SET lease_until = 0 WHERE holder = $1', [holder]);
    else await this.#write('UPDATE watches SET lease_until = 0 WHERE holder = $1 AND id = $2', [holder, onlyId]);
  }

  async releaseUntil(holder: string, id: string, until: number): Promise<void> {
    if (unstorable(id)) return;
    await this.#write(`UPDATE watches SET holder = '', lease_until = ${serverMs('$3')} WHERE holder = $1 AND id = $2`, [holder, id, fromNow(until)]);
  }

  async pausedUntil(id: string, now: number): Promise<number | undefined> {
    if (unstorable(id)) return undefined;
    // Back on this host's clock: how far the pause's end is from the server's now, from this host's.
    const { rows } = await this.read<{ left: string }>(
      `SELECT lease_until - ${serverMs('0')} AS left FROM watches WHERE id = $1 AND holder = '' AND lease_until > ${serverMs('$2')}`,
      [id, fromNow(now)],
    );
    return rows[0] ? Date.now() + Number(rows[0].left) : undefined;
  }

  async requestHandover(id: string): Promise<void> {
    if (unstorable(id)) return;
    await this.query('SELECT pg_notify($1, $2)', [WATCH_HANDOVER_CHANNEL, id]);
  }

  async declineHandover(id: string): Promise<void> {
    if (unstorable(id)) return;
    await this.query('SELECT pg_notify($1, $2)', [WATCH_HANDOVER_CHANNEL, HANDOVER_DECLINED + id]);
  }

  onHandoverNotice(listener: (notice: HandoverNotice) => void, onError: (err: Error) => void): Promise<ChangeSubscription> {
    return this.listen(WATCH_HANDOVER_CHANNEL, (payload) => {
      if (!payload) return;
      if (payload.startsWith(HANDOVER_DECLINED)) listener({ kind: 'declined', id: payload.slice(HANDOVER_DECLINED.length) });
      else listener({ kind: 'request', id: payload });
    }, onError);
  }

  async countFor(principal: string, now: number): Promise<number> {
    if (unstorable(principal)) return 0;
    const { rows } = await this.read<{ n: string }>('SELECT count(*) AS n FROM watches WHERE principal = $1 AND expires_at > $2', [principal, now]);
    return Number(rows[0]!.n);
  }

  /** A write in its own transaction (the store's: a commit clears a storage fault). */
  #write(text: string, params: unknown[]): Promise<pg.QueryResult<Record<string, unknown>>> {
    return this.transaction((db) => db.query<Record<string, unknown>>(text, params));
  }
}
