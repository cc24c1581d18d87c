/**
 * Scale-out over gRPC: two registries on one PostgreSQL each serve the gRPC binding and list
 * their own address in their card. An entry registered over one replica's gRPC is found over
 * the other's, and the task of a registration made on one is read on the other (accepted writes'
 * tasks are durable, in the shared database).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { v1Card } from './support/documents.js';
import { op, resultOf, sdkClient, type WireJson } from './support/client.js';
import { waitFor } from './support/metrics.js';
import { usePostgres } from './support/postgres.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';

const replicas: TestRegistry[] = [];
const postgres = usePostgres({
  async setUp(server) {
    const databaseUrl = await server.createDatabase('grpc_replicas');
    // One after the other: the first creates the schema.
    for (let i = 0; i < 2; i++) {
      replicas.push(await startTestRegistry({ GRPC_PORT: '0', DATABASE_URL: databaseUrl, REGISTRY_PAGE_TOKEN_SECRET: 'replicas-share-this-secret-0123' }));
    }
  },
  async tearDown() {
    await Promise.all(replicas.map((r) => r.close()));
    for (const r of replicas) fs.rmSync(r.dataDir, { recursive: true, force: true });
  },
});

test('two replicas on one PostgreSQL each serve gRPC; a registration over one is found over the other', async (t) => {
  if (postgres.skipReason) return t.skip(postgres.skipReason);
  const [a, b] = replicas as [TestRegistry, TestRegistry];
  assert.notEqual(a.grpcUrl, b.grpcUrl);
  const [onA, onB]: Client[] = await Promise.all([
    sdkClient(a.url, { binding: 'GRPC', token: TOKENS.alice }),
    sdkClient(b.url, { binding: 'GRPC', token: TOKENS.alice }),
  ]);
  assert.equal(onA.transport.protocolName, 'GRPC');
  assert.equal(onB.transport.protocolName, 'GRPC');

  const registering = await op(onA, { register: { agentCard: v1Card('Replicated Hydrology Agent', 'https://hydrology.example.org/a2a') } });
  const registered = resultOf(registering);
  await waitFor(async () => resultOf(await op(onB, { search: { query: 'hydrology' } })).results.some((h: WireJson) => h.id === registered.id));
  assert.equal(resultOf(await op(onB, { get: { id: registered.id } })).owner, 'alice');

  // An accepted write's task is durable, in the database: made over A's gRPC, it is read over B's.
  const fetched = Task.toJSON(await onB.getTask({ tenant: '', id: registering.id, historyLength: undefined })) as WireJson;
  assert.deepEqual(fetched.artifacts, registering.artifacts);

  assert.equal(resultOf(await op(onB, { unregister: { id: registered.id } })).deleted, true);
  await waitFor(async () => !resultOf(await op(onA, { search: { query: 'hydrology' } })).results.some((h: WireJson) => h.id === registered.id));
});
