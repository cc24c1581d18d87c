/**
 * Checkpoints of the SQLite WAL, off the event loop.
 *
 * With synchronous=NORMAL a checkpoint fsyncs the WAL, copies it into the database file and
 * fsyncs that: ~10–20 ms. SQLite's automatic checkpoint runs inside the COMMIT that crosses its
 * threshold, on the event loop (better-sqlite3 is synchronous), and measured under sustained
 * registrations it was most of the time spent in COMMIT. Here a worker thread with its own
 * connection runs a PASSIVE checkpoint (it never blocks the writer) a moment after writes,
 * at most one at a time. The store keeps SQLite's automatic checkpoint at a higher threshold
 * as a safety net, so the WAL stays bounded even if the thread falls behind.
 */
import { Worker } from 'node:worker_threads';
import type { CheckpointReply, CheckpointRequest, CheckpointWorkerData } from './checkpoint-worker.js';

/** Why a checkpoint failed: the driver's message and code (none when the thread itself failed). */
export interface CheckpointFailure {
  message: string;
  code?: string;
}

/** How long after a write the checkpoint runs: writes in between share it. */
export const CHECKPOINT_DELAY_MS = 250;

export class BackgroundCheckpointer {
  readonly #worker: Worker;
  readonly #onFailure: (failure: CheckpointFailure) => void;
  #scheduled: NodeJS.Timeout | undefined;
  #running = false;
  #wanted = false;
  #closed = false;
  /** Its closing, once begun: a second close (the store's, after a damaged file stopped it) waits for the same. */
  #closing: Promise<void> | undefined;

  readonly #delayMs: number;

  constructor(file: string, busyTimeoutMs: number, onFailure: (failure: CheckpointFailure) => void, delayMs = CHECKPOINT_DELAY_MS) {
    this.#onFailure = onFailure;
    this.#delayMs = delayMs;
    this.#worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), { workerData: { file, busyTimeoutMs } satisfies CheckpointWorkerData });
    // Never what keeps a process alive.
    this.#worker.unref();
    this.#worker.on('message', (reply: CheckpointReply) => {
      if (reply.type === 'closed') return;
      this.#running = false;
      if (reply.type === 'failed') this.#onFailure({ message: reply.message, code: reply.code });
      if (this.#wanted) this.#start();
    });
    this.#worker.on('error', (error) => this.#onFailure({ message: error.message }));
  }

  /** Something was written: a checkpoint follows shortly. */
  written(): void {
    if (this.#closed || this.#scheduled) return;
    this.#scheduled = setTimeout(() => {
      this.#scheduled = undefined;
      this.#start();
    }, this.#delayMs);
    this.#scheduled.unref();
  }

  /** The database file was replaced (restored): the thread's connection must open the new one. */
  reopen(): void {
    if (!this.#closed) this.#post({ type: 'reopen' });
  }

  /**
   * Stops the thread (its connection closed) before the store's own last checkpoint. Every call
   * waits for the connection to be closed: the store's must not close before it, or this one,
   * the last on the file, would checkpoint the WAL into it as it closes.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#scheduled);
    // The connection is closed by its own thread (after a checkpoint under way), then the thread ends.
    const closed = new Promise<void>((resolve) => {
      const onReply = (reply: CheckpointReply) => {
        if (reply.type !== 'closed') return;
        this.#worker.off('message', onReply);
        resolve();
      };
      this.#worker.on('message', onReply);
      this.#worker.once('exit', () => resolve());
    });
    this.#post({ type: 'close' });
    await closed;
    await this.#worker.terminate();
  }

  #start(): void {
    if (this.#closed) return;
    if (this.#running) {
      this.#wanted = true;
      return;
    }
    this.#wanted = false;
    this.#running = true;
    this.#post({ type: 'checkpoint' });
  }

  #post(request: CheckpointRequest): void {
    this.#worker.postMessage(request);
  }
}
