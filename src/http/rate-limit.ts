/**
 * Abuse control, in memory (rate-limiter-flexible), at three points:
 * - a flood guard in front of everything on the A2A endpoints: requests per client address per
 *   minute, refused with HTTP 429 + Retry-After before the body is even read (a flood must not
 *   cost a parse, an executor run and a task write per request);
 * - operation budgets, asked by the executor once it knows the operation: writes
 *   (register/unregister/refresh, starting a watch, and renewing one) and reads
 *   (search/get/list/validate) per minute, each counted per principal and per client address. A
 *   refusal is a REJECTED task with RATE_LIMITED and retryAfterSeconds, like any declined
 *   request; a renewal's is a protocol error (its task is the watch's, which it must not end);
 * - a cap on concurrent streams (SSE, gRPC server streams) per client address.
 * The checks are transport-neutral (admitRequest, openStream); floodGuard and streamCap apply
 * them to the HTTP doors, the gRPC door applies them to its calls.
 * The admin principal (the operator) is exempt. Limits are per process: behind a load balancer
 * each replica counts its own share. A client is its address, or on IPv6 its network
 * (client-network.ts): one subscriber's many IPv6 addresses share one budget.
 */
import type { Request, RequestHandler, Response } from 'express';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../observability/logger.js';
import { currentScope, outsideScope } from '../observability/request-scope.js';
import type { Caller } from '../contract/caller.js';
import type { Admission, BudgetedAction } from '../operations/admission.js';
import { RegistryError } from '../contract/errors.js';
import { sendFailure } from './errors.js';
import { jsonRpcIdOf } from './json-body.js';
import { requestIdOf } from './request-log.js';
import { limitedClient } from './client-network.js';

export interface RateLimitOptions {
  enabled: boolean;
  writesPerMinute: number;
  readsPerMinute: number;
  requestsPerMinute: number;
  maxStreamsPerClient: number;
  /** IPv6 clients are counted by their network of this prefix length (client-network.ts); 128: one by one. */
  ipv6Prefix: number;
}

export type LimitName = 'writes' | 'reads' | 'requests' | 'streams';
export type LimitedBy = 'principal' | 'address';

/** A request or stream refused before it runs; each door answers it in its binding. */
export interface Refusal {
  reason: 'RATE_LIMITED' | 'TOO_MANY_STREAMS';
  message: string;
  retryAfterSeconds: number;
}

/** A place taken among an address's concurrent streams. */
export interface StreamSlot {
  /** Gives the place back (once; later calls do nothing). */
  release(): void;
}

export interface AbuseControlDeps {
  log: Logger;
  /** Called on every refusal (metrics). */
  onLimited?: (limit: LimitName, by: LimitedBy) => void;
  /** Requests that skip the flood guard: the operator's own (admin token). */
  isExempt?: (authorization: string | undefined) => boolean;
}

/**
 * Operations drawn from the write budget: each writes to the database. A watch too: starting one
 * stores its definition and its task (with the initial matches, about 48 KB at 100 hits), and its
 * task is kept once it ends. Counted as a read, one principal started and canceled watches at
 * 6,000 a minute, 1,240 of them in 20 s taking registry.db from 52 to 113 MB. And a renewal,
 * which writes the watch's expiry and its task: budgeted by nothing, it ran at the flood
 * guard's rate (12,000 a minute per address, from any number of addresses).
 */
const WRITE_ACTIONS: ReadonlySet<BudgetedAction> = new Set(['register', 'unregister', 'refresh', 'watch', 'renew']);
const JSONRPC_RATE_LIMITED = -32603; // A2A v1.0 section on system errors: "rate limit exceeded" is -32603

/** How a door answers a request its flood guard refused (the request id is set already). */
export type FloodRefusalAnswer = (req: Request, res: Response, refusal: Refusal) => void;
/** A request over the budget, answered in the door's binding: HTTP 429, Retry-After, JSON-RPC -32603 with the reason. */
export const answerInBinding: FloodRefusalAnswer = (req, res, refusal) => sendFailure(req, res, { httpStatus: 429, jsonRpcCode: JSONRPC_RATE_LIMITED, ...refusal });
const STREAM_RETRY_SECONDS = 5;

/** Whether a client (AbuseControl.client) is an IPv6 network, in CIDR form, rather than one address. */
const isNetwork = (client: string): boolean => client.includes('/');
/** A client as a refusal names it: "address", or "network (2001:db8:0:100::/56)" when its network is counted. */
const named = (client: string): string => (isNetwork(client) ? `network (${client})` : 'address');

const retryAfter = (res: RateLimiterRes): number => Math.max(1, Math.ceil(res.msBeforeNext / 1000));

/**
 * Spends a point of `key`, outside the request's scope. A key new in its minute gets a timer that
 * forgets it a minute later, and a timer keeps the async context it was made in (Node.js 24's
 * AsyncContextFrame): made in a request's scope, it held that scope, its request and response,
 * their socket and parsed body for the minute. Anonymous searches of 50 KB from 1,500 addresses
 * held 90 MB that way, growing with the request rate times the minute, far beyond the key itself.
 */
const spend = (limiter: RateLimiterMemory, key: string, points = 1): Promise<RateLimiterRes> => outsideScope(() => limiter.consume(key, points));

export class AbuseControl implements Admission {
  private readonly writes: RateLimiterMemory;
  private readonly reads: RateLimiterMemory;
  private readonly requests: RateLimiterMemory;
  private readonly streams = new Map<string, number>();
  private openStreamCount = 0;

  constructor(
    private readonly options: RateLimitOptions,
    private readonly deps: AbuseControlDeps,
  ) {
    this.writes = new RateLimiterMemory({ keyPrefix: 'w', points: options.writesPerMinute, duration: 60 });
    this.reads = new RateLimiterMemory({ keyPrefix: 'r', points: options.readsPerMinute, duration: 60 });
    this.requests = new RateLimiterMemory({ keyPrefix: 'q', points: options.requestsPerMinute, duration: 60 });
  }

  /**
   * Operation budget: consumes one point per principal and one per address; throws RATE_LIMITED.
   * Both are looked at before either is spent: a request the address's budget refuses (a busy
   * NAT, a neighbour's flood) spent a point of the principal's first, so its refusals drained the
   * principal's budget everywhere else too (and one the principal's budget refuses never reaches
   * the address's).
   */
  async admit(action: BudgetedAction, requester: Caller): Promise<void> {
    if (!this.options.enabled || requester.isAdmin) return;
    const isWrite = WRITE_ACTIONS.has(action);
    const limiter = isWrite ? this.writes : this.reads;
    const perMinute = isWrite ? this.options.writesPerMinute : this.options.readsPerMinute;
    const keys: Array<[LimitedBy, string]> = [];
    if (requester.principal) keys.push(['principal', `p:${requester.principal}`]);
    const client = requester.address ? this.client(requester.address) : undefined;
    if (client !== undefined) keys.push(['address', `a:${client}`]);
    const refuse = (by: LimitedBy, res: RateLimiterRes): RegistryError => {
      this.deps.onLimited?.(isWrite ? 'writes' : 'reads', by);
      const seconds = retryAfter(res);
      return new RegistryError(
        'RATE_LIMITED',
        `Too many ${isWrite ? 'writes (register, unregister, refresh, watch, renew)' : 'reads (search, get, list, validate)'} from this ${by === 'principal' || client === undefined ? 'principal' : named(client)}: the limit is ${perMinute} per minute (${isWrite ? 'REGISTRY_RATE_WRITES_PER_MINUTE' : 'REGISTRY_RATE_READS_PER_MINUTE'}). Retry after ${seconds} s.`,
        undefined,
        seconds,
      );
    };
    for (const [by, key] of keys) {
      const spent = await limiter.get(key);
      if (spent && spent.consumedPoints >= perMinute) throw refuse(by, spent);
    }
    for (const [by, key] of keys) {
      try {
        await spend(limiter, key);
      } catch (err) {
        // Spent meanwhile by a request looked at in the same moment.
        if (!(err instanceof RateLimiterRes)) throw err;
        throw refuse(by, err);
      }
    }
  }

  /**
   * Requests per client address, before the request is read: undefined to go ahead, or the
   * refusal the door answers (HTTP 429 + Retry-After, gRPC RESOURCE_EXHAUSTED).
   */
  async admitRequest(address: string, authorization: string | undefined, requestId?: string): Promise<Refusal | undefined> {
    if (!this.options.enabled || this.deps.isExempt?.(authorization)) return undefined;
    const client = this.client(address);
    try {
      await spend(this.requests, client);
      return undefined;
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      this.deps.onLimited?.('requests', 'address');
      // One warning per address and window, not one per refused request: a flood must not become a log flood.
      if (err.consumedPoints === this.options.requestsPerMinute + 1) {
        this.deps.log.warn({ address, client, limit: this.options.requestsPerMinute, requestId }, `request rate limit reached; refusing this ${isNetwork(client) ? 'network' : 'address'} for the rest of the minute`);
      } else {
        this.deps.log.debug({ address, client, requestId }, 'request refused: over the request rate limit');
      }
      const seconds = retryAfter(err);
      return {
        reason: 'RATE_LIMITED',
        message: `Too many requests from this ${named(client)}: the limit is ${this.options.requestsPerMinute} per minute. Retry after ${seconds} s.`,
        retryAfterSeconds: seconds,
      };
    }
  }

  /**
   * The rest of a request that carries `messages` JSON-RPC messages (an MCP batch): each is a
   * request of its own, as it would be sent alone, and admitRequest (the flood guard, before the
   * body was read) spent the first. A batch counted once: one POST of 100 tools/list calls (6 KB
   * in, 3.5 MB and 0.3 s of CPU out) spent what one call does. The batch runs only if the
   * address's budget holds all of its messages; refused, it spends nothing more (its client may
   * send fewer, or wait), and is answered as the flood guard answers (RATE_LIMITED, 429).
   */
  async admitMessages(address: string, authorization: string | undefined, messages: number): Promise<Refusal | undefined> {
    const more = messages - 1;
    if (!this.options.enabled || more <= 0 || this.deps.isExempt?.(authorization)) return undefined;
    const client = this.client(address);
    const limit = this.options.requestsPerMinute;
    // `before`: the points spent before this batch's own, its first (the flood guard's) included.
    const refuse = (res: RateLimiterRes, before: number): Refusal => {
      this.deps.onLimited?.('requests', 'address');
      const seconds = retryAfter(res);
      // A batch larger than the whole budget would be refused after every wait: say so.
      const what = messages > limit ? `send at most ${limit} messages per batch` : `send fewer messages per batch, or retry after ${seconds} s`;
      return {
        reason: 'RATE_LIMITED',
        message: `Too many requests from this ${named(client)}: a batch counts each of its messages as a request, so this batch of ${messages} needs ${more} more than its first, and this ${isNetwork(client) ? 'network' : 'address'} has ${Math.max(0, limit - before)} left this minute (the limit is ${limit} per minute): ${what}.`,
        retryAfterSeconds: seconds,
      };
    };
    const spent = await this.requests.get(client);
    if (spent && spent.consumedPoints + more > limit) return refuse(spent, spent.consumedPoints);
    try {
      await spend(this.requests, client, more);
      return undefined;
    } catch (err) {
      // Spent meanwhile by a request looked at in the same moment.
      if (!(err instanceof RateLimiterRes)) throw err;
      return refuse(err, err.consumedPoints - more);
    }
  }

  /**
   * A place among the address's concurrent streams (SSE or gRPC): release it when the stream
   * ends; or the refusal. Streams are counted even with limits off (the registry_open_streams metric).
   */
  openStream(address: string): StreamSlot | Refusal {
    const client = this.client(address);
    const open = this.streams.get(client) ?? 0;
    if (this.options.enabled && open >= this.options.maxStreamsPerClient) {
      this.deps.onLimited?.('streams', 'address');
      return {
        reason: 'TOO_MANY_STREAMS',
        // The admin too: a stream holds a connection and memory whoever opened it, so the cap is per address, not per principal.
        message: `This ${named(client)} already has ${open} open ${open === 1 ? 'stream' : 'streams'}; the limit is ${this.options.maxStreamsPerClient} per client address (REGISTRY_MAX_STREAMS_PER_CLIENT), whatever the token, the admin's included. Close one, or retry after ${STREAM_RETRY_SECONDS} s.`,
        retryAfterSeconds: STREAM_RETRY_SECONDS,
      };
    }
    this.streams.set(client, open + 1);
    this.openStreamCount++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.openStreamCount--;
        const now = (this.streams.get(client) ?? 1) - 1;
        if (now <= 0) this.streams.delete(client);
        else this.streams.set(client, now);
      },
    };
  }

  /**
   * admitRequest on the HTTP doors: HTTP 429 + Retry-After before the body is read, answered in
   * the door's binding unless the door answers a refusal its own way (the web page's HTML).
   */
  floodGuard(answer: FloodRefusalAnswer = answerInBinding): RequestHandler {
    if (!this.options.enabled) return (_req, _res, next) => next();
    return (req, res, next) => {
      // A request refused here is refused before its scope opens: it gets its id here, so a client
      // reporting the 429 names a request the log knows (no request line: a flood must not become a
      // log flood; the address's first refusal is the warning, the others debug lines).
      const requestId = requestIdOf(req, res);
      this.admitRequest(req.ip ?? 'unknown', req.header('authorization'), requestId).then((refusal) => {
        if (!refusal) return next();
        req.resume(); // discard the unread body so the connection stays usable
        res.setHeader('X-Request-Id', requestId);
        answer(req, res, refusal);
      }, next);
    };
  }

  /** openStream on the A2A HTTP endpoints; mounted after the request scope knows whether it streams. */
  streamCap(): RequestHandler {
    return (req, res, next) => {
      const scope = currentScope();
      if (!scope?.streaming) return next();
      const slot = this.openStream(req.ip ?? 'unknown');
      if ('reason' in slot) {
        scope.errorCode = 'RATE_LIMITED';
        return sendFailure(req, res, { httpStatus: 429, jsonRpcCode: JSONRPC_RATE_LIMITED, ...slot, id: jsonRpcIdOf(req.body) });
      }
      res.once('close', slot.release);
      next();
    };
  }

  /** The client `address` is counted as: itself, or its IPv6 network. */
  private client(address: string): string {
    return limitedClient(address, this.options.ipv6Prefix);
  }

  /** Streams open right now, all addresses together (metrics). */
  get openStreams(): number {
    return this.openStreamCount;
  }
}
