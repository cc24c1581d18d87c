/**
 * Bitmaps with a bit per entry number, as a search's scratch (the entries that may still reach
 * a settled page, those a filter's lists allow, those having most of a query's words): 125 KB at
 * 1,000,000 entries, so they stay in cache where the per-entry tables do not.
 */

/** Int32 words of a bitmap holding entry numbers below `entryBound`. */
export const bitmapWords = (entryBound: number): number => (entryBound >>> 5) + 1;

/** `bits` when it has `words` words, else a new, clear bitmap with room for an eighth more entries. */
export function bitmapOf<T extends Int32Array>(bits: T, words: number): T | Int32Array<ArrayBuffer> {
  return bits.length >= words ? bits : new Int32Array(withRoom(words));
}

/**
 * The length to allocate for `n` elements (a bitmap's words, or per-entry values): an eighth
 * more, so that the array grows seldom.
 */
export const withRoom = (n: number): number => n + (n >>> 3) + 32;
