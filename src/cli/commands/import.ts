/**
 * `a2a-registry import <dir | file.json | file.jsonl | ->...`: loads many agent cards and MCP
 * server documents ({"mcpServer": {...}, "toolspec": {...}}) straight into the registry's storage
 * (REGISTRY_DATA_DIR's SQLite file, or DATABASE_URL), in batches of one transaction each, with
 * the checks of an online registration (validator, signatures, identity and URL claims,
 * ownership, revisions kept; no entry quota, as for an admin: see src/registry/bulk-import.ts). Each document's kind is detected from its
 * content, as `validate` does. A refused document is reported (file:line, path, message, hint)
 * and skipped; re-importing the same documents changes nothing ("unchanged"), so a document whose
 * identity an earlier one of the import stored is refused (../import-identities.ts).
 *
 * It writes to storage, not through a running registry: on PostgreSQL, running replicas pick the
 * entries up live from the change log; on SQLite, (re)start the registry after the import (a
 * running one does not see another process's writes until it restarts; its watches then send a
 * resync).
 *
 * Exit code: 0 every document stored (created, updated or unchanged), 1 any refused or not
 * JSON, or storage that cannot be opened (a damaged SQLite file among it: checked before anything
 * is written) or failed part way (said with the count stored before it), 2 usage (bad options or
 * configuration, a source that cannot be read). Ctrl-C or SIGTERM stops it once the transactions
 * under way have committed, says how many documents were stored, and ends as the signal does
 * (130, 143).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { loadImportConfig, ADMIN_PRINCIPAL, type ImportConfig } from '../../config/config.js';
import type { PreparedDocument } from '../../registry/bulk-import.js';
import { createLogger } from '../../observability/logger.js';
import { StorageUnavailableError, postgresFault, sqliteFault } from '../../storage/faults.js';
import { listSources, readDocuments, SourceError, type SourceDocument } from '../import-sources.js';
import { refusalOf, type Refusal } from '../import-preparation.js';
import { ImportIdentities, type IdentityClaim } from '../import-identities.js';
import type { Preparer, Thread } from '../import-preparers.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, countOf, defaultOutput, failOnClosedPipe, formatFindings, printJson, reportUsage, styles, type Locate, type Output } from '../output.js';
import { commandSettings } from '../command-settings.js';
import { nameFlags } from './serve.js';
import { nonEmpty, principal } from '../option-values.js';
import { withoutPassword } from '../../lib/url-password.js';
import { interruption, signalOf } from '../interruption.js';

interface ImportOptions {
  owner: string;
  dataDir?: string;
  databaseUrl?: string;
  batchSize: number;
  json: boolean;
}

export const DEFAULT_BATCH_SIZE = 500;
/**
 * Batches in flight at once: one stored while the next are checked (in the worker thread, when
 * there is one); on PostgreSQL each stored batch has a connection, so the round trips overlap.
 */
const IN_FLIGHT = 4;

export interface ImportSummary {
  engine: string;
  /** Documents read from the sources: imported + refused. */
  documents: number;
  /** Documents stored: created + updated + unchanged. */
  imported: number;
  created: number;
  updated: number;
  unchanged: number;
  refused: number;
  /** Documents stored with warnings (validate shows them). */
  withWarnings: number;
  seconds: number;
  perSecond: number;
}

/** What `import --json` prints: the summary and every refusal, in input order. */
export type ImportJson = ImportSummary & { refusals: Refusal[] };

/**
 * The import stopped part way (storage failed, the checks' thread, or a signal): what was stored
 * before stays stored, and running the same import again finishes it.
 */
export class ImportStopped extends Error {
  constructor(
    override readonly cause: unknown,
    /** Documents stored (created, updated or unchanged) before it stopped. */
    readonly stored: number,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/** The storage could not be opened (a data directory that is a file, a database that does not exist, ...): nothing was imported. */
export class StorageNotOpened extends Error {
  constructor(override readonly cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/** Ctrl-C, SIGTERM or SIGHUP during the import: the cause of its ImportStopped. */
export class ImportInterrupted extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted (${signal})`);
  }
}

/** A document ready to store, with its claim to its identity. */
interface Claimed {
  n: number;
  doc: SourceDocument;
  document: PreparedDocument;
  claim: IdentityClaim;
}

export interface RunImportOptions {
  owner: string;
  batchSize: number;
  /** Where documents are checked; by default as `threadFor` chooses for the sources (./import-preparers.ts). */
  thread?: Thread;
  /**
   * Aborted (with the signal's name) to stop the import: no batch begins another transaction, the
   * ones committing finish, and runImport throws ImportStopped with an ImportInterrupted cause.
   */
  signal?: AbortSignal;
}

/**
 * Imports everything the sources hold. Refusals are handed to `onRefusal` in input order, a
 * batch at a time, and not kept: memory does not grow with their number (the refusals of at most
 * IN_FLIGHT batches wait, and a batch is done once `onRefusal` resolved for each of them: a
 * reader of the output that falls behind slows the import down instead of filling memory). A
 * source that cannot be read is a SourceError (an ImportStopped with it as its cause once documents
 * were stored); storage that cannot be opened a StorageNotOpened;
 * a failure once storing began (or an interruption) an ImportStopped.
 */
export async function runImport(
  config: ImportConfig,
  sources: readonly string[],
  options: RunImportOptions,
  onRefusal: (r: Refusal) => void | Promise<void> = () => undefined,
): Promise<ImportSummary> {
  const files = await listSources(sources);
  const { openImporter } = await import('../../composition/importer.js');
  const { openPreparer, threadFor } = await import('../import-preparers.js');
  const log = createLogger('warn', process.stderr);
  let opened: Awaited<ReturnType<typeof openImporter>>;
  try {
    opened = await openImporter(config, log, options.owner);
  } catch (error) {
    throw new StorageNotOpened(error);
  }
  let preparer: Preparer;
  try {
    preparer = await openPreparer(config, log, options.thread ?? (await threadFor(files)));
  } catch (error) {
    await opened.close();
    throw error;
  }
  const summary: ImportSummary = { engine: opened.engine, documents: 0, imported: 0, created: 0, updated: 0, unchanged: 0, refused: 0, withWarnings: 0, seconds: 0, perSecond: 0 };
  const started = performance.now();
  /** The batches not yet done (stored and their refusals reported): at most IN_FLIGHT. */
  const inFlight = new Set<Promise<void>>();
  /** The first batch that failed (storage, the checks' thread), or the interruption: the import stops there. */
  let failure: { error: unknown } | undefined;
  /** Settles (rejected) when the signal comes: the reading and the waiting below stop at once. */
  const interrupted = new Promise<never>((_, reject) => {
    const signal = options.signal;
    if (!signal) return;
    const stop = (): void => {
      const error = new ImportInterrupted(signalOf(signal.reason));
      failure ??= { error };
      reject(error);
    };
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
  interrupted.catch(() => undefined);
  /**
   * The batch before the next one: done, i.e. stored and its refusals reported. On SQLite the
   * batches are stored one after another, in input order (one connection writes anyway): a batch
   * may take several transactions (see below), and the rest of a batch stored after the next
   * batch's first transaction would let an earlier document of the input replace a later one with
   * the same identity. PostgreSQL stores a batch in one transaction: batches overlap. Either way
   * a batch's refusals are reported after those of the batch before, so they come in input order.
   */
  let before: Promise<void> = Promise.resolve();
  /** The identities the documents so far claimed: a later one with the identity of one stored is refused (./import-identities.ts). */
  const identities = new ImportIdentities();
  /** The batch before the next one has taken its identities (batches are checked in parallel: taken in input order). */
  let identitiesBefore: Promise<void> = Promise.resolve();
  /** A batch: checked (in the worker thread, while earlier batches are stored), then stored in one transaction. */
  const flush = (docs: SourceDocument[], first: number): void => {
    const turn = before;
    const identitiesTurn = identitiesBefore;
    let identitiesTaken = (): void => undefined;
    identitiesBefore = new Promise<void>((resolve) => (identitiesTaken = resolve));
    const refused: { n: number; refusal: Refusal }[] = [];
    const refuse = (n: number, r: Refusal): void => {
      summary.refused++;
      refused.push({ n, refusal: r });
    };
    /** The claims of the batch's documents to their identities: each settled once stored or refused (or the import stopped). */
    const claims: IdentityClaim[] = [];
    /**
     * Stores `batch` in a transaction. One may store the first documents only (SQLite bounds how
     * long it holds the lock a running registry waits for): the rest go in the next, each counted
     * once committed. Interrupted, no next one begins.
     */
    const store = async (batch: Claimed[]): Promise<void> => {
      let rest = batch;
      try {
        while (rest.length > 0 && !failure) {
          const results = await opened.importer.store(rest.map((r) => r.document));
          if (results.length === 0) throw new Error('the storage stored none of a batch of documents');
          results.forEach((result, i) => {
            const r = rest[i]!;
            r.claim.settle(result.status !== 'refused');
            if (result.status === 'refused') return refuse(r.n, refusalOf(r.doc, result.error));
            summary[result.status]++;
            if (result.warnings.length > 0) summary.withWarnings++;
          });
          rest = rest.slice(results.length);
        }
      } finally {
        // Not stored (the import stops): a document of this batch waiting for one of them below is not kept waiting.
        for (const r of rest) r.claim.settle(false);
      }
    };
    const work = preparer
      .prepare(docs)
      .then(async (prepared) => {
        if (opened.engine === 'sqlite') await turn;
        await identitiesTurn;
        // An earlier batch failed: the import stops there, leaving no gap before what follows.
        if (failure) return;
        const ready: Claimed[] = [];
        /** Documents whose identity one before them claimed, not yet stored or refused: each judged once it is. */
        const waiting: (Claimed & { later: Promise<Refusal | undefined> })[] = [];
        prepared.forEach((p, i) => {
          if ('refusal' in p) return refuse(first + i, p.refusal);
          const claim = identities.claim(docs[i]!, p.ready.write);
          if (claim.refusal) return refuse(first + i, claim.refusal);
          claims.push(claim);
          const claimed = { n: first + i, doc: docs[i]!, document: p.ready, claim };
          if (claim.later) waiting.push({ ...claimed, later: claim.later });
          else ready.push(claimed);
        });
        identitiesTaken();
        await store(ready);
        // In input order: each waits for documents before it only (this batch's, settled above
        // or earlier in this loop, or an earlier batch's), so none waits for one that waits for
        // it. Rare (a document repeating an identity): one transaction each.
        for (const w of waiting) {
          if (failure) return;
          const repeated = await w.later;
          if (failure) return;
          if (!repeated) await store([w]);
          else {
            w.claim.settle(false);
            refuse(w.n, repeated);
          }
        }
      })
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => {
        // Failed or stopped before, the batches after it are not kept waiting: for its identities,
        // nor for a claim of its documents (not stored, as far as they can tell: they stop too).
        identitiesTaken();
        for (const claim of claims) claim.settle(false);
      });
    const done = Promise.all([turn, work]).then(async () => {
      // Waited for (its reader taking what was printed): the batch is not done before.
      for (const r of refused.sort((a, b) => a.n - b.n)) await onRefusal(r.refusal);
    });
    const tracked = done.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    before = tracked;
  };
  // No registration can carry a document longer than a request body: longer ones are refused unread.
  const documents = readDocuments(files, config.maxBodyBytes);
  try {
    let batch: SourceDocument[] = [];
    let n = 0;
    for (;;) {
      // A read may wait for ever (a terminal, a producer that stalls): the signal does not.
      const next = await Promise.race([documents.next(), interrupted]);
      if (next.done) break;
      batch.push(next.value);
      n++;
      if (batch.length >= options.batchSize) {
        flush(batch, n - batch.length);
        batch = [];
        while (inFlight.size >= IN_FLIGHT) await Promise.race([...inFlight, interrupted]);
        if (failure) throw failure.error;
      }
    }
    if (batch.length > 0) flush(batch, n - batch.length);
    await Promise.race([Promise.all(inFlight), interrupted]);
    if (failure) throw failure.error;
  } catch (error) {
    // The batches committed before the failure stay stored: count them once the others settled.
    await Promise.all(inFlight);
    const stored = summary.created + summary.updated + summary.unchanged;
    // A source that cannot be read part way (a device or pipe named, a file changed or gone since
    // it was listed) after documents were stored: it was said as a usage error alone, as if
    // nothing had been imported. Nothing stored, it is one.
    if (error instanceof SourceError && failure === undefined && stored === 0) throw error;
    throw new ImportStopped(failure?.error ?? error, stored);
  } finally {
    // Stopped part way, the file being read is closed (not awaited: a read of standard input may never end).
    void documents.return(undefined).catch(() => undefined);
    await Promise.all(inFlight);
    await preparer.close();
    await opened.close();
  }
  summary.seconds = (performance.now() - started) / 1000;
  summary.imported = summary.created + summary.updated + summary.unchanged;
  summary.documents = summary.imported + summary.refused;
  summary.perSecond = Math.round(summary.documents / Math.max(summary.seconds, 0.001));
  return summary;
}

// --- output --------------------------------------------------------------------------------

function formatRefusal(r: Refusal, o: Output): string {
  const s = styles(o.color);
  const where = r.line === undefined ? r.file : `${r.file}:${r.line}`;
  const locate: Locate = (pointer) => r.details.find((d) => d.path === pointer)?.location;
  return `${s.red('✗ refused')} ${s.bold(where)}: ${r.code}\n  ${r.message}\n${formatFindings(r.details, 'error', s, locate)}`;
}

function formatSummary(summary: ImportSummary, where: string): string {
  const n = (x: number): string => x.toLocaleString('en-US');
  const documents = (x: number): string => countOf(x, 'document');
  // The refused ones were read but not imported: "imported 0 of 1 document", never "imported 1 documents".
  const imported = summary.imported === summary.documents ? documents(summary.imported) : `${n(summary.imported)} of ${documents(summary.documents)}`;
  let text =
    `imported ${imported} into ${where} in ${summary.seconds.toFixed(1)} s (${n(summary.perSecond)}/s): ` +
    `${n(summary.created)} created, ${n(summary.updated)} updated, ${n(summary.unchanged)} unchanged, ${n(summary.refused)} refused\n`;
  if (summary.withWarnings > 0) text += `${n(summary.withWarnings)} stored with warnings (a2a-registry validate shows them)\n`;
  return text;
}

/**
 * The --json document, written as the import goes: its refusals first, each as it is reported
 * (an import of millions of refused documents holds none of them), then the summary's other
 * members, or the {"error"} that stopped it. Until a refusal comes, nothing is written, and the
 * document is the one printJson writes.
 */
class JsonReport {
  #open = false;

  constructor(private readonly o: Output) {}

  refusal(r: Refusal): void {
    const indented = JSON.stringify(r, null, 2).replaceAll('\n', '\n    ');
    this.o.out(`${this.#open ? ',' : '{\n  "refusals": ['}\n    ${indented}`);
    this.#open = true;
  }

  /** Ends the document with `members` (a `refusals` among them is the list already written, when one was). */
  end(members: Record<string, unknown>): void {
    if (!this.#open) return printJson(this.o, members);
    const { refusals: _written, ...rest } = members;
    const more = JSON.stringify(rest, null, 2);
    this.o.out(`\n  ]${more === '{}' ? '\n}' : `,${more.slice(1)}`}\n`);
  }
}

/**
 * Storage that cannot be opened or failed part way, or an interruption: what happened, what was
 * stored, what to do; with --json as an {"error"} document on stdout too, as every command's
 * failures are (after the refusals reported before it, if any).
 */
function reportStopped(o: Output, options: Pick<ImportOptions, 'dataDir' | 'databaseUrl'>, report: JsonReport | undefined, err: Error): number {
  const cause = err instanceof ImportStopped || err instanceof StorageNotOpened ? err.cause : err;
  const stored = err instanceof ImportStopped ? err.stored : 0;
  const n = (x: number): string => x.toLocaleString('en-US');
  const again = 'run the same import again to finish (what is stored already comes out unchanged)';
  let code = err instanceof StorageNotOpened || isStorageFault(cause) ? 'STORAGE_UNAVAILABLE' : 'IMPORT_FAILED';
  let message: string;
  if (cause instanceof ImportInterrupted) {
    code = 'INTERRUPTED';
    message = `the import was interrupted (${cause.signal}): ${countOf(stored, 'document')} stored before it stopped (a transaction commits whole or not at all: nothing is half-written); ${again}.`;
  } else if (cause instanceof StorageUnavailableError && cause.fault.code === 'REPLACED') {
    // A restore (or a hand) put another file in place of the database the import had open: what
    // it stored went with the file it opened, not into the one now in place.
    message =
      `the import stopped: the database file was replaced by another file (a restore?) while the import was writing to it. ` +
      `The ${n(stored)} documents it stored went with the file it had open (a2a-registry restore keeps that one beside, as registry.db.replaced-<time>); ` +
      'run the same import again to import them into the database now in place.';
  } else if (err instanceof ImportStopped) {
    message = `the import stopped: ${err.message}. The ${n(stored)} documents stored before it stay stored; ${again}.`;
  } else {
    message = `nothing was imported: ${err.message}`;
  }
  // Storage names its setting ("Check that REGISTRY_DATA_DIR (...) is a directory ..."): the flag, when the user gave that.
  message = nameFlags(message, { dataDir: options.dataDir, databaseUrl: options.databaseUrl });
  // `stored` whichever way it stopped (README): 0 when storage could not even be opened.
  report?.end({ error: { code, message, stored } });
  o.err(`a2a-registry: ${message}\n`);
  return EXIT_FAILED;
}

/** A storage fault (unreachable server, disk full, ...), or an error whose cause is one (a failed connect). */
function isStorageFault(error: unknown): boolean {
  const faulty = (e: unknown): boolean => e instanceof StorageUnavailableError || postgresFault(e) !== undefined || sqliteFault(e) !== undefined;
  return faulty(error) || (error instanceof Error && faulty(error.cause));
}

/** A --batch-size (import, migrate): a whole number from 1 to 10,000. */
export function positiveInt(value: string): number {
  if (!/^[1-9][0-9]*$/.test(value.trim()) || Number(value) > 10_000) throw new InvalidArgumentError('must be a whole number from 1 to 10000');
  return Number(value);
}

export function register(program: Command): void {
  program
    .command('import')
    .description("bulk-load agent cards and MCP servers into the registry's storage, with the checks of a registration")
    .argument('<source...>', 'a directory (*.json, *.jsonl, *.ndjson files), a JSON file, a JSON-lines file, or "-" (JSON lines on stdin)')
    .option('--owner <principal>', "the principal the entries belong to (as if it had registered them; another principal's entries are never updated, with admin too)", principal, ADMIN_PRINCIPAL)
    .option('--data-dir <dir>', "the registry's data directory: its SQLite database (REGISTRY_DATA_DIR, default ./data)", nonEmpty)
    .option('--database-url <url>', 'postgres://... to import into PostgreSQL instead (DATABASE_URL)', nonEmpty)
    .addOption(new Option('--batch-size <n>', 'documents per transaction').argParser(positiveInt).default(DEFAULT_BATCH_SIZE))
    .option('--json', 'print the summary and every refusal as one JSON document (the refusals first, as they are found)', false)
    .addHelpText(
      'after',
      '\nDocuments are checked exactly as a registration is (REGISTRY_MAX_DOCUMENT_BYTES, REGISTRY_TRUSTED_KEYS, REGISTRY_REQUIRE_VERIFIED... apply;\n' +
        'REGISTRY_MAX_REVISIONS too, but no entry quota: an import is the operator\'s, exempt as an admin is);\n' +
        'a refused document is reported with its file and line and skipped. Importing the same documents again changes nothing\n' +
        '(one document per identity: a later one with the identity of an earlier one stored is refused as DUPLICATE_IDENTITY).\n' +
        'SQLite: restart the registry afterwards (it reads the entries at start-up). PostgreSQL: running replicas see them at once.\n' +
        "SQLite: the database file is checked first (SQLite's quick_check, as `a2a-registry check --quick`; one the registry recorded\n" +
        'damaged, registry.db.damaged, is refused at once): nothing is written into a damaged one.\n' +
        'Exit status: 0 every document stored, 1 any refused or not JSON, or storage failed (the documents stored before stay stored: run it again), 2 usage or an unreadable source;\n' +
        'Ctrl-C (130), SIGTERM (143) or SIGHUP (129) stops it once the transactions under way have committed, and says how many documents were stored.\n' +
        'Examples:\n  a2a-registry import --data-dir /var/lib/a2a-registry cards/\n  a2a-registry import --owner acme --database-url postgres://registry@db/registry entries.jsonl',
    )
    .action(async (sources: string[], options: ImportOptions) => {
      failOnClosedPipe();
      process.exitCode = await importCommand(sources, options, defaultOutput());
    });
}

export async function importCommand(sources: string[], options: ImportOptions, o: Output): Promise<number> {
  const config = commandSettings(loadImportConfig, { dataDir: options.dataDir, databaseUrl: options.databaseUrl }, o);
  if ('usage' in config) return reportUsage(o, options.json, 'USAGE', config.usage);
  const contradiction = dataDirIgnored(options, config);
  if (contradiction) return reportUsage(o, options.json, 'USAGE', contradiction);
  const report = options.json ? new JsonReport(o) : undefined;
  const stop = interruption();
  let summary: ImportSummary;
  try {
    // Printed as they come, each waiting for the reader to take the one before: not held in memory.
    const print = report ? (r: Refusal) => report.refusal(r) : (r: Refusal) => o.err(formatRefusal(r, o));
    const interrupted = new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }));
    const onRefusal = async (r: Refusal): Promise<void> => {
      print(r);
      if (o.drained) await Promise.race([o.drained(), interrupted]);
    };
    summary = await runImport(config, sources, { ...options, signal: stop.signal }, onRefusal);
  } catch (err) {
    if (err instanceof SourceError) {
      report?.end({ error: { code: 'READ_ERROR', message: err.message } });
      o.err(`a2a-registry: ${err.message}\n`);
      return EXIT_USAGE;
    }
    if (err instanceof ImportStopped && err.cause instanceof SourceError) {
      // Still a source that cannot be read (exit 2), with what was stored before it: that stays.
      const message =
        `${err.message} The import stopped there, with ${countOf(err.stored, 'document')} stored before it, which stay stored; ` +
        'fix or remove that source and run the same import again (what is stored already comes out unchanged).';
      report?.end({ error: { code: 'READ_ERROR', message, stored: err.stored } });
      o.err(`a2a-registry: ${message}\n`);
      return EXIT_USAGE;
    }
    if (!(err instanceof Error)) throw err;
    const status = reportStopped(o, options, report, err);
    // Interrupted: it ends as the signal ends a process (130 for Ctrl-C), as backup and restore do.
    return err instanceof ImportStopped && err.cause instanceof ImportInterrupted ? stop.end(err.cause.signal) : status;
  } finally {
    stop.release();
  }
  if (report) report.end({ ...summary, refusals: [] });
  else {
    // A blank line sets the summary off from the refusals above it, on their stream: on standard
    // output it was the first line a script reading the summary got.
    if (summary.refused > 0) o.err('\n');
    o.out(formatSummary(summary, summary.engine === 'sqlite' ? `${config.dataDir} (SQLite)` : `PostgreSQL (${withoutPassword(config.databaseUrl ?? '') ?? 'DATABASE_URL'})`));
  }
  return summary.refused > 0 ? EXIT_FAILED : EXIT_OK;
}

/**
 * --data-dir with a PostgreSQL URL (--database-url, or DATABASE_URL(_FILE) from the environment): as for
 * `serve`, the URL selects where the entries are, and an import has no other use for a data
 * directory, so the one named would be ignored. It was, silently: `import --data-dir ./data`
 * in a shell where DATABASE_URL was exported filled PostgreSQL. REGISTRY_DATA_DIR from the
 * environment beside DATABASE_URL is a deployment's configuration (the replicas' snapshot and
 * token directory), not a contradiction: the import goes to PostgreSQL, as the summary says.
 */
function dataDirIgnored(options: Pick<ImportOptions, 'dataDir' | 'databaseUrl'>, config: ImportConfig, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (options.dataDir === undefined || config.databaseUrl === undefined) return undefined;
  // Named as the user gave it: the URL read from DATABASE_URL_FILE was told as DATABASE_URL, a
  // variable not set, whose unsetting changed nothing. (Both set is refused before this.)
  const variable = (env.DATABASE_URL_FILE ?? '').trim() === '' ? 'DATABASE_URL' : 'DATABASE_URL_FILE';
  const url = options.databaseUrl === undefined ? variable : '--database-url';
  const unset = options.databaseUrl === undefined ? `unset ${variable}` : 'drop --database-url';
  return (
    `--data-dir names the SQLite database to import into, but ${url} (${withoutPassword(config.databaseUrl) ?? 'a PostgreSQL URL'}) selects PostgreSQL, as it does for serve, ` +
    `and the data directory would be ignored: drop --data-dir to import into PostgreSQL, or ${unset} to import into the SQLite database in ${config.dataDir}`
  );
}

