/**
 * Standing searches across replicas (issue 19): two registries on one PostgreSQL database; a
 * watch opened on one sees registrations, new revisions and unregistrations made on the other
 * (they reach it through the change log the IndexFollower follows), within a second or two.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { op, resultOf, sdkClient, type WireJson } from './support/client.js';
import { v1Card } from './support/documents.js';
import { startPostgres, type TestPostgres } from './support/postgres.js';
import { removeTempDir, startTestRegistry, TOKENS, type TestRegistry } from './support/registry.js';
import { watch } from './support/watch-stream.js';

let pg: TestPostgres | undefined;
let skipReason: string | undefined;
const replicas: TestRegistry[] = [];

before(async () => {
  const started = await startPostgres();
  if (!started.ok) {
    skipReason = started.skipReason;
    return;
  }
  pg = started.pg;
  const databaseUrl = await pg.createDatabase('watch_replicas');
  for (let i = 0; i < 2; i++) replicas.push(await startTestRegistry({ DATABASE_URL: databaseUrl, REGISTRY_PAGE_TOKEN_SECRET: 'watch-replicas-secret-0123456789' }));
});
after(async () => {
  for (const r of replicas) {
    await r.close();
    removeTempDir(r.dataDir);
  }
  await pg?.stop();
});

describe('watches across replicas (PostgreSQL)', () => {
  test('a watch on replica A gets added, updated and removed for writes made on replica B', async (t) => {
    if (skipReason) return t.skip(skipReason);
    const [a, b] = replicas as [TestRegistry, TestRegistry];
    const watcher = await sdkClient(a.url, { token: TOKENS.bob });
    const writer = await sdkClient(b.url, { token: TOKENS.alice });
    const log = watch(watcher, { filter: { tags: ['cross-replica'] } });
    try {
      await log.waitFor((e) => e.artifactUpdate?.artifact?.name === 'watch-results', 'initial results');
      const card = v1Card('Cross Replica Agent', 'https://cross.example.org/a2a') as WireJson;
      card.skills[0].tags = ['cross-replica'];
      let started = performance.now();
      const registered = resultOf(await op(writer, { register: { agentCard: card } }));
      const added = await log.waitForEvent((e) => e.event === 'added' && e.hit.id === registered.id, 'added from the other replica');
      const addedMs = performance.now() - started;
      assert.equal(added.hit.name, 'Cross Replica Agent');

      card.description = 'Now with a new revision.';
      await op(writer, { register: { agentCard: card } });
      await log.waitForEvent((e) => e.event === 'updated' && e.hit.id === registered.id, 'updated from the other replica');

      started = performance.now();
      await op(writer, { unregister: { id: registered.id } });
      await log.waitForEvent((e) => e.event === 'removed' && e.hit.id === registered.id, 'removed from the other replica');
      const removedMs = performance.now() - started;
      t.diagnostic(`added after ${Math.round(addedMs)} ms, removed after ${Math.round(removedMs)} ms`);
      assert.ok(addedMs < 2000 && removedMs < 2000, `events within 2 s (added ${addedMs} ms, removed ${removedMs} ms)`);
    } finally {
      log.disconnect();
    }
  });
});
