/**
 * Storage support for trust (issue 15), on a real SQLite file and a real PostgreSQL server:
 * URL claims that hold under concurrent writers (several store instances, several principals),
 * the migration that backfills entries stored before URLs were normalised, and signature
 * verification kept per revision with the "verified" list filter.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { CardVerification } from '../src/contract/verification.js';
import { endpointIdentity } from '../src/lib/endpoint-url.js';
import { PostgresStore } from '../src/storage/postgres/index.js';
import { POSTGRES_MIGRATIONS } from '../src/storage/postgres/migrations.js';
import { SqliteStore } from '../src/storage/sqlite/index.js';
import { SQLITE_MIGRATIONS } from '../src/storage/sqlite/migrations.js';
import type { EntryWrite, RegistryStore } from '../src/storage/types.js';
import { usePostgres } from './support/postgres.js';
import { actor, entryWrite, seededRandom } from './support/store-fixtures.js';

interface Target {
  makeStore(): RegistryStore;
  /** Runs SQL (with `?`-free literal text) on the database directly. */
  raw(sql: string): Promise<Record<string, unknown>[]>;
  /** Creates the schema of migration 1 only, as a database written by the previous release. */
  atVersion1(): Promise<void>;
}

const cleanups: (() => Promise<void> | void)[] = [];
const postgres = usePostgres({
  async tearDown() {
    for (const c of cleanups.reverse()) await c();
  },
});

const engines = {
  async sqlite(): Promise<Target> {
    const dir = mkdtempSync(join(tmpdir(), 'registry-trust-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'registry.db');
    const withDb = <T>(fn: (db: Database.Database) => T): T => {
      const db = new Database(file);
      try {
        return fn(db);
      } finally {
        db.close();
      }
    };
    return {
      makeStore: () => new SqliteStore({ file }),
      raw: async (sql) => withDb((db) => {
        const stmt = db.prepare(sql);
        return stmt.reader ? (stmt.all() as Record<string, unknown>[]) : (stmt.run(), []);
      }),
      atVersion1: async () =>
        withDb((db) => {
          db.exec(`CREATE TABLE registry_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
          db.exec(SQLITE_MIGRATIONS[0]!.sql!);
          db.prepare(`INSERT INTO registry_migrations VALUES (1, 'v1', '2026-01-01T00:00:00Z')`).run();
        }),
    };
  },
  async postgres(): Promise<Target> {
    const url = await postgres.server.createDatabase('trust');
    const raw = async (sql: string) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(sql)).rows as Record<string, unknown>[];
      } finally {
        await client.end();
      }
    };
    return {
      makeStore: () => new PostgresStore({ url, poolMax: 5 }),
      raw,
      atVersion1: async () => {
        await raw(`CREATE TABLE registry_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
        await raw(POSTGRES_MIGRATIONS[0]!.sql);
        await raw(`INSERT INTO registry_migrations (version, name) VALUES (1, 'v1')`);
      },
    };
  },
};

/** A write whose secondary interface is `secondary`. */
function withSecondary(identityUrl: string, secondary: string, version = '1'): EntryWrite {
  const write = entryWrite('agent', identityUrl, version);
  write.interfaces = [...write.interfaces, { url: secondary, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' }];
  write.urls = [...new Set([...write.urls, secondary.replace(/^https:/, 'http:')])].sort();
  return write;
}

const verification = (verified: boolean, keyset = 'k1'): CardVerification =>
  verified
    ? { verified: true, kid: 'key-1', alg: 'ES256', signatures: [{ status: 'verified', kid: 'key-1', alg: 'ES256' }], keyset }
    : { verified: false, signatures: [{ status: 'unknown-key', kid: 'key-1', alg: 'ES256', reason: 'no trusted key' }], keyset };

/** Every claim: URL (claim key) → owner. */
async function claimsOf(target: Target): Promise<Record<string, unknown>> {
  return Object.fromEntries((await target.raw('SELECT url, owner FROM url_claims')).map((r) => [r.url, r.owner]));
}

/** The invariants every write must keep, whatever ran concurrently. */
async function assertClaimsConsistent(target: Target): Promise<void> {
  const orphans = await target.raw(`SELECT c.url FROM url_claims c WHERE NOT EXISTS (SELECT 1 FROM entry_urls u WHERE u.url = c.url)`);
  assert.deepEqual(orphans, [], 'no claim outlives the last entry that used it');
  const borrowed = await target.raw(
    `SELECT u.url FROM entry_urls u JOIN entries e ON e.id = u.entry_id JOIN url_claims c ON c.url = u.url WHERE c.owner <> e.owner`,
  );
  assert.deepEqual(borrowed, [], "no entry lists a URL claimed by another principal");
}

for (const name of ['sqlite', 'postgres'] as const) {
  describe(`trust storage on ${name}`, () => {
    const test = (title: string, fn: (t: TestContext, target: Target) => Promise<void>) =>
      it(title, async (t) => {
        if (name === 'postgres' && postgres.skipReason) return t.skip(postgres.skipReason);
        await fn(t, await engines[name]());
      });
    const open = async (t: TestContext, target: Target): Promise<RegistryStore> => {
      const store = target.makeStore();
      await store.open();
      t.after(() => store.close());
      return store;
    };
    /** Closes `store`, takes the recorded schema back to `version` (as a previous release left it) and opens it again: the later migrations run. */
    const reopenAfter = async (t: TestContext, target: Target, store: RegistryStore, version: number): Promise<RegistryStore> => {
      await store.close();
      await target.raw(`DELETE FROM registry_migrations WHERE version > ${version}`);
      return open(t, target);
    };

    test('a URL contested by many principals through several store instances ends with one of them', async (t, target) => {
      const stores = await Promise.all(Array.from({ length: 4 }, () => open(t, target)));
      const contested = 'https://contested.example.com/a2a';
      const outcomes = await Promise.all(
        stores.flatMap((store, s) =>
          Array.from({ length: 10 }, (_, i) => store.upsert(withSecondary(`https://race-${s}-${i}.example.com/a2a`, contested), actor(`p${i % 5}`))),
        ),
      );
      const created = outcomes.filter((o) => o.status === 'created');
      assert.ok(created.length >= 1);
      const owners = new Set(created.map((o) => (o.status === 'created' ? o.entry.owner : '')));
      assert.equal(owners.size, 1, `one principal holds it, not ${[...owners].join(', ')}`);
      for (const o of outcomes) if (o.status !== 'created') assert.deepEqual(o, { status: 'url-taken', url: 'http://contested.example.com/a2a' });
      const claims = await target.raw(`SELECT owner FROM url_claims WHERE url = 'http://contested.example.com/a2a'`);
      assert.deepEqual(claims.map((c) => c.owner), [...owners]);
      await assertClaimsConsistent(target);
    });

    test('random concurrent creates, updates and removals by several principals keep every claim consistent', async (t, target) => {
      const stores = await Promise.all(Array.from({ length: 3 }, () => open(t, target)));
      const random = seededRandom(15);
      const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
      const shared = ['https://s1.example.com/a2a', 'https://s2.example.com/a2a', 'https://s3.example.com/a2a'];
      const ids: string[] = [];
      for (let round = 0; round < 8; round++) {
        await Promise.all(
          Array.from({ length: 24 }, async (_, i) => {
            const store = pick(stores);
            const who = actor(pick(['p1', 'p2', 'p3']));
            if (ids.length > 0 && random() < 0.25) {
              const outcome = await store.remove(pick(ids), who);
              assert.ok(['deleted', 'not-found', 'forbidden'].includes(outcome.status));
              return;
            }
            const identity = `https://agent-${Math.floor(random() * 12)}.example.com/a2a`;
            const outcome = await store.upsert(withSecondary(identity, pick(shared), `${round}-${i}`), who);
            if (outcome.status === 'created') ids.push(outcome.entry.id);
          }),
        );
        await assertClaimsConsistent(target);
      }
    });

    test('the migration normalises stored identities and claims their URLs; earlier registrations win conflicts', async (t, target) => {
      await target.atVersion1();
      const now = '2026-01-01T00:00:00.000Z';
      const legacy = [
        // [id, owner, identity, interfaces]
        ['00000000-0000-4000-8000-000000000001', 'alice', 'HTTPS://Alice.example.com:443/a2a/', ['HTTPS://Alice.example.com:443/a2a/', 'https://alice.example.com/rest']],
        ['00000000-0000-4000-8000-000000000002', 'bob', 'https://alice.example.com/%61%32a', ['https://alice.example.com/%61%32a']],
        ['00000000-0000-4000-8000-000000000003', 'bob', 'https://bob.example.com/a2a', ['https://bob.example.com/a2a', 'https://alice.example.com/rest#x']],
        ['00000000-0000-4000-8000-000000000004', 'carol', '{BASE_URL}/a2a', ['{BASE_URL}/a2a']],
      ] as const;
      let seq = 0;
      for (const [id, owner, identity, urls] of legacy) {
        seq++;
        const interfaces = JSON.stringify(urls.map((url, i) => ({ url, protocolBinding: i === 0 ? 'JSONRPC' : 'HTTP+JSON', protocolVersion: '1.0' })));
        const listSeq = name === 'sqlite' ? `${seq}, ` : '';
        await target.raw(
          `INSERT INTO entries (id, ${name === 'sqlite' ? 'list_seq, ' : ''}kind, identity_url, owner, current_revision, created_at, updated_at)
           VALUES ('${id}', ${listSeq}'agent', '${identity}', '${owner}', 1, '${now}', '${now}')`,
        );
        await target.raw(
          `INSERT INTO entry_revisions (entry_id, revision, name, description, protocol_version, interfaces, document_text, content_hash, author, created_at)
           VALUES ('${id}', 1, 'n', 'd', '1.0', '${interfaces}', '{}', 'h${seq}', '${owner}', '${now}')`,
        );
      }
      const store = await open(t, target);
      const identities = Object.fromEntries((await target.raw('SELECT id, identity_url FROM entries')).map((r) => [String(r.id), r.identity_url]));
      assert.equal(identities['00000000-0000-4000-8000-000000000001'], 'https://alice.example.com/a2a', 'normalised');
      assert.equal(identities['00000000-0000-4000-8000-000000000002'], 'https://alice.example.com/%61%32a', 'a later conflicting identity is left as it was');
      assert.equal(identities['00000000-0000-4000-8000-000000000004'], '{BASE_URL}/a2a', 'a placeholder is no URL');
      const claims = await claimsOf(target);
      assert.deepEqual(claims, {
        'http://alice.example.com/a2a': 'alice',
        'http://alice.example.com/rest': 'alice',
        'http://bob.example.com/a2a': 'bob',
      });
      await assertClaimsConsistent(target);
      // The same spelling alice used before updates her entry; bob's conflicting entry cannot be updated with that URL.
      const again = await store.upsert(withSecondary('https://alice.example.com/a2a', 'https://alice.example.com/rest', '2'), actor('alice'));
      assert.equal(again.status === 'updated' && again.entry.id, '00000000-0000-4000-8000-000000000001');
      const bobs = await store.upsert(withSecondary('https://bob.example.com/a2a', 'https://alice.example.com/rest', '2'), actor('bob'));
      assert.deepEqual(bobs, { status: 'url-taken', url: 'http://alice.example.com/rest' });
    });

    test('the migration to one claim key per host, port and path: an entry keeps its own primary URL from an older one listing it', async (t, target) => {
      // A database as the previous release left it: bob's older entry listed alice's endpoint as
      // http://alice.example.com:443/a2a and wss://alice.example.com/rest, each under a claim key
      // of its own, beside alice's https://alice.example.com/a2a (and her secondary .../rest).
      const first = await open(t, target);
      const bobsWrite = withSecondary('https://bob.example.com/a2a', 'http://alice.example.com:443/a2a');
      bobsWrite.interfaces.push({ url: 'wss://alice.example.com/rest', protocolBinding: 'https://example.org/ws', protocolVersion: '1.0' });
      bobsWrite.urls = ['http://alice.example.com:443/a2a', 'http://bob.example.com/a2a', 'ws://alice.example.com/rest'];
      const bob = await first.upsert(bobsWrite, actor('bob'));
      const alice = await first.upsert(withSecondary('https://alice.example.com/a2a', 'https://alice.example.com/rest'), actor('alice'));
      assert.ok(bob.status === 'created' && alice.status === 'created');
      const store = await reopenAfter(t, target, first, name === 'sqlite' ? 7 : 6);
      assert.deepEqual(await claimsOf(target), {
        'http://alice.example.com/a2a': 'alice',
        'http://alice.example.com/rest': 'bob',
        'http://bob.example.com/a2a': 'bob',
      }, "alice's primary is hers; a URL both only list stays with the older entry");
      await assertClaimsConsistent(target);
      const again = withSecondary('https://bob.example.com/a2a', 'http://alice.example.com:443/a2a', '2');
      again.urls = ['http://alice.example.com/a2a', 'http://bob.example.com/a2a']; // as the registry now keys them
      assert.deepEqual(await store.upsert(again, actor('bob')), { status: 'url-taken', url: 'http://alice.example.com/a2a' });
      const hers = await store.upsert(entryWrite('agent', 'https://alice.example.com/a2a', '2'), actor('alice'));
      assert.equal(hers.status, 'updated');
    });

    test('the migration to identities per tenant: a stored interface\'s tenant becomes part of its identity and claim; a URL\'s holder holds its tenants', async (t, target) => {
      // A database as the previous release left it: an agent under tenant "acme" of a multi-tenant
      // host, stored (identity and claim) as if it had none, beside an agent without a tenant.
      const first = await open(t, target);
      const acmeWrite = entryWrite('agent', 'https://mt.example.com/a2a');
      acmeWrite.interfaces[0]!.tenant = 'acme';
      const acme = await first.upsert(acmeWrite, actor('alice'));
      const plain = await first.upsert(entryWrite('agent', 'https://plain.example.com/a2a'), actor('alice'));
      assert.ok(acme.status === 'created' && plain.status === 'created');
      const store = await reopenAfter(t, target, first, name === 'sqlite' ? 8 : 7);
      const identities = Object.fromEntries((await target.raw('SELECT id, identity_url FROM entries')).map((r) => [String(r.id), r.identity_url]));
      assert.deepEqual(identities, { [acme.entry.id]: 'https://mt.example.com/a2a#tenant=acme', [plain.entry.id]: 'https://plain.example.com/a2a' });
      assert.deepEqual(await claimsOf(target), { 'http://mt.example.com/a2a#tenant=acme': 'alice', 'http://plain.example.com/a2a': 'alice' });
      await assertClaimsConsistent(target);
      // Re-registering the card (as the registry now keys it) finds its entry, not a second one
      // beside it; another tenant is another agent, and may be bob's.
      const tenantWrite = (tenant: string, version: string): EntryWrite => {
        const write = entryWrite('agent', 'https://mt.example.com/a2a', version);
        write.interfaces[0]!.tenant = tenant;
        write.identityUrl = `https://mt.example.com/a2a#tenant=${tenant}`;
        write.urls = endpointIdentity(write.interfaces).claims;
        return write;
      };
      const updated = await store.upsert(tenantWrite('acme', '2'), actor('alice'));
      assert.deepEqual(updated.status === 'updated' && [updated.entry.id, updated.entry.revision], [acme.entry.id, 2]);
      assert.equal((await store.upsert(tenantWrite('globex', '1'), actor('bob'))).status, 'created');
      assert.equal((await store.upsert(tenantWrite('acme', '3'), actor('bob'))).status, 'forbidden');
      // Under a tenant, a URL another principal holds without one is still that principal's
      // (an agent that is not multi-tenant ignores the tenant): by upsert and by import alike.
      const squat = entryWrite('agent', 'https://plain.example.com/a2a#tenant=x');
      squat.interfaces[0]!.url = 'https://plain.example.com/a2a';
      squat.interfaces[0]!.tenant = 'x';
      squat.urls = endpointIdentity(squat.interfaces).claims;
      const taken = { status: 'url-taken', url: 'http://plain.example.com/a2a#tenant=x', heldAs: 'http://plain.example.com/a2a' };
      assert.deepEqual(await store.upsert(squat, actor('bob')), taken);
      assert.deepEqual(await store.importEntries([squat], actor('bob'), {}), [taken]);
      // So is it under a query string, which no claim key has (a server may ignore it).
      const query = entryWrite('agent', 'https://plain.example.com/a2a?x=1');
      const queried = { status: 'url-taken', url: 'http://plain.example.com/a2a' };
      assert.deepEqual(await store.importEntries([query], actor('bob'), {}), [queried]);
      assert.deepEqual(await store.upsert(query, actor('bob')), queried);
      assert.equal((await store.upsert(squat, actor('alice'))).status, 'created', 'its holder may list it under a tenant');
    });

    test('the migrations to merged slashes and to claims without query strings: https://h//a2a gets https://h/a2a\'s keys, queries share their URL\'s claim; an older entry\'s claim stands', async (t, target) => {
      // A database as the previous releases left it: bob's https://slash.example.com//a2a keyed apart
      // from alice's older https://slash.example.com/a2a, and carol's alone; each query a claim of its
      // own: alice's ?agent=a, bob's later ?agent=b of one URL, carol's two agents of one host by
      // query. (As in every such migration, the entry registered first keeps a URL two principals
      // now share.)
      const first = await open(t, target);
      const asBefore = (url: string): EntryWrite => Object.assign(entryWrite('agent', url), { urls: [url.replace(/^https:/, 'http:')] });
      const stored: Record<string, string> = {};
      for (const [url, owner] of [
        ['https://slash.example.com/a2a', 'alice'],
        ['https://slash.example.com//a2a', 'bob'],
        ['https://solo.example.com//a2a', 'carol'],
        ['https://qm.example.com/a2a?agent=a', 'alice'],
        ['https://qm.example.com/a2a?agent=b', 'bob'],
        ['https://qs.example.com/a2a?v=2', 'carol'],
        ['https://qs.example.com/a2a?v=3', 'carol'],
      ] as const) {
        const outcome = await first.upsert(asBefore(url), actor(owner));
        assert.ok(outcome.status === 'created', url);
        stored[url] = outcome.entry.id;
      }
      const store = await reopenAfter(t, target, first, name === 'sqlite' ? 9 : 8);
      const identities = Object.fromEntries((await target.raw('SELECT id, identity_url FROM entries')).map((r) => [r.identity_url, String(r.id)]));
      const { 'https://solo.example.com//a2a': solo, ...unchanged } = stored;
      assert.deepEqual(identities, { ...unchanged, 'https://solo.example.com/a2a': solo }, 'only carol\'s https://solo.example.com//a2a is re-keyed: identities keep their query; nothing is deleted');
      assert.deepEqual(await claimsOf(target), {
        'http://slash.example.com/a2a': 'alice',
        'http://solo.example.com/a2a': 'carol',
        'http://qm.example.com/a2a': 'alice',
        'http://qs.example.com/a2a': 'carol',
      });
      await assertClaimsConsistent(target);
      // Bob's entries, re-registered as the registry now keys them, are refused alice's URLs.
      const bobs = Object.assign(entryWrite('agent', 'https://slash.example.com//a2a', '2'), { urls: ['http://slash.example.com/a2a'] });
      assert.deepEqual(await store.upsert(bobs, actor('bob')), { status: 'url-taken', url: 'http://slash.example.com/a2a' });
      assert.deepEqual(await store.upsert(entryWrite('agent', 'https://qm.example.com/a2a?agent=b', '2'), actor('bob')), { status: 'url-taken', url: 'http://qm.example.com/a2a' });
      // The others update their entries, each by its own query; carol's one claim holds for both of hers.
      for (const [url, owner, id] of [
        ['https://solo.example.com/a2a', 'carol', stored['https://solo.example.com//a2a']],
        ['https://qm.example.com/a2a?agent=a', 'alice', stored['https://qm.example.com/a2a?agent=a']],
        ['https://qs.example.com/a2a?v=2', 'carol', stored['https://qs.example.com/a2a?v=2']],
        ['https://qs.example.com/a2a?v=3', 'carol', stored['https://qs.example.com/a2a?v=3']],
      ] as const) {
        const updated = await store.upsert(entryWrite('agent', url, '2'), actor(owner));
        assert.deepEqual(updated.status === 'updated' && [updated.entry.id, updated.entry.revision], [id, 2], url);
      }
      await assertClaimsConsistent(target);
    });

    test('a verification per revision: updated in place for the current one, filtered on by list', async (t, target) => {
      const store = await open(t, target);
      const signed = entryWrite('agent', 'https://signed.example.com/a2a');
      signed.verification = verification(true);
      const a = await store.upsert(signed, actor('alice'));
      const plain = await store.upsert(entryWrite('agent', 'https://plain.example.com/a2a'), actor('alice'));
      assert.ok(a.status === 'created' && plain.status === 'created');
      assert.deepEqual(a.entry.verification, signed.verification);
      assert.equal(plain.entry.verification, undefined);

      const names = async (verified?: boolean) => (await store.list({ limit: 10, verified })).entries.map((e) => e.identityUrl).sort();
      assert.deepEqual(await names(true), ['https://signed.example.com/a2a']);
      assert.deepEqual(await names(false), ['https://plain.example.com/a2a']);
      assert.equal((await names()).length, 2);

      const seq = await store.lastChangeSeq();
      const quiet = await store.updateVerification(a.entry.id, 1, verification(true, 'k2'), false);
      assert.equal(quiet?.verification?.keyset, 'k2');
      assert.equal(await store.lastChangeSeq(), seq, 'a silent update records no change');
      const loud = await store.updateVerification(a.entry.id, 1, verification(false, 'k3'), true);
      assert.equal(loud?.verification?.verified, false);
      assert.equal(loud?.revision, 1, 'no new revision');
      assert.deepEqual(await store.changesSince(seq, 10).then((c) => c.map((x) => [x.id, x.op])), [[a.entry.id, 'upsert']]);
      assert.deepEqual(await names(true), []);

      // Only the current revision is re-evaluated.
      const next = entryWrite('agent', 'https://signed.example.com/a2a', '2');
      next.verification = verification(true);
      await store.upsert(next, actor('alice'));
      assert.equal(await store.updateVerification(a.entry.id, 1, verification(true, 'k4'), true), undefined);
      assert.equal((await store.get(a.entry.id, 1))?.verification?.keyset, 'k3');
      assert.deepEqual(await names(true), ['https://signed.example.com/a2a']);
    });

    test('a scan outside a keyset reads just the signed cards checked against other trust roots, as every write leaves them', async (t, target) => {
      const store = await open(t, target);
      const stale = async (keyset: string, batchSize?: number): Promise<string[]> => {
        const seen: string[] = [];
        for await (const entry of store.scan({ outsideKeyset: keyset, batchSize })) seen.push(entry.identityUrl);
        return seen;
      };
      const write = (host: string, v?: CardVerification, kind: 'agent' | 'mcp-server' = 'agent', version = '1'): EntryWrite => {
        const w = entryWrite(kind, `https://${host}.example.com/a2a`, version);
        if (v) w.verification = v;
        return w;
      };
      const unsigned: CardVerification = { verified: false, signatures: [], keyset: 'k1' };
      // A card with signatures stored without a verification (as rows older than verification are).
      const legacy = write('legacy');
      legacy.documentText = JSON.stringify({ ...JSON.parse(legacy.documentText), signatures: [{ protected: 'x', signature: 'y' }] });
      const ids: Record<string, string> = {};
      for (const [host, w] of [
        ['a', write('a', verification(true, 'k1'))],
        ['b', write('b')],
        ['c', write('c', undefined, 'mcp-server')],
        ['d', write('d', verification(false, 'k2'))],
        ['e', write('e', unsigned)],
        ['legacy', legacy],
      ] as const) {
        const outcome = await store.upsert(w, actor('alice'));
        assert.equal(outcome.status, 'created');
        if (outcome.status === 'created') ids[host] = outcome.entry.id;
      }
      const url = (host: string) => `https://${host}.example.com/a2a`;
      assert.deepEqual(await stale('k1'), [url('d'), url('legacy')], 'signed under other roots, and signed but never checked');
      assert.deepEqual(await stale('k2'), [url('a'), url('legacy')]);
      assert.deepEqual(await stale('k2', 1), [url('a'), url('legacy')], 'one at a time, the same');
      let all = 0;
      for await (const _ of store.scan()) all++;
      assert.equal(all, 6, 'without a keyset, every entry');

      // Each write path keeps the column: a re-evaluation, a new revision, a refresh, an import, a removal.
      await store.updateVerification(ids.a!, 1, verification(true, 'k2'), false);
      assert.deepEqual(await stale('k2'), [url('legacy')], 're-evaluated against k2');
      await store.updateVerification(ids.legacy!, 1, unsigned, true);
      assert.deepEqual(await stale('k2'), [], 'checked, and found to carry no signature');
      assert.equal((await store.upsert(write('d', unsigned, 'agent', '2'), actor('alice'))).status, 'updated');
      assert.deepEqual(await stale('k9'), [url('a')], 'a new revision without signatures leaves it');
      assert.equal((await store.revise(ids.b!, write('b', verification(true, 'k3'), 'agent', '2'), 1)).status, 'updated');
      assert.deepEqual(await stale('k2'), [url('b')], 'a refreshed document signed under k3');
      const imported = await store.importEntries([write('f', verification(true, 'k3')), write('g', unsigned)], actor('alice'));
      assert.deepEqual(imported.map((o) => o.status), ['created', 'created']);
      assert.deepEqual(await stale('k2'), [url('b'), url('f')]);
      assert.equal((await store.remove(ids.b!, actor('alice'))).status, 'deleted');
      assert.deepEqual(await stale('k2'), [url('f')]);
      assert.deepEqual(await stale('k3'), [url('a')]);
    });

    test('the migration to the trust keyset column fills it from what is stored', async (t, target) => {
      // A database as the previous release left it: the store's schema without the column.
      const first = await open(t, target);
      await first.close();
      const previous = name === 'sqlite' ? 6 : 5;
      await target.raw('DROP INDEX entries_trust_idx');
      await target.raw('ALTER TABLE entries DROP COLUMN trust_keyset');
      await target.raw(`DELETE FROM registry_migrations WHERE version > ${previous}`);
      const now = '2026-01-01T00:00:00.000Z';
      const rows: [string, string, string | null, string][] = [
        // [kind, verification, document]
        ['agent', JSON.stringify(verification(true, 'k1')), '{}'],
        ['agent', JSON.stringify(verification(false, 'k2')), '{}'],
        ['agent', JSON.stringify({ verified: false, signatures: [], keyset: 'k1' }), '{"signatures":[]}'],
        ['agent', null, '{"name":"x","signatures":[{"protected":"x","signature":"y"}]}'],
        ['agent', null, '{"name":"x"}'],
        ['mcp-server', null, '{"signatures":1}'],
        // The kid of an unknown key, as the card named it: a "\u0000" escape, which PostgreSQL's
        // jsonb refuses (the migration failed on it, and the upgrade with it).
        ['agent', JSON.stringify({ verified: false, signatures: [{ status: 'unknown-key', kid: 'key\u0000\\u0000', alg: 'ES256' }], keyset: 'k3' }), '{}'],
      ].map(([kind, v, doc], i) => [`00000000-0000-4000-8000-00000000000${i + 1}`, kind!, v ?? null, doc!]);
      for (const [i, [id, kind, v, doc]] of rows.entries()) {
        await target.raw(
          `INSERT INTO entries (id, ${name === 'sqlite' ? 'list_seq, ' : ''}kind, identity_url, owner, current_revision, created_at, updated_at)
           VALUES ('${id}', ${name === 'sqlite' ? `${i + 1}, ` : ''}'${kind}', 'https://m${i}.example.com/a2a', 'alice', 1, '${now}', '${now}')`,
        );
        await target.raw(
          `INSERT INTO entry_revisions (entry_id, revision, name, description, protocol_version, interfaces, document_text, content_hash, author, created_at, verification)
           VALUES ('${id}', 1, 'n', 'd', '1.0', '[]', '${doc}', 'h${i}', 'alice', '${now}', ${v === null ? 'NULL' : `'${v}'`})`,
        );
      }
      const store = await open(t, target);
      const keysets = await target.raw('SELECT id, trust_keyset FROM entries ORDER BY id');
      assert.deepEqual(
        keysets.map((r) => r.trust_keyset),
        ['k1', 'k2', null, '', null, null, 'k3'],
        'signed: its keyset; no signature: none; signed but never checked: empty; an MCP server: none; a kid holding U+0000: its keyset',
      );
      const stale: string[] = [];
      for await (const entry of store.scan({ outsideKeyset: 'k1' })) stale.push(entry.id);
      assert.deepEqual(stale, [rows[1]![0], rows[3]![0], rows[6]![0]]);
    });
  });
}
