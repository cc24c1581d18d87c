/**
 * The SDK's DefaultRequestHandler, with two additions:
 *
 * - A request the executor could not serve because storage is unavailable is answered with a
 *   protocol error (HTTP 503 on HTTP+JSON, a JSON-RPC error saying so) instead of the task, as
 *   clients and load balancers expect of a server that cannot do its job right now.
 * - A one-turn, non-streaming message (no task to continue, no referenced tasks, no push
 *   configuration) is answered without the SDK's event machinery: the executor builds the
 *   finished task once, the task store keeps it, and that task is the answer. The SDK's path
 *   would publish the same single task event through an event bus and a result manager that
 *   deep-clone it twice (a search answer's artifact is most of a task's weight) before saving
 *   the same task and returning it. Everything else (streams, continuations, GetTask, ListTasks,
 *   CancelTask, subscriptions) stays on the SDK's path; test/fast-path.test.ts pins that both
 *   paths answer alike.
 *
 * Every binding (JSON-RPC, HTTP+JSON, gRPC) should use this one handler over the shared task
 * store (core.tasks).
 */
import type { AgentCard, SendMessageRequest, StreamResponse, SubscribeToTaskRequest, Task } from '@a2a-js/sdk';
import { ExtensionSupportRequiredError, RequestMalformedError } from '@a2a-js/sdk/errors';
import {
  DefaultRequestHandler,
  type PushNotificationSender,
  type PushNotificationStore,
  type ServerCallContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { takeProtocolRefusal, watchEventSeq, watchEventUpdate, type RegistryExecutor } from '../operations/executor.js';
import { currentScope } from '../observability/request-scope.js';
import type { WatchHub } from '../subscriptions/watch-hub.js';
import { StorageUnavailableA2AError } from '../tasks/storage-unavailable.js';

type SendResult = Awaited<ReturnType<DefaultRequestHandler['sendMessage']>>;

export class RegistryRequestHandler extends DefaultRequestHandler {
  readonly #tasks: TaskStore;
  readonly #executor: RegistryExecutor;
  /** Extensions the card declares (the SDK filters a request's extensions to these). */
  readonly #exposedExtensions: ReadonlySet<string>;
  /** Extensions a client must declare to be served (the SDK refuses a request without them). */
  readonly #requiredExtensions: readonly string[];

  constructor(
    card: AgentCard,
    tasks: TaskStore,
    executor: RegistryExecutor,
    /** Standing searches: which events a client was sent, and what one that resumes missed. */
    private readonly watches?: WatchHub,
    push?: { store: PushNotificationStore; sender: PushNotificationSender },
  ) {
    // The SDK's input-mode check stays off (its default): the executor names unusable parts itself.
    super(card, tasks, executor, undefined, push?.store, push?.sender);
    this.#tasks = tasks;
    this.#executor = executor;
    const extensions = card.capabilities?.extensions ?? [];
    this.#exposedExtensions = new Set(extensions.map((extension) => extension.uri));
    this.#requiredExtensions = extensions.filter((extension) => extension.required).map((extension) => extension.uri);
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<SendResult> {
    if (isOneTurn(params)) {
      const task = await this.#answerOneTurn(params, context);
      refuseIfAsked(context);
      return task;
    }
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

  /**
   * What the SDK's sendMessage does for a new task whose executor publishes one finished task
   * event (blocking or not, the answer is that task), step for step: the same checks and
   * errors, the same ids, the same stored task, the same history-length trimming.
   */
  async #answerOneTurn(params: SendMessageRequest, context: ServerCallContext): Promise<Task> {
    const message = params.message!;
    if (!message.messageId) throw new RequestMalformedError('message.messageId is required.');
    const requested = context.requestedExtensions;
    if (this.#requiredExtensions.length > 0) {
      const declared = new Set(requested ?? []);
      const missing = this.#requiredExtensions.filter((uri) => !declared.has(uri));
      if (missing.length > 0) throw new ExtensionSupportRequiredError(`Client must declare support for required extensions: ${missing.join(', ')}`);
    }
    if (requested) context.setRequestedExtensions(requested.filter((uri) => this.#exposedExtensions.has(uri)));
    const taskId = crypto.randomUUID();
    const contextId = message.contextId || crypto.randomUUID();
    // The message as the SDK's RequestContext hands it to the executor (ids filled in), without
    // its deep clone: the parsed body is this request's alone and nothing edits it.
    const userMessage = { ...message, contextId, taskId };
    const request = { ...params, message: userMessage };
    const task = await this.#executor.finishedTask({ request, taskId, contextId, userMessage, context, task: undefined });
    await this.#tasks.save(task, context);
    const historyLength = params.configuration?.historyLength;
    if (historyLength !== undefined) task.history = historyLength <= 0 ? [] : task.history.slice(-historyLength);
    return task;
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

/** A message that opens a new task and needs nothing of the SDK's event machinery. */
function isOneTurn(params: SendMessageRequest): boolean {
  const message = params.message;
  return (
    message !== undefined &&
    !message.taskId &&
    (message.referenceTaskIds?.length ?? 0) === 0 &&
    params.configuration?.taskPushNotificationConfig === undefined
  );
}

function refuseIfAsked(context: ServerCallContext): void {
  const refusal = takeProtocolRefusal(context);
  if (refusal) throw new StorageUnavailableA2AError(refusal.message, refusal.code);
}
