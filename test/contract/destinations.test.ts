// The address rules the webhooks and the link checker share
// (src/contract/destinations.ts): which addresses are never reached, which
// are private, in every spelling the URL parser and DNS hand over.
import { describe, expect, it } from 'vitest';
import { AllowList, addressKind, allowEntryProblem, hostKind } from '../../src/contract/destinations.js';

describe('an address', () => {
  it('is never reached when link-local or a cloud metadata or host endpoint, its embedded IPv4 unwrapped first', () => {
    for (const address of [
      '169.254.0.1',
      '169.254.170.2',
      '100.100.100.200',
      '168.63.129.16',
      'fe80::1',
      'fe80::1%eth0',
      'fd00:ec2::254',
      'fd00:ec2::23',
      'fd20:ce::254',
      '::ffff:169.254.169.254',
      '::ffff:a9fe:a9fe',
      '::169.254.169.254',
      '::a9fe:a9fe',
      '64:ff9b::a9fe:a9fe',
      '::ffff:0:a9fe:a9fe',
    ]) {
      expect(addressKind(address), address).toBe('never');
    }
    expect(hostKind('METADATA.google.internal.')).toBe('never');
  });

  it('is private when loopback, RFC 1918, CGNAT, unique-local or unspecified, and public otherwise', () => {
    for (const address of [
      '127.0.0.1',
      '127.9.9.9',
      '10.1.2.3',
      '172.31.0.1',
      '192.168.1.1',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fd12::1',
      '::ffff:7f00:1',
    ]) {
      expect(addressKind(address), address).toBe('private');
    }
    for (const address of ['8.8.8.8', '172.32.0.1', '100.128.0.1', '2001:db8::1', '64:ff9b::808:808']) expect(addressKind(address), address).toBe('public');
    expect(hostKind('app.test')).toBeUndefined();
  });
});

describe('an allow list', () => {
  it('matches names in any case and with a trailing dot, addresses in any spelling, and CIDRs', () => {
    const allow = new AllowList(['App.Test', '127.0.0.1', '10.0.0.0/8']);
    expect([allow.has('app.test.'), allow.has('::ffff:127.0.0.1'), allow.hasAddress('10.200.0.1'), allow.has('127.0.0.2'), allow.has('other.test')]).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
  });

  it('takes no entry that is not a host, an address or a CIDR, nor one that is never reached', () => {
    expect(allowEntryProblem('hooks.internal')).toBeUndefined();
    expect(allowEntryProblem('fd00::/8')).toBeUndefined();
    expect(allowEntryProblem('a host')).toBe('not a host name, an address or a CIDR');
    for (const entry of ['169.254.169.254', '169.254.0.0/16', 'fe80::/10', 'metadata.google.internal', '::ffff:169.254.169.254']) {
      expect(allowEntryProblem(entry), entry).toBe('link-local or a cloud metadata address, which is never a destination');
    }
  });
});
