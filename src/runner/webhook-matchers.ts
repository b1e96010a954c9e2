// `toHaveDelivered` and `toHaveDeadLettered`, runner-neutral: what became of
// the events the embedded server sent a webhook (seed 002), read from its
// delivery log. The Playwright and Vitest adapters only register them and put
// their runner's hint line above the message; every word of the failure
// text, the attempt timeline included, lives here.
import type { WebhookDelivery, WebhookEventType } from '../client/webhooks.js';
import { describeValue, expectedError } from '../contract/validation.js';
import { ALL_WEBHOOK_EVENT_TYPES } from '../contract/webhooks.js';
import { formatDuration, plural } from '../contract/format.js';
import { DEFAULT_QUIET_MS } from '../inbox/inbox-options.js';
import { isWebhook, type Webhook } from '../inbox/webhooks.js';
import type { MatcherHintState } from './matcher.js';
import { checkMatcherOptions, countOption, msOption } from './matcher-options.js';
import { formatWebhookTimeline } from './webhook-timeline.js';
import { CallSite } from '../inbox/call-site.js';

export interface DeliveredOptions {
  /**
   * The event took exactly this many attempts in all (every copy counted),
   * e.g. 3 for "down for two attempts, then up". Default: any number.
   */
  readonly attempts?: number | undefined;
  /** At least this many events of the type delivered. Default 1. */
  readonly count?: number | undefined;
  /** How long to watch the log, in ms: the inbox's timeout (30 s) by default, 5 s for `.not`. */
  readonly within?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface DeadLetteredOptions {
  /** Only dead letters of this event type. */
  readonly type?: WebhookEventType | undefined;
  /** The dead letter's reason (its last attempt's): `4xx-not-retried`, `timeout`, `503`, ... */
  readonly reason?: string | undefined;
  /** It took exactly this many attempts before it was given up. */
  readonly attempts?: number | undefined;
  readonly within?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

export type WebhookMatcherName = 'toHaveDelivered' | 'toHaveDeadLettered';

export interface WebhookMatcherResult {
  readonly pass: boolean;
  /** The failure text: what happened, the attempt timeline, then an `Expected:` and a `Received:` line. */
  readonly message: () => string;
  readonly name: WebhookMatcherName;
  readonly expected: string;
  readonly actual: string;
  /** The delivery log as last read, oldest first. */
  readonly deliveries: readonly WebhookDelivery[];
}

function assertWebhook(name: WebhookMatcherName, value: unknown): Webhook {
  if (!isWebhook(value)) throw new TypeError(`${name} expects a Webhook (what \`inbox.webhooks.add()\` returns), got ${describeValue(value)}`);
  return value;
}

/** How long to watch the log: the `within` option, else `fallback`. */
function within(o: Record<string, unknown>, fallback: number): number {
  return msOption(o, 'within') ?? fallback;
}

function eventType(value: unknown, name: string): WebhookEventType | undefined {
  if (value === undefined) return undefined;
  if (!ALL_WEBHOOK_EVENT_TYPES.includes(value as WebhookEventType)) throw expectedError(name, `one of ${ALL_WEBHOOK_EVENT_TYPES.join(', ')}`, value);
  return value as WebhookEventType;
}

const times = (n: number, word = 'attempt') => plural(n, word);

function endSentence(text: string): string {
  return /[\w)]$/.test(text) ? `${text}.` : text;
}

function result(
  name: WebhookMatcherName,
  pass: boolean,
  story: string,
  webhook: Webhook,
  deliveries: readonly WebhookDelivery[],
  expected: string,
  actual: string,
): WebhookMatcherResult {
  const message = () =>
    `${story}${unconfirmed(webhook, deliveries)}\n\n${formatWebhookTimeline(webhook, deliveries)}\n\nExpected: ${expected}\nReceived: ${endSentence(actual)}`;
  return Object.freeze({ pass, message, name, expected, actual, deliveries });
}

/** Why nothing went, when an SES webhook's notifications are held for its subscription's confirmation: said first, naming the URL. */
function unconfirmed(webhook: Webhook, deliveries: readonly WebhookDelivery[]): string {
  const held = deliveries.filter((d) => d.held === 'subscription_unconfirmed').length;
  if (held === 0) return '';
  return (
    `\nThe SNS subscription of ${webhook.url} is unconfirmed: ${plural(held, 'notification')} held, never attempted, until the app fetches ` +
    "the SubscribeURL of the SubscriptionConfirmation it was sent first (docs/providers.md, 'SES, through SNS')."
  );
}

/** How each event of the log ended so far, in words: `event 1 delivered after 3 attempts, event 2 pending (1 attempt)`. */
function summary(deliveries: readonly WebhookDelivery[]): string {
  if (deliveries.length === 0) return 'no event was sent';
  return deliveries
    .map((d, i) => {
      const n = times(d.attempts.length);
      if (d.state === 'delivered') return `event ${i + 1} (${d.eventType}) delivered after ${n}`;
      if (d.state === 'dead_lettered') return `event ${i + 1} (${d.eventType}) dead-lettered after ${n} (${d.attempts.at(-1)?.reason ?? 'no attempt'})`;
      if (d.held === 'subscription_unconfirmed') return `event ${i + 1} (${d.eventType}) held, unattempted: the SNS subscription is unconfirmed`;
      return `event ${i + 1} (${d.eventType}) ${d.state} (${n} so far)`;
    })
    .join(', ');
}

/**
 * `expect(webhook).toHaveDelivered(type?, { attempts, count, within })`: at
 * least `count` (1) events of `type` (any type when omitted) were delivered,
 * each in exactly `attempts` attempts when given. Passes as soon as it
 * holds; `.not` watches all of `within` (5 s) and fails as soon as it holds.
 */
export function matchDelivered(
  received: unknown,
  type?: WebhookEventType,
  options: DeliveredOptions = {},
  context: { readonly isNot?: boolean } = {},
): Promise<WebhookMatcherResult> {
  return CallSite.capture().run(() => delivered(received, type, options, context));
}

async function delivered(
  received: unknown,
  type: WebhookEventType | undefined,
  options: DeliveredOptions,
  context: { readonly isNot?: boolean },
): Promise<WebhookMatcherResult> {
  const name = 'toHaveDelivered';
  const webhook = assertWebhook(name, received);
  const wanted = eventType(type, 'type');
  const o = checkMatcherOptions(name, options, ['attempts', 'count', 'within', 'signal']);
  const attempts = countOption(o, 'attempts', 1);
  const n = countOption(o, 'count', 1) ?? 1;
  const isNot = context.isNot === true;
  const watchFor = within(o, isNot ? DEFAULT_QUIET_MS : webhook.timeout);
  const fits = (d: WebhookDelivery) =>
    d.state === 'delivered' && (wanted === undefined || d.eventType === wanted) && (attempts === undefined || d.attempts.length === attempts);
  const holds = (log: readonly WebhookDelivery[]) => log.filter(fits).length >= n;
  // An event that took more attempts than asked can never turn right: once one has and no other
  // event of the type still could, the answer is known and the watch stops.
  const ofType = (d: WebhookDelivery) => wanted === undefined || d.eventType === wanted;
  const hopeless = (log: readonly WebhookDelivery[]) =>
    attempts !== undefined &&
    log.some((d) => ofType(d) && d.attempts.length > attempts) &&
    !log.some((d) => ofType(d) && d.state === 'pending' && d.attempts.length < attempts);
  const watched = await webhook.watch((log) => (holds(log) || (!isNot && hopeless(log)) ? true : undefined), {
    within: watchFor,
    signal: o.signal as AbortSignal | undefined,
  });
  const pass = holds(watched.deliveries);
  const what = `${n === 1 ? '' : `${n} `}${wanted ?? 'an event'}${wanted && n !== 1 ? ' events' : ''}${attempts === undefined ? '' : ` in exactly ${times(attempts)}`}`;
  const expected = `${isNot ? 'not ' : ''}delivered ${what}`;
  const actual = summary(watched.deliveries);
  const watchedFor = watched.cutShort
    ? `watched ${formatDuration(watched.elapsedMs)} of ${formatDuration(watchFor)}, cut short before the test's own timeout`
    : `watched ${formatDuration(watched.elapsedMs)}`;
  const story = pass
    ? `Expected webhook ${webhook.id} at ${webhook.address} not to have delivered ${what}, but it did (${watchedFor}).`
    : `Expected webhook ${webhook.id} at ${webhook.address} to have delivered ${what}, but ${actual} (${watchedFor}).`;
  return result(name, pass, story, webhook, watched.deliveries, expected, actual);
}

/**
 * `expect(webhook).toHaveDeadLettered({ type, reason, attempts, within })`:
 * an event (of `type`) was given up on, for `reason`, after exactly
 * `attempts` attempts when given. Passes as soon as it holds.
 */
export function matchDeadLettered(
  received: unknown,
  options: DeadLetteredOptions = {},
  context: { readonly isNot?: boolean } = {},
): Promise<WebhookMatcherResult> {
  return CallSite.capture().run(() => deadLettered(received, options, context));
}

async function deadLettered(received: unknown, options: DeadLetteredOptions, context: { readonly isNot?: boolean }): Promise<WebhookMatcherResult> {
  const name = 'toHaveDeadLettered';
  const webhook = assertWebhook(name, received);
  const o = checkMatcherOptions(name, options, ['type', 'reason', 'attempts', 'within', 'signal']);
  const wanted = eventType(o.type, 'type');
  const reason = o.reason;
  if (reason !== undefined && typeof reason !== 'string')
    throw expectedError('reason', 'a one-word reason such as "4xx-not-retried", "timeout" or "503"', reason);
  const attempts = countOption(o, 'attempts', 1);
  const isNot = context.isNot === true;
  const watchFor = within(o, isNot ? DEFAULT_QUIET_MS : webhook.timeout);
  const fits = (d: WebhookDelivery) =>
    d.state === 'dead_lettered' &&
    (wanted === undefined || d.eventType === wanted) &&
    (reason === undefined || d.attempts.at(-1)?.reason === reason) &&
    (attempts === undefined || d.attempts.length === attempts);
  const watched = await webhook.watch((log) => (log.some(fits) ? true : undefined), { within: watchFor, signal: o.signal as AbortSignal | undefined });
  const pass = watched.deliveries.some(fits);
  const what = [wanted ?? 'an event', reason === undefined ? '' : `for ${reason}`, attempts === undefined ? '' : `after exactly ${times(attempts)}`]
    .filter(Boolean)
    .join(' ');
  const expected = `${isNot ? 'not ' : ''}dead-lettered ${what}`;
  const actual = summary(watched.deliveries);
  const story = pass
    ? `Expected webhook ${webhook.id} at ${webhook.address} not to have dead-lettered ${what}, but it did.`
    : `Expected webhook ${webhook.id} at ${webhook.address} to have dead-lettered ${what}, but ${actual} (watched ${formatDuration(watched.elapsedMs)}).`;
  return result(name, pass, story, webhook, watched.deliveries, expected, actual);
}

/** The whole failure text: the runner's hint line, then the result's message. */
export function webhookMatcherFailure(state: MatcherHintState, result: WebhookMatcherResult, type?: string): string {
  const hint = state.utils.matcherHint(result.name, 'webhook', result.name === 'toHaveDelivered' && type !== undefined ? 'type' : '', {
    isNot: state.isNot,
    promise: state.promise,
  });
  return `${hint}\n\n${result.message()}`;
}
