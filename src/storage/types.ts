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
import type { EntryInterface, EntryKind } from '../contract/types.js';

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
}

export type UpsertOutcome =
  | { status: 'created' | 'updated' | 'unchanged'; entry: StoredEntry }
  | { status: 'forbidden'; existing: StoredEntry };

export type DeleteOutcome =
  | { status: 'deleted'; entry: StoredEntry }
  | { status: 'not-found' }
  | { status: 'forbidden'; existing: StoredEntry };

export interface ListQuery {
  kind?: EntryKind;
  owner?: string;
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
}
