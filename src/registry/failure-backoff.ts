/**
 * How long the next check of a failing entry waits: a source that keeps failing was fetched again
 * every REGISTRY_REFRESH_SECONDS for ever, however long it had been down, and every entry of a host
 * that went away was fetched in the same tick. The wait doubles with each failed check in a row
 * (one interval after the first, two after the second, four after the third, ...), up to a day
 * (or the interval, when that is longer); an `ok` check ends the run, and the interval is back.
 * A little jitter spreads the waits, so the entries of one host that failed together are not
 * all fetched again in the same tick.
 */

/** The longest wait the backoff reaches (an interval longer than this is the wait itself). */
export const MAX_FAILURE_BACKOFF_MS = 24 * 60 * 60 * 1000;

/** The share of a backed-off wait beyond the interval that jitter may take off. */
const JITTER = 0.1;

/**
 * The wait before the next check after `failures` failed checks in a row (0: healthy), never
 * shorter than `intervalMs` nor longer than the cap. `random` is Math.random's kind ([0, 1)).
 */
export function failureBackoffMs(intervalMs: number, failures: number, random: () => number = Math.random): number {
  if (failures <= 1) return intervalMs;
  const cap = Math.max(intervalMs, MAX_FAILURE_BACKOFF_MS);
  // 2^30 intervals is past any cap: no Infinity, however long the run.
  const doubled = Math.min(cap, intervalMs * 2 ** Math.min(failures - 1, 30));
  return Math.round(doubled - (doubled - intervalMs) * JITTER * random());
}
