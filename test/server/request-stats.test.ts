// The request counts of the test hooks (`server.stats(address)` and
// `GET /_mailroom/stats`): what each counts, and that docs/server.md's
// description of their shape is the shape they have.
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type MailroomServer } from '../../src/server/index.js';

const GUIDE = readFileSync(new URL('../../docs/server.md', import.meta.url), 'utf8');

let server: MailroomServer;
beforeAll(async () => {
  const quiet = () => {};
  // One list call per 10 s: the list calls and the wait below fall in one window however loaded the machine is.
  server = await startServer({ smtpPort: 0, httpPort: 0, faultInjection: true, listPerSecond: 0.1, logger: { info: quiet, warn: quiet, error: quiet } });
});
afterAll(async () => {
  await server?.close();
});

async function call(method: 'GET' | 'DELETE', path: string): Promise<{ status: number; body: unknown }> {
  const res = await request(`${server.apiURL}${path}`, { method });
  return { status: res.statusCode, body: await res.body.json() };
}

describe('request stats', () => {
  it('count each call that named the address, a long-poll as a wait and not also a list, and read as docs/server.md says', async () => {
    const address = 'Stats-1@mailroom.test';
    const q = `address=${encodeURIComponent(address)}`;
    expect((await call('GET', `/api/v1/mailbox?${q}`)).status).toBe(200);
    // Within the list call's window: the wait's look is deferred, not refused, and a timeout answers after it.
    expect(await call('GET', `/api/v1/mailbox/wait?${q}&timeout=0.1`)).toMatchObject({ status: 200, body: { timed_out: true } });
    expect((await call('GET', `/api/v1/mailbox?${q}`)).status).toBe(429);
    expect((await call('DELETE', `/api/v1/mailbox?${q}`)).status).toBe(200);

    const stats = server.stats(address);
    expect(stats).toEqual({ list: 2, wait: 1, message: 0, raw: 0, deleteMessage: 0, deleteMailbox: 1, rateLimited: 1, faulted: 0 });
    const documented = /server\.stats\(address\); \/\/ \{ ([\w, ]+) \}/.exec(GUIDE)?.[1]?.split(', ');
    expect(documented).toEqual(Object.keys(stats));

    const overHttp = await call('GET', `/_mailroom/stats?${q}`);
    expect(overHttp).toEqual({ status: 200, body: { address: address.toLowerCase(), ...stats } });
    const example = /Over\s+HTTP the answer names the address too, lower-cased:\n\n```json\n(.+)\n```/.exec(GUIDE)?.[1];
    expect(Object.keys(JSON.parse(example ?? '{}') as object)).toEqual(Object.keys(overHttp.body as object));
  });
});
