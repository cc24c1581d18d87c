/**
 * The gRPC counterpart of http-load.ts's jsonRpcSender: SendMessage over the A2A gRPC binding
 * with a raw grpc-js client and the SDK's own service definition (so requests are encoded as
 * the SDK's gRPC transport encodes them), on one HTTP/2 channel. 127.0.0.1 only.
 */
import * as grpc from '@grpc/grpc-js';
import { Message, TaskState, type SendMessageResponse } from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';

const A2AClient = grpc.makeGenericClientConstructor(A2AService as unknown as grpc.ServiceDefinition, 'A2AService');
type SendMessage = (request: unknown, metadata: grpc.Metadata, callback: (error: grpc.ServiceError | null, value?: SendMessageResponse) => void) => void;

/** Sends one SendMessage with the given wire-JSON parts; true when the task ended in `expectState`. */
export function grpcSender(address: string, token: string | undefined, expectState: TaskState) {
  if (!/^127\.0\.0\.1:\d+$/.test(address)) throw new Error(`benchmarks talk to 127.0.0.1 only, not ${address}`);
  const client = new A2AClient(address, grpc.credentials.createInsecure()) as unknown as grpc.Client & { sendMessage: SendMessage };
  const metadata = new grpc.Metadata();
  metadata.set('a2a-version', '1.0');
  if (token) metadata.set('authorization', `Bearer ${token}`);
  const send = (parts: unknown[]): Promise<boolean> =>
    new Promise((resolve) => {
      const message = Message.fromJSON({ messageId: crypto.randomUUID(), role: 'ROLE_USER', parts });
      client.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined }, metadata, (error, value) => {
        const payload = value?.payload;
        resolve(!error && payload?.$case === 'task' && payload.value.status?.state === expectState);
      });
    });
  return Object.assign(send, { close: () => client.close() });
}
