// A user's API-level signup test, written against the installed package.
import { test, expect } from 'mailroom/vitest';

const app = process.env.DEMO_URL!;

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${app}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

test('signup sends a confirmation with a link and a code', async ({ inbox }) => {
  expect((await post('/api/signup', { email: inbox.address })).status).toBe(202);

  const mail = await inbox.expectMail({ subject: 'Confirm' });
  expect(mail.links[0]).toContain('/confirm?token=');
  expect(mail.codes[0]).toMatch(/^\d{6}$/);
  expect((await fetch(mail.links[0]!)).status).toBe(200);
  expect((await post('/api/verify', { email: inbox.address, code: mail.codes[0] })).status).toBe(200);

  await expect(inbox).toReceiveMail({ subject: 'Welcome' });
  await expect(inbox).not.toReceiveMail({ subject: 'Error' }, { within: 1_000 });
});
