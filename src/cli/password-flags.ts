/**
 * A database URL given on the command line (`serve`'s and `import`'s --database-url, `migrate`'s
 * --to) is in the process list, its password with it, for every user of the machine (ps,
 * /proc/<pid>/cmdline) as long as the command runs, and in the shell's history. Said once, on
 * standard error, before the command starts, with the ways that keep it out of both:
 * DATABASE_URL, or the file DATABASE_URL_FILE names.
 */
import { withoutPassword } from '../lib/url-password.js';
import { styles, type Output } from './output.js';

/** Warns when `flag`'s `value` holds what withoutPassword masks (a password, a secret parameter), or may (no URL). */
export function warnPasswordFlag(flag: string, value: string | undefined, o: Output): void {
  if (value === undefined || withoutPassword(value) === value) return;
  o.err(
    `a2a-registry: ${styles(o.color).yellow('warning')}: ${flag} carries a password, which every user of this machine can read in the process list (ps) while the command runs, ` +
      'and the shell may keep in its history: give the URL in DATABASE_URL, or on the first line of a file only this user reads, named by DATABASE_URL_FILE, instead\n',
  );
}
