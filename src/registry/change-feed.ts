/**
 * The one stream of committed changes that everything derived from storage follows: this
 * replica's search index, standing searches, catalog caches (ETags), freshness bookkeeping.
 *
 * Changes reach it from two places, and subscribers cannot tell them apart except by `origin`:
 * - this process's own writes, published by the service right after the store committed them
 *   and before the write is acknowledged (so a client that registers and then searches finds
 *   what it registered);
 * - writes committed by other replicas (PostgreSQL), published by the IndexFollower as it
 *   catches up with the store's change log.
 *
 * With a follower, this process's own writes come back through the change log too: they are
 * recognised (`isEcho`) and not published twice, which a standing search would send as a second,
 * spurious `updated` event. The follower may read a write back before the write itself has
 * published it (its COMMIT is visible to others before the committing connection hears so):
 * writes run inside `localWrite`, and the follower waits for those running (`localWritesDone`)
 * before it decides, so the echo is recognised and the newer state is never overtaken by an
 * older one published late. Where storage says which writes recorded their change
 * (`changeRecorded`), it waits for those only: one that has not cannot be among the changes read
 * (its change will be numbered after them), and waiting for it, stuck behind a lock another
 * session holds, held every other replica's changes back for up to LOCAL_WRITE_WAIT_MS.
 *
 * Delivery is synchronous and in order; a subscriber that throws is logged and does not stop
 * the others (a derived view must never fail a write that storage already committed).
 *
 * Resync: when a replica finds that the change log was trimmed past its position (it was cut
 * off for longer than the log is kept), the changes it missed cannot be replayed one by one.
 * It reloads its index from the entries and then signals a resync: every subscriber that keeps
 * derived state (caches, standing searches) must rebuild it from the service, since any entry
 * may have changed or gone meanwhile.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { EntryDescription } from '../contract/description.js';
import { canonicalJson } from '../lib/canonical-json.js';
import type { StoredEntry } from '../storage/types.js';

/** Local changes kept at most to be recognised in the change log (a bulk import's, say). */
const MAX_ECHOES = 100_000;
/** The stamp of an entry this process removed. */
const REMOVED = '';
/** A follower waits at most this long for local writes in flight (one stuck write must not stop it). */
const LOCAL_WRITE_WAIT_MS = 5_000;

/** An entry's committed state as one string (its document by its hash): equal stamps, the same state to every subscriber. */
function stampOf(entry: StoredEntry): string {
  const { documentText: _document, ...state } = entry;
  return canonicalJson(state);
}

interface LocalWriteState {
  /** It recorded its change (or storage does not say): a follower that read the change log waits for it. */
  recorded: boolean;
}

export interface CommittedChange {
  /** The entry's id. */
  id: string;
  op: 'upsert' | 'delete';
  /** upsert: the entry as committed (current revision). */
  entry?: StoredEntry;
  /** upsert: the entry's description when the writer already built it (saves a re-parse). */
  description?: EntryDescription;
  /** delete: what was removed, when known. */
  removed?: StoredEntry;
  /** Position in the store's change log, when known (replicas always know it). */
  seq?: number;
  /** Written by this process, or by another replica and picked up from the change log. */
  origin: 'local' | 'replica';
  /**
   * Local changes: what wrote it — a registration, a refresh from the entry's source (a new
   * revision), a check that only moved the entry's health (no new revision), or a check that
   * found everything as it was and moved only its times and validators (`checked`: checkedAt,
   * fetchedAt, ETag; not in the change log, so other replicas never see it). Replica changes
   * do not know.
   */
  cause?: 'register' | 'refresh' | 'health' | 'checked';
}

export type ChangeListener = (change: CommittedChange) => void;
/** Told that individual changes were missed: rebuild derived state from the service. */
export type ResyncListener = (reason: string) => void;

export class ChangeFeed {
  private readonly listeners = new Set<ChangeListener>();
  private readonly resyncListeners = new Set<ResyncListener>();
  private published = 0;
  /** With a follower (expectEchoes): per entry id, the state this process last published itself. */
  private echoes: Map<string, string> | undefined;
  /** With a follower: the local writes between their start and their publish (or failure), and whether each recorded its change. */
  private readonly writing = new Map<Promise<void>, LocalWriteState>();
  /** The local write running in an async context (changeRecorded). */
  private readonly writeScope = new AsyncLocalStorage<LocalWriteState>();
  /** Storage says when a write recorded its change (expectEchoes). */
  private recordsReported = false;
  /** Echoes the follower recognised, by the catch-up it did so in (see isEcho, caughtUp). */
  private readonly recognised = new Map<string, number>();
  /** The follower's catch-ups that read the change log to its end. */
  private catchUps = 0;

  constructor(private readonly onListenerError: (err: unknown, change: CommittedChange) => void = () => undefined) {}

  /**
   * Calls `listener` with every change published from now on, and `onResync` when changes were
   * missed (see above); returns the unsubscribe function. A subscriber that keeps state derived
   * from entries must pass `onResync`.
   */
  subscribe(listener: ChangeListener, onResync?: ResyncListener): () => void {
    this.listeners.add(listener);
    if (onResync) this.resyncListeners.add(onResync);
    return () => {
      this.listeners.delete(listener);
      if (onResync) this.resyncListeners.delete(onResync);
    };
  }

  /** Announces that individual changes were missed and the index was reloaded from storage. */
  resync(reason: string): void {
    this.published++;
    for (const listener of this.resyncListeners) {
      try {
        listener(reason);
      } catch (err) {
        this.onListenerError(err, { id: '', op: 'upsert', origin: 'replica' });
      }
    }
  }

  /**
   * This process's own writes will come back through the change log (a follower reads it):
   * recognise them (isEcho). `recordsReported`: storage calls changeRecorded inside each write.
   */
  expectEchoes(recordsReported = false): void {
    this.echoes ??= new Map();
    this.recordsReported = recordsReported;
  }

  /** Storage: the local write running in this async context recorded its change, and may commit from now on. */
  changeRecorded(): void {
    const state = this.writeScope.getStore();
    if (state) state.recorded = true;
  }

  /**
   * Runs a write of this process: `work` stores it and publishes what it committed. With a
   * follower, it is tracked until then, so a follower that reads its change first waits for it.
   */
  localWrite<T>(work: () => Promise<T>): Promise<T> {
    if (!this.echoes) return work();
    const state: LocalWriteState = { recorded: !this.recordsReported };
    const running = this.writeScope.run(state, work);
    const tracked = running.then(
      () => undefined,
      () => undefined,
    );
    this.writing.set(tracked, state);
    void tracked.then(() => this.writing.delete(tracked));
    return running;
  }

  /**
   * Resolves once every local write running now that recorded its change has published or
   * failed (or after LOCAL_WRITE_WAIT_MS). A follower calls it after reading changes and before
   * re-reading their entries: any change it read that this process wrote has been published by then.
   */
  localWritesDone(): Promise<void> {
    const recorded = [...this.writing].filter(([, state]) => state.recorded).map(([write]) => write);
    if (recorded.length === 0) return Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, LOCAL_WRITE_WAIT_MS).unref();
    });
    return Promise.race([Promise.all(recorded).then(() => undefined), waited]).finally(() => clearTimeout(timer));
  }

  /**
   * Whether `entry` (undefined: the entry is gone) is the state this process itself last
   * published for `id`: the change log's copy of its own write, already published. Asked once
   * per change the follower reads; a state that differs (another replica wrote since) is no echo.
   */
  isEcho(id: string, entry: StoredEntry | undefined): boolean {
    const key = id.toLowerCase();
    const own = this.echoes?.get(key);
    if (own === undefined) return false;
    if (own === (entry ? stampOf(entry) : REMOVED)) {
      // Kept until the follower has read the log once more to its end: it may have read this
      // state for an earlier write's change (it waits for the local writes running before it
      // reads the entries), and this state's own change, read next, finds it again. Forgotten at
      // once, that change was published a second time: the last of a run of writes to one entry
      // came twice to its watches ("updated" again, a second webhook push).
      this.recognised.set(key, this.catchUps);
      return true;
    }
    this.echoes!.delete(key);
    this.recognised.delete(key);
    return false;
  }

  /**
   * The follower read the change log to its end. An echo it recognised before its previous such
   * catch-up has had its own change read since (that catch-up began after the write had
   * published, so after its change committed): it is forgotten.
   */
  caughtUp(): void {
    this.catchUps++;
    for (const [key, at] of this.recognised) {
      if (at >= this.catchUps - 1) continue;
      this.recognised.delete(key);
      this.echoes?.delete(key);
    }
  }

  publish(change: CommittedChange): void {
    if (this.echoes && change.origin === 'local') {
      const key = change.id.toLowerCase();
      this.echoes.delete(key); // re-inserted last: the oldest go first past the cap
      this.recognised.delete(key); // a new state, whose change the follower has yet to read
      const state = change.op === 'delete' ? REMOVED : change.entry ? stampOf(change.entry) : undefined;
      if (state !== undefined) this.echoes.set(key, state);
      if (this.echoes.size > MAX_ECHOES) {
        const oldest = this.echoes.keys().next().value!;
        this.echoes.delete(oldest);
        this.recognised.delete(oldest);
      }
    }
    this.published++;
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (err) {
        this.onListenerError(err, change);
      }
    }
  }

  /** How many changes this process has seen (local and replica): a cheap version for caches. */
  get version(): number {
    return this.published;
  }
}
