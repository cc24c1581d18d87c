/**
 * The one SDK request handler behind every A2A binding (JSON-RPC and HTTP+JSON in a2a-door.ts,
 * gRPC in grpc/): one card, one task store (core.tasks: tasks private to their caller, reads and
 * refusals in bounded memory, accepted writes durable), one executor over the shared
 * operations. Built once per registry and shared, so a task created over one binding can be
 * read, listed or subscribed to over another, and whatever the task store enforces (owners,
 * bounds) holds on all of them.
 */
import { AgentCard } from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import type { RegistryCore } from '../composition/build-registry.js';
import type { DoorContext } from '../composition/door.js';
import { RegistryExecutor } from '../operations/executor.js';
import { logInternalFailures } from './internal-failures.js';
import { RegistryRequestHandler } from './registry-request-handler.js';
import { DEFAULT_PUSH_RETRY, GuardedPushSender, PushConfigs, WatchPushes } from './watch-push.js';
import { WatchTasks } from './watch-task.js';

const handlers = new WeakMap<RegistryCore, A2ARequestHandler>();

/** The registry's A2A request handler: built on first use, then the same one for every door. */
export function a2aRequestHandler(ctx: DoorContext): A2ARequestHandler {
  let handler = handlers.get(ctx.core);
  if (!handler) {
    const { config, log, operations, tasks } = ctx.core;
    const executor = new RegistryExecutor(
      operations,
      { maxDocumentBytes: config.maxDocumentBytes, maxJsonDepth: config.hardening.maxJsonDepth, maxQueryChars: config.hardening.maxQueryChars },
      log,
      tasks,
    );
    const { abuse, fetcher, watches } = ctx.core;
    // Push notifications go through the outbound guard (the SDK's own sender calls global fetch).
    const pushConfigs = new PushConfigs(fetcher, watches, { httpCredentials: config.watches.httpCredentials });
    const pushes = new WatchPushes(pushConfigs, fetcher, log, config.watches.bufferEvents, { ...DEFAULT_PUSH_RETRY, windowMs: config.watches.webhookRetryMs });
    watches.onStart((watch) => pushes.follow(watch));
    // A stored watch that ended run nowhere (canceled while paused, failing to run for good): its webhooks are told too.
    watches.onEndUnrun((watch, end) => void pushes.tellUnrun(watch, end).catch((err: unknown) => log.error({ err, watch: watch.id }, 'the final status of a watch that ended could not be pushed')));
    // Every watch keeps its stored task current (events, its end), whether or not a stream is open.
    const watchTasks = new WatchTasks(tasks, watches, log);
    // Its internal failures logged with their cause, on every binding (internal-failures.ts).
    handler = logInternalFailures(
      new RegistryRequestHandler(AgentCard.fromJSON(ctx.card), tasks, executor, { hub: watches, tasks: watchTasks, budgets: abuse }, {
        store: pushConfigs,
        sender: new GuardedPushSender(pushConfigs, fetcher, watches, log),
      }),
      log,
    );
    handlers.set(ctx.core, handler);
  }
  return handler;
}
