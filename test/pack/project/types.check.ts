// The published types as a user gets them: these lines must not compile.
import { expect as pwExpect } from 'mailroom/playwright';
import { expect as vtExpect } from 'mailroom/vitest';
import { createInbox } from 'mailroom';

// @ts-expect-error toReceiveMail takes an Inbox, not a number
void pwExpect(42).toReceiveMail();
// @ts-expect-error toReceiveMail takes an Inbox, not a number
void vtExpect(42).toReceiveMail();

export async function typed(): Promise<string> {
  const inbox = await createInbox();
  const mail = await inbox.expectMail({ subject: /confirm/i, where: (m) => m.from.includes('acme') });
  return mail.links[0] ?? mail.codes[0] ?? mail.subject;
}
