// The html check on real mail (fixtures/mail-corpus/): each mail the
// frameworks' own templates make (MJML, React Email, Foundation for Emails,
// Maizzle, Cerberus, a Markdown text-first mail, a hand-written table mail)
// has no error in the default clients, and each mail that leans on what
// clients lack fails, naming the feature. Before the check judged features
// by their effect, every one of the framework mails failed (16 to 316
// errors each) and the Foundation ones could not be checked at all; a
// false alarm found later joins the corpus.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkMail } from '../../src/checks/run-checks.js';

const corpus = join(import.meta.dirname, '../../fixtures/mail-corpus');
const mailsIn = (folder: string) =>
  readdirSync(join(corpus, folder))
    .filter((file) => file.endsWith('.html'))
    .sort();
const checkHtmlOf = (folder: string, file: string) => {
  const html = readFileSync(join(corpus, folder, file), 'utf8');
  return checkMail({ html, text: 'The text part.', size: html.length, subject: file }, { only: ['html'] });
};

describe('the mail corpus', () => {
  const mails = mailsIn('mails');

  it('holds the mails the frameworks make, twenty and more', () => {
    expect(mails.length).toBeGreaterThanOrEqual(20);
    for (const maker of ['mjml-', 'react-email-', 'foundation-', 'maizzle-', 'cerberus-', 'text-first-', 'hand-written-']) {
      expect(
        mails.some((file) => file.startsWith(maker)),
        maker,
      ).toBe(true);
    }
  });

  it('passes each of them in gmail, outlook, apple-mail and yahoo, with few warnings and a score for each client', async () => {
    for (const file of mails) {
      const report = await checkHtmlOf('mails', file);
      expect(
        report.problems.filter((p) => p.severity === 'error').map((p) => p.message),
        file,
      ).toEqual([]);
      // A warning is a trait of the design, one per feature: a handful, not the dozens of places caniemail lists.
      expect(report.problems.length, file).toBeLessThanOrEqual(8);
      expect(
        report.support?.map((s) => s.client),
        file,
      ).toEqual(['gmail', 'outlook', 'apple-mail', 'yahoo']);
      for (const { score } of report.support ?? []) expect(score, file).toBeGreaterThanOrEqual(60);
    }
  });
});

describe('the broken mails', () => {
  /** Each mail and the feature its error names: what the mail depends on and clients lack. */
  const broken: Record<string, string> = {
    'absolute-position.html': 'position',
    'audio.html': '<audio> element',
    'background-image-text.html': 'background-image',
    'flex-layout.html': 'display:flex',
    'float-layout.html': 'float',
    'form.html': '<form> element',
    'grid-layout.html': 'display:grid',
    'iframe.html': '<iframe> element',
    'inline-svg.html': 'Embedded <svg> image',
    'object.html': '<object> element',
    'script.html': '<script> element',
    'video.html': '<video> element',
    'web-font-without-fallback.html': '@font-face',
    'webp-image.html': 'webP image format',
  };

  it('lists every broken mail the corpus has', () => {
    expect(mailsIn('broken')).toEqual(Object.keys(broken).sort());
  });

  it.each(Object.entries(broken))('fails %s, naming %s', async (file, feature) => {
    const report = await checkHtmlOf('broken', file);
    expect(report.ok).toBe(false);
    expect(report.problems.filter((p) => p.severity === 'error').map((p) => p.feature)).toContain(feature);
  });
});
