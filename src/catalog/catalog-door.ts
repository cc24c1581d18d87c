/**
 * The discovery-standards door: the AI Catalog at /.well-known/ai-catalog.json, the same
 * document as the ARD manifest at /.well-known/ard.json, the ARD API (POST /search, GET /agents,
 * GET /agents/{id}), and every registered document at a stable read-only URL:
 *   /agents/{id}/card.json               the agent card as registered
 *   /mcp-servers/{id}/document.json      an MCP registration as registered ({mcpServer, toolspec})
 *   /mcp-servers/{id}/server-card.json   its MCP Server Card (derived)
 *   /mcp/server-card                     the registry's own MCP endpoint's Server Card
 *
 * Thin over the shared operations: the door-level access rule (http/authentication.ts) admits
 * the caller, then list, search and get run through core.operations, so access, rate limits and
 * answers are those of every other door. Catalog pages are cached until the change feed moves (when reads are public: a
 * closed registry authorises every request through the operation); a page served from memory is
 * still counted against its caller's read budget, as the list it stands for. Every GET answer carries a
 * strong ETag and Cache-Control and honours If-None-Match.
 *
 * Cross-origin: when reads are public, the GET documents are readable from any origin
 * (Access-Control-Allow-Origin: *). They are public metadata meant to be fetched by crawlers
 * and browser-based agents, carry no cookies or per-user content, and a page could read them
 * through any server anyway; without this a browser would refuse them. Their CORS preflight
 * (a GET with If-None-Match, Cache-Control...) is answered for any origin too
 * (http/open-reads.ts). POST /search and the MCP endpoint follow REGISTRY_CORS_ORIGINS like the
 * A2A endpoints.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { Door, DoorContext } from '../composition/door.js';
import type { Caller } from '../contract/caller.js';
import { RegistryError, badRequest, notFound } from '../contract/errors.js';
import type { EntryKind, EntryView, ListPage, ListRequest, SearchPage } from '../contract/types.js';
import { authenticate, requestCaller } from '../http/authentication.js';
import { etagOf, sendCacheable } from '../http/conditional.js';
import { openToAllOrigins } from '../http/open-reads.js';
import { bodyErrorHandler, doorWords, failureFormat, sendFailure, type DoorWords } from '../http/errors.js';
import { jsonBody } from '../http/json-body.js';
import { undecodableQueryParam } from '../http/query-encoding.js';
import { requestScope } from '../http/request-log.js';
import { pointer } from '../lib/json.js';
import { ownBytes } from '../lib/shared-json.js';
import { codePointPrefix } from '../lib/code-points.js';
import { isUuid } from '../lib/uuid-form.js';
import { currentScope } from '../observability/request-scope.js';
import type { Operation } from '../operations/operation.js';
import { MAX_FILTER_VALUE_CHARS, MAX_FILTER_VALUES, getSchema } from '../operations/request-schemas.js';
import { issueMessage } from '../lib/issue-words.js';
import { MCP_PROTOCOL_VERSIONS, MCP_SERVER_CARD_PATH } from '../mcp/paths.js';
import { ARD_LIST_TOKEN, ARD_SEARCH_TOKEN, ardErrorOf, ardFailure, ardListOf, ardSearchAnswer, ardSearchOf, ardCodeForStatus, refuseArdGetQuery, tokenRefusalIn, type TokenWords } from './ard.js';
import { CATALOG_AFTER, CATALOG_FROM, CATALOG_PAGE_SIZE, CATALOG_RANGES, CATALOG_UNTIL, catalogDocument, catalogPageEntry, catalogPageOf, catalogRangeEntry, hostInfo, type CatalogPage } from './catalog.js';
import { cardWithheld, catalogEntryOf, registryEntries, registryServerCard, serverCardOf } from './entries.js';
import { FeedCache } from './feed-cache.js';
import { CATALOG_DOCUMENTS, MEDIA_TYPES, documentPaths, entryUrn, parseEntryRef, registryUrn, urnPublisher, type CatalogDocumentName, type Site } from './vocabulary.js';

export const AI_CATALOG_PATH = CATALOG_DOCUMENTS['ai-catalog'];
export const ARD_MANIFEST_PATH = CATALOG_DOCUMENTS.ard;
const JSON_TYPE = 'application/json; charset=utf-8';
/** Catalog pages kept in memory at most (they are rebuilt on demand after a change anyway). */
const CATALOG_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * The catalog's routes (express paths), named once: mounted below, and matched by routeLabel for
 * the requests refused before a route matched.
 */
const ROUTES = {
  aiCatalog: AI_CATALOG_PATH,
  ardManifest: ARD_MANIFEST_PATH,
  search: '/search',
  explore: '/explore',
  agents: '/agents',
  agentCard: '/agents/:id/card.json',
  agent: '/agents/:ref',
  mcpDocument: '/mcp-servers/:id/document.json',
  mcpServerCard: '/mcp-servers/:id/server-card.json',
  ownServerCard: MCP_SERVER_CARD_PATH,
} as const;

/** A route's metrics name: its parameters in braces ("/agents/{ref}"). */
const routeName = (route: string): string => route.replace(/:(\w+)/g, '{$1}');

/** A route's path as express matches it: case-insensitive, a trailing slash allowed, a parameter one whole segment. */
function routePattern(route: string): RegExp {
  const source = route
    .split(/(:\w+)/)
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}\\/?$`, 'i');
}
const ROUTE_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = Object.values(ROUTES).map((route) => [routePattern(route), routeName(route)] as const);

/**
 * Route → metrics label ("POST /search", "GET /agents/{ref}"), from the fixed set of routes
 * above: the route that answered, else the one the path names, with the request's method (a
 * method no route takes there is refused 405, and counted under it). A request refused before
 * a route matched (a 401, a 405, OPTIONS) was counted as "other", since req.route is set only once
 * one matches. A path of no route stays "other" (never the raw path: bounded cardinality).
 */
function routeLabel(req: Request): string {
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  const route = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof route === 'string') return `${method} ${routeName(route)}`;
  const path = req.originalUrl.split('?', 1)[0]!;
  const named = ROUTE_PATTERNS.find(([pattern]) => pattern.test(path))?.[1];
  return named === undefined ? 'other' : `${method} ${named}`;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * The door's words in the refusals shared code makes on its paths (http/errors.ts): what the path
 * segment a route takes holds, for one that does not decode (`/agents/%ff`, `/agents/%E2%82/card.json`:
 * GET /agents/{ref}'s identifier, the documents' entry id), and the door's routes, for a path none takes.
 */
const WORDS: DoorWords = {
  pathParameter: (req) => (routeLabel(req).endsWith(` ${routeName(ROUTES.agent)}`) ? 'identifier (or entry id)' : 'entry id'),
  routes:
    'The discovery paths are GET /.well-known/ai-catalog.json, /.well-known/ard.json, /agents, /agents/{identifier}, /agents/{id}/card.json, /mcp-servers/{id}/document.json and /mcp-servers/{id}/server-card.json, and POST /search.',
};

/**
 * The paths whose GET answers any origin may read (see the module comment): the catalogs and
 * every path under /agents and /mcp-servers when reads are public (by prefix, not per route: a
 * path whose id does not decode, /agents/%ff, fails in the router's match, before a route's own
 * handlers, and its 400 needs them too, or a page on another origin sees a CORS failure instead
 * of the error); the registry's own MCP Server Card always, open like its A2A card.
 */
function openReadPaths(publicRead: boolean): string[] {
  return publicRead ? [AI_CATALOG_PATH, ARD_MANIFEST_PATH, '/agents', '/mcp-servers', MCP_SERVER_CARD_PATH] : [MCP_SERVER_CARD_PATH];
}

function sendError(res: Response, err: RegistryError): void {
  const { status, body } = ardErrorOf(err);
  if (body.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(body.retryAfterSeconds));
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
  // A 404 is cacheable by default (RFC 9111 4.2.2: a cache may keep it for a heuristic lifetime),
  // and this one can turn into a 200 (an entry another replica just registered, a card whose key
  // is trusted again): kept by a cache, it hid the entry. ARD 5.3.4 asks that a 404 require
  // revalidation; no-cache does, as the door's other answers carry max-age.
  if (status === 404) res.setHeader('Cache-Control', 'no-cache');
  res.status(status).json(body);
}

/** Rejects with the registry's refusal of a page token in `words` (ard.ts), any other error as it is. */
const refusedIn =
  (words: TokenWords) =>
  (err: unknown): Promise<never> =>
    Promise.reject(tokenRefusalIn(err, words));
const NOT_ISSUED_AFTER = refusedIn(CATALOG_AFTER);
const REFUSED_LIST_TOKEN = refusedIn(ARD_LIST_TOKEN);
const REFUSED_SEARCH_TOKEN = refusedIn(ARD_SEARCH_TOKEN);
/** A range's refused position, in the words of the parameter that carried it (the registry roots `until`'s finding at /until). */
const REFUSED_RANGE = (err: unknown): Promise<never> =>
  Promise.reject(tokenRefusalIn(err, err instanceof RegistryError && err.details?.some((d) => d.path === '/until') ? CATALOG_UNTIL : CATALOG_FROM));

/** The list a catalog shows: its page, and for the first page and a range, where the rest is cut (ListPage.parts). */
function catalogListRequest(page: CatalogPage): ListRequest {
  const request: ListRequest = { pageSize: CATALOG_PAGE_SIZE, withDocuments: true };
  if ('after' in page) return { ...request, pageToken: page.after };
  if (!('range' in page)) return { ...request, split: CATALOG_RANGES };
  return { ...request, pageToken: page.range.from, ...(page.range.until === undefined ? {} : { until: page.range.until }), split: CATALOG_RANGES };
}

/** Request bodies POST /search reads (those jsonBody parses). */
const SEARCH_BODY_TYPES = ['application/json', 'application/*+json'];

/**
 * POST /search reads JSON only. Another body (curl's default form encoding when -H
 * 'content-type: application/json' is left out) was never parsed, and the search then said
 * "/query: expected object, received undefined" of a request that had sent one: 415 naming the
 * Content-Type instead. A POST with no body passes, to be told what it lacks. The reason is the
 * one a charset other than UTF-8 gets here (http/errors.ts), and a wrong type on the A2A doors:
 * one 415, one registryCode for "this body's media type is not read here" (it was
 * UNSUPPORTED_MEDIA_TYPE, a code no other refusal used).
 */
const requireJsonSearch: RequestHandler = (req, res, next) => {
  // An empty body (Content-Length: 0: what fetch sends for a POST without one) has no media type
  // to refuse: it was told it "has a body but no Content-Type", where one with no length at all
  // was told what the search needs, as it now is too (the A2A doors' rule, jsonrpc-media-type.ts).
  if (req.headers['content-length'] === '0' || req.is(SEARCH_BODY_TYPES) !== false) return next();
  const sent = req.headers['content-type'];
  // Unread, not drained (it could be endless, and no limit applies to it): the connection closes.
  res.setHeader('Connection', 'close');
  sendFailure(req, res, {
    httpStatus: 415,
    jsonRpcCode: -32005,
    reason: 'CONTENT_TYPE_NOT_SUPPORTED',
    message: sent
      ? `The request body is ${codePointPrefix(sent, 100)}; POST /search reads JSON: send Content-Type: application/json.`
      : 'The request has a body but no Content-Type; POST /search reads JSON: send Content-Type: application/json.',
  });
};

/**
 * A query parameter that is not valid percent-encoded UTF-8 (`?filter=%ff`, `?revision=%ff`) is
 * refused naming it, in the A2A doors' words: the query parser reads such bytes as U+FFFD, and the
 * refusal then said it got "\uFFFD", which the client never sent.
 */
function refuseUndecodableQuery(req: Request): void {
  const found = undecodableQueryParam(req.originalUrl);
  if (found) throw badRequest(`${found.message}.`, [{ path: pointer('/query', found.field), message: 'not valid percent-encoded UTF-8' }]);
}

/** An async handler that records its operation and outcome in the request scope; registry refusals answer in ARD's shape. */
function handle(operation: Operation['op'] | undefined, fn: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return async (req, res, next) => {
    const scope = currentScope();
    if (scope && operation) scope.operation = operation;
    try {
      refuseUndecodableQuery(req);
      await fn(req, res);
      if (scope && !scope.taskState) scope.taskState = 'COMPLETED';
    } catch (err) {
      if (err instanceof RegistryError) {
        if (scope) Object.assign(scope, { taskState: 'REJECTED', errorCode: err.code });
        sendError(res, err);
        return;
      }
      if (scope) Object.assign(scope, { taskState: 'FAILED', errorCode: 'INTERNAL' });
      next(err);
    }
  };
}

const REVISION = getSchema.shape.revision.unwrap();

/**
 * `?revision=N`: an older revision of a document (immutable, so cacheable for long), held to the
 * rule and words of `get`'s revision on the other doors (request-schemas.ts): this door's own check
 * took at most nine digits, so revision 1234567890 was "revision must be a positive whole number."
 * where `get` says there is no such revision, and it never said what it got.
 */
function revisionOf(req: Request): number | undefined {
  const raw = req.query.revision;
  if (raw === undefined) return undefined;
  // A query value is text: a number written in decimal is checked as the number it says.
  const value = typeof raw === 'string' && /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
  const checked = REVISION.safeParse(value);
  if (checked.success) return checked.data;
  const message = issueMessage(checked.error.issues[0]!, ['revision'], REVISION, value);
  throw new RegistryError('BAD_REQUEST', `${message}.`, [{ path: '/query/revision', message }]);
}

const ENTRY_ID = getSchema.shape.id;

/**
 * An entry id from the path (`/agents/{id}/card.json`, the id in `/agents/{identifier}`), held to
 * `get`'s rule and words, as `?revision=` is: one longer than any entry id was looked up and
 * answered 404 "No entry has id", which said nothing of the limit, where `get` on the other doors
 * answers 400 naming it. `where`: the detail's path (`/id`, or `/identifier` for an ARD identifier).
 */
function entryIdOf(id: string, where: string): string {
  const checked = ENTRY_ID.safeParse(id);
  if (checked.success) return checked.data;
  const message = issueMessage(checked.error.issues[0]!, ['id'], ENTRY_ID, id);
  const carrier = where === '/identifier' ? 'identifier' : 'path';
  throw new RegistryError('BAD_REQUEST', `The entry id in the ${carrier} is not valid: ${message}.`, [{ path: where, message }]);
}

/** GET /agents/{ref}'s refusal of a ref that is neither an ARD identifier nor the id of an entry. */
function notAnIdentifier(site: Site, ref: string): RegistryError {
  const shown = JSON.stringify(codePointPrefix(ref, 200));
  const form = `urn:air:${site.publisher}:<agent|mcp-server>:<id>`;
  return badRequest(`${shown} is not an ARD identifier, and no entry has it as its id: look an entry up by its identifier, ${form}, percent-encoded as one path segment (or by its entry id).`, [
    { path: '/identifier', message: 'not an ARD identifier, nor the id of an entry', hint: `This registry's identifiers are ${form}.` },
  ]);
}

/** The paths the door's routes are under, each with the door's counting, scope and authentication. */
const CATALOG_PATHS = [ROUTES.aiCatalog, ROUTES.ardManifest, ROUTES.search, ROUTES.explore, ROUTES.agents, '/mcp-servers'];

export const catalogDoor: Door = {
  name: 'catalog',
  openReads: (config) => openReadPaths(config.publicRead),
  failureFormats: () => [{ paths: CATALOG_PATHS, format: ardFailure }],
  mount(app, ctx: DoorContext) {
    const { core, publicUrl, card } = ctx;
    const { config, log, metrics, abuse } = core;
    const site: Site = {
      publicUrl,
      publisher: urnPublisher(publicUrl),
      name: str(card.name) || 'A2A Agent Registry',
      description: str(card.description),
      version: str(card.version) || '0.0.0',
      publishesOnlyVerified: config.trust.requireVerified,
    };
    const host = hostInfo(site, str(card.documentationUrl) || undefined);
    const maxAge = config.catalogMaxAgeSeconds;
    // A closed registry's answers depend on the token: no shared caches.
    const cacheControl = `${config.publicRead ? 'public' : 'private'}, max-age=${maxAge}`;
    const immutable = `${config.publicRead ? 'public' : 'private'}, max-age=31536000, immutable`;
    const pages = new FeedCache<{ body: Buffer; etag: string }>(core.feed, (v) => v.body.length, CATALOG_CACHE_BYTES);

    const answer = async <T>(operation: Operation, caller: Caller): Promise<T> =>
      // The runner's answers are the contract's types spread into a record.
      (await core.operations.answer(operation, caller)).data as unknown as T;

    const entryOfKind = async (req: Request, kind: EntryKind): Promise<{ view: EntryView; revision?: number }> => {
      const id = entryIdOf(String(req.params.id), '/id');
      const revision = revisionOf(req);
      const view = await answer<EntryView>(revision === undefined ? { op: 'get', id } : { op: 'get', id, revision }, requestCaller(req));
      if (view.kind !== kind) {
        const where = view.kind === 'agent' ? documentPaths.agentCard(view.id) : documentPaths.mcpDocument(view.id);
        throw notFound(`Entry "${view.id}" is ${view.kind === 'agent' ? 'an agent' : 'an MCP server'}; its document is at ${publicUrl}${where}.`);
      }
      return { view, revision };
    };

    const counted: RequestHandler[] = [
      metrics.middleware({ door: 'catalog', method: routeLabel }),
      failureFormat(ardFailure),
      doorWords(WORDS),
      abuse.floodGuard(),
      // The line names the route as the metric label does (`GET /agents/{ref}`), not the path as
      // sent, which is the caller's to make as long as a request line may be (an 8 KB id made an 8 KB
      // method); the line's `http` keeps the path, cut short.
      requestScope(log, (req) => ({ method: routeLabel(req), streaming: false })),
    ];
    const common: RequestHandler[] = [...counted, authenticate(core.authenticator, { publicRead: config.publicRead })];
    // Their preflights are answered before any route, ahead of the configured CORS (openReads above).
    app.use(openReadPaths(config.publicRead), openToAllOrigins);
    app.use(CATALOG_PATHS, common);

    // ---- the catalog / ARD manifest ----
    const servePage = (document: CatalogDocumentName, contentType: string) =>
      handle('list', async (req, res) => {
        const page = catalogPageOf(req.query);
        const caller = requestCaller(req);
        const build = async () => {
          const list = await answer<ListPage>({ op: 'list', request: catalogListRequest(page) }, caller).catch('range' in page ? REFUSED_RANGE : NOT_ISSUED_AFTER);
          // Kept until the next change: bytes of its own, not a slice pinning a pool block that the cache's bound does not count (shared-json.ts).
          const body = ownBytes(JSON.stringify(catalogDocument(site, host, page, list, document)));
          return { body, etag: etagOf(body) };
        };
        const key = `${document}|${'range' in page ? `range|${page.range.from}|${page.range.until ?? ''}` : `${page.page}|${'after' in page ? page.after : ''}`}`;
        let listed = false;
        const list = () => {
          listed = true;
          return build();
        };
        const built = config.publicRead ? await pages.getOrBuild(key, list) : await list();
        // A page kept from another request's list is this request's list all the same: it counts
        // against the caller's read budget (it was not counted, so the catalog was the one read no
        // budget limited, past its first build after each change).
        if (!listed) await core.operations.admit('list', caller);
        sendCacheable(req, res, { ...built, cacheControl, contentType });
      });
    app.get(ROUTES.aiCatalog, servePage('ai-catalog', `${MEDIA_TYPES.catalog}; charset=utf-8`));
    app.get(ROUTES.ardManifest, servePage('ard', JSON_TYPE));

    // ---- ARD API ----
    const json = jsonBody({ limit: config.maxBodyBytes, maxDepth: config.hardening.maxJsonDepth, types: SEARCH_BODY_TYPES });
    app.post(
      ROUTES.search,
      requireJsonSearch,
      json,
      bodyErrorHandler(
        log,
        'POST /search takes {"query": {"text": "translate invoices"}, "pageSize": 10}',
        `A search request is far smaller: its query.text takes at most ${config.hardening.maxQueryChars} characters (REGISTRY_MAX_QUERY_CHARS) and each filter key at most ${MAX_FILTER_VALUES} values of ${MAX_FILTER_VALUE_CHARS} characters: send the search request alone.`,
      ),
      handle('search', async (req, res) => {
        const search = ardSearchOf(site, req.body, config.hardening.maxQueryChars, core.pageTokens);
        const searching = search.request && answer<SearchPage>({ op: 'search', request: search.request }, requestCaller(req));
        // A filter that can match nothing here is answered without searching, but is a search all
        // the same: it counts against the read budget (it was answered whatever the budget said).
        if (!searching) await core.operations.admit('search', requestCaller(req));
        const page = searching ? await searching.catch(REFUSED_SEARCH_TOKEN) : undefined;
        res.setHeader('Cache-Control', 'no-store');
        res.json(ardSearchAnswer(site, search, page, core.pageTokens));
      }),
    );
    app.post(ROUTES.explore, (_req, res) => {
      const scope = currentScope();
      if (scope) Object.assign(scope, { taskState: 'REJECTED', errorCode: 'UNIMPLEMENTED' });
      // The body is never read: closing spares draining one that may not end (as the 415 above).
      res.setHeader('Connection', 'close');
      res.status(501).json({ errorCode: ardCodeForStatus(501), message: 'POST /explore (facets) is not implemented by this registry; use POST /search.' });
    });
    app.get(
      ROUTES.agents,
      handle('list', async (req, res) => {
        const request = ardListOf(site, req.query, core.pageTokens);
        // A filter that can match nothing is answered without listing, and counted as the list it is (as POST /search's).
        if (!request) await core.operations.admit('list', requestCaller(req));
        const list = request ? await answer<ListPage>({ op: 'list', request }, requestCaller(req)).catch(REFUSED_LIST_TOKEN) : { entries: [] };
        const body: { items: unknown[]; pageToken?: string } = { items: list.entries.map((view) => catalogEntryOf(site, view)) };
        if (list.nextPageToken) body.pageToken = list.nextPageToken;
        sendCacheable(req, res, { body: Buffer.from(JSON.stringify(body)), cacheControl, contentType: JSON_TYPE });
      }),
    );
    app.get(
      ROUTES.agent,
      handle('get', async (req, res) => {
        refuseArdGetQuery(req.query);
        // express decoded the path segment once, as ADR-0010 has it (%253A stays %3A).
        const ref = parseEntryRef(site, String(req.params.ref));
        if ('malformed' in ref) throw badRequest(ref.malformed, [{ path: '/identifier', message: 'not an ARD identifier', hint: `This registry's identifiers are urn:air:${site.publisher}:<agent|mcp-server>:<id>.` }]);
        if ('absent' in ref) throw notFound(ref.absent);
        if ('page' in ref) {
          // A page's identifier is good while its position is one the registry issued (a forged
          // or outdated one is refused by the list, as the page itself would be).
          const { document, page, after } = ref.page;
          try {
            await answer<ListPage>({ op: 'list', request: { pageSize: 1, pageToken: after } }, requestCaller(req));
          } catch (err) {
            if (err instanceof RegistryError && err.code === 'BAD_REQUEST') throw notFound(`The registry has no catalog page "${codePointPrefix(String(req.params.ref), 200)}".`);
            throw err;
          }
          sendCacheable(req, res, { body: Buffer.from(JSON.stringify(catalogPageEntry(site, document, page, after))), cacheControl, contentType: JSON_TYPE });
          return;
        }
        if ('range' in ref) {
          // Good while both its positions are ones the registry issued (as the range itself).
          const { document, ...range } = ref.range;
          try {
            await answer<ListPage>({ op: 'list', request: { pageSize: 1, pageToken: range.from, ...(range.until === undefined ? {} : { until: range.until }) } }, requestCaller(req));
          } catch (err) {
            if (err instanceof RegistryError && err.code === 'BAD_REQUEST') throw notFound(`The registry has no catalog range "${codePointPrefix(String(req.params.ref), 200)}".`);
            throw err;
          }
          sendCacheable(req, res, { body: Buffer.from(JSON.stringify(catalogRangeEntry(site, document, range))), cacheControl, contentType: JSON_TYPE });
          return;
        }
        if ('self' in ref) {
          const own = registryEntries(site).find((e) => e.identifier === registryUrn(site, ref.self));
          if (!own) throw notFound(`The registry has no entry "${registryUrn(site, ref.self)}".`);
          sendCacheable(req, res, { body: Buffer.from(JSON.stringify(own)), cacheControl, contentType: JSON_TYPE });
          return;
        }
        // A plain entry id is this registry's addition to ARD. A value that names no entry and has
        // not even an entry id's form (a UUID) is what ARD calls a value that is no identifier: 400
        // INVALID_ARGUMENT (5.3.4: MUST), not the 404 of an identifier not held, which the ARD
        // conformance test's malformed probe failed on. An entry id that names no entry (one
        // unregistered, or of another registry) is an id not held: 404, as on every other door.
        const view = await answer<EntryView>({ op: 'get', id: entryIdOf(ref.id, '/identifier') }, requestCaller(req)).catch((err: unknown) =>
          Promise.reject(ref.kind === undefined && !isUuid(ref.id) && err instanceof RegistryError && err.code === 'NOT_FOUND' ? notAnIdentifier(site, ref.id) : err),
        );
        // The store finds an id in any case; an identifier is matched exactly (ADR-0010).
        if (ref.kind !== undefined && view.id !== ref.id) {
          throw notFound(`The registry has no entry "${codePointPrefix(String(req.params.ref), 200)}": identifiers are compared exactly, case-sensitively; did you mean ${entryUrn(site, view.kind, view.id)}?`);
        }
        if (ref.kind !== undefined && ref.kind !== view.kind) {
          throw notFound(`The registry has no entry "${codePointPrefix(String(req.params.ref), 200)}": entry ${view.id} is ${view.kind === 'agent' ? 'an agent' : 'an MCP server'}, identified as ${entryUrn(site, view.kind, view.id)}.`);
        }
        const body = Buffer.from(JSON.stringify(catalogEntryOf(site, view)));
        // ETag only, no Last-Modified: the entry's metadata moves without a revision or a time of
        // its own (a health check; the card's verification when the trust roots change, which
        // records no time), so a Last-Modified from updatedAt and health.since answered
        // If-Modified-Since with 304 after "verified" had turned false.
        sendCacheable(req, res, { body, cacheControl, contentType: JSON_TYPE });
      }),
    );

    // ---- registered documents ----
    const serveDocument = (kind: EntryKind, contentType: string, render: (view: EntryView) => unknown) =>
      handle('get', async (req, res) => {
        const { view, revision } = await entryOfKind(req, kind);
        // `get` (and GET /agents/{id}) show such an entry marked unverified, with why.
        const withheld = cardWithheld(site, view);
        if (withheld) {
          throw notFound(
            `The card of agent "${view.id}" is not served: ${withheld}. Its entry, with each signature's status, is at ${publicUrl}/agents/${encodeURIComponent(entryUrn(site, 'agent', view.id))}.`,
          );
        }
        const body = Buffer.from(JSON.stringify(render(view)));
        // A revision's bytes never change, but with REGISTRY_REQUIRE_VERIFIED whether an agent's is
        // served does (its key revoked: withheld above): cached as long as the current card, so a
        // revoked revision does not live on in caches for a year.
        const settled = revision !== undefined && !(site.publishesOnlyVerified && kind === 'agent');
        sendCacheable(req, res, { body, contentType, lastModified: new Date(view.updatedAt), cacheControl: settled ? immutable : cacheControl });
      });
    app.get(ROUTES.agentCard, serveDocument('agent', `${MEDIA_TYPES.a2aAgentCard}; charset=utf-8`, (view) => view.document));
    app.get(ROUTES.mcpDocument, serveDocument('mcp-server', JSON_TYPE, (view) => view.document));
    app.get(ROUTES.mcpServerCard, serveDocument('mcp-server', `${MEDIA_TYPES.mcpServerCard}; charset=utf-8`, serverCardOf));

    // The registry's own MCP endpoint (a route of its own: /mcp itself belongs to the MCP door).
    // Open like the A2A card, on a closed registry too: it is how a client learns where to connect
    // (and that it then needs a token), and it says nothing about what is registered.
    const ownCard = Buffer.from(JSON.stringify(registryServerCard(site, MCP_PROTOCOL_VERSIONS)));
    app.get(
      ROUTES.ownServerCard,
      counted,
      handle(undefined, async (req, res) => {
        sendCacheable(req, res, { body: ownCard, cacheControl: `public, max-age=${config.cardMaxAgeSeconds}`, contentType: `${MEDIA_TYPES.mcpServerCard}; charset=utf-8` });
      }),
    );
  },
};
