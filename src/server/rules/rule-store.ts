// Where the lab keeps each address's rules (rules.ts `AddressRules`). An
// interface, so the records can live elsewhere than this process; the
// memory store keeps the most recent addresses only, so a long-running
// server whose tests never cleared their rules does not grow without bound.
import type { AddressRules } from './rules.js';

export interface RuleStore {
  get(address: string): AddressRules | undefined;
  /** Stores `rules` for `address` (after a change the caller made to the record it got). */
  set(address: string, rules: AddressRules): void;
  /** Forgets the address; true when it had anything. */
  delete(address: string): boolean;
  /** True when the address has a record: the fast path every recipient takes. */
  has(address: string): boolean;
}

export const MAX_ADDRESSES_WITH_RULES = 100_000;

export class MemoryRuleStore implements RuleStore {
  readonly #byAddress = new Map<string, AddressRules>();
  readonly #maxAddresses: number;

  constructor(maxAddresses = MAX_ADDRESSES_WITH_RULES) {
    this.#maxAddresses = maxAddresses;
  }

  get(address: string): AddressRules | undefined {
    return this.#byAddress.get(address);
  }

  set(address: string, rules: AddressRules): void {
    if (!this.#byAddress.has(address) && this.#byAddress.size >= this.#maxAddresses) {
      const oldest = this.#byAddress.keys().next().value;
      if (oldest !== undefined) this.#byAddress.delete(oldest);
    }
    this.#byAddress.set(address, rules);
  }

  delete(address: string): boolean {
    return this.#byAddress.delete(address);
  }

  has(address: string): boolean {
    return this.#byAddress.has(address);
  }
}
