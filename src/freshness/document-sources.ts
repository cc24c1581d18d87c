/**
 * DocumentSources over the outbound guard: agent cards by URL (registration, refresh, probe)
 * and MCP servers' tools (fetchTools). Whatever comes back becomes a Subject exactly like an
 * uploaded document — the same size and depth bounds, the text kept as it was sent — so the
 * service runs the same checks on it as on an inline registration.
 *
 * Failures become SourceFailure: the code and message a registration is declined with, and what
 * the failure means for health (unreachable: nothing usable came back; invalid: a body came
 * back, but not a valid document).
 */
import { badArguments } from '../contract/errors.js';
import type { DocumentReference, EntrySource } from '../contract/freshness.js';
import type { Subject } from '../contract/subject.js';
import { clearableTimeout } from '../lib/clearable-timeout.js';
import { clipped } from '../lib/clipped.js';
import { isObject, quote } from '../lib/json.js';
import { nestsDeeperThan } from '../lib/json-depth.js';
import { FetchError, type Fetcher, type FetchFailureReason, type FetchFunction, type FetchPurpose, type JsonDocument } from '../net/index.js';
import { SHUTDOWN_REASON, SourceFailure, type DocumentSources, type FetchedDocument, type ProbedCard, type Refetched } from '../registry/document-sources.js';
import type { StoredEntry } from '../storage/types.js';
import { formatBytes } from '../validation/size.js';
import { listMcpTools, ToolListError } from './mcp-tools.js';

export interface DocumentSourcesOptions {
  maxDocumentBytes: number;
  maxJsonDepth: number;
  /** Deadline of one fetch, and of one whole MCP exchange (connect + every tools/list page). */
  timeoutMs: number;
  /** Sent to MCP servers as the client's version. */
  clientVersion: string;
}

/** The protocol version the registry asks agents for; cards of v0.3 are accepted as well. */
const PREFERRED_CARD_VERSION = '1.0';
const A2A_VERSION_HEADER = 'a2a-version';

/** The well-known path of an A2A agent card (A2A spec, "Agent Discovery"). */
export const WELL_KNOWN_CARD_PATH = '/.well-known/agent-card.json';

/**
 * The card URL for what a caller gave: the card's own URL (a path ending in .json, or under
 * /.well-known/), or a base URL the well-known path is appended to — as the A2A SDK's
 * `createFromUrl(base)` does, so a host serving several agents under path prefixes works too.
 */
export function cardUrlFor(given: string): URL {
  const url = new URL(given);
  url.hash = '';
  if (url.pathname.endsWith('.json') || url.pathname.includes('/.well-known/')) return url;
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${WELL_KNOWN_CARD_PATH}`;
  return url;
}

/** WebSocket URLs have the origin of the HTTP URL they upgrade from (RFC 6455 §3): that is where the card is. */
const HTTP_SCHEME_OF: Record<string, string> = { 'http:': 'http:', 'https:': 'https:', 'ws:': 'http:', 'wss:': 'https:' };

/**
 * The well-known card URL at the origin of an inline agent's primary interface (REGISTRY_PROBE),
 * or undefined when that interface has no such origin: a placeholder ("{BASE_URL}/a2a") is
 * stored as written, and a card with one is registered, with a warning.
 */
export function probeUrlFor(identityUrl: string): URL | undefined {
  let base: URL;
  try {
    base = new URL(identityUrl);
  } catch {
    return undefined;
  }
  const scheme = HTTP_SCHEME_OF[base.protocol];
  if (!scheme || !base.host) return undefined;
  return new URL(`${scheme}//${base.host}${WELL_KNOWN_CARD_PATH}`);
}

/** Reasons where something came back, but not a usable document: the entry is invalid, not unreachable. */
const INVALID_REASONS = new Set<FetchFailureReason>(['content-type', 'invalid-json', 'too-large']);

export class FetchingDocumentSources implements DocumentSources {
  constructor(
    private readonly fetcher: Fetcher,
    private readonly options: DocumentSourcesOptions,
  ) {}

  async resolve(reference: DocumentReference, signal?: AbortSignal): Promise<FetchedDocument> {
    if (reference.type === 'agent-card-url') {
      const cardUrl = cardUrlFor(cardUrlArgument(reference.url).href);
      const doc = await this.fetchCard(cardUrl, 'agent-card', {}, signal);
      if (doc.notModified) throw new Error('unreachable: an unconditional request answered 304');
      return { subject: this.cardSubject(doc), source: sourceOf(doc, cardUrl.href) };
    }
    return this.fetchTools(reference.server, 'mcp', signal);
  }

  async refetch(entry: StoredEntry & { source: EntrySource }, signal?: AbortSignal): Promise<Refetched> {
    if (entry.kind === 'mcp-server') {
      const stored = JSON.parse(entry.documentText) as unknown;
      const server = isObject(stored) ? stored.mcpServer : undefined;
      const storedTools = isObject(stored) && isObject(stored.toolspec) ? stored.toolspec.tools : undefined;
      const fetched = await this.fetchTools(server, 'refresh', signal, storedTools);
      return { notModified: false, ...fetched };
    }
    const doc = await this.fetchCard(
      new URL(entry.source.url),
      'refresh',
      { ifNoneMatch: entry.source.etag, ifModifiedSince: entry.source.lastModified },
      signal,
    );
    if (doc.notModified) {
      const source: EntrySource = { ...entry.source, fetchedAt: new Date().toISOString() };
      // A 304 may carry fresh validators (RFC 9110: the server sends what a 200 would have).
      Object.assign(source, keptValidators(doc));
      return { notModified: true, source };
    }
    return { notModified: false, subject: this.cardSubject(doc), source: sourceOf(doc, entry.source.url) };
  }

  async probe(entry: StoredEntry, signal?: AbortSignal): Promise<ProbedCard> {
    const url = probeUrlFor(entry.identityUrl);
    if (!url) {
      throw new SourceFailure(
        'FETCH_FAILED',
        `The primary interface URL ${quote(entry.identityUrl, 200)} is not an absolute http(s) or ws(s) URL, so there is no well-known agent card to probe. Replace it with the agent's public URL and register the card again.`,
        'unreachable',
        'invalid-url',
      );
    }
    const doc = await this.fetchCard(url, 'probe', {}, signal);
    if (doc.notModified) throw new Error('unreachable: an unconditional request answered 304');
    this.checkDepth(doc.text, url.href);
    return { url: url.href, value: doc.value, sizeBytes: doc.bytes, written: { text: doc.text, at: '' } };
  }

  private async fetchCard(
    url: URL,
    purpose: FetchPurpose,
    conditional: { ifNoneMatch?: string; ifModifiedSince?: string },
    signal?: AbortSignal,
  ): Promise<JsonDocument | { notModified: true; etag?: string; lastModified?: string }> {
    try {
      return await this.fetcher.getJson(url, {
        purpose,
        signal,
        // A2A-Version asks a server that serves several card versions for the v1.0 card (spec
        // 1.0, "Service Parameters"); a v0.3 server ignores it and its v0.3 card is accepted too.
        headers: { accept: 'application/json, application/a2a+json;q=0.9', [A2A_VERSION_HEADER]: PREFERRED_CARD_VERSION },
        ...(conditional.ifNoneMatch ? { ifNoneMatch: conditional.ifNoneMatch } : {}),
        ...(conditional.ifModifiedSince ? { ifModifiedSince: conditional.ifModifiedSince } : {}),
      });
    } catch (error) {
      throw this.failure(error, url.href, 'agent card');
    }
  }

  /** The fetched card as an upload: its text as sent, measured in bytes, bounded in depth. */
  private cardSubject(doc: JsonDocument): Subject {
    this.checkDepth(doc.text, doc.url);
    return { type: 'agent-card', card: doc.value, documentText: doc.text, sizeBytes: doc.bytes, written: { text: doc.text, at: '' } };
  }

  private checkDepth(text: string, url: string): void {
    if (nestsDeeperThan(text, this.options.maxJsonDepth)) {
      throw new SourceFailure(
        'TOO_LARGE',
        `The document at ${url} nests deeper than ${this.options.maxJsonDepth} levels; agent cards need a handful.`,
        'invalid',
        'too-deep',
        [{ path: '', message: `nested deeper than ${this.options.maxJsonDepth} levels` }],
      );
    }
  }

  /** `storedTools`: a refresh's last good revision, whose order the tools keep (see inStoredOrder). */
  private async fetchTools(server: unknown, purpose: 'mcp' | 'refresh', signal?: AbortSignal, storedTools?: unknown): Promise<FetchedDocument> {
    if (!isObject(server) || typeof server.url !== 'string') {
      throw new SourceFailure('BAD_REQUEST', '"fetchTools" needs the server\'s metadata with its URL: {"mcpServer": {"name": "...", "url": "https://..."}, "fetchTools": true}.', 'invalid', 'BAD_REQUEST', [
        { path: '/mcpServer/url', message: 'required' },
      ]);
    }
    const url = serverUrl(server.url);
    // Started once the fetcher's own modules are loaded (undici, on its first request: a second or
    // two on a loaded machine), as a webhook's retry window is (watch-push.ts): counted in it, a
    // process's first fetchTools failed as a timeout of a server that answered at once. A failure
    // to load is the first request's to tell.
    await this.fetcher.ready?.().catch(() => undefined);
    // One deadline for the whole exchange: initialize, every page, the goodbye. Its timer is
    // cleared when the exchange ends (below): left for its whole time (REGISTRY_FETCH_TIMEOUT_MS),
    // it held the registration's request (the async context it was made in) that long after the answer.
    // Its message is what the guard tells when it ends a request: the exchange's deadline, not that request's.
    const deadline = clearableTimeout(this.options.timeoutMs, `REGISTRY_FETCH_TIMEOUT_MS: ${this.options.timeoutMs} ms for the whole MCP exchange`);
    // Ends the exchange at once when an answer's body fails (see below).
    const bodyFailed = new AbortController();
    const combined = AbortSignal.any([...(signal ? [signal] : []), deadline.signal, bodyFailed.signal]);
    // The MCP SDK does not always pass on why its fetch failed (a DNS lookup that timed out
    // reached the caller as a bare abort): the exchange's first fetch failure is kept (those
    // after it, such as the goodbye's, follow from it). A request sent once the exchange has
    // ended (the SDK's notice that it gave up on a request, sent as the deadline passed) fails
    // because it ended, before its lookup: it is not kept, or a server whose answer never ended
    // was told as "looking up <host> took longer than 0.1 s".
    const guarded = this.fetcher.fetchFunction({ purpose, signal: combined, maxBytes: this.options.maxDocumentBytes * 4 + 64 * 1024 });
    let firstFetchError: FetchError | undefined;
    // The SDK reads an event stream's failure (cut at the size cap, or by the deadline) as a lost
    // connection: it tells no caller and leaves the request waiting for an answer, so a stream
    // past the cap failed as a timeout, a deadline later. The failure now ends the exchange.
    // A body cut because the exchange is closing ("aborted": the SDK closed its streams) is not one.
    const onBodyFailure = (error: unknown): void => {
      const fetchError = findFetchError(error);
      if (!fetchError || fetchError.reason === 'aborted') return;
      firstFetchError ??= fetchError;
      bodyFailed.abort(fetchError);
    };
    const remembering: FetchFunction = async (input, init) => {
      const late = combined.aborted;
      try {
        const response = await guarded(input, init);
        return late ? response : withBodyFailureTold(response, onBodyFailure);
      } catch (error) {
        if (!late) firstFetchError ??= findFetchError(error);
        throw error;
      }
    };
    let tools: unknown[];
    try {
      tools = await listMcpTools(url, {
        fetch: remembering,
        signal: combined,
        timeoutMs: this.options.timeoutMs,
        maxBytes: this.options.maxDocumentBytes,
        clientVersion: this.options.clientVersion,
      });
    } catch (error) {
      if (error instanceof ToolListError) {
        // details[0].rule names the reason, as for every failed fetch.
        throw new SourceFailure(error.reason === 'too-large' ? 'TOO_LARGE' : 'FETCH_FAILED', `Could not list the tools of ${url.href}: ${error.message}.`, 'invalid', error.reason, [
          { path: '', message: error.message, rule: error.reason },
        ]);
      }
      if (!findFetchError(error)) {
        if (firstFetchError) throw this.failure(firstFetchError, url.href, 'MCP server');
        if (deadline.signal.aborted) {
          const message = `no complete answer within ${this.options.timeoutMs} ms (REGISTRY_FETCH_TIMEOUT_MS, for the whole exchange)`;
          throw new SourceFailure('FETCH_FAILED', `Could not list the tools of ${url.href}: ${message}.`, 'unreachable', 'timeout', [{ path: '', message, rule: 'timeout' }]);
        }
      }
      throw this.failure(error, url.href, 'MCP server');
    } finally {
      deadline.clear();
    }
    const toolspec = { tools: inStoredOrder(tools, storedTools) };
    const toolspecText = JSON.stringify(toolspec);
    return {
      subject: { type: 'mcp-server', server, toolspec, toolspecText, sizeBytes: Buffer.byteLength(toolspecText) },
      source: { url: url.href, fetchedAt: new Date().toISOString() },
    };
  }

  /** A fetch (or MCP) failure as the SourceFailure a registration is declined with. */
  private failure(error: unknown, url: string, what: string): SourceFailure {
    if (error instanceof SourceFailure) return error;
    const fetchError = findFetchError(error);
    if (!fetchError) {
      // What a server sent may be in it (an MCP error's message): bounded, as health messages are.
      const said = error instanceof Error ? error.message : String(error);
      const message = clipped(said, 300);
      return new SourceFailure('FETCH_FAILED', `Could not get the ${what} at ${url}: ${message}.`, 'unreachable', 'protocol', [{ path: '', message, rule: 'protocol' }]);
    }
    const reason = fetchError.reason;
    if (reason === SHUTDOWN_REASON) {
      // The registry's own doing: not the agent's FETCH_FAILED.
      return new SourceFailure('UNAVAILABLE', `The registry is shutting down: the fetch of the ${what} at ${url} was cut short. Send the request again (to another replica, or once it is back).`, 'unreachable', reason, [
        { path: '', message: fetchError.message, rule: reason },
      ]);
    }
    const health = INVALID_REASONS.has(reason) ? 'invalid' : 'unreachable';
    const details = [{ path: '', message: fetchError.message, rule: reason }];
    if (reason === 'too-large') {
      return new SourceFailure(
        'TOO_LARGE',
        `The ${what} at ${url} is larger than ${formatBytes(this.options.maxDocumentBytes)} (the document size limit). Shorten it: the registry takes it at the next registration or refresh.`,
        health,
        reason,
        details,
      );
    }
    if (reason === 'invalid-json') return new SourceFailure('VALIDATION_FAILED', `The ${what} at ${url} is not valid JSON: ${fetchError.message}.`, health, reason, details);
    const hint = fetchError.refused ? ' Give a public http(s) URL.' : '';
    return new SourceFailure('FETCH_FAILED', `Could not fetch the ${what}: ${fetchError.message}.${hint}`, health, reason, details, fetchError.retryAfterMs);
  }
}

const toolName = (tool: unknown): unknown => (isObject(tool) ? tool.name : undefined);

/**
 * The fetched tools in the order of the stored revision, those it lacks after them in the
 * server's order. The order of tools/list means nothing (MCP: a list of tools, looked up by
 * name), and servers that build it from a map or in parallel send another order each time:
 * compared as sent, every refresh of such a server made a new revision (and an 'updated' watch
 * event) with nothing changed. Kept as the server sent them when names are missing or repeated
 * (the validator says so; no order is safe to impose then).
 */
function inStoredOrder(fetched: unknown[], stored: unknown): unknown[] {
  if (!Array.isArray(stored)) return fetched;
  const byName = new Map<string, unknown>();
  for (const tool of fetched) {
    const name = toolName(tool);
    if (typeof name !== 'string' || byName.has(name)) return fetched;
    byName.set(name, tool);
  }
  const ordered: unknown[] = [];
  for (const tool of stored) {
    const name = toolName(tool);
    const same = typeof name === 'string' ? byName.get(name) : undefined;
    if (same === undefined) continue;
    ordered.push(same);
    byName.delete(name as string);
  }
  return [...ordered, ...byName.values()];
}

/**
 * A register's `url` argument: refused as an argument of the operation (badArguments), which each
 * door roots where its request has it (/parts/0/data/register/url, /arguments/url). Left at /url
 * it read as the card's own `url` field, where a document's findings are named.
 */
function cardUrlArgument(text: string): URL {
  const url = httpUrl(text);
  if (!url) {
    throw badArguments(`"url" must be an absolute http(s) URL: the agent card's URL, or its base URL (got ${quote(text, 200)}).`, [
      { path: '/url', message: 'not an absolute http(s) URL' },
    ]);
  }
  return url;
}

/** An absolute http(s) URL, or undefined. */
function httpUrl(text: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
}

/** The MCP server's URL in its document ({mcpServer, toolspec}), named at the document's path as its findings are. */
function serverUrl(text: string): URL {
  const url = httpUrl(text);
  if (!url) {
    throw new SourceFailure('BAD_REQUEST', `"mcpServer/url" must be an absolute http(s) URL: the MCP server's Streamable HTTP endpoint (got ${quote(text, 200)}).`, 'invalid', 'BAD_REQUEST', [
      { path: '/mcpServer/url', message: 'not an absolute http(s) URL' },
    ]);
  }
  return url;
}

function sourceOf(doc: JsonDocument, url: string): EntrySource {
  return { url, fetchedAt: new Date().toISOString(), ...keptValidators(doc) };
}

/**
 * Validators longer than any real one (an HTTP-date is 29 characters; ETags are hashes or
 * versions) are not kept. They are stored with the entry and shown in its `source` on every
 * entry and search hit: a server could send an ETag as long as its header limit allows (15 KB),
 * more than the card itself may weigh, on each of its hits. Dropping one costs only the next
 * refresh its conditional request.
 */
const MAX_ETAG_CHARS = 256;
const MAX_LAST_MODIFIED_CHARS = 64;

function keptValidators(doc: { etag?: string; lastModified?: string }): { etag?: string; lastModified?: string } {
  const kept: { etag?: string; lastModified?: string } = {};
  if (doc.etag && doc.etag.length <= MAX_ETAG_CHARS) kept.etag = doc.etag;
  if (doc.lastModified && doc.lastModified.length <= MAX_LAST_MODIFIED_CHARS) kept.lastModified = doc.lastModified;
  return kept;
}

/**
 * The response with a body that, when reading it fails, calls `onFailure` with the error before
 * its reader sees it. Pulled only when read, as the guard's own body: nothing is read ahead.
 */
function withBodyFailureTold(response: Response, onFailure: (error: unknown) => void): Response {
  if (!response.body) return response;
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (error) {
          onFailure(error);
          controller.error(error);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  const told = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  Object.defineProperty(told, 'url', { value: response.url });
  return told;
}

/** The FetchError inside an error the MCP SDK may have wrapped. */
function findFetchError(error: unknown): FetchError | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof FetchError) return e;
  }
  return undefined;
}
