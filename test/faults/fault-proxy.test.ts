// The fault proxy does what each fault says, seen from both ends: what the
// client got, and what reached the server (its request counts).
import { connect, createServer } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { send, startTestServer } from '../support/server.js';
import { FaultProxy } from './fault-proxy.js';

let server: MailroomServer;
let proxy: FaultProxy;
let agent: Agent;
let unique = 0;

beforeAll(async () => {
  server = await startTestServer({ listPerSecond: Infinity });
});
afterAll(async () => {
  await server?.close();
});
afterEach(async () => {
  await agent?.close();
  await proxy?.close();
});

async function fresh(): Promise<string> {
  proxy = await FaultProxy.start(server.httpPort);
  agent = new Agent();
  return `proxy-${process.pid}-${++unique}@${server.domains[0]}`;
}

type Got = { status: number; body: string } | { error: string };

async function list(address: string, timeoutMs = 2_000): Promise<Got> {
  try {
    const response = await request(`${proxy.apiURL}/api/v1/mailbox?address=${encodeURIComponent(address)}`, {
      dispatcher: agent,
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: response.statusCode, body: await response.body.text() };
  } catch (error) {
    return { error: (error as Error).name };
  }
}

describe('the fault proxy', () => {
  it('passes requests and answers through untouched', async () => {
    const address = await fresh();
    await send(server, address, { subject: 'Through' });
    const first = await list(address);
    const second = await list(address);
    expect(first).toMatchObject({ status: 200 });
    expect(JSON.parse((first as { body: string }).body)).toMatchObject({ messages: [{ subject: 'Through' }] });
    expect(second).toEqual(first);
    expect(proxy.counts).toMatchObject({ requests: 2, faulted: 0, byRoute: { list: 2 } });
  });

  it('drop: the client loses the request and the server never sees it', async () => {
    const address = await fresh();
    proxy.arm({ route: 'list', times: 1, fault: { kind: 'drop' } });
    expect(await list(address)).toHaveProperty('error');
    expect(server.stats(address).list).toBe(0);
    expect(await list(address)).toMatchObject({ status: 200 });
    expect(proxy.counts).toMatchObject({ requests: 2, faulted: 1 });
  });

  it('reset after the request: the server does the work, the client gets no answer', async () => {
    const address = await fresh();
    proxy.arm({ route: 'list', times: 1, fault: { kind: 'reset-after-request' } });
    expect(await list(address)).toHaveProperty('error');
    await expect.poll(() => server.stats(address).list).toBe(1);
  });

  it('reset after the response: the answer arrives whole, then the connection is reset', async () => {
    const address = await fresh();
    // The RST waits until this socket has read the whole answer (see `read`): no sleep in between.
    let readWhole!: () => void;
    const read = new Promise<void>((resolve) => (readWhole = resolve));
    proxy.arm({ route: 'list', times: 1, fault: { kind: 'reset-after-response', read } });
    const socket = connect(proxy.port, '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      received += chunk;
      const [head = '', body] = received.split('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(head)?.[1];
      if (body !== undefined && length !== undefined && body.length >= Number(length)) readWhole();
    });
    const closed = new Promise<string | undefined>((resolve) => {
      socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code));
      socket.on('close', () => resolve(undefined));
    });
    socket.write(`GET /api/v1/mailbox?address=${encodeURIComponent(address)} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n`);
    expect(await closed).toBe('ECONNRESET');
    const [head = '', body = ''] = received.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(body.length).toBe(Number(/content-length: (\d+)/i.exec(head)?.[1]));
    expect(server.stats(address).list).toBe(1);
  });

  it('stall: read and never answered, until the client gives up; the server never sees it', async () => {
    const address = await fresh();
    proxy.arm({ route: 'list', times: 1, fault: { kind: 'stall' } });
    expect(await list(address, 300)).toEqual({ error: 'TimeoutError' });
    expect(server.stats(address).list).toBe(0);
    expect(await list(address)).toMatchObject({ status: 200 });
  });

  it('slow: the whole answer, in slices of the given size', async () => {
    const address = await fresh();
    await send(server, address, { subject: 'Slowly' });
    const whole = await list(address);
    proxy.arm({ route: 'list', times: 1, fault: { kind: 'slow', bytes: 16, everyMs: 5 } });
    let chunks = 0;
    const response = await request(`${proxy.apiURL}/api/v1/mailbox?address=${encodeURIComponent(address)}`, { dispatcher: agent });
    let body = '';
    for await (const chunk of response.body) {
      chunks++;
      body += String(chunk);
    }
    expect(body).toBe((whole as { body: string }).body);
    // Slices written 5 ms apart reach the client as separate reads.
    expect(chunks).toBeGreaterThan(3);
  });

  it('cut and restore: every connection reset while cut, no request through; served again on the same port after', async () => {
    const address = await fresh();
    expect(await list(address)).toMatchObject({ status: 200 });
    const port = proxy.port;
    const listsBefore = proxy.counts.byRoute.list;
    proxy.cut();
    expect(await list(address)).toHaveProperty('error');
    expect(await list(address)).toHaveProperty('error');
    expect(proxy.counts.byRoute.list).toBe(listsBefore);
    expect(proxy.counts.cutConnections).toBeGreaterThanOrEqual(2);
    proxy.restore();
    expect(proxy.port).toBe(port);
    expect(await list(address)).toMatchObject({ status: 200 });
    expect(proxy.counts.cuts).toBe(1);
  });

  it('a cut keeps its port: a listen on it from elsewhere gets EADDRINUSE while the cut lasts', async () => {
    await fresh();
    const port = proxy.port;
    proxy.cut();
    // Another process's pick is a listen on the port: it must fail while the cut lasts.
    const other = createServer();
    const taken = await new Promise<string>((resolve) => {
      other.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? String(error)));
      other.listen(port, '127.0.0.1', () => resolve('listening'));
    });
    other.close();
    expect(taken).toBe('EADDRINUSE');
    proxy.restore();
    expect(proxy.port).toBe(port);
  });

  it('dropConnections: closes idle connections and the next new ones on accept', async () => {
    const address = await fresh();
    expect(await list(address)).toMatchObject({ status: 200 });
    proxy.dropConnections(1);
    // Idle connection closed (a request may race it) and the next new one dropped: at most two failures.
    const answers = [await list(address), await list(address), await list(address)];
    expect(answers.at(-1)).toMatchObject({ status: 200 });
    expect(answers.filter((a) => 'error' in a).length).toBeGreaterThanOrEqual(1);
    expect(proxy.counts.droppedConnections).toBe(1);
  });

  it('takes rules in order, by route, for as many requests as armed', async () => {
    const address = await fresh();
    proxy.arm({ route: 'message', times: 1, fault: { kind: 'drop' } });
    proxy.arm({ route: 'check', times: 2, fault: { kind: 'drop' } });
    expect(await list(address)).toHaveProperty('error');
    expect(await list(address)).toHaveProperty('error');
    expect(await list(address)).toMatchObject({ status: 200 });
    // The message rule is still armed: list calls never matched it.
    expect(proxy.counts.faulted).toBe(2);
    proxy.clear();
  });
});
