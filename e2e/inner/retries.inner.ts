// Run by e2e/failure-output.spec.ts in the inner config's `retried` project
// (retries 1, repeatEach 2): the first attempt of each repetition fails on
// purpose, so every repetition is retried, and each attempt prints the
// address it was given.
import { test, expect } from 'mailroomjs/playwright';

test('fails once, then passes', async ({ inbox, request }, testInfo) => {
  console.log(`inbox: ${inbox.address}`);
  const signup = await request.post('/api/signup', { data: { email: inbox.address } });
  expect(signup.status()).toBe(202);
  // The previous attempt's mail went to the previous attempt's address.
  await expect(inbox).toReceiveMail({ subject: 'Confirm' });
  expect(testInfo.retry, 'the first attempt fails on purpose').toBeGreaterThan(0);
});
