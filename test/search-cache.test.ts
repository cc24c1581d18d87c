/**
 * The search cache's own rules (src/registry/search-cache.ts): an answer is kept with the index
 * and version it came from and is gone once either changes; answers and bytes are bounded,
 * least recently used first; what it hands out is frozen. End to end (a change seen at once by
 * a search asked before it) in test/search.test.ts, "freshness".
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SearchHit, SearchPage } from '../src/contract/types.js';
import { jsonAnswerBody } from '../src/http/json-answer.js';
import { sharedJsonBytes, sharedMemoryBytes, sharedTextBytes, shareJsonText } from '../src/lib/shared-json.js';
import { SearchCache } from '../src/registry/search-cache.js';

const hit = (id: string): SearchHit => ({
  id,
  kind: 'agent',
  name: id,
  description: '',
  score: 1,
  match: { type: 'agent', id: '', name: id, fields: ['name'] },
  interfaces: [],
  verified: false,
});
const page = (...ids: string[]): SearchPage => ({ results: ids.map(hit), total: ids.length });

test('an answer is kept for its index and version only', () => {
  const cache = new SearchCache(10, 10_000_000);
  const index = {};
  cache.set('a', index, 1, page('x'));
  assert.deepEqual(cache.get('a', index, 1), page('x'));
  assert.equal(cache.get('a', index, 2), undefined, 'the index changed');
  cache.set('a', index, 2, page('y'));
  assert.equal(cache.get('a', {}, 2), undefined, 'another index (a reload)');
  assert.equal(cache.size, 0);
  assert.deepEqual([cache.found, cache.missed], [1, 2]);
});

test('answers and bytes are bounded, least recently used first', () => {
  const index = {};
  const cache = new SearchCache(2, 10_000_000);
  cache.set('a', index, 1, page('a'));
  cache.set('b', index, 1, page('b'));
  cache.get('a', index, 1);
  cache.set('c', index, 1, page('c'));
  assert.ok(cache.get('a', index, 1));
  assert.equal(cache.get('b', index, 1), undefined, 'the least recently used answer went');
  assert.equal(cache.size, 2);
});

test('what the kept answers hold is bounded by bytes, their JSON included, whatever their number of hits: long texts fill it sooner', () => {
  const index = {};
  // A hit as large as an entry's texts make it (a long description): one such answer of a hit holds more than one of many short hits.
  const long = (id: string): SearchPage => ({ results: [{ ...hit(id), description: 'd'.repeat(3000) }], total: 1 });
  const one = new SearchCache(10, 1_000_000).set('x', {}, 1, long('x'));
  const bytesOfOne = sharedMemoryBytes(one);
  assert.ok(bytesOfOne > 6000, `the parsed description and its JSON both count (${bytesOfOne} bytes)`);
  const cache = new SearchCache(1000, bytesOfOne * 3 + 100);
  for (const id of ['a', 'b', 'c']) cache.set(id, index, 1, long(id));
  assert.equal(cache.size, 3);
  assert.equal(cache.bytes, bytesOfOne * 3);
  cache.get('a', index, 1);
  cache.set('d', index, 1, long('d'));
  assert.deepEqual(['a', 'b', 'c', 'd'].map((id) => cache.get(id, index, 1) !== undefined), [true, false, true, true], 'the least recently used answer went');
  assert.ok(cache.bytes <= bytesOfOne * 3 + 100);
  // Twenty short hits are kept beside them as long as their bytes fit.
  const many = page(...Array.from({ length: 20 }, (_, i) => `m${i}`));
  cache.set('many', index, 1, many);
  assert.ok(cache.bytes <= bytesOfOne * 3 + 100);
  // An answer over the whole bound is not kept (and empties nothing).
  const small = new SearchCache(10, bytesOfOne - 1);
  small.set('s', index, 1, page('s'));
  small.set('x', index, 1, long('x'));
  assert.equal(small.get('x', index, 1), undefined);
  assert.ok(small.get('s', index, 1));
  // A change of the index empties it, bytes too.
  assert.equal(cache.get('a', index, 2), undefined);
  assert.equal(cache.bytes, 0);
});

test('what it keeps is frozen; with no room it keeps nothing and freezes nothing', () => {
  const index = {};
  const kept = new SearchCache(1, 10_000_000).set('a', index, 1, page('x'));
  assert.throws(() => {
    (kept.results[0] as { name: string }).name = 'changed';
  }, TypeError);
  const off = new SearchCache(0, 0);
  const answer = off.set('a', index, 1, page('x'));
  assert.equal(Object.isFrozen(answer), false);
  assert.equal(off.get('a', index, 1), undefined);
  assert.equal(off.enabled, false);
});

test('a kept answer is written from its JSON made once, byte for byte what serialising the whole answer gives', () => {
  const kept = new SearchCache(4, 10_000_000).set('a', {}, 1, { ...page('x', 'ü — y'), nextPageToken: 'tok"en' });
  shareJsonText(kept, 'Ünïcode — text');
  const part = (data: unknown) => ({ data, mediaType: 'application/json' });
  const task = (data: unknown) => ({ id: 't', artifacts: [{ artifactId: 'a', parts: [part(data), { text: 'Ünïcode — text' }] }, { artifactId: 'b', parts: [part(data)] }], history: [{ parts: [{ text: '"\\u0000shared-json-' }] }] });
  for (const body of [{ jsonrpc: '2.0', id: 7, result: { task: task(kept) } }, { jsonrpc: '2.0', id: 'x', result: task(kept) }]) {
    const written = jsonAnswerBody(body);
    assert.ok(Array.isArray(written) && written.every((chunk) => Buffer.isBuffer(chunk)), 'spliced');
    assert.equal(Buffer.concat(written).toString('utf8'), JSON.stringify(body));
  }
  // An answer without a kept value is serialised as a whole.
  const plain = { jsonrpc: '2.0', id: 1, result: { task: task({ results: [] }) } };
  assert.equal(jsonAnswerBody(plain), JSON.stringify(plain));
});

test("a kept answer's JSON and its summary's are held in stores of their own size: kept for as long as tasks hold the answer, a slice of Buffer's pool would keep its whole 64 KiB block alive", () => {
  const kept = new SearchCache(4, 10_000_000).set('a', {}, 1, page('x'));
  shareJsonText(kept, '1. Agent x — skill');
  const json = sharedJsonBytes(kept)!;
  const text = sharedTextBytes(kept, '1. Agent x — skill')!;
  assert.equal(json.toString('utf8'), JSON.stringify(kept));
  assert.equal(text.toString('utf8'), JSON.stringify('1. Agent x — skill'));
  // Buffer.from of a string this short is a slice of a shared block of Buffer.poolSize bytes.
  assert.ok(Buffer.from(JSON.stringify(kept)).buffer.byteLength >= Buffer.poolSize);
  assert.deepEqual([json.buffer.byteLength, text.buffer.byteLength], [json.length, text.length]);
});
