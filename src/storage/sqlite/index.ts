export { SqliteStore, type SqliteStoreOptions } from './store.js';
export { SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION, migrateSqlite } from './migrations.js';
