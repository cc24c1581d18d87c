/**
 * Signed cards (issue 15, point 3): every signature of a card is verified at registration with
 * the SDK's canonicalisation, against the operator's trust roots only, and gets a status; a
 * tampered card is never stored; entries and hits say whether they are verified, search and list
 * filter on it, and a change of trust roots re-evaluates what is stored. Real registries on
 * 127.0.0.1 (SQLite and PostgreSQL), real JWKS files, cards signed by this registry's signer
 * and by @a2a-js/sdk.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createPrivateKey, sign } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AgentCard, generateAgentCardSignature, verifyAgentCardSignature } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { FlattenedSign, base64url, flattenedVerify, generateSecret, importJWK, type JWK } from 'jose';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/observability/logger.js';
import { signCard } from '../src/trust/card-signing.js';
import { generateSigningKey, parseSigningKey, type SigningKey } from '../src/trust/jwks.js';
import { TrustRoots } from '../src/trust/trust-roots.js';
import { canonicalCardPayload } from '../src/validation/canonical-card.js';
import { CardTrust } from '../src/registry/card-trust.js';
import { ChangeFeed } from '../src/registry/change-feed.js';
import { SqliteStore } from '../src/storage/sqlite/index.js';
import { ACCEPTED_ALGORITHMS, createSignatureVerifier, type TrustedKeys } from '../src/validation/signature.js';
import { errorOf, op, resultOf, sdkClient, type WireJson } from './support/client.js';
import { mcpServer, toolspec, v03Card, v1Card } from './support/documents.js';
import { actor, entryWrite } from './support/store-fixtures.js';
import { usePostgres } from './support/postgres.js';
import { TOKENS, startTestRegistry, tempDir, type TestRegistry } from './support/registry.js';
import { eventually } from './support/eventually.js';

const dir = tempDir('a2a-registry-trust-');
after(() => fs.rmSync(dir, { recursive: true, force: true }));

async function key(alg: 'ES256' | 'EdDSA' | 'RS256' | 'PS256', kid: string): Promise<{ signing: SigningKey; publicJwk: JWK }> {
  const pair = await generateSigningKey(alg, kid);
  return { signing: await parseSigningKey(pair.privateJwk, kid, ACCEPTED_ALGORITHMS), publicJwk: pair.publicJwk };
}

function writeJwks(file: string, keys: JWK[]): void {
  // Written beside and renamed, as careful tools do: the watcher must see it either way.
  fs.writeFileSync(`${file}.tmp`, JSON.stringify({ keys }));
  fs.renameSync(`${file}.tmp`, file);
}

/**
 * What a2a-python 0.3 signs (`a2a.utils.helpers.canonicalize_agent_card`): model_dump(exclude_defaults=True,
 * exclude_none=True, by_alias=True) drops protocolVersion "0.3.0", preferredTransport "JSONRPC"
 * and every security scheme's "type" (its model's default); then empty values go (0.3.21 to
 * 0.3.23: every falsy value, false and 0 too), and json.dumps sorts the keys. PyJWT signs that
 * JSON re-serialised with json.dumps's ASCII escapes.
 */
const pythonPayload = (card: WireJson, falsy: boolean) =>
  spawnSync(
    'python3',
    [
      '-c',
      `import json, sys
card = json.load(sys.stdin)
card.pop('signatures', None)
for member, default in (('protocolVersion', '0.3.0'), ('preferredTransport', 'JSONRPC')):
    if card.get(member) == default: del card[member]
for scheme in card.get('securitySchemes', {}).values(): scheme.pop('type', None)
def clean(d):
    if isinstance(d, dict):
        d = {k: clean(v) for k, v in d.items()}
        return {k: v for k, v in d.items() if (v if ${falsy ? 'True' : 'False'} else v is not None)} or None
    if isinstance(d, list):
        d = [clean(v) for v in d]
        return [v for v in d if (v if ${falsy ? 'True' : 'False'} else v is not None)] or None
    return None if d == '' else d
canonical = json.dumps(clean(card), separators=(',', ':'), sort_keys=True)
print(json.dumps(json.loads(canonical), separators=(',', ':')), end='')`,
    ],
    { input: JSON.stringify(card), encoding: 'utf8' },
  );

/** Polls until `check` holds (no fixed sleeps). */
let n = 0;
const fresh = (name = 'Signed Agent') => v1Card(`${name} ${++n}`, `https://signed-${n}.example.org/a2a`) as WireJson;

let trusted: { signing: SigningKey; publicJwk: JWK };
let trustedEd: { signing: SigningKey; publicJwk: JWK };
let stranger: { signing: SigningKey; publicJwk: JWK };
/** Trusted as many published key sets write keys: without "alg" (or "use"), the algorithm told by its type and curve. */
let trustedBare: { signing: SigningKey; publicJwk: JWK };
/** Trusted as a key pair's export may publish it: the pair's key_ops (sign and verify) and ext. */
let trustedPairOps: { signing: SigningKey; publicJwk: JWK };
const postgres = usePostgres();

before(async () => {
  [trusted, trustedEd, stranger, trustedBare, trustedPairOps] = await Promise.all([
    key('ES256', 'trusted-es'), key('EdDSA', 'trusted-ed'), key('ES256', 'stranger'), key('ES256', 'trusted-bare'), key('ES256', 'trusted-pair-ops'),
  ]);
  const { alg: _alg, use: _use, ...bare } = trustedBare.publicJwk;
  trustedBare.publicJwk = bare;
  trustedPairOps.publicJwk = { ...trustedPairOps.publicJwk, key_ops: ['sign', 'verify'], ext: true };
});

describe('signature statuses and tampering (SQLite)', () => {
  let registry: TestRegistry;
  let alice: Client;
  let anonymous: Client;
  const jwksFile = path.join(dir, 'statuses-jwks.json');

  before(async () => {
    writeJwks(jwksFile, [trusted.publicJwk, trustedEd.publicJwk, trustedBare.publicJwk, trustedPairOps.publicJwk]);
    registry = await startTestRegistry({ REGISTRY_TRUSTED_KEYS: jwksFile });
    [alice, anonymous] = await Promise.all([sdkClient(registry.url, { token: TOKENS.alice }), sdkClient(registry.url)]);
  });
  after(async () => {
    await registry.close();
    fs.rmSync(registry.dataDir, { recursive: true, force: true });
  });

  const register = (card: unknown) => op(alice, { register: { agentCard: card } });
  const refusedAsTampered = async (card: WireJson, what: string, neverStored = true) => {
    const error = errorOf(await register(card));
    assert.equal(error.code, 'SIGNATURE_INVALID', what);
    assert.equal(error.details[0].path, '/signatures/0', what);
    assert.equal(error.details[0].rule, 'signature-invalid', what);
    if (neverStored) {
      const found = resultOf(await op(anonymous, { search: { query: card.name, limit: 100 } })).results;
      assert.ok(!found.some((h: WireJson) => h.name === card.name), `${what}: a tampered card is never stored`);
    }
    return error;
  };
  /** Registered as verified, with a warning for each security requirement its signature leaves uncovered. */
  const acceptedUncovered = async (card: WireJson, what: string, paths: string[]) => {
    const result = resultOf(await register(card));
    assert.equal(result.verified, true, what);
    assert.deepEqual(result.warnings.filter((w: WireJson) => w.rule === 'unsigned-requirement').map((w: WireJson) => w.path), paths, what);
  };

  test('a card carries at most 8 signatures: past them none is checked (each costs verifications anyone could ask for with validate), the card is refused saying why', async () => {
    const signed = await signCard(fresh('Many Signatures'), trusted.signing);
    // Signatures by kids this registry trusts, that verify nothing: what an attacker would send.
    const bogus = (i: number) => ({
      protected: base64url.encode(JSON.stringify({ alg: 'ES256', kid: 'trusted-es', typ: 'JOSE' })),
      signature: base64url.encode(new Uint8Array(64).fill(i)),
    });
    const withSignatures = (count: number) => ({ ...signed, signatures: [...(signed.signatures as unknown[]), ...Array.from({ length: count - 1 }, (_, i) => bogus(i))] });
    const eight = errorOf(await op(anonymous, { validate: { agentCard: withSignatures(8) } }));
    assert.equal(eight.code, 'SIGNATURE_INVALID');
    assert.equal(eight.details.length, 7, 'the seven bogus ones are checked, and invalid');
    assert.ok(eight.details.every((d: WireJson) => /does not match the card/.test(d.message)));
    const nine = errorOf(await op(anonymous, { validate: { agentCard: withSignatures(9) } }));
    assert.equal(nine.code, 'SIGNATURE_INVALID');
    assert.equal(nine.details.at(-1).path, '/signatures/8');
    assert.match(nine.details.at(-1).message, /not checked: a card may carry at most 8 signatures, and this one has 9/);
    // One valid signature with seven more of unknown keys (rotation, other verifiers) is fine.
    const others = Array.from({ length: 7 }, () => (signed.signatures as unknown[])[0] as WireJson).map((s, i) => ({ ...s, protected: base64url.encode(JSON.stringify({ alg: 'ES256', kid: `retired-${i}` })) }));
    assert.equal(resultOf(await op(anonymous, { validate: { agentCard: { ...signed, signatures: [...(signed.signatures as unknown[]), ...others] } } })).valid, true);
    // Eight of unknown keys, then the valid one, ninth: the refusal names that one (it said "the
    // first is not valid", with details[0] an unknown key's).
    const retired = { ...others[0]!, protected: base64url.encode(JSON.stringify({ alg: 'ES256', kid: 'retired-7' })) };
    const ninthValid = errorOf(await op(anonymous, { validate: { agentCard: { ...signed, signatures: [...others, retired, ...(signed.signatures as unknown[])] } } }));
    assert.equal(ninthValid.code, 'SIGNATURE_INVALID');
    assert.match(ninthValid.message, /^1 of the card's 9 signatures is invalid\. Signature 8 is not valid: not checked: a card may carry at most 8 signatures/);
    assert.deepEqual([ninthValid.details[0].path, ninthValid.details[0].rule], ['/signatures/8', 'signature-invalid'], 'the invalid one first');
    assert.equal(ninthValid.details.length, 9);
  });

  test('verified: with kid and alg, on the result, the entry and the search hit', async () => {
    const card = await signCard(fresh('Verified Agent'), trusted.signing);
    const result = resultOf(await register(card));
    assert.equal(result.verified, true);
    assert.equal(result.kid, 'trusted-es');
    assert.deepEqual(result.signatures, [{ status: 'verified', kid: 'trusted-es', alg: 'ES256', jwks: 'registry' }]);
    assert.ok(!result.warnings.some((w: WireJson) => /unsigned|unverified/.test(w.rule)));
    const entry = resultOf(await op(anonymous, { get: { id: result.id } }));
    assert.equal(entry.verified, true);
    assert.equal(entry.kid, 'trusted-es');
    assert.deepEqual(entry.signatures, result.signatures);
    assert.deepEqual(entry.document, card, 'stored exactly as sent, signatures included');
    const hit = resultOf(await op(anonymous, { search: { query: card.name } })).results[0];
    assert.equal(hit.verified, true);
    assert.equal(hit.kid, 'trusted-es');
  });

  test('EdDSA and a second signature by an unknown key: verified by the trusted one', async () => {
    const card = await signCard(await signCard(fresh(), stranger.signing), trustedEd.signing);
    const result = resultOf(await register(card));
    assert.equal(result.verified, true);
    assert.equal(result.kid, 'trusted-ed');
    assert.deepEqual(result.signatures.map((s: WireJson) => s.status), ['unknown-key', 'verified']);
    assert.equal(result.signatures[1].alg, 'EdDSA');
  });

  test('"Ed25519", RFC 9864\'s name for EdDSA over Ed25519 (what current signers write), verifies with the key published as "EdDSA"; a private key whose JWK says "Ed25519" signs so', async () => {
    // jose signs with the private JWK, "alg" in its header "Ed25519": a signer that follows RFC 9864.
    const card = fresh('Ed25519 Agent');
    const jws = await new FlattenedSign(new TextEncoder().encode(canonicalCardPayload(card, '1.0')))
      .setProtectedHeader({ alg: 'Ed25519', kid: 'trusted-ed', typ: 'JOSE' })
      .sign({ ...trustedEd.signing.jwk, alg: 'Ed25519' });
    const result = resultOf(await register({ ...card, signatures: [{ protected: jws.protected, signature: jws.signature }] }));
    assert.deepEqual([result.verified, result.signatures], [true, [{ status: 'verified', kid: 'trusted-ed', alg: 'Ed25519', jwks: 'registry' }]]);
    // The same key signs with the name its JWK gives ("EdDSA") by default, and with "Ed25519" when its JWK says so.
    const named = await parseSigningKey({ ...trustedEd.signing.jwk, alg: 'Ed25519' }, 'ed25519.jwk', ACCEPTED_ALGORITHMS);
    assert.equal(named.alg, 'Ed25519');
    assert.deepEqual(resultOf(await register(await signCard(fresh('Ed25519 Signed'), named))).signatures.map((s: WireJson) => [s.status, s.alg]), [['verified', 'Ed25519']]);
  });

  test('unknown-key: accepted unverified, with a warning that names the kid', async () => {
    const card = await signCard(fresh(), stranger.signing);
    const result = resultOf(await register(card));
    assert.equal(result.verified, false);
    assert.equal(result.kid, undefined);
    assert.equal(result.signatures[0].status, 'unknown-key');
    assert.match(result.signatures[0].reason, /no trusted key has kid "stranger"/);
    const warning = result.warnings.find((w: WireJson) => w.rule === 'unverified-signature');
    assert.match(warning.message, /"stranger"/);
    assert.equal(resultOf(await op(anonymous, { get: { id: result.id } })).verified, false);
  });

  test('a signature whose algorithm the trusted key of its kid cannot make (another publisher\'s key under the same kid) is by an unknown key, whether the JWK names its "alg" or not', async () => {
    assert.equal(resultOf(await register(await signCard(fresh(), trustedBare.signing))).verified, true, 'a key without "alg" verifies the signatures its curve makes');
    // An Ed25519 key of someone else's, under the kids of the operator's P-256 keys (one JWK with
    // "alg", one without). Refused as tampered before, for the key without "alg", with jose's
    // 'Invalid or unsupported JWK "alg" (Algorithm) Parameter value'.
    for (const kid of ['trusted-es', 'trusted-bare']) {
      const other: SigningKey = { ...stranger.signing, jwk: { ...trustedEd.signing.jwk, kid }, kid, alg: 'EdDSA' };
      const result = resultOf(await register(await signCard(fresh(), other)));
      assert.equal(result.verified, false, kid);
      assert.deepEqual(result.signatures, [{ status: 'unknown-key', kid, alg: 'EdDSA', reason: `the trusted key "${kid}" is for ES256, not EdDSA` }], kid);
      assert.ok(result.warnings.some((w: WireJson) => w.rule === 'unverified-signature'), kid);
    }
  });

  test('a trusted key published with its pair\'s key_ops (sign and verify) verifies: it is only ever used to verify', async () => {
    const result = resultOf(await register(await signCard(fresh(), trustedPairOps.signing)));
    assert.deepEqual([result.verified, result.kid], [true, 'trusted-pair-ops'], JSON.stringify(result.signatures));
  });

  test('a jku in the card is not a trust root: the stranger\'s own JWKS URL is never fetched', async () => {
    const card = await signCard(fresh(), stranger.signing, { jku: 'https://keys.attacker.example/jwks.json' });
    const result = resultOf(await register(card));
    assert.equal(result.signatures[0].status, 'unknown-key');
    assert.match(result.signatures[0].reason, /jku "https:\/\/keys\.attacker\.example\/jwks\.json" is not one of the registry's trusted JWKS URLs/);
  });

  test('unsigned: accepted unverified, with a warning (trust roots are configured)', async () => {
    const result = resultOf(await register(fresh()));
    assert.equal(result.verified, false);
    assert.deepEqual(result.signatures, []);
    assert.ok(result.warnings.some((w: WireJson) => w.rule === 'unsigned-card'));
  });

  test('invalid: tampering with any kind of field is refused with SIGNATURE_INVALID', async () => {
    const base = fresh('Tamper Target');
    base.provider = { organization: 'Acme', url: 'https://acme.example.org' };
    base.capabilities.extensions = [{ uri: 'https://acme.example.org/ext/billing', params: { currency: 'EUR', limits: { daily: 100 } } }];
    base.securitySchemes = { oauth: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: 'https://auth.acme.example.org/token', scopes: { read: 'Read' } } } } } };
    base.securityRequirements = [{ schemes: { oauth: { list: ['read'] } } }];
    const signed = await signCard(base, trusted.signing);
    const tampers: [string, (c: WireJson) => void][] = [
      ['name', (c) => (c.name = `${c.name} (official)`)],
      ['description', (c) => (c.description += ' Now free.')],
      ['version', (c) => (c.version = '9.9.9')],
      ['a skill added', (c) => c.skills.push({ id: 'exfiltrate', name: 'Exfiltrate', description: 'x', tags: ['x'] })],
      ['a skill removed', (c) => c.skills.pop()],
      ['a skill tag', (c) => (c.skills[0].tags[0] = 'payments')],
      ['a skill example', (c) => (c.skills[0].examples[0] = 'Send me your password')],
      ['an interface URL', (c) => (c.supportedInterfaces[0].url = 'https://evil.example.org/a2a')],
      ['an interface binding', (c) => (c.supportedInterfaces[0].protocolBinding = 'HTTP+JSON')],
      ['an interface added', (c) => c.supportedInterfaces.push({ url: 'https://evil.example.org/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' })],
      ['a capability', (c) => (c.capabilities.pushNotifications = true)],
      ['a nested extension param', (c) => (c.capabilities.extensions[0].params.limits.daily = 1_000_000)],
      ['an OAuth token URL', (c) => (c.securitySchemes.oauth.oauth2SecurityScheme.flows.clientCredentials.tokenUrl = 'https://evil.example.org/token')],
      ['a security requirement', (c) => (c.securityRequirements = [])],
      ['the provider', (c) => (c.provider.organization = 'Evil Corp')],
      ['default modes', (c) => c.defaultOutputModes.push('application/x-evil')],
      ['the signature bytes', (c) => {
        const bytes = base64url.decode(c.signatures[0].signature);
        bytes[0] ^= 1;
        c.signatures[0].signature = base64url.encode(bytes);
      }],
      ['the protected header (typ)', (c) => {
        const header = JSON.parse(new TextDecoder().decode(base64url.decode(c.signatures[0].protected)));
        header.typ = 'JWT';
        c.signatures[0].protected = base64url.encode(JSON.stringify(header));
      }],
      ['the protected header (kid of another trusted key)', (c) => {
        const header = JSON.parse(new TextDecoder().decode(base64url.decode(c.signatures[0].protected)));
        header.kid = 'trusted-ed';
        header.alg = 'EdDSA';
        c.signatures[0].protected = base64url.encode(JSON.stringify(header));
      }],
    ];
    for (const [what, tamper] of tampers) {
      const card = structuredClone(signed);
      tamper(card);
      await refusedAsTampered(card, what);
    }
    // The untouched card is fine (the base of every case above was valid).
    assert.equal(resultOf(await register(signed)).verified, true);
  });

  test('an algorithm outside the list (HS256, none, and a malformed header) is invalid', async () => {
    const payload = new TextEncoder().encode('{}');
    const secret = await generateSecret('HS256');
    const hs = await new FlattenedSign(payload).setProtectedHeader({ alg: 'HS256', kid: 'trusted-es', typ: 'JOSE' }).sign(secret);
    const hsError = await refusedAsTampered({ ...fresh(), signatures: [{ protected: hs.protected, signature: hs.signature }] }, 'HS256');
    assert.match(hsError.details[0].message, /algorithm "HS256" is refused: only asymmetric algorithms are accepted/);
    const none = base64url.encode(JSON.stringify({ alg: 'none', kid: 'trusted-es', typ: 'JOSE' }));
    const noneError = await refusedAsTampered({ ...fresh(), signatures: [{ protected: none, signature: 'AAAA' }] }, 'none');
    assert.match(noneError.details[0].message, /algorithm "none" is refused/);
    const garbage = await refusedAsTampered({ ...fresh(), signatures: [{ protected: 'not-json', signature: 'AAAA' }] }, 'garbage');
    assert.match(garbage.details[0].message, /not base64url-encoded JSON/);
  });

  test('a JWS A2A §8.4.2 does not sign is invalid with a reason that says what to change, not blaming the key: alg or kid outside the protected header or no string, "b64": false, an unknown "crit"', async () => {
    /** An ES256 signature by the trusted key, with this protected header (and unprotected one), over the card's payload or `signed`. */
    const signedWith = (header: WireJson, unprotected?: WireJson, signed?: (payload: string) => string) => {
      const card = fresh('Header Agent');
      const payload = canonicalCardPayload(card, '1.0');
      const protectedHeader = base64url.encode(JSON.stringify(header));
      const input = `${protectedHeader}.${signed ? signed(payload) : base64url.encode(payload)}`;
      const key = createPrivateKey({ key: trusted.signing.jwk as never, format: 'jwk' });
      const signature = base64url.encode(sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }));
      return { ...card, signatures: [{ protected: protectedHeader, signature, ...(unprotected ? { header: unprotected } : {}) }] };
    };
    const reason = async (card: WireJson) => {
      const error = errorOf(await op(anonymous, { validate: { agentCard: card } }));
      assert.equal(error.code, 'SIGNATURE_INVALID');
      return error.details[0].message as string;
    };
    assert.match(await reason(signedWith({ alg: 'ES256', typ: 'JOSE' }, { kid: 'trusted-es' })), /its "kid" is in the unprotected "header", which the signature does not cover; A2A §8.4.2 puts "alg" and "kid" in the protected header/);
    assert.match(await reason(signedWith({ kid: 'trusted-es', typ: 'JOSE' }, { alg: 'ES256' })), /its "alg" is in the unprotected "header"/);
    assert.match(await reason(signedWith({ alg: 'ES256', kid: 7, typ: 'JOSE' })), /its protected header's "kid" is 7, not a non-empty string/);
    assert.equal(resultOf(await op(anonymous, { validate: { agentCard: signedWith({ alg: 'ES256', kid: 'trusted-es', typ: 'JOSE' }) } })).verified, true, 'signed so, with the header A2A asks for, it verifies');
    // RFC 7797's unencoded payload, signed as it says: not the base64url encoding A2A signs.
    const unencoded = await reason(signedWith({ alg: 'ES256', kid: 'trusted-es', typ: 'JOSE', b64: false, crit: ['b64'] }, undefined, (payload) => payload));
    assert.match(unencoded, /it signs the card's JSON unencoded \("b64": false, RFC 7797\), and A2A §8\.4\.2 signs its base64url encoding; sign without "b64"/);
    const critical = await reason(signedWith({ alg: 'ES256', kid: 'trusted-es', typ: 'JOSE', crit: ['exp'], exp: 1 }));
    assert.match(critical, /its protected header marks \["exp"\] critical \("crit"\), an extension the registry does not implement/);
    for (const message of [unencoded, critical]) assert.doesNotMatch(message, /card was changed|cannot verify it/, 'the key is not at fault');
  });

  test('@a2a-js/sdk signatures verify here, and this registry\'s verify in the SDK', async () => {
    const privateKey = (await importJWK(trusted.signing.jwk, 'ES256')) as CryptoKey;
    const publicKey = (await importJWK(trusted.publicJwk, 'ES256')) as CryptoKey;
    const header = { alg: 'ES256', kid: 'trusted-es', typ: 'JOSE' };
    // The SDK's documented path: its TypeScript card type in, wire JSON out.
    const viaType = AgentCard.toJSON(await generateAgentCardSignature(privateKey, header)(AgentCard.fromJSON(fresh('SDK Agent'))));
    assert.equal(resultOf(await register(viaType)).verified, true);
    // Its signer given the wire JSON (what covers security schemes too).
    const withSchemes = fresh('SDK Schemes Agent');
    withSchemes.securitySchemes = { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } };
    const viaWire = (await generateAgentCardSignature(privateKey, header)(withSchemes as never)) as unknown as WireJson;
    assert.equal(resultOf(await register(JSON.parse(JSON.stringify(viaWire)))).verified, true);
    // Through the type, the SDK leaves the security schemes out of what it signs: refused, and told why.
    const lossy = fresh('SDK Lossy Agent');
    lossy.securitySchemes = { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } };
    const typed = AgentCard.toJSON(await generateAgentCardSignature(privateKey, header)(AgentCard.fromJSON(lossy)));
    assert.deepEqual((typed as WireJson).securitySchemes, lossy.securitySchemes, 'the schemes are on the card...');
    const error = errorOf(await register(typed));
    assert.equal(error.code, 'SIGNATURE_INVALID');
    assert.match(error.details[0].message, /without its "securitySchemes"/, '...but not in what was signed');
    // The other way round: a card signed here passes the SDK's own verifier.
    const ours = await signCard(fresh('Ours'), trusted.signing);
    await verifyAgentCardSignature(async () => publicKey)(AgentCard.fromJSON(ours));
  });

  test('A2A §8.4.1 field presence: a card signed by an independent signer (RFC 8785 written here, jose) verifies, REQUIRED, optional and set members kept though empty; what this registry signs verifies with that independent verifier', async () => {
    // RFC 8785 written from the RFC, not the registry's: strings escaped per §3.2.2.2, numbers per
    // §3.2.2.3 (ECMAScript's Number-to-String), members sorted by UTF-16 code units (§3.2.3).
    const str = (v: string) =>
      `"${[...v]
        .map((c) => {
          const code = c.charCodeAt(0);
          const short: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
          return short[c] ?? (code < 0x20 ? `\\u${code.toString(16).padStart(4, '0')}` : c);
        })
        .join('')}"`;
    const byCodeUnits = (a: string, b: string) => {
      for (let i = 0; i < Math.min(a.length, b.length); i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) return a.charCodeAt(i) - b.charCodeAt(i);
      return a.length - b.length;
    };
    const canon = (v: unknown): string =>
      v === null || typeof v === 'boolean'
        ? String(v)
        : typeof v === 'number'
          ? Object.is(v, -0) ? '0' : String(v)
          : typeof v === 'string'
            ? str(v)
            : Array.isArray(v)
              ? `[${v.map(canon).join(',')}]`
              : `{${Object.keys(v as object).sort(byCodeUnits).map((k) => `${str(k)}:${canon((v as WireJson)[k])}`).join(',')}}`;
    assert.equal(canon({ b: [1e21, 1e-7, 0.1, -0, 1.5], 'é': 'a\u0001\u2028"', a: { '\u20ac': 1, '\ud83d\ude00': 2, '\r': 3 } }), '{"a":{"\\r":3,"€":1,"😀":2},"b":[1e+21,1e-7,0.1,0,1.5],"é":"a\\u0001\u2028\\""}', 'RFC 8785 as written');
    // A card holding only members §8.4.1 keeps: REQUIRED "capabilities" (empty), an `optional`
    // "documentationUrl" set to "", a scheme set without members, an OAuth flow's REQUIRED
    // "scopes" (empty), an extension's params (a Struct: written as given, empty values too).
    const card = fresh('Presence Agent');
    card.capabilities = {};
    card.documentationUrl = '';
    card.securitySchemes = {
      mtls: { mtlsSecurityScheme: {} },
      oauth: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: 'https://auth.presence.example.org/token', scopes: {} } } } },
    };
    const presence = { ...card, capabilities: { extensions: [{ uri: 'urn:presence', params: { empty: '', none: null, list: [], map: {}, zero: 0, no: false, big: 1e21, tiny: 1e-7, '€': 'é😀' } }] } };
    const specSigned = async (c: WireJson): Promise<WireJson> => {
      const jws = await new FlattenedSign(new TextEncoder().encode(canon(c))).setProtectedHeader({ alg: 'ES256', kid: 'trusted-es', typ: 'JOSE' }).sign(trusted.signing.jwk);
      return { ...c, signatures: [{ protected: jws.protected, signature: jws.signature }] };
    };
    for (const [what, c] of [['"capabilities": {}, "documentationUrl": "", empty scheme and scopes', card], ['an extension\'s params with empty values', presence]] as const) {
      const signed = await specSigned(c);
      const result = resultOf(await register(signed));
      assert.equal(result.verified, true, `${what}: ${JSON.stringify(result.signatures)}`);
      assert.ok(!result.warnings.some((w: WireJson) => /unsigned/.test(w.rule)), `${what}: ${JSON.stringify(result.warnings)}`);
    }
    // Those members are covered: removed after signing, the card is refused.
    const signedPresence = await specSigned(presence);
    const withoutEmpty = structuredClone(signedPresence);
    delete withoutEmpty.capabilities.extensions[0].params.empty;
    await refusedAsTampered(withoutEmpty, 'an empty param removed', false);
    const withoutScheme = structuredClone(await specSigned(card));
    delete withoutScheme.securitySchemes.mtls;
    await refusedAsTampered(withoutScheme, 'a scheme without members removed', false);

    // What this registry signs verifies with the independent verifier (over RFC 8785 of the card
    // without "signatures"), and with @a2a-js/sdk's when it signs the SDK's form too.
    const publicKey = (await importJWK(trusted.publicJwk, 'ES256')) as CryptoKey;
    const ours = await signCard(presence, trusted.signing, { sdkCompatible: true });
    const { signatures, ...unsigned } = ours;
    const first = (signatures as WireJson[])[0]!;
    await flattenedVerify({ protected: first.protected, signature: first.signature, payload: base64url.encode(canon(unsigned)) }, publicKey, { algorithms: ['ES256'] });
    await verifyAgentCardSignature(async () => publicKey)(ours as never);
    assert.deepEqual(resultOf(await register(ours)).signatures.map((s: WireJson) => s.status), ['verified', 'verified']);
    // A signature over the form earlier builds (and the SDK) signed, every empty value left out, still verifies.
    const privateKey = (await importJWK(trusted.signing.jwk, 'ES256')) as CryptoKey;
    const sdkSigned = (await generateAgentCardSignature(privateKey, { alg: 'ES256', kid: 'trusted-es', typ: 'JOSE' })(structuredClone(presence) as never)) as unknown as WireJson;
    const sdkResult = resultOf(await register(JSON.parse(JSON.stringify(sdkSigned))));
    assert.equal(sdkResult.verified, true);
    // ...but it does not cover the card's empty values, which could be removed or added under it: each is named.
    const unsignedEmpty = sdkResult.warnings.filter((w: WireJson) => w.rule === 'unsigned-empty-value');
    assert.deepEqual(
      unsignedEmpty.map((w: WireJson) => w.path).sort(),
      [
        '/capabilities/extensions/0/params/empty',
        '/capabilities/extensions/0/params/none',
        '/capabilities/extensions/0/params/list',
        '/capabilities/extensions/0/params/map',
        '/documentationUrl',
        '/securitySchemes/mtls',
        '/securitySchemes/oauth/oauth2SecurityScheme/flows/clientCredentials/scopes',
      ].sort(),
      JSON.stringify(sdkResult.warnings),
    );
    assert.match(unsignedEmpty[0].message, /not covered by the card's signature: it is over the older form @a2a-js\/sdk 1\.3 .* leaves out every "", null, \[\] and \{\}/);
    assert.match(unsignedEmpty[0].hint, /sign the card again with a2a-registry sign/);
    // The SDK's signature beside one over §8.4.1's form (sign --sdk-form): covered, no warning.
    assert.ok(!resultOf(await register(ours)).warnings.some((w: WireJson) => w.rule === 'unsigned-empty-value'));
  });

  test('non-ASCII text: signed as RFC 8785 writes it, or \\u-escaped as a2a-python (json.dumps) writes it', async (t) => {
    const card = fresh('Übersetzer');
    card.description = 'Übersetzt Rechnungen — schnell 😀';
    assert.equal(resultOf(await register(await signCard(card, trusted.signing))).verified, true);

    // What a2a-python signs: its canonical dict through json.dumps(sort_keys=True, separators=(',', ':')).
    const python = spawnSync('python3', ['-c', 'import json,sys; print(json.dumps(json.load(sys.stdin), sort_keys=True, separators=(",", ":")), end="")'], {
      input: canonicalCardPayload(card, '1.0'),
      encoding: 'utf8',
    });
    if (python.status !== 0) return t.skip('python3 is not available');
    assert.match(python.stdout, /\\u00dcbersetzt Rechnungen \\u2014 schnell \\ud83d\\ude00/);
    const jws = await new FlattenedSign(new TextEncoder().encode(python.stdout)).setProtectedHeader({ alg: 'ES256', kid: 'trusted-es', typ: 'JOSE' }).sign(trusted.signing.jwk);
    const other = { ...card, name: `${card.name} (py)`, supportedInterfaces: [{ ...card.supportedInterfaces[0], url: `https://py-${n}.example.org/a2a` }] };
    const pySigned = { ...card, signatures: [{ protected: jws.protected, signature: jws.signature }] };
    assert.equal(resultOf(await register(pySigned)).verified, true, 'the escaped form of the same card verifies');
    // The escaping is of the same value: a changed card still fails.
    await refusedAsTampered({ ...other, signatures: pySigned.signatures }, 'escaped payload, other card');
  });

  test('a v0.3 card: every field, its url included, is covered', async () => {
    const card = await signCard(v03Card(`Old Signed ${++n}`, `https://old-signed-${n}.example.org/a2a`), trusted.signing);
    const stored = resultOf(await register(card));
    assert.equal(stored.verified, true);
    await refusedAsTampered({ ...card, url: `https://old-signed-${n}.example.org/evil` }, 'v0.3 url', false);
    await refusedAsTampered({ ...card, preferredTransport: 'HTTP+JSON' }, 'v0.3 preferredTransport', false);
    assert.equal(resultOf(await op(anonymous, { get: { id: stored.id } })).revision, 1, 'nothing changed');
  });

  test('a v0.3 card signed by a2a-python 0.3 (its payload leaves default values out) verifies; changed, it does not; without a scope-less requirement it signs, verified with a warning', async (t) => {
    const card = {
      ...v03Card(`Python Signed ${++n}`, `https://python-signed-${n}.example.org/a2a`),
      description: 'Wettervorhersage für jede Stadt.',
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' }, key: { type: 'apiKey', name: 'X-Key', in: 'header' } },
      security: [{ bearer: ['forecasts'] }, { key: ['read'] }],
    } as WireJson;
    for (const falsy of [false, true]) {
      const variant: WireJson = { ...card, name: `${card.name} (${falsy ? '0.3.21-0.3.23' : '0.3.24+'})`, url: `${card.url}/${falsy ? 'old' : 'new'}` };
      const payload = pythonPayload(variant, falsy);
      if (payload.status !== 0) return t.skip(`python3 is not available (${payload.stderr})`);
      assert.doesNotMatch(payload.stdout, /protocolVersion|preferredTransport|"type"/, 'the defaults are left out');
      assert.match(payload.stdout, /f\\u00fcr/, 'escaped as json.dumps writes it');
      assert.equal(payload.stdout.includes('"streaming":false'), !falsy);
      const jws = await new FlattenedSign(new TextEncoder().encode(payload.stdout)).setProtectedHeader({ alg: 'ES256', kid: 'trusted-es', typ: 'JOSE' }).sign(trusted.signing.jwk);
      const signatures = [{ protected: jws.protected, signature: jws.signature }];
      const stored = resultOf(await register({ ...variant, signatures }));
      assert.equal(stored.verified, true, variant.name);
      assert.deepEqual(stored.signatures, [{ status: 'verified', kid: 'trusted-es', alg: 'ES256', jwks: 'registry' }]);
      await refusedAsTampered({ ...variant, url: `${variant.url}/evil`, signatures }, `${variant.name}: another url`, false);
      await refusedAsTampered({ ...variant, preferredTransport: 'HTTP+JSON', signatures }, `${variant.name}: another transport`, false);
      const otherKey = { ...variant.securitySchemes, key: { type: 'apiKey', name: 'X-Other-Key', in: 'header' } };
      await refusedAsTampered({ ...variant, securitySchemes: otherKey, signatures }, `${variant.name}: another API key header`, false);
      // The payload has no "type", but the members name it: another type (a valid card) is refused.
      const otherType = { ...variant.securitySchemes, bearer: { type: 'mutualTLS', scheme: 'bearer' } };
      await refusedAsTampered({ ...variant, securitySchemes: otherType, signatures }, `${variant.name}: bearer turned into mutual TLS`, false);
    }
    // A scheme required without scopes ({"bearer": []}) is an empty value to a2a-python: its
    // signature does not cover the requirement; verified, with a warning saying so.
    const scopeless: WireJson = { ...card, name: `${card.name} (no scopes)`, url: `${card.url}/scopeless`, security: [{ bearer: [] }] };
    const payload = pythonPayload(scopeless, false);
    assert.doesNotMatch(payload.stdout, /"security"/);
    const jws = await new FlattenedSign(new TextEncoder().encode(payload.stdout)).setProtectedHeader({ alg: 'ES256', kid: 'trusted-es', typ: 'JOSE' }).sign(trusted.signing.jwk);
    await acceptedUncovered({ ...scopeless, signatures: [{ protected: jws.protected, signature: jws.signature }] }, 'a2a-python 0.3, a requirement without scopes', ['/security/0']);
  });

  test('a2a-python 0.3.21-0.3.23 leave every false and 0 out: a false capability turned true is refused; a false or 0 where left out means otherwise (an extension\'s params) verifies with a warning naming it', async (t) => {
    const card = {
      ...v03Card(`Falsy Signed ${++n}`, `https://falsy-signed-${n}.example.org/a2a`),
      capabilities: {
        streaming: false,
        pushNotifications: true,
        extensions: [{ uri: 'https://ext.example.org/sandbox/v1', required: false, params: { sandbox: false, maxRetries: 0, ports: [0, 443] } }],
      },
      supportsAuthenticatedExtendedCard: false,
    } as WireJson;
    const payload = pythonPayload(card, true);
    if (payload.status !== 0) return t.skip(`python3 is not available (${payload.stderr})`);
    assert.doesNotMatch(payload.stdout, /false|:0\b|\[0/, 'no false and no 0 in what 0.3.21-0.3.23 sign');
    const jws = await new FlattenedSign(new TextEncoder().encode(payload.stdout)).setProtectedHeader({ alg: 'ES256', kid: 'trusted-es', typ: 'JOSE' }).sign(trusted.signing.jwk);
    const signatures = [{ protected: jws.protected, signature: jws.signature }];
    const unsignedValues = (result: WireJson) => result.warnings.filter((w: WireJson) => w.rule === 'unsigned-value').map((w: WireJson) => w.path);

    const stored = resultOf(await register({ ...card, signatures }));
    assert.equal(stored.verified, true);
    assert.deepEqual(stored.signatures, [{ status: 'verified', kid: 'trusted-es', alg: 'ES256', jwks: 'registry' }]);
    // The schema's booleans mean false left out (no warning); the extension's params may not.
    const params = '/capabilities/extensions/0/params';
    assert.deepEqual(unsignedValues(stored), [`${params}/sandbox`, `${params}/maxRetries`, `${params}/ports/0`]);
    assert.match(stored.warnings.find((w: WireJson) => w.rule === 'unsigned-value').message, /a2a-python 0\.3\.21 to 0\.3\.23/);

    // A false turned true, a 0 turned 5: in the payload now, so the signature breaks.
    await refusedAsTampered({ ...card, capabilities: { ...card.capabilities, streaming: true }, signatures }, 'streaming false turned true', false);
    await refusedAsTampered({ ...card, supportsAuthenticatedExtendedCard: true, signatures }, 'supportsAuthenticatedExtendedCard false turned true', false);
    const withParams = (p: WireJson) => ({ ...card, capabilities: { ...card.capabilities, extensions: [{ ...card.capabilities.extensions[0], params: p }] }, signatures });
    await refusedAsTampered(withParams({ sandbox: false, maxRetries: 5, ports: [0, 443] }), 'maxRetries 0 turned 5', false);
    // A false added where the signer had none: the signature still verifies; the warning names it.
    const added = resultOf(await register(withParams({ sandbox: false, maxRetries: 0, ports: [443, 0], dryRun: false })));
    assert.equal(added.verified, true);
    assert.deepEqual(unsignedValues(added), [`${params}/sandbox`, `${params}/maxRetries`, `${params}/ports/1`, `${params}/dryRun`]);

    // Signed in the form that keeps them (0.3.24 and later), the same values are covered: no warning.
    const covered = { ...card, name: `${card.name} (0.3.24+)`, url: `${card.url}/new` };
    const kept = pythonPayload(covered, false);
    const keptJws = await new FlattenedSign(new TextEncoder().encode(kept.stdout)).setProtectedHeader({ alg: 'ES256', kid: 'trusted-es', typ: 'JOSE' }).sign(trusted.signing.jwk);
    const keptResult = resultOf(await register({ ...covered, signatures: [{ protected: keptJws.protected, signature: keptJws.signature }] }));
    assert.equal(keptResult.verified, true);
    assert.deepEqual(unsignedValues(keptResult), []);
  });

  test('a security requirement without scopes is covered (v1.0 and v0.3): signed as A2A §8.4 says, it verifies; removed after signing, refused; added, not covered, as the SDKs sign', async () => {
    // A publisher following the spec with jose: RFC 8785 of the card without "signatures" (these
    // cards hold no default values). A scheme required without scopes is a map entry, not a
    // default: it is in what they sign.
    const jcs = (v: unknown): string =>
      v === null || typeof v !== 'object'
        ? JSON.stringify(v)
        : Array.isArray(v)
          ? `[${v.map(jcs).join(',')}]`
          : `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${jcs((v as WireJson)[k])}`).join(',')}}`;
    const specSigned = async (card: WireJson): Promise<WireJson> => {
      const jws = await new FlattenedSign(new TextEncoder().encode(jcs(card))).setProtectedHeader({ alg: 'ES256', kid: 'trusted-es', typ: 'JOSE' }).sign(trusted.signing.jwk);
      return { ...card, signatures: [{ protected: jws.protected, signature: jws.signature }] };
    };
    const v1 = (requirements?: unknown[]) => {
      const card = fresh('Key Agent');
      card.securitySchemes = { key: { apiKeySecurityScheme: { location: 'header', name: 'X-Key' } } };
      if (requirements) card.securityRequirements = requirements;
      return card;
    };
    const v03 = (security?: unknown[]) => {
      const card: WireJson = { ...v03Card(`Old Key Agent ${++n}`, `https://old-key-${n}.example.org/a2a`), securitySchemes: { key: { type: 'apiKey', name: 'X-Key', in: 'header' } } };
      if (security) card.security = security;
      return card;
    };

    const required = await specSigned(v1([{ schemes: { key: {} } }]));
    assert.equal(resultOf(await register(required)).verified, true, 'v1.0: signed with the requirement, it verifies');
    assert.equal(resultOf(await register({ ...required, securityRequirements: [{ schemes: { key: { list: [] } } }] })).verified, true, 'an empty "list" is its default value');
    await refusedAsTampered({ ...required, securityRequirements: undefined }, 'v1.0: the requirement removed', false);
    await refusedAsTampered({ ...required, securityRequirements: [{ schemes: { key: {} } }, { schemes: {} }] }, 'v1.0: "or no credentials" added', false);
    const open = await specSigned(v1());
    assert.equal(resultOf(await register(open)).verified, true);
    // Added to a card signed without one, a requirement without scopes reads as what the SDKs sign
    // (they leave it out), which verifies as it does in their verifiers: the warning says that
    // signature does not cover it.
    await acceptedUncovered({ ...open, securityRequirements: [{ schemes: { key: {} } }] }, 'v1.0: a requirement added', ['/securityRequirements/0']);
    await acceptedUncovered({ ...open, securityRequirements: [{ schemes: { key: { list: [] } } }] }, 'v1.0: a requirement added (with an empty list)', ['/securityRequirements/0']);
    const skills = structuredClone(open.skills) as WireJson[];
    skills[0]!.securityRequirements = [{ schemes: { key: {} } }];
    await acceptedUncovered({ ...open, skills }, 'v1.0: a skill\'s requirement added', ['/skills/0/securityRequirements/0']);
    // A requirement with scopes is covered by every form: added, refused.
    await refusedAsTampered({ ...open, securityRequirements: [{ schemes: { key: { list: ['admin'] } } }] }, 'v1.0: a requirement with a scope added', false);

    const old = await specSigned(v03([{ key: [] }]));
    assert.equal(resultOf(await register(old)).verified, true, 'v0.3: signed with the requirement, it verifies');
    await refusedAsTampered({ ...old, security: undefined }, 'v0.3: the requirement removed', false);
    await refusedAsTampered({ ...old, security: [{ key: [] }, {}] }, 'v0.3: "or no credentials" added', false);
    const oldOpen = await specSigned(v03());
    assert.equal(resultOf(await register(oldOpen)).verified, true);
    await acceptedUncovered({ ...oldOpen, security: [{ key: [] }] }, 'v0.3: a requirement added', ['/security/0']);

    // What @a2a-js/sdk 1.3 signs (given the wire JSON) leaves the requirement out: verified, as
    // the SDK's verifier does, with a warning that the requirement is not covered.
    const privateKey = (await importJWK(trusted.signing.jwk, 'ES256')) as CryptoKey;
    const sdkSigned = (await generateAgentCardSignature(privateKey, { alg: 'ES256', kid: 'trusted-es', typ: 'JOSE' })(v1([{ schemes: { key: {} } }]) as never)) as unknown as WireJson;
    const sdkResult = resultOf(await register(JSON.parse(JSON.stringify(sdkSigned))));
    assert.equal(sdkResult.verified, true);
    const uncovered = sdkResult.warnings.filter((w: WireJson) => w.rule === 'unsigned-requirement');
    assert.deepEqual(uncovered.map((w: WireJson) => w.path), ['/securityRequirements/0'], JSON.stringify(sdkResult.warnings));
    assert.match(uncovered[0].message, /not covered by the card's signature/);
    assert.ok(!resultOf(await register(required)).warnings.some((w: WireJson) => w.rule === 'unsigned-requirement'), 'none for a signature that covers it');
    // Signed both ways (a2a-registry's own card does): the card counts as signed by the one covering all, no warning.
    const both = await signCard(v1([{ schemes: { key: {} } }]), trusted.signing, { sdkCompatible: true });
    assert.equal((both.signatures as unknown[]).length, 2);
    const bothResult = resultOf(await register(both));
    assert.deepEqual(bothResult.signatures.map((s: WireJson) => s.status), ['verified', 'verified']);
    assert.ok(!bothResult.warnings.some((w: WireJson) => w.rule === 'unsigned-requirement'), JSON.stringify(bothResult.warnings));
  });

  test('a field outside the v1.0 card is not covered: accepted, with a warning saying so', async () => {
    const card = await signCard(fresh(), trusted.signing);
    const result = resultOf(await register({ ...card, homepage: 'https://evil.example.org' }));
    assert.equal(result.verified, true);
    assert.ok(result.warnings.some((w: WireJson) => w.rule === 'unsigned-field' && w.path === '/homepage'), JSON.stringify(result.warnings));
  });

  test('validate gives the same statuses and declines a tampered card the same way', async () => {
    const card = await signCard(fresh(), trusted.signing);
    const ok = resultOf(await op(anonymous, { validate: { agentCard: card } }));
    assert.equal(ok.verified, true);
    assert.deepEqual(ok.signatures, [{ status: 'verified', kid: 'trusted-es', alg: 'ES256', jwks: 'registry' }]);
    const error = errorOf(await op(anonymous, { validate: { agentCard: { ...card, name: 'Changed' } } }));
    assert.equal(error.code, 'SIGNATURE_INVALID');
  });

  test('search and list filter on "verified"', async () => {
    const verified = resultOf(await register(await signCard(fresh('Filterable Zebra'), trusted.signing)));
    const unverified = resultOf(await register(fresh('Filterable Zebra')));
    const hits = async (filter: WireJson) => resultOf(await op(anonymous, { search: { query: 'filterable zebra', filter } })).results.map((h: WireJson) => h.id);
    assert.deepEqual(await hits({ verified: true }), [verified.id]);
    assert.deepEqual(await hits({ verified: false }), [unverified.id]);
    assert.equal((await hits({})).length, 2);
    const listed = resultOf(await op(anonymous, { list: { filter: { verified: true }, pageSize: 100 } })).entries;
    assert.ok(listed.length > 0 && listed.every((e: WireJson) => e.verified === true));
    assert.ok(listed.some((e: WireJson) => e.id === verified.id));
    const notListed = resultOf(await op(anonymous, { list: { filter: { verified: false }, pageSize: 100 } })).entries;
    assert.ok(notListed.some((e: WireJson) => e.id === unverified.id) && notListed.every((e: WireJson) => e.verified === false));
  });
});

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`trust roots change: key rotation re-evaluates stored entries (${engine})`, () => {
    let registry: TestRegistry | undefined;
    let alice: Client;
    let anonymous: Client;
    let oldKey: { signing: SigningKey; publicJwk: JWK };
    let newKey: { signing: SigningKey; publicJwk: JWK };
    /** Trusted, under a kid holding U+0000. */
    let nulKey: { signing: SigningKey; publicJwk: JWK };
    const jwksFile = path.join(dir, `rotation-${engine}.json`);
    const skip = () => (engine === 'postgres' ? postgres.skipReason : undefined);

    before(async () => {
      if (skip()) return;
      [oldKey, newKey, nulKey] = await Promise.all([key('ES256', `old-${engine}`), key('PS256', `new-${engine}`), key('ES256', `nul\u0000${engine}`)]);
      writeJwks(jwksFile, [oldKey.publicJwk, newKey.publicJwk, nulKey.publicJwk]);
      const env: Record<string, string> = { REGISTRY_TRUSTED_KEYS: jwksFile };
      if (engine === 'postgres') env.DATABASE_URL = await postgres.server.createDatabase('rotation');
      registry = await startTestRegistry(env);
      [alice, anonymous] = await Promise.all([sdkClient(registry.url, { token: TOKENS.alice }), sdkClient(registry.url)]);
    });
    after(async () => {
      await registry?.close();
      if (registry) fs.rmSync(registry.dataDir, { recursive: true, force: true });
    });

    test('a signature whose protected header holds U+0000 (a trusted key\'s kid) or an unpaired surrogate is invalid, and its card refused, on both engines', async (t) => {
      if (skip()) return t.skip(skip());
      // SQLite stored the first verified, its kid holding the NUL; PostgreSQL refused it BAD_REQUEST.
      const lone = await key('ES256', `lone\ud800${engine}`);
      for (const [signing, said] of [
        [nulKey.signing, /: its protected header's "kid" holds the character U\+0000 \(NUL\) at position 3, which the registry keeps on no storage engine as written: sign the card again with a protected header of printable text$/],
        [lone.signing, /: its protected header's "kid" holds an unpaired surrogate/],
      ] as const) {
        const card = await signCard(fresh('Unkept Kid'), signing);
        const error = errorOf(await op(alice, { register: { agentCard: card } }));
        assert.equal(error.code, 'SIGNATURE_INVALID', JSON.stringify(error));
        assert.deepEqual(error.details.map((d: WireJson) => d.path), ['/signatures/0']);
        assert.match(error.details[0].message, said);
        assert.equal(errorOf(await op(anonymous, { validate: { agentCard: card } })).code, 'SIGNATURE_INVALID', 'validate declines it the same way');
      }
    });

    test('two keys, the old one removed: cards signed by both stay verified, cards signed by the old one only are no longer', async (t) => {
      if (skip()) return t.skip(skip());
      const both = resultOf(await op(alice, { register: { agentCard: await signCard(await signCard(fresh('Rotating Both'), oldKey.signing), newKey.signing) } }));
      const onlyOld = resultOf(await op(alice, { register: { agentCard: await signCard(fresh('Rotating Old'), oldKey.signing) } }));
      assert.equal(both.kid, `old-${engine}`);
      assert.equal(onlyOld.verified, true);

      // The ARD entry, as a client caches it.
      const ardEntry = (headers: Record<string, string> = {}) => fetch(`${registry!.url}/agents/${onlyOld.id}`, { headers });
      const cached = await ardEntry();
      assert.equal(((await cached.json()) as WireJson).metadata.verified, true);

      writeJwks(jwksFile, [newKey.publicJwk]);
      const entry = (id: string) => op(anonymous, { get: { id } }).then(resultOf);
      // Entries are re-evaluated one after another, in no promised order: wait for both.
      await eventually(async () => (await entry(onlyOld.id)).verified === false && (await entry(both.id)).kid === `new-${engine}`, 'both entries are re-evaluated');
      // Revalidated, by ETag or by date, it is no longer the cached one: it was 304 by date (Last-Modified had not moved).
      const since = new Date(Date.now() + 1000).toUTCString();
      const revalidations: Record<string, string>[] = [{ 'if-none-match': cached.headers.get('etag')! }, { 'if-modified-since': cached.headers.get('last-modified') ?? since }];
      for (const validators of revalidations) {
        const again = await ardEntry(validators);
        assert.equal(again.status, 200, JSON.stringify(validators));
        assert.equal(((await again.json()) as WireJson).metadata.verified, false);
      }
      const old = await entry(onlyOld.id);
      assert.equal(old.signatures[0].status, 'unknown-key');
      assert.equal(old.revision, 1, 'a re-evaluation is no new revision');
      const stillVerified = await entry(both.id);
      assert.equal(stillVerified.verified, true);
      assert.equal(stillVerified.kid, `new-${engine}`);
      assert.deepEqual(stillVerified.signatures.map((s: WireJson) => s.status), ['unknown-key', 'verified']);
      // The index followed: hits and the filter agree.
      const hits = resultOf(await op(anonymous, { search: { query: 'rotating', filter: { verified: true } } })).results.map((h: WireJson) => h.id);
      assert.deepEqual(hits, [both.id]);

      // Trusting the old key again verifies its card again.
      writeJwks(jwksFile, [newKey.publicJwk, oldKey.publicJwk]);
      await eventually(async () => (await entry(onlyOld.id)).verified === true, 'the old-key entry is verified again');
    });

    test('a card stored while its key was unknown, whose signature that key does not verify once trusted: stored still, unverified, the signature invalid', async (t) => {
      if (skip()) return t.skip(skip());
      const later = await key('ES256', `later-${engine}`);
      const card = await signCard(fresh('Signed Before Trusted'), later.signing);
      card.description = 'Changed after it was signed.';
      const stored = resultOf(await op(alice, { register: { agentCard: card } }));
      assert.equal(stored.signatures[0].status, 'unknown-key');
      writeJwks(jwksFile, [newKey.publicJwk, oldKey.publicJwk, later.publicJwk]);
      const entry = () => op(anonymous, { get: { id: stored.id } }).then(resultOf);
      await eventually(async () => (await entry()).signatures[0].status === 'invalid', 'the entry is re-evaluated');
      const now = await entry();
      assert.equal(now.verified, false);
      assert.match(now.signatures[0].reason, /the card was changed after it was signed/);
      writeJwks(jwksFile, [newKey.publicJwk, oldKey.publicJwk]);
    });

    test('a broken edit of the keys file keeps the keys in force', async (t) => {
      if (skip()) return t.skip(skip());
      const signed = resultOf(await op(alice, { register: { agentCard: await signCard(fresh('Broken Edit'), newKey.signing) } }));
      fs.writeFileSync(jwksFile, '{"keys": [');
      // A registration after the broken edit is still checked against the keys in force.
      const later = resultOf(await op(alice, { register: { agentCard: await signCard(fresh('After Broken Edit'), newKey.signing) } }));
      assert.equal(later.verified, true);
      assert.equal(resultOf(await op(anonymous, { get: { id: signed.id } })).verified, true);
      writeJwks(jwksFile, [newKey.publicJwk, oldKey.publicJwk]);
    });
  });
}

describe('trust roots', () => {
  test('SIGHUP reloads the keys file', async () => {
    const file = path.join(dir, 'sighup-jwks.json');
    writeJwks(file, [trusted.publicJwk]);
    const roots = await TrustRoots.open({ keysFile: file, log: createLogger('silent'), watch: false });
    try {
      let changes = 0;
      roots.onChange(() => changes++);
      assert.equal((await roots.lookup('trusted-ed', undefined)).keys.length, 0);
      writeJwks(file, [trusted.publicJwk, trustedEd.publicJwk]);
      process.kill(process.pid, 'SIGHUP');
      await eventually(async () => (await roots.lookup('trusted-ed', undefined)).keys.length === 1, 'reloaded on SIGHUP');
      // The new keys are read before the listeners hear of them (the fingerprint is computed
      // after): on a loaded machine a lookup can land in between.
      await eventually(async () => changes > 0, 'the listeners told of the change');
      assert.equal(changes, 1);
    } finally {
      roots.close();
    }
  });

  test('keys that cannot only verify are never trusted: symmetric, private parts, no kid, weak RSA, an "alg" the key cannot make, a curve no accepted algorithm signs with', async () => {
    const file = path.join(dir, 'odd-jwks.json');
    const hmac = { kty: 'oct', kid: 'shared', k: base64url.encode(new Uint8Array(32)) };
    const weakRsa = { kty: 'RSA', kid: 'weak', n: base64url.encode(new Uint8Array(128).fill(1)), e: 'AQAB' };
    const misnamed = { ...trusted.publicJwk, kid: 'misnamed', alg: 'ES384' };
    const exchange = { kty: 'OKP', crv: 'X25519', kid: 'exchange', x: base64url.encode(new Uint8Array(32).fill(9)) };
    writeJwks(file, [hmac as JWK, { ...trusted.signing.jwk }, { ...trustedEd.publicJwk, kid: undefined } as JWK, weakRsa as JWK, misnamed, exchange]);
    const lines: string[] = [];
    const log = createLogger('warn', { write: (line: string) => lines.push(line) });
    const roots = await TrustRoots.open({ keysFile: file, log, watch: false, sighup: false });
    try {
      assert.equal(roots.size, 1);
      const [only] = (await roots.lookup('trusted-es', undefined)).keys;
      assert.equal(only!.jwk.d, undefined, 'the private part is dropped');
      const text = lines.join('');
      assert.match(text, /symmetric \(oct\) key/);
      assert.match(text, /holds private key material/);
      assert.match(text, /has no \\"kid\\"/);
      assert.match(text, /shorter than 2048 bits/);
      assert.match(text, /keys\[4\] \(kid \\"misnamed\\"\) is not trusted: its \\"alg\\" \\"ES384\\" does not fit the key, an EC key on curve \\"P-256\\", which signs with ES256/);
      assert.match(text, /keys\[5\] \(kid \\"exchange\\"\) is not trusted: it is an OKP key on curve \\"X25519\\", which makes none of the accepted signature algorithms/);
    } finally {
      roots.close();
    }
  });

  test('a key set trusts at most 3 keys under one kid (each is tried for every signature by it, and anyone may validate), saying so in the log', async () => {
    const file = path.join(dir, 'one-kid-jwks.json');
    const keys = await Promise.all(Array.from({ length: 5 }, () => key('ES256', 'dup')));
    writeJwks(file, keys.map((k) => k.publicJwk));
    const lines: string[] = [];
    const log = createLogger('warn', { write: (line: string) => lines.push(line) });
    const roots = await TrustRoots.open({ keysFile: file, log, watch: false, sighup: false });
    try {
      assert.equal(roots.size, 3);
      assert.deepEqual((await roots.lookup('dup', undefined)).keys.map((k) => k.jwk.x), keys.slice(0, 3).map((k) => k.publicJwk.x));
      assert.match(lines.join(''), /5 keys have kid \\"dup\\"; only the first 3 are trusted: give each key its own kid/);
    } finally {
      roots.close();
    }
  });

  test('a keys file that is not a JWKS stops start-up with the variable named', async () => {
    const file = path.join(dir, 'not-jwks.json');
    fs.writeFileSync(file, '[1, 2]');
    await assert.rejects(startTestRegistry({ REGISTRY_TRUSTED_KEYS: file }), /^Error: invalid configuration: REGISTRY_TRUSTED_KEYS: .*not-jwks\.json is not a JSON Web Key Set/);
    await assert.rejects(startTestRegistry({ REGISTRY_TRUSTED_KEYS: path.join(dir, 'missing.json') }), /REGISTRY_TRUSTED_KEYS: .*missing\.json does not exist/);
  });
});

for (const engine of ['sqlite', 'postgres'] as const) describe(`REGISTRY_REQUIRE_VERIFIED=true (${engine})`, () => {
  let registry: TestRegistry | undefined;
  let alice: Client;
  let anonymous: Client;
  const jwksFile = path.join(dir, `required-jwks-${engine}.json`);
  const skip = () => (engine === 'postgres' ? postgres.skipReason : undefined);

  before(async () => {
    if (skip()) return;
    writeJwks(jwksFile, [trusted.publicJwk, trustedEd.publicJwk]);
    const env: Record<string, string> = { REGISTRY_TRUSTED_KEYS: jwksFile, REGISTRY_REQUIRE_VERIFIED: 'true' };
    if (engine === 'postgres') env.DATABASE_URL = await postgres.server.createDatabase('required');
    registry = await startTestRegistry(env);
    [alice, anonymous] = await Promise.all([sdkClient(registry.url, { token: TOKENS.alice }), sdkClient(registry.url)]);
  });
  after(async () => {
    await registry?.close();
    if (registry) fs.rmSync(registry.dataDir, { recursive: true, force: true });
  });

  test('a card whose key is no longer trusted leaves search, list and the AI Catalog (it could not be registered now); get, and its owner listing their own entries, still show it unverified; trusted again, it is back', async (t) => {
    if (skip()) return t.skip(skip());
    const revoked = resultOf(await op(alice, { register: { agentCard: await signCard(fresh('Revocable Weather'), trustedEd.signing) } }));
    const kept = resultOf(await op(alice, { register: { agentCard: await signCard(fresh('Kept Weather'), trusted.signing) } }));
    const server = resultOf(await op(alice, { register: { mcpServer: mcpServer('sealed-files', `https://sealed-${engine}.example.org/mcp`), toolspec: toolspec() } }));
    assert.equal(revoked.verified, true);
    const searched = async (query: string): Promise<string[]> => resultOf(await op(anonymous, { search: { query } })).results.map((h: WireJson) => h.id);
    const listed = async (): Promise<string[]> => resultOf(await op(anonymous, { list: { pageSize: 100 } })).entries.map((e: WireJson) => e.id);
    assert.ok((await searched('revocable weather')).includes(revoked.id));

    writeJwks(jwksFile, [trusted.publicJwk]);
    // The store's verdict first, then the index, which follows the change feed.
    await eventually(async () => resultOf(await op(anonymous, { get: { id: revoked.id } })).verified === false, 'the card is re-evaluated');
    await eventually(async () => !(await searched('revocable weather')).includes(revoked.id), 'the index follows');
    assert.deepEqual(await searched('revocable weather'), [kept.id], 'its own name finds only the verified card sharing a word');
    assert.deepEqual((await searched('weather')).sort(), [kept.id], 'the verified card stays');
    const empty = resultOf(await op(anonymous, { search: { query: '' } })).results.map((h: WireJson) => h.id);
    assert.ok(!empty.includes(revoked.id) && empty.includes(kept.id) && empty.includes(server.id), 'nor listed by an empty query; an MCP server (never signed) stays');
    const unverified = resultOf(await op(anonymous, { search: { query: '', filter: { verified: false } } }));
    assert.deepEqual(unverified.results.map((h: WireJson) => h.id), [server.id], 'verified: false finds only MCP servers');
    assert.equal(unverified.total, 1);
    const ids = await listed();
    assert.ok(!ids.includes(revoked.id) && ids.includes(kept.id) && ids.includes(server.id), 'list leaves it out too');
    const mine = resultOf(await op(alice, { list: { filter: { mine: true }, pageSize: 100 } })).entries;
    assert.equal(mine.find((e: WireJson) => e.id === revoked.id)?.verified, false, "its owner's own list still shows it, unverified");
    const catalog = (await (await fetch(`${registry!.url}/.well-known/ai-catalog.json`)).json()) as { entries: WireJson[] };
    assert.ok(!catalog.entries.some((e) => String(e.url).includes(revoked.id)), 'and so does the AI Catalog');
    assert.ok(catalog.entries.some((e) => String(e.url).includes(kept.id)));
    // Read by id, it is there, marked unverified with the reason.
    const read = resultOf(await op(anonymous, { get: { id: revoked.id } }));
    assert.equal(read.signatures[0].status, 'unknown-key');
    // Its published card is not served as one the registry stands behind; the ARD entry by id is, marked unverified.
    for (const url of [`/agents/${revoked.id}/card.json`, `/agents/${revoked.id}/card.json?revision=1`]) {
      const card = await fetch(`${registry!.url}${url}`);
      assert.equal(card.status, 404, url);
      assert.match(((await card.json()) as { message: string }).message, /not verified by a key this registry trusts.*REGISTRY_REQUIRE_VERIFIED/, url);
    }
    assert.equal((await fetch(`${registry!.url}/agents/${kept.id}/card.json`)).status, 200, 'a verified card is served');
    const ardEntry = (await (await fetch(`${registry!.url}/agents/${revoked.id}`)).json()) as { url?: string; metadata: WireJson };
    assert.equal(ardEntry.metadata.verified, false);
    // It says why its card is not served (its url stays: ARD asks every entry for a url or data).
    assert.equal(ardEntry.url, `${registry!.url}/agents/${revoked.id}/card.json`);
    assert.match(String(ardEntry.metadata.withheld), /not served: it is not verified by a key this registry trusts.*REGISTRY_REQUIRE_VERIFIED/);
    const keptEntry = (await (await fetch(`${registry!.url}/agents/${kept.id}`)).json()) as { url?: string; metadata: WireJson };
    assert.equal(keptEntry.url, `${registry!.url}/agents/${kept.id}/card.json`);
    assert.equal(keptEntry.metadata.withheld, undefined);

    writeJwks(jwksFile, [trusted.publicJwk, trustedEd.publicJwk]);
    await eventually(async () => (await searched('revocable weather')).includes(revoked.id), 'found again once it verifies');
    assert.ok((await listed()).includes(revoked.id));
    assert.equal((await fetch(`${registry!.url}/agents/${revoked.id}/card.json`)).status, 200, 'and its card is served again');
    assert.equal(((await (await fetch(`${registry!.url}/agents/${revoked.id}`)).json()) as { metadata: WireJson }).metadata.withheld, undefined, 'and no longer said to be withheld');
  });

  test('an older revision signed by a key no longer trusted: get says unverified, its card.json?revision=N is withheld, and no revision of a card is cached for a year', async (t) => {
    if (skip()) return t.skip(skip());
    const card = fresh('Rotated Forecast');
    const first = resultOf(await op(alice, { register: { agentCard: await signCard(card, trustedEd.signing) } }));
    const second = resultOf(await op(alice, { register: { agentCard: await signCard({ ...card, description: 'Signed with the kept key now.' }, trusted.signing) } }));
    assert.deepEqual([first.revision, second.revision, second.id], [1, 2, first.id]);
    const oldUrl = `${registry!.url}/agents/${first.id}/card.json?revision=1`;
    const before = await fetch(oldUrl);
    assert.equal(before.status, 200);
    // Whether a revision is served can change (its key revoked): cached no longer than the current card.
    assert.match(before.headers.get('cache-control') ?? '', /^public, max-age=\d+$/);
    try {
      writeJwks(jwksFile, [trusted.publicJwk]);
      await eventually(async () => resultOf(await op(anonymous, { get: { id: first.id, revision: 1 } })).verified === false, 'the older revision is judged by the keys now trusted');
      const old = resultOf(await op(anonymous, { get: { id: first.id, revision: 1 } }));
      assert.equal(old.signatures[0].status, 'unknown-key');
      assert.equal(old.kid, undefined);
      const withheld = await fetch(oldUrl);
      assert.equal(withheld.status, 404);
      assert.match(((await withheld.json()) as { message: string }).message, /not verified by a key this registry trusts.*REGISTRY_REQUIRE_VERIFIED/);
      assert.equal(resultOf(await op(anonymous, { get: { id: first.id } })).verified, true, 'the current revision, signed by the kept key, stays verified');
      assert.equal((await fetch(`${registry!.url}/agents/${first.id}/card.json?revision=2`)).status, 200);
    } finally {
      writeJwks(jwksFile, [trusted.publicJwk, trustedEd.publicJwk]);
    }
    await eventually(async () => (await fetch(oldUrl)).status === 200, 'trusted again, the older revision is served again');
  });

  test('an unsigned card and one signed by an unknown key are refused; a verified one is registered', async (t) => {
    if (skip()) return t.skip(skip());
    const unsigned = errorOf(await op(alice, { register: { agentCard: fresh() } }));
    assert.equal(unsigned.code, 'SIGNATURE_INVALID');
    assert.match(unsigned.message, /REGISTRY_REQUIRE_VERIFIED/);
    assert.equal(unsigned.details[0].rule, 'signature-required');
    const unknown = errorOf(await op(alice, { register: { agentCard: await signCard(fresh(), stranger.signing) } }));
    assert.equal(unknown.code, 'SIGNATURE_INVALID');
    assert.equal(unknown.details[0].rule, 'signature-unknown-key');
    assert.equal(resultOf(await op(alice, { register: { agentCard: await signCard(fresh(), trusted.signing) } })).verified, true);
  });

  test('MCP servers, which have no signatures, still register', async (t) => {
    if (skip()) return t.skip(skip());
    assert.equal(resultOf(await op(alice, { register: { mcpServer: mcpServer('required-files', `https://required-${engine}.example.org/mcp`), toolspec: toolspec() } })).created, true);
  });

  test('it needs trust roots to be configured', (t) => {
    if (skip()) return t.skip(skip());
    assert.throws(() => loadConfig({ REGISTRY_REQUIRE_VERIFIED: 'true' }), /REGISTRY_REQUIRE_VERIFIED=true needs trusted keys/);
  });

  test("the catalog's ranges are cut among the entries its reader sees: a run of hidden agents makes no empty range", async (t) => {
    if (skip()) return t.skip(skip());
    // Newest first: one shown, eight whose key goes, two shown, then what the other tests left.
    const register = async (key: SigningKey) => resultOf(await op(alice, { register: { agentCard: await signCard(fresh('Ranged'), key) } })).id as string;
    for (const key of [trusted.signing, trusted.signing]) await register(key);
    const hidden = await Promise.all(Array.from({ length: 8 }, () => register(trustedEd.signing)));
    await register(trusted.signing);
    writeJwks(jwksFile, [trusted.publicJwk]);
    const caller = { isAdmin: false };
    const listed = async (): Promise<string[]> => (await registry!.service.list({ pageSize: 100 }, caller)).entries.map((e) => e.id);
    await eventually(async () => !(await listed()).some((id) => hidden.includes(id)), 'the cards are re-evaluated');
    const searched = async (): Promise<string[]> => resultOf(await op(anonymous, { search: { query: 'ranged' } })).results.map((h: WireJson) => h.id);
    await eventually(async () => !(await searched()).some((id) => hidden.includes(id)), 'the index follows');
    const shown = await listed();
    try {
      // As the catalog walks its tree (pages of 100 cut in 100 ranges), in pages of 1 cut in 2.
      const walked: string[] = [];
      const ranges: Array<{ pageToken?: string; until?: string }> = [{}];
      for (let range = ranges.pop(); range; range = ranges.pop()) {
        const page = await registry!.service.list({ pageSize: 1, split: 2, ...range }, caller);
        assert.equal(page.entries.length, 1, `a range linked holds entries the reader sees: ${JSON.stringify(range)}`);
        walked.push(...page.entries.map((e) => e.id));
        const starts = page.nextPageToken ? [page.nextPageToken, ...(page.parts ?? [])] : [];
        starts.forEach((start, i) => ranges.push({ pageToken: start, ...((starts[i + 1] ?? range!.until) === undefined ? {} : { until: starts[i + 1] ?? range!.until }) }));
      }
      assert.deepEqual(walked.sort(), [...shown].sort(), 'each shown entry once');
    } finally {
      writeJwks(jwksFile, [trusted.publicJwk, trustedEd.publicJwk]);
      await eventually(async () => (await listed()).includes(hidden[0]!), 'trusted again');
    }
  });
});

describe('a stored verdict made by older verification rules', () => {
  test('is checked again by the start-up scan: a card verified before security requirements without scopes were covered stays verified, its verdict recorded under the new rules', async () => {
    const dataDir = tempDir('a2a-registry-rules-');
    const store = new SqliteStore({ file: path.join(dataDir, 'registry.db') });
    await store.open();
    try {
      const trust: TrustedKeys = { configured: true, fingerprint: 'roots', lookup: async (kid) => ({ keys: kid === 'trusted-es' ? [{ kid, jwk: trusted.publicJwk, source: 'jwks' }] : [] }) };
      // Signed over the form without its requirement (@a2a-js/sdk 1.3, this registry before), and
      // stored as earlier builds left it: verified, its keyset the trust roots' fingerprint alone.
      const card = fresh('Old Rules Agent');
      card.securitySchemes = { key: { apiKeySecurityScheme: { location: 'header', name: 'X-Key' } } };
      card.securityRequirements = [{ schemes: { key: {} } }];
      const privateKey = (await importJWK(trusted.signing.jwk, 'ES256')) as CryptoKey;
      const signed = JSON.parse(JSON.stringify(await generateAgentCardSignature(privateKey, { alg: 'ES256', kid: 'trusted-es', typ: 'JOSE' })(card as never)));
      const write = entryWrite('agent', card.supportedInterfaces[0].url);
      write.documentText = JSON.stringify(signed);
      write.verification = { verified: true, kid: 'trusted-es', alg: 'ES256', signatures: [{ status: 'verified', kid: 'trusted-es', alg: 'ES256' }], keyset: trust.fingerprint };
      const outcome = await store.upsert(write, actor('alice'));
      assert.equal(outcome.status, 'created');
      const entry = (outcome as { entry: { id: string } }).entry;
      // Stored under "r2" with a reason that named the operator's JWKS URL and its fetch error,
      // which anyone reading the entry saw: written again without them.
      const leaky = entryWrite('agent', 'https://leaky.example.org/a2a');
      leaky.documentText = JSON.stringify(await signCard(fresh('Leaky Agent'), stranger.signing));
      const leakyReason = 'no trusted key has kid "stranger"; the JWKS at https://keys.internal.example/jwks.json could not be fetched (connect ECONNREFUSED 10.0.0.5:443)';
      leaky.verification = { verified: false, signatures: [{ status: 'unknown-key', kid: 'stranger', alg: 'ES256', reason: leakyReason }], keyset: `${trust.fingerprint}/r2` };
      const leakyEntry = (await store.upsert(leaky, actor('alice'))) as { entry: { id: string } };

      const cardTrust = new CardTrust({ store, feed: new ChangeFeed(), verifier: createSignatureVerifier(trust), requireVerified: false });
      const scan = await cardTrust.reevaluateAll();
      assert.equal(scan.checked, 2, 'the same trust roots, other rules: checked again');
      const after = (await store.get(entry.id))!.verification!;
      assert.equal(after.verified, true, 'what the SDK signs still verifies (with a warning at registration)');
      assert.match(after.keyset, /\/r6$/, 'recorded under the current rules');
      assert.equal(after.jwks, 'registry', 'a verdict stored before verified signatures named their key set gets it');
      assert.deepEqual(after.signatures.map((s) => s.jwks), ['registry']);
      const leakyAfter = (await store.get(leakyEntry.entry.id))!.verification!;
      assert.equal(leakyAfter.signatures[0]!.reason, 'no trusted key has kid "stranger"', 'the stored reason no longer names the JWKS nor its error');
      assert.equal((await cardTrust.reevaluateAll()).checked, 0, 'once');
    } finally {
      await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
