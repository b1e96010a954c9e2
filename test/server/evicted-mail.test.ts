// Mail the global cap (maxMessages) pushed out: the listing says so, and a
// wait that finds nothing names the eviction instead of "nothing arrived".
import { describe, expect, it } from 'vitest';
import { createInbox, MailTimeoutError } from '../../src/index.js';
import { call, freshAddress, listPath, sendMail, silentLogger, start } from './helpers.js';

describe('evicted mail', () => {
  it('is counted per mailbox in the listing, with the newest evicted id', async () => {
    const server = await start({ maxMessages: 2, listPerSecond: Infinity });
    const [victim, other] = [freshAddress('victim'), freshAddress('other')];
    await sendMail(server, { to: victim, subject: 'first', text: 'x' });
    await sendMail(server, { to: victim, subject: 'second', text: 'x' });
    const ids = (await call(server, listPath(victim))).json.messages.map((m: { id: string }) => m.id);
    expect((await call(server, listPath(victim))).json.evicted).toBeUndefined();
    await sendMail(server, { to: other, subject: 'push', text: 'x' });
    await sendMail(server, { to: other, subject: 'push', text: 'x' });
    const listing = (await call(server, listPath(victim))).json;
    expect(listing.messages).toEqual([]);
    expect(listing.evicted).toEqual({ count: 2, newest_id: ids[0] });
    expect((await call(server, listPath(other))).json.evicted).toBeUndefined();
  });

  it.each([
    ['polling', 0],
    ['the long-poll', 4],
  ])('makes a wait (%s) whose mail was evicted say so instead of "nothing arrived"', async (_name, waitSlots) => {
    const logger = silentLogger();
    const server = await start({ maxMessages: 3, listPerSecond: Infinity, waitSlots, logger });
    const inbox = await createInbox({ apiURL: server.apiURL, domain: server.domains[0] });
    await sendMail(server, { to: inbox.address, subject: 'Your code', text: '123456' });
    for (let i = 0; i < 3; i++) await sendMail(server, { to: freshAddress('flood'), subject: 'flood', text: 'x' });
    const failure = await inbox.expectMail({ subject: 'code' }, { timeout: 1200 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MailTimeoutError);
    const error = failure as MailTimeoutError;
    expect(error.message).toContain('The server evicted 1 message for this address (the newest ');
    expect(error.message).toContain(
      "to stay under its message cap before the wait could read it: raise the server's maxMessages (mailroom serve --max-messages).",
    );
    expect(error.message).not.toContain('Nothing arrived');
    expect(error.evicted?.count).toBe(1);
    // and the server logged the eviction
    expect(logger.lines.some((l) => l.level === 'warn' && l.message.includes('evicted the oldest message'))).toBe(true);
  });

  it('does not blame evictions older than the watermark', async () => {
    const server = await start({ maxMessages: 1, listPerSecond: Infinity });
    const address = freshAddress('old');
    await sendMail(server, { to: address, subject: 'before', text: 'x' });
    await sendMail(server, { to: freshAddress('flood'), subject: 'flood', text: 'x' });
    // an inbox on the address now: its watermark is above the evicted mail
    await sendMail(server, { to: address, subject: 'watermark', text: 'x' });
    const inbox = await createInbox({ apiURL: server.apiURL, domain: server.domains[0], address });
    const error = (await inbox.expectMail({ subject: 'never' }, { timeout: 1200 }).catch((e: unknown) => e)) as MailTimeoutError;
    expect(error).toBeInstanceOf(MailTimeoutError);
    expect(error.message).not.toContain('evicted');
    expect(error.evicted).toBeUndefined();
  });
});
