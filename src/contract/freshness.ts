/**
 * Freshness (issue 16): where an entry's document comes from when the registry fetched it
 * itself, and how the last check of the live agent or server went. Wire shapes of the contract
 * (`source`, `health`, `drift` on entries and hits) and the document references a `register`
 * may carry instead of a document.
 */

export type HealthStatus = 'ok' | 'unreachable' | 'invalid';
export const HEALTH_STATUSES: readonly HealthStatus[] = ['ok', 'unreachable', 'invalid'];

/** The outcome of the latest check of an entry's live document. */
export interface EntryHealth {
  /** ok: fetched and valid; unreachable: could not be fetched; invalid: fetched, but not a valid document. */
  status: HealthStatus;
  /** When the registry last checked (ISO-8601). */
  checkedAt: string;
  /** Since when the status has been what it is. */
  since: string;
  /** Consecutive failed checks (0 when ok). */
  failures: number;
  /**
   * Not ok: since when the checks have failed without a break, whatever the kind of each failure
   * (the first of `failures`). It is `since`, unless the failures changed kind (invalid, then
   * unreachable): `since` moves with the status, this stays. How long an entry has been
   * unhealthy (REGISTRY_HIDE_UNHEALTHY_SECONDS) counts from it.
   */
  failingSince?: string;
  /** Why the last check failed: a short machine-readable reason (timeout, http-status, VALIDATION_FAILED, ...). */
  reason?: string;
  /** What went wrong, for people. */
  message?: string;
}

/**
 * Since when an unhealthy entry's checks have failed without a break: its `failingSince`, or
 * `since` for health recorded without one (the run began with its status, as far as anything
 * recorded says). Undefined when the entry is healthy, or was never checked.
 */
export function failingSince(health: Pick<EntryHealth, 'status' | 'since' | 'failingSince'> | undefined): string | undefined {
  if (!health || health.status === 'ok') return undefined;
  return health.failingSince ?? health.since;
}

/** Where the registry fetched an entry's document (registered by URL, or an MCP server's tools/list). */
export interface EntrySource {
  /** The agent card's URL, or the MCP server's URL. */
  url: string;
  /** When the document was last fetched successfully (a 304 counts). */
  fetchedAt: string;
  etag?: string;
  lastModified?: string;
}

/** A document the registry fetches itself instead of receiving it. */
export type DocumentReference =
  /** An agent card at `url`: a base URL (→ /.well-known/agent-card.json) or the card's own URL. */
  | { type: 'agent-card-url'; url: string }
  /** An MCP server's tools, listed with MCP tools/list at `server.url`; `server` is the metadata to register. */
  | { type: 'mcp-tools'; server: unknown };

/** Who wrote a revision: a registration, or the registry refreshing the entry from its source. */
export type RevisionOrigin = 'register' | 'refresh';
