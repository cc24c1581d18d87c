/**
 * Keeps this replica's search index in step with changes committed by any replica. Storage
 * keeps a change log with a global sequence; a notification (PostgreSQL LISTEN/NOTIFY) wakes the
 * follower at once, and a slow poll catches whatever a lost notification or a dropped
 * connection hid. Applying a change re-reads the entry, so applying one twice is harmless; the
 * changes are read in batches of up to BATCH positions and their entries with one query per batch.
 *
 * The change log is trimmed (REGISTRY_CHANGES_RETENTION_HOURS). A follower whose position is
 * older than the trimmed point cannot replay what it missed: it reloads the index from the
 * entries and the feed signals a resync to its other subscribers (RegistryService.reloadIndex).
 * So does one whose position is past the log's end: the log went backwards (the database replaced).
 * And so does one whose position's change is gone or another one (its mark differs): the log was
 * replaced by one with a shorter history that went on numbering past the position, as after a
 * failover to a standby that lost the last transactions (PostgreSQL logs a sequence 32 numbers
 * ahead, so the new primary's changes are numbered past the lost ones). The entries those wrote
 * are gone too: without the reload they stayed searchable, and answered NOT_FOUND on get.
 */
import type { Logger } from '../observability/logger.js';
import type { ChangeSubscription, RegistryStore } from '../storage/types.js';
import type { RegistryService } from './service.js';

const BATCH = 500;

export interface FollowerOptions {
  /** Safety-net poll interval; notifications normally wake the follower sooner. */
  pollMs: number;
}

export class IndexFollower {
  private lastSeq: number;
  /** What identifies the change at lastSeq (Change.mark); undefined until read (a position from a start or a reload). */
  private positionMark: string | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private subscription: ChangeSubscription | undefined;
  private behind = true;
  private lastError: string | undefined;
  /** Why the last catch-up failed, logged once while it goes on; undefined once one succeeds. */
  private failing: string | undefined;

  constructor(
    private readonly store: RegistryStore,
    private readonly service: RegistryService,
    private readonly log: Logger,
    private readonly options: FollowerOptions,
    /** The sequence the index was built at. */
    fromSeq: number,
  ) {
    this.lastSeq = fromSeq;
  }

  async start(): Promise<void> {
    if (this.store.subscribeToChanges) {
      this.subscription = await this.store.subscribeToChanges(
        (seq) => {
          // undefined: the connection was re-established and notifications may have been lost.
          if (seq === undefined) this.behind = true;
          if (seq === undefined || seq > this.lastSeq) this.wake();
        },
        (err) => {
          this.lastError = err.message;
          this.log.warn({ err: err.message }, 'change notifications interrupted; reconnecting');
        },
      );
    }
    this.timer = setInterval(() => this.wake(), this.options.pollMs).unref();
    await this.wake();
  }

  /** The change-log position through which the index has applied every change. */
  get position(): number {
    return this.lastSeq;
  }

  /** Why the index may be stale, or undefined when it is in step. */
  get notInStep(): string | undefined {
    return this.behind ? `search index is catching up with changes (at ${this.lastSeq})${this.lastError ? `: ${this.lastError}` : ''}` : undefined;
  }

  /** Runs a catch-up now, or once more after the one in progress. */
  wake(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.catchUp().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        void this.wake();
      }
    });
    return this.running;
  }

  /** Why a log that ends at `newest`, before this replica's position, is not followed: it went backwards. */
  private endsBefore(newest: number): string {
    return `the change log ends at ${newest}, before this replica's position ${this.lastSeq} (the database was replaced or restored)`;
  }

  /**
   * Reloads the index from the entries, for `reason` (logged with `fields`: what was found at the
   * position), and follows on from `resumeAt`, whose change is read again before it is trusted.
   */
  private async reload(reason: string, resumeAt: number, fields: Record<string, unknown>): Promise<void> {
    this.log.warn({ at: this.lastSeq, ...fields }, `${reason}; reloading the search index from storage`);
    const entries = await this.service.reloadIndex(reason);
    this.log.info({ entries, resumeAt }, 'search index reloaded');
    this.lastSeq = resumeAt;
    this.positionMark = undefined;
  }

  private async catchUp(): Promise<void> {
    try {
      // The change at the position must still be the one applied: one short read per catch-up,
      // not only after a reconnection (the pool may reach a new primary before the listener
      // notices the old one is gone).
      if (this.lastSeq > 0) {
        const mark = await this.store.changeMark(this.lastSeq);
        if (this.positionMark === undefined) this.positionMark = mark;
        else if (mark !== this.positionMark) {
          // Gone by a trim (through exactly the position: nothing after it was missed) is no other log.
          const trimmed = mark === undefined && (await this.store.changesTrimmedThrough()) >= this.lastSeq;
          if (trimmed) this.positionMark = undefined;
          else {
            const resumeAt = await this.store.lastChangeSeq();
            const reason =
              resumeAt < this.lastSeq
                ? this.endsBefore(resumeAt)
                : `the change at this replica's position ${this.lastSeq} is ${mark === undefined ? 'gone from the change log' : 'another one than it applied'} (the database failed over to a standby that lost the last transactions, or was restored from a backup)`;
            await this.reload(reason, resumeAt, { applied: this.positionMark, found: mark ?? null });
          }
        }
      }
      for (;;) {
        const changes = await this.store.changesSince(this.lastSeq, BATCH);
        // Read after the changes: a trim in between is seen here, never silently skipped.
        const trimmedThrough = await this.store.changesTrimmedThrough();
        if (trimmedThrough > this.lastSeq) {
          const resumeAt = await this.store.lastChangeSeq();
          await this.reload(`the change log was trimmed through ${trimmedThrough}, past this replica's position ${this.lastSeq}`, resumeAt, { trimmedThrough });
          continue;
        }
        if (changes.length === 0) {
          // A log that ends before this replica's position went backwards: the database was
          // replaced under it (a restore, `migrate --force`). Waiting for numbers past the
          // position would skip the new log's changes and keep the old entries: reload instead.
          const newest = await this.store.lastChangeSeq();
          if (newest < this.lastSeq) {
            await this.reload(this.endsBefore(newest), newest, { newest });
            continue;
          }
          break;
        }
        // One read for the batch (not one per change); several changes to one entry need one refresh.
        const unreadable = await this.service.applyReplicaChanges([...new Set(changes.map((c) => c.id))]);
        // Once per change that reached it (the follower moves on past it).
        for (const bad of unreadable) {
          this.log.warn(
            { entry: bad.id, reason: bad.reason },
            `an entry changed in storage cannot be read (${bad.reason}): it is left out of this replica's search index until it is written again (a registration or an unregistration of it), or this replica runs a release that reads it; the changes after it are applied`,
          );
        }
        this.lastSeq = changes[changes.length - 1]!.seq;
        this.positionMark = changes[changes.length - 1]!.mark;
        if (changes.length < BATCH) break;
      }
      this.service.replicaChangesCaughtUp();
      if (this.failing !== undefined) this.log.info({ at: this.lastSeq }, 'caught up with changes again');
      this.failing = undefined;
      this.behind = false;
      this.lastError = undefined;
    } catch (err) {
      this.behind = true;
      this.lastError = (err as Error).message;
      // Once per outage (and when the reason changes), not at every poll: a database down for a
      // minute made each replica log this 120 times, burying whatever else went wrong.
      if (this.lastError !== this.failing) this.log.warn({ err: this.lastError }, 'catching up with changes failed; will retry every poll until it succeeds');
      this.failing = this.lastError;
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.subscription?.close();
    await this.running;
  }
}
