// The embedded server's web UI extensions through real sockets: the mailbox
// index (`GET /api/v1/mailboxes`), the change stream (`GET /api/v1/events`,
// server-sent events) and the UI's static files at `/`. The UI itself is
// proven in Chromium (e2e/web-ui.spec.ts).
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { UI_CSP } from '../../src/server/http/web-ui/ui-assets.js';
import { MAX_EVENT_STREAMS } from '../../src/server/http/web-ui/event-stream.js';
import type { MailroomServer } from '../../src/server/index.js';
import { call, freshAddress, sendMail, start } from './helpers.js';

/** Reads a server-sent event stream; `next(n)` resolves with the first n events (of any type), each parsed. */
async function openEvents(server: MailroomServer, query = '', headers: Record<string, string> = {}) {
  const stop = new AbortController();
  const response = await request(`${server.apiURL}/api/v1/events${query}`, { headers, signal: stop.signal });
  const events: { type: string; data: { type: string; address: string; id: string; summary?: unknown } }[] = [];
  let buffer = '';
  let wake: (() => void) | undefined;
  let aborted = false;
  /** How the stream ended: 'ended' when the server finished it, 'aborted' by close(), 'broken' by an error. */
  const reading = (async (): Promise<'ended' | 'aborted' | 'broken'> => {
    try {
      for await (const chunk of response.body) {
        buffer += String(chunk);
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const type = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (type && data) events.push({ type, data: JSON.parse(data) });
          wake?.();
        }
      }
      return 'ended';
    } catch {
      return aborted ? 'aborted' : 'broken';
    }
  })();
  return {
    status: response.statusCode,
    headers: response.headers,
    async next(count: number) {
      while (events.length < count) await new Promise<void>((resolve) => (wake = resolve));
      return events.slice(0, count);
    },
    /** Settles when the stream ends, however it ends. */
    ended: reading,
    async close() {
      aborted = true;
      stop.abort();
      await reading;
    },
  };
}

describe('GET /api/v1/mailboxes', () => {
  it('lists the mailboxes holding mail, newest arrival first, with counts and the newest summary', async () => {
    const server = await start();
    const [a, b] = [freshAddress('a'), freshAddress('b')];
    await sendMail(server, { to: a, subject: 'a1', text: 'x' });
    await sendMail(server, { to: b, subject: 'b1', text: 'x' });
    await sendMail(server, { to: a, subject: 'a2', text: 'x' });

    const answer = await call(server, '/api/v1/mailboxes');
    expect(answer.status).toBe(200);
    expect(answer.json.total).toBe(2);
    expect(answer.json.mailboxes.map((m: { address: string; count: number; newest: { subject: string } }) => [m.address, m.count, m.newest.subject])).toEqual([
      [a, 2, 'a2'],
      [b, 1, 'b1'],
    ]);
    expect(answer.json.mailboxes[0].newest).toMatchObject({ id: expect.stringMatching(/^[0-9a-z]{11}$/), from: 'App <app@example.com>', to: [a] });
  });

  it('orders by the newest message still there: deleting it moves the mailbox down', async () => {
    const server = await start({ messagePerSecond: Infinity });
    const [a, b] = [freshAddress('a'), freshAddress('b')];
    await sendMail(server, { to: a, subject: 'a1', text: 'x' });
    await sendMail(server, { to: b, subject: 'b1', text: 'x' });
    await sendMail(server, { to: a, subject: 'a2', text: 'x' });
    const a2 = (await call(server, `/api/v1/mailbox?address=${a}`)).json.messages[0].id as string;
    await call(server, `/api/v1/message/${a2}?mailbox=${a}`, { method: 'DELETE' });
    const answer = await call(server, '/api/v1/mailboxes');
    expect(answer.json.mailboxes.map((m: { address: string; count: number; newest: { subject: string } }) => [m.address, m.count, m.newest.subject])).toEqual([
      [b, 1, 'b1'],
      [a, 1, 'a1'],
    ]);
  });

  it('keeps the newest mailboxes when there are more than the limit, whatever order they first got mail in', async () => {
    const server = await start();
    const addresses = Array.from({ length: 7 }, (_, i) => freshAddress(`m${i}`));
    // First mail in order 0..6, then newer mail to 2 and 0: the newest three are 0, 2, 6.
    for (const to of addresses) await sendMail(server, { to, subject: 'first', text: 'x' });
    await sendMail(server, { to: addresses[2], subject: 'again', text: 'x' });
    await sendMail(server, { to: addresses[0], subject: 'again', text: 'x' });
    const answer = await call(server, '/api/v1/mailboxes?limit=3');
    expect(answer.json.total).toBe(7);
    expect(answer.json.mailboxes.map((m: { address: string }) => m.address)).toEqual([addresses[0], addresses[2], addresses[6]]);
  });

  it('narrows by a case-insensitive part of the address and cuts at limit, saying how many matched', async () => {
    const server = await start();
    const addresses = [freshAddress('shop'), freshAddress('shop'), freshAddress('blog')];
    for (const to of addresses) await sendMail(server, { to, subject: 'hi', text: 'x' });

    const shops = await call(server, '/api/v1/mailboxes?contains=SHOP');
    expect(shops.json.mailboxes.map((m: { address: string }) => m.address).sort()).toEqual([addresses[0], addresses[1]].sort());
    const one = await call(server, '/api/v1/mailboxes?limit=1');
    expect(one.json).toMatchObject({ total: 3, mailboxes: [{ address: addresses[2] }] });
  });

  it('forgets a mailbox once it is emptied, and refuses a bad limit or an overlong search naming the parameter', async () => {
    const server = await start();
    const a = freshAddress();
    await sendMail(server, { to: a, subject: 'hi', text: 'x' });
    await call(server, `/api/v1/mailbox?address=${a}`, { method: 'DELETE' });
    expect((await call(server, '/api/v1/mailboxes')).json).toEqual({ total: 0, mailboxes: [] });

    expect((await call(server, '/api/v1/mailboxes?limit=0')).json).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('`limit`') });
    const long = await call(server, `/api/v1/mailboxes?contains=${'x'.repeat(255)}`);
    expect(long.status).toBe(400);
    expect(long.json.message).toContain('`contains` is at most 254 characters');
    expect((await call(server, '/api/v1/mailboxes', { method: 'POST' })).status).toBe(405);
  });
});

describe('GET /api/v1/events', () => {
  it('streams each arrival and removal, naming the mailbox and the id', async () => {
    const server = await start();
    const stream = await openEvents(server);
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers['x-content-type-options']).toBe('nosniff');
    const a = freshAddress();
    await sendMail(server, { to: a, subject: 'hi', text: 'x' });
    const [arrived] = await stream.next(1);
    expect(arrived).toEqual({
      type: 'arrived',
      data: { type: 'arrived', address: a, id: expect.stringMatching(/^[0-9a-z]{11}$/), summary: expect.objectContaining({ subject: 'hi', to: [a] }) },
    });
    // The summary is the list's, so a watcher needs no list call.
    expect(arrived!.data.summary).toEqual((await call(server, `/api/v1/mailbox?address=${a}`)).json.messages[0]);

    await call(server, `/api/v1/message/${arrived!.data.id}?mailbox=${a}`, { method: 'DELETE' });
    const [, removed] = await stream.next(2);
    expect(removed).toEqual({ type: 'removed', data: { type: 'removed', address: a, id: arrived!.data.id } });
    await stream.close();
  });

  it('with address=A streams only that mailbox', async () => {
    const server = await start();
    const [mine, other] = [freshAddress('mine'), freshAddress('other')];
    const stream = await openEvents(server, `?address=${mine}`);
    await sendMail(server, { to: other, subject: 'not mine', text: 'x' });
    await sendMail(server, { to: mine, subject: 'mine', text: 'x' });
    const [first] = await stream.next(1);
    expect(first!.data.address).toBe(mine);
    await stream.close();
  });

  it('needs the token when the server has one, and refuses a bad address before streaming', async () => {
    const server = await start({ token: 'ev-s3cret' });
    const refused = await call(server, '/api/v1/events');
    expect(refused.status).toBe(401);
    expect(refused.json).toMatchObject({ error: 'unauthorized' });
    expect((await call(server, '/api/v1/events?address=nope', { headers: { authorization: 'Bearer ev-s3cret' } })).json).toMatchObject({
      error: 'invalid_address',
    });
    const stream = await openEvents(server, '', { authorization: 'Bearer ev-s3cret' });
    expect(stream.status).toBe(200);
    await sendMail(server, { to: freshAddress(), subject: 'hi', text: 'x' });
    expect(await stream.next(1)).toHaveLength(1);
    await stream.close();
  });

  it(`holds at most ${MAX_EVENT_STREAMS} streams at once, refusing the next with 503 and Retry-After`, async () => {
    const server = await start();
    const streams = [];
    for (let i = 0; i < MAX_EVENT_STREAMS; i++) streams.push(await openEvents(server));
    const refused = await call(server, '/api/v1/events');
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.json.message).toContain(`Too many event streams open (${MAX_EVENT_STREAMS})`);
    await Promise.all(streams.map((s) => s.close()));
  });

  it('ends open streams when the server closes', async () => {
    const server = await start();
    const stream = await openEvents(server);
    expect(stream.status).toBe(200);
    await server.close();
    // The server finished the body: the client saw its end, not an abort of its own.
    expect(await stream.ended).toBe('ended');
  });
});

describe('the UI files at /', () => {
  it('serves the page without the token, under its own CSP, with nosniff and no CORS; the API behind it still asks', async () => {
    const server = await start({ token: 'ui-s3cret' });
    for (const path of ['/', '/ui/app.css']) {
      const answer = await call(server, path, { headers: { origin: server.apiURL } });
      expect(answer.status, path).toBe(200);
      expect(answer.headers['content-security-policy'], path).toBe(UI_CSP);
      expect(answer.headers['x-content-type-options'], path).toBe('nosniff');
      expect(
        Object.keys(answer.headers).filter((name) => name.startsWith('access-control-')),
        path,
      ).toEqual([]);
    }
    const page = await call(server, '/');
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<script type="module" src="/ui/app.js"></script>');
    // No inline script, no other origin, nothing that frames the UI.
    expect(UI_CSP).toContain("script-src 'self'");
    expect(UI_CSP).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    expect(UI_CSP).toContain("frame-ancestors 'none'");
    expect((await call(server, '/api/v1/mailboxes')).status).toBe(401);
    // POST / is SES v1's query endpoint (providers-ses-v1.test.ts); the page takes nothing else.
    expect((await call(server, '/', { method: 'PUT' })).status).toBe(405);
  });

  it('is advertised in /healthz with its calls', async () => {
    const server = await start();
    expect((await call(server, '/healthz')).json.features).toMatchObject({ ui: '/', mailboxes: '/api/v1/mailboxes', events: '/api/v1/events' });
  });
});
