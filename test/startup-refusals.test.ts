/**
 * Settings the registry refuses at start-up, as `npm start` runs it (the built dist/ in a process
 * of its own): one line on standard error naming the setting and what to change, exit 2 for the
 * configuration (1 when it could not start), and the data directory left without an admin token.
 *
 * - PUBLIC_URL with a query, a fragment or a user name and password: every URL the card publishes
 *   is PUBLIC_URL with a path appended, so they ended up inside each of them.
 * - REGISTRY_EMBEDDINGS_URL with a user name and password: never sent (the outbound guard fetches
 *   no such URL), so hybrid ranking never worked, while the log showed the password.
 * - An admin-token file in the data directory with whitespace inside the token: no
 *   Authorization header can carry it (REGISTRY_ADMIN_TOKEN_FILE's is refused alike).
 * - A data directory under a directory its user may not enter: the start said only "EACCES:
 *   permission denied, stat", the explanation of the refusal having failed itself.
 * - A refused start (the data directory's lock held by another registry; a bad signing key,
 *   trusted keys or synonyms file) wrote a generated admin token first.
 * - PORT or GRPC_PORT in use: the refused start left the data directory it made (for GRPC_PORT,
 *   found once storage had opened, with the database and a generated admin token in it).
 * - A file a setting names (REGISTRY_TRUSTED_KEYS, REGISTRY_SIGNING_KEY, REGISTRY_SYNONYMS,
 *   REGISTRY_ADMIN_TOKEN_FILE) missing, a directory or not what it takes, and a HOST that is no
 *   address of this machine, exited 1 "could not start", some without the variable named, a
 *   file's text quoted over several lines.
 * - REGISTRY_REQUIRE_VERIFIED with a keys file holding no usable key (and no REGISTRY_TRUSTED_JKU):
 *   it started, then hid every agent and refused every registration; where an allow-listed JWKS
 *   may give a key later, a warning says so.
 * - REGISTRY_TRUST_PROXY: digits are a hop count (100, 010 were taken for IP addresses);
 *   what is neither a count nor an address in its usual notation (0x10, 10.1) is refused.
 *
 * - DATABASE_URL with whitespace around it: refused as the path settings are (it was refused as
 *   no postgres:// URL, and shown without the whitespace, its password masked).
 * - REGISTRY_METRICS_TOKEN equal to the admin token the registry generated in its data directory:
 *   refused only when the admin token was configured, so whoever scraped /metrics could act as
 *   the admin.
 *
 * And what is not refused but said: a misspelt REGISTRY_ setting, with the setting it likely meant;
 * a variable set but empty (taken as unset), with what is taken instead; a setting without the
 * one it needs (REGISTRY_EMBEDDINGS_KEY without REGISTRY_EMBEDDINGS_URL), which has no effect.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig, loadImportConfig, loadStorageLocation } from '../src/config/config.js';
import { generateSigningKey } from '../src/trust/jwks.js';
import { BUILT_MAIN, REPO_ROOT, ensureBuilt } from './support/built.js';
import { loadedModules, recordingLoadedModules, serverModules } from './support/loaded-modules.js';
import { TOKENS, TOKENS_ENV, spawnRegistry } from './support/registry.js';
import { tempDir } from './support/temp.js';

interface Refusal {
  code: number | string;
  stderr: string;
}

/** Starts the built registry with `env` (over a free port and its own data directory), expecting it to stop by itself; as user `uid` if given. */
function startRefused(env: Record<string, string>, uid?: number): Promise<Refusal> {
  ensureBuilt();
  const child = spawn(process.execPath, [path.join(REPO_ROOT, BUILT_MAIN)], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', REGISTRY_DATA_DIR: tempDir(), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(uid === undefined ? {} : { uid, gid: uid }),
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal ?? -1, stderr });
    }),
  );
}

/**
 * `start` for each of `items`, at most `limit` at a time, the results in `items`' order: a
 * refused start waits on a process reading and loading the registry's modules, so two overlap;
 * more only queue on CI's two cores, which the other test files share.
 */
async function eachStarted<T, R>(items: readonly T[], start: (item: T) => Promise<R>, limit = 2): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await start(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Refused with exit `code` and one line on stderr, matching `line`. */
function assertRefused(refusal: Refusal, code: number, line: RegExp): void {
  assert.equal(refusal.code, code, refusal.stderr);
  assert.equal(refusal.stderr.split('\n').length, 2, `one line: ${refusal.stderr}`);
  assert.match(refusal.stderr, line);
}

const refusedConfig = (env: Record<string, string | undefined>): string => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  return assert.fail(`accepted: ${JSON.stringify(env)}`);
};

test('PUBLIC_URL with a query, a fragment or a user name and password is refused, saying what to remove; a path is fine', async () => {
  const [query, credentials] = await Promise.all([startRefused({ PUBLIC_URL: 'http://reg.example.com?x=1' }), startRefused({ PUBLIC_URL: 'http://user:S3CRET@reg.example.com' })]);
  assertRefused(
    query,
    2,
    /^a2a-registry: invalid configuration: PUBLIC_URL must be the base URL peers reach the registry at, without a query or fragment \(got "http:\/\/reg\.example\.com\?x=1"\): the card's URLs are paths appended to it; remove "\?x=1"\n$/,
  );
  assertRefused(credentials, 2, /^a2a-registry: invalid configuration: PUBLIC_URL must not carry a user name or password \(got "http:\/\/user:\*\*\*@reg\.example\.com\/"\): .*remove "user:…@"/);
  assert.doesNotMatch(credentials.stderr, /S3CRET/, 'the password is not shown');

  assert.match(refusedConfig({ PUBLIC_URL: 'https://reg.example.com/base#top' }), /PUBLIC_URL must be the base URL .*remove "#top"$/);
  assert.match(refusedConfig({ PUBLIC_URL: 'https://reg.example.com/?' }), /PUBLIC_URL must be the base URL .*remove "\?"$/);
  assert.match(refusedConfig({ PUBLIC_URL: 'https://user@reg.example.com' }), /PUBLIC_URL must not carry a user name or password .*remove "user@"/);
  assert.equal(loadConfig({ PUBLIC_URL: 'https://reg.example.com/registry/' }).publicUrl, 'https://reg.example.com/registry');
  // The MCP endpoint's extra host names as Host headers carry them: ASCII, without the root's dot (one was refused, the other never matched).
  assert.deepEqual(loadConfig({ REGISTRY_MCP_ALLOWED_HOSTS: 'Bücher.example, registry.internal., [::1]' }).mcpAllowedHosts, ['xn--bcher-kva.example', 'registry.internal', '[::1]']);
  // The gRPC address has no such gap: host:port only.
  for (const PUBLIC_GRPC_URL of ['grpc.example.com:443?x=1', 'user:pw@grpc.example.com:443', 'grpc.example.com:443#x']) {
    assert.match(refusedConfig({ GRPC_PORT: '0', PUBLIC_GRPC_URL }), /^invalid configuration: PUBLIC_GRPC_URL must be the gRPC address clients dial/, PUBLIC_GRPC_URL);
  }
});

test('REGISTRY_EMBEDDINGS_URL with a user name or password is refused, its password not shown, pointing at REGISTRY_EMBEDDINGS_KEY', async () => {
  const credentials = await startRefused({ REGISTRY_EMBEDDINGS_URL: 'http://embuser:EmbUrlSecret99@127.0.0.1:11434/v1' });
  assertRefused(
    credentials,
    2,
    /^a2a-registry: invalid configuration: REGISTRY_EMBEDDINGS_URL must not carry a user name or password \(got "http:\/\/embuser:\*\*\*@127\.0\.0\.1:11434\/v1"\): .*remove "embuser:…@" and give the service's key in REGISTRY_EMBEDDINGS_KEY/,
  );
  assert.doesNotMatch(credentials.stderr, /EmbUrlSecret99/, 'the password is not shown');
  assert.match(refusedConfig({ REGISTRY_EMBEDDINGS_URL: 'https://embuser@embeddings.example.com/v1' }), /REGISTRY_EMBEDDINGS_URL must not carry a user name or password .*remove "embuser@"/);
  assert.match(refusedConfig({ REGISTRY_EMBEDDINGS_URL: 'https://:EmbUrlSecret99@embeddings.example.com/v1?api-key=QuerySecret77' }), /\(got "https:\/\/:\*\*\*@embeddings\.example\.com\/v1\?api-key=\*\*\*"\): .*remove ":…@"/);
  // A key in the query is the service's business: accepted (and masked where the URL is shown, search-hybrid.test).
  assert.equal(loadConfig({ REGISTRY_EMBEDDINGS_URL: 'https://embeddings.example.com/v1?api-key=k' }).search.embeddings?.url, 'https://embeddings.example.com/v1?api-key=k');
});

test('an admin-token file in the data directory with whitespace inside the token is refused, as REGISTRY_ADMIN_TOKEN_FILE\'s is', async () => {
  const dataDir = tempDir();
  const file = path.join(dataDir, 'admin-token');
  fs.writeFileSync(file, 'abcdefghijklmnop qrstuvwxyz\n', { mode: 0o600 });
  const [inDataDir, named] = await Promise.all([startRefused({ REGISTRY_DATA_DIR: dataDir }), startRefused({ REGISTRY_ADMIN_TOKEN_FILE: file })]);
  assertRefused(
    inDataDir,
    1,
    new RegExp(
      `^a2a-registry: could not start: the admin token in ${file} contains whitespace, which no "Authorization: Bearer <token>" header can carry: a token is one word; remove the spaces, or delete the file and the registry generates one\\.\\n$`,
    ),
  );
  assert.equal(fs.readFileSync(file, 'utf8'), 'abcdefghijklmnop qrstuvwxyz\n', 'the file is left as it was');
  assertRefused(named, 2, /^a2a-registry: invalid configuration: the token on the first line of REGISTRY_ADMIN_TOKEN_FILE .* contains whitespace, which no "Authorization: Bearer <token>" header can carry/);
});

test('a data directory under a directory its user may not enter names that directory (the start said only "EACCES: permission denied, stat")', async () => {
  // /srv/registry (mode 0700, another owner)/data: the explanation of the refusal stat()ed the data
  // directory, which threw EACCES itself. As root (who enters anything) the registry runs as nobody.
  const asRoot = process.getuid?.() === 0;
  const uid = asRoot ? 65534 : process.getuid!();
  const root = tempDir();
  fs.chmodSync(root, 0o755);
  const closed = path.join(root, 'closed');
  fs.mkdirSync(closed, { mode: 0o700 });
  if (!asRoot) fs.chmodSync(closed, 0o000);
  const dataDir = path.join(closed, 'data');
  try {
    const refused = await startRefused({ REGISTRY_DATA_DIR: dataDir }, asRoot ? uid : undefined);
    assertRefused(
      refused,
      1,
      new RegExp(
        `^a2a-registry: could not start: cannot open the database file ${dataDir}/registry\\.db for writing \\(EACCES: [^)]*\\): ` +
          `user \\S+ \\(uid ${uid}\\) may not enter the directory ${closed} \\(owned by uid \\d+, mode 0[07]00\\)\\. Check that REGISTRY_DATA_DIR \\(${dataDir}\\)`,
      ),
    );
  } finally {
    fs.chmodSync(closed, 0o700);
  }
});

test('a refused start writes no admin token: another registry holds the data directory, or a key, trust or synonym file is bad', async (t) => {
  // The first registry has its tokens: there is no admin-token file in its data directory.
  // (The bad files' refusals, below, start meanwhile: each has a data directory of its own.)
  const lockHeld = (async () => {
    const dataDir = tempDir();
    const first = await spawnRegistry({ REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: TOKENS_ENV }, { listeningOnly: true });
    t.after(() => first.stop('SIGKILL'));
    const second = await startRefused({ REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: '' });
    assert.equal(second.code, 1, second.stderr);
    assert.match(second.stderr, /another registry process is already serving the SQLite database/);
    assert.ok(!fs.existsSync(path.join(dataDir, 'admin-token')), 'no admin token in the other registry\'s data directory');
    assert.ok(fs.existsSync(path.join(dataDir, 'registry.db.lock')), 'the lock the other registry holds stays');
    await first.stop();
  })();

  const files = tempDir();
  const notJson = path.join(files, 'not-json');
  fs.writeFileSync(notJson, 'not JSON');
  // A P-256 key whose "alg" says ES384 (or RS256): it failed only when the card was signed, after
  // the data directory and its admin token had been made, and without naming the variable.
  const { privateJwk } = await generateSigningKey('ES256', 'mislabelled');
  const wrongAlg = path.join(files, 'wrong-alg.json');
  fs.writeFileSync(wrongAlg, JSON.stringify({ ...privateJwk, alg: 'ES384' }));
  const rsaAlg = path.join(files, 'rsa-alg.json');
  fs.writeFileSync(rsaAlg, JSON.stringify({ ...privateJwk, alg: 'RS256' }));
  const badFiles = [
    ['REGISTRY_SIGNING_KEY', notJson, /^a2a-registry: invalid configuration: REGISTRY_SIGNING_KEY: .*not-json is not JSON; correct it, or set REGISTRY_SIGNING_KEY to the path of a private JWK file/],
    ['REGISTRY_SIGNING_KEY', wrongAlg, /^a2a-registry: invalid configuration: REGISTRY_SIGNING_KEY: .*wrong-alg\.json: its "alg" "ES384" does not fit the key, an EC key on curve "P-256", which signs with ES256/],
    ['REGISTRY_SIGNING_KEY', rsaAlg, /^a2a-registry: invalid configuration: REGISTRY_SIGNING_KEY: .*rsa-alg\.json: its "alg" "RS256" does not fit the key/],
    ['REGISTRY_TRUSTED_KEYS', notJson, /^a2a-registry: invalid configuration: REGISTRY_TRUSTED_KEYS: .*not-json is not JSON; correct it, or set REGISTRY_TRUSTED_KEYS to the path of a JWKS file/],
    ['REGISTRY_SYNONYMS', path.join(files, 'missing.txt'), /^a2a-registry: invalid configuration: REGISTRY_SYNONYMS: .*missing\.txt does not exist; set REGISTRY_SYNONYMS to the path of a synonym file/],
  ] as const;
  const refusals = eachStarted(badFiles, async ([name, value]) => {
    const fresh = path.join(tempDir(), 'data');
    return { fresh, refused: await startRefused({ REGISTRY_DATA_DIR: fresh, REGISTRY_TOKENS: '', [name]: value }) };
  });
  await lockHeld;
  for (const [i, { fresh, refused }] of (await refusals).entries()) {
    const [name, , said] = badFiles[i]!;
    assertRefused(refused, 2, said);
    assert.ok(!fs.existsSync(path.join(fresh, 'admin-token')), `${name}: no admin token written`);
  }
});

test('a start refused because PORT is in use leaves no data directory or lock file it made behind (a mistyped PORT left a new, empty data directory); what was there before stays', async (t) => {
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.after(() => taken.close());
  const port = String((taken.address() as AddressInfo).port);
  const root = tempDir();
  // Made by the start: the data directory and a directory above it.
  const fresh = path.join(root, 'made', 'data');
  // There before: the directory (with a file of its own); the lock file in it is the start's.
  const existing = path.join(root, 'existing');
  fs.mkdirSync(existing);
  fs.writeFileSync(path.join(existing, 'notes.txt'), 'kept');
  const refusals = await eachStarted([fresh, existing], (dataDir) => startRefused({ PORT: port, REGISTRY_DATA_DIR: dataDir }));
  for (const refused of refusals) assertRefused(refused, 1, new RegExp(`^a2a-registry: could not start: port ${port} on 127\\.0\\.0\\.1 is already in use: stop what uses it, or set PORT to another port`));
  assert.deepEqual(fs.readdirSync(root).sort(), ['existing'], 'the directories the start made are gone');
  assert.deepEqual(fs.readdirSync(existing), ['notes.txt'], 'the lock file the start made is gone, the directory that was there stays');
});

test('a start refused because GRPC_PORT is in use leaves nothing behind (found once storage had opened, it left a new data directory with its database and a generated admin token)', async (t) => {
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.after(() => taken.close());
  const port = String((taken.address() as AddressInfo).port);
  const root = tempDir();
  const refused = await startRefused({ GRPC_PORT: port, REGISTRY_DATA_DIR: path.join(root, 'data') });
  assertRefused(refused, 1, new RegExp(`^a2a-registry: could not start: gRPC port ${port} on 127\\.0\\.0\\.1 is already in use: stop what uses it, or set GRPC_PORT to another port \\(.*EADDRINUSE`));
  assert.deepEqual(fs.readdirSync(root), [], 'no data directory, database or admin token');
});

test('a file a setting names that cannot be used is invalid configuration: exit 2, one line naming the variable, the file, what is wrong and the fix', async () => {
  const files = tempDir();
  const missing = path.join(files, 'nonexist.json');
  const notJwks = path.join(files, 'not-jwks.json');
  fs.writeFileSync(notJwks, '{}');
  // The parser's message quoted the text, newlines and all (and so would show a private key's).
  const twoLines = path.join(files, 'two-lines.json');
  fs.writeFileSync(twoLines, 'not json\n"d": "PrivateKeyPart"\n');
  const empty = path.join(files, 'empty.json');
  fs.writeFileSync(empty, '');
  const cases = [
    ['REGISTRY_TRUSTED_KEYS', missing, /^a2a-registry: invalid configuration: REGISTRY_TRUSTED_KEYS: .*nonexist\.json does not exist; set REGISTRY_TRUSTED_KEYS to the path of a JWKS file of the public keys whose card signatures are trusted/],
    ['REGISTRY_TRUSTED_KEYS', files, /^a2a-registry: invalid configuration: REGISTRY_TRUSTED_KEYS: .* is a directory, not a file; set REGISTRY_TRUSTED_KEYS to the path of a JWKS file/],
    ['REGISTRY_TRUSTED_KEYS', notJwks, /^a2a-registry: invalid configuration: REGISTRY_TRUSTED_KEYS: .*not-jwks\.json is not a JSON Web Key Set \(\{"keys": \[\.\.\.\]\}\); correct it, or set REGISTRY_TRUSTED_KEYS/],
    ['REGISTRY_TRUSTED_KEYS', twoLines, /^a2a-registry: invalid configuration: REGISTRY_TRUSTED_KEYS: .*two-lines\.json is not JSON; correct it/],
    ['REGISTRY_TRUSTED_KEYS', empty, /^a2a-registry: invalid configuration: REGISTRY_TRUSTED_KEYS: .*empty\.json is empty, not JSON; correct it/],
    ['REGISTRY_SIGNING_KEY', missing, /^a2a-registry: invalid configuration: REGISTRY_SIGNING_KEY: .*nonexist\.json does not exist; set REGISTRY_SIGNING_KEY to the path of a private JWK file/],
    ['REGISTRY_SIGNING_KEY', twoLines, /^a2a-registry: invalid configuration: REGISTRY_SIGNING_KEY: .*two-lines\.json is not JSON; correct it/],
    ['REGISTRY_SYNONYMS', missing, /^a2a-registry: invalid configuration: REGISTRY_SYNONYMS: .*nonexist\.json does not exist; set REGISTRY_SYNONYMS to the path of a synonym file/],
    ['REGISTRY_ADMIN_TOKEN_FILE', files, /^a2a-registry: invalid configuration: REGISTRY_ADMIN_TOKEN_FILE: .* is a directory, not a file; set REGISTRY_ADMIN_TOKEN_FILE to the path of a file whose first line is the admin token/],
    // Found only when it listens: no name the resolver knows, no address of this machine.
    ['HOST', '999.1.1.1', /^a2a-registry: invalid configuration: HOST 999\.1\.1\.1 is no name this machine can resolve: set HOST to an address of this machine/],
  ] as const;
  const refusals = await eachStarted(cases, ([name, value]) => startRefused({ REGISTRY_TOKENS: '', REGISTRY_ADMIN_TOKEN: '', [name]: value }));
  for (const [i, refused] of refusals.entries()) {
    assertRefused(refused, 2, cases[i]![2]);
    assert.doesNotMatch(refused.stderr, /PrivateKeyPart/, 'the file\'s text is not shown');
  }
});

test('a setting found bad only once used (HOST, a key or trust file, a data directory that cannot be made) is refused before the server\'s modules load (they took a second of CPU first, a typo\'s refusal five times what loadConfig\'s takes), and before SQLite\'s driver loads', async () => {
  const files = tempDir();
  const notJson = path.join(files, 'not-json');
  fs.writeFileSync(notJson, 'not JSON');
  const emptySet = path.join(files, 'empty-set.json');
  fs.writeFileSync(emptySet, '{"keys":[]}');
  const cases = [
    [{ HOST: '999.1.1.1' }, 2, /^a2a-registry: invalid configuration: HOST 999\.1\.1\.1 is no name this machine can resolve/],
    [{ REGISTRY_SIGNING_KEY: notJson }, 2, /^a2a-registry: invalid configuration: REGISTRY_SIGNING_KEY: .*not-json is not JSON/],
    [{ REGISTRY_REQUIRE_VERIFIED: 'true', REGISTRY_TRUSTED_KEYS: emptySet }, 2, /^a2a-registry: invalid configuration: REGISTRY_REQUIRE_VERIFIED=true needs a key to verify cards with/],
    [{ REGISTRY_DATA_DIR: path.join(notJson, 'data') }, 1, /^a2a-registry: could not start: cannot open the database file .*not-json\/data\/registry\.db for writing \(ENOTDIR: [^)]*\): .*not-json is a file, not a directory\./],
    // On PostgreSQL (nothing listens on port 1: refused before connecting).
    [{ DATABASE_URL: 'postgres://registry@127.0.0.1:1/registry', REGISTRY_SIGNING_KEY: notJson }, 2, /^a2a-registry: invalid configuration: REGISTRY_SIGNING_KEY: .*not-json is not JSON/],
  ] as const;
  const refusals = await eachStarted(cases, async ([env]) => {
    const report = path.join(tempDir(), 'loaded');
    const refused = await startRefused({ ...env, NODE_OPTIONS: recordingLoadedModules(report) });
    return { refused, loaded: loadedModules(report) };
  });
  for (const [i, { refused, loaded }] of refusals.entries()) {
    assertRefused(refused, cases[i]![1], cases[i]![2]);
    assert.ok(loaded.some((url) => url.endsWith('/dist/src/config/config.js')), `the modules were seen: ${loaded.join(' ')}`);
    assert.deepEqual(serverModules(loaded), [], `${Object.keys(cases[i]![0]).join(', ')}: refused before the server's modules load`);
    // Nor SQLite's driver and its native addon: the checks make the data directory and its lock file
    // with the file system alone (they loaded better-sqlite3 on PostgreSQL too, which never uses it).
    assert.deepEqual(loaded.filter((url) => url.includes('/node_modules/better-sqlite3/')), [], `${Object.keys(cases[i]![0]).join(', ')}: no SQLite driver loaded`);
  }
});

test('REGISTRY_REQUIRE_VERIFIED with no usable trusted key: refused when only the keys file could give one; said at warn level when an allow-listed JWKS may give one later', async (t) => {
  const files = tempDir();
  const emptySet = path.join(files, 'empty-set.json');
  fs.writeFileSync(emptySet, '{"keys":[]}');
  const unsupported = path.join(files, 'unsupported.json');
  fs.writeFileSync(unsupported, '{"keys":[{"kty":"XX"},{"kty":"oct","kid":"hmac","k":"c2VjcmV0"}]}');
  // The refused starts and the two registries below start side by side: each has its own data directory.
  const refusedStarts = Promise.all([
    startRefused({ REGISTRY_REQUIRE_VERIFIED: 'true', REGISTRY_TRUSTED_KEYS: emptySet }),
    startRefused({ REGISTRY_REQUIRE_VERIFIED: 'true', REGISTRY_TRUSTED_KEYS: unsupported }),
  ]);
  const allowListed = (async () => {
    // An allow-listed JWKS that gives no key now (empty, or its server down) may give one later: warned.
    let served: unknown = { keys: [] };
    const jwks = http.createServer((_req, res) => res.setHeader('content-type', 'application/json').end(JSON.stringify(served)));
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    t.after(() => jwks.close());
    const jku = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
    const registry = await spawnRegistry({ REGISTRY_TOKENS: TOKENS_ENV, REGISTRY_REQUIRE_VERIFIED: 'true', REGISTRY_TRUSTED_KEYS: emptySet, REGISTRY_TRUSTED_JKU: jku, REGISTRY_FETCH_ALLOW: '127.0.0.1' });
    try {
      const line = registry.logs.find((l) => String(l.msg).startsWith('trust roots loaded'));
      assert.equal(line?.level, 40, JSON.stringify(line));
      assert.equal(line?.keys, 0);
      assert.match(String(line?.msg), /^trust roots loaded, no trusted key: with REGISTRY_REQUIRE_VERIFIED=true every stored agent is hidden from discovery and every registration refused \(SIGNATURE_INVALID\) until an allow-listed JWKS \(REGISTRY_TRUSTED_JKU\) gives one$/);
      // /readyz says it too (it said ready): not ready, as the keys file alone may not start so, until the JWKS gives a key.
      const unready = await fetch(`${registry.url}/readyz`);
      assert.equal(unready.status, 503);
      assert.deepEqual(await unready.json(), { status: 'not ready', reason: String(line?.msg).replace(/^trust roots loaded, /, '') });
      served = { keys: [(await generateSigningKey('ES256', 'later')).publicJwk] };
      registry.child.kill('SIGHUP');
      let ready: unknown;
      for (let tries = 0; tries < 100 && (ready as { status?: string } | undefined)?.status !== 'ready'; tries++) {
        if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 100));
        ready = await (await fetch(`${registry.url}/readyz`)).json();
      }
      assert.deepEqual(ready, { status: 'ready' });
    } finally {
      await registry.stop();
    }
  })();
  const unverified = (async () => {
    // Without REGISTRY_REQUIRE_VERIFIED nothing is hidden, but no signature can verify: said too, and
    // by /readyz beside "ready" (it said nothing).
    const unverifying = await spawnRegistry({ REGISTRY_TOKENS: TOKENS_ENV, REGISTRY_TRUSTED_KEYS: unsupported });
    try {
      const line = unverifying.logs.find((l) => String(l.msg).startsWith('trust roots loaded'));
      assert.equal(line?.level, 40, JSON.stringify(line));
      assert.match(String(line?.msg), /no card signature can verify \(every card is registered unverified\) until REGISTRY_TRUSTED_KEYS holds one$/);
      const warned = await fetch(`${unverifying.url}/readyz`);
      assert.equal(warned.status, 200);
      assert.deepEqual(await warned.json(), { status: 'ready', warnings: [String(line?.msg).replace(/^trust roots loaded, /, '')] });
    } finally {
      await unverifying.stop();
    }
  })();
  // Both registries' checks run to their end, whatever fails first (none is left running).
  const registriesChecked = Promise.allSettled([allowListed, unverified]);
  const [emptyRefused, unsupportedRefused] = await refusedStarts;
  // It started, said "keys":0 at info level, then hid every stored agent and refused every registration.
  assertRefused(
    emptyRefused,
    2,
    /^a2a-registry: invalid configuration: REGISTRY_REQUIRE_VERIFIED=true needs a key to verify cards with, and REGISTRY_TRUSTED_KEYS \(.*empty-set\.json\) holds no usable one \(its "keys" list is empty\), so every agent would be hidden and every registration refused: add a public EC, OKP or RSA key with a "kid" to the file, set REGISTRY_TRUSTED_JKU to allow-listed JWKS URLs, or unset REGISTRY_REQUIRE_VERIFIED\n$/,
  );
  assertRefused(
    unsupportedRefused,
    2,
    /^a2a-registry: invalid configuration: REGISTRY_REQUIRE_VERIFIED=true needs a key .* holds no usable one \(keys\[0\] is not trusted: key type "XX" is not supported \(EC, OKP or RSA\), and 1 more left out\)/,
  );
  for (const outcome of await registriesChecked) if (outcome.status === 'rejected') throw outcome.reason;
});

test('REGISTRY_TRUST_PROXY: digits are a hop count (100 and 010 were addresses); what is neither a count nor an address is refused', async () => {
  const trustProxy = (value: string) => loadConfig({ REGISTRY_TRUST_PROXY: value }).hardening.trustProxy;
  assert.equal(trustProxy('010'), 10);
  assert.equal(trustProxy('2'), 2);
  assert.equal(trustProxy('99'), 99);
  assert.deepEqual(trustProxy('10.0.0.0/8,loopback,fd00::/8,192.0.2.1'), ['10.0.0.0/8', 'loopback', 'fd00::/8', '192.0.2.1']);
  assert.match(refusedConfig({ REGISTRY_TRUST_PROXY: '100' }), /^invalid configuration: REGISTRY_TRUST_PROXY is 100 proxy hops, more than any chain of proxies \(at most 99\)/);
  for (const value of ['0x10', '10.1', '010.0.0.1', '10.0.0.0/0x8', '[::1]']) {
    assert.match(refusedConfig({ REGISTRY_TRUST_PROXY: value }), /^invalid configuration: REGISTRY_TRUST_PROXY "[^"]+" is no proxy address \(IPv4 in four decimal numbers/, value);
  }
  assertRefused(await startRefused({ REGISTRY_TRUST_PROXY: '0x10' }), 2, /^a2a-registry: invalid configuration: REGISTRY_TRUST_PROXY "0x10" is no proxy address .*\(got "0x10"\)\n$/);
});

test('a REGISTRY_ variable that is no setting is a start-up warning naming the setting meant, also one without the prefix (REGISTRY_PORT: PORT, not REGISTRY_PROBE); so are an empty variable and a setting without the one it needs', async () => {
  const registry = await spawnRegistry({
    REGISTRY_TOKENS: TOKENS_ENV,
    REGISTRY_PORT: '9000',
    REGISTRY_HOST: '0.0.0.0',
    REGISTRY_PUBLIC_URL: 'https://reg.example.com',
    REGISTRY_PUBLIC_REED: 'false',
    REGISTRY_PASSWORD: 'x',
    DATABASE_URL: '',
    REGISTRY_EMBEDDINGS_KEY: 'embeddings-key-never-shown',
  });
  try {
    const warnings = registry.logs.filter((l) => l.level === 40).map((l) => String(l.msg));
    // Logged as the other start-up warnings (the texts: the tests below).
    assert.ok(warnings.some((w) => w.startsWith('DATABASE_URL is set but empty: taken as unset, so SQLite in ')), JSON.stringify(warnings));
    assert.ok(warnings.some((w) => w.startsWith('REGISTRY_EMBEDDINGS_KEY is set but has no effect without REGISTRY_EMBEDDINGS_URL')), JSON.stringify(warnings));
    assert.ok(!JSON.stringify(registry.logs).includes('embeddings-key-never-shown'), 'values are never shown');
    const said = (name: string): string | undefined => warnings.find((w) => w.startsWith(`${name} is not a setting of the registry and is ignored`));
    for (const [name, meant] of [['REGISTRY_PORT', 'PORT'], ['REGISTRY_HOST', 'HOST'], ['REGISTRY_PUBLIC_URL', 'PUBLIC_URL'], ['REGISTRY_PUBLIC_REED', 'REGISTRY_PUBLIC_READ']] as const) {
      assert.match(said(name) ?? `nothing: ${JSON.stringify(warnings)}`, new RegExp(`ignored \\(did you mean ${meant}\\?\\); the settings are listed`), name);
    }
    assert.match(said('REGISTRY_PASSWORD') ?? '', /ignored; the settings are listed/, 'no guess when nothing is near');
    // What it runs with is logged, as taken and without a secret: the settings given, the others at their defaults.
    const configuration = registry.logs.find((l) => String(l.msg).startsWith('configuration: '));
    assert.ok(configuration, 'the configuration is logged at start-up');
    assert.match(String(configuration.msg), /^configuration: \d+ settings given \(as taken, secrets masked\); the others at their defaults \(README, Configuration\)$/);
    const settings = configuration.settings as Record<string, unknown>;
    assert.equal(configuration.dataDir, settings.REGISTRY_DATA_DIR, 'the data directory, absolute');
    assert.equal(settings.PORT, 0);
    assert.equal(settings.HOST, '127.0.0.1');
    assert.equal(settings.REGISTRY_TOKENS, `*** (principals: ${Object.keys(TOKENS).join(', ')})`);
    assert.equal(settings.REGISTRY_EMBEDDINGS_KEY, '***');
    assert.equal(settings.REGISTRY_PAGE_TOKEN_SECRET, '***');
    assert.ok(!('DATABASE_URL' in settings) && !('REGISTRY_PORT' in settings), 'neither an empty setting nor a variable that is none');
    for (const token of Object.values(TOKENS)) assert.ok(!JSON.stringify(registry.logs).includes(token), 'no token is shown');
  } finally {
    await registry.stop();
  }
  // Nearest, without the prefix on either side; a name too short to guess from gets none.
  const guessFor = (name: string) => /did you mean (\S+)\?/.exec(loadConfig({ [name]: 'x' }).warnings?.[0] ?? '')?.[1];
  assert.equal(guessFor('REGISTRY_PORTS'), 'PORT');
  assert.equal(guessFor('REGISTRY_PROBES'), 'REGISTRY_PROBE');
  assert.equal(guessFor('REGISTRY_GRPC_PORT'), 'GRPC_PORT');
  assert.equal(guessFor('REGISTRY_X'), undefined);
});

test('a variable set but empty is unset, as docker compose\'s FOO=${FOO} sets it, and said at start-up with what is taken instead (DATABASE_URL="$PG_URL" with PG_URL unset stored on SQLite without a word)', () => {
  const warnings = (env: Record<string, string>) => loadConfig(env).warnings ?? [];
  const saidOf = (name: string, takes: string) => `${name} is set but empty: taken as unset, so ${takes} (an unset shell variable?)`;
  const replica = loadConfig({ REGISTRY_DATA_DIR: '/srv/registry', DATABASE_URL: '' });
  assert.equal(replica.databaseUrl, undefined);
  assert.deepEqual(replica.warnings, [saidOf('DATABASE_URL', 'SQLite in /srv/registry')]);
  const closed = loadConfig({ REGISTRY_PUBLIC_READ: '' });
  assert.equal(closed.publicRead, true);
  assert.deepEqual(closed.warnings, [saidOf('REGISTRY_PUBLIC_READ', 'its default, true: anyone may read the registry without a token')]);
  assert.deepEqual(warnings({ REGISTRY_ADMIN_TOKEN_FILE: '' }), [saidOf('REGISTRY_ADMIN_TOKEN_FILE', 'no admin token from it')]);
  assert.deepEqual(warnings({ REGISTRY_DATA_DIR: '' }), [saidOf('REGISTRY_DATA_DIR', `its default, ./data (${path.resolve('data')})`)]);
  assert.deepEqual(warnings({ PORT: '', GRPC_PORT: '' }), [saidOf('PORT', 'its default, 8080'), saidOf('GRPC_PORT', 'no gRPC is served')]);
  assert.deepEqual(warnings({ REGISTRY_PUBLIC_READ: 'false' }), [], 'a value given: nothing to say');
});

test('a setting that acts only beside another (or only without one) is a start-up warning where that one is not as it needs: it has no effect', () => {
  const warnings = (env: Record<string, string>) => loadConfig(env).warnings ?? [];
  assert.deepEqual(warnings({ REGISTRY_EMBEDDINGS_KEY: 'embeddings-key-0123456789' }), [
    'REGISTRY_EMBEDDINGS_KEY is set but has no effect without REGISTRY_EMBEDDINGS_URL, the embeddings service of hybrid ranking (off without it): set REGISTRY_EMBEDDINGS_URL, or unset REGISTRY_EMBEDDINGS_KEY',
  ]);
  const embeddings = { REGISTRY_EMBEDDINGS_URL: 'https://embeddings.example.com/v1' };
  const jku = { REGISTRY_TRUSTED_JKU: 'https://keys.example.com/jwks.json' };
  // [a setting, its value, the setting it needs (or the one it does not go with), the environment where it acts]
  for (const [name, value, needs, acts] of [
    ['REGISTRY_EMBEDDINGS_MODEL', 'text-embedding-3-large', 'without REGISTRY_EMBEDDINGS_URL', embeddings],
    ['REGISTRY_EMBEDDINGS_DIMENSIONS', '256', 'without REGISTRY_EMBEDDINGS_URL', embeddings],
    ['REGISTRY_TRUSTED_JKU_SCOPE', 'site', 'without REGISTRY_TRUSTED_JKU', jku],
    ['REGISTRY_TRUSTED_JKU_REFRESH_SECONDS', '600', 'without REGISTRY_TRUSTED_JKU', jku],
    ['REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS', '7200', 'without REGISTRY_TRUSTED_JKU', jku], // more than the refresh's 3600: less is warned about (a test below)
    ['REGISTRY_POSTGRES_STATEMENT_TIMEOUT_MS', '4000', 'without DATABASE_URL', { DATABASE_URL: 'postgres://registry@db/registry' }],
    ['REGISTRY_RETIRED_SIGNING_KEYS', '/etc/registry/retired-keys.json', 'without REGISTRY_SIGNING_KEY', { REGISTRY_SIGNING_KEY: '/etc/registry/signing-key.json' }],
  ] as const) {
    assert.match(warnings({ [name]: value }).join('\n'), new RegExp(`^${name} is set but has no effect ${needs}\\b[^\\n]*, or unset ${name}$`), name);
    assert.deepEqual(warnings({ ...acts, [name]: value }), [], `${name} beside what it needs`);
  }
  for (const [env, said] of [
    [{ DATABASE_URL: 'postgres://registry@db/registry', REGISTRY_SQLITE_LOCK_WAIT_MS: '100' }, /^REGISTRY_SQLITE_LOCK_WAIT_MS is set but has no effect with DATABASE_URL: it is SQLite's/],
    [{ REGISTRY_RATE_LIMITS: 'false', REGISTRY_RATE_WRITES_PER_MINUTE: '10' }, /^REGISTRY_RATE_WRITES_PER_MINUTE is set but has no effect with REGISTRY_RATE_LIMITS=false.*: set REGISTRY_RATE_LIMITS=true, or unset REGISTRY_RATE_WRITES_PER_MINUTE$/],
    [{ REGISTRY_RATE_LIMITS: 'false', REGISTRY_MAX_STREAMS_PER_CLIENT: '2' }, /^REGISTRY_MAX_STREAMS_PER_CLIENT is set but has no effect with REGISTRY_RATE_LIMITS=false/],
    [{ REGISTRY_INDEX_SNAPSHOT_SECONDS: '0', REGISTRY_INDEX_SNAPSHOT_DIR: '/srv/index' }, /^REGISTRY_INDEX_SNAPSHOT_DIR is set but has no effect with REGISTRY_INDEX_SNAPSHOT_SECONDS=0/],
    [{ ...embeddings, REGISTRY_INDEX_SNAPSHOT_SECONDS: '60' }, /^REGISTRY_INDEX_SNAPSHOT_SECONDS is set but has no effect with REGISTRY_EMBEDDINGS_URL: with hybrid ranking the search index is never saved/],
    [{ REGISTRY_HIDE_UNHEALTHY_SECONDS: '3600', REGISTRY_SEARCH_CACHE_ENTRIES: '50' }, /^REGISTRY_SEARCH_CACHE_ENTRIES is set but has no effect with REGISTRY_EMBEDDINGS_URL or REGISTRY_HIDE_UNHEALTHY_SECONDS/],
  ] as const) {
    const given = warnings(env);
    assert.equal(given.length, 1, given.join('\n'));
    assert.match(given[0]!, said);
  }
  assert.deepEqual(warnings({ REGISTRY_SQLITE_LOCK_WAIT_MS: '100', REGISTRY_RATE_WRITES_PER_MINUTE: '10', REGISTRY_INDEX_SNAPSHOT_DIR: '/srv/index', REGISTRY_SEARCH_CACHE_ENTRIES: '50' }), [], 'each where it acts');
  // One that would publish what is not served stays refused.
  assert.match(refusedConfig({ PUBLIC_GRPC_URL: 'grpc.example.com:443' }), /^invalid configuration: PUBLIC_GRPC_URL is set but GRPC_PORT is not/);
});

test('a refused setting of every kind names the variable, the value given (never a secret), what it takes and an example', () => {
  const cases: [env: Record<string, string>, said: string][] = [
    // A number with a range: "must be at least 1" told "ten" nothing, "must be a port number" no range.
    [{ PORT: '70000' }, 'PORT must be a port number, a whole number from 0 to 65535 (got "70000"); e.g. PORT=8080 (the default)'],
    [{ GRPC_PORT: 'x' }, 'GRPC_PORT must be a port number, a whole number from 0 to 65535 (got "x"); e.g. GRPC_PORT=50051'],
    [{ REGISTRY_MAX_DOCUMENT_BYTES: 'ten' }, 'REGISTRY_MAX_DOCUMENT_BYTES must be a whole number from 1 to 1048576 (got "ten"); e.g. REGISTRY_MAX_DOCUMENT_BYTES=10240 (the default)'],
    [{ REGISTRY_MAX_JSON_DEPTH: '8' }, 'REGISTRY_MAX_JSON_DEPTH must be a whole number from 16 to 1000 (got "8"); e.g. REGISTRY_MAX_JSON_DEPTH=100 (the default)'],
    [{ REGISTRY_REFRESH_SECONDS: '-5' }, 'REGISTRY_REFRESH_SECONDS must be a whole number of seconds from 0 (turns refreshing off) to 2592000 (30 days) (got "-5"); e.g. REGISTRY_REFRESH_SECONDS=3600 (the default)'],
    // A boolean, an enum, a URL, a list.
    [{ REGISTRY_PUBLIC_READ: 'maybe' }, 'REGISTRY_PUBLIC_READ must be true or false (or 1/0, yes/no) (got "maybe"); e.g. REGISTRY_PUBLIC_READ=true (the default)'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace or silent (got "loud"); e.g. LOG_LEVEL=info (the default)'],
    [{ PUBLIC_URL: 'ftp://registry.example.com' }, 'PUBLIC_URL must be an absolute http(s) URL (got "ftp://registry.example.com"); e.g. PUBLIC_URL=https://registry.example.com'],
    [{ REGISTRY_CORS_ORIGINS: 'app.example.com' }, 'REGISTRY_CORS_ORIGINS "app.example.com" is not an origin (scheme://host[:port], no path) or * (got "app.example.com"); e.g. REGISTRY_CORS_ORIGINS=https://app.example.com,https://admin.example.com'],
    // The password masked, the example without one.
    [{ DATABASE_URL: 'mysql://registry:Hunter2pw@db/registry' }, 'DATABASE_URL must be a postgres:// or postgresql:// URL (leave it unset for SQLite) (got "mysql://registry:***@db/registry"); e.g. DATABASE_URL=postgres://registry@db.example.com:5432/registry'],
    // A secret: neither its value nor an example.
    [{ REGISTRY_PAGE_TOKEN_SECRET: 'Hunter2pw' }, 'REGISTRY_PAGE_TOKEN_SECRET must be at least 16 characters'],
    // zod's own words ("Too big: expected string to have <=1024 characters") and the value whole (1,100 characters) are gone.
    [{ PUBLIC_GRPC_URL: `${'a'.repeat(1100)}:443` }, `PUBLIC_GRPC_URL must be at most 1024 characters: the gRPC address clients dial, host:port (e.g. registry.example.com:443) (got "${'a'.repeat(100)}…")`],
  ];
  for (const [env, said] of cases) assert.equal(refusedConfig(env), `invalid configuration: ${said}`);
});

test('a DATABASE_URL with whitespace around it is refused as the path settings are, and shown with it (masking the password had dropped it, showing a valid URL)', () => {
  for (const url of [' postgres://registry:secret@127.0.0.1:5432/registry', 'postgres://registry:secret@127.0.0.1:5432/registry\n']) {
    assert.equal(
      refusedConfig({ DATABASE_URL: url }),
      `invalid configuration: DATABASE_URL begins or ends with whitespace, which no URL holds (a quoting mistake?): remove it (got "${url.replace('secret', '***')}")`,
    );
  }
  assert.match(refusedConfig({ DATABASE_URL: 'mysql://registry:secret@db/registry' }), /^invalid configuration: DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL \(leave it unset for SQLite\) \(got "mysql:\/\/registry:\*\*\*@db\/registry"\); e\.g\. DATABASE_URL=postgres:\/\/registry@db\.example\.com:5432\/registry$/);
});

test('DATABASE_URL_FILE gives the database URL from a file (its first line), checked as DATABASE_URL is, its text never shown; not beside DATABASE_URL', () => {
  const dir = tempDir();
  const file = path.join(dir, 'database-url');
  const url = 'postgres://registry:FileSecret7@db.internal:5432/registry';
  fs.writeFileSync(file, `${url}\n`, { mode: 0o600 });
  assert.equal(loadConfig({ DATABASE_URL_FILE: file }).databaseUrl, url);
  assert.equal(loadStorageLocation({ DATABASE_URL_FILE: file }).databaseUrl, url, 'the storage commands read it too');
  assert.equal(refusedConfig({ DATABASE_URL_FILE: file, DATABASE_URL: url }), 'invalid configuration: set DATABASE_URL or DATABASE_URL_FILE, not both');
  assert.match(refusedConfig({ DATABASE_URL_FILE: path.join(dir, 'missing') }), /^invalid configuration: DATABASE_URL_FILE: \S+missing does not exist; set DATABASE_URL_FILE to the path of a file whose first line is the PostgreSQL URL/);
  const bad = path.join(dir, 'bad');
  fs.writeFileSync(bad, 'mysql://registry:FileSecret7@db/registry\n');
  const refused = refusedConfig({ DATABASE_URL_FILE: bad });
  assert.match(refused, /^invalid configuration: DATABASE_URL_FILE: \S+bad holds a URL on its first line that must be a postgres:\/\/ or postgresql:\/\/ URL/);
  assert.doesNotMatch(refused, /FileSecret7/);
  fs.writeFileSync(bad, '\n');
  assert.match(refusedConfig({ DATABASE_URL_FILE: bad }), /^invalid configuration: DATABASE_URL_FILE: \S+bad holds no URL on its first line/);
  // A line copied from an env file, or the URL in quotes: said so (it was "must be a postgres:// URL (leave it unset for SQLite)").
  for (const [line, holds] of [[`DATABASE_URL=${url}`, 'a variable assignment \\(DATABASE_URL=…\\)'], [`"${url}"`, 'the URL in quotes']] as const) {
    fs.writeFileSync(bad, `${line}\n`);
    const said = refusedConfig({ DATABASE_URL_FILE: bad });
    assert.match(said, new RegExp(`^invalid configuration: DATABASE_URL_FILE: \\S+bad holds ${holds} on its first line: write the URL alone on it, with no name, = or quotes; correct it, or set DATABASE_URL_FILE`));
    assert.doesNotMatch(said, /FileSecret7/);
  }
});

test('a password in a refused setting is never shown: a URL without "//" (its user name parses as a scheme), a wildcard PUBLIC_URL, a REGISTRY_TRUSTED_JKU', () => {
  // user:password@host parses as a URL of scheme "user", with no password to mask: it was shown whole.
  for (const DATABASE_URL of ['registry:Hunter2pw@db/registry', 'postgres:registry:Hunter2pw@db/registry']) {
    assert.equal(refusedConfig({ DATABASE_URL }), 'invalid configuration: DATABASE_URL must be a postgres:// or postgresql:// URL (leave it unset for SQLite); e.g. DATABASE_URL=postgres://registry@db.example.com:5432/registry', DATABASE_URL);
  }
  // The wildcard's refusal showed the URL as given, password and all: the password is refused first.
  const wildcard = refusedConfig({ PUBLIC_URL: 'http://user:Hunter2pw@0.0.0.0:8080' });
  assert.match(wildcard, /^invalid configuration: PUBLIC_URL must not carry a user name or password \(got "http:\/\/user:\*\*\*@0\.0\.0\.0:8080\/"\)/);
  // A JWKS URL was named in full in the message (the value after it masked); one with credentials
  // was told it is "not an http(s) URL".
  const ftp = refusedConfig({ REGISTRY_TRUSTED_JKU: 'ftp://keys:Hunter2pw@keys.example.com/jwks.json' });
  assert.match(ftp, /^invalid configuration: REGISTRY_TRUSTED_JKU "ftp:\/\/keys:\*\*\*@keys\.example\.com\/jwks\.json" is not an http\(s\) URL of a JWKS/);
  const credentials = refusedConfig({ REGISTRY_TRUSTED_JKU: 'https://keys.example.com/a.json,https://keys:Hunter2pw@keys.example.com/jwks.json' });
  assert.match(credentials, /^invalid configuration: REGISTRY_TRUSTED_JKU "https:\/\/keys:\*\*\*@keys\.example\.com\/jwks\.json" carries a user name or password, which the registry never sends: remove "keys:…@"/);
  const opaque = refusedConfig({ REGISTRY_TRUSTED_JKU: 'https://keys.example.com/a.json,keys:Hunter2pw@keys.example.com' });
  assert.match(opaque, /^invalid configuration: REGISTRY_TRUSTED_JKU item 2 is not an http\(s\) URL of a JWKS/);
  for (const message of [wildcard, ftp, credentials, opaque]) assert.doesNotMatch(message, /Hunter2pw/, message);
});

test('REGISTRY_METRICS_TOKEN that is also a principal\'s token (or the admin token, configured or generated) is refused: whoever scrapes /metrics could write as that principal', async () => {
  const shared = 'shared-metrics-token-0123456789';
  // The admin token the registry generated (copied from its file into a scraper's config) is known
  // only once that file is read: it started, and /metrics' scrapers could act as the admin.
  // (Both refused starts at once.)
  const dataDir = tempDir();
  const generated = path.join(dataDir, 'admin-token');
  fs.writeFileSync(generated, `${shared}\n`, { mode: 0o600 });
  const [refusal, fromFile] = await Promise.all([
    startRefused({ REGISTRY_TOKENS: `alice:${shared},bob:bob-token-0123456789abcdef`, REGISTRY_METRICS_TOKEN: shared }),
    startRefused({ REGISTRY_DATA_DIR: dataDir, REGISTRY_TOKENS: '', REGISTRY_ADMIN_TOKEN: '', REGISTRY_METRICS_TOKEN: shared }),
  ]);
  assertRefused(
    refusal,
    2,
    /^a2a-registry: invalid configuration: REGISTRY_METRICS_TOKEN is also the token of "alice" in REGISTRY_TOKENS: whoever scrapes \/metrics with it could act as that principal, writes included; give REGISTRY_METRICS_TOKEN a token of its own\n$/,
  );
  assert.doesNotMatch(refusal.stderr, new RegExp(shared), 'the token is not shown');
  assert.match(refusedConfig({ REGISTRY_ADMIN_TOKEN: shared, REGISTRY_METRICS_TOKEN: shared }), /REGISTRY_METRICS_TOKEN is also the admin token \(REGISTRY_ADMIN_TOKEN\): .*a token of its own$/);
  const file = path.join(tempDir(), 'admin-token');
  fs.writeFileSync(file, `${shared}\n`, { mode: 0o600 });
  assert.match(refusedConfig({ REGISTRY_ADMIN_TOKEN_FILE: file, REGISTRY_METRICS_TOKEN: shared }), /REGISTRY_METRICS_TOKEN is also the admin token \(REGISTRY_ADMIN_TOKEN_FILE\)/);
  assert.match(refusedConfig({ REGISTRY_TOKENS: `admin:${shared}`, REGISTRY_METRICS_TOKEN: shared }), /REGISTRY_METRICS_TOKEN is also the token of "admin" in REGISTRY_TOKENS/);
  // The generated one's refusal:
  assertRefused(
    fromFile,
    2,
    new RegExp(
      `^a2a-registry: invalid configuration: REGISTRY_METRICS_TOKEN is also the admin token \\(the one the registry generated, in ${generated}\\): whoever scrapes /metrics with it could act as that principal, writes included; give REGISTRY_METRICS_TOKEN a token of its own\\n$`,
    ),
  );
  assert.doesNotMatch(fromFile.stderr, new RegExp(shared), 'the token is not shown');
  assert.equal(fs.readFileSync(generated, 'utf8'), `${shared}\n`, 'the file is left as it was');
  // A token of its own is taken.
  assert.equal(loadConfig({ REGISTRY_TOKENS: `alice:${shared}`, REGISTRY_METRICS_TOKEN: 'metrics-only-token-0123456789' }).hardening.metricsToken, 'metrics-only-token-0123456789');
});

test('a value enclosed in quotes is refused naming the setting (docker run --env-file keeps them: REGISTRY_DATA_DIR="/data" was a directory named " under the working directory), a secret\'s never shown', () => {
  assert.equal(
    refusedConfig({ REGISTRY_DATA_DIR: '"/data"' }),
    'invalid configuration: REGISTRY_DATA_DIR is enclosed in quotes, which are taken as part of its value (got "/data", quotes included): whatever set it kept them (docker run --env-file takes each line as written); remove the quotes',
  );
  assert.match(refusedConfig({ PUBLIC_URL: "'https://registry.example.com'" }), /^invalid configuration: PUBLIC_URL is enclosed in quotes, .*\(got 'https:\/\/registry\.example\.com', quotes included\).*remove the quotes$/);
  assert.match(refusedConfig({ DATABASE_URL: '"postgres://registry:Hunter2pw@db/registry"' }), /^invalid configuration: DATABASE_URL is enclosed in quotes, .*\(got "postgres:\/\/registry:\*\*\*@db\/registry", quotes included\)/);
  // A token kept its quotes: accepted, and no client presenting it without them got in.
  for (const [name, value] of [['REGISTRY_ADMIN_TOKEN', '"abcdefghijklmnopqrstu"'], ['REGISTRY_TOKENS', "'alice:abcdefghijklmnopqrstu'"]] as const) {
    const said = refusedConfig({ [name]: value });
    assert.match(said, new RegExp(`^invalid configuration: ${name} is enclosed in quotes, which are taken as part of its value: .*remove the quotes$`));
    assert.doesNotMatch(said, /abcdefghij/, 'a secret is never shown');
  }
  // Quotes inside a value are its own.
  assert.equal(loadConfig({ REGISTRY_ADMIN_TOKEN: 'abc"defghijklmnopqrstu"' }).tokens.get('abc"defghijklmnopqrstu"'), 'admin');
});

test('REGISTRY_TOKENS: one principal listed twice with its token is said so (it was "gives two principals one token"); a principal that looks like the admin but is not ("Admin", "admn") is a start-up warning', () => {
  const token = 'abcdefghijklmnopqrstu';
  assert.equal(refusedConfig({ REGISTRY_TOKENS: `alice:${token},alice:${token}` }), 'invalid configuration: REGISTRY_TOKENS lists "alice" with one token twice: remove one of them');
  assert.equal(refusedConfig({ REGISTRY_TOKENS: `alice:${token},bob:${token}` }), 'invalid configuration: REGISTRY_TOKENS gives two principals one token: give each its own');
  for (const principal of ['Admin', 'ADMIN', 'admn', 'admins']) {
    const config = loadConfig({ REGISTRY_TOKENS: `${principal}:${token}` });
    assert.equal(config.tokens.get(token), principal, 'taken as written');
    assert.deepEqual(config.warnings, [
      `REGISTRY_TOKENS gives a token to "${principal}", which is not the admin: only the principal "admin", written so (lower case), may act on every entry; write it "admin:<token>" if it is meant to be the admin`,
    ]);
  }
  assert.deepEqual(loadConfig({ REGISTRY_TOKENS: `admin:${token},alice:${token.toUpperCase()}` }).warnings, [], 'admin itself, and other names: nothing to say');
});

test('a setting spelt wrong without the REGISTRY_ prefix, or in lower case, is a start-up warning too (DATABSE_URL ran on SQLite, registry_public_read=false left the registry open); other programs\' variables are not named', () => {
  const warned = (name: string) => {
    const said = loadConfig({ [name]: 'x' }).warnings ?? [];
    return said.length === 0 ? undefined : (/did you mean (\S+)\?/.exec(said[0]!)?.[1] ?? 'no guess');
  };
  for (const [name, meant] of [
    ['DATABSE_URL', 'DATABASE_URL'],
    ['DATABASE_URL_FIlE', 'DATABASE_URL_FILE'],
    ['PUBLIC_URI', 'PUBLIC_URL'],
    ['GRPC_PORTS', 'GRPC_PORT'],
    ['LOGLEVEL', 'LOG_LEVEL'],
    ['REGISTY_MAX_ENTRIES_PER_OWNER', 'REGISTRY_MAX_ENTRIES_PER_OWNER'],
    ['registry_public_read', 'REGISTRY_PUBLIC_READ'],
    ['database_url', 'DATABASE_URL'],
  ] as const) {
    assert.equal(warned(name), meant, name);
  }
  assert.match(loadConfig({ DATABSE_URL: 'postgres://registry:Hunter2pw@db/registry' }).warnings?.[0] ?? '', /^DATABSE_URL is not a setting of the registry and is ignored \(did you mean DATABASE_URL\?\); the settings are listed in the README's Configuration section$/);
  // Other programs' variables, DATABASE_SSL and GRPC_HOST among them (another word, not a typo: they were named as DATABASE_URL and GRPC_PORT).
  for (const name of ['HOME', 'HOSTNAME', 'NODE_OPTIONS', 'DATABASE_HOST', 'POSTGRES_PASSWORD', 'MAX_ENTRIES_PER_OWNER', 'DATABASE_SSL', 'GRPC_HOST', 'DATABASE_USER']) assert.equal(warned(name), undefined, name);
  // Windows' environment is case-insensitive: there registry_public_read is REGISTRY_PUBLIC_READ, which reads it.
  assert.deepEqual(loadConfig({ registry_public_read: 'false', REGISTRY_PUBLIC_READ: 'false' }).warnings, []);
});

test('REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS no longer than REGISTRY_TRUSTED_JKU_REFRESH_SECONDS is a start-up warning naming both: the first failed fetch would end the keys\' trust at once', () => {
  const jku = { REGISTRY_TRUSTED_JKU: 'https://keys.example.com/jwks.json' };
  const warnings = (env: Record<string, string>) => loadConfig({ ...jku, ...env }).warnings ?? [];
  const said = (stale: number, refresh: number) =>
    `REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS (${stale}) is not longer than REGISTRY_TRUSTED_JKU_REFRESH_SECONDS (${refresh}): an allow-listed JWKS is fetched again only once the keys it gave are that old, so the first fetch that fails ends their trust at once, unverifying the cards they signed; give REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS more than REGISTRY_TRUSTED_JKU_REFRESH_SECONDS (the defaults: 86400 and 3600)`;
  assert.deepEqual(warnings({ REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS: '600' }), [said(600, 3600)]);
  assert.deepEqual(warnings({ REGISTRY_TRUSTED_JKU_REFRESH_SECONDS: '86400' }), [said(86400, 86400)], 'equal: no time either');
  assert.deepEqual(warnings({}), [], 'the defaults');
  assert.deepEqual(warnings({ REGISTRY_TRUSTED_JKU_MAX_STALE_SECONDS: '600', REGISTRY_TRUSTED_JKU_REFRESH_SECONDS: '300' }), []);
});

test('REGISTRY_CORS_ORIGINS: an origin with a wildcard (https://*.example.com, which matched nothing) is refused saying to list each; one written with capitals or its default port is taken as browsers send it', () => {
  assert.equal(
    refusedConfig({ REGISTRY_CORS_ORIGINS: 'https://app.example.com,https://*.example.com' }),
    'invalid configuration: REGISTRY_CORS_ORIGINS "https://*.example.com" holds a wildcard, which an origin cannot: list each origin (e.g. https://app.example.com,https://admin.example.com), or give * alone for every origin (got "https://app.example.com,https://*.example.com")',
  );
  assert.deepEqual(loadConfig({ REGISTRY_CORS_ORIGINS: 'HTTPS://App.Example.com:443,http://localhost:80,https://app.example.com' }).hardening.corsOrigins, ['https://app.example.com', 'http://localhost']);
  for (const origin of ['https://app.example.com:99999', 'https://app.example.com?x=1']) assert.match(refusedConfig({ REGISTRY_CORS_ORIGINS: origin }), /is not an origin \(scheme:\/\/host\[:port\], no path\) or \*/, origin);
});

test('the configuration logged at start-up shows each setting given as taken ("yes" true, " 5 " 5, a path absolute), a URL\'s password and query values masked, no token', () => {
  const given = loadConfig({
    PORT: ' 5 ',
    REGISTRY_PUBLIC_READ: 'yes',
    REGISTRY_DATA_DIR: 'data2',
    DATABASE_URL: 'postgres://registry:Hunter2pw@db/registry?sslpassword=Sec1',
    REGISTRY_ADMIN_TOKEN: 'admin-token-0123456789',
    REGISTRY_TRUSTED_JKU: 'https://keys.example.com/jwks.json?token=Sec2',
    REGISTRY_CORS_ORIGINS: 'https://App.example.com',
    PUBLIC_URL: 'HTTPS://Registry.Example.com:443/',
  }).given;
  assert.deepEqual(given, {
    PORT: 5,
    // As published, not as written.
    PUBLIC_URL: 'https://registry.example.com',
    REGISTRY_DATA_DIR: path.resolve('data2'),
    DATABASE_URL: 'postgres://registry:***@db/registry?sslpassword=***',
    REGISTRY_ADMIN_TOKEN: '***',
    REGISTRY_PUBLIC_READ: true,
    REGISTRY_CORS_ORIGINS: ['https://app.example.com'],
    REGISTRY_TRUSTED_JKU: ['https://keys.example.com/jwks.json?token=***'],
  });
});

test('REGISTRY_HEADERS_TIMEOUT_SECONDS above REGISTRY_REQUEST_TIMEOUT_SECONDS is refused naming both and which to change', () => {
  assert.equal(
    refusedConfig({ REGISTRY_HEADERS_TIMEOUT_SECONDS: '20', REGISTRY_REQUEST_TIMEOUT_SECONDS: '10' }),
    'invalid configuration: REGISTRY_HEADERS_TIMEOUT_SECONDS must not exceed REGISTRY_REQUEST_TIMEOUT_SECONDS (got 20 > 10): the headers are part of the request, which must arrive whole within the request timeout; lower REGISTRY_HEADERS_TIMEOUT_SECONDS, or raise REGISTRY_REQUEST_TIMEOUT_SECONDS',
  );
  assert.equal(loadConfig({ REGISTRY_REQUEST_TIMEOUT_SECONDS: '5' }).connections.headersTimeoutMs, 5000, 'unset, it is at most the request timeout');
});

test('the variables Kubernetes sets for a Service named "registry" (REGISTRY_SERVICE_HOST, REGISTRY_PORT=tcp://...) are no start-up warning; REGISTRY_PORT without them still is', () => {
  const links = {
    REGISTRY_SERVICE_HOST: '10.0.0.7',
    REGISTRY_SERVICE_PORT: '8080',
    REGISTRY_SERVICE_PORT_HTTP: '8080',
    REGISTRY_PORT: 'tcp://10.0.0.7:8080',
    REGISTRY_PORT_8080_TCP: 'tcp://10.0.0.7:8080',
    REGISTRY_PORT_8080_TCP_PROTO: 'tcp',
    REGISTRY_PORT_8080_TCP_PORT: '8080',
    REGISTRY_PORT_8080_TCP_ADDR: '10.0.0.7',
  };
  assert.deepEqual(loadConfig(links).warnings, []);
  assert.match(loadConfig({ REGISTRY_PORT: '9000' }).warnings?.[0] ?? '', /^REGISTRY_PORT is not a setting of the registry and is ignored \(did you mean PORT\?\)/);
  assert.equal(loadConfig({ ...links, REGISTRY_PUBLIC_REED: 'false' }).warnings?.length, 1, 'a setting spelt wrong beside them still is');
});

test('REGISTRY_ADMIN_TOKEN_FILE whose first line is an env file\'s (REGISTRY_ADMIN_TOKEN=...) or the token in quotes is refused: taken whole, the token itself was refused', () => {
  const file = path.join(tempDir(), 'admin-token');
  for (const [line, holds] of [
    ['REGISTRY_ADMIN_TOKEN=admin-token-0123456789', 'a variable assignment \\(REGISTRY_ADMIN_TOKEN=…\\)'],
    ['"admin-token-0123456789"', 'the token in quotes'],
  ] as const) {
    fs.writeFileSync(file, `${line}\n`);
    const said = refusedConfig({ REGISTRY_ADMIN_TOKEN_FILE: file });
    assert.match(said, new RegExp(`^invalid configuration: REGISTRY_ADMIN_TOKEN_FILE: .*admin-token holds ${holds} on its first line, taken whole as the token: write the token alone on it, with no name, = or quotes; correct it, or set REGISTRY_ADMIN_TOKEN_FILE to the path of a file whose first line is the admin token$`));
    assert.doesNotMatch(said, /0123456789/, 'the token is not shown');
  }
  fs.writeFileSync(file, 'a2ar_YWRtaW4tdG9rZW4=\n');
  assert.equal(loadConfig({ REGISTRY_ADMIN_TOKEN_FILE: file }).tokens.get('a2ar_YWRtaW4tdG9rZW4='), 'admin', 'base64 padding is a token\'s own');
});

test('PUBLIC_URL written with capitals or its default port is taken as a URL parser writes it: HTTPS://... was published as written and taken for no https URL (documents\' http: URLs went unwarned)', () => {
  const config = loadConfig({ PUBLIC_URL: 'HTTPS://Registry.Example.com:443/Base/' });
  assert.equal(config.publicUrl, 'https://registry.example.com/Base');
  assert.equal(config.warnInsecureHttp, true);
  assert.equal(loadImportConfig({ PUBLIC_URL: 'HTTPS://Registry.Example.com' }).warnInsecureHttp, true, 'import reads it as the registry does');
  assert.equal(loadConfig({ PUBLIC_URL: 'http://[::1]:9000/' }).publicUrl, 'http://[::1]:9000');
});

test('a ${NAME} nothing expanded, or a path beginning with ~, is refused naming the setting (REGISTRY_DATA_DIR=~/registry was a directory named ~ under the working directory), never a value', () => {
  assert.equal(
    refusedConfig({ DATABASE_URL: 'postgres://registry:${PG_PASSWORD}@db/registry' }),
    "invalid configuration: DATABASE_URL holds ${PG_PASSWORD}, a variable reference nothing expanded (docker run --env-file, systemd's Environment= and Kubernetes take it as written): give the value itself, or set it from a shell or docker compose, which expand it",
  );
  assert.match(refusedConfig({ REGISTRY_ADMIN_TOKEN: '${ADMIN_TOKEN:-admin-token-0123456789}' }), /^invalid configuration: REGISTRY_ADMIN_TOKEN holds \$\{ADMIN_TOKEN\}, a variable reference nothing expanded/);
  assert.doesNotMatch(refusedConfig({ REGISTRY_ADMIN_TOKEN: '${ADMIN_TOKEN:-admin-token-0123456789}' }), /0123456789/, 'a default in it is never shown');
  assert.match(refusedConfig({ REGISTRY_DATA_DIR: '~/registry' }), /^invalid configuration: REGISTRY_DATA_DIR begins with ~, which only a shell expands to the home directory .*: give the full path \(e\.g\. \/home\/registry\/registry\)$/);
  assert.equal(loadConfig({ REGISTRY_DATA_DIR: '/srv/~registry', REGISTRY_ADMIN_TOKEN: 'admin$token-0123456789' }).dataDir, '/srv/~registry', 'a ~ or $ inside is the value\'s own');
});

test('REGISTRY_PAGE_TOKEN_SECRET with whitespace around it is refused (another key than a replica given it without: each refused the others\' page tokens), the secret never shown', () => {
  for (const secret of [' replicas-share-this-secret', 'replicas-share-this-secret\n']) {
    assert.equal(
      refusedConfig({ REGISTRY_PAGE_TOKEN_SECRET: secret }),
      "invalid configuration: REGISTRY_PAGE_TOKEN_SECRET begins or ends with whitespace, which would sign page tokens with another key than a replica given it without (each refusing the others') (a quoting mistake?): remove it",
    );
  }
  assert.equal(refusedConfig({ REGISTRY_PAGE_TOKEN_SECRET: 'short' }), 'invalid configuration: REGISTRY_PAGE_TOKEN_SECRET must be at least 16 characters');
  assert.equal(loadConfig({ REGISTRY_PAGE_TOKEN_SECRET: 'replicas share this secret' }).pageTokenSecret, 'replicas share this secret', 'spaces inside are its own');
});

test('backup, restore, migrate and import name a setting of theirs spelt wrong (backup with DATABSE_URL copied the SQLite file without a word), not the settings they do not read', () => {
  const said = "DATABSE_URL is not a setting of the registry and is ignored (did you mean DATABASE_URL?); the settings are listed in the README's Configuration section";
  const env = { DATABSE_URL: 'postgres://registry:Hunter2pw@db/registry', REGISTRY_PUBLIC_REED: 'false', REGISTRY_PORT: '9000' };
  assert.deepEqual(loadStorageLocation(env).warnings, [said]);
  assert.deepEqual(loadImportConfig({ ...env, REGISTRY_MAX_DOCUMENT_BYTE: '20000' }).warnings, [
    said,
    "REGISTRY_MAX_DOCUMENT_BYTE is not a setting of the registry and is ignored (did you mean REGISTRY_MAX_DOCUMENT_BYTES?); the settings are listed in the README's Configuration section",
  ]);
});

test('REGISTRY_TOKENS separated by ";" (alice:<token>;bob:<token>: alice had one token with ";bob:" inside, bob none) is a start-up warning saying items are separated by commas, nothing of the token shown', () => {
  const config = loadConfig({ REGISTRY_TOKENS: 'alice:alice-token-0123456789;bob:bob-token-0123456789' });
  assert.deepEqual(config.warnings, ['REGISTRY_TOKENS gives "alice" a token with ";<name>:" inside it, as if another principal followed a semicolon: separate the items with commas (alice:<token>,<name>:<token>)']);
  assert.deepEqual(loadConfig({ REGISTRY_TOKENS: 'alice:alice;token:0123456789' }).warnings, [], 'a ; or : of the token\'s own is nothing to say');
});

test('REGISTRY_INDEX_SNAPSHOT_SECONDS longer than REGISTRY_CHANGES_RETENTION_HOURS keeps the change log is a start-up warning naming both: after a crash the saved index is rebuilt, not loaded', () => {
  const warnings = (env: Record<string, string>) => loadConfig(env).warnings ?? [];
  assert.deepEqual(warnings({ REGISTRY_CHANGES_RETENTION_HOURS: '0.1' }), [
    'REGISTRY_INDEX_SNAPSHOT_SECONDS (600) is longer than REGISTRY_CHANGES_RETENTION_HOURS (0.1, 360 s) keeps the change log: after a crash, the saved index may be older than the log, and is then rebuilt from every entry instead of loaded (minutes at a million entries); save it more often than the log is trimmed (the defaults: 600 s and 24 h)',
  ]);
  assert.equal(warnings({ REGISTRY_INDEX_SNAPSHOT_SECONDS: '604800' }).length, 1, 'a week against a day');
  assert.deepEqual(warnings({}), [], 'the defaults');
  assert.deepEqual(warnings({ REGISTRY_CHANGES_RETENTION_HOURS: '0.1', REGISTRY_INDEX_SNAPSHOT_SECONDS: '0' }), [], 'no saved index');
});

test('a list setting given only commas (REGISTRY_TOKENS="${ALICE},${BOB}" with both unset) is unset, as an empty one is, and said at start-up (it was a list of nothing, without a word); REGISTRY_DNS_SERVERS so given is refused, saying why (an empty one is unset), the likely cause and the fix', () => {
  const config = loadConfig({ REGISTRY_TOKENS: ',', REGISTRY_CORS_ORIGINS: ' , ' });
  assert.equal(config.tokens.size, 0);
  assert.deepEqual(config.warnings, [
    'REGISTRY_TOKENS lists nothing (got ","): taken as unset, so no principal has a token from it (unset shell variables, as in "${A},${B}"?)',
    'REGISTRY_CORS_ORIGINS lists nothing (got " , "): taken as unset, so CORS is off (unset shell variables, as in "${A},${B}"?)',
  ]);
  assert.deepEqual(config.given, {}, 'nothing given');
  assert.deepEqual(loadConfig({ REGISTRY_TOKENS: 'alice:alice-token-0123456789,' }).warnings, [], 'a trailing comma after an item is nothing to say');
  // REGISTRY_DNS_SERVERS is refused instead (unset, another resolver would answer), saying so as
  // these warnings do: it said only "must list DNS servers' IP addresses, ...: lists no server".
  assert.equal(
    refusedConfig({ REGISTRY_DNS_SERVERS: ' , ' }),
    'invalid configuration: REGISTRY_DNS_SERVERS lists nothing (got " , "; unset shell variables, as in "${A},${B}"?): refused, not taken as unset as the other lists are, because names would then be resolved by the system resolver instead of the servers meant; list the DNS servers\' IP addresses (e.g. REGISTRY_DNS_SERVERS=10.0.0.53,1.1.1.1:5353), or unset REGISTRY_DNS_SERVERS to use the system resolver',
  );
  // Empty, it is unset as every empty variable is (the README's rule), and said; the refusal
  // above says why a list of only commas is not.
  const empty = loadConfig({ REGISTRY_DNS_SERVERS: '' });
  assert.equal(empty.fetch.dnsServers, undefined);
  assert.deepEqual(empty.warnings, ['REGISTRY_DNS_SERVERS is set but empty: taken as unset, so the system resolver (an unset shell variable?)']);
});

test('a yes/no or one-word setting with whitespace around it (an env file\'s trailing space) is taken as a number\'s is, not refused as no true or false', () => {
  const config = loadConfig({ REGISTRY_PUBLIC_READ: 'false ', REGISTRY_PROBE: ' yes', LOG_LEVEL: 'warn\t', REGISTRY_TRUSTED_JKU: 'https://keys.example.com/jwks.json', REGISTRY_TRUSTED_JKU_SCOPE: ' site ' });
  assert.equal(config.publicRead, false);
  assert.equal(config.freshness.probe, true);
  assert.equal(config.logLevel, 'warn');
  assert.equal(config.trust.jkuScope, 'site');
  assert.equal(refusedConfig({ REGISTRY_PUBLIC_READ: 'TRUE' }), 'invalid configuration: REGISTRY_PUBLIC_READ must be true or false (or 1/0, yes/no) (got "TRUE"); e.g. REGISTRY_PUBLIC_READ=true (the default)', 'the words as the README gives them');
});

test('GRPC_PORT=tcp://... that Kubernetes sets for a Service named grpc is unset and said, not a refused start over a setting no one gave', () => {
  const links = { GRPC_SERVICE_HOST: '10.0.0.9', GRPC_SERVICE_PORT: '50051', GRPC_PORT: 'tcp://10.0.0.9:50051', GRPC_PORT_50051_TCP: 'tcp://10.0.0.9:50051' };
  const config = loadConfig(links);
  assert.equal(config.grpc, undefined);
  assert.deepEqual(config.warnings, [
    "GRPC_PORT is tcp://10.0.0.9:50051, which Kubernetes sets for the Service named grpc in this namespace: taken as unset, so no gRPC is served; to serve it, set GRPC_PORT in the pod's environment (it wins over the Service's)",
  ]);
  assert.deepEqual(config.given, {}, 'no setting given');
  assert.equal(loadConfig({ ...links, GRPC_PORT: '50051' }).grpc?.port, 50051, 'the pod\'s own GRPC_PORT');
  assert.match(refusedConfig({ GRPC_PORT: 'tcp://10.0.0.9:50051' }), /^invalid configuration: GRPC_PORT must be a port number/, 'without the Service beside it, refused as before');
});
