// Way (c): the wait many teams write by hand against a disposable-inbox API,
// here the same HTTP API mailroom's client uses (docs/CONTRACT.md). It sleeps
// a fixed second first and between looks, lists the mailbox, and takes the
// newest message whose subject matches: it reads no watermark, so it cannot
// tell new mail from old, and only works because every test uses a fresh
// address. Then it fetches the message (the list has only a preview) and
// reads the link from its text. Deliberately plain: this is the baseline the
// issue's target compares mailroom with, not code to copy.
import { setTimeout as sleep } from 'node:timers/promises';
import { CONFIRM_LINK } from './ways.js';

const POLL_EVERY_MS = 1_000;

interface ListAnswer {
  readonly messages: readonly { readonly id: string; readonly subject: string }[];
}

/** The confirmation link of the newest mail to `address` whose subject contains `subject`. */
export async function linkByHandWrittenLoop(apiURL: string, address: string, subject: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    await sleep(POLL_EVERY_MS);
    const list = await fetch(`${apiURL}/api/v1/mailbox?${new URLSearchParams({ address })}`);
    // Anything but a 200 (a 429 among them) is simply tried again next second, as such loops do.
    if (list.status !== 200) {
      await list.body?.cancel();
      continue;
    }
    const { messages } = (await list.json()) as ListAnswer;
    const newest = messages.find((m) => m.subject.includes(subject)); // the list is newest first
    if (!newest) continue;
    const message = await fetch(`${apiURL}/api/v1/message/${encodeURIComponent(newest.id)}?${new URLSearchParams({ mailbox: address })}`);
    const { text } = (await message.json()) as { text: string };
    const link = CONFIRM_LINK.exec(text)?.[0];
    if (link) return link;
  }
  throw new Error(`No mail with a subject containing "${subject}" and a confirmation link arrived at ${address} within ${timeoutMs} ms`);
}
