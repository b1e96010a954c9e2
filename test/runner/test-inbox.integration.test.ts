// The runner-neutral test-inbox lifecycle against the real embedded server.
// The bridge here records what an adapter would show in its report; the
// server, SMTP and HTTP are real.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { MailTimeoutError, MailroomError } from '../../src/index.js';
import { layerTestOptions, openTestInbox, timeLeft, validateTestOptions, type ReportAttachment, type TestRunnerBridge } from '../../src/runner/index.js';
import { deadlineCut, teardownBudget } from '../../src/runner/deadlines.js';
import { send, startTestServer } from '../support/server.js';

let server: MailroomServer;
beforeAll(async () => {
  // Strict about domains (catchAll off), so an unserved domain's refusal can be seen.
  server = await startTestServer({ catchAll: false });
});
afterAll(async () => {
  await server?.close();
});

interface Recorded {
  readonly bridge: TestRunnerBridge;
  readonly steps: string[];
  readonly attachments: ReportAttachment[];
  readonly notes: string[];
}

function recordingBridge(title: string, timeLeft: () => number | undefined = () => undefined): Recorded {
  const steps: string[] = [];
  const attachments: ReportAttachment[] = [];
  const notes: string[] = [];
  const bridge: TestRunnerBridge = {
    title,
    titlePath: `test-inbox.integration.test.ts > ${title}`,
    step: (stepTitle, run) => {
      steps.push(stepTitle);
      return run();
    },
    attach: (attachment) => void attachments.push(attachment),
    annotate: (message) => void notes.push(message),
    timeLeft,
  };
  return { bridge, steps, attachments, notes };
}

const connection = () => ({ apiURL: server.apiURL, domain: server.domains[0] });

describe.concurrent('openTestInbox', () => {
  it('names the address after the test, spends no list call in setup, and deletes the mailbox on close', async () => {
    const { bridge, notes } = recordingBridge('signup › sends the Confirm mail');
    const { inbox, close } = await openTestInbox(connection(), bridge);
    expect(inbox.address).toMatch(/^signup-sends-the-confirm-mail-[a-z2-7]{16}@mailroom\.test$/);
    // A fresh address's watermark is known without asking (inbox/service-check.ts).
    expect(inbox.watermark).toBeNull();
    expect(server.stats(inbox.address)).toMatchObject({ list: 0 });

    await send(server, inbox.address, { subject: 'Confirm your email' });
    await close({ failed: false });
    expect(server.stats(inbox.address).deleteMailbox).toBe(1);
    expect(await inbox.messages()).toEqual([]);
    expect(notes).toEqual([]);
  });

  it('reports each wait as a step and attaches the mail it received', async () => {
    const { bridge, steps, attachments } = recordingBridge('attaches');
    const { inbox, close } = await openTestInbox(connection(), bridge);
    await send(server, inbox.address, { subject: 'Confirm your email', text: 'Your code is 123456', html: '<p>Your code is <b>123456</b></p>' });
    const mail = await inbox.expectMail({ subject: 'confirm' });
    await close({ failed: false });

    expect(mail.codes).toEqual(['123456']);
    expect(steps).toEqual([`Wait for mail to ${inbox.address} with subject ~ "confirm"`]);
    expect(attachments.map((a) => [a.name, a.contentType])).toEqual([
      [`mail "Confirm your email" to ${inbox.address}.html`, 'text/html'],
      [`mail "Confirm your email" to ${inbox.address}.txt`, 'text/plain'],
    ]);
    expect(attachments[1]?.body).toContain('Codes: 123456');
  });

  it('on a timeout attaches what was seen and rejected', async () => {
    const { bridge, attachments } = recordingBridge('rejects');
    const { inbox, close } = await openTestInbox({ ...connection(), timeout: 1_500 }, bridge);
    await send(server, inbox.address, { subject: 'Welcome to Acme' });
    const error = await inbox.expectMail({ subject: 'Invoice' }).catch((e: unknown) => e);
    await close({ failed: true });

    expect(error).toBeInstanceOf(MailTimeoutError);
    const seen = attachments.find((a) => a.name === 'mail seen and rejected');
    expect(seen?.body).toContain(`at ${inbox.address} for subject ~ "Invoice"`);
    expect(seen?.body).toContain('"Welcome to Acme" from Acme <hello@acme.example>');
  });

  it('ends a wait before the test deadline, with its own message naming the cause', async () => {
    const { bridge } = recordingBridge('deadline', () => 1_500);
    const { inbox, close } = await openTestInbox(connection(), bridge);
    const started = performance.now();
    const error = (await inbox.expectMail({ subject: 'Never' }).catch((e: unknown) => e)) as MailTimeoutError;
    const took = performance.now() - started;
    await close({ failed: true });

    expect(error).toBeInstanceOf(MailTimeoutError);
    expect(error.cutShort).toBe(true);
    expect(error.message).toContain(`No mail matching subject ~ "Never" arrived at ${inbox.address}`);
    expect(error.message).toContain("cut short of its 30 s budget (the test's own timeout was 1.5 s away)");
    // When the cut fires (1,350 ms in) is deadlineCut's, tested on fake
    // timers below. Here, counts the load cannot raise: a wait cut at
    // 1.35 s has made at most two checks (the floor is a second); one that
    // ran on towards its 30 s budget makes one more every 1-1.5 s. The one
    // wall-clock bound left is far from both, for a cut that never fired.
    expect(error.checks).toBeLessThanOrEqual(2);
    expect(server.stats(inbox.address).list).toBeLessThanOrEqual(2);
    expect(took).toBeLessThan(15_000);
  });

  it("stops a running wait at once when the runner's signal aborts (cancelled run)", async () => {
    const controller = new AbortController();
    const { bridge } = recordingBridge('cancelled');
    const { inbox, close } = await openTestInbox(connection(), { ...bridge, signal: controller.signal });
    const started = performance.now();
    setTimeout(() => controller.abort(new Error('the run was cancelled')), 300);
    const error = (await inbox.expectMail({ subject: 'Never' }).catch((e: unknown) => e)) as MailTimeoutError;
    const took = performance.now() - started;
    await close({ failed: true });

    expect(error).toBeInstanceOf(MailTimeoutError);
    expect(error.cutShort).toBe(true);
    expect(error.message).toContain('(the run was cancelled)');
    // The abort came 300 ms in, before the floor allowed a second check: at
    // most the first one (a wait that missed the abort would keep checking
    // every 1-1.5 s towards its 30 s budget).
    expect(error.checks).toBeLessThanOrEqual(1);
    expect(server.stats(inbox.address).list).toBeLessThanOrEqual(1);
    expect(took).toBeLessThan(15_000);
  });

  it('with keepOnFailure keeps a failed test mailbox and says where it is', async () => {
    const { bridge, notes } = recordingBridge('kept');
    const { inbox, close } = await openTestInbox({ ...connection(), keepOnFailure: true }, bridge);
    await send(server, inbox.address, { subject: 'Evidence' });
    await close({ failed: true });
    expect(server.stats(inbox.address).deleteMailbox).toBe(0);
    expect(notes).toEqual([`mailroom kept the mailbox of this failed test: ${inbox.address}`]);
    expect((await inbox.messages()).map((m) => m.subject)).toEqual(['Evidence']);
  });

  it('with keepOnFailure still deletes the mailbox of a passing test', async () => {
    const { bridge } = recordingBridge('passed');
    const { inbox, close } = await openTestInbox({ ...connection(), keepOnFailure: true }, bridge);
    await close({ failed: false });
    expect(server.stats(inbox.address).deleteMailbox).toBe(1);
  });

  // Slow on purpose, about 10 s: with no limit from the runner the delete
  // retries for its whole default budget (two request timeouts, at most
  // 10 s) before it gives up and writes the note. It runs beside this
  // file's other tests; the short budget has the test after it.
  it('reports a teardown failure as a note instead of throwing', async () => {
    const { bridge, notes } = recordingBridge('teardown');
    const { inbox, close } = await openTestInbox(connection(), bridge);
    server.faults.inject({ address: inbox.address, route: 'any', times: 50, fault: { kind: 'status', status: 500 } });
    try {
      await expect(close({ failed: false })).resolves.toBeUndefined();
    } finally {
      server.faults.clear();
    }
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain(`mailroom could not delete the mailbox ${inbox.address} after the test:`);
  });

  it('gives up deleting within the time the runner allows teardown, and says so in a note', async () => {
    const { bridge, notes } = recordingBridge('short teardown');
    const { inbox, close } = await openTestInbox(connection(), { ...bridge, teardownTimeLeft: () => 3_000 });
    server.faults.inject({ address: inbox.address, route: 'any', times: 1_000, fault: { kind: 'status', status: 503 } });
    const deletes = vi.spyOn(inbox, 'delete');
    const started = performance.now();
    await expect(close({ failed: false })).resolves.toBeUndefined();
    const took = performance.now() - started;
    // 3 s left, minus the margin (a tenth): the delete's budget is 2,700 ms,
    // not its own 10 s. That it keeps to a budget is the retry's promise
    // (test/wait/retry.test.ts, on a fake clock); the wall clock here only
    // tells "kept to 2.7 s" from "ran its 10 s", far from either. The
    // budget is long enough that a slow first answer beside stress-ng
    // cannot use it all: with 1.35 s one 503 took it, and the delete was
    // never retried (a flake run of stop 34).
    expect(deletes.mock.calls).toEqual([[{ timeout: 2_700 }]]);
    expect(took).toBeGreaterThanOrEqual(2_000);
    expect(took).toBeLessThan(7_000);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain(`mailroom could not delete the mailbox ${inbox.address} after the test: `);
    expect(notes[0]).toContain('503 unavailable');
    expect(server.stats(inbox.address).deleteMailbox).toBeGreaterThanOrEqual(2);
  });

  it('does not attach anything when attach is false', async () => {
    const { bridge, attachments } = recordingBridge('quiet');
    const { inbox, close } = await openTestInbox({ ...connection(), attach: false }, bridge);
    await send(server, inbox.address, { subject: 'Hello' });
    await inbox.expectMail();
    await close({ failed: false });
    expect(attachments).toEqual([]);
  });
});

describe.concurrent('the screenshots option', () => {
  /** A bridge that can picture mail: records what it was asked to picture. */
  function picturingBridge(title: string): Recorded & { pictured: string[] } {
    const recorded = recordingBridge(title);
    const pictured: string[] = [];
    return { ...recorded, pictured, bridge: { ...recorded.bridge, attachPicture: async (mail, name) => void pictured.push(`${mail.subject} as ${name}`) } };
  }

  it.for([
    [undefined, false, 0],
    [undefined, true, 2],
    ['only-on-failure', true, 2],
    ['on', false, 2],
    ['off', true, 0],
  ] as const)('%s, failed %s: pictures %i mails', async ([screenshots, failed, count], { expect }) => {
    const { bridge, pictured } = picturingBridge(`pictures ${screenshots} ${failed}`);
    const { inbox, close } = await openTestInbox({ ...connection(), screenshots }, bridge);
    await send(server, inbox.address, { subject: 'One' });
    await inbox.expectMail({ subject: 'One' });
    await send(server, inbox.address, { subject: 'Two' });
    await inbox.expectMail({ subject: 'Two' });
    await close({ failed });
    expect(pictured).toHaveLength(count);
    if (count > 0) expect(pictured).toEqual([`One as mail "One" to ${inbox.address}.png`, `Two as mail "Two" to ${inbox.address}.png`]);
  });

  it('is a note, not a failure, when a picture cannot be taken', async () => {
    const { bridge, notes } = recordingBridge('picture fails');
    const failing: TestRunnerBridge = { ...bridge, attachPicture: () => Promise.reject(new Error('browser closed')) };
    const { inbox, close } = await openTestInbox({ ...connection(), screenshots: 'on' }, failing);
    await send(server, inbox.address, { subject: 'One' });
    await inbox.expectMail();
    await close({ failed: false });
    expect(notes).toEqual([`mailroom could not attach a picture of mail "One" to ${inbox.address}.png: browser closed`]);
  });

  it('is refused at setup by a runner with no browser (Vitest), naming the option and what to do', async () => {
    const { bridge } = recordingBridge('no browser');
    const error = await openTestInbox({ ...connection(), screenshots: 'on' }, { ...bridge, runnerName: 'Vitest' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(
      '`mailroom.screenshots: "on"` needs a browser to render mail in, and Vitest has none: screenshots are Playwright-only. ' +
        'Remove the option or set it to "off"; the HTML and text of each mail are attached either way.',
    );
    // "off" and the default are fine there.
    const { close } = await openTestInbox({ ...connection(), screenshots: 'off' }, bridge);
    await close({ failed: true });
  });
});

// The wait looks one request at a time, so when the cut fires at most one
// look is in flight: the server may have counted it (it answered) while the
// client, cut, never read the answer. Every other look the server answered is
// a check; a check the server did not count is a bug either way.
function answeredBefore(serverLooks: number): (checks: number) => boolean {
  return (checks) => checks === serverLooks || checks === serverLooks - 1;
}

describe.concurrent("the check count of a wait cut short at the test's deadline", () => {
  let longPoll: MailroomServer;
  beforeAll(async () => {
    longPoll = await startTestServer({ waitSlots: 4 });
  });
  afterAll(async () => {
    await longPoll?.close();
  });

  // The failure text says how often the wait looked: every list call the
  // server answered (polling), every hold it answered or timed out (its
  // long-poll). The server's own request counts say what really happened.
  it.for(['polling', 'server wait'] as const)('%s: is every look the server answered, but for one the cut caught in flight', async (strategy, { expect }) => {
    const target = strategy === 'polling' ? server : longPoll;
    const { bridge } = recordingBridge(`cut ${strategy}`, () => 3_000);
    const { inbox, close } = await openTestInbox({ apiURL: target.apiURL, domain: target.domains[0] }, bridge);
    const error = (await inbox.expectMail({ subject: 'Never' }).catch((e: unknown) => e)) as MailTimeoutError;
    await close({ failed: true });

    expect(error).toBeInstanceOf(MailTimeoutError);
    expect(error.cutShort).toBe(true);
    const stats = target.stats(inbox.address);
    // A fresh inbox reads no watermark: every list call is the wait's.
    const looks = strategy === 'polling' ? stats.list : stats.wait;
    const checks = error.checks;
    // The one look in flight may not have reached the server yet when nothing answered.
    if (checks > 0) expect(looks).toBeGreaterThan(0);
    expect(checks).toSatisfy(answeredBefore(looks));
    // With no look answered (a loaded machine: setup ate the 3 s and the cut
    // caught the first in flight) the message must say so instead.
    const ending = checks === 0 ? 'No check got an answer before the cut (the first was still in flight)' : 'Nothing arrived at all.';
    expect(error.message).toContain(`(${checks} ${checks === 1 ? 'check' : 'checks'}). ${ending}`);
  });

  it.for(['polling', 'server wait'] as const)(
    '%s: is every look the server answered, but for one the cut caught in flight, for a quiet period too',
    async (strategy, { expect }) => {
      const target = strategy === 'polling' ? server : longPoll;
      const { bridge } = recordingBridge(`cut quiet ${strategy}`, () => 3_000);
      const { inbox, close } = await openTestInbox({ apiURL: target.apiURL, domain: target.domains[0] }, bridge);
      const error = (await inbox.expectNoMail(undefined, { within: 10_000 }).catch((e: unknown) => e)) as MailroomError;
      await close({ failed: true });

      expect(error).toMatchObject({ slug: 'quiet_unconfirmed' });
      const stats = target.stats(inbox.address);
      const looks = strategy === 'polling' ? stats.list : stats.wait;
      expect(looks).toBeGreaterThan(0);
      const said = /: the wait was cut short after [\d.]+ s \(the test's own timeout was 3 s away\) \((\d+) checks?\)\.$/.exec(error.message);
      expect(said, error.message).not.toBeNull();
      expect(Number(said![1])).toSatisfy(answeredBefore(looks));
    },
  );
});

describe('teardownBudget', () => {
  it('is a few request timeouts, at most 10 s, and never more than the runner allows teardown (less a margin)', () => {
    expect(teardownBudget(5_000, undefined)).toBe(10_000);
    expect(teardownBudget(300, undefined)).toBe(600);
    expect(teardownBudget(5_000, 1_500)).toBe(1_350);
    expect(teardownBudget(5_000, 20_000)).toBe(10_000);
    expect(teardownBudget(5_000, -50)).toBe(0);
  });
});

describe('deadlineCut', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fires the margin before the deadline (a tenth of the time left, 100 ms to 1 s), saying how far away it was', () => {
    vi.useFakeTimers();
    const cut = deadlineCut(1_500)!;
    expect(cut.firesInMs).toBe(1_350);
    vi.advanceTimersByTime(1_349);
    expect(cut.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(cut.signal.aborted).toBe(true);
    expect((cut.signal.reason as Error).message).toBe("the test's own timeout was 1.5 s away");
    expect([deadlineCut(500)!.firesInMs, deadlineCut(60_000)!.firesInMs, deadlineCut(-5)!.firesInMs]).toEqual([400, 59_000, 0]);
    expect(deadlineCut(undefined)).toBeUndefined();
    expect(deadlineCut(Number.POSITIVE_INFINITY)).toBeUndefined();
  });
});

describe('timeLeft', () => {
  it('counts down from the test timeout while the body runs, and has no deadline after it or without one', () => {
    expect(timeLeft({ timeoutMs: 5_000, startedAt: 1_000, now: 4_000, bodyFinished: false })).toBe(2_000);
    expect(timeLeft({ timeoutMs: 5_000, startedAt: 1_000, now: 7_000, bodyFinished: false })).toBe(-1_000);
    // afterEach hooks and teardown run on budgets of their own.
    expect(timeLeft({ timeoutMs: 5_000, startedAt: 1_000, now: 5_900, bodyFinished: true })).toBeUndefined();
    for (const timeoutMs of [0, undefined, Number.POSITIVE_INFINITY]) {
      expect(timeLeft({ timeoutMs, startedAt: 1_000, now: 2_000, bodyFinished: false })).toBeUndefined();
    }
  });
});

describe('validateTestOptions', () => {
  it('names an unknown key and a wrong type', () => {
    expect(() => validateTestOptions({ timout: 5 })).toThrow(
      'Unknown `mailroom` option `timout`; expected one of apiURL, domain, token, timeout, keepOnFailure, attach, screenshots, backend, credentials',
    );
    expect(() => validateTestOptions({ keepOnFailure: 'yes' })).toThrow('Expected `mailroom.keepOnFailure` to be a boolean, got "yes"');
    expect(() => validateTestOptions({ timeout: -1 })).toThrow('Expected `mailroom.timeout` to be a non-negative number of milliseconds, got -1');
    expect(() => validateTestOptions('x')).toThrow('Expected `mailroom` to be an object, got "x"');
    expect(() => validateTestOptions({ screenshots: true })).toThrow('Expected `mailroom.screenshots` to be "off", "on" or "only-on-failure", got true');
  });

  it('accepts nothing at all', () => {
    expect(validateTestOptions(undefined)).toEqual({});
  });
});

describe('layerTestOptions', () => {
  it('layers key by key, later wins, and a key left out or undefined keeps the earlier value', () => {
    const config = { apiURL: 'http://127.0.0.1:8126', timeout: 20_000, token: 't' };
    expect(layerTestOptions(config, { keepOnFailure: true })).toEqual({ apiURL: 'http://127.0.0.1:8126', timeout: 20_000, token: 't', keepOnFailure: true });
    expect(layerTestOptions(config, { timeout: 5_000, apiURL: undefined })).toEqual({ apiURL: 'http://127.0.0.1:8126', timeout: 5_000, token: 't' });
    expect(layerTestOptions(undefined, { attach: false }, null)).toEqual({ attach: false });
    expect(layerTestOptions()).toEqual({});
  });

  it('names a misspelt key in any layer', () => {
    expect(() => layerTestOptions({ apiURL: 'http://127.0.0.1:8126' }, { keepOnFaliure: true })).toThrow(
      'Unknown `mailroom` option `keepOnFaliure`; expected one of apiURL, domain, token, timeout, keepOnFailure, attach, screenshots, backend, credentials',
    );
    expect(() => layerTestOptions({ timout: 1 }, {})).toThrow('Unknown `mailroom` option `timout`');
    expect(() => layerTestOptions({}, { timeout: 'soon' })).toThrow('Expected `mailroom.timeout` to be');
  });
});

describe('openTestInbox refusals', () => {
  it('fails setup with the slug when the domain is not served', async () => {
    const { bridge } = recordingBridge('bad domain');
    const error = await openTestInbox({ ...connection(), domain: 'nowhere.example' }, bridge).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MailroomError);
    expect(error).toMatchObject({ slug: 'unknown_domain' });
  });
});
