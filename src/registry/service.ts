/**
 * The registry's business logic, independent of A2A framing: validate, register, read, list,
 * unregister and search. It owns the rule that storage is the source of truth and the search
 * index follows every committed change before the change is acknowledged.
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
import type { Subject } from '../operations/operation.js';
import type { SearchIndex } from '../search/types.js';
import type { Actor, RegistryStore, StoredEntry } from '../storage/types.js';
import type { DocumentValidator, Verdict } from '../validation/index.js';
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
}

export class RegistryService {
  private readonly store: RegistryStore;
  private readonly index: SearchIndex;
  private readonly validator: DocumentValidator;
  private readonly pageTokens: PageTokens;

  constructor(deps: RegistryServiceDeps) {
    this.store = deps.store;
    this.index = deps.index;
    this.validator = deps.validator;
    this.pageTokens = deps.pageTokens;
  }

  /** Loads every stored entry into the index (start-up). Returns how many were indexed. */
  async rebuildIndex(): Promise<number> {
    let n = 0;
    for await (const entry of this.store.scan()) {
      this.index.upsert(toIndexedEntry(entry));
      n++;
    }
    return n;
  }

  /** Brings one entry of the index in step with storage (after a change made elsewhere). */
  async refreshIndexed(id: string): Promise<void> {
    const entry = await this.store.get(id);
    if (entry) this.index.upsert(toIndexedEntry(entry));
    else this.index.remove(id);
  }

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

  /** A dry run of register: the same checks and the same answer when invalid; nothing stored. */
  validate(subject: Subject): ValidationResultBody {
    const v = this.check(subject);
    const body: ValidationResultBody = { valid: true, kind: v.kind, sizeBytes: v.sizeBytes, errors: [], warnings: v.warnings };
    if (v.generation) body.protocolVersion = v.generation;
    return body;
  }

  async register(subject: Subject, actor: Actor): Promise<RegistrationResult> {
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
    if (outcome.status !== 'unchanged') this.index.upsert({ id: entry.id, owner: entry.owner, updatedAt: entry.updatedAt, description });
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

  async get(id: string, revision?: number): Promise<EntryView> {
    const entry = await this.store.get(id, revision);
    if (!entry) {
      throw notFound(
        revision === undefined ? `No entry has id "${id}".` : `Entry "${id}" has no revision ${revision}.`,
      );
    }
    return toEntryView(entry, true);
  }

  /** `callerPrincipal` resolves `filter.mine`; the handler supplies it only for authenticated callers. */
  async list(request: ListRequest, callerPrincipal?: string): Promise<ListPage> {
    const filter = this.listFilter(request.filter ?? {}, callerPrincipal);
    const fingerprint = PageTokens.fingerprint(['list', filter]);
    const after = request.pageToken ? this.pageTokens.read(request.pageToken, fingerprint) : undefined;
    const result = await this.store.list({
      kind: filter.kind,
      owner: filter.owner,
      limit: request.pageSize ?? DEFAULT_LIST_SIZE,
      after,
    });
    const page: ListPage = { entries: result.entries.map((e) => toEntryView(e, false)) };
    if (result.next) page.nextPageToken = this.pageTokens.issue(result.next, fingerprint);
    return page;
  }

  private listFilter(filter: NonNullable<ListRequest['filter']>, callerPrincipal: string | undefined): { kind?: EntryKind; owner?: string } {
    if (!filter.mine) return { kind: filter.kind, owner: filter.owner };
    if (callerPrincipal === undefined) throw new RegistryError('UNAUTHENTICATED', 'Listing your own entries ("mine": true) needs a registry token.');
    if (filter.owner !== undefined && filter.owner !== callerPrincipal) {
      throw new RegistryError('BAD_REQUEST', 'Give either "mine": true or an "owner", not both.', [
        { path: '/list/filter/owner', message: `"mine" is the caller's principal, which is not "${filter.owner}"`, hint: 'Leave one of them out.' },
      ]);
    }
    // Resolved to a plain owner filter, so its page tokens are those of {"owner": <principal>}.
    return { kind: filter.kind, owner: callerPrincipal };
  }

  async unregister(id: string, actor: Actor): Promise<{ id: string; kind: string; name: string; revision: number }> {
    const outcome = await this.store.remove(id, actor);
    if (outcome.status === 'not-found') throw notFound(`No entry has id "${id}".`);
    if (outcome.status === 'forbidden') {
      throw new RegistryError('FORBIDDEN', `Entry "${id}" belongs to another principal; only its owner or an admin may unregister it.`);
    }
    this.index.remove(id);
    const e: StoredEntry = outcome.entry;
    return { id: e.id, kind: e.kind, name: e.name, revision: e.revision };
  }

  search(request: SearchRequest): SearchPage {
    const limit = request.limit ?? DEFAULT_SEARCH_LIMIT;
    const text = (request.query ?? '').trim();
    const fingerprint = PageTokens.fingerprint(['search', text, request.filter ?? {}, limit]);
    const offset = request.pageToken ? Number(this.pageTokens.read(request.pageToken, fingerprint)) : 0;
    const page = this.index.search({ text, filter: request.filter, offset, limit });
    const result: SearchPage = { results: page.hits, total: page.total };
    if (offset + page.hits.length < page.total) result.nextPageToken = this.pageTokens.issue(String(offset + page.hits.length), fingerprint);
    return result;
  }

  get indexSize(): number {
    return this.index.size;
  }
}
