/**
 * What an HTTP request (or a gRPC call) came to, told once for both who tell it: its log line
 * (http/request-log.ts, grpc/call-guard.ts) and its metrics (metrics.ts). The status it was
 * answered with, if any; the outcome (a task state, REFUSED, ERROR, OK or ABORTED) and the error
 * code. Worked out twice, the log line read the code the registry named in the request's scope
 * only, and a GetTask of an unknown task, counted ERROR -32001 (gRPC: NOT_FOUND), was logged as
 * a success.
 */
import type { Response } from 'express';
import type { RequestScope } from './request-scope.js';

export interface RequestOutcome {
  /** A task state, REFUSED, ERROR, OK or ABORTED. */
  outcome: string;
  /**
   * For a task state, the registry's error code; for REFUSED, the refusal's reason; for ERROR,
   * the JSON-RPC code of the error answered (on HTTP+JSON too, the code of its ErrorInfo reason).
   * For ABORTED, the reason the registry cut the connection, if it did (SLOW_READER). Undefined
   * for none (a success, an error answer that named no code, a client gone).
   */
  code?: string;
}

/**
 * When the request arrived, noted by the first who asks: the metrics middleware, mounted first on
 * each door. The log line's duration then measures what the latency metric does, the body's
 * arrival included; a JSON-RPC line, whose scope opens once the body is read, left it out (a
 * request cut at REGISTRY_REQUEST_TIMEOUT_SECONDS took under a millisecond).
 */
export function arrivalOf(res: Response): bigint {
  const locals = res.locals as { arrivedAt?: bigint };
  return (locals.arrivedAt ??= process.hrtime.bigint());
}

/** What Node's HTTP server itself wrote on a connection, in place of the answer of the request in flight. */
interface ServerAnswer {
  status: number;
  reason: string;
}

/** Keyed by socket: Node's HTTP server answers a request it cuts (clientError) on the socket, not through its response. */
const serverAnswers = new WeakMap<object, ServerAnswer>();

/**
 * Records that the server answered the request in flight on `socket` itself, with `status`
 * (a 408 to a request whose body had not arrived within REGISTRY_REQUEST_TIMEOUT_SECONDS), for
 * its log line and metrics: its response never ended, so it read as a client gone away.
 */
export function noteServerAnswer(socket: object, status: number, reason: string): void {
  serverAnswers.set(socket, { status, reason });
}

const serverAnswerTo = (res: Response): ServerAnswer | undefined => (res.req?.socket ? serverAnswers.get(res.req.socket) : undefined);

/**
 * The HTTP status the request was answered with; undefined when no answer ended (the client went
 * away, or shutdown cut the connection): res.statusCode is whatever it was set to then, 200 by
 * default, which read as answered.
 */
export function answeredStatus(res: Response): number | undefined {
  if (res.writableFinished) return res.statusCode;
  return serverAnswerTo(res)?.status;
}

/** The task state the executor left in the scope, with its error code; undefined before a task existed. */
export function taskOutcome(scope: RequestScope | undefined): RequestOutcome | undefined {
  if (!scope?.taskState) return undefined;
  return { outcome: scope.taskState, code: scope.errorCode || undefined };
}

/**
 * Whether the task state the executor left is the request's outcome: unless the answer was an
 * error and the executor named no failure of its own. A stream that broke after the operation
 * completed (its task could not be stored: an `event: error` -32603 ends it) was counted
 * COMPLETED; the error the client got is the outcome then. A failure the executor named
 * (FAILED STORAGE_UNAVAILABLE, which the answer's -32603 only repeats) says more.
 */
export const taskStateCounts = (scope: RequestScope | undefined, answeredError: boolean): boolean => !answeredError || scope?.errorCode !== undefined;

/**
 * What happened to the answer itself: the server's own answer to a request it cut (REFUSED
 * REQUEST_TIMEOUT), none that ended (the client went away, or the registry cut the connection
 * for the reason it named: SLOW_READER), an error status, or an answer.
 */
function answerOutcome(res: Response, scope: RequestScope | undefined): RequestOutcome {
  if (res.writableFinished) return { outcome: res.statusCode >= 400 ? 'ERROR' : 'OK' };
  const server = serverAnswerTo(res);
  if (server) return { outcome: 'REFUSED', code: server.reason };
  return { outcome: 'ABORTED', code: scope?.errorCode || undefined };
}

/** What happened to the request: its task state, or why it was refused or failed before a task existed. */
export function requestOutcome(res: Response, scope: RequestScope | undefined): RequestOutcome {
  // Recorded from the answer: failureReason by sendFailure and sendA2AError, and by the answer
  // sanitizer for a refusal of the request's shape; rpcErrorCode by the sanitizer for any other error.
  const locals = res.locals as { failureReason?: string; rpcErrorCode?: number };
  const task = taskOutcome(scope);
  if (task && taskStateCounts(scope, locals.rpcErrorCode !== undefined)) return task;
  if (locals.failureReason) return { outcome: 'REFUSED', code: locals.failureReason };
  if (locals.rpcErrorCode !== undefined) return { outcome: 'ERROR', code: String(locals.rpcErrorCode) };
  return answerOutcome(res, scope);
}

/**
 * What a call of a door outside express (gRPC) came to: the task state the executor left in the
 * scope, unless the call ended in an error the executor named no failure of (as for an HTTP
 * request), else how the call ended (`ended`: REFUSED or ERROR with a code, OK or ABORTED).
 */
export function callEndedOutcome(scope: RequestScope | undefined, ended: RequestOutcome): RequestOutcome {
  const task = taskOutcome(scope);
  return task && taskStateCounts(scope, ended.outcome === 'ERROR') ? task : ended;
}

/**
 * What happened to one call of a batch: its own task state (a refusal the door or the SDK answered
 * is recorded there too), else what happened to the answer they share.
 */
export const callOutcome = (res: Response, call: RequestScope): RequestOutcome => taskOutcome(call) ?? answerOutcome(res, call);
