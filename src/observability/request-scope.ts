/**
 * Per-request facts shared between the HTTP layer and the executor without threading them
 * through the SDK: the transport knows the method (and whether it streams), the executor knows
 * the operation and the final task state. One log line per request reads both.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestScope {
  requestId: string;
  /** JSON-RPC method, or REST route. */
  method?: string;
  /** The request asked for a stream (SendStreamingMessage, message/stream, message:stream). */
  streaming: boolean;
  /** The client's address (req.ip, after the trust-proxy setting): rate limits key on it. */
  clientAddress?: string;
  /**
   * Aborted when the connection is gone (HTTP) or the call ended (gRPC: cancelled, its deadline
   * passed, or its status sent). The SDK's stream loop does not notice a client that left; long
   * streams (watches) use this to stop rather than write to nobody.
   */
  closed?: AbortSignal;
  operation?: string;
  taskState?: string;
  errorCode?: string;
}

const storage = new AsyncLocalStorage<RequestScope>();

export const runInScope = <T>(scope: RequestScope, fn: () => T): T => storage.run(scope, fn);
export const currentScope = (): RequestScope | undefined => storage.getStore();
/** Runs `fn` outside any request's scope: for what happens to follow a request but is not about it. */
export const outsideScope = <T>(fn: () => T): T => storage.exit(fn);
