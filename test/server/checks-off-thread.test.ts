// The server checks a message (the web UI's Checks tab) in a thread of its
// own: while it parses and checks a 3 MB mail, the thread serving SMTP and
// HTTP stays free, so `/healthz` answers at once. Before, the checks ran on
// that thread: the server answered nothing for seconds (for a 3 MB mail of
// short tags, hours). Real time, so in vitest.config.ts's TIMING list.
import { describe, expect, it } from 'vitest';
import { call, freshAddress, listPath, messagePath, sendMail, start } from './helpers.js';

// 100 KB of styled rows (about a second of caniemail's work) and a text part that makes the mail 3 MB.
const ROW = '<div style="display:flex;border-radius:4px;background-image:url(https://acme.example/x.png);position:absolute">row</div>\n';
const HTML = ROW.repeat(Math.ceil((100 * 1024) / ROW.length));
const TEXT = 'A line of the text part, long enough to weigh.\n'.repeat(Math.ceil((2.9 * 1024 * 1024) / 48));

describe('the checks of a message, off the serving thread', () => {
  it('leave /healthz answering within 100 ms while a 3 MB mail is checked', async () => {
    const server = await start();
    const address = freshAddress('checks');
    await sendMail(server, { to: address, subject: 'Large', html: HTML, text: TEXT });
    const { id, size } = (await call(server, listPath(address))).json.messages[0] as { id: string; size: number };
    expect(size).toBeGreaterThan(3 * 1024 * 1024);

    // /healthz is asked every 100 ms while the check runs, and each answer timed from when it was due: the
    // server runs in this process, so a blocked server makes the asking late too, and that wait counts.
    const started = performance.now();
    let answeredAt = Infinity;
    const checks = call(server, messagePath(id, address, '/checks')).finally(() => (answeredAt = performance.now()));
    const waits: number[] = [];
    for (let look = 1; look <= 8; look++) {
      const due = started + look * 100;
      if (due > answeredAt) break;
      await new Promise((resolve) => setTimeout(resolve, due - performance.now()));
      expect((await call(server, '/healthz')).status).toBe(200);
      waits.push(performance.now() - due);
    }
    const answer = await checks;
    expect(answer.status).toBe(200);
    expect(answer.json.problems.some((p: { feature?: string }) => p.feature === 'display:flex')).toBe(true);
    expect(Math.max(...waits), `the waits for /healthz, in ms: ${waits.map((ms) => ms.toFixed(0)).join(', ')}`).toBeLessThan(100);
    // The check took long enough to be asked about five times or more.
    expect(waits.length).toBeGreaterThanOrEqual(5);
  });
});
