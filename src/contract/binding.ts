/**
 * What a request's binding (JSON-RPC, HTTP+JSON, gRPC) tells the layers below it about how it
 * carries answers and files. Here, beside the other shared types, because the request scope
 * (observability/) carries them from the doors to the operations and the protocol layer: both
 * sides depend on this file, neither on the other.
 */
import type { Task } from '@a2a-js/sdk';

/**
 * How the request's binding carries a file part's bytes (`raw`; v0.3 `file.bytes`): base64 text in
 * JSON (JSON-RPC, HTTP+JSON), the bytes themselves in protobuf (gRPC). A message telling the
 * client how to send them says what to put there.
 */
export type FileBytes = 'base64' | 'bytes';

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
