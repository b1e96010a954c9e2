// Where a webhook may post. Loopback and private addresses stay allowed by
// default (the app under test lives there); the cloud metadata service is
// not, since a token holder's webhook there could read the host's cloud
// credentials through the delivery log. `webhookAllow` (hosts, or CIDRs)
// narrows destinations further on a shared server.
//
// Two checks: the URL's host as written, at registration (`refusal`), and
// the address a name resolves to, at each connection the sender opens
// (`addressRefusal`, through sender.ts's checked lookup), so a name that
// resolves to the metadata service is refused too, rebinding included.
import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** Refused unless listed in `webhookAllow`: AWS/GCP/Azure's metadata address, IPv4 and AWS's IPv6. */
export const METADATA_HOSTS: readonly string[] = ['169.254.169.254', 'fd00:ec2::254', 'metadata.google.internal'];

export interface DestinationPolicy {
  /** The reason `url` may not be a webhook's destination, or undefined. */
  refusal(url: string): string | undefined;
  /** The reason `host` may not be reached at `address`, what it resolved to, or undefined. */
  addressRefusal(host: string, address: string): string | undefined;
}

/** The error a refused resolved address fails the connection with: the attempt's reason is `destination`, not retried. */
export const DESTINATION_REFUSED = 'EMAILROOM_DESTINATION';

/** Whether `entry` is a CIDR (`10.0.0.0/8`, `fd00::/8`). */
function parseCidr(entry: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const match = /^(.+)\/(\d{1,3})$/.exec(entry);
  if (!match) return undefined;
  const version = isIP(match[1]!);
  const prefix = Number(match[2]);
  if (version === 0 || prefix > (version === 4 ? 32 : 128)) return undefined;
  return { address: match[1]!, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** Whether `entry` is a host name, an address or a CIDR `webhookAllow` takes. */
export function isAllowEntry(entry: string): boolean {
  return parseCidr(entry) !== undefined || isIP(entry) !== 0 || /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(entry);
}

export function destinationPolicy(allow: readonly string[]): DestinationPolicy {
  const blocks = new BlockList();
  const names = new Set<string>();
  for (const entry of allow) {
    const cidr = parseCidr(entry);
    if (cidr) blocks.addSubnet(cidr.address, cidr.prefix, cidr.family);
    else if (isIP(entry) !== 0) blocks.addAddress(entry, isIP(entry) === 4 ? 'ipv4' : 'ipv6');
    else names.add(entry.toLowerCase());
  }
  const listed = (host: string): boolean => {
    const version = isIP(host);
    if (version !== 0) return blocks.check(host, version === 4 ? 'ipv4' : 'ipv6');
    return names.has(host);
  };
  return {
    refusal(url) {
      let host: string;
      try {
        host = new URL(url).hostname.toLowerCase();
      } catch {
        return undefined; // the URL's own check says what is wrong with it
      }
      if (host.startsWith('[')) host = host.slice(1, -1);
      if (allow.length > 0) {
        return listed(host) ? undefined : `${host} is not among the destinations this server allows (--webhook-allow ${allow.join(', ')})`;
      }
      const metadata = METADATA_HOSTS.includes(host) || isMetadataAddress(host);
      return metadata ? `${host} is a cloud metadata address, refused as a webhook destination (list it with --webhook-allow to allow it)` : undefined;
    },
    addressRefusal(host, address) {
      const name = host.toLowerCase();
      const version = isIP(address);
      const family = version === 6 ? 'ipv6' : 'ipv4';
      if (blocks.check(address, family)) return undefined; // listed by address or CIDR
      if (isMetadataAddress(address)) {
        return `${name} resolved to ${address}, a cloud metadata address, refused as a webhook destination (list the address with --webhook-allow to allow it)`;
      }
      if (allow.length > 0 && !names.has(name)) {
        return `${name} resolved to ${address}, which is not among the destinations this server allows (--webhook-allow ${allow.join(', ')})`;
      }
      return undefined;
    },
  };
}

/**
 * A `lookup` for `net.connect` that resolves with `resolve` (DNS by
 * default; tests give their own) and refuses, before any connection, a
 * name whose address the policy refuses: the connection fails with
 * DESTINATION_REFUSED naming the name, the address and the policy.
 */
export function checkedLookup(policy: DestinationPolicy, resolve: LookupFunction = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, found) => {
      if (error) return callback(error, '', 0);
      const addresses = (Array.isArray(found) ? found : [{ address: String(found), family: isIP(String(found)) }]).filter((entry) => entry.address);
      for (const { address } of addresses) {
        const refused = policy.addressRefusal(hostname, address);
        if (refused) return callback(Object.assign(new Error(refused), { code: DESTINATION_REFUSED }), '', 0);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} resolved to no address`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

/** The metadata addresses in any spelling the URL parser leaves (`::ffff:a9fe:a9fe` is checked as 169.254.169.254). */
const METADATA_ADDRESSES = new BlockList();
METADATA_ADDRESSES.addAddress('169.254.169.254', 'ipv4');
METADATA_ADDRESSES.addAddress('fd00:ec2::254', 'ipv6');

function isMetadataAddress(host: string): boolean {
  const version = isIP(host);
  return version !== 0 && METADATA_ADDRESSES.check(host, version === 4 ? 'ipv4' : 'ipv6');
}
