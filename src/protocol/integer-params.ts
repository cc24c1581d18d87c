/**
 * The integer parameters of A2A requests (int32 in the proto) and their rules, the same on every
 * binding (A2A 3.3.2: servers MUST validate all input parameters; 5.1: the bindings are
 * functionally equivalent). The messages are the SDK's own for HTTP+JSON's historyLength query
 * parameter, so every binding answers a bad value alike.
 *
 * The rules are checked in two places:
 * - the request handler (registry-request-handler.ts), on the SDK's typed requests, whatever the
 *   binding: gRPC's int32 may be negative, and the v0.3 JSON-RPC methods pass the value through
 *   as the client sent it;
 * - the HTTP doors (requestIntegerGuard below), on the values as sent, before the SDK reads them:
 *   its JSON reader takes Number(value), so `true` arrives as 1 and `""` or `[]` as 0, and its
 *   query reader parseInt, so `1.5` arrives as 1 and `5abc` as 5. After that, the handler can no
 *   longer tell what the client sent.
 *
 * A query parameter given twice is refused there too (each holds one value), and one a task
 * route does not take (a typo such as `?contextid=`, which the SDK ignored: every task was
 * listed); and so, over JSON-RPC, is a string parameter of the task methods sent as an array,
 * object, number or boolean: the SDK's JSON reader takes String(value), so `"contextId": ["a",
 * "b"]` filtered on the context "a,b", `"statusTimestampAfter": ["2020-..."]` was read as the one
 * timestamp and `"id": true` looked for the task "true", without a word. (A message's own ids and
 * lists are checked alike, on JSON-RPC and HTTP+JSON: message-fields.ts.)
 *
 * The bool parameters (includeArtifacts, returnImmediately) are checked there too: the SDK's JSON
 * reader takes Boolean(value), so `"false"` (a string) asked for the artifacts, and its query
 * reader takes anything but "true" as false, so `includeArtifacts=1` or `TRUE` left them out.
 */
import type { RequestHandler } from 'express';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { undecodableQueryParam } from '../http/query-encoding.js';
import { codePointPrefix } from '../lib/code-points.js';
import { isObject, quote } from '../lib/json.js';
import { percentDecodedOrUndefined } from '../lib/percent-decoding.js';
import { sendA2AError, type A2ABinding } from './a2a-errors.js';
import { VERSION_PARAMETER, isLegacyRequest } from './versions.js';

export interface IntegerRule {
  min: number;
  max?: number;
}

/** historyLength (A2A 3.2.4): 0 for no history, N for the N latest messages; absent for all of it. */
export const HISTORY_LENGTH: IntegerRule = { min: 0 };
/** pageSize of ListTasks (the SDK's bounds; an optional field in the proto, so 0 is a value, and refused). */
export const TASKS_PAGE_SIZE: IntegerRule = { min: 1, max: 100 };
/**
 * pageSize of ListTaskPushNotificationConfigs: the same bounds, but 0 is the proto's default
 * (the field is not optional) and means "not set": the SDK's own HTTP+JSON and v0.3 readers send it.
 */
export const CONFIGS_PAGE_SIZE: IntegerRule = { min: 0, max: 100 };

/** A bool parameter: a JSON true or false (ProtoJSON), in a query the strings "true" and "false" (A2A 11.5). */
export const BOOLEAN = 'boolean';

const INT32_MAX = 2 ** 31 - 1;
/** The string form of an int32 (ProtoJSON accepts one in JSON; a query parameter is one, A2A 11.5). */
const DECIMAL_INTEGER = /^-?\d{1,20}$/;

/**
 * What is wrong with `value` as the integer parameter `field`, or undefined. `value` is a number,
 * or a string holding a decimal integer; anything else (a boolean, a fraction, "abc", "", an
 * array) is no integer. Absent (undefined or null) is fine: the parameter is optional.
 */
export function integerProblem(field: string, value: unknown, rule: IntegerRule): string | undefined {
  if (value === undefined || value === null) return undefined;
  const n = typeof value === 'number' ? value : typeof value === 'string' && DECIMAL_INTEGER.test(value) ? Number(value) : NaN;
  // An integer past int32 (historyLength: 10000000000 meant as "all of it") is told so: "must be a
  // valid integer" alone left the client looking at a value that is one.
  if (Number.isInteger(n) && Math.abs(n) > INT32_MAX) return `${field} must be a valid integer: ${String(value).slice(0, 24)} is past the int32 range (here ${rule.min} to ${rule.max ?? INT32_MAX})`;
  if (!Number.isInteger(n)) return `${field} must be a valid integer`;
  if (rule.max !== undefined && (n < rule.min || n > rule.max)) return `${field} must be between ${rule.min} and ${rule.max}`;
  if (n < rule.min) return rule.min === 0 ? `${field} must be non-negative` : `${field} must be at least ${rule.min}`;
  return undefined;
}

/** Throws the binding's invalid-params error (-32602, HTTP 400, INVALID_ARGUMENT) when `value` breaks the rule. */
export function requireInteger(field: string, value: unknown, rule: IntegerRule): void {
  const problem = integerProblem(field, value, rule);
  if (problem) throw new RequestMalformedError({ message: problem, metadata: { field } });
}

/** What is wrong with `value` as the bool parameter `field`, or undefined (absent is fine). */
function booleanProblem(field: string, value: unknown, spellings: 'json' | 'query'): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (spellings === 'json') return typeof value === 'boolean' ? undefined : `${field} must be true or false (a JSON boolean, not a string or number)`;
  return value === 'true' || value === 'false' ? undefined : `${field} must be "true" or "false"`;
}

/** A parameter in a request: its path under the JSON-RPC params, the HTTP+JSON body or query, and its rule. */
interface Param {
  path: readonly string[];
  rule: IntegerRule | typeof BOOLEAN;
}
const HISTORY: Param = { path: ['historyLength'], rule: HISTORY_LENGTH };
const CONFIGURATION_HISTORY: Param = { path: ['configuration', 'historyLength'], rule: HISTORY_LENGTH };
const TASKS_PAGE: Param = { path: ['pageSize'], rule: TASKS_PAGE_SIZE };
const CONFIGS_PAGE: Param = { path: ['pageSize'], rule: CONFIGS_PAGE_SIZE };
const INCLUDE_ARTIFACTS: Param = { path: ['includeArtifacts'], rule: BOOLEAN };
const RETURN_IMMEDIATELY: Param = { path: ['configuration', 'returnImmediately'], rule: BOOLEAN };

/** The v1.0 JSON-RPC methods with integer and bool params (the v0.3 ones reach the handler as sent). */
const JSONRPC_PARAMS = new Map<string, readonly Param[]>([
  ['SendMessage', [CONFIGURATION_HISTORY, RETURN_IMMEDIATELY]],
  ['SendStreamingMessage', [CONFIGURATION_HISTORY, RETURN_IMMEDIATELY]],
  ['GetTask', [HISTORY]],
  ['ListTasks', [HISTORY, TASKS_PAGE, INCLUDE_ARTIFACTS]],
  ['ListTaskPushNotificationConfigs', [CONFIGS_PAGE]],
]);
/** HTTP+JSON routes (optionally under a tenant) with integer and bool params in the body (those in a query: REST_QUERY_ROUTES). */
const REST_BODY_PARAMS: ReadonlyArray<[RegExp, readonly Param[]]> = [[/^\/(?:[^/]+\/)?message:(?:send|stream)$/, [CONFIGURATION_HISTORY, RETURN_IMMEDIATELY]]];

/** The snake_case name the SDK's JSON reader also takes for a camelCase one (a query is camelCase only, A2A 11.5). */
const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The first broken parameter of `params` in `root`, or undefined. */
function problemIn(root: unknown, params: readonly Param[], spellings: 'json' | 'query'): { message: string; field: string } | undefined {
  for (const { path, rule } of params) {
    let node: unknown = root;
    const names: string[] = [];
    for (const name of path) {
      if (!isObject(node)) break;
      const here = node;
      const own = (key: string): unknown => (Object.hasOwn(here, key) ? here[key] : undefined);
      // As the SDK reads JSON: the camelCase name unless it is absent or null, then the snake_case one.
      const camel = own(name);
      const spelled = spellings === 'json' && (camel === undefined || camel === null) ? snakeCase(name) : name;
      names.push(spelled);
      node = own(spelled);
    }
    if (names.length < path.length) continue;
    const field = names.join('.');
    const message = rule === BOOLEAN ? booleanProblem(field, node, spellings) : integerProblem(field, node, rule);
    if (message) return { message, field };
  }
  return undefined;
}

/**
 * A query parameter given more than once (`?contextId=a&contextId=b`), which the query parser
 * hands on as an array, or undefined. Every A2A query parameter holds one value (A2A 11.5: they
 * are the request's scalar fields); the SDK passed such an array of context ids on to the task
 * store, whose query failed: HTTP 500 for a client's mistake.
 */
function repeatedParam(query: unknown): { message: string; field: string } | undefined {
  if (!isObject(query)) return undefined;
  for (const [name, value] of Object.entries(query)) {
    if (!Array.isArray(value)) continue;
    const field = codePointPrefix(name, 64);
    return { message: `${field} is given ${value.length} times; each query parameter takes one value: send it once`, field };
  }
  return undefined;
}

/**
 * What every route takes in its query: `tenant`, which the SDK reads there (a tenant in the path
 * wins over it), and the version (A2A 3.6.1: "Clients MAY provide the A2A-Version as a request
 * parameter instead of a header", versions.ts).
 */
const EVERY_ROUTE = ['tenant', VERSION_PARAMETER];
/** The query parameters of ListTasks (A2A 11.5: the request's fields, camelCase). */
const LIST_TASKS_QUERY = ['contextId', 'status', 'pageSize', 'pageToken', 'historyLength', 'statusTimestampAfter', 'includeArtifacts', ...EVERY_ROUTE];

/**
 * An HTTP+JSON task route (optionally under a tenant), the methods it serves, the query parameters
 * it takes, and of those the integer and bool ones with their rules.
 */
interface QueryRoute {
  route: string;
  methods: ReadonlySet<string>;
  path: RegExp;
  names: readonly string[];
  params?: readonly Param[];
}
/** In the SDK's order of routes, the first that matches a path is the one that serves it. */
const REST_QUERY_ROUTES: readonly QueryRoute[] = [
  { route: '/tasks/{id}:subscribe', methods: new Set(['GET', 'HEAD', 'POST']), path: /^\/(?:[^/]+\/)?tasks\/[^/:]+:subscribe$/, names: EVERY_ROUTE },
  { route: '/tasks/{id}:cancel', methods: new Set(['POST']), path: /^\/(?:[^/]+\/)?tasks\/[^/:]+:cancel$/, names: EVERY_ROUTE },
  { route: '/tasks/{id}', methods: new Set(['GET', 'HEAD']), path: /^\/(?:[^/]+\/)?tasks\/[^/:]+$/, names: ['historyLength', ...EVERY_ROUTE], params: [HISTORY] },
  { route: '/tasks', methods: new Set(['GET', 'HEAD']), path: /^\/(?:[^/]+\/)?tasks$/, names: LIST_TASKS_QUERY, params: [HISTORY, TASKS_PAGE, INCLUDE_ARTIFACTS] },
  { route: '/tasks/{id}/pushNotificationConfigs', methods: new Set(['GET', 'HEAD']), path: /^\/(?:[^/]+\/)?tasks\/[^/:]+\/pushNotificationConfigs$/, names: ['pageSize', 'pageToken', ...EVERY_ROUTE], params: [CONFIGS_PAGE] },
  { route: '/tasks/{id}/pushNotificationConfigs', methods: new Set(['POST']), path: /^\/(?:[^/]+\/)?tasks\/[^/:]+\/pushNotificationConfigs$/, names: EVERY_ROUTE },
  { route: '/tasks/{id}/pushNotificationConfigs/{configId}', methods: new Set(['GET', 'HEAD', 'DELETE']), path: /^\/(?:[^/]+\/)?tasks\/[^/:]+\/pushNotificationConfigs\/[^/]+$/, names: EVERY_ROUTE },
];

/** The task route that serves `method` on `path`, or undefined. */
const queryRouteOf = (method: string, path: string): QueryRoute | undefined => REST_QUERY_ROUTES.find((route) => route.methods.has(method) && route.path.test(path));

/** A name as a near miss compares: case, '_' and '-' left out (contextid, context_id and Context-Id are contextId). */
const looseName = (name: string): string => name.replace(/[_-]/g, '').toLowerCase();

/**
 * A query parameter that the task route asked does not take (`GET /tasks?bogus=1`, or a typo such
 * as `?contextid=...`), or undefined, told as ARD's GET /agents tells one: naming the route's
 * parameters, and the one meant when only its spelling is off. The SDK ignored it, so a
 * misspelt filter listed every task, as if the client had asked for no filter. Routes that are
 * not a task's (a message's, the extended card) are left alone.
 */
function unknownQueryParam(method: string, served: QueryRoute | undefined, query: unknown): { message: string; field: string } | undefined {
  if (!isObject(query) || !served) return undefined;
  for (const name of Object.keys(query)) {
    if (served.names.includes(name)) continue;
    const shown = quote(name, 64);
    const meant = served.names.find((known) => looseName(known) === looseName(name));
    const spelling = !meant ? '' : meant === VERSION_PARAMETER ? `: send it as ${meant}` : `: send it as ${meant} (query parameter names are camelCase, A2A 11.5)`;
    return {
      message: `${shown} is not a query parameter of ${method === 'HEAD' ? 'GET' : method} ${served.route}, which takes ${served.names.join(', ')}${spelling}.`,
      field: codePointPrefix(name, 64),
    };
  }
  return undefined;
}

/** The string parameters of the task methods (A2A 9.4, and their v0.3 names' params), camelCase and as the SDK also reads them. */
const STRING_PARAMS = ['tenant', 'id', 'taskId', 'contextId', 'status', 'pageToken', 'statusTimestampAfter', 'pushNotificationConfigId'].flatMap((name) =>
  name === snakeCase(name) ? [name] : [name, snakeCase(name)],
);
/**
 * The JSON-RPC methods whose string params are checked: all but SendMessage's (its message's
 * fields are checked by the shape guard: message-fields.ts). Their other params are scalars or
 * `metadata`; a push config's own object is checked by the config's reader.
 */
const SCALAR_METHODS = new Set([
  'GetTask',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'GetExtendedAgentCard',
  'tasks/get',
  'tasks/cancel',
  'tasks/resubscribe',
  'tasks/pushNotificationConfig/set',
  'tasks/pushNotificationConfig/get',
  'tasks/pushNotificationConfig/list',
  'tasks/pushNotificationConfig/delete',
]);
/** Enum params: ProtoJSON takes an enum's number as well as its name, so a number is no mistake there. */
const ENUM_PARAMS = new Set(['status']);

/**
 * A string parameter of a task method sent as an array, object, number or boolean, or undefined.
 * ProtoJSON takes only a JSON string for a string field; the SDK's reader took String(value), so
 * `"id": true` looked for the task "true" and answered "Task not found: true" instead of naming
 * the client's mistake.
 */
function nonScalarParam(method: string, params: unknown): { message: string; field: string } | undefined {
  if (!SCALAR_METHODS.has(method) || !isObject(params)) return undefined;
  for (const field of STRING_PARAMS) {
    const value = Object.hasOwn(params, field) ? params[field] : undefined;
    if (typeof value === 'object' && value !== null) {
      const what = Array.isArray(value) ? `an array of ${value.length}` : 'an object';
      return { message: `${field} must be one string, not ${what}: a request takes one value (for several, send one request each)`, field };
    }
    if (typeof value === 'boolean' || (typeof value === 'number' && !ENUM_PARAMS.has(field))) return notAString(field, value);
  }
  return undefined;
}

const notAString = (field: string, value: unknown): { message: string; field: string } => ({
  message: `${field} must be a string, not the ${typeof value} ${String(value)}: send it in quotes`,
  field,
});

/** The string fields of a push config (A2A 4.3.1, 4.3.2), as the SDK also reads them. */
const CONFIG_STRINGS = ['id', 'taskId', 'task_id', 'tenant', 'url', 'token'];
const AUTHENTICATION_STRINGS = ['scheme', 'credentials'];

/**
 * A string field of a push config sent as a number or boolean, or undefined: the SDK took
 * String(value), so `"token": 7` was kept as "7" and `"id": 5` as the config "5", without a word.
 * `config` is the HTTP+JSON body or v1.0 params, or v0.3's params.pushNotificationConfig.
 */
function pushConfigProblem(config: unknown, at: string): { message: string; field: string } | undefined {
  if (!isObject(config)) return undefined;
  const check = (node: Record<string, unknown>, names: readonly string[], prefix: string) => {
    for (const name of names) {
      const value = Object.hasOwn(node, name) ? node[name] : undefined;
      if (typeof value === 'number' || typeof value === 'boolean') return notAString(`${prefix}${name}`, value);
    }
    return undefined;
  };
  const auth = config.authentication;
  return check(config, CONFIG_STRINGS, at) ?? (isObject(auth) ? check(auth, AUTHENTICATION_STRINGS, `${at}authentication.`) : undefined);
}
/** The push config given with a message (v1.0 configuration.taskPushNotificationConfig, v0.3 configuration.pushNotificationConfig). */
function messageConfigProblem(params: Record<string, unknown>): { message: string; field: string } | undefined {
  const configuration = params.configuration;
  if (!isObject(configuration)) return undefined;
  for (const name of ['taskPushNotificationConfig', 'pushNotificationConfig']) {
    const found = pushConfigProblem(configuration[name], `configuration.${name}.`);
    if (found) return found;
  }
  return undefined;
}
const REST_MESSAGE_PATH = /^\/(?:[^/]+\/)?message:(?:send|stream)$/;
const REST_CONFIG_PATH = /^\/(?:[^/]+\/)?tasks\/([^/:]+)\/pushNotificationConfigs$/;

/**
 * An HTTP+JSON config whose body names another task than its path: the SDK took the path's and
 * dropped the body's without a word, so a client that meant the body's task configured the path's.
 */
function otherTaskInBody(body: unknown, path: string): { message: string; field: string } | undefined {
  const encoded = REST_CONFIG_PATH.exec(path)?.[1];
  if (!isObject(body) || encoded === undefined) return undefined;
  const pathTask = percentDecodedOrUndefined(encoded);
  if (pathTask === undefined) return undefined;
  for (const field of ['taskId', 'task_id']) {
    const named = body[field];
    if (typeof named === 'string' && named !== '' && named !== pathTask) {
      return {
        message: `${field} ${quote(named, 100)} in the body is not the task of the path (${quote(pathTask, 100)}): POST the config to /tasks/${codePointPrefix(named, 100)}/pushNotificationConfigs, or leave ${field} out.`,
        field,
      };
    }
  }
  return undefined;
}

const paramsOf = (table: ReadonlyArray<[RegExp, readonly Param[]]>, path: string): readonly Param[] => table.find(([route]) => route.test(path))?.[1] ?? [];

/**
 * The integer and bool parameters of an HTTP binding's requests, as sent: a bad one is refused with the
 * binding's invalid-params error before the SDK converts it. Mount after the shape checks.
 */
export function requestIntegerGuard(binding: A2ABinding): RequestHandler {
  return (req, res, next) => {
    let found: ReturnType<typeof problemIn>;
    if (binding === 'JSONRPC') {
      const body: unknown = req.body;
      // v0.3 requests: the handler checks what the compatibility layer hands it unconverted.
      if (req.method === 'POST' && isObject(body) && typeof body.method === 'string') {
        found = nonScalarParam(body.method, body.params);
        if (!found && body.method === 'CreateTaskPushNotificationConfig') found = pushConfigProblem(body.params, '');
        if (!found && body.method === 'tasks/pushNotificationConfig/set' && isObject(body.params)) {
          found = pushConfigProblem(body.params.pushNotificationConfig, 'pushNotificationConfig.');
        }
        if (!found && isObject(body.params)) found = messageConfigProblem(body.params);
        if (!found && !isLegacyRequest(req)) found = problemIn(body.params, JSONRPC_PARAMS.get(body.method) ?? [], 'json');
      }
    } else if (req.method === 'GET') {
      const served = queryRouteOf(req.method, req.path);
      found = undecodableQueryParam(req.originalUrl) ?? unknownQueryParam(req.method, served, req.query) ?? repeatedParam(req.query) ?? problemIn(req.query, served?.params ?? [], 'query');
    } else {
      // A task route's query names, whatever its method (POST /tasks/{id}:cancel, DELETE a config): its body next.
      found = unknownQueryParam(req.method, queryRouteOf(req.method, req.path), req.query);
      if (!found && req.method === 'POST') {
        found = problemIn(req.body, paramsOf(REST_BODY_PARAMS, req.path), 'json');
        if (!found && REST_CONFIG_PATH.test(req.path)) found = pushConfigProblem(req.body, '') ?? otherTaskInBody(req.body, req.path);
        if (!found && REST_MESSAGE_PATH.test(req.path) && isObject(req.body)) found = messageConfigProblem(req.body);
      }
    }
    if (!found) return next();
    sendA2AError(req, res, binding, new RequestMalformedError({ message: found.message, metadata: { field: found.field } }));
  };
}
