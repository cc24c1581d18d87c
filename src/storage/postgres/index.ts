export { PostgresStore, type PostgresStoreOptions } from './store.js';
export { listenForChanges, type ChangeListener, type ListenOptions } from './listen.js';
export { POSTGRES_MIGRATIONS, POSTGRES_SCHEMA_VERSION, CHANGES_CHANNEL, migratePostgres } from './migrations.js';
