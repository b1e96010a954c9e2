// SMTP intake under fast-check, over real sockets, on a fixed seed, and the
// corpus of the worst mail (test/support/fuzz/). `npm run fuzz` runs the
// session property longer and on any seed (scripts/fuzz.ts). Here it is 100
// sessions on a fixed seed: enough to reach acceptance and several refusals
// (checked below), at a fifth of the suite's time the 250 took; the breadth is
// `npm run fuzz`'s (2,000 a property by default).
import { describe, expect, it } from 'vitest';
import { capturingLogger, FUZZ_SERVER_OPTIONS } from '../support/fuzz/http-fuzz.js';
import { MAIL_CORPUS } from '../support/fuzz/mail-corpus.js';
import { dataCommand, fuzzSmtp, replyProblems, roundTripMailbox, smtpExchange } from '../support/fuzz/smtp-fuzz.js';
import { HEAVY_TEST_TIMEOUT_MS } from '../support/test-timeouts.js';
import { call, freshAddress, listPath, messagePath, sendRaw, start } from './helpers.js';

describe('SMTP fuzzing', () => {
  // 49 s of a 60 s timeout in stop 49's CI, on a loaded machine.
  it(
    'answers every generated session with well-formed replies, enhanced codes on refusals, and stores what it says it stored',
    { timeout: HEAVY_TEST_TIMEOUT_MS },
    async () => {
      const logger = capturingLogger();
      const server = await start({ ...FUZZ_SERVER_OPTIONS, logger });
      const result = await fuzzSmtp({ server, errors: () => logger.errors }, { runs: 100, seed: 11_3 });
      // the sessions reach acceptance as well as refusal
      expect(result.stored).toBeGreaterThan(5);
      expect(result.replies['250']).toBeGreaterThan(50);
      expect(Object.keys(result.replies).filter((code) => code.startsWith('5')).length).toBeGreaterThanOrEqual(3);
    },
  );

  it.each(MAIL_CORPUS.map(([name, source]) => ({ name, source })))('accepts, lists, fetches and deletes: $name', async ({ source }) => {
    const logger = capturingLogger();
    const server = await start({ ...FUZZ_SERVER_OPTIONS, logger });
    const address = freshAddress('corpus');
    // sent as it is: no client in between to mend line endings
    const session = [
      Buffer.from(`EHLO corpus.example\r\nMAIL FROM:<sender@example.com>\r\nRCPT TO:<${address}>\r\n`),
      dataCommand(source),
      Buffer.from('QUIT\r\n'),
    ];
    const outcome = await smtpExchange(server.smtpPort, session, { gapMs: 0, deadlineMs: 10_000 });
    expect(replyProblems(outcome)).toEqual([]);
    expect(outcome.replies).toContainEqual(expect.stringMatching(/^250 2\.6\.0 Stored as /));
    const [summary] = (await call(server, listPath(address))).json.messages;
    const raw = await call(server, messagePath(summary.id, address, '/raw'));
    const ended = source.subarray(-2).toString('latin1') === '\r\n';
    expect(raw.body.equals(ended ? source : Buffer.concat([source, Buffer.from('\r\n')])), 'the raw source is the bytes sent').toBe(true);
    expect(await roundTripMailbox(server.apiURL, address)).toBe(1);
    expect(logger.errors).toEqual([]);
  });

  it('takes 1,000 recipients in one transaction, and every copy lists, fetches and deletes', { timeout: HEAVY_TEST_TIMEOUT_MS }, async () => {
    const logger = capturingLogger();
    const server = await start({ ...FUZZ_SERVER_OPTIONS, logger });
    const recipients = Array.from({ length: 1000 }, (_, i) => `many-${i}-${process.pid}@mailroom.test`);
    expect(await sendRaw(server.smtpPort, 'sender@example.com', recipients, 'Subject: to everyone\r\n\r\nhello all\r\n')).toMatch(
      /^250 2\.6\.0 Stored for 1000 mailboxes/,
    );
    // 5,000 requests: one after another they took 16 s alone and over the
    // 60 s test timeout beside the rest of the suite, so 8 mailboxes at once.
    const pending = [...recipients];
    const lane = async (): Promise<number> => {
      let copies = 0;
      for (let address = pending.pop(); address !== undefined; address = pending.pop()) copies += await roundTripMailbox(server.apiURL, address);
      return copies;
    };
    const copies = (await Promise.all(Array.from({ length: 8 }, lane))).reduce((a, b) => a + b, 0);
    expect(copies).toBe(1000);
    expect(logger.errors).toEqual([]);
  });
});
