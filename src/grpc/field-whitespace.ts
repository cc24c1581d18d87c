/**
 * Metadata values with leading or trailing whitespace (`authorization: Bearer <token> `,
 * `last-event-id:  1`). HTTP/1.1 trims such whitespace (RFC 9110 5.5), so the HTTP doors read
 * the token; Node's HTTP/2 layer, by default, drops the whole field as RFC 9113 8.2.1 allows,
 * before grpc-js sees it: such a call ran as anonymous, a wrong token included, where the
 * access rule (auth/access.ts) refuses a credential it cannot use on every call. Node (24.2 and
 * later, and the 22.x CI tests) keeps such fields with the HTTP/2 server option strictFieldWhitespaceValidation: false;
 * grpc-js takes no HTTP/2 options of its own, so it goes in the options it creates its HTTP/2
 * servers with (its private `commonServerOptions`), before bindAsync. The call guard then reads
 * the values trimmed, as HTTP does. When a grpc-js version no longer has them, this says so at
 * start-up rather than failing (test/grpc.test.ts notices).
 */
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '../observability/logger.js';

/** Call before bindAsync: the HTTP/2 servers grpc-js creates then keep fields with whitespace around their value. */
export function keepFieldsWithWhitespace(server: grpc.Server, log: Logger): void {
  const options: unknown = (server as unknown as { commonServerOptions?: unknown }).commonServerOptions;
  if (typeof options !== 'object' || options === null) {
    log.warn('the gRPC server drops metadata with whitespace around its value (grpc-js internals changed): a call whose authorization ends in a space is served as anonymous');
    return;
  }
  (options as { strictFieldWhitespaceValidation?: boolean }).strictFieldWhitespaceValidation = false;
}
