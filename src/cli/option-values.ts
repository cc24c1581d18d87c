/**
 * Option and argument values every command checks when the command line is read, as usage
 * errors. A module of its own, loading nothing but commander: the storage commands (import,
 * backup, restore, migrate) use it without loading the A2A client.
 */
import { InvalidArgumentError } from 'commander';

/**
 * A value that must say something: an empty one (`--owner "$OWNER"`, `get "$ID"`, `--data-dir
 * "$DIR"` with the variable unset) would otherwise drop its filter and widen the answer to every
 * entry (ls --owner, search --binding, --page-token back to the first page), fall back to the
 * default (./data, SQLite instead of --database-url's PostgreSQL) or reach the registry as a
 * wire-level error.
 */
export function nonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty (an unset shell variable?)');
  return value;
}

/**
 * A principal (`--owner`): not empty, without whitespace at either end, without "," or ":". REGISTRY_TOKENS'
 * principals are trimmed (src/config/config.ts), so `import --owner "acme "` created entries no
 * token could own, and `ls --owner " acme"` listed none of acme's.
 */
export function principal(value: string): string {
  nonEmpty(value);
  if (value.trim() !== value) {
    throw new InvalidArgumentError(`"${value}" begins or ends with whitespace, which no principal of REGISTRY_TOKENS has (they are trimmed; a quoting mistake?): remove it`);
  }
  // REGISTRY_TOKENS is principal:token,...: a principal holding either separator cannot be named there.
  const separator = [',', ':'].find((c) => value.includes(c));
  if (separator !== undefined) {
    throw new InvalidArgumentError(`"${value}" contains "${separator}", which no principal of REGISTRY_TOKENS can (it is written principal:token,...): use the principal's name alone`);
  }
  return value;
}
