/**
 * ARD (Agentic Resource Discovery) as an adapter over the registry's own search, list and get:
 * request shapes in, ARD shapes out, errors as ARD names them.
 *
 * Scores: ARD wants an integer 0–100 meaning "how well the entry satisfies the query". The
 * registry's relevance scores are unbounded and only comparable within one query, so an ARD
 * score is the hit's relevance relative to the best hit of the query's first page:
 * round(100 × score / best). The best match scores 100 and the order is unchanged; the first
 * page's best travels inside the ARD page token, so a hit scores the same on whatever page it
 * falls. It is a relevance rank, not a probability, and (as ARD requires) says nothing about
 * trust.
 */
import { z } from 'zod';
import type { Finding, ListOrder, ListRequest, SearchFilter, SearchHit, SearchPage, SearchRequest } from '../contract/types.js';
import { PAGE_TOKEN_INVALID, PAGE_TOKEN_OTHER_OPERATION, PAGE_TOKEN_OTHER_QUERY, RegistryError, badRequest } from '../contract/errors.js';
import type { FailureFormatter } from '../http/errors.js';
import type { PageTokens } from '../registry/page-token.js';
import { describeJsonType, isObject, quote } from '../lib/json.js';
import { checkQueryLength, findingsSaid, zodFindings } from '../operations/request-parser.js';
import { BLANK_FILTER_VALUE, EMPTY_FILTER_VALUE, MAX_FILTER_VALUE_CHARS, MAX_FILTER_VALUES, MAX_QUERY_CHARS_CEILING, pageTokenText, queryText, searchSchema } from '../operations/request-schemas.js';
import { entryHead, freshnessMetadata, trustMetadata, type CatalogEntry } from './entries.js';
import { ACCEPTED_TYPES_SAID, kindsOfMediaTypes, type Site } from './vocabulary.js';
import { clipped } from '../lib/clipped.js';
import { namedList } from '../contract/findings.js';
import { codePointPrefix, longerThan } from '../lib/code-points.js';

export const ARD_DEFAULT_PAGE_SIZE = 10;
export const ARD_LIST_DEFAULT_PAGE_SIZE = 20;
export const ARD_MAX_PAGE_SIZE = 100;
/** This door's page tokens (POST /search's wraps the registry's token with a score; GET /agents' is the registry's), at most 2,048 characters. */
const ardPageToken = pageTokenText(2048);

// ---- errors ----

/** ARD's error body (Appendix B codes); `registryCode` and `details` are the registry's own, as on every door. */
export interface ArdError {
  errorCode: string;
  message: string;
  registryCode?: string;
  details?: Finding[];
  retryAfterSeconds?: number;
}

const BY_REGISTRY_CODE: Record<string, [status: number, errorCode: string]> = {
  BAD_REQUEST: [400, 'INVALID_ARGUMENT'],
  VALIDATION_FAILED: [400, 'INVALID_ARGUMENT'],
  TOO_LARGE: [400, 'INVALID_ARGUMENT'],
  UNSUPPORTED_VERSION: [400, 'INVALID_ARGUMENT'],
  UNAUTHENTICATED: [401, 'UNAUTHENTICATED'],
  FORBIDDEN: [403, 'PERMISSION_DENIED'],
  NOT_FOUND: [404, 'NOT_FOUND'],
  RATE_LIMITED: [429, 'RATE_LIMIT_EXCEEDED'],
  QUOTA_EXCEEDED: [429, 'RATE_LIMIT_EXCEEDED'],
  UNAVAILABLE: [503, 'UNAVAILABLE'],
  STORAGE_UNAVAILABLE: [503, 'UNAVAILABLE'],
  STARTING_UP: [503, 'UNAVAILABLE'],
  INTERNAL: [500, 'INTERNAL_ERROR'],
};

/** The ARD error code for an HTTP status (refusals made before an operation ran). */
export function ardCodeForStatus(status: number): string {
  if (status === 401) return 'UNAUTHENTICATED';
  if (status === 403) return 'PERMISSION_DENIED';
  if (status === 404) return 'NOT_FOUND';
  if (status === 429) return 'RATE_LIMIT_EXCEEDED';
  if (status === 501) return 'UNIMPLEMENTED';
  if (status === 503) return 'UNAVAILABLE';
  if (status >= 400 && status < 500) return 'INVALID_ARGUMENT';
  return 'INTERNAL_ERROR';
}

export function ardErrorOf(err: RegistryError): { status: number; body: ArdError } {
  const [status, errorCode] = BY_REGISTRY_CODE[err.code] ?? [400, 'INVALID_ARGUMENT'];
  const body: ArdError = { errorCode, message: err.message, registryCode: err.code };
  if (err.details?.length) body.details = err.details;
  if (err.retryAfterSeconds !== undefined) body.retryAfterSeconds = err.retryAfterSeconds;
  return { status, body };
}

/**
 * JSON-RPC's name for "this JSON is no request object", which the shared body checks give a body
 * that is JSON but no object: on this door the registry's own code for a request of the wrong
 * shape, which an array body, or an object without query.text, gets from the search's checks.
 */
const ARD_REASONS: Record<string, string> = { INVALID_REQUEST: 'BAD_REQUEST' };

/** Refusals shared by every door (flood guard, body errors, 404, bugs) in ARD's shape. */
export const ardFailure: FailureFormatter = (failure) => {
  const registryCode = ARD_REASONS[failure.reason] ?? failure.reason;
  const body: ArdError = { errorCode: ardCodeForStatus(failure.httpStatus), message: failure.message, registryCode };
  if (failure.retryAfterSeconds !== undefined) body.retryAfterSeconds = failure.retryAfterSeconds;
  return { body };
};

// ---- POST /search ----

const ardSearchSchema = z.strictObject({
  query: z.strictObject({
    '@context': z.unknown().optional(),
    text: queryText(MAX_QUERY_CHARS_CEILING),
    // The values are checked by searchFilterOf, after the keys: an unsupported key is answered
    // with the supported ones whatever its value, and a known key's wrong value with what it takes.
    // Any key: searchFilterOf refuses one it does not support listing those it does. A bound here
    // refused an empty key, or one past 128 characters, as "Invalid key in record", naming none.
    filter: z.record(z.string(), z.unknown()).optional(),
  }),
  federation: z.enum(['auto', 'referrals', 'none']).optional(),
  pageSize: z.number().int().min(1).max(ARD_MAX_PAGE_SIZE).optional(),
  pageToken: ardPageToken.optional(),
});

/** Filter keys this registry supports, with what each takes (for the error that lists them). */
export const ARD_FILTER_KEYS: Record<string, string> = {
  type: 'media types (application/a2a-agent-card+json, application/mcp-server-card+json)',
  publisher: "the publisher segment of the entries' identifiers",
  tags: 'skill tags (any of them)',
  inputModes: 'MIME types a skill accepts (any of them)',
  outputModes: 'MIME types a skill produces (any of them)',
  protocolBinding: 'one A2A binding (JSONRPC, GRPC, HTTP+JSON) per search',
  protocolVersion: 'one A2A protocol version per search',
  owner: 'one registering principal per search',
  capabilities: "the entries' capabilities, as their catalog entries list them: skill ids or tool names, exactly (any of them)",
  streaming: 'true or false',
  readOnly: 'true or false (MCP tool hint)',
  destructive: 'true or false (MCP tool hint)',
  idempotent: 'true or false (MCP tool hint)',
  openWorld: 'true or false (MCP tool hint)',
  health: 'one of ok, unreachable or invalid (the latest check of the live agent or server), or any (also entries hidden for failing long), per search',
  verified: "true or false (the agent card's signature verified with a key the operator trusts)",
};
/** The search's own health values, spelt as its other doors (A2A, MCP) take them: lower case. */
const HEALTH_VALUES = searchSchema.shape.filter.unwrap().shape.health.unwrap().options;
const LIST_KEYS = ['tags', 'inputModes', 'outputModes', 'capabilities'] as const;
const ONE_VALUE_KEYS = ['protocolBinding', 'protocolVersion', 'owner'] as const;
const BOOLEAN_KEYS = ['streaming', 'readOnly', 'destructive', 'idempotent', 'openWorld', 'verified'] as const;

type FilterValue = string | boolean;

const isBooleanKey = (key: string): boolean => (BOOLEAN_KEYS as readonly string[]).includes(key);
const isOneValueKey = (key: string): boolean => key === 'health' || (ONE_VALUE_KEYS as readonly string[]).includes(key);

/**
 * A search request its schema refuses, with a finding per issue (paths under `base`) and, as the
 * A2A door gives them, hints from the schema and the value sent: the keys accepted where one is
 * unknown ({"limit": 5}: ARD's is pageSize), "Write 5 without quotes" for {"pageSize": "5"}.
 * Without them, this door said only "Unrecognized key" or "expected number, received string".
 */
function invalidSearch(error: z.ZodError, base: string, schema: z.ZodType, input: unknown): RegistryError {
  const details = zodFindings(error, base, schema, input);
  return badRequest(`The search request is not valid: ${findingsSaid(details)}.`, details);
}

/** A value of the search request refused at `path`, in the words the request's other errors use. */
const invalidFilter = (path: string, message: string, hint: string) =>
  badRequest(`The search request is not valid: ${path}: ${message}.`, [{ path, message, hint }]);

/**
 * One supported key's values: a string or a boolean, or an array of them, at least one and at
 * most MAX_FILTER_VALUES of MAX_FILTER_VALUE_CHARS, none blank: the rules the registry's search
 * has on its other doors (A2A, MCP). A blank value was dropped here, and an empty array ignored,
 * so {"tags": []} or {"type": " "} filtered nothing or matched nothing, without a word, and
 * {"owner": " "} was told it gave "0 values".
 */
function filterValuesOf(key: string, raw: unknown, path: string): FilterValue[] {
  const takes = isBooleanKey(key) ? 'true or false' : 'a string';
  const hint = isBooleanKey(key)
    ? `"${key}" takes ${ARD_FILTER_KEYS[key]}, as a JSON boolean or the string "true" or "false".`
    : `"${key}" takes ${ARD_FILTER_KEYS[key]}: ${isOneValueKey(key) ? 'a string' : 'a string, or an array of strings'}.`;
  const values: unknown[] = Array.isArray(raw) ? raw : [raw];
  if (values.length > MAX_FILTER_VALUES) {
    throw invalidFilter(path, `at most ${MAX_FILTER_VALUES} values`, `${values.length} were given: any of a key's values matches, so split a longer list over several searches.`);
  }
  if (values.length === 0) throw invalidFilter(path, 'expected at least one value, got an empty array', 'Give at least one value, or leave the key out.');
  return values.map((value, i) => {
    const at = Array.isArray(raw) ? `${path}/${i}` : path;
    if (typeof value === 'boolean') return value;
    if (typeof value !== 'string') throw invalidFilter(at, `expected ${takes}, got ${describeJsonType(value)}`, hint);
    // Counted as code points, as the schemas of the other doors count it (an emoji is one).
    if (longerThan(value, MAX_FILTER_VALUE_CHARS)) throw invalidFilter(at, `at most ${MAX_FILTER_VALUE_CHARS} characters`, hint);
    // Empty is told as empty, as the other doors tell it: "" has no white space to be blank with.
    if (value === '') throw invalidFilter(at, EMPTY_FILTER_VALUE, hint);
    if (value.trim() === '') throw invalidFilter(at, BLANK_FILTER_VALUE, hint);
    return value;
  });
}

const searchFilterSchema = searchSchema.shape.filter.unwrap();

/** Keys whose values hold no comma, so a string with one is a list written as text. */
const COMMA_FREE_KEYS = ['type', ...LIST_KEYS, 'protocolBinding', 'protocolVersion'];

/**
 * ARD reads a bare string as a one-value list, so `"tags": "weather,forecast"` asks for the one
 * tag "weather,forecast": nothing carries it, and the search answered no results, silently, to a
 * client that meant two tags. Such a string is refused, saying how to send what was meant.
 */
function refuseCommaList(key: string, raw: unknown, path: string): void {
  if (typeof raw !== 'string' || !raw.includes(',') || !COMMA_FREE_KEYS.includes(key)) return;
  const parts = raw.split(',').map((p) => p.trim()).filter(Boolean);
  const shown = JSON.stringify(clipped(raw, 80));
  if (key === 'protocolBinding' || key === 'protocolVersion') {
    throw invalidFilter(path, `${shown} is a comma-separated list, and "${key}" takes one value`, `Send one of them, e.g. ${JSON.stringify({ [key]: parts[0] ?? '' })}.`);
  }
  throw invalidFilter(
    path,
    `${shown} would be one value with commas in it (ARD reads a string as a one-value list): send several values as an array, ${codePointPrefix(JSON.stringify(parts), 120)}`,
    `Any of an array's values matches; a value that itself holds a comma goes in an array too: ${JSON.stringify({ [key]: [codePointPrefix(raw, 80)] })}.`,
  );
}

const stringsOf = (v: FilterValue[]): string[] => v.map(String).map((s) => s.trim()).filter(Boolean);

/**
 * Several values for a key the registry's search filters by one value of (owner, protocol
 * binding and version, health: its filter holds one of each, on every door). It said "takes one
 * of ok, unreachable, invalid, any" to ["ok", "unreachable"], as if they were not, or "takes one
 * value here" without which.
 */
function oneValueOnly(key: string, distinct: readonly string[], path: string): RegistryError {
  const shown = distinct.slice(0, 5).map((v) => JSON.stringify(codePointPrefix(v, 60))).join(', ') + (distinct.length > 5 ? ', ...' : '');
  const hint = `Values are OR'ed within the other keys, but this registry filters by one ${key} at a time: e.g. ${JSON.stringify({ [key]: distinct[0] })}, then search again for the others.`;
  return badRequest(`Filter "${key}" takes one value here; send one of ${shown} per search.`, [{ path, message: `${distinct.length} values`, hint }]);
}

/** ARD's filter (keys are entry terms, values OR'ed within a key, keys AND'ed) as the registry's filter; undefined when it can match nothing here. */
function searchFilterOf(site: Site, filter: Record<string, unknown>): SearchFilter | undefined {
  const out: SearchFilter = {};
  const at = (key: string) => `/query/filter/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
  // Own keys only: `in` also found the prototype's, so "constructor" or "toString" passed as
  // supported and were then told they take true or false, or refused without the supported list.
  const unsupported = Object.keys(filter).filter((k) => !Object.hasOwn(ARD_FILTER_KEYS, k));
  if (unsupported.length > 0) {
    throw badRequest(
      `Filter key(s) ${namedList(unsupported.map((k) => quote(k, 60)))} are not supported here. Supported: ${Object.entries(ARD_FILTER_KEYS)
        .map(([k, v]) => `${k} (${v})`)
        .join('; ')}.`,
      unsupported.map((k) => ({ path: at(k), message: 'unsupported filter key', hint: `Use one of: ${Object.keys(ARD_FILTER_KEYS).join(', ')}.` })),
    );
  }
  let matchable = true;
  for (const [key, raw] of Object.entries(filter)) {
    refuseCommaList(key, raw, at(key));
    const values = filterValuesOf(key, raw, at(key));
    if (key === 'type') {
      // Each value one of the types entries here have: an unknown one (a typo, "agent") matched
      // nothing, silently, where the other doors refuse an unknown kind.
      const kinds = kindsOfMediaTypes(values.map(String), (type, i) =>
        invalidFilter(Array.isArray(raw) ? `${at(key)}/${i}` : at(key), `${JSON.stringify(codePointPrefix(type, 80))} is not a media type this registry lists`, `"type" takes ${ACCEPTED_TYPES_SAID}.`),
      );
      // Only the registry's own entry types (its search service, nested catalogs): nothing registered has them.
      if (kinds.size === 0) matchable = false;
      else if (kinds.size === 1) out.kind = [...kinds][0]!;
    } else if (key === 'publisher') {
      if (!stringsOf(values).some((p) => p.toLowerCase() === site.publisher)) matchable = false;
    } else if (key === 'health') {
      // As written, as the other doors compare it: "OK" or " ok" passed here, lower-cased and
      // trimmed, where A2A and MCP search refuse them.
      values.forEach((value, i) => {
        if (HEALTH_VALUES.some((h) => h === value)) return;
        const lower = HEALTH_VALUES.find((h) => h === String(value).trim().toLowerCase());
        throw badRequest(`Filter "health" takes one of ${HEALTH_VALUES.join(', ')}.`, [
          {
            path: Array.isArray(raw) ? `${at(key)}/${i}` : at(key),
            message: `got ${codePointPrefix(JSON.stringify(value), 60)}`,
            hint: lower ? `Write it in lower case, without spaces: {"health": "${lower}"}.` : 'e.g. {"health": "ok"} for agents that answered their latest check.',
          },
        ]);
      });
      const distinct = [...new Set(values.map(String))];
      if (distinct.length !== 1) throw oneValueOnly(key, distinct, at(key));
      out.health = HEALTH_VALUES.find((h) => h === distinct[0])!;
    } else if ((LIST_KEYS as readonly string[]).includes(key)) {
      out[key as (typeof LIST_KEYS)[number]] = stringsOf(values);
    } else if ((ONE_VALUE_KEYS as readonly string[]).includes(key)) {
      const distinct = [...new Set(stringsOf(values))];
      if (distinct.length !== 1) throw oneValueOnly(key, distinct, at(key));
      out[key as (typeof ONE_VALUE_KEYS)[number]] = distinct[0]!;
    } else {
      const bools = new Set<boolean>();
      for (const v of values) {
        // The JSON literal's spelling in a string, "true" or "false": "TRUE" and " True" passed here
        // (the health filter's "OK" likewise), where the other doors take JSON booleans only.
        const b = typeof v === 'boolean' ? v : v === 'true' ? true : v === 'false' ? false : undefined;
        if (b === undefined) {
          const meant = ['true', 'false'].includes(String(v).trim().toLowerCase()) ? String(v).trim().toLowerCase() : undefined;
          throw badRequest(`Filter "${key}" takes true or false.`, [
            {
              path: at(key),
              message: `not a boolean: ${codePointPrefix(JSON.stringify(v), 40)}`,
              hint: meant ? `Write ${meant} (a JSON boolean, or the string "${meant}" in lower case).` : `A JSON boolean, or the string "true" or "false".`,
            },
          ]);
        }
        bools.add(b);
      }
      if (bools.size === 1) out[key as (typeof BOOLEAN_KEYS)[number]] = [...bools][0]!;
    }
  }
  // The search's own rules for what the keys became (e.g. a protocolVersion of at most 20
  // characters), as on the other doors: a value too long was cut short here before.
  const checked = searchFilterSchema.safeParse(out);
  if (!checked.success) throw invalidSearch(checked.error, '/query/filter', searchFilterSchema, out);
  return matchable ? out : undefined;
}

// ---- page tokens ----

/**
 * What a door of this module says of a page token it refuses, in the words of its request, at the
 * parameter that carried it. The registry's refusals say "pass the nextPageToken of the previous
 * page" and name the A2A request's fields (limit, resultsPer), which no ARD request has, at
 * /pageToken, which no GET /agents has.
 */
export interface TokenWords {
  /** A token the registry did not issue, or cannot read (altered, truncated, made up). */
  notIssued: string;
  /** A token issued for other arguments. */
  otherQuery: string;
  /** A token of the other operation (a search's sent to a listing, a listing's to a search). */
  otherOperation: string;
  /** Where the request has the token. */
  path: string;
}

/** A refusal's message and its detail's, by rule. */
const TOKEN_REFUSALS: Record<string, { said: (words: TokenWords) => string; finding: string }> = {
  [PAGE_TOKEN_INVALID]: { said: (words) => words.notIssued, finding: 'not a position this registry issued' },
  [PAGE_TOKEN_OTHER_QUERY]: { said: (words) => words.otherQuery, finding: 'issued for another query' },
  [PAGE_TOKEN_OTHER_OPERATION]: { said: (words) => words.otherOperation, finding: 'issued by the other operation' },
};

/**
 * The refusal of a page token under `rule` (PAGE_TOKEN_INVALID, _OTHER_QUERY, _OTHER_OPERATION),
 * in `words`; `finding` is the detail's message when the registry's says more (whose token it is).
 */
export function tokenRefused(rule: string, words: TokenWords, finding?: string): RegistryError {
  const refusal = TOKEN_REFUSALS[rule] ?? TOKEN_REFUSALS[PAGE_TOKEN_INVALID]!;
  return badRequest(refusal.said(words), [{ path: words.path, message: finding ?? refusal.finding, rule }]);
}

/**
 * Why `token` is no token the registry issued by its length alone (empty, or longer than
 * `schema`, a pageTokenText, takes), as the schema's finding says it; undefined within the limits.
 * Each door refuses it in its own words with this detail, as POST /search's schema refuses it.
 */
export function tokenOutOfLimits(schema: z.ZodType, token: string): string | undefined {
  const checked = schema.safeParse(token);
  return checked.success ? undefined : zodFindings(checked.error, '', schema)[0]?.message;
}

/** `err` in `words` when it is the registry's refusal of a page token; any other error as it is. */
export function tokenRefusalIn(err: unknown, words: TokenWords): unknown {
  const found = err instanceof RegistryError ? err.details?.find((d) => d.rule !== undefined && Object.hasOwn(TOKEN_REFUSALS, d.rule)) : undefined;
  if (found?.rule === undefined) return err;
  // The registry's finding of a token of the other operation names it ("issued by search"), as A2A's and MCP's do.
  return tokenRefused(found.rule, words, found.rule === PAGE_TOKEN_OTHER_OPERATION ? found.message : undefined);
}

/** A token neither ARD route can read, told alike by both (each answer carries its next page's `pageToken`). */
const ARD_TOKEN_NOT_ISSUED = 'The pageToken is not valid: send the pageToken of the previous answer unchanged, or leave it out for the first page.';

/** POST /search's pageToken: one of its own answers' (the registry's token and the first page's best score). */
export const ARD_SEARCH_TOKEN: TokenWords = {
  notIssued: ARD_TOKEN_NOT_ISSUED,
  otherQuery: 'The pageToken belongs to another search: send the same query (text and filter) and pageSize as the request whose answer gave it, or start again without pageToken.',
  otherOperation: "The pageToken is a listing's (GET /agents), not POST /search's: send it with the listing whose answer gave it, or start again without pageToken for the first page of this search.",
  path: '/pageToken',
};

/** GET /agents' pageToken: the registry's list token. */
export const ARD_LIST_TOKEN: TokenWords = {
  notIssued: ARD_TOKEN_NOT_ISSUED,
  otherQuery: 'The pageToken belongs to another listing: send the same filter and orderBy as the request whose answer gave it (pageSize may change), or start again without pageToken.',
  otherOperation: "The pageToken is a search's (POST /search), not GET /agents': send it with the search whose answer gave it, or start again without pageToken for the first page of this listing.",
  path: '/query/pageToken',
};

interface ArdCursor {
  /** The registry's own page token. */
  t: string;
  /** The best relevance score of the query's first page. */
  b: number;
}

/**
 * The registry's page tokens as ARD's routes use them: whose a token of the registry's is
 * (issuer), and POST /search's own, sealed with the registry's signature (seal, unseal).
 */
export type ArdTokens = Pick<PageTokens, 'issuer' | 'seal' | 'unseal'>;

/** What POST /search's tokens are sealed for (PageTokens.seal): no other token's signature is. */
const SEARCH_CURSOR = 'ard-search';

/**
 * POST /search's pageToken: the cursor signed as a whole. It was base64url JSON, the registry's
 * token signed inside it but the score beside it not: an altered score (0, -5, 1e308) was taken,
 * and changed every later page's scores, and a token with a space added was read as it was.
 */
const encodeCursor = (c: ArdCursor, tokens: ArdTokens): string => tokens.seal(SEARCH_CURSOR, c);

/** The cursor a POST /search's pageToken holds, or undefined when the token is none. */
function cursorOf(token: string, tokens: ArdTokens): ArdCursor | undefined {
  const value = tokens.unseal(SEARCH_CURSOR, token);
  return isObject(value) && typeof value.t === 'string' && typeof value.b === 'number' && Number.isFinite(value.b) ? { t: value.t, b: value.b } : undefined;
}

/**
 * POST /search's refusal of a bare search token of the registry's (an A2A search's or an MCP search
 * tool's nextPageToken): this door's wraps one with the first page's best score, which the bare
 * one lacks, so its pages could not be scored alike. Not issued here (page-token-invalid), yet
 * told whose it is: it was told only that it was not valid.
 */
const BARE_SEARCH_TOKEN: TokenWords = {
  ...ARD_SEARCH_TOKEN,
  notIssued:
    "The pageToken is the nextPageToken of an A2A search (or an MCP search tool's), not a pageToken of POST /search, whose tokens also carry the first page's scores: send it with the search whose answer gave it, or send this search without pageToken for its first page and then the pageToken its answer gives.",
};

/**
 * POST /search's cursor. A token that is none is either a listing's (GET /agents' pageToken is the
 * registry's list token), told whose it is (it was told it was not issued), a search's of the
 * registry's other doors, told so too, or one the registry did not issue, refused as the registry
 * refuses a token it cannot read.
 */
function decodeCursor(token: string, tokens: ArdTokens): ArdCursor {
  const cursor = cursorOf(token, tokens);
  if (cursor) return cursor;
  const issuedBy = tokens.issuer(token);
  if (issuedBy === 'list') throw tokenRefused(PAGE_TOKEN_OTHER_OPERATION, ARD_SEARCH_TOKEN, 'issued by list');
  if (issuedBy === 'search') throw tokenRefused(PAGE_TOKEN_INVALID, BARE_SEARCH_TOKEN, "an A2A or MCP search's nextPageToken, not POST /search's");
  throw tokenRefused(PAGE_TOKEN_INVALID, ARD_SEARCH_TOKEN);
}

export interface ArdSearch {
  /** The registry's search, or undefined when the filter can match nothing here. */
  request?: SearchRequest;
  /** The best score of the first page (continuing pages). */
  best?: number;
  federation: 'auto' | 'referrals' | 'none';
}

/** Reads a POST /search body; BAD_REQUEST (ARD: INVALID_ARGUMENT) with paths when it is not one. */
export function ardSearchOf(site: Site, body: unknown, maxQueryChars: number, tokens: ArdTokens): ArdSearch {
  const parsed = ardSearchSchema.safeParse(body ?? {});
  if (!parsed.success) {
    const refusal = invalidSearch(parsed.error, '', ardSearchSchema, body ?? {});
    // A pageToken out of its schema's limits (empty, too long) is refused as any other this door
    // cannot use, in its words, saying why (the schema's finding), as GET /agents refuses it: it
    // was "Too small: expected string to have >=1 characters", without the rule.
    const token = refusal.details?.find((d) => d.rule === PAGE_TOKEN_INVALID);
    throw token ? tokenRefused(PAGE_TOKEN_INVALID, ARD_SEARCH_TOKEN, token.message) : refusal;
  }
  const { query, federation = 'auto', pageSize = ARD_DEFAULT_PAGE_SIZE, pageToken } = parsed.data;
  const text = query.text.trim();
  if (!text) throw badRequest('query.text is required for a search: describe what you need, e.g. "translate invoices".', [{ path: '/query/text', message: 'empty' }]);
  checkQueryLength(text, maxQueryChars, '/query/text');
  const filter = searchFilterOf(site, query.filter ?? {});
  if (!filter) return { federation };
  const cursor = pageToken === undefined ? undefined : decodeCursor(pageToken, tokens);
  const request: SearchRequest = { query: text, filter, limit: pageSize };
  if (cursor) request.pageToken = cursor.t;
  return { request, best: cursor?.b, federation };
}

/** A search result: a projection of the entry (as ARD allows), with its score and where it was found. */
export interface ArdResult extends Pick<CatalogEntry, 'identifier' | 'displayName' | 'type' | 'mediaType' | 'url' | 'description' | 'capabilities'> {
  score: number;
  source: string;
  metadata: Record<string, string | number | boolean>;
}

export interface ArdSearchAnswer {
  results: ArdResult[];
  referrals?: unknown[];
  pageToken?: string;
}

const isMatch = (m: unknown): m is { type: string; name: string; id?: string } =>
  isObject(m) && typeof m.type === 'string' && typeof m.name === 'string' && (m.id === undefined || typeof m.id === 'string');

function ardResultOf(site: Site, hit: SearchHit, best: number): ArdResult {
  const score = best > 0 ? Math.max(0, Math.min(100, Math.round((100 * hit.score) / best))) : 0;
  const result: ArdResult = { ...entryHead(site, hit), score, source: `${site.publicUrl}/`, metadata: { registryId: hit.id, kind: hit.kind, ...freshnessMetadata(hit), ...trustMetadata(hit) } };
  // What inside the entry matched (a skill or a tool), when the search says so.
  const match: unknown = (hit as { match?: unknown }).match;
  if (isMatch(match) && (match.type === 'skill' || match.type === 'tool')) {
    result.capabilities = [match.id || match.name];
    result.metadata.matchedType = match.type;
    result.metadata.matchedName = match.name;
  }
  return result;
}

/**
 * The ARD answer for one page of the registry's search: one result per entry (an entry's best
 * hit; later hits of an entry already shown on the page are dropped), ARD scores, and the next
 * page's token carrying the first page's best score.
 */
export function ardSearchAnswer(site: Site, search: ArdSearch, page: SearchPage | undefined, tokens: ArdTokens): ArdSearchAnswer {
  const answer: ArdSearchAnswer = { results: [] };
  if (search.federation === 'referrals') answer.referrals = []; // no upstream registries are configured
  if (!page) return answer;
  const best = search.best ?? page.results.reduce((max, h) => Math.max(max, h.score), 0);
  const seen = new Set<string>();
  for (const hit of page.results) {
    if (seen.has(hit.id)) continue;
    seen.add(hit.id);
    answer.results.push(ardResultOf(site, hit, best));
  }
  if (page.nextPageToken) answer.pageToken = encodeCursor({ t: page.nextPageToken, b: best }, tokens);
  return answer;
}

// ---- GET /agents ----

/** GET /agents' query parameters (ARD 7.4). */
const ARD_LIST_PARAMETERS = ['filter', 'orderBy', 'pageSize', 'pageToken'] as const;
/** What a client may have meant by a parameter GET /agents does not take. */
const LIST_PARAMETER_ALIASES: Record<string, string> = { limit: 'pageSize', page_size: 'pageSize', pagesize: 'pageSize', size: 'pageSize', page_token: 'pageToken', cursor: 'pageToken', order_by: 'orderBy', sort: 'orderBy' };

/** The fields ARD's filter expression names (Appendix A), and this registry's verified. */
const ARD_FILTER_FIELDS: ReadonlySet<string> = new Set(['type', 'displayName', 'publisherId', 'createdAfter', 'updatedAfter', 'verified']);

/**
 * GET /agents' orderBy, in AIP-132's syntax (a field, then ` desc`; ascending when bare): the
 * two orders a listing offers, both newest first. A bare `updatedAt` was read as descending, so
 * a client asking for the oldest first got the newest, and every entry in creation order.
 */
function ardListOrder(text: string): ListOrder {
  const m = /^\s*(updatedAt|createdAt)(?:\s+(asc|desc))?\s*$/i.exec(text);
  if (m && m[2]?.toLowerCase() === 'desc') return m[1]!.toLowerCase() === 'updatedat' ? 'updatedAt' : 'createdAt';
  throw badRequest(
    `orderBy takes "updatedAt desc" (most recently changed first) or "createdAt desc" (newest registered first, the order without orderBy); got ${JSON.stringify(codePointPrefix(text, 60))}.`,
    [{ path: '/query/orderBy', message: m ? 'ascending order is not offered' : 'unsupported order', hint: 'orderBy=updatedAt desc, or leave orderBy out.' }],
  );
}

/**
 * GET /agents/{identifier} takes no query parameter (ARD 5.3.4). One given was ignored, so
 * `?revision=1` answered the current entry as if it were that revision's; refused, as GET /agents
 * refuses a parameter it does not take.
 */
export function refuseArdGetQuery(query: Record<string, unknown>): void {
  const given = Object.keys(query)[0];
  if (given === undefined) return;
  const name = codePointPrefix(given, 60);
  const revision = given === 'revision'
    ? ": an older revision is read from the entry's document, at its url with ?revision=N (/agents/{id}/card.json, /mcp-servers/{id}/document.json)"
    : '';
  throw badRequest(`${JSON.stringify(name)} is not a query parameter of GET /agents/{identifier}, which takes none${revision}.`, [
    { path: `/query/${name}`, message: 'unknown query parameter', hint: 'Leave the query out: the identifier names the entry.' },
  ]);
}

/** The filter clauses GET /agents reads, as its refusals say them. */
const LIST_CLAUSES_SAID = "type = '<media types, comma-separated>', publisherId = '<publisher domains, comma-separated>' and verified = true|false, joined by AND";

/**
 * Reads GET /agents' query (pageSize, pageToken, a filter of `type = '...'`, `publisherId = '...'`
 * and `verified = true` clauses, orderBy); undefined when it can match nothing.
 */
export function ardListOf(site: Site, query: Record<string, unknown>, tokens: ArdTokens): ListRequest | undefined {
  const one = (key: string): string | undefined => {
    const v = query[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw badRequest(`"${key}" is given more than once.`, [{ path: `/query/${key}`, message: 'repeated' }]);
    return v;
  };
  // ARD's filter fields (Appendix A) belong inside `filter`; given beside it they were ignored,
  // and a client asking ?type=application/mcp-server-card+json was answered every entry.
  const misplaced = Object.keys(query).find((key) => ARD_FILTER_FIELDS.has(key));
  if (misplaced !== undefined) {
    throw badRequest(
      `${misplaced} is a filter field, not a query parameter of GET /agents: put it in filter (this registry filters by ${LIST_CLAUSES_SAID}), e.g. ?filter=type = 'application/a2a-agent-card+json'.`,
      [{ path: `/query/${misplaced}`, message: 'a filter field given as a query parameter', hint: "filter=type = 'application/a2a-agent-card+json' AND verified = true" }],
    );
  }
  // Any other parameter was ignored: ?limit=5 or ?page_size=5 listed 20 entries, ?q=weather
  // every entry, as if asked; POST /search and A2A list refuse a key they do not take.
  const unknown = Object.keys(query).find((key) => !(ARD_LIST_PARAMETERS as readonly string[]).includes(key));
  if (unknown !== undefined) {
    const shown = JSON.stringify(codePointPrefix(unknown, 60));
    const meant = Object.hasOwn(LIST_PARAMETER_ALIASES, unknown.toLowerCase()) ? LIST_PARAMETER_ALIASES[unknown.toLowerCase()] : undefined;
    throw badRequest(
      `${shown} is not a query parameter of GET /agents, which takes ${ARD_LIST_PARAMETERS.join(', ')}${meant ? ` (did you mean ${meant}?)` : ''}; to search by text, POST /search.`,
      [{ path: `/query/${codePointPrefix(unknown, 60)}`, message: 'unknown query parameter', hint: meant ? `Send ?${meant}=... instead.` : `Use ${ARD_LIST_PARAMETERS.join(', ')}.` }],
    );
  }
  const request: ListRequest = { pageSize: ARD_LIST_DEFAULT_PAGE_SIZE, withDocuments: true };
  const size = one('pageSize');
  if (size !== undefined) {
    const n = /^[0-9]{1,4}$/.test(size) ? Number(size) : NaN;
    if (!(n >= 1 && n <= ARD_MAX_PAGE_SIZE)) {
      // Say what came: "1e1", "10.0" or "ten" were told only the range, which 10 is in.
      throw badRequest(`pageSize must be a whole number from 1 to ${ARD_MAX_PAGE_SIZE}, in digits (got ${JSON.stringify(codePointPrefix(size, 20))}).`, [
        { path: '/query/pageSize', message: `not 1..${ARD_MAX_PAGE_SIZE}` },
      ]);
    }
    request.pageSize = n;
  }
  const token = one('pageToken');
  if (token !== undefined) {
    // No token the registry issues is empty or this long: refused as any other it did not issue,
    // its detail saying which, as POST /search says it (it said "not a position this registry issued").
    const outOfLimits = tokenOutOfLimits(ardPageToken, token);
    if (outOfLimits) throw tokenRefused(PAGE_TOKEN_INVALID, ARD_LIST_TOKEN, outOfLimits);
    // A POST /search's pageToken wraps the registry's search token, which the list never sees:
    // told whose it is (it was told it was not issued). The registry tells a bare one itself.
    const cursor = cursorOf(token, tokens);
    if (cursor && tokens.issuer(cursor.t) === 'search') throw tokenRefused(PAGE_TOKEN_OTHER_OPERATION, ARD_LIST_TOKEN, 'issued by search');
    request.pageToken = token;
  }
  const orderBy = one('orderBy');
  if (orderBy !== undefined) request.orderBy = ardListOrder(orderBy);
  const filter = one('filter');
  if (filter !== undefined && filter.trim() !== '') {
    const listFilter: NonNullable<ListRequest['filter']> = {};
    // Every clause is read, also after one that matches nothing: a wrong one later is refused.
    let matchable = true;
    // Clauses joined by AND: type = '<media types, comma-separated>', publisherId = '<domains, comma-separated>', verified = true|false.
    for (const clause of filter.split(/\s+AND\s+/i)) {
      const type = /^\s*type\s*=\s*(?:'([^']*)'|"([^"]*)")\s*$/i.exec(clause);
      const publisherId = /^\s*publisherId\s*=\s*(?:'([^']*)'|"([^"]*)")\s*$/i.exec(clause);
      const verified = /^\s*verified\s*=\s*(?:(true|false)|'(true|false)'|"(true|false)")\s*$/i.exec(clause);
      if (publisherId) {
        // ARD Appendix A: any of them. Every entry listed here is published under this registry's
        // own <publisher> (its identifiers'), as POST /search's publisher filter reads it.
        const publishers = (publisherId[1] ?? publisherId[2] ?? '').split(',').map((p) => p.trim()).filter(Boolean);
        if (publishers.length === 0) {
          throw badRequest(`The filter's publisherId = '...' names no publisher: give the publisher domains, comma-separated, as the identifiers' <publisher> segment has them (here ${site.publisher}).`, [
            { path: '/query/filter', message: 'no publisher named', hint: `e.g. filter=publisherId = '${site.publisher}'` },
          ]);
        }
        if (!publishers.some((p) => p.toLowerCase() === site.publisher)) matchable = false;
      } else if (type) {
        // Each one of the types entries here have, as POST /search's `type` takes them: 'agent'
        // or a misspelt type answered no entries, silently.
        const kinds = kindsOfMediaTypes((type[1] ?? type[2] ?? '').split(','), (mediaType) =>
          badRequest(`The filter's type = '...' names ${JSON.stringify(codePointPrefix(mediaType.trim(), 80))}, which is not a media type this registry lists: it takes ${ACCEPTED_TYPES_SAID}.`, [
            { path: '/query/filter', message: 'unknown media type', hint: "e.g. filter=type = 'application/a2a-agent-card+json'" },
          ]),
        );
        if (kinds.size === 0) matchable = false;
        else if (kinds.size === 1) {
          const kind = [...kinds][0]!;
          if (listFilter.kind !== undefined && listFilter.kind !== kind) matchable = false;
          listFilter.kind = kind;
        }
      } else if (verified) {
        // Clauses are joined by AND: verified = true AND verified = false matches nothing (the
        // last clause was taken alone, and answered every unverified entry).
        const value = (verified[1] ?? verified[2] ?? verified[3])!.toLowerCase() === 'true';
        if (listFilter.verified !== undefined && listFilter.verified !== value) matchable = false;
        listFilter.verified = value;
      } else {
        // The clause, not the whole filter: "type = '...' AND verified = maybe" said it got all of it.
        throw badRequest(`The filter's clause ${JSON.stringify(codePointPrefix(clause.trim(), 80))} is not one this registry reads: the filter supports the clauses ${LIST_CLAUSES_SAID}.`, [
          { path: '/query/filter', message: 'unsupported filter expression', hint: "e.g. type = 'application/a2a-agent-card+json' AND verified = true" },
        ]);
      }
    }
    if (!matchable) return undefined;
    if (Object.keys(listFilter).length > 0) request.filter = listFilter;
  }
  return request;
}
