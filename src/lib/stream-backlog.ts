/**
 * How much of a stream may wait unsent for a client that does not read (SSE over HTTP, gRPC
 * server streams). The SDK writes each event as it comes and never waits for the transport to
 * drain, so without a bound a watch stream whose client stopped reading (but keeps its
 * connection open) holds every event of the watch's life in memory. Past the bound the stream is
 * cut (http/slow-readers.ts, grpc/call-guard.ts); a watch's client resumes with SubscribeToTask
 * (its missed events, or a `resync`). A client that reads is never near it: the kernel's socket
 * buffers (SSE) or the HTTP/2 window (gRPC) take the first of a burst, and a search stream is a
 * few dozen messages.
 */

/**
 * Bytes an SSE answer may have waiting in the process beyond what the socket took: several times
 * the largest finite stream (a search page of 100 hits, each up to a document's size, with its
 * text summaries), so a client on a slow link that does read is not cut.
 */
export const MAX_UNSENT_STREAM_BYTES = 8 * 1024 * 1024;

/**
 * Messages a gRPC server stream may have waiting beyond what the HTTP/2 stream took (grpc-js
 * queues them unserialised, so they are counted, not measured): a search stream is a few dozen.
 */
export const MAX_UNSENT_STREAM_MESSAGES = 64;

/** The reason logged and counted when a stream is cut for it. */
export const SLOW_READER = 'SLOW_READER';
