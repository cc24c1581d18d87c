/**
 * The change-log sequences this process wrote itself, for a store that other processes may also
 * write without telling it (SQLite: `a2a-registry import` beside a running registry). Such a
 * store has no follower to apply another process's changes, so what follows the change feed (the
 * search index, standing searches) never sees them: a position saved for it (the saved index,
 * registry/index-snapshots.ts; a watch's, subscriptions/watch-hub.ts) must not pass a change it
 * never saw, or the next start skips it. Past the first change it did not write, the position
 * stays, and the next start replays from there (the index) or sends a resync (a watch).
 *
 * Memory: sequences are dropped once a saved position passes them, and all of them once a
 * foreign change has been met (nothing after it can be passed until a restart).
 */
import type { Change } from './types.js';

/** The change log, as the position is walked along it. */
export interface ChangeLogReader {
  changesSince(seq: number, limit: number): Promise<Change[]>;
  changesTrimmedThrough(): Promise<number>;
}

/** Changes read at a time when checking which are this process's own. */
const WALK_BATCH = 1000;

export class OwnChanges {
  readonly #seqs = new Set<number>();
  /** Recorded, not yet acknowledged (committed, its fsync still running): not in the index yet. */
  readonly #pending = new Set<number>();
  #tracking = true;
  /** Through here the change log holds only this process's own published changes (undefined: not started). */
  #through: number | undefined;
  /** The walk under way (see publishedThrough): one at a time, or one would forget what another still looks for. */
  #walking: Promise<unknown> = Promise.resolve();

  /** Called by the store as it records a change (inside its transaction); pending until `settled`. */
  add(seq: number): void {
    // Pending ones are kept even when not tracking: standing searches stop before them too (firstPending).
    this.#pending.add(seq);
    if (this.#tracking) this.#seqs.add(seq);
  }

  /**
   * The write that recorded `seq` was acknowledged (and published: the index has it), or refused
   * after its commit and published since (the store announced it once storage took writes
   * again); `kept` false: rolled back, the number is not this process's change (SQLite gives it
   * to the next change written, another process's maybe: add() takes it back if it is ours).
   */
  settled(seq: number, kept: boolean): void {
    this.#pending.delete(seq);
    if (!kept) this.#seqs.delete(seq);
  }

  /**
   * The first change this process recorded and has not acknowledged (published) yet, if any:
   * committed, so readers see it in the change log, but not yet told to those following the
   * changes (a standing search's stored position must stop before it).
   */
  firstPending(): number | undefined {
    let first: number | undefined;
    for (const seq of this.#pending) if (first === undefined || seq < first) first = seq;
    return first;
  }

  /** How many change numbers are kept (memory; tests). */
  get size(): number {
    return this.#seqs.size;
  }

  /**
   * The search index was loaded with every change through `seq` (a rebuild, or a saved index
   * and the changes after it): positions are walked from there on.
   */
  startAt(seq: number): void {
    this.#through ??= seq;
  }

  /**
   * How far (up to `read`) the change log holds only changes this process wrote and published
   * (so its search index and standing searches have seen each one): the walk stops before the
   * first change another process wrote and before the first one not yet acknowledged. `foreign`
   * is the first foreign change, told once, by the walk that meets it. Undefined before startAt.
   */
  publishedThrough(read: number, log: ChangeLogReader): Promise<{ at: number; foreign?: number } | undefined> {
    const walk = this.#walking.then(() => this.#walk(read, log));
    this.#walking = walk.catch(() => undefined);
    return walk;
  }

  async #walk(read: number, log: ChangeLogReader): Promise<{ at: number; foreign?: number } | undefined> {
    if (this.#through === undefined) return undefined;
    if (!this.#tracking) return { at: this.#through };
    let at = this.#through;
    let foreign: number | undefined;
    while (at < read) {
      const changes = await log.changesSince(at, WALK_BATCH);
      // Trimmed changes cannot be told apart: stay (the next start rebuilds the index).
      if ((await log.changesTrimmedThrough()) > at) break;
      // A change not yet acknowledged (its fsync is still running: a slow disk, a busy thread
      // pool) is not published yet either: the position stops before it, and passes it later.
      const stop = changes.find((c) => c.seq <= read && (!this.#seqs.has(c.seq) || this.#pending.has(c.seq)));
      const mine = changes.filter((c) => c.seq <= read && (stop === undefined || c.seq < stop.seq));
      if (mine.length > 0) at = mine[mine.length - 1]!.seq;
      if (stop && !this.#seqs.has(stop.seq)) {
        foreign = stop.seq;
        this.stop();
      }
      if (stop) break;
      if (changes.length < WALK_BATCH || changes[changes.length - 1]!.seq >= read) break;
    }
    this.#through = at;
    this.forgetThrough(at);
    return foreign === undefined ? { at } : { at, foreign };
  }

  /** Forgets the sequences up to `seq`: a saved position has passed them. */
  private forgetThrough(seq: number): void {
    for (const s of this.#seqs) if (s <= seq) this.#seqs.delete(s);
  }

  /** A change of another process was met: no later position can be passed, so stop keeping any. */
  private stop(): void {
    this.#tracking = false;
    this.#seqs.clear();
  }
}
