// `expect(inbox).toReceiveMail()` for Vitest. What the matcher does and
// every word of its failure text come from the core (runner/matcher.ts).
import { expect, type MatcherState } from 'vitest';
import type { MailFilter } from '../inbox/filter.js';
import type { Inbox } from '../inbox/inbox.js';
import { matchReceiveMail, receiveMailFailure, type ReceiveMailOptions } from '../runner/matcher.js';
import type { MailroomTestOptions } from '../runner/test-options.js';

/** Options of `toReceiveMail`: `timeout` for the positive form, `within` for `.not`. */
export type ToReceiveMailOptions = ReceiveMailOptions;

/**
 * `await expect(inbox).toReceiveMail(filter?, { timeout })` waits for a new
 * matching mail; `.not.toReceiveMail(filter?, { within })` waits out a quiet
 * period. It uses no per-test state, so Vitest's global `expect` and the test
 * context's `expect` (the one to use in `test.concurrent`) both work.
 */
async function toReceiveMail(this: MatcherState, received: unknown, filter?: MailFilter, options?: ToReceiveMailOptions) {
  const result = await matchReceiveMail(received, filter, options, { isNot: this.isNot });
  // No `actual`/`expected`: Vitest would print them as a diff of two
  // unrelated strings; the message already has both lines.
  return { pass: result.pass, message: () => receiveMailFailure(this, filter, result) };
}

expect.extend({ toReceiveMail });

export { expect };

/**
 * Named by the compiler when `toReceiveMail` is called on something that is
 * not an `Inbox`: "The 'this' context of type 'Assertion<number>' is not
 * assignable to method's 'this' of type 'ToReceiveMailExpectsAnInbox'".
 */
export interface ToReceiveMailExpectsAnInbox {
  readonly 'toReceiveMail is only for an Inbox: the `inbox` fixture or the result of createInbox()': never;
}

/**
 * `toReceiveMail` on anything but an Inbox: still a function, since Vitest's
 * declarations take `Parameters<>` of every matcher (a project compiled with
 * `skipLibCheck: false` checks that), but one no assertion can be the `this` of.
 */
type ToReceiveMailOnSomethingElse = (this: ToReceiveMailExpectsAnInbox, filter?: MailFilter, options?: ToReceiveMailOptions) => Promise<void>;

declare module 'vitest' {
  // The parameter must be declared as Vitest declares it (`T = any`).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  interface Matchers<T = any> {
    /**
     * Waits for a new mail matching `filter` (any mail when omitted) at
     * the inbox; with `.not`, waits out `within` ms (5 s) and fails if one
     * arrives. The budget defaults to the `mailroom.timeout` option (30 s),
     * and is cut short before the test's own timeout.
     */
    toReceiveMail: [T] extends [Inbox] ? (filter?: MailFilter, options?: ToReceiveMailOptions) => Promise<void> : ToReceiveMailOnSomethingElse;
  }
  interface TaskMeta {
    /** Set by the `inbox` fixture. */
    mailroom?: { readonly address: string };
  }
  interface ProvidedContext {
    /** Options for every `inbox` fixture, e.g. `project.provide('mailroom', { apiURL })` in a global setup. */
    mailroom?: MailroomTestOptions;
  }
}
