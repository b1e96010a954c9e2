// `mail.check()`: runs the chosen checks over one mail and gathers their
// problems into one report. The client's `Mail`, both runners' matchers and
// the server's Checks route all come here, so a mail reads the same wherever
// it is checked. The bounds (bounds.ts) are kept here, once for every
// check: the HTML is read once, by the first check that needs it; a check of
// HTML past the bounds reports that instead of running; and each check's
// problems are capped.
import { capProblems, MAX_CHECKED_HTML_BYTES, tooDeepToCheck, tooLargeToCheck } from './bounds.js';
import { checkHtml } from './html-check.js';
import { readHtml, type HtmlReading } from './html-reading.js';
import { checkImages } from './images-check.js';
import { checkLinks } from './links-check.js';
import { validateCheckOptions, type MailCheckOptions } from './options.js';
import { CHECK_NAMES, type CheckName, type CheckableMail, type ExtraCheck, type MailCheckReport, type MailProblem } from './problem.js';
import type { ClientSupport } from './support-score.js';
import { checkSize, utf8Bytes } from './size-check.js';
import { checkText } from './text-check.js';

/**
 * Checks a mail. Every built-in check runs unless `only` or `skip` says
 * otherwise; `accessibility` needs a browser, so it runs only when an extra
 * check for it is given in `with` (the Playwright adapter gives one).
 */
export async function checkMail(mail: CheckableMail, options?: MailCheckOptions): Promise<MailCheckReport> {
  const o = validateCheckOptions(options);
  const wanted = (name: CheckName) => (o.only === undefined || o.only.includes(name)) && !(o.skip ?? []).includes(name);
  const extras = new Map<CheckName, ExtraCheck>((o.with ?? []).map((extra) => [extra.name, extra]));
  let reading: HtmlReading | undefined;
  let htmlBytes: number | undefined;
  let support: readonly ClientSupport[] | undefined;
  /** A check that reads the HTML, or the one problem saying why it cannot: the HTML is too large (for `sized` checks) or nested too deep. */
  const withHtml = (check: CheckName, sized: boolean, run: (reading: HtmlReading) => Promise<MailProblem[]> | MailProblem[]) => {
    if (sized) {
      htmlBytes ??= utf8Bytes(mail.html);
      if (htmlBytes > MAX_CHECKED_HTML_BYTES) return [tooLargeToCheck(check, htmlBytes)];
    }
    reading ??= readHtml(mail.html);
    return reading.tooDeep === undefined ? run(reading) : [tooDeepToCheck(check, reading.tooDeep)];
  };
  const runs: Partial<Record<CheckName, () => Promise<readonly MailProblem[]> | readonly MailProblem[]>> = {
    links: () => withHtml('links', false, (reading) => checkLinks(mail, reading, o.links, o.signal)),
    html: () =>
      withHtml('html', true, async (reading) => {
        const result = await checkHtml(mail, reading, o.html);
        if (result.support.length > 0) support = result.support;
        return result.problems;
      }),
    images: () => withHtml('images', true, (reading) => checkImages(reading)),
    size: () => checkSize(mail, o.size),
    text: () => checkText(mail),
  };
  const checked = CHECK_NAMES.filter((name) => wanted(name) && (extras.has(name) || runs[name] !== undefined));
  const found = await Promise.all(
    checked.map(async (name) => capProblems(name, await (extras.has(name) ? extras.get(name)!.run(mail, o.signal) : runs[name]!()))),
  );
  return reportOf(found.flat(), checked, support);
}

/** A report of these problems, errors first, each group in the checks' order, with the html check's support scores when it gave any. */
export function reportOf(problems: readonly MailProblem[], checked: readonly CheckName[], support?: readonly ClientSupport[]): MailCheckReport {
  const order = (p: MailProblem) => (p.severity === 'error' ? 0 : 1) * 100 + CHECK_NAMES.indexOf(p.check);
  const sorted = [...problems].sort((a, b) => order(a) - order(b));
  return Object.freeze({
    ok: !sorted.some((p) => p.severity === 'error'),
    problems: Object.freeze(sorted),
    checked: Object.freeze([...checked]),
    ...(support === undefined ? {} : { support: Object.freeze(support.map((s) => Object.freeze({ ...s }))) }),
  });
}
