// What the checks read and report at most (src/checks/bounds.ts): HTML too
// large or nested too deep to check is one problem saying so, and a check
// with more problems than a person reads reports the first ones and counts
// the rest. The time these bounds keep is asserted in bounds-time.test.ts.
import { describe, expect, it } from 'vitest';
import { MAX_CHECKED_HTML_BYTES, MAX_HTML_DEPTH, MAX_PROBLEMS_PER_CHECK } from '../../src/checks/bounds.js';
import { checkMail } from '../../src/checks/run-checks.js';

const mail = (html: string) => ({ html, text: 'The text part.', size: html.length, subject: 'A mail' });

describe('the bounds of the checks', () => {
  it('reports HTML over the size it reads as too large to check, for html and images alike, naming the size and the cap', async () => {
    const html = `<p>${'x'.repeat(MAX_CHECKED_HTML_BYTES)}</p>`;
    const report = await checkMail(mail(html), { only: ['html', 'images', 'size'] });
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => `${p.check}: ${p.message}`)).toEqual([
      "html: The HTML is 256.0 KB (262,151 bytes), too large to check: the html check reads at most 256.0 KB (262,144 bytes) of HTML (Gmail clips a mail's HTML at 102 KB anyway).",
      "images: The HTML is 256.0 KB (262,151 bytes), too large to check: the images check reads at most 256.0 KB (262,144 bytes) of HTML (Gmail clips a mail's HTML at 102 KB anyway).",
      'size: The HTML is 256.0 KB (262,151 bytes), over the 102.0 KB (104,448 bytes) at which Gmail clips a mail (hiding its end, the footer and unsubscribe link with it).',
    ]);
    expect(report.problems[0]).toMatchObject({
      severity: 'error',
      bytes: 262_151,
      limit: MAX_CHECKED_HTML_BYTES,
      fix: expect.stringContaining('under 102 KB'),
    });
  });

  it('reads HTML up to the size cap, counted in UTF-8 bytes as the mail carries it', async () => {
    const image = '<img src="https://acme.example/a.png">'; // 38 bytes, then 262,106 in 'é's of 2 bytes each: the cap
    const atTheCap = `${image}${'é'.repeat((MAX_CHECKED_HTML_BYTES - 38) / 2)}`;
    expect((await checkMail(mail(atTheCap), { only: ['images'] })).problems.map((p) => p.message)).toEqual([
      'The image https://acme.example/a.png has no alt text (line 1: <img src="https://acme.example/a.png">).',
    ]);
    // One 'é' more is 131,092 characters but 262,146 bytes.
    expect((await checkMail(mail(`${atTheCap}é`), { only: ['images'] })).problems[0]).toMatchObject({ bytes: 262_146, limit: 262_144 });
  });

  it('reports HTML nested past the depth it reads as too deep to check, pointing at the element past it', async () => {
    const html = `<table>\n${'<div>\n'.repeat(MAX_HTML_DEPTH + 10)}<a href="https://acme.example">x</a>`;
    const report = await checkMail(mail(html), { only: ['links', 'html', 'images'] });
    expect(report.problems.map((p) => `${p.check}: ${p.message}`)).toEqual([
      'links: The HTML nests elements more than 500 deep (line 501: <div>), too deep to check: the links check reads at most 500 levels.',
      'html: The HTML nests elements more than 500 deep (line 501: <div>), too deep to check: the html check reads at most 500 levels.',
      'images: The HTML nests elements more than 500 deep (line 501: <div>), too deep to check: the images check reads at most 500 levels.',
    ]);
    expect(report.problems[0]?.fix).toBe(
      'Close the elements the HTML opens: an element left open (an <i>, <b>, <div> or <td> without its end tag) holds everything after it.',
    );
    // As deep as the limit is read and checked.
    const atTheLimit = `${'<div>'.repeat(MAX_HTML_DEPTH - 1)}<img src="https://acme.example/a.png" alt="A">`;
    expect(await checkMail(mail(atTheLimit), { only: ['html', 'images'] })).toMatchObject({ ok: true, problems: [] });
  });

  it('reports the first problems of a check, errors first, and counts the ones left out', async () => {
    const warnings = '<img src="http://acme.example/w.png" alt="W">\n'.repeat(60);
    const errors = '<img src="https://acme.example/e.png">\n'.repeat(60);
    const report = await checkMail(mail(warnings + errors), { only: ['images'] });
    expect(report.problems).toHaveLength(MAX_PROBLEMS_PER_CHECK + 1);
    expect(report.problems.slice(0, 60).every((p) => p.severity === 'error')).toBe(true);
    expect(report.problems[60]?.message).toBe(
      'The image http://acme.example/w.png is loaded over plain http (line 1: <img src="http://acme.example/w.png" alt="W">).',
    );
    expect(report.problems.at(-1)).toEqual({
      check: 'images',
      severity: 'warning',
      message: 'The images check found 20 more problems (20 warnings), left out of this report: a check reports at most 100.',
      fix: 'Fix the problems above and check again: the rest are reported once there are fewer.',
    });
    expect(report.ok).toBe(false);
  });

  it('counts the errors left out as an error, so the verdict stays the same', async () => {
    const html = '<div style="display:flex">x</div>\n'.repeat(120);
    const report = await checkMail(mail(html), { only: ['html'], html: { clients: ['outlook.windows'] } });
    expect(report.problems).toHaveLength(MAX_PROBLEMS_PER_CHECK + 1);
    expect(report.problems.at(-1)).toMatchObject({
      check: 'html',
      severity: 'error',
      // The flex of each div is an error at its place; `display`'s partial support, once a warning for each, is display:flex's own.
      message: 'The html check found 20 more problems (20 errors), left out of this report: a check reports at most 100.',
    });
  });
});
