// mail.snapshot(): the Acme demo app's own mails, composed by nodemailer as
// the app sends them and parsed back, render the same whatever the address,
// code and link token of the run; what a reader sees (headers, text, the
// HTML's words and links, attachments) is in it, and each mask can be
// turned off, replaced or added to.
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { describe, expect, it } from 'vitest';
import { confirmationMail, duplicateSignupMail, FROM, type OutgoingMail } from '../../fixtures/demo-app/mails.js';
import { stampHeaderValue } from '../../src/contract/providers.js';
import { freshAddress } from '../../src/contract/fresh-address.js';
import { mailSnapshot } from '../../src/inbox/mail-snapshot.js';
import { parseMail } from '../../src/inbox/mail.js';
import { readableHtml } from '../../src/contract/readable-html.js';

async function compose(options: Mail.Options): Promise<string> {
  return (await new MailComposer({ from: FROM, ...options }).compile().build()).toString('utf8');
}

/**
 * The demo app's confirmation mail to a fresh address, with its own token
 * and code, as the app sends it; `change` edits it first, as a change to the app would.
 */
async function confirmation(token: string, code: string, change: (mail: OutgoingMail) => OutgoingMail = (mail) => mail) {
  const email = freshAddress({ prefix: 'signup flow', domain: 'mailroom.test' });
  const mail = change(confirmationMail({ email, token, code, confirmed: false }, 'http://127.0.0.1:3126'));
  const source = await compose({ to: email, subject: mail.subject, text: mail.text, html: mail.html, messageId: `<${token}@acme.example>`, date: new Date() });
  return parseMail(source, { address: email });
}

const INTRO =
  'Thanks for signing up for Acme. Before we can activate your account we need to make sure that this address really belongs to you, ' +
  'so that nobody can sign up in your name and so that our notices reach the right inbox. It only takes a moment, and you only need to do it once. ' +
  'If you did not ask for an Acme account, you can safely ignore this message: without confirmation the account is never activated and we will not write to you again.';

describe('mail.snapshot()', () => {
  it("renders the demo app's confirmation mail with its address, code and link token masked, the same for every signup", async () => {
    const first = await confirmation('9f2c4e1ab7d34c5e8f9a0b1c2d3e4f50', '482913');
    const second = await confirmation('0a1b2c3d4e5f60718293a4b5c6d7e8f9', '007351');
    expect(first.address).not.toBe(second.address);
    expect(first.snapshot()).toBe(
      [
        'From: Acme <hello@acme.example>',
        'To: [address]',
        'Subject: Confirm your email',
        '',
        '--- text ---',
        'Hi there,',
        '',
        INTRO,
        '',
        'Your confirmation code is: [code]',
        '',
        'Or confirm with this link:',
        'http://127.0.0.1:3126/confirm?token=[token]',
        '',
        'The Acme team',
        '',
        '--- html ---',
        'Hi there,',
        '',
        INTRO,
        '',
        'Your confirmation code is: [code]',
        '',
        'Or confirm with this link: Confirm my email <http://127.0.0.1:3126/confirm?token=[token]>',
        '',
        'The Acme team',
        '',
        '--- attachments ---',
        '(none)',
        '',
      ].join('\n'),
    );
    expect(second.snapshot()).toBe(first.snapshot());
  });

  it('changes with the subject and with a link, so a snapshot catches both', async () => {
    const mail = await confirmation('9f2c4e1ab7d34c5e8f9a0b1c2d3e4f50', '482913');
    const resubjected = await confirmation('9f2c4e1ab7d34c5e8f9a0b1c2d3e4f50', '482913', (m) => ({ ...m, subject: 'Confirm your e-mail' }));
    const relinked = await confirmation('9f2c4e1ab7d34c5e8f9a0b1c2d3e4f50', '482913', (m) => ({ ...m, html: m.html?.replace('/confirm?', '/verify?') }));
    const differences = (changed: string) => {
      const [before, after] = [mail.snapshot().split('\n'), changed.split('\n')];
      return after.map((line, i) => [before[i], line]).filter(([was, is]) => was !== is);
    };
    expect(differences(resubjected.snapshot())).toEqual([['Subject: Confirm your email', 'Subject: Confirm your e-mail']]);
    expect(differences(relinked.snapshot())).toEqual([
      [
        'Or confirm with this link: Confirm my email <http://127.0.0.1:3126/confirm?token=[token]>',
        'Or confirm with this link: Confirm my email <http://127.0.0.1:3126/verify?token=[token]>',
      ],
    ]);
  });

  it('shows Cc, Reply-To, List-Unsubscribe and the headers asked for, and the attachments by name, type and size', async () => {
    const to = 'ada@mailroom.test';
    const mail = await parseMail(
      await compose({
        to,
        cc: 'billing@acme.example',
        replyTo: 'Jürgen at Acme <support@acme.example>',
        subject: 'Your invoice',
        text: 'Attached.',
        headers: {
          'List-Unsubscribe': '<https://acme.example/unsubscribe?u=550e8400-e29b-41d4-a716-446655440000>, <mailto:leave@acme.example>',
          'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
          'X-Campaign': 'invoices',
        },
        attachments: [
          { filename: 'invoice-2026-11.pdf', content: '%PDF-1.4 sample', contentType: 'application/pdf' },
          { filename: 'logo.png', content: Buffer.from([137, 80, 78, 71]), contentType: 'image/png', cid: 'logo@acme' },
        ],
        html: '<p>Attached.</p><img src="cid:logo@acme" alt="Acme">',
      }),
    );
    const snapshot = mail.snapshot({ headers: ['X-Campaign'] });
    expect(snapshot.slice(0, snapshot.indexOf('\n\n'))).toBe(
      [
        'From: Acme <hello@acme.example>',
        'To: [address]',
        'Cc: billing@acme.example',
        'Subject: Your invoice',
        'Reply-To: Jürgen at Acme <support@acme.example>',
        'List-Unsubscribe: <https://acme.example/unsubscribe?u=[uuid]>, <mailto:leave@acme.example>',
        'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
        'X-Campaign: invoices',
      ].join('\n'),
    );
    expect(snapshot).toContain(
      ['--- attachments ---', 'logo.png (image/png, 4 bytes, inline)', 'invoice-2026-11.pdf (application/pdf, 15 bytes)', ''].join('\n'),
    );
    expect(mail.snapshot()).not.toContain('X-Campaign');
  });

  it('says which provider API took the mail, its id masked', async () => {
    const to = 'ada@mailroom.test';
    const stamp = { name: 'resend' as const, id: '4ef9a417-02e9-4d39-ad75-9611e0fcc33c', tags: [], metadata: { plan: 'pro' } };
    const source = await compose({ to, subject: 'Hi', text: 'Hello', headers: { 'X-Mailroom-Provider': { prepared: true, value: stampHeaderValue(stamp) } } });
    expect((await parseMail(source)).snapshot()).toContain('Subject: Hi\nProvider: resend; id [provider-id]; metadata plan=pro\n');
    const sesStamp = { name: 'ses' as const, id: '0100018f6e4c1a2b-4c7d9e3a-1f2b-4c5d-8e9f-0a1b2c3d4e5f-000000', tags: ['welcome'], metadata: {} };
    const ses = await compose({ to, subject: 'Hi', text: 'Hello', headers: { 'X-Mailroom-Provider': { prepared: true, value: stampHeaderValue(sesStamp) } } });
    expect((await parseMail(ses)).snapshot()).toContain('Provider: ses; id [provider-id]; tags welcome\n');
  });

  it('marks a mail without a text part, without HTML, or whose HTML has no words', async () => {
    const to = 'ada@mailroom.test';
    const htmlOnly = await parseMail(await compose({ to, subject: 'Hi', html: '<img src="https://acme.example/pixel.gif" alt="">' }));
    expect(htmlOnly.snapshot()).toContain('--- text ---\n(none)\n\n--- html ---\n(no text)\n\n');
    const textOnly = await parseMail(await compose({ to, subject: 'Hi', text: 'Hello\r\n\r\n' }));
    expect(textOnly.snapshot()).toContain('--- text ---\nHello\n\n--- html ---\n(none)\n\n');
  });
});

describe('masks', () => {
  const render = (text: string, options?: Parameters<typeof mailSnapshot>[1], extra: Partial<Parameters<typeof mailSnapshot>[0]> = {}) => {
    const snapshot = mailSnapshot(
      { from: FROM, to: ['ada@mailroom.test'], cc: [], subject: 'Hi', text, html: '', headers: {}, attachments: [], address: 'ada@mailroom.test', ...extra },
      options,
    );
    return snapshot.slice(snapshot.indexOf('--- text ---\n') + 13, snapshot.indexOf('\n\n--- html ---'));
  };

  it('mask the test address (also URL-encoded), other fresh addresses by their random part, ids and UUIDs', () => {
    const other = freshAddress({ prefix: 'invitee', domain: 'mailroom.test' });
    expect(
      render(
        [
          'Signed up as ADA@mailroom.test: https://acme.example/welcome?email=ada%40mailroom.test',
          `Invited ${other} (https://acme.example/invite?to=${encodeURIComponent(other)})`,
          'Ticket 123e4567-e89b-12d3-a456-426614174000, message <4f3c2a@acme.example>',
        ].join('\n'),
        {},
        { messageId: '<4f3c2a@acme.example>' },
      ),
    ).toBe(
      [
        'Signed up as [address]: https://acme.example/welcome?email=[address]',
        'Invited invitee-[random]@mailroom.test (https://acme.example/invite?to=invitee-[random]%40mailroom.test)',
        'Ticket [uuid], message <[message-id]>',
      ].join('\n'),
    );
  });

  it('mask one-time codes as whole tokens only', () => {
    expect(render('Your code is 482913. Order 4829130001 is on its way; enter 482913 at https://acme.example/v?code=482913')).toBe(
      'Your code is [code]. Order 4829130001 is on its way; enter [code] at https://acme.example/v?code=[code]',
    );
  });

  it('mask tokens in links, after the host, and keep words and the host', () => {
    const links = [
      'https://acme.example/confirm?token=9f2c4e1ab7d3',
      'https://acme.example/reset/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
      'https://acme.example/magic/k3x9p2m7q8r4t6v1w5y8',
      'https://acme.example/reset-your-password-2026/step-2',
      'https://d1a2b3c4e5f6.cloudfront.example/logo.png',
      'https://acme.example/orders/1234567',
    ];
    expect(render(links.join('\n')).split('\n')).toEqual([
      'https://acme.example/confirm?token=[token]',
      'https://acme.example/reset/[token].[token].[token]',
      'https://acme.example/magic/[token]',
      'https://acme.example/reset-your-password-2026/step-2',
      'https://d1a2b3c4e5f6.cloudfront.example/logo.png',
      'https://acme.example/orders/1234567',
    ]);
    // A hex run outside a link is text (a colour, a commit the mail names).
    expect(render('Colour #deadbeef12, build 9f2c4e1ab7d3')).toBe('Colour #deadbeef12, build 9f2c4e1ab7d3');
  });

  it('mask dates and times in the forms mail writes them', () => {
    const dates = [
      'Paid 2026-07-20, at 2026-07-20T10:15:00.000Z and 2026-07-20 10:15+02:00',
      'Sent Mon, 20 Jul 2026 10:15:00 +0000',
      'On July 20, 2026 at 3:04 PM, Monday, Jul 20th 2026, 20 July 2026 14:00 UTC',
      'Due 07/20/2026 or 20.07.2026',
      'Version 1.2.3, 20 items, July 2026, at 10:15',
    ];
    expect(render(dates.join('\n')).split('\n')).toEqual([
      'Paid [date], at [date] and [date]',
      'Sent [date]',
      'On [date], [date], [date]',
      'Due [date] or [date]',
      'Version 1.2.3, 20 items, July 2026, at 10:15',
    ]);
  });

  it('turn off a default with false, replace one with a pattern, and add labelled ones of their own', () => {
    const text = 'Order #A-1042 placed 2026-07-20. Your code: 482913. Thanks, ACME-77';
    expect(render(text, { masks: { date: false } })).toBe('Order #A-1042 placed 2026-07-20. Your code: [code]. Thanks, ACME-77');
    expect(render(text, { masks: { 'order number': /#A-\d+/, ref: 'ACME-77' } })).toBe('Order [order number] placed [date]. Your code: [code]. Thanks, [ref]');
    // A default's label with a pattern of one's own replaces the default (here the found code 482913 stays).
    expect(render(text, { masks: { code: /ACME-\d+/ } })).toBe('Order #A-1042 placed [date]. Your code: 482913. Thanks, [code]');
    // Not global, sticky, or matching nothing at places: still every match, and no empty ones.
    expect(render('a1 b2 a3', { masks: { a: /a\d/y, gap: /(?=b)/ } })).toBe('[a] b2 [a]');
  });

  it('refuse what they cannot use, naming it', () => {
    expect(() => render('x', { masks: { date: true } as never })).toThrow(
      'Expected `masks.date` to be a RegExp, a non-empty string or false (to turn a default mask off), got true',
    );
    expect(() => render('x', { masks: { order: false } })).toThrow(
      'Mask `order` is not a default mask, so `false` has nothing to turn off; the default masks are token, address, provider-id, message-id, uuid, code, random, date',
    );
    expect(() => render('x', { masks: { '[x]': /x/ } })).toThrow('Expected each mask label to be 1 to 40 letters');
    expect(() => render('x', { masks: { x: '' } })).toThrow('Expected `masks.x` to be a RegExp, a non-empty string or false');
    expect(() => render('x', { masks: [/x/] as never })).toThrow('Expected `masks` to be an object of labels to a RegExp, a string or false');
    expect(() => render('x', { mask: {} } as never)).toThrow('Unknown mail snapshot option `mask`; expected one of masks, headers');
    expect(() => render('x', { headers: 'X-Campaign' } as never)).toThrow(
      'Expected `headers` to be an array of header names, like ["X-Campaign"], got "X-Campaign"',
    );
  });
});

describe('readableHtml', () => {
  it('reads layout tables, headings, lists, links, images and a preheader as a person does', () => {
    const html = [
      '<!doctype html><html><head><title>Receipt</title><style>.x{color:red}</style></head><body>',
      // A React Email preheader: hidden, padded with invisible characters.
      '<div style="display:none;max-height:0">Your receipt from Acme\u034f\u00a0\u200c\u034f\u00a0\u200c\u034f\u00a0\u200c</div>',
      '<table role="presentation" width="100%"><tr><td><img src="https://acme.example/logo.png" alt="Acme"></td>',
      '<td><a href="https://acme.example/">https://acme.example/</a> <a href="#top">Top</a></td></tr>',
      '<tr><td><h1>Thanks   for\n your&nbsp;order</h1><p>Item&nbsp;&nbsp; <b>Widget</b><br>Qty 2</p>',
      '<ul><li>Fast</li><li><a href="https://acme.example/help">Help</a> or <a href="mailto:help@acme.example">help@acme.example</a></li></ul>',
      '<ol><li>One</li><li>Two</li></ol><hr><pre>  a   b\n    c</pre>',
      '<!--[if mso]><p>Outlook only</p><![endif]-->',
      '<a href="https://acme.example/shop"><img src="https://acme.example/b.png" alt=""></a><img src="https://t.example/p.gif">',
      '<script>document.write("x")</script></td></tr></table></body></html>',
    ].join('');
    expect(readableHtml(html)).toBe(
      [
        'Your receipt from Acme',
        '',
        '[image: Acme] https://acme.example/ Top',
        '',
        '# Thanks for your order',
        '',
        'Item Widget',
        'Qty 2',
        '',
        '- Fast',
        '- Help <https://acme.example/help> or help@acme.example',
        '',
        '1. One',
        '2. Two',
        '',
        '---',
        '',
        '  a   b',
        '    c',
        '',
        '<https://acme.example/shop> [image]',
      ].join('\n'),
    );
  });
});

it("the demo app's duplicate-signup mail shows the address it names as the test's own", async () => {
  const email = freshAddress({ prefix: 'dup', domain: 'mailroom.test' });
  const mail = duplicateSignupMail(email);
  const parsed = await parseMail(await compose({ to: email, subject: mail.subject, text: mail.text }));
  expect(parsed.snapshot()).toContain('Someone just tried to create an Acme account with [address], which already has one.');
});
