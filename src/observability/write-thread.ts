/**
 * Writes bytes to a file descriptor on a thread of its own, one write at a time, so that a write
 * that takes long (a pipe whose reader is slow, a disk under load) never holds the event loop,
 * and so that a caller that must not return before the write ends (the log's last lines at exit
 * or at a crash) can wait for it, synchronously.
 *
 * Why not fs.write, libuv's thread pool, as pino's default destination does: a write handed to the
 * pool cannot be waited for by code that runs synchronously (an 'exit' hook, an uncaught
 * exception's handler), and it may not even have started: it waits behind the pool's other work
 * (the database's fsyncs, DNS lookups, zlib) and on a loaded machine ran after lines written
 * synchronously later, out of order (CI saw a log's first line come after the 399 written at
 * exit, and a crash's fatal line come before 'registry listening').
 *
 * The two threads share memory only: the bytes and their write's outcome, each published by a
 * sequence number that Atomics.wait (the thread; a synchronous caller) and Atomics.waitAsync (the
 * event loop) wait on. Messages between them (postMessage) cost about twice the write's own
 * hand-off per line (measured; docs/benchmarks.md, 2026-12-07, session 50).
 */
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';

/** How a write ended: the bytes written, or the error code of a write that failed (EAGAIN, ENOSPC...). */
export type WriteOutcome = { written: number; error?: undefined } | { written: 0; error: string };

/** The code of a failed write (ENOSPC...), or its message when it has none. */
export const codeOf = (err: unknown): string => (err as NodeJS.ErrnoException).code ?? (err as Error).message;

/** Int32 slots of the shared header. */
const ASKED = 0; // sequence number of the last write asked for
const ENDED = 1; // sequence number of the last write ended
const LENGTH = 2; // bytes asked to be written
const WRITTEN = 3; // bytes the last write wrote
const CODE_LENGTH = 4; // length of its error code (0: no error)
const HEADER_BYTES = 5 * 4;
/** Room for an error code (ENOSPC...) or, for an error without one, the start of its message. */
const CODE_BYTES = 64;
/** The most bytes one write carries; a longer one is written in part (its caller sends the rest, as after any partial write). */
export const MAX_WRITE_BYTES = 64 * 1024;
const DATA_AT = HEADER_BYTES + CODE_BYTES;

/**
 * The thread's side: waits for a write to be asked (a timed wait, so that a terminating thread
 * is never stuck in it), makes it and publishes its outcome. process.getBuiltinModule, not
 * require or import: an eval'd worker is a CommonJS script or an ES module as its process's
 * --input-type says.
 */
const THREAD_SOURCE = `
const { workerData } = process.getBuiltinModule('node:worker_threads');
const { writeSync } = process.getBuiltinModule('node:fs');
const { fd, shared, from } = workerData;
const ints = new Int32Array(shared, 0, ${HEADER_BYTES / 4});
const code = new Uint8Array(shared, ${HEADER_BYTES}, ${CODE_BYTES});
const data = new Uint8Array(shared, ${DATA_AT});
let done = from;
for (;;) {
  Atomics.wait(ints, ${ASKED}, done, 1000);
  const asked = Atomics.load(ints, ${ASKED});
  if (asked === done) continue;
  let written = 0;
  let error = '';
  try {
    written = writeSync(fd, data, 0, ints[${LENGTH}]);
  } catch (err) {
    error = String((err && err.code) || (err && err.message) || err);
  }
  const bytes = Buffer.from(error).subarray(0, ${CODE_BYTES});
  code.set(bytes);
  ints[${WRITTEN}] = written;
  ints[${CODE_LENGTH}] = bytes.length;
  done = asked;
  Atomics.store(ints, ${ENDED}, asked);
  Atomics.notify(ints, ${ENDED});
}`;

/** Atomics.waitAsync (Node.js 16 and later; in TypeScript's lib from ES2024, past this project's ES2022 target). */
const waitAsync = (Atomics as unknown as { waitAsync(array: Int32Array, index: number, value: number): { async: false; value: string } | { async: true; value: Promise<string> } }).waitAsync;

export class WriteThread {
  readonly #fd: number;
  readonly #shared = new SharedArrayBuffer(DATA_AT + MAX_WRITE_BYTES);
  readonly #ints = new Int32Array(this.#shared, 0, HEADER_BYTES / 4);
  readonly #data = new Uint8Array(this.#shared, DATA_AT);
  #worker: Worker | undefined;
  /**
   * Why no thread can be had (worker threads refused by the permission model, a process limit
   * reached): the writes go through libuv's thread pool instead, as before there was a thread.
   */
  #unavailable: string | undefined;
  /** An Int32 as the shared header holds it: past 2^31 - 1 it wraps (only equality is ever asked of it). */
  #sequence: number;
  /** The write in flight: its sequence number and who is told how it ended (unless a wait took it). */
  #inFlight: { sequence: number; done: (outcome: WriteOutcome) => void } | undefined;

  /** `sequenceFrom`: the sequence number of the last write, as if that many were made (tests: the wrap). */
  constructor(fd: number, { sequenceFrom = 0 }: { sequenceFrom?: number } = {}) {
    this.#fd = fd;
    this.#sequence = sequenceFrom | 0;
    Atomics.store(this.#ints, ASKED, this.#sequence);
    Atomics.store(this.#ints, ENDED, this.#sequence);
  }

  /**
   * Writes `bytes`, or their first MAX_WRITE_BYTES (one write at a time: the previous one must
   * have ended); `done` is called from the event loop with the outcome (bytes written).
   */
  write(bytes: Uint8Array, done: (outcome: WriteOutcome) => void): void {
    if (this.#inFlight) throw new Error('WriteThread: a write is already in flight');
    const length = Math.min(bytes.length, MAX_WRITE_BYTES);
    if (!this.#started()) {
      // Not waitable at exit (flushSync writes what follows at once), but written, in order while the process runs.
      fs.write(this.#fd, bytes, 0, length, null, (err, written) =>
        done(err ? { written: 0, error: codeOf(err) } : { written }),
      );
      return;
    }
    // Wrapped as the Int32 slot wraps it: a JavaScript number past 2^31 - 1 was stored as -2^31,
    // never equal to it again, and the log stopped for good after 2^31 writes.
    const sequence = (this.#sequence = (this.#sequence + 1) | 0);
    this.#data.set(bytes.subarray(0, length));
    this.#ints[LENGTH] = length;
    this.#inFlight = { sequence, done };
    Atomics.store(this.#ints, ASKED, sequence);
    Atomics.notify(this.#ints, ASKED);
    void this.#ended(sequence);
  }

  /**
   * Waits, blocking, up to `ms` for the write in flight to end, and takes its outcome (its `done`
   * is then never called). Undefined when none is in flight or it has not ended in time.
   */
  waitSync(ms: number): WriteOutcome | undefined {
    const flight = this.#inFlight;
    if (!flight) return undefined;
    const deadline = performance.now() + ms;
    for (let seen = Atomics.load(this.#ints, ENDED); seen !== flight.sequence; seen = Atomics.load(this.#ints, ENDED)) {
      const left = deadline - performance.now();
      if (left <= 0) return undefined;
      Atomics.wait(this.#ints, ENDED, seen, left);
    }
    this.#inFlight = undefined;
    return this.#outcome();
  }

  /** Tells the write's `done` once it ended, unless waitSync took it meanwhile. */
  async #ended(sequence: number): Promise<void> {
    for (let seen = Atomics.load(this.#ints, ENDED); seen !== sequence; seen = Atomics.load(this.#ints, ENDED)) {
      const wait = waitAsync(this.#ints, ENDED, seen);
      if (wait.async) await wait.value;
      if (this.#inFlight?.sequence !== sequence) return; // taken by waitSync, or the thread was lost
    }
    const flight = this.#inFlight;
    if (flight?.sequence !== sequence) return;
    this.#inFlight = undefined;
    flight.done(this.#outcome());
  }

  #outcome(): WriteOutcome {
    const length = this.#ints[CODE_LENGTH]!;
    if (length === 0) return { written: this.#ints[WRITTEN]! };
    return { written: 0, error: Buffer.from(new Uint8Array(this.#shared, HEADER_BYTES, length)).toString() };
  }

  /** Whether the thread runs or was started now; false when none can be had (then or before). */
  #started(): boolean {
    if (this.#worker) return true;
    if (this.#unavailable !== undefined) return false;
    let worker: Worker;
    try {
      worker = new Worker(THREAD_SOURCE, {
        eval: true,
        workerData: { fd: this.#fd, shared: this.#shared, from: Atomics.load(this.#ints, ASKED) },
        // Its own standard streams are never written; left to their default (piped into this
        // process's), they made this process's process.stdout, which sets a pipe on fd 1
        // non-blocking: every full pipe was then an EAGAIN and a 100 ms wait, and the log fell
        // behind a reader that paused.
        stdout: true,
        stderr: true,
      });
    } catch (err) {
      this.#giveUp(`the log's writing thread could not be started: ${(err as Error).message}`);
      return false;
    }
    let online = false;
    worker.once('online', () => (online = true));
    // The thread gone (it ran out of memory, say): the write in flight failed, and the next one
    // starts another thread; one that never came up is not tried again. Never an exception in
    // the process the log serves.
    const gone = (reason: string) => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      if (!online) this.#giveUp(reason);
      const flight = this.#inFlight;
      this.#inFlight = undefined;
      flight?.done({ written: 0, error: reason });
    };
    worker.on('error', (err) => gone(`the log's writing thread failed: ${err.message}`));
    worker.on('exit', () => gone("the log's writing thread ended"));
    // A log writer never keeps the process alive: the exit hook waits for what is in flight.
    worker.unref();
    this.#worker = worker;
    return true;
  }

  /** No thread from now on: said once on standard error (the log itself may be what fails). */
  #giveUp(reason: string): void {
    this.#unavailable = reason;
    try {
      fs.writeSync(2, `a2a-registry: ${reason}; log lines are written through libuv's thread pool instead\n`);
    } catch {
      // Nowhere to say it.
    }
  }
}
