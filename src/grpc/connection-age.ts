/**
 * A gRPC connection's age bound (REGISTRY_GRPC_MAX_CONNECTION_AGE_SECONDS), so that long-lived
 * clients rebalance: a channel keeps its one connection for as long as it lives, so behind a TCP
 * load balancer every call of a client went to the replica it first reached, and replicas added
 * later (or one back from a restart) got none of the old clients' calls.
 *
 * grpc-js sends the GOAWAY (grpc.max_connection_age_ms, give or take up to 10 % at random, either way, so connections
 * opened together do not all reconnect at once) and closes the connection once its calls in
 * flight are done, or after grpc.max_connection_age_grace_ms (REGISTRY_SHUTDOWN_GRACE_SECONDS,
 * the grace a shutdown gives them); the client's channel reconnects for its next call. A watch
 * stream never ends on its own: cut at the grace's end, its client read a transport error and the
 * registry counted it cancelled. So when grpc-js sends that GOAWAY (told by its opaque data,
 * "max_age"), the connection's watch streams end at once, as a handover's do: UNAVAILABLE,
 * CONNECTION_AGED, resume with SubscribeToTask (call-guard.ts).
 */
import type { ServerHttp2Session } from 'node:http2';
import type * as grpc from '@grpc/grpc-js';
import type { ConnectionLimits } from '../config/config.js';
import type { Logger } from '../observability/logger.js';
import { http2ServersOf } from './http2-servers.js';

/** What grpc-js's max-age GOAWAY carries as its opaque data (server.js, kMaxAge). */
const MAX_AGE_GOAWAY = Buffer.from('max_age');

/** The grpc.Server options bounding a connection's age (none when the bound is 0: off). */
export const connectionAgeOptions = (limits: ConnectionLimits) =>
  limits.grpcMaxConnectionAgeMs > 0 ? { 'grpc.max_connection_age_ms': limits.grpcMaxConnectionAgeMs, 'grpc.max_connection_age_grace_ms': limits.shutdownGraceMs } : {};

/** Calls `aged` with a connection when grpc-js sends it its max-age GOAWAY, before the GOAWAY goes. */
export function onConnectionAged(server: grpc.Server, limits: ConnectionLimits, log: Logger, aged: (session: ServerHttp2Session) => void): void {
  if (limits.grpcMaxConnectionAgeMs <= 0) return;
  const http2Servers = http2ServersOf(server);
  if (!http2Servers) {
    log.warn('the gRPC port cannot tell when a connection reaches REGISTRY_GRPC_MAX_CONNECTION_AGE_SECONDS (grpc-js internals changed): its watch streams are cut at the grace\'s end instead of being told to resume');
    return;
  }
  for (const http2Server of http2Servers) {
    http2Server.on('session', (session: ServerHttp2Session) => {
      const goaway = session.goaway.bind(session);
      session.goaway = (code?: number, lastStreamID?: number, opaqueData?: NodeJS.ArrayBufferView) => {
        if (opaqueData && Buffer.from(opaqueData.buffer, opaqueData.byteOffset, opaqueData.byteLength).equals(MAX_AGE_GOAWAY)) aged(session);
        goaway(code, lastStreamID, opaqueData);
      };
    });
  }
}
