// "Nothing arrived at all" says why (inbox/silence.ts), against real
// servers: the embedded one, whose attempt log and mailbox index tell that
// no attempt came, that attempts came and were refused, or that mail went to
// another address of the domain; a real maildev, which keeps no log; and a
// server that never answers the log, which a failure must not wait on.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import nodemailer from 'nodemailer';
import { createInbox, MailroomClient, MailTimeoutError, type CallOptions, type Inbox } from '../../src/index.js';
import type { MailroomServer } from '../../src/server/index.js';
import { startMaildev, type RunningMaildev } from '../support/maildev.js';
import { resendDriver } from '../support/providers/resend.js';
import { send, startTestServer } from '../support/server.js';

let server: MailroomServer;
let maildev: RunningMaildev;
beforeAll(async () => {
  [server, maildev] = await Promise.all([startTestServer(), startMaildev()]);
});
afterAll(async () => {
  await Promise.all([server?.close(), maildev?.stop()]);
});

/** An inbox on a domain of its own: the mailbox index then holds only this test's mail. */
function inboxAt(domain: string): Promise<Inbox> {
  return createInbox({ apiURL: server.apiURL, domain, prefix: 'signup' });
}

/**
 * The failure of a wait that finds nothing: by default one that looks once
 * (budget 0). The reading of why must fit in the second a wait may run past
 * its deadline; with budget 0 that second also holds the wait's only check,
 * which a loaded run's first call to another process (maildev) can spend
 * whole (CI: "no time was left"). `timeoutMs` gives the checks a window of
 * their own, so the second is the reading's.
 */
async function failure(inbox: Inbox, timeoutMs = 0): Promise<string> {
  const error = await inbox.expectMail({ subject: 'Confirm' }, { timeout: timeoutMs }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(MailTimeoutError);
  return (error as MailTimeoutError).message;
}

/** Sends over SMTP as an app would, taking a refusal as its answer. */
async function sendRefused(to: string): Promise<string> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true });
  try {
    await transport.sendMail({ from: 'Acme <hello@acme.example>', to, subject: 'Confirm your email', text: 'Hello' });
    return 'accepted';
  } catch (error) {
    return (error as Error).message;
  } finally {
    transport.close();
  }
}

const at = (address: string) => address.replace(/[.+]/g, '\\$&');
const TIME = '\\d\\d:\\d\\d:\\d\\d UTC';
const AFTER = '\\+\\d+\\.\\d{3} s';

describe.concurrent('a wait that saw nothing says why', () => {
  it('no attempt reached the address, and the server took nothing else for its domain', async () => {
    const inbox = await inboxAt('quiet.test');
    expect(await failure(inbox)).toMatch(
      new RegExp(
        `within 0 ms \\(1 check\\)\\. Nothing arrived at all\\. No SMTP attempt or provider API call named this address since the inbox was made at ${TIME} \\(the server's attempt log\\)\\. Nor did the server take mail for any other address at quiet\\.test meanwhile\\.$`,
      ),
    );
  });

  it('attempts came and were refused: each reply, the rule that gave it, and when', async () => {
    const inbox = await inboxAt('refused.test');
    await inbox.smtp.reject({ times: 2 });
    expect(await sendRefused(inbox.address)).toContain('550 5.1.1');
    expect(await sendRefused(inbox.address)).toContain('550 5.1.1');
    expect(await failure(inbox)).toMatch(
      new RegExp(
        `Nothing arrived at all\\. The server's attempt log has 2 attempts at this address since the inbox was made at ${TIME}: refused with 550 5\\.1\\.1 by the reject rule at ${AFTER}, ${AFTER}\\.$`,
      ),
    );
  });

  it("a provider API call turned away is named with its status and provider, beside SMTP's", async () => {
    const inbox = await inboxAt('api.test');
    await inbox.smtp.rateLimit({ retryAfter: 0 });
    await inbox.smtp.disconnect();
    const sent = await resendDriver.send(server.apiURL, { from: 'hello@acme.example', to: [inbox.address], subject: 'Confirm your email', text: 'Hi' });
    expect(sent).toMatchObject({ ok: false, status: 429 });
    expect(await sendRefused(inbox.address)).not.toBe('accepted');
    expect(await failure(inbox)).toMatch(
      new RegExp(
        `The server's attempt log has 2 attempts at this address since the inbox was made at ${TIME}: deferred with 429 \\(resend API\\) by the rate_limit rule at ${AFTER}; dropped without a reply by the disconnect rule at ${AFTER}\\.$`,
      ),
    );
  });

  it('the server took mail for another address of the domain meanwhile: a typo, or the app sent it elsewhere', async () => {
    const inbox = await inboxAt('elsewhere.test');
    const typo = inbox.address.replace('@', 'x@');
    await send(server, typo, { subject: 'Confirm your email' });
    await send(server, `ops@elsewhere.test`, { subject: 'New signup' });
    expect(await failure(inbox)).toMatch(
      new RegExp(
        `No SMTP attempt or provider API call named this address since the inbox was made at ${TIME} \\(the server's attempt log\\)\\. ` +
          // The mail that matches the wait's filter comes first, though it is not the latest.
          `Meanwhile the server took mail for 2 other addresses at elsewhere\\.test: "Confirm your email" to ${at(typo)} at ${AFTER}, "New signup" to ops@elsewhere\\.test at ${AFTER} \\(a typo in the address, or the app sent it elsewhere\\)\\.$`,
      ),
    );
  });

  it('a backend that keeps no attempt log says so: maildev, and a server without the lab', async () => {
    const inbox = await createInbox({ backend: 'maildev', apiURL: maildev.apiURL, prefix: 'signup' });
    expect(await failure(inbox, 1_500)).toMatch(
      new RegExp(
        `Nothing arrived at all\\. maildev at ${at(maildev.apiURL)} keeps no log of SMTP attempts, so it cannot say whether the app tried to send here: look in the app's own log for what it sent, and to whom\\.$`,
      ),
    );
    const withoutLab = await startTestServer({ smtpRules: false });
    try {
      const there = await createInbox({ apiURL: withoutLab.apiURL, prefix: 'signup' });
      expect(await failure(there, 1_500)).toMatch(
        new RegExp(
          `Nothing arrived at all\\. The server at ${at(withoutLab.apiURL)} keeps no log of SMTP attempts, so it cannot say whether the app tried to send here`,
        ),
      );
    } finally {
      await withoutLab.close();
    }
  });
});

describe('reading why costs nothing on the way to a pass, and never holds a failure up long', () => {
  /** The embedded server's client, counting the calls that explain a silence. */
  class CountingClient extends MailroomClient {
    explained = 0;
    override smtpAttempts(address: string, options?: CallOptions) {
      this.explained++;
      return super.smtpAttempts(address, options);
    }
    override mailboxes(options?: Parameters<MailroomClient['mailboxes']>[0]) {
      this.explained++;
      return super.mailboxes(options);
    }
  }

  it('reads neither the log nor the index for a wait that passes, or one that saw mail', async () => {
    const client = new CountingClient({ apiURL: server.apiURL });
    const inbox = await createInbox({ client, domain: 'happy.test' });
    await send(server, inbox.address, { subject: 'Welcome' });
    await inbox.expectMail({ subject: 'Welcome' }, { timeout: 5_000 });
    await send(server, inbox.address, { subject: 'Newsletter' });
    const error = await inbox.expectMail({ subject: 'Invoice' }, { timeout: 1_000 }).catch((e: unknown) => e);
    expect((error as Error).message).toContain('Seen and rejected: "Newsletter"');
    expect(client.explained).toBe(0);
    // Nothing above the watermark: now, and only now, the log and the index are read.
    const quiet = await createInbox({ client, domain: 'happy.test' });
    await quiet.expectMail({}, { timeout: 0 }).catch(() => undefined);
    expect(client.explained).toBe(2);
  });

  let stub: Server;
  afterAll(() => {
    stub?.closeAllConnections();
    stub?.close();
  });

  it('says the log could not be read when the server does not answer it in time (at most 1 s)', async () => {
    // A server that advertises the log and never answers it; its mailbox is empty.
    stub = createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      if (url.pathname === '/healthz') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, features: { smtp_attempts: '/api/v1/mailbox/attempts' } }));
      } else if (url.pathname === '/api/v1/mailbox') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ address: url.searchParams.get('address'), messages: [] }));
      }
      // Anything else (the attempt log) is never answered.
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    const inbox = await createInbox({ apiURL: `http://127.0.0.1:${(stub.address() as AddressInfo).port}`, serverWait: false });
    expect(await failure(inbox)).toMatch(
      /Nothing arrived at all\. Why is unknown: the server's attempt log could not be read in time \((no answer within \d+ ms|GET http:\/\/.*\/api\/v1\/mailbox\/attempts\?.* failed: no complete answer within the request timeout of \d+ ms)\)\.$/,
    );
  });
});
