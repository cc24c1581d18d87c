/**
 * Per-principal quotas (issue 12, point 3), end to end over A2A: at most
 * REGISTRY_MAX_ENTRIES_PER_OWNER entries (QUOTA_EXCEEDED names the limit and how to raise it,
 * concurrent registrations never overshoot, unregistering frees room), at most
 * REGISTRY_MAX_REVISIONS revisions kept per entry (numbering continues; an old revision says it
 * is no longer kept), admins exempt. And who gets an identity two principals register at once
 * (the second is told it is taken, whichever spelling of the URL each sent). On SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { CHANGE_LOCK_KEY } from '../src/storage/postgres/migrations.js';
import { v1Card } from './support/documents.js';
import { errorOf, op, resultOf, sdkClient, stateOf, type WireJson } from './support/client.js';
import { storageEngines } from './support/engines.js';
import { eventually } from './support/eventually.js';
import { TOKENS, startTestRegistry } from './support/registry.js';

const card = (owner: string, i: number) => v1Card(`Quota ${owner} ${i}`, `https://quota-${owner}-${i}.example.org/a2a`);

for (const engine of storageEngines()) {
  describe(`quotas (${engine.name})`, () => {
    test('entries per owner: refused over the limit with a message that says how to raise it; admins exempt', async (t) => {
      const skip = engine.skip();
      if (skip) return t.skip(skip);
      const env = await engine.env();
      const registry = await startTestRegistry({ ...env, REGISTRY_MAX_ENTRIES_PER_OWNER: '3', REGISTRY_MAX_REVISIONS: '2' });
      t.after(() => registry.close());
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      const bob = await sdkClient(registry.url, { token: TOKENS.bob });
      const admin = await sdkClient(registry.url, { token: TOKENS.admin });

      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push(resultOf(await op(alice, { register: { agentCard: card('alice', i) } })).id);
      const over = await op(alice, { register: { agentCard: card('alice', 3) } });
      const error = errorOf(over);
      assert.equal(error.code, 'QUOTA_EXCEEDED');
      assert.match(error.message, /"alice" has as many entries as one principal may register, or more: the limit is 3 \(REGISTRY_MAX_ENTRIES_PER_OWNER=3\)/);
      assert.match(error.message, /raise REGISTRY_MAX_ENTRIES_PER_OWNER/);
      // Updating an entry it has is fine; unregistering one makes room for another.
      assert.equal(resultOf(await op(alice, { register: { agentCard: { ...card('alice', 0), version: '2.0.0' } } })).revision, 2);
      assert.equal(stateOf(await op(alice, { unregister: { id: ids[0] } })), 'TASK_STATE_COMPLETED');
      assert.equal(stateOf(await op(alice, { register: { agentCard: card('alice', 3) } })), 'TASK_STATE_COMPLETED');

      // Ten at once: exactly three get in.
      const raced = await Promise.all(Array.from({ length: 10 }, (_, i) => op(bob, { register: { agentCard: card('bob', i) } })));
      assert.equal(raced.filter((task) => stateOf(task) === 'TASK_STATE_COMPLETED').length, 3);
      assert.equal(raced.filter((task) => stateOf(task) === 'TASK_STATE_REJECTED' && errorOf(task).code === 'QUOTA_EXCEEDED').length, 7);
      const bobs = resultOf(await op(bob, { list: { filter: { mine: true } } }));
      assert.equal(bobs.entries.length, 3);

      // The operator's admin principal has no quota.
      for (let i = 0; i < 5; i++) assert.equal(stateOf(await op(admin, { register: { agentCard: card('admin', i) } })), 'TASK_STATE_COMPLETED');

      // The limit lowered below what alice holds (3 entries): the refusal does not say she has 1
      // (storage counts up to the limit only), nor "1 entries".
      await registry.close();
      const lowered = await startTestRegistry({ ...env, REGISTRY_DATA_DIR: registry.dataDir, REGISTRY_MAX_ENTRIES_PER_OWNER: '1' });
      t.after(() => lowered.close());
      const aliceNow = await sdkClient(lowered.url, { token: TOKENS.alice });
      assert.equal(resultOf(await op(aliceNow, { list: { filter: { mine: true } } })).entries.length, 3);
      const refused = errorOf(await op(aliceNow, { register: { agentCard: card('alice', 4) } }));
      assert.equal(refused.code, 'QUOTA_EXCEEDED');
      assert.match(refused.message, /^Principal "alice" has as many entries as one principal may register, or more: the limit is 1 \(REGISTRY_MAX_ENTRIES_PER_OWNER=1\)\. /);
    });

    test('two principals registering one agent at once under two spellings of its URL: the second is told the identity is taken, as when one comes after the other', async (t) => {
      const skip = engine.skip();
      if (skip) return t.skip(skip);
      const env = await engine.env();
      const registry = await startTestRegistry(env);
      t.after(() => registry.close());
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      const bob = await sdkClient(registry.url, { token: TOKENS.bob });
      const register = (who: typeof bob, url: string) => op(who, { register: { agentCard: v1Card('Spelt Race', url) } });
      let [bobs, alices]: Promise<WireJson>[] = [];
      if (env.DATABASE_URL === undefined) {
        // SQLite takes writes one at a time: the one second sees the first.
        bobs = register(bob, 'https://spelt-race.example.org/a2a');
        await bobs;
        alices = register(alice, 'http://spelt-race.example.org/a2a');
      } else {
        // PostgreSQL: bob's registration is held before its commit (with its URL claimed and its
        // entry written) while alice's, of the http spelling, starts and waits for that claim.
        const [holder, watcher] = [new pg.Client({ connectionString: env.DATABASE_URL }), new pg.Client({ connectionString: env.DATABASE_URL })];
        await Promise.all([holder.connect(), watcher.connect()]);
        t.after(() => Promise.all([holder.end(), watcher.end()]));
        await holder.query('BEGIN');
        await holder.query('SELECT pg_advisory_xact_lock($1)', [CHANGE_LOCK_KEY]);
        // Told apart by what each waits for: the change log's lock (bob), another transaction's claim (alice).
        const waitingFor = async (event: string, statement: string) =>
          (
            await watcher.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = $1 AND strpos(query, $2) > 0",
              [event, statement],
            )
          ).rows[0]!.n > 0;
        bobs = register(bob, 'https://spelt-race.example.org/a2a');
        await eventually(() => waitingFor('advisory', 'registry_record_change'), "bob's registration waits for the change log");
        alices = register(alice, 'http://spelt-race.example.org/a2a');
        await eventually(() => waitingFor('transactionid', 'INSERT INTO url_claims'), "alice's registration waits for bob's claim");
        await holder.query('ROLLBACK');
      }
      const created = resultOf(await bobs!);
      assert.equal(created.created, true);
      // Not "already used by an entry of another principal" (url-taken), as if it were a secondary URL of another agent.
      const refused = errorOf(await alices!);
      assert.equal(refused.code, 'FORBIDDEN');
      assert.equal(refused.message, `http://spelt-race.example.org/a2a is already registered as entry ${created.id} by another principal; only its owner or an admin may update it.`);
      assert.deepEqual(refused.details.map((d: WireJson) => [d.path, d.rule]), [['/supportedInterfaces/0/url', 'identity-taken']]);
    });

    test('revisions per entry: older ones leave the history, numbering goes on, an old one says so', async (t) => {
      const skip = engine.skip();
      if (skip) return t.skip(skip);
      const registry = await startTestRegistry({ ...(await engine.env()), REGISTRY_MAX_REVISIONS: '2' });
      t.after(() => registry.close());
      const alice = await sdkClient(registry.url, { token: TOKENS.alice });
      let id = '';
      for (let v = 1; v <= 4; v++) {
        const result = resultOf(await op(alice, { register: { agentCard: { ...card('alice', 9), version: `${v}.0.0` } } }));
        assert.equal(result.revision, v);
        id = result.id;
      }
      assert.equal(resultOf(await op(alice, { get: { id } })).revision, 4);
      assert.equal(resultOf(await op(alice, { get: { id, revision: 3 } })).document.version, '3.0.0');
      const gone = errorOf(await op(alice, { get: { id, revision: 2 } }));
      assert.equal(gone.code, 'NOT_FOUND');
      assert.match(gone.message, /revision 2 .* is no longer kept/i);
      assert.match(gone.message, /REGISTRY_MAX_REVISIONS/);
      assert.match(gone.message, /oldest kept is 3/);
      assert.match(errorOf(await op(alice, { get: { id, revision: 9 } })).message, /has no revision 9: its current revision is 4\.$/);
      // An entry that does not exist is that, whichever revision is asked for.
      const unknown = errorOf(await op(alice, { get: { id: '00000000-0000-4000-8000-000000000000', revision: 5 } }));
      assert.equal(unknown.code, 'NOT_FOUND');
      assert.equal(unknown.message, 'No entry has id "00000000-0000-4000-8000-000000000000".');
    });
  });
}
