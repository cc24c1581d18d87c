/**
 * The seam between the operations and abuse control: before an operation runs, the runner asks
 * whether this caller may run it now. A refusal is a RegistryError (RATE_LIMITED with
 * retryAfterSeconds), so every door reports it like any other declined request.
 */
import type { Caller } from '../contract/caller.js';
import type { OperationName } from './operation.js';

/**
 * What a budget counts: the operations, and a watch's renewal (`{"renew": {}}` on its task),
 * which is no operation of its own but writes the watch's expiry and its task.
 */
export type BudgetedAction = OperationName | 'renew';

export interface Admission {
  /** Resolves when the action may run; throws RegistryError('RATE_LIMITED', ...) otherwise. */
  admit(action: BudgetedAction, caller: Caller): Promise<void>;
}
