// The `mailroom` option: provided for the whole run by the global setup,
// overridden key by key in a file or describe, validated at the edge. And
// the types: `inbox` is an Inbox, toReceiveMail only compiles on one.
import { afterAll, beforeEach, describe, expect, expectTypeOf, inject, vi } from 'vitest';
import { Inbox, Mail } from '../../src/index.js';
import { test, type MailroomTestOptions, type ToReceiveMailExpectsAnInbox } from '../../src/vitest/index.js';
import { send, stats } from './support/env.js';

describe.concurrent('the provided value', () => {
  test('reaches the mailroom fixture and the inbox', ({ mailroom, inbox, expect }) => {
    const provided = inject('mailroom');
    expect(provided?.apiURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(mailroom).toEqual(provided);
    expect(inbox.client.apiURL).toBe(provided?.apiURL);
    expect(inbox.timeout).toBe(30_000);
  });
});

describe.concurrent('test.override in a describe', () => {
  test.override({ mailroom: { timeout: 1_500 } });

  test('layers its keys over the provided ones', ({ mailroom, inbox, expect }) => {
    expect(mailroom).toEqual({ timeout: 1_500 });
    expect(inbox.timeout).toBe(1_500);
    // The API address still comes from the provided value.
    expect(inbox.client.apiURL).toBe(inject('mailroom')?.apiURL);
  });

  test('is the budget of toReceiveMail', async ({ inbox, expect }) => {
    // "within 1.5 s (N checks)" is the text of a wait that ran out of a
    // 1.5 s budget; one cut short of another budget says so ("when the wait
    // was cut short of its 30 s budget"), so no stopwatch is needed.
    await expect(expect(inbox).toReceiveMail({ subject: 'Never' })).rejects.toThrow(
      new RegExp(`arrived at ${inbox.address.replace(/[.]/g, '\\.')} within 1\\.5 s \\(\\d+ checks?\\)\\.`),
    );
  });
});

describe.concurrent('test.override of one key', () => {
  // Left out or undefined, a key keeps the provided value: only keepOnFailure changes here.
  test.override({ mailroom: { keepOnFailure: true, apiURL: undefined } });

  test('keeps the provided apiURL and domain', async ({ inbox, expect }) => {
    const provided = inject('mailroom');
    expect(inbox.client.apiURL).toBe(provided?.apiURL);
    expect(inbox.address.endsWith(`@${provided?.domain}`)).toBe(true);
    // The provided server is the one that answers the inbox's calls.
    expect(await inbox.messages()).toEqual([]);
    expect(await stats(inbox.address)).toMatchObject({ list: 1 });
  });
});

describe.concurrent('reports', () => {
  test('a received mail is annotated with its HTML and text', async ({ inbox, task, expect }) => {
    await send(inbox.address, { subject: 'Your code', text: 'Your code is 482913', html: '<p>Your code is <b>482913</b></p>' });
    await inbox.expectMail({ subject: 'Your code' });
    // Annotations are recorded asynchronously; the runner awaits them before the test ends.
    await vi.waitFor(() => expect(task.annotations).toHaveLength(2));
    const name = `mail "Your code" to ${inbox.address}`;
    expect(task.annotations.map((a) => [a.type, a.message, a.attachment?.contentType])).toEqual([
      ['mailroom', `${name}.html`, 'text/html'],
      ['mailroom', `${name}.txt`, 'text/plain'],
    ]);
    expect(task.annotations[0]?.attachment?.body).toContain('<p>Your code is <b>482913</b></p>');
    expect(task.annotations[1]?.attachment?.body).toContain('Codes: 482913');
    expect(task.meta.mailroom).toEqual({ address: inbox.address });
  });

  describe('with attach: false', () => {
    test.override({ mailroom: { attach: false } });

    test('nothing is annotated', async ({ inbox, task, expect, onTestFinished }) => {
      await send(inbox.address, { subject: 'Quiet' });
      await inbox.expectMail({ subject: 'Quiet' });
      // Looked at once the test is over: the fixture's teardown awaits every
      // attachment first, so a stray annotation has landed by then.
      onTestFinished(() => {
        expect(task.annotations).toEqual([]);
      });
    });
  });
});

describe.concurrent('types', () => {
  test('inbox is an Inbox and a wait gives a Mail', async ({ inbox, mailroom, expect }) => {
    expectTypeOf(inbox).toEqualTypeOf<Inbox>();
    expectTypeOf(mailroom).toEqualTypeOf<MailroomTestOptions>();
    expectTypeOf<ReturnType<Inbox['expectMail']>>().resolves.toEqualTypeOf<Mail>();
    expect(inbox).toBeInstanceOf(Inbox);
  });

  test('toReceiveMail refuses anything but an Inbox, at compile time and at run time', async ({ expect }) => {
    // The compiler says so by name: "The 'this' context of type 'Assertion<number>' is not
    // assignable to method's 'this' of type 'ToReceiveMailExpectsAnInbox'."
    expectTypeOf(expect(42).toReceiveMail).thisParameter.toEqualTypeOf<ToReceiveMailExpectsAnInbox>();
    expectTypeOf(expect.soft(42).not.toReceiveMail).thisParameter.toEqualTypeOf<ToReceiveMailExpectsAnInbox>();
    expectTypeOf(expect(null as unknown as Inbox).toReceiveMail).thisParameter.toEqualTypeOf<unknown>();
    // @ts-expect-error toReceiveMail is only typed for an Inbox receiver
    await expect(expect(42).toReceiveMail()).rejects.toThrow('toReceiveMail expects an Inbox (the `inbox` fixture or the result of createInbox()), got 42');
    // @ts-expect-error not with .not either
    await expect(expect({ address: 'a@mailroom.test' }).not.toReceiveMail()).rejects.toThrow('got an object');
  });
});

describe.concurrent('retries', () => {
  const attempts: string[] = [];

  test('a retried test gets a fresh inbox', { retry: 1 }, async ({ inbox, task, expect }) => {
    attempts.push(inbox.address);
    await send(inbox.address, { subject: `Attempt ${attempts.length}` });
    // The first attempt fails on purpose; the retry must not see its mail.
    expect(task.result?.retryCount, 'first attempt').toBe(1);
    expect(attempts).toHaveLength(2);
    expect(attempts[1]).not.toBe(attempts[0]);
    await expect(inbox).toReceiveMail({ subject: 'Attempt 2' });
    // The failed attempt's teardown ran before the retry, and deleted its mailbox.
    expect(await stats(attempts[0]!)).toMatchObject({ deleteMailbox: 1 });
  });
});

describe('screenshots in Vitest', () => {
  test.override({ mailroom: { screenshots: 'only-on-failure' } });

  // The inbox fixture refuses it at setup, so a test that asks for the inbox
  // fails before its body runs. test.fails alone passes on any failure: the
  // errors are kept as the test fails, and afterAll checks they are the refusal.
  const failures: string[] = [];
  beforeEach(({ onTestFailed }) => {
    onTestFailed(({ task }) => void failures.push(...(task.result?.errors ?? []).map((error) => error.message)));
  });
  afterAll(() => {
    expect(failures).toEqual([expect.stringContaining('`mailroom.screenshots: "only-on-failure"` needs a browser to render mail in, and Vitest has none')]);
  });

  test.fails('is refused: Vitest has no browser to render mail in', ({ inbox }) => {
    void inbox;
  });
});
