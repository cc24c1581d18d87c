/**
 * The storage seam. The embedded default (SQLite) and the scaled-out deployment (PostgreSQL)
 * both implement `RegistryStore`; everything above it (operations, search, protocol) is shared.
 *
 * Guarantees every implementation gives:
 * - a method that resolves has committed (durable) what it wrote: callers acknowledge only after;
 * - `upsert` is atomic per identity: concurrent registrations of the same agent (same kind and
 *   identity URL) never create two entries, on one process or many;
 * - every change bumps a global, monotonically increasing change sequence, so replicas can
 *   catch up from the last sequence they saw (`changesSince`).
 */
import type { TaskStore } from '@a2a-js/sdk/server';
import type { Actor } from '../contract/caller.js';
import type { EntryInterface, EntryKind, RevisionSummary } from '../contract/types.js';
import type { EntryHealth, EntrySource, HealthStatus, RevisionOrigin } from '../contract/freshness.js';

export type { Actor } from '../contract/caller.js';


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
}

export type UpsertOutcome =
  | {
      status: 'created' | 'updated' | 'unchanged';
      entry: StoredEntry;
      /** 'unchanged' document, but its source or health changed (a change was recorded). */
      freshened?: boolean;
    }
  | { status: 'forbidden'; existing: StoredEntry };

/** A refresh writing a new revision of a known entry; see RegistryStore.revise. */
export type ReviseOutcome =
  | { status: 'updated' | 'unchanged'; entry: StoredEntry }
  | { status: 'not-found' }
  /** The entry moved on meanwhile (another revision was written): nothing stored. */
  | { status: 'stale'; entry: StoredEntry }
  /** The new document's identity belongs to another entry: nothing stored. */
  | { status: 'conflict'; existing: StoredEntry };

/** What recording a check did; see RegistryStore.recordCheck. */
export interface CheckOutcome {
  entry: StoredEntry;
  /**
   * 'logged': something others see changed (status, since, failures, drift, source URL) and a
   * change was recorded; 'quiet': only times and validators moved (checkedAt, fetchedAt, etag).
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
  limit: number;
  /** Opaque position returned as `next` by the previous page. */
  after?: string;
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
}

export interface RetentionPolicy {
  /** Finished tasks older than this are pruned. */
  maxAgeMs: number;
  /** At most this many tasks are kept (the oldest go first). */
  maxCount: number;
}

/** A live subscription to change notifications; see RegistryStore.subscribeToChanges. */
export interface ChangeSubscription {
  close(): Promise<void>;
}

export interface RegistryStore {
  /** Which implementation, for logs and /readyz ("sqlite" or "postgres"). */
  readonly engine: string;
  /** The SDK task store backed by the same database, so tasks survive restarts. */
  readonly taskStore: TaskStore;

  /** Opens the database and runs pending, versioned migrations. */
  open(): Promise<void>;
  close(): Promise<void>;
  /** Cheap liveness check of the database connection. */
  ping(): Promise<boolean>;

  /**
   * Creates the entry, or updates the one with the same kind and identityUrl.
   * Another owner's entry is not touched unless the actor is an admin ('forbidden').
   * An identical document (same contentHash) is 'unchanged' and keeps its revision.
   */
  upsert(write: EntryWrite, actor: Actor): Promise<UpsertOutcome>;
  /** The current revision, or the given one (older revisions are kept). */
  get(id: string, revision?: number): Promise<StoredEntry | undefined>;
  /** The entry's stored revisions, newest first, at most `limit`; empty when the entry does not exist. */
  revisions(id: string, limit: number): Promise<RevisionSummary[]>;
  /** Current revisions, newest entry first. */
  list(query: ListQuery): Promise<ListResult>;
  remove(id: string, actor: Actor): Promise<DeleteOutcome>;
  /** Every current entry, for rebuilding an index at start-up. */
  scan(): AsyncIterable<StoredEntry>;
  /** Number of current entries by kind. */
  count(): Promise<Record<EntryKind, number>>;

  /** Changes after `seq`, oldest first, at most `limit`. */
  changesSince(seq: number, limit: number): Promise<Change[]>;
  /** Highest committed change sequence (0 when none). */
  lastChangeSeq(): Promise<number>;

  /**
   * Where other processes can write to the same database (PostgreSQL), calls `onChange` as
   * changes commit anywhere: with their sequence, or `undefined` after a reconnection (some
   * notifications may have been missed: catch up with `changesSince`). Absent where this process
   * is the only writer (SQLite).
   */
  subscribeToChanges?(onChange: (seq: number | undefined) => void, onError: (err: Error) => void): Promise<ChangeSubscription>;

  /** Prunes finished tasks beyond the retention policy; returns how many were removed. */
  pruneTasks(policy: RetentionPolicy): Promise<number>;

  // ---- freshness (issue 16) ----

  /**
   * Writes a refreshed document as the next revision of entry `id` (same owner; origin
   * "refresh"), if the entry is still at revision `expectRevision`. The document's identity may
   * change (an agent that moved), unless another entry has it ('conflict').
   */
  revise(id: string, write: EntryWrite, expectRevision: number): Promise<ReviseOutcome>;
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
}
