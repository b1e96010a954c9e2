// GET /api/v1/mailbox?address=A&limit=N&before_id=ID: the page older than an
// id, advertised as `features.paging`, and charged once per walk: a page that
// continues the address's latest listing within the list window is free.
// Real SMTP in, real HTTP out; the server's wall clock is injected, so the
// window is exact.
import { describe, expect, it } from 'vitest';
import { call, fakeClock, freshAddress, listPath, sendMail, start } from './helpers.js';
import { waitPath } from './wait-helpers.js';

const page = (address: string, limit: number, beforeId: string) =>
  `/api/v1/mailbox?${new URLSearchParams({ address, limit: String(limit), before_id: beforeId })}`;
const subjects = (answer: { json: { messages: { subject: string }[] } }) => answer.json.messages.map((m) => m.subject);
const oldestId = (answer: { json: { messages: { id: string }[] } }) => answer.json.messages.at(-1)!.id;

async function mailboxOf(count: number, options: Parameters<typeof start>[0] = {}) {
  const clock = fakeClock();
  const server = await start({ clock, ...options });
  const address = freshAddress();
  for (let i = 1; i <= count; i++) await sendMail(server, { to: address, subject: `Mail ${i}`, text: 'x' });
  return { server, address, clock };
}

describe('paging the list', () => {
  it('is advertised in /healthz as features.paging', async () => {
    const server = await start();
    expect((await call(server, '/healthz')).json.features).toMatchObject({ paging: 'before_id' });
  });

  it('walks a mailbox down page by page, newest first, all in the same instant: one list call charged', async () => {
    const { server, address } = await mailboxOf(7);
    const first = await call(server, listPath(address, 3));
    expect(subjects(first)).toEqual(['Mail 7', 'Mail 6', 'Mail 5']);
    const second = await call(server, page(address, 3, oldestId(first)));
    expect(second.status).toBe(200);
    expect(subjects(second)).toEqual(['Mail 4', 'Mail 3', 'Mail 2']);
    const third = await call(server, page(address, 3, oldestId(second)));
    expect(subjects(third)).toEqual(['Mail 1']);
    // The budget was charged for the first listing only: a new listing is still refused.
    expect((await call(server, listPath(address, 3))).status).toBe(429);
    expect(server.stats(address)).toMatchObject({ list: 4, rateLimited: 1 });
  });

  it('charges a page that does not continue the latest listing: one newer than it, or one after the window', async () => {
    const { server, address, clock } = await mailboxOf(4);
    const first = await call(server, listPath(address, 2));
    // Above what the listing served: it could show new mail, so it is a list call.
    const above = await call(server, page(address, 2, 'zzzzzzzzzzz'));
    expect(above.status).toBe(429);
    expect(above.json.error).toBe('rate_limited');
    clock.advance(1000); // the window of the first listing is over
    const late = await call(server, page(address, 2, oldestId(first)));
    expect(late.status).toBe(200);
    expect(subjects(late)).toEqual(['Mail 2', 'Mail 1']);
    expect((await call(server, listPath(address, 2))).status).toBe(429); // the late page was charged
  });

  it('continues a long-poll answer for free', async () => {
    const { server, address } = await mailboxOf(3);
    const held = await call(server, waitPath({ address, limit: 2, timeout: 0 }));
    expect(subjects(held)).toEqual(['Mail 3', 'Mail 2']);
    const next = await call(server, page(address, 2, oldestId(held)));
    expect(next.status).toBe(200);
    expect(subjects(next)).toEqual(['Mail 1']);
  });

  it('refuses a malformed before_id with invalid_request', async () => {
    const server = await start();
    const answer = await call(server, page(freshAddress(), 2, 'nope'));
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('`before_id`') });
  });
});
