/**
 * The one way an operation declines a request: throw a RegistryError. The executor turns it into
 * a REJECTED task whose status message carries the contract's `{"error": {...}}` data part.
 * Anything else thrown is a bug and ends the task FAILED without internals leaking.
 */
import type { ErrorBody, ErrorCode, Finding } from './types.js';
import { boundedFindings } from './findings.js';

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
    // Bounded here, where every door's refusal is made: a request with many bad items is not
    // answered with a finding each (findings.ts).
    this.details = details && boundedFindings(details);
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
/** The rule of the refusal of a pageToken another operation issued (a search's sent to list, or a list's to search). */
export const PAGE_TOKEN_OTHER_OPERATION = 'page-token-other-operation';
/** The rule of the refusal of a pageToken this registry did not issue (altered, truncated, made up). */
export const PAGE_TOKEN_INVALID = 'page-token-invalid';
/**
 * A refusal of the operation's arguments found while it runs (a pageToken, the id of an entry that
 * has nothing to refresh, an owner beside "mine"). The registry knows the operation, not the
 * request it came in, so its details' paths are relative to the operation's arguments (/pageToken,
 * /id, /filter/owner); each door roots them where its request has the arguments (rootedAt). The
 * details of every other refusal are rooted already: a document's findings at the document (the
 * contract's /skills/0/tags, /signatures/0), a door's own at its request.
 */
export class ArgumentsRefusal extends RegistryError {}

/**
 * `err` as the door answers it: the details of an ArgumentsRefusal under `root`, where the door's
 * request has the operation's arguments (A2A's /parts/0/data/refresh, MCP's /arguments), each
 * path first `placed` where the door's arguments have it when they are shaped otherwise
 * (list_agents takes the list's filter keys as its own arguments). Any other error as it is. (The
 * ARD and catalog doors, whose queries are shaped otherwise, name the one such finding they can
 * get, a pageToken's, themselves: catalog-door.ts, ard.ts.)
 */
export function rootedAt<E>(err: E, root: string, placed: (path: string) => string = (path) => path): E | RegistryError {
  if (!(err instanceof ArgumentsRefusal)) return err;
  const details = err.details?.map((d) => ({ ...d, path: `${root}${placed(d.path)}` }));
  return new RegistryError(err.code, err.message, details, err.retryAfterSeconds);
}

/** The rule of the refusal to refresh an entry registered inline (it has no source to fetch from). */
export const REFRESH_NO_SOURCE = 'refresh-no-source';

export const badRequest = (message: string, details?: Finding[]) => new RegistryError('BAD_REQUEST', message, details);
/** A BAD_REQUEST of the operation's arguments, its details' paths relative to them (see ArgumentsRefusal). */
export const badArguments = (message: string, details: Finding[]) => new ArgumentsRefusal('BAD_REQUEST', message, details);
export const notFound = (message: string) => new RegistryError('NOT_FOUND', message);
