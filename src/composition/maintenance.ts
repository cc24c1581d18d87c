/**
 * Background work that keeps storage bounded and honest about its health:
 * - housekeeping (every few minutes): durable tasks past their retention are pruned, the change
 *   log is trimmed, freed space is given back (SQLite), expired in-memory tasks are dropped;
 * - the storage probe: once a write failed for a storage reason (disk full, read-only, file
 *   deleted or corrupt, database unreachable), a small write is tried every few seconds and on
 *   each /readyz until one succeeds; until then /readyz reports the fault.
 */
import type { Logger } from '../observability/logger.js';
import type { RegistryStore, RetentionPolicy, StorageFault } from '../storage/types.js';
import type { RegistryTaskStore } from '../tasks/registry-task-store.js';

export interface HousekeepingPolicy {
  tasks: RetentionPolicy;
  changeRetentionMs: number;
}

export interface HousekeepingReport {
  prunedTasks: number;
  trimmedChanges: number;
}

/** At most how often a long deletion's progress is logged. */
const PROGRESS_LOG_INTERVAL_MS = 5000;

export class Housekeeping {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<HousekeepingReport> | undefined;
  /** Stops a round between two batches of deletions (shutdown): a backlog of millions must not hold it up. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly store: RegistryStore,
    private readonly tasks: RegistryTaskStore,
    private readonly policy: HousekeepingPolicy,
    private readonly log: Logger,
  ) {}

  /** Runs now and then every `intervalMs` (the timer does not keep the process alive). */
  start(intervalMs: number): void {
    void this.run().catch(() => undefined);
    this.timer = setInterval(() => void this.run().catch(() => undefined), intervalMs).unref();
  }

  /** One round (a round already running is joined, not doubled). */
  run(): Promise<HousekeepingReport> {
    this.running ??= this.round().finally(() => (this.running = undefined));
    return this.running;
  }

  private async round(): Promise<HousekeepingReport> {
    this.tasks.sweep();
    const report: HousekeepingReport = { prunedTasks: 0, trimmedChanges: 0 };
    if (this.store.fault) return report; // nothing can be deleted while nothing can be written
    try {
      const signal = this.stopping.signal;
      report.prunedTasks = await this.tasks.prune(this.policy.tasks, { signal, progress: this.progress('old tasks pruned') });
      report.trimmedChanges = await this.store.trimChanges(this.policy.changeRetentionMs, { signal, progress: this.progress('change log entries trimmed') });
      if (signal.aborted) return report;
      if (report.prunedTasks > 0 || report.trimmedChanges > 0) {
        await this.store.reclaimSpace({ signal });
        this.log.info(report, 'storage housekeeping: old tasks pruned, change log trimmed, space reclaimed');
      }
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'storage housekeeping failed; will retry');
    }
    return report;
  }

  /**
   * Logs a long deletion's progress (a backlog after a long outage, or a busy registry: many
   * batches), at most every few seconds, so an operator sees it move.
   */
  private progress(what: string): (removed: number) => void {
    let logged = Date.now();
    return (removed) => {
      if (Date.now() - logged < PROGRESS_LOG_INTERVAL_MS) return;
      logged = Date.now();
      this.log.info({ removed }, `storage housekeeping: ${removed} ${what} so far; going on in batches`);
    };
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    await this.running?.catch(() => undefined);
  }
}

/** How often a faulted store is probed in the background, and at most how often /readyz probes it. */
const PROBE_INTERVAL_MS = 5000;
const MIN_PROBE_GAP_MS = 1000;

export class StorageProbe {
  private timer: NodeJS.Timeout | undefined;
  private probing: Promise<void> | undefined;
  private lastProbe = -Infinity;
  /** The fault last reported in the log (its reason), so its recovery is logged once. */
  private reported: string | undefined;
  /**
   * What this outage has logged: each wording and each detail once. A fault first seen without a
   * detail (a background checkpoint's "the database file is missing") is logged again when a
   * write finds its cause (the file system's words, with the paths), which the operator alone is
   * told, here; and again when the same fault is worded anew (a deleted data directory noticed
   * first through its write-ahead log, then through the file), so the log says what /readyz says.
   * A fault that alternates between two wordings logs each once, not at every write.
   */
  private readonly logged = { messages: new Set<string>(), details: new Set<string>() };

  constructor(
    private readonly store: RegistryStore,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.check(), PROBE_INTERVAL_MS).unref();
  }

  /** Why storage cannot take writes, after probing it again if it had a fault; undefined when it can. */
  async notReady(): Promise<string | undefined> {
    await this.check();
    const fault = this.store.fault;
    return fault
      ? `storage is unavailable: ${fault.message} (${fault.code}, since ${fault.since}); writes are refused, searches are answered from the index`
      : undefined;
  }

  /** Probes a faulted store (at most once a second, never twice at once) and logs transitions. */
  private check(): Promise<void> {
    const fault = this.report();
    // A lasting fault (a damaged file) is never probed: a write into it could only spread the damage.
    if (!fault || fault.lasting) return Promise.resolve();
    // The gap on the monotonic clock: on the wall clock, a step back (NTP) during an outage
    // stopped every probe until the clock caught up again, and /readyz said not ready that long
    // after storage had recovered.
    if (this.probing || performance.now() - this.lastProbe < MIN_PROBE_GAP_MS) return this.probing ?? Promise.resolve();
    this.lastProbe = performance.now();
    this.probing = this.store
      .probeWrites()
      // The probe's own write may have found more (why the file cannot be re-created): said now, not at the next tick.
      .then((ok) => void (ok ? this.recovered() : this.report()))
      .finally(() => (this.probing = undefined));
    return this.probing;
  }

  /** Logs the store's fault when this outage has not yet said it (or its recovery); returns it. */
  private report(): StorageFault | undefined {
    const fault = this.store.fault;
    if (!fault) {
      if (this.reported) this.recovered();
      return undefined;
    }
    const { messages, details } = this.logged;
    if (this.reported !== fault.reason || !messages.has(fault.message) || (fault.detail !== undefined && !details.has(fault.detail))) {
      const until = fault.lasting ? '' : '; writes are refused until a write probe succeeds';
      // The detail (the file system's words, with the paths) is the operator's: /readyz and refusals say the message alone.
      const detail = fault.detail === undefined ? {} : { detail: fault.detail };
      this.log.error({ fault: fault.reason, code: fault.code, since: fault.since, ...detail }, `storage is unavailable: ${fault.message}${until}`);
      this.reported = fault.reason;
      messages.add(fault.message);
      if (fault.detail !== undefined) details.add(fault.detail);
    }
    return fault;
  }

  private recovered(): void {
    this.log.info({ fault: this.reported }, 'storage takes writes again');
    this.reported = undefined;
    this.logged.messages.clear();
    this.logged.details.clear();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.probing;
  }
}
