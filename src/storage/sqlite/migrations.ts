/**
 * Versioned schema migrations for the SQLite store.
 *
 * Each migration runs in its own `BEGIN IMMEDIATE` transaction together with the row that
 * records it in `registry_migrations`, so a crash leaves the database either before or after
 * a migration, never half way. Migrations are append-only: never edit one that has shipped,
 * add the next version instead.
 */
import type Database from 'better-sqlite3';
import { FAILING_SINCE_BACKFILL, SchemaTooNewError, TASKS_UNDER_NO_TENANT, trustKeysetMigration } from '../common.js';
import { planUrlBackfill, type BackfillEntry } from '../url-backfill.js';

export interface SqliteMigration {
  version: number;
  name: string;
  sql?: string;
  /**
   * A step SQLite cannot run inside a transaction (VACUUM). It must be idempotent: a crash
   * between it and recording the version runs it again on the next start.
   */
  outsideTransaction?: (db: Database.Database) => void;
  /** A data step run after `sql`, in the same transaction (backfills that need code, not SQL). */
  run?: (db: Database.Database) => void;
}

/**
 * The SDK's task tables are copied column for column (names, types, `collate binary`,
 * primary key and index names) from the `a2a-db` CLI's own migrations
 * (@a2a-js/sdk 1.3.0, dist/cli/run.js: 0001_create_tasks, 0001_create_push_notification_configs),
 * which are not exported: `DatabaseTaskStore` relies on exactly those keys for its
 * `ON CONFLICT (tenant, owner, id)` upsert.
 */
export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    name: 'entries, revisions, changes, SDK task tables',
    sql: `
      -- One row per registered agent or MCP server: identity, ownership, current revision.
      -- list_seq orders entries newest first for keyset paging; it is set once at creation
      -- (from the change sequence) and never changes, so pages stay stable under updates.
      CREATE TABLE entries (
        id               TEXT    NOT NULL PRIMARY KEY,
        list_seq         INTEGER NOT NULL UNIQUE,
        kind             TEXT    NOT NULL CHECK (kind IN ('agent', 'mcp-server')),
        identity_url     TEXT    NOT NULL,
        owner            TEXT    NOT NULL,
        current_revision INTEGER NOT NULL CHECK (current_revision >= 1),
        created_at       TEXT    NOT NULL,
        updated_at       TEXT    NOT NULL,
        UNIQUE (kind, identity_url)
      );
      CREATE INDEX entries_kind_list_idx  ON entries (kind, list_seq);
      CREATE INDEX entries_owner_list_idx ON entries (owner, list_seq);

      -- Every revision ever stored (until the entry is unregistered). author records who
      -- wrote it, which differs from the entry's owner when an admin updated it.
      CREATE TABLE entry_revisions (
        entry_id         TEXT    NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
        revision         INTEGER NOT NULL,
        name             TEXT    NOT NULL,
        description      TEXT    NOT NULL,
        protocol_version TEXT,
        interfaces       TEXT    NOT NULL,
        document_text    TEXT    NOT NULL,
        content_hash     TEXT    NOT NULL,
        author           TEXT    NOT NULL,
        created_at       TEXT    NOT NULL,
        PRIMARY KEY (entry_id, revision)
      ) WITHOUT ROWID;

      -- The change feed replicas and search indexes catch up from. AUTOINCREMENT guarantees
      -- a sequence is never reused, even after the newest rows are deleted.
      -- No foreign key: a 'delete' change outlives its entry.
      CREATE TABLE changes (
        seq      INTEGER PRIMARY KEY AUTOINCREMENT,
        entry_id TEXT NOT NULL,
        op       TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
        at       TEXT NOT NULL
      );

      CREATE TABLE tasks (
        tenant              varchar(255) collate binary NOT NULL,
        owner               varchar(255) collate binary NOT NULL,
        id                  varchar(36)  collate binary NOT NULL,
        context_id          varchar(36)  collate binary NOT NULL,
        status_last_updated bigint NOT NULL,
        status_state        varchar(255) collate binary,
        status              text,
        artifacts           text,
        history             text,
        metadata            text,
        protocol_version    varchar(255),
        CONSTRAINT tasks_pkey PRIMARY KEY (tenant, owner, id)
      );
      CREATE INDEX tasks_scope_updated_idx ON tasks (tenant, owner, status_last_updated, id);
      CREATE INDEX tasks_scope_context_updated_idx
        ON tasks (tenant, owner, context_id, status_last_updated, id);
      -- Ours, not the SDK's: pruning walks all tasks by age.
      CREATE INDEX tasks_updated_idx ON tasks (status_last_updated, id);

      CREATE TABLE push_notification_configs (
        tenant           varchar(255) collate binary NOT NULL,
        owner            varchar(255) collate binary NOT NULL,
        task_id          varchar(36)  collate binary NOT NULL,
        config_id        varchar(36)  collate binary NOT NULL,
        config_data      text,
        protocol_version varchar(255),
        CONSTRAINT push_notification_configs_pkey PRIMARY KEY (tenant, owner, task_id, config_id)
      );
    `,
  },
  // ---- issue 16: freshness (register by URL, refresh, health) ----
  {
    version: 2,
    name: 'freshness: revision origin, entry sources, health and check schedule',
    sql: `
      -- Who wrote a revision: a registration, or the registry refreshing it from its source.
      ALTER TABLE entry_revisions ADD COLUMN origin TEXT NOT NULL DEFAULT 'register'
        CHECK (origin IN ('register', 'refresh'));

      -- One row per entry the registry fetches or probes: where its document comes from
      -- (source_*), the latest check (health_*, drift) and when to check next. Times are
      -- ISO-8601 UTC strings, which sort as times. next_check_at doubles as the claim: a
      -- replica takes a due row by moving it forward in the same statement.
      CREATE TABLE entry_freshness (
        entry_id       TEXT    NOT NULL PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
        source_url     TEXT,
        fetched_at     TEXT,
        etag           TEXT,
        last_modified  TEXT,
        health_status  TEXT    CHECK (health_status IN ('ok', 'unreachable', 'invalid')),
        checked_at     TEXT,
        health_since   TEXT,
        failures       INTEGER NOT NULL DEFAULT 0,
        health_reason  TEXT,
        health_message TEXT,
        drift          INTEGER CHECK (drift IN (0, 1)),
        next_check_at  TEXT
      ) WITHOUT ROWID;
      CREATE INDEX entry_freshness_due_idx ON entry_freshness (next_check_at) WHERE next_check_at IS NOT NULL;
      CREATE INDEX entry_freshness_health_idx ON entry_freshness (health_status, entry_id);
    `,
  },

  // ---- task lifecycle (issue 12): bounded change log, write probe, space reclaimed ----
  {
    version: 3,
    name: 'registry state: change-log trim watermark, write probe',
    sql: `
      -- Small named integers the store keeps about itself. 'changes_trimmed_through': the change
      -- log was trimmed up to this sequence (a follower behind it reloads from the entries).
      -- 'write_probe': rewritten by the readiness write probe.
      CREATE TABLE registry_state (
        key   TEXT    NOT NULL PRIMARY KEY,
        value INTEGER NOT NULL
      ) WITHOUT ROWID;
      INSERT INTO registry_state (key, value) VALUES ('changes_trimmed_through', 0), ('write_probe', 0);

      -- Earlier releases stored every task, anonymous ones under one shared owner (''): from now
      -- on only accepted writes (completed registrations and unregistrations) are durable, so
      -- drop the rest (reads, refusals, everything anonymous). The next version's VACUUM gives
      -- the space back.
      DELETE FROM tasks WHERE owner = '' OR status_state IS NOT 'TASK_STATE_COMPLETED'
        OR (coalesce(artifacts, '') NOT LIKE '%"name":"registration"%' AND coalesce(artifacts, '') NOT LIKE '%"name":"unregistration"%');
      DELETE FROM push_notification_configs AS p WHERE NOT EXISTS (
        SELECT 1 FROM tasks t WHERE t.tenant = p.tenant AND t.owner = p.owner AND t.id = p.task_id);
    `,
  },
  {
    version: 4,
    name: 'incremental auto-vacuum (freed pages are reused, and returned to the file system)',
    // auto_vacuum can only change on an empty database or through a VACUUM, which rewrites the
    // file (once; quick for a new database) and cannot run inside a transaction.
    outsideTransaction: (db) => ensureIncrementalAutoVacuum(db),
  },

  // ---- trust (issue 15): URLs claimed per principal, signature verification per revision ----
  {
    version: 5,
    name: 'url claims, entry urls, revision verification',
    sql: `
      -- Each normalised endpoint URL (a claim key, lib/endpoint-url.ts) belongs to one principal:
      -- the primary key is what stops another principal's entry from listing it.
      CREATE TABLE url_claims (
        url   TEXT NOT NULL PRIMARY KEY,
        owner TEXT NOT NULL
      ) WITHOUT ROWID;
      -- Which entries use which claimed URL. A claim is released when no entry uses it any more;
      -- the foreign key makes releasing one still in use an error rather than a silent loss.
      CREATE TABLE entry_urls (
        entry_id TEXT NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
        url      TEXT NOT NULL REFERENCES url_claims (url),
        PRIMARY KEY (entry_id, url)
      ) WITHOUT ROWID;
      CREATE INDEX entry_urls_url_idx ON entry_urls (url);

      -- The signature verification of each revision (JSON, contract/verification.ts), and the
      -- verifying key's id when one verified (NULL otherwise), for the "verified" list filter.
      ALTER TABLE entry_revisions ADD COLUMN verification TEXT;
      ALTER TABLE entry_revisions ADD COLUMN verified_kid TEXT;
    `,
    run: (db) => backfillUrls(db),
  },

  // ---- standing searches (issue 19): watch definitions survive a restart ----
  {
    version: 6,
    name: 'watches',
    sql: `
      -- One row per open watch (src/subscriptions): its definition, where its events had got to,
      -- and which process runs it (holder) until when (lease_until, epoch ms; 0 = released).
      CREATE TABLE watches (
        id            TEXT    NOT NULL PRIMARY KEY,
        tenant        TEXT    NOT NULL,
        owner         TEXT    NOT NULL,
        principal     TEXT    NOT NULL,
        context_id    TEXT    NOT NULL,
        request       TEXT    NOT NULL,
        push_configs  TEXT    NOT NULL,
        created_at    INTEGER NOT NULL,
        expires_at    INTEGER NOT NULL,
        seq_floor     INTEGER NOT NULL,
        delivered_seq INTEGER NOT NULL,
        change_seq    INTEGER NOT NULL,
        holder        TEXT    NOT NULL,
        lease_until   INTEGER NOT NULL
      );
      CREATE INDEX watches_principal_idx ON watches (principal, expires_at);
      CREATE INDEX watches_holder_idx ON watches (holder);
      CREATE INDEX watches_lease_idx ON watches (lease_until);
    `,
  },

  // ---- issue 22: the start-up re-evaluation of signatures reads only the cards it must ----
  {
    version: 7,
    name: 'trust keyset of each entry',
    sql: trustKeysetMigration('sqlite'),
  },

  // ---- claim keys: one per host, port and path (http://h:443, https://h:80 and wss://h are https://h's) ----
  {
    version: 8,
    name: 'url claims per host, port and path',
    // Every claim is re-derived from the current revisions with today's claimKey (the rules of
    // version 5's backfill: the entry registered first keeps a URL two principals now share).
    sql: `
      DELETE FROM entry_urls;
      DELETE FROM url_claims;
    `,
    run: (db) => backfillUrls(db),
  },

  // ---- an interface is its URL and its tenant (A2A v1.0 AgentInterface.tenant) ----
  {
    version: 9,
    name: 'identities and url claims per tenant',
    // Identities and claims re-derived from the current revisions (whose interfaces keep their
    // tenant) by today's rule, as in version 8: an entry whose interface has no tenant keeps its
    // keys; one whose primary interface has a tenant gets the identity re-registering it would
    // look up, and its tenant-scoped claims.
    sql: `
      DELETE FROM entry_urls;
      DELETE FROM url_claims;
    `,
    run: (db) => backfillUrls(db),
  },

  // ---- repeated slashes of a path are one (https://h//a2a is https://h/a2a) ----
  {
    version: 10,
    name: 'identities and url claims with repeated slashes merged',
    // Identities and claims re-derived from the current revisions by today's normal form, as in
    // version 9: an entry stored under https://h//a2a gets https://h/a2a's keys, unless another
    // entry's primary URL it is (that entry keeps it; this one keeps its stored identity).
    sql: `
      DELETE FROM entry_urls;
      DELETE FROM url_claims;
    `,
    run: (db) => backfillUrls(db),
  },

  // ---- a query string is no ownership boundary: claims per URL without its query ----
  {
    version: 11,
    name: 'url claims without query strings',
    // Claims re-derived from the current revisions by today's claimKey, as in version 10 (identities
    // keep their query and do not change): where entries of two principals now share a claim
    // (https://h/a2a?agent=a and ?agent=b, or https://h/a2a and ?x), the entry whose primary URL
    // it is keeps it, else the one registered first; the other keeps its stored identity and
    // claims nothing it would take. Nothing is deleted: its owner learns on the next update.
    sql: `
      DELETE FROM entry_urls;
      DELETE FROM url_claims;
    `,
    run: (db) => backfillUrls(db),
  },

  // ---- listings most recently changed first (list orderBy "updatedAt", ARD orderBy=updatedAt desc) ----
  {
    version: 12,
    name: 'entries by update time',
    // The keyset of that order (updated_at, then list_seq), alone and after the kind (ARD lists
    // one type): a page reads its rows in index order and stops, where ordering by updated_at
    // sorted every matching entry first. An owner's listing sorts the owner's entries (at most
    // REGISTRY_MAX_ENTRIES_PER_OWNER), as it did by list_seq's owner index. IF NOT EXISTS: a
    // database taken back to an earlier version (tests do, to run later migrations again) keeps them.
    sql: `
      CREATE INDEX IF NOT EXISTS entries_updated_list_idx ON entries (updated_at, list_seq);
      CREATE INDEX IF NOT EXISTS entries_kind_updated_idx ON entries (kind, updated_at, list_seq);
    `,
  },

  // ---- tasks are not scoped by the tenant a request names (the registry is not multi-tenant) ----
  {
    version: 13,
    name: 'tasks under no tenant',
    sql: TASKS_UNDER_NO_TENANT,
  },

  // ---- health: since when an entry's checks have failed without a break, whatever their kinds ----
  {
    version: 14,
    name: 'health failing since',
    // health_since moves with the status (invalid, then unreachable, then invalid again);
    // failing_since is where the run of failures began (REGISTRY_HIDE_UNHEALTHY_SECONDS counts
    // from it). A failing row stored before began its run with its status, as far as anything
    // recorded says. The column is added where it is missing (SQLite has no ADD COLUMN IF NOT
    // EXISTS): a database taken back to an earlier version (tests do) has it already.
    run: (db) => {
      const columns = db.prepare('PRAGMA table_info(entry_freshness)').all() as { name: string }[];
      if (!columns.some((c) => c.name === 'failing_since')) db.exec('ALTER TABLE entry_freshness ADD COLUMN failing_since TEXT');
      db.exec(FAILING_SINCE_BACKFILL);
    },
  },
];

/**
 * Claims every URL of every entry's current revision for its owner (and normalises identity
 * URLs), by url-backfill.ts's plan; `url_claims` and `entry_urls` must be empty.
 */
function backfillUrls(db: Database.Database): void {
  const rows = db
    .prepare(
      `SELECT e.id, e.kind, e.owner, e.identity_url AS identityUrl, r.interfaces
       FROM entries e JOIN entry_revisions r ON r.entry_id = e.id AND r.revision = e.current_revision
       ORDER BY e.list_seq`,
    )
    .all() as BackfillEntry[];
  const plan = planUrlBackfill(rows);
  const identity = db.prepare('UPDATE entries SET identity_url = ? WHERE id = ?');
  for (const i of plan.identities) identity.run(i.identityUrl, i.id);
  const claim = db.prepare('INSERT INTO url_claims (url, owner) VALUES (?, ?)');
  for (const c of plan.claims) claim.run(c.url, c.owner);
  const use = db.prepare('INSERT INTO entry_urls (entry_id, url) VALUES (?, ?)');
  for (const u of plan.entryUrls) use.run(u.entryId, u.url);
}

/** `PRAGMA auto_vacuum` answers 2 for INCREMENTAL. */
const INCREMENTAL_AUTO_VACUUM = 2;

/** Turns incremental auto-vacuum on (rewriting the file once) unless it already is. Idempotent. */
export function ensureIncrementalAutoVacuum(db: Database.Database): void {
  if (db.pragma('auto_vacuum', { simple: true }) === INCREMENTAL_AUTO_VACUUM) return;
  db.pragma('auto_vacuum = INCREMENTAL');
  db.exec('VACUUM');
  // In WAL mode the rewritten pages sit in the WAL: fold them in, so the file shrinks now.
  db.pragma('wal_checkpoint(TRUNCATE)');
}

export const SQLITE_SCHEMA_VERSION = SQLITE_MIGRATIONS[SQLITE_MIGRATIONS.length - 1]!.version;

function currentVersion(db: Database.Database): number {
  const row = db.prepare('SELECT max(version) AS v FROM registry_migrations').get() as
    | { v: number | null }
    | undefined;
  return row?.v ?? 0;
}

/**
 * The schema version of the database `db` has open, reading only (0 for a file with no
 * registry_migrations table yet); SchemaTooNewError when a newer release wrote it.
 */
export function schemaVersionOf(db: Database.Database, where: string): number {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'registry_migrations'").get();
  const found = table ? currentVersion(db) : 0;
  if (found > SQLITE_SCHEMA_VERSION) throw new SchemaTooNewError(found, SQLITE_SCHEMA_VERSION, where);
  return found;
}

/**
 * Brings the schema up to date. Safe to call on every start and from several processes at
 * once: the version is re-read inside each write transaction, so a migration another
 * process applied in the meantime is skipped rather than applied twice.
 */
export function migrateSqlite(db: Database.Database, where: string): number {
  db.exec(`CREATE TABLE IF NOT EXISTS registry_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
  )`);

  const found = currentVersion(db);
  if (found > SQLITE_SCHEMA_VERSION) {
    throw new SchemaTooNewError(found, SQLITE_SCHEMA_VERSION, where);
  }

  for (const migration of SQLITE_MIGRATIONS) {
    if (migration.version <= found) continue;
    migration.outsideTransaction?.(db);
    db.exec('BEGIN IMMEDIATE');
    try {
      const applied = currentVersion(db);
      if (applied > SQLITE_SCHEMA_VERSION) {
        throw new SchemaTooNewError(applied, SQLITE_SCHEMA_VERSION, where);
      }
      if (applied < migration.version) {
        if (migration.sql) db.exec(migration.sql);
        migration.run?.(db);
        db.prepare('INSERT INTO registry_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
          migration.version,
          migration.name,
          new Date().toISOString(),
        );
      }
      db.exec('COMMIT');
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw error;
    }
  }
  return currentVersion(db);
}
