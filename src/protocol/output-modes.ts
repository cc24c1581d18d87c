/**
 * A message's configuration.acceptedOutputModes (A2A 1.0 SendMessageConfiguration: "media types
 * the client is prepared to accept for response parts. Agents SHOULD use this to tailor their
 * output"; v0.3 MessageSendConfiguration: "output MIME types the client is prepared to accept in
 * the response"). The registry answers in two media types, a data part (application/json, for
 * programs) and a text part (text/plain, a summary for people), and the SDK ignored the list: a
 * client that accepts only text/plain was sent the data parts too, and one that accepts neither
 * was answered as if it did.
 *
 * Now the answer to the request (the response, or each event of its stream) carries only the
 * parts of the types the client accepts; a list naming neither is refused before anything runs
 * with ContentTypeNotSupportedError (A2A 3.3.2: a media type "implied for an artifact is not
 * supported by the agent"; -32005, HTTP 400, INVALID_ARGUMENT). An empty list accepts anything.
 * The task as stored keeps every part: GetTask, SubscribeToTask and push notifications carry no
 * list of their own, and answer with both.
 */
import { Role, type Artifact, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ContentTypeNotSupportedError } from '@a2a-js/sdk/errors';
import { codePointPrefix } from '../lib/code-points.js';
import { meantMediaType } from '../validation/media-types.js';

/** What the registry answers in, each with the content case its parts have. */
const PRODUCED = [
  { mediaType: 'application/json', content: 'data', what: 'a data part, for programs' },
  { mediaType: 'text/plain', content: 'text', what: 'a text part, a summary for people' },
] as const;

type ProducedType = (typeof PRODUCED)[number]['mediaType'];

/** Which of the registry's media types an answer keeps; undefined keeps every part. */
export type AcceptedParts = ReadonlySet<ProducedType>;

/**
 * The media range a mode names ("text/plain; charset=utf-8" → "text/plain"), lower-cased, with
 * a bare name that clearly means one ("text", "json": what some A2A samples send, and cards'
 * modes say; validation/media-types.ts) read as that type.
 */
function mediaRange(mode: string): string {
  const semi = mode.indexOf(';');
  const range = (semi >= 0 ? mode.slice(0, semi) : mode).trim().toLowerCase();
  return range.includes('/') ? range : (meantMediaType(range) ?? range);
}

/** Whether a media range ("*\/*", "text/*", "text/plain") takes a media type. */
function takes(range: string, mediaType: string): boolean {
  if (range === '*/*' || range === mediaType) return true;
  return range.endsWith('/*') && mediaType.startsWith(range.slice(0, -1));
}

/**
 * The parts an answer keeps for `modes` (undefined: all of them), or throws
 * ContentTypeNotSupportedError naming the types the registry answers in.
 */
export function acceptedParts(modes: readonly string[] | undefined): AcceptedParts | undefined {
  if (modes === undefined || modes.length === 0) return undefined;
  const ranges = modes.map(mediaRange);
  const kept = new Set(PRODUCED.filter((type) => ranges.some((range) => takes(range, type.mediaType))).map((type) => type.mediaType));
  if (kept.size === PRODUCED.length) return undefined;
  if (kept.size > 0) return kept;
  const asked = JSON.stringify(modes.slice(0, 8).map((mode) => codePointPrefix(mode, 64)));
  const produced = PRODUCED.map((type) => `${type.mediaType} (${type.what})`).join(' and ');
  throw new ContentTypeNotSupportedError({
    message: `configuration.acceptedOutputModes ${asked} accepts none of the media types the registry answers in: ${produced}. Accept one of them, or both (an empty list accepts anything).`,
    metadata: { field: 'configuration.acceptedOutputModes', supportedMediaTypes: PRODUCED.map((type) => type.mediaType).join(', ') },
  });
}

/** The media type of a part the registry made: its mediaType, else what its content is. */
function typeOf(part: Part): string {
  if (part.mediaType) return mediaRange(part.mediaType);
  return PRODUCED.find((type) => type.content === part.content?.$case)?.mediaType ?? '';
}

const keptParts = (parts: readonly Part[], accepted: AcceptedParts): Part[] => parts.filter((part) => accepted.has(typeOf(part) as ProducedType));

/** An agent's message with the accepted parts; undefined when none is left (a message needs one). */
function tailoredMessage(message: Message, accepted: AcceptedParts): Message | undefined {
  const parts = keptParts(message.parts, accepted);
  if (parts.length === message.parts.length) return message;
  return parts.length > 0 ? { ...message, parts } : undefined;
}

/** An artifact with the accepted parts; undefined when none is left (an artifact needs one). */
function tailoredArtifact(artifact: Artifact, accepted: AcceptedParts): Artifact | undefined {
  const parts = keptParts(artifact.parts, accepted);
  if (parts.length === artifact.parts.length) return artifact;
  return parts.length > 0 ? { ...artifact, parts } : undefined;
}

/** A status with its message tailored; a message left with no part is dropped (a status need not have one). */
function tailoredStatus<S extends { message?: Message | undefined }>(status: S, accepted: AcceptedParts): S {
  if (!status.message) return status;
  return { ...status, message: tailoredMessage(status.message, accepted) };
}

/**
 * A task as the answer to one request: its artifacts, its status message and the agent's
 * messages in its history with the accepted parts only (the client's own messages as sent).
 * A copy: the task the store keeps is left whole.
 */
export function tailoredTask(task: Task, accepted: AcceptedParts | undefined): Task {
  if (!accepted) return task;
  return {
    ...task,
    status: task.status && tailoredStatus(task.status, accepted),
    artifacts: task.artifacts.map((artifact) => tailoredArtifact(artifact, accepted)).filter((artifact) => artifact !== undefined),
    history: task.history.map((message) => (message.role === Role.ROLE_AGENT ? (tailoredMessage(message, accepted) ?? message) : message)),
  };
}

/** The answer to SendMessage, a task or a message, tailored. */
export function tailoredResult<R extends Task | Message>(result: R, accepted: AcceptedParts | undefined): R {
  if (!accepted) return result;
  // A message with no accepted part stays whole: the answer cannot be an empty message.
  return ('messageId' in result ? (tailoredMessage(result, accepted) ?? result) : tailoredTask(result, accepted)) as R;
}

/** One event of the answer's stream, tailored; undefined for an artifact update left with no part. */
export function tailoredEvent(event: StreamResponse, accepted: AcceptedParts | undefined): StreamResponse | undefined {
  const payload = event.payload;
  if (!accepted || !payload) return event;
  switch (payload.$case) {
    case 'task':
      return { payload: { $case: 'task', value: tailoredTask(payload.value, accepted) } };
    case 'message':
      return { payload: { $case: 'message', value: tailoredMessage(payload.value, accepted) ?? payload.value } };
    case 'statusUpdate': {
      const update = payload.value;
      return update.status ? { payload: { $case: 'statusUpdate', value: { ...update, status: tailoredStatus(update.status, accepted) } } } : event;
    }
    case 'artifactUpdate': {
      const update = payload.value;
      const artifact = update.artifact && tailoredArtifact(update.artifact, accepted);
      return artifact ? { payload: { $case: 'artifactUpdate', value: { ...update, artifact } } } : undefined;
    }
    default:
      return event;
  }
}
