/**
 * The A2A protocol surface, end to end over real HTTP on 127.0.0.1: the well-known card, the
 * JSON-RPC and HTTP+JSON bindings through the SDK's own clients (v1.0 and the v0.3 legacy
 * transport), streaming, version negotiation, body limits and malformed requests.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { Task, type Message } from '@a2a-js/sdk';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { parseRequest } from '../src/operations/request-parser.js';
import { createDocumentValidator } from '../src/validation/index.js';
import { REPO_ROOT, TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';
import { dataPart, errorOf, message, op, resultOf, sdkClient, send, stateOf, stream, textPart, type WireJson } from './support/client.js';
import { legacyStreamRefusal, readAnswer } from './support/raw-http.js';
import { metricValue } from './support/metrics.js';

let registry: TestRegistry;

const rpc = async (body: unknown, headers: Record<string, string> = { 'A2A-Version': '1.0' }) => {
  const res = await fetch(`${registry.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: (await res.json()) as WireJson };
};

const sendMessageBody = (method: string, msg: WireJson, id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params: { message: msg } });
const wireMessage = (parts: WireJson[]) => ({ messageId: crypto.randomUUID(), role: 'ROLE_USER', parts });

before(async () => {
  registry = await startTestRegistry();
});
after(async () => {
  await registry.close();
});

describe('well-known agent card', () => {
  test('is the v1.0 card with absolute URLs, cache headers and the package version', async () => {
    const res = await fetch(`${registry.url}/.well-known/agent-card.json`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('cache-control') ?? '', /max-age=\d+/);
    assert.ok(res.headers.get('etag'));
    assert.ok(!Number.isNaN(Date.parse(res.headers.get('last-modified') ?? '')));
    const card = (await res.json()) as WireJson;
    const pkg = JSON.parse(fs.readFileSync(`${REPO_ROOT}package.json`, 'utf8'));
    assert.equal(card.version, pkg.version);
    assert.deepEqual(
      card.supportedInterfaces.map((i: WireJson) => [i.url, i.protocolBinding, i.protocolVersion]),
      [
        [`${registry.url}/a2a/jsonrpc`, 'JSONRPC', '1.0'],
        [`${registry.url}/a2a/rest`, 'HTTP+JSON', '1.0'],
        [`${registry.url}/a2a/jsonrpc`, 'JSONRPC', '0.3'],
      ],
    );
    assert.equal(card.capabilities.streaming, true);
    assert.deepEqual(
      card.skills.map((s: WireJson) => s.id),
      ['register', 'validate', 'search', 'watch', 'get', 'list', 'unregister', 'refresh'],
    );
    assert.ok(!JSON.stringify(card).includes('{PUBLIC_URL}'));
  });

  test('asked for as v1.0, passes the project v1.0 schema, directly and through the validator', async () => {
    const card = (await (await fetch(`${registry.url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json()) as WireJson;
    const schema = JSON.parse(fs.readFileSync(`${REPO_ROOT}schemas/a2a-agent-card-v1.0.schema.json`, 'utf8'));
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats.default(ajv);
    const validate = ajv.compile(schema);
    assert.ok(validate(card), JSON.stringify(validate.errors));
    const verdict = createDocumentValidator({ maxDocumentBytes: 10240 }).validateAgentCard(card, Buffer.byteLength(JSON.stringify(card)));
    assert.equal(verdict.valid, true, JSON.stringify(verdict.errors));
    assert.equal(verdict.generation, '1.0');
  });

  test('answers 304 to a matching If-None-Match; v0.3 requests get the legacy-compatible card', async () => {
    const first = await fetch(`${registry.url}/.well-known/agent-card.json`);
    const etag = first.headers.get('etag')!;
    const again = await fetch(`${registry.url}/.well-known/agent-card.json`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    const other = await fetch(`${registry.url}/.well-known/agent-card.json`, { headers: { 'if-none-match': '"nope"' } });
    assert.equal(other.status, 200);
    const legacy = (await (await fetch(`${registry.url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '0.3' } })).json()) as WireJson;
    assert.ok(Array.isArray(legacy.supportedInterfaces), 'with the v1.0 interfaces');
    assert.equal(legacy.url, `${registry.url}/a2a/jsonrpc`, 'and the v0.3 primary interface');
  });
});

describe('health', () => {
  test('/healthz and /readyz answer ok, never to be cached (a cache in front would answer for a registry that changed)', async () => {
    const live = await fetch(`${registry.url}/healthz`);
    assert.equal(live.status, 200);
    assert.equal(live.headers.get('cache-control'), 'no-store');
    const ready = await fetch(`${registry.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.equal(ready.headers.get('cache-control'), 'no-store');
    assert.equal(((await ready.json()) as WireJson).status, 'ready');
  });
});

describe('SDK clients', () => {
  for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
    test(`${binding}: a text message is a search that completes with a search-results artifact`, async () => {
      const client = await sdkClient(registry.url, { binding });
      const task = await send(client, [textPart('weather')]);
      assert.equal(stateOf(task), 'TASK_STATE_COMPLETED');
      assert.equal(task.artifacts.length, 1);
      assert.equal(task.artifacts[0].name, 'search-results');
      const data = resultOf(task);
      assert.ok(Array.isArray(data.results));
      assert.equal(typeof data.total, 'number');
      assert.ok(task.artifacts[0].parts.some((p: WireJson) => typeof p.text === 'string'), 'a text part for people');
    });

    test(`${binding}: streaming ends COMPLETED after the artifact`, async () => {
      const client = await sdkClient(registry.url, { binding });
      const events = await stream(client, [dataPart({ search: { query: 'anything' } })]);
      assert.ok(events[0]!.task, 'the stream starts with the task');
      const chunks = events.filter((e) => e.artifactUpdate);
      assert.ok(chunks.length >= 1);
      assert.equal(chunks.at(-1)!.artifactUpdate.lastChunk, true);
      assert.equal(events.at(-1)!.statusUpdate?.status?.state, 'TASK_STATE_COMPLETED');
    });

    test(`${binding}: GetTask and ListTasks return the task`, async () => {
      const client = await sdkClient(registry.url, { binding, token: TOKENS.alice });
      const task = await op(client, { list: {} });
      const fetched = Task.toJSON(await client.getTask({ tenant: '', id: task.id, historyLength: undefined })) as WireJson;
      assert.equal(fetched.id, task.id);
      assert.equal(stateOf(fetched), 'TASK_STATE_COMPLETED');
      const listed = await client.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 50, pageToken: '', historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: undefined });
      assert.ok(listed.tasks.some((t) => t.id === task.id));
    });
  }

  test('CancelTask on a finished task is refused with TaskNotCancelable', async () => {
    // With a token: an anonymous caller's tasks are reachable by no later request (see test/tasks-private.test.ts).
    const client = await sdkClient(registry.url, { token: TOKENS.alice });
    const task = await op(client, { list: {} });
    await assert.rejects(client.cancelTask({ tenant: '', id: task.id, metadata: undefined }), /cancel/i);
    // GET of CancelTask's path is 405 naming POST: it was read as GetTask of the id "<id>:cancel",
    // "Task not found" of a task that exists.
    const headers = { 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.alice}` };
    const wrongMethod = await fetch(`${registry.url}/a2a/rest/tasks/${task.id}:cancel`, { headers });
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get('allow'), 'POST');
    const refused = (await wrongMethod.json()) as WireJson;
    const verbs = 'POST /tasks/{id}:cancel (CancelTask) and GET or POST /tasks/{id}:subscribe (SubscribeToTask); GET /tasks/{id} reads a task';
    assert.equal(refused.error.message, `GET is not allowed on /a2a/rest/tasks/${task.id}:cancel: it takes POST (a task's methods: ${verbs}).`);
    assert.equal(refused.error.details[0].reason, 'METHOD_NOT_ALLOWED');
    // With no A2A-Version too, as for any method a path does not take (it has no version to negotiate).
    assert.equal((await fetch(`${registry.url}/a2a/rest/tasks/${task.id}:cancel`, { method: 'HEAD' })).status, 405);
    // A verb the binding does not have is 404 naming the verbs: POST was told "it takes GET".
    const typo = await fetch(`${registry.url}/a2a/rest/tasks/${task.id}:cancle`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(typo.status, 404);
    assert.equal(((await typo.json()) as WireJson).error.message, `No route POST /a2a/rest/tasks/${task.id}:cancle: ":cancle" is no method of a task. A task's methods are ${verbs}.`);
    assert.equal((await fetch(`${registry.url}/a2a/rest/tasks/${task.id}`, { headers })).status, 200, 'GetTask of the same task');
  });

  test('the v0.3 legacy transport sends message/send and gets the same answer', async () => {
    const transport = new LegacyJsonRpcTransport({ endpoint: `${registry.url}/a2a/jsonrpc` });
    const result = await transport.sendMessage({ tenant: '', message: message([textPart('weather')]), configuration: undefined, metadata: undefined });
    assert.ok('id' in result && 'status' in result);
    const task = Task.toJSON(result as Task) as WireJson;
    assert.equal(stateOf(task), 'TASK_STATE_COMPLETED');
    assert.equal(task.artifacts[0].name, 'search-results');
  });

  test('v0.3 tasks/resubscribe answers an error as v0.3 defines it, and the v0.3 transport reads it: a 200 SSE stream whose one event is the JSON-RPC error', async () => {
    // v0.3 3.3.1 and 7.9: the answer is an SSE stream of SendStreamingMessageResponse, an error response among them
    // (v1.0 SubscribeToTask answers a plain JSON-RPC error instead; v0.3 message/stream answers its refusals as this: conformance-clients.test).
    const raw = await fetch(`${registry.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tasks/resubscribe', params: { id: 'no-such-task' } }),
    });
    assert.equal(raw.status, 200);
    assert.match(raw.headers.get('content-type') ?? '', /^text\/event-stream/);
    const frame = /^event: error\ndata: (.*)\n\n$/s.exec(await raw.text());
    assert.ok(frame, 'one event: error frame');
    assert.equal(JSON.parse(frame[1]!).error.code, -32001);
    assert.equal(JSON.parse(frame[1]!).id, 3);

    const transport = new LegacyJsonRpcTransport({ endpoint: `${registry.url}/a2a/jsonrpc` });
    await assert.rejects(
      async () => {
        for await (const _event of transport.resubscribeTask({ tenant: '', id: 'no-such-task' })) assert.fail('no event before the error');
      },
      (err: Error) => err.cause instanceof TaskNotFoundError && /Task not found: no-such-task\. A task is found only with the token that created it .* \(Code: -32001\)/s.test(err.message),
    );
  });
});

describe('executor routing', () => {
  const rejected = async (parts: WireJson[]) => {
    const client = await sdkClient(registry.url);
    return errorOf(await send(client, parts));
  };

  test('a message with no parts is invalid params (-32602 / HTTP 400) with an example of a valid part', async () => {
    const v1 = await rpc(sendMessageBody('SendMessage', wireMessage([])));
    assert.equal(v1.body.error?.code, -32602);
    assert.match(v1.body.error.message, /parts is empty/);
    assert.match(v1.body.error.message, /"search"/);
    // Without the parts member, or null: in ProtoJSON the same as [] (a v1.0 one was a REJECTED task).
    for (const parts of [undefined, null]) {
      const absent = await rpc(sendMessageBody('SendMessage', { messageId: 'm-absent', role: 'ROLE_USER', parts }));
      assert.equal(absent.body.error?.code, -32602, JSON.stringify(absent.body).slice(0, 300));
      assert.equal(absent.body.result, undefined);
      assert.match(absent.body.error.message, /^params\.message\.parts is missing: a message needs at least one part, e\.g\. \{"text": "weather"\}/);
      assert.equal(absent.body.error.data?.[0]?.reason, 'INVALID_PARAMS');
      const restAbsent = await fetch(`${registry.url}/a2a/rest/message:send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body: JSON.stringify({ message: { messageId: 'm-absent', role: 'ROLE_USER', parts } }),
      });
      assert.equal(restAbsent.status, 400);
      assert.match(((await restAbsent.json()) as WireJson).error.message, /^message\.parts is missing/);
      // v0.3 requires parts: the same refusal, with v0.3's example (the SDK's said "must be an array", naming no field).
      const legacyAbsent = await rpc(sendMessageBody('message/send', { kind: 'message', messageId: 'm-absent', role: 'user', parts }), {});
      assert.equal(legacyAbsent.body.error?.code, -32602);
      assert.match(legacyAbsent.body.error.message, /^params\.message\.parts is missing: .*\{"kind": "text", "text": "weather"\}/);
    }
    // A message that is no object was told its messageId is missing.
    for (const message of ['hi', 42, ['weather']]) {
      const odd = await rpc(sendMessageBody('SendMessage', message as unknown as WireJson));
      assert.equal(odd.body.error?.code, -32602);
      assert.match(odd.body.error.message, /^message must be an object: send one message, e\.g\. \{"message": \{"messageId": "m1", "role": "ROLE_USER", "parts": \[\{"text": "weather"\}\]\}\}\.$/);
      assert.equal(odd.body.error.data?.[0]?.metadata?.field, 'message');
    }
    const legacyOdd = await rpc(sendMessageBody('message/send', 'hi' as unknown as WireJson), {});
    assert.match(legacyOdd.body.error.message, /^message must be an object: .*"role": "user", "parts": \[\{"kind": "text", "text": "weather"\}\]/);
    const restOdd = await fetch(`${registry.url}/a2a/rest/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({ message: 'hi' }),
    });
    assert.equal(restOdd.status, 400);
    assert.match(((await restOdd.json()) as WireJson).error.message, /^message must be an object/);
    const legacy = await rpc(sendMessageBody('message/send', { kind: 'message', messageId: 'm0', role: 'user', parts: [] }), {});
    assert.equal(legacy.body.error?.code, -32602);
    // A v0.3 request is shown v0.3 parts (the v1.0 example, copied, was refused for having no "kind").
    assert.match(legacy.body.error.message, /parts is empty: .*\{"kind": "text", "text": "weather"\}.*\{"kind": "data", "data": \{"search"/);
    const notAnObject = await rpc(sendMessageBody('message/send', { kind: 'message', messageId: 'm1', role: 'user', parts: ['weather'] }), {});
    assert.match(notAnObject.body.error.message, /parts\[0\] must be an object such as \{"kind": "text", "text": "\.\.\."\}/);
    const rest = await fetch(`${registry.url}/a2a/rest/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({ message: wireMessage([]) }),
    });
    assert.equal(rest.status, 400);
  });

  test('two operations, unknown keys and wrong types are BAD_REQUEST with paths', async () => {
    let error = await rejected([dataPart({ get: { id: 'x' }, list: {} })]);
    assert.equal(error.code, 'BAD_REQUEST');
    assert.match(error.message, /2 operations/);
    error = await rejected([dataPart({ lookup: {} })]);
    assert.equal(error.code, 'BAD_REQUEST');
    assert.match(error.message, /unknown key\(s\) "lookup"/);
    error = await rejected([dataPart({ search: { query: 42 } })]);
    assert.equal(error.code, 'BAD_REQUEST');
    assert.equal(error.details[0].path, '/parts/0/data/search/query');
    error = await rejected([dataPart({ list: { pageSize: 5, color: 'red' } })]);
    assert.match(error.message, /color/);
    // An unknown key also says which keys are accepted where it was (it only said which was wrong).
    error = await rejected([dataPart({ search: { query: 'x', filter: { onwer: 'bob' } } })]);
    assert.equal(error.details[0].path, '/parts/0/data/search/filter');
    assert.match(error.details[0].message, /onwer/);
    assert.match(error.details[0].hint, /^Accepted keys here: kind, tags, inputModes, .*owner.*verified\.$/);
    assert.match(error.message, /onwer.*Accepted keys here: kind, tags/);
    error = await rejected([dataPart({ search: { qurey: 'x' } })]);
    assert.equal(error.details[0].hint, 'Accepted keys here: query, filter, limit, pageToken, resultsPer.');
    // Many unknown keys: the first ten, clipped, and how many more (contract/findings.ts). Each was
    // named, in the message, the finding and the text: 2,000 short keys were answered 100 KB.
    const many = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, 1]));
    error = await rejected([dataPart({ search: { query: 'x', ...many } })]);
    assert.equal(error.details[0].message, `Unrecognized keys: ${Array.from({ length: 10 }, (_, i) => `"k${i}"`).join(', ')} and 1,990 more`);
    assert.ok(error.message.length < 400, error.message.slice(0, 600));
    error = await rejected([dataPart({ search: { query: 'x', ['k'.repeat(5000)]: 1 } })]);
    assert.match(error.details[0].message, /^Unrecognized key: "k{58}…$/);
    // More findings than a refusal lists (20 of the arguments): the rest counted, not dropped unsaid.
    const counted = await send(await sdkClient(registry.url), [dataPart({ search: { query: 'x', filter: { tags: Array(20).fill(1), inputModes: Array(20).fill(1) } } })]);
    error = errorOf(counted);
    assert.equal(error.details.length, 21);
    // The text lists ten, then how many more of those the error has, then the count of those it has not (it said "… and 11 more" of 30).
    assert.match(counted.status.message.parts[0].text, /\n- … and 10 more\n- \/parts\/0\/data\/search\/filter\/inputModes\/0: and 20 more findings, not listed: a refusal lists the first 20 \(hint: Fix the ones listed/);
    assert.deepEqual(error.details[20], {
      path: '/parts/0/data/search/filter/inputModes/0',
      rule: 'more-findings',
      message: 'and 20 more findings, not listed: a refusal lists the first 20',
      hint: 'Fix the ones listed (they are likely alike), then send the request again to see any left.',
    });
    error = await rejected([dataPart(many)]);
    assert.match(error.message, /^Data part 0 has unknown key\(s\) "k0", "k1", .*"k9" and 1,990 more\. /);
    assert.ok(error.message.length < 1000, error.message.slice(0, 1200));
    // The card (or toolspec) sent as the register arguments themselves: told how to wrap it, its keys named once.
    error = await rejected([dataPart({ register: { name: 'Bare', supportedInterfaces: [{ url: 'https://bare.example.org/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] } })]);
    assert.equal(error.details[0].path, '/parts/0/data/register');
    assert.equal(error.details[0].hint, 'This is an agent card: send it as {"register": {"agentCard": {...}}}.');
    assert.equal(error.message.match(/supportedInterfaces/g)?.length, 1, error.message);
    error = await rejected([dataPart({ register: { tools: [] } })]);
    assert.match(error.details[0].hint, /^This is an MCP toolspec: send it as \{"register": \{"toolspec"/);
    // A value JSON makes easy to write in the wrong type is told how to write it.
    error = await rejected([dataPart({ search: { query: 'x', filter: { tags: 'finance', streaming: 'true', protocolVersion: 1.0 }, limit: '20' } })]);
    const hints = Object.fromEntries(error.details.map((d: { path: string; hint?: string }) => [d.path.replace('/parts/0/data/search/', ''), d.hint]));
    assert.deepEqual(hints, {
      'filter/tags': 'Give a list: ["finance"].',
      'filter/streaming': 'Write true without quotes.',
      'filter/protocolVersion': 'Give it as a string, in quotes: "1" (or "1.0": JSON reads 1.0 as the number 1).',
      limit: 'Write 20 without quotes.',
    });
    assert.match(error.message, /filter\/tags: .*\(Give a list: \["finance"\]\)/);
    error = await rejected([dataPart({ search: { query: 'x', filter: { inputModes: [] } } })]);
    assert.equal(error.details[0].hint, 'Give at least one value, or leave the key out where it is optional.');
    error = await rejected([dataPart([1, 2])]);
    assert.match(error.message, /not a JSON object/);
    // An empty object names what it lacks (it read "The message's text is empty").
    error = await rejected([dataPart({})]);
    assert.match(error.message, /^Data part 0 is an empty object: it needs one operation key \(register, /);
    assert.equal(error.details[0].path, '/parts/0/data');
  });

  test('a v0.3 request with an unknown key is shown v0.3 parts and methods, a v1.0 one v1.0 parts', async () => {
    const legacyPart = (data: WireJson) => ({ kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'data', data }] });
    const legacy = await rpc(sendMessageBody('message/send', legacyPart({ lookup: {} })), {});
    assert.equal(legacy.body.result?.status?.state, 'rejected');
    const said = legacy.body.result.status.message.parts.find((p: WireJson) => p.kind === 'data').data.error.message as string;
    assert.match(said, /unknown key\(s\) "lookup"\. Send one data part \{"kind": "data", "data": \{<operation>: \{\.\.\.\}\}\} whose/);
    assert.match(said, /\(message\/stream, with a token\)/);
    assert.match(said, /\{"kind": "file", "file": \{"name": "agent-card\.json"/);
    assert.doesNotMatch(said, /"mediaType"|SendStreamingMessage/);
    const v1 = await rpc(sendMessageBody('SendMessage', wireMessage([{ data: { lookup: {} }, mediaType: 'application/json' }])));
    const v1Said = v1.body.result.task.status.message.parts.find((p: WireJson) => p.data).data.error.message as string;
    assert.match(v1Said, /Send one data part \{"data": \{<operation>: \{\.\.\.\}\}, "mediaType": "application\/json"\}.*\(SendStreamingMessage, with a token\)/);
  });

  test('a v0.3 file part with file.uri, or an empty part, is declined in v0.3 terms (it was told of URL parts and raw, which v0.3 has not)', async () => {
    const legacySaid = async (part: WireJson): Promise<string> => {
      const answer = await rpc(sendMessageBody('message/send', { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [part] }), {});
      const message = answer.body.result?.status?.message;
      assert.equal(answer.body.result?.status?.state, 'rejected', JSON.stringify(answer.body).slice(0, 400));
      return message.parts.find((p: WireJson) => p.kind === 'data').data.error.message as string;
    };
    const uri = await legacySaid({ kind: 'file', file: { uri: 'https://example.com/agent-card.json', mimeType: 'application/json' } });
    assert.match(uri, /^Part 0 is a file part with file\.uri: the registry does not fetch a file part's URI\. Send the document's bytes in file\.bytes \(a file part \{"kind": "file", "file": \{/);
    assert.match(uri, /\{"register": \{"url": "https:\/\/\.\.\."\}\}/);
    assert.doesNotMatch(uri, /URL part/);
    // An empty part: the SDK's v0.3 readers (JSON-RPC, gRPC) refuse one before it runs today, so
    // it is asked of the parser that words the refusal, in each generation.
    const emptyPart = (generation: 'v0.3' | 'v1.0') => {
      const empty = { messageId: 'm', parts: [{ content: undefined, metadata: undefined, filename: '', mediaType: '' }] } as unknown as Message;
      try {
        parseRequest(empty, { maxDocumentBytes: 10_240, generation });
      } catch (error) {
        return (error as Error).message;
      }
      return 'accepted';
    };
    assert.equal(emptyPart('v0.3'), 'Part 0 is empty: a part needs its content, the text of a text part, the data of a data part, or file.bytes of a file part.');
    assert.equal(emptyPart('v1.0'), 'Part 0 is empty: a part needs one of text, data or raw.');
  });

  test('a REJECTED answer carries a text part and the error data part in its status message', async () => {
    const client = await sdkClient(registry.url);
    const task = await op(client, { get: { id: 'no-such-entry' } });
    assert.equal(stateOf(task), 'TASK_STATE_REJECTED');
    const parts = task.status.message.parts;
    assert.ok(parts.some((p: WireJson) => typeof p.text === 'string' && p.text.startsWith('NOT_FOUND')));
    assert.equal(errorOf(task).code, 'NOT_FOUND');
  });

  test('a URL part is declined, pointing to register by URL', async () => {
    const error = await rejected([{ url: 'https://example.com/agent-card.json', mediaType: 'application/json' }]);
    assert.equal(error.code, 'BAD_REQUEST');
    assert.match(error.message, /is a URL part.*\{"register": \{"url": "https:\/\/\.\.\."\}\}/);
  });
});

describe('raw HTTP', () => {
  test('without A2A-Version the request is v0.3: message/send works, SendMessage does not', async () => {
    const legacy = await rpc(sendMessageBody('message/send', { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: 'weather' }] }), {});
    assert.equal(legacy.body.result?.kind, 'task');
    assert.equal(legacy.body.result.status.state, 'completed');
    const v1WithoutHeader = await rpc(sendMessageBody('SendMessage', wireMessage([{ text: 'weather' }])), {});
    assert.equal(v1WithoutHeader.body.error?.code, -32601);
    const v1 = await rpc(sendMessageBody('SendMessage', wireMessage([{ text: 'weather' }])));
    assert.equal(v1.body.result?.task?.status?.state, 'TASK_STATE_COMPLETED');
  });

  test('an unsupported A2A-Version is refused', async () => {
    const res = await rpc(sendMessageBody('SendMessage', wireMessage([{ text: 'x' }])), { 'A2A-Version': '9.9' });
    assert.equal(res.body.error?.code, -32009);
  });

  test('a body over the limit gets a JSON-RPC error, not an HTML page', async () => {
    const huge = 'x'.repeat(2 * 1024 * 1024);
    const res = await rpc(sendMessageBody('SendMessage', wireMessage([{ text: huge }])));
    assert.match(res.contentType, /json/);
    assert.equal(res.body.jsonrpc, '2.0');
    assert.equal(res.body.error.code, -32600);
    assert.match(res.body.error.message, /limit is \d+ bytes/);
  });

  test('a body that is not JSON gets -32700', async () => {
    const res = await rpc('{"jsonrpc": "2.0", "id": 1, "method": ');
    assert.equal(res.body.error.code, -32700);
  });

  test('HTTP+JSON: too large and malformed bodies get google.rpc.Status JSON bodies', async () => {
    const big = await fetch(`${registry.url}/a2a/rest/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({ message: wireMessage([{ text: 'x'.repeat(2 * 1024 * 1024) }]) }),
    });
    assert.equal(big.status, 413);
    const bigBody = (await big.json()) as WireJson;
    assert.equal(bigBody.error.code, 413);
    const bad = await fetch(`${registry.url}/a2a/rest/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: '{nope',
    });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as WireJson).error.status, 'INVALID_ARGUMENT');
  });

  test('a 10 KB document in base64 fits in the body limit', async () => {
    // Just under 10,240 bytes: the body limit lets it through to the validator, which judges it
    // (an invalid card: the answer is a REJECTED task, not a transport error).
    const doc = JSON.stringify({ name: 'x'.repeat(10_200) });
    assert.ok(Buffer.byteLength(doc) <= 10_240);
    const res = await rpc(sendMessageBody('SendMessage', wireMessage([{ raw: Buffer.from(doc).toString('base64'), filename: 'agent-card.json', mediaType: 'application/json' }, { data: { validate: {} }, mediaType: 'application/json' }])));
    assert.equal(res.body.result?.task?.status?.state, 'TASK_STATE_REJECTED', JSON.stringify(res.body).slice(0, 300));
    const error = res.body.result.task.status.message.parts.find((p: WireJson) => p.data).data.error;
    assert.notEqual(error.code, 'TOO_LARGE');
  });

  test('a finished task and an unknown status filter are refused in words a client can read (task states by name, not number), saying what to do instead', async () => {
    const alice = { 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.alice}` };
    const finished = await rpc(sendMessageBody('SendMessage', wireMessage([{ data: { list: {} }, mediaType: 'application/json' }])), alice);
    const taskId = finished.body.result.task.id as string;
    assert.equal(finished.body.result.task.status.state, 'TASK_STATE_COMPLETED');
    const subscribed = await rpc({ jsonrpc: '2.0', id: 2, method: 'SubscribeToTask', params: { id: taskId } }, alice);
    assert.equal(subscribed.body.error?.code, -32004, JSON.stringify(subscribed.body));
    assert.equal(subscribed.body.error.message, `Task ${taskId} is in a terminal state (TASK_STATE_COMPLETED) and cannot be subscribed to: it has ended, so no update of it will come. GetTask reads how it ended.`);
    const continued = await rpc(sendMessageBody('SendMessage', { ...wireMessage([{ text: 'more' }]), taskId }, 3), alice);
    assert.equal(continued.body.error?.code, -32004, JSON.stringify(continued.body));
    assert.equal(
      continued.body.error.message,
      `Task ${taskId} is in a terminal state (TASK_STATE_COMPLETED) and cannot be modified: a task that has ended takes no more messages. Send the message without taskId to start a new task (with the same contextId to stay in its context).`,
    );
    const listed = await rpc({ jsonrpc: '2.0', id: 4, method: 'ListTasks', params: { status: 'TASK_STATE_BOGUS' } }, alice);
    assert.equal(listed.body.error?.code, -32602, JSON.stringify(listed.body));
    assert.match(listed.body.error.message, /^status is not a task state: use one of TASK_STATE_SUBMITTED, TASK_STATE_WORKING, TASK_STATE_COMPLETED, .*TASK_STATE_AUTH_REQUIRED\.$/);
    const rest = await fetch(`${registry.url}/a2a/rest/tasks?status=TASK_STATE_BOGUS`, { headers: alice });
    assert.equal(rest.status, 400);
    assert.match(((await rest.json()) as WireJson).error.message, /^status is not a task state/);
    assert.equal((await rpc({ jsonrpc: '2.0', id: 5, method: 'ListTasks', params: { status: 'TASK_STATE_COMPLETED' } }, alice)).body.result.tasks.length > 0, true);
    // A v0.3 caller is told the state as v0.3 names it (6.3: "completed"), and its own method names
    // (tasks/get): TASK_STATE_COMPLETED and GetTask are no words of its protocol.
    const legacy = { authorization: alice.authorization };
    const canceled = await rpc({ jsonrpc: '2.0', id: 6, method: 'tasks/cancel', params: { id: taskId } }, legacy);
    assert.equal(canceled.body.error?.code, -32002, JSON.stringify(canceled.body));
    assert.equal(canceled.body.error.message, `Task ${taskId} is not cancelable: it has already ended (completed), so there is nothing left to cancel; tasks/get reads how it ended.`);
    const legacyMessage = { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'more' }], taskId };
    const legacyContinued = await rpc({ jsonrpc: '2.0', id: 7, method: 'message/send', params: { message: legacyMessage } }, legacy);
    assert.equal(
      legacyContinued.body.error?.message,
      `Task ${taskId} is in a terminal state (completed) and cannot be modified: a task that has ended takes no more messages. Send the message without taskId to start a new task (with the same contextId to stay in its context).`,
      JSON.stringify(legacyContinued.body),
    );
    const legacySubscribed = await fetch(`${registry.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...legacy },
      body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tasks/resubscribe', params: { id: taskId } }),
    });
    assert.equal(legacyStreamRefusal(await readAnswer(legacySubscribed), 'tasks/resubscribe').error?.message, `Task ${taskId} is in a terminal state (completed) and cannot be subscribed to: it has ended, so no update of it will come. tasks/get reads how it ended.`);
  });

  test('unknown routes answer JSON 404', async () => {
    const res = await fetch(`${registry.url}/nope`);
    assert.equal(res.status, 404);
    assert.match(res.headers.get('content-type') ?? '', /json/);
  });

  test('a path under or beside the JSON-RPC endpoint is 404 with a JSON-RPC error, as HTTP+JSON answers 404 (it was 200, and POST /a2a/jsonrpc/foo ran the request)', async () => {
    const request = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'SendMessage', params: { message: wireMessage([textPart('weather')]) } });
    for (const [method, path] of [
      ['POST', '/a2a/jsonrpc/foo'],
      ['POST', '/a2a/jsonrpc/SendMessage'],
      ['GET', '/a2a/jsonrpc/anything/deep'],
      ['POST', '/a2a/jsonrpc.json'],
      ['POST', '/a2a/jsonrpc;x'],
      // A base URL ending in "/" joined to the path: it was a google.rpc.Status.
      ['POST', '//a2a/jsonrpc'],
    ] as const) {
      const res = await fetch(`${registry.url}${path}`, { method, headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' }, body: method === 'POST' ? request : undefined });
      const body = (await res.json()) as WireJson;
      const ctx = `${method} ${path}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`;
      assert.equal(res.status, 404, ctx);
      assert.equal(body.jsonrpc, '2.0', ctx);
      assert.equal(body.result, undefined, ctx);
      assert.equal(body.error?.code, -32600, ctx);
      assert.equal(body.error.data[0].reason, 'NOT_FOUND', ctx);
      assert.match(body.error.message, new RegExp(`^No route ${method} ${path.replace(/[.;]/g, '\\$&')}\\. .*A2A JSON-RPC at /a2a/jsonrpc`), ctx);
    }
    // The endpoint itself, with a trailing slash too, serves the request.
    for (const path of ['/a2a/jsonrpc', '/a2a/jsonrpc/']) {
      const res = await fetch(`${registry.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' }, body: request });
      assert.equal(res.status, 200, path);
      assert.equal(((await res.json()) as WireJson).result?.task?.status?.state, 'TASK_STATE_COMPLETED', path);
    }
  });

  test('a HEAD gets the header fields of the GET, its Content-Length the GET body\'s length, refusals included (their messages named HEAD: one byte more)', async () => {
    for (const path of [
      '/nope',
      '/search',
      '/mcp',
      '/a2a/jsonrpc',
      '/a2a/jsonrpc/foo',
      '/a2a/rest/SendMessage',
      '/a2a/rest/tasks/x:cancel',
      '/a2a/rest/tasks/x:cancle',
      '/a2a/rest/message:send',
      '/.well-known/agent-card.json',
      '/agents/no-such-entry/card.json',
    ]) {
      const headers = { 'A2A-Version': '1.0' };
      const get = await fetch(`${registry.url}${path}`, { headers });
      const bytes = (await get.arrayBuffer()).byteLength;
      const head = await fetch(`${registry.url}${path}`, { method: 'HEAD', headers });
      await head.arrayBuffer();
      const ctx = `HEAD ${path}: ${head.status}`;
      assert.equal(head.status, get.status, ctx);
      assert.equal(head.headers.get('allow'), get.headers.get('allow'), ctx);
      assert.equal(head.headers.get('content-type'), get.headers.get('content-type'), ctx);
      assert.equal(head.headers.get('content-length'), String(bytes), ctx);
    }
  });

  test('the JSON-RPC endpoint in another case (/A2A/jsonrpc, which express routes to it) refuses in JSON-RPC too, not as a google.rpc.Status', async () => {
    const post = async (path: string, body: string, type = 'application/json') => {
      const res = await fetch(`${registry.url}${path}`, { method: 'POST', headers: { 'content-type': type, 'A2A-Version': '1.0' }, body });
      return { status: res.status, body: (await res.json()) as WireJson };
    };
    // The SDK serves it there, and the request is counted under its method (it was an HTTP+JSON "POST other")...
    const counted = () => metricValue(registry.url, 'registry_requests_total', 'method="GetTask",');
    const countedBefore = await counted();
    const found = await post('/A2A/JSONRPC', JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'GetTask', params: { id: 'no-such-task' } }));
    assert.deepEqual([found.status, found.body.jsonrpc, found.body.error?.code], [200, '2.0', -32001]);
    assert.equal(await counted(), countedBefore + 1);
    // ...and the registry's own refusals there (the body, the method, the path) were HTTP 400/405/404 google.rpc.Status bodies.
    for (const [what, answer, status, code] of [
      ['not JSON', await post('/A2A/jsonrpc', '{"jsonrpc"'), 200, -32700],
      ['unknown method', await post('/A2A/jsonrpc', JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'Nope', params: {} })), 200, -32601],
      ['wrong media type', await post('/A2A/jsonrpc', JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'GetTask', params: { id: 'x' } }), 'text/plain'), 415, -32005],
      ['path below it', await post('/A2A/Jsonrpc/foo', '{}'), 404, -32600],
    ] as const) {
      const ctx = `${what}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`;
      assert.equal(answer.status, status, ctx);
      assert.equal(answer.body.jsonrpc, '2.0', ctx);
      assert.equal(answer.body.error?.code, code, ctx);
    }
    const get = await fetch(`${registry.url}/A2A/jsonrpc`);
    assert.deepEqual([get.status, get.headers.get('allow'), ((await get.json()) as WireJson).jsonrpc], [405, 'POST', '2.0']);
  });

  test('a route asked with a method it does not take answers 405 with Allow, in the binding of the path (it was 404, as if the path did not exist)', async () => {
    const wrong = async (method: string, path: string) => {
      const res = await fetch(`${registry.url}${path}`, { method, headers: { 'A2A-Version': '1.0' } });
      return { status: res.status, allow: res.headers.get('allow'), body: (await res.json()) as WireJson };
    };
    const rest = await wrong('GET', '/a2a/rest/message:send');
    assert.equal(rest.status, 405);
    assert.equal(rest.allow, 'POST');
    assert.equal(rest.body.error.status, 'UNIMPLEMENTED');
    assert.equal(rest.body.error.message, 'GET is not allowed on /a2a/rest/message:send: it takes POST.');
    assert.equal(rest.body.error.details[0].reason, 'METHOD_NOT_ALLOWED');
    // JSON-RPC: no JSON-RPC request was made, so the HTTP status says it, with a JSON-RPC error.
    const rpcGet = await wrong('GET', '/a2a/jsonrpc');
    assert.equal(rpcGet.status, 405);
    assert.equal(rpcGet.allow, 'POST');
    assert.equal(rpcGet.body.error.code, -32600);
    assert.match(rpcGet.body.error.message, /GET is not allowed on \/a2a\/jsonrpc: it takes POST/);
    for (const [method, path, allow] of [
      ['DELETE', '/.well-known/agent-card.json', 'GET, HEAD'],
      ['PUT', '/a2a/rest/tasks/some-task', 'GET, HEAD'],
      ['POST', '/a2a/rest/tasks', 'GET, HEAD'],
      ['POST', '/healthz', 'GET, HEAD'],
      ['GET', '/search', 'POST'],
    ] as const) {
      const answer = await wrong(method, path);
      assert.equal(answer.status, 405, `${method} ${path}`);
      assert.equal(answer.allow, allow, `${method} ${path}`);
    }
    // ARD's own error shape on its paths.
    assert.equal((await wrong('GET', '/search')).body.registryCode, 'METHOD_NOT_ALLOWED');
    // A path no route has stays 404, whatever the method.
    assert.equal((await wrong('POST', '/nope')).status, 404);
  });

  test('a wrong method or an unknown path without A2A-Version is 405 with Allow (or 404), not a version error: such a route has no version to negotiate', async () => {
    const bare = async (method: string, path: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${registry.url}${path}`, { method, headers });
      return { status: res.status, allow: res.headers.get('allow'), body: method === 'HEAD' ? undefined : ((await res.json()) as WireJson) };
    };
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const answer = await bare(method, '/a2a/rest/message:send');
      assert.equal(answer.status, 405, method);
      assert.equal(answer.allow, 'POST', method);
      assert.equal(answer.body!.error.details[0].reason, 'METHOD_NOT_ALLOWED', method);
    }
    assert.equal((await bare('HEAD', '/a2a/rest/message:send')).status, 405);
    // OPTIONS, a plain one (no CORS preflight) and without A2A-Version, is answered with the
    // route's methods in Allow, any version named or none: it was the v0.3 version error on HTTP+JSON.
    for (const [path, headers, allow] of [
      ['/a2a/rest/message:send', {}, 'POST'],
      ['/a2a/rest/tasks/x', {}, 'GET, HEAD'],
      ['/a2a/rest/tenant-a/message:stream', {}, 'POST'],
      ['/a2a/rest/tasks/x', { 'A2A-Version': '0.3' }, 'GET, HEAD'],
      // A task's verb: its own methods, as its 405 has them (:cancel listed GET, then refused it).
      ['/a2a/rest/tasks/x:cancel', {}, 'POST'],
      ['/a2a/rest/tenant-a/tasks/x:subscribe', {}, 'GET, HEAD, POST'],
      // Two routers take it (the config list's, the SDK's): the first answered with its GET alone.
      ['/a2a/rest/tasks/x/pushNotificationConfigs', {}, 'GET, HEAD, POST'],
      ['/a2a/rest/tenant-a/tasks/x/pushNotificationConfigs', {}, 'GET, HEAD, POST'],
      ['/a2a/jsonrpc', { 'A2A-Version': '9.9' }, 'POST'],
      // The app's own routes (not the SDK's routers) were 405 "OPTIONS is not allowed".
      ['/.well-known/agent-card.json', {}, 'GET, HEAD'],
      ['/.well-known/ai-catalog.json', {}, 'GET, HEAD'],
      ['/search', {}, 'POST'],
    ] as const) {
      const res = await fetch(`${registry.url}${path}`, { method: 'OPTIONS', headers });
      await res.arrayBuffer();
      assert.equal(res.status, 200, `OPTIONS ${path} ${JSON.stringify(headers)}`);
      assert.equal(res.headers.get('allow'), allow, `OPTIONS ${path}`);
    }
    assert.equal((await bare('OPTIONS', '/a2a/rest/no-such-route:here')).status, 404);
    assert.equal((await bare('OPTIONS', '/a2a/rest/tasks/x:cancle')).status, 404, 'a verb a task does not have, as with any method');
    assert.equal((await bare('POST', '/a2a/rest/tenant-a/tasks')).allow, 'GET, HEAD');
    // An unsupported version named outright, on either binding.
    const rpcGet = await bare('GET', '/a2a/jsonrpc', { 'A2A-Version': '9.9' });
    assert.equal(rpcGet.status, 405);
    assert.match(rpcGet.body!.error.message, /^GET is not allowed on \/a2a\/jsonrpc: it takes POST\.$/);
    const nowhere = await bare('GET', '/a2a/rest/no-such-route:here');
    assert.equal(nowhere.status, 404);
    assert.equal(nowhere.body!.error.details[0].reason, 'NOT_FOUND');
    // A route that takes the method still needs a version it serves.
    const versionless = await bare('GET', '/a2a/rest/tasks/some-task');
    assert.equal(versionless.status, 400);
    assert.equal(versionless.body!.error.details[0].reason, 'VERSION_NOT_SUPPORTED');
    assert.equal((await bare('POST', '/a2a/rest/message:send')).body!.error.details[0].reason, 'VERSION_NOT_SUPPORTED');
  });
});
