/**
 * The composition root of `a2a-registry import`: the registry's own storage (REGISTRY_DATA_DIR or
 * DATABASE_URL) behind a BulkImport, and its validator and trust roots behind ImportChecks,
 * configured from the same environment as the server. No doors, no index: imported entries reach
 * a running registry through storage (see src/registry/bulk-import.ts).
 *
 * The checks are built from plain settings (`ImportChecksSettings`), so a worker thread can build
 * its own copy from the same settings (src/cli/import-worker.ts).
 */
import path from 'node:path';
import type { ImportConfig } from '../config/config.js';
import type { Logger } from '../observability/logger.js';
import { AllowList, GuardedFetcher } from '../net/index.js';
import { readPackageVersion } from '../lib/package-info.js';
import { BulkImport, ImportChecks } from '../registry/bulk-import.js';
import { SNAPSHOT_FILE } from '../registry/index-snapshots.js';
import { createStore } from '../storage/create-store.js';
import { isPostgresUrl, sqliteFile } from '../storage/locations.js';
import type { RegistryStore } from '../storage/types.js';
import { TrustRoots, guardedJwksFetch } from '../trust/trust-roots.js';
import { createDocumentValidator } from '../validation/index.js';
import { createSignatureVerifier } from '../validation/signature.js';
import { refuseDamagedDatabase } from './damaged-database.js';
import { refuseEmptiedDatabase } from './emptied-database.js';

export interface OpenedImporter {
  importer: BulkImport;
  /** Which engine the entries go to ("sqlite" or "postgres"). */
  engine: string;
  close(): Promise<void>;
}

export interface OpenedChecks {
  checks: ImportChecks;
  close(): void;
}

/** What the checks need from the configuration, as plain data (it crosses to a worker thread). */
export interface ImportChecksSettings {
  maxDocumentBytes: number;
  warnInsecureHttp: boolean;
  keysFile?: string;
  jkuUrls: string[];
  jkuScope: 'any' | 'site';
  requireVerified: boolean;
  /** REGISTRY_FETCH_ALLOW as given. */
  fetchAllow: string[];
  fetchTimeoutMs: number;
  /** REGISTRY_DNS_SERVERS, when set. */
  dnsServers?: string[];
}

export function importChecksSettings(config: ImportConfig): ImportChecksSettings {
  return {
    maxDocumentBytes: config.maxDocumentBytes,
    warnInsecureHttp: config.warnInsecureHttp,
    ...(config.trust.keysFile === undefined ? {} : { keysFile: config.trust.keysFile }),
    jkuUrls: [...config.trust.jkuUrls],
    jkuScope: config.trust.jkuScope,
    requireVerified: config.trust.requireVerified,
    fetchAllow: [...config.fetch.allow.source],
    fetchTimeoutMs: config.fetch.timeoutMs,
    ...(config.fetch.dnsServers ? { dnsServers: [...config.fetch.dnsServers] } : {}),
  };
}

/** The validator and the trust roots, as the server builds them. */
export async function openImportChecks(settings: ImportChecksSettings, log: Logger): Promise<OpenedChecks> {
  // Allow-listed JWKS URLs (REGISTRY_TRUSTED_JKU) are fetched through the one outbound guard, as the server does.
  const fetcher = new GuardedFetcher({
    maxBytes: settings.maxDocumentBytes,
    timeoutMs: settings.fetchTimeoutMs,
    allow: AllowList.parse(settings.fetchAllow),
    dnsServers: settings.dnsServers,
    userAgent: `a2a-agent-registry/${readPackageVersion()} (import)`,
  });
  const roots = await TrustRoots.open({ keysFile: settings.keysFile, jkuUrls: settings.jkuUrls, jkuScope: settings.jkuScope, fetchJwks: guardedJwksFetch(fetcher), log });
  const checks = new ImportChecks({
    validator: createDocumentValidator({ maxDocumentBytes: settings.maxDocumentBytes, warnInsecureHttp: settings.warnInsecureHttp }),
    verifier: createSignatureVerifier(roots),
    requireVerified: settings.requireVerified,
  });
  return { checks, close: () => roots.close() };
}

/** The storage side: entries written as `owner`'s. */
export async function openImporter(config: ImportConfig, log: Logger, owner: string): Promise<OpenedImporter> {
  // SQLite would open an empty file where the data was as a new database, and the import would
  // fill it: refused as the registry's start is (./emptied-database.ts).
  if (!isPostgresUrl(config.databaseUrl)) {
    await refuseEmptiedDatabase(sqliteFile(config.dataDir), path.join(config.search.snapshotDir, SNAPSHOT_FILE), 'import');
    // Nor is a damaged file written into, a bulk write stopped only where it met a bad page (./damaged-database.ts).
    refuseDamagedDatabase(sqliteFile(config.dataDir));
  }
  const store: RegistryStore = createStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    lockWaitMs: config.sqliteLockWaitMs,
    notice: (message, details) => log.error(details, message),
  });
  await store.open();
  return {
    importer: new BulkImport({ store, owner, maxRevisions: config.quota.maxRevisions }),
    engine: store.engine,
    close: () => store.close(),
  };
}
