/**
 * The SDK's TaskStore on SQLite, with saves group-committed through the store's write queue.
 *
 * The SDK's `DatabaseTaskStore` commits each save on its own (one fsync per save, and every
 * A2A request saves its task at least once), so `save` here writes the row itself, through
 * the queue. The row is the SDK's, byte for byte (same table, columns, JSON encodings and
 * scope; a transcription of `toTaskRow` in @a2a-js/sdk 1.3 dist/server/database, which is not
 * exported), so `load` and `list` can simply delegate to `DatabaseTaskStore`, and the SDK's
 * own store and tools keep reading what we write (test/storage-group-commit.test.ts checks
 * both ways).
 */
import { Task, taskStateToJSON } from '@a2a-js/sdk';
import type { ListTasksRequest, ListTasksResponse } from '@a2a-js/sdk';
import { resolveUserScope, type OwnerResolver, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';
import { DatabaseTaskStore, TASK_TABLE, type TaskRow } from '@a2a-js/sdk/server/database';
import type { Kysely } from 'kysely';
import { prepare } from './statements.js';
import type { WriteQueue } from './write-queue.js';

/** `DatabaseTaskStore.save`'s upsert: the key is the table's primary key (tenant, owner, id). */
const SAVE_SQL = `
  INSERT INTO ${TASK_TABLE} (tenant, owner, id, context_id, status_last_updated, status_state,
                             status, artifacts, history, metadata, protocol_version)
  VALUES (@tenant, @owner, @id, @context_id, @status_last_updated, @status_state,
          @status, @artifacts, @history, @metadata, @protocol_version)
  ON CONFLICT (tenant, owner, id) DO UPDATE SET
    context_id = excluded.context_id, status_last_updated = excluded.status_last_updated,
    status_state = excluded.status_state, status = excluded.status, artifacts = excluded.artifacts,
    history = excluded.history, metadata = excluded.metadata, protocol_version = excluded.protocol_version`;

/** The SDK's `protocol_version` column: the version of the row's payload format. */
const PAYLOAD_FORMAT = '1.0';

export class SqliteTaskStore implements TaskStore {
  readonly #queue: WriteQueue;
  readonly #ownerResolver: OwnerResolver;
  readonly #reader: DatabaseTaskStore;

  constructor(kysely: Kysely<unknown>, queue: WriteQueue, options: { ownerResolver?: OwnerResolver } = {}) {
    this.#queue = queue;
    this.#ownerResolver = options.ownerResolver ?? resolveUserScope;
    this.#reader = new DatabaseTaskStore(kysely, { ownerResolver: this.#ownerResolver });
  }

  save(task: Task, context: ServerCallContext): Promise<void> {
    let row: TaskRow;
    try {
      // Encoded now, not at flush time: the caller may keep editing the task object.
      row = toTaskRow({ tenant: context.tenant ?? '', owner: this.#ownerResolver(context) }, task);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#queue.run((db) => {
      prepare(db, SAVE_SQL).run(row);
    });
  }

  load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    return this.#reader.load(taskId, context);
  }

  list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return this.#reader.list(params, context);
  }
}

/** `toTaskRow` of the SDK (see above), with its checks and encodings. */
export function toTaskRow(scope: { tenant: string; owner: string }, task: Task): TaskRow {
  requireKey('tenant', scope.tenant);
  requireKey('owner', scope.owner);
  requireKey('id', task.id);
  const payload = Task.toJSON(task) as Record<string, unknown>;
  return {
    tenant: scope.tenant,
    owner: scope.owner,
    id: task.id,
    context_id: task.contextId || '',
    status_last_updated: statusLastUpdated(task.status?.timestamp),
    status_state: task.status ? taskStateToJSON(task.status.state) : null,
    status: encode(payload.status),
    artifacts: encode(payload.artifacts),
    history: encode(payload.history),
    metadata: encode(payload.metadata),
    protocol_version: PAYLOAD_FORMAT,
  };
}

function requireKey(field: string, value: unknown): void {
  if (typeof value !== 'string') throw new Error(`task has no ${field}`);
}

function statusLastUpdated(timestamp: string | undefined): number {
  if (!timestamp) return 0;
  const parsed = Date.parse(timestamp);
  return Number.isNaN(parsed) ? 0 : parsed;
}

function encode(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}
