// `expect(mail).toPassMailChecks(options?)`, runner-neutral. The Playwright
// and Vitest adapters only register it (the Playwright one adds its
// accessibility check and attaches the report); what it checks, when it
// fails and every word of its failure text live here.
import { validateCheckOptions, type MailCheckOptions } from '../checks/options.js';
import type { ExtraCheck, MailCheckReport, MailProblem } from '../checks/problem.js';
import { countProblems, formatProblems, formatReport, formatSupport } from '../checks/report-text.js';
import { checkMail } from '../checks/run-checks.js';
import { describeValue } from '../contract/validation.js';
import type { Mail } from '../inbox/mail.js';
import type { MatcherHintState } from './matcher.js';
import { mailAttachmentName, type ReportAttachment } from './report.js';
import { CallSite } from '../inbox/call-site.js';

export interface PassMailChecksOptions extends MailCheckOptions {
  /** What fails the matcher: any error (default), or any warning too. */
  readonly failOn?: 'error' | 'warning';
}

/** What the matcher is given: a `Mail`, or anything with its parts. */
export type CheckedMail = Pick<Mail, 'html' | 'text' | 'size' | 'subject'> & Partial<Pick<Mail, 'address' | 'id'>>;

export interface MailChecksMatcherResult {
  readonly pass: boolean;
  readonly message: () => string;
  readonly name: 'toPassMailChecks';
  readonly expected: string;
  readonly actual: string;
  readonly report: MailCheckReport;
}

/**
 * Runs the checks (`extraChecks`: those the adapter adds, unless the
 * options name their own) and judges the report: `pass` when no problem is
 * at or above `failOn`.
 */
export function matchMailChecks(
  received: unknown,
  options: PassMailChecksOptions = {},
  context: { readonly isNot?: boolean; readonly extraChecks?: readonly ExtraCheck[] } = {},
): Promise<MailChecksMatcherResult> {
  return CallSite.capture().run(() => mailChecks(received, options, context));
}

async function mailChecks(
  received: unknown,
  options: PassMailChecksOptions,
  context: { readonly isNot?: boolean; readonly extraChecks?: readonly ExtraCheck[] },
): Promise<MailChecksMatcherResult> {
  const mail = assertCheckable(received);
  const { failOn = 'error', ...checkOptions } = validateCheckOptions(options, ['failOn']) as PassMailChecksOptions;
  if (failOn !== 'error' && failOn !== 'warning') throw new TypeError(`Expected \`failOn\` to be "error" or "warning", got ${describeValue(failOn)}`);
  const extras = [
    ...(context.extraChecks ?? []).filter((extra) => !(checkOptions.with ?? []).some((own) => own.name === extra.name)),
    ...(checkOptions.with ?? []),
  ];
  const report = await checkMail(mail, { ...checkOptions, with: extras });
  const failing = report.problems.filter((p) => fails(p, failOn));
  const pass = failing.length === 0;
  const expected = failOn === 'error' ? 'no errors' : 'no errors or warnings';
  const actual = countProblems(report.problems);
  const named = `${JSON.stringify(mail.subject)}${mail.address ? ` to ${mail.address}` : ''}`;
  const message = () => {
    if (context.isNot) {
      return pass
        ? `Expected mail ${named} to fail its checks, but it passed them (${report.checked.join(', ')}): ${actual}.`
        : `Mail ${named} failed its checks, as expected.`;
    }
    if (pass) return `Mail ${named} passed its checks (${report.checked.join(', ')}): ${actual}.`;
    const story = `Mail ${named} failed its checks (${report.checked.join(', ')}): ${actual}${failOn === 'warning' && report.problems.some((p) => p.severity === 'warning') ? ', and warnings fail it (failOn: "warning")' : ''}.`;
    const support = formatSupport(report);
    return `${story}${support ? `\n${support}` : ''}\n\n${formatProblems(report.problems)}\n\nExpected: ${expected}\nReceived: ${actual}`;
  };
  return Object.freeze({ pass, message, name: 'toPassMailChecks' as const, expected, actual, report });
}

/** The whole failure text: the runner's hint line, then the result's message. */
export function mailChecksFailure(state: MatcherHintState, options: unknown, result: MailChecksMatcherResult): string {
  const hint = state.utils.matcherHint('toPassMailChecks', 'mail', options === undefined ? '' : 'options', { isNot: state.isNot, promise: state.promise });
  return `${hint}\n\n${result.message()}`;
}

/** The report as an attachment beside the mail's own (`mail "Subject" to a@… checks.txt`). */
export function mailChecksAttachment(mail: CheckedMail, report: MailCheckReport): ReportAttachment {
  return {
    name: `${mailAttachmentName({ subject: mail.subject, address: mail.address ?? '' })} checks.txt`,
    contentType: 'text/plain',
    body: `${formatReport(report, mail.subject)}\n`,
  };
}

function fails(p: MailProblem, failOn: 'error' | 'warning'): boolean {
  return p.severity === 'error' || failOn === 'warning';
}

function assertCheckable(value: unknown): CheckedMail {
  const v = value as Partial<CheckedMail> | null;
  if (
    v === null ||
    typeof v !== 'object' ||
    typeof v.html !== 'string' ||
    typeof v.text !== 'string' ||
    typeof v.size !== 'number' ||
    typeof v.subject !== 'string'
  ) {
    throw new TypeError(`toPassMailChecks expects a Mail (what inbox.expectMail() returns), got ${describeValue(value)}`);
  }
  return v as CheckedMail;
}
