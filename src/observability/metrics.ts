/**
 * Prometheus metrics (prom-client) at GET /metrics: requests by door (a2a, grpc, mcp, catalog),
 * method, operation and outcome with latency histograms, entries by kind and index size (read
 * from the store and the index when scraped, so they are never stale), validation failures by
 * code, rate-limit refusals, and the default process metrics (memory, CPU, event-loop lag, GC).
 *
 * Each registry gets its own prom-client Registry, so several registries in one process (tests)
 * do not collide on the global one. Every label value comes from a fixed set: nothing a caller
 * sends (task ids, tenants, unknown method names) becomes a label, which would let anyone grow
 * the metrics without bound.
 */
import type { Request, RequestHandler, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { FetchEvent, FetchObserver } from '../net/index.js';
import { OPERATION_NAMES } from '../operations/operation.js';
import type { DocumentValidator, Verdict } from '../validation/types.js';
import { arrivalOf, callOutcome, requestOutcome, type RequestOutcome } from './request-outcome.js';
import type { RequestScope } from './request-scope.js';
import { within } from '../lib/within.js';

export interface MetricsSources {
  /** Current entries by kind (RegistryStore.count). */
  countEntries(): Promise<Record<string, number>>;
  /** Entries in the search index. */
  indexSize(): number;
  /** SSE streams open right now. */
  openStreams(): number;
  /** Tasks held in memory (reads and refusals) and about how many bytes they take. */
  memoryTasks?(): { tasks: number; bytes: number };
  /** Copies of durable tasks (accepted writes, watches) cached in memory, and about how many bytes they take. */
  cachedDurableTasks?(): { tasks: number; bytes: number };
  /** Whether storage takes writes (no storage fault), and the fault's reason otherwise. */
  storageFault?(): string | undefined;
  /** Whether the database is known damaged (a lasting fault: an integrity check or a corrupt page found it). */
  storageDamaged?(): boolean;
  /** Searches answered from the search cache and not, since start, and answers kept now. */
  searchCache?(): { found: number; missed: number; size: number; bytes: number };
  /** Log lines dropped since start because the log could not be written (a full disk); undefined: not counted. */
  lostLogLines?(): number | undefined;
}

const JSONRPC_METHODS = new Set([
  'SendMessage', 'SendStreamingMessage', 'GetTask', 'ListTasks', 'CancelTask', 'SubscribeToTask',
  'CreateTaskPushNotificationConfig', 'GetTaskPushNotificationConfig', 'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig', 'GetExtendedAgentCard',
  'message/send', 'message/stream', 'tasks/get', 'tasks/cancel', 'tasks/resubscribe',
  'tasks/pushNotificationConfig/set', 'tasks/pushNotificationConfig/get', 'tasks/pushNotificationConfig/list',
  'tasks/pushNotificationConfig/delete', 'agent/getAuthenticatedExtendedCard',
]);
/** Every operation the executor routes (watch too: its streaming request was labelled `none`). */
const OPERATIONS: ReadonlySet<string> = new Set(OPERATION_NAMES);
/** How long one read of the entry counts serves scrapes (see entryCounts). */
const ENTRY_COUNT_MAX_AGE_MS = 5_000;
/** How long a scrape waits for the entry counts before leaving them out (Prometheus's default scrape timeout is 10 s). */
const ENTRY_COUNT_WAIT_MS = 2_000;

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The HTTP+JSON route a path belongs to, with ids and tenants taken out, matched as express
 * routes it to the SDK's handlers: case-insensitively, with one trailing slash allowed. Matched
 * as written, `POST /a2a/rest/message:stream/` or `/a2a/rest/MESSAGE:STREAM`, served as
 * message:stream all the same, was counted and logged as `POST other` and was no stream (the
 * stream cap, registry_open_streams, a watch refused as not streamed).
 */
export function restRoute(path: string): string {
  const p = path
    .toLowerCase()
    .replace(/(?<=.)\/$/, '')
    .replace(/^\/[^/]+(?=\/(message:|tasks|extendedagentcard))/, ''); // optional /{tenant} prefix
  if (/^\/message:(send|stream)$/.test(p)) return p;
  if (p === '/tasks') return '/tasks';
  const task = /^\/tasks\/[^/]+?(:cancel|:subscribe)?$/.exec(p);
  if (task) return `/tasks/{id}${task[1] ?? ''}`;
  if (/^\/tasks\/[^/]+\/pushnotificationconfigs(\/[^/]+)?$/.test(p)) return '/tasks/{id}/pushNotificationConfigs';
  if (p === '/extendedagentcard') return '/extendedAgentCard';
  return 'other';
}

/**
 * An HTTP+JSON request's method and route, ids and tenants taken out (`GET /tasks/{id}`): its
 * metric label, and the `method` of its log line, where the path as sent (as long as a client
 * makes it) was.
 */
export const restMethodOf = (req: Request): string => `${req.method} ${restRoute(req.path)}`;

/** A bounded label for the request's method: the JSON-RPC method, or the REST route. */
export function methodLabel(req: Request, scope: RequestScope | undefined): string {
  // In any case, as express routes it: /A2A/JSONRPC is the JSON-RPC endpoint too (it was counted as an HTTP+JSON "POST other").
  if (/\/jsonrpc$/i.test(req.baseUrl)) {
    const method = scope?.method;
    return method && JSONRPC_METHODS.has(method) ? method : 'other';
  }
  return restMethodOf(req);
}

/** Codes are short upper-case words or JSON-RPC numbers (written in digits); anything else becomes "other". */
const codeLabel = (code: string): string => (/^(?:[A-Z_]{1,32}|-?\d{1,5})$/.test(code) ? code : 'other');

/**
 * The refusal an error answer counts as (outcome REFUSED, code the reason) rather than an error:
 * an answer whose google.rpc.ErrorInfo reason is INVALID_PARAMS is a check of the request's shape
 * (an empty task id, a pageSize out of range, a pageToken not issued), whichever check answered
 * it, the door's or the request handler's, and on every binding (JSON-RPC, HTTP+JSON and gRPC
 * read their answer's reason alike: http/security.ts, grpc/call-guard.ts). Counted by who
 * answered, the same refusal was REFUSED on one door and ERROR -32602 on another. RATE_LIMITED
 * likewise: a watch's renewal over the write budget, which the request handler answers, counts
 * as the flood guard's refusals do.
 */
const ANSWERED_REFUSALS: ReadonlySet<string> = new Set(['INVALID_PARAMS', 'RATE_LIMITED']);
export const refusalOfAnswer = (reason: string | undefined): string | undefined => (reason !== undefined && ANSWERED_REFUSALS.has(reason) ? reason : undefined);

/**
 * The labels of what a request came to (request-outcome.ts, which its log line tells too): a code
 * from a fixed set, `none` for none, and `other` for an error answer that named no code (not its
 * HTTP status, which the label never carries).
 */
const outcomeLabels = ({ outcome, code }: RequestOutcome): { outcome: string; code: string } => ({
  outcome: codeLabel(outcome),
  code: code !== undefined ? codeLabel(code) : outcome === 'ERROR' ? 'other' : 'none',
});

export class RegistryMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'operation' | 'outcome' | 'code' | 'door'>;
  private readonly latency: Histogram<'method' | 'operation' | 'door'>;
  private readonly validationFailures: Counter<'kind' | 'code'>;
  private readonly limited: Counter<'limit' | 'by'>;
  private readonly fetches: Counter<'purpose' | 'outcome'>;
  private readonly fetchFailures: Counter<'purpose' | 'reason'>;
  private readonly fetchLatency: Histogram<'purpose'>;
  private readonly embeddingFailures: Counter<'stage'>;
  private sources: MetricsSources | undefined;
  private lastEntryCount: { at: number; counts: Promise<Record<string, number>> } | undefined;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'registry_requests_total',
      help: 'Requests by door (a2a, grpc, mcp, catalog), method (JSON-RPC method, HTTP+JSON route, gRPC method path, MCP method and tool (each call of a batch counted alone), catalog route), operation, outcome (task state, REFUSED, ERROR) and code (registry error code, refusal reason, JSON-RPC error code (on HTTP+JSON too, the code of its ErrorInfo reason) or gRPC status).',
      labelNames: ['method', 'operation', 'outcome', 'code', 'door'],
      registers: [this.registry],
    });
    this.latency = new Histogram({
      name: 'registry_request_duration_seconds',
      help: 'Time from receiving a request to the end of its answer (the whole stream for SSE), by door, method and operation.',
      labelNames: ['method', 'operation', 'door'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.validationFailures = new Counter({
      name: 'registry_validation_failures_total',
      help: 'Documents that failed validation (register or validate), by kind and error code.',
      labelNames: ['kind', 'code'],
      registers: [this.registry],
    });
    this.limited = new Counter({
      name: 'registry_rate_limited_total',
      help: 'Requests refused by a rate limit or the stream cap, by limit and by what was counted (principal or address).',
      labelNames: ['limit', 'by'],
      registers: [this.registry],
    });
    this.fetches = new Counter({
      name: 'registry_fetches_total',
      help: 'Outbound requests through the guard (cards, probes, MCP, JWKS, webhooks, embeddings), by purpose and outcome (ok, not-modified, failed).',
      labelNames: ['purpose', 'outcome'],
      registers: [this.registry],
    });
    this.fetchFailures = new Counter({
      name: 'registry_fetch_failures_total',
      help: 'Outbound requests that failed or were refused, by purpose and reason (the guard rule, e.g. loopback, private, link-local, or timeout, too-large, content-type, http-status, dns, connect).',
      labelNames: ['purpose', 'reason'],
      registers: [this.registry],
    });
    this.fetchLatency = new Histogram({
      name: 'registry_fetch_duration_seconds',
      help: 'Time an outbound request took, from resolving the host to the end of the body (refusals included).',
      labelNames: ['purpose'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.embeddingFailures = new Counter({
      name: 'registry_search_embedding_failures_total',
      help: 'Failed calls to the embeddings service of hybrid ranking, by stage (query: that search fell back to keyword ranking; entries: a batch of entries to embed, retried later).',
      labelNames: ['stage'],
      registers: [this.registry],
    });
    const self = this;
    new Gauge({
      name: 'registry_entries',
      help: `Current entries by kind, read from storage when scraped (at most once per ${ENTRY_COUNT_MAX_AGE_MS / 1000} s).`,
      labelNames: ['kind'],
      registers: [this.registry],
      async collect() {
        if (!self.sources) return;
        // Storage that cannot answer (PostgreSQL down, every pooled connection busy) leaves this
        // gauge out of the scrape. Its failure failed the whole scrape (503), hiding the metrics
        // an outage is watched by (registry_storage_writable 0, the requests refused), and a
        // read waiting for a busy pool held the scrape past Prometheus's timeout.
        const counts = await within(self.entryCounts(self.sources).catch(() => undefined), ENTRY_COUNT_WAIT_MS);
        this.reset();
        for (const [kind, n] of Object.entries(counts ?? {})) this.set({ kind: codeLabelKind(kind) }, n);
      },
    });
    new Gauge({
      name: 'registry_open_streams',
      help: 'Streams (SendStreamingMessage, SubscribeToTask; SSE and gRPC) open right now.',
      registers: [this.registry],
      collect() {
        if (self.sources) this.set(self.sources.openStreams());
      },
    });
    new Gauge({
      name: 'registry_tasks_in_memory',
      help: 'Tasks of reads and refused requests held in memory (bounded by REGISTRY_TASK_MEMORY_COUNT).',
      registers: [this.registry],
      collect() {
        const usage = self.sources?.memoryTasks?.();
        if (usage) this.set(usage.tasks);
      },
    });
    new Gauge({
      name: 'registry_task_memory_bytes',
      help: 'About how many bytes the tasks held in memory take (bounded by REGISTRY_TASK_MEMORY_BYTES).',
      registers: [this.registry],
      collect() {
        const usage = self.sources?.memoryTasks?.();
        if (usage) this.set(usage.bytes);
      },
    });
    new Gauge({
      name: 'registry_durable_tasks_cached',
      help: 'Copies of durable tasks (accepted writes, watches) cached in memory; the database holds them all (at most the smaller of 1,000 and REGISTRY_TASK_MEMORY_COUNT).',
      registers: [this.registry],
      collect() {
        const usage = self.sources?.cachedDurableTasks?.();
        if (usage) this.set(usage.tasks);
      },
    });
    new Gauge({
      name: 'registry_durable_task_cache_bytes',
      help: 'About how many bytes the cached copies of durable tasks take (at most the smaller of 8 MiB and REGISTRY_TASK_MEMORY_BYTES).',
      registers: [this.registry],
      collect() {
        const usage = self.sources?.cachedDurableTasks?.();
        if (usage) this.set(usage.bytes);
      },
    });
    new Gauge({
      name: 'registry_storage_writable',
      help: '1 while storage takes writes; 0 after a write failed for a storage fault (disk full, read-only, file missing or corrupt, unreachable) until a write probe succeeds.',
      registers: [this.registry],
      collect() {
        if (self.sources?.storageFault) this.set(self.sources.storageFault() === undefined ? 1 : 0);
      },
    });
    new Gauge({
      name: 'registry_storage_damaged',
      help: '1 once the database file is found damaged (SQLite: a background integrity check, or a corrupt page read), until it is repaired and the registry restarted; writes are refused meanwhile. 0 otherwise.',
      registers: [this.registry],
      collect() {
        if (self.sources?.storageDamaged) this.set(self.sources.storageDamaged() ? 1 : 0);
      },
    });
    // The count is the log destination's, process-wide: the metric follows it.
    let logLinesCounted = 0;
    new Counter({
      name: 'registry_log_lines_dropped_total',
      help: 'Log lines dropped because the log could not be written (the disk holding it full, its reader gone or not keeping up); the registry goes on serving meanwhile.',
      registers: [this.registry],
      collect() {
        const lost = self.sources?.lostLogLines?.();
        if (lost === undefined) return;
        this.inc(Math.max(0, lost - logLinesCounted));
        logLinesCounted = Math.max(lost, logLinesCounted);
      },
    });
    let searchCacheCounted = { found: 0, missed: 0 };
    new Counter({
      name: 'registry_search_cache_lookups_total',
      help: 'Searches looked up in the search cache (REGISTRY_SEARCH_CACHE_ENTRIES), by result: found (answered without searching) or missed.',
      labelNames: ['result'],
      registers: [this.registry],
      collect() {
        const cache = self.sources?.searchCache?.();
        if (!cache) return;
        this.inc({ result: 'found' }, cache.found - searchCacheCounted.found);
        this.inc({ result: 'missed' }, cache.missed - searchCacheCounted.missed);
        searchCacheCounted = { found: cache.found, missed: cache.missed };
      },
    });
    new Gauge({
      name: 'registry_search_cache_answers',
      help: 'Search answers kept in the search cache now.',
      registers: [this.registry],
      collect() {
        const cache = self.sources?.searchCache?.();
        if (cache) this.set(cache.size);
      },
    });
    new Gauge({
      name: 'registry_search_cache_bytes',
      help: 'About how many bytes the answers kept in the search cache hold, their JSON included (REGISTRY_SEARCH_CACHE_BYTES bounds it).',
      registers: [this.registry],
      collect() {
        const cache = self.sources?.searchCache?.();
        if (cache) this.set(cache.bytes);
      },
    });
    new Gauge({
      name: 'registry_index_entries',
      help: 'Entries in the search index.',
      registers: [this.registry],
      collect() {
        if (self.sources) this.set(self.sources.indexSize());
      },
    });
  }

  /**
   * The entry counts for a scrape: one storage read serves every scrape for ENTRY_COUNT_MAX_AGE_MS
   * (and scrapes arriving while it runs). Counting scans the entries table, and /metrics is open
   * unless REGISTRY_METRICS_TOKEN is set and outside the request budget: every scrape reading
   * storage let anyone turn a flood of GET /metrics into a flood of table scans.
   */
  private entryCounts(sources: MetricsSources): Promise<Record<string, number>> {
    const now = Date.now();
    if (this.lastEntryCount && now - this.lastEntryCount.at < ENTRY_COUNT_MAX_AGE_MS) return this.lastEntryCount.counts;
    const counts = sources.countEntries();
    const read = { at: now, counts };
    this.lastEntryCount = read;
    // A failed read is not kept: the next scrape tries again.
    counts.catch(() => {
      if (this.lastEntryCount === read) this.lastEntryCount = undefined;
    });
    return counts;
  }

  /** Where entry counts and index size come from (set once the store and index exist). */
  setSources(sources: MetricsSources): void {
    this.sources = sources;
  }

  /**
   * Counts every request of a door when its response ends (or the client goes away). Mount it
   * first, so requests refused before the door's handlers (body errors, floods) are counted too;
   * it reads the request scope that requestScope leaves in res.locals.scope. `method` names the
   * request with a value from a fixed set (the A2A door's by default). A batch whose calls ran
   * (scope.calls) counts each call, under its own label and with its own outcome, as a single
   * request would be counted; each takes the batch's time, as they share its answer.
   */
  middleware(options: { door?: string; method?: (req: Request, scope: RequestScope | undefined) => string } = {}): RequestHandler {
    const door = options.door ?? 'a2a';
    const label = options.method ?? methodLabel;
    return (req, res, next) => {
      const started = arrivalOf(res);
      res.once('close', () => {
        const scope = (res.locals as { scope?: RequestScope }).scope;
        if (scope?.calls?.length) {
          for (const call of scope.calls) this.count(call.label, call.scope, outcomeLabels(callOutcome(res, call.scope)), started, door);
          return;
        }
        this.count(label(req, scope), scope, outcomeLabels(requestOutcome(res, scope)), started, door);
      });
      next();
    };
  }

  /**
   * Counts one call of a door outside express (gRPC) when it ends, started at `started`
   * (process.hrtime.bigint()). `method` comes from the door's fixed set of names; `outcome` is
   * what the call came to (request-outcome.ts, callEndedOutcome), which its log line tells too (a
   * success, with no code, is counted `none`, as the HTTP doors count one).
   */
  countCall(door: string, method: string, scope: RequestScope | undefined, outcome: RequestOutcome, started: bigint): void {
    this.count(method, scope, outcomeLabels(outcome), started, door);
  }

  private count(method: string, scope: RequestScope | undefined, outcome: { outcome: string; code: string }, started: bigint, door: string): void {
    const operation = scope?.operation && OPERATIONS.has(scope.operation) ? scope.operation : 'none';
    this.requests.inc({ method, operation, ...outcome, door });
    this.latency.observe({ method, operation, door }, Number(process.hrtime.bigint() - started) / 1e9);
  }

  /** GET /metrics in the Prometheus text format (who may ask: http/metrics-access.ts). */
  handler(): RequestHandler {
    return async (_req, res) => {
      try {
        const body = await this.registry.metrics();
        res.setHeader('Content-Type', this.registry.contentType);
        res.setHeader('Cache-Control', 'no-store');
        res.end(body);
      } catch {
        res.status(503).json({ error: 'metrics are unavailable right now' });
      }
    };
  }

  rateLimited(limit: string, by: string): void {
    this.limited.inc({ limit, by });
  }

  embeddingFailed(stage: 'query' | 'entries'): void {
    this.embeddingFailures.inc({ stage });
  }

  /** What the Fetcher reports each request to (count, failures by reason, latency). */
  fetchObserver(): FetchObserver {
    return {
      fetched: (event: FetchEvent) => {
        this.fetches.inc({ purpose: event.purpose, outcome: event.outcome });
        if (event.reason) this.fetchFailures.inc({ purpose: event.purpose, reason: event.reason });
        this.fetchLatency.observe({ purpose: event.purpose }, event.seconds);
      },
    };
  }

  /** The same validator, counting every failed verdict. */
  countingValidator(validator: DocumentValidator): DocumentValidator {
    const count = (verdict: Verdict): Verdict => {
      if (!verdict.valid) this.validationFailures.inc({ kind: verdict.kind, code: verdict.errorCode ?? 'VALIDATION_FAILED' });
      return verdict;
    };
    return {
      validateAgentCard: (card, sizeBytes, written) => count(validator.validateAgentCard(card, sizeBytes, written)),
      validateMcpServer: (server, toolspec, sizeBytes, written) => count(validator.validateMcpServer(server, toolspec, sizeBytes, written)),
      validateToolspec: (toolspec, sizeBytes, written) => count(validator.validateToolspec(toolspec, sizeBytes, written)),
    };
  }
}

const codeLabelKind = (kind: string): string => (kind === 'agent' || kind === 'mcp-server' ? kind : 'other');
