/**
 * The SDK's Task <-> a row of its `tasks` table, exactly as @a2a-js/sdk 1.3's DatabaseTaskStore
 * encodes it (`toTaskRow` / `fromTaskRow` in dist/server/database, which are not exported), so
 * the SDK's store and its `a2a-db` tools read what we write and we read what they write
 * (test/storage-group-commit.test.ts checks both ways).
 */
import { Task, taskStateToJSON } from '@a2a-js/sdk';
import type { TaskRow, TaskScope } from '../storage/types.js';

/** The SDK's `protocol_version` column: the version of the row's payload format. */
const PAYLOAD_FORMAT = '1.0';

export function toTaskRow(scope: TaskScope, task: Task): TaskRow {
  requireKey('tenant', scope.tenant);
  requireKey('owner', scope.owner);
  requireKey('id', task.id);
  const payload = Task.toJSON(task) as Record<string, unknown>;
  return {
    tenant: scope.tenant,
    owner: scope.owner,
    id: task.id,
    context_id: task.contextId || '',
    status_last_updated: statusLastUpdated(task),
    status_state: task.status ? taskStateToJSON(task.status.state) : null,
    status: encode(payload.status),
    artifacts: encode(payload.artifacts),
    history: encode(payload.history),
    metadata: encode(payload.metadata),
    protocol_version: PAYLOAD_FORMAT,
  };
}

export function fromTaskRow(row: TaskRow): Task {
  try {
    return Task.fromJSON({
      id: row.id,
      contextId: row.context_id,
      status: decode(row.status),
      artifacts: decode(row.artifacts),
      history: decode(row.history),
      metadata: decode(row.metadata),
    });
  } catch (cause) {
    throw new Error(`task "${row.id}" is not readable`, { cause });
  }
}

/** The status timestamp in epoch ms (0 without one): the order tasks are listed and pruned in. */
export function statusLastUpdated(task: Task): number {
  const timestamp = task.status?.timestamp;
  if (!timestamp) return 0;
  const parsed = Date.parse(timestamp);
  return Number.isNaN(parsed) ? 0 : parsed;
}

function requireKey(field: string, value: unknown): void {
  if (typeof value !== 'string') throw new Error(`task has no ${field}`);
}

function encode(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

function decode(value: string | null): unknown {
  return value ? JSON.parse(value) : undefined;
}
