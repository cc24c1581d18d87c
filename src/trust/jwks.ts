/**
 * JSON Web Key Sets as trust roots (a file the operator names, an allow-listed URL) and private
 * JWKs as signing keys (the CLI's `sign`, the registry's own card).
 *
 * A key is trusted only if it can only *verify*: asymmetric (EC, OKP, RSA ≥ 2048 bits), with a
 * `kid` (signatures name their key by it), `use` "sig" and `key_ops` "verify" where given.
 * Private members are dropped: a trust root never needs them, and keeping them would spread a
 * secret into every log line or answer that shows a key. Symmetric keys are refused: with HMAC
 * anyone who can verify can also sign.
 */
import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { isObject, quote } from '../lib/json.js';
import { keyAlgorithms, type TrustedKey } from '../validation/signature.js';

/** Members of a private JWK that its public half does not have (RFC 7518 §6). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const ASYMMETRIC = new Set(['EC', 'OKP', 'RSA']);
/**
 * The members a public key of each type is made of (RFC 7518 §6.2.1, §6.3.1; RFC 8037 §2), which
 * its thumbprint and its import read: a key without them verifies nothing.
 */
const PUBLIC_MEMBERS: Readonly<Record<string, readonly string[]>> = { EC: ['crv', 'x', 'y'], OKP: ['crv', 'x'], RSA: ['n', 'e'] };
const MIN_RSA_BITS = 2048;
/**
 * Keys one set may hold under one kid (RFC 7517 §4.5: distinct keys SHOULD have distinct kids;
 * one per key type is the exception it names). A signature is tried against every key of its
 * kid, and anyone may `validate` a card: 380 keys under one kid made each anonymous call cost
 * seconds of CPU.
 */
const MAX_KEYS_PER_KID = 3;

export interface ParsedJwks {
  keys: TrustedKey[];
  /** One line per key that was left out, and why. */
  problems: string[];
}

/**
 * Members of a key pair's JWK that say what the pair may do, not what its public half is: which
 * operations it allows (`key_ops`) and whether it may be exported (`ext`, WebCrypto's). A public
 * key is used to verify only, and jose imports a key for the operations its key_ops list, which
 * WebCrypto refuses for a public key when they include "sign" (a key exported by
 * crypto.subtle.exportKey says key_ops ["sign"]): kept, the key verifies nothing.
 */
const KEY_PAIR_MEMBERS = ['key_ops', 'ext'];

/** The public half of a JWK, as a verifier uses it: no private members, no key pair's key_ops or ext. */
export function publicJwk(jwk: JWK): JWK {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(jwk)) if (!PRIVATE_MEMBERS.includes(k) && !KEY_PAIR_MEMBERS.includes(k)) out[k] = v;
  return out as JWK;
}

/** Whether a JWK holds private key material (a private key, or a symmetric one). */
export const holdsPrivateMembers = (jwk: Record<string, unknown>): boolean => PRIVATE_MEMBERS.some((m) => m in jwk);

function rsaBits(jwk: Record<string, unknown>): number {
  return typeof jwk.n === 'string' ? Buffer.from(jwk.n, 'base64url').length * 8 : 0;
}

/** What kind of key a JWK is, for people: "an RSA key", "an EC key on curve \"P-256\"". */
const keyKind = (jwk: Record<string, unknown>): string => (jwk.kty === 'RSA' ? 'an RSA key' : `an ${String(jwk.kty)} key on curve ${quote(jwk.crv)}`);

/** Why this JWK cannot be a verification key, or undefined when it can. */
function unusable(jwk: Record<string, unknown>): string | undefined {
  if (typeof jwk.kty !== 'string') return 'it has no "kty"';
  if (jwk.kty === 'oct') return 'it is a symmetric (oct) key: with HMAC whoever can verify can also sign, so it is never trusted';
  if (!ASYMMETRIC.has(jwk.kty)) return `key type ${quote(jwk.kty)} is not supported (EC, OKP or RSA)`;
  if (typeof jwk.kid !== 'string' || jwk.kid === '') return 'it has no "kid" (signatures name their key by it)';
  // Such a key made the fingerprint of the trust roots throw: start-up failed, and a published
  // JWKS that gained one failed every lookup and crashed the registry at its next fetch.
  const missing = PUBLIC_MEMBERS[jwk.kty]!.filter((m) => typeof jwk[m] !== 'string' || jwk[m] === '');
  if (missing.length > 0) return `it is no ${jwk.kty} public key: ${missing.map((m) => quote(m)).join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing or not a string`;
  if (jwk.use !== undefined && jwk.use !== 'sig') return `its "use" is ${quote(jwk.use)}, not "sig"`;
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify'))) return 'its "key_ops" do not include "verify"';
  if (jwk.kty === 'RSA' && rsaBits(jwk) < MIN_RSA_BITS) return `the RSA key is shorter than ${MIN_RSA_BITS} bits`;
  // Such a key verifies nothing: kept, every signature by its kid was told "the trusted key is
  // for ES384, not ES256" (or that it cannot verify it), and the operator nothing about the set.
  const fitting = keyAlgorithms({ kty: jwk.kty, crv: jwk.crv });
  if (fitting.length === 0) return `it is ${keyKind(jwk)}, which makes none of the accepted signature algorithms`;
  if (typeof jwk.alg === 'string' && !fitting.includes(jwk.alg)) return `its "alg" ${quote(jwk.alg)} does not fit the key, ${keyKind(jwk)}, which signs with ${fitting.join(', ')}`;
  return undefined;
}

/** The verification keys of a JWKS document (`{"keys": [...]}`); throws when it is not one. */
export function parseJwks(value: unknown, source: string): ParsedJwks {
  if (!isObject(value) || !Array.isArray(value.keys)) throw new Error(`${source} is not a JSON Web Key Set ({"keys": [...]})`);
  const out: ParsedJwks = { keys: [], problems: [] };
  const perKid = new Map<string, number>();
  value.keys.forEach((key: unknown, i) => {
    if (!isObject(key)) {
      out.problems.push(`${source}: keys[${i}] is not a JSON object`);
      return;
    }
    const why = unusable(key);
    if (why) {
      out.problems.push(`${source}: keys[${i}]${typeof key.kid === 'string' ? ` (kid ${quote(key.kid)})` : ''} is not trusted: ${why}`);
      return;
    }
    const sameKid = (perKid.get(key.kid as string) ?? 0) + 1;
    perKid.set(key.kid as string, sameKid);
    if (sameKid > MAX_KEYS_PER_KID) return;
    if (holdsPrivateMembers(key)) out.problems.push(`${source}: keys[${i}] (kid ${quote(key.kid)}) holds private key material; only its public half is used`);
    // Only verified with: once "verify" is among its key_ops (unusable), publicJwk drops them.
    const jwk = publicJwk(key as JWK);
    out.keys.push({ kid: jwk.kid!, jwk, source });
  });
  for (const [kid, count] of perKid) {
    if (count > MAX_KEYS_PER_KID) {
      out.problems.push(`${source}: ${count} keys have kid ${quote(kid)}; only the first ${MAX_KEYS_PER_KID} are trusted: give each key its own kid`);
    }
  }
  return out;
}

/** Changes whenever any key, or where it comes from, changes. */
export async function keysetFingerprint(keys: readonly TrustedKey[]): Promise<string> {
  // A scope is only written when there is one: unscoped keys keep the fingerprint they had.
  const lines = await Promise.all(keys.map(async (k) => `${k.source} ${k.kid} ${k.jwk.alg ?? ''} ${await calculateJwkThumbprint(k.jwk)}${k.vouchesFor === undefined ? '' : ` ${k.vouchesFor}`}`));
  return createHash('sha256').update(lines.sort().join('\n')).digest('base64url').slice(0, 22);
}

// --- signing keys ----------------------------------------------------------------------------

/**
 * Algorithms `keygen` can make, and the key each needs. "Ed25519" (RFC 9864) and "EdDSA" make the
 * same kind of key (OKP, curve Ed25519); the JWK's `alg` says which name its signatures carry.
 */
export const KEYGEN_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'RS256', 'PS256'] as const;
export type KeygenAlgorithm = (typeof KEYGEN_ALGORITHMS)[number];

export interface SigningKey {
  /** The private JWK, with kid and alg. */
  jwk: JWK;
  kid: string;
  alg: string;
}

/** The algorithm a private key signs with: its `alg`, or the usual one for its type and curve. */
const algorithmFor = (jwk: Record<string, unknown>): string | undefined => keyAlgorithms(jwk)[0];

/**
 * A private JWK to sign with; its kid defaults to its RFC 7638 thumbprint. Throws with a message
 * that says what is wrong (public key only, symmetric key, unknown curve, weak RSA key).
 */
export async function parseSigningKey(value: unknown, source: string, accepted: readonly string[], kid?: string): Promise<SigningKey> {
  if (!isObject(value)) throw new Error(`${source} is not a JSON Web Key (a JSON object)`);
  if (value.kty === 'oct') throw new Error(`${source} is a symmetric key; card signatures need an asymmetric private key (EC, OKP or RSA)`);
  if (typeof value.d !== 'string') throw new Error(`${source} has no private part ("d"): it is a public key, which can verify but not sign`);
  if (typeof value.kty !== 'string' || !ASYMMETRIC.has(value.kty)) throw new Error(`${source}: "kty" is ${quote(value.kty)}; a signing key is EC, OKP or RSA`);
  const alg = algorithmFor(value);
  if (!alg || !accepted.includes(alg)) throw new Error(`${source}: cannot sign with ${alg ? `algorithm ${quote(alg)}` : `a ${String(value.kty)} key on curve ${quote(value.crv)}`}; accepted: ${accepted.join(', ')}`);
  // An `alg` the key cannot make (ES384 on a P-256 key) would fail only at the first signature:
  // for the registry's own key, after start-up had created its data directory and admin token.
  const fitting = keyAlgorithms({ kty: value.kty, crv: value.crv });
  if (!fitting.includes(alg)) {
    throw new Error(`${source}: its "alg" ${quote(alg)} does not fit the key, ${keyKind(value)}, which signs with ${fitting.length > 0 ? fitting.join(', ') : 'none of them'}: correct "alg" or leave it out`);
  }
  if (value.kty === 'RSA' && rsaBits(value) < MIN_RSA_BITS) throw new Error(`${source}: the RSA key is shorter than ${MIN_RSA_BITS} bits`);
  try {
    await importJWK({ ...(value as JWK), alg }, alg);
  } catch (error) {
    throw new Error(`${source}: the key cannot sign with ${alg}: ${(error as Error).message}`);
  }
  const chosen = kid ?? (typeof value.kid === 'string' && value.kid !== '' ? value.kid : await calculateJwkThumbprint(publicJwk(value as JWK)));
  return { jwk: { ...(value as JWK), kid: chosen, alg }, kid: chosen, alg };
}

/** A new key pair: the private JWK and its public half, with kid (the thumbprint unless given) and alg. */
export async function generateSigningKey(alg: KeygenAlgorithm, kid?: string): Promise<{ privateJwk: JWK; publicJwk: JWK }> {
  const options = alg === 'EdDSA' || alg === 'Ed25519' ? { crv: 'Ed25519', extractable: true } : alg.startsWith('RS') || alg.startsWith('PS') ? { modulusLength: 3072, extractable: true } : { extractable: true };
  const pair = await generateKeyPair(alg, options);
  const priv = await exportJWK(pair.privateKey);
  const pub = await exportJWK(pair.publicKey);
  const chosen = kid ?? (await calculateJwkThumbprint(pub));
  return {
    privateJwk: { ...priv, kid: chosen, alg, use: 'sig' },
    publicJwk: { ...pub, kid: chosen, alg, use: 'sig' },
  };
}
