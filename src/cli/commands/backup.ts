/**
 * `a2a-registry backup <file>`: a consistent copy of the registry's SQLite database
 * (REGISTRY_DATA_DIR/registry.db), taken while the registry runs (src/storage/sqlite/backup.ts).
 * On PostgreSQL the database's own tools do this (pg_dump): the command says so.
 *
 * Exit code: 0 written, 1 the copy could not be made (not a registry's database, a damaged one,
 * a failed copy: nothing is left at <file>), 2 usage (configuration, an existing file without
 * --force, a folder for <file> this user may not write, no database in the data directory, or
 * one this user may not read). Ctrl-C or SIGTERM removes the copy in progress and ends the
 * command as the signal does (130, 143).
 */
import { Command } from 'commander';
import path from 'node:path';
import { loadStorageLocation } from '../../config/config.js';
import { isPostgresUrl, sqliteFile } from '../../storage/locations.js';
import { BackupError, BackupInterrupted, backupSqlite, type SqliteBackup } from '../../storage/sqlite/backup.js';
import { interruption, signalOf, type Interruption } from '../interruption.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, countOf, defaultOutput, printJson, reportUsage, styles, type Output } from '../output.js';
import { commandSettings } from '../command-settings.js';
import { nonEmpty } from '../option-values.js';

interface BackupOptions {
  dataDir?: string;
  force: boolean;
  json: boolean;
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function formatBackup(b: SqliteBackup, source: string, seconds: number, o: Output): string {
  const s = styles(o.color);
  return (
    `${s.green('backed up')} ${countOf(b.entries, 'entry', 'entries')} (${countOf(b.revisions, 'revision')}, change log at ${b.changeSeq}) ` +
    `from ${source} to ${b.file} (${mib(b.bytes)}, ${seconds.toFixed(1)} s)\n` +
    `To restore it: stop the registry, then a2a-registry restore --force --data-dir ${path.dirname(source)} ${b.file}\n` +
    (b.removedLeftovers ? `Removed what an earlier backup to this file, stopped half way, had left: ${b.removedLeftovers.join(', ')}\n` : '')
  );
}

/**
 * The SQLite database a command works on (REGISTRY_DATA_DIR/registry.db, or --data-dir's), or
 * the usage message: REGISTRY_DATA_DIR or DATABASE_URL not valid, or DATABASE_URL naming
 * PostgreSQL, whose own tool (`postgresTool`) does the job. Only those two are read: a restore
 * run as a one-off container has the image's HOST=0.0.0.0 and no PUBLIC_URL, which the registry
 * needs to serve, not this command.
 */
export function sqliteDatabase(dataDirOption: string | undefined, postgresTool: string, o: Output): { database: string } | { usage: string } {
  const location = commandSettings(loadStorageLocation, { dataDir: dataDirOption }, o);
  if ('usage' in location) return location;
  if (isPostgresUrl(location.databaseUrl)) {
    return { usage: `DATABASE_URL is set: the entries are in PostgreSQL, which this command does not handle. Use ${postgresTool}, or unset DATABASE_URL to work on the SQLite database` };
  }
  return { database: sqliteFile(location.dataDir) };
}

/**
 * A failed backup or restore, said in one line (and as JSON with --json); its exit status. One
 * interrupted by a signal says that nothing was put in place, then ends as the signal does.
 */
export function reportBackupError(o: Output, json: boolean, err: unknown, what: string, stop: Interruption, untouched: string): number {
  if (err instanceof BackupInterrupted) {
    const signal = signalOf(err.reason);
    const message = `the ${what} was interrupted (${signal}): its temporary copy is removed, ${untouched}`;
    if (json) printJson(o, { error: { code: 'INTERRUPTED', message } });
    o.err(`a2a-registry: ${message}\n`);
    return stop.end(signal);
  }
  // Anything but the checks' own errors (a full disk while syncing or renaming) is a failure too, said in one line.
  const usage = err instanceof BackupError && err.usage;
  const message = err instanceof BackupError ? err.message : `the ${what} failed: ${err instanceof Error ? err.message : String(err)}`;
  if (json) printJson(o, { error: { code: usage ? 'USAGE' : `${what.toUpperCase()}_FAILED`, message } });
  o.err(`a2a-registry: ${message}\n`);
  return usage ? EXIT_USAGE : EXIT_FAILED;
}

export async function backupCommand(file: string, options: BackupOptions, o: Output): Promise<number> {
  const target = sqliteDatabase(options.dataDir, 'pg_dump (pg_dump --format=custom --file=registry.dump "$DATABASE_URL")', o);
  if ('usage' in target) return reportUsage(o, options.json, 'USAGE', target.usage);
  const source = target.database;
  const started = Date.now();
  let backup: SqliteBackup;
  const stop = interruption();
  try {
    backup = await backupSqlite(source, file, { overwrite: options.force, signal: stop.signal });
  } catch (err) {
    return reportBackupError(o, options.json, err, 'backup', stop, `nothing was written to ${file}`);
  } finally {
    stop.release();
  }
  const seconds = (Date.now() - started) / 1000;
  if (options.json) printJson(o, { ...backup, source, seconds });
  else o.out(formatBackup(backup, source, seconds, o));
  return EXIT_OK;
}

export function register(program: Command): void {
  program
    .command('backup')
    .description("copy the registry's SQLite database to a file, consistently, while the registry runs")
    .argument('<file>', 'where to write the copy (a new file, mode 0600: it holds webhook tokens)')
    .option('--data-dir <dir>', "the registry's data directory (REGISTRY_DATA_DIR, default ./data)", nonEmpty)
    .option('--force', 'replace <file> if it exists', false)
    .option('--json', 'print what was copied as one JSON document', false)
    .addHelpText(
      'after',
      '\nThe copy is one read transaction of the live database (the registry keeps serving and writing), checked\n' +
        'and synced before it takes its name. To restore: stop the registry, then `a2a-registry restore <file>`.\n' +
        'On PostgreSQL use pg_dump.\n' +
        'Exit status: 0 written, 1 the copy failed (not a registry database, a damaged one, a failed copy: nothing is left at\n' +
        '<file>), 2 usage (no database in the data directory or one this user may not read, <file> exists without --force\n' +
        'or is in a folder this user may not write);\n' +
        'Ctrl-C (130), SIGTERM (143) or SIGHUP (129) removes the copy in progress.\n' +
        'Example:\n  a2a-registry backup --data-dir /var/lib/a2a-registry /backups/registry-$(date +%F).db',
    )
    .action(async (file: string, options: BackupOptions) => {
      process.exitCode = await backupCommand(file, options, defaultOutput());
    });
}
