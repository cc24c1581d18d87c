/**
 * A background task that runs when woken, never twice at once: wakes that arrive during a run
 * make exactly one more run after it (so the last wake is always followed by a complete run).
 */
export class CoalescedTask {
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;

  constructor(
    private readonly task: () => Promise<void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  wake(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = (async () => {
      do {
        this.#again = false;
        try {
          await this.task();
        } catch (err) {
          this.onError(err);
        }
      } while (this.#again && !this.#stopped);
      this.#running = undefined;
    })();
  }

  /** Resolves when no run is in progress (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** No more runs; waits for the current one. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.idle();
  }
}
