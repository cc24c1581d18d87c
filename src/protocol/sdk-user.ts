/**
 * The A2A door's adapter between our Caller and the SDK's User: the SDK scopes tasks by
 * `userName` (its default owner resolver; also its per-task locks and event buses) and hands the
 * user to the executor, which reads the Caller back from it. An anonymous caller's userName is
 * a key made for its one request (tasks/task-owner.ts), so no other request — anonymous or
 * not — can read, list, cancel or subscribe to its tasks.
 */
import type { User } from '@a2a-js/sdk/server';
import type { UserBuilder } from '@a2a-js/sdk/server/express';
import type { Request } from 'express';
import type { TokenAuthenticator } from '../auth/tokens.js';
import type { Caller } from '../contract/caller.js';
import { admittedCaller } from '../http/authentication.js';
import { anonymousTaskOwner } from '../tasks/task-owner.js';

export class CallerUser implements User {
  readonly userName: string;
  constructor(readonly caller: Caller) {
    this.userName = caller.principal ?? anonymousTaskOwner();
  }
  get isAuthenticated(): boolean {
    return this.caller.principal !== undefined;
  }
}

/** The caller the door's authentication admitted (it runs before the SDK on every A2A route). */
export function callerUserBuilder(authenticator: TokenAuthenticator): UserBuilder {
  return async (req: Request) => new CallerUser(admittedCaller(req) ?? authenticator.callerFor(req.header('authorization')));
}
