/**
 * RecencyLists.inListingOrder (src/search/recency-lists.ts): entry numbers put in the order a
 * walk of a recency list meets them (the larger place in list's order first, equal places by the
 * id that sorts first), by its native sort of numeric keys where the places allow it and by a
 * comparison sort where they do not (not whole numbers, or spread too far for the keys to stay
 * exact). The places here are times in ms, many of them equal: the sort takes any numbers.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { RecencyLists, type RecencySource } from '../src/search/recency-lists.js';

/** A source of `count` entry numbers with these times and ids (nothing else is read). */
function source(times: readonly number[], ids: readonly string[]): RecencySource {
  const at = Float64Array.from(times);
  return {
    entryId: (no) => ids[no],
    compareIds: (a, b) => (ids[a]! < ids[b]! ? -1 : ids[a]! > ids[b]! ? 1 : 0),
    listSeqs: () => at,
    attributes: () => new Int32Array(0),
    signatures: () => new Int32Array(0),
  };
}

/** The listing order by its definition, one comparison at a time. */
function expected(times: readonly number[], ids: readonly string[], nos: readonly number[]): number[] {
  return [...nos].sort((a, b) => (times[a]! !== times[b]! ? times[b]! - times[a]! : ids[a]! < ids[b]! ? -1 : ids[a]! > ids[b]! ? 1 : 0));
}

const timesArb = fc.oneof(
  // Few distinct minutes: many equal times.
  fc.integer({ min: 0, max: 4 }).map((m) => Date.parse('2025-01-01T00:00:00Z') + m * 60_000),
  // Any millisecond within a few years.
  fc.integer({ min: 1_600_000_000_000, max: 1_800_000_000_000 }),
);

describe('RecencyLists.inListingOrder', () => {
  it('puts entries newest first, equal times by id, as a comparison of each pair does', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(timesArb, fc.string({ minLength: 1, maxLength: 3 })), { minLength: 0, maxLength: 300 }), (rows) => {
        const times = rows.map(([t]) => t);
        // Distinct ids (a suffix keeps their order otherwise random).
        const ids = rows.map(([, id], i) => `${id}-${i}`);
        const nos = [...rows.keys()].reverse();
        assert.deepEqual(new RecencyLists(source(times, ids)).inListingOrder(nos), expected(times, ids, nos));
      }),
      { seed: 2026_12_05, numRuns: 300 },
    );
  });

  it('sorts by comparison where the times are not whole milliseconds or are spread too far apart for exact keys', () => {
    const ids = Array.from({ length: 5000 }, (_, i) => `id-${(i * 7919) % 5000}`);
    const nos = [...ids.keys()];
    // 1970 to 2026 with 5,000 entries: the keys would need more than 53 bits.
    const spread = nos.map((i) => (i % 3 === 0 ? 0 : i % 3 === 1 ? 1_764_000_000_000 : 1_764_000_000_000 - (i % 50)));
    assert.deepEqual(new RecencyLists(source(spread, ids)).inListingOrder(nos), expected(spread, ids, nos));
    const fractional = nos.map((i) => 1_764_000_000_000 + (i % 10) / 4);
    assert.deepEqual(new RecencyLists(source(fractional, ids)).inListingOrder(nos), expected(fractional, ids, nos));
  });
});
