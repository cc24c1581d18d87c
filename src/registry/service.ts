/**
 * The registry's business logic, independent of any door (A2A, gRPC, MCP, web): validate,
 * register, read, list, unregister and search. Every method receives the Caller as the door
 * authenticated it and decides here what that caller may do, so all doors share one set of
 * rules. It owns the rule that storage is the source of truth: a write is committed, then
 * published on the change feed (which the search index and every other derived view follow),
 * then acknowledged.
 */
import { createHash } from 'node:crypto';
import type {
  EntryKind,
  EntryView,
  ListPage,
  ListRequest,
  McpServerDocument,
  RegistrationResult,
  SearchPage,
  SearchRequest,
  ValidationResultBody,
} from '../contract/types.js';
import { RegistryError, badRequest, notFound } from '../contract/errors.js';
import type { Actor, Caller } from '../contract/caller.js';
import type { EntryDescription } from '../contract/description.js';
import type { DocumentReference, EntryHealth, EntrySource } from '../contract/freshness.js';
import type { Subject } from '../contract/subject.js';
import { sameJson } from '../lib/canonical-json.js';
import type { SearchIndex } from '../search/types.js';
import type { EntryWrite, FreshnessWrite, RegistryStore, StoredEntry } from '../storage/types.js';
import type { DocumentValidator, Verdict } from '../validation/index.js';
import type { ChangeFeed, CommittedChange } from './change-feed.js';
import { describeAgentCard, describeMcpServer } from './describe.js';
import { SourceFailure, type DocumentSources } from './document-sources.js';
import { describeStored, mcpDocumentText, toEntryView, toIndexedEntry } from './entries.js';
import { nextHealth, type CheckFinding } from './health.js';
import { PageTokens } from './page-token.js';

const DEFAULT_SEARCH_LIMIT = 20;
const DEFAULT_LIST_SIZE = 50;

export interface RegistryServiceDeps {
  store: RegistryStore;
  index: SearchIndex;
  validator: DocumentValidator;
  pageTokens: PageTokens;
  feed: ChangeFeed;
  /** Reads (search, get, list) are open to anonymous callers (REGISTRY_PUBLIC_READ). */
  publicRead: boolean;
  /** Documents the registry fetches itself (register by URL, fetchTools, refresh, probe). */
  sources?: DocumentSources;
  freshness?: FreshnessSettings;
}

/** What a register may carry: a document, or a reference the registry fetches the document from. */
export type RegisterInput = Subject | DocumentReference;

export interface FreshnessSettings {
  /** Entries with a source (and probed agents) are checked this often; 0: never by themselves. */
  refreshIntervalMs: number;
  /** Check agents registered inline too, at the well-known card of their primary interface (REGISTRY_PROBE). */
  probe: boolean;
  /** Leave entries unhealthy for longer than this out of default search results. */
  hideUnhealthyAfterMs?: number;
}

const NO_FRESHNESS: FreshnessSettings = { refreshIntervalMs: 0, probe: false };

const isReference = (input: RegisterInput): input is DocumentReference => input.type === 'agent-card-url' || input.type === 'mcp-tools';

export class RegistryService {
  private readonly store: RegistryStore;
  private readonly index: SearchIndex;
  private readonly validator: DocumentValidator;
  private readonly pageTokens: PageTokens;
  private readonly feed: ChangeFeed;
  private readonly publicRead: boolean;
  private readonly sources?: DocumentSources;
  private readonly freshness: FreshnessSettings;

  constructor(deps: RegistryServiceDeps) {
    this.store = deps.store;
    this.index = deps.index;
    this.validator = deps.validator;
    this.pageTokens = deps.pageTokens;
    this.feed = deps.feed;
    this.publicRead = deps.publicRead;
    this.sources = deps.sources;
    this.freshness = deps.freshness ?? NO_FRESHNESS;
    // The index is one of the feed's followers: every committed change, local or from another
    // replica, reaches it the same way.
    this.feed.subscribe((change) => {
      if (change.op === 'delete' || !change.entry) this.index.remove(change.id);
      else this.index.upsert(toIndexedEntry(change.entry, change.description));
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

  // ---- derived views ----

  /** Loads every stored entry into the index (start-up). Returns how many were indexed. */
  async rebuildIndex(): Promise<number> {
    let n = 0;
    for await (const entry of this.store.scan()) {
      this.index.upsert(toIndexedEntry(entry));
      n++;
    }
    return n;
  }

  /**
   * Publishes a change another replica committed (seen in the store's change log): re-reads
   * the entry, so applying a change twice is harmless.
   */
  async applyReplicaChange(id: string, seq?: number): Promise<void> {
    const entry = await this.store.get(id);
    this.feed.publish(entry ? { id, op: 'upsert', entry, seq, origin: 'replica' } : { id, op: 'delete', seq, origin: 'replica' });
  }

  // ---- operations ----

  /** The verdict on a valid document; an invalid one is declined with its errors, as register would. */
  private check(subject: Subject): Verdict {
    const verdict =
      subject.type === 'agent-card'
        ? this.validator.validateAgentCard(subject.card, subject.sizeBytes)
        : subject.server === undefined
          ? this.validator.validateToolspec(subject.toolspec, subject.sizeBytes)
          : this.validator.validateMcpServer(subject.server, subject.toolspec, subject.sizeBytes);
    if (!verdict.valid) {
      throw new RegistryError(verdict.errorCode ?? 'VALIDATION_FAILED', verdict.message ?? 'The document is not valid.', verdict.errors);
    }
    return verdict;
  }

  /** A dry run of register: the same checks and the same answer when invalid; nothing stored. Open to anyone. */
  async validate(subject: Subject, _caller: Caller): Promise<ValidationResultBody> {
    const v = this.check(subject);
    const body: ValidationResultBody = { valid: true, kind: v.kind, sizeBytes: v.sizeBytes, errors: [], warnings: v.warnings };
    if (v.generation) body.protocolVersion = v.generation;
    return body;
  }

  /**
   * Registers or updates a document. The pipeline: authorise → resolve (fetch a document given
   * by reference: a card URL, an MCP server's tools) → validate → (verify signatures) → store →
   * publish → acknowledge. A fetched document gets exactly the checks of an inline one.
   */
  async register(input: RegisterInput, caller: Caller): Promise<RegistrationResult> {
    const actor = this.requireActor(caller, 'Registering');
    const { subject, source } = await this.resolve(input);
    const verdict = this.check(subject);
    const { write, description } = this.entryWrite(subject, verdict);
    const now = new Date().toISOString();
    // By reference: the entry records its source and is refreshed from it. Inline: the
    // owner manages the document, any source is dropped; with probing on, a probe is due now.
    write.freshness = source
      ? { source, health: nextHealth(undefined, { status: 'ok' }, source.fetchedAt), drift: false, nextCheckAt: this.nextCheckAt() }
      : this.freshness.probe && subject.type === 'agent-card'
        ? { nextCheckAt: now }
        : null;
    const outcome = await this.store.upsert(write, actor);
    if (outcome.status === 'forbidden') {
      throw new RegistryError(
        'FORBIDDEN',
        `${description.identityUrl} is already registered as entry ${outcome.existing.id} by another principal; only its owner or an admin may update it.`,
      );
    }
    const entry = outcome.entry;
    if (outcome.status !== 'unchanged' || outcome.freshened) this.publish(entry, 'register', outcome.status !== 'unchanged' ? description : undefined);
    return this.registrationResult(entry, description, {
      created: outcome.status === 'created',
      changed: outcome.status !== 'unchanged',
      warnings: verdict.warnings,
    });
  }

  /** The resolve step: a document as received, or fetched from where the reference points. */
  private async resolve(input: RegisterInput): Promise<{ subject: Subject; source?: EntrySource }> {
    if (!isReference(input)) return { subject: input };
    if (!this.sources) {
      throw badRequest('This registry does not fetch documents: send the agent card or the toolspec itself.');
    }
    return this.sources.resolve(input);
  }

  /** What storage writes for a valid document, and its description. */
  private entryWrite(subject: Subject, verdict: Verdict): { write: EntryWrite; description: EntryDescription } {
    const documentText = subject.type === 'agent-card' ? subject.documentText : mcpDocumentText(subject.server, subject.toolspecText);
    const description =
      subject.type === 'agent-card'
        ? describeAgentCard(subject.card, verdict.generation ?? '1.0')
        : describeMcpServer({ mcpServer: subject.server, toolspec: subject.toolspec } as McpServerDocument);
    const write: EntryWrite = {
      kind: description.kind,
      identityUrl: description.identityUrl,
      name: description.name,
      description: description.description,
      protocolVersion: description.protocolVersion,
      interfaces: description.interfaces,
      documentText,
      contentHash: createHash('sha256').update(documentText).digest('hex'),
    };
    return { write, description };
  }

  private registrationResult(
    entry: StoredEntry,
    description: EntryDescription,
    outcome: { created: boolean; changed: boolean; warnings: RegistrationResult['warnings'] },
  ): RegistrationResult {
    const result: RegistrationResult = {
      id: entry.id,
      kind: entry.kind,
      revision: entry.revision,
      created: outcome.created,
      changed: outcome.changed,
      indexed: entry.kind === 'agent' ? { skills: description.skills.length } : { tools: description.tools.length },
      warnings: outcome.warnings,
    };
    if (entry.protocolVersion) result.protocolVersion = entry.protocolVersion;
    if (entry.source) result.source = entry.source;
    if (entry.health) result.health = entry.health;
    if (entry.revisionOrigin) result.revisionOrigin = entry.revisionOrigin;
    return result;
  }

  private publish(entry: StoredEntry, cause: NonNullable<CommittedChange['cause']>, description?: EntryDescription): void {
    this.feed.publish({ id: entry.id, op: 'upsert', entry, ...(description ? { description } : {}), origin: 'local', cause });
  }

  // ---- freshness: refresh from the source, probe, health ----

  private nextCheckAt(from = Date.now()): string | undefined {
    return this.freshness.refreshIntervalMs > 0 ? new Date(from + this.freshness.refreshIntervalMs).toISOString() : undefined;
  }

  /**
   * `refresh`: fetches an entry's document from its source now (its owner or an admin), and
   * answers like register. A failure is recorded in the entry's health and declined.
   */
  async refresh(id: string, caller: Caller): Promise<RegistrationResult> {
    const actor = this.requireActor(caller, 'Refreshing');
    const entry = await this.store.get(id);
    if (!entry) throw notFound(`No entry has id "${id}".`);
    if (entry.owner !== actor.principal && !actor.isAdmin) {
      throw new RegistryError('FORBIDDEN', `Entry "${id}" belongs to another principal; only its owner or an admin may refresh it.`);
    }
    if (!entry.source) {
      throw badRequest(
        `Entry "${id}" was registered with its document inline, so it has no source to refresh. Register it by URL ({"register": {"url": "https://..."}}) or, for an MCP server, with "fetchTools": true, and the registry keeps it fresh.`,
      );
    }
    return this.refreshFromSource(entry as StoredEntry & { source: EntrySource });
  }

  /**
   * The background check of one due entry (the refresh loop calls it): refresh an entry with a
   * source, probe an agent registered inline. Never throws for what the remote side did;
   * resolves once the outcome is stored and published.
   */
  async checkDue(id: string, signal?: AbortSignal): Promise<'refreshed' | 'probed' | 'skipped'> {
    const entry = await this.store.get(id);
    if (!entry) return 'skipped';
    if (entry.source) {
      await this.refreshFromSource(entry as StoredEntry & { source: EntrySource }, signal).catch((error: unknown) => {
        if (!(error instanceof RegistryError)) throw error;
      });
      return 'refreshed';
    }
    if (this.freshness.probe && entry.kind === 'agent') {
      await this.probe(entry, signal);
      return 'probed';
    }
    // Neither (probing was turned off): stop scheduling it, keep what it showed.
    await this.store.recordCheck(entry.id, { health: entry.health, drift: entry.drift });
    return 'skipped';
  }

  private async refreshFromSource(entry: StoredEntry & { source: EntrySource }, signal?: AbortSignal): Promise<RegistrationResult> {
    if (!this.sources) throw badRequest('This registry does not fetch documents.');
    const stored = describeStored(entry);
    try {
      const fetched = await this.sources.refetch(entry, signal);
      const source = fetched.source;
      if (fetched.notModified) return this.recordRefresh(entry, source, { status: 'ok' }, false, stored);
      const verdict = this.check(fetched.subject);
      const { write, description } = this.entryWrite(fetched.subject, verdict);
      if (sameJson(JSON.parse(write.documentText), JSON.parse(entry.documentText))) {
        // The same document, however it is formatted: no new revision.
        return this.recordRefresh(entry, source, { status: 'ok' }, false, stored, verdict.warnings);
      }
      write.freshness = this.freshnessAfter(entry, source, { status: 'ok' }, false);
      const outcome = await this.store.revise(entry.id, write, entry.revision);
      switch (outcome.status) {
        case 'not-found':
          throw notFound(`No entry has id "${entry.id}".`);
        case 'stale':
          // Someone wrote a revision while this one was fetched: theirs stands.
          return this.registrationResult(outcome.entry, describeStored(outcome.entry), { created: false, changed: false, warnings: [] });
        case 'conflict':
          throw new SourceFailure(
            'FORBIDDEN',
            `The card at ${source.url} now names ${write.identityUrl} as its primary interface, which is registered as entry ${outcome.existing.id}; the last good revision is kept.`,
            'invalid',
            'identity-conflict',
          );
        case 'unchanged':
        case 'updated': {
          const changed = outcome.status === 'updated';
          this.publish(outcome.entry, changed ? 'refresh' : 'health', changed ? description : undefined);
          return this.registrationResult(outcome.entry, description, { created: false, changed, warnings: verdict.warnings });
        }
      }
    } catch (error) {
      // Not the source's doing (a bug, or the registry shutting down): nothing to record.
      if (!(error instanceof RegistryError) || signal?.aborted) throw error;
      // Keep the last good revision and the validators it came with (the failed document's
      // ETag would make the next conditional request answer 304 for it); record why this failed.
      const status = error instanceof SourceFailure ? error.health : 'invalid';
      const reason = error instanceof SourceFailure ? error.reason : error.code;
      await this.recordCheck(entry, this.freshnessAfter(entry, entry.source, { status, reason, message: error.message }, status === 'invalid' ? true : entry.drift));
      throw error;
    }
  }

  /** A refresh that found the stored document current: health ok, source validators updated. */
  private async recordRefresh(
    entry: StoredEntry,
    source: EntrySource,
    finding: CheckFinding,
    drift: boolean,
    description: EntryDescription,
    warnings: RegistrationResult['warnings'] = [],
  ): Promise<RegistrationResult> {
    const updated = (await this.recordCheck(entry, this.freshnessAfter(entry, source, finding, drift))) ?? entry;
    return this.registrationResult(updated, description, { created: false, changed: false, warnings });
  }

  private freshnessAfter(entry: StoredEntry, source: EntrySource | undefined, finding: CheckFinding, drift: boolean | undefined): FreshnessWrite {
    const write: FreshnessWrite = { health: nextHealth(entry.health, finding, new Date().toISOString()) };
    if (source) write.source = source;
    if (drift !== undefined) write.drift = drift;
    const next = this.nextCheckAt();
    if (next) write.nextCheckAt = next;
    return write;
  }

  /** Stores a check's outcome and publishes it (to every replica when what readers see changed). */
  private async recordCheck(entry: StoredEntry, freshness: FreshnessWrite): Promise<StoredEntry | undefined> {
    const outcome = await this.store.recordCheck(entry.id, freshness);
    if (!outcome) return undefined;
    // Both kinds reach this replica's index (fresh checkedAt on hits); only 'logged' ones were
    // written to the change log for other replicas.
    this.publish(outcome.entry, 'health');
    return outcome.entry;
  }

  /**
   * REGISTRY_PROBE: fetches the well-known card at the origin of an inline-registered agent's
   * primary interface. ok when it is a valid card (drift when it differs from the registered
   * revision), invalid when it is not, unreachable when it cannot be fetched.
   */
  private async probe(entry: StoredEntry, signal?: AbortSignal): Promise<void> {
    if (!this.sources) return;
    let finding: CheckFinding;
    let drift = entry.drift;
    try {
      const live = await this.sources.probe(entry, signal);
      drift = !sameJson(live.value, JSON.parse(entry.documentText));
      const verdict = this.validator.validateAgentCard(live.value, live.sizeBytes);
      finding = verdict.valid
        ? { status: 'ok' }
        : { status: 'invalid', reason: verdict.errorCode ?? 'VALIDATION_FAILED', message: `The card at ${live.url} is not valid: ${verdict.message ?? 'see the validate operation'}` };
    } catch (error) {
      if (!(error instanceof SourceFailure) || signal?.aborted) throw error;
      finding = { status: error.health, reason: error.reason, message: error.message };
    }
    await this.recordCheck(entry, this.freshnessAfter(entry, undefined, finding, drift));
  }

  async get(id: string, revision: number | undefined, caller: Caller): Promise<EntryView> {
    this.requireReader(caller, 'Reading an entry');
    const entry = await this.store.get(id, revision);
    if (!entry) {
      throw notFound(
        revision === undefined ? `No entry has id "${id}".` : `Entry "${id}" has no revision ${revision}.`,
      );
    }
    return toEntryView(entry, true);
  }

  async list(request: ListRequest, caller: Caller): Promise<ListPage> {
    this.requireReader(caller, 'Listing entries');
    // "mine" is resolved from the token, so it needs one even when reads are public.
    const mine = request.filter?.mine ? this.requireActor(caller, 'Listing your own entries').principal : undefined;
    const filter = this.listFilter(request.filter ?? {}, mine);
    const fingerprint = PageTokens.fingerprint(['list', filter, request.filter?.health ?? null]);
    const after = request.pageToken ? this.pageTokens.read(request.pageToken, fingerprint) : undefined;
    const result = await this.store.list({
      kind: filter.kind,
      owner: filter.owner,
      health: request.filter?.health,
      limit: request.pageSize ?? DEFAULT_LIST_SIZE,
      after,
    });
    const page: ListPage = { entries: result.entries.map((e) => toEntryView(e, request.withDocuments === true)) };
    if (result.next) page.nextPageToken = this.pageTokens.issue(result.next, fingerprint);
    return page;
  }

  private listFilter(filter: NonNullable<ListRequest['filter']>, mine: string | undefined): { kind?: EntryKind; owner?: string } {
    if (mine === undefined) return { kind: filter.kind, owner: filter.owner };
    if (filter.owner !== undefined && filter.owner !== mine) {
      throw new RegistryError('BAD_REQUEST', 'Give either "mine": true or an "owner", not both.', [
        { path: '/list/filter/owner', message: `"mine" is the caller's principal, which is not "${filter.owner}"`, hint: 'Leave one of them out.' },
      ]);
    }
    // Resolved to a plain owner filter, so its page tokens are those of {"owner": <principal>}.
    return { kind: filter.kind, owner: mine };
  }

  async unregister(id: string, caller: Caller): Promise<{ id: string; kind: string; name: string; revision: number }> {
    const actor = this.requireActor(caller, 'Unregistering');
    const outcome = await this.store.remove(id, actor);
    if (outcome.status === 'not-found') throw notFound(`No entry has id "${id}".`);
    if (outcome.status === 'forbidden') {
      throw new RegistryError('FORBIDDEN', `Entry "${id}" belongs to another principal; only its owner or an admin may unregister it.`);
    }
    const e: StoredEntry = outcome.entry;
    this.feed.publish({ id, op: 'delete', removed: e, origin: 'local' });
    return { id: e.id, kind: e.kind, name: e.name, revision: e.revision };
  }

  async search(request: SearchRequest, caller: Caller): Promise<SearchPage> {
    this.requireReader(caller, 'Searching');
    const limit = request.limit ?? DEFAULT_SEARCH_LIMIT;
    const text = (request.query ?? '').trim();
    const fingerprint = PageTokens.fingerprint(['search', text, request.filter ?? {}, limit]);
    const offset = request.pageToken ? Number(this.pageTokens.read(request.pageToken, fingerprint)) : 0;
    const hideAfter = this.freshness.hideUnhealthyAfterMs;
    const page = this.index.search({
      text,
      filter: request.filter,
      offset,
      limit,
      ...(hideAfter !== undefined && request.filter?.health === undefined ? { hideUnhealthyBefore: Date.now() - hideAfter } : {}),
    });
    const result: SearchPage = { results: page.hits, total: page.total };
    if (offset + page.hits.length < page.total) result.nextPageToken = this.pageTokens.issue(String(offset + page.hits.length), fingerprint);
    return result;
  }

  get indexSize(): number {
    return this.index.size;
  }
}
