// A test catcher takes every domain's mail by default, as maildev and Mailpit
// do: an app that also mails `ops@acme.com` (an admin copy, an invitation)
// must not fail mid-flow because the server refused it. The same rule for
// SMTP and the provider APIs, and the mailbox is readable; fresh addresses
// are still made on the first served domain. `catchAll: false` keeps the
// old refusals (their tests run with it, in the files of each route).
import { describe, expect, it } from 'vitest';
import { createInbox } from '../../src/index.js';
import { resendDriver } from '../support/providers/resend.js';
import { call, listPath, sendMail, sharedServer, start } from './helpers.js';

const server = sharedServer();

describe('catch-all (the default)', () => {
  it('takes SMTP mail for a domain it does not serve, beside a served one, and lists it', async () => {
    const s = await server();
    const foreign = `ops-${Date.now()}@acme-catch.example`;
    const fresh = await createInbox({ apiURL: s.apiURL, domain: s.domains[0] });
    await sendMail(s, { to: [fresh.address, foreign], subject: 'Admin copy', text: 'x' });
    const listed = await call(s, listPath(foreign));
    expect(listed.status).toBe(200);
    expect(listed.json.messages.map((m: { subject: string }) => m.subject)).toEqual(['Admin copy']);
    await fresh.expectMail({ subject: 'Admin copy' });
    // fresh addresses are still made on the served domain
    expect(fresh.address.endsWith(`@${s.domains[0]}`)).toBe(true);
  });

  it('takes a provider API mail for a domain it does not serve, and an inbox on that domain sets up and finds it', async () => {
    const s = await server();
    const inbox = await createInbox({ apiURL: s.apiURL, domain: 'invitee-catch.example' });
    expect(await resendDriver.send(s.apiURL, { from: 'app@acme.test', to: [inbox.address], subject: 'Invitation', text: 'Join us' })).toMatchObject({
      ok: true,
    });
    expect((await inbox.expectMail({ subject: 'Invitation' })).provider?.name).toBe('resend');
  });

  it('says so in /healthz, beside the domains fresh addresses are made on', async () => {
    const s = await server();
    expect((await call(s, '/healthz')).json).toMatchObject({ domains: [s.domains[0]], catch_all: true });
  });
});

describe('catchAll: false', () => {
  it('refuses an unserved domain over SMTP (550 5.1.2) and the provider APIs alike, and healthz does not claim every domain', async () => {
    const strict = await start({ catchAll: false });
    const foreign = `ops-${Date.now()}@acme-strict.example`;
    const refused = await sendMail(strict, { to: foreign, subject: 'x', text: 'x' }).catch((error: { responseCode?: number; response?: string }) => error);
    expect(refused).toMatchObject({ responseCode: 550 });
    expect((refused as { response: string }).response).toContain('5.1.2');
    const api = await resendDriver.send(strict.apiURL, { from: 'app@acme.test', to: [foreign], subject: 'x', text: 'x' });
    expect(api).toMatchObject({ ok: false, error: 'validation_error', status: 403 });
    expect((await call(strict, '/healthz')).json.catch_all).toBeUndefined();
  });
});
