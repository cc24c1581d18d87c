/**
 * Pages of a task's push notification configs (ListTaskPushNotificationConfigs), as ListTasks
 * pages tasks: at most `pageSize` per page, and a `nextPageToken` while more are left, which
 * the client passes back as `pageToken`. The SDK's handler answers every config with no token
 * whatever the page size asked.
 *
 * Configs come in the order of their ids, and a page token names the last id its page held, so
 * a token stays good when configs are added or deleted between pages (none is sent twice, and
 * none that stays is skipped).
 */
import { ListTaskPushNotificationConfigsResponse, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { RequestHandler, Response } from 'express';

/** `pageSize` 0 is the proto's default: not set, every config on one page (a task has at most 10). */
export function configPage(taskId: string, configs: readonly TaskPushNotificationConfig[], pageSize: number, pageToken: string): ListTaskPushNotificationConfigsResponse {
  const after = pageToken ? readToken(taskId, pageToken) : undefined;
  const ordered = configs.filter((c) => after === undefined || c.id > after).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const page = pageSize > 0 ? ordered.slice(0, pageSize) : ordered;
  const last = page.at(-1);
  return { configs: page, nextPageToken: page.length < ordered.length && last ? token(taskId, last.id) : '' };
}

/** The token of the page after the config `lastId`: which task it lists, and where it stopped. */
function token(taskId: string, lastId: string): string {
  return Buffer.from(JSON.stringify({ task: taskId, after: lastId }), 'utf8').toString('base64url');
}

function readToken(taskId: string, pageToken: string): string {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(pageToken, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  const { task, after } = (typeof decoded === 'object' && decoded !== null ? decoded : {}) as { task?: unknown; after?: unknown };
  if (task !== taskId || typeof after !== 'string') {
    throw new RequestMalformedError({
      message: "pageToken is not a page token of this task's push notification configs; pass the nextPageToken of the previous page.",
      metadata: { field: 'pageToken' },
    });
  }
  return after;
}

/**
 * A page as JSON with every field, empty ones too: `{"configs": [], "nextPageToken": ""}`, as
 * ListTasks answers `{"tasks": [], "nextPageToken": ""}`. The SDK's toJSON leaves out an empty
 * list and an empty token, so a task without configs was answered `{}`, and a client reading
 * `configs` (REQUIRED in the v1.0 JSON schema) found nothing there.
 */
export function configPageJson(page: ListTaskPushNotificationConfigsResponse): { configs: unknown[]; nextPageToken: string } {
  const json = ListTaskPushNotificationConfigsResponse.toJSON(page) as { configs?: unknown[]; nextPageToken?: string };
  return { ...json, configs: json.configs ?? [], nextPageToken: json.nextPageToken ?? '' };
}

/**
 * JSON-RPC: the result of ListTaskPushNotificationConfigs with every field (configPageJson), where
 * the SDK's JSON-RPC handler answers its toJSON. Placed after the middleware that sets res.json
 * (this wraps it). v0.3's tasks/pushNotificationConfig/list answers a list, `[]` when empty.
 */
export const jsonRpcConfigPages: RequestHandler = (req, res, next) => {
  if ((req.body as { method?: unknown } | undefined)?.method !== 'ListTaskPushNotificationConfigs') return next();
  const json = res.json.bind(res);
  res.json = ((body: unknown) => {
    const answer = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : undefined;
    const result = answer?.result;
    if (!answer || typeof result !== 'object' || result === null || Array.isArray(result)) return json(body);
    return json({ ...answer, result: { configs: [], nextPageToken: '', ...result } });
  }) as Response['json'];
  next();
};
