// `toReceiveMail`, runner-neutral. The Playwright and Vitest adapters only
// register it and put their runner's hint line (`expect(inbox).toReceiveMail(filter)`)
// above its message; what the matcher does, and every word of its failure
// text, lives here.
import { MailTimeoutError, UnexpectedMailError } from '../inbox/wait-errors.js';
import { describeFilter, type MailFilter } from '../inbox/filter.js';
import { isInbox, type Inbox } from '../inbox/inbox.js';
import type { Mail } from '../inbox/mail.js';
import { DEFAULT_QUIET_MS } from '../inbox/inbox-options.js';
import { formatSummaries, formatSummary } from '../inbox/describe.js';
import { formatDuration } from '../contract/format.js';
import { describeValue } from '../contract/validation.js';
import { CallSite } from '../inbox/call-site.js';

export interface ReceiveMailOptions {
  /** Budget of the positive matcher, in ms (the inbox's `timeout` by default). */
  readonly timeout?: number | undefined;
  /** Quiet period of `.not`, in ms (default 5 s; `timeout` is accepted as a synonym). */
  readonly within?: number | undefined;
  /** Cuts the wait short, e.g. at the test's own deadline. */
  readonly signal?: AbortSignal | undefined;
}

/** The shape both runners' `expect.extend` accept, plus what was received. */
export interface ReceiveMailResult {
  readonly pass: boolean;
  /** The failure text: what happened, then an `Expected:` and a `Received:` line. */
  readonly message: () => string;
  readonly name: 'toReceiveMail';
  /** The filter in words. */
  readonly expected: string;
  /** What arrived (or `nothing matching`), in words. */
  readonly actual: string;
  /** The mail received (positive form, when it passed). */
  readonly mail: Mail | undefined;
  /** The wait's own error, with every field (timeout or unexpected mail). */
  readonly error: MailTimeoutError | UnexpectedMailError | undefined;
}

/**
 * Runs `expect(inbox).toReceiveMail(filter, options)` (or `.not` when
 * `isNot`). Refusals that mean "stop" (unknown domain, bad token…) are thrown
 * rather than reported as a failed expectation: they are errors, not answers.
 */
export function matchReceiveMail(
  received: unknown,
  filter: MailFilter | undefined,
  options: ReceiveMailOptions = {},
  context: { readonly isNot?: boolean } = {},
): Promise<ReceiveMailResult> {
  return CallSite.capture().run(() => receiveMail(received, filter, options, context));
}

async function receiveMail(
  received: unknown,
  filter: MailFilter | undefined,
  options: ReceiveMailOptions,
  context: { readonly isNot?: boolean },
): Promise<ReceiveMailResult> {
  const inbox = assertInbox(received);
  assertMatcherOptions(options, context.isNot === true);
  const expected = describeFilter(filter);
  if (context.isNot) {
    const within = options.within ?? options.timeout ?? DEFAULT_QUIET_MS;
    try {
      await inbox.expectNoMail(filter, { within, signal: options.signal });
      return result(
        false,
        () => `No mail matching ${expected} arrived at ${inbox.address} for ${formatDuration(within)}.`,
        expected,
        'nothing matching',
        undefined,
        undefined,
        true,
      );
    } catch (error) {
      if (!(error instanceof UnexpectedMailError)) throw error;
      return result(true, () => error.message, expected, formatSummaries(error.arrived, 5), undefined, error, true);
    }
  }
  try {
    const mail = await inbox.expectMail(filter, { timeout: options.timeout, signal: options.signal });
    return result(
      true,
      () => `Expected no mail matching ${expected} at ${inbox.address}, but ${formatSummary(mail)} arrived.`,
      expected,
      formatSummary(mail),
      mail,
      undefined,
      false,
    );
  } catch (error) {
    if (!(error instanceof MailTimeoutError)) throw error;
    const actual = error.rejected.length > 0 ? `rejected: ${formatSummaries(error.rejected, 5)}` : 'nothing';
    return result(false, () => error.message, expected, actual, undefined, error, false);
  }
}

/** What both runners' matcher state (`this` in a matcher) offers for the hint line. */
export interface MatcherHintState {
  // Optional, as Jest declares them (Vitest and Playwright always set them).
  readonly isNot?: boolean | undefined;
  readonly promise?: string | undefined;
  readonly utils: { matcherHint(name: string, received?: string, expected?: string, options?: { isNot?: boolean; promise?: string }): string };
}

/** The whole failure text of `toReceiveMail`: the runner's hint line, then the result's message. */
export function receiveMailFailure(state: MatcherHintState, filter: MailFilter | undefined, result: ReceiveMailResult): string {
  const hint = state.utils.matcherHint('toReceiveMail', 'inbox', filter === undefined ? '' : 'filter', { isNot: state.isNot, promise: state.promise });
  return `${hint}\n\n${result.message()}`;
}

function assertInbox(value: unknown): Inbox {
  if (!isInbox(value)) {
    throw new TypeError(`toReceiveMail expects an Inbox (the \`inbox\` fixture or the result of createInbox()), got ${describeValue(value)}`);
  }
  return value;
}

const MATCHER_OPTION_KEYS = new Set(['timeout', 'within', 'signal']);

/** A misspelt budget must not silently fall back to the default one. */
function assertMatcherOptions(options: unknown, isNot: boolean): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object')
    throw new TypeError(`Expected toReceiveMail options to be an object like { ${isNot ? 'within' : 'timeout'}: 10_000 }`);
  for (const key of Object.keys(options)) {
    if (!MATCHER_OPTION_KEYS.has(key)) throw new TypeError(`Unknown toReceiveMail option \`${key}\` (expected \`${isNot ? 'within' : 'timeout'}\`)`);
  }
  if (!isNot && (options as ReceiveMailOptions).within !== undefined) {
    throw new TypeError('`within` is the quiet period of `.not.toReceiveMail`; the budget of `toReceiveMail` is `timeout`');
  }
}

function result(
  pass: boolean,
  story: () => string,
  expected: string,
  actual: string,
  mail: Mail | undefined,
  error: MailTimeoutError | UnexpectedMailError | undefined,
  isNot: boolean,
): ReceiveMailResult {
  const wanted = isNot ? `no mail matching ${expected}` : `mail matching ${expected}`;
  const message = () => `${story()}\n\nExpected: ${wanted}\nReceived: ${endSentence(actual)}`;
  return Object.freeze({ pass, message, name: 'toReceiveMail' as const, expected, actual, mail, error });
}

/**
 * Playwright reads every line of an error that ends like `file:12:34` as a
 * stack frame, and a line can end with a number or a parenthesis (`(2 checks)`):
 * a full stop keeps the line in the message.
 */
function endSentence(text: string): string {
  return /[\d)]$/.test(text) ? `${text}.` : text;
}
