// The demo app's signup flow end to end over real sockets: HTTP in, SMTP out.
import { describe, expect } from 'vitest';
import { fetch } from 'undici';
import { FROM, SUBJECTS } from '../../fixtures/demo-app/index.js';
import { bySubject, confirmationOf, freshAddress, postForm, postJson, test } from './context.js';

const PREVIEW_LENGTH = 300;

describe('signup page', () => {
  test('has a labelled Email input and a Sign up button', async ({ app }) => {
    const res = await fetch(`${app.url}/`);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html).toContain('<label for="email">Email</label>');
    expect(html).toMatch(/<input id="email" name="email" type="email"/);
    expect(html).toContain('<button type="submit">Sign up</button>');
  });
});

describe('POST /api/signup', () => {
  test('sends the welcome and confirmation mails before answering 202', async ({ app, sink }) => {
    const email = freshAddress('signup');
    const { status, json } = await postJson(`${app.url}/api/signup`, { email });

    expect(status).toBe(202);
    expect(json).toMatchObject({ email, message: 'Check your inbox' });
    expect((json.deliveries as Array<Record<string, unknown>>).map((d) => [d.subject, d.state, d.reason])).toEqual([
      [SUBJECTS.confirm, 'delivered', null],
      [SUBJECTS.welcome, 'delivered', null],
    ]);
    // No wait: without sendDelayMs the app answers only once the SMTP server said 250.
    expect(sink.messages.map((m) => m.parsed.subject).sort()).toEqual([SUBJECTS.confirm, SUBJECTS.welcome].sort());
    for (const message of sink.messages) {
      expect(message.rcptTo).toEqual([email]);
      expect(message.mailFrom).toBe('hello@acme.example');
      expect(message.parsed.from).toMatchObject({ name: 'Acme', address: 'hello@acme.example' });
      expect(message.parsed.to).toEqual([expect.objectContaining({ address: email })]);
      expect(message.authUser, 'the app authenticates with SMTP AUTH').toBe('acme-demo');
    }
    expect(FROM).toBe('Acme <hello@acme.example>');
  });

  test('puts the link and the 6-digit code after the first 300 characters, in text and HTML', async ({ app, sink }) => {
    const email = freshAddress('layout');
    await postJson(`${app.url}/api/signup`, { email });
    const { link, code, text, html } = confirmationOf(bySubject(sink.messages, SUBJECTS.confirm));

    expect(link).toMatch(new RegExp(`^${app.url.replace(/\./g, '\\.')}/confirm\\?token=[0-9a-f]{32}$`));
    expect(text.indexOf(link)).toBeGreaterThanOrEqual(PREVIEW_LENGTH);
    expect(text.indexOf(code)).toBeGreaterThanOrEqual(PREVIEW_LENGTH);
    expect(text.slice(0, PREVIEW_LENGTH)).not.toMatch(/\d|https?:/);

    const htmlText = html.replace(/<[^>]*>/g, '');
    expect(html).toContain(`href="${link}"`);
    expect(htmlText.indexOf(code)).toBeGreaterThanOrEqual(PREVIEW_LENGTH);
    expect(htmlText.slice(0, PREVIEW_LENGTH)).not.toMatch(/\d|https?:/);
    // The confirmation link is the first and only link, so `mail.links[0]` is it.
    expect(html.match(/href="/g)).toHaveLength(1);
  });

  test('rejects an invalid address with 400 invalid_email and sends nothing', async ({ app, sink }) => {
    for (const email of ['', 'not-an-email', 'a@', '@example.test', 'a b@example.test', 'x@-bad-.test', 42, null]) {
      const { status, json } = await postJson(`${app.url}/api/signup`, { email });
      expect(status, `status for ${JSON.stringify(email)}`).toBe(400);
      expect(json.error).toBe('invalid_email');
      expect(json.message).toBe(`Expected an email address like name@example.com, got ${JSON.stringify(email)}`);
    }
    const missing = await postJson(`${app.url}/api/signup`, {});
    expect(missing).toEqual({
      status: 400,
      json: { error: 'invalid_email', message: 'Expected an email address like name@example.com, got nothing' },
    });
    // Mail is sent before answering, so an answer with nothing in the sink means nothing was sent.
    expect(sink.messages).toEqual([]);
  });

  test('rejects a body that is not a JSON object with 400 invalid_json', async ({ app, sink }) => {
    const res = await fetch(`${app.url}/api/signup`, { method: 'POST', body: 'email=a@example.test' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: 'invalid_json',
      message: 'Expected a JSON object body, got "email=a@example.test"',
    });
    expect(sink.messages).toEqual([]);
  });

  test('a second signup with the same address only sends the "someone tried" mail', async ({ app, sink }) => {
    const email = freshAddress('twice');
    await postJson(`${app.url}/api/signup`, { email });
    const again = await postJson(`${app.url}/api/signup`, { email: email.toUpperCase() });

    expect(again.status).toBe(202);
    expect(sink.messages.map((m) => m.parsed.subject)).toHaveLength(3);
    const warning = sink.messages[2]!;
    expect(warning.parsed.subject).toBe(SUBJECTS.duplicate);
    // The warning goes to the address on record, the one that owns the account.
    expect(warning.rcptTo).toEqual([email]);
    expect(warning.parsed.text).toContain('already has one');
    expect(sink.messages.filter((m) => m.parsed.subject === SUBJECTS.confirm)).toHaveLength(1);
  });
});

describe('POST /signup (the form)', () => {
  test('shows "Check your inbox" and sends both mails', async ({ app, sink }) => {
    const email = freshAddress('form');
    const { status, html } = await postForm(`${app.url}/signup`, { email });
    expect(status).toBe(200);
    expect(html).toContain('<h1>Check your inbox</h1>');
    expect(html).toContain(`<strong>${email}</strong>`);
    expect(sink.messages.map((m) => m.parsed.subject).sort()).toEqual([SUBJECTS.confirm, SUBJECTS.welcome].sort());
  });

  test('shows the signup form again with an error for an invalid address', async ({ app, sink }) => {
    const { status, html } = await postForm(`${app.url}/signup`, { email: 'nope<script>' });
    expect(status).toBe(400);
    expect(html).toContain('<p role="alert">Enter a valid email address, like name@example.com.</p>');
    expect(html).toContain('value="nope&#60;script&#62;"');
    expect(sink.messages).toEqual([]);
  });
});

describe('confirmation link', () => {
  test('GET /confirm with the mailed token confirms the address', async ({ app, sink }) => {
    const email = freshAddress('link');
    await postJson(`${app.url}/api/signup`, { email });
    const { link } = confirmationOf(bySubject(sink.messages, SUBJECTS.confirm));

    const res = await fetch(link);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(html).toContain('<h1>Email confirmed</h1>');
    expect(html).toContain(`<strong>${email}</strong> is confirmed`);
  });

  test('an unknown token is a 404 "Unknown or expired link"', async ({ app }) => {
    const res = await fetch(`${app.url}/confirm?token=${'0'.repeat(32)}`);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('<h1>Unknown or expired link</h1>');
  });

  test('POST /api/confirm is the JSON equivalent', async ({ app, sink }) => {
    const email = freshAddress('api-link');
    await postJson(`${app.url}/api/signup`, { email });
    const token = new URL(confirmationOf(bySubject(sink.messages, SUBJECTS.confirm)).link).searchParams.get('token');

    expect(await postJson(`${app.url}/api/confirm`, { token })).toEqual({ status: 200, json: { email, confirmed: true } });
    expect(await postJson(`${app.url}/api/confirm`, { token: 'f00d' })).toEqual({
      status: 404,
      json: { error: 'unknown_token', message: 'Unknown or expired link' },
    });
    expect(await postJson(`${app.url}/api/confirm`, {})).toEqual({
      status: 400,
      json: { error: 'invalid_request', message: 'Expected `token` to be a string, got nothing' },
    });
  });
});

describe('confirmation code', () => {
  const wrong = (code: string): string => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

  test('POST /api/verify accepts the mailed code and refuses another', async ({ app, sink }) => {
    const email = freshAddress('code');
    await postJson(`${app.url}/api/signup`, { email });
    const { code } = confirmationOf(bySubject(sink.messages, SUBJECTS.confirm));

    expect(await postJson(`${app.url}/api/verify`, { email, code: wrong(code) })).toEqual({
      status: 400,
      json: { error: 'wrong_code', message: `Wrong code for ${email}` },
    });
    expect(await postJson(`${app.url}/api/verify`, { email, code })).toEqual({
      status: 200,
      json: { email, verified: true },
    });
  });

  test('a code is only good for the address it was sent to', async ({ app, sink }) => {
    const alice = freshAddress('alice');
    const bob = freshAddress('bob');
    await postJson(`${app.url}/api/signup`, { email: alice });
    await postJson(`${app.url}/api/signup`, { email: bob });
    const aliceMail = sink.messages.find((m) => m.parsed.subject === SUBJECTS.confirm && m.rcptTo[0] === alice)!;
    const { code } = confirmationOf(aliceMail);

    expect((await postJson(`${app.url}/api/verify`, { email: bob, code })).status).toBe(400);
    expect((await postJson(`${app.url}/api/verify`, { email: alice, code })).status).toBe(200);
  });

  test('the /verify form says "Code accepted" or "Wrong code"', async ({ app, sink }) => {
    const email = freshAddress('verify-form');
    await postJson(`${app.url}/api/signup`, { email });
    const { code } = confirmationOf(bySubject(sink.messages, SUBJECTS.confirm));

    const form = await (await fetch(`${app.url}/verify?email=${encodeURIComponent(email)}`)).text();
    expect(form).toContain('<label for="code">Code</label>');
    expect(form).toContain(`value="${email}"`);

    const refused = await postForm(`${app.url}/verify`, { email, code: wrong(code) });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('<h1>Wrong code</h1>');

    const accepted = await postForm(`${app.url}/verify`, { email, code });
    expect(accepted.status).toBe(200);
    expect(accepted.html).toContain('<h1>Code accepted</h1>');
  });
});

describe('routing', () => {
  test('unknown paths are 404 and wrong methods 405, as JSON under /api/', async ({ app }) => {
    expect((await fetch(`${app.url}/nope`)).status).toBe(404);
    const res = await fetch(`${app.url}/api/signup`);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.json()).toEqual({
      error: 'method_not_allowed',
      message: '/api/signup accepts POST, not GET',
    });
    expect(await (await fetch(`${app.url}/healthz`)).json()).toEqual({ ok: true });
    const head = await fetch(`${app.url}/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });
});
