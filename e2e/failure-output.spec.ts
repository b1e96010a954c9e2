// A deliberately failing inner run (e2e/inner/failing.inner.ts, a child
// process against the same servers): what a person reads at 3 a.m. must
// name the address, the filter, the budget and the mail that was rejected.
// The same run carries the other inner suites: retried and repeated tests,
// each attempt with an address of its own, and the pictures of mail.
import { basename, join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { test, expect, type Page } from '@playwright/test';
import { outcomesOf, printedAddresses, runInner, type InnerResult, type InnerRun } from './support/inner-run.js';
import { deleteMailbox, subjectsAt } from './support/mailbox.js';
import { locate } from './support/source-line.js';
import { ROOT } from './servers.js';

// The inner suites run as one child run, read by the tests below: one
// Playwright process and one set of workers instead of one each. The
// tests run in order in one worker, so the first starts the run and the
// others find it; each asserts on its own file's results. A repetition
// (--repeat-each) or a new worker after a failure makes a run of its own.
test.describe.configure({ mode: 'default' });
// `--update-snapshots=none`: a mismatch must never rewrite a stored mail snapshot, whatever the outer run was asked to update.
const INNER_FILES = [
  'failing.inner.ts',
  'smtp.inner.ts',
  'teardown.inner.ts',
  'mail-snapshot.inner.ts',
  'retries.inner.ts',
  'screenshots.inner.ts',
  '--update-snapshots=none',
];
const innerRuns = new Map<number, Promise<InnerRun>>();
function innerRun(): Promise<InnerRun> {
  // The guard of a hang, not a speed claim: the run's own waits take about 40 s alone, and npm test runs it beside everything else on two cores
  // (under a load of 12, this run with the retries and pictures beside it as runs of their own took 4 minutes).
  test.setTimeout(420_000);
  const { repeatEachIndex } = test.info();
  let run = innerRuns.get(repeatEachIndex);
  if (!run) innerRuns.set(repeatEachIndex, (run = runInner(INNER_FILES)));
  return run;
}

test('a failing inner run explains each failure', async () => {
  const run = await innerRun();
  expect(run.code, run.output).toBe(1);
  expect(outcomesOf(run, 'failing.inner.ts'), run.output).toMatchObject({ expected: 0, unexpected: 10 });

  const byTitle = (title: string): { result: InnerResult; address: string; error: string } => {
    const result = run.results.find((r) => r.title === title);
    if (!result) throw new Error(`no result for "${title}" in:\n${run.output}`);
    const [address] = printedAddresses(result);
    expect(address, `"${title}" printed its inbox`).toMatch(/@mailroom\.test$/);
    return { result, address: address!, error: result.error };
  };

  // The positive matcher: address, filter, budget, and both rejected subjects.
  const invoice = byTitle('waits for an invoice that never comes');
  expect(invoice.address).toMatch(/^waits-for-an-invoice-that-never-[a-z2-7]{16}@mailroom\.test$/);
  expect(invoice.error).toContain('expect(inbox).toReceiveMail(filter)');
  expect(invoice.error).toContain(`No mail matching subject ~ "Invoice" arrived at ${invoice.address} within 3 s (`);
  expect(invoice.error).toMatch(/Seen and rejected: .*"Confirm your email" from Acme <hello@acme\.example> at \d\d:\d\d:\d\d/);
  expect(invoice.error).toMatch(/Seen and rejected: .*"Welcome to Acme" from Acme <hello@acme\.example> at \d\d:\d\d:\d\d/);
  expect(invoice.error).toContain('Expected: mail matching subject ~ "Invoice"');
  expect(invoice.error).toMatch(/Received: rejected: .*"Welcome to Acme"/);
  expect(invoice.result.result.attachments.map((a) => a.name)).toContain('mail seen and rejected');
  // The same story in the run's printed output, where CI logs show it.
  expect(run.output).toContain(`No mail matching subject ~ "Invoice" arrived at ${invoice.address} within 3 s`);

  // The negated matcher: the mail that should not have come.
  const welcome = byTitle('expects no welcome mail');
  expect(welcome.error).toContain('expect(inbox).not.toReceiveMail(filter)');
  expect(welcome.error).toMatch(
    new RegExp(
      `Expected no mail matching subject ~ "Welcome" at ${welcome.address.replace(/\./g, '\\.')} for 3 s, but "Welcome to Acme" from Acme <hello@acme\\.example> at \\d\\d:\\d\\d:\\d\\d UTC arrived`,
    ),
  );
  expect(welcome.error).toContain('Expected: no mail matching subject ~ "Welcome"');

  // A mail budget longer than the test: mailroom's own message, not Playwright's timeout.
  const late = byTitle('runs out of test time before the mail budget');
  expect(late.result.result.status).toBe('failed');
  expect(late.error).toContain(`No mail matching subject ~ "Invoice" arrived at ${late.address}`);
  expect(late.error).toMatch(/when the wait was cut short of its 30 s budget \(the test's own timeout was [\d.]+ s away\)/);
  expect(late.error).toContain('Seen and rejected: ');
  expect(late.error).not.toContain('Test timeout of');

  // The wait is cut at the test's deadline, and the message says what it
  // knew then: the hold is meant to end, answered, just before the cut (one
  // check, nothing arrived), but on a loaded machine that one look may still
  // be in flight when the cut fires (no check answered, so unknown).
  const quiet = byTitle('runs out of test time while nothing arrives');
  expect(quiet.error).toMatch(
    // On a loaded machine the one look may still be in flight when the cut fires (stress-ng, --repeat-each 20: 2 of 20).
    /when the wait was cut short of its 30 s budget \(the test's own timeout was [\d.]+ s away\) \((1 check\)\. Nothing arrived at all\.|0 checks\)\. No check got an answer before the cut \(the first was still in flight\), so whether mail arrived is unknown\.)/,
  );

  // No stack frame made out of a message line (a time at a line's end looks like one).
  for (const { result } of [invoice, welcome, late, quiet]) {
    expect(stripVTControlCharacters(result.result.error?.stack ?? '')).not.toMatch(/^\s+at (Received|No mail|Expected)/m);
  }

  // keepOnFailure keeps the mailbox and says where it is; the others are deleted.
  const kept = byTitle('with keepOnFailure › keeps the mailbox of a failed test');
  const note = `mailroom kept the mailbox of this failed test: ${kept.address}`;
  expect(kept.result.result.annotations).toContainEqual({ type: 'mailroom', description: note });
  expect(kept.result.stderr).toContain(note);
  expect(await subjectsAt(kept.address)).toEqual(['Confirm your email', 'Welcome to Acme']);
  await deleteMailbox(kept.address);
  for (const { address } of [invoice, welcome, late, quiet]) expect(await subjectsAt(address)).toEqual([]);

  // The `mailroom.timeout` option is the matcher's default budget.
  const optionBudget = byTitle("with a 2 s mail budget › waits the option's budget");
  expect(optionBudget.error).toContain(`No mail matching subject ~ "Invoice" arrived at ${optionBudget.address} within 2 s (`);
  expect(optionBudget.error).toContain('Nothing arrived at all.');

  // A misspelt option fails the test at setup, naming the key.
  const misspelt = run.results.find((r) => r.title === 'with a misspelt option › never gets an inbox');
  expect(misspelt?.error).toContain('Unknown `mailroom` option `timout`; expected one of apiURL, domain, token, timeout, keepOnFailure, attach');
  expect(misspelt && printedAddresses(misspelt)).toEqual([]);
});

test('an SMTP matcher explains a failure with the attempt timeline, and the timeline is attached', async () => {
  const run = await innerRun();
  expect(outcomesOf(run, 'smtp.inner.ts'), run.output).toMatchObject({ expected: 0, unexpected: 1 });
  const result = run.results.find((r) => r.title === 'hammers a deferring server')!;
  const [address] = printedAddresses(result);
  const error = result.error;
  expect(error).toContain('expect(inbox).toHaveBackedOff()');
  expect(error).toMatch(
    new RegExp(
      [
        `Expected the sender to back off at ${address!.replace(/\./g, '\\.')}, but:`,
        "  - mail 1's first retry came \\d+ ms after a 451 4\\.3\\.0, before the shortest wait of 1 s",
        '  - mail 1 was retried \\d+ ms after a 451 4\\.3\\.0, less than 1 s apart \\(try 3\\)',
        '',
        `SMTP attempts at ${address!.replace(/\./g, '\\.')}: 1 mail, 3 attempts, times from the first \\(\\d\\d:\\d\\d:\\d\\d\\.\\d{3} UTC\\):`,
        '   \\+0\\.000 s  mail 1, try 1  RCPT  451 4\\.3\\.0  deferred  \\(defer\\)',
        '   \\+\\d\\.\\d{3} s  mail 1, try 2  RCPT  451 4\\.3\\.0  deferred  \\(defer\\)  waited \\d+ ms',
        '   \\+\\d\\.\\d{3} s  mail 1, try 3  DATA  250 2\\.6\\.0  accepted  waited \\d+ ms  "Your code"',
        '',
        'Expected: backed off: retries at least 1 s apart, the first after 1 s, waits that grow, none after a 5xx',
      ].join('\n'),
    ),
  );
  expect(stripVTControlCharacters(result.result.error?.stack ?? '')).not.toMatch(/^\s+at (Received|Expected|SMTP|\+)/m);
  // The timeline in the report, read before teardown deleted the mailbox.
  const attachment = result.result.attachments.find((a) => a.name === `smtp attempts to ${address}.txt`);
  expect(attachment?.contentType).toBe('text/plain');
  expect(Buffer.from(attachment!.body!, 'base64').toString()).toMatch(/^SMTP attempts at .*: 1 mail, 3 attempts, times from the first/);
  expect(await subjectsAt(address!)).toEqual([]);
});

test("every wait's and matcher's failure points at the test's line: the JSON report's location, the printed code frame and frame", async () => {
  const run = await innerRun();
  const inner = (name: string) => join(ROOT, 'e2e', 'inner', name);
  const cases = [
    ['waits with expectMail for a mail that never comes', locate(inner('failing.inner.ts'), "expectMail({ subject: 'Invoice' }, { timeout: 1_000 })")],
    ['expects no welcome mail with expectNoMail', locate(inner('failing.inner.ts'), "expectNoMail({ subject: 'Welcome' }")],
    ['waits for an invoice that never comes', locate(inner('failing.inner.ts'), "toReceiveMail({ subject: 'Invoice' }, { timeout: 3_000 })")],
    ['checks a mail whose HTML Gmail clips', locate(inner('failing.inner.ts'), 'toPassMailChecks(')],
    ['hammers a deferring server', locate(inner('smtp.inner.ts'), 'toHaveBackedOff()')],
  ] as const;
  for (const [title, where] of cases) {
    const result = run.results.find((r) => r.title === title);
    expect(result?.result.errors[0]?.location, `${title}:\n${run.output}`).toEqual({ file: where.file, line: where.line, column: where.column });
    // The list reporter (the line reporter prints the same failure): the code frame at that line, and the frame.
    const frame = new RegExp(`>\\s+${where.line} \\| ${where.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n`);
    expect(run.output, title).toMatch(frame);
    expect(run.output, title).toContain(`${basename(where.file)}:${where.line}:${where.column}`);
  }

  // The wait that saw nothing says why, from the server's attempt log: this test's app sent nothing.
  // (test/inbox/silence.integration.test.ts has each cause; here it is in a real run's report.)
  const silent = run.results.find((r) => r.title === 'waits with expectMail for a mail that never comes')!;
  expect(silent.error).toMatch(
    /within 1 s \(\d+ checks?\)\. Nothing arrived at all\. No SMTP attempt or provider API call named this address since the inbox was made at \d\d:\d\d:\d\d UTC \(the server's attempt log\)\. (Nor did the server take mail for any other address at mailroom\.test meanwhile\.|Meanwhile the server took mail for \d+ (or more )?other address(es)? at mailroom\.test)/,
  );
});

test("a teardown that cannot delete the mailbox never replaces the test's result", async () => {
  const run = await innerRun();
  expect(outcomesOf(run, 'teardown.inner.ts'), run.output).toMatchObject({ expected: 1, unexpected: 1 });

  for (const [title, status] of [
    ['passes although its mailbox cannot be deleted', 'passed'],
    ['fails with its own error although its mailbox cannot be deleted', 'failed'],
  ] as const) {
    const result = run.results.find((r) => r.title === title);
    expect(result?.result.status, run.output).toBe(status);
    const [address] = printedAddresses(result!);
    const note = result!.result.annotations.find((a) => a.type === 'mailroom')?.description;
    expect(note).toContain(`mailroom could not delete the mailbox ${address} after the test:`);
    expect(note).toContain('503 unavailable');
    if (status === 'failed') {
      expect(result!.error).toContain('fails on purpose');
      expect(result!.error).not.toContain('could not delete');
    }
  }
});

// Mail snapshots through Playwright's own toMatchSnapshot (e2e/inner/mail-snapshot.inner.ts): the
// demo app's confirmation mail matches the stored text whatever the run's address, code, link token
// and (through Resend) provider id, and a changed subject or link fails with a diff of just that line.
function errorOf(run: InnerRun, title: string): string {
  const result = run.results.find((r) => r.title === title);
  if (!result) throw new Error(`no result for "${title}" in:\n${run.output}`);
  return result.error;
}

/** The diff's own lines: what was stored (-) and what the mail is now (+), without the hunk headers. */
const changedLines = (error: string) =>
  error
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^[-+](?![-+])/.test(line));

test('a mail snapshot passes for a new address and code, and fails with a readable diff for a new subject or link', async () => {
  const run = await innerRun();
  expect(outcomesOf(run, 'mail-snapshot.inner.ts'), run.output).toMatchObject({ expected: 2, unexpected: 2 });
  expect(
    run.results
      .filter((r) => r.file === 'mail-snapshot.inner.ts' && r.outcome === 'expected')
      .map((r) => r.title)
      .sort(),
  ).toEqual(['matches through Resend: another provider id too', 'matches: another address, code and token']);

  const subject = errorOf(run, 'a changed subject fails');
  expect(subject).toContain('expect(string).toMatchSnapshot(expected) failed');
  expect(subject).toMatch(
    /@@ -1,8 \+1,8 @@\n\s+From: Acme <hello@acme\.example>\n\s+To: \[address\]\n\s+-Subject: Confirm your email\n\s+\+Subject: Confirm your e-mail\n/,
  );
  expect(subject).toContain('Snapshot: confirm-your-email.txt');
  expect(changedLines(subject)).toEqual(['-Subject: Confirm your email', '+Subject: Confirm your e-mail']);

  expect(changedLines(errorOf(run, 'a changed link fails'))).toEqual([
    '-Or confirm with this link: Confirm my email <[app url]/confirm?token=[token]>',
    '+Or confirm with this link: Confirm my email <[app url]/confirm-email?token=[token]>',
  ]);
});

// A retried test gets a fresh address, and so does every repetition
// (e2e/inner/retries.inner.ts, in the inner config's `retried` project:
// retries 1, repeatEach 2): each repetition's first attempt fails on
// purpose, and every attempt prints its address.
test('every attempt and every repetition gets its own address', async () => {
  const run = await innerRun();
  const results = run.results.filter((r) => r.file === 'retries.inner.ts');
  expect(
    results.every((r) => r.outcome === 'flaky'),
    run.output,
  ).toBe(true);

  const attempts = results.map((r) => ({ retry: r.result.retry, status: r.result.status, address: printedAddresses(r)[0] }));
  expect(attempts.map((a) => [a.retry, a.status]).sort()).toEqual([
    [0, 'failed'],
    [0, 'failed'],
    [1, 'passed'],
    [1, 'passed'],
  ]);
  const addresses = attempts.map((a) => a.address);
  for (const address of addresses) expect(address).toMatch(/^fails-once-then-passes-[a-z2-7]{16}@mailroom\.test$/);
  expect(new Set(addresses).size).toBe(4);
});

// The `screenshots` option (e2e/inner/screenshots.inner.ts): a PNG of each
// received mail is attached to a failed test by default, to every test
// with 'on', and never with 'off'.

/** A PNG's width and height, from its IHDR chunk. */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(1, 4).toString('latin1'), 'a PNG signature').toBe('PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}
// Browser code, as text: this project's types have no DOM (see open-mail.spec.ts).
const INKS = `async (base64) => {
  const image = new Image();
  image.src = 'data:image/png;base64,' + base64;
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = image.width;
  canvas.height = image.height;
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0);
  const pixels = context.getImageData(0, 0, image.width, image.height).data;
  let dark = 0;
  let linkBlue = 0;
  for (let i = 0; i < pixels.length; i += 4) {
    const r = pixels[i], g = pixels[i + 1], b = pixels[i + 2];
    if (r + g + b < 200) dark++;
    if (b > 180 && r < 90 && g < 90) linkBlue++;
  }
  return { dark, linkBlue };
}`;
const BLANK = `(width, height) => {
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  const context = canvas.getContext('2d');
  context.fillStyle = '#fff';
  context.fillRect(0, 0, width, height);
  return canvas.toDataURL('image/png');
}`;

/**
 * What a PNG shows, decoded by Chromium onto a canvas: how many pixels are
 * dark (text) and how many are a link's blue (Chromium's unvisited #0000ee).
 */
async function inks(page: Page, png: Buffer): Promise<{ dark: number; linkBlue: number }> {
  return page.evaluate<{ dark: number; linkBlue: number }>(`(${INKS})(${JSON.stringify(png.toString('base64'))})`);
}

/** A blank white PNG of `width` x `height`, drawn by Chromium: what the pixel check must refuse. */
async function blankPng(page: Page, width: number, height: number): Promise<Buffer> {
  const dataUrl = await page.evaluate<string>(`(${BLANK})(${width}, ${height})`);
  return Buffer.from(dataUrl.slice(dataUrl.indexOf(',') + 1), 'base64');
}

test('a picture of each received mail: on failure by default, always with "on", never with "off"', async ({ page }) => {
  const run = await innerRun();
  expect(outcomesOf(run, 'screenshots.inner.ts'), run.output).toMatchObject({ expected: 2, unexpected: 2 });
  const attachments = (title: string): InnerResult['result']['attachments'] => {
    const result = run.results.find((r) => r.title === title);
    if (!result) throw new Error(`no result for "${title}" in:\n${run.output}`);
    return result.result.attachments;
  };
  const pictures = (title: string) => attachments(title).filter((a) => a.contentType === 'image/png');

  const failed = pictures('default, failed: the mail is pictured');
  expect(failed.map((a) => a.name)).toEqual([
    expect.stringMatching(/^mail "Confirm your email" to default-failed-the-mail-is-[a-z-]*[a-z2-7]{16}@mailroom\.test\.png$/),
  ]);
  // A file in the test's results, whose path the list reporter prints under the failure.
  expect(run.output).toMatch(
    /attachment #\d+: mail "Confirm your email" to default-failed-\S+\.png \(image\/png\)[─ ]*\n\s+\S*attachments\/mail-Confirm-your-email-\S+\.png\n/,
  );
  const picture = Buffer.from(failed[0]!.body!, 'base64');
  const size = pngSize(picture);
  expect(size.width).toBe(800);
  // The demo mail's five paragraphs, not an empty page: text, and its
  // "Confirm my email" link in a link's blue. A blank page of the same size
  // has neither (checked too, so the check itself can fail).
  expect(size.height).toBeGreaterThan(200);
  const shown = await inks(page, picture);
  expect(shown.dark, 'dark (text) pixels in the picture').toBeGreaterThan(500);
  expect(shown.linkBlue, "pixels in a link's blue in the picture").toBeGreaterThan(20);
  expect(await inks(page, await blankPng(page, size.width, size.height))).toEqual({ dark: 0, linkBlue: 0 });
  // Next to the HTML and text already attached.
  expect(attachments('default, failed: the mail is pictured').map((a) => a.contentType)).toEqual(
    expect.arrayContaining(['text/html', 'text/plain', 'image/png']),
  );

  expect(pictures('default, passed: no picture')).toEqual([]);
  expect(attachments('default, passed: no picture').map((a) => a.contentType)).toContain('text/html');
  expect(pictures('on › on, passed: the mail is pictured')).toHaveLength(1);
  expect(pictures('off › off, failed: no picture')).toEqual([]);

  // Each wait was a step titled like a sentence, naming the test's own address: what a report's step list shows.
  for (const title of [
    'default, failed: the mail is pictured',
    'default, passed: no picture',
    'on › on, passed: the mail is pictured',
    'off › off, failed: no picture',
  ]) {
    const html = attachments(title).find((a) => a.contentType === 'text/html');
    const address = /^mail "Confirm your email" to (\S+@mailroom\.test)\.html$/.exec(html?.name ?? '')?.[1];
    expect(address, `${title}: the address in its mail's attachment`).toBeDefined();
    const steps = run.results.find((r) => r.title === title)?.result.steps?.map((s) => s.title);
    expect(steps, title).toContain(`Wait for mail to ${address} with subject ~ "Confirm"`);
  }
});
