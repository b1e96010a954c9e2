// A check report as a person reads it (the matchers' failure text, the
// report attachment): one numbered entry per problem, what is wrong on its
// first line and what to do on the next; and the html check's support score
// of each client, on one line.
import { plural } from '../contract/format.js';
import type { MailCheckReport, MailProblem, Severity } from './problem.js';
import { formatScores } from './support-score.js';

export function formatProblem(p: MailProblem, index: number): string {
  return `${index + 1}. [${p.check} ${p.severity}] ${p.message}\n   Fix: ${p.fix}`;
}

/** Each problem, numbered, with its fix. */
export function formatProblems(problems: readonly MailProblem[]): string {
  return problems.map(formatProblem).join('\n');
}

/** `2 errors, 1 warning`; `no problems`. */
export function countProblems(problems: readonly MailProblem[]): string {
  const count = (severity: Severity) => problems.filter((p) => p.severity === severity).length;
  const parts = [plural(count('error'), 'error'), plural(count('warning'), 'warning')].filter((s) => !s.startsWith('0 '));
  return parts.length === 0 ? 'no problems' : parts.join(', ');
}

/** `Client support (how much of the mail each shows as written): gmail 100%, outlook 93.5% (display:flex).`; '' without scores. */
export function formatSupport(report: MailCheckReport): string {
  return report.support && report.support.length > 0 ? `Client support (how much of the mail each shows as written): ${formatScores(report.support)}.` : '';
}

/** The whole report: which checks ran, the tally and the support scores, then each problem. */
export function formatReport(report: MailCheckReport, subject: string, problems: readonly MailProblem[] = report.problems): string {
  const head = [`Mail checks of ${JSON.stringify(subject)} (${report.checked.join(', ') || 'none'}): ${countProblems(report.problems)}.`, formatSupport(report)]
    .filter(Boolean)
    .join('\n');
  return problems.length === 0 ? head : `${head}\n\n${formatProblems(problems)}`;
}
