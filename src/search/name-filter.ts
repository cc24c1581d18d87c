/**
 * Which skill and tool names the index may hold: a Bloom filter of their keys (the name's words,
 * as the name clause compares them, and its length: ./search-index.ts nameLength), so that a
 * search whose words are no such name does not read postings to find out (./search-index.ts
 * nameClause). It says "maybe" for every name it was given and for about 1 % of the others
 * (BITS_PER_NAME bits and PROBES probes a name); "no" is certain. A removed unit's name is not
 * taken out (a Bloom filter cannot forget): it costs a needless look at the postings, which find
 * no live unit so named, until the filter is built anew (from the entries: `rebuild`).
 *
 * Sized for `capacity` names; once that many were added (a name already there is not counted),
 * `full` says so and the index rebuilds it for twice the names it has then, so a growing index
 * rebuilds it each time it doubles and its false "maybe"s stay near 1 %. Memory: 10 bits a name
 * at capacity, up to 20 after a rebuild (about 7.5 to 15 MB for the 6 million skills and tools
 * of 1,000,000 entries), where a hash a unit in a hash table would take 50-100 MB.
 */
import type { IndexState } from './index-state.js';
import { part } from './index-state.js';
import { termHash } from './phrases.js';
import { fmix32 } from './hash-finalizer.js';

const BITS_PER_NAME = 10;
/** Probes a name: near the best for 10 bits a name (ln 2 × 10 ≈ 7), ~0.8 % false "maybe"s. */
const PROBES = 7;
/** The fewest names a filter is sized for (2.5 KB). */
const MIN_CAPACITY = 2048;

export class NameFilter {
  private bits: Int32Array = new Int32Array(0);
  /** Bits in `bits` (a multiple of 32). */
  private size = 0;
  private capacity = 0;
  private added = 0;

  constructor(capacity = MIN_CAPACITY) {
    this.reset(capacity);
  }

  /** Empties it, sized for `capacity` names. */
  reset(capacity: number): void {
    this.capacity = Math.max(MIN_CAPACITY, Math.ceil(capacity));
    this.size = Math.ceil((this.capacity * BITS_PER_NAME) / 32) * 32;
    this.bits = new Int32Array(this.size >>> 5);
    this.added = 0;
  }

  /** Whether as many names were added as it is sized for (rebuild it larger). */
  get full(): boolean {
    return this.added >= this.capacity;
  }

  get bytes(): number {
    return this.bits.byteLength;
  }

  /** Notes the name of words `words` (the terms of its words, in order) and length `length` (nameLength). */
  add(words: readonly string[], length: number): void {
    if (this.probe(words, length, true)) this.added++;
  }

  /** Whether some unit may be named `words`, `length` long; false: none is. */
  mayHold(words: readonly string[], length: number): boolean {
    return !this.probe(words, length, false);
  }

  /** Tests (and with `set`, sets) the name's bits; whether one of them was clear. */
  private probe(words: readonly string[], length: number, set: boolean): boolean {
    // Two independent 32-bit hashes of the word sequence and its length; probe i is h1 + i·h2.
    let h1 = 0x2545f491 ^ length;
    let h2 = 0x9e3779b9 ^ Math.imul(length, 0x85ebca6b);
    for (const w of words) {
      const h = termHash(w);
      h1 = fmix32(h1 ^ h);
      h2 = fmix32(h2 + Math.imul(h, 0xcc9e2d51));
    }
    h1 = fmix32(h1 ^ words.length);
    h2 = fmix32(h2 ^ words.length) | 1;
    const bits = this.bits;
    const size = this.size;
    let clear = false;
    for (let i = 0; i < PROBES; i++) {
      // (hash × size) / 2^32: a bit below `size` without a modulo (the product's rounding is far below size).
      const at = Math.floor(((h1 + Math.imul(i, h2)) >>> 0) * size / 4294967296);
      const bit = 1 << (at & 31);
      if ((bits[at >>> 5]! & bit) !== 0) continue;
      if (!set) return true;
      clear = true;
      bits[at >>> 5]! |= bit;
    }
    return clear;
  }

  save(state: IndexState): void {
    state.set('names.bits', this.bits.slice());
    state.set('names.capacity', this.capacity);
    state.set('names.added', this.added);
  }

  load(state: IndexState): void {
    const bits = part<Int32Array>(state, 'names.bits');
    const capacity = part<number>(state, 'names.capacity');
    const added = part<number>(state, 'names.added');
    if (!(bits instanceof Int32Array) || !Number.isInteger(capacity) || capacity < MIN_CAPACITY || !Number.isInteger(added) || added < 0) {
      throw new Error('the saved name filter is inconsistent');
    }
    const size = Math.ceil((capacity * BITS_PER_NAME) / 32) * 32;
    if (bits.length !== size >>> 5) throw new Error('the saved name filter is inconsistent');
    this.bits = bits;
    this.size = size;
    this.capacity = capacity;
    this.added = added;
  }
}
