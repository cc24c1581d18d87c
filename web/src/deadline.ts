/**
 * How long the page waits for the registry. A registry answers a search, a read or a check in
 * well under a second; a request still open after this is held by something between the page
 * and the registry (a proxy that never answers, a connection gone dead), and without a deadline
 * the page would say "Searching…" for ever.
 */
export const ANSWER_DEADLINE_MS = 20_000;

export interface Deadline {
  /** Aborted at the deadline, or when the caller's own signal is (a newer search). */
  signal: AbortSignal;
  /** The deadline passed (not the caller's abort). */
  passed(): boolean;
  /** The answer is read: the timer stops. */
  clear(): void;
}

/**
 * A deadline for one exchange, request and answer body both. A timer of the page's own
 * (setTimeout, not AbortSignal.timeout) so it stops once the answer is read, and so a test
 * can move the page's clock past it.
 */
export function deadline(signal?: AbortSignal, ms = ANSWER_DEADLINE_MS): Deadline {
  const controller = new AbortController();
  let passed = false;
  const timer = setTimeout(() => {
    passed = true;
    controller.abort();
  }, ms);
  const onAbort = () => controller.abort();
  if (signal?.aborted) controller.abort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    passed: () => passed,
    clear() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    },
  };
}

/** The deadline as the person reads it ("20 s"). */
export const deadlineText = (ms = ANSWER_DEADLINE_MS) => `${Math.round(ms / 1000)} s`;
