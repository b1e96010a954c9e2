// The opt-in outbox: what the app sent, as its SMTP server accepted it,
// readable over HTTP (the suite benchmark's floor reads links from it).
import { describe, expect, test } from 'vitest';
import { fetch } from 'undici';
import { SUBJECTS, startDemoApp } from '../../fixtures/demo-app/index.js';
import type { DemoAppOptions, SentMail } from '../../fixtures/demo-app/index.js';
import { startSmtpSink } from '../../fixtures/smtp-sink.js';
import { bySubject, confirmationOf, freshAddress, postJson } from './context.js';

/** The outbox's answer, or the app's JSON refusal. */
type OutboxAnswer = { to: string; mails: SentMail[] } & { error?: string; message?: string };

async function outboxOf(url: string, to: string): Promise<{ status: number; json: OutboxAnswer }> {
  const res = await fetch(`${url}/api/outbox?${new URLSearchParams({ to })}`);
  return { status: res.status, json: (await res.json()) as OutboxAnswer };
}

describe('outbox: true', () => {
  test('lists what was sent to an address, oldest first, with the same link the SMTP server received', async () => {
    const sink = await startSmtpSink();
    const app = await startDemoApp({ smtp: sink, outbox: true });
    try {
      const email = freshAddress('outbox');
      await postJson(`${app.url}/api/signup`, { email });
      await postJson(`${app.url}/api/signup`, { email: freshAddress('someone-else') });

      // Case-insensitive, like the app's own signups; nobody else's mail.
      const { status, json } = await outboxOf(app.url, email.toUpperCase());
      expect(status).toBe(200);
      expect(json.to).toBe(email.toUpperCase());
      expect(json.mails.map((m) => m.subject).sort()).toEqual([SUBJECTS.confirm, SUBJECTS.welcome].sort());
      expect(json.mails[0]!.sentAt <= json.mails[1]!.sentAt).toBe(true);
      const confirm = json.mails.find((m) => m.subject === SUBJECTS.confirm)!;
      expect(confirm.to).toBe(email);
      expect(Date.parse(confirm.sentAt)).not.toBeNaN();
      const { link } = confirmationOf(bySubject(sink.messages, SUBJECTS.confirm));
      expect(confirm.text).toContain(link);
      expect(confirm.html).toContain(`href="${link}"`);

      expect(await outboxOf(app.url, freshAddress('nobody'))).toEqual({ status: 200, json: { to: expect.any(String), mails: [] } });
      expect((await outboxOf(app.url, '')).json.error).toBe('invalid_request');
    } finally {
      await app.close();
      await sink.close();
    }
  });

  test('holds no mail the SMTP server refused', async () => {
    const sink = await startSmtpSink();
    const { port } = sink;
    await sink.close();
    const app = await startDemoApp({ smtp: { host: '127.0.0.1', port }, outbox: true, retry: { attempts: 1 } });
    try {
      const email = freshAddress('refused');
      const answer = await postJson(`${app.url}/api/signup`, { email });
      expect((answer.json.deliveries as Array<{ state: string }>).map((d) => d.state)).toEqual(['failed', 'failed']);
      expect((await outboxOf(app.url, email)).json.mails).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

test('without the option there is no outbox route', async () => {
  const sink = await startSmtpSink();
  const app = await startDemoApp({ smtp: sink });
  try {
    const email = freshAddress('no-outbox');
    await postJson(`${app.url}/api/signup`, { email });
    expect(await outboxOf(app.url, email)).toEqual({ status: 404, json: { error: 'not_found', message: 'Nothing at GET /api/outbox' } });
  } finally {
    await app.close();
    await sink.close();
  }
});

test('a non-boolean outbox option is a TypeError', async () => {
  await expect(startDemoApp({ smtp: { host: '127.0.0.1', port: 2525 }, outbox: 1 } as unknown as DemoAppOptions)).rejects.toThrow(
    new TypeError('Expected `outbox` to be a boolean, got 1'),
  );
});
