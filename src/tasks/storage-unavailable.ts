/**
 * "Storage is unavailable" as a protocol error rather than a task: HTTP 503 on the HTTP+JSON
 * binding, a JSON-RPC error (-32603, the message says so, data names the reason and the retry
 * time) on JSON-RPC.
 * The SDK's transports map any A2AError: `transport: 'rest'` with a statusCode is how its REST
 * mapping (restStatusFor) takes a status other than its table's, and JSON-RPC maps an A2AError
 * it has no code for to -32603 with our message and ErrorInfo.
 */
import { A2AError, type A2AErrorInfo } from '@a2a-js/sdk/errors';
import { errorInfo } from '../http/errors.js';
import { STARTING_UP_RETRY_SECONDS, STORAGE_UNAVAILABLE_RETRY_SECONDS } from '../contract/errors.js';

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

export class StorageUnavailableA2AError extends A2AError {
  override reason: string;
  readonly transport = 'rest';
  readonly statusCode = 503;

  /** `reason`: STORAGE_UNAVAILABLE, or STARTING_UP while the search index loads (same answer, its own reason). */
  constructor(message: string, reason: string = STORAGE_UNAVAILABLE_REASON) {
    // When to retry, in the ErrorInfo's metadata (string values, as a rate limit's): the HTTP
    // door also sends it as Retry-After, but a JSON-RPC client reads the error, not the headers.
    const retryAfterSeconds = RETRY_AFTER_BY_REASON.get(reason) ?? STORAGE_RETRY_AFTER_SECONDS;
    super({ message, metadata: { retryAfterSeconds: String(retryAfterSeconds) } });
    this.reason = reason;
    this.name = 'StorageUnavailableError';
  }

  /**
   * The registry's reason in the registry's domain: the SDK's toErrorInfo puts every reason in
   * a2a-protocol.org, which the spec reserves for its own errors (its type says so too, hence the
   * cast; its converters only serialize what this returns).
   */
  override toErrorInfo(): A2AErrorInfo {
    return errorInfo(this.reason, this.metadata) as unknown as A2AErrorInfo;
  }
}
