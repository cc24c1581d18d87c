/**
 * The composition root: builds storage, index, validator, service, executor and the HTTP app
 * from a configuration, and starts listening. Tests and the CLI start registries through here,
 * exactly as `npm start` does.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DefaultRequestHandler } from '@a2a-js/sdk/server';
import type { RegistryConfig } from './config/config.js';
import { ADMIN_PRINCIPAL } from './config/config.js';
import type { Logger } from './observability/logger.js';
import { RegistryMetrics } from './observability/metrics.js';
import { RegistryExecutor } from './operations/executor.js';
import { loadAgentCard, loadAgentCardJson } from './protocol/agent-card.js';
import { createApp } from './protocol/app.js';
import { TokenAuthenticator, ensureAdminToken } from './protocol/auth.js';
import { AbuseControl } from './protocol/rate-limit.js';
import { IndexFollower } from './registry/index-follower.js';
import { PageTokens } from './registry/page-token.js';
import { RegistryService } from './registry/service.js';
import { createSearchIndex } from './search/index.js';
import { createStore } from './storage/create-store.js';
import type { RegistryStore } from './storage/types.js';
import { createDocumentValidator } from './validation/index.js';

const SEARCH_CHUNK_SIZE = 5;
const TASK_PRUNE_INTERVAL_MS = 10 * 60_000;
const SHUTDOWN_GRACE_MS = 10_000;
/** Safety net behind change notifications: a replica sees every change within this, even if a notification was lost. */
const FOLLOWER_POLL_MS = 500;

export interface RunningRegistry {
  /** The base URL it listens on (http://host:port). */
  url: string;
  port: number;
  store: RegistryStore;
  service: RegistryService;
  /** Stops accepting, lets in-flight requests finish (up to a grace period), closes storage. */
  close(): Promise<void>;
}

/** Tokens from the configuration, or the generated admin token when none are configured. */
function resolveTokens(config: RegistryConfig, log: Logger): Map<string, string> {
  if (config.tokens.size > 0) return config.tokens;
  const admin = ensureAdminToken(config.dataDir);
  log.warn(
    { file: admin.file, created: admin.created },
    `REGISTRY_TOKENS is not set: the admin token is in ${admin.file} (send it as "Authorization: Bearer <token>")`,
  );
  return new Map([[admin.token, ADMIN_PRINCIPAL]]);
}

export async function startRegistry(config: RegistryConfig, log: Logger): Promise<RunningRegistry> {
  const tokens = resolveTokens(config, log);
  const store = createStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await store.open();

  let indexLoaded = false;
  /** Set by close(): readiness fails and every answer closes its connection, so keep-alive clients move on. */
  let draining = false;
  let server: http.Server | undefined;
  let pruneTimer: NodeJS.Timeout | undefined;
  let follower: IndexFollower | undefined;
  try {
    const index = createSearchIndex();
    const metrics = new RegistryMetrics();
    const validator = metrics.countingValidator(
      createDocumentValidator({ maxDocumentBytes: config.maxDocumentBytes, warnInsecureHttp: config.warnInsecureHttp }),
    );
    const secret = config.pageTokenSecret ?? `page-tokens:${[...tokens.keys()].sort().join(',')}`;
    const service = new RegistryService({ store, index, validator, pageTokens: new PageTokens(secret) });

    // Read the change sequence before scanning, then replay from it: a change committed by
    // another replica during the scan is applied twice at worst, never missed.
    const started = Date.now();
    const seqAtLoad = await store.lastChangeSeq();
    const indexed = await service.rebuildIndex();
    indexLoaded = true;
    log.info({ entries: indexed, ms: Date.now() - started, engine: store.engine }, 'search index loaded');
    if (store.subscribeToChanges) {
      follower = new IndexFollower(store, service, log, { pollMs: FOLLOWER_POLL_MS }, seqAtLoad);
      await follower.start();
    }

    // The port may be 0 (tests): the card's URLs need the real one, so listen first, then mount.
    server = http.createServer();
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(config.port, config.host, () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
    const publicUrl = config.port === 0 ? config.publicUrl.replace(/:0$/, `:${port}`) : config.publicUrl;

    const cardJson = loadAgentCardJson(publicUrl);
    const authenticator = new TokenAuthenticator(tokens);
    const hardening = config.hardening;
    const abuse = new AbuseControl(
      { enabled: hardening.rateLimits, writesPerMinute: hardening.writesPerMinute, readsPerMinute: hardening.readsPerMinute, requestsPerMinute: hardening.requestsPerMinute, maxStreamsPerClient: hardening.maxStreamsPerClient },
      { log, onLimited: (limit, by) => metrics.rateLimited(limit, by), isExempt: (authorization) => authenticator.userFor(authorization).isAdmin },
    );
    metrics.setSources({ countEntries: () => store.count(), indexSize: () => service.indexSize, openStreams: () => abuse.openStreams });
    const executor = new RegistryExecutor(
      service,
      {
        maxDocumentBytes: config.maxDocumentBytes,
        maxJsonDepth: hardening.maxJsonDepth,
        maxQueryChars: hardening.maxQueryChars,
        publicRead: config.publicRead,
        searchChunkSize: SEARCH_CHUNK_SIZE,
      },
      log,
      abuse,
    );
    const requestHandler = new DefaultRequestHandler(loadAgentCard(publicUrl), store.taskStore, executor);
    const app = createApp({
      cardJson,
      cardMaxAgeSeconds: config.cardMaxAgeSeconds,
      requestHandler,
      userBuilder: authenticator.userBuilder(),
      maxBodyBytes: config.maxBodyBytes,
      maxJsonDepth: hardening.maxJsonDepth,
      security: { corsOrigins: hardening.corsOrigins },
      trustProxy: hardening.trustProxy,
      abuse,
      metrics,
      metricsToken: hardening.metricsToken,
      log,
      readiness: {
        check: async () => {
          if (draining) return 'shutting down';
          if (!indexLoaded) return 'search index is loading';
          if (!(await store.ping())) return `${store.engine} storage is unreachable`;
          return follower?.notInStep;
        },
      },
    });
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      if (draining) res.setHeader('Connection', 'close');
      app(req, res);
    });

    const prune = () =>
      store
        .pruneTasks(config.taskRetention)
        .then((n) => n > 0 && log.info({ pruned: n }, 'finished tasks pruned'))
        .catch((err: unknown) => log.warn({ err }, 'task pruning failed'));
    void prune();
    pruneTimer = setInterval(prune, TASK_PRUNE_INTERVAL_MS).unref();

    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    log.info({ url, publicUrl, engine: store.engine }, 'registry listening');
    const listening = server;
    let closing: Promise<void> | undefined;
    return {
      url,
      port,
      store,
      service,
      close: () =>
        (closing ??= (async () => {
          draining = true;
          clearInterval(pruneTimer);
          await follower?.stop();
          await new Promise<void>((resolve) => {
            const force = setTimeout(() => listening.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
            listening.close(() => {
              clearTimeout(force);
              resolve();
            });
            listening.closeIdleConnections();
          });
          await store.close();
          log.info('registry stopped');
        })()),
    };
  } catch (err) {
    clearInterval(pruneTimer);
    await follower?.stop().catch(() => undefined);
    server?.close();
    await store.close().catch(() => undefined);
    throw err;
  }
}
