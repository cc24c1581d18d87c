/**
 * The HTTP/2 servers a bound grpc-js server listens with: grpc-js's own (its private
 * `http2Servers`, filled by bindAsync), for what grpc-js has no option for (the header list as
 * received, a cap on connections). Undefined when a grpc-js version no longer has them; callers
 * say so at start-up rather than failing.
 */
import type { Http2Server } from 'node:http2';
import type * as grpc from '@grpc/grpc-js';

export function http2ServersOf(server: grpc.Server): Http2Server[] | undefined {
  const servers: unknown = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(servers instanceof Map)) return undefined;
  const found = [...servers.keys()].filter((candidate): candidate is Http2Server => typeof (candidate as Http2Server | null)?.prependListener === 'function');
  return found.length > 0 ? found : undefined;
}
