/**
 * The operations of the contract, as the executor routes them. A request parser turns an
 * incoming A2A message into exactly one of these, or declines it with BAD_REQUEST.
 */
import type { Subject } from '../contract/subject.js';
import type { ListRequest, SearchRequest } from '../contract/types.js';

export type Operation =
  | { op: 'register'; subject: Subject }
  | { op: 'validate'; subject: Subject }
  | { op: 'search'; request: SearchRequest }
  | { op: 'get'; id: string; revision?: number }
  | { op: 'list'; request: ListRequest }
  | { op: 'unregister'; id: string };

export type OperationName = Operation['op'];
export const OPERATION_NAMES: readonly OperationName[] = ['register', 'validate', 'search', 'get', 'list', 'unregister'];
