/**
 * Scale-out over gRPC: two registries on one PostgreSQL each serve the gRPC binding and list
 * their own address in their card. An entry registered over one replica's gRPC is found over
 * the other's, and the task of a registration made on one is read on the other (accepted writes'
 * tasks are durable, in the shared database).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { v1Card } from './support/documents.js';
import { dataPart, op, resultOf, sdkClient, type WireJson } from './support/client.js';
import { RawA2AClient, errorInfoOf, metadata, retryInfoOf, sendRequest } from './support/grpc.js';
import { metricValue, waitFor } from './support/metrics.js';
import { usePostgres } from './support/postgres.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';

const replicas: TestRegistry[] = [];
/** The address a replica's gRPC server listens on. */
const grpcAddress = (r: TestRegistry) => `127.0.0.1:${r.grpcUrl!.split(':').at(-1)}`;
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

test('a gRPC stream of a watch handed over to another replica ends UNAVAILABLE WATCH_MOVED with a retry, to be resumed there (it ended OK, as if complete)', async (t) => {
  if (postgres.skipReason) return t.skip(postgres.skipReason);
  const [a, b] = replicas as [TestRegistry, TestRegistry];
  const [onA, onB] = [new RawA2AClient(grpcAddress(a)), new RawA2AClient(grpcAddress(b))];
  const alice = () => metadata({ authorization: `Bearer ${TOKENS.alice}` });
  // A's storage read as a handover stores the watch's position (WatchHub.#handOver, told by the
  // stack: the progress flush reads it every second too), held once armed: a stream attaches on A meanwhile.
  const storage = (a.core.watches as unknown as { storage: { lastChangeSeq(): Promise<number> } }).storage;
  const lastChangeSeq = storage.lastChangeSeq.bind(storage);
  let hold: Promise<void> | undefined;
  let held = false;
  let release = () => {};
  storage.lastChangeSeq = async () => {
    if (hold && /handOver/.test(new Error().stack ?? '')) {
      held = true;
      await hold;
    }
    return lastChangeSeq();
  };
  try {
    // A watch on A whose own stream is gone: it runs on there, with no client.
    const started = onA.stream('sendStreamingMessage', sendRequest([dataPart({ watch: { query: 'grpchandover', initial: false } })]), alice());
    await waitFor(async () => started.events.length > 0);
    const id = started.events[0]!.task.id as string;
    started.call.cancel();
    await waitFor(async () => a.core.watches.get(id)?.hasClients === false);
    hold = new Promise<void>((resolve) => (release = resolve));
    // A client resumes it on B: B asks A for it, and A, with no client, hands it over...
    const onBStream = onB.stream('subscribeToTask', { tenant: '', id }, alice());
    await waitFor(async () => held);
    // ...while a client resumes it on A too, before A lets it go.
    const onAStream = onA.stream('subscribeToTask', { tenant: '', id }, alice());
    await waitFor(async () => onAStream.events.length > 0);
    hold = undefined;
    release();
    const ended = await onAStream;
    assert.equal(ended.error?.code, grpc.status.UNAVAILABLE, JSON.stringify(ended.error?.details));
    assert.match(ended.error!.details, /^The watch moved to another replica, .*: resume it with SubscribeToTask/);
    assert.deepEqual([errorInfoOf(ended.error!)?.reason, retryInfoOf(ended.error!)], ['WATCH_MOVED', 1]);
    await waitFor(async () => b.core.watches.get(id) !== undefined);
    onBStream.call.cancel();
    await onBStream;
    assert.equal(await metricValue(a.url, 'registry_requests_total', 'method="/lf.a2a.v1.A2AService/SubscribeToTask",operation="none",outcome="ERROR",code="WATCH_MOVED",door="grpc"'), 1);
    await onB.unary('cancelTask', { tenant: '', id, metadata: undefined }, alice());
  } finally {
    release();
    storage.lastChangeSeq = lastChangeSeq;
    onA.close();
    onB.close();
  }
});
