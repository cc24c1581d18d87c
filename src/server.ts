/**
 * The composition root's second half: listens, builds the core (composition/build-registry.ts)
 * and mounts every door on one HTTP app. Tests and the CLI start registries through here,
 * exactly as `npm start` does.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ConnectionLimits, RegistryConfig } from './config/config.js';
import { buildRegistry, type RegistryCore } from './composition/build-registry.js';
import type { CardInterface, Door, MountedDoor, OpenedDoor } from './composition/door.js';
import { createStartingUpApp } from './composition/starting-up.js';
import { listenError } from './composition/listen-error.js';
import type { SettingFiles } from './composition/start-checks.js';
import { grpcDoor } from './grpc/grpc-door.js';
import { createHttpApp, finishHttpApp } from './http/app.js';
import { answerUnparsedRequests } from './http/unparsed-requests.js';
import type { Logger } from './observability/logger.js';
import { catalogDoor } from './catalog/catalog-door.js';
import { mcpDoor } from './mcp/mcp-door.js';
import { a2aDoor } from './protocol/a2a-door.js';
import { loadAgentCardJson } from './protocol/agent-card.js';
import { JWKS_PATH, jwksDoor } from './protocol/jwks-door.js';
import type { RegistryService } from './registry/service.js';
import type { RegistryStore } from './storage/types.js';
import type { RefreshLoop } from './freshness/refresh-loop.js';
import { webDoor } from './web/web-door.js';
import { signCard } from './trust/card-signing.js';

/** Every way into the registry, in mount order. */
// The web door stays last: browsers asking for a path no other door took get its "not found" page.
const DOORS: readonly Door[] = [a2aDoor, grpcDoor, mcpDoor, catalogDoor, jwksDoor, webDoor];

export interface RunningRegistry {
  /** The base URL it listens on (http://host:port). */
  url: string;
  port: number;
  /** The gRPC address the card advertises (host:port), when GRPC_PORT is set. */
  grpcUrl?: string;
  store: RegistryStore;
  service: RegistryService;
  /** The refresh loop (issue 16), absent with REGISTRY_REFRESH_SECONDS=0; tests drive a round with runOnce(). */
  refresher?: RefreshLoop;
  /**
   * Settles once the search index has loaded. The registry listens before that (/healthz
   * answers, /readyz says "loading the search index", searches are refused with STARTING_UP).
   */
  ready: Promise<void>;
  /** Everything the registry is, for tests and tools (the task store, housekeeping...). */
  core: RegistryCore;
  /** Stops accepting, lets in-flight requests finish (up to a grace period), closes storage. */
  close(): Promise<void>;
  /**
   * Cuts close()'s grace period short (a second SIGTERM or SIGINT): requests and streams still
   * in flight are cut at once; the index is then saved and storage closed as after the grace.
   */
  hurry(): void;
}

export interface StartOptions {
  /**
   * Aborted when a stop is asked for (SIGTERM, SIGINT) during start-up: while storage is opening
   * (a migration, a PostgreSQL replica waiting for its database) the start is given up, what it
   * opened closed, and startRegistry rejects with StartStopped. Once storage is open the start
   * runs to its end (a moment), and the registry is then closed as any running one.
   */
  signal?: AbortSignal;
  /** The files settings name, as a start's checks read them before the server's modules loaded (composition/start-checks.ts); read at start-up without. */
  settingFiles?: SettingFiles;
}

export async function startRegistry(config: RegistryConfig, log: Logger, options: StartOptions = {}): Promise<RunningRegistry> {
  // Listen before storage opens, so liveness answers from the first second even when opening
  // takes long (a migration at first start after an upgrade, a replica waiting for another's);
  // until the doors are mounted the port answers as createStartingUpApp says. The port may be 0
  // (tests): the card's URLs need the real one, which listening gives.
  const server = createHttpServer(config.connections);
  const unused = unusedConnections(server);
  let storageWait: string | undefined;
  const startingUp = createStartingUpApp({ corsOrigins: config.hardening.corsOrigins }, () => storageWait);
  server.on('request', startingUp);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(listenError(err, config.host, config.port)));
    server.listen(config.port, config.host, () => resolve());
  });
  let core: RegistryCore;
  try {
    core = await buildRegistry(config, log, { onWait: (reason) => (storageWait = reason), signal: options.signal }, options.settingFiles);
  } catch (err) {
    server.close();
    server.closeAllConnections();
    throw err;
  }
  /** Set by close(): readiness fails and every answer closes its connection, so keep-alive clients move on. */
  let draining = false;
  const mounted: MountedDoor[] = [];
  /** What GET /readyz answers 503 with, and the gRPC health service NOT_SERVING (DoorContext.notReady). */
  const notReady = async (): Promise<string | undefined> => {
    if (draining) return 'shutting down';
    return (await core.notReady()) ?? mounted.map((door) => door.notReady?.()).find((reason) => reason !== undefined);
  };
  try {
    const port = (server.address() as AddressInfo).port;
    const publicUrl = config.port === 0 ? config.publicUrl.replace(/:0$/, `:${port}`) : config.publicUrl;

    const app = createHttpApp({
      security: { corsOrigins: config.hardening.corsOrigins, openReads: DOORS.flatMap((door) => door.openReads?.(config) ?? []) },
      trustProxy: config.hardening.trustProxy,
      metrics: core.metrics,
      metricsAccess: { metricsToken: config.hardening.metricsToken, publicRead: config.publicRead, authenticator: core.authenticator },
      floodGuard: core.abuse.floodGuard(),
      failureFormats: DOORS.flatMap((door) => door.failureFormats?.() ?? []),
      readiness: { check: notReady, warnings: () => core.warnings() },
      log,
    });
    // Doors with listeners of their own bind first, so the card can name where they listen.
    const opened: OpenedDoor[] = [];
    for (const door of DOORS) {
      const handle = await door.open?.(core);
      if (handle) {
        opened.push(handle);
        mounted.push(handle);
      }
    }
    let card = loadAgentCardJson(publicUrl, { publicRead: config.publicRead, extraInterfaces: opened.flatMap((door) => door.interfaces) });
    // With REGISTRY_SIGNING_KEY the registry's own card is signed (twice: as A2A §8.4.1 says, and as
    // @a2a-js/sdk 1.3 verifies, card-signing.ts); its public key is at JWKS_PATH.
    // The A2A door derives the v0.3 (superset) variant from it, signature included: that signature
    // covers the v1.0 card inside the superset, which is what a v1.0 verifier checks. Signed after
    // the doors with listeners of their own added their interfaces, so the signature covers them.
    if (core.signingKey) card = await signCard(card, core.signingKey, { jku: `${publicUrl}${JWKS_PATH}`, sdkCompatible: true });
    // Its own endpoints are for admins to register: anyone may read its card.
    core.service.reservedEndpoints.reserve(card.supportedInterfaces as CardInterface[]);
    const ctx = { core, publicUrl, card, notReady };
    for (const door of DOORS) {
      const handle = await door.mount?.(app, ctx);
      if (handle) mounted.push(handle);
    }
    finishHttpApp(app, log, core.abuse.floodGuard());
    for (const door of opened) await door.serve(ctx);
    // Watches kept from before a restart run again once the index can answer them, and after the
    // doors are mounted (their push senders follow every watch that starts or is restored).
    core.restoreWatches().catch((err: unknown) => log.error({ err }, 'restoring the watches failed'));
    server.off('request', startingUp);
    // Answers not yet begun when shutdown starts close their connections too (Connection: close),
    // not only those of requests that arrive after it.
    const answering = new Set<http.ServerResponse>();
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      boundUnreadBody(req, res, config.maxBodyBytes);
      if (draining) {
        res.setHeader('Connection', 'close');
      } else {
        answering.add(res);
        res.once('close', () => answering.delete(res));
      }
      app(req, res);
    });

    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    const grpcUrl = opened.flatMap((door) => door.interfaces).find((i) => i.protocolBinding === 'GRPC')?.url;
    log.info({ url, publicUrl, grpcUrl, engine: core.store.engine }, 'registry listening');
    const listening = server;
    let closing: Promise<void> | undefined;
    const hurried = new AbortController();
    return {
      url,
      port,
      grpcUrl,
      store: core.store,
      service: core.service,
      refresher: core.refresher,
      ready: core.indexReady,
      core,
      close: () =>
        (closing ??= (async () => {
          draining = true;
          for (const res of answering) if (!res.headersSent) res.setHeader('Connection', 'close');
          // Watch streams would hold their connections open for the whole grace period: they end
          // now (without a final state; the watches run again after the restart).
          await core.watches.close();
          await Promise.all([
            ...mounted.map((door) => door.close(hurried.signal)),
            new Promise<void>((resolve) => {
              const force = setTimeout(() => listening.closeAllConnections(), config.connections.shutdownGraceMs).unref();
              // A second signal may have come already, while the watches closed.
              if (hurried.signal.aborted) listening.closeAllConnections();
              else hurried.signal.addEventListener('abort', () => listening.closeAllConnections(), { once: true });
              // Connections whose last response (a stream) finishes during the grace period are
              // idle keep-alive ones then: close them as they become so, not at their timeout.
              const closeIdle = () => {
                listening.closeIdleConnections();
                unused.closeAll();
              };
              const idle = setInterval(closeIdle, 100).unref();
              listening.close(() => {
                clearTimeout(force);
                clearInterval(idle);
                resolve();
              });
              closeIdle();
            }),
          ]);
          await core.close();
          log.info('registry stopped');
        })()),
      hurry: () => hurried.abort(),
    };
  } catch (err) {
    await Promise.all(mounted.map((door) => door.close().catch(() => undefined)));
    server.close();
    server.closeAllConnections();
    await core.close().catch(() => undefined);
    throw err;
  }
}

/**
 * The connections no request has arrived on yet, which close() ends at once. Browsers open
 * such connections ahead of need (Chromium's preconnect); node's closeIdleConnections leaves
 * them, as waiting for their first request, so shutdown waited for them for the whole grace
 * period (REGISTRY_SHUTDOWN_GRACE_SECONDS). No request has begun on them: a client sends it again on a new connection.
 */
function unusedConnections(server: http.Server): { closeAll(): void } {
  const unused = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  // Before every other 'request' listener: a request has begun once its headers are in.
  server.prependListener('request', (req: http.IncomingMessage) => unused.delete(req.socket));
  return {
    closeAll() {
      // Nothing received: a request that has begun (its headers on their way) is left to finish.
      for (const socket of unused) if (socket.bytesRead === 0) socket.destroy();
    },
  };
}

/**
 * A request answered before its body was read (404 for an unknown path, 405, 429 from the flood
 * guard, a refusal by a door) has the rest of its body discarded by node so the connection can
 * be used again: read without limit, so a client streaming a body without end held the
 * connection until the request timeout. Past the largest body the registry accepts, the
 * connection is closed instead.
 */
function boundUnreadBody(req: http.IncomingMessage, res: http.ServerResponse, maxBytes: number): void {
  res.once('finish', () => {
    if (req.complete) return;
    // What node discards never reaches the request stream: counted on the socket instead.
    const socket = req.socket;
    const readBefore = socket.bytesRead;
    const check = setInterval(() => {
      if (socket.bytesRead - readBefore > maxBytes) socket.destroy();
    }, 100).unref();
    const stop = () => clearInterval(check);
    req.once('end', stop);
    socket.once('close', stop);
    // Flowing even where a parser that gave up on the body paused it (node then never read the
    // rest, and the connection waited for the request timeout).
    req.resume();
  });
}

/**
 * node:http with the connection limits set (REGISTRY_REQUEST_TIMEOUT_SECONDS and friends): a
 * client that sends its headers or body too slowly gets 408 and is cut off, idle keep-alive
 * connections close, and connections beyond the cap are dropped at once. Node enforces the
 * request timeouts on a timer (every `connectionsCheckingInterval`, 30 s by default), so a slow
 * client could otherwise hold on for half a minute past its deadline: the timer runs every
 * tenth of the timeout (at most 1 s) and node's timeouts are set one tick short, so a request
 * that has not fully arrived by the configured timeout has been cut off by then.
 * The timeouts cover receiving a request, not answering it: SSE streams are not cut.
 */
function createHttpServer(limits: ConnectionLimits): http.Server {
  const tick = Math.max(50, Math.min(1000, Math.floor(limits.requestTimeoutMs / 10)));
  const server = http.createServer({
    requestTimeout: Math.max(tick, limits.requestTimeoutMs - tick),
    headersTimeout: Math.max(tick, limits.headersTimeoutMs - tick),
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: tick,
  });
  server.maxConnections = limits.maxConnections;
  answerUnparsedRequests(server);
  return server;
}
