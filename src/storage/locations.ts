/**
 * Where the storage is, from configuration: which engine a DATABASE_URL names and the SQLite
 * file in a data directory. Apart from ./create-store.ts, which loads both engines (pg among
 * them), so that the commands that only need to know (backup, restore, migrate) do not.
 */
import { join } from 'node:path';

export function isPostgresUrl(url: string | undefined): url is string {
  return url !== undefined && /^postgres(ql)?:\/\//i.test(url.trim());
}

/** The embedded database's file in a data directory (REGISTRY_DATA_DIR). */
export function sqliteFile(dataDir: string): string {
  return join(dataDir, 'registry.db');
}
