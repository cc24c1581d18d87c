/**
 * Tasks are private (issue 12, point 1): a caller lists and reads only its own tasks; another
 * principal's task answers as an unknown one on GetTask, CancelTask and SubscribeToTask; an
 * anonymous caller's tasks are reachable by no later request, and an anonymous ListTasks is
 * empty; a mistyped token is refused at the door (401) on every method, so it makes no task.
 * And bounded (point 2, end to end): reads and refused requests leave nothing in the database;
 * accepted writes are durable, survive a restart, and are listed together with the tasks held
 * in memory. On SQLite and on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { ListTasksRequest, Message, Task, TaskState } from '@a2a-js/sdk';
import { STATE_HEADERS_KEY } from '@a2a-js/sdk/server';
import type { Client } from '@a2a-js/sdk/client';
import { mcpServer, toolspec, v1Card } from './support/documents.js';
import { BINDINGS, dataPart, errorOf, message, op, resultOf, sdkClient, stateOf, type WireJson } from './support/client.js';
import { storageEngines } from './support/engines.js';
import { rawPost } from './support/raw-http.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';
import { EventLog } from './support/watch-stream.js';
import { callTool, connectMcp, structured } from './support/mcp-client.js';
import { untenantedContextBuilder } from '../src/protocol/call-context.js';

const MISTYPED = `${TOKENS.alice.slice(0, -1)}X`;

const list = async (client: Client, request: Record<string, unknown> = {}) =>
  client.listTasks(ListTasksRequest.fromJSON({ pageSize: 100, ...request }));
const get = (client: Client, id: string) => client.getTask({ tenant: '', id, historyLength: undefined });
const ids = (tasks: Task[]) => tasks.map((t) => t.id);

/** Every row of the tasks table, straight from the database. */
async function storedTasks(registry: TestRegistry, databaseUrl: string | undefined): Promise<{ owner: string; id: string }[]> {
  if (databaseUrl) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      return (await client.query<{ owner: string; id: string }>('SELECT owner, id FROM tasks')).rows;
    } finally {
      await client.end();
    }
  }
  const db = new Database(`${registry.dataDir}/registry.db`, { readonly: true });
  try {
    return db.prepare('SELECT owner, id FROM tasks').all() as { owner: string; id: string }[];
  } finally {
    db.close();
  }
}

async function rest(registry: TestRegistry, path: string, token?: string) {
  const res = await fetch(`${registry.url}/a2a/rest${path}`, { headers: { 'A2A-Version': '1.0', ...(token ? { authorization: `Bearer ${token}` } : {}) } });
  return { status: res.status, body: (await res.json()) as WireJson };
}

for (const engine of storageEngines()) {
  describe(`tasks are private and bounded (${engine.name})`, () => {
    test('callers see only their own tasks; anonymous tasks are reachable by no one', async (t) => {
      const skip = engine.skip();
      if (skip) return t.skip(skip);
      const env = await engine.env();
      const registry = await startTestRegistry(env);
      t.after(() => registry.close());
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      const bob = await sdkClient(registry.url, { token: TOKENS.bob });
      const anonymousA = await sdkClient(registry.url);
      const anonymousB = await sdkClient(registry.url);
      const mistyped = await sdkClient(registry.url, { token: MISTYPED });

      const registered = await op(alice, { register: { agentCard: v1Card('Private Agent', 'https://private.example.org/a2a') } });
      const aliceSearch = await op(alice, { search: { query: 'invoice' } });
      const bobSearch = await op(bob, { search: { query: 'invoice' } });
      const anonymousSearch = await op(anonymousA, { search: { query: 'invoice' } });
      const anonymousList = await op(anonymousB, { list: {} });
      // A card sent with a mistyped token is refused at the door (HTTP 401): no task is made at all.
      await assert.rejects(
        op(mistyped, { register: { agentCard: v1Card('Secret Agent', 'https://secret.example.org/a2a') } }),
        /token is not recognised/,
      );
      // A card sent anonymously: refused as a task, which (with the card) must stay private.
      const refused = await op(anonymousA, { register: { agentCard: v1Card('Secret Agent', 'https://secret.example.org/a2a') } });
      assert.equal(errorOf(refused).code, 'UNAUTHENTICATED');
      for (const task of [registered, aliceSearch, bobSearch, anonymousSearch, anonymousList]) assert.equal(stateOf(task), 'TASK_STATE_COMPLETED');

      // ListTasks: alice sees her write and her read, bob his read; anonymous callers see nothing.
      const aliceTasks = await list(alice);
      assert.deepEqual(new Set(ids(aliceTasks.tasks)), new Set([registered.id, aliceSearch.id]));
      assert.equal(aliceTasks.totalSize, 2);
      assert.deepEqual(ids((await list(bob)).tasks), [bobSearch.id]);
      await assert.rejects(list(mistyped), /token is not recognised/);
      for (const client of [anonymousA, anonymousB]) {
        const seen = await list(client);
        assert.deepEqual(seen.tasks, [], 'an anonymous ListTasks lists nothing');
        assert.equal(seen.totalSize, 0);
      }

      // GetTask: own tasks yes; another principal's, or any anonymous one (even one's own), no.
      assert.equal((await get(alice, registered.id)).id, registered.id);
      assert.equal((await get(alice, aliceSearch.id)).id, aliceSearch.id);
      for (const [client, id] of [
        [bob, registered.id],
        [bob, aliceSearch.id],
        [alice, bobSearch.id],
        [anonymousB, anonymousSearch.id],
        [anonymousA, anonymousSearch.id],
        [anonymousA, refused.id],
        [anonymousB, refused.id],
        [alice, refused.id],
        [anonymousA, registered.id],
      ] as const) {
        await assert.rejects(get(client, id), /not found/i, `GetTask ${id} is unknown to this caller`);
      }
      await assert.rejects(get(mistyped, registered.id), /token is not recognised/);

      // CancelTask and SubscribeToTask on another's task: unknown, exactly as for an id that never existed.
      const unknownId = crypto.randomUUID();
      for (const id of [registered.id, unknownId]) {
        await assert.rejects(bob.cancelTask({ tenant: '', id, metadata: undefined }), /not found/i);
        await assert.rejects(async () => {
          for await (const _ of bob.resubscribeTask({ tenant: '', id })) break;
        }, /not found/i);
      }
      // The owner's own finished task: not cancelable (it exists for her).
      await assert.rejects(alice.cancelTask({ tenant: '', id: registered.id, metadata: undefined }), /cancel/i);

      // The HTTP+JSON binding says the same.
      assert.deepEqual((await rest(registry, '/tasks')).body.tasks ?? [], []);
      assert.equal((await rest(registry, '/tasks', MISTYPED)).status, 401);
      assert.equal((await rest(registry, `/tasks/${aliceSearch.id}`, TOKENS.bob)).status, 404);
      assert.equal((await rest(registry, `/tasks/${aliceSearch.id}`, TOKENS.alice)).status, 200);
      assert.equal((await rest(registry, `/tasks/${anonymousSearch.id}`)).status, 404);
      assert.deepEqual(new Set((await rest(registry, '/tasks', TOKENS.alice)).body.tasks.map((x: WireJson) => x.id)), new Set([registered.id, aliceSearch.id]));

      // Only the accepted write reached the database.
      const rows = await storedTasks(registry, env.DATABASE_URL);
      assert.deepEqual(rows, [{ owner: 'alice', id: registered.id }]);
    });

    test('ListTasks pages through memory and durable tasks together, newest first, filtered', async (t) => {
      const skip = engine.skip();
      if (skip) return t.skip(skip);
      const registry = await startTestRegistry(await engine.env());
      t.after(() => registry.close());
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      const made: WireJson[] = [];
      for (let i = 0; i < 7; i++) {
        made.push(
          i % 3 === 0
            ? await op(alice, { register: { agentCard: v1Card(`Paged ${i}`, `https://paged-${i}.example.org/a2a`) } })
            : await op(alice, { search: { query: `paged ${i}` } }),
        );
        // Distinct status timestamps, so "newest first" is one order.
        await new Promise((r) => setTimeout(r, 3));
      }
      made.push(await op(alice, { register: { agentCard: { name: 'broken' } } })); // refused: memory
      const expected = made.map((task) => task.id).reverse();
      const seen: string[] = [];
      let pageToken = '';
      do {
        const page = await list(alice, { pageSize: 3, pageToken });
        assert.ok(page.tasks.length <= 3);
        assert.equal(page.totalSize, 8);
        assert.ok(page.tasks.every((task) => task.artifacts.length === 0), 'artifacts only when asked for');
        seen.push(...ids(page.tasks));
        pageToken = page.nextPageToken;
      } while (pageToken);
      assert.deepEqual(seen, expected);
      const completed = await list(alice, { status: 'TASK_STATE_COMPLETED', includeArtifacts: true });
      assert.equal(completed.totalSize, 7);
      assert.ok(completed.tasks.every((task) => task.artifacts.length === 1));
      const rejected = await list(alice, { status: 'TASK_STATE_REJECTED' });
      assert.deepEqual(ids(rejected.tasks), [made[7]!.id]);
      await assert.rejects(list(alice, { pageToken: 'bm90IGEgdG9rZW4' }), /page token/i);
    });

    test('accepted writes stay durable across a restart; reads and refusals do not reach the database', async (t) => {
      const skip = engine.skip();
      if (skip) return t.skip(skip);
      const env = await engine.env();
      const first = await startTestRegistry(env);
      let closed = false;
      t.after(() => (closed ? undefined : first.close()));
      const alice = await sdkClient(first.url, { token: TOKENS.alice });
      const registered = await op(alice, { register: { agentCard: v1Card('Durable Agent', 'https://durable-task.example.org/a2a') } });
      const removed = await op(alice, { unregister: { id: resultOf(registered).id } });
      const read = await op(alice, { search: { query: 'durable' } });
      const validated = await op(alice, { validate: { agentCard: v1Card() } });
      const refusedWrite = await op(alice, { unregister: { id: crypto.randomUUID() } });
      assert.equal(stateOf(refusedWrite), 'TASK_STATE_REJECTED');
      const rows = await storedTasks(first, env.DATABASE_URL);
      assert.deepEqual(new Set(rows.map((r) => r.id)), new Set([registered.id, removed.id]));
      await first.close();
      closed = true;

      const second = await startTestRegistry({ ...env, REGISTRY_DATA_DIR: first.dataDir });
      t.after(() => second.close());
      const again = await sdkClient(second.url, { token: TOKENS.alice });
      const reloaded = Task.toJSON(await get(again, registered.id)) as WireJson;
      assert.equal(reloaded.artifacts[0].name, 'registration');
      assert.equal(resultOf(reloaded).id, resultOf(registered).id);
      assert.equal((await get(again, removed.id)).id, removed.id);
      for (const id of [read.id, validated.id, refusedWrite.id]) await assert.rejects(get(again, id), /not found/i, 'memory tasks are gone after a restart');
      assert.deepEqual(new Set(ids((await list(again)).tasks)), new Set([registered.id, removed.id]));
    });

    test('a client\'s own context id, up to 1,024 characters, is stored with every write and found again by GetTask and ListTasks', async (t) => {
      const skip = engine.skip();
      if (skip) return t.skip(skip);
      const env = await engine.env();
      const registry = await startTestRegistry(env);
      t.after(() => registry.close());
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      const inContext = async (contextId: string, data: unknown): Promise<WireJson> =>
        Task.toJSON((await alice.sendMessage({ tenant: '', message: Message.fromJSON({ messageId: crypto.randomUUID(), role: 'ROLE_USER', contextId, parts: [dataPart(data)] }), configuration: undefined, metadata: undefined })) as Task) as WireJson;
      // PostgreSQL stored context ids of 36 characters at most (the SDK's varchar(36)): every write
      // of a longer one failed INTERNAL. 1,024 CJK characters take 3 KB in UTF-8, past what one
      // btree index entry holds (2,704 bytes).
      const contexts = [`session-${'s'.repeat(292)}`, Array.from({ length: 1024 }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 7919) % 20_000))).join('')];
      for (const [n, contextId] of contexts.entries()) {
        const registered = await inContext(contextId, { register: { agentCard: v1Card(`Context Agent ${n}`, `https://context-${n}.example.org/a2a`) } });
        assert.equal(stateOf(registered), 'TASK_STATE_COMPLETED', JSON.stringify(registered.status));
        const removed = await inContext(contextId, { unregister: { id: resultOf(registered).id } });
        assert.equal(stateOf(removed), 'TASK_STATE_COMPLETED', JSON.stringify(removed.status));
        for (const task of [registered, removed]) {
          assert.equal(task.contextId, contextId);
          assert.equal((await get(alice, task.id)).contextId, contextId, 'GetTask reads it back');
        }
        const listed = await list(alice, { contextId });
        assert.deepEqual(ids(listed.tasks), [removed.id, registered.id], 'ListTasks by that context, newest first');
        assert.ok(listed.tasks.every((task) => task.contextId === contextId));
        assert.deepEqual((await rest(registry, `/tasks?contextId=${encodeURIComponent(contextId)}`, TOKENS.alice)).body.tasks.map((x: WireJson) => x.id), [removed.id, registered.id]);
        // A watch over SendStreamingMessage keeps its task durably too.
        const watched = new EventLog((signal) =>
          alice.sendMessageStream({ tenant: '', message: Message.fromJSON({ messageId: crypto.randomUUID(), role: 'ROLE_USER', contextId, parts: [dataPart({ watch: { query: `context ${n}`, initial: false } })] }), configuration: undefined, metadata: undefined }, { signal }),
        );
        t.after(() => watched.disconnect());
        const task = (await watched.waitFor((e) => e.task !== undefined || e.statusUpdate !== undefined, 'the watch task')).task as WireJson;
        assert.equal(task?.status?.state, 'TASK_STATE_WORKING', JSON.stringify(watched.events));
        assert.equal(task.contextId, contextId);
        assert.equal((await alice.cancelTask({ tenant: '', id: task.id, metadata: undefined })).status?.state, TaskState.TASK_STATE_CANCELED);
        assert.deepEqual(ids((await list(alice, { contextId })).tasks), [task.id, removed.id, registered.id]);
      }
      const rows = await storedTasks(registry, env.DATABASE_URL);
      assert.equal(rows.length, 6, 'two writes and a watch per context, durable');
    });

    test('an id or filter holding U+0000 is an unknown one on every door (PostgreSQL\'s text cannot hold it)', async (t) => {
      const skip = engine.skip();
      if (skip) return t.skip(skip);
      const registry = await startTestRegistry(await engine.env());
      t.after(() => registry.close());
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      // Something to find, so that nothing found means the value matched nothing.
      const registered = await op(alice, { register: { agentCard: v1Card('Nul Agent', 'https://nul.example.org/a2a') } });
      assert.equal(stateOf(registered), 'TASK_STATE_COMPLETED');
      const nul = 'a\u0000b';
      const jsonRpc = async (method: string, params: unknown): Promise<WireJson> => {
        const answer = await rawPost(`${registry.url}/a2a/jsonrpc`, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), { headers: { authorization: `Bearer ${TOKENS.alice}` } });
        assert.equal(answer.status, 200, answer.text);
        return answer.json!;
      };
      for (const [method, params] of [
        ['GetTask', { id: nul }],
        ['CancelTask', { id: nul }],
        ['ListTaskPushNotificationConfigs', { taskId: nul }],
        ['GetTaskPushNotificationConfig', { taskId: nul, id: nul }],
      ] as const) {
        const error = (await jsonRpc(method, params)).error;
        assert.equal(error?.code, -32001, `${method}: ${JSON.stringify(error)}`);
        assert.match(error.message, /Task not found/);
      }
      // A message continuing it never reaches storage: a client's id is printable text.
      const continued = (await jsonRpc('SendMessage', { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', taskId: nul, parts: [dataPart({ search: { query: 'x' } })] } })).error;
      assert.equal(continued?.code, -32602, `a message continuing it: ${JSON.stringify(continued)}`);
      assert.match(continued.message, /message\.taskId holds the control character U\+0000/);
      assert.deepEqual((await jsonRpc('ListTasks', { contextId: nul })).result, { tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 });
      // A page token whose position holds one was never issued (task ids hold none).
      const forged = Buffer.from(`v1.${Date.now()}.${nul}`).toString('base64url');
      assert.equal((await jsonRpc('ListTasks', { pageToken: forged })).error?.code, -32602);
      assert.equal((await rest(registry, '/tasks/a%00b', TOKENS.alice)).status, 404);
      const subscribed = await fetch(`${registry.url}/a2a/rest/tasks/a%00b:subscribe`, { method: 'POST', headers: { 'A2A-Version': '1.0', authorization: `Bearer ${TOKENS.alice}` } });
      assert.equal(subscribed.status, 404, await subscribed.text());
      const listed = await rest(registry, '/tasks?contextId=a%00b', TOKENS.alice);
      assert.equal(listed.status, 200);
      assert.deepEqual(listed.body.tasks ?? [], []);
      // An owner filter: nobody's entries.
      const owned = await op(alice, { list: { filter: { owner: nul } } });
      assert.deepEqual(resultOf(owned).entries, []);
      const mcp = await connectMcp(registry.url, 'nul-test', TOKENS.alice);
      t.after(() => mcp.close());
      assert.deepEqual(structured(await callTool(mcp, 'list_agents', { owner: nul })).entries, []);
      assert.equal(structured(await callTool(mcp, 'list_agents', { owner: 'alice' })).entries.length, 1);

      // A document holding one anywhere, a member's name included, is refused at validation on
      // both engines, at its path: SQLite would store it, PostgreSQL's text could not.
      const withExtension = (params: WireJson) => {
        const card = v1Card('Nul Params Agent', 'https://nul-params.example.org/a2a') as WireJson;
        card.capabilities.extensions = [{ uri: 'https://ext.example.org/nul', params }];
        return card;
      };
      const nulTool = toolspec() as WireJson;
      nulTool.tools[0].inputSchema.properties = { q: { type: 'string', default: 'a\u0000b' } };
      for (const [what, document, path, said] of [
        ['a value', { agentCard: withExtension({ note: 'a\u0000b' }) }, '/capabilities/extensions/0/params/note', /^holds the character U\+0000 \(NUL\) at position 1$/],
        ['a member name', { agentCard: withExtension({ 'a\u0000b': 1 }) }, '/capabilities/extensions/0/params', /^the member name "a\\u0000b" holds the character U\+0000 \(NUL\) at position 1$/],
        ['a tool parameter\'s default', { mcpServer: mcpServer('nul-files', 'https://nul-files.example.org/mcp'), toolspec: nulTool }, '/toolspec/tools/0/inputSchema/properties/q/default', /^holds the character U\+0000/],
      ] as const) {
        for (const operation of ['validate', 'register']) {
          const error = errorOf(await op(alice, { [operation]: document }));
          assert.equal(error.code, 'VALIDATION_FAILED', `${what} (${operation}): ${JSON.stringify(error)}`);
          assert.deepEqual(error.details.map((d: WireJson) => [d.path, d.rule]), [[path, 'nul-character']], what);
          assert.match(error.details[0].message, said, what);
          assert.match(error.details[0].hint, /^Remove it: the registry stores no U\+0000/, what);
        }
      }
      assert.equal(resultOf(await op(alice, { list: { filter: { owner: 'alice' } } })).entries.length, 1, 'nothing registered');
    });
  });
}

describe('the tenant a request names', () => {
  // The registry is not multi-tenant (its card declares no tenant): a request's tenant scopes
  // nothing, so a task is its principal's whatever tenant a request names, on every binding.
  test('does not scope tasks: GetTask and ListTasks find the principal\'s tasks under any tenant or none, on every binding; another principal\'s stay unknown', async (t) => {
    const registry = await startTestRegistry({ GRPC_PORT: '0' });
    t.after(() => registry.close());
    const sendUnder = async (client: Client, tenant: string, data: unknown): Promise<WireJson> =>
      Task.toJSON((await client.sendMessage({ tenant, message: message([dataPart(data)]), configuration: undefined, metadata: undefined })) as Task) as WireJson;
    const made: string[] = [];
    for (const binding of BINDINGS) {
      const alice = await sdkClient(registry.url, { token: TOKENS.alice, binding });
      const bob = await sdkClient(registry.url, { token: TOKENS.bob, binding });
      // A durable task (an accepted write) and one in memory (a read), each sent under a tenant.
      const registered = await sendUnder(alice, 'acme', { register: { agentCard: v1Card(`Tenant ${binding}`, `https://tenant-${binding.toLowerCase().replace(/\W/g, '')}.example.org/a2a`) } });
      const searched = await sendUnder(alice, 'globex', { search: { query: 'tenant' } });
      assert.equal(stateOf(registered), 'TASK_STATE_COMPLETED');
      assert.equal(stateOf(searched), 'TASK_STATE_COMPLETED');
      made.push(registered.id, searched.id);
      for (const id of [registered.id, searched.id]) {
        for (const tenant of ['', 'acme', 'globex', 'initech']) {
          assert.equal((await alice.getTask({ tenant, id, historyLength: undefined })).id, id, `${binding}: GetTask ${id} under tenant "${tenant}"`);
          await assert.rejects(bob.getTask({ tenant, id, historyLength: undefined }), /not found/i, `${binding}: bob's GetTask ${id} under tenant "${tenant}"`);
        }
      }
      for (const tenant of ['', 'acme', 'initech']) {
        const listed = ids((await list(alice, { tenant })).tasks);
        assert.ok(made.every((id) => listed.includes(id)), `${binding}: ListTasks under tenant "${tenant}" lists every task of alice's`);
        assert.deepEqual(ids((await list(bob, { tenant })).tasks), [], `${binding}: bob's ListTasks under tenant "${tenant}"`);
      }
    }

    // HTTP+JSON, with and without the tenant segment in front of the path.
    const [registered, searched] = made;
    for (const path of [`/tasks/${registered}`, `/acme/tasks/${registered}`, `/globex/tasks/${registered}`, `/acme/tasks/${searched}`, `/tasks/${searched}`]) {
      assert.equal((await rest(registry, path, TOKENS.alice)).status, 200, `GET ${path}`);
      assert.equal((await rest(registry, path, TOKENS.bob)).status, 404, `bob's GET ${path}`);
    }
    for (const path of ['/tasks', '/acme/tasks', '/initech/tasks']) {
      assert.deepEqual(new Set((await rest(registry, path, TOKENS.alice)).body.tasks.map((x: WireJson) => x.id)), new Set(made), `GET ${path}`);
      assert.deepEqual((await rest(registry, path, TOKENS.bob)).body.tasks ?? [], [], `bob's GET ${path}`);
    }
    // Stored under no tenant.
    const rows = await storedTasks(registry, undefined);
    assert.equal(rows.length, BINDINGS.length);
    const db = new Database(`${registry.dataDir}/registry.db`, { readonly: true });
    try {
      assert.deepEqual(db.prepare('SELECT DISTINCT tenant FROM tasks').all(), [{ tenant: '' }]);
    } finally {
      db.close();
    }
  });

  test('does not scope a watch: started under a tenant, it is joined, renewed and ended under another or none', async (t) => {
    const registry = await startTestRegistry();
    t.after(() => registry.close());
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const bob = await sdkClient(registry.url, { token: TOKENS.bob });
    const started = new EventLog((signal) =>
      alice.sendMessageStream({ tenant: 'acme', message: message([dataPart({ watch: { query: 'tenant watch' } })]), configuration: undefined, metadata: undefined }, { signal }),
    );
    t.after(() => started.disconnect());
    const id: string = (await started.waitFor((e) => e.task !== undefined, 'the watch task')).task.id;
    const joined = new EventLog((signal) => alice.resubscribeTask({ tenant: '', id }, { signal }));
    t.after(() => joined.disconnect());
    assert.equal((await joined.waitFor((e) => e.task !== undefined, 'the joined task')).task.status.state, 'TASK_STATE_WORKING');
    const renewed = await alice.sendMessage({ tenant: 'globex', message: Message.fromJSON({ messageId: crypto.randomUUID(), role: 'ROLE_USER', taskId: id, parts: [dataPart({ renew: {} })] }), configuration: undefined, metadata: undefined });
    assert.equal((renewed as Task).id, id);
    await assert.rejects(bob.cancelTask({ tenant: 'acme', id, metadata: undefined }), /not found/i);
    assert.equal((await alice.cancelTask({ tenant: 'initech', id, metadata: undefined })).status?.state, TaskState.TASK_STATE_CANCELED);
    await joined.waitFor((e) => e.statusUpdate?.status?.state === 'TASK_STATE_CANCELED', 'the end, on the joined stream');
  });

  test('the call context every binding builds has no tenant, whatever the transport sets', () => {
    const context = untenantedContextBuilder({ extensions: undefined, user: undefined, headers: { 'x-test': '1' }, requestedVersion: '1.0', tenant: 'acme' });
    assert.equal(context.tenant, undefined);
    context.setTenant('globex'); // what the JSON-RPC transport does with the params' tenant
    assert.equal(context.tenant, undefined);
    assert.deepEqual(context.state.get(STATE_HEADERS_KEY), { 'x-test': '1' });
    assert.equal(context.requestedVersion, '1.0');
  });
});

describe('rate-limited requests', () => {
  test('leave no task in the database either', async (t) => {
    const registry = await startTestRegistry({ REGISTRY_RATE_READS_PER_MINUTE: '2' });
    t.after(() => registry.close());
    const bob = await sdkClient(registry.url, { token: TOKENS.bob });
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await op(bob, { search: { query: 'x' } }));
    assert.equal(answers.filter((a) => stateOf(a) === 'TASK_STATE_REJECTED' && errorOf(a).code === 'RATE_LIMITED').length, 3);
    assert.deepEqual(await storedTasks(registry, undefined), []);
    // A flood refused before parsing (HTTP 429) makes no task at all.
    const flood = await startTestRegistry({ REGISTRY_RATE_REQUESTS_PER_MINUTE: '1' });
    t.after(() => flood.close());
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } } });
    await rawPost(`${flood.url}/a2a/jsonrpc`, body);
    assert.equal((await rawPost(`${flood.url}/a2a/jsonrpc`, body)).status, 429);
    assert.deepEqual(await storedTasks(flood, undefined), []);
  });
});

describe('REGISTRY_PUBLIC_READ=false', () => {
  test('every door refuses anonymous callers with 401 (tasks, MCP tools, catalog), and serves a token', async (t) => {
    const registry = await startTestRegistry({ REGISTRY_PUBLIC_READ: 'false' });
    t.after(() => registry.close());
    const anonymous = (path: string, init: RequestInit = {}) =>
      fetch(`${registry.url}${path}`, { ...init, headers: { 'a2a-version': '1.0', ...(init.headers as Record<string, string>) } });
    const jsonRpc = (method: string, params: unknown) =>
      anonymous('/a2a/jsonrpc', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    for (const [method, params] of [
      ['ListTasks', {}],
      ['GetTask', { id: crypto.randomUUID() }],
      ['CancelTask', { id: crypto.randomUUID() }],
      ['SubscribeToTask', { id: crypto.randomUUID() }],
      ['SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ data: { search: { query: 'x' } } }] } }],
    ] as const) {
      assert.equal((await jsonRpc(method, params)).status, 401, `JSON-RPC ${method}`);
    }
    for (const path of ['/a2a/rest/tasks', `/a2a/rest/tasks/${crypto.randomUUID()}`]) assert.equal((await anonymous(path)).status, 401, `GET ${path}`);
    const mcp = await anonymous('/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(mcp.status, 401, 'MCP');
    assert.equal((await anonymous('/.well-known/ai-catalog.json')).status, 401, 'AI Catalog');

    // A token opens every door, and its tasks are its own.
    const alice = await sdkClient(registry.url, { token: TOKENS.alice });
    const search = await op(alice, { search: { query: 'x' } });
    assert.deepEqual(ids((await list(alice)).tasks), [search.id]);
  });
});
