/**
 * The standard gRPC health service (grpc.health.v1.Health, what Kubernetes gRPC probes, Envoy
 * and gRPC load balancers ask) on the gRPC port, answering from the same readiness as GET
 * /readyz: SERVING while the gRPC server serves and the registry is ready (storage reachable,
 * the index loaded, the replica in step), NOT_SERVING otherwise, from the moment shutdown
 * begins. The service names are "" (the whole server) and the two A2A services.
 *
 * - Check and List answer the readiness of the moment.
 * - Watch (grpc-health-probe --watch, gRPC clients' own health checking, load balancers) sends
 *   the status at once, then each change of it. The readiness is asked every WATCH_POLL_MS while
 *   any Watch is open, once for all of them (nothing announces a change: storage failing is found
 *   by asking), and a change a Check finds meanwhile is sent at once. An unknown service gets
 *   SERVICE_UNKNOWN and the stream stays open, as the protocol says. Shutdown sends NOT_SERVING
 *   and ends every Watch (status OK), or the server's graceful close would wait out its grace for
 *   streams that never end by themselves.
 * - A readiness check that fails (throws: a bug, storage answering something unexpected) is
 *   logged with its error, as /readyz logs it, once per change of error rather than at each probe.
 */
import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { quote } from '../lib/json.js';
import type { Logger } from '../observability/logger.js';

type ServingStatus = 'SERVING' | 'NOT_SERVING';
type WatchedStatus = ServingStatus | 'SERVICE_UNKNOWN';

export const HEALTH_SERVICE_PREFIX = '/grpc.health.v1.Health/';

/** How often the readiness is asked while a Watch is open. */
const WATCH_POLL_MS = 1000;

export interface HealthService {
  /** Sends NOT_SERVING to every open Watch and ends it; later Watches end at once. */
  close(): void;
}

interface Watcher {
  call: grpc.ServerWritableStream<{ service: string }, { status: WatchedStatus }>;
  /** The status last sent; SERVICE_UNKNOWN for a service the server does not have (never updated). */
  sent?: WatchedStatus;
}

export function addHealthService(
  server: grpc.Server,
  serviceNames: readonly string[],
  notReady: () => Promise<string | undefined>,
  log: Pick<Logger, 'error' | 'info'>,
): HealthService {
  const known = new Set(['', ...serviceNames]);
  const watchers = new Set<Watcher>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const send = (w: Watcher, s: WatchedStatus): void => {
    if (w.sent === s || w.sent === 'SERVICE_UNKNOWN') return;
    w.sent = s;
    w.call.write({ status: s });
  };
  /** The failed readiness check's error last logged (its message), until a check succeeds. */
  let failure: string | undefined;
  const asked = async (): Promise<ServingStatus> => {
    try {
      const reason = await notReady();
      if (failure !== undefined) log.info({ lastError: failure }, 'the readiness check succeeds again (gRPC health service)');
      failure = undefined;
      return reason ? 'NOT_SERVING' : 'SERVING';
    } catch (err) {
      const said = err instanceof Error ? err.message : String(err);
      if (said !== failure) log.error({ err }, 'the readiness check failed (gRPC health service: NOT_SERVING)');
      failure = said;
      return 'NOT_SERVING';
    }
  };
  /** The readiness now; a change any check finds (a probe's Check too) goes to the Watches at once. */
  const status = async (): Promise<ServingStatus> => {
    const s = await asked();
    if (!closed) for (const w of watchers) send(w, s);
    return s;
  };
  const poll = async (): Promise<void> => {
    timer = undefined;
    await status();
    schedule();
  };
  const schedule = (): void => {
    if (closed || timer !== undefined || ![...watchers].some((w) => w.sent !== 'SERVICE_UNKNOWN')) return;
    timer = setTimeout(() => void poll(), WATCH_POLL_MS);
    timer.unref();
  };
  const endWatch = (w: Watcher): void => {
    watchers.delete(w);
    if (w.sent !== 'SERVICE_UNKNOWN') send(w, 'NOT_SERVING');
    w.call.end();
  };

  server.addService(healthService, {
    check: (call: grpc.ServerUnaryCall<{ service: string }, unknown>, callback: grpc.sendUnaryData<{ status: ServingStatus }>) => {
      if (!known.has(call.request.service)) {
        callback({ code: grpc.status.NOT_FOUND, details: `Unknown service ${quote(call.request.service, 100)}; ask for "" or ${serviceNames.join(', ')}.` });
        return;
      }
      void status().then((s) => callback(null, { status: s }));
    },
    list: (_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<{ statuses: Record<string, { status: ServingStatus }> }>) => {
      void status().then((s) => callback(null, { statuses: Object.fromEntries([...known].map((name) => [name, { status: s }])) }));
    },
    watch: (call: Watcher['call']) => {
      const w: Watcher = { call };
      const forget = (): void => void watchers.delete(w);
      call.on('cancelled', forget);
      call.on('error', forget);
      if (closed) return endWatch(w);
      watchers.add(w);
      if (!known.has(call.request.service)) return send(w, 'SERVICE_UNKNOWN');
      void status().then(schedule);
    },
  });
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      for (const w of [...watchers]) endWatch(w);
    },
  };
}
