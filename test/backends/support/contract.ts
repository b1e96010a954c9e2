// The contract every backend keeps, one suite run against each: the
// embedded server (test/backends/mailroom.test.ts), a real maildev
// (maildev.test.ts), the Mailpit model (mailpit.test.ts) and a real Mailpit
// when one is given (mailpit.live.test.ts). The test names are the cells of
// the backend table in docs/backends.md.
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInbox, MailroomError, MailTimeoutError, type InboxEvent, type InboxOptions } from '../../../src/index.js';
import type { BackendName } from '../../../src/backends/backend.js';

export interface RunningBackend {
  readonly backend: BackendName;
  readonly apiURL: string;
  readonly smtpPort: number;
  /** Where its SMTP listens; 127.0.0.1 by default. */
  readonly smtpHost?: string | undefined;
  readonly credentials?: { username: string; password: string } | undefined;
  /** The served domain of fresh addresses. */
  readonly domain: string;
  stop(): Promise<void>;
}

export interface BackendTraits {
  /** A mail also sent to another address stays at teardown (a catcher keeps one copy for all its recipients). */
  readonly sharedMailStays: boolean;
  /** The SMTP deferral lab and webhooks (the embedded server's extensions). */
  readonly extensions: boolean;
}

export async function sendMail(running: RunningBackend, mail: Mail.Options): Promise<void> {
  const transport = nodemailer.createTransport({ host: running.smtpHost ?? '127.0.0.1', port: running.smtpPort, secure: false, ignoreTLS: true });
  try {
    await transport.sendMail({ from: 'Acme <hello@acme.example>', subject: 'Hello', text: 'Hello there', ...mail });
  } finally {
    transport.close();
  }
}

export function describeBackendContract(name: string, start: () => Promise<RunningBackend>, traits: BackendTraits): void {
  describe(`the backend contract on ${name}`, () => {
    let running: RunningBackend;
    beforeAll(async () => {
      running = await start();
    });
    afterAll(async () => {
      await running?.stop();
    });

    const inboxOn = (options: InboxOptions = {}) =>
      createInbox({ backend: running.backend, apiURL: running.apiURL, credentials: running.credentials, domain: running.domain, timeout: 5_000, ...options });
    // What the backend holds for an address now, straight from it: no list floor to wait out.
    const listed = async (inbox: { client: { listMessages(a: string): Promise<{ messages: readonly { subject: string }[] }> }; address: string }) =>
      (await inbox.client.listMessages(inbox.address)).messages.map((m) => m.subject);
    const unique = (local: string) => `${local}-${Math.random().toString(36).slice(2, 10)}@${running.domain}`;

    it('fresh address: the first wait finds mail sent after setup', async () => {
      const inbox = await inboxOn();
      await sendMail(running, { to: inbox.address, subject: 'Your code', text: 'Your code is 123456' });
      const mail = await inbox.expectMail({ subject: 'Your code' });
      expect(mail.to).toEqual([inbox.address]);
      expect(mail.text).toContain('123456');
      expect(mail.from).toBe('Acme <hello@acme.example>');
      expect(await mail.raw()).toContain('Subject: Your code');
    });

    it('given address: mail there at setup is below the watermark, whatever its Date header', async () => {
      const address = unique('given');
      // The old mail claims to be from the future, the new one from 2001: only arrival counts.
      await sendMail(running, { to: address, subject: 'Old', date: new Date(Date.now() + 86_400_000) });
      const inbox = await inboxOn({ address });
      await sendMail(running, { to: address, subject: 'New', date: new Date('2001-01-01T00:00:00Z') });
      // Old arrived first: had it been above the watermark, it would be the answer.
      const mail = await inbox.expectMail();
      expect(mail.subject).toBe('New');
      expect(await listed(inbox)).toEqual(['New', 'Old']);
    });

    it('Bcc: a Bcc-only delivery is found, the address in another case', async () => {
      const inbox = await inboxOn();
      await sendMail(running, { to: unique('someone'), bcc: inbox.address.toUpperCase(), subject: 'Blind copy' });
      const mail = await inbox.expectMail({ subject: 'Blind copy' });
      expect(mail.subject).toBe('Blind copy');
    });

    it('exact match: mail to a longer address or from this one is not in its mailbox', async () => {
      const inbox = await inboxOn();
      await sendMail(running, { to: `x${inbox.address}`, subject: 'Longer address' });
      await sendMail(running, { from: inbox.address, to: unique('elsewhere'), subject: 'Sent by it' });
      await sendMail(running, { to: inbox.address, subject: 'Mine' });
      await inbox.expectMail({ subject: 'Mine' });
      expect(await listed(inbox)).toEqual(['Mine']);
    });

    it('co-recipient at teardown: only mail to this address alone is deleted', async () => {
      const inbox = await inboxOn();
      const other = unique('colleague');
      const otherInbox = await inboxOn({ address: other, watermark: null });
      await sendMail(running, { to: inbox.address, subject: 'Alone' });
      await sendMail(running, { to: [inbox.address, other], subject: 'Shared' });
      await inbox.expectMails(2);
      await inbox.delete();
      // The other address's test still has its mail, whatever the backend.
      expect((await otherInbox.expectMail({ subject: 'Shared' })).subject).toBe('Shared');
      expect(await listed(inbox)).toEqual(traits.sharedMailStays ? ['Shared'] : []);
    });

    it('a second delete of one mail is already gone', async () => {
      const inbox = await inboxOn();
      await sendMail(running, { to: inbox.address, subject: 'Delete me' });
      const mail = await inbox.expectMail();
      expect(await inbox.deleteMessage(mail)).toBe(true);
      expect(await inbox.deleteMessage(mail)).toBe(false);
      expect(await listed(inbox)).toEqual([]);
    });

    it('push: a wait started before the mail is woken by it in one check', async () => {
      const events: InboxEvent[] = [];
      const inbox = await inboxOn({ onEvent: (event) => events.push(event) });
      const waiting = inbox.expectMail({ subject: 'Pushed' });
      // Sent once the wait has made its first look, so only a push (or the server's hold) can answer it in one check.
      await until(() => events.some((e) => e.type === 'check' || e.type === 'wait-start'));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const sentAt = performance.now();
      await sendMail(running, { to: inbox.address, subject: 'Pushed' });
      await waiting;
      const resolvedAfter = performance.now() - sentAt;
      const end = events.find((e) => e.type === 'wait-end');
      expect(end).toMatchObject({ outcome: 'received', checks: 1 });
      expect(resolvedAfter).toBeLessThan(1_000);
    });

    it('two waits take the first and the second mail in arrival order', async () => {
      const inbox = await inboxOn();
      await sendMail(running, { to: inbox.address, subject: 'Code 1', date: new Date('2030-01-01T00:00:00Z') });
      await sendMail(running, { to: inbox.address, subject: 'Code 2', date: new Date('2001-01-01T00:00:00Z') });
      expect((await inbox.expectMail({ subject: /Code/ })).subject).toBe('Code 1');
      expect((await inbox.expectMail({ subject: /Code/ })).subject).toBe('Code 2');
    });

    it('a failed wait names the subjects it rejected (rule 9)', async () => {
      const inbox = await inboxOn();
      await sendMail(running, { to: inbox.address, subject: 'Newsletter' });
      const error = await inbox.expectMail({ subject: 'Reset your password' }, { timeout: 500 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MailTimeoutError);
      expect((error as MailTimeoutError).message).toContain(inbox.address);
      expect((error as MailTimeoutError).message).toContain('"Newsletter"');
    });

    it('deferral lab: inbox.smtp.greylist()', async () => {
      const inbox = await inboxOn();
      const started = performance.now();
      const outcome = await inbox.smtp.greylist({ minDelay: 1_000 }).then(
        () => 'set',
        (e: unknown) => e,
      );
      if (traits.extensions) {
        expect(outcome).toBe('set');
        await inbox.smtp.clear();
        return;
      }
      expect(outcome).toBeInstanceOf(MailroomError);
      expect(outcome).toMatchObject({ slug: 'unsupported' });
      expect((outcome as Error).message).toContain(`${running.backend} at ${new URL(running.apiURL).origin} does not offer the SMTP deferral lab`);
      expect((outcome as Error).message).toContain("backend: 'mailroom'");
      expect(performance.now() - started).toBeLessThan(500);
    });

    it('webhooks: inbox.webhooks.add()', async () => {
      const inbox = await inboxOn();
      const started = performance.now();
      const outcome = await inbox.webhooks.add({ url: 'http://127.0.0.1:9/hook' }).then(
        () => 'added',
        (e: unknown) => e,
      );
      if (traits.extensions) {
        expect(outcome).toBe('added');
        await inbox.webhooks.removeAll();
        return;
      }
      expect(outcome).toMatchObject({ slug: 'unsupported' });
      expect((outcome as Error).message).toContain(`${running.backend} at ${new URL(running.apiURL).origin} does not offer webhooks`);
      expect((outcome as Error).message).toContain("backend: 'mailroom'");
      expect(performance.now() - started).toBeLessThan(500);
    });
  });
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}
