/**
 * ListTasksRequest.status_timestamp_after on gRPC, to the nanosecond the client sent. The SDK's
 * decoder turns the google.protobuf.Timestamp into an ISO string through a Date (seconds * 1000
 * + nanos / 1e6), which keeps whole milliseconds: a time half a millisecond, or a nanosecond,
 * after a task's status time listed that task, though only tasks whose status time is "greater
 * than or equal to this value" are to be (A2A ListTasksRequest), and JSON-RPC and HTTP+JSON,
 * whose clients send the same time as "…:13.0005Z", leave it out (the task store compares the
 * time as given: firstMillisecondFrom). And it read a Timestamp outside its definition as
 * another time: nanos 2000000000 as two seconds later, -1 as a nanosecond earlier.
 *
 * So the field is read again from the request's bytes, and handed on as RFC 3339 with its nine
 * fractional digits; a Timestamp its definition does not allow (nanos outside 0 to 999,999,999,
 * seconds outside the years 1 to 9999) is no Timestamp, and is refused as a message the decoder
 * cannot read is (undecodable.ts: INVALID_ARGUMENT, PARSE_ERROR), as a time past a Date's range
 * already was.
 */
import type * as grpc from '@grpc/grpc-js';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';

/** ListTasksRequest's field 7 (status_timestamp_after), and Timestamp's own fields. */
const STATUS_TIMESTAMP_AFTER = 7;
const SECONDS = 1;
const NANOS = 2;
/** google.protobuf.Timestamp's range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z. */
const MIN_SECONDS = -62_135_596_800n;
const MAX_SECONDS = 253_402_300_799n;
const MAX_NANOS = 999_999_999n;

/**
 * The status_timestamp_after of a ListTasksRequest's bytes as RFC 3339 with nine fractional
 * digits; undefined when the request has none (or bytes the SDK's decoder will judge); throws
 * for a Timestamp out of its range. Occurrences merge, as protobuf's do: each field's last value.
 */
export function statusTimestampAfterOf(bytes: Uint8Array): string | undefined {
  let seconds: bigint | undefined;
  let nanos = 0n;
  try {
    const request = new BinaryReader(bytes);
    while (request.pos < request.len) {
      const [field, wireType] = request.tag();
      if (field !== STATUS_TIMESTAMP_AFTER || wireType !== WireType.LengthDelimited) {
        request.skip(wireType, field);
        continue;
      }
      seconds ??= 0n;
      const timestamp = new BinaryReader(request.bytes());
      while (timestamp.pos < timestamp.len) {
        const [inner, innerType] = timestamp.tag();
        if (inner === SECONDS && innerType === WireType.Varint) seconds = BigInt(timestamp.int64());
        else if (inner === NANOS && innerType === WireType.Varint) nanos = BigInt(timestamp.int32());
        else timestamp.skip(innerType, inner);
      }
    }
  } catch {
    // Bytes that are no message: the SDK's decoder says so.
    return undefined;
  }
  if (seconds === undefined) return undefined;
  if (nanos < 0n || nanos > MAX_NANOS) throw new Error(`statusTimestampAfter is no google.protobuf.Timestamp: its nanos, ${nanos}, are not within 0 to 999999999`);
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS) {
    throw new Error(`statusTimestampAfter is no google.protobuf.Timestamp: its seconds, ${seconds}, are not within the years 1 to 9999 (${MIN_SECONDS} to ${MAX_SECONDS})`);
  }
  return new Date(Number(seconds) * 1000).toISOString().replace(/\.000Z$/, `.${String(nanos).padStart(9, '0')}Z`);
}

/** `service` (the v1.0 A2AService) with ListTasks' statusTimestampAfter decoded exactly (see above). */
export function withExactTimestamps<T extends grpc.ServiceDefinition>(service: T): T {
  const listTasks = (service as grpc.ServiceDefinition).listTasks as grpc.MethodDefinition<unknown, unknown>;
  const deserialize = listTasks.requestDeserialize;
  const exactly: grpc.deserialize<unknown> = (bytes) => {
    // Read first: the SDK's decoder throws "Invalid time value" for a time past a Date's range.
    const exact = statusTimestampAfterOf(bytes);
    const request = deserialize(bytes) as { statusTimestampAfter?: string };
    return exact === undefined ? request : { ...request, statusTimestampAfter: exact };
  };
  return { ...service, listTasks: { ...listTasks, requestDeserialize: exactly } };
}
