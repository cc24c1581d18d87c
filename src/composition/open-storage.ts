/**
 * Opens storage at start-up, waiting for a PostgreSQL server that is not there yet. Databases
 * and replicas restarting together (a host reboot, `docker compose up`) crash-looped: a replica
 * whose first connection was refused exited, while a running one reconnects by itself. So a
 * database that cannot be reached, or has no connection left, is tried again with backoff, the
 * port answering meanwhile (/healthz 200, /readyz 503 saying why and when it tries again).
 * What retrying cannot fix (credentials refused, no such database, a bad URL, a database of a
 * newer release) still stops the start at once, with its message.
 *
 * A stop asked for meanwhile (SIGTERM, SIGINT: StorageOpening.signal) ends the wait at once, and
 * an attempt under way is not waited for: the store is closed once it settles.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../observability/logger.js';
import { retryableAtOpen } from '../storage/faults.js';
import type { RegistryStore } from '../storage/types.js';

const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;

export interface StorageOpening {
  /** Told why storage is not open yet while it waits (undefined once it opens). */
  onWait?: (reason: string | undefined) => void;
  /** First wait between attempts (ms; doubles up to 30 s). */
  firstRetryMs?: number;
  /** Aborted when the registry is asked to stop before it has started: opening rejects with StartStopped. */
  signal?: AbortSignal;
}

/** A start given up because a stop was asked for (a signal) before the registry was ready. */
export class StartStopped extends Error {
  constructor() {
    super('stopped before the registry was ready');
  }
}

export async function openStorage(store: RegistryStore, log: Logger, options: StorageOpening = {}): Promise<void> {
  const { signal } = options;
  let delay = options.firstRetryMs ?? FIRST_RETRY_MS;
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) throw new StartStopped();
    const opening = store.open();
    try {
      await untilStopped(opening, signal);
      if (attempt > 1) log.info({ attempts: attempt }, 'storage opened');
      options.onWait?.(undefined);
      return;
    } catch (error) {
      if (error instanceof StartStopped) {
        // What the attempt under way opens (a connection, the lock of a SQLite database) is closed once it is done.
        opening.catch(() => undefined).then(() => store.close()).catch(() => undefined);
        throw error;
      }
      if (store.engine !== 'postgres' || !retryableAtOpen(error)) throw error;
      const retryAt = new Date(Date.now() + delay).toISOString();
      const why = (error as Error).message;
      log.warn({ err: why, attempt, retryAt }, `storage could not be opened; trying again at ${retryAt}`);
      options.onWait?.(`opening storage: ${why}; trying again at ${retryAt}`);
      try {
        await sleep(delay, undefined, { signal });
      } catch {
        throw new StartStopped(); // only the signal rejects it
      }
      delay = Math.min(delay * 2, MAX_RETRY_MS);
    }
  }
}

/** `work`, or a StartStopped rejection as soon as `signal` is aborted (the work itself goes on). */
function untilStopped<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(new StartStopped());
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(new StartStopped());
    signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}
