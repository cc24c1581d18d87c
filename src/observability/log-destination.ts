/**
 * Where the log lines go: standard output, written as pino's default destination (sonic-boom)
 * wrote it, off the event loop, the lines that arrive while a write is in flight gathered into
 * the next one, and whatever is left written synchronously when the process exits
 * (test/log-output.test.ts pins both). The writes are made on a thread of the log's own
 * (./write-thread.ts), not libuv's thread pool, so that what is written at exit or at a crash
 * comes after the write in flight, never before it.
 *
 * Unlike sonic-boom, a log that cannot be written costs log lines, never the process. sonic-boom
 * emits 'error' on a failed write (ENOSPC when the disk holding the log file fills up), which
 * nobody listened to: an uncaught exception, whose exit hook then called flushSync, which retries
 * every error but EAGAIN for ever, sleeping between tries: the registry stopped answering anything,
 * /healthz included, and SIGTERM could no longer end it. Here a write that fails drops the lines
 * it carried and counts them (`lostLines`, the registry_log_lines_dropped_total metric); the next
 * write is tried a second later, and the first one that succeeds is followed by a warning saying
 * how many lines were lost, and since when. The first failure of a run is also told on standard
 * error, in one line. The lines waiting to be written are bounded too (a reader that stops
 * reading a pipe): past the bound, new lines are dropped and counted the same way.
 */
import fs from 'node:fs';
import { WriteThread, codeOf, type WriteOutcome } from './write-thread.js';

/** The most characters waiting to be written; beyond it new lines are dropped (counted). */
const MAX_PENDING_CHARS = 8 * 1024 * 1024;
/** One write carries at most this many characters of lines (one line at least, whatever its size). */
const MAX_WRITE_CHARS = 16 * 1024;
/** A destination that cannot take more just now (a non-blocking pipe that is full) is tried again after this. */
const BUSY_RETRY_MS = 100;
/** After a write failed, the next one is tried no sooner than this. */
const FAILED_RETRY_MS = 1000;
/** At exit, how long a destination that cannot take more just now (EAGAIN) is waited for before the lines left are dropped. */
const EXIT_WAIT_MS = 2000;

/** The reason of lines dropped because too many were waiting. */
const BACKLOG = 'backlog';

/** Why lines were lost, in words: the write error's code, or that the reader did not keep up. */
export const lossReason = (reason: string): string =>
  reason === BACKLOG ? `its reader did not keep up: more than ${MAX_PENDING_CHARS / 1024 / 1024} MB of lines were waiting` : reason;

/** Lines lost while the log could not be written, as told once it can be again. */
export interface LogLoss {
  /** Lines dropped since the log stopped taking them. */
  lines: number;
  /** When the first of them was dropped. */
  since: Date;
  /** Why: the error code of the write that failed (ENOSPC...), or `backlog` when the reader did not keep up. */
  reason: string;
}

/** Where lines go: pino's DestinationStream, with the lines it could not write counted. */
export class LogDestination {
  /** Told after the first successful write following lost lines (the logger writes a warning). */
  onRecovered: ((loss: LogLoss) => void) | undefined;

  readonly #fd: number;
  /** Where the writes that do not hold the event loop are made (not libuv's thread pool: ./write-thread.ts says why). */
  readonly #thread: WriteThread;
  readonly #tellOperator: (line: string) => void;
  #pending: string[] = [];
  #pendingChars = 0;
  /** The bytes being written now (on the writing thread), or waiting to be sent again. */
  #inFlight: Buffer | undefined;
  /** A timer before the next write (after EAGAIN or a failure). */
  #waiting: NodeJS.Timeout | undefined;
  /** A write ended inside a line and the rest of it was lost: the next write starts a new line. */
  #midLine = false;
  /** The bytes in flight begin with that newline (no line of their own, should they be lost too). */
  #prefixed = false;
  #lost = 0;
  /** Since when lines are being lost (the episode the next successful write ends). */
  #losing: { since: Date; reason: string; lostBefore: number } | undefined;
  #toldOperator = false;
  /** Callers of drained() waiting for the lines to be written. */
  #drainWaiters: Array<() => void> = [];
  /** Set by writeSynchronously(). */
  #synchronous = false;

  /** `tellOperator`: where the one line about a log that cannot be written goes (standard error). */
  constructor(fd: number, tellOperator: (line: string) => void = writeToStderr) {
    this.#fd = fd;
    this.#thread = new WriteThread(fd);
    this.#tellOperator = tellOperator;
  }

  /** Lines dropped since start because they could not be written. */
  get lostLines(): number {
    return this.#lost;
  }

  /**
   * From now on each line is written at once, synchronously (flushSync), after the write in
   * flight: for the last lines of a process about to end on a crash, which must not depend on
   * the event loop turning again.
   */
  writeSynchronously(): void {
    this.#synchronous = true;
  }

  write(line: string): void {
    if (this.#pendingChars + line.length > MAX_PENDING_CHARS) {
      this.#drop(1, BACKLOG);
      return;
    }
    this.#pending.push(line);
    this.#pendingChars += line.length;
    if (this.#synchronous) this.flushSync();
    else if (this.#inFlight === undefined && this.#waiting === undefined) this.#writeNext();
  }

  /**
   * Resolves once every line written so far is out (no write in flight, none waiting), or after
   * `timeoutMs` whatever is left. Before an exit the process decides (a stop, a refused start):
   * the lines go out on the writing thread while the event loop still turns, and the exit's
   * synchronous flush, which holds the process while it writes, has nothing left to do.
   */
  drained(timeoutMs: number): Promise<void> {
    if (this.#idle()) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#drainWaiters = this.#drainWaiters.filter((w) => w !== done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.#drainWaiters.push(done);
    });
  }

  #idle(): boolean {
    return this.#inFlight === undefined && this.#waiting === undefined && this.#pending.length === 0;
  }

  /**
   * Writes what is waiting, synchronously, after the write in flight on the thread: at exit,
   * when there is no event loop left to wait for the writes, and at a crash. Never waits long:
   * an error drops the lines left, the write in flight and a full pipe are waited for
   * EXIT_WAIT_MS at most.
   */
  flushSync(): void {
    const deadline = Date.now() + EXIT_WAIT_MS;
    let bytes: Buffer | undefined;
    if (this.#inFlight !== undefined && this.#waiting === undefined) {
      // On the writing thread: waited for, so that the lines after it come after it. One that
      // has not ended by the deadline (a reader that stopped reading) is left to end on its own,
      // and the lines after it are written all the same: late and out of order, but not lost.
      const outcome = this.#thread.waitSync(EXIT_WAIT_MS);
      if (outcome !== undefined) bytes = this.#settledSync(this.#inFlight, outcome);
    } else if (this.#inFlight !== undefined) {
      // Bytes waiting to be sent again (a full pipe) go first.
      bytes = this.#inFlight;
      this.#inFlight = undefined;
    }
    // A failed write's retry is moot: what waits is written now.
    clearTimeout(this.#waiting);
    this.#waiting = undefined;
    while (bytes !== undefined || this.#pending.length > 0) {
      const chunk: Buffer = bytes ?? this.#takeBatch();
      try {
        const n = fs.writeSync(this.#fd, chunk);
        this.#wrote(chunk, n);
        bytes = n < chunk.length ? chunk.subarray(n) : undefined;
      } catch (err) {
        bytes = chunk;
        if (isBusy(err) && Date.now() < deadline) {
          sleep(10);
          continue;
        }
        this.#drop(this.#linesIn(chunk) + this.#pending.length, codeOf(err));
        this.#pending = [];
        this.#pendingChars = 0;
        break;
      }
    }
    if (this.#losing) {
      const lost = this.#lost - this.#losing.lostBefore;
      this.#tellOperator(
        `a2a-registry: ${lost} log line${lost === 1 ? ' was' : 's were'} lost since ${this.#losing.since.toISOString()}: the log (standard output) could not be written (${lossReason(this.#losing.reason)})\n`,
      );
    }
  }

  /**
   * The write of `bytes` on the thread ended (`outcome`), taken by flushSync: what of them is
   * still to be written (the rest of a partial write, all of them when the pipe was full), none
   * when it failed (its lines are counted lost).
   */
  #settledSync(bytes: Buffer, { written, error }: WriteOutcome): Buffer | undefined {
    this.#inFlight = undefined;
    if (error !== undefined) {
      if (isBusyCode(error)) return bytes;
      this.#drop(this.#linesIn(bytes), error);
      return undefined;
    }
    this.#wrote(bytes, written);
    return written < bytes.length ? bytes.subarray(written) : undefined;
  }

  /** The next lines (up to MAX_WRITE_CHARS), as bytes; a line a lost write cut short is ended first. */
  #takeBatch(): Buffer {
    let chars = 0;
    let count = 0;
    while (count < this.#pending.length && (count === 0 || chars + this.#pending[count]!.length <= MAX_WRITE_CHARS)) chars += this.#pending[count++]!.length;
    const lines = this.#pending.splice(0, count);
    this.#pendingChars -= chars;
    const text = lines.join('');
    this.#prefixed = this.#midLine;
    return Buffer.from(this.#midLine ? `\n${text}` : text);
  }

  /** `n` bytes of `bytes` were written. */
  #wrote(bytes: Buffer, n: number): void {
    if (n === 0) return;
    this.#midLine = bytes[n - 1] !== NEWLINE;
    this.#prefixed = false;
  }

  /** The lines ending in bytes not written (one begun and cut short counts, the newline ending an earlier one does not). */
  #linesIn(bytes: Buffer): number {
    let lines = this.#prefixed ? -1 : 0;
    for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) lines++;
    return bytes.length > 0 && bytes[bytes.length - 1] !== NEWLINE ? lines + 1 : lines;
  }

  #writeNext(): void {
    this.#waiting = undefined;
    if (this.#inFlight !== undefined) return;
    if (this.#pending.length === 0) {
      for (const done of [...this.#drainWaiters]) done();
      return;
    }
    this.#inFlight = this.#takeBatch();
    this.#send();
  }

  #send(): void {
    this.#thread.write(this.#inFlight!, (outcome) => this.#written(outcome));
  }

  #written({ written: n, error }: WriteOutcome): void {
    const bytes = this.#inFlight!;
    if (error !== undefined) {
      if (isBusyCode(error)) {
        this.#waiting = setTimeout(() => {
          this.#waiting = undefined;
          this.#send();
        }, BUSY_RETRY_MS).unref();
        return;
      }
      // Lines whose end was not written are lost (a line begun stays a broken line in the log).
      this.#inFlight = undefined;
      this.#drop(this.#linesIn(bytes), error);
      this.#waiting = setTimeout(() => this.#writeNext(), FAILED_RETRY_MS).unref();
      return;
    }
    this.#wrote(bytes, n);
    if (n < bytes.length) {
      this.#inFlight = bytes.subarray(n);
      this.#send();
      return;
    }
    this.#inFlight = undefined;
    // The warning it logs is written next (write() starts it), then the lines waiting. A reader
    // that did not keep up has caught up only once the lines waiting are fewer again: each write
    // it takes meanwhile makes room for a few more, and drops go on.
    if (this.#losing && (this.#losing.reason !== BACKLOG || this.#pendingChars < MAX_PENDING_CHARS / 2)) this.#recovered();
    this.#writeNext();
  }

  /** The first successful write after lost lines: the loss is told (a warning line, written next). */
  #recovered(): void {
    const { since, reason, lostBefore } = this.#losing!;
    this.#losing = undefined;
    this.onRecovered?.({ lines: this.#lost - lostBefore, since, reason });
  }

  #drop(lines: number, reason: string): void {
    if (lines <= 0) return;
    if (!this.#losing) {
      this.#losing = { since: new Date(), reason, lostBefore: this.#lost };
      if (!this.#toldOperator) {
        // Once per run: standard error may be on the same full disk, or read by no one.
        this.#toldOperator = true;
        this.#tellOperator(
          `a2a-registry: the log (standard output) cannot be written (${lossReason(reason)}): log lines are dropped and counted (registry_log_lines_dropped_total) until it can; the registry goes on serving\n`,
        );
      }
    }
    this.#lost += lines;
  }
}

const NEWLINE = 0x0a;

/** A destination that cannot take more just now (a full non-blocking pipe): worth waiting for. */
const isBusyCode = (code: string | undefined): boolean => code === 'EAGAIN' || code === 'EBUSY';
const isBusy = (err: unknown): boolean => isBusyCode((err as NodeJS.ErrnoException).code);

/** Standard error, synchronously and never throwing: it may be on the same full disk. */
function writeToStderr(line: string): void {
  try {
    fs.writeSync(2, line);
  } catch {
    // Nowhere left to tell it: the metric still counts the lines.
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms: number): void => void Atomics.wait(sleeper, 0, 0, ms);

let stdout: LogDestination | undefined;

/**
 * The one destination for standard output in this process, made on first use: every logger
 * writing there shares it (lines stay in order), and one exit hook writes what is left.
 */
export function stdoutDestination(): LogDestination {
  if (!stdout) {
    const destination = new LogDestination(1);
    stdout = destination;
    process.on('exit', () => destination.flushSync());
  }
  return stdout;
}

/** How long an exit waits for the log lines before it (a stuck pipe does not hold the exit longer). */
const EXIT_DRAIN_MS = 1000;

/**
 * Exits with `code` once the lines logged so far are written (EXIT_DRAIN_MS at most): the
 * registry's own exits, after its last line ("registry stopped"), keep the log in order.
 */
export function exitOnceLogged(code: number): void {
  void stdoutDestination()
    .drained(EXIT_DRAIN_MS)
    .then(() => process.exit(code));
}
