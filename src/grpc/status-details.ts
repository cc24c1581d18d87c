/**
 * grpc-status-details-bin for the statuses the registry sends itself: a google.rpc.Status whose
 * details are a google.rpc.ErrorInfo (reason, domain, metadata) and, for a refusal to be retried
 * later (rate limits, storage unavailable, starting up), a google.rpc.RetryInfo with the delay,
 * the standard detail gRPC client libraries read for when to retry (as HTTP clients read
 * Retry-After).
 *
 * The SDK's encodeGrpcStatusDetails writes one ErrorInfo only; the few protobuf messages here
 * are written by hand (field numbers from google/rpc/status.proto, error_details.proto,
 * google/protobuf/any.proto and duration.proto) rather than adding a protobuf library.
 */

const TYPE_PREFIX = 'type.googleapis.com/';

export interface StatusDetail {
  reason: string;
  domain: string;
  metadata?: Record<string, string>;
  /** Adds a google.rpc.RetryInfo with this delay. */
  retryAfterSeconds?: number;
}

/** A non-negative integer as a protobuf varint. */
function varint(value: number): number[] {
  const out: number[] = [];
  let n = value;
  while (n > 0x7f) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return out;
}

/** A length-delimited field (wire type 2): strings, bytes, embedded messages. */
const lengthDelimited = (field: number, bytes: Buffer): Buffer => Buffer.concat([Buffer.from([...varint((field << 3) | 2), ...varint(bytes.length)]), bytes]);
const text = (field: number, value: string): Buffer => (value === '' ? Buffer.alloc(0) : lengthDelimited(field, Buffer.from(value, 'utf8')));
/** A varint field (wire type 0); proto3 leaves out zero. */
const integer = (field: number, value: number): Buffer => (value === 0 ? Buffer.alloc(0) : Buffer.from([...varint(field << 3), ...varint(value)]));

/** google.protobuf.Any { type_url = 1; value = 2 }. */
const any = (type: string, value: Buffer): Buffer => Buffer.concat([text(1, TYPE_PREFIX + type), lengthDelimited(2, value)]);

/** google.rpc.ErrorInfo { reason = 1; domain = 2; map<string, string> metadata = 3 }. */
function errorInfo(detail: StatusDetail): Buffer {
  const entries = Object.entries(detail.metadata ?? {}).map(([key, value]) => lengthDelimited(3, Buffer.concat([text(1, key), text(2, value)])));
  return Buffer.concat([text(1, detail.reason), text(2, detail.domain), ...entries]);
}

/** google.rpc.RetryInfo { google.protobuf.Duration retry_delay = 1 }; Duration { int64 seconds = 1; int32 nanos = 2 }. */
const retryInfo = (seconds: number): Buffer => lengthDelimited(1, integer(1, seconds));

/** google.rpc.Status { int32 code = 1; string message = 2; repeated google.protobuf.Any details = 3 }, encoded. */
export function encodeStatusDetails(code: number, message: string, detail: StatusDetail): Buffer {
  const details = [any('google.rpc.ErrorInfo', errorInfo(detail))];
  if (detail.retryAfterSeconds !== undefined) details.push(any('google.rpc.RetryInfo', retryInfo(detail.retryAfterSeconds)));
  return Buffer.concat([integer(1, code), text(2, message), ...details.map((d) => lengthDelimited(3, d))]);
}
