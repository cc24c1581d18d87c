/**
 * Issue 22 (1): the registry listens before its storage opens, so liveness answers from the first
 * second even when opening takes long (the first start after an upgrade migrates the database,
 * and a PostgreSQL replica waits for another's migration). On a real PostgreSQL server, another
 * session holds the migration lock, as a replica migrating the database does: meanwhile /healthz
 * answers 200, /readyz 503 "opening storage", and requests are refused as retryable on each
 * binding (JSON-RPC: an error with reason STARTING_UP and the request's id; HTTP+JSON: 503 and a
 * google.rpc.Status; MCP: 503 and a JSON-RPC error with the request's id; all with Retry-After). Once the lock is released the registry starts and
 * answers, with what was registered before.
 *
 * A SIGTERM or SIGINT while storage waits to open (the built registry, as `npm start` runs it, a
 * replica whose database is not reachable yet) stops it at once, exit 0, saying it stopped before
 * it was ready: the handlers were installed only once started, so the signal killed it without a
 * word, or was ignored by the registry as PID 1 in a container until Docker's SIGKILL. So does
 * one while `npm start` or `a2a-registry serve` still loads the registry's modules, before
 * storage is even asked for. A SIGHUP meanwhile (a reload: it reloads the trust roots once they are
 * loaded) ended the registry with 129, without a word: it stops nothing.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { test } from 'node:test';
import net from 'node:net';
import zlib from 'node:zlib';
import pg from 'pg';
import { StartStopped, openStorage } from '../src/composition/open-storage.js';
import { createLogger } from '../src/observability/logger.js';
import { MIGRATION_LOCK_KEY } from '../src/storage/postgres/migrations.js';
import type { RegistryStore } from '../src/storage/types.js';
import { BIN, BUILT_MAIN, REPO_ROOT, ensureBuilt } from './support/built.js';
import { v1Card } from './support/documents.js';
import { op, resultOf, sdkClient } from './support/client.js';
import { usePostgres } from './support/postgres.js';
import { freePort } from './support/ports.js';
import { rawPost, sendMessageBody } from './support/raw-http.js';
import { TOKENS, TOKENS_ENV, startTestRegistry, tempDir, type TestRegistry } from './support/registry.js';

const postgres = usePostgres();

/** The first answer to GET `url`, once something listens there. */
async function firstAnswer(url: string): Promise<Response> {
  for (let i = 0; i < 200; i++) {
    try {
      return await fetch(url);
    } catch {
      await delay(50);
    }
  }
  throw new Error(`nothing answered at ${url}`);
}

test('liveness answers and requests are refused as retryable while storage waits to open, then the registry starts', async (t) => {
  if (postgres.skipReason) return t.skip(postgres.skipReason);
  const databaseUrl = await postgres.server.createDatabase('opening');
  // A registry that registers an entry, then stops: the database is migrated and holds it.
  const first = await startTestRegistry({ DATABASE_URL: databaseUrl });
  const client = await sdkClient(first.url, { token: TOKENS.alice });
  const registered = resultOf(await op(client, { register: { agentCard: v1Card('Opening Agent', 'https://opening.example.com/a2a') } }));
  await first.close();

  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let started: TestRegistry | undefined;
  const starting = startTestRegistry({ DATABASE_URL: databaseUrl, PORT: String(port) }).then((r) => (started = r));
  try {
    const health = await firstAnswer(`${base}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok' });
    const ready = await fetch(`${base}/readyz`);
    assert.equal(ready.status, 503);
    assert.deepEqual(await ready.json(), { status: 'not ready', reason: 'opening storage' });
    for (const probe of [health, ready]) assert.equal(probe.headers.get('cache-control'), 'no-store', 'a cache in front would go on saying "not ready"');

    const jsonRpc = await rawPost(`${base}/a2a/jsonrpc`, sendMessageBody([{ data: { search: { query: 'opening' } }, mediaType: 'application/json' }], 'req-7'));
    assert.equal(jsonRpc.status, 200, 'JSON-RPC answers its errors with HTTP 200');
    assert.equal(jsonRpc.json!.id, 'req-7', "the refusal carries the request's id");
    assert.equal(jsonRpc.json!.error.data[0].reason, 'STARTING_UP');
    assert.match(jsonRpc.json!.error.message, /starting up: its storage is opening.*retry/);
    assert.equal(jsonRpc.headers.get('retry-after'), '2');
    // The endpoint asked in another case, which express routes to it: a JSON-RPC error too (it was the google.rpc.Status).
    const upper = await rawPost(`${base}/A2A/JSONRPC`, sendMessageBody([{ text: 'x' }], 'req-upper'));
    assert.deepEqual([upper.status, upper.json!.id, upper.json!.error?.data?.[0]?.reason], [200, 'req-upper', 'STARTING_UP']);
    // zstd is refused unread, as the doors refuse it (its frame may ask for a 128 MB window): a
    // real frame where this node can make one; decoded, the refusal would carry its id.
    const zstdBody = Buffer.from(sendMessageBody([{ text: 'x' }], 'zstd-7'));
    const zstd = await rawPost(`${base}/a2a/jsonrpc`, 'zstdCompressSync' in zlib ? zlib.zstdCompressSync(zstdBody) : zstdBody, { headers: { 'content-encoding': 'zstd' } });
    assert.equal(zstd.json!.error.data[0].reason, 'STARTING_UP');
    assert.equal(zstd.json!.id, null, 'not decoded');
    const gzip = await rawPost(`${base}/a2a/jsonrpc`, zlib.gzipSync(Buffer.from(sendMessageBody([{ text: 'x' }], 'gzip-7'))), { headers: { 'content-encoding': 'gzip' } });
    assert.equal(gzip.json!.id, 'gzip-7', 'gzip is read for its id, as the doors read it');
    const rest = await rawPost(`${base}/a2a/rest/message:send`, JSON.stringify({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [] } }));
    assert.equal(rest.status, 503);
    assert.equal(rest.json!.error.status, 'UNAVAILABLE');
    assert.equal(rest.json!.error.details[0].reason, 'STARTING_UP');
    assert.equal(rest.headers.get('retry-after'), '2');
    // MCP in its own words, as its door refuses: HTTP 503 and a JSON-RPC error with the request's
    // id, the reason and when to retry (it was the HTTP+JSON google.rpc.Status, no JSON-RPC at all).
    const mcp = await rawPost(`${base}/mcp`, JSON.stringify({ jsonrpc: '2.0', id: 'mcp-7', method: 'tools/list' }), { headers: { accept: 'application/json, text/event-stream' } });
    assert.equal(mcp.status, 503);
    assert.equal(mcp.headers.get('retry-after'), '2');
    assert.equal(mcp.json!.jsonrpc, '2.0');
    assert.equal(mcp.json!.id, 'mcp-7');
    assert.equal(mcp.json!.error.code, -32603);
    assert.match(mcp.json!.error.message, /starting up: its storage is opening.*retry/);
    assert.deepEqual(mcp.json!.error.data, { reason: 'STARTING_UP', retryAfterSeconds: 2 });
    const card = await fetch(`${base}/.well-known/agent-card.json`);
    assert.equal(card.status, 503, 'the card names URLs and keys the doors give: it waits for them');
    // A browser (re)loading the web page meanwhile: a page saying so, not the JSON refusal shown as text.
    const page = await fetch(`${base}/entries/some-id`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    assert.equal(page.status, 503);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(page.headers.get('retry-after'), '2');
    // In a main landmark (as the page's own views are), not loose in the body.
    assert.match(await page.text(), /<body>\s*<main>\s*<h1>The registry is starting up<\/h1>[\s\S]*Reload this page in 2 s\.[\s\S]*<\/main>\s*<\/body>/);
    const json = await fetch(`${base}/entries/some-id`, { headers: { accept: 'application/json' } });
    assert.equal(json.status, 503);
    assert.equal(((await json.json()) as { error: { details: { reason: string }[] } }).error.details[0]!.reason, 'STARTING_UP', 'API clients keep the JSON refusal');

    await delay(300);
    assert.equal(started, undefined, 'still waiting for the migration lock');
  } finally {
    await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    await holder.end();
    // Started either way, and closed either way, so a failed assertion does not leave it running.
    t.after(async () => (await starting).close());
  }
  const registry = await starting;
  assert.equal((await fetch(`${base}/readyz`)).status, 200);
  const again = await sdkClient(registry.url, { token: TOKENS.alice });
  const got = resultOf(await op(again, { get: { id: registered.id } }));
  assert.equal(got.id, registered.id, 'what was registered before is there');
  assert.equal(got.document.name, 'Opening Agent');
});

test('a PostgreSQL server not reachable yet at start-up is waited for (retried with backoff, /readyz saying why), not a start that fails; a database that does not exist, or a login the server refuses (no password, a wrong one), still stops it at once, saying what to fix', async (t) => {
  if (postgres.skipReason) return t.skip(postgres.skipReason);
  const databaseUrl = await postgres.server.createDatabase('waited');
  const target = new URL(databaseUrl);
  // The database's address, where nothing listens until the proxy below starts (a server still booting).
  const dbPort = await freePort();
  const viaProxy = new URL(databaseUrl);
  viaProxy.port = String(dbPort);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let started: TestRegistry | undefined;
  let failed: unknown;
  const starting = startTestRegistry({ DATABASE_URL: viaProxy.toString(), PORT: String(port) }).then(
    (r) => (started = r),
    (err: unknown) => (failed = err),
  );
  const proxy = net.createServer((socket) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  try {
    assert.equal((await firstAnswer(`${base}/healthz`)).status, 200);
    // Told why, and when it tries again, once the first attempt failed (it started the process as a crash loop).
    let reason = '';
    for (let i = 0; i < 100 && !/trying again/.test(reason); i++) {
      const ready = await fetch(`${base}/readyz`);
      assert.equal(ready.status, 503);
      reason = ((await ready.json()) as { reason: string }).reason;
      if (!/trying again/.test(reason)) await delay(100);
    }
    assert.match(reason, new RegExp(`^opening storage: Cannot connect to postgres://postgres@127\\.0\\.0\\.1:${dbPort}/\\S+: connect ECONNREFUSED .*; trying again at \\d{4}-`));
    // Requests are told the same, not that storage is opening or migrating.
    const refused = await rawPost(`${base}/a2a/jsonrpc`, sendMessageBody([{ data: { search: { query: 'waited' } }, mediaType: 'application/json' }], 'req-8'));
    assert.equal(refused.json!.error.data[0].reason, 'STARTING_UP');
    assert.equal(refused.headers.get('retry-after'), '2');
    const told = String(refused.json!.error.message);
    assert.match(told, new RegExp(`^The registry is starting up: opening storage: Cannot connect to postgres://postgres@127\\.0\\.0\\.1:${dbPort}/\\S+: connect ECONNREFUSED .*; trying again at \\d{4}-\\S+\\. Retry later\\.$`));
    assert.doesNotMatch(told, /migrat/);
    const rest = await rawPost(`${base}/a2a/rest/message:send`, JSON.stringify({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [] } }));
    assert.equal(rest.status, 503);
    assert.equal(rest.json!.error.details[0].reason, 'STARTING_UP');
    assert.match(rest.json!.error.message, /^The registry is starting up: opening storage: Cannot connect to .*ECONNREFUSED/);
    await delay(1500);
    assert.equal(failed, undefined, `the start failed: ${String(failed)}`);
    assert.equal(started, undefined);
    await new Promise<void>((resolve) => proxy.listen(dbPort, '127.0.0.1', () => resolve()));
    await Promise.race([starting, delay(40_000).then(() => assert.fail('not started within 40 s of the database answering'))]);
    // Set by the start's callback (the compiler saw it undefined since the check above).
    const running = started as TestRegistry | undefined;
    assert.ok(running, `the start failed: ${String(failed)}`);
    const client = await sdkClient(running.url, { token: TOKENS.alice });
    resultOf(await op(client, { register: { agentCard: v1Card('Waited Agent', 'https://waited.example.com/a2a') } }));
  } finally {
    await (started as TestRegistry | undefined)?.close();
    proxy.close();
  }
  // What waiting cannot fix: the start fails, with the message.
  const missing = new URL(databaseUrl);
  missing.pathname = '/no_such_database';
  // Said with what to do: the registry makes its tables, not the database (the server's words said neither).
  await assert.rejects(
    startTestRegistry({ DATABASE_URL: missing.toString() }),
    /database "no_such_database" does not exist; the registry creates its tables, not the database: create it first \(as a PostgreSQL superuser: CREATE DATABASE "no_such_database" OWNER "[^"]+"\), or fix DATABASE_URL/,
  );
  // Nor can it fix a login the server refuses: said with what to fix, never with the password.
  // (The server's client rules are this file's own server's, changed for one role alone.)
  if (!postgres.server.controllable) return;
  const role = `login_${process.pid}`;
  const admin = new pg.Client({ connectionString: postgres.server.url });
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'Right-Password-1'`);
    const { rows } = await admin.query<{ hba_file: string }>('SHOW hba_file');
    const rules = rows[0]!.hba_file;
    fs.writeFileSync(rules, `host all ${role} 127.0.0.1/32 scram-sha-256\n${fs.readFileSync(rules, 'utf8')}`);
    await admin.query('SELECT pg_reload_conf()');
  } finally {
    await admin.end();
  }
  // A role that may log in and open the database but not create in its schema (PostgreSQL 15's
  // default for a database the superuser made; revoked here for every version) stops the start
  // naming the database, the role and the grant that fixes it, not only "permission denied for schema public".
  const emptyUrl = await postgres.server.createDatabase('noschema');
  const bare = new URL(emptyUrl);
  bare.username = role;
  bare.password = 'Right-Password-1';
  const owner = new pg.Client({ connectionString: emptyUrl });
  await owner.connect();
  try {
    await owner.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
    await owner.query(`GRANT CONNECT ON DATABASE "${bare.pathname.slice(1)}" TO ${role}`);
  } finally {
    await owner.end();
  }
  await assert.rejects(startTestRegistry({ DATABASE_URL: bare.toString() }), (error: Error) => {
    assert.match(
      error.message,
      new RegExp(
        `^The registry cannot create or update its tables in the database at postgres://${role}:\\*\\*\\*@127\\.0\\.0\\.1:\\d+/\\S+: permission denied for schema public\\. ` +
          `Its role "${role}" needs to be allowed to create in the database's schema .*: as a superuser, in that database GRANT CREATE ON SCHEMA public TO "${role}", or \\(PostgreSQL 15 and later\\) make the role the database's owner, ALTER DATABASE "${bare.pathname.slice(1)}" OWNER TO "${role}"; then try again\\.$`,
      ),
    );
    return true;
  });
  // Its tables another role's (a dump restored by the superuser with --no-owner): said with whose they are, and the fix.
  const restoredAsSuperuser = new pg.Client({ connectionString: emptyUrl });
  await restoredAsSuperuser.connect();
  try {
    await restoredAsSuperuser.query(`GRANT CREATE ON SCHEMA public TO ${role}`);
    await restoredAsSuperuser.query('CREATE TABLE registry_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
  } finally {
    await restoredAsSuperuser.end();
  }
  await assert.rejects(startTestRegistry({ DATABASE_URL: bare.toString() }), (error: Error) => {
    assert.match(
      error.message,
      new RegExp(
        `^The registry cannot read or update its tables in the database at postgres://${role}:\\*\\*\\*@127\\.0\\.0\\.1:\\d+/\\S+: permission denied for table registry_migrations\\. ` +
          `Its tables belong to another role than "${role}" \\(they are "[^"]+"'s\\), as after a dump restored by another role with --no-owner: restore the dump into an empty database "${role}" owns, connected as "${role}" .*; then try again\\.$`,
      ),
    );
    return true;
  });
  // The tables another role's, which granted the registry's role every privilege but ownership: the
  // release before ran, but an upgrade's ALTER TABLE needs the owner. Before, only the server's
  // "must be owner of table tasks", naming neither the role nor the fix.
  const granted = await postgres.server.createDatabase('granted');
  await (await startTestRegistry({ DATABASE_URL: granted })).close();
  const grantor = new pg.Client({ connectionString: granted });
  await grantor.connect();
  try {
    const latest = await grantor.query<{ version: number }>('SELECT max(version) AS version FROM registry_migrations');
    await grantor.query('DELETE FROM registry_migrations WHERE version = $1', [latest.rows[0]!.version]);
    await grantor.query(`GRANT ALL ON ALL TABLES IN SCHEMA public TO ${role}`);
    await grantor.query(`GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
    await grantor.query(`GRANT CREATE ON SCHEMA public TO ${role}`);
  } finally {
    await grantor.end();
  }
  // The role that made the tables (the test server's superuser).
  const tablesOwner = decodeURIComponent(new URL(granted).username);
  const grantedAs = new URL(granted);
  grantedAs.username = role;
  grantedAs.password = 'Right-Password-1';
  await assert.rejects(startTestRegistry({ DATABASE_URL: grantedAs.toString() }), (error: Error) => {
    assert.match(
      error.message,
      new RegExp(
        `^The registry cannot change its tables' structure \\(a migration of this release\\) in the database at postgres://${role}:\\*\\*\\*@127\\.0\\.0\\.1:\\d+/\\S+: must be owner of table \\w+\\. ` +
          // The tables kept another role's on purpose: the migration is that role's to run (not "a dump restored with --no-owner").
          `Its tables belong to "${tablesOwner}", not to "${role}", and only their owner may alter them: apply this release's migrations connected as "${tablesOwner}" ` +
          `\\(start the registry once with DATABASE_URL naming "${tablesOwner}", then grant "${role}" on any table they add what it has on the others\\), ` +
          `or as a superuser make "${role}" the owner of each of its tables \\(ALTER TABLE \\.\\.\\. OWNER TO "${role}"\\); then try again\\.$`,
      ),
    );
    return true;
  });
  const login = new URL(databaseUrl);
  login.username = role;
  // Before, "SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string", naming neither the setting nor the cause.
  await assert.rejects(startTestRegistry({ DATABASE_URL: login.toString() }), (error: Error) => {
    assert.match(error.message, new RegExp(`^Cannot connect to postgres://${role}@127\\.0\\.0\\.1:\\d+/\\S+: SASL: .*; the database server asks for a password and the registry has none: give it in DATABASE_URL \\(postgres://user:password@host/database, or DATABASE_URL_FILE`));
    return true;
  });
  login.password = 'Wrong-Password-2';
  await assert.rejects(startTestRegistry({ DATABASE_URL: login.toString() }), (error: Error) => {
    assert.match(error.message, new RegExp(`^Cannot connect to postgres://${role}:\\*\\*\\*@127\\.0\\.0\\.1:\\d+/\\S+: password authentication failed for user "${role}"; the database server refuses the registry's credentials \\(was the password changed\\?\\): fix DATABASE_URL$`));
    assert.doesNotMatch(error.message, /Wrong-Password/);
    return true;
  });
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal} while storage waits to open (a PostgreSQL server not reachable) stops the registry at once, exit 0, saying it stopped before it was ready`, async () => {
    ensureBuilt();
    const port = await freePort();
    // A closed port on this machine: every attempt is refused, and the registry waits to try again.
    const databaseUrl = `postgres://registry@127.0.0.1:${await freePort()}/registry`;
    const child = spawn(process.execPath, [path.join(REPO_ROOT, BUILT_MAIN)], {
      cwd: REPO_ROOT,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', REGISTRY_DATA_DIR: tempDir(), REGISTRY_TOKENS: TOKENS_ENV, DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const messages: string[] = [];
      const exited = new Promise<number | string>((resolve) => child.on('exit', (code, sig) => resolve(code ?? sig ?? -1)));
      const outputEnded = new Promise<void>((resolve) => child.once('close', () => resolve()));
      const waiting = new Promise<void>((resolve, reject) => {
        readline.createInterface({ input: child.stdout! }).on('line', (line) => {
          const msg = String((JSON.parse(line) as { msg: unknown }).msg);
          messages.push(msg);
          if (msg.startsWith('storage could not be opened; trying again')) resolve();
        });
        void exited.then((code) => reject(new Error(`exited (${code}) before waiting for storage: ${messages.join(' | ')}`)));
      });
      await waiting;
      assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200, 'it listens meanwhile');
      // A SIGHUP meanwhile (systemctl reload, a log rotation's kill -HUP) stops nothing: it ended
      // the registry with 129, without a word, until the trust roots, which it reloads, had loaded.
      child.kill('SIGHUP');
      assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200, 'a SIGHUP does not stop it');
      const signalled = performance.now();
      child.kill(signal);
      const code = await Promise.race([exited, delay(5000).then(() => 'still running 5 s after the signal')]);
      const took = performance.now() - signalled;
      await outputEnded;
      assert.equal(code, 0, `a stop asked for: ${messages.join(' | ')}`);
      assert.ok(took < 3000, `stopped in ${Math.round(took)} ms`);
      assert.equal(messages.at(-1), 'registry stopped before it was ready');
      await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`), 'nothing listens any more');
    } finally {
      child.kill('SIGKILL');
    }
  });
}

// Handled from the first line of `npm start` and of `a2a-registry serve`, not only once run-server.ts
// is loaded, half a second or more later: meanwhile a SIGTERM ended the process with 143 and no
// word or, as PID 1 in a container, was dropped, the registry starting anyway.
for (const [how, entry] of [
  ['npm start (dist/src/main.js)', [BUILT_MAIN]],
  ['a2a-registry serve', [BIN, 'serve']],
] as const) {
  test(`SIGTERM while ${how} loads the registry's modules ends the start before anything opens, exit 0, saying it stopped before it was ready`, async () => {
    ensureBuilt();
    const dataDir = tempDir();
    // A loader hook in the registry's process holds its import of run-server.js (the module that
    // stops it on a signal) until a byte comes on standard input, having said so on standard
    // error: the signal is sent while the registry's modules load, where none was handled.
    const hook = path.join(tempDir(), 'hold-run-server.mjs');
    fs.writeFileSync(
      hook,
      `import { registerHooks } from 'node:module'; import { readSync, writeSync } from 'node:fs';\n` +
        `registerHooks({ resolve(specifier, context, next) {\n` +
        `  if (specifier.endsWith('/run-server.js')) { writeSync(2, 'importing run-server.js\\n'); readSync(0, Buffer.alloc(1)); }\n` +
        `  return next(specifier, context);\n` +
        `} });\n`,
    );
    const [script, ...args] = entry;
    const child = spawn(process.execPath, ['--import', pathToFileURL(hook).href, path.join(REPO_ROOT, script), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, PORT: String(await freePort()), HOST: '127.0.0.1', LOG_LEVEL: 'info', REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: TOKENS_ENV },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    try {
      const lines: { msg?: unknown; signal?: unknown }[] = [];
      readline.createInterface({ input: child.stdout! }).on('line', (line) => lines.push(JSON.parse(line) as { msg?: unknown }));
      const exited = new Promise<number | string>((resolve) => child.on('exit', (code, sig) => resolve(code ?? sig ?? -1)));
      const outputEnded = new Promise<void>((resolve) => child.once('close', () => resolve()));
      let stderr = '';
      await new Promise<void>((resolve, reject) => {
        child.stderr!.setEncoding('utf8').on('data', (d: string) => {
          stderr += d;
          if (stderr.includes('importing run-server.js\n')) resolve();
        });
        void exited.then((code) => reject(new Error(`exited (${code}) before importing run-server.js: ${stderr}`)));
      });
      child.kill('SIGTERM');
      child.stdin!.end('\n'); // the import goes on
      const code = await Promise.race([exited, delay(10_000).then(() => 'still running 10 s after the signal')]);
      await outputEnded;
      assert.equal(code, 0, `a stop asked for: ${JSON.stringify(lines)} ${stderr}`);
      assert.equal(lines.at(-1)?.msg, 'registry stopped before it was ready');
      assert.equal(lines.at(-1)?.signal, 'SIGTERM');
      assert.ok(!lines.some((line) => line.msg === 'registry listening'), 'it never listened');
      assert.ok(!fs.existsSync(path.join(dataDir, 'registry.db')), 'its storage was never opened');
    } finally {
      child.kill('SIGKILL');
    }
  });
}

test('a stop asked for while an attempt to open storage is under way is not held up by it; what the attempt opened is closed once it is done', async () => {
  let finishOpening: () => void = () => undefined;
  let closed = false;
  // A connection attempt that takes its time (a host that does not answer), then succeeds.
  const store = {
    engine: 'postgres',
    open: () => new Promise<void>((resolve) => (finishOpening = resolve)),
    close: async () => {
      closed = true;
    },
  } as unknown as RegistryStore;
  const stop = new AbortController();
  const opening = openStorage(store, createLogger('silent'), { signal: stop.signal });
  await delay(50);
  stop.abort();
  await assert.rejects(opening, StartStopped);
  assert.equal(closed, false, 'the attempt is still under way');
  finishOpening();
  await delay(10);
  assert.equal(closed, true, 'the store it opened is closed');
});
