/**
 * Push notifications (A2A push notification configs) through the outbound guard.
 *
 * The SDK's own sender calls global `fetch` and only sends while a request is consuming the
 * task's events; a watch outlives its requests (a client may never stream at all: a plain
 * SendMessage with a push config starts one). So:
 * - `PushConfigs` keeps the configs per task (the SDK's handler checks the caller may reach the
 *   task before it saves, reads or deletes one), and checks a webhook URL with the guard when it
 *   is configured, so a refused address is an error then and not a silent failure later. A
 *   watch's configs (tokens included) are also kept with its definition in storage, so its
 *   pushes go on after a restart.
 * - `WatchPushes` follows every watch: each event (and the initial matches) is POSTed to each of
 *   the task's webhooks through `core.fetcher`, with the client's token, in order (one queue per
 *   webhook: a slow one delays only itself), retried with backoff; when a delivery still fails
 *   after the last attempt the watch ends FAILED with the reason. When the watch ends, its final
 *   status follows, as a stream's does.
 * - `GuardedPushSender` is the SDK's sender for every other task: one attempt per event through
 *   the guard; a task's configs are dropped when it ends.
 * Each config remembers the protocol generation it was given in (kept with a watch's definition
 * too): a webhook a v0.3 client configured gets what v0.3 says a notification carries, the Task
 * (`{"kind": "task", ...}`, lowercase states; A2A 0.3 9.5), and one configured over v1.0 gets
 * v1.0's StreamResponse JSON.
 */
import { randomUUID } from 'node:crypto';
import { StreamResponse, TaskPushNotificationConfig, TaskState, type Artifact, type Task, type TaskStatus } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import type { PushNotificationSender, PushNotificationStore, ServerCallContext, StoredPushNotificationConfig } from '@a2a-js/sdk/server';
import type { WatchEvent } from '../contract/types.js';
import { clearableTimeout } from '../lib/clearable-timeout.js';
import { codePointPrefix } from '../lib/code-points.js';
import { FetchError, type CheckedUrl, type FetchOptions, type Fetcher } from '../net/fetcher.js';
import type { Logger } from '../observability/logger.js';
import { watchEndStatus, watchEventUpdate, watchResultsUpdate } from '../operations/executor.js';
import type { UnrunWatch, Watch, WatchEnd, WatchHub } from '../subscriptions/watch-hub.js';
import { LEGACY_VERSION } from './versions.js';

/** Configs one task may have. */
const MAX_CONFIGS_PER_TASK = 10;
/**
 * Tasks (other than open watches) whose configs are kept. A config leaves with its task's final
 * event, and one for a task that has ended is refused (the request handler), but a config whose
 * task's final event was never pushed (a task the registry stopped running) would stay: without
 * a bound, such configs could fill the memory. The oldest go first; their tasks are long
 * finished (and the tasks of reads long gone from the bounded task store).
 */
const MAX_TASKS_WITH_CONFIGS = 1_000;
/** Task states a task does not leave. */
export const TERMINAL = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED]);

export interface PushRetry {
  /**
   * How long a notification is retried for (REGISTRY_WEBHOOK_RETRY_SECONDS): long enough for a
   * receiver to restart or be redeployed, since a watch whose webhook keeps failing ends for good.
   */
  windowMs: number;
  /** Wait before the second attempt; doubled before each further one, up to maxDelayMs. */
  firstDelayMs: number;
  maxDelayMs: number;
}
export const DEFAULT_PUSH_RETRY: PushRetry = { windowMs: 60_000, firstDelayMs: 250, maxDelayMs: 30_000 };
/** The least time a retry gets: one squeezed into the window's last milliseconds would fail for that alone. */
const MIN_ATTEMPT_MS = 500;
/** The message of the TimeoutError an attempt cut at the window's end fails with (the guard counts it as a timeout). */
const WINDOW_END_MESSAGE = 'The attempt reached the end of the retry window';

/**
 * The wait before a retry whose last attempt was answered 429 or 503 with a Retry-After
 * (`retryAfterMs`; RFC 9110 §10.2.3, RFC 6585 §4): the backoff's own wait, or longer when the
 * receiver asked for longer, up to the backoff's longest wait (maxDelayMs; the caller cuts it at
 * the window's end too). Never sooner than the backoff. Before, a receiver that asked for 10 s
 * was asked again after 0.25, 0.5, 1 and 2 s, each attempt one more it had said it would refuse.
 */
function retryWaitMs(backoffMs: number, retryAfterMs: number | undefined, maxDelayMs: number): number {
  return Math.max(backoffMs, Math.min(retryAfterMs ?? 0, maxDelayMs));
}

/** The waits between a notification's attempts: doubling, capped, adding up to the window (the last one cut to fit). */
export function retryDelays(retry: PushRetry): number[] {
  const delays: number[] = [];
  let total = 0;
  for (let next = retry.firstDelayMs; total < retry.windowMs; next = Math.min(next * 2, retry.maxDelayMs)) {
    const delay = Math.min(next, retry.windowMs - total);
    delays.push(delay);
    total += delay;
  }
  return delays;
}

/**
 * The generation of a config kept before configs remembered theirs: its webhook had been sent
 * v1.0 payloads, and goes on getting them.
 */
const UNRECORDED_WIRE_VERSION = '1.0';

export class PushConfigs implements PushNotificationStore {
  /** Each task's configs, with the protocol version each was given in. */
  readonly #byTask = new Map<string, StoredPushNotificationConfig[]>();
  /** Each task's config change being stored, the last of those waiting (see #oneAtATime). */
  readonly #changing = new Map<string, Promise<void>>();

  constructor(
    private readonly fetcher: Fetcher,
    /** A watch's configs are stored with its definition. */
    private readonly watches?: WatchHub,
    /** httpCredentials: a token or credentials may go to a plain http webhook the operator did not allow (REGISTRY_WEBHOOK_HTTP_CREDENTIALS). */
    private readonly options: { httpCredentials?: boolean } = {},
  ) {}

  async save(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    // url is REQUIRED (A2A 4.3.1): the guard's "\"\" is not an absolute URL" said less.
    if (!config.url) throw configRefusal('url is required: the absolute http(s) URL of the webhook that receives the task\'s notifications.', 'url');
    const unsendable = sizeProblem(config) ?? headerProblem(config);
    if (unsendable) throw configRefusal(unsendable.message, unsendable.field);
    let checked: CheckedUrl;
    try {
      checked = await this.fetcher.check(config.url, { purpose: 'webhook' });
    } catch (error) {
      if (error instanceof FetchError) throw configRefusal(`The push notification URL is refused: ${error.message}`, 'url');
      throw error;
    }
    const exposed = this.options.httpCredentials ? undefined : credentialsInClear(config, checked);
    if (exposed) throw configRefusal(exposed, 'url');
    // A v0.3 config set without an id gets the task's id, as v0.3 servers give it (the v0.3 SDK's
    // did): a v0.3 client then gets and deletes it by the task id. v1.0 leaves the id to the server.
    if (!config.id) config.id = context.requestedVersion === LEGACY_VERSION ? taskId : randomUUID();
    const id = config.id;
    await this.#oneAtATime(taskId, async () => {
      const before = this.#byTask.get(taskId);
      const list = (before ?? []).filter((c) => c.config.id !== id);
      if (list.length >= MAX_CONFIGS_PER_TASK) throw new RequestMalformedError(`A task has at most ${MAX_CONFIGS_PER_TASK} push notification configs; delete one first.`);
      // Kept under no tenant, as tasks are: the registry is not multi-tenant (its card declares no
      // tenant, so a client sends none, A2A 8.3.2) and ignores a request's (call-context.ts). Kept
      // with the tenant it was created under, a config was answered with it under every other.
      list.push({ config: { ...config, taskId, tenant: '' }, wireVersion: context.requestedVersion || LEGACY_VERSION });
      this.#byTask.set(taskId, list);
      this.#bound(taskId);
      await this.#keepOrUndo(taskId, before);
    });
  }

  /** Forgets the configs of the oldest tasks past MAX_TASKS_WITH_CONFIGS (never an open watch's, nor `current`'s). */
  #bound(current: string): void {
    if (this.#byTask.size <= MAX_TASKS_WITH_CONFIGS) return;
    for (const taskId of this.#byTask.keys()) {
      if (this.#byTask.size <= MAX_TASKS_WITH_CONFIGS) return;
      if (taskId !== current && !this.watches?.get(taskId)) this.#byTask.delete(taskId);
    }
  }

  async load(taskId: string): Promise<TaskPushNotificationConfig[]> {
    return this.forTask(taskId);
  }

  async delete(taskId: string, _context: ServerCallContext, configId?: string): Promise<void> {
    await this.#oneAtATime(taskId, async () => {
      const before = this.#byTask.get(taskId);
      const list = (before ?? []).filter((c) => c.config.id !== (configId ?? taskId));
      if (list.length > 0) this.#byTask.set(taskId, list);
      else this.#byTask.delete(taskId);
      await this.#keepOrUndo(taskId, before);
    });
  }

  /**
   * Runs a change of task `taskId`'s configs once the one before it is stored or undone, so that
   * each starts from, and undoes back to, a list no other change is still storing. Before, two in
   * flight together (one storage outage) undid each other's: the second's "before" held the first
   * config, so when both failed the first was put back (listed and pushed to until a restart,
   * though answered as failed); and one that failed while the next was stored stayed listed, and
   * was stored with the next.
   */
  async #oneAtATime(taskId: string, change: () => Promise<void>): Promise<void> {
    const prior = this.#changing.get(taskId);
    const run = prior ? prior.then(change) : change();
    const settled = run.catch(() => undefined);
    this.#changing.set(taskId, settled);
    try {
      await run;
    } finally {
      if (this.#changing.get(taskId) === settled) this.#changing.delete(taskId);
    }
  }

  /**
   * Stores watch `taskId`'s configs as they are now (#keep), or, when that fails, puts back the
   * ones it had (`before`) and rethrows: the request is answered as not done, so it must not be
   * done. Before, a create whose storing failed was answered an error yet kept in memory, listed
   * and pushed to (a retry without an id added a second one), and a delete so answered was done
   * in memory (nothing pushed to that webhook) until a restart brought the stored config back.
   */
  async #keepOrUndo(taskId: string, before: StoredPushNotificationConfig[] | undefined): Promise<void> {
    const after = this.#byTask.get(taskId);
    try {
      await this.#keep(taskId);
    } catch (error) {
      // Unless the list changed otherwise meanwhile (the watch ended and its configs were dropped,
      // or withdrawn as it was restored): config changes themselves come one at a time (#oneAtATime).
      if (this.#byTask.get(taskId) === after) {
        if (before) this.#byTask.set(taskId, before);
        else this.#byTask.delete(taskId);
      }
      throw error;
    }
  }

  /** A restored watch's configs, as its definition kept them (with the version each was given in). */
  restore(taskId: string, configs: unknown[]): void {
    const list = storedConfigs(taskId, configs);
    if (list.length > 0) this.#byTask.set(taskId, list);
  }

  /**
   * Takes from a restored watch the configs that send a token or credentials to a plain http
   * webhook the operator does not allow (credentialsInClear, as a config given now is refused):
   * kept by a release before that rule, or under an allowance the operator has since withdrawn,
   * they were pushed to unencrypted after every restart. Each with why. Only plain http URLs
   * with a secret are checked (the guard may resolve the host); one the guard refuses now is
   * left to its deliveries, which fail as for any webhook that went away.
   */
  async withdrawExposed(taskId: string): Promise<{ config: TaskPushNotificationConfig; why: string }[]> {
    if (this.options.httpCredentials) return [];
    const exposed: { config: TaskPushNotificationConfig; why: string }[] = [];
    for (const { config } of this.keptFor(taskId)) {
      const why = secretOverHttp(config);
      if (why === undefined) continue;
      let checked: CheckedUrl;
      try {
        checked = await this.fetcher.check(config.url, { purpose: 'webhook' });
      } catch (error) {
        if (error instanceof FetchError) continue;
        throw error;
      }
      if (!checked.operatorAllowed) exposed.push({ config, why });
    }
    const withdrawn = new Set(exposed.map(({ config }) => config.id));
    const list = (this.#byTask.get(taskId) ?? []).filter((c) => !withdrawn.has(c.config.id));
    if (list.length > 0) this.#byTask.set(taskId, list);
    else this.#byTask.delete(taskId);
    return exposed;
  }

  /**
   * Stores a watch's configs with its definition (a task that is no watch keeps them in memory
   * only): each config's wire JSON, and beside its fields the version it was given in, so the
   * replica that runs the watch next sends its webhook the same payloads.
   */
  async #keep(taskId: string): Promise<void> {
    const kept = this.keptFor(taskId).map((c) => ({ ...(TaskPushNotificationConfig.toJSON(c.config) as object), wireVersion: c.wireVersion }));
    await this.watches?.get(taskId)?.setPushConfigs(kept);
  }

  /** A watch that just started: its configs were saved before it existed; store them with it now. */
  keepFor(taskId: string): Promise<void> {
    return this.#keep(taskId);
  }

  forTask(taskId: string): TaskPushNotificationConfig[] {
    return (this.#byTask.get(taskId) ?? []).map((c) => ({ ...c.config }));
  }

  /** The task's configs with the protocol version each was given in (whose payloads its webhook gets). */
  keptFor(taskId: string): StoredPushNotificationConfig[] {
    return (this.#byTask.get(taskId) ?? []).map((c) => ({ config: { ...c.config }, wireVersion: c.wireVersion }));
  }

  drop(taskId: string): void {
    this.#byTask.delete(taskId);
  }

  /**
   * How a notification is sent to `config`'s webhook: its headers, and (unless the operator set
   * REGISTRY_WEBHOOK_HTTP_CREDENTIALS) its secret kept off plain http the operator does not allow
   * at the moment it is sent. save() checked that once, when the config was given; the name may
   * resolve elsewhere since (an allowed private address then, a public one now), and each
   * notification would carry the token unencrypted across the internet.
   */
  sendOptions(config: TaskPushNotificationConfig, wireVersion: string): FetchOptions {
    const refusal = this.options.httpCredentials ? undefined : secretOverHttp(config);
    return { purpose: 'webhook', headers: headersOf(config, wireVersion), ...(refusal ? { secretOverHttpRefusal: refusal } : {}) };
  }
}

/** Watch `taskId`'s configs as its stored definition keeps them (their wire JSON), each with the version it was given in. */
function storedConfigs(taskId: string, configs: unknown[]): StoredPushNotificationConfig[] {
  return configs.map((c) => {
    const kept = (c as { wireVersion?: unknown }).wireVersion;
    // Under no tenant, as save keeps it (a definition stored before may carry one).
    return { config: { ...TaskPushNotificationConfig.fromJSON(c), taskId, tenant: '' }, wireVersion: typeof kept === 'string' ? kept : UNRECORDED_WIRE_VERSION };
  });
}

/**
 * The longest URL, token, credentials and id a config may have. Configs are kept in memory (up
 * to MAX_CONFIGS_PER_TASK on each of MAX_TASKS_WITH_CONFIGS tasks): unbounded, one principal
 * creating configs of a request body's size (64 KB) on its finished tasks grew the registry by
 * hundreds of megabytes within minutes. These hold any real webhook URL and bearer token (a
 * signed JWT included), and fit the 8 KB a web server commonly accepts for a header.
 */
const MAX_PUSH_URL_CHARS = 2048;
const MAX_PUSH_TOKEN_CHARS = 1024;
const MAX_PUSH_CREDENTIALS_CHARS = 4096;
const MAX_PUSH_ID_CHARS = 256;

/** A field of a config that is refused, named within the config ("url", "authentication.credentials"). */
interface ConfigProblem {
  message: string;
  field: string;
}

/** Each refusal of a config's field, with that field's name within the config. */
const refusedFields = new WeakMap<Error, string>();

/**
 * A config refused for one of its fields: invalid params naming the field within the config, as
 * CreateTaskPushNotificationConfig (v1.0) sends it; refusedConfigField gives the request handler
 * that name to place where the caller sent the config (pushNotificationConfig.url in v0.3's set,
 * configuration.taskPushNotificationConfig.url with a message).
 */
function configRefusal(message: string, field: string): RequestMalformedError {
  const error = new RequestMalformedError({ message, metadata: { field } });
  refusedFields.set(error, field);
  return error;
}

/** The field within the config that `error` refused, when it is a config's refusal. */
export function refusedConfigField(error: unknown): string | undefined {
  return error instanceof Error ? refusedFields.get(error) : undefined;
}

/** Why a config is too large to keep, if it is: which field, its length, the limit. */
function sizeProblem(config: TaskPushNotificationConfig): ConfigProblem | undefined {
  const fields: [string, string | undefined, number][] = [
    ['url', config.url, MAX_PUSH_URL_CHARS],
    ['token', config.token, MAX_PUSH_TOKEN_CHARS],
    ['authentication.credentials', config.authentication?.credentials, MAX_PUSH_CREDENTIALS_CHARS],
    ['authentication.scheme', config.authentication?.scheme, MAX_PUSH_ID_CHARS],
    ['id', config.id, MAX_PUSH_ID_CHARS],
  ];
  for (const [field, value, max] of fields) {
    if (value && value.length > max) {
      return {
        message: `The push notification config's ${field} has ${value.length} characters; at most ${max} are accepted. Use a shorter webhook URL or token (e.g. an opaque id the receiver looks up).`,
        field,
      };
    }
  }
  return undefined;
}

/**
 * Why a config's token or credentials would cross the network unencrypted, if they would: its
 * webhook is plain http, somewhere the operator did not allow (REGISTRY_FETCH_ALLOW names the
 * operator's own networks, a receiver on localhost in tests among them). Every notification
 * carries them as headers, readable by anyone on the path and replayable against the receiver
 * (A2A 13.2: webhook URLs SHOULD use HTTPS, its tokens are secrets).
 */
function credentialsInClear(config: TaskPushNotificationConfig, checked: CheckedUrl): string | undefined {
  return checked.operatorAllowed ? undefined : secretOverHttp(config);
}

/** What credentialsInClear says of a config whose plain http webhook the operator does not allow, if it carries a secret. */
function secretOverHttp(config: TaskPushNotificationConfig): string | undefined {
  if (new URL(config.url).protocol !== 'http:') return undefined;
  const carried = [config.token ? 'a token' : undefined, config.authentication?.credentials ? 'authentication credentials' : undefined].filter(Boolean);
  if (carried.length === 0) return undefined;
  return (
    `The push notification URL is plain http, and the config carries ${carried.join(' and ')}, which every notification would send unencrypted across the network, ` +
    "readable by anyone on the path: give the webhook's https URL. (The registry's operator allows plain http to the hosts REGISTRY_FETCH_ALLOW lists, or everywhere with REGISTRY_WEBHOOK_HTTP_CREDENTIALS=true.)"
  );
}

/** A header value sent as given: visible ASCII, spaces inside only (HTTP would trim them at the ends). */
const HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
/** An HTTP authentication scheme is a token (RFC 9110 section 11.1). */
const AUTH_SCHEME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Why a config's token or credentials cannot travel as the headers of its notifications, if
 * they cannot. Checked when the config is given: otherwise every delivery failed (fetch refuses
 * such a header) and a watch ended FAILED a moment after it was acknowledged.
 */
function headerProblem(config: TaskPushNotificationConfig): ConfigProblem | undefined {
  const printable = 'visible ASCII characters (spaces inside only; no line breaks, control or non-ASCII characters)';
  if (config.token && !HEADER_VALUE.test(config.token)) {
    return {
      message: `The push notification token cannot be sent: it travels as the X-A2A-Notification-Token header, whose value must be ${printable}. Encode it (e.g. base64url).`,
      field: 'token',
    };
  }
  const auth = config.authentication;
  if (auth?.credentials) {
    // REQUIRED (A2A 4.3.2 AuthenticationInfo.scheme; v0.3's schemes too): the registry sent such
    // credentials as Bearer, a scheme the client never named, and a receiver expecting Basic
    // refused every delivery, ending the watch FAILED.
    if (!auth.scheme) {
      return {
        message:
          'authentication.scheme is required with authentication.credentials (v0.3: authentication.schemes): the HTTP authentication scheme the credentials are sent with, as "Authorization: <scheme> <credentials>", e.g. Bearer or Basic.',
        field: 'authentication.scheme',
      };
    }
    if (!AUTH_SCHEME.test(auth.scheme)) {
      return {
        message: `The push notification authentication scheme ${JSON.stringify(codePointPrefix(auth.scheme, 40))} is not an HTTP authentication scheme (one word, e.g. Bearer or Basic).`,
        field: 'authentication.scheme',
      };
    }
    if (!HEADER_VALUE.test(auth.credentials)) {
      return {
        message: `The push notification credentials cannot be sent: they travel in the Authorization header, whose value must be ${printable}. Encode them (e.g. base64).`,
        field: 'authentication.credentials',
      };
    }
  }
  return undefined;
}

/**
 * The request headers of a notification: its media type (v1.0's is application/a2a+json, A2A
 * 4.3.3, as the SDK's sender labels it; v0.3's application/json), the client's token, and its
 * credentials if it gave any.
 */
function headersOf(config: TaskPushNotificationConfig, wireVersion: string): Record<string, string> {
  const headers: Record<string, string> = { 'Content-Type': wireVersion === LEGACY_VERSION ? 'application/json' : 'application/a2a+json' };
  if (config.token) headers['X-A2A-Notification-Token'] = config.token;
  // Bearer only for a config kept before a scheme was required (headerProblem): it was sent so then.
  if (config.authentication?.credentials) headers.Authorization = `${config.authentication.scheme || 'Bearer'} ${config.authentication.credentials}`;
  return headers;
}

const v03 = new V03PushNotificationSerializer();

/**
 * A notification's body in the protocol generation its webhook was configured in: v0.3's Task
 * (A2A 0.3 9.5: "Task object is sent as JSON payload"; `kind: "task"`, lowercase states), by the
 * SDK's own v0.3 serializer, which sends the Task whenever it is given one; else v1.0's
 * StreamResponse JSON. `task` is the SDK's stored task (GuardedPushSender); a watch's is built
 * from its event (taskOfEvent). Before, the serializer was given no task and sent the bare
 * event (`{"kind": "artifact-update", ...}`), which a receiver written to the v0.3 specification
 * or to a2a-js 0.3 (whose sender POSTs the Task) cannot read.
 */
function payloadFor(response: StreamResponse, wireVersion: string, task: Task | undefined, at: string): unknown {
  if (wireVersion === LEGACY_VERSION) return JSON.parse(v03.serialize(response, task ?? taskOfEvent(response, at)).body) as unknown;
  return StreamResponse.toJSON(response);
}

/**
 * The Task a v0.3 webhook is sent for a watch's event: its id, context and status (WORKING while
 * the watch runs, the final status at its end) with the event's own artifact only. Not the
 * watch's whole history: a watch accumulates events for as long as it runs, and each
 * notification would carry every one before it. The WORKING status is dated `at`, when the
 * notification was made (the event's time), as every other status the registry sends is (the
 * final one its end's): it had no timestamp, so a receiver could not order or date it.
 */
function taskOfEvent(response: StreamResponse, at: string): Task | undefined {
  const payload = response.payload;
  const task = (id: string, contextId: string, status: TaskStatus | undefined, artifacts: Artifact[]): Task => ({ id, contextId, status, artifacts, history: [], metadata: undefined });
  if (payload?.$case === 'artifactUpdate') {
    const { taskId, contextId, artifact } = payload.value;
    return task(taskId, contextId, { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: at }, artifact ? [artifact] : []);
  }
  if (payload?.$case === 'statusUpdate') return task(payload.value.taskId, payload.value.contextId, payload.value.status, []);
  return undefined;
}

/** One notification, its body built once per protocol generation among its webhooks. */
class Notification {
  readonly #bodies = new Map<string, unknown>();
  /** When it was made: the time of the event it tells (its bodies are built later, at delivery). */
  readonly #at = new Date().toISOString();
  constructor(
    readonly response: StreamResponse,
    /** The task as the SDK holds it after the event (GuardedPushSender), which v0.3 webhooks are sent. */
    private readonly task?: Task,
  ) {}

  bodyFor(wireVersion: string): unknown {
    if (!this.#bodies.has(wireVersion)) this.#bodies.set(wireVersion, payloadFor(this.response, wireVersion, this.task, this.#at));
    return this.#bodies.get(wireVersion);
  }
}

/**
 * The notification of watch `taskId`'s end (the final status a stream ends with: CANCELED,
 * COMPLETED when it expired, FAILED), as its webhooks are told it (WatchEnd.pushedMessage: a
 * failed webhook named by its origin). None for an end that tells nothing (a shutdown).
 */
function finalNotification(taskId: string, contextId: string, end: WatchEnd): Notification | undefined {
  const status = watchEndStatus(taskId, contextId, end.pushedMessage === undefined ? end : { ...end, message: end.pushedMessage });
  return status && new Notification({ payload: { $case: 'statusUpdate', value: { taskId, contextId, status, metadata: undefined } } });
}

/** The notifications waiting for one webhook of a watch, delivered one after another. */
interface WebhookQueue {
  chain: Promise<void>;
  /** Notifications queued and not yet delivered (or given up). */
  pending: number;
  /** Past maxPending: events are not queued until the resync that replaces them is. */
  behind: boolean;
}

export class WatchPushes {
  constructor(
    private readonly configs: PushConfigs,
    private readonly fetcher: Fetcher,
    private readonly log: Logger,
    /**
     * Notifications a watch may have waiting for its webhooks (REGISTRY_WATCH_BUFFER, the events
     * a watch keeps for a client that resumes): past it they are dropped and one `resync` with the
     * current matches follows them, as a client that resumes too late gets.
     */
    private readonly maxPending: number,
    retry: PushRetry = DEFAULT_PUSH_RETRY,
  ) {
    this.#delays = retryDelays(retry);
    this.#windowMs = retry.windowMs;
    this.#maxDelayMs = retry.maxDelayMs;
  }

  /** Waits between a notification's attempts (attempts = these + 1). */
  readonly #delays: number[];
  /** How long one notification's attempts may take, their waits and their requests together. */
  readonly #windowMs: number;
  /** The longest wait between attempts, however long a receiver's Retry-After asks. */
  readonly #maxDelayMs: number;

  /**
   * Follows `watch` from its start, or from its restoring after a restart: pushes its initial
   * matches (if asked; not again after a restart) and every event. Resolves once a new watch's
   * configs are stored with its definition: the watch is acknowledged after that, so a replica
   * that takes it over (this one crashed) pushes to them too.
   */
  follow(watch: Watch): Promise<void> {
    const { contextId } = watch;
    if (watch.restored) this.configs.restore(watch.id, watch.pushConfigs);
    // Nothing reaches a restored watch's webhooks before its configs are checked again.
    const vetted = watch.restored ? this.#vetRestored(watch) : Promise.resolve();
    // One queue per webhook (per config): notifications reach each webhook in the order of the
    // events, and a webhook that answers slowly, or is retried through an outage, delays only its
    // own (one chain for all of them held every other webhook behind it, attempt after attempt).
    // A slow webhook (each answer just inside the deadline) falls behind the events without
    // bound, each waiting notification held in memory: past maxPending the later events are not
    // queued for it, and once those waiting are delivered a `resync` says what they would have.
    // That webhook's alone (Watch.resyncFor): the watch's other webhooks and streams missed
    // nothing (before, the watch emitted it, and every webhook and stream got it).
    const queues = new Map<string, WebhookQueue>();
    const queueOf = (configId: string): WebhookQueue => {
      let queue = queues.get(configId);
      if (!queue) queues.set(configId, (queue = { chain: vetted, pending: 0, behind: false }));
      return queue;
    };
    const enqueue = (configId: string, notification: Notification, what: string) => {
      const queue = queueOf(configId);
      if (queue.behind) return;
      // Counted on the watch while waiting: if the watch stops here first, they are lost, and
      // the watch resyncs wherever it runs next (Watch.pushWaiting).
      if (queue.pending >= this.maxPending) {
        queue.behind = true;
        watch.pushWaiting(1);
        this.log.warn({ watch: watch.id, pending: queue.pending }, 'a watch webhook does not keep up; its waiting events are replaced by a resync');
        queue.chain = queue.chain
          .then(() => {
            queue.behind = false;
            if (!watch.isOpen) return;
            // Built now, as its events would be queued again from now on: it stands for every event up to here.
            const resync = new Notification({ payload: { $case: 'artifactUpdate', value: watchEventUpdate(watch.id, contextId, watch.resyncFor()) } });
            return this.#deliverTo(watch, configId, resync, 'the resync replacing the events it fell behind on was');
          })
          .catch((err: unknown) => this.log.error({ err, watch: watch.id }, 'a push notification could not be sent'))
          .finally(() => {
            watch.pushWaiting(-1);
            if (queue.pending === 0 && !queue.behind && queues.get(configId) === queue) queues.delete(configId);
          });
        return;
      }
      queue.pending++;
      watch.pushWaiting(1);
      queue.chain = queue.chain
        .then(() => this.#deliverTo(watch, configId, notification, what))
        .catch((err: unknown) => this.log.error({ err, watch: watch.id }, 'a push notification could not be sent'))
        .finally(() => {
          watch.pushWaiting(-1);
          // An idle queue is forgotten (its config may be deleted); the next event makes a new one.
          if (--queue.pending === 0 && !queue.behind && queues.get(configId) === queue) queues.delete(configId);
        });
    };
    const push = (notification: Notification, what: string) => {
      for (const { config } of this.configs.keptFor(watch.id)) enqueue(config.id, notification, what);
    };
    const initial = this.configs.forTask(watch.id).length > 0 ? watch.initialMatches() : undefined;
    if (initial) push(new Notification({ payload: { $case: 'artifactUpdate', value: watchResultsUpdate(watch.id, contextId, initial) } }), 'the initial matches were');
    // Stored once the initial matches wait for the webhooks, and with them the position that
    // says so (Watch.setPushConfigs): a crash before they are delivered gets a resync where the
    // watch runs next. Before, the definition stored its position as current until the progress
    // was next written (a second later), and a crash meanwhile lost the initial matches for good.
    // Not stored, the watch is not started (its start fails, to be tried again): before, a failure
    // was logged and the watch answered WORKING, its webhooks in this process's memory only, so
    // after a restart (or on the replica that took it over) it ran on pushing to none of them.
    const kept = watch.restored ? Promise.resolve() : this.configs.keepFor(watch.id);
    const stop = watch.listen((event: WatchEvent) => {
      if (this.configs.forTask(watch.id).length === 0) return;
      push(new Notification({ payload: { $case: 'artifactUpdate', value: watchEventUpdate(watch.id, contextId, event) } }), `event ${event.seq} was`);
    });
    void watch.ended.then((end) => {
      stop();
      // The final status a stream ends with (CANCELED, COMPLETED when it expired, FAILED) goes
      // to the webhooks too, each after the events already queued for it: a client that only
      // listens there would otherwise never learn that the watch ended. None when the registry
      // shuts down.
      const final = finalNotification(watch.id, contextId, end);
      const configs = this.configs.keptFor(watch.id);
      this.configs.drop(watch.id);
      if (!final) return;
      // After a failed delivery, once each: the webhook that failed has had its attempts.
      const attempts = end.reason === 'failed' ? 1 : this.#delays.length + 1;
      for (const kept of configs) {
        const queue = queueOf(kept.config.id);
        queue.chain = queue.chain.then(() => this.#deliverFinal(watch.id, kept, final, attempts));
      }
    });
    return kept;
  }

  /**
   * The final status of a stored watch that ended run nowhere (WatchHub.onEndUnrun: canceled
   * while it waited out its back-off after failing to run, or failing to run for good) to the
   * webhooks of the configs its row keeps, as a running watch's final status goes to its own.
   * Once each, as after a failed delivery: nothing follows it, and a watch that could not run
   * may fail on its webhook too. Before, they were never told: nothing ran the watch to tell them.
   */
  async tellUnrun(watch: UnrunWatch, end: WatchEnd): Promise<void> {
    const final = finalNotification(watch.id, watch.contextId, end);
    if (!final) return;
    let configs: StoredPushNotificationConfig[];
    try {
      configs = storedConfigs(watch.id, watch.pushConfigs);
    } catch (err) {
      this.log.error({ err, watch: watch.id }, "the push configs of a watch that ended could not be read; its webhooks are not told its final status");
      return;
    }
    await Promise.all(configs.map((kept) => this.#deliverFinal(watch.id, kept, final, 1)));
  }

  /**
   * A restored watch whose configs would send a token or credentials over plain http where the
   * operator does not allow it (PushConfigs.withdrawExposed) ends FAILED, saying which and why:
   * those webhooks get nothing more (not even that status, which would carry the secret too), its
   * other webhooks get the final status, and the log names the watch and what would allow it.
   * Ended rather than run on without them: its owner would not know that a webhook went quiet.
   */
  async #vetRestored(watch: Watch): Promise<void> {
    try {
      const exposed = await this.configs.withdrawExposed(watch.id);
      if (exposed.length === 0 || !watch.isOpen) return;
      for (const { config } of exposed) {
        this.log.warn(
          { watch: watch.id, principal: watch.principal, config: config.id, url: webhookForLog(config.url) },
          'a stored watch sends a token or credentials to a plain http webhook the operator does not allow; the watch ends (REGISTRY_FETCH_ALLOW listing the host, or REGISTRY_WEBHOOK_HTTP_CREDENTIALS=true, allows it)',
        );
      }
      const told = (name: (config: TaskPushNotificationConfig) => string) =>
        `The watch ended: ${exposed.map(({ config, why }) => `the webhook of push config "${config.id}" (${name(config)}) is not sent to any more. ${why}`).join(' ')} Start a new watch with an https webhook.`;
      watch.end('failed', told((config) => config.url), told((config) => webhookForLog(config.url)));
    } catch (err) {
      this.log.error({ err, watch: watch.id }, "a restored watch's push configs could not be checked; they are used as they are");
    }
  }

  /** Watch `watchId`'s final status to one of its webhooks (the watch has ended: a failure is only logged). */
  async #deliverFinal(watchId: string, kept: StoredPushNotificationConfig, body: Notification, attempts: number): Promise<void> {
    const failure = await this.#deliver(kept, body, attempts);
    const { config } = kept;
    if (failure) this.log.warn({ watch: watchId, url: webhookForLog(config.url), failure: withoutWebhook(failure, config.url) }, 'the final status of a watch could not be pushed');
  }

  /**
   * One notification to the webhook of config `configId`, as the task has it now (none if it was
   * deleted meanwhile). `what` names it with its verb, for the watch's end ("event 7 was").
   */
  async #deliverTo(watch: Watch, configId: string, body: Notification, what: string): Promise<void> {
    if (!watch.isOpen) return;
    const kept = this.configs.keptFor(watch.id).find((c) => c.config.id === configId);
    if (!kept) return;
    // The client may delete (or replace) the config of a failing webhook meanwhile: its retries
    // stop then, and its failure no longer ends the watch (before, a watch whose broken webhook
    // was removed to save it still ended FAILED at the end of that webhook's retries).
    const current = () => this.configs.keptFor(watch.id).some((c) => c.config.id === configId && c.config.url === kept.config.url);
    const failure = await this.#deliver(kept, body, this.#delays.length + 1, watch, current);
    const { config } = kept;
    if (failure && watch.isOpen && current()) {
      this.log.warn({ watch: watch.id, url: webhookForLog(config.url), failure: withoutWebhook(failure, config.url) }, 'push notifications failed; the watch ends');
      // A window of 0 is one attempt, not "within 0 s".
      const tried = this.#windowMs === 0 ? 'in one attempt (REGISTRY_WEBHOOK_RETRY_SECONDS is 0: no retries)' : `within ${this.#windowMs / 1000} s (REGISTRY_WEBHOOK_RETRY_SECONDS)`;
      const told = (webhook: string, last: string) => `Push notifications to ${webhook} failed: ${what} not accepted ${tried} (last: ${last}). The watch ended.`;
      // The owner is told the URL in full, and where it redirected: both theirs. The watch's
      // webhooks get this status too, and their receivers are others (the full URL, twice, handed
      // the failed one's secret path or query to each): there it is named by config id and origin.
      watch.end('failed', told(config.url, failure), told(`the webhook of push config "${config.id}" (${webhookForLog(config.url)})`, withoutWebhook(failure, config.url)));
    }
  }

  /**
   * undefined when delivered, else why the last attempt failed. For an open watch, the waits
   * between attempts end when the watch does (canceled, expired, the registry shutting down);
   * no attempt follows once `current` says the config is gone.
   */
  async #deliver(
    { config, wireVersion }: StoredPushNotificationConfig,
    notification: Notification,
    attempts: number,
    watch?: Watch,
    current: () => boolean = () => true,
  ): Promise<string | undefined> {
    const body = notification.bodyFor(wireVersion);
    let failure = '';
    /** What the last attempt's answer asked to wait (its Retry-After, on a 429 or 503). */
    let askedMs: number | undefined;
    // The window bounds the attempts' requests too, not only the waits between them: a receiver
    // that never answers cost a fetch timeout per attempt on top (35 s for a window of 5 s).
    // On the monotonic clock: on the wall clock, a step forward (NTP) between two attempts ended
    // the window at once (the watch FAILED over a receiver that was back a second later), and a
    // step back retried for as long as the step.
    // Started once the fetcher's own modules are loaded (undici, loaded on its first request: a
    // second or two on a loaded machine): counted in the window, the first notification after a
    // start could fail for the registry's own loading, not the receiver, and end the watch FAILED.
    // A failure to load is the first attempt's to tell.
    await this.fetcher.ready?.().catch(() => undefined);
    const deadline = performance.now() + this.#windowMs;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) {
        const left = deadline - performance.now();
        if (left <= 0) return failure;
        await waitOrEnd(Math.min(retryWaitMs(this.#delays[attempt - 1] ?? 0, askedMs, this.#maxDelayMs), left), watch);
        if ((watch && !watch.isOpen) || !current()) return failure;
      }
      // Cut at the window's end (never below MIN_ATTEMPT_MS); the fetch timeout still bounds each
      // attempt, and the guard counts this cut as a timeout too. Its timer is cleared when the
      // attempt ends: left for the window (a minute by default), it held the registration whose
      // change made the event, its request and body among it (1 MB bodies: 1 MB an event).
      const cutMs = Math.max(MIN_ATTEMPT_MS, deadline - performance.now());
      const cut = attempts > 1 ? clearableTimeout(cutMs, WINDOW_END_MESSAGE) : undefined;
      try {
        await this.fetcher.postJson(config.url, body, { ...this.configs.sendOptions(config, wireVersion), ...(cut ? { signal: cut.signal } : {}) });
        return undefined;
      } catch (error) {
        // An attempt cut here is told as the window's end, with what the attempt before it was
        // answered: the guard tells only that its caller's deadline passed, and the owner of a
        // webhook that answered a redirect at once, whose last attempt a loaded registry did not
        // finish in the window's last 0.5 s, was told of a timeout, and not of the redirect to fix.
        if (cut?.signal.aborted && error instanceof FetchError && error.reason === 'timeout') {
          const before = failure ? ` (the attempt before it: ${failure})` : '';
          failure = `no complete answer from ${config.url} within ${Math.round(cutMs)} ms, when the retry window (REGISTRY_WEBHOOK_RETRY_SECONDS) ended${before}`;
          continue;
        }
        failure = error instanceof Error ? error.message : String(error);
        askedMs = error instanceof FetchError ? error.retryAfterMs : undefined;
        // A refusal by the guard's policy will not change on retry.
        if (error instanceof FetchError && error.refused) break;
      } finally {
        cut?.clear();
      }
    }
    return failure;
  }
}

/**
 * Waits `delayMs`, or until `watch` ends if that comes first. The watch's end is followed by a
 * listener removed after the wait, not by racing `watch.ended`: a race leaves its reaction on the
 * promise until the watch ends, with the async context it was made in (the request whose change
 * made the event), so every retried notification held that request, its body among it, for as
 * long as the watch ran.
 */
async function waitOrEnd(delayMs: number, watch: Watch | undefined): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let stopFollowing = (): void => undefined;
  await new Promise<void>((resolve) => {
    // Unref'd: a wait never holds the process open at shutdown.
    timer = setTimeout(resolve, delayMs).unref();
    if (watch) stopFollowing = watch.whenEnded(resolve);
  });
  clearTimeout(timer);
  stopFollowing();
}

/** The SDK's push sender for tasks that are not watches: one attempt per event, through the guard. */
export class GuardedPushSender implements PushNotificationSender {
  constructor(
    private readonly configs: PushConfigs,
    private readonly fetcher: Fetcher,
    private readonly watches: WatchHub,
    private readonly log: Logger,
  ) {}

  async send(response: StreamResponse, _context?: ServerCallContext, task?: Task): Promise<void> {
    const payload = response.payload;
    const taskId =
      payload?.$case === 'task' ? payload.value.id : payload?.$case === 'statusUpdate' || payload?.$case === 'artifactUpdate' ? payload.value.taskId : undefined;
    if (!taskId || this.watches.get(taskId)) return; // watches push their own events (WatchPushes)
    const state = payload?.$case === 'task' ? payload.value.status?.state : payload?.$case === 'statusUpdate' ? payload.value.status?.state : undefined;
    // A watch's task is pushed by WatchPushes only. One the hub does not hold was refused (a bad
    // request, past REGISTRY_MAX_WATCHES: REJECTED; a watch that started never ends so) or has
    // ended (WatchPushes pushes its final status and drops its configs). The refusal's answer is
    // in the response: POSTing it let a caller make the registry send a request to any URL for
    // every watch it asked for, past the cap that bounds watches.
    if (asksForWatch(task ?? (payload?.$case === 'task' ? payload.value : undefined))) {
      if (state === TaskState.TASK_STATE_REJECTED) this.configs.drop(taskId);
      return;
    }
    const notification = new Notification(response, task);
    await Promise.all(
      this.configs.keptFor(taskId).map(({ config, wireVersion }) =>
        this.fetcher.postJson(config.url, notification.bodyFor(wireVersion), this.configs.sendOptions(config, wireVersion)).catch((error: unknown) => {
          const failure = error instanceof Error ? error.message : String(error);
          this.log.warn({ taskId, url: webhookForLog(config.url), failure: withoutWebhook(failure, config.url) }, 'a push notification failed');
        }),
      ),
    );
    if (state !== undefined && TERMINAL.has(state)) this.configs.drop(taskId);
  }
}

/**
 * A webhook URL as the operator's log shows it: its origin only. A webhook's path and query are
 * often its secret (Slack's /services/T…/B…/…, ?token=…), and logs are read by more people, and
 * kept longer, than the watch's owner's own answer, which names the URL in full.
 */
function webhookForLog(url: string): string {
  try {
    return `${new URL(url).origin}/…`;
  } catch {
    return '(not a URL)';
  }
}

/** An http(s) URL within a failure's text (up to a space, quote, bracket or comma). */
const URL_IN_TEXT = /https?:\/\/[^\s"'()<>,]+/gi;

/**
 * A failure's text with the webhook's URL (as given, and as the fetcher writes it), and any other
 * URL in it (where the webhook redirected: often the same secret path), shown as in the log.
 */
function withoutWebhook(text: string, url: string): string {
  let href = url;
  try {
    href = new URL(url).href;
  } catch {
    // not a URL: only the given form can appear
  }
  let out = text;
  for (const form of new Set([href, url])) out = out.split(form).join(webhookForLog(url));
  return out.replace(URL_IN_TEXT, (found) => (found.endsWith('/…') ? found : webhookForLog(found)));
}

/** The task was opened by a message asking for a watch ({"watch": {...}} in a data part). */
export function asksForWatch(task: Task | undefined): boolean {
  return (task?.history?.[0]?.parts ?? []).some((part) => part.content?.$case === 'data' && Object.hasOwn(part.content.value ?? {}, 'watch'));
}
