/**
 * Documents any origin may read: the public GET answers a door opens to every origin
 * (Access-Control-Allow-Origin: *), whatever REGISTRY_CORS_ORIGINS says of the API (the catalog
 * door says which and why). Their GET headers and their CORS preflight are decided here, in one
 * place, so the two cannot disagree.
 *
 * The preflight: a browser sends one before a cross-origin GET that carries a header outside
 * the CORS safelist, such as If-None-Match to revalidate by the ETag these answers expose, or
 * Cache-Control. It was answered 200 with Allow and no Access-Control-* header (or by the
 * configured CORS, which names its own origins only), so such a GET failed in the browser,
 * though the same GET without the header was readable. It is answered before the configured
 * CORS (security.ts), for GET and HEAD only; a preflight for another method goes on to it.
 */
import express, { type RequestHandler } from 'express';

/**
 * What a reader of these documents may read from the answer besides the safelisted headers: the
 * validators, the request's id, and when it is refused, when to ask again (429) and what
 * credential is asked for (401, a token sent that the registry does not know).
 */
const EXPOSED_HEADERS = 'ETag, Last-Modified, X-Request-Id, Retry-After, WWW-Authenticate';
/**
 * What a reader may send: the validators of a conditional GET, the cache directives of a
 * reload, and the A2A version header A2A clients add to every request.
 */
export const OPEN_READ_REQUEST_HEADERS = ['If-None-Match', 'If-Modified-Since', 'Cache-Control', 'Pragma', 'A2A-Version'] as const;
/** How long a browser may reuse the preflight's answer (the configured CORS's too). */
export const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** On a GET or HEAD: the answer is readable from any origin, its validators included. */
export const openToAllOrigins: RequestHandler = (req, res, next) => {
  if (req.method === 'GET' || req.method === 'HEAD') {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
  }
  next();
};

/**
 * Answers the CORS preflight of a GET or HEAD under `paths` (matched as app.use matches them,
 * like the routes that open their GET answers), 204 for any origin. Anything else (a plain
 * OPTIONS asking which methods a path takes, a preflight for POST) goes on.
 *
 * An origin REGISTRY_CORS_ORIGINS allows (`tokenOrigins`) may send Authorization too, as to the
 * API: these reads take a token (the caller's own rate budget), and a page on such an origin
 * sending one was refused by the browser here while POST /search and /mcp let it through. Other
 * origins read without one, as ever (Vary: Origin: the answer depends on it).
 */
export function openReadPreflights(paths: readonly string[], tokenOrigins: readonly string[] | '*' = []): RequestHandler {
  const router = express.Router();
  router.use([...paths], (req, res, next) => {
    const origin = req.header('origin');
    if (origin === undefined) return next();
    const method = req.header('access-control-request-method');
    if (method !== 'GET' && method !== 'HEAD') return next();
    const withToken = tokenOrigins === '*' || tokenOrigins.includes(origin);
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD');
    res.setHeader('Access-Control-Allow-Headers', [...OPEN_READ_REQUEST_HEADERS, ...(withToken ? ['Authorization'] : [])].join(', '));
    if (tokenOrigins !== '*' && tokenOrigins.length > 0) res.setHeader('Vary', 'Origin');
    res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
    res.setHeader('Content-Length', '0');
    res.status(204).end();
  });
  // Every request passes here: only an OPTIONS is matched against the paths (a router's walk
  // costs microseconds a request on the A2A endpoints' hot path).
  return (req, res, next) => (req.method === 'OPTIONS' && paths.length > 0 ? router(req, res, next) : next());
}
