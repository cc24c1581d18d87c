/**
 * What gRPC clients receive: at most 4 MiB per message unless told otherwise (grpc-js,
 * grpc-go, grpc-java, and the A2A SDK's GrpcTransportFactory, which sets nothing). A ListTasks
 * page of 100 search tasks with their artifacts (100 hits each) is several MB: such a client
 * refused it RESOURCE_EXHAUSTED on its side, while the registry had counted the call OK. The
 * call guard gives every call this limit, and a page is cut short of it (protocol/answer-size.ts).
 */
import type { Task } from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import type { AnswerLimit } from '../contract/binding.js';

/** gRPC's default grpc.max_receive_message_length. */
export const GRPC_CLIENT_RECEIVE_BYTES = 4 * 1024 * 1024;

/** The bytes of a protobuf varint's encoding of `n`. */
const varintBytes = (n: number): number => (n < 0x80 ? 1 : 1 + varintBytes(Math.floor(n / 0x80)));

/** A task inside ListTasksResponse (repeated Task tasks = 1): the field's tag, its length, the task as GetTask sends it. */
function encodedBytes(task: Task): number {
  const bytes = A2AService.getTask.responseSerialize(task).length;
  return 1 + varintBytes(bytes) + bytes;
}

export const GRPC_ANSWER_LIMIT: AnswerLimit = { maxBytes: GRPC_CLIENT_RECEIVE_BYTES, encodedBytes };
