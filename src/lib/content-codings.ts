/**
 * What the registry's two HTTP clients (the outbound fetcher, src/net/, and the CLI's,
 * src/cli/http-fetch.ts) share about an answer's Content-Encoding: how the header reads, and the
 * codings undici's fetch undoes, which both decode and no others.
 */

/** The codings undici's fetch decodes and the registry takes (x-gzip is gzip's old name). */
export const DECODED_CODINGS: ReadonlySet<string> = new Set(['gzip', 'x-gzip', 'deflate', 'br']);

/** More codings than this on one body is no real answer (undici's fetch refuses them): each one costs a decoder. */
export const MAX_CODINGS = 5;

/** The codings of a Content-Encoding header in the order they were applied, `identity` (none) left out. */
export function contentCodings(header: string | undefined): string[] {
  if (header === undefined) return [];
  return header
    .toLowerCase()
    .split(',')
    .map((coding) => coding.trim())
    .filter((coding) => coding !== '' && coding !== 'identity');
}
