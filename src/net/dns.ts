/**
 * Host-name lookups for the outbound guard, bounded in number and in time.
 *
 * By default a name is resolved by the system (dns.lookup: getaddrinfo, so /etc/hosts and
 * nsswitch apply). getaddrinfo holds one of libuv's threads until it returns, and cannot be
 * cancelled; those threads (UV_THREADPOOL_SIZE, 4 by default) also do the process's file, zlib
 * and crypto work. A resolver that is slow or does not answer, or many lookups at once (a burst
 * of registrations by URL, a refresh round, webhooks), would hold every thread and stall the rest
 * of the registry. So lookups go through a `LookupLimiter`:
 * - at most `max` run at once (half the thread pool for the system resolver); a lookup keeps its
 *   slot until it really returns, not merely until the request that asked gave up on it;
 * - a lookup, its wait for a slot included, is bounded by its request's deadline;
 * - a name already being looked up is not looked up again: its requests share that lookup (and
 *   its slot), so a name whose DNS never answers holds one slot, not all of them. Two such names
 *   still hold both until the system resolver gives up (resolv.conf's timeout and attempts):
 *   REGISTRY_DNS_SERVERS, or a larger UV_THREADPOOL_SIZE, is the remedy (README).
 *
 * With REGISTRY_DNS_SERVERS names are asked of those servers instead (`serversResolver`, c-ares):
 * no thread is held, and a query is cancelled when its request gives up.
 */
import { lookup as dnsLookup, Resolver as DnsResolver } from 'node:dns/promises';

/**
 * Resolves a host name to its addresses (default: the system resolver; REGISTRY_DNS_SERVERS and
 * tests set others). `signal` aborts when the request gives up: a resolver that can cancel does.
 */
export type Resolver = (host: string, signal?: AbortSignal) => Promise<readonly string[]>;

export const systemResolver: Resolver = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Lookups the system resolver may run at once: half of libuv's thread pool, leaving the rest to files, zlib and crypto. */
export function systemLookupSlots(): number {
  const pool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  return Math.max(1, Math.floor(pool / 2));
}

/** Lookups a resolver that holds no thread (servers, tests) may run at once. */
export const NETWORK_LOOKUP_SLOTS = 64;

/** Codes with which a server says the name has no address of that family (not a failure of the lookup). */
const NO_ADDRESS = new Set(['ENODATA', 'ENOTFOUND']);

/**
 * Checks REGISTRY_DNS_SERVERS ("10.0.0.53, 1.1.1.1:5353, [2001:db8::53]:53"); throws an Error
 * naming the first item that is not an IP address with an optional port. Never given a list of
 * no server: the configuration takes an empty one as unset and refuses one of only commas first
 * (config.ts, blankDnsServers), saying why.
 */
export function parseDnsServers(text: string): string[] {
  const servers = text.split(',').map((s) => s.trim()).filter(Boolean);
  for (const server of servers) {
    try {
      new DnsResolver().setServers([server]);
    } catch {
      throw new Error(`"${server}" is not an IP address with an optional port (like 10.0.0.53, 10.0.0.53:5353 or [2001:db8::53]:53)`);
    }
  }
  return servers;
}

/** `localhost` and its subdomains are the loopback addresses, never asked of a server (RFC 6761 §6.3). */
const LOCALHOST = /(^|\.)localhost$/;
const LOOPBACK = ['127.0.0.1', '::1'] as const;

/**
 * How long the AAAA answer is waited for once the A records have answered with addresses. Both
 * queries go to the same server at once, so their answers normally come within milliseconds of
 * each other; an AAAA answer still missing after this is slow or will never come (some forwarders
 * and firewalls drop AAAA queries), and waiting for it until the request's deadline made a name
 * whose A records answer unfetchable. Happy Eyeballs v2 waits 50 ms for AAAA once A has come
 * (RFC 8305 §3, its Resolution Delay); longer here, because Happy Eyeballs still connects to a
 * family that comes late while here it is not used at all, and a server recursing for the two
 * records separately may answer them some way apart; yet small beside a request's deadline (5 s).
 */
export const AAAA_GRACE_MS = 250;

/**
 * How long the A answer is waited for once the AAAA records have answered with addresses: longer
 * than AAAA's, as A is the family preferred. An origin with AAAA records often still listens on
 * IPv4 only, or is not reachable over IPv6 from here: given up on 250 ms after the AAAA answer, a
 * name whose A answer came 400 ms later was connected to over IPv6 alone, and refused. Yet not
 * until the request's deadline: a name whose A query goes unanswered (dropped, as some drop AAAA
 * queries) timed out with its IPv6 addresses known. A second leaves most of a request's deadline
 * (5 s by default) to connect and read.
 */
export const A_GRACE_MS = 1000;

type Answer = PromiseSettledResult<string[]>;

/**
 * Asks `servers` (c-ares, in order, as resolv.conf's nameservers are) for a name's A and AAAA
 * records. /etc/hosts is not read; `localhost` is still the loopback addresses (an embeddings
 * service at http://localhost:11434 keeps working). The query is cancelled when `signal` aborts.
 *
 * Once one family has answered with addresses, the other is waited for its grace more
 * (AAAA_GRACE_MS after A, A_GRACE_MS after AAAA) and then cancelled: the name's addresses are then
 * the first family's, as if it had no records of the other. An answer that would come later is
 * not added to them: the guard checks every address returned, and connects only to those. A
 * family that answers with no address (or fails) leaves the other waited for, until the request's
 * deadline.
 */
export function serversResolver(servers: readonly string[]): Resolver {
  return async (host, signal) => {
    if (LOCALHOST.test(host)) return LOOPBACK;
    const resolver = new DnsResolver();
    resolver.setServers(servers);
    const cancel = (): void => resolver.cancel();
    if (signal?.aborted) throw signal.reason;
    signal?.addEventListener('abort', cancel, { once: true });
    let grace: NodeJS.Timeout | undefined;
    // Both queries are sent at once; settled, so neither rejects unawaited.
    const settled = (query: Promise<string[]>): Promise<Answer> =>
      query.then((value) => ({ status: 'fulfilled', value }), (reason: unknown) => ({ status: 'rejected', reason }));
    const aQuery = settled(resolver.resolve4(host));
    const aaaaQuery = settled(resolver.resolve6(host));
    let other: Answer | undefined;
    try {
      const first = await Promise.race([aQuery.then((answer) => ({ v4: true, answer })), aaaaQuery.then((answer) => ({ v4: false, answer }))]);
      // The first family has answered with addresses: the other, if still missing, gets its grace; else it is waited for.
      const otherQuery = first.v4 ? aaaaQuery : aQuery;
      const graceOver = (): Promise<undefined> =>
        new Promise((resolve) => {
          grace = setTimeout(() => resolve(undefined), first.v4 ? AAAA_GRACE_MS : A_GRACE_MS);
        });
      other = first.answer.status === 'fulfilled' && first.answer.value.length > 0 ? await Promise.race([otherQuery, graceOver()]) : await otherQuery;
      // A's addresses first, whichever came first.
      const answers = [first.answer, other].filter((answer) => answer !== undefined);
      if (!first.v4) answers.reverse();
      const addresses = answers.flatMap((answer) => (answer.status === 'fulfilled' ? answer.value : []));
      const failures = answers.flatMap((answer) => (answer.status === 'rejected' ? [answer.reason as NodeJS.ErrnoException] : []));
      if (addresses.length > 0 || failures.length === 0) return addresses;
      // A failure that is not "no such address" says more (ESERVFAIL, ETIMEOUT, ECONNREFUSED).
      throw failures.find((f) => !NO_ADDRESS.has(f.code ?? '')) ?? failures[0];
    } finally {
      clearTimeout(grace);
      signal?.removeEventListener('abort', cancel);
      // The query given up on: not left to c-ares' retries.
      if (other === undefined) resolver.cancel();
    }
  };
}

/** A lookup shared by the requests for one name (LookupLimiter.runShared). */
interface SharedLookup<T> {
  promise: Promise<T>;
  /** Requests waiting for it. */
  users: number;
  /** It has its slot (and, with the system resolver, a thread it keeps until it returns). */
  started: boolean;
  waited: { queued: boolean };
  /** Drops it from the queue before it started. */
  stop: AbortController;
}

/** Lookups in flight, at most `max`; the rest wait their turn. */
export class LookupLimiter {
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  /** runShared's lookups in flight or waiting for a slot, by key. */
  readonly #shared = new Map<string, SharedLookup<unknown>>();

  constructor(readonly max: number) {}

  /** Lookups running now (each until its resolver returns). */
  get running(): number {
    return this.#running;
  }

  /**
   * Runs `lookup` once a slot is free; rejects with `signal`'s reason as soon as it aborts,
   * waiting or not. The slot is held until the lookup itself settles. `waited` says whether
   * it had to queue.
   */
  async run<T>(lookup: (signal: AbortSignal) => Promise<T>, signal: AbortSignal, waited: { queued: boolean } = { queued: false }): Promise<T> {
    if (signal.aborted) throw signal.reason;
    if (this.#running < this.max) {
      this.#running++;
    } else {
      waited.queued = true;
      // A finishing lookup hands its slot straight to the first in line (see release).
      await new Promise<void>((resolve, reject) => {
        const turn = (): void => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = (): void => {
          const at = this.#waiting.indexOf(turn);
          if (at >= 0) this.#waiting.splice(at, 1);
          reject(signal.reason);
        };
        this.#waiting.push(turn);
        signal.addEventListener('abort', onAbort, { once: true });
      });
      if (signal.aborted) {
        this.#release();
        throw signal.reason;
      }
    }
    const running = Promise.resolve()
      .then(() => lookup(signal))
      .finally(() => this.#release());
    return untilAborted(running, signal);
  }

  /**
   * `run` for lookups that cannot be cancelled (the system resolver's): a lookup of `key` (a host
   * name) already in flight, or waiting for a slot, is joined instead of run again, so a name that
   * never answers holds one slot (one thread) however many requests ask for it, and leaves the
   * others to other names. Each request's wait is bounded by its own signal; a lookup that has
   * not started yet is dropped once every request for it has given up.
   */
  async runShared<T>(key: string, lookup: (signal: AbortSignal) => Promise<T>, signal: AbortSignal, waited: { queued: boolean } = { queued: false }): Promise<T> {
    if (signal.aborted) throw signal.reason;
    let shared = this.#shared.get(key) as SharedLookup<T> | undefined;
    if (!shared) {
      const entry: SharedLookup<T> = { users: 0, started: false, waited: { queued: false }, stop: new AbortController(), promise: undefined as unknown as Promise<T> };
      entry.promise = this.run(
        (slotSignal) => {
          // Its slot came as its last request gave up: no thread taken for nobody.
          if (entry.stop.signal.aborted) return Promise.reject(entry.stop.signal.reason);
          entry.started = true;
          return lookup(slotSignal);
        },
        entry.stop.signal,
        entry.waited,
      ).finally(() => {
        if (this.#shared.get(key) === entry) this.#shared.delete(key);
      });
      entry.promise.catch(() => undefined);
      this.#shared.set(key, entry);
      shared = entry;
    }
    shared.users++;
    try {
      return await untilAborted(shared.promise, signal);
    } finally {
      waited.queued ||= shared.waited.queued;
      // Nobody wants it any more and it has no thread yet: give up its place in the queue.
      if (--shared.users === 0 && !shared.started) shared.stop.abort(signal.reason);
    }
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#running--;
  }
}

/** The promise, or a rejection as soon as the signal aborts (the system's lookup cannot be cancelled). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
