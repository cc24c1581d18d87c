/**
 * undici Agents that connect to one host only through the addresses the guard checked for it.
 *
 * Each Agent's connector `lookup` answers with those addresses and nothing else (and refuses any
 * other host name), so a socket can only go to a checked address; TLS keeps the host name for
 * SNI and certificate checks because the connector still connects "to the host". Agents are
 * kept for reuse (keep-alive: a refresh round fetching many cards from one origin does not pay a
 * new connection each time) while the same host resolves to the same checked addresses; a new
 * answer gets its own Agent. The least recently used are closed beyond `max`.
 *
 * Requests go through each Agent composed with the content-coding guard (content-codings.ts),
 * which keeps undici's fetch from decoding an answer in zstd (its body refused if it is read).
 */
import type { LookupAddress, LookupOneOptions } from 'node:dns';
import type { Agent, Dispatcher } from 'undici';
import { normaliseHost } from './address-policy.js';
import { hideRefusedCodings } from './content-codings.js';

let undici: Promise<typeof import('undici')> | undefined;
let undiciIn = false;
/**
 * undici, imported on first use: loading it takes a second or more on a busy machine, and a
 * registry that fetches nothing should not start slower for it. A load that fails is not kept:
 * kept, its rejection failed every later outbound request until a restart (a file system that
 * failed a read once, too many open files); the next request tries again.
 */
export const loadUndici = (): Promise<typeof import('undici')> =>
  (undici ??= import('undici').then(
    (module) => {
      undiciIn = true;
      return module;
    },
    (error: unknown) => {
      undici = undefined;
      throw error;
    },
  ));
/** undici has loaded: a request needs no wait for it. */
export const undiciLoaded = (): boolean => undiciIn;

export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

export interface PinnedAgentsOptions {
  ca?: string | Buffer | (string | Buffer)[];
  /** Agents kept at most (default 64). */
  max?: number;
}

/** An Agent, closed by the pool, and what requests are sent through: it with the coding guard. */
interface Pinned {
  agent: Agent;
  dispatcher: Dispatcher;
}

export class PinnedAgents {
  /** Insertion order is recency order: a used Agent is moved to the end. */
  private readonly agents = new Map<string, Pinned>();
  private readonly max: number;

  constructor(private readonly options: PinnedAgentsOptions) {
    this.max = Math.max(1, options.max ?? 64);
  }

  /**
   * The Agent for `url`'s origin pinned to `addresses`, for requests whose deadline is
   * `deadlineMs`: its connect timeout (connection and TLS handshake) is that deadline. The
   * connect timeout is an Agent's, shared by every request on it, and an Agent made with the
   * fetcher's default cut a request given a longer deadline (the embeddings service's 10 s) at
   * the default while it connected; requests with another deadline get an Agent of their own.
   * The answer is the dispatcher to send through (the Agent with the content-coding guard).
   */
  async for(url: URL, addresses: readonly CheckedAddress[], deadlineMs: number): Promise<Dispatcher> {
    // Loaded before the lookup below, which then runs without a pause: two concurrent calls for
    // one key cannot both miss and create two Agents.
    const { Agent: AgentClass } = await loadUndici();
    const key = `${url.protocol}//${url.host}|${addresses.map((a) => a.address).sort().join(',')}|${deadlineMs}`;
    let pinned = this.agents.get(key);
    if (pinned) {
      this.agents.delete(key);
    } else {
      const agent = this.create(url, addresses, deadlineMs, AgentClass);
      pinned = { agent, dispatcher: agent.compose(hideRefusedCodings) };
      while (this.agents.size >= this.max) {
        const [oldest, old] = this.agents.entries().next().value as [string, Pinned];
        this.agents.delete(oldest);
        // In-flight requests on it finish; then it closes.
        old.agent.close().catch(() => undefined);
      }
    }
    this.agents.set(key, pinned);
    return pinned.dispatcher;
  }

  async close(): Promise<void> {
    const all = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(all.map(({ agent }) => agent.destroy().catch(() => undefined)));
  }

  private create(url: URL, addresses: readonly CheckedAddress[], connectTimeoutMs: number, AgentClass: typeof Agent): Agent {
    const expected = normaliseHost(url.hostname.replace(/^\[|\]$/g, ''));
    const lookup = (
      hostname: string,
      options: LookupOneOptions & { all?: boolean },
      callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
    ): void => {
      const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family || 0;
      const usable = addresses.filter((a) => family === 0 || a.family === family);
      if (normaliseHost(hostname) !== expected || usable.length === 0) {
        const error: NodeJS.ErrnoException = new Error(`no checked address for ${hostname}`);
        error.code = 'ENOTFOUND';
        callback(error, '', 0);
        return;
      }
      if (options.all) callback(null, usable.map((a) => ({ address: a.address, family: a.family })));
      else callback(null, usable[0]!.address, usable[0]!.family);
    };
    const { ca } = this.options;
    return new AgentClass({
      // The request's deadline (an AbortSignal) ends it first; this ends the connection attempt too.
      connect: { lookup: lookup as never, timeout: connectTimeoutMs, ...(ca ? { ca } : {}) },
      // Off: every request carries its own deadline (an AbortSignal), which may be longer than the
      // fetcher's default (the embeddings service's 10 s); an Agent's timeouts, shared by every
      // request on it, cut those at the default and reported the request's own deadline as missed.
      headersTimeout: 0,
      bodyTimeout: 0,
      // Idle connections are kept briefly: long enough for a round of refreshes, not for hours.
      keepAliveTimeout: 4000,
      keepAliveMaxTimeout: 10_000,
      connections: 16,
    });
  }
}
