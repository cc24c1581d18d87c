/**
 * The standard gRPC health service (grpc.health.v1.Health, what Kubernetes gRPC probes, Envoy
 * and gRPC load balancers ask) on the gRPC port, answering from the same readiness as GET
 * /readyz: SERVING while the gRPC server serves and the registry is ready (storage reachable,
 * the index loaded, the replica in step), NOT_SERVING otherwise, from the moment shutdown
 * begins. The service names are "" (the whole server) and the two A2A services; Watch is not
 * offered (Check is what probes use).
 */
import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';

type ServingStatus = 'SERVING' | 'NOT_SERVING';

export const HEALTH_SERVICE_PREFIX = '/grpc.health.v1.Health/';

export function addHealthService(server: grpc.Server, serviceNames: readonly string[], notReady: () => Promise<string | undefined>): void {
  const known = new Set(['', ...serviceNames]);
  const status = async (): Promise<ServingStatus> => ((await notReady().catch(() => 'readiness check failed')) ? 'NOT_SERVING' : 'SERVING');
  server.addService(healthService, {
    check: (call: grpc.ServerUnaryCall<{ service: string }, unknown>, callback: grpc.sendUnaryData<{ status: ServingStatus }>) => {
      if (!known.has(call.request.service)) {
        callback({ code: grpc.status.NOT_FOUND, details: `Unknown service "${call.request.service.slice(0, 100)}"; ask for "" or ${serviceNames.join(', ')}.` });
        return;
      }
      void status().then((s) => callback(null, { status: s }));
    },
    list: (_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<{ statuses: Record<string, { status: ServingStatus }> }>) => {
      void status().then((s) => callback(null, { statuses: Object.fromEntries([...known].map((name) => [name, { status: s }])) }));
    },
  });
}
