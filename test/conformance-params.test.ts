/**
 * Integer request parameters are validated alike on every binding (A2A 3.3.2: servers MUST
 * validate all input parameters; 5.1: functional equivalence): historyLength on GetTask,
 * ListTasks and a message's configuration, over JSON-RPC (v1.0 and v0.3), HTTP+JSON and gRPC,
 * end to end over real HTTP and a real gRPC connection. A bad value is invalid params (-32602,
 * HTTP 400, INVALID_ARGUMENT) naming the field and the rule; a good one is honoured. A message's
 * role, REQUIRED (A2A 4.1.4), alike.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { ListTasksRequest, SendMessageConfiguration, type Task } from '@a2a-js/sdk';
import { dataPart, message, sdkClient, streamEventJson, type WireJson } from './support/client.js';
import { watch } from './support/watch-stream.js';
import { RawA2AClient, errorInfoOf, metadata, sendRequest } from './support/grpc.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';
import { legacyStreamRefusal, readAnswer } from './support/raw-http.js';

let registry: TestRegistry;
let raw: RawA2AClient;
/** A finished task of alice's, with one message in its history. */
let taskId: string;

const NOT_NEGATIVE = 'historyLength must be non-negative';
const NOT_INTEGER = 'historyLength must be a valid integer';
const alice = { authorization: `Bearer ${TOKENS.alice}` };

async function rpc(method: string, params: unknown, version = '1.0'): Promise<WireJson> {
  const res = await fetch(`${registry.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': version, ...alice },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
  });
  // v0.3 message/stream is only refused here: as a 200 event stream of one error event (v0.3 3.3.1).
  if (method === 'message/stream' && version === '0.3') return legacyStreamRefusal(await readAnswer(res), method);
  assert.equal(res.status, 200);
  return (await res.json()) as WireJson;
}

async function rest(path: string, body?: unknown): Promise<{ status: number; body: WireJson }> {
  const res = await fetch(`${registry.url}/a2a/rest${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...alice },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as WireJson };
}

/** A JSON-RPC answer that is invalid params with exactly this message. */
function assertRpcRefusal(answer: WireJson, message: string, what: string): void {
  assert.equal(answer.error?.code, -32602, `${what}: ${JSON.stringify(answer).slice(0, 300)}`);
  assert.equal(answer.error.message, message, what);
  assert.equal(answer.id, 7);
}

/** An HTTP+JSON answer that is 400 INVALID_ARGUMENT with exactly this message. */
function assertRestRefusal(answer: { status: number; body: WireJson }, message: string, what: string): void {
  assert.equal(answer.status, 400, `${what}: ${JSON.stringify(answer.body).slice(0, 300)}`);
  assert.equal(answer.body.error?.status, 'INVALID_ARGUMENT', what);
  assert.equal(answer.body.error.message, message, what);
  assert.equal(answer.body.error.details?.[0]?.reason, 'INVALID_PARAMS', what);
}

const historyOf = (task: WireJson): number => (task.history ?? []).length;
const userMessage = (text: string) => ({ messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text }] });

before(async () => {
  registry = await startTestRegistry({ GRPC_PORT: '0' });
  raw = new RawA2AClient(`127.0.0.1:${registry.grpcUrl!.split(':').at(-1)}`);
  const sent = await rpc('SendMessage', { message: { ...userMessage('x'), parts: [dataPart({ list: {} })] } });
  taskId = sent.result.task.id;
  assert.equal(sent.result.task.history.length, 1);
});
after(async () => {
  raw.close();
  await registry.close();
});

describe('historyLength', () => {
  test('JSON-RPC GetTask refuses what HTTP+JSON refuses: negative, not an integer, not a number', async () => {
    const cases: Array<[unknown, string]> = [
      [-5, NOT_NEGATIVE],
      ['-5', NOT_NEGATIVE],
      ['abc', NOT_INTEGER],
      [true, NOT_INTEGER],
      [1.5, NOT_INTEGER],
      ['', NOT_INTEGER],
      [[], NOT_INTEGER],
      [{}, NOT_INTEGER],
    ];
    for (const [value, message] of cases) {
      assertRpcRefusal(await rpc('GetTask', { id: taskId, historyLength: value }), message, `historyLength ${JSON.stringify(value)}`);
    }
    // The snake_case spelling the SDK also reads is checked too.
    assertRpcRefusal(await rpc('GetTask', { id: taskId, history_length: true }), 'history_length must be a valid integer', 'history_length true');
    for (const [value, message] of [['-5', NOT_NEGATIVE], ['abc', NOT_INTEGER], ['1.5', NOT_INTEGER], ['5abc', NOT_INTEGER]] as const) {
      assertRestRefusal(await rest(`/tasks/${taskId}?historyLength=${value}`), message, `REST historyLength=${value}`);
    }
    // Good values are honoured: 0 drops the history, 1 keeps one message, "1" is ProtoJSON's int32 string form.
    assert.equal(historyOf((await rpc('GetTask', { id: taskId, historyLength: 0 })).result), 0);
    assert.equal(historyOf((await rpc('GetTask', { id: taskId, historyLength: 1 })).result), 1);
    assert.equal(historyOf((await rpc('GetTask', { id: taskId, historyLength: '1' })).result), 1);
    assert.equal(historyOf((await rest(`/tasks/${taskId}?historyLength=0`)).body), 0);
    assert.equal(historyOf((await rest(`/tasks/${taskId}?historyLength=1`)).body), 1);
  });

  test('ListTasks and a message configuration refuse a negative historyLength on JSON-RPC as on HTTP+JSON', async () => {
    assertRpcRefusal(await rpc('ListTasks', { historyLength: -1 }), NOT_NEGATIVE, 'ListTasks -1');
    assertRpcRefusal(await rpc('ListTasks', { historyLength: true }), NOT_INTEGER, 'ListTasks true');
    assertRestRefusal(await rest('/tasks?historyLength=-1'), NOT_NEGATIVE, 'REST ListTasks -1');
    assertRestRefusal(await rest('/tasks?historyLength=1.5'), NOT_INTEGER, 'REST ListTasks 1.5');
    // An integer past int32 is told so (it was "must be a valid integer", of a value that is one).
    const pastInt32 = `${NOT_INTEGER}: 10000000000 is past the int32 range (here 0 to 2147483647)`;
    assertRpcRefusal(await rpc('ListTasks', { historyLength: 1e10 }), pastInt32, 'ListTasks 1e10');
    assertRestRefusal(await rest('/tasks?historyLength=10000000000'), pastInt32, 'REST ListTasks 10000000000');
    assertRpcRefusal(await rpc('ListTasks', { pageSize: '99999999999' }), 'pageSize must be a valid integer: 99999999999 is past the int32 range (here 1 to 100)', 'ListTasks pageSize');

    const configured = (historyLength: unknown) => ({ message: userMessage('weather'), configuration: { historyLength } });
    assertRpcRefusal(await rpc('SendMessage', configured(-1)), `configuration.${NOT_NEGATIVE}`, 'SendMessage -1');
    assertRpcRefusal(await rpc('SendMessage', configured('abc')), `configuration.${NOT_INTEGER}`, 'SendMessage "abc"');
    // A stream is refused before it starts: a plain JSON-RPC error, not an event stream.
    assertRpcRefusal(await rpc('SendStreamingMessage', configured(-1)), `configuration.${NOT_NEGATIVE}`, 'SendStreamingMessage -1');
    assertRestRefusal(await rest('/message:send', configured(-1)), `configuration.${NOT_NEGATIVE}`, 'REST message:send -1');
    assertRestRefusal(await rest('/message:send', configured(true)), `configuration.${NOT_INTEGER}`, 'REST message:send true');

    const listed = (await rpc('ListTasks', { historyLength: 0 })).result.tasks as WireJson[];
    assert.ok(listed.some((t) => t.id === taskId) && listed.every((t) => historyOf(t) === 0));
    assert.equal(historyOf((await rpc('SendMessage', configured(0))).result.task), 0);
  });

  test('a watch\'s renewal answers at most configuration.historyLength messages, as every other message does (it answered the whole history), on JSON-RPC, HTTP+JSON and streamed', async () => {
    const client = await sdkClient(registry.url, { token: TOKENS.alice });
    const log = watch(client, { query: 'history-length-renewal' });
    try {
      const { task } = await log.waitFor((event) => event.task !== undefined, 'the watch\'s task');
      const renewal = (historyLength: number) => ({
        message: { ...userMessage('renew'), taskId: task.id, parts: [dataPart({ renew: {} })] },
        configuration: { historyLength },
      });
      const renewed = await rpc('SendMessage', renewal(0));
      assert.equal(renewed.result?.task?.status?.state, 'TASK_STATE_WORKING', JSON.stringify(renewed).slice(0, 300));
      assert.equal(historyOf(renewed.result.task), 0, 'JSON-RPC, historyLength 0');
      const posted = await rest('/message:send', renewal(0));
      assert.equal(historyOf(posted.body.task), 0, `HTTP+JSON, historyLength 0: ${JSON.stringify(posted.body).slice(0, 200)}`);
      const streamed: WireJson[] = [];
      for await (const event of client.sendMessageStream({ tenant: '', message: { ...message([dataPart({ renew: {} })]), taskId: task.id }, configuration: SendMessageConfiguration.fromJSON({ historyLength: 0 }), metadata: undefined })) {
        streamed.push(streamEventJson(event));
      }
      assert.equal(historyOf(streamed[0]!.task), 0, 'streamed, historyLength 0');
      // The stored task keeps its history, and an answer without the length has it all.
      assert.ok(historyOf((await rpc('GetTask', { id: task.id })).result) >= 1);
      assert.ok(historyOf((await rpc('SendMessage', { message: renewal(0).message })).result.task) >= 1);
    } finally {
      await rpc('CancelTask', { id: (await log.waitFor((event) => event.task !== undefined, 'the task')).task.id });
      log.disconnect();
    }
  });

  test('the v0.3 JSON-RPC methods refuse it too', async () => {
    assertRpcRefusal(await rpc('tasks/get', { id: taskId, historyLength: -5 }, '0.3'), NOT_NEGATIVE, 'tasks/get -5');
    assertRpcRefusal(await rpc('tasks/get', { id: taskId, historyLength: 'abc' }, '0.3'), NOT_INTEGER, 'tasks/get "abc"');
    const legacyMessage = { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'weather' }] };
    assertRpcRefusal(await rpc('message/send', { message: legacyMessage, configuration: { historyLength: -1 } }, '0.3'), `configuration.${NOT_NEGATIVE}`, 'message/send -1');
  });

  test('gRPC refuses a negative history_length, and a page_size out of range (naming the field, as JSON-RPC does), with INVALID_ARGUMENT', async () => {
    const md = metadata(alice);
    const refused = async (method: string, request: unknown, message: string) => {
      const answer = await raw.unary(method, request, md);
      assert.equal(answer.error?.code, grpc.status.INVALID_ARGUMENT, `${method}: ${answer.error?.message ?? 'no error'}`);
      assert.equal(answer.error.details, message, method);
      assert.equal(errorInfoOf(answer.error)?.reason, 'INVALID_PARAMS', method);
    };
    await refused('getTask', { tenant: '', id: taskId, historyLength: -5 }, NOT_NEGATIVE);
    await refused('listTasks', ListTasksRequest.fromJSON({ pageSize: 10, historyLength: -1 }), NOT_NEGATIVE);
    // page_size out of range: the same answer as JSON-RPC's and HTTP+JSON's, naming the field (the SDK's named none).
    for (const pageSize of [0, -5, 101]) {
      await refused('listTasks', ListTasksRequest.fromJSON({ pageSize }), 'pageSize must be between 1 and 100');
      const answer = await raw.unary('listTasks', ListTasksRequest.fromJSON({ pageSize }), md);
      assert.deepEqual(errorInfoOf(answer.error!)?.metadata, { field: 'pageSize' }, `page_size ${pageSize}`);
      assert.deepEqual((await rpc('ListTasks', { pageSize })).error?.data?.[0]?.metadata, { field: 'pageSize' }, `JSON-RPC pageSize ${pageSize}`);
    }
    await refused('sendMessage', { ...sendRequest([{ text: 'weather' }]), configuration: SendMessageConfiguration.fromJSON({ historyLength: -1 }) }, `configuration.${NOT_NEGATIVE}`);
    const honoured = await raw.unary('getTask', { tenant: '', id: taskId, historyLength: 0 }, md);
    assert.equal(honoured.error, undefined);
    assert.equal((honoured.value as { history: unknown[] }).history.length, 0);
  });
});

describe('message.role', () => {
  const ROLE_REQUIRED = 'message.role must be "ROLE_USER" or "ROLE_AGENT": a message from a client is "ROLE_USER" (v0.3: "user").';
  const withRole = (role: unknown) => {
    const { role: _, ...message } = userMessage('weather');
    return { message: role === undefined ? message : { ...message, role } };
  };

  test('a v1.0 message without a role, or with one A2A does not have, is refused on JSON-RPC and HTTP+JSON', async () => {
    for (const role of [undefined, 'ROLE_UNSPECIFIED', 'ROLE_BOGUS', 5]) {
      assertRpcRefusal(await rpc('SendMessage', withRole(role)), ROLE_REQUIRED, `SendMessage role ${String(role)}`);
      assertRpcRefusal(await rpc('SendStreamingMessage', withRole(role)), ROLE_REQUIRED, `SendStreamingMessage role ${String(role)}`);
      assertRestRefusal(await rest('/message:send', withRole(role)), ROLE_REQUIRED, `REST message:send role ${String(role)}`);
    }
    assert.equal((await rpc('SendMessage', withRole('ROLE_USER'))).result.task.status.state, 'TASK_STATE_COMPLETED');
    assert.equal((await rest('/message:send', withRole('ROLE_USER'))).status, 200);
  });

  test('a v0.3 message/send (message/stream) without its message, messageId or role is refused naming the field, as v1.0 is (the SDK\'s v0.3 reader named none)', async () => {
    const legacyMessage = { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'weather' }] };
    const { messageId: _, ...withoutId } = legacyMessage;
    const { role: __, ...withoutRole } = legacyMessage;
    for (const [params, field, said] of [
      [{}, 'message', /^message is required: send one message, e\.g\. \{"message": \{"kind": "message", "messageId": "m1", "role": "user"/],
      [{ message: 'weather' }, 'message', /^message must be an object: send one message, e\.g\. \{"message": \{"kind": "message"/],
      [{ message: withoutId }, 'message.messageId', /^message\.messageId is required: an id the client gives each message it sends/],
      [{ message: { ...legacyMessage, messageId: '' } }, 'message.messageId', /^message\.messageId is required: /],
      [{ message: { ...legacyMessage, messageId: 7 } }, 'message.messageId', /^message\.messageId must be a string, not the number 7: send it in quotes \("7"\); it is an id the client gives/],
      [{ message: withoutRole }, 'message.role', /^message\.role must be "user" or "agent": a message from a client is "user"\.$/],
      [{ message: { ...legacyMessage, role: 'ROLE_USER' } }, 'message.role', /^message\.role must be "user" or "agent"/],
    ] as const) {
      for (const method of ['message/send', 'message/stream']) {
        const answer = await rpc(method, params, '0.3');
        const what = `${method} ${JSON.stringify(params).slice(0, 80)}`;
        assert.equal(answer.error?.code, -32602, `${what}: ${JSON.stringify(answer).slice(0, 300)}`);
        assert.match(answer.error.message, said, what);
        assert.equal(answer.error.data?.[0]?.reason, 'INVALID_PARAMS', what);
        assert.deepEqual(answer.error.data?.[0]?.metadata, { field }, what);
        assert.equal(answer.id, 7, what);
      }
    }
    assert.equal((await rpc('message/send', { message: legacyMessage }, '0.3')).result?.status?.state, 'completed');
  });

  test('gRPC refuses a message whose role is unspecified with INVALID_ARGUMENT', async () => {
    const md = metadata(alice);
    const request = sendRequest([{ text: 'weather' }]);
    const answer = await raw.unary('sendMessage', { ...request, message: { ...request.message, role: 0 } }, md);
    assert.equal(answer.error?.code, grpc.status.INVALID_ARGUMENT, answer.error?.message ?? 'no error');
    assert.equal(answer.error.details, ROLE_REQUIRED);
    assert.equal(errorInfoOf(answer.error)?.reason, 'INVALID_PARAMS');
    assert.equal((await raw.unary('sendMessage', request, md)).error, undefined, 'with ROLE_USER it is served');
  });
});

describe('acceptedOutputModes', () => {
  /** The media types of every part an answer's artifacts and status message carry. */
  const partTypes = (task: WireJson): string[] => [
    ...(task.artifacts ?? []).flatMap((artifact: WireJson) => artifact.parts.map((part: WireJson) => part.mediaType ?? part.kind)),
    ...(task.status?.message?.parts ?? []).map((part: WireJson) => part.mediaType ?? part.kind),
  ];
  const sending = (modes: unknown, parts: WireJson[] = [{ text: 'weather' }]) => ({ message: { ...userMessage('x'), parts }, configuration: { acceptedOutputModes: modes } });
  const legacySending = (modes: unknown) => ({
    message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'weather' }] },
    configuration: { acceptedOutputModes: modes },
  });
  const NONE = /^configuration\.acceptedOutputModes \["image\/png"\] accepts none of the media types the registry answers in: application\/json \(a data part, for programs\) and text\/plain \(a text part, a summary for people\)\./;
  const FIELD = { field: 'configuration.acceptedOutputModes', supportedMediaTypes: 'application/json, text/plain' };

  test('the answer keeps the parts of the media types accepted, on JSON-RPC (v1.0 and v0.3) and HTTP+JSON; the task as stored keeps both', async () => {
    for (const [modes, kept] of [
      [['text/plain'], ['text/plain']],
      [['application/json; charset=utf-8'], ['application/json']],
      [['TEXT/*', 'image/png'], ['text/plain']],
      [['text'], ['text/plain']], // a bare name that clearly means one (as A2A samples send it)
      [['*/*'], ['application/json', 'text/plain']],
      [[], ['application/json', 'text/plain']],
    ] as const) {
      const what = JSON.stringify(modes);
      const task = (await rpc('SendMessage', sending(modes))).result.task;
      assert.deepEqual([...new Set(partTypes(task))].sort(), kept, `JSON-RPC ${what}`);
      const overRest = await rest('/message:send', sending(modes));
      assert.deepEqual([...new Set(partTypes(overRest.body.task))].sort(), kept, `HTTP+JSON ${what}`);
      const legacy = (await rpc('message/send', legacySending(modes), '0.3')).result;
      assert.deepEqual([...new Set(partTypes(legacy))].sort(), kept.map((type) => (type === 'text/plain' ? 'text' : 'data')), `v0.3 ${what}`);
      // Only the answer is tailored: GetTask carries no list, and reads the task whole.
      assert.deepEqual(partTypes((await rpc('GetTask', { id: task.id })).result).sort(), ['application/json', 'text/plain'], `GetTask after ${what}`);
    }
    // A declined request's status message too: its data part (the error) for a program, its text for a person.
    const declined = (await rpc('SendMessage', sending(['application/json'], [dataPart({ get: {} })]))).result.task;
    assert.equal(declined.status.state, 'TASK_STATE_REJECTED');
    assert.deepEqual(partTypes(declined), ['application/json']);
    assert.equal(declined.status.message.parts[0].data.error.code, 'BAD_REQUEST');
  });

  test('a list naming nothing the registry answers in is ContentTypeNotSupportedError before anything runs (-32005, HTTP 400, gRPC INVALID_ARGUMENT); one that is no list is invalid params', async () => {
    for (const method of ['SendMessage', 'SendStreamingMessage']) {
      const answer = await rpc(method, sending(['image/png']));
      assert.equal(answer.error?.code, -32005, `${method}: ${JSON.stringify(answer).slice(0, 300)}`);
      assert.match(answer.error.message, NONE, method);
      assert.deepEqual(answer.error.data?.[0]?.metadata, FIELD, method);
      assert.equal(answer.error.data?.[0]?.reason, 'CONTENT_TYPE_NOT_SUPPORTED', method);
    }
    const legacy = await rpc('message/send', legacySending(['image/png']), '0.3');
    assert.equal(legacy.error?.code, -32005, JSON.stringify(legacy));
    assert.match(legacy.error.message, NONE);
    for (const path of ['/message:send', '/message:stream']) {
      const overRest = await rest(path, sending(['image/png']));
      assert.equal(overRest.status, 400, path);
      assert.equal(overRest.body.error.status, 'INVALID_ARGUMENT', path);
      assert.match(overRest.body.error.message, NONE, path);
      assert.deepEqual(overRest.body.error.details?.[0], { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'CONTENT_TYPE_NOT_SUPPORTED', domain: 'a2a-protocol.org', metadata: FIELD }, path);
    }
    // Refused before it runs: no task was made (a write would not have been done either).
    const listed = (await rpc('ListTasks', { pageSize: 100 })).result.tasks.length;
    await rpc('SendMessage', sending(['image/png']));
    assert.equal((await rpc('ListTasks', { pageSize: 100 })).result.tasks.length, listed);

    const notAList = 'configuration.acceptedOutputModes must be a list of the media types the client accepts in the answer, e.g. ["application/json", "text/plain"] (or ["text/plain"] for the summaries alone).';
    for (const modes of ['text/plain', [5], { text: true }]) {
      assertRpcRefusal(await rpc('SendMessage', sending(modes)), `params.${notAList}`, `JSON-RPC ${JSON.stringify(modes)}`);
      assertRpcRefusal(await rpc('message/send', legacySending(modes), '0.3'), `params.${notAList}`, `v0.3 ${JSON.stringify(modes)}`);
      const overRest = await rest('/message:send', sending(modes));
      assert.equal(overRest.status, 400);
      assert.equal(overRest.body.error.message, notAList);
    }
  });

  test('gRPC: unary and streamed answers keep the accepted parts; none accepted is INVALID_ARGUMENT CONTENT_TYPE_NOT_SUPPORTED', async () => {
    const md = metadata(alice);
    const request = (modes: string[]) => ({ ...sendRequest([{ text: 'weather' }]), configuration: SendMessageConfiguration.fromJSON({ acceptedOutputModes: modes }) });
    const unary = await raw.unary('sendMessage', request(['text/plain']), md);
    const task = (unary.value as { payload: { value: Task } }).payload.value;
    assert.deepEqual(task.artifacts.flatMap((artifact) => artifact.parts.map((part) => part.mediaType)), ['text/plain']);
    const streamed = await raw.stream('sendStreamingMessage', request(['application/json']), md);
    assert.equal(streamed.error, undefined);
    const chunks = streamed.events.filter((event) => event.artifactUpdate);
    assert.ok(chunks.length >= 1);
    assert.deepEqual([...new Set(chunks.flatMap((event) => event.artifactUpdate.artifact.parts.map((part: WireJson) => part.mediaType)))], ['application/json']);
    for (const answer of [await raw.unary('sendMessage', request(['image/png']), md), await raw.stream('sendStreamingMessage', request(['image/png']), md)]) {
      assert.equal(answer.error?.code, grpc.status.INVALID_ARGUMENT, answer.error?.message ?? 'no error');
      assert.match(answer.error.details, NONE);
      assert.equal(errorInfoOf(answer.error)?.reason, 'CONTENT_TYPE_NOT_SUPPORTED');
      assert.deepEqual(errorInfoOf(answer.error)?.metadata, FIELD);
    }
  });
});

describe('bool parameters', () => {
  test('includeArtifacts and returnImmediately: a JSON boolean on JSON-RPC and in bodies, "true" or "false" in a query; anything else is invalid params', async () => {
    // The SDK read the JSON string "false" as true (Boolean("false")): the artifacts came although
    // the client said no; and in a query anything but "true" as false.
    const NOT_BOOLEAN = 'includeArtifacts must be true or false (a JSON boolean, not a string or number)';
    for (const value of ['false', 'true', 'yes', 0, 1]) {
      assertRpcRefusal(await rpc('ListTasks', { includeArtifacts: value }), NOT_BOOLEAN, `ListTasks includeArtifacts ${JSON.stringify(value)}`);
    }
    assertRpcRefusal(await rpc('ListTasks', { include_artifacts: 'false' }), 'include_artifacts must be true or false (a JSON boolean, not a string or number)', 'snake_case');
    for (const value of ['yes', 'TRUE', '1', '']) {
      assertRestRefusal(await rest(`/tasks?includeArtifacts=${value}`), 'includeArtifacts must be "true" or "false"', `REST includeArtifacts=${value}`);
    }
    const configured = (returnImmediately: unknown) => ({ message: userMessage('weather'), configuration: { returnImmediately } });
    const NOT_BOOLEAN_RETURN = 'configuration.returnImmediately must be true or false (a JSON boolean, not a string or number)';
    assertRpcRefusal(await rpc('SendMessage', configured('false')), NOT_BOOLEAN_RETURN, 'SendMessage returnImmediately "false"');
    assertRestRefusal(await rest('/message:send', configured(1)), NOT_BOOLEAN_RETURN, 'REST message:send returnImmediately 1');

    // Good values are honoured.
    const withArtifacts = (tasks: WireJson[]) => tasks.filter((t) => t.artifacts !== undefined).length;
    assert.equal(withArtifacts((await rpc('ListTasks', { includeArtifacts: false })).result.tasks), 0);
    assert.ok(withArtifacts((await rpc('ListTasks', { includeArtifacts: true })).result.tasks) > 0);
    assert.equal(withArtifacts((await rest('/tasks?includeArtifacts=false')).body.tasks), 0);
    assert.ok(withArtifacts((await rest('/tasks?includeArtifacts=true')).body.tasks) > 0);
    assert.equal((await rpc('SendMessage', configured(false))).result.task.status.state, 'TASK_STATE_COMPLETED');
  });
});

describe('repeated query parameters', () => {
  test('a query parameter given twice is invalid params naming it (a repeated contextId reached the task store as an array: HTTP 500)', async () => {
    for (const [query, field] of [
      ['contextId=a&contextId=b', 'contextId'],
      ['status=TASK_STATE_COMPLETED&status=TASK_STATE_FAILED', 'status'],
      ['pageSize=1&pageSize=2', 'pageSize'],
      ['pageToken=a&pageToken=b&pageToken=c', 'pageToken'],
    ] as const) {
      const times = query.split('&').length;
      const answer = await rest(`/tasks?${query}`);
      assertRestRefusal(answer, `${field} is given ${times} times; each query parameter takes one value: send it once`, query);
      assert.deepEqual(answer.body.error.details[0].metadata, { field }, query);
    }
    assertRestRefusal(await rest(`/tasks/${taskId}?historyLength=1&historyLength=2`), 'historyLength is given 2 times; each query parameter takes one value: send it once', 'GetTask');
    // Once each, they are answered.
    assert.equal((await rest('/tasks?contextId=a')).status, 200);
  });
});

describe('unknown query parameters', () => {
  const LIST = 'contextId, status, pageSize, pageToken, historyLength, statusTimestampAfter, includeArtifacts, tenant, A2A-Version';
  const call = async (method: string, path: string): Promise<{ status: number; body: WireJson }> => {
    const res = await fetch(`${registry.url}/a2a/rest${path}`, { method, headers: { 'A2A-Version': '1.0', ...alice } });
    return { status: res.status, body: (await res.json()) as WireJson };
  };

  test('a parameter a task route does not take is invalid params naming the route\'s, as ARD\'s GET /agents answers (the SDK ignored it: ?contextid=x listed every task)', async () => {
    for (const [method, path, field, message] of [
      ['GET', '/tasks?bogus=1', 'bogus', `"bogus" is not a query parameter of GET /tasks, which takes ${LIST}.`],
      ['GET', '/tasks?contextid=x', 'contextid', `"contextid" is not a query parameter of GET /tasks, which takes ${LIST}: send it as contextId (query parameter names are camelCase, A2A 11.5).`],
      ['GET', '/tasks?pageSize=2&context_id=x', 'context_id', `"context_id" is not a query parameter of GET /tasks, which takes ${LIST}: send it as contextId (query parameter names are camelCase, A2A 11.5).`],
      ['GET', '/acme/tasks?bogus=1', 'bogus', `"bogus" is not a query parameter of GET /tasks, which takes ${LIST}.`],
      ['GET', `/tasks/${taskId}?history_length=1`, 'history_length', '"history_length" is not a query parameter of GET /tasks/{id}, which takes historyLength, tenant, A2A-Version: send it as historyLength (query parameter names are camelCase, A2A 11.5).'],
      ['GET', `/tasks/${taskId}?pageSize=1`, 'pageSize', '"pageSize" is not a query parameter of GET /tasks/{id}, which takes historyLength, tenant, A2A-Version.'],
      ['GET', `/tasks/${taskId}/pushNotificationConfigs?page_size=1`, 'page_size', '"page_size" is not a query parameter of GET /tasks/{id}/pushNotificationConfigs, which takes pageSize, pageToken, tenant, A2A-Version: send it as pageSize (query parameter names are camelCase, A2A 11.5).'],
      ['GET', `/tasks/${taskId}/pushNotificationConfigs/c1?x=1`, 'x', '"x" is not a query parameter of GET /tasks/{id}/pushNotificationConfigs/{configId}, which takes tenant, A2A-Version.'],
      ['DELETE', `/tasks/${taskId}/pushNotificationConfigs/c1?x=1`, 'x', '"x" is not a query parameter of DELETE /tasks/{id}/pushNotificationConfigs/{configId}, which takes tenant, A2A-Version.'],
      // The version may come as a query parameter (A2A 3.6.1), named as the spec spells it.
      ['GET', `/tasks/${taskId}?a2a-version=1.0`, 'a2a-version', '"a2a-version" is not a query parameter of GET /tasks/{id}, which takes historyLength, tenant, A2A-Version: send it as A2A-Version.'],
      ['POST', `/tasks/${taskId}:cancel?force=true`, 'force', '"force" is not a query parameter of POST /tasks/{id}:cancel, which takes tenant, A2A-Version.'],
    ] as const) {
      const answer = await call(method, path);
      assertRestRefusal(answer, message, `${method} ${path}`);
      assert.deepEqual(answer.body.error.details[0].metadata, { field }, `${method} ${path}`);
    }
    // Every parameter of the binding (A2A 11.5), as the SDK's HTTP+JSON client sends them, is taken.
    const all = `contextId=x&status=TASK_STATE_COMPLETED&pageSize=5&historyLength=0&statusTimestampAfter=2020-01-01T00:00:00Z&includeArtifacts=false&tenant=`;
    assert.equal((await call('GET', `/tasks?${all}`)).status, 200);
    assert.equal((await call('GET', `/tasks/${taskId}?historyLength=1&tenant=`)).status, 200);
    const byQuery = await fetch(`${registry.url}/a2a/rest/tasks/${taskId}?A2A-Version=1.0`, { headers: alice });
    assert.equal(byQuery.status, 200, 'A2A 3.6.1\'s own example: GET /tasks/task-123?A2A-Version=1.0');
    assert.equal((await call('GET', `/tasks/${taskId}/pushNotificationConfigs?pageSize=1&tenant=`)).status, 200);
  });
});

describe('string parameters sent as arrays or objects over JSON-RPC', () => {
  test('are invalid params naming the field: the SDK read ["a", "b"] as the string "a,b" and a one-element array as its element', async () => {
    const message = (field: string, what: string) => `${field} must be one string, not ${what}: a request takes one value (for several, send one request each)`;
    assertRpcRefusal(await rpc('ListTasks', { contextId: ['a', 'b'] }), message('contextId', 'an array of 2'), 'ListTasks contextId');
    assertRpcRefusal(await rpc('ListTasks', { statusTimestampAfter: ['2020-01-01T00:00:00Z'] }), message('statusTimestampAfter', 'an array of 1'), 'ListTasks statusTimestampAfter');
    assertRpcRefusal(await rpc('ListTasks', { page_token: { next: 'x' } }), message('page_token', 'an object'), 'ListTasks page_token');
    assertRpcRefusal(await rpc('GetTask', { id: [taskId] }), message('id', 'an array of 1'), 'GetTask id');
    assertRpcRefusal(await rpc('tasks/get', { id: [taskId] }, '0.3'), message('id', 'an array of 1'), 'v0.3 tasks/get id');
    // metadata is an object by definition, and one value each is answered.
    assert.ok((await rpc('GetTask', { id: taskId })).result, 'GetTask with one id');
    assert.ok((await rpc('ListTasks', { contextId: 'a' })).result, 'ListTasks with one contextId');
    assert.notEqual((await rpc('CancelTask', { id: taskId, metadata: { why: 'test' } })).error?.code, -32602, 'CancelTask with metadata');
  });
});

describe('string parameters sent as numbers or booleans over JSON-RPC', () => {
  test('are invalid params naming the field, v1.0 and v0.3 alike: the SDK read `"id": true` as the task "true" (Task not found: true)', async () => {
    const message = (field: string, value: unknown) => `${field} must be a string, not the ${typeof value} ${String(value)}: send it in quotes`;
    const cases: Array<[string, unknown, string, unknown, string?]> = [
      ['GetTask', { id: true }, 'id', true],
      ['GetTask', { id: 5 }, 'id', 5],
      ['CancelTask', { id: 5 }, 'id', 5],
      ['SubscribeToTask', { id: false }, 'id', false],
      ['ListTasks', { contextId: 12 }, 'contextId', 12],
      ['ListTasks', { status: true }, 'status', true],
      ['CreateTaskPushNotificationConfig', { taskId: 5, url: 'https://example.com/hook' }, 'taskId', 5],
      ['GetTaskPushNotificationConfig', { taskId: taskId, id: 1 }, 'id', 1],
      ['ListTaskPushNotificationConfigs', { task_id: 3 }, 'task_id', 3],
      ['tasks/get', { id: true }, 'id', true, '0.3'],
      ['tasks/cancel', { id: 5 }, 'id', 5, '0.3'],
      ['tasks/pushNotificationConfig/set', { taskId: 5, pushNotificationConfig: { url: 'https://example.com/hook' } }, 'taskId', 5, '0.3'],
    ];
    for (const [method, params, field, value, version] of cases) {
      const answer = await rpc(method, params, version);
      assertRpcRefusal(answer, message(field, value), `${method} ${JSON.stringify(params)}`);
      assert.ok(JSON.stringify(answer.error.data).includes(`"field":"${field}"`), `${method}: ${JSON.stringify(answer.error)}`);
    }
    // An enum takes its number in ProtoJSON, and a string id is answered.
    assert.ok((await rpc('ListTasks', { status: 3 })).result, 'ListTasks with status 3');
    assert.ok((await rpc('GetTask', { id: taskId })).result, 'GetTask with a string id');
  });
});

describe("a message's own fields", () => {
  /** alice's tasks, counted: a refused message stores none. */
  const taskCount = async (): Promise<number> => (await rpc('ListTasks', { pageSize: 1 })).result.totalSize as number;
  const legacyMessage = (fields: WireJson) => ({ kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'weather' }], ...fields });
  /** Every door a JSON message comes through: v1.0 JSON-RPC and HTTP+JSON (sent and streamed), and v0.3 JSON-RPC unless `v1Only`. */
  async function refusedEverywhere(fields: WireJson, field: string, message: string | RegExp, v1Only = false): Promise<void> {
    const what = `${JSON.stringify(fields).slice(0, 80)}`;
    const check = (answer: { message?: string; data?: WireJson }, where: string) => {
      if (typeof message === 'string') assert.equal(answer.message, message, `${where} ${what}`);
      else assert.match(answer.message ?? '', message, `${where} ${what}`);
      assert.deepEqual(answer.data?.metadata, { field }, `${where} ${what}`);
      assert.equal(answer.data?.reason, 'INVALID_PARAMS', `${where} ${what}`);
    };
    for (const method of ['SendMessage', 'SendStreamingMessage']) {
      const answer = await rpc(method, { message: { ...userMessage('weather'), ...fields } });
      assert.equal(answer.error?.code, -32602, `${method} ${what}: ${JSON.stringify(answer).slice(0, 300)}`);
      check({ message: answer.error.message, data: answer.error.data?.[0] }, method);
    }
    for (const path of ['/message:send', '/message:stream']) {
      const answer = await rest(path, { message: { ...userMessage('weather'), ...fields } });
      assert.equal(answer.status, 400, `${path} ${what}: ${JSON.stringify(answer.body).slice(0, 300)}`);
      check({ message: answer.body.error?.message, data: answer.body.error?.details?.[0] }, path);
    }
    if (v1Only) return;
    for (const method of ['message/send', 'message/stream']) {
      const answer = await rpc(method, { message: legacyMessage(fields) }, '0.3');
      assert.equal(answer.error?.code, -32602, `${method} ${what}: ${JSON.stringify(answer).slice(0, 300)}`);
      check({ message: answer.error.message, data: answer.error.data?.[0] }, method);
    }
  }

  test('an id, extensions or referenceTaskIds of another type than A2A\'s is invalid params naming the field, on JSON-RPC (v1.0 and v0.3) and HTTP+JSON, before anything is stored (the SDK made them strings: contextId ["x", "y"] started the context "x,y")', async () => {
    const before = await taskCount();
    const contextMeaning = 'it is the id of the context the message continues, as the registry answered it (leave it out to start a new one).';
    // The audit's request: the first mistake is told.
    await refusedEverywhere(
      { messageId: { a: 1 }, contextId: ['x', 'y'], extensions: 'abc' },
      'message.messageId',
      'message.messageId must be a string, not an object: it is an id the client gives each message it sends, unique to it (a UUID, say).',
    );
    await refusedEverywhere({ contextId: ['x', 'y'] }, 'message.contextId', `message.contextId must be a string, not an array of 2: ${contextMeaning}`);
    await refusedEverywhere({ contextId: 5 }, 'message.contextId', `message.contextId must be a string, not the number 5: send it in quotes ("5"); ${contextMeaning}`);
    await refusedEverywhere({ taskId: 5 }, 'message.taskId', /^message\.taskId must be a string, not the number 5: send it in quotes \("5"\); it is the id of the task the message continues/);
    await refusedEverywhere({ taskId: true }, 'message.taskId', /^message\.taskId must be a string, not the boolean true: send it in quotes \("true"\)/);
    await refusedEverywhere({ extensions: 'abc' }, 'message.extensions', /^message\.extensions must be a list of strings, not a string: the URIs of the extensions the message uses, e\.g\. \["https:/);
    await refusedEverywhere({ extensions: ['https://example.com/ext', 7] }, 'message.extensions[1]', /^message\.extensions\[1\] must be a string, not the number 7: send it in quotes \("7"\); it is one of the URIs/);
    await refusedEverywhere({ referenceTaskIds: 'xy' }, 'message.referenceTaskIds', /^message\.referenceTaskIds must be a list of strings, not a string: the ids of tasks the message refers to/);
    await refusedEverywhere({ referenceTaskIds: [{ id: 'x' }] }, 'message.referenceTaskIds[0]', /^message\.referenceTaskIds\[0\] must be a string, not an object: it is one of the ids of tasks/);
    // The snake_case names the v1.0 reader takes (ProtoJSON's original field names) are checked as sent.
    await refusedEverywhere({ context_id: ['a'] }, 'message.context_id', /^message\.context_id must be a string, not an array of 1: /, true);
    await refusedEverywhere({ reference_task_ids: [5] }, 'message.reference_task_ids[0]', /^message\.reference_task_ids\[0\] must be a string, not the number 5/, true);
    // A v0.3 messageId that is no string is told so, as v1.0's is.
    await refusedEverywhere({ messageId: 7 }, 'message.messageId', /^message\.messageId must be a string, not the number 7: send it in quotes \("7"\); it is an id the client gives/);
    assert.equal(await taskCount(), before, 'no refused message made a task');

    // Strings, lists of strings and null (absent, as the readers take it) are answered.
    const contextId = `ctx-${crypto.randomUUID()}`;
    const sent = await rpc('SendMessage', { message: { ...userMessage('weather'), contextId, taskId: null, extensions: [], referenceTaskIds: null } });
    assert.equal(sent.result?.task?.contextId, contextId, JSON.stringify(sent).slice(0, 300));
    assert.equal((await rest('/message:send', { message: { ...userMessage('weather'), contextId } })).body.task?.contextId, contextId);
    assert.equal((await rpc('message/send', { message: legacyMessage({ contextId, extensions: [] }) }, '0.3')).result?.contextId, contextId);
  });

  test('a refused part, configuration or metadata names its field in the ErrorInfo, as the message\'s other refusals do, on JSON-RPC (v1.0, v0.3) and HTTP+JSON (it was named in the words only)', async () => {
    await refusedEverywhere({ parts: [{ text: 'weather', filename: 5 }] }, 'message.parts[0].filename', /^(params\.)?message\.parts\[0\]\.filename must be a string\.$/, true);
    await refusedEverywhere({ parts: [{ text: 'weather', data: { list: {} } }] }, 'message.parts[0]', /^(params\.)?message\.parts\[0\] has "text" and "data": /, true);
    await refusedEverywhere({ parts: [{ text: 'weather', metadata: [1] }] }, 'message.parts[0].metadata', /^(params\.)?message\.parts\[0\]\.metadata must be a JSON object/, true);
    await refusedEverywhere({ parts: [] }, 'message.parts', /^(params\.)?message\.parts is empty: a message needs at least one part/);
    const modes = await rpc('SendMessage', { message: userMessage('weather'), configuration: { acceptedOutputModes: 'text/plain' } });
    assert.equal(modes.error?.code, -32602, JSON.stringify(modes).slice(0, 300));
    assert.deepEqual(modes.error.data?.[0]?.metadata, { field: 'configuration.acceptedOutputModes' });
    const metadata = await rest('/message:send', { message: userMessage('weather'), metadata: 'x' });
    assert.equal(metadata.status, 400, JSON.stringify(metadata.body).slice(0, 300));
    assert.deepEqual(metadata.body.error?.details?.[0]?.metadata, { field: 'metadata' });
  });

  test('a part\'s fields written as null are not set (ProtoJSON), on JSON-RPC and HTTP+JSON: "filename": null or "mediaType": null was refused "must be a string"', async () => {
    const nulls = { filename: null, mediaType: null, raw: null, url: null, metadata: null };
    const parts = [{ text: 'weather', ...nulls }];
    const sent = await rpc('SendMessage', { message: { ...userMessage('weather'), parts } });
    assert.equal(sent.result?.task?.status?.state, 'TASK_STATE_COMPLETED', JSON.stringify(sent).slice(0, 300));
    const posted = await rest('/message:send', { message: { ...userMessage('weather'), parts: [{ ...dataPart({ list: {} }), text: null, filename: null }] } });
    assert.equal(posted.body.task?.status?.state, 'TASK_STATE_COMPLETED', JSON.stringify(posted.body).slice(0, 300));
    // A value that is set is still checked.
    const refused = await rpc('SendMessage', { message: { ...userMessage('weather'), parts: [{ text: 'weather', filename: 5 }] } });
    assert.equal(refused.error?.code, -32602, JSON.stringify(refused).slice(0, 300));
    assert.equal(refused.error.message, 'params.message.parts[0].filename must be a string.');
  });

  test(`the ids a client gives (messageId, contextId, taskId, referenceTaskIds) are at most 1,024 characters and printable, on every binding, gRPC included`, async () => {
    const before = await taskCount();
    const tooLong = (field: string, chars: number) => `${field} is ${chars.toLocaleString('en-US')} characters; an id is at most 1,024: send a shorter one (a UUID is 36).`;
    await refusedEverywhere({ contextId: 'c'.repeat(1025) }, 'message.contextId', tooLong('message.contextId', 1025));
    // Characters, not UTF-16 units: 1,024 emoji are 2,048 units, and within the bound.
    await refusedEverywhere({ messageId: '🌤'.repeat(1025) }, 'message.messageId', tooLong('message.messageId', 1025));
    await refusedEverywhere({ taskId: 't'.repeat(5000) }, 'message.taskId', tooLong('message.taskId', 5000));
    await refusedEverywhere({ referenceTaskIds: ['ok', 'r'.repeat(1025)] }, 'message.referenceTaskIds[1]', tooLong('message.referenceTaskIds[1]', 1025));
    const control = (field: string, code: string, at: number) => `${field} holds the control character ${code} (at character ${at}): an id is printable text; send it without control characters.`;
    await refusedEverywhere({ contextId: 'a\u0000b' }, 'message.contextId', control('message.contextId', 'U+0000', 2));
    await refusedEverywhere({ taskId: '\u0007' }, 'message.taskId', control('message.taskId', 'U+0007', 1));
    await refusedEverywhere({ messageId: 'm\u009f' }, 'message.messageId', control('message.messageId', 'U+009F', 2));
    await refusedEverywhere({ referenceTaskIds: ['a\nb'] }, 'message.referenceTaskIds[0]', control('message.referenceTaskIds[0]', 'U+000A', 2));
    await refusedEverywhere({ contextId: 'x\ud800' }, 'message.contextId', /^message\.contextId holds an unpaired surrogate \(\\ud800-\\udfff alone\), which is no Unicode character/);

    // gRPC's protobuf strings are held to the same bound.
    const md = metadata(alice);
    const request = sendRequest([{ text: 'weather' }]);
    for (const [fields, field, said] of [
      [{ contextId: 'a\u0000b' }, 'message.contextId', control('message.contextId', 'U+0000', 2)],
      [{ taskId: 't'.repeat(1025) }, 'message.taskId', tooLong('message.taskId', 1025)],
      [{ referenceTaskIds: ['r\u001b'] }, 'message.referenceTaskIds[0]', control('message.referenceTaskIds[0]', 'U+001B', 2)],
    ] as const) {
      const answer = await raw.unary('sendMessage', { ...request, message: { ...request.message, ...fields } }, md);
      assert.equal(answer.error?.code, grpc.status.INVALID_ARGUMENT, `${field}: ${answer.error?.message ?? 'no error'}`);
      assert.equal(answer.error.details, said, field);
      assert.deepEqual(errorInfoOf(answer.error)?.metadata, { field }, field);
    }
    assert.equal(await taskCount(), before, 'no refused message made a task');

    // At the bound, an id is answered and kept as sent.
    const contextId = '🌤'.repeat(1024);
    assert.equal((await rpc('SendMessage', { message: { ...userMessage('weather'), contextId } })).result?.task?.contextId, contextId);
    const answer = await raw.unary('sendMessage', { ...request, message: { ...request.message, contextId: 'g'.repeat(1024) } }, md);
    assert.equal(answer.error, undefined, answer.error?.message);
  });
});
