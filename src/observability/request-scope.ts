/**
 * Per-request facts shared between the HTTP layer and the executor without threading them
 * through the SDK: the transport knows the method (and whether it streams), the executor knows
 * the operation and the final task state. One log line per request reads both.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AnswerLimit, MessageEncoding } from '../contract/binding.js';

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
  /**
   * The largest answer the binding's clients take by default (gRPC: 4 MiB, grpc/answer-limit.ts);
   * a ListTasks page is cut short of it. Unset on the HTTP doors, which have no such limit.
   */
  answerLimit?: AnswerLimit;
  /**
   * How the binding encodes messages, for the messages that say how to write parts
   * (operations/part-words.ts): protobuf on gRPC; unset on the HTTP doors, whose messages are JSON.
   */
  encoding?: MessageEncoding;
  operation?: string;
  taskState?: string;
  errorCode?: string;
  /**
   * Set with errorCode by a refusal answered as a protocol error that says when to retry: a
   * budget's (RATE_LIMITED, a watch's renewal), or one with its own time (STARTING_UP for a watch
   * started as the registry shuts down). For the doors that answer it (a v0.3 JSON-RPC error and
   * a gRPC status are made from the scope, the SDK's answer dropping it).
   */
  retryAfterSeconds?: number;
  /**
   * Set when the request's watch stream was ended while its watch runs on: by a shutdown
   * (SHUTTING_DOWN: after the restart, or on another replica), a handover (WATCH_MOVED: on the
   * replica a client resumed it on), its gRPC connection's age (CONNECTION_AGED), an internal
   * failure (WATCH_INTERRUPTED: run again after retryAfterSeconds), with the message saying so.
   * gRPC ends the call UNAVAILABLE with it, to be resumed with SubscribeToTask: a status OK says
   * the stream is complete. An SSE stream just ends, which is what makes its client reconnect.
   */
  watchStreamEnd?: { reason: string; message: string; retryAfterSeconds?: number };
  /** Set while the request's stream follows a watch (its own stream, SubscribeToTask): it does not end on its own. */
  followsWatch?: boolean;
  /**
   * The calls of a JSON-RPC batch (MCP 2025-03-26 clients may send one), each with a scope of its
   * own: a batch runs several operations, each with its own outcome, and they are counted in
   * metrics and listed in the log line as single requests would be. The request's own operation
   * and outcome then stay unset, unless the batch was refused as a whole before any call ran.
   */
  calls?: BatchCall[];
}

/** One call of a batch: its scope (method, operation, task state, error code) and its metrics label, from the door's fixed set. */
export interface BatchCall {
  scope: RequestScope;
  label: string;
}

const storage = new AsyncLocalStorage<RequestScope>();

export const runInScope = <T>(scope: RequestScope, fn: () => T): T => storage.run(scope, fn);
export const currentScope = (): RequestScope | undefined => storage.getStore();
/** Runs `fn` outside any request's scope: for what happens to follow a request but is not about it. */
export const outsideScope = <T>(fn: () => T): T => storage.exit(fn);
