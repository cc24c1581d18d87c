/**
 * A failure to listen, naming the setting to change (the system's words name neither). A HOST
 * that is no address of this machine is invalid configuration (exit 2); a port taken, or a name
 * the resolver could not answer for just now (EAI_AGAIN), is a start that failed. A module of its
 * own, loaded before the server's: a start checks HOST with it first (./start-checks.ts).
 */
import { ConfigError } from '../config/config-error.js';

export function listenError(err: NodeJS.ErrnoException, host: string, port: number): Error {
  if (err.code === 'ENOTFOUND') {
    return new ConfigError(`invalid configuration: HOST ${host} is no name this machine can resolve: set HOST to an address of this machine (127.0.0.1, or 0.0.0.0 for every interface) (${err.message})`);
  }
  if (err.code === 'EADDRNOTAVAIL') {
    return new ConfigError(`invalid configuration: HOST ${host} is no address of this machine: set HOST to one of its addresses (127.0.0.1, or 0.0.0.0 for every interface) (${err.message})`);
  }
  const why =
    err.code === 'EADDRINUSE'
      ? `port ${port} on ${host} is already in use: stop what uses it, or set PORT to another port`
      : err.code === 'EAI_AGAIN'
        ? `HOST ${host} could not be resolved just now: try again, or set HOST to an address of this machine (127.0.0.1, or 0.0.0.0 for every interface)`
        : err.code === 'EACCES'
          ? `port ${port} needs privileges this user lacks: set PORT to 1024 or above`
          : undefined;
  return why ? new Error(`${why} (${err.message})`, { cause: err }) : err;
}
