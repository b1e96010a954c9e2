// One test's inbox, from setup to teardown, for runner plugins.
//
// Both adapters (Playwright, Vitest) do the same things around a test: make
// a fresh inbox whose prefix reads like the test's title and whose
// watermark is taken before the body runs, report each wait as a step,
// attach what arrived (or what was seen and rejected), keep every wait
// inside the test's own deadline, and delete the mailbox afterwards without
// ever masking the test's result. All of that lives here; an adapter only
// translates its runner's test info into a `TestRunnerBridge`.
import type { SourceLocation } from '../inbox/call-site.js';
import { createInbox, type Inbox } from '../inbox/inbox.js';
import { DEFAULT_TIMEOUT_MS } from '../inbox/inbox-options.js';
import { deadlineCut, teardownBudget } from './deadlines.js';
import type { Mail } from '../inbox/mail.js';
import { mailAttachmentName, reportEvent, type ReportAttachment } from './report.js';
import { formatTimeline } from '../contract/attempt-timeline.js';
import { formatWebhookTimeline } from './webhook-timeline.js';
import { DEFAULT_SCREENSHOTS, validateTestOptions, type MailroomTestOptions } from './test-options.js';

/** How a runner shows things: an adapter implements this with its own API. */
export interface TestRunnerBridge {
  /** The test's title, for a readable address prefix. */
  readonly title: string;
  /** Where the test is, e.g. `signup.test.ts > signup > sends a code`: notes on stderr name it. */
  readonly titlePath: string;
  /**
   * Runs a wait inside a report step titled like a sentence. `calledFrom`
   * is the test's line that called the wait, when known: the step points
   * there. The wait's error already carries the test's frames; a step that
   * replaces them with its own (Playwright's `box`) hides the line.
   */
  step<T>(title: string, run: () => Promise<T>, calledFrom?: SourceLocation): Promise<T>;
  /** Adds a document to the test's report. */
  attach(attachment: ReportAttachment): Promise<void> | void;
  /**
   * Adds a note (kept mailbox, teardown trouble) to the test's report, as a
   * `mailroom` annotation, when the runner still accepts one; may do nothing
   * or throw when it does not. Every note is on stderr as well.
   */
  annotate(message: string): Promise<void> | void;
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
  /**
   * Renders a mail in a browser and attaches the PNG under `name`: the
   * `screenshots` option. Optional: a runner without a browser leaves it
   * out, and then any `screenshots` but `'off'` is refused at setup.
   */
  attachPicture?(mail: Mail, name: string): Promise<void>;
  /** The runner's name, for the refusal of an option it cannot honour (`Vitest`). */
  readonly runnerName?: string;
}

/** A test's inbox and the teardown that goes with it. */
export interface TestInbox {
  readonly inbox: Inbox;
  /**
   * Deletes the mailbox (idempotently), or keeps it when the test failed and
   * `keepOnFailure` is set. Never throws: a problem is reported as a note,
   * so it cannot replace the test's own result.
   */
  readonly close: (outcome: { readonly failed: boolean }) => Promise<void>;
}

/** Creates the test's inbox (watermark read before this resolves). */
export async function openTestInbox(options: MailroomTestOptions | undefined, bridge: TestRunnerBridge): Promise<TestInbox> {
  const settings = validateTestOptions(options);
  if (settings.screenshots !== undefined && settings.screenshots !== 'off' && !bridge.attachPicture) {
    throw new TypeError(
      `\`mailroom.screenshots: "${settings.screenshots}"\` needs a browser to render mail in, and ${bridge.runnerName ?? 'this runner'} has none: ` +
        `screenshots are Playwright-only. Remove the option or set it to "off"; the HTML and text of each mail are attached either way.`,
    );
  }
  const screenshots = settings.screenshots ?? (bridge.attachPicture ? DEFAULT_SCREENSHOTS : 'off');
  const received: Mail[] = [];
  const note = async (message: string): Promise<void> => {
    // stderr is where a console run shows it, whatever the reporter; it
    // names the test, since a runner may print it under another one.
    console.error(`${message} (test: ${bridge.titlePath})`);
    try {
      await bridge.annotate(message);
    } catch {
      // The runner no longer takes notes for this test; stderr has it.
    }
  };
  const attach = settings.attach ?? true;
  const attachments: Promise<void>[] = [];
  const attachLater = (attachment: ReportAttachment): void => {
    // Attaching must never fail a wait: a report problem is only a note.
    attachments.push(
      Promise.resolve()
        .then(() => bridge.attach(attachment))
        .catch((error: unknown) => note(`mailroom could not attach ${attachment.name}: ${String(error)}`)),
    );
  };

  const inbox = await createInbox({
    backend: settings.backend,
    apiURL: settings.apiURL,
    credentials: settings.credentials,
    domain: settings.domain,
    token: settings.token,
    timeout: settings.timeout ?? DEFAULT_TIMEOUT_MS,
    prefix: bridge.title,
    signal: bridge.signal,
    aroundWait: (wait, run) => bridge.step(wait.title, run, wait.calledFrom),
    waitSignal: () => {
      const cut = deadlineCut(bridge.timeLeft());
      const cancelled = bridge.signal;
      if (!cut) return cancelled;
      return cancelled ? { ...cut, signal: AbortSignal.any([cut.signal, cancelled]) } : cut;
    },
    onEvent: attach
      ? (event) => {
          if (event.type === 'wait-end' && event.outcome === 'received') received.push(...event.mails);
          reportEvent(event, attachLater);
        }
      : undefined,
  });

  return Object.freeze({
    inbox,
    async close({ failed }: { readonly failed: boolean }): Promise<void> {
      await Promise.all(attachments);
      if (attach && (screenshots === 'on' || (screenshots === 'only-on-failure' && failed))) {
        for (const mail of received) {
          const name = `${mailAttachmentName(mail)}.png`;
          try {
            await bridge.attachPicture!(mail, name);
          } catch (error) {
            await note(`mailroom could not attach a picture of ${name}: ${error instanceof Error ? error.message : String(error)}`);
          }
        }
      }
      // A test that used the SMTP lab gets its attempt timeline in the report, read before the mailbox goes.
      if (attach && inbox.smtp.used && inbox.client.backend === 'mailroom') {
        try {
          const attempts = await inbox.client.smtpAttempts(inbox.address, { timeout: inbox.client.requestTimeout });
          await bridge.attach({
            name: `smtp attempts to ${inbox.address}.txt`,
            contentType: 'text/plain',
            body: `${formatTimeline(inbox.address, attempts)}\n`,
          });
        } catch (error) {
          await note(`mailroom could not attach the SMTP attempts of ${inbox.address}: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
      // Webhooks the test registered: their timelines in the report, then removed, kept mailbox or not.
      if (inbox.webhooks.used) {
        for (const webhook of inbox.webhooks.list()) {
          if (!attach) break;
          try {
            const deliveries = await webhook.deliveries();
            await bridge.attach({
              name: `webhook ${webhook.id} deliveries.txt`,
              contentType: 'text/plain',
              body: `${formatWebhookTimeline(webhook, deliveries)}\n`,
            });
          } catch (error) {
            await note(`mailroom could not attach the deliveries of webhook ${webhook.id}: ${error instanceof Error ? error.message : String(error)}`);
          }
        }
        try {
          await inbox.webhooks.removeAll();
        } catch (error) {
          await note(`mailroom could not remove the webhooks of ${inbox.address} after the test: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
      if (failed && settings.keepOnFailure) {
        await note(`mailroom kept the mailbox of this failed test: ${inbox.address}`);
        return;
      }
      try {
        await inbox.delete({ timeout: teardownBudget(inbox.client.requestTimeout, bridge.teardownTimeLeft?.()) });
      } catch (error) {
        await note(`mailroom could not delete the mailbox ${inbox.address} after the test: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
  });
}
