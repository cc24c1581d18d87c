/**
 * `npm start`: load the configuration from the environment, start the registry, stop it
 * gracefully on SIGTERM/SIGINT. Invalid configuration stops start-up with one clear line.
 */
import { ConfigError, loadConfig, type RegistryConfig } from './config/config.js';
import { isMainModule } from './lib/entry-point.js';
import { bridgeConsole } from './observability/console-bridge.js';
import { createLogger } from './observability/logger.js';
import { startRegistry } from './server.js';

export async function runServer(config: RegistryConfig): Promise<void> {
  const log = createLogger(config.logLevel);
  bridgeConsole(log);
  for (const warning of config.warnings ?? []) log.warn(warning);
  const registry = await startRegistry(config, log);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    registry.close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
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
    process.stderr.write(`a2a-registry: could not start: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
