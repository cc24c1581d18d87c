/**
 * SIGTERM and SIGINT caught from the first line of a registry's start, before its modules load:
 * `npm start` (main.ts) and `a2a-registry serve` load the configuration, then the registry
 * (run-server.ts, which stops it on a signal), half a second or more. A signal meanwhile had
 * Node's default action: the process ended with 143 and no word or, as PID 1 in a container (the
 * Dockerfile runs node directly), where a signal nothing handles is dropped, was not heard at all:
 * the registry started anyway, and `docker stop` waited for its SIGKILL. Caught here, the first
 * is kept until run-server.ts asks for it, and the start then ends at once (README, Operations).
 * One set of handlers for the process's life: run-server.ts listens through it. SIGHUP is caught
 * too, and stops nothing (see below).
 */

export type StopSignal = 'SIGTERM' | 'SIGINT';

export interface StopSignals {
  /** Calls `listener` with every stop signal from now on, and at once with the first if one came already. */
  onStop(listener: (signal: StopSignal) => void): void;
}

let caught: StopSignals | undefined;

/** Catches SIGTERM and SIGINT from now on: installed once, whoever calls it first. */
export function catchStopSignals(): StopSignals {
  if (caught) return caught;
  let first: StopSignal | undefined;
  const listeners: ((signal: StopSignal) => void)[] = [];
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      first ??= signal;
      for (const listener of listeners) listener(signal);
    });
  }
  // SIGHUP reloads the trust roots (trust/trust-roots.ts), which listen for it once loaded and
  // stop at shutdown. Before (the modules loading, storage opening: a PostgreSQL server waited
  // for, minutes) and after (the index being saved) it had its default action: the registry
  // ended with 129 without a word, from a `systemctl reload` or a log rotation's kill -HUP. It
  // never stops the registry: outside the trust roots' time it does nothing.
  process.on('SIGHUP', () => undefined);
  caught = {
    onStop(listener) {
      listeners.push(listener);
      if (first) listener(first);
    },
  };
  return caught;
}
