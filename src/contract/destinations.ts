// Where a request the package makes on a mail's or a caller's behalf may go:
// the webhooks (a token holder names the URL) and the link checker (a mail
// names it, and anyone can send mail). Both refuse the same addresses for
// good, and both name the exceptions a server allows the same way, so the
// rules live here once, where both halves may import them.
//
// Three kinds of address:
// - `never`: link-local (169.254.0.0/16, fe80::/10) and the clouds'
//   metadata and host endpoints. Nothing a test talks to lives there, and a
//   request there can read the host's cloud credentials.
// - `private`: loopback, RFC 1918, CGNAT, unique-local, the unspecified
//   address. The app under test usually lives there, and so does everything
//   else on the server's network.
// - `public`: the rest.
// An address is classified after unwrapping the IPv4 it embeds (IPv4-mapped
// `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`), so
// no IPv6 spelling of a refused IPv4 address gets past.
//
// An address is checked twice: as written in the URL (an IP literal never
// goes through a name lookup) and as a name resolves, at each connection,
// through `checkedLookup`, so a name pointed at a refused address (DNS
// rebinding included) is never connected to.
import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export type AddressKind = 'never' | 'private' | 'public';

/** The error a refused resolved address fails the connection with. */
export const DESTINATION_REFUSED = 'EMAILROOM_DESTINATION';

/** Names of a metadata service, refused before they are resolved (they resolve to a `never` address anyway). */
const NEVER_NAMES: ReadonlySet<string> = new Set(['metadata.google.internal']);

const NEVER = new BlockList();
NEVER.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local: AWS, Azure, GCP, OCI metadata, ECS task credentials (169.254.170.2), the AWS DNS at .253
NEVER.addAddress('100.100.100.200', 'ipv4'); // Alibaba Cloud's metadata (inside CGNAT, so checked before it)
NEVER.addAddress('168.63.129.16', 'ipv4'); // Azure's host endpoint (WireServer)
NEVER.addSubnet('fe80::', 10, 'ipv6'); // link-local
NEVER.addSubnet('fd00:ec2::', 32, 'ipv6'); // AWS's IPv6 metadata (fd00:ec2::254) and DNS
NEVER.addAddress('fd20:ce::254', 'ipv6'); // GCP's IPv6 metadata

const PRIVATE = new BlockList();
PRIVATE.addSubnet('0.0.0.0', 8, 'ipv4'); // "this network": 0.0.0.0 connects to the host itself
PRIVATE.addSubnet('10.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('100.64.0.0', 10, 'ipv4'); // CGNAT, where some VPNs and clouds put hosts
PRIVATE.addSubnet('127.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('172.16.0.0', 12, 'ipv4');
PRIVATE.addSubnet('192.168.0.0', 16, 'ipv4');
PRIVATE.addAddress('::', 'ipv6');
PRIVATE.addAddress('::1', 'ipv6');
PRIVATE.addSubnet('fc00::', 7, 'ipv6'); // unique-local

type Family = 'ipv4' | 'ipv6';

/** The eight 16-bit groups of an IPv6 address (valid, as `isIP` said; a `%zone` is dropped). */
function ipv6Groups(address: string): number[] {
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const front = part(head);
  const back = part(tail);
  return tail === undefined ? front : [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/**
 * The address as it is classified: an IPv4 address embedded in an IPv6 one
 * unwrapped (`::ffff:a9fe:a9fe`, `::169.254.169.254` and
 * `64:ff9b::a9fe:a9fe` are all 169.254.169.254), anything else as given
 * (an IPv6 zone dropped). Undefined for what is not an IP address.
 */
export function normalizeAddress(address: string): { readonly address: string; readonly family: Family } | undefined {
  const version = isIP(address);
  if (version === 4) return { address, family: 'ipv4' };
  if (version !== 6) return undefined;
  const g = ipv6Groups(address);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const v4 = () => ({ address: [g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff].join('.'), family: 'ipv4' as const });
  if (zeros(0, 5) && g[5] === 0xffff) return v4(); // IPv4-mapped
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return v4(); // IPv4-translated (SIIT)
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return v4(); // NAT64's well-known prefix
  if (zeros(0, 6) && !(g[6] === 0 && g[7]! <= 1)) return v4(); // IPv4-compatible (not :: or ::1)
  return { address: address.replace(/%.*$/, '').toLowerCase(), family: 'ipv6' };
}

/** `never`, `private` or `public`, for an IP address in any spelling `isIP` takes. */
export function addressKind(address: string): AddressKind {
  const normal = normalizeAddress(address);
  if (!normal) return 'public';
  if (NEVER.check(normal.address, normal.family)) return 'never';
  return PRIVATE.check(normal.address, normal.family) ? 'private' : 'public';
}

/** A URL's host as the checks read it: lowercase, without IPv6 brackets or a trailing dot. */
export function hostOf(url: string): string | undefined {
  try {
    return bareHost(new URL(url).hostname);
  } catch {
    return undefined;
  }
}

function bareHost(host: string): string {
  const lower = host.toLowerCase();
  return (lower.startsWith('[') ? lower.slice(1, -1) : lower).replace(/\.$/, '');
}

/** The kind of a host as written: an address's own kind; a name only when it names a metadata service (otherwise its addresses decide). */
export function hostKind(host: string): AddressKind | undefined {
  const bare = bareHost(host);
  if (isIP(bare) !== 0) return addressKind(bare);
  return NEVER_NAMES.has(bare) ? 'never' : undefined;
}

/** A host as a refusal names it: `::a9fe:a9fe (169.254.169.254)` when it embeds the IPv4 address it was checked as. */
export function shownHost(host: string): string {
  const normal = normalizeAddress(host);
  return normal && normal.address !== host.toLowerCase() ? `${host} (${normal.address})` : host;
}

/** `10.0.0.0/8` or `fd00::/8` as its parts, or undefined when `entry` is no CIDR. */
function parseCidr(entry: string): { readonly address: string; readonly prefix: number; readonly family: Family } | undefined {
  const match = /^(.+)\/(\d{1,3})$/.exec(entry);
  if (!match) return undefined;
  const version = isIP(match[1]!);
  const prefix = Number(match[2]);
  if (version === 0 || prefix > (version === 4 ? 32 : 128)) return undefined;
  return { address: match[1]!, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

const HOST_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i;

/**
 * What is wrong with an entry of an allow list (`--webhook-allow`,
 * `--link-check-allow`), or undefined: it must be a host name, an address
 * or a CIDR, and not a `never` one, which no list can open.
 */
export function allowEntryProblem(entry: string): string | undefined {
  const cidr = parseCidr(entry);
  const address = cidr?.address ?? (isIP(entry) !== 0 ? entry : undefined);
  if (address === undefined && !HOST_NAME.test(entry)) return 'not a host name, an address or a CIDR';
  if ((address !== undefined && addressKind(address) === 'never') || NEVER_NAMES.has(bareHost(entry))) {
    return 'link-local or a cloud metadata address, which is never a destination';
  }
  return undefined;
}

/** A list of host names, addresses and CIDRs, asked about a host as written or an address it resolved to. */
export class AllowList {
  readonly entries: readonly string[];
  readonly #names = new Set<string>();
  readonly #blocks = new BlockList();

  constructor(entries: readonly string[]) {
    this.entries = entries;
    for (const entry of entries) {
      const cidr = parseCidr(entry);
      const normal = normalizeAddress(entry);
      if (cidr) this.#blocks.addSubnet(cidr.address, cidr.prefix, cidr.family);
      else if (normal) this.#blocks.addAddress(normal.address, normal.family);
      else this.#names.add(bareHost(entry));
    }
  }

  get empty(): boolean {
    return this.entries.length === 0;
  }

  /** Whether the name (as written, any case, a trailing dot or none) is listed. */
  hasName(host: string): boolean {
    return this.#names.has(bareHost(host));
  }

  /** Whether the address is listed, or inside a listed CIDR, in its own spelling or with its embedded IPv4 unwrapped. */
  hasAddress(address: string): boolean {
    const normal = normalizeAddress(address);
    if (!normal) return false;
    const version = isIP(address);
    return this.#blocks.check(normal.address, normal.family) || (version === 6 && this.#blocks.check(address.replace(/%.*$/, ''), 'ipv6'));
  }

  /** Whether the host as written (a name or an address) is listed. */
  has(host: string): boolean {
    const bare = bareHost(host);
    return isIP(bare) !== 0 ? this.hasAddress(bare) : this.hasName(bare);
  }
}

/** The reason `host` may not be reached at `address` (what it resolved to), or undefined. */
export type AddressCheck = (host: string, address: string) => string | undefined;

/**
 * A `lookup` for `net.connect` that resolves with `resolve` (DNS by
 * default; tests give their own) and refuses, before any connection, a
 * name with an address `check` refuses: the connection fails with
 * DESTINATION_REFUSED and the check's reason.
 */
export function checkedLookup(check: AddressCheck, resolve: LookupFunction = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, found) => {
      if (error) return callback(error, '', 0);
      const addresses = (Array.isArray(found) ? found : [{ address: String(found), family: isIP(String(found)) }]).filter((entry) => entry.address);
      for (const { address } of addresses) {
        const refused = check(hostname, address);
        if (refused) return callback(Object.assign(new Error(refused), { code: DESTINATION_REFUSED }), '', 0);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} resolved to no address`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

/** Whether `error` (or its cause) is a connection checkedLookup refused. */
export function isDestinationRefused(error: unknown): boolean {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  return e?.code === DESTINATION_REFUSED || e?.cause?.code === DESTINATION_REFUSED;
}
