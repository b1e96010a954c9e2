// Every refusal of the contract, and bad HTTP input answered with a stable
// slug, never a crash or a 500.
import { connect } from 'node:net';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { call, freshAddress, listPath, messagePath, start, type ApiAnswer } from './helpers.js';
import { countLooks, waitPath } from './wait-helpers.js';

/** An HTTP request written byte for byte, so no client normalises the path first. */
async function rawHttp(
  server: MailroomServer,
  requestLine: string,
  headers = '',
): Promise<{ status: number; head: string; json: { error: string; message: string } }> {
  const socket = connect(server.httpPort, '127.0.0.1');
  socket.write(`${requestLine}\r\nHost: 127.0.0.1\r\nConnection: close\r\n${headers}\r\n`);
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const [head, body = ''] = text.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head!)?.[1]), head: head!, json: JSON.parse(body) };
}

function expectRefusal(answer: ApiAnswer, status: number, slug: string): void {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(answer.json.error).toBe(slug);
  expect(typeof answer.json.message).toBe('string');
  expect(answer.json.message.length).toBeGreaterThan(10);
}

describe('address refusals', () => {
  it('answers 400 invalid_address for a malformed address on every call', async () => {
    const server = await start();
    for (const bad of [
      'not-an-address',
      'a@',
      '@mailroom.test',
      'a b@mailroom.test',
      'a..b@mailroom.test',
      'a@b@mailroom.test',
      'a@mailroom..test',
      `${'x'.repeat(65)}@mailroom.test`,
    ]) {
      expectRefusal(await call(server, listPath(bad)), 400, 'invalid_address');
      expectRefusal(await call(server, listPath(bad), { method: 'DELETE' }), 400, 'invalid_address');
      expectRefusal(await call(server, messagePath('00000000000', bad)), 400, 'invalid_address');
      expectRefusal(await call(server, messagePath('00000000000', bad, '/raw')), 400, 'invalid_address');
      expectRefusal(await call(server, messagePath('00000000000', bad), { method: 'DELETE' }), 400, 'invalid_address');
    }
  });

  it('answers 404 unknown_domain for a domain it does not serve (catchAll off), naming the served ones, at once', async () => {
    const server = await start({ domains: ['one.test', 'two.test'], catchAll: false });
    const looks = countLooks(server);
    const answer = await call(server, listPath('someone@elsewhere.example'));
    expectRefusal(answer, 404, 'unknown_domain');
    // "At once", by what the server did rather than by a stopwatch: the
    // refusal spends no list budget (the same call again, within the
    // second, is refused the same way, not with a 429), and a long-poll for
    // the address is refused before it is held (a hold looks at the mailbox
    // first, and would only answer after its 25 s).
    expectRefusal(await call(server, listPath('someone@elsewhere.example')), 404, 'unknown_domain');
    expectRefusal(await call(server, waitPath({ address: 'someone@elsewhere.example', timeout: 25 })), 404, 'unknown_domain');
    expect(server.stats('someone@elsewhere.example')).toMatchObject({ list: 2, wait: 1, rateLimited: 0 });
    expect(looks()).toBe(0);
    expect(answer.json.message).toContain('one.test, two.test');
    expectRefusal(await call(server, messagePath('00000000000', 'someone@sub.one.test')), 404, 'unknown_domain');
    // every served domain works, whatever its case
    expect((await call(server, listPath('someone@TWO.test'))).status).toBe(200);
  });

  it('answers 400 invalid_request for a missing or repeated address', async () => {
    const server = await start();
    expectRefusal(await call(server, '/api/v1/mailbox'), 400, 'invalid_request');
    expectRefusal(await call(server, '/api/v1/mailbox?limit=5'), 400, 'invalid_request');
    expectRefusal(await call(server, '/api/v1/message/00000000000'), 400, 'invalid_request');
    expectRefusal(await call(server, '/api/v1/mailbox?address=a@mailroom.test&address=b@mailroom.test'), 400, 'invalid_request');
  });
});

describe('limit', () => {
  it('defaults to 25 and honours the bounds 1 and 100', async () => {
    const server = await start({ listPerSecond: Infinity });
    const address = freshAddress();
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, ignoreTLS: true, pool: true, maxConnections: 4 });
    await Promise.all(Array.from({ length: 101 }, (_, i) => transport.sendMail({ from: 'app@example.com', to: address, subject: `n${i}`, text: 'x' })));
    transport.close();
    const all = (await call(server, listPath(address, 100))).json.messages;
    expect(all).toHaveLength(100);
    const ids = all.map((m: { id: string }) => m.id);
    expect([...ids].sort().reverse()).toEqual(ids);
    expect((await call(server, listPath(address))).json.messages).toHaveLength(25);
    const [newest] = (await call(server, listPath(address, 1))).json.messages;
    expect(newest.id).toBe(ids[0]);
  });

  it('refuses every malformed limit with 400 invalid_request', async () => {
    const server = await start({ listPerSecond: Infinity });
    const address = freshAddress();
    for (const bad of ['0', '101', '-1', '1.5', 'abc', '', '1e2', ' 5', '0x10', '1000', 'Infinity', 'NaN']) {
      const answer = await call(server, listPath(address, bad));
      expectRefusal(answer, 400, 'invalid_request');
      expect(answer.json.message).toContain('limit');
    }
    expectRefusal(await call(server, `${listPath(address)}&limit=5&limit=6`), 400, 'invalid_request');
  });
});

describe('ids', () => {
  it('refuses malformed ids with 400 invalid_request on GET, raw and DELETE', async () => {
    const server = await start({ messagePerSecond: Infinity });
    const mailbox = freshAddress();
    for (const bad of ['abc', 'ABCDEFGHIJK', '000000000000', '0000000000', '0000000000-', '%00', '..%2F..%2Fetc%2Fpasswd', '%E0%A4%A', '00000000000%2F', '']) {
      for (const [method, suffix] of [
        ['GET', ''],
        ['GET', '/raw'],
        ['DELETE', ''],
      ] as const) {
        const answer = await call(server, `/api/v1/message/${bad}${suffix}?mailbox=${mailbox}`, { method });
        expect(answer.status, `${method} ${bad}${suffix}`).toBe(400);
        expectRefusal(answer, 400, 'invalid_request');
      }
    }
  });

  it('refuses ids that look like paths, byte for byte as sent', async () => {
    const server = await start({ messagePerSecond: Infinity });
    for (const path of [
      '/api/v1/message/../../etc/passwd?mailbox=a@mailroom.test',
      '/api/v1/message/..?mailbox=a@mailroom.test',
      '/api/v1/message/00000000000/../raw?mailbox=a@mailroom.test',
      '/api/v1/message/a/b/c?mailbox=a@mailroom.test',
      '/api/v1/message/00000000000/raw/extra?mailbox=a@mailroom.test',
      '/api/v1/message//?mailbox=a@mailroom.test',
      '/api/v1/message/%2e%2e%2f%2e%2e%2fetc?mailbox=a@mailroom.test',
    ]) {
      const answer = await rawHttp(server, `GET ${path} HTTP/1.1`);
      expect(answer.status, path).toBe(400);
      expect(answer.json.error).toBe('invalid_request');
    }
  });
});

describe('routes and methods', () => {
  it('answers unknown routes with 404 not_found in JSON', async () => {
    const server = await start();
    // `/` and `/api/v1/mailboxes` were here until the web UI made them routes (test/server/web-ui.test.ts).
    for (const path of [
      '/index.html',
      '/ui/other.js',
      '/api/v1',
      '/api/v1/',
      '/api/v1/mailboxes/extra',
      '/api/v2/mailbox?address=a@mailroom.test',
      '/api/v1/mailbox/extra',
      '/favicon.ico',
      '/_mailroom/faults',
    ]) {
      const answer = await call(server, path);
      expectRefusal(answer, 404, 'not_found');
    }
  });

  it('answers wrong methods with 405 and an Allow header', async () => {
    const server = await start();
    const address = freshAddress();
    const cases = [
      ['POST', listPath(address), 'GET, DELETE'],
      ['PUT', listPath(address), 'GET, DELETE'],
      ['PATCH', messagePath('00000000000', address), 'GET, DELETE'],
      ['POST', messagePath('00000000000', address), 'GET, DELETE'],
      ['DELETE', messagePath('00000000000', address, '/raw'), 'GET'],
      ['POST', '/healthz', 'GET'],
      ['OPTIONS', listPath(address), 'GET, DELETE'],
    ] as const;
    for (const [method, path, allow] of cases) {
      const answer = await call(server, path, { method });
      expectRefusal(answer, 405, 'method_not_allowed');
      expect(answer.headers.allow).toBe(allow);
    }
  });

  it('answers HEAD like GET without a body', async () => {
    const server = await start();
    const answer = await call(server, '/healthz', { method: 'HEAD' });
    expect(answer.status).toBe(200);
    expect(answer.body.length).toBe(0);
  });

  it('answers unparseable requests with a JSON 4xx, not a crash', async () => {
    const server = await start();
    const huge = await rawHttp(server, `GET /api/v1/mailbox?address=${'a'.repeat(20_000)}@mailroom.test HTTP/1.1`);
    expect(huge.status).toBe(431);
    expect(huge.json.error).toBe('invalid_request');
    const garbage = await rawHttp(server, 'THIS IS NOT HTTP');
    expect(garbage.status).toBe(400);
    expect(garbage.json.error).toBe('invalid_request');
    // and the server is still fine
    expect((await call(server, '/healthz')).status).toBe(200);
  });
});

describe('token', () => {
  it('requires Authorization: Bearer <token> on the API when started with a token', async () => {
    const server = await start({ token: 's3cret-token' });
    const address = freshAddress();
    expectRefusal(await call(server, listPath(address)), 401, 'unauthorized');
    expectRefusal(await call(server, listPath(address), { headers: { authorization: 'Bearer wrong' } }), 401, 'unauthorized');
    expectRefusal(await call(server, listPath(address), { headers: { authorization: 's3cret-token' } }), 401, 'unauthorized');
    expectRefusal(await call(server, messagePath('00000000000', address)), 401, 'unauthorized');
    expect((await call(server, listPath(address), { headers: { authorization: 'Bearer s3cret-token' } })).status).toBe(200);
    expect((await call(server, messagePath('00000000000', address), { headers: { authorization: 'bearer s3cret-token' } })).status).toBe(404);
    // readiness checks need no token
    expect((await call(server, '/healthz')).status).toBe(200);
  });
});
