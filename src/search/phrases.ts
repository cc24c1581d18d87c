/**
 * Word pairs for phrase queries ("pull request"): per unit, the set of adjacent term pairs of
 * each of its fields, as sorted 16-bit hashes in one pooled Uint16Array (a segment
 * [count, hash...] per unit, found through the tables' `unitPairs` offsets).
 *
 * A phrase matches a unit that has its rarest word (from the postings) and every adjacent pair
 * of its words, in one field. Hashes are 16 bits, so a unit with p pairs answers a pair it lacks
 * with probability about p / 65,536 (well under 1% for ordinary units); postings do not grow, and
 * the cost is two bytes per distinct pair and field. Stop words are dropped before pairing, on
 * both sides, so "translate this invoice" and "translate invoice" are the same phrase.
 *
 * A pair is kept per field it occurs in (fieldPair: its hash salted by the field), so a phrase is
 * matched, and weighed, in the field that says it. (When pairs were kept per unit, "pull request"
 * in a skill's description, with "request", its rarer word, in its name, was weighed as a name,
 * above a skill named "Pull request review".) A tag keeps the pairs of its every word (`text to
 * speech`), and under TAG_PROSE the pairs its stop words and letters left out make (`text
 * speech`): prose phrases read both ("text to speech" finds the tag, as it finds the words in a
 * description), `tags:` only the first (`tags:text-speech` is not the tag "text-to-speech").
 *
 * Segments are appended; removing a unit leaves garbage, compacted when more than half of the
 * pool is garbage (as ./attributes.ts does for its pool).
 */
import { part, type IndexState } from './index-state.js';
import type { Tables } from './tables.js';

/** Pairs kept per unit (a longer text keeps its first ones). */
const MAX_PAIRS = 4_000;

/** 32-bit FNV-1a of a term. */
export function termHash(term: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < term.length; i++) {
    h ^= term.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The 16-bit hash of the pair (a, b), from their termHash values. */
export function pairHash(a: number, b: number): number {
  const h = Math.imul(a ^ Math.imul(b, 0x9e3779b1), 0x85ebca6b);
  return (h ^ (h >>> 16)) & 0xffff;
}

/** Not a field: the kind of a tag's pairs without its stop words and letters (see above). */
export const TAG_PROSE = 64;

/** Per field bit (./fields.ts) and TAG_PROSE, by bit index: a 16-bit salt, distinct for each. */
const SALTS: readonly number[] = Array.from({ length: 7 }, (_, i) => (Math.imul(i + 1, 0x9e3779b1) >>> 16) & 0xffff);

/** The hash of pair hash `pair` (pairHash) kept in field `field` (one FIELD_* bit, or TAG_PROSE). */
export function fieldPair(pair: number, field: number): number {
  return pair ^ SALTS[31 - Math.clz32(field)]!;
}

export class PairPool {
  pool: Uint16Array = new Uint16Array(4096);
  private end = 0;
  private garbage = 0;

  constructor(private readonly tables: Tables) {}

  /** Bytes held by the pool (for memory reports). */
  get bytes(): number {
    return this.pool.byteLength;
  }

  save(state: IndexState): void {
    // Shared, not copied: appends go past `end`, a compaction writes a new pool.
    state.set('pairs.pool', this.pool.subarray(0, this.end));
    state.set('pairs.garbage', this.garbage);
  }

  load(state: IndexState): void {
    this.pool = part(state, 'pairs.pool');
    this.end = this.pool.length;
    this.garbage = part(state, 'pairs.garbage');
  }

  /** Stores the pairs of unit slot `slot` (hashes in any order, duplicates allowed). */
  set(slot: number, hashes: number[]): void {
    if (hashes.length === 0) {
      this.tables.unitPairs[slot] = -1;
      return;
    }
    // Sorted where they are kept (a typed array's numeric sort: a JS array's sort with a
    // comparator copied the array and called back per comparison, for every unit indexed),
    // then made distinct in place: the same segment.
    if (this.end + hashes.length + 1 > this.pool.length) {
      const out = new Uint16Array(Math.max(this.pool.length * 2, this.end + hashes.length + 1));
      out.set(this.pool.subarray(0, this.end));
      this.pool = out;
    }
    const at = this.end;
    const pool = this.pool;
    for (let i = 0; i < hashes.length; i++) pool[at + 1 + i] = hashes[i]!;
    pool.subarray(at + 1, at + 1 + hashes.length).sort();
    let n = 0;
    let previous = -1;
    for (let i = 0; i < hashes.length && n < MAX_PAIRS; i++) {
      const h = pool[at + 1 + i]!;
      if (h !== previous) pool[at + 1 + n++] = h;
      previous = h;
    }
    pool[at] = n;
    this.end += n + 1;
    this.tables.unitPairs[slot] = at;
  }

  /** Whether unit slot `slot` has the pair hash `h`. */
  has(slot: number, h: number): boolean {
    const at = this.tables.unitPairs[slot]!;
    if (at < 0) return false;
    const p = this.pool;
    let lo = at + 1;
    let hi = at + 1 + p[at]!;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const v = p[mid]!;
      if (v === h) return true;
      if (v < h) lo = mid + 1;
      else hi = mid;
    }
    return false;
  }

  clear(slot: number): void {
    const at = this.tables.unitPairs[slot]!;
    if (at >= 0) this.garbage += this.pool[at]! + 1;
    this.tables.unitPairs[slot] = -1;
  }

  /** Compacts the pool when mostly garbage; `liveSlots` lists every unit slot in use. */
  maybeCompact(liveSlots: () => Iterable<number>): void {
    if (this.garbage < 65_536 || this.garbage * 2 < this.end) return;
    const out = new Uint16Array(Math.max(4096, (this.end - this.garbage) * 2));
    let at = 0;
    const offsets = this.tables.unitPairs;
    for (const slot of liveSlots()) {
      const off = offsets[slot]!;
      if (off < 0) continue;
      const len = this.pool[off]! + 1;
      out.set(this.pool.subarray(off, off + len), at);
      offsets[slot] = at;
      at += len;
    }
    this.pool = out;
    this.end = at;
    this.garbage = 0;
  }
}
