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
import type { ListTaskPushNotificationConfigsResponse, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';

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
