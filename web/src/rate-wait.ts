/**
 * When the registry allows this page to ask again, from the last refusal that named a wait (a
 * rate limit's Retry-After): per limit the registry counts apart (its rate limits count this
 * address's reads and writes apart, REGISTRY_RATE_READS_PER_MINUTE, _WRITES_: a register is a
 * write; a search, a get and a validate are reads). Kept across the page's views (a search
 * refused, then an entry opened, or Back to the search) and in sessionStorage across a reload,
 * for as long as the wait lasts: asking sooner is only refused again. Like the token, it stays
 * in this tab.
 */
export type RateLimit = 'read' | 'write';

const KEY = 'a2a-registry.rate-wait';

/**
 * The longest wait the page holds: the registry's rate limits count per minute, so no wait of
 * its own is longer. A longer one (a proxy's, or a garbled header: Retry-After: 99999999999)
 * held every read and write of the tab for as long, across reloads; held for a minute, the page
 * asks again then, and a limit still in force refuses it again, naming its wait anew.
 */
export const LONGEST_WAIT_SECONDS = 60;

/** A wait as the page holds it: positive and at most LONGEST_WAIT_SECONDS, or undefined for none (0, negative, not a number). */
export const boundedWait = (seconds: number | undefined): number | undefined =>
  seconds !== undefined && seconds > 0 ? Math.min(seconds, LONGEST_WAIT_SECONDS) : undefined;

/**
 * The wait a Retry-After header names (RFC 9110 10.2.3), in seconds, as the page holds it
 * (boundedWait): delay-seconds, or an HTTP-date (each of its three forms starts with the day's
 * name) counted from now. Undefined for no header, a date past, or neither form.
 */
export function retryAfterSeconds(header: string | null): number | undefined {
  const value = header?.trim() ?? '';
  if (/^\d+$/.test(value)) return boundedWait(Number(value));
  if (/^[A-Za-z]{3}/.test(value)) return boundedWait(Math.ceil((Date.parse(value) - Date.now()) / 1000));
  return undefined;
}

/** The latest `until` (Date.now() time) a wait may end at, if it begins now. */
const latestEnd = () => Date.now() + LONGEST_WAIT_SECONDS * 1000;

type Waits = Record<RateLimit, number>;

/** The waits a reload finds (Date.now() times; 0 for none): a wait already over is none. */
function savedWaits(): Waits {
  const waits: Waits = { read: 0, write: 0 };
  try {
    const value: unknown = JSON.parse(sessionStorage.getItem(KEY) ?? 'null');
    if (typeof value !== 'object' || value === null) return waits;
    for (const limit of ['read', 'write'] as const) {
      const until = (value as Partial<Record<RateLimit, unknown>>)[limit];
      // One kept longer than the page now holds any (by an older page, or edited): a minute at most.
      if (typeof until === 'number' && Number.isFinite(until)) waits[limit] = Math.min(until, latestEnd());
    }
  } catch {
    /* storage disabled, or not the page's JSON: no wait kept */
  }
  return waits;
}

const notBefore: Waits = savedWaits();

/** Holds `limits` until `until` (Date.now() time), unless already held longer. */
export function holdUntil(limits: readonly RateLimit[], until: number): void {
  if (Number.isNaN(until)) return;
  const bounded = Math.min(until, latestEnd());
  for (const limit of limits) notBefore[limit] = Math.max(notBefore[limit], bounded);
  try {
    sessionStorage.setItem(KEY, JSON.stringify(notBefore));
  } catch {
    /* storage disabled: the wait lasts as long as the page */
  }
}

/** Milliseconds before the registry allows this page's reads (or writes) again: 0 when it does now. */
export const rateWaitLeft = (limit: RateLimit): number => Math.max(0, notBefore[limit] - Date.now());
