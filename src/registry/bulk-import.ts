/**
 * Bulk import (`a2a-registry import`): many documents written to storage in batches, each with
 * exactly the checks of an online registration — the validator, signature verification against
 * the trust roots, the identity and endpoint-URL claims, ownership — so an imported entry is
 * indistinguishable from a registered one. A refused document is reported with the same error a
 * registration would get and skipped; the others in its batch are stored. A batch is one
 * transaction (`RegistryStore.importEntries`): one commit per batch instead of one per document.
 *
 * Nothing is published here: the import runs beside (or instead of) the registry, which picks
 * the entries up from the change log (PostgreSQL replicas, live) or at its next start (SQLite).
 */
import type { Finding } from '../contract/types.js';
import { RegistryError } from '../contract/errors.js';
import type { Subject } from '../contract/subject.js';
import type { Actor } from '../contract/caller.js';
import type { EntryWrite, RegistryStore, WriteQuota } from '../storage/types.js';
import type { DocumentValidator } from '../validation/index.js';
import type { DocumentVerifier } from '../validation/signature.js';
import { CardTrust } from './card-trust.js';
import { ChangeFeed } from './change-feed.js';
import { checkDocument, entryWriteOf, identityTaken } from './documents.js';
import { urlTaken, type EndpointClaims } from './endpoint-claims.js';

export interface BulkImportDeps {
  store: RegistryStore;
  validator: DocumentValidator;
  verifier: DocumentVerifier;
  /** Agent cards must carry a signature by a trusted key (REGISTRY_REQUIRE_VERIFIED). */
  requireVerified: boolean;
  /** Who owns the imported entries; an entry of another principal with the same identity is refused, as online. */
  owner: string;
  /** Most revisions kept per entry (REGISTRY_MAX_REVISIONS). Imports are an operator's: no entry quota. */
  maxRevisions?: number;
}

export type ImportResult =
  | { status: 'created' | 'updated' | 'unchanged'; id: string; warnings: Finding[] }
  /** Refused with the error a registration of the same document would get. */
  | { status: 'refused'; error: RegistryError };

interface Prepared {
  write: EntryWrite;
  claims: EndpointClaims;
  warnings: Finding[];
}

export class BulkImport {
  private readonly trust: CardTrust;
  private readonly actor: Actor;
  private readonly quota: WriteQuota;

  constructor(private readonly deps: BulkImportDeps) {
    // CardTrust's feed is only used to announce re-evaluations of stored cards, which an import never runs.
    this.trust = new CardTrust({ store: deps.store, feed: new ChangeFeed(), verifier: deps.verifier, requireVerified: deps.requireVerified });
    this.actor = { principal: deps.owner, isAdmin: false };
    this.quota = deps.maxRevisions === undefined ? {} : { maxRevisions: deps.maxRevisions };
  }

  /** Validates and stores one batch (one transaction); one result per subject, in order. */
  async importBatch(subjects: readonly Subject[]): Promise<ImportResult[]> {
    const results: (ImportResult | Prepared)[] = [];
    for (const subject of subjects) results.push(await this.prepare(subject));
    const prepared = results.filter((r): r is Prepared => 'write' in r);
    const outcomes = await this.deps.store.importEntries(
      prepared.map((p) => p.write),
      this.actor,
      this.quota,
    );
    let next = 0;
    return results.map((r): ImportResult => {
      if (!('write' in r)) return r;
      const outcome = outcomes[next++]!;
      switch (outcome.status) {
        case 'forbidden':
          return { status: 'refused', error: identityTaken(r.write.identityUrl, outcome.id) };
        case 'url-taken':
          return { status: 'refused', error: urlTaken(r.claims, outcome.url) };
        case 'quota-exceeded':
          return { status: 'refused', error: new RegistryError('QUOTA_EXCEEDED', `The import would take "${this.actor.principal}" over ${outcome.limit} entries.`) };
        default:
          return { status: outcome.status, id: outcome.id, warnings: r.warnings };
      }
    });
  }

  /** The checks of a registration, up to the write; a refusal as the error register would answer. */
  private async prepare(subject: Subject): Promise<ImportResult | Prepared> {
    try {
      const verdict = checkDocument(this.deps.validator, subject);
      const verified = await this.trust.check(subject, verdict);
      const { write, claims } = entryWriteOf(subject, verdict);
      if (verified) write.verification = verified.verification;
      return { write, claims, warnings: verified ? [...verdict.warnings, ...verified.warnings] : verdict.warnings };
    } catch (error) {
      if (error instanceof RegistryError) return { status: 'refused', error };
      throw error;
    }
  }
}
