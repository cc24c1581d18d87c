/**
 * The entries offering each capability value, by bucket (src/search/capability-lists.ts), against
 * a plain map of what each live entry offers: through adds, removals and numbers used again,
 * enough postings to grow and compact the arena, and a save and load.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CapabilityLists } from '../src/search/capability-lists.js';
import type { IndexState } from '../src/search/index-state.js';

/** A small deterministic generator (tests must not depend on Math.random). */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

class Model {
  /** By entry number: its generation, bumped by every add and removal (as RecencyLists does). */
  gen = new Int32Array(1 << 16);
  /** Live entry number → the values it offers. */
  readonly live = new Map<number, string[]>();
  lists = new CapabilityLists((no) => this.gen[no]!);

  add(no: number, values: string[]): void {
    this.gen[no]!++;
    this.live.set(no, values);
    this.lists.add(no, values);
  }

  remove(no: number): void {
    this.gen[no]!++;
    this.live.delete(no);
  }

  /** Checks `offering` for `values`: every live entry offering one is there, once; nothing else that is not live. */
  check(values: string[]): void {
    const out: number[] = [];
    assert.equal(this.lists.offering(values, Infinity, out), true);
    assert.equal(new Set(out).size, out.length, `no entry twice for ${values.join(', ')}`);
    for (const no of out) assert.ok(this.live.has(no), `entry ${no} given for ${values.join(', ')} is live`);
    const given = new Set(out);
    for (const [no, offered] of this.live) {
      if (offered.some((v) => values.includes(v))) assert.ok(given.has(no), `entry ${no} offering one of ${values.join(', ')} is given`);
    }
  }
}

describe('capability lists (entries by hashed capability value)', () => {
  it('give every live entry offering an asked value, and only live entries, through changes that grow and compact the arena', () => {
    const random = prng(7);
    const model = new Model();
    // 2,000 values: a bucket holds dozens of entries, so buckets outgrow their room and move (the arena compacted).
    const value = (): string => `tool-${Math.floor(random() * 2_000)}`;
    // Most values are rare; a few are offered by many entries (a common tool name).
    const offered = (): string[] => Array.from({ length: 1 + Math.floor(random() * 5) }, () => (random() < 0.1 ? `common-${Math.floor(random() * 3)}` : value()));
    // 30,000 entries of about three values each: past the arena's first 65,536 postings.
    for (let no = 0; no < 30_000; no++) model.add(no, offered());
    const probes = Array.from({ length: 100 }, () => [value(), ...(random() < 0.3 ? [value()] : [])]).concat([['common-0'], ['common-1', 'common-2'], ['no-such-value']]);
    for (const p of probes) model.check(p);
    // Churn: removals, and numbers used again for other entries (stale postings, buckets moved, the arena compacted).
    for (let step = 0; step < 100_000; step++) {
      const no = Math.floor(random() * 30_000);
      if (model.live.has(no) && random() < 0.5) model.remove(no);
      else {
        if (model.live.has(no)) model.remove(no);
        model.add(no, offered());
      }
      if (step % 10_000 === 0) for (const p of probes.slice(0, 20)) model.check(p);
    }
    for (const p of probes) model.check(p);
    // Stale postings do not pile up: at most a few times the live ones (each bucket compacts when half stale or full).
    const livePostings = [...model.live.values()].reduce((n, values) => n + new Set(values).size, 0);
    assert.ok(model.lists.size.postings <= 3 * livePostings, `${model.lists.size.postings} postings held for ${livePostings} live`);

    // Saved and loaded, then changed further: the same answers.
    const state: IndexState = new Map();
    model.lists.save(state);
    const loaded = new CapabilityLists((no) => model.gen[no]!);
    loaded.load(state);
    model.lists = loaded;
    for (const p of probes) model.check(p);
    for (let no = 30_000; no < 40_000; no++) model.add(no, offered());
    for (const [no] of [...model.live].slice(0, 5_000)) model.remove(no);
    for (const p of probes) model.check(p);
  });

  it('says when more entries than asked for may offer the values (without reading them past twice as many), and reads a bucket of removed entries as empty', () => {
    const model = new Model();
    for (let no = 0; no < 100; no++) model.add(no, ['shared', `own-${no}`]);
    const out: number[] = [];
    assert.equal(model.lists.offering(['shared'], 99, out), false);
    assert.deepEqual(out, []);
    assert.equal(model.lists.offering(['shared'], 100, out), true);
    assert.equal(out.length, 100);
    for (let no = 0; no < 100; no++) model.remove(no);
    const after: number[] = [];
    // More than twice as many held as asked for: not read (stale or not).
    assert.equal(model.lists.offering(['shared'], 49, after), false);
    assert.equal(model.lists.offering(['shared'], 50, after), true, 'a bucket of stale postings is compacted on reading');
    assert.deepEqual(after, []);
    assert.equal(model.lists.offering(['shared'], 0, after), true, 'and then holds nothing');
  });

  it('refuses a saved state whose lists do not fit their arena', () => {
    const model = new Model();
    model.add(1, ['a']);
    const state: IndexState = new Map();
    model.lists.save(state);
    state.set('capabilities.arena', new Int32Array(0));
    assert.throws(() => new CapabilityLists(() => 0).load(state), /inconsistent/);
  });
});
