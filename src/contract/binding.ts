/**
 * What a request's binding (JSON-RPC, HTTP+JSON, gRPC) tells the layers below it about how it
 * carries answers and files. Here, beside the other shared types, because the request scope
 * (observability/) carries them from the doors to the operations and the protocol layer: both
 * sides depend on this file, neither on the other.
 */
import type { Task } from '@a2a-js/sdk';

/**
 * How the request's binding encodes its messages: JSON (JSON-RPC, HTTP+JSON) or protobuf (gRPC).
 * A file part's bytes are base64 text in one and the bytes themselves in the other, and v0.3's
 * parts have other names in each (operations/part-words.ts): messages telling a client how to
 * send them say it as its binding has it.
 */
export type MessageEncoding = 'json' | 'protobuf';

/**
 * The size of an answer on a binding whose clients refuse large messages (gRPC's: see
 * grpc/answer-limit.ts); protocol/answer-size.ts cuts a ListTasks page short of it.
 */
export interface AnswerLimit {
  /** The largest answer the binding's clients take. */
  maxBytes: number;
  /** A task's size as the binding encodes it inside a list. */
  encodedBytes: (task: Task) => number;
}
