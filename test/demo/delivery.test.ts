// How and when the demo app delivers: delayed sending, close(), SMTP failures,
// STARTTLS, and the validation of its options.
import { describe, expect, test } from 'vitest';
import { startDemoApp } from '../../fixtures/demo-app/index.js';
import type { DemoAppOptions } from '../../fixtures/demo-app/index.js';
import { startSmtpSink } from '../../fixtures/smtp-sink.js';
import { freshAddress, getJson, postJson } from './context.js';
import { SUBJECTS } from '../../fixtures/demo-app/index.js';

describe('sendDelayMs', () => {
  test('answers 202 first and sends both mails afterwards', async () => {
    const sink = await startSmtpSink();
    // Long enough that the answer reaches the test first even on a loaded machine.
    const app = await startDemoApp({ smtp: sink, sendDelayMs: 1_500 });
    try {
      const email = freshAddress('delayed');
      const { status } = await postJson(`${app.url}/api/signup`, { email });
      expect(status).toBe(202);
      expect(sink.messages, 'no mail may arrive before the answer').toEqual([]);

      const arrived = await sink.waitFor(2, { to: email, timeoutMs: 20_000 });
      expect(arrived.map((m) => m.parsed.subject).sort()).toEqual([SUBJECTS.confirm, SUBJECTS.welcome].sort());
    } finally {
      await app.close();
      await sink.close();
    }
  });

  test('accepts a [min, max] range', async () => {
    const sink = await startSmtpSink();
    const app = await startDemoApp({ smtp: sink, sendDelayMs: [1_000, 1_500] });
    try {
      const email = freshAddress('range');
      expect((await postJson(`${app.url}/api/signup`, { email })).status).toBe(202);
      expect(sink.messages).toEqual([]);
      expect(await sink.waitFor(2, { to: email, timeoutMs: 20_000 })).toHaveLength(2);
    } finally {
      await app.close();
      await sink.close();
    }
  });

  test('close() waits for mail already scheduled, so none is lost', async () => {
    const sink = await startSmtpSink();
    const app = await startDemoApp({ smtp: sink, sendDelayMs: 300 });
    const email = freshAddress('close');
    await postJson(`${app.url}/api/signup`, { email });
    await app.close();
    expect(sink.messages.map((m) => m.rcptTo[0])).toEqual([email, email]);
    await sink.close();
  });
});

describe('delivery', () => {
  test('an unreachable SMTP server: the mails wait for a retry, then could not be delivered, each naming the server and the address', async () => {
    const sink = await startSmtpSink();
    const { port } = sink;
    await sink.close();
    const app = await startDemoApp({ smtp: { host: '127.0.0.1', port }, retry: { attempts: 2, firstDelayMs: 50, jitter: 0 } });
    try {
      const email = freshAddress('down');
      const failed = new RegExp(`Could not send "(Confirm your email|Welcome to Acme)" to ${email} through SMTP 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`);
      const { status, json } = await postJson(`${app.url}/api/signup`, { email });
      expect(status).toBe(202);
      const [confirm, welcome] = json.deliveries as Array<{ state: string; attempts: Array<{ reply: string }> }>;
      // The first waits for its retry, the second waits behind it.
      expect([confirm!.state, welcome!.state]).toEqual(['retrying', 'queued']);
      expect(confirm!.attempts[0]!.reply).toMatch(/ECONNREFUSED/);
      await expect
        .poll(async () =>
          ((await getJson(`${app.url}/api/deliveries?email=${encodeURIComponent(email)}`)).deliveries as Array<{ state: string }>).map((d) => d.state),
        )
        .toEqual(['failed', 'failed']);
      const { deliveries } = await getJson(`${app.url}/api/deliveries?email=${encodeURIComponent(email)}`);
      for (const delivery of deliveries as Array<{ reason: string; attempts: unknown[] }>) {
        expect(delivery.attempts).toHaveLength(2);
        expect(delivery.reason).toMatch(/^Given up after 2 attempts; the last reply was /);
        expect(delivery.reason).toMatch(failed);
      }
    } finally {
      await app.close();
    }
  });

  test('upgrades with STARTTLS when the server offers it, then authenticates', async () => {
    const sink = await startSmtpSink({ starttls: true });
    const app = await startDemoApp({ smtp: sink });
    try {
      await postJson(`${app.url}/api/signup`, { email: freshAddress('tls') });
      expect(sink.messages).toHaveLength(2);
      for (const message of sink.messages) {
        expect(message.secure).toBe(true);
        expect(message.authUser).toBe('acme-demo');
      }
    } finally {
      await app.close();
      await sink.close();
    }
  });

  test('two app instances keep separate state', async () => {
    const sink = await startSmtpSink();
    const first = await startDemoApp({ smtp: sink });
    const second = await startDemoApp({ smtp: sink });
    try {
      const email = freshAddress('separate');
      await postJson(`${first.url}/api/signup`, { email });
      await postJson(`${second.url}/api/signup`, { email });
      // Not a duplicate for the second instance: it sends its own confirmation.
      expect(sink.messages.filter((m) => m.parsed.subject === SUBJECTS.confirm)).toHaveLength(2);
    } finally {
      await first.close();
      await second.close();
      await sink.close();
    }
  });
});

describe('options', () => {
  const smtp = { host: '127.0.0.1', port: 2525 };
  const cases: Array<[string, unknown, string]> = [
    ['no smtp', {}, "Expected `smtp` to be an object like { host: '127.0.0.1', port: 2525 }, got undefined"],
    ['smtp port 0', { smtp: { host: '127.0.0.1', port: 0 } }, 'Expected `smtp.port` to be the port of a running SMTP server, got 0'],
    ['bad port', { smtp, port: 70_000 }, 'Expected `port` to be an integer port between 0 and 65535, got 70000'],
    ['empty host', { smtp, host: ' ' }, 'Expected `host` to be a non-empty host name, got " "'],
    [
      'negative delay',
      { smtp, sendDelayMs: -1 },
      'Expected `sendDelayMs` to be a non-negative number of milliseconds or a [min, max] pair with min <= max, got -1',
    ],
    [
      'reversed range',
      { smtp, sendDelayMs: [500, 100] },
      'Expected `sendDelayMs` to be a non-negative number of milliseconds or a [min, max] pair with min <= max, got [500, 100]',
    ],
  ];
  test.for(cases)('%s is a TypeError saying what was expected', async ([, options, message]) => {
    await expect(startDemoApp(options as DemoAppOptions)).rejects.toThrow(new TypeError(message));
  });
});
