// `expect(mail).toPassMailChecks()` in Vitest: the demo app's confirmation
// mail passes every check (its link fetched from the running app), and a
// broken mail fails with the problems listed as a person fixes them.
import { stripVTControlCharacters } from 'node:util';
import { describe, inject } from 'vitest';
import { test } from '../../src/vitest/index.js';
import { postApp, send } from './support/env.js';

async function failureText(assertion: Promise<unknown>): Promise<string> {
  try {
    await assertion;
  } catch (error) {
    return stripVTControlCharacters(error instanceof Error ? error.message : String(error));
  }
  throw new Error('Expected the assertion to fail, but it passed');
}

describe.concurrent('toPassMailChecks', () => {
  test("passes the demo app's confirmation mail, its link fetched from the app", async ({ inbox, expect }) => {
    await postApp('/api/signup', { email: inbox.address });
    const mail = await inbox.expectMail({ subject: 'Confirm your email' });
    const report = await mail.check();
    expect(report).toMatchObject({ ok: true, checked: ['links', 'html', 'images', 'size', 'text'] });
    // No problem: Yahoo's partial support of `lang` ("not on <td>") was one, but its lang is on <html>.
    expect(report.problems).toEqual([]);
    expect(report.support).toEqual([
      { client: 'gmail', score: 100 },
      { client: 'outlook', score: 100 },
      { client: 'apple-mail', score: 100 },
      { client: 'yahoo', score: 100 },
    ]);
    await expect(mail).toPassMailChecks();
  });

  test('fails a broken mail, listing each problem and its fix', async ({ inbox, expect }) => {
    const app = inject('demoAppURL');
    await send(inbox.address, {
      subject: 'Your order',
      text: undefined,
      html: `<html><body>\n<p><a href="${app}/orders/42">See your order</a></p>\n<img src="https://acme.example/logo.png">\n</body></html>`,
    });
    const mail = await inbox.expectMail({ subject: 'Your order' });
    const text = await failureText(expect(mail).toPassMailChecks({ skip: ['html'] }));
    expect(text).toBe(
      [
        'expect(mail).toPassMailChecks(options)',
        '',
        `Mail "Your order" to ${inbox.address} failed its checks (links, images, size, text): 3 errors.`,
        '',
        `1. [links error] The link "See your order" → ${app}/orders/42 answered 404 Not Found.`,
        '   Fix: Fix the link, or the page it points to.',
        '2. [images error] The image https://acme.example/logo.png has no alt text (line 3: <img src="https://acme.example/logo.png">).',
        '   Fix: Add alt="…" saying what the image shows, or alt="" if it is only decoration.',
        '3. [text error] The mail has HTML but no text/plain alternative.',
        '   Fix: Add a text part with the same content and links (nodemailer: `text` beside `html`), sent as multipart/alternative.',
        '',
        'Expected: no errors',
        'Received: 3 errors',
      ].join('\n'),
    );
    console.log(`toPassMailChecks failure text (Vitest):\n${text}`);
  });

  test("names each client's support score in the failure text of a mail whose layout falls apart", async ({ inbox, expect }) => {
    await send(inbox.address, {
      subject: 'Two columns',
      text: 'Left. Right.',
      html: '<html lang="en"><body>\n<div style="display:flex"><p>Left.</p><p>Right.</p></div>\n</body></html>',
    });
    const mail = await inbox.expectMail({ subject: 'Two columns' });
    const text = await failureText(expect(mail).toPassMailChecks({ only: ['html'] }));
    // The warning: Gmail's apps support flex only with a Google account.
    expect(text.split('\n').slice(2, 6)).toEqual([
      `Mail "Two columns" to ${inbox.address} failed its checks (html): 1 error, 1 warning.`,
      'Client support (how much of the mail each shows as written): gmail 83.3% (display:flex), outlook 88.9% (display:flex), apple-mail 100%, yahoo 100%.',
      '',
      '1. [html error] display:flex is not supported by outlook.windows, outlook.windows-mail (line 2: <div style="display:flex">): such a client lays the items out as plain blocks, one under the other, and the layout falls apart.',
    ]);
  });

  test('fails on warnings only with failOn: "warning"', async ({ inbox, expect }) => {
    await send(inbox.address, { subject: 'Logo', text: 'Our logo', html: '<p><img src="http://acme.example/logo.png" alt="Acme"></p>' });
    const mail = await inbox.expectMail({ subject: 'Logo' });
    await expect(mail).toPassMailChecks({ skip: ['links'] });
    const text = await failureText(expect(mail).toPassMailChecks({ skip: ['links'], failOn: 'warning' }));
    expect(text).toContain('failed its checks (html, images, size, text): 1 warning, and warnings fail it (failOn: "warning").');
    expect(text).toContain('1. [images warning] The image http://acme.example/logo.png is loaded over plain http');
    await expect(mail).not.toPassMailChecks({ skip: ['links'], failOn: 'warning' });
  });

  test('refuses what is not a mail, and a misspelt option', async ({ inbox, expect }) => {
    await expect(expect(inbox as never).toPassMailChecks()).rejects.toThrow(
      /^toPassMailChecks expects a Mail \(what inbox\.expectMail\(\) returns\), got an Inbox$/,
    );
    await send(inbox.address, { subject: 'x' });
    const mail = await inbox.expectMail();
    await expect(expect(mail).toPassMailChecks({ failOn: 'never' } as never)).rejects.toThrow('Expected `failOn` to be "error" or "warning", got "never"');
  });
});
