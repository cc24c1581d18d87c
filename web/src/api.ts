/**
 * The page's only way to the registry: the registry's own A2A HTTP+JSON binding
 * (`POST /a2a/rest/message:send`, `A2A-Version: 1.0`), on the same origin. So the page gets
 * exactly what every other A2A client gets — the same operations, authentication, rate limits,
 * answers and errors — and there is no second API to keep in step.
 */
import type {
  EntryInterface,
  EntryKind,
  EntryView as ContractEntryView,
  Finding,
  RegistrationResult as ContractRegistrationResult,
  RevisionSummary,
  SearchHit as ContractSearchHit,
  SearchMatch,
  SearchPage as ContractSearchPage,
  ValidationResultBody,
} from '../../src/contract/types';
import { config } from './config';
import { deadline, deadlineText } from './deadline';
import { boundedWait, holdUntil, rateWaitLeft, retryAfterSeconds, type RateLimit } from './rate-wait';
import { savedToken } from './token';

export { rateWaitLeft, type RateLimit };

export type { Finding };

/** A request the registry declined (a REJECTED task), or one that never reached it. */
export class RegistryError extends Error {
  constructor(
    /** The contract's error code (VALIDATION_FAILED, NOT_FOUND, ...), or HTTP_<status> / NETWORK. */
    readonly code: string,
    message: string,
    readonly details: Finding[] = [],
    readonly retryAfterSeconds?: number,
    /**
     * Refused before the registry read the request (HTTP 429 of its flood guard, which counts
     * every request from the address, or a proxy's): its wait holds every asking, not only the
     * kind of operation refused.
     */
    readonly wholeRequest = false,
  ) {
    super(message);
    this.name = 'RegistryError';
    // However long the wait named (a task's retryAfterSeconds, a header), the page holds it a minute at most (rate-wait.ts).
    const wait = boundedWait(retryAfterSeconds);
    this.notBefore = wait === undefined ? undefined : Date.now() + wait * 1000;
  }

  /** When asking again may be answered (Date.now() time), for a refusal that names a wait (a rate limit's Retry-After). */
  readonly notBefore: number | undefined;
}

/**
 * A read not asked: the registry needs a token to read (REGISTRY_PUBLIC_READ=false) and this tab
 * has none. The way in to such a registry, not a failure: said as a prompt beside the token
 * field (ErrorNotice), not as an alert that the search or the entry failed.
 */
export class TokenNeeded extends RegistryError {
  constructor() {
    super('UNAUTHENTICATED', 'This registry needs a registry token to read: type yours below.');
  }
}

/** A document uploaded as a file part, exactly as the person typed or dropped it. */
export interface UploadedDocument {
  text: string;
  filename: 'agent-card.json' | 'toolspec.json';
  /**
   * What the person gave, as a message names it: "The pasted document", "The file “card.json”".
   * The registry can only name the file part the page sent, under a name the page chose.
   */
  given: string;
}

/** The document a request carries, as the person gave it; `given` names it in messages ("The pasted document"). */
export interface GivenDocument {
  text: string;
  given: string;
}

export interface CallOptions {
  token?: string;
  signal?: AbortSignal;
  file?: UploadedDocument;
  /** The document the request carries inline (not as a file part), for the messages that name it. */
  document?: GivenDocument;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** crypto.randomUUID exists only in secure contexts; a registry may be served over plain http. */
function messageId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `web-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

function base64Utf8(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * A finding about the uploaded document as a path in that document: the registry names the
 * message part the page sent it in (`/parts/1/raw`: too large, say), which means nothing to
 * the person who typed it.
 */
const inDocument = (finding: Finding): Finding => (/^\/parts\/1(\/raw)?$/.test(finding.path) ? { ...finding, path: '' } : finding);

const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;
const bytes = (n: number) => `${n.toLocaleString('en-US')} byte${n === 1 ? '' : 's'}`;

/** A document over the registry's size limit, as the person gave it, with the limit and what to do. */
function tooLarge(document: GivenDocument): string {
  const size = utf8Bytes(document.text);
  let compact: number | undefined;
  try {
    compact = utf8Bytes(JSON.stringify(JSON.parse(document.text)));
  } catch {
    /* not JSON: no smaller form to offer */
  }
  const said = `${document.given} is ${bytes(size)}; this registry takes documents of at most ${bytes(config.maxDocumentBytes)}.`;
  return compact !== undefined && compact <= config.maxDocumentBytes
    ? `${said} Without its whitespace it is ${bytes(compact)}: remove the indentation and line breaks (minify it), then try again.`
    : `${said} Shorten descriptions and examples, drop fields the registry does not need, or split it, then try again.`;
}

/**
 * The registry's refusal of the uploaded document in the person's terms. It names the file part
 * the page sent ("The uploaded document "agent-card.json"", "File part 1 ("agent-card.json")"),
 * a name the person never gave: they pasted the text, or chose a file of another name. Past the
 * size limit, an indented document that fits once minified is told so, as the registry tells a
 * data part.
 */
function aboutUpload(code: string, message: string, file: UploadedDocument): string {
  if (code === 'TOO_LARGE' && utf8Bytes(file.text) > config.maxDocumentBytes) return tooLarge(file);
  return message.replace(`The uploaded document "${file.filename}"`, file.given).replace(`File part 1 ("${file.filename}")`, file.given);
}

const dataOf = (parts: unknown): Json | undefined =>
  Array.isArray(parts) ? (parts.find((p): p is { data: Json } => isObject(p) && isObject(p.data))?.data ?? undefined) : undefined;

/**
 * The error inside a google.rpc.Status body (HTTP+JSON binding errors: 401, 413, 429, ...), or
 * the catalog door's `{"errorCode", "message"}` (its document URLs).
 */
async function httpFailure(res: Response): Promise<RegistryError> {
  let message: string | undefined;
  let reason: string | undefined;
  try {
    const body: unknown = await res.json();
    if (isObject(body) && isObject(body.error) && typeof body.error.message === 'string') {
      message = body.error.message;
      reason = namedReason(body.error.details);
    } else if (isObject(body) && typeof body.message === 'string') message = body.message;
  } catch {
    /* not JSON: not the registry's words */
  }
  message ??= notTheRegistrys(res);
  const retryAfter = retryAfterSeconds(res.headers.get('retry-after'));
  if (reason === 'STARTING_UP') return new RegistryError(reason, startingUp(message), [], retryAfter);
  const code = reason ?? (res.status === 401 ? 'UNAUTHENTICATED' : res.status === 429 ? 'RATE_LIMITED' : `HTTP_${res.status}`);
  const failure = new RegistryError(code, message, [], retryAfter);
  return res.status === 429 && !OPERATION_BUDGET.test(message) ? everyRequestLimited(failure) : failure;
}

/**
 * The registry's words for a refusal by an operation's own budget (REGISTRY_RATE_READS_PER_MINUTE,
 * _WRITES_), which holds only its kind of operation: "Too many reads (search, get, list, validate)
 * from this address: …". The A2A endpoint answers it as a REJECTED task, never a 429; a
 * document's URL (the catalog door) answers it with a 429, as it answers the address's request
 * limit ("Too many requests from this address: …", which holds every asking): only the words
 * tell the two apart there. Any other 429 (the flood guard's, a proxy's) refuses the request whole.
 */
const OPERATION_BUDGET = /^Too many (reads|writes)\b/;

/**
 * Refusals the registry answers as an HTTP error (503) rather than a task, named by the reason
 * of the google.rpc.ErrorInfo in its details: that reason is the contract's code, as the CLI
 * reads it, not the status ("HTTP_503" says nothing of why).
 */
const NAMED_REASONS = new Set(['STARTING_UP', 'STORAGE_UNAVAILABLE']);

function namedReason(details: unknown): string | undefined {
  if (!Array.isArray(details)) return undefined;
  const reason = details.find((d): d is Json => isObject(d) && typeof d.reason === 'string' && NAMED_REASONS.has(d.reason))?.reason;
  return typeof reason === 'string' ? reason : undefined;
}

/**
 * The registry starting up, in words for a person: what it is doing ("loading the search index
 * (1,200 of 20,000 entries)", "its storage is opening …") is kept; its advice to programs (retry in
 * 2 seconds, GET /readyz) is not: the page counts the wait down beside the message (ErrorNotice).
 */
function startingUp(message: string): string {
  const doing = /starting up: (.+?)(?:\.\s|;|\.?$)/.exec(message)?.[1];
  return `The registry is starting up${doing ? `: ${doing}` : ''}. Nothing registered is lost; it answers once it is ready.`;
}

/**
 * A request refused whole (HTTP 429, not an operation's own budget: see OPERATION_BUDGET), in
 * the page's words: the limit is on every request from this address, whatever it asks, not on
 * the kind of operation refused (a search, a download, a registration): a registration asked
 * next is refused as well. The registry's words ("Too many requests from this address: the
 * limit is 120 per minute. Retry after 30 s.") name the limit, kept; the wait is counted down
 * beside the message (ErrorNotice).
 */
function everyRequestLimited(refusal: RegistryError): RegistryError {
  const perMinute = /\blimit is (\d+) per minute\b/.exec(refusal.message)?.[1];
  const limit = perMinute ? ` The registry takes at most ${Number(perMinute).toLocaleString('en-US')} requests a minute from one address.` : '';
  const message = `Too many requests from this address: searches, entries, downloads, checks and registrations count together (and so does loading this page), so each waits until the limit allows it again.${limit}`;
  return new RegistryError(refusal.code, message, [], refusal.retryAfterSeconds, true);
}

/** Gateway statuses: what a proxy in front of the registry answers when it cannot get the registry's answer. */
const GATEWAY: Record<number, string> = { 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout' };

/**
 * A failure without the registry's words (a proxy's or gateway's HTML error page): its status,
 * what it most likely means, and what to do.
 */
function notTheRegistrys(res: Response): string {
  const type = res.headers.get('content-type')?.split(';')[0] || 'no content type';
  const gateway = GATEWAY[res.status];
  if (gateway) {
    return `The registry's address answered HTTP ${res.status} (${gateway}) with ${type}, not the registry's answer: something in front of the registry (a proxy, a gateway) could not get an answer from it. The registry may be restarting, overloaded or down. Try again in a moment; if it stays, tell the registry's operator.`;
  }
  return `The registry answered HTTP ${res.status} with ${type}, without saying why. Try again; if it stays, tell the registry's operator.`;
}

/**
 * Sends one operation (`{"search": {...}}`, `{"get": {...}}`, ...) and returns the data part of
 * its artifact, or throws a RegistryError with the registry's code, message and details.
 */
export async function call<T = Json>(operation: Json, options: CallOptions = {}): Promise<T> {
  const limit = deadline(options.signal);
  try {
    return await exchange<T>(operation, { ...options, signal: limit.signal });
  } catch (err) {
    holdFor(err, limitOf(operation));
    throw limit.passed() && isAbort(err) ? noAnswer() : err;
  } finally {
    limit.clear();
  }
}

/**
 * A refusal that names a wait (a rate limit's Retry-After) holds the page's askings of its limit
 * until it is over, or all of them when the request was refused whole: asked sooner, each would
 * only be refused again.
 */
function holdFor(err: unknown, limit: RateLimit): void {
  if (err instanceof RegistryError && err.notBefore !== undefined) holdUntil(err.wholeRequest ? ['read', 'write'] : [limit], err.notBefore);
}

/** The limit the registry counts an operation against: a register is a write; a search, a get and a validate are reads. */
const limitOf = (operation: Json): RateLimit => ('register' in operation ? 'write' : 'read');

/** Resolves once the limit allows asking (at once when it does), or rejects as an abort when `signal` aborts first. */
function untilAllowed(limit: RateLimit, signal: AbortSignal): Promise<void> {
  const wait = rateWaitLeft(limit);
  if (wait === 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = window.setTimeout(resolve, wait);
    const cancelled = () => {
      window.clearTimeout(timer);
      reject(new DOMException('The read was cancelled.', 'AbortError'));
    };
    signal.addEventListener('abort', cancelled, { once: true });
  });
}

/** The deadline passed with no answer: what happened and what to do, not "Searching…" for ever. */
const noAnswer = () =>
  new RegistryError(
    'TIMEOUT',
    `The registry did not answer within ${deadlineText()}: it may be overloaded, or something between you and it (a proxy, a dead connection) is holding the request. Try again; if it keeps happening, tell the registry's operator.`,
  );

async function exchange<T>(operation: Json, options: CallOptions): Promise<T> {
  const parts: Json[] = [{ data: operation, mediaType: 'application/json' }];
  if (options.file) parts.push({ raw: base64Utf8(options.file.text), filename: options.file.filename, mediaType: 'application/json' });
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', 'A2A-Version': '1.0' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let res: Response;
  try {
    res = await fetch(`${config.base}/a2a/rest/message:send`, {
      method: 'POST',
      headers,
      // historyLength 0: the answer need not echo the request (an uploaded document) back.
      body: JSON.stringify({ message: { messageId: messageId(), role: 'ROLE_USER', parts }, configuration: { historyLength: 0 } }),
      signal: options.signal,
      credentials: 'omit',
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new RegistryError('NETWORK', 'The registry cannot be reached. Check your connection and try again.');
  }
  if (!res.ok) {
    const failure = await httpFailure(res);
    // A request body over the registry's limit (413, REGISTRY_MAX_BODY_BYTES, always above a
    // document at the document limit, base64-encoded): what is too large is the document in it.
    // The registry's words name the request body and its encoded size, which the person never saw.
    const document = options.document ?? options.file;
    if (res.status === 413 && document && utf8Bytes(document.text) > config.maxDocumentBytes) throw new RegistryError('TOO_LARGE', tooLarge(document));
    throw failure;
  }
  let body: unknown;
  try {
    body = await res.json();
  } catch (err) {
    if (isAbort(err)) throw err;
    // Not the registry's JSON (an HTML sign-in or error page of a proxy in front of it, whose
    // cookies this page does not send): said so, not as the JSON parser's "Unexpected token '<'".
    const type = res.headers.get('content-type')?.split(';')[0] || 'no content type';
    throw new RegistryError(
      'FAILED',
      `The registry's address answered HTTP ${res.status} with ${type}, not the registry's JSON: something in front of the registry (a proxy, a sign-in page) answered instead. Reload the page; if it stays, tell the registry's operator.`,
    );
  }
  const task = isObject(body) && isObject(body.task) ? body.task : undefined;
  const status = task && isObject(task.status) ? task.status : undefined;
  const state = status?.state;
  if (state === 'TASK_STATE_COMPLETED' && task && Array.isArray(task.artifacts) && isObject(task.artifacts[0])) {
    const data = dataOf(task.artifacts[0].parts);
    if (data) return data as T;
  }
  if (state === 'TASK_STATE_REJECTED' && status && isObject(status.message)) {
    const error = dataOf(status.message.parts)?.error;
    if (isObject(error)) {
      const found = Array.isArray(error.details) ? (error.details.filter(isObject) as unknown as Finding[]) : [];
      const details = options.file ? found.map(inDocument) : found;
      const retry = typeof error.retryAfterSeconds === 'number' ? error.retryAfterSeconds : undefined;
      const code = String(error.code ?? 'REJECTED');
      const message = String(error.message ?? 'The registry declined the request.');
      throw new RegistryError(code, options.file ? aboutUpload(code, message, options.file) : message, details, retry);
    }
  }
  throw new RegistryError('FAILED', 'The registry could not complete the request. Try again in a moment.');
}

/**
 * A read (search, get) with the person's token when they gave one. On a registry that needs a
 * token to read, asking without one would only be refused: say so without asking.
 */
export async function read<T = Json>(operation: Json, signal: AbortSignal): Promise<T> {
  const token = savedToken();
  if (!token && config.readNeedsToken) {
    throw new TokenNeeded();
  }
  // Under a rate limit's wait (whatever read it refused, on whichever view): asked when it is over.
  await untilAllowed('read', signal);
  try {
    return await call<T>(operation, { signal, token: token || undefined });
  } catch (err) {
    throw token ? tokenRefused(err) : err;
  }
}

/**
 * The registry's refusal of the token this tab keeps, said to the person who typed it: the
 * registry's own words tell a program which header to send and an operator where tokens are
 * configured. A registry open to anonymous reads reads without it too (the prompt offers that).
 */
function tokenRefused(err: unknown): unknown {
  return refusalSaid(
    err,
    config.readNeedsToken
      ? 'The registry does not accept the token kept in this tab: it may be mistyped, or changed since. Type yours below.'
      : 'The registry does not accept the token kept in this tab: it may be mistyped, or changed since. Type the right one below, or read without a token.',
  );
}

/**
 * The registry's refusal of a token the person has just typed in a TokenPrompt, said to them as
 * that: tokenRefused's words ("the token kept in this tab … changed since. Type yours below.")
 * are for a token saved earlier, and would ask for the token they have just typed.
 */
export const promptTokenRefused = (err: unknown): unknown =>
  refusalSaid(
    err,
    config.readNeedsToken
      ? "The registry does not accept the token just typed: it may be mistyped, or no longer valid. Type it again below, or ask the registry's operator for yours."
      : 'The registry does not accept the token just typed: it may be mistyped, or no longer valid. Type it again below, or read without a token.',
  );

/** The registry's refusal of the token typed under Register (validate, register), said to the person who typed it, as tokenRefused does. */
export const typedTokenRefused = (err: unknown): unknown =>
  refusalSaid(err, "The registry does not accept the token typed under Register: it may be mistyped, or no longer valid. Correct it, or ask the registry's operator for yours.");

/**
 * A check refused for want of a token (a registry closed to anonymous reads, none typed under
 * Register), said to a person: the registry's own words speak to a program ("send
 * \"Authorization: Bearer <token>\" (see REGISTRY_TOKENS, or the admin-token file …)").
 */
export const tokenWanted = (err: unknown): unknown => refusalSaid(err, 'This registry checks documents only for a registry token it knows, and none was typed.');

/** A refusal of a token (UNAUTHENTICATED) in the given words; any other failure as it is. */
const refusalSaid = (err: unknown, message: string): unknown =>
  err instanceof RegistryError && err.code === 'UNAUTHENTICATED' ? new RegistryError(err.code, message, err.details, err.retryAfterSeconds) : err;

/**
 * A document at one of the registry's plain GET URLs (an entry's card at its stable URL), read
 * with the person's token when they gave one: a registry closed to anonymous reads refuses a
 * plain link to it, which carries no token.
 */
export async function fetchDocument(path: string): Promise<Blob> {
  const token = savedToken();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  // A read like any other (the registry counts it against this address's reads): under a rate
  // limit's wait, asked when it is over, before the deadline starts counting.
  await untilAllowed('read', new AbortController().signal);
  const limit = deadline();
  try {
    let res: Response;
    try {
      // Revalidated: the current revision, and a token that no longer reads is refused, not
      // answered from the browser's cache (a closed registry's answers are `private, max-age`).
      res = await fetch(`${config.base}${path}`, { headers, credentials: 'omit', cache: 'no-cache', signal: limit.signal });
    } catch (err) {
      if (isAbort(err)) throw err;
      throw new RegistryError('NETWORK', 'The registry cannot be reached. Check your connection and try again.');
    }
    if (!res.ok) throw token ? tokenRefused(await httpFailure(res)) : await httpFailure(res);
    return await res.blob();
  } catch (err) {
    holdFor(err, 'read');
    throw limit.passed() && isAbort(err) ? noAnswer() : err;
  } finally {
    limit.clear();
  }
}

export const isAbort = (err: unknown): boolean => err instanceof DOMException && err.name === 'AbortError';

// ---- the contract's answers, as the page reads them: the registry's own types ----

/** What the registry says about an entry beside its document: trust (verified, signatures) and freshness (source, health, drift). */
export type EntryStatus = Partial<Pick<ContractEntryView, 'verified' | 'kid' | 'jwks' | 'signatures' | 'source' | 'health' | 'drift'>>;

/** A hit; `matches` (the entry's other matching skills or tools) comes with results per entry. */
export type SearchHit = ContractSearchHit & EntryStatus & { matches?: SearchMatch[] };
export type SearchPage = Omit<ContractSearchPage, 'results'> & { results: SearchHit[] };
export type EntryView = ContractEntryView & EntryStatus;
/** A successful registration always names the entry. */
export type RegistrationResult = ContractRegistrationResult & { id: string; revision: number; created: boolean; changed: boolean };
export type { EntryInterface, EntryKind, RevisionSummary, SearchMatch, ValidationResultBody as ValidationResult };
