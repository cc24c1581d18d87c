/**
 * A background task that runs when woken, never twice at once: wakes that arrive during a run
 * make exactly one more run after it (so the last wake is always followed by a complete run).
 * The task gets a signal that stop() aborts, so a long run (a scan of every stored entry, about
 * a minute at 1,000,000 entries) ends at its next check instead of holding up shutdown.
 */
export class CoalescedTask {
  #running: Promise<void> | undefined;
  #again = false;
  readonly #stopping = new AbortController();

  constructor(
    private readonly task: (signal: AbortSignal) => Promise<void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  wake(): void {
    if (this.#stopping.signal.aborted) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = (async () => {
      do {
        this.#again = false;
        try {
          await this.task(this.#stopping.signal);
        } catch (err) {
          this.onError(err);
        }
      } while (this.#again && !this.#stopping.signal.aborted);
      this.#running = undefined;
    })();
  }

  /** Resolves when no run is in progress (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** No more runs; asks the current one to stop (its signal) and waits for it. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    await this.idle();
  }
}
