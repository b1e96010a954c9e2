// Each check but links (test/checks/links-check.test.ts) with a mail that
// fails it and one that passes, the demo app's mails, and the options.
import { describe, expect, it } from 'vitest';
import { checkMail } from '../../src/checks/run-checks.js';
import { formatReport } from '../../src/checks/report-text.js';
import { confirmationMail, duplicateSignupMail, tipMails, welcomeMail } from '../../fixtures/demo-app/mails.js';

const mail = (html: string, text = 'The text part.', size = 2_000) => ({ html, text, size, subject: 'A mail' });
const messages = async (m: ReturnType<typeof mail>, only: Parameters<typeof checkMail>[1]) =>
  (await checkMail(m, only)).problems.map((p) => `${p.severity}: ${p.message}`);

describe('the html check (caniemail)', () => {
  it('passes plain markup every client supports', async () => {
    expect(
      await checkMail(mail('<!doctype html><html><body><p>Hi <strong>there</strong>, <a href="https://acme.example">Acme</a></p></body></html>'), {
        only: ['html'],
      }),
    ).toMatchObject({
      ok: true,
      problems: [],
    });
  });

  it('names the feature, where it is used and which clients lack it', async () => {
    const html = '<html><body>\n<div style="display:flex; border-radius: 4px">x</div>\n</body></html>';
    const report = await checkMail(mail(html), { only: ['html'], html: { clients: ['outlook'] } });
    expect(report.ok).toBe(false);
    const flex = report.problems.find((p) => p.feature === 'display:flex' && p.severity === 'error');
    expect(flex).toMatchObject({
      check: 'html',
      clients: ['outlook.windows', 'outlook.windows-mail'],
      where: 'line 2: <div style="display:flex; border-radius: 4px">',
    });
    expect(flex?.message).toBe(
      'display:flex is not supported by outlook.windows, outlook.windows-mail (line 2: <div style="display:flex; border-radius: 4px">): such a client lays the items out as plain blocks, one under the other, and the layout falls apart.',
    );
    expect(flex?.fix).toBe(
      "Give those clients a fallback (a table layout, an image, a link to a page), or accept the feature: html.accept [{ feature: 'css-display-flex', reason: '…' }]; see https://www.caniemail.com/features/css-display-flex/.",
    );
    // The rounded corners come out square there: a warning, not an error.
    expect(report.problems.find((p) => p.feature === 'border-radius')).toMatchObject({
      severity: 'warning',
      message: expect.stringContaining('such a client draws square corners'),
    });
    // Only the clients asked for.
    expect(report.problems.flatMap((p) => p.clients ?? []).every((c) => c.startsWith('outlook.'))).toBe(true);
  });

  it('points at the line of the HTML and the declaration, for CSS in a <style> block', async () => {
    const html = '<html><head><style>\n.a { color: red; }\n.b { display: flex; }\n</style></head><body><div class="b">x</div></body></html>';
    expect(await messages(mail(html), { only: ['html'], html: { clients: ['outlook.windows'] } })).toEqual([
      'error: display:flex is not supported by outlook.windows (line 3, in a <style> block: display: flex): such a client lays the items out as plain blocks, one under the other, and the layout falls apart.',
    ]);
    // In the second of two blocks, still the line of the HTML.
    const two = '<style>\n.a { color: red; }\n</style>\n<style>\n.b { color: blue; }\n.c { float: left; }\n</style><div class="c">x</div>';
    expect((await checkMail(mail(two), { only: ['html'], html: { clients: ['outlook.windows'] } })).problems[0]?.where).toBe(
      'line 6, in a <style> block: float: left',
    );
  });

  it('takes caniemail names and globs, and refuses a family it does not know', async () => {
    const html = '<div style="display:flex">x</div>';
    expect((await checkMail(mail(html), { only: ['html'], html: { clients: ['apple-mail.*'] } })).ok).toBe(true);
    expect((await checkMail(mail(html), { only: ['html'], html: { clients: ['outlook.windows'] } })).problems[0]?.clients).toEqual(['outlook.windows']);
    await expect(checkMail(mail(html), { only: ['html'], html: { clients: ['hotmail'] } })).rejects.toThrow(
      /Unknown mail client family "hotmail" in html\.clients; known: gmail, outlook/,
    );
  });

  it('lets <body> pass, but warns of a background only <body> carries, which a client that drops it loses', async () => {
    expect((await checkMail(mail('<html><body style="margin:0" dir="ltr"><p>x</p></body></html>'), { only: ['html'] })).problems).toEqual([]);
    const repeated = '<html><body bgcolor="#eee"><table role="presentation" width="100%" bgcolor="#eee"><tr><td>x</td></tr></table></body></html>';
    expect((await checkMail(mail(repeated), { only: ['html'] })).problems).toEqual([]);
    const alone = await checkMail(mail('<html><body bgcolor="#eee"><p>x</p></body></html>'), { only: ['html'] });
    expect(alone.problems.map((p) => `${p.severity} ${p.feature}`)).toEqual(['warning <body> element']);
  });
});

describe('the images check', () => {
  it('passes images with alt text (empty for decoration) from https, cid: and data:', async () => {
    const html = '<img src="https://acme.example/logo.png" alt="Acme"><img src="cid:logo@acme" alt=""><img src="data:image/png;base64,AAAA" alt="dot">';
    expect(await messages(mail(html), { only: ['images'] })).toEqual([]);
  });

  it('fails an image without alt, one with a relative src, and warns of one over http', async () => {
    const html = '<p>\n<img src="https://acme.example/logo.png">\n<img src="/banner.png" alt="Sale">\n<img src="http://acme.example/x.png" alt="X"></p>';
    expect(await messages(mail(html), { only: ['images'] })).toEqual([
      'error: The image https://acme.example/logo.png has no alt text (line 2: <img src="https://acme.example/logo.png">).',
      'error: The image /banner.png cannot load in a mail: its src is not an absolute https URL, a cid: part or a data: URL (line 3: <img src="/banner.png" alt="Sale">).',
      'warning: The image http://acme.example/x.png is loaded over plain http (line 4: <img src="http://acme.example/x.png" alt="X">).',
    ]);
  });
});

describe('the size check', () => {
  it('passes a small mail', async () => {
    expect(await messages(mail('<p>small</p>'), { only: ['size'] })).toEqual([]);
  });

  it("fails HTML over Gmail's clipping size, and warns of a message over the size limit", async () => {
    const html = `<p>${'x'.repeat(110 * 1024)}</p>`;
    const report = await checkMail(mail(html, 'x', 11 * 1024 * 1024), { only: ['size'] });
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => `${p.severity}: ${p.message}`)).toEqual([
      'error: The HTML is 110.0 KB (112,647 bytes), over the 102.0 KB (104,448 bytes) at which Gmail clips a mail (hiding its end, the footer and unsubscribe link with it).',
      'warning: The whole message is 11.0 MB (11,534,336 bytes), over the 10.0 MB (10,485,760 bytes) limit (some mail servers refuse it).',
    ]);
    expect(report.problems[0]).toMatchObject({ bytes: 112_647, limit: 104_448 });
  });

  it('takes its limits as options', async () => {
    expect(await messages(mail('<p>0123456789</p>', 'x', 5_000), { only: ['size'], size: { clipBytes: 10, maxBytes: 4_000 } })).toHaveLength(2);
  });
});

describe('the text check', () => {
  it('passes a mail with a text part', async () => {
    expect(await messages(mail('<p>x</p>', 'x'), { only: ['text'] })).toEqual([]);
  });

  it('fails HTML with no text alternative, and a mail with no body at all', async () => {
    expect(await messages(mail('<p>x</p>', ''), { only: ['text'] })).toEqual(['error: The mail has HTML but no text/plain alternative.']);
    expect(await messages(mail('', ' '), { only: ['text'] })).toEqual(['error: The mail has no body: neither an HTML nor a text part.']);
  });
});

describe('the report', () => {
  it('lists errors first and says which checks ran; a person reads each problem and its fix', async () => {
    const report = await checkMail(mail('<img src="http://acme.example/x.png">', ''), { skip: ['links', 'html'] });
    expect(report.checked).toEqual(['images', 'size', 'text']);
    expect(formatReport(report, 'A mail')).toBe(
      [
        'Mail checks of "A mail" (images, size, text): 2 errors, 1 warning.',
        '',
        '1. [images error] The image http://acme.example/x.png has no alt text (line 1: <img src="http://acme.example/x.png">).',
        '   Fix: Add alt="…" saying what the image shows, or alt="" if it is only decoration.',
        '2. [text error] The mail has HTML but no text/plain alternative.',
        '   Fix: Add a text part with the same content and links (nodemailer: `text` beside `html`), sent as multipart/alternative.',
        '3. [images warning] The image http://acme.example/x.png is loaded over plain http (line 1: <img src="http://acme.example/x.png">).',
        '   Fix: Serve the image over https.',
      ].join('\n'),
    );
  });

  it("runs an extra check given in `with` (the Playwright adapter's accessibility check)", async () => {
    const report = await checkMail(mail('<p>x</p>'), {
      only: ['accessibility'],
      with: [{ name: 'accessibility', run: async () => [{ check: 'accessibility', severity: 'warning', message: 'm', fix: 'f' }] }],
    });
    expect(report).toMatchObject({ ok: true, checked: ['accessibility'], problems: [{ message: 'm' }] });
    // Without one, there is nothing to run it with.
    expect((await checkMail(mail('<p>x</p>'), { only: ['accessibility'] })).checked).toEqual([]);
  });

  it('refuses options it does not know, naming them', async () => {
    await expect(checkMail(mail('x'), { skip: ['link'] } as never)).rejects.toThrow(
      'Expected `skip[]` to be a check name (links, html, images, size, text, accessibility), got "link"',
    );
    await expect(checkMail(mail('x'), { links: { timout: 5 } } as never)).rejects.toThrow(
      'Unknown mail check option `links.timout`; expected one of skip, headers, cookies, timeout, concurrency, maxRedirects',
    );
    await expect(checkMail(mail('x'), { size: { clipBytes: -1 } })).rejects.toThrow('Expected `size.clipBytes` to be a whole number from 1, got -1');
  });
});

describe("the demo app's mails", () => {
  it('pass every check but links (checked against the running app in test/vitest/mail-checks.test.ts)', async () => {
    const signup = { email: 'a@mailroom.test', token: 't0k3n', code: '482913', confirmed: false };
    const mails = [
      confirmationMail(signup, 'https://acme.example'),
      welcomeMail(signup.email),
      duplicateSignupMail(signup.email),
      ...tipMails(signup.email, 2),
    ];
    for (const m of mails) {
      const report = await checkMail({ html: m.html ?? '', text: m.text, size: 4_000, subject: m.subject }, { skip: ['links'] });
      // Yahoo's partial support of `lang` ("not on <td>") was the confirmation mail's one warning; its lang is on <html>.
      expect(report.ok, m.subject).toBe(true);
      expect(
        report.problems.map((p) => p.feature ?? p.check),
        m.subject,
      ).toEqual([]);
    }
  });
});
