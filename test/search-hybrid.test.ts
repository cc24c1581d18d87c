/**
 * Hybrid ranking (REGISTRY_EMBEDDINGS_URL) end to end: a registry on 127.0.0.1 talking to a
 * small OpenAI-compatible embeddings server this test starts on 127.0.0.1. The server embeds by
 * concepts (words of one topic share a dimension, every other word is hashed), so "melody" lands
 * near an agent that "generates songs" without sharing a word with it, as a real model would.
 * Also: the synonym file from REGISTRY_SYNONYMS, the request the service receives, degrading to
 * keyword ranking (with a counter) when the service fails, and the client's bounds; the client
 * goes through the outbound guard, which allows the operator's service for `embeddings` only.
 * The service's secrets (a key in the URL's query, the key it is sent) stay out of the log, and
 * the line saying hybrid ranking is on names it in a field of its own.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@a2a-js/sdk/client';
import { parseTree } from 'jsonc-parser';
import { loadConfig } from '../src/config/config.js';
import { FetchError, GuardedFetcher } from '../src/net/index.js';
import { createLogger } from '../src/observability/logger.js';
import { EmbeddingError, OpenAIEmbeddings, embeddingsEndpoint, parseEmbeddings } from '../src/search/embeddings.js';
import { EMBED_TEXT_CHARS, HybridSearchIndex, QUERY_TIMEOUT_MS, embeddingText } from '../src/search/hybrid.js';
import { createSearchIndex } from '../src/search/index.js';
import { describeAgentCard } from '../src/registry/describe.js';
import { startRegistry } from '../src/server.js';
import { op, resultOf, sdkClient, type WireJson } from './support/client.js';
import { v1Card } from './support/documents.js';
import { TOKENS, TOKENS_ENV, startTestRegistry, tempDir, type TestRegistry } from './support/registry.js';
import { eventually } from './support/eventually.js';
import { followRequestTimers } from './support/request-timers.js';

const CONCEPTS = [
  ['music', 'song', 'songs', 'melody', 'melodies', 'tune', 'audio', 'lyrics', 'singer'],
  ['invoice', 'invoices', 'billing', 'payment', 'payments', 'money'],
  ['weather', 'forecast', 'forecasts', 'rain', 'storm'],
  ['dog', 'dogs', 'puppy', 'pet', 'pets', 'veterinarian'],
];
const DIMS = 64;

/** The concept embedding of a text: one dimension per concept, words outside them hashed. */
function embed(text: string): number[] {
  const v = new Array<number>(DIMS).fill(0);
  for (const word of text.toLowerCase().split(/[^a-z]+/).filter(Boolean)) {
    const c = CONCEPTS.findIndex((group) => group.includes(word));
    if (c >= 0) v[c]! += 3;
    else {
      let h = 7;
      for (const ch of word) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
      v[CONCEPTS.length + (h % (DIMS - CONCEPTS.length))]! += 1;
    }
  }
  return v;
}

interface EmbeddingsServer {
  url: string;
  /** Bodies received. */
  requests: { model: string; input: string[] }[];
  /** How to answer from now on. */
  mode: 'ok' | 'fail' | 'hang' | 'huge' | 'quote-key';
  close(): Promise<void>;
}

async function startEmbeddingsServer(): Promise<EmbeddingsServer> {
  const state: EmbeddingsServer = { url: '', requests: [], mode: 'ok', close: async () => undefined };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404).end('{"error": "not found"}');
        return;
      }
      const parsed = JSON.parse(body) as { model: string; input: string[] };
      state.requests.push(parsed);
      if (state.mode === 'fail') {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error": {"message": "model is loading"}}');
        return;
      }
      if (state.mode === 'quote-key') {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `invalid key: ${req.headers.authorization}` } }));
        return;
      }
      if (state.mode === 'hang') return; // never answers; the client's timeout must fire
      if (state.mode === 'huge') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ embedding: new Array(2_000_000).fill(0.5) }] }));
        return;
      }
      const data = parsed.input.map((text, index) => ({ object: 'embedding', index, embedding: embed(text) }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', model: parsed.model, data }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

let embeddings: EmbeddingsServer;
let registry: TestRegistry;
let writer: Client;
let reader: Client;
let synonymsDir: string;

const search = async (args: WireJson): Promise<WireJson> => resultOf(await op(reader, { search: args }));
const names = async (query: string): Promise<string[]> => (await search({ query })).results.map((h: WireJson) => h.name);

/** Polls until `check` passes (the background embedding is asynchronous). */
const card = (name: string, url: string, description: string, skill: string) => ({
  ...v1Card(name, url),
  description,
  skills: [{ id: 'main', name: skill, description, tags: ['demo'], examples: [] }],
});

before(async () => {
  embeddings = await startEmbeddingsServer();
  synonymsDir = tempDir('synonyms-');
  const synonyms = path.join(synonymsDir, 'synonyms.txt');
  fs.writeFileSync(synonyms, '# the operator\'s words\ncanine => dog\n');
  registry = await startTestRegistry({ REGISTRY_EMBEDDINGS_URL: embeddings.url, REGISTRY_EMBEDDINGS_MODEL: 'concepts-64', REGISTRY_SYNONYMS: synonyms });
  writer = await sdkClient(registry.url, { token: TOKENS.alice });
  reader = await sdkClient(registry.url);
  for (const c of [
    card('Songsmith', 'https://songs.example.org/a2a', 'Generates songs from your lyrics.', 'Write a song'),
    card('Ledger', 'https://ledger.example.org/a2a', 'Sends invoices and chases late payments.', 'Send invoice'),
    card('Skies', 'https://skies.example.org/a2a', 'Gives the weather forecast for any city.', 'Forecast'),
    card('Paws', 'https://paws.example.org/a2a', 'Finds a dog walker near you.', 'Walk dogs'),
  ]) {
    resultOf(await op(writer, { register: { agentCard: c } }));
  }
});

after(async () => {
  await registry.close();
  await embeddings.close();
  fs.rmSync(synonymsDir, { recursive: true, force: true });
  fs.rmSync(registry.dataDir, { recursive: true, force: true });
});

describe('hybrid ranking', () => {
  test('entries are embedded in the background and a query by meaning finds them', async () => {
    // "melody" is in no card: only the embeddings connect it to the song writer.
    await eventually(async () => (await names('melody'))[0] === 'Songsmith', '"melody" to find Songsmith');
    const hit = (await search({ query: 'melody' })).results[0];
    assert.equal(hit.match.type, 'agent');
    assert.deepEqual(hit.match.fields, [], 'found by meaning: no field matched a word');
    assert.ok(hit.score > 0 && hit.score < 1, `a fused score: ${hit.score}`);
  });

  test('the service got the configured model and every entry\'s text', () => {
    const inputs = embeddings.requests.flatMap((r) => r.input);
    assert.ok(embeddings.requests.every((r) => r.model === 'concepts-64'));
    assert.ok(inputs.some((t) => t.includes('Songsmith') && t.includes('Generates songs')));
    assert.ok(inputs.includes('melody'), 'the query was embedded');
  });

  test('keyword matches stay on top of the fused list, found-by-meaning entries join them', async () => {
    const results = await names('payment');
    assert.equal(results[0], 'Ledger', 'keyword and meaning agree');
    assert.deepEqual(await names('rain'), ['Skies', ...(await names('rain')).slice(1)]);
  });

  test('results per match and empty queries use keyword ranking alone', async () => {
    assert.deepEqual((await search({ query: 'melody', resultsPer: 'match' })).results, []);
    assert.equal((await search({ query: '' })).total, 4);
  });

  test('a search leaves no timer of its query\'s embedding pending once answered: the bound held its request for 1.5 s', async () => {
    const timers = followRequestTimers();
    try {
      // A query not embedded before (embeddings of queries are remembered): the service is asked.
      const asked = embeddings.requests.length;
      await names('songs for a rainy dog');
      assert.ok(embeddings.requests.slice(asked).some((r) => r.input.includes('songs for a rainy dog')), 'the query was embedded');
      assert.equal(await timers.pending(QUERY_TIMEOUT_MS), 0, 'the query\'s bound is left pending');
    } finally {
      timers.stop();
    }
  });

  test('the operator\'s synonym file is in use', async () => {
    assert.equal((await names('canine '))[0], 'Paws');
  });

  test('a query of only a bare field or operator ("tags:", "NOT") lists entries without asking the service', async () => {
    const before = embeddings.requests.length;
    const listed = await names('');
    for (const typing of ['tags:', 'NOT', 'skill: OR']) assert.deepEqual(await names(typing), listed, typing);
    // (Entries may still be embedded meanwhile: only queries count here.)
    const queries = embeddings.requests.slice(before).flatMap((r) => r.input).filter((t) => ['', 'tags:', 'NOT', 'skill: OR'].includes(t));
    assert.deepEqual(queries, [], 'the service was not asked');
  });

  test('when the service fails, searches fall back to keywords and the failure is counted', async () => {
    embeddings.mode = 'fail';
    const before = embeddings.requests.length;
    // A query not embedded before (embeddings of queries are remembered).
    const results = await names('invoices and payments today');
    assert.equal(results[0], 'Ledger', 'keyword ranking still answers');
    assert.ok(embeddings.requests.length > before, 'the service was asked');
    const metrics = await (await fetch(`${registry.url}/metrics`)).text();
    assert.match(metrics, /registry_search_embedding_failures_total\{stage="query"\} [1-9]/);
    // For a while after a failure queries do not wait on the service at all.
    const asked = embeddings.requests.length;
    assert.equal((await names('city forecast'))[0], 'Skies');
    assert.equal(embeddings.requests.length, asked);
    embeddings.mode = 'ok';
  });
});

describe('embeddings client', () => {
  test('an entry\'s text is cut between characters: never half an emoji, which a service may refuse with its batch', () => {
    // The name and a newline put the emoji at odd offsets: a cut by UTF-16 units ended in a lone surrogate.
    const text = embeddingText(describeAgentCard({ ...v1Card('Nimbus'), description: '🌦'.repeat(2500) }, '1.0'));
    assert.equal(text, `Nimbus\n${'🌦'.repeat(EMBED_TEXT_CHARS - 7)}`);
  });

  test('endpoint from a base URL or the full path', () => {
    assert.equal(embeddingsEndpoint('http://127.0.0.1:8080'), 'http://127.0.0.1:8080/v1/embeddings');
    assert.equal(embeddingsEndpoint('http://127.0.0.1:8080/v1'), 'http://127.0.0.1:8080/v1/embeddings');
    assert.equal(embeddingsEndpoint('http://127.0.0.1:8080/openai/v1/embeddings'), 'http://127.0.0.1:8080/openai/v1/embeddings');
  });

  test('answers are checked: count, order by index, numbers, equal lengths', () => {
    const v = parseEmbeddings({ data: [{ index: 1, embedding: [0, 1] }, { index: 0, embedding: [1, 0] }] }, 2);
    assert.deepEqual(v.map((x) => [...x]), [[1, 0], [0, 1]]);
    assert.throws(() => parseEmbeddings({ data: [] }, 1), /0 embeddings for 1 texts/);
    assert.throws(() => parseEmbeddings({ data: [{ embedding: 'AAAA' }] }, 1), /not a list of numbers/);
    assert.throws(() => parseEmbeddings({ data: [{ embedding: [1] }, { embedding: [1, 2] }] }, 2), /different lengths/);
    assert.throws(() => parseEmbeddings({ error: 'x' }, 1), /without a "data" array/);
  });

  test('errors say which service failed and how; slow and huge answers are cut off', async () => {
    const server = await startEmbeddingsServer();
    const fetcher = new GuardedFetcher({ maxBytes: 1024, operatorEndpoints: [{ purpose: 'embeddings', url: embeddingsEndpoint(server.url) }] });
    const fetch = fetcher.fetchFunction.bind(fetcher);
    try {
      const client = new OpenAIEmbeddings({ url: server.url, model: 'm', timeoutMs: 10_000, maxResponseBytes: 1_000_000, fetch });
      server.mode = 'fail';
      await assert.rejects(client.embed(['x']), (e: Error) => e instanceof EmbeddingError && e.message.includes(server.url) && /HTTP 500: .*model is loading/.test(e.message));
      server.mode = 'hang';
      await assert.rejects(new OpenAIEmbeddings({ url: server.url, model: 'm', timeoutMs: 300, fetch }).embed(['x']), /no answer within 300 ms/);
      server.mode = 'huge';
      await assert.rejects(client.embed(['x']), /over the 1000000-byte limit/);
      // A key the service quotes back is masked whatever its length (one under 8 characters was shown).
      server.mode = 'quote-key';
      await assert.rejects(
        new OpenAIEmbeddings({ url: server.url, model: 'm', apiKey: 'k3Y9z', fetch }).embed(['x']),
        (e: Error) => e instanceof EmbeddingError && /HTTP 401: .*invalid key: Bearer \*\*\*/.test(e.message) && !e.message.includes('k3Y9z'),
      );
      server.mode = 'ok';
      assert.equal((await client.embed(['dog', 'rain']))[1]!.length, DIMS);
    } finally {
      await fetcher.close();
      await server.close();
    }
  });

  test('a query\'s embedding cut by the search\'s bound is told as that bound, not as the client\'s 10 s', async () => {
    const server = await startEmbeddingsServer();
    const fetcher = new GuardedFetcher({ maxBytes: 1024, operatorEndpoints: [{ purpose: 'embeddings', url: embeddingsEndpoint(server.url) }] });
    const client = new OpenAIEmbeddings({ url: server.url, model: 'm', timeoutMs: 10_000, maxResponseBytes: 1_000_000, fetch: fetcher.fetchFunction.bind(fetcher) });
    const warned: string[] = [];
    const index = new HybridSearchIndex(createSearchIndex(), client, { queryTimeoutMs: 300, warn: (message) => warned.push(message) });
    try {
      index.upsert({ id: 'a', owner: 'alice', listSeq: 1, description: describeAgentCard(card('Paws', 'https://paws.example.org/a2a', 'Finds a dog walker.', 'Walk dogs'), '1.0') });
      await index.whenIdle();
      assert.equal(index.stats.embeddedEntries, 1);
      server.mode = 'hang';
      const page = await index.search({ text: 'dog walker', offset: 0, limit: 10 });
      assert.equal(page.hits.length, 1, 'ranked by keywords alone');
      // It was told "no answer within 10000 ms", the client's own timeout, which had not passed.
      assert.equal(warned.length, 1, warned.join('\n'));
      assert.match(warned[0]!, /^query embeddings failed; .*: no complete answer from .*: its caller's deadline passed after \d+ ms \(a search waits 300 ms for its query's embedding\)$/, warned[0]);
      assert.doesNotMatch(warned[0]!, /10000/);
    } finally {
      index.close();
      await fetcher.close();
      await server.close();
    }
  });

  test('the guard allows the operator\'s service for embeddings only, and nothing else on its address', async () => {
    const server = await startEmbeddingsServer();
    const allowed = new GuardedFetcher({ maxBytes: 1_000_000, operatorEndpoints: [{ purpose: 'embeddings', url: embeddingsEndpoint(server.url) }] });
    const plain = new GuardedFetcher({ maxBytes: 1_000_000 });
    try {
      const before = server.requests.length;
      // Without the allowance the loopback address is refused before anything is sent.
      const refused = new OpenAIEmbeddings({ url: server.url, model: 'm', fetch: plain.fetchFunction.bind(plain) });
      await assert.rejects(refused.embed(['dog']), (e: Error) => e instanceof EmbeddingError && /loopback/.test(e.message) && /REGISTRY_FETCH_ALLOW/.test(e.message));
      assert.equal(server.requests.length, before, 'nothing reached the service');
      // With it, the service answers.
      const client = new OpenAIEmbeddings({ url: server.url, model: 'm', fetch: allowed.fetchFunction.bind(allowed) });
      assert.equal((await client.embed(['dog']))[0]!.length, DIMS);
      assert.equal(server.requests.length, before + 1);
      // The allowance is for that purpose: the same fetcher refuses the address for anything else.
      await assert.rejects(allowed.getJson(`${server.url}/.well-known/agent-card.json`, { purpose: 'agent-card' }), (e: unknown) => e instanceof FetchError && e.reason === 'loopback');
      // ... and for that origin: another port on the same host is refused too.
      const otherPort = new URL(server.url);
      otherPort.port = String(Number(otherPort.port) === 65535 ? 65534 : Number(otherPort.port) + 1);
      const elsewhere = new OpenAIEmbeddings({ url: otherPort.href, model: 'm', fetch: allowed.fetchFunction.bind(allowed) });
      await assert.rejects(elsewhere.embed(['dog']), (e: Error) => e instanceof EmbeddingError && /loopback/.test(e.message));
    } finally {
      await allowed.close();
      await plain.close();
      await server.close();
    }
  });
});

/** Keys a log line (one JSON object) has twice: JSON.parse keeps the last, a log pipeline may keep either or refuse the line. */
function repeatedKeys(line: string): string[] {
  const keys = (parseTree(line)?.children ?? []).map((property) => String(property.children?.[0]?.value));
  return keys.filter((key, i) => keys.indexOf(key) !== i);
}

describe('the embeddings service in the log', () => {
  test('"hybrid ranking on" names it in a field of its own: it was a second "service" key beside the logger\'s', async () => {
    const lines: string[] = [];
    // Nothing is fetched until there is something to embed: the address needs no server.
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', REGISTRY_TOKENS: TOKENS_ENV, REGISTRY_DATA_DIR: tempDir(), REGISTRY_EMBEDDINGS_URL: 'http://127.0.0.1:9/v1' });
    const own = await startRegistry(config, createLogger('info', { write: (line: string) => lines.push(line) }));
    await own.close();
    const on = lines.find((line) => (JSON.parse(line) as { msg: string }).msg === 'hybrid ranking on');
    assert.ok(on, lines.join(''));
    assert.deepEqual(repeatedKeys(on), [], on);
    const entry = JSON.parse(on) as Record<string, string>;
    assert.equal(entry.service, 'a2a-registry');
    assert.equal(entry.embeddings, 'embeddings service http://127.0.0.1:9/v1/embeddings (model text-embedding-3-small)');
    assert.deepEqual(lines.filter((line) => repeatedKeys(line).length > 0), [], 'no line of start-up and shutdown repeats a key');
  });
});

describe('the embeddings service\'s secrets', () => {
  test('stay out of the log: a key in the URL\'s query is masked wherever the URL is shown, and the key it is sent too when it quotes it back', async () => {
    // Embeds the first entry's text; refuses everything else quoting the key it got, as some services do.
    const service = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const { input } = JSON.parse(body) as { input: string[] };
        if (input.every((text) => text.includes('Keeps secrets'))) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: input.map((text, index) => ({ index, embedding: embed(text) })) }));
        } else if (input.some((text) => text.includes('Tells everyone'))) {
          // The key quoted across the 200th UTF-16 unit, where the answer was cut before it was masked.
          res.writeHead(401, { 'content-type': 'text/plain' }).end(`${'🌤'.repeat(88)} bad key: ${req.headers.authorization}`);
        } else {
          // Cut at 200 UTF-16 units, this ended in half an emoji.
          res.writeHead(401, { 'content-type': 'text/plain' }).end(`x${'🌤'.repeat(250)}`);
        }
      });
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    const lines: string[] = [];
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      REGISTRY_TOKENS: TOKENS_ENV,
      REGISTRY_DATA_DIR: tempDir(),
      REGISTRY_EMBEDDINGS_URL: `http://127.0.0.1:${(service.address() as AddressInfo).port}/v1/embeddings?api-version=2024-02-01&api-key=QuerySecret77`,
      REGISTRY_EMBEDDINGS_KEY: 'HeaderSecret1234',
    });
    const own = await startRegistry(config, createLogger('info', { write: (line: string) => lines.push(line) }));
    try {
      await own.ready;
      const logged = (what: RegExp) => lines.some((line) => what.test((JSON.parse(line) as { msg: string }).msg));
      const client = await sdkClient(own.url, { token: TOKENS.alice });
      resultOf(await op(client, { register: { agentCard: card('Quiet', 'https://quiet.example.org/a2a', 'Keeps secrets.', 'Keep') } }));
      // Once an entry is embedded, searches ask the service for the query's embedding.
      await eventually(async () => resultOf(await op(client, { search: { query: 'secrets kept' } })).results.length > 0 && logged(/^query embeddings failed/), 'a query embedding refused');
      resultOf(await op(client, { register: { agentCard: card('Loud', 'https://loud.example.org/a2a', 'Tells everyone.', 'Tell') } }));
      await eventually(async () => logged(/^embedding \d+ entries failed/), 'an entry embedding refused');
      const on = lines.find((line) => (JSON.parse(line) as { msg: string }).msg === 'hybrid ranking on')!;
      assert.match(on, /\/v1\/embeddings\?api-version=\*\*\*&api-key=\*\*\* \(model /, 'the URL shown with its query values masked');
      assert.ok(logged(/answered HTTP 401: (\u{1f324}){88} bad key: Bearer \*\*\*$/u), 'the key the service quoted masked, whole');
      assert.ok(lines.some((line) => (JSON.parse(line) as { msg: string }).msg.endsWith(`answered HTTP 401: x${'🌤'.repeat(199)}…`)), 'the answer cut at 200 characters, between them');
      const leaked = lines.filter((line) => /QuerySecret77|HeaderSe/.test(line));
      assert.deepEqual(leaked, [], 'no line holds a secret');
    } finally {
      await own.close();
      service.closeAllConnections();
      await new Promise((resolve) => service.close(resolve));
    }
  });
});
