/**
 * The bound on a call's metadata (its HTTP/2 headers), as the HTTP port bounds a request's
 * headers (Node's 16 KiB, http.maxHeaderSize, answered 431 REQUEST_TOO_LARGE:
 * http/unparsed-requests.ts). gRPC had none of its own: grpc-js sets none, so a call carried up
 * to a few hundred KB of metadata, held while it ran.
 *
 * Two layers, so that most oversized metadata gets an answer that says what is wrong:
 * - the registry's check (metadataTooLarge, in the call guard, before any other rule), at
 *   http.maxHeaderSize: RESOURCE_EXHAUSTED, reason REQUEST_TOO_LARGE, counted and logged;
 * - the transport's, well above it (HEADER_LIST_LIMIT, advertised as SETTINGS_MAX_HEADER_LIST_SIZE,
 *   which Node enforces): a header list too large to be worth reading is refused by Node before
 *   grpc-js or the registry see a call (RST_STREAM ENHANCE_YOUR_CALM: the client reads a bare
 *   RESOURCE_EXHAUSTED, "Bandwidth exhausted or memory limit exceeded"), as is one of more than
 *   Node's 128 header fields; a single field beyond what nghttp2's HPACK decoder takes (over
 *   64 KiB as encoded, NGHTTP2_HD_MAX_NV, fixed when nghttp2 is built: one of 130 KB) ends the
 *   connection and every call on it (COMPRESSION_ERROR: each reads INTERNAL). Nothing here can
 *   answer it: the block is not decoded, no call exists, and HTTP/2 requires the connection to
 *   end (RFC 9113 4.3). The README says so.
 */
import http from 'node:http';
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '../observability/logger.js';
import { http2ServersOf } from './http2-servers.js';

/** The most metadata a call may carry, as HTTP/2 counts a header list (RFC 9113 6.5.2): the HTTP port's bound on headers. */
export const METADATA_LIMIT = http.maxHeaderSize;

/** The header list size Node refuses outright: past it, no call exists for the registry to answer. */
const HEADER_LIST_LIMIT = 4 * METADATA_LIMIT;

/** Each header's name and value, plus 32 octets of overhead, as SETTINGS_MAX_HEADER_LIST_SIZE counts them (binary values as sent, base64). */
function headerListSize(metadata: grpc.Metadata, path: string): number {
  let size = ':path'.length + Buffer.byteLength(path) + 32;
  for (const [name, values] of Object.entries(metadata.toHttp2Headers())) {
    for (const value of Array.isArray(values) ? values : [values]) size += name.length + Buffer.byteLength(String(value)) + 32;
  }
  return size;
}

/** The size of the call's metadata when it is over METADATA_LIMIT, else undefined. */
export function metadataTooLarge(metadata: grpc.Metadata, path: string): number | undefined {
  const size = headerListSize(metadata, path);
  return size > METADATA_LIMIT ? size : undefined;
}

/** Has the bound server's HTTP/2 servers advertise and enforce HEADER_LIST_LIMIT on every new connection. */
export function limitHeaderLists(server: grpc.Server, log: Logger): void {
  const http2Servers = http2ServersOf(server);
  if (!http2Servers) {
    log.warn('the gRPC port cannot bound the size of a call\'s headers at the transport (grpc-js internals changed): metadata over the limit is still refused, once read');
    return;
  }
  for (const http2Server of http2Servers) http2Server.updateSettings({ maxHeaderListSize: HEADER_LIST_LIMIT });
}
