/**
 * The registry's AgentExecutor: every incoming message is parsed into one operation, routed to
 * its handler, and answered as a task. Success ends COMPLETED with one artifact; a declined
 * request ends REJECTED with the contract's error data part; a bug ends FAILED without leaking
 * internals. Non-streaming answers publish the finished task as one event (one task-store
 * write); streaming answers publish the artifact in chunks as they are produced.
 *
 * Where a task lives is decided here (TaskPlacement): accepted writes that changed something are
 * kept durably, every other task (reads, refusals, writes that changed nothing) in bounded memory. When storage is unavailable the request is
 * not answered with a task but with a protocol error (HTTP 503 / a JSON-RPC error): the
 * executor leaves the refusal for the door's request handler (`takeProtocolRefusal`).
 */
import { Role, TaskState, taskStateToJSON, type Artifact, type Message, type Part, type Task, type TaskArtifactUpdateEvent, type TaskStatus } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext, type ServerCallContext } from '@a2a-js/sdk/server';
import { v4 as uuidv4 } from 'uuid';
import type { Caller } from '../contract/caller.js';
import { RegistryError, rootedAt } from '../contract/errors.js';
import type { ErrorBody, SearchHit, WatchEvent } from '../contract/types.js';
import type { Logger } from '../observability/logger.js';
import type { TaskRow } from '../storage/types.js';
import type { WatchEnd } from '../subscriptions/watch-hub.js';
import { currentScope } from '../observability/request-scope.js';
import { isStreamed, isWatch, type Answer, type StreamedAnswer, type WatchAnswer } from './answer.js';
import type { OperationName } from './operation.js';
import { operationArgumentsPath, parseRequest } from './request-parser.js';
import { partWords, type MessageGeneration } from './part-words.js';
import type { OperationRunner } from './runner.js';
import { describeHits, describeWatchEvent, refusalText } from './summaries.js';
import type { TaskPlacement } from './task-placement.js';

/** The artifact each watch event is sent in (one update per event; each replaces the previous in the task). */
export const WATCH_EVENT_ARTIFACT = 'watch-event';
/** The artifact a watch's current matches are sent in (first, and never replaced). */
export const WATCH_RESULTS_ARTIFACT = 'watch-results';

/** A watch event as the artifact update that carries it (the executor's stream and a resumed one alike). */
export function watchEventUpdate(taskId: string, contextId: string, event: WatchEvent): TaskArtifactUpdateEvent {
  return {
    taskId,
    contextId,
    artifact: {
      artifactId: WATCH_EVENT_ARTIFACT,
      name: WATCH_EVENT_ARTIFACT,
      description: '',
      parts: [dataPart({ ...event }), textPart(describeWatchEvent(event))],
      metadata: undefined,
      extensions: [],
    },
    append: false,
    lastChunk: false,
    metadata: undefined,
  };
}

/** A watch's current matches as the `watch-results` artifact update (one chunk). */
export function watchResultsUpdate(taskId: string, contextId: string, current: { results: SearchHit[]; total: number }): TaskArtifactUpdateEvent {
  return {
    taskId,
    contextId,
    artifact: {
      artifactId: WATCH_RESULTS_ARTIFACT,
      name: WATCH_RESULTS_ARTIFACT,
      description: '',
      parts: [dataPart({ ...current }), textPart(describeHits(current.results, current.total, 0))],
      metadata: undefined,
      extensions: [],
    },
    append: false,
    lastChunk: true,
    metadata: undefined,
  };
}

/** A watch task's metadata: when the watch expires unless renewed. */
export function watchMetadata(expiresAt: number): Record<string, unknown> {
  return { watchExpiresAt: new Date(expiresAt).toISOString() };
}

/**
 * The final status of a watch's task: CANCELED when canceled, COMPLETED when it expired, FAILED
 * when its push notifications failed for good; none when the registry shut down (the watch is
 * restored after the restart). Its message id and time are the end's own, so the stored task,
 * every stream and every webhook tell the same status.
 */
export function watchEndStatus(taskId: string, contextId: string, end: WatchEnd): TaskStatus | undefined {
  if (end.reason === 'closed') return undefined;
  const state = end.reason === 'canceled' ? TaskState.TASK_STATE_CANCELED : end.reason === 'failed' ? TaskState.TASK_STATE_FAILED : TaskState.TASK_STATE_COMPLETED;
  return {
    state,
    message: {
      messageId: end.messageId,
      contextId,
      taskId,
      role: Role.ROLE_AGENT,
      parts: [textPart(end.message)],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    timestamp: end.at,
  };
}

/**
 * The end a watch's stored final status tells (watchEndStatus's inverse: the same message id,
 * time and text), for the replica that runs a watch another one canceled; undefined while the
 * task has not finished, or finished as no watch ends.
 */
export function watchEndOf(status: TaskStatus | undefined): WatchEnd | undefined {
  const reason = status && END_REASONS.get(status.state);
  const text = status?.message?.parts.find((part) => part.content?.$case === 'text')?.content;
  if (!reason || !status?.message || text?.$case !== 'text') return undefined;
  return { reason, message: text.value, at: status.timestamp ?? new Date().toISOString(), messageId: status.message.messageId };
}

const END_REASONS: ReadonlyMap<TaskState, WatchEnd['reason']> = new Map([
  [TaskState.TASK_STATE_CANCELED, 'canceled'],
  [TaskState.TASK_STATE_FAILED, 'failed'],
  [TaskState.TASK_STATE_COMPLETED, 'expired'],
]);

/**
 * The A2A generation of a request: the door writes the negotiated version into the header the
 * SDK reads, and the SDK's context keeps it ("0.3" for a request without one, A2A 3.6.2).
 */
const generationOf = (ctx: OneTurn): MessageGeneration => (ctx.context.requestedVersion === '0.3' ? 'v0.3' : 'v1.0');

/** Writes whose accepted answer is kept durably (the task carries the acknowledgement). */
const DURABLE_OPERATIONS: ReadonlySet<OperationName> = new Set(['register', 'unregister', 'refresh']);

/**
 * A write that changed nothing (a registration or refresh answered `"changed": false`: the
 * document as stored) acknowledges nothing written, so its task is kept as a read's, in bounded
 * memory: stored, each re-sent card added a row holding the whole document, and one principal
 * could push everyone's acknowledgements out of REGISTRY_TASK_RETENTION_COUNT.
 */
const changedNothing = (answer: Answer): boolean => answer.data.changed === false;

/** Refusals that are not the request's fault and end in a protocol error (503 + Retry-After), not a task. */
const RETRY_LATER_CODES: ReadonlySet<string> = new Set(['STORAGE_UNAVAILABLE', 'STARTING_UP']);

/** Refusals that must reach the client as a protocol error, per call (see takeProtocolRefusal). */
const protocolRefusals = new WeakMap<ServerCallContext, RegistryError>();

/**
 * The caller of a request, at client `address` (rate limits key on it): the door put a Caller on
 * the SDK's user (protocol/sdk-user.ts); anything else is anonymous.
 */
export function callerOf(context: ServerCallContext, address: string | undefined): Caller {
  const user = context.user as { caller?: Caller } | undefined;
  return user?.caller ? { ...user.caller, address } : { isAdmin: false, address };
}

/**
 * The refusal the executor left for this call (STORAGE_UNAVAILABLE), once: the door's request
 * handler turns it into a protocol error instead of returning the task.
 */
export function takeProtocolRefusal(context: ServerCallContext): RegistryError | undefined {
  const refusal = protocolRefusals.get(context);
  protocolRefusals.delete(context);
  return refusal;
}

export interface ExecutorOptions {
  maxDocumentBytes: number;
  /** Deepest nesting accepted in an uploaded document (file parts bypass the body's depth check). */
  maxJsonDepth?: number;
  /** Longest search query (REGISTRY_MAX_QUERY_CHARS). */
  maxQueryChars?: number;
}

/**
 * What a run reads of the SDK's RequestContext. The door's one-turn path passes just this: the
 * SDK's RequestContext deep-clones the whole request (an uploaded card included) on construction.
 */
export type OneTurn = Pick<RequestContext, 'request' | 'taskId' | 'contextId' | 'userMessage' | 'context' | 'task'>;

/** Where a run's events go: the SDK's event bus, or the finished task's collector. */
type Publish = (event: AgentExecutionEvent) => void;

const dataPart = (value: Record<string, unknown>): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});
const textPart = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });

export class RegistryExecutor implements AgentExecutor {
  constructor(
    private readonly operations: OperationRunner,
    private readonly options: ExecutorOptions,
    private readonly log: Logger,
    /** Where tasks are kept; without it every task goes wherever the task store puts it. */
    private readonly tasks?: TaskPlacement,
  ) {}

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    try {
      await this.#run(ctx, (event) => bus.publish(event), currentScope()?.streaming ?? false);
    } finally {
      bus.finished();
    }
  };

  /**
   * The finished task of a non-streaming message, without an event bus: what `execute` would
   * publish as its one event (the door's request handler answers one-turn messages this way,
   * see protocol/registry-request-handler.ts). Without streaming no operation answers with a
   * stream or a watch, so a run publishes exactly one task event.
   */
  async finishedTask(ctx: OneTurn): Promise<Task> {
    let finished: Task | undefined;
    await this.#run(ctx, (event) => {
      if (event.kind === 'task') finished = event.data;
    }, false);
    if (!finished) throw new Error('the executor finished without a task');
    return finished;
  }

  async #run(ctx: OneTurn, publish: Publish, streaming: boolean): Promise<void> {
    const scope = currentScope();
    const task: Task = {
      id: ctx.taskId,
      contextId: ctx.contextId,
      status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
      artifacts: [],
      history: [ctx.userMessage],
      metadata: undefined,
    };
    if (!ctx.task) this.tasks?.opened(task.id);
    let acknowledged = false;
    /** The task's row, committed with the write it acknowledges (none for an anonymous caller's). */
    let acknowledgement: TaskRow | undefined;
    /** Where the message has the operation's arguments, for the registry's findings of them (relative to them). */
    let argumentsAt: string | undefined;
    try {
      const generation = generationOf(ctx);
      const operation = parseRequest(ctx.userMessage, {
        maxDocumentBytes: this.options.maxDocumentBytes,
        maxJsonDepth: this.options.maxJsonDepth,
        maxQueryChars: this.options.maxQueryChars,
        generation,
        encoding: scope?.encoding,
      });
      if (scope) scope.operation = operation.op;
      argumentsAt = operationArgumentsPath(ctx.userMessage, operation.op, partWords(generation, scope?.encoding));
      const tasks = this.tasks;
      const durable = DURABLE_OPERATIONS.has(operation.op);
      // A durable task is finished inside the write it acknowledges, when the store can write its
      // row in that write's transaction: one commit (and one sync) for both, not two in a row.
      const acknowledge =
        tasks && durable
          ? (answer: Answer) => {
              this.finish(task, answer);
              acknowledged = true;
              return changedNothing(answer) ? undefined : (acknowledgement = tasks.acknowledgementRow(task, ctx.context));
            }
          : undefined;
      const result = await this.operations.run(operation, callerOf(ctx.context, scope?.clientAddress), {
        streaming,
        taskId: task.id,
        contextId: task.contextId,
        pushConfigured: ctx.request.configuration?.taskPushNotificationConfig !== undefined,
        taskScope: tasks?.scopeOf(ctx.context),
        acknowledge,
      });
      const wroteNothing = !isWatch(result) && !isStreamed(result) && changedNothing(result);
      if (durable && !wroteNothing) tasks?.keepDurably(task.id);
      if (acknowledgement) tasks?.keptWithWrite(task.id, acknowledgement);
      let logged = 'COMPLETED';
      if (isWatch(result)) logged = await this.publishWatch(task, result, publish);
      else if (isStreamed(result)) await this.publishStreamed(task, result, publish);
      // Finished as committed: the answer is the task whose row is stored.
      else if (acknowledged) publish(AgentEvent.task(task));
      else this.publishFinished(task, result, publish);
      if (scope) scope.taskState = logged;
    } catch (err) {
      // A write that failed after its task was finished inside it committed nothing of either.
      if (acknowledged) task.artifacts = [];
      if (err instanceof RegistryError && RETRY_LATER_CODES.has(err.code)) {
        // Not the request's fault, and not a task worth keeping: the door answers with a protocol
        // error, saying when to retry as the refusal does (the gRPC and v0.3 answers read it here).
        protocolRefusals.set(ctx.context, err);
        this.tasks?.answeredWithError(task.id, acknowledgement);
        if (scope) Object.assign(scope, { taskState: 'FAILED', errorCode: err.code }, err.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: err.retryAfterSeconds });
        this.publishEnd(task, TaskState.TASK_STATE_FAILED, this.errorMessage(task, err.toBody()), publish, streaming);
      } else if (err instanceof RegistryError) {
        if (scope) Object.assign(scope, { taskState: 'REJECTED', errorCode: err.code });
        // A finding of the arguments (a pageToken, a refresh's id) is named where the message has them, as the parser names them.
        const refusal = argumentsAt === undefined ? err : rootedAt(err, argumentsAt);
        this.publishEnd(task, TaskState.TASK_STATE_REJECTED, this.errorMessage(task, refusal.toBody()), publish, streaming);
      } else {
        this.log.error({ err, taskId: task.id }, 'operation failed');
        if (scope) Object.assign(scope, { taskState: 'FAILED', errorCode: 'INTERNAL' });
        // INTERNAL, the documented code of a failure of the registry itself; storage and start-up states are protocol errors (above).
        const body: ErrorBody = { code: 'INTERNAL', message: 'The registry could not complete the request; try again later.' };
        this.publishEnd(task, TaskState.TASK_STATE_FAILED, this.errorMessage(task, body), publish, streaming);
      }
    }
  }

  /**
   * Only watches run long enough to cancel: ending one makes publishWatch publish CANCELED.
   * Every other task finishes in one step.
   */
  cancelTask = async (taskId: string): Promise<void> => {
    await this.operations.watches?.cancel(taskId);
  };

  private artifact(name: string, parts: Part[], artifactId: string = uuidv4()): Artifact {
    return { artifactId, name, description: '', parts, metadata: undefined, extensions: [] };
  }

  private publishFinished(task: Task, answer: Answer, publish: Publish): void {
    this.finish(task, answer);
    publish(AgentEvent.task(task));
  }

  /** The task COMPLETED with the answer as its one artifact. */
  private finish(task: Task, answer: Answer): void {
    task.artifacts = [this.artifact(answer.artifactName, [dataPart(answer.data), textPart(answer.text)])];
    task.status = { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: new Date().toISOString() };
  }

  private async publishStreamed(task: Task, answer: StreamedAnswer, publish: Publish): Promise<void> {
    publish(AgentEvent.task(task));
    const artifactId = uuidv4();
    let previous: { data: Record<string, unknown>; text: string } | undefined;
    let first = true;
    const emit = (chunk: { data: Record<string, unknown>; text: string }, lastChunk: boolean) => {
      publish(
        AgentEvent.artifactUpdate({
          taskId: task.id,
          contextId: task.contextId,
          artifact: this.artifact(answer.artifactName, [dataPart(chunk.data), textPart(chunk.text)], artifactId),
          append: !first,
          lastChunk,
          metadata: undefined,
        }),
      );
      first = false;
    };
    // Hold one chunk back so the final one can carry lastChunk: true.
    for await (const chunk of answer.chunks) {
      if (previous) emit(previous, false);
      previous = chunk;
    }
    if (previous) emit(previous, true);
    publish(
      AgentEvent.statusUpdate({
        taskId: task.id,
        contextId: task.contextId,
        status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: new Date().toISOString() },
        metadata: undefined,
      }),
    );
  }

  /**
   * A standing search: the task stays WORKING (its metadata says when it expires). This publishes
   * only that task, which the SDK stores and answers with; everything after it is the watch's
   * own, told from the watch itself, whatever request is open: its streams by the request handler
   * (its current matches first as a `watch-results` artifact, unless the client said
   * `initial: false`, then each event as a `watch-event` artifact, then its end), its stored task
   * by protocol/watch-task.ts, its webhooks by protocol/watch-push.ts. (Published here, the events
   * reached the stored task only while the stream that started the watch was read: once it was
   * cut, GetTask and SubscribeToTask showed the watch as it was then.) Runs until the watch ends,
   * and returns the state the request log records: the watch's final one, or WORKING when the
   * registry shut down with the watch running.
   */
  private async publishWatch(task: Task, answer: WatchAnswer, publish: Publish): Promise<string> {
    const { watch } = answer;
    // Long-running: the task must outlive the bounded memory and a restart.
    this.tasks?.keepDurably(task.id);
    task.metadata = watchMetadata(watch.expiresAt);
    publish(AgentEvent.task(task));
    const status = watchEndStatus(task.id, task.contextId, await watch.ended);
    return status ? taskStateToJSON(status.state).replace('TASK_STATE_', '') : 'WORKING';
  }

  private agentMessage(task: Task, text: string): Message {
    return {
      messageId: uuidv4(),
      contextId: task.contextId,
      taskId: task.id,
      role: Role.ROLE_AGENT,
      parts: [textPart(text)],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
  }

  private errorMessage(task: Task, error: ErrorBody): Message {
    return {
      messageId: uuidv4(),
      contextId: task.contextId,
      taskId: task.id,
      role: Role.ROLE_AGENT,
      parts: [textPart(refusalText(error)), dataPart({ error: { ...error } })],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
  }

  private publishEnd(task: Task, state: TaskState, message: Message, publish: Publish, streaming: boolean): void {
    const status = { state, message, timestamp: new Date().toISOString() };
    if (streaming) {
      publish(AgentEvent.task(task));
      publish(AgentEvent.statusUpdate({ taskId: task.id, contextId: task.contextId, status, metadata: undefined }));
    } else {
      task.status = status;
      publish(AgentEvent.task(task));
    }
  }
}
