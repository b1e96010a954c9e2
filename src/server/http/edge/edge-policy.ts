// Who may talk to the HTTP server through a browser: the names it answers to
// (`Host`) and the web origins it takes requests from (`Origin`), fixed at
// start from where it listens, `allowedHosts` and `allowOrigins`.
//
// A server on loopback answers only loopback names (DNS rebinding: a page on
// evil.example whose name is made to resolve to 127.0.0.1 sends
// `Host: evil.example`). A server bound elsewhere checks names only when a
// list is given, and then also takes any IP literal (no name, nothing to
// rebind) - clients on a CI network often connect by address.
import { isIP } from 'node:net';
import { isLoopbackHost } from '../../base/loopback.js';

export interface EdgePolicy {
  /**
   * Host names (lower-cased, no port) the server answers to besides loopback
   * ones, or undefined when any name is taken (bound elsewhere, no list).
   */
  readonly hostNames: ReadonlySet<string> | undefined;
  /** Whether an IP literal that is not loopback is taken as a Host. */
  readonly anyAddress: boolean;
  /** Origins (`scheme://host[:port]`, normalized) allowed besides the server's own. */
  readonly origins: ReadonlySet<string>;
}

export interface EdgePolicyOptions {
  /** The address the server binds. */
  readonly host: string;
  readonly allowedHosts: readonly string[];
  readonly allowOrigins: readonly string[];
}

/** `scheme://host[:port]` as a browser writes it in `Origin` (default ports dropped, lower-cased). */
export function normalizeOrigin(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

export function edgePolicyOf(options: EdgePolicyOptions): EdgePolicy {
  const origins = new Set(options.allowOrigins.map((origin) => normalizeOrigin(origin)!));
  const onLoopback = isLoopbackHost(options.host);
  if (!onLoopback && options.allowedHosts.length === 0) return { hostNames: undefined, anyAddress: true, origins };
  const names = new Set(options.allowedHosts.map((name) => name.toLowerCase()));
  // Bound to a name or an address, that is a name the server answers to.
  names.add(options.host.toLowerCase());
  return { hostNames: names, anyAddress: !onLoopback, origins };
}

/** Whether `hostname` (as `URL.hostname` gives it: lower-cased, IPv6 in brackets) is one the server answers to. */
export function isAllowedHostName(hostname: string, policy: EdgePolicy): boolean {
  if (policy.hostNames === undefined) return true;
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isLoopbackHost(bare)) return true;
  if (policy.anyAddress && isIP(bare) !== 0) return true;
  return policy.hostNames.has(bare);
}
