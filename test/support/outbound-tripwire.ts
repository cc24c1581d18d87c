/**
 * A tripwire for tests that make the registry fetch: once imported, every connection this process
 * opens with net.connect / tls.connect (what undici, and so the Fetcher, uses) must go to a
 * loopback address. Anything else is stopped before a packet leaves — the host name's lookup
 * answers an error — and recorded, so a test can assert that a guard which should have refused
 * did not reach the outside. It is a test's safety net, not the guard: the guard must refuse first.
 */
import dns from 'node:dns';
import net from 'node:net';
import tls from 'node:tls';

const violations: string[] = [];

/** Connections this process tried to open to non-loopback addresses (stopped), emptied by the call. */
export function takeOutboundViolations(): string[] {
  return violations.splice(0);
}

const isLoopback = (address: string): boolean =>
  /^127\./.test(address) || address === '::1' || /^::ffff:127\./i.test(address);

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;
type Lookup = (host: string, options: dns.LookupOptions, callback: LookupCallback) => void;

function tripped(what: string): NodeJS.ErrnoException {
  violations.push(what);
  const error: NodeJS.ErrnoException = new Error(`outbound tripwire: a test tried to connect to ${what}`);
  error.code = 'ETRIPWIRE';
  return error;
}

/** The connect options with the host checked (IP literal) or its lookup wrapped (host name). */
function guarded<T extends { host?: string; port?: number | string; path?: string; socket?: unknown; lookup?: unknown }>(options: T): T {
  if (options.path || options.socket) return options;
  const host = options.host ?? 'localhost';
  if (net.isIP(host)) {
    if (!isLoopback(host)) throw tripped(`${host}:${options.port}`);
    return options;
  }
  const lookup = (options.lookup as Lookup | undefined) ?? (dns.lookup as unknown as Lookup);
  const checked: Lookup = (name, lookupOptions, callback) =>
    lookup(name, lookupOptions, (error, address, family) => {
      if (error) return callback(error, address, family);
      const list = Array.isArray(address) ? address.map((a) => a.address) : [address];
      const outside = list.find((a) => !isLoopback(a));
      if (outside) return callback(tripped(`${name} -> ${outside}:${options.port}`), '', 0);
      callback(null, address, family);
    });
  return { ...options, lookup: checked };
}

const originalNetConnect = net.connect;
const originalTlsConnect = tls.connect;

function patchedNet(this: unknown, ...args: unknown[]): net.Socket {
  if (args[0] && typeof args[0] === 'object') args[0] = guarded(args[0] as net.NetConnectOpts & { host?: string });
  else if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    const host = typeof args[1] === 'string' ? args[1] : 'localhost';
    if (net.isIP(host) && !isLoopback(host)) throw tripped(`${host}:${String(args[0])}`);
  }
  return (originalNetConnect as (...a: unknown[]) => net.Socket).apply(this, args);
}

function patchedTls(this: unknown, ...args: unknown[]): tls.TLSSocket {
  if (args[0] && typeof args[0] === 'object') args[0] = guarded(args[0] as tls.ConnectionOptions & { host?: string });
  return (originalTlsConnect as (...a: unknown[]) => tls.TLSSocket).apply(this, args);
}

net.connect = patchedNet as typeof net.connect;
net.createConnection = patchedNet as typeof net.createConnection;
tls.connect = patchedTls as typeof tls.connect;
