// Checking an address a test gives, before any request. Fresh addresses are
// made in the contract layer (contract/fresh-address.ts), where the MCP tools
// can reach them too.
import { parseMailboxAddress } from '../contract/address.js';
import { DEFAULT_DOMAIN } from '../contract/defaults.js';
import { expectedError } from '../contract/validation.js';

/** Checks a caller-given address by the contract's rule, to name the mistake before any request. */
export function validateAddress(address: unknown): string {
  if (typeof address !== 'string') throw expectedError('address', `a string like "someone@${DEFAULT_DOMAIN}"`, address);
  if (!parseMailboxAddress(address)) {
    throw expectedError('address', `an address like "someone@${DEFAULT_DOMAIN}"`, address);
  }
  return address;
}
