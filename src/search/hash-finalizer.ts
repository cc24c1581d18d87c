/**
 * murmur3's 32-bit finalizer (fmix32): every bit of the result depends on every bit of `x`, so a
 * hash built cheaply (FNV-1a, a running mix of word hashes) spreads over buckets and bit
 * positions. Unsigned.
 */
export function fmix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}
