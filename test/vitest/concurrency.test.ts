// Concurrent tests each get their own inbox, and nothing one of them does
// shows up in another's: 8 signups at once against one demo app and one
// mail server, through test.concurrent.for and the context's `expect`.
import { afterAll, describe } from 'vitest';
import { expect as globalExpect, test } from '../../src/vitest/index.js';
import { postApp } from './support/env.js';

const SIGNUPS = [1, 2, 3, 4, 5, 6, 7, 8];
const addresses = new Map<number, string>();
let running = 0;
let mostAtOnce = 0;

describe('8 concurrent signups', () => {
  afterAll(() => {
    globalExpect(addresses.size).toBe(SIGNUPS.length);
    globalExpect(new Set(addresses.values()).size).toBe(SIGNUPS.length);
    // They really overlapped (Vitest runs at most `maxConcurrency`, 5 by default, at once).
    globalExpect(mostAtOnce).toBeGreaterThan(1);
  });

  test.concurrent.for(SIGNUPS)("signup %i receives its own mail and nobody else's", async (n, { inbox, expect }) => {
    running += 1;
    mostAtOnce = Math.max(mostAtOnce, running);
    try {
      addresses.set(n, inbox.address);
      expect(inbox.address).toMatch(new RegExp(`^signup-${n}-receives-its-own-mail-a-[a-z2-7]{16}@mailroom\\.test$`));
      expect(await postApp('/api/signup', { email: inbox.address })).toMatchObject({ status: 202 });

      // Exactly the two mails of this signup, both to this address...
      const mails = await inbox.expectMails(2);
      expect(mails.map((m) => m.subject).sort()).toEqual(['Confirm your email', 'Welcome to Acme']);
      for (const mail of mails) expect(mail.to).toEqual([inbox.address]);
      // ...and nothing else, while the other seven are signing up too.
      await expect(inbox).not.toReceiveMail(undefined, { within: 1_500 });

      // The link confirms this address, not a neighbour's.
      const confirm = mails.find((m) => m.subject === 'Confirm your email')!;
      const token = new URL(confirm.links[0]!).searchParams.get('token');
      expect(await postApp('/api/confirm', { token })).toMatchObject({ status: 200, body: { email: inbox.address } });
    } finally {
      running -= 1;
    }
  });

  // The global `expect` is not bound to a concurrent test, but toReceiveMail
  // needs nothing from it: the inbox carries everything.
  test.concurrent('the global expect works too', async ({ inbox }) => {
    await postApp('/api/signup', { email: inbox.address });
    await globalExpect(inbox).toReceiveMail({ subject: 'Welcome to Acme' });
  });
});

describe('test.for (one after another)', () => {
  const seen: string[] = [];
  afterAll(() => {
    globalExpect(new Set(seen).size).toBe(2);
  });

  test.for(['first', 'second'])('%s run gets a fresh inbox', async (which, { inbox, expect }) => {
    seen.push(inbox.address);
    expect(inbox.address.startsWith(`${which}-run-gets-a-fresh-inbox-`)).toBe(true);
    await expect(inbox).not.toReceiveMail(undefined, { within: 1_000 });
  });
});
