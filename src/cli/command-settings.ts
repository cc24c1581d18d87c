/**
 * The settings a command that works on the registry's storage (backup, restore, migrate, import)
 * reads from the environment: through a loader of src/config/config.ts that reads only the
 * settings that command uses, as the registry reads them, with the command's flags over the
 * variables they stand for. One way for all of them: a bad setting is a usage error (naming the
 * flag where one gave the value), and what the registry says at start-up about the settings read
 * (a variable given empty, taken as unset; an allow-listed JWKS URL over plain http) is said on
 * standard error before the command runs.
 */
import { ConfigError } from '../config/config-error.js';
import { styles, type Output } from './output.js';
import { nameFlags, serveEnvironment, type ServeOptions } from './commands/serve.js';
import { warnPasswordFlag } from './password-flags.js';

export function commandSettings<T extends { warnings?: string[] }>(
  load: (env: NodeJS.ProcessEnv) => T,
  flags: ServeOptions,
  o: Output,
  env: NodeJS.ProcessEnv = process.env,
): T | { usage: string } {
  warnPasswordFlag('--database-url', flags.databaseUrl, o);
  let settings: T;
  try {
    settings = load(serveEnvironment(flags, env));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { usage: nameFlags(err.message, flags) };
  }
  const s = styles(o.color);
  for (const warning of settings.warnings ?? []) o.err(`a2a-registry: ${s.yellow('warning')}: ${warning}\n`);
  return settings;
}
