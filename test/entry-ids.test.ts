/**
 * EntryIds (../src/search/entry-ids.ts) against a plain map, the way the index kept ids before:
 * every id found by its number and its number by the id, ids ordered exactly as their strings
 * order, through growth, removals (the table's backward shifts), numbers reused, and a saved
 * state loaded back. The ids mix the registry's UUIDs, UUIDs that differ in one byte (clustered
 * hashes would show), and ids of other shapes, which are kept as strings.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { EntryIds } from '../src/search/entry-ids.js';
import type { IndexState } from '../src/search/index-state.js';
import { timeOrderedId } from '../src/lib/time-ordered-id.js';

/** A seeded PRNG (mulberry32): the same run every time. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The id strings as sorted by JavaScript's string order: what the ranking's ties used. */
const stringOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function checkAgainst(ids: EntryIds, reference: Map<number, string>, bound: number): void {
  assert.equal(ids.size, reference.size);
  for (let no = 0; no < bound; no++) {
    const id = reference.get(no);
    assert.equal(ids.get(no), id, `entry number ${no}`);
    assert.equal(ids.has(no), id !== undefined);
    if (id !== undefined) assert.equal(ids.numberOf(id), no, `the number of ${id}`);
  }
}

describe('EntryIds', () => {
  it('holds UUIDs and other ids as a map would, through growth, removals and reuse', () => {
    const random = prng(7);
    const ids = new EntryIds();
    const reference = new Map<number, string>();
    const free: number[] = [];
    let next = 0;
    const sequential = (n: number) => `00000000-0000-7000-8000-${n.toString(16).padStart(12, '0')}`;
    const makeId = (i: number): string => {
      const r = random();
      if (r < 0.5) return timeOrderedId();
      if (r < 0.7) return sequential(i); // differ in their last bytes only
      if (r < 0.8) return randomUUID();
      if (r < 0.85) return randomUUID().toUpperCase(); // not as the registry writes them: kept as a string
      if (r < 0.9) return `entry-${i}`;
      return `g${sequential(i).slice(1)}`; // UUID-shaped, not hex
    };
    for (let step = 0; step < 20_000; step++) {
      if (reference.size > 0 && random() < 0.35) {
        // Remove a random held number.
        const held = [...reference.keys()];
        const no = held[Math.floor(random() * held.length)]!;
        const id = reference.get(no)!;
        ids.delete(no);
        reference.delete(no);
        free.push(no);
        assert.equal(ids.numberOf(id), undefined, `${id} was removed`);
        assert.equal(ids.get(no), undefined);
      } else {
        const no = free.length > 0 && random() < 0.5 ? free.pop()! : next++;
        const id = makeId(step);
        ids.set(no, id);
        reference.set(no, id);
      }
      if (step % 2_500 === 0) checkAgainst(ids, reference, next);
    }
    checkAgainst(ids, reference, next);
    assert.ok(next > 5_000, 'the table grew past its first size');
    assert.equal(ids.numberOf('00000000-0000-7000-8000-ffffffffffff'), undefined);
    assert.equal(ids.numberOf('not-an-id'), undefined);
  });

  it('orders two entry numbers as their id strings order, whatever their shapes (free numbers as "")', () => {
    const ids = new EntryIds();
    const written = [
      '01890a5d-ac96-774b-bcce-b302099a8057',
      '01890a5d-ac96-774b-bcce-b302099a8058',
      '01890a5d-ac96-774b-bcce-b302099a805a',
      'f1890a5d-ac96-774b-bcce-b302099a8057',
      '01890A5D-AC96-774B-BCCE-B302099A8057',
      '0189',
      'zzz',
      '01890a5d-ac96-774b-bcce-b302099a8057x',
      ...Array.from({ length: 40 }, () => timeOrderedId()),
      ...Array.from({ length: 40 }, () => randomUUID()),
    ];
    written.forEach((id, no) => ids.set(no, id));
    const free = written.length + 3; // never set
    const numbers = [...written.keys(), free];
    const text = (no: number) => ids.get(no) ?? '';
    for (const a of numbers) for (const b of numbers) assert.equal(Math.sign(ids.compare(a, b)), stringOrder(text(a), text(b)), `${text(a)} against ${text(b)}`);
  });

  it('refuses a number or an id already held (the index frees one before it reuses it)', () => {
    const ids = new EntryIds();
    const id = timeOrderedId();
    ids.set(0, id);
    assert.throws(() => ids.set(0, timeOrderedId()), /already holds an id/);
    assert.throws(() => ids.set(1, id), /already held/);
    ids.set(1, 'other');
    assert.throws(() => ids.set(2, 'other'), /already held/);
  });

  it('saves and loads back what it holds, and refuses an inconsistent saved state', () => {
    const ids = new EntryIds();
    const reference = new Map<number, string>();
    for (let no = 0; no < 3_000; no++) {
      const id = no % 7 === 0 ? `custom-${no}` : timeOrderedId();
      ids.set(no, id);
      reference.set(no, id);
    }
    for (let no = 0; no < 3_000; no += 3) {
      ids.delete(no);
      reference.delete(no);
    }
    const state: IndexState = new Map();
    ids.save(state, 3_000);
    // The saved parts are copies: the live ids may change while they are written.
    ids.set(0, timeOrderedId());
    const loaded = new EntryIds();
    loaded.load(state);
    checkAgainst(loaded, reference, 3_000);
    const later = timeOrderedId();
    loaded.set(0, later);
    assert.equal(loaded.numberOf(later), 0);

    const broken: IndexState = new Map(state);
    broken.set('ids.bytes', new Uint8Array(16));
    assert.throws(() => new EntryIds().load(broken), /inconsistent/);
  });
});
