/**
 * The size of an answer on a binding whose clients refuse large messages (gRPC's: see
 * grpc/answer-limit.ts). A ListTasks page is cut short of it: fewer tasks than pageSize, with a
 * nextPageToken that continues at the first task left out, as the spec lets a server answer
 * fewer than asked. The JSON bindings have no such limit, and set none.
 */
import type { ListTasksResponse } from '@a2a-js/sdk';
import type { AnswerLimit } from '../contract/binding.js';
import { pageTokenAfter } from '../tasks/registry-task-store.js';

/** Room left for the page's other fields (nextPageToken, pageSize, totalSize: well under 1 KB). */
const PAGE_FIELDS_BYTES = 1024;

/**
 * `page` cut to the tasks whose encoding fits in the limit, newest first as listed: the tasks
 * after the last kept are on the next page. A first task larger than that alone is answered
 * alone (no page could carry it): a client with the default limit gets RESOURCE_EXHAUSTED from
 * its own library naming the size, and can raise its limit or list without includeArtifacts;
 * refusing it here would keep it from clients that did raise theirs. No limit: as is.
 */
export function fitPage(page: ListTasksResponse, limit: AnswerLimit | undefined): ListTasksResponse {
  if (!limit) return page;
  let used = PAGE_FIELDS_BYTES;
  let kept = 0;
  for (const task of page.tasks) {
    used += limit.encodedBytes(task);
    if (used > limit.maxBytes && kept > 0) break;
    kept++;
  }
  if (kept === page.tasks.length) return page;
  const tasks = page.tasks.slice(0, kept);
  return { ...page, tasks, nextPageToken: pageTokenAfter(tasks[kept - 1]!) };
}
