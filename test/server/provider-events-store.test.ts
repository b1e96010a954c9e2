// Provider events through the store: a file of the store contract suite
// (vitest.config.ts STORE_CONTRACT), so the `redis` project runs it again
// against a real redis-server, where the queue, the leases, the delivery
// log and an SES subscription's confirmation live in Redis
// (redis/scripts/webhook.lua) instead of this server's memory.
//
// - Resend end to end: a send through Resend's SDK, a bounce the test
//   reports, each event accepted by `resend.webhooks.verify` and logged
//   delivered;
// - SES: the notifications wait, held and never attempted, until the app
//   fetches the SubscriptionConfirmation's SubscribeURL, and a test that
//   expects one delivered meanwhile is told why, naming the URL; once
//   confirmed they go, in order;
// - SendGrid `dropped`: a send to an address SendGrid would suppress (it
//   hard-bounced before) is `dropped`, not delivered (and still stored);
// - on Redis, two servers on one store: a report through either is about
//   the send the other took, and the suppression holds for both.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventWebhook, EventWebhookHeader } from '@sendgrid/eventwebhook';
import { Resend } from 'resend';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createInbox } from '../../src/index.js';
import { matchDelivered } from '../../src/runner/webhook-matchers.js';
import { snsCertificate } from '../../src/server/webhooks/provider-events/ses.js';
import type { WebhookDelivery } from '../../src/client/webhooks.js';
import type { Webhook } from '../../src/inbox/webhooks.js';
import { resendDriver } from '../support/providers/resend.js';
import { sendgridDriver } from '../support/providers/sendgrid.js';
import { sesV2Driver } from '../support/providers/ses-v2.js';
import { closeReceivers, startReceiver, type Received } from '../support/webhook-receiver.js';
import { HEAVY_TEST_TIMEOUT_MS } from '../support/test-timeouts.js';
import { call, sharedServer, start, testStore } from './helpers.js';

afterEach(closeReceivers);
// The first ses registration of a process makes SNS's signing certificate (an RSA key: 0.1-0.4 s alone); in a loaded
// run it took the registration past the client's 5 s request timeout. Made first, so no test's registration pays for it.
beforeAll(async () => {
  await snsCertificate();
}, HEAVY_TEST_TIMEOUT_MS);

const server = sharedServer();
const inboxAt = async (prefix: string) => createInbox({ apiURL: (await server()).apiURL, domain: 'mailroom.test', prefix });

/** Reads the webhook's log until `done` holds of it (the engine writes it after each answer; on Redis, a round trip later). */
async function logWhen(webhook: Webhook, done: (log: readonly WebhookDelivery[]) => boolean): Promise<readonly WebhookDelivery[]> {
  const watched = await webhook.watch((log) => (done(log) ? true : undefined), { within: 45_000 });
  if (!done(watched.deliveries)) throw new Error(`the log never got there: ${JSON.stringify(watched.deliveries.map((d) => [d.eventType, d.state, d.held]))}`);
  return watched.deliveries;
}

const sns = (request: Received) => JSON.parse(request.body) as Record<string, string>;
const sesType = (request: Received) => {
  const message = sns(request);
  return message.Type === 'Notification' ? (JSON.parse(message.Message!) as { notificationType: string }).notificationType : message.Type;
};

// A hang guard: the log's watch waits up to 45 s for the first events, which a loaded run's delivery thread is slow to send.
describe('provider events on the store', { timeout: HEAVY_TEST_TIMEOUT_MS }, () => {
  it('resend: a send and a reported bounce, each accepted by resend.webhooks.verify and delivered at the first attempt', async () => {
    const receiver = await startReceiver();
    const inbox = await inboxAt('pe-resend');
    const webhook = await inbox.webhooks.add({ url: receiver.url, format: 'resend' });
    const sent = await resendDriver.send((await server()).apiURL, { from: 'app@example.com', to: [inbox.address], subject: 'Welcome', text: 'Hi' });
    expect(sent).toMatchObject({ ok: true });
    const reported = await inbox.webhooks.providerEvent('bounced');
    expect(reported).toMatchObject({ provider: 'resend', provider_message_id: (sent as { id: string }).id, webhooks: 1 });
    await receiver.waitFor(3);
    const resend = new Resend('re_verify_only');
    const types = receiver.received.map((r) => {
      const headers = { id: String(r.headers['svix-id']), timestamp: String(r.headers['svix-timestamp']), signature: String(r.headers['svix-signature']) };
      const event = resend.webhooks.verify({ payload: r.body, headers, webhookSecret: webhook.secret }) as { type: string; data: { email_id: string } };
      expect(event.data.email_id).toBe((sent as { id: string }).id);
      return event.type;
    });
    expect(types).toEqual(['email.sent', 'email.delivered', 'email.bounced']);
    const log = await logWhen(webhook, (l) => l.length === 3 && l.every((d) => d.state === 'delivered'));
    expect(log.map((d) => [d.eventType, d.attempts.length])).toEqual([
      ['provider.sent', 1],
      ['provider.delivered', 1],
      ['provider.bounced', 1],
    ]);
  });

  it('ses: notifications are held until the app fetches SubscribeURL, a test is told so naming the URL, and then they go in order', async () => {
    const receiver = await startReceiver();
    const inbox = await inboxAt('pe-ses');
    const webhook = await inbox.webhooks.add({ url: receiver.url, format: 'ses' });
    await receiver.waitFor(1);
    const [confirmation] = receiver.received;
    expect(sesType(confirmation!)).toBe('SubscriptionConfirmation');
    const sent = await sesV2Driver.send((await server()).apiURL, { from: 'app@example.com', to: [inbox.address], subject: 'Welcome', text: 'Hi' });
    expect(sent).toMatchObject({ ok: true });
    await inbox.webhooks.providerEvent('bounced');

    // Queued, held, unattempted: the log says why, and has no next attempt for them.
    const held = await logWhen(webhook, (l) => l.length === 3 && l[0]!.state === 'delivered');
    expect(held.map((d) => [d.eventType, d.state, d.attempts.length, d.held ?? null, d.nextAttemptAt])).toEqual([
      ['provider.subscription', 'delivered', 1, null, null],
      ['provider.delivered', 'pending', 0, 'subscription_unconfirmed', null],
      ['provider.bounced', 'pending', 0, 'subscription_unconfirmed', null],
    ]);
    // Nothing went to the app but the confirmation request (the log shows both notifications unattempted).
    expect(receiver.received).toHaveLength(1);
    const failed = await matchDelivered(webhook, 'provider.bounced', { within: 300 });
    expect(failed.pass).toBe(false);
    expect(failed.message()).toContain(`The SNS subscription of ${receiver.url} is unconfirmed: 2 notifications held, never attempted`);
    expect(failed.message()).toContain('event 3 (provider.bounced) held, unattempted: the SNS subscription is unconfirmed');

    const confirmed = await fetch(sns(confirmation!).SubscribeURL!);
    expect([confirmed.status, await confirmed.text()]).toEqual([200, expect.stringContaining(`mailroom-ses-events:${webhook.id}</SubscriptionArn>`)]);
    await receiver.waitFor(3);
    expect(receiver.received.map(sesType)).toEqual(['SubscriptionConfirmation', 'Delivery', 'Bounce']);
    const log = await logWhen(webhook, (l) => l.every((d) => d.state === 'delivered'));
    expect(log.map((d) => [d.eventType, d.attempts.length, d.held ?? null])).toEqual([
      ['provider.subscription', 1, null],
      ['provider.delivered', 1, null],
      ['provider.bounced', 1, null],
    ]);
    // A second fetch is answered alike; a token no ses webhook sent is SNS's NotFound.
    expect((await fetch(sns(confirmation!).SubscribeURL!)).status).toBe(200);
    const unknown = await fetch(sns(confirmation!).SubscribeURL!.replace(/Token=wh_[0-9a-f]+/, 'Token=wh_0000'));
    expect([unknown.status, await unknown.text()]).toEqual([404, expect.stringContaining('<Code>NotFound</Code>')]);
  });

  it('ses: an app that confirms inside its handler, before answering the SubscriptionConfirmation, gets the notifications after it', async () => {
    const received: Received[] = [];
    // The app's SNS endpoint: it fetches SubscribeURL before it answers, as many handlers do.
    const app = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        received.push({ headers: req.headers, body, at: 0, eventId: '', attempt: 0, remotePort: 0 });
        const message = JSON.parse(body) as Record<string, string>;
        const confirmed = message.Type === 'SubscriptionConfirmation' ? fetch(message.SubscribeURL!).then((r) => r.text()) : Promise.resolve('');
        void confirmed.then(() => res.end('ok'));
      });
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    try {
      const inbox = await inboxAt('pe-ses-inline');
      const url = `http://127.0.0.1:${(app.address() as AddressInfo).port}/sns`;
      const webhook = await inbox.webhooks.add({ url, format: 'ses' });
      await logWhen(webhook, (l) => l[0]?.state === 'delivered');
      expect(await sesV2Driver.send((await server()).apiURL, { from: 'app@example.com', to: [inbox.address], subject: 'Hi', text: 'Hi' })).toMatchObject({
        ok: true,
      });
      await inbox.webhooks.providerEvent('complained');
      const log = await logWhen(webhook, (l) => l.length === 3 && l.every((d) => d.state === 'delivered'));
      expect(log.map((d) => [d.eventType, d.attempts.length, d.held ?? null])).toEqual([
        ['provider.subscription', 1, null],
        ['provider.delivered', 1, null],
        ['provider.complained', 1, null],
      ]);
      expect(received.map(sesType)).toEqual(['SubscriptionConfirmation', 'Delivery', 'Complaint']);
    } finally {
      app.close();
    }
  });

  it('sendgrid: a send to an address that bounced is dropped (Bounced Address), still stored; a test may say dropped too; each verified by @sendgrid/eventwebhook', async () => {
    const receiver = await startReceiver();
    const inbox = await inboxAt('pe-sendgrid');
    const webhook = await inbox.webhooks.add({ url: receiver.url, format: 'sendgrid' });
    const { apiURL } = await server();
    const mail = { from: 'app@example.com', to: [inbox.address], subject: 'Welcome', text: 'Hi' };
    expect(await sendgridDriver.send(apiURL, mail)).toMatchObject({ ok: true });
    await inbox.webhooks.providerEvent('bounced');
    const again = await sendgridDriver.send(apiURL, { ...mail, subject: 'Welcome again' });
    expect(again).toMatchObject({ ok: true });
    const reported = await inbox.webhooks.providerEvent('dropped', { detail: 'Unsubscribed Address' });
    expect(reported).toMatchObject({ provider: 'sendgrid', provider_message_id: (again as { id: string }).id, webhooks: 1 });
    await receiver.waitFor(5);
    const verifier = new EventWebhook();
    const key = verifier.convertPublicKeyToECDSA(webhook.registration.publicKey!);
    const events = receiver.received.map((r) => {
      const signature = String(r.headers[EventWebhookHeader.SIGNATURE().toLowerCase()]);
      const timestamp = String(r.headers[EventWebhookHeader.TIMESTAMP().toLowerCase()]);
      expect(verifier.verifySignature(key, r.body, signature, timestamp)).toBe(true);
      const [event] = JSON.parse(r.body) as { event: string; reason?: string; sg_message_id: string }[];
      return [event!.event, event!.reason ?? null, event!.sg_message_id.split('.')[0]];
    });
    expect(events).toEqual([
      ['processed', null, expect.any(String)],
      ['delivered', null, expect.any(String)],
      ['bounce', expect.stringContaining('550 5.1.1'), expect.any(String)],
      // Not processed, not delivered: dropped, about the second send.
      ['dropped', 'Bounced Address', (again as { id: string }).id],
      ['dropped', 'Unsubscribed Address', (again as { id: string }).id],
    ]);
    // Stored all the same: a test still sees the app mailing an address it was told bounced.
    expect((await inbox.messages()).map((m) => m.subject).sort()).toEqual(['Welcome', 'Welcome again']);
    await logWhen(webhook, (l) => l.length === 5 && l.every((d) => d.state === 'delivered'));
  });

  const store = testStore();
  it.skipIf(store === undefined)('two servers on one Redis store: the send through one, the report and the next send through the other', async () => {
    const [a, b] = [await start({ store }), await start({ store })];
    const receiver = await startReceiver();
    const registered = await call(a, '/api/v1/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, format: 'resend' }),
    });
    const { secret } = registered.json.webhook as { secret: string };
    const to = `pe-two-${Date.now()}@mailroom.test`;
    const mail = { from: 'app@example.com', to: [to], subject: 'Welcome', text: 'Hi' };
    const sent = (await resendDriver.send(a.apiURL, mail)) as { id: string };
    const report = await call(b, '/api/v1/provider-events', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address: to, event: 'bounced' }),
    });
    expect([report.status, report.json.provider_message_id]).toEqual([202, sent.id]);
    const again = (await resendDriver.send(b.apiURL, { ...mail, subject: 'Welcome again' })) as { id: string };
    await receiver.waitFor(4);
    const resend = new Resend('re_verify_only');
    const events = receiver.received.map((r) => {
      const headers = { id: String(r.headers['svix-id']), timestamp: String(r.headers['svix-timestamp']), signature: String(r.headers['svix-signature']) };
      const event = resend.webhooks.verify({ payload: r.body, headers, webhookSecret: secret }) as { type: string; data: { email_id: string } };
      return [event.type, event.data.email_id];
    });
    expect(events).toEqual([
      ['email.sent', sent.id],
      ['email.delivered', sent.id],
      ['email.bounced', sent.id],
      ['email.suppressed', again.id],
    ]);
  });
});
