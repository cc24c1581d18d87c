import type { Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { TaskRow, TaskScope } from '../storage/types.js';

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
  /**
   * The row that keeps this finished task durably, for the store to write in the same
   * transaction as the write the task acknowledges; undefined when the task is not kept
   * durably (an anonymous caller's).
   */
  acknowledgementRow(task: Task, context: ServerCallContext): TaskRow | undefined;
  /**
   * The task's row (from acknowledgementRow) was committed with the write it acknowledges: its
   * save keeps it, as durable, without writing it again. Call before publishing the task.
   */
  keptWithWrite(taskId: string, row: TaskRow): void;
  /**
   * This task's request is answered with a protocol error (storage unavailable, starting up), not
   * with the task: nothing of it is kept, so no GetTask or ListTasks shows a task whose id its
   * client was never given. `acknowledgement`: the row built for it inside its write, which a
   * write refused after its commit (a SQLite file deleted under it, a failed fsync) left in the
   * database: removed. Call before publishing the task.
   */
  answeredWithError(taskId: string, acknowledgement?: TaskRow): void;
  /** Whose task a request's task is (tenant and owner): a watch keeps it to update its task later. */
  scopeOf(context: ServerCallContext): TaskScope;
}
