/**
 * The change-log sequences this process wrote itself, for a store that other processes may also
 * write without telling it (SQLite: `a2a-registry import` beside a running registry). The saved
 * search index (registry/index-snapshots.ts) must not claim a position past a change its index
 * never applied, and such a store has no follower to apply another process's changes: past the
 * first change it did not write, the position stays, and the next start replays from there.
 *
 * Memory: sequences are dropped once a saved position passes them, and all of them once a
 * foreign change has been met (nothing after it can be passed until a restart).
 */
export class OwnChanges {
  readonly #seqs = new Set<number>();
  /** Recorded, not yet acknowledged (committed, its fsync still running): not in the index yet. */
  readonly #pending = new Set<number>();
  #tracking = true;

  /** Called by the store as it records a change (inside its transaction); pending until `settled`. */
  add(seq: number): void {
    // Pending ones are kept even when not tracking: standing searches stop before them too (firstPending).
    this.#pending.add(seq);
    if (this.#tracking) this.#seqs.add(seq);
  }

  /**
   * The write that recorded `seq` was acknowledged (and published: the index has it) or rolled
   * back (no such change), or, `kept` false, refused after its commit: in the database, but not
   * in the index, like another process's change.
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

  /** Recorded by this process and not acknowledged yet: a saved position must stop before it. */
  isPending(seq: number): boolean {
    return this.#pending.has(seq);
  }

  /** False once a foreign change was met (stop): no position can be passed any more. */
  get tracking(): boolean {
    return this.#tracking;
  }

  has(seq: number): boolean {
    return this.#seqs.has(seq);
  }

  /** Forgets the sequences up to `seq`: a saved position has passed them. */
  forgetThrough(seq: number): void {
    for (const s of this.#seqs) if (s <= seq) this.#seqs.delete(s);
  }

  /** A change of another process was met: no later position can be passed, so stop keeping any. */
  stop(): void {
    this.#tracking = false;
    this.#seqs.clear();
  }
}
