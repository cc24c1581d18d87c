/**
 * Versioned schema migrations for the PostgreSQL store.
 *
 * Several replicas may start at the same moment against one database. All of them call
 * `migratePostgres`; a session-level advisory lock makes them take turns, and whoever comes
 * second re-reads the applied versions and finds nothing left to do. Each migration runs in
 * its own transaction with the row that records it, so it is applied entirely or not at all.
 * Migrations are append-only: never edit one that has shipped, add the next version.
 */
import type pg from 'pg';
import { FAILING_SINCE_BACKFILL, SchemaTooNewError, TASKS_UNDER_NO_TENANT, trustKeysetMigration } from '../common.js';
import { planUrlBackfill, type BackfillEntry } from '../url-backfill.js';

export interface PostgresMigration {
  version: number;
  name: string;
  sql: string;
  /** A data step run after `sql`, in the same transaction (backfills that need code, not SQL). */
  run?: (client: pg.PoolClient | pg.Client) => Promise<void>;
}

/** Advisory lock keys; arbitrary constants, namespaced by the "A2AR" prefix (0x41324152). */
export const MIGRATION_LOCK_KEY = 0x41324152_0001;
export const CHANGE_LOCK_KEY = 0x41324152_0002;
/** Held shared by every running replica, taken exclusively by `migrate --force` (./presence.ts). */
export const REPLICA_PRESENCE_LOCK_KEY = 0x41324152_0003;
/**
 * First key of the two-key advisory locks that serialise one owner's entry creations across
 * replicas (the second key is hashtext(owner)), so a quota is checked and used atomically.
 */
export const OWNER_LOCK_NAMESPACE = 0x41324152;

/**
 * What the tasks' context index keys on (migration 14): the context id's first 128 characters,
 * at most 512 bytes, where the whole id may pass a btree entry's 2,704. A query compares this of
 * its value and the column itself; `column` is the column, or the parameter, it is taken of.
 */
export const TASK_CONTEXT_KEY = (column: string): string => `left(${column}, 128)`;

/** The channel `pg_notify` announces committed change sequences on. */
export const CHANGES_CHANNEL = 'registry_changes';
/** Where a replica asks the one running a watch to hand it over (payload: the watch's id), and that one says it keeps it (watch-records.ts). */
export const WATCH_HANDOVER_CHANNEL = 'registry_watch_handover';

/**
 * The SDK's task tables copy the `a2a-db` CLI's own migrations column for column (names,
 * types, `collate "C"`, primary-key and index names; @a2a-js/sdk 1.3.0 dist/cli/run.js), which
 * are not exported: `DatabaseTaskStore` depends on exactly those keys for its upsert.
 */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    name: 'entries, revisions, changes, SDK task tables',
    sql: `
      -- list_seq orders entries newest first for keyset paging; set once at creation.
      CREATE TABLE entries (
        id               uuid        NOT NULL PRIMARY KEY,
        list_seq         bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        kind             text        NOT NULL CHECK (kind IN ('agent', 'mcp-server')),
        identity_url     text        NOT NULL,
        owner            text        NOT NULL,
        current_revision integer     NOT NULL CHECK (current_revision >= 1),
        created_at       timestamptz NOT NULL,
        updated_at       timestamptz NOT NULL,
        CONSTRAINT entries_identity_key UNIQUE (kind, identity_url)
      );
      CREATE INDEX entries_kind_list_idx  ON entries (kind, list_seq);
      CREATE INDEX entries_owner_list_idx ON entries (owner, list_seq);

      -- author: who wrote the revision (an admin, when not the owner).
      CREATE TABLE entry_revisions (
        entry_id         uuid        NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
        revision         integer     NOT NULL,
        name             text        NOT NULL,
        description      text        NOT NULL,
        protocol_version text,
        interfaces       text        NOT NULL,
        document_text    text        NOT NULL,
        content_hash     text        NOT NULL,
        author           text        NOT NULL,
        created_at       timestamptz NOT NULL,
        PRIMARY KEY (entry_id, revision)
      );

      -- No foreign key: a 'delete' change outlives its entry.
      CREATE TABLE changes (
        seq      bigserial   PRIMARY KEY,
        entry_id uuid        NOT NULL,
        op       text        NOT NULL CHECK (op IN ('upsert', 'delete')),
        at       timestamptz NOT NULL DEFAULT now()
      );

      -- Records a change as the last step of a write transaction, in one round trip.
      -- A sequence hands out numbers in call order, not commit order: without the lock, a
      -- replica could read seq 6 (committed) before seq 5 commits, move its cursor to 6 and
      -- never see 5. The transaction-scoped lock is held from taking the number until the
      -- commit is visible, so sequence order is commit order. It serialises only this final
      -- step (and the commit's flush) of writes that really change something.
      -- pg_notify is transactional: listeners hear about the change only once it committed.
      CREATE FUNCTION registry_record_change(p_entry uuid, p_op text) RETURNS bigint
      LANGUAGE plpgsql AS $fn$
      DECLARE
        v_seq bigint;
      BEGIN
        PERFORM pg_advisory_xact_lock(${CHANGE_LOCK_KEY});
        INSERT INTO changes (entry_id, op) VALUES (p_entry, p_op) RETURNING seq INTO v_seq;
        PERFORM pg_notify('${CHANGES_CHANNEL}', v_seq::text);
        RETURN v_seq;
      END
      $fn$;

      CREATE TABLE tasks (
        tenant              varchar(255) collate "C" NOT NULL,
        owner               varchar(255) collate "C" NOT NULL,
        id                  varchar(36)  collate "C" NOT NULL,
        context_id          varchar(36)  collate "C" NOT NULL,
        status_last_updated bigint NOT NULL,
        status_state        varchar(255) collate "C",
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
        tenant           varchar(255) collate "C" NOT NULL,
        owner            varchar(255) collate "C" NOT NULL,
        task_id          varchar(36)  collate "C" NOT NULL,
        config_id        varchar(36)  collate "C" NOT NULL,
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
      ALTER TABLE entry_revisions ADD COLUMN origin text NOT NULL DEFAULT 'register'
        CHECK (origin IN ('register', 'refresh'));

      -- One row per entry the registry fetches or probes: where its document comes from
      -- (source_*), the latest check (health_*, drift) and when to check next. next_check_at
      -- doubles as the claim: replicas take due rows with FOR UPDATE SKIP LOCKED and move them
      -- forward in the same statement, so each due row goes to one replica.
      CREATE TABLE entry_freshness (
        entry_id       uuid        NOT NULL PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
        source_url     text,
        fetched_at     timestamptz,
        etag           text,
        last_modified  text,
        health_status  text        CHECK (health_status IN ('ok', 'unreachable', 'invalid')),
        checked_at     timestamptz,
        health_since   timestamptz,
        failures       integer     NOT NULL DEFAULT 0,
        health_reason  text,
        health_message text,
        drift          boolean,
        next_check_at  timestamptz
      );
      CREATE INDEX entry_freshness_due_idx ON entry_freshness (next_check_at) WHERE next_check_at IS NOT NULL;
      CREATE INDEX entry_freshness_health_idx ON entry_freshness (health_status, entry_id);
    `,
  },

  // ---- task lifecycle (issue 12): bounded change log, write probe ----
  {
    version: 3,
    name: 'registry state: change-log trim watermark, write probe',
    sql: `
      -- 'changes_trimmed_through': the change log was trimmed up to this sequence (a replica
      -- behind it reloads from the entries). 'write_probe': rewritten by the readiness probe.
      CREATE TABLE registry_state (
        key   text   NOT NULL PRIMARY KEY,
        value bigint NOT NULL
      );
      INSERT INTO registry_state (key, value) VALUES ('changes_trimmed_through', 0), ('write_probe', 0);

      -- Earlier releases stored every task, anonymous ones under one shared owner (''): from now
      -- on only accepted writes (completed registrations and unregistrations) are durable.
      DELETE FROM tasks WHERE owner = '' OR status_state IS DISTINCT FROM 'TASK_STATE_COMPLETED'
        OR (coalesce(artifacts, '') NOT LIKE '%"name":"registration"%' AND coalesce(artifacts, '') NOT LIKE '%"name":"unregistration"%');
      DELETE FROM push_notification_configs p WHERE NOT EXISTS (
        SELECT 1 FROM tasks t WHERE t.tenant = p.tenant AND t.owner = p.owner AND t.id = p.task_id);
    `,
  },

  // ---- trust (issue 15): URLs claimed per principal, signature verification per revision ----
  {
    version: 4,
    name: 'url claims, entry urls, revision verification',
    sql: `
      -- Each normalised endpoint URL (a claim key, lib/endpoint-url.ts) belongs to one principal:
      -- the primary key is what stops another principal's entry from listing it, however
      -- concurrent the writes (see PostgresStore.#claimUrls).
      CREATE TABLE url_claims (
        url   text NOT NULL PRIMARY KEY,
        owner text NOT NULL
      );
      -- Which entries use which claimed URL. A claim is released when no entry uses it any more;
      -- the foreign key makes releasing one still in use an error rather than a silent loss.
      CREATE TABLE entry_urls (
        entry_id uuid NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
        url      text NOT NULL REFERENCES url_claims (url),
        PRIMARY KEY (entry_id, url)
      );
      CREATE INDEX entry_urls_url_idx ON entry_urls (url);

      -- The signature verification of each revision (JSON, contract/verification.ts), and the
      -- verifying key's id when one verified (NULL otherwise), for the "verified" list filter.
      ALTER TABLE entry_revisions ADD COLUMN verification text;
      ALTER TABLE entry_revisions ADD COLUMN verified_kid text;
    `,
    run: (client) => backfillUrls(client),
  },

  // ---- standing searches (issue 19): watch definitions survive a restart ----
  {
    version: 5,
    name: 'watches',
    sql: `
      -- One row per open watch (src/subscriptions), shared by every replica: its definition,
      -- where its events had got to, and which process runs it (holder) until when
      -- (lease_until, epoch ms; 0 = released). Times are epoch milliseconds.
      CREATE TABLE watches (
        id            text   NOT NULL PRIMARY KEY,
        tenant        text   NOT NULL,
        owner         text   NOT NULL,
        principal     text   NOT NULL,
        context_id    text   NOT NULL,
        request       text   NOT NULL,
        push_configs  text   NOT NULL,
        created_at    bigint NOT NULL,
        expires_at    bigint NOT NULL,
        seq_floor     bigint NOT NULL,
        delivered_seq bigint NOT NULL,
        change_seq    bigint NOT NULL,
        holder        text   NOT NULL,
        lease_until   bigint NOT NULL
      );
      CREATE INDEX watches_principal_idx ON watches (principal, expires_at);
      CREATE INDEX watches_holder_idx ON watches (holder);
      CREATE INDEX watches_lease_idx ON watches (lease_until);
    `,
  },

  // ---- issue 22: the start-up re-evaluation of signatures reads only the cards it must ----
  {
    version: 6,
    name: 'trust keyset of each entry',
    sql: trustKeysetMigration('postgres'),
  },

  // ---- claim keys: one per host, port and path (http://h:443, https://h:80 and wss://h are https://h's) ----
  {
    version: 7,
    name: 'url claims per host, port and path',
    // Every claim is re-derived from the current revisions with today's claimKey (the rules of
    // version 4's backfill: the entry registered first keeps a URL two principals now share).
    sql: `
      DELETE FROM entry_urls;
      DELETE FROM url_claims;
    `,
    run: (client) => backfillUrls(client),
  },

  // ---- an interface is its URL and its tenant (A2A v1.0 AgentInterface.tenant) ----
  {
    version: 8,
    name: 'identities and url claims per tenant',
    // As SQLite's version 9: identities and claims re-derived from the current revisions.
    sql: `
      DELETE FROM entry_urls;
      DELETE FROM url_claims;
    `,
    run: (client) => backfillUrls(client),
  },

  // ---- repeated slashes of a path are one (https://h//a2a is https://h/a2a) ----
  {
    version: 9,
    name: 'identities and url claims with repeated slashes merged',
    // Identities and claims re-derived from the current revisions by today's normal form, as in
    // version 8: an entry stored under https://h//a2a gets https://h/a2a's keys, unless another
    // entry's primary URL it is (that entry keeps it; this one keeps its stored identity).
    sql: `
      DELETE FROM entry_urls;
      DELETE FROM url_claims;
    `,
    run: (client) => backfillUrls(client),
  },

  // ---- a query string is no ownership boundary: claims per URL without its query ----
  {
    version: 10,
    name: 'url claims without query strings',
    // Claims re-derived from the current revisions by today's claimKey, as in version 9 (identities
    // keep their query and do not change): where entries of two principals now share a claim
    // (https://h/a2a?agent=a and ?agent=b, or https://h/a2a and ?x), the entry whose primary URL
    // it is keeps it, else the one registered first; the other keeps its stored identity and
    // claims nothing it would take. Nothing is deleted: its owner learns on the next update.
    sql: `
      DELETE FROM entry_urls;
      DELETE FROM url_claims;
    `,
    run: (client) => backfillUrls(client),
  },

  // ---- listings most recently changed first (list orderBy "updatedAt", ARD orderBy=updatedAt desc) ----
  {
    version: 11,
    name: 'entries by update time',
    // As SQLite's version 12: the keyset of that order, alone and after the kind, read in index order.
    sql: `
      CREATE INDEX IF NOT EXISTS entries_updated_list_idx ON entries (updated_at, list_seq);
      CREATE INDEX IF NOT EXISTS entries_kind_updated_idx ON entries (kind, updated_at, list_seq);
    `,
  },

  // ---- tasks are not scoped by the tenant a request names (the registry is not multi-tenant) ----
  {
    version: 12,
    name: 'tasks under no tenant',
    // As SQLite's version 13: tasks, push configs and watches stored under a tenant move to "".
    sql: TASKS_UNDER_NO_TENANT,
  },

  // ---- health: since when an entry's checks have failed without a break, whatever their kinds ----
  {
    version: 13,
    name: 'health failing since',
    // As SQLite's version 14: where the run of failures began; a failing row stored before began
    // it with its status.
    //
    // The trigger keeps the column true whoever writes the row. In a rolling upgrade a release
    // before this one runs beside it on the same database, and its upsert sets its own columns
    // only: after it records an ok check, then a failure, the row would keep the run's start this
    // release wrote before the ok, and the entry be hidden (REGISTRY_HIDE_UNHEALTHY_SECONDS) after
    // a single failure. The rule is nextHealth's (src/registry/health.ts), read from the columns
    // every release writes: not failing, no run; the first failure of a run (failures, which
    // counts the run across kinds, is 1) begins it at its status's since; a later one keeps the
    // run's start as written, or, where an older release left the row, as it was. SQLite needs
    // none: one process holds its file, so two releases never write it at once (rowToEntry reads
    // by the same rule on both).
    sql: `
      ALTER TABLE entry_freshness ADD COLUMN IF NOT EXISTS failing_since timestamptz;
      ${FAILING_SINCE_BACKFILL};

      CREATE OR REPLACE FUNCTION registry_failing_since() RETURNS trigger
      LANGUAGE plpgsql AS $fn$
      BEGIN
        IF NEW.health_status IS NULL OR NEW.health_status NOT IN ('unreachable', 'invalid') THEN
          NEW.failing_since := NULL;
        ELSIF NEW.failures <= 1 OR NEW.failing_since IS NULL THEN
          NEW.failing_since := NEW.health_since;
        END IF;
        RETURN NEW;
      END
      $fn$;
      -- A database taken back to an earlier version runs this again.
      DROP TRIGGER IF EXISTS entry_freshness_failing_since ON entry_freshness;
      CREATE TRIGGER entry_freshness_failing_since BEFORE INSERT OR UPDATE ON entry_freshness
        FOR EACH ROW EXECUTE FUNCTION registry_failing_since();
    `,
  },

  // ---- a client's own context ids (session-<uuid>, up to the 1,024 characters a message's ids may have) ----
  {
    version: 14,
    name: 'task and push config columns as text',
    // Version 1 copied the SDK's varchar(36) ids, but a task's context_id is the client's
    // message.contextId, of any length up to the bound the doors put on a message's ids: one of 37
    // characters failed the write it acknowledged (INTERNAL) where SQLite, whose types bound
    // nothing, stores it. Every varchar column of both tables becomes text, with its collation:
    // the owner (a principal of REGISTRY_TOKENS, of any length) and the push configs' ids too.
    // varchar to text changes no stored byte, so neither table nor index is rewritten (a moment's
    // lock), and a release before this one, running beside it in a rolling upgrade, reads and
    // writes the wider columns as it did.
    //
    // A btree entry holds at most 2,704 bytes, and a context id of 1,024 characters takes up to
    // 4 KB in UTF-8: the context index keys on the id's first 128 characters (512 bytes at most)
    // instead, and ListTasks compares both (task-records.ts). An older release's query, which
    // compares the column alone, finds the same tasks through the scope index.
    sql: `
      ALTER TABLE tasks
        ALTER COLUMN tenant           TYPE text COLLATE "C",
        ALTER COLUMN owner            TYPE text COLLATE "C",
        ALTER COLUMN id               TYPE text COLLATE "C",
        ALTER COLUMN context_id       TYPE text COLLATE "C",
        ALTER COLUMN status_state     TYPE text COLLATE "C",
        ALTER COLUMN protocol_version TYPE text;
      ALTER TABLE push_notification_configs
        ALTER COLUMN tenant           TYPE text COLLATE "C",
        ALTER COLUMN owner            TYPE text COLLATE "C",
        ALTER COLUMN task_id          TYPE text COLLATE "C",
        ALTER COLUMN config_id        TYPE text COLLATE "C",
        ALTER COLUMN protocol_version TYPE text;
      DROP INDEX IF EXISTS tasks_scope_context_updated_idx;
      CREATE INDEX IF NOT EXISTS tasks_scope_context_prefix_updated_idx
        ON tasks (tenant, owner, ${TASK_CONTEXT_KEY('context_id')}, status_last_updated, id);
    `,
  },
];

/**
 * Claims every URL of every entry's current revision for its owner (and normalises identity
 * URLs), by url-backfill.ts's plan; `url_claims` and `entry_urls` must be empty.
 */
async function backfillUrls(client: pg.PoolClient | pg.Client): Promise<void> {
  const { rows } = await client.query<BackfillEntry>(
    `SELECT e.id, e.kind, e.owner, e.identity_url AS "identityUrl", r.interfaces
     FROM entries e JOIN entry_revisions r ON r.entry_id = e.id AND r.revision = e.current_revision
     ORDER BY e.list_seq`,
  );
  const plan = planUrlBackfill(rows);
  if (plan.identities.length > 0) {
    await client.query(
      `UPDATE entries e SET identity_url = v.url FROM unnest($1::uuid[], $2::text[]) AS v (id, url) WHERE e.id = v.id`,
      [plan.identities.map((i) => i.id), plan.identities.map((i) => i.identityUrl)],
    );
  }
  if (plan.claims.length > 0) {
    await client.query('INSERT INTO url_claims (url, owner) SELECT * FROM unnest($1::text[], $2::text[])', [
      plan.claims.map((c) => c.url),
      plan.claims.map((c) => c.owner),
    ]);
  }
  if (plan.entryUrls.length > 0) {
    await client.query('INSERT INTO entry_urls (entry_id, url) SELECT * FROM unnest($1::uuid[], $2::text[])', [
      plan.entryUrls.map((u) => u.entryId),
      plan.entryUrls.map((u) => u.url),
    ]);
  }
}

export const POSTGRES_SCHEMA_VERSION = POSTGRES_MIGRATIONS[POSTGRES_MIGRATIONS.length - 1]!.version;

async function appliedVersion(client: pg.PoolClient | pg.Client): Promise<number> {
  const { rows } = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM registry_migrations');
  return rows[0]?.v ?? 0;
}

/**
 * Applies pending migrations on `client` (a dedicated connection: the advisory lock belongs
 * to the session). Returns the schema version the database ends at.
 */
export async function migratePostgres(client: pg.PoolClient | pg.Client, where: string): Promise<number> {
  try {
    return await applyMigrations(client, where);
  } catch (error) {
    throw await withPrivilegeFix(client, error, where);
  }
}

/**
 * A role the database refuses what migrations need (SQLSTATE 42501) was told only the server's
 * words, naming neither the database, the role nor the fix: "permission denied for schema public"
 * (since PostgreSQL 15 only the database's owner may create in its schema public, so a database
 * the superuser created and merely opened to the registry's role refuses the first migration), or
 * "permission denied for table registry_migrations" (the tables another role's: a dump restored
 * by the superuser with --no-owner), or "must be owner of table tasks" (the tables another role's, which
 * granted the registry's role every privilege on them but ownership, which a migration's ALTER
 * TABLE needs: the start after an upgrade fails though the release before ran; the migration is
 * the owner's to run, or the ownership the registry's role's to take). Any other
 * error is returned as it is.
 */
async function withPrivilegeFix(client: pg.PoolClient | pg.Client, error: unknown, where: string): Promise<unknown> {
  if ((error as { code?: unknown } | null)?.code !== '42501') return error;
  const message = (error as Error).message;
  const notOwner = /must be owner of (?:table|relation|sequence|index) (\S+)/.exec(message)?.[1];
  const table = notOwner ?? /permission denied for (?:table|sequence) (\S+)/.exec(message)?.[1];
  if (!/permission denied for schema/.test(message) && table === undefined) return error;
  const names = await client
    .query<{ role: string; database: string; owner: string | null }>(
      table === undefined
        ? 'SELECT current_user AS role, current_database() AS database, NULL AS owner'
        : 'SELECT current_user AS role, current_database() AS database, (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = to_regclass($1)) AS owner',
      table === undefined ? [] : [table],
    )
    .then(({ rows }) => rows[0])
    .catch(() => undefined);
  const role = names ? quoteIdentifier(names.role) : '<the role in the URL>';
  const database = names ? quoteIdentifier(names.database) : '<the database in the URL>';
  if (table !== undefined && notOwner !== undefined) {
    // Every privilege granted but ownership: the tables are kept another role's on purpose (the
    // owner migrates, the registry's role reads and writes), not a restore gone wrong. The
    // migration is then the owner's to run, or the ownership is to be handed over.
    const owner = names?.owner ? quoteIdentifier(names.owner) : 'the role that owns them';
    return new Error(
      `The registry cannot change its tables' structure (a migration of this release) in the database at ${where}: ${message}. ` +
        `Its tables belong to ${owner}, not to ${role}, and only their owner may alter them: ` +
        `apply this release's migrations connected as ${owner} (start the registry once with DATABASE_URL naming ${owner}, then grant ${role} on any table they add what it has on the others), ` +
        `or as a superuser make ${role} the owner of each of its tables (ALTER TABLE ... OWNER TO ${role}); then try again.`,
      { cause: error },
    );
  }
  if (table !== undefined) {
    const owner = names?.owner ? ` (they are ${quoteIdentifier(names.owner)}'s)` : '';
    return new Error(
      `The registry cannot read or update its tables in the database at ${where}: ${message}. ` +
        `Its tables belong to another role than ${role}${owner}, as after a dump restored by another role with --no-owner: ` +
        `restore the dump into an empty database ${role} owns, connected as ${role} (pg_restore --dbname="$DATABASE_URL" registry.dump), or as a superuser make ${role} the owner of each of its tables (ALTER TABLE ... OWNER TO ${role}); then try again.`,
      { cause: error },
    );
  }
  return new Error(
    `The registry cannot create or update its tables in the database at ${where}: ${message}. ` +
      `Its role ${role} needs to be allowed to create in the database's schema (PostgreSQL 15 and later let only the database's owner create in schema public): ` +
      `as a superuser, in that database GRANT CREATE ON SCHEMA public TO ${role}, or (PostgreSQL 15 and later) make the role the database's owner, ALTER DATABASE ${database} OWNER TO ${role}; then try again.`,
    { cause: error },
  );
}

/** An SQL identifier as a statement takes it, whatever its case or spelling (a reserved word such as user too). */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

async function applyMigrations(client: pg.PoolClient | pg.Client, where: string): Promise<number> {
  // Waiting for another replica's migration must not trip the pool's statement_timeout.
  await client.query(`SET statement_timeout = '10min'`);
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS registry_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const found = await appliedVersion(client);
    if (found > POSTGRES_SCHEMA_VERSION) throw new SchemaTooNewError(found, POSTGRES_SCHEMA_VERSION, where);
    for (const migration of POSTGRES_MIGRATIONS) {
      if (migration.version <= found) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await migration.run?.(client);
        await client.query('INSERT INTO registry_migrations (version, name) VALUES ($1, $2)', [
          migration.version,
          migration.name,
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    }
    return await appliedVersion(client);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await client.query('RESET statement_timeout').catch(() => undefined);
  }
}
