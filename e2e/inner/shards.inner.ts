// Run as two shards at once by e2e/shards.spec.ts. Every test has the same
// title, so every address has the same readable prefix and only its random
// part tells them apart; each test checks that its mailbox holds its own
// two mails and nothing else.
import { test, expect } from 'mailroomjs/playwright';

for (const group of ['a', 'b', 'c', 'd', 'e', 'f']) {
  test.describe(group, () => {
    test('signs up', async ({ page, inbox }) => {
      console.log(`inbox: ${inbox.address}`);
      await page.goto('/');
      await page.getByLabel('Email').fill(inbox.address);
      await page.getByRole('button', { name: 'Sign up' }).click();
      const confirm = await inbox.expectMail({ subject: 'Confirm' });
      await page.goto(confirm.links[0]!);
      await expect(page.getByRole('heading', { name: 'Email confirmed' })).toBeVisible();
      await expect(inbox).toReceiveMail({ subject: 'Welcome' });

      const mails = await inbox.messages();
      expect(mails.map((m) => m.subject).sort()).toEqual(['Confirm your email', 'Welcome to Acme']);
      expect(mails.flatMap((m) => m.to)).toEqual([inbox.address, inbox.address]);
    });
  });
}
