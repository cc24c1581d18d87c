/**
 * A v0.3 streaming request (`message/stream`, `tasks/resubscribe`) refused with a JSON-RPC error
 * is answered as v0.3 defines the answer of those methods: HTTP 200, `text/event-stream`, its one
 * event the JSON-RPC error response (`event: error`), a SendStreamingMessageResponse as every
 * event of such a stream is (v0.3 3.3.1: "The server responds with an HTTP 200 OK status and a
 * Content-Type header of text/event-stream ... Each SSE data field contains a complete JSON-RPC
 * 2.0 Response object"; 7.2.1, whose union holds JSONRPCErrorResponse).
 *
 * The SDK answered a refusal before the stream's first event (and the registry's own guards
 * answered theirs) as a plain `application/json` body. v0.3 clients read nothing but an event
 * stream there: @a2a-js/sdk 0.3 threw "Invalid response Content-Type for SSE stream for
 * message/stream", a2a-python 0.3 (httpx-sse) fails alike, so the error's code and message
 * (invalid params naming the field, TaskNotFound, ContentTypeNotSupported) never reached the
 * caller. An answer with another HTTP status (401 credentials, 413, 415, 429 and 503 with
 * Retry-After) stays as it is: it is the transport's, and v0.3 clients read it as one.
 * v1.0 (SendStreamingMessage, SubscribeToTask) keeps its plain error answers.
 *
 * Mounted after the version is negotiated and before anything can refuse the request: it
 * rewrites the answer where it leaves, at res.end, so every refusal (the guards', the SDK's)
 * passes through it, whichever res.json wrapper sent it.
 */
import type { RequestHandler, Response } from 'express';
import { isObject } from '../lib/json.js';
import { isLegacyRequest } from './versions.js';

const LEGACY_STREAMING_METHODS = new Set(['message/stream', 'tasks/resubscribe']);

/** The JSON-RPC error response a chunk holds whole, or undefined (a result, not JSON, not a chunk of text). */
function errorResponseOf(chunk: unknown): Record<string, unknown> | undefined {
  const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : undefined;
  if (text === undefined) return undefined;
  try {
    const body: unknown = JSON.parse(text);
    return isObject(body) && body.jsonrpc === '2.0' && isObject(body.error) && !('result' in body) ? body : undefined;
  } catch {
    return undefined;
  }
}

export const legacyStreamErrorEvents: RequestHandler = (req, res, next) => {
  const method: unknown = isObject(req.body) ? req.body.method : undefined;
  if (typeof method !== 'string' || !LEGACY_STREAMING_METHODS.has(method) || !isLegacyRequest(req)) return next();
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    const error = !res.headersSent && res.statusCode === 200 ? errorResponseOf(chunk) : undefined;
    if (error === undefined) return end(chunk, ...rest);
    // The JSON answer's own length and validator describe bytes no longer sent.
    res.removeHeader('Content-Length');
    res.removeHeader('ETag');
    res.setHeader('Content-Type', 'text/event-stream');
    res.setHeader('Cache-Control', 'no-cache');
    // Written anew on one line: an SSE `data` field ends at a line break.
    return end(`event: error\ndata: ${JSON.stringify(error)}\n\n`, ...rest.filter((arg) => typeof arg === 'function'));
  }) as Response['end'];
  next();
};
