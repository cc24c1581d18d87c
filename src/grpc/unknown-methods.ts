/**
 * Calls to a method no service here has (/lf.a2a.v1.A2AService/Nope). grpc-js answers them
 * before any interceptor runs, with a bare UNIMPLEMENTED: no ErrorInfo, no request id, neither
 * logged nor counted, nor held to the request budget, where JSON-RPC answers -32601
 * METHOD_NOT_FOUND and counts it. Such a call is routed instead to one method registered for
 * them (UNKNOWN_METHOD_PATH), its path kept in UNKNOWN_METHOD_KEY metadata, so the call guard
 * admits, refuses and accounts for it as for any other call. The path is rewritten on the
 * HTTP/2 'stream' event, before grpc-js reads it (its HTTP/2 servers: http2-servers.ts).
 */
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../observability/logger.js';
import { http2ServersOf } from './http2-servers.js';

/** Where calls to unknown methods go: a path no client names (no service has a dot-led method). */
export const UNKNOWN_METHOD_PATH = '/a2a.registry.UnknownMethods/.unknown';
/** The metadata carrying the path the client called; one a client sends itself is dropped. */
export const UNKNOWN_METHOD_KEY = 'x-a2a-registry-called-path';

const PATH = ':path';

/** The method paths of service definitions, as grpc-js registers them. */
export const methodPaths = (services: readonly grpc.ServiceDefinition[]): Set<string> => new Set(services.flatMap((service) => Object.values(service).map((method) => method.path)));

/** Registers UNKNOWN_METHOD_PATH on `server` and routes every call to a path not in `known` there. */
export function routeUnknownMethods(server: grpc.Server, known: ReadonlySet<string>, log: Logger): void {
  const http2Servers = http2ServersOf(server);
  if (!http2Servers) {
    log.warn('the gRPC server cannot account for calls to unknown methods (grpc-js internals changed): grpc-js answers them UNIMPLEMENTED, unlogged');
    return;
  }
  // Never run: the call guard refuses every call to this path on its metadata.
  const unimplemented: grpc.handleUnaryCall<Buffer, Buffer> = (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED });
  server.register(UNKNOWN_METHOD_PATH, unimplemented, (value: Buffer) => value, (bytes: Buffer) => bytes, 'unary');
  for (const http2Server of http2Servers) {
    http2Server.prependListener('stream', (_stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
      delete headers[UNKNOWN_METHOD_KEY];
      const path = headers[PATH];
      if (typeof path !== 'string' || known.has(path)) return;
      headers[UNKNOWN_METHOD_KEY] = path;
      headers[PATH] = UNKNOWN_METHOD_PATH;
    });
  }
}
