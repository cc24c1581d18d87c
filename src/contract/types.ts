/**
 * The registry's public message contract (docs/REGISTRY-CONTRACT.md) as TypeScript types.
 * These are wire JSON shapes: what a peer sends inside a data part and what comes back in
 * artifacts. Every layer (operations, validation, storage, search, CLI) speaks these types,
 * so the contract is defined once.
 */

import type { EntryHealth, EntrySource, HealthStatus, RevisionOrigin } from './freshness.js';

export type EntryKind = 'agent' | 'mcp-server';

/** Error codes of a REJECTED task's `{"error": {...}}` data part. */
export type ErrorCode =
  | 'VALIDATION_FAILED'
  | 'TOO_LARGE'
  | 'UNSUPPORTED_VERSION'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'BAD_REQUEST'
  | 'RATE_LIMITED'
  /** A per-principal limit (REGISTRY_MAX_ENTRIES_PER_OWNER) would be exceeded; the message names it. */
  | 'QUOTA_EXCEEDED'
  /**
   * The database cannot be written (disk full, read-only, file deleted or corrupt, unreachable).
   * Answered as a protocol error (HTTP 503, a JSON-RPC error), not a task; reads keep working.
   */
  | 'STORAGE_UNAVAILABLE'
  /**
   * The registry has just started and is still loading its search index: searches are refused
   * until it is ready (HTTP 503 + Retry-After, a JSON-RPC error), like STORAGE_UNAVAILABLE.
   */
  | 'STARTING_UP'
  | 'UNAVAILABLE'
  /** A failure of the registry itself (a bug): the task ends FAILED with a generic message; the log has the details. */
  | 'INTERNAL'
  /** A document given by URL (or an MCP server's tools) could not be fetched, or the fetch was refused. */
  | 'FETCH_FAILED'
  /** A card signature failed verification (a tampered card), or the registry requires a verified card. */
  | 'SIGNATURE_INVALID';

/** One problem (or warning) found in a request or document. `path` is a JSON Pointer. */
export interface Finding {
  path: string;
  message: string;
  hint?: string;
  /** Machine-readable short name of the rule, e.g. `required`, `placeholder-url`. */
  rule?: string;
}

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details?: Finding[];
  /** Seconds after which a RATE_LIMITED request may be retried. */
  retryAfterSeconds?: number;
}

/** One interface an entry can be reached at. MCP servers use protocolBinding "MCP". */
export interface EntryInterface {
  url: string;
  protocolBinding: string;
  protocolVersion?: string;
  tenant?: string;
}

/**
 * The verdict on one signature of a card (`signatures[i]`, same order): made by a trusted key
 * (`verified`), by a key no trust root holds (`unknown-key`), or not a valid signature of this
 * card with an accepted algorithm (`invalid`, which rejects the card).
 */
export interface SignatureStatus {
  status: 'verified' | 'unknown-key' | 'invalid';
  /** From the signature's protected header, when it has one. */
  kid?: string;
  alg?: string;
  /**
   * `verified` only: the key set the key that verified it comes from, as kids are only unique
   * within one: the URL of an allow-listed JWKS (REGISTRY_TRUSTED_JKU), or "registry" for the
   * operator's own keys (REGISTRY_TRUSTED_KEYS).
   */
  jwks?: string;
  /** Why it is not verified (absent for `verified`). */
  reason?: string;
}

/** MCP server metadata sent beside a toolspec. */
export interface McpServerMeta {
  name: string;
  url: string;
  description?: string;
  version?: string;
}

export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface McpTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: McpToolAnnotations;
  [extra: string]: unknown;
}

export interface Toolspec {
  tools: McpTool[];
}

/** The stored document of an MCP server entry. */
export interface McpServerDocument {
  mcpServer: McpServerMeta;
  toolspec: Toolspec;
}

/** An `entry` answer (from `get`, and each item of `entries`). */
export interface EntryView {
  id: string;
  kind: EntryKind;
  name: string;
  description: string;
  owner: string;
  revision: number;
  createdAt: string;
  updatedAt: string;
  protocolVersion?: string;
  interfaces: EntryInterface[];
  contentHash?: string;
  /** Where the registry fetches the document (registered by URL or with fetchTools). */
  source?: EntrySource;
  /** The latest check of the live document (entries with a source; all agents with REGISTRY_PROBE). */
  health?: EntryHealth;
  /** The live card differs from the stored revision (probed or failed refresh). */
  drift?: boolean;
  /** "refresh" when the registry wrote this revision from the entry's source. */
  revisionOrigin?: RevisionOrigin;
  /** A signature of the card verified with a key from the registry's trust roots. */
  verified: boolean;
  /** The key that verified it, and the key set it comes from (SignatureStatus.jwks). */
  kid?: string;
  jwks?: string;
  /** Each signature's status, as last evaluated (with the document, for signed cards). */
  signatures?: SignatureStatus[];
  /** The card, or `{mcpServer, toolspec}`, exactly as registered. `list` items may leave it out. */
  document?: unknown;
  /**
   * `get` only: the entry's stored revisions, newest first (at most MAX_REVISIONS_LISTED). Older
   * revisions may have been trimmed, so the numbers need not start at 1.
   */
  revisions?: RevisionSummary[];
}

/** `get` lists at most this many of an entry's revisions (the newest); the web page says so. */
export const MAX_REVISIONS_LISTED = 100;

/** One stored revision of an entry, as `get` lists them. */
export interface RevisionSummary {
  revision: number;
  /** When this revision was stored (ISO-8601). */
  updatedAt: string;
}

/** A `registration` (or `validation`) result. */
export interface RegistrationResult {
  id?: string;
  kind: EntryKind;
  /** The agent's or MCP server's name, as stored (what a client registering by URL did not send). */
  name?: string;
  revision?: number;
  created?: boolean;
  changed?: boolean;
  protocolVersion?: string;
  indexed?: { skills: number } | { tools: number };
  /** A signature verified with a trusted key (agents; MCP servers are never signed). */
  verified?: boolean;
  kid?: string;
  jwks?: string;
  /** Each signature of the card, in order (agents). */
  signatures?: SignatureStatus[];
  warnings: Finding[];
  /** Registered by URL / fetchTools, or refreshed: where the document came from. */
  source?: EntrySource;
  /** Registered by URL / fetchTools, or refreshed: the check this fetch was. */
  health?: EntryHealth;
  /** A refresh: "refresh" when it wrote a new revision. */
  revisionOrigin?: RevisionOrigin;
}

export interface ValidationResultBody {
  valid: boolean;
  kind: EntryKind;
  protocolVersion?: string;
  sizeBytes: number;
  /** As register would record them (agents). */
  verified?: boolean;
  kid?: string;
  jwks?: string;
  signatures?: SignatureStatus[];
  errors: Finding[];
  warnings: Finding[];
}

export interface SearchFilter {
  kind?: EntryKind;
  tags?: string[];
  inputModes?: string[];
  outputModes?: string[];
  protocolBinding?: string;
  protocolVersion?: string;
  streaming?: boolean;
  readOnly?: boolean;
  destructive?: boolean;
  idempotent?: boolean;
  openWorld?: boolean;
  owner?: string;
  /**
   * Entries offering any of these capabilities, as their catalog entries list them (ARD's
   * `capabilities`): a skill's id (its name when it has none) or a tool's name, exactly.
   */
  capabilities?: string[];
  /**
   * Health of the live agent or server: "ok" keeps only entries whose latest check succeeded;
   * "any" also shows entries the operator hides by default (unhealthy for too long).
   */
  health?: HealthStatus | 'any';
  /** true: only entries verified with a trusted key; false: only the others. */
  verified?: boolean;
}

/**
 * How search results are cut: `entry` (the default), one result per agent or MCP server, its
 * best match in `match` and its other matching skills or tools in `matches`; `match`, one result
 * per matching skill, tool or entry text, at most three per entry (the last one shown carrying
 * `moreInEntry`).
 */
export type ResultsPer = 'entry' | 'match';

export interface SearchRequest {
  query?: string;
  filter?: SearchFilter;
  limit?: number;
  pageToken?: string;
  /** Default `entry`. */
  resultsPer?: ResultsPer;
}

/**
 * A standing search (issue 19): the same query and filter as a search, watched for changes.
 * `initial: false` skips the first `watch-results` chunk (the current matches).
 */
export interface WatchRequest {
  query?: string;
  filter?: SearchFilter;
  initial?: boolean;
}

/** What left a watch's results: the entry's id, and its kind and name when known. */
export interface RemovedHit {
  id: string;
  kind?: EntryKind;
  name?: string;
}

/**
 * One event of a watch: an entry entered (`added`), changed within (`updated`) or left
 * (`removed`) the results; `resync` replaces what the client knew with the current matches
 * (events were missed). `seq` counts the watch's events from 1.
 */
export type WatchEvent =
  | { event: 'added' | 'updated'; hit: SearchHit; seq: number; at: string }
  | { event: 'removed'; hit: RemovedHit; seq: number; at: string }
  | { event: 'resync'; results: SearchHit[]; total: number; seq: number; at: string };

export interface SearchMatch {
  type: 'agent' | 'skill' | 'mcp-server' | 'tool';
  /** Skill id, or tool name. Absent when the entry itself matched. */
  id?: string;
  name: string;
  fields: string[];
}

export interface SearchHit {
  id: string;
  kind: EntryKind;
  name: string;
  description: string;
  score: number;
  match: SearchMatch;
  interfaces: EntryInterface[];
  verified: boolean;
  kid?: string;
  jwks?: string;
  /**
   * Results per entry: the entry's other matching skills or tools, best first (at most
   * MAX_MATCHES_PER_HIT); absent when only `match` matched.
   */
  matches?: SearchMatch[];
  /**
   * How many more matches of the same entry were left out: beyond `matches` (results per entry),
   * or folded into this hit (results per match).
   */
  moreInEntry?: number;
  /** Where the registry fetches the entry's document (registered by URL or with fetchTools). */
  source?: EntrySource;
  health?: EntryHealth;
  drift?: boolean;
}

export interface SearchPage {
  results: SearchHit[];
  /**
   * How many results the search has across all pages: exact up to the registry's total limit
   * (REGISTRY_SEARCH_TOTAL_LIMIT, 10,000 by default); past it, or where the search's work
   * bounds left matches out, a lower bound, and `totalExact` is false.
   */
  total: number;
  /** Present (false) when `total` is a lower bound ("at least"); absent when it is exact. */
  totalExact?: false;
  nextPageToken?: string;
  /**
   * Why nothing matched, for people, where the registry knows it: a query of no word search looks
   * for (only stop words, single letters or signs, as `the`). Absent otherwise.
   */
  reason?: string;
}

export interface ListRequest {
  /**
   * `mine: true` lists the caller's own entries (it needs a token): a client need not know the
   * principal its token maps to. It cannot be combined with a different `owner`.
   */
  filter?: { kind?: EntryKind; owner?: string; mine?: boolean; health?: HealthStatus; verified?: boolean };
  pageSize?: number;
  pageToken?: string;
  /** Each entry with its document, as `get` answers it (catalogs map them in one read). */
  withDocuments?: boolean;
  /** `createdAt` (the default) or `updatedAt`; see ListOrder. */
  orderBy?: ListOrder;
  /**
   * The AI Catalog's ranges (no door's request takes them; default order only): `until`, a page
   * token of this listing, ends it with the entry that token follows; `split` asks for `parts`.
   */
  until?: string;
  split?: number;
}

/**
 * The orders a listing offers, both newest first. `createdAt`: newest registered first, a stable
 * walk (an entry present for the whole walk appears exactly once, however often it changes).
 * `updatedAt`: most recently changed (new revision) first, for a client keeping a copy in step:
 * an entry changed during a walk moves to the front, where the next walk finds it.
 */
export type ListOrder = 'createdAt' | 'updatedAt';

export interface ListPage {
  entries: EntryView[];
  nextPageToken?: string;
  /**
   * With `split` (ListRequest): where the rest of the listing, from nextPageToken to `until`, is
   * cut into at most `split` ranges, each but the last pageSize·split^k entries (k the smallest
   * for which `split` ranges hold the rest): the page tokens the second range onwards start at.
   */
  parts?: string[];
}
