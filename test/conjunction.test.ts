/**
 * Conjunction.collect (../src/search/conjunction.ts) on hand-made posting groups: the clause
 * count it chooses, and that it does not read the last (commonest) clause's postings when fewer
 * than a page of entries have any of the clauses before it, since none of the others can have
 * two clauses. Searches through it are checked against a full read in ./search-oracle.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Conjunction, type ClauseGroup } from '../src/search/conjunction.js';
import { bitmapOf, bitmapWords } from '../src/search/entry-bits.js';
import { ANY_LANGUAGE } from '../src/search/expansion.js';

const ORD_BITS = 10;
const BOUND = 1000;
const marks = new Uint8Array(BOUND);

/** A strong group of clause `clause` with one posting per entry number in `entries` (their own units). */
const group = (clause: number, entries: readonly number[]): ClauseGroup => ({
  clause,
  strong: true,
  ids: Int32Array.from(entries, (e) => e << ORD_BITS),
  add: 1024,
  lang: ANY_LANGUAGE,
});

/** The same group, its postings counted as they are read. */
const counted = (g: ClauseGroup): { group: ClauseGroup; reads: () => number } => {
  let reads = 0;
  const ids = g.ids;
  const view = new Proxy(ids as Int32Array, {
    get(target, key) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
      const v = Reflect.get(target, key) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { group: { ...g, ids: view }, reads: () => reads };
};

const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

const allowing = (entries: readonly number[]): Int32Array => {
  const bits = bitmapOf(new Int32Array(0), bitmapWords(BOUND));
  for (const e of entries) bits[e >>> 5]! |= 1 << (e & 31);
  return bits;
};

describe('Conjunction.collect', () => {
  it('chooses the most clauses that a page of entries have', () => {
    const c = new Conjunction();
    // Entries 0-9 have all three clauses, 10-29 two of them.
    const groups = [group(0, range(0, 10)), group(1, range(0, 30)), group(2, range(0, 500))];
    assert.equal(c.collect(groups, marks, BOUND, ORD_BITS, 10), 3);
    c.clear();
    assert.equal(c.collect(groups, marks, BOUND, ORD_BITS, 11), 2);
    c.clear();
    assert.equal(c.collect(groups, marks, BOUND, ORD_BITS, 30), 2);
    c.clear();
    assert.equal(c.collect(groups, marks, BOUND, ORD_BITS, 31), 0);
    c.clear();
  });

  it('does not read the last clause when fewer than a page of entries have an earlier one', () => {
    const c = new Conjunction();
    // 15 entries have the first clause, 5 of them the second too; the last clause has 500.
    const last = counted(group(1, range(5, 505)));
    assert.equal(c.collect([group(0, range(0, 15)), last.group], marks, BOUND, ORD_BITS, 20), 0);
    assert.equal(last.reads(), 0);
    c.clear();
    // A page of 15: read, and answered.
    const again = counted(group(1, range(5, 505)));
    assert.equal(c.collect([group(0, range(0, 15)), again.group], marks, BOUND, ORD_BITS, 5), 2);
    assert.equal(again.reads(), 500);
    c.clear();
    // 30 entries have the first clause but 20 of them fail the filter: 10 allowed, fewer than 20.
    const filtered = counted(group(1, range(0, 500)));
    assert.equal(c.collect([group(0, range(0, 30)), filtered.group], marks, BOUND, ORD_BITS, 20, allowing(range(20, 1000))), 0);
    assert.equal(filtered.reads(), 0);
    c.clear();
    // Three clauses: the two rarer have 12 + 12 entries, 24 together, so the last is read; only
    // 12 have two clauses or more (those of the second, which the last has too), fewer than 20.
    const third = counted(group(2, range(12, 600)));
    assert.equal(c.collect([group(0, range(0, 12)), group(1, range(12, 24)), third.group], marks, BOUND, ORD_BITS, 20), 0);
    assert.equal(third.reads(), 588);
    c.clear();
  });
});
