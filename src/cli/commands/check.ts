/**
 * `a2a-registry check`: whether the registry's SQLite database file is whole, with SQLite's
 * `integrity_check` (every page, b-tree and record, and every index against its table) or, with
 * --quick, `quick_check` (no index comparison; faster). The registry runs quick_check in the
 * background (REGISTRY_SQLITE_CHECK_HOURS); this is the check on demand: after a disk error, a
 * copy, before trusting a file. Read-only: it may run beside the running registry (it reads one
 * snapshot, the registry's writes going on), or with it stopped. On PostgreSQL the server checks
 * its own pages (data checksums, amcheck): the command says so.
 *
 * A whole file the registry recorded damaged (registry.db.damaged) is said to be whole, with what
 * to do about the record: removed by the operator after a repair in place, never here.
 *
 * Exit code: 0 whole, 1 damaged (what SQLite reports, and what to do; also a file that is no
 * SQLite database at all, its header overwritten or emptied; also a restore stopped half way
 * through putting its copy in place, which the registry's next start finishes), 2 usage (configuration, no database
 * in the data directory, a folder there, one this user may not read).
 */
import fs from 'node:fs';
import { Command } from 'commander';
import { checkIntegrity, damageRemedy, problemCount, type IntegrityReport } from '../../storage/sqlite/integrity.js';
import { whyNotTheRegistryDatabase } from '../../storage/sqlite/database-file.js';
import { damageRecordFile, readDamageRecord, type DamageRecord } from '../../storage/sqlite/damage-record.js';
import { restoreUnderWay } from '../../storage/sqlite/restore-swap.js';
import { whyCannotRead } from '../../lib/write-access.js';
import { EXIT_FAILED, EXIT_OK, defaultOutput, printJson, reportUsage, styles, type Output } from '../output.js';
import { nonEmpty } from '../option-values.js';
import { sqliteDatabase } from './backup.js';

interface CheckOptions {
  dataDir?: string;
  quick: boolean;
  json: boolean;
}

function formatReport(r: IntegrityReport, o: Output): string {
  const s = styles(o.color);
  if (r.ok) return `${s.green('ok')} ${r.file}: SQLite's ${r.check} found no damage (${r.seconds.toFixed(1)} s)\n`;
  return (
    `${s.red('damaged')} ${r.file}: SQLite's ${r.check} found ${problemCount(r)}:\n` +
    r.problems.map((p) => `  ${p}\n`).join('') +
    `${damageRemedy(r.file)}.\n`
  );
}

export async function checkCommand(options: CheckOptions, o: Output): Promise<number> {
  const target = sqliteDatabase(options.dataDir, "the server's own checks (data checksums, the amcheck extension)", o);
  if ('usage' in target) return reportUsage(o, options.json, 'USAGE', target.usage);
  const file = target.database;
  // A restore killed while it put its copy in place: the file there (if any) may be the one it replaced, not the registry's database.
  const underWay = restoreUnderWay(file);
  if (underWay) {
    if (options.json) printJson(o, { error: { code: 'RESTORE_UNFINISHED', message: underWay } });
    o.err(`a2a-registry: ${underWay}\n`);
    return EXIT_FAILED;
  }
  if (!fs.existsSync(file)) return reportUsage(o, options.json, 'USAGE', `there is no database at ${file}: give the registry's data directory (--data-dir or REGISTRY_DATA_DIR)`);
  const unreadable = whyCannotRead(file);
  if (unreadable) return reportUsage(o, options.json, 'READ_ERROR', `cannot read ${file}: ${unreadable}`);
  // A folder cannot be read as a file (usage); any other file that is no SQLite database (its header overwritten, emptied) is the damaged database.
  const notADatabase = whyNotTheRegistryDatabase(file);
  if (notADatabase?.folder) return reportUsage(o, options.json, 'USAGE', notADatabase.message);
  if (notADatabase) {
    if (options.json) printJson(o, { error: { code: 'DAMAGED', message: notADatabase.message } });
    o.err(`a2a-registry: ${notADatabase.message}\n`);
    return EXIT_FAILED;
  }
  let report: IntegrityReport;
  try {
    report = checkIntegrity(file, options.quick ? 'quick_check' : 'integrity_check');
  } catch (err) {
    return reportUsage(o, options.json, 'READ_ERROR', `cannot check ${file}: ${(err as Error).message}`);
  }
  // A file found whole that the registry recorded damaged: the record is the operator's to remove (a
  // repair in place), never cleared here: a check that passes is not proof enough to write into it again.
  const recalled = report.ok ? readDamageRecord(file) : undefined;
  const recorded = recalled?.state === 'damaged' ? recalled.record : undefined;
  if (options.json) printJson(o, recorded ? { ...report, damageRecord: { file: damageRecordFile(file), foundAt: recorded.foundAt, message: recorded.message } } : report);
  else if (report.ok) o.out(formatReport(report, o) + (recorded ? wholeButRecorded(report, recorded) : ''));
  else o.err(formatReport(report, o));
  return report.ok ? EXIT_OK : EXIT_FAILED;
}

/** What to do about the record of damage beside a file the check found whole. */
function wholeButRecorded(report: IntegrityReport, recorded: DamageRecord): string {
  const record = damageRecordFile(report.file);
  return (
    `${record} says it was found damaged at ${recorded.foundAt} (${recorded.message}), but the file is whole now. ` +
    `If you repaired it in place, remove ${record}: while it is there, a registry started on the file refuses writes` +
    (report.check === 'quick_check' ? '; --quick does not compare every index with its table: check without it first' : '') +
    '. A restore (a2a-registry restore --force <backup>) moves it aside itself.\n'
  );
}

export function register(program: Command): void {
  program
    .command('check')
    .description("check that the registry's SQLite database file is whole (SQLite's integrity_check), beside the running registry or not")
    .option('--data-dir <dir>', "the registry's data directory (REGISTRY_DATA_DIR, default ./data)", nonEmpty)
    .option('--quick', "SQLite's quick_check: every page and record, not every index against its table (faster)", false)
    .option('--json', 'print the report as one JSON document', false)
    .addHelpText(
      'after',
      '\nRead-only: it reads one snapshot of the database, the running registry writing meanwhile. It reads the whole file:\n' +
        'about 2 s per 100,000 entries for --quick, twice that for the full check (see docs/scaling.md). The registry itself runs\n' +
        'quick_check in the background every REGISTRY_SQLITE_CHECK_HOURS. On PostgreSQL use the server\'s own checks.\n' +
        'Exit status: 0 no damage, 1 damaged (what SQLite reports, and how to repair it; a file that is no SQLite database at\n' +
        'all; a restore killed while it put its copy in place, which the registry finishes when it starts), 2 usage (no\n' +
        'database there, a folder, one this user may not read).\n' +
        'A whole file the registry recorded damaged (registry.db.damaged) is said to be whole, the record left to you:\n' +
        'remove it if you repaired the file in place.\n' +
        'Example:\n  a2a-registry check --data-dir /var/lib/a2a-registry',
    )
    .action(async (options: CheckOptions) => {
      process.exitCode = await checkCommand(options, defaultOutput());
    });
}
