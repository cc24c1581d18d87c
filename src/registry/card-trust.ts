/**
 * Trust in registered cards, for the service: the signatures of a card checked against the
 * operator's trust roots at registration (a tampered card is refused; an unverified one too when
 * verification is required), and stored cards re-evaluated when the trust roots change, each
 * entry whose verdict changed published on the change feed so every index follows.
 */
import { RegistryError } from '../contract/errors.js';
import type { Finding, SignatureStatus } from '../contract/types.js';
import type { Subject } from '../contract/subject.js';
import { sameOutcome, type CardVerification } from '../contract/verification.js';
import { isObject, quote } from '../lib/json.js';
import type { RegistryStore, StoredEntry } from '../storage/types.js';
import type { Verdict } from '../validation/index.js';
import { disclosedVerification, signatureFindings, type CardVerificationResult, type DocumentVerifier } from '../validation/signature.js';
import type { ChangeFeed } from './change-feed.js';

/** Stored cards re-evaluated at once after the trust roots change. */
const REEVALUATION_BATCH = 64;
/** Entries read at once by the re-evaluation's scan, which runs beside requests. */
const BACKGROUND_SCAN_BATCH = 64;

export interface CardTrustDeps {
  store: RegistryStore;
  feed: ChangeFeed;
  verifier: DocumentVerifier;
  /** Agent cards must carry a signature by a trusted key (REGISTRY_REQUIRE_VERIFIED). */
  requireVerified: boolean;
}

export class CardTrust {
  constructor(private readonly deps: CardTrustDeps) {}

  /**
   * The signatures of a valid agent card; undefined for MCP servers, which have none. Throws
   * SIGNATURE_INVALID for a card with an invalid signature, and for an unverified one when the
   * operator requires verification. `disclose`: the refusal's details may name the operator's
   * JWKS URLs and fetch errors (authenticated callers), else they say only what anyone may read.
   */
  check(subject: Subject, verdict: Verdict, disclose: boolean): Promise<CardVerificationResult | undefined> {
    return checkCardSignatures(this.deps, subject, verdict, disclose);
  }

  /**
   * After a registration committed: records a newer evaluation of an unchanged document, and
   * checks again a card whose trust roots changed while it was being checked (its re-evaluation
   * may have run before it was stored). Returns the entry as stored now.
   */
  async afterCommit(entry: StoredEntry, verification: CardVerification | undefined, unchanged: boolean): Promise<StoredEntry> {
    if (!verification) return entry;
    const current = unchanged ? await this.refresh(entry, verification) : entry;
    // A failure leaves the entry's keyset behind: the next change of trust roots, or the next
    // start, evaluates it again.
    if (verification.keyset !== this.deps.verifier.keyset) void this.reevaluate(current).catch(() => undefined);
    return current;
  }

  /**
   * afterCommit would return the committed entry as it is (it records nothing for it): what a
   * registration answers is settled when it commits.
   */
  settledAtCommit(entry: StoredEntry, verification: CardVerification | undefined, unchanged: boolean): boolean {
    return !verification || !unchanged || (entry.verification?.keyset === verification.keyset && sameOutcome(entry.verification, verification));
  }

  /** Stores a newer evaluation of an entry's current revision; publishes it when clients see a difference. */
  private async refresh(entry: StoredEntry, verification: CardVerification): Promise<StoredEntry> {
    if (this.settledAtCommit(entry, verification, true)) return entry;
    const announce = !sameOutcome(entry.verification, verification);
    const updated = await this.deps.feed.localWrite(async () => {
      const stored = await this.deps.store.updateVerification(entry.id, entry.revision, verification, announce);
      if (stored && announce) this.deps.feed.publish({ id: stored.id, op: 'upsert', entry: stored, origin: 'local' });
      return stored;
    });
    return updated ?? entry;
  }

  /**
   * An older revision (one `get` reads by number) as judged by the trust roots now in force. Only
   * the current revision's verdict is stored again when they change (re-evaluation, above), so an
   * older one kept `verified` from a key since revoked, and REGISTRY_REQUIRE_VERIFIED served it.
   * Judged as it is read (it is not stored: a revision's row is not written again), and only when
   * its verdict was made against other trust roots.
   */
  async olderRevisionNow(entry: StoredEntry): Promise<StoredEntry> {
    if (entry.kind !== 'agent' || entry.verification?.keyset === this.deps.verifier.keyset) return entry;
    const verification = await this.verifyStored(entry);
    return verification ? { ...entry, verification } : entry;
  }

  /** A stored card's signatures checked against the trust roots in force (undefined: no card to check). */
  private async verifyStored(entry: StoredEntry): Promise<CardVerification | undefined> {
    if (entry.kind !== 'agent') return undefined;
    let card: unknown;
    try {
      card = JSON.parse(entry.documentText);
    } catch {
      return undefined;
    }
    if (!isObject(card)) return undefined;
    return (await this.deps.verifier.verifyAgentCard(card, entry.protocolVersion === '0.3' ? '0.3' : '1.0')).verification;
  }

  /** Checks a stored card's signatures against the trust roots in force; true when its status changed. */
  private async reevaluate(entry: StoredEntry): Promise<boolean> {
    const verification = await this.verifyStored(entry);
    if (!verification) return false;
    const before = entry.verification;
    const after = await this.refresh(entry, verification);
    return after !== entry && !sameOutcome(before, verification);
  }

  /**
   * Re-evaluates every stored signed card whose signatures were checked against other trust
   * roots than those now in force (after the trust roots changed, and at start-up). `signal`
   * (shutdown) ends the scan at its next turn: what it did not reach keeps its old keyset, so the
   * next scan (every start runs one) checks it. `stopped` says the scan ended that way.
   */
  async reevaluateAll(signal?: AbortSignal): Promise<{ checked: number; changed: number; stopped: boolean }> {
    let checked = 0;
    let changed = 0;
    let batch: StoredEntry[] = [];
    // In batches, so the writes share commits (SQLite group commit, PostgreSQL's pool).
    const flush = async (): Promise<void> => {
      const results = await Promise.all(batch.map((entry) => this.reevaluate(entry)));
      checked += batch.length;
      changed += results.filter(Boolean).length;
      batch = [];
    };
    let scanned = 0;
    // Only the signed cards checked against other trust roots (or never) are read: the store
    // keeps an index of them, so a start whose trust roots have not changed reads nothing (it
    // read every stored document before: 48-54 s at 1,000,000 entries, every write beside it
    // slowed). The scan runs beside requests (at start-up, right after the index loaded): small
    // batches, and the event loop gets a turn after each, so a write waits for one small read at
    // most.
    for await (const entry of this.deps.store.scan({ batchSize: BACKGROUND_SCAN_BATCH, outsideKeyset: this.deps.verifier.keyset })) {
      if (++scanned % BACKGROUND_SCAN_BATCH === 0) await new Promise((resolve) => setImmediate(resolve));
      // Leaving the loop closes the scan's cursor; the entries gathered but not yet checked are
      // left, like the unread ones, for the next scan.
      if (signal?.aborted) return { checked, changed, stopped: true };
      batch.push(entry);
      if (batch.length >= REEVALUATION_BATCH) await flush();
    }
    await flush();
    return { checked, changed, stopped: false };
  }
}

/**
 * SIGNATURE_INVALID for a card's signatures: the answer (its details with the operator's detail
 * where the caller may see it), and `publicMessage`, the same said to anyone and whole in one
 * message: a refresh records it in the entry's health, which anyone may read and which has no
 * details to point to.
 */
export class SignatureRefusal extends RegistryError {
  constructor(
    message: string,
    details: Finding[],
    readonly publicMessage: string,
  ) {
    super('SIGNATURE_INVALID', message, details);
  }
}

/** Why a card with an invalid signature is refused, from the signatures' statuses. */
function invalidSignatureMessage(statuses: readonly SignatureStatus[]): string {
  const invalid = statuses.filter((s) => s.status === 'invalid');
  const first = invalid[0]!;
  const which =
    statuses.length === 1
      ? "The card's signature"
      : `${invalid.length} of the card's ${statuses.length} signatures ${invalid.length === 1 ? 'is' : 'are'} invalid. Signature ${statuses.indexOf(first)}`;
  return `${which}${first.kid ? ` (kid ${quote(first.kid)})` : ''} is not valid: ${first.reason}. A card with an invalid signature is never stored; sign the card as it is now and send it again.`;
}

const REQUIRED = 'This registry accepts only agent cards signed by a key it trusts (REGISTRY_REQUIRE_VERIFIED)';

/**
 * The signatures of a valid agent card checked against the trust roots (registration and bulk
 * import; needs no storage); undefined for MCP servers, which have none. Throws
 * SIGNATURE_INVALID (a SignatureRefusal) for a card with an invalid signature, and for an
 * unverified one when the operator requires verification.
 */
export async function checkCardSignatures(
  deps: Pick<CardTrustDeps, 'verifier' | 'requireVerified'>,
  subject: Subject,
  verdict: Verdict,
  disclose: boolean,
): Promise<CardVerificationResult | undefined> {
  if (subject.type !== 'agent-card' || !isObject(subject.card)) return undefined;
  const result = await deps.verifier.verifyAgentCard(subject.card, verdict.generation ?? '1.0');
  const statuses = disclosedVerification(result, disclose).signatures;
  const publicStatuses = result.verification.signatures;
  if (statuses.some((s) => s.status === 'invalid')) {
    // The invalid signatures' findings first: they are why the card is refused (each keeps its path).
    const findings = signatureFindings(statuses);
    throw new SignatureRefusal(
      invalidSignatureMessage(statuses),
      [...findings.filter((f) => f.rule === 'signature-invalid'), ...findings.filter((f) => f.rule !== 'signature-invalid')],
      invalidSignatureMessage(publicStatuses),
    );
  }
  if (deps.requireVerified && !result.verification.verified) {
    if (statuses.length === 0) {
      const message = `${REQUIRED}, and this card is not signed. Sign it with a trusted key (a2a-registry sign) and send it again.`;
      const details = [{ path: '/signatures', rule: 'signature-required', message: 'the card has no signatures', hint: 'Sign it with a key the registry operator trusts (a2a-registry keygen, a2a-registry sign).' }];
      throw new SignatureRefusal(message, details, message);
    }
    const none = `${REQUIRED}, and none of the card's ${statuses.length === 1 ? 'signature is' : `${statuses.length} signatures is`} by one`;
    // Said whole where no details go with it (a refresh's health, at most 500 characters): each
    // signature's reason in the text.
    const each = publicStatuses.map((s, i) => `signature ${i}${s.kid ? ` by kid ${quote(s.kid)}` : ''}: ${s.reason ?? s.status}`);
    throw new SignatureRefusal(`${none}. See the details for each signature.`, signatureFindings(statuses), `${none}: ${each.join('; ')}.`);
  }
  return result;
}
