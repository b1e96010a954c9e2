// Fresh addresses that never collide: across workers, shards, machines,
// retries and repeated runs, whether a fixture or an agent's MCP call asks. The readable prefix is for people reading a
// report; uniqueness comes only from 80 random bits drawn from the OS's
// CSPRNG (a 3-character suffix collides within 100k draws; 80 bits need
// about 10^12 addresses for a one-in-a-million chance).
import { randomBytes } from 'node:crypto';
import { isDomainName } from './address.js';
import { DEFAULT_DOMAIN } from './defaults.js';
import { expectedError } from './validation.js';

/** Random bits in every fresh address. */
export const ADDRESS_RANDOM_BITS = 80;
/** The readable part is cut to this many characters. */
export const MAX_PREFIX_LENGTH = 32;
const DEFAULT_PREFIX = 'inbox';
// RFC 4648 base32, lowercased: letters and digits only, so the local part
// is valid unquoted everywhere and survives case-folding mail systems.
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

export interface FreshAddressOptions {
  /** Readable start of the local part, e.g. a test title. Sanitised and cut. */
  readonly prefix?: string | undefined;
  readonly domain: string;
  /** Source of random bytes; only tests replace it. */
  readonly randomBytes?: ((size: number) => Uint8Array) | undefined;
}

/** `signup-flow-k3x9…@mailroom.test`: a readable prefix and 80 random bits. */
export function freshAddress(options: FreshAddressOptions): string {
  const domain = normalizeDomain(options.domain);
  const prefix = sanitizePrefix(options.prefix ?? DEFAULT_PREFIX) || DEFAULT_PREFIX;
  const bytes = (options.randomBytes ?? randomBytes)(ADDRESS_RANDOM_BITS / 8);
  return `${prefix}-${base32(bytes)}@${domain}`;
}

/**
 * Lowercase ASCII letters and digits, runs of anything else as one `-`, at
 * most 32 characters, no leading or trailing `-`. Accents are folded first
 * so "Confirmação" reads as "confirmacao", not "confirma-o".
 */
export function sanitizePrefix(text: string): string {
  if (typeof text !== 'string') throw expectedError('prefix', 'a string', text);
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, MAX_PREFIX_LENGTH)
    .replace(/-+$/, '');
}

export function normalizeDomain(domain: unknown): string {
  const normalized = typeof domain === 'string' ? domain.trim().toLowerCase() : '';
  if (!isDomainName(normalized)) {
    throw expectedError('domain', `a host name like "${DEFAULT_DOMAIN}"`, domain);
  }
  return normalized;
}

function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}
