// One address rule for both halves: the client refuses exactly the addresses
// the server refuses, and an internationalised address that the server takes
// over SMTP can be waited on by the client.
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { parseMailboxAddress } from '../../src/contract/address.js';
import { createInbox } from '../../src/inbox/inbox.js';
import { validateAddress } from '../../src/inbox/address.js';
import { send, startTestServer } from '../support/server.js';

let server: MailroomServer;
beforeAll(async () => {
  server = await startTestServer({ waitSlots: 8 });
});
afterAll(() => server.close());

const WELL_FORMED = [
  'a@mailroom.test',
  'First.Last+tag@mailroom.test',
  "o'brien@mailroom.test",
  'josé@mailroom.test',
  'пользователь@mailroom.test',
  '用户@mailroom.test',
  `${'x'.repeat(64)}@mailroom.test`,
];
const MALFORMED = [
  'no-at-sign',
  '@mailroom.test',
  'a b@mailroom.test',
  'a..b@mailroom.test',
  '.a@mailroom.test',
  'a@-bad-.test',
  'a@',
  `${'x'.repeat(65)}@mailroom.test`,
  `a@${'d'.repeat(250)}.test`,
];

/** What the server's list call says of an address: accepted, or its refusal slug. */
async function serverVerdict(address: string): Promise<string> {
  const url = `${server.apiURL}/api/v1/mailbox?address=${encodeURIComponent(address)}`;
  const response = await request(url);
  const body = (await response.body.json()) as { error?: string };
  return response.statusCode === 200 ? 'accepted' : String(body.error);
}

function clientVerdict(address: string): string {
  try {
    validateAddress(address);
    return 'accepted';
  } catch {
    return 'invalid_address';
  }
}

describe('the address rule', () => {
  it.each(WELL_FORMED)('accepts %s on both halves', async (address) => {
    expect(parseMailboxAddress(address)?.key).toBe(address.toLowerCase());
    expect(clientVerdict(address)).toBe('accepted');
    expect(await serverVerdict(address)).toBe('accepted');
  });

  it.each(MALFORMED)('refuses %s on both halves', async (address) => {
    expect(parseMailboxAddress(address)).toBeUndefined();
    expect(clientVerdict(address)).toBe('invalid_address');
    expect(await serverVerdict(address)).toBe('invalid_address');
  });

  it('lets the client wait on an internationalised address the server took mail for over SMTP', async () => {
    const address = `josé-${Date.now()}@${server.domains[0]}`;
    const inbox = await createInbox({ apiURL: server.apiURL, address });
    await send(server, address, { subject: 'Olá' });
    const mail = await inbox.expectMail({ subject: 'Olá' }, { timeout: 5_000 });
    expect(mail.address).toBe(address);
    expect(mail.to).toEqual([address]);
  });
});
