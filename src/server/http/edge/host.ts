// `Host`: refused when it cannot be parsed (`400 invalid_request`, never a
// 500 further in) or names a host the server does not answer to (`403
// forbidden_host`: DNS rebinding, edge-policy.ts).
import { Refusal } from '../../../contract/refusal.js';
import { isAllowedHostName, type EdgePolicy } from './edge-policy.js';

/** The host name of a `Host` header value (lower-cased, IPv6 in brackets), or undefined when it is not one. */
export function parseHostHeader(value: string): string | undefined {
  // URL would take `a/b`, `a?b`, `a#b`, `u@a` as a path, query, fragment or user.
  if (value === '' || /[/?#@\\\s]/.test(value)) return undefined;
  try {
    return new URL(`http://${value}`).hostname;
  } catch {
    return undefined;
  }
}

export function refuseHost(host: string | undefined, policy: EdgePolicy): Refusal | undefined {
  // HTTP/1.0 may send none (node answers an HTTP/1.1 request without one itself); no browser does.
  if (host === undefined) return undefined;
  const hostname = parseHostHeader(host);
  if (hostname === undefined)
    return new Refusal(400, 'invalid_request', `Malformed Host header ${JSON.stringify(host)}: expected a name or address with an optional port`);
  if (isAllowedHostName(hostname, policy)) return undefined;
  return new Refusal(
    403,
    'forbidden_host',
    `Host ${JSON.stringify(host)} is not a name this server answers to: it takes localhost, 127.0.0.1 and [::1]${
      policy.hostNames && policy.hostNames.size > 0 ? ` and ${[...policy.hostNames].join(', ')}` : ''
    }. Start it with --allowed-host ${hostname} (startServer's allowedHosts) to reach it by that name`,
  );
}
