/**
 * Values PostgreSQL's text cannot hold. A string holding U+0000 (NUL) makes the statement it is a
 * parameter of fail whole ("invalid byte sequence for encoding UTF8: 0x00", SQLSTATE 22021),
 * whatever the statement does with it; SQLite stores and compares it as any other character. The
 * value is the client's (an id, a filter, a context id), so its failure must not be the server's.
 *
 * - A lookup of such a value finds nothing: nothing stored on PostgreSQL can equal it. The store's
 *   lookups answer so (not found, an empty page) before asking, as SQLite answers them (`unstorable`).
 * - Every statement of the store passes `refuseUnstorable` before it is sent (`#query` and
 *   `#transaction` in store.ts, `statementsOf` here), so a value that still gets that far (one
 *   to write, or a lookup added later) is refused as the request's, BAD_REQUEST naming it
 *   (UnstorableTextError), never sent to fail as an internal error.
 */
import type pg from 'pg';
import { UnstorableTextError } from '../common.js';

const NUL = '\u0000';

/** Whether one of `values` holds U+0000, which no text stored on PostgreSQL does. */
export const unstorable = (...values: (string | undefined)[]): boolean => values.some((value) => value?.includes(NUL) === true);

/** The first string parameter (or element of an array parameter, as `= ANY($1::text[])` takes) holding U+0000. */
function unstorableParameter(params: readonly unknown[]): string | undefined {
  for (const param of params) {
    if (typeof param === 'string' && param.includes(NUL)) return param;
    if (Array.isArray(param)) {
      const found = unstorableParameter(param);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** Throws UnstorableTextError when a parameter holds U+0000 (see above). */
export function refuseUnstorable(params: readonly unknown[]): void {
  const value = unstorableParameter(params);
  if (value !== undefined) throw new UnstorableTextError(value);
}

/** What the store's statements run on: a connection's `query`, with parameters only. */
export interface Statements {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, params?: readonly unknown[]): Promise<pg.QueryResult<R>>;
}

/** `client`'s statements, each refused before it is sent when a parameter holds U+0000. */
export function statementsOf(client: Pick<pg.PoolClient, 'query'>): Statements {
  return {
    async query<R extends pg.QueryResultRow>(text: string, params: readonly unknown[] = []) {
      refuseUnstorable(params);
      return client.query<R>(text, [...params]);
    },
  };
}
