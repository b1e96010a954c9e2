// `expect(inbox).toReceiveMail()`, `toHaveBeenRetried()`, `toHaveBackedOff()`,
// and `expect(webhook).toHaveDelivered()` and `toHaveDeadLettered()` for
// Playwright, and `expect(mail).toPassMailChecks()`. What the matchers do and every word of their failure text come
// from the core (runner/matcher.ts, runner/smtp-matchers.ts, runner/webhook-matchers.ts).
import type { ExpectMatcherState, MatcherReturnType } from '@playwright/test';
import type { MailFilter } from '../inbox/filter.js';
import type { Inbox } from '../inbox/inbox.js';
import type { Webhook } from '../inbox/webhooks.js';
import type { WebhookEventType } from '../client/webhooks.js';
import { matchReceiveMail, receiveMailFailure, type ReceiveMailOptions } from '../runner/matcher.js';
import {
  matchBackedOff,
  matchRetried,
  smtpMatcherFailure,
  type BackedOffOptions,
  type RetriedOptions,
  type SmtpMatcherResult,
} from '../runner/smtp-matchers.js';
import {
  matchDeadLettered,
  matchDelivered,
  webhookMatcherFailure,
  type DeadLetteredOptions,
  type DeliveredOptions,
  type WebhookMatcherResult,
} from '../runner/webhook-matchers.js';
import { toPassMailChecks } from './mail-checks.js';

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

function webhookAnswer(state: ExpectMatcherState, result: WebhookMatcherResult, type?: string): MatcherReturnType {
  return { pass: result.pass, name: result.name, expected: result.expected, actual: result.actual, message: () => webhookMatcherFailure(state, result, type) };
}

function answer(state: ExpectMatcherState, result: SmtpMatcherResult): MatcherReturnType {
  return { pass: result.pass, name: result.name, expected: result.expected, actual: result.actual, message: () => smtpMatcherFailure(state, result) };
}

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
  toHaveBeenRetried: async function toHaveBeenRetried(
    this: ExpectMatcherState,
    received: Inbox,
    options?: ToHaveBeenRetriedOptions,
  ): Promise<MatcherReturnType> {
    return answer(this, await matchRetried(received, options, { isNot: this.isNot }));
  },
  toHaveBackedOff: async function toHaveBackedOff(this: ExpectMatcherState, received: Inbox, options?: ToHaveBackedOffOptions): Promise<MatcherReturnType> {
    return answer(this, await matchBackedOff(received, options, { isNot: this.isNot }));
  },
  toHaveDelivered: async function toHaveDelivered(
    this: ExpectMatcherState,
    received: Webhook,
    type?: WebhookEventType,
    options?: ToHaveDeliveredOptions,
  ): Promise<MatcherReturnType> {
    return webhookAnswer(this, await matchDelivered(received, type, options, { isNot: this.isNot }), type);
  },
  toHaveDeadLettered: async function toHaveDeadLettered(
    this: ExpectMatcherState,
    received: Webhook,
    options?: ToHaveDeadLetteredOptions,
  ): Promise<MatcherReturnType> {
    return webhookAnswer(this, await matchDeadLettered(received, options, { isNot: this.isNot }));
  },
  toPassMailChecks,
};
