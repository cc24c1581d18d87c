/**
 * What the registry concluded about a card's signatures, kept with each revision: the status of
 * every signature, whether one of them verified (and which key), and which trust roots this was
 * decided against, so a change of trust roots can tell which entries to re-evaluate.
 */
import type { SignatureStatus } from './types.js';

export interface CardVerification {
  verified: boolean;
  /** kid, alg and key set (SignatureStatus.jwks) of the first verified signature. */
  kid?: string;
  alg?: string;
  jwks?: string;
  signatures: SignatureStatus[];
  /** Fingerprint of the trust roots the signatures were checked against. */
  keyset: string;
}

/**
 * SignatureStatus.jwks of a signature verified by one of the operator's own keys
 * (REGISTRY_TRUSTED_KEYS): a file on the registry's host, whose path is nobody else's business.
 */
export const OWN_KEY_SET = 'registry';

/** The key that verified a card, for people: its kid and the key set it comes from. */
export function verifyingKeyText(kid: string | undefined, jwks: string | undefined): string {
  const key = `kid ${kid ?? '?'}`;
  if (jwks === undefined) return key;
  return jwks === OWN_KEY_SET ? `${key}, one of the registry operator's own keys` : `${key} from ${jwks}`;
}

/** Whether two verifications tell clients the same thing (the keyset aside). */
export function sameOutcome(a: CardVerification | undefined, b: CardVerification | undefined): boolean {
  if (!a || !b) return a === b;
  return a.verified === b.verified && a.kid === b.kid && a.jwks === b.jwks && JSON.stringify(a.signatures) === JSON.stringify(b.signatures);
}
