/**
 * Whether the SQLite database file is whole: SQLite's own `quick_check` (every page of every
 * b-tree read, their structure and records checked: a page overwritten with garbage, a file cut
 * short, a torn page) or `integrity_check` (also that every index agrees with its table, row for
 * row: an index that silently disagrees would answer lookups wrong). Damage in the middle of the
 * file is otherwise found only when a read happens to land on it, at random, long after.
 *
 * Run on its own read-only connection: a read transaction in WAL mode, beside the registry's
 * writes, which it neither blocks nor sees half done. It reads the whole file (about 2 s per
 * 100,000 entries; see docs/scaling.md), so the registry runs it in a child process of its own
 * (./integrity-process.ts), never on the event loop; `a2a-registry check` runs it in-process.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { clipped } from '../../lib/clipped.js';
import { sqliteFault } from '../faults.js';
import { tidyAfterReading } from './reading-leftovers.js';
import type { IntegrityCheckKind, IntegrityReport } from '../types.js';

export type { IntegrityCheckKind, IntegrityReport } from '../types.js';

/** How many of SQLite's messages a check keeps: enough to see what is damaged, never thousands. */
export const MAX_PROBLEMS = 10;
/** A message longer than this is cut (a log line, /readyz). */
const MAX_PROBLEM_CHARS = 300;

/** SQLite heads the first message with the schema it checked ("*** in database main ***"): one database here, one line per message. */
const oneLine = (message: string): string =>
  message
    .split('\n')
    .filter((line) => !/^\*\*\* in database \S+ \*\*\*$/.test(line))
    .join(' ');

/**
 * Checks `file` (which must exist) with `check`. A file SQLite cannot read at all (a header or
 * schema page overwritten: SQLITE_NOTADB, SQLITE_CORRUPT) is reported as damaged with SQLite's
 * message; any other failure (no such file, no permission) is thrown.
 */
export function checkIntegrity(file: string, check: IntegrityCheckKind, maxProblems = MAX_PROBLEMS): IntegrityReport {
  const started = performance.now();
  const report = (problems: string[]): IntegrityReport => ({
    file,
    check,
    ok: problems.length === 0,
    problems: problems.slice(0, maxProblems).map((p) => clipped(p, MAX_PROBLEM_CHARS)),
    seconds: Math.round(performance.now() - started) / 1000,
  });
  let db: Database.Database | undefined;
  const tidy = tidyAfterReading(file);
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    return report(problemsOf(db, check, maxProblems));
  } catch (error) {
    if (sqliteFault(error)?.reason !== 'corrupt') throw error;
    const stopped = `${(error as Error).message} (${(error as { code?: string }).code})`;
    // integrity_check gives up at the first page it cannot decode, where quick_check goes on listing what it finds.
    if (check === 'integrity_check' && db?.open) {
      try {
        return report([`integrity_check stopped: ${stopped}; quick_check reports:`, ...problemsOf(db, 'quick_check', maxProblems - 1)]);
      } catch {
        // quick_check stopped too: SQLite's own words are all there is
      }
    }
    return report([stopped]);
  } finally {
    db?.close();
    tidy();
  }
}

/** SQLite's messages for `check`, each on one line; none when it says "ok". */
function problemsOf(db: Database.Database, check: IntegrityCheckKind, maxProblems: number): string[] {
  const rows = db.pragma(`${check}(${Math.max(1, Math.trunc(maxProblems))})`) as Record<string, unknown>[];
  const messages = rows.map((row) => oneLine(String(Object.values(row)[0])));
  return messages.length === 1 && messages[0] === 'ok' ? [] : messages;
}

/** "3 problems", "10 or more problems": how much a report found (it keeps the first MAX_PROBLEMS). */
export function problemCount(report: IntegrityReport): string {
  const n = report.problems.length;
  return `${n}${n >= MAX_PROBLEMS ? ' or more' : ''} ${n === 1 ? 'problem' : 'problems'}`;
}

/**
 * A damaged file's report in one line: which file, and what SQLite's check found (its messages).
 * The registry's log line and `a2a-registry import`'s refusal say it alike.
 */
export function describeDamage(report: IntegrityReport): string {
  return `the database file ${report.file} is damaged: SQLite's ${report.check} found ${problemCount(report)}: ${report.problems.join('; ')}`;
}

/**
 * What to do when a repair of `file` (`sqlite3 <file> .recover | sqlite3 <output>`) left `output`
 * empty: the README's way round a sqlite3 that cannot run .recover (Backups, "A damaged file").
 */
export function failedRepair(file: string, output: string): string {
  return (
    `A sqlite3 built without the sqlite_dbpage table (Debian 12's) fails on sqlite3 ${file} .recover | sqlite3 ${output} with "SQL logic error" and leaves ${output} empty: ` +
    `recover with .dump instead, its closing ROLLBACK turned into COMMIT, sqlite3 ${file} .dump | sed 's/^ROLLBACK; -- due to errors$/COMMIT;/' | sqlite3 ${output}, ` +
    `or with a newer sqlite3; then restore ${output} (README, Backups: "A damaged file (SQLite)")`
  );
}

/**
 * What to do about a damaged file, for the log line and `a2a-registry check`: the registry writes
 * nothing more into it, and the fix is the operator's (which backup, what may be lost). The
 * `.recover` caveat is README's (Backups), said shortly: Debian 12's sqlite3 cannot run it.
 */
export function damageRemedy(file: string): string {
  return (
    `Stop the registry and restore the latest good backup (a2a-registry restore --force <backup>, which keeps ${file} beside it); ` +
    `without a backup, recover what SQLite can still read: sqlite3 ${file} .recover | sqlite3 recovered.db, then a2a-registry restore --force recovered.db ` +
    '(entries on the damaged pages are lost: register them again); a sqlite3 built without the sqlite_dbpage table (Debian 12\'s) fails on .recover ' +
    'with "SQL logic error" and leaves recovered.db empty: use .dump instead, its closing ROLLBACK turned into COMMIT (README, Backups, has the command). ' +
    'Check the disk too (dmesg, SMART): damage in the middle of a file is usually its doing'
  );
}

/** Where to see the damage of `file`, and how to repair it: said after each refusal to read or copy a damaged file. */
export const checkAndRepair = (file: string): string => `a2a-registry check --data-dir ${path.dirname(file)} lists what SQLite finds. ${damageRemedy(file)}.`;

/**
 * A read of `file` that met a corrupt page (SQLite's error `err`): which file, what SQLite said,
 * what that stopped (`stopped`: "so it cannot be backed up: nothing was written to ..."), and how
 * to see and repair the damage, in the words the registry uses for a damaged file.
 */
export function damagedRead(file: string, err: Error, stopped: string): string {
  return `the database file ${file} is damaged (SQLite: ${err.message}, ${(err as { code?: string }).code}), ${stopped}. ${checkAndRepair(file)}`;
}
