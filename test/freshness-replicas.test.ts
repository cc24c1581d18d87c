/**
 * Issue 16 with several replicas on one PostgreSQL database: each source is refreshed once per
 * interval, not once per replica — claims are atomic in the database, however the replicas'
 * rounds overlap — and what one replica's refresh finds (a new revision, a health change)
 * reaches the other's search results through the change log.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import pg from 'pg';
import type { Client } from '@a2a-js/sdk/client';
import { takeOutboundViolations } from './support/outbound-tripwire.js';
import { startOrigin, waitFor, type OriginServer } from './support/origin-server.js';
import { serveCard } from './support/freshness.js';
import { usePostgres } from './support/postgres.js';
import { v1Card } from './support/documents.js';
import { op, resultOf, sdkClient, type WireJson } from './support/client.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';

let origin: OriginServer;
const running: TestRegistry[] = [];
const postgres = usePostgres({
  async setUp() {
    origin = await startOrigin();
  },
  async tearDown() {
    await Promise.all(running.map((r) => r.close().catch(() => undefined)));
    await origin?.close();
  },
});
afterEach(() => assert.deepEqual(takeOutboundViolations(), [], 'a connection left for a non-loopback address'));

async function replicas(databaseUrl: string, env: Record<string, string>): Promise<[TestRegistry, TestRegistry]> {
  const common = { DATABASE_URL: databaseUrl, REGISTRY_FETCH_ALLOW: '127.0.0.1', REGISTRY_PAGE_TOKEN_SECRET: 'replicas-share-this-secret-0123', ...env };
  const a = await startTestRegistry(common);
  running.push(a);
  const b = await startTestRegistry(common);
  running.push(b);
  return [a, b];
}

async function sql(databaseUrl: string, text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

const cardPath = (base: string) => `${base}/.well-known/agent-card.json`;

describe('several replicas on PostgreSQL', () => {
  test('overlapping rounds on two replicas: every due source fetched exactly once', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const url = await postgres.server.createDatabase('fresh_claims');
    const [a, b] = await replicas(url, { REGISTRY_REFRESH_SECONDS: '3600' });
    const alice = await sdkClient(a.url, { token: TOKENS.alice });
    const N = 30;
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      serveCard(origin, v1Card(`Replicated Agent ${i}`, `https://agents.example.org/replicated-${i}/a2a`), `/claims/${i}`);
      ids.push(resultOf(await op(alice, { register: { url: `${origin.url}/claims/${i}` } })).id);
    }
    for (let round = 1; round <= 2; round++) {
      await sql(url, `UPDATE entry_freshness SET next_check_at = now() - interval '1 second'`);
      const before = new Map(Array.from({ length: N }, (_, i) => [i, origin.hits.get(cardPath(`/claims/${i}`)) ?? 0]));
      // Both replicas, several rounds each, at the same moment.
      const counts = await Promise.all([a.refresher!.runOnce(), b.refresher!.runOnce()]);
      assert.equal(counts[0] + counts[1], N, `round ${round}: replicas checked ${counts.join(' + ')}`);
      for (let i = 0; i < N; i++) {
        assert.equal((origin.hits.get(cardPath(`/claims/${i}`)) ?? 0) - before.get(i)!, 1, `round ${round}: source ${i} fetched once`);
      }
    }
    const due = await sql(url, `SELECT count(*)::int AS n FROM entry_freshness WHERE next_check_at <= now() + interval '59 minutes'`);
    assert.equal(due.rows[0].n, 0, 'every source scheduled an interval ahead');
  });

  test('a refresh on one replica reaches the other: new revision and health in its search results', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const url = await postgres.server.createDatabase('fresh_follow');
    const [a, b] = await replicas(url, { REGISTRY_REFRESH_SECONDS: '3600' });
    const alice = await sdkClient(a.url, { token: TOKENS.alice });
    const readerB: Client = await sdkClient(b.url);
    const card = v1Card('Platypus Broker', 'https://agents.example.org/platypus/a2a');
    serveCard(origin, card, '/follow');
    const { id } = resultOf(await op(alice, { register: { url: `${origin.url}/follow` } }));

    serveCard(origin, { ...card, skills: [...card.skills, { id: 'hedge', name: 'Hedge platypus futures', description: 'Hedges', tags: ['hedging'] }] }, '/follow');
    await sql(url, `UPDATE entry_freshness SET next_check_at = now() - interval '1 second'`);
    await a.refresher!.runOnce();
    await waitFor(async () => resultOf(await op(readerB, { search: { query: 'hedge platypus' } })).results.some((h: WireJson) => h.match.id === 'hedge'), 'replica B to find the refreshed skill');
    assert.equal(resultOf(await op(readerB, { get: { id } })).revisionOrigin, 'refresh');

    origin.route(cardPath('/follow'), (_req, res) => void res.writeHead(503).end());
    await sql(url, `UPDATE entry_freshness SET next_check_at = now() - interval '1 second'`);
    await a.refresher!.runOnce();
    await waitFor(
      async () => resultOf(await op(readerB, { search: { query: 'platypus broker', filter: { health: 'unreachable' } } })).results.some((h: WireJson) => h.id === id),
      'replica B to see the entry unreachable',
    );
    const okOnB = resultOf(await op(readerB, { search: { query: 'platypus broker', filter: { health: 'ok' } } })).results;
    assert.ok(!okOnB.some((h: WireJson) => h.id === id));
  });

  test('the loops on their own: each source refreshed about once per interval, not once per replica', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const url = await postgres.server.createDatabase('fresh_loops');
    const INTERVAL_S = 2;
    const [a] = await replicas(url, { REGISTRY_REFRESH_SECONDS: String(INTERVAL_S) });
    const alice = await sdkClient(a.url, { token: TOKENS.alice });
    const N = 8;
    /** Per source: fetches counted at registration, and when it was registered. */
    const start = new Map<number, { hits: number; at: number }>();
    for (let i = 0; i < N; i++) {
      serveCard(origin, v1Card(`Looping Agent ${i}`, `https://agents.example.org/looping-${i}/a2a`), `/loops/${i}`);
      await op(alice, { register: { url: `${origin.url}/loops/${i}` } });
      start.set(i, { hits: origin.hits.get(cardPath(`/loops/${i}`)) ?? 0, at: performance.now() });
    }
    const refreshes = (i: number) => (origin.hits.get(cardPath(`/loops/${i}`)) ?? 0) - start.get(i)!.hits;
    // Every source refreshed at least twice by the pair of replicas...
    await waitFor(() => [...start.keys()].every((i) => refreshes(i) >= 2), 'two refreshes of every source', 30_000);
    // ...and none more often than the interval allows: a refresh is due an interval after the
    // previous one, so at most floor(elapsed / interval) (+1 for a check in flight); two replicas
    // each refreshing would double it.
    for (const [i, { at }] of start) {
      const elapsedS = (performance.now() - at) / 1000;
      assert.ok(refreshes(i) <= Math.floor(elapsedS / INTERVAL_S) + 1, `source ${i}: ${refreshes(i)} refreshes in ${elapsedS.toFixed(1)} s`);
    }
  });
});
