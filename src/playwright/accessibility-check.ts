// The `accessibility` mail check: axe-core (through @axe-core/playwright)
// over the mail as `openMail` shows it, in a page of its own so the test's
// page stays where it is. Only this adapter has a browser at hand, so the
// check is handed to the engine as an extra check (`with`), and
// `toPassMailChecks` adds it by itself.
import type { Browser, BrowserContext, Page } from '@playwright/test';
import type { ExtraCheck, MailProblem } from '../checks/problem.js';
import { openMail } from './open-mail.js';

/**
 * The WCAG 2.x A and AA rules. Left out: `document-title` (a mail client
 * shows the subject, never the HTML's <title>) and axe's best practices
 * (landmarks and regions are for sites; a mail is one region).
 */
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
const NOT_FOR_MAIL = ['document-title'];

// A mail whose remote images never answer must not hold the check: axe runs on what has loaded by then.
const LOAD_TIMEOUT_MS = 5_000;

/** Where the mail is shown: a fresh context of a browser, or a new page beside the given page or context. */
export type AccessibilityTarget = Browser | BrowserContext | Page;

/**
 * The accessibility check for `mail.check({ with: [accessibilityCheck(browser)] })`
 * (any of `browser`, `context` or `page`; a page is left where it is).
 */
export function accessibilityCheck(target: AccessibilityTarget | (() => Promise<AccessibilityTarget>)): ExtraCheck {
  return {
    name: 'accessibility',
    run: async (mail) => {
      const resolved = typeof target === 'function' ? await target() : target;
      const { page, close } = await pageOf(resolved);
      try {
        page.setDefaultNavigationTimeout(LOAD_TIMEOUT_MS);
        await openMail(page, mail).catch((error: unknown) => {
          if (!(error instanceof Error && error.name === 'TimeoutError')) throw error;
        });
        const { AxeBuilder } = await import('@axe-core/playwright');
        // Legacy mode runs axe in the mail's page itself; the default opens a second page to finish the run, for cross-origin frames a mail never has.
        const results = await new AxeBuilder({ page }).withTags(TAGS).disableRules(NOT_FOR_MAIL).setLegacyMode(true).analyze();
        return results.violations.map(problemOf);
      } finally {
        await close();
      }
    },
  };
}

type Violation = Awaited<ReturnType<InstanceType<typeof import('@axe-core/playwright').AxeBuilder>['analyze']>>['violations'][number];

/**
 * axe's help page without its `?application=` tag: the tag says which
 * integration configured axe, and @axe-core/playwright skips that step when
 * injecting axe takes over a second (a loaded machine), so the same problem
 * would read `application=playwright` on one run and `axeAPI` on the next.
 */
function helpPage(url: string): string {
  return url.replace(/\?application=[^&#]*$/, '');
}

function problemOf(violation: Violation): MailProblem {
  const [first] = violation.nodes;
  const helpUrl = helpPage(violation.helpUrl);
  const more = violation.nodes.length > 1 ? ` and ${violation.nodes.length - 1} more` : '';
  const where = first ? excerpt(first.html) : '';
  return {
    check: 'accessibility',
    severity: violation.impact === 'critical' || violation.impact === 'serious' ? 'error' : 'warning',
    message: `${violation.help} (axe ${violation.id}, ${violation.impact ?? 'no impact given'}): ${where}${more}.`,
    // axe's description says what the rule wants ("Ensure every <img> has alternative text…"); its page says how.
    fix: `${violation.description.replace(/\.$/, '')}; see ${helpUrl}.`,
    rule: violation.id,
    helpUrl,
    where,
  };
}

function excerpt(html: string): string {
  const flat = html.replace(/\s+/g, ' ');
  return flat.length > 100 ? `${flat.slice(0, 99)}…` : flat;
}

async function pageOf(target: AccessibilityTarget): Promise<{ page: Page; close: () => Promise<void> }> {
  if ('newContext' in target) {
    const context = await target.newContext({ viewport: { width: 800, height: 600 } });
    return { page: await context.newPage(), close: () => context.close() };
  }
  const context = 'newPage' in target ? target : target.context();
  const page = await context.newPage();
  return { page, close: () => page.close() };
}
