/**
 * Push notification config operations on a task, over JSON-RPC, HTTP+JSON and gRPC, end to end
 * over real HTTP and a real gRPC connection: deleting a config the task does not have is
 * TaskNotFound (A2A 3.1.8's error for a push config that does not exist), not success.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { WireJson } from './support/client.js';
import { dataPart } from './support/client.js';
import { RawA2AClient, metadata } from './support/grpc.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';

let registry: TestRegistry;
let raw: RawA2AClient;

const alice = { authorization: `Bearer ${TOKENS.alice}` };
/** A webhook address the outbound guard accepts (REGISTRY_FETCH_ALLOW); nothing is sent to it here. */
const HOOK = 'http://127.0.0.1:9/hook';
const TASK_NOT_FOUND = -32001;

async function rpc(method: string, params: unknown): Promise<WireJson> {
  const res = await fetch(`${registry.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...alice },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as WireJson;
}

async function rest(method: string, path: string): Promise<{ status: number; body: WireJson | undefined }> {
  const res = await fetch(`${registry.url}/a2a/rest${path}`, { method, headers: { 'A2A-Version': '1.0', ...alice } });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as WireJson) : undefined };
}

/** A new finished task of alice's with push configs of these ids. */
async function taskWithConfigs(ids: string[]): Promise<string> {
  const sent = await rpc('SendMessage', { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [dataPart({ list: {} })] } });
  const taskId: string = sent.result.task.id;
  // Created out of id order: pages come in id order whatever the order of creation.
  for (const id of [...ids].reverse()) {
    const created = await rpc('CreateTaskPushNotificationConfig', { taskId, id, url: `${HOOK}/${id}` });
    assert.equal(created.result?.id, id, JSON.stringify(created));
  }
  return taskId;
}

const idsOf = (result: WireJson): string[] => (result.configs ?? []).map((c: WireJson) => c.id);

before(async () => {
  registry = await startTestRegistry({ GRPC_PORT: '0', REGISTRY_FETCH_ALLOW: '127.0.0.1' });
  raw = new RawA2AClient(`127.0.0.1:${registry.grpcUrl!.split(':').at(-1)}`);
});
after(async () => {
  raw.close();
  await registry.close();
});

describe('DeleteTaskPushNotificationConfig', () => {
  test('JSON-RPC: deleting a config the task does not have is TaskNotFound; deleting one that is there works once', async () => {
    const taskId = await taskWithConfigs(['a', 'b']);
    const unknown = await rpc('DeleteTaskPushNotificationConfig', { taskId, id: 'nope' });
    assert.equal(unknown.error?.code, TASK_NOT_FOUND, JSON.stringify(unknown));
    assert.match(unknown.error.message, /nope/);
    assert.equal((await rpc('DeleteTaskPushNotificationConfig', { taskId, id: 'a' })).result, null);
    assert.equal((await rpc('DeleteTaskPushNotificationConfig', { taskId, id: 'a' })).error?.code, TASK_NOT_FOUND, 'a second delete finds nothing');
    assert.deepEqual(idsOf((await rpc('ListTaskPushNotificationConfigs', { taskId })).result), ['b']);
    assert.equal((await rpc('DeleteTaskPushNotificationConfig', { taskId: 'no-such-task', id: 'a' })).error?.code, TASK_NOT_FOUND);
  });

  test('HTTP+JSON: DELETE of an unknown config is 404, of a known one 204', async () => {
    const taskId = await taskWithConfigs(['a', 'b']);
    const unknown = await rest('DELETE', `/tasks/${taskId}/pushNotificationConfigs/nope`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body!.error.status, 'NOT_FOUND');
    assert.equal(unknown.body!.error.details[0].reason, 'TASK_NOT_FOUND');
    assert.equal((await rest('DELETE', `/tasks/${taskId}/pushNotificationConfigs/a`)).status, 204);
    assert.equal((await rest('DELETE', `/tasks/${taskId}/pushNotificationConfigs/a`)).status, 404);
    assert.deepEqual(idsOf((await rest('GET', `/tasks/${taskId}/pushNotificationConfigs`)).body!), ['b']);
  });

  test('gRPC: deleting an unknown config is NOT_FOUND', async () => {
    const taskId = await taskWithConfigs(['a']);
    const answer = await raw.unary('deleteTaskPushNotificationConfig', { tenant: '', taskId, id: 'nope' }, metadata(alice));
    assert.equal(answer.error?.code, grpc.status.NOT_FOUND, answer.error?.message ?? 'no error');
  });
});
