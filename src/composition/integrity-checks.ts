/**
 * Background integrity checks of the SQLite database file (storage/sqlite/integrity.ts): damage
 * in the middle of the file (a page overwritten, a file cut short, a torn index page) opens
 * without a word and was found only by a read that happened to land on it. The first check
 * runs a minute after the search index has loaded (both read the whole file, and the start's
 * other work follows the load: not all at once; a registry started and stopped at once, as tests
 * do by the hundred, spawns none), then every REGISTRY_SQLITE_CHECK_HOURS. Each runs in a child process: start-up is not delayed, the
 * event loop not blocked. Damage found is logged by the store (the file, what SQLite reports,
 * what to do) and refuses writes; /readyz and registry_storage_damaged say so.
 */
import type { Logger } from '../observability/logger.js';
import type { RegistryStore } from '../storage/types.js';

/** The longest delay a Node timer holds (a longer one fires after 1 ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class IntegrityChecks {
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(
    private readonly store: RegistryStore,
    private readonly log: Logger,
  ) {}

  /** Checks `firstAfterMs` after `after` settles, then every `intervalMs` (the timers keep no process alive). */
  start(after: Promise<unknown>, firstAfterMs: number, intervalMs: number): void {
    if (!this.store.checkIntegrity) return;
    void after.then(() => {
      if (this.#stopped) return;
      this.#every(performance.now() + firstAfterMs, intervalMs);
    });
  }

  /**
   * Runs a check at `dueAt`, then every `intervalMs` after it. A chain of timeouts, not
   * setInterval: Node holds a timer's delay in 32 bits (at most 2^31 - 1 ms, about 24.8 days) and
   * runs a longer one after 1 ms, so REGISTRY_SQLITE_CHECK_HOURS of 597 or more (up to 8760 is
   * allowed) ran the check back to back, a child process after another, without end. A longer
   * wait is waited in pieces. `dueAt` is on the monotonic clock (performance.now()), as the
   * timers' own delays are: a step of the wall clock moves no check.
   */
  #every(dueAt: number, intervalMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      if (performance.now() < dueAt) return this.#every(dueAt, intervalMs);
      void this.run();
      this.#every(performance.now() + intervalMs, intervalMs);
    }, Math.min(Math.max(0, dueAt - performance.now()), MAX_TIMER_MS)).unref();
  }

  /** One check; its outcome logged (damage by the store, with what to do). */
  async run(): Promise<void> {
    // Already known damaged: checking again tells nothing new until the file is repaired (a restart).
    if (!this.store.checkIntegrity || this.store.fault?.lasting) return;
    try {
      const report = await this.store.checkIntegrity();
      if (report.ok) this.log.info({ file: report.file, check: report.check, seconds: report.seconds }, `database integrity checked (${report.check}): no damage found`);
    } catch (err) {
      if (this.#stopped) return;
      this.log.warn({ err: (err as Error).message }, 'the database integrity check could not run; the next one is tried at its time');
    }
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }
}
