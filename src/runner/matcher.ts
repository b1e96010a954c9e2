// `toReceiveMail`, runner-neutral. The Playwright and Vitest adapters only
// register it and print the hint their runner prints; what the matcher
// does, and every word of its failure text, lives here.
import { MailTimeoutError, UnexpectedMailError } from '../inbox/wait-errors.js';
import { describeFilter, type MailFilter } from '../inbox/filter.js';
import { isInbox, type Inbox } from '../inbox/inbox.js';
import type { Mail } from '../inbox/mail.js';
import { DEFAULT_QUIET_MS } from '../inbox/inbox-options.js';
import { formatDuration, formatSummaries, formatSummary } from '../inbox/describe.js';

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
export async function matchReceiveMail(received: unknown, filter: MailFilter | undefined, options: ReceiveMailOptions = {}, context: { readonly isNot?: boolean } = {}): Promise<ReceiveMailResult> {
  const inbox = assertInbox(received);
  assertMatcherOptions(options, context.isNot === true);
  const expected = describeFilter(filter);
  if (context.isNot) {
    const within = options.within ?? options.timeout ?? DEFAULT_QUIET_MS;
    try {
      await inbox.expectNoMail(filter, { within, signal: options.signal });
      return result(false, () => `No mail matching ${expected} arrived at ${inbox.address} for ${formatDuration(within)}.`, expected, 'nothing matching', undefined, undefined);
    } catch (error) {
      if (!(error instanceof UnexpectedMailError)) throw error;
      return result(true, () => error.message, expected, formatSummaries(error.arrived, 5), undefined, error);
    }
  }
  try {
    const mail = await inbox.expectMail(filter, { timeout: options.timeout, signal: options.signal });
    return result(true, () => `Expected no mail matching ${expected} at ${inbox.address}, but ${formatSummary(mail)} arrived.`, expected, formatSummary(mail), mail, undefined);
  } catch (error) {
    if (!(error instanceof MailTimeoutError)) throw error;
    const actual = error.rejected.length > 0 ? `rejected: ${formatSummaries(error.rejected, 5)}` : 'nothing';
    return result(false, () => error.message, expected, actual, undefined, error);
  }
}

function assertInbox(value: unknown): Inbox {
  if (!isInbox(value)) {
    const got = value === null ? 'null' : typeof value === 'object' ? (value.constructor?.name ?? 'an object') : typeof value;
    throw new TypeError(`toReceiveMail expects an Inbox (the \`inbox\` fixture or the result of createInbox()), got ${got}`);
  }
  return value;
}

const MATCHER_OPTION_KEYS = new Set(['timeout', 'within', 'signal']);

/** A misspelt budget must not silently fall back to the default one. */
function assertMatcherOptions(options: unknown, isNot: boolean): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object') throw new TypeError(`Expected toReceiveMail options to be an object like { ${isNot ? 'within' : 'timeout'}: 10_000 }`);
  for (const key of Object.keys(options)) {
    if (!MATCHER_OPTION_KEYS.has(key)) throw new TypeError(`Unknown toReceiveMail option \`${key}\` (expected \`${isNot ? 'within' : 'timeout'}\`)`);
  }
  if (!isNot && (options as ReceiveMailOptions).within !== undefined) {
    throw new TypeError('`within` is the quiet period of `.not.toReceiveMail`; the budget of `toReceiveMail` is `timeout`');
  }
}

function result(pass: boolean, message: () => string, expected: string, actual: string, mail: Mail | undefined, error: MailTimeoutError | UnexpectedMailError | undefined): ReceiveMailResult {
  return Object.freeze({ pass, message, name: 'toReceiveMail' as const, expected, actual, mail, error });
}
