/**
 * `npm start`: load the configuration from the environment, start the registry, stop it
 * gracefully on SIGTERM/SIGINT (caught from the first line: ./stop-signals.ts). Invalid
 * configuration stops start-up with one clear line.
 *
 * The registry's modules are loaded only once the configuration is known to be good, and the
 * settings found bad only once used (HOST, the files settings name) checked too
 * (./composition/start-checks.ts): a refusal costs a fifth of a second, not a second of loading
 * the server first. They are loaded after Node's module compile cache is on
 * (`module.enableCompileCache()`, as bin/a2a-registry.js and npm do; in
 * os.tmpdir()/node-compile-cache or NODE_COMPILE_CACHE, off with NODE_DISABLE_COMPILE_CACHE=1):
 * a restart then skips compiling them again. Both need the dynamic imports below: a static
 * import is loaded and compiled before any line of this file runs.
 */
import module from 'node:module';
import type { RegistryConfig } from './config/config.js';
import { isMainModule } from './lib/entry-point.js';
import { catchStopSignals } from './stop-signals.js';

// `npm start`, `npm run dev` (tsx), however the path to it is spelt; an import of this file (none is meant: `a2a-registry serve` calls run-server.ts) starts nothing.
if (isMainModule(import.meta.url)) {
  // First: a SIGTERM while the rest loads is kept for run-server.ts, not Node's default action
  // (143 without a word, or nothing at all as PID 1 in a container).
  catchStopSignals();
  module.enableCompileCache?.();
  const { ConfigError, loadConfig } = await import('./config/config.js');
  /** Invalid configuration: one line, exit 2. */
  const refuseIfConfigError = (err: unknown): void => {
    if (!(err instanceof ConfigError)) return;
    process.stderr.write(`a2a-registry: ${err.message}\n`);
    process.exit(2);
  };
  let config: RegistryConfig;
  try {
    config = loadConfig();
  } catch (err) {
    refuseIfConfigError(err);
    throw err;
  }
  const start = async (): Promise<void> => {
    const { startChecks } = await import('./composition/start-checks.js');
    const settingFiles = await startChecks(config);
    const { runServer } = await import('./run-server.js');
    await runServer(config, settingFiles);
  };
  start().catch((err: unknown) => {
    // A setting found bad only once used (a file it names, HOST no address of this machine) is
    // invalid configuration all the same.
    refuseIfConfigError(err);
    process.stderr.write(`a2a-registry: could not start: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
