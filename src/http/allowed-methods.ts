/**
 * The methods the application's routes take at a path, read from express's own router, so a
 * request with another method can be answered 405 with `Allow` (RFC 9110 15.5.6) rather than
 * 404 as if the path did not exist. Read from the routes themselves rather than from a list kept
 * beside them, which would drift: the doors mount theirs (and the SDK's routers) in
 * composition/doors.ts.
 *
 * Express (router 2.x) keeps each `app.METHOD(path)` as a layer with a `route` (`route.methods`)
 * and each `app.use(path, router)` as a layer whose `handle` is a router with its own `stack`;
 * `layer.match(path)` answers the part of the path it matched, or false. Only used for requests
 * no route answered, so walking every layer costs nothing on the paths that matter.
 */
import type { Application } from 'express';

interface Layer {
  match(path: string): false | { path: string };
  route?: { methods: Record<string, boolean | undefined> };
  handle: unknown;
}

const stackOf = (handle: unknown): Layer[] | undefined => {
  const stack = (handle as { stack?: unknown } | null)?.stack;
  return Array.isArray(stack) ? (stack as Layer[]) : undefined;
};

/**
 * The layer's match, or false. A path parameter that is not valid percent-encoding throws in
 * express once the route's pattern matched (/tasks/%ff): the route is there, and the request, when
 * it reaches it, is refused 400 INVALID_PATH. It matched nothing here, so such a path was "No
 * route" (GET /a2a/rest/tasks/%ff without A2A-Version, whose negotiation asks whether a route
 * takes it, was 404 where /tasks/abc is the version's refusal). A mount's throw matches nothing:
 * the part of the path it would take is unknown.
 */
function matchOf(layer: Layer, path: string): false | { path: string } {
  try {
    return layer.match(path);
  } catch {
    return layer.route ? { path } : false;
  }
}

function collect(stack: readonly Layer[], path: string, into: Set<string>): void {
  for (const layer of stack) {
    const matched = matchOf(layer, path);
    if (!matched) continue;
    if (layer.route) {
      for (const [method, takes] of Object.entries(layer.route.methods)) if (takes && method !== '_all') into.add(method.toUpperCase());
      continue;
    }
    // A mounted router: its routes see the path without the part the mount matched.
    const inner = stackOf(layer.handle);
    if (inner) collect(inner, path.slice(matched.path.length) || '/', into);
  }
}

/** The methods some route of `app` takes at `path` (GET implies HEAD), sorted; empty when none. */
export function allowedMethods(app: Application, path: string): string[] {
  const stack = stackOf((app as unknown as { router?: unknown }).router);
  if (!stack) return [];
  const methods = new Set<string>();
  collect(stack, path, methods);
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}
