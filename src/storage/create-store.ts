/**
 * Picks the storage engine from configuration: a PostgreSQL URL means the scaled-out
 * deployment (several replicas share the database); anything else the embedded SQLite file.
 */
import type { RegistryStore } from './types.js';
import { SqliteStore } from './sqlite/index.js';
import { PostgresStore } from './postgres/index.js';
import { isPostgresUrl, sqliteFile } from './locations.js';

export interface StoreConfig {
  /** DATABASE_URL; a postgres:// or postgresql:// URL selects PostgreSQL. */
  databaseUrl?: string;
  /** REGISTRY_DATA_DIR; the SQLite file lives here as registry.db. */
  dataDir: string;
  /** SQLite: how long a write waits for another process's write lock (REGISTRY_SQLITE_LOCK_WAIT_MS). */
  lockWaitMs?: number;
  /** PostgreSQL: the server-side limit of one statement, lock waits included (REGISTRY_POSTGRES_STATEMENT_TIMEOUT_MS). */
  statementTimeoutMs?: number;
  /** Told about what the store did by itself (e.g. re-created a deleted SQLite file). */
  notice?: (message: string, details: Record<string, unknown>) => void;
  /** A serving registry: SQLite refuses a second one on the same database (sqlite/process-lock.ts). */
  singleProcess?: boolean;
}

/** Returns an unopened store; call `open()` before use. */
export function createStore(config: StoreConfig): RegistryStore {
  if (isPostgresUrl(config.databaseUrl)) return new PostgresStore({ url: config.databaseUrl.trim(), statementTimeoutMs: config.statementTimeoutMs, notice: config.notice });
  return new SqliteStore({ file: sqliteFile(config.dataDir), busyTimeoutMs: config.lockWaitMs, notice: config.notice, singleProcess: config.singleProcess });
}
