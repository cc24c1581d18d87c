/**
 * The CLI's connection to a registry: an `@a2a-js/sdk` client (JSON-RPC binding, found through
 * the registry's own agent card), exactly the path a peer agent takes. Answers are turned into
 * the contract's data objects; what went wrong is sorted into three failures the commands map
 * to exit codes: the registry declined (REJECTED/FAILED task), it could not be reached, or it
 * answered something that is not the contract. The settings, the failures and the fetch are in
 * ./connection.ts, which does not load the SDK.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type AgentCard, type Message, type Part, type SendMessageRequest, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import type { ErrorBody, ErrorCode } from '../contract/types.js';
import { isObject, type JsonObject } from '../lib/json.js';
import { RegistryDeclined, RegistryProtocolError, RegistryUnreachable, classify, dataPart, registryFetch, sendsToken, type Connection } from './connection.js';

/** The request header a resuming client names the last watch event it has in (the SSE standard's; protocol/watch-resume.ts reads it). */
const LAST_EVENT_ID = 'Last-Event-ID';

/** A message with `parts`; on an existing task (a watch's renewal) when `taskId` is given. */
function request(parts: Part[], taskId = ''): SendMessageRequest {
  const message: Message = {
    messageId: randomUUID(),
    contextId: '',
    taskId,
    role: Role.ROLE_USER,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  return { tenant: '', message, configuration: undefined, metadata: undefined };
}

function dataOf(parts: readonly Part[]): JsonObject | undefined {
  for (const part of parts) if (part.content?.$case === 'data' && isObject(part.content.value)) return part.content.value;
  return undefined;
}

function textOf(parts: readonly Part[]): string | undefined {
  for (const part of parts) if (part.content?.$case === 'text') return part.content.value;
  return undefined;
}

const ERROR_STATES = new Map<TaskState, string>([
  [TaskState.TASK_STATE_REJECTED, 'REJECTED'],
  [TaskState.TASK_STATE_FAILED, 'FAILED'],
  [TaskState.TASK_STATE_CANCELED, 'CANCELED'],
  [TaskState.TASK_STATE_AUTH_REQUIRED, 'AUTH_REQUIRED'],
  [TaskState.TASK_STATE_INPUT_REQUIRED, 'INPUT_REQUIRED'],
]);

/** The contract's error body from a declined task's status message (or a stand-in from its text). */
function declined(state: TaskState, message: Message | undefined): RegistryDeclined {
  const name = ERROR_STATES.get(state) ?? String(state);
  const body = message ? dataOf(message.parts)?.error : undefined;
  if (isObject(body) && typeof body.code === 'string' && typeof body.message === 'string') {
    const details = Array.isArray(body.details) ? body.details.filter(isObject).map(toFinding) : undefined;
    const error: ErrorBody = { code: body.code as ErrorCode, message: body.message };
    if (details && details.length > 0) error.details = details;
    if (typeof body.retryAfterSeconds === 'number') error.retryAfterSeconds = body.retryAfterSeconds;
    return new RegistryDeclined(name, error);
  }
  const text = message ? textOf(message.parts) : undefined;
  return new RegistryDeclined(name, { code: 'UNAVAILABLE', message: text ?? `the task ended ${name}` });
}

const toFinding = (d: JsonObject) => ({
  path: typeof d.path === 'string' ? d.path : '',
  message: typeof d.message === 'string' ? d.message : JSON.stringify(d),
  ...(typeof d.hint === 'string' ? { hint: d.hint } : {}),
  ...(typeof d.rule === 'string' ? { rule: d.rule } : {}),
});

/**
 * What a stream tells its caller besides the artifact chunks: the task it runs on (sent first,
 * and again on a resume, with its metadata: a watch's `watchExpiresAt`), and the status message
 * it completed with (a watch completes when it expires, saying so).
 */
export interface StreamObserver {
  task?: (id: string, metadata: JsonObject | undefined) => void;
  completed?: (message: string | undefined) => void;
}

/** How a task ended: its state's short name (COMPLETED, CANCELED, FAILED, ...) and its status message's text. */
export interface TaskEnd {
  state: string;
  message: string | undefined;
}

const TERMINAL_STATES = new Map<TaskState, string>([
  [TaskState.TASK_STATE_COMPLETED, 'COMPLETED'],
  [TaskState.TASK_STATE_CANCELED, 'CANCELED'],
  [TaskState.TASK_STATE_FAILED, 'FAILED'],
  [TaskState.TASK_STATE_REJECTED, 'REJECTED'],
]);

/** A watch still open on the registry: its task, until when it runs, and what it watches (when the registry kept the message that started it). */
export interface OpenWatch {
  taskId: string;
  expiresAt: string;
  request?: JsonObject;
}

/** A successful answer: the artifact's name and its data part. */
export interface Answer {
  artifact: string;
  data: JsonObject;
}

/** One chunk of a streamed artifact. */
export interface AnswerChunk extends Answer {
  lastChunk: boolean;
}

function answerOf(task: Task): Answer {
  const state = task.status?.state;
  if (state !== TaskState.TASK_STATE_COMPLETED) throw declined(state ?? TaskState.TASK_STATE_UNSPECIFIED, task.status?.message);
  const artifact = task.artifacts[0];
  const data = artifact ? dataOf(artifact.parts) : undefined;
  if (!artifact || !data) throw new RegistryProtocolError('the registry completed the task without a data artifact');
  return { artifact: artifact.name, data };
}

// --- the client ----------------------------------------------------------------------------

/**
 * The card with its endpoints moved to the registry URL the user gave. The registry advertises
 * its endpoints under PUBLIC_URL, which the CLI's machine may not reach (on the registry's own
 * machine behind a TLS proxy: `--registry http://127.0.0.1:8080` with PUBLIC_URL
 * https://registry.example.com) and which is another host than the one the admin token read from
 * the local data directory may be sent to. So an endpoint the card names at `<base>/a2a/...` is
 * called at `<--registry base>/a2a/...`, where every registry serves it.
 */
export function atRegistryUrl(card: AgentCard, base: string): AgentCard {
  const supportedInterfaces = card.supportedInterfaces.map((i) => {
    let url: URL;
    try {
      url = new URL(i.url);
    } catch {
      return i; // a gRPC host:port, which the CLI does not use
    }
    const at = url.pathname.search(/\/a2a\/[^/]+\/?$/); // the endpoint at the end: PUBLIC_URL may hold "/a2a" too
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || at === -1) return i;
    return { ...i, url: `${base}${url.pathname.slice(at)}${url.search}` };
  });
  return { ...card, supportedInterfaces };
}

export class RegistryClient {
  private constructor(
    private readonly client: Client,
    readonly connection: Connection,
  ) {}

  /** Reads the registry's agent card and builds a JSON-RPC client from it, as any peer would. */
  static async connect(connection: Connection): Promise<RegistryClient> {
    const fetchImpl = registryFetch(connection);
    const cardResolver = new DefaultAgentCardResolver({ fetchImpl });
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        preferredTransports: ['JSONRPC'],
        cardResolver,
      }),
    );
    try {
      // With the trailing slash: the SDK resolves ".well-known/agent-card.json" relative to the
      // base, and without it a registry under a path prefix (https://x.example/registry) would be
      // looked for at the host's root card.
      const card = await cardResolver.resolve(`${connection.url}/`);
      return new RegistryClient(await factory.createFromAgentCard(atRegistryUrl(card, connection.url)), connection);
    } catch (err) {
      const failure = classify(err);
      if (failure instanceof RegistryUnreachable || failure instanceof RegistryDeclined) throw failure;
      // Something answered, but no A2A agent card is there: most likely a wrong --registry.
      throw new RegistryUnreachable(`no A2A registry at ${connection.url} (${failure.message}); check --registry or A2A_REGISTRY_URL`, { cause: err });
    }
  }

  /** Sends one message and waits for the finished task. */
  async send(parts: Part[]): Promise<Answer> {
    let result: Awaited<ReturnType<Client['sendMessage']>>;
    try {
      result = await this.client.sendMessage(request(parts));
    } catch (err) {
      throw classify(err);
    }
    if (!('status' in result)) throw new RegistryProtocolError('the registry answered with a message instead of a task');
    return answerOf(result);
  }

  /**
   * Renews an open watch: `{"renew": {}}` in a message on its task. The registry answers with the
   * task, still working, whose metadata.watchExpiresAt says until when the watch now runs (ms).
   */
  async renew(taskId: string): Promise<number> {
    let result: Awaited<ReturnType<Client['sendMessage']>>;
    try {
      result = await this.client.sendMessage(request([dataPart({ renew: {} })], taskId));
    } catch (err) {
      throw classify(err);
    }
    if (!('status' in result)) throw new RegistryProtocolError('the registry answered the renewal with a message instead of the task');
    const expiresAt = Date.parse(String(result.metadata?.watchExpiresAt));
    if (Number.isNaN(expiresAt)) throw new RegistryProtocolError('the registry answered the renewal without the task\'s metadata.watchExpiresAt');
    return expiresAt;
  }

  /** How a task ended, read with GetTask; undefined while it still runs. */
  async ended(taskId: string): Promise<TaskEnd | undefined> {
    let task: Task;
    try {
      task = await this.client.getTask({ tenant: '', id: taskId, historyLength: undefined });
    } catch (err) {
      throw classify(err);
    }
    const state = task.status ? TERMINAL_STATES.get(task.status.state) : undefined;
    if (state === undefined) return undefined;
    return { state, message: task.status?.message ? textOf(task.status.message.parts) : undefined };
  }

  /**
   * Ends a task the caller started (a watch). One that is no open task of the caller's is
   * declined NOT_FOUND, saying which and what to do: A2A's TaskNotFound (a mistyped id, or
   * another principal's task, which the registry does not show) and TaskNotCancelable (it has
   * ended). They were "the registry answered with an error: Task not found: <id>", PROTOCOL_ERROR
   * to a script, as if the registry's answer were broken, and the second pointed to GetTask.
   */
  async cancel(taskId: string): Promise<void> {
    try {
      await this.client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    } catch (err) {
      const reason = a2aErrorReason(err);
      const listed = '`a2a-registry watch --list` lists your open watches.';
      if (reason === 'TASK_NOT_FOUND') {
        throw new RegistryDeclined('REJECTED', {
          code: 'NOT_FOUND',
          message: sendsToken(this.connection)
            ? `No open watch of this token has task id ${JSON.stringify(taskId)}: a mistyped id, or a watch another token started (each token sees and cancels only its own). ${listed}`
            : `No open watch has task id ${JSON.stringify(taskId)} for a caller without a token: a watch is canceled with the token that started it; give it with --token or A2A_REGISTRY_TOKEN.`,
        });
      }
      if (reason === 'TASK_NOT_CANCELABLE') {
        const state = /\(TASK_STATE_([A-Z_]+)\)/.exec(err instanceof Error ? err.message : '')?.[1];
        throw new RegistryDeclined('REJECTED', {
          code: 'NOT_FOUND',
          message: `The watch ${JSON.stringify(taskId)} has already ended${state ? ` (${state.toLowerCase()})` : ''}: there is nothing left to cancel. ${listed}`,
        });
      }
      throw classify(err);
    }
  }

  /**
   * The caller's open watches: its tasks still WORKING (ListTasks lists only the caller's own)
   * that carry a watch's metadata.watchExpiresAt, with the watch's request from the message that
   * started it.
   */
  async openWatches(): Promise<OpenWatch[]> {
    const watches: OpenWatch[] = [];
    let pageToken = '';
    do {
      let page: Awaited<ReturnType<Client['listTasks']>>;
      try {
        const params = { tenant: '', contextId: '', status: TaskState.TASK_STATE_WORKING, pageSize: 100, pageToken, historyLength: 1, statusTimestampAfter: undefined, includeArtifacts: false };
        page = await this.client.listTasks(params);
      } catch (err) {
        throw classify(err);
      }
      for (const task of page.tasks) {
        const expiresAt = task.metadata?.watchExpiresAt;
        if (typeof expiresAt !== 'string') continue;
        const started = task.history[0] ? dataOf(task.history[0].parts)?.watch : undefined;
        watches.push({ taskId: task.id, expiresAt, ...(isObject(started) ? { request: started } : {}) });
      }
      pageToken = page.nextPageToken;
    } while (pageToken !== '');
    return watches;
  }

  /** Sends one message as a stream and yields each artifact chunk the moment it arrives. */
  async *stream(parts: Part[], observer: StreamObserver = {}): AsyncGenerator<AnswerChunk> {
    let events: AsyncGenerator<StreamResponse>;
    try {
      events = this.client.sendMessageStream(request(parts));
    } catch (err) {
      throw classify(err);
    }
    yield* this.#chunks(events, observer);
  }

  /**
   * Subscribes again to a task still running (a watch after its stream was cut): its chunks from
   * now on. `lastSeq`: the last watch event received, sent as Last-Event-ID, so the registry
   * sends the events after it (or a resync when it no longer keeps them).
   */
  async *resume(taskId: string, observer: StreamObserver = {}, lastSeq?: number): AsyncGenerator<AnswerChunk> {
    let events: AsyncGenerator<StreamResponse>;
    try {
      const options = lastSeq === undefined ? undefined : { serviceParameters: { [LAST_EVENT_ID]: String(lastSeq) } };
      events = this.client.resubscribeTask({ tenant: '', id: taskId }, options);
    } catch (err) {
      throw classify(err);
    }
    yield* this.#chunks(events, observer);
  }

  async *#chunks(events: AsyncGenerator<StreamResponse>, observer: StreamObserver): AsyncGenerator<AnswerChunk> {
    let completed = false;
    try {
      for await (const event of events) {
        const payload = event.payload;
        if (!payload) continue;
        switch (payload.$case) {
          case 'artifactUpdate': {
            const artifact = payload.value.artifact;
            const data = artifact ? dataOf(artifact.parts) : undefined;
            if (artifact && data) yield { artifact: artifact.name, data, lastChunk: payload.value.lastChunk };
            break;
          }
          case 'statusUpdate': {
            const status = payload.value.status;
            if (status && ERROR_STATES.has(status.state)) throw declined(status.state, status.message);
            if (status?.state === TaskState.TASK_STATE_COMPLETED) {
              completed = true;
              observer.completed?.(status.message ? textOf(status.message.parts) : undefined);
            }
            break;
          }
          case 'task': {
            const task = payload.value;
            observer.task?.(task.id, task.metadata);
            const state = task.status?.state;
            if (state !== undefined && ERROR_STATES.has(state)) throw declined(state, task.status?.message);
            // A server that does not stream answers with the finished task: one chunk, the last.
            if (state === TaskState.TASK_STATE_COMPLETED) {
              completed = true;
              if (task.artifacts.length > 0) yield { ...answerOf(task), lastChunk: true };
              observer.completed?.(task.status?.message ? textOf(task.status.message.parts) : undefined);
            }
            break;
          }
          case 'message':
            throw new RegistryProtocolError('the registry answered with a message instead of a task');
        }
      }
    } catch (err) {
      throw classify(err);
    }
    if (!completed) throw new RegistryUnreachable(`the registry at ${this.connection.url} closed the stream before the task completed`);
  }
}

/** The reason of the google.rpc.ErrorInfo an A2A error answer carries (JSON-RPC's `data[0]`), in `err` or its causes. */
function a2aErrorReason(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const data = (e as { data?: unknown }).data;
    const info = Array.isArray(data) ? data[0] : undefined;
    if (isObject(info) && typeof info.reason === 'string') return info.reason;
  }
  return undefined;
}
