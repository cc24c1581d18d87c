export type * from './types.js';
export { createStore, type StoreConfig } from './create-store.js';
export { isPostgresUrl } from './locations.js';
export { InvalidCursorError, SchemaTooNewError } from './common.js';
export { SqliteStore } from './sqlite/index.js';
export { PostgresStore, listenForChanges, type ChangeListener } from './postgres/index.js';
