import { describe, expect, it } from 'vitest';
import { ADDRESS_RANDOM_BITS, freshAddress, MAX_PREFIX_LENGTH, sanitizePrefix } from '../../src/contract/fresh-address.js';
import { validateAddress } from '../../src/inbox/address.js';

describe('freshAddress', () => {
  it('is a readable prefix, a dash, 16 base32 characters (80 bits) and the domain', () => {
    const address = freshAddress({ prefix: 'Signup flow', domain: 'mailroom.test' });
    expect(address).toMatch(/^signup-flow-[a-z2-7]{16}@mailroom\.test$/);
    expect(ADDRESS_RANDOM_BITS).toBeGreaterThanOrEqual(80);
  });

  it('encodes every random bit: distinct bytes give distinct addresses', () => {
    const zeros = freshAddress({ domain: 'mailroom.test', randomBytes: (n) => new Uint8Array(n) });
    const ones = freshAddress({ domain: 'mailroom.test', randomBytes: (n) => new Uint8Array(n).fill(255) });
    const last = freshAddress({ domain: 'mailroom.test', randomBytes: (n) => Object.assign(new Uint8Array(n), { [n - 1]: 1 }) });
    expect(zeros).toBe('inbox-aaaaaaaaaaaaaaaa@mailroom.test');
    expect(ones).toBe('inbox-7777777777777777@mailroom.test');
    expect(last).toBe('inbox-aaaaaaaaaaaaaaab@mailroom.test');
  });

  it('does not repeat in 100 000 draws', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100_000; i++) seen.add(freshAddress({ prefix: 't', domain: 'mailroom.test' }));
    expect(seen.size).toBe(100_000);
  });

  it('gives a valid local part for any title', () => {
    const titles = ['', '   ', '!!!', 'Confirmação de e-mail', 'a'.repeat(500), 'Ünïcödé ✓ 日本語', 'x'.repeat(31) + '--y', 'TEST › signup › works (retry #2)'];
    for (const title of titles) {
      const address = freshAddress({ prefix: title, domain: 'Mailroom.Test' });
      const local = address.split('@')[0]!;
      expect(address).toBe(address.toLowerCase());
      expect(local.length).toBeLessThanOrEqual(64);
      expect(local).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(validateAddress(address)).toBe(address);
    }
  });
});

describe('sanitizePrefix', () => {
  it('folds accents, lowercases, turns runs of other characters into one dash, and cuts', () => {
    expect(sanitizePrefix('Confirmação de e-mail')).toBe('confirmacao-de-e-mail');
    expect(sanitizePrefix('  signup › works (retry #2) ')).toBe('signup-works-retry-2');
    expect(sanitizePrefix('a'.repeat(100))).toHaveLength(MAX_PREFIX_LENGTH);
    expect(sanitizePrefix('x'.repeat(31) + '-y')).toBe('x'.repeat(31));
    expect(sanitizePrefix('日本語')).toBe('');
  });
});

describe('validateAddress', () => {
  it('names a malformed address', () => {
    expect(() => validateAddress('no-at-sign')).toThrow('Expected `address` to be an address like "someone@mailroom.test", got "no-at-sign"');
    expect(() => validateAddress('a b@mailroom.test')).toThrow(TypeError);
    expect(() => validateAddress('a@-bad-.test')).toThrow(TypeError);
    expect(() => validateAddress(42)).toThrow('Expected `address` to be a string like "someone@mailroom.test", got 42');
  });
});
