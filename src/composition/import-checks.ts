/**
 * The composition root of `a2a-registry import`, its checking side: the registry's validator and
 * trust roots behind ImportChecks, configured from the same environment as the server.
 *
 * The checks are built from plain settings (`ImportChecksSettings`), so a worker thread can build
 * its own copy from the same settings (src/cli/import-worker.ts). A module of its own, apart from
 * the storage side (./importer.ts), so that the worker does not load the storage engines it never
 * uses (better-sqlite3, pg): 0.15 s of CPU less for its start, of about 0.65 s.
 */
import type { ImportConfig } from '../config/config.js';
import type { Logger } from '../observability/logger.js';
import { AllowList, GuardedFetcher } from '../net/index.js';
import { readPackageVersion } from '../lib/package-info.js';
import { ImportChecks } from '../registry/bulk-import.js';
import { TrustRoots, guardedJwksFetch } from '../trust/trust-roots.js';
import { createDocumentValidator } from '../validation/index.js';
import { createSignatureVerifier } from '../validation/signature.js';

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
