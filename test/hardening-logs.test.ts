/**
 * Small holes (issue 12, point 6), with the registry in its own process as `npm start` runs it
 * (its console bridged into the JSON log): a task id that is not valid percent-encoding is a 400,
 * not a 500; a bearer token put in a query string never reaches the logs; clients' mistakes are
 * logged at info (or warn) without a stack trace. (/metrics behind REGISTRY_METRICS_TOKEN: see
 * hardening-observability.test.ts.)
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { loggableUrl } from '../src/http/request-log.js';
import { rawPost } from './support/raw-http.js';
import { TOKENS, TOKENS_ENV, spawnRegistry, tempDir, type ChildRegistry } from './support/registry.js';

let registry: ChildRegistry;
before(async () => {
  registry = await spawnRegistry({ REGISTRY_DATA_DIR: tempDir(), REGISTRY_TOKENS: TOKENS_ENV });
});
after(() => registry.stop());

/** The log lines written from now until `work` is done (and its request lines are in). */
async function logsOf(work: () => Promise<unknown>, requests: number): Promise<Record<string, unknown>[]> {
  const from = registry.logs.length;
  await work();
  const until = Date.now() + 10_000;
  while (registry.logs.slice(from).filter((l) => l.msg === 'request').length < requests && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  return registry.logs.slice(from);
}

const get = (path: string) => fetch(`${registry.url}${path}`, { headers: { 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.alice}` } });

describe('small holes', () => {
  test('GET /a2a/rest/tasks/%ff%fe is a 400 saying what is wrong, logged at info without a stack', async () => {
    let status = 0;
    let body: { error?: { status?: string; message?: string } } = {};
    const lines = await logsOf(async () => {
      const res = await get('/a2a/rest/tasks/%ff%fe');
      status = res.status;
      body = (await res.json()) as typeof body;
    }, 1);
    assert.equal(status, 400);
    assert.equal(body.error?.status, 'INVALID_ARGUMENT');
    assert.match(body.error!.message!, /not valid percent-encoded UTF-8/);
    assert.ok(lines.every((l) => Number(l.level) < 40), `no warning or error: ${JSON.stringify(lines)}`);
    assert.ok(!JSON.stringify(lines).includes('stack'));
    assert.ok(lines.some((l) => l.msg === 'request refused'));
    // Without A2A-Version, the version's refusal, as /tasks/abc gets: it was 404 "No route GET /a2a/rest/tasks/%ff%fe", the route being there.
    // (Their request lines awaited, as the tests after this one read the lines that follow.)
    let answers: { status: number; body: typeof body }[] = [];
    await logsOf(async () => {
      answers = await Promise.all(['%ff%fe', 'abc'].map(async (id) => {
        const res = await fetch(`${registry.url}/a2a/rest/tasks/${id}`);
        return { status: res.status, body: (await res.json()) as typeof body };
      }));
    }, 2);
    const [bare, known] = answers;
    assert.deepEqual(bare, known);
    assert.match(bare!.body.error!.message!, /A request without A2A-Version is a v0\.3 request/);
  });

  test('a query parameter that is not valid percent-encoded UTF-8 is a 400 naming it, as in the path (it listed the tasks of a context "\\uFFFD")', async () => {
    const cases = [
      ['contextId=%ff', 'contextId'],
      ['pageSize=5&status=TASK_STATE_COMPLETED%e2%82', 'status'],
      ['%ff=1', '%ff'],
    ] as const;
    // (Each request's log line waited for, so that none falls into the next test's.)
    await logsOf(async () => {
      for (const [query, field] of cases) {
        const res = await get(`/a2a/rest/tasks?${query}`);
        const body = (await res.json()) as { error?: { status?: string; message?: string; details?: { metadata?: { field?: string } }[] } };
        assert.equal(res.status, 400, query);
        assert.equal(body.error?.status, 'INVALID_ARGUMENT', query);
        assert.ok(body.error!.message!.startsWith(`The query parameter ${field} is not valid percent-encoded UTF-8`), body.error!.message);
        assert.ok(body.error!.details!.some((d) => d.metadata?.field === field), JSON.stringify(body));
      }
      // Valid UTF-8, percent-encoded or not, is read as ever.
      const valid = await get('/a2a/rest/tasks?contextId=caf%C3%A9+au+lait');
      assert.equal(valid.status, 200);
      await valid.text();
    }, cases.length + 1);
  });

  test('a bearer token in the query string is redacted from the request log', async () => {
    const secret = 'query-string-secret-0123456789';
    const lines = await logsOf(() => get(`/a2a/rest/tasks?access_token=${secret}&pageSize=5&token=${secret}`), 1);
    const text = JSON.stringify(lines);
    assert.ok(!text.includes(secret), 'the token is nowhere in the logs');
    const request = lines.find((l) => l.msg === 'request')!;
    assert.equal(request.http, 'GET /a2a/rest/tasks?access_token=[redacted]&pageSize=5&token=[redacted]');
    // A ';' between parameters: URLSearchParams reads one pageSize, whose value was logged as sent, token and all.
    const semicolon = await logsOf(() => get(`/a2a/rest/tasks?pageSize=1;access_token=${secret}`), 1);
    assert.ok(!JSON.stringify(semicolon).includes(secret), 'the token after a ; is nowhere in the logs');
    assert.equal(semicolon.find((l) => l.msg === 'request')!.http, 'GET /a2a/rest/tasks?pageSize=[redacted]');
    assert.equal(loggableUrl(`/a2a/rest/tasks?contextId=c%26access_token%3D${secret}&status=1`), '/a2a/rest/tasks?contextId=[redacted]&status=1');
    assert.equal(loggableUrl(`/a2a/rest/tasks?${secret};pageSize=5`), '/a2a/rest/tasks?[redacted]');
    assert.equal(loggableUrl('/a2a/rest/tasks?pageToken=abc&status=TASK_STATE_COMPLETED'), '/a2a/rest/tasks?pageToken=abc&status=TASK_STATE_COMPLETED');
    assert.equal(loggableUrl('/a2a/rest/tasks'), '/a2a/rest/tasks');
    // A token sent alone is, to URLSearchParams, a parameter's name with no value: it was logged
    // whole (`<token>=[redacted]`). A name is shown only when it reads as one and has a value.
    const alone = await logsOf(() => get(`/a2a/rest/tasks?${secret}&pageSize=5`), 1);
    assert.ok(!JSON.stringify(alone).includes(secret), 'a token sent as a bare query parameter is nowhere in the logs');
    assert.equal(alone.find((l) => l.msg === 'request')!.http, 'GET /a2a/rest/tasks?[redacted]&pageSize=5');
    assert.equal(loggableUrl('/mcp?dG9rZW4tc2VjcmV0LTAxMjM0NTY3ODk='), '/mcp?[redacted]');
    assert.equal(loggableUrl(`/mcp?${secret}-${secret}=1&api_key=2`), '/mcp?[redacted]&api_key=[redacted]');
  });

  test('credentials in an absolute-form request target (as a proxy sends it) are redacted from the request log', async () => {
    const { host, hostname, port } = new URL(registry.url);
    const secret = 'userinfo-secret-0123456789';
    const lines = await logsOf(
      () =>
        new Promise<void>((resolve, reject) => {
          const socket = connect(Number(port), hostname, () =>
            socket.end(`GET http://operator:${secret}@${host}/a2a/rest/tasks?pageSize=1 HTTP/1.1\r\nHost: ${host}\r\nA2A-Version: 1.0\r\nConnection: close\r\n\r\n`),
          );
          socket.on('error', reject).resume().on('end', resolve);
        }),
      1,
    );
    assert.ok(!JSON.stringify(lines).includes(secret), 'the password is nowhere in the logs');
    assert.equal(lines.find((l) => l.msg === 'request')!.http, `GET http://[redacted]@${host}/a2a/rest/tasks?pageSize=1`);
    assert.equal(loggableUrl('https://a:b@x.example/p?q'), 'https://[redacted]@x.example/p?[redacted]');
  });

  test('a query value is logged as sent, percent-encoded: a bidi override or a C1 control in it (%E2%80%AE, %C2%9B) never reaches the log line raw', async () => {
    const lines = await logsOf(async () => (await get('/a2a/rest/tasks?contextId=%E2%80%AEdesserp%C2%9B31m&pageSize=1+0&tenant=')).text(), 1);
    const request = lines.find((l) => l.msg === 'request')!;
    assert.equal(request.http, 'GET /a2a/rest/tasks?contextId=%E2%80%AEdesserp%C2%9B31m&pageSize=1+0&tenant=');
    assert.doesNotMatch(JSON.stringify(lines), /[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/);
    // Judged by what it decodes to: an encoded ';' or '&' in a name or value still hides it.
    assert.equal(loggableUrl('/a2a/rest/tasks?pageSize%3Baccess_token=x&contextId=a%3Bb&status=%41'), '/a2a/rest/tasks?[redacted]&contextId=[redacted]&status=%41');
  });

  test('an unknown JSON-RPC method named in a body is logged with its bidi and C1 controls escaped (JSON left "GetTask\\u202e" raw in the line)', async () => {
    const lines = await logsOf(() => rawPost(`${registry.url}/a2a/jsonrpc`, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask\u202edesserp\u009b31m', params: {} })), 1);
    const request = lines.find((l) => l.msg === 'request')!;
    assert.equal(request.method, 'GetTask\\u202edesserp\\u009b31m');
    assert.doesNotMatch(JSON.stringify(lines), /[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/);
  });

  test("clients' mistakes (unknown tasks, bad parameters) are logged at info, without stack traces", async () => {
    const unknown = crypto.randomUUID();
    const lines = await logsOf(async () => {
      // The SDK logs a refused stream as a console error with a stack; the bridge makes it an info line.
      await rawPost(`${registry.url}/a2a/jsonrpc`, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: unknown } }));
      await rawPost(`${registry.url}/a2a/jsonrpc`, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: unknown } }));
      await rawPost(`${registry.url}/a2a/jsonrpc`, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ListTasks', params: { pageSize: 1000 } }));
      await (await get(`/a2a/rest/tasks/${unknown}:subscribe`)).text();
    }, 4);
    assert.ok(lines.length >= 4);
    assert.ok(lines.every((l) => Number(l.level) < 50), `nothing at error level: ${JSON.stringify(lines.filter((l) => Number(l.level) >= 50))}`);
    assert.ok(!JSON.stringify(lines).includes('"stack'), 'no stack traces');
    assert.ok(lines.some((l) => l.source === 'console' && /TaskNotFoundError/.test(String(l.msg))), 'the SDK line is kept, as info');
  });
});
