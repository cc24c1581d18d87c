/**
 * The web door: the page people use to find agents, read their cards and check their own
 * before publishing. It serves HTML and static assets only; the page itself talks to the
 * registry through the A2A HTTP+JSON door on the same origin, so every search, read and
 * registration it makes goes through the same authentication, limits, rules and metrics as any
 * other A2A client's.
 *
 * Routes: `/` (search), `/entries/{id}`, `/validate` — HTML for browsers only (content
 * negotiation: a client that does not prefer HTML, such as an API client asking for JSON, gets
 * the JSON answer it got before) — and `/assets/*`. A browser asking for a path no route takes
 * gets the page too, with status 404: the page says there is no such page and leads back to
 * search (API clients keep the JSON 404 of http/errors.ts).
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import type { Door, DoorContext } from '../composition/door.js';
import type { Logger } from '../observability/logger.js';
import { allowedMethods } from '../http/allowed-methods.js';
import { doorWords, type DoorWords } from '../http/errors.js';
import { handlerChain } from '../http/handler-chain.js';
import { requestScope } from '../http/request-log.js';
import { pageContentSecurityPolicy } from '../http/security.js';
import { getSchema, MAX_FILTER_VALUES, searchSchema } from '../operations/request-schemas.js';
import { MAX_REVISIONS_LISTED } from '../contract/types.js';
import { cachedBody, findAssetsDir, sendCached, WebAssets } from './assets.js';
import type { FilterType } from './page-config.js';
import { notBuiltPage, pageShell, rateLimitedPage, type PageConfig } from './page-shell.js';

export const PAGE_PATHS = ['/', '/validate', '/entries/:id'];

/** What a client that is no browser is told under /entries (http/errors.ts DoorWords): the page's path holds an entry id. */
const ENTRY_WORDS: DoorWords = {
  pathParameter: () => 'entry id',
  routes:
    "/entries/{id} is an entry's web page, for browsers (Accept: text/html); its document is at /agents/{id}/card.json (an agent) or /mcp-servers/{id}/document.json (an MCP server), and A2A's get is at /a2a/jsonrpc and /a2a/rest.",
};
export const ASSETS_PATH = '/assets';

/** True when the request prefers HTML to JSON (browsers navigating; not `*\/*` or JSON clients). */
export const wantsHtml = (req: Request) => req.accepts(['application/json', 'text/html']) === 'text/html';

/** The search filter keys this registry accepts, read from the operation's own schema. */
function searchFilters(): string[] {
  const filter = searchSchema.shape.filter.unwrap();
  return Object.keys(filter.shape);
}

/**
 * The longest value of each text filter (each item of a list), from the same schema: the page
 * leaves a longer one out of a link and says why, instead of showing the registry's refusal.
 */
function filterMaxChars(): Record<string, number> {
  const limits: Record<string, number> = {};
  for (const [key, optional] of Object.entries(searchSchema.shape.filter.unwrap().shape)) {
    const inner = optional.unwrap();
    const text = inner instanceof z.ZodArray ? inner.element : inner;
    if (text instanceof z.ZodString && text.maxLength !== null) limits[key] = text.maxLength;
  }
  return limits;
}

/** What each search filter key takes (PageConfig.filterTypes), from the same schema. */
function filterTypes(): Record<string, FilterType> {
  const types: Record<string, FilterType> = {};
  for (const [key, optional] of Object.entries(searchSchema.shape.filter.unwrap().shape)) {
    const inner = optional.unwrap();
    if (inner instanceof z.ZodBoolean) types[key] = 'boolean';
    else if (inner instanceof z.ZodArray) types[key] = 'list';
    else if (inner instanceof z.ZodEnum) types[key] = inner.options.map(String);
    else if (inner instanceof z.ZodString) types[key] = 'text';
  }
  return types;
}

/** The built assets, or undefined (logged) when they are missing or unreadable: the registry still serves every API. */
function loadAssets(log: Logger): WebAssets | undefined {
  const dir = findAssetsDir();
  if (!dir) {
    log.warn('the web page is not built (no dist/web/manifest.json): run `npm run build`; browsers get a page saying so');
    return undefined;
  }
  try {
    return WebAssets.load(dir);
  } catch (err) {
    log.error({ err, dir }, 'the web page assets could not be read: run `npm run build`; browsers get a page saying so');
    return undefined;
  }
}

export const webDoor: Door = {
  name: 'web',
  mount(app, ctx: DoorContext) {
    const { config, log, abuse } = ctx.core;
    // The page and its assets count against the address's request budget like every other door:
    // they were the one way to make the registry answer (and read files) without limit. Each is
    // answered with a request id and logged in one line, as every other door's requests are.
    const floodGuard = abuse.floodGuard();
    const scope = requestScope(log);
    const guarded = (handler: RequestHandler): RequestHandler => handlerChain([floodGuard, scope, handler]);
    const name = typeof ctx.card.name === 'string' ? ctx.card.name : 'A2A Agent Registry';
    // The page itself, refused by the same budget, is answered as a page (429 + Retry-After): a
    // browser shows what it is given, and the flood guard's JSON is for programs.
    const pageFloodGuard = abuse.floodGuard((_req, res, refusal) => {
      res.setHeader('Retry-After', String(refusal.retryAfterSeconds));
      res.setHeader('Cache-Control', 'no-store');
      res.status(429).type('html').send(rateLimitedPage(name, config.hardening.requestsPerMinute, refusal.retryAfterSeconds));
    });
    const guardedPage = (handler: RequestHandler): RequestHandler => handlerChain([pageFloodGuard, scope, handler]);
    const description = typeof ctx.card.description === 'string' ? ctx.card.description : '';
    const assets = loadAssets(log);
    // PUBLIC_URL's path: every link a page gives starts with it (a proxy may serve the registry under a path).
    const base = new URL(ctx.publicUrl).pathname.replace(/\/+$/, '');

    let page: RequestHandler;
    let notFound: RequestHandler | undefined;
    if (assets) {
      const pageConfig: PageConfig = {
        name,
        base,
        filters: searchFilters(),
        filterTypes: filterTypes(),
        filterMaxChars: filterMaxChars(),
        maxFilterValues: MAX_FILTER_VALUES,
        hidesUnhealthy: config.freshness.hideUnhealthySeconds !== undefined,
        readNeedsToken: !config.publicRead,
        maxIdChars: getSchema.shape.id.maxLength ?? 100,
        maxRevisionsListed: MAX_REVISIONS_LISTED,
        maxPageTokenChars: searchSchema.shape.pageToken.unwrap().maxLength ?? 512,
        maxQueryChars: config.hardening.maxQueryChars,
        maxDocumentBytes: config.maxDocumentBytes,
      };
      const html = cachedBody(Buffer.from(pageShell(assets.manifest, pageConfig, description)), 'text/html; charset=utf-8');
      app.use(ASSETS_PATH, guarded(assets.handler()));
      // Revalidated on every visit, so a new build's asset names are picked up at once.
      page = (req, res) => sendCached(req, res, html, 'no-cache');
      // The same HTML: the page's router finds no page at the path and says so.
      notFound = (req, res) => sendCached(req, res, html, 'no-cache', 404);
    } else {
      const body = notBuiltPage(name, base);
      page = (_req, res) => {
        res.status(503).setHeader('Content-Type', 'text/html; charset=utf-8');
        res.setHeader('Cache-Control', 'no-store');
        res.send(body);
      };
    }

    const pageHandler = guardedPage(page);
    const negotiated: RequestHandler = (req, res, next) => {
      res.vary('Accept');
      if (!wantsHtml(req)) return next();
      pageContentSecurityPolicy(req, res, () => pageHandler(req, res, next));
    };
    // GET routes answer HEAD too. Matched case-sensitively, as the page's own router matches them
    // (web/src/router.ts): express's default matching answered /VALIDATE with the page and status
    // 200, and the page then said "Page not found"; a path with no page is the 404 below.
    const pages = express.Router({ caseSensitive: true });
    for (const path of PAGE_PATHS) pages.get(path, negotiated);
    // The refusals a client that is no browser gets under /entries in this door's words: an id
    // that does not decode (/entries/%ff) was told of "e.g. a task id", a path with no page pointed
    // at the A2A endpoints only (http/errors.ts doorWords).
    app.use('/entries', doorWords(ENTRY_WORDS));
    app.use(pages);

    // Mounted last of all doors (server.ts), so only paths no route answered reach it. A path some
    // route takes with another method stays the 405 of http/errors.ts; so does a path whose GET
    // route passed the request on.
    const fallback = notFound && guardedPage(notFound);
    if (fallback) {
      app.use((req, res, next) => {
        if (req.method !== 'GET' && req.method !== 'HEAD') return next();
        res.vary('Accept');
        if (!wantsHtml(req) || allowedMethods(req.app, req.path).length > 0) return next();
        pageContentSecurityPolicy(req, res, () => fallback(req, res, next));
      });
      // An entry path that is not valid percent-encoding (/entries/%ff): express fails to decode
      // the id (a URIError, http/errors.ts answers 400 INVALID_PATH); a browser gets the page's
      // "not found" instead of that JSON.
      app.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
        if (!(err instanceof URIError) || (req.method !== 'GET' && req.method !== 'HEAD') || !req.path.startsWith('/entries/')) return next(err);
        res.vary('Accept');
        if (!wantsHtml(req)) return next(err);
        pageContentSecurityPolicy(req, res, () => fallback(req, res, next));
      });
    }
  },
};
