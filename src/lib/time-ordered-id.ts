/**
 * Time-ordered UUIDs (v7) for ids that key B-trees: a new row goes at the end of its id-keyed
 * indexes instead of on a random page each. For an entry that is most of what a bulk import's
 * inserts cost once the database outgrows the page cache; for a registration's task it is two
 * index pages fewer written per commit (the task's key and its context's). 73 of the 128 bits
 * stay random (uuid's 32-bit counter field, given our random bytes, is 31 random bits and a 0),
 * so an id is still unguessable; what it shows is when it was made. Ids of one millisecond are
 * in random order: nothing is ordered by them (search ties go by list_seq, as `list` orders:
 * ../search/ranking.ts).
 */
import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

/** Random bytes for the ids, drawn in bulk: uuid's own draw (one random call per id) was ~5 µs an id. */
const pool = { bytes: new Uint8Array(4096), used: 4096 };

export function timeOrderedId(): string {
  if (pool.used + 16 > pool.bytes.length) {
    randomFillSync(pool.bytes);
    pool.used = 0;
  }
  const random = pool.bytes.subarray(pool.used, (pool.used += 16));
  return uuidv7({ random });
}
