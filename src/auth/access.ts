/**
 * The door-level access rule, the same for every door (A2A JSON-RPC and HTTP+JSON, gRPC, MCP):
 * - a credential that is presented but not usable (unknown token, a scheme other than Bearer,
 *   "Bearer" without a token, an empty Authorization header) is refused on every call, reads
 *   included: the A2A specification (section 3.3.2) says a server MUST reject invalid
 *   credentials, and quietly serving such a caller as anonymous hides a misconfigured client
 *   until its first write fails;
 * - with REGISTRY_PUBLIC_READ=false the registry is closed: every call needs a valid token.
 * With public reads an anonymous caller passes here, and the service decides per operation
 * (writes answer UNAUTHENTICATED in the task). Doors map a refusal to their own shape: HTTP 401
 * with the `challenge` as WWW-Authenticate, gRPC UNAUTHENTICATED, and so on.
 */
import type { Caller } from '../contract/caller.js';
import type { TokenAuthenticator } from './tokens.js';

export interface AccessPolicy {
  /** Anonymous callers may call (reads; the service still requires a token for writes). */
  publicRead: boolean;
}

export type AccessRefusalReason = 'INVALID_CREDENTIAL' | 'CREDENTIAL_REQUIRED';

export interface AccessRefusal {
  reason: AccessRefusalReason;
  /** What is wrong and how to fix it, for people. */
  message: string;
  /** The RFC 6750 challenge: the value of WWW-Authenticate on HTTP. */
  challenge: string;
}

export type Admission = { admitted: true; caller: Caller } | { admitted: false; refusal: AccessRefusal };

/** The protection space named in challenges. */
export const AUTH_REALM = 'a2a-registry';

const TOKEN_HELP = 'see REGISTRY_TOKENS, or the admin-token file in the registry\'s data directory';

/**
 * A token sent as the RFC 6750 `access_token` query parameter, which no door reads: served as
 * anonymous, such a caller read a public registry and only learnt at its first write that its
 * token was never seen, while the token sat in every proxy's access log. Refused like any other
 * unusable credential, so the mistake shows on the first call.
 */
export const QUERY_TOKEN_REFUSAL: AccessRefusal = {
  reason: 'INVALID_CREDENTIAL',
  message: `The request carries a token in its URL (access_token), which the registry does not read: URLs end up in logs and browser history. Send it as "Authorization: Bearer <token>" (${TOKEN_HELP}), and replace the token if the URL may have been logged.`,
  challenge: `Bearer realm="${AUTH_REALM}", error="invalid_request", error_description="token in the URL; send it in the Authorization header"`,
};

/**
 * What is wrong with an unusable Authorization value, in words and as a challenge description.
 * The value itself is never repeated: it may be a real token with a typo around it. Another
 * scheme (Basic, Token) has no description: RFC 6750 section 3.1 says a challenge to a request
 * that "attempted using an unsupported authentication method" SHOULD NOT include an error code
 * or other error information (an OAuth client told invalid_token may throw its token away or
 * refresh it, when what it lacks is the Bearer scheme; the body's message says so).
 */
function credentialProblem(authorization: string): { problem: string; description?: string } {
  if (authorization.trim() === '') return { problem: 'The Authorization header is empty.', description: 'empty Authorization header' };
  if (!/^\s*Bearer(\s|$)/i.test(authorization)) return { problem: 'The Authorization header is not a bearer token.' };
  const words = authorization.trim().split(/\s+/).length - 1;
  if (words === 0) return { problem: 'The Authorization header says Bearer but carries no token.', description: 'no token after Bearer' };
  if (words > 1) return { problem: `The Authorization header carries ${words} words after Bearer; a token is one word, with no spaces.`, description: 'malformed bearer token' };
  return { problem: 'The bearer token is not recognised.', description: 'unknown token' };
}

/**
 * Authenticates the Authorization header's values (every one the request carried: a door passes
 * them all) and applies the access rule.
 */
export function admitCaller(authenticator: TokenAuthenticator, authorizations: string | readonly string[] | undefined, policy: AccessPolicy): Admission {
  const values = authorizations === undefined ? [] : typeof authorizations === 'string' ? [authorizations] : authorizations;
  if (values.length > 1) {
    // Node's HTTP/1 parser keeps the first and drops the rest, so which credential counted
    // depended on header order: a gateway appending its own token after the client's was
    // silently overruled by the client's. (HTTP/2, hence gRPC, keeps one value before we see it.)
    return {
      admitted: false,
      refusal: {
        reason: 'INVALID_CREDENTIAL',
        message: `The request has ${values.length} Authorization headers; send exactly one, "Authorization: Bearer <token>" (${TOKEN_HELP}), or none to call anonymously where the registry allows it.`,
        challenge: `Bearer realm="${AUTH_REALM}", error="invalid_token", error_description="more than one Authorization header"`,
      },
    };
  }
  const authorization = values[0];
  const caller = authenticator.callerFor(authorization);
  if (caller.invalidCredential) {
    const { problem, description } = credentialProblem(authorization ?? '');
    return {
      admitted: false,
      refusal: {
        reason: 'INVALID_CREDENTIAL',
        message: `${problem} Send "Authorization: Bearer <token>" with a valid registry token (${TOKEN_HELP}), or no Authorization header to call anonymously where the registry allows it.`,
        challenge: description === undefined ? `Bearer realm="${AUTH_REALM}"` : `Bearer realm="${AUTH_REALM}", error="invalid_token", error_description="${description}"`,
      },
    };
  }
  if (caller.principal === undefined && !policy.publicRead) {
    return {
      admitted: false,
      refusal: {
        reason: 'CREDENTIAL_REQUIRED',
        message: `This registry needs a token for every call (REGISTRY_PUBLIC_READ=false): send "Authorization: Bearer <token>" (${TOKEN_HELP}).`,
        challenge: `Bearer realm="${AUTH_REALM}"`,
      },
    };
  }
  return { admitted: true, caller };
}
