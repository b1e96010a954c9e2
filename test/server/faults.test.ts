// The fault switch and request accounting the wait-engine tests rely on.
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { call, fakeClock, freshAddress, listPath, messagePath, sendMail, silentLogger, start } from './helpers.js';

describe('fault switch', () => {
  it('rate_limit answers 429 with the given Retry-After, without spending the budget', async () => {
    const clock = fakeClock();
    const server = await start({ clock });
    const address = freshAddress();
    server.faults.inject({ address, route: 'list', times: 2, fault: { kind: 'rate_limit', retryAfter: 2 } });
    for (let i = 0; i < 2; i++) {
      const refused = await call(server, listPath(address));
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('2');
      expect(refused.json.error).toBe('rate_limited');
    }
    // the budget was not spent by the injected refusals
    expect((await call(server, listPath(address))).status).toBe(200);
    expect(server.stats(address)).toEqual({ list: 3, wait: 0, message: 0, raw: 0, deleteMessage: 0, deleteMailbox: 0, rateLimited: 2, faulted: 2 });
  });

  it('status answers the chosen 5xx with its slug, then the normal answer', async () => {
    const server = await start({ listPerSecond: Infinity });
    const address = freshAddress();
    server.faults.inject({ address, times: 1, fault: { kind: 'status', status: 500 } });
    server.faults.inject({ address, times: 2, fault: { kind: 'status', status: 503 } });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await call(server, listPath(address)));
    expect(answers.map((a) => a.status)).toEqual([500, 503, 503, 200]);
    expect(answers.slice(0, 3).map((a) => a.json.error)).toEqual(['internal_error', 'unavailable', 'unavailable']);
  });

  it('matches on route: a message fault leaves list calls alone', async () => {
    const server = await start();
    const address = freshAddress();
    server.faults.inject({ address, route: 'message', times: 3, fault: { kind: 'status', status: 502 } });
    expect((await call(server, listPath(address))).status).toBe(200);
    expect((await call(server, messagePath('00000000000', address))).status).toBe(502);
    expect((await call(server, messagePath('00000000000', address, '/raw'))).status).toBe(502);
    expect((await call(server, messagePath('00000000000', address), { method: 'DELETE' })).status).toBe(502);
    expect((await call(server, messagePath('00000000000', address), { method: 'DELETE' })).status).toBe(200);
    // a fault for one address does not touch another
    server.faults.inject({ address, fault: { kind: 'status', status: 504 } });
    expect((await call(server, listPath(freshAddress()))).status).toBe(200);
    server.faults.clear();
    expect((await call(server, messagePath('00000000000', address))).status).toBe(404);
  });

  it('slow sends the normal answer after the delay; a client that gave up breaks nothing', async () => {
    const logger = silentLogger();
    const server = await start({ listPerSecond: Infinity, logger });
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'Slow', text: 'x' });
    server.faults.inject({ address, route: 'list', fault: { kind: 'slow', delayMs: 300 } });
    const started = performance.now();
    const answer = await call(server, listPath(address));
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(answer.status).toBe(200);
    expect(answer.json.messages[0].subject).toBe('Slow');

    server.faults.inject({ address, route: 'list', times: 2, fault: { kind: 'slow', delayMs: 500 } });
    // The client gives up once the server has the request (a fixed 50 ms
    // gave up before it got there on a loaded machine, and the server
    // never saw that request).
    const giveUp = new AbortController();
    const abandoned = request(`${server.apiURL}${listPath(address)}`, { signal: giveUp.signal });
    await expect.poll(() => server.stats(address).list, { timeout: 30_000 }).toBe(2);
    giveUp.abort();
    await expect(abandoned).rejects.toThrow();
    // The same delay, armed after the abandoned one: by the time this answer
    // comes, the abandoned answer's moment has passed too (timers of equal
    // delay fire in the order they were set). It comes whole, on time, and
    // the server logged nothing about the answer it could not send.
    const after = await call(server, listPath(address));
    expect(after.status).toBe(200);
    expect(after.json.messages[0].subject).toBe('Slow');
    expect(logger.lines).toEqual([]);
    expect(server.stats(address)).toMatchObject({ list: 3, faulted: 3 });
    expect((await call(server, listPath(address))).status).toBe(200);
  });

  it('reset processes the request, sends part of the answer, then destroys the connection', async () => {
    const server = await start();
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'Reset me', text: 'x' });
    const id = (await call(server, listPath(address))).json.messages[0].id;
    server.faults.inject({ address, route: 'message', fault: { kind: 'reset' } });
    const response = await request(`${server.apiURL}${messagePath(id, address)}`, { method: 'DELETE' });
    expect(response.statusCode).toBe(200);
    await expect(response.body.text()).rejects.toThrow();
    // the delete was done even though the answer was lost
    expect((await call(server, messagePath(id, address), { method: 'DELETE' })).json).toEqual({ deleted: false });
    expect(server.stats(address)).toMatchObject({ list: 1, deleteMessage: 2, faulted: 1 });
  });

  it('malformed_json, truncated and wrong_type answer whole, framed HTTP whose body is not the contract', async () => {
    const server = await start({ listPerSecond: Infinity });
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'Spoiled', text: 'x' });
    const clean = await call(server, listPath(address));
    server.faults.inject({ address, route: 'list', fault: { kind: 'malformed_json' } });
    server.faults.inject({ address, route: 'list', fault: { kind: 'truncated' } });
    server.faults.inject({ address, route: 'list', fault: { kind: 'wrong_type' } });
    const [malformed, truncated, wrongType, after] = [
      await call(server, listPath(address)),
      await call(server, listPath(address)),
      await call(server, listPath(address)),
      await call(server, listPath(address)),
    ];

    expect(malformed.status).toBe(200);
    expect(malformed.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(() => JSON.parse(malformed.text) as unknown).toThrow(SyntaxError);
    expect(malformed.text).toBe(clean.text.replace(/\}$/, ',}'));

    expect(truncated.status).toBe(200);
    expect(truncated.text).toBe(clean.text.slice(0, Math.floor(clean.body.length / 2)));
    expect(truncated.headers['content-length']).toBe(String(truncated.body.length));
    expect(() => JSON.parse(truncated.text) as unknown).toThrow(SyntaxError);

    expect(wrongType.status).toBe(200);
    expect(wrongType.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(wrongType.text).toMatch(/^<!doctype html>/);

    // each took one request, and the connection still answers the next one
    expect(after.json.messages[0].subject).toBe('Spoiled');
    expect(server.stats(address)).toMatchObject({ list: 5, faulted: 3 });
  });

  it('rejects malformed injections with a clear TypeError', async () => {
    const server = await start();
    expect(() => server.faults.inject({ address: 'nope', fault: { kind: 'reset' } })).toThrow(/`address` to be a well-formed email address, got "nope"/);
    expect(() => server.faults.inject({ address: 'a@mailroom.test', fault: { kind: 'status', status: 404 as 500 } })).toThrow(
      /`fault.status` to be 500, 502, 503 or 504, got 404/,
    );
    expect(() => server.faults.inject({ address: 'a@mailroom.test', fault: { kind: 'explode' } as never })).toThrow(
      /`fault.kind` to be "rate_limit", "status", "slow", "reset", "malformed_json", "truncated" or "wrong_type", got "explode"/,
    );
    expect(() => server.faults.inject({ address: 'a@mailroom.test', times: 0, fault: { kind: 'reset' } })).toThrow(/`times` to be a positive integer, got 0/);
  });
});

describe('fault switch over HTTP', () => {
  it('is served only with faultInjection: true', async () => {
    const plain = await start();
    expect((await call(plain, '/_mailroom/faults', { method: 'POST', body: '{}' })).status).toBe(404);
    expect((await call(plain, '/_mailroom/stats?address=a@mailroom.test')).status).toBe(404);

    const server = await start({ faultInjection: true });
    const address = freshAddress();
    const injected = await call(server, '/_mailroom/faults', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address, route: 'list', times: 1, fault: { kind: 'rate_limit', retryAfter: 3 } }),
    });
    expect(injected.status).toBe(200);
    const refused = await call(server, listPath(address));
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('3');
    const stats = await call(server, `/_mailroom/stats?address=${encodeURIComponent(address)}`);
    expect(stats.json).toMatchObject({ list: 1, rateLimited: 1, faulted: 1 });

    await call(server, '/_mailroom/faults', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address, fault: { kind: 'status', status: 500 } }),
    });
    expect((await call(server, '/_mailroom/faults', { method: 'DELETE' })).json).toEqual({ cleared: 1 });
    expect((await call(server, listPath(address))).status).toBe(200);

    const bad = await call(server, '/_mailroom/faults', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address, fault: { kind: 'explode' } }),
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe('invalid_request');
    expect(bad.json.message).toContain('fault.kind');
  });
});
