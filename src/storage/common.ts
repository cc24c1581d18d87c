/**
 * Pieces both store implementations share, so SQLite and PostgreSQL cannot drift apart on
 * what a row means, what a cursor looks like, or which tasks count as finished.
 */
import type { EntryInterface, EntryKind, ListOrder } from '../contract/types.js';
import { failingSince, type EntryHealth, type HealthStatus } from '../contract/freshness.js';
import type { EntryWrite, FreshnessWrite, StoredEntry, UrlTakenOutcome, WatchRowUpdate } from './types.js';
import type { CardVerification } from '../contract/verification.js';
import { sameJson } from '../lib/canonical-json.js';
import { quote } from '../lib/json.js';
import { RegistryError } from '../contract/errors.js';

/** Thrown by `list` when `after` is not a position this store handed out. */
export class InvalidCursorError extends Error {
  constructor(message = 'The page token is not valid for this listing.') {
    super(message);
    this.name = 'InvalidCursorError';
  }
}

/**
 * A stored entry whose row this release cannot read: a column that does not hold what this
 * release wrote (edited by hand, or written by a newer release beside it during a rolling
 * upgrade). `reason` names the column, never its value (the logs are not the database's readers).
 */
export class UnreadableEntryError extends Error {
  constructor(
    readonly id: string,
    readonly reason: string,
  ) {
    super(`Entry ${id} cannot be read: ${reason}.`);
    this.name = 'UnreadableEntryError';
  }
}

/** `text` parsed as JSON, or UnreadableEntryError naming entry `id`'s `column` (its value left out). */
function storedJson<T>(id: string, column: string, text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new UnreadableEntryError(id, `its ${column} column does not hold JSON`);
  }
}

/**
 * A value of the request that the storage engine cannot hold: PostgreSQL's text holds no U+0000
 * (postgres/text-values.ts). Refused as any other value of a request is, BAD_REQUEST (on the SDK's
 * methods, invalid params), naming the value: where it was, the door knows, not the store.
 */
export class UnstorableTextError extends RegistryError {
  constructor(value: string) {
    super(
      'BAD_REQUEST',
      `${quote(value)} holds the character U+0000 (NUL) at position ${value.indexOf('\u0000')}, which the registry's storage (PostgreSQL) cannot hold: remove it.`,
    );
    this.name = 'UnstorableTextError';
  }
}

/**
 * Thrown inside a write transaction when a URL to claim belongs to another principal: the
 * transaction is rolled back and `upsert` answers 'url-taken'.
 */
export class UrlTaken extends Error {
  /** `heldAs`: the claim covering `url` that another principal holds, when not `url` itself. */
  constructor(
    readonly url: string,
    readonly heldAs?: string,
  ) {
    super(`${heldAs ?? url} is claimed by another principal.`);
    this.name = 'UrlTaken';
  }

  /** The stores' answer for it. */
  get outcome(): UrlTakenOutcome {
    return this.heldAs === undefined ? { status: 'url-taken', url: this.url } : { status: 'url-taken', url: this.url, heldAs: this.heldAs };
  }
}

/** Thrown by `open` when the database was migrated by a newer release than this one. */
export class SchemaTooNewError extends Error {
  /**
   * What was found, without what to do: "the registry database at <where> has schema version N,
   * but this registry release only knows versions up to M. It was written by a newer release".
   * The message is the registry's start refusing; a command that opens the database for
   * something else (`a2a-registry import`) says its own refusal after this.
   */
  readonly found: string;

  constructor(
    readonly databaseVersion: number,
    readonly codeVersion: number,
    where: string,
  ) {
    const found =
      `the registry database at ${where} has schema version ${databaseVersion}, but this registry ` +
      `release only knows versions up to ${codeVersion}. It was written by a newer release`;
    super(
      `T${found.slice(1)}: run that release (or newer), or restore a backup taken before the upgrade. ` +
        `Refusing to start rather than risk corrupting it.`,
    );
    this.found = found;
    this.name = 'SchemaTooNewError';
  }
}

/**
 * The list cursor of the default order (newest registered first) is the entry's `list_seq`
 * (assigned at creation, never changed), so paging is stable while entries are updated: an
 * entry that exists for the whole walk appears exactly once. The "v1." prefix lets the format
 * change later without misreading old tokens.
 */
export function encodeCursor(listSeq: number): string {
  return Buffer.from(`v1.${listSeq}`, 'utf8').toString('base64url');
}

export function decodeCursor(after: string): number {
  const text = Buffer.from(after, 'base64url').toString('utf8');
  const match = /^v1\.(\d{1,15})$/.exec(text);
  if (!match) throw new InvalidCursorError();
  return Number(match[1]);
}

/**
 * The time of an entry's next revision: now, or the time of the revision it follows when the
 * clock stands behind that (stepped back, as NTP does after drifting ahead; on PostgreSQL, a
 * replica whose clock is behind the one that wrote the previous revision). Dated by the clock
 * alone, such a revision was older than the one before it: the history went back in time, the
 * entry sank in "most recently changed first" (`orderBy: "updatedAt desc"`) below where it stood
 * before the change, and a registered document's Last-Modified went back, so a client's
 * If-Modified-Since (the previous revision's time) was answered 304 Not Modified for the new
 * document. Behind it, the revision is dated a millisecond after the previous one: strictly in
 * order, and never further ahead of the clock than the previous one stood (a whole second each,
 * as Last-Modified counts them, ran a rapidly revised entry ever further into the future). A
 * client revalidating by date across such a step may still be told 304; by ETag, which every
 * cacheable answer has, it never is. (Across entries the order still follows the clocks that
 * wrote them.)
 */
export function revisionTime(previousUpdatedAt: string | Date, now: number = Date.now()): Date {
  const previous = previousUpdatedAt instanceof Date ? previousUpdatedAt.getTime() : Date.parse(previousUpdatedAt);
  return new Date(Number.isNaN(previous) || now > previous ? now : previous + 1);
}

/** Where a walk most recently changed first stopped: the last entry's `updated_at` and `list_seq` (its tie-break). */
export interface UpdatedPosition {
  /** ISO 8601 with milliseconds, as entries' updated_at are written. */
  updatedAt: string;
  listSeq: number;
}

/**
 * The list cursor of the order most recently changed first (`updatedAt` descending, then
 * `list_seq` descending): the last entry's time (epoch ms) and list_seq. "v2." keeps it apart
 * from the default order's cursors, which it never decodes as.
 */
export function encodeUpdatedCursor(position: UpdatedPosition): string {
  return Buffer.from(`v2.${Date.parse(position.updatedAt)}.${position.listSeq}`, 'utf8').toString('base64url');
}

/**
 * The latest time a position may hold: 9999-12-31T23:59:59.999Z. Entries' updated_at are written
 * as ISO 8601 with a four-digit year; a later time is written with a six-digit one
 * ("+033658-09-27T01:46:39.999Z"), which no write of the registry made, and which PostgreSQL
 * cannot read ("time zone displacement out of range", an internal error where SQLite answered an
 * empty page): such a position was never issued, on either engine.
 */
const LATEST_POSITION_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

export function decodeUpdatedCursor(after: string): UpdatedPosition {
  const text = Buffer.from(after, 'base64url').toString('utf8');
  const match = /^v2\.(\d{1,15})\.(\d{1,15})$/.exec(text);
  const ms = match ? Number(match[1]) : Number.NaN;
  if (!match || !(ms <= LATEST_POSITION_MS)) throw new InvalidCursorError();
  return { updatedAt: new Date(ms).toISOString(), listSeq: Number(match[2]) };
}

/** How a store writes a parameter of the given type into its SQL (a placeholder, cast where the engine needs it). */
export type ParamSlot = (value: string | number, type: 'timestamp' | 'integer') => string;

/**
 * A listing's ORDER BY and, after a page, the keyset condition that starts the next one, for
 * both stores: the orders (contract ListOrder) are one rule, whatever the engine.
 */
export function listKeyset(order: ListOrder | undefined, after: string | undefined, param: ParamSlot, until?: string): { where?: string; orderBy: string } {
  if (order === 'updatedAt') {
    // Ranges are cut in the default order only (the AI Catalog's), whose positions never move.
    if (until !== undefined) throw new InvalidCursorError();
    const at = after === undefined ? undefined : decodeUpdatedCursor(after);
    return {
      where: at && `(e.updated_at, e.list_seq) < (${param(at.updatedAt, 'timestamp')}, ${param(at.listSeq, 'integer')})`,
      orderBy: 'e.updated_at DESC, e.list_seq DESC',
    };
  }
  const bounds = [
    ...(after === undefined ? [] : [`e.list_seq < ${param(decodeCursor(after), 'integer')}`]),
    // Up to and including the entry `until` names: the walk from there is another range's.
    ...(until === undefined ? [] : [`e.list_seq >= ${param(decodeCursor(until), 'integer')}`]),
  ];
  return { where: bounds.length ? bounds.join(' AND ') : undefined, orderBy: 'e.list_seq DESC' };
}

/** The cursor after `last`, the last entry of a page listed in `order`. */
export function listCursor(order: ListOrder | undefined, last: { updatedAt: string }, listSeq: number): string {
  return order === 'updatedAt' ? encodeUpdatedCursor({ updatedAt: last.updatedAt, listSeq }) : encodeCursor(listSeq);
}

/**
 * Ids are uuids. Checking before querying keeps PostgreSQL's `uuid` column from raising a
 * syntax error on a malformed id: an id that cannot exist is simply not found.
 */
export { isUuid } from '../lib/uuid-form.js';

/**
 * Terminal task states, exactly as `DatabaseTaskStore` writes `status_state`
 * (`taskStateToJSON`: the proto enum names). Only these tasks may be pruned: a task in
 * SUBMITTED/WORKING/INPUT_REQUIRED/AUTH_REQUIRED may still be resumed.
 */
export const FINISHED_TASK_STATES = [
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
] as const;

/**
 * The condition (both engines' `INSERT ... ON CONFLICT DO UPDATE ... WHERE`) under which a task
 * save replaces the stored row: unless that row has finished and the saved one has not. Checked
 * in the statement that writes, so it holds across replicas sharing the database: a renewal read
 * a watch's WORKING task on one replica while CancelTask on another stored it CANCELED, and its
 * save put the task back to WORKING (a finished task never runs again; the watch was gone). A
 * finished row may still be replaced by a finished one (a watch's end written over the CANCELED
 * status the SDK stored, without its matches). The states are constants, so inlined.
 */
export const TASK_SAVE_KEEPS_FINISHED = (() => {
  const finished = FINISHED_TASK_STATES.map((state) => `'${state}'`).join(', ');
  return `COALESCE(tasks.status_state, '') NOT IN (${finished}) OR excluded.status_state IN (${finished})`;
})();

/**
 * How many tasks each owner may keep when all owners together hold more than `maxCount`
 * (REGISTRY_TASK_RETENTION_COUNT), or undefined when they do not: the largest share such that
 * every owner keeping at most that many (its newest) keeps at most `maxCount` in all. An owner
 * holding no more than the share loses none, and the share is never below an equal split of the
 * count; the owners holding the most lose their oldest, down to the share. So one principal's
 * tasks (a flood of watches started and canceled, of updates) push out its own oldest, and those
 * of no principal within an equal split: before, the count took the oldest tasks of the whole
 * table, whoever's, and one principal over it emptied everyone else's task list.
 * `counts`: the tasks of each owner, running ones included (they count, though only finished
 * tasks are removed).
 */
export function taskShare(counts: readonly number[], maxCount: number): number | undefined {
  const ascending = [...counts].sort((a, b) => a - b);
  let left = Math.max(0, Math.floor(maxCount));
  for (let i = 0; i < ascending.length; i++) {
    const owners = ascending.length - i;
    const count = ascending[i]!;
    // Every owner from here on holds at least `count`: if all of them may keep that many, this one keeps all of its.
    if (count * owners > left) return Math.floor(left / owners);
    left -= count;
  }
  return undefined;
}

/**
 * Rows one housekeeping statement deletes at most (see BatchedDeletion): a few tens of
 * milliseconds of work each, far inside PostgreSQL's statement timeout, and a short hold of
 * SQLite's write lock (and of its event loop: better-sqlite3 is synchronous).
 */
export const DELETE_BATCH_ROWS = 5000;
/** On SQLite each batch runs on the event loop (a task row carries its artifacts): fewer rows, a short hold each. */
export const SQLITE_DELETE_BATCH_ROWS = 1000;

export const ENTRY_KINDS: readonly EntryKind[] = ['agent', 'mcp-server'];

export function isEntryKind(value: unknown): value is EntryKind {
  return value === 'agent' || value === 'mcp-server';
}

/** A change-sequence argument as a non-negative integer (garbage reads as "from the start"). */
export function normalizeSeq(seq: number): number {
  return Number.isFinite(seq) && seq > 0 ? Math.floor(seq) : 0;
}

/** Upper bound for `list` page sizes, whatever a caller asks for. */
export const MAX_LIST_LIMIT = 1000;

export function clampLimit(limit: number): number {
  if (!Number.isFinite(limit) || limit < 1) return 1;
  return Math.min(Math.floor(limit), MAX_LIST_LIMIT);
}

/**
 * Columns of an entry at one revision: `e` is entries, `r` entry_revisions, `f` the entry's
 * freshness record (LEFT JOINed: most entries have none).
 */
export const ENTRY_COLUMNS = `
  e.id, e.kind, e.owner, e.identity_url, e.created_at, e.list_seq,
  r.revision, r.name, r.description, r.protocol_version, r.interfaces,
  r.document_text, r.content_hash, r.created_at AS revision_created_at, r.origin AS revision_origin, r.verification,
  f.source_url, f.fetched_at, f.etag, f.last_modified, f.health_status, f.checked_at, f.health_since,
  f.failures, f.health_reason, f.health_message, f.drift, f.failing_since`;

/** The current revision of each entry, with its freshness record. */
export const CURRENT_JOIN = `entries e JOIN entry_revisions r
  ON r.entry_id = e.id AND r.revision = e.current_revision
  LEFT JOIN entry_freshness f ON f.entry_id = e.id`;

/** Any revision of each entry (filter on r.revision), with its freshness record. */
export const REVISION_JOIN = `entries e JOIN entry_revisions r ON r.entry_id = e.id
  LEFT JOIN entry_freshness f ON f.entry_id = e.id`;

/** Engine-neutral shape of one joined entries + entry_revisions (+ entry_freshness) row. */
export interface EntryRowFields {
  id: string;
  kind: string;
  owner: string;
  identity_url: string;
  created_at: string | Date;
  /** PostgreSQL: a bigint, as text. */
  list_seq: number | string;
  revision: number | string;
  name: string;
  description: string;
  protocol_version: string | null;
  interfaces: string;
  document_text: string;
  content_hash: string;
  revision_created_at: string | Date;
  revision_origin: string | null;
  source_url: string | null;
  fetched_at: string | Date | null;
  etag: string | null;
  last_modified: string | null;
  health_status: string | null;
  checked_at: string | Date | null;
  health_since: string | Date | null;
  failures: number | string | null;
  health_reason: string | null;
  health_message: string | null;
  /** SQLite: 0/1; PostgreSQL: boolean. */
  drift: number | boolean | null;
  failing_since: string | Date | null;
  verification: string | null;
}

/** A verification as the `verification` column holds it, with `verified_kid` for filtering. */
export function verificationColumns(v: CardVerification | undefined): { verification: string | null; verifiedKid: string | null } {
  if (!v) return { verification: null, verifiedKid: null };
  return { verification: JSON.stringify(v), verifiedKid: v.verified ? (v.kid ?? '') : null };
}

/**
 * Whether `write` leaves the stored document as it is: the same hash, or (read and compared only
 * when the hashes differ) the same JSON in other words. The same card sent as a file (its own
 * formatting and key order) and as a data part (compact JSON) has two texts and two hashes, and
 * re-sending an identical document must change nothing.
 */
export function sameDocument(write: Pick<EntryWrite, 'contentHash' | 'documentText'>, storedHash: string, storedText: () => string): boolean {
  return storedHash === write.contentHash || sameJson(JSON.parse(storedText()), JSON.parse(write.documentText));
}

/**
 * What the `trust_keyset` column of an entry holds for its current revision: the fingerprint of
 * the trust roots its signatures were checked against, so that the entries a change of trust
 * roots makes stale are one indexed query, not a read of every stored document (a minute at
 * 1,000,000 entries, at every start). NULL when no trust roots can change the verdict (an MCP
 * server, an unsigned card); '' for a signed card never checked (rows older than verification).
 */
export function trustKeyset(write: Pick<EntryWrite, 'kind' | 'verification' | 'documentText'>): string | null {
  if (write.kind !== 'agent') return null;
  if (!write.verification) return write.documentText.includes('"signatures"') ? '' : null;
  return checkedKeyset(write.verification);
}

/** `trustKeyset` of a card's new verification: null when the card carries no signature. */
export function checkedKeyset(verification: CardVerification): string | null {
  return verification.signatures.length > 0 ? verification.keyset : null;
}

/**
 * The migration that moves tasks, their push configs and watches stored under a tenant to the
 * tenant "" (SQLite 13, PostgreSQL 12), for both engines: an earlier release scoped a task by the
 * tenant its request named, and this one stores and looks up every task under "" (the registry
 * is not multi-tenant: tasks/registry-task-store.ts), so they stay their principals' to fetch and
 * list. Task ids are the registry's own, one task per id; were one stored under two tenants, the
 * row under none (else the first tenant's) is kept. Part of shipped migrations: never edit it.
 */
export const TASKS_UNDER_NO_TENANT = `
  DELETE FROM tasks AS t WHERE t.tenant <> '' AND EXISTS (
    SELECT 1 FROM tasks AS u WHERE u.owner = t.owner AND u.id = t.id AND u.tenant < t.tenant);
  UPDATE tasks SET tenant = '' WHERE tenant <> '';
  DELETE FROM push_notification_configs AS p WHERE p.tenant <> '' AND EXISTS (
    SELECT 1 FROM push_notification_configs AS q
    WHERE q.owner = p.owner AND q.task_id = p.task_id AND q.config_id = p.config_id AND q.tenant < p.tenant);
  UPDATE push_notification_configs SET tenant = '' WHERE tenant <> '';
  UPDATE watches SET tenant = '' WHERE tenant <> '';
`;

/**
 * The data step of the migration that adds `failing_since` (SQLite 14, PostgreSQL 13), for both
 * engines: a failing entry's record stored before began its run of failures with its status, as
 * far as anything recorded says. Part of shipped migrations: never edit it.
 */
export const FAILING_SINCE_BACKFILL = `UPDATE entry_freshness SET failing_since = health_since WHERE health_status IN ('unreachable', 'invalid') AND failing_since IS NULL`;

/**
 * A revision's verification as PostgreSQL's jsonb, which (as its text) holds no U+0000: the cast
 * of a JSON text holding a "\u0000" escape fails ("unsupported Unicode escape sequence"), and
 * the kid of a signature by an unknown key, stored as the card named it, may hold one. Each such
 * escape (a backslash not itself escaped, then u0000) is read as U+FFFD first: nothing read from
 * it here is a kid.
 */
const POSTGRES_VERIFICATION = String.raw`regexp_replace(r.verification, '(?<!\\)((?:\\\\)*)\\u0000', '\1\\ufffd', 'g')::jsonb`;

/**
 * The migration that adds `trust_keyset` (SQLite 7, PostgreSQL 6), for both engines. Part of
 * shipped migrations: never edit it, add another migration instead. (One edit, where no later
 * migration could help: on PostgreSQL it failed, and the upgrade with it, on a verification
 * holding a "\u0000" escape, see POSTGRES_VERIFICATION; what it computes is otherwise the same.)
 */
export function trustKeysetMigration(engine: 'sqlite' | 'postgres'): string {
  const signatures = engine === 'sqlite' ? "json_array_length(r.verification, '$.signatures')" : `jsonb_array_length(${POSTGRES_VERIFICATION} -> 'signatures')`;
  const keyset = engine === 'sqlite' ? "json_extract(r.verification, '$.keyset')" : `${POSTGRES_VERIFICATION} ->> 'keyset'`;
  const signed = engine === 'sqlite' ? `instr(r.document_text, '"signatures"') > 0` : `strpos(r.document_text, '"signatures"') > 0`;
  return `
    -- The fingerprint of the trust roots the current revision's signatures were checked against
    -- (NULL: nothing to re-evaluate; '': signed, never checked; common.ts trustKeyset), kept by
    -- every write of the current revision or its verification. The index holds only the signed
    -- entries, in scan order, with the column: the entries checked against other roots are
    -- found in it, without reading any other entry.
    ALTER TABLE entries ADD COLUMN trust_keyset text;
    -- What trustKeyset gives for each stored agent; only the rows that get a value are written
    -- (most cards are unsigned).
    UPDATE entries SET trust_keyset = k.keyset FROM (
      SELECT e.id, CASE
          WHEN r.verification IS NULL THEN CASE WHEN ${signed} THEN '' END
          WHEN ${signatures} > 0 THEN coalesce(${keyset}, '')
        END AS keyset
      FROM entries e JOIN entry_revisions r ON r.entry_id = e.id AND r.revision = e.current_revision
      WHERE e.kind = 'agent'
    ) AS k WHERE entries.id = k.id AND k.keyset IS NOT NULL;
    CREATE INDEX entries_trust_idx ON entries (list_seq, trust_keyset) WHERE trust_keyset IS NOT NULL;
  `;
}

function iso(value: string | Date): string {
  return value instanceof Date ? value.toISOString() : value;
}

export function rowToEntry(row: EntryRowFields): StoredEntry {
  if (!isEntryKind(row.kind)) {
    // A CHECK constraint guards this; reaching it means the database was edited by hand.
    throw new UnreadableEntryError(row.id, `it has an unknown kind "${row.kind}"`);
  }
  const entry: StoredEntry = {
    id: row.id,
    kind: row.kind,
    owner: row.owner,
    name: row.name,
    description: row.description,
    revision: Number(row.revision),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.revision_created_at),
    listSeq: Number(row.list_seq),
    identityUrl: row.identity_url,
    interfaces: storedJson<EntryInterface[]>(row.id, 'interfaces', row.interfaces),
    contentHash: row.content_hash,
    documentText: row.document_text,
  };
  if (row.protocol_version !== null) entry.protocolVersion = row.protocol_version;
  if (row.revision_origin === 'refresh') entry.revisionOrigin = 'refresh';
  if (row.source_url !== null && row.fetched_at !== null) {
    entry.source = { url: row.source_url, fetchedAt: iso(row.fetched_at) };
    if (row.etag !== null) entry.source.etag = row.etag;
    if (row.last_modified !== null) entry.source.lastModified = row.last_modified;
  }
  if (isHealthStatus(row.health_status) && row.checked_at !== null && row.health_since !== null) {
    const health: EntryHealth = {
      status: row.health_status,
      checkedAt: iso(row.checked_at),
      since: iso(row.health_since),
      failures: Number(row.failures ?? 0),
    };
    // Failing: since when its checks have, by nextHealth's rule, which PostgreSQL's trigger keeps
    // on every write (migration 13): the first failure of a run (failures 1) began it with its
    // status, as did a record without one (inserted by a release before it, running beside this
    // one on PostgreSQL); a later failure keeps the run's start as stored. Read so on SQLite
    // too, where no trigger keeps the column.
    if (health.status !== 'ok') health.failingSince = row.failing_since !== null && health.failures > 1 ? iso(row.failing_since) : health.since;
    if (row.health_reason !== null) health.reason = row.health_reason;
    if (row.health_message !== null) health.message = row.health_message;
    entry.health = health;
  }
  if (row.drift !== null) entry.drift = row.drift === true || row.drift === 1;
  if (row.verification) entry.verification = storedJson<CardVerification>(row.id, 'verification', row.verification);
  return entry;
}

/**
 * A new entry as `rowToEntry` would read it back right after its insert, from what was written:
 * revision 1, created and updated `at`, at `listSeq` in list's order, no freshness record (a
 * write that carries one is read back instead: what its columns make of it is rowToEntry's to say).
 */
export function insertedEntry(id: string, write: EntryWrite, owner: string, at: string, listSeq: number): StoredEntry {
  const entry: StoredEntry = {
    id,
    kind: write.kind,
    owner,
    name: write.name,
    description: write.description,
    revision: 1,
    createdAt: at,
    updatedAt: at,
    listSeq,
    identityUrl: write.identityUrl,
    interfaces: write.interfaces,
    contentHash: write.contentHash,
    documentText: write.documentText,
  };
  if (write.protocolVersion !== undefined) entry.protocolVersion = write.protocolVersion;
  if (write.origin === 'refresh') entry.revisionOrigin = 'refresh';
  if (write.verification) entry.verification = write.verification;
  return entry;
}

const isHealthStatus = (v: unknown): v is HealthStatus => v === 'ok' || v === 'unreachable' || v === 'invalid';

/** A freshness record as column values, in FRESHNESS_COLUMNS order (times as ISO strings). */
export function freshnessValues(f: FreshnessWrite): (string | number | null)[] {
  return [
    f.source?.url ?? null,
    f.source?.fetchedAt ?? null,
    f.source?.etag ?? null,
    f.source?.lastModified ?? null,
    f.health?.status ?? null,
    f.health?.checkedAt ?? null,
    f.health?.since ?? null,
    f.health?.failures ?? 0,
    f.health?.reason ?? null,
    f.health?.message ?? null,
    f.drift === undefined ? null : f.drift ? 1 : 0,
    f.nextCheckAt ?? null,
    failingSince(f.health) ?? null,
  ];
}

export const FRESHNESS_COLUMNS = [
  'source_url', 'fetched_at', 'etag', 'last_modified', 'health_status', 'checked_at', 'health_since',
  'failures', 'health_reason', 'health_message', 'drift', 'next_check_at', 'failing_since',
] as const;

/**
 * The record a write leaves, given what the entry has: a write with neither source nor health
 * only schedules a check (an inline registration with probing on), so an entry without a source
 * keeps the health and drift its probes found — re-registering the same card as a heartbeat
 * must not wipe them. A registration by URL (its fetch an `ok` check) of an entry that was `ok`
 * already keeps the health's `since`, when that status began: it moved to every registration's
 * time, so an agent healthy for months, re-registered by its deployment, read as healthy since
 * the last deploy, and each such registration was a visible change (a watch's `updated`).
 */
export function effectiveFreshness(existing: StoredEntry, write: FreshnessWrite | null): FreshnessWrite | null {
  if (write?.health?.status === 'ok' && existing.health?.status === 'ok' && write.health.since !== existing.health.since) {
    return { ...write, health: { ...write.health, since: existing.health.since } };
  }
  if (!write || write.source || write.health || existing.source || !existing.health) return write;
  const kept: FreshnessWrite = { health: existing.health, ...write };
  if (existing.drift !== undefined) kept.drift = existing.drift;
  return kept;
}

/**
 * Whether a new freshness record changes what readers see of the entry, beyond the times and
 * validators every check moves: such a change is recorded in the change log, so other replicas
 * (and their indexes) learn of it.
 */
export function freshnessVisiblyChanged(before: StoredEntry, after: FreshnessWrite | null): boolean {
  const a = after ?? {};
  const hb = before.health;
  const ha = a.health;
  return (
    (before.source?.url ?? null) !== (a.source?.url ?? null) ||
    (hb?.status ?? null) !== (ha?.status ?? null) ||
    (hb?.since ?? null) !== (ha?.since ?? null) ||
    (hb?.failingSince ?? null) !== (ha?.failingSince ?? null) ||
    (hb?.failures ?? 0) !== (ha?.failures ?? 0) ||
    (hb?.reason ?? null) !== (ha?.reason ?? null) ||
    (before.drift ?? null) !== (a.drift ?? null)
  );
}

/**
 * Columns of a standing search's definition, named as WatchRow's fields (aliases quoted: both
 * engines keep their case then; PostgreSQL would fold them to lower case otherwise).
 */
export const WATCH_COLUMNS = `id, tenant, owner, principal, context_id AS "contextId", request, push_configs AS "pushConfigs",
  created_at AS "createdAt", expires_at AS "expiresAt", seq_floor AS "seqFloor", delivered_seq AS "deliveredSeq", change_seq AS "position"`;

/** WatchRow fields an update may change, and the columns they are stored in (updates name only what changed). */
export const WATCH_UPDATABLE_COLUMNS: Record<keyof WatchRowUpdate, string> = {
  pushConfigs: 'push_configs',
  expiresAt: 'expires_at',
  seqFloor: 'seq_floor',
  position: 'change_seq',
};
