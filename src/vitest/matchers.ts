// `expect(inbox).toReceiveMail()` and the other matchers for Vitest: the
// core's set for Jest-style `expect`s (runner/expect-matchers.ts) registered
// on Vitest's `expect`, and Vitest's `Matchers` pointed at its types.
import { expect } from 'vitest';
import { mailroomMatchers, type MailroomMatchers } from '../runner/expect-matchers.js';
import type { MailroomTestOptions } from '../runner/test-options.js';

expect.extend(mailroomMatchers);

export { expect };
export type {
  ToReceiveMailOptions,
  ToHaveBeenRetriedOptions,
  ToHaveBackedOffOptions,
  ToHaveDeliveredOptions,
  ToHaveDeadLetteredOptions,
  ToPassMailChecksOptions,
  ToReceiveMailExpectsAnInbox,
  SmtpMatchersExpectAnInbox,
  WebhookMatchersExpectAWebhook,
  ToPassMailChecksExpectsAMail,
} from '../runner/expect-matchers.js';

declare module 'vitest' {
  // The parameter must be declared as Vitest declares it (`T = any`).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  interface Matchers<T = any> extends MailroomMatchers<T> {}
  interface TaskMeta {
    /** Set by the `inbox` fixture. */
    mailroom?: { readonly address: string };
  }
  interface ProvidedContext {
    /** Options for every `inbox` fixture, e.g. `project.provide('mailroom', { apiURL })` in a global setup. */
    mailroom?: MailroomTestOptions;
  }
}
