// More mail above the watermark than one listing holds (100): the wait walks
// down the service's pages to the watermark and finds the oldest; a service
// that offers no paging gets a failure that says the listing was full and
// older mail may have been missed. Real SMTP in, real HTTP out.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { createInbox, MailTimeoutError } from '../../src/index.js';
import { startTestServer } from '../support/server.js';

const NOISE = 120;

/** Sends `subjects` to `to` in order over one SMTP connection. */
async function sendAll(server: MailroomServer, to: string, subjects: readonly string[]): Promise<void> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true, pool: true, maxConnections: 1 });
  try {
    for (const subject of subjects) await transport.sendMail({ from: 'Acme <hello@acme.example>', to, subject, text: subject });
  } finally {
    transport.close();
  }
}

describe.each([
  ['the long-poll', 8],
  ['the polling loop', 0],
])('more than one listing above the watermark, with %s', (_name, waitSlots) => {
  let server: MailroomServer;
  beforeAll(async () => {
    server = await startTestServer({ waitSlots });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('walks down the pages to the watermark and finds the oldest mail, without a 429', async () => {
    const address = `paging-${waitSlots}-${Date.now()}@mailroom.test`;
    await sendAll(server, address, ['Before the test']);
    const inbox = await createInbox({ apiURL: server.apiURL, address });
    await sendAll(server, address, ['Your code is 111111', ...Array.from({ length: NOISE }, (_, i) => `Newsletter ${i + 1}`)]);
    const mail = await inbox.expectMail({ subject: 'code' }, { timeout: 10_000 });
    expect(mail.subject).toBe('Your code is 111111');
    expect(server.stats(address).rateLimited).toBe(0);
    const listed = await inbox.messages();
    expect(listed).toHaveLength(NOISE + 1);
    expect(listed[0]!.subject).toBe('Your code is 111111');
  });
});

describe('a service that offers no paging', () => {
  let stub: Server;
  let apiURL: string;
  beforeAll(async () => {
    // 150 messages, newest first, at most `limit` of them; /healthz advertises nothing.
    const all = Array.from({ length: 150 }, (_, i) => ({
      id: `m${String(150 - i).padStart(3, '0')}`,
      from: 'news@acme.example',
      to: ['x@mailroom.test'],
      subject: `Newsletter ${150 - i}`,
      preview: '',
      received_at: new Date(Date.UTC(2030, 0, 1, 0, 0, 150 - i)).toISOString(),
      size: 1,
    }));
    stub = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://stub');
      const body = url.pathname === '/healthz' ? { ok: true } : { messages: all.slice(0, Number(url.searchParams.get('limit') ?? 25)) };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    apiURL = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    stub.close();
    stub.closeAllConnections();
  });

  it('fails saying the listing was full and older mail may have been missed', async () => {
    const inbox = await createInbox({ apiURL, address: 'x@mailroom.test', watermark: 'm000' });
    const error = await inbox.expectMail({ subject: 'code' }, { timeout: 1200 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MailTimeoutError);
    expect((error as MailTimeoutError).message).toContain(
      'The listing was full (100 messages, the most the service lists at once) without reaching the watermark, and the service offers no paging: older mail may have been missed.',
    );
    expect((error as MailTimeoutError).listingCut).toEqual({ listed: 100, paging: false });
  });

  it('does not confirm a quiet period whose listing was full: older mail was not looked at', async () => {
    const inbox = await createInbox({ apiURL, address: 'x@mailroom.test', watermark: 'm000' });
    const error = await inbox.expectNoMail({ subject: 'code' }, { within: 1200 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ slug: 'quiet_unconfirmed' });
    expect((error as Error).message).toMatch(
      /^Could not confirm that no mail matching subject ~ "code" arrived at x@mailroom\.test for 1\.2 s: the listing was full \(100 messages, the most the service lists at once\) without reaching the watermark, and the service offers no paging, so older mail was not looked at \(\d+ checks?\)\.$/,
    );
  });
});
