/**
 * The stores' defaults for what a setting configures: a store made without the value (a test, a
 * tool) uses them, and config/config.ts gives them to the setting left unset. Here, importing
 * nothing, so configuration reads them without loading a database engine.
 */

/** How long a SQLite write waits for another process's write lock (REGISTRY_SQLITE_LOCK_WAIT_MS). */
export const DEFAULT_SQLITE_LOCK_WAIT_MS = 5000;

/** The server-side limit of one PostgreSQL statement, lock waits included (REGISTRY_POSTGRES_STATEMENT_TIMEOUT_MS). */
export const DEFAULT_POSTGRES_STATEMENT_TIMEOUT_MS = 15_000;
