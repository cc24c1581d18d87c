/**
 * The HTTP port's connection limits on the gRPC port (REGISTRY_MAX_CONNECTIONS,
 * REGISTRY_HEADERS_TIMEOUT_SECONDS, REGISTRY_KEEP_ALIVE_TIMEOUT_SECONDS), so that a client cannot
 * take every connection the cap allows and keep it doing nothing: 1024 sockets that sent nothing
 * stayed open, and gRPC answered no one else.
 *
 * - Connections beyond the cap are closed at once (grpc-js's HTTP/2 servers, http2-servers.ts).
 * - A connection that has not sent the HTTP/2 connection preface (its first SETTINGS frame) within
 *   the headers timeout is destroyed, as the HTTP port closes a socket that sent no request
 *   headers by then. grpc-js's idle timer (below) and its keepalive PINGs (keepalive-pings.ts)
 *   close such a socket too, at the keep-alive timeout or at twice REGISTRY_SSE_HEARTBEAT_SECONDS;
 *   this closes it sooner wherever the headers timeout is the shortest (e.g. a keep-alive timeout
 *   of 65 s behind a load balancer, against the headers timeout's default 10 s).
 * - A connection with no call open for the keep-alive timeout is closed with a GOAWAY, as the HTTP
 *   port closes an idle keep-alive connection: grpc-js's own `grpc.max_connection_idle_ms`
 *   (idleConnectionOption), counted from the connection's start or its last call's end. A
 *   client's channel reconnects for its next call.
 */
import type { ServerHttp2Session } from 'node:http2';
import type * as grpc from '@grpc/grpc-js';
import type { ConnectionLimits } from '../config/config.js';
import type { Logger } from '../observability/logger.js';
import { http2ServersOf } from './http2-servers.js';

/** The grpc.Server option closing a connection with no call open for the keep-alive timeout. */
export const idleConnectionOption = (limits: ConnectionLimits) => ({ 'grpc.max_connection_idle_ms': limits.keepAliveTimeoutMs });

/** Caps the bound server's connections and destroys those that do not begin HTTP/2 in time. */
export function limitConnections(server: grpc.Server, limits: ConnectionLimits, log: Logger): void {
  const http2Servers = http2ServersOf(server);
  if (!http2Servers) {
    log.warn('the gRPC port cannot cap its connections nor close those that send no HTTP/2 preface (grpc-js internals changed): REGISTRY_MAX_CONNECTIONS and REGISTRY_HEADERS_TIMEOUT_SECONDS apply to the HTTP port only');
    return;
  }
  for (const http2Server of http2Servers) {
    http2Server.maxConnections = limits.maxConnections;
    http2Server.on('session', (session: ServerHttp2Session) => destroyWithoutPreface(session, limits.headersTimeoutMs));
  }
}

/**
 * Destroys the session unless the client's preface arrives within `timeoutMs`: the preface ends
 * with the client's SETTINGS frame, which Node reports as 'remoteSettings'.
 */
function destroyWithoutPreface(session: ServerHttp2Session, timeoutMs: number): void {
  const deadline = setTimeout(() => session.destroy(), timeoutMs).unref();
  const started = () => clearTimeout(deadline);
  session.once('remoteSettings', started);
  session.once('close', started);
}
