// `expect(inbox).toReceiveMail()`, `toHaveBeenRetried()`, `toHaveBackedOff()`,
// and `expect(webhook).toHaveDelivered()` and `toHaveDeadLettered()` for
// Vitest. What the matchers do and every word of their failure text come
// from the core (runner/matcher.ts, runner/smtp-matchers.ts, runner/webhook-matchers.ts).
import { expect, type MatcherState } from 'vitest';
import type { MailFilter } from '../inbox/filter.js';
import type { Inbox } from '../inbox/inbox.js';
import type { Webhook } from '../inbox/webhooks.js';
import type { WebhookEventType } from '../client/webhooks.js';
import { matchReceiveMail, receiveMailFailure, type ReceiveMailOptions } from '../runner/matcher.js';
import { mailChecksFailure, matchMailChecks, type CheckedMail, type PassMailChecksOptions } from '../runner/mail-checks-matcher.js';
import { matchBackedOff, matchRetried, smtpMatcherFailure, type BackedOffOptions, type RetriedOptions } from '../runner/smtp-matchers.js';
import type { MailroomTestOptions } from '../runner/test-options.js';
import { matchDeadLettered, matchDelivered, webhookMatcherFailure, type DeadLetteredOptions, type DeliveredOptions } from '../runner/webhook-matchers.js';

/** Options of `toReceiveMail`: `timeout` for the positive form, `within` for `.not`. */
export type ToReceiveMailOptions = ReceiveMailOptions;
/** Options of `toHaveBeenRetried`: `atLeast`, `atMost`, `within`, `from`. */
export type ToHaveBeenRetriedOptions = RetriedOptions;
/** Options of `toHaveBackedOff`: `minGap`, `firstRetryAfter`, `tolerance`, `within`, `from`. */
export type ToHaveBackedOffOptions = BackedOffOptions;

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

/** The sender retried mail to the inbox `atLeast` (1) to `atMost` times; the failure prints the attempt timeline. */
async function toHaveBeenRetried(this: MatcherState, received: unknown, options?: ToHaveBeenRetriedOptions) {
  const result = await matchRetried(received, options, { isNot: this.isNot });
  return { pass: result.pass, message: () => smtpMatcherFailure(this, result) };
}

/** The sender backed off as a good one does (seeds 003, 004); the failure names each misstep and prints the timeline. */
async function toHaveBackedOff(this: MatcherState, received: unknown, options?: ToHaveBackedOffOptions) {
  const result = await matchBackedOff(received, options, { isNot: this.isNot });
  return { pass: result.pass, message: () => smtpMatcherFailure(this, result) };
}

/** Options of `toHaveDelivered`: `attempts`, `count`, `within`. */
export type ToHaveDeliveredOptions = DeliveredOptions;
/** Options of `toHaveDeadLettered`: `type`, `reason`, `attempts`, `within`. */
export type ToHaveDeadLetteredOptions = DeadLetteredOptions;

/** The webhook delivered an event of `type` (in exactly `attempts` attempts); the failure prints the attempt timeline. */
async function toHaveDelivered(this: MatcherState, received: unknown, type?: WebhookEventType, options?: ToHaveDeliveredOptions) {
  const result = await matchDelivered(received, type, options, { isNot: this.isNot });
  return { pass: result.pass, message: () => webhookMatcherFailure(this, result, type) };
}

/** The webhook gave up on an event (of `type`, for `reason`, after `attempts`); the failure prints the attempt timeline. */
async function toHaveDeadLettered(this: MatcherState, received: unknown, options?: ToHaveDeadLetteredOptions) {
  const result = await matchDeadLettered(received, options, { isNot: this.isNot });
  return { pass: result.pass, message: () => webhookMatcherFailure(this, result) };
}

/** Options of `toPassMailChecks`: the checks' options (`only`, `skip`, `links`, `html`, `size`) and `failOn`. */
export type ToPassMailChecksOptions = PassMailChecksOptions;

/** The mail passes its checks (`mail.check()`): no errors, or no warnings either with `failOn: 'warning'`. */
async function toPassMailChecks(this: MatcherState, received: unknown, options?: ToPassMailChecksOptions) {
  const result = await matchMailChecks(received, options, { isNot: this.isNot });
  return { pass: result.pass, message: () => mailChecksFailure(this, options, result) };
}

expect.extend({ toReceiveMail, toHaveBeenRetried, toHaveBackedOff, toHaveDelivered, toHaveDeadLettered, toPassMailChecks });

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

/**
 * Named by the compiler when an SMTP matcher is called on something that is
 * not an `Inbox`, the same way as `ToReceiveMailExpectsAnInbox`.
 */
export interface SmtpMatchersExpectAnInbox {
  readonly 'toHaveBeenRetried and toHaveBackedOff are only for an Inbox: the `inbox` fixture or the result of createInbox()': never;
}
type ToHaveBeenRetriedOnSomethingElse = (this: SmtpMatchersExpectAnInbox, options?: ToHaveBeenRetriedOptions) => Promise<void>;
type ToHaveBackedOffOnSomethingElse = (this: SmtpMatchersExpectAnInbox, options?: ToHaveBackedOffOptions) => Promise<void>;

/**
 * Named by the compiler when a webhook matcher is called on something that
 * is not a `Webhook`, the same way as `ToReceiveMailExpectsAnInbox`.
 */
export interface WebhookMatchersExpectAWebhook {
  readonly 'toHaveDelivered and toHaveDeadLettered are only for a Webhook: what inbox.webhooks.add() returns': never;
}
type ToHaveDeliveredOnSomethingElse = (this: WebhookMatchersExpectAWebhook, type?: WebhookEventType, options?: ToHaveDeliveredOptions) => Promise<void>;
type ToHaveDeadLetteredOnSomethingElse = (this: WebhookMatchersExpectAWebhook, options?: ToHaveDeadLetteredOptions) => Promise<void>;

/**
 * Named by the compiler when `toPassMailChecks` is called on something that
 * is not a mail, the same way as `ToReceiveMailExpectsAnInbox`.
 */
export interface ToPassMailChecksExpectsAMail {
  readonly 'toPassMailChecks is only for a Mail: what inbox.expectMail() returns': never;
}
type ToPassMailChecksOnSomethingElse = (this: ToPassMailChecksExpectsAMail, options?: ToPassMailChecksOptions) => Promise<void>;

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
    /**
     * The sender retried mail to the inbox at least `atLeast` (1) and at
     * most `atMost` times, watching the attempt log up to `within` ms.
     */
    toHaveBeenRetried: [T] extends [Inbox] ? (options?: ToHaveBeenRetriedOptions) => Promise<void> : ToHaveBeenRetriedOnSomethingElse;
    /**
     * Every retry waited (`minGap`, the first the greylisting window), the
     * waits grew, nothing came back after a 5xx, and a 421 slowed it all down.
     */
    toHaveBackedOff: [T] extends [Inbox] ? (options?: ToHaveBackedOffOptions) => Promise<void> : ToHaveBackedOffOnSomethingElse;
    /**
     * The webhook delivered an event of `type` (any type when omitted), in
     * exactly `attempts` attempts when given, watching its log up to
     * `within` ms; `.not` watches all of `within` (5 s).
     */
    toHaveDelivered: [T] extends [Webhook] ? (type?: WebhookEventType, options?: ToHaveDeliveredOptions) => Promise<void> : ToHaveDeliveredOnSomethingElse;
    /** The webhook gave up on an event (of `type`, for `reason`, after exactly `attempts`). */
    toHaveDeadLettered: [T] extends [Webhook] ? (options?: ToHaveDeadLetteredOptions) => Promise<void> : ToHaveDeadLetteredOnSomethingElse;
    /**
     * The mail passes its checks (links, html, images, size, text): no
     * errors, or no warnings either with `failOn: 'warning'`. The failure
     * lists each problem and how to fix it. See docs/mail-checks.md.
     */
    toPassMailChecks: [T] extends [CheckedMail] ? (options?: ToPassMailChecksOptions) => Promise<void> : ToPassMailChecksOnSomethingElse;
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
