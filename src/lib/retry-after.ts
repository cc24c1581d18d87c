/**
 * How long a server asks to be left alone (RFC 9110 §10.2.3, Retry-After): delay-seconds or an
 * HTTP-date. Sent with 503 (RFC 9110 §15.6.4) and 429 (RFC 6585 §4) by a server that is down for
 * maintenance or is being asked too often.
 */

/** Whether an answer of `status` says with its Retry-After when to ask again: 503 (RFC 9110 §10.2.3) and 429 (RFC 6585 §4). */
export function asksRetryAfter(status: number): boolean {
  return status === 429 || status === 503;
}

/** Milliseconds from now the `Retry-After` value asks to wait (0 for a date past), or undefined when it says nothing readable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP-date always names its day ("Tue, 01 Dec 2026 ..."): a bare number with a sign or a fraction is no date.
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
