// The README's example, word for word, against the installed package.
import { test, expect } from 'mailroom/playwright';

test('signup', async ({ page, inbox }) => {
  await page.goto('/');
  await page.getByLabel('Email').fill(inbox.address);
  await page.getByRole('button', { name: 'Sign up' }).click();
  const mail = await inbox.expectMail({ subject: 'Confirm' });
  await page.goto(mail.links[0]!);
  await expect(page.getByRole('heading', { name: 'Email confirmed' })).toBeVisible();
  await expect(inbox).toReceiveMail({ subject: 'Welcome' });
  await expect(inbox).not.toReceiveMail({ subject: 'Error' }, { within: 2_000 });
});
