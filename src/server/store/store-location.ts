// Where the mail lives, from startServer's `store` option (`mailroom serve
// --store`, `MAILROOM_STORE`): `memory` (the default: this process only) or a
// Redis URL, `redis://[user:password@]host:port/db` or `rediss://` for TLS,
// shared by every server given the same URL. `?prefix=name` puts the keys
// under another prefix than `mailroom`, so several services (or test runs)
// can share one Redis database.
import { withoutCredentials } from '../../contract/url-credentials.js';
import { expectedError } from '../../contract/validation.js';

export type StoreLocation = { readonly kind: 'memory' } | { readonly kind: 'redis'; readonly url: string; readonly prefix: string };

export const MEMORY_STORE: StoreLocation = Object.freeze({ kind: 'memory' });
const WHAT = '"memory" or a Redis URL such as "redis://127.0.0.1:6379/0" (rediss:// for TLS; ?prefix=name for another key prefix than mailroom)';

/** A Redis URL as logs and refusals may show it: no password, no prefix. */
export function describeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.search = '';
    return `Redis at ${withoutCredentials(parsed.href)}`;
  } catch {
    return 'Redis';
  }
}

export function parseStoreLocation(value: unknown): StoreLocation {
  if (value === undefined || value === 'memory') return MEMORY_STORE;
  if (typeof value !== 'string') throw expectedError('store', WHAT, value);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw expectedError('store', WHAT, value);
  }
  if ((url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '') throw expectedError('store', WHAT, value);
  if (url.pathname !== '' && url.pathname !== '/' && !/^\/(?:[0-9]|1[0-5])$/.test(url.pathname)) {
    throw expectedError('store', `${WHAT}, with a database number from 0 to 15 after the port`, value);
  }
  const prefix = url.searchParams.get('prefix') ?? 'mailroom';
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(prefix)) throw expectedError('store', `${WHAT}; the prefix of letters, digits and . _ : - only`, value);
  url.search = '';
  return Object.freeze({ kind: 'redis', url: url.toString(), prefix });
}
