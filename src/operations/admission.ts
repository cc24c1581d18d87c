/**
 * The seam between the operations and abuse control: before an operation runs, the runner asks
 * whether this caller may run it now. A refusal is a RegistryError (RATE_LIMITED with
 * retryAfterSeconds), so every door reports it like any other declined request.
 */
import type { Caller } from '../contract/caller.js';
import type { OperationName } from './operation.js';

export interface Admission {
  /** Resolves when the operation may run; throws RegistryError('RATE_LIMITED', ...) otherwise. */
  admit(op: OperationName, caller: Caller): Promise<void>;
}
