/**
 * The SDK's DefaultRequestHandler, with one addition: a request the executor could not serve
 * because storage is unavailable is answered with a protocol error (HTTP 503 on HTTP+JSON, a
 * JSON-RPC error saying so) instead of the task, as clients and load balancers expect of a
 * server that cannot do its job right now. Every binding (JSON-RPC, HTTP+JSON, gRPC) should
 * use this one handler over the shared task store (core.tasks).
 */
import type { AgentCard, SendMessageRequest, StreamResponse } from '@a2a-js/sdk';
import { DefaultRequestHandler, type AgentExecutor, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';
import { takeProtocolRefusal } from '../operations/executor.js';
import { StorageUnavailableA2AError } from '../tasks/storage-unavailable.js';

type SendResult = Awaited<ReturnType<DefaultRequestHandler['sendMessage']>>;

export class RegistryRequestHandler extends DefaultRequestHandler {
  constructor(card: AgentCard, tasks: TaskStore, executor: AgentExecutor) {
    super(card, tasks, executor);
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<SendResult> {
    const result = await super.sendMessage(params, context);
    refuseIfAsked(context);
    return result;
  }

  override async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const events = super.sendMessageStream(params, context);
    // The executor decides before its first event: refuse before the stream starts, so the
    // client gets a plain error rather than a stream.
    const first = await events.next();
    try {
      refuseIfAsked(context);
    } catch (error) {
      await events.return(undefined);
      throw error;
    }
    if (first.done) return;
    yield first.value;
    yield* events;
  }
}

function refuseIfAsked(context: ServerCallContext): void {
  const refusal = takeProtocolRefusal(context);
  if (refusal) throw new StorageUnavailableA2AError(refusal.message);
}
