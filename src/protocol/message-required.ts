/**
 * A SendMessage (SendStreamingMessage) request's message and its messageId, both REQUIRED (A2A
 * 3.2.1, 4.1.4), said alike on every binding with the field in the error's ErrorInfo, as the
 * registry's other invalid-params refusals name theirs. The SDK refused them with "message is
 * required" (HTTP+JSON) or "message.messageId is required" and no field: a client could not
 * point at what to add, nor learn what a messageId is.
 */
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { isObject } from '../lib/json.js';

const MESSAGE_REQUIRED =
  'message is required: send one message, e.g. {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "weather"}]}}.';
const MESSAGE_ID_REQUIRED = 'message.messageId is required: an id the client gives each message it sends, unique to it (a UUID, say).';

/** The refusal of a request whose message, or its messageId, is missing; undefined when both are there. */
function missing(message: unknown, messageId: unknown): RequestMalformedError | undefined {
  if (message === undefined || message === null) return new RequestMalformedError({ message: MESSAGE_REQUIRED, metadata: { field: 'message' } });
  if (messageId === undefined || messageId === null || messageId === '') {
    return new RequestMalformedError({ message: MESSAGE_ID_REQUIRED, metadata: { field: 'message.messageId' } });
  }
  return undefined;
}

/** On a request as the SDK typed it (messageId '' when absent): throws the refusal. */
export function requireMessage<M extends { messageId: string }>(message: M | undefined): asserts message is M {
  const refusal = missing(message, message?.messageId);
  if (refusal) throw refusal;
}

/** On an HTTP+JSON body as sent (the SDK's reader takes message_id too): the refusal, or undefined. */
export function missingMessageIn(body: Record<string, unknown>): RequestMalformedError | undefined {
  const message = body.message;
  if (!isObject(message)) return missing(message, undefined);
  return missing(message, message.messageId ?? message.message_id);
}
