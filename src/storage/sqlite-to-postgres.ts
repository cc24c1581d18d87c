/**
 * Moves a registry from its embedded SQLite database to PostgreSQL (`a2a-registry migrate`), row
 * for row: entries keep their ids, owners, list order and every kept revision (numbers, authors,
 * times, documents, signature verification), with their URL claims, freshness records (source,
 * health, schedule), the change log and its position, the durable write tasks with their push
 * configs, and the watches (released, so a replica adopts them). After switching DATABASE_URL the
 * registry answers as before. `a2a-registry import` of the documents is no substitute: it gives
 * new ids, one owner, and keeps only the current documents.
 *
 * Not carried, because it is not in the database: what a process holds in memory (the tasks of
 * reads and refused requests, open watch streams: their subscribers resubscribe, and the watch
 * itself is carried), the saved search index (a replica builds its own), and the data directory's
 * files (admin-token, keys): give the replicas the same tokens.
 *
 * Safe: the SQLite file is read in one read transaction (a snapshot: a registry may keep running
 * on it, but what it writes after the snapshot is not carried, so stop it for the final run); the
 * target is written in one PostgreSQL transaction, so a failure leaves it as it was; a target
 * that holds registry data is refused unless `replace`. The copy is verified before it commits:
 * row counts, and a checksum of every entry and revision read back from PostgreSQL. A value
 * PostgreSQL's text cannot hold (U+0000, which releases before stored on SQLite) is found before
 * anything is written, and refused naming its rows, or carried as U+FFFD when asked (`replaceNul`).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import pg from 'pg';
import Database from 'better-sqlite3';
import { withoutPassword } from '../lib/url-password.js';
import { whyCannotRead } from '../lib/write-access.js';
import { SchemaTooNewError } from './common.js';
import { sqliteFile } from './locations.js';
import { postgresFault, sqliteFault } from './faults.js';
import { damagedRead } from './sqlite/integrity.js';
import { migratePostgres } from './postgres/migrations.js';
import { lockOutReplicas } from './postgres/presence.js';
import { whyNotAnSqliteDatabase } from './sqlite/database-file.js';
import { companionOf } from './sqlite/database-companions.js';
import { restoreUnderWay } from './sqlite/restore-swap.js';
import { SQLITE_SCHEMA_VERSION } from './sqlite/migrations.js';
import { readLastChangeSeq } from './sqlite/store.js';
import { tidyAfterReading } from './sqlite/reading-leftovers.js';

/**
 * A migration that cannot be made, and why; `usage` when the fix is in the command line (a --from
 * that is not there or may not be read, a --to that is no PostgreSQL URL, a database holding
 * registry data without --force), not when what it names is the wrong thing (not a registry's
 * database, another release's schema) or in use: that is the command failing on it, as backup
 * and restore fail (README's exit status table).
 */
export class MigrationError extends Error {
  constructor(
    message: string,
    readonly usage = false,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

/** The tables copied, in the order they are copied (a referenced table before its references). */
export const MIGRATED_TABLES = [
  'entries',
  'entry_revisions',
  'entry_freshness',
  'url_claims',
  'entry_urls',
  'changes',
  'tasks',
  'push_notification_configs',
  'watches',
] as const;
export type MigratedTable = (typeof MIGRATED_TABLES)[number];

export interface MigrationProgress {
  /** The table being copied, or the read-back of entries and revisions that verifies the copy. */
  table: MigratedTable | 'verification';
  done: number;
  total: number;
}

export interface MigrationSummary {
  /** The SQLite file read. */
  source: string;
  /** The target, its password hidden. */
  target: string;
  rows: Record<MigratedTable, number>;
  /** The change-log position copied: the target numbers its next change after it. */
  changeSeq: number;
  /** sha256 over every entry and revision, equal on both sides. */
  checksum: string;
  /** Whether registry data the target held was replaced (`replace`). */
  replaced: boolean;
  /** Values holding U+0000 carried with U+FFFD in its place (`replaceNul`). */
  replacedNul: number;
  seconds: number;
}

export interface MigrationOptions {
  /** A data directory (its registry.db) or an SQLite file. */
  from: string;
  /** postgres://... */
  to: string;
  /** Replace the registry data the target holds (otherwise such a target is refused). */
  replace: boolean;
  /** Rows per INSERT. */
  batchSize: number;
  /**
   * Carry each U+0000 (NUL) that SQLite holds as U+FFFD, which PostgreSQL's text can hold. Without
   * it, a source holding one is refused before anything is written (see `unstorableValues`).
   */
  replaceNul?: boolean;
  onProgress?: (p: MigrationProgress) => void;
  /**
   * Aborted (Ctrl-C): the copy stops at its next batch and is rolled back, as is any failure; one
   * that comes once COMMIT is sent no longer stops it.
   */
  signal?: AbortSignal;
}

/** A URL with its password replaced by ***, for messages. */
export const redactUrl = (url: string): string => withoutPassword(url) ?? '(an unparsable URL)';

/** The SQLite file `from` names: the file itself, or a data directory's registry.db. */
function sourceFile(from: string): string {
  // A registry's data directory is 0700: run as another user, its database was "not there".
  const unreadable = (file: string): MigrationError | undefined => {
    const why = whyCannotRead(file);
    return why ? new MigrationError(`cannot read the registry database ${file}: ${why}; run the migration as the registry's user, or as one who may read its data directory`, true) : undefined;
  };
  let stat: fs.Stats;
  try {
    stat = fs.statSync(from);
  } catch {
    const refused = unreadable(from);
    if (refused) throw refused;
    throw new MigrationError(`there is no registry data directory or database at ${from}: give --from the SQLite registry's data directory (REGISTRY_DATA_DIR) or its registry.db`, true);
  }
  const file = stat.isDirectory() ? sqliteFile(from) : from;
  // Its log or lock was read as "not an SQLite database" or "not a registry's": name what it is.
  const companion = companionOf(file);
  if (companion) throw new MigrationError(`${from} is ${companion.role.replace("the database's", `the database ${companion.database}'s`)}, not a database: give --from the data directory or ${companion.database}`, true);
  const refused = unreadable(file);
  if (refused) throw refused;
  // A restore killed while it put its copy in place: the file there may be the database it was
  // replacing, or none. It was copied without a word (the replicas then started on the data the
  // restore was to replace), or said to be missing; `check` and `import` refuse it alike.
  const underWay = restoreUnderWay(file);
  if (underWay) throw new MigrationError(underWay);
  if (!fs.existsSync(file)) throw new MigrationError(`${from} holds no registry database (no ${file}): give --from the SQLite registry's data directory (REGISTRY_DATA_DIR)`, true);
  // An empty file or a device was "an SQLite database but not a registry's", a folder "disk I/O error".
  const notADatabase = whyNotAnSqliteDatabase(file, 'a registry database', "give --from the SQLite registry's data directory (REGISTRY_DATA_DIR) or its registry.db");
  if (notADatabase) throw new MigrationError(notADatabase.message, notADatabase.folder);
  return file;
}

/** Opens the source read-only and checks it is a registry database at this release's schema. */
function openSource(file: string): Database.Database {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new MigrationError(`${file} cannot be opened as an SQLite database: ${(err as Error).message}`);
  }
  try {
    // A running registry's checkpoint may hold the lock for a moment.
    db.pragma('busy_timeout = 10000');
    let table: unknown;
    try {
      table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'registry_migrations'").get();
    } catch (err) {
      throw new MigrationError(`${file} is not an SQLite database (${(err as Error).message})`);
    }
    if (!table) throw new MigrationError(`${file} is an SQLite database but not a registry's (it has no registry_migrations table)`);
    const version = Number((db.prepare('SELECT max(version) AS v FROM registry_migrations').get() as { v: number | null }).v ?? 0);
    if (version > SQLITE_SCHEMA_VERSION) {
      throw new MigrationError(`${file} was written by a newer release (schema ${version}; this one reads up to ${SQLITE_SCHEMA_VERSION}): migrate it with that release or a later one`);
    }
    if (version < SQLITE_SCHEMA_VERSION) {
      throw new MigrationError(
        `${file} was written by an older release (schema ${version}; this one copies schema ${SQLITE_SCHEMA_VERSION}): start this release's registry on it once (it upgrades the database at start-up), stop it, then migrate`,
      );
    }
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** How one table is read from SQLite (keyset pages by `key`) and written to PostgreSQL (`unnest` of typed arrays). */
interface TableCopy {
  table: MigratedTable;
  /** Columns as SQLite names them, in the order of `types`. */
  columns: readonly string[];
  /** The PostgreSQL array type of each column. */
  types: readonly string[];
  /** The primary key, for paging in a stable order. */
  key: readonly string[];
  /** Turns an SQLite value into what PostgreSQL takes, per column (default: as it is). */
  convert?: Partial<Record<string, (v: unknown) => unknown>>;
  /** Added after INSERT INTO t (...): entries' list_seq is GENERATED ALWAYS. */
  overriding?: boolean;
}

/** Text per INSERT, at most (about 32 MiB): bounds the memory and the size of one query. */
const MAX_BATCH_CHARS = 32 * 1024 * 1024;

const bool = (v: unknown): boolean | null => (v === null || v === undefined ? null : Number(v) !== 0);

const NUL = '\u0000';
/** U+0000 as PostgreSQL's text can hold it: U+FFFD, the replacement character (`replaceNul`). */
const withoutNul = (v: unknown): unknown => (typeof v === 'string' && v.includes(NUL) ? v.replaceAll(NUL, '\uFFFD') : v);

const COPIES: readonly TableCopy[] = [
  {
    table: 'entries',
    columns: ['id', 'list_seq', 'kind', 'identity_url', 'owner', 'current_revision', 'created_at', 'updated_at', 'trust_keyset'],
    types: ['uuid', 'bigint', 'text', 'text', 'text', 'integer', 'timestamptz', 'timestamptz', 'text'],
    key: ['list_seq'],
    overriding: true,
  },
  {
    table: 'entry_revisions',
    columns: ['entry_id', 'revision', 'name', 'description', 'protocol_version', 'interfaces', 'document_text', 'content_hash', 'author', 'created_at', 'origin', 'verification', 'verified_kid'],
    types: ['uuid', 'integer', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'timestamptz', 'text', 'text', 'text'],
    key: ['entry_id', 'revision'],
  },
  {
    table: 'entry_freshness',
    columns: ['entry_id', 'source_url', 'fetched_at', 'etag', 'last_modified', 'health_status', 'checked_at', 'health_since', 'failures', 'health_reason', 'health_message', 'drift', 'next_check_at', 'failing_since'],
    types: ['uuid', 'text', 'timestamptz', 'text', 'text', 'text', 'timestamptz', 'timestamptz', 'integer', 'text', 'text', 'boolean', 'timestamptz', 'timestamptz'],
    key: ['entry_id'],
    convert: { drift: bool },
  },
  { table: 'url_claims', columns: ['url', 'owner'], types: ['text', 'text'], key: ['url'] },
  { table: 'entry_urls', columns: ['entry_id', 'url'], types: ['uuid', 'text'], key: ['entry_id', 'url'] },
  { table: 'changes', columns: ['seq', 'entry_id', 'op', 'at'], types: ['bigint', 'uuid', 'text', 'timestamptz'], key: ['seq'] },
  {
    table: 'tasks',
    columns: ['tenant', 'owner', 'id', 'context_id', 'status_last_updated', 'status_state', 'status', 'artifacts', 'history', 'metadata', 'protocol_version'],
    types: ['text', 'text', 'text', 'text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text'],
    key: ['tenant', 'owner', 'id'],
  },
  {
    table: 'push_notification_configs',
    columns: ['tenant', 'owner', 'task_id', 'config_id', 'config_data', 'protocol_version'],
    types: ['text', 'text', 'text', 'text', 'text', 'text'],
    key: ['tenant', 'owner', 'task_id', 'config_id'],
  },
  {
    table: 'watches',
    columns: ['id', 'tenant', 'owner', 'principal', 'context_id', 'request', 'push_configs', 'created_at', 'expires_at', 'seq_floor', 'delivered_seq', 'change_seq', 'holder', 'lease_until'],
    types: ['text', 'text', 'text', 'text', 'text', 'text', 'text', 'bigint', 'bigint', 'bigint', 'bigint', 'bigint', 'text', 'bigint'],
    key: ['id'],
    // Released: the SQLite process that ran a watch does not run on PostgreSQL; the first
    // replica to look adopts it (and its subscribers resubscribe there).
    convert: { holder: () => '', lease_until: () => 0 },
  },
];

/** Copies one table page by page (inside the open SQLite read transaction and the PostgreSQL one). */
async function copyTable(db: Database.Database, client: pg.Client, copy: TableCopy, batchSize: number, onProgress: (done: number, total: number) => void): Promise<number> {
  const total = Number((db.prepare(`SELECT count(*) AS n FROM ${copy.table}`).get() as { n: number }).n);
  const keyList = copy.key.join(', ');
  const placeholders = copy.key.map(() => '?').join(', ');
  const first = db.prepare(`SELECT ${copy.columns.join(', ')} FROM ${copy.table} ORDER BY ${keyList} LIMIT ?`);
  const next = db.prepare(`SELECT ${copy.columns.join(', ')} FROM ${copy.table} WHERE (${keyList}) > (${placeholders}) ORDER BY ${keyList} LIMIT ?`);
  const insert =
    `INSERT INTO ${copy.table} (${copy.columns.join(', ')}) ${copy.overriding ? 'OVERRIDING SYSTEM VALUE ' : ''}` +
    `SELECT * FROM unnest(${copy.types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`;
  let done = 0;
  let last: Record<string, unknown> | undefined;
  onProgress(0, total);
  for (;;) {
    // At most batchSize rows, and fewer once they hold MAX_BATCH_CHARS of text: documents may be
    // up to 1 MiB each (REGISTRY_MAX_DOCUMENT_BYTES), and a thousand of them in one query is too much.
    const rows: Record<string, unknown>[] = [];
    let chars = 0;
    const page = last === undefined ? first.iterate(batchSize) : next.iterate(...copy.key.map((k) => last![k]), batchSize);
    for (const row of page as Iterable<Record<string, unknown>>) {
      rows.push(row);
      for (const value of Object.values(row)) if (typeof value === 'string') chars += value.length;
      if (chars >= MAX_BATCH_CHARS) break;
    }
    if (rows.length === 0) break;
    const arrays = copy.columns.map((c) => {
      const convert = copy.convert?.[c];
      return rows.map((r) => withoutNul(convert ? convert(r[c]) : (r[c] ?? null)));
    });
    await client.query(insert, arrays);
    done += rows.length;
    last = rows[rows.length - 1];
    onProgress(done, total);
  }
  return done;
}

const ENTRY_SUM_SQL = {
  sqlite: `SELECT id, list_seq, kind, identity_url, owner, current_revision, created_at, updated_at, trust_keyset FROM entries WHERE list_seq > ? ORDER BY list_seq LIMIT ?`,
  postgres: `SELECT id::text, list_seq, kind, identity_url, owner, current_revision, created_at, updated_at, trust_keyset FROM entries WHERE list_seq > $1 ORDER BY list_seq LIMIT $2`,
};
const REVISION_SUM_SQL = {
  sqlite: `SELECT entry_id, revision, name, description, protocol_version, interfaces, document_text AS document_md5, content_hash, author, created_at, origin, verification, verified_kid
           FROM entry_revisions WHERE entry_id = ? ORDER BY revision`,
  // The documents' digests, not the documents: up to 1 MiB each, they need not all cross the wire again.
  postgres: `SELECT entry_id::text, revision, name, description, protocol_version, interfaces, md5(document_text) AS document_md5, content_hash, author, created_at, origin, verification, verified_kid
             FROM entry_revisions WHERE entry_id = ANY($1::uuid[]) ORDER BY entry_id, revision`,
};

/** One value as both engines' rows give it: times as ISO-8601 instants, numbers as numbers. */
function canonical(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  // As copied: a source refused for U+0000 is never compared, and `replaceNul` wrote U+FFFD.
  if (typeof value === 'string' && value.includes(NUL)) return withoutNul(value);
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value)) return new Date(value).toISOString();
  if (typeof value === 'string' && /^\d+$/.test(value) && value.length < 16) return Number(value);
  return value ?? null;
}

/**
 * sha256 over every entry (in list order) followed by its revisions (in number order), every
 * column as `canonical` gives it: computed from SQLite and from PostgreSQL, it proves the copy
 * holds what the source held.
 */
async function checksum(
  pages: (after: number, limit: number) => Promise<Record<string, unknown>[]>,
  revisionsOf: (ids: string[]) => Promise<Record<string, unknown>[]>,
  batchSize: number,
  onPage: (entries: number) => void = () => undefined,
): Promise<string> {
  const hash = createHash('sha256');
  let after = 0;
  let done = 0;
  for (;;) {
    const entries = await pages(after, batchSize);
    if (entries.length === 0) break;
    const revisions = await revisionsOf(entries.map((e) => String(e.id)));
    const byEntry = new Map<string, Record<string, unknown>[]>();
    for (const r of revisions) {
      const list = byEntry.get(String(r.entry_id)) ?? [];
      list.push(r);
      byEntry.set(String(r.entry_id), list);
    }
    for (const e of entries) {
      hash.update(JSON.stringify(Object.values(e).map(canonical)) + '\n');
      for (const r of byEntry.get(String(e.id)) ?? []) hash.update(JSON.stringify(Object.values(r).map(canonical)) + '\n');
    }
    after = Number(entries[entries.length - 1]!.list_seq);
    done += entries.length;
    onPage(done);
  }
  return hash.digest('hex');
}

function sqliteChecksum(db: Database.Database, batchSize: number): Promise<string> {
  const page = db.prepare(ENTRY_SUM_SQL.sqlite);
  const revisions = db.prepare(REVISION_SUM_SQL.sqlite);
  return checksum(
    async (after, limit) => page.all(after, limit) as Record<string, unknown>[],
    async (ids) =>
      ids.flatMap((id) =>
        (revisions.all(id) as Record<string, unknown>[]).map((r) => ({ ...r, document_md5: createHash('md5').update(String(r.document_md5), 'utf8').digest('hex') })),
      ),
    batchSize,
  );
}

function postgresChecksum(client: pg.Client, batchSize: number, onPage: (entries: number) => void): Promise<string> {
  return checksum(
    async (after, limit) => (await client.query(ENTRY_SUM_SQL.postgres, [after, limit])).rows as Record<string, unknown>[],
    async (ids) => (await client.query(REVISION_SUM_SQL.postgres, [ids])).rows as Record<string, unknown>[],
    batchSize,
    onPage,
  );
}

/** A value SQLite holds that PostgreSQL's text cannot: its table, its row (by key) and column. */
export interface UnstorableValue {
  table: MigratedTable;
  row: Record<string, unknown>;
  column: string;
}

/**
 * Every text value of the copied tables holding U+0000 (NUL), which PostgreSQL's text cannot hold:
 * the INSERT of its batch would fail the copy part way ("invalid byte sequence for encoding UTF8:
 * 0x00"). Releases before refused none (a verified signature's kid, a message's context id), and
 * SQLite stores them. Found by bytes (SQLite's text functions stop at a NUL).
 */
export function unstorableValues(db: Database.Database): UnstorableValue[] {
  const found: UnstorableValue[] = [];
  for (const copy of COPIES) {
    const texts = copy.columns.filter((c, i) => copy.types[i] === 'text');
    const holds = (c: string) => `instr(CAST(${c} AS BLOB), x'00') > 0`;
    const rows = db.prepare(`SELECT ${[...copy.key, ...texts.map((c) => `${holds(c)} AS "nul:${c}"`)].join(', ')} FROM ${copy.table} WHERE ${texts.map(holds).join(' OR ')}`).all() as Record<string, unknown>[];
    for (const r of rows) {
      const row = Object.fromEntries(copy.key.map((k) => [k, r[k]]));
      for (const column of texts) if (Number(r[`nul:${column}`]) === 1) found.push({ table: copy.table, row, column });
    }
  }
  return found;
}

/** At most this many values are named in the refusal; the count says how many there are. */
const NAMED_UNSTORABLE = 20;

function unstorableRefusal(file: string, found: UnstorableValue[]): MigrationError {
  const named = found.slice(0, NAMED_UNSTORABLE).map((v) => {
    const row = Object.entries(v.row).map(([k, value]) => `${k} ${JSON.stringify(value)}`).join(', ');
    return `${v.table} (${row}): ${v.column}`;
  });
  const more = found.length > NAMED_UNSTORABLE ? `; and ${found.length - NAMED_UNSTORABLE} more` : '';
  return new MigrationError(
    `${file} holds ${found.length === 1 ? 'a value' : `${found.length} values`} with the character U+0000 (NUL), which PostgreSQL's text cannot hold ` +
      `(stored before the registry refused it): ${named.join('; ')}${more}. Nothing was written. ` +
      `Run the migration again with --replace-nul to carry each with U+FFFD (the replacement character) in its place, ` +
      `or first remove those rows on the SQLite registry (unregister the entries named)`,
  );
}

/** What registry data a PostgreSQL database holds, as "3 entries, 2 tasks" (empty when none). */
async function heldData(client: pg.Client): Promise<string> {
  const { rows } = await client.query<{ entries: string; tasks: string; watches: string; changes: string }>(
    `SELECT (SELECT count(*) FROM entries) AS entries, (SELECT count(*) FROM tasks) AS tasks,
            (SELECT count(*) FROM watches) AS watches, (SELECT count(*) FROM changes) AS changes`,
  );
  const r = rows[0]!;
  return Object.entries(r)
    .filter(([, n]) => Number(n) > 0)
    .map(([name, n]) => `${Number(n).toLocaleString('en-US')} ${name}`)
    .join(', ');
}

/** Copies the SQLite registry at `options.from` into the PostgreSQL database at `options.to`. */
export async function migrateSqliteToPostgres(options: MigrationOptions): Promise<MigrationSummary> {
  const started = Date.now();
  const file = sourceFile(options.from);
  // A stopped registry's database (WAL mode) is only read: no -wal or -shm of this read stays beside it.
  const tidy = tidyAfterReading(file);
  try {
    return await copyInto(file, options, started);
  } catch (err) {
    // A read landing on a damaged page: SQLite's bare "database disk image is malformed" was all
    // it said, naming neither the file nor the repair. Said as backup says it.
    if (!(err instanceof MigrationError) && sqliteFault(err)?.reason === 'corrupt') {
      throw new MigrationError(damagedRead(file, err as Error, `so it cannot be migrated: nothing was committed to ${redactUrl(options.to)}`), false, { cause: err });
    }
    throw err;
  } finally {
    tidy();
  }
}

/** The copy of the SQLite database `file` (its connection closed before this returns or throws). */
async function copyInto(file: string, options: MigrationOptions, started: number): Promise<MigrationSummary> {
  const target = redactUrl(options.to);
  const progress = (p: MigrationProgress): void => {
    options.signal?.throwIfAborted();
    options.onProgress?.(p);
  };
  const db = openSource(file);
  // The copy reads one snapshot, taken by this transaction's first read: the check below, before
  // anything is written or PostgreSQL even asked, sees what the copy will.
  db.exec('BEGIN');
  let replacedNul = 0;
  try {
    const unstorable = unstorableValues(db);
    if (unstorable.length > 0 && options.replaceNul !== true) throw unstorableRefusal(file, unstorable);
    replacedNul = unstorable.length;
  } catch (err) {
    db.close();
    throw err;
  }
  let client: pg.Client;
  try {
    client = new pg.Client({ connectionString: options.to, application_name: 'a2a-registry migrate', connectionTimeoutMillis: 10_000 });
  } catch (err) {
    db.close();
    throw new MigrationError(`${target} is not a usable PostgreSQL URL: ${(err as Error).message}`, true, { cause: err });
  }
  // A server that goes away mid-copy emits 'error' on the client: the failing query reports it.
  client.on('error', () => undefined);
  try {
    try {
      await client.connect();
    } catch (err) {
      const why = postgresFault(err)?.reason === 'unreachable' ? 'cannot be reached' : 'refused the connection';
      throw new MigrationError(`PostgreSQL at ${target} ${why}: ${(err as Error).message}. Check --to (DATABASE_URL), and that the server runs and accepts this user`, false, { cause: err });
    }
    try {
      await migratePostgres(client, target);
    } catch (err) {
      if (err instanceof SchemaTooNewError) throw new MigrationError(`${err.message.replace(/ Refusing to start.*$/, '')} Migrate with that release.`, false, { cause: err });
      throw err;
    }
    // The copy is one transaction (the SQLite snapshot was taken above).
    await client.query('BEGIN');
    try {
      // No statement of the copy may trip a server-side default timeout; the transaction is long by design.
      await client.query("SET LOCAL statement_timeout = '0'");
      const held = await heldData(client);
      if (held !== '') {
        if (!options.replace) {
          throw new MigrationError(
            `the PostgreSQL database at ${target} already holds registry data (${held}): migrate into an empty database, or pass --force to replace what it holds (stop every replica on it first)`,
            true,
          );
        }
        // Replicas running on it would keep the replaced entries in their search indexes (a
        // TRUNCATE records no changes) and wait for change numbers past the copied log's.
        // Held until COMMIT: a replica starting meanwhile waits for the copy, then reads it.
        const replicas = await lockOutReplicas(client);
        if (replicas > 0) {
          throw new MigrationError(
            `the PostgreSQL database at ${target} is in use by a running registry (${replicas} ${replicas === 1 ? 'replica is' : 'replicas are'} running on it): stop every replica on it, then run the migration again with --force`,
          );
        }
        await client.query('TRUNCATE entries, entry_revisions, entry_freshness, entry_urls, url_claims, changes, tasks, push_notification_configs, watches');
      }
      const changeSeq = Math.max(readLastChangeSeq(db), Number((db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'changes'").get() as { seq: number } | undefined)?.seq ?? 0));
      const trimmed = Number((db.prepare("SELECT value FROM registry_state WHERE key = 'changes_trimmed_through'").get() as { value: number } | undefined)?.value ?? 0);
      const rows = {} as Record<MigratedTable, number>;
      for (const copy of COPIES) {
        rows[copy.table] = await copyTable(db, client, copy, options.batchSize, (done, total) => progress({ table: copy.table, done, total }));
      }
      await client.query("UPDATE registry_state SET value = $1 WHERE key = 'changes_trimmed_through'", [trimmed]);
      // New entries and changes are numbered after the copied ones.
      await client.query(`SELECT setval(pg_get_serial_sequence('entries', 'list_seq'), greatest((SELECT max(list_seq) FROM entries), 1), (SELECT max(list_seq) FROM entries) IS NOT NULL)`);
      await client.query(`SELECT setval(pg_get_serial_sequence('changes', 'seq'), greatest($1::bigint, 1), $1::bigint > 0)`, [changeSeq]);

      // Verify before committing: every table's rows, and every entry and revision column for column.
      for (const copy of COPIES) {
        const { rows: counted } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${copy.table}`);
        if (Number(counted[0]!.n) !== rows[copy.table]) {
          throw new MigrationError(`verification failed: ${copy.table} holds ${counted[0]!.n} rows in PostgreSQL, ${rows[copy.table]} were copied; nothing was committed`);
        }
      }
      const expected = await sqliteChecksum(db, options.batchSize);
      const actual = await postgresChecksum(client, options.batchSize, (done) => progress({ table: 'verification', done, total: rows.entries }));
      if (expected !== actual) throw new MigrationError('verification failed: the entries read back from PostgreSQL differ from the SQLite ones (checksums differ); nothing was committed');
      options.signal?.throwIfAborted();
      await client.query('COMMIT');
      // Fresh statistics, so the first queries on a large copy are planned well.
      await client.query('ANALYZE').catch(() => undefined);
      return { source: file, target, rows, changeSeq, checksum: expected, replaced: held !== '', replacedNul, seconds: (Date.now() - started) / 1000 };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      if (db.inTransaction) db.exec('ROLLBACK');
    }
  } finally {
    db.close();
    await client.end().catch(() => undefined);
  }
}
