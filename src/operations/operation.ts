/**
 * The operations of the contract, as the executor routes them. A request parser turns an
 * incoming A2A message into exactly one of these, or declines it with BAD_REQUEST.
 */
import type { ListRequest, SearchRequest } from '../contract/types.js';

/** An uploaded or inline document to register or validate. */
export type Subject =
  | {
      type: 'agent-card';
      card: unknown;
      /** The card exactly as received: the decoded file, or the data part's compact JSON. */
      documentText: string;
      sizeBytes: number;
    }
  | {
      type: 'mcp-server';
      /** Server metadata; absent only when validating a bare toolspec. */
      server: unknown;
      toolspec: unknown;
      /** The toolspec exactly as received. */
      toolspecText: string;
      sizeBytes: number;
    };

export type Operation =
  | { op: 'register'; subject: Subject }
  | { op: 'validate'; subject: Subject }
  | { op: 'search'; request: SearchRequest }
  | { op: 'get'; id: string; revision?: number }
  | { op: 'list'; request: ListRequest }
  | { op: 'unregister'; id: string };

export type OperationName = Operation['op'];
export const OPERATION_NAMES: readonly OperationName[] = ['register', 'validate', 'search', 'get', 'list', 'unregister'];
