/**
 * Text embeddings for hybrid ranking, from an OpenAI-compatible `/v1/embeddings` service the
 * operator names (REGISTRY_EMBEDDINGS_URL): `POST {"model", "input": [texts]}` answered by
 * `{"data": [{"index", "embedding": [numbers]}]}` (OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio,
 * llama.cpp's server, text-embeddings-inference all speak it).
 *
 * Requests go through the registry's outbound guard (src/net, the Fetcher's `fetchFunction`,
 * purpose `embeddings`): the composition root allows the operator's URL for that purpose and
 * origin only (the service is often on localhost or a private network), so a redirect elsewhere
 * is refused like any other request. Bounded: a timeout per request, a cap on the answer's size,
 * and errors that say which service failed and how.
 */
import { clipped } from '../lib/clipped.js';
import { codePointLength } from '../lib/code-points.js';
import { shownUrl, withUrlShown } from '../lib/url-password.js';
import type { FetchFunction, FetchOptions } from '../net/fetcher.js';


export interface Embedder {
  /** One vector per text, in order; all of one length. Rejects with EmbeddingError. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
  /** Where the vectors come from, for messages. */
  readonly describe: string;
}

export class EmbeddingError extends Error {}

export interface OpenAIEmbeddingsOptions {
  /**
   * The outbound guard's fetch for these options (Fetcher.fetchFunction), which must allow the
   * service's origin for purpose `embeddings` (GuardedFetcher's operatorEndpoints).
   */
  fetch: (options: FetchOptions) => FetchFunction;
  /** The service: a base URL (`http://host:port`, `.../v1`) or the full `.../embeddings` endpoint. */
  url: string;
  model: string;
  /** Sent as `Authorization: Bearer <key>`. */
  apiKey?: string;
  /** Asked of services that can shorten vectors (OpenAI's `dimensions`). */
  dimensions?: number;
  /** Per request. Default 10 s. */
  timeoutMs?: number;
  /** Largest answer read, in bytes. Default 64 MiB. */
  maxResponseBytes?: number;
}

/** The endpoint for a configured URL: `.../embeddings` as given, else `/v1/embeddings` under it. */
export function embeddingsEndpoint(url: string): string {
  const u = new URL(url);
  const p = u.pathname.replace(/\/+$/, '');
  if (p.endsWith('/embeddings')) return u.toString();
  u.pathname = p.endsWith('/v1') ? `${p}/embeddings` : `${p}/v1/embeddings`;
  return u.toString();
}

export class OpenAIEmbeddings implements Embedder {
  readonly describe: string;
  private readonly endpoint: string;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly fetch: FetchFunction;

  constructor(private readonly o: OpenAIEmbeddingsOptions) {
    this.endpoint = embeddingsEndpoint(o.url);
    // Shown with its query values masked (a key given as ?api-key=...), in every log line and
    // message that names the service.
    this.describe = `embeddings service ${shownUrl(this.endpoint, 'at REGISTRY_EMBEDDINGS_URL')} (model ${o.model})`;
    this.timeoutMs = o.timeoutMs ?? 10_000;
    this.maxBytes = o.maxResponseBytes ?? 64 * 1024 * 1024;
    // The guard's deadline covers the whole request, body included; its cap, the body.
    this.fetch = o.fetch({ purpose: 'embeddings', timeoutMs: this.timeoutMs, maxBytes: this.maxBytes });
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const body: Record<string, unknown> = { model: this.o.model, input: texts, encoding_format: 'float' };
    if (this.o.dimensions) body.dimensions = this.o.dimensions;
    let res: Response;
    try {
      res = await this.fetch(this.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.o.apiKey ? { authorization: `Bearer ${this.o.apiKey}` } : {}) },
        body: JSON.stringify(body),
        signal,
        redirect: 'error',
      });
    } catch (err) {
      throw new EmbeddingError(`${this.describe}: ${this.failure(err, 'no answer', signal)}`);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw new EmbeddingError(`${this.describe}: ${this.failure(err, 'no complete answer', signal)}`);
    }
    if (!res.ok) throw new EmbeddingError(`${this.describe} answered HTTP ${res.status}: ${this.answerStart(text, 200)}`);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new EmbeddingError(`${this.describe} answered something that is not JSON: ${this.answerStart(text, 100)}`);
    }
    return parseEmbeddings(json, texts.length, this.describe);
  }

  /**
   * What went wrong, in the client's words for a timeout of its own or an oversized answer (the
   * guard's FetchError reasons). Every timeout was told as this client's own ("within 10000 ms"):
   * a search's 1.5 s for its query's embedding and the 30 s the registry gives its HTTP client to
   * load among them. A caller's deadline (`signal`'s) and a request never sent are told in the
   * guard's words: it says whose deadline passed, in the signal's words (hybrid.ts's say how long
   * a search waits), or why nothing was sent.
   */
  private failure(err: unknown, late: string, signal: AbortSignal | undefined): string {
    const { reason, notSent } = err as { reason?: unknown; notSent?: unknown };
    if (reason === 'timeout' && notSent !== true && !signal?.aborted) return `${late} within ${this.timeoutMs} ms`;
    if (reason === 'too-large') return `answer is over the ${this.maxBytes}-byte limit`;
    return this.masked((err as Error).message);
  }

  /**
   * The start of an answer as a message quotes it: at most `max` characters (code points), masked
   * before it is cut. Cut by UTF-16 units, it could end in half a surrogate pair (U+FFFD in every
   * log line), and cut before masking, a key it quoted across the cut was shown in part.
   */
  private answerStart(text: string, max: number): string {
    const guard = Math.max(this.o.apiKey?.length ?? 0, this.endpoint.length);
    if (text.length <= 2 * max + 2 * guard) return clipped(this.masked(text), max);
    // A bounded start is masked (an answer may be megabytes), less its last `guard` units, where a
    // secret the bound cut in two (so not masked) would be; and not half a surrogate pair.
    const start = this.masked(text.slice(0, 2 * max + 2 * guard)).slice(0, -guard).replace(/[\ud800-\udbff]$/, '');
    return codePointLength(start) > max ? clipped(start, max) : `${start}…`;
  }

  /**
   * `text` (an error's message, the start of an answer) with the secrets the registry sends
   * masked: the outbound guard's messages name the URL fetched in full, and a service may quote
   * the key it was sent ("bad key ..."). Those messages are logged. The key is masked whatever
   * its length: a short one ("ollama", a local service's placeholder) may be a real secret too,
   * and masking it where it is only a word of the message costs that message a word.
   */
  private masked(text: string): string {
    const shown = withUrlShown(text, this.endpoint, shownUrl(this.endpoint, 'REGISTRY_EMBEDDINGS_URL'));
    return this.o.apiKey ? shown.split(this.o.apiKey).join('***') : shown;
  }
}

/** `{"data": [{"index", "embedding"}]}` → vectors in input order, checked. */
export function parseEmbeddings(json: unknown, count: number, who = 'embeddings service'): Float32Array[] {
  const data = typeof json === 'object' && json !== null ? (json as { data?: unknown }).data : undefined;
  if (!Array.isArray(data)) throw new EmbeddingError(`${who} answered without a "data" array`);
  if (data.length !== count) throw new EmbeddingError(`${who} answered ${data.length} embeddings for ${count} texts`);
  const out: (Float32Array | undefined)[] = new Array(count);
  let dims = -1;
  data.forEach((item: unknown, i) => {
    const o = typeof item === 'object' && item !== null ? (item as { index?: unknown; embedding?: unknown }) : {};
    const at = typeof o.index === 'number' && Number.isInteger(o.index) ? o.index : i;
    const v = o.embedding;
    if (at < 0 || at >= count || out[at]) throw new EmbeddingError(`${who}: data[${i}] has a bad or repeated "index"`);
    if (!Array.isArray(v) || v.length === 0 || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      throw new EmbeddingError(`${who}: data[${i}].embedding is not a list of numbers (base64 answers are not supported)`);
    }
    if (dims >= 0 && v.length !== dims) throw new EmbeddingError(`${who}: embeddings of different lengths (${dims} and ${v.length})`);
    dims = v.length;
    out[at] = Float32Array.from(v as number[]);
  });
  return out as Float32Array[];
}
