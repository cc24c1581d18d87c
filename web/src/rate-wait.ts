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

type Waits = Record<RateLimit, number>;

/** The waits a reload finds (Date.now() times; 0 for none): a wait already over is none. */
function savedWaits(): Waits {
  const waits: Waits = { read: 0, write: 0 };
  try {
    const value: unknown = JSON.parse(sessionStorage.getItem(KEY) ?? 'null');
    if (typeof value !== 'object' || value === null) return waits;
    for (const limit of ['read', 'write'] as const) {
      const until = (value as Partial<Record<RateLimit, unknown>>)[limit];
      if (typeof until === 'number' && Number.isFinite(until)) waits[limit] = until;
    }
  } catch {
    /* storage disabled, or not the page's JSON: no wait kept */
  }
  return waits;
}

const notBefore: Waits = savedWaits();

/** Holds `limits` until `until` (Date.now() time), unless already held longer. */
export function holdUntil(limits: readonly RateLimit[], until: number): void {
  for (const limit of limits) notBefore[limit] = Math.max(notBefore[limit], until);
  try {
    sessionStorage.setItem(KEY, JSON.stringify(notBefore));
  } catch {
    /* storage disabled: the wait lasts as long as the page */
  }
}

/** Milliseconds before the registry allows this page's reads (or writes) again: 0 when it does now. */
export const rateWaitLeft = (limit: RateLimit): number => Math.max(0, notBefore[limit] - Date.now());
