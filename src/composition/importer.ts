/**
 * The composition root of `a2a-registry import`: the registry's own storage (REGISTRY_DATA_DIR or
 * DATABASE_URL), validator and trust roots, configured from the same environment as the server,
 * behind a BulkImport. No doors, no index: imported entries reach a running registry through
 * storage (see src/registry/bulk-import.ts).
 */
import type { RegistryConfig } from '../config/config.js';
import type { Logger } from '../observability/logger.js';
import { GuardedFetcher } from '../net/index.js';
import { readPackageVersion } from '../lib/package-info.js';
import { BulkImport } from '../registry/bulk-import.js';
import { createStore } from '../storage/create-store.js';
import type { RegistryStore } from '../storage/types.js';
import { TrustRoots, guardedJwksFetch } from '../trust/trust-roots.js';
import { createDocumentValidator } from '../validation/index.js';
import { createSignatureVerifier } from '../validation/signature.js';

export interface OpenedImporter {
  importer: BulkImport;
  /** Which engine the entries go to ("sqlite" or "postgres"). */
  engine: string;
  close(): Promise<void>;
}

export async function openImporter(config: RegistryConfig, log: Logger, owner: string): Promise<OpenedImporter> {
  const store: RegistryStore = createStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    notice: (message, details) => log.error(details, message),
  });
  await store.open();
  let trustRoots: TrustRoots | undefined;
  try {
    // Allow-listed JWKS URLs (REGISTRY_TRUSTED_JKU) are fetched through the one outbound guard, as the server does.
    const fetcher = new GuardedFetcher({
      maxBytes: config.maxDocumentBytes,
      timeoutMs: config.fetch.timeoutMs,
      allow: config.fetch.allow,
      userAgent: `a2a-agent-registry/${readPackageVersion()} (import)`,
    });
    const roots = await TrustRoots.open({ keysFile: config.trust.keysFile, jkuUrls: config.trust.jkuUrls, fetchJwks: guardedJwksFetch(fetcher), log });
    trustRoots = roots;
    const importer = new BulkImport({
      store,
      validator: createDocumentValidator({ maxDocumentBytes: config.maxDocumentBytes, warnInsecureHttp: config.warnInsecureHttp }),
      verifier: createSignatureVerifier(roots),
      requireVerified: config.trust.requireVerified,
      owner,
      maxRevisions: config.quota.maxRevisions,
    });
    return {
      importer,
      engine: store.engine,
      close: async () => {
        roots.close();
        await store.close();
      },
    };
  } catch (error) {
    trustRoots?.close();
    await store.close();
    throw error;
  }
}
