/**
 * A raw gRPC client for tests that need what the SDK client hides: chosen metadata
 * (x-forwarded-for, a2a-version, tokens), the exact status code, trailers and the
 * google.rpc.ErrorInfo in grpc-status-details-bin. It uses the SDK's own service definition, so
 * requests are encoded exactly as the SDK's gRPC transport encodes them.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { Message, StreamResponse, Task } from '@a2a-js/sdk';
import { decodeErrorInfo, decodeStatus, GRPC_STATUS_DETAILS_BIN, type DecodedErrorInfo } from '@a2a-js/sdk/errors/grpc';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { service as healthService } from 'grpc-health-check';
import type { WireJson } from './client.js';

const A2AClient = grpc.makeGenericClientConstructor(A2AService as unknown as grpc.ServiceDefinition, 'A2AService');
const HealthClient = grpc.makeGenericClientConstructor(healthService, 'Health');

type UnaryMethod = (request: unknown, metadata: grpc.Metadata, callback: (error: grpc.ServiceError | null, value: unknown) => void) => grpc.ClientUnaryCall;
type StreamMethod = (request: unknown, metadata: grpc.Metadata) => grpc.ClientReadableStream<unknown>;

export interface UnaryAnswer {
  error?: grpc.ServiceError;
  value?: unknown;
  /** Initial metadata the server sent (absent on trailers-only answers). */
  headers?: grpc.Metadata;
}

export interface StreamAnswer {
  events: WireJson[];
  error?: grpc.ServiceError;
}

/**
 * Metadata with A2A-Version 1.0 (or `version`; null: none) and the given extra entries
 * (authorization, x-forwarded-for...). Not undefined for none: it would get the default.
 */
export function metadata(entries: Record<string, string> = {}, version: string | null = '1.0'): grpc.Metadata {
  const md = new grpc.Metadata();
  if (version !== null) md.set('a2a-version', version);
  for (const [key, value] of Object.entries(entries)) md.set(key, value);
  return md;
}

/** A SendMessageRequest carrying one user message with the given wire-JSON parts. */
export const sendRequest = (parts: WireJson[]) => ({
  tenant: '',
  message: Message.fromJSON({ messageId: crypto.randomUUID(), role: 'ROLE_USER', parts }),
  configuration: undefined,
  metadata: undefined,
});

export class RawA2AClient {
  private readonly client: grpc.Client & Record<string, unknown>;

  /**
   * `options`: channel options, e.g. `grpc.default_compression_algorithm`; `service`: another
   * service definition than v1.0's (the SDK's LegacyA2AService, v0.3's a2a.v1.A2AService).
   */
  constructor(address: string, options?: grpc.ChannelOptions, service?: unknown) {
    const Client = service ? grpc.makeGenericClientConstructor(service as grpc.ServiceDefinition, 'A2AService') : A2AClient;
    this.client = new Client(address, grpc.credentials.createInsecure(), options) as grpc.Client & Record<string, unknown>;
  }

  unary(method: string, request: unknown, md: grpc.Metadata = metadata()): Promise<UnaryAnswer> {
    return new Promise((resolve) => {
      let headers: grpc.Metadata | undefined;
      const call = (this.client[method] as UnaryMethod).call(this.client, request, md, (error, value) =>
        resolve(error ? { error, headers } : { value, headers }),
      );
      call.on('metadata', (m: grpc.Metadata) => (headers = m));
    });
  }

  /** SendMessage; the task (or message) as wire JSON on success. */
  async send(parts: WireJson[], md?: grpc.Metadata): Promise<UnaryAnswer & { task?: WireJson }> {
    const answer = await this.unary('sendMessage', sendRequest(parts), md);
    const payload = (answer.value as { payload?: { $case: string; value: Task } } | undefined)?.payload;
    return payload?.$case === 'task' ? { ...answer, task: Task.toJSON(payload.value) as WireJson } : answer;
  }

  /**
   * A server-streaming call read to its end; events as wire JSON. `events` fills as they arrive
   * (for a stream that does not end on its own, e.g. a watch, cancelled with `call.cancel()`).
   */
  stream(method: string, request: unknown, md: grpc.Metadata = metadata()): Promise<StreamAnswer> & { call: grpc.ClientReadableStream<unknown>; events: WireJson[] } {
    const call = (this.client[method] as StreamMethod).call(this.client, request, md);
    const events: WireJson[] = [];
    const done = new Promise<StreamAnswer>((resolve) => {
      call.on('data', (event: StreamResponse) => events.push(StreamResponse.toJSON(event) as WireJson));
      call.on('error', (error: grpc.ServiceError) => resolve({ events, error }));
      call.on('end', () => resolve({ events }));
    });
    return Object.assign(done, { call, events });
  }

  close(): void {
    this.client.close();
  }
}

/** The google.rpc.ErrorInfo of a failed call, from grpc-status-details-bin. */
export function errorInfoOf(error: grpc.ServiceError): DecodedErrorInfo | undefined {
  const [blob] = error.metadata.get(GRPC_STATUS_DETAILS_BIN);
  if (!Buffer.isBuffer(blob)) return undefined;
  const detail = decodeStatus(blob).details.find((d) => d.typeUrl.endsWith('google.rpc.ErrorInfo'));
  return detail ? decodeErrorInfo(detail.value) : undefined;
}

/** A protobuf varint at `at`: its value and the offset after it. */
function readVarint(bytes: Buffer, at: number): [value: number, next: number] {
  let value = 0;
  let scale = 1;
  for (let i = at; i < bytes.length; i++) {
    value += (bytes[i]! & 0x7f) * scale;
    if (bytes[i]! < 0x80) return [value, i + 1];
    scale *= 0x80;
  }
  throw new Error('truncated varint');
}

/**
 * The delay in whole seconds of a failed call's google.rpc.RetryInfo (grpc-status-details-bin),
 * or undefined without one. Read by hand (RetryInfo { Duration retry_delay = 1 }, Duration
 * { int64 seconds = 1 }): the SDK decodes only ErrorInfo.
 */
export function retryInfoOf(error: grpc.ServiceError): number | undefined {
  const [blob] = error.metadata.get(GRPC_STATUS_DETAILS_BIN);
  if (!Buffer.isBuffer(blob)) return undefined;
  const detail = decodeStatus(blob).details.find((d) => d.typeUrl === 'type.googleapis.com/google.rpc.RetryInfo');
  if (!detail) return undefined;
  const info = Buffer.from(detail.value);
  assert.equal(info[0], 0x0a, 'RetryInfo.retry_delay (field 1, length-delimited)');
  const [length, start] = readVarint(info, 1);
  const duration = info.subarray(start, start + length);
  if (duration.length === 0) return 0;
  assert.equal(duration[0], 0x08, 'Duration.seconds (field 1, varint)');
  return readVarint(duration, 1)[0];
}

/** grpc.health.v1.Health/Check for one service name: the status name, or the error. */
export function healthCheck(address: string, service: string): Promise<{ status?: string; error?: grpc.ServiceError }> {
  const client = new HealthClient(address, grpc.credentials.createInsecure()) as unknown as grpc.Client & { check: UnaryMethod };
  return new Promise((resolve) =>
    client.check({ service }, new grpc.Metadata(), (error, value) => {
      client.close();
      resolve(error ? { error } : { status: (value as { status: string }).status });
    }),
  );
}

/** An open grpc.health.v1.Health/Watch: the statuses received so far, and how the stream ended (once it has). */
export interface HealthWatch {
  statuses: string[];
  ended: Promise<{ error?: grpc.ServiceError }>;
  cancel(): void;
}

/** grpc.health.v1.Health/Watch for one service name, with @grpc/grpc-js's client (sending `metadata`, e.g. x-forwarded-for). */
export function healthWatch(address: string, service: string, metadata = new grpc.Metadata()): HealthWatch {
  const client = new HealthClient(address, grpc.credentials.createInsecure()) as unknown as grpc.Client & { watch: StreamMethod };
  const call = client.watch({ service }, metadata);
  const statuses: string[] = [];
  call.on('data', (value: { status: string }) => statuses.push(value.status));
  const ended = new Promise<{ error?: grpc.ServiceError }>((resolve) => {
    call.on('error', (error: grpc.ServiceError) => resolve({ error }));
    call.on('end', () => resolve({}));
  }).finally(() => client.close());
  return { statuses, ended, cancel: () => call.cancel() };
}

/** One gRPC message as framed on the wire: a compressed flag, its length, its bytes. */
export function grpcFrame(message: Buffer, compressed = false): Buffer {
  const header = Buffer.alloc(5);
  header[0] = compressed ? 1 : 0;
  header.writeUInt32BE(message.length, 1);
  return Buffer.concat([header, message]);
}

/** What a raw HTTP/2 gRPC call got: its headers and trailers merged, how its stream closed, and when. */
export interface RawCallAnswer {
  headers: http2.IncomingHttpHeaders;
  rstCode: number;
  closedAfterMs: number;
}

/**
 * A gRPC call over raw HTTP/2 on `session`, for what grpc-js clients never send: `body` (framed
 * messages, or bytes that are none) as the request, the stream ended after it unless `end` is
 * false (a client that never finishes its request). Resolves when the stream closes.
 */
export function rawGrpcCall(
  session: http2.ClientHttp2Session,
  path: string,
  body: Buffer | undefined,
  { end = true, headers = { 'a2a-version': '1.0' } }: { end?: boolean; headers?: Record<string, string> } = {},
): Promise<RawCallAnswer> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...headers }, { endStream: false });
    let answer: http2.IncomingHttpHeaders = {};
    req.on('response', (h) => (answer = { ...answer, ...h })).on('trailers', (t) => (answer = { ...answer, ...t }));
    req.on('close', () => resolve({ headers: answer, rstCode: req.rstCode ?? 0, closedAfterMs: Date.now() - started })).on('error', reject);
    req.resume();
    if (body) req.write(body);
    if (end) req.end();
  });
}

/** The google.rpc.ErrorInfo in a raw answer's grpc-status-details-bin (base64 on the wire). */
export function errorInfoOfHeaders(headers: http2.IncomingHttpHeaders): DecodedErrorInfo | undefined {
  const blob = headers[GRPC_STATUS_DETAILS_BIN];
  if (typeof blob !== 'string') return undefined;
  const detail = decodeStatus(Buffer.from(blob, 'base64')).details.find((d) => d.typeUrl.endsWith('google.rpc.ErrorInfo'));
  return detail ? decodeErrorInfo(detail.value) : undefined;
}
