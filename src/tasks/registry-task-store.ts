/**
 * The registry's task store (the SDK's TaskStore, shared by every A2A binding): private,
 * bounded and cheap.
 *
 * - Private: tasks are scoped by owner (task-owner.ts): a caller sees and lists only its own; an
 *   anonymous caller's tasks are reachable by no later request. Not by tenant: the registry is
 *   not multi-tenant, so the tenant a request names is ignored (protocol/call-context.ts keeps
 *   it out of the call context; scopeOf does not read it either) and every task is stored under
 *   the tenant "" of the SDK's table layout.
 * - Bounded: tasks live in memory (bounded-memory.ts: caps on count and bytes, a time to live),
 *   except those the executor asks to keep durably — accepted writes (they carry the
 *   acknowledgement) and long-running tasks that must survive a restart (watches). Reads and
 *   every refused request never touch the database, so no caller can grow it by asking.
 * - Cheap: a task in memory is saved and loaded as a structural copy (copyTask below) rather
 *   than a deep clone; durable tasks are written through to the database, and a copy is kept in
 *   a small cache of their own (DURABLE_CACHE_*), not in the reads' memory: a write-heavy
 *   registry would otherwise push the tasks of reads out long before their count or time to
 *   live says (REGISTRY_TASK_MEMORY_COUNT bounds reads and refusals only); a durable task the
 *   cache no longer holds is read back from the database. A task the executor has just opened
 *   is known not to be stored yet, so the SDK's "load before save" costs no query.
 *
 * Durable rows keep the SDK's `tasks` table layout (task-rows.ts). Anonymous callers get two
 * memory bounds of their own (same caps, at most a minute to live): their tasks serve only the
 * request that made them (a finished one is not kept at all), and a flood of them cannot push
 * other callers' tasks out.
 */
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { TaskState, taskStateToJSON, type ListTasksRequest, type ListTasksResponse, type Task } from '@a2a-js/sdk';
import { resolveUserScope, type OwnerResolver, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';
import type { Logger } from '../observability/logger.js';
import { currentScope } from '../observability/request-scope.js';
import type { TaskPlacement } from '../operations/task-placement.js';
import { FINISHED_TASK_STATES, UnstorableTextError } from '../storage/common.js';
import { StorageUnavailableError } from '../storage/faults.js';
import type { BatchedDeletion, RetentionPolicy, TaskKey, TaskListQuery, TaskRecords, TaskRow, TaskScope } from '../storage/types.js';
import { BoundedTaskMemory, footprintOf, rowBytes, type HeldEntry, type HeldTask, type MemoryLimits } from './bounded-memory.js';
import { STORAGE_UNAVAILABLE_REASON, StorageUnavailableA2AError } from './storage-unavailable.js';
import { isAnonymousTaskOwner } from './task-owner.js';
import { fromTaskRow, statusLastUpdated, toTaskRow } from './task-rows.js';

const TERMINAL = new Set<TaskState>([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
/** Anonymous tasks serve the request that made them (and its stream) only. */
const ANONYMOUS_TTL_MS = 60_000;
/** Bounds the executor's pending marks (a mark whose save never came is dropped eventually). */
const MAX_MARKS = 10_000;
const DEFAULT_PAGE_SIZE = 50;
/**
 * Durable tasks cached in memory: those in flight (the SDK loads a task before each of its
 * saves) and the ones just finished (a client's GetTask right after its registration) are
 * answered without a query. Also within the reads' own limits, so a process told to hold few
 * tasks holds few of these too.
 */
const DURABLE_CACHE_TASKS = 1_000;
const DURABLE_CACHE_BYTES = 8 * 1024 * 1024;

export interface TaskStoreOptions {
  ownerResolver?: OwnerResolver;
  log?: Logger;
}

/** An insertion-ordered set (or map, with values) that forgets its oldest members beyond a size. */
class Marks<V = true> {
  readonly #ids = new Map<string, V>();
  add(id: string, ...value: V extends true ? [] : [V]): void {
    this.#ids.set(id, (value.length > 0 ? value[0] : true) as V);
    if (this.#ids.size > MAX_MARKS) this.#ids.delete(this.#ids.keys().next().value!);
  }
  has(id: string): boolean {
    return this.#ids.has(id);
  }
  get(id: string): V | undefined {
    return this.#ids.get(id);
  }
  delete(id: string): void {
    this.#ids.delete(id);
  }
}

export class RegistryTaskStore implements TaskStore, TaskPlacement {
  readonly #records: TaskRecords;
  /** Tasks of reads and refusals (REGISTRY_TASK_MEMORY_*): memory is all they have. */
  readonly #reachable: BoundedTaskMemory;
  /** Anonymous callers' tasks, for the request that made them. */
  readonly #anonymous: BoundedTaskMemory;
  /** Copies of durable tasks, which the database holds: a cache, so that writes never evict reads. */
  readonly #cached: BoundedTaskMemory;
  readonly #ownerResolver: OwnerResolver;
  readonly #log: Logger | undefined;
  /** Tasks the executor opened and that were not saved yet: nothing stored can have their id. */
  readonly #opened = new Marks();
  /** Tasks kept durably (the executor asked to, or they were read unfinished from the database), until their final save. */
  readonly #durable = new Marks();
  /** Durable tasks whose row was committed with the write they acknowledge (that row), until their save. */
  readonly #written = new Marks<TaskRow>();
  /** Tasks whose request is answered with a protocol error: never kept (until their final save). */
  readonly #unkept = new Marks();

  constructor(records: TaskRecords, limits: MemoryLimits, options: TaskStoreOptions = {}) {
    this.#records = records;
    // One principal's flood of reads pushes out its own tasks first, not everyone's; anonymous
    // tasks (an owner per request, never read back) and cached copies of durable ones (read back
    // from the database) go oldest first.
    this.#reachable = new BoundedTaskMemory({ ...limits, byOwner: true });
    this.#anonymous = new BoundedTaskMemory({ ...limits, ttlMs: Math.min(limits.ttlMs, ANONYMOUS_TTL_MS) });
    this.#cached = new BoundedTaskMemory({
      maxTasks: Math.min(limits.maxTasks, DURABLE_CACHE_TASKS),
      maxBytes: Math.min(limits.maxBytes, DURABLE_CACHE_BYTES),
      ttlMs: limits.ttlMs,
    });
    this.#ownerResolver = options.ownerResolver ?? resolveUserScope;
    this.#log = options.log;
  }

  // ---- what the executor tells the store (TaskPlacement) ----

  opened(taskId: string): void {
    this.#opened.add(taskId);
  }

  keepDurably(taskId: string): void {
    this.#durable.add(taskId);
  }

  acknowledgementRow(task: Task, context: ServerCallContext): TaskRow | undefined {
    const scope = this.scopeOf(context);
    return isAnonymousTaskOwner(scope.owner) ? undefined : toTaskRow(scope, copyTask(task));
  }

  keptWithWrite(taskId: string, row: TaskRow): void {
    this.#written.add(taskId, row);
  }

  answeredWithError(taskId: string, acknowledgement?: TaskRow): void {
    this.#unkept.add(taskId);
    this.#durable.delete(taskId);
    this.#written.delete(taskId);
    if (acknowledgement) void this.#withdraw({ tenant: acknowledgement.tenant, owner: acknowledgement.owner }, taskId);
  }

  /**
   * Removes the acknowledgement of a refused write, if its write committed it after all. Only then:
   * a deletion of nothing succeeds even on a full disk, and a write that succeeds clears the fault
   * /readyz reports. The deletion may be refused too: on SQLite a commit
   * refused after it was made is in the connection, and so is this deletion, which is what reads
   * (and a file re-created from the connection) see.
   */
  async #withdraw(scope: TaskScope, taskId: string): Promise<void> {
    try {
      if (await this.#records.load(scope, taskId)) await this.#records.remove(scope, taskId);
    } catch (error) {
      this.#log?.debug({ taskId, err: (error as Error).message }, 'the acknowledgement of a refused write could not be removed');
    }
  }

  // ---- the SDK's TaskStore ----

  async save(task: Task, context: ServerCallContext): Promise<void> {
    if (this.#unkept.has(task.id)) {
      // Answered with a protocol error, not with this task (see answeredWithError).
      this.#opened.delete(task.id);
      if (task.status && TERMINAL.has(task.status.state)) this.#unkept.delete(task.id);
      return;
    }
    const scope = this.scopeOf(context);
    const anonymous = isAnonymousTaskOwner(scope.owner);
    if (anonymous && task.status && TERMINAL.has(task.status.state)) {
      // Finished, and reachable by no later request: nothing will load it again, so it is not
      // kept (every anonymous search would otherwise hold its answer in memory for a minute,
      // which the garbage collector then has to walk).
      this.#opened.delete(task.id);
      this.#anonymous.remove(scope.tenant, scope.owner, task.id);
      return;
    }
    const previous = anonymous ? this.#anonymous.get(scope.tenant, scope.owner, task.id) : this.#heldReachable(scope, task.id);
    // Anonymous tasks are reachable by no later request: keeping them durably would only fill the database.
    let durable = !anonymous && (this.#durable.has(task.id) || previous?.durable === true);
    this.#opened.delete(task.id);
    // Committed with the write it acknowledges: already durable, as it is now.
    const written = durable ? this.#written.get(task.id) : undefined;
    this.#written.delete(task.id);
    const terminal = task.status !== undefined && TERMINAL.has(task.status.state);
    if (written && terminal) {
      // Finished and stored: memory keeps the row as committed (what a load after a restart
      // reads too), rather than a copy of the task and the parsed request its history shares.
      this.#durable.delete(task.id);
      this.#hold(anonymous, { ...scope, id: task.id, row: written, updated: written.status_last_updated, durable: true, bytes: rowBytes(written) });
      return;
    }
    const copy = copyTask(task);
    // (Written but not finished: kept as a task, which later saves change.)
    if (durable && !written) {
      try {
        if (!(await this.#records.save(toTaskRow(scope, copy)))) {
          // Finished meanwhile, by another replica (a watch's task CancelTask ended there): the
          // stored task stands, and is what the next load reads, not this outdated copy.
          this.#log?.info({ taskId: task.id }, 'a task that has finished was not saved back unfinished');
          this.#durable.delete(task.id);
          this.#cached.remove(scope.tenant, scope.owner, task.id);
          return;
        }
      } catch (error) {
        if (error instanceof UnstorableTextError) throw malformed(error);
        if (!(error instanceof StorageUnavailableError)) throw error;
        // The write it acknowledges is committed; only its task could not be: keep it in memory
        // rather than fail an answer whose work is done.
        this.#log?.warn({ taskId: task.id, fault: error.fault.reason }, 'a durable task could not be saved; kept in memory only');
        durable = false;
      }
      if (task.status && TERMINAL.has(task.status.state)) this.#durable.delete(task.id);
    }
    this.#hold(anonymous, { ...scope, id: task.id, task: copy, updated: statusLastUpdated(copy), durable, ...footprintOf(copy) });
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const scope = this.scopeOf(context);
    if (isAnonymousTaskOwner(scope.owner)) {
      const held = this.#anonymous.get(scope.tenant, scope.owner, taskId);
      return held ? taskOf(held) : undefined;
    }
    const held = this.#heldReachable(scope, taskId);
    if (held && !mayBeOutdated(held)) return taskOf(held);
    if (!held && this.#opened.has(taskId)) return undefined;
    // The copy, when the database cannot be read now, is still the best answer there is.
    const row = held ? await this.#records.load(scope, taskId).catch(unlessUnavailable) : await this.#durableRead(() => this.#records.load(scope, taskId));
    if (!row) return held ? taskOf(held) : undefined;
    const task = fromTaskRow(row);
    // Stored, so its later saves are stored too (a running watch's), even once the cache lets it go.
    if (!task.status || !TERMINAL.has(task.status.state)) this.#durable.add(taskId);
    this.#cached.put({ ...scope, id: taskId, task: copyTask(task), updated: row.status_last_updated, durable: true, ...footprintOf(task) });
    return task;
  }

  /**
   * The caller's tasks, newest first: those in memory and the durable ones, merged. Anonymous
   * callers have none to list.
   */
  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
    const scope = this.scopeOf(context);
    // Read first: a malformed token is refused whoever sends it (an anonymous caller was answered an empty page).
    const before = params.pageToken ? decodePageToken(params.pageToken) : undefined;
    if (isAnonymousTaskOwner(scope.owner)) return { tasks: [], nextPageToken: '', pageSize, totalSize: 0 };
    const query: TaskListQuery = {
      contextId: params.contextId || undefined,
      state: params.status !== undefined && params.status !== TaskState.TASK_STATE_UNSPECIFIED ? taskStateToJSON(params.status) : undefined,
      updatedAfter: params.statusTimestampAfter ? firstMillisecondFrom(params.statusTimestampAfter) : undefined,
      before,
      limit: pageSize + 1,
      withArtifacts: params.includeArtifacts === true,
      withHistory: params.historyLength === undefined || params.historyLength > 0,
    };
    // Durable tasks come from the database (authoritative; the cache's copies are not listed); memory adds the others.
    const inMemory = this.#reachable.scope(scope.tenant, scope.owner).filter((held) => matches(held, query));
    const stored = await this.#durableRead(() => this.#records.list(scope, query));
    const candidates: Array<{ updated: number; id: string; task: () => Task }> = [
      ...inMemory.filter((held) => !before || isBefore(held, before)).map((held) => ({ updated: held.updated, id: held.id, task: () => taskOf(held) })),
      ...stored.rows.map((row) => ({ updated: row.status_last_updated, id: row.id, task: () => fromTaskRow(row) })),
    ];
    candidates.sort((a, b) => b.updated - a.updated || (b.id < a.id ? -1 : b.id > a.id ? 1 : 0));
    const page = candidates.slice(0, pageSize);
    const tasks = page.map((c) => {
      const task = c.task();
      if (!query.withArtifacts) task.artifacts = [];
      return task;
    });
    const last = page[page.length - 1];
    return {
      tasks,
      nextPageToken: candidates.length > pageSize && last ? encodePageToken(last.updated, last.id) : '',
      pageSize,
      totalSize: inMemory.length + stored.total,
    };
  }

  /**
   * Changes a durable task outside any request (a watch that ended on its own, or was renewed):
   * `change` edits the task as stored, which is saved back. Answers the task as stored then,
   * undefined when there is no such task. That is the stored task unchanged when it had finished
   * by the time of the save (another replica's CancelTask between the read and the save) and the
   * change had not: a finished task is never saved back unfinished (TaskRecords.save). The caller
   * tells by its state.
   */
  async update(scope: TaskScope, taskId: string, change: (task: Task) => void): Promise<Task | undefined> {
    let task = await this.read(scope, taskId);
    if (!task) return undefined;
    change(task);
    if (!(await this.#records.save(toTaskRow(scope, task)))) {
      const stored = await this.#records.load(scope, taskId);
      if (!stored) return undefined;
      task = fromTaskRow(stored);
    }
    if (task.status && TERMINAL.has(task.status.state)) this.#durable.delete(task.id);
    this.#hold(false, { ...scope, id: taskId, task: copyTask(task), updated: statusLastUpdated(task), durable: true, ...footprintOf(task) });
    return task;
  }

  /**
   * Task `taskId` of `scope` as it is now, outside a request: the database's row unless the copy
   * held here has finished (another replica may have changed it: see mayBeOutdated).
   */
  async read(scope: TaskScope, taskId: string): Promise<Task | undefined> {
    const held = this.#heldReachable(scope, taskId);
    if (held && !mayBeOutdated(held)) return taskOf(held);
    const row = await this.#records.load(scope, taskId);
    if (row) return fromTaskRow(row);
    return held && taskOf(held);
  }

  /**
   * Prunes the durable tasks past the retention policy (TaskRecords.prune), then forgets the
   * cached copies of finished tasks the database no longer holds: those this pruned, and those
   * another replica pruned since this one last looked (each replica prunes on its housekeeping
   * round). Cached, a pruned task was still answered by GetTask, as ListTasks (which reads the
   * database) listed nothing, until the cache's time to live ran out.
   */
  async prune(policy: RetentionPolicy, options?: BatchedDeletion): Promise<number> {
    const removed = await this.#records.prune(policy, options);
    const finished = this.#cached.all().filter((held) => isFinished(held));
    if (finished.length > 0) {
      const stored = new Set((await this.#records.existing(finished)).map(keyOf));
      for (const held of finished) if (!stored.has(keyOf(held))) this.#cached.remove(held.tenant, held.owner, held.id);
    }
    return removed;
  }

  /** Drops expired tasks from memory (called on a timer). */
  sweep(): void {
    this.#reachable.sweep();
    this.#anonymous.sweep();
    this.#cached.sweep();
  }

  /**
   * Tasks of reads and refusals held in memory, and about how many bytes they take (metrics,
   * tests): what REGISTRY_TASK_MEMORY_COUNT and _BYTES bound. The durable tasks' cache is not counted.
   */
  get memoryUsage(): { tasks: number; bytes: number } {
    return { tasks: this.#reachable.size + this.#anonymous.size, bytes: this.#reachable.bytes + this.#anonymous.bytes };
  }

  /** Copies of durable tasks cached in memory, and about how many bytes they take (metrics, tests). */
  get cacheUsage(): { tasks: number; bytes: number } {
    return { tasks: this.#cached.size, bytes: this.#cached.bytes };
  }

  /** Whose task: the caller's principal (or its one request's key); never the request's tenant (see the top). */
  scopeOf(context: ServerCallContext): TaskScope {
    return { tenant: '', owner: this.#ownerResolver(context) };
  }

  /** A task of a caller that can fetch it again, wherever memory holds it. */
  #heldReachable(scope: TaskScope, taskId: string): HeldTask | undefined {
    return this.#reachable.get(scope.tenant, scope.owner, taskId) ?? this.#cached.get(scope.tenant, scope.owner, taskId);
  }

  /**
   * Keeps a saved task in its memory: an anonymous caller's in theirs, a durable one in the
   * cache, the others in the reads' memory. A task is in one of them only (one that turned
   * durable, or could not be stored after all, leaves the other).
   */
  #hold(anonymous: boolean, entry: HeldEntry): void {
    if (anonymous) return this.#anonymous.put(entry);
    const [into, outOf] = entry.durable ? [this.#cached, this.#reachable] : [this.#reachable, this.#cached];
    outOf.remove(entry.tenant, entry.owner, entry.id);
    into.put(entry);
  }

  /**
   * A database read for a task request: a storage fault is answered as "storage unavailable", a
   * value the storage cannot hold (the stores answer a lookup of one as finding nothing) as invalid params.
   */
  async #durableRead<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (error instanceof StorageUnavailableError) {
        // Named in the request's scope, as the executor names its refusals: the v0.3 JSON-RPC
        // and gRPC answers read the reason from there (their converters drop it).
        const scope = currentScope();
        if (scope) scope.errorCode = STORAGE_UNAVAILABLE_REASON;
        throw new StorageUnavailableA2AError(`${error.message}. Retry later.`);
      }
      if (error instanceof UnstorableTextError) throw malformed(error);
      throw error;
    }
  }
}

/** A value of the request the storage cannot hold, as the SDK answers invalid params (-32602, HTTP 400). */
const malformed = (error: UnstorableTextError): RequestMalformedError => new RequestMalformedError({ message: error.message });

/**
 * A copy of a task that shares what nobody edits in place: the SDK's handler and result manager
 * (@a2a-js/sdk 1.3) change a task they hold only by assigning its fields (status, history,
 * artifacts, metadata), pushing to its artifacts array, and assigning an artifact's parts, name,
 * description or metadata; messages, parts and their values are replaced, never edited. So the
 * task, its status, its arrays and its artifacts are copied, and the rest is shared. That is a
 * small fraction of a deep clone's cost (structuredClone of a search answer is most of what a
 * request's task costs). test/tasks-bounded.test.ts pins the assumption on streamed answers.
 */
export function copyTask(task: Task): Task {
  return {
    ...task,
    status: task.status && { ...task.status },
    artifacts: task.artifacts && task.artifacts.map((artifact) => ({ ...artifact, parts: artifact.parts && [...artifact.parts] })),
    history: task.history && [...task.history],
    metadata: task.metadata && { ...task.metadata },
  };
}

/** A held task as a task of its own (see copyTask), whichever form memory keeps it in. */
function taskOf(held: HeldTask): Task {
  return held.task ? copyTask(held.task) : fromTaskRow(held.row);
}

/**
 * A cached copy of a durable task that has not finished: another replica sharing the database
 * may have changed the task since (a watch canceled or renewed there, or moved there and its
 * events written), so the database's row is read instead. Served from the copy, GetTask on the
 * replica that had run a watch showed it WORKING after CancelTask on another had answered
 * CANCELED, and the watch's next write there put the copy's WORKING status back over the
 * CANCELED one. Finished tasks no longer change: their copies stand.
 */
function mayBeOutdated(held: HeldTask): boolean {
  return held.durable && !isFinished(held);
}

/** Nothing read, when storage is unavailable; any other failure stands. */
function unlessUnavailable(error: unknown): undefined {
  if (error instanceof StorageUnavailableError) return undefined;
  throw error;
}

/** A held task has finished (only finished tasks are pruned). */
function isFinished(held: HeldTask): boolean {
  if (held.task) return held.task.status !== undefined && TERMINAL.has(held.task.status.state);
  return held.row.status_state !== null && FINISHED_STATE_NAMES.has(held.row.status_state);
}

const FINISHED_STATE_NAMES: ReadonlySet<string> = new Set(FINISHED_TASK_STATES);

const keyOf = (key: TaskKey): string => `${key.tenant}\u0000${key.owner}\u0000${key.id}`;

function matches(held: HeldTask, query: TaskListQuery): boolean {
  const contextId = held.task ? held.task.contextId : held.row.context_id;
  const state = held.task ? held.task.status && taskStateToJSON(held.task.status.state) : held.row.status_state;
  if (query.contextId && contextId !== query.contextId) return false;
  if (query.state && state !== query.state) return false;
  if (query.updatedAfter !== undefined && held.updated < query.updatedAfter) return false;
  return true;
}

/**
 * The first millisecond (status times are kept in milliseconds) at or after an RFC 3339 time,
 * which may be finer: "…:13.9015Z" is 13.902 s. Date.parse cuts a finer time down to its
 * millisecond (13.901), so a task updated at 13.901, before the time asked, was listed, though
 * ListTasksRequest.status_timestamp_after lists only times "greater than or equal to this value"
 * (ProtoJSON writes Timestamps with 6 or 9 fractional digits as often as with 3).
 */
function firstMillisecondFrom(timestamp: string): number {
  const ms = Date.parse(timestamp);
  const finer = /\.\d{3}(\d+)/.exec(timestamp)?.[1];
  return finer !== undefined && /[1-9]/.test(finer) ? ms + 1 : ms;
}

function isBefore(held: Pick<TaskRow, 'id'> & { updated: number }, cursor: { updated: number; id: string }): boolean {
  return held.updated < cursor.updated || (held.updated === cursor.updated && held.id < cursor.id);
}

/** Page tokens are the last task's position: "v1.<status ms>.<id>", base64url. */
/**
 * The pageToken of the page after `task`, one a list answered: where a page cut short (by its
 * size, protocol/answer-size.ts) stops, the same token as a page of that many tasks ends with.
 */
export const pageTokenAfter = (task: Task): string => encodePageToken(statusLastUpdated(task), task.id);

function encodePageToken(updated: number, id: string): string {
  return Buffer.from(`v1.${updated}.${id}`, 'utf8').toString('base64url');
}

function decodePageToken(token: string): { updated: number; id: string } {
  // A task id holds no U+0000 (the registry makes them): a position with one was never issued,
  // and on PostgreSQL, whose text cannot hold it, could not even be compared.
  const match = /^v1\.(\d{1,15})\.([^\u0000]{1,64})$/s.exec(Buffer.from(token, 'base64url').toString('utf8'));
  if (!match) {
    // Named as every other invalid parameter of ListTasks is (and a push config list's pageToken).
    throw new RequestMalformedError({ message: 'pageToken is not a page token of this task list; pass the nextPageToken of the previous page.', metadata: { field: 'pageToken' } });
  }
  return { updated: Number(match[1]), id: match[2]! };
}
