/**
 * LISTEN for committed registry changes (`pg_notify('registry_changes', seq)`, sent by every
 * write transaction as it commits), so replicas refresh their search index without polling;
 * `listenOn` does the same for any channel (watch handovers).
 *
 * LISTEN needs one long-lived session, so this uses a dedicated `pg.Client`, not the pool.
 * When the connection drops it reconnects with backoff. Notifications sent while it was
 * disconnected are lost (PostgreSQL does not queue them), so after every reconnection
 * `onNotify` is called with `undefined`: "you may have missed some, catch up with
 * `changesSince` from the last sequence you processed". Treat notifications as a wake-up
 * signal; the change table is the source of truth.
 */
import pg from 'pg';
import { CHANGES_CHANNEL } from './migrations.js';

export interface ChangeListener {
  /** Stops listening and closes the connection; no callbacks after it resolves. */
  close(): Promise<void>;
}

export interface ListenOptions {
  /** First reconnection delay (ms); doubles up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
  /**
   * Told about connection errors (they are otherwise handled by reconnecting): once per outage
   * and reason, not at every attempt to reconnect (see `report` below).
   */
  onError?: (error: Error) => void;
  /** Runs on every new session once it listens (e.g. to take a session lock); its failure is the connection's. */
  onConnect?: (client: pg.Client) => Promise<unknown>;
}

/**
 * Resolves once listening. The first connection must succeed (so a bad URL fails loudly at
 * start-up); later failures are retried for as long as the listener is open.
 *
 * @param onNotify the committed change sequence, or `undefined` after a reconnection.
 */
export function listenForChanges(url: string, onNotify: (seq: number | undefined) => void, options: ListenOptions = {}): Promise<ChangeListener> {
  return listenOn(url, CHANGES_CHANNEL, (payload) => {
    const seq = Number(payload);
    onNotify(payload !== undefined && Number.isSafeInteger(seq) ? seq : undefined);
  }, options);
}

/** The same for any channel: `onNotify` gets each notification's payload, or `undefined` after a reconnection. */
export async function listenOn(
  url: string,
  channel: string,
  onNotify: (payload: string | undefined) => void,
  options: ListenOptions = {},
): Promise<ChangeListener> {
  const retryMs = options.retryMs ?? 250;
  const maxRetryMs = options.maxRetryMs ?? 5000;
  let closed = false;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;
  let delay = retryMs;
  /**
   * The error last told while the connection is down. Each failed attempt was told: with the
   * backoff capped at 5 s, a database down for a minute made each of a replica's listeners
   * (changes, watch handovers, presence) log a dozen identical warnings, an hour's outage
   * hundreds, burying what else went wrong. A new reason is told; a connection that works again
   * starts the next outage afresh.
   */
  let told: string | undefined;
  const report = (error: Error): void => {
    if (error.message === told) return;
    told = error.message;
    options.onError?.(error);
  };
  // A throwing callback must not kill the connection's event handling (or the process).
  const notify = (payload: string | undefined): void => {
    try {
      onNotify(payload);
    } catch (error) {
      options.onError?.(error instanceof Error ? error : new Error(String(error)));
    }
  };

  const connect = async (): Promise<void> => {
    const next = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: 5000,
      // A silently dead connection (network partition) must be noticed to be replaced.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      application_name: 'a2a-registry-listener',
    });
    let dropped = false;
    const onDrop = (error?: Error): void => {
      if (dropped) return;
      dropped = true;
      if (error) report(error);
      next.end().catch(() => undefined);
      if (client === next) client = undefined;
      scheduleReconnect();
    };
    next.on('notification', (message) => {
      if (message.channel === channel) notify(message.payload ?? '');
    });
    next.on('error', (error) => onDrop(error));
    next.on('end', () => onDrop());
    try {
      await next.connect();
      await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      await options.onConnect?.(next);
    } catch (error) {
      dropped = true; // the caller decides: reject (first time) or retry
      next.removeAllListeners('end');
      next.end().catch(() => undefined);
      throw error;
    }
    if (closed) {
      await next.end().catch(() => undefined);
      return;
    }
    client = next;
  };

  const scheduleReconnect = (): void => {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      connect().then(
        () => {
          delay = retryMs;
          told = undefined;
          if (!closed) notify(undefined);
        },
        (error: unknown) => {
          report(error instanceof Error ? error : new Error(String(error)));
          delay = Math.min(delay * 2, maxRetryMs);
          scheduleReconnect();
        },
      );
    }, delay);
    // Reconnecting alone must not keep the process alive.
    timer.unref();
  };

  await connect();
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      const current = client;
      client = undefined;
      if (current) await current.end().catch(() => undefined);
    },
  };
}
