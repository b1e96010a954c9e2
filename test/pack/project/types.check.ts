// The published types as a user gets them: these lines must not compile.
import { expect as pwExpect } from 'mailroomjs/playwright';
import { expect as vtExpect } from 'mailroomjs/vitest';
import { expect as jestExpect } from '@jest/globals';
import type {} from 'mailroomjs/jest';
import { createInbox } from 'mailroomjs';

// @ts-expect-error toReceiveMail takes an Inbox, not a number
void pwExpect(42).toReceiveMail();
// @ts-expect-error toReceiveMail takes an Inbox, not a number
void vtExpect(42).toReceiveMail();
// @ts-expect-error toReceiveMail takes an Inbox, not a number
void jestExpect(42).toReceiveMail();
// @ts-expect-error the SMTP matchers take an Inbox, not a number
void pwExpect(42).toHaveBeenRetried();
// @ts-expect-error the webhook matchers take a Webhook, not a string
void jestExpect('wh').toHaveDelivered();
// @ts-expect-error the SMTP matchers take an Inbox, not a number
void vtExpect(42).toHaveBackedOff();

export async function typed(): Promise<string> {
  const inbox = await createInbox();
  const mail = await inbox.expectMail({ subject: /confirm/i, where: (m) => m.from.includes('acme') });
  await inbox.smtp.greylist({ minDelay: 2_000 });
  await vtExpect(inbox).toHaveBeenRetried({ atLeast: 1 });
  await pwExpect(inbox).toHaveBackedOff();
  await jestExpect(inbox).not.toReceiveMail({ subject: 'Error' }, { within: 1_000 });
  await jestExpect(mail).toPassMailChecks({ failOn: 'warning' });
  return mail.links[0] ?? mail.codes[0] ?? mail.subject;
}
