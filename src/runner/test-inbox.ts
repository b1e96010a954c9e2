// One test's inbox, from setup to teardown, for runner plugins.
//
// Both adapters (Playwright, Vitest) do the same things around a test: make
// a fresh inbox whose prefix reads like the test's title and whose
// watermark is taken before the body runs, report each wait as a step,
// attach what arrived (or what was seen and rejected), keep every wait
// inside the test's own deadline, and delete the mailbox afterwards without
// ever masking the test's result. All of that lives here; an adapter only
// translates its runner's test info into a `TestRunnerBridge`.
import { MailTimeoutError, SKIP_REASONS, UnexpectedMailError } from '../inbox/wait-errors.js';
import { createInbox, type Inbox } from '../inbox/inbox.js';
import { type InboxEvent } from '../inbox/events.js';
import type { Mail } from '../inbox/mail.js';
import { DEFAULT_TIMEOUT_MS, type ConnectionOptions } from '../inbox/inbox-options.js';
import { assertMs } from '../contract/validation.js';
import { type MailSummary } from '../client/messages.js';
import { formatDuration, formatSummary } from '../inbox/describe.js';

/**
 * What a user sets per project or per test (`use: { mailroom: {...} }`).
 * `domain` and `token` are the core's connection options; `apiURL` is a
 * string only, because runners pass options between processes.
 */
export interface MailroomTestOptions extends Pick<ConnectionOptions, 'domain' | 'token'> {
  /** The mailbox API. Default: `MAILROOM_API_URL`, else `http://127.0.0.1:8025`. */
  readonly apiURL?: string | undefined;
  /** Budget of each wait for mail, in ms (default 30 s); the test's own deadline still caps it. */
  readonly timeout?: number | undefined;
  /** Keep a failed test's mailbox (and print its address) instead of deleting it. */
  readonly keepOnFailure?: boolean | undefined;
  /** Attach received mail, and on failure what was seen, to the report (default true). */
  readonly attach?: boolean | undefined;
}

/** An attachment in the runner's report. */
export interface ReportAttachment {
  readonly name: string;
  readonly contentType: string;
  readonly body: string;
}

/** How a runner shows things: an adapter implements this with its own API. */
export interface TestRunnerBridge {
  /** The test's title, for a readable address prefix. */
  readonly title: string;
  /** Runs a wait inside a report step titled like a sentence. */
  step<T>(title: string, run: () => Promise<T>): Promise<T>;
  /** Adds a document to the test's report. */
  attach(attachment: ReportAttachment): Promise<void> | void;
  /** A note for the person reading the report (kept mailbox, teardown trouble). */
  note(message: string): Promise<void> | void;
  /**
   * Milliseconds left before the runner fails the test with its own
   * timeout, or undefined when there is none. Asked at the start of every
   * wait, since a test may change its own timeout.
   */
  timeLeft(): number | undefined;
  /**
   * Milliseconds the runner still allows the test's teardown (afterEach
   * hooks and fixture teardown) before it fails the test with a timeout of
   * its own, or undefined when it has no such limit or cannot tell. Asked
   * when the mailbox is deleted, so the delete gives up in time to say so.
   * Optional.
   */
  teardownTimeLeft?(): number | undefined;
  /**
   * Aborts when the runner gives up on the test (cancelled run, the test's
   * own timeout): a running wait and the watermark read stop at once
   * instead of polling for a test that is gone. Optional.
   */
  readonly signal?: AbortSignal | undefined;
}

/** A test's inbox and the teardown that goes with it. */
export interface TestInbox {
  readonly inbox: Inbox;
  /**
   * Deletes the mailbox (idempotently), or keeps it when the test failed and
   * `keepOnFailure` is set. Never throws: a problem is reported as a note,
   * so it cannot replace the test's own result.
   */
  close(outcome: { readonly failed: boolean }): Promise<void>;
}

/** What a runner tells about its test's own timeout, for `timeLeft`. */
export interface TestTimeoutState {
  /** The test's timeout in ms; undefined, 0 or Infinity means none. */
  readonly timeoutMs: number | undefined;
  /** When the runner's timeout clock started (the same scale as `now`). */
  readonly startedAt: number;
  readonly now: number;
  /**
   * True once the test body has ended: afterEach hooks and fixture teardown
   * run on budgets of their own, so the test's timeout no longer cuts a wait.
   */
  readonly bodyFinished: boolean;
}

/**
 * Milliseconds left before the runner fails the test with its own timeout,
 * or undefined when nothing the wait does can run into it. Both adapters'
 * `TestRunnerBridge.timeLeft` are this, fed from their runner's test info.
 */
export function timeLeft({ timeoutMs, startedAt, now, bodyFinished }: TestTimeoutState): number | undefined {
  if (bodyFinished) return undefined;
  if (timeoutMs === undefined || !(timeoutMs > 0) || !Number.isFinite(timeoutMs)) return undefined;
  return timeoutMs - (now - startedAt);
}

/**
 * The teardown's delete gives up after this many request timeouts, and
 * never after `TEARDOWN_BUDGET_MS`, nor after the time the runner still
 * allows teardown: a note that the mailbox could not be deleted beats a
 * passing test turned into a teardown timeout.
 */
const TEARDOWN_REQUESTS = 2;
const TEARDOWN_BUDGET_MS = 10_000;

/** How long the teardown's delete may take, given what the runner still allows (`teardownTimeLeft`). */
export function teardownBudget(requestTimeout: number, teardownLeft: number | undefined): number {
  const budget = Math.min(TEARDOWN_BUDGET_MS, TEARDOWN_REQUESTS * requestTimeout);
  if (teardownLeft === undefined || !Number.isFinite(teardownLeft)) return budget;
  return Math.max(0, Math.min(budget, teardownLeft - deadlineMargin(teardownLeft)));
}

/**
 * How long before the runner's deadline a wait gives up, so it fails with
 * its own message (address, filter, what was seen) and the report still
 * has time to be written, instead of dying of the generic test timeout.
 */
export function deadlineMargin(timeLeftMs: number): number {
  return Math.min(1_000, Math.max(100, timeLeftMs / 10));
}

const OPTION_KEYS = new Set(['apiURL', 'domain', 'token', 'timeout', 'keepOnFailure', 'attach']);

/** Validates the plugin options at the edge, naming the offending key. */
export function validateTestOptions(options: unknown): MailroomTestOptions {
  if (options === undefined || options === null) return Object.freeze({});
  if (typeof options !== 'object') throw new TypeError(`Expected the \`mailroom\` option to be an object, got ${typeof options}`);
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw new TypeError(`Unknown \`mailroom\` option \`${key}\`; expected one of ${[...OPTION_KEYS].join(', ')}`);
  }
  const o = options as MailroomTestOptions;
  if (o.timeout !== undefined) assertMs('mailroom.timeout', o.timeout);
  for (const key of ['keepOnFailure', 'attach'] as const) {
    if (o[key] !== undefined && typeof o[key] !== 'boolean') throw new TypeError(`Expected \`mailroom.${key}\` to be a boolean, got ${typeof o[key]}`);
  }
  return Object.freeze({ ...o });
}

/** Creates the test's inbox (watermark read before this resolves). */
export async function openTestInbox(options: MailroomTestOptions | undefined, bridge: TestRunnerBridge): Promise<TestInbox> {
  const settings = validateTestOptions(options);
  const attach = settings.attach ?? true;
  const attachments: Promise<void>[] = [];
  const attachLater = (attachment: ReportAttachment): void => {
    // Attaching must never fail a wait: a report problem is only a note.
    attachments.push(Promise.resolve().then(() => bridge.attach(attachment)).catch((error: unknown) => void bridge.note(`mailroom could not attach ${attachment.name}: ${String(error)}`)));
  };

  const inbox = await createInbox({
    apiURL: settings.apiURL,
    domain: settings.domain,
    token: settings.token,
    timeout: settings.timeout ?? DEFAULT_TIMEOUT_MS,
    prefix: bridge.title,
    signal: bridge.signal,
    aroundWait: (wait, run) => bridge.step(wait.title, run),
    waitSignal: () => {
      const cut = deadlineSignal(bridge.timeLeft());
      const cancelled = bridge.signal;
      return cut && cancelled ? AbortSignal.any([cut, cancelled]) : (cut ?? cancelled);
    },
    onEvent: attach ? (event) => reportEvent(event, attachLater) : undefined,
  });

  return Object.freeze({
    inbox,
    async close({ failed }: { readonly failed: boolean }): Promise<void> {
      await Promise.all(attachments);
      if (failed && settings.keepOnFailure) {
        await bridge.note(`mailroom kept the mailbox of this failed test: ${inbox.address}`);
        return;
      }
      try {
        await inbox.delete({ timeout: teardownBudget(inbox.client.requestTimeout, bridge.teardownTimeLeft?.()) });
      } catch (error) {
        await bridge.note(`mailroom could not delete the mailbox ${inbox.address} after the test: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
  });
}

/** Fires shortly before the test's own deadline, or undefined when it has none. */
function deadlineSignal(left: number | undefined): AbortSignal | undefined {
  if (left === undefined || !Number.isFinite(left)) return undefined;
  const cutAfter = Math.max(0, left - deadlineMargin(left));
  const controller = new AbortController();
  const reason = new Error(`the test's own timeout was ${formatDuration(left)} away`);
  setTimeout(() => controller.abort(reason), cutAfter).unref();
  return controller.signal;
}

function reportEvent(event: InboxEvent, attach: (attachment: ReportAttachment) => void): void {
  if (event.type !== 'wait-end') return;
  if (event.outcome === 'received') {
    for (const mail of event.mails) for (const attachment of mailAttachments(mail)) attach(attachment);
  } else if (event.outcome === 'failed') {
    const seen = seenAttachment(event.error);
    if (seen) attach(seen);
  }
}

/** A received mail as report attachments: its HTML and its text, each when present. */
export function mailAttachments(mail: Mail): ReportAttachment[] {
  const name = `mail ${JSON.stringify(mail.subject)} to ${mail.address}`;
  const out: ReportAttachment[] = [];
  if (mail.html) out.push({ name: `${name}.html`, contentType: 'text/html', body: mail.html });
  if (mail.text || !mail.html) out.push({ name: `${name}.txt`, contentType: 'text/plain', body: mailText(mail) });
  return out;
}

function mailText(mail: Mail): string {
  const head = [`From: ${mail.from}`, `To: ${mail.to.join(', ')}`, `Subject: ${mail.subject}`, `Received: ${mail.receivedAt.toISOString()}`];
  if (mail.links.length > 0) head.push(`Links: ${mail.links.join(' ')}`);
  if (mail.codes.length > 0) head.push(`Codes: ${mail.codes.join(' ')}`);
  return `${head.join('\n')}\n\n${mail.text}`;
}

/** On a failed wait: the error's story and every mail it saw, one per line. */
export function seenAttachment(error: Error): ReportAttachment | undefined {
  let seen: readonly MailSummary[];
  let heading: string;
  let passedOver: string[] = [];
  if (error instanceof MailTimeoutError) {
    seen = [...error.rejected, ...error.unfetched];
    passedOver = error.skipped.map(({ summary, reason }) => `- ${formatSummary(summary)} (id ${summary.id}; ${SKIP_REASONS[reason].toLowerCase()})`);
    heading = `Waited ${formatDuration(error.elapsedMs)} of ${formatDuration(error.budgetMs)} at ${error.address} for ${error.filter}.`;
  } else if (error instanceof UnexpectedMailError) {
    seen = error.arrived;
    heading = `Mail arrived at ${error.address} that should not have.`;
  } else {
    return undefined;
  }
  const lines = [...seen.map((s) => `- ${formatSummary(s)} (id ${s.id})`), ...passedOver];
  if (lines.length === 0) lines.push('nothing arrived at all');
  return { name: 'mail seen and rejected', contentType: 'text/plain', body: `${heading}\n\n${error.message}\n\n${lines.join('\n')}\n` };
}
