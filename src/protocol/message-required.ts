/**
 * A SendMessage (SendStreamingMessage) request's message and its messageId, both REQUIRED (A2A
 * 3.2.1, 4.1.4), said alike on every binding with the field in the error's ErrorInfo, as the
 * registry's other invalid-params refusals name theirs. The SDK refused them with "message is
 * required" (HTTP+JSON) or "message.messageId is required" and no field: a client could not
 * point at what to add, nor learn what a messageId is.
 *
 * A v0.3 message/send (message/stream) is read by the SDK's v0.3 layer before the request handler
 * sees it, and that layer refused the same requests with "message must be an object",
 * "message.messageId is required" or 'message.role must be "user" or "agent"', naming no field:
 * missingLegacyMessageIn says them as v1.0 requests are told, with v0.3's own example.
 */
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { isObject } from '../lib/json.js';

const SEND_ONE = 'send one message, e.g. {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "weather"}]}}.';
const SEND_ONE_V03 = 'send one message, e.g. {"message": {"kind": "message", "messageId": "m1", "role": "user", "parts": [{"kind": "text", "text": "weather"}]}}.';
const MESSAGE_REQUIRED = `message is required: ${SEND_ONE}`;
const MESSAGE_REQUIRED_V03 = `message is required: ${SEND_ONE_V03}`;
const A_MESSAGE_ID = 'an id the client gives each message it sends, unique to it (a UUID, say).';
const MESSAGE_ID_REQUIRED = `message.messageId is required: ${A_MESSAGE_ID}`;

/** The refusal of a request whose message, or its messageId, is missing; undefined when both are there. */
function missing(message: unknown, messageId: unknown, required = MESSAGE_REQUIRED): RequestMalformedError | undefined {
  if (message === undefined || message === null) return new RequestMalformedError({ message: required, metadata: { field: 'message' } });
  // One that is there but no object ("message": "hi") was told its messageId is missing.
  if (!isObject(message)) return new RequestMalformedError({ message: `message must be an object: ${SEND_ONE}`, metadata: { field: 'message' } });
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

/**
 * On a v0.3 message/send (message/stream) request's params as sent: the refusal of a missing
 * message, messageId or role, or undefined.
 */
export function missingLegacyMessageIn(params: Record<string, unknown>): RequestMalformedError | undefined {
  const message = params.message;
  if (!isObject(message)) {
    if (message === undefined || message === null) return missing(message, undefined, MESSAGE_REQUIRED_V03);
    return new RequestMalformedError({ message: `message must be an object: ${SEND_ONE_V03}`, metadata: { field: 'message' } });
  }
  const refusal = missing(message, message.messageId);
  if (refusal) return refusal;
  // (A messageId that is no string is refused with the message's other mistyped fields: message-fields.ts.)
  if (message.role !== 'user' && message.role !== 'agent') {
    return new RequestMalformedError({ message: 'message.role must be "user" or "agent": a message from a client is "user".', metadata: { field: 'message.role' } });
  }
  return undefined;
}

/**
 * On a decoded v0.3 gRPC SendMessageRequest (a2a.v1.A2AService: the message is `request`, its
 * role the proto enum): the same refusals, which the SDK's v0.3 gRPC layer gave as bare
 * "SendMessageRequest missing message", "message.messageId is required", "Invalid role: 0".
 */
export function missingLegacyGrpcMessageIn(decoded: unknown): RequestMalformedError | undefined {
  const message = isObject(decoded) ? decoded.request : undefined;
  if (!isObject(message)) return missing(undefined, undefined);
  const refusal = missing(message, message.messageId);
  if (refusal) return refusal;
  if (message.role !== 1 && message.role !== 2) {
    return new RequestMalformedError({ message: 'message.role must be ROLE_USER or ROLE_AGENT: a message from a client is ROLE_USER.', metadata: { field: 'message.role' } });
  }
  return undefined;
}
