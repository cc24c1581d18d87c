/**
 * Hostile input over the real server (127.0.0.1): each kind of garbage gets a clear error in
 * the caller's binding, nothing is stored (the store's change sequence does not move), the
 * server keeps answering, and Object.prototype is never touched.
 */
import assert from 'node:assert/strict';
import { setTimeout } from 'node:timers/promises';
import zlib from 'node:zlib';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config/config.js';
import { createDocumentValidator } from '../src/validation/index.js';
import { mcpServer, toolspec, v1Card } from './support/documents.js';
import { type WireJson } from './support/client.js';
import { connect } from './support/raw-connection.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';
import { assertNoInternals, assertWellFormedJsonRpcAnswer, legacyStreamRefusal, prototypeSnapshot, rawPost, sendMessageBody, type RawAnswer } from './support/raw-http.js';

let registry: TestRegistry;
let seqBefore: number;
let countBefore: Record<string, number>;
const protoBefore = prototypeSnapshot();

const rpc = (body: string | Uint8Array, headers: Record<string, string> = {}) =>
  rawPost(`${registry.url}/a2a/jsonrpc`, body, { headers: { authorization: `Bearer ${TOKENS.alice}`, ...headers } });
const rest = (path: string, body: string) => rawPost(`${registry.url}/a2a/rest${path}`, body, { headers: { authorization: `Bearer ${TOKENS.alice}` } });
const send = (parts: unknown[], method = 'SendMessage') => rpc(sendMessageBody(parts, 1, method));
const data = (value: unknown) => ({ data: value, mediaType: 'application/json' });
const file = (content: string | Buffer, filename = 'agent-card.json', mediaType = 'application/json') => ({
  raw: Buffer.from(content).toString('base64'),
  filename,
  mediaType,
});
/** `[[[…]]]`: n levels of arrays, as text (JSON.stringify could not even write it). */
const deepArrays = (n: number) => '['.repeat(n) + ']'.repeat(n);
const deepObjects = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
/** Puts raw JSON text where the placeholder string is in a serialised body. */
const splice = (body: string, text: string) => body.replace('"__HERE__"', text);

/** The JSON-RPC error of an answer, after checking it is one. */
function rpcError(answer: RawAnswer): WireJson {
  assertWellFormedJsonRpcAnswer(answer, 'SendMessage');
  assertNoInternals(answer.text);
  assert.ok(answer.json?.error, `expected a JSON-RPC error, got ${answer.text.slice(0, 300)}`);
  return answer.json.error;
}

/** The task of a SendMessage answer. */
function taskOf(answer: RawAnswer): WireJson {
  assertWellFormedJsonRpcAnswer(answer, 'SendMessage');
  assertNoInternals(answer.text);
  assert.ok(answer.json?.result?.task, `expected a task, got ${answer.text.slice(0, 300)}`);
  return answer.json.result.task;
}

/** The contract error of a REJECTED task. */
function rejection(answer: RawAnswer): WireJson {
  const task = taskOf(answer);
  assert.equal(task.status.state, 'TASK_STATE_REJECTED', JSON.stringify(task.status).slice(0, 300));
  return task.status.message.parts.find((p: WireJson) => p.data).data.error;
}

const resultData = (answer: RawAnswer): WireJson => {
  const task = taskOf(answer);
  assert.equal(task.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(task.status).slice(0, 400));
  return task.artifacts[0].parts.find((p: WireJson) => p.data).data;
};

before(async () => {
  registry = await startTestRegistry({ REGISTRY_RATE_LIMITS: 'false' });
});
after(() => registry.close());

// Every test here sends something that must not be stored: check the change sequence and the
// counts around each, and that the process is still answering and unpolluted.
beforeEach(async () => {
  seqBefore = await registry.store.lastChangeSeq();
  countBefore = await registry.store.count();
});
afterEach(async () => {
  assert.equal(await registry.store.lastChangeSeq(), seqBefore, 'nothing was written');
  assert.deepEqual(await registry.store.count(), countBefore);
  assert.equal((await fetch(`${registry.url}/healthz`)).status, 200);
  assert.equal(prototypeSnapshot(), protoBefore, 'Object.prototype and friends are untouched');
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

describe('JSON-RPC envelope', () => {
  test('malformed JSON is -32700; JSON texts that are not objects are -32600, saying so', async () => {
    assert.equal(rpcError(await rpc('{"jsonrpc": "2.0", "id": 1, "method": ')).code, -32700);
    for (const [body, kind] of [['null', 'null'], ['42', 'a number'], ['"text"', 'a string'], ['true', 'a boolean']]) {
      const error = rpcError(await rpc(body!));
      assert.equal(error.code, -32600, body);
      assert.match(error.message, new RegExp(`valid JSON but ${kind}, not an object`), body);
    }
  });

  test('an empty body, a batch and a non-object are -32600 with a message that says what to send', async () => {
    const empty = rpcError(await rpc(''));
    assert.equal(empty.code, -32600);
    assert.match(empty.message, /empty/);
    for (const batch of [`[${sendMessageBody([{ text: 'x' }])}]`, '[]', '[1, 2]']) {
      const error = rpcError(await rpc(batch));
      assert.equal(error.code, -32600);
      assert.match(error.message, /Batch requests are not supported/);
    }
  });

  test('jsonrpc, method, params and id are checked, and a usable id is echoed', async () => {
    let error = rpcError(await rpc(JSON.stringify({ id: 7, method: 'SendMessage', params: {} })));
    assert.equal(error.code, -32600);
    assert.match(error.message, /"jsonrpc" must be "2.0"/);
    for (const method of [undefined, 5, '', null]) {
      const answer = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: {} }));
      error = rpcError(answer);
      assert.equal(error.code, -32600);
      assert.match(error.message, /"method"/);
      assert.equal(answer.json!.id, 7);
    }
    for (const params of [[1], 'x', 3, null]) {
      error = rpcError(await rpc(JSON.stringify({ jsonrpc: '2.0', id: 'a', method: 'SendMessage', params })));
      assert.equal(error.code, -32602);
      assert.match(error.message, /"params" must be a JSON object/);
    }
    error = rpcError(await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage' })));
    assert.equal(error.code, -32602);
    assert.match(error.message, /"params" is required/);
    for (const id of [{ a: 1 }, [1], 1.5, true, 'x'.repeat(300)]) {
      const answer = await rpc(JSON.stringify({ jsonrpc: '2.0', id, method: 'SendMessage', params: { message: {} } }));
      error = rpcError(answer);
      assert.equal(error.code, -32600, JSON.stringify(id));
      assert.match(error.message, /"id" must be/);
      assert.equal(answer.json!.id, null);
    }
    // An int64 id is an integer, but read rounded: it was told it must be "an integer".
    const int64 = rpcError(await rpc('{"jsonrpc": "2.0", "id": 12345678901234567890, "method": "SendMessage", "params": {"message": {}}}'));
    assert.equal(int64.code, -32600);
    assert.equal(int64.message, '"id" must be a string (at most 256 characters), an integer or null: 12345678901234567000 is an integer past 2^53 - 1, which is read rounded and could not be answered as sent: send a larger id as a string.');
    // A notification (no id) would run with no one told the outcome: refused, nothing done.
    const notification = rpcError(await rpc(JSON.stringify({ jsonrpc: '2.0', method: 'SendMessage', params: { message: { messageId: 'n', role: 'ROLE_USER', parts: [{ text: 'x' }] } } })));
    assert.equal(notification.code, -32600);
    assert.match(notification.message, /"id" is required/);
    for (const id of ['req-1', 42, null]) {
      const answer = await rpc(JSON.stringify({ jsonrpc: '2.0', id, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } } }));
      assert.equal(answer.json!.id, id);
      assert.equal(taskOf(answer).status.state, 'TASK_STATE_COMPLETED');
    }
  });

  test('a body meant for the other binding says so: HTTP+JSON on the JSON-RPC endpoint, JSON-RPC on HTTP+JSON', async () => {
    const message = { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'weather' }] };
    // It was told "id" is required; given one, it was then told "jsonrpc" must be "2.0".
    const restBody = rpcError(await rpc(JSON.stringify({ message })));
    assert.equal(restBody.code, -32600);
    assert.match(restBody.message, /it is no JSON-RPC request, and this is the JSON-RPC endpoint\. Send it as the params of one, e\.g\. \{"jsonrpc": "2\.0", "id": 1, "method": "SendMessage", "params": \{"message": \{\.\.\.\}\}\}, or POST the body as it is to the HTTP\+JSON binding \(\/a2a\/rest\/message:send\)/);
    // v0.3 has no HTTP+JSON binding here: its method, and no pointer there.
    const legacy = rpcError(await rpc(JSON.stringify({ message: { ...message, kind: 'message', role: 'user' } }), { 'A2A-Version': '' }));
    assert.match(legacy.message, /"method": "message\/send"/);
    assert.doesNotMatch(legacy.message, /a2a\/rest/);
    // It was told "message is required", though its params held one; nothing ran.
    const wrapped = await rest('/message:send', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message } }));
    assert.equal(wrapped.status, 400, wrapped.text);
    assert.equal(wrapped.json!.error.status, 'INVALID_ARGUMENT');
    assert.match(wrapped.json!.error.message, /^The body is a JSON-RPC request \("SendMessage"\), and this is the HTTP\+JSON binding, whose body is the request itself: POST it as it is to the JSON-RPC endpoint \(\/a2a\/jsonrpc\), or send its "params" here/);
    // A JSON-RPC method name used as an HTTP+JSON path is told so, and the route it has (it was a bare "No route").
    for (const [path, route] of [['/message/send', ', or use its HTTP+JSON route, POST /message:send.'], ['/SendStreamingMessage', ', or use its HTTP+JSON route, POST /message:stream.'], ['/GetTask', '.']]) {
      const answer = await rest(path, JSON.stringify({ message }));
      assert.equal(answer.status, 404, path);
      assert.equal(answer.json!.error.message, `No route POST /a2a/rest${path}: "${path.slice(1)}" is a JSON-RPC method name. Send it as a JSON-RPC request to /a2a/jsonrpc${route}`);
    }
    // A JSON-RPC request with a member missing is still told which (not this).
    assert.match(rpcError(await rpc(JSON.stringify({ id: 7, method: 'SendMessage', params: {} }))).message, /"jsonrpc" must be "2.0"/);
  });

  test('an HTTP+JSON body that is JSON but no object (null, "x", 5, [] alike) is one answer, INVALID_REQUEST, showing the binding\'s own body, not JSON-RPC\'s', async () => {
    const shown = 'send one JSON object (the request itself, e.g. POST /message:send takes {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "weather"}]}}).';
    // null and "x" were shown a JSON-RPC request; [] was "The request body must be a JSON object.", INVALID_PARAMS.
    for (const [body, kind] of [['null', 'null'], ['"x"', 'a string'], ['5', 'a number'], ['[]', 'an array'], ['[{"message": {}}]', 'an array']] as const) {
      for (const path of ['/message:send', '/message:stream', '/tasks/t-1/pushNotificationConfigs']) {
        const answer = await rest(path, body);
        assert.equal(answer.status, 400, `${path} ${body}: ${answer.text}`);
        assert.equal(answer.json!.error.status, 'INVALID_ARGUMENT', `${path} ${body}`);
        assert.equal(answer.json!.error.message, `The request body is valid JSON but ${kind}, not an object: ${shown}`, `${path} ${body}`);
        assert.equal(answer.json!.error.details[0].reason, 'INVALID_REQUEST', `${path} ${body}`);
      }
    }
    // The JSON-RPC endpoint shows its own request.
    assert.match(rpcError(await rpc('null')).message, /not an object: send one JSON object \(a JSON-RPC request such as \{"jsonrpc": "2\.0", "id": 1, "method": "SendMessage", "params": \{\.\.\.\}\}\)\.$/);
  });

  test('unknown methods, including prototype names, are -32601', async () => {
    for (const method of ['Nope', '__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      assert.equal(rpcError(await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: {} }))).code, -32601, method);
    }
    // An MCP client at the A2A endpoint is sent to /mcp (it was only shown A2A's methods), in either version.
    for (const headers of [{}, { 'A2A-Version': '' }] as Record<string, string>[]) {
      const mcp = rpcError(await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }), headers));
      assert.equal(mcp.code, -32601);
      assert.match(mcp.message, /^Method not found: "tools\/list"\. The A2A v(1\.0|0\.3) methods are .*\. "tools\/list" is an MCP method: MCP clients connect to \/mcp \(Streamable HTTP\)\.$/);
    }
    assert.doesNotMatch(rpcError(await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'Nope', params: {} }))).message, /MCP/);
  });

  test('parts that are not objects, or whose fields have the wrong types, are -32602 naming the part', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [[null], /parts\[0\] must be an object/],
      [[{ text: 'ok' }, 7], /parts\[1\] must be an object/],
      ['not a list', /parts must be an array/],
      [[{ raw: 5 }], /parts\[0\]\.raw must be a base64 string/],
      [[{ text: 5 }], /parts\[0\]\.text must be a string/],
      [[{ url: {} }], /parts\[0\]\.url must be a string/],
      // A v0.3 file part in a v1.0 request was run as an empty part ("Part 0 is empty").
      [[{ kind: 'file', file: { bytes: 'e30=', name: 'agent-card.json', mimeType: 'application/json' } }], /parts\[0\] is a v0\.3 file part \("file"\), and this request is v1\.0: a v1\.0 part carries a file as \{"raw": "<base64>", "filename": "agent-card\.json", "mediaType": "application\/json"\}, or \{"url": "https:\/\/\.\.\."\}/],
      [[{ file: { uri: 'https://example.org/agent-card.json' } }], /parts\[0\] is a v0\.3 file part/],
    ];
    for (const [parts, message] of cases) {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts } } });
      const error = rpcError(await rpc(body));
      assert.equal(error.code, -32602);
      assert.match(error.message, message);
    }
    // The v0.3 binding (no A2A-Version header) is guarded the same way.
    const legacy = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', messageId: 'm', role: 'user', parts: [null] } } });
    assert.equal(rpcError(await rawPost(`${registry.url}/a2a/jsonrpc`, legacy, { headers: { 'A2A-Version': '' } })).code, -32602);
    // A v0.3 part without its kind's content is told what it lacks in v0.3's words: {"kind": "file"}
    // was -32603 (the SDK's reader threw a TypeError), a file without bytes or URI named no part.
    const lacking: Array<[WireJson, RegExp]> = [
      [{ kind: 'file' }, /^params\.message\.parts\[0\] is a file part without its "file": send the document's bytes in file\.bytes \(a file part \{"kind": "file", "file": \{/],
      [{ kind: 'file', file: null }, /is a file part without its "file"/],
      [{ kind: 'file', file: 'x' }, /is a file part whose "file" is no object: send the document's bytes in file\.bytes/],
      [{ kind: 'file', file: {} }, /is a file part with neither file\.bytes nor file\.uri: send/],
      [{ kind: 'file', file: { name: 'agent-card.json', mimeType: 'application/json' } }, /with neither file\.bytes nor file\.uri/],
      [{ kind: 'data' }, /is a data part without its "data": send a data part \{"kind": "data", "data": /],
      [{ kind: 'text' }, /is a text part without its "text"/],
      // A file's strings that are none, as v1.0's filename and mediaType are refused: a mimeType or
      // name of 5 was -32603 (the parser's toLowerCase), a uri of 5 told that URIs are not fetched.
      [{ kind: 'file', file: { bytes: 'e30=', mimeType: 5 } }, /^params\.message\.parts\[0\]\.file\.mimeType must be a string\.$/],
      [{ kind: 'file', file: { bytes: 'e30=', mimeType: {} } }, /^params\.message\.parts\[0\]\.file\.mimeType must be a string\.$/],
      [{ kind: 'file', file: { bytes: 'e30=', name: 5 } }, /^params\.message\.parts\[0\]\.file\.name must be a string\.$/],
      [{ kind: 'file', file: { bytes: 'e30=', name: ['agent-card.json'] } }, /^params\.message\.parts\[0\]\.file\.name must be a string\.$/],
      [{ kind: 'file', file: { uri: 5 } }, /^params\.message\.parts\[0\]\.file\.uri must be a string\.$/],
      [{ kind: 'file', file: { uri: 'https://example.org/a.json', mimeType: true } }, /^params\.message\.parts\[0\]\.file\.mimeType must be a string\.$/],
    ];
    for (const [part, message] of lacking) {
      for (const method of ['message/send', 'message/stream']) {
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { message: { kind: 'message', messageId: 'm', role: 'user', parts: [part] } } });
        const answer = await rpc(body, { 'A2A-Version': '0.3' });
        const error = method === 'message/stream' ? legacyStreamRefusal(answer, method).error : rpcError(answer);
        assert.equal(error.code, -32602, `${method} ${JSON.stringify(part)}`);
        assert.match(error.message, message, method);
      }
    }
    // null is no name or media type, as the SDK's reader reads it: the card is validated.
    const card = Buffer.from(JSON.stringify(v1Card('Null Name Agent', 'https://null-name.example.org/a2a'))).toString('base64');
    const nulls = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'file', file: { bytes: card, name: null, mimeType: null } }, { kind: 'data', data: { validate: {} } }] } } });
    const validated = (await rpc(nulls, { 'A2A-Version': '0.3' })).json!;
    assert.equal(validated.result?.status?.state, 'completed', JSON.stringify(validated).slice(0, 300));
    // Metadata (a Struct; a v0.3 map) that is no object: the SDK carried "x" along without a word.
    const metadata: Array<[string, WireJson, RegExp]> = [
      ['SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'weather', metadata: 'x' }] } }, /^params\.message\.parts\[0\]\.metadata must be a JSON object \(or left out\), not string\.$/],
      ['SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', metadata: 5, parts: [{ text: 'weather' }] } }, /^params\.message\.metadata must be a JSON object \(or left out\), not number\.$/],
      ['SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'weather' }] }, metadata: [] }, /^params\.metadata must be a JSON object \(or left out\), not an array\.$/],
      ['message/send', { message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'weather', metadata: true }] } }, /^params\.message\.parts\[0\]\.metadata must be a JSON object/],
    ];
    for (const [method, params, message] of metadata) {
      const error = rpcError(await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), method === 'message/send' ? { 'A2A-Version': '0.3' } : {}));
      assert.equal(error.code, -32602, JSON.stringify(params));
      assert.match(error.message, message);
    }
    const withMetadata = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', metadata: { trace: 'a' }, parts: [{ text: 'weather', metadata: null }] }, metadata: {} } });
    assert.equal((await rpc(withMetadata)).json!.result?.task?.status?.state, 'TASK_STATE_COMPLETED');
  });

  test('a part with two contents of the oneof (text and data, raw and url) is -32602 / HTTP 400 naming them, never run as one of them', async () => {
    // The SDK took the text and dropped the data: this register ran as a search for "x", COMPLETED.
    const register = { data: { register: { agentCard: v1Card('Oneof Agent', 'https://oneof.example.org/a2a') } }, mediaType: 'application/json' };
    const cases: Array<[WireJson, RegExp]> = [
      [{ text: 'x', ...register }, /parts\[0\] has "text" and "data": a part holds exactly one of "text", "raw", "url" and "data"/],
      [{ raw: 'e30=', url: 'https://example.org/card.json', filename: 'agent-card.json' }, /parts\[0\] has "raw" and "url"/],
    ];
    for (const [part, message] of cases) {
      for (const method of ['SendMessage', 'SendStreamingMessage']) {
        const error = rpcError(await rpc(sendMessageBody([part], 1, method)));
        assert.equal(error.code, -32602, method);
        assert.match(error.message, message, method);
      }
      const answer = await rest('/message:send', JSON.stringify({ message: { messageId: 'm', role: 'ROLE_USER', parts: [part] } }));
      assert.equal(answer.status, 400, answer.text);
      assert.equal(answer.json!.error.status, 'INVALID_ARGUMENT');
      assert.match(answer.json!.error.message, message);
    }
    const search = resultData(await rpc(sendMessageBody([{ data: { search: { query: 'Oneof' } }, mediaType: 'application/json' }])));
    assert.equal(search.total, 0, 'the register never ran');
    // One content per part, null members (ProtoJSON: absent) and v0.3 parts (told apart by kind) are as before.
    assert.equal(taskOf(await send([{ text: 'weather', data: null }])).status.state, 'TASK_STATE_COMPLETED');
    const legacy = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'weather', data: {} }] } } });
    assert.equal((await rawPost(`${registry.url}/a2a/jsonrpc`, legacy, { headers: { 'A2A-Version': '' } })).json?.result?.status?.state, 'completed');
  });

  test('objects String() cannot convert ({"toString": 0}) in protocol fields are -32602, not an internal error', async () => {
    const trap = { toString: 0 };
    const bodies = [
      { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: trap, role: 'ROLE_USER', parts: [{ text: 'x' }] } } },
      { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { tenant: { valueOf: 1 }, message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } } },
      { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: [trap] } },
      { jsonrpc: '2.0', id: 1, method: 'ListTasks', params: { contextId: trap } },
    ];
    for (const body of bodies) {
      const error = rpcError(await rpc(JSON.stringify(body)));
      assert.equal(error.code, -32602, JSON.stringify(body));
      assert.match(error.message, /has a "(toString|valueOf)" member/);
    }
    const legacy = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', messageId: trap, role: 'user', parts: [{ kind: 'text', text: 'x' }] } } });
    const legacyError = rpcError(await rawPost(`${registry.url}/a2a/jsonrpc`, legacy, { headers: { 'A2A-Version': '' } }));
    assert.equal(legacyError.code, -32602);
    assert.match(legacyError.message, /has a "(toString|valueOf)" member/);
    const rest = await rawPost(`${registry.url}/a2a/rest/message:send`, JSON.stringify({ message: { messageId: trap, role: 'ROLE_USER', parts: [{ text: 'x' }] } }));
    assert.equal(rest.status, 400);
    // Inside documents and metadata such keys are just data.
    const card = { ...v1Card('Trap Agent', 'https://trap.example.org/a2a'), toString: 'fine', skills: [{ ...v1Card().skills[0], valueOf: 1 }] };
    const answer = await rpc(sendMessageBody([{ data: { validate: { agentCard: card } }, mediaType: 'application/json', metadata: { toString: 1 } }]));
    assert.equal(taskOf(answer).status.state, 'TASK_STATE_COMPLETED');
  });

  test('HTTP+JSON: a body that is not an object, or parts that are not objects, are 400 google.rpc.Status', async () => {
    for (const body of ['[1, 2]', '"x"']) {
      const answer = await rest('/message:send', body);
      assert.equal(answer.status, 400, answer.text);
      assert.equal(answer.json!.error.status, 'INVALID_ARGUMENT');
      assertNoInternals(answer.text);
    }
    const answer = await rest('/message:send', JSON.stringify({ message: { messageId: 'm', role: 'ROLE_USER', parts: [null, { raw: 5 }] } }));
    assert.equal(answer.status, 400);
    assert.match(answer.json!.error.message, /parts\[0\] must be an object/);
    const metadata = await rest('/message:send', JSON.stringify({ message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'weather' }] }, metadata: 'x' }));
    assert.equal(metadata.status, 400, metadata.text);
    assert.match(metadata.json!.error.message, /^metadata must be a JSON object \(or left out\), not string\.$/);
  });
});

describe('size and depth', () => {
  test('a huge body is refused before it is read whole: JSON-RPC -32600 and HTTP+JSON 413', async () => {
    const huge = sendMessageBody([{ text: 'x'.repeat(3 * 1024 * 1024) }]);
    const error = rpcError(await rpc(huge));
    assert.equal(error.code, -32600);
    assert.match(error.message, /limit is \d+ bytes/);
    const answer = await rest('/message:send', JSON.stringify({ message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x'.repeat(3 * 1024 * 1024) }] } }));
    assert.equal(answer.status, 413);
  });

  test('a body declared larger than the limit is refused at once, before the client sends it, and the connection closes', async () => {
    // Headers only: a client declaring 10 GB gets its answer without sending a byte of the body
    // (before, the refusal waited for the whole body, up to the request timeout).
    for (const path of ['/a2a/rest/message:send', '/a2a/jsonrpc']) {
      const c = await connect(registry.url);
      c.socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: 10000000000\r\n\r\n{"x":`);
      const closed = await Promise.race([c.closed.then(() => true), setTimeout(5_000).then(() => false)]);
      c.socket.destroy();
      const text = c.received();
      assert.ok(closed, `${path}: the registry closed the connection within 5 s (got ${JSON.stringify(text.slice(0, 200))})`);
      assert.match(text, path.includes('rest') ? /^HTTP\/1\.1 413 / : /^HTTP\/1\.1 200 /, path);
      assert.match(text, /\r\nconnection: close\r\n/i, path);
      assert.match(text, /The request body is 10000000000 bytes; the limit is \d+ bytes/, path);
    }
  });

  test('a chunked body is refused as soon as it passes the limit, while the client is still sending, and the connection closes', async () => {
    // No declared length: the chunks keep coming (a client that never ends its body). Before,
    // the refusal waited for the last chunk, up to the request timeout.
    for (const path of ['/a2a/rest/message:send', '/a2a/jsonrpc']) {
      const c = await connect(registry.url);
      c.socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nTransfer-Encoding: chunked\r\n\r\n`);
      const chunk = `{"x":"${'x'.repeat(64 * 1024)}`;
      const sending = setInterval(() => {
        if (!c.socket.destroyed) c.socket.write(`${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`);
      }, 5);
      const closed = await Promise.race([c.closed.then(() => true), setTimeout(5_000).then(() => false)]);
      clearInterval(sending);
      c.socket.destroy();
      const text = c.received();
      assert.ok(closed, `${path}: the registry closed the connection within 5 s (got ${JSON.stringify(text.slice(0, 200))})`);
      assert.match(text, path.includes('rest') ? /^HTTP\/1\.1 413 / : /^HTTP\/1\.1 200 /, path);
      assert.match(text, /\r\nconnection: close\r\n/i, path);
      assert.match(text, /The request body is over the limit of \d+ bytes/, path);
    }
    // The registry still answers.
    assert.equal((await fetch(`${registry.url}/healthz`)).status, 200);
  });

  test('bodies nested thousands of levels deep are refused on the bytes, in every place and binding', async () => {
    const deepBodies = [
      deepArrays(10_000),
      splice(sendMessageBody([data({ register: { agentCard: '__HERE__' } })]), deepObjects(5_000)),
      splice(sendMessageBody([data({ search: { filter: '__HERE__' } })]), deepArrays(20_000)),
      splice(sendMessageBody([{ text: 'x', metadata: '__HERE__' }]), deepObjects(3_000)),
      splice(sendMessageBody([data({ validate: { mcpServer: mcpServer(), toolspec: { tools: [{ name: 't', inputSchema: '__HERE__' }] } } })]), `{"type":"object","properties":{"a":${'{"items":'.repeat(3000)}{}${'}'.repeat(3000)}}}`),
      splice(sendMessageBody([data({ search: {} })], 1, 'SendStreamingMessage').replace('"search":{}', '"search":"__HERE__"'), deepArrays(20_000)),
    ];
    for (const body of deepBodies) {
      const error = rpcError(await rpc(body));
      assert.equal(error.code, -32600);
      assert.match(error.message, /deeper than 100 levels \(REGISTRY_MAX_JSON_DEPTH\)/);
    }
    const answer = await rest('/message:send', `{"message":${deepArrays(10_000)}}`);
    assert.equal(answer.status, 400);
    assert.match(answer.json!.error.message, /deeper than 100 levels/);
  });

  test('brackets inside strings do not count as nesting', async () => {
    const task = taskOf(await send([{ text: '['.repeat(5000) + '{'.repeat(5000) }]));
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
  });

  test('an uploaded document within the size limit but nested thousands deep is TOO_LARGE, never stored', async () => {
    // 4,000 levels fit in 10 KB; stored, such a card could never be read back (the SDK recurses).
    const text = JSON.stringify(v1Card('Deep Agent', 'https://deep.example.org/a2a')).replace(/}$/, `,"extra":${deepArrays(4000)}}`);
    assert.ok(Buffer.byteLength(text) < 10_240, 'Buffer.byteLength(text) < 10_240');
    const error = rejection(await send([file(text)]));
    assert.equal(error.code, 'TOO_LARGE');
    assert.match(error.message, /nests deeper than 100 levels/);
  });

  test('the validator itself never overflows on values nested 100,000 deep', () => {
    const validator = createDocumentValidator({ maxDocumentBytes: 10_240 });
    const arrays = JSON.parse(deepArrays(100_000)) as unknown;
    const objects = JSON.parse(deepObjects(100_000)) as unknown;
    for (const value of [arrays, objects]) {
      assert.equal(validator.validateAgentCard(value, 100).valid, false);
      assert.equal(validator.validateAgentCard({ ...v1Card(), skills: [{ id: 'a', name: 'b', description: 'c', tags: value }] }, 100).valid, false);
      assert.equal(validator.validateMcpServer(mcpServer(), { tools: [{ name: 't', inputSchema: { type: 'object', properties: { a: value } } }] }, 100).valid, false);
      assert.equal(validator.validateMcpServer(value, value, 100).valid, false);
    }
  });

  test('very long strings: a 60,000-character text is searched by its first 1,000; a longer query field is BAD_REQUEST', async () => {
    const started = performance.now();
    assert.equal(taskOf(await send([{ text: 'weather '.repeat(7500) }])).status.state, 'TASK_STATE_COMPLETED');
    const error = rejection(await send([data({ search: { query: 'x'.repeat(1001) } })]));
    assert.equal(error.code, 'BAD_REQUEST');
    assert.match(error.details[0].path, /query/);
    // Past the schema's ceiling (10,000) too, the message names the limit in force.
    for (const op of ['search', 'watch']) {
      const huge = rejection(await send([data({ [op]: { query: 'x'.repeat(10_001) } })]));
      assert.equal(huge.code, 'BAD_REQUEST');
      assert.match(huge.message, /the query is 10001 characters; the limit is 1000 \(REGISTRY_MAX_QUERY_CHARS\)/, op);
    }
    const name = rejection(await send([data({ register: { agentCard: { ...v1Card(), name: 'n'.repeat(20_000) } } })]));
    assert.equal(name.code, 'TOO_LARGE');
    assert.ok(performance.now() - started < 5000, 'performance.now() - started < 5000');
  });
});

describe('encodings and media types', () => {
  test('invalid base64 in a file part is -32602, not decoded into garbage', async () => {
    for (const raw of ['!!!not base64***', 'a', 'ab=c', 'YQ==YQ==', 'YQ=', 'a b c d']) {
      const error = rpcError(await send([{ raw, filename: 'agent-card.json', mediaType: 'application/json' }]));
      assert.equal(error.code, -32602, raw);
      assert.match(error.message, /raw is not valid base64/);
    }
    const legacy = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'file', file: { bytes: '%%%' } }] } } });
    const error = rpcError(await rawPost(`${registry.url}/a2a/jsonrpc`, legacy, { headers: { 'A2A-Version': '' } }));
    assert.match(error.message, /file\.bytes is not valid base64/);
  });

  test('invalid UTF-8: in a file part BAD_REQUEST, in the body -32700', async () => {
    for (const bytes of [[0xff, 0xfe, 0x7b], [0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      const error = rejection(await send([file(Buffer.from(bytes))]));
      assert.equal(error.code, 'BAD_REQUEST');
      assert.match(error.message, /not valid UTF-8/);
    }
    const body = Buffer.concat([Buffer.from(sendMessageBody([{ text: 'PLACEHOLDER' }]).split('PLACEHOLDER')[0]!), Buffer.from([0xc3, 0x28]), Buffer.from('"}]}}}')]);
    const error = rpcError(await rpc(body));
    assert.equal(error.code, -32700);
    assert.match(error.message, /UTF-8/);
  });

  test('a file part with an unknown mediaType is BAD_REQUEST naming it; a URL part is declined', async () => {
    for (const mediaType of ['application/x-evil', 'text/html', 'image/png']) {
      const error = rejection(await send([file('{}', 'agent-card.json', mediaType)]));
      assert.equal(error.code, 'BAD_REQUEST');
      assert.ok(error.message.includes(mediaType), 'error.message.includes(mediaType)');
    }
    assert.match(rejection(await send([{ url: 'http://169.254.169.254/latest/meta-data' }])).message, /is a URL part.*\{"register": \{"url"/);
  });

  test('a non-JSON content type is -32005; a gzip body that is not gzip is a clean -32600', async () => {
    assert.equal(rpcError(await rpc(sendMessageBody([{ text: 'x' }]), { 'content-type': 'text/plain' })).code, -32005);
    const notGzip = rpcError(await rpc(sendMessageBody([{ text: 'x' }]), { 'content-encoding': 'gzip' }));
    assert.equal(notGzip.code, -32600);
    // It said "could not be read"; a compression the registry does not decode said "must be UTF-8 JSON".
    assert.match(notGzip.message, /declared Content-Encoding: gzip but does not decompress .*: send it compressed as declared, or uncompressed/);
    const compress = rpcError(await rpc(sendMessageBody([{ text: 'x' }]), { 'content-encoding': 'compress' }));
    assert.match(compress.message, /Content-Encoding: compress, which the registry does not decode: send it uncompressed, or compressed with gzip, deflate or br/);
  });

  test('every door that reads a body reads gzip, deflate and br, and refuses zstd (415 UNSUPPORTED_ENCODING), as the README and the 415 say', async () => {
    // zstd was decoded and answered where node's zlib has it (24, 22.15+), refused elsewhere.
    const doors: Array<{ path: string; body: string; headers?: Record<string, string> }> = [
      { path: '/a2a/jsonrpc', body: sendMessageBody([{ text: 'invoice' }]) },
      { path: '/a2a/rest/message:send', body: JSON.stringify({ message: { messageId: 'zstd-1', role: 'ROLE_USER', parts: [{ text: 'invoice' }] } }) },
      { path: '/search', body: JSON.stringify({ query: { text: 'invoice' } }) },
      { path: '/mcp', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), headers: { accept: 'application/json, text/event-stream' } },
    ];
    const codings: Record<string, (body: Buffer) => Buffer> = { gzip: zlib.gzipSync, deflate: zlib.deflateSync, br: zlib.brotliCompressSync };
    for (const door of doors) {
      const post = (coding: string, body: Uint8Array) =>
        rawPost(`${registry.url}${door.path}`, body, { headers: { authorization: `Bearer ${TOKENS.alice}`, 'content-encoding': coding, ...door.headers } });
      for (const [coding, compress] of Object.entries(codings)) assert.equal((await post(coding, compress(Buffer.from(door.body)))).status, 200, `${door.path} ${coding}`);
      // A real zstd frame where this node can make one (the refusal does not read it).
      const zstd = 'zstdCompressSync' in zlib ? zlib.zstdCompressSync(Buffer.from(door.body)) : Buffer.from(door.body);
      const refused = await post('zstd', zstd);
      assert.equal(refused.status, 415, door.path);
      assert.match(refused.text, /UNSUPPORTED_ENCODING/, door.path);
      assert.match(refused.text, /Content-Encoding: zstd, which the registry does not decode: send it uncompressed, or compressed with gzip, deflate or br/, door.path);
    }
  });
});

describe('prototype pollution', () => {
  const protoCard = () =>
    JSON.stringify(v1Card('Proto Agent', 'https://proto.example.org/a2a')).replace(
      '{',
      '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":2}},"prototype":{"polluted":3},',
    );

  test('__proto__, constructor and prototype keys in cards (data and file parts), filters, operations and params', async () => {
    const bodies = [
      splice(sendMessageBody([data({ validate: { agentCard: '__HERE__' } })]), protoCard()),
      splice(sendMessageBody([{ data: '__HERE__', mediaType: 'application/json' }]), '{"__proto__":{"polluted":1}}'),
      splice(sendMessageBody([{ data: '__HERE__', mediaType: 'application/json' }]), '{"constructor":{"prototype":{"polluted":1}}}'),
      splice(sendMessageBody([data({ search: '__HERE__' })]), '{"__proto__":{"polluted":1},"query":"x"}'),
      splice(sendMessageBody([data({ search: { filter: '__HERE__' } })]), '{"__proto__":{"polluted":1}}'),
      splice(sendMessageBody([data({ list: { filter: '__HERE__' } })]), '{"constructor":{"prototype":{"polluted":1}}}'),
      splice(sendMessageBody([data({ get: '__HERE__' })]), '{"id":"x","__proto__":{"polluted":1}}'),
      splice(sendMessageBody([data({ validate: { mcpServer: mcpServer(), toolspec: '__HERE__' } })]), '{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"__proto__":{"type":"string"},"constructor":{"$ref":"#/__proto__"}}}}],"__proto__":{"polluted":1}}'),
      `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"__proto__":{"polluted":1},"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"__proto__":{"polluted":1}}}}`,
      `{"__proto__":{"polluted":1},"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"__proto__"}}`,
    ];
    for (const body of bodies) {
      const answer = await rpc(body);
      assertWellFormedJsonRpcAnswer(answer, 'SendMessage');
      assertNoInternals(answer.text);
      assert.equal(prototypeSnapshot(), protoBefore);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    }
    const file = await send([{ raw: Buffer.from(protoCard()).toString('base64'), filename: 'agent-card.json', mediaType: 'application/json' }, data({ validate: {} })]);
    assert.equal(taskOf(file).status.state, 'TASK_STATE_COMPLETED');
    const rest = await rawPost(`${registry.url}/a2a/rest/message:send`, `{"__proto__":{"polluted":1},"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`);
    assert.equal(rest.status, 200);
  });

  test('prototype names as search words, tags and filter values are plain strings', async () => {
    for (const word of ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf']) {
      const page = resultData(await send([data({ search: { query: word, filter: { tags: [word], inputModes: [word], owner: word, protocolBinding: word } } })]));
      assert.deepEqual(page.results, []);
      resultData(await send([data({ list: { filter: { owner: word } } })]));
      assert.equal(rejection(await send([data({ get: { id: word } })])).code, 'NOT_FOUND');
    }
  });
});

describe('untrusted tool schemas', () => {
  const validateTools = (tools: unknown[]) => send([data({ validate: { mcpServer: mcpServer('slow', 'https://slow.example.org/mcp'), toolspec: { tools } } })]);
  /** validate is a dry run of register: a valid toolspec completes, an invalid one is declined with its errors. */
  const verdictOf = (answer: RawAnswer): WireJson => {
    const task = taskOf(answer);
    if (task.status.state === 'TASK_STATE_REJECTED') {
      const error = rejection(answer);
      assert.equal(error.code, 'VALIDATION_FAILED');
      return { valid: false, errors: error.details ?? [] };
    }
    return resultData(answer);
  };
  const timed = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
    const started = performance.now();
    const value = await fn();
    return [value, performance.now() - started];
  };

  test('a catastrophic regex pattern is never run, whatever the examples and defaults say', async () => {
    const evil = 'a'.repeat(40) + '!';
    const [answer, ms] = await timed(() =>
      validateTools([{ name: 'redos', description: 'x', inputSchema: { type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+$', default: evil, examples: [evil] } }, patternProperties: { '^(a|aa)+$': {} } } }]),
    );
    assert.equal(verdictOf(answer).valid, true);
    assert.ok(ms < 3000, `${ms} ms`);
    const invalid = verdictOf(await validateTools([{ name: 'bad', inputSchema: { type: 'object', properties: { a: { type: 'string', pattern: '(unclosed' } } } }]));
    assert.equal(invalid.valid, false);
    assert.ok(invalid.errors.some((e: WireJson) => e.rule === 'bad-pattern'), 'invalid.errors.some((e: WireJson) => e.rule === \'bad-pattern\')');
  });

  test('a huge enum, a long $ref chain and a $ref cycle are answered quickly', async () => {
    const [big, bigMs] = await timed(() => validateTools([{ name: 'enum', inputSchema: { type: 'object', properties: { a: { enum: Array.from({ length: 2400 }, (_, i) => i) } } } }]));
    assertWellFormedJsonRpcAnswer(big, 'SendMessage');
    assert.ok(bigMs < 3000, `${bigMs} ms`);
    const defs: Record<string, object> = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`d${i}`, { $ref: `#/$defs/d${i + 1}` }]));
    defs.d150 = { type: 'string' };
    const [chain, chainMs] = await timed(() => validateTools([{ name: 'chain', inputSchema: { type: 'object', $defs: defs, properties: { a: { $ref: '#/$defs/d0' } } } }]));
    assertWellFormedJsonRpcAnswer(chain, 'SendMessage');
    assert.ok(chainMs < 3000, `${chainMs} ms`);
    const [cycle, cycleMs] = await timed(() => validateTools([{ name: 'cycle', inputSchema: { type: 'object', $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } }, properties: { x: { $ref: '#' } } } }]));
    assertWellFormedJsonRpcAnswer(cycle, 'SendMessage');
    assert.ok(cycleMs < 3000, `${cycleMs} ms`);
  });

  test('a $ref to a remote URL is an error and is never fetched', async () => {
    for (const ref of ['http://169.254.169.254/latest/meta-data', 'https://example.com/schema.json#/defs/a', 'file:///etc/passwd']) {
      const result = verdictOf(await validateTools([{ name: 'remote', inputSchema: { type: 'object', properties: { a: { $ref: ref } } } }]));
      assert.equal(result.valid, false);
      assert.ok(result.errors.some((e: WireJson) => e.rule === 'remote-ref'), JSON.stringify(result.errors));
    }
    // And registering it is refused.
    const error = rejection(await send([data({ register: { mcpServer: mcpServer('r', 'https://remote-ref.example.org/mcp'), toolspec: { tools: [{ name: 't', inputSchema: { type: 'object', $ref: 'https://evil.example.com/s.json' } }] } } })]));
    assert.equal(error.code, 'VALIDATION_FAILED');
  });

  test('a schema nested 70 JSON levels is a validation error naming the limit; within the body limit', async () => {
    // Two JSON levels per step: 35 steps are 70 levels, over the validator's 64, under the body's 100.
    let schema: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 35; i++) schema = { type: 'object', properties: { a: schema } };
    const result = verdictOf(await validateTools([{ name: 'deep', inputSchema: schema }]));
    assert.equal(result.valid, false);
    assert.ok(result.errors.some((e: WireJson) => e.rule === 'schema-too-deep'), 'result.errors.some((e: WireJson) => e.rule === \'schema-too-deep\')');
  });
});

describe('search input', () => {
  test('thousands of words and special characters are answered quickly', async () => {
    const queries = [
      Array.from({ length: 3000 }, (_, i) => `w${i}`).join(' '),
      'a '.repeat(499),
      '*?[](){}\\^$|+.'.repeat(50),
      '\u0000\u0001\uffff\ud800\udfff " \' ; -- DROP TABLE entries; <script>',
      '🦄'.repeat(300),
      'ﬃ'.repeat(300) + 'ß'.repeat(300),
    ];
    for (const query of queries) {
      const started = performance.now();
      const task = taskOf(await send([{ text: query }]));
      assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
      assert.ok(performance.now() - started < 2000, 'performance.now() - started < 2000');
      const viaOp = await send([data({ search: { query: query.slice(0, 1000) } })]);
      assert.equal(taskOf(viaOp).status.state, 'TASK_STATE_COMPLETED');
    }
  });

  test('tampered page tokens are BAD_REQUEST for search and list', async () => {
    const valid = Buffer.from(JSON.stringify({ p: '0', f: 'x' })).toString('base64url');
    const tokens = [
      'garbage',
      '.',
      '...',
      `${valid}.AAAAAAAAAAAAAAAAAAAAAA`,
      `${Buffer.from(JSON.stringify({ p: '-100000000', f: 'x' })).toString('base64url')}.${'A'.repeat(22)}`,
      `${valid}.${'A'.repeat(22)}.extra`,
      'a'.repeat(512),
      '%00%ff',
      '__proto__',
    ];
    for (const pageToken of tokens) {
      for (const op of [{ search: { query: 'x', pageToken } }, { list: { pageToken } }]) {
        const error = rejection(await send([data(op)]));
        assert.equal(error.code, 'BAD_REQUEST', pageToken);
        assert.match(error.message, /pageToken/);
      }
    }
    assert.equal(rejection(await send([data({ search: { pageToken: 'x'.repeat(513) } })])).code, 'BAD_REQUEST');
  });
});

describe('limits are configuration', () => {
  test('REGISTRY_MAX_JSON_DEPTH and REGISTRY_MAX_QUERY_CHARS move their limits; bad values stop start-up naming the variable', async () => {
    const shallow = await startTestRegistry({ REGISTRY_MAX_JSON_DEPTH: '20', REGISTRY_MAX_QUERY_CHARS: '10', REGISTRY_RATE_LIMITS: 'false' });
    try {
      const body = splice(sendMessageBody([data({ validate: { agentCard: '__HERE__' } })]), deepArrays(15));
      const answer = await rawPost(`${shallow.url}/a2a/jsonrpc`, body);
      assert.match(rpcError(answer).message, /deeper than 20 levels/);
      const long = await rawPost(`${shallow.url}/a2a/jsonrpc`, sendMessageBody([data({ search: { query: 'eleven char' } })]));
      const error = rejection(long);
      assert.equal(error.code, 'BAD_REQUEST');
      assert.match(error.message, /limit is 10 \(REGISTRY_MAX_QUERY_CHARS\)/);
      const short = await rawPost(`${shallow.url}/a2a/jsonrpc`, sendMessageBody([data({ search: { query: 'ten chars!' } })]));
      assert.equal(taskOf(short).status.state, 'TASK_STATE_COMPLETED');
    } finally {
      await shallow.close();
    }
    for (const [name, value] of [
      ['REGISTRY_MAX_JSON_DEPTH', '3'],
      ['REGISTRY_MAX_QUERY_CHARS', '100000'],
      ['REGISTRY_RATE_WRITES_PER_MINUTE', '0'],
      ['REGISTRY_RATE_READS_PER_MINUTE', 'lots'],
      ['REGISTRY_RATE_REQUESTS_PER_MINUTE', '-1'],
      ['REGISTRY_MAX_STREAMS_PER_CLIENT', '1.5'],
      ['REGISTRY_RATE_LIMITS', 'maybe'],
      ['REGISTRY_CORS_ORIGINS', 'https://a.example.com/path'],
      ['REGISTRY_TRUST_PROXY', 'everyone'],
      ['REGISTRY_METRICS_TOKEN', 'short'],
    ]) {
      assert.throws(() => loadConfig({ [name!]: value }), (err: unknown) => err instanceof ConfigError && err.message.includes(name!), name);
    }
  });
});

// Not hostile, but the baseline the checks above are measured against: a normal registration
// still works on this registry (and is the one write this file makes, outside the hooks' check).
describe('baseline', () => {
  test('a valid MCP server still registers', async (t) => {
    const answer = await send([data({ register: { mcpServer: mcpServer('ok', 'https://ok.example.org/mcp'), toolspec: toolspec() } })]);
    assert.equal(taskOf(answer).status.state, 'TASK_STATE_COMPLETED');
    // The afterEach check expects no write: move its baseline past this one.
    seqBefore = await registry.store.lastChangeSeq();
    countBefore = await registry.store.count();
    t.diagnostic(`entries: ${JSON.stringify(countBefore)}`);
  });
});
