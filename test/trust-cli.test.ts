/**
 * Tools for publishers (issue 15, point 4): `keygen`, `sign` and `verify`, run as a user runs them
 * (a child process), and the signed card registered in a real registry that trusts the key set
 * keygen wrote, through the CLI's own `register`.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { verifyAgentCardSignature } from '@a2a-js/sdk';
import { importJWK } from 'jose';
import { parseJwks } from '../src/trust/jwks.js';
import { createSignatureVerifier } from '../src/validation/signature.js';
import { BIN, ensureBuilt } from './support/built.js';
import { REPO_ROOT, TOKENS, startTestRegistry, tempDir, type TestRegistry } from './support/registry.js';
import { v1Card } from './support/documents.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const work = tempDir('a2a-registry-trust-cli-');
after(() => fs.rmSync(work, { recursive: true, force: true }));
const file = (name: string) => path.join(work, name);

/**
 * The built command (bin/a2a-registry.js), as a user runs it. `maxFileBytes`: the files it writes
 * may not grow past this (ulimit -f, in 512-byte blocks): a write fails part way, as on a full disk.
 */
function cli(args: string[], env: Record<string, string> = {}, maxFileBytes?: number): Promise<Run> {
  ensureBuilt();
  const command = maxFileBytes === undefined ? [process.execPath, BIN, ...args] : ['/bin/sh', '-c', `ulimit -f ${maxFileBytes / 512} && exec "$0" "$@"`, process.execPath, BIN, ...args];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: REPO_ROOT,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const readJson = (name: string) => JSON.parse(fs.readFileSync(file(name), 'utf8'));

/** Whether this process can make a file in `work` immutable (chattr +i: root, on a file system that has the attribute). */
function canMakeImmutable(): boolean {
  if (process.getuid?.() !== 0) return false;
  const probe = file('immutable-probe');
  fs.writeFileSync(probe, '');
  try {
    execFileSync('chattr', ['+i', probe], { stdio: 'ignore' });
    execFileSync('chattr', ['-i', probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    fs.rmSync(probe, { force: true });
  }
}

describe('keygen, sign, verify', () => {
  let registry: TestRegistry;

  before(async () => {
    fs.writeFileSync(file('card.json'), JSON.stringify(v1Card('CLI Signed Agent', 'https://cli-signed.example.org/a2a'), null, 2));
    const made = await cli(['keygen', '--kid', 'publisher-2026', '--private', file('key.jwk.json'), '--jwks', file('jwks.json')]);
    assert.equal(made.code, 0, made.stderr);
    registry = await startTestRegistry({ REGISTRY_TRUSTED_KEYS: file('jwks.json') });
  });
  after(async () => {
    await registry.close();
    fs.rmSync(registry.dataDir, { recursive: true, force: true });
  });

  test('keygen writes a private JWK (0600) and a public JWKS; it never overwrites a key, and adds to a key set', async () => {
    const priv = readJson('key.jwk.json');
    assert.equal(priv.kid, 'publisher-2026');
    assert.equal(priv.alg, 'ES256');
    assert.ok(priv.d, 'private');
    assert.equal(fs.statSync(file('key.jwk.json')).mode & 0o777, 0o600);
    assert.deepEqual(readJson('jwks.json').keys.map((k: { kid: string; d?: string }) => [k.kid, k.d]), [['publisher-2026', undefined]]);

    // A file in the way without --force is a usage error (exit 2), as for backup.
    const again = await cli(['keygen', '--private', file('key.jwk.json'), '--jwks', file('jwks.json')]);
    assert.equal(again.code, 2, again.stderr);
    assert.match(again.stderr, /key\.jwk\.json already exists; choose another file, or pass --force to replace it/);
    const againJson = await cli(['keygen', '--json', '--private', file('key.jwk.json'), '--jwks', file('jwks.json')]);
    assert.equal(againJson.code, 2, againJson.stderr);
    assert.equal(JSON.parse(againJson.stdout).error.code, 'USAGE');

    const rotated = await cli(['keygen', '--alg', 'EdDSA', '--json', '--private', file('next.jwk.json'), '--jwks', file('rotation-jwks.json')]);
    assert.equal(rotated.code, 0, rotated.stderr);
    const second = await cli(['keygen', '--alg', 'RS256', '--json', '--private', file('next2.jwk.json'), '--jwks', file('rotation-jwks.json')]);
    const result = JSON.parse(second.stdout);
    assert.equal(result.keys, 2, 'added to the existing key set');
    assert.match(result.kid, /^[A-Za-z0-9_-]{43}$/, 'the thumbprint by default');
    assert.equal((await cli(['keygen', '--alg', 'HS256'])).code, 2, 'usage');

    // A kid already in the key set: replacing its key would break every card signed with it.
    const jwksBefore = fs.readFileSync(file('jwks.json'), 'utf8');
    const sameKid = await cli(['keygen', '--kid', 'publisher-2026', '--private', file('same-kid.jwk.json'), '--jwks', file('jwks.json')]);
    assert.equal(sameKid.code, 2, sameKid.stderr);
    assert.match(sameKid.stderr, /already holds a key with kid "publisher-2026": replacing it would make every card signed with that key fail to verify\. Choose another --kid .*--force/);
    assert.equal(fs.readFileSync(file('jwks.json'), 'utf8'), jwksBefore, 'the key set is untouched');
    assert.equal(fs.existsSync(file('same-kid.jwk.json')), false, 'no private key written');
    const forced = await cli(['keygen', '--kid', 'forced-kid', '--json', '--private', file('forced.jwk.json'), '--jwks', file('forced-jwks.json')]);
    assert.equal(forced.code, 0, forced.stderr);
    const replaced = await cli(['keygen', '--kid', 'forced-kid', '--force', '--json', '--private', file('forced2.jwk.json'), '--jwks', file('forced-jwks.json')]);
    assert.equal(replaced.code, 0, replaced.stderr);
    assert.equal(JSON.parse(replaced.stdout).keys, 1, '--force replaces the key with that kid');
  });

  test('keygen refuses --private and --jwks naming one file: the key set would overwrite the private key', async () => {
    const same = await cli(['keygen', '--kid', 'one-file', '--private', file('one.json'), '--jwks', file('one.json')]);
    assert.equal(same.code, 2, same.stdout + same.stderr);
    assert.match(same.stderr, /--private and --jwks both name .*one\.json: the public key set would overwrite the private key\. Give them different files/);
    assert.equal(fs.existsSync(file('one.json')), false, 'nothing written');
    // A usage error to --json readers too: it was READ_ERROR, as if a file could not be read.
    const sameJson = await cli(['keygen', '--json', '--private', file('one.json'), '--jwks', file('one.json')]);
    assert.equal(sameJson.code, 2, sameJson.stdout + sameJson.stderr);
    assert.equal(JSON.parse(sameJson.stdout).error.code, 'USAGE');
    // Another spelling of the same path is the same file too.
    const spelt = await cli(['keygen', '--private', file('two.json'), '--jwks', path.join(work, '.', 'sub', '..', 'two.json')]);
    assert.equal(spelt.code, 2, spelt.stdout + spelt.stderr);
    assert.equal(fs.existsSync(file('two.json')), false, 'nothing written');
  });

  test('keygen whose key set cannot be written leaves no private key behind (the next attempt is not "already exists")', async () => {
    const unwritable = await cli(['keygen', '--kid', 'half', '--private', file('half.jwk.json'), '--jwks', file('no-such-dir/jwks.json')]);
    assert.equal(unwritable.code, 1, unwritable.stdout + unwritable.stderr);
    assert.match(unwritable.stderr, /cannot write .*no-such-dir\/jwks\.json/);
    assert.equal(fs.existsSync(file('half.jwk.json')), false, 'the private key without its public half was removed');
    const retried = await cli(['keygen', '--kid', 'half', '--private', file('half.jwk.json'), '--jwks', file('half-jwks.json')]);
    assert.equal(retried.code, 0, retried.stderr);
  });

  test('a write that fails part way (sign over its own card, keygen adding to a key set) leaves the file as it was', async () => {
    fs.writeFileSync(file('only-card.json'), fs.readFileSync(file('card.json')));
    const cardBefore = fs.readFileSync(file('only-card.json'), 'utf8');
    const inPlace = await cli(['sign', file('only-card.json'), '--key', file('key.jwk.json'), '-o', file('only-card.json')], {}, 512);
    assert.equal(inPlace.code, 1, inPlace.stderr);
    assert.match(inPlace.stderr, /cannot write .*only-card\.json: /);
    assert.equal(fs.readFileSync(file('only-card.json'), 'utf8'), cardBefore, 'the card was cut to 512 bytes');
    // A key set with a published key (an RSA key, larger than the limit with the new one added).
    const published = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });
    fs.writeFileSync(file('published-jwks.json'), JSON.stringify({ keys: [{ ...published, kid: 'published', alg: 'RS256', use: 'sig' }] }));
    const jwksBefore = fs.readFileSync(file('published-jwks.json'), 'utf8');
    const added = await cli(['keygen', '--private', file('added.jwk.json'), '--jwks', file('published-jwks.json')], {}, 512);
    assert.equal(added.code, 1, added.stderr);
    assert.match(added.stderr, /cannot write .*published-jwks\.json: /);
    assert.equal(fs.readFileSync(file('published-jwks.json'), 'utf8'), jwksBefore, 'the published key was lost');
    assert.equal(fs.existsSync(file('added.jwk.json')), false);
    // keygen --force over a private key: the old key is kept, its public half still in the key set.
    fs.copyFileSync(file('key.jwk.json'), file('kept.jwk.json'));
    const replacing = await cli(['keygen', '--force', '--private', file('kept.jwk.json'), '--jwks', file('published-jwks.json')], {}, 512);
    assert.equal(replacing.code, 1, replacing.stderr);
    assert.match(replacing.stderr, /cannot write .*published-jwks\.json: /);
    assert.deepEqual(fs.readFileSync(file('kept.jwk.json')), fs.readFileSync(file('key.jwk.json')), 'the old private key was replaced by one whose public key was never written');
    assert.deepEqual(fs.readdirSync(work).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left');
  });

  // The key set's rename failing after the new private key was put in place (its commit): only
  // an immutable file (chattr +i, root only) makes a rename fail there, after both were written.
  test('keygen --force whose key set cannot be put in place restores the old private key', { skip: !canMakeImmutable() && 'needs chattr +i (root, ext4)' }, async () => {
    fs.copyFileSync(file('key.jwk.json'), file('restored.jwk.json'));
    fs.copyFileSync(file('jwks.json'), file('immutable-jwks.json'));
    execFileSync('chattr', ['+i', file('immutable-jwks.json')]);
    try {
      const [replacing, adding] = await Promise.all([
        cli(['keygen', '--force', '--private', file('restored.jwk.json'), '--jwks', file('immutable-jwks.json')]),
        cli(['keygen', '--private', file('fresh.jwk.json'), '--jwks', file('immutable-jwks.json')]),
      ]);
      for (const run of [replacing, adding]) {
        assert.equal(run.code, 1, run.stderr);
        assert.match(run.stderr, /cannot write .*immutable-jwks\.json: permission denied/);
      }
      assert.deepEqual(fs.readFileSync(file('restored.jwk.json')), fs.readFileSync(file('key.jwk.json')), 'the old private key was replaced by one whose public key was never written');
      assert.equal(fs.statSync(file('restored.jwk.json')).mode & 0o777, 0o600);
      assert.equal(fs.existsSync(file('fresh.jwk.json')), false, 'a new private key without its public half stays');
      assert.deepEqual(fs.readdirSync(work).filter((f) => /\.tmp(\.previous)?$/.test(f)), [], 'no temporary file left');
    } finally {
      execFileSync('chattr', ['-i', file('immutable-jwks.json')]);
    }
  });

  test('sign, then verify: which signature verified; a tampered copy says why not', async () => {
    const signed = await cli(['sign', file('card.json'), '--key', file('key.jwk.json'), '-o', file('signed.json')]);
    assert.equal(signed.code, 0, signed.stderr);
    assert.match(signed.stderr, /signed .* with kid publisher-2026 \(ES256\); 1 signature\n/);
    // -o over another existing file without --force: a usage error (exit 2), the file untouched.
    const signedBefore = fs.readFileSync(file('signed.json'), 'utf8');
    const inTheWay = await cli(['sign', file('card.json'), '--key', file('key.jwk.json'), '-o', file('signed.json')]);
    assert.equal(inTheWay.code, 2, inTheWay.stderr);
    assert.match(inTheWay.stderr, /signed\.json already exists; choose another file, or pass --force to replace it/);
    assert.equal(fs.readFileSync(file('signed.json'), 'utf8'), signedBefore);
    const ok = await cli(['verify', file('signed.json'), '--jwks', file('jwks.json')]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /verified .*by kid publisher-2026 \(ES256\)/);

    const card = readJson('signed.json');
    card.skills[0].description = 'Also wires money.';
    fs.writeFileSync(file('tampered.json'), JSON.stringify(card));
    const bad = await cli(['verify', file('tampered.json'), '--jwks', file('jwks.json'), '--json']);
    assert.equal(bad.code, 1);
    const report = JSON.parse(bad.stdout);
    assert.equal(report.valid, false);
    assert.equal(report.signatures[0].status, 'invalid');
    assert.match(report.signatures[0].reason, /changed after it was signed/);

    const other = await cli(['verify', file('signed.json'), '--jwks', file('rotation-jwks.json')]);
    assert.equal(other.code, 1);
    assert.match(other.stdout, /unknown key[\s\S]*no trusted key has kid "publisher-2026"/);
  });

  test('a superset card whose v0.3 fields were changed: verified (its signature covers the v1.0 card), with a warning naming each v0.3 field; a registry refuses it', async () => {
    const signed = readJson('signed.json');
    const signedUrl: string = signed.supportedInterfaces[0].url;
    // As served to clients without A2A-Version, then changed: v0.3 clients would dial elsewhere.
    const superset = {
      ...signed,
      url: 'https://elsewhere.example.org/a2a',
      preferredTransport: 'JSONRPC',
      protocolVersion: '0.3.0',
      additionalInterfaces: [{ url: signedUrl, transport: 'JSONRPC' }, { url: 'https://elsewhere.example.org/rest', transport: 'HTTP+JSON' }],
    };
    fs.writeFileSync(file('superset.json'), JSON.stringify(superset));
    const human = await cli(['verify', file('superset.json'), '--jwks', file('jwks.json')]);
    assert.equal(human.code, 0, human.stdout + human.stderr);
    assert.match(human.stdout, /verified .*by kid publisher-2026 \(ES256\)/);
    assert.match(human.stdout, /\/url\b[^\n]*this v0\.3 field is not covered by the card's signature, which covers the v1\.0 card inside the superset: it is the URL v0\.3 clients dial/);
    assert.match(human.stdout, /"https:\/\/elsewhere\.example\.org\/a2a" is none of the signed card's interface URLs/);
    assert.match(human.stderr, /superset card .*: checking the v1\.0 card inside it, which is what its signatures cover: its v0\.3 fields are not/);
    const report = JSON.parse((await cli(['verify', '--json', file('superset.json'), '--jwks', file('jwks.json')])).stdout);
    assert.equal(report.valid, true);
    const unsigned = report.warnings.filter((w: { rule: string }) => w.rule === 'unsigned-field');
    assert.deepEqual(unsigned.map((w: { path: string }) => w.path), ['/url', '/preferredTransport', '/protocolVersion', '/additionalInterfaces/0', '/additionalInterfaces/1']);
    assert.doesNotMatch(unsigned[3].message, /none of the signed/, 'a signed interface URL');
    assert.match(unsigned[4].message, /its url is one v0\.3 clients dial.*"https:\/\/elsewhere\.example\.org\/rest" is none of the signed card's interface URLs/);
    assert.match(unsigned[1].message, /v0\.3 clients read it to call the url/);
    // The registry does not take the superset card at all (it mixes generations), naming the same fields.
    const registered = await cli(['register', file('superset.json')], { A2A_REGISTRY_URL: registry.url, A2A_REGISTRY_TOKEN: TOKENS.alice });
    assert.equal(registered.code, 1, registered.stdout + registered.stderr);
    for (const field of ['url', 'preferredTransport', 'protocolVersion', 'additionalInterfaces']) {
      assert.match(registered.stdout + registered.stderr, new RegExp(`mixes A2A generations: [^\\n]*the v0\\.3 fields [^\\n]*"${field}"`));
    }
  });

  test('signed twice (old and new key) for rotation; both signatures verify', async () => {
    const first = await cli(['sign', file('card.json'), '--key', file('key.jwk.json'), '-o', file('twice.json')]);
    assert.equal(first.code, 0, first.stderr);
    const second = await cli(['sign', file('twice.json'), '--key', file('next.jwk.json'), '-o', file('twice.json')]);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(readJson('twice.json').signatures.length, 2);
    const json = await cli(['sign', '--json', file('card.json'), '--key', file('next.jwk.json'), '-o', file('json-signed.json')]);
    assert.deepEqual(JSON.parse(json.stdout), { signed: file('json-signed.json'), kid: readJson('next.jwk.json').kid, alg: 'EdDSA', signatures: 1 });
    fs.writeFileSync(file('both-jwks.json'), JSON.stringify({ keys: [...readJson('jwks.json').keys, ...readJson('rotation-jwks.json').keys] }));
    const both = await cli(['verify', file('twice.json'), '--jwks', file('both-jwks.json'), '--json']);
    assert.deepEqual(JSON.parse(both.stdout).signatures.map((s: { status: string }) => s.status), ['verified', 'verified']);
  });

  test('keygen --alg Ed25519 (RFC 9864\'s name) makes a key whose signatures say "Ed25519", and they verify', async () => {
    const made = await cli(['keygen', '--alg', 'Ed25519', '--json', '--private', file('ed25519.jwk.json'), '--jwks', file('ed25519-jwks.json')]);
    assert.equal(made.code, 0, made.stderr);
    assert.equal(JSON.parse(made.stdout).alg, 'Ed25519');
    const priv = readJson('ed25519.jwk.json');
    assert.deepEqual([priv.kty, priv.crv, priv.alg], ['OKP', 'Ed25519', 'Ed25519']);
    assert.equal(readJson('ed25519-jwks.json').keys[0].alg, 'Ed25519');
    const signed = await cli(['sign', '--json', file('card.json'), '--key', file('ed25519.jwk.json'), '-o', file('ed25519-signed.json')]);
    assert.equal(JSON.parse(signed.stdout).alg, 'Ed25519', signed.stderr);
    const header = JSON.parse(Buffer.from(readJson('ed25519-signed.json').signatures[0].protected, 'base64url').toString());
    assert.equal(header.alg, 'Ed25519');
    // Verified as the registry verifies (in this process: a third child process would cost a second).
    const { keys } = parseJwks(readJson('ed25519-jwks.json'), 'ed25519-jwks.json');
    const verifier = createSignatureVerifier({ configured: true, fingerprint: 'test', lookup: async (kid) => ({ keys: keys.filter((k) => k.kid === kid) }) });
    const { verification } = await verifier.verifyAgentCard(readJson('ed25519-signed.json'), '1.0');
    assert.deepEqual(verification.signatures.map((s) => [s.status, s.alg]), [['verified', 'Ed25519']]);
  });

  test('--sdk-form also signs what @a2a-js/sdk 1.3 verifies, for a card with a requirement without scopes: the SDK accepts it, and both signatures verify here', async () => {
    const card = readJson('card.json');
    card.securitySchemes = { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } };
    card.securityRequirements = [{ schemes: { bearer: {} } }];
    fs.writeFileSync(file('bearer.json'), JSON.stringify(card));
    const signed = await cli(['sign', '--sdk-form', file('bearer.json'), '--key', file('key.jwk.json'), '-o', file('bearer-signed.json')]);
    assert.equal(signed.code, 0, signed.stderr);
    const result = readJson('bearer-signed.json');
    assert.equal(result.signatures.length, 2);
    const publicJwk = readJson('jwks.json').keys.find((k: { kid: string }) => k.kid === 'publisher-2026');
    await verifyAgentCardSignature(async () => (await importJWK(publicJwk, 'ES256')) as CryptoKey)(result);
    const here = await cli(['verify', file('bearer-signed.json'), '--jwks', file('jwks.json'), '--json']);
    assert.deepEqual(JSON.parse(here.stdout).signatures.map((s: { status: string }) => s.status), ['verified', 'verified']);
    // Without --sdk-form, one signature, which the SDK's verifier does not accept (it leaves the requirement out).
    const plain = await cli(['sign', file('bearer.json'), '--key', file('key.jwk.json')]);
    await assert.rejects(verifyAgentCardSignature(async () => (await importJWK(publicJwk, 'ES256')) as CryptoKey)(JSON.parse(plain.stdout)), /No valid signatures/);
  });

  test('the signed card registers as verified in a registry that trusts the key set', async () => {
    const env = { A2A_REGISTRY_URL: registry.url, A2A_REGISTRY_TOKEN: TOKENS.alice };
    const human = await cli(['register', file('signed.json')], env);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /verified\s+yes \(kid publisher-2026, one of the registry operator's own keys\)/);
    const json = JSON.parse((await cli(['register', '--json', file('signed.json')], env)).stdout);
    assert.equal(json.verified, true);
    assert.equal(json.kid, 'publisher-2026');
    const unsigned = v1Card('CLI Unsigned Agent', 'https://cli-unsigned.example.org/a2a');
    fs.writeFileSync(file('unsigned.json'), JSON.stringify(unsigned));
    assert.equal((await cli(['register', file('unsigned.json')], env)).code, 0);
    const found = JSON.parse((await cli(['search', '--verified', '--json', 'CLI', 'agent'], env)).stdout);
    assert.deepEqual(found.results.map((h: { name: string }) => h.name), ['CLI Signed Agent']);
    const listed = JSON.parse((await cli(['ls', '--verified', '--json'], env)).stdout);
    assert.deepEqual(listed.entries.map((e: { name: string }) => e.name), ['CLI Signed Agent']);
  });

  test('sign refuses an invalid card and a key that cannot sign; a missing --key is a usage error', async () => {
    const broken = v1Card('Broken', 'javascript:alert(1)');
    fs.writeFileSync(file('broken.json'), JSON.stringify(broken));
    const invalid = await cli(['sign', file('broken.json'), '--key', file('key.jwk.json')]);
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /broken\.json:1:\d+ +\/supportedInterfaces\/0\/url/, 'located in the file, as validate does');
    fs.writeFileSync(file('not-json.json'), '{\n  "name": "x",\n}\n');
    const notJson = await cli(['verify', file('not-json.json'), '--jwks', file('jwks.json'), '--json']);
    assert.equal(notJson.code, 1);
    assert.match(notJson.stderr, /not-json\.json:3:1: not valid JSON: trailing comma/);
    assert.equal(JSON.parse(notJson.stdout).error.code, 'NOT_JSON', "validate's and register's code for such a file (it was FILE_ERROR)");
    const missing = await cli(['sign', file('no-such-card.json'), '--key', file('key.jwk.json')]);
    assert.equal(missing.code, 2, 'an unreadable file is exit 2, as for every command');
    // Prefixed with the program's name alone, as every other command's errors (it was "a2a-registry sign:").
    assert.match(missing.stderr, /^a2a-registry: cannot read .*no-such-card\.json: no such file/);
    // A key whose "alg" its curve cannot make: named with the file, before anything is signed.
    fs.writeFileSync(file('mislabelled.jwk.json'), JSON.stringify({ ...readJson('key.jwk.json'), alg: 'ES384' }));
    const mislabelled = await cli(['sign', file('card.json'), '--key', file('mislabelled.jwk.json')]);
    assert.equal(mislabelled.code, 1, mislabelled.stderr);
    assert.match(mislabelled.stderr, /mislabelled\.jwk\.json: its "alg" "ES384" does not fit the key, an EC key on curve "P-256", which signs with ES256: correct "alg" or leave it out/);
    // A ninth signature: verifiers check eight, so the new one would be the invalid one.
    const header = (kid: string) => Buffer.from(JSON.stringify({ alg: 'ES256', kid, typ: 'JOSE' })).toString('base64url');
    const eight = Array.from({ length: 8 }, (_, i) => ({ protected: header(`retired-${i}`), signature: 'c2ln' }));
    fs.writeFileSync(file('eight.json'), JSON.stringify({ ...readJson('card.json'), signatures: eight }));
    const ninth = await cli(['sign', file('eight.json'), '--key', file('key.jwk.json'), '-o', file('nine.json')]);
    assert.equal(ninth.code, 1, ninth.stderr);
    assert.match(ninth.stderr, /the signed card would carry 9 signatures, and verifiers check at most 8: remove the signatures of keys no longer in use \(the card has signatures by retired-0, retired-1, .*retired-7\)/);
    assert.equal(fs.existsSync(file('nine.json')), false, 'nothing written');
    const publicOnly = await cli(['sign', file('card.json'), '--key', file('jwks.json')]);
    assert.equal(publicOnly.code, 1);
    assert.match(publicOnly.stderr, /not a JSON Web Key|no private part/);
    assert.equal((await cli(['sign', file('card.json')])).code, 2);
    // Over 1 MiB, more than any registry takes: refused by name, not read further (`sign /dev/zero` ran out of memory).
    fs.writeFileSync(file('big.json'), ' '.repeat(1024 * 1024) + fs.readFileSync(file('card.json'), 'utf8'));
    const big = await cli(['sign', file('big.json'), '--key', file('key.jwk.json'), '-o', file('big-signed.json'), '--json']);
    assert.equal(big.code, 1, big.stderr);
    assert.match(big.stderr, /^a2a-registry: .*big\.json is over 1,048,576 bytes \(1 MiB\), more than any registry accepts/);
    assert.equal(JSON.parse(big.stdout).error.code, 'TOO_LARGE', 'as the README says, and validate and register answer (it was FILE_ERROR)');
    // Standard input twice: the card took it all and the key was "the file is empty" (exit 1).
    const [bothSign, bothVerify] = await Promise.all([cli(['sign', '-', '--key', '-']), cli(['verify', '-', '--jwks', '-', '--json'])]);
    assert.equal(bothSign.code, 2, bothSign.stderr);
    assert.equal(bothSign.stderr, 'a2a-registry: the card and --key are both "-", standard input, which can be read only once: give one of them as a file\n');
    assert.equal(bothVerify.code, 2, bothVerify.stderr);
    assert.match(JSON.parse(bothVerify.stdout).error.message, /^the card and --jwks are both "-"/);
    assert.equal(JSON.parse(bothVerify.stdout).error.code, 'USAGE', 'a usage error, not READ_ERROR: no file failed to be read');
  });

  test('an empty --kid (keygen, sign) and a --jku that is no http(s) URL are usage errors, not keys or signatures registries refuse', async () => {
    // keygen --kid "" wrote a key set whose key no registry trusts ("it has no kid").
    const emptyKeyId = await cli(['keygen', '--kid', '', '--private', file('empty-kid.jwk.json'), '--jwks', file('empty-kid-jwks.json')]);
    assert.equal(emptyKeyId.code, 2, emptyKeyId.stdout + emptyKeyId.stderr);
    assert.match(emptyKeyId.stderr, /--kid.*must not be empty/);
    assert.equal(fs.existsSync(file('empty-kid.jwk.json')), false, 'no key written');
    assert.equal(fs.existsSync(file('empty-kid-jwks.json')), false, 'no key set written');
    // sign --kid " " wrote a signature without a kid, which a registry refuses as invalid.
    const blankSignature = await cli(['sign', file('card.json'), '--key', file('key.jwk.json'), '--kid', ' ', '-o', file('blank-kid.json')]);
    assert.equal(blankSignature.code, 2, blankSignature.stdout + blankSignature.stderr);
    assert.match(blankSignature.stderr, /--kid.*must not be empty/);
    assert.equal(fs.existsSync(file('blank-kid.json')), false, 'nothing signed');
    for (const jku of ['not a url', 'ftp://keys.example.org/jwks.json', 'https://user:secret@keys.example.org/jwks.json']) {
      const refused = await cli(['sign', file('card.json'), '--key', file('key.jwk.json'), '--jku', jku]);
      assert.equal(refused.code, 2, `${jku}: ${refused.stdout}${refused.stderr}`);
      assert.match(refused.stderr, /--jku.*must/);
      assert.equal(refused.stdout, '', 'no signed card printed');
    }
    const withJku = await cli(['sign', file('card.json'), '--key', file('key.jwk.json'), '--jku', 'https://keys.example.org/jwks.json']);
    assert.equal(withJku.code, 0, withJku.stderr);
  });
});
