// Where the link checker may go. A mail names the links, and anyone can
// send mail, so a link checker that follows every link is a way to probe
// the network of whoever runs it (the server, for the web UI's "Check links
// too"). The address rules are ../contract/destinations.ts's, shared with
// the webhooks:
// - link-local addresses and the clouds' metadata services: never;
// - loopback and private addresses: per `allowPrivate`, all of them in a
//   test process (its app runs on localhost), on the server only the hosts
//   `--link-check-allow` lists;
// - public addresses: always.
// Each hop is checked, redirects included: its host as written (an IP
// literal is connected to without a lookup) and, through the agent's
// checked lookup, every address its name resolves to, before connecting.
import type { LookupFunction } from 'node:net';
import { AllowList, addressKind, checkedLookup, hostKind, hostOf, type AddressKind } from '../contract/destinations.js';

export interface LinkDestinations {
  /** Whether the URL's host as written may not be reached (a name is checked again on the addresses it resolves to, by `lookup`). */
  refuses(url: string): boolean;
  /** The lookup for the agent's connections: a name with a refused address fails with DESTINATION_REFUSED before connecting. */
  readonly lookup: LookupFunction;
}

/** `resolve` stands in for DNS (tests). */
export function linkDestinations(allowPrivate: 'all' | readonly string[], resolve?: LookupFunction): LinkDestinations {
  const allow = allowPrivate === 'all' ? undefined : new AllowList(allowPrivate);
  const refused = (kind: AddressKind, listed: () => boolean): boolean => kind === 'never' || (kind === 'private' && allow !== undefined && !listed());
  return {
    refuses(url) {
      const host = hostOf(url);
      const kind = host === undefined ? 'never' : hostKind(host);
      return kind !== undefined && refused(kind, () => allow!.has(host!));
    },
    // The reason stays in the error for a debugger; the report says only that the policy refused the link.
    lookup: checkedLookup(
      (host, address) =>
        refused(addressKind(address), () => allow!.hasName(host) || allow!.hasAddress(address))
          ? `${host} resolved to ${address}, which the link checker's destination policy refuses`
          : undefined,
      resolve,
    ),
  };
}
