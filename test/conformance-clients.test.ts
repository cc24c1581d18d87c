/**
 * Real clients of both protocol generations find the registry from its card alone and use it:
 * @a2a-js/sdk 0.3.x (installed beside 1.x as the npm alias a2a-sdk-03; it speaks v0.3 JSON-RPC,
 * reads the card's `url`/`preferredTransport` and sends no A2A-Version header) and @a2a-js/sdk
 * 1.x over JSON-RPC and HTTP+JSON (it sends `A2A-Version: 1.0` and reads `supportedInterfaces`).
 * Each one runs search, register, get and a streamed search against one registry on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  ClientFactory as ClientFactory03,
  ClientFactoryOptions as ClientFactoryOptions03,
  ContentTypeNotSupportedError as ContentTypeNotSupportedError03,
  JsonRpcTransportFactory as JsonRpcTransportFactory03,
  type Client as Client03,
} from 'a2a-sdk-03/client';
import type { Task as Task03, TaskArtifactUpdateEvent as ArtifactUpdate03, Message as Message03 } from 'a2a-sdk-03';
import { SendMessageConfiguration, Task } from '@a2a-js/sdk';
import { ContentTypeNotSupportedError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import { authFetch, dataPart, errorOf, message, op, resultOf, sdkClient, send, stream, streamEventJson, textPart, type WireJson } from './support/client.js';
import { v03Card, v1Card } from './support/documents.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';

let registry: TestRegistry;

before(async () => {
  registry = await startTestRegistry();
});
after(() => registry.close());

/** A v0.3 client built the way its README says, from the base URL only. */
async function client03(token?: string): Promise<Client03> {
  const fetchImpl = authFetch(token);
  const factory = new ClientFactory03(
    ClientFactoryOptions03.createFrom(ClientFactoryOptions03.default, { transports: [new JsonRpcTransportFactory03({ fetchImpl })] }),
  );
  return factory.createFromUrl(registry.url);
}

const message03 = (parts: Message03['parts']): Message03 => ({ kind: 'message', messageId: randomUUID(), role: 'user', parts });
const data03 = (data: Record<string, unknown>): Message03['parts'][number] => ({ kind: 'data', data });

/** Sends one v0.3 message and returns the task (the registry always answers with one). */
async function send03(client: Client03, parts: Message03['parts']): Promise<Task03> {
  const result = await client.sendMessage({ message: message03(parts) });
  assert.equal(result.kind, 'task', `expected a task, got ${JSON.stringify(result).slice(0, 200)}`);
  return result as Task03;
}

/** The data part of a v0.3 task's only artifact. */
function result03(task: Task03): Record<string, any> {
  assert.equal(task.status.state, 'completed', JSON.stringify(task.status.message?.parts ?? []).slice(0, 300));
  const part = task.artifacts![0]!.parts.find((p) => p.kind === 'data');
  assert.ok(part && part.kind === 'data');
  return part.data as Record<string, any>;
}

describe('@a2a-js/sdk 0.3 (v0.3 JSON-RPC, no A2A-Version header)', () => {
  test('discovers the registry from the card: the v0.3 JSON-RPC interface', async () => {
    const client = await client03();
    const card = await client.getAgentCard();
    assert.equal(card.url, `${registry.url}/a2a/jsonrpc`);
    assert.equal(card.preferredTransport, 'JSONRPC');
    assert.match(card.protocolVersion, /^0\.3/);
  });

  test('register (with its token), get, search and a streamed search', async () => {
    const alice = await client03(TOKENS.alice);
    const anonymous = await client03();
    const card = v03Card('Barometer Agent', `https://barometer.example.org/${randomUUID()}/a2a`);
    const registered = result03(await send03(alice, [data03({ register: { agentCard: card } })]));
    assert.equal(registered.created, true);
    assert.equal(registered.protocolVersion, '0.3');

    const entry = result03(await send03(anonymous, [data03({ get: { id: registered.id } })]));
    assert.deepEqual(entry.document, card);
    assert.equal(entry.owner, 'alice');

    const hits = result03(await send03(anonymous, [{ kind: 'text', text: 'barometer' }]));
    assert.ok(hits.results.some((h: WireJson) => h.id === registered.id));

    const events = [];
    for await (const event of anonymous.sendMessageStream({ message: message03([data03({ search: { query: 'barometer' } })]) })) events.push(event);
    assert.equal(events[0]!.kind, 'task', 'the stream starts with the task');
    const chunks = events.filter((e): e is ArtifactUpdate03 => e.kind === 'artifact-update');
    assert.ok(chunks.length >= 1);
    assert.equal(chunks.at(-1)!.lastChunk, true);
    const streamed = chunks.flatMap((c) => c.artifact.parts).filter((p) => p.kind === 'data');
    assert.ok(streamed.some((p) => p.kind === 'data' && (p.data.results as WireJson[]).some((h) => h.id === registered.id)));
    const last = events.at(-1)!;
    assert.ok(last.kind === 'status-update' && last.status.state === 'completed' && last.final, JSON.stringify(last).slice(0, 200));
  });

  test('acceptedOutputModes: text/plain gets the text parts, application/json the data parts (streamed too); image/png is ContentTypeNotSupportedError', async () => {
    const client = await client03();
    const text = await client.sendMessage({ message: message03([{ kind: 'text', text: 'weather' }]), configuration: { acceptedOutputModes: ['text/plain'] } });
    assert.equal(text.kind, 'task');
    assert.deepEqual((text as Task03).artifacts!.flatMap((a) => a.parts.map((p) => p.kind)), ['text']);
    const kinds = [];
    for await (const event of client.sendMessageStream({ message: message03([data03({ search: { query: 'weather' } })]), configuration: { acceptedOutputModes: ['application/json'] } })) {
      if (event.kind === 'artifact-update') kinds.push(...event.artifact.parts.map((p) => p.kind));
    }
    assert.ok(kinds.length > 0 && kinds.every((kind) => kind === 'data'), JSON.stringify(kinds));
    await assert.rejects(
      client.sendMessage({ message: message03([{ kind: 'text', text: 'weather' }]), configuration: { acceptedOutputModes: ['image/png'] } }),
      // Its message is the class's own; the registry's is in the JSON-RPC error it keeps.
      (error: Error & { errorResponse?: WireJson }) =>
        error instanceof ContentTypeNotSupportedError03 && /accepts none of the media types the registry answers in/.test(error.errorResponse?.error?.message),
    );
  });

  test('a refused message/stream reaches the client with its code and message: a 200 event stream whose one event is the error (v0.3 3.3.1), as tasks/resubscribe answers', async () => {
    // Before, a plain application/json error, which the v0.3 transport could not read: "Invalid
    // response Content-Type for SSE stream for message/stream. Expected 'text/event-stream'."
    const client = await client03();
    const refusals: Array<[Parameters<Client03['sendMessageStream']>[0], RegExp]> = [
      // The SDK's refusal before the first event.
      [{ message: message03([{ kind: 'text', text: 'weather' }]), configuration: { acceptedOutputModes: ['image/png'] } }, /^SSE event contained an error: configuration\.acceptedOutputModes \["image\/png"\] accepts none .*\(Code: -32005\)/s],
      [{ message: { ...message03([{ kind: 'text', text: 'weather' }]), taskId: 'no-such-task' } }, /^SSE event contained an error: Task not found: no-such-task\. A task is found only with the token that created it .*send the token the task was created with, or send the request again for a new task\. \(Code: -32001\)/s],
      // The registry's own guard, before the SDK.
      [{ message: message03([]) }, /^SSE event contained an error: params\.message\.parts is empty: .*\(Code: -32602\)/s],
    ];
    for (const [params, said] of refusals) {
      await assert.rejects(async () => {
        for await (const event of client.sendMessageStream(params)) assert.fail(`no event before the error: ${JSON.stringify(event).slice(0, 200)}`);
      }, (error: Error) => said.test(error.message) || assert.fail(error.message));
    }
  });

  test('an anonymous write is declined in the task, not by the transport', async () => {
    const task = await send03(await client03(), [data03({ register: { agentCard: v1Card('Anon', 'https://anon.example.org/a2a') } })]);
    assert.equal(task.status.state, 'rejected');
    const error = task.status.message!.parts.find((p) => p.kind === 'data');
    assert.equal(error?.kind === 'data' && (error.data.error as WireJson).code, 'UNAUTHENTICATED');
  });
});

for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
  describe(`@a2a-js/sdk 1.x over ${binding}`, () => {
    test('register (with its token), get, search and a streamed search', async () => {
      const alice = await sdkClient(registry.url, { token: TOKENS.alice, binding });
      const anonymous = await sdkClient(registry.url, { binding });
      const card = v1Card('Hygrometer Agent', `https://hygrometer.example.org/${randomUUID()}/a2a`);
      const registered = resultOf(await op(alice, { register: { agentCard: card } }));
      assert.equal(registered.created, true);

      const entry = resultOf(await op(anonymous, { get: { id: registered.id } }));
      assert.deepEqual(entry.document, card);

      const hits = resultOf(await send(anonymous, [textPart('hygrometer')]));
      assert.ok(hits.results.some((h: WireJson) => h.id === registered.id));

      const events = await stream(anonymous, [dataPart({ search: { query: 'hygrometer' } })]);
      assert.ok(events[0]!.task, 'the stream starts with the task');
      const chunks = events.filter((e) => e.artifactUpdate);
      assert.equal(chunks.at(-1)!.artifactUpdate.lastChunk, true);
      const streamed = chunks.flatMap((c) => c.artifactUpdate.artifact.parts).filter((p: WireJson) => p.data);
      assert.ok(streamed.some((p: WireJson) => p.data.results.some((h: WireJson) => h.id === registered.id)));
      assert.equal(events.at(-1)!.statusUpdate?.status?.state, 'TASK_STATE_COMPLETED');

      assert.equal(errorOf(await op(anonymous, { unregister: { id: registered.id } })).code, 'UNAUTHENTICATED');
    });

    test('acceptedOutputModes: text/plain gets the text parts, application/json the data parts (streamed too); image/png is ContentTypeNotSupportedError', async () => {
      const client = await sdkClient(registry.url, { binding });
      const request = (modes: string[]) => ({ tenant: '', message: message([textPart('weather')]), configuration: SendMessageConfiguration.fromJSON({ acceptedOutputModes: modes }), metadata: undefined });
      const text = Task.toJSON((await client.sendMessage(request(['text/plain']))) as Task) as WireJson;
      assert.deepEqual(text.artifacts.flatMap((a: WireJson) => a.parts.map((p: WireJson) => p.mediaType)), ['text/plain']);
      const types = [];
      for await (const event of client.sendMessageStream(request(['application/json']))) {
        const update = streamEventJson(event).artifactUpdate;
        if (update) types.push(...update.artifact.parts.map((p: WireJson) => p.mediaType));
      }
      assert.ok(types.length > 0 && types.every((type) => type === 'application/json'), JSON.stringify(types));
      await assert.rejects(
        client.sendMessage(request(['image/png'])),
        (error: Error) => error instanceof ContentTypeNotSupportedError && /accepts none of the media types the registry answers in/.test(error.message),
      );
    });

    test('TaskNotFoundError says where tasks are found and what to do, the same for another principal\'s task as for none (it said "Task not found: <id>" alone)', async () => {
      const alice = await sdkClient(registry.url, { token: TOKENS.alice, binding });
      const bob = await sdkClient(registry.url, { token: TOKENS.bob, binding });
      const task = (await alice.sendMessage({ tenant: '', message: message([textPart('weather')]), configuration: undefined, metadata: undefined })) as Task;
      const said = (id: string) => (error: Error) =>
        error instanceof TaskNotFoundError &&
        error.message.includes(
          `Task not found: ${id}. A task is found only with the token that created it (one created without a token, by no later request), and the task of a read (search, get, list, validate) or of a refused request only for a while after it ran (at most REGISTRY_TASK_MEMORY_TTL_SECONDS, 15 minutes by default): send the token the task was created with, or send the request again for a new task; ListTasks lists the tasks of the token it is sent with.`,
        );
      await assert.rejects(bob.getTask({ tenant: '', id: task.id, historyLength: undefined }), said(task.id));
      await assert.rejects(alice.getTask({ tenant: '', id: 'no-such-task', historyLength: undefined }), said('no-such-task'));
      await assert.rejects(alice.cancelTask({ tenant: '', id: 'no-such-task', metadata: undefined }), said('no-such-task'));
      await assert.rejects(
        alice.sendMessage({ tenant: '', message: { ...message([textPart('weather')]), taskId: 'no-such-task' }, configuration: undefined, metadata: undefined }),
        said('no-such-task'),
      );
    });
  });
}
