/**
 * The background loop that keeps entries fresh: every tick it claims the entries whose check is
 * due (a source to refresh, or with REGISTRY_PROBE an inline agent to probe) and checks them,
 * a few at a time.
 *
 * - Claims are atomic in storage (RegistryStore.claimDue): with several replicas on one
 *   PostgreSQL database each due entry is checked by one of them, once per interval. A claim
 *   moves the entry's next check to now + lease first, so an entry whose claimer died is
 *   retried after the lease; a finished check sets it to now + interval.
 * - It never holds up requests: checks are network waits, at most `concurrency` at once, each
 *   bounded by the fetch timeout; ticks do not overlap.
 * - Stopping aborts the checks in flight (they are retried after their lease, not recorded as
 *   failures) and waits for them.
 */
import type { Logger } from '../observability/logger.js';
import type { RegistryStore } from '../storage/types.js';

export interface DueChecker {
  checkDue(id: string, signal?: AbortSignal): Promise<'refreshed' | 'probed' | 'skipped'>;
}

export interface RefreshLoopOptions {
  /** How often to look for due entries. */
  tickMs: number;
  /** REGISTRY_REFRESH_SECONDS in ms: entries with a source are checked at least this often. */
  intervalMs: number;
  /** How long a claim holds before another replica may take the entry again. */
  leaseMs: number;
  /** Probe agents registered inline (claims entries without a source too). */
  probe: boolean;
  /** Checks in flight at once (default 8). */
  concurrency?: number;
  /** Entries claimed per round (default 32). */
  batch?: number;
}

export class RefreshLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private stopped = false;
  private readonly abort = new AbortController();
  private readonly concurrency: number;
  private readonly batch: number;
  /** The failing rounds since the last good one (storage down): when they began, how many, the last reason. */
  private outage: { since: number; rounds: number; reason: string } | undefined;

  constructor(
    private readonly store: RegistryStore,
    private readonly checker: DueChecker,
    private readonly log: Logger,
    private readonly options: RefreshLoopOptions,
  ) {
    this.concurrency = Math.max(1, options.concurrency ?? 8);
    this.batch = Math.max(1, options.batch ?? 32);
  }

  /**
   * Starts ticking (the first tick at once). Entries with a source are scheduled by the interval
   * in force: before, one registered while refreshing was off (REGISTRY_REFRESH_SECONDS=0) had no
   * next check and was never refreshed once it was turned on, and one scheduled under a longer
   * interval waited that out. With probing, agents never checked are scheduled first.
   */
  async start(): Promise<void> {
    // A database file known damaged from the start (a lasting fault, recorded by the run that
    // found it) takes no writes, and the registry serves what it can read all the same: the ticks
    // run, and say what storage answers, as under any storage fault.
    if (!this.store.fault?.lasting) await this.scheduleByInterval();
    this.schedule(0);
  }

  /** Entries' next checks put within the interval in force (and never-checked agents first, when probing). */
  private async scheduleByInterval(): Promise<void> {
    const now = Date.now();
    const moved = await this.store.scheduleRefreshes(new Date(now).toISOString(), new Date(now + this.options.intervalMs).toISOString());
    if (moved > 0) this.log.info({ entries: moved }, 'refreshes scheduled by REGISTRY_REFRESH_SECONDS');
    if (this.options.probe) {
      const scheduled = await this.store.scheduleProbes(new Date().toISOString());
      if (scheduled > 0) this.log.info({ agents: scheduled }, 'probes scheduled for agents registered inline');
    }
  }

  /** Checks every entry due now; resolves with how many were checked. Used by each tick (and by tests). */
  runOnce(): Promise<number> {
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.abort.abort();
    await this.running?.catch(() => undefined);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.runOnce()
        .then(() => this.roundSucceeded(), (err: unknown) => this.roundFailed(err))
        .finally(() => this.schedule(this.options.tickMs));
    }, delayMs);
    this.timer.unref();
  }

  /**
   * Once per outage, as the index follower does: storage down for ten minutes made every tick (up
   * to every 30 s) log "refresh round failed" with its stack, burying whatever else went wrong.
   * The rounds between are debug lines; the end says how long it lasted.
   */
  private roundFailed(err: unknown): void {
    const reason = err instanceof Error ? err.message : String(err);
    if (this.outage === undefined) {
      // On the monotonic clock: the wall clock stepped back (NTP) during an outage logged it as lasting minus an hour.
      this.outage = { since: performance.now(), rounds: 1, reason };
      this.log.error({ err }, 'refresh rounds fail; retried every tick, logged again when one succeeds');
      return;
    }
    this.outage.rounds++;
    this.outage.reason = reason;
    this.log.debug({ err: reason, rounds: this.outage.rounds }, 'refresh round failed again');
  }

  private roundSucceeded(): void {
    if (this.outage === undefined) return;
    const { since, rounds, reason } = this.outage;
    this.outage = undefined;
    this.log.info({ failedRounds: rounds, failedForSeconds: Math.round((performance.now() - since) / 100) / 10, lastError: reason }, 'refresh rounds succeed again');
  }

  private async drain(): Promise<number> {
    let checked = 0;
    const outcomes: Record<string, number> = {};
    while (!this.stopped) {
      const ids = await this.store.claimDue(this.batch, new Date(Date.now() + this.options.leaseMs).toISOString(), this.options.probe);
      if (ids.length === 0) break;
      await this.inParallel(ids, async (id) => {
        try {
          const outcome = await this.checker.checkDue(id, this.abort.signal);
          outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        } catch (err) {
          if (!this.abort.signal.aborted) this.log.error({ err, entry: id }, 'checking an entry failed');
        }
      });
      checked += ids.length;
    }
    if (checked > 0) this.log.info({ checked, ...outcomes }, 'entries checked');
    return checked;
  }

  private async inParallel(ids: readonly string[], work: (id: string) => Promise<void>): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < ids.length && !this.stopped) await work(ids[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, ids.length) }, worker));
  }
}
