/**
 * The A2A gRPC binding (A2A v1.0, section 10), on a port of its own: GRPC_PORT, on HOST; off when
 * unset. The SDK's v1.0 gRPC service and its v0.3 compatibility service run over the same
 * request handler as the JSON-RPC and HTTP+JSON bindings, with the same authentication, limits
 * and metrics (grpc-server.ts, call-guard.ts). It opens before the card is built, so the card
 * lists the address actually listened on.
 */
import type { Door, OpenedDoor } from '../composition/door.js';
import type { RegistryCore } from '../composition/build-registry.js';

export const grpcDoor: Door = {
  name: 'grpc',
  async open(core: RegistryCore): Promise<OpenedDoor | undefined> {
    if (!core.config.grpc) return undefined;
    // Loaded only when gRPC is on: @grpc/grpc-js and the SDK's gRPC services add start-up time.
    const { openGrpcServer } = await import('./grpc-server.js');
    return openGrpcServer(core, core.config.grpc);
  },
};
