/**
 * The composition root's first half: everything the registry is, independent of how it is
 * reached. Storage, the search index kept in step by the change feed, the validator, the
 * service, the operations every door runs, authentication and abuse control, metrics, the task
 * store every A2A binding shares, and the background work (the replica follower, storage
 * housekeeping, the storage probe). The doors are mounted on top of this by server.ts.
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RegistryConfig } from '../config/config.js';
import { ADMIN_PRINCIPAL, metricsTokenOfItsOwn } from '../config/config.js';
import { TokenAuthenticator, ensureAdminToken } from '../auth/tokens.js';
import { AbuseControl } from '../http/rate-limit.js';
import { lostLogLines, type Logger } from '../observability/logger.js';
import { RegistryMetrics } from '../observability/metrics.js';
import { OperationRunner } from '../operations/runner.js';
import { DEFAULT_WATCH_LIMITS, WatchHub } from '../subscriptions/watch-hub.js';
import { ChangeFeed } from '../registry/change-feed.js';
import { IndexFollower } from '../registry/index-follower.js';
import { IndexSnapshots, SNAPSHOT_FILE, prepareSnapshotDir, saveFailure } from '../registry/index-snapshots.js';
import { SearchCache } from '../registry/search-cache.js';
import { PageTokens, pageTokenKeyOf } from '../registry/page-token.js';
import { RegistryService } from '../registry/service.js';
import { OpenAIEmbeddings, embeddingsEndpoint } from '../search/embeddings.js';
import { HybridSearchIndex } from '../search/hybrid.js';
import { createSearchIndex, type SearchIndex } from '../search/index.js';
import type { Synonyms } from '../search/synonyms.js';
import { createStore } from '../storage/create-store.js';
import { isPostgresUrl, sqliteFile } from '../storage/locations.js';
import type { RegistryStore } from '../storage/types.js';
import { StorageUnavailableError } from '../storage/faults.js';
import { RegistryTaskStore } from '../tasks/registry-task-store.js';
import { CoalescedTask } from '../lib/coalesced-task.js';
import { sharedWhileRunning } from '../lib/shared-while-running.js';
import { shownUrl } from '../lib/url-password.js';
import { tellExpiredRetiredKeys, type RegistrySigningKey } from '../trust/registry-signing-key.js';
import { SAVED_JWKS_FILE, TrustRoots, guardedJwksFetch } from '../trust/trust-roots.js';
import { createDocumentValidator, validatorOrigins } from '../validation/index.js';
import { readPackageVersion } from '../lib/package-info.js';
import { GuardedFetcher, type Fetcher } from '../net/index.js';
import { FetchingDocumentSources } from '../freshness/document-sources.js';
import { RefreshLoop } from '../freshness/refresh-loop.js';
import { createSignatureVerifier } from '../validation/signature.js';
import { Housekeeping, StorageProbe } from './maintenance.js';
import { IntegrityChecks } from './integrity-checks.js';
import { openStorage, type StorageOpening } from './open-storage.js';
import { refuseEmptiedDatabase } from './emptied-database.js';
import { readSettingFiles, unverifiable, type SettingFiles } from './start-checks.js';

const SEARCH_CHUNK_SIZE = 5;
const HOUSEKEEPING_INTERVAL_MS = 10 * 60_000;
/** The first integrity check of a SQLite file: a minute after the index has loaded (./integrity-checks.ts). */
const FIRST_INTEGRITY_CHECK_AFTER_MS = 60_000;
/** Safety net behind change notifications: a replica sees every change within this, even if a notification was lost. */
const FOLLOWER_POLL_MS = 500;
/** Waits before the search index's load is tried again after storage failed under it (doubling), as opening storage waits. */
const INDEX_LOAD_RETRY_MS = 1000;
const INDEX_LOAD_RETRY_MAX_MS = 30_000;

export interface RegistryCore {
  config: RegistryConfig;
  log: Logger;
  store: RegistryStore;
  /**
   * The A2A task store every binding (JSON-RPC, HTTP+JSON, gRPC) shares: tasks private to their
   * caller, reads and refusals in bounded memory, accepted writes durable. Also the executor's
   * TaskPlacement.
   */
  tasks: RegistryTaskStore;
  /** Prunes durable tasks, trims the change log, reclaims space (on a timer; `run()` for tests and tools). */
  housekeeping: Housekeeping;
  /** Committed changes, local and from other replicas; the index and other derived views follow it. */
  feed: ChangeFeed;
  service: RegistryService;
  /** The registry's page tokens, for a door whose own tokens wrap them (ARD's POST /search) to tell whose a token is. */
  pageTokens: PageTokens;
  /** The operations as every door runs them: admission (rate limits), then the service. */
  operations: OperationRunner;
  /** Standing searches (watches) over the change feed. */
  watches: WatchHub;
  /**
   * Runs the watches kept from before a restart again, once the index has loaded (not if it
   * failed to). Called by server.ts once the doors are mounted: they follow every watch restored.
   */
  restoreWatches(): Promise<void>;
  authenticator: TokenAuthenticator;
  abuse: AbuseControl;
  metrics: RegistryMetrics;
  /** The one outbound guard: every request the registry sends goes through it. */
  fetcher: Fetcher;
  /** Refreshes entries from their sources and probes agents (absent with REGISTRY_REFRESH_SECONDS=0). */
  refresher?: RefreshLoop;
  /** The keys card signatures are verified with (REGISTRY_TRUSTED_KEYS, REGISTRY_TRUSTED_JKU). */
  trustRoots: TrustRoots;
  /** The key the registry signs its own card with (REGISTRY_SIGNING_KEY), if any. */
  signingKey?: RegistrySigningKey;
  /** Re-evaluates stored signatures (runs when the trust roots change); `idle()` waits for it. */
  signatureReevaluation: CoalescedTask;
  /**
   * Settles when the search index has loaded (or failed to: notReady says so). Start-up does
   * not wait for it; tests and tools that need searches answered do.
   */
  indexReady: Promise<void>;
  /**
   * Why the core is not ready to serve (index loading, storage unreachable, replica behind; no
   * trusted key under REGISTRY_REQUIRE_VERIFIED), or undefined.
   */
  notReady(): Promise<string | undefined>;
  /** What /readyz says beside "ready": no trusted key to verify cards with (without REGISTRY_REQUIRE_VERIFIED), or nothing. */
  warnings(): string[];
  /** Stops background work and closes storage. Doors must be closed first. */
  close(): Promise<void>;
}

/**
 * Tokens from the configuration, or the generated admin token when none are configured (refused
 * as REGISTRY_METRICS_TOKEN's too, as a configured admin token is by loadConfig). Called
 * once nothing left can refuse the start for its configuration or its data directory (the lock,
 * the key, trust and synonym files, the snapshot directory): a refused start wrote the token
 * into the data directory all the same, another registry's included.
 */
function resolveTokens(config: RegistryConfig, log: Logger): Map<string, string> {
  if (config.tokens.size > 0) return config.tokens;
  const admin = ensureAdminToken(config.dataDir);
  // loadConfig could not see this token: a scraper given it (copied from the file) would act as the admin.
  metricsTokenOfItsOwn(config.hardening.metricsToken, config.tokens, admin.token, `the one the registry generated, in ${admin.file}`);
  log.warn(
    { file: admin.file, created: admin.created },
    `REGISTRY_TOKENS is not set: the admin token is in ${admin.file} (send it as "Authorization: Bearer <token>")`,
  );
  return new Map([[admin.token, ADMIN_PRINCIPAL]]);
}

/**
 * The registry's core, with the files settings name as `settingFiles` holds them (read by a
 * start's checks before the server's modules loaded: ./start-checks.ts), or read here, before
 * storage opens.
 */
export async function buildRegistry(config: RegistryConfig, log: Logger, opening: StorageOpening = {}, settingFiles?: SettingFiles): Promise<RegistryCore> {
  const { signingKey, synonyms } = settingFiles ?? (await readSettingFiles(config));
  if (signingKey) tellExpiredRetiredKeys(signingKey, config.trust.retiredSigningKeysFile, log);
  if (synonyms) log.info({ file: config.search.synonymsFile, terms: synonyms.size }, 'synonyms loaded');
  // Derived while storage opens when the tokens are known already (REGISTRY_TOKENS): it takes a while by design.
  let pageTokenKey = config.pageTokenSecret === undefined && config.tokens.size > 0 ? pageTokenKeyOf(config.tokens.keys()) : undefined;
  // SQLite would open an empty file where the data was as a new database (./emptied-database.ts).
  if (!isPostgresUrl(config.databaseUrl)) await refuseEmptiedDatabase(sqliteFile(config.dataDir), path.join(config.search.snapshotDir, SNAPSHOT_FILE));
  const store = createStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    lockWaitMs: config.sqliteLockWaitMs,
    statementTimeoutMs: config.postgresStatementTimeoutMs,
    notice: (message, details) => log.error(details, message),
    // Its index and watches follow only its own writes on SQLite: one registry per database.
    singleProcess: true,
  });
  await openStorage(store, log, opening);

  let follower: IndexFollower | undefined;
  let snapshots: IndexSnapshots | undefined;
  let indexes: RegistryIndexFactory | undefined;
  let refresher: RefreshLoop | undefined;
  let housekeeping: Housekeeping | undefined;
  let probe: StorageProbe | undefined;
  let integrityChecks: IntegrityChecks | undefined;
  let trustRoots: TrustRoots | undefined;
  let reevaluation: CoalescedTask | undefined;
  let stopLoading: AbortController | undefined;
  let indexLoading: Promise<void> | undefined;
  let indexFailure: string | undefined;
  try {
    const metrics = new RegistryMetrics();
    const version = readPackageVersion();
    const embeddings = config.search.embeddings;
    const fetcher = new GuardedFetcher({
      maxBytes: config.maxDocumentBytes,
      timeoutMs: config.fetch.timeoutMs,
      allow: config.fetch.allow,
      dnsServers: config.fetch.dnsServers,
      // The operator's embeddings service passes the address rules for its purpose only.
      operatorEndpoints: embeddings ? [{ purpose: 'embeddings', url: embeddingsEndpoint(embeddings.url) }] : [],
      userAgent: `a2a-agent-registry/${version} (+${config.publicUrl})`,
      observer: {
        ...metrics.fetchObserver(),
        // What a refused name resolves to is the operator's to know: the caller is not told (guarded-fetcher.ts).
        // The origin only: a webhook's path and query are often its secret.
        refusedName: ({ purpose, url, host, address, rule }) =>
          log.info({ purpose, origin: new URL(url).origin, host, address, rule }, `refused a ${purpose} request to ${host}: it resolves to ${address} (rule "${rule}"); the caller was told only that it is not public`),
      },
    });
    indexes = registryIndexFactory(config, synonyms, log, metrics, fetcher);
    // Allow-listed JWKS URLs are fetched through the one outbound guard (REGISTRY_FETCH_ALLOW opens it).
    trustRoots = await TrustRoots.open({
      keysFile: config.trust.keysFile,
      jkuUrls: config.trust.jkuUrls,
      fetchJwks: guardedJwksFetch(fetcher),
      jkuRefreshMs: config.trust.jkuRefreshSeconds * 1000,
      jkuMaxStaleMs: config.trust.jkuMaxStaleSeconds * 1000,
      savedJwksFile: path.join(config.dataDir, SAVED_JWKS_FILE),
      jkuScope: config.trust.jkuScope,
      log,
    });
    tellTrustRoots(config, trustRoots, log);
    const saved = config.search.snapshotSeconds > 0 && !config.search.embeddings;
    if (saved) prepareSnapshotDir(config.search.snapshotDir);
    const tokens = resolveTokens(config, log);
    const sources = new FetchingDocumentSources(fetcher, {
      maxDocumentBytes: config.maxDocumentBytes,
      maxJsonDepth: config.hardening.maxJsonDepth,
      timeoutMs: config.fetch.timeoutMs,
      clientVersion: version,
    });
    const freshness = config.freshness;
    const feed = new ChangeFeed((err, change) => log.error({ err, entry: change.id, op: change.op }, 'a change follower failed'));
    const validator = metrics.countingValidator(
      createDocumentValidator({ maxDocumentBytes: config.maxDocumentBytes, warnInsecureHttp: config.warnInsecureHttp }),
    );
    // Precompiled by the build, or (schemas edited since, or no build) compiled now: and why.
    log.debug({ validators: validatorOrigins() }, 'JSON Schema validators');
    const pageTokens = new PageTokens(config.pageTokenSecret ?? (await (pageTokenKey ??= pageTokenKeyOf(tokens.keys()))));
    const service = new RegistryService({
      store,
      index: indexes.create(),
      newIndex: indexes.create,
      validator,
      verifier: createSignatureVerifier(trustRoots),
      pageTokens,
      feed,
      publicRead: config.publicRead,
      sources,
      freshness: {
        refreshIntervalMs: freshness.refreshSeconds * 1000,
        probe: freshness.probe,
        hideUnhealthyAfterMs: freshness.hideUnhealthySeconds === undefined ? undefined : freshness.hideUnhealthySeconds * 1000,
      },
      quota: config.quota,
      requireVerified: config.trust.requireVerified,
      searchCache: new SearchCache(config.search.cacheEntries, config.search.cacheBytes),
    });
    // A write refused after its commit (SQLite: the file deleted under the connection, a failed
    // fsync) is in storage all the same, and nothing published it: once storage takes writes
    // again, the entries it changed are read back and published as another writer's would be, or
    // search, watches and catalogs would miss it (a retry answers "unchanged": no publication) until a restart.
    // Resolved once published: until then their changes stay pending (no watch position passes them).
    store.onUnacknowledgedChanges?.((ids) =>
      service.applyReplicaChanges(ids).then(
        () => undefined,
        (err: unknown) => {
          log.error({ err, entries: ids }, 'publishing changes of writes refused after their commit failed; the next start applies them');
          throw err;
        },
      ),
    );

    // The index loads in the background: the doors listen at once (liveness answers from the
    // first second, readiness says "loading the search index (n of m)", searches are refused
    // with STARTING_UP until it is loaded). Local writes during the load reach the index through
    // the feed. Read the change sequence before scanning, then replay from it: a change
    // committed by another replica during the scan is applied twice at worst, never missed.
    // A saved index (./registry/index-snapshots.ts) is loaded instead when there is a usable one.
    const seqAtLoad = await store.lastChangeSeq();
    const loadAbort = new AbortController();
    stopLoading = loadAbort;
    const started = Date.now();
    const saving = saved
      ? new IndexSnapshots(store, service, feed, log, { dir: config.search.snapshotDir, intervalMs: config.search.snapshotSeconds * 1000, version })
      : undefined;
    const indexLoad = (async () => {
      let fromSeq: number | undefined;
      for (let waitMs = INDEX_LOAD_RETRY_MS; ; waitMs = Math.min(waitMs * 2, INDEX_LOAD_RETRY_MAX_MS)) {
        try {
          fromSeq = saving ? await saving.restore(loadAbort.signal) : undefined;
          if (fromSeq === undefined) {
            const indexed = await service.rebuildIndex({ signal: loadAbort.signal });
            log.info({ entries: indexed, ms: Date.now() - started, engine: store.engine }, 'search index loaded');
            fromSeq = seqAtLoad;
          }
          break;
        } catch (err) {
          // The database restarted or failed over under the load (minutes at a million entries) is
          // waited out, as at opening: before, the replica stayed not ready, answering searches from
          // the part it had loaded and following no change, until someone restarted it. Whatever
          // was loaded stays; the follower replays every change from seqAtLoad, read before the
          // first attempt, so nothing deleted or changed meanwhile is missed.
          if (loadAbort.signal.aborted || store.engine !== 'postgres' || !(err instanceof StorageUnavailableError)) {
            service.indexLoadWaits(undefined); // not tried again: readiness says why (indexFailure)
            throw err;
          }
          const retryAt = new Date(Date.now() + waitMs).toISOString();
          log.warn({ err: err.message, code: err.fault.code, retryAt }, `loading the search index failed: storage is unavailable; trying again at ${retryAt}`);
          service.indexLoadWaits(`the search index could not be loaded yet: storage is unavailable (${err.fault.reason}, ${err.fault.code}); trying again at ${retryAt}`);
          try {
            await sleep(waitMs, undefined, { signal: loadAbort.signal });
          } catch {
            return; // only the abort (shutdown) rejects it
          }
        }
      }
      service.indexLoadWaits(undefined);
      if (loadAbort.signal.aborted) return;
      // Where other processes' changes are not followed (SQLite), the positions saved for the
      // index and the watches are walked from here, stopping at the first such change.
      store.ownChanges?.startAt(fromSeq);
      if (store.subscribeToChanges) {
        follower = new IndexFollower(store, service, log, { pollMs: FOLLOWER_POLL_MS }, fromSeq);
        // Told which local writes recorded their change, the follower waits for those only, not
        // for one waiting for a lock: other replicas' changes are not held back behind it.
        store.reportChangesRecorded?.(() => feed.changeRecorded());
        feed.expectEchoes(store.reportChangesRecorded !== undefined);
        await follower.start();
      }
      if (saving) {
        const applied = follower;
        snapshots = saving;
        saving.start(fromSeq, applied ? () => applied.position : undefined);
        // A rebuilt index is saved at once, so the next start does not rebuild it again.
        void saving.saveIfChanged().catch((err: unknown) => log.warn(saveFailure(err), 'saving the search index failed; will retry'));
      }
    })().catch((err: unknown) => {
      if (loadAbort.signal.aborted) return;
      // Said by /readyz, open to anyone: the kind of failure and what to do. A storage fault says
      // that without paths; any other error's own words (a file system's or an engine's, which may
      // name the server's paths, or a row's text) go to the log alone.
      const why = err instanceof StorageUnavailableError ? `: ${err.message}` : '';
      indexFailure = `the search index could not be loaded${why} (the cause is in the log); restart the registry once it is fixed`;
      log.error({ err }, 'loading the search index failed');
    });
    indexLoading = indexLoad;

    // Stored signatures are checked again whenever the trust roots change, and once at start-up
    // (they may have changed while the registry was down).
    const reevaluate = new CoalescedTask(
      async (signal) => {
        const { checked, changed, stopped } = await service.reevaluateSignatures(signal);
        if (stopped) log.info({ checked, changed }, 're-evaluating signatures stopped at shutdown; the next start checks the rest');
        else if (checked > 0) log.info({ checked, changed }, 'signatures re-evaluated against the trust roots');
      },
      (err) => log.error({ err }, 're-evaluating signatures failed'),
    );
    reevaluation = reevaluate;
    const roots = trustRoots;
    // Trust roots configured that give no key (an allow-listed JWKS down or empty, a keys file
    // emptied since start-up), said by /readyz as by the log. Under REGISTRY_REQUIRE_VERIFIED every
    // agent is hidden and every registration refused meanwhile, the state a keys file alone may not
    // start in (tellTrustRoots): not ready, as unwritable storage is though reads go on. Otherwise
    // every card is registered unverified, the registry serving all else: ready, with a warning.
    const withoutTrust = (): string | undefined => (roots.configured && roots.size === 0 ? withoutKeys(config) : undefined);
    trustRoots.onChange(() => {
      if (roots.size === 0) log.warn({ keys: 0, file: config.trust.keysFile, jku: shownJkuUrls(config) }, withoutKeys(config));
      reevaluate.wake();
    });
    // After the index has loaded: both scan every entry, and the load is what readiness waits for.
    void indexLoad.then(() => {
      if (!loadAbort.signal.aborted) reevaluate.wake();
    });
    // Probing turned off: what the probes left (an `unreachable` that hides an entry) would never
    // be checked again. Through the service, so the index, the change log and watches follow.
    if (!freshness.probe) {
      void indexLoad
        .then(async () => {
          if (loadAbort.signal.aborted) return;
          const cleared = await service.forgetProbes(loadAbort.signal);
          if (cleared > 0) log.info({ entries: cleared }, 'REGISTRY_PROBE is off: the health that probes left on agents registered inline was cleared');
        })
        .catch((err: unknown) => log.warn({ err }, 'clearing the health that probes left failed; the next start tries again'));
    }

    const authenticator = new TokenAuthenticator(tokens);
    const hardening = config.hardening;
    const abuse = new AbuseControl(
      {
        enabled: hardening.rateLimits,
        writesPerMinute: hardening.writesPerMinute,
        readsPerMinute: hardening.readsPerMinute,
        requestsPerMinute: hardening.requestsPerMinute,
        maxStreamsPerClient: hardening.maxStreamsPerClient,
        ipv6Prefix: hardening.ipv6Prefix,
      },
      { log, onLimited: (limit, by) => metrics.rateLimited(limit, by), isExempt: (authorization) => authenticator.callerFor(authorization).isAdmin },
    );
    // After the service: the feed delivers each change to the index before the watches ask it.
    // Restored (restoreWatches below) by server.ts once the doors are mounted and the index is loaded.
    const watches = new WatchHub(
      feed,
      service,
      store,
      { ...DEFAULT_WATCH_LIMITS, ...config.watches },
      log,
      () => follower?.position,
      (principal) => authenticator.hasPrincipal(principal),
    );
    const operations = new OperationRunner(service, { searchChunkSize: SEARCH_CHUNK_SIZE }, abuse, watches);

    const tasks = new RegistryTaskStore(store.tasks, config.taskMemory, { log });
    metrics.setSources({
      countEntries: () => store.count(),
      indexSize: () => service.indexSize,
      openStreams: () => abuse.openStreams,
      memoryTasks: () => tasks.memoryUsage,
      cachedDurableTasks: () => tasks.cacheUsage,
      searchCache: () => service.searchCache,
      storageFault: () => store.fault?.reason,
      storageDamaged: () => store.fault?.lasting === true,
      lostLogLines: () => lostLogLines(log),
    });
    housekeeping = new Housekeeping(store, tasks, { tasks: config.taskRetention, changeRetentionMs: config.changeRetentionMs }, log);
    housekeeping.start(HOUSEKEEPING_INTERVAL_MS);
    const storageProbe = (probe = new StorageProbe(store, log));
    storageProbe.start();
    integrityChecks = new IntegrityChecks(store, log);
    if (config.sqliteCheckHours > 0) integrityChecks.start(indexLoad, config.sqliteFirstCheckAfterMs ?? FIRST_INTEGRITY_CHECK_AFTER_MS, config.sqliteCheckHours * 3_600_000);

    if (freshness.refreshSeconds > 0) {
      const intervalMs = freshness.refreshSeconds * 1000;
      refresher = new RefreshLoop(store, service, log, {
        // Often enough that an entry is checked close to its due time, rarely enough to cost nothing.
        tickMs: Math.min(30_000, Math.max(250, intervalMs / 4)),
        intervalMs,
        // A claim outlives any check (one fetch timeout, or one MCP exchange) with room to spare.
        leaseMs: Math.max(60_000, 4 * config.fetch.timeoutMs),
        probe: freshness.probe,
      });
      await refresher.start();
    }

    let closing: Promise<void> | undefined;
    return {
      config,
      log,
      store,
      tasks,
      housekeeping,
      feed,
      service,
      pageTokens,
      operations,
      watches,
      authenticator,
      abuse,
      metrics,
      fetcher,
      refresher,
      trustRoots,
      signingKey,
      signatureReevaluation: reevaluate,
      indexReady: indexLoad,
      restoreWatches: async () => {
        await indexLoad;
        if (indexFailure === undefined && !loadAbort.signal.aborted) await watches.restore();
      },
      // Asked by /readyz and the gRPC health service, both open to anyone and outside the request
      // budget (probes must get through a flood), and each check asks the database (PostgreSQL: a
      // SELECT 1 through the pool): a flood of probes was a flood of queries queueing with the real
      // ones for the pool's connections. Checks asked while one runs share its answer.
      notReady: sharedWhileRunning(async () => {
        // A damaged file first: an index that failed to load on it is one of its consequences.
        if (store.fault?.lasting) return storageProbe.notReady();
        if (indexFailure) return indexFailure;
        const loading = service.indexLoading;
        if (loading) return loading;
        const fault = await storageProbe.notReady();
        if (fault) return fault;
        if (!(await store.ping())) return `${store.engine} storage is unreachable`;
        return follower?.notInStep ?? (config.trust.requireVerified ? withoutTrust() : undefined);
      }),
      warnings: () => {
        const trust = config.trust.requireVerified ? undefined : withoutTrust();
        return trust === undefined ? [] : [trust];
      },
      close: () =>
        (closing ??= (async () => {
          await watches.close();
          loadAbort.abort();
          // Asked at once: a signature scan of every entry (a minute at 1,000,000) ends at its next turn.
          const reevaluationStopped = reevaluate.stop();
          await indexLoad;
          await refresher?.stop();
          await fetcher.close();
          await housekeeping?.stop();
          await probe?.stop();
          integrityChecks?.stop();
          trustRoots?.close();
          indexes?.close();
          await reevaluationStopped;
          await follower?.stop();
          // Last, with nothing else writing: the saved position is then exactly the index's.
          await snapshots?.stop().catch((err: unknown) => log.warn(saveFailure(err), 'saving the search index at shutdown failed'));
          await store.close();
        })()),
    };
  } catch (err) {
    stopLoading?.abort();
    await indexLoading;
    await refresher?.stop().catch(() => undefined);
    await housekeeping?.stop().catch(() => undefined);
    await probe?.stop().catch(() => undefined);
    integrityChecks?.stop();
    trustRoots?.close();
    indexes?.close();
    await reevaluation?.stop().catch(() => undefined);
    await follower?.stop().catch(() => undefined);
    await store.close().catch(() => undefined);
    throw err;
  }
}

/** What having no trusted key means, for the warning that says so (at start-up, and when the last key goes). */
function withoutKeys(config: RegistryConfig): string {
  const comes = config.trust.jkuUrls.length > 0 ? 'an allow-listed JWKS (REGISTRY_TRUSTED_JKU) gives one' : 'REGISTRY_TRUSTED_KEYS holds one';
  return config.trust.requireVerified
    ? `no trusted key: with REGISTRY_REQUIRE_VERIFIED=true every stored agent is hidden from discovery and every registration refused (SIGNATURE_INVALID) until ${comes}`
    : `no trusted key: no card signature can verify (every card is registered unverified) until ${comes}`;
}

/**
 * The start-up line about the trust roots. REGISTRY_REQUIRE_VERIFIED with no trust root that can
 * ever verify a card is invalid configuration (exit 2: ./start-checks.ts, unverifiable). Keys an
 * allow-listed JWKS may give later (its server down now, its set empty) are said at warn level instead.
 */
function tellTrustRoots(config: RegistryConfig, roots: TrustRoots, log: Logger): void {
  if (!roots.configured) return;
  const details = { keys: roots.size, file: config.trust.keysFile, jku: shownJkuUrls(config) };
  if (roots.size > 0) {
    log.info(details, 'trust roots loaded');
    return;
  }
  const refusal = unverifiable(config, roots.size, roots.fileProblems);
  if (refusal) throw refusal;
  log.warn(details, `trust roots loaded, ${withoutKeys(config)}`);
}

/** Makes the registry's search index (at start-up, and again when a replica reloads it) and stops the last one's background work. */
interface RegistryIndexFactory {
  create: () => SearchIndex;
  close: () => void;
}

/**
 * The search index: keyword search with the operator's synonyms, fused with an embeddings
 * service when REGISTRY_EMBEDDINGS_URL names one. Synonyms and the embeddings client are made
 * once; an index rebuilt on reload shares them, and the index it replaces stops embedding.
 */
function registryIndexFactory(config: RegistryConfig, synonyms: Synonyms | undefined, log: Logger, metrics: RegistryMetrics, fetcher: Fetcher): RegistryIndexFactory {
  const { embeddings, totalLimit } = config.search;
  if (!embeddings) return { create: () => createSearchIndex({ synonyms, totalLimit }), close: () => undefined };
  const embedder = new OpenAIEmbeddings({ ...embeddings, fetch: (options) => fetcher.fetchFunction(options) });
  // Not "service": the logger's base field (the registry's name) has that key already.
  log.info({ embeddings: embedder.describe }, 'hybrid ranking on');
  let current: HybridSearchIndex | undefined;
  return {
    create: () => {
      current?.close();
      current = new HybridSearchIndex(createSearchIndex({ synonyms, totalLimit }), embedder, {
        onFailure: (stage) => metrics.embeddingFailed(stage),
        warn: (message, err) => log.warn({ err }, message),
      });
      return current;
    },
    close: () => current?.close(),
  };
}

/** The allow-listed JWKS URLs as the log names them: query values masked (a key server's ?token=...). */
function shownJkuUrls(config: RegistryConfig): string[] {
  return config.trust.jkuUrls.map((url) => shownUrl(url, 'an allow-listed JWKS URL'));
}
