/**
 * Opens storage at start-up, waiting for a PostgreSQL server that is not there yet. Databases
 * and replicas restarting together (a host reboot, `docker compose up`) crash-looped: a replica
 * whose first connection was refused exited, while a running one reconnects by itself. So a
 * database that cannot be reached, or has no connection left, is tried again with backoff, the
 * port answering meanwhile (/healthz 200, /readyz 503 saying why and when it tries again).
 * What retrying cannot fix (credentials refused, no such database, a bad URL, a database of a
 * newer release) still stops the start at once, with its message.
 */
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
}

export async function openStorage(store: RegistryStore, log: Logger, options: StorageOpening = {}): Promise<void> {
  let delay = options.firstRetryMs ?? FIRST_RETRY_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      await store.open();
      if (attempt > 1) log.info({ attempts: attempt }, 'storage opened');
      options.onWait?.(undefined);
      return;
    } catch (error) {
      if (store.engine !== 'postgres' || !retryableAtOpen(error)) throw error;
      const retryAt = new Date(Date.now() + delay).toISOString();
      const why = (error as Error).message;
      log.warn({ err: why, attempt, retryAt }, `storage could not be opened; trying again at ${retryAt}`);
      options.onWait?.(`opening storage: ${why}; trying again at ${retryAt}`);
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, MAX_RETRY_MS);
    }
  }
}
