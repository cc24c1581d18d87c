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
import { RegistryError, notFound } from '../contract/errors.js';
import type { Actor, Caller } from '../contract/caller.js';
import type { Subject } from '../contract/subject.js';
import type { SearchIndex } from '../search/types.js';
import type { RegistryStore, StoredEntry } from '../storage/types.js';
import type { DocumentValidator, Verdict } from '../validation/index.js';
import type { ChangeFeed } from './change-feed.js';
import { describeAgentCard, describeMcpServer } from './describe.js';
import { mcpDocumentText, toEntryView, toIndexedEntry } from './entries.js';
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
}

export class RegistryService {
  private readonly store: RegistryStore;
  private readonly index: SearchIndex;
  private readonly validator: DocumentValidator;
  private readonly pageTokens: PageTokens;
  private readonly feed: ChangeFeed;
  private readonly publicRead: boolean;

  constructor(deps: RegistryServiceDeps) {
    this.store = deps.store;
    this.index = deps.index;
    this.validator = deps.validator;
    this.pageTokens = deps.pageTokens;
    this.feed = deps.feed;
    this.publicRead = deps.publicRead;
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
   * Registers or updates a document. The pipeline: authorise → (resolve a document given by
   * reference) → validate → (verify signatures) → store → publish → acknowledge.
   */
  async register(subject: Subject, caller: Caller): Promise<RegistrationResult> {
    const actor = this.requireActor(caller, 'Registering');
    const verdict = this.check(subject);
    const documentText = subject.type === 'agent-card' ? subject.documentText : mcpDocumentText(subject.server, subject.toolspecText);
    const description =
      subject.type === 'agent-card'
        ? describeAgentCard(subject.card, verdict.generation ?? '1.0')
        : describeMcpServer({ mcpServer: subject.server, toolspec: subject.toolspec } as McpServerDocument);
    const outcome = await this.store.upsert(
      {
        kind: description.kind,
        identityUrl: description.identityUrl,
        name: description.name,
        description: description.description,
        protocolVersion: description.protocolVersion,
        interfaces: description.interfaces,
        documentText,
        contentHash: createHash('sha256').update(documentText).digest('hex'),
      },
      actor,
    );
    if (outcome.status === 'forbidden') {
      throw new RegistryError(
        'FORBIDDEN',
        `${description.identityUrl} is already registered as entry ${outcome.existing.id} by another principal; only its owner or an admin may update it.`,
      );
    }
    const entry = outcome.entry;
    if (outcome.status !== 'unchanged') this.feed.publish({ id: entry.id, op: 'upsert', entry, description, origin: 'local' });
    const result: RegistrationResult = {
      id: entry.id,
      kind: entry.kind,
      revision: entry.revision,
      created: outcome.status === 'created',
      changed: outcome.status !== 'unchanged',
      indexed: entry.kind === 'agent' ? { skills: description.skills.length } : { tools: description.tools.length },
      warnings: verdict.warnings,
    };
    if (entry.protocolVersion) result.protocolVersion = entry.protocolVersion;
    return result;
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
    const fingerprint = PageTokens.fingerprint(['list', filter]);
    const after = request.pageToken ? this.pageTokens.read(request.pageToken, fingerprint) : undefined;
    const result = await this.store.list({
      kind: filter.kind,
      owner: filter.owner,
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
    const resultsPer = request.resultsPer ?? 'entry';
    const fingerprint = PageTokens.fingerprint(['search', text, request.filter ?? {}, limit, resultsPer]);
    const offset = request.pageToken ? Number(this.pageTokens.read(request.pageToken, fingerprint)) : 0;
    const page = await this.index.search({ text, filter: request.filter, offset, limit, resultsPer });
    const result: SearchPage = { results: page.hits, total: page.total };
    if (offset + page.hits.length < page.total) result.nextPageToken = this.pageTokens.issue(String(offset + page.hits.length), fingerprint);
    return result;
  }

  get indexSize(): number {
    return this.index.size;
  }
}
