/**
 * A message's own fields beside its parts and role (A2A 4.1.4): its ids (messageId, contextId,
 * taskId, referenceTaskIds), extensions and metadata.
 *
 * Their types, on the HTTP doors as sent (messageFieldProblem): ProtoJSON takes only a JSON string
 * for a string field and a list of strings for a repeated one, and the SDK's readers did not
 * refuse what is not: its v1.0 reader took String(value), so `"contextId": ["x", "y"]` started
 * the context "x,y", `"messageId": {"a": 1}` was kept as "[object Object]" and `"taskId": 5`
 * answered "Task not found: 5"; its v0.3 reader kept a number as a number (a task stored with
 * `"contextId": 5`, served so to every binding) and spread a string into a list (`"extensions":
 * "abc"` as ["a", "b", "c"]); a list that is no list was dropped. (The task methods' string
 * params are refused alike: integer-params.ts.) gRPC's protobuf has no other type to send.
 *
 * The ids' contents, on every binding, once the SDK has read them (requireMessageIds): the client
 * chooses them, and the registry stores and looks them up (a task's context, the task a message
 * continues), so they are held to one bound, MAX_CLIENT_ID_CHARS, and to printable text: a NUL
 * made PostgreSQL fail the write (an internal error), other control characters and a lone
 * surrogate (stored as U+FFFD) would be kept as something the client could not match again.
 */
import type { Message } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { LONE_SURROGATE, codePointLength } from '../lib/code-points.js';
import { isObject } from '../lib/json.js';

/** Characters (code points) of an id a client gives a message, its context, the task it continues or references. */
export const MAX_CLIENT_ID_CHARS = 1024;

/** What each id is, for the refusal's "how to fix". */
const ID_MEANINGS = {
  messageId: 'an id the client gives each message it sends, unique to it (a UUID, say)',
  contextId: 'the id of the context the message continues, as the registry answered it (leave it out to start a new one)',
  taskId: 'the id of the task the message continues, as the registry answered it (leave it out to start a new one)',
} as const;
const REFERENCE_MEANING = 'the ids of tasks the message refers to, as the registry answered them';
const EXTENSIONS_MEANING = 'the URIs of the extensions the message uses';

/** The snake_case name the SDK's v1.0 reader also takes for a camelCase one (v0.3's reads camelCase only). */
const SNAKE_CASE: Record<string, string> = { messageId: 'message_id', contextId: 'context_id', taskId: 'task_id', referenceTaskIds: 'reference_task_ids' };

/** What a JSON value is, as a refusal says it was found: "an object", "an array of 2", "the number 5". */
function found(value: unknown): string {
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  return `the ${typeof value} ${String(value).slice(0, 24)}`;
}

/** The refusal of `field` that is no string: what was found, and what the field is. */
function notAString(field: string, value: unknown, meaning: string): string {
  // A number or boolean meant as the id: quoting it is the fix.
  const quoted = typeof value === 'number' || typeof value === 'boolean' ? ` send it in quotes ("${String(value).slice(0, 24)}");` : '';
  return `${field} must be a string, not ${found(value)}:${quoted} it is ${meaning}.`;
}

/** The refusal of a repeated field that is no list of strings (the field, or its member, and what is wrong), or undefined. */
function listProblem(field: string, value: unknown, meaning: string, example: string): { field: string; text: string } | undefined {
  if (!Array.isArray(value)) return { field, text: `${field} must be a list of strings, not ${found(value)}: ${meaning}, e.g. ${example} (or leave it out).` };
  const at = value.findIndex((member) => typeof member !== 'string');
  return at < 0 ? undefined : { field: `${field}[${at}]`, text: notAString(`${field}[${at}]`, value[at], `one of ${meaning}`) };
}

/**
 * The first of `message`'s own fields (as sent over JSON) whose type is not A2A's, as the refusal
 * to answer, or undefined. `legacy`: a v0.3 message, whose reader takes the camelCase names only;
 * the v1.0 reader takes each snake_case name too, and the refusal names the field as sent.
 * Absent or null is fine (the ids are optional here; a missing messageId is message-required.ts's).
 * metadata is checked with the parts (request-guard.ts), as a part's and the request's are.
 */
export function messageFieldProblem(message: unknown, legacy: boolean): RequestMalformedError | undefined {
  if (!isObject(message)) return undefined; // a missing or non-object message is message-required.ts's
  const refusal = ({ field, text }: { field: string; text: string }) => new RequestMalformedError({ message: text, metadata: { field } });
  const spellings = (name: string): string[] => (legacy || SNAKE_CASE[name] === undefined ? [name] : [name, SNAKE_CASE[name]!]);
  // Absent and null alike: the readers take null as absent.
  const sent = (name: string): unknown => (Object.hasOwn(message, name) ? (message[name] ?? undefined) : undefined);
  for (const id of ['messageId', 'contextId', 'taskId'] as const) {
    for (const name of spellings(id)) {
      const value = sent(name);
      const field = `message.${name}`;
      if (value !== undefined && typeof value !== 'string') return refusal({ field, text: notAString(field, value, ID_MEANINGS[id]) });
    }
  }
  const lists: Array<[string, string, string]> = [
    ...spellings('referenceTaskIds').map((name): [string, string, string] => [name, REFERENCE_MEANING, '["<task id>"]']),
    ['extensions', EXTENSIONS_MEANING, '["https://example.com/extensions/v1"]'],
  ];
  for (const [name, meaning, example] of lists) {
    const value = sent(name);
    const problem = value === undefined ? undefined : listProblem(`message.${name}`, value, meaning, example);
    if (problem) return refusal(problem);
  }
  return undefined;
}

/** A C0 or C1 control character, DEL included (NUL too, which PostgreSQL refuses in text). */
const CONTROL = /\p{Cc}/u;

/** What is wrong with the client-chosen id `value` at `field`, or undefined. */
function clientIdProblem(field: string, value: string): string | undefined {
  const chars = codePointLength(value);
  if (chars > MAX_CLIENT_ID_CHARS) {
    return `${field} is ${chars.toLocaleString('en-US')} characters; an id is at most ${MAX_CLIENT_ID_CHARS.toLocaleString('en-US')}: send a shorter one (a UUID is 36).`;
  }
  const control = CONTROL.exec(value);
  if (control) {
    const code = `U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
    return `${field} holds the control character ${code} (at character ${codePointLength(value.slice(0, control.index)) + 1}): an id is printable text; send it without control characters.`;
  }
  if (LONE_SURROGATE.test(value)) return `${field} holds an unpaired surrogate (\\ud800-\\udfff alone), which is no Unicode character: fix the escape (a character beyond U+FFFF is a pair of them).`;
  return undefined;
}

/**
 * Throws invalid params (-32602, HTTP 400, INVALID_ARGUMENT) naming the field when one of the
 * message's ids is too long or holds what no id holds, on every binding. The ids are strings here
 * (the SDK's readers, after the HTTP doors' messageFieldProblem; gRPC's protobuf); what is not is
 * left alone.
 */
export function requireMessageIds(message: Message): void {
  const ids: Array<[string, unknown]> = [
    ['message.messageId', message.messageId],
    ['message.contextId', message.contextId],
    ['message.taskId', message.taskId],
    ...(Array.isArray(message.referenceTaskIds) ? message.referenceTaskIds : []).map((id, i): [string, unknown] => [`message.referenceTaskIds[${i}]`, id]),
  ];
  for (const [field, value] of ids) {
    const problem = typeof value === 'string' ? clientIdProblem(field, value) : undefined;
    if (problem) throw new RequestMalformedError({ message: problem, metadata: { field } });
  }
}
