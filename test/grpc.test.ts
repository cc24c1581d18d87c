/**
 * The A2A gRPC binding (GRPC_PORT) beyond what bindings.test.ts runs over every binding: the
 * card and configuration, metrics, the v0.3 service with a real @a2a-js/sdk 0.3 client, request
 * ids, version negotiation, hostile input, authentication and rate limits as on the HTTP doors
 * (sharing their budgets), the health service and /readyz, and graceful shutdown. Client
 * addresses are simulated with x-forwarded-for metadata (REGISTRY_TRUST_PROXY=1), as the HTTP
 * tests do with the header.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { ListTasksRequest, Message } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { LegacyA2AService } from '@a2a-js/sdk/compat/v0_3/server/grpc';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import type { Task as Task03 } from 'a2a-sdk-03';
import { ClientFactory as ClientFactory03, ClientFactoryOptions as ClientFactoryOptions03, type Client as Client03 } from 'a2a-sdk-03/client';
import { GrpcTransportFactory as GrpcTransportFactory03 } from 'a2a-sdk-03/client/grpc';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { decodeErrorInfo, decodeStatus } from '@a2a-js/sdk/errors/grpc';
import { ConfigError, loadConfig } from '../src/config/config.js';
import { createDocumentValidator } from '../src/validation/index.js';
import { v1Card } from './support/documents.js';
import { dataPart, errorOf, op, resultOf, sdkClient, stateOf, stream, type WireJson } from './support/client.js';
import { RawA2AClient, errorInfoOf, errorInfoOfHeaders, grpcFrame, healthCheck, healthWatch, metadata, rawGrpcCall, retryInfoOf, sendRequest, type HealthWatch } from './support/grpc.js';
import { holdGets } from './support/hold-gets.js';
import { metricValue, waitFor } from './support/metrics.js';
import { connect } from './support/raw-connection.js';
import { sendMessageBody } from './support/raw-http.js';
import { REPO_ROOT, TOKENS, logCapture, startTestRegistry, tempDir, type TestRegistry } from './support/registry.js';

let registry: TestRegistry;
let raw: RawA2AClient;
/** The log lines of `registry`. */
const logged = logCapture();

/** The address this registry's gRPC server listens on (its card may name another, public, one). */
const grpcAddress = (r: TestRegistry) => `127.0.0.1:${r.grpcUrl!.split(':').at(-1)}`;
const from = (address: string, token?: string) => metadata({ 'x-forwarded-for': address, ...(token ? { authorization: `Bearer ${token}` } : {}) });
const search = (query: string) => [dataPart({ search: { query } })];
/** The request log line of the call to `registry` sent with x-request-id `requestId`, once it is written. */
async function requestLine(requestId: string): Promise<Record<string, unknown>> {
  const line = () => logged.lines.find((l) => l.msg === 'request' && l.requestId === requestId);
  await waitFor(async () => line() !== undefined);
  return line()!;
}

before(async () => {
  // REGISTRY_FETCH_ALLOW: push configs name webhooks on 127.0.0.1 (nothing is sent to them).
  registry = await startTestRegistry({ GRPC_PORT: '0', REGISTRY_TRUST_PROXY: '1', REGISTRY_FETCH_ALLOW: '127.0.0.1', LOG_LEVEL: 'info' }, undefined, logged.stream);
  raw = new RawA2AClient(grpcAddress(registry));
});
after(async () => {
  raw.close();
  await registry.close();
  fs.rmSync(registry.dataDir, { recursive: true, force: true });
});

describe('card and configuration', () => {
  test('the card lists the gRPC interface (v1.0 and v0.3) at the address listened on, after the HTTP ones', async () => {
    const card = (await (await fetch(`${registry.url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json()) as WireJson;
    assert.match(registry.grpcUrl!, /^127\.0\.0\.1:\d+$/);
    assert.notEqual(registry.grpcUrl, '127.0.0.1:0');
    assert.deepEqual(
      card.supportedInterfaces.map((i: WireJson) => [i.url, i.protocolBinding, i.protocolVersion]),
      [
        [`${registry.url}/a2a/jsonrpc`, 'JSONRPC', '1.0'],
        [`${registry.url}/a2a/rest`, 'HTTP+JSON', '1.0'],
        [`${registry.url}/a2a/jsonrpc`, 'JSONRPC', '0.3'],
        [registry.grpcUrl, 'GRPC', '1.0'],
        [registry.grpcUrl, 'GRPC', '0.3'],
      ],
    );
    // Still a valid card, by the project's schema and by the registry's own validator.
    const validate = new Ajv2020({ strict: false });
    addFormats.default(validate);
    const schema = JSON.parse(fs.readFileSync(`${REPO_ROOT}schemas/a2a-agent-card-v1.0.schema.json`, 'utf8'));
    assert.ok(validate.validate(schema, card), JSON.stringify(validate.errors));
    const verdict = createDocumentValidator({ maxDocumentBytes: 10240 }).validateAgentCard(card, Buffer.byteLength(JSON.stringify(card)));
    assert.equal(verdict.valid, true, JSON.stringify(verdict.errors));
    // Its gRPC address (127.0.0.1:<port>, the default PUBLIC_GRPC_URL) is read as the URL it dials: loopback, as its
    // HTTP interfaces on 127.0.0.1 are (it was "not an absolute URL", twice).
    assert.deepEqual(
      verdict.warnings.filter((w) => w.path.startsWith('/supportedInterfaces/')).map((w) => `${w.path} ${w.rule}`),
      [0, 1, 2, 3, 4].map((i) => `/supportedInterfaces/${i}/url loopback-url`),
    );
    // v0.3 clients (no A2A-Version) read the legacy-compatible card: gRPC is among its additionalInterfaces.
    const legacy = (await (await fetch(`${registry.url}/.well-known/agent-card.json`)).json()) as WireJson;
    assert.deepEqual(
      legacy.additionalInterfaces.filter((i: WireJson) => i.transport === 'GRPC'),
      [{ url: registry.grpcUrl, transport: 'GRPC' }],
    );
  });

  test('the advertised address is PUBLIC_GRPC_URL, or PUBLIC_URL\'s host with the port listened on', async () => {
    const [derived, explicit] = await Promise.all([
      startTestRegistry({ GRPC_PORT: '0', PUBLIC_URL: 'https://registry.example.com' }),
      startTestRegistry({ GRPC_PORT: '0', PUBLIC_URL: 'https://registry.example.com', PUBLIC_GRPC_URL: 'grpc.registry.example.com:443' }),
    ]);
    try {
      const grpcInterfaces = async (r: TestRegistry) =>
        ((await (await fetch(`${r.url}/.well-known/agent-card.json`)).json()) as WireJson).supportedInterfaces.filter((i: WireJson) => i.protocolBinding === 'GRPC');
      const port = Number(derived.grpcUrl!.split(':').at(-1));
      assert.ok(port > 0);
      assert.deepEqual((await grpcInterfaces(derived)).map((i: WireJson) => i.url), [`registry.example.com:${port}`, `registry.example.com:${port}`]);
      assert.deepEqual((await grpcInterfaces(explicit)).map((i: WireJson) => i.url), ['grpc.registry.example.com:443', 'grpc.registry.example.com:443']);
    } finally {
      await Promise.all([derived.close(), explicit.close()]);
      for (const r of [derived, explicit]) fs.rmSync(r.dataDir, { recursive: true, force: true });
    }
  });

  test('a GRPC_PORT already in use stops start-up with a message naming it', async () => {
    const port = registry.grpcUrl!.split(':').at(-1)!;
    const dataDir = tempDir();
    try {
      // And what to do, as the HTTP port's failure says it (grpc-js's words name no way out).
      await assert.rejects(
        startTestRegistry({ GRPC_PORT: port, REGISTRY_DATA_DIR: dataDir }),
        /gRPC port \d+ on 127\.0\.0\.1 is already in use: stop what uses it, or set GRPC_PORT to another port \(.*EADDRINUSE.*\)$/,
      );
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('GRPC_PORT and PUBLIC_GRPC_URL are checked at start-up', () => {
    assert.equal(loadConfig({}).grpc, undefined, 'off when GRPC_PORT is unset');
    assert.deepEqual(loadConfig({ GRPC_PORT: '50051' }).grpc, { port: 50051, publicUrl: undefined });
    assert.throws(() => loadConfig({ GRPC_PORT: '70000' }), (err: Error) => err instanceof ConfigError && /GRPC_PORT/.test(err.message));
    assert.throws(() => loadConfig({ PUBLIC_GRPC_URL: 'grpc.example.com:443' }), /PUBLIC_GRPC_URL is set but GRPC_PORT is not/);
    for (const bad of ['https://grpc.example.com/a2a', 'grpc.example.com', 'a b:1']) {
      assert.throws(() => loadConfig({ GRPC_PORT: '1', PUBLIC_GRPC_URL: bad }), /PUBLIC_GRPC_URL must be the gRPC address clients dial/, bad);
    }
    for (const good of ['grpc.example.com:443', '[2001:db8::1]:50051', 'dns:///grpc.example.com:443']) {
      assert.equal(loadConfig({ GRPC_PORT: '1', PUBLIC_GRPC_URL: good }).grpc?.publicUrl, good);
    }
  });
});

describe('the SDK gRPC client', () => {
  test('made from the base URL alone, it speaks gRPC: the calls are counted under gRPC method names', async () => {
    const client = await sdkClient(registry.url, { binding: 'GRPC', token: TOKENS.alice });
    assert.equal(client.transport.protocolName, 'GRPC');
    const method = (name: string) => `method="/lf.a2a.v1.A2AService/${name}"`;
    const before = await metricValue(registry.url, 'registry_requests_total', method('SendMessage'));
    const id = resultOf(await op(client, { register: { agentCard: v1Card('Metered Agent', 'https://metered.example.org/a2a') } })).id;
    assert.ok(id);
    await stream(client, search('metered'));
    await assert.rejects(client.getTask({ tenant: '', id: 'no-such-task', historyLength: undefined }));
    assert.equal(await metricValue(registry.url, 'registry_requests_total', method('SendMessage')), before + 1);
    assert.ok((await metricValue(registry.url, 'registry_requests_total', `${method('SendMessage')},operation="register",outcome="COMPLETED",code="none"`)) >= 1);
    assert.ok((await metricValue(registry.url, 'registry_requests_total', `${method('SendStreamingMessage')},operation="search",outcome="COMPLETED"`)) >= 1);
    assert.ok((await metricValue(registry.url, 'registry_requests_total', `${method('GetTask')},operation="none",outcome="ERROR",code="NOT_FOUND"`)) >= 1);
    assert.ok((await metricValue(registry.url, 'registry_request_duration_seconds_count', method('SendStreamingMessage'))) >= 1);
  });

  test('a stream that breaks after its operation completed counts as the error it ends with, as on the HTTP doors', async () => {
    const client = await sdkClient(registry.url, { binding: 'GRPC' });
    const labels = 'method="/lf.a2a.v1.A2AService/SendStreamingMessage",operation="search",outcome="ERROR",code="INTERNAL"';
    const before = await metricValue(registry.url, 'registry_requests_total', labels);
    const taskStore = registry.core.tasks;
    const save = taskStore.save.bind(taskStore);
    let saves = 0;
    // The task's first save (WORKING) goes through; the next ones (the result) fail, after the executor completed.
    taskStore.save = async (...args: Parameters<typeof save>) => {
      if (++saves > 1) throw new Error('disk on fire');
      return save(...args);
    };
    try {
      await assert.rejects(stream(client, search('x')));
    } finally {
      taskStore.save = save;
    }
    await waitFor(async () => (await metricValue(registry.url, 'registry_requests_total', labels)) === before + 1);
  });

  test('a client that knows only the gRPC transport, made from the base URL alone, finds the gRPC interface in the card', async () => {
    const client = await new ClientFactory({ transports: [new GrpcTransportFactory()] }).createFromUrl(registry.url);
    assert.equal(client.transport.protocolName, 'GRPC');
    const before = await metricValue(registry.url, 'registry_requests_total', 'door="grpc"');
    assert.equal(stateOf(await op(client, { search: { query: 'weather' } })), 'TASK_STATE_COMPLETED');
    assert.equal(await metricValue(registry.url, 'registry_requests_total', 'door="grpc"'), before + 1);
  });
});

describe('@a2a-js/sdk 0.3, a real v0.3 client', () => {
  /** A v0.3 client that prefers gRPC, made from the base URL alone; the token goes as metadata. */
  async function client03(token?: string): Promise<Client03> {
    const factory = new ClientFactory03(
      ClientFactoryOptions03.createFrom(ClientFactoryOptions03.default, {
        transports: [new GrpcTransportFactory03()],
        preferredTransports: ['GRPC'],
        clientConfig: {
          interceptors: token
            ? [
                {
                  before: async (args) => {
                    args.options = { ...args.options, serviceParameters: { ...args.options?.serviceParameters, authorization: `Bearer ${token}` } };
                  },
                  after: async () => {},
                },
              ]
            : [],
        },
      }),
    );
    return factory.createFromUrl(registry.url);
  }
  const send03 = async (client: Client03, data: Record<string, unknown>): Promise<Task03> => {
    const result = await client.sendMessage({ message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'data', data }] } });
    assert.equal(result.kind, 'task');
    return result as Task03;
  };
  const data03 = (task: Task03): WireJson => {
    assert.equal(task.status.state, 'completed', JSON.stringify(task.status.message?.parts ?? []).slice(0, 300));
    const part = task.artifacts![0]!.parts.find((p) => p.kind === 'data');
    return (part as { data: WireJson }).data;
  };

  test('finds gRPC in the legacy card and uses the v0.3 service: register with a token, search, get, a streamed search', async () => {
    const before = await metricValue(registry.url, 'registry_requests_total', 'method="/a2a.v1.A2AService/SendMessage"');
    const alice = await client03(TOKENS.alice);
    const registering = await send03(alice, { register: { agentCard: v1Card('Tidal Agent 03', 'https://tidal-03.example.org/a2a') } });
    const registered = data03(registering);
    assert.equal(registered.created, true);
    // GetTask over the v0.3 service: the caller's own task, as a v0.3 task.
    const fetched = await alice.getTask({ id: registering.id });
    assert.equal(fetched.id, registering.id);
    assert.deepEqual(data03(fetched), registered);
    const anonymous = await client03();
    assert.ok(data03(await send03(anonymous, { search: { query: 'tidal' } })).results.some((h: WireJson) => h.id === registered.id));
    assert.equal(data03(await send03(anonymous, { get: { id: registered.id } })).owner, 'alice');
    const refused = await send03(anonymous, { unregister: { id: registered.id } });
    assert.equal(refused.status.state, 'rejected');
    assert.equal(await metricValue(registry.url, 'registry_requests_total', 'method="/a2a.v1.A2AService/SendMessage"'), before + 4);
    const events = [];
    for await (const event of anonymous.sendMessageStream({
      message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'data', data: { search: { query: 'tidal' } } }] },
    })) {
      events.push(event);
    }
    assert.equal(events[0]!.kind, 'task');
    assert.ok(events.some((e) => e.kind === 'artifact-update'));
    const last = events.at(-1)!;
    assert.ok(last.kind === 'status-update' && last.status.state === 'completed');
  });

  test('a watch\'s push configs: every answer names the config id where the v0.3 proto has it, name "tasks/{id}/pushNotificationConfigs/{configId}" and pushNotificationConfig.id ("…/undefined" is the SDK\'s own request)', async () => {
    const alice = await client03(TOKENS.alice);
    const hook = 'http://127.0.0.1:8/hook'; // REGISTRY_FETCH_ALLOW; a watch matching nothing sends it nothing
    const watch = await alice.sendMessage({
      message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'data', data: { watch: { query: 'no-entry-matches-this-grpc03-watch' } } }] },
      configuration: { pushNotificationConfig: { url: hook, token: 'own' } },
    });
    const taskId = (watch as Task03).id;
    const legacy = new RawA2AClient(grpcAddress(registry), undefined, LegacyA2AService);
    const asAlice = () => metadata({ authorization: `Bearer ${TOKENS.alice}` }, null);
    try {
      assert.equal((await alice.setTaskPushNotificationConfig({ taskId, pushNotificationConfig: { id: 'named', url: `${hook}/named` } })).pushNotificationConfig.id, 'named');
      const nameOf = (id: string) => `tasks/${taskId}/pushNotificationConfigs/${id}`;
      type Named = { name: string; pushNotificationConfig: { id: string } };
      const listed = (await legacy.unary('listTaskPushNotificationConfig', { parent: `tasks/${taskId}`, pageSize: 0, pageToken: '' }, asAlice())).value as { configs: Named[] };
      // The config the watch was started with, set without an id, has the task's (as v0.3 JSON-RPC gives it).
      assert.deepEqual(listed.configs.map((c) => [c.name, c.pushNotificationConfig.id]), [[nameOf(taskId), taskId], [nameOf('named'), 'named']]);
      const got = (await legacy.unary('getTaskPushNotificationConfig', { name: nameOf('named') }, asAlice())).value as Named;
      assert.deepEqual([got.name, got.pushNotificationConfig.id], [nameOf('named'), 'named']);
      // The SDK's get takes the task id alone (Client.getTaskPushNotificationConfig(TaskIdParams)), and its gRPC transport
      // asks for the name ".../pushNotificationConfigs/undefined" (ToProto.getTaskPushNotificationConfigParams reads
      // pushNotificationConfigId), a config no task has; the task's own name gets the task's config.
      await assert.rejects(alice.getTaskPushNotificationConfig({ id: taskId }), /id 'undefined' not found/);
      const own = (await legacy.unary('getTaskPushNotificationConfig', { name: `tasks/${taskId}` }, asAlice())).value as Named;
      assert.deepEqual([own.name, own.pushNotificationConfig.id], [nameOf(taskId), taskId]);
    } finally {
      legacy.close();
      await alice.cancelTask({ id: taskId });
    }
  });
});

describe('requests', () => {
  test('the answer carries the request id sent in x-request-id (or a fresh one)', async () => {
    const given = await raw.send(search('weather'), metadata({ 'x-request-id': 'grpc-test-request-1' }));
    assert.equal(stateOf(given.task!), 'TASK_STATE_COMPLETED');
    assert.deepEqual(given.headers?.get('x-request-id'), ['grpc-test-request-1']);
    const fresh = await raw.send(search('weather'), metadata({ 'x-request-id': 'not a sane id!' }));
    assert.match(String(fresh.headers?.get('x-request-id')[0]), /^[0-9a-f-]{36}$/);
    // A failed unary call sends no headers, only a status: the id comes as a trailer, beside the SDK's ErrorInfo.
    const missing = await raw.unary('getTask', { tenant: '', id: 'no-such-task', historyLength: undefined }, metadata({ 'x-request-id': 'grpc-test-request-2' }));
    assert.equal(missing.error?.code, grpc.status.NOT_FOUND);
    assert.deepEqual(missing.error!.metadata.get('x-request-id'), ['grpc-test-request-2']);
    assert.equal(errorInfoOf(missing.error!)?.reason, 'TASK_NOT_FOUND');
    // Logged with the code the client got and the metrics count, as the HTTP doors log theirs (it had none).
    const line = await requestLine('grpc-test-request-2');
    assert.deepEqual([line.status, line.errorCode], ['NOT_FOUND', 'NOT_FOUND']);
  });

  test('a successful call is counted code="none", as on JSON-RPC (it was code="other")', async () => {
    const asAlice = metadata({ authorization: `Bearer ${TOKENS.alice}` });
    assert.equal((await raw.unary('listTasks', ListTasksRequest.fromJSON({}), asAlice)).error, undefined);
    const listed = await fetch(`${registry.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.alice}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }),
    });
    assert.ok(((await listed.json()) as WireJson).result);
    const labels = (method: string, door: string) => `method="${method}",operation="none",outcome="OK",code="none",door="${door}"`;
    assert.ok((await metricValue(registry.url, 'registry_requests_total', labels('ListTasks', 'a2a'))) >= 1);
    assert.ok((await metricValue(registry.url, 'registry_requests_total', labels('/lf.a2a.v1.A2AService/ListTasks', 'grpc'))) >= 1);
    assert.equal(await metricValue(registry.url, 'registry_requests_total', 'code="other",door="grpc"'), 0);
  });

  test('A2A-Version is negotiated as on HTTP: the patch is ignored, an unsupported one is refused; absent (or empty) is the called service\'s version', async () => {
    assert.equal(stateOf((await raw.send(search('weather'), metadata({}, null))).task!), 'TASK_STATE_COMPLETED');
    // The v1.0 service (lf.a2a.v1) without a2a-version is v1.0, not v0.3 (A2A 3.6.2's rule is for
    // v0.3 clients, which call the v0.3 service): a delete without a config id is refused as v1.0
    // refuses it (id is REQUIRED), where v0.3 would read it as the task's own config.
    const deleteWithoutId = (version: string | null) => raw.unary('deleteTaskPushNotificationConfig', { tenant: '', taskId: 'no-such-task', id: '' }, metadata({}, version));
    for (const version of [null, '', '1.0']) {
      const answer = await deleteWithoutId(version);
      assert.equal(answer.error?.code, grpc.status.INVALID_ARGUMENT, `${JSON.stringify(version)}: ${answer.error?.details}`);
      assert.match(answer.error!.details, /^id is required/);
    }
    // Asked for, v0.3 is served by the v0.3 service; the v1.0 service refuses it (see the next test).
    assert.equal((await deleteWithoutId('0.3')).error?.code, grpc.status.FAILED_PRECONDITION);
    assert.equal(stateOf((await raw.send(search('weather'), metadata({}, '1.0.3'))).task!), 'TASK_STATE_COMPLETED');
    const refused = await raw.send(search('weather'), metadata({}, '2.0'));
    assert.equal(refused.error?.code, grpc.status.FAILED_PRECONDITION);
    assert.match(refused.error!.details, /A2A-Version "2\.0" is not supported on the GRPC binding; supported versions: 1\.0, 0\.3/);
    const info = errorInfoOf(refused.error!);
    assert.equal(info?.reason, 'VERSION_NOT_SUPPORTED');
    assert.equal(info?.metadata.supportedVersions, '1.0, 0.3');
    // Two values (a client's and a proxy's): one version when they agree; else exactly one is asked
    // for. The first counted: a v1.0 call tagged "1.0" then "0.3" was served as v1.0 without a word.
    const twice = (first: string, second: string) => {
      const md = metadata({}, first);
      md.add('a2a-version', second);
      return raw.send(search('weather'), md);
    };
    assert.equal(stateOf((await twice('1.0', '1.0.0')).task!), 'TASK_STATE_COMPLETED');
    const conflicting = await twice('1.0', '0.3');
    assert.equal(conflicting.error?.code, grpc.status.FAILED_PRECONDITION);
    assert.match(conflicting.error!.details, /^A2A-Version was sent more than once, with different versions \("1\.0, 0\.3"\): send exactly one, such as "A2A-Version: 1\.0"/);
    assert.equal(errorInfoOf(conflicting.error!)?.reason, 'VERSION_NOT_SUPPORTED');
    const overHttp = await fetch(`${registry.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '2.0' },
      body: sendMessageBody(search('weather')),
    });
    assert.equal(((await overHttp.json()) as WireJson).error.code, -32009);
    assert.ok((await metricValue(registry.url, 'registry_requests_total', 'method="/lf.a2a.v1.A2AService/SendMessage",operation="none",outcome="REFUSED",code="VERSION_NOT_SUPPORTED"')) >= 1);
  });

  test('the service called fixes the version: a2a-version naming the other version is refused VERSION_NOT_SUPPORTED, naming the right service (it was followed)', async () => {
    const asAlice = (version: string | null) => metadata({ authorization: `Bearer ${TOKENS.alice}` }, version);
    // v1.0's ListTasks, tagged 0.3: JSON-RPC refuses v1.0 methods in a v0.3 request; gRPC served it as v0.3.
    const listed = await raw.unary('listTasks', ListTasksRequest.fromJSON({}), asAlice('0.3'));
    assert.equal(listed.error?.code, grpc.status.FAILED_PRECONDITION, listed.error?.details ?? 'served');
    assert.match(listed.error!.details, /^A2A-Version "0\.3" is not what lf\.a2a\.v1\.A2AService serves: it is the A2A v1\.0 service\. A v0\.3 client calls a2a\.v1\.A2AService; a v1\.0 client sends "A2A-Version: 1\.0" \(or none\)/);
    const info = errorInfoOf(listed.error!);
    assert.equal(info?.reason, 'VERSION_NOT_SUPPORTED');
    assert.deepEqual(info?.metadata, { requestedVersion: '0.3', supportedVersions: '1.0' });
    assert.equal((await raw.unary('listTasks', ListTasksRequest.fromJSON({}), asAlice('1.0.2'))).error, undefined, 'its own version (a patch ignored) is served');

    // The v0.3 service, tagged 1.0: refused, sending the v1.0 client to lf.a2a.v1 (its push payloads were v1.0's).
    const legacy = new RawA2AClient(grpcAddress(registry), undefined, LegacyA2AService);
    try {
      const legacyMessage = { messageId: crypto.randomUUID(), contextId: '', taskId: '', role: 1, content: [{ part: { $case: 'text', value: 'weather' }, metadata: undefined }], metadata: undefined, extensions: [] };
      const request = { request: legacyMessage, configuration: undefined, metadata: undefined };
      const tagged = await legacy.unary('sendMessage', request, asAlice('1.0'));
      assert.equal(tagged.error?.code, grpc.status.FAILED_PRECONDITION, tagged.error?.details ?? 'served');
      assert.match(tagged.error!.details, /^A2A-Version "1\.0" is not what a2a\.v1\.A2AService serves: it is the A2A v0\.3 service\. A v1\.0 client calls lf\.a2a\.v1\.A2AService; a v0\.3 client sends "A2A-Version: 0\.3" \(or none\)/);
      assert.equal(errorInfoOf(tagged.error!)?.reason, 'VERSION_NOT_SUPPORTED');
      // A version neither service serves, on the v0.3 service: told to send v0.3's, not v1.0's.
      const unsupported = await legacy.unary('sendMessage', request, asAlice('2.0'));
      assert.equal(unsupported.error?.code, grpc.status.FAILED_PRECONDITION);
      assert.match(unsupported.error!.details, /Send "A2A-Version: 0\.3"/);
      for (const version of ['0.3', null]) assert.equal((await legacy.unary('sendMessage', request, asAlice(version))).error, undefined, `v0.3 service, a2a-version ${version}`);
    } finally {
      legacy.close();
    }
    assert.ok((await metricValue(registry.url, 'registry_requests_total', 'method="/lf.a2a.v1.A2AService/ListTasks",operation="none",outcome="REFUSED",code="VERSION_NOT_SUPPORTED"')) >= 1);
  });

  test('a message without parts is INVALID_ARGUMENT, as it is -32602 on JSON-RPC', async () => {
    const answer = await raw.send([]);
    assert.equal(answer.error?.code, grpc.status.INVALID_ARGUMENT);
    assert.match(answer.error!.details, /The message has no parts: a message needs at least one part/);
    assert.equal(errorInfoOf(answer.error!)?.reason, 'INVALID_PARAMS');
    const overHttp = await fetch(`${registry.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: sendMessageBody([]),
    });
    assert.equal(((await overHttp.json()) as WireJson).error.code, -32602);
  });

  test('a file part that is not UTF-8 is told how this binding carries a file\'s bytes: its UTF-8 bytes as they are on gRPC, base64 of them on JSON-RPC (gRPC said "then base64", which a gRPC client following it sent as text that is no JSON)', async () => {
    const card = v1Card('Encoded File Agent', 'https://encoded-file.example.org/a2a');
    const latin1 = Buffer.from(JSON.stringify({ ...card, description: 'Caf\u00e9 orders.' }), 'latin1');
    const file = (bytes: Buffer) => ({ raw: bytes.toString('base64'), filename: 'agent-card.json', mediaType: 'application/json' });
    const validate = (bytes: Buffer) => [file(bytes), dataPart({ validate: {} })];
    const overGrpc = async (bytes: Buffer) => (await raw.send(validate(bytes), metadata({ authorization: `Bearer ${TOKENS.alice}` }))).task!;
    const overJsonRpc = async (bytes: Buffer) => {
      const answer = await fetch(`${registry.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.alice}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: validate(bytes) } } }),
      });
      return ((await answer.json()) as WireJson).result.task as WireJson;
    };
    const said = (task: WireJson) => errorOf(task).message as string;

    const grpcRefusal = await overGrpc(latin1);
    assert.equal(said(grpcRefusal), 'File part 0 is not valid UTF-8 text; send the JSON document encoded as UTF-8, its bytes as they are (protobuf bytes take no base64).');
    assert.equal(said(await overJsonRpc(latin1)), 'File part 0 is not valid UTF-8 text; upload the JSON document encoded as UTF-8, then base64.');
    // Each hint, followed, is a document that validates: gRPC's bytes (protobuf carries them as they are), JSON-RPC's base64 (raw on the wire).
    const utf8 = Buffer.from(latin1.toString('latin1'), 'utf8');
    assert.equal(resultOf(await overGrpc(utf8)).valid, true);
    assert.equal(resultOf(await overJsonRpc(utf8)).valid, true);
    // The old hint, followed over gRPC: the base64 text as the bytes, which is no JSON.
    assert.equal(stateOf(await overGrpc(Buffer.from(utf8.toString('base64')))), 'TASK_STATE_REJECTED');
  });

  test('a refusal names at most ten of a request\'s unknown keys and counts the rest, as on every door (2,000 were each named back)', async () => {
    const many = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, 1]));
    const error = errorOf((await raw.send([dataPart({ search: { query: 'x', ...many } })], metadata({}))).task!);
    assert.equal(error.details[0].message, `Unrecognized keys: ${Array.from({ length: 10 }, (_, i) => `"k${i}"`).join(', ')} and 1,990 more`);
    assert.ok(JSON.stringify(error).length < 1500, JSON.stringify(error).slice(0, 2000));
  });

  test('the v0.3 service (a2a.v1) names parts as its proto does (content, file.fileWithUri, file.fileWithBytes, {"data": {"data": ...}}), as v0.3 JSON-RPC names them as its JSON does (it told a gRPC client of {"kind": "file", "file": {..., "bytes": "<base64>"}}, file.uri and /parts/0/raw)', async () => {
    const legacy = new RawA2AClient(grpcAddress(registry), undefined, LegacyA2AService);
    const send = (content: unknown[]) =>
      legacy.unary('sendMessage', { request: { messageId: crypto.randomUUID(), contextId: '', taskId: '', role: 1, content, metadata: undefined, extensions: [] }, configuration: undefined, metadata: undefined }, metadata({}, null));
    /** The error of the REJECTED task answered (v0.3 proto TaskState 7). */
    const refusal = async (content: unknown[]): Promise<WireJson> => {
      const answer = await send(content);
      const task = (answer.value as { payload?: { value: WireJson } } | undefined)?.payload?.value;
      assert.equal(task?.status?.state, 7, answer.error?.details ?? JSON.stringify(task?.status));
      return task!.status.update.content.find((p: WireJson) => p.part.$case === 'data').part.value.data.error;
    };
    const file = (bytesOrUri: unknown) => ({ part: { $case: 'file', value: { file: bytesOrUri, mimeType: 'application/json' } }, metadata: undefined });
    const data = (object: WireJson) => ({ part: { $case: 'data', value: { data: object } }, metadata: undefined });
    try {
      const uri = await refusal([file({ $case: 'fileWithUri', value: 'https://example.com/agent-card.json' })]);
      assert.match(uri.message, /^Part 0 is a file part with file\.fileWithUri: .* Send the document's bytes in file\.fileWithBytes \(a file part \{"file": \{"fileWithBytes": <the document's bytes>, "mimeType": "application\/json"\}\}\)/);
      const rpc = await fetch(`${registry.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'file', file: { uri: 'https://example.com/agent-card.json' } }] } } }),
      });
      const rpcSaid = ((await rpc.json()) as WireJson).result.status.message.parts.find((p: WireJson) => p.kind === 'data').data.error.message as string;
      assert.match(rpcSaid, /^Part 0 is a file part with file\.uri: .* Send the document's bytes in file\.bytes \(a file part \{"kind": "file", "file": \{/);
      // Finding paths point into the proto message: the file's bytes, a data part's object.
      const deep = Buffer.from(`${'['.repeat(200)}${']'.repeat(200)}`);
      assert.equal((await refusal([file({ $case: 'fileWithBytes', value: deep }), data({ validate: {} })])).details[0].path, '/content/0/file/fileWithBytes');
      const unknown = await refusal([data({ serch: {} })]);
      assert.equal(unknown.details[0].path, '/content/0/data/data/serch');
      assert.match(unknown.message, /Send one data part \{"data": \{"data": \{<operation>: \{\.\.\.\}\}\}\} whose .*\(SendStreamingMessage, with a token\)\. A message with only a text part \(\{"text": "\.\.\."\}\) .* a file part \{"file": \{"fileWithBytes"/);
      for (const said of [uri.message, unknown.message]) assert.doesNotMatch(said, /"kind"|"bytes"|file\.uri|base64/);
      // Refused before the SDK, which said "Invalid part type" ("Invalid file part type"), naming nothing.
      assert.match((await send([])).error!.details, /^The message has no parts: a message needs at least one part, e\.g\. \{"text": "weather"\} \(a search\) or \{"data": \{"data": \{"search": \{"query": "weather"\}\}\}\}/);
      for (const empty of [{ part: undefined, metadata: undefined }, file(undefined)]) {
        const answer = await send([empty]);
        assert.equal(answer.error?.code, grpc.status.INVALID_ARGUMENT);
        assert.equal(answer.error!.details, 'Part 0 is empty: a part needs its content, the text of a text part, the data of a data part, or file.fileWithBytes of a file part.');
      }
    } finally {
      legacy.close();
    }
  });

  test('a request without a message, or a message without messageId, is INVALID_ARGUMENT saying so and naming the field, as JSON-RPC (-32602) and HTTP+JSON (400) say', async () => {
    const noId = Message.fromJSON({ role: 'ROLE_USER', parts: [{ text: 'weather' }] });
    for (const [message, field, said] of [
      [undefined, 'message', /^message is required: send one message/],
      [noId, 'message.messageId', /^message\.messageId is required: an id the client gives each message/],
    ] as const) {
      const request = { tenant: '', message, configuration: undefined, metadata: undefined };
      for (const method of ['sendMessage', 'sendStreamingMessage']) {
        const answer = method === 'sendMessage' ? await raw.unary(method, request) : await raw.stream(method, request);
        assert.equal(answer.error?.code, grpc.status.INVALID_ARGUMENT, method);
        assert.match(answer.error!.details, said, method);
        assert.deepEqual(errorInfoOf(answer.error!)?.metadata, { field }, method);
      }
      const wire = message === undefined ? {} : { message: Message.toJSON(message) };
      const jsonRpc = (await (
        await fetch(`${registry.url}/a2a/jsonrpc`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: wire }),
        })
      ).json()) as WireJson;
      assert.equal(jsonRpc.error.code, -32602);
      assert.match(jsonRpc.error.message, said);
      assert.deepEqual(jsonRpc.error.data?.[0]?.metadata, { field }, JSON.stringify(jsonRpc));
      for (const path of ['message:send', 'message:stream']) {
        const rest = await fetch(`${registry.url}/a2a/rest/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' }, body: JSON.stringify(wire) });
        const body = (await rest.json()) as WireJson;
        assert.equal(rest.status, 400, path);
        assert.match(body.error.message, said, path);
        assert.deepEqual(body.error.details?.[0]?.metadata, { field }, `${path}: ${JSON.stringify(body)}`);
      }
    }
    // The v0.3 service (a2a.v1), whose message is `request`: said alike (the SDK's v0.3 layer said
    // "SendMessageRequest missing message", "message.messageId is required", "Invalid role: 0").
    const legacy = new RawA2AClient(grpcAddress(registry), undefined, LegacyA2AService);
    try {
      const legacyMessage = { messageId: crypto.randomUUID(), contextId: '', taskId: '', role: 1, content: [{ part: { $case: 'text', value: 'weather' }, metadata: undefined }], metadata: undefined, extensions: [] };
      for (const [request, field, said] of [
        [undefined, 'message', /^message is required: send one message/],
        [{ ...legacyMessage, messageId: '' }, 'message.messageId', /^message\.messageId is required: an id the client gives each message/],
        [{ ...legacyMessage, role: 0 }, 'message.role', /^message\.role must be ROLE_USER or ROLE_AGENT/],
      ] as const) {
        const sent = { request, configuration: undefined, metadata: undefined };
        for (const method of ['sendMessage', 'sendStreamingMessage']) {
          const answer = method === 'sendMessage' ? await legacy.unary(method, sent, metadata({}, null)) : await legacy.stream(method, sent, metadata({}, null));
          assert.equal(answer.error?.code, grpc.status.INVALID_ARGUMENT, `v0.3 ${method} ${field}: ${answer.error?.details ?? 'no error'}`);
          assert.match(answer.error!.details, said, `v0.3 ${method}`);
          assert.equal(errorInfoOf(answer.error!)?.reason, 'INVALID_PARAMS', `v0.3 ${method}`);
          assert.deepEqual(errorInfoOf(answer.error!)?.metadata, { field }, `v0.3 ${method}`);
        }
      }
      assert.equal((await legacy.unary('sendMessage', { request: legacyMessage, configuration: undefined, metadata: undefined }, metadata({}, null))).error, undefined);
    } finally {
      legacy.close();
    }
  });

  test('the v0.3 service (a2a.v1) refuses a resource name it cannot read as v0.3 JSON-RPC refuses a missing id: naming the field, what was given and the form expected (the SDK said "Invalid or missing task ID in: \\"\\"", naming none)', async () => {
    const legacy = new RawA2AClient(grpcAddress(registry), undefined, LegacyA2AService);
    const asAlice = () => metadata({ authorization: `Bearer ${TOKENS.alice}` }, null);
    const config = { name: '', pushNotificationConfig: { id: 'c1', url: 'https://hooks.example.com/x', token: '', authentication: undefined } };
    try {
      // The same request on v0.3 JSON-RPC: the id is required, and where the client gets it.
      const rpc = await fetch(`${registry.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.alice}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: {} }),
      });
      assert.equal(((await rpc.json()) as WireJson).error.message, 'id is required: the id of the task (message/send answers with it).');
      const taskForm = '"tasks/{id}", with the id of the task (message/send answers with it).';
      const configForm = '"tasks/{id}/pushNotificationConfigs/{configId}" (ListTaskPushNotificationConfig lists a task\'s configs), or "tasks/{id}" for the task\'s config, with the id of the task (message/send answers with it).';
      for (const [method, request, field, said] of [
        ['getTask', { name: '', historyLength: 0 }, 'name', `name is required: a task's resource name, ${taskForm}`],
        ['getTask', { name: 'garbage', historyLength: 0 }, 'name', `name "garbage" is not a task's resource name: send ${taskForm}`],
        ['getTask', { name: 'tasks/', historyLength: 0 }, 'name', `name "tasks/" is not a task's resource name: send ${taskForm}`],
        ['getTask', { name: 'tasks/abc/history', historyLength: 0 }, 'name', `name "tasks/abc/history" is not a task's resource name: send ${taskForm}`],
        ['cancelTask', { name: 'abc' }, 'name', `name "abc" is not a task's resource name: send ${taskForm}`],
        ['taskSubscription', { name: '' }, 'name', `name is required: a task's resource name, ${taskForm}`],
        ['listTaskPushNotificationConfig', { parent: '', pageSize: 0, pageToken: '' }, 'parent', `parent is required: a task's resource name, ${taskForm}`],
        ['createTaskPushNotificationConfig', { parent: 'task/abc', configId: 'c1', config }, 'parent', `parent "task/abc" is not a task's resource name: send ${taskForm}`],
        ['getTaskPushNotificationConfig', { name: '' }, 'name', `name is required: a push notification config's resource name, ${configForm}`],
        ['getTaskPushNotificationConfig', { name: 'tasks/abc/configs/c1' }, 'name', `name "tasks/abc/configs/c1" is not a push notification config's resource name: send ${configForm}`],
        ['deleteTaskPushNotificationConfig', { name: 'garbage' }, 'name', `name "garbage" is not a push notification config's resource name: send ${configForm}`],
      ] as const) {
        const answer = method === 'taskSubscription' ? await legacy.stream(method, request, asAlice()) : await legacy.unary(method, request, asAlice());
        const what = `${method} ${JSON.stringify(request)}`;
        assert.equal(answer.error?.code, grpc.status.INVALID_ARGUMENT, `${what}: ${answer.error?.details ?? 'no error'}`);
        assert.equal(answer.error!.details, said, what);
        assert.equal(errorInfoOf(answer.error!)?.reason, 'INVALID_PARAMS', what);
        assert.deepEqual(errorInfoOf(answer.error!)?.metadata, { field }, what);
      }
      // A name of the form is read as before: the task is looked for.
      assert.equal((await legacy.unary('getTask', { name: 'tasks/no-such-task', historyLength: 0 }, asAlice())).error?.code, grpc.status.NOT_FOUND);
    } finally {
      legacy.close();
    }
  });

  test('data nested deeper than REGISTRY_MAX_JSON_DEPTH is INVALID_ARGUMENT before the SDK sees it', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 150; i++) deep = { a: deep };
    const answer = await raw.send([dataPart({ register: { agentCard: deep } })], metadata({ authorization: `Bearer ${TOKENS.alice}` }));
    assert.equal(answer.error?.code, grpc.status.INVALID_ARGUMENT);
    assert.match(answer.error!.details, /deeper than 100 levels \(REGISTRY_MAX_JSON_DEPTH\)/);
    assert.equal(errorInfoOf(answer.error!)?.reason, 'TOO_DEEP');
    assert.ok((await metricValue(registry.url, 'registry_requests_total', 'outcome="REFUSED",code="TOO_DEEP"')) >= 1);
    // A sane request on the same connection still works.
    assert.equal(stateOf((await raw.send(search('weather'))).task!), 'TASK_STATE_COMPLETED');
  });

  test('a request message that is no protobuf, does not decompress, or nests deeper than the decoder follows is INVALID_ARGUMENT (PARSE_ERROR, TOO_DEEP) with ErrorInfo and request id, counted as sent (was a bare INTERNAL, counted ABORTED)', async () => {
    const varint = (n: number) => {
      const bytes: number[] = [];
      for (; n > 0x7f; n >>>= 7) bytes.push((n & 0x7f) | 0x80);
      return Buffer.from([...bytes, n]);
    };
    const field = (tag: number, bytes: Buffer) => Buffer.concat([Buffer.from([tag]), varint(bytes.length), bytes]);
    // SendMessageRequest.metadata: a Struct whose value is a list in a list... 5000 levels (about 20 KB, under the body limit).
    let value = field(0x1a, Buffer.from('x'));
    for (let i = 0; i < 5000; i++) value = field(0x32, field(0x0a, value));
    const deep = field(0x22, field(0x0a, Buffer.concat([field(0x0a, Buffer.from('k')), field(0x12, value)])));
    const counted = (code: string) => metricValue(registry.url, 'registry_requests_total', `method="/lf.a2a.v1.A2AService/SendMessage",operation="none",outcome="REFUSED",code="${code}",door="grpc"`);
    const [parseErrors, tooDeep] = [await counted('PARSE_ERROR'), await counted('TOO_DEEP')];
    const session = http2.connect(`http://${grpcAddress(registry)}`);
    try {
      const path = '/lf.a2a.v1.A2AService/SendMessage';
      for (const [what, body, headers, reason, said] of [
        ['bytes that are no protobuf', grpcFrame(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff])), {}, 'PARSE_ERROR', /^The request message is not the protobuf message \/lf\.a2a\.v1\.A2AService\/SendMessage takes/],
        ['gzip that does not inflate', grpcFrame(Buffer.from('not gzip at all'), true), { 'grpc-encoding': 'gzip' }, 'PARSE_ERROR', /^The request message does not decompress with the grpc-encoding it names/],
        ['5000 levels of nesting', grpcFrame(deep), {}, 'TOO_DEEP', /deeper than 100 levels \(REGISTRY_MAX_JSON_DEPTH\)/],
      ] as const) {
        const answer = await rawGrpcCall(session, path, body, { headers: { 'a2a-version': '1.0', 'x-request-id': 'undecodable-1', ...headers } });
        assert.equal(answer.headers['grpc-status'], String(grpc.status.INVALID_ARGUMENT), `${what}: ${JSON.stringify(answer.headers)}`);
        assert.match(decodeURIComponent(String(answer.headers['grpc-message'])), said, what);
        assert.equal(errorInfoOfHeaders(answer.headers)?.reason, reason, what);
        assert.equal(answer.headers['x-request-id'], 'undecodable-1', what);
      }
    } finally {
      session.close();
    }
    await waitFor(async () => (await counted('PARSE_ERROR')) === parseErrors + 2 && (await counted('TOO_DEEP')) === tooDeep + 1);
    // The connection's other calls go on.
    assert.equal(stateOf((await raw.send(search('weather'))).task!), 'TASK_STATE_COMPLETED');
  });

  test('a call without its one request message, with a grpc-encoding grpc-js lacks or a grpc-timeout that is none is refused with ErrorInfo, counted REFUSED (grpc-js answered bare UNIMPLEMENTED or INTERNAL, counted ERROR)', async () => {
    const counted = (code: string) => metricValue(registry.url, 'registry_requests_total', `outcome="REFUSED",code="${code}",door="grpc"`);
    const [invalid, encodings] = [await counted('INVALID_REQUEST'), await counted('UNSUPPORTED_ENCODING')];
    const errors = await metricValue(registry.url, 'registry_requests_total', 'outcome="ERROR",code="UNIMPLEMENTED",door="grpc"');
    const internal = await metricValue(registry.url, 'registry_requests_total', 'outcome="ERROR",code="INTERNAL",door="grpc"');
    const message = grpcFrame(Buffer.from(A2AService.sendMessage.requestSerialize(sendRequest(search('weather')))));
    const session = http2.connect(`http://${grpcAddress(registry)}`);
    try {
      for (const [what, path, body, headers, code, reason, said] of [
        ['no message', '/lf.a2a.v1.A2AService/SendMessage', undefined, {}, grpc.status.INVALID_ARGUMENT, 'INVALID_REQUEST', /^The call carried no request message: each A2A method takes exactly one/],
        ['no message, streaming', '/lf.a2a.v1.A2AService/SendStreamingMessage', undefined, {}, grpc.status.INVALID_ARGUMENT, 'INVALID_REQUEST', /^The call carried no request message/],
        ['two messages', '/lf.a2a.v1.A2AService/SendMessage', Buffer.concat([message, message]), {}, grpc.status.INVALID_ARGUMENT, 'INVALID_REQUEST', /^The call carried more than one request message/],
        ['GET', '/lf.a2a.v1.A2AService/GetTask', undefined, { ':method': 'GET' }, grpc.status.INVALID_ARGUMENT, 'INVALID_REQUEST', /^The call carried no request message/],
        ['zstd', '/lf.a2a.v1.A2AService/SendMessage', grpcFrame(Buffer.from('zstd bytes'), true), { 'grpc-encoding': 'zstd' }, grpc.status.UNIMPLEMENTED, 'UNSUPPORTED_ENCODING', /^The request message is compressed with grpc-encoding "zstd", which this server does not take: send it with gzip or deflate, or uncompressed/],
        ['grpc-timeout xyz', '/lf.a2a.v1.A2AService/SendMessage', message, { 'grpc-timeout': 'xyz' }, grpc.status.INVALID_ARGUMENT, 'INVALID_REQUEST', /^grpc-timeout "xyz" is no gRPC timeout/],
      ] as const) {
        const answer = await rawGrpcCall(session, path, body, { headers: { 'a2a-version': '1.0', ...headers } });
        assert.equal(answer.headers['grpc-status'], String(code), `${what}: ${JSON.stringify(answer.headers)}`);
        assert.match(decodeURIComponent(String(answer.headers['grpc-message'])), said, what);
        assert.equal(errorInfoOfHeaders(answer.headers)?.reason, reason, what);
      }
    } finally {
      session.close();
    }
    await waitFor(async () => (await counted('INVALID_REQUEST')) === invalid + 5 && (await counted('UNSUPPORTED_ENCODING')) === encodings + 1);
    assert.equal(await metricValue(registry.url, 'registry_requests_total', 'outcome="ERROR",code="UNIMPLEMENTED",door="grpc"'), errors);
    assert.equal(await metricValue(registry.url, 'registry_requests_total', 'outcome="ERROR",code="INTERNAL",door="grpc"'), internal);
  });

  test('a call whose client\'s deadline (grpc-timeout) passes is counted ABORTED, as a cancelled call and an HTTP client gone away are (it counted ERROR DEADLINE_EXCEEDED, a failure of the server)', async () => {
    const labels = (outcome: string, code: string) => `method="/lf.a2a.v1.A2AService/SendMessage",operation="get",outcome="${outcome}",code="${code}",door="grpc"`;
    const [aborted, errors] = [await metricValue(registry.url, 'registry_requests_total', labels('ABORTED', 'none')), await metricValue(registry.url, 'registry_requests_total', labels('ERROR', 'DEADLINE_EXCEEDED'))];
    // A get held in flight past the client's 200 ms. Raw HTTP/2: a grpc-js client also resets the
    // stream at its deadline, which (if it comes first) the server counts as a cancel anyway.
    const gets = holdGets(registry.store);
    const session = http2.connect(`http://${grpcAddress(registry)}`);
    try {
      const requestId = `deadline-passed-${crypto.randomUUID()}`;
      const message = grpcFrame(Buffer.from(A2AService.sendMessage.requestSerialize(sendRequest([dataPart({ get: { id: 'held-past-its-deadline' } })]))));
      const answer = await rawGrpcCall(session, '/lf.a2a.v1.A2AService/SendMessage', message, { headers: { 'a2a-version': '1.0', 'grpc-timeout': '200m', 'x-request-id': requestId } });
      assert.equal(answer.headers['grpc-status'], String(grpc.status.DEADLINE_EXCEEDED), JSON.stringify(answer.headers));
      const line = await requestLine(requestId);
      assert.deepEqual([line.status, line.operation, line.errorCode], ['DEADLINE_EXCEEDED', 'get', undefined]);
    } finally {
      gets.restore();
      session.close();
    }
    assert.equal(await metricValue(registry.url, 'registry_requests_total', labels('ABORTED', 'none')), aborted + 1);
    assert.equal(await metricValue(registry.url, 'registry_requests_total', labels('ERROR', 'DEADLINE_EXCEEDED')), errors);
  });

  test('a request the handler refuses for its shape (an empty id, a pageSize out of range, a pageToken it did not issue) counts REFUSED INVALID_PARAMS, as the metrics define (it counted ERROR INVALID_ARGUMENT)', async () => {
    const alice = () => metadata({ authorization: `Bearer ${TOKENS.alice}` });
    const counted = (outcome: string) => metricValue(registry.url, 'registry_requests_total', `outcome="${outcome}",code="${outcome === 'REFUSED' ? 'INVALID_PARAMS' : 'INVALID_ARGUMENT'}",door="grpc"`);
    const [refused, errors] = [await counted('REFUSED'), await counted('ERROR')];
    const calls: Array<[string, unknown]> = [
      ['getTask', { tenant: '', id: '', historyLength: undefined }],
      ...[0, -1, 1000].map((pageSize): [string, unknown] => ['listTasks', ListTasksRequest.fromJSON({ pageSize })]),
      ['listTasks', ListTasksRequest.fromJSON({ pageToken: 'garbage' })],
    ];
    for (const [method, request] of calls) {
      const answer = await raw.unary(method, request, alice());
      assert.equal(answer.error?.code, grpc.status.INVALID_ARGUMENT, `${method} ${JSON.stringify(request)}`);
      assert.equal(errorInfoOf(answer.error!)?.reason, 'INVALID_PARAMS');
    }
    await waitFor(async () => (await counted('REFUSED')) === refused + calls.length);
    assert.equal(await counted('ERROR'), errors);
  });

  test('the same refusal of the request\'s shape counts alike on JSON-RPC, HTTP+JSON and gRPC: REFUSED INVALID_PARAMS under each binding\'s method (JSON-RPC and HTTP+JSON counted the handler\'s ERROR -32602)', async () => {
    const auth = { authorization: `Bearer ${TOKENS.alice}` };
    // Each refusal, as each binding sends it: an empty id, pageSize 0, -1 and 1000, a pageToken not issued, a status that is no state (v0.3 tasks/get too).
    const list = [{ pageSize: 0 }, { pageSize: -1 }, { pageSize: 1000 }, { pageToken: 'garbage' }, { status: 'NOPE' }];
    const bindings: Array<{ label: string; calls: Array<() => Promise<string | undefined>> }> = [
      {
        label: 'method="GetTask",operation="none",outcome="REFUSED",code="INVALID_PARAMS",door="a2a"',
        calls: [() => jsonRpcReason('GetTask', { id: '' })],
      },
      {
        label: 'method="tasks/get",operation="none",outcome="REFUSED",code="INVALID_PARAMS",door="a2a"',
        calls: [() => jsonRpcReason('tasks/get', {}, '0.3'), () => jsonRpcReason('tasks/get', { id: '' }, '0.3')],
      },
      {
        label: 'method="ListTasks",operation="none",outcome="REFUSED",code="INVALID_PARAMS",door="a2a"',
        calls: list.map((params) => () => jsonRpcReason('ListTasks', params)),
      },
      {
        label: 'method="GET /tasks/{id}",operation="none",outcome="REFUSED",code="INVALID_PARAMS",door="a2a"',
        calls: [() => restReason('/tasks/%20')],
      },
      {
        label: 'method="GET /tasks",operation="none",outcome="REFUSED",code="INVALID_PARAMS",door="a2a"',
        calls: list.map((params) => () => restReason(`/tasks?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]))}`)),
      },
      {
        label: 'method="/lf.a2a.v1.A2AService/GetTask",operation="none",outcome="REFUSED",code="INVALID_PARAMS",door="grpc"',
        calls: [async () => errorInfoOf((await raw.unary('getTask', { tenant: '', id: '', historyLength: undefined }, metadata(auth))).error!)?.reason],
      },
      {
        label: 'method="/lf.a2a.v1.A2AService/ListTasks",operation="none",outcome="REFUSED",code="INVALID_PARAMS",door="grpc"',
        calls: list.map((params) => async () => errorInfoOf((await raw.unary('listTasks', ListTasksRequest.fromJSON(params), metadata(auth))).error!)?.reason),
      },
    ];
    const errors = () => metricValue(registry.url, 'registry_requests_total', 'operation="none",outcome="ERROR",code="-32602"');
    const before = await Promise.all(bindings.map(({ label }) => metricValue(registry.url, 'registry_requests_total', label)));
    const errorsBefore = await errors();
    for (const { label, calls } of bindings) for (const call of calls) assert.equal(await call(), 'INVALID_PARAMS', label);
    await waitFor(async () => (await metricValue(registry.url, 'registry_requests_total', bindings.at(-1)!.label)) === before.at(-1)! + bindings.at(-1)!.calls.length);
    for (const [i, { label, calls }] of bindings.entries()) assert.equal(await metricValue(registry.url, 'registry_requests_total', label), before[i]! + calls.length, label);
    assert.equal(await errors(), errorsBefore);

    async function jsonRpcReason(method: string, params: unknown, version = '1.0'): Promise<string | undefined> {
      const answer = await fetch(`${registry.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': version, ...auth },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      const { error } = (await answer.json()) as WireJson;
      assert.equal(error?.code, -32602, `${method} ${JSON.stringify(params)}`);
      return error.data?.[0]?.reason;
    }
    async function restReason(path: string): Promise<string | undefined> {
      const answer = await fetch(`${registry.url}/a2a/rest${path}`, { headers: { 'A2A-Version': '1.0', ...auth } });
      assert.equal(answer.status, 400, path);
      return ((await answer.json()) as WireJson).error.details?.[0]?.reason;
    }
  });

  test('a call to an unknown method is UNIMPLEMENTED with ErrorInfo METHOD_NOT_FOUND and the request id, logged and counted, as JSON-RPC answers -32601 (grpc-js answered it bare, uncounted)', async () => {
    const counted = () => metricValue(registry.url, 'registry_requests_total', 'method="other",operation="none",outcome="REFUSED",code="METHOD_NOT_FOUND",door="grpc"');
    const before = await counted();
    const session = http2.connect(`http://${grpcAddress(registry)}`);
    try {
      const answer = await rawGrpcCall(session, '/lf.a2a.v1.A2AService/Nope', grpcFrame(Buffer.alloc(0)), { headers: { 'a2a-version': '1.0', 'x-request-id': 'unknown-method-1' } });
      assert.equal(answer.headers['grpc-status'], String(grpc.status.UNIMPLEMENTED), JSON.stringify(answer.headers));
      assert.match(decodeURIComponent(String(answer.headers['grpc-message'])), /^"\/lf\.a2a\.v1\.A2AService\/Nope" is no method of this server: the A2A services are lf\.a2a\.v1\.A2AService/);
      assert.equal(errorInfoOfHeaders(answer.headers)?.reason, 'METHOD_NOT_FOUND');
      assert.equal(answer.headers['x-request-id'], 'unknown-method-1');
      // The metadata naming the called path is the registry's own: sent by a client on a known method, it changes nothing.
      const known = await rawGrpcCall(session, '/lf.a2a.v1.A2AService/ListTasks', grpcFrame(Buffer.alloc(0)), {
        headers: { 'a2a-version': '1.0', authorization: `Bearer ${TOKENS.alice}`, 'x-a2a-registry-called-path': '/lf.a2a.v1.A2AService/Nope' },
      });
      assert.equal(known.headers['grpc-status'], String(grpc.status.OK), JSON.stringify(known.headers));
    } finally {
      session.close();
    }
    await waitFor(async () => (await counted()) === before + 1);
    assert.equal((await healthCheck(grpcAddress(registry), '')).status, 'SERVING', 'the services\' own methods still answer');
  });

  test('a message larger than the body limit is RESOURCE_EXHAUSTED with the sizes, an ErrorInfo and the request id, as the other refusals (grpc-js answered it bare)', async () => {
    const before = await metricValue(registry.url, 'registry_requests_total', 'outcome="REFUSED",code="REQUEST_TOO_LARGE"');
    const answer = await raw.send([{ text: 'x'.repeat(200_000) }]);
    assert.equal(answer.error?.code, grpc.status.RESOURCE_EXHAUSTED);
    assert.match(answer.error!.details, /^The request message is \d+ bytes; the limit is \d+ bytes \(REGISTRY_MAX_BODY_BYTES\)\./);
    const info = errorInfoOf(answer.error!);
    assert.equal(info?.reason, 'REQUEST_TOO_LARGE');
    assert.match(String(answer.error!.metadata.get('x-request-id')[0]), /^[\w-]{36}$/);
    // Compressed under the limit, over it once decompressed: refused alike.
    const gzip = new RawA2AClient(grpcAddress(registry), { 'grpc.default_compression_algorithm': 2 });
    try {
      const inflated = await gzip.send([{ text: 'x'.repeat(200_000) }]);
      assert.equal(inflated.error?.code, grpc.status.RESOURCE_EXHAUSTED);
      assert.match(inflated.error!.details, /^The request message is over the limit of \d+ bytes \(REGISTRY_MAX_BODY_BYTES\)/);
      assert.equal(errorInfoOf(inflated.error!)?.reason, 'REQUEST_TOO_LARGE');
    } finally {
      gzip.close();
    }
    // Counted as refused, as the HTTP doors count a body over the limit (it was counted as cancelled by the client).
    await waitFor(async () => (await metricValue(registry.url, 'registry_requests_total', 'outcome="REFUSED",code="REQUEST_TOO_LARGE"')) >= before + 2);
    // The connection is still usable.
    assert.equal(stateOf((await raw.send(search('weather'))).task!), 'TASK_STATE_COMPLETED');
  });

  test('metadata over the HTTP port\'s 16 KiB header bound is RESOURCE_EXHAUSTED REQUEST_TOO_LARGE with ErrorInfo and the request id, logged and counted; far over it Node refuses the call (a few hundred KB were accepted), and a single field of 130 KB ends the connection', async () => {
    const counted = () => metricValue(registry.url, 'registry_requests_total', 'method="/lf.a2a.v1.A2AService/SendMessage",operation="none",outcome="REFUSED",code="REQUEST_TOO_LARGE",door="grpc"');
    const before = await counted();
    const requestId = `metadata-too-large-${crypto.randomUUID()}`;
    const answer = await raw.send(search('weather'), metadata({ 'x-request-id': requestId, 'x-big': 'a'.repeat(20_000) }));
    assert.equal(answer.error?.code, grpc.status.RESOURCE_EXHAUSTED, answer.error?.details);
    assert.match(answer.error!.details, /^The call's metadata is 2\d{4} bytes .*; the limit is 16384 bytes, as for the HTTP port's headers\. Drop or shorten the oversized entries/);
    assert.equal(errorInfoOf(answer.error!)?.reason, 'REQUEST_TOO_LARGE');
    assert.equal(answer.error!.metadata.get('x-request-id')[0], requestId);
    const line = await requestLine(requestId);
    assert.deepEqual([line.status, line.errorCode], ['RESOURCE_EXHAUSTED', 'REQUEST_TOO_LARGE']);
    await waitFor(async () => (await counted()) === before + 1);
    // Under the bound, as the HTTP port takes such headers: answered.
    assert.equal(stateOf((await raw.send(search('weather'), metadata({ 'x-big': 'a'.repeat(14_000) }))).task!), 'TASK_STATE_COMPLETED');
    // Far over it (here 200 KB in 10 entries), Node refuses the stream before any call exists: a bare RESOURCE_EXHAUSTED, as the README says.
    const apart = new RawA2AClient(grpcAddress(registry));
    try {
      const huge = await apart.send(search('weather'), metadata(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`x-big-${i}`, 'a'.repeat(20_000)]))));
      assert.equal(huge.error?.code, grpc.status.RESOURCE_EXHAUSTED, huge.error?.details);
      assert.equal(errorInfoOf(huge.error!), undefined);
      // One field of 130 KB is more than nghttp2's HPACK decoder takes: the connection ends
      // (COMPRESSION_ERROR) before any call exists, a bare INTERNAL, as the README says.
      const field = await apart.send(search('weather'), metadata({ 'x-big': 'a'.repeat(130_000) }));
      assert.deepEqual([field.error?.code, field.error?.details], [grpc.status.INTERNAL, 'Received RST_STREAM with code 9']);
    } finally {
      apart.close();
    }
  });

  test('ErrorInfo domains: reasons the A2A spec defines are a2a-protocol.org, the registry\'s own a2a-registry, alike on JSON-RPC, HTTP+JSON and gRPC, whoever answers (INVALID_PARAMS came in both)', async () => {
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${registry.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.alice}` },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      const answer = (await res.json()) as WireJson;
      return (answer.error.data ?? answer.error.details)[0] as WireJson;
    };
    const jsonRpc = (method: string, params: unknown) => post('/a2a/jsonrpc', { jsonrpc: '2.0', id: 1, method, params });
    const onGrpc = async (answer: Promise<{ error?: grpc.ServiceError }>) => errorInfoOf((await answer).error!);
    let deep: unknown = 'x';
    for (let i = 0; i < 150; i++) deep = { a: deep };
    const message = (parts: WireJson[]) => ({ messageId: crypto.randomUUID(), role: 'ROLE_USER', parts });
    const asAlice = metadata({ authorization: `Bearer ${TOKENS.alice}` });
    const cases: Array<[what: string, reason: string, domain: string, answers: Array<Promise<{ reason?: string; domain?: string } | undefined>>]> = [
      // The registry's own check of the parts, and the SDK's of the message.
      ['no parts', 'INVALID_PARAMS', 'a2a-protocol.org', [jsonRpc('SendMessage', { message: message([]) }), post('/a2a/rest/message:send', { message: message([]) }), onGrpc(raw.send([]))]],
      [
        'no message',
        'INVALID_PARAMS',
        'a2a-protocol.org',
        [jsonRpc('SendMessage', {}), post('/a2a/rest/message:send', {}), onGrpc(raw.unary('sendMessage', { tenant: '', message: undefined, configuration: undefined, metadata: undefined }))],
      ],
      ['unknown task', 'TASK_NOT_FOUND', 'a2a-protocol.org', [jsonRpc('GetTask', { id: 'no-such-task' }), onGrpc(raw.unary('getTask', { tenant: '', id: 'no-such-task', historyLength: undefined }))]],
      [
        'too deep',
        'TOO_DEEP',
        'a2a-registry',
        [
          jsonRpc('SendMessage', { message: message([dataPart({ register: { agentCard: deep } })]) }),
          post('/a2a/rest/message:send', { message: message([dataPart({ register: { agentCard: deep } })]) }),
          onGrpc(raw.send([dataPart({ register: { agentCard: deep } })], asAlice)),
        ],
      ],
      [
        'too large',
        'REQUEST_TOO_LARGE',
        'a2a-registry',
        [jsonRpc('SendMessage', { message: message([{ text: 'x'.repeat(200_000) }]) }), post('/a2a/rest/message:send', { message: message([{ text: 'x'.repeat(200_000) }]) }), onGrpc(raw.send([{ text: 'x'.repeat(200_000) }]))],
      ],
    ];
    for (const [what, reason, domain, answers] of cases) {
      for (const [i, answer] of (await Promise.all(answers)).entries()) {
        const binding = ['JSON-RPC', 'HTTP+JSON', 'gRPC'][answers.length === 2 && i === 1 ? 2 : i];
        assert.equal(answer?.reason, reason, `${what} on ${binding}`);
        assert.equal(answer?.domain, domain, `${what} on ${binding}`);
      }
    }
  });

  test('an internal failure is INTERNAL with a generic message, never the exception\'s', async () => {
    const taskStore = registry.core.tasks;
    const save = taskStore.save.bind(taskStore);
    taskStore.save = async () => {
      throw new Error('secret detail: connection to db-internal-7 refused');
    };
    try {
      const answer = await raw.send(search('weather'), metadata({ 'x-request-id': 'grpc-internal-1' }));
      assert.equal(answer.error?.code, grpc.status.INTERNAL);
      assert.doesNotMatch(answer.error!.details, /secret|db-internal/);
      assert.match(answer.error!.details, /Internal error.*report it with the X-Request-Id/);
      // The id the message asks for comes with it (a trailer: the call ends before any header is
      // sent), and the reason in an ErrorInfo, as on the other bindings.
      assert.deepEqual(answer.error!.metadata.get('x-request-id'), ['grpc-internal-1']);
      assert.equal(errorInfoOf(answer.error!)?.reason, 'INTERNAL');
      assert.equal(errorInfoOf(answer.error!)?.domain, 'a2a-protocol.org');
      assert.equal((await requestLine('grpc-internal-1')).errorCode, 'INTERNAL');
      const streamed = await raw.stream('sendStreamingMessage', sendRequest(search('weather')), metadata({ 'x-request-id': 'grpc-internal-2' }));
      assert.equal(streamed.error?.code, grpc.status.INTERNAL);
      assert.doesNotMatch(streamed.error!.details, /secret|db-internal/);
      assert.deepEqual(streamed.error!.metadata.get('x-request-id'), ['grpc-internal-2']);
      assert.equal(errorInfoOf(streamed.error!)?.reason, 'INTERNAL');
    } finally {
      taskStore.save = save;
    }
  });
});

describe('requests that do not arrive, as the HTTP door\'s 408', () => {
  let slow: TestRegistry;
  before(async () => {
    slow = await startTestRegistry({ GRPC_PORT: '0', REGISTRY_REQUEST_TIMEOUT_SECONDS: '1', REGISTRY_MAX_CONNECTIONS: '3' });
  });
  after(async () => {
    await slow.close();
    fs.rmSync(slow.dataDir, { recursive: true, force: true });
  });
  const sendPath = '/lf.a2a.v1.A2AService/SendMessage';
  const searchMessage = () => grpcFrame(A2AService.sendMessage.requestSerialize(sendRequest(search('weather')) as never));

  test('a call whose message (or end of stream) has not arrived within REGISTRY_REQUEST_TIMEOUT_SECONDS is ended DEADLINE_EXCEEDED (REQUEST_TIMEOUT), counted, and its stream freed', { timeout: 15_000 }, async () => {
    const session = http2.connect(`http://${grpcAddress(slow)}`);
    try {
      // Headers only; a message without the end of the stream: neither ever ran, nor was ever ended.
      const [headersOnly, noEnd] = await Promise.all([
        rawGrpcCall(session, sendPath, undefined, { end: false, headers: { 'a2a-version': '1.0', 'x-request-id': 'stalled-1' } }),
        rawGrpcCall(session, sendPath, searchMessage(), { end: false }),
      ]);
      for (const answer of [headersOnly, noEnd]) {
        assert.equal(answer.headers['grpc-status'], String(grpc.status.DEADLINE_EXCEEDED), JSON.stringify(answer.headers));
        assert.match(decodeURIComponent(String(answer.headers['grpc-message'])), /^The request did not arrive in full within 1 s \(REGISTRY_REQUEST_TIMEOUT_SECONDS\)/);
        assert.equal(errorInfoOfHeaders(answer.headers)?.reason, 'REQUEST_TIMEOUT');
        assert.ok(answer.closedAfterMs >= 900 && answer.closedAfterMs < 3000, `closed after ${answer.closedAfterMs} ms`);
        // The stream is reset after the status (RST_STREAM NO_ERROR), so it no longer counts against the connection.
        assert.equal(answer.rstCode, http2.constants.NGHTTP2_NO_ERROR);
      }
      assert.equal(headersOnly.headers['x-request-id'], 'stalled-1');
      assert.ok((await metricValue(slow.url, 'registry_requests_total', 'method="/lf.a2a.v1.A2AService/SendMessage",operation="none",outcome="REFUSED",code="REQUEST_TIMEOUT",door="grpc"')) >= 2);
      // A call that arrives in full is served as ever on the same connection.
      const served = await rawGrpcCall(session, sendPath, searchMessage());
      assert.equal(served.headers['grpc-status'], String(grpc.status.OK));
    } finally {
      session.close();
    }
  });

  test('sockets that send no HTTP/2 preface are closed at REGISTRY_HEADERS_TIMEOUT_SECONDS, so they cannot take every REGISTRY_MAX_CONNECTIONS slot', { timeout: 15_000 }, async () => {
    // Three sockets (the cap) that send nothing: they stayed open for good, and every call failed
    // UNAVAILABLE. This registry's headers timeout is 1 s (its request timeout's); its keep-alive
    // timeout (120 s) and PING interval (15 s), which close such a socket too, are far beyond what
    // is waited here, so only the headers timeout can close them in time (with those at 3 s and
    // 1 s, the sockets closed at 2 s without it).
    const silent = await Promise.all(Array.from({ length: 3 }, () => connect(`http://${grpcAddress(slow)}`)));
    try {
      const stillOpen = new Promise<'still open'>((resolve) => setTimeout(resolve, 8000, 'still open').unref());
      const closedAfter = await Promise.all(silent.map((c) => Promise.race([c.closed, stillOpen])));
      // At the 1 s headers timeout; late timers on a loaded machine have room up to 8 s.
      for (const ms of closedAfter) assert.ok(typeof ms === 'number' && ms >= 800, typeof ms === 'number' ? `closed after ${Math.round(ms)} ms` : 'still open after 8 s');
      const client = new RawA2AClient(grpcAddress(slow));
      try {
        assert.equal((await client.unary('getTask', { tenant: '', id: 'no-such-task', historyLength: undefined })).error?.code, grpc.status.NOT_FOUND);
      } finally {
        client.close();
      }
    } finally {
      for (const c of silent) c.socket.destroy();
    }
  });

  test('one connection may have 100 calls open at once, and the gRPC port takes REGISTRY_MAX_CONNECTIONS connections, as the HTTP port', { timeout: 15_000 }, async () => {
    const sessions = Array.from({ length: 4 }, () => http2.connect(`http://${grpcAddress(slow)}`));
    try {
      for (const session of sessions) session.on('error', () => {});
      const settled = await Promise.all(
        sessions.map(
          (session) =>
            new Promise<number | 'closed'>((resolve) => {
              session.once('remoteSettings', (settings) => resolve(settings.maxConcurrentStreams ?? -1));
              session.once('close', () => resolve('closed'));
            }),
        ),
      );
      assert.deepEqual(settled, [100, 100, 100, 'closed']);
    } finally {
      for (const session of sessions) session.destroy();
    }
  });
});

test('a connection at REGISTRY_GRPC_MAX_CONNECTION_AGE_SECONDS gets a GOAWAY, so clients rebalance: its watch stream ends UNAVAILABLE CONNECTION_AGED, to be resumed, and the channel reconnects (connections lived for ever)', async () => {
  const aging = await startTestRegistry({ GRPC_PORT: '0', REGISTRY_GRPC_MAX_CONNECTION_AGE_SECONDS: '1', LOG_LEVEL: 'info' }, undefined, logged.stream);
  const client = new RawA2AClient(grpcAddress(aging));
  try {
    const requestId = `aged-watch-${crypto.randomUUID()}`;
    const watch = client.stream('sendStreamingMessage', sendRequest([dataPart({ watch: { query: 'grpcagedwatch', initial: false } })]), metadata({ authorization: `Bearer ${TOKENS.alice}`, 'x-request-id': requestId }));
    const ended = await watch;
    assert.ok(ended.events.length > 0, 'the watch started');
    assert.equal(ended.error?.code, grpc.status.UNAVAILABLE, JSON.stringify(ended.error?.details));
    assert.match(ended.error!.details, /^This connection reached its age limit \(REGISTRY_GRPC_MAX_CONNECTION_AGE_SECONDS\).*: resume it with SubscribeToTask on a new connection/);
    assert.deepEqual([errorInfoOf(ended.error!)?.reason, retryInfoOf(ended.error!)], ['CONNECTION_AGED', 1]);
    const line = await requestLine(requestId);
    assert.deepEqual([line.status, line.errorCode], ['UNAVAILABLE', 'CONNECTION_AGED']);
    // The watch runs on; the client's channel reconnects and resumes it.
    const resumed = client.stream('subscribeToTask', { tenant: '', id: ended.events[0]!.task.id }, metadata({ authorization: `Bearer ${TOKENS.alice}` }));
    await waitFor(async () => resumed.events.length > 0);
    resumed.call.cancel();
    await resumed;
  } finally {
    client.close();
    await aging.close();
    fs.rmSync(aging.dataDir, { recursive: true, force: true });
  }
});

describe('idle connections, closed as the HTTP port closes them', () => {
  let idle: TestRegistry;
  before(async () => {
    // The keep-alive timeout for the first case, the PING interval (the SSE heartbeat's) for the second.
    idle = await startTestRegistry({ GRPC_PORT: '0', REGISTRY_KEEP_ALIVE_TIMEOUT_SECONDS: '3', REGISTRY_SSE_HEARTBEAT_SECONDS: '1' });
  });
  after(async () => {
    await idle.close();
    fs.rmSync(idle.dataDir, { recursive: true, force: true });
  });
  const getTask = (client: RawA2AClient) => client.unary('getTask', { tenant: '', id: 'no-such-task', historyLength: undefined });

  test('an HTTP/2 connection with no call open is closed (GOAWAY) after REGISTRY_KEEP_ALIVE_TIMEOUT_SECONDS, and a client\'s channel reconnects for its next call', { timeout: 20_000 }, async () => {
    // The preface and settings, then no stream: it stayed open for good.
    const session = http2.connect(`http://${grpcAddress(idle)}`);
    session.on('error', () => {});
    const opened = performance.now();
    const goaway = new Promise<boolean>((resolve) => session.once('goaway', () => resolve(true)));
    await new Promise<void>((resolve) => session.once('remoteSettings', () => resolve()));
    await new Promise<void>((resolve) => session.once('close', resolve));
    const ms = performance.now() - opened;
    assert.ok(await Promise.race([goaway, Promise.resolve(false)]), 'closed with a GOAWAY');
    // grpc-js's idle timer, once it fires, closes the session only if Date.now() says it has been
    // idle for the whole timeout. The timer counts from the event loop's cached time, which on a
    // busy loop is behind the clock the idle mark was read from, so it can fire a little short and
    // wait one more timeout: closed after 3 s, or after 6 (seen in CI at 6,004 ms).
    assert.ok(ms >= 2500 && ms < 8500, `closed after ${Math.round(ms)} ms`);
    // A connection whose calls ended is idle from then on: a client's next call opens a new one.
    const client = new RawA2AClient(grpcAddress(idle));
    try {
      assert.equal((await getTask(client)).error?.code, grpc.status.NOT_FOUND);
      await new Promise((resolve) => setTimeout(resolve, 4000));
      assert.equal((await getTask(client)).error?.code, grpc.status.NOT_FOUND);
    } finally {
      client.close();
    }
  });

  test('a connection whose client vanished without a word (network lost: no FIN, no RST) is closed once it leaves the server\'s HTTP/2 PING unanswered, ending its watch stream and freeing its place (it held them for good)', { timeout: 15_000 }, async () => {
    // A relay between client and server that goes dark on demand, dropping every byte both ways,
    // as a lost network does: the server's socket stays open and nothing more arrives on it.
    let dark = false;
    const relayed = new Set<net.Socket>();
    const relay = net.createServer((client) => {
      const server = net.connect(Number(grpcAddress(idle).split(':').at(-1)), '127.0.0.1');
      for (const [from, to] of [[client, server], [server, client]] as const) {
        relayed.add(from);
        from.on('data', (bytes: Buffer) => dark || to.write(bytes));
        from.on('error', () => {});
        from.on('close', () => to.destroy());
      }
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const client = new RawA2AClient(`127.0.0.1:${(relay.address() as net.AddressInfo).port}`);
    const alice = metadata({ authorization: `Bearer ${TOKENS.alice}` });
    let taskId: string | undefined;
    try {
      const watch = client.stream('sendStreamingMessage', sendRequest([dataPart({ watch: { query: 'grpcvanishedclient', initial: false } })]), alice);
      await waitFor(async () => watch.events.length > 0);
      taskId = watch.events[0]!.task.id as string;
      assert.equal(await metricValue(idle.url, 'registry_open_streams', ''), 1);
      dark = true;
      // A PING within REGISTRY_SSE_HEARTBEAT_SECONDS (1 s), unanswered for as long again: the
      // connection is closed, its watch stream ended (the watch runs on, for SubscribeToTask).
      const went = performance.now();
      await waitFor(async () => (await metricValue(idle.url, 'registry_open_streams', '')) === 0, 6000);
      const ms = performance.now() - went;
      assert.ok(ms < 4500, `freed after ${Math.round(ms)} ms`);
    } finally {
      client.close();
      for (const socket of relayed) socket.destroy();
      relay.close();
      if (taskId) {
        const direct = new RawA2AClient(grpcAddress(idle));
        await direct.unary('cancelTask', { tenant: '', id: taskId, metadata: undefined }, alice);
        direct.close();
      }
    }
  });
});

describe('authentication, as on the HTTP doors', () => {
  test('a token the registry does not know is UNAUTHENTICATED on every call, with the reason and a challenge', async () => {
    for (const [answer, challenge] of [
      [await raw.send(search('weather'), metadata({ authorization: 'Bearer not-a-registry-token-0123456789' })), /^Bearer realm="a2a-registry", error="invalid_token"/],
      // Another scheme: no error code in the challenge (RFC 6750 section 3.1).
      [await raw.unary('getTask', { tenant: '', id: 'x', historyLength: undefined }, metadata({ authorization: 'Basic YWxpY2U6c2VjcmV0' })), /^Bearer realm="a2a-registry"$/],
    ] as const) {
      assert.equal(answer.error?.code, grpc.status.UNAUTHENTICATED);
      assert.equal(errorInfoOf(answer.error!)?.reason, 'INVALID_CREDENTIAL');
      assert.match(String(answer.error!.metadata.get('www-authenticate')[0]), challenge);
    }
    const streamed = await raw.stream('sendStreamingMessage', sendRequest(search('weather')), metadata({ authorization: 'Bearer nope-nope-nope-nope-nope' }));
    assert.equal(streamed.error?.code, grpc.status.UNAUTHENTICATED);
    assert.ok((await metricValue(registry.url, 'registry_requests_total', 'outcome="REFUSED",code="INVALID_CREDENTIAL"')) >= 3);
  });

  test('an empty authorization value is UNAUTHENTICATED, as an empty Authorization header on HTTP; it was served as anonymous', async () => {
    for (const value of ['', '   ']) {
      const answer = await raw.unary('getTask', { tenant: '', id: 'x', historyLength: undefined }, metadata({ authorization: value }));
      assert.equal(answer.error?.code, grpc.status.UNAUTHENTICATED, answer.error?.details);
      assert.equal(errorInfoOf(answer.error!)?.reason, 'INVALID_CREDENTIAL');
      assert.match(String(answer.error!.metadata.get('www-authenticate')[0]), /error_description="empty Authorization header"/);
    }
  });

  test('a token with white space around it is read trimmed, as HTTP/1.1 reads the header: HTTP/2 dropped the field, and the call ran as anonymous, a wrong token too', async () => {
    const card = v1Card('Spaced Token Agent', 'https://spaced-token.example.org/a2a');
    for (const value of [`Bearer ${TOKENS.alice} `, ` Bearer ${TOKENS.alice}`]) {
      const registered = await raw.send([dataPart({ register: { agentCard: card } })], metadata({ authorization: value }));
      assert.equal(registered.error, undefined, registered.error?.details);
      assert.equal(stateOf(registered.task!), 'TASK_STATE_COMPLETED', JSON.stringify(registered.task?.status));
    }
    const wrong = await raw.unary('getTask', { tenant: '', id: 'x', historyLength: undefined }, metadata({ authorization: 'Bearer not-a-registry-token-0123456789 ' }));
    assert.equal(wrong.error?.code, grpc.status.UNAUTHENTICATED, wrong.error?.details);
    assert.equal(errorInfoOf(wrong.error!)?.reason, 'INVALID_CREDENTIAL');
  });

  test('two authorization values are UNAUTHENTICATED, whichever comes first, as two Authorization headers on HTTP (the first counted)', async (t) => {
    // grpc-js clients refuse to send two; other clients and proxies can. Raw HTTP/2, which Node
    // lets send a repeated single-value header only with strictSingleValueFields off (Node 24;
    // Node 22's client refuses to send it at all: there is nothing to test with it).
    const session = http2.connect(`http://${grpcAddress(registry)}`, { strictSingleValueFields: false } as http2.ClientSessionOptions);
    const headersOf = (first: string, second: string) => [':method', 'POST', ':path', '/lf.a2a.v1.A2AService/ListTasks', 'content-type', 'application/grpc', 'te', 'trailers', 'a2a-version', '1.0', 'authorization', first, 'authorization', second];
    try {
      session.request(headersOf('Bearer a', 'Bearer b') as unknown as http2.OutgoingHttpHeaders).close();
    } catch (err) {
      session.close();
      if ((err as NodeJS.ErrnoException).code !== 'ERR_HTTP2_HEADER_SINGLE_VALUE') throw err;
      t.skip(`this Node.js (${process.version}) cannot send two authorization values over HTTP/2`);
      return;
    }
    const call = (first: string, second: string) =>
      new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
        const req = session.request(headersOf(first, second) as unknown as http2.OutgoingHttpHeaders);
        let answer: http2.IncomingHttpHeaders = {};
        req.on('response', (h) => (answer = { ...answer, ...h })).on('trailers', (t) => (answer = { ...answer, ...t }));
        req.on('close', () => resolve(answer)).on('error', reject);
        req.resume();
        req.end(Buffer.alloc(5)); // one empty message
      });
    try {
      for (const [first, second] of [[`Bearer ${TOKENS.alice}`, `Bearer ${TOKENS.bob}`], ['Bearer mistyped-mistyped-mistyped', `Bearer ${TOKENS.alice}`]] as const) {
        const answer = await call(first, second);
        assert.equal(answer['grpc-status'], String(grpc.status.UNAUTHENTICATED), JSON.stringify(answer));
        assert.match(String(answer['www-authenticate']), /error_description="more than one Authorization header"/);
        const details = decodeStatus(Buffer.from(String(answer['grpc-status-details-bin']), 'base64')).details.find((d) => d.typeUrl.endsWith('google.rpc.ErrorInfo'));
        assert.equal(decodeErrorInfo(details!.value).reason, 'INVALID_CREDENTIAL');
        assert.match(decodeURIComponent(String(answer['grpc-message'])), /has 2 Authorization headers; send exactly one/);
        assert.ok(!JSON.stringify(answer).includes(TOKENS.alice), 'no token echoed');
      }
    } finally {
      session.close();
    }
  });

  test('with REGISTRY_PUBLIC_READ=false an anonymous call is UNAUTHENTICATED, a valid token is served', async () => {
    const closed = await startTestRegistry({ GRPC_PORT: '0', REGISTRY_PUBLIC_READ: 'false' });
    const client = new RawA2AClient(grpcAddress(closed));
    try {
      const anonymous = await client.send(search('weather'));
      assert.equal(anonymous.error?.code, grpc.status.UNAUTHENTICATED);
      assert.equal(errorInfoOf(anonymous.error!)?.reason, 'CREDENTIAL_REQUIRED');
      assert.match(anonymous.error!.details, /REGISTRY_PUBLIC_READ=false/);
      assert.equal(stateOf((await client.send(search('weather'), metadata({ authorization: `Bearer ${TOKENS.bob}` }))).task!), 'TASK_STATE_COMPLETED');
      // The health service stays open, as /healthz and /readyz do.
      assert.equal((await healthCheck(grpcAddress(closed), '')).status, 'SERVING');
    } finally {
      client.close();
      await closed.close();
      fs.rmSync(closed.dataDir, { recursive: true, force: true });
    }
  });
});

describe('rate limits, shared with the HTTP doors', () => {
  let limited: TestRegistry;
  let client: RawA2AClient;
  before(async () => {
    limited = await startTestRegistry({
      GRPC_PORT: '0',
      REGISTRY_TRUST_PROXY: '1',
      REGISTRY_RATE_READS_PER_MINUTE: '3',
      REGISTRY_RATE_REQUESTS_PER_MINUTE: '6',
      REGISTRY_MAX_STREAMS_PER_CLIENT: '1',
    });
    client = new RawA2AClient(grpcAddress(limited));
  });
  after(async () => {
    client.close();
    await limited.close();
    fs.rmSync(limited.dataDir, { recursive: true, force: true });
  });

  test('reads per address: the executor sees the gRPC client\'s address (REJECTED RATE_LIMITED)', async () => {
    for (let i = 0; i < 3; i++) assert.equal(stateOf((await client.send(search('weather'), from('10.1.0.1'))).task!), 'TASK_STATE_COMPLETED');
    const error = errorOf((await client.send(search('weather'), from('10.1.0.1'))).task!);
    assert.equal(error.code, 'RATE_LIMITED');
    assert.ok(error.retryAfterSeconds >= 1);
    // Another address has its own budget.
    assert.equal(stateOf((await client.send(search('weather'), from('10.1.0.2'))).task!), 'TASK_STATE_COMPLETED');
  });

  test('requests per address are one budget across HTTP and gRPC: RESOURCE_EXHAUSTED with reason and retry delay', async () => {
    const address = '10.2.0.1';
    const getTask = { tenant: '', id: 'no-such-task', historyLength: undefined };
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${limited.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', 'x-forwarded-for': address },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'GetTask', params: { id: 'no-such-task' } }),
      });
      assert.equal(res.status, 200);
    }
    for (let i = 0; i < 3; i++) assert.equal((await client.unary('getTask', getTask, from(address))).error?.code, grpc.status.NOT_FOUND);
    const refused = (await client.unary('getTask', getTask, from(address))).error!;
    assert.equal(refused.code, grpc.status.RESOURCE_EXHAUSTED);
    assert.match(refused.details, /Too many requests from this address: the limit is 6 per minute/);
    const info = errorInfoOf(refused);
    assert.equal(info?.reason, 'RATE_LIMITED');
    assert.ok(Number(info?.metadata.retryAfterSeconds) >= 1);
    assert.equal(refused.metadata.get('retry-after')[0], info?.metadata.retryAfterSeconds);
    assert.equal(retryInfoOf(refused), Number(info?.metadata.retryAfterSeconds), 'google.rpc.RetryInfo says the same delay');
    // The operator's token is not flood-limited; other addresses are unaffected.
    assert.equal((await client.unary('getTask', getTask, from(address, TOKENS.admin))).error?.code, grpc.status.NOT_FOUND);
    assert.equal((await client.unary('getTask', getTask, from('10.2.0.2'))).error?.code, grpc.status.NOT_FOUND);
    assert.ok((await metricValue(limited.url, 'registry_requests_total', 'method="/lf.a2a.v1.A2AService/GetTask",operation="none",outcome="REFUSED",code="RATE_LIMITED"')) >= 1);
  });

  test('concurrent streams per address are one cap across SSE and gRPC; an ended stream frees its place', async () => {
    // Hold a stream open: `get` waits until released (a stream lasts as long as its operation).
    const gets = holdGets(limited.store);
    try {
      const address = '10.3.0.1';
      const held = client.stream('sendStreamingMessage', sendRequest([dataPart({ get: { id: 'held' } })]), from(address, TOKENS.admin));
      await waitFor(async () => (await metricValue(limited.url, 'registry_open_streams', '')) === 1);
      const second = await client.stream('sendStreamingMessage', sendRequest(search('weather')), from(address, TOKENS.admin));
      assert.equal(second.error?.code, grpc.status.RESOURCE_EXHAUSTED);
      assert.equal(errorInfoOf(second.error!)?.reason, 'TOO_MANY_STREAMS');
      const sse = await fetch(`${limited.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', 'x-forwarded-for': address, authorization: `Bearer ${TOKENS.admin}` },
        body: sendMessageBody(search('weather'), 1, 'SendStreamingMessage'),
      });
      assert.equal(sse.status, 429);
      const refusal = ((await sse.json()) as WireJson).error;
      assert.equal(refusal.data[0].reason, 'TOO_MANY_STREAMS');
      // One stream is "1 open stream" (it said "1 open streams"); the admin's token is capped as any.
      assert.match(refusal.message, /^This address already has 1 open stream; the limit is 1 per client address \(REGISTRY_MAX_STREAMS_PER_CLIENT\), whatever the token, the admin's included\. /);
      assert.match(second.error!.details, /already has 1 open stream; /);
      // Blocking calls are not streams.
      assert.equal(stateOf((await client.send(search('weather'), from(address, TOKENS.admin))).task!), 'TASK_STATE_COMPLETED');
      gets.release();
      const finished = await held;
      assert.equal(finished.error, undefined);
      assert.equal(finished.events.at(-1)!.statusUpdate.status.state, 'TASK_STATE_REJECTED'); // NOT_FOUND
      await waitFor(async () => (await metricValue(limited.url, 'registry_open_streams', '')) === 0);
      const again = await client.stream('sendStreamingMessage', sendRequest(search('weather')), from(address, TOKENS.admin));
      assert.equal(again.error, undefined);
    } finally {
      gets.restore();
    }
  });
});

describe('standing searches (watches) over gRPC', () => {
  const alice = () => metadata({ authorization: `Bearer ${TOKENS.alice}` });
  const bob = () => metadata({ authorization: `Bearer ${TOKENS.bob}` });
  const watchEvents = (events: WireJson[]) =>
    events.filter((e) => e.artifactUpdate?.artifact?.name === 'watch-event').map((e) => e.artifactUpdate.artifact.parts[0].data as WireJson);

  test('a watch stream the client cancels stops there: the events after it are kept for SubscribeToTask, not sent to nobody', async () => {
    const word = 'grpccancelledwatch';
    const opened = raw.stream('sendStreamingMessage', sendRequest([dataPart({ watch: { query: word, initial: false } })]), alice());
    await waitFor(async () => opened.events.length > 0);
    const taskId = opened.events[0]!.task.id as string;
    opened.call.cancel();
    assert.equal((await opened).error?.code, grpc.status.CANCELLED);
    await waitFor(async () => (await metricValue(registry.url, 'registry_open_streams', '')) === 0);

    // A change while no client streams the watch: an event the client has not been sent. A
    // second watch, streamed, shows when the hub has handed the change to every watch.
    const witness = raw.stream('sendStreamingMessage', sendRequest([dataPart({ watch: { query: word, initial: false } })]), bob());
    await waitFor(async () => witness.events.length > 0);
    const entry = { ...v1Card('Cancelled Watch Target', 'https://grpc-cancelled-watch.example.org/a2a'), description: `Matches the ${word} watch.` };
    const registered = await raw.send([dataPart({ register: { agentCard: entry } })], alice());
    assert.equal(stateOf(registered.task!), 'TASK_STATE_COMPLETED');
    await waitFor(async () => watchEvents(witness.events).length > 0);
    witness.call.cancel();
    await witness;
    await raw.unary('cancelTask', { tenant: '', id: witness.events[0]!.task.id, metadata: undefined }, bob());

    // Resumed, the client gets it (before the fix the cancelled call's stream went on and took it).
    const resumed = raw.stream('subscribeToTask', { tenant: '', id: taskId }, alice());
    try {
      await waitFor(async () => watchEvents(resumed.events).length > 0);
      const [added] = watchEvents(resumed.events);
      assert.equal(added!.event, 'added');
      assert.equal(added!.seq, 1);
    } finally {
      resumed.call.cancel();
      await resumed;
      await raw.unary('cancelTask', { tenant: '', id: taskId, metadata: undefined }, alice());
    }
  });

  test('a client resuming a watch names its last event in the Last-Event-ID metadata: it gets the events after it, and one past the last is refused', async () => {
    const word = 'grpclasteventid';
    const opened = raw.stream('sendStreamingMessage', sendRequest([dataPart({ watch: { query: word, initial: false } })]), alice());
    await waitFor(async () => opened.events.length > 0);
    const taskId = opened.events[0]!.task.id as string;
    for (const i of [1, 2]) {
      const entry = { ...v1Card(`Last Event Id Target ${i}`, `https://grpc-last-event-id-${i}.example.org/a2a`), description: `Matches the ${word} watch.` };
      assert.equal(stateOf((await raw.send([dataPart({ register: { agentCard: entry } })], alice())).task!), 'TASK_STATE_COMPLETED');
    }
    // The stream that started the watch was sent both events (before, that counted for every client).
    await waitFor(async () => watchEvents(opened.events).length === 2);
    opened.call.cancel();
    await opened;

    const subscribe = (lastEventId: string) => raw.stream('subscribeToTask', { tenant: '', id: taskId }, metadata({ authorization: `Bearer ${TOKENS.alice}`, 'last-event-id': lastEventId }));
    // With white space around it too, as HTTP reads the header (HTTP/2 dropped it: every event came again).
    for (const lastEventId of ['1', ' 1']) {
      const resumed = subscribe(lastEventId);
      try {
        await waitFor(async () => watchEvents(resumed.events).length > 0);
        assert.deepEqual(watchEvents(resumed.events).map((e) => e.seq), [2], JSON.stringify(lastEventId));
      } finally {
        resumed.call.cancel();
        await resumed;
      }
    }
    const ahead = await subscribe('3');
    assert.equal(ahead.error?.code, grpc.status.INVALID_ARGUMENT);
    assert.match(ahead.error!.details, /^Last-Event-ID 3 is past the last event of watch .* \(seq 2\)/);
    await raw.unary('cancelTask', { tenant: '', id: taskId, metadata: undefined }, alice());
  });
});

test('a stream whose client stops reading is cut once its backlog passes the bound, over gRPC and SSE alike, instead of holding every event', { timeout: 120_000 }, async () => {
  // Documents (and so watch events) of about 60 KB: a few hundred fill the bounds quickly.
  const big = await startTestRegistry({ GRPC_PORT: '0', REGISTRY_MAX_DOCUMENT_BYTES: '65536' });
  const client = new RawA2AClient(grpcAddress(big));
  const sse = await connect(big.url);
  try {
    const word = 'unreadstreamword';
    const admin = () => metadata({ authorization: `Bearer ${TOKENS.admin}` });
    const watchRequest = [dataPart({ watch: { query: word, initial: false } })];
    // gRPC: reads the task, then stops reading (HTTP/2 flow control holds the rest on the server).
    const grpcWatch = client.stream('sendStreamingMessage', sendRequest(watchRequest), admin());
    await waitFor(async () => grpcWatch.events.length > 0);
    grpcWatch.call.pause();
    // SSE: a connection that sends the request, reads the task, then reads no more.
    const body = sendMessageBody(watchRequest, 1, 'SendStreamingMessage');
    sse.socket.write(
      `POST /a2a/jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nAuthorization: Bearer ${TOKENS.admin}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await waitFor(async () => sse.received().includes('"task"'));
    sse.socket.pause();

    // Until the SSE stream is cut (counted when the server closes it; its paused client cannot
    // tell yet), and past the gRPC bound (64 messages beyond the HTTP/2 window) by then.
    const description = `${word} ${'lorem ipsum dolor sit amet '.repeat(2300)}`.slice(0, 60_000);
    let registered = 0;
    const cut = async () => registered >= 200 && (await metricValue(big.url, 'registry_requests_total', 'code="SLOW_READER"')) >= 1;
    while (registered < 1000 && !(await cut())) {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => {
          const card = { ...v1Card(`Unread Stream Agent ${registered + i}`, `https://unread-${registered + i}.example.org/a2a`), description };
          return client.send([dataPart({ register: { agentCard: card } })], admin());
        }),
      );
      registered += 20;
    }
    // Read again: the SSE connection ends (the server closed it), the gRPC call ends
    // RESOURCE_EXHAUSTED, each after what was queued before the cut and none of the later events.
    sse.socket.resume();
    await Promise.race([sse.closed, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    const sseEvents = sse.received().split('\n\n').filter((frame) => frame.includes('"watch-event"')).length;
    assert.ok(sse.socket.destroyed || sse.socket.readableEnded, `the SSE stream was not cut after ${registered} events`);
    assert.ok(sseEvents < registered, `${sseEvents} of ${registered} events were sent over SSE`);
    grpcWatch.call.resume();
    const ended = await grpcWatch;
    assert.equal(ended.error?.code, grpc.status.RESOURCE_EXHAUSTED, `the gRPC stream was not cut after ${registered} events`);
    assert.match(ended.error!.details, /did not read the stream.*SubscribeToTask/);
    assert.ok(ended.events.length < registered, `${ended.events.length} of ${registered} events were queued`);
    // Counted (and logged) SLOW_READER, as the SSE stream is (it was ERROR RESOURCE_EXHAUSTED, the status's name).
    await waitFor(async () => (await metricValue(big.url, 'registry_requests_total', 'outcome="ERROR",code="SLOW_READER",door="grpc"')) === 1);
  } finally {
    sse.socket.destroy();
    client.close();
    await big.close();
    fs.rmSync(big.dataDir, { recursive: true, force: true });
  }
});

test('a ListTasks page is cut short of the 4 MiB gRPC clients receive by default: fewer tasks, and a nextPageToken that continues where it stopped (the client got RESOURCE_EXHAUSTED)', { timeout: 120_000 }, async () => {
  // Entries of about 60 KB: a search of 40 of them is a task of a few MB with its artifact.
  const big = await startTestRegistry({ GRPC_PORT: '0', REGISTRY_MAX_DOCUMENT_BYTES: '65536' });
  const client = new RawA2AClient(grpcAddress(big)); // grpc-js's default receive limit, 4 MiB
  try {
    const word = 'bulkpagedword';
    const bob = () => metadata({ authorization: `Bearer ${TOKENS.bob}` });
    const description = `${word} ${'lorem ipsum dolor sit amet '.repeat(2300)}`.slice(0, 60_000);
    for (let i = 0; i < 40; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, (_, k) => {
          const card = { ...v1Card(`Bulk Paged Agent ${i + k}`, `https://bulk-paged-${i + k}.example.org/a2a`), description };
          return client.send([dataPart({ register: { agentCard: card } })], metadata({ authorization: `Bearer ${TOKENS.admin}` }));
        }),
      );
    }
    const searched: string[] = [];
    for (let i = 0; i < 4; i++) {
      const answer = await client.send([dataPart({ search: { query: word, limit: 100 } })], bob());
      assert.equal(stateOf(answer.task!), 'TASK_STATE_COMPLETED');
      searched.unshift(answer.task!.id as string); // listed newest first
    }
    const listed: string[] = [];
    let pageToken = '';
    for (let page = 0; page < 8; page++) {
      const answer = await client.unary('listTasks', ListTasksRequest.fromJSON({ pageSize: 100, includeArtifacts: true, pageToken }), bob());
      assert.equal(answer.error, undefined, answer.error?.details);
      const value = answer.value as { tasks: Array<{ id: string; artifacts: unknown[] }>; nextPageToken: string };
      assert.ok(value.tasks.length > 0 && value.tasks.length < 4, `a page of ${value.tasks.length} tasks`);
      assert.ok(value.tasks.every((task) => task.artifacts.length > 0));
      listed.push(...value.tasks.map((task) => task.id));
      pageToken = value.nextPageToken;
      if (!pageToken) break;
    }
    assert.deepEqual(listed, searched, 'every task once, in order, across the pages');
    // JSON-RPC, which has no such limit, answers them in one page.
    const json = await fetch(`${big.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${TOKENS.bob}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: { pageSize: 100, includeArtifacts: true } }),
    });
    assert.deepEqual(((await json.json()) as WireJson).result.tasks.map((task: WireJson) => task.id), searched);
  } finally {
    client.close();
    await big.close();
    fs.rmSync(big.dataDir, { recursive: true, force: true });
  }
});

test('storage that cannot be written: a write over gRPC is UNAVAILABLE with the reason and retry-after, searches still answer, health says NOT_SERVING until it recovers', async (t) => {
  const parent = tempDir();
  const dataDir = path.join(parent, 'data');
  const faulty = await startTestRegistry({ GRPC_PORT: '0', REGISTRY_DATA_DIR: dataDir });
  // The registry closes before its directory goes (closing re-creates a deleted database file).
  t.after(async () => {
    await faulty.close();
    fs.rmSync(parent, { recursive: true, force: true });
  });
  const client = new RawA2AClient(grpcAddress(faulty));
  t.after(() => client.close());
  const asAlice = () => metadata({ authorization: `Bearer ${TOKENS.alice}` });
  const register = (name: string) => [dataPart({ register: { agentCard: v1Card(name, `https://${name.replace(/ /g, '-').toLowerCase()}.example.org/a2a`) } })];
  assert.equal(stateOf((await client.send(register('Fault One'), asAlice())).task!), 'TASK_STATE_COMPLETED');

  // The data directory replaced by a file: the database cannot be re-created, writes are refused.
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.writeFileSync(dataDir, 'not a directory');
  const refused = await client.send(register('Fault Two'), asAlice());
  assert.equal(refused.error?.code, grpc.status.UNAVAILABLE, refused.error?.details);
  assert.match(refused.error!.details, /^Storage is unavailable: .*deleted/);
  assert.equal(errorInfoOf(refused.error!)?.reason, 'STORAGE_UNAVAILABLE');
  assert.deepEqual(refused.error!.metadata.get('retry-after'), ['5']);
  // When to retry, also as gRPC client libraries read it (google.rpc.RetryInfo) and in the ErrorInfo.
  assert.equal(retryInfoOf(refused.error!), 5);
  assert.equal(errorInfoOf(refused.error!)?.metadata.retryAfterSeconds, '5');
  assert.equal(errorInfoOf(refused.error!)?.domain, 'a2a-registry', "the registry's own reason, in its domain");
  const streamed = await client.stream('sendStreamingMessage', sendRequest(register('Fault Three')), asAlice());
  assert.equal(streamed.error?.code, grpc.status.UNAVAILABLE);
  assert.equal(streamed.events.length, 0, 'refused before the stream starts');
  assert.equal(stateOf((await client.send(search('Fault One'))).task!), 'TASK_STATE_COMPLETED', 'searches are answered from the index');
  assert.equal((await healthCheck(grpcAddress(faulty), '')).status, 'NOT_SERVING');
  assert.ok((await metricValue(faulty.url, 'registry_requests_total', 'method="/lf.a2a.v1.A2AService/SendMessage",operation="register",outcome="FAILED",code="STORAGE_UNAVAILABLE",door="grpc"')) >= 1);

  fs.rmSync(dataDir);
  await waitFor(async () => (await healthCheck(grpcAddress(faulty), '')).status === 'SERVING', 15_000);
  assert.equal(stateOf((await client.send(register('Fault Four'), asAlice())).task!), 'TASK_STATE_COMPLETED');
});

describe('health', () => {
  test('grpc.health.v1 answers SERVING for the server and the A2A services, NOT_FOUND for others', async () => {
    for (const service of ['', 'lf.a2a.v1.A2AService', 'a2a.v1.A2AService']) {
      assert.equal((await healthCheck(grpcAddress(registry), service)).status, 'SERVING', service);
    }
    assert.equal((await healthCheck(grpcAddress(registry), 'no.such.Service')).error?.code, grpc.status.NOT_FOUND);
  });

  test('when the core is not ready, /readyz and the gRPC health service both say so', async () => {
    const store = registry.store;
    const ping = store.ping.bind(store);
    store.ping = async () => false;
    try {
      const ready = await fetch(`${registry.url}/readyz`);
      assert.equal(ready.status, 503);
      assert.match(((await ready.json()) as WireJson).reason, /storage is unreachable/);
      assert.equal((await healthCheck(grpcAddress(registry), '')).status, 'NOT_SERVING');
    } finally {
      store.ping = ping;
    }
    assert.equal((await fetch(`${registry.url}/readyz`)).status, 200);
    assert.equal((await healthCheck(grpcAddress(registry), '')).status, 'SERVING');
  });

  test('Watch sends the status at once and each change (SERVICE_UNKNOWN for an unknown service, the stream kept open); a readiness check that throws is logged once, not at each probe', async () => {
    // It was UNIMPLEMENTED: grpc-health-probe --watch and gRPC clients' own health checking use it.
    const watched = healthWatch(grpcAddress(registry), 'lf.a2a.v1.A2AService');
    const unknown = healthWatch(grpcAddress(registry), 'no.such.Service');
    const store = registry.store;
    const ping = store.ping.bind(store);
    try {
      await waitFor(async () => watched.statuses.length === 1 && unknown.statuses.length === 1);
      assert.deepEqual([watched.statuses, unknown.statuses], [['SERVING'], ['SERVICE_UNKNOWN']]);
      const failed = () => logged.lines.filter((l) => l.msg === 'the readiness check failed (gRPC health service: NOT_SERVING)');
      const before = failed().length;
      store.ping = async () => {
        throw new Error('the readiness check broke');
      };
      // Found by the Watch's own poll (a second at most).
      await waitFor(async () => watched.statuses.length === 2);
      assert.equal(watched.statuses[1], 'NOT_SERVING');
      for (let i = 0; i < 3; i++) assert.equal((await healthCheck(grpcAddress(registry), '')).status, 'NOT_SERVING', 'Check agrees');
      assert.equal(failed().length, before + 1, 'logged once for the Watch and every Check after it');
      assert.equal((failed().at(-1)!.err as { message: string }).message, 'the readiness check broke');
      store.ping = ping;
      // A change a Check finds goes to the Watches at once.
      assert.equal((await healthCheck(grpcAddress(registry), '')).status, 'SERVING');
      await waitFor(async () => watched.statuses.length === 3, 500);
      assert.deepEqual(watched.statuses, ['SERVING', 'NOT_SERVING', 'SERVING'], 'each change once');
      assert.deepEqual(unknown.statuses, ['SERVICE_UNKNOWN'], 'an unknown service is never updated, nor ended');
    } finally {
      store.ping = ping;
      watched.cancel();
      unknown.cancel();
    }
    assert.equal((await watched.ended).error?.code, grpc.status.CANCELLED);
  });

  test('health calls are counted in registry_requests_total under their method path, as every call on the port (they were not): Check OK, an unknown service ERROR NOT_FOUND, a Watch its client ends and a Check past its client\'s deadline ABORTED', async () => {
    const counted = ([method, outcome, code]: readonly [string, string, string]) =>
      metricValue(registry.url, 'registry_requests_total', `method="/grpc.health.v1.Health/${method}",operation="none",outcome="${outcome}",code="${code}",door="grpc"`);
    const kinds = [['Check', 'OK', 'none'], ['Check', 'ERROR', 'NOT_FOUND'], ['Check', 'ABORTED', 'none'], ['Watch', 'ABORTED', 'none']] as const;
    const before = await Promise.all(kinds.map(counted));
    assert.equal((await healthCheck(grpcAddress(registry), '')).status, 'SERVING');
    assert.equal((await healthCheck(grpcAddress(registry), 'no.such.Service')).error?.code, grpc.status.NOT_FOUND);
    const watched = healthWatch(grpcAddress(registry), '');
    await waitFor(async () => watched.statuses.length === 1);
    watched.cancel();
    await watched.ended;
    // A probe with a 100 ms timeout, while the readiness check takes longer.
    const store = registry.store;
    const ping = store.ping.bind(store);
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    store.ping = async () => {
      await held;
      return ping();
    };
    const session = http2.connect(`http://${grpcAddress(registry)}`);
    try {
      const answer = await rawGrpcCall(session, '/grpc.health.v1.Health/Check', grpcFrame(Buffer.alloc(0)), { headers: { 'grpc-timeout': '100m' } });
      assert.equal(answer.headers['grpc-status'], String(grpc.status.DEADLINE_EXCEEDED), JSON.stringify(answer.headers));
    } finally {
      release();
      store.ping = ping;
      session.close();
    }
    await waitFor(async () => (await Promise.all(kinds.map(counted))).every((n, i) => n === before[i]! + 1));
  });

  test('Watch streams count against REGISTRY_MAX_STREAMS_PER_CLIENT (16 here), as every other stream: the next is RESOURCE_EXHAUSTED (TOO_MANY_STREAMS), Check still answers, an ended Watch frees its place', async () => {
    // They were not counted: one client could hold 100 per connection, on every connection it could open.
    const address = '10.9.0.1';
    /** Whether `w` was admitted (sent a status) or refused (ended). */
    const admitted = async (w: HealthWatch): Promise<boolean> => {
      let timer: NodeJS.Timeout | undefined;
      try {
        return await new Promise<boolean>((resolve) => {
          timer = setInterval(() => w.statuses.length > 0 && resolve(true), 10);
          void w.ended.then(() => resolve(false));
        });
      } finally {
        clearInterval(timer);
      }
    };
    const open = Array.from({ length: 16 }, () => healthWatch(grpcAddress(registry), '', from(address)));
    try {
      await waitFor(async () => open.every((w) => w.statuses.length === 1));
      const refused = healthWatch(grpcAddress(registry), '', metadata({ 'x-forwarded-for': address, 'x-request-id': 'refused-health-watch' }));
      open.push(refused); // cancelled at the end, if it was admitted
      assert.equal(await admitted(refused), false, 'the 17th Watch is refused, not sent a status');
      const { error } = await refused.ended;
      assert.equal(error?.code, grpc.status.RESOURCE_EXHAUSTED);
      assert.equal(errorInfoOf(error!)?.reason, 'TOO_MANY_STREAMS');
      assert.match(error!.details, /^This address already has 16 open streams; the limit is 16 per client address \(REGISTRY_MAX_STREAMS_PER_CLIENT\)/);
      assert.deepEqual(refused.statuses, []);
      await waitFor(async () => (await metricValue(registry.url, 'registry_requests_total', 'method="/grpc.health.v1.Health/Watch",operation="none",outcome="REFUSED",code="TOO_MANY_STREAMS",door="grpc"')) === 1);
      // In the request log, as any refused call: it was not.
      const { durationMs, ...line } = await requestLine('refused-health-watch');
      assert.equal(typeof durationMs, 'number');
      assert.deepEqual(
        Object.fromEntries(['requestId', 'grpc', 'status', 'method', 'errorCode', 'msg'].map((key) => [key, line[key]])),
        { requestId: 'refused-health-watch', grpc: '/grpc.health.v1.Health/Watch', status: 'RESOURCE_EXHAUSTED', method: 'Watch', errorCode: 'TOO_MANY_STREAMS', msg: 'request' },
      );
      assert.equal((await healthCheck(grpcAddress(registry), '')).status, 'SERVING', 'a Check is no stream');
      open.shift()!.cancel();
      // Admitted once the cancel has reached the server.
      await waitFor(async () => {
        const again = healthWatch(grpcAddress(registry), '', from(address));
        open.push(again);
        return admitted(again);
      });
    } finally {
      for (const w of open) w.cancel();
    }
  });
});

test('shutdown does not wait for a call whose request has not arrived: it is ended UNAVAILABLE (SHUTTING_DOWN), to be sent again', { timeout: 15_000 }, async () => {
  const closing = await startTestRegistry({ GRPC_PORT: '0' });
  const session = http2.connect(`http://${grpcAddress(closing)}`);
  try {
    const stalled = rawGrpcCall(session, '/lf.a2a.v1.A2AService/SendMessage', undefined, { end: false });
    await new Promise((resolve) => setTimeout(resolve, 200)); // the call has reached the server
    const started = Date.now();
    await closing.close();
    assert.ok(Date.now() - started < 3000, `close took ${Date.now() - started} ms (the grace is 5 s)`);
    const answer = await stalled;
    assert.equal(answer.headers['grpc-status'], String(grpc.status.UNAVAILABLE), JSON.stringify(answer.headers));
    assert.equal(errorInfoOfHeaders(answer.headers)?.reason, 'SHUTTING_DOWN');
    assert.equal(answer.headers['retry-after'], '5');
  } finally {
    session.destroy();
    await closing.close();
    fs.rmSync(closing.dataDir, { recursive: true, force: true });
  }
});

test('graceful shutdown: health says NOT_SERVING at once, as /readyz (it said SERVING while the watches closed), a gRPC stream in flight finishes, new calls are refused, then close resolves; a watch stream ends UNAVAILABLE (SHUTTING_DOWN), to be resumed (it ended OK, as if complete)', async () => {
  const closing = await startTestRegistry({ GRPC_PORT: '0', LOG_LEVEL: 'info' }, undefined, logged.stream);
  const client = new RawA2AClient(grpcAddress(closing));
  const gets = holdGets(closing.store);
  let letWatchesClose = () => {};
  try {
    // A watch's own stream and a SubscribeToTask of it: the shutdown ends both, the watch runs on.
    const alice = () => metadata({ authorization: `Bearer ${TOKENS.alice}`, 'x-request-id': `shutdown-watch-${crypto.randomUUID()}` });
    const watchMetadata = alice();
    const watch = client.stream('sendStreamingMessage', sendRequest([dataPart({ watch: { query: 'grpcshutdownwatch', initial: false } })]), watchMetadata);
    await waitFor(async () => watch.events.length > 0);
    const subscribeMetadata = alice();
    const subscribed = client.stream('subscribeToTask', { tenant: '', id: watch.events[0]!.task.id }, subscribeMetadata);
    await waitFor(async () => subscribed.events.length > 0);
    const held = client.stream('sendStreamingMessage', sendRequest([dataPart({ get: { id: 'in-flight' } })]));
    await waitFor(async () => (await metricValue(closing.url, 'registry_open_streams', '')) === 3);
    // Shutdown's first step, the watches closing (up to a second), held: health says NOT_SERVING
    // from the moment shutdown begins, as /readyz answers 503 (it said SERVING until the gRPC server closed).
    const watches = closing.core.watches;
    const closeWatches = watches.close.bind(watches);
    const watchesHeld = new Promise<void>((resolve) => (letWatchesClose = resolve));
    watches.close = async () => {
      await watchesHeld;
      return closeWatches();
    };
    const healthWatched = healthWatch(grpcAddress(closing), '');
    await waitFor(async () => healthWatched.statuses.length === 1);
    let closed = false;
    const close = closing.close().then(() => (closed = true));
    assert.equal((await fetch(`${closing.url}/readyz`)).status, 503);
    assert.equal((await healthCheck(grpcAddress(closing), '')).status, 'NOT_SERVING', 'health as /readyz while the watches close');
    letWatchesClose();
    for (const [ended, sent] of [[await watch, watchMetadata], [await subscribed, subscribeMetadata]] as const) {
      assert.equal(ended.error?.code, grpc.status.UNAVAILABLE, JSON.stringify(ended.error?.details));
      assert.match(ended.error!.details, /^The registry is shutting down; the watch runs on .*: resume it with SubscribeToTask/);
      assert.deepEqual([errorInfoOf(ended.error!)?.reason, errorInfoOf(ended.error!)?.metadata.retryAfterSeconds, retryInfoOf(ended.error!)], ['SHUTTING_DOWN', '5', 5]);
      const line = await requestLine(String(sent.get('x-request-id')[0]));
      assert.deepEqual([line.status, line.errorCode], ['UNAVAILABLE', 'SHUTTING_DOWN']);
    }
    // Once shutdown has begun the gRPC server takes no new calls...
    await waitFor(async () => (await healthCheck(grpcAddress(closing), '')).error !== undefined);
    // ...and a health Watch, told NOT_SERVING, is ended (it never ends by itself: the close waited out its grace).
    assert.deepEqual(await healthWatched.ended, {});
    assert.deepEqual(healthWatched.statuses, ['SERVING', 'NOT_SERVING']);
    const late = await client.send(search('weather'));
    assert.equal(late.error?.code, grpc.status.UNAVAILABLE);
    // ...and waits for the one in flight, which ends complete, not cut.
    assert.equal(closed, false, 'close waits for the stream in flight');
    gets.release();
    const finished = await held;
    assert.equal(finished.error, undefined);
    assert.ok(finished.events[0]!.task);
    assert.equal(finished.events.at(-1)!.statusUpdate.status.state, 'TASK_STATE_REJECTED'); // NOT_FOUND: a complete answer
    await close;
  } finally {
    letWatchesClose();
    gets.restore();
    client.close();
    await closing.close();
    fs.rmSync(closing.dataDir, { recursive: true, force: true });
  }
});
