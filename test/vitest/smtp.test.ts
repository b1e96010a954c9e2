// The SMTP deferral lab through mailroomjs/vitest: `inbox.smtp` on the fixture's
// inbox and the two SMTP matchers on Vitest's `expect`, against the global
// setup's server and demo app (which retries a deferred mail after 1 s).
import { describe, expectTypeOf } from 'vitest';
import { test, type SmtpMatchersExpectAnInbox, type Inbox } from '../../src/vitest/index.js';
import { postApp } from './support/env.js';

describe.concurrent('the SMTP lab in Vitest', () => {
  test('a greylisted signup is retried once, politely', async ({ inbox, expect }) => {
    await inbox.smtp.greylist({ minDelay: 1_000 });
    expect((await postApp('/api/signup', { email: inbox.address })).status).toBe(202);
    await expect(inbox).toReceiveMail({ subject: 'Confirm your email' }, { timeout: 20_000 });
    await expect(inbox).toHaveBeenRetried({ atLeast: 1 });
    await expect(inbox).toHaveBackedOff();
    await expect(inbox).not.toHaveBeenRetried({ atLeast: 2, within: 500 });
    expect((await inbox.smtp.attempts())[0]).toMatchObject({ code: 451, enhancedCode: '4.7.1', outcome: 'deferred', rule: 'greylist' });
  });

  test('a refused mail is never retried', async ({ inbox, expect }) => {
    await inbox.smtp.reject({ times: 5 });
    await postApp('/api/signup', { email: inbox.address });
    await expect.poll(async () => (await inbox.smtp.attempts()).length, { timeout: 10_000 }).toBe(2);
    await expect(inbox).not.toHaveBeenRetried({ within: 1_500 });
    await expect(inbox).toHaveBackedOff();
  });

  test('the SMTP matchers refuse anything but an Inbox, at compile time and at run time', async ({ expect }) => {
    expectTypeOf(expect(42).toHaveBeenRetried).thisParameter.toEqualTypeOf<SmtpMatchersExpectAnInbox>();
    expectTypeOf(expect('inbox').not.toHaveBackedOff).thisParameter.toEqualTypeOf<SmtpMatchersExpectAnInbox>();
    expectTypeOf(expect(null as unknown as Inbox).toHaveBeenRetried).thisParameter.toEqualTypeOf<unknown>();
    // @ts-expect-error only typed for an Inbox receiver
    await expect(expect(42).toHaveBeenRetried()).rejects.toThrow(
      'toHaveBeenRetried expects an Inbox (the `inbox` fixture or the result of createInbox()), got 42',
    );
    // @ts-expect-error not with .not either
    await expect(expect({}).not.toHaveBackedOff()).rejects.toThrow('toHaveBackedOff expects an Inbox');
  });
});
