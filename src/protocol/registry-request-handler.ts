/**
 * The SDK's DefaultRequestHandler, with one addition: a request the executor could not serve
 * because storage is unavailable is answered with a protocol error (HTTP 503 on HTTP+JSON, a
 * JSON-RPC error saying so) instead of the task, as clients and load balancers expect of a
 * server that cannot do its job right now. Every binding (JSON-RPC, HTTP+JSON, gRPC) should
 * use this one handler over the shared task store (core.tasks).
 */
import type { AgentCard, SendMessageRequest, StreamResponse, SubscribeToTaskRequest } from '@a2a-js/sdk';
import {
  DefaultRequestHandler,
  type AgentExecutor,
  type PushNotificationSender,
  type PushNotificationStore,
  type ServerCallContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { takeProtocolRefusal, watchEventSeq, watchEventUpdate } from '../operations/executor.js';
import { currentScope } from '../observability/request-scope.js';
import type { WatchHub } from '../subscriptions/watch-hub.js';
import { StorageUnavailableA2AError } from '../tasks/storage-unavailable.js';

type SendResult = Awaited<ReturnType<DefaultRequestHandler['sendMessage']>>;

export class RegistryRequestHandler extends DefaultRequestHandler {
  constructor(
    card: AgentCard,
    tasks: TaskStore,
    executor: AgentExecutor,
    /** Standing searches: which events a client was sent, and what one that resumes missed. */
    private readonly watches?: WatchHub,
    push?: { store: PushNotificationStore; sender: PushNotificationSender },
  ) {
    super(card, tasks, executor, undefined, push?.store, push?.sender);
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<SendResult> {
    // A watch started by a plain SendMessage (events go to its push config) never finishes:
    // answer with the WORKING task rather than block until it ends.
    if (params.configuration?.taskPushNotificationConfig && startsWatch(params)) {
      params = { ...params, configuration: { ...params.configuration, returnImmediately: true } };
    }
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
    for await (const response of untilClosed(events, currentScope()?.closed)) {
      this.#noteDelivered(response);
      yield response;
    }
  }

  /**
   * SubscribeToTask: the SDK's (the task, then live events), and for a watch the events the
   * client missed since its stream was cut (or a `resync` with the current matches when they
   * are no longer kept) between the two, without repeating any.
   */
  override async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const events = super.resubscribe(params, context);
    const first = await events.next();
    if (first.done) return;
    yield first.value;
    const task = first.value.payload?.$case === 'task' ? first.value.payload.value : undefined;
    const watch = task ? this.watches?.get(task.id) : undefined;
    let replayed = 0;
    if (watch && task) {
      for (const event of watch.missed()) {
        watch.delivered(event.seq);
        replayed = event.seq;
        yield { payload: { $case: 'artifactUpdate', value: watchEventUpdate(task.id, task.contextId, event) } };
      }
    }
    for await (const response of untilClosed(events, currentScope()?.closed)) {
      const seq = watchEventSeq(response);
      if (seq !== undefined && seq <= replayed) continue;
      this.#noteDelivered(response);
      yield response;
    }
  }

  #noteDelivered(response: StreamResponse): void {
    if (!this.watches || response.payload?.$case !== 'artifactUpdate') return;
    const seq = watchEventSeq(response);
    if (seq !== undefined) this.watches.get(response.payload.value.taskId)?.delivered(seq);
  }
}

/**
 * The events of `events` until the client's connection closes: a stream whose client left ends
 * at once (the SDK's loop would otherwise wait for the task's next event, and write it to no one).
 */
async function* untilClosed<T>(events: AsyncGenerator<T, void, undefined>, closed: AbortSignal | undefined): AsyncGenerator<T, void, undefined> {
  if (!closed) {
    yield* events;
    return;
  }
  let onClose!: () => void;
  const gone = new Promise<'closed'>((resolve) => (onClose = () => resolve('closed')));
  if (closed.aborted) onClose();
  else closed.addEventListener('abort', onClose, { once: true });
  try {
    for (;;) {
      const next = await Promise.race([events.next(), gone]);
      if (next === 'closed' || next.done) return;
      yield next.value;
    }
  } finally {
    closed.removeEventListener('abort', onClose);
    // Ends the SDK's generator (and detaches its queue) once its pending step settles.
    void events.return(undefined).catch(() => undefined);
  }
}

/** The message asks for a watch ({"watch": {...}} in a data part). */
function startsWatch(params: SendMessageRequest): boolean {
  return (params.message?.parts ?? []).some((part) => part.content?.$case === 'data' && Object.hasOwn(part.content.value ?? {}, 'watch'));
}

function refuseIfAsked(context: ServerCallContext): void {
  const refusal = takeProtocolRefusal(context);
  if (refusal) throw new StorageUnavailableA2AError(refusal.message);
}
