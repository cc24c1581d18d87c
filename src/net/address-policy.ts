/**
 * Which network addresses the registry may send requests to.
 *
 * The default is "public unicast only": every address in a special-purpose range (IANA's IPv4
 * and IPv6 Special-Purpose Address Registries, plus the IPv6 space outside 2000::/3 that is not
 * allocated for global unicast) is refused, because a registry that fetches URLs given by its
 * callers must not become a way to reach its own host, its network or the cloud metadata service
 * (169.254.169.254). IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64, 6to4,
 * Teredo) are refused too: they can lead to any IPv4 address, internal ones included.
 *
 * The operator opens exceptions with REGISTRY_FETCH_ALLOW, a comma-separated list of host names
 * (every address that name resolves to is then accepted), IP addresses and CIDR ranges.
 *
 * The table is ours rather than a library's classification so that the rule, and the name a
 * refusal reports, is visible and reviewable in one place; ipaddr.js only parses and matches.
 */
import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';

/** The range an address was refused for; also the `reason` of a refused fetch and a metric label. */
export type AddressRule =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cgnat'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'reserved'
  | 'ipv4-mapped'
  | 'ipv4-compatible'
  | 'nat64'
  | '6to4'
  | 'teredo'
  | 'cloud-platform';

export const ADDRESS_RULES: readonly AddressRule[] = [
  'unspecified', 'loopback', 'private', 'link-local', 'cgnat', 'multicast', 'broadcast', 'documentation',
  'reserved', 'ipv4-mapped', 'ipv4-compatible', 'nat64', '6to4', 'teredo', 'cloud-platform',
];

type Range = readonly [cidr: string, rule: AddressRule];

/** Refused IPv4 ranges (RFC 6890 and successors). Everything else is public unicast. */
const IPV4_RANGES: readonly Range[] = [
  ['0.0.0.0/8', 'unspecified'], // "this network"; 0.0.0.0 reaches the local host on Linux
  ['10.0.0.0/8', 'private'], // RFC 1918
  ['100.64.0.0/10', 'cgnat'], // RFC 6598 shared address space
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'], // RFC 3927; 169.254.169.254 is the cloud metadata service
  // Azure's platform endpoint (WireServer: the VM agent's configuration and extension settings,
  // DNS, health probes), a public address that answers only from inside Azure: a metadata service
  // in all but range, and no agent's address.
  ['168.63.129.16/32', 'cloud-platform'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'], // IETF protocol assignments
  ['192.0.2.0/24', 'documentation'], // TEST-NET-1
  ['192.88.99.0/24', 'reserved'], // former 6to4 relay anycast
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'reserved'], // benchmarking
  ['198.51.100.0/24', 'documentation'], // TEST-NET-2
  ['203.0.113.0/24', 'documentation'], // TEST-NET-3
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'], // before 240/4, which contains it
  ['240.0.0.0/4', 'reserved'],
];

/**
 * Refused IPv6 ranges, most specific first. Anything outside 2000::/3 (global unicast) that no
 * line names is refused as `reserved`.
 */
const IPV6_RANGES: readonly Range[] = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::ffff:0:0/96', 'ipv4-mapped'],
  ['::ffff:0:0:0/96', 'ipv4-mapped'], // RFC 6145 IPv4-translated
  ['::/96', 'ipv4-compatible'], // deprecated IPv4-compatible addresses
  ['64:ff9b::/96', 'nat64'], // RFC 6052 well-known prefix
  ['64:ff9b:1::/48', 'nat64'], // RFC 8215 local-use prefix
  ['fc00::/7', 'private'], // unique local addresses
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'private'], // deprecated site-local
  ['ff00::/8', 'multicast'],
  ['2001::/32', 'teredo'],
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation'], // RFC 9637
  ['2001::/23', 'reserved'], // IETF protocol assignments (benchmarking, ORCHID, AMT, ...)
  ['2002::/16', '6to4'],
];

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

const parsedV4 = IPV4_RANGES.map(([cidr, rule]) => [ipaddr.IPv4.parseCIDR(cidr), rule] as const);
const parsedV6 = IPV6_RANGES.map(([cidr, rule]) => [ipaddr.IPv6.parseCIDR(cidr), rule] as const);
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/** Parses an IP address (IPv6 may carry brackets or a zone id); undefined when it is not one. */
export function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (!ipaddr.isValid(bare)) return undefined;
  // isValid accepts legacy IPv4 forms ("127.1", "0x7f.0.0.1"); only the four-part decimal form is an address here.
  if (!bare.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(bare)) return undefined;
  return ipaddr.parse(bare);
}

/** The rule that refuses this address by default, or undefined for public unicast. */
export function restrictedRange(address: ipaddr.IPv4 | ipaddr.IPv6): AddressRule | undefined {
  if (address instanceof ipaddr.IPv4) return parsedV4.find(([cidr]) => address.match(cidr))?.[1];
  const named = parsedV6.find(([cidr]) => address.match(cidr))?.[1];
  if (named) return named;
  return address.match(GLOBAL_UNICAST_V6) ? undefined : 'reserved';
}

/** The address as people read it: an IPv4-mapped IPv6 address also shows its IPv4 form. */
export function describeAddress(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress()) return `${address.toString()} (${address.toIPv4Address().toString()})`;
  return address.toString();
}

/** Human wording for each rule, used in refusal messages. */
export const RULE_WORDING: Record<AddressRule, string> = {
  unspecified: 'an unspecified ("this network") address',
  loopback: 'a loopback address',
  private: 'a private-network address',
  'link-local': 'a link-local address (the cloud metadata service lives there)',
  cgnat: 'a carrier-grade NAT (100.64.0.0/10) address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  documentation: 'a documentation-only address',
  reserved: 'a reserved address',
  'ipv4-mapped': 'an IPv4-mapped IPv6 address',
  'ipv4-compatible': 'an IPv4-compatible IPv6 address',
  nat64: 'a NAT64 address (it can reach any IPv4 address)',
  '6to4': 'a 6to4 address (it embeds an IPv4 address)',
  teredo: 'a Teredo address (it embeds an IPv4 address)',
  'cloud-platform': "a cloud platform's own endpoint (Azure's WireServer, which serves a VM's configuration)",
};

/** The operator's exceptions (REGISTRY_FETCH_ALLOW), parsed once. */
export class AllowList {
  private constructor(
    private readonly hosts: ReadonlySet<string>,
    private readonly ranges: readonly Cidr[],
    /** The list as given, for messages and logs. */
    readonly source: readonly string[],
  ) {}

  static readonly EMPTY = new AllowList(new Set(), [], []);

  /**
   * Parses "host, 10.1.2.3, 192.168.0.0/16, [::1], fd00::/8". Throws an Error naming the first
   * item that is none of those, so configuration can report it.
   */
  static parse(text: string | readonly string[]): AllowList {
    const items = (typeof text === 'string' ? text.split(',') : text).map((s) => s.trim()).filter(Boolean);
    const hosts = new Set<string>();
    const ranges: Cidr[] = [];
    for (const item of items) {
      const slash = item.indexOf('/');
      if (slash >= 0 && /^[\[\]0-9a-f:.]+\/[^/]*$/i.test(item)) {
        const address = parseAddress(item.slice(0, slash));
        const bits = Number(item.slice(slash + 1));
        const max = address?.kind() === 'ipv4' ? 32 : 128;
        if (!address || !/^\d{1,3}$/.test(item.slice(slash + 1)) || bits > max) {
          throw new Error(`"${item}" is not a CIDR range (like 10.0.0.0/8 or fd00::/8)`);
        }
        ranges.push([address, bits]);
        continue;
      }
      const address = parseAddress(item);
      if (address) {
        ranges.push([address, address.kind() === 'ipv4' ? 32 : 128]);
        continue;
      }
      const host = normaliseHost(item);
      if (!/^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/.test(host)) {
        throw new Error(`"${item}" is not a host name, an IP address or a CIDR range`);
      }
      hosts.add(host);
    }
    return new AllowList(hosts, ranges, items);
  }

  get isEmpty(): boolean {
    return this.hosts.size === 0 && this.ranges.length === 0;
  }

  /** The host name is listed: every address it resolves to is accepted. */
  allowsHost(host: string): boolean {
    return this.hosts.has(normaliseHost(host));
  }

  /** The address is inside a listed address or range (IPv4-mapped IPv6 also matches its IPv4 form). */
  allowsAddress(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
    const forms: (ipaddr.IPv4 | ipaddr.IPv6)[] = [address];
    if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress()) forms.push(address.toIPv4Address());
    return forms.some((form) => this.ranges.some(([base, bits]) => base.kind() === form.kind() && form.match(base, bits)));
  }
}

/**
 * Host names compare without case and without a trailing dot ("Example.COM." is example.com), and
 * a name written in Unicode as its ASCII (IDNA) form, the form a URL's host name has ("Bücher.example"
 * is xn--bcher-kva.example): REGISTRY_FETCH_ALLOW refused such a name as "not a host name".
 */
export function normaliseHost(host: string): string {
  const ascii = NON_ASCII.test(host) ? domainToASCII(host) || host : host;
  return ascii.toLowerCase().replace(/\.$/, '');
}
const NON_ASCII = /[^\u0000-\u007f]/;
