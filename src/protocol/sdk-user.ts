/**
 * The A2A door's adapter between our Caller and the SDK's User: the SDK scopes tasks by
 * `userName` (its default owner resolver) and hands the user to the executor, which reads the
 * Caller back from it.
 */
import type { User } from '@a2a-js/sdk/server';
import type { UserBuilder } from '@a2a-js/sdk/server/express';
import type { Request } from 'express';
import type { TokenAuthenticator } from '../auth/tokens.js';
import type { Caller } from '../contract/caller.js';
import { admittedCaller } from '../http/authentication.js';

export class CallerUser implements User {
  constructor(readonly caller: Caller) {}
  get isAuthenticated(): boolean {
    return this.caller.principal !== undefined;
  }
  get userName(): string {
    return this.caller.principal ?? '';
  }
}

/** The caller the door's authentication admitted (it runs before the SDK on every A2A route). */
export function callerUserBuilder(authenticator: TokenAuthenticator): UserBuilder {
  return async (req: Request) => new CallerUser(admittedCaller(req) ?? authenticator.callerFor(req.header('authorization')));
}
