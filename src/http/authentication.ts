/**
 * Authentication for HTTP doors: applies the access rule (auth/access.ts) to the Authorization
 * header of every request before any operation runs, refuses with 401 + WWW-Authenticate, and
 * hands the admitted Caller on to the door (admittedCaller), so the door does not authenticate
 * a second time.
 *
 * How a refusal looks (A2A section 3.3.2: "HTTP 401 Unauthorized, gRPC UNAUTHENTICATED,
 * JSON-RPC custom error"; the spec defines no JSON-RPC code for it, and @a2a-js/sdk 1.3 has no
 * authentication error at all):
 * - HTTP+JSON: HTTP 401, `WWW-Authenticate: Bearer realm=...` (RFC 6750), a google.rpc.Status
 *   body with status UNAUTHENTICATED and an ErrorInfo whose reason says which refusal it is.
 * - JSON-RPC: the same HTTP 401 and challenge (clients' auth handlers and proxies act on the
 *   status; the SDK clients read the JSON-RPC error from a non-2xx answer), with a JSON-RPC error
 *   object of code -32000. A2A claims -32001..-32099 for its own errors (section 9.5), so a code
 *   from there could collide with a future A2A error; -32000 is the one code of JSON-RPC's
 *   "implementation-defined server error" range that A2A leaves to implementations.
 */
import type { Request, RequestHandler } from 'express';
import { admitCaller, QUERY_TOKEN_REFUSAL, type AccessPolicy, type Admission } from '../auth/access.js';
import type { TokenAuthenticator } from '../auth/tokens.js';
import type { Caller } from '../contract/caller.js';
import { currentScope } from '../observability/request-scope.js';
import { sendFailure } from './errors.js';

export const JSONRPC_UNAUTHENTICATED = -32000;

const admitted = new WeakMap<Request, Caller>();

/** The caller the authentication middleware admitted for this request, if it ran. */
export const admittedCaller = (req: Request): Caller | undefined => admitted.get(req);

/** The admitted caller with the client address rate limits key on, for doors that run operations themselves. */
export function requestCaller(req: Request): Caller {
  const caller = admitted.get(req);
  if (!caller) throw new Error('authenticate() must run before requestCaller()');
  return { ...caller, address: req.ip };
}

/** The JSON-RPC id of a parsed request body, when it has a usable one. */
function jsonRpcId(body: unknown): string | number | null | undefined {
  if (typeof body !== 'object' || body === null || !('id' in body)) return undefined;
  const id = body.id;
  return typeof id === 'string' || typeof id === 'number' || id === null ? id : undefined;
}

/** Whether the URL's query names access_token (RFC 6750 section 2.3); the substring test keeps the usual request cheap. */
export function hasQueryToken(url: string): boolean {
  const q = url.indexOf('?');
  return q >= 0 && url.includes('access_token', q) && new URLSearchParams(url.slice(q + 1)).has('access_token');
}

/**
 * Every Authorization header the request carried, in order (Node's req.headers keeps only the
 * first), or undefined when none came. Read from rawHeaders: req.headersDistinct would build an
 * array of values for every header of every request to answer this one question.
 */
export function authorizationHeaders(req: Request): string[] | undefined {
  let values: string[] | undefined;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') (values ??= []).push(raw[i + 1]!);
  }
  return values;
}

/** Refuses unusable credentials (always) and anonymous callers (when reads are not public). */
export function authenticate(authenticator: TokenAuthenticator, policy: AccessPolicy): RequestHandler {
  return (req, res, next) => {
    const admission: Admission = hasQueryToken(req.url) ? { admitted: false, refusal: QUERY_TOKEN_REFUSAL } : admitCaller(authenticator, authorizationHeaders(req), policy);
    if (admission.admitted) {
      admitted.set(req, admission.caller);
      return next();
    }
    const { refusal } = admission;
    const scope = currentScope();
    if (scope) scope.errorCode = 'UNAUTHENTICATED';
    sendFailure(req, res, {
      httpStatus: 401,
      jsonRpcCode: JSONRPC_UNAUTHENTICATED,
      reason: refusal.reason,
      message: refusal.message,
      id: jsonRpcId(req.body),
      challenge: refusal.challenge,
    });
  };
}
