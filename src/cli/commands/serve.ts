/**
 * `a2a-registry serve`: starts the registry exactly as `npm start` does (same environment
 * variables, same entry point), with flags that override the variables they name.
 *
 * Exit code: runs until SIGTERM/SIGINT (then 0, also while it waits for its storage); 2 for
 * invalid configuration, 1 if it cannot start (port taken, a database that refuses it; an
 * unreachable PostgreSQL is waited for, not a failure) or its shutdown fails (run-server.ts).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import type { RegistryConfig } from '../../config/config.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, defaultOutput, printJson } from '../output.js';
import { nonEmpty } from '../option-values.js';
import { warnPasswordFlag } from '../password-flags.js';
import { catchStopSignals } from '../../stop-signals.js';

export interface ServeOptions {
  port?: number;
  host?: string;
  dataDir?: string;
  databaseUrl?: string;
  publicUrl?: string;
  grpcPort?: number;
  publicGrpcUrl?: string;
  logLevel?: string;
  json?: boolean;
}

/** Each flag and the environment variable it overrides. */
const FLAG_VARIABLES: [keyof ServeOptions, string, string][] = [
  ['port', 'PORT', '--port'],
  ['host', 'HOST', '--host'],
  ['dataDir', 'REGISTRY_DATA_DIR', '--data-dir'],
  ['databaseUrl', 'DATABASE_URL', '--database-url'],
  ['publicUrl', 'PUBLIC_URL', '--public-url'],
  ['grpcPort', 'GRPC_PORT', '--grpc-port'],
  ['publicGrpcUrl', 'PUBLIC_GRPC_URL', '--public-grpc-url'],
  ['logLevel', 'LOG_LEVEL', '--log-level'],
];

function port(value: string): number {
  const n = Number(value);
  if (!/^[0-9]+$/.test(value.trim()) || n > 65535) throw new InvalidArgumentError('must be a port number from 0 to 65535');
  return n;
}

export function serveEnvironment(options: ServeOptions, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const merged: NodeJS.ProcessEnv = { ...env };
  for (const [key, variable] of FLAG_VARIABLES) {
    const value = options[key];
    if (value !== undefined) merged[variable] = String(value);
  }
  // The flag stands for the database URL however the environment gives it: a DATABASE_URL_FILE
  // there beside it would be refused as both given.
  if (options.databaseUrl !== undefined) delete merged.DATABASE_URL_FILE;
  return merged;
}

/**
 * "PORT must be..." becomes "--port (PORT) must be..." when the value came from the flag: a
 * configuration or start-up message. Every mention, the first as "--host (HOST)", the others as
 * the flag: "set HOST to one of its addresses" told to set what the flag overrides.
 */
export function nameFlags(message: string, options: ServeOptions): string {
  let text = message;
  for (const [key, variable, flag] of FLAG_VARIABLES) {
    if (options[key] === undefined) continue;
    let named = 0;
    text = text.replace(new RegExp(`\\b${variable}\\b`, 'g'), () => (named++ === 0 ? `${flag} (${variable})` : flag));
  }
  return text;
}

export function register(program: Command): void {
  program
    .command('serve')
    .description('start the registry (configured like `npm start`: environment variables, overridden by these flags)')
    .addOption(new Option('--port <port>', 'port to listen on (PORT, default 8080)').argParser(port))
    // An empty value (`--data-dir "$DIR"` with DIR unset) is refused: the environment treats an
    // empty variable as unset, so it fell back to the default over the environment's setting
    // (SQLite in ./data with a new admin token, where DATABASE_URL named PostgreSQL).
    .option('--host <address>', 'address to listen on (HOST, default 127.0.0.1)', nonEmpty)
    .option('--data-dir <dir>', 'SQLite database and generated admin token (REGISTRY_DATA_DIR, default ./data)', nonEmpty)
    .option('--database-url <url>', 'postgres://... to store in PostgreSQL instead of SQLite (DATABASE_URL)', nonEmpty)
    .option('--public-url <url>', 'base URL peers use to reach it (PUBLIC_URL, default http://HOST:PORT)', nonEmpty)
    .addOption(new Option('--grpc-port <port>', 'also serve the A2A gRPC binding on this port (GRPC_PORT, default off)').argParser(port))
    .option('--public-grpc-url <host:port>', 'the gRPC address the card advertises (PUBLIC_GRPC_URL, default PUBLIC_URL\'s host with --grpc-port)', nonEmpty)
    .addOption(new Option('--log-level <level>', 'log level (LOG_LEVEL, default info)').choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']))
    .option('--json', 'a configuration or start-up failure is also an {"error"} document on stdout (logs are JSON lines anyway)', false)
    .addHelpText(
      'after',
      '\nEvery other setting (REGISTRY_TOKENS, REGISTRY_PUBLIC_READ, limits...) comes from the environment; see the README.\n' +
        'Logs are JSON lines on stdout. Stops gracefully on SIGTERM/SIGINT.\n' +
        'Exit status: 0 stopped by SIGTERM/SIGINT (before it was ready too), 1 could not start (a port taken, a database that\n' +
        'refuses it) or its shutdown failed, 2 invalid configuration.\n' +
        'Example:\n  REGISTRY_TOKENS=alice:$(openssl rand -hex 16) a2a-registry serve --port 9000 --data-dir /var/lib/a2a-registry',
    )
    .action(async (options: ServeOptions) => {
      // First, as npm start does: a SIGTERM while the registry's modules load (the configuration's
      // included, loaded here for that) ends the start.
      catchStopSignals();
      warnPasswordFlag('--database-url', options.databaseUrl, defaultOutput());
      const { ConfigError, loadConfig } = await import('../../config/config.js');
      let config: RegistryConfig;
      try {
        config = loadConfig(serveEnvironment(options, process.env));
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        const message = nameFlags(err.message, options);
        if (options.json) printJson(defaultOutput(), { error: { code: 'INVALID_CONFIGURATION', message } });
        defaultOutput().err(`a2a-registry: ${message}\n`);
        process.exitCode = EXIT_USAGE;
        return;
      }
      try {
        // As npm start does: what can be refused before the server's modules load is (composition/start-checks.ts).
        const { startChecks } = await import('../../composition/start-checks.js');
        const settingFiles = await startChecks(config);
        // Loaded here, not at the top: the other commands should not pay for the server's modules.
        const { runServer } = await import('../../run-server.js');
        await runServer(config, settingFiles);
        process.exitCode = EXIT_OK; // it keeps running; signals end it through runServer's handlers
      } catch (err) {
        // A setting found bad only once used (a file it names, HOST no address of this machine).
        if (err instanceof ConfigError) {
          const message = nameFlags(err.message, options);
          if (options.json) printJson(defaultOutput(), { error: { code: 'INVALID_CONFIGURATION', message } });
          defaultOutput().err(`a2a-registry: ${message}\n`);
          process.exitCode = EXIT_USAGE;
          return;
        }
        // "set PORT to another port" would not help: the flag overrides it. Name the flag the user gave.
        const message = nameFlags(`could not start: ${err instanceof Error ? err.message : String(err)}`, options);
        if (options.json) printJson(defaultOutput(), { error: { code: 'START_FAILED', message } });
        defaultOutput().err(`a2a-registry: ${message}\n`);
        process.exitCode = EXIT_FAILED;
      }
    });
}
