/**
 * A variable given empty is read as unset, and said: docker compose's `FOO=${FOO}` sets FOO
 * empty when the shell has none, and DATABASE_URL="$PG_URL" with PG_URL unset stored on SQLite
 * without a word. The one sentence for it, and REGISTRY_DATA_DIR read by that rule, for the
 * registry's settings (./config.ts) and for the CLI's admin-token fallback (../cli/connection.ts),
 * which reads that variable alone and does not load ./config.ts (zod and the rest: tens of
 * milliseconds of every command's start).
 */
import path from 'node:path';

/** "X is set but empty: taken as unset, so <what unset means> (an unset shell variable?)". */
export const emptySettingWarning = (name: string, unsetMeans: string): string => `${name} is set but empty: taken as unset, so ${unsetMeans} (an unset shell variable?)`;

/** REGISTRY_DATA_DIR's default. */
export const DEFAULT_DATA_DIR = './data';

/** What REGISTRY_DATA_DIR unset means, after "taken as unset, so". */
export const dataDirUnsetMeans = (): string => `its default, ${DEFAULT_DATA_DIR} (${path.resolve(DEFAULT_DATA_DIR)})`;

/**
 * REGISTRY_DATA_DIR as the registry reads it, for a reader of that variable alone: unset or empty
 * is the default, an empty one said in `warnings`; the directory resolved, as the registry does.
 */
export function dataDirOf(env: NodeJS.ProcessEnv): { dataDir: string; warnings: string[] } {
  const value = env.REGISTRY_DATA_DIR;
  const warnings = value === '' ? [emptySettingWarning('REGISTRY_DATA_DIR', dataDirUnsetMeans())] : [];
  return { dataDir: path.resolve(value || DEFAULT_DATA_DIR), warnings };
}
