/**
 * Signs an agent card (A2A §8.4.2): a JWS in flattened form over the card's canonical payload
 * (validation/canonical-card.ts, the same bytes the registry verifies), with a protected header
 * {alg, kid, typ: "JOSE"[, jku]}. Used by the CLI's `sign` and for the registry's own card.
 *
 * Signing a card that already has signatures keeps those of other keys (so a publisher can sign
 * with the old and the new key while rotating) and replaces one by the same kid.
 */
import { FlattenedSign, decodeProtectedHeader } from 'jose';
import { isObject, type JsonObject } from '../lib/json.js';
import { canonicalCardPayload, sdkPayload } from '../validation/canonical-card.js';
import { MAX_SIGNATURES } from '../validation/signature.js';
import type { Generation } from '../validation/types.js';
import type { SigningKey } from './jwks.js';

export interface SignOptions {
  /** Where verifiers can fetch the public key (a hint: registries trust only their own roots). */
  jku?: string;
  /**
   * Also sign, by the same key, the form @a2a-js/sdk 1.3 and a2a-python verify when it differs
   * (they leave out every empty value: security requirements without scopes, `"capabilities": {}`,
   * an extension's `""` params, which A2A §8.4.1 keeps): their verifiers accept a card when any
   * signature verifies, so both kinds of client accept it.
   */
  sdkCompatible?: boolean;
}

/** The generation a card claims, as the registry decides it (v1.0 by `supportedInterfaces`). */
export function cardGeneration(card: JsonObject): Generation {
  return Object.prototype.hasOwnProperty.call(card, 'supportedInterfaces') ? '1.0' : '0.3';
}

function kidOf(signature: unknown): string | undefined {
  if (!isObject(signature) || typeof signature.protected !== 'string') return undefined;
  try {
    const kid = decodeProtectedHeader({ protected: signature.protected, payload: '', signature: '' }).kid;
    return typeof kid === 'string' ? kid : undefined;
  } catch {
    return undefined;
  }
}

/** The card with a new signature by `key` (wire JSON in, wire JSON out). */
export async function signCard(card: JsonObject, key: SigningKey, options: SignOptions = {}): Promise<JsonObject> {
  const generation = cardGeneration(card);
  const header: Record<string, string> = { alg: key.alg, kid: key.kid, typ: 'JOSE' };
  if (options.jku) header.jku = options.jku;
  const sdk = options.sdkCompatible ? sdkPayload(card, generation) : undefined;
  const payloads = [canonicalCardPayload(card, generation), ...(sdk === undefined ? [] : [sdk])];
  const signed = await Promise.all(
    payloads.map(async (payload) => {
      const jws = await new FlattenedSign(new TextEncoder().encode(payload)).setProtectedHeader(header).sign(key.jwk);
      return { protected: jws.protected, signature: jws.signature };
    }),
  );
  const others = (Array.isArray(card.signatures) ? card.signatures : []).filter((s) => kidOf(s) !== key.kid);
  // Verifiers check at most MAX_SIGNATURES and call the rest invalid: the new one, added last, would be refused.
  if (others.length + signed.length > MAX_SIGNATURES) {
    const kids = [...new Set(others.map((s) => kidOf(s) ?? '(no kid)'))].join(', ');
    throw new Error(
      `the signed card would carry ${others.length + signed.length} signatures, and verifiers check at most ${MAX_SIGNATURES}: remove the signatures of keys no longer in use (the card has signatures by ${kids}) and sign again`,
    );
  }
  return { ...card, signatures: [...others, ...signed] };
}
