/**
 * Standing searches (issue 19): watches over the change feed.
 *
 * A watch is a search's query and filter kept open. The hub follows the ChangeFeed (local writes
 * and, on PostgreSQL, other replicas' writes as the IndexFollower picks them up), and for every
 * committed change asks the service whether the changed entry is in the watch's results now —
 * by the search index's own rules (`RegistryService.matchOne`), never a second copy of them.
 * Comparing with whether it was before (the watch remembers which entries match) gives the
 * event: `added`, `updated` or `removed`. When the feed says changes were missed (resync), every
 * watch recomputes its matches and sends a `resync` event with them.
 *
 * Each watch keeps its last events (a bounded buffer) so a client that disconnected can resume
 * with SubscribeToTask and get what it missed, or a `resync` when the gap is older than the
 * buffer. Watches are capped per principal and expire.
 */
import type { Caller } from '../contract/caller.js';
import { RegistryError, badRequest } from '../contract/errors.js';
import type { EntryKind, RemovedHit, SearchHit, WatchEvent, WatchRequest } from '../contract/types.js';
import type { Logger } from '../observability/logger.js';
import type { ChangeFeed, CommittedChange } from '../registry/change-feed.js';
import type { RegistryService } from '../registry/service.js';

export interface WatchLimits {
  /** Open watches per principal (REGISTRY_MAX_WATCHES); admins are exempt. */
  maxPerPrincipal: number;
  /** A watch ends (COMPLETED, saying so) this long after it started or was last renewed. */
  ttlMs: number;
  /** Events each watch keeps for a client that resumes (REGISTRY_WATCH_BUFFER). */
  bufferEvents: number;
  /** Hits in the initial `watch-results` chunk and in a `resync` event. */
  resultsLimit: number;
  /** A watch may follow at most this many matching entries (a broader one is refused: narrow it). */
  maxTracked: number;
}

export const DEFAULT_WATCH_LIMITS: WatchLimits = {
  maxPerPrincipal: 10,
  ttlMs: 24 * 3600_000,
  bufferEvents: 1000,
  resultsLimit: 100,
  maxTracked: 10_000,
};

export type WatchEndReason = 'canceled' | 'expired' | 'failed' | 'closed';
export interface WatchEnd {
  reason: WatchEndReason;
  message: string;
}

/** Hits the index returns per page while a watch collects its current matches. */
const PAGE = 1000;

type EventBody =
  | { event: 'added' | 'updated'; hit: SearchHit }
  | { event: 'removed'; hit: RemovedHit }
  | { event: 'resync'; results: SearchHit[]; total: number };

export class Watch {
  /** Entries in the results now, with what a `removed` event says about them. */
  readonly #matching = new Map<string, { kind: EntryKind; name: string }>();
  /** The last events, oldest first (for resuming). */
  readonly #buffer: WatchEvent[] = [];
  readonly #listeners = new Set<(event: WatchEvent) => void>();
  #seq = 0;
  /** The last event a client is known to have been sent (see `delivered`). */
  #delivered = 0;
  #end: WatchEnd | undefined;
  readonly #ended: Promise<WatchEnd>;
  #resolveEnd!: (end: WatchEnd) => void;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    readonly id: string,
    /** The A2A context of the watch's task (events are sent in it). */
    readonly contextId: string,
    readonly principal: string,
    readonly request: WatchRequest,
    private readonly service: RegistryService,
    private readonly limits: WatchLimits,
    public expiresAt: number,
    private readonly onEnd: (watch: Watch) => void,
  ) {
    this.#ended = new Promise((resolve) => (this.#resolveEnd = resolve));
    this.#load();
    this.#arm();
  }

  /** Resolves when the watch ends (canceled, expired, registry closing). */
  get ended(): Promise<WatchEnd> {
    return this.#ended;
  }

  get isOpen(): boolean {
    return this.#end === undefined;
  }

  /** The current matches, best first (the initial chunk). */
  current(): { results: SearchHit[]; total: number } {
    return this.service.matchPage(this.request, 0, this.limits.resultsLimit);
  }

  /** Calls `listener` with every event from now on; returns the unsubscribe function. */
  listen(listener: (event: WatchEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A client was sent events up to `seq` (the door tells, as it streams them). */
  delivered(seq: number): void {
    if (seq > this.#delivered) this.#delivered = seq;
  }

  /**
   * What a client that resumes has missed: the buffered events after the last one it was sent,
   * or one `resync` event with the current matches when some of them are no longer buffered.
   */
  missed(): WatchEvent[] {
    const after = this.#delivered;
    if (after >= this.#seq) return [];
    const oldest = this.#buffer[0]?.seq ?? this.#seq + 1;
    if (oldest > after + 1) return [this.#emit({ event: 'resync', ...this.current() })];
    return this.#buffer.filter((event) => event.seq > after);
  }

  /** Extends the watch by its time to live from now. */
  renew(now = Date.now()): void {
    this.expiresAt = now + this.limits.ttlMs;
    this.#arm();
  }

  end(reason: WatchEndReason, message: string): void {
    if (this.#end) return;
    this.#end = { reason, message };
    clearTimeout(this.#timer);
    this.#listeners.clear();
    this.onEnd(this);
    this.#resolveEnd(this.#end);
  }

  /** A committed change: is the entry in the results now, and was it before? */
  onChange(change: CommittedChange): void {
    if (!this.isOpen) return;
    const before = this.#matching.get(change.id);
    const hit = change.op === 'upsert' ? this.service.matchOne(this.request, change.id) : undefined;
    if (hit) {
      this.#matching.set(change.id, { kind: hit.kind, name: hit.name });
      this.#emit({ event: before ? 'updated' : 'added', hit });
    } else if (before) {
      this.#matching.delete(change.id);
      this.#emit({ event: 'removed', hit: { id: change.id, kind: before.kind, name: before.name } });
    }
  }

  /** Changes were missed: start again from the current matches. */
  onResync(): void {
    if (!this.isOpen) return;
    this.#load();
    this.#emit({ event: 'resync', ...this.current() });
  }

  #load(): void {
    this.#matching.clear();
    for (let offset = 0; ; offset += PAGE) {
      const page = this.service.matchPage(this.request, offset, PAGE);
      if (page.total > this.limits.maxTracked) {
        throw badRequest(
          `The watch matches ${page.total} entries; a watch follows at most ${this.limits.maxTracked}. Narrow its query or filter.`,
        );
      }
      for (const hit of page.results) this.#matching.set(hit.id, { kind: hit.kind, name: hit.name });
      if (page.results.length < PAGE || offset + PAGE >= page.total) break;
    }
  }

  #emit(body: EventBody): WatchEvent {
    const event = { ...body, seq: ++this.#seq, at: new Date().toISOString() } as WatchEvent;
    this.#buffer.push(event);
    if (this.#buffer.length > this.limits.bufferEvents) this.#buffer.shift();
    for (const listener of this.#listeners) listener(event);
    return event;
  }

  #arm(): void {
    clearTimeout(this.#timer);
    const wait = Math.max(0, this.expiresAt - Date.now());
    // setTimeout holds at most ~24.8 days; longer waits re-arm.
    this.#timer = setTimeout(() => {
      if (Date.now() >= this.expiresAt) this.end('expired', 'The watch expired; start a new one to keep watching.');
      else this.#arm();
    }, Math.min(wait, 2 ** 31 - 1));
    this.#timer.unref();
  }
}

export class WatchHub {
  readonly #watches = new Map<string, Watch>();
  readonly #started = new Set<(watch: Watch) => void>();
  readonly #unsubscribe: () => void;

  constructor(
    feed: ChangeFeed,
    private readonly service: RegistryService,
    private readonly limits: WatchLimits = DEFAULT_WATCH_LIMITS,
    private readonly log?: Logger,
  ) {
    // Subscribed after the service, so the index already holds a change when a watch asks about it.
    this.#unsubscribe = feed.subscribe(
      (change) => {
        for (const watch of this.#watches.values()) this.#guard(watch, () => watch.onChange(change));
      },
      () => {
        for (const watch of this.#watches.values()) this.#guard(watch, () => watch.onResync());
      },
    );
  }

  /**
   * Opens a watch for `caller` (it needs a token; non-admins are capped). Throws the refusal
   * (UNAUTHENTICATED, QUOTA_EXCEEDED, BAD_REQUEST) before anything is kept.
   */
  start(id: string, request: WatchRequest, caller: Caller, contextId = ''): Watch {
    const actor = this.service.watcher(caller);
    if (this.#watches.has(id)) throw badRequest(`Task ${id} already runs a watch.`);
    if (!actor.isAdmin) {
      const open = this.countFor(actor.principal);
      if (open >= this.limits.maxPerPrincipal) {
        throw new RegistryError(
          'QUOTA_EXCEEDED',
          `You have ${open} open watches; the limit is ${this.limits.maxPerPrincipal} per principal (REGISTRY_MAX_WATCHES). Cancel one (CancelTask) before starting another.`,
        );
      }
    }
    const watch = new Watch(id, contextId, actor.principal, request, this.service, this.limits, Date.now() + this.limits.ttlMs, (w) => this.#watches.delete(w.id));
    this.#watches.set(id, watch);
    for (const listener of this.#started) listener(watch);
    return watch;
  }

  /** Calls `listener` with every watch as it starts (push notifications follow watches this way). */
  onStart(listener: (watch: Watch) => void): void {
    this.#started.add(listener);
  }

  get(id: string): Watch | undefined {
    return this.#watches.get(id);
  }

  /** Ends the watch run by task `id`; false when there is none. */
  cancel(id: string): boolean {
    const watch = this.#watches.get(id);
    if (!watch) return false;
    watch.end('canceled', 'The watch was canceled.');
    return true;
  }

  countFor(principal: string): number {
    let n = 0;
    for (const watch of this.#watches.values()) if (watch.principal === principal) n++;
    return n;
  }

  get size(): number {
    return this.#watches.size;
  }

  /** Ends every watch (the registry is closing). */
  close(): void {
    this.#unsubscribe();
    for (const watch of [...this.#watches.values()]) watch.end('closed', 'The registry shut down; watches do not survive a restart yet: start the watch again.');
  }

  #guard(watch: Watch, step: () => void): void {
    try {
      step();
    } catch (err) {
      this.log?.error({ err, watch: watch.id }, 'a watch could not follow a change');
    }
  }
}
