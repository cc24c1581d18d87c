/**
 * Scale-out: several registry processes on one PostgreSQL agree. A change committed through one
 * replica is searchable on the others within a second; a replica that was down catches up when
 * it starts; parallel registrations across replicas never make two entries; a replica survives
 * a database restart and says it is not ready meanwhile.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import pg from 'pg';
import type { Client } from '@a2a-js/sdk/client';
import { v1Card } from './support/documents.js';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/observability/logger.js';
import { startRegistry } from '../src/server.js';
import { createStore } from '../src/storage/create-store.js';
import { PostgresStore } from '../src/storage/postgres/store.js';
import { actor, entryWrite } from './support/store-fixtures.js';
import { errorOf, op, resultOf, sdkClient, stateOf, type WireJson } from './support/client.js';
import { usePostgres } from './support/postgres.js';
import { holdPoint } from './support/hold-point.js';
import { TOKENS, TOKENS_ENV, logCapture, spawnRegistry, startTestRegistry, tempDir, type ChildRegistry, type TestRegistry } from './support/registry.js';

let databaseUrl = '';
const replicas: ChildRegistry[] = [];
const inProcess: { close(): Promise<void> }[] = [];

const env = () => ({
  DATABASE_URL: databaseUrl,
  REGISTRY_DATA_DIR: tempDir(),
  REGISTRY_TOKENS: TOKENS_ENV,
  REGISTRY_PAGE_TOKEN_SECRET: 'replicas-share-this-secret-0123',
  LOG_LEVEL: 'warn',
});

async function startReplica(): Promise<ChildRegistry> {
  const replica = await spawnRegistry({ ...env(), LOG_LEVEL: 'info' });
  replicas.push(replica);
  return replica;
}

/** Polls until `check` holds; returns the milliseconds it took, or throws after `timeoutMs`. */
async function within(timeoutMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check()) return performance.now() - started;
    if (performance.now() - started > timeoutMs) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const finds = async (client: Client, query: string, id: string) =>
  resultOf(await op(client, { search: { query } })).results.some((h: WireJson) => h.id === id);

const postgres = usePostgres({
  async setUp(server) {
    databaseUrl = await server.createDatabase('replicas');
  },
  async tearDown() {
    await Promise.all(replicas.map((r) => r.stop().catch(() => undefined)));
    await Promise.all(inProcess.map((r) => r.close().catch(() => undefined)));
  },
});

describe('two replicas on one PostgreSQL', () => {
  let a: ChildRegistry;
  let b: ChildRegistry;
  let onA: Client;
  let onB: Client;

  before(async () => {
    if (postgres.skipReason) return;
    [a, b] = await Promise.all([startReplica(), startReplica()]);
    [onA, onB] = await Promise.all([sdkClient(a.url, { token: TOKENS.alice }), sdkClient(b.url, { token: TOKENS.alice })]);
  });

  test('register on A, search on B finds it within a second', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const { id } = resultOf(await op(onA, { register: { agentCard: v1Card('Okapi Planner', 'https://okapi.example.org/a2a') } }));
    const ms = await within(1000, () => finds(onB, 'okapi', id));
    t.diagnostic(`visible on B after ${ms.toFixed(0)} ms`);
  });

  test('update and unregister on B show on A', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const card = v1Card('Tapir Translator', 'https://tapir.example.org/a2a');
    const { id } = resultOf(await op(onB, { register: { agentCard: card } }));
    await within(1000, () => finds(onA, 'tapir', id));
    card.skills[0]!.name = 'Translate marmalade recipes';
    assert.equal(resultOf(await op(onB, { register: { agentCard: card } })).revision, 2);
    await within(1000, () => finds(onA, 'marmalade', id));
    resultOf(await op(onB, { unregister: { id } }));
    await within(1000, async () => !(await finds(onA, 'tapir', id)));
    assert.equal(errorOf(await op(onA, { get: { id } })).code, 'NOT_FOUND');
  });

  test('page tokens issued by one replica work on the other', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    for (let i = 0; i < 3; i++) await op(onA, { register: { agentCard: v1Card(`Pager ${i}`, `https://pager.example.org/${i}`) } });
    const first = resultOf(await op(onA, { list: { pageSize: 1 } }));
    assert.ok(first.nextPageToken);
    const second = resultOf(await op(onB, { list: { pageSize: 1, pageToken: first.nextPageToken } }));
    assert.notEqual(second.entries[0].id, first.entries[0].id);
  });

  test('100 parallel registrations of one agent spread over both replicas leave one entry', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const url = 'https://parallel.example.org/a2a';
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => {
        const card = v1Card('Parallel Pangolin', url);
        card.version = `2.0.${i}`;
        return op(i % 2 ? onA : onB, { register: { agentCard: card } }).then(resultOf);
      }),
    );
    assert.equal(new Set(results.map((r) => r.id)).size, 1);
    assert.equal(results.filter((r) => r.created).length, 1);
    const listed = resultOf(await op(onB, { list: { filter: { owner: 'alice' }, pageSize: 100 } })).entries;
    assert.equal(listed.filter((e: WireJson) => e.name === 'Parallel Pangolin').length, 1);
    assert.equal(resultOf(await op(onA, { get: { id: results[0].id } })).revision, 100);
  });

  test('one agent registered at once under several spellings of its URL, through both replicas, by its owner or an admin, is one entry', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const [adminA, adminB] = await Promise.all([sdkClient(a.url, { token: TOKENS.admin }), sdkClient(b.url, { token: TOKENS.admin })]);
    for (const [who, clients] of [['alice', [onA, onB]], ['admin', [adminA, adminB]], ['admin', [adminA, adminA]]] as const) {
      for (let round = 0; round < 3; round++) {
        const host = `spelt-${who}-${clients[1] === clients[0] ? 'one' : 'two'}-${round}.example.org`;
        // One URL, as the contract says: http for https, the other scheme's web port.
        const urls = [`https://${host}/a2a`, `http://${host}/a2a`, `http://${host}:443/a2a`, `https://${host}:80/a2a`];
        const results = await Promise.all(urls.map((url, i) => op(clients[i % 2]!, { register: { agentCard: v1Card('Spelt Sparrow', url) } }).then(resultOf)));
        assert.equal(new Set(results.map((r) => r.id)).size, 1, `${host}: one entry (${results.map((r) => r.id).join(', ')})`);
        assert.deepEqual(results.map((r) => r.created).sort(), [false, false, false, true]);
        assert.deepEqual(results.map((r) => r.revision).sort(), [1, 2, 3, 4]);
        const entry = resultOf(await op(onB, { get: { id: results[0].id } }));
        assert.equal(entry.owner, who);
      }
    }
  });

  test('a change made while B was stopped is searchable on B when it starts', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    await b.stop();
    const { id } = resultOf(await op(onA, { register: { agentCard: v1Card('Axolotl Archivist', 'https://axolotl.example.org/a2a') } }));
    b = await startReplica();
    onB = await sdkClient(b.url, { token: TOKENS.alice });
    assert.ok(await finds(onB, 'axolotl', id));
  });

  test("an entry row a replica cannot read (edited by hand, or written by a newer release) is left out of its index, logged with its id and why; the replica follows the changes after it and stays ready", async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const bad = resultOf(await op(onA, { register: { agentCard: v1Card('Garbled Gecko', 'https://garbled-gecko.example.org/a2a') } })).id as string;
    await within(1000, () => finds(onB, 'gecko', bad));
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const { rows } = await db.query('SELECT interfaces FROM entry_revisions r JOIN entries e ON e.id = r.entry_id AND r.revision = e.current_revision WHERE e.id = $1', [bad]);
    try {
      // Its interfaces column no longer JSON, and a change for it in the log, as a write would leave.
      await db.query("UPDATE entry_revisions r SET interfaces = '{not json' FROM entries e WHERE e.id = r.entry_id AND r.revision = e.current_revision AND e.id = $1", [bad]);
      await db.query("INSERT INTO changes (entry_id, op) VALUES ($1, 'upsert')", [bad]);
      const { id } = resultOf(await op(onA, { register: { agentCard: v1Card('Lucid Lemur', 'https://lucid-lemur.example.org/a2a') } }));
      // Before, the batch holding the bad row failed at every poll: B never applied a later change, and stayed not ready.
      await within(3000, () => finds(onB, 'lemur', id));
      assert.equal(await finds(onB, 'gecko', bad), false, 'the entry it cannot read is out of its index');
      assert.equal((await fetch(`${b.url}/readyz`)).status, 200);
      const logged = b.logs.filter((l) => l.entry === bad && /cannot be read/.test(String(l.msg)));
      assert.equal(logged.length, 1, `logged once: ${JSON.stringify(b.logs.slice(-5))}`);
      assert.match(String(logged[0]!.msg), /interfaces/);
    } finally {
      // Mended, and told to the replicas, for the tests after this one.
      await db.query('UPDATE entry_revisions r SET interfaces = $2 FROM entries e WHERE e.id = r.entry_id AND r.revision = e.current_revision AND e.id = $1', [bad, rows[0].interfaces]);
      await db.query("INSERT INTO changes (entry_id, op) VALUES ($1, 'upsert')", [bad]);
      await db.end();
    }
    await within(3000, () => finds(onB, 'gecko', bad));
  });

  test('a database error that quotes a row (a constraint, a trigger the registry does not know): the client is told INTERNAL without it, the log keeps what failed without the values', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    // What an operator's own rules on the tables (or a bug) make PostgreSQL refuse, each quoting
    // the card in another field: a unique key's detail (its values), a check's (the failing row),
    // a statement a function builds (internalQuery), JSON that fails to parse (where, and a
    // detail naming the token), a value that is no uuid and a statement that does not parse (the
    // message).
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    t.after(async () => {
      await db.query('DROP INDEX row_data_unique; ALTER TABLE entry_revisions DROP CONSTRAINT row_data_check; DROP TRIGGER row_data_trigger ON entry_revisions; DROP FUNCTION row_data_trigger()');
      await db.end();
    });
    await db.query(`
      CREATE UNIQUE INDEX row_data_unique ON entry_revisions (description) WHERE strpos(description, 'KeyRowSecret') > 0;
      ALTER TABLE entry_revisions ADD CONSTRAINT row_data_check CHECK (strpos(description, 'CheckRowSecret') = 0) NOT VALID;
      CREATE FUNCTION row_data_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF strpos(NEW.name, 'QueryRowSecret') > 0 THEN EXECUTE 'SELECT ' || quote_literal(NEW.name) || ' +* 1'; END IF;
        IF strpos(NEW.name, 'JsonRowSecret') > 0 THEN PERFORM NEW.name::jsonb; END IF;
        IF strpos(NEW.name, 'UuidRowSecret') > 0 THEN PERFORM NEW.name::uuid; END IF;
        IF strpos(NEW.name, 'SyntaxRowSecret') > 0 THEN EXECUTE 'SELECT ' || quote_literal(NEW.name) || ' ' || quote_literal(NEW.name); END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER row_data_trigger BEFORE INSERT ON entry_revisions FOR EACH ROW EXECUTE FUNCTION row_data_trigger();
    `);
    resultOf(await op(onA, { register: { agentCard: { ...v1Card('Keyed Agent', 'https://row-data-key.example.org/a2a'), description: 'KeyRowSecret' } } }));
    const logged = a.logs.length;
    const cards = [
      { ...v1Card('Keyed Again', 'https://row-data-key-again.example.org/a2a'), description: 'KeyRowSecret' },
      { ...v1Card('Checked Agent', 'https://row-data-check.example.org/a2a'), description: 'Holds CheckRowSecret' },
      v1Card('Agent QueryRowSecret', 'https://row-data-query.example.org/a2a'),
      v1Card('JsonRowSecret Agent', 'https://row-data-json.example.org/a2a'),
      v1Card('UuidRowSecret Agent', 'https://row-data-uuid.example.org/a2a'),
      v1Card('SyntaxRowSecret Agent', 'https://row-data-syntax.example.org/a2a'),
    ];
    for (const agentCard of cards) {
      const task = await op(onA, { register: { agentCard } });
      assert.equal(stateOf(task), 'TASK_STATE_FAILED');
      assert.equal(task.status.message.parts.find((p: WireJson) => p.data !== undefined).data.error.code, 'INTERNAL');
      assert.doesNotMatch(JSON.stringify(task.status), /RowSecret/, "the answer (its history holds the request) says nothing of the database's error");
    }
    let failures: WireJson[] = [];
    await within(5000, async () => (failures = a.logs.slice(logged).filter((l) => l.msg === 'operation failed')).length === cards.length);
    const [key, check, query, json, uuid, syntax] = failures.map((l) => l.err as WireJson);
    assert.doesNotMatch(JSON.stringify(a.logs.slice(logged)), /RowSecret/, 'no value of the card in the log');
    // What failed stays: the constraint, the key's shape, the function and line.
    assert.equal(key!.detail, 'Key (description)=(…) already exists.');
    assert.equal(check!.constraint, 'row_data_check');
    assert.equal(check!.detail, 'Failing row contains (…).');
    assert.equal(query!.internalQuery, '[withheld: it may quote stored data]');
    assert.equal(query!.where, 'PL/pgSQL function row_data_trigger() line 3 at EXECUTE');
    assert.equal(json!.detail, '[withheld: it may quote stored data]');
    // "JSON data, line 1: JsonRowSecret...", the statement the function ran, and where it ran it.
    assert.equal(json!.where, '[withheld: it may quote stored data]\n[withheld: it may quote stored data]\nPL/pgSQL function row_data_trigger() line 4 at PERFORM');
    // The message quotes a value it refused (the name as a uuid; the literal a built statement
    // stopped at): the kind of error and the type stay.
    assert.equal(uuid!.message, 'invalid input syntax for type uuid: "…"');
    assert.equal(syntax!.message, 'syntax error at or near "…"');
    assert.equal(syntax!.where, 'PL/pgSQL function row_data_trigger() line 6 at EXECUTE');
  });

  test('a connection of a replica terminated under a request (pg_terminate_backend): a read is answered from a fresh connection; a write is refused as retryable, saying nothing was written, and sent again makes one entry', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const { id } = resultOf(await op(onA, { register: { agentCard: v1Card('Dropped Dingo', 'https://dropped-dingo.example.org/a2a') } }));
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    t.after(() => db.end());
    const headers = { authorization: `Bearer ${TOKENS.alice}`, 'content-type': 'application/json', 'A2A-Version': '1.0' };
    const send = async (part: WireJson) => {
      const res = await fetch(`${a.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ data: part, mediaType: 'application/json' }] } } }),
      });
      return { retryAfter: res.headers.get('retry-after'), body: (await res.json()) as WireJson };
    };
    /** `request`, sent while this session holds the entries table: its statement waits, in flight on its connection, which is then terminated. */
    const underTermination = async <T>(request: () => Promise<T>): Promise<T> => {
      await db.query('BEGIN');
      await db.query('LOCK TABLE entries IN ACCESS EXCLUSIVE MODE');
      const answer = request();
      const waiting = "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'";
      await within(5000, async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n ${waiting}`)).rows[0]!.n > 0);
      await db.query(`SELECT pg_terminate_backend(pid) ${waiting}`);
      await db.query('ROLLBACK');
      return answer;
    };
    // A read is safe to run again: answered, not refused (before: STORAGE_UNAVAILABLE, "the database server cannot be reached").
    const read = await underTermination(() => send({ get: { id } }));
    assert.equal(read.body.result?.task?.status?.state, 'TASK_STATE_COMPLETED', JSON.stringify(read.body));
    // A write may not simply run again (it may have committed), but one whose connection was lost
    // before its COMMIT was rolled back, and says so. Before, it was "the database server cannot
    // be reached: the registry cannot store anything right now", and /readyz turned not ready.
    const written = await underTermination(() => send({ register: { agentCard: v1Card('Dropped Dodo', 'https://dropped-dodo.example.org/a2a') } }));
    assert.equal(written.body.error?.data?.[0]?.reason, 'STORAGE_UNAVAILABLE', JSON.stringify(written.body));
    assert.equal(written.retryAfter, '5');
    assert.match(written.body.error.message, /^The database connection was lost: the database server closed the connection this request ran on \(57P01: .*\); the write was rolled back, nothing was written: send the request again\.$/);
    assert.equal((await fetch(`${a.url}/readyz`)).status, 200, 'one lost connection is no fault of storage');
    const again = resultOf(await op(onA, { register: { agentCard: v1Card('Dropped Dodo', 'https://dropped-dodo.example.org/a2a') } }));
    assert.deepEqual([again.created, again.revision], [true, 1], 'the write sent again is the first');
  });

  test("every pooled connection busy (writes waiting for a row another session holds): /readyz answers at once and ready, it does not queue behind them and call storage unreachable", async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const { id } = resultOf(await op(onA, { register: { agentCard: v1Card('Crowded Crane', 'https://crowded-crane.example.org/a2a') } }));
    const holder = new pg.Client({ connectionString: databaseUrl });
    await holder.connect();
    t.after(() => holder.end());
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM entries WHERE id = $1 FOR UPDATE', [id]);
    // As many writes of that entry as the pool has connections (10): each waits for the row on one.
    const versions = Array.from({ length: 10 }, (_, i) => `2.0.${i}`);
    const writes = versions.map((version) => op(onA, { register: { agentCard: { ...v1Card('Crowded Crane', 'https://crowded-crane.example.org/a2a'), version } } }));
    const waiting = "FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'a2a-registry' AND wait_event_type = 'Lock'";
    // pg_stat_clear_snapshot: inside the holder's transaction the statistics are otherwise read once and kept.
    await within(5000, async () => (await holder.query<{ n: number }>(`SELECT pg_stat_clear_snapshot(), count(*)::int AS n ${waiting}`)).rows[0]!.n >= 10);
    // Before, the check's SELECT 1 waited in the pool's queue: 503 "postgres storage is unreachable"
    // after 3 s. Given 5 s (a loaded CI machine), that answer still comes first and fails the test.
    const answered = await Promise.race([
      fetch(`${a.url}/readyz`).then(async (res) => `${res.status} ${await res.text()}`),
      new Promise<string>((r) => setTimeout(() => r('no answer within 5 s'), 5000)),
    ]);
    await holder.query('ROLLBACK');
    assert.equal(answered, '200 {"status":"ready"}');
    // Nothing was refused: each write had its turn once the row was free.
    assert.deepEqual((await Promise.all(writes)).map(stateOf), versions.map(() => 'TASK_STATE_COMPLETED'));
  });

  test("a write on A waiting for a row another session holds does not hold back B's changes on A: they are searchable on A within a second", async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const { id } = resultOf(await op(onA, { register: { agentCard: v1Card('Stuck Stork', 'https://stuck-stork.example.org/a2a') } }));
    const holder = new pg.Client({ connectionString: databaseUrl });
    await holder.connect();
    t.after(() => holder.end());
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM entries WHERE id = $1 FOR UPDATE', [id]);
    let stuck: ReturnType<typeof op> | undefined;
    try {
      stuck = op(onA, { register: { agentCard: { ...v1Card('Stuck Stork', 'https://stuck-stork.example.org/a2a'), version: '2.0.0' } } });
      const waiting = "FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'a2a-registry' AND wait_event_type = 'Lock'";
      await within(5000, async () => (await holder.query<{ n: number }>(`SELECT pg_stat_clear_snapshot(), count(*)::int AS n ${waiting}`)).rows[0]!.n >= 1);
      const other = resultOf(await op(onB, { register: { agentCard: v1Card('Passing Plover', 'https://passing-plover.example.org/a2a') } }));
      // Before, A's follower waited for its writes in flight (up to 5 s) before applying any change.
      const ms = await within(1000, () => finds(onA, 'plover', other.id));
      t.diagnostic(`visible on A after ${ms.toFixed(0)} ms`);
    } finally {
      await holder.query('ROLLBACK');
    }
    assert.equal(stateOf(await stuck), 'TASK_STATE_COMPLETED');
  });

  test('a PostgreSQL restart: replicas report not ready, then recover; nothing acknowledged is lost', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    if (!postgres.server.controllable) return t.skip('TEST_DATABASE_URL server cannot be restarted');
    const acknowledged: string[] = [];
    for (let i = 0; i < 5; i++) acknowledged.push(resultOf(await op(onA, { register: { agentCard: v1Card(`Before ${i}`, `https://before.example.org/${i}`) } })).id);
    const failedBefore = [a, b].map((r) => r.logs.filter((l) => String(l.msg).startsWith('catching up with changes failed')).length);
    const linesBefore = [a, b].map((r) => r.logs.length);
    await postgres.server.halt();
    await within(5000, async () => (await fetch(`${a.url}/readyz`)).status === 503);
    const down = (await (await fetch(`${b.url}/readyz`)).json()) as WireJson;
    assert.equal(down.status, 'not ready');
    // A write while the database is down is refused, never acknowledged.
    const refused = await op(onA, { register: { agentCard: v1Card('During', 'https://during.example.org/a2a') } }).catch(() => undefined);
    if (refused) assert.notEqual(stateOf(refused), 'TASK_STATE_COMPLETED');
    // Down for a while longer: each replica's follower polls every 500 ms meanwhile, so with the
    // time to notice and to start again, three or more polls fail (a warning at each would be 3+).
    await new Promise((r) => setTimeout(r, 1500));
    await postgres.server.resume();
    await within(15_000, async () => (await fetch(`${a.url}/readyz`)).status === 200 && (await fetch(`${b.url}/readyz`)).status === 200);
    for (const [i, r] of [a, b].entries()) {
      // Said once per outage (it was logged at every poll: 120 warnings a minute per replica), and its end said too.
      const failed = r.logs.filter((l) => String(l.msg).startsWith('catching up with changes failed')).length - failedBefore[i]!;
      assert.ok(failed >= 1 && failed <= 2, `replica ${i} logged the failed catch-up ${failed} times`);
      await within(5000, async () => r.logs.some((l) => l.msg === 'caught up with changes again'));
      // The listeners' connections (changes, watch handovers) say why they are down once per reason,
      // not at each attempt to reconnect (the server shutting down, then refusing: 2 or 3 lines each).
      const reconnecting = r.logs.slice(linesBefore[i]).filter((l) => /; reconnecting$/.test(String(l.msg)));
      const said = reconnecting.map((l) => `${String(l.msg)}: ${typeof l.err === 'string' ? l.err : (l.err as { message?: string } | undefined)?.message}`);
      assert.ok(reconnecting.length > 0, `replica ${i} said its listeners were interrupted`);
      assert.deepEqual(said, [...new Set(said)], `replica ${i} said each reason once`);
    }
    for (const id of acknowledged) assert.equal(resultOf(await op(onB, { get: { id } })).id, id);
    const { id } = resultOf(await op(onA, { register: { agentCard: v1Card('After Restart Agent', 'https://after.example.org/a2a') } }));
    await within(1000, () => finds(onB, 'after restart', id));
    assert.equal(a.child.exitCode, null, 'replica A is still running');
    assert.equal(b.child.exitCode, null, 'replica B is still running');
  });
});

describe('a database replaced under a running replica', () => {
  test('a change log that went backwards (the data replaced, as a restore or migrate --force does) makes the replica reload its index, not wait for numbers past it', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const url = await postgres.server.createDatabase('replaced');
    const replica = await spawnRegistry({ ...env(), DATABASE_URL: url, LOG_LEVEL: 'info' });
    replicas.push(replica);
    const client = await sdkClient(replica.url, { token: TOKENS.alice });
    const old: string[] = [];
    for (let i = 0; i < 3; i++) old.push(resultOf(await op(client, { register: { agentCard: v1Card(`Quokka ${i}`, `https://quokka.example.org/${i}`) } })).id);
    await within(1000, () => finds(client, 'quokka', old[2]!));
    // What replacing the data leaves: other entries, and a change log numbered from 1 again.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query('TRUNCATE entries, entry_revisions, entry_freshness, entry_urls, url_claims, changes, tasks, push_notification_configs, watches');
      await admin.query("SELECT setval(pg_get_serial_sequence('changes', 'seq'), 1, false)");
    } finally {
      await admin.end();
    }
    await within(5000, async () => !(await finds(client, 'quokka', old[0]!)));
    // And it follows the new log from its start: a change numbered 1 is applied.
    const { id } = resultOf(await op(client, { register: { agentCard: v1Card('Numbat Notary', 'https://numbat.example.org/a2a') } }));
    await within(1000, () => finds(client, 'numbat', id));
    assert.ok(replica.logs.some((l) => /the change log ends at 0, before this replica's position \d+ \(the database was replaced or restored\); reloading/.test(String(l.msg))), 'the reload is logged');
  });
  test("a failover to a standby that lost the last transactions (its log goes on past this replica's position from a shorter history): the replica reloads its index, a lost entry is no longer searchable", async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const url = await postgres.server.createDatabase('failover');
    const log = logCapture();
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', REGISTRY_TOKENS: TOKENS_ENV, DATABASE_URL: url, REGISTRY_DATA_DIR: tempDir(), REGISTRY_INDEX_SNAPSHOT_SECONDS: '0', REGISTRY_REFRESH_SECONDS: '0' });
    const replica = await startRegistry(config, createLogger('info', log.stream));
    inProcess.push(replica);
    const client = await sdkClient(replica.url, { token: TOKENS.alice });
    const kept = resultOf(await op(client, { register: { agentCard: v1Card('Kept Kestrel', 'https://kept-kestrel.example.org/a2a') } })).id;
    const lost = resultOf(await op(client, { register: { agentCard: v1Card('Lost Lapwing', 'https://lost-lapwing.example.org/a2a') } })).id;
    await within(1000, () => finds(client, 'lapwing', lost));
    // What the standby holds: neither the lost entry nor its change, and its sequence
    // past it (PostgreSQL logs it 32 ahead), so its first write is numbered past this
    // replica's position: the log never looks shorter than the position.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query('BEGIN');
      await admin.query('DELETE FROM changes WHERE entry_id = $1', [lost]);
      await admin.query('DELETE FROM entries WHERE id = $1', [lost]);
      await admin.query("SELECT registry_record_change($1::uuid, 'upsert')", [kept]);
      await admin.query('COMMIT');
      // The replica's connections to the old primary are gone: it reconnects.
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    } finally {
      await admin.end();
    }
    // Before, it stayed searchable for good, and answered NOT_FOUND on get.
    await within(5000, async () => !(await finds(client, 'lapwing', lost)));
    assert.ok(await finds(client, 'kestrel', kept), 'the entry the standby has is still searchable');
    assert.ok(
      log.lines.some((l) => /^the change at this replica's position \d+ is gone from the change log \(the database failed over to a standby that lost the last transactions, or was restored from a backup\); reloading the search index from storage$/.test(String(l.msg))),
      'the reload is logged',
    );
  });
});

describe('a replica reloading its index (it fell behind the trimmed change log)', () => {
  test("its own writes made while the reload scans the entries are in the reloaded index: an update and an unregistration are not lost behind the scan's older copies", async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    const url = await postgres.server.createDatabase('reloading');
    // In this process: the test holds the reload's scan of the entries, as a long one (a large registry) is held by its size.
    const replica = await startTestRegistry({ DATABASE_URL: url, REGISTRY_INDEX_SNAPSHOT_SECONDS: '0' });
    inProcess.push(replica);
    const client = await sdkClient(replica.url, { token: TOKENS.alice });
    const heron = resultOf(await op(client, { register: { agentCard: v1Card('Reload Heron', 'https://reload-heron.example.org/a2a') } }));
    const bittern = resultOf(await op(client, { register: { agentCard: v1Card('Reload Bittern', 'https://reload-bittern.example.org/a2a') } }));
    const store = replica.core.store;
    const scan = store.scan.bind(store);
    const held = holdPoint();
    // What the follower does when the log was trimmed past it (index-follower.ts): the entries are
    // scanned into a new index while the old one answers and writes go on.
    store.scan = async function* (options) {
      yield* scan(options);
      await held.hold();
    };
    t.after(() => {
      held.release();
      store.scan = scan;
    });
    const reloading = replica.core.service.reloadIndex('test: the change log was trimmed past this replica');
    await held.reached;
    // Both entries scanned already; then changed through this replica, committed and published.
    const heronCard = v1Card('Reload Heron', 'https://reload-heron.example.org/a2a');
    heronCard.skills[0]!.name = 'Ringing kingfishers';
    assert.equal(resultOf(await op(client, { register: { agentCard: heronCard } })).revision, 2);
    resultOf(await op(client, { unregister: { id: bittern.id } }));
    store.scan = scan;
    held.release();
    assert.equal(await reloading, 2);
    // The follower read both changes back from the log meanwhile: this replica's own, so it did
    // not publish them again. The reloaded index must have them of its own.
    assert.ok(await finds(client, 'kingfishers', heron.id), 'the update made during the reload is searchable');
    assert.equal(await finds(client, 'bittern', bittern.id), false, 'the entry unregistered during the reload is not found');
  });
});

describe('a PostgreSQL restart while a replica loads its search index', () => {
  test('the load is tried again once the database is back: meanwhile /readyz says so and searches are refused as starting up, not answered from the part loaded', async (t) => {
    if (postgres.skipReason) return t.skip(postgres.skipReason);
    if (!postgres.server.controllable) return t.skip('TEST_DATABASE_URL server cannot be restarted');
    const url = await postgres.server.createDatabase('load_retry');
    const seeded = createStore({ dataDir: tempDir(), databaseUrl: url });
    await seeded.open();
    for (const name of ['Loading Lemur', 'Loading Loris']) await seeded.upsert(entryWrite('agent', `https://${name.replace(' ', '-').toLowerCase()}.example.org/a2a`, '1', name), actor('admin', true));
    await seeded.close();
    // The load's scan is held at its start (a long load, a large registry), while the server stops.
    const scan = PostgresStore.prototype.scan;
    const held = holdPoint();
    PostgresStore.prototype.scan = async function* (this: PostgresStore, options) {
      await held.hold();
      yield* scan.call(this, options);
    };
    t.after(() => {
      PostgresStore.prototype.scan = scan;
      held.release();
    });
    const log = logCapture();
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', REGISTRY_TOKENS: TOKENS_ENV, DATABASE_URL: url, REGISTRY_DATA_DIR: tempDir(), REGISTRY_INDEX_SNAPSHOT_SECONDS: '0', REGISTRY_REFRESH_SECONDS: '0' });
    const replica = await startRegistry(config, createLogger('info', log.stream));
    inProcess.push(replica);
    await held.reached;
    PostgresStore.prototype.scan = scan;
    await postgres.server.halt();
    try {
      held.release();
      const readiness = async () => `${(await fetch(`${replica.url}/readyz`)).status} ${((await (await fetch(`${replica.url}/readyz`)).json()) as WireJson).reason}`;
      await within(10_000, async () => (await readiness()).includes('could not be loaded yet'));
      assert.match(await readiness(), /^503 the search index could not be loaded yet: storage is unavailable \(unreachable, [0-9A-Z]+\); trying again at \d{4}-\d\d-\d\dT/);
      // Before, it said "the search index could not be loaded ...; restart the registry once it is
      // fixed", for good, and answered searches from what it had loaded: here nothing.
      const client = await sdkClient(replica.url, { token: TOKENS.alice });
      const refused = await op(client, { search: { query: 'loading' } }).then(
        (answer) => JSON.stringify(answer),
        (err: { data?: { reason?: string }[] }) => err.data?.[0]?.reason,
      );
      assert.equal(refused, 'STARTING_UP');
    } finally {
      await postgres.server.resume();
    }
    await within(15_000, async () => (await fetch(`${replica.url}/readyz`)).status === 200);
    const client = await sdkClient(replica.url, { token: TOKENS.alice });
    assert.equal(resultOf(await op(client, { search: { query: 'loading' } })).results.length, 2);
    assert.ok(log.lines.some((l) => /^loading the search index failed: storage is unavailable; trying again at /.test(String(l.msg))), 'the wait is logged');
  });
});
