// The HTTP API, row by row of the contract, with mail delivered over real SMTP.
import { describe, expect, it } from 'vitest';
import { call, fakeClock, freshAddress, listPath, messagePath, sendMail, start } from './helpers.js';

const LONG_BODY = `Hello,\n\n${'This paragraph is filler that pushes the code past the preview. '.repeat(6)}\n\nYour code is 482913.\n`;

describe('GET /mailbox', () => {
  it('lists newest first with summaries whose preview is short and not the body', async () => {
    const server = await start({ listPerSecond: Infinity });
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'First', text: 'one' });
    await sendMail(server, { to: `Someone <${address}>, other@example.com`, cc: 'cc@example.com', subject: 'Second', text: LONG_BODY });

    const answer = await call(server, listPath(address));
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.json.address).toBe(address);
    const [newest, oldest] = answer.json.messages;
    expect(answer.json.messages).toHaveLength(2);
    expect(newest.subject).toBe('Second');
    expect(oldest.subject).toBe('First');
    expect(newest.id > oldest.id).toBe(true);
    expect(Object.keys(newest).sort()).toEqual(['from', 'id', 'preview', 'received_at', 'size', 'subject', 'to']);
    expect(newest.from).toBe('App <app@example.com>');
    expect(newest.to).toEqual([address, 'other@example.com']);
    expect(newest.preview.startsWith('Hello, This paragraph is filler')).toBe(true);
    expect(newest.preview.length).toBeLessThanOrEqual(100);
    expect(newest.preview).not.toContain('482913');
    expect(new Date(newest.received_at).toISOString()).toBe(newest.received_at);
    expect(newest.size).toBeGreaterThan(LONG_BODY.length);
  });

  it('returns an empty list for an address that never received mail', async () => {
    const server = await start();
    const address = freshAddress();
    const answer = await call(server, listPath(address));
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ address, messages: [] });
  });
});

describe('GET /message/{id}', () => {
  it('returns the full message, with the body the list only previews', async () => {
    const server = await start();
    const address = freshAddress();
    await sendMail(server, {
      to: address,
      cc: 'Carol <carol@example.com>',
      subject: 'Your code',
      text: LONG_BODY,
      html: '<p>Your code is <b>482913</b></p>',
      messageId: '<abc-123@app.example.com>',
      headers: { 'X-Test': 'yes' },
      attachments: [{ filename: 'note.txt', content: 'hello attachment' }],
    });
    const [summary] = (await call(server, listPath(address))).json.messages;
    const answer = await call(server, messagePath(summary.id, address));
    expect(answer.status).toBe(200);
    const message = answer.json;
    expect(message).toMatchObject({ ...summary, message_id: '<abc-123@app.example.com>', cc: ['carol@example.com'] });
    expect(message.text).toContain('Your code is 482913.');
    expect(message.html.trim()).toBe('<p>Your code is <b>482913</b></p>');
    expect(message.headers['x-test']).toEqual(['yes']);
    expect(message.headers.subject).toEqual(['Your code']);
    expect(new Date(message.date).toISOString()).toBe(message.date);
    expect(message.attachments).toEqual([{ filename: 'note.txt', content_type: 'text/plain', size: 16, content_id: null }]);
  });

  it('serves the raw source as received', async () => {
    const server = await start();
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'Raw', text: 'raw body' });
    const [summary] = (await call(server, listPath(address))).json.messages;
    const raw = await call(server, messagePath(summary.id, address, '/raw'));
    expect(raw.status).toBe(200);
    expect(raw.headers['content-type']).toBe('message/rfc822');
    expect(raw.body.length).toBe(summary.size);
    expect(raw.text).toMatch(/^Content-Type: text\/plain/m);
    expect(raw.text).toContain('raw body');
  });

  it('answers 404 not_found for an unknown id and for an id of another mailbox', async () => {
    const server = await start();
    const address = freshAddress();
    const other = freshAddress();
    await sendMail(server, { to: address, subject: 'Mine', text: 'x' });
    const [summary] = (await call(server, listPath(address))).json.messages;
    for (const path of [messagePath('00000000000', address), messagePath(summary.id, other), messagePath(summary.id, other, '/raw')]) {
      const answer = await call(server, path);
      expect(answer.status).toBe(404);
      expect(answer.json.error).toBe('not_found');
      expect(answer.json.message).toMatch(/expired, was deleted, or never existed/);
    }
  });
});

describe('deletes are idempotent', () => {
  it('DELETE /message answers deleted:true once, then deleted:false, also for ids that never existed', async () => {
    const server = await start();
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'Bye', text: 'x' });
    const [summary] = (await call(server, listPath(address))).json.messages;
    const first = await call(server, messagePath(summary.id, address), { method: 'DELETE' });
    const second = await call(server, messagePath(summary.id, address), { method: 'DELETE' });
    const never = await call(server, messagePath('00000000000', address), { method: 'DELETE' });
    expect([first.status, second.status, never.status]).toEqual([200, 200, 200]);
    expect([first.json, second.json, never.json]).toEqual([{ deleted: true }, { deleted: false }, { deleted: false }]);
    expect((await call(server, messagePath(summary.id, address))).status).toBe(404);
  });

  it('DELETE /mailbox answers the count, then 0', async () => {
    const server = await start({ listPerSecond: Infinity });
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'a', text: 'x' });
    await sendMail(server, { to: address, subject: 'b', text: 'x' });
    const first = await call(server, listPath(address), { method: 'DELETE' });
    const second = await call(server, listPath(address), { method: 'DELETE' });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect([first.json, second.json]).toEqual([{ deleted: 2 }, { deleted: 0 }]);
    expect((await call(server, listPath(address))).json.messages).toEqual([]);
  });
});

describe('budgets', () => {
  it('allows one list call per second per address and says exactly how long to wait', async () => {
    const clock = fakeClock();
    const server = await start({ clock });
    const address = freshAddress();
    const other = freshAddress();
    expect((await call(server, listPath(address))).status).toBe(200);
    clock.advance(400);
    const refused = await call(server, listPath(address));
    expect(refused.status).toBe(429);
    expect(refused.json.error).toBe('rate_limited');
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json.message).toContain(address);
    // another address has its own budget
    expect((await call(server, listPath(other))).status).toBe(200);
    // a refusal does not push the window: 1 s after the allowed call is enough
    clock.advance(599);
    expect((await call(server, listPath(address))).status).toBe(429);
    clock.advance(1);
    expect((await call(server, listPath(address))).status).toBe(200);
  });

  it('derives Retry-After from what is left, not from a constant', async () => {
    const clock = fakeClock();
    const server = await start({ clock, listPerSecond: 0.25 });
    const address = freshAddress();
    expect((await call(server, listPath(address))).status).toBe(200);
    const seen: string[] = [];
    for (const step of [1, 1000, 1000, 1000]) {
      clock.advance(step);
      const answer = await call(server, listPath(address));
      expect(answer.status).toBe(429);
      seen.push(String(answer.headers['retry-after']));
    }
    expect(seen).toEqual(['4', '3', '2', '1']);
    clock.advance(999);
    expect((await call(server, listPath(address))).status).toBe(200);
  });

  it('gives message calls a separate budget of 10 per second', async () => {
    const clock = fakeClock();
    const server = await start({ clock });
    const address = freshAddress();
    expect((await call(server, listPath(address))).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      clock.advance(10);
      statuses.push((await call(server, messagePath('00000000000', address))).status);
    }
    expect(statuses).toEqual(Array(10).fill(404));
    clock.advance(10);
    const refused = await call(server, messagePath('00000000000', address, '/raw'));
    expect(refused.status).toBe(429);
    // the oldest of the ten was spent at +10 ms, now is +110 ms: 900 ms left -> 1 s
    expect(refused.headers['retry-after']).toBe('1');
    expect((await call(server, messagePath('00000000000', address), { method: 'DELETE' })).status).toBe(429);
    clock.advance(900);
    expect((await call(server, messagePath('00000000000', address), { method: 'DELETE' })).json).toEqual({ deleted: false });
  });

  it('does not charge /healthz', async () => {
    const server = await start();
    for (let i = 0; i < 3; i++) {
      const answer = await call(server, '/healthz');
      expect(answer.status).toBe(200);
      expect(answer.json).toEqual({
        ok: true,
        domains: ['mailroom.test'],
        catch_all: true,
        features: {
          wait: '/api/v1/mailbox/wait',
          mcp: '/mcp',
          paging: 'before_id',
          smtp_rules: '/api/v1/mailbox/rules',
          smtp_attempts: '/api/v1/mailbox/attempts',
          webhooks: '/api/v1/webhooks',
          metrics: '/metrics',
          ui: '/',
          mailboxes: '/api/v1/mailboxes',
          events: '/api/v1/events',
          providers: ['ses', 'resend', 'sendgrid', 'postmark', 'mailgun', 'brevo'],
        },
      });
    }
  });
});
