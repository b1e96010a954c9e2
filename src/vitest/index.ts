// mailroomjs/vitest: the `inbox` fixture and the `toReceiveMail` matcher for
// Vitest 4, a thin adapter over the core (mailroomjs/runner). Its names match
// mailroomjs/playwright's, so a test reads the same in both runners.

// Registers itself: `expect(mail).toMatchSnapshot()` stores `mail.snapshot()`.
import './mail-serializer.js';

export { test, it } from './fixtures.js';
export type { MailroomFixtures, MailroomOptions } from './fixtures.js';
export { expect } from './matchers.js';
export type {
  ToReceiveMailOptions,
  ToReceiveMailExpectsAnInbox,
  ToHaveBeenRetriedOptions,
  ToHaveBackedOffOptions,
  SmtpMatchersExpectAnInbox,
  ToHaveDeliveredOptions,
  ToHaveDeadLetteredOptions,
  WebhookMatchersExpectAWebhook,
  ToPassMailChecksOptions,
  ToPassMailChecksExpectsAMail,
} from './matchers.js';

// The types a test touches and the errors it catches, as every runner's adapter exports them.
export * from '../runner/test-surface.js';
