/**
 * Row data in PostgreSQL's errors. A server error's fields quote what was stored or sent: its
 * message where the value itself was refused (`invalid input syntax for type uuid: "…"`, `value
 * "…" is out of range for type integer`, `syntax error at or near "…"` in a statement a function
 * built with a literal), `detail` ("Key (kind, identity_url)=(agent, https://…) already
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
 * tells an operator what went wrong, without the values (the kind of error and the type a value
 * was refused for, the columns of a key, a failing row's shape, the function and line a
 * server-side function failed at, the code, constraint, table).
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

/**
 * Errors whose message quotes the value refused: a data exception (class 22: bad input for a
 * type, an enum, an array literal; a value out of range) and a syntax error (42601: the token it
 * stopped at, from a statement a server-side function may have built with a row's values). The
 * other errors' messages quote names only (a relation, a column, a constraint).
 */
const quotesValue = (code: string | undefined): boolean => code !== undefined && (code.startsWith('22') || code === '42601');
/** From the first quote to the last: PostgreSQL does not escape the quotes a value holds, so no quote inside can end it. */
const QUOTED = /".*"/s;
/** The bytes an encoding error quotes ("invalid byte sequence for encoding "UTF8": 0xe2 0x28"), a piece of the value. */
const BYTES = /0x[0-9a-f]{2}(?: 0x[0-9a-f]{2})*/gi;

const messageWithoutRowData = (message: string): string => message.replace(QUOTED, '"…"').replace(BYTES, '0x…');

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
 * of a StorageUnavailableError already made): the message, `detail` and `where` keep their shape
 * without the values, `internalQuery` is withheld. Any other error is left as it is. Returns `error`.
 */
export function withoutRowData<E>(error: E): E {
  if (!(error instanceof pg.DatabaseError)) return error;
  if (quotesValue(error.code)) {
    const quoted = error.message;
    const message = messageWithoutRowData(quoted);
    error.message = message;
    // The stack begins with the message as it was when the stack was first read, which may be before now.
    if (error.stack !== undefined) error.stack = error.stack.replace(quoted, () => message);
  }
  if (error.detail !== undefined) error.detail = detailWithoutRowData(error.detail);
  if (error.where !== undefined) error.where = whereWithoutRowData(error.where);
  if (error.internalQuery !== undefined) error.internalQuery = WITHHELD;
  return error;
}
