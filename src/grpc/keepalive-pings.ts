/**
 * HTTP/2 PINGs on the gRPC port, so that a connection whose client vanished without a word (its
 * network lost, its machine off: no FIN, no RST) is found and closed. grpc-js's server sends none
 * unless told, and a watch stream (SendStreamingMessage with {"watch"}, SubscribeToTask) can go
 * minutes without an event: nothing was written on such a connection, so nothing ever failed, and
 * it held its streams (their places among REGISTRY_MAX_STREAMS_PER_CLIENT, the watch's delivery to
 * them) for good. On the HTTP port the SSE heartbeat is what finds such a client (a write to it
 * fails in the end); the PING goes at the same interval, REGISTRY_SSE_HEARTBEAT_SECONDS, and a
 * connection that has not answered within as long again is closed, its calls ending as cancelled
 * (the watch runs on, for SubscribeToTask). The PINGs also keep a quiet connection from the idle
 * timeout of a TCP load balancer in front. gRPC clients answer a server's PINGs whatever their
 * rate (only servers police PINGs); a connection with no call open is closed sooner anyway
 * (connection-limits.ts).
 */

/** The grpc.Server options sending a PING every `intervalMs` and closing a connection that leaves one unanswered as long. */
export const keepalivePingOptions = (intervalMs: number) => ({ 'grpc.keepalive_time_ms': intervalMs, 'grpc.keepalive_timeout_ms': intervalMs });
