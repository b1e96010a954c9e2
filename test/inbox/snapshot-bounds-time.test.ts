// A mail's snapshot takes time in proportion to its HTML, however it is
// written: before, each link's words were sliced out of the text built so
// far, which flattened that text at every link, so a mail of 5,000 links
// took 9 s (10,000: about 36 s) and 20,000 links left open (each nested in
// the last) 68 s; now under a second each. Real time, so in vitest.config.ts's
// TIMING list.
import { describe, expect, it } from 'vitest';
import { mailSnapshot } from '../../src/inbox/mail-snapshot.js';

function timedSnapshot(html: string) {
  const start = performance.now();
  const snapshot = mailSnapshot({
    from: 'Acme <hello@acme.example>',
    to: ['ada@mailroom.test'],
    cc: [],
    subject: 'Links',
    text: '',
    html,
    headers: {},
    attachments: [],
  });
  return { snapshot, ms: performance.now() - start };
}

describe('the time a snapshot takes', () => {
  it('renders 10,000 links (600 KB of HTML) in under two seconds', () => {
    const { snapshot, ms } = timedSnapshot(`<p>${'Visit <a href="https://acme.example/a/9f2c4e1ab7d3">our shop</a> on July 20, 2026. '.repeat(10_000)}</p>`);
    expect(snapshot).toContain('Visit our shop <https://acme.example/a/[token]> on [date]. Visit our shop');
    expect(ms).toBeLessThan(2_000);
  });

  it('renders 20,000 links left open, each inside the last, in under two seconds', () => {
    const { snapshot, ms } = timedSnapshot(`<p>${'<a href="https://acme.example/a">word '.repeat(20_000)}</p>`);
    // Each link's words run to the end of the mail: never its address, so each target is shown.
    expect(snapshot.match(/<https:\/\/acme\.example\/a>/g)).toHaveLength(20_000);
    expect(ms).toBeLessThan(2_000);
  });
});
