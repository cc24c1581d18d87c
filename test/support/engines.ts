/**
 * Run the same end-to-end suite on SQLite and on PostgreSQL: `storageEngines()` registers the
 * file's before/after hooks (a throwaway PostgreSQL server, started once per file) and returns
 * the two engines; each gives the environment a test registry needs to use it (a fresh database
 * per call on PostgreSQL). Without PostgreSQL binaries the PostgreSQL suite is skipped with the
 * reason (on CI, it fails).
 */
import { usePostgres, type TestPostgres } from './postgres.js';

export interface StorageEngine {
  name: 'sqlite' | 'postgres';
  /** Why this engine cannot run here (its tests are skipped), or undefined. */
  skip(): string | undefined;
  /** Environment for startTestRegistry: nothing for SQLite, a fresh database's URL for PostgreSQL. */
  env(): Promise<Record<string, string>>;
  /** The PostgreSQL server (PostgreSQL only, once started). */
  readonly server?: TestPostgres;
}

export function storageEngines(): StorageEngine[] {
  const postgres = usePostgres();
  return [
    { name: 'sqlite', skip: () => undefined, env: async () => ({}) },
    {
      name: 'postgres',
      skip: () => postgres.skipReason,
      env: async () => ({ DATABASE_URL: await postgres.server.createDatabase('e2e') }),
      get server() {
        return postgres.skipReason === undefined ? postgres.server : undefined;
      },
    },
  ];
}
