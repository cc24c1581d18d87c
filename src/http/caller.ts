/**
 * Authentication at the doors that read requests themselves (MCP, catalog/ARD): the Caller the
 * Authorization header makes, with the client address rate limits key on. A credential that is
 * presented but not recognised is refused at once with 401 (in the door's binding, see
 * failureFormat): a client with a typo in its token learns so on its first request, instead of
 * silently reading as anonymous and failing later on a write.
 */
import type { RequestHandler, Response } from 'express';
import type { TokenAuthenticator } from '../auth/tokens.js';
import type { Caller } from '../contract/caller.js';
import { currentScope } from '../observability/request-scope.js';
import { sendFailure } from './errors.js';

const JSONRPC_INVALID_REQUEST = -32600;

/** Sets res.locals.caller; refuses an unrecognised bearer token with 401. */
export function authenticate(authenticator: TokenAuthenticator): RequestHandler {
  return (req, res, next) => {
    const caller: Caller = { ...authenticator.callerFor(req.header('authorization')), address: req.ip };
    if (caller.invalidCredential) {
      const scope = currentScope();
      if (scope) Object.assign(scope, { taskState: 'REJECTED', errorCode: 'UNAUTHENTICATED' });
      res.setHeader('WWW-Authenticate', 'Bearer error="invalid_token"');
      req.resume();
      return sendFailure(req, res, {
        httpStatus: 401,
        jsonRpcCode: JSONRPC_INVALID_REQUEST,
        reason: 'UNAUTHENTICATED',
        message:
          'The bearer token is not recognised. Send "Authorization: Bearer <token>" with a registry token (REGISTRY_TOKENS), or no Authorization header to read anonymously.',
      });
    }
    res.locals.caller = caller;
    next();
  };
}

/** The caller `authenticate` left on the response. */
export function callerOf(res: Response): Caller {
  const caller = (res.locals as { caller?: Caller }).caller;
  if (!caller) throw new Error('authenticate() must run before callerOf()');
  return caller;
}

