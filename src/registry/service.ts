/**
 * The registry's business logic, independent of any door (A2A, gRPC, MCP, web): validate,
 * register, read, list, unregister and search. Every method receives the Caller as the door
 * authenticated it and decides here what that caller may do, so all doors share one set of
 * rules. It owns the rule that storage is the source of truth: a write is committed, then
 * published on the change feed (which the search index and every other derived view follow),
 * then acknowledged.
 */
import type {
  EntryKind,
  EntryView,
  ListPage,
  ListRequest,
  RegistrationResult,
  SearchFilter,
  SearchHit,
  SearchPage,
  SearchRequest,
  ValidationResultBody,
  WatchRequest,
} from '../contract/types.js';
import { MAX_REVISIONS_LISTED } from '../contract/types.js';
import { PAGE_TOKEN_OTHER_QUERY, REFRESH_NO_SOURCE, RegistryError, STARTING_UP_RETRY_SECONDS, STORAGE_UNAVAILABLE_RETRY_SECONDS, badArguments, badRequest, notFound } from '../contract/errors.js';
import type { Actor, Caller } from '../contract/caller.js';
import type { DocumentReference, EntrySource } from '../contract/freshness.js';
import type { Subject } from '../contract/subject.js';
import { sameOutcome } from '../contract/verification.js';
import type { IndexState, SavedState } from '../search/index-state.js';
import type { IndexQuery, ListingShown, SearchIndex } from '../search/types.js';
import { StorageUnavailableError } from '../storage/faults.js';
import { ENTRY_KINDS, InvalidCursorError, UnreadableEntryError, decodeCursor as decodeListPosition, encodeCursor as encodeListPosition } from '../storage/common.js';
import type { AcceptedUpsert, AcknowledgementRow, RegistryStore, StoredEntry, TaskRow, WriteQuota } from '../storage/types.js';
import type { DocumentValidator } from '../validation/index.js';
import { disclosedVerification, type DocumentVerifier } from '../validation/signature.js';
import { CardTrust } from './card-trust.js';
import type { ChangeFeed } from './change-feed.js';
import type { DocumentSources } from './document-sources.js';
import { checkDocument, entryWriteOf, identityTaken, publishUpsert, registrationResultOf } from './documents.js';
import { urlTaken } from './endpoint-claims.js';
import { toEntryView, toIndexedEntry } from './entries.js';
import { FreshnessChecks, NO_FRESHNESS, type FreshnessSettings, type SourcedEntry } from './freshness.js';
import { PageTokens, issuedForKind, pageTokenNotIssued } from './page-token.js';
import { ReservedEndpoints } from './reserved-endpoints.js';
import { decodeCursor, encodeCursor, pageAfter, windowOf, type SearchCursor } from './search-cursor.js';
import { SearchCache } from './search-cache.js';
import { clipped } from '../lib/clipped.js';

const DEFAULT_SEARCH_LIMIT = 20;
const DEFAULT_LIST_SIZE = 50;

export interface RegistryServiceDeps {
  store: RegistryStore;
  index: SearchIndex;
  /** Makes an empty index, for reloading from storage without a moment of empty results. */
  newIndex?: () => SearchIndex;
  validator: DocumentValidator;
  /** Checks card signatures against the operator's trust roots. */
  verifier: DocumentVerifier;
  pageTokens: PageTokens;
  feed: ChangeFeed;
  /** Reads (search, get, list) are open to anonymous callers (REGISTRY_PUBLIC_READ). */
  publicRead: boolean;
  /** Documents the registry fetches itself (register by URL, fetchTools, refresh, probe). */
  sources?: DocumentSources;
  /** How entries are kept fresh (with `sources`). */
  freshness?: FreshnessSettings;
  /** Per-principal limits (REGISTRY_MAX_ENTRIES_PER_OWNER, REGISTRY_MAX_REVISIONS); admins are exempt. */
  quota?: { maxEntriesPerOwner: number; maxRevisions: number };
  /** Agent cards must carry a signature by a trusted key (REGISTRY_REQUIRE_VERIFIED). */
  requireVerified?: boolean;
  /** Recent search answers kept while the index is unchanged (REGISTRY_SEARCH_CACHE_ENTRIES); none when absent. */
  searchCache?: SearchCache;
}

/** What a register may carry: a document, or a reference the registry fetches the document from. */
export type RegisterInput = Subject | DocumentReference;

const isReference = (input: RegisterInput): input is DocumentReference => input.type === 'agent-card-url' || input.type === 'mcp-tools';

/** A catalog identifier of a registered entry (AI Catalog and ARD): urn:air:<publisher>:<agent|mcp-server>:<entry id>. */
const ENTRY_URN = /^urn:air:[^:]{1,253}:(?:agent|mcp-server):([^:]{1,100})$/i;

/**
 * NOT_FOUND for an id no entry has. The catalog documents and ARD answers name entries by their
 * urn:air identifier; sent as an id, it was answered "No entry has id" with nothing to say that
 * get, unregister and refresh take the entry id, which is the identifier's last segment.
 */
function noEntry(id: string): RegistryError {
  const urn = ENTRY_URN.exec(id);
  // Ids are at most 100 characters (the operations' schemas); a path segment on the catalog door
  // is not bounded by them, and a 10 KB one was echoed whole.
  if (!urn) return notFound(`No entry has id "${clipped(id, 100)}".`);
  return notFound(
    `No entry has id "${id}": that is a catalog (AI Catalog / ARD) identifier; the registry's operations take the entry id, its last segment: "${urn[1]}" (an ARD result's metadata.registryId).`,
  );
}

/** Changes read per batch when replaying the change log after a saved index. */
const REPLAY_BATCH = 500;

/** Entries indexed between yields to the event loop while loading (keeps requests answered during start-up). */
const LOAD_YIELD_EVERY = 256;

interface IndexLoading {
  done: number;
  total: number;
  /** Ids the feed changed during the scan: the index already has their newest state. */
  touched: Set<string>;
  /**
   * What the load does before it can count entries, said instead of "n of m entries": counting
   * them, reading a saved index (seconds at a million), replaying the changes logged since. The
   * counts alone said "(0 of 0 entries)" meanwhile, for a database holding thousands.
   */
  stage?: string;
}

/**
 * A search's text as the index reads it: white space before it means nothing, but white space
 * after it ends the last word, which is then no prefix ("kestr " is the word as typed, "kestr"
 * also finds "kestrel": README's query syntax). Trimming both ends made every last word a prefix,
 * whatever was typed after it.
 */
const queryTextOf = (query: string | undefined): string => (query ?? '').trimStart();

/** What a search's page tokens are bound to (their fingerprint): the search, its text, filter, limit and resultsPer. */
type SearchAsked = [operation: 'search', text: string, filter: SearchFilter, limit: number, resultsPer: string];

export class RegistryService {
  private readonly store: RegistryStore;
  private index: SearchIndex;
  /** Set while the start-up scan fills the index. */
  private loading: IndexLoading | undefined;
  /** Why the index is not loaded while a failed load waits to be tried again (indexLoadWaits). */
  private loadWaiting: string | undefined;
  /** Set while reloadIndex scans into a new index beside the one answering. */
  private reloading: { index: SearchIndex; touched: Set<string> } | undefined;
  private readonly newIndex: (() => SearchIndex) | undefined;
  private readonly validator: DocumentValidator;
  private readonly trust: CardTrust;
  private readonly pageTokens: PageTokens;
  private readonly feed: ChangeFeed;
  private readonly publicRead: boolean;
  private readonly sources?: DocumentSources;
  private readonly freshness?: FreshnessChecks;
  private readonly hideUnhealthyAfterMs?: number;
  private readonly quota: RegistryServiceDeps['quota'];
  /**
   * REGISTRY_REQUIRE_VERIFIED: discovery (search, list, standing searches, and the catalogs over
   * them) leaves out agents whose card stopped verifying (a key revoked, a trust root removed),
   * as it could not be registered now; they return once they verify again. `get` by id and the
   * owner's own `list` ("mine") still show them, marked unverified, so the owner sees why.
   */
  private readonly hideUnverifiedAgents: boolean;
  readonly searchCache: SearchCache;
  /** The registry's own endpoints, which only admins may register (set once its card is built). */
  readonly reservedEndpoints = new ReservedEndpoints();

  constructor(deps: RegistryServiceDeps) {
    this.store = deps.store;
    this.index = deps.index;
    this.newIndex = deps.newIndex;
    this.validator = deps.validator;
    this.trust = new CardTrust({ store: deps.store, feed: deps.feed, verifier: deps.verifier, requireVerified: deps.requireVerified === true });
    this.pageTokens = deps.pageTokens;
    this.feed = deps.feed;
    this.publicRead = deps.publicRead;
    this.sources = deps.sources;
    if (deps.sources) {
      this.freshness = new FreshnessChecks(this.store, this.validator, this.trust, this.feed, deps.sources, this.reservedEndpoints, {
        ...(deps.freshness ?? NO_FRESHNESS),
        maxRevisions: deps.quota?.maxRevisions,
      });
    }
    this.hideUnhealthyAfterMs = deps.freshness?.hideUnhealthyAfterMs;
    this.quota = deps.quota;
    this.hideUnverifiedAgents = deps.requireVerified === true;
    this.searchCache = deps.searchCache ?? new SearchCache(0, 0);
    // The index is one of the feed's followers: every committed change, local or from another
    // replica, reaches it the same way.
    this.feed.subscribe((change) => {
      // While the start-up scan runs, an entry the feed has touched is newer than what the scan may read.
      this.loading?.touched.add(change.id);
      // A reload's new index gets it too, and its scan skips the entry: the scan may have read
      // it before this change, and the follower, reading this process's own change back from the
      // log, does not publish it again (ChangeFeed.isEcho), so the new index would keep the older
      // copy (an update lost, an unregistered entry still found) until the entry changed again.
      const reloading = this.reloading;
      reloading?.touched.add(change.id);
      for (const index of reloading ? [this.index, reloading.index] : [this.index]) {
        if (change.op === 'delete' || !change.entry) index.remove(change.id);
        else index.upsert(toIndexedEntry(change.entry, change.description));
      }
    });
  }

  // ---- authorisation: the one place that decides what a caller may do ----

  /** The caller as an actor (writes need a token). */
  private requireActor(caller: Caller, what: string): Actor {
    if (caller.principal !== undefined) return { principal: caller.principal, isAdmin: caller.isAdmin };
    throw new RegistryError(
      'UNAUTHENTICATED',
      caller.invalidCredential
        ? `The bearer token is not recognised; ${what} needs a valid registry token in the Authorization header.`
        : `${what} needs a registry token: send "Authorization: Bearer <token>" (see REGISTRY_TOKENS, or the admin-token file in the registry's data directory).`,
    );
  }

  /** Reads need a token only when the operator closed them (REGISTRY_PUBLIC_READ=false). */
  private requireReader(caller: Caller, what: string): void {
    if (!this.publicRead) this.requireActor(caller, what);
  }

  /** The limits a write by this actor is held to: none for admins. */
  private quotaFor(actor: Actor): WriteQuota {
    return actor.isAdmin || !this.quota ? {} : { ...this.quota };
  }

  /**
   * A storage call, with a storage fault (disk full, read-only, file deleted or corrupt,
   * database unreachable) turned into the refusal that says so. Searches never get here: they
   * are answered from the index.
   */
  private async stored<T>(work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (error) {
      if (!(error instanceof StorageUnavailableError)) throw error;
      throw new RegistryError(
        'STORAGE_UNAVAILABLE',
        // A lock on this entry's rows alone: other writes go on and /readyz stays ready, so neither
        // storage nor /readyz is blamed; the same write succeeds once the holder lets go.
        error.fault.scope === 'rows'
          ? `The entry is busy: another request is writing it (or its URLs), or another database session holds it, and this write waited for it longer than a write may (${error.fault.code}). Retry shortly.`
          : // One request's connection lost under it (what became of the write), or one read's wait
            // for a lock (storage takes writes): each message says so; storage is not blamed.
            error.fault.scope === 'connection' || error.fault.scope === 'read'
            ? `${error.message}.`
            : // Refused after its commit: it may be stored, so "cannot store" and "retry" would mislead.
              error.consequence !== undefined
              ? `${error.message}. The registry cannot store anything more right now (searches are still answered); the operator sees the cause on /readyz.`
              : `${error.message}. This request changed nothing: the registry cannot store anything right now (searches are still answered). Retry later; the operator sees the cause on /readyz.`,
        undefined,
        // Every door says when to retry (the catalog and ARD doors sent 503 without Retry-After).
        STORAGE_UNAVAILABLE_RETRY_SECONDS,
      );
    }
  }

  // ---- derived views ----

  /**
   * Loads every stored entry into the index (start-up) while the registry already listens:
   * the scan yields to the event loop between batches, so /healthz, /readyz, cards and writes
   * are answered meanwhile. Writes committed during the scan reach the index through the feed
   * at once, and the scan skips the entries the feed touched (its copy may be older), so
   * nothing committed while loading is lost or overwritten. Until it finishes, searches are
   * refused with STARTING_UP (see requireIndex). Returns how many entries were indexed.
   */
  async rebuildIndex(options: { signal?: AbortSignal } = {}): Promise<number> {
    // Loading from the first moment: no search is answered from the empty index meanwhile.
    const state: IndexLoading = { done: 0, total: 0, touched: new Set(), stage: 'counting the entries' };
    this.loading = state;
    try {
      const counts = await this.store.count();
      state.total = counts.agent + counts['mcp-server'];
      state.stage = undefined;
      let n = 0;
      for await (const entry of this.store.scan()) {
        if (options.signal?.aborted) throw new Error('index load aborted: the registry is closing');
        if (!state.touched.has(entry.id)) this.index.upsert(toIndexedEntry(entry));
        n++;
        state.done = n;
        if (n % LOAD_YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      return n;
    } finally {
      this.loading = undefined;
    }
  }

  /** A copy of the index to save (./index-snapshots.ts), or undefined when it cannot be saved (hybrid ranking, still loading). */
  captureIndex(): SavedState | undefined {
    if (this.loading) return undefined;
    return this.index.saveState?.();
  }

  /**
   * Start-up from a saved index: `read` reads it (its state and the change-log position it was
   * saved at); this takes it over and re-applies every change logged after that position
   * (re-reading each changed entry, so applying one twice is harmless). Searches are refused
   * from the start, as while loading. Returns the position reached, or why the saved index
   * cannot be used (none or unreadable, it does not fit this code, the change log was trimmed
   * past it, or it disagrees with storage on the number of entries); the index is then a new,
   * empty one, for `rebuildIndex`.
   */
  async restoreIndex(
    read: () => Promise<{ state: IndexState; seq: number } | { reason: string }>,
    options: { signal?: AbortSignal } = {},
  ): Promise<{ seq: number } | { reason: string }> {
    const fresh = this.newIndex?.();
    if (!fresh?.loadState) return { reason: 'this index cannot be restored from a saved one' };
    const loading: IndexLoading = { done: 0, total: 0, touched: new Set(), stage: 'reading the saved index' };
    this.loading = loading;
    const failed = (reason: string): { reason: string } => {
      this.index = this.newIndex!();
      return { reason };
    };
    try {
      const saved = await read();
      if ('reason' in saved) return failed(saved.reason);
      try {
        fresh.loadState(saved.state);
      } catch (err) {
        return failed(`it does not fit: ${(err as Error).message}`);
      }
      // Writes from now on reach the restored index through the feed; the ones before (into the
      // index it replaces) were committed after it was saved, so they are in the change log.
      this.index = fresh;
      loading.touched.clear();
      loading.total = fresh.size;
      const replaying = () => `from the saved index of ${fresh.size} entries: ${loading.done} changed since applied`;
      loading.stage = replaying();
      let seq = saved.seq;
      for (;;) {
        if (options.signal?.aborted) throw new Error('index load aborted: the registry is closing');
        const changes = await this.store.changesSince(seq, REPLAY_BATCH);
        // Read after the changes (as the follower does): a trim in between is seen here.
        const trimmedThrough = await this.store.changesTrimmedThrough();
        if (trimmedThrough > seq) return failed(`the change log was trimmed through ${trimmedThrough}, past its position ${seq}`);
        // The entries of a batch in one query (after a bulk import, the log holds one change per
        // entry); one written by this process since is skipped: the index has its newest state.
        const ids = [...new Set(changes.map((c) => c.id))].filter((id) => !loading.touched.has(id));
        const current = new Map((await this.store.getMany(ids)).map((entry) => [entry.id, entry]));
        for (const id of ids) {
          // Written while the batch was read: the feed's copy is the newer.
          if (loading.touched.has(id)) continue;
          const entry = current.get(id.toLowerCase());
          if (entry) fresh.upsert(toIndexedEntry(entry));
          else fresh.remove(id);
          loading.done++;
        }
        loading.stage = replaying();
        if (changes.length === 0) break;
        seq = changes[changes.length - 1]!.seq;
      }
      const counts = await this.store.count();
      const stored = counts.agent + counts['mcp-server'];
      if (stored !== fresh.size) return failed(`it holds ${fresh.size} entries after replaying the change log, storage ${stored} (another database's?)`);
      return { seq };
    } catch (err) {
      this.index = this.newIndex!();
      throw err;
    } finally {
      this.loading = undefined;
    }
  }

  /** Why searches cannot be answered yet ("loading the search index (n of m)"), or undefined once the index is loaded. */
  get indexLoading(): string | undefined {
    const state = this.loading;
    if (!state) return this.loadWaiting;
    return `loading the search index (${state.stage ?? `${state.done} of ${state.total} entries`})`;
  }

  /**
   * A load (rebuildIndex, restoreIndex) failed and waits to be tried again: `reason` says so and
   * when, to readiness and to refused searches, until it is cleared (undefined) once one succeeds.
   * Meanwhile the index holds part of the entries, or none: searches are refused, as while loading.
   */
  indexLoadWaits(reason: string | undefined): void {
    this.loadWaiting = reason;
  }

  /** Searches need the whole index: while it loads they are refused (retryable), never answered from part of it. */
  private requireIndex(): void {
    const loading = this.indexLoading;
    if (loading) {
      throw new RegistryError(
        'STARTING_UP',
        `The registry is starting up: ${loading}. Searches are answered once it is loaded; retry in ${STARTING_UP_RETRY_SECONDS} seconds (GET /readyz says when it is ready).`,
        undefined,
        STARTING_UP_RETRY_SECONDS,
      );
    }
  }

  /**
   * Reloads the index from storage when individual changes were missed (a replica further
   * behind than the change log reaches): builds a fresh index beside the current one, which
   * keeps answering meanwhile, swaps it in, and tells the feed's other subscribers to resync.
   * Changes committed during the scan are in the change log and are applied again after it;
   * those published meanwhile (this process's own writes) reach the new index as they are.
   */
  async reloadIndex(reason: string): Promise<number> {
    if (!this.newIndex) throw new Error('RegistryService: reloading the index needs deps.newIndex');
    const fresh = this.newIndex();
    const reloading = { index: fresh, touched: new Set<string>() };
    this.reloading = reloading;
    let n = 0;
    try {
      for await (const entry of this.store.scan()) {
        // Changed since the scan began: the new index has its newest state from the feed.
        if (!reloading.touched.has(entry.id)) fresh.upsert(toIndexedEntry(entry));
        n++;
      }
    } finally {
      this.reloading = undefined;
    }
    this.index = fresh;
    this.feed.resync(reason);
    return n;
  }

  /** The follower has read the change log to its end (ChangeFeed.caughtUp). */
  replicaChangesCaughtUp(): void {
    this.feed.caughtUp();
  }

  /**
   * Publishes changes another replica committed (seen in the store's change log), for a batch of
   * entries at once: re-reads them in one query, so applying a change twice is harmless. An
   * entry that is gone is published as removed. This process's own writes, which the log holds
   * too, are not published again when the entry is still as this process published it. An entry
   * whose row this release cannot read is published as removed too, and returned (to be logged).
   */
  async applyReplicaChanges(ids: readonly string[]): Promise<UnreadableEntryError[]> {
    // A change read here may be this process's own write, committed and not yet published.
    await this.feed.localWritesDone();
    const unreadable = new Map<string, UnreadableEntryError>();
    const found = new Map((await this.readReplicaEntries(ids, unreadable)).map((entry) => [entry.id, entry]));
    let n = 0;
    for (const id of ids) {
      const bad = unreadable.get(id.toLowerCase());
      if (bad) {
        // Out of the index (and of every watch's matches) until it is written again: this
        // replica cannot read it, to answer for it or to search it.
        this.feed.publish({ id, op: 'delete', origin: 'replica' });
        continue;
      }
      const entry = found.get(id.toLowerCase());
      // This process's own write, read back from the change log: published already.
      if (this.feed.isEcho(id, entry)) continue;
      this.feed.publish(entry ? { id, op: 'upsert', entry, origin: 'replica' } : { id, op: 'delete', origin: 'replica' });
      // A big batch (a bulk import on another replica) must not hold the event loop for its whole length.
      if (++n % LOAD_YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    return [...unreadable.values()];
  }

  /**
   * The entries of `ids` as stored (one read), those whose row this release cannot read put in
   * `unreadable` instead. Before, one such row failed the whole batch at every poll: no replica
   * applied a later change, and all stayed not ready, for good. Only then is each read alone, to
   * find which.
   */
  private async readReplicaEntries(ids: readonly string[], unreadable: Map<string, UnreadableEntryError>): Promise<StoredEntry[]> {
    try {
      return await this.store.getMany(ids);
    } catch (err) {
      if (!(err instanceof UnreadableEntryError)) throw err;
    }
    const entries: StoredEntry[] = [];
    for (const id of ids) {
      try {
        entries.push(...(await this.store.getMany([id])));
      } catch (err) {
        if (!(err instanceof UnreadableEntryError)) throw err;
        unreadable.set(id.toLowerCase(), err);
      }
    }
    return entries;
  }

  // ---- operations ----

  /**
   * A dry run of register: the same checks and the same answer when invalid; nothing stored. Open
   * to anyone. Which principal holds a URL or an identity is not checked: register decides it as
   * it writes (atomically, in the store).
   */
  async validate(subject: Subject, caller: Caller): Promise<ValidationResultBody> {
    const v = checkDocument(this.validator, subject);
    // Anonymous callers learn each signature's status and a reason, not the operator's allow-listed
    // JWKS URLs nor why one could not be fetched: that is for authenticated callers.
    const disclose = caller.principal !== undefined;
    const verified = await this.trust.check(subject, v, disclose);
    // A caller with a token is told what register would refuse it for listing the registry's own
    // endpoints (an admin may list them). An anonymous caller may be an admin without its token.
    if (caller.principal !== undefined) {
      const reserved = this.reservedEndpoints.refusal(entryWriteOf(subject, v).claims, caller.isAdmin);
      if (reserved) throw reserved;
    }
    const body: ValidationResultBody = { valid: true, kind: v.kind, sizeBytes: v.sizeBytes, errors: [], warnings: v.warnings };
    if (v.generation) body.protocolVersion = v.generation;
    if (verified) {
      const { verification } = verified;
      const { signatures, warnings } = disclosedVerification(verified, disclose);
      body.verified = verification.verified;
      if (verification.kid !== undefined) body.kid = verification.kid;
      if (verification.jwks !== undefined) body.jwks = verification.jwks;
      body.signatures = signatures;
      body.warnings = [...v.warnings, ...warnings];
    }
    return body;
  }

  /**
   * Registers or updates a document. The pipeline: authorise → resolve (fetch a document given
   * by reference: a card URL, an MCP server's tools) → validate → (verify signatures) → store →
   * publish → acknowledge. A fetched document gets exactly the checks of an inline one.
   */
  async register(input: RegisterInput, caller: Caller, acknowledge?: (result: RegistrationResult) => TaskRow | undefined): Promise<RegistrationResult> {
    const actor = this.requireActor(caller, 'Registering');
    const { subject, source } = await this.resolve(input);
    const verdict = checkDocument(this.validator, subject);
    const verified = await this.trust.check(subject, verdict, true);
    const verification = verified?.verification;
    const { write, description, claims } = entryWriteOf(subject, verdict);
    const reserved = this.reservedEndpoints.refusal(claims, actor.isAdmin);
    if (reserved) throw reserved;
    // An admin's document that lists the registry's own endpoints may create an entry or update an
    // admin's, not another principal's: that entry stays its owner's, its URLs claimed in the
    // owner's name (as a refresh of it acts for its owner), so the owner would hold the registry's
    // URLs. The store is asked to write it as the admin's own (an owner's write), and a refusal
    // says whose entry it is. Quotas stay the admin's (none).
    const ownEntryOnly = actor.isAdmin && this.reservedEndpoints.usesIn(claims).length > 0;
    const writer: Actor = ownEntryOnly ? { principal: actor.principal, isAdmin: false } : actor;
    // What is stored is shown with the entry to anyone: the statuses without the operator's detail.
    if (verification) write.verification = verification;
    if (this.freshness) write.freshness = this.freshness.forRegistration(source, subject.type);
    // The registrant is authenticated: its answer has the detail (which JWKS, why not fetched).
    const disclosed = verified ? disclosedVerification(verified, true) : undefined;
    const warnings = disclosed ? [...verdict.warnings, ...disclosed.warnings] : verdict.warnings;
    const resultOf = (entry: StoredEntry, status: AcceptedUpsert['status']) => {
      const result = registrationResultOf(entry, description, { created: status === 'created', changed: status !== 'unchanged', warnings });
      // The stored verdict is this check's (not a later re-evaluation's): answer it with the detail.
      if (disclosed && result.signatures && sameOutcome(entry.verification, verification)) result.signatures = disclosed.signatures;
      return result;
    };
    // The acknowledging task commits with the write (one commit, one sync), unless the answer
    // may still change after the commit (afterCommit records a newer evaluation of the signatures
    // of an unchanged card): then it is saved after, as any task.
    const inCommit: AcknowledgementRow | undefined = acknowledge
      ? (accepted) =>
          this.trust.settledAtCommit(accepted.entry, verification, accepted.status === 'unchanged') ? acknowledge(resultOf(accepted.entry, accepted.status)) : undefined
      : undefined;
    const outcome = await this.feed.localWrite(async () => {
      const stored = await this.stored(this.store.upsert(write, writer, this.quotaFor(actor), inCommit));
      const accepted = stored.status === 'created' || stored.status === 'updated' || stored.status === 'unchanged';
      if (accepted && (stored.status !== 'unchanged' || stored.freshened)) publishUpsert(this.feed, stored.entry, 'register', stored.status !== 'unchanged' ? description : undefined);
      // The same document fetched again, as a refresh's 304: only its check times moved, which
      // this replica's hits show as `get` does (no watch event, nothing logged for other replicas).
      else if (accepted && source) publishUpsert(this.feed, stored.entry, 'checked');
      return stored;
    });
    if (outcome.status === 'forbidden') {
      throw ownEntryOnly ? this.reservedEndpoints.refusalForOwner(claims, outcome.existing.id, outcome.existing.owner) : identityTaken(claims, outcome.existing.id);
    }
    if (outcome.status === 'quota-exceeded') {
      // Storage counts an owner's entries up to the limit only (what a full count would cost), and
      // an owner may hold more (an import is exempt, the limit may have been lowered since): "already
      // has 3 entries" told one with 40 that it had 3 (and a limit of 1 read "1 entries").
      throw new RegistryError(
        'QUOTA_EXCEEDED',
        `Principal "${actor.principal}" has as many entries as one principal may register, or more: the limit is ${outcome.limit} (REGISTRY_MAX_ENTRIES_PER_OWNER=${outcome.limit}). ` +
          `Unregister entries it no longer needs, or ask the registry's operator to raise REGISTRY_MAX_ENTRIES_PER_OWNER.`,
      );
    }
    if (outcome.status === 'url-taken') throw urlTaken(claims, outcome.url, outcome.heldAs);
    const changed = outcome.status !== 'unchanged';
    const entry = await this.stored(this.trust.afterCommit(outcome.entry, verification, !changed));
    return resultOf(entry, outcome.status);
  }

  /** The resolve step: a document as received, or fetched from where the reference points. */
  private async resolve(input: RegisterInput): Promise<{ subject: Subject; source?: EntrySource }> {
    if (!isReference(input)) return { subject: input };
    if (!this.sources) throw badRequest('This registry does not fetch documents: send the agent card or the toolspec itself.');
    return this.sources.resolve(input);
  }

  /**
   * `refresh`: fetches an entry's document from its source now (its owner or an admin), and
   * answers like register. A failure is recorded in the entry's health and declined.
   */
  async refresh(id: string, caller: Caller): Promise<RegistrationResult> {
    const actor = this.requireActor(caller, 'Refreshing');
    const entry = await this.stored(this.store.get(id));
    if (!entry) throw noEntry(id);
    if (entry.owner !== actor.principal && !actor.isAdmin) {
      throw new RegistryError('FORBIDDEN', `Entry "${id}" belongs to another principal; only its owner or an admin may refresh it.`);
    }
    if (!entry.source || !this.freshness) {
      throw badArguments(
        `Entry "${id}" was registered with its document inline, so it has no source to refresh. Register it by URL ({"register": {"url": "https://..."}}) or, for an MCP server, with "fetchTools": true, and the registry keeps it fresh.`,
        // The rule lets a door whose requests are written otherwise (MCP tools) say how in its own words;
        // the path is the arguments' id, which each door roots where its request has it.
        [{ path: '/id', message: 'registered inline: no source to refresh from', rule: REFRESH_NO_SOURCE }],
      );
    }
    return this.stored(this.freshness.refresh(entry as SourcedEntry));
  }

  /** The background check of one due entry (the refresh loop): refresh from its source, or probe. */
  async checkDue(id: string, signal?: AbortSignal): Promise<'refreshed' | 'probed' | 'skipped'> {
    return this.freshness ? this.freshness.checkDue(id, signal) : 'skipped';
  }

  /** With probing off, clears what earlier probes left on inline agents (see FreshnessChecks.forgetProbes). */
  async forgetProbes(signal?: AbortSignal): Promise<number> {
    return this.freshness ? this.freshness.forgetProbes(signal) : 0;
  }

  /** Re-evaluates stored signed cards against the trust roots now in force (see CardTrust); `signal` ends it early. */
  reevaluateSignatures(signal?: AbortSignal): Promise<{ checked: number; changed: number; stopped: boolean }> {
    return this.trust.reevaluateAll(signal);
  }

  async get(id: string, revision: number | undefined, caller: Caller): Promise<EntryView> {
    this.requireReader(caller, 'Reading an entry');
    const [entry, revisions] = await this.stored(Promise.all([this.store.get(id, revision), this.store.revisions(id, MAX_REVISIONS_LISTED)]));
    if (!entry) {
      // No revision at all: no such entry, whichever revision was asked for.
      if (revision === undefined || revisions.length === 0) throw noEntry(id);
      const oldest = await this.stored(this.store.oldestRevision(id));
      if (oldest !== undefined && revision < oldest) {
        throw notFound(
          `Revision ${revision} of entry "${id}" is no longer kept: the registry keeps the last ${this.quota?.maxRevisions ?? 'few'} revisions of an entry (REGISTRY_MAX_REVISIONS); the oldest kept is ${oldest}.`,
        );
      }
      // Past its newest (a number mistyped, or a link made ahead): which one to ask for instead.
      throw notFound(`Entry "${id}" has no revision ${revision}: its current revision is ${revisions[0]!.revision}.`);
    }
    // An older revision is judged by the trust roots in force, as the current one is (its key
    // may have been revoked since); the current one's verdict is kept up to date in the store.
    const judged = revisions[0] !== undefined && entry.revision !== revisions[0].revision ? await this.trust.olderRevisionNow(entry) : entry;
    // What a history view needs to offer: which revisions can still be read.
    return { ...toEntryView(judged, true), revisions };
  }

  async list(request: ListRequest, caller: Caller): Promise<ListPage> {
    this.requireReader(caller, 'Listing entries');
    // "mine" is resolved from the token, so it needs one even when reads are public.
    const mine = request.filter?.mine ? this.requireActor(caller, 'Listing your own entries').principal : undefined;
    const filter = this.listFilter(request.filter ?? {}, mine);
    const health = request.filter?.health;
    // A token continues the order it was issued in; the default order's keep their old fingerprint.
    const orderBy = request.orderBy === 'updatedAt' ? request.orderBy : undefined;
    const fingerprint = PageTokens.fingerprint(['list', filter, ...(health ? [health] : []), ...(orderBy ? [orderBy] : [])]);
    const after = request.pageToken ? this.pageTokens.read(request.pageToken, fingerprint, 'list', 'filter') : undefined;
    const until = request.until ? this.untilPosition(request.until, fingerprint) : undefined;
    const pageSize = request.pageSize ?? DEFAULT_LIST_SIZE;
    // An owner's own listing ("mine") shows them: it is where the owner finds what to fix.
    const hideUnverifiedAgents = this.hideUnverifiedAgents && mine === undefined;
    const result = await this.stored(
      this.store.list({
        kind: filter.kind,
        owner: filter.owner,
        health,
        verified: filter.verified,
        ...(hideUnverifiedAgents ? { hideUnverifiedAgents: true } : {}),
        ...(orderBy ? { orderBy } : {}),
        limit: pageSize,
        after,
        ...(until === undefined ? {} : { until }),
      }),
    ).catch((error: unknown) => {
      // A signed token whose position the store never handed out: refused as any token not issued (it was an internal error).
      throw error instanceof InvalidCursorError ? pageTokenNotIssued() : error;
    });
    const page: ListPage = { entries: result.entries.map((e) => toEntryView(e, request.withDocuments === true)) };
    if (result.next) page.nextPageToken = this.pageTokens.issue(result.next, fingerprint, 'list');
    if (result.next && request.split !== undefined && orderBy === undefined) {
      const shown: ListingShown = { filter: { kind: filter.kind, owner: filter.owner, health, verified: filter.verified }, hideUnverifiedAgents };
      page.parts = this.listParts(result.next, until, pageSize, request.split, shown).map((position) => this.pageTokens.issue(position, fingerprint, 'list'));
    }
    return page;
  }

  /** The position a listing's `until` names; its refusal rooted at /until, where the request has it. */
  private untilPosition(token: string, fingerprint: string): string {
    try {
      return this.pageTokens.read(token, fingerprint, 'list', 'filter');
    } catch (err) {
      if (err instanceof RegistryError) throw new RegistryError(err.code, err.message, err.details?.map((d) => ({ ...d, path: '/until' })));
      throw err;
    }
  }

  /**
   * Where the listing from position `from` to `until` is cut into at most `split` ranges of
   * pageSize·split^k entries (ListPage.parts), found in the index's listing order (in memory:
   * no storage read). The index counts the entries the listing shows (`shown`: its filter, and
   * not the agents hidden from its caller, which made ranges short, or empty, while more
   * followed), so a range holds its share; entries it does not hold yet (while it loads, or a
   * replica's index behind its database) fall in the range they belong to, made larger.
   */
  private listParts(from: string, until: string | undefined, pageSize: number, split: number, shown: ListingShown): string[] {
    const steps = this.index.listingSteps(pageSize, decodeListPosition(from), until === undefined ? undefined : decodeListPosition(until), shown);
    if (split < 2) return [];
    let pages = 1;
    while (Math.ceil(steps.count / (pageSize * pages)) > split) pages *= split;
    const starts: string[] = [];
    for (let i = pages - 1; i < steps.places.length && (i + 1) * pageSize < steps.count; i += pages) starts.push(encodeListPosition(steps.places[i]!));
    return starts;
  }

  private listFilter(given: NonNullable<ListRequest['filter']>, mine: string | undefined): { kind?: EntryKind; owner?: string; verified?: boolean } {
    // The owner trimmed, as search trims it: a principal has no white space around it (REGISTRY_TOKENS' names are trimmed).
    const filter = given.owner === undefined ? given : { ...given, owner: given.owner.trim() };
    if (mine === undefined) return { kind: filter.kind, owner: filter.owner, verified: filter.verified };
    if (filter.owner !== undefined && filter.owner !== mine) {
      // The arguments' filter owner, which each door roots where its request has it (MCP's list_agents has it as /arguments/owner).
      throw badArguments('Give either "mine": true or an "owner", not both.', [
        { path: '/filter/owner', message: `"mine" is the caller's principal, which is not "${filter.owner}"`, hint: 'Leave one of them out.' },
      ]);
    }
    // Resolved to a plain owner filter, so its page tokens are those of {"owner": <principal>}.
    return { kind: filter.kind, owner: mine, verified: filter.verified };
  }

  async unregister(id: string, caller: Caller): Promise<{ id: string; kind: string; name: string; revision: number }> {
    const actor = this.requireActor(caller, 'Unregistering');
    const outcome = await this.feed.localWrite(async () => {
      const removed = await this.stored(this.store.remove(id, actor));
      // By the stored entry's id, not the one sent: ids are taken in any case (as the store takes
      // them), and the index and standing searches, which know the entry by its own, kept one
      // unregistered by its id in capitals, found by every search until the next start.
      if (removed.status === 'deleted') this.feed.publish({ id: removed.entry.id, op: 'delete', removed: removed.entry, origin: 'local' });
      return removed;
    });
    if (outcome.status === 'not-found') throw noEntry(id);
    if (outcome.status === 'forbidden') {
      throw new RegistryError('FORBIDDEN', `Entry "${id}" belongs to another principal; only its owner or an admin may unregister it.`);
    }
    const e: StoredEntry = outcome.entry;
    return { id: e.id, kind: e.kind, name: e.name, revision: e.revision };
  }

  async search(request: SearchRequest, caller: Caller): Promise<SearchPage> {
    this.requireReader(caller, 'Searching');
    this.requireIndex();
    const limit = request.limit ?? DEFAULT_SEARCH_LIMIT;
    const text = queryTextOf(request.query);
    const resultsPer = request.resultsPer ?? 'entry';
    const asked: SearchAsked = ['search', text, request.filter ?? {}, limit, resultsPer];
    // The index this search runs on, and its version: an answer kept with them is still right.
    const index = this.index;
    const version = this.hideUnhealthyAfterMs === undefined && this.searchCache.enabled ? index.resultsVersion : undefined;
    // A page token is part of the key: a kept answer's token was checked when it was answered.
    const key = version === undefined ? undefined : JSON.stringify([...asked, request.pageToken ?? '']);
    const kept = key === undefined ? undefined : this.searchCache.get(key, index, version!);
    if (kept) return kept;
    const fingerprint = PageTokens.fingerprint(asked);
    const cursor = request.pageToken ? this.searchCursor(this.searchPosition(request.pageToken, fingerprint, asked)) : { offset: 0, marks: [], next: [] };
    // A page is read with a little around it: after the first, to start after the last hit shown
    // wherever writes since have moved it; every page, to mark the hits after it (./search-cursor.ts).
    const window = windowOf(cursor, limit);
    const page = await index.search(this.indexQuery(text, request.filter, window.start, window.size, { resultsPer }));
    const { hits, offset, next } = pageAfter(cursor, page.hits, window.start, limit, resultsPer);
    const result: SearchPage = { results: hits, total: page.total };
    if (page.totalExact === false) result.totalExact = false;
    if (page.reason !== undefined) result.reason = page.reason;
    // More results: counted, or (a lower bound reached with a full page) maybe.
    const more = offset + hits.length < page.total || (page.totalExact === false && hits.length > 0 && hits.length === limit);
    if (more) result.nextPageToken = this.pageTokens.issue(encodeCursor(offset + hits.length, hits, next, resultsPer), fingerprint, 'search');
    return key === undefined ? result : this.searchCache.set(key, index, version!, result);
  }

  /**
   * The position a search's page token holds (PageTokens.read, `fingerprint` being `asked`'s). A
   * token refused as another query's that this search with another filter kind would take says so
   * in its finding (issuedForKind): the MCP search tools each add their kind to the filter, so one
   * tool's token sent to the other with the same query and limit was told to send the same query,
   * filter and limit, which it had, and the tool can now say whose the token is.
   */
  private searchPosition(token: string, fingerprint: string, asked: SearchAsked): string {
    try {
      return this.pageTokens.read(token, fingerprint, 'search', 'query, filter, limit and resultsPer');
    } catch (err) {
      const [operation, text, filter, ...rest] = asked;
      const otherQuery = err instanceof RegistryError && err.details?.some((d) => d.rule === PAGE_TOKEN_OTHER_QUERY);
      const kind = otherQuery ? ENTRY_KINDS.find((k) => k !== filter.kind && this.pageTokens.issuedFor(token, PageTokens.fingerprint([operation, text, { ...filter, kind: k }, ...rest]))) : undefined;
      if (kind === undefined) throw err;
      throw badArguments((err as RegistryError).message, [{ path: '/pageToken', message: issuedForKind(kind), rule: PAGE_TOKEN_OTHER_QUERY }]);
    }
  }

  /** The cursor a search's page token holds (signed, so only a position this registry wrote). */
  private searchCursor(position: string): SearchCursor {
    const cursor = decodeCursor(position);
    // Signed, yet no cursor (signed with the secret by someone else): refused as any token not issued, with its detail.
    if (!cursor) throw pageTokenNotIssued();
    return cursor;
  }

  /** The index query of a search: one place, so a standing search matches exactly as a search does. */
  private indexQuery(
    text: string,
    filter: SearchFilter | undefined,
    offset: number,
    limit: number,
    more: Pick<IndexQuery, 'resultsPer' | 'onlyId' | 'totalLimit'> = {},
  ): IndexQuery {
    const hideAfter = this.hideUnhealthyAfterMs;
    return {
      text,
      filter,
      offset,
      limit,
      ...(hideAfter !== undefined && filter?.health === undefined ? { hideUnhealthyBefore: Date.now() - hideAfter } : {}),
      ...(this.hideUnverifiedAgents ? { hideUnverifiedAgents: true } : {}),
      ...more,
    };
  }

  // ---- standing searches (src/subscriptions): the same query rules, asked per entry ----

  /** Who may keep a standing search: a caller with a token who may also search. */
  watcher(caller: Caller): Actor {
    const actor = this.requireActor(caller, 'Watching the catalog');
    this.requireReader(caller, 'Watching the catalog');
    return actor;
  }

  /** The hit entry `id` is in the results of `request` now, or undefined when it is not. */
  matchOne(request: WatchRequest, id: string): SearchHit | undefined {
    this.requireIndex();
    return this.index.searchNow(this.indexQuery(queryTextOf(request.query), request.filter, 0, 1, { onlyId: id })).hits[0];
  }

  /**
   * The current matches of `request`, best first, from `offset`: up to `limit` hits, and how many
   * there are (exact up to `totalLimit`, by default the index's REGISTRY_SEARCH_TOTAL_LIMIT).
   */
  matchPage(request: WatchRequest, offset: number, limit: number, totalLimit?: number): { results: SearchHit[]; total: number } {
    this.requireIndex();
    const page = this.index.searchNow(this.indexQuery(queryTextOf(request.query), request.filter, offset, limit, totalLimit === undefined ? {} : { totalLimit }));
    return { results: page.hits, total: page.total };
  }

  get indexSize(): number {
    return this.index.size;
  }
}
