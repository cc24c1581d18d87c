/**
 * SDK clients for tests, and small helpers to build contract messages and read answers as wire
 * JSON (the SDK's TypeScript types are converted with toJSON at this edge only).
 */
import { randomUUID } from 'node:crypto';
import { Message, StreamResponse, Task } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type BeforeArgs,
  type CallInterceptor,
  type Client,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';

export type Binding = 'JSONRPC' | 'HTTP+JSON' | 'GRPC';
export const BINDINGS: readonly Binding[] = ['JSONRPC', 'HTTP+JSON', 'GRPC'];

/** Sends the bearer token as a service parameter: gRPC metadata (the HTTP bindings use authFetch). */
function bearer(token: string): CallInterceptor {
  return {
    before: async (args: BeforeArgs) => {
      args.options!.serviceParameters = { ...args.options!.serviceParameters, authorization: `Bearer ${token}` };
    },
    after: async () => {},
  };
}

/** A fetch that adds the bearer token to every request the SDK makes. */
export function authFetch(token?: string): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    if (token) headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
}

/**
 * An SDK client made from the registry's base URL alone: it reads the card and picks the
 * interface of the binding asked for (JSON-RPC by default).
 */
export async function sdkClient(baseUrl: string, options: { token?: string; binding?: Binding } = {}): Promise<Client> {
  const fetchImpl = authFetch(options.token);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl }), new GrpcTransportFactory()],
      preferredTransports: [options.binding ?? 'JSONRPC'],
      clientConfig: options.binding === 'GRPC' && options.token ? { interceptors: [bearer(options.token)] } : undefined,
    }),
  );
  return factory.createFromUrl(baseUrl);
}

export type WireJson = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A user message with the given wire-JSON parts. */
export function message(parts: WireJson[]): Message {
  return Message.fromJSON({ messageId: randomUUID(), role: 'ROLE_USER', parts });
}
export const dataPart = (data: unknown): WireJson => ({ data, mediaType: 'application/json' });
export const textPart = (text: string): WireJson => ({ text });
export const filePart = (content: string | Buffer, filename: string, mediaType = 'application/json'): WireJson => ({
  raw: Buffer.from(content).toString('base64'),
  filename,
  mediaType,
});

/** Sends one message (blocking) and returns the task as wire JSON. */
export async function send(client: Client, parts: WireJson[]): Promise<WireJson> {
  const result = await client.sendMessage({ tenant: '', message: message(parts), configuration: undefined, metadata: undefined });
  if (!('id' in result) || !('status' in result)) throw new Error('expected a task, got a message');
  return Task.toJSON(result as Task) as WireJson;
}

/** Sends one operation as a data part. */
export const op = (client: Client, data: unknown): Promise<WireJson> => send(client, [dataPart(data)]);

/** Streams one message; returns every stream event as wire JSON. */
export async function stream(client: Client, parts: WireJson[]): Promise<WireJson[]> {
  const events: WireJson[] = [];
  for await (const event of client.sendMessageStream({ tenant: '', message: message(parts), configuration: undefined, metadata: undefined })) {
    events.push(streamEventJson(event));
  }
  return events;
}

export const streamEventJson = (event: StreamResponse): WireJson => StreamResponse.toJSON(event) as WireJson;

export const stateOf = (task: WireJson): string => task.status?.state;

/** The data part of the task's only artifact (COMPLETED answers). */
export function resultOf(task: WireJson): WireJson {
  if (stateOf(task) !== 'TASK_STATE_COMPLETED') {
    throw new Error(`expected COMPLETED, got ${stateOf(task)}: ${JSON.stringify(task.status?.message?.parts?.[0])}`);
  }
  return task.artifacts[0].parts.find((p: WireJson) => p.data !== undefined).data;
}

/**
 * A registration by URL that should succeed, tried again (up to three times) when its fetch only
 * timed out: the first fetch of a test registry carries first-use costs (the HTTP client, the
 * first host-name lookup) that can pass a test's short fetch timeout on a loaded machine.
 */
export async function registerByUrl(client: Client, url: string): Promise<WireJson> {
  for (let attempt = 1; ; attempt++) {
    const answer = await op(client, { register: { url } });
    const timedOut = stateOf(answer) === 'TASK_STATE_REJECTED' && errorOf(answer).details?.[0]?.rule === 'timeout';
    if (attempt === 3 || !timedOut) return resultOf(answer);
  }
}

/** The error data part of a REJECTED task. */
export function errorOf(task: WireJson): WireJson {
  if (stateOf(task) !== 'TASK_STATE_REJECTED') throw new Error(`expected REJECTED, got ${stateOf(task)}`);
  return task.status.message.parts.find((p: WireJson) => p.data !== undefined).data.error;
}
