/**
 * What the HTTP doors do with middleware (http/request-log.ts, http/rate-limit.ts,
 * protocol/request-guard.ts, http/security.ts, the metrics middleware), done for gRPC calls by
 * one server interceptor, with the same rules:
 * - a request scope (request id from x-request-id, method, whether it streams, the client
 *   address) that the executor reads for per-address limits and streaming;
 * - the per-address request limit, then the cap on concurrent streams, checked on the call's
 *   metadata before its message is read: RESOURCE_EXHAUSTED with the reason and retry delay in
 *   google.rpc.ErrorInfo (grpc-status-details-bin);
 * - the nesting depth of the decoded message (REGISTRY_MAX_JSON_DEPTH): INVALID_ARGUMENT;
 * - internal errors answered with a generic message, never the exception's;
 * - when the call ends (status sent or client gone): one count in registry_requests_total and
 *   its latency, one log line, and the stream's place given back.
 * The interceptor opens the scope; `scoped` runs the SDK's method handlers inside it (the
 * metadata object the handler receives is the one the interceptor saw, so it is the key).
 */
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { encodeGrpcStatusDetails, GRPC_STATUS_DETAILS_BIN } from '@a2a-js/sdk/errors/grpc';
import type { RegistryCore } from '../composition/build-registry.js';
import type { Refusal, StreamSlot } from '../http/rate-limit.js';
import { INTERNAL_MESSAGE } from '../http/security.js';
import { valueNestsDeeperThan } from '../lib/json-depth.js';
import { runInScope, type RequestScope } from '../observability/request-scope.js';
import { metadataText } from './caller.js';
import { clientAddress, compileTrust } from './client-address.js';
import { HEALTH_SERVICE_PREFIX } from './health.js';

const REQUEST_ID = /^[\w.-]{1,64}$/;

/** A status as the responder passes it on (grpc-js does not export its own name for it). */
type StatusAnswer = Pick<grpc.StatusObject, 'code' | 'details'> & { metadata?: grpc.Metadata | null };

/** How a call ended, for metrics and the log line. */
interface Ending {
  status: grpc.status;
  /** Set when the guard refused the call before the SDK saw it. */
  refusal?: Refusal['reason'] | 'TOO_DEEP';
}

/** A refusal as a gRPC status, with the reason and retry delay also in google.rpc.ErrorInfo. */
function refusalStatus(refusal: Refusal, requestId: string): grpc.StatusObject {
  const metadata = new grpc.Metadata();
  metadata.set('x-request-id', requestId);
  metadata.set('retry-after', String(refusal.retryAfterSeconds));
  const code = grpc.status.RESOURCE_EXHAUSTED;
  metadata.set(
    GRPC_STATUS_DETAILS_BIN,
    encodeGrpcStatusDetails(code, refusal.message, refusal.reason, { retryAfterSeconds: String(refusal.retryAfterSeconds) }),
  );
  return { code, details: refusal.message, metadata };
}

export class CallGuard {
  private readonly scopes = new WeakMap<grpc.Metadata, RequestScope>();
  private readonly trust: ReturnType<typeof compileTrust>;

  constructor(private readonly core: RegistryCore) {
    this.trust = compileTrust(core.config.hardening.trustProxy);
  }

  /**
   * The server interceptor: admits each A2A call, opens its scope, and accounts for it when it
   * ends. Health checks pass straight through, as GET /readyz does on HTTP.
   */
  readonly interceptor: grpc.ServerInterceptor = (method, call) => {
    if (method.path.startsWith(HEALTH_SERVICE_PREFIX)) return new grpc.ServerInterceptingCall(call);
    const started = process.hrtime.bigint();
    const streaming = method.responseStream;
    let scope: RequestScope | undefined;
    let slot: StreamSlot | undefined;
    let ending: Ending | undefined;
    let refused: Ending['refusal'];
    const end = (how: Ending) => {
      if (ending) return;
      ending = how;
      slot?.release();
      this.account(method.path, scope, how, started);
    };

    const listener = new grpc.ServerListenerBuilder()
      .withOnReceiveMetadata((metadata, next) => {
        const incoming = metadataText(metadata, 'x-request-id');
        const connection = intercepting.getConnectionInfo();
        scope = {
          requestId: incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID(),
          method: method.path.slice(method.path.lastIndexOf('/') + 1),
          streaming,
          clientAddress: clientAddress(connection.remoteAddress, metadata.get('x-forwarded-for').map(String), this.trust),
        };
        const admitted = scope;
        this.admit(admitted, metadataText(metadata, 'authorization')).then(
          (result) => {
            if (ending) return; // the client went away meanwhile
            if ('reason' in result) {
              admitted.errorCode = result.reason;
              refused = result.reason;
              intercepting.sendStatus(refusalStatus(result, admitted.requestId));
              return;
            }
            slot = result.slot;
            this.scopes.set(metadata, admitted);
            next(metadata);
          },
          (err: unknown) => {
            this.core.log.error({ err, method: method.path }, 'gRPC admission failed');
            intercepting.sendStatus({ code: grpc.status.INTERNAL, details: INTERNAL_MESSAGE });
          },
        );
      })
      .withOnReceiveMessage((message, next) => {
        // The SDK (and JSON.stringify when the task is stored) recurse through data parts and
        // metadata: a request nested a few thousand levels deep would overflow the stack there.
        const limit = this.core.config.hardening.maxJsonDepth;
        if (!valueNestsDeeperThan(message, limit)) return next(message);
        if (scope) scope.errorCode = 'TOO_DEEP';
        refused = 'TOO_DEEP';
        intercepting.sendStatus({
          code: grpc.status.INVALID_ARGUMENT,
          details: `The request nests data deeper than ${limit} levels (REGISTRY_MAX_JSON_DEPTH). Documents and requests are a few levels deep; flatten the data.`,
        });
      })
      // Also called after every status sent: ends calls the base call ended itself (deserialization, deadline).
      .withOnCancel(() => end({ status: grpc.status.CANCELLED }))
      .build();
    const responder = new grpc.ResponderBuilder()
      .withStart((next) => next(listener))
      .withSendMetadata((metadata, next) => {
        if (scope) metadata.set('x-request-id', scope.requestId);
        next(metadata);
      })
      .withSendStatus((status, next) => {
        const answered = refused ? status : this.withoutInternals(status, scope);
        end({ status: answered.code ?? grpc.status.UNKNOWN, refusal: refused });
        next(answered);
      })
      .build();
    const intercepting = new grpc.ServerInterceptingCall(call, responder);
    return intercepting;
  };

  /**
   * The SDK's service implementation with every method run inside its call's request scope, so
   * the executor sees the client address and whether the call streams.
   */
  scoped<T extends grpc.UntypedServiceImplementation>(implementation: T): T {
    const wrapped: grpc.UntypedServiceImplementation = {};
    for (const [name, handler] of Object.entries(implementation)) {
      const run = handler as (call: { metadata: grpc.Metadata }, ...rest: unknown[]) => unknown;
      wrapped[name] = ((call: { metadata: grpc.Metadata }, ...rest: unknown[]) => {
        const scope = this.scopes.get(call.metadata);
        return scope ? runInScope(scope, () => run.call(implementation, call, ...rest)) : run.call(implementation, call, ...rest);
      }) as grpc.UntypedHandleCall;
    }
    return wrapped as T;
  }

  /**
   * The SDK answers an unexpected exception with UNKNOWN and the exception's message ("Maximum
   * call stack size exceeded", a database error): that tells an attacker what broke. Such
   * answers (and INTERNAL ones) get a generic message, as on the HTTP doors; the log keeps it.
   */
  private withoutInternals(status: StatusAnswer, scope: RequestScope | undefined): StatusAnswer {
    if (status.code !== grpc.status.UNKNOWN && status.code !== grpc.status.INTERNAL) return status;
    if (status.details === INTERNAL_MESSAGE) return status; // ours, already logged
    this.core.log.error({ requestId: scope?.requestId, method: scope?.method, details: status.details }, 'gRPC call failed with an internal error');
    return { code: grpc.status.INTERNAL, details: INTERNAL_MESSAGE, metadata: null };
  }

  /** The same checks, in the same order, as the HTTP doors: request rate, then the stream cap. */
  private async admit(scope: RequestScope, authorization: string | undefined): Promise<Refusal | { slot?: StreamSlot }> {
    const address = scope.clientAddress ?? 'unknown';
    const limited = await this.core.abuse.admitRequest(address, authorization);
    if (limited) return limited;
    if (!scope.streaming) return {};
    const slot = this.core.abuse.openStream(address);
    return 'reason' in slot ? slot : { slot };
  }

  private account(path: string, scope: RequestScope | undefined, how: Ending, started: bigint): void {
    const statusName = grpc.status[how.status] ?? 'UNKNOWN';
    const fallback = how.refusal
      ? { outcome: 'REFUSED', code: how.refusal }
      : how.status === grpc.status.OK
        ? { outcome: 'OK', code: 'none' }
        : how.status === grpc.status.CANCELLED
          ? { outcome: 'ABORTED', code: 'none' }
          : { outcome: 'ERROR', code: statusName };
    this.core.metrics.countCall('grpc', path, scope, fallback, started);
    this.core.log.info(
      {
        requestId: scope?.requestId,
        grpc: path,
        status: statusName,
        method: scope?.method,
        operation: scope?.operation,
        taskState: scope?.taskState,
        errorCode: scope?.errorCode,
        durationMs: Math.round((Number(process.hrtime.bigint() - started) / 1e6) * 100) / 100,
      },
      'request',
    );
  }
}
