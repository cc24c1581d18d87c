/**
 * Upgrading in place: this release started on a SQLite database an earlier release wrote, as an
 * operator upgrades (stop release N, start N+1 on the same data directory). The database is one
 * release 3ed8ca1 (schema 6, before the trust keyset, the claim keys of today, tasks under no
 * tenant and failingSince) filled through its own API: test/fixtures/upgrade (SOURCES.md says how
 * it was made). The migrations' own tests take a database back to an earlier version; this one
 * reads what an earlier release's code actually wrote.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { Task } from '@a2a-js/sdk';
import { v1Card } from './support/documents.js';
import { errorOf, op, resultOf, sdkClient, stateOf, type WireJson } from './support/client.js';
import { TOKENS, startTestRegistry, tempDir } from './support/registry.js';
import { resume } from './support/watch-stream.js';

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/upgrade/${name}`, import.meta.url));

/** What 3ed8ca1 answered when the fixture was made (see SOURCES.md). */
const ENTRIES = {
  invoice: '01a24aba-2e19-7485-a21c-23607384b5fa', // alice's, revision 2
  weather: '01a24aba-2e6b-71ac-936e-d96ffed0c740', // bob's, an A2A v0.3 card
  files: '01a24aba-2e92-7793-b1f0-9a3e692106e4', // alice's MCP server and its toolspec
  doomed: '01a24aba-2ead-7133-87c6-94daf395be88', // alice's, unregistered
  signed: '01a24aba-2eed-733a-ba9c-3d979a3f6374', // alice's, signed by kid upgrade-fixture
};
/** The task of alice's second registration of the invoice agent, and bob's watch of tag "tax". */
const INVOICE_TASK = '01a24aba-2e4c-7284-9883-7cdec6d33abc';
const WATCH_TASK = '6fc0668c-4ac5-4a78-9b4c-3bbf30a66925';

describe('a SQLite database written by an earlier release (3ed8ca1, schema 6)', () => {
  test('upgrades in place: entries, revisions, owners, signatures, durable tasks and the standing search are there and behave as before', async () => {
    const dataDir = tempDir();
    const db = new Database(join(dataDir, 'registry.db'));
    db.exec(readFileSync(fixture('3ed8ca1-registry.sql'), 'utf8'));
    // Its tasks and its watch were written in 2026: as if a moment ago, so that their retention
    // (REGISTRY_TASK_RETENTION_HOURS) and the watch's day count from the test's time.
    db.prepare('UPDATE tasks SET status_last_updated = ?').run(Date.now());
    db.prepare('UPDATE watches SET expires_at = ?').run(Date.now() + 3_600_000);
    db.close();
    const registry = await startTestRegistry({ REGISTRY_DATA_DIR: dataDir, REGISTRY_TRUSTED_KEYS: fixture('3ed8ca1-jwks.json') });
    try {
      await registry.core.restoreWatches();
      const [admin, alice, bob] = await Promise.all([TOKENS.admin, TOKENS.alice, TOKENS.bob].map((token) => sdkClient(registry.url, { token })));
      const get = async (id: string, revision?: number): Promise<WireJson> => resultOf(await op(admin, { get: { id, ...(revision ? { revision } : {}) } }));

      const invoice = await get(ENTRIES.invoice);
      assert.deepEqual([invoice.owner, invoice.revision, invoice.description], ['alice', 2, 'Invoice Agent, second revision: translates, checks and files invoices.']);
      assert.equal((await get(ENTRIES.invoice, 1)).description, 'Invoice Agent translates and checks invoices.');
      const weather = await get(ENTRIES.weather);
      assert.deepEqual([weather.owner, weather.protocolVersion], ['bob', '0.3']);
      assert.deepEqual((await get(ENTRIES.files)).document.toolspec.tools.map((t: WireJson) => t.name), ['read_file', 'write_file']);
      assert.equal(errorOf(await op(admin, { get: { id: ENTRIES.doomed } })).code, 'NOT_FOUND');
      const signed = await get(ENTRIES.signed);
      assert.deepEqual([signed.verified, signed.kid], [true, 'upgrade-fixture'], 'its signature still verifies against the trust roots');
      assert.deepEqual(resultOf(await op(admin, { list: {} })).entries.map((e: WireJson) => e.id), [ENTRIES.signed, ENTRIES.files, ENTRIES.weather, ENTRIES.invoice]);
      assert.deepEqual(resultOf(await op(admin, { search: { query: 'invoices' } })).results.map((r: WireJson) => r.id), [ENTRIES.invoice]);
      assert.deepEqual(resultOf(await op(admin, { search: { filter: { verified: true } } })).results.map((r: WireJson) => r.id), [ENTRIES.signed]);

      // Another principal may not list its URL beside his own: it is claimed (the claims 3ed8ca1
      // kept, re-derived by today's rules), before its owner writes anything.
      const borrowing = v1Card('Borrowing Agent', 'https://borrowing.example.org/a2a');
      borrowing.supportedInterfaces.push({ url: 'https://invoices.example.org/a2a/jsonrpc', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' });
      const refused = errorOf(await op(bob, { register: { agentCard: borrowing } }));
      assert.equal(refused.code, 'FORBIDDEN', JSON.stringify(refused));

      // Its owner updates it; another principal may neither take it nor remove it.
      const card = v1Card('Invoice Agent', 'https://invoices.example.org/a2a/jsonrpc');
      assert.equal(resultOf(await op(alice, { register: { agentCard: card } })).revision, 3);
      assert.equal(errorOf(await op(bob, { register: { agentCard: card } })).code, 'FORBIDDEN');
      assert.equal(errorOf(await op(bob, { unregister: { id: ENTRIES.invoice } })).code, 'FORBIDDEN');

      // Its durable tasks are its principals' alone.
      const task = Task.toJSON(await alice.getTask({ tenant: '', id: INVOICE_TASK, historyLength: undefined })) as WireJson;
      assert.equal(stateOf(task), 'TASK_STATE_COMPLETED');
      await assert.rejects(bob.getTask({ tenant: '', id: INVOICE_TASK, historyLength: undefined }), /Task not found/);

      // bob's watch runs again: resumed, it tells of a matching entry registered now.
      const resumed = resume(bob, WATCH_TASK);
      try {
        await resumed.waitFor((e) => e.task !== undefined, 'the watch task, first');
        const tax = v1Card('Tax Agent', 'https://tax.example.org/a2a');
        const added = resultOf(await op(alice, { register: { agentCard: tax } }));
        assert.equal((await resumed.waitForEvent((e) => e.event === 'added', 'the new entry')).hit.id, added.id);
      } finally {
        resumed.disconnect();
      }
    } finally {
      await registry.close();
    }
  });
});
