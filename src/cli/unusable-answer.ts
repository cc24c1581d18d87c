/**
 * An answer that came but that cannot be used as one: a status HTTP has not (no Response can hold
 * it), a body in a coding not decoded here, or bytes that do not decode. The CLI's fetch
 * (./http-fetch.ts) rejects with it as the cause, or errors the body being read with it; its
 * message says what came ("HTTP 600 Weird, which is no HTTP status (200 to 599)"), for the
 * caller to say where it came from.
 */
export class UnusableAnswer extends Error {}
