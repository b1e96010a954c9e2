// What a mail check finds, in one shape for every check: the client's
// `mail.check()`, both runners' `toPassMailChecks` and the web UI's Checks
// tab read the same report.
import type { ClientSupport } from './support-score.js';

export type { ClientSupport };

/** The checks, by the name a problem carries and options select. */
export const CHECK_NAMES = ['links', 'html', 'images', 'size', 'text', 'accessibility'] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

export type Severity = 'error' | 'warning';

/**
 * One thing wrong with a mail. `message` says what is wrong, naming the
 * link, feature or image; `fix` says what to change. The other fields are
 * the particulars, for a program (which ones depends on the check).
 */
export interface MailProblem {
  readonly check: CheckName;
  readonly severity: Severity;
  readonly message: string;
  readonly fix: string;
  /** links: the URL checked; images: the image's `src`. */
  readonly url?: string;
  /** links: the link's text (or "(text part)" for a URL in the text part). */
  readonly text?: string;
  /** links: the HTTP status of the last answer, when there was one. */
  readonly status?: number;
  /** html: the caniemail feature, e.g. `display:flex` (what `html.accept` takes, beside its slug). */
  readonly feature?: string;
  /** html: the clients (caniemail names, e.g. `outlook.windows`) that lack it. */
  readonly clients?: readonly string[];
  /** html, images, accessibility: where in the mail, as a short excerpt of its HTML. */
  readonly where?: string;
  /** size: the bytes measured and the limit they are over. */
  readonly bytes?: number;
  readonly limit?: number;
  /** accessibility: the axe rule id and its help page. */
  readonly rule?: string;
  readonly helpUrl?: string;
}

/** What `mail.check()` answers. */
export interface MailCheckReport {
  /** No problem is an error. */
  readonly ok: boolean;
  readonly problems: readonly MailProblem[];
  /** The checks that ran, in the order they are listed in `CHECK_NAMES`. */
  readonly checked: readonly CheckName[];
  /**
   * When the html check ran on HTML it could read: for each chosen client,
   * how much of the mail it shows as written (0 to 100, scored as Mailpit
   * scores it, from caniemail's data) and the feature that costs the most.
   */
  readonly support?: readonly ClientSupport[];
}

/** What a check reads of a mail: the client's `Mail` and the server's stored message both have it. */
export interface CheckableMail {
  /** The HTML part, '' when there is none. */
  readonly html: string;
  /** The text/plain part, '' when there is none. */
  readonly text: string;
  /** The whole message as received, in bytes. */
  readonly size: number;
  readonly subject: string;
}

/**
 * A check the engine does not run itself, because it needs something only
 * one side has: the Playwright adapter's `accessibility` check needs a browser.
 */
export interface ExtraCheck {
  readonly name: CheckName;
  run(mail: CheckableMail, signal: AbortSignal | undefined): Promise<readonly MailProblem[]>;
}

export function problem(fields: MailProblem): MailProblem {
  return Object.freeze(fields);
}
