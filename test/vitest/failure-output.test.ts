// A deliberately failing Vitest run in a child process (test/vitest/inner/),
// and what it prints: each failure names the address, the filter, the budget
// and the subjects it saw and rejected; kept and undeletable mailboxes are
// named too; the reporter receives mailroom's annotations; and a mail
// snapshot that changed fails with a diff of the lines that changed.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { beforeAll, describe, expect, inject, test } from 'vitest';
import type { TestAnnotation } from 'vitest';
import { apiURL, stats } from './support/env.js';

interface ReportedTest {
  readonly name: string;
  readonly state: string;
  readonly meta: { readonly mailroom?: { readonly address: string } };
  readonly annotations: readonly TestAnnotation[];
  /** Where the reporter was told the first error is (its first stack frame). */
  readonly errorAt?: { readonly file: string; readonly line: number; readonly column: number };
}

interface InnerRun {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly tests: readonly ReportedTest[];
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const INNER = join(ROOT, 'test/vitest/inner/failing.inner.ts');

async function runInner(): Promise<InnerRun> {
  const dir = await mkdtemp(join(tmpdir(), 'mailroom-inner-'));
  const reportPath = join(dir, 'report.json');
  // A clean environment: nothing of the outer Vitest worker leaks in.
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NO_COLOR: '1',
    CI: '1',
    MAILROOM_API_URL: apiURL(),
    MAILROOM_DOMAIN: inject('mailroom')?.domain,
    DEMO_APP_URL: inject('demoAppURL'),
    MAILROOM_INNER_SMTP_PORT: String(inject('mailroomSmtpPort')),
    MAILROOM_INNER_REPORT: reportPath,
  };
  try {
    const vitest = join(ROOT, 'node_modules/vitest/vitest.mjs');
    const result = await new Promise<{ exitCode: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [vitest, 'run', '--config', 'test/vitest/inner/vitest.config.ts'],
        { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => {
          resolve({ exitCode: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
        },
      );
    });
    const tests = JSON.parse(await readFile(reportPath, 'utf8')) as ReportedTest[];
    return { ...result, tests };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

let run: InnerRun;
let output: string;
beforeAll(async () => {
  run = await runInner();
  output = `${run.stdout}\n${run.stderr}`;
}, 120_000);

/** The inner tests that never get an inbox: the one whose setup fails, and the one that checks a mail it made. */
const WITHOUT_INBOX = new Set(['fails in setup, naming the option', 'checks a mail whose HTML Gmail clips']);

function reported(name: string): ReportedTest & { address: string } {
  const found = run.tests.find((t) => t.name === name);
  if (!found) throw new Error(`The inner run reported no test named ${JSON.stringify(name)}; it printed:\n${output}`);
  const address = found.meta.mailroom?.address;
  if (!address && !WITHOUT_INBOX.has(name)) throw new Error(`No mailroom address in the meta of ${name}`);
  return { ...found, address: address ?? '' };
}

/** The lines Vitest prints for one failed test: from its FAIL header to the next divider. */
function failureBlock(name: string): string {
  const header = output.split('\n').findIndex((line) => line.includes(' FAIL ') && line.endsWith(`> ${name}`));
  expect(header, `no FAIL header for ${name} in:\n${output}`).toBeGreaterThanOrEqual(0);
  const lines = output.split('\n').slice(header);
  const end = lines.findIndex((line, i) => i > 0 && /⎯{5,}/.test(line));
  return lines.slice(0, end === -1 ? undefined : end).join('\n');
}

async function listed(address: string): Promise<string[]> {
  const res = await request(`${apiURL()}/api/v1/mailbox?address=${encodeURIComponent(address)}`);
  const body = (await res.body.json()) as { messages: { subject: string }[] };
  return body.messages.map((m) => m.subject).sort();
}

describe('a failing inner Vitest run', () => {
  test('fails nine tests and passes three', () => {
    expect(run.exitCode, output).toBe(1);
    expect(run.stdout).toMatch(/Tests\s+9 failed \| 3 passed \(12\)/);
    expect(run.tests.map((t) => [t.name, t.state]).sort()).toEqual([
      ['a changed link fails', 'failed'],
      ['a changed subject fails', 'failed'],
      ['checks a mail whose HTML Gmail clips', 'failed'],
      ['expects no welcome mail with expectNoMail', 'failed'],
      ['expects no welcome mail, but one comes', 'failed'],
      ['fails in setup, naming the option', 'failed'],
      ['hammers a deferring server', 'failed'],
      ['has a shorter timeout than the mail budget', 'failed'],
      ['matches: another address, code and token', 'passed'],
      ['passes, and its mailbox is deleted', 'passed'],
      ['passes, though deleting its mailbox fails', 'passed'],
      ['waits for an invoice that never comes', 'failed'],
    ]);
  });

  test('an SMTP matcher prints the same words as in Playwright: each misstep, then the attempt timeline', () => {
    const { address } = reported('hammers a deferring server');
    const block = failureBlock('hammers a deferring server');
    const at = address.replace(/[.]/g, '\\.');
    expect(block).toContain('expect(inbox).toHaveBackedOff()');
    expect(block).toMatch(
      new RegExp(
        [
          `Expected the sender to back off at ${at}, but:`,
          "  - mail 1's first retry came \\d+ ms after a 451 4\\.3\\.0, before the shortest wait of 1 s",
          '  - mail 1 was retried \\d+ ms after a 451 4\\.3\\.0, less than 1 s apart \\(try 3\\)',
          '',
          `SMTP attempts at ${at}: 1 mail, 3 attempts, times from the first \\(\\d\\d:\\d\\d:\\d\\d\\.\\d{3} UTC\\):`,
          '   \\+0\\.000 s  mail 1, try 1  RCPT  451 4\\.3\\.0  deferred  \\(defer\\)',
          '   \\+\\d\\.\\d{3} s  mail 1, try 2  RCPT  451 4\\.3\\.0  deferred  \\(defer\\)  waited \\d+ ms',
          '   \\+\\d\\.\\d{3} s  mail 1, try 3  DATA  250 2\\.6\\.0  accepted  waited \\d+ ms  "Your code"',
          '',
          'Expected: backed off: retries at least 1 s apart, the first after 1 s, waits that grow, none after a 5xx',
        ].join('\n'),
      ),
    );
  });

  test('a toReceiveMail timeout names the address, the filter, the budget and the rejected subjects', () => {
    const { address } = reported('waits for an invoice that never comes');
    const block = failureBlock('waits for an invoice that never comes');
    expect(block).toContain('expect(inbox).toReceiveMail(filter)');
    expect(block).toMatch(
      new RegExp(`No mail matching subject ~ "Invoice" arrived at ${address.replace(/[.]/g, '\\.')} within 4 s \\(\\d+ checks\\)\\. Seen and rejected: `),
    );
    expect(block).toContain('"Confirm your email" from Acme <hello@acme.example>');
    expect(block).toContain('"Welcome to Acme" from Acme <hello@acme.example>');
    // The annotation Vitest prints under the failure.
    expect(block).toContain('mail seen and rejected');
  });

  test('keepOnFailure keeps that mailbox and says where it is', async () => {
    const { address } = reported('waits for an invoice that never comes');
    expect(run.stderr).toContain(
      `mailroom kept the mailbox of this failed test: ${address} (test: test/vitest/inner/failing.inner.ts > deliberately failing > kept on failure > waits for an invoice that never comes)`,
    );
    expect(await listed(address)).toEqual(['Confirm your email', 'Welcome to Acme']);
    expect(await stats(address)).toMatchObject({ deleteMailbox: 0 });
  });

  test('a failing not.toReceiveMail names the mail that arrived', async () => {
    const { address } = reported('expects no welcome mail, but one comes');
    const block = failureBlock('expects no welcome mail, but one comes');
    expect(block).toContain('expect(inbox).not.toReceiveMail(filter)');
    expect(block).toContain(`Expected no mail matching subject ~ "Welcome" at ${address} for 5 s, but "Welcome to Acme" from Acme <hello@acme.example>`);
    // Without keepOnFailure a failed test's mailbox is deleted like any other.
    expect(await stats(address)).toMatchObject({ deleteMailbox: 1 });
  });

  test("a wait longer than the test's timeout ends first, with its own message", async () => {
    const { address } = reported('has a shorter timeout than the mail budget');
    const block = failureBlock('has a shorter timeout than the mail budget');
    expect(block).toContain(`No mail matching subject ~ "Never" arrived at ${address}`);
    expect(block).toMatch(/cut short of its 30 s budget \(the test's own timeout was \d(\.\d)? s away\)/);
    expect(output).not.toContain('Test timed out');
    // The checks it counts are the server's answered holds, the one that
    // ended just before the cut too. On a loaded machine a hold may also
    // time out on the client ("N checks, 1 failed"): the server saw that
    // one too, so its count lies between the answered and all of them.
    // Loaded further (load 40), setup ate so much of the 6 s that the cut
    // came while the first hold was still out: then the message must say
    // so, and the server saw at most that one hold.
    const holds = (await stats(address)).wait;
    const firstInFlight = /\(0 checks\)\. No check got an answer before the cut \(the first was still in flight\)/.test(block);
    if (firstInFlight) {
      expect(holds, block).toBeLessThanOrEqual(1);
      return;
    }
    const counted = /\((\d+) checks?(?:, (\d+) failed)?\)\. Nothing arrived at all\./.exec(block);
    // And why, read in what the test's own timeout left past the cut (nothing was sent here), or,
    // on a machine too loaded to read it in that time, that it could not be read.
    expect(block).toMatch(
      /Nothing arrived at all\. (No SMTP attempt or provider API call named this address since the inbox was made at|Why is unknown: the server's attempt log could not be read in time)/,
    );
    expect(counted, block).not.toBeNull();
    const [checks, failed] = [Number(counted![1]), Number(counted![2] ?? 0)];
    expect(checks, block).toBeGreaterThan(0);
    expect(holds, block).toBeGreaterThanOrEqual(checks);
    expect(holds, block).toBeLessThanOrEqual(checks + failed);
  });

  test("every wait's and matcher's failure points at the test's line: the reporter's first frame and the printed one", () => {
    const source = readFileSync(INNER, 'utf8').split('\n');
    const lineOf = (call: string): number => {
      const found = source.flatMap((text, i) => (text.includes(call) ? [i + 1] : []));
      expect(found, call).toHaveLength(1);
      return found[0]!;
    };
    for (const [name, call] of [
      ['has a shorter timeout than the mail budget', "inbox.expectMail({ subject: 'Never' })"],
      ['expects no welcome mail with expectNoMail', "inbox.expectNoMail({ subject: 'Welcome' }"],
      ['waits for an invoice that never comes', "toReceiveMail({ subject: 'Invoice' }, { timeout: 4_000 })"],
      ['hammers a deferring server', 'toHaveBackedOff()'],
      ['checks a mail whose HTML Gmail clips', 'toPassMailChecks('],
    ] as const) {
      const line = lineOf(call);
      expect(reported(name).errorAt, name).toMatchObject({ file: INNER, line });
      // The default reporter's first frame under the failure, where its code frame points.
      const [first] = failureBlock(name).match(/❯ \S+:\d+:\d+/) ?? [];
      expect(first, failureBlock(name)).toMatch(new RegExp(`^❯ test/vitest/inner/failing\\.inner\\.ts:${line}:\\d+$`));
    }
  });

  test('a misspelt option fails the test in setup, naming the option', () => {
    const block = failureBlock('fails in setup, naming the option');
    expect(block).toContain('TypeError: Unknown `mailroom` option `timout`; expected one of apiURL, domain, token, timeout, keepOnFailure, attach');
  });

  test('a passing test leaves no mailbox behind, and its mail is in the report', async () => {
    const test = reported('passes, and its mailbox is deleted');
    expect(await stats(test.address)).toMatchObject({ deleteMailbox: 1 });
    expect(await listed(test.address)).toEqual([]);
    const confirm = `mail "Confirm your email" to ${test.address}`;
    expect(test.annotations.map((a) => [a.type, a.message, a.attachment?.contentType])).toEqual([
      ['mailroom', `${confirm}.html`, 'text/html'],
      ['mailroom', `${confirm}.txt`, 'text/plain'],
      ['mailroom', `mail "Welcome to Acme" to ${test.address}.txt`, 'text/plain'],
    ]);
    expect(test.annotations[1]?.attachment?.body).toMatch(/Codes: \d{6}/);
  });

  test('the report of a failed wait carries what was seen', () => {
    const test = reported('waits for an invoice that never comes');
    const seen = test.annotations.find((a) => a.message === 'mail seen and rejected');
    expect(seen?.attachment?.contentType).toBe('text/plain');
    expect(seen?.attachment?.body).toContain(`at ${test.address} for subject ~ "Invoice".`);
    expect(seen?.attachment?.body).toMatch(/- "Confirm your email" from Acme <hello@acme\.example> at [\d:]+ UTC \(id \w+\)/);
  });

  test('a teardown that cannot delete the mailbox says so, and the test still passes', () => {
    const test = reported('passes, though deleting its mailbox fails');
    expect(test.state).toBe('passed');
    expect(run.stderr).toContain(`mailroom could not delete the mailbox ${test.address} after the test: `);
  });
});

describe('a mail snapshot in a file (mail-snapshot.inner.ts)', () => {
  /** The diff's own lines: what was stored (-) and what the mail is now (+). */
  const changedLines = (block: string) => block.split('\n').filter((line) => /^[-+] /.test(line) && !/^[-+] (Expected|Received)$/.test(line));

  test("passes for the demo app's mail to another address, with another code and link token", () => {
    expect(reported('matches: another address, code and token').state).toBe('passed');
  });

  test('fails when the subject changed, with a diff of that line', () => {
    const block = failureBlock('a changed subject fails');
    expect(block).toContain(
      [
        'Snapshot `mail snapshot > a changed subject fails 1` mismatched',
        '',
        '- Expected',
        '+ Received',
        '',
        '@@ -1,8 +1,8 @@',
        '  From: Acme <hello@acme.example>',
        '  To: [address]',
        '- Subject: Confirm your email',
        '+ Subject: Confirm your e-mail',
      ].join('\n'),
    );
    expect(changedLines(block)).toEqual(['- Subject: Confirm your email', '+ Subject: Confirm your e-mail']);
  });

  test('fails when a link changed, with a diff of the line it is on', () => {
    const block = failureBlock('a changed link fails');
    expect(block).toContain('Snapshot `mail snapshot > a changed link fails 1` mismatched');
    expect(changedLines(block)).toEqual([
      '- Or confirm with this link: Confirm my email <[app url]/confirm?token=[token]>',
      '+ Or confirm with this link: Confirm my email <[app url]/confirm-email?token=[token]>',
    ]);
  });
});
