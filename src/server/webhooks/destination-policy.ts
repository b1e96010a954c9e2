// Where a webhook may post. Loopback and private addresses stay allowed by
// default (the app under test lives there); the cloud metadata service is
// not, since a token holder's webhook there could read the host's cloud
// credentials through the delivery log. `webhookAllow` (hosts, or CIDRs)
// narrows destinations further on a shared server.
//
// The check is of the URL's host as written, at registration: a name that
// resolves to a refused address is not caught here (docs/security.md).
import { BlockList, isIP } from 'node:net';

/** Refused unless listed in `webhookAllow`: AWS/GCP/Azure's metadata address, IPv4 and AWS's IPv6. */
export const METADATA_HOSTS: readonly string[] = ['169.254.169.254', 'fd00:ec2::254', 'metadata.google.internal'];

export interface DestinationPolicy {
  /** The reason `url` may not be a webhook's destination, or undefined. */
  refusal(url: string): string | undefined;
}

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
