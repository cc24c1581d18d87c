/**
 * Tells a database restored from a dump (`pg_restore --clean`, or a dump loaded into a new
 * database) from the one the registry wrote, and rewinds the watches (standing searches) it holds.
 *
 * A dump holds the watches as current with its change log: restored, each found its position
 * current and sent no `resync`, although it had told its clients of changes since the dump that
 * the restore undid (an entry added since is gone, and its client never hears). SQLite's
 * `a2a-registry restore` rewinds them itself (sqlite/backup.ts); PostgreSQL's tools know nothing
 * of watches. So the database records the object id of its `changes` table: a restore creates
 * the tables anew, with new ids, while the recorded value comes back from the dump. When they
 * differ, every watch is marked behind the change log (position 0: it sends a resync with its
 * current matches), its event numbers jump past any it can have sent since the dump, and its
 * lease (the dump's) is released for the replicas starting now.
 * pg_upgrade keeps table ids, so an upgraded database is not taken for a restored one.
 */
import type pg from 'pg';

const MARKER_KEY = 'changes_table_oid';

/**
 * Event numbers a rewound watch skips: it may have sent events since the dump under numbers the
 * dump does not know, and a client that orders events by number would drop a repeated one.
 */
export const RESTORE_EVENT_NUMBER_GAP = 1_000_000_000;

/** Rewinds the watches of a restored database; returns how many, or undefined when it was not restored. */
export async function rewindWatchesIfRestored(client: pg.PoolClient | pg.Client): Promise<number | undefined> {
  await client.query('BEGIN');
  try {
    const { rows: current } = await client.query<{ oid: string }>("SELECT 'changes'::regclass::oid::bigint AS oid");
    const oid = current[0]!.oid;
    // FOR UPDATE: replicas starting together take turns; the second sees the first one's mark.
    const { rows: marked } = await client.query<{ value: string }>('SELECT value FROM registry_state WHERE key = $1 FOR UPDATE', [MARKER_KEY]);
    let rewound: number | undefined;
    if (marked.length === 0) {
      // A database from before this mark (or a new one): nothing tells whether it was restored.
      await client.query('INSERT INTO registry_state (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [MARKER_KEY, oid]);
    } else if (marked[0]!.value !== oid) {
      // The leases are the dump's, held by processes of its time: released (and their holder
      // cleared, so no process still running one renews it), the replicas starting now take them.
      const { rowCount } = await client.query("UPDATE watches SET change_seq = 0, seq_floor = seq_floor + $1, holder = '', lease_until = 0", [RESTORE_EVENT_NUMBER_GAP]);
      await client.query('UPDATE registry_state SET value = $2 WHERE key = $1', [MARKER_KEY, oid]);
      rewound = rowCount ?? 0;
    }
    await client.query('COMMIT');
    return rewound;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
