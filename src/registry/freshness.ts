/**
 * Keeping entries fresh (issue 16): refreshing an entry from its source and probing agents
 * registered inline, and what each check leaves behind — a new revision (through the same
 * store and change feed as a registration), or the entry's health and drift.
 *
 * The service authorises (the `refresh` operation) and the refresh loop schedules; this decides
 * what a check means:
 * - a refresh that finds the same document (304, or equal JSON) records `ok`;
 * - a changed document that passes the registration checks becomes the next revision
 *   (`revisionOrigin: "refresh"`, same owner);
 * - a document that fails them, or a source that cannot be fetched, keeps the last good
 *   revision and records why (`invalid` / `unreachable`, failures in a row, drift);
 * - a probe (REGISTRY_PROBE) fetches an inline agent's well-known card: `ok` or `invalid`, and
 *   `drift` when it differs from the registered revision; the revision is never changed.
 */
import { ADMIN_PRINCIPAL } from '../contract/caller.js';
import { RegistryError, notFound } from '../contract/errors.js';
import type { EntryDescription } from '../contract/description.js';
import { failingSince, type EntryHealth, type EntrySource, type HealthStatus } from '../contract/freshness.js';
import type { RegistrationResult } from '../contract/types.js';
import { sameJson } from '../lib/canonical-json.js';
import { sameOutcome } from '../contract/verification.js';
import { shownEndpointKey } from '../lib/endpoint-url.js';
import type { FreshnessWrite, RegistryStore, StoredEntry } from '../storage/types.js';
import type { DocumentValidator } from '../validation/index.js';
import { disclosedVerification } from '../validation/signature.js';
import { SignatureRefusal, type CardTrust } from './card-trust.js';
import type { ChangeFeed } from './change-feed.js';
import { SourceFailure, type DocumentSources } from './document-sources.js';
import { checkDocument, entryWriteOf, identityOfOwnEntry, identityTaken, publishUpsert, registrationResultOf } from './documents.js';
import { describeStored } from './entries.js';
import { failureBackoffMs } from './failure-backoff.js';
import { nextHealth, type CheckFinding } from './health.js';
import { shownTakenEndpoint, urlTaken } from './endpoint-claims.js';
import { URL_RESERVED, type ReservedEndpoints } from './reserved-endpoints.js';

export interface FreshnessSettings {
  /** Entries with a source (and probed agents) are checked this often; 0: never by themselves. */
  refreshIntervalMs: number;
  /** Check agents registered inline too, at the well-known card of their primary interface (REGISTRY_PROBE). */
  probe: boolean;
  /** Leave entries unhealthy for longer than this out of default search results. */
  hideUnhealthyAfterMs?: number;
  /** Revisions kept per entry (REGISTRY_MAX_REVISIONS): a refresh trims older ones, as a registration does. */
  maxRevisions?: number;
}

export const NO_FRESHNESS: FreshnessSettings = { refreshIntervalMs: 0, probe: false };

/**
 * The longest a source's Retry-After puts off its next check: a server may ask for a day's rest
 * (maintenance), not to be left unchecked for good, its entry showing its last health meanwhile.
 */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * The next check at `next`, or later when the source answered 429 or 503 asking to be asked again
 * later than that (RFC 9110 §10.2.3, RFC 6585 §4): checked on the interval alone, a source that
 * asked for a day's rest was asked again within the hour (or the minute, at a short
 * REGISTRY_REFRESH_SECONDS), by every registry that lists it. Never sooner than `next`.
 */
function notBeforeRetryAfter(next: string, retryAfterMs: number | undefined): string {
  if (retryAfterMs === undefined) return next;
  const asked = Date.now() + Math.min(retryAfterMs, MAX_RETRY_AFTER_MS);
  return asked > Date.parse(next) ? new Date(asked).toISOString() : next;
}

/**
 * `drift` after a failed check, for refresh and probe alike. The contract defines it as the live
 * document differing from the stored revision: an `invalid` check got a body that is not that
 * revision (not JSON, too large, no valid card, refused), so it is drift; an `unreachable` one got
 * nothing to compare, so what the last check found stands. Before, a probe that got such a body
 * kept the previous drift (false) while a refresh in the same case recorded true.
 */
function driftAfterFailure(health: Exclude<HealthStatus, 'ok'>, previous: boolean | undefined): boolean | undefined {
  return health === 'invalid' ? true : previous;
}

export type SourcedEntry = StoredEntry & { source: EntrySource };

export class FreshnessChecks {
  constructor(
    private readonly store: RegistryStore,
    private readonly validator: DocumentValidator,
    /** Signatures of a fetched card are checked as a registration's are. */
    private readonly trust: CardTrust,
    private readonly feed: ChangeFeed,
    private readonly sources: DocumentSources,
    /** The registry's own endpoints: a fetched card of a non-admin's entry may not list them. */
    private readonly reserved: ReservedEndpoints,
    readonly settings: FreshnessSettings,
  ) {}

  /**
   * When the next check is due, from now: an interval, backed off after `failures` failed checks
   * in a row (./failure-backoff.ts); undefined when entries are not refreshed by themselves.
   */
  nextCheckAt(failures = 0): string | undefined {
    const interval = this.settings.refreshIntervalMs;
    return interval > 0 ? new Date(Date.now() + failureBackoffMs(interval, failures)).toISOString() : undefined;
  }

  /**
   * The freshness record a registration writes: by reference, its source and an `ok` check
   * (and the next one scheduled); inline, none — the owner manages the document, any source is
   * dropped — except with probing on, where an agent's first probe is due now.
   */
  forRegistration(source: EntrySource | undefined, kind: 'agent-card' | 'mcp-server'): FreshnessWrite | null {
    if (source) {
      return { source, health: nextHealth(undefined, { status: 'ok' }, source.fetchedAt), drift: false, nextCheckAt: this.nextCheckAt() };
    }
    return this.settings.probe && kind === 'agent-card' ? { nextCheckAt: new Date().toISOString() } : null;
  }

  /** Checks one entry whose check is due (the refresh loop). Never throws for what the remote side did. */
  async checkDue(id: string, signal?: AbortSignal): Promise<'refreshed' | 'probed' | 'skipped'> {
    const entry = await this.store.get(id);
    if (!entry) return 'skipped';
    if (entry.source) {
      await this.refresh(entry as SourcedEntry, signal).catch((error: unknown) => {
        if (!(error instanceof RegistryError)) throw error;
      });
      return 'refreshed';
    }
    if (this.settings.probe && entry.kind === 'agent') {
      await this.probe(entry, signal);
      return 'probed';
    }
    // Neither (probing was turned off since): stop scheduling it, keep what it showed.
    await this.store.recordCheck(entry.id, { health: entry.health, drift: entry.drift });
    return 'skipped';
  }

  /**
   * With probing off, forgets what earlier probes left on agents registered inline (health,
   * drift): nothing would check them again, and an `unreachable` verdict would hide the entry
   * from search for good. Returns how many entries were cleared.
   */
  async forgetProbes(signal?: AbortSignal): Promise<number> {
    if (this.settings.probe) return 0;
    const seen = new Set<string>();
    let cleared = 0;
    for (;;) {
      const ids = (await this.store.probedWithoutSource(100)).filter((id) => !seen.has(id));
      if (ids.length === 0 || signal?.aborted) return cleared;
      for (const id of ids) {
        seen.add(id);
        const entry = await this.store.get(id);
        if (!entry || entry.source) continue;
        if (await this.record(entry, {})) cleared++;
      }
    }
  }

  /** Fetches the entry's document from its source; answers like register, or throws (after recording) why it could not. */
  async refresh(entry: SourcedEntry, signal?: AbortSignal): Promise<RegistrationResult> {
    try {
      const fetched = await this.sources.refetch(entry, signal);
      if (fetched.notModified) return this.stillCurrent(entry, fetched.source);
      const verdict = checkDocument(this.validator, fetched.subject);
      // An invalid signature (or none, where verified cards are required) fails the refresh
      // like an invalid document: the last good revision stays. Disclosed, as to a registrant:
      // a refresh is asked for by the entry's owner or an admin (or made by the loop, which
      // answers nobody); the entry's health, which anyone may read, records the public wording
      // (SignatureRefusal.publicMessage).
      const verified = await this.trust.check(fetched.subject, verdict, true);
      const { write, description, claims } = entryWriteOf(fetched.subject, verdict);
      // The refresh acts for the owner: a non-admin's entry may not take the registry's own endpoints.
      const reserved = this.reserved.refusal(claims, entry.owner === ADMIN_PRINCIPAL);
      if (reserved) {
        const message = `The card at ${fetched.source.url} was refused (the last good revision is kept): ${reserved.message}`;
        throw new SourceFailure('FORBIDDEN', message, 'invalid', URL_RESERVED, reserved.details);
      }
      if (verified) write.verification = verified.verification;
      if (sameJson(JSON.parse(write.documentText), JSON.parse(entry.documentText))) {
        // The same document, however it is formatted or ordered: no new revision.
        return this.stillCurrent(entry, fetched.source, verdict.warnings);
      }
      write.freshness = this.after(entry, fetched.source, { status: 'ok' }, false);
      const outcome = await this.feed.localWrite(async () => {
        const revised = await this.store.revise(entry.id, write, entry.revision, { maxRevisions: this.settings.maxRevisions });
        if (revised.status === 'unchanged' || revised.status === 'updated') {
          publishUpsert(this.feed, revised.entry, revised.status === 'updated' ? 'refresh' : 'health', revised.status === 'updated' ? description : undefined);
        }
        return revised;
      });
      switch (outcome.status) {
        case 'not-found':
          throw notFound(`No entry has id "${entry.id}".`);
        case 'stale':
          // A registration wrote a revision while this one was fetched: it stands.
          return registrationResultOf(outcome.entry, describeStored(outcome.entry), { created: false, changed: false, warnings: [] });
        // Refused as a registration of the same card is, with its details and rules (the health's reason).
        case 'url-taken':
          throw new SourceFailure(
            'FORBIDDEN',
            `The card at ${fetched.source.url} now lists ${shownTakenEndpoint(claims, outcome.url, outcome.heldAs)}, which an entry of another principal uses; the last good revision is kept.`,
            'invalid',
            'url-taken',
            urlTaken(claims, outcome.url, outcome.heldAs).details,
          );
        case 'conflict': {
          const ownEntry = outcome.existing.owner === entry.owner;
          throw new SourceFailure(
            'FORBIDDEN',
            `The card at ${fetched.source.url} now names ${shownEndpointKey(write.identityUrl)} as its primary interface, which is registered as entry ${outcome.existing.id}` +
              `${ownEntry ? ', another entry of the same owner' : ' by another principal'}; the last good revision is kept.`,
            'invalid',
            'identity-taken',
            ownEntry ? identityOfOwnEntry(claims, outcome.existing.id) : identityTaken(claims, outcome.existing.id).details,
          );
        }
        case 'unchanged':
        case 'updated': {
          const changed = outcome.status === 'updated';
          // As register answers its registrant: the warnings and statuses with the operator's detail.
          const disclosed = verified ? disclosedVerification(verified, true) : undefined;
          const warnings = disclosed ? [...verdict.warnings, ...disclosed.warnings] : verdict.warnings;
          const result = registrationResultOf(outcome.entry, description, { created: false, changed, warnings });
          if (disclosed && result.signatures && sameOutcome(outcome.entry.verification, verified?.verification)) result.signatures = disclosed.signatures;
          return result;
        }
      }
    } catch (error) {
      // Not the source's doing (a bug, or the registry shutting down: the loop's stop, or the
      // outbound guard closing under a `refresh` someone asked for): nothing to record. The
      // caller of `refresh` is told (UNAVAILABLE, send it again); the entry keeps its health.
      if (!(error instanceof RegistryError) || signal?.aborted || (error instanceof SourceFailure && error.cutByShutdown)) throw error;
      // Keep the last good revision and the validators it came with (the failed document's
      // ETag would make the next conditional request answer 304 for it); record why it failed.
      const status = error instanceof SourceFailure ? error.health : 'invalid';
      const reason = error instanceof SourceFailure ? error.reason : error.code;
      // A fetch failure names its URL; the checks of a document do not (a registration's caller
      // knows what it sent), and whoever reads the health later needs to know where it came from.
      // A signature refusal's answer may name the operator's JWKS (the caller may see them) and
      // point to its details, which health has not: health says it whole, as anyone may read it.
      const said = error instanceof SignatureRefusal ? error.publicMessage : error.message;
      const message = error instanceof SourceFailure ? error.message : `The document fetched from ${entry.source.url} was refused (the last good revision is kept): ${said}`;
      const retryAfterMs = error instanceof SourceFailure ? error.retryAfterMs : undefined;
      await this.record(entry, this.after(entry, entry.source, { status, reason, message }, driftAfterFailure(status, entry.drift), retryAfterMs));
      throw error;
    }
  }

  /** The stored revision is what the source serves: health ok, the source's validators updated. */
  private async stillCurrent(entry: SourcedEntry, source: EntrySource, warnings: RegistrationResult['warnings'] = []): Promise<RegistrationResult> {
    const updated = (await this.record(entry, this.after(entry, source, { status: 'ok' }, false))) ?? entry;
    const description: EntryDescription = describeStored(updated);
    return registrationResultOf(updated, description, { created: false, changed: false, warnings });
  }

  /** REGISTRY_PROBE: the well-known card at the origin of an inline agent's primary interface. */
  private async probe(entry: StoredEntry, signal?: AbortSignal): Promise<void> {
    let finding: CheckFinding;
    let drift = entry.drift;
    let retryAfterMs: number | undefined;
    try {
      const live = await this.sources.probe(entry, signal);
      drift = !sameJson(live.value, JSON.parse(entry.documentText));
      const verdict = this.validator.validateAgentCard(live.value, live.sizeBytes, live.written);
      finding = verdict.valid
        ? { status: 'ok' }
        : { status: 'invalid', reason: verdict.errorCode ?? 'VALIDATION_FAILED', message: `The card at ${live.url} is not valid: ${verdict.message ?? 'see the validate operation'}` };
    } catch (error) {
      if (!(error instanceof SourceFailure) || signal?.aborted || error.cutByShutdown) throw error;
      finding = { status: error.health, reason: error.reason, message: error.message };
      drift = driftAfterFailure(error.health, entry.drift);
      retryAfterMs = error.retryAfterMs;
    }
    await this.record(entry, this.after(entry, undefined, finding, drift, retryAfterMs));
  }

  /**
   * The freshness record after a check: health moved on from the entry's, the next check
   * scheduled (an interval after an `ok`, backed off after failures in a row; `retryAfterMs`: a
   * failed check's source asked to be left alone that long).
   */
  private after(entry: StoredEntry, source: EntrySource | undefined, finding: CheckFinding, drift: boolean | undefined, retryAfterMs?: number): FreshnessWrite {
    const health = nextHealth(entry.health, finding, new Date().toISOString());
    const write: FreshnessWrite = { health };
    if (source) write.source = source;
    if (drift !== undefined) write.drift = drift;
    const next = this.nextCheckAt(health.failures);
    if (next) write.nextCheckAt = notBeforeRetryAfter(this.#checkWhenHidden(health, next), retryAfterMs);
    return write;
  }

  /**
   * The next check of an unhealthy entry: at the moment it passes REGISTRY_HIDE_UNHEALTHY_SECONDS
   * when that comes before `next`. Leaving default results changes no stored record, so the
   * standing searches that match it were told nothing (no `removed`) until its next check, up to
   * an interval later; a check then, failing again, is a recorded change (one failure more) that
   * every replica's watches evaluate, and they find it hidden. A source that answers again is
   * `ok`, and stays.
   */
  #checkWhenHidden(health: EntryHealth, next: string): string {
    const hideAfter = this.settings.hideUnhealthyAfterMs;
    const unhealthySince = failingSince(health);
    if (hideAfter === undefined || unhealthySince === undefined) return next;
    // Hidden once its failures began strictly before now - hideAfter (search's hideUnhealthyBefore): 1 ms after.
    const hiddenAt = Date.parse(unhealthySince) + hideAfter + 1;
    return hiddenAt > Date.now() && hiddenAt < Date.parse(next) ? new Date(hiddenAt).toISOString() : next;
  }

  /** Stores a check's outcome and publishes it (to every replica when what readers see changed). */
  private async record(entry: StoredEntry, freshness: FreshnessWrite): Promise<StoredEntry | undefined> {
    const outcome = await this.feed.localWrite(async () => {
      const recorded = await this.store.recordCheck(entry.id, freshness);
      // Both kinds reach this replica's index (a fresh checkedAt on hits); only 'logged' ones were
      // written to the change log for other replicas.
      if (recorded) publishUpsert(this.feed, recorded.entry, recorded.change === 'quiet' ? 'checked' : 'health');
      return recorded;
    });
    return outcome?.entry;
  }
}
