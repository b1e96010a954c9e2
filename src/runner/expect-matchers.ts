// The matchers as Jest's `expect.extend` takes them, for the two runners
// whose `expect` is Jest's own or a copy of it (Vitest, Jest): the same six
// functions, the same failure text, and the same types, so each adapter only
// calls `expect.extend(mailroomMatchers)` and points its runner's `Matchers`
// interface at `MailroomMatchers`. (Playwright's `expect` answers with more
// fields and adds a check of its own: src/playwright/matchers.ts.) What the
// matchers do and every word of their failure text come from matcher.ts,
// smtp-matchers.ts, webhook-matchers.ts and mail-checks-matcher.ts.
import type { WebhookEventType } from '../client/webhooks.js';
import type { MailFilter } from '../inbox/filter.js';
import type { Inbox } from '../inbox/inbox.js';
import type { Webhook } from '../inbox/webhooks.js';
import { mailChecksFailure, matchMailChecks, type CheckedMail, type PassMailChecksOptions } from './mail-checks-matcher.js';
import { matchReceiveMail, receiveMailFailure, type MatcherHintState, type ReceiveMailOptions } from './matcher.js';
import { matchBackedOff, matchRetried, smtpMatcherFailure, type BackedOffOptions, type RetriedOptions } from './smtp-matchers.js';
import { matchDeadLettered, matchDelivered, webhookMatcherFailure, type DeadLetteredOptions, type DeliveredOptions } from './webhook-matchers.js';

/** Options of `toReceiveMail`: `timeout` for the positive form, `within` for `.not`. */
export type ToReceiveMailOptions = ReceiveMailOptions;
/** Options of `toHaveBeenRetried`: `atLeast`, `atMost`, `within`, `from`. */
export type ToHaveBeenRetriedOptions = RetriedOptions;
/** Options of `toHaveBackedOff`: `minGap`, `firstRetryAfter`, `tolerance`, `within`, `from`. */
export type ToHaveBackedOffOptions = BackedOffOptions;
/** Options of `toHaveDelivered`: `attempts`, `count`, `within`. */
export type ToHaveDeliveredOptions = DeliveredOptions;
/** Options of `toHaveDeadLettered`: `type`, `reason`, `attempts`, `within`. */
export type ToHaveDeadLetteredOptions = DeadLetteredOptions;
/** Options of `toPassMailChecks`: the checks' options (`only`, `skip`, `links`, `html`, `size`) and `failOn`. */
export type ToPassMailChecksOptions = PassMailChecksOptions;

/** What a matcher's `this` offers in both runners: `isNot`, `promise` and `utils.matcherHint`. */
type State = MatcherHintState;

/**
 * What a matcher answers. No `actual`/`expected`: Vitest would print them as
 * a diff of two unrelated strings (Jest ignores them); the message already
 * has both lines.
 */
interface Answer {
  readonly pass: boolean;
  readonly message: () => string;
}

/**
 * `await expect(inbox).toReceiveMail(filter?, { timeout })` waits for a new
 * matching mail; `.not.toReceiveMail(filter?, { within })` waits out a quiet
 * period. It uses no per-test state, so any `expect` of the test works
 * (Vitest's test-context one in `test.concurrent`, Jest's global or
 * `@jest/globals` one).
 */
async function toReceiveMail(this: State, received: unknown, filter?: MailFilter, options?: ToReceiveMailOptions): Promise<Answer> {
  const result = await matchReceiveMail(received, filter, options, { isNot: this.isNot === true });
  return { pass: result.pass, message: () => receiveMailFailure(this, filter, result) };
}

/** The sender retried mail to the inbox `atLeast` (1) to `atMost` times; the failure prints the attempt timeline. */
async function toHaveBeenRetried(this: State, received: unknown, options?: ToHaveBeenRetriedOptions): Promise<Answer> {
  const result = await matchRetried(received, options, { isNot: this.isNot === true });
  return { pass: result.pass, message: () => smtpMatcherFailure(this, result) };
}

/** The sender backed off as a good one does (seeds 003, 004); the failure names each misstep and prints the timeline. */
async function toHaveBackedOff(this: State, received: unknown, options?: ToHaveBackedOffOptions): Promise<Answer> {
  const result = await matchBackedOff(received, options, { isNot: this.isNot === true });
  return { pass: result.pass, message: () => smtpMatcherFailure(this, result) };
}

/** The webhook delivered an event of `type` (in exactly `attempts` attempts); the failure prints the attempt timeline. */
async function toHaveDelivered(this: State, received: unknown, type?: WebhookEventType, options?: ToHaveDeliveredOptions): Promise<Answer> {
  const result = await matchDelivered(received, type, options, { isNot: this.isNot === true });
  return { pass: result.pass, message: () => webhookMatcherFailure(this, result, type) };
}

/** The webhook gave up on an event (of `type`, for `reason`, after `attempts`); the failure prints the attempt timeline. */
async function toHaveDeadLettered(this: State, received: unknown, options?: ToHaveDeadLetteredOptions): Promise<Answer> {
  const result = await matchDeadLettered(received, options, { isNot: this.isNot === true });
  return { pass: result.pass, message: () => webhookMatcherFailure(this, result) };
}

/** The mail passes its checks (`mail.check()`): no errors, or no warnings either with `failOn: 'warning'`. */
async function toPassMailChecks(this: State, received: unknown, options?: ToPassMailChecksOptions): Promise<Answer> {
  const result = await matchMailChecks(received, options, { isNot: this.isNot === true });
  return { pass: result.pass, message: () => mailChecksFailure(this, options, result) };
}

/** The six matchers, for `expect.extend` of Vitest or Jest. */
export const mailroomMatchers = Object.freeze({ toReceiveMail, toHaveBeenRetried, toHaveBackedOff, toHaveDelivered, toHaveDeadLettered, toPassMailChecks });

/**
 * Named by the compiler when `toReceiveMail` is called on something that is
 * not an `Inbox`: "The 'this' context of type 'Assertion<number>' is not
 * assignable to method's 'this' of type 'ToReceiveMailExpectsAnInbox'".
 */
export interface ToReceiveMailExpectsAnInbox {
  readonly 'toReceiveMail is only for an Inbox: the `inbox` fixture or the result of createInbox()': never;
}

/**
 * Named by the compiler when an SMTP matcher is called on something that is
 * not an `Inbox`, the same way as `ToReceiveMailExpectsAnInbox`.
 */
export interface SmtpMatchersExpectAnInbox {
  readonly 'toHaveBeenRetried and toHaveBackedOff are only for an Inbox: the `inbox` fixture or the result of createInbox()': never;
}

/**
 * Named by the compiler when a webhook matcher is called on something that
 * is not a `Webhook`, the same way as `ToReceiveMailExpectsAnInbox`.
 */
export interface WebhookMatchersExpectAWebhook {
  readonly 'toHaveDelivered and toHaveDeadLettered are only for a Webhook: what inbox.webhooks.add() returns': never;
}

/**
 * Named by the compiler when `toPassMailChecks` is called on something that
 * is not a mail, the same way as `ToReceiveMailExpectsAnInbox`.
 */
export interface ToPassMailChecksExpectsAMail {
  readonly 'toPassMailChecks is only for a Mail: what inbox.expectMail() returns': never;
}

/**
 * Each matcher on anything but what it takes: still a function, since
 * Vitest's declarations take `Parameters<>` of every matcher (a project
 * compiled with `skipLibCheck: false` checks that), but one no assertion can
 * be the `this` of.
 */
type OnSomethingElse<This, Args extends unknown[]> = (this: This, ...args: Args) => Promise<void>;

/**
 * The matchers' types, by what `expect` was given (`T`): each adapter's
 * augmentation of its runner's `Matchers` interface extends this, so
 * `expect(inbox).toReceiveMail()` types and `expect(42).toReceiveMail()`
 * does not compile, in both runners.
 */
export interface MailroomMatchers<T> {
  /**
   * Waits for a new mail matching `filter` (any mail when omitted) at
   * the inbox; with `.not`, waits out `within` ms (5 s) and fails if one
   * arrives. The budget defaults to the `mailroom.timeout` option (30 s),
   * and is cut short before the test's own timeout.
   */
  toReceiveMail: [T] extends [Inbox]
    ? (filter?: MailFilter, options?: ToReceiveMailOptions) => Promise<void>
    : OnSomethingElse<ToReceiveMailExpectsAnInbox, [filter?: MailFilter, options?: ToReceiveMailOptions]>;
  /**
   * The sender retried mail to the inbox at least `atLeast` (1) and at
   * most `atMost` times, watching the attempt log up to `within` ms.
   */
  toHaveBeenRetried: [T] extends [Inbox]
    ? (options?: ToHaveBeenRetriedOptions) => Promise<void>
    : OnSomethingElse<SmtpMatchersExpectAnInbox, [options?: ToHaveBeenRetriedOptions]>;
  /**
   * Every retry waited (`minGap`, the first the greylisting window), the
   * waits grew, nothing came back after a 5xx, and a 421 slowed it all down.
   */
  toHaveBackedOff: [T] extends [Inbox]
    ? (options?: ToHaveBackedOffOptions) => Promise<void>
    : OnSomethingElse<SmtpMatchersExpectAnInbox, [options?: ToHaveBackedOffOptions]>;
  /**
   * The webhook delivered an event of `type` (any type when omitted), in
   * exactly `attempts` attempts when given, watching its log up to
   * `within` ms; `.not` watches all of `within` (5 s).
   */
  toHaveDelivered: [T] extends [Webhook]
    ? (type?: WebhookEventType, options?: ToHaveDeliveredOptions) => Promise<void>
    : OnSomethingElse<WebhookMatchersExpectAWebhook, [type?: WebhookEventType, options?: ToHaveDeliveredOptions]>;
  /** The webhook gave up on an event (of `type`, for `reason`, after exactly `attempts`). */
  toHaveDeadLettered: [T] extends [Webhook]
    ? (options?: ToHaveDeadLetteredOptions) => Promise<void>
    : OnSomethingElse<WebhookMatchersExpectAWebhook, [options?: ToHaveDeadLetteredOptions]>;
  /**
   * The mail passes its checks (links, html, images, size, text): no
   * errors, or no warnings either with `failOn: 'warning'`. The failure
   * lists each problem and how to fix it. See docs/mail-checks.md.
   */
  toPassMailChecks: [T] extends [CheckedMail]
    ? (options?: ToPassMailChecksOptions) => Promise<void>
    : OnSomethingElse<ToPassMailChecksExpectsAMail, [options?: ToPassMailChecksOptions]>;
}
