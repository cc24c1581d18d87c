/**
 * What operators see and what callers never see: Prometheus metrics at /metrics, request ids
 * on every log line of a request, security headers and CORS, and answers to every kind of
 * error (including internal failures) without stack traces, file paths or module names.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect as connectTcp } from 'node:net';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskState } from '@a2a-js/sdk';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../src/config/config.js';
import { bridgeConsole } from '../src/observability/console-bridge.js';
import { createLogger } from '../src/observability/logger.js';
import { runInScope } from '../src/observability/request-scope.js';
import { startRegistry, type RunningRegistry } from '../src/server.js';
import { mcpServer, toolspec, v03Card, v1Card } from './support/documents.js';
import { sdkClient, type WireJson } from './support/client.js';
import { eventually } from './support/eventually.js';
import { connect } from './support/raw-connection.js';
import { sendWithPush, webhook } from './support/watch-stream.js';
import { TOKENS, TOKENS_ENV, startTestRegistry, tempDir } from './support/registry.js';
import { assertNoInternals, assertWellFormedJsonRpcAnswer, rawPost, sendMessageBody, type RawAnswer } from './support/raw-http.js';

/** Log lines the registry wrote, parsed. */
const logs: Record<string, unknown>[] = [];
const capture = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});
let registry: RunningRegistry;
/** A path and a stack that must never reach a caller. */
const SECRET_ERROR = Object.assign(new Error('ENOENT: open /work/main/data/secret.db at Object.openSync (node:fs:573:3)'), {
  stack: 'Error: boom\n    at RegistryService.search (/work/main/src/registry/service.ts:12:3)\n    at /work/main/node_modules/x/index.js:1:1',
});

const rpc = (body: string | Uint8Array, headers: Record<string, string> = {}) => rawPost(`${registry.url}/a2a/jsonrpc`, body, { headers });
const send = (data: unknown, headers: Record<string, string> = {}, method = 'SendMessage') =>
  rpc(sendMessageBody([{ data, mediaType: 'application/json' }], 1, method), headers);
const alice = { authorization: `Bearer ${TOKENS.alice}` };
const bob = { authorization: `Bearer ${TOKENS.bob}` };

before(async () => {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', REGISTRY_TOKENS: TOKENS_ENV, REGISTRY_DATA_DIR: tempDir(), REGISTRY_RATE_LIMITS: 'false' });
  registry = await startRegistry(config, createLogger('debug', capture));
  await registry.ready;
});
after(() => registry.close());

async function metrics(url = registry.url): Promise<string> {
  const res = await fetch(`${url}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return res.text();
}
const sample = (text: string, name: string, labels = ''): number =>
  text
    .split('\n')
    .filter((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(labels))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);

describe('metrics', () => {
  test('requests by method, operation and outcome; latency; entries; index; validation failures; process', async () => {
    const registered = await send({ register: { agentCard: v1Card('Metered', 'https://metered.example.org/a2a') } }, alice);
    assert.equal(registered.json!.result.task.status.state, 'TASK_STATE_COMPLETED');
    await send({ register: { mcpServer: mcpServer('m', 'https://metered.example.org/mcp'), toolspec: toolspec() } }, alice);
    await send({ register: { agentCard: { name: 'broken' } } }, alice); // UNSUPPORTED_VERSION
    await send({ register: { agentCard: { ...v1Card(), skills: 'none' } } }, alice); // VALIDATION_FAILED
    await send({ validate: { agentCard: { ...v03Card(), url: 5 } } });
    await send({ get: { id: 'missing' } });
    await rpc('{"broken');
    await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'nope' } }));
    await send({ search: { query: 'metered' } }, {}, 'SendStreamingMessage');

    const text = await metrics();
    assert.ok(sample(text, 'registry_requests_total', 'method="SendMessage",operation="register",outcome="COMPLETED",code="none"') >= 2, 'sample(text, \'registry_requests_total\', \'method="SendMessage",operation="register",outcome="COMPLETED",code...');
    assert.ok(sample(text, 'registry_requests_total', 'method="SendMessage",operation="register",outcome="REJECTED",code="UNSUPPORTED_VERSION"') >= 1, 'sample(text, \'registry_requests_total\', \'method="SendMessage",operation="register",outcome="REJECTED",code=...');
    assert.ok(sample(text, 'registry_requests_total', 'operation="get",outcome="REJECTED",code="NOT_FOUND"') >= 1, 'sample(text, \'registry_requests_total\', \'operation="get",outcome="REJECTED",code="NOT_FOUND"\') >= 1');
    assert.ok(sample(text, 'registry_requests_total', 'outcome="REFUSED",code="PARSE_ERROR"') >= 1, 'sample(text, \'registry_requests_total\', \'outcome="REFUSED",code="PARSE_ERROR"\') >= 1');
    assert.ok(sample(text, 'registry_requests_total', 'method="GetTask",operation="none",outcome="ERROR",code="-32001"') >= 1, 'sample(text, \'registry_requests_total\', \'method="GetTask",operation="none",outcome="ERROR",code="-32001"\') ...');
    assert.ok(sample(text, 'registry_requests_total', 'method="SendStreamingMessage",operation="search",outcome="COMPLETED"') >= 1, 'sample(text, \'registry_requests_total\', \'method="SendStreamingMessage",operation="search",outcome="COMPLETE...');
    assert.ok(sample(text, 'registry_request_duration_seconds_count', 'method="SendMessage",operation="register"') >= 4, 'sample(text, \'registry_request_duration_seconds_count\', \'method="SendMessage",operation="register"\') >= 4');
    assert.match(text, /registry_request_duration_seconds_bucket\{le="0\.005",method="SendMessage",operation="register",door="a2a"\}/);
    const counts = await registry.store.count();
    assert.equal(sample(text, 'registry_entries', 'kind="agent"'), counts.agent);
    assert.equal(sample(text, 'registry_entries', 'kind="mcp-server"'), counts['mcp-server']);
    assert.equal(sample(text, 'registry_index_entries'), registry.service.indexSize);
    assert.ok(sample(text, 'registry_validation_failures_total', 'kind="agent",code="UNSUPPORTED_VERSION"') >= 1, 'sample(text, \'registry_validation_failures_total\', \'kind="agent",code="UNSUPPORTED_VERSION"\') >= 1');
    assert.ok(sample(text, 'registry_validation_failures_total', 'kind="agent",code="VALIDATION_FAILED"') >= 2, 'sample(text, \'registry_validation_failures_total\', \'kind="agent",code="VALIDATION_FAILED"\') >= 2');
    for (const name of ['process_resident_memory_bytes', 'process_cpu_seconds_total', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      assert.match(text, new RegExp(`^${name} `, 'm'), name);
    }
  });

  test('an error counts by the JSON-RPC code its answer carries: in an SSE error frame, mid-stream, and on HTTP+JSON (not its HTTP status)', async () => {
    const counted = async (labels: string) => sample(await metrics(), 'registry_requests_total', labels);
    const rest = (path: string, init: RequestInit = {}) =>
      fetch(`${registry.url}/a2a/rest${path}`, { ...init, headers: { 'A2A-Version': '1.0', 'content-type': 'application/json', ...alice, ...init.headers } });
    const labels = {
      resubscribe: 'method="tasks/resubscribe",operation="none",outcome="ERROR",code="-32001"',
      resubscribeOk: 'method="tasks/resubscribe",operation="none",outcome="OK"',
      notCancelable: 'method="CancelTask",operation="none",outcome="ERROR",code="-32002"',
      restNotCancelable: 'method="POST /tasks/{id}:cancel",operation="none",outcome="ERROR",code="-32002"',
      restNotFound: 'method="GET /tasks/{id}",operation="none",outcome="ERROR",code="-32001"',
      restUnsupported: 'method="GET /extendedAgentCard",operation="none",outcome="ERROR",code="-32004"',
      restInvalidParams: 'method="GET /tasks",operation="none",outcome="REFUSED",code="INVALID_PARAMS"',
      brokenStream: 'method="SendStreamingMessage",operation="search",outcome="ERROR",code="-32603"',
      restBrokenStream: 'method="POST /message:stream",operation="search",outcome="ERROR",code="-32603"',
    };
    const before = Object.fromEntries(await Promise.all(Object.entries(labels).map(async ([k, l]) => [k, await counted(l)] as const)));

    // v0.3 tasks/resubscribe answers its error as an SSE error frame on a 200 stream (v0.3 3.3.1, 7.9).
    const resubscribe = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tasks/resubscribe', params: { id: 'nope' } }), { 'A2A-Version': '' });
    assert.match(resubscribe.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.match(resubscribe.text, /^event: error\n/);
    assert.equal(resubscribe.events?.[0]?.error?.code, -32001);
    // The same error on both bindings counts alike; HTTP+JSON by the JSON-RPC code of its ErrorInfo reason, not by its HTTP status.
    const registered = await rest('/message:send', { method: 'POST', body: JSON.stringify({ message: { messageId: 'm-code', role: 'ROLE_USER', parts: [{ data: { validate: { agentCard: v1Card() } } }] } }) });
    const taskId = ((await registered.json()) as WireJson).task.id as string;
    assert.equal((await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'CancelTask', params: { id: taskId } }), alice)).json!.error.code, -32002);
    const notCancelable = await rest(`/tasks/${taskId}:cancel`, { method: 'POST', body: '{}' });
    assert.equal(notCancelable.status, 400);
    assert.equal(((await notCancelable.json()) as WireJson).error.details[0].reason, 'TASK_NOT_CANCELABLE');
    assert.equal((await rest('/tasks/nope')).status, 404);
    assert.equal((await rest('/extendedAgentCard')).status, 400);
    assert.equal((await rest('/tasks?status=NOPE')).status, 400); // a refusal of the request's shape: REFUSED INVALID_PARAMS, the handler's as a guard's

    // A stream that breaks after its first event (the task could not be stored) ends with an error frame: counted as that error, not COMPLETED.
    const taskStore = registry.core.tasks;
    const save = taskStore.save.bind(taskStore);
    let saves = 0;
    taskStore.save = async (...args: Parameters<typeof save>) => {
      if (++saves > 1) throw SECRET_ERROR;
      return save(...args);
    };
    try {
      const broken = await send({ search: { query: 'x' } }, {}, 'SendStreamingMessage');
      assert.equal(broken.events?.at(-1)?.error?.code, -32603);
      saves = 0;
      const restBroken = await rest('/message:stream', { method: 'POST', body: JSON.stringify({ message: { messageId: 'm-broken', role: 'ROLE_USER', parts: [{ text: 'x' }] } }) });
      assert.match(await restBroken.text(), /event: error\ndata: \{"error":\{"code":500,"status":"INTERNAL"/);
    } finally {
      taskStore.save = save;
    }

    const text = await metrics();
    for (const [key, l] of Object.entries(labels)) {
      if (key === 'resubscribeOk') assert.equal(sample(text, 'registry_requests_total', l), before[key], `${l}: a failed resubscribe is no success`);
      else assert.equal(sample(text, 'registry_requests_total', l), before[key]! + 1, l);
    }
    // Never an HTTP status: the label's values are codes and reasons.
    assert.deepEqual(text.split('\n').filter((l) => l.startsWith('registry_requests_total{') && /code="[1-5]\d\d"/.test(l)), []);
  });

  test('a flood of scrapes is not a flood of storage reads: one count of the entries serves them', async () => {
    const count = registry.store.count.bind(registry.store);
    let reads = 0;
    registry.store.count = () => {
      reads++;
      return count();
    };
    try {
      const scrapes = [...(await Promise.all(Array.from({ length: 10 }, () => metrics())))];
      for (let i = 0; i < 10; i++) scrapes.push(await metrics());
      const counts = await count();
      for (const text of scrapes) assert.equal(sample(text, 'registry_entries', 'kind="agent"'), counts.agent);
      assert.ok(reads <= 1, `${reads} storage reads for 20 scrapes`);
    } finally {
      registry.store.count = count;
    }
  });

  test('what callers send never becomes a label: ids, tenants and unknown methods are folded', async () => {
    for (let i = 0; i < 20; i++) {
      await fetch(`${registry.url}/a2a/rest/tasks/${crypto.randomUUID()}`, { headers: { 'A2A-Version': '1.0' } });
      await fetch(`${registry.url}/a2a/rest/tenant-${i}/tasks/x${i}:cancel`, { method: 'POST', headers: { 'A2A-Version': '1.0' } });
      await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: `Evil${i}"} 1\n`, params: {} }));
    }
    const text = await metrics();
    assert.ok(sample(text, 'registry_requests_total', 'method="GET /tasks/{id}"') >= 20, 'sample(text, \'registry_requests_total\', \'method="GET /tasks/{id}"\') >= 20');
    assert.ok(sample(text, 'registry_requests_total', 'method="POST /tasks/{id}:cancel"') >= 20, 'sample(text, \'registry_requests_total\', \'method="POST /tasks/{id}:cancel"\') >= 20');
    assert.ok(!text.includes('Evil'), 'an unknown method is "other"');
    assert.ok(!text.includes('tenant-'), '!text.includes(\'tenant-\')');
    const series = text.split('\n').filter((l) => l.startsWith('registry_requests_total{')).length;
    assert.ok(series < 40, `${series} series`);
  });

  test('an HTTP+JSON path as express routes it (any case, a trailing slash) is counted under its route, and its stream is a stream: open, capped, a watch', async () => {
    const streams = (text: string) => sample(text, 'registry_open_streams');
    const watches = (text: string) => sample(text, 'registry_requests_total', 'method="POST /message:stream",operation="watch"');
    const before = await metrics();
    const body = JSON.stringify({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ data: { watch: { query: 'anything' } } }] } });
    const closed = new AbortController();
    // Served by the SDK's message:stream route all the same: it was "POST other", not a stream
    // (not in registry_open_streams, past REGISTRY_MAX_STREAMS_PER_CLIENT) and the watch refused BAD_REQUEST.
    const res = await fetch(`${registry.url}/a2a/rest/MESSAGE:Stream/`, { method: 'POST', body, headers: { ...alice, 'A2A-Version': '1.0', 'content-type': 'application/json' }, signal: closed.signal });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /TASK_STATE_WORKING/, first);
    assert.equal(streams(await metrics()), streams(before) + 1, 'the stream is open');
    closed.abort();
    await eventually(async () => streams(await metrics()) === streams(before), 'the stream is closed');
    const after = await metrics();
    assert.equal(watches(after), watches(before) + 1, 'counted under its route');
    assert.equal(sample(after, 'registry_requests_total', 'method="POST other"'), sample(before, 'registry_requests_total', 'method="POST other"'));
  });

  test('REGISTRY_METRICS_TOKEN makes /metrics need that bearer token', async () => {
    const guarded = await startTestRegistry({ REGISTRY_METRICS_TOKEN: 'metrics-token-0123456789' });
    try {
      const anonymous = await fetch(`${guarded.url}/metrics`);
      assert.equal(anonymous.status, 401);
      assert.equal((await fetch(`${guarded.url}/metrics`, { headers: { authorization: `Bearer ${TOKENS.admin}` } })).status, 401);
      const ok = await fetch(`${guarded.url}/metrics`, { headers: { authorization: 'Bearer metrics-token-0123456789' } });
      assert.equal(ok.status, 200);
      assert.match(await ok.text(), /registry_requests_total|# HELP/);
      // A token in the URL is refused, as on every door, with the right one in the header too.
      const inUrl = await fetch(`${guarded.url}/metrics?access_token=metrics-token-0123456789`, { headers: { authorization: 'Bearer metrics-token-0123456789' } });
      assert.equal(inUrl.status, 401);
      assert.match(inUrl.headers.get('www-authenticate') ?? '', /error="invalid_request", error_description="token in the URL/);
      assert.match(((await inUrl.json()) as WireJson).error, /^The request carries a token in its URL \(access_token\), which the registry does not read/);
    } finally {
      await guarded.close();
    }
  });

  test('open metrics refuse a token in the URL too, as every door does (they were served, the token left in the URL)', async () => {
    const inUrl = await fetch(`${registry.url}/metrics?access_token=${TOKENS.admin}`);
    assert.equal(inUrl.status, 401);
    assert.match(((await inUrl.json()) as WireJson).error, /replace the token if the URL may have been logged/);
    assert.equal((await fetch(`${registry.url}/metrics?name=registry_requests_total`)).status, 200, 'other query parameters are no token');
  });
});

describe('request ids in the logs', () => {
  test('every line logged while serving a request carries its X-Request-Id, including internal failures', async () => {
    const original = registry.service.search.bind(registry.service);
    registry.service.search = () => {
      throw SECRET_ERROR;
    };
    try {
      const answer = await send({ search: { query: 'x' } }, { 'x-request-id': 'req-observe-1' });
      assert.equal(answer.headers.get('x-request-id'), 'req-observe-1');
      assert.equal(answer.json!.result.task.status.state, 'TASK_STATE_FAILED');
      // The documented code of a failure of the registry itself: it was UNAVAILABLE, which no document names and which reads as "the storage is down".
      const error = (answer.json!.result.task.status.message.parts as { data?: { error?: { code: string } } }[]).find((p) => p.data?.error)?.data?.error;
      assert.equal(error?.code, 'INTERNAL');
      assertNoInternals(answer.text);
      assert.ok(!answer.text.includes('ENOENT'), '!answer.text.includes(\'ENOENT\')');
    } finally {
      registry.service.search = original;
    }
    await new Promise((r) => setTimeout(r, 50)); // the request line is written when the response closes
    const lines = logs.filter((l) => l.requestId === 'req-observe-1');
    assert.ok(lines.some((l) => l.msg === 'operation failed'), 'the failure is logged with the request id');
    assert.ok(lines.some((l) => l.msg === 'request' && l.taskState === 'FAILED' && l.operation === 'search'), 'lines.some((l) => l.msg === \'request\' && l.taskState === \'FAILED\' && l.operation === \'search\')');
    // No line about this failure without the id.
    assert.ok(!logs.some((l) => l.msg === 'operation failed' && l.requestId === undefined), '!logs.some((l) => l.msg === \'operation failed\' && l.requestId === undefined)');
    // An invented id is replaced by a generated one (ids are echoed into logs: keep them tame).
    const weird = await send({ search: {} }, { 'x-request-id': 'bad id\twith spaces' });
    assert.match(weird.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });

  test('an internal failure outside an operation (GetTask, the task store throwing) is logged at error with its cause and stack under the request id it asks the client to report, on JSON-RPC and HTTP+JSON', async () => {
    const tasks = registry.core.tasks as unknown as { load: (...args: unknown[]) => Promise<unknown> };
    const original = tasks.load;
    tasks.load = () => Promise.reject(SECRET_ERROR);
    try {
      const rpcAnswer = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'any' } }), { 'A2A-Version': '1.0', 'x-request-id': 'req-internal-rpc' });
      assert.equal(rpcAnswer.json!.error.code, -32603);
      const rest = await fetch(`${registry.url}/a2a/rest/tasks/any`, { headers: { 'A2A-Version': '1.0', 'x-request-id': 'req-internal-rest' } });
      assert.equal(rest.status, 500);
      for (const text of [rpcAnswer.text, await rest.text()]) {
        assertNoInternals(text);
        assert.match(text, /report it with the X-Request-Id/);
      }
    } finally {
      tasks.load = original;
    }
    await new Promise((r) => setTimeout(r, 50)); // the request line is written when the response closes
    for (const id of ['req-internal-rpc', 'req-internal-rest']) {
      // Only the request line was written: the id the answer asks to report led to no cause.
      const failure = logs.find((l) => l.requestId === id && l.level === 50);
      assert.ok(failure, `the failure of ${id} is logged at error: ${JSON.stringify(logs.filter((l) => l.requestId === id))}`);
      const err = failure.err as { message?: string; stack?: string };
      assert.match(String(err.message), /secret\.db/);
      assert.match(String(err.stack), /RegistryService\.search/);
    }
  });

  test('a body refused before it is read as a request (not JSON, too large, wrong type), a path no door takes or the web page, is answered with a request id and logged at info under it', async () => {
    const refused = [
      ['req-body-rpc', '/a2a/jsonrpc', '{"jsonrpc":', 'application/json', 'PARSE_ERROR'],
      ['req-body-rest', '/a2a/rest/message:send', '<message/>', 'application/xml', 'CONTENT_TYPE_NOT_SUPPORTED'],
      ['req-body-mcp', '/mcp', 'x'.repeat(2_000_000), 'application/json', 'REQUEST_TOO_LARGE'],
    ] as const;
    for (const [id, path, body, type, reason] of refused) {
      const answer = await rawPost(`${registry.url}${path}`, body, { headers: { 'x-request-id': id, 'content-type': type, accept: 'application/json, text/event-stream' } });
      assert.ok(answer.status >= 200 && answer.status < 500, `${path}: ${answer.status}`);
      assert.equal(answer.headers.get('x-request-id'), id, `${path} answers with its request id`);
      await eventually(async () => logs.some((l) => l.requestId === id && l.msg === 'request'), `the request line of ${path}`);
      const line = logs.find((l) => l.requestId === id && l.msg === 'request')!;
      assert.equal(line.level, 30, `${path}: a client's mistake is info`);
      assert.equal(line.errorCode, reason, `${path}: the line says why`);
      assert.equal(line.status, answer.status);
      assert.ok(!logs.some((l) => l.requestId === id && (Number(l.level) >= 40 || JSON.stringify(l).includes('stack'))), `${path}: no warning, no stack`);
    }
    // A path no door takes (a scan) too: answered with its id, one info line naming it.
    const scan = await fetch(`${registry.url}/wp-login.php`, { headers: { 'x-request-id': 'req-scan' } });
    assert.equal(scan.status, 404);
    assert.equal(scan.headers.get('x-request-id'), 'req-scan');
    await eventually(async () => logs.some((l) => l.requestId === 'req-scan' && l.msg === 'request'), 'the request line of the scan');
    const line = logs.find((l) => l.requestId === 'req-scan' && l.msg === 'request')!;
    assert.equal(line.level, 30);
    assert.equal(line.http, 'GET /wp-login.php');
    assert.equal(line.errorCode, 'NOT_FOUND');
    // And the web page (built or not), which was answered without either.
    const page = await fetch(`${registry.url}/entries/some-id`, { headers: { 'x-request-id': 'req-page', accept: 'text/html' } });
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(page.headers.get('x-request-id'), 'req-page');
    await eventually(async () => logs.some((l) => l.requestId === 'req-page' && l.msg === 'request' && l.http === 'GET /entries/some-id'), 'the request line of the page');
  });

  test('an MCP request refused for its Host (DNS rebinding) is answered with a request id and logged under it, by its route', async () => {
    const { hostname, port } = new URL(registry.url);
    const answer = await new Promise<{ status?: number; requestId?: string }>((resolve, reject) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const req = request({ host: hostname, port, path: '/mcp', method: 'POST', headers: { host: 'rebound.example', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-request-id': 'req-rebound' } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, requestId: res.headers['x-request-id'] as string | undefined }));
      });
      req.on('error', reject);
      req.end(body);
    });
    assert.equal(answer.status, 403);
    assert.equal(answer.requestId, 'req-rebound');
    await eventually(async () => logs.some((l) => l.requestId === 'req-rebound'), 'the refusal is logged');
    const line = logs.find((l) => l.requestId === 'req-rebound' && l.msg === 'request');
    assert.deepEqual([line?.method, line?.status, line?.errorCode, line?.level], ['POST /mcp', 403, 'FORBIDDEN_HOST', 30]);
  });

  test('an MCP request sent in absolute form (as a proxy sends it) is answered, not a 500 logged as an internal error', async () => {
    const { host, hostname, port } = new URL(registry.url);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const head = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connectTcp(Number(port), hostname, () =>
        socket.end(`POST http://${host}/mcp HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: req-absolute-mcp\r\nConnection: close\r\n\r\n${body}`),
      );
      socket.on('error', reject).on('data', (chunk: Buffer) => (text += chunk.toString())).on('end', () => resolve(text));
    });
    assert.match(head, /^HTTP\/1\.1 200 /, head.slice(0, 300));
    assert.match(head, /"tools":\[/);
    await eventually(async () => logs.some((l) => l.requestId === 'req-absolute-mcp' && l.msg === 'request'), 'the request line');
    assert.deepEqual(logs.filter((l) => l.requestId === 'req-absolute-mcp' && Number(l.level) >= 50), [], 'no error line');
  });

  test('a catalog door\'s request line names its method as its metric label does (the AI Catalog was "GET /.well-known/ai-catalog.json/")', async () => {
    for (const [id, path] of [['req-ai-catalog', '/.well-known/ai-catalog.json'], ['req-ard', '/.well-known/ard.json']] as const) {
      const answer = await fetch(`${registry.url}${path}`, { headers: { 'x-request-id': id } });
      assert.equal(answer.status, 200, path);
      await eventually(async () => logs.some((l) => l.requestId === id && l.msg === 'request'), `the request line of ${path}`);
      assert.equal(logs.find((l) => l.requestId === id && l.msg === 'request')!.method, `GET ${path}`);
      assert.ok((await metrics()).includes(`method="GET ${path}"`), `the metric label of ${path}`);
    }
    // An id is the caller's to make long: the line names the route (it named the path, 8 KB of it), and
    // a path no door names (a scan, the web page) by its first 64 characters, as JSON-RPC's route.
    const long = 'x'.repeat(2000);
    // What each answers: 400 for an entry id longer than any (the catalog's routes), 404 for a path
    // no door takes, the web page 200 when built and 503 when not.
    const named = [
      ['req-catalog-long', `/agents/${long}`, 'application/json', 'GET /agents/{ref}', [400]],
      ['req-card-long', `/agents/${long}/card.json`, 'application/json', 'GET /agents/{id}/card.json', [400]],
      ['req-scan-long', `/${long}`, 'application/json', `GET /${'x'.repeat(63)}`, [404]],
      ['req-page-long', `/entries/${long}`, 'text/html', `GET /entries/${'x'.repeat(55)}`, [200, 503]],
    ] as const;
    for (const [id, path, accept, method, statuses] of named) {
      const answer = await fetch(`${registry.url}${path}`, { headers: { 'x-request-id': id, accept } });
      assert.ok((statuses as readonly number[]).includes(answer.status), `${method}: ${answer.status}`);
      await answer.arrayBuffer();
      await eventually(async () => logs.some((l) => l.requestId === id && l.msg === 'request'), `the request line of ${method}`);
      assert.equal(logs.find((l) => l.requestId === id && l.msg === 'request')!.method, method);
    }
  });

  test('the console bridge turns SDK console output into JSON lines with the request id', () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const saved = { error: console.error, warn: console.warn };
    try {
      bridgeConsole(createLogger('info', sink));
      runInScope({ requestId: 'req-console-1', streaming: true }, () => console.error('Error during SSE streaming (request %s):', 7, new Error('x')));
      console.warn('outside any request');
    } finally {
      console.error = saved.error;
      console.warn = saved.warn;
    }
    assert.equal(lines[0]!.requestId, 'req-console-1');
    assert.equal(lines[0]!.level, 50);
    assert.match(String(lines[0]!.msg), /Error during SSE streaming \(request 7\)/);
    assert.equal(lines[1]!.requestId, undefined);
  });
});

describe('a request line says what the metrics count', () => {
  /** The request line of the request sent with X-Request-Id `id`, once written. */
  const lineOf = async (id: string): Promise<Record<string, unknown>> => {
    await eventually(async () => logs.some((l) => l.requestId === id && l.msg === 'request'), `the request line of ${id}`);
    return logs.find((l) => l.requestId === id && l.msg === 'request')!;
  };

  test('a protocol error answered carries the code its metric counts (a failed GetTask is no success), and an HTTP+JSON line names its route, not the path sent', async () => {
    const counted = async (labels: string) => sample(await metrics(), 'registry_requests_total', labels);
    const calls = [
      ['GetTask', { id: 'nope' }],
      ['CancelTask', { id: 'nope' }],
      ['GetTaskPushNotificationConfig', { taskId: 'nope', id: 'config' }],
    ] as const;
    for (const [method, params] of calls) {
      const labels = `method="${method}",operation="none",outcome="ERROR",code="-32001"`;
      const before = await counted(labels);
      const answer = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), { ...alice, 'x-request-id': `req-code-${method}` });
      assert.equal(answer.json!.error.code, -32001, method);
      assert.equal(await counted(labels), before + 1, labels);
      const line = await lineOf(`req-code-${method}`);
      assert.deepEqual([line.status, line.method, line.errorCode], [200, method, '-32001'], JSON.stringify(line));
    }
    // The path as sent can be long and is the caller's to choose: the line names the route, as the metric label does (ids and tenant out).
    const routes = [
      ['req-code-rest', `/tasks/${'x'.repeat(2000)}`, 'GET /tasks/{id}'],
      ['req-code-rest-tenant', '/acme/tasks/nope/pushNotificationConfigs/config', 'GET /tasks/{id}/pushNotificationConfigs'],
    ] as const;
    for (const [id, path, route] of routes) {
      const labels = `method="${route}",operation="none",outcome="ERROR",code="-32001"`;
      const before = await counted(labels);
      const res = await fetch(`${registry.url}/a2a/rest${path}`, { headers: { 'A2A-Version': '1.0', ...alice, 'x-request-id': id } });
      assert.equal(res.status, 404, path);
      assert.equal(((await res.json()) as WireJson).error.details[0].reason, 'TASK_NOT_FOUND');
      assert.equal(await counted(labels), before + 1, labels);
      const line = await lineOf(id);
      assert.deepEqual([line.status, line.method, line.errorCode], [404, route, '-32001'], JSON.stringify(line));
    }
    // An unknown JSON-RPC method is the caller's to make long too: the line keeps its first 64 characters, as the MCP door's.
    const unknown = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: `NoSuchMethod${'x'.repeat(5000)}`, params: {} }), { ...alice, 'x-request-id': 'req-code-unknown' });
    assert.equal(unknown.json!.error.code, -32601);
    const refused = await lineOf('req-code-unknown');
    assert.deepEqual([refused.method, refused.errorCode], [`NoSuchMethod${'x'.repeat(52)}`, 'METHOD_NOT_FOUND'], JSON.stringify(refused).slice(0, 300));
    // A success names no code.
    const listed = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }), { ...alice, 'x-request-id': 'req-code-ok' });
    assert.ok(listed.json!.result, listed.text);
    const ok = await lineOf('req-code-ok');
    assert.deepEqual([ok.status, ok.method, ok.errorCode], [200, 'ListTasks', undefined], JSON.stringify(ok));
  });

  test('a request whose body never arrives in full is logged on every door that reads one, under the name a complete one without a method gets (its route): "aborted" when its client goes away, 408 REQUEST_TIMEOUT when the server cuts it at REGISTRY_REQUEST_TIMEOUT_SECONDS, as the metrics count it', async (t) => {
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', REGISTRY_TOKENS: TOKENS_ENV, REGISTRY_DATA_DIR: tempDir(), REGISTRY_RATE_LIMITS: 'false', REGISTRY_REQUEST_TIMEOUT_SECONDS: '2' });
    const slow = await startRegistry(config, createLogger('info', capture));
    t.after(() => slow.close());
    await slow.ready;
    const host = new URL(slow.url).host;
    // Each path reads the body before naming the request (JSON-RPC, MCP) or after (HTTP+JSON, the catalog's search).
    // The name each is logged under: its route (JSON-RPC and MCP name a request by its method, which
    // such a body does not say: "POST /" and "none" were the JSON-RPC endpoint's path within itself
    // and a call without a method).
    const paths = [
      ['/a2a/jsonrpc', 'POST /a2a/jsonrpc'],
      ['/a2a/rest/message:send', 'POST /message:send'],
      ['/mcp', 'POST /mcp'],
      ['/search', 'POST /search'],
    ] as const;
    /** Headers announcing `length` bytes of body, and `body`: 10 of 100 by default. */
    const partial = (path: string, id: string, body = '{"jsonrpc"', length = 100) =>
      `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nA2A-Version: 1.0\r\n` +
      `Authorization: Bearer ${TOKENS.alice}\r\nX-Request-Id: ${id}\r\nContent-Length: ${length}\r\n\r\n${body}`;
    await Promise.all(
      paths.map(async ([path, route], i) => {
        // A complete body that does not parse, so names no method: the name the others are logged under.
        const complete = await connect(slow.url);
        complete.socket.write(partial(path, `req-complete-${i}`, '{"jsonrpc"', 10));
        const answered = await lineOf(`req-complete-${i}`);
        complete.socket.destroy();
        assert.equal(answered.method, route, `${path}: ${JSON.stringify(answered)}`);
        // The client goes away mid-body: nothing is answered, so the line has no status.
        const gone = await connect(slow.url);
        gone.socket.write(partial(path, `req-gone-${i}`));
        await sleep(300);
        gone.socket.destroy();
        const left = await lineOf(`req-gone-${i}`);
        assert.deepEqual([left.aborted, left.status, left.errorCode, left.method], [true, undefined, undefined, route], `${path}: ${JSON.stringify(left)}`);
        // The server cuts a body that has not come within the request timeout, and answers 408: the line says so.
        const cut = await connect(slow.url);
        cut.socket.write(partial(path, `req-cut-${i}`));
        await cut.closed;
        assert.match(cut.received(), /^HTTP\/1\.1 408 /, path);
        const timedOut = await lineOf(`req-cut-${i}`);
        assert.deepEqual([timedOut.aborted, timedOut.status, timedOut.errorCode, timedOut.method], [undefined, 408, 'REQUEST_TIMEOUT', route], `${path}: ${JSON.stringify(timedOut)}`);
        // Its duration is the request's, from its arrival (a JSON-RPC line's began once the body was read: under a millisecond).
        assert.ok(Number(timedOut.durationMs) >= 1500, `${path}: ${JSON.stringify(timedOut)}`);
      }),
    );
    const text = await metrics(slow.url);
    assert.equal(sample(text, 'registry_requests_total', 'outcome="ABORTED"'), paths.length, text);
    assert.equal(sample(text, 'registry_requests_total', 'outcome="REFUSED",code="REQUEST_TIMEOUT"'), paths.length, text);
  });
});

describe('security headers and CORS', () => {
  test('helmet headers on every kind of answer; no X-Powered-By', async () => {
    const answers = [
      await fetch(`${registry.url}/healthz`),
      await fetch(`${registry.url}/nope`),
      await fetch(`${registry.url}/metrics`),
      await fetch(`${registry.url}/a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }),
    ];
    for (const res of answers) {
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(res.headers.get('content-security-policy'), "default-src 'none';frame-ancestors 'none'");
      assert.equal(res.headers.get('x-frame-options'), 'DENY');
      assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
      assert.equal(res.headers.get('cross-origin-resource-policy'), 'same-origin');
      assert.equal(res.headers.get('x-powered-by'), null);
      assert.equal(res.headers.get('access-control-allow-origin'), null, 'CORS is off by default');
      await res.body?.cancel();
    }
    const preflight = await fetch(`${registry.url}/a2a/jsonrpc`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
    // The card has the same headers, but is open to every origin (public metadata, as the catalogs that name it).
    const card = await fetch(`${registry.url}/.well-known/agent-card.json`);
    await card.arrayBuffer();
    assert.equal(card.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(card.headers.get('content-security-policy'), "default-src 'none';frame-ancestors 'none'");
    assert.equal(card.headers.get('x-frame-options'), 'DENY');
    assert.equal(card.headers.get('access-control-allow-origin'), '*');
    assert.equal(card.headers.get('cross-origin-resource-policy'), 'cross-origin');
  });

  test('REGISTRY_CORS_ORIGINS: listed origins get CORS (preflight with the A2A headers), others do not; * allows all', async () => {
    // An origin as an operator may write it, with capitals and its scheme's default port, is the one browsers send (it matched none).
    const withCors = await startTestRegistry({ REGISTRY_CORS_ORIGINS: 'https://app.example.com, http://localhost:5173, https://Admin.Example.com:443' });
    try {
      const preflight = await fetch(`${withCors.url}/a2a/jsonrpc`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,a2a-version' },
      });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://app.example.com');
      assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Authorization/);
      assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /A2A-Version/);
      assert.equal(preflight.headers.get('access-control-allow-credentials'), null);
      const listed = await fetch(`${withCors.url}/healthz`, { headers: { origin: 'http://localhost:5173' } });
      assert.equal(listed.headers.get('access-control-allow-origin'), 'http://localhost:5173');
      assert.match(listed.headers.get('access-control-expose-headers') ?? '', /X-Request-Id/);
      assert.equal(listed.headers.get('cross-origin-resource-policy'), 'cross-origin');
      const written = await fetch(`${withCors.url}/healthz`, { headers: { origin: 'https://admin.example.com' } });
      assert.equal(written.headers.get('access-control-allow-origin'), 'https://admin.example.com');
      const other = await fetch(`${withCors.url}/healthz`, { headers: { origin: 'https://evil.example' } });
      assert.equal(other.headers.get('access-control-allow-origin'), null);
      // The card is open to every origin, listed or not (reach-catalog.test: the documents open to every origin).
      const card = await fetch(`${withCors.url}/.well-known/agent-card.json`, { headers: { origin: 'https://evil.example' } });
      assert.equal(card.headers.get('access-control-allow-origin'), '*');
    } finally {
      await withCors.close();
    }
    const open = await startTestRegistry({ REGISTRY_CORS_ORIGINS: '*' });
    try {
      const res = await fetch(`${open.url}/healthz`, { headers: { origin: 'https://anyone.example' } });
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
    } finally {
      await open.close();
    }
  });

  test('REGISTRY_CORS_ORIGINS: a browser may DELETE a push config (the HTTP+JSON binding\'s one DELETE route), and nothing the bindings lack', async () => {
    const withCors = await startTestRegistry({ REGISTRY_CORS_ORIGINS: 'https://app.example' });
    try {
      const path = `${withCors.url}/a2a/rest/tasks/x/pushNotificationConfigs/y`;
      const preflight = (method: string) =>
        fetch(path, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': method, 'access-control-request-headers': 'authorization,a2a-version' } });
      const allowed = async (method: string) => {
        const res = await preflight(method);
        assert.equal(res.status, 204);
        assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example');
        return (res.headers.get('access-control-allow-methods') ?? '').split(',');
      };
      // A browser sends the DELETE only when the preflight's allowed methods name it.
      assert.ok((await allowed('DELETE')).includes('DELETE'));
      for (const method of ['PUT', 'PATCH']) assert.ok(!(await allowed(method)).includes(method), `${method} is not allowed`);
      // The DELETE itself then reaches the binding (an unknown task: 404) with the CORS headers the browser reads.
      const res = await fetch(path, { method: 'DELETE', headers: { origin: 'https://app.example', authorization: `Bearer ${TOKENS.alice}`, 'A2A-Version': '1.0' } });
      assert.equal(res.status, 404);
      assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example');
    } finally {
      await withCors.close();
    }
  });
});

describe('no internals in any answer', () => {
  test('/readyz, whose check failed: says so and what to do, the error (a path) goes to the log only', async () => {
    const store = registry.store;
    const originalPing = store.ping.bind(store);
    store.ping = async () => {
      throw SECRET_ERROR;
    };
    let answer: Response;
    try {
      answer = await fetch(`${registry.url}/readyz`);
    } finally {
      store.ping = originalPing;
    }
    assert.equal(answer.status, 503);
    assert.deepEqual(await answer.json(), { status: 'not ready', reason: 'the readiness check failed (the cause is in the log); if it goes on, restart the registry' });
    const logged = logs.find((l) => l.msg === 'the readiness check failed');
    assert.match(String((logged?.err as { message?: unknown } | undefined)?.message), /secret\.db/, JSON.stringify(logged));
    assert.equal((await fetch(`${registry.url}/readyz`)).status, 200, 'ready again');
  });

  /** Every answer gets checked; A2A answers must also carry a request id. */
  const seen: Array<{ what: string; answer: RawAnswer }> = [];
  const check = (what: string, answer: RawAnswer) => {
    seen.push({ what, answer });
    assertNoInternals(answer.text, what);
    return answer;
  };
  const get = async (path: string, headers: Record<string, string> = { 'A2A-Version': '1.0' }) => {
    const res = await fetch(`${registry.url}${path}`, { headers });
    return { status: res.status, headers: res.headers, text: await res.text() } as RawAnswer;
  };

  test('transport, protocol, contract and internal errors, in both bindings and in streams', async () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    // Transport and JSON-RPC errors.
    check('parse error', await rpc('{"jsonrpc'));
    check('too large', await rpc(sendMessageBody([{ text: 'x'.repeat(2 * 1024 * 1024) }])));
    check('too deep', await rpc(deep));
    check('bad utf-8', await rpc(Buffer.from([0x7b, 0xff, 0x7d])));
    check('content type', await rpc('{}', { 'content-type': 'text/xml' }));
    check('batch', await rpc('[]'));
    check('unknown method', await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'Nope', params: {} })));
    check('bad params', await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { parts: [null] } } })));
    check('no message', await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {} })));
    check('task not found', await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } })));
    check('version', await rpc(sendMessageBody([{ text: 'x' }]), { 'A2A-Version': '9.9' }));
    check('push', await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'CreateTaskPushNotificationConfig', params: { taskId: 'x', pushNotificationConfig: { url: 'http://x' } } })));
    check('extended card', await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetExtendedAgentCard' })));
    check('v0.3 bad', await rawPost(`${registry.url}/a2a/jsonrpc`, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: null } }), { headers: { 'A2A-Version': '' } }));
    const done = await send({ list: {} });
    const doneId = done.json!.result.task.id;
    check('not cancelable', await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'CancelTask', params: { id: doneId } })));
    // HTTP+JSON and plain HTTP errors.
    check('rest task not found', await get('/a2a/rest/tasks/x'));
    check('rest bad list', await get('/a2a/rest/tasks?pageSize=abc'));
    check('rest bad body', await rawPost(`${registry.url}/a2a/rest/message:send`, '[1]'));
    check('rest deep', await rawPost(`${registry.url}/a2a/rest/message:send`, deep));
    check('rest too large', await rawPost(`${registry.url}/a2a/rest/message:send`, JSON.stringify({ message: { parts: [{ text: 'x'.repeat(2 * 1024 * 1024) }] } })));
    check('404', await get('/no/such/route'));
    check('GET on JSON-RPC', await get('/a2a/jsonrpc'));
    // Every contract error code.
    const rejected = [
      ['BAD_REQUEST', await send({ lookup: {} })],
      ['VALIDATION_FAILED', await send({ register: { agentCard: { ...v1Card(), skills: 5 } } }, alice)],
      ['TOO_LARGE', await send({ register: { agentCard: { ...v1Card(), description: 'x'.repeat(20_000) } } }, alice)],
      ['UNSUPPORTED_VERSION', await send({ register: { agentCard: { ...v1Card(), supportedInterfaces: undefined, protocolVersion: '2.0' } } }, alice)],
      ['UNAUTHENTICATED', await send({ register: { agentCard: v1Card() } })],
      ['NOT_FOUND', await send({ unregister: { id: 'missing' } }, alice)],
    ] as const;
    const owned = await send({ register: { agentCard: v1Card('Owned', 'https://owned.example.org/a2a') } }, alice);
    const ownedId = owned.json!.result.task.artifacts[0].parts[0].data.id;
    const forbidden = await send({ unregister: { id: ownedId } }, bob);
    for (const [code, answer] of [...rejected, ['FORBIDDEN', forbidden] as const]) {
      check(code, answer);
      const error = answer.json!.result.task.status.message.parts.find((p: WireJson) => p.data).data.error;
      assert.equal(error.code, code);
    }

    // Internal failures: the executor's (a FAILED task), the SDK's (-32603, HTTP 500, an SSE error event).
    const service = registry.service;
    const taskStore = registry.core.tasks;
    const originalSearch = service.search.bind(service);
    const originalSave = taskStore.save.bind(taskStore);
    try {
      service.search = () => {
        throw SECRET_ERROR;
      };
      const failed = check('executor failure', await send({ search: { query: 'x' } }));
      assert.equal(failed.json!.result.task.status.state, 'TASK_STATE_FAILED');
      check('executor failure, streamed', await send({ search: { query: 'x' } }, {}, 'SendStreamingMessage'));
      service.search = originalSearch;

      taskStore.save = async () => {
        throw SECRET_ERROR;
      };
      const sdk = check('SDK failure', await send({ search: { query: 'x' } }));
      assert.equal(sdk.json!.error.code, -32603);
      assert.match(sdk.json!.error.message, /Internal error/);
      const rest = check('SDK failure, HTTP+JSON', await rawPost(`${registry.url}/a2a/rest/message:send`, JSON.stringify({ message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } })));
      assert.equal(rest.status, 500);
      const streamed = check('SDK failure, streamed', await send({ search: { query: 'x' } }, {}, 'SendStreamingMessage'));
      assertWellFormedJsonRpcAnswer(streamed, 'SendStreamingMessage');
    } finally {
      service.search = originalSearch;
      taskStore.save = originalSave;
    }
    assert.ok(!seen.some(({ answer }) => answer.text.includes('ENOENT') || answer.text.includes('secret.db')), '!seen.some(({ answer }) => answer.text.includes(\'ENOENT\') || answer.text.includes(\'secret.db\'))');
    // Every answer on the A2A endpoints carries a request id, except refusals before parsing.
    for (const { what, answer } of seen) {
      if (/^(parse error|too large|too deep|bad utf-8|rest deep|rest too large|404|GET on JSON-RPC)$/.test(what)) continue;
      assert.ok(answer.headers.get('x-request-id'), `${what} has an X-Request-Id`);
    }
    assert.equal((await fetch(`${registry.url}/healthz`)).status, 200);
  });
});

test('a failing webhook (one that redirects) is logged by its origin only: its path and query (often its secret), and where it redirects, stay out of the operator log; its owner is told where', async () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  // One attempt (no retries), bounded by the fetch timeout alone. With a window of 0.75 s, a loaded
  // machine's fresh registry (loading undici, its first request) did not finish one attempt
  // within it, and the owner was told of the window's cut instead of the redirect.
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', REGISTRY_TOKENS: TOKENS_ENV, REGISTRY_DATA_DIR: tempDir(), REGISTRY_FETCH_ALLOW: '127.0.0.1', REGISTRY_WEBHOOK_RETRY_SECONDS: '0' });
  const own = await startRegistry(config, createLogger('info', sink));
  // A redirect is a failed delivery (a notification is not re-sent elsewhere); where it points is often the same secret path.
  const hook = await webhook(() => 308, undefined, 0, { location: 'https://hooks.example.invalid/services/T000/B000/s3cr3tmoved' });
  try {
    await own.ready;
    const client = await sdkClient(own.url, { token: TOKENS.bob });
    const url = `${hook.url}/services/T000/B000/s3cr3tpath?token=s3cr3tquery`;
    const task = await sendWithPush(client, { query: 'anything' }, { url, token: 't' });
    let current: WireJson = {};
    await eventually(async () => {
      current = (await client.getTask({ tenant: '', id: task.id, historyLength: undefined })) as unknown as WireJson;
      return current.status?.state === TaskState.TASK_STATE_FAILED;
    }, 'the watch ends FAILED');
    // The watch's owner is told the URL in full: it is theirs.
    assert.match(JSON.stringify(current.status?.message), /s3cr3tpath/);
    // And where it redirected, which is the URL to configure (it said "answered HTTP 308" alone).
    assert.match(JSON.stringify(current.status?.message), /answered HTTP 308 \(a redirect to https:\/\/hooks\.example\.invalid\/services\/T000\/B000\/s3cr3tmoved\); a notification is not re-sent/);
    // Its one attempt is said as that (it said "not accepted within 0 s").
    assert.match(JSON.stringify(current.status?.message), /the initial matches were not accepted in one attempt \(REGISTRY_WEBHOOK_RETRY_SECONDS is 0: no retries\) \(last: /);
    // The final status's one attempt, and its log line, come after the task is FAILED: waited
    // for, not slept for (300 ms were too few once on a loaded machine).
    let failed: Record<string, unknown> | undefined;
    await eventually(async () => (failed = lines.find((l) => l.msg === 'push notifications failed; the watch ends')) !== undefined, 'the log line of the failed watch');
    assert.ok(failed);
    assert.equal(failed.url, `${new URL(hook.url).origin}/…`);
    const leaked = lines.filter((l) => JSON.stringify(l).includes('s3cr3t'));
    assert.deepEqual(leaked, [], 'no log line names the webhook\'s path or query');
  } finally {
    await hook.close();
    await own.close();
  }
});
