/**
 * Refusals the A2A request handler answers as a protocol error that says when to retry, rather
 * than as a task: storage unavailable (tasks/storage-unavailable.ts, HTTP 503) and a watch's
 * renewal over the write budget (HTTP 429: a refused renewal's task is the watch's, still
 * running, which a REJECTED task would have ended).
 * The SDK's transports map any A2AError: `transport: 'rest'` with a statusCode is how its REST
 * mapping (restStatusFor) takes a status other than its table's; JSON-RPC and gRPC answer an
 * A2AError they have no code for with -32603 and UNKNOWN, which the answer sanitizer
 * (security.ts) and the gRPC call guard turn into the binding's answer with the reason and when
 * to retry.
 */
import { A2AError, type A2AErrorInfo } from '@a2a-js/sdk/errors';
import { errorInfo } from './errors.js';

export const RATE_LIMITED_REASON = 'RATE_LIMITED';

export class RetryLaterA2AError extends A2AError {
  override reason: string;
  readonly transport = 'rest';

  constructor(
    message: string,
    reason: string,
    readonly retryAfterSeconds: number,
    readonly statusCode: 429 | 503,
  ) {
    // When to retry, in the ErrorInfo's metadata (string values, as a rate limit's): the HTTP
    // door also sends it as Retry-After, but a JSON-RPC client reads the error, not the headers.
    super({ message, metadata: { retryAfterSeconds: String(retryAfterSeconds) } });
    this.reason = reason;
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

/** Over an operation budget (http/rate-limit.ts), where the refusal cannot be a task of its own. */
export class RateLimitedA2AError extends RetryLaterA2AError {
  constructor(message: string, retryAfterSeconds: number) {
    super(message, RATE_LIMITED_REASON, retryAfterSeconds, 429);
    this.name = 'RateLimitedError';
  }
}
