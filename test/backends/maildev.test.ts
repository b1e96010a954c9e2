// mailroom on a real maildev 3 (the devDependency): the backend contract,
// then what is maildev's own - its push stream down, basic auth.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInbox, MailroomApiError, type InboxEvent } from '../../src/index.js';
import { openTestInbox, type TestRunnerBridge } from '../../src/runner/index.js';
import { startMaildev, type RunningMaildev } from '../support/maildev.js';
import { describeBackendContract, sendMail, type RunningBackend } from './support/contract.js';

async function maildevBackend(options: { webUser?: string; webPass?: string } = {}): Promise<RunningBackend & { maildev: RunningMaildev }> {
  const maildev = await startMaildev(options);
  return { backend: 'maildev', apiURL: maildev.apiURL, smtpPort: maildev.smtpPort, domain: 'mailroom.test', maildev, stop: () => maildev.stop() };
}

describeBackendContract('maildev', () => maildevBackend(), { sharedMailStays: true, extensions: false });

describe('maildev, beyond the contract', () => {
  let running: RunningBackend & { maildev: RunningMaildev };
  beforeAll(async () => {
    running = await maildevBackend({ webUser: 'tester', webPass: 's3cret' });
  });
  afterAll(async () => {
    await running?.stop();
  });

  it('behind basic auth: credentials in the option or in the URL, and a 401 without them', async () => {
    const credentials = { username: 'tester', password: 's3cret' };
    const inbox = await createInbox({ backend: 'maildev', apiURL: running.apiURL, credentials });
    await sendMail(running, { to: inbox.address, subject: 'Authenticated' });
    expect((await inbox.expectMail({}, { timeout: 5_000 })).subject).toBe('Authenticated');

    const inURL = running.apiURL.replace('http://', 'http://tester:s3cret@');
    const again = await createInbox({ backend: 'maildev', apiURL: inURL });
    expect(await again.messages()).toEqual([]);

    const refused = await createInbox({ backend: 'maildev', apiURL: running.apiURL, address: `given-${again.address}` }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(MailroomApiError);
    expect(refused).toMatchObject({ status: 401, slug: 'unauthorized' });
  });

  it("through the fixtures' option: a test's inbox on maildev, the lab refused, teardown deleting only its own mail", async () => {
    const notes: string[] = [];
    const bridge: TestRunnerBridge = {
      title: 'signs up on maildev',
      titlePath: 'maildev.test.ts > signs up on maildev',
      step: (_title, run) => run(),
      attach: () => {},
      annotate: (message) => void notes.push(message),
      timeLeft: () => undefined,
    };
    const credentials = { username: 'tester', password: 's3cret' };
    const { inbox, close } = await openTestInbox({ backend: 'maildev', apiURL: running.apiURL, credentials, timeout: 5_000 }, bridge);
    expect(inbox.client.backend).toBe('maildev');
    expect(inbox.address).toMatch(/^signs-up-on-maildev-/);
    await sendMail(running, { to: inbox.address, subject: 'Alone' });
    await sendMail(running, { to: [inbox.address, `other-${inbox.address}`], subject: 'Shared' });
    await inbox.expectMails(2);
    await expect(inbox.smtp.greylist()).rejects.toMatchObject({ slug: 'unsupported' });

    const error = console.error;
    console.error = () => {};
    try {
      await close({ failed: false });
    } finally {
      console.error = error;
    }
    // No note: the lab was refused, so no timeline is asked for; the delete went through.
    expect(notes).toEqual([]);
    const left = await inbox.client.listMessages(inbox.address);
    expect(left.messages.map((m) => m.subject)).toEqual(['Shared']);
  });

  it('with its push stream down, a wait polls at the floor and still finds the mail', async () => {
    // An HTTP front that passes the API through and refuses the WebSocket upgrade.
    const front: Server = createServer((req, res) => {
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const answer = await request(`${running.apiURL}${req.url}`, {
          method: req.method as 'GET',
          headers: { authorization: req.headers.authorization ?? '', 'content-type': req.headers['content-type'] ?? 'application/json' },
          body: chunks.length ? Buffer.concat(chunks) : undefined,
        });
        res.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type'] ?? 'text/plain') });
        res.end(Buffer.from(await answer.body.arrayBuffer()));
      })();
    });
    front.on('upgrade', (_req, socket) => socket.destroy());
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    try {
      const apiURL = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
      const events: InboxEvent[] = [];
      const inbox = await createInbox({ backend: 'maildev', apiURL, credentials: { username: 'tester', password: 's3cret' }, onEvent: (e) => events.push(e) });
      const waiting = inbox.expectMail({ subject: 'Polled' }, { timeout: 5_000 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await sendMail(running, { to: inbox.address, subject: 'Polled' });
      expect((await waiting).subject).toBe('Polled');
      const failed = events.filter((e) => e.type === 'check-failed');
      expect(failed).toHaveLength(1);
      expect(String((failed[0] as { error: Error }).error.message)).toMatch(/socket\.io/);
      // The polling loop took over, its first check at the floor of the hold's look (rule 4).
      const checks = events.filter((e): e is Extract<InboxEvent, { type: 'check' }> => e.type === 'check');
      expect(checks.length).toBeGreaterThanOrEqual(1);
      expect(checks[0]!.startedMs).toBeGreaterThanOrEqual(1_000);
    } finally {
      front.closeAllConnections();
      await new Promise<void>((resolve) => front.close(() => resolve()));
    }
  });
});
