/**
 * Bitmaps with a bit per entry number, as a search's scratch (the entries that may still reach
 * a settled page, those a filter's lists allow, those having most of a query's words): 125 KB at
 * 1,000,000 entries, so they stay in cache where the per-entry tables do not.
 */

import { popcount } from './ranking.js';

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

/** Calls `visit` with the number of each bit set in the first `words` words of `bits`, ascending. */
export function forEachBit(bits: Int32Array, words: number, visit: (no: number) => void): void {
  for (let w = 0, end = Math.min(words, bits.length); w < end; w++) {
    for (let word = bits[w]!; word !== 0; word &= word - 1) visit((w << 5) | (31 - Math.clz32(word & -word)));
  }
}

/** The bits set in the first `words` words of `bits`. */
export function bitCount(bits: Int32Array, words: number): number {
  let n = 0;
  for (let w = Math.min(words, bits.length) - 1; w >= 0; w--) if (bits[w] !== 0) n += popcount(bits[w]!);
  return n;
}
