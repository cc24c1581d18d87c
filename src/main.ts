/**
 * `npm start`: load the configuration from the environment, start the registry, stop it
 * gracefully on SIGTERM/SIGINT. Invalid configuration stops start-up with one clear line.
 */
import { ConfigError, loadConfig, type RegistryConfig } from './config/config.js';
import { StartStopped } from './composition/open-storage.js';
import { isMainModule } from './lib/entry-point.js';
import { bridgeConsole } from './observability/console-bridge.js';
import { exitOnceLogged } from './observability/log-destination.js';
import { createLogger } from './observability/logger.js';
import { startRegistry, type RunningRegistry } from './server.js';

export async function runServer(config: RegistryConfig): Promise<void> {
  const log = createLogger(config.logLevel);
  bridgeConsole(log);
  for (const warning of config.warnings ?? []) log.warn(warning);
  // Handled from the start, not once started: opening storage may take long (a migration, a
  // PostgreSQL replica waiting for its database), and meanwhile a SIGTERM killed the process
  // without a word or, as PID 1 in a container (which has no default action for it), was ignored
  // until Docker's SIGKILL. A stop asked for then gives the start up; exit 0 as for any asked-for stop.
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
    if (stopping) return;
    stopping = signal;
    if (registry) shutDown(registry, signal);
    else starting.abort();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  try {
    registry = await startRegistry(config, log, { signal: starting.signal });
  } catch (err) {
    if (!(err instanceof StartStopped)) throw err;
    log.info({ signal: stopping }, 'registry stopped before it was ready');
    exitOnceLogged(0);
    return;
  }
  // Asked to stop after storage opened: the start ran to its end, the registry stops as a running one does.
  if (stopping) shutDown(registry, stopping);
}

// `npm start`, `npm run dev` (tsx), however the path to it is spelt; not when the CLI imports it (`a2a-registry serve`).
if (isMainModule(import.meta.url)) {
  let config: RegistryConfig;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`a2a-registry: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  runServer(config).catch((err: unknown) => {
    // A setting found bad only once used (a file it names, HOST no address of this machine) is
    // invalid configuration all the same.
    if (err instanceof ConfigError) {
      process.stderr.write(`a2a-registry: ${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`a2a-registry: could not start: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
