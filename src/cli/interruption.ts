/**
 * Ctrl-C (SIGINT), SIGTERM (`timeout`, `kill`, a service manager) and SIGHUP (a closed terminal)
 * during a command that writes a temporary file (`backup`, `restore`): the signal aborts the work,
 * which removes its file, and the command then ends as the signal ends a process, so the shell
 * reports 130 (SIGINT), 143 (SIGTERM) or 129 (SIGHUP). Without this, Node's default action ended
 * the process where it stood, its half-written copy left behind, as large as the database.
 */
import os from 'node:os';

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export interface Interruption {
  /** Aborted, with the signal's name as its reason, when one of the signals arrives. */
  readonly signal: AbortSignal;
  /** Stops listening: the signals have their default action again. */
  release(): void;
  /**
   * Ends the process as `signal` does (its work cleaned up), re-raising it with its default action
   * so that the shell and a parent see a process the signal ended. The worker thread a copy may
   * still run in does not delay it (process.exit would wait for it). Where something else in the
   * process listens to the signal too (the CLI run inside a test), that listener has it, and the
   * exit code 128 + the signal's number is returned instead.
   */
  end(signal: NodeJS.Signals): number;
}

export function interruption(): Interruption {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => controller.abort(signal);
  for (const signal of SIGNALS) process.on(signal, onSignal);
  const release = (): void => {
    for (const signal of SIGNALS) process.off(signal, onSignal);
  };
  return {
    signal: controller.signal,
    release,
    end(signal) {
      release();
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
      return 128 + os.constants.signals[signal];
    },
  };
}

/** The signal an interruption was aborted with. */
export function signalOf(reason: unknown): NodeJS.Signals {
  return typeof reason === 'string' && SIGNALS.includes(reason as NodeJS.Signals) ? (reason as NodeJS.Signals) : 'SIGINT';
}
