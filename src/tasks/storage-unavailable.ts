/**
 * "Storage is unavailable" as a protocol error rather than a task: HTTP 503 on the HTTP+JSON
 * binding, a JSON-RPC error (-32603, the message says so, data names the reason and the retry
 * time) on JSON-RPC, UNAVAILABLE on gRPC (http/retry-later.ts says how each binding gets it).
 */
import { STARTING_UP_RETRY_SECONDS, STORAGE_UNAVAILABLE_RETRY_SECONDS } from '../contract/errors.js';
import { RATE_LIMITED_REASON, RetryLaterA2AError } from '../http/retry-later.js';
import type { RequestScope } from '../observability/request-scope.js';

export const STORAGE_UNAVAILABLE_REASON = 'STORAGE_UNAVAILABLE';
/** Seconds a client should wait before retrying (the door sends it as Retry-After). */
export const STORAGE_RETRY_AFTER_SECONDS = STORAGE_UNAVAILABLE_RETRY_SECONDS;
/** The registry is still loading its search index (RegistryService.rebuildIndex). */
export const STARTING_UP_REASON = 'STARTING_UP';
/** Refusals answered as 503 + Retry-After with their own message, by reason. */
export const RETRY_AFTER_BY_REASON: ReadonlyMap<string, number> = new Map([
  [STORAGE_UNAVAILABLE_REASON, STORAGE_RETRY_AFTER_SECONDS],
  [STARTING_UP_REASON, STARTING_UP_RETRY_SECONDS],
]);

export class StorageUnavailableA2AError extends RetryLaterA2AError {
  /**
   * `reason`: STORAGE_UNAVAILABLE, or STARTING_UP while the search index loads (same answer, its
   * own reason). `retryAfterSeconds`: the refusal's own hint where it has one (a watch started as
   * the registry shuts down: 5 s), else the reason's.
   */
  constructor(message: string, reason: string = STORAGE_UNAVAILABLE_REASON, retryAfterSeconds?: number) {
    super(message, reason, retryAfterSeconds ?? RETRY_AFTER_BY_REASON.get(reason) ?? STORAGE_RETRY_AFTER_SECONDS, 503);
    this.name = 'StorageUnavailableError';
  }
}

/**
 * The refusal a request's scope names that its door answers as a protocol error saying when to
 * retry, and after how many seconds: a storage reason's, the refusal's own time where it put one
 * in the scope (a watch started as the registry shuts down), else the reason's; or a budget's
 * (RATE_LIMITED, whose time the refusal put in the scope; the executor's budget refusals,
 * answered as REJECTED tasks, put none and are not one).
 */
export function retryNamedIn(scope: RequestScope | undefined): { reason: string; seconds: number } | undefined {
  const reason = scope?.errorCode;
  if (reason === undefined) return undefined;
  if (reason === RATE_LIMITED_REASON) return scope?.retryAfterSeconds === undefined ? undefined : { reason, seconds: scope.retryAfterSeconds };
  const reasons = RETRY_AFTER_BY_REASON.get(reason);
  return reasons === undefined ? undefined : { reason, seconds: scope?.retryAfterSeconds ?? reasons };
}
