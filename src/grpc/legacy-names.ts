/**
 * The v0.3 gRPC service (a2a.v1) names a task and a push config by resource name where v0.3
 * JSON-RPC takes their ids: GetTask, CancelTask and TaskSubscription take `name` "tasks/{id}",
 * CreateTaskPushNotificationConfig and ListTaskPushNotificationConfig `parent` "tasks/{id}",
 * GetTaskPushNotificationConfig and DeleteTaskPushNotificationConfig `name`
 * "tasks/{id}/pushNotificationConfigs/{configId}".
 *
 * - The SDK's reader refused a name it could not read with `Invalid or missing task ID in: ""`
 *   (an ErrorInfo naming no field), where v0.3 JSON-RPC says which field is required and what
 *   goes in it: legacyNameProblem says it alike, naming the field, what was given and the form
 *   expected, before the SDK reads the request (the call guard refuses it). A task's name with
 *   more after its id ("tasks/{id}/x") is no task's name either; the SDK read "tasks/{id}".
 * - v0.3 gets and deletes "the push notification configuration for a task" by the task's id
 *   alone (A2A 0.3 7.6, 7.8; JSON-RPC's TaskIdParams), which the request handler serves
 *   (registry-request-handler.ts). Over gRPC that is the task's name, "tasks/{id}" (or a config
 *   name with no config id, "tasks/{id}/pushNotificationConfigs/"): the SDK refused both as
 *   malformed. readingTaskConfigNames serves them as JSON-RPC serves the same request.
 * - CreateTaskPushNotificationConfig names the new config by `config_id`, REQUIRED (v0.3
 *   a2a.proto; the config's own `push_notification_config.id` is its JSON-RPC form). The SDK's
 *   reader read only the inner id and dropped `config_id` without a word: a client that named
 *   its configs there got each one under the task's id (the id of a config set without one), so
 *   its second config replaced its first. The config now gets `config_id` when it has no id of
 *   its own (withConfigIdInside); one naming another id is refused (legacyNameProblem), as no
 *   config can have both.
 */
import type * as grpc from '@grpc/grpc-js';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { quote } from '../lib/json.js';
import { LEGACY_TASK_ID_SOURCE } from '../protocol/registry-request-handler.js';

const SERVICE_PATH = '/a2a.v1.A2AService/';
/** The request field holding a task's name, by method. */
const TASK_NAME_FIELDS: Record<string, 'name' | 'parent'> = {
  GetTask: 'name',
  CancelTask: 'name',
  TaskSubscription: 'name',
  CreateTaskPushNotificationConfig: 'parent',
  ListTaskPushNotificationConfig: 'parent',
};
/** The methods whose `name` is a push config's. */
const CONFIG_NAME_METHODS = new Set(['GetTaskPushNotificationConfig', 'DeleteTaskPushNotificationConfig']);

const TASK_NAME = /^tasks\/([^/]+)$/;
const CONFIG_NAME = /^tasks\/([^/]+)\/pushNotificationConfigs\/([^/]*)$/;
/** A segment that names something: not blank (the request handler would say "id is required"). */
const named = (segment: string | undefined): segment is string => segment !== undefined && segment.trim() !== '';

const TASK_FORM = `"tasks/{id}", with the id of the task (${LEGACY_TASK_ID_SOURCE})`;
const CONFIG_FORM =
  `"tasks/{id}/pushNotificationConfigs/{configId}" (ListTaskPushNotificationConfig lists a task's configs), or "tasks/{id}" for the task's config, with the id of the task (${LEGACY_TASK_ID_SOURCE})`;

/** A config name naming a task and no config: "tasks/{id}" or "tasks/{id}/pushNotificationConfigs/"; the task's id. */
function taskAloneIn(name: string): string | undefined {
  const config = CONFIG_NAME.exec(name);
  const task = TASK_NAME.exec(name)?.[1] ?? (config?.[2] === '' ? config[1] : undefined);
  return named(task) ? task : undefined;
}

function malformed(field: string, given: string, what: string, form: string): RequestMalformedError {
  const message = given === '' ? `${field} is required: ${what}, ${form}.` : `${field} ${quote(given, 128)} is not ${what}: send ${form}.`;
  return new RequestMalformedError({ message, metadata: { field } });
}

/** A v0.3 CreateTaskPushNotificationConfigRequest as the SDK's service decodes it (ts-proto: absent strings are ""). */
interface CreateConfigRequest {
  parent: string;
  configId: string;
  config?: { name: string; pushNotificationConfig?: { id: string } };
}

/** What is wrong with the resource name a v0.3 gRPC request carries (`path`: /a2a.v1.A2AService/Method); undefined when nothing is. */
export function legacyNameProblem(path: string, request: unknown): RequestMalformedError | undefined {
  if (!path.startsWith(SERVICE_PATH) || typeof request !== 'object' || request === null) return undefined;
  const method = path.slice(SERVICE_PATH.length);
  const taskField = TASK_NAME_FIELDS[method];
  if (taskField) {
    const given = String((request as Record<string, unknown>)[taskField] ?? '');
    if (!named(TASK_NAME.exec(given)?.[1])) return malformed(taskField, given, "a task's resource name", TASK_FORM);
    return method === 'CreateTaskPushNotificationConfig' ? twoConfigIds(request as CreateConfigRequest) : undefined;
  }
  if (CONFIG_NAME_METHODS.has(method)) {
    const given = String((request as { name?: unknown }).name ?? '');
    const config = CONFIG_NAME.exec(given);
    if ((config && named(config[1]) && named(config[2])) || taskAloneIn(given) !== undefined) return undefined;
    return malformed('name', given, "a push notification config's resource name", CONFIG_FORM);
  }
  return undefined;
}

/** A create whose `config_id` and config id name two configs: which one the client meant cannot be told. */
function twoConfigIds(request: CreateConfigRequest): RequestMalformedError | undefined {
  const inside = request.config?.pushNotificationConfig?.id ?? '';
  if (request.configId === '' || inside === '' || inside === request.configId) return undefined;
  return new RequestMalformedError({
    message: `config_id ${quote(request.configId, 128)} and config.push_notification_config.id ${quote(inside, 128)} name two different configs: send the config's id in config_id (the same in both, or the inner one empty).`,
    metadata: { field: 'configId' },
  });
}

/** The request with the config named by `config_id` when the config has no id of its own (see above). */
function withConfigIdInside(request: CreateConfigRequest): CreateConfigRequest {
  const inner = request.config?.pushNotificationConfig;
  if (request.configId === '' || !inner || inner.id !== '') return request;
  return { ...request, config: { ...request.config!, pushNotificationConfig: { ...inner, id: request.configId } } };
}

/** The request handler, getting a task's config by the task's id alone (as v0.3 JSON-RPC's get without pushNotificationConfigId). */
function gettingTheTaskConfig(handler: A2ARequestHandler): A2ARequestHandler {
  return new Proxy(handler, {
    get(target, key) {
      if (key === 'getTaskPushNotificationConfig') {
        const get: A2ARequestHandler['getTaskPushNotificationConfig'] = (params, context) => target.getTaskPushNotificationConfig({ ...params, id: '' }, context);
        return get;
      }
      const value: unknown = Reflect.get(target, key, target);
      // Bound: the handler's methods use its private fields, which the proxy has none of.
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

type NamedCall = grpc.ServerUnaryCall<{ name: string }, unknown>;

/**
 * The v0.3 service built by `build` over `handler`, taking a task's name for its push config
 * (see above): GetTaskPushNotificationConfig answers the task's config, or NOT_FOUND "task … has
 * none", as JSON-RPC's tasks/pushNotificationConfig/get {id} does; DeleteTaskPushNotificationConfig
 * deletes the config set without an id, which has the task's id, as JSON-RPC's delete {id} does.
 * The SDK's reader takes only a config name with both ids, so the request goes on as one.
 * CreateTaskPushNotificationConfig names the config by its `config_id` (withConfigIdInside).
 */
export function readingTaskConfigNames<T extends grpc.UntypedServiceImplementation>(build: (handler: A2ARequestHandler) => T, handler: A2ARequestHandler): T {
  const service = build(handler);
  const getTheTaskConfig = build(gettingTheTaskConfig(handler)).getTaskPushNotificationConfig as grpc.handleUnaryCall<{ name: string }, unknown>;
  const get = service.getTaskPushNotificationConfig as grpc.handleUnaryCall<{ name: string }, unknown>;
  const remove = service.deleteTaskPushNotificationConfig as grpc.handleUnaryCall<{ name: string }, unknown>;
  /** The call with its name a config name of the task's id (the handler drops it for a get); undefined when it names a config. */
  const asConfigOfTheTask = (call: NamedCall): NamedCall | undefined => {
    const task = taskAloneIn(call.request.name);
    if (task === undefined) return undefined;
    call.request = { ...call.request, name: `tasks/${task}/pushNotificationConfigs/${task}` };
    return call;
  };
  const create = service.createTaskPushNotificationConfig as grpc.handleUnaryCall<CreateConfigRequest, unknown>;
  return {
    ...service,
    createTaskPushNotificationConfig: ((call: grpc.ServerUnaryCall<CreateConfigRequest, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      call.request = withConfigIdInside(call.request);
      return create(call, callback);
    }) as grpc.handleUnaryCall<CreateConfigRequest, unknown>,
    getTaskPushNotificationConfig: ((call: NamedCall, callback: grpc.sendUnaryData<unknown>) => {
      const ofTheTask = asConfigOfTheTask(call);
      return ofTheTask ? getTheTaskConfig(ofTheTask, callback) : get(call, callback);
    }) as grpc.handleUnaryCall<{ name: string }, unknown>,
    deleteTaskPushNotificationConfig: ((call: NamedCall, callback: grpc.sendUnaryData<unknown>) =>
      remove(asConfigOfTheTask(call) ?? call, callback)) as grpc.handleUnaryCall<{ name: string }, unknown>,
  };
}
