/**
 * The storage seam. The embedded default (SQLite) and the scaled-out deployment (PostgreSQL)
 * both implement `RegistryStore`; everything above it (operations, search, protocol) is shared.
 *
 * Guarantees every implementation gives:
 * - a method that resolves has committed (durable) what it wrote: callers acknowledge only after;
 * - `upsert` is atomic per identity: concurrent registrations of the same agent (same kind and
 *   identity URL) never create two entries, on one process or many;
 * - a claimed URL (see `EntryWrite.urls`) belongs to one principal: no write, however
 *   concurrent, lets another principal's entry list it;
 * - every change bumps a global, monotonically increasing change sequence, so replicas can
 *   catch up from the last sequence they saw (`changesSince`).
 */
import type { Actor } from '../contract/caller.js';
import type { EntryInterface, EntryKind, ListOrder, RevisionSummary } from '../contract/types.js';
import type { EntryHealth, EntrySource, HealthStatus, RevisionOrigin } from '../contract/freshness.js';
import type { StorageFault } from './faults.js';
import type { CardVerification } from '../contract/verification.js';
import type { OwnChanges } from './own-changes.js';

export type { Actor } from '../contract/caller.js';
export type { StorageFault, StorageFaultReason } from './faults.js';

/** One revision of an entry as stored. */
export interface StoredEntry {
  id: string;
  kind: EntryKind;
  owner: string;
  name: string;
  description: string;
  revision: number;
  /** ISO-8601 timestamps. createdAt is the entry's, updatedAt this revision's. */
  createdAt: string;
  updatedAt: string;
  /**
   * Its place in `list`'s order (the `list_seq` column): set when the entry is created, never
   * changed, larger for the newer; no two entries share one. The search index orders ties by it.
   */
  listSeq: number;
  protocolVersion?: string;
  /** The URL that makes two registrations "the same agent" (primary interface / server URL). */
  identityUrl: string;
  interfaces: EntryInterface[];
  /** sha256 (hex) of `documentText`. */
  contentHash: string;
  /** The document exactly as received (the decoded file, or the data part's compact JSON). */
  documentText: string;
  /** Who wrote this revision (absent: a registration). */
  revisionOrigin?: RevisionOrigin;
  /** Freshness of the entry (not of the revision): where it is fetched from, its latest check. */
  source?: EntrySource;
  health?: EntryHealth;
  drift?: boolean;
  /** Signature verification of this revision (agents; absent for MCP servers and older rows). */
  verification?: CardVerification;
}

/**
 * An entry's freshness record as a write sets it: replaced as a whole. `nextCheckAt` schedules
 * the next refresh or probe (absent: not scheduled). In a registration, a record with neither
 * source nor health only schedules: an entry without a source keeps its health and drift.
 */
export interface FreshnessWrite {
  source?: EntrySource;
  health?: EntryHealth;
  drift?: boolean;
  nextCheckAt?: string;
}

/** What a registration writes; the store assigns id, revision and timestamps. */
export interface EntryWrite {
  kind: EntryKind;
  identityUrl: string;
  /**
   * Other spellings of identityUrl that name the same endpoint (lib/endpoint-url.ts
   * otherSpellings): when no entry has identityUrl, one stored under any of these is the entry
   * this write updates, and its identity becomes identityUrl.
   */
  identityAliases?: string[];
  name: string;
  description: string;
  protocolVersion?: string;
  interfaces: EntryInterface[];
  documentText: string;
  contentHash: string;
  /** Default "register". */
  origin?: RevisionOrigin;
  /**
   * The entry's freshness record after this write: replaced by the given one, removed with
   * null, left alone when absent.
   */
  freshness?: FreshnessWrite | null;
  /**
   * The normalised URLs the entry claims (claim keys of lib/endpoint-url.ts: every interface URL,
   * or the MCP server URL). A URL claimed by one principal's entry cannot be claimed by another
   * principal's; the same principal may list it in several entries.
   */
  urls: string[];
  verification?: CardVerification;
}

/** An upsert that was accepted (its entry written, or already as written). */
export type AcceptedUpsert = Extract<UpsertOutcome, { entry: StoredEntry }>;

/**
 * The task row that acknowledges an accepted upsert, built from its outcome inside the write's
 * transaction (synchronously: nothing else may run in it); undefined to write none.
 */
export type AcknowledgementRow = (outcome: AcceptedUpsert) => TaskRow | undefined;

export type UpsertOutcome =
  | {
      status: 'created' | 'updated' | 'unchanged';
      entry: StoredEntry;
      /** 'unchanged' document, but its source or health changed (a change was recorded). */
      freshened?: boolean;
    }
  | { status: 'forbidden'; existing: StoredEntry }
  /** Creating the entry would take its owner over `limit` entries; nothing was written. */
  | { status: 'quota-exceeded'; quota: 'entries'; limit: number }
  | UrlTakenOutcome;

/**
 * `url` (a claim key of `EntryWrite.urls`) belongs to another principal's entry, or, with
 * `heldAs`, a claim that covers it does (the URL without its tenant: lib/endpoint-url.ts
 * coveringClaims); nothing was written.
 */
export interface UrlTakenOutcome {
  status: 'url-taken';
  url: string;
  heldAs?: string;
}

/**
 * Per-principal limits a write is held to (the service leaves them out for admins). Enforced
 * inside the write's transaction, so concurrent registrations cannot overshoot.
 */
export interface WriteQuota {
  /** Most entries one owner may have; creating one more is refused ('quota-exceeded'). */
  maxEntriesPerOwner?: number;
  /** Most revisions kept per entry: older ones leave the history (numbering continues). */
  maxRevisions?: number;
}

/**
 * What `importEntries` did with one write: the outcomes of `upsert`, with the entry's id instead
 * of the entry read back (a bulk import does not need it). No 'quota-exceeded': see ImportQuota.
 */
export type ImportOutcome =
  | { status: 'created' | 'updated' | 'unchanged'; id: string }
  | { status: 'forbidden'; id: string }
  | UrlTakenOutcome;

/**
 * What an import's writes are held to: the revisions kept. Imports are an operator's, exempt
 * from the entry quota as an admin's registrations are (README, `import`).
 */
export type ImportQuota = Pick<WriteQuota, 'maxRevisions'>;

/** A refresh writing a new revision of a known entry; see RegistryStore.revise. */
export type ReviseOutcome =
  | { status: 'updated' | 'unchanged'; entry: StoredEntry }
  | { status: 'not-found' }
  /** The entry moved on meanwhile (another revision was written): nothing stored. */
  | { status: 'stale'; entry: StoredEntry }
  /** The new document's identity belongs to another entry: nothing stored. */
  | { status: 'conflict'; existing: StoredEntry }
  /** The new document lists `url`, which (or `heldAs`, covering it) belongs to another principal's entry: nothing stored. */
  | UrlTakenOutcome;

/** What recording a check did; see RegistryStore.recordCheck. */
export interface CheckOutcome {
  entry: StoredEntry;
  /**
   * 'logged': something others see changed (status, since, failures, failingSince, drift, source
   * URL) and a change was recorded; 'quiet': only times and validators moved (checkedAt, fetchedAt, etag).
   */
  change: 'logged' | 'quiet';
}

export type DeleteOutcome =
  | { status: 'deleted'; entry: StoredEntry }
  | { status: 'not-found' }
  | { status: 'forbidden'; existing: StoredEntry };

export interface ListQuery {
  kind?: EntryKind;
  owner?: string;
  health?: HealthStatus;
  /** true: only entries whose current revision verified; false: only the others. */
  verified?: boolean;
  /** Leave out agents whose current revision did not verify (MCP servers, never signed, stay). */
  hideUnverifiedAgents?: boolean;
  /** Newest registered first (the default: a stable walk), or most recently changed first. */
  orderBy?: ListOrder;
  limit: number;
  /** Opaque position returned as `next` by the previous page (of the same order). */
  after?: string;
  /**
   * A position of the default order (one `next` returned): the listing ends with the entry it
   * follows, so a walk from `after` to `until` is one range of the listing and another walk
   * starts there (the AI Catalog's nested catalogs, ../catalog/catalog.ts).
   */
  until?: string;
}

export interface ListResult {
  entries: StoredEntry[];
  /** Position of the next page; absent on the last page. */
  next?: string;
}

/** One committed change, for keeping search indexes (possibly on other replicas) in step. */
export interface Change {
  seq: number;
  id: string;
  op: 'upsert' | 'delete';
  /** What identifies it (`changeMark(seq)`): a follower tells its position's change from another log's at the same number. */
  mark: string;
}

/**
 * How a bulk deletion (pruning tasks, trimming the change log) runs: in bounded batches, each
 * its own short transaction, so that however much has piled up no statement outlasts the
 * statement timeout (rolled back, nothing would ever be deleted) and no write waits long.
 */
export interface BatchedDeletion {
  /** Stops between batches (shutdown); what the finished batches deleted stays deleted. */
  signal?: AbortSignal;
  /** Told after each batch, with how many rows went so far (progress for the log). */
  progress?: (removed: number) => void;
}

export interface RetentionPolicy {
  /** Finished tasks older than this are pruned. */
  maxAgeMs: number;
  /**
   * At most about this many tasks are kept: beyond it, the owners holding the most lose their
   * oldest finished tasks, down to a share of it (common.ts taskShare).
   */
  maxCount: number;
}

/**
 * One durable task, in the layout of the SDK's `tasks` table (@a2a-js/sdk DatabaseTaskStore
 * reads and writes the same rows). Storage keeps the JSON columns as text and never looks
 * inside them; src/tasks converts between rows and the SDK's Task.
 */
export interface TaskRow {
  tenant: string;
  owner: string;
  id: string;
  context_id: string;
  /** The status timestamp in epoch milliseconds (0 when the task has none). */
  status_last_updated: number;
  /** The proto enum name of the state (TASK_STATE_COMPLETED...), or null. */
  status_state: string | null;
  status: string | null;
  artifacts: string | null;
  history: string | null;
  metadata: string | null;
  protocol_version: string | null;
}

/** Whose task: the SDK scopes every task by tenant and owner. */
export interface TaskScope {
  tenant: string;
  owner: string;
}

/** One task's key: its scope and id (the `tasks` table's primary key). */
export interface TaskKey extends TaskScope {
  id: string;
}

export interface TaskListQuery {
  contextId?: string;
  /** Only tasks in this state (proto enum name). */
  state?: string;
  /** Only tasks whose status timestamp is this or later (epoch ms): ListTasks' statusTimestampAfter is inclusive (A2A proto: "greater than or equal to"). */
  updatedAfter?: number;
  /** Keyset position: rows strictly older than (updated, id) in the newest-first order. */
  before?: { updated: number; id: string };
  limit: number;
  /** Leave the artifacts (and the history) columns out when the caller does not want them. */
  withArtifacts: boolean;
  withHistory: boolean;
}

/**
 * Durable tasks: only those that must outlive the process (accepted writes carry their
 * acknowledgement; long-running tasks may be resumed after a restart). Everything else lives in
 * the bounded in-memory store (src/tasks).
 */
export interface TaskRecords {
  /**
   * Inserts or replaces the row (by tenant, owner, id); resolves once committed, with false when
   * the stored row was kept instead: it has finished and `row` has not (a finished task never
   * runs again, whichever replica's outdated copy is saved; see TASK_SAVE_KEEPS_FINISHED).
   */
  save(row: TaskRow): Promise<boolean>;
  load(scope: TaskScope, id: string): Promise<TaskRow | undefined>;
  /** Deletes the row, if there is one (an acknowledgement whose write was refused after all). */
  remove(scope: TaskScope, id: string): Promise<void>;
  /** The scope's rows matching the query, newest first, and how many match in all. */
  list(scope: TaskScope, query: TaskListQuery): Promise<{ rows: TaskRow[]; total: number }>;
  /** Removes finished tasks beyond the retention policy, in batches; returns how many went. */
  prune(policy: RetentionPolicy, options?: BatchedDeletion): Promise<number>;
  /**
   * Those of `keys` whose task is stored: a cache of tasks checks by it that none it holds was
   * pruned (here, or by another replica).
   */
  existing(keys: readonly TaskKey[]): Promise<TaskKey[]>;
}

/**
 * A standing search's definition (issue 19), kept so that it survives a restart. JSON columns
 * are text storage never looks inside (src/subscriptions reads and writes them).
 */
export interface WatchRow {
  /** The id of the watch's task. */
  id: string;
  /** The task's scope (tenant and owner), to update it when the watch ends. */
  tenant: string;
  owner: string;
  /** Whose watch (the cap counts per principal). */
  principal: string;
  contextId: string;
  /** The watch request (JSON: query, filter, initial). */
  request: string;
  /** The task's push notification configs (JSON, the SDK's wire form, tokens included). */
  pushConfigs: string;
  /** Epoch ms. */
  createdAt: number;
  expiresAt: number;
  /** Event numbers after a restart continue above this (reserved ahead, so none is ever reused). */
  seqFloor: number;
  /**
   * UNACKNOWLEDGED_START from the row's creation until its start is acknowledged
   * (WatchRecords.acknowledge), then 0. A row claimed while it still says so is a start that was
   * refused (the registry began shutting down meanwhile) or cut short (a crash), whose removal
   * did not happen: it is removed, never run (subscriptions/watch-hub.ts, #run).
   *
   * Earlier releases stored the last event delivered here (never negative; a client that resumes
   * now says the last event it has, Last-Event-ID): the column is reused rather than a new one
   * added, so rows, backups and copies of every release read alike.
   */
  deliveredSeq: number;
  /** The change-log sequence the watch had seen: changes after it, missed while down, mean a resync. */
  position: number;
}

/** A watch row's deliveredSeq while its start is not acknowledged (see WatchRow.deliveredSeq). */
export const UNACKNOWLEDGED_START = -1;

/** What a watch updates of its row as it runs. */
export type WatchRowUpdate = Partial<Pick<WatchRow, 'pushConfigs' | 'expiresAt' | 'seqFloor' | 'position'>>;

/**
 * Watch definitions, shared by every replica. Each open watch is run by one process, its
 * holder, which renews a lease on it; a watch whose lease ran out (its process stopped or
 * crashed) is taken over by the next process that claims — atomically, so by one only.
 */
export interface WatchRecords {
  /**
   * Stores a new definition held by `holder` until `leaseUntil`, unless `principal` already has
   * `max` unexpired watches (counted across every replica, atomically): 'quota' then, nothing stored.
   */
  create(row: WatchRow, holder: string, leaseUntil: number, max?: number): Promise<'created' | 'quota'>;
  /**
   * Marks watch `id`'s start acknowledged (see WatchRow.deliveredSeq), while `holder` holds it;
   * false when it does not (the row was taken over, or is gone): the start must not be answered.
   */
  acknowledge(id: string, holder: string): Promise<boolean>;
  get(id: string): Promise<WatchRow | undefined>;
  update(id: string, change: WatchRowUpdate): Promise<void>;
  remove(id: string): Promise<void>;
  /**
   * Removes watch `id`'s definition only while a holder's lease on it runs at `now` (its replica
   * runs it); false when none does (released, or run out: claim it instead) or it is gone.
   */
  removeHeld(id: string, now: number): Promise<boolean>;
  /**
   * Only this process runs watches on this storage (SQLite's process lock, ./sqlite/process-lock.ts):
   * a lease another holder has when it starts is a crashed process's, taken over at once.
   */
  readonly exclusive?: boolean;
  /** Takes over every watch (or only `onlyId`) whose lease ended before `now` (or was released); returns their rows. */
  claim(holder: string, leaseUntil: number, now: number, onlyId?: string): Promise<WatchRow[]>;
  /** Extends the leases `holder` has to `leaseUntil`; returns the ids of the watches it still holds. */
  renewLeases(holder: string, leaseUntil: number): Promise<string[]>;
  /** Gives up `holder`'s leases (or only the one on `onlyId`) at once: the next process to start or claim takes them over. */
  release(holder: string, onlyId?: string): Promise<void>;
  /**
   * Gives up `holder`'s lease on watch `id` and keeps every process (this one too) from claiming
   * it before `until`: held by nobody meanwhile, it is not renewed by `holder` either. A watch
   * that failed as it was run waits so before it is run again (subscriptions/watch-hub.ts, #letGo).
   */
  releaseUntil(holder: string, id: string, until: number): Promise<void>;
  /**
   * Until when watch `id` waits so (releaseUntil) at `now`: undefined when it does not (run,
   * claimable, or gone). A request for it is answered saying when it runs again.
   */
  pausedUntil(id: string, now: number): Promise<number | undefined>;
  /** Unexpired watches of `principal`, on every replica. */
  countFor(principal: string, now: number): Promise<number>;
  /**
   * Where several replicas share the store (PostgreSQL): asks whichever runs watch `id` to hand it
   * over (a client resumed it on another replica), or, its definition removed (CancelTask on
   * another replica), to end it as its task says. Absent where one process runs every watch.
   */
  requestHandover?(id: string): Promise<void>;
  /**
   * Answers the replicas asking for watch `id` (requestHandover) that the one running it keeps it
   * (a client streams it there), so they answer their request now instead of waiting for it.
   */
  declineHandover?(id: string): Promise<void>;
  /**
   * Calls `listener` with every request to hand over a watch (requestHandover) and every answer
   * that one is kept (declineHandover), with the watch's id.
   */
  onHandoverNotice?(listener: (notice: HandoverNotice) => void, onError: (err: Error) => void): Promise<ChangeSubscription>;
}

/** A replica asks for watch `id` (`request`), or the replica running it keeps it (`declined`). */
export interface HandoverNotice {
  kind: 'request' | 'declined';
  id: string;
}

/** A live subscription to change notifications; see RegistryStore.subscribeToChanges. */
export interface ChangeSubscription {
  close(): Promise<void>;
}

/** What `RegistryStore.scan` reads. */
export interface ScanOptions {
  batchSize?: number;
  /** Only the signed agent cards not (or never) checked against the trust roots of this fingerprint. */
  outsideKeyset?: string;
}

/** SQLite's checks of a whole file: `quick_check` (every page, b-tree and record) and `integrity_check` (also every index against its table). */
export type IntegrityCheckKind = 'quick_check' | 'integrity_check';

export interface IntegrityReport {
  /** The file checked. */
  file: string;
  check: IntegrityCheckKind;
  ok: boolean;
  /** What SQLite reported (its first few messages); empty when whole. */
  problems: string[];
  seconds: number;
}

export interface RegistryStore {
  /** Which implementation, for logs and /readyz ("sqlite" or "postgres"). */
  readonly engine: string;
  /** Durable tasks, in the same database. */
  readonly tasks: TaskRecords;
  /** Standing searches' definitions (issue 19), in the same database. */
  readonly watches: WatchRecords;

  /** Opens the database and runs pending, versioned migrations. */
  open(): Promise<void>;
  close(): Promise<void>;
  /** Cheap liveness check of the database connection. */
  ping(): Promise<boolean>;

  /**
   * Why the database cannot be written (disk full, read-only, file deleted or corrupt,
   * unreachable), as learnt from the last write that failed for such a reason; undefined once a
   * write (or `probeWrites`) succeeds again. Writes meanwhile fail with StorageUnavailableError.
   */
  readonly fault: StorageFault | undefined;
  /**
   * Where a write can commit and still be refused (SQLite: the commit went to a database file
   * deleted under the connection, or the fsync after it failed): its caller was told storage is
   * unavailable and nothing published the change, yet the database holds it (the re-created
   * file, the next sync). `listener` gets the ids of the entries such commits changed, once a
   * write succeeds again, so that the search index and everything else derived from storage
   * apply them; it resolves once they are published (until then their changes count as pending:
   * see OwnChanges; a rejection leaves them so, for the next start to replay). Absent where every
   * commit is read back from the change log anyway (PostgreSQL's follower).
   */
  onUnacknowledgedChanges?(listener: (ids: string[]) => Promise<void>): void;

  /**
   * A small durable write that proves the database takes writes again (repairing what it can,
   * e.g. re-creating a deleted SQLite file from the open connection). Clears `fault` on success.
   */
  probeWrites(): Promise<boolean>;

  /**
   * SQLite: checks the database file through (`quick_check` by default), off the event loop,
   * beside the running store. Damage found makes `fault` a lasting one (writes refused until the
   * file is repaired and the registry restarted), said in the store's notice. Absent on
   * PostgreSQL, whose server checks its own pages (data checksums).
   */
  checkIntegrity?(check?: IntegrityCheckKind): Promise<IntegrityReport>;

  /**
   * Creates the entry, or updates the one with the same kind and identityUrl.
   * Another owner's entry is not touched unless the actor is an admin ('forbidden').
   * An identical document (same contentHash) is 'unchanged' and keeps its revision.
   * `quota` limits what the write may create or keep (see WriteQuota), atomically.
   * `acknowledgement`: the durable task that acknowledges an accepted write (created, updated
   * or unchanged), built from its outcome and written in the same transaction, so the write and
   * its acknowledgement are durable together, with one commit; none for a refused write.
   */
  upsert(write: EntryWrite, actor: Actor, quota?: WriteQuota, acknowledgement?: AcknowledgementRow): Promise<UpsertOutcome>;
  /**
   * A bulk import: each write exactly as `upsert` would do it (identity, ownership, URL claims,
   * revisions kept; no entry quota), in one transaction, one outcome per write in order. A refused write leaves nothing
   * behind and does not stop the others; nothing is durable before it resolves. The transaction
   * may stop early (SQLite bounds how long it holds the write lock): the outcomes are then those
   * of the first writes (at least one), and the caller passes the rest again.
   */
  importEntries(writes: readonly EntryWrite[], actor: Actor, quota?: ImportQuota): Promise<ImportOutcome[]>;
  /** The lowest revision of the entry still kept (older ones were trimmed), or undefined if none. */
  oldestRevision(id: string): Promise<number | undefined>;
  /** The current revision, or the given one (older revisions are kept). */
  get(id: string, revision?: number): Promise<StoredEntry | undefined>;
  /** The current revisions of the entries among `ids` that exist, in one query (a replica catching up with a batch of changes). */
  getMany(ids: readonly string[]): Promise<StoredEntry[]>;
  /** The entry's stored revisions, newest first, at most `limit`; empty when the entry does not exist. */
  revisions(id: string, limit: number): Promise<RevisionSummary[]>;
  /** Current revisions, newest entry first. */
  list(query: ListQuery): Promise<ListResult>;
  remove(id: string, actor: Actor): Promise<DeleteOutcome>;
  /**
   * Records a new evaluation of the signatures of revision `revision` of entry `id` (after the
   * trust roots changed), if that revision is still current. `announce`: also record a change, so
   * that every replica's index picks it up (when what clients see changed). Returns the entry as
   * now stored, or undefined when it is gone or has moved on to another revision.
   */
  updateVerification(id: string, revision: number, verification: CardVerification, announce: boolean): Promise<StoredEntry | undefined>;
  /**
   * Every current entry, for rebuilding an index at start-up, read `batchSize` at a time (default:
   * the store's). A background scan beside requests asks for small batches: a batch is one
   * synchronous read on SQLite, which every request waits behind. With `outsideKeyset`, only the
   * signed agent cards whose signatures were checked against other trust roots than that
   * fingerprint, or never checked (an index of those: no other entry is read).
   */
  scan(options?: ScanOptions): AsyncIterable<StoredEntry>;
  /** Number of current entries by kind. */
  count(): Promise<Record<EntryKind, number>>;

  /** Changes after `seq`, oldest first, at most `limit`. */
  changesSince(seq: number, limit: number): Promise<Change[]>;
  /** Highest committed change sequence (0 when none), trimmed ones included. */
  lastChangeSeq(): Promise<number>;
  /**
   * What identifies the change at `seq` (its entry, operation and time), or undefined when the
   * log holds none there (0, trimmed): tells this log from another one at the same position,
   * e.g. a database restored from a backup that went on numbering from the backup's position.
   */
  changeMark(seq: number): Promise<string | undefined>;
  /**
   * The change log has been trimmed up to and including this sequence (0 when never): a reader
   * at a lower sequence may have missed changes and must reload from the entries. Read it after
   * `changesSince` (it only grows), so a trim between the two calls is never missed.
   */
  changesTrimmedThrough(): Promise<number>;
  /**
   * Removes changes older than `maxAgeMs`, oldest first in batches, recording with each batch how
   * far the log was trimmed; returns how many.
   */
  trimChanges(maxAgeMs: number, options?: BatchedDeletion): Promise<number>;
  /** Returns freed space to the file system where the engine can do so online (SQLite). */
  reclaimSpace(options?: Pick<BatchedDeletion, 'signal'>): Promise<void>;

  /**
   * Where other processes can write to the same database (PostgreSQL), calls `onChange` as
   * changes commit anywhere: with their sequence, or `undefined` after a reconnection (some
   * notifications may have been missed: catch up with `changesSince`). Absent where this process
   * is the only writer (SQLite).
   */
  subscribeToChanges?(onChange: (seq: number | undefined) => void, onError: (err: Error) => void): Promise<ChangeSubscription>;
  /**
   * Where subscribeToChanges is (PostgreSQL): calls `listener`, in the async context of the call
   * that writes, once a write transaction has recorded its change (from then on it may commit and
   * be read from the change log; before, its change would be numbered after every one committed).
   * A follower waits for this process's writes that did, not for one still waiting for a lock.
   */
  reportChangesRecorded?(listener: () => void): void;
  /**
   * Where other processes may write without this one being told (SQLite, no subscribeToChanges):
   * the changes this process wrote itself, so a saved index never claims another's (OwnChanges).
   */
  readonly ownChanges?: OwnChanges;

  // ---- freshness (issue 16) ----

  /**
   * Writes a refreshed document as the next revision of entry `id` (same owner; origin
   * "refresh"), if the entry is still at revision `expectRevision`. The document's identity may
   * change (an agent that moved), unless another entry has it ('conflict').
   */
  revise(id: string, write: EntryWrite, expectRevision: number, quota?: Pick<WriteQuota, 'maxRevisions'>): Promise<ReviseOutcome>;
  /**
   * Replaces the entry's freshness record with the outcome of a check; a change is recorded
   * when what others see changed (see CheckOutcome). Undefined when the entry is gone.
   */
  recordCheck(id: string, freshness: FreshnessWrite): Promise<CheckOutcome | undefined>;
  /**
   * Claims up to `limit` entries due for a check (next check at or before now), oldest due
   * first, by moving their next check to `retryAt` in the same atomic step: however many
   * replicas claim at once, each due entry goes to one of them. Without `includeUnsourced`
   * only entries with a source are claimed (probing off).
   */
  claimDue(limit: number, retryAt: string, includeUnsourced: boolean): Promise<string[]>;
  /** Schedules a first probe (at `at`) for every agent that has no freshness record yet; returns how many. */
  scheduleProbes(at: string): Promise<number>;
  /**
   * Up to `limit` entries without a source whose freshness record holds what a probe left (a
   * health verdict or drift): with probing turned off, nothing would ever check them again.
   */
  probedWithoutSource(limit: number): Promise<string[]>;
  /**
   * Brings the refreshes of entries with a source in line with the interval now configured:
   * those with no next check (registered or refreshed while refreshing was off) are due at `now`,
   * those due after `latest` (a longer interval before) at `latest`. Returns how many moved.
   */
  scheduleRefreshes(now: string, latest: string): Promise<number>;
}
