// The Mailpit driver against the local model of Mailpit's API
// (test/support/mailpit-model.ts, each behaviour with its source): the
// backend contract, then what is Mailpit's own - its substring search, its
// bulk delete that empties everything when given no ids, basic auth.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInbox, MailroomApiError, type InboxEvent } from '../../src/index.js';
import { bulkDeleteBody } from '../../src/backends/mailpit.js';
import { startMailpitModel, type MailpitModel } from '../support/mailpit-model.js';
import { describeBackendContract, sendMail, type RunningBackend } from './support/contract.js';

async function modelBackend(auth?: { username: string; password: string }): Promise<RunningBackend & { model: MailpitModel }> {
  const model = await startMailpitModel({ auth });
  return { backend: 'mailpit', apiURL: model.apiURL, smtpPort: model.smtpPort, credentials: auth, domain: 'mailroom.test', model, stop: () => model.stop() };
}

describeBackendContract('the Mailpit model', () => modelBackend(), { sharedMailStays: true, extensions: false });

describe('Mailpit, beyond the contract (on the model)', () => {
  const auth = { username: 'tester', password: 's3cret' };
  let running: RunningBackend & { model: MailpitModel };
  beforeAll(async () => {
    running = await modelBackend(auth);
  });
  afterAll(async () => {
    await running?.stop();
  });

  const deletes = () => running.model.requests.filter((r) => r.method === 'DELETE');

  it('never sends its bulk delete an empty id list: teardown with nothing of its own sends no delete, and others keep their mail', async () => {
    const inbox = await createInbox({ backend: 'mailpit', apiURL: running.apiURL, credentials: auth });
    const bystander = `bystander-${inbox.address}`;
    await sendMail(running, { to: bystander, subject: 'Not yours' });
    await sendMail(running, { to: [inbox.address, `colleague-${inbox.address}`], subject: 'Shared' });
    await inbox.expectMail({ subject: 'Shared' }, { timeout: 5_000 });
    const before = running.model.count();
    const deletesBefore = deletes().length;

    expect(await inbox.delete()).toBe(0);
    // Nothing of this address's alone: no DELETE at all (an empty one would have emptied Mailpit).
    expect(deletes()).toHaveLength(deletesBefore);
    expect(running.model.count()).toBe(before);
    for (const request of running.model.requests.filter((r) => r.method === 'DELETE')) {
      expect((JSON.parse(request.body) as { IDs: string[] }).IDs.length).toBeGreaterThan(0);
    }
  });

  it('builds no bulk delete body from an empty id list (or an empty id), which Mailpit would read as "everything"', () => {
    expect(bulkDeleteBody(['a1', 'b2'])).toEqual({ IDs: ['a1', 'b2'] });
    expect(() => bulkDeleteBody([])).toThrow("Refusing to send Mailpit's bulk delete an empty id list");
    expect(() => bulkDeleteBody(['a1', ''])).toThrow("Refusing to send Mailpit's bulk delete an empty id list");
  });

  it('the model empties everything on a bulk delete without ids, as Mailpit does (the danger the driver avoids)', async () => {
    const model = await startMailpitModel();
    try {
      await sendMail({ ...running, apiURL: model.apiURL, smtpPort: model.smtpPort }, { to: 'a@mailroom.test' });
      expect(model.count()).toBe(1);
      await fetch(`${model.apiURL}/api/v1/messages`, { method: 'DELETE', body: JSON.stringify({ IDs: [] }) });
      expect(model.count()).toBe(0);
    } finally {
      await model.stop();
    }
  });

  it('searches with addressed:"A" and keeps only mail to A exactly (Mailpit\'s match is a substring, and counts the sender)', async () => {
    const inbox = await createInbox({ backend: 'mailpit', apiURL: running.apiURL, credentials: auth });
    await sendMail(running, { to: `x${inbox.address}`, subject: 'Longer' });
    await sendMail(running, { from: inbox.address, to: 'elsewhere@mailroom.test', subject: 'From it' });
    await sendMail(running, { to: inbox.address, subject: 'Mine' });
    expect((await inbox.expectMail({}, { timeout: 5_000 })).subject).toBe('Mine');
    const searches = running.model.requests.filter((r) => r.path.startsWith('/api/v1/search'));
    expect(new URL(searches.at(-1)!.path, 'http://x').searchParams.get('query')).toBe(`addressed:"${inbox.address}"`);
  });

  it("keeps a second between looks at one address (rule 4): the push-held wait's first look waits out the watermark read's floor", async () => {
    const address = `floor-${Math.random().toString(36).slice(2)}@mailroom.test`;
    await sendMail(running, { to: address, subject: 'Before' });
    const from = running.model.requests.length;
    const inbox = await createInbox({ backend: 'mailpit', apiURL: running.apiURL, credentials: auth, address });
    await sendMail(running, { to: address, subject: 'After' });
    expect((await inbox.expectMail({}, { timeout: 5_000 })).subject).toBe('After');
    const looks = running.model.requests.slice(from).filter((r) => r.path.startsWith('/api/v1/search') && r.path.includes(encodeURIComponent(address)));
    expect(looks.length).toBeGreaterThanOrEqual(2);
    expect(looks[1]!.at - looks[0]!.at).toBeGreaterThanOrEqual(1_000);
  });

  it('behind basic auth: 401 without credentials, the event stream included', async () => {
    const refused = await createInbox({ backend: 'mailpit', apiURL: running.apiURL, address: 'someone@mailroom.test' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(MailroomApiError);
    expect(refused).toMatchObject({ status: 401, slug: 'unauthorized' });
    const inURL = running.apiURL.replace('http://', 'http://tester:s3cret@');
    const events: InboxEvent[] = [];
    const inbox = await createInbox({ backend: 'mailpit', apiURL: inURL, onEvent: (e) => events.push(e) });
    const waiting = inbox.expectMail({}, { timeout: 5_000 });
    while (!events.some((e) => e.type === 'wait-start')) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await sendMail(running, { to: inbox.address, subject: 'Through auth' });
    expect((await waiting).subject).toBe('Through auth');
    // Heard on the event stream, through the same credentials: no failed hold, one check.
    expect(events.filter((e) => e.type === 'check-failed')).toEqual([]);
    expect(events.find((e) => e.type === 'wait-end')).toMatchObject({ outcome: 'received', checks: 1 });
  });
});
