import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { TaskScope } from '../storage/types.js';

/**
 * What the executor tells the task store about the tasks it runs (the seam between operations
 * and src/tasks): which tasks are new, and which must be kept durably. Everything else lives in
 * bounded memory and never reaches the database.
 */
export interface TaskPlacement {
  /** A task the executor just created: nothing stored can have its id yet (saves a lookup). */
  opened(taskId: string): void;
  /**
   * Keep this task in the database: accepted writes (their task carries the acknowledgement),
   * and long-running tasks that must survive a restart. Call before publishing the task.
   */
  keepDurably(taskId: string): void;
  /** Whose task a request's task is (tenant and owner): a watch keeps it to update its task later. */
  scopeOf(context: ServerCallContext): TaskScope;
}
