/**
 * AbortSignal.timeout whose timer goes when the operation it bounds is over.
 *
 * AbortSignal.timeout's timer is never cleared: it stays for its whole time however soon the
 * operation ended, and a timer holds the async context it was made in until it fires (Node.js 20,
 * 22 and 24 alike). Made while a request is served, it kept that request, its body among it, for
 * the bound's length after the answer: a webhook's retry window (a minute by default), an MCP
 * exchange's REGISTRY_FETCH_TIMEOUT_MS, a query embedding's 1.5 s.
 */

/** Node's own message for AbortSignal.timeout's TimeoutError, kept so what callers see is unchanged. */
export const TIMEOUT_MESSAGE = 'The operation was aborted due to timeout';

export interface ClearableTimeout {
  /** Aborts after the time given with a TimeoutError DOMException, as AbortSignal.timeout's does. */
  readonly signal: AbortSignal;
  /** Clears the timer: call it once the operation has ended, whether it succeeded or failed. */
  readonly clear: () => void;
}

/**
 * A signal that aborts after `ms` as AbortSignal.timeout's does: a DOMException named
 * TimeoutError (the outbound guard tells it from a cancellation by that name), `message` its
 * text. Its timer is unref'd, as AbortSignal.timeout's is: a bound never holds the process open.
 */
export function clearableTimeout(ms: number, message: string = TIMEOUT_MESSAGE): ClearableTimeout {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(message, 'TimeoutError')), ms).unref();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
