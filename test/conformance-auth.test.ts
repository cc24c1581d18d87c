/**
 * Door-level authentication of the A2A door (spec 3.3.2: a server MUST reject invalid
 * credentials; 7.4: every request is authenticated):
 * - an unknown, mistyped or malformed credential is refused on every JSON-RPC method (v1.0 and
 *   v0.3 names) and every HTTP+JSON route, reads included: HTTP 401 with a Bearer challenge;
 *   JSON-RPC error -32000, HTTP+JSON google.rpc.Status UNAUTHENTICATED;
 * - anonymous callers read a public registry; with REGISTRY_PUBLIC_READ=false every anonymous
 *   call is refused the same way, while the card, /healthz and /readyz stay open.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { dataPart, errorOf, op, resultOf, sdkClient, send, textPart, type WireJson } from './support/client.js';
import { readAnswer, type RawAnswer } from './support/raw-http.js';
import { connect } from './support/raw-connection.js';
import { v1Card } from './support/documents.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';

const message = (text = 'weather') => ({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] });
const legacyMessage = () => ({ kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'weather' }] });
const taskId = randomUUID();

/** Every JSON-RPC method with plausible params: [method, params, A2A-Version]. */
const RPC_CALLS: Array<[string, Record<string, unknown>, string]> = [
  ['SendMessage', { message: message() }, '1.0'],
  ['SendStreamingMessage', { message: message() }, '1.0'],
  ['GetTask', { id: taskId }, '1.0'],
  ['ListTasks', {}, '1.0'],
  ['CancelTask', { id: taskId }, '1.0'],
  ['SubscribeToTask', { id: taskId }, '1.0'],
  ['CreateTaskPushNotificationConfig', { taskId, url: 'https://hooks.example.org/a2a' }, '1.0'],
  ['GetTaskPushNotificationConfig', { taskId, id: 'c1' }, '1.0'],
  ['ListTaskPushNotificationConfigs', { taskId }, '1.0'],
  ['DeleteTaskPushNotificationConfig', { taskId, id: 'c1' }, '1.0'],
  ['GetExtendedAgentCard', {}, '1.0'],
  ['message/send', { message: legacyMessage() }, ''],
  ['message/stream', { message: legacyMessage() }, ''],
  ['tasks/get', { id: taskId }, ''],
  ['tasks/cancel', { id: taskId }, ''],
  ['tasks/resubscribe', { id: taskId }, ''],
  ['tasks/pushNotificationConfig/set', { taskId, pushNotificationConfig: { url: 'https://hooks.example.org/a2a' } }, ''],
  ['tasks/pushNotificationConfig/get', { id: taskId }, ''],
  ['tasks/pushNotificationConfig/list', { id: taskId }, ''],
  ['tasks/pushNotificationConfig/delete', { id: taskId, pushNotificationConfigId: 'c1' }, ''],
  ['agent/getAuthenticatedExtendedCard', {}, ''],
];

/** Every HTTP+JSON route (and one under a tenant prefix): [method, path, body]. */
const REST_CALLS: Array<[string, string, unknown]> = [
  ['POST', '/message:send', { message: message() }],
  ['POST', '/message:stream', { message: message() }],
  ['GET', `/tasks/${taskId}`, undefined],
  ['GET', '/tasks', undefined],
  ['POST', `/tasks/${taskId}:cancel`, undefined],
  ['POST', `/tasks/${taskId}:subscribe`, undefined],
  ['GET', `/tasks/${taskId}:subscribe`, undefined],
  ['POST', `/tasks/${taskId}/pushNotificationConfigs`, { url: 'https://hooks.example.org/a2a' }],
  ['GET', `/tasks/${taskId}/pushNotificationConfigs/c1`, undefined],
  ['GET', `/tasks/${taskId}/pushNotificationConfigs`, undefined],
  ['DELETE', `/tasks/${taskId}/pushNotificationConfigs/c1`, undefined],
  ['GET', '/extendedAgentCard', undefined],
  ['GET', '/tenant-a/tasks', undefined],
];

async function rpcCall(base: string, [method, params, version]: (typeof RPC_CALLS)[number], authorization?: string): Promise<RawAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'A2A-Version': version };
  if (authorization !== undefined) headers.authorization = authorization;
  const res = await fetch(`${base}/a2a/jsonrpc`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: `call-${method}`, method, params }) });
  return readAnswer(res);
}

async function restCall(base: string, [method, path, body]: (typeof REST_CALLS)[number], authorization?: string): Promise<RawAnswer> {
  const headers: Record<string, string> = { 'A2A-Version': '1.0' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (authorization !== undefined) headers.authorization = authorization;
  return readAnswer(await fetch(`${base}/a2a/rest${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
}

function assertRpcRefused(answer: RawAnswer, method: string, challenge: RegExp, reason: string): void {
  const ctx = `${method}: ${answer.status} ${answer.text.slice(0, 200)}`;
  assert.equal(answer.status, 401, ctx);
  assert.match(answer.headers.get('www-authenticate') ?? '', challenge, ctx);
  assert.equal(answer.json?.jsonrpc, '2.0', ctx);
  assert.equal(answer.json?.id, `call-${method}`, ctx);
  assert.equal(answer.json?.error?.code, -32000, ctx);
  assert.equal(answer.json?.error?.data?.[0]?.reason, reason, ctx);
  assert.equal(answer.json?.error?.data?.[0]?.['@type'], 'type.googleapis.com/google.rpc.ErrorInfo', ctx);
  assert.equal(answer.json?.result, undefined, ctx);
}

function assertRestRefused(answer: RawAnswer, route: string, challenge: RegExp, reason: string): void {
  const ctx = `${route}: ${answer.status} ${answer.text.slice(0, 200)}`;
  assert.equal(answer.status, 401, ctx);
  assert.match(answer.headers.get('www-authenticate') ?? '', challenge, ctx);
  assert.equal(answer.json?.error?.code, 401, ctx);
  assert.equal(answer.json?.error?.status, 'UNAUTHENTICATED', ctx);
  assert.equal(answer.json?.error?.details?.[0]?.reason, reason, ctx);
}

const INVALID_TOKEN = /^Bearer realm="a2a-registry", error="invalid_token"/;

/** Writes `request` on a connection of its own and resolves with everything the registry answered (it closes the connection). */
async function rawRequest(base: string, request: string): Promise<string> {
  const conversation = await connect(base);
  conversation.socket.write(request);
  await conversation.closed;
  return conversation.received();
}
const NO_TOKEN = /^Bearer realm="a2a-registry"$/;

describe('a registry with public reads', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startTestRegistry();
  });
  after(() => registry.close());

  const mistyped = `Bearer ${TOKENS.alice.slice(0, -1)}X`;
  for (const [label, authorization, challenge] of [
    ['a mistyped token', mistyped, INVALID_TOKEN],
    // Another scheme is challenged without an error code (RFC 6750 section 3.1).
    ['a malformed header (Basic)', 'Basic YWxpY2U6c2VjcmV0', /^Bearer realm="a2a-registry"$/],
    ['"Bearer" without a token', 'Bearer', INVALID_TOKEN],
    // It was served as anonymous, while "Bearer" alone was refused.
    ['an empty Authorization header', '', INVALID_TOKEN],
  ] as const) {
    test(`${label} is refused on every JSON-RPC method, reads included`, async () => {
      for (const call of RPC_CALLS) assertRpcRefused(await rpcCall(registry.url, call, authorization), call[0], challenge, 'INVALID_CREDENTIAL');
    });
    test(`${label} is refused on every HTTP+JSON route, reads included`, async () => {
      for (const call of REST_CALLS) assertRestRefused(await restCall(registry.url, call, authorization), `${call[0]} ${call[1]}`, challenge, 'INVALID_CREDENTIAL');
    });
  }

  test('each unusable credential is refused saying what is wrong with it, never repeating it', async () => {
    for (const [authorization, description, problem] of [
      ['Bearer', 'no token after Bearer', /says Bearer but carries no token/],
      ['', 'empty Authorization header', /The Authorization header is empty/],
      [`Bearer ${TOKENS.alice} extra`, 'malformed bearer token', /2 words after Bearer; a token is one word/],
      [`bearer ${TOKENS.alice.slice(0, -1)}X`, 'unknown token', /The bearer token is not recognised/],
      // Another scheme: no error code or description in the challenge (RFC 6750 section 3.1), the body saying what is wrong.
      [`Token ${TOKENS.alice}`, undefined, /not a bearer token/],
    ] as const) {
      for (const answer of [await rpcCall(registry.url, RPC_CALLS[2]!, authorization), await restCall(registry.url, REST_CALLS[3]!, authorization)]) {
        const ctx = `${authorization}: ${answer.status} ${answer.text.slice(0, 200)}`;
        assert.equal(answer.status, 401, ctx);
        assert.equal(
          answer.headers.get('www-authenticate'),
          description === undefined ? 'Bearer realm="a2a-registry"' : `Bearer realm="a2a-registry", error="invalid_token", error_description="${description}"`,
          ctx,
        );
        assert.match(answer.json?.error?.message ?? '', problem, ctx);
        assert.ok(!answer.text.includes(TOKENS.alice.slice(0, -1)), ctx);
      }
    }
  });

  test('a token in the URL (access_token) is refused with 401 on every HTTP door, saying where it goes, never echoed', async () => {
    const secret = `${TOKENS.alice}`;
    const rpcBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} });
    const mcpBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    for (const [path, method, body] of [
      ['/a2a/jsonrpc', 'POST', rpcBody],
      ['/a2a/rest/tasks', 'GET', undefined],
      ['/mcp', 'POST', mcpBody],
      ['/agents', 'GET', undefined],
    ] as const) {
      const res = await fetch(`${registry.url}${path}?pageSize=5&access_token=${secret}`, {
        method,
        body,
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', accept: 'application/json, text/event-stream' },
      });
      const text = await res.text();
      const ctx = `${method} ${path}: ${res.status} ${text.slice(0, 200)}`;
      assert.equal(res.status, 401, ctx);
      assert.match(res.headers.get('www-authenticate') ?? '', /error_description="token in the URL; send it in the Authorization header"/, ctx);
      assert.match(text, /token in its URL \(access_token\).*Authorization: Bearer <token>/, ctx);
      assert.ok(!text.includes(secret), ctx);
    }
  });

  test('two Authorization headers are refused on every HTTP door, whichever comes first (they were: the first counted, the rest dropped)', async () => {
    const url = new URL(registry.url);
    const withTwo = (path: string, method: string, first: string, second: string, body?: string) =>
      new Promise<{ status: number; challenge: string; text: string }>((resolve, reject) => {
        const headers: Array<[string, string]> = [['host', url.host], ['authorization', first], ['authorization', second], ['a2a-version', '1.0'], ['content-type', 'application/json'], ['accept', 'application/json, text/event-stream']];
        const req = http.request({ host: url.hostname, port: url.port, path, method, headers: headers.flat() }, (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, challenge: String(res.headers['www-authenticate'] ?? ''), text }));
        });
        req.on('error', reject);
        req.end(body);
      });
    const rpc = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} });
    const mcp = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    for (const [path, method, body] of [['/a2a/jsonrpc', 'POST', rpc], ['/a2a/rest/tasks', 'GET', undefined], ['/mcp', 'POST', mcp], ['/agents', 'GET', undefined]] as const) {
      for (const [first, second] of [[`Bearer ${TOKENS.alice}`, `Bearer ${TOKENS.bob}`], [mistyped, `Bearer ${TOKENS.alice}`]]) {
        const answer = await withTwo(path, method, first!, second!, body);
        const ctx = `${method} ${path}: ${answer.status} ${answer.text.slice(0, 200)}`;
        assert.equal(answer.status, 401, ctx);
        assert.match(answer.challenge, /error_description="more than one Authorization header"/, ctx);
        assert.match(answer.text, /2 Authorization headers; send exactly one/, ctx);
        assert.ok(!answer.text.includes(TOKENS.alice) && !answer.text.includes(TOKENS.bob), ctx);
      }
    }
  });

  test('the SDK client with a mistyped token gets the refusal, over JSON-RPC and HTTP+JSON', async () => {
    for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
      const client = await sdkClient(registry.url, { token: `${TOKENS.bob}-typo`, binding });
      await assert.rejects(send(client, [textPart('weather')]), /bearer token is not recognised/, binding);
    }
  });

  test('two anonymous callers (SDK JSON-RPC, raw HTTP+JSON) read; writes are declined in the task', async () => {
    const viaSdk = await sdkClient(registry.url);
    assert.ok(Array.isArray(resultOf(await send(viaSdk, [textPart('weather')])).results));
    assert.equal(errorOf(await op(viaSdk, { register: { agentCard: v1Card() } })).code, 'UNAUTHENTICATED');
    const viaRest = await restCall(registry.url, ['POST', '/message:send', { message: message() }]);
    assert.equal(viaRest.status, 200, viaRest.text.slice(0, 200));
    assert.equal(viaRest.json?.task?.status?.state, 'TASK_STATE_COMPLETED');
    const task = await restCall(registry.url, ['GET', `/tasks/${viaRest.json!.task.id}`, undefined]);
    assert.notEqual(task.status, 401);
  });

  test('a valid token is accepted', async () => {
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    resultOf(await op(alice, { register: { agentCard: v1Card('Token Agent', `https://token.example.org/${randomUUID()}/a2a`) } }));
  });

  test('an empty Authorization header, or one of spaces, is refused on every HTTP door that authenticates, as "Bearer" alone is', async () => {
    const rpc = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} });
    const mcp = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const doors = [
      ['POST', '/a2a/jsonrpc', rpc],
      ['GET', '/a2a/rest/tasks', ''],
      ['POST', '/mcp', mcp],
      ['GET', '/agents', ''],
      ['GET', '/.well-known/ard.json', ''],
      ['GET', '/.well-known/ai-catalog.json', ''],
    ] as const;
    for (const [method, path, body] of doors) {
      // Sent as written, byte for byte (HTTP clients drop or trim such a header themselves).
      for (const header of ['Authorization:', 'Authorization:    ']) {
        const answer = await rawRequest(registry.url, `${method} ${path} HTTP/1.1\r\nHost: ${new URL(registry.url).host}\r\nConnection: close\r\n${header}\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
        const ctx = `${method} ${path} with "${header}": ${answer.slice(0, 300)}`;
        assert.match(answer, /^HTTP\/1\.1 401 /, ctx);
        assert.match(answer, /\r\nWWW-Authenticate: Bearer realm="a2a-registry", error="invalid_token", error_description="empty Authorization header"\r\n/i, ctx);
        assert.match(answer, /INVALID_CREDENTIAL/, ctx);
      }
    }
  });
});

describe('REGISTRY_PUBLIC_READ=false', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startTestRegistry({ REGISTRY_PUBLIC_READ: 'false' });
  });
  after(() => registry.close());

  test('every anonymous JSON-RPC call is refused with 401, validate and the v0.3 methods included', async () => {
    for (const call of RPC_CALLS) assertRpcRefused(await rpcCall(registry.url, call), call[0], NO_TOKEN, 'CREDENTIAL_REQUIRED');
    const validate = await rpcCall(registry.url, ['SendMessage', { message: { ...message(), parts: [dataPart({ validate: { agentCard: v1Card() } })] } }, '1.0']);
    assert.equal(validate.status, 401);
  });

  test('every anonymous HTTP+JSON call is refused with 401', async () => {
    for (const call of REST_CALLS) assertRestRefused(await restCall(registry.url, call), `${call[0]} ${call[1]}`, NO_TOKEN, 'CREDENTIAL_REQUIRED');
  });

  test('two anonymous callers (SDK JSON-RPC and HTTP+JSON) are refused; a token opens every read', async () => {
    for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
      const anonymous = await sdkClient(registry.url, { binding });
      await assert.rejects(send(anonymous, [textPart('weather')]), /needs a token for every call/, binding);
      const bob = await sdkClient(registry.url, { token: TOKENS.bob, binding });
      const task = await send(bob, [textPart('weather')]);
      assert.ok(Array.isArray(resultOf(task).results));
      const again = await bob.getTask({ id: task.id, tenant: '', historyLength: undefined });
      assert.equal(again.id, task.id);
    }
    assertRpcRefused(await rpcCall(registry.url, RPC_CALLS[0]!, `Bearer ${TOKENS.bob}x`), 'SendMessage', INVALID_TOKEN, 'INVALID_CREDENTIAL');
  });

  test('the card, /healthz and /readyz stay open', async () => {
    for (const path of ['/.well-known/agent-card.json', '/healthz', '/readyz']) {
      const res = await fetch(`${registry.url}${path}`);
      assert.equal(res.status, 200, path);
      await res.body?.cancel();
    }
    const card = (await (await fetch(`${registry.url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json()) as WireJson;
    assert.deepEqual(card.securityRequirements, [{ schemes: { bearer: { list: [] } } }]);
  });

  test('/metrics is closed too (it answered anyone): the admin token reads it, anonymous and another principal get 401', async () => {
    const scrape = (headers: Record<string, string> = {}) => fetch(`${registry.url}/metrics`, { headers });
    for (const headers of [{}, { authorization: `Bearer ${TOKENS.bob}` }, { authorization: `Bearer ${TOKENS.admin}x` }] as Record<string, string>[]) {
      const refused = await scrape(headers);
      assert.equal(refused.status, 401, JSON.stringify(headers));
      assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="a2a-registry"');
      assert.match(((await refused.json()) as WireJson).error, /needs "Authorization: Bearer <the admin token>" on this registry \(REGISTRY_PUBLIC_READ=false\); give a scraper a token of its own with REGISTRY_METRICS_TOKEN/);
    }
    const admin = await scrape({ authorization: `Bearer ${TOKENS.admin}` });
    assert.equal(admin.status, 200);
    assert.match(await admin.text(), /# HELP/);
  });
});
