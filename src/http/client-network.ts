/**
 * The client a rate limit counts: its address, or for IPv6 the network it comes from.
 *
 * One IPv6 subscriber holds at least a /64, often a /56 or /48: 2^64 addresses or more, each of
 * which would get a fresh budget if limits were counted per address, so the flood guard, the
 * operation budgets and the stream cap would stop nobody on IPv6 (and every new address would add
 * a limiter key to the memory for its minute). Counting the /56 (REGISTRY_RATE_IPV6_PREFIX, the
 * default of express-rate-limit's key for the same reason) gives one subscriber one budget; only
 * global unicast addresses (2000::/3) are grouped, the others count one by one. An
 * IPv4-mapped IPv6 address (`::ffff:203.0.113.7`, how a dual-stack socket reports an IPv4 peer) is
 * its IPv4 address, so a client has one budget whichever way it connects; IPv4 addresses count one
 * by one. Anything unparsable ("unknown") is counted as given.
 */
import ipaddr from 'ipaddr.js';

/** 2000::/3: the addresses ISPs and hosting providers hand out, a /64 to /48 per subscriber. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/**
 * `address` as a rate limit counts it: an IPv4 address, an IPv6 network in CIDR form
 * (`2001:db8:0:100::/56`; with a prefix of 128 the address itself, in its one canonical spelling),
 * or as given.
 */
export function limitedClient(address: string, ipv6Prefix: number): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  // Outside global unicast (loopback, link-local, unique local: a cluster's pods, a LAN) addresses
  // are hosts the operator's network hands out one by one, often a node's pods in one /64; none
  // of them comes from the internet.
  if (ipv6Prefix >= 128 || !v6.match(GLOBAL_UNICAST)) return v6.toString();
  // ipaddr.js keeps an IPv6 address as eight 16-bit parts: keep the prefix's bits, clear the rest.
  const parts = v6.parts.map((part, i) => {
    const kept = Math.min(16, Math.max(0, ipv6Prefix - i * 16));
    return kept === 0 ? 0 : part & ((0xffff << (16 - kept)) & 0xffff);
  });
  return `${new ipaddr.IPv6(parts).toString()}/${ipv6Prefix}`;
}
