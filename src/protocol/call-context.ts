/**
 * The call context every A2A binding hands the shared request handler: the SDK's, without the
 * request's tenant.
 *
 * The registry is not multi-tenant: its card declares no `tenant` on any interface, and an agent
 * that is not multi-tenant ignores the tenant of a request (README, "Who owns a URL"). A2A v1.0
 * lets a client send one anyway (`tenant` in the request; over HTTP+JSON the path segment in
 * front of `/tasks`, `/message:send`...), and the SDK's transports put it in the call context,
 * which scopes everything keyed by it: the task store, the event buses SubscribeToTask joins,
 * the result manager's per-task locks. So a task made under "acme" was unknown to GetTask
 * without a tenant (or under any other), and left out of ListTasks, for the very principal that
 * made it. Here the tenant never reaches the context: a task is its principal's whatever tenant
 * a request names, on every binding (JSON-RPC, HTTP+JSON with or without the tenant segment,
 * gRPC). Privacy between principals is the owner's (sdk-user.ts), not the tenant's.
 */
import { STATE_HEADERS_KEY, ServerCallContext, type ServerCallContextBuilder } from '@a2a-js/sdk/server';

/** A call context whose tenant is always unset, however a transport tries to set it. */
export class UntenantedCallContext extends ServerCallContext {
  override get tenant(): string | undefined {
    return undefined;
  }

  /** The JSON-RPC transport sets the params' tenant once the context is built: it is ignored. */
  override setTenant(_tenant: string): void {}
}

/** The SDK's defaultServerCallContextBuilder (headers kept in `state`), less the tenant. */
export const untenantedContextBuilder: ServerCallContextBuilder = ({ extensions, user, headers, requestedVersion }) =>
  new UntenantedCallContext({
    requestedExtensions: extensions,
    user,
    state: new Map<string, unknown>([[STATE_HEADERS_KEY, headers]]),
    requestedVersion,
  });
