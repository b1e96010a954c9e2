// Where a webhook may post. Loopback and private addresses stay allowed by
// default (the app under test lives there); link-local addresses and the
// clouds' metadata services never are, listed or not, since a token
// holder's webhook there could read the host's cloud credentials through
// the delivery log. `webhookAllow` (hosts, addresses or CIDRs) narrows
// destinations further on a shared server. The address rules are
// ../../contract/destinations.ts's, shared with the link checker.
//
// Two checks: the URL's host as written, at registration (`refusal`), and
// the address a name resolves to, at each connection the sender opens
// (`addressRefusal`, through sender.ts's checked lookup), so a name that
// resolves to a refused address is refused too, rebinding included.
import { AllowList, addressKind, hostKind, hostOf, shownHost } from '../../contract/destinations.js';

export interface DestinationPolicy {
  /** The reason `url` may not be a webhook's destination, or undefined. */
  refusal(url: string): string | undefined;
  /** The reason `host` may not be reached at `address`, what it resolved to, or undefined. */
  addressRefusal(host: string, address: string): string | undefined;
}

export function destinationPolicy(allowed: readonly string[]): DestinationPolicy {
  const allow = new AllowList(allowed);
  const notListed = `not among the destinations this server allows (--webhook-allow ${allowed.join(', ')})`;
  return {
    refusal(url) {
      const host = hostOf(url);
      if (host === undefined) return undefined; // the URL's own check says what is wrong with it
      if (hostKind(host) === 'never') return `${shownHost(host)} is link-local or a cloud metadata address, never a webhook destination`;
      return allow.empty || allow.has(host) ? undefined : `${host} is ${notListed}`;
    },
    addressRefusal(host, address) {
      const name = host.toLowerCase();
      if (addressKind(address) === 'never') {
        return `${name} resolved to ${shownHost(address)}, a link-local or cloud metadata address, never a webhook destination`;
      }
      if (allow.empty || allow.hasAddress(address) || allow.hasName(name)) return undefined;
      return `${name} resolved to ${address}, which is ${notListed}`;
    },
  };
}
