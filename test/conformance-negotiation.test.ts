/**
 * Version negotiation (spec 3.6) and HTTP+JSON media types (11.1) as the door answers them, and
 * the @a2a-js/sdk 1.3 behaviour the door works around, pinned on the bare SDK handlers: when an
 * SDK upgrade fixes (or changes) one of them, its test here fails and the workaround can go.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import express from 'express';
import { AgentCard } from '@a2a-js/sdk';
import { DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor } from '@a2a-js/sdk/server';
import { jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { sdkClient, send, textPart } from './support/client.js';
import { legacyStreamRefusal, readAnswer, type RawAnswer } from './support/raw-http.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';

let registry: TestRegistry;
before(async () => {
  registry = await startTestRegistry();
});
after(() => registry.close());

const message = () => ({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'weather' }] });
const legacyMessage = () => ({ kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'weather' }] });

async function rpc(base: string, method: string, params: unknown, headers: Record<string, string>, query = ''): Promise<RawAnswer> {
  const res = await fetch(`${base}/a2a/jsonrpc${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method, params }),
  });
  return readAnswer(res);
}

async function rest(base: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<RawAnswer> {
  return readAnswer(await fetch(`${base}/a2a/rest${path}`, { method: init.method ?? 'GET', headers: init.headers, body: init.body }));
}

const sendBody = () => JSON.stringify({ message: message() });

describe('version negotiation (3.6)', () => {
  test('JSON-RPC: a patch version is ignored, for 1.0 and for 0.3', async () => {
    for (const version of ['1.0', '1.0.0', '1.0.7']) {
      const answer = await rpc(registry.url, 'SendMessage', { message: message() }, { 'A2A-Version': version });
      assert.equal(answer.json?.result?.task?.status?.state, 'TASK_STATE_COMPLETED', `${version}: ${answer.text.slice(0, 200)}`);
    }
    // The header sent twice (a client and a proxy each adding it) arrives joined: one version when both say the same.
    const twice = await rpc(registry.url, 'SendMessage', { message: message() }, { 'A2A-Version': '1.0, 1.0.0' });
    assert.equal(twice.json?.result?.task?.status?.state, 'TASK_STATE_COMPLETED', twice.text.slice(0, 200));
    const conflicting = await rpc(registry.url, 'SendMessage', { message: message() }, { 'A2A-Version': '1.0, 0.3' });
    // Two that disagree: exactly one is asked for (it said '"1.0, 0.3" is not supported', as if a version were wrong).
    assert.equal(conflicting.json?.error?.code, -32009);
    assert.match(conflicting.json?.error?.message ?? '', /^A2A-Version was sent more than once, with different versions \("1\.0, 0\.3"\): send exactly one, such as "A2A-Version: 1\.0"/);
    const restConflicting = await rest(registry.url, '/tasks', { headers: { 'A2A-Version': '0.3, 1.0' } });
    assert.match(restConflicting.json?.error?.message ?? '', /^A2A-Version was sent more than once/);
    for (const version of ['0.3', '0.3.0', '']) {
      const answer = await rpc(registry.url, 'message/send', { message: legacyMessage() }, { 'A2A-Version': version });
      assert.equal(answer.json?.result?.status?.state, 'completed', `"${version}": ${answer.text.slice(0, 200)}`);
    }
  });

  test('the A2A-Version query parameter counts when the header is absent, not over it', async () => {
    const byQuery = await rpc(registry.url, 'SendMessage', { message: message() }, {}, '?A2A-Version=1.0');
    assert.equal(byQuery.json?.result?.task?.status?.state, 'TASK_STATE_COMPLETED', byQuery.text.slice(0, 200));
    const headerWins = await rpc(registry.url, 'message/send', { message: legacyMessage() }, { 'A2A-Version': '0.3' }, '?A2A-Version=1.0');
    assert.equal(headerWins.json?.result?.status?.state, 'completed', headerWins.text.slice(0, 200));
    const restByQuery = await rest(registry.url, '/message:send?A2A-Version=1.0.0', { method: 'POST', headers: { 'content-type': 'application/json' }, body: sendBody() });
    assert.equal(restByQuery.status, 200, restByQuery.text.slice(0, 200));
    assert.equal(restByQuery.json?.task?.status?.state, 'TASK_STATE_COMPLETED');
    // Given twice, as a header sent twice: once when the same, else exactly one is asked for (it was
    // ignored: the request was v0.3, and SendMessage "an A2A v1.0 method").
    const twice = await rpc(registry.url, 'SendMessage', { message: message() }, {}, '?A2A-Version=1.0&A2A-Version=1.0.0');
    assert.equal(twice.json?.result?.task?.status?.state, 'TASK_STATE_COMPLETED', twice.text.slice(0, 200));
    const conflicting = await rest(registry.url, '/tasks?A2A-Version=1.0&A2A-Version=0.3');
    assert.match(conflicting.json?.error?.message ?? '', /^A2A-Version was sent more than once, with different versions \("1\.0, 0\.3"\)/);
  });

  test('an unsupported version gets VersionNotSupportedError naming the supported versions', async () => {
    for (const version of ['2.0', '0.2', 'banana', '1']) {
      const answer = await rpc(registry.url, 'SendMessage', { message: message() }, { 'A2A-Version': version });
      assert.equal(answer.status, 200);
      assert.equal(answer.json?.id, 9);
      assert.equal(answer.json?.error?.code, -32009, `${version}: ${answer.text.slice(0, 200)}`);
      assert.match(answer.json?.error?.message, /supported versions: 1\.0, 0\.3/);
      const info = answer.json?.error?.data?.[0];
      assert.equal(info?.['@type'], 'type.googleapis.com/google.rpc.ErrorInfo');
      assert.equal(info?.reason, 'VERSION_NOT_SUPPORTED');
      assert.equal(info?.domain, 'a2a-protocol.org');
      assert.equal(info?.metadata?.supportedVersions, '1.0, 0.3');
    }
    const restAnswer = await rest(registry.url, '/tasks', { headers: { 'A2A-Version': '3.1' } });
    assert.equal(restAnswer.status, 400);
    assert.equal(restAnswer.json?.error?.status, 'FAILED_PRECONDITION');
    assert.equal(restAnswer.json?.error?.details?.[0]?.reason, 'VERSION_NOT_SUPPORTED');
    assert.match(restAnswer.json?.error?.message, /supported versions: 1\.0\b/);
    // HTTP+JSON serves v1.0 only: a request without a version is v0.3 there, and says so.
    const versionless = await rest(registry.url, '/tasks');
    assert.equal(versionless.status, 400);
    assert.match(versionless.json?.error?.message, /without A2A-Version is a v0\.3 request/);
  });
});

describe('method names per version', () => {
  test("a method of the other version is -32601 saying which version has it and how to reach it; a name of neither lists the version's methods", async () => {
    // A v0.3 client that adds "A2A-Version: 1.0" and keeps message/send got a bare "Invalid method.".
    const v03Name = await rpc(registry.url, 'message/send', { message: legacyMessage() }, { 'A2A-Version': '1.0' });
    assert.equal(v03Name.json?.error?.code, -32601, v03Name.text.slice(0, 300));
    assert.equal(v03Name.json.id, 9);
    assert.equal(
      v03Name.json.error.message,
      'Method not found: "message/send" is the A2A v0.3 name of SendMessage, and this request is v1.0 (A2A-Version: 1.0). Call SendMessage, or send the request without A2A-Version (v0.3).',
    );
    assert.equal(v03Name.json.error.data?.[0]?.reason, 'METHOD_NOT_FOUND');
    // A v1.0 name without the header (a v0.3 request).
    const v1Name = await rpc(registry.url, 'GetTask', { id: 'x' }, {});
    assert.equal(v1Name.json?.error?.code, -32601);
    assert.match(v1Name.json.error.message, /"GetTask" is an A2A v1\.0 method, and this request is v0\.3 \(a request without A2A-Version is\)\. Send "A2A-Version: 1\.0", or call its v0\.3 name tasks\/get\./);
    // One that said A2A-Version: 0.3 is not told it sent none (header or query parameter).
    const listTasks = await rpc(registry.url, 'ListTasks', {}, { 'A2A-Version': '0.3' });
    assert.equal(listTasks.json?.error?.message, 'Method not found: "ListTasks" is an A2A v1.0 method, and this request is v0.3 (A2A-Version: 0.3). Send "A2A-Version: 1.0".');
    const byQuery = await rpc(registry.url, 'GetTask', { id: 'x' }, {}, '?A2A-Version=0.3');
    assert.match(byQuery.json?.error?.message, /and this request is v0\.3 \(A2A-Version: 0\.3\)\. Send/);
    // Neither version's.
    const unknown = await rpc(registry.url, 'SendMesage', {}, { 'A2A-Version': '1.0' });
    assert.equal(unknown.json?.error?.code, -32601);
    assert.match(unknown.json.error.message, /^Method not found: "SendMesage"\. The A2A v1\.0 methods are SendMessage, SendStreamingMessage, GetTask, ListTasks,/);
    const unknown03 = await rpc(registry.url, 'tasks/list', {}, {});
    assert.match(unknown03.json?.error?.message, /^Method not found: "tasks\/list"\. The A2A v0\.3 methods are message\/send, /);
    // Each version's own names are served as before.
    assert.equal((await rpc(registry.url, 'SendMessage', { message: message() }, { 'A2A-Version': '1.0' })).json?.result?.task?.status?.state, 'TASK_STATE_COMPLETED');
    assert.equal((await rpc(registry.url, 'message/send', { message: legacyMessage() }, {})).json?.result?.status?.state, 'completed');
  });
});

describe('v0.3 parts', () => {
  test('a part without a v0.3 kind in a v0.3 request says the request is v0.3 and how to send v1.0 parts', async () => {
    // What a v1.0 client that forgot its A2A-Version header sends; the SDK said "Invalid v0.3 part kind: undefined".
    for (const method of ['message/send', 'message/stream']) {
      const raw = await rpc(registry.url, method, { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ text: 'weather' }] } }, {});
      const answer = method === 'message/stream' ? legacyStreamRefusal(raw, method) : raw.json;
      assert.equal(answer?.error?.code, -32602, raw.text.slice(0, 300));
      assert.match(
        answer!.error.message,
        /^params\.message\.parts\[0\] has no "kind": a v0\.3 part is \{"kind": "text", "text": \.\.\.\}.*This request is v0\.3 \(no A2A-Version header, or 0\.3\); for v1\.0 parts such as \{"text": \.\.\.\}, send "A2A-Version: 1\.0"/,
      );
    }
    const wrongKind = await rpc(registry.url, 'message/send', { message: { ...legacyMessage(), parts: [{ kind: 'txt', text: 'weather' }] } }, { 'A2A-Version': '0.3' });
    assert.match(wrongKind.json?.error?.message, /parts\[0\] has kind "txt"/);
    assert.equal((await rpc(registry.url, 'message/send', { message: legacyMessage() }, {})).json?.result?.status?.state, 'completed');
  });
});

describe('HTTP+JSON media types (11.1)', () => {
  test('answers are application/json by default, application/a2a+json when Accept prefers it; Vary: Accept', async () => {
    const plain = await rest(registry.url, '/message:send', { method: 'POST', headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' }, body: sendBody() });
    assert.match(plain.headers.get('content-type') ?? '', /^application\/json/);
    assert.match(plain.headers.get('vary') ?? '', /Accept/);
    const a2a = await rest(registry.url, '/message:send', {
      method: 'POST',
      headers: { 'content-type': 'application/a2a+json', accept: 'application/a2a+json', 'A2A-Version': '1.0' },
      body: sendBody(),
    });
    assert.match(a2a.headers.get('content-type') ?? '', /^application\/a2a\+json/);
    assert.equal(a2a.json?.task?.status?.state, 'TASK_STATE_COMPLETED');
    const error = await rest(registry.url, `/tasks/${randomUUID()}`, { headers: { 'A2A-Version': '1.0' } });
    assert.equal(error.status, 404);
    assert.match(error.headers.get('content-type') ?? '', /^application\/json/);
    const rpcAnswer = await rpc(registry.url, 'SendMessage', { message: message() }, { 'A2A-Version': '1.0' });
    assert.match(rpcAnswer.headers.get('content-type') ?? '', /^application\/json/);
  });

  test('a body that is not JSON gets 415 ContentTypeNotSupported; a POST without a body passes', async () => {
    for (const headers of [{ 'content-type': 'text/plain' }, { 'content-type': 'application/x-www-form-urlencoded' }, {}] as Record<string, string>[]) {
      const answer = await rest(registry.url, '/message:send', { method: 'POST', headers: { 'A2A-Version': '1.0', ...headers }, body: sendBody() });
      assert.equal(answer.status, 415, `${JSON.stringify(headers)}: ${answer.text.slice(0, 200)}`);
      assert.equal(answer.json?.error?.code, 415);
      assert.equal(answer.json?.error?.details?.[0]?.reason, 'CONTENT_TYPE_NOT_SUPPORTED');
      assert.match(answer.json?.error?.message, /Content-Type: application\/json/);
    }
    const cancel = await rest(registry.url, `/tasks/${randomUUID()}:cancel`, { method: 'POST', headers: { 'A2A-Version': '1.0' } });
    assert.equal(cancel.status, 404, cancel.text.slice(0, 200));
    // An empty body labelled with a type (fetch's body '' is text/plain, curl -d '' form-urlencoded)
    // is still no body: the cancel reaches the task (404 here), it is not refused for its label.
    for (const type of ['text/plain;charset=UTF-8', 'application/x-www-form-urlencoded']) {
      const labelled = await rest(registry.url, `/tasks/${randomUUID()}:cancel`, { method: 'POST', headers: { 'A2A-Version': '1.0', 'content-type': type }, body: '' });
      assert.equal(labelled.status, 404, `${type}: ${labelled.text.slice(0, 200)}`);
      assert.equal(labelled.json?.error?.details?.[0]?.reason, 'TASK_NOT_FOUND');
    }
  });

  test('the SDK 1.x client still parses every answer over HTTP+JSON (it asks for a2a+json first)', async () => {
    // With a token: an anonymous caller's tasks cannot be read back (issue 12), a principal's can.
    const client = await sdkClient(registry.url, { binding: 'HTTP+JSON', token: TOKENS.alice });
    const task = await send(client, [textPart('weather')]);
    assert.equal((await client.getTask({ id: task.id, tenant: '', historyLength: undefined })).id, task.id);
  });
});

describe('JSON-RPC media type (9.1)', () => {
  /** A JSON-RPC request sent with the given headers (none sets no Content-Type: fetch sends a byte body untyped). */
  const post = (id: string | number, method: string, params: unknown, headers: Record<string, string>) =>
    fetch(`${registry.url}/a2a/jsonrpc`, { method: 'POST', headers, body: new TextEncoder().encode(JSON.stringify({ jsonrpc: '2.0', id, method, params })) }).then(readAnswer);

  test('a request not sent as application/json gets 415 and -32005 with its own id, for v1.0 and v0.3', async () => {
    const cases: Array<[string, Record<string, string>, string]> = [
      ['text/plain', { 'content-type': 'text/plain;charset=UTF-8', 'A2A-Version': '1.0' }, 'SendMessage'],
      ['form', { 'content-type': 'application/x-www-form-urlencoded', 'A2A-Version': '1.0' }, 'SendMessage'],
      ['no type', { 'A2A-Version': '1.0' }, 'SendMessage'],
      ['v0.3 text/plain', { 'content-type': 'text/plain' }, 'message/send'],
      // The HTTP+JSON binding's type (A2A 14.1), which the SDK's JSON-RPC handler refused with id null.
      ['a2a+json', { 'content-type': 'application/a2a+json', 'A2A-Version': '1.0' }, 'SendMessage'],
    ];
    for (const [label, headers, method] of cases) {
      const id = `req-${label}`;
      const answer = await post(id, method, { message: method === 'SendMessage' ? message() : legacyMessage() }, { authorization: `Bearer ${TOKENS.alice}`, ...headers });
      assert.equal(answer.status, 415, `${label}: ${answer.text.slice(0, 200)}`);
      assert.equal(answer.json?.id, id, `${label}: the request's id, not null`);
      assert.equal(answer.json?.error?.code, -32005, label);
      assert.equal(answer.json?.error?.data?.[0]?.reason, 'CONTENT_TYPE_NOT_SUPPORTED', label);
      assert.match(answer.json?.error?.message, /Content-Type: application\/json/, label);
    }
    // A body that is not JSON either is refused for its type (no id to give).
    const form = await readAnswer(await fetch(`${registry.url}/a2a/jsonrpc`, { method: 'POST', headers: { 'A2A-Version': '1.0', 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=b' }));
    assert.equal(form.status, 415, form.text.slice(0, 200));
    assert.equal(form.json?.id, null);
    assert.match(form.json?.error?.message, /application\/x-www-form-urlencoded, and not JSON: send JSON with Content-Type: application\/json/);
    // application/json, with or without parameters, still works.
    const ok = await post(3, 'SendMessage', { message: message() }, { 'content-type': 'Application/JSON; charset=utf-8', 'A2A-Version': '1.0' });
    assert.equal(ok.status, 200, ok.text.slice(0, 200));
    assert.equal(ok.json?.result?.task?.status?.state, 'TASK_STATE_COMPLETED');
  });

  test('a body declared in another charset than UTF-8 gets 415 and -32005 with its own id; on HTTP+JSON 415 too', async () => {
    // JSON exchanged between systems is UTF-8 (RFC 8259 8.1, A2A 14.1). latin1 was refused with
    // id null; UTF-16 was decoded, its bytes slipping past the depth check (which reads UTF-8).
    const request = (id: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'SendMessage', params: { message: message() } });
    const cases: Array<[string, Uint8Array<ArrayBuffer>]> = [
      ['latin1', new Uint8Array(Buffer.from(request('req-latin1'), 'latin1'))],
      ['ISO-8859-1', new Uint8Array(Buffer.from(request('req-ISO-8859-1'), 'latin1'))],
      ['utf-16le', new Uint8Array(Buffer.from(request('req-utf-16le'), 'utf16le'))],
      ['"utf-32"', new Uint8Array(Buffer.from(request('req-"utf-32"'), 'latin1'))],
    ];
    for (const [charset, body] of cases) {
      const res = await fetch(`${registry.url}/a2a/jsonrpc`, { method: 'POST', headers: { 'A2A-Version': '1.0', 'content-type': `application/json; charset=${charset}` }, body });
      const answer = await readAnswer(res);
      assert.equal(answer.status, 415, `${charset}: ${answer.text.slice(0, 200)}`);
      assert.equal(answer.json?.id, `req-${charset}`, `${charset}: the request's id, not null`);
      assert.equal(answer.json?.error?.code, -32005, charset);
      assert.equal(answer.json?.error?.data?.[0]?.reason, 'CONTENT_TYPE_NOT_SUPPORTED', charset);
      assert.match(answer.json?.error?.message, /declared charset=.*read as UTF-8 only \(RFC 8259\): send UTF-8 with Content-Type: application\/json/, charset);
    }
    const restAnswer = await rest(registry.url, '/message:send', { method: 'POST', headers: { 'A2A-Version': '1.0', 'content-type': 'application/json; charset=utf-16' }, body: sendBody() });
    assert.equal(restAnswer.status, 415, restAnswer.text.slice(0, 200));
    assert.equal(restAnswer.json?.error?.details?.[0]?.reason, 'CONTENT_TYPE_NOT_SUPPORTED');
    assert.match(restAnswer.json?.error?.message, /charset=utf-16/);
    // UTF-8, named in any case or quoted, still works.
    const quoted = await post(4, 'SendMessage', { message: message() }, { 'content-type': 'application/json; charset="UTF-8"', 'A2A-Version': '1.0' });
    assert.equal(quoted.json?.result?.task?.status?.state, 'TASK_STATE_COMPLETED', quoted.text.slice(0, 200));
    // "utf8", a common misspelling, is UTF-8 too (body-parser refused it).
    const misspelt = await post(5, 'SendMessage', { message: message() }, { 'content-type': 'application/json; charset=UTF8', 'A2A-Version': '1.0' });
    assert.equal(misspelt.json?.result?.task?.status?.state, 'TASK_STATE_COMPLETED', misspelt.text.slice(0, 200));
  });
});

describe('@a2a-js/sdk 1.3 as it is (fails when an upgrade changes what the door works around)', () => {
  let base: string;
  let close: () => void;
  before(async () => {
    const card = AgentCard.fromJSON({
      name: 'bare',
      description: 'the SDK without our edge',
      version: '1.0.0',
      supportedInterfaces: [
        { url: 'http://127.0.0.1/a2a/jsonrpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: 'http://127.0.0.1/a2a/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      ],
      capabilities: {},
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [],
    });
    const executor: AgentExecutor = { execute: async () => undefined, cancelTask: async () => undefined };
    const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
    const app = express();
    app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
    app.use('/a2a/rest', restHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  after(() => close());

  test('refuses a patch version and ignores the A2A-Version query parameter (versions.ts)', async () => {
    const patch = await rpc(base, 'GetTask', { id: 'x' }, { 'A2A-Version': '1.0.0' });
    assert.equal(patch.json?.error?.code, -32009, patch.text.slice(0, 200));
    const query = await rpc(base, 'GetTask', { id: 'x' }, {}, '?A2A-Version=1.0');
    assert.equal(query.json?.error?.code, -32009, query.text.slice(0, 200));
  });

  test('answers a JSON-RPC request sent as text/plain with id null (jsonrpc-media-type.ts)', async () => {
    const res = await fetch(`${base}/a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'text/plain', 'A2A-Version': '1.0' }, body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'GetTask', params: { id: 'x' } }) });
    const answer = await readAnswer(res);
    assert.equal(answer.json?.error?.code, -32005, answer.text.slice(0, 200));
    assert.equal(answer.json?.id, null);
  });

  test('labels HTTP+JSON answers application/a2a+json and answers a text/plain body with 400 (rest-media-types.ts)', async () => {
    const answer = await rest(base, '/tasks/x', { headers: { 'A2A-Version': '1.0' } });
    assert.match(answer.headers.get('content-type') ?? '', /^application\/a2a\+json/);
    const text = await rest(base, '/message:send', { method: 'POST', headers: { 'A2A-Version': '1.0', 'content-type': 'text/plain' }, body: 'hi' });
    assert.equal(text.status, 400);
  });
});
