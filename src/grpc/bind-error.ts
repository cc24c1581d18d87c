/**
 * A failure to listen on GRPC_PORT, naming the setting and what to change, as the HTTP port's
 * failure says it (composition/listen-error.ts): the system's words, and grpc-js's ("No address
 * added out of total 1 resolved errors: [listen EADDRINUSE ...]"), name no way out. A module of
 * its own, without grpc-js: a start probes GRPC_PORT with it before storage opens
 * (composition/start-checks.ts), and the gRPC server's own bind says the same (grpc-server.ts).
 * The setting is named bare, never in brackets: `serve` names its flag as "--grpc-port (GRPC_PORT)"
 * (cli/commands/serve.ts, nameFlags), which inside brackets read "(--grpc-port (GRPC_PORT))".
 */

/** `host` and `port` as bound; `message` the system's or grpc-js's, kept after the fix. */
export function grpcBindError(host: string, port: number, message: string): Error {
  if (/\bEADDRINUSE\b/.test(message)) return new Error(`gRPC port ${port} on ${host} is already in use: stop what uses it, or set GRPC_PORT to another port (${message})`);
  if (/\bEACCES\b/.test(message)) return new Error(`gRPC port ${port} needs privileges this user lacks: set GRPC_PORT to 1024 or above (${message})`);
  return new Error(`gRPC cannot listen on GRPC_PORT ${port} on ${host}: ${message}`);
}

/** host:port as grpc-js takes it, with IPv6 addresses in brackets. */
export const hostPort = (host: string, port: number): string => `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
