// Provider delivery events, one contract run against every provider: a
// webhook registered with the provider's `format` is sent, through real
// sockets, what that provider sends an app - `sent`/`delivered` once a send
// through the provider's own SDK is stored, a bounce when the lab refuses a
// recipient for good, and what a test reports for its address (a delay, a
// soft and a hard bounce, a complaint) - each accepted by that provider's
// OWN verification code (named with its version below) and refused once one
// byte of what the signature covers is changed; the events carry the id the
// send call answered with, and go through the engine's delivery log.
//
// The verifiers: Resend's `resend.webhooks.verify` (the installed resend
// SDK, which wraps `standardwebhooks`); `@sendgrid/eventwebhook`'s
// `verifySignature` with the public key the registration hands out;
// Mailgun's documented check (mailgun.js has none: hex HMAC-SHA256 of
// timestamp + token, documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks);
// Postmark's basic auth (the credentials written in the URL); SNS's
// documented signature check against the certificate at `SigningCertURL`
// (docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html),
// with node:crypto: a stock `sns-validator` refuses a certificate that is
// not on amazonaws.com.
import { createHmac, createVerify, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { EventWebhook, EventWebhookHeader } from '@sendgrid/eventwebhook';
import { Resend } from 'resend';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderDriver } from '../support/provider-sdks.js';
import { version } from '../support/provider-sdks.js';
import { HEAVY_TEST_TIMEOUT_MS } from '../support/test-timeouts.js';
import { mailgunDriver } from '../support/providers/mailgun.js';
import { postmarkDriver } from '../support/providers/postmark.js';
import { resendDriver } from '../support/providers/resend.js';
import { sendgridDriver } from '../support/providers/sendgrid.js';
import { sesV2Driver } from '../support/providers/ses-v2.js';
import { createInbox } from '../../src/index.js';
import { optionsFrom, UsageError } from '../../src/cli/serve-options.js';
import { call, freshAddress, sharedServer } from './helpers.js';

/** AWS's stock SNS verifier (it ships no types): what it says of a message. */
const SnsValidator = createRequire(import.meta.url)('sns-validator') as new () => {
  validate(message: Record<string, string>, done: (error: Error | null) => void): void;
};

interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** The app's endpoint: every request kept as it came, answered 200 (401 on a path in `refusing`: the app's signature check failing). */
class Receiver {
  readonly requests: Received[] = [];
  readonly refusing = new Set<string>();
  readonly #server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      this.requests.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.statusCode = this.refusing.has(req.url ?? '') ? 401 : 200;
      res.end();
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  at(path: string): readonly Received[] {
    return this.requests.filter((r) => r.path === path);
  }

  /**
   * Resolves once `path` has `count` requests; fails with what came when
   * 45 s pass. A hang guard, not a speed claim: in a loaded `npm test` the
   * server's first events wait for its delivery thread to load (a CI run at
   * load 21 saw none of 8 in 10 s).
   */
  async until(path: string, count: number): Promise<readonly Received[]> {
    const deadline = Date.now() + 45_000;
    while (this.at(path).length < count) {
      if (Date.now() > deadline)
        throw new Error(`${path} got ${this.at(path).length} of ${count} events: ${JSON.stringify(this.at(path).map((r) => r.body.slice(0, 120)))}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.at(path);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/** The request with one byte of `inside` changed (the first occurrence, a digit or letter turned into another). */
function oneByteChanged(request: Received, inside: string): Received {
  const at = request.body.indexOf(inside);
  if (at === -1) throw new Error(`${inside} is not in ${request.body.slice(0, 200)}`);
  const byte = request.body[at]!;
  const changed = byte === '0' ? '1' : byte === 'a' ? 'b' : byte === '"' ? "'" : '0';
  return { ...request, body: `${request.body.slice(0, at)}${changed}${request.body.slice(at + 1)}` };
}

const header = (request: Received, name: string) => String(request.headers[name.toLowerCase()] ?? '');

interface WireHook {
  readonly id: string;
  readonly secret: string;
  readonly public_key?: string;
}

interface FormatCase {
  readonly format: 'resend' | 'sendgrid' | 'mailgun' | 'postmark' | 'ses';
  readonly driver: ProviderDriver;
  /** The provider's own verification code, named with its version. */
  readonly verifier: string;
  /** Whether the provider's own code accepts the request. */
  verify(request: Received, webhook: WireHook): boolean | Promise<boolean>;
  /** A string inside what the signature covers, where one byte is changed. */
  readonly signedPart: (request: Received) => string;
  /** What a request says it is, in the provider's words. */
  typeOf(request: Received): string;
  /** The send id the event carries, as the provider writes it. */
  messageIdOf(request: Received): string;
  /** The types expected: the send's, the four reported (delayed, soft bounce, hard bounce, complaint), the lab's refusal. */
  readonly expected: readonly string[];
}

const resend = new Resend('re_verify_only');
const sendgridWebhook = new EventWebhook();
const snsMessage = (request: Received) => JSON.parse(request.body) as Record<string, string>;
const sesInner = (request: Received) =>
  JSON.parse(snsMessage(request).Message!) as { notificationType: string; mail: { messageId: string }; bounce?: { bounceType: string; bounceSubType: string } };
const certificates = new Map<string, string>();

const CASES: readonly FormatCase[] = [
  {
    format: 'resend',
    driver: resendDriver,
    verifier: `resend ${version('resend')} webhooks.verify and standardwebhooks ${version('standardwebhooks')}`,
    verify(request, webhook) {
      const headers = { id: header(request, 'svix-id'), timestamp: header(request, 'svix-timestamp'), signature: header(request, 'svix-signature') };
      const accepts = (check: () => unknown) => {
        try {
          check();
          return true;
        } catch {
          return false;
        }
      };
      const byResend = accepts(() => resend.webhooks.verify({ payload: request.body, headers, webhookSecret: webhook.secret }));
      const byStandard = accepts(() =>
        new StandardWebhook(webhook.secret).verify(request.body, {
          'webhook-id': headers.id,
          'webhook-timestamp': headers.timestamp,
          'webhook-signature': headers.signature,
        }),
      );
      // Both or neither: a disagreement fails the test, whichever way.
      if (byResend !== byStandard) throw new Error(`resend says ${byResend}, standardwebhooks says ${byStandard}`);
      return byResend;
    },
    signedPart: () => '"data"',
    typeOf: (r) => {
      const event = JSON.parse(r.body) as { type: string; data: { bounce?: { type: string } } };
      return event.data.bounce ? `${event.type}:${event.data.bounce.type}` : event.type;
    },
    messageIdOf: (r) => (JSON.parse(r.body) as { data: { email_id: string } }).data.email_id,
    expected: [
      'email.sent',
      'email.delivered',
      'email.delivery_delayed',
      'email.bounced:Transient',
      'email.bounced:Permanent',
      'email.complained',
      'email.suppressed',
      'email.bounced:Permanent',
    ],
  },
  {
    format: 'sendgrid',
    driver: sendgridDriver,
    verifier: `@sendgrid/eventwebhook ${version('@sendgrid/eventwebhook')} verifySignature`,
    verify: (request, webhook) =>
      sendgridWebhook.verifySignature(
        sendgridWebhook.convertPublicKeyToECDSA(webhook.public_key!),
        request.body,
        header(request, EventWebhookHeader.SIGNATURE()),
        header(request, EventWebhookHeader.TIMESTAMP()),
      ),
    signedPart: () => '"email"',
    typeOf: (r) => {
      const [event] = JSON.parse(r.body) as { event: string; type?: string }[];
      return event!.type ? `${event!.event}:${event!.type}` : event!.event;
    },
    messageIdOf: (r) => (JSON.parse(r.body) as { sg_message_id: string }[])[0]!.sg_message_id.split('.')[0]!,
    expected: ['processed', 'delivered', 'deferred', 'bounce:blocked', 'bounce:bounce', 'spamreport', 'dropped', 'bounce:bounce'],
  },
  {
    format: 'mailgun',
    driver: mailgunDriver,
    verifier: "Mailgun's documented HMAC check (node:crypto; mailgun.js has no verifier)",
    verify(request, webhook) {
      const { signature } = JSON.parse(request.body) as { signature: { timestamp: string; token: string; signature: string } };
      const expected = createHmac('sha256', webhook.secret)
        .update(signature.timestamp + signature.token)
        .digest('hex');
      return expected.length === signature.signature.length && timingSafeEqual(Buffer.from(expected), Buffer.from(signature.signature));
    },
    // The signature covers the timestamp and the token only (as at Mailgun).
    signedPart: (r) => (JSON.parse(r.body) as { signature: { token: string } }).signature.token,
    typeOf: (r) => {
      const data = (JSON.parse(r.body) as { 'event-data': { event: string; severity?: string; reason?: string } })['event-data'];
      if (data.reason?.startsWith('suppress-')) return `${data.event}:${data.reason}`;
      return data.severity ? `${data.event}:${data.severity}` : data.event;
    },
    messageIdOf: (r) =>
      (JSON.parse(r.body) as { 'event-data': { message: { headers: { 'message-id': string } } } })['event-data'].message.headers['message-id'],
    expected: [
      'accepted',
      'delivered',
      'failed:temporary',
      'failed:temporary',
      'failed:permanent',
      'complained',
      'failed:suppress-complaint',
      'failed:permanent',
    ],
  },
  {
    format: 'postmark',
    driver: postmarkDriver,
    verifier: "Postmark's basic auth (the credentials in the webhook's URL)",
    verify: (request) => header(request, 'authorization') === `Basic ${Buffer.from('hook-user:s3cret').toString('base64')}`,
    // Not signed: what is checked is the header, so the changed request is one with other credentials.
    signedPart: () => '',
    typeOf: (r) => {
      const record = JSON.parse(r.body) as { RecordType: string; Type?: string };
      return record.Type ? `${record.RecordType}:${record.Type}` : record.RecordType;
    },
    messageIdOf: (r) => (JSON.parse(r.body) as { MessageID: string }).MessageID,
    expected: ['Delivery', 'Bounce:Transient', 'Bounce:SoftBounce', 'Bounce:HardBounce', 'SpamComplaint:SpamComplaint', 'Bounce:HardBounce'],
  },
  {
    format: 'ses',
    driver: sesV2Driver,
    verifier: "SNS's documented signature check (node:crypto RSA-SHA1) against the certificate at SigningCertURL",
    async verify(request) {
      const message = snsMessage(request);
      let certificate = certificates.get(message.SigningCertURL!);
      if (certificate === undefined) {
        certificate = await (await fetch(message.SigningCertURL!)).text();
        certificates.set(message.SigningCertURL!, certificate);
      }
      const fields =
        message.Type === 'SubscriptionConfirmation'
          ? ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type']
          : ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'];
      const signed = fields.map((name) => (message[name] === undefined ? '' : `${name}\n${message[name]}\n`)).join('');
      return message.SignatureVersion === '1' && createVerify('RSA-SHA1').update(signed).verify(certificate, message.Signature!, 'base64');
    },
    signedPart: (r) => snsMessage(r).MessageId!,
    typeOf: (r) => {
      const message = snsMessage(r);
      if (message.Type !== 'Notification') return message.Type!;
      const inner = sesInner(r);
      if (inner.bounce?.bounceSubType === 'OnAccountSuppressionList') return `${inner.notificationType}:${inner.bounce.bounceSubType}`;
      return inner.bounce ? `${inner.notificationType}:${inner.bounce.bounceType}` : inner.notificationType;
    },
    messageIdOf: (r) => sesInner(r).mail.messageId,
    // SES notifications have no `sent` and no delay.
    expected: [
      'SubscriptionConfirmation',
      'Delivery',
      'Bounce:Transient',
      'Bounce:Permanent',
      'Complaint',
      'Bounce:OnAccountSuppressionList',
      'Bounce:Permanent',
    ],
  },
];

// A static webhook in a provider's format (startServer's `staticWebhooks`), checked below; it hears only complaints.
const STATIC_HOOK = { url: 'http://127.0.0.1:9/static-sendgrid', format: 'sendgrid', events: ['provider.complained'] } as const;
const server = sharedServer({ staticWebhooks: [STATIC_HOOK] });
const receiver = new Receiver();
let receiverUrl = '';

beforeAll(async () => {
  receiverUrl = await receiver.listen();
});
afterAll(() => receiver.close());

const json = { 'content-type': 'application/json' };

describe('provider delivery events, as each provider sends and signs them', () => {
  it.each(CASES)('$format: every event accepted by $verifier, refused with one byte changed', { timeout: HEAVY_TEST_TIMEOUT_MS }, async (c) => {
    const mailroom = await server();
    const path = `/hooks/${c.format}`;
    const url = c.format === 'postmark' ? `${receiverUrl.replace('http://', 'http://hook-user:s3cret@')}${path}` : `${receiverUrl}${path}`;
    const registered = await call(mailroom, '/api/v1/webhooks', { method: 'POST', headers: json, body: JSON.stringify({ url, format: c.format }) });
    expect(registered.status).toBe(201);
    const webhook = registered.json.webhook as WireHook & { format: string; url: string };
    expect(webhook.format).toBe(c.format);
    expect(webhook.url).not.toContain('s3cret');
    if (c.format === 'ses') {
      // The app confirms the subscription by fetching SubscribeURL, as it does at AWS: SNS sends notifications only then.
      const [confirmation] = await receiver.until(path, 1);
      const confirmed = await fetch(snsMessage(confirmation!).SubscribeURL!);
      expect([confirmed.status, await confirmed.text()]).toEqual([
        200,
        expect.stringContaining(`<SubscriptionArn>arn:aws:sns:us-east-1:000000000000:mailroom-ses-events:${webhook.id}<`),
      ]);
    }

    const inbox = await createInbox({ apiURL: mailroom.apiURL, domain: 'mailroom.test', prefix: 'events' });
    const to = inbox.address;
    const sent = await c.driver.send(mailroom.apiURL, { from: 'app@example.com', to: [to], subject: 'Welcome', text: 'Hello' });
    expect(sent).toMatchObject({ ok: true });
    // What became of it, said through the inbox, as a test says "this address bounced".
    for (const event of ['delayed', 'soft_bounced', 'bounced', 'complained'] as const) {
      const reported = await inbox.webhooks.providerEvent(event);
      // This test's webhook (SES has no delay), and the static one where its format and `events` take the kind.
      const hearing = (c.format === 'ses' && event === 'delayed' ? 0 : 1) + (c.format === STATIC_HOOK.format && event === 'complained' ? 1 : 0);
      expect(reported).toMatchObject({ provider: c.driver.provider, provider_message_id: (sent as { id: string }).id, webhooks: hearing });
    }
    // Sent again after the bounce and the complaint: the provider's suppression list drops it (Postmark refuses such a send on its API instead: no event).
    const again = await c.driver.send(mailroom.apiURL, { from: 'app@example.com', to: [to], subject: 'Welcome again', text: 'Hello' });
    expect(again).toMatchObject({ ok: true });
    const refused = freshAddress('refused');
    const rule = await call(mailroom, `/api/v1/mailbox/rules?address=${encodeURIComponent(refused)}`, {
      method: 'POST',
      headers: json,
      body: '{"kind": "reject"}',
    });
    expect(rule.status).toBe(200);
    expect(await c.driver.send(mailroom.apiURL, { from: 'app@example.com', to: [refused], subject: 'Welcome', text: 'Hello' })).toMatchObject({ ok: false });

    const requests = await receiver.until(path, c.expected.length);
    expect(requests.map((r) => c.typeOf(r))).toEqual(c.expected);
    for (const request of requests) {
      expect(await c.verify(request, webhook), request.body.slice(0, 200)).toBe(true);
      const changed =
        c.format === 'postmark'
          ? { ...request, headers: { ...request.headers, authorization: 'Basic aG9vay11c2VyOnMzY3JldA==x' } }
          : oneByteChanged(request, c.signedPart(request));
      expect(await c.verify(changed, webhook), changed.body.slice(0, 200)).toBe(false);
    }
    // The events about a send carry the id its call answered with: the first send's, and the dropped one's last.
    const aboutSend = requests.filter((r) => r.body.includes(to));
    const ids = [...aboutSend.slice(0, -1).map(() => sent), c.format === 'postmark' ? sent : again].map((s) => (s as { id: string }).id.replace(/^<|>$/g, ''));
    expect(aboutSend.length).toBeGreaterThanOrEqual(4);
    expect(aboutSend.map((r) => c.messageIdOf(r).replace(/^<|>$/g, ''))).toEqual(ids);

    // Through the engine: its delivery log has each one, delivered at the first attempt (once the last answer is recorded).
    const deadline = Date.now() + 5_000;
    let deliveries: { event_type: string; state: string; attempts: unknown[] }[];
    do {
      deliveries = (await call(mailroom, `/api/v1/webhooks/${webhook.id}/deliveries`)).json.deliveries;
    } while (deliveries.some((d) => d.state === 'pending') && Date.now() < deadline && (await new Promise((resolve) => setTimeout(resolve, 20, true))));
    expect(deliveries.map((d) => [d.state, d.attempts.length])).toEqual(c.expected.map(() => ['delivered', 1]));
    expect(deliveries.every((d) => d.event_type.startsWith('provider.'))).toBe(true);

    if (c.format === 'ses') {
      // What docs/providers.md says: the stock verifier refuses a certificate that is not on amazonaws.com, before fetching it.
      const stock = await new Promise<Error | null>((resolve) => new SnsValidator().validate(snsMessage(requests[1]!), resolve));
      expect(stock?.message, `sns-validator ${version('sns-validator')}`).toBe('The certificate is located on an invalid domain.');
    }
    await call(mailroom, `/api/v1/webhooks/${webhook.id}`, { method: 'DELETE' });
  });

  it('goes through the engine: a refused event is dead-lettered, and its replay carries the same provider event id', async () => {
    const mailroom = await server();
    const path = '/hooks/refusing-resend';
    receiver.refusing.add(path);
    const registered = await call(mailroom, '/api/v1/webhooks', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ url: `${receiverUrl}${path}`, format: 'resend', events: ['provider.delivered'] }),
    });
    const webhook = registered.json.webhook as WireHook;
    const to = freshAddress('refusing');
    expect(await resendDriver.send(mailroom.apiURL, { from: 'app@example.com', to: [to], subject: 'Welcome', text: 'Hello' })).toMatchObject({ ok: true });
    const [refused] = await receiver.until(path, 1);
    const deadline = Date.now() + 5_000;
    let dead: { event_id: string; reason: string }[];
    do dead = (await call(mailroom, `/api/v1/webhooks/${webhook.id}/dead-letters`)).json.dead_letters;
    while (dead.length === 0 && Date.now() < deadline && (await new Promise((resolve) => setTimeout(resolve, 20, true))));
    // A 401 is the app refusing the signature: dead-lettered at once, as for mailroom's own events.
    expect(dead.map((d) => d.reason)).toEqual(['signature']);
    receiver.refusing.delete(path);
    const replay = await call(mailroom, `/api/v1/webhooks/${webhook.id}/dead-letters/${dead[0]!.event_id}/replay`, { method: 'POST', headers: json });
    expect(replay.status).toBe(202);
    const [, again] = await receiver.until(path, 2);
    expect(header(again!, 'svix-id')).toBe(header(refused!, 'svix-id'));
    expect(again!.body).toBe(refused!.body);
    await call(mailroom, `/api/v1/webhooks/${webhook.id}`, { method: 'DELETE' });
  });

  it("startServer's staticWebhooks take a format: the key pair is made at start, the public key shown", async () => {
    const hooks = (await call(await server(), '/api/v1/webhooks')).json.webhooks as { url: string; format: string; secret: string; public_key?: string }[];
    const made = hooks.find((h) => h.url === STATIC_HOOK.url);
    expect(made).toMatchObject({ format: 'sendgrid', events: ['provider.complained'] });
    expect(made!.public_key).toMatch(/^MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE[A-Za-z0-9+/]+=*$/);
  });

  it('mailroom serve --webhook-format shapes the --webhook posts, and refuses a format it does not know', () => {
    const hook = ['--webhook', 'http://127.0.0.1:9/hooks/sendgrid'];
    expect(optionsFrom([...hook, '--webhook-format', 'sendgrid'], {}).options.staticWebhooks).toEqual([
      { url: 'http://127.0.0.1:9/hooks/sendgrid', secret: undefined, format: 'sendgrid' },
    ]);
    expect(optionsFrom(hook, { MAILROOM_WEBHOOK_FORMAT: 'ses' }).options.staticWebhooks?.[0]?.format).toBe('ses');
    expect(() => optionsFrom([...hook, '--webhook-format', 'sparkpost'], {})).toThrow(UsageError);
    expect(() => optionsFrom(['--webhook-format', 'resend'], {})).toThrow(/no --webhook/);
  });

  it('refuses a report for an address no provider send reached, and a secret that cannot sign the format', async () => {
    const mailroom = await server();
    const report = await call(mailroom, '/api/v1/provider-events', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ address: freshAddress('nobody'), event: 'bounced' }),
    });
    expect([report.status, report.json.error]).toEqual([404, 'not_found']);
    const badEvent = await call(mailroom, '/api/v1/provider-events', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ address: freshAddress(), event: 'opened' }),
    });
    expect([badEvent.status, badEvent.json.error, badEvent.json.message]).toEqual([
      400,
      'invalid_request',
      expect.stringContaining('delivered, delayed, bounced'),
    ]);
    const badSecret = await call(mailroom, '/api/v1/webhooks', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ url: `${receiverUrl}/x`, format: 'resend', secret: 'not-a-svix-secret' }),
    });
    expect([badSecret.status, badSecret.json.message]).toEqual([400, expect.stringContaining('whsec_')]);
    const badFormat = await call(mailroom, '/api/v1/webhooks', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ url: `${receiverUrl}/x`, format: 'sparkpost' }),
    });
    expect([badFormat.status, badFormat.json.message]).toEqual([400, expect.stringContaining('mailroom, resend, sendgrid, mailgun, postmark, ses')]);
  });
});
