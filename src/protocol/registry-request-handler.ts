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
 * - Standing searches (issue 19): SubscribeToTask on a watch is served from the watch itself
 *   (the events the client missed, then live ones, then the end), so it works after a restart,
 *   when no executor runs the task any more, and on another replica (the watch moves there),
 *   from the last event the client says it has (watch-resume.ts);
 *   a message `{"renew": {}}` on a watch's task renews it (a write, counted against the write
 *   budget: over it, refused as a protocol error and the watch left as it was); CancelTask ends
 *   the watch even when no executor runs it.
 *
 * - historyLength (GetTask, ListTasks, a message's configuration) is validated here, for every
 *   binding (integer-params.ts): the SDK took a negative one as 0 and a fraction as "all"; and a
 *   message's role, which the SDK took whatever it was.
 * - Push configs: listed a page at a time, deleting one the task does not have is
 *   TaskNotFound (the SDK answered every config at once, and success) unless the task has ended
 *   (its configs went with it: a get says so, a delete succeeds), and v0.3's get by task
 *   id alone answers the task's config (the SDK looked for a config with an empty id); on a
 *   watch another replica runs, the watch moves here first (its configs live with it); one
 *   created for a task that is no running watch is refused (a watch that ended: no update will come
 *   to push; any other task is answered in its response, whatever its state).
 *
 * - A message's configuration.acceptedOutputModes shapes its answer (output-modes.ts): the
 *   response, or each event of its stream, keeps the parts of the media types the client
 *   accepts; a list naming none the registry answers in is ContentTypeNotSupportedError.
 *
 * Every binding (JSON-RPC, HTTP+JSON, gRPC) should use this one handler over the shared task
 * store (core.tasks).
 */
import {
  Role,
  TaskState,
  type AgentCard,
  type CancelTaskRequest,
  type DeleteTaskPushNotificationConfigRequest,
  type GetExtendedAgentCardRequest,
  type GetTaskPushNotificationConfigRequest,
  type GetTaskRequest,
  type ListTaskPushNotificationConfigsRequest,
  type ListTaskPushNotificationConfigsResponse,
  type ListTasksRequest,
  type ListTasksResponse,
  type SendMessageRequest,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type Task,
  type TaskPushNotificationConfig,
  taskStateFromJSON,
  taskStateToJSON,
} from '@a2a-js/sdk';
import { ExtensionSupportRequiredError, RequestMalformedError, TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import {
  DefaultRequestHandler,
  type PushNotificationSender,
  type PushNotificationStore,
  type ServerCallContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { quote } from '../lib/json.js';
import { timeOrderedId } from '../lib/time-ordered-id.js';
import { CONFIGS_PAGE_SIZE, HISTORY_LENGTH, requireInteger, TASKS_PAGE_SIZE } from './integer-params.js';
import { configPage } from './push-config-pages.js';
import { fitPage } from './answer-size.js';
import { callerOf, takeProtocolRefusal, watchEndOf, watchEndStatus, watchEventUpdate, watchMetadata, watchResultsUpdate, type RegistryExecutor } from '../operations/executor.js';
import { currentScope, type RequestScope } from '../observability/request-scope.js';
import { LEGACY_VERSION } from './versions.js';
import { requireMessage } from './message-required.js';
import { requireMessageIds } from './message-fields.js';
import { acceptedParts, tailoredEvent, tailoredResult, tailoredTask, type AcceptedParts } from './output-modes.js';
import { asksForWatch, refusedConfigField, TERMINAL } from './watch-push.js';
import { dropWatchMatches, holdsWatchMatches, type WatchTasks } from './watch-task.js';
import { resumeAfter } from './watch-resume.js';
import { requireRenewal } from './watch-renew.js';
import { partWords } from '../operations/part-words.js';
import type { Admission } from '../operations/admission.js';
import { RegistryError } from '../contract/errors.js';
import { RateLimitedA2AError } from '../http/retry-later.js';
import { canceledEnd, RUN_RETRY, type Watch, type WatchHub } from '../subscriptions/watch-hub.js';
import type { RegistryTaskStore } from '../tasks/registry-task-store.js';
import { STORAGE_UNAVAILABLE_REASON, StorageUnavailableA2AError } from '../tasks/storage-unavailable.js';

type SendResult = Awaited<ReturnType<DefaultRequestHandler['sendMessage']>>;
/** What the handler needs of the task store beyond the SDK's TaskStore. */
type RegistryTasks = TaskStore & Pick<RegistryTaskStore, 'scopeOf'>;

export class RegistryRequestHandler extends DefaultRequestHandler {
  readonly #tasks: RegistryTasks;
  readonly #executor: RegistryExecutor;
  /** Extensions the card declares (the SDK filters a request's extensions to these). */
  readonly #exposedExtensions: ReadonlySet<string>;
  /** Extensions a client must declare to be served (the SDK refuses a request without them). */
  readonly #requiredExtensions: readonly string[];
  /** Standing searches: their events for each stream, which events a client was sent, what one that resumes missed. */
  private readonly watches: WatchHub | undefined;
  /** The watches' stored tasks (watch-task.ts), which every change to a watch's task goes through. */
  readonly #watchTasks: WatchTasks | undefined;
  /** The budgets (http/rate-limit.ts) a renewal is counted against, as a write. */
  readonly #budgets: Admission | undefined;
  /** The card claims an extended card (capabilities.extendedAgentCard). */
  readonly #offersExtendedCard: boolean;

  constructor(
    card: AgentCard,
    tasks: RegistryTasks,
    executor: RegistryExecutor,
    watches?: { hub: WatchHub; tasks: WatchTasks; budgets?: Admission },
    push?: { store: PushNotificationStore; sender: PushNotificationSender },
  ) {
    // The SDK's input-mode check stays off (its default): the executor names unusable parts itself.
    super(card, tasks, executor, undefined, push?.store, push?.sender);
    this.#tasks = tasks;
    this.watches = watches?.hub;
    this.#watchTasks = watches?.tasks;
    this.#budgets = watches?.budgets;
    this.#executor = executor;
    this.#offersExtendedCard = card.capabilities?.extendedAgentCard === true;
    const extensions = card.capabilities?.extensions ?? [];
    this.#exposedExtensions = new Set(extensions.map((extension) => extension.uri));
    this.#requiredExtensions = extensions.filter((extension) => extension.required).map((extension) => extension.uri);
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<SendResult> {
    const accepted = requireMessageParams(params);
    params = withoutAnonymousPush(params, context);
    if (renewsWatch(params)) return tailoredTask(withHistoryLength(await this.#renew(params, context), params.configuration?.historyLength), accepted);
    await this.#refuseOnOpenWatch(params, context);
    if (isOneTurn(params)) {
      const task = await this.#answerOneTurn(params, context);
      refuseIfAsked(context);
      return tailoredTask(task, accepted);
    }
    // A watch started by a plain SendMessage (events go to its push config) runs for up to a day:
    // answer with the WORKING task rather than block until it ends, as A2A 3.2.2 would have a
    // blocking request wait (a departure README and REGISTRY-CONTRACT document).
    if (params.configuration?.taskPushNotificationConfig && startsWatch(params)) {
      params = { ...params, configuration: { ...params.configuration, returnImmediately: true } };
    }
    const result = await super.sendMessage(params, context).catch((error: unknown) => rethrowWithStateNames(withConfigField(error, messageConfigAt(context)), context));
    refuseIfAsked(context);
    // A watch started without a stream: the SDK has stored its task, which the watch keeps current from here.
    if ('status' in result) this.#watchTasks?.taskStored(result.id, this.watches?.get(result.id));
    return tailoredResult(result, accepted);
  }

  override async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const accepted = requireMessageParams(params);
    params = withoutAnonymousPush(params, context);
    if (renewsWatch(params)) {
      yield { payload: { $case: 'task', value: tailoredTask(withHistoryLength(await this.#renew(params, context), params.configuration?.historyLength), accepted) } };
      return;
    }
    await this.#refuseOnOpenWatch(params, context);
    const events = super.sendMessageStream(params, context);
    // The executor decides before its first event: refuse before the stream starts, so the
    // client gets a plain error rather than a stream (v1.0; a v0.3 client gets the stream v0.3
    // defines, its one event the error: legacy-stream-errors.ts).
    const first = await events.next().catch((error: unknown) => rethrowWithStateNames(withConfigField(error, messageConfigAt(context)), context));
    try {
      refuseIfAsked(context);
    } catch (error) {
      await events.return(undefined);
      throw error;
    }
    if (first.done) return;
    const task = first.value.payload?.$case === 'task' ? first.value.payload.value : undefined;
    // The SDK's part is done (the task is stored): the watch keeps it current from here. One that
    // ended before (it expired, its webhook refused the initial matches) gets its end written now,
    // and this stream tells it: the SDK's events stopped after the WORKING task, telling no end.
    const started = task ? this.#watchTasks?.taskStored(task.id, this.watches?.get(task.id)) : undefined;
    if (task && started) {
      void events.return(undefined).catch(() => undefined);
      yield* this.#streamNewWatch(started, task, first.value, accepted);
      return;
    }
    const firstEvent = tailoredEvent(first.value, accepted);
    if (firstEvent) yield firstEvent;
    for await (const response of untilClosed(events, currentScope()?.closed, 'read')) {
      const event = tailoredEvent(response, accepted);
      if (event) yield event;
    }
  }

  /**
   * The stream of a watch that just started, after the SDK stored its task (`first`): told from
   * the watch itself, as a resumed one is (#followWatch), not from the SDK's events (the
   * executor publishes none after the task: see RegistryExecutor.publishWatch), so that what
   * keeps the stored task current does not depend on this stream being read: its initial
   * matches (unless `initial: false`), the events since it started, live ones, then its end.
   */
  async *#streamNewWatch(watch: Watch, task: Task, first: StreamResponse, accepted: AcceptedParts | undefined): AsyncGenerator<StreamResponse, void, undefined> {
    const firstEvent = tailoredEvent(first, accepted);
    if (firstEvent) yield firstEvent;
    const initial = watch.initialMatches();
    if (initial) {
      const results = tailoredEvent({ payload: { $case: 'artifactUpdate', value: watchResultsUpdate(task.id, task.contextId, initial) } }, accepted);
      if (results) yield results;
    }
    for await (const response of this.#followWatch(watch, task, 0, currentScope())) {
      const event = tailoredEvent(response, accepted);
      if (event) yield event;
    }
  }

  /**
   * GetExtendedAgentCard (v0.3 agent/getAuthenticatedExtendedCard, v0.3 gRPC GetAgentCard): the
   * registry has no extended card and its card says so (capabilities.extendedAgentCard false),
   * so A2A 3.3.4 makes this UnsupportedOperationError for every caller, as the SDK answers; its
   * "Agent does not support authenticated extended card." said nothing of where the card is.
   */
  override async getAuthenticatedExtendedAgentCard(params: GetExtendedAgentCardRequest, context: ServerCallContext): Promise<AgentCard> {
    if (this.#offersExtendedCard) return super.getAuthenticatedExtendedAgentCard(params, context);
    throw new UnsupportedOperationError(
      'The registry has no extended agent card (its card says "capabilities": {"extendedAgentCard": false}; v0.3: "supportsAuthenticatedExtendedCard": false): the public card at /.well-known/agent-card.json is the whole card, for every caller, authenticated or not.',
    );
  }

  /** GetTask: the SDK's, with historyLength checked (the SDK takes a negative one as 0, a fraction or NaN as "all"). */
  override async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    requireTaskId(params.id, 'id', context);
    requireInteger('historyLength', params.historyLength, HISTORY_LENGTH);
    return explained(super.getTask(params, context), context);
  }

  /**
   * ListTasks: the SDK's, with historyLength checked as GetTask's, pageSize as the HTTP doors check
   * it (the SDK's own check, all gRPC had, named no field), a status A2A does not have named as
   * such, and statusTimestampAfter a real timestamp; on gRPC, a page no larger than its clients
   * receive (grpc/answer-limit.ts).
   */
  override async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    requireInteger('historyLength', params.historyLength, HISTORY_LENGTH);
    requireInteger('pageSize', params.pageSize, TASKS_PAGE_SIZE);
    // The SDK reads an unknown state name as -1 and answered "Invalid status filter: -1".
    if (params.status !== undefined && taskStateToJSON(params.status) === 'UNRECOGNIZED') {
      throw new RequestMalformedError({ message: `status is not a task state: use one of ${TASK_STATE_NAMES.join(', ')}.`, metadata: { field: 'status' } });
    }
    requireTimestamp('statusTimestampAfter', params.statusTimestampAfter);
    // Cut short where the binding's clients would refuse the answer (gRPC: grpc/answer-limit.ts).
    return fitPage(await super.listTasks(params, context), currentScope()?.answerLimit);
  }

  /** CreateTaskPushNotificationConfig: the SDK's, on the replica that runs the task's watch (see #bringWatchHere), for a watch only. */
  override async createTaskPushNotificationConfig(params: TaskPushNotificationConfig, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    requireTaskId(params.taskId, 'taskId', context);
    const task = await this.#bringWatchHere(params.taskId, context);
    if (task) refuseConfigOfTask(task, context);
    // v1.0 sends the config as the params (its fields are named so already); v0.3 inside them
    // (the SDK's v0.3 answers carry no ErrorInfo today; the name stays right for when they do).
    const at = context.requestedVersion === LEGACY_VERSION ? 'pushNotificationConfig.' : '';
    const created = await super.createTaskPushNotificationConfig(params, context).catch((error: unknown) => {
      throw withConfigField(explainNotFound(error, context), at);
    });
    // Answered as it is kept, and as Get and List answer it: under no tenant (PushConfigs.save).
    return { ...created, tenant: '' };
  }

  /** The state of the caller's task `taskId` when it has ended; undefined while it runs, or when the caller has no such task. */
  async #endedState(taskId: string, context: ServerCallContext): Promise<TaskState | undefined> {
    return endedStateOf(await this.#tasks.load(taskId, context));
  }

  /** ListTaskPushNotificationConfigs: the SDK's checks and configs, a page at a time (push-config-pages.ts). */
  override async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    requireTaskId(params.taskId, configTaskField(context), context);
    requireInteger('pageSize', params.pageSize, CONFIGS_PAGE_SIZE);
    await this.#bringWatchHere(params.taskId, context);
    const { configs } = await explained(super.listTaskPushNotificationConfigs(params, context), context);
    return configPage(params.taskId, configs, params.pageSize, params.pageToken);
  }

  /**
   * GetTaskPushNotificationConfig. v0.3's tasks/pushNotificationConfig/get also takes the task id
   * alone (TaskIdParams, A2A 0.3 7.4.1 and 7.6: "the push notification configuration for a
   * task"); the SDK's compatibility layer passed it on with an empty config id, which no config
   * has, so a v0.3 client that set a config was told it did not exist. Such a request gets the
   * task's config as v0.3 servers answer it: the one whose id is the task id (the id v0.3 servers
   * give a config set without one), else the first one listed. A v1.0 request names the config (id is
   * REQUIRED), and one that does not is invalid params rather than "config '' not found".
   *
   * A task that has ended has no configs left (they go with its final status): asked for one,
   * the answer says so (#configsRemoved), not TaskNotFound for a task that exists.
   */
  override async getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    requireTaskId(params.taskId, configTaskField(context), context);
    await this.#bringWatchHere(params.taskId, context);
    return this.#configOf(params, context).catch(async (error: unknown) => {
      if (!(error instanceof TaskNotFoundError)) throw error;
      throw (await this.#configsRemoved(params.taskId, context)) ?? explainNotFound(error, context);
    });
  }

  /**
   * A task's configs are dropped when it ends (a watch's with its definition; WatchPushes pushes
   * its final status first), so a config id the client was given moments before is gone. The
   * SDK's "Push notification config not found" is TaskNotFound, which v0.3 clients raise as a
   * task that does not exist: the error for a task that has ended says so instead. undefined
   * while the task runs, or when the caller has no such task.
   */
  async #configsRemoved(taskId: string, context: ServerCallContext): Promise<Error | undefined> {
    const ended = await this.#endedState(taskId, context);
    if (ended === undefined) return undefined;
    return new UnsupportedOperationError(
      `Task ${taskId} has ended (${stateName(ended, context)}): its push notification configs were removed when it ended, after its final status was pushed to them, and nothing more will be sent. Deleting them is not needed (it succeeds); to be notified again, start a new watch with a config.`,
    );
  }

  /** The config GetTaskPushNotificationConfig asks for (see there). */
  async #configOf(params: GetTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    if (params.id) return super.getTaskPushNotificationConfig(params, context);
    if (context.requestedVersion !== LEGACY_VERSION) {
      throw new RequestMalformedError({
        message: 'id is required: the id of the push notification config to get (ListTaskPushNotificationConfigs lists a task\'s configs).',
        metadata: { field: 'id' },
      });
    }
    const { configs } = await this.listTaskPushNotificationConfigs({ tenant: params.tenant, taskId: params.taskId, pageSize: 0, pageToken: '' }, context);
    const config = configs.find((c) => c.id === params.taskId) ?? configs[0];
    if (!config) throw new TaskNotFoundError(`Push notification config not found: task ${params.taskId} has none.`);
    return config;
  }

  /**
   * DeleteTaskPushNotificationConfig of a config the task does not have is refused as
   * GetTaskPushNotificationConfig refuses it, with TaskNotFoundError (A2A 3.1.8: the error for a
   * push config that does not exist); the SDK answered success. Deleting stays idempotent
   * (3.1.10): a second delete changes nothing either, and says the config is not there.
   *
   * On a task that has ended it succeeds, whatever config it names: the registry removed the
   * task's configs when it ended, so the cleanup a client does after a watch ends has nothing
   * left to do, and is not told that a config it was given, or its task, does not exist.
   */
  override async deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<void> {
    requireTaskId(params.taskId, configTaskField(context), context);
    if (!params.id) {
      // v0.3's delete without pushNotificationConfigId means the config set without an id, which
      // has the task's id (the v0.3 SDK's servers deleted that one); v1.0's id is REQUIRED.
      if (context.requestedVersion !== LEGACY_VERSION) {
        throw new RequestMalformedError({
          message: 'id is required: the id of the push notification config to delete (ListTaskPushNotificationConfigs lists a task\'s configs).',
          metadata: { field: 'id' },
        });
      }
      params = { ...params, id: params.taskId };
    }
    if (endedStateOf(await this.#bringWatchHere(params.taskId, context)) !== undefined) {
      await super.deleteTaskPushNotificationConfig(params, context);
      return;
    }
    // The SDK's checks (capability, task id, the caller's task), then the config's (the SDK's
    // get, not ours: a v0.3 delete by task id deletes the config of that id, not the first one).
    await explained(super.getTaskPushNotificationConfig({ tenant: params.tenant, taskId: params.taskId, id: params.id }, context), context);
    await super.deleteTaskPushNotificationConfig(params, context);
  }

  /**
   * SubscribeToTask: the SDK's checks and the current task; then for a watch, served from the
   * watch itself, the events after the last one the client says it has (Last-Event-ID, see
   * watch-resume.ts; all those kept when it says none), or a `resync` with the current matches
   * when they are no longer kept, then live events, and the final status when the watch ends —
   * whether or not an executor still runs the task (after a restart none does). Any other task:
   * the SDK's live events.
   */
  override async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    requireTaskId(params.id, 'id', context);
    const events = super.resubscribe(params, context);
    const first = await events.next().catch((error: unknown) => rethrowWithStateNames(error, context));
    if (first.done) return;
    const task = first.value.payload?.$case === 'task' ? first.value.payload.value : undefined;
    // A watch another replica runs moves here, where its client is.
    const watch = task ? (this.watches?.get(task.id) ?? (task.status?.state === TaskState.TASK_STATE_WORKING ? await this.watches?.adopt(task.id) : undefined)) : undefined;
    const end = task && !watch ? await this.#endStoredMeanwhile(task, context) : undefined;
    if (task && end) {
      void events.return(undefined).catch(() => undefined);
      yield first.value;
      yield { payload: { $case: 'statusUpdate', value: { taskId: task.id, contextId: task.contextId, status: end, metadata: undefined } } };
      return;
    }
    // Waiting out its back-off after failing to run: nothing runs it, so nothing would follow.
    // Before, the client got the WORKING task and a stream that told nothing.
    const pausedUntil = task && !watch ? await this.#pausedUntil(task) : undefined;
    if (task && pausedUntil !== undefined) {
      void events.return(undefined).catch(() => undefined);
      yield first.value;
      throw watchPaused(task.id, pausedUntil);
    }
    if (!watch || !task) {
      yield first.value;
      for await (const response of untilClosed(events, currentScope()?.closed, 'dropped')) yield response;
      return;
    }
    void events.return(undefined).catch(() => undefined);
    const after = resumeAfter(context, watch);
    yield first.value;
    yield* this.#followWatch(watch, task, after, currentScope());
  }

  /**
   * The final status of watch task `task`, read WORKING, when its watch ended here meanwhile (it
   * expired or failed as the task was read): its end, already told to its streams and webhooks,
   * was still being stored. Undefined for a task still running (or never a watch's: only a
   * watch's task stays WORKING). Without it, a SubscribeToTask in that moment got the WORKING
   * task and a stream that ended telling no end.
   */
  async #endStoredMeanwhile(task: Task, context: ServerCallContext): Promise<Task['status']> {
    if (task.status?.state !== TaskState.TASK_STATE_WORKING || !this.#watchTasks) return undefined;
    await this.#watchTasks.settled(task.id);
    const status = (await this.#tasks.load(task.id, context))?.status;
    return status && TERMINAL.has(status.state) ? status : undefined;
  }

  /**
   * CancelTask: the SDK's, and the watch the task runs ends too (after a restart no executor
   * runs it, and the SDK only marks the task CANCELED).
   */
  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    requireTaskId(params.id, 'id', context);
    // Loaded once for both checks below (a durable read for a watch's task). The SDK loads it
    // again, after the watch has ended, to answer with its final status: that load stays.
    const stored = await this.#tasks.load(params.id, context);
    refuseCancelOfEndedTask(params.id, stored, context);
    // A watch another replica runs moves here first and ends here, its final status pushed: it
    // went on running there, pushing to its webhooks under a CANCELED task (and counted against
    // the principal's watches) until it expired. One that replica keeps (a client streams it
    // there) loses its definition, and that replica ends it, told at once (WatchHub.cancel), or
    // at its next lease renewal.
    const where = await this.#adoptWatch(stored);
    // Ended first, its status stored (watch-task.ts): the SDK then answers with that task, the
    // status its streams and webhooks get too. (Canceled by the SDK first, the task got a
    // status message of the SDK's making, the streams and webhooks each another.)
    if (where === 'here') await this.watches!.cancel(params.id);
    // Kept elsewhere: its final status is stored here, before its definition goes, and the
    // replica that runs it ends it with that one (WatchHub.readEndsWith). Before, the SDK stored a
    // status of its own, and that replica closed the watch: its streams ended with no final
    // status, its webhooks got none.
    else if (where === 'elsewhere') await this.#watchTasks?.storeEnd(this.#tasks.scopeOf(context), params.id, canceledEnd());
    // Also when the watch had just ended here by itself (expired, failed): its final status,
    // already pushed, is still being stored. Marked CANCELED by the SDK meanwhile, the task said
    // CANCELED to CancelTask and GetTask while the webhooks and streams had been told COMPLETED;
    // stored first, the SDK refuses the cancel of a finished task (TaskNotCancelableError).
    await this.#watchTasks?.settled(params.id);
    const task = await explained(super.cancelTask(params, context), context);
    // Its end is the status answered (stored above): the replica running it ends it with that,
    // or this one does, when that replica released it meanwhile.
    await this.watches?.cancel(task.id, where === 'elsewhere' ? (watchEndOf(task.status) ?? canceledEnd()) : undefined);
    // Marked CANCELED by the SDK (the watch ran nowhere): kept as an ended watch's task is when
    // it ends here, without its matches.
    if (where !== 'here' && this.#watchTasks && holdsWatchMatches(task)) {
      return (await this.#watchTasks.update(this.#tasks.scopeOf(context), task.id, dropWatchMatches)) ?? task;
    }
    return task;
  }

  /**
   * A watch's push configs live where the watch runs (in that replica's memory, and with its
   * definition in storage). Created, listed, read or deleted on another replica (a load balancer
   * without affinity), they were that replica's alone: a config was acknowledged and never
   * pushed to, the watch's own configs were neither listed nor deletable there. The watch moves
   * here first, as for SubscribeToTask (WatchHub.adopt: handed over unless a client streams it
   * where it runs; then the request is refused, saying where to send it).
   */
  async #bringWatchHere(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const task = await this.#tasks.load(taskId, context);
    if ((await this.#adoptWatch(task)) !== 'elsewhere') return task;
    // Run nowhere, waiting out its back-off after failing to run: said so, not that another replica streams it.
    const pausedUntil = await this.#pausedUntil(task);
    if (pausedUntil !== undefined) throw watchPaused(taskId, pausedUntil);
    throw new UnsupportedOperationError(
      `Task ${taskId} is a watch another replica runs while a client streams it from there, so its push notification configs cannot be read or changed here: retry once that stream has ended, or send the request to the replica the stream is on.`,
    );
  }

  /**
   * Moves the open watch of `task` (the caller's task as loaded: undefined when unknown) here if
   * another replica runs it: 'here' when it runs here now, 'elsewhere' when it runs on another
   * replica that did not hand it over (a client streams it there), 'none' when the task runs no
   * open watch. Given the task its caller loaded, so that the caller's checks of it cost no
   * second load (a durable read for a watch's task, whose cached copy may be outdated).
   */
  async #adoptWatch(task: Task | undefined): Promise<'here' | 'elsewhere' | 'none'> {
    // Only a watch's task stays WORKING; an unknown (or another principal's) task is the SDK's
    // TaskNotFound, also when the watch runs here (CancelTask ends a watch that is 'here').
    if (!this.watches || task?.status?.state !== TaskState.TASK_STATE_WORKING) return 'none';
    if (this.watches.get(task.id)) return 'here';
    if (await this.watches.adopt(task.id)) return 'here';
    return (await this.watches.isOpenAnywhere(task.id)) ? 'elsewhere' : 'none';
  }

  /** When the watch of WORKING task `task`, waiting after it failed to run, runs again (WatchHub.pausedUntil); undefined when it does not wait. */
  async #pausedUntil(task: Task | undefined): Promise<number | undefined> {
    if (!task || task.status?.state !== TaskState.TASK_STATE_WORKING) return undefined;
    return this.watches?.pausedUntil(task.id);
  }

  /**
   * A watch's events for one subscriber: those after event `after` (the last it has; 0: none),
   * then live ones, until the watch ends or the client leaves (`scope`: the request's).
   */
  async *#followWatch(watch: Watch, task: Task, after: number, scope: RequestScope | undefined): AsyncGenerator<StreamResponse, void, undefined> {
    const closed = scope?.closed;
    if (scope) scope.followsWatch = true;
    const update = (event: Parameters<typeof watchEventUpdate>[2]): StreamResponse => ({
      payload: { $case: 'artifactUpdate', value: watchEventUpdate(task.id, task.contextId, event) },
    });
    const detach = watch.attachClient();
    // Missed events first, then the listener: both synchronous, so no event falls between them.
    const queue = watch.eventsAfter(after);
    let wake: (() => void) | undefined;
    const stop = watch.listen((event) => {
      queue.push(event);
      wake?.();
    });
    const onClose = () => wake?.();
    closed?.addEventListener('abort', onClose, { once: true });
    let ended = false;
    const unEnded = watch.whenEnded(() => {
      ended = true;
      wake?.();
    });
    try {
      for (;;) {
        while (queue.length > 0) {
          yield update(queue.shift()!);
        }
        if (closed?.aborted) return;
        if (ended) {
          const end = await watch.ended;
          // This replica lost the watch (WatchHub.#stopLost): an error the client can read, saying
          // so and to subscribe again, where the stream used to end with no status, as at a shutdown.
          if (end.streams === 'lost') throw watchLost(end.message);
          // Told to the door, whose binding may say it (gRPC: UNAVAILABLE, not OK); the stream ends with no final state.
          if (end.resume && scope) scope.watchStreamEnd = { reason: end.resume, message: end.message, ...(end.resumeAfterSeconds === undefined ? {} : { retryAfterSeconds: end.resumeAfterSeconds }) };
          const status = watchEndStatus(task.id, task.contextId, end.streams ?? end);
          // Told once the task says it too: a client that reads the task on seeing the end finds it ended.
          await this.#watchTasks?.settled(task.id);
          if (status) yield { payload: { $case: 'statusUpdate', value: { taskId: task.id, contextId: task.contextId, status, metadata: undefined } } };
          return;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      stop();
      unEnded();
      detach();
      closed?.removeEventListener('abort', onClose);
    }
  }

  /**
   * `{"renew": {}}` sent on a watch's task (message.taskId): the watch runs for its time to
   * live from now. Answers with the task, whose metadata says the new expiry.
   */
  async #renew(params: SendMessageRequest, context: ServerCallContext): Promise<Task> {
    const message = params.message!;
    if (!message.messageId) throw new RequestMalformedError('message.messageId is required.');
    requireRenewal(message, partWords(context.requestedVersion === LEGACY_VERSION ? 'v0.3' : 'v1.0', currentScope()?.encoding));
    const taskId = message.taskId;
    const current = await this.#tasks.load(taskId, context);
    if (!current) throw explainNotFound(new TaskNotFoundError(`Task not found: ${taskId}`), context);
    // As the SDK answers any other message on a task (A2A 3.1.1, 3.4.1): a finished task takes
    // none (UnsupportedOperationError, not invalid params), and the message's contextId, when
    // given, must be the task's.
    refuseFinished(current, context);
    if (message.contextId && message.contextId !== current.contextId) {
      throw new RequestMalformedError(`contextId mismatch: message contextId '${message.contextId}' does not match task '${taskId}' contextId '${current.contextId}'.`);
    }
    // Counted only once it would be carried out: a renewal refused for what it is (malformed,
    // an unknown or finished task, no open watch) writes nothing.
    if (!(await this.watches?.isOpenAnywhere(taskId))) throw notAnOpenWatch(taskId);
    await this.#spendWriteBudget(current, context);
    const scope = this.#tasks.scopeOf(context);
    const expiresAt = await this.watches?.renew(taskId, scope);
    if (expiresAt === undefined) throw notAnOpenWatch(taskId);
    const until = new Date(expiresAt).toISOString();
    const renewed = await this.#watchTasks?.update(scope, taskId, (task) => {
      // The watch may have ended (canceled, expired, failed) since the task was loaded above: its
      // final status is written first (the task's writes are queued) and must stay the one every
      // stream, webhook and CancelTask's answer carry. Overwritten, GetTask showed a CANCELED task
      // whose status said "renewed", and the renewal was answered as if it had taken.
      refuseFinished(task, context);
      task.metadata = { ...task.metadata, ...watchMetadata(expiresAt) };
      task.status = {
        ...task.status!,
        message: {
          messageId: crypto.randomUUID(),
          contextId: task.contextId,
          taskId,
          role: Role.ROLE_AGENT,
          parts: [
            { content: { $case: 'text', value: `The watch was renewed; it now expires at ${until}.` }, metadata: undefined, filename: '', mediaType: 'text/plain' },
            { content: { $case: 'data', value: { renewed: { expiresAt: until } } }, metadata: undefined, filename: '', mediaType: 'application/json' },
          ],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
        timestamp: new Date().toISOString(),
      };
    });
    // Finished by then on another replica (CancelTask there, between the read and the save): the
    // storage kept that task, and the renewal is refused as on any finished task.
    if (renewed) refuseFinished(renewed, context);
    return renewed ?? current;
  }

  /**
   * A renewal writes (the watch's expiry, its task), so it is counted against the write budget,
   * per principal and per client address, as a registration is. Budgeted by nothing, any
   * principal renewed at the flood guard's rate (12,000 a minute per address, from any number
   * of addresses). Over the budget it is refused as a protocol error, not a task: its task is
   * the watch's, which a REJECTED status would have ended; the watch runs on unchanged.
   */
  async #spendWriteBudget(watchTask: Task, context: ServerCallContext): Promise<void> {
    const scope = currentScope();
    try {
      await this.#budgets?.admit('renew', callerOf(context, scope?.clientAddress));
    } catch (error) {
      if (!(error instanceof RegistryError) || error.retryAfterSeconds === undefined) throw error;
      // Named in the scope with its retry time: the v0.3 JSON-RPC answer and the gRPC status are
      // made from it (http/security.ts, grpc/call-guard.ts), the SDK's own dropping both.
      if (scope) {
        scope.errorCode = error.code;
        scope.retryAfterSeconds = error.retryAfterSeconds;
      }
      const until = watchTask.metadata?.watchExpiresAt;
      const unchanged = typeof until === 'string' ? `The watch was not renewed and runs unchanged until ${until}` : 'The watch was not renewed and runs unchanged';
      throw new RateLimitedA2AError(`${unchanged}: a renewal is a write, counted against the write budget. ${error.message}`, error.retryAfterSeconds);
    }
  }

  /**
   * A message sent on an open watch's task (message.taskId) that is no renewal: refused. The
   * SDK would run it as the task's next turn, publish a finished task over the watch's and leave
   * the watch running under a COMPLETED task that CancelTask can no longer end. Only watches
   * stay WORKING; a message on a finished task is the SDK's to refuse, on an unknown (or
   * another principal's) task its TaskNotFound.
   */
  async #refuseOnOpenWatch(params: SendMessageRequest, context: ServerCallContext): Promise<void> {
    const taskId = params.message?.taskId;
    if (!taskId) return;
    const task = await this.#tasks.load(taskId, context);
    if (task?.status?.state !== TaskState.TASK_STATE_WORKING) return;
    throw new RequestMalformedError(
      `Task ${taskId} is an open watch: the only message it takes is {"renew": {}}, which renews it. To search or register, send a message without taskId; to end the watch, use CancelTask.`,
    );
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
    // Time-ordered, unlike the SDK's v4: a durable task's row then goes at the end of the tasks
    // table's key and context indexes rather than on two random pages of each commit.
    const taskId = timeOrderedId();
    const contextId = message.contextId || timeOrderedId();
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
}

/**
 * The task as answered to a message whose configuration.historyLength is `length`: at most that
 * many of its latest messages, none for 0 (A2A 3.2.4; "the server MUST NOT return more messages
 * than the provided value"), as the SDK's path and #answerOneTurn answer. A renewal answered the
 * watch's whole history whatever the length. A copy: the stored task keeps its history.
 */
function withHistoryLength(task: Task, length: number | undefined): Task {
  if (length === undefined || task.history.length <= length) return task;
  return { ...task, history: length <= 0 ? [] : task.history.slice(-length) };
}

/** The task's state when it has ended; undefined while it runs, or for no task. */
function endedStateOf(task: Task | undefined): TaskState | undefined {
  const state = task?.status?.state;
  return state !== undefined && TERMINAL.has(state) ? state : undefined;
}

/**
 * CancelTask of a task that has already ended, CANCELED included, is TaskNotCancelableError
 * (A2A 3.1.5 and 3.3.2: "already completed, failed, or canceled"; the A2A reference SDKs and
 * TCK answer so). The SDK refuses the other final states but answered an already-CANCELED task
 * with success, as if this request had canceled it. Checked before anything else, on the
 * task as stored (CancelTask's own load): CancelTask then ends a watch first and relies on the SDK
 * answering the CANCELED task it finds (also when another CancelTask ends it meanwhile, which
 * is then one cancellation asked twice). An unknown (or another principal's) task is left to
 * the SDK's TaskNotFound.
 */
function refuseCancelOfEndedTask(taskId: string, task: Task | undefined, context: ServerCallContext): void {
  const ended = endedStateOf(task);
  if (ended === undefined) return;
  const getTask = context.requestedVersion === LEGACY_VERSION ? 'tasks/get' : 'GetTask';
  throw new TaskNotCancelableError(
    `Task ${taskId} is not cancelable: it has already ended (${stateName(ended, context)}), so there is nothing left to cancel; ${getTask} reads how it ended.`,
  );
}

/**
 * A push config is for a watch that runs: its matches come after its request is answered, and
 * are pushed. Any other task (a search, a registration, any other operation) is answered in its
 * response or stream and nothing is ever pushed for it, so a config for it is refused, whatever
 * its state: a streamed search is WORKING until its last chunk is stored (see untilClosed),
 * and checked only for having ended, a config created in that window was
 * acknowledged and listed for a task that would never push. A watch that has ended is refused too,
 * as a message to a finished task is (A2A 3.1.1: UnsupportedOperationError): no update of it will
 * come. (Before, the SDK acknowledged and listed such configs, and the client waited for
 * notifications.) An unknown (or another principal's) task is left to the SDK's TaskNotFound.
 */
function refuseConfigOfTask(task: Task, context: ServerCallContext): void {
  const start =
    context.requestedVersion === LEGACY_VERSION
      ? 'message/send with a {"watch": {...}} data part and configuration.pushNotificationConfig'
      : 'SendMessage with a {"watch": {...}} data part and configuration.taskPushNotificationConfig';
  const state = task.status ? stateName(task.status.state, context) : 'no state';
  if (!asksForWatch(task)) {
    throw new UnsupportedOperationError(
      `Task ${task.id} is not a watch (${state}): push notification configs are only for watches (standing searches), whose matches come after their request is answered. This task's answer comes in the response to its message (or its stream), nothing is pushed for it, and the config is not kept. To be notified of matches, start a watch with this config (${start}).`,
    );
  }
  const ended = endedStateOf(task);
  if (ended === undefined) return;
  throw new UnsupportedOperationError(
    `Task ${task.id} has ended (${stateName(ended, context)}): no update of it will come, so nothing would be pushed to this webhook, and the config is not kept. To be notified of matches, start a new watch with this config (${start}).`,
  );
}

/**
 * The events of `events` until the client's connection closes: a stream whose client left ends
 * at once (the SDK's loop would otherwise wait for the task's next event, and write it to no one).
 * What is left of them is then `left`: dropped (a subscription's events store nothing), or read to
 * no one (a message's: the SDK stores each event of its task as it is read, so a stream cut short,
 * its client gone or cut for not reading, left its task WORKING for GetTask though its answer had
 * been computed; read to the end, the task is stored as a client that read it all finds it).
 */
async function* untilClosed<T>(events: AsyncGenerator<T, void, undefined>, closed: AbortSignal | undefined, left: 'dropped' | 'read'): AsyncGenerator<T, void, undefined> {
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
    if (left === 'dropped') void events.return(undefined).catch(() => undefined);
    else void readToTheEnd(events);
  }
}

/**
 * Reads what is left of `events`, each event dropped. Every task whose message streams through
 * here finishes in one run (a watch's stream is told from the watch: #streamNewWatch), so this
 * ends once the executor has published the rest.
 */
async function readToTheEnd<T>(events: AsyncGenerator<T, void, undefined>): Promise<void> {
  try {
    while (!(await events.next()).done);
  } catch {
    // The SDK's loop failed (its task store refused an event): no client is left to be told.
  }
}

/** The task states a ListTasks status filter takes, by name. */
const TASK_STATE_NAMES = Object.values(TaskState)
  .filter((state): state is TaskState => typeof state === 'number' && state > TaskState.TASK_STATE_UNSPECIFIED)
  .map(taskStateToJSON);

/**
 * An RFC 3339 date-time (ISO 8601 with a time and a zone): what a google.protobuf.Timestamp is in
 * JSON (A2A 5.6.1). The SDK checked only that Date.parse read something, so "5" was May 2001,
 * "1" or `true` January 2001, "March 7" a day of 2001, and a time without a zone the server's
 * local time: each filtered silently, by a time the client never meant.
 */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/i;

/** Throws invalid params (-32602, HTTP 400, INVALID_ARGUMENT) naming `field` when a timestamp parameter is no RFC 3339 date-time. */
function requireTimestamp(field: string, value: string | undefined): void {
  if (value === undefined || value === '') return;
  if (TIMESTAMP.test(value) && !Number.isNaN(Date.parse(value))) return;
  throw new RequestMalformedError({
    message: `${field} must be a date and time in ISO 8601 (RFC 3339) with its time zone, e.g. "2026-01-31T09:30:00.000Z"; got ${quote(value, 64)}.`,
    metadata: { field },
  });
}

/** Where a v0.3 client gets a task's id, as the refusal of a request without one says (the v0.3 gRPC service's names too: grpc/legacy-names.ts). */
export const LEGACY_TASK_ID_SOURCE = 'message/send answers with it';

/**
 * The task a request names, REQUIRED: the SDK refused a missing or blank one with "Task ID is
 * required", naming no field where every other invalid-params refusal names its own. `field` is
 * the request's name for it. A v0.3 request is pointed at its own method (message/send) and not
 * at ListTasks, which v0.3 does not have.
 */
function requireTaskId(value: string | undefined, field: string, context: ServerCallContext): void {
  if (value && value.trim() !== '') return;
  const where = context.requestedVersion === LEGACY_VERSION ? LEGACY_TASK_ID_SOURCE : 'SendMessage answers with it; ListTasks lists them';
  throw new RequestMalformedError({ message: `${field} is required: the id of the task (${where}).`, metadata: { field } });
}

/** A push config method's name for the task: taskId (v1.0), id (v0.3's get, list and delete; its set is rewritten to v1.0's). */
const configTaskField = (context: ServerCallContext): string => (context.requestedVersion === LEGACY_VERSION ? 'id' : 'taskId');

/** Where a message carries its push config: v1.0's configuration.taskPushNotificationConfig, v0.3's configuration.pushNotificationConfig. */
const messageConfigAt = (context: ServerCallContext): string =>
  context.requestedVersion === LEGACY_VERSION ? 'configuration.pushNotificationConfig.' : 'configuration.taskPushNotificationConfig.';

/**
 * A push config's refusal naming its field where the caller sent the config (`at` and the field
 * within the config, e.g. configuration.taskPushNotificationConfig.token); any other error as it is.
 */
function withConfigField(error: unknown, at: string): unknown {
  const field = refusedConfigField(error);
  if (field === undefined || at === '') return error;
  return new RequestMalformedError({ message: (error as Error).message, metadata: { field: `${at}${field}` } });
}

/**
 * A task state as the caller's protocol generation names it, in the messages it is told: v1.0's
 * enum name (TASK_STATE_INPUT_REQUIRED), or for a v0.3 caller v0.3's (input-required), the only
 * one its TaskState has (v0.3 6.3); it was told TASK_STATE_COMPLETED for its "completed" task.
 */
function stateName(state: TaskState, context: ServerCallContext): string {
  const name = taskStateToJSON(state);
  if (context.requestedVersion !== LEGACY_VERSION) return name;
  return state === TaskState.TASK_STATE_UNSPECIFIED ? 'unknown' : name.replace(/^TASK_STATE_/, '').toLowerCase().replace(/_/g, '-');
}

/** Told with a push config the task does not have, after the method's name (explainNotFound). */
const LISTS_CONFIGS = "lists the ids of the task's configs";

/** Where a client finds its tasks, told with every "Task not found" (explainNotFound). */
const WHERE_TASKS_ARE =
  'A task is found only with the token that created it (one created without a token, by no later request), and the task of a read (search, get, list, validate) or of a refused request only for a while after it ran (at most REGISTRY_TASK_MEMORY_TTL_SECONDS, 15 minutes by default): send the token the task was created with, or send the request again for a new task';

/**
 * The SDK's TaskNotFoundError for a task ("Task not found: <id>") said nothing of why a task id
 * the client was given is not found, nor what to do. It now says where tasks are found, in the
 * same words for a task that never existed and another principal's (A2A 3.3.2: the existence of a
 * resource the caller may not access MUST NOT be revealed). The error itself, edited (its code
 * and reason stay); any other error as it is.
 */
function explainNotFound(error: unknown, context: ServerCallContext): unknown {
  if (!(error instanceof TaskNotFoundError)) return error;
  // The SDK's "Push notification config with id 'x' not found for task y." (a get or delete of a
  // config the task does not have) named no way to learn the ids the task has.
  if (/^Push notification config .*not found for task .*\.$/s.test(error.message) && !error.message.includes(LISTS_CONFIGS)) {
    const list = context.requestedVersion === LEGACY_VERSION ? 'tasks/pushNotificationConfig/list' : 'ListTaskPushNotificationConfigs';
    error.message = `${error.message} ${list} ${LISTS_CONFIGS}.`;
    return error;
  }
  if (!error.message.startsWith('Task not found: ') || error.message.includes(WHERE_TASKS_ARE)) return error;
  // ListTasks is v1.0's: v0.3 has no way to list tasks.
  const list = context.requestedVersion === LEGACY_VERSION ? '' : '; ListTasks lists the tasks of the token it is sent with';
  error.message = `${error.message.replace(/\.$/, '')}. ${WHERE_TASKS_ARE}${list}.`;
  return error;
}

/** `call`, its TaskNotFoundError explained (explainNotFound). */
const explained = <T>(call: Promise<T>, context: ServerCallContext): Promise<T> =>
  call.catch((error: unknown) => {
    throw explainNotFound(error, context);
  });

/**
 * Rethrows the SDK's refusal of a finished task ("Task … is in a terminal state (3) and cannot
 * be …", or "(TASK_STATE_COMPLETED)") with the state's name as the caller's generation says it,
 * which a client can read: TASK_STATE_COMPLETED (v0.3: completed), not 3; and what to do instead,
 * which the SDK's "and cannot be modified." / "and cannot be subscribed to." did not say.
 */
function rethrowWithStateNames(error: unknown, context: ServerCallContext): never {
  explainNotFound(error, context);
  if (error instanceof UnsupportedOperationError) {
    const getTask = context.requestedVersion === LEGACY_VERSION ? 'tasks/get' : 'GetTask';
    error.message = error.message
      .replace(/terminal state \((\d+|TASK_STATE_[A-Z_]+)\)/, (_, state: string) => {
        const value = /^\d+$/.test(state) ? Number(state) : taskStateFromJSON(state);
        return `terminal state (${stateName(value, context)})`;
      })
      .replace(
        /\) and cannot be modified\.$/,
        ') and cannot be modified: a task that has ended takes no more messages. Send the message without taskId to start a new task (with the same contextId to stay in its context).',
      )
      .replace(/\) and cannot be subscribed to\.$/, `) and cannot be subscribed to: it has ended, so no update of it will come. ${getTask} reads how it ended.`);
  }
  throw error;
}

/**
 * A message's parameters the SDK takes as they come, checked before anything runs (A2A 3.3.2),
 * alike on every binding:
 * - the message itself and its messageId (message-required.ts);
 * - its ids (messageId, contextId, taskId, referenceTaskIds): at most MAX_CLIENT_ID_CHARS, printable (message-fields.ts);
 * - configuration.historyLength;
 * - the role, which is REQUIRED (A2A 4.1.4): the SDK read a v1.0 message without a role, or with
 *   an unknown one ("ROLE_BOGUS", 5), as it came; its v0.3 reader already refuses one that is
 *   not "user" or "agent", and this says it alike;
 * - a push config, only with a watch;
 * - configuration.acceptedOutputModes, which must accept a part the registry answers with: the
 *   parts the answer keeps (undefined: all), see output-modes.ts.
 */
function requireMessageParams(params: SendMessageRequest): AcceptedParts | undefined {
  requireMessage(params.message);
  requireMessageIds(params.message);
  requireInteger('configuration.historyLength', params.configuration?.historyLength, HISTORY_LENGTH);
  const role = params.message.role;
  if (role !== Role.ROLE_USER && role !== Role.ROLE_AGENT) {
    throw new RequestMalformedError({
      message: 'message.role must be "ROLE_USER" or "ROLE_AGENT": a message from a client is "ROLE_USER" (v0.3: "user").',
      metadata: { field: 'message.role' },
    });
  }
  // Push notifications are for standing searches: any other operation's answer is in the
  // response, and the SDK POSTed each of its events to the URL given (a dozen for a streamed
  // search), so any caller could make the registry send requests for it, many per request.
  if (params.configuration?.taskPushNotificationConfig && !startsWatch(params)) {
    throw new RequestMalformedError({
      message:
        'configuration.taskPushNotificationConfig is for a standing search ({"watch": {...}}), whose events it receives; the answer to any other message comes in its response. Leave it out, or start a watch (a webhook is added to a watch already open with CreateTaskPushNotificationConfig on its task).',
      metadata: { field: 'configuration.taskPushNotificationConfig' },
    });
  }
  return acceptedParts(params.configuration?.acceptedOutputModes);
}

/**
 * The message without its push config when the caller has no token. A watch needs one (the
 * executor refuses it UNAUTHENTICATED, in the task, as any anonymous watch), but the SDK saves
 * the config first: the registry resolved the webhook's host for anyone (and said what it
 * resolves to, internal names included) and POSTed the refused task to it, with the token and
 * credentials the caller chose, once per request.
 */
function withoutAnonymousPush(params: SendMessageRequest, context: ServerCallContext): SendMessageRequest {
  if (!params.configuration?.taskPushNotificationConfig || context.user?.isAuthenticated) return params;
  return { ...params, configuration: { ...params.configuration, taskPushNotificationConfig: undefined } };
}

/** The message renews a watch: `{"renew": {...}}` in a data part, sent on the watch's task. */
function renewsWatch(params: SendMessageRequest): boolean {
  return Boolean(params.message?.taskId) && (params.message?.parts ?? []).some((part) => part.content?.$case === 'data' && Object.hasOwn(part.content.value ?? {}, 'renew'));
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

const notAnOpenWatch = (taskId: string) =>
  new RequestMalformedError(`Task ${taskId} is not an open watch: only a watch's task can be renewed ({"renew": {}} with message.taskId set to it). Start a new watch instead.`);

/** The error that ends the streams of a watch this replica lost (`message` says so, and to subscribe again): retryable, STORAGE_UNAVAILABLE. */
function watchLost(message: string): StorageUnavailableA2AError {
  // Named in the request's scope, as other storage refusals are: the v0.3 JSON-RPC and gRPC answers read the reason from there.
  const scope = currentScope();
  if (scope) scope.errorCode = STORAGE_UNAVAILABLE_REASON;
  return new StorageUnavailableA2AError(message);
}

/**
 * The answer to a request for watch `taskId` while it waits, run nowhere, until `until` after
 * failing to run (WatchHub.pausedUntil): retryable (STORAGE_UNAVAILABLE, as a lost watch's),
 * Retry-After the seconds left, saying when it runs again.
 */
function watchPaused(taskId: string, until: number): StorageUnavailableA2AError {
  const seconds = Math.max(1, Math.ceil((until - Date.now()) / 1000));
  const scope = currentScope();
  if (scope) {
    scope.errorCode = STORAGE_UNAVAILABLE_REASON;
    scope.retryAfterSeconds = seconds;
  }
  return new StorageUnavailableA2AError(
    `The watch of task ${taskId} is paused: the registry failed to run it (an internal failure; the registry's log has the details) and runs it again at ${new Date(until).toISOString()}, in ${seconds} s. Retry then (SubscribeToTask with Last-Event-ID to resume the stream); after ${RUN_RETRY.attempts} failures in a row it ends FAILED, its task saying so.`,
    STORAGE_UNAVAILABLE_REASON,
    seconds,
  );
}

function refuseIfAsked(context: ServerCallContext): void {
  const refusal = takeProtocolRefusal(context);
  if (refusal) throw new StorageUnavailableA2AError(refusal.message, refusal.code, refusal.retryAfterSeconds);
}

/**
 * A renewal on a finished task is refused as any message on one is (A2A 3.1.1:
 * UnsupportedOperationError), saying whether it was a watch.
 */
function refuseFinished(task: Task, context: ServerCallContext): void {
  if (!task.status || !TERMINAL.has(task.status.state)) return;
  // Only a watch's task carries its expiry: another finished task (a registration) never was one.
  const wasWatch = task.metadata?.watchExpiresAt !== undefined;
  throw new UnsupportedOperationError(
    `Task ${task.id} is in a terminal state (${stateName(task.status.state, context)}): ${wasWatch ? 'it is not an open watch any more' : 'it is not a watch\'s task'} and cannot be renewed. Start a new watch instead.`,
  );
}
