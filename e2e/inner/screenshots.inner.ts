// The `screenshots` option, run by e2e/failure-output.spec.ts, which reads
// the attachments of each test from the JSON report. Each test signs up over
// the demo app's JSON API and receives "Confirm your email" (HTML and text).
import { test, expect } from 'mailroomjs/playwright';
import type { APIRequestContext } from '@playwright/test';

async function confirmMail(request: APIRequestContext, inbox: { address: string; expectMail(f: { subject: string }): Promise<unknown> }) {
  const answer = await request.post('/api/signup', { data: { email: inbox.address } });
  expect(answer.status()).toBe(202);
  await inbox.expectMail({ subject: 'Confirm' });
}

test('default, failed: the mail is pictured', async ({ inbox, request }) => {
  await confirmMail(request, inbox);
  expect('the test').toBe('failing on purpose');
});

test('default, passed: no picture', async ({ inbox, request }) => {
  await confirmMail(request, inbox);
});

test.describe('on', () => {
  test.use({ mailroom: { screenshots: 'on' } });
  test('on, passed: the mail is pictured', async ({ inbox, request }) => {
    await confirmMail(request, inbox);
  });
});

test.describe('off', () => {
  test.use({ mailroom: { screenshots: 'off' } });
  test('off, failed: no picture', async ({ inbox, request }) => {
    await confirmMail(request, inbox);
    expect('the test').toBe('failing on purpose');
  });
});
