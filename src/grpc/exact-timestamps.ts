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

/** ListTasksRequest's field 7 (status_timestamp_after), and Timestamp's own fields. */
const STATUS_TIMESTAMP_AFTER = 7;
const SECONDS = 1;
const NANOS = 2;
/** google.protobuf.Timestamp's range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z. */
const MIN_SECONDS = -62_135_596_800n;
const MAX_SECONDS = 253_402_300_799n;
const MAX_NANOS = 999_999_999n;

/** Calls `visit` with each field of a protobuf message's bytes (varints and length-delimited ones); false for bytes it cannot walk. */
function fields(bytes: Uint8Array, visit: (field: number, value: bigint | Uint8Array) => void): boolean {
  let at = 0;
  const varint = (): bigint | undefined => {
    let value = 0n;
    for (let shift = 0n; at < bytes.length && shift < 70n; shift += 7n) {
      const byte = bytes[at++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return BigInt.asUintN(64, value);
    }
    return undefined;
  };
  while (at < bytes.length) {
    const tag = varint();
    if (tag === undefined) return false;
    const field = Number(tag >> 3n);
    switch (Number(tag & 7n)) {
      case 0: {
        const value = varint();
        if (value === undefined) return false;
        visit(field, value);
        break;
      }
      case 1:
        at += 8;
        break;
      case 2: {
        const length = varint();
        if (length === undefined || at + Number(length) > bytes.length) return false;
        visit(field, bytes.subarray(at, at + Number(length)));
        at += Number(length);
        break;
      }
      case 5:
        at += 4;
        break;
      default:
        return false;
    }
  }
  return at === bytes.length;
}

/**
 * The status_timestamp_after of a ListTasksRequest's bytes as RFC 3339 with nine fractional
 * digits; undefined when the request has none (or bytes the SDK's decoder will judge); throws
 * for a Timestamp out of its range. Occurrences merge, as protobuf's do: each field's last value.
 */
export function statusTimestampAfterOf(bytes: Uint8Array): string | undefined {
  let seconds: bigint | undefined;
  let nanos = 0n;
  const read = fields(bytes, (field, value) => {
    if (field !== STATUS_TIMESTAMP_AFTER || typeof value === 'bigint') return;
    seconds ??= 0n;
    fields(value, (inner, v) => {
      if (typeof v !== 'bigint') return;
      // int64 and int32: a negative value is its 64-bit two's complement.
      if (inner === SECONDS) seconds = BigInt.asIntN(64, v);
      if (inner === NANOS) nanos = BigInt.asIntN(64, v);
    });
  });
  if (!read || seconds === undefined) return undefined;
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
