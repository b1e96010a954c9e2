// `toHaveBeenRetried` and `toHaveBackedOff`, runner-neutral: what a good
// sender does when the mail server says "later" (seeds 003 and 004), checked
// against the address's attempt log. The Playwright and Vitest adapters only
// register them and put their runner's hint line above the message; every
// word of the failure text, the attempt timeline included, lives here.
import type { SmtpAttempt } from '../client/smtp-lab.js';
import { describeValue, expectedError } from '../contract/validation.js';
import { formatDuration } from '../contract/format.js';
import type { TextMatcher } from '../inbox/filter.js';
import { isInbox, type Inbox } from '../inbox/inbox.js';
import { DEFAULT_QUIET_MS } from '../inbox/inbox-options.js';
import { readLog, type ReadLog } from '../contract/attempt-reading.js';
import type { MatcherHintState } from './matcher.js';
import { checkMatcherOptions, countOption, msOption } from './matcher-options.js';
import { formatTimeline } from '../contract/attempt-timeline.js';
import { CallSite } from '../inbox/call-site.js';

export interface RetriedOptions {
  /** At least this many retries (default 1; 0 when `atMost` is given). */
  readonly atLeast?: number | undefined;
  /** At most this many: the log is then watched for all of `within`, failing as soon as there are more. */
  readonly atMost?: number | undefined;
  /**
   * How long to watch the log, in ms. A check that can pass early (only
   * `atLeast`) passes as soon as it holds, within the inbox's timeout by
   * default; one that can only be confirmed at the end (`atMost`, `.not`)
   * watches for 5 s by default.
   */
  readonly within?: number | undefined;
  /** Only attempts whose MAIL FROM matches (a case-insensitive substring or a RegExp). */
  readonly from?: TextMatcher | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface BackedOffOptions {
  /** No retry of a mail sooner than this after the reply it answers, in ms. Default 1000. */
  readonly minGap?: number | undefined;
  /** A mail's first retry no sooner than this, in ms. Default: the address's greylist `minDelay`, else `minGap`. */
  readonly firstRetryAfter?: number | undefined;
  /** How much shorter than the one before a wait may be (jitter, a cap), as a fraction. Default 0.25. */
  readonly tolerance?: number | undefined;
  /** Watch the log this long, failing at the first misstep (ms). Default 0: judge the log as it is. */
  readonly within?: number | undefined;
  readonly from?: TextMatcher | undefined;
  readonly signal?: AbortSignal | undefined;
}

export type SmtpMatcherName = 'toHaveBeenRetried' | 'toHaveBackedOff';

export interface SmtpMatcherResult {
  readonly pass: boolean;
  /** The failure text: what happened, the attempt timeline, then an `Expected:` and a `Received:` line. */
  readonly message: () => string;
  readonly name: SmtpMatcherName;
  readonly expected: string;
  readonly actual: string;
  /** The log as last read, oldest first (after the `from` filter). */
  readonly attempts: readonly SmtpAttempt[];
}

const RETRIED_KEYS = ['atLeast', 'atMost', 'within', 'from', 'signal'];
const BACKED_OFF_KEYS = ['minGap', 'firstRetryAfter', 'tolerance', 'within', 'from', 'signal'];

function assertInbox(name: SmtpMatcherName, value: unknown): Inbox {
  if (!isInbox(value)) throw new TypeError(`${name} expects an Inbox (the \`inbox\` fixture or the result of createInbox()), got ${describeValue(value)}`);
  return value;
}

function fromFilter(o: Record<string, unknown>): (attempts: readonly SmtpAttempt[]) => readonly SmtpAttempt[] {
  const from = o.from;
  if (from === undefined) return (attempts) => attempts;
  if (typeof from === 'string') return (attempts) => attempts.filter((a) => a.from.toLowerCase().includes(from.toLowerCase()));
  if (from instanceof RegExp) return (attempts) => attempts.filter((a) => new RegExp(from.source, from.flags.replace('g', '')).test(a.from));
  throw expectedError('from', 'a string or a RegExp', from);
}

function times(n: number): string {
  return `${n} ${n === 1 ? 'time' : 'times'}`;
}

function endSentence(text: string): string {
  return /[\d)]$/.test(text) ? `${text}.` : text;
}

function result(
  name: SmtpMatcherName,
  pass: boolean,
  story: string,
  timeline: string,
  expected: string,
  actual: string,
  attempts: readonly SmtpAttempt[],
): SmtpMatcherResult {
  const message = () => `${story}\n\n${timeline}\n\nExpected: ${expected}\nReceived: ${endSentence(actual)}`;
  return Object.freeze({ pass, message, name, expected, actual, attempts });
}

/**
 * `expect(inbox).toHaveBeenRetried({ atLeast, atMost, within, from })`: the
 * sender retried mail to the address that many times (retries: attempts
 * beyond each mail's first, contract/attempt-reading.ts).
 */
export function matchRetried(received: unknown, options: RetriedOptions = {}, context: { readonly isNot?: boolean } = {}): Promise<SmtpMatcherResult> {
  return CallSite.capture().run(() => retried(received, options, context));
}

async function retried(received: unknown, options: RetriedOptions, context: { readonly isNot?: boolean }): Promise<SmtpMatcherResult> {
  const name = 'toHaveBeenRetried';
  const inbox = assertInbox(name, received);
  const o = checkMatcherOptions(name, options, RETRIED_KEYS);
  const atMost = countOption(o, 'atMost');
  const atLeast = countOption(o, 'atLeast') ?? (atMost === undefined ? 1 : 0);
  if (atMost !== undefined && atLeast > atMost) throw new TypeError(`Expected \`atLeast\` (${atLeast}) to be at most \`atMost\` (${atMost})`);
  const isNot = context.isNot === true;
  // Passing early is possible only for "at least" in the positive form; any other check is confirmed when the watch ends.
  const canPassEarly = atMost === undefined && !isNot;
  const within = msOption(o, 'within') ?? (canPassEarly ? inbox.timeout : DEFAULT_QUIET_MS);
  const only = fromFilter(o);
  const inRange = (n: number) => n >= atLeast && (atMost === undefined || n <= atMost);
  const settledFor = (n: number) => (atMost !== undefined && n > atMost) || (atMost === undefined && n >= atLeast);

  const watched = await inbox.smtp.watch((log) => (settledFor(readLog(only(log)).retries) ? true : undefined), {
    within,
    signal: o.signal as AbortSignal | undefined,
  });
  const attempts = only(watched.attempts);
  const read = readLog(attempts);
  const n = read.retries;
  const wanted = atMost === undefined ? `at least ${times(atLeast)}` : atLeast === atMost ? `exactly ${times(atLeast)}` : `${atLeast} to ${times(atMost)}`;
  const expected = `${isNot ? 'not ' : ''}retried ${wanted}`;
  const actual = `retried ${times(n)} (${read.deliveries.length} ${read.deliveries.length === 1 ? 'mail' : 'mails'}, ${attempts.length} ${attempts.length === 1 ? 'attempt' : 'attempts'})`;
  const watchedFor = watched.cutShort
    ? `watched ${formatDuration(watched.elapsedMs)} of ${formatDuration(within)}, cut short before the test's own timeout`
    : `watched ${formatDuration(watched.elapsedMs)}`;
  const pass = inRange(n);
  const story = pass
    ? `Expected mail to ${inbox.address} not to have been retried ${wanted}, but it was retried ${times(n)} (${watchedFor}).`
    : `Expected mail to ${inbox.address} to have been retried ${wanted}, but it was retried ${times(n)} (${watchedFor}).`;
  return result(name, pass, story, formatTimeline(inbox.address, attempts, read), expected, actual, attempts);
}

/** One misstep of a sender, in words. */
export interface Misstep {
  readonly delivery: number;
  readonly text: string;
}

export interface BackoffPolicy {
  readonly minGap: number;
  readonly firstRetryAfter: number;
  readonly tolerance: number;
  /** Where `firstRetryAfter` came from, for the text. */
  readonly firstRetrySource: string;
}

const reply = (a: SmtpAttempt) => (a.code === null ? 'a dropped connection' : `a ${a.code}${a.enhancedCode ? ` ${a.enhancedCode}` : ''}`);

/** Everything the log shows a sender doing against the seeds' advice, oldest first. */
export function missteps(read: ReadLog, policy: BackoffPolicy): Misstep[] {
  const out: Misstep[] = [];
  for (const delivery of read.deliveries) {
    let previousWait: number | undefined;
    delivery.attempts.forEach((attempt, i) => {
      if (i === 0) return;
      const before = delivery.attempts[i - 1]!;
      const wait = Math.max(0, (attempt.beganAt ?? attempt.at).getTime() - before.at.getTime());
      const mail = `mail ${delivery.number}`;
      if (before.outcome === 'rejected') {
        out.push({ delivery: delivery.number, text: `${mail} was retried after ${reply(before)}, a permanent refusal (try ${i + 1})` });
      } else if (before.retryAfterMs !== null && wait < before.retryAfterMs) {
        out.push({
          delivery: delivery.number,
          text: `${mail} was retried ${formatDuration(wait)} after ${reply(before)} that said to come back in ${formatDuration(before.retryAfterMs)} (Retry-After; try ${i + 1})`,
        });
      } else if (i === 1 && wait < policy.firstRetryAfter) {
        out.push({
          delivery: delivery.number,
          text: `${mail}'s first retry came ${formatDuration(wait)} after ${reply(before)}, before ${policy.firstRetrySource} of ${formatDuration(policy.firstRetryAfter)}`,
        });
      } else if (wait < policy.minGap) {
        out.push({
          delivery: delivery.number,
          text: `${mail} was retried ${formatDuration(wait)} after ${reply(before)}, less than ${formatDuration(policy.minGap)} apart (try ${i + 1})`,
        });
      } else if (previousWait !== undefined && wait < previousWait * (1 - policy.tolerance)) {
        out.push({
          delivery: delivery.number,
          text: `${mail} waited ${formatDuration(wait)} before try ${i + 1}, shorter than the ${formatDuration(previousWait)} before try ${i}: the waits should grow`,
        });
      }
      previousWait = wait;
    });
  }
  // Throttling asks for a slower pace in aggregate: after a 421 (or a provider API's 429) nothing new
  // from that sender for a while: minGap, or as long as the 429's Retry-After said.
  for (const entry of read.entries) {
    const throttled = entry.attempt;
    // A provider API's rate limit: a deferred call that said when to come back (429, or SES v1's 400 Throttling).
    if (throttled.stage === 'api' ? throttled.outcome !== 'deferred' || throttled.retryAfterMs === null : throttled.code !== 421) continue;
    const at = throttled.at.getTime();
    const pause = throttled.retryAfterMs ?? policy.minGap;
    const hurried = read.entries.find((e) => {
      const began = (e.attempt.beganAt ?? e.attempt.at).getTime();
      return e.delivery !== entry.delivery && e.attempt.from.toLowerCase() === throttled.from.toLowerCase() && began >= at && began - at < pause;
    });
    if (hurried) {
      out.push({
        delivery: hurried.delivery,
        text: `mail ${hurried.delivery} was sent ${formatDuration((hurried.attempt.beganAt ?? hurried.attempt.at).getTime() - at)} after a ${throttled.code} to mail ${entry.delivery}: a throttled sender slows down for everything it sends`,
      });
    }
  }
  return out;
}

/**
 * `expect(inbox).toHaveBackedOff({ minGap, firstRetryAfter, tolerance, within })`:
 * every retry waited (at least `minGap`, the first at least the greylisting
 * window, and at least what a `Retry-After` said), each wait was at least as
 * long as the one before (within `tolerance`), nothing was retried after a
 * permanent refusal, and after a 421 (a provider API's 429) the sender
 * slowed down for all its mail.
 */
export function matchBackedOff(received: unknown, options: BackedOffOptions = {}, context: { readonly isNot?: boolean } = {}): Promise<SmtpMatcherResult> {
  return CallSite.capture().run(() => backedOff(received, options, context));
}

async function backedOff(received: unknown, options: BackedOffOptions, context: { readonly isNot?: boolean }): Promise<SmtpMatcherResult> {
  const name = 'toHaveBackedOff';
  const inbox = assertInbox(name, received);
  const o = checkMatcherOptions(name, options, BACKED_OFF_KEYS);
  const minGap = msOption(o, 'minGap') ?? 1000;
  const tolerance = o.tolerance ?? 0.25;
  if (typeof tolerance !== 'number' || !(tolerance >= 0 && tolerance < 1))
    throw expectedError('tolerance', 'a fraction from 0 to below 1, like 0.25', tolerance);
  let firstRetryAfter = msOption(o, 'firstRetryAfter');
  let firstRetrySource = 'the wait asked for';
  if (firstRetryAfter === undefined) {
    const greylist = (await inbox.smtp.rules()).find((rule) => rule.kind === 'greylist');
    firstRetryAfter = greylist ? Math.max(greylist.minDelay, minGap) : minGap;
    firstRetrySource = greylist ? 'the greylisting window' : 'the shortest wait';
  }
  const policy: BackoffPolicy = { minGap, firstRetryAfter, tolerance, firstRetrySource };
  const only = fromFilter(o);
  const within = msOption(o, 'within') ?? 0;
  const watched = await inbox.smtp.watch((log) => (missteps(readLog(only(log)), policy).length > 0 ? true : undefined), {
    within,
    signal: o.signal as AbortSignal | undefined,
  });
  const attempts = only(watched.attempts);
  const read = readLog(attempts);
  const found = missteps(read, policy);
  const pass = found.length === 0;
  const expected = `${context.isNot === true ? 'not ' : ''}backed off: retries at least ${formatDuration(minGap)} apart, the first after ${formatDuration(firstRetryAfter)}, waits that grow, none after a 5xx`;
  const actual = pass ? `${read.retries} ${read.retries === 1 ? 'retry' : 'retries'} without a misstep` : found.map((m) => m.text).join('; ');
  const story = pass
    ? read.retries === 0
      ? `Expected the sender to misstep at ${inbox.address}, but it made no retry to judge.`
      : `Expected the sender to misstep at ${inbox.address}, but its ${read.retries === 1 ? 'retry' : `${read.retries} retries`} kept to the policy.`
    : `Expected the sender to back off at ${inbox.address}, but:\n${found.map((m) => `  - ${m.text}`).join('\n')}`;
  return result(name, pass, story, formatTimeline(inbox.address, attempts, read), expected, actual, attempts);
}

/** The whole failure text: the runner's hint line, then the result's message. */
export function smtpMatcherFailure(state: MatcherHintState, result: SmtpMatcherResult): string {
  const hint = state.utils.matcherHint(result.name, 'inbox', '', { isNot: state.isNot, promise: state.promise });
  return `${hint}\n\n${result.message()}`;
}
