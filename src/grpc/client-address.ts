/**
 * The client address of a gRPC call, by the same rule as express's req.ip on the HTTP doors
 * (REGISTRY_TRUST_PROXY, through proxy-addr, which express itself uses): the socket's peer, or
 * with trusted proxies in front, the address they put in x-forwarded-for. Rate limits key on it,
 * so one client has one budget whichever binding it uses.
 */
import type { IncomingMessage } from 'node:http';
import proxyAddr from 'proxy-addr';
import type { TrustProxy } from '../config/config.js';

type Trust = (address: string, hop: number) => boolean;

/** REGISTRY_TRUST_PROXY as express compiles it: false trusts nothing, true everything, n the n nearest hops, a list those proxies. */
export function compileTrust(trustProxy: TrustProxy): Trust {
  if (typeof trustProxy === 'number') return (_address, hop) => hop < trustProxy;
  if (typeof trustProxy !== 'boolean') return proxyAddr.compile([...trustProxy]);
  return () => trustProxy;
}

export function clientAddress(remoteAddress: string | undefined, forwardedFor: string[], trust: Trust): string {
  if (!remoteAddress) return 'unknown';
  // proxy-addr reads only these two fields of a request.
  const request = { socket: { remoteAddress }, headers: { 'x-forwarded-for': forwardedFor.join(', ') } };
  return proxyAddr(request as unknown as IncomingMessage, trust);
}
