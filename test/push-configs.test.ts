/**
 * Push notification config operations on a task, over JSON-RPC, HTTP+JSON and gRPC, end to end
 * over real HTTP and a real gRPC connection: ListTaskPushNotificationConfigs pages as ListTasks
 * does (pageSize honoured, a nextPageToken that is accepted back), and deleting a config the
 * task does not have is TaskNotFound (A2A 3.1.8's error for a push config that does not exist),
 * not success; v0.3's get by task id alone (TaskIdParams) answers the task's config.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { WireJson } from './support/client.js';
import { dataPart } from './support/client.js';
import { RawA2AClient, errorInfoOf, metadata, sendRequest } from './support/grpc.js';
import { eventually } from './support/eventually.js';
import { webhook } from './support/watch-stream.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';
import { SendMessageConfiguration, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { ClientFactory as ClientFactory03, ClientFactoryOptions as ClientFactoryOptions03, JsonRpcTransportFactory as JsonRpcTransportFactory03 } from 'a2a-sdk-03/client';
import { authFetch } from './support/client.js';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { LegacyA2AService } from '@a2a-js/sdk/compat/v0_3/server/grpc';
import { AllowList, GuardedFetcher } from '../src/net/index.js';
import { PushConfigs } from '../src/protocol/watch-push.js';
import { loadConfig } from '../src/config/config.js';

let registry: TestRegistry;
let raw: RawA2AClient;

const alice = { authorization: `Bearer ${TOKENS.alice}` };
/** A webhook address the outbound guard accepts (REGISTRY_FETCH_ALLOW); nothing is sent to it here. */
const HOOK = 'http://127.0.0.1:8/hook';
/** A public address (no request is sent to it: configs are only checked here). */
const PUBLIC_HTTP_HOOK = 'http://93.184.215.14/hook';
const TASK_NOT_FOUND = -32001;
const INVALID_PARAMS = -32602;

interface RpcOptions {
  /** A v0.3 request: without the A2A-Version header. */
  legacy?: boolean;
  /** The caller's headers (default alice's token; {} for none). */
  as?: Record<string, string>;
  id?: number;
  signal?: AbortSignal;
}

/** A JSON-RPC request to the registry, its answer as it came (a stream's too). */
function postRpc(method: string, params: unknown, { legacy = false, as = alice, id = 1, signal }: RpcOptions = {}): Promise<Response> {
  return fetch(`${registry.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(legacy ? {} : { 'A2A-Version': '1.0' }), ...as },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    signal,
  });
}

/** A v1.0 JSON-RPC call as alice, its answer parsed. */
async function rpc(method: string, params: unknown): Promise<WireJson> {
  return (await (await postRpc(method, params)).json()) as WireJson;
}

/** A v0.3 JSON-RPC call (no A2A-Version header), as alice. */
async function rpc03(method: string, params: unknown): Promise<WireJson> {
  return (await (await postRpc(method, params, { legacy: true })).json()) as WireJson;
}

async function rest(method: string, path: string): Promise<{ status: number; body: WireJson | undefined; contentType: string | null }> {
  const res = await fetch(`${registry.url}/a2a/rest${path}`, { method, headers: { 'A2A-Version': '1.0', ...alice } });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as WireJson) : undefined, contentType: res.headers.get('content-type') };
}

/**
 * A new open watch of alice's (a standing search matching nothing, so nothing is pushed), its
 * stream left at once: the watch runs on, taking push configs (a finished task takes none).
 */
async function openWatch(): Promise<string> {
  const stream = new AbortController();
  const res = await postRpc(
    'SendStreamingMessage',
    { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [dataPart({ watch: { query: 'no-entry-matches-this-push-config-watch' } })] } },
    { signal: stream.signal },
  );
  const reader = res.body!.getReader();
  let text = '';
  while (!/^data: .*\n/m.test(text)) text += new TextDecoder().decode((await reader.read()).value);
  stream.abort();
  const first = JSON.parse(/^data: (.*)$/m.exec(text)![1]!) as WireJson;
  assert.equal(first.result?.task?.status?.state, 'TASK_STATE_WORKING', text.slice(0, 300));
  return first.result.task.id;
}

/** A new finished task of alice's (a list). */
async function finishedTask(): Promise<string> {
  const sent = await rpc('SendMessage', { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [dataPart({ list: {} })] } });
  return sent.result.task.id;
}

/** A new open watch of alice's with push configs of these ids. */
async function taskWithConfigs(ids: string[]): Promise<string> {
  const taskId = await openWatch();
  // Created out of id order: pages come in id order whatever the order of creation.
  for (const id of [...ids].reverse()) {
    const created = await rpc('CreateTaskPushNotificationConfig', { taskId, id, url: `${HOOK}/${id}` });
    assert.equal(created.result?.id, id, JSON.stringify(created));
  }
  return taskId;
}

const idsOf = (result: WireJson): string[] => (result.configs ?? []).map((c: WireJson) => c.id);

before(async () => {
  // Most tests configure an open watch of their own: more than the 10 a principal keeps by default.
  registry = await startTestRegistry({ GRPC_PORT: '0', REGISTRY_FETCH_ALLOW: '127.0.0.1', REGISTRY_MAX_WATCHES: '100' });
  raw = new RawA2AClient(`127.0.0.1:${registry.grpcUrl!.split(':').at(-1)}`);
});
after(async () => {
  raw.close();
  await registry.close();
});

describe('ListTaskPushNotificationConfigs', () => {
  test('JSON-RPC: pageSize is honoured, with a nextPageToken that is accepted back', async () => {
    const taskId = await taskWithConfigs(['a', 'b', 'c']);
    const first = (await rpc('ListTaskPushNotificationConfigs', { taskId, pageSize: 2 })).result;
    assert.deepEqual(idsOf(first), ['a', 'b']);
    assert.ok(first.nextPageToken, 'a token for the rest');
    const second = (await rpc('ListTaskPushNotificationConfigs', { taskId, pageSize: 2, pageToken: first.nextPageToken })).result;
    assert.deepEqual(idsOf(second), ['c']);
    assert.equal(second.nextPageToken ?? '', '', 'the last page has no token');
    // Without a page size: every config, no token.
    const all = (await rpc('ListTaskPushNotificationConfigs', { taskId })).result;
    assert.deepEqual(idsOf(all), ['a', 'b', 'c']);
    assert.equal(all.nextPageToken ?? '', '');
    // A token survives a change between pages: the config it stopped at deleted, one added after it.
    const one = (await rpc('ListTaskPushNotificationConfigs', { taskId, pageSize: 1 })).result;
    assert.deepEqual(idsOf(one), ['a']);
    assert.deepEqual((await rpc('DeleteTaskPushNotificationConfig', { taskId, id: 'a' })).result, {});
    await rpc('CreateTaskPushNotificationConfig', { taskId, id: 'd', url: `${HOOK}/d` });
    assert.deepEqual(idsOf((await rpc('ListTaskPushNotificationConfigs', { taskId, pageToken: one.nextPageToken })).result), ['b', 'c', 'd']);

    // Refused: a token of another task or none at all, a page size out of bounds.
    const other = await taskWithConfigs(['x', 'y']);
    const refused = [
      await rpc('ListTaskPushNotificationConfigs', { taskId: other, pageSize: 1, pageToken: first.nextPageToken }),
      await rpc('ListTaskPushNotificationConfigs', { taskId, pageToken: 'not-a-token' }),
      await rpc('ListTaskPushNotificationConfigs', { taskId, pageSize: -1 }),
      await rpc('ListTaskPushNotificationConfigs', { taskId, pageSize: 101 }),
    ];
    for (const answer of refused) assert.equal(answer.error?.code, INVALID_PARAMS, JSON.stringify(answer));
    assert.match(refused[0]!.error.message, /pageToken/);
    assert.equal(refused[2]!.error.message, 'pageSize must be between 0 and 100');
  });

  test('HTTP+JSON: pageSize and pageToken in the query are honoured', async () => {
    const taskId = await taskWithConfigs(['a', 'b', 'c']);
    const first = await rest('GET', `/tasks/${taskId}/pushNotificationConfigs?pageSize=2`);
    assert.equal(first.status, 200);
    assert.deepEqual(idsOf(first.body!), ['a', 'b']);
    assert.ok(first.body!.nextPageToken);
    const second = await rest('GET', `/tasks/${taskId}/pushNotificationConfigs?pageSize=2&pageToken=${encodeURIComponent(first.body!.nextPageToken)}`);
    assert.equal(second.status, 200);
    assert.deepEqual(idsOf(second.body!), ['c']);
    assert.equal(second.body!.nextPageToken ?? '', '');
    const all = await rest('GET', `/tasks/${taskId}/pushNotificationConfigs`);
    assert.deepEqual(idsOf(all.body!), ['a', 'b', 'c']);
    // Refusals in the binding's shape; an unknown task is still 404.
    for (const query of ['pageSize=-1', 'pageSize=1.5', 'pageToken=not-a-token']) {
      const answer = await rest('GET', `/tasks/${taskId}/pushNotificationConfigs?${query}`);
      assert.equal(answer.status, 400, query);
      assert.equal(answer.body!.error.status, 'INVALID_ARGUMENT', query);
    }
    assert.equal((await rest('GET', '/tasks/no-such-task/pushNotificationConfigs?pageSize=1')).status, 404);
  });

  test('gRPC: page_size is honoured, with a next_page_token that is accepted back', async () => {
    const taskId = await taskWithConfigs(['a', 'b', 'c']);
    const md = metadata(alice);
    const first = await raw.unary('listTaskPushNotificationConfigs', { tenant: '', taskId, pageSize: 2, pageToken: '' }, md);
    const firstPage = first.value as { configs: WireJson[]; nextPageToken: string };
    assert.deepEqual(idsOf(firstPage), ['a', 'b']);
    assert.ok(firstPage.nextPageToken);
    const second = await raw.unary('listTaskPushNotificationConfigs', { tenant: '', taskId, pageSize: 2, pageToken: firstPage.nextPageToken }, md);
    assert.deepEqual(idsOf(second.value as WireJson), ['c']);
  });
});

describe('a push config for a task that is no running watch', () => {
  test('is refused on every binding as a message to a finished task is (UnsupportedOperationError): a watch that ended says no update will come, any other task, whatever its state, that it is no watch; none is kept', async () => {
    const completed = await finishedTask();
    const canceled = await openWatch();
    assert.equal((await rpc('CancelTask', { id: canceled })).result?.status?.state, 'TASK_STATE_CANCELED');
    const noWatch = (taskId: string, state: string) =>
      new RegExp(`^Task ${taskId} is not a watch \\(${state}\\): push notification configs are only for watches .*nothing is pushed for it, and the config is not kept\\. To be notified of matches, start a watch with this config`);
    for (const [taskId, state, legacyState, refusal] of [
      [completed, 'TASK_STATE_COMPLETED', 'completed', noWatch],
      [canceled, 'TASK_STATE_CANCELED', 'canceled', (taskId: string, state: string) => new RegExp(`^Task ${taskId} has ended \\(${state}\\): no update of it will come, so nothing would be pushed to this webhook.*start a new watch with this config`)],
    ] as const) {
      const ended = refusal(taskId, state);
      const jsonRpc = await rpc('CreateTaskPushNotificationConfig', { taskId, url: HOOK, token: 't' });
      assert.equal(jsonRpc.error?.code, -32004, JSON.stringify(jsonRpc));
      assert.match(jsonRpc.error.message, ended);
      assert.match(jsonRpc.error.message, /SendMessage with a \{"watch": \{\.\.\.\}\} data part and configuration\.taskPushNotificationConfig/);
      assert.equal(jsonRpc.error.data?.[0]?.reason, 'UNSUPPORTED_OPERATION');
      const res = await fetch(`${registry.url}/a2a/rest/tasks/${taskId}/pushNotificationConfigs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...alice },
        body: JSON.stringify({ url: HOOK, token: 't' }),
      });
      const restBody = (await res.json()) as WireJson;
      assert.equal(res.status, 400, JSON.stringify(restBody));
      assert.equal(restBody.error.status, 'FAILED_PRECONDITION');
      assert.match(restBody.error.message, ended);
      const legacyAnswer = await rpc03('tasks/pushNotificationConfig/set', { taskId, pushNotificationConfig: { url: HOOK, token: 't' } });
      assert.equal(legacyAnswer.error?.code, -32004, JSON.stringify(legacyAnswer));
      // The state as v0.3 names it (6.3), which is all a v0.3 client knows: it was told TASK_STATE_COMPLETED.
      assert.match(legacyAnswer.error.message, refusal(taskId, legacyState));
      // Said in v0.3's terms: its message/send carries the config as configuration.pushNotificationConfig.
      assert.match(legacyAnswer.error.message, /message\/send with a \{"watch": \{\.\.\.\}\} data part and configuration\.pushNotificationConfig\)/);
      const grpcAnswer = await raw.unary('createTaskPushNotificationConfig', TaskPushNotificationConfig.fromJSON({ taskId, url: HOOK, token: 't' }), metadata(alice));
      assert.equal(grpcAnswer.error?.code, grpc.status.FAILED_PRECONDITION, grpcAnswer.error?.message ?? 'no error');
      assert.match(grpcAnswer.error!.details, ended);
      assert.equal(errorInfoOf(grpcAnswer.error!)?.reason, 'UNSUPPORTED_OPERATION');
      assert.deepEqual(idsOf((await rpc('ListTaskPushNotificationConfigs', { taskId })).result), [], 'none was kept');
    }
    // A streamed search is answered on its stream, never pushed: refused by what it is, not by
    // its state, which is WORKING until the stream has been read (before, a config created then
    // was acknowledged and listed).
    const streamed = await postRpc('SendStreamingMessage', { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [dataPart({ search: { query: 'weather' } })] } });
    const search = (JSON.parse(/^data: (.*)$/m.exec(await streamed.text())![1]!) as WireJson).result.task.id as string;
    const searchAnswer = await rpc('CreateTaskPushNotificationConfig', { taskId: search, url: HOOK });
    assert.equal(searchAnswer.error?.code, -32004, JSON.stringify(searchAnswer));
    assert.match(searchAnswer.error.message, noWatch(search, 'TASK_STATE_COMPLETED'));
    assert.deepEqual(idsOf((await rpc('ListTaskPushNotificationConfigs', { taskId: search })).result), [], 'none was kept');
    // An unknown task is still TaskNotFound; an open watch takes a config.
    assert.equal((await rpc('CreateTaskPushNotificationConfig', { taskId: 'no-such-task', url: HOOK })).error?.code, TASK_NOT_FOUND);
    const open = await openWatch();
    assert.equal((await rpc('CreateTaskPushNotificationConfig', { taskId: open, id: 'kept', url: HOOK })).result?.id, 'kept');
  });
});

describe('the tenant of a push config', () => {
  test('is none, as the registry ignores tenants (its card declares none): one created under "acme" is answered, got and listed under no tenant, whatever tenant the request names, on every binding', async () => {
    const taskId = await taskWithConfigs([]);
    // Before, the config kept "acme" and was answered with it under every tenant, or none.
    // (JSON leaves an empty tenant out.)
    const created = await rpc('CreateTaskPushNotificationConfig', { tenant: 'acme', taskId, id: 'c', url: HOOK });
    assert.equal(created.result?.id, 'c', JSON.stringify(created));
    assert.equal(created.result.tenant, undefined);
    const jsonRpc = async (method: string, params: WireJson) => (await rpc(method, { taskId, ...params })).result;
    for (const tenant of [undefined, 'acme', 'other']) {
      assert.equal((await jsonRpc('GetTaskPushNotificationConfig', { tenant, id: 'c' })).tenant, undefined, `JSON-RPC get under ${tenant}`);
      assert.deepEqual((await jsonRpc('ListTaskPushNotificationConfigs', { tenant })).configs.map((c: WireJson) => c.tenant), [undefined], `JSON-RPC list under ${tenant}`);
    }
    for (const under of ['', '/acme']) {
      assert.equal((await rest('GET', `${under}/tasks/${taskId}/pushNotificationConfigs/c`)).body?.tenant, undefined, `HTTP+JSON get under ${under}`);
      assert.deepEqual((await rest('GET', `${under}/tasks/${taskId}/pushNotificationConfigs`)).body?.configs.map((c: WireJson) => c.tenant), [undefined]);
    }
    const restCreated = await fetch(`${registry.url}/a2a/rest/acme/tasks/${taskId}/pushNotificationConfigs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...alice },
      body: JSON.stringify({ id: 'r', url: HOOK }),
    });
    assert.equal(((await restCreated.json()) as WireJson).tenant, undefined, 'HTTP+JSON create under /acme');
    const md = metadata(alice);
    const grpcCreated = await raw.unary('createTaskPushNotificationConfig', TaskPushNotificationConfig.fromJSON({ tenant: 'acme', taskId, id: 'g', url: HOOK }), md);
    assert.equal((grpcCreated.value as WireJson).tenant, '', grpcCreated.error?.message);
    assert.equal(((await raw.unary('getTaskPushNotificationConfig', { tenant: 'acme', taskId, id: 'c' }, md)).value as WireJson).tenant, '');
  });
});

describe('the configs of a watch that has ended', () => {
  test('are gone with it: a get says the task ended and its configs were removed (not TaskNotFound), a delete (cleanup) succeeds, on every binding', async () => {
    const taskId = await taskWithConfigs(['a', 'b', 'c', 'd']);
    assert.equal((await rpc('CancelTask', { id: taskId })).result?.status?.state, 'TASK_STATE_CANCELED');
    const removedIn = (state: string) => new RegExp(`^Task ${taskId} has ended \\(${state}\\): its push notification configs were removed when it ended.*Deleting them is not needed`);
    const removed = removedIn('TASK_STATE_CANCELED');
    // Get: before, -32001 "Push notification config not found for task ...", which v0.3 clients raise as an unknown task.
    const got = await rpc('GetTaskPushNotificationConfig', { taskId, id: 'a' });
    assert.equal(got.error?.code, -32004, JSON.stringify(got));
    assert.equal(got.error.data?.[0]?.reason, 'UNSUPPORTED_OPERATION');
    assert.match(got.error.message, removed);
    const restGot = await rest('GET', `/tasks/${taskId}/pushNotificationConfigs/a`);
    assert.equal(restGot.status, 400, JSON.stringify(restGot.body));
    assert.equal(restGot.body!.error.status, 'FAILED_PRECONDITION');
    assert.match(restGot.body!.error.message, removed);
    for (const params of [{ id: taskId }, { id: taskId, pushNotificationConfigId: 'a' }]) {
      const legacy = await rpc03('tasks/pushNotificationConfig/get', params);
      assert.equal(legacy.error?.code, -32004, JSON.stringify(legacy));
      assert.match(legacy.error.message, removedIn('canceled'));
    }
    const grpcGot = await raw.unary('getTaskPushNotificationConfig', { tenant: '', taskId, id: 'a' }, metadata(alice));
    assert.equal(grpcGot.error?.code, grpc.status.FAILED_PRECONDITION, grpcGot.error?.message ?? 'no error');
    assert.match(grpcGot.error!.details, removed);
    // Delete: the cleanup a client does once the watch has ended succeeds, on each binding.
    assert.deepEqual(await rpc('DeleteTaskPushNotificationConfig', { taskId, id: 'a' }), { jsonrpc: '2.0', id: 1, result: {} });
    const restDeleted = await rest('DELETE', `/tasks/${taskId}/pushNotificationConfigs/b`);
    assert.equal(restDeleted.status, 204);
    // No body, so no media type (the SDK labelled it application/a2a+json, whatever Accept asked).
    assert.equal(restDeleted.contentType, null);
    assert.equal((await rpc03('tasks/pushNotificationConfig/delete', { id: taskId, pushNotificationConfigId: 'c' })).result, null);
    const grpcDeleted = await raw.unary('deleteTaskPushNotificationConfig', { tenant: '', taskId, id: 'd' }, metadata(alice));
    assert.equal(grpcDeleted.error, undefined, grpcDeleted.error?.message);
    // Listed: none.
    assert.deepEqual((await rpc('ListTaskPushNotificationConfigs', { taskId })).result, { configs: [], nextPageToken: '' });
    // An unknown task is still TaskNotFound.
    assert.equal((await rpc('GetTaskPushNotificationConfig', { taskId: 'no-such-task', id: 'a' })).error?.code, TASK_NOT_FOUND);
    assert.equal((await rpc('DeleteTaskPushNotificationConfig', { taskId: 'no-such-task', id: 'a' })).error?.code, TASK_NOT_FOUND);
  });

  test('an empty list is {"configs": [], "nextPageToken": ""} on JSON-RPC and HTTP+JSON, as ListTasks answers, and [] on v0.3 (the SDK answered {})', async () => {
    const taskId = await taskWithConfigs([]);
    assert.deepEqual(await rpc('ListTaskPushNotificationConfigs', { taskId }), { jsonrpc: '2.0', id: 1, result: { configs: [], nextPageToken: '' } });
    assert.deepEqual((await rest('GET', `/tasks/${taskId}/pushNotificationConfigs`)).body, { configs: [], nextPageToken: '' });
    assert.deepEqual((await rpc03('tasks/pushNotificationConfig/list', { id: taskId })).result, []);
    // A last page keeps its configs, with an empty token.
    await rpc('CreateTaskPushNotificationConfig', { taskId, id: 'only', url: HOOK });
    const page = (await rpc('ListTaskPushNotificationConfigs', { taskId })).result;
    assert.deepEqual([idsOf(page), page.nextPageToken], [['only'], '']);
    assert.equal((await rest('GET', `/tasks/${taskId}/pushNotificationConfigs`)).body!.nextPageToken, '');
  });
});

describe('GetTaskPushNotificationConfig by task id alone', () => {
  test('v0.3: the @a2a-js/sdk 0.3 client gets the config it set without an id, by the task id (TaskIdParams)', async () => {
    const taskId = await taskWithConfigs([]);
    const client = await new ClientFactory03(
      ClientFactoryOptions03.createFrom(ClientFactoryOptions03.default, { transports: [new JsonRpcTransportFactory03({ fetchImpl: authFetch(TOKENS.alice) })] }),
    ).createFromUrl(registry.url);
    const set = await client.setTaskPushNotificationConfig({ taskId, pushNotificationConfig: { url: `${HOOK}/v03`, token: 'v03-token' } });
    // tasks/pushNotificationConfig/get with {"id": taskId}: "the push notification configuration for a task" (A2A 0.3 7.6).
    const got = await client.getTaskPushNotificationConfig({ id: taskId });
    assert.equal(got.taskId, taskId);
    assert.deepEqual(got.pushNotificationConfig, set.pushNotificationConfig);
    assert.equal(got.pushNotificationConfig.token, 'v03-token');
  });

  test('v0.3: a config set without an id gets the task id, as v0.3 servers give it; get, list and delete then find it by that id', async () => {
    const taskId = await taskWithConfigs([]);
    const client = await new ClientFactory03(
      ClientFactoryOptions03.createFrom(ClientFactoryOptions03.default, { transports: [new JsonRpcTransportFactory03({ fetchImpl: authFetch(TOKENS.alice) })] }),
    ).createFromUrl(registry.url);
    // Before, the id was a random UUID: a v0.3 client deleting "its" config by the task id was told it did not exist.
    const set = await client.setTaskPushNotificationConfig({ taskId, pushNotificationConfig: { url: `${HOOK}/first` } });
    assert.equal(set.pushNotificationConfig.id, taskId);
    const listed = await client.listTaskPushNotificationConfig({ id: taskId });
    assert.deepEqual(listed.map((c) => c.pushNotificationConfig.id), [taskId]);
    const got = await rpc03('tasks/pushNotificationConfig/get', { id: taskId, pushNotificationConfigId: taskId });
    assert.equal(got.result?.pushNotificationConfig?.url, `${HOOK}/first`, JSON.stringify(got));
    // Set again without an id: it replaces that config ("sets or updates", A2A 0.3 7.5), no second one.
    await client.setTaskPushNotificationConfig({ taskId, pushNotificationConfig: { url: `${HOOK}/second` } });
    const replaced = await client.listTaskPushNotificationConfig({ id: taskId });
    assert.deepEqual(replaced.map((c) => c.pushNotificationConfig.url), [`${HOOK}/second`]);
    await client.deleteTaskPushNotificationConfig({ id: taskId, pushNotificationConfigId: taskId });
    assert.deepEqual(await client.listTaskPushNotificationConfig({ id: taskId }), []);
    // A delete without pushNotificationConfigId is the config set without an id (not "config 'undefined' not found").
    await client.setTaskPushNotificationConfig({ taskId, pushNotificationConfig: { url: `${HOOK}/third` } });
    const named = await rpc03('tasks/pushNotificationConfig/set', { taskId, pushNotificationConfig: { id: 'named', url: `${HOOK}/named` } });
    assert.equal(named.result?.pushNotificationConfig?.id, 'named', JSON.stringify(named));
    assert.equal((await rpc03('tasks/pushNotificationConfig/delete', { id: taskId })).result, null);
    assert.deepEqual((await client.listTaskPushNotificationConfig({ id: taskId })).map((c) => c.pushNotificationConfig.id), ['named']);
    // v1.0 still gives a config without an id one of its own, and its delete must name the config.
    const v1 = await rpc('CreateTaskPushNotificationConfig', { taskId, url: `${HOOK}/v1` });
    assert.match(v1.result?.id ?? '', /^[0-9a-f-]{36}$/, JSON.stringify(v1));
    assert.notEqual(v1.result.id, taskId);
    const unnamed = await rpc('DeleteTaskPushNotificationConfig', { taskId });
    assert.equal(unnamed.error?.code, INVALID_PARAMS, JSON.stringify(unnamed));
    assert.match(unnamed.error.message, /^id is required/);
  });

  test('v0.3: the config whose id is the task id comes first (v0.3 servers give that id to a config set without one), else the first; none is TaskNotFound', async () => {
    const bare = await taskWithConfigs([]);
    const none = await rpc03('tasks/pushNotificationConfig/get', { id: bare });
    assert.equal(none.error?.code, TASK_NOT_FOUND, JSON.stringify(none));
    assert.match(none.error.message, /has none/);

    const taskId = await taskWithConfigs(['a-first', 'b-second']);
    const first = await rpc03('tasks/pushNotificationConfig/get', { id: taskId });
    assert.equal(first.result?.pushNotificationConfig?.id, 'a-first', JSON.stringify(first));
    assert.equal((await rpc('CreateTaskPushNotificationConfig', { taskId, id: taskId, url: `${HOOK}/own` })).result?.id, taskId);
    const own = await rpc03('tasks/pushNotificationConfig/get', { id: taskId });
    assert.equal(own.result?.pushNotificationConfig?.url, `${HOOK}/own`, JSON.stringify(own));
    // Named, it is that config, as before.
    const named = await rpc03('tasks/pushNotificationConfig/get', { id: taskId, pushNotificationConfigId: 'b-second' });
    assert.equal(named.result?.pushNotificationConfig?.id, 'b-second');
    // Another principal's task stays unknown.
    const res = await postRpc('tasks/pushNotificationConfig/get', { id: taskId }, { legacy: true, as: { authorization: `Bearer ${TOKENS.bob}` } });
    assert.equal(((await res.json()) as WireJson).error?.code, TASK_NOT_FOUND);
  });

  test('v0.3 gRPC: the task\'s name ("tasks/{id}", or a config name with no config id) gets and deletes the task\'s config, as JSON-RPC\'s {"id"} does (the SDK refused it INVALID_ARGUMENT "Invalid or missing config ID")', async () => {
    const legacy = new RawA2AClient(`127.0.0.1:${registry.grpcUrl!.split(':').at(-1)}`, undefined, LegacyA2AService);
    const md = () => metadata(alice, null);
    try {
      const bare = await taskWithConfigs([]);
      const none = await legacy.unary('getTaskPushNotificationConfig', { name: `tasks/${bare}` }, md());
      assert.equal(none.error?.code, grpc.status.NOT_FOUND, none.error?.details ?? 'no error');
      assert.equal(none.error!.details, (await rpc03('tasks/pushNotificationConfig/get', { id: bare })).error.message);
      assert.equal(errorInfoOf(none.error!)?.reason, 'TASK_NOT_FOUND');

      const taskId = await taskWithConfigs(['a-first', 'b-second']);
      const configOf = async (name: string) => ((await legacy.unary('getTaskPushNotificationConfig', { name }, md())).value as WireJson | undefined)?.pushNotificationConfig?.id;
      for (const name of [`tasks/${taskId}`, `tasks/${taskId}/pushNotificationConfigs/`]) assert.equal(await configOf(name), 'a-first', name);
      assert.equal((await rpc03('tasks/pushNotificationConfig/get', { id: taskId })).result?.pushNotificationConfig?.id, 'a-first');
      assert.equal(await configOf(`tasks/${taskId}/pushNotificationConfigs/b-second`), 'b-second');
      // The config set without an id has the task's id: got first, and deleted by the task's name.
      assert.equal((await rpc('CreateTaskPushNotificationConfig', { taskId, id: taskId, url: `${HOOK}/own` })).result?.id, taskId);
      assert.equal(await configOf(`tasks/${taskId}`), taskId);
      assert.equal((await legacy.unary('deleteTaskPushNotificationConfig', { name: `tasks/${taskId}` }, md())).error, undefined);
      assert.deepEqual(idsOf((await rpc('ListTaskPushNotificationConfigs', { taskId })).result), ['a-first', 'b-second']);
      const again = await legacy.unary('deleteTaskPushNotificationConfig', { name: `tasks/${taskId}/pushNotificationConfigs/` }, md());
      assert.equal(again.error?.code, grpc.status.NOT_FOUND, 'deleted once');
      // Another principal's task stays unknown.
      const bobs = await legacy.unary('getTaskPushNotificationConfig', { name: `tasks/${taskId}` }, metadata({ authorization: `Bearer ${TOKENS.bob}` }, null));
      assert.equal(bobs.error?.code, grpc.status.NOT_FOUND);
    } finally {
      legacy.close();
    }
  });

  test('v0.3 gRPC: CreateTaskPushNotificationConfig names the config by config_id (REQUIRED in v0.3 a2a.proto; the SDK dropped it, so a second config replaced the first under the task\'s id)', async () => {
    const legacy = new RawA2AClient(`127.0.0.1:${registry.grpcUrl!.split(':').at(-1)}`, undefined, LegacyA2AService);
    const create = (taskId: string, configId: string, innerId: string) =>
      legacy.unary(
        'createTaskPushNotificationConfig',
        // Every string field set: the raw client encodes an absent one as "undefined".
        { parent: `tasks/${taskId}`, configId, config: { name: '', pushNotificationConfig: { id: innerId, url: `${HOOK}/${configId || innerId}`, token: '' } } },
        metadata(alice, null),
      );
    try {
      const taskId = await taskWithConfigs([]);
      for (const configId of ['by-config-id-a', 'by-config-id-b']) {
        const created = await create(taskId, configId, '');
        assert.equal((created.value as WireJson | undefined)?.name, `tasks/${taskId}/pushNotificationConfigs/${configId}`, created.error?.details ?? '');
      }
      // Both in one: the same id is that config; none at all is still the task's own config.
      assert.equal(((await create(taskId, 'both-alike', 'both-alike')).value as WireJson | undefined)?.pushNotificationConfig?.id, 'both-alike');
      assert.equal(((await create(taskId, '', '')).value as WireJson | undefined)?.pushNotificationConfig?.id, taskId);
      assert.deepEqual(idsOf((await rpc('ListTaskPushNotificationConfigs', { taskId })).result), ['both-alike', 'by-config-id-a', 'by-config-id-b', taskId].sort());
      // Two ids naming two configs: refused naming config_id, nothing created.
      const conflicting = await create(taskId, 'outer-id', 'inner-id');
      assert.equal(conflicting.error?.code, grpc.status.INVALID_ARGUMENT, conflicting.error?.details ?? 'no error');
      assert.match(conflicting.error!.details, /^config_id "outer-id" and config\.push_notification_config\.id "inner-id" name two different configs/);
      assert.equal(errorInfoOf(conflicting.error!)?.metadata?.field, 'configId');
      assert.equal(idsOf((await rpc('ListTaskPushNotificationConfigs', { taskId })).result).length, 4);
    } finally {
      legacy.close();
    }
  });

  test('v1.0: a request without the config id is invalid params naming id, not "config \'\' not found"', async () => {
    const taskId = await taskWithConfigs(['c1']);
    const answer = await rpc('GetTaskPushNotificationConfig', { taskId });
    assert.equal(answer.error?.code, INVALID_PARAMS, JSON.stringify(answer));
    assert.match(answer.error.message, /^id is required/);
    assert.equal((await rpc('GetTaskPushNotificationConfig', { taskId, id: 'c1' })).result?.id, 'c1');
  });
});

describe('DeleteTaskPushNotificationConfig', () => {
  test('JSON-RPC: deleting a config the task does not have is TaskNotFound; deleting one that is there works once, answered {} (v1.0: google.protobuf.Empty in ProtoJSON), null on v0.3', async () => {
    const taskId = await taskWithConfigs(['a', 'b', 'c']);
    const unknown = await rpc('DeleteTaskPushNotificationConfig', { taskId, id: 'nope' });
    assert.equal(unknown.error?.code, TASK_NOT_FOUND, JSON.stringify(unknown));
    // It says how to learn the ids the task has (the SDK's message stopped at "not found").
    const notFound = `Push notification config with id 'nope' not found for task ${taskId}. ListTaskPushNotificationConfigs lists the ids of the task's configs.`;
    assert.equal(unknown.error.message, notFound);
    assert.equal((await rpc('GetTaskPushNotificationConfig', { taskId, id: 'nope' })).error?.message, notFound);
    assert.equal(
      (await rpc03('tasks/pushNotificationConfig/get', { id: taskId, pushNotificationConfigId: 'nope' })).error?.message,
      `Push notification config with id 'nope' not found for task ${taskId}. tasks/pushNotificationConfig/list lists the ids of the task's configs.`,
    );
    // The SDK answered "result": null, which a client reading Empty refused (a2a-dotnet threw).
    assert.deepEqual(await rpc('DeleteTaskPushNotificationConfig', { taskId, id: 'a' }), { jsonrpc: '2.0', id: 1, result: {} });
    // v0.3's schema has null (DeleteTaskPushNotificationConfigSuccessResponse).
    assert.deepEqual(await rpc03('tasks/pushNotificationConfig/delete', { id: taskId, pushNotificationConfigId: 'c' }), { jsonrpc: '2.0', id: 1, result: null });
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

describe('a config change that cannot be stored with its watch', () => {
  test('is not done: a create or delete answered as failed leaves the configs listed (and pushed to) as stored, so a restart brings back what was listed', async () => {
    const taskId = await taskWithConfigs(['a']);
    const records = registry.store.watches;
    const update = records.update;
    // Storage fails as the watch's configs are stored (a full disk, a database out of reach).
    records.update = async (id, change) => {
      if (id === taskId && change.pushConfigs !== undefined) throw new Error('disk I/O error');
      return update.call(records, id, change);
    };
    try {
      const created = await rpc('CreateTaskPushNotificationConfig', { taskId, id: 'b', url: `${HOOK}/b` });
      assert.ok(created.error, `the create is answered as failed: ${JSON.stringify(created)}`);
      const deleted = await rpc('DeleteTaskPushNotificationConfig', { taskId, id: 'a' });
      assert.ok(deleted.error, `the delete is answered as failed: ${JSON.stringify(deleted)}`);
    } finally {
      records.update = update;
    }
    // Before, "b" was listed and pushed to though its create failed, and "a" was gone (nothing
    // pushed to it) though its delete failed, until a restart brought it back and dropped "b".
    // (Listed as the watch's webhooks are pushed to: one list.)
    assert.deepEqual(idsOf((await rpc('ListTaskPushNotificationConfigs', { taskId })).result), ['a'], 'listed as before');
    assert.deepEqual(idsOf({ configs: JSON.parse((await records.get(taskId))!.pushConfigs) }), ['a'], 'stored as before');
    // Once storage works, both are done.
    assert.equal((await rpc('CreateTaskPushNotificationConfig', { taskId, id: 'b', url: `${HOOK}/b` })).result?.id, 'b');
    assert.deepEqual((await rpc('DeleteTaskPushNotificationConfig', { taskId, id: 'a' })).result, {});
    assert.deepEqual(idsOf({ configs: JSON.parse((await records.get(taskId))!.pushConfigs) }), ['b']);
    assert.deepEqual(idsOf((await rpc('ListTaskPushNotificationConfigs', { taskId })).result), ['b']);
  });

  test('two changes in flight together: each answered as failed is not done, each answered as done is, whichever order storage answers them in', async () => {
    const taskId = await taskWithConfigs(['a']);
    const records = registry.store.watches;
    const update = records.update;
    const stored = async () => idsOf({ configs: JSON.parse((await records.get(taskId))!.pushConfigs) });
    const listed = async () => idsOf((await rpc('ListTaskPushNotificationConfigs', { taskId })).result);
    // Storage fails the watch's configs `failing` times, each after a moment (both requests are in flight).
    let failing = 0;
    records.update = async (id, change) => {
      if (id === taskId && change.pushConfigs !== undefined && failing > 0) {
        failing--;
        await new Promise((resolve) => setTimeout(resolve, 50));
        throw new Error('disk I/O error');
      }
      return update.call(records, id, change);
    };
    try {
      // Both fail. Before, the second undid to a list holding the first: "b" was listed and pushed to.
      failing = 2;
      const both = await Promise.all(['b', 'c'].map((id) => rpc('CreateTaskPushNotificationConfig', { taskId, id, url: `${HOOK}/${id}` })));
      assert.ok(both.every((answer) => answer.error), `both are answered as failed: ${JSON.stringify(both)}`);
      assert.deepEqual([await listed(), await stored()], [['a'], ['a']]);
      // The first fails, the second is stored. Before, the first was kept, and stored with the second.
      failing = 1;
      const one = await Promise.all(['b', 'c'].map((id) => rpc('CreateTaskPushNotificationConfig', { taskId, id, url: `${HOOK}/${id}` })));
      const done = one.filter((answer) => answer.result).map((answer) => answer.result.id as string);
      assert.equal(done.length, 1, `one is answered as failed, one as done: ${JSON.stringify(one)}`);
      assert.deepEqual([await listed(), await stored()], [['a', ...done], ['a', ...done]]);
    } finally {
      records.update = update;
    }
  });
});

describe('a token or credentials that cannot travel as a header', () => {
  const unsendable: Array<[string, WireJson, RegExp, string]> = [
    ['a token with a line break', { token: 'abc\r\nX-Injected: 1' }, /token cannot be sent.*X-A2A-Notification-Token/, 'token'],
    ['a non-ASCII token', { token: 'tök€n' }, /token cannot be sent/, 'token'],
    ['a token with a trailing space', { token: 'abc ' }, /token cannot be sent/, 'token'],
    ['credentials with a line break', { authentication: { scheme: 'Bearer', credentials: 'x\ny' } }, /credentials cannot be sent.*Authorization/, 'authentication.credentials'],
    ['a scheme that is no HTTP scheme', { authentication: { scheme: 'Be arer', credentials: 'xy' } }, /not an HTTP authentication scheme/, 'authentication.scheme'],
    // scheme is REQUIRED (A2A 4.3.2): they were sent as Bearer, which the client never said.
    ['credentials without a scheme', { authentication: { credentials: 'xy' } }, /^authentication\.scheme is required with authentication\.credentials/, 'authentication.scheme'],
    ['a URL the outbound guard refuses', { url: 'http://192.168.1.20/hook' }, /push notification URL is refused/, 'url'],
    // A public address over plain http, which REGISTRY_FETCH_ALLOW (127.0.0.1) does not allow: nothing is sent to it.
    ['a token to a plain http webhook the operator did not allow', { url: PUBLIC_HTTP_HOOK, token: 'a-webhook-token' }, /plain http, and the config carries a token, .*unencrypted.*https URL/, 'url'],
    ['credentials to a plain http webhook the operator did not allow', { url: PUBLIC_HTTP_HOOK, authentication: { scheme: 'Bearer', credentials: 'xy' } }, /plain http, and the config carries authentication credentials/, 'url'],
  ];

  test('is refused when the config is given, on every binding, naming the field, rather than failing every delivery later', async () => {
    const taskId = await taskWithConfigs([]);
    for (const [what, fields, message, field] of unsendable) {
      const jsonRpc = await rpc('CreateTaskPushNotificationConfig', { taskId, url: HOOK, ...fields });
      assert.equal(jsonRpc.error?.code, INVALID_PARAMS, `${what}: ${JSON.stringify(jsonRpc)}`);
      assert.match(jsonRpc.error.message, message, what);
      assert.deepEqual(jsonRpc.error.data?.[0]?.metadata, { field }, `JSON-RPC ${what}`);
      const res = await fetch(`${registry.url}/a2a/rest/tasks/${taskId}/pushNotificationConfigs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...alice },
        body: JSON.stringify({ taskId, url: HOOK, ...fields }),
      });
      assert.equal(res.status, 400, what);
      const restBody = (await res.json()) as WireJson;
      assert.deepEqual(restBody.error.details?.[0]?.metadata, { field }, `HTTP+JSON ${what}: ${JSON.stringify(restBody)}`);
      const grpcAnswer = await raw.unary('createTaskPushNotificationConfig', TaskPushNotificationConfig.fromJSON({ taskId, url: HOOK, ...fields }), metadata(alice));
      assert.equal(grpcAnswer.error?.code, grpc.status.INVALID_ARGUMENT, what);
      assert.match(grpcAnswer.error!.details, message, what);
      assert.deepEqual(errorInfoOf(grpcAnswer.error!)?.metadata, { field }, `gRPC ${what}`);
    }
    // v0.3 names its schemes in a list, REQUIRED too.
    const legacy = await rpc03('tasks/pushNotificationConfig/set', { taskId, pushNotificationConfig: { url: HOOK, authentication: { schemes: [], credentials: 'xy' } } });
    assert.equal(legacy.error?.code, INVALID_PARAMS, JSON.stringify(legacy));
    assert.match(legacy.error.message, /^authentication\.scheme is required with authentication\.credentials \(v0\.3: authentication\.schemes\)/);
    assert.deepEqual(idsOf((await rpc('ListTaskPushNotificationConfigs', { taskId })).result), [], 'none was kept');
  });

  test('given with a watch, it refuses the watch: none starts only to end FAILED', async () => {
    const working = async () => ((await rpc('ListTasks', { status: 'TASK_STATE_WORKING' })).result.tasks as WireJson[]).map((t) => t.id);
    const before = await working();
    const answer = await rpc('SendMessage', {
      message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [dataPart({ watch: { query: 'unsendable' } })] },
      configuration: { taskPushNotificationConfig: { url: HOOK, token: 'line\nbreak' } },
    });
    assert.equal(answer.error?.code, INVALID_PARAMS, JSON.stringify(answer));
    assert.match(answer.error.message, /token cannot be sent/);
    assert.deepEqual(answer.error.data?.[0]?.metadata, { field: 'configuration.taskPushNotificationConfig.token' });
    const streamed = await raw.stream(
      'sendStreamingMessage',
      { ...sendRequest([dataPart({ watch: { query: 'unsendable' } })]), configuration: SendMessageConfiguration.fromJSON({ taskPushNotificationConfig: { url: 'http://192.168.1.20/hook' } }) },
      metadata(alice),
    );
    assert.equal(streamed.error?.code, grpc.status.INVALID_ARGUMENT, streamed.error?.message ?? 'no error');
    assert.deepEqual(errorInfoOf(streamed.error!)?.metadata, { field: 'configuration.taskPushNotificationConfig.url' });
    // The other tests' open watches only.
    assert.deepEqual(await working(), before, 'no watch started');
  });
});

describe('a request without the task or webhook it needs', () => {
  test('is invalid params naming the field (the SDK said "Task ID is required", naming none; a config without url was told "\\"\\" is not an absolute URL")', async () => {
    const taskId = await taskWithConfigs(['a']);
    for (const [method, params, field] of [
      ['GetTask', {}, 'id'],
      ['CancelTask', { id: ' ' }, 'id'],
      ['SubscribeToTask', {}, 'id'],
      ['CreateTaskPushNotificationConfig', { url: HOOK }, 'taskId'],
      ['GetTaskPushNotificationConfig', { id: 'a' }, 'taskId'],
      ['ListTaskPushNotificationConfigs', {}, 'taskId'],
      ['DeleteTaskPushNotificationConfig', { id: 'a' }, 'taskId'],
    ] as const) {
      const answer = await rpc(method, params);
      assert.equal(answer.error?.code, INVALID_PARAMS, `${method}: ${JSON.stringify(answer)}`);
      assert.equal(answer.error.message, `${field} is required: the id of the task (SendMessage answers with it; ListTasks lists them).`, method);
      assert.deepEqual(answer.error.data?.[0]?.metadata, { field }, method);
    }
    const noUrl = await rpc('CreateTaskPushNotificationConfig', { taskId });
    assert.match(noUrl.error?.message ?? JSON.stringify(noUrl), /^url is required: the absolute http\(s\) URL of the webhook/);
    assert.deepEqual(noUrl.error.data?.[0]?.metadata, { field: 'url' });
    const grpcAnswer = await raw.unary('getTask', { tenant: '', id: '' }, metadata(alice));
    assert.equal(grpcAnswer.error?.code, grpc.status.INVALID_ARGUMENT, grpcAnswer.error?.message ?? 'no error');
    assert.deepEqual(errorInfoOf(grpcAnswer.error!)?.metadata, { field: 'id' });
    // v0.3 names a push config's task "id".
    const legacyAnswer = await rpc03('tasks/pushNotificationConfig/list', {});
    // Pointed at v0.3's own method, not at SendMessage and ListTasks, which a v0.3 client does not have.
    assert.equal(legacyAnswer.error?.message, 'id is required: the id of the task (message/send answers with it).', JSON.stringify(legacyAnswer));
    // With the field, as on v1.0 (the SDK's v0.3 layer dropped the ErrorInfo: code and message only).
    assert.deepEqual(legacyAnswer.error.data?.[0]?.metadata, { field: 'id' }, JSON.stringify(legacyAnswer));
    const unknownTask = await postRpc('tasks/pushNotificationConfig/get', { id: crypto.randomUUID() }, { legacy: true, id: 2 });
    const notFound = ((await unknownTask.json()) as WireJson).error;
    assert.equal(notFound?.code, -32001, JSON.stringify(notFound));
    assert.equal(notFound.data?.[0]?.reason, 'TASK_NOT_FOUND');
  });
});

describe('an HTTP+JSON push config whose body names another task than its path', () => {
  test('is refused naming taskId (the SDK configured the path\'s task and dropped the body\'s without a word); the same task is accepted', async () => {
    const [pathTask, bodyTask] = [await taskWithConfigs([]), await taskWithConfigs([])];
    const post = (body: WireJson) =>
      fetch(`${registry.url}/a2a/rest/tasks/${pathTask}/pushNotificationConfigs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...alice },
        body: JSON.stringify(body),
      });
    const refused = await post({ taskId: bodyTask, url: HOOK });
    const answer = (await refused.json()) as WireJson;
    assert.equal(refused.status, 400, JSON.stringify(answer));
    assert.match(answer.error.message, new RegExp(`^taskId "${bodyTask}" in the body is not the task of the path \\("${pathTask}"\\): POST the config to /tasks/${bodyTask}/pushNotificationConfigs`));
    assert.deepEqual(answer.error.details?.[0]?.metadata, { field: 'taskId' });
    assert.deepEqual(idsOf((await rpc('ListTaskPushNotificationConfigs', { taskId: pathTask })).result), [], 'nothing was configured');
    assert.equal((await post({ taskId: pathTask, id: 'same', url: HOOK })).status, 201);
  });
});

describe('a push config whose string fields are numbers or booleans', () => {
  test('is invalid params naming the field on JSON-RPC (v1.0, v0.3) and HTTP+JSON: the SDK kept "token": 7 as "7" and "id": 5 as the config "5"', async () => {
    const taskId = await taskWithConfigs([]);
    const message = (field: string, value: unknown) => `${field} must be a string, not the ${typeof value} ${String(value)}: send it in quotes`;
    for (const [fields, field, value] of [
      [{ id: 5 }, 'id', 5],
      [{ token: 7 }, 'token', 7],
      [{ url: true }, 'url', true],
      [{ authentication: { scheme: 5, credentials: 'x' } }, 'authentication.scheme', 5],
    ] as const) {
      const jsonRpc = await rpc('CreateTaskPushNotificationConfig', { taskId, url: HOOK, ...fields });
      assert.equal(jsonRpc.error?.code, INVALID_PARAMS, `${field}: ${JSON.stringify(jsonRpc)}`);
      assert.equal(jsonRpc.error.message, message(field, value));
      const res = await fetch(`${registry.url}/a2a/rest/tasks/${taskId}/pushNotificationConfigs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...alice },
        body: JSON.stringify({ url: HOOK, ...fields }),
      });
      const body = (await res.json()) as WireJson;
      assert.equal(res.status, 400, `HTTP+JSON ${field}: ${JSON.stringify(body)}`);
      assert.equal(body.error.message, message(field, value));
    }
    const legacyAnswer = await rpc03('tasks/pushNotificationConfig/set', { taskId, pushNotificationConfig: { url: HOOK, token: 7 } });
    assert.equal(legacyAnswer.error?.code, INVALID_PARAMS, JSON.stringify(legacyAnswer));
    assert.equal(legacyAnswer.error.message, message('pushNotificationConfig.token', 7));
    assert.deepEqual(idsOf((await rpc('ListTaskPushNotificationConfigs', { taskId })).result), [], 'none was kept');
    // Given with a message, alike.
    const withMessage = await rpc('SendMessage', {
      message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [dataPart({ list: {} })] },
      configuration: { taskPushNotificationConfig: { url: HOOK, token: 7 } },
    });
    assert.equal(withMessage.error?.code, INVALID_PARAMS, JSON.stringify(withMessage));
    assert.equal(withMessage.error.message, message('configuration.taskPushNotificationConfig.token', 7));
  });
});

describe('the push config of a refused watch', () => {
  test('is not POSTed to: the refusal is in the response (before, each refused watch sent one request, past REGISTRY_MAX_WATCHES)', async () => {
    // Records every request it gets: none may come.
    const receiver = await webhook(() => 200);
    const hook = receiver.url;
    try {
      for (const method of ['SendMessage', 'SendStreamingMessage']) {
        const res = await postRpc(method, {
          message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [dataPart({ watch: { filter: { onwer: 'alice' } } })] },
          configuration: { taskPushNotificationConfig: { url: hook, token: 'push-token' } },
        });
        const answer = await res.text();
        assert.match(answer, /TASK_STATE_REJECTED/, `${method}: ${answer.slice(0, 300)}`);
        assert.match(answer, /onwer/, method);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.deepEqual(receiver.requests, [], 'nothing was POSTed');
    } finally {
      await receiver.close();
    }
  });
});

describe('the size of a config', () => {
  test('is bounded: a URL, token, credentials or id longer than accepted is refused naming the field and the limit; one at the limit is kept', async () => {
    // Configs are kept in memory: before, a 60 KB token and URL were kept, ten per task, on as
    // many finished tasks as a principal cared to create them on (hundreds of MB in minutes).
    const taskId = await taskWithConfigs([]);
    const tooLong: Array<[string, WireJson, RegExp]> = [
      ['url', { url: `${HOOK}/${'p'.repeat(2048)}` }, /config's url has 2\d{3} characters; at most 2048 are accepted/],
      ['token', { token: 't'.repeat(1025) }, /config's token has 1025 characters; at most 1024/],
      ['credentials', { authentication: { scheme: 'Bearer', credentials: 'c'.repeat(4097) } }, /authentication\.credentials has 4097 characters; at most 4096/],
      ['id', { id: 'i'.repeat(257) }, /config's id has 257 characters; at most 256/],
    ];
    for (const [what, fields, message] of tooLong) {
      const answer = await rpc('CreateTaskPushNotificationConfig', { taskId, url: HOOK, ...fields });
      assert.equal(answer.error?.code, INVALID_PARAMS, `${what}: ${JSON.stringify(answer).slice(0, 300)}`);
      assert.match(answer.error.message, message, what);
      assert.deepEqual(answer.error.data?.[0]?.metadata, { field: what === 'credentials' ? 'authentication.credentials' : what }, what);
    }
    assert.deepEqual(idsOf((await rpc('ListTaskPushNotificationConfigs', { taskId })).result), [], 'none was kept');
    const atLimit = await rpc('CreateTaskPushNotificationConfig', {
      taskId,
      id: 'i'.repeat(256),
      url: `${HOOK}/${'p'.repeat(2048 - HOOK.length - 1)}`,
      token: 't'.repeat(1024),
      authentication: { scheme: 'Bearer', credentials: 'c'.repeat(4096) },
    });
    assert.equal(atLimit.result?.id, 'i'.repeat(256), JSON.stringify(atLimit).slice(0, 300));
  });
});

describe('push configs in a message', () => {
  test('are only for a watch: with a search (streamed or not) or a registration the message is refused, and nothing is POSTed', async () => {
    const posts: string[] = [];
    const receiver = http.createServer((req, res) => {
      posts.push(`${req.method} ${req.url}`);
      req.resume();
      res.end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    try {
      const configuration = { taskPushNotificationConfig: { url: hook, token: 'push-token' } };
      const message = (data: unknown) => ({ messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [dataPart(data)] });
      for (const [method, data] of [
        ['SendMessage', { search: { query: 'weather' } }],
        ['SendStreamingMessage', { search: { query: 'weather' } }],
        ['SendMessage', { list: {} }],
      ] as const) {
        const answer = await rpc(method, { message: message(data), configuration });
        assert.equal(answer.error?.code, INVALID_PARAMS, `${method} ${JSON.stringify(data)}: ${JSON.stringify(answer).slice(0, 300)}`);
        assert.match(answer.error.message, /^configuration\.taskPushNotificationConfig is for a standing search/);
      }
      const res = await fetch(`${registry.url}/a2a/rest/message:send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...alice },
        body: JSON.stringify({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'weather' }] }, configuration }),
      });
      assert.equal(res.status, 400);
      const grpcAnswer = await raw.unary(
        'sendMessage',
        { ...sendRequest([{ text: 'weather' }]), configuration: SendMessageConfiguration.fromJSON(configuration) },
        metadata(alice),
      );
      assert.equal(grpcAnswer.error?.code, grpc.status.INVALID_ARGUMENT);
      // A watch takes one, and its webhook gets the watch's events.
      const watch = await rpc('SendMessage', { message: message({ watch: { query: 'weather' } }), configuration });
      assert.equal(watch.result?.task?.status?.state, 'TASK_STATE_WORKING', JSON.stringify(watch).slice(0, 300));
      await eventually(async () => posts.length > 0, 'the watch\'s first push');
      assert.ok(posts.every((p) => p === 'POST /hook'));
      const pushed = posts.length;
      assert.equal((await rpc('CancelTask', { id: watch.result.task.id })).result?.status?.state, 'TASK_STATE_CANCELED');
      await eventually(async () => posts.length > pushed, "the watch's end");
      await new Promise((r) => setTimeout(r, 300));
      // Only the watch's: the refused messages sent nothing (before, each search POSTed its events).
      assert.ok(posts.length <= pushed + 1, `${posts.length} POSTs`);
    } finally {
      receiver.close();
    }
  });
});

describe('push configs from a caller without a token', () => {
  test('are neither checked nor POSTed to: the watch is refused UNAUTHENTICATED, as without one', async () => {
    // Records every request it gets: none may come.
    const receiver = await webhook(() => 200);
    const hook = receiver.url;
    const anonymous = async (method: string, url: string): Promise<string> => {
      const res = await postRpc(
        method,
        {
          message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [dataPart({ watch: { query: 'weather' } })] },
          configuration: { taskPushNotificationConfig: { url, token: 'chosen-by-anyone' } },
        },
        { as: {} },
      );
      return res.text();
    };
    try {
      for (const method of ['SendMessage', 'SendStreamingMessage']) {
        // Before, the registry POSTed the refused task to any URL given, for anyone, once per request.
        const answer = await anonymous(method, hook);
        assert.match(answer, /TASK_STATE_REJECTED/, `${method}: ${answer.slice(0, 300)}`);
        assert.match(answer, /UNAUTHENTICATED: Watching the catalog needs a registry token/, method);
        // Nor is the URL resolved and checked: the answer said what an internal name resolves to.
        const internal = await anonymous(method, 'http://10.1.2.3/hook');
        assert.doesNotMatch(internal, /10\.1\.2\.3|refused to fetch|push notification URL/, `${method}: ${internal.slice(0, 300)}`);
        assert.match(internal, /UNAUTHENTICATED/, method);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.deepEqual(receiver.requests, [], 'nothing was POSTed');
    } finally {
      await receiver.close();
    }
  });
});

describe('configs of finished tasks', () => {
  test('with a token or credentials go over plain http only where the operator allows it: a host or address REGISTRY_FETCH_ALLOW lists, or REGISTRY_WEBHOOK_HTTP_CREDENTIALS', async () => {
    const fetcher = new GuardedFetcher({ maxBytes: 1024, allow: AllowList.parse('127.0.0.1') });
    const context = new ServerCallContext();
    const save = (configs: PushConfigs, fields: WireJson) => configs.save('task', context, TaskPushNotificationConfig.fromJSON({ id: 'c', ...fields }));
    const strict = new PushConfigs(fetcher);
    await assert.rejects(save(strict, { url: PUBLIC_HTTP_HOOK, token: 'a-webhook-token' }), /plain http, and the config carries a token/);
    // https, no credentials, or the operator's own address: kept.
    await save(strict, { url: 'https://93.184.215.14/hook', token: 'a-webhook-token' });
    await save(strict, { url: PUBLIC_HTTP_HOOK });
    await save(strict, { url: HOOK, token: 'a-webhook-token', authentication: { scheme: 'Bearer', credentials: 'xy' } });
    assert.equal((await fetcher.check(HOOK, { purpose: 'webhook' })).operatorAllowed, true);
    assert.equal((await fetcher.check(PUBLIC_HTTP_HOOK, { purpose: 'webhook' })).operatorAllowed, false);
    // The operator's setting allows it everywhere.
    await save(new PushConfigs(fetcher, undefined, { httpCredentials: true }), { url: PUBLIC_HTTP_HOOK, token: 'a-webhook-token' });
    await fetcher.close();
    assert.equal(loadConfig({ REGISTRY_WEBHOOK_HTTP_CREDENTIALS: 'true' }).watches.httpCredentials, true);
    assert.equal(loadConfig({}).watches.httpCredentials, false);
  });

  test('are bounded: past 1,000 tasks the oldest go (a config on a finished task sees no final event to remove it)', async () => {
    const configs = new PushConfigs(new GuardedFetcher({ maxBytes: 1024, allow: AllowList.parse('127.0.0.1') }));
    const context = new ServerCallContext();
    for (let i = 0; i < 1_200; i++) {
      await configs.save(`task-${i}`, context, TaskPushNotificationConfig.fromJSON({ id: 'c', url: `${HOOK}/${i}` }));
    }
    assert.deepEqual(await configs.load('task-0'), [], 'the oldest are forgotten');
    assert.deepEqual(await configs.load('task-199'), []);
    assert.deepEqual((await configs.load('task-200')).map((c) => c.url), [`${HOOK}/200`]);
    assert.deepEqual((await configs.load('task-1199')).map((c) => c.url), [`${HOOK}/1199`]);
  });
});
