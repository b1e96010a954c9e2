// The memory webhook store's bounds: a full log drops the delivery that
// finished first (never a pending one), and a webhook whose log is all
// pending refuses the new event instead of forgetting one it owes.
import { describe, expect, it } from 'vitest';
import type { WebhookEvent } from '../../src/server/webhooks/events.js';
import { parseWebhookInput } from '../../src/server/webhooks/registration.js';
import { MemoryWebhookStore, type Delivery } from '../../src/server/webhooks/webhook-store.js';

const webhook = parseWebhookInput({ url: 'http://127.0.0.1:9/' }, { id: 'wh_1', now: 0, mailboxKey: (a) => a });
const delivery = (id: string): Delivery => ({
  webhookId: 'wh_1',
  event: {
    id,
    type: 'message.received',
    address: 'a@mailroom.test',
    createdAt: 0,
    payload: () => Promise.resolve({ kind: 'json', body: '{}' }),
    record: () => ({ id, type: 'message.received', address: 'a@mailroom.test', createdAt: 0, ref: { kind: 'json', body: '{}' } }),
  } satisfies WebhookEvent,
  state: 'pending',
  attempts: [],
  copy: 1,
  cycleAttempts: 0,
  nextAttemptAt: 0,
  deadAt: undefined,
  excerpt: undefined,
});

describe('MemoryWebhookStore', () => {
  it('drops the delivery that finished first when full, never a pending one', () => {
    const store = new MemoryWebhookStore({ maxDeliveriesPerWebhook: 3 });
    store.add(webhook);
    const [a, b, c] = ['a', 'b', 'c'].map(delivery);
    for (const d of [a!, b!, c!]) expect(store.enqueue(d)).toBe(true);
    // b finishes before a.
    b!.state = 'delivered';
    store.saved(b!);
    a!.state = 'dead_lettered';
    store.saved(a!);
    expect(store.enqueue(delivery('d'))).toBe(true);
    expect(store.deliveries('wh_1').map((d) => d.event.id)).toEqual(['a', 'c', 'd']);
    expect(store.enqueue(delivery('e'))).toBe(true);
    expect(store.deliveries('wh_1').map((d) => d.event.id)).toEqual(['c', 'd', 'e']);
    // All pending now: the next event is refused, nothing owed is forgotten.
    expect(store.enqueue(delivery('f'))).toBe(false);
    expect(store.deliveries('wh_1').map((d) => d.event.id)).toEqual(['c', 'd', 'e']);
  });

  it('indexes subscribers by address and event type, and forgets a removed webhook with its log', () => {
    const store = new MemoryWebhookStore();
    const scoped = parseWebhookInput(
      { url: 'http://127.0.0.1:9/', address: 'a@mailroom.test', events: ['delivery.rejected'] },
      { id: 'wh_2', now: 0, mailboxKey: (a) => a },
    );
    store.add(webhook);
    store.add(scoped);
    expect(store.subscribers('delivery.rejected', 'a@mailroom.test').map((w) => w.id)).toEqual(['wh_1', 'wh_2']);
    expect(store.subscribers('message.received', 'a@mailroom.test').map((w) => w.id)).toEqual(['wh_1']);
    expect(store.subscribers('delivery.rejected', 'b@mailroom.test').map((w) => w.id)).toEqual(['wh_1']);
    store.enqueue({ ...delivery('x'), webhookId: 'wh_2' });
    expect(store.remove('wh_2')?.id).toBe('wh_2');
    expect(store.deliveries('wh_2')).toEqual([]);
    expect(store.enqueue({ ...delivery('y'), webhookId: 'wh_2' })).toBe(false);
    expect(store.scopedTo('a@mailroom.test')).toEqual([]);
  });
});
