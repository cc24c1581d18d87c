/**
 * Pieces both store implementations share, so SQLite and PostgreSQL cannot drift apart on
 * what a row means, what a cursor looks like, or which tasks count as finished.
 */
import type { EntryInterface, EntryKind } from '../contract/types.js';
import type { StoredEntry } from './types.js';

/** Thrown by `list` when `after` is not a position this store handed out. */
export class InvalidCursorError extends Error {
  constructor(message = 'The page token is not valid for this listing.') {
    super(message);
    this.name = 'InvalidCursorError';
  }
}

/** Thrown by `open` when the database was migrated by a newer release than this one. */
export class SchemaTooNewError extends Error {
  constructor(
    readonly databaseVersion: number,
    readonly codeVersion: number,
    where: string,
  ) {
    super(
      `The registry database at ${where} has schema version ${databaseVersion}, but this registry ` +
        `release only knows versions up to ${codeVersion}. It was written by a newer release: ` +
        `run that release (or newer), or restore a backup taken before the upgrade. ` +
        `Refusing to start rather than risk corrupting it.`,
    );
    this.name = 'SchemaTooNewError';
  }
}

/**
 * The list cursor is the entry's `list_seq` (assigned at creation, never changed), so paging
 * is stable while entries are updated: an entry that exists for the whole walk appears
 * exactly once. The "v1." prefix lets the format change later without misreading old tokens.
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

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Ids are uuids. Checking before querying keeps PostgreSQL's `uuid` column from raising a
 * syntax error on a malformed id: an id that cannot exist is simply not found.
 */
export function isUuid(id: string): boolean {
  return UUID_RE.test(id);
}

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

/** Engine-neutral shape of one joined entries + entry_revisions row. */
export interface EntryRowFields {
  id: string;
  kind: string;
  owner: string;
  identity_url: string;
  created_at: string | Date;
  revision: number | string;
  name: string;
  description: string;
  protocol_version: string | null;
  interfaces: string;
  document_text: string;
  content_hash: string;
  revision_created_at: string | Date;
}

function iso(value: string | Date): string {
  return value instanceof Date ? value.toISOString() : value;
}

export function rowToEntry(row: EntryRowFields): StoredEntry {
  if (!isEntryKind(row.kind)) {
    // A CHECK constraint guards this; reaching it means the database was edited by hand.
    throw new Error(`Entry ${row.id} has an unknown kind "${row.kind}".`);
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
    identityUrl: row.identity_url,
    interfaces: JSON.parse(row.interfaces) as EntryInterface[],
    contentHash: row.content_hash,
    documentText: row.document_text,
  };
  if (row.protocol_version !== null) entry.protocolVersion = row.protocol_version;
  return entry;
}
