// The SMTP attempt feed: every reply that decided a recipient's fate is
// published once, with the sender's view of it (the deferral lab's log and
// the webhooks' delivery events are built on it). Real sockets throughout.
import { describe, expect, it } from 'vitest';
import type { SmtpAttempt } from '../../src/server/base/smtp-attempts.js';
import { internalsOf } from '../../src/server/start-server.js';
import { fakeClock, freshAddress, sendMail, silentLogger, start } from './helpers.js';

async function watch(options: Parameters<typeof start>[0] = {}) {
  const server = await start(options);
  const seen: SmtpAttempt[] = [];
  internalsOf(server).attempts.subscribe((attempt) => void seen.push(attempt));
  return { server, seen };
}

describe('SMTP attempts', () => {
  it('publishes an accepted attempt per recipient, with the stored id, the sender and the time', async () => {
    const clock = fakeClock();
    const { server, seen } = await watch({ clock });
    const [a, b] = [freshAddress('a'), freshAddress('b')];
    const response = await sendMail(server, { from: 'app@example.com', to: [a, b], subject: 'hi', text: 'x' });
    expect(response).toMatch(/^250 /);
    expect(seen.map((attempt) => attempt.to).sort()).toEqual([a.toLowerCase(), b.toLowerCase()].sort());
    const stored = internalsOf(server).store;
    for (const attempt of seen) {
      expect(attempt).toMatchObject({ stage: 'data', code: 250, enhancedCode: '2.6.0', outcome: 'accepted', from: 'app@example.com', at: clock.now() });
      expect(attempt.clientIp).toMatch(/127\.0\.0\.1$/);
      expect((await stored.get(attempt.to, attempt.messageId!))?.id).toBe(attempt.messageId);
    }
  });

  it('publishes a refusal at RCPT with its code, enhanced code and outcome, and nothing for the refused recipient at DATA', async () => {
    const { server, seen } = await watch({ catchAll: false });
    const served = freshAddress('ok');
    const unserved = `nobody-${Date.now()}@elsewhere.example`;
    await sendMail(server, { to: [served, unserved], subject: 'half', text: 'x' });
    const refused = seen.filter((attempt) => attempt.to === unserved);
    expect(refused).toEqual([expect.objectContaining({ stage: 'rcpt', code: 550, enhancedCode: '5.1.2', outcome: 'rejected' })]);
    expect(refused[0]!.text).toContain('is not served here');
    expect(seen.filter((attempt) => attempt.to === served.toLowerCase()).map((attempt) => attempt.outcome)).toEqual(['accepted']);
  });

  it('publishes a message over the size limit as rejected at DATA for every recipient', async () => {
    const { server, seen } = await watch({ maxMessageBytes: 1024 });
    const to = freshAddress('big');
    await expect(sendMail(server, { to, subject: 'big', text: 'x'.repeat(4096) })).rejects.toThrow(/552/);
    expect(seen).toEqual([expect.objectContaining({ to: to.toLowerCase(), stage: 'data', code: 552, enhancedCode: '5.3.4', outcome: 'rejected' })]);
  });

  it('keeps telling the sender the truth when a listener throws', async () => {
    const logger = silentLogger();
    const { server, seen } = await watch({ logger });
    internalsOf(server).attempts.subscribe(() => {
      throw new Error('observer broke');
    });
    const response = await sendMail(server, { to: freshAddress('x'), subject: 's', text: 'x' });
    expect(response).toMatch(/^250 /);
    expect(seen).toHaveLength(1);
    expect(logger.lines.some((line) => line.level === 'error' && line.message.includes('observer broke'))).toBe(true);
  });
});
