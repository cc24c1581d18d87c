/**
 * The gRPC door's server (see grpc-door.ts): the SDK's gRPC service, plus its v0.3 compatibility
 * service (package a2a.v1, which v0.3 clients call), both over the same request handler as the
 * JSON-RPC and HTTP+JSON bindings (protocol/request-handler.ts): same executor, operations, task
 * store, authentication, limits and metrics; and the standard health service (health.ts). The
 * call guard (call-guard.ts) gives every call the request scope, admission and accounting the
 * HTTP doors give theirs.
 *
 * It binds before the card is built, so the card advertises the address actually listened on:
 * PUBLIC_GRPC_URL, or PUBLIC_URL's host with that port. Closing lets calls in flight (streams
 * included) finish, up to the same grace period as HTTP, then cuts what is left; a call whose
 * request has not arrived is ended at once (call-guard.ts).
 */
import * as grpc from '@grpc/grpc-js';
import { A2AService, grpcService } from '@a2a-js/sdk/server/grpc';
import { LegacyA2AService, legacyGrpcService } from '@a2a-js/sdk/compat/v0_3/server/grpc';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { service as healthService } from 'grpc-health-check';
import type { RegistryCore } from '../composition/build-registry.js';
import type { CardInterface, OpenedDoor } from '../composition/door.js';
import type { GrpcConfig } from '../config/config.js';
import { untenantedContextBuilder } from '../protocol/call-context.js';
import { a2aRequestHandler } from '../protocol/request-handler.js';
import { CallGuard } from './call-guard.js';
import { grpcUserBuilder } from './caller.js';
import { keepEveryAuthorization } from './every-authorization.js';
import { withExactTimestamps } from './exact-timestamps.js';
import { keepFieldsWithWhitespace } from './field-whitespace.js';
import { idleConnectionOption, limitConnections } from './connection-limits.js';
import { connectionAgeOptions, onConnectionAged } from './connection-age.js';
import { grpcBindError, hostPort } from './bind-error.js';
import { addHealthService } from './health.js';
import { keepalivePingOptions } from './keepalive-pings.js';
import { readingTaskConfigNames } from './legacy-names.js';
import { limitHeaderLists } from './metadata-size.js';
import { decodingTolerantly } from './undecodable.js';
import { methodPaths, routeUnknownMethods } from './unknown-methods.js';

/** The A2A services served, by their full names (the health service answers for them): v1.0's, v0.3's. */
const V1_SERVICE = 'lf.a2a.v1.A2AService';
const V03_SERVICE = 'a2a.v1.A2AService';
const A2A_SERVICES = [V1_SERVICE, V03_SERVICE];

/**
 * Binds `host`:`port`; a failure says what to change (bind-error.ts). A port in use was mostly found
 * before storage opened (composition/start-checks.ts probes it): found here, it was taken since.
 */
function bind(server: grpc.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) =>
    server.bindAsync(hostPort(host, port), grpc.ServerCredentials.createInsecure(), (err, bound) => {
      if (err) reject(grpcBindError(host, port, err.message));
      else resolve(bound);
    }),
  );
}

/**
 * Calls one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS; Node's
 * default is unbounded): an HTTP/1.1 connection carries one request at a time, and 100 is what
 * RFC 9113 asks a server to allow at least. With REGISTRY_MAX_CONNECTIONS on this port too, the
 * calls a client can keep open (each waiting for its request at most REGISTRY_REQUEST_TIMEOUT_SECONDS)
 * are bounded.
 */
const MAX_STREAMS_PER_CONNECTION = 100;

/** The A2A versions served over gRPC: v1.0 and the v0.3 compatibility service. */
const GRPC_VERSIONS = ['1.0', '0.3'];

/** The gRPC interfaces the card lists, one per version, at one address. */
const grpcInterfaces = (url: string): CardInterface[] => GRPC_VERSIONS.map((protocolVersion) => ({ url, protocolBinding: 'GRPC', protocolVersion }));

/** Binds the gRPC server; it answers once the door's serve() has added the services. */
export async function openGrpcServer(core: RegistryCore, settings: GrpcConfig): Promise<OpenedDoor> {
  // The service called fixes the version (see CallGuard): a2a-version naming the other is refused.
  const guard = new CallGuard(core, GRPC_VERSIONS, new Map([[V1_SERVICE, '1.0'], [V03_SERVICE, '0.3']]));
  const server = new grpc.Server({
    interceptors: [guard.interceptor],
    // The same bound on one request as the HTTP doors' body limit (protobuf is smaller than JSON).
    'grpc.max_receive_message_length': core.config.maxBodyBytes,
    'grpc.max_concurrent_streams': MAX_STREAMS_PER_CONNECTION,
    ...idleConnectionOption(core.config.connections),
    ...keepalivePingOptions(core.config.connections.sseHeartbeatMs),
    ...connectionAgeOptions(core.config.connections),
  });
  keepFieldsWithWhitespace(server, core.log);
  const port = await bind(server, core.config.host, settings.port).catch((err: unknown) => {
    server.forceShutdown();
    throw err;
  });
  keepEveryAuthorization(server, core.log);
  routeUnknownMethods(server, methodPaths([A2AService, LegacyA2AService, healthService]), core.log);
  limitConnections(server, core.config.connections, core.log);
  limitHeaderLists(server, core.log);
  onConnectionAged(server, core.config.connections, core.log, (session) => guard.connectionAged(session));
  const url = settings.publicUrl ?? `${new URL(core.config.publicUrl).hostname}:${port}`;
  core.log.info({ address: hostPort(core.config.host, port), url }, 'gRPC listening');

  let state: 'starting' | 'serving' | 'closed' = 'starting';
  let closing: Promise<void> | undefined;
  const notReady = () => (state === 'serving' ? undefined : `the gRPC server is ${state === 'starting' ? 'starting' : 'closed'}`);
  // Once served, the registry's readiness as GET /readyz tells it (DoorContext.notReady): from the
  // moment shutdown begins, while the watches close, before this server's own close. Asked of
  // the core and this server alone, it said SERVING then, where /readyz answered 503.
  let registryNotReady = async (): Promise<string | undefined> => notReady() ?? core.notReady();
  const health = addHealthService(server, A2A_SERVICES, () => registryNotReady(), core.log);
  return {
    interfaces: grpcInterfaces(url),
    serve(ctx) {
      registryNotReady = ctx.notReady;
      const requestHandler = a2aRequestHandler(ctx);
      const userBuilder = grpcUserBuilder(core.authenticator, (metadata) => guard.callerOf(metadata));
      server.addService(decodingTolerantly(withExactTimestamps(A2AService)), guard.scoped(grpcService({ requestHandler, userBuilder, contextBuilder: untenantedContextBuilder })));
      const legacyService = (handler: A2ARequestHandler) => legacyGrpcService({ requestHandler: handler, userBuilder, contextBuilder: untenantedContextBuilder });
      server.addService(decodingTolerantly(LegacyA2AService), guard.scoped(readingTaskConfigNames(legacyService, requestHandler)));
      state = 'serving';
    },
    notReady,
    close: (hurry?: AbortSignal) =>
      (closing ??= new Promise<void>((resolve) => {
        state = 'closed';
        // Health Watch streams never end by themselves: told NOT_SERVING and ended, or the graceful close waited for them.
        health.close();
        const force = setTimeout(() => server.forceShutdown(), core.config.connections.shutdownGraceMs).unref();
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
        guard.endUnarrived();
        // A second stop signal (it may have come already, while the watches closed): no more waiting.
        if (hurry?.aborted) server.forceShutdown();
        else hurry?.addEventListener('abort', () => server.forceShutdown(), { once: true });
      })),
  };
}
