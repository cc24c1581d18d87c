/**
 * What the registry concluded about a card's signatures, kept with each revision: the status of
 * every signature, whether one of them verified (and which key), and which trust roots this was
 * decided against, so a change of trust roots can tell which entries to re-evaluate.
 */
import type { SignatureStatus } from './types.js';

export interface CardVerification {
  verified: boolean;
  /** kid and alg of the first verified signature. */
  kid?: string;
  alg?: string;
  signatures: SignatureStatus[];
  /** Fingerprint of the trust roots the signatures were checked against. */
  keyset: string;
}

/** Whether two verifications tell clients the same thing (the keyset aside). */
export function sameOutcome(a: CardVerification | undefined, b: CardVerification | undefined): boolean {
  if (!a || !b) return a === b;
  return a.verified === b.verified && a.kid === b.kid && JSON.stringify(a.signatures) === JSON.stringify(b.signatures);
}
