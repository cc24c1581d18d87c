/**
 * One table of cases run over all three A2A bindings — JSON-RPC, HTTP+JSON and gRPC — with the
 * SDK's own clients, each made from the registry's base URL alone (the client reads the card
 * and picks the binding's interface). Everything here behaves the same on every binding:
 * operations, streaming, authentication and authorisation, task reads, and protocol errors.
 * Tasks live in one store, so a task made over one binding can be read over another.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { v1Card } from './support/documents.js';
import {
  ClientFactory as ClientFactory03,
  ClientFactoryOptions as ClientFactoryOptions03,
  JsonRpcTransportFactory as JsonRpcTransportFactory03,
  UnsupportedOperationError as UnsupportedOperationError03,
} from 'a2a-sdk-03/client';
import { BINDINGS, authFetch, dataPart, errorOf, message, op, resultOf, sdkClient, send, stateOf, stream, streamEventJson, textPart, type Binding, type WireJson } from './support/client.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';

let registry: TestRegistry;
const QUOTA = 2;

before(async () => {
  // A small quota, so that a quota refusal is one of the answers compared across bindings.
  // Webhooks on this host are allowed (push configs are only created and deleted: nothing is sent).
  registry = await startTestRegistry({ GRPC_PORT: '0', REGISTRY_MAX_ENTRIES_PER_OWNER: String(QUOTA), REGISTRY_FETCH_ALLOW: '127.0.0.1' });
});
after(async () => {
  await registry.close();
  fs.rmSync(registry.dataDir, { recursive: true, force: true });
});

const getTask = (client: Client, id: string) => client.getTask({ tenant: '', id, historyLength: undefined }).then((t) => Task.toJSON(t) as WireJson);
const listTasks = (client: Client) =>
  client.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 100, pageToken: '', historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: undefined });

/** A new watch's task id: the one task that runs until canceled. Its stream is left once it has the task. */
async function openWatch(client: Client, query: string): Promise<string> {
  const events = client.sendMessageStream({ tenant: '', message: message([dataPart({ watch: { query, initial: false } })]), configuration: undefined, metadata: undefined });
  const first = await events.next();
  await events.return(undefined);
  const watchId = first.done ? '' : (streamEventJson(first.value).task?.id as string);
  assert.ok(watchId, 'the watch\'s task comes first');
  return watchId;
}

for (const binding of BINDINGS) {
  describe(`${binding} binding`, () => {
    let anonymous: Client;
    let alice: Client;
    let bob: Client;
    let stranger: Client;
    const url = `https://${binding.toLowerCase().replace(/\W/g, '')}.bindings.example.org/a2a`;
    const name = `Bindings ${binding} Ledger Agent`;
    let id = '';

    before(async () => {
      [anonymous, alice, bob, stranger] = await Promise.all([
        sdkClient(registry.url, { binding }),
        sdkClient(registry.url, { binding, token: TOKENS.alice }),
        sdkClient(registry.url, { binding, token: TOKENS.bob }),
        sdkClient(registry.url, { binding, token: 'not-a-registry-token-0123456789' }),
      ]);
    });

    test('the client picked this binding from the card', () => {
      for (const client of [anonymous, alice, bob, stranger]) assert.equal(client.transport.protocolName, binding);
    });

    test('register with a token completes with the new entry', async () => {
      const result = resultOf(await op(alice, { register: { agentCard: v1Card(name, url) } }));
      assert.equal(result.created, true);
      assert.equal(result.revision, 1);
      id = result.id;
      assert.ok(id);
    });

    test('register without a token is REJECTED UNAUTHENTICATED', async () => {
      const error = errorOf(await op(anonymous, { register: { agentCard: v1Card(`${name} copy`, `${url}/copy`) } }));
      assert.equal(error.code, 'UNAUTHENTICATED');
    });

    test('a token the registry does not know is refused on every call, reads included, before any task', async () => {
      const before = (await listTasks(alice)).tasks.length;
      for (const data of [{ search: { query: 'ledger' } }, { register: { agentCard: v1Card(`${name} copy`, `${url}/copy`) } }]) {
        await assert.rejects(op(stranger, data), /The bearer token is not recognised/);
      }
      await assert.rejects(getTask(stranger, 'no-such-task'), /The bearer token is not recognised/);
      assert.equal((await listTasks(alice)).tasks.length, before);
    });

    test('search (a plain text message too) finds the entry', async () => {
      const byData = resultOf(await op(anonymous, { search: { query: 'ledger', filter: { kind: 'agent' } } }));
      assert.ok(byData.results.some((hit: WireJson) => hit.id === id && hit.name === name));
      const byText = resultOf(await send(anonymous, [textPart(`${binding} ledger`)]));
      assert.ok(byText.results.some((hit: WireJson) => hit.id === id));
    });

    test('a streamed search starts with the task, then artifact chunks of one artifact, then COMPLETED', async () => {
      const events = await stream(anonymous, [dataPart({ search: { query: 'invoices', limit: 20 } })]);
      assert.ok(events[0]!.task, 'the stream starts with the task');
      const chunks = events.filter((e) => e.artifactUpdate).map((e) => e.artifactUpdate);
      assert.ok(chunks.length >= 1);
      assert.equal(new Set(chunks.map((c) => c.artifact.artifactId)).size, 1);
      assert.equal(chunks[0].append ?? false, false);
      assert.ok(chunks.slice(1).every((c) => c.append === true));
      assert.equal(chunks.at(-1).lastChunk, true);
      const hits = chunks.flatMap((c) => c.artifact.parts.find((p: WireJson) => p.data).data.results);
      assert.ok(hits.some((hit: WireJson) => hit.id === id), 'the streamed hits include the entry');
      assert.equal(events.at(-1)!.statusUpdate?.status?.state, 'TASK_STATE_COMPLETED');
    });

    test('get returns the entry with its document; an unknown id is REJECTED NOT_FOUND', async () => {
      const entry = resultOf(await op(anonymous, { get: { id } }));
      assert.equal(entry.id, id);
      assert.equal(entry.owner, 'alice');
      assert.equal(entry.document.name, name);
      assert.equal(errorOf(await op(anonymous, { get: { id: 'no-such-entry' } })).code, 'NOT_FOUND');
    });

    test('validate accepts a valid card and REJECTS an invalid one with VALIDATION_FAILED and paths', async () => {
      assert.equal(resultOf(await op(anonymous, { validate: { agentCard: v1Card() } })).valid, true);
      const error = errorOf(await op(anonymous, { validate: { agentCard: { ...v1Card(), supportedInterfaces: [] } } }));
      assert.equal(error.code, 'VALIDATION_FAILED');
      assert.ok(error.details.some((d: WireJson) => d.path === '/supportedInterfaces'));
    });

    test('a refusal of the arguments found while the operation runs names them where the message has them; a document\'s findings stay at the document', async () => {
      // Refreshing an entry registered inline: its id (it said /id, relative to the arguments).
      const refresh = errorOf(await op(alice, { refresh: { id } }));
      assert.equal(refresh.code, 'BAD_REQUEST');
      assert.deepEqual(refresh.details.map((d: WireJson) => [d.path, d.rule]), [['/parts/0/data/refresh/id', 'refresh-no-source']]);
      // An owner beside "mine", the operation in a later part (it said /list/filter/owner).
      const both = errorOf(await send(alice, [textPart('my entries'), dataPart({ list: { filter: { mine: true, owner: 'bob' } } })]));
      assert.equal(both.code, 'BAD_REQUEST');
      assert.deepEqual(both.details.map((d: WireJson) => d.path), ['/parts/1/data/list/filter/owner']);
      // A register's url that is no http(s) URL (it said /url, which reads as the card's own field).
      const url = errorOf(await op(alice, { register: { url: 'notaurl' } }));
      assert.equal(url.code, 'BAD_REQUEST');
      assert.deepEqual(url.details.map((d: WireJson) => [d.path, d.message]), [['/parts/0/data/register/url', 'not an absolute http(s) URL']]);
      // A limit past the safe-integer range is told the documented bound, once: it was two details
      // at one path, the first "Too big: expected int to be <=9007199254740991".
      const huge = errorOf(await op(anonymous, { search: { query: 'ledger', limit: 1e300 } }));
      assert.deepEqual(huge.details.map((d: WireJson) => [d.path, d.message]), [['/parts/0/data/search/limit', '"limit" must be a whole number from 1 to 100; got the number 1e+300']]);
      const negative = errorOf(await op(anonymous, { list: { pageSize: -1e300 } }));
      assert.deepEqual(negative.details.map((d: WireJson) => [d.path, d.message]), [['/parts/0/data/list/pageSize', '"pageSize" must be a whole number from 1 to 100; got the number -1e+300']]);
      // Arguments left out, of the wrong type or outside a list of values, in plain words: which
      // field, what it takes, what was sent (it was zod's "Invalid input: expected string, received undefined").
      for (const [data, path, message] of [
        [{ get: {} }, '/parts/0/data/get/id', '"id" is required: the entry id, as search and list results give it (a string of 1 to 100 characters)'],
        [{ search: { query: 'ledger', limit: '20' } }, '/parts/0/data/search/limit', '"limit" must be a whole number from 1 to 100; got the string "20"'],
        [{ search: { query: 'ledger', limit: 2.5 } }, '/parts/0/data/search/limit', '"limit" must be a whole number from 1 to 100; got the number 2.5'],
        [{ list: { orderBy: 'name' } }, '/parts/0/data/list/orderBy', '"orderBy" must be one of "createdAt", "updatedAt"; got the string "name"'],
        [{ search: { filter: { tags: [] } } }, '/parts/0/data/search/filter/tags', '"tags" must be a list of 1 to 20 strings; got 0 values'],
        [{ get: 'x' }, '/parts/0/data/get', '"get" must be an object; got the string "x"'],
      ] as const) {
        const refused = errorOf(await op(anonymous, data));
        assert.equal(refused.code, 'BAD_REQUEST', JSON.stringify(data));
        assert.deepEqual(refused.details.map((d: WireJson) => [d.path, d.message]), [[path, message]], JSON.stringify(data));
      }
      const token = errorOf(await op(anonymous, { search: { query: 'ledger', pageToken: 'garbage' } }));
      assert.deepEqual(token.details.map((d: WireJson) => d.path), ['/parts/0/data/search/pageToken']);
      // A document's findings are its own paths, wherever the message carries it.
      const invalid = errorOf(await send(anonymous, [textPart('check this'), dataPart({ validate: { agentCard: { ...v1Card(), supportedInterfaces: [] } } })]));
      assert.ok(invalid.details.some((d: WireJson) => d.path === '/supportedInterfaces'), JSON.stringify(invalid.details));
      assert.ok(!invalid.details.some((d: WireJson) => d.path.startsWith('/parts/')), JSON.stringify(invalid.details));
    });

    test('GetTask returns the caller\'s own task; another principal, or an unknown id, gets TaskNotFound', async () => {
      const task = await op(alice, { list: { filter: { mine: true } } });
      const fetched = await getTask(alice, task.id);
      assert.equal(fetched.id, task.id);
      assert.equal(stateOf(fetched), 'TASK_STATE_COMPLETED');
      assert.deepEqual(fetched.artifacts, task.artifacts);
      await assert.rejects(getTask(bob, task.id), TaskNotFoundError);
      await assert.rejects(getTask(alice, 'no-such-task'), TaskNotFoundError);
    });

    test('an anonymous caller\'s task is private: no one can read or list it, another anonymous caller included', async () => {
      const task = await op(anonymous, { search: { query: 'ledger' } });
      assert.equal(stateOf(task), 'TASK_STATE_COMPLETED');
      await assert.rejects(getTask(anonymous, task.id), TaskNotFoundError);
      await assert.rejects(getTask(alice, task.id), TaskNotFoundError);
      assert.ok(!(await listTasks(anonymous)).tasks.some((t) => t.id === task.id));
    });

    test('ListTasks lists the caller\'s tasks and no one else\'s', async () => {
      const mine = await op(alice, { list: {} });
      const theirs = await op(bob, { list: {} });
      const listed = (await listTasks(alice)).tasks.map((t) => t.id);
      assert.ok(listed.includes(mine.id));
      assert.ok(!listed.includes(theirs.id));
    });

    test('CancelTask of a finished task is TaskNotCancelable; SubscribeToTask of one is UnsupportedOperation', async () => {
      const task = await op(alice, { list: {} });
      await assert.rejects(alice.cancelTask({ tenant: '', id: task.id, metadata: undefined }), TaskNotCancelableError);
      await assert.rejects(async () => {
        for await (const event of alice.resubscribeTask({ tenant: '', id: task.id })) void event;
      }, UnsupportedOperationError);
    });

    test('CancelTask of a task already CANCELED is TaskNotCancelable too (A2A 3.1.5: "already completed, failed, or canceled")', async () => {
      const watchId = await openWatch(alice, `cancel twice ${binding}`);
      assert.equal(stateOf(Task.toJSON(await alice.cancelTask({ tenant: '', id: watchId, metadata: undefined })) as WireJson), 'TASK_STATE_CANCELED');
      // The SDK answered the second cancel with the CANCELED task, as if this request had canceled it.
      await assert.rejects(alice.cancelTask({ tenant: '', id: watchId, metadata: undefined }), (error: Error) => {
        assert.ok(error instanceof TaskNotCancelableError, `${error.constructor.name}: ${error.message}`);
        assert.match(error.message, new RegExp(`^Task ${watchId} is not cancelable: it has already ended \\(TASK_STATE_CANCELED\\)`));
        return true;
      });
    });

    test('push configs (A2A 3.1.7-3.1.10): the client\'s id names its config; another principal\'s task, an unknown task or config are TaskNotFound', async () => {
      const taskId = await openWatch(alice, `push configs ${binding}`);
      // Port 8 on this host: nothing listens, and the configs are deleted before the watch ends.
      const config = (id: string, task = taskId) => ({ tenant: '', taskId: task, id, url: 'http://127.0.0.1:8/hook', token: 'webhook-token', authentication: undefined });
      const named = await alice.createTaskPushNotificationConfig(config('client-named'));
      assert.deepEqual([named.id, named.taskId], ['client-named', taskId]);
      const unnamed = (await alice.createTaskPushNotificationConfig(config(''))).id;
      assert.ok(unnamed && unnamed !== 'client-named', 'a config without an id gets one of the server\'s');
      assert.equal((await alice.getTaskPushNotificationConfig({ tenant: '', taskId, id: 'client-named' })).token, 'webhook-token');
      const listed = await alice.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' });
      assert.deepEqual(listed.configs.map((c) => c.id).sort(), ['client-named', unnamed].sort());
      for (const [what, call] of [
        ['another principal creates', () => bob.createTaskPushNotificationConfig(config('bobs'))],
        ['another principal gets', () => bob.getTaskPushNotificationConfig({ tenant: '', taskId, id: 'client-named' })],
        ['another principal lists', () => bob.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' })],
        ['another principal deletes', () => bob.deleteTaskPushNotificationConfig({ tenant: '', taskId, id: 'client-named' })],
        ['an unknown task', () => alice.createTaskPushNotificationConfig(config('x', 'no-such-task'))],
        ['an unknown config', () => alice.getTaskPushNotificationConfig({ tenant: '', taskId, id: 'no-such-config' })],
      ] as const) {
        await assert.rejects(call(), (error: Error) => {
          assert.ok(error instanceof TaskNotFoundError, `${what}: ${error.constructor.name}: ${error.message}`);
          return true;
        });
      }
      for (const id of ['client-named', unnamed]) await alice.deleteTaskPushNotificationConfig({ tenant: '', taskId, id });
      assert.deepEqual((await alice.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' })).configs, []);
      await alice.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    });

    test('the card claims no extended card, and GetExtendedAgentCard is UnsupportedOperation with a token or without (A2A 3.1.11, 3.3.4)', async () => {
      assert.equal((await anonymous.getAgentCard()).capabilities?.extendedAgentCard, false);
      // Called on the transport: the client asks for the extended card only when the card claims one.
      for (const [client, token] of [[alice, TOKENS.alice], [anonymous, undefined]] as const) {
        const serviceParameters = { 'A2A-Version': '1.0', ...(token ? { authorization: `Bearer ${token}` } : {}) };
        await assert.rejects(client.transport.getExtendedAgentCard({ tenant: '' }, { serviceParameters }), (error: Error) => {
          assert.ok(error instanceof UnsupportedOperationError, `${token ? 'with' : 'without'} a token: ${error.constructor.name}: ${error.message}`);
          // Where the card is: the SDK said only "Agent does not support authenticated extended card."
          assert.match(error.message, /^The registry has no extended agent card .*: the public card at \/\.well-known\/agent-card\.json is the whole card/);
          return true;
        });
      }
    });

    test('unregister: the owner may, another principal is REJECTED FORBIDDEN, then get is NOT_FOUND', async () => {
      assert.equal(errorOf(await op(bob, { unregister: { id } })).code, 'FORBIDDEN');
      const removed = resultOf(await op(alice, { unregister: { id } }));
      assert.equal(removed.deleted, true);
      assert.equal(errorOf(await op(anonymous, { get: { id } })).code, 'NOT_FOUND');
    });
  });
}

test('v0.3 JSON-RPC: the card says supportsAuthenticatedExtendedCard false, and agent/getAuthenticatedExtendedCard is UnsupportedOperation with a token or without', async () => {
  for (const token of [TOKENS.alice, undefined]) {
    const factory = new ClientFactory03(
      ClientFactoryOptions03.createFrom(ClientFactoryOptions03.default, { transports: [new JsonRpcTransportFactory03({ fetchImpl: authFetch(token) })] }),
    );
    const client = await factory.createFromUrl(registry.url);
    assert.equal((await client.getAgentCard()).supportsAuthenticatedExtendedCard, false);
    await assert.rejects(client.transport.getExtendedAgentCard(), (error: Error) => {
      assert.ok(error instanceof UnsupportedOperationError03, `${token ? 'with' : 'without'} a token: ${error.constructor.name}: ${error.message}`);
      return true;
    });
  }
});

test('a task made over one binding is read over the others (one task store, same owner rules)', async () => {
  const clients = Object.fromEntries(
    await Promise.all(BINDINGS.map(async (b) => [b, await sdkClient(registry.url, { binding: b, token: TOKENS.alice })] as const)),
  ) as Record<Binding, Client>;
  for (const made of BINDINGS) {
    const task = await op(clients[made], { search: { query: 'invoices' } });
    for (const read of BINDINGS) {
      const fetched = await getTask(clients[read], task.id);
      assert.equal(fetched.id, task.id, `made over ${made}, read over ${read}`);
      assert.deepEqual(fetched.artifacts, task.artifacts);
      assert.ok((await listTasks(clients[read])).tasks.some((t) => t.id === task.id));
    }
    const bobOverGrpc = await sdkClient(registry.url, { binding: 'GRPC', token: TOKENS.bob });
    await assert.rejects(getTask(bobOverGrpc, task.id), TaskNotFoundError);
  }
});

/**
 * What a caller gets back from an operation, without what differs per task by nature (ids,
 * context ids, timestamps, message ids): the end state, the artifacts' names and parts, the
 * status message's parts.
 */
function answer(task: WireJson): WireJson {
  return {
    state: stateOf(task),
    artifacts: (task.artifacts ?? []).map((a: WireJson) => ({ name: a.name, parts: a.parts })),
    status: task.status?.message?.parts ?? [],
  };
}

test('the same operation gets the same answer over JSON-RPC, HTTP+JSON and gRPC', async () => {
  const as = async (token?: string) =>
    Object.fromEntries(await Promise.all(BINDINGS.map(async (b) => [b, await sdkClient(registry.url, { binding: b, token })] as const))) as Record<Binding, Client>;
  const [anonymous, alice, bob] = await Promise.all([as(), as(TOKENS.alice), as(TOKENS.bob)]);
  const id = resultOf(await op(alice.JSONRPC, { register: { agentCard: v1Card('Bindings Tide Table Agent', 'https://tide-table.bindings.example.org/a2a') } })).id;
  const bobsCard = (i: number) => v1Card(`Bindings Quota Agent ${i}`, `https://quota-${i}.bindings.example.org/a2a`);
  const bobs = [];
  for (let i = 0; i < QUOTA; i++) bobs.push(resultOf(await op(bob.JSONRPC, { register: { agentCard: bobsCard(i) } })).id);

  // [what, as whom, the message's parts, the error code of a refusal]
  const cases: [string, Record<Binding, Client>, WireJson[], string?][] = [
    ['search', anonymous, [dataPart({ search: { query: 'tide table', filter: { kind: 'agent' }, limit: 5 } })]],
    ['search as plain text', anonymous, [textPart('tide table')]],
    ['search with a bad argument', anonymous, [dataPart({ search: { query: 5 } })], 'BAD_REQUEST'],
    ['get', anonymous, [dataPart({ get: { id } })]],
    ['get of an unknown id', anonymous, [dataPart({ get: { id: 'no-such-entry' } })], 'NOT_FOUND'],
    ['list by owner', anonymous, [dataPart({ list: { filter: { owner: 'alice' } } })]],
    ['validate an invalid card', anonymous, [dataPart({ validate: { agentCard: { ...v1Card(), supportedInterfaces: [] } } })], 'VALIDATION_FAILED'],
    ['register without a token', anonymous, [dataPart({ register: { agentCard: v1Card('Bindings Intruder Agent', 'https://intruder.bindings.example.org/a2a') } })], 'UNAUTHENTICATED'],
    ['unregister by another principal', bob, [dataPart({ unregister: { id } })], 'FORBIDDEN'],
    ['register over the quota', bob, [dataPart({ register: { agentCard: bobsCard(QUOTA) } })], 'QUOTA_EXCEEDED'],
    ['two operations in one message', anonymous, [dataPart({ get: { id }, search: { query: 'tide' } })], 'BAD_REQUEST'],
  ];
  for (const [name, clients, parts, code] of cases) {
    const tasks = await Promise.all(BINDINGS.map((b) => send(clients[b], parts)));
    if (code) assert.equal(errorOf(tasks[0]!).code, code, name);
    else assert.ok(resultOf(tasks[0]!), name);
    const answers = tasks.map(answer);
    for (let i = 1; i < BINDINGS.length; i++) assert.deepEqual(answers[i], answers[0], `${name}: ${BINDINGS[i]} answers as ${BINDINGS[0]} does`);
  }

  // A streamed search: the same hits in the same order, whatever the binding.
  const streamedHits = async (client: Client) =>
    (await stream(client, [dataPart({ search: { query: 'tide table', limit: 5 } })]))
      .filter((e) => e.artifactUpdate)
      .flatMap((e) => e.artifactUpdate.artifact.parts.find((p: WireJson) => p.data).data.results);
  const streamed = await Promise.all(BINDINGS.map((b) => streamedHits(anonymous[b])));
  assert.ok(streamed[0]!.some((hit: WireJson) => hit.id === id));
  for (let i = 1; i < BINDINGS.length; i++) assert.deepEqual(streamed[i], streamed[0], `streamed search over ${BINDINGS[i]}`);

  assert.equal(resultOf(await op(alice.GRPC, { unregister: { id } })).deleted, true);
  for (const bobsId of bobs) assert.equal(resultOf(await op(bob['HTTP+JSON'], { unregister: { id: bobsId } })).deleted, true);
  const gone = await Promise.all(BINDINGS.map(async (b) => answer(await op(anonymous[b], { get: { id } }))));
  for (const a of gone) assert.deepEqual(a, gone[0]);
  assert.equal(gone[0]!.state, 'TASK_STATE_REJECTED');
});
