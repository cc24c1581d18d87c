/**
 * How long an HTTP answer says it may be used (RFC 9111 §4.2.1): what a publisher's key server
 * tells the registry about its JWKS. A publisher that revokes a key sets a short lifetime (or
 * `no-cache`) and the registry fetches the set again that soon, within the operator's bounds.
 */

/** The caching headers of one answer, as sent. */
export interface CachingHeaders {
  cacheControl?: string;
  expires?: string;
  date?: string;
  age?: string;
}

/** The value of one Cache-Control directive (`max-age=60`, `max-age="60"`), or true when it has none. */
function directive(cacheControl: string, name: string): string | true | undefined {
  for (const part of cacheControl.split(',')) {
    const [key, ...rest] = part.split('=');
    if (key!.trim().toLowerCase() !== name) continue;
    return rest.length === 0 ? true : rest.join('=').trim().replace(/^"(.*)"$/, '$1');
  }
  return undefined;
}

const seconds = (value: string | true | undefined): number | undefined => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : undefined);

/**
 * Milliseconds the answer stays fresh from now, or undefined when its headers do not say (the
 * caller's default applies). `no-store`, `no-cache` and an Expires in the past or that is no date
 * mean 0: use it once, ask again next time. `max-age` wins over `Expires`, as in RFC 9111; `Age`
 * (time the answer already spent in caches on the way) is taken off.
 */
export function cacheLifetimeMs(headers: CachingHeaders, now = Date.now()): number | undefined {
  const cc = headers.cacheControl ?? '';
  if (directive(cc, 'no-store') !== undefined || directive(cc, 'no-cache') !== undefined) return 0;
  const age = (seconds(headers.age?.trim()) ?? 0) * 1000;
  const maxAge = seconds(directive(cc, 'max-age'));
  if (maxAge !== undefined) return Math.max(0, maxAge * 1000 - age);
  if (headers.expires === undefined) return undefined;
  const expires = Date.parse(headers.expires);
  if (Number.isNaN(expires)) return 0;
  const date = headers.date === undefined ? NaN : Date.parse(headers.date);
  // Expires is the server's clock: measure it against the server's Date, not ours.
  return Math.max(0, expires - (Number.isNaN(date) ? now : date) - age);
}
