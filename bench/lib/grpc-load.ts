/**
 * The gRPC counterpart of http-load.ts's jsonRpcSender: SendMessage over the A2A gRPC binding
 * with a raw grpc-js client and the SDK's own service definition (so requests are encoded as
 * the SDK's gRPC transport encodes them), on `channels` HTTP/2 connections used in turn (one is
 * what a gRPC client opens by default; fetch opens one connection per concurrent request).
 * 127.0.0.1 only.
 */
import * as grpc from '@grpc/grpc-js';
import { Message, TaskState, type SendMessageResponse } from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';

const A2AClient = grpc.makeGenericClientConstructor(A2AService as unknown as grpc.ServiceDefinition, 'A2AService');
type SendMessage = (request: unknown, metadata: grpc.Metadata, callback: (error: grpc.ServiceError | null, value?: SendMessageResponse) => void) => void;

/** Sends one SendMessage with the given wire-JSON parts; true when the task ended in `expectState`. */
export function grpcSender(address: string, token: string | undefined, expectState: TaskState, channels = 1) {
  if (!/^127\.0\.0\.1:\d+$/.test(address)) throw new Error(`benchmarks talk to 127.0.0.1 only, not ${address}`);
  // A local subchannel pool per client: clients of one target otherwise share one connection.
  const clients = Array.from(
    { length: channels },
    () => new A2AClient(address, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 }) as unknown as grpc.Client & { sendMessage: SendMessage },
  );
  let next = 0;
  const metadata = new grpc.Metadata();
  metadata.set('a2a-version', '1.0');
  if (token) metadata.set('authorization', `Bearer ${token}`);
  const send = (parts: unknown[]): Promise<boolean> =>
    new Promise((resolve) => {
      const message = Message.fromJSON({ messageId: crypto.randomUUID(), role: 'ROLE_USER', parts });
      const client = clients[next++ % clients.length]!;
      client.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined }, metadata, (error, value) => {
        const payload = value?.payload;
        resolve(!error && payload?.$case === 'task' && payload.value.status?.state === expectState);
      });
    });
  return Object.assign(send, { close: () => clients.forEach((client) => client.close()) });
}
