/**
 * Bulk import (`a2a-registry import`): many documents written to storage in batches, each with
 * exactly the checks of an online registration — the validator, signature verification against
 * the trust roots, the identity and endpoint-URL claims, ownership — so an imported entry is
 * indistinguishable from a registered one. A refused document is reported with the same error a
 * registration would get and skipped; the others in its batch are stored. A batch is one
 * transaction (`RegistryStore.importEntries`; on SQLite, one per half second at most): one commit per batch instead of one per document.
 *
 * Two halves, so they can run on two threads: `ImportChecks` (everything up to the write; needs
 * no storage, so the import can run it in a worker thread while the main thread stores the
 * previous batch) and `BulkImport` (the write: ownership, URL claims, revisions kept, in one
 * transaction). Imports are an operator's: no entry quota (REGISTRY_MAX_ENTRIES_PER_OWNER), as
 * for an admin's registrations; the storage takes none (ImportQuota).
 *
 * Nothing is published here: the import runs beside (or instead of) the registry, which picks
 * the entries up from the change log (PostgreSQL replicas, live) or at its next start (SQLite).
 */
import type { Finding } from '../contract/types.js';
import { RegistryError } from '../contract/errors.js';
import type { Subject } from '../contract/subject.js';
import type { Actor } from '../contract/caller.js';
import type { EntryWrite, ImportQuota, RegistryStore } from '../storage/types.js';
import type { DocumentValidator } from '../validation/index.js';
import type { DocumentVerifier } from '../validation/signature.js';
import { checkCardSignatures } from './card-trust.js';
import { disclosedVerification } from '../validation/signature.js';
import { checkDocument, entryWriteOf, identityTaken } from './documents.js';
import { urlTaken, type EndpointClaims } from './endpoint-claims.js';

export interface ImportChecksDeps {
  validator: DocumentValidator;
  verifier: DocumentVerifier;
  /** Agent cards must carry a signature by a trusted key (REGISTRY_REQUIRE_VERIFIED). */
  requireVerified: boolean;
}

export interface BulkImportDeps {
  store: RegistryStore;
  /** Who owns the imported entries; an entry of another principal with the same identity is refused, as online. */
  owner: string;
  /** Most revisions kept per entry (REGISTRY_MAX_REVISIONS). Imports are an operator's: no entry quota. */
  maxRevisions?: number;
}

/** A document that passed the checks: what to write, the URLs it claims (for a refusal's message), its warnings. Plain data (crosses threads). */
export interface PreparedDocument {
  write: EntryWrite;
  claims: EndpointClaims;
  warnings: Finding[];
}

export type ImportResult =
  | { status: 'created' | 'updated' | 'unchanged'; id: string; warnings: Finding[] }
  /** Refused with the error a registration of the same document would get. */
  | { status: 'refused'; error: RegistryError };

/** The checks of a registration up to the write. */
export class ImportChecks {
  constructor(private readonly deps: ImportChecksDeps) {}

  /** The document ready to store, or the error register would answer. */
  async prepare(subject: Subject): Promise<PreparedDocument | { refused: RegistryError }> {
    try {
      const verdict = checkDocument(this.deps.validator, subject);
      // Disclosed: imports are the operator's (the CLI) or an administrator's.
      const verified = await checkCardSignatures(this.deps, subject, verdict, true);
      const { write, claims } = entryWriteOf(subject, verdict);
      if (verified) write.verification = verified.verification;
      return { write, claims, warnings: verified ? [...verdict.warnings, ...disclosedVerification(verified, true).warnings] : verdict.warnings };
    } catch (error) {
      if (error instanceof RegistryError) return { refused: error };
      throw error;
    }
  }
}

/** The write half: prepared documents stored in one transaction. */
export class BulkImport {
  private readonly actor: Actor;
  private readonly quota: ImportQuota;

  constructor(private readonly deps: BulkImportDeps) {
    this.actor = { principal: deps.owner, isAdmin: false };
    this.quota = deps.maxRevisions === undefined ? {} : { maxRevisions: deps.maxRevisions };
  }

  /**
   * Stores one batch (one transaction); one result per document, in order. The transaction may
   * stop early (see RegistryStore.importEntries): then the results are those of the first
   * documents, and the caller stores the rest with another call.
   */
  async store(batch: readonly PreparedDocument[]): Promise<ImportResult[]> {
    const outcomes = await this.deps.store.importEntries(
      batch.map((p) => p.write),
      this.actor,
      this.quota,
    );
    return outcomes.map((outcome, i): ImportResult => {
      const p = batch[i]!;
      switch (outcome.status) {
        case 'forbidden':
          return { status: 'refused', error: identityTaken(p.claims, outcome.id, this.deps.owner) };
        case 'url-taken':
          return { status: 'refused', error: urlTaken(p.claims, outcome.url, outcome.heldAs) };
        default:
          return { status: outcome.status, id: outcome.id, warnings: p.warnings };
      }
    });
  }
}
