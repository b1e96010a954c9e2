// mailroomjs/jest: `useInbox()` and the `toReceiveMail` matcher for Jest 29
// and 30, a thin adapter over the core (mailroomjs/runner). Its matchers and
// their failure text are the ones of mailroomjs/vitest and
// mailroomjs/playwright. Importing it registers the matchers on the test
// file's `expect`; it also ships as CommonJS (dist/cjs/, scripts/build-cjs.ts)
// for ts-jest and babel-jest projects.
import './matchers.js';

export { useInbox } from './use-inbox.js';
export type { MailroomJestMatchers } from './matchers.js';
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

// The types a test touches and the errors it catches, as every runner's adapter exports them.
export * from '../runner/test-surface.js';
