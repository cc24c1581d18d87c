/**
 * Whose task is it. The SDK scopes every task (load, save, list, the event buses) by the owner
 * its OwnerResolver returns; by default that is `user.userName`, and every anonymous caller used
 * to share the owner "" — so any anonymous caller could list and read every other anonymous
 * caller's tasks, including what was sent with a mistyped token.
 *
 * Here an authenticated caller's tasks belong to its principal, and an anonymous caller's to a
 * key made up for that one request, which nobody (the caller included) can present again. So an
 * anonymous caller can fetch no task later: not its own, not anyone else's. Nothing is lost by
 * that: what an anonymous caller may do (search, get, list, validate, and requests that are
 * refused) is answered in full in the SendMessage answer or stream itself, and those tasks are
 * never durable. A caller that wants GetTask/ListTasks/SubscribeToTask later sends a token.
 *
 * (Binding the task to something the caller holds instead, e.g. the task id as a capability,
 * would make every task id a secret that clients, proxies and logs do not treat as one.)
 */
import { randomUUID } from 'node:crypto';

/** Principals come from `principal:token` pairs and never contain ':'; these keys always do. */
const ANONYMOUS_PREFIX = 'anonymous:';

/** The owner key of one anonymous request: unguessable, and never issued twice. */
export const anonymousTaskOwner = (): string => `${ANONYMOUS_PREFIX}${randomUUID()}`;

/** Tasks of this owner can be reached by no later request. */
export const isAnonymousTaskOwner = (owner: string): boolean => owner.startsWith(ANONYMOUS_PREFIX);
