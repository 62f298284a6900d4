import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** IPv6 global unicast (RFC 4291 section 2.4): whatever lies outside it is no address a public server has. */
const globalUnicast = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * The address as it will be reached: an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is the IPv4
 * address it maps, so it is refused or allowed as that address is. A zone (`fe80::1%eth0`) is
 * dropped: only link-local addresses carry one, and those are refused.
 */
export function parsedAddress(address: string): Address | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!ipaddr.isValid(bare)) return undefined;
  const parsed = ipaddr.parse(bare);
  return parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress() ? parsed.toIPv4Address() : parsed;
}

/**
 * Why an address is no place to send a request to, or undefined when it is a public unicast
 * address. ipaddr.js names the special ranges (IANA's special-purpose registries): loopback,
 * linkLocal, private (RFC 1918), uniqueLocal (fc00::/7), carrierGradeNat (100.64.0.0/10),
 * unspecified, multicast, broadcast, reserved and the rest. Only `unicast` passes, and for IPv6
 * only within 2000::/3: a range nobody listed is refused rather than reached.
 */
export function refusedRange(address: Address): string | undefined {
  const range = address.range();
  if (range !== 'unicast') return range;
  if (address.kind() === 'ipv6' && !address.match(globalUnicast)) return 'reserved';
  return undefined;
}

/**
 * TESSERA_EGRESS_ALLOW compiled: hostnames (matched whole, case-insensitively, against the URL's
 * host), and addresses or CIDR ranges (matched against the host when it is an address, and against
 * every address a hostname resolves to).
 */
export class EgressAllowList {
  private readonly hosts = new Set<string>();
  private readonly ranges: [Address, number][] = [];

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const trimmed = entry.trim().toLowerCase();
      if (trimmed === '') continue;
      if (ipaddr.isValidCIDR(trimmed)) {
        const [network, bits] = ipaddr.parseCIDR(trimmed);
        // A mapped range (::ffff:10.0.0.0/104) holds the IPv4 addresses it maps, as addresses are compared mapped.
        this.ranges.push(network instanceof ipaddr.IPv6 && network.isIPv4MappedAddress() && bits >= 96 ? [network.toIPv4Address(), bits - 96] : [network, bits]);
        continue;
      }
      const address = parsedAddress(trimmed);
      if (address) this.ranges.push([address, address.kind() === 'ipv4' ? 32 : 128]);
      else this.hosts.add(trimmed.replace(/\.$/, ''));
    }
  }

  /** The URL host is named: by its hostname, or, for an address, by an address or range holding it. */
  namesHost(host: string): boolean {
    const address = parsedAddress(host);
    return address ? this.holds(address) : this.hosts.has(host.toLowerCase().replace(/\.$/, ''));
  }

  /** The address lies in an address or range of the list. */
  holds(address: Address): boolean {
    return this.ranges.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));
  }
}
