/**
 * Row data in PostgreSQL's errors. Beside its message, a server error carries fields that quote
 * what was stored or sent: `detail` ("Key (kind, identity_url)=(agent, https://…) already
 * exists.", "Failing row contains (…a whole card…)."), `where` ("JSON data, line 1: …", "SQL
 * statement "…"", "COPY …, line 1: …") and `internalQuery` (a statement built inside the server,
 * its literals included). node-postgres keeps them on the error as plain properties, so whatever
 * shows the error shows them: the log's error serializer copies every property, and util.inspect
 * (the SDK's console.error, through the console bridge) prints them.
 *
 * Clients never see a database error (internal errors are answered with a generic message), but
 * the logs are read by more people than the database is, and a card or a token's owner is not
 * theirs to read. So the store takes the row data out of every error before it leaves the store,
 * once the error is classified (faults.ts reads `where` for a row lock's wait): what stays is what
 * tells an operator what went wrong, without the values (the columns of a key, a failing row's
 * shape, the function and line a server-side function failed at, the code, constraint, table).
 */
import pg from 'pg';

/** Put where text was taken out. */
export const WITHHELD = '[withheld: it may quote stored data]';

/** A unique or foreign key's violation: its columns stay, the values go. */
const KEY_VALUES = /^(Key \(.*?\))=\(.*\) (already exists|is duplicated|is not present in table "[^"]*"|is still referenced from table "[^"]*")\.$/s;
/** A check (or not-null) constraint's violation quotes the whole row. */
const FAILING_ROW = /^Failing row contains \(.*\)\.$/s;
/** A deadlock names processes and transactions only (the statements go to the server's own log). */
const DEADLOCK = /^(?:Process \d+ waits for [\w ]+ on [^;\n]*; blocked by process \d+\.(?:\n|$))+$/;

/** Lines of `where` that name code, never data: a server-side function's line, a row lock's wait. */
const CODE_CONTEXTS = [
  /^PL\/pgSQL function [^\n]* line \d+ at [A-Za-z ]+$/,
  /^SQL function "[^"\n]*"(?: statement \d+| during (?:startup|inlining))?$/,
  /^while (?:locking|updating|deleting|inserting index|checking uniqueness of|rechecking updated) tuple \(\d+,\d+\) in relation "[^"\n]*"$/,
];

function detailWithoutRowData(detail: string): string {
  const key = KEY_VALUES.exec(detail);
  if (key) return `${key[1]}=(…) ${key[2]}.`;
  if (FAILING_ROW.test(detail)) return 'Failing row contains (…).';
  return DEADLOCK.test(detail) ? detail : WITHHELD;
}

const whereWithoutRowData = (where: string): string =>
  where
    .split('\n')
    .map((line) => (CODE_CONTEXTS.some((context) => context.test(line)) ? line : WITHHELD))
    .join('\n');

/**
 * Takes the row data out of a PostgreSQL server error, in place (the same error may be the cause
 * of a StorageUnavailableError already made): `detail` and `where` keep their shape without the
 * values, `internalQuery` is withheld. Any other error is left as it is. Returns `error`.
 */
export function withoutRowData<E>(error: E): E {
  if (!(error instanceof pg.DatabaseError)) return error;
  if (error.detail !== undefined) error.detail = detailWithoutRowData(error.detail);
  if (error.where !== undefined) error.where = whereWithoutRowData(error.where);
  if (error.internalQuery !== undefined) error.internalQuery = WITHHELD;
  return error;
}
