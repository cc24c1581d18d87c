/**
 * What the A2A HTTP door does with middleware before and around the SDK (http/request-log.ts,
 * http/rate-limit.ts, protocol/versions.ts, http/authentication.ts, protocol/request-guard.ts,
 * http/security.ts, the metrics middleware), done for gRPC calls by one server interceptor,
 * with the same rules in the same order:
 * - a request scope (request id from x-request-id, method, whether it streams, the client
 *   address) that the executor reads for per-address limits and streaming;
 * - until its request has arrived in full (message and end of stream), at most
 *   REGISTRY_REQUEST_TIMEOUT_SECONDS, as the HTTP doors answer 408 (DEADLINE_EXCEEDED,
 *   REQUEST_TIMEOUT), and no longer than shutdown begins (UNAVAILABLE, SHUTTING_DOWN);
 * - on the call's metadata, before its message is read: its size (metadata-size.ts; RESOURCE_EXHAUSTED,
 *   REQUEST_TOO_LARGE, as the HTTP port answers 431), the per-address request limit and the
 *   cap on concurrent streams (RESOURCE_EXHAUSTED), version negotiation on a2a-version
 *   (FAILED_PRECONDITION, VersionNotSupportedError; the service called fixes the version, v1.0
 *   for lf.a2a.v1, v0.3 for a2a.v1, and a2a-version naming the other is refused), the access rule of auth/access.ts on the
 *   authorization metadata (UNAUTHENTICATED); the reason, and the retry delay or the challenge,
 *   travel in google.rpc.ErrorInfo (grpc-status-details-bin) and as trailers;
 * - on the decoded message: nesting depth (REGISTRY_MAX_JSON_DEPTH) and a message without parts
 *   (INVALID_ARGUMENT); a message over REGISTRY_MAX_BODY_BYTES, which grpc-js refuses before it
 *   is decoded, gets the same answer as the others (RESOURCE_EXHAUSTED, REQUEST_TOO_LARGE);
 * - a server stream whose client does not read is cut past a bound (cutIfNotRead);
 * - internal errors answered with a generic message, never the exception's; storage that cannot
 *   be written answered UNAVAILABLE with retry-after, as HTTP answers 503;
 * - when the call ends (status sent or client gone): one count in registry_requests_total and
 *   its latency, one log line, and the stream's place given back; a stream's `closed` signal
 *   fires then, as the HTTP door's does when its connection closes, so a watch stream whose
 *   client cancelled (or whose deadline passed) stops rather than go on marking the watch's
 *   events sent to nobody.
 * The interceptor opens the scope and admits the caller; `scoped` runs the SDK's method handlers
 * inside the scope and the user builder reads the admitted caller (keyed by the call's metadata
 * object, which the handler receives as the interceptor saw it).
 */
import { randomUUID } from 'node:crypto';
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { VersionNotSupportedError, type RequestMalformedError } from '@a2a-js/sdk/errors';
import { buildGrpcErrorMetadata, decodeErrorInfo, decodeStatus, grpcStatusFor, GRPC_STATUS_DETAILS_BIN } from '@a2a-js/sdk/errors/grpc';
import { admitCaller, type AccessRefusal } from '../auth/access.js';
import type { RegistryCore } from '../composition/build-registry.js';
import type { Caller } from '../contract/caller.js';
import { errorDomain } from '../http/errors.js';
import type { Refusal, StreamSlot } from '../http/rate-limit.js';
import { INTERNAL_MESSAGE } from '../http/security.js';
import { valueNestsDeeperThan } from '../lib/json-depth.js';
import { MAX_UNSENT_STREAM_MESSAGES, SLOW_READER } from '../lib/stream-backlog.js';
import { refusalOfAnswer } from '../observability/metrics.js';
import { callEndedOutcome, type RequestOutcome } from '../observability/request-outcome.js';
import { partWords } from '../operations/part-words.js';
import { runInScope, type RequestScope } from '../observability/request-scope.js';
import { missingLegacyGrpcMessageIn } from '../protocol/message-required.js';
import { negotiate, oneVersion, VERSION_PARAMETER } from '../protocol/versions.js';
import { RATE_LIMITED_REASON } from '../http/retry-later.js';
import { retryNamedIn } from '../tasks/storage-unavailable.js';
import { metadataText } from './caller.js';
import { GRPC_ANSWER_LIMIT } from './answer-limit.js';
import { clientAddress, compileTrust } from './client-address.js';
import { HEALTH_SERVICE_PREFIX } from './health.js';
import { legacyNameProblem } from './legacy-names.js';
import { METADATA_LIMIT, metadataTooLarge } from './metadata-size.js';
import { encodeStatusDetails } from './status-details.js';
import { UndecodableRequest } from './undecodable.js';
import { UNKNOWN_METHOD_KEY, UNKNOWN_METHOD_PATH } from './unknown-methods.js';

const REQUEST_ID = /^[\w.-]{1,64}$/;
/** Why a stream's `closed` signal fires, made once (aborting without a reason builds a DOMException each time). */
const CALL_ENDED = new DOMException('The call ended: status sent, cancelled by the client, or its deadline passed.', 'AbortError');
const VERSION_KEY = VERSION_PARAMETER.toLowerCase();

/** A status as the responder passes it on (grpc-js does not export its own name for it). */
type StatusAnswer = Pick<grpc.StatusObject, 'code' | 'details'> & { metadata?: grpc.Metadata | null };

/** A call the guard answers itself: why (the metrics code), and the status sent. */
interface Refused {
  reason: string;
  status: grpc.StatusObject;
}

interface Admitted {
  scope: RequestScope;
  caller: Caller;
  /** Ends a stream's run (its `closed` signal) without waiting for its status to be sent. */
  stop: () => void;
}

/** What the checks on a call's metadata decided; a stream's place, if one was taken, either way. */
type Verdict = ({ refused: Refused } | { caller: Caller }) & { slot?: StreamSlot };

/** How a call ended, for metrics and the log line. */
interface Ending {
  status: grpc.status;
  /** Set when the guard refused the call before the SDK saw it. */
  refusal?: string;
  /**
   * Set when grpc-js ended the call at the deadline its client set (grpc-timeout): the client's
   * to give up, as a cancelled call is, so it counts ABORTED, as the HTTP doors count a client
   * gone. Counted by its status, DEADLINE_EXCEEDED, it was an ERROR, the server's failure.
   */
  deadlinePassed?: true;
}

/** The parts of the message a SendMessage / SendStreamingMessage request carries (v1.0 or v0.3 shape). */
function messageParts(request: unknown): unknown[] | undefined {
  if (typeof request !== 'object' || request === null) return undefined;
  const r = request as { message?: { parts?: unknown }; request?: { content?: unknown } };
  const parts = r.message?.parts ?? r.request?.content; // lf.a2a.v1 message.parts; a2a.v1 (v0.3) request.content
  return Array.isArray(parts) ? parts : undefined;
}

/**
 * A decoded v0.3 Part (a2a.v1) with no content: none of text, file and data, or a file part
 * without its file (neither fileWithBytes nor fileWithUri).
 */
function isEmptyLegacyPart(part: unknown): boolean {
  const content = (part as { part?: { $case?: string; value?: { file?: unknown } } } | null)?.part;
  return content?.$case === undefined || (content.$case === 'file' && content.value?.file === undefined);
}

const SEND_METHODS = /\/(SendMessage|SendStreamingMessage)$/;
/** The v0.3 service's methods (a2a.v1; v1.0's is lf.a2a.v1). */
const LEGACY_SERVICE_PATH = '/a2a.v1.A2AService/';

function statusMetadata(requestId: string, entries: Record<string, string | Buffer> = {}, base = new grpc.Metadata()): grpc.Metadata {
  base.set('x-request-id', requestId);
  for (const [key, value] of Object.entries(entries)) base.set(key, value);
  return base;
}

/**
 * A status whose reason travels in google.rpc.ErrorInfo (grpc-status-details-bin), with trailers;
 * with `retryAfterSeconds`, a google.rpc.RetryInfo beside it.
 */
function detailedStatus(
  code: grpc.status,
  details: string,
  reason: string,
  requestId: string,
  trailers: Record<string, string> = {},
  metadata?: Record<string, string>,
  retryAfterSeconds?: number,
): grpc.StatusObject {
  const blob = encodeStatusDetails(code, details, { reason, domain: errorDomain(reason), metadata, retryAfterSeconds });
  return { code, details, metadata: statusMetadata(requestId, { ...trailers, [GRPC_STATUS_DETAILS_BIN]: blob }) };
}

/**
 * RESOURCE_EXHAUSTED, or UNAVAILABLE: the reason and when to retry, as HTTP's Retry-After: in a
 * google.rpc.RetryInfo (what gRPC client libraries read), the ErrorInfo's metadata (as the JSON
 * bindings carry it) and a retry-after trailer.
 */
function retryLater(code: grpc.status, details: string, reason: string, retryAfterSeconds: number, requestId: string): grpc.StatusObject {
  const seconds = String(retryAfterSeconds);
  return detailedStatus(code, details, reason, requestId, { 'retry-after': seconds }, { retryAfterSeconds: seconds }, retryAfterSeconds);
}

/**
 * A status the SDK answered, with the request id as a trailer: a unary call that fails sends no
 * headers (trailers only), so without it a client had no id to report (the HTTP doors send
 * X-Request-Id on every answer).
 */
function withRequestId(status: StatusAnswer, scope: RequestScope | undefined): StatusAnswer {
  if (!scope || status.code === grpc.status.OK) return status;
  return { ...status, metadata: statusMetadata(scope.requestId, {}, status.metadata?.clone() ?? new grpc.Metadata()) };
}

/** The google.rpc.ErrorInfo reason of a status, if it carries one (grpc-status-details-bin). */
function reasonOf(status: StatusAnswer): string | undefined {
  const [blob] = status.metadata?.get(GRPC_STATUS_DETAILS_BIN) ?? [];
  if (!Buffer.isBuffer(blob)) return undefined;
  try {
    const detail = decodeStatus(blob).details.find((d) => d.typeUrl.endsWith('google.rpc.ErrorInfo'));
    return detail ? decodeErrorInfo(detail.value).reason : undefined;
  } catch {
    return undefined;
  }
}

const limitRefusal = (refusal: Refusal, requestId: string): Refused => ({
  reason: refusal.reason,
  status: retryLater(grpc.status.RESOURCE_EXHAUSTED, refusal.message, refusal.reason, refusal.retryAfterSeconds, requestId),
});

const accessRefusal = (refusal: AccessRefusal, requestId: string): Refused => ({
  reason: refusal.reason,
  status: detailedStatus(grpc.status.UNAUTHENTICATED, refusal.message, refusal.reason, requestId, { 'www-authenticate': refusal.challenge }),
});

/** A call to a method no service here has (unknown-methods.ts), as JSON-RPC answers -32601. */
const methodNotFound = (called: string, requestId: string): Refused => ({
  reason: 'METHOD_NOT_FOUND',
  status: detailedStatus(
    grpc.status.UNIMPLEMENTED,
    `${JSON.stringify(called)} is no method of this server: the A2A services are lf.a2a.v1.A2AService (A2A v1.0) and a2a.v1.A2AService (v0.3), with the methods of their .proto (e.g. /lf.a2a.v1.A2AService/SendMessage).`,
    'METHOD_NOT_FOUND',
    requestId,
  ),
});

/** An A2A error of the SDK's (its status, message and ErrorInfo, field included), answered by the guard. */
const refusedAsTheSdkWould = (error: RequestMalformedError, requestId: string): Refused => ({
  reason: error.reason,
  status: { code: grpcStatusFor(error), details: error.message, metadata: statusMetadata(requestId, {}, buildGrpcErrorMetadata(grpc.Metadata, error)) },
});

const invalidArgument = (reason: string, details: string, requestId: string): Refused => ({
  reason,
  status: detailedStatus(grpc.status.INVALID_ARGUMENT, details, reason, requestId),
});

/**
 * grpc-js's own refusal of a request message over grpc.max_receive_message_length, as sent or
 * once decompressed (server-interceptors.js, stream-decoder.js), with the size it was told.
 */
const GRPC_TOO_LARGE = /^Received message (?:larger than max \((\d+) vs \d+\)|that decompresses to a size larger than \d+)/;

/** grpc-js's own answer to a compressed message its encoding cannot inflate (server-interceptors.js). */
const GRPC_NOT_DECOMPRESSED = 'Failed to decompress message';

/**
 * grpc-js's own refusal of a unary or server-streaming call that carried no request message
 * (an empty POST, or a GET) or two (server.js handleUnary, handleServerStreaming): UNIMPLEMENTED,
 * which says the method does not exist.
 */
const GRPC_MESSAGE_COUNT = /^Received (no|a second) request message for (?:server streaming|unary) method /;

/** grpc-js's own refusal of a grpc-encoding it does not have (server-interceptors.js). */
const GRPC_UNSUPPORTED_ENCODING = /^Received message compressed with unsupported encoding "(.*)"$/s;

/** grpc-js's own refusal of a grpc-timeout that is no timeout (server-interceptors.js), INTERNAL. */
const GRPC_BAD_TIMEOUT = /^Invalid grpc-timeout value "(.*)"$/s;

/** A value the client sent, quoted and cut short for a message. */
const quoted = (value: string): string => JSON.stringify(value.slice(0, 64));

/** The registry's answer to a request message over the limit, as the HTTP doors answer a body over it (REQUEST_TOO_LARGE). */
const tooLarge = (size: string | undefined, limit: number, requestId: string): Refused => ({
  reason: 'REQUEST_TOO_LARGE',
  status: detailedStatus(
    grpc.status.RESOURCE_EXHAUSTED,
    `${size === undefined ? 'The request message is over the limit of' : `The request message is ${size} bytes; the limit is`} ${limit} bytes (REGISTRY_MAX_BODY_BYTES). Documents themselves are limited to a few KB: check you are not sending something else.`,
    'REQUEST_TOO_LARGE',
    requestId,
  ),
});

/** The registry's answer to metadata over its bound (metadata-size.ts), as the HTTP port answers headers over its own (431, REQUEST_TOO_LARGE). */
const metadataRefusal = (size: number, requestId: string): Refused => ({
  reason: 'REQUEST_TOO_LARGE',
  status: detailedStatus(
    grpc.status.RESOURCE_EXHAUSTED,
    `The call's metadata is ${size} bytes (each entry's name and value, plus 32 bytes an entry, as HTTP/2 counts headers); the limit is ${METADATA_LIMIT} bytes, as for the HTTP port's headers. Drop or shorten the oversized entries: the A2A metadata (authorization, a2a-version, x-request-id) is far smaller.`,
    'REQUEST_TOO_LARGE',
    requestId,
  ),
});

/**
 * The answer to a call whose request has not arrived in full (its message and the client's end
 * of stream) within REGISTRY_REQUEST_TIMEOUT_SECONDS, as the HTTP doors answer 408 to a body too
 * slow. DEADLINE_EXCEEDED: a deadline passed before the call could run (CANCELLED says the client
 * gave up, which it did not).
 */
const requestTimeout = (timeoutMs: number) => (requestId: string): Refused => ({
  reason: 'REQUEST_TIMEOUT',
  status: detailedStatus(
    grpc.status.DEADLINE_EXCEEDED,
    `The request did not arrive in full within ${timeoutMs / 1000} s (REGISTRY_REQUEST_TIMEOUT_SECONDS): send the request message and end the stream at once, as gRPC clients do for a unary or server-streaming call.`,
    'REQUEST_TIMEOUT',
    requestId,
  ),
});

const SHUTTING_DOWN = 'SHUTTING_DOWN';
/** When to come back after a shutdown: a restarted registry, or another replica, takes the call. */
const SHUTDOWN_RETRY_SECONDS = 5;
/** When to resume a watch stream whose watch moved (WATCH_MOVED) or whose connection aged (CONNECTION_AGED): at once, the watch runs on. */
const RESUME_AT_ONCE_SECONDS = 1;

/** The answer, at shutdown, to a call whose request had not arrived in full: it will never run here. */
const shuttingDown = (requestId: string): Refused => ({
  reason: SHUTTING_DOWN,
  status: retryLater(grpc.status.UNAVAILABLE, 'The registry is shutting down and the request had not arrived in full; send it again (to another replica, or once it is back).', SHUTTING_DOWN, SHUTDOWN_RETRY_SECONDS, requestId),
});

/** Ends a call still waiting for its request, with the refusal made for its request id. */
type CutShort = (why: (requestId: string) => Refused) => void;

/**
 * The HTTP/2 stream under grpc-js's base call (its private `stream`), or undefined when a grpc-js
 * version no longer has it. A status ends only the server's half of the stream: a client that
 * never ends its own keeps the stream, and its place among the connection's concurrent streams.
 */
function http2StreamOf(call: grpc.ServerInterceptingCallInterface): Pick<http2.Http2Stream, 'close' | 'session'> | undefined {
  const stream: unknown = (call as unknown as { stream?: unknown }).stream;
  return typeof (stream as http2.Http2Stream | undefined)?.close === 'function' ? (stream as http2.Http2Stream) : undefined;
}

const CONNECTION_AGED = 'CONNECTION_AGED';
/** Why a watch stream ends when its connection reaches its age (connection-age.ts). */
const CONNECTION_AGED_MESSAGE =
  'This connection reached its age limit (REGISTRY_GRPC_MAX_CONNECTION_AGE_SECONDS), so that clients spread over the replicas; the watch runs on: resume it with SubscribeToTask on a new connection, naming the last event you have in Last-Event-ID.';

/**
 * Bounds what a server stream holds for a client that does not read (lib/stream-backlog.ts): the
 * SDK writes every event without waiting for the call to drain. Past MAX_UNSENT_STREAM_MESSAGES
 * the stream's run stops (the watch's events after it stay with the watch, for SubscribeToTask),
 * later writes are dropped, and the call ends RESOURCE_EXHAUSTED after what was already queued.
 */
function cutIfNotRead(call: grpc.ServerWritableStream<unknown, unknown>, admitted: Admitted): void {
  const write = call.write.bind(call) as (...args: unknown[]) => boolean;
  let cut = false;
  call.write = ((...args: unknown[]): boolean => {
    if (cut) return false;
    const taken = write(...args);
    if (!taken && call.writableLength > MAX_UNSENT_STREAM_MESSAGES) {
      cut = true;
      admitted.scope.errorCode = SLOW_READER;
      admitted.stop();
      const status = detailedStatus(
        grpc.status.RESOURCE_EXHAUSTED,
        `The client did not read the stream: more than ${MAX_UNSENT_STREAM_MESSAGES} messages were waiting, so it was cut. Read as you go; a watch resumes with SubscribeToTask (the events missed, or a resync).`,
        SLOW_READER,
        admitted.scope.requestId,
      );
      call.emit('error', status);
    }
    return taken;
  }) as typeof call.write;
}

/** The health service's methods, the labels its calls are counted under (any other path: `other`). */
const HEALTH_METHODS: ReadonlySet<string> = new Set(['Check', 'List', 'Watch'].map((name) => `${HEALTH_SERVICE_PREFIX}${name}`));

/** What a call came to by how it ended (its status, a refusal), before any task state it left (callEndedOutcome). */
function endingOutcome(how: Ending, scope: RequestScope | undefined): RequestOutcome {
  if (how.refusal) return { outcome: 'REFUSED', code: how.refusal };
  if (how.status === grpc.status.OK) return { outcome: 'OK' };
  if (how.status === grpc.status.CANCELLED || how.deadlinePassed) return { outcome: 'ABORTED', code: scope?.errorCode || undefined };
  // A stream cut because its client stopped reading (cutIfNotRead) says RESOURCE_EXHAUSTED to the
  // client; it is counted and logged SLOW_READER, as an SSE stream cut for it is. A watch stream
  // ended while its watch runs on (answerFor) says UNAVAILABLE; it is counted with its reason,
  // SHUTTING_DOWN, WATCH_MOVED, CONNECTION_AGED or WATCH_INTERRUPTED.
  const named = scope?.errorCode === SLOW_READER || (scope?.errorCode !== undefined && scope.errorCode === scope.watchStreamEnd?.reason);
  return { outcome: 'ERROR', code: named ? scope!.errorCode : (grpc.status[how.status] ?? 'UNKNOWN') };
}

export class CallGuard {
  private readonly calls = new WeakMap<grpc.Metadata, Admitted>();
  /** Calls whose request has not arrived in full: none of them has run anything yet. */
  private readonly arriving = new Set<CutShort>();
  /** By HTTP/2 session: its streaming calls' ends for when the connection ages (connectionAged). */
  private readonly streamsBySession = new WeakMap<object, Set<() => void>>();
  private readonly trust: ReturnType<typeof compileTrust>;

  /**
   * `versions`: the A2A versions (Major.Minor) the gRPC binding serves, as the card lists them.
   * `serviceVersions`: by service (full name), the one version its calls are. On gRPC the
   * service called says the version, as its messages are that version's: v0.3 clients call a
   * service of their own (package a2a.v1), v1.0 clients lf.a2a.v1. A call without a2a-version is
   * its service's version (the spec's "absent is 0.3", A2A 3.6.2, is there for v0.3 clients,
   * which call a2a.v1); one whose a2a-version names the other version is refused, as the HTTP
   * doors refuse a version mismatch. Followed instead, a v1.0 call tagged 0.3 got v0.3 push
   * payloads and config ids, and a v0.3 call tagged 1.0 v1.0 payloads its client cannot read.
   */
  constructor(
    private readonly core: RegistryCore,
    private readonly versions: readonly string[],
    private readonly serviceVersions: ReadonlyMap<string, string> = new Map(),
  ) {
    this.trust = compileTrust(core.config.hardening.trustProxy);
  }

  /**
   * The server interceptor: admits each A2A call, opens its scope, and accounts for it when it
   * ends. Health calls pass straight through, as GET /readyz does on HTTP, counted only; a health
   * Watch also takes its place among the client's streams (healthCall).
   */
  readonly interceptor: grpc.ServerInterceptor = (method, call) => {
    if (method.path.startsWith(HEALTH_SERVICE_PREFIX)) return this.healthCall(call, method.path, method.responseStream);
    const started = process.hrtime.bigint();
    let scope: RequestScope | undefined;
    let slot: StreamSlot | undefined;
    let ending: Ending | undefined;
    let refused: string | undefined;
    // Streams only: the SDK's stream loop does not notice a cancelled call, and a watch stream
    // never ends on its own (see RequestScope.closed).
    const closed = method.responseStream ? new AbortController() : undefined;
    // Until its request has arrived (message and end of stream) a call only holds memory and a
    // stream: one whose client never sends it is ended after REGISTRY_REQUEST_TIMEOUT_SECONDS,
    // as the HTTP doors end a request whose body is too slow, and at once at shutdown, which
    // would otherwise wait the whole grace period for it.
    const stopWaiting = () => {
      clearTimeout(unarrived);
      this.arriving.delete(cutShort);
    };
    const cutShort: CutShort = (why) => {
      stopWaiting();
      if (ending) return;
      refuse(why(scope?.requestId ?? randomUUID()));
      // After the status (NO_ERROR waits for it to be sent): RST_STREAM tells the client to stop
      // sending the request (RFC 9113 8.1) and frees the stream here.
      http2StreamOf(call)?.close(http2.constants.NGHTTP2_NO_ERROR);
    };
    const timeoutMs = this.core.config.connections.requestTimeoutMs;
    const unarrived = setTimeout(() => cutShort(requestTimeout(timeoutMs)), timeoutMs);
    this.arriving.add(cutShort);
    let untrack: (() => void) | undefined;
    const end = (how: Ending) => {
      if (ending) return;
      ending = how;
      untrack?.();
      stopWaiting();
      closed?.abort(CALL_ENDED);
      slot?.release();
      this.account(method.path, scope, how, started);
    };
    const refuse = (refusal: Refused) => {
      refused = refusal.reason;
      if (scope) scope.errorCode = refusal.reason;
      intercepting.sendStatus(refusal.status);
    };

    const listener = new grpc.ServerListenerBuilder()
      .withOnReceiveMetadata((metadata, next) => {
        const incoming = metadataText(metadata, 'x-request-id');
        const connection = intercepting.getConnectionInfo();
        const opened: RequestScope = {
          requestId: incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID(),
          // An unknown method: the path the client called, for the log (unknown-methods.ts).
          method: method.path === UNKNOWN_METHOD_PATH ? (metadataText(metadata, UNKNOWN_METHOD_KEY) ?? '').slice(0, 200) : method.path.slice(method.path.lastIndexOf('/') + 1),
          streaming: method.responseStream,
          clientAddress: clientAddress(connection.remoteAddress, metadata.get('x-forwarded-for').map(String), this.trust),
          closed: closed?.signal,
          answerLimit: GRPC_ANSWER_LIMIT,
          encoding: 'protobuf',
        };
        scope = opened;
        // Before every other rule, as the HTTP port's parser refuses headers over its bound.
        const oversized = metadataTooLarge(metadata, method.path);
        if (oversized !== undefined) return refuse(metadataRefusal(oversized, opened.requestId));
        this.admit(opened, metadata, method.path).then(
          (verdict) => {
            if (ending) {
              verdict.slot?.release(); // the client went away meanwhile
              return;
            }
            slot = verdict.slot;
            if ('refused' in verdict) return refuse(verdict.refused);
            this.calls.set(metadata, { scope: opened, caller: verdict.caller, stop: () => closed?.abort(CALL_ENDED) });
            if (closed) untrack = this.trackStream(call, opened, closed);
            next(metadata);
          },
          (err: unknown) => {
            this.core.log.error({ err, method: method.path }, 'gRPC admission failed');
            intercepting.sendStatus({ code: grpc.status.INTERNAL, details: INTERNAL_MESSAGE });
          },
        );
      })
      .withOnReceiveMessage((message, next) => {
        const problem = this.messageProblem(method.path, message, scope?.requestId ?? '');
        if (problem) return refuse(problem);
        next(message);
      })
      .withOnReceiveHalfClose((next) => {
        stopWaiting();
        next();
      })
      // Also called after every status sent (by then accounted for): here for a client gone before any status.
      .withOnCancel(() => end({ status: grpc.status.CANCELLED }))
      .build();
    const responder = new grpc.ResponderBuilder()
      .withStart((next) => next(listener))
      .withSendMetadata((metadata, next) => {
        if (scope) metadata.set('x-request-id', scope.requestId);
        next(metadata);
      })
      .withSendStatus((status, next) => {
        // grpc-js refuses a call without its one request message through here (baseRefusal).
        const own = refused ? undefined : this.baseRefusal(status, scope?.requestId ?? randomUUID());
        if (own) {
          refused = own.reason;
          if (scope) scope.errorCode = own.reason;
        }
        const answered = own ? own.status : refused ? status : this.answerFor(status, scope);
        // The handler's checks of the request's shape (INVALID_PARAMS), and its budget refusals
        // (RATE_LIMITED), count as refusals, as the HTTP doors count theirs.
        const shape = refused ?? (answered.code === grpc.status.INVALID_ARGUMENT || answered.code === grpc.status.RESOURCE_EXHAUSTED ? refusalOfAnswer(reasonOf(answered)) : undefined);
        if (shape && scope) scope.errorCode ??= shape;
        end({ status: answered.code ?? grpc.status.UNKNOWN, refusal: shape });
        next(answered);
      })
      .build();
    const intercepting = new grpc.ServerInterceptingCall(call, responder);
    // grpc-js ends some calls itself, on its base call (the one this interceptor wraps), with a
    // bare status no interceptor sees: a message over grpc.max_receive_message_length, one that
    // does not decompress or whose grpc-encoding it does not have, a grpc-timeout that is no
    // timeout, the client's grpc-timeout passing. That status is caught where the base call sends
    // it: the client's errors answered as the registry's own refusals, with ErrorInfo
    // (baseRefusal), the others with the request id; each counted and logged with the status sent
    // (withOnCancel counted them all as cancelled by the client), a deadline passed ABORTED.
    const base = call as grpc.ServerInterceptingCallInterface;
    const sendStatus = base.sendStatus.bind(base);
    base.sendStatus = (status) => {
      if (ending) return sendStatus(status); // ours, through the responder: accounted for there
      const refusal = this.baseRefusal(status, scope?.requestId ?? randomUUID());
      if (!refusal) {
        const answered = withRequestId(status, scope);
        // The registry's own DEADLINE_EXCEEDED (REQUEST_TIMEOUT) goes through the responder: here it is the client's grpc-timeout.
        end({ status: answered.code, ...(answered.code === grpc.status.DEADLINE_EXCEEDED ? { deadlinePassed: true as const } : {}) });
        return sendStatus({ ...answered, metadata: answered.metadata ?? null });
      }
      refused = refusal.reason;
      if (scope) scope.errorCode = refusal.reason;
      end({ status: refusal.status.code, refusal: refusal.reason });
      sendStatus(refusal.status);
    };
    return intercepting;
  };

  /**
   * The registry's answer to a status grpc-js sent on its own (bare: no ErrorInfo, counted as an
   * error of the server), when it is the client's error; else undefined. grpc-js sends them on
   * its base call (see the interceptor) or, for the count of request messages, through the
   * interceptor's responder.
   */
  private baseRefusal(status: StatusAnswer, requestId: string): Refused | undefined {
    if (status.metadata) return undefined;
    const details = status.details ?? '';
    const size = status.code === grpc.status.RESOURCE_EXHAUSTED ? GRPC_TOO_LARGE.exec(details) : null;
    if (size) return tooLarge(size[1], this.core.config.maxBodyBytes, requestId);
    if (status.code === grpc.status.INTERNAL && details === GRPC_NOT_DECOMPRESSED) {
      return invalidArgument('PARSE_ERROR', 'The request message does not decompress with the grpc-encoding it names: send it compressed with that encoding, or uncompressed.', requestId);
    }
    const count = status.code === grpc.status.UNIMPLEMENTED ? GRPC_MESSAGE_COUNT.exec(details) : null;
    if (count) {
      return invalidArgument(
        'INVALID_REQUEST',
        `The call carried ${count[1] === 'no' ? 'no request message' : 'more than one request message'}: each A2A method takes exactly one. Send it in a POST, then end the stream, as gRPC clients do for a unary or server-streaming call.`,
        requestId,
      );
    }
    const encoding = status.code === grpc.status.UNIMPLEMENTED ? GRPC_UNSUPPORTED_ENCODING.exec(details) : null;
    if (encoding) {
      // As the HTTP doors refuse a Content-Encoding they do not take (415, UNSUPPORTED_ENCODING).
      return {
        reason: 'UNSUPPORTED_ENCODING',
        status: detailedStatus(
          grpc.status.UNIMPLEMENTED,
          `The request message is compressed with grpc-encoding ${quoted(encoding[1]!)}, which this server does not take: send it with gzip or deflate, or uncompressed (identity).`,
          'UNSUPPORTED_ENCODING',
          requestId,
          { 'grpc-accept-encoding': 'identity,deflate,gzip' },
        ),
      };
    }
    const timeout = status.code === grpc.status.INTERNAL ? GRPC_BAD_TIMEOUT.exec(details) : null;
    if (timeout) {
      return invalidArgument(
        'INVALID_REQUEST',
        `grpc-timeout ${quoted(timeout[1]!)} is no gRPC timeout: send up to 8 digits and a unit (H, M, S, m, u or n), e.g. "30S", or leave it out.`,
        requestId,
      );
    }
    return undefined;
  }

  /**
   * The SDK's service implementation with every method run inside its call's request scope, so
   * the executor sees the client address and whether the call streams.
   */
  scoped<T extends grpc.UntypedServiceImplementation>(implementation: T): T {
    const wrapped: grpc.UntypedServiceImplementation = {};
    for (const [name, handler] of Object.entries(implementation)) {
      const run = handler as (call: { metadata: grpc.Metadata }, ...rest: unknown[]) => unknown;
      wrapped[name] = ((call: { metadata: grpc.Metadata }, ...rest: unknown[]) => {
        const admitted = this.calls.get(call.metadata);
        if (!admitted) return run.call(implementation, call, ...rest);
        if (admitted.scope.streaming) cutIfNotRead(call as grpc.ServerWritableStream<unknown, unknown>, admitted);
        return runInScope(admitted.scope, () => run.call(implementation, call, ...rest));
      }) as grpc.UntypedHandleCall;
    }
    return wrapped as T;
  }

  /**
   * At shutdown: ends the calls whose request has not arrived in full (UNAVAILABLE, to be sent
   * again), so closing waits only for calls that run.
   */
  endUnarrived(): void {
    for (const cutShort of [...this.arriving]) cutShort(shuttingDown);
  }

  /**
   * The connection `session` reached its age (connection-age.ts): its watch streams end now, to
   * be resumed (UNAVAILABLE, CONNECTION_AGED), rather than be cut at the grace's end. Its other
   * calls finish within the grace.
   */
  connectionAged(session: object): void {
    for (const endStream of [...(this.streamsBySession.get(session) ?? [])]) endStream();
  }

  /**
   * Has the stream of `call` end, to be resumed, when its connection ages, if it follows a watch
   * then (a streamed search ends on its own, within the grace); returns the untracking function.
   */
  private trackStream(call: grpc.ServerInterceptingCallInterface, scope: RequestScope, closed: AbortController): (() => void) | undefined {
    const session = http2StreamOf(call)?.session;
    if (!session) return undefined;
    let streams = this.streamsBySession.get(session);
    if (!streams) this.streamsBySession.set(session, (streams = new Set()));
    const endStream = () => {
      if (!scope.followsWatch) return;
      // The stream's run stops; the SDK's OK then becomes UNAVAILABLE with this (answerFor).
      scope.watchStreamEnd ??= { reason: CONNECTION_AGED, message: CONNECTION_AGED_MESSAGE };
      closed.abort(CALL_ENDED);
    };
    streams.add(endStream);
    return () => streams.delete(endStream);
  }

  /**
   * A grpc.health.v1 call (Check, List, Watch), counted in registry_requests_total under its
   * method path, as every other call on the port: uncounted, a dashboard of the gRPC port missed
   * its load balancers' probes, often most of its calls. It is not logged: a probe, as /readyz.
   *
   * A Watch is also counted among its client's streams (REGISTRY_MAX_STREAMS_PER_CLIENT) as an
   * SSE stream or an A2A server stream is, and refused RESOURCE_EXHAUSTED (TOO_MANY_STREAMS) past
   * the cap; nothing else of admission applies, as to Check (no request budget, no token, no
   * version). A Watch never ends by itself and holds its connection, its HTTP/2 stream and a share
   * of the readiness poll's sends: uncounted, one client could open 100 per connection on as many
   * connections as REGISTRY_MAX_CONNECTIONS allows.
   */
  private healthCall(call: grpc.ServerInterceptingCallInterface, path: string, watch: boolean): grpc.ServerInterceptingCall {
    const started = process.hrtime.bigint();
    let slot: StreamSlot | undefined;
    let ending: Ending | undefined;
    let refused: string | undefined;
    const end = (how: Ending) => {
      if (ending) return;
      ending = how;
      slot?.release();
      this.core.metrics.countCall('grpc', HEALTH_METHODS.has(path) ? path : 'other', undefined, endingOutcome(how, undefined), started);
    };
    const listener = new grpc.ServerListenerBuilder()
      .withOnReceiveMetadata((metadata, next) => {
        if (!watch) return next(metadata);
        const address = clientAddress(intercepting.getConnectionInfo().remoteAddress, metadata.get('x-forwarded-for').map(String), this.trust);
        const opened = this.core.abuse.openStream(address);
        if ('reason' in opened) {
          const incoming = metadataText(metadata, 'x-request-id');
          const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
          // In the request log as every other refused call (an A2A stream refused by the same cap
          // is): a client held back by it was not seen there. An admitted Watch is a probe, as
          // /readyz is, and is not logged.
          this.core.log.info(
            { requestId, grpc: path, status: grpc.status[grpc.status.RESOURCE_EXHAUSTED], method: 'Watch', errorCode: opened.reason, durationMs: Math.round((Number(process.hrtime.bigint() - started) / 1e6) * 100) / 100 },
            'request',
          );
          refused = opened.reason;
          return intercepting.sendStatus(limitRefusal(opened, requestId).status);
        }
        if (ending) return opened.release();
        slot = opened;
        next(metadata);
      })
      // After every status sent too (by then counted), and for a client gone first, or its deadline passed: a Watch's place is given back.
      .withOnCancel(() => end({ status: grpc.status.CANCELLED }))
      .build();
    const responder = new grpc.ResponderBuilder()
      .withStart((next) => next(listener))
      .withSendStatus((status, next) => {
        end({ status: status.code ?? grpc.status.UNKNOWN, refusal: refused });
        next(status);
      })
      .build();
    // What grpc-js ends on the base call itself, unseen by the responder (see the interceptor),
    // reaches withOnCancel: ABORTED, as is right for the one a probe meets, its own timeout passing.
    const intercepting = new grpc.ServerInterceptingCall(call, responder);
    return intercepting;
  }

  /** The caller the guard admitted for a call, by its metadata (authentication runs once per call). */
  callerOf(metadata: grpc.Metadata): Caller | undefined {
    return this.calls.get(metadata)?.caller;
  }

  /**
   * The checks on the metadata, in the HTTP door's order: request rate, stream cap, version,
   * access. The negotiated Major.Minor is written back into a2a-version, which the SDK matches
   * exactly (and reads as 0.3 when absent). A stream's place is returned even with a refusal, so
   * the caller releases it. `path`: the method's, /package.Service/Method.
   */
  private async admit(scope: RequestScope, metadata: grpc.Metadata, path: string): Promise<Verdict> {
    const address = scope.clientAddress ?? 'unknown';
    const authorization = metadataText(metadata, 'authorization')?.trim();
    const limited = await this.core.abuse.admitRequest(address, authorization, scope.requestId);
    if (limited) return { refused: limitRefusal(limited, scope.requestId) };
    if (path === UNKNOWN_METHOD_PATH) return { refused: methodNotFound(scope.method ?? '', scope.requestId) };
    let slot: StreamSlot | undefined;
    if (scope.streaming) {
      const opened = this.core.abuse.openStream(address);
      if ('reason' in opened) return { refused: limitRefusal(opened, scope.requestId) };
      slot = opened;
    }
    const negotiated = this.negotiate(path, metadata);
    if ('error' in negotiated) {
      const { error } = negotiated;
      const status = { code: grpcStatusFor(error), details: error.message, metadata: statusMetadata(scope.requestId, {}, buildGrpcErrorMetadata(grpc.Metadata, error)) };
      return { refused: { reason: error.reason, status }, slot };
    }
    metadata.set(VERSION_KEY, negotiated.version);
    // Every value, as the HTTP doors pass them (every-authorization.ts): more than one is refused.
    // Trimmed, as HTTP/1.1 trims a header's value (field-whitespace.ts keeps such values on HTTP/2).
    const authorizations = metadata.get('authorization').filter((value): value is string => typeof value === 'string').map((value) => value.trim());
    const access = admitCaller(this.core.authenticator, authorizations, { publicRead: this.core.config.publicRead });
    if (!access.admitted) return { refused: accessRefusal(access.refusal, scope.requestId), slot };
    return { caller: access.caller, slot };
  }

  /**
   * The call's version: what a2a-version asks (every value, joined as HTTP joins a repeated
   * header: two that disagree are refused, versions.ts), else the service's; refused when it is
   * not one the service called serves (see the constructor).
   */
  private negotiate(path: string, metadata: grpc.Metadata): ReturnType<typeof negotiate> {
    const service = path.slice(1, path.indexOf('/', 1));
    const serviceVersion = this.serviceVersions.get(service);
    const sent = metadata.get(VERSION_KEY).filter((value): value is string => typeof value === 'string').map((value) => value.trim()).filter((value) => value !== '');
    const asked = (sent.length > 0 ? oneVersion(sent.join(', ')) : undefined) ?? serviceVersion;
    if (!serviceVersion) return negotiate('GRPC', asked, this.versions);
    // The service's version first: a refusal's "send A2A-Version: x" names the one it serves.
    const negotiated = negotiate('GRPC', asked, [serviceVersion, ...this.versions.filter((version) => version !== serviceVersion)]);
    if ('error' in negotiated || negotiated.version === serviceVersion) return negotiated;
    const right = [...this.serviceVersions].find(([, version]) => version === negotiated.version)?.[0] ?? `the v${negotiated.version} service`;
    const requested = asked!.slice(0, 32);
    return {
      error: new VersionNotSupportedError({
        message: `A2A-Version "${requested}" is not what ${service} serves: it is the A2A v${serviceVersion} service. A v${negotiated.version} client calls ${right}; a v${serviceVersion} client sends "A2A-Version: ${serviceVersion}" (or none) to ${service}.`,
        metadata: { requestedVersion: requested, supportedVersions: serviceVersion },
      }),
    };
  }

  /** What is wrong with a decoded request message, as the HTTP door's body and shape checks see it. */
  private messageProblem(path: string, message: unknown, requestId: string): Refused | undefined {
    // The SDK (and JSON.stringify when the task is stored) recurse through data parts and
    // metadata: a request nested a few thousand levels deep would overflow the stack there (and
    // past a few thousand, already in the decoder: undecodable.ts).
    const limit = this.core.config.hardening.maxJsonDepth;
    const tooDeep = `The request nests data deeper than ${limit} levels (REGISTRY_MAX_JSON_DEPTH). Documents and requests are a few levels deep; flatten the data.`;
    if (message instanceof UndecodableRequest) {
      if (message.reason === 'TOO_DEEP') return invalidArgument('TOO_DEEP', tooDeep, requestId);
      return invalidArgument('PARSE_ERROR', `The request message is not the protobuf message ${path} takes (${message.cause}): send it encoded as the A2A .proto defines it.`, requestId);
    }
    if (valueNestsDeeperThan(message, limit)) return invalidArgument('TOO_DEEP', tooDeep, requestId);
    if (SEND_METHODS.test(path) && path.startsWith(LEGACY_SERVICE_PATH)) {
      // Before the SDK's v0.3 reader, which refuses these naming no field (v1.0's are the request handler's).
      const missing = missingLegacyGrpcMessageIn(message);
      if (missing) return refusedAsTheSdkWould(missing, requestId);
    }
    // Before the SDK's v0.3 reader too, which said "Invalid or missing task ID in: ..." naming no field and no form.
    const misnamed = legacyNameProblem(path, message);
    if (misnamed) return refusedAsTheSdkWould(misnamed, requestId);
    if (SEND_METHODS.test(path)) {
      // Told as the service's clients write parts (operations/part-words.ts): a v0.3 client was shown v1.0's JSON.
      const legacy = path.startsWith(LEGACY_SERVICE_PATH);
      const words = partWords(legacy ? 'v0.3' : 'v1.0', 'protobuf');
      const parts = messageParts(message);
      if (parts?.length === 0) return invalidArgument('INVALID_PARAMS', `The message has no parts: ${words.needsAPart}.`, requestId);
      // Before the SDK's v0.3 reader, which said "Invalid part type" ("Invalid file part type"), naming neither the part nor what it lacks.
      const empty = legacy && parts ? parts.findIndex(isEmptyLegacyPart) : -1;
      if (empty >= 0) return invalidArgument('INVALID_PARAMS', words.emptyPart(empty), requestId);
    }
    return undefined;
  }

  /**
   * The status a call ends with, as the HTTP doors would answer it:
   * - storage unavailable (the executor named it in the scope; the SDK, which has no gRPC status
   *   for the registry's own error, says UNKNOWN) is UNAVAILABLE with its message, which says
   *   what is wrong, a `retry-after` trailer and google.rpc.ErrorInfo, as HTTP says 503; a
   *   watch's renewal over the write budget (RATE_LIMITED, named in the scope by the request
   *   handler with its retry time) likewise RESOURCE_EXHAUSTED, as HTTP says 429;
   * - a watch stream ended while its watch runs on (named in the scope by the request handler):
   *   by the shutdown, UNAVAILABLE SHUTTING_DOWN; handed over to another replica, UNAVAILABLE
   *   WATCH_MOVED; its connection aged (connectionAged), UNAVAILABLE CONNECTION_AGED; stopped
   *   after an internal failure, to run again after its back-off, UNAVAILABLE WATCH_INTERRUPTED; with when
   *   to resume: the SDK's OK told the client the stream was complete, where an SSE stream's end
   *   is what makes its client reconnect;
   * - the SDK answers an unexpected exception with UNKNOWN and the exception's message ("Maximum
   *   call stack size exceeded", a database error): that tells an attacker what broke. Such
   *   answers (and INTERNAL ones) get a generic message, as on the HTTP doors; the log keeps it.
   */
  private answerFor(status: StatusAnswer, scope: RequestScope | undefined): StatusAnswer {
    const resume = status.code === grpc.status.OK ? scope?.watchStreamEnd : undefined;
    if (resume && scope) {
      scope.errorCode = resume.reason;
      const seconds = resume.retryAfterSeconds ?? (resume.reason === SHUTTING_DOWN ? SHUTDOWN_RETRY_SECONDS : RESUME_AT_ONCE_SECONDS);
      return retryLater(grpc.status.UNAVAILABLE, resume.message, resume.reason, seconds, scope.requestId);
    }
    const named = retryNamedIn(scope);
    if (status.code === grpc.status.UNKNOWN && named !== undefined && scope) {
      const limited = named.reason === RATE_LIMITED_REASON;
      const details = status.details ?? (limited ? 'Too many writes. Retry later.' : 'Storage is unavailable.');
      return retryLater(limited ? grpc.status.RESOURCE_EXHAUSTED : grpc.status.UNAVAILABLE, details, named.reason, named.seconds, scope.requestId);
    }
    if (status.code !== grpc.status.UNKNOWN && status.code !== grpc.status.INTERNAL) return withRequestId(status, scope);
    // The message asks to report the request id: it comes as a trailer (an answer that is only
    // a status sends no headers), with the reason in an ErrorInfo, as on the other bindings.
    const internal = detailedStatus(grpc.status.INTERNAL, INTERNAL_MESSAGE, 'INTERNAL', scope?.requestId ?? randomUUID());
    if (status.details === INTERNAL_MESSAGE) return internal; // ours, already logged
    this.core.log.error({ requestId: scope?.requestId, method: scope?.method, details: status.details }, 'gRPC call failed with an internal error');
    return internal;
  }

  private account(path: string, scope: RequestScope | undefined, how: Ending, started: bigint): void {
    const statusName = grpc.status[how.status] ?? 'UNKNOWN';
    // Told once for the metrics and the log line: the log read the code the scope named only, and
    // an error the handler answered (GetTask's NOT_FOUND, an INTERNAL) was logged with none.
    const outcome = callEndedOutcome(scope, endingOutcome(how, scope));
    // Unknown methods under one label, as JSON-RPC counts them: a label per name sent would grow without bound.
    const unknown = path === UNKNOWN_METHOD_PATH;
    this.core.metrics.countCall('grpc', unknown ? 'other' : path, scope, outcome, started);
    this.core.log.info(
      {
        requestId: scope?.requestId,
        grpc: unknown ? scope?.method : path,
        status: statusName,
        method: scope?.method,
        operation: scope?.operation,
        taskState: scope?.taskState,
        errorCode: outcome.code,
        durationMs: Math.round((Number(process.hrtime.bigint() - started) / 1e6) * 100) / 100,
      },
      'request',
    );
  }
}
