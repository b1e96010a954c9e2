// startServer's options, its answer, ids across restarts, and close().
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startServer } from '../../src/server/index.js';
import { resolveServerOptions } from '../../src/server/server-options.js';
import { freePort } from '../support/free-port.js';
import { call, fakeClock, freshAddress, listPath, sendMail, silentLogger, SmtpDialogue, start } from './helpers.js';

function closedWithin(socket: Socket, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

describe('options', () => {
  it('defaults every option in one place', () => {
    const options = resolveServerOptions();
    expect(options).toMatchObject({
      host: '127.0.0.1',
      smtpPort: 2525,
      httpPort: 8025,
      domains: ['mailroom.test'],
      retention: 3_600_000,
      maxMessages: 100_000,
      maxMessageBytes: 25 * 1024 * 1024,
      listPerSecond: 1,
      messagePerSecond: 10,
      token: undefined,
      faultInjection: false,
    });
    expect(Object.isFrozen(options)).toBe(true);
    expect(resolveServerOptions({ domains: ['A.test', 'a.test', 'b.test'] }).domains).toEqual(['a.test', 'b.test']);
  });

  it.each([
    [{ smtpPort: -1 }, /Expected `smtpPort` to be an integer from 0 to 65535 \(0 = any free port\), got -1/],
    [{ httpPort: 70000 }, /`httpPort` to be an integer from 0 to 65535/],
    [{ smtpPort: '25' }, /`smtpPort`.*got "25"/],
    [{ smtpPort: 3000, httpPort: 3000 }, /`httpPort` to be a different port from smtpPort \(3000\)/],
    [{ domains: [] }, /`domains` to be a non-empty array of domain names, got \[\]/],
    [{ domains: ['not a domain'] }, /`domains` to be an array of domain names/],
    [{ domains: 'mailroom.test' }, /`domains` to be a non-empty array/],
    [{ retention: 0 }, /`retention` to be a positive number of milliseconds, got 0/],
    [{ retention: '1h' }, /`retention` to be a positive number of milliseconds, got "1h"/],
    [{ maxMessages: 0 }, /`maxMessages` to be a positive integer \(or Infinity for no cap\), got 0/],
    [{ maxMessageBytes: 10 }, /`maxMessageBytes`/],
    [{ listPerSecond: 0 }, /`listPerSecond` to be a positive number of calls per second/],
    [{ messagePerSecond: Number.NaN }, /`messagePerSecond`/],
    [{ token: '' }, /`token` to be a non-empty string/],
    [{ token: 'has space' }, /`token`/],
    [{ host: 'not a host!' }, /`host`/],
    [{ clock: {} }, /`clock` to be an object with a now\(\) method/],
    [{ logger: { info() {} } }, /`logger` to be an object with info, warn and error methods/],
    [{ smtpport: 2525 }, /Unknown option `smtpport`/],
  ])('refuses %j with a clear TypeError', async (options, message) => {
    await expect(startServer(options as never)).rejects.toThrow(TypeError);
    await expect(startServer(options as never)).rejects.toThrow(message);
  });
});

describe('startServer', () => {
  it('resolves to the bound ports, the API URL and the domains', async () => {
    const server = await start({ domains: ['Example.TEST'] });
    expect(server.smtpPort).toBeGreaterThan(0);
    expect(server.httpPort).toBeGreaterThan(0);
    expect(server.apiURL).toBe(`http://127.0.0.1:${server.httpPort}`);
    expect(server.domains).toEqual(['example.test']);
    expect((await call(server, '/healthz')).json).toMatchObject({ ok: true });
  });

  it('rejects with a clear error when a port is taken, and leaves nothing listening', async () => {
    const taken = await start();
    const httpPort = await freePort();
    const failure = startServer({ smtpPort: taken.smtpPort, httpPort, logger: silentLogger() });
    await expect(failure).rejects.toThrow(`mailroom: cannot listen for SMTP on 127.0.0.1:${taken.smtpPort}: the port is already in use (EADDRINUSE)`);
    await expect(failure).rejects.toMatchObject({ code: 'EADDRINUSE' });
    const again = await startServer({ smtpPort: 0, httpPort, logger: silentLogger() });
    expect(again.httpPort).toBe(httpPort);
    await again.close();

    const smtpPort = await freePort();
    await expect(startServer({ smtpPort, httpPort: taken.httpPort, logger: silentLogger() })).rejects.toThrow(/cannot listen for HTTP .* already in use/);
    // the SMTP listener that did open was closed again
    const reuse = await startServer({ smtpPort, httpPort: 0, logger: silentLogger() });
    await reuse.close();
  });

  it('issues ids that sort by arrival, also across a restart', async () => {
    const clock = fakeClock();
    const first = await start({ clock, listPerSecond: Infinity });
    const address = freshAddress();
    for (const subject of ['one', 'two', 'three']) await sendMail(first, { to: address, subject, text: 'x' });
    const before = (await call(first, listPath(address))).json.messages.map((m: { id: string }) => m.id);
    expect([...before].sort().reverse()).toEqual(before);
    await first.close();
    clock.advance(1);
    const second = await start({ clock });
    await sendMail(second, { to: address, subject: 'after restart', text: 'x' });
    const [after] = (await call(second, listPath(address))).json.messages;
    expect(after.id > before[0]).toBe(true);
  });
});

describe('close()', () => {
  it('ends both listeners and every open socket, and is idempotent', async () => {
    const server = await startServer({ smtpPort: 0, httpPort: 0, logger: silentLogger() });
    const { dialogue } = await SmtpDialogue.open(server.smtpPort);
    await dialogue.send('EHLO idle.example');
    const http = connect(server.httpPort, '127.0.0.1');
    await new Promise((resolve) => http.once('connect', resolve));
    http.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'); // keep-alive: the socket stays open
    await new Promise((resolve) => http.once('data', resolve));

    const started = performance.now();
    await Promise.all([server.close(), server.close()]);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(await closedWithin(dialogue.socket, 2000)).toBe(true);
    expect(await closedWithin(http, 2000)).toBe(true);
    for (const port of [server.smtpPort, server.httpPort]) {
      const refused = await new Promise<string>((resolve) => {
        const probe = connect(port, '127.0.0.1');
        probe.once('connect', () => {
          probe.destroy();
          resolve('connected');
        });
        probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      });
      expect(refused).toBe('ECONNREFUSED');
    }
    await server.close();
  });
});
