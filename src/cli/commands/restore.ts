/**
 * `a2a-registry restore <file>`: puts a backup (`a2a-registry backup`) in place of the
 * registry's SQLite database, with the registry stopped (src/storage/sqlite/backup.ts). The
 * database it replaces (only with --force) is kept beside it. On PostgreSQL: pg_restore.
 *
 * Exit code: 0 restored, 1 it could not be (a running registry or import, a file that is not a registry's
 * backup, a damaged one: nothing was changed), 2 usage (configuration, no such file, a folder, a
 * file this user may not read, a database in place without --force). Ctrl-C or SIGTERM while the
 * backup is checked or copied removes the copy and ends the command as the signal does (130, 143),
 * the database untouched; once the copy is made, putting it in place is not interrupted (and when
 * a SIGKILL or a power loss does, the registry's next start finishes it: storage/sqlite/restore-swap.ts).
 */
import { Command } from 'commander';
import { restoreSqlite, type EarlierRestore, type SqliteRestore } from '../../storage/sqlite/backup.js';
import { EXIT_OK, countOf, defaultOutput, printJson, reportUsage, styles, type Output } from '../output.js';
import { reportBackupError, sqliteDatabase } from './backup.js';
import { nonEmpty } from '../option-values.js';
import { interruption } from '../interruption.js';

interface RestoreOptions {
  dataDir?: string;
  force: boolean;
  json: boolean;
}

function formatRestore(r: SqliteRestore, backup: string, o: Output): string {
  const s = styles(o.color);
  return (
    `${s.green('restored')} ${countOf(r.entries, 'entry', 'entries')} (${countOf(r.revisions, 'revision')}, change log at ${r.changeSeq}) from ${backup} to ${r.file}\n` +
    (r.replaced ? `The database it replaced is kept as ${r.replaced} (with its -wal and -shm, if any).\n` : '') +
    (r.finishedEarlier ? earlierRestore(r.finishedEarlier) : '') +
    (r.removedLeftovers ? `Removed what an earlier restore, stopped half way, had left: ${r.removedLeftovers.join(', ')}\n` : '') +
    (r.leftOutEntries ? leftOut(r.leftOutEntries) : '') +
    'Start the registry: it checks its saved search index against the restored change log and rebuilds it if it belongs to another.\n'
  );
}

/**
 * Entries the file held only in part (a file `sqlite3 .recover` rebuilt from a damaged database:
 * an entry whose current revision, or whose own row, was on a damaged page), left out.
 */
function leftOut(ids: string[]): string {
  const shown = ids.slice(0, 20).join(', ') + (ids.length > 20 ? `, and ${ids.length - 20} more` : '');
  return (
    `Left out ${countOf(ids.length, 'entry', 'entries')} the file holds only in part (its current revision, or the entry itself, is missing: lost with a damaged page): ${shown}. ` +
    'Register them again (their identities are free; a URL of theirs whose record was lost with the page stays held for their owner).\n'
  );
}

/** An earlier restore killed half way through putting its copy in place, dealt with first. */
function earlierRestore(e: EarlierRestore): string {
  const kept = e.replaced ? `; the database it replaced is kept as ${e.replaced}` : '';
  return e.finished
    ? `An earlier restore of ${e.backup} had stopped half way through putting its copy in place: it was finished first${kept}.\n`
    : `An earlier restore of ${e.backup} had stopped half way, its copy gone: this one took its place${kept}.\n`;
}

export async function restoreCommand(file: string, options: RestoreOptions, o: Output): Promise<number> {
  const target = sqliteDatabase(options.dataDir, 'pg_restore (pg_restore --clean --if-exists --dbname="$DATABASE_URL" registry.dump, every replica stopped)', o);
  if ('usage' in target) return reportUsage(o, options.json, 'USAGE', target.usage);
  let restored: SqliteRestore;
  const stop = interruption();
  try {
    restored = await restoreSqlite(file, target.database, { overwrite: options.force, signal: stop.signal });
  } catch (err) {
    return reportBackupError(o, options.json, err, 'restore', stop, `${target.database} is as it was`);
  } finally {
    stop.release();
  }
  if (options.json) printJson(o, { ...restored, backup: file });
  else o.out(formatRestore(restored, file, o));
  return EXIT_OK;
}

export function register(program: Command): void {
  program
    .command('restore')
    .description("put a backup in place of the registry's SQLite database (the registry stopped)")
    .argument('<file>', 'a backup written by `a2a-registry backup`')
    .option('--data-dir <dir>', "the registry's data directory (REGISTRY_DATA_DIR, default ./data)", nonEmpty)
    .option('--force', 'replace the database there (it is kept beside, as registry.db.replaced-<time>)', false)
    .option('--json', 'print what was restored as one JSON document', false)
    .addHelpText(
      'after',
      '\nThe backup is checked (SQLite integrity, a registry database this release can open) before anything changes.\n' +
        'A running registry holds the database: stop it first; an import writing to it too: let it finish. Its -wal and -shm move aside\n' +
        'with the database they belong to.\n' +
        'Exit status: 0 restored, 1 not restored (a running registry, not a registry backup, a damaged one), 2 usage (no such file, a folder,\n' +
        'a file this user may not read, a database in place without --force); Ctrl-C (130), SIGTERM (143) or SIGHUP (129) while it copies\n' +
        'leaves the database as it was. Killed (SIGKILL) or a power loss while it puts the copy in place, the registry finishes\n' +
        'the restore when it next starts (registry.db.restore-unfinished records it), as does the next restore.\n' +
        'Example:\n  a2a-registry restore --force --data-dir /var/lib/a2a-registry /backups/registry-2026-12-01.db',
    )
    .action(async (file: string, options: RestoreOptions) => {
      process.exitCode = await restoreCommand(file, options, defaultOutput());
    });
}
