// Webhooks on the suite's store: part of the server contract suite
// (vitest.config.ts), so these run on the memory store and again on a real
// Redis store. The event is made from the copy the store returned to the
// SMTP intake, and its body from that copy's source (a promise on a shared
// store), so `message.received` must carry the same message the API serves
// whichever store holds it (on Redis the body is read back from Redis by
// whichever server makes the attempt). test/server/webhooks.test.ts, in the
// same suite, covers the schedule on both stores.
import { afterEach, describe, expect, it } from 'vitest';
import { closeReceivers, startReceiver } from '../support/webhook-receiver.js';
import { call, freshAddress, sendMail, start } from './helpers.js';

afterEach(closeReceivers);

describe("webhooks on the suite's store", () => {
  it('message.received carries the message as the API shows it, and its raw_url serves the source', async () => {
    const server = await start();
    const receiver = await startReceiver();
    const address = freshAddress('stored-hook');
    const registered = await call(server, '/api/v1/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, address, events: ['message.received'] }),
    });
    expect(registered.status, registered.text).toBe(201);
    await sendMail(server, { to: address, subject: 'Kept in the store', text: 'Body kept in the store' });
    await receiver.waitFor(1);
    const event = JSON.parse(receiver.received[0]!.body);
    const listed = await call(server, `/api/v1/mailbox?address=${encodeURIComponent(address)}`);
    const message = await call(server, `/api/v1/message/${listed.json.messages[0].id}?mailbox=${encodeURIComponent(address)}`);
    expect(event).toMatchObject({ type: 'message.received', address });
    expect(event.data.message).toEqual(message.json);
    const raw = new URL(event.data.raw_url);
    const source = await call(server, raw.pathname + raw.search);
    expect(source.status).toBe(200);
    expect(source.text).toContain('Subject: Kept in the store');
  });

  it('deleting the mailbox removes the webhooks scoped to it', async () => {
    const server = await start();
    const receiver = await startReceiver();
    const address = freshAddress('gone-hook');
    const registered = await call(server, '/api/v1/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, address }),
    });
    const id = registered.json.webhook.id as string;
    await sendMail(server, { to: address, subject: 'One', text: 'x' });
    expect((await call(server, `/api/v1/mailbox?address=${encodeURIComponent(address)}`, { method: 'DELETE' })).json).toEqual({ deleted: 1 });
    expect((await call(server, `/api/v1/webhooks/${id}`)).status).toBe(404);
  });
});
