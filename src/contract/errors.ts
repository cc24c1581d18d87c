/**
 * The one way an operation declines a request: throw a RegistryError. The executor turns it into
 * a REJECTED task whose status message carries the contract's `{"error": {...}}` data part.
 * Anything else thrown is a bug and ends the task FAILED without internals leaking.
 */
import type { ErrorBody, ErrorCode, Finding } from './types.js';

export class RegistryError extends Error {
  readonly code: ErrorCode;
  readonly details?: Finding[];
  readonly retryAfterSeconds?: number;

  constructor(code: ErrorCode, message: string, details?: Finding[], retryAfterSeconds?: number) {
    // A declined request is an answer, not a fault: nobody reads its stack (client mistakes are
    // logged without one), and capturing it is a visible share of a refused request's cost.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'RegistryError';
    this.code = code;
    this.details = details;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { code: this.code, message: this.message };
    if (this.details && this.details.length > 0) body.details = this.details;
    if (this.retryAfterSeconds !== undefined) body.retryAfterSeconds = this.retryAfterSeconds;
    return body;
  }
}

/** Seconds a client is told to wait (Retry-After) when refused with STARTING_UP while the search index loads. */
export const STARTING_UP_RETRY_SECONDS = 2;
/** Seconds a client is told to wait (Retry-After) when refused with STORAGE_UNAVAILABLE, on every door. */
export const STORAGE_UNAVAILABLE_RETRY_SECONDS = 5;

/** The rule of the refusal of a pageToken sent with other arguments than the page it came from. */
export const PAGE_TOKEN_OTHER_QUERY = 'page-token-other-query';
/** The rule of the refusal of a pageToken this registry did not issue (altered, truncated, made up). */
export const PAGE_TOKEN_INVALID = 'page-token-invalid';
/**
 * `err` with its pageToken findings (either rule above) at `path`, where the door's request has the
 * token: the registry names it /pageToken, relative to the operation's arguments, which each door
 * places elsewhere (MCP's /arguments/pageToken, A2A's /parts/0/data/search/pageToken, ARD's
 * /query/pageToken). Any other error as it is.
 */
export function withPageTokenAt<E>(err: E, path: string): E | RegistryError {
  const isTokenFinding = (rule: string | undefined) => rule === PAGE_TOKEN_INVALID || rule === PAGE_TOKEN_OTHER_QUERY;
  if (!(err instanceof RegistryError) || !err.details?.some((d) => isTokenFinding(d.rule))) return err;
  const details = err.details.map((d) => (isTokenFinding(d.rule) ? { ...d, path } : d));
  return new RegistryError(err.code, err.message, details, err.retryAfterSeconds);
}

/** The rule of the refusal to refresh an entry registered inline (it has no source to fetch from). */
export const REFRESH_NO_SOURCE = 'refresh-no-source';

export const badRequest = (message: string, details?: Finding[]) => new RegistryError('BAD_REQUEST', message, details);
export const notFound = (message: string) => new RegistryError('NOT_FOUND', message);
