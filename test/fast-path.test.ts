/**
 * The A2A door answers one-turn, non-streaming messages without the SDK's event machinery
 * (protocol/registry-request-handler.ts, issue 12 point 7). This pins that the fast path
 * answers exactly what the SDK's path answers: the same task shape for a completed read, a
 * declined request and a durable write, the same history-length trimming, and a task that
 * GetTask and ListTasks see afterwards under the same privacy rules.
 *
 * The SDK's path is reached with the same message naming a referenced task (one that does not
 * exist: the SDK loads referenced tasks for the executor, which does not use them, and the
 * request handler leaves every message that names one to the SDK); the echoed message's
 * `referenceTaskIds` is the one difference, and is left out of the comparison.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { v1Card } from './support/documents.js';
import { rawPost, type RawAnswer } from './support/raw-http.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';
import type { WireJson } from './support/client.js';


let registry: TestRegistry;
before(async () => {
  registry = await startTestRegistry();
});
after(() => registry.close());

let sequence = 0;
async function rpc(method: string, params: WireJson, token?: string): Promise<RawAnswer & { json: WireJson }> {
  const answer = await rawPost(`${registry.url}/a2a/jsonrpc`, JSON.stringify({ jsonrpc: '2.0', id: ++sequence, method, params }), {
    headers: { 'A2A-Version': '1.0', ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });
  return { ...answer, json: JSON.parse(answer.text) as WireJson };
}

/** SendMessage with one data part; `sdkPath` names a (missing) referenced task, which sends it down the SDK's path. */
async function send(data: unknown, options: { token?: string; sdkPath?: boolean; configuration?: WireJson } = {}) {
  const message = {
    messageId: crypto.randomUUID(),
    role: 'ROLE_USER',
    parts: [{ data, mediaType: 'application/json' }],
    ...(options.sdkPath ? { referenceTaskIds: [crypto.randomUUID()] } : {}),
  };
  const answer = await rpc('SendMessage', { message, ...(options.configuration ? { configuration: options.configuration } : {}) }, options.token);
  assert.equal(answer.status, 200, answer.text);
  assert.ok(answer.json.result?.task, `a task: ${answer.text}`);
  return { task: answer.json.result.task as WireJson, message, headers: answer.headers };
}

/** A task with what differs per request (ids, times, the echoed message) replaced by placeholders. */
function shape(task: WireJson, messageId: string): WireJson {
  const text = JSON.stringify(task, (key, value: unknown) => (key === 'referenceTaskIds' ? undefined : value))
    .replaceAll(task.id as string, '<task>')
    .replaceAll(task.contextId as string, '<context>')
    .replaceAll(messageId, '<message>')
    .replace(/"(artifactId|messageId)":"[^"]+"/g, '"$1":"<id>"')
    .replace(/"timestamp":"[^"]+"/g, '"timestamp":"<time>"')
    .replace(/"(id|registeredAt|updatedAt|url|name)":"[^"]*Fast Path [AB][^"]*"/g, '"$1":"<varies>"');
  return JSON.parse(text) as WireJson;
}

describe('one-turn messages answer the same on the fast path as on the SDK path', () => {
  test('a completed read, a declined request and a durable write have the same task shape', async () => {
    const cases: Array<{ name: string; data: unknown; token?: string }> = [
      { name: 'search (anonymous)', data: { search: { query: 'registry', limit: 3 } } },
      { name: 'list (alice)', data: { list: { limit: 2 } }, token: TOKENS.alice },
      { name: 'unknown operation (declined)', data: { noSuchOperation: {} }, token: TOKENS.alice },
      { name: 'anonymous register (declined)', data: { register: { agentCard: v1Card('Nobody', 'https://nobody.example.org/a2a') } } },
    ];
    for (const c of cases) {
      const fast = await send(c.data, { token: c.token });
      const sdk = await send(c.data, { token: c.token, sdkPath: true });
      assert.deepEqual(shape(fast.task, fast.message.messageId), shape(sdk.task, sdk.message.messageId), c.name);
      assert.equal(fast.task.history.length, 1, c.name);
      assert.equal(fast.task.history[0].taskId, fast.task.id, `${c.name}: the echoed message carries the task id`);
      assert.equal(fast.task.history[0].contextId, fast.task.contextId, c.name);
    }
    // A durable write: two different cards (a card registers once), same answer shape.
    const fast = await send({ register: { agentCard: v1Card('Fast Path A', 'https://fast-a.example.org/a2a') } }, { token: TOKENS.alice });
    const sdk = await send({ register: { agentCard: v1Card('Fast Path B', 'https://fast-b.example.org/a2a') } }, { token: TOKENS.alice, sdkPath: true });
    assert.equal(fast.task.status.state, 'TASK_STATE_COMPLETED');
    const keys = (task: WireJson) => ({ task: Object.keys(task).sort(), status: Object.keys(task.status).sort(), artifact: task.artifacts.map((a: WireJson) => [a.name, a.parts.length]) });
    assert.deepEqual(keys(fast.task), keys(sdk.task));
  });

  test('a client-chosen context id and historyLength are honoured alike', async () => {
    for (const historyLength of [0, 1]) {
      const configuration = { historyLength };
      const fast = await send({ search: { query: 'agent' } }, { configuration });
      const sdk = await send({ search: { query: 'agent' } }, { configuration, sdkPath: true });
      assert.equal(fast.task.history?.length ?? 0, historyLength);
      assert.deepEqual(shape(fast.task, fast.message.messageId), shape(sdk.task, sdk.message.messageId));
    }
    const contextId = crypto.randomUUID();
    const message = { messageId: crypto.randomUUID(), contextId, role: 'ROLE_USER', parts: [{ data: { search: { query: 'agent' } }, mediaType: 'application/json' }] };
    const answer = await rpc('SendMessage', { message });
    assert.equal(answer.json.result.task.contextId, contextId);
  });

  test('GetTask and ListTasks see a fast-path task, privately; a durable one survives in the database', async () => {
    const search = await send({ search: { query: 'registry' } }, { token: TOKENS.alice });
    const write = await send({ register: { agentCard: v1Card('Fast Path Durable', 'https://fast-durable.example.org/a2a') } }, { token: TOKENS.alice });
    for (const { task } of [search, write]) {
      const got = await rpc('GetTask', { id: task.id }, TOKENS.alice);
      assert.deepEqual(got.json.result, task, 'GetTask answers the task SendMessage answered');
      const bob = await rpc('GetTask', { id: task.id }, TOKENS.bob);
      assert.ok(bob.json.error, 'another principal does not see it');
      const anonymous = await rpc('GetTask', { id: task.id });
      assert.ok(anonymous.json.error, 'an anonymous caller does not see it');
    }
    const listed = await rpc('ListTasks', { pageSize: 100 }, TOKENS.alice);
    const ids = (listed.json.result.tasks as WireJson[]).map((t) => t.id);
    assert.ok(ids.includes(search.task.id) && ids.includes(write.task.id), 'ListTasks lists both');
    assert.ok(!((await rpc('ListTasks', { pageSize: 100 }, TOKENS.bob)).json.result.tasks as WireJson[]).some((t) => t.id === search.task.id));
    assert.deepEqual((await rpc('ListTasks', { pageSize: 100 })).json.result.tasks ?? [], []);
    // An anonymous fast-path task is reachable by no later request.
    const anonymous = await send({ search: { query: 'registry' } });
    assert.ok((await rpc('GetTask', { id: anonymous.task.id })).json.error);
  });

  test('a message that continues a finished task is refused as before', async () => {
    const { task } = await send({ search: { query: 'registry' } }, { token: TOKENS.alice });
    const message = { messageId: crypto.randomUUID(), taskId: task.id, role: 'ROLE_USER', parts: [{ data: { search: { query: 'x' } }, mediaType: 'application/json' }] };
    const answer = await rpc('SendMessage', { message }, TOKENS.alice);
    assert.ok(answer.json.error, answer.text);
    assert.match(answer.json.error.message, /terminal state/);
  });
});
