/**
 * The capabilities an entry offers (every skill's id, or its name when it has none, and every
 * tool's name: what the `capabilities` filter compares exactly, ./entry-store.ts hasCapability)
 * as a Bloom signature of 96 bits in the entry's signature row (./tables.ts S_CAPS_LO, S_CAPS_HI,
 * S_CAPS_MORE). A value sets three of the 64 bits of the first two words and two of the 32 of the
 * third. An entry whose signature lacks a bit of every asked value offers none of them (no false
 * negatives), so the filter reads the record only of the entries left, a few per cent of those
 * offering other values. The list of all entries carries the first two words in its members
 * (./recency-lists.ts), so a listing by capabilities walks it like a listing by any attribute
 * instead of reading every entry's record (0.7 s at 1,000,000 entries).
 *
 * No table of values to entries: one would cost memory per distinct skill id and tool name
 * (issue 22's heap budget has no room for it); the signature uses free slots of the signature row
 * and two words of each member of the list of all entries (8 MB at 1,000,000 entries). A listing
 * by values few entries offer reads those entries from lists by a hash of the value instead
 * (./capability-lists.ts), which cost the postings alone.
 *
 * The bits are saved with the index (./snapshot-file.ts SNAPSHOT_FORMAT): changing the hash or
 * the bits a value sets needs the format raised.
 */
import { fmix32 } from './hash-finalizer.js';

/** The bits one capability value sets, by signature word. */
export interface CapabilityBits {
  readonly lo: number;
  readonly hi: number;
  readonly more: number;
}

/** FNV-1a over the UTF-16 code units, then murmur3's finalizer so every bit depends on every unit (also ./capability-lists.ts's buckets). */
export function capabilityHash(value: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) h = Math.imul(h ^ value.charCodeAt(i), 0x01000193);
  return fmix32(h);
}

export function capabilityBits(value: string): CapabilityBits {
  const h = capabilityHash(value);
  let lo = 0;
  let hi = 0;
  for (const bit of [h & 63, (h >>> 6) & 63, (h >>> 12) & 63]) {
    if (bit < 32) lo |= 1 << bit;
    else hi |= 1 << (bit - 32);
  }
  const more = (1 << ((h >>> 18) & 31)) | (1 << ((h >>> 23) & 31));
  return { lo, hi, more };
}

/** The signature of an entry offering `values`: the bits of each, or'ed. */
export function capabilitySignature(values: Iterable<string>): CapabilityBits {
  let lo = 0;
  let hi = 0;
  let more = 0;
  for (const v of values) {
    const b = capabilityBits(v);
    lo |= b.lo;
    hi |= b.hi;
    more |= b.more;
  }
  return { lo, hi, more };
}

/** Whether a signature's first two words hold every bit of some asked value's in theirs (`asked`: askedBits' lo, hi, more triples; more is not looked at). */
export function wordsMayOffer(asked: Int32Array, lo: number, hi: number): boolean {
  for (let i = 0; i < asked.length; i += 3) if ((lo & asked[i]!) === asked[i] && (hi & asked[i + 1]!) === asked[i + 1]) return true;
  return false;
}

/** Whether a whole signature holds every bit of some asked value's (`asked`: lo, hi, more triples). */
export function mayOffer(asked: Int32Array, lo: number, hi: number, more: number): boolean {
  for (let i = 0; i < asked.length; i += 3) {
    if ((lo & asked[i]!) === asked[i] && (hi & asked[i + 1]!) === asked[i + 1] && (more & asked[i + 2]!) === asked[i + 2]) return true;
  }
  return false;
}

/** The asked values' bits as lo, hi, more triples (for wordsMayOffer and mayOffer). */
export function askedBits(values: Iterable<string>): Int32Array {
  const out: number[] = [];
  for (const v of values) {
    const b = capabilityBits(v);
    out.push(b.lo, b.hi, b.more);
  }
  return Int32Array.from(out);
}
