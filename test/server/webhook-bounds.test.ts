// Issue 26, items 4 and 5, for webhooks: an event names its mail and keeps
// none of it; the delivery log, the dead letters, replays, the delivery
// thread's body cache and its connection pools are bounded; the cloud
// metadata service is no destination.
import { createServer } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MessageStore } from '../../src/server/store/message-store.js';
import { MAX_ATTEMPTS_PER_DELIVERY, replayRefusal } from '../../src/server/webhooks/attempt.js';
import { destinationPolicy } from '../../src/server/webhooks/destination-policy.js';
import { resolveServerOptions } from '../../src/server/server-options.js';
import { classify } from '../../src/server/webhooks/classify.js';
import { BodyCache } from '../../src/server/webhooks/event-body.js';
import { MessageGoneError, messageReceived } from '../../src/server/webhooks/events.js';
import { IDLE_POOL_MS, WebhookSender } from '../../src/server/webhooks/sender.js';
import { MemoryWebhookStore, type Delivery } from '../../src/server/webhooks/webhook-store.js';
import { closeReceivers, startReceiver } from '../support/webhook-receiver.js';
import { call, fakeClock, freshAddress, listPath, sendMail, start } from './helpers.js';

afterEach(closeReceivers);

const json = { 'content-type': 'application/json' };

describe('a message.received event', () => {
  it('reads its mail from the store at each attempt and keeps no copy; once the mail is gone it cannot be built', async () => {
    const store = new MessageStore({ clock: fakeClock(), retention: 60_000, maxMessages: Infinity });
    const [message] = store.deliver(['a@mailroom.test'], Buffer.from('Subject: hi\r\n\r\nbody\r\n'));
    let reads = 0;
    const event = messageReceived(
      message!,
      () => 'http://127.0.0.1/raw',
      async (mailbox, id) => {
        reads++;
        return store.get(mailbox, id)?.content.source();
      },
    );
    expect((await event.payload()).kind).toBe('message');
    await event.payload();
    expect(reads).toBe(2);
    store.delete('a@mailroom.test', message!.id);
    await expect(event.payload()).rejects.toBeInstanceOf(MessageGoneError);
  });

  // On both stores (the redis project runs this file): an event holds nothing of its mail, on Redis too.
  it('whose mail was deleted while it waited for a retry is dead-lettered with the reason `gone`, not retried', async () => {
    const server = await start();
    const receiver = await startReceiver();
    receiver.otherwise = { status: 500 };
    const address = freshAddress();
    const added = await call(server, '/api/v1/webhooks', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ url: receiver.url, retry: { max_attempts: 50, initial_delay_ms: 300, factor: 1, max_delay_ms: 300 } }),
    });
    expect(added.status).toBe(201);
    const id = added.json.webhook.id as string;
    await sendMail(server, { to: address, subject: 'reset', text: 'code' });
    // The polls' timeouts are hang guards: the first delivery once took over 5 s at load 16 (the redis project).
    await expect.poll(async () => receiver.received.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(1);
    expect((await call(server, listPath(address), { method: 'DELETE' })).status).toBe(200);
    // (The webhook hears every address: deleting the mailbox would remove one scoped to it.)
    await expect
      .poll(async () => (await call(server, `/api/v1/webhooks/${id}/dead-letters`)).json, { timeout: 30_000 })
      .toMatchObject({ dead_letters: [{ reason: 'gone' }] });
    const attempts = receiver.received.length;
    expect(attempts).toBeLessThan(50);
  });
});

describe('the webhook logs', () => {
  const delivery = (webhookId: string, eventId: string): Delivery => ({
    webhookId,
    event: {
      id: eventId,
      type: 'message.received',
      address: 'a@mailroom.test',
      createdAt: 0,
      payload: () => Promise.reject(new Error('unused')),
      record: () => {
        throw new Error('unused');
      },
    },
    state: 'pending',
    attempts: [],
    copy: 1,
    cycleAttempts: 0,
    nextAttemptAt: 0,
    deadAt: undefined,
    excerpt: undefined,
  });

  it('forget finished deliveries and dead letters once older than the retention, and keep pending ones', () => {
    const clock = fakeClock();
    const store = new MemoryWebhookStore({ now: () => clock.now(), retentionMs: 60_000 });
    store.add({ id: 'wh_1' } as never);
    const delivered = delivery('wh_1', 'evt_1');
    const dead = delivery('wh_1', 'evt_2');
    const waiting = delivery('wh_1', 'evt_3');
    for (const d of [delivered, dead, waiting]) expect(store.enqueue(d)).toBe(true);
    delivered.state = 'delivered';
    store.saved(delivered);
    dead.state = 'dead_lettered';
    store.saved(dead);
    clock.advance(59_000);
    expect(store.deliveries('wh_1')).toHaveLength(3);
    clock.advance(1_001);
    expect(store.deliveries('wh_1').map((d) => d.event.id)).toEqual(['evt_3']);
  });

  it('refuse a replay once a delivery holds its cap of attempts (replays are bounded)', () => {
    const attempts = Array.from({ length: MAX_ATTEMPTS_PER_DELIVERY }, () => ({}) as never);
    expect(replayRefusal({ event: { id: 'evt_1' }, attempts: attempts.slice(1) })).toBeUndefined();
    const refused = replayRefusal({ event: { id: 'evt_1' }, attempts });
    expect(refused).toMatchObject({ status: 409, slug: 'invalid_request' });
    expect(refused?.message).toContain(`${MAX_ATTEMPTS_PER_DELIVERY} attempts`);
  });
});

describe('the delivery thread', () => {
  it('keeps event bodies within a byte budget, the oldest going first', async () => {
    const cache = new BodyCache(100, 2_500);
    for (let i = 0; i < 5; i++) await cache.get(`evt_${i}`, { kind: 'json', body: 'x'.repeat(1_000) });
    expect(cache.bytes).toBeLessThanOrEqual(2_500);
    expect(cache.size).toBe(2);
  });

  it('reads at most 64 KiB of an answer’s body: an endless one still counts as the answer, its connection is dropped, and the next attempt goes', async () => {
    let dropped!: () => void;
    const droppedNow = new Promise<void>((resolve) => (dropped = resolve));
    const endless = createServer((req, res) => {
      if (req.url === '/small') return void res.end('ok');
      res.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const pour = () => {
        while (!res.destroyed && res.write(chunk));
      };
      res.on('drain', pour).on('close', dropped);
      pour();
    });
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
    const url = (path: string) => `http://127.0.0.1:${(endless.address() as AddressInfo).port}${path}`;
    const sender = new WebhookSender();
    try {
      // A minute's timeout: only the bound can end this attempt within the test's time.
      const post = (target: string) => sender.send({ url: target, body: '{}', headers: {}, timeoutMs: 60_000, signal: new AbortController().signal });
      expect((await post(url('/endless'))).result).toEqual({ kind: 'answer', status: 200, retryAfter: undefined });
      await droppedNow;
      expect((await post(url('/small'))).result).toMatchObject({ kind: 'answer', status: 200 });
    } finally {
      await sender.close();
      endless.closeAllConnections();
      await new Promise((resolve) => endless.close(resolve));
    }
  });

  it('ends an attempt the caller cancels, before or during the request, as cancelled', async () => {
    const during = new AbortController();
    // Never answers; the request's arrival is the moment to cancel, so the cancel lands while it is in flight.
    const silent = createServer(() => during.abort());
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hook`;
    const sender = new WebhookSender();
    try {
      const before = new AbortController();
      before.abort();
      const posted = sender.send({ url, body: '{}', headers: {}, timeoutMs: 60_000, signal: during.signal });
      expect((await sender.send({ url, body: '{}', headers: {}, timeoutMs: 60_000, signal: before.signal })).result).toMatchObject({ reason: 'cancelled' });
      expect((await posted).result).toMatchObject({ kind: 'failure', reason: 'cancelled' });
    } finally {
      await sender.close();
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('closes an endpoint’s connection pool once no attempt used it for a minute', async () => {
    const hits = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => hits.listen(0, '127.0.0.1', resolve));
    const url = (path: string) => `http://127.0.0.1:${(hits.address() as AddressInfo).port}${path}`;
    let now = 0;
    const sender = new WebhookSender({ now: () => now });
    try {
      const post = (target: string) => sender.send({ url: target, body: '{}', headers: {}, timeoutMs: 5_000, signal: new AbortController().signal });
      await post(url('/a'));
      expect(sender.openPools).toHaveLength(1);
      now += IDLE_POOL_MS - 1;
      sender.closeIdlePools();
      expect(sender.openPools).toHaveLength(1);
      now += 2;
      sender.closeIdlePools();
      expect(sender.openPools).toEqual([]);
      await post(url('/b'));
      expect(sender.openPools).toHaveLength(1);
    } finally {
      await sender.close();
      await new Promise((resolve) => hits.close(resolve));
    }
  });
});

describe('webhook destinations', () => {
  // Security review 2, finding 6: the six spellings after the first four were registered (201).
  it('refuse every link-local address and the clouds’ metadata services, in any spelling, over the API; loopback and private addresses stay allowed', async () => {
    const server = await start();
    const urls = [
      'http://169.254.169.254/latest/meta-data',
      'http://[fd00:ec2::254]/',
      'http://[::ffff:169.254.169.254]/',
      'http://metadata.google.internal/',
      'http://169.254.170.2/v2/credentials',
      'http://100.100.100.200/latest/meta-data/',
      'http://[::169.254.169.254]/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://[fe80::a9fe:a9fe]/',
      'http://169.254.169.253/',
    ];
    const answers = [];
    for (const url of urls) answers.push(await call(server, '/api/v1/webhooks', { method: 'POST', headers: json, body: JSON.stringify({ url }) }));
    expect(answers.map((answer) => answer.status)).toEqual(urls.map(() => 400));
    for (const answer of answers) expect(answer.json.message).toContain('link-local or a cloud metadata address, never a webhook destination');
    for (const url of ['http://127.0.0.1:9/hook', 'http://10.1.2.3/hook', 'http://app.internal/hook']) {
      expect((await call(server, '/api/v1/webhooks', { method: 'POST', headers: json, body: JSON.stringify({ url }) })).status, url).toBe(201);
    }
  });

  it('are narrowed to the hosts and CIDRs given with webhookAllow, which can never open link-local or a metadata service', async () => {
    const policy = destinationPolicy(['10.0.0.0/8', 'hooks.internal', '0.0.0.0/0']);
    expect(policy.refusal('http://10.9.8.7/x')).toBeUndefined();
    expect(policy.refusal('http://hooks.internal:8080/x')).toBeUndefined();
    expect(policy.refusal('http://169.254.169.254/')).toMatch(/never a webhook destination/);
    expect(destinationPolicy(['10.0.0.0/8']).refusal('http://127.0.0.1/x')).toMatch(/not among the destinations/);
    expect(destinationPolicy(['10.0.0.0/8']).refusal('http://evil.example/x')).toMatch(/not among the destinations/);
    expect(() => resolveServerOptions({ webhookAllow: ['169.254.169.254'] })).toThrow(
      'Expected `webhookAllow` to be an array of host names, addresses or CIDRs such as ["hooks.internal", "10.0.0.0/8"], got "169.254.169.254": link-local or a cloud metadata address, which is never a destination',
    );
    expect(() => resolveServerOptions({ webhookAllow: ['hooks internal'] })).toThrow(/got "hooks internal": not a host name, an address or a CIDR/);
    const server = await start({ webhookAllow: ['hooks.internal'] });
    const refused = await call(server, '/api/v1/webhooks', { method: 'POST', headers: json, body: JSON.stringify({ url: 'http://127.0.0.1:9/' }) });
    expect(refused.status).toBe(400);
  });

  it('are checked on the address a name resolves to at each connection: a name for the metadata service is refused before connecting, not retried', async () => {
    const receiver = await startReceiver();
    // stands in for DNS: the names a rebinding attacker (or a careless record) would point anywhere
    const names: Record<string, string> = {
      'app.test': '127.0.0.1',
      'hooks.internal': '127.0.0.1',
      'meta.attacker.test': '169.254.169.254',
      // ECS task credentials behind NAT64's prefix: unwrapped before the check
      'ecs.attacker.test': '64:ff9b::a9fe:aa02',
    };
    const resolve: LookupFunction = (hostname, _options, callback) => {
      const address = names[hostname];
      if (!address) return callback(Object.assign(new Error(`no such name ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, [{ address, family: address.includes(':') ? 6 : 4 }]);
    };
    const post = (sender: WebhookSender, host: string) =>
      sender.send({ url: `http://${host}:${receiver.port}/hooks/mail`, body: '{}', headers: json, timeoutMs: 5_000, signal: new AbortController().signal });

    const open = new WebhookSender({ resolve });
    try {
      // the name is resolved through the check and the real socket goes where it points
      expect((await post(open, 'app.test')).result).toMatchObject({ kind: 'answer', status: 204 });
      const refused = (await post(open, 'meta.attacker.test')).result;
      expect(refused).toMatchObject({ kind: 'failure', reason: 'destination' });
      expect(refused.kind === 'failure' && refused.detail).toContain('meta.attacker.test resolved to 169.254.169.254, a link-local or cloud metadata address');
      expect(classify(refused, 0)).toMatchObject({ delivered: false, retry: false, reason: 'destination' });
      expect((await post(open, 'ecs.attacker.test')).result).toMatchObject({ kind: 'failure', reason: 'destination' });
    } finally {
      await open.close();
    }

    const narrowed = new WebhookSender({ resolve, webhookAllow: ['hooks.internal'] });
    try {
      expect((await post(narrowed, 'hooks.internal')).result).toMatchObject({ kind: 'answer', status: 204 });
      const other = (await post(narrowed, 'app.test')).result;
      expect(other.kind === 'failure' && [other.reason, other.detail]).toEqual([
        'destination',
        'app.test resolved to 127.0.0.1, which is not among the destinations this server allows (--webhook-allow hooks.internal)',
      ]);
    } finally {
      await narrowed.close();
    }
    expect(receiver.received).toHaveLength(2);
  });
});
