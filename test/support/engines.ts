/**
 * Run the same end-to-end suite on SQLite and on PostgreSQL: `storageEngines()` registers the
 * file's before/after hooks (a throwaway PostgreSQL server, started once per file) and returns
 * the two engines; each gives the environment a test registry needs to use it (a fresh database
 * per call on PostgreSQL). Without PostgreSQL binaries the PostgreSQL suite is skipped with the
 * reason (on CI, it fails).
 */
import { after, before } from 'node:test';
import { startPostgres, type TestPostgres } from './postgres.js';

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
  let server: TestPostgres | undefined;
  let skipReason: string | undefined;
  before(async () => {
    const started = await startPostgres();
    if (started.ok) server = started.pg;
    else skipReason = started.skipReason;
  });
  after(async () => {
    await server?.stop();
  });
  return [
    { name: 'sqlite', skip: () => undefined, env: async () => ({}) },
    {
      name: 'postgres',
      skip: () => skipReason,
      env: async () => ({ DATABASE_URL: await server!.createDatabase('e2e') }),
      get server() {
        return server;
      },
    },
  ];
}
