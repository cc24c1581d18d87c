/**
 * One handler per operation of the contract: the service call (which authorises), then the
 * answer as the contract shapes it (a data part for programs, a text part for people).
 */
import type { Caller } from '../contract/caller.js';
import { badRequest } from '../contract/errors.js';
import type { RegistrationResult, SearchHit, SearchPage, WatchRequest } from '../contract/types.js';
import type { RegistryService } from '../registry/service.js';
import type { TaskRow, TaskScope } from '../storage/types.js';
import type { WatchHub } from '../subscriptions/watch-hub.js';
import { shareJsonText } from '../lib/shared-json.js';
import type { Admission, BudgetedAction } from './admission.js';
import { isStreamed, isWatch, type Answer, type AnswerChunk, type OperationResult, type WatchAnswer } from './answer.js';
import type { Operation } from './operation.js';
import { describeHits, summarizeEntries, summarizeEntry, summarizeRegistration, summarizeValidation } from './summaries.js';

export interface HandlerOptions {
  /** Hits per streamed chunk of a search-results artifact. */
  searchChunkSize: number;
}

/** `totalExact: false` when the page's total is a lower bound (absent when exact). */
const exactness = (page: SearchPage): { totalExact?: false } => (page.totalExact === false ? { totalExact: false } : {});

async function* searchChunks(page: SearchPage, size: number): AsyncIterable<AnswerChunk> {
  if (page.results.length === 0) {
    const reason = page.reason === undefined ? {} : { reason: page.reason };
    yield { data: { results: [], total: page.total, ...exactness(page), ...reason }, text: describeHits([], page.total, 0, page.totalExact !== false, page.reason) };
    return;
  }
  for (let start = 0; start < page.results.length; start += size) {
    const hits: SearchHit[] = page.results.slice(start, start + size);
    const last = start + size >= page.results.length;
    const data: Record<string, unknown> = { results: hits };
    if (last) {
      data.total = page.total;
      Object.assign(data, exactness(page));
      if (page.nextPageToken) data.nextPageToken = page.nextPageToken;
    }
    yield { data, text: describeHits(hits, last ? page.total : undefined, start, page.totalExact !== false) };
  }
}

export interface RunContext {
  streaming: boolean;
  /** The task the operation runs in (a watch is known by its task: CancelTask, SubscribeToTask). */
  taskId?: string;
  contextId?: string;
  /** The request gave a push notification config (a watch may then be started without a stream). */
  pushConfigured?: boolean;
  /** Whose task it is (tenant, owner): a watch keeps it, to update its task when it ends on its own. */
  taskScope?: TaskScope;
  /**
   * The durable task row that acknowledges a write, from its answer: written in the write's own
   * transaction where the store can (a registration), so both are durable with one commit.
   */
  acknowledge?: (answer: Answer) => TaskRow | undefined;
}

/**
 * Runs one operation for one caller: admission (rate limits), then the service (which
 * authorises), then the answer as the contract shapes it. Every door calls this, so every door
 * has the same limits, rules and answers.
 */
export class OperationRunner {
  constructor(
    private readonly service: RegistryService,
    private readonly options: HandlerOptions,
    /** Rate limits, asked once the operation is known. */
    private readonly admission?: Admission,
    /** Standing searches; without them a watch is refused. */
    readonly watches?: WatchHub,
  ) {}

  /**
   * `taskId`: the task the operation runs in (a watch is known by its task, so CancelTask and
   * SubscribeToTask find it).
   */
  async run(operation: Operation, caller: Caller, context: RunContext): Promise<OperationResult> {
    await this.admit(operation.op, caller);
    if (operation.op === 'watch') return this.watch(operation.request, caller, context);
    return handle(operation, caller, this.service, { ...this.options, streaming: context.streaming, acknowledge: context.acknowledge });
  }

  private async watch(request: WatchRequest, caller: Caller, context: RunContext): Promise<WatchAnswer> {
    if (!this.watches || context.taskId === undefined || context.taskScope === undefined) throw badRequest('This door does not keep standing searches; send the watch over A2A (SendStreamingMessage).');
    // The token first: an anonymous caller is told what it lacks before how to ask.
    this.service.watcher(caller);
    if (!context.streaming && !context.pushConfigured) {
      throw badRequest(
        'A watch streams its events: send {"watch": {...}} with SendStreamingMessage (message/stream) and resume it with SubscribeToTask, or give a push notification config (configuration.taskPushNotificationConfig) to have them POSTed to a webhook.',
      );
    }
    const watch = await this.watches.start(context.taskId, request, caller, { contextId: context.contextId ?? '', scope: context.taskScope });
    return { artifactName: 'watch-results', watch };
  }

  /**
   * The rate limits of `action` alone (run() starts with them), for an answer a door gives
   * without running the operation (catalog/catalog-door.ts): a catalog page kept from an earlier
   * request's `list`, an ARD search or listing whose filter can match nothing. Each counts
   * against the caller's budget as the operation it stands for, as a search the service answers
   * from its cache does. Throws RATE_LIMITED as run() does.
   */
  async admit(action: BudgetedAction, caller: Caller): Promise<void> {
    await this.admission?.admit(action, caller);
  }

  /** run() for doors that answer in one piece (MCP tools, catalogs): never a stream. */
  async answer(operation: Operation, caller: Caller): Promise<Answer> {
    const result = await this.run(operation, caller, { streaming: false });
    if (isStreamed(result) || isWatch(result)) throw new Error(`operation ${operation.op} streamed although streaming was off`);
    return result;
  }
}

/** The text of kept (frozen) search answers, made once per answer. */
const keptTexts = new WeakMap<SearchPage, string>();
function describeKept(page: SearchPage): string {
  let text = keptTexts.get(page);
  if (text === undefined) {
    keptTexts.set(page, (text = describeHits(page.results, page.total, 0, page.totalExact !== false, page.reason)));
    shareJsonText(page, text);
  }
  return text;
}

const registrationAnswer = (result: RegistrationResult): Answer => ({ artifactName: 'registration', data: { ...result }, text: summarizeRegistration(result) });

async function handle(
  operation: Operation,
  caller: Caller,
  service: RegistryService,
  options: HandlerOptions & Pick<RunContext, 'streaming' | 'acknowledge'>,
): Promise<OperationResult> {
  switch (operation.op) {
    case 'register': {
      const { acknowledge } = options;
      const result = await service.register(operation.subject, caller, acknowledge && ((written) => acknowledge(registrationAnswer(written))));
      return registrationAnswer(result);
    }
    case 'validate': {
      const result = await service.validate(operation.subject, caller);
      return { artifactName: 'validation', data: { ...result }, text: summarizeValidation(result) };
    }
    case 'search': {
      const page = await service.search(operation.request, caller);
      if (options.streaming) return { artifactName: 'search-results', chunks: searchChunks(page, options.searchChunkSize) };
      // A kept answer (frozen, shared by every request that asks the same) is the data itself,
      // so its JSON, made once, is found by identity; its text is made once too.
      if (Object.isFrozen(page)) return { artifactName: 'search-results', data: page as unknown as Record<string, unknown>, text: describeKept(page) };
      return { artifactName: 'search-results', data: { ...page }, text: describeHits(page.results, page.total, 0, page.totalExact !== false, page.reason) };
    }
    case 'get': {
      const entry = await service.get(operation.id, operation.revision, caller);
      return { artifactName: 'entry', data: { ...entry }, text: summarizeEntry(entry) };
    }
    case 'list': {
      const page = await service.list(operation.request, caller);
      return { artifactName: 'entries', data: { ...page }, text: summarizeEntries(page) };
    }
    case 'refresh':
      return registrationAnswer(await service.refresh(operation.id, caller));
    case 'watch':
      throw new Error('watch is run by OperationRunner.watch');
    case 'unregister': {
      const removed = await service.unregister(operation.id, caller);
      return {
        artifactName: 'unregistration',
        data: { ...removed, deleted: true },
        text: `Unregistered ${removed.kind} "${removed.name}" (${removed.id}).`,
      };
    }
  }
}
