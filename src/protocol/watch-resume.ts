/**
 * How a client resumes a watch without losing events: it says the last event it has, as the
 * SSE standard has a reconnecting client say it (the `Last-Event-ID` request header; on gRPC, a
 * metadata key of the same name), and SubscribeToTask answers the events after it, or one
 * `resync` when the watch no longer keeps them (Watch.eventsAfter). A client that does not say
 * is taken to have none of the watch's events: it is sent every event the watch still keeps
 * when they reach back to its first one, else a `resync`; each event carries its `seq`, so the
 * client skips those it has (at least once, never silently nothing).
 *
 * The registry cannot know what reached a client otherwise: an event written to a connection
 * that died unnoticed counts as sent, and a watch may have several subscribers. It used to keep
 * one "last event sent" per watch and resumed from there, so a second subscriber, or a client
 * whose connection had died, was told it had missed nothing.
 *
 * On SSE, each watch event's frame carries its `seq` as the frame's `id:` line (watchEventIds),
 * so an SSE client library that keeps the last event id has the number to send.
 */
import { STATE_HEADERS_KEY, type ServerCallContext } from '@a2a-js/sdk/server';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { RequestHandler, Response } from 'express';
import { isObject } from '../lib/json.js';
import { currentScope } from '../observability/request-scope.js';
import { WATCH_EVENT_ARTIFACT } from '../operations/executor.js';
import type { Watch } from '../subscriptions/watch-hub.js';

/** The request header (HTTP) and metadata key (gRPC) a resuming client names its last event in. */
export const LAST_EVENT_ID = 'Last-Event-ID';

/** Longest number taken: more digits than any seq a watch reaches (and than a double holds exactly). */
const SEQ = /^\d{1,15}$/;

/**
 * The last event a client resuming `watch` has, from its Last-Event-ID (0 when it sends none, or
 * an empty one: the SSE standard's "no last event id"). Refuses one that is no event number, or
 * past the watch's last event (no event of this watch: another watch's, or made up).
 */
export function resumeAfter(context: ServerCallContext, watch: Watch): number {
  const headers = context.state.get(STATE_HEADERS_KEY);
  const sent = isObject(headers) ? headers[LAST_EVENT_ID.toLowerCase()] : undefined;
  const value = (Array.isArray(sent) ? sent.join(', ') : typeof sent === 'string' ? sent : '').trim();
  if (value === '') return 0;
  if (!SEQ.test(value)) {
    throw new RequestMalformedError(
      `${LAST_EVENT_ID} must be the seq of the last watch event you received (a whole number: each event's "seq", and the "id:" line of its SSE frame); got ${JSON.stringify(value.slice(0, 64))}. Leave it out to be sent every event the watch still keeps.`,
    );
  }
  const after = Number(value);
  if (after > watch.lastSeq) {
    throw new RequestMalformedError(
      `${LAST_EVENT_ID} ${after} is past the last event of watch ${watch.id} (seq ${watch.lastSeq}): it is no event this watch sent. Send the seq of the last event you received from this watch, or leave the header out to be sent every event it still keeps.`,
    );
  }
  return after;
}

/**
 * Gives each watch event's SSE frame an `id:` line with its seq. The SDK writes one frame per
 * write (`data: <JSON>\n\n`, JSON-RPC and HTTP+JSON, v1.0 and v0.3 alike); a frame is a watch
 * event's when its artifact is one, whatever else its text holds. SSE clients that do not use
 * ids skip the line (the SDKs' parsers read `data:` and `event:` only). Mounted after the request
 * scope, which says whether the request streams.
 */
export function watchEventIds(): RequestHandler {
  return (_req, res, next) => {
    if (!currentScope()?.streaming) return next();
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    res.write = ((chunk: unknown, ...rest: unknown[]): boolean => {
      const seq = typeof chunk === 'string' ? frameSeq(chunk) : undefined;
      return write(seq === undefined ? chunk : `id: ${seq}\n${chunk as string}`, ...rest);
    }) as Response['write'];
    next();
  };
}

const DATA = 'data: ';

/** The seq of the watch event a frame carries, or undefined when it carries none. */
function frameSeq(frame: string): number | undefined {
  // Cheap test first: only a frame naming the artifact is parsed.
  if (!frame.startsWith(DATA) || !frame.includes(`"${WATCH_EVENT_ARTIFACT}"`)) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(frame.slice(DATA.length));
  } catch {
    return undefined;
  }
  // JSON-RPC wraps the event in `result`; v1.0 names it `artifactUpdate`, v0.3 says `"kind": "artifact-update"`.
  const event = isObject(body) && isObject(body.result) ? body.result : body;
  const update = !isObject(event) ? undefined : isObject(event.artifactUpdate) ? event.artifactUpdate : event.kind === 'artifact-update' ? event : undefined;
  const artifact = update?.artifact;
  if (!isObject(artifact) || artifact.name !== WATCH_EVENT_ARTIFACT || !Array.isArray(artifact.parts)) return undefined;
  for (const part of artifact.parts) {
    if (isObject(part) && isObject(part.data) && Number.isSafeInteger(part.data.seq)) return part.data.seq as number;
  }
  return undefined;
}
