// `expect(inbox).toReceiveMail()` for Playwright. What the matcher does and
// every word of its failure text come from the core (runner/matcher.ts).
import type { ExpectMatcherState, MatcherReturnType } from '@playwright/test';
import type { MailFilter } from '../inbox/filter.js';
import type { Inbox } from '../inbox/inbox.js';
import { matchReceiveMail, receiveMailFailure, type ReceiveMailOptions } from '../runner/matcher.js';

/** Options of `toReceiveMail`: `timeout` for the positive form, `within` for `.not`. */
export type ToReceiveMailOptions = ReceiveMailOptions;

/**
 * The matchers on their own: `yourExpect.extend(mailroomMatchers)`, or
 * `mergeExpects(yourExpect, expect)` with this module's `expect`.
 *
 * Written as function properties, not methods, so TypeScript checks the
 * receiver strictly and `expect(42).toReceiveMail()` does not compile.
 */
export const mailroomMatchers = {
  toReceiveMail: async function toReceiveMail(
    this: ExpectMatcherState,
    received: Inbox,
    filter?: MailFilter,
    options?: ToReceiveMailOptions,
  ): Promise<MatcherReturnType> {
    const result = await matchReceiveMail(received, filter, options, { isNot: this.isNot });
    return { pass: result.pass, name: result.name, expected: result.expected, actual: result.actual, message: () => receiveMailFailure(this, filter, result) };
  },
};
