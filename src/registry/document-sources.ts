/**
 * The "resolve" step of the register pipeline, and what refreshes and probes fetch: documents
 * the registry gets itself (a card by URL, an MCP server's tools) instead of receiving them.
 * The service depends on this interface; src/freshness implements it over the Fetcher.
 */
import { RegistryError } from '../contract/errors.js';
import type { DocumentReference, EntrySource, HealthStatus } from '../contract/freshness.js';
import type { ErrorCode, Finding } from '../contract/types.js';
import type { Subject, WrittenText } from '../contract/subject.js';
import type { StoredEntry } from '../storage/types.js';

/** A document fetched from its source, ready for the same checks as an inline one. */
export interface FetchedDocument {
  subject: Subject;
  source: EntrySource;
}

/** A refetch: the source answered "not modified", or with the document (changed or not). */
export type Refetched = ({ notModified: true } | { notModified: false; subject: Subject }) & { source: EntrySource };

/** The live well-known card of an agent registered inline (REGISTRY_PROBE). */
export interface ProbedCard {
  url: string;
  /** The card as fetched. */
  value: unknown;
  sizeBytes: number;
  /** Its text, as a registration by URL checks it. */
  written?: WrittenText;
}

export interface DocumentSources {
  /** Fetches the referenced document for a registration. Throws SourceFailure. */
  resolve(reference: DocumentReference, signal?: AbortSignal): Promise<FetchedDocument>;
  /** Fetches an entry's document again from its source, conditionally where it can. Throws SourceFailure. */
  refetch(entry: StoredEntry & { source: EntrySource }, signal?: AbortSignal): Promise<Refetched>;
  /** Fetches the well-known card at the origin of an agent's primary interface. Throws SourceFailure. */
  probe(entry: StoredEntry, signal?: AbortSignal): Promise<ProbedCard>;
}

/**
 * A document could not be had from its source: declined like any registration (code, message,
 * details), plus what it means for the entry's health and a short machine-readable reason.
 */
export class SourceFailure extends RegistryError {
  constructor(
    code: ErrorCode,
    message: string,
    /** unreachable: nothing usable came back; invalid: something came back, but no valid document. */
    readonly health: Exclude<HealthStatus, 'ok'>,
    /** The fetch's reason (timeout, loopback, http-status, ...) or the document check's code. */
    readonly reason: string,
    details?: Finding[],
    /** The source answered 429 or 503 asking to be left alone this long (its Retry-After), in ms. */
    readonly retryAfterMs?: number,
  ) {
    super(code, message, details);
  }

  /**
   * The registry's own shutdown cut the fetch short (the outbound guard closing under it, reason
   * `shutdown`): nothing the source did, so nothing to record in the entry's health.
   */
  get cutByShutdown(): boolean {
    return this.reason === SHUTDOWN_REASON;
  }
}

/** The reason of a fetch the registry's shutdown cut short (src/net's FetchFailureReason of the same name). */
export const SHUTDOWN_REASON = 'shutdown';
