/**
 * The background checkpointer's thread (see checkpointer.ts): its own connection to the
 * database, running `PRAGMA wal_checkpoint(PASSIVE)` when asked. A checkpoint fsyncs the WAL
 * and then the database file; here that blocks this thread only, not the event loop that
 * serves requests.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

export interface CheckpointWorkerData {
  file: string;
  busyTimeoutMs: number;
}
export type CheckpointRequest = { type: 'checkpoint' } | { type: 'reopen' } | { type: 'close' };
/** A failure's `code`: the driver's (SQLITE_FULL, SQLITE_IOERR_WRITE...), for the store to name the fault. */
export type CheckpointReply = { type: 'checkpointed' } | { type: 'failed'; message: string; code?: string } | { type: 'closed' };

const { file, busyTimeoutMs } = workerData as CheckpointWorkerData;
const port = parentPort!;
let db: Database.Database | undefined;

function connection(): Database.Database {
  if (!db) {
    // fileMustExist: a deleted database is the store's to notice and restore, not this thread's to re-create empty.
    db = new Database(file, { fileMustExist: true });
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  }
  return db;
}

function closeConnection(): void {
  db?.close();
  db = undefined;
}

port.on('message', (request: CheckpointRequest) => {
  if (request.type === 'close') {
    closeConnection();
    port.postMessage({ type: 'closed' } satisfies CheckpointReply);
    return;
  }
  if (request.type === 'reopen') return closeConnection();
  try {
    connection().pragma('wal_checkpoint(PASSIVE)');
    port.postMessage({ type: 'checkpointed' } satisfies CheckpointReply);
  } catch (error) {
    // The next request starts from a fresh connection (the file may have been restored meanwhile).
    closeConnection();
    const code = (error as { code?: unknown }).code;
    port.postMessage({ type: 'failed', message: (error as Error).message, code: typeof code === 'string' ? code : undefined } satisfies CheckpointReply);
  }
});
