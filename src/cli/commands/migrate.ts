/**
 * `a2a-registry migrate --from <data dir | registry.db> --to <postgres URL>`: moves a registry from
 * its embedded SQLite database to PostgreSQL, keeping everything a client can observe (ids,
 * owners, revisions, claims, freshness, verification, change log, durable tasks, watches), in one
 * verified transaction (src/storage/sqlite-to-postgres.ts). Then point the registry (or its
 * replicas) at the database with DATABASE_URL.
 *
 * Exit code: 0 copied and verified, 1 the copy failed (--from not a registry's database, an older
 * or newer schema, a target in use, PostgreSQL unreachable, verification, a value holding U+0000
 * without --replace-nul: nothing was committed),
 * 2 usage (nothing at --from, or nothing this user may read, a target that already holds registry
 * data without --force, a --to that is not a PostgreSQL URL); 130 (143, 129) interrupted by
 * SIGINT (SIGTERM, SIGHUP): nothing was committed, said on stderr.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Command, Option } from 'commander';
import { ADMIN_TOKEN_FILE } from '../../auth/admin-token-file.js';
import { isPostgresUrl } from '../../storage/locations.js';
import { loadStorageLocation } from '../../config/config.js';
import { commandSettings } from '../command-settings.js';
import { MigrationError, migrateSqliteToPostgres, redactUrl, type MigrationProgress, type MigrationSummary } from '../../storage/sqlite-to-postgres.js';
import { positiveInt } from './import.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, countOf, defaultOutput, failOnClosedPipe, printJson, reportUsage, styles, type Output } from '../output.js';
import { POSTGRES_URL_FORM, shownSettingValue } from '../../lib/url-password.js';
import { nonEmpty } from '../option-values.js';
import { warnPasswordFlag } from '../password-flags.js';
import { interruption, signalOf } from '../interruption.js';

interface MigrateOptions {
  from?: string;
  to?: string;
  force: boolean;
  replaceNul?: boolean;
  batchSize: number;
  json: boolean;
}

export const DEFAULT_MIGRATE_BATCH_SIZE = 1000;

const count = (n: number): string => n.toLocaleString('en-US');

function formatSummary(m: MigrationSummary, o: Output): string {
  const s = styles(o.color);
  const r = m.rows;
  return (
    `${s.green('migrated')} ${countOf(r.entries, 'entry', 'entries')} (${countOf(r.entry_revisions, 'revision')}, ${countOf(r.entry_freshness, 'freshness record')}, ` +
    `${countOf(r.url_claims, 'URL claim')}, change log at ${m.changeSeq}), ${countOf(r.tasks, 'task')} (${countOf(r.push_notification_configs, 'push config')}) ` +
    `and ${countOf(r.watches, 'watch', 'watches')} from ${m.source} to ${m.target} in ${m.seconds.toFixed(1)} s\n` +
    `verified: every table's rows counted, entries and revisions checksum ${m.checksum.slice(0, 16)}… equal on both sides\n` +
    (m.replaced ? 'The registry data the database held before was replaced.\n' : '') +
    (m.replacedNul > 0 ? `${countOf(m.replacedNul, 'value')} holding U+0000 (NUL) ${m.replacedNul === 1 ? 'was' : 'were'} carried with U+FFFD in its place (--replace-nul).\n` : '') +
    'Next: stop the SQLite registry (what it wrote after the copy began is not in it: migrate again with --force if it wrote since),\n' +
    'then start the registry with DATABASE_URL set to the database, and the same REGISTRY_TOKENS (or admin token).\n' +
    generatedAdminToken(m.source)
  );
}

/**
 * The admin token the SQLite registry generated lives beside its database, not in it, so it is
 * not carried: replicas started with data directories of their own (as the README's recipe
 * has them) each generated another, and the token the admin had used was refused everywhere.
 * Said with the file, when there is one, and how to give it to every replica.
 */
function generatedAdminToken(source: string): string {
  const file = path.join(path.dirname(source), ADMIN_TOKEN_FILE);
  if (!fs.existsSync(file)) return '';
  return (
    `The admin token the SQLite registry generated is in ${file}, which is not in the database: give every replica that token ` +
    `(REGISTRY_ADMIN_TOKEN_FILE=${file}, or the file's first line in REGISTRY_ADMIN_TOKEN), or each replica, with a data directory of its own, generates another.\n`
  );
}

/** Progress on stderr: at most one line a second per table, and each table's last. */
function progressPrinter(o: Output): (p: MigrationProgress) => void {
  let shown = 0;
  return (p) => {
    const now = Date.now();
    const end = p.done === p.total;
    if (!end && now - shown < 1000) return;
    if (end && p.total === 0) return;
    shown = now;
    o.err(`  ${p.table}: ${count(p.done)} of ${count(p.total)}\n`);
  };
}

export async function migrateCommand(options: MigrateOptions, o: Output): Promise<number> {
  // REGISTRY_DATA_DIR and DATABASE_URL as the registry, backup and import read them (an empty one
  // is unset, said; " /data" refused), each only where its flag is not given: a flag stands for it.
  warnPasswordFlag('--to', options.to, o);
  const env = { ...process.env };
  if (options.from !== undefined) delete env.REGISTRY_DATA_DIR;
  if (options.to !== undefined) {
    delete env.DATABASE_URL;
    delete env.DATABASE_URL_FILE;
  }
  const location = commandSettings(loadStorageLocation, {}, o, env);
  if ('usage' in location) return reportUsage(o, options.json, 'USAGE', location.usage);
  const from = options.from ?? location.dataDir;
  const to = options.to ?? location.databaseUrl;
  if (to === undefined || to.trim() === '') return reportUsage(o, options.json, 'USAGE', 'say where to: --to postgres://user:password@host:5432/database (or set DATABASE_URL)');
  if (!isPostgresUrl(to)) {
    // Shown as given where it holds nothing a password is written with (`--to notaurl` was
    // "not (an unparsable URL)", as if it were a URL), and with the form to write instead.
    const shown = shownSettingValue(to);
    return reportUsage(
      o,
      options.json,
      'USAGE',
      `--to must be a postgres:// or postgresql:// URL${shown === undefined ? '' : ` (got "${shown}")`}; e.g. --to postgres://registry@db.example.com:5432/registry, or that URL in DATABASE_URL (with its password: kept out of the process list)`,
    );
  }
  if (!URL.canParse(to.trim())) {
    return reportUsage(o, options.json, 'USAGE', `--to is not a valid URL: ${POSTGRES_URL_FORM}`);
  }
  let summary: MigrationSummary;
  // Ctrl-C (SIGTERM, SIGHUP) stops the copy at its next batch; its PostgreSQL transaction is
  // rolled back (the SQLite source is only read), so nothing is committed: say so, and end as
  // the signal does (130), as backup and import do.
  const stop = interruption();
  try {
    summary = await migrateSqliteToPostgres({ from, to: to.trim(), replace: options.force, replaceNul: options.replaceNul === true, batchSize: options.batchSize, onProgress: progressPrinter(o), signal: stop.signal });
  } catch (err) {
    if (stop.signal.aborted) {
      const signal = signalOf(stop.signal.reason);
      const message = `the migration was interrupted (${signal}): nothing was committed to ${redactUrl(to.trim())} (the copy's transaction was rolled back; at most the registry's empty tables were created, which a new run uses; the SQLite database is only read). Run it again to migrate`;
      if (options.json) printJson(o, { error: { code: 'INTERRUPTED', message } });
      o.err(`a2a-registry: ${message}\n`);
      return stop.end(signal);
    }
    const usage = err instanceof MigrationError && err.usage;
    const message =
      err instanceof MigrationError ? err.message : `the migration failed, nothing was committed: ${err instanceof Error ? err.message : String(err)}`;
    if (options.json) printJson(o, { error: { code: usage ? 'USAGE' : 'MIGRATE_FAILED', message } });
    o.err(`a2a-registry: ${message}\n`);
    return usage ? EXIT_USAGE : EXIT_FAILED;
  } finally {
    stop.release();
  }
  if (options.json) printJson(o, summary);
  else o.out(formatSummary(summary, o));
  return EXIT_OK;
}

export function register(program: Command): void {
  program
    .command('migrate')
    .description('move a registry from its SQLite database to PostgreSQL, keeping ids, owners, revisions and tasks')
    .option('--from <dir|file>', "the SQLite registry's data directory or its registry.db (REGISTRY_DATA_DIR, default ./data)", nonEmpty)
    .option('--to <url>', 'the PostgreSQL database to fill: postgres://... (DATABASE_URL)', nonEmpty)
    .option('--force', 'replace the registry data the PostgreSQL database holds (stop its replicas first)', false)
    .option('--replace-nul', 'carry a value holding U+0000 (NUL), which PostgreSQL cannot store, with U+FFFD in its place (otherwise such a database is refused, its rows named)', false)
    .addOption(new Option('--batch-size <n>', 'rows per insert').argParser(positiveInt).default(DEFAULT_MIGRATE_BATCH_SIZE))
    .option('--json', 'print what was copied as one JSON document', false)
    .addHelpText(
      'after',
      '\nCopies entries (same ids, owners, list order), every kept revision (authors, times, documents, signature\n' +
        'verification), URL claims, sources and health, the change log, the durable tasks and their push configs, and\n' +
        'the watches, in one PostgreSQL transaction, verified (row counts, a checksum of every entry and revision)\n' +
        'before it commits: a failure leaves the database as it was. The SQLite file is read as one snapshot, so a\n' +
        'running registry may stay up, but its writes after the snapshot are not carried: stop it for the final run.\n' +
        'Exit status: 0 copied and verified, 1 failed, nothing committed (--from not a registry database, another\n' +
        'release\'s schema, a target in use, a value holding U+0000 without --replace-nul), 2 usage (nothing at --from this user may read, a --to that is no\n' +
        'PostgreSQL URL, a database holding registry data without --force), 130 interrupted (Ctrl-C; 143 SIGTERM, 129 SIGHUP): nothing committed.\n' +
        'Example (the URL in the environment: a password given as --to is in the process list):\n  DATABASE_URL=postgres://registry:secret@db:5432/registry a2a-registry migrate --from /var/lib/a2a-registry',
    )
    .action(async (options: MigrateOptions) => {
      failOnClosedPipe();
      process.exitCode = await migrateCommand(options, defaultOutput());
    });
}
