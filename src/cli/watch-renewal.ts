/**
 * Keeps a watch open for as long as `a2a-registry watch` runs. The registry ends a watch
 * REGISTRY_WATCH_TTL_SECONDS (a day by default) after it started or was last renewed; a renewal
 * (`{"renew": {}}` on its task) answers with the new `watchExpiresAt`. Without renewing, the
 * command the README says runs until Ctrl-C ended after that time.
 *
 * A renewal is sent when half the time left has passed: early enough that a failed one (the
 * registry restarting, a lost connection) is retried several times before the watch expires,
 * late enough that a watch of a day costs a request every twelve hours. A failed renewal is
 * retried at half the time then left, at most a minute later (a registry back within seconds is
 * not left waiting for hours), and no longer once the watch's time is up: the registry refuses a
 * renewal of an expired watch, and ends it (the stream says so). A renewal refused over the
 * write budget (RATE_LIMITED: the watch runs on unchanged) says when to retry: not sooner, as
 * long as the watch's time allows (retried sooner, it would only be refused again).
 */
import { RegistryDeclined } from './connection.js';

/** The longest wait before retrying a renewal that failed. */
const RETRY_AT_MOST_MS = 60_000;
/** The shortest wait between two attempts, for a registry with a time to live of a second or two. */
const AT_LEAST_MS = 100;
/** The longest a Node timer waits (~24.8 days; a longer one fires at once): longer waits are re-armed. */
const TIMER_MAX_MS = 2 ** 31 - 1;

export class WatchRenewal {
  #timer: NodeJS.Timeout | undefined;
  #expiresAt = 0;
  #stopped = false;

  constructor(
    /** Sends the renewal; resolves to the new expiry (ms since the epoch). */
    private readonly renew: () => Promise<number>,
    /** Told of each renewal that failed, and when the next attempt is (undefined: none, the watch's time is up). */
    private readonly failed: (err: unknown, retryInMs: number | undefined) => void,
  ) {}

  /** The watch runs until `at` (the task's metadata.watchExpiresAt): renew at half the time left. */
  expiresAt(at: number): void {
    if (this.#stopped || at <= this.#expiresAt) return;
    this.#expiresAt = at;
    this.#schedule(Math.max(AT_LEAST_MS, (at - Date.now()) / 2));
  }

  /** No renewal after this (the watch ended, or the command is ending). */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #schedule(ms: number): void {
    this.#arm(Date.now() + ms);
  }

  #arm(dueAt: number): void {
    clearTimeout(this.#timer);
    // A time to live may be up to a year (REGISTRY_WATCH_TTL_SECONDS): half of it is past what
    // a timer holds, and one set past that fired at once, renewing in a loop.
    const wait = Math.min(Math.max(0, dueAt - Date.now()), TIMER_MAX_MS);
    // Unreferenced: the watch's stream keeps the command running, never a pending renewal.
    this.#timer = setTimeout(() => (Date.now() < dueAt ? this.#arm(dueAt) : void this.#attempt()), wait).unref();
  }

  async #attempt(): Promise<void> {
    const expected = this.#expiresAt;
    try {
      const at = await this.renew();
      this.expiresAt(at);
    } catch (err) {
      // A resumed stream may have brought a later expiry meanwhile, with its own schedule.
      if (this.#stopped || this.#expiresAt !== expected) return;
      const retryIn = retryDelay(expected - Date.now(), err instanceof RegistryDeclined ? err.error.retryAfterSeconds : undefined);
      this.failed(err, retryIn);
      if (retryIn !== undefined) this.#schedule(retryIn);
    }
  }
}

/**
 * When to retry a renewal that failed with `leftMs` of the watch's time left (undefined: no
 * more, its time is up): at half the time left, at most a minute on; and no sooner than the
 * refusal said (`saidSeconds`, a rate limit's), while the watch's time allows.
 */
export function retryDelay(leftMs: number, saidSeconds?: number): number | undefined {
  if (leftMs <= AT_LEAST_MS) return undefined;
  const halfLeft = Math.max(AT_LEAST_MS, Math.min(RETRY_AT_MOST_MS, leftMs / 2));
  return saidSeconds === undefined ? halfLeft : Math.max(halfLeft, Math.min(saidSeconds * 1000, leftMs - AT_LEAST_MS));
}
