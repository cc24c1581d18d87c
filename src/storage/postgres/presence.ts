/**
 * Which registry replicas run on a database, as `a2a-registry migrate --force` asks before it
 * replaces what the database holds: a replica left running on replaced data keeps the old entries
 * in its search index and waits for change numbers past the new log's.
 *
 * Sessions' application_name told them apart, but a DATABASE_URL's `?application_name=` wins over
 * the one the registry sets, so a replica named by its operator was not seen. Instead every
 * replica holds a shared advisory lock for as long as its store is open, on a session of its own
 * (taken again after a reconnection), and the migration takes the same lock exclusively inside its
 * transaction: refused while any replica holds it, and a replica starting meanwhile waits for the
 * migration to commit. The operator's application_name stays as it was set.
 */
import type pg from 'pg';
import { listenOn, type ChangeListener, type ListenOptions } from './listen.js';
import { REPLICA_PRESENCE_LOCK_KEY } from './migrations.js';

/** Nothing is sent on it: listening only keeps the session (and its lock) open and re-taken. */
const PRESENCE_CHANNEL = 'registry_replica_presence';

/** Holds this process's share of the presence lock until closed; resolves once it is held. */
export function holdReplicaPresence(url: string, onError: NonNullable<ListenOptions['onError']>): Promise<ChangeListener> {
  return listenOn(url, PRESENCE_CHANNEL, () => undefined, {
    onError,
    onConnect: (client) => client.query('SELECT pg_advisory_lock_shared($1)', [REPLICA_PRESENCE_LOCK_KEY]),
  });
}

/**
 * Takes the presence lock exclusively for the rest of `client`'s transaction; returns how many
 * replicas hold it instead (0: none runs, and none starts before the transaction ends).
 */
export async function lockOutReplicas(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ free: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS free', [REPLICA_PRESENCE_LOCK_KEY]);
  if (rows[0]!.free) return 0;
  // A bigint advisory key is kept as classid (high half) and objid (low half), objsubid 1.
  const { rows: holders } = await client.query<{ n: number }>(
    `SELECT count(DISTINCT pid)::int AS n FROM pg_locks
     WHERE locktype = 'advisory' AND granted AND objsubid = 1
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND classid = ($1::bigint >> 32)::text::oid AND objid = ($1::bigint & 4294967295)::text::oid`,
    [REPLICA_PRESENCE_LOCK_KEY],
  );
  return Math.max(1, holders[0]!.n);
}
