/**
 * Secrets given on the command line, said once per command on standard error.
 *
 * A database URL given on the command line (`serve`'s and `import`'s --database-url, `migrate`'s
 * --to) is in the process list, its password with it, for every user of the machine (ps,
 * /proc/<pid>/cmdline) as long as the command runs, and in the shell's history. Said once, on
 * standard error, before the command starts, with the ways that keep it out of both:
 * DATABASE_URL, or the file DATABASE_URL_FILE names.
 */
import type { Command } from 'commander';
import { withoutPassword } from '../lib/url-password.js';
import { styles, type Output } from './output.js';

/**
 * Warns when `flag`'s `value` holds what withoutPassword masks (a password, a secret parameter), or
 * may: a value that is no URL but has what credentials are written with (`user:pw@db/registry`,
 * `password=...`). One with none (`--to notaurl`, `db:5432/registry`) is refused as no URL next,
 * and a warning about a password it does not hold only misled.
 */
export function warnPasswordFlag(flag: string, value: string | undefined, o: Output): void {
  if (value === undefined) return;
  const masked = withoutPassword(value);
  if (masked === value || (masked === undefined && !/@|=|password|secret/i.test(value))) return;
  o.err(
    `a2a-registry: ${styles(o.color).yellow('warning')}: ${flag} carries a password, which every user of this machine can read in the process list (ps) while the command runs, ` +
      'and the shell may keep in its history: give the URL in DATABASE_URL, or on the first line of a file only this user reads, named by DATABASE_URL_FILE, instead\n',
  );
}

/**
 * A registry token given as `--token` is in the process list and the shell's history alike (a
 * `watch` may run for days): said once, before the command connects, never showing the token,
 * with the way that keeps it out of both: A2A_REGISTRY_TOKEN, which commander maps onto --token
 * (and which is no warning: its source is then 'env'). An empty --token holds none: no warning.
 */
export function warnTokenFlag(command: Command, o: Output): void {
  if (command.getOptionValueSourceWithGlobals('token') !== 'cli') return;
  // An empty one (`--token "$UNSET"`) carries no token: it is refused as empty next
  // (resolveConnection), and a warning about a token it does not hold only misled.
  if ((command.optsWithGlobals<{ token?: string }>().token ?? '').trim() === '') return;
  o.err(
    `a2a-registry: ${styles(o.color).yellow('warning')}: --token carries a registry token, which every user of this machine can read in the process list (ps) while the command runs, ` +
      'and the shell may keep in its history: give it in the environment variable A2A_REGISTRY_TOKEN instead (e.g. read from a file only this user reads)\n',
  );
}
