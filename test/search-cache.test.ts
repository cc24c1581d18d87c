/**
 * The search cache's own rules (src/registry/search-cache.ts): an answer is kept with the index
 * and version it came from and is gone once either changes; answers and hits are bounded,
 * least recently used first; what it hands out is frozen. End to end (a change seen at once by
 * a search asked before it) in test/search.test.ts, "freshness".
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SearchHit, SearchPage } from '../src/contract/types.js';
import { jsonAnswerBody } from '../src/http/json-answer.js';
import { sharedJsonBytes, sharedTextBytes, shareJsonText } from '../src/lib/shared-json.js';
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
  const cache = new SearchCache(10);
  const index = {};
  cache.set('a', index, 1, page('x'));
  assert.deepEqual(cache.get('a', index, 1), page('x'));
  assert.equal(cache.get('a', index, 2), undefined, 'the index changed');
  cache.set('a', index, 2, page('y'));
  assert.equal(cache.get('a', {}, 2), undefined, 'another index (a reload)');
  assert.equal(cache.size, 0);
  assert.deepEqual([cache.found, cache.missed], [1, 2]);
});

test('answers and hits are bounded, least recently used first', () => {
  const index = {};
  const cache = new SearchCache(2, 5);
  cache.set('a', index, 1, page('a'));
  cache.set('b', index, 1, page('b'));
  cache.get('a', index, 1);
  cache.set('c', index, 1, page('c'));
  assert.ok(cache.get('a', index, 1));
  assert.equal(cache.get('b', index, 1), undefined, 'the least recently used answer went');
  cache.set('d', index, 1, page('d1', 'd2', 'd3', 'd4'));
  assert.equal(cache.get('c', index, 1), undefined, 'six hits are over the bound of five: the least recently used answer went');
  assert.ok(cache.get('a', index, 1));
  assert.equal(cache.size, 2);
  cache.set('e', index, 1, page('e1', 'e2', 'e3', 'e4', 'e5', 'e6'));
  assert.equal(cache.get('e', index, 1), undefined, 'an answer over the whole bound is not kept');
});

test('what it keeps is frozen; with no room it keeps nothing and freezes nothing', () => {
  const index = {};
  const kept = new SearchCache(1).set('a', index, 1, page('x'));
  assert.throws(() => {
    (kept.results[0] as { name: string }).name = 'changed';
  }, TypeError);
  const off = new SearchCache(0);
  const answer = off.set('a', index, 1, page('x'));
  assert.equal(Object.isFrozen(answer), false);
  assert.equal(off.get('a', index, 1), undefined);
  assert.equal(off.enabled, false);
});

test('a kept answer is written from its JSON made once, byte for byte what serialising the whole answer gives', () => {
  const kept = new SearchCache(4).set('a', {}, 1, { ...page('x', 'ü — y'), nextPageToken: 'tok"en' });
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
  const kept = new SearchCache(4).set('a', {}, 1, page('x'));
  shareJsonText(kept, '1. Agent x — skill');
  const json = sharedJsonBytes(kept)!;
  const text = sharedTextBytes(kept, '1. Agent x — skill')!;
  assert.equal(json.toString('utf8'), JSON.stringify(kept));
  assert.equal(text.toString('utf8'), JSON.stringify('1. Agent x — skill'));
  // Buffer.from of a string this short is a slice of a shared block of Buffer.poolSize bytes.
  assert.ok(Buffer.from(JSON.stringify(kept)).buffer.byteLength >= Buffer.poolSize);
  assert.deepEqual([json.buffer.byteLength, text.buffer.byteLength], [json.length, text.length]);
});
