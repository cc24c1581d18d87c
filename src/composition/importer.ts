/**
 * The composition root of `a2a-registry import`, its storage side: the registry's own storage
 * (REGISTRY_DATA_DIR or DATABASE_URL) behind a BulkImport, configured from the same environment
 * as the server. No doors, no index: imported entries reach a running registry through storage
 * (see src/registry/bulk-import.ts). The checks, its other side, are ./import-checks.ts.
 */
import path from 'node:path';
import type { ImportConfig } from '../config/config.js';
import type { Logger } from '../observability/logger.js';
import { BulkImport } from '../registry/bulk-import.js';
import { SNAPSHOT_FILE } from '../registry/index-snapshots.js';
import { createStore } from '../storage/create-store.js';
import { isPostgresUrl, sqliteFile } from '../storage/locations.js';
import type { RegistryStore } from '../storage/types.js';
import { SchemaTooNewError } from '../storage/common.js';
import { refuseDamagedDatabase } from './damaged-database.js';
import { refuseEmptiedDatabase } from './emptied-database.js';
import { refuseUpgradeUnderRegistry } from './upgrade-under-registry.js';

export interface OpenedImporter {
  importer: BulkImport;
  /** Which engine the entries go to ("sqlite" or "postgres"). */
  engine: string;
  close(): Promise<void>;
}

/** The storage side: entries written as `owner`'s. */
export async function openImporter(config: ImportConfig, log: Logger, owner: string): Promise<OpenedImporter> {
  // SQLite would open an empty file where the data was as a new database, and the import would
  // fill it: refused as the registry's start is (./emptied-database.ts).
  if (!isPostgresUrl(config.databaseUrl)) {
    await refuseEmptiedDatabase(sqliteFile(config.dataDir), path.join(config.search.snapshotDir, SNAPSHOT_FILE), 'import');
    // Nor is a damaged file written into, a bulk write stopped only where it met a bad page (./damaged-database.ts).
    refuseDamagedDatabase(sqliteFile(config.dataDir));
    // Nor is its schema upgraded under a running registry of an older release (./upgrade-under-registry.ts).
    refuseUpgradeUnderRegistry(sqliteFile(config.dataDir));
  }
  const store: RegistryStore = createStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    lockWaitMs: config.sqliteLockWaitMs,
    notice: (message, details) => log.error(details, message),
  });
  try {
    await store.open();
  } catch (error) {
    // A database a newer release wrote: said as the import's refusal, not the registry's start's
    // ("Refusing to start ..."), with what an import can do about it.
    if (error instanceof SchemaTooNewError) {
      throw new Error(`${error.found}: import with that release (or a newer one). Nothing was written into it`, { cause: error });
    }
    throw error;
  }
  return {
    importer: new BulkImport({ store, owner, maxRevisions: config.quota.maxRevisions }),
    engine: store.engine,
    close: () => store.close(),
  };
}
