// What the checks read and report at most, so that checking any mail takes
// bounded time and gives a report a person can read, whoever wrote the
// mail: its HTML comes from anyone who can send to a test address
// (docs/security.md, threat model 2), and the checks run in the test's own
// process and, for the web UI, on the server.
//
// - The HTML's size, for `html` and `images`. caniemail's time grows with
//   the markup: about 1 s for each 100 KB of styled elements on the 2-core
//   development machine. Gmail clips a mail's HTML at 102 KB, so a mail meant
//   for people stays under that (an MJML or newsletter template's output is
//   usually well under it); 256 KB leaves two and a half times that for a
//   mail in the works (unminified, comments left in) and bounds a check at a
//   few seconds. A mail past it already fails the `size` check.
// - How deep elements nest, for every check that reads the HTML. caniemail
//   walks the tree by recursion (past about 5,000 levels the stack
//   overflows), and the parser's stack of open elements costs each new
//   element as much as its depth. A mail nests a few dozen levels; thousands
//   come from elements never closed (`<i>` after `<i>`). The reading stops
//   at the limit, so its time stays in proportion to the HTML.
// - The problems one check reports: a person reads the first hundred and
//   fixes those; the rest are counted in one last problem.
import { formatBytes } from './size-check.js';
import { problem, type CheckName, type MailProblem } from './problem.js';

export const MAX_CHECKED_HTML_BYTES = 256 * 1024;
export const MAX_HTML_DEPTH = 500;
export const MAX_PROBLEMS_PER_CHECK = 100;

/** The one problem a check of HTML over `MAX_CHECKED_HTML_BYTES` reports instead of running. */
export function tooLargeToCheck(check: CheckName, htmlBytes: number): MailProblem {
  return problem({
    check,
    severity: 'error',
    message: `The HTML is ${formatBytes(htmlBytes)}, too large to check: the ${check} check reads at most ${formatBytes(MAX_CHECKED_HTML_BYTES)} of HTML (Gmail clips a mail's HTML at 102 KB anyway).`,
    fix: 'Cut the HTML under 102 KB (inline less CSS, drop comments and unused markup, minify it), then check again.',
    bytes: htmlBytes,
    limit: MAX_CHECKED_HTML_BYTES,
  });
}

/** The one problem a check of HTML nested past `MAX_HTML_DEPTH` reports instead of running; `where` is the element past the limit. */
export function tooDeepToCheck(check: CheckName, where: string): MailProblem {
  return problem({
    check,
    severity: 'error',
    message: `The HTML nests elements more than ${MAX_HTML_DEPTH} deep (${where}), too deep to check: the ${check} check reads at most ${MAX_HTML_DEPTH} levels.`,
    fix: 'Close the elements the HTML opens: an element left open (an <i>, <b>, <div> or <td> without its end tag) holds everything after it.',
    where,
  });
}

/**
 * At most `MAX_PROBLEMS_PER_CHECK` of a check's problems, errors first, and
 * then one saying how many more there were (an error when any of those is,
 * so the report's verdict is the same).
 */
export function capProblems(check: CheckName, problems: readonly MailProblem[]): readonly MailProblem[] {
  if (problems.length <= MAX_PROBLEMS_PER_CHECK) return problems;
  const ordered = [...problems.filter((p) => p.severity === 'error'), ...problems.filter((p) => p.severity !== 'error')];
  const leftOut = ordered.slice(MAX_PROBLEMS_PER_CHECK);
  const errors = leftOut.filter((p) => p.severity === 'error').length;
  const warnings = leftOut.length - errors;
  const counted = [errors > 0 ? plural(errors, 'error') : '', warnings > 0 ? plural(warnings, 'warning') : ''].filter(Boolean).join(', ');
  return [
    ...ordered.slice(0, MAX_PROBLEMS_PER_CHECK),
    problem({
      check,
      severity: errors > 0 ? 'error' : 'warning',
      message: `The ${check} check found ${plural(leftOut.length, 'more problem')} (${counted}), left out of this report: a check reports at most ${MAX_PROBLEMS_PER_CHECK}.`,
      fix: 'Fix the problems above and check again: the rest are reported once there are fewer.',
    }),
  ];
}

function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}
