/**
 * A watch's stored task, kept current by the watch itself for as long as it runs.
 *
 * The task of a watch is what GetTask answers and what SubscribeToTask sends first (A2A 3.1.6:
 * the task as it is now): its `watch-results` artifact (the initial matches, when asked for),
 * its `watch-event` artifact (the last event: each replaces the previous one), and at the end
 * its final status, both artifacts then dropped (dropWatchMatches). These used to be written by
 * the SDK's result manager as the stream that started the watch was read, so they stopped when
 * that stream was cut, lagged behind a client reading slowly, and never moved after a restart
 * (no stream then); a watch with a push config stayed current only because the SDK's
 * non-streaming path happened to read on. Now every watch has one writer, here, whether or not a
 * stream is attached: the events as they come (writes coalesced: one in flight per task, the next
 * carrying the latest event), and the end.
 *
 * A new watch's task is written first by the SDK (the WORKING task its request answers with);
 * this starts writing once the request handler says that is done (`taskSaved`), so the two never
 * write the task at once. A watch restored after a restart is followed from the start.
 *
 * Every change to a watch's task goes through `update`, one after another per task (a renewal
 * too: written beside an event, either could have undone the other).
 */
import type { Artifact, Task } from '@a2a-js/sdk';
import type { WatchEvent } from '../contract/types.js';
import type { Logger } from '../observability/logger.js';
import { outsideScope } from '../observability/request-scope.js';
import { WATCH_EVENT_ARTIFACT, WATCH_RESULTS_ARTIFACT, watchEndOf, watchEndStatus, watchEventUpdate, watchResultsUpdate } from '../operations/executor.js';
import type { TaskScope } from '../storage/types.js';
import type { Watch, WatchEnd, WatchHub } from '../subscriptions/watch-hub.js';
import type { RegistryTaskStore } from '../tasks/registry-task-store.js';
import { TERMINAL } from './watch-push.js';

/** What this needs of the task store: reading and changing a stored task outside a request. */
export type TaskUpdates = Pick<RegistryTaskStore, 'read' | 'update'>;

/** What is still to be written of one watch's task. */
interface Followed {
  /** The SDK has stored the task: writes may begin. */
  saved: boolean;
  /** The initial matches are in the stored task (or there are none to store). */
  initialStored: boolean;
  /** The last event, until it is written. */
  latest: WatchEvent | undefined;
  /** A write is queued that has not started yet: it will carry whatever is latest by then. */
  queued: boolean;
}

export class WatchTasks {
  /** The last write queued for each task, so the next waits for it. */
  readonly #writes = new Map<string, Promise<void>>();
  readonly #followed = new Map<string, Followed>();
  /**
   * Watches that ended before the SDK stored their task (their webhook refused the first
   * notification while the request was still being answered), by task id, until it is stored
   * (taskStored), for a minute at most (a request that failed stores none).
   */
  readonly #endedUnstored = new Map<string, Watch>();

  constructor(
    private readonly tasks: TaskUpdates,
    watches: WatchHub,
    private readonly log: Logger,
  ) {
    watches.onStart((watch) => this.#follow(watch));
    // Called as the watch ends (not when the registry shuts down, which ends it with no status):
    // the end is queued before CancelTask reads the task (see settled).
    watches.onEnd((watch, end) => this.#end(watch, end));
    // A stored watch that ended before it ran (its definition unreadable, or failing to run for good): its task says why.
    // (One canceled while it waited to run again has its CANCELED status stored already: kept.)
    watches.onEndUnrun((task, end) => {
      this.storeEnd(task.scope, task.id, end).catch((err: unknown) => this.log.error({ err, taskId: task.id }, 'the task of a watch that ended could not be updated'));
    });
    // A watch another replica canceled (CancelTask there stored this status first) ends here with it.
    watches.readEndsWith(async (watch) => {
      const task = await this.tasks.read(watch.scope, watch.id);
      return task?.status && TERMINAL.has(task.status.state) ? watchEndOf(task.status) : undefined;
    });
  }

  /**
   * The SDK stored the task of new watch `watch` (its request's answer): its initial matches and
   * the events so far are written now, and each event from here on.
   */
  taskSaved(watch: Watch): void {
    this.#endedUnstored.delete(watch.id);
    const followed = this.#followed.get(watch.id);
    if (followed?.saved) return;
    if (followed) {
      followed.saved = true;
      this.#schedule(watch, followed);
    }
    // It ended before its task was stored, when there was nothing to write its end to: now there is.
    if (!watch.isOpen) void watch.ended.then((end) => this.#writeEnd(watch, end));
  }

  /**
   * The SDK stored task `taskId`, the answer to a message that may have started a watch: `running`
   * when the hub still runs it. One that ended meanwhile is the hub's no more, but its end is
   * still to be written: without it, its task said WORKING for good (seen under load, a webhook
   * refusing the initial matches before the SendMessage was answered). Returns the task's watch,
   * running or ended (its stream tells that end), undefined when the task is no watch's.
   */
  taskStored(taskId: string, running: Watch | undefined): Watch | undefined {
    const watch = running ?? this.#endedUnstored.get(taskId);
    if (watch) this.taskSaved(watch);
    return watch;
  }

  /** Changes the stored task `taskId` of `scope`, after every write queued for it before. Undefined when there is no such task. */
  update(scope: TaskScope, taskId: string, change: (task: Task) => void): Promise<Task | undefined> {
    return this.#enqueue(taskId, () => this.tasks.update(scope, taskId, change));
  }

  /** Resolves once the writes queued for task `taskId` so far are done (an ended watch's status among them). */
  settled(taskId: string): Promise<void> {
    return this.#writes.get(taskId) ?? Promise.resolve();
  }

  #follow(watch: Watch): void {
    const followed: Followed = { saved: watch.restored, initialStored: watch.restored, latest: undefined, queued: false };
    this.#followed.set(watch.id, followed);
    const stop = watch.listen((event) => {
      followed.latest = event;
      if (followed.saved) this.#schedule(watch, followed);
    });
    void watch.ended.then(() => {
      stop();
      this.#followed.delete(watch.id);
    });
  }

  /** A write of what is still unwritten, unless one is queued already (it will carry it). */
  #schedule(watch: Watch, followed: Followed): void {
    if (followed.queued) return;
    followed.queued = true;
    void this.#enqueue(watch.id, () => {
      followed.queued = false;
      const artifacts = this.#unwritten(watch, followed);
      if (artifacts.length === 0) return Promise.resolve(undefined);
      // Not into a task that has ended (canceled where the SDK marked it, with the watch running on elsewhere): its matches are gone.
      return this.tasks.update(watch.scope, watch.id, (task) => {
        if (!task.status || !TERMINAL.has(task.status.state)) putArtifacts(task, artifacts);
      });
    }).catch((err: unknown) => this.log.warn({ err, taskId: watch.id }, "a watch's task could not be updated with its latest event; the next event updates it"));
  }

  /** The artifacts not yet in the stored task (taken: the write that asks is the one that stores them). */
  #unwritten(watch: Watch, followed: Followed): Artifact[] {
    const artifacts: Artifact[] = [];
    if (!followed.initialStored) {
      followed.initialStored = true;
      const initial = watch.initialMatches();
      if (initial) artifacts.push(watchResultsUpdate(watch.id, watch.contextId, initial).artifact!);
    }
    if (followed.latest) artifacts.push(watchEventUpdate(watch.id, watch.contextId, followed.latest).artifact!);
    followed.latest = undefined;
    return artifacts;
  }

  /** The watch ended (canceled, expired, failed; a restored one may end before it is followed). */
  #end(watch: Watch, end: WatchEnd): void {
    const followed = this.#followed.get(watch.id);
    // Its task is not stored yet (it ended before its request was answered): see taskStored.
    if (followed && !followed.saved) {
      this.#endedUnstored.set(watch.id, watch);
      // Outside the request's scope: a timer keeps the async context it is made in.
      outsideScope(() => setTimeout(() => this.#endedUnstored.delete(watch.id), 60_000).unref());
      return;
    }
    this.#writeEnd(watch, end);
  }

  /**
   * The final status, unless the task has finished otherwise (none for a shutdown), and the
   * task's matches gone (see dropWatchMatches): an event not written yet is not written now.
   */
  #writeEnd(watch: Watch, end: WatchEnd): void {
    if (end.reason === 'closed') return;
    this.storeEnd(watch.scope, watch.id, end).catch((err: unknown) => this.log.error({ err, taskId: watch.id }, 'the task of a watch that ended could not be updated'));
  }

  /**
   * Writes `end` as the final status of watch task `taskId` (after the writes queued for it),
   * unless the task has finished otherwise, and drops its matches (see dropWatchMatches). Also
   * for a watch another replica runs and CancelTask here ends: that replica ends it with this
   * status (WatchHub.readEndsWith).
   */
  storeEnd(scope: TaskScope, taskId: string, end: WatchEnd): Promise<Task | undefined> {
    return this.update(scope, taskId, (task) => {
      const status = watchEndStatus(taskId, task.contextId, end);
      if (status && (!task.status || !TERMINAL.has(task.status.state))) task.status = status;
      dropWatchMatches(task);
    });
  }

  /** Runs `write` once the writes queued for `taskId` before it are done; forgets the task's queue when it empties. */
  #enqueue<T>(taskId: string, write: () => Promise<T>): Promise<T> {
    const result = (this.#writes.get(taskId) ?? Promise.resolve()).then(write);
    const done = result.then(
      () => undefined,
      () => undefined,
    );
    this.#writes.set(taskId, done);
    void done.then(() => {
      if (this.#writes.get(taskId) === done) this.#writes.delete(taskId);
    });
    return result;
  }
}

/** The artifacts of a watch's task that hold its matches: the initial ones and the last event. */
const MATCH_ARTIFACTS: ReadonlySet<string> = new Set([WATCH_RESULTS_ARTIFACT, WATCH_EVENT_ARTIFACT]);

/**
 * An ended watch's task as it is kept (REGISTRY_TASK_RETENTION_HOURS, a week by default): its
 * final status, its request and metadata, without the artifacts that held its matches (the
 * initial `watch-results`, up to 100 hits, about 48 KB, and the last `watch-event`, whose `resync`
 * holds as many). They describe a search that no longer runs, and the contract promises them
 * only while it does: an ended watch is its final status. Kept, every watch started and canceled
 * left about 48 KB in the database for a week (1,240 of them in 20 s took registry.db from 52 to
 * 113 MB).
 */
export function dropWatchMatches(task: Task): void {
  if (holdsWatchMatches(task)) task.artifacts = task.artifacts.filter((artifact) => !MATCH_ARTIFACTS.has(artifact.artifactId));
}

/** The task holds a watch's matches (see dropWatchMatches). */
export function holdsWatchMatches(task: Task): boolean {
  return (task.artifacts ?? []).some((artifact) => MATCH_ARTIFACTS.has(artifact.artifactId));
}

/** Puts each artifact in the task, in the place of the one with its id (each event replaces the previous one). */
function putArtifacts(task: Task, artifacts: readonly Artifact[]): void {
  const kept = [...(task.artifacts ?? [])];
  for (const artifact of artifacts) {
    const at = kept.findIndex((a) => a.artifactId === artifact.artifactId);
    if (at >= 0) kept[at] = artifact;
    else kept.push(artifact);
  }
  task.artifacts = kept;
}
