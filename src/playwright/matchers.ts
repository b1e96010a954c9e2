// `expect(inbox).toReceiveMail()` for Playwright. What the matcher does and
// every word of its failure text come from the core's matchReceiveMail;
// this adds the hint line Playwright's own matchers print.
import type { ExpectMatcherState, MatcherReturnType } from '@playwright/test';
import type { MailFilter } from '../inbox/filter.js';
import type { Inbox } from '../inbox/inbox.js';
import { matchReceiveMail, type ReceiveMailOptions } from '../runner/matcher.js';

/** Options of `toReceiveMail`: `timeout` for the positive form, `within` for `.not`. */
export type ToReceiveMailOptions = Pick<ReceiveMailOptions, 'timeout' | 'within'>;

/**
 * The matchers on their own: `yourExpect.extend(mailroomMatchers)`, or
 * `mergeExpects(yourExpect, expect)` with this module's `expect`.
 *
 * Written as function properties, not methods, so TypeScript checks the
 * receiver strictly and `expect(42).toReceiveMail()` does not compile.
 */
export const mailroomMatchers = {
  toReceiveMail: async function toReceiveMail(this: ExpectMatcherState, received: Inbox, filter?: MailFilter, options?: ToReceiveMailOptions): Promise<MatcherReturnType> {
    const result = await matchReceiveMail(received, filter, options, { isNot: this.isNot });
    const hint = this.utils.matcherHint('toReceiveMail', 'inbox', filter === undefined ? '' : 'filter', { isNot: this.isNot, promise: this.promise });
    const expected = this.isNot ? `no mail matching ${result.expected}` : `mail matching ${result.expected}`;
    return {
      pass: result.pass,
      name: result.name,
      expected: result.expected,
      actual: result.actual,
      message: () => `${hint}\n\n${result.message()}\n\nExpected: ${expected}\nReceived: ${endSentence(result.actual)}`,
    };
  },
};

/**
 * Playwright reads every line of an error that ends like `file:12:34` as a
 * stack frame, and a list of mails ends with a time (`at 16:49:08`): a full
 * stop keeps the line in the message.
 */
function endSentence(text: string): string {
  return /[\d)]$/.test(text) ? `${text}.` : text;
}
