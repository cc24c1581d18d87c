/**
 * Request messages the SDK's protobuf decoder cannot read. grpc-js answers a decoder's exception
 * itself, on its base call, with a bare INTERNAL "Error deserializing request": no ErrorInfo, no
 * request id, and counted as a call the client cancelled. Bytes that are no protobuf message are
 * the client's error (JSON-RPC's parse error, -32700), and so is a message nested deeper than the
 * recursive decoder can follow (past a few thousand levels it overflows the stack): JSON-RPC
 * refuses that nesting as TOO_DEEP. The service definitions served here decode tolerantly: what
 * cannot be decoded becomes an UndecodableRequest, which the call guard refuses (INVALID_ARGUMENT
 * with the reason) before the SDK sees it.
 */
import type * as grpc from '@grpc/grpc-js';

export class UndecodableRequest {
  constructor(
    readonly reason: 'PARSE_ERROR' | 'TOO_DEEP',
    /** The decoder's own words, for a message that is no protobuf ("premature EOF"). */
    readonly cause: string,
  ) {}
}

/** A V8 stack overflow ("Maximum call stack size exceeded"), which a deeply nested message makes. */
const isStackOverflow = (err: unknown): boolean => err instanceof RangeError && /call stack/i.test(err.message);

function tolerantly(deserialize: grpc.deserialize<unknown>): grpc.deserialize<unknown> {
  return (bytes) => {
    try {
      return deserialize(bytes);
    } catch (err) {
      return new UndecodableRequest(isStackOverflow(err) ? 'TOO_DEEP' : 'PARSE_ERROR', err instanceof Error ? err.message.slice(0, 200) : String(err).slice(0, 200));
    }
  };
}

/** `service` with each method's request decoded tolerantly (see above); the rest as it was. */
export function decodingTolerantly<T extends grpc.ServiceDefinition>(service: T): T {
  const wrapped: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, method] of Object.entries(service as grpc.ServiceDefinition)) {
    wrapped[name] = { ...method, requestDeserialize: tolerantly(method.requestDeserialize) };
  }
  return wrapped as T;
}
