// The MCP SDK's own DNS-rebinding protection, given the same lists as the
// HTTP edge (http/edge/edge-policy.ts). The edge has refused a foreign
// Host or Origin before a request reaches /mcp; the SDK checks again, with
// exact `Host` and `Origin` strings, so the lists are spelled out here with
// the bound port.
import { isIP } from 'node:net';
import { parseHostHeader } from '../edge/host.js';
import { isAllowedHostName, type EdgePolicy } from '../edge/edge-policy.js';

export interface SdkRebindingOptions {
  readonly enableDnsRebindingProtection: true;
  readonly allowedHosts?: string[];
  readonly allowedOrigins: string[];
}

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

/** The transport options for a request to a server on `port` that named `host` (already let through by the edge). */
export function sdkRebindingOptions(policy: EdgePolicy, port: number, host: string | undefined): SdkRebindingOptions {
  const hostname = host === undefined ? undefined : parseHostHeader(host);
  const names = new Set<string>();
  if (policy.hostNames !== undefined) {
    for (const name of [...LOOPBACK, ...policy.hostNames]) names.add(isIP(name) === 6 ? `[${name}]` : name);
    // Any other loopback name or IP literal the edge took (127.0.0.2, an address when bound elsewhere).
    if (hostname !== undefined && isAllowedHostName(hostname, policy)) names.add(hostname);
  } else if (hostname !== undefined) names.add(hostname);
  const authorities = [...names].flatMap((name) => [name, `${name}:${port}`]);
  const origins = [...authorities.flatMap((authority) => [`http://${authority}`, `https://${authority}`]), ...policy.origins];
  return {
    enableDnsRebindingProtection: true,
    // Bound elsewhere without a list, any name is taken: the SDK checks none.
    ...(policy.hostNames !== undefined ? { allowedHosts: authorities } : {}),
    allowedOrigins: origins,
  };
}
