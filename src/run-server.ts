/**
 * Runs a registry until a signal stops it: the logger, start-up (which a SIGTERM or SIGINT may
 * give up), and a graceful stop on SIGTERM/SIGINT. `npm start` (main.ts) and `a2a-registry serve`
 * call it with the configuration they loaded, and the files its settings name as their checks
 * read them before loading this module (composition/start-checks.ts).
 */
import type { RegistryConfig } from './config/config.js';
import { StartStopped } from './composition/open-storage.js';
import type { SettingFiles } from './composition/start-checks.js';
import { bridgeConsole } from './observability/console-bridge.js';
import { exitOnceLogged, stdoutDestination } from './observability/log-destination.js';
import { createLogger } from './observability/logger.js';
import { startRegistry, type RunningRegistry } from './server.js';
import { catchStopSignals } from './stop-signals.js';

export async function runServer(config: RegistryConfig, settingFiles?: SettingFiles): Promise<void> {
  const log = createLogger(config.logLevel);
  bridgeConsole(log);
  // An exception nothing caught (or a rejection nothing handled, which Node turns into one) ended
  // the process with Node's own stack trace on stderr: a pipeline that reads the JSON log saw the
  // registry's lines stop and never why. It is logged there, fatal, and the process ends as Node
  // would have ended it (exit 1), once the line is written; what it was doing cannot be trusted
  // to finish, so no graceful stop (acknowledged writes are committed already; the index is
  // rebuilt or replayed at the next start).
  process.on('uncaughtException', (err, origin) => {
    // Written at once, after the write in flight: the line must not wait for the event loop to turn again.
    stdoutDestination().writeSynchronously();
    log.fatal({ err, origin }, `the registry stops: ${origin === 'unhandledRejection' ? 'a promise rejected with nothing to handle it' : 'an exception nothing caught'} (a defect: report it with this line)`);
    exitOnceLogged(1);
  });
  for (const warning of config.warnings ?? []) log.warn(warning);
  // What the registry runs with, as it took the settings (secrets masked): "10KB", "yes" or a typo
  // would otherwise be told only by a refusal or a warning, never what was actually taken.
  // The data directory always, where a default put it: ./data is relative to wherever the process started.
  if (config.given) log.info({ settings: config.given, dataDir: config.dataDir }, `configuration: ${Object.keys(config.given).length} settings given (as taken, secrets masked); the others at their defaults (README, Configuration)`);
  // Handled from the start, not once started: opening storage may take long (a migration, a
  // PostgreSQL replica waiting for its database), and meanwhile a SIGTERM killed the process
  // without a word or, as PID 1 in a container (which has no default action for it), was ignored
  // until Docker's SIGKILL. A stop asked for then gives the start up; exit 0 as for any asked-for
  // stop. The handlers are ./stop-signals.ts's, installed before this module was loaded.
  const starting = new AbortController();
  let registry: RunningRegistry | undefined;
  let stopping: string | undefined;
  const shutDown = (running: RunningRegistry, signal: string) => {
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    running.close().then(
      () => exitOnceLogged(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        exitOnceLogged(1);
      },
    );
  };
  const stop = (signal: string) => {
    if (stopping) {
      // A second signal while requests still in flight hold the stop (up to
      // REGISTRY_SHUTDOWN_GRACE_SECONDS, as much as an hour): it was ignored, and only a SIGKILL,
      // which loses the index save, ended the wait. It cuts them now; the index is still saved.
      if (registry) {
        log.warn({ signal }, 'stopping now: requests still in flight are cut off');
        registry.hurry();
      }
      return;
    }
    stopping = signal;
    if (registry) shutDown(registry, signal);
    else starting.abort();
  };
  // At once if one came while the registry's modules loaded (main.ts and serve catch them from
  // their first line): the start is then given up before anything opens. A signal reaches its
  // handler only when the event loop next polls, which loading modules does not let it do (nor a
  // start on SQLite, whose opening is synchronous: it ran to its end, then stopped): one turn of
  // the loop first.
  catchStopSignals().onStop(stop);
  await new Promise((resolve) => setImmediate(resolve));
  try {
    if (starting.signal.aborted) throw new StartStopped();
    registry = await startRegistry(config, log, { signal: starting.signal, settingFiles });
  } catch (err) {
    if (!(err instanceof StartStopped)) {
      // Refused (PORT in use): the data directory the checks made for it is not left behind.
      settingFiles?.undoDataDirectory?.();
      throw err;
    }
    log.info({ signal: stopping }, 'registry stopped before it was ready');
    exitOnceLogged(0);
    return;
  }
  // Asked to stop after storage opened: the start ran to its end, the registry stops as a running one does.
  if (stopping) shutDown(registry, stopping);
}
