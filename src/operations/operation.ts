/**
 * The operations of the contract, as the executor routes them. A request parser turns an
 * incoming A2A message into exactly one of these, or declines it with BAD_REQUEST.
 */
import type { Subject } from '../contract/subject.js';
import type { DocumentReference } from '../contract/freshness.js';
import type { ListRequest, SearchRequest, WatchRequest } from '../contract/types.js';

export type Operation =
  /** A document, or (issue 16) a reference the registry fetches it from. */
  | { op: 'register'; subject: Subject | DocumentReference }
  | { op: 'validate'; subject: Subject }
  | { op: 'search'; request: SearchRequest }
  | { op: 'get'; id: string; revision?: number }
  | { op: 'list'; request: ListRequest }
  | { op: 'unregister'; id: string }
  /** Fetch an entry's document from its source now. */
  | { op: 'refresh'; id: string }
  /** A standing search: the task stays WORKING and streams changes to the results. */
  | { op: 'watch'; request: WatchRequest };

export type OperationName = Operation['op'];
export const OPERATION_NAMES: readonly OperationName[] = ['register', 'validate', 'search', 'get', 'list', 'unregister', 'refresh', 'watch'];
