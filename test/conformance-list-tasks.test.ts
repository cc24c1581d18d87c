/**
 * ListTasks filters as the A2A proto defines them (ListTasksRequest), over JSON-RPC and HTTP+JSON
 * (and gRPC where its encoding differs) against a real registry on 127.0.0.1 with its SQLite
 * file: tasks held in memory (a search's) and durable ones (a registration's, read back from
 * SQLite) alike.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import { ListTasksResponse } from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { dataPart, type WireJson } from './support/client.js';
import { v1Card } from './support/documents.js';
import { errorInfoOf, metadata } from './support/grpc.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';

let registry: TestRegistry;
const alice = { authorization: `Bearer ${TOKENS.alice}` };

async function rpc(method: string, params: unknown, caller: Record<string, string> = alice): Promise<WireJson> {
  const res = await fetch(`${registry.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...caller },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
  });
  assert.equal(res.status, 200);
  return (await res.json()) as WireJson;
}

async function restList(query: Record<string, string>): Promise<{ status: number; body: WireJson }> {
  const res = await fetch(`${registry.url}/a2a/rest/tasks?${new URLSearchParams(query)}`, { headers: { 'A2A-Version': '1.0', ...alice } });
  return { status: res.status, body: (await res.json()) as WireJson };
}

const userMessage = (parts: WireJson[]) => ({ messageId: crypto.randomUUID(), role: 'ROLE_USER', parts });
const idsOf = (tasks: WireJson[]): string[] => tasks.map((t) => t.id as string);

/** A search's task (held in memory) and a registration's (durable: SQLite), a few milliseconds apart. */
let searched: WireJson;
let registered: WireJson;

before(async () => {
  registry = await startTestRegistry({ GRPC_PORT: '0' });
  searched = (await rpc('SendMessage', { message: userMessage([{ text: 'weather' }]) })).result.task;
  await sleep(5);
  registered = (await rpc('SendMessage', { message: userMessage([dataPart({ register: { agentCard: v1Card() } })]) })).result.task;
  assert.equal(registered.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(registered.status).slice(0, 300));
  assert.ok(registered.status.timestamp > searched.status.timestamp, 'the two tasks have different status timestamps');
});
after(() => registry.close());

describe('ListTasks statusTimestampAfter', () => {
  test('is inclusive: a task whose status timestamp equals it is listed (memory and SQLite), on JSON-RPC and HTTP+JSON', async () => {
    // ListTasksRequest.status_timestamp_after: "Only tasks with a status timestamp time greater
    // than or equal to this value will be returned." A client polling with the timestamp of the
    // last task it saw must not lose the tasks updated in that same millisecond.
    for (const task of [searched, registered]) {
      const viaRpc = await rpc('ListTasks', { statusTimestampAfter: task.status.timestamp });
      assert.ok(idsOf(viaRpc.result.tasks).includes(task.id), `JSON-RPC, at ${task.status.timestamp}: ${JSON.stringify(idsOf(viaRpc.result.tasks))}`);
      const viaRest = await restList({ statusTimestampAfter: task.status.timestamp });
      assert.equal(viaRest.status, 200);
      assert.ok(idsOf(viaRest.body.tasks).includes(task.id), `HTTP+JSON, at ${task.status.timestamp}`);
    }
    // Later than the search, not later than the registration: only the registration, counted alike.
    const later = new Date(Date.parse(searched.status.timestamp) + 1).toISOString();
    const listed = await rpc('ListTasks', { statusTimestampAfter: later });
    assert.deepEqual(idsOf(listed.result.tasks), [registered.id]);
    assert.equal(listed.result.totalSize, 1);
  });

  test('finer than a millisecond (ProtoJSON writes 6 or 9 digits) is compared as given: a task of that millisecond but before the time is not listed', async () => {
    // Date.parse cuts ".123456Z" down to ".123Z": the task of millisecond .123 was listed for
    // a time half a millisecond after it.
    for (const task of [searched, registered]) {
      const at = task.status.timestamp as string;
      const micro = (digits: string) => at.replace(/Z$/, `${digits}Z`);
      const sameTime = await rpc('ListTasks', { statusTimestampAfter: micro('000000') });
      assert.ok(idsOf(sameTime.result.tasks).includes(task.id), `at ${micro('000000')}`);
      const justAfter = await rpc('ListTasks', { statusTimestampAfter: micro('500') });
      assert.ok(!idsOf(justAfter.result.tasks).includes(task.id), `JSON-RPC, after ${micro('500')}: ${JSON.stringify(idsOf(justAfter.result.tasks))}`);
      const viaRest = await restList({ statusTimestampAfter: micro('000001') });
      assert.ok(!idsOf(viaRest.body.tasks).includes(task.id), `HTTP+JSON, after ${micro('000001')}`);
    }
  });
});

/** A protobuf varint (int64 as its 64-bit two's complement). */
function varint(n: bigint): number[] {
  const bytes: number[] = [];
  let v = BigInt.asUintN(64, n);
  do {
    const low = Number(v & 0x7fn);
    v >>= 7n;
    bytes.push(v ? low | 0x80 : low);
  } while (v);
  return bytes;
}

/**
 * ListTasks over gRPC with status_timestamp_after (field 7) the google.protobuf.Timestamp
 * {seconds, nanos}, encoded by hand: the SDK's client encodes it from a Date, whole milliseconds
 * only. The answer's task ids, or the refusal.
 */
async function grpcListAfter(seconds: bigint, nanos: bigint): Promise<string[] | grpc.ServiceError> {
  const timestamp = [0x08, ...varint(seconds), 0x10, ...varint(nanos)];
  const request = Buffer.from([0x3a, timestamp.length, ...timestamp]);
  const listTasks = (A2AService as unknown as grpc.ServiceDefinition).listTasks as grpc.MethodDefinition<unknown, unknown>;
  const Client = grpc.makeGenericClientConstructor({ listTasks: { ...listTasks, requestSerialize: (bytes: Buffer) => bytes } }, 'A2AService');
  const client = new Client(`127.0.0.1:${registry.grpcUrl!.split(':').at(-1)}`, grpc.credentials.createInsecure()) as grpc.Client & Record<string, grpc.requestCallback<unknown> & ((...args: unknown[]) => void)>;
  try {
    return await new Promise((resolve) =>
      client.listTasks!(request, metadata(alice), (error: grpc.ServiceError | null, answer: unknown) =>
        resolve(error ?? idsOf((ListTasksResponse.toJSON(answer as ListTasksResponse) as WireJson).tasks ?? [])),
      ),
    );
  } finally {
    client.close();
  }
}

describe('ListTasks statusTimestampAfter over gRPC', () => {
  test('finer than a millisecond is compared as given, as on JSON-RPC; a Timestamp out of its range is refused', async () => {
    // The SDK's decoder read the Timestamp into a Date, keeping whole milliseconds: a time half
    // a millisecond (or a nanosecond) after the task's status listed it on gRPC alone.
    for (const task of [searched, registered]) {
      const ms = BigInt(Date.parse(task.status.timestamp));
      const [seconds, nanos] = [ms / 1000n, (ms % 1000n) * 1_000_000n];
      assert.ok(idsOf((await rpc('ListTasks', { statusTimestampAfter: task.status.timestamp.replace(/Z$/, '500Z') })).result.tasks).every((id) => id !== task.id));
      const atIt = await grpcListAfter(seconds, nanos);
      assert.ok(Array.isArray(atIt) && atIt.includes(task.id), `gRPC at ${task.status.timestamp}: ${String(atIt)}`);
      for (const later of [500_000n, 1n]) {
        const listed = await grpcListAfter(seconds, nanos + later);
        assert.ok(Array.isArray(listed), String(listed));
        assert.ok(!listed.includes(task.id), `gRPC ${later} ns after ${task.status.timestamp}: ${JSON.stringify(listed)}`);
      }
    }
    // nanos 2000000000 was read as two seconds later, -1 as a nanosecond earlier; a year past 9999 as "Invalid time value".
    for (const [seconds, nanos, words] of [
      [1_800_000_000n, 2_000_000_000n, /its nanos, 2000000000, are not within 0 to 999999999/],
      [1_800_000_000n, -1n, /its nanos, -1, are not within 0 to 999999999/],
      [253_402_300_800n, 0n, /its seconds, 253402300800, are not within the years 1 to 9999/],
    ] as const) {
      const refused = await grpcListAfter(seconds, nanos);
      assert.ok(!Array.isArray(refused), `${seconds}/${nanos} was answered`);
      assert.equal(refused.code, grpc.status.INVALID_ARGUMENT);
      assert.match(refused.details, words);
      assert.match(refused.details, /^The request message is not the protobuf message \/lf\.a2a\.v1\.A2AService\/ListTasks takes \(statusTimestampAfter is no google\.protobuf\.Timestamp/);
      assert.equal(errorInfoOf(refused)?.reason, 'PARSE_ERROR');
    }
  });
});

describe('ListTasks statusTimestampAfter values', () => {
  test('anything but an ISO 8601 date and time with its zone is invalid params naming the field, on JSON-RPC and HTTP+JSON', async () => {
    // Date.parse reads these as times in 2001, or in the server's own time zone: each filtered
    // silently by a time the client never meant.
    for (const value of ['5', '1', 'March 7', '2026-12-03', '2026-12-03T01:00:18', '2026-13-03T01:00:18Z', 'yesterday']) {
      const viaRpc = await rpc('ListTasks', { statusTimestampAfter: value });
      assert.equal(viaRpc.error?.code, -32602, `JSON-RPC ${value}: ${JSON.stringify(viaRpc).slice(0, 200)}`);
      assert.match(viaRpc.error.message, /^statusTimestampAfter must be a date and time in ISO 8601 \(RFC 3339\) with its time zone/);
      assert.equal(viaRpc.error.data?.[0]?.metadata?.field, 'statusTimestampAfter');
      const viaRest = await restList({ statusTimestampAfter: value });
      assert.equal(viaRest.status, 400, `HTTP+JSON ${value}`);
      assert.equal(viaRest.body.error?.status, 'INVALID_ARGUMENT');
      assert.match(viaRest.body.error.message, /^statusTimestampAfter must be/);
    }
    // A JSON number or boolean (the SDK made them the strings "5" and "true") too.
    for (const value of [5, true]) assert.equal((await rpc('ListTasks', { statusTimestampAfter: value })).error?.code, -32602, `JSON-RPC ${value}`);
    // Fractions of a second, a lower-case t and z, and an offset are RFC 3339 too, and filter by the instant they name.
    const at = searched.status.timestamp as string;
    const offset = new Date(Date.parse(at) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    for (const value of [at, at.replace('Z', '000Z'), at.toLowerCase(), offset]) {
      const listed = await rpc('ListTasks', { statusTimestampAfter: value });
      assert.ok(idsOf(listed.result?.tasks ?? []).includes(searched.id), `${value}: ${JSON.stringify(listed).slice(0, 200)}`);
    }
  });
});

describe('ListTasks without params', () => {
  test('over JSON-RPC lists every task of the caller, as params {} does (ListTasksRequest has no required field; JSON-RPC params may be omitted)', async () => {
    const res = await fetch(`${registry.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...alice },
      body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'ListTasks' }),
    });
    const answer = (await res.json()) as WireJson;
    assert.equal(answer.id, 8);
    assert.ok(answer.result, JSON.stringify(answer).slice(0, 300));
    assert.deepEqual(idsOf(answer.result.tasks), idsOf((await rpc('ListTasks', {})).result.tasks));
    assert.ok(idsOf(answer.result.tasks).includes(searched.id), 'the search task is listed');
  });
});

describe('ListTasks pageToken', () => {
  test('one that is no page token of the task list is invalid params naming the field, on JSON-RPC and HTTP+JSON', async () => {
    const viaRpc = await rpc('ListTasks', { pageToken: 'not-a-token' });
    assert.equal(viaRpc.error?.code, -32602, JSON.stringify(viaRpc).slice(0, 200));
    assert.match(viaRpc.error.message, /^pageToken is not a page token of this task list/);
    assert.deepEqual(viaRpc.error.data?.[0]?.metadata, { field: 'pageToken' });
    const viaRest = await restList({ pageToken: 'not-a-token' });
    assert.equal(viaRest.status, 400);
    assert.deepEqual(viaRest.body.error.details?.[0]?.metadata, { field: 'pageToken' });
    // Anonymous too (whose list is always empty): it was answered an empty page, as if the token were fine.
    const anonymous = await rpc('ListTasks', { pageToken: 'not-a-token' }, {});
    assert.equal(anonymous.error?.code, -32602, JSON.stringify(anonymous).slice(0, 200));
  });
});
