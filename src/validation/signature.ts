/**
 * Verification of the signatures of an agent card (A2A §8.4), against keys from the operator's
 * trust roots only.
 *
 * Built on the pieces @a2a-js/sdk uses (its `canonicalizeAgentCard` for v1.0 cards, see
 * ./canonical-card.ts, and `jose`), but not on its `verifyAgentCardSignature`: that stops at the
 * first good signature, says nothing about the others, accepts any algorithm `jose` knows and
 * would ask its key lookup with the card's own `jku` as if that were a trust root. Here:
 * - every signature is checked on its own and gets a status: `verified` (kid, alg, the key set
 *   of its key), `unknown-key` (no trust root holds its kid), or `invalid` with the reason;
 * - only asymmetric algorithms are accepted (ACCEPTED_ALGORITHMS; never `none` or HMAC, whose
 *   "key" would be a shared secret), and `jose` is held to the one the header names;
 * - keys come from `TrustedKeys` (the operator's JWKS file and allow-listed JWKS URLs). A `jku`
 *   in the header is a hint the trust roots may follow only if the operator allow-listed it
 *   (A2A issue #2096: a key named by the document it signs proves nothing).
 */
import { base64url, decodeProtectedHeader, errors as joseErrors, flattenedVerify, importJWK, type JWK } from 'jose';
import type { Finding, SignatureStatus } from '../contract/types.js';
import { OWN_KEY_SET, type CardVerification } from '../contract/verification.js';
import { LONE_SURROGATE } from '../lib/code-points.js';
import { normalHost, parseEndpoint } from '../lib/endpoint-url.js';
import { isObject, pointer, quote, type JsonObject } from '../lib/json.js';
import {
  a2aPython03Payloads,
  asciiEscaped,
  canonicalCardPayload,
  emptylessPayload,
  requirementlessPayloads,
  sdkTypedPayload,
  uncoveredEmptyPaths,
  uncoveredFalsyPaths,
  uncoveredPaths,
  uncoveredRequirementPaths,
} from './canonical-card.js';
import { cardEndpointUrls } from './endpoint-urls.js';
import { holdsNul } from './nul-characters.js';
import type { Generation } from './types.js';

/** Asymmetric JWS algorithms (RFC 7518, RFC 8037, RFC 9864's "Ed25519"). */
export const ACCEPTED_ALGORITHMS: readonly string[] = ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
const ACCEPTED = new Set(ACCEPTED_ALGORITHMS);

/**
 * The two names of EdDSA over Ed25519: RFC 9864 made "Ed25519" its fully-specified name and
 * deprecated "EdDSA" for it, so current signers write either (jose signs "Ed25519" when asked to),
 * with the same key and the same signature. A key published under one name verifies the other.
 */
const ED25519_NAMES: readonly string[] = ['EdDSA', 'Ed25519'];
const CURVE_ALGORITHMS: Readonly<Record<string, readonly string[]>> = { 'P-256': ['ES256'], 'P-384': ['ES384'], 'P-521': ['ES512'], Ed25519: ED25519_NAMES };
const RSA_ALGORITHMS = ACCEPTED_ALGORITHMS.filter((a) => /^(RS|PS)/.test(a));

/**
 * The accepted algorithms a public or private JWK can make signatures with: the one its `alg`
 * names (both names of EdDSA over Ed25519 for such a key), else those of its key type and curve
 * (RFC 7518 §3.1, RFC 8037: `alg` is optional in a JWK, and many published key sets leave it
 * out). The usual one first.
 */
export function keyAlgorithms(jwk: { alg?: unknown; kty?: unknown; crv?: unknown }): string[] {
  if (typeof jwk.alg === 'string') {
    const ed25519 = jwk.kty === 'OKP' && jwk.crv === 'Ed25519' && ED25519_NAMES.includes(jwk.alg);
    return ed25519 ? [jwk.alg, ...ED25519_NAMES.filter((a) => a !== jwk.alg)] : [jwk.alg];
  }
  if (jwk.kty === 'RSA') return RSA_ALGORITHMS;
  const byCurve = (jwk.kty === 'EC' || jwk.kty === 'OKP') && typeof jwk.crv === 'string' ? CURVE_ALGORITHMS[jwk.crv] : undefined;
  return byCurve ? [...byCurve] : [];
}

/** A public key from a trust root. */
export interface TrustedKey {
  kid: string;
  jwk: JWK;
  /** Where it came from: the JWKS file's path or the JWKS URL. */
  source: string;
  /**
   * The key set a signature it verifies is said to be by (SignatureStatus.jwks): the allow-listed
   * JWKS URL it was fetched from. Unset: the operator's own keys, shown as OWN_KEY_SET.
   */
  jwks?: string;
  /**
   * The host this key vouches for, when it is scoped (REGISTRY_TRUSTED_JKU_SCOPE=site: the host
   * of the JWKS URL that publishes it): it verifies only cards whose every endpoint is on that
   * host or under it. Unset: any card.
   */
  vouchesFor?: string;
}

export interface KeyLookup {
  keys: TrustedKey[];
  /**
   * Why a key may be missing (a jku that is not allow-listed, a JWKS that could not be fetched),
   * in words anyone may read: no URL of the operator's trust roots, no fetch error.
   */
  note?: string;
  /**
   * `note` with what only the operator and authenticated callers may see (which allow-listed
   * JWKS, why a fetch failed); absent when it says no more.
   */
  noteDetail?: string;
}


/** The operator's trust roots, as the verifier sees them. */
export interface TrustedKeys {
  /** The keys that may have made a signature with this `kid` (and `jku`, a hint only). */
  lookup(kid: string, jku: string | undefined): Promise<KeyLookup>;
  /**
   * Asked when no key `lookup` gave verified a signature: the keys for `kid` after fetching their
   * sources again (the key behind a kid may have been replaced), or undefined when nothing was
   * fetched. Trust roots that are never fetched (a file, a fixed set) leave it out.
   */
  lookupAgain?(kid: string, jku: string | undefined): Promise<KeyLookup | undefined>;
  /** Changes whenever the set of trusted keys changes. */
  readonly fingerprint: string;
  /** Whether any trust root is configured at all. */
  readonly configured: boolean;
}

/** No trust roots: every signature is by an unknown key (a registry whose operator trusts no keys). */
export const NO_TRUSTED_KEYS: TrustedKeys = { configured: false, fingerprint: 'none', lookup: async () => ({ keys: [] }) };

export interface CardVerificationResult {
  /** What is stored and shown to anyone: reasons without the operator's JWKS URLs or fetch errors. */
  verification: CardVerification;
  /** Unverified cards, fields a verified signature does not cover. */
  warnings: Finding[];
  /**
   * The signatures' statuses and the warnings with the detail only the operator and authenticated
   * callers may see (the allow-listed JWKS URLs involved, why one could not be fetched); absent
   * when they say no more than `verification` and `warnings`.
   */
  detailed?: { signatures: SignatureStatus[]; warnings: Finding[] };
}

/**
 * The statuses and warnings of a verification for one caller: with the operator's detail when
 * `disclose` (authenticated callers, the operator's own tools), without it otherwise.
 */
export function disclosedVerification(result: CardVerificationResult, disclose: boolean): { signatures: SignatureStatus[]; warnings: Finding[] } {
  return disclose && result.detailed ? result.detailed : { signatures: result.verification.signatures, warnings: result.warnings };
}

export interface DocumentVerifier {
  /** `card` has passed validation as a card of `generation`. */
  verifyAgentCard(card: JsonObject, generation: Generation): Promise<CardVerificationResult>;
  /** Fingerprint of the trust roots now in force and of the verification rules (CardVerification.keyset). */
  readonly keyset: string;
  readonly configured: boolean;
}

const ALGORITHM_LIST = ACCEPTED_ALGORITHMS.join(', ');

/**
 * The most signatures of one card that are checked. Each one by a trusted kid costs up to a dozen
 * verifications (the canonical forms several signers use), so a card of nothing but bogus
 * signatures made every validate (anyone may send one) cost a hundred milliseconds of CPU. A card
 * needs one signature, two or three during a key rotation or for several verifiers' forms.
 */
export const MAX_SIGNATURES = 8;

/**
 * The rules a signature is checked by (what it must cover, canonical-card.ts), as part of the
 * keyset every verification records: stored verdicts made by other rules are then checked again
 * (at start-up, as after a change of trust roots) instead of staying `verified` for a signature
 * these rules refuse. Change it whenever the payloads, or the choice of keys (TrustRoots), change.
 * "r2": security requirements keep their empty parts (a signature over the form without them,
 * the SDKs', verifies with a warning); a kid several trust roots hold is decided by the keys
 * file, else by the signature's jku. "r3": stored reasons no longer name the operator's JWKS URLs
 * nor fetch errors (entries are public): verdicts stored with them are written again. "r4": a
 * verified signature names the key set of its key (`jwks`), and a kid several allow-listed JWKS
 * hold, with no jku naming one, is tried with each one's key instead of being `unknown-key`.
 * "r5": a v1.0 card's payload keeps what A2A §8.4.1's field presence keeps (REQUIRED members,
 * `optional` ones and messages set, an extension's params as given), where it removed every
 * empty value: a card stored while its key was unknown, signed so, now verifies once trusted;
 * "Ed25519" (RFC 9864) is accepted as EdDSA. "r6": a signature over the older form (every
 * empty value left out) no longer counts as covering the card where one over §8.4.1's form is
 * verified too: the card is said to be signed by the latter (its kid), as for the SDKs' form.
 */
const VERIFICATION_RULES = 'r6';

function invalid(reason: string, kid?: string, alg?: string): SignatureStatus {
  const status: SignatureStatus = { status: 'invalid', reason };
  if (kid !== undefined) status.kid = kid;
  if (alg !== undefined) status.alg = alg;
  return status;
}

interface Payloads {
  /**
   * base64url of the canonical card: as RFC 8785 writes it, then (when the card has characters
   * outside ASCII) escaped as a2a-python writes it. Both encode the same JSON value. For a v0.3
   * card also a2a-python 0.3's form (defaults left out), plain and escaped.
   */
  full: string[];
  /** base64url of what the SDK's signer signs from its TypeScript type, when that differs (only computed for a failure). */
  sdkTyped(): string | undefined;
  /** base64url of the payloads without the empty parts of security requirements, when the card has some (only computed for a failure). */
  requirementless(): string[];
  /** Those of the payloads above in a2a-python 0.3.21-0.3.23's form only (without the card's `false` and `0` values; only computed for a success). */
  falsy(): ReadonlySet<string>;
  /** Those of the payloads above in the older v1.0 form, without the card's empty values (only computed for a success). */
  emptyless(): ReadonlySet<string>;
}

/** Imported keys by trusted JWK object and algorithm: importing costs more than verifying. */
const imported = new WeakMap<JWK, Map<string, Promise<CryptoKey | Uint8Array>>>();

function keyFor(jwk: JWK, alg: string): Promise<CryptoKey | Uint8Array> {
  let byAlg = imported.get(jwk);
  if (!byAlg) imported.set(jwk, (byAlg = new Map()));
  let key = byAlg.get(alg);
  if (!key) {
    key = importJWK(jwk, alg);
    // A key that cannot be imported for this algorithm is not remembered: the error is the reason.
    key.catch(() => byAlg.delete(alg));
    byAlg.set(alg, key);
  }
  return key;
}

async function verifies(sig: JsonObject, payload: string, jwk: JWK, alg: string): Promise<unknown> {
  try {
    const jws: { payload: string; protected: string; signature: string; header?: JsonObject } = {
      payload,
      protected: sig.protected as string,
      signature: sig.signature as string,
    };
    if (isObject(sig.header)) jws.header = sig.header;
    await flattenedVerify(jws, await keyFor(jwk, alg), { algorithms: [alg] });
    return undefined;
  } catch (error) {
    return error ?? new Error('verification failed');
  }
}

/** The reason a trusted key did not verify, for people. */
function failureReason(error: unknown, kid: string, header: Record<string, unknown>): string {
  // Shapes of RFC 7515 and its extensions that A2A §8.4.2 does not sign: the key is not at fault.
  if (header.b64 === false) {
    return 'it signs the card\'s JSON unencoded ("b64": false, RFC 7797), and A2A §8.4.2 signs its base64url encoding; sign without "b64" (a2a-registry sign does)';
  }
  if (error instanceof joseErrors.JOSENotSupported && header.crit !== undefined) {
    return `its protected header marks ${quote(header.crit)} critical ("crit"), an extension the registry does not implement, and RFC 7515 §4.1.11 makes such a signature invalid where it is not understood; sign without "crit"`;
  }
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) {
    return `the signature does not match the card: the card was changed after it was signed, or it was signed by another key than the trusted key "${kid}"`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return `the trusted key "${kid}" cannot verify it: ${message}`;
}

/**
 * A signature's status, and whether it leaves the card's requirements without scopes, its
 * `false` and `0` values, or its empty values, uncovered.
 */
type Checked = SignatureStatus & { requirementsUncovered?: true; falsyUncovered?: true; emptiesUncovered?: true; detail?: string };

/** A checked signature's status as stored and shown: without the verifier's flags; with the operator's detail as its reason when `detailed`. */
function statusOf({ requirementsUncovered: _r, falsyUncovered: _f, emptiesUncovered: _e, detail, ...status }: Checked, detailed = false): SignatureStatus {
  return detailed && detail !== undefined ? { ...status, reason: detail } : status;
}

/**
 * A verified status naming the key set of the key that verified it (a kid names a key within one
 * set only), flagged when the payload that verified leaves the card's `false` and `0` values, or
 * its empty values, out.
 */
function verifiedOver(payload: string, payloads: Payloads, key: TrustedKey, alg: string, flags: { requirementsUncovered?: true } = {}): Checked {
  const status: Checked = { status: 'verified', kid: key.kid, alg, jwks: key.jwks ?? OWN_KEY_SET, ...flags };
  if (payloads.falsy().has(payload)) status.falsyUncovered = true;
  if (payloads.emptyless().has(payload)) status.emptiesUncovered = true;
  return status;
}

/**
 * Why a scoped key (`vouchesFor`) does not vouch for this card: an endpoint off its host, or one
 * that is no URL (which no host can vouch for). Undefined when it does.
 */
function outOfScope(key: TrustedKey, card: JsonObject, generation: Generation): { reason: string; detail: string } | undefined {
  const scope = key.vouchesFor;
  if (scope === undefined) return undefined;
  for (const endpoint of cardEndpointUrls(card, generation)) {
    const parsed = parseEndpoint(endpoint.url, endpoint.binding);
    const host = parsed.ok ? normalHost(parsed.url) : undefined;
    if (host !== undefined && (host === scope || host.endsWith(`.${scope}`))) continue;
    const fix = `publish the key in a JWKS on that endpoint's site, or sign with a key the registry trusts for it`;
    return {
      reason:
        `the trusted key "${key.kid}" vouches only for cards whose endpoints are on the site of the JWKS that publishes it (REGISTRY_TRUSTED_JKU_SCOPE=site), ` +
        `and ${endpoint.path} ${quote(endpoint.url)} is not: ${fix}`,
      detail:
        `the trusted key "${key.kid}" (from ${key.source}) vouches only for cards whose endpoints are on ${scope} or under it (REGISTRY_TRUSTED_JKU_SCOPE=site), ` +
        `and ${endpoint.path} ${quote(endpoint.url)} is not: ${fix}`,
    };
  }
  return undefined;
}

/**
 * Why the protected header lacks `alg` or `kid` (A2A §8.4.2 requires both there): absent, not a
 * non-empty string, or only in the unprotected `header`, which the signature does not cover.
 */
function missingFromProtected(member: 'alg' | 'kid', header: Record<string, unknown>, sig: JsonObject): string {
  if (header[member] !== undefined) return `its protected header's "${member}" is ${quote(header[member])}, not a non-empty string`;
  if (isObject(sig.header) && sig.header[member] !== undefined) {
    return `its "${member}" is in the unprotected "header", which the signature does not cover; A2A §8.4.2 puts "alg" and "kid" in the protected header`;
  }
  return `its protected header has no "${member}"`;
}

const NUL = '\u0000';

/** What a header text holds that makes it unkept, said for the reason. */
const unkeptText = (text: string): string | undefined =>
  text.includes(NUL)
    ? `holds the character U+0000 (NUL) at position ${text.indexOf(NUL)}`
    : !LONE_SURROGATE.test(text)
      ? undefined
      : 'holds an unpaired surrogate (\\ud800-\\udfff alone), which is no Unicode character';

/**
 * A protected header member (its name, or its value: `kid`, `jku`, any other) holding U+0000 or an
 * unpaired surrogate. The kid of a verified signature is stored as text of its own: SQLite kept a
 * NUL where PostgreSQL refused the whole registration, and both engines write an unpaired
 * surrogate as U+FFFD. So such a signature is invalid, on every engine, before any key is asked.
 */
function unkeptHeaderText(header: Record<string, unknown>): string | undefined {
  for (const [name, value] of Object.entries(header)) {
    const inName = unkeptText(name);
    if (inName !== undefined) return `the member name ${quote(name)} of its protected header ${inName}`;
    const inValue = typeof value === 'string' ? unkeptText(value) : holdsNul(value) ? 'holds the character U+0000 (NUL)' : undefined;
    if (inValue !== undefined) return `its protected header's ${quote(name)} ${inValue}`;
  }
  return undefined;
}

async function checkSignature(sig: unknown, payloads: Payloads, trust: TrustedKeys, card: JsonObject, generation: Generation): Promise<Checked> {
  if (!isObject(sig) || typeof sig.protected !== 'string' || typeof sig.signature !== 'string') {
    return invalid('it is not a JWS signature object {"protected": "…", "signature": "…"}');
  }
  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader({ protected: sig.protected, payload: '', signature: sig.signature });
  } catch {
    return invalid('its "protected" header is not base64url-encoded JSON');
  }
  const alg = typeof header.alg === 'string' ? header.alg : undefined;
  const kid = typeof header.kid === 'string' && header.kid !== '' ? header.kid : undefined;
  const unkept = unkeptHeaderText(header);
  if (unkept !== undefined) {
    return invalid(`${unkept}, which the registry keeps on no storage engine as written: sign the card again with a protected header of printable text`, kid, alg);
  }
  if (alg === undefined) return invalid(missingFromProtected('alg', header, sig), kid);
  if (!ACCEPTED.has(alg)) {
    const why = alg === 'none' || /^HS/i.test(alg) ? 'only asymmetric algorithms are accepted' : 'it is not an accepted algorithm';
    return invalid(`algorithm "${alg}" is refused: ${why} (${ALGORITHM_LIST})`, kid, alg);
  }
  if (kid === undefined) return invalid(`${missingFromProtected('kid', header, sig)}, so no trusted key can be chosen`, undefined, alg);
  if (sig.header !== undefined && !isObject(sig.header)) return invalid('its unprotected "header" is not a JSON object', kid, alg);

  const jku = typeof header.jku === 'string' ? header.jku : undefined;
  const { keys, note, noteDetail } = await trust.lookup(kid, jku);
  // A key of another type or curve than the signature's algorithm did not make it, whether its
  // JWK names an `alg` or not: another publisher's key under the same kid, not a tampered card.
  const usable = (found: readonly TrustedKey[]) => found.filter((k) => keyAlgorithms(k.jwk).includes(alg));
  const candidates = usable(keys);
  if (candidates.length === 0) {
    const algorithms = [...new Set(keys.flatMap((k) => keyAlgorithms(k.jwk)))];
    const wrongAlg = keys.length > 0 ? `the trusted key "${kid}" is for ${algorithms.length > 0 ? algorithms.join(', ') : 'no accepted algorithm'}, not ${alg}` : undefined;
    const noKey = `no trusted key has kid "${kid}"`;
    const reasonOf = (why: string, also: string | undefined) => (also ? `${why}; ${also}` : why);
    const reason = reasonOf(wrongAlg ?? noKey, note);
    const detail = reasonOf(wrongAlg ?? noKey, noteDetail ?? note);
    return { status: 'unknown-key', kid, alg, reason, ...(detail !== reason ? { detail } : {}) };
  }
  let firstError: unknown;
  /** The status once `key` verified the signature over `payload`: verified, unless the key is scoped to other hosts. */
  const accepted = (payload: string, key: TrustedKey, flags: { requirementsUncovered?: true } = {}): Checked => {
    const offScope = outOfScope(key, card, generation);
    return offScope ? { status: 'unknown-key', kid, alg, ...offScope } : verifiedOver(payload, payloads, key, alg, flags);
  };
  /**
   * The status by the first of the keys that verifies the signature over a payload, if any does.
   * Keys of several allow-listed sets may share the kid: a signature verifies with one key only,
   * so the one that verifies it tells whose it is (its set is named in the status).
   */
  const verifiedBy = async (tried: readonly TrustedKey[]): Promise<Checked | undefined> => {
    for (const key of tried) {
      for (const payload of payloads.full) {
        const error = await verifies(sig, payload, key.jwk, alg);
        if (error === undefined) return accepted(payload, key);
        firstError ??= error;
      }
    }
    return undefined;
  };
  const signed = await verifiedBy(candidates);
  if (signed !== undefined) return signed;
  // The publisher may have put a new key behind the same kid: its sources, fetched again, may
  // hold it. Only keys not tried yet are tried.
  const tried = new Set(candidates.map((k) => JSON.stringify(k.jwk)));
  const again = usable((await trust.lookupAgain?.(kid, jku))?.keys ?? []).filter((k) => !tried.has(JSON.stringify(k.jwk)));
  const signedAgain = await verifiedBy(again);
  if (signedAgain !== undefined) return signedAgain;
  candidates.push(...again);
  // What @a2a-js/sdk 1.3 and a2a-python sign: the card without a scheme required without scopes
  // (and an empty requirement). Verified, as their own verifiers do, but not covering those
  // requirements: the verifier warns about each (requirementsUncovered).
  for (const payload of payloads.requirementless()) {
    for (const key of candidates) {
      if ((await verifies(sig, payload, key.jwk, alg)) === undefined) return accepted(payload, key, { requirementsUncovered: true });
    }
  }
  const sdkTyped = payloads.sdkTyped();
  if (sdkTyped !== undefined) {
    for (const key of candidates) {
      if ((await verifies(sig, sdkTyped, key.jwk, alg)) === undefined) {
        return invalid(
          'it signs the card without its "securitySchemes" (what @a2a-js/sdk 1.3 signs when given AgentCard.fromJSON(card)), so the security schemes are not protected; ' +
            'sign the card\'s JSON instead (a2a-registry sign, or generateAgentCardSignature on the wire JSON)',
          kid,
          alg,
        );
      }
    }
  }
  return invalid(failureReason(firstError, kid, header), kid, alg);
}

function signatureList(statuses: SignatureStatus[]): string {
  return statuses.map((s) => `${s.kid ? `kid ${quote(s.kid)}` : 'no kid'}: ${s.reason ?? s.status}`).join('; ');
}

export function createSignatureVerifier(trust: TrustedKeys): DocumentVerifier {
  return {
    get keyset() {
      return `${trust.fingerprint}/${VERIFICATION_RULES}`;
    },
    get configured() {
      return trust.configured;
    },
    async verifyAgentCard(card, generation) {
      const keyset = `${trust.fingerprint}/${VERIFICATION_RULES}`;
      const signatures = Array.isArray(card.signatures) ? card.signatures : [];
      const warnings: Finding[] = [];
      if (signatures.length === 0) {
        if (trust.configured) {
          warnings.push({
            path: '',
            rule: 'unsigned-card',
            message: 'the card is not signed, so it is registered as unverified',
            hint: 'Sign it with a key this registry trusts (a2a-registry keygen, then a2a-registry sign) to have it listed as verified.',
          });
        }
        return { verification: { verified: false, signatures: [], keyset }, warnings };
      }
      const full = canonicalCardPayload(card, generation);
      // A v0.3 card may have been signed by a2a-python 0.3, whose payload leaves default values out;
      // a v1.0 card by @a2a-js/sdk or an earlier build of this registry, whose payload leaves every empty value out.
      const older = generation === '0.3' ? a2aPython03Payloads(card) : [emptylessPayload(card, generation)].filter((form) => form !== undefined);
      const emptylessForms = generation === '1.0' ? older : [];
      const forms = [full, ...older].flatMap((form) => {
        const escaped = asciiEscaped(form);
        return escaped === form ? [form] : [form, escaped];
      });
      let typed: string | undefined | null = null;
      let requirementless: string[] | undefined;
      const encoded = (form: string) => {
        const escaped = asciiEscaped(form);
        return (escaped === form ? [form] : [form, escaped]).map((f) => base64url.encode(f));
      };
      let falsy: ReadonlySet<string> | undefined;
      let emptyless: ReadonlySet<string> | undefined;
      const payloads: Payloads = {
        // The older v1.0 form, and @a2a-js/sdk 1.3's (which also leaves out the requirements' empty parts).
        emptyless: () => (emptyless ??= new Set([...emptylessForms.flatMap(encoded), ...(generation === '1.0' ? payloads.requirementless() : [])])),
        falsy: () =>
          (falsy ??= new Set(generation === '0.3' ? [...a2aPython03Payloads(card, false, 'falsy'), ...a2aPython03Payloads(card, true, 'falsy')].flatMap(encoded) : [])),
        full: forms.map((form) => base64url.encode(form)),
        requirementless: () =>
          (requirementless ??= requirementlessPayloads(card, generation).flatMap(encoded)),
        sdkTyped: () => {
          if (typed === null) {
            const payload = generation === '1.0' ? sdkTypedPayload(card) : full;
            typed = payload === full ? undefined : base64url.encode(payload);
          }
          return typed;
        },
      };
      const checked: Checked[] = [];
      for (const [i, sig] of signatures.entries()) {
        checked.push(
          i < MAX_SIGNATURES
            ? await checkSignature(sig, payloads, trust, card, generation)
            : invalid(`not checked: a card may carry at most ${MAX_SIGNATURES} signatures, and this one has ${signatures.length}; remove those of keys no longer in use`),
        );
      }
      const statuses = checked.map((s) => statusOf(s));
      // The same with the operator's detail (JWKS URLs, fetch errors), for those who may see it.
      const detailedStatuses = checked.some((s) => s.detail !== undefined) ? checked.map((s) => statusOf(s, true)) : undefined;
      // The card counts as signed by the first signature covering all of it, else by the first verified.
      const first =
        checked.find((s) => s.status === 'verified' && !s.requirementsUncovered && !s.falsyUncovered && !s.emptiesUncovered) ?? checked.find((s) => s.status === 'verified');
      const verification: CardVerification = { verified: first !== undefined, signatures: statuses, keyset };
      if (first) {
        verification.kid = first.kid;
        verification.alg = first.alg;
        verification.jwks = first.jwks;
        if (first.requirementsUncovered) {
          for (const path of uncoveredRequirementPaths(card, generation)) {
            warnings.push({
              path,
              rule: 'unsigned-requirement',
              message:
                'this security requirement is not covered by the card\'s signature: it is over the form @a2a-js/sdk 1.3 and a2a-python sign, which leaves out a scheme required without scopes and an empty requirement',
              hint: 'Clients cannot rely on it (it could be added or removed without breaking the signature): sign the card as A2A §8.4.1 says (a2a-registry sign does), beside the SDK\'s signature if its clients verify too.',
            });
          }
        }
        if (first.falsyUncovered) {
          for (const path of uncoveredFalsyPaths(card)) {
            warnings.push({
              path,
              rule: 'unsigned-value',
              message:
                'this false or 0 is not covered by the card\'s signature: it is over the form a2a-python 0.3.21 to 0.3.23 sign, which leaves out every false and 0, and here that does not mean the same',
              hint: 'Clients cannot rely on it (it could be removed, added or moved in its list without breaking the signature): sign the card again with a2a-python 0.3.24 or later, or with a2a-registry sign.',
            });
          }
        }
        if (first.emptiesUncovered) {
          for (const path of uncoveredEmptyPaths(card)) {
            warnings.push({
              path,
              rule: 'unsigned-empty-value',
              message:
                'this empty value is not covered by the card\'s signature: it is over the older form @a2a-js/sdk 1.3 and earlier builds of this registry sign, which leaves out every "", null, [] and {}, where A2A §8.4.1 keeps them (a list that held one is named whole: the places of its other items are not covered either)',
              hint: 'Clients cannot rely on it (it could be removed, or added, without breaking the signature): sign the card again with a2a-registry sign, which covers it (with --sdk-form it also keeps a signature in the SDK\'s form, for its clients).',
            });
          }
        }
        for (const path of uncoveredPaths(card, generation)) {
          warnings.push({
            path,
            rule: 'unsigned-field',
            message: 'this field is not covered by the card\'s signature (it is not a field of the A2A v1.0 card)',
            hint: 'Clients cannot rely on it: remove it, or carry the data where the card defines it (e.g. an extension\'s "params").',
          });
        }
      }
      const unverifiedWarning = (listed: SignatureStatus[]): Finding => ({
        path: '/signatures',
        rule: 'unverified-signature',
        message: `no signature is by a key this registry trusts, so the card is registered as unverified (${signatureList(listed)})`,
        hint: 'Ask the registry operator to trust your public key (REGISTRY_TRUSTED_KEYS or an allow-listed JWKS URL), or sign with a key it already trusts.',
      });
      const unverified = !first && statuses.every((s) => s.status === 'unknown-key');
      if (!detailedStatuses) return { verification, warnings: unverified ? [...warnings, unverifiedWarning(statuses)] : warnings };
      return {
        verification,
        warnings: unverified ? [...warnings, unverifiedWarning(statuses)] : warnings,
        detailed: { signatures: detailedStatuses, warnings: unverified ? [...warnings, unverifiedWarning(detailedStatuses)] : warnings },
      };
    },
  };
}

/** The details of a SIGNATURE_INVALID refusal: one finding per signature that is not verified. */
export function signatureFindings(statuses: readonly SignatureStatus[]): Finding[] {
  const out: Finding[] = [];
  statuses.forEach((s, i) => {
    if (s.status === 'verified') return;
    out.push({
      path: pointer('/signatures', i),
      rule: s.status === 'invalid' ? 'signature-invalid' : 'signature-unknown-key',
      message: `${s.kid ? `signature by kid ${quote(s.kid)}${s.alg ? ` (${s.alg})` : ''}` : 'signature'}: ${s.reason ?? s.status}`,
      hint:
        s.status === 'invalid'
          ? 'A card whose signature does not verify is never stored: sign the card as it is now (a2a-registry sign) and send it again, or remove the signature.'
          : 'Sign with a key the registry trusts, or ask its operator to trust yours.',
    });
  });
  return out;
}
