/**
 * The seam between the executor and abuse control: before an operation runs, the executor asks
 * whether this caller may run it now. A refusal is a RegistryError (RATE_LIMITED with
 * retryAfterSeconds), so it ends as a REJECTED task like any other declined request.
 */
import type { OperationName } from './operation.js';

export interface Requester {
  /** The authenticated principal, if the request carried a valid token. */
  principal?: string;
  isAdmin: boolean;
  /** The client's address as the HTTP layer saw it (after REGISTRY_TRUST_PROXY). */
  address?: string;
}

export interface Admission {
  /** Resolves when the operation may run; throws RegistryError('RATE_LIMITED', ...) otherwise. */
  admit(op: OperationName, requester: Requester): Promise<void>;
}
