// Validation at the edge: everything here fails before any request is made
// (the API URL points at a port nothing listens on, and no watermark is read).
import { describe, expect, it } from 'vitest';
import { createInbox, Inbox, type MailFilter } from '../../src/index.js';

const offline = () => createInbox({ apiURL: 'http://127.0.0.1:9', watermark: null, prefix: 'Edge cases' });

describe('inbox validation', () => {
  it('creates an inbox without I/O when the watermark is given', async () => {
    const inbox = await offline();
    expect(inbox.address).toMatch(/^edge-cases-[a-z2-7]{16}@mailroom\.test$/);
    expect(inbox.watermark).toBeNull();
    expect(inbox.timeout).toBe(30_000);
    expect(JSON.parse(JSON.stringify(inbox))).toEqual({ address: inbox.address, watermark: null });
  });

  it('names unknown or misplaced wait options', async () => {
    const inbox = await offline();
    await expect(inbox.expectMail({}, { timeOut: 5 } as never)).rejects.toThrow('Unknown wait option `timeOut` (expected `timeout` and `signal`)');
    await expect(inbox.expectNoMail({}, { timeout: 5 } as never)).rejects.toThrow("Unknown wait option `timeout`: this wait's budget is `within`");
    await expect(inbox.expectMail({}, { timeout: -1 })).rejects.toThrow('Expected `timeout` to be a non-negative number of milliseconds, got -1');
    await expect(inbox.expectMail({}, { signal: 'stop' } as never)).rejects.toThrow('Expected `signal` to be an AbortSignal');
    await expect(inbox.expectMails(0)).rejects.toThrow('Expected `count` to be an integer from 1 to 100, got 0');
    await expect(inbox.expectMail({ subjet: 'x' } as MailFilter)).rejects.toThrow('Unknown mail filter key `subjet`');
    await expect(inbox.deleteMessage('')).rejects.toThrow('Expected a message id or a Mail');
  });

  it('names bad hooks, and refuses to be constructed directly', async () => {
    await expect(createInbox({ watermark: null, onEvent: 3 as never })).rejects.toThrow('Expected `onEvent` to be a function');
    await expect(createInbox({ watermark: null, aroundWait: {} as never })).rejects.toThrow('Expected `aroundWait` to be a function');
    expect(() => new Inbox(Symbol('fake') as never, {} as never)).toThrow('Use `await createInbox(options)` to make an Inbox');
  });
});
