/**
 * Every `authorization` value a gRPC call carried, for the access rule (auth/access.ts), which
 * refuses more than one: which of two counted would depend on their order (a client's own
 * token before the one a gateway appends overruled the gateway's). The HTTP doors see every
 * value (from req.rawHeaders); on gRPC, Node's HTTP/2 layer treats authorization as a
 * single-value header and keeps only the first in the headers object grpc-js builds the call's
 * metadata from, so a call with a valid token followed by another was served as the first.
 *
 * The HTTP/2 'stream' event also hands its listeners the header list as received. A listener
 * placed before grpc-js's (on its HTTP/2 servers, http2-servers.ts) puts every authorization
 * value back (an array, which grpc-js adds to the metadata value by value), so the call guard
 * sees them all. When a grpc-js version no longer has its servers where they were, this says so
 * at start-up rather than failing (test/grpc.test.ts notices).
 */
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '../observability/logger.js';
import { http2ServersOf } from './http2-servers.js';

const AUTHORIZATION = 'authorization';

/** Restores the authorization values HTTP/2 dropped, on every call the bound server receives. */
export function keepEveryAuthorization(server: grpc.Server, log: Logger): void {
  const http2Servers = http2ServersOf(server);
  if (!http2Servers) {
    log.warn('the gRPC server cannot see repeated authorization metadata (grpc-js internals changed): a call with two is served as the first');
    return;
  }
  for (const http2Server of http2Servers) {
    http2Server.prependListener('stream', (_stream: ServerHttp2Stream, headers: IncomingHttpHeaders, _flags: number, rawHeaders: string[] | undefined) => {
      if (!Array.isArray(rawHeaders)) return; // a Node without them: as before
      let values: string[] | undefined;
      for (let i = 0; i < rawHeaders.length; i += 2) {
        if (rawHeaders[i] === AUTHORIZATION) (values ??= []).push(rawHeaders[i + 1]!);
      }
      // An array: grpc-js adds each element as a value of its own.
      if (values && values.length > 1) (headers as Record<string, string | string[] | undefined>)[AUTHORIZATION] = values;
    });
  }
}
