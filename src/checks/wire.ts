// A check report on the wire (`GET /api/v1/message/{id}/checks`, the web
// UI's Checks tab): the report as `mail.check()` answers it, its one
// two-word field in the wire's snake_case, with the html check's support
// score of each client when it gave them.
import type { ClientSupport, MailCheckReport, MailProblem } from './problem.js';

export type WireProblem = Omit<MailProblem, 'helpUrl'> & { readonly help_url?: string };

export interface WireCheckReport {
  readonly ok: boolean;
  readonly checked: MailCheckReport['checked'];
  readonly problems: readonly WireProblem[];
  readonly support?: readonly ClientSupport[];
}

export function checkReportToWire(report: MailCheckReport): WireCheckReport {
  return {
    ok: report.ok,
    checked: report.checked,
    problems: report.problems.map(({ helpUrl, ...rest }) => (helpUrl === undefined ? rest : { ...rest, help_url: helpUrl })),
    ...(report.support === undefined ? {} : { support: report.support }),
  };
}
