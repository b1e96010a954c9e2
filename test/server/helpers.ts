// Shared helpers for the server tests: real sockets everywhere (nodemailer and
// a raw SMTP dialogue for intake, undici for HTTP); only the clock is faked.
import { connect, type Socket } from 'node:net';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { request } from 'undici';
import { afterAll, afterEach, inject } from 'vitest';
import { Budget, type RequestBudget } from '../../src/server/budgets/budget.js';
import { startServer, type MailroomServer, type ServerOptions } from '../../src/server/index.js';
import type { WallClock } from '../../src/server/base/clock.js';
import type { LabStore } from '../../src/server/rules/lab-store.js';
import { MemoryLabStore } from '../../src/server/rules/memory-lab.js';
import type { MailStore } from '../../src/server/store/mail-store.js';
import type { StoredMessage } from '../../src/server/base/stored-message.js';
import { MessageStore } from '../../src/server/store/message-store.js';
import { RedisMailStore } from '../../src/server/redis/redis-store.js';
import { testServerLogger } from '../support/server-log.js';

const running: MailroomServer[] = [];
const stores: MailStore[] = [];

afterEach(async () => {
  await Promise.all([...running.splice(0).map((server) => server.close()), ...stores.splice(0).map((store) => store.close())]);
});

let prefixes = 0;
/**
 * The store the server contract suite runs against: the memory store, or in
 * the `redis` Vitest project (vitest.config.ts) the run's redis-server under
 * a key prefix of this server's own, so no two servers share mail unless a
 * test passes the same `store` to both.
 */
export function testStore(): string | undefined {
  const url = inject('redisURL');
  return url ? `${url}?prefix=t-${process.pid}-${++prefixes}-${Math.random().toString(36).slice(2, 8)}` : undefined;
}

export interface TestStoreOptions {
  readonly clock: WallClock;
  readonly retention: number;
  readonly maxMessages: number;
  readonly onEvict?: (message: StoredMessage) => void;
  readonly onListenerError?: (error: unknown) => void;
  readonly indexSearchWindow?: number;
}

/**
 * The suite's store on its own, without a server (the memory store, or in the
 * `redis` project a Redis store under a fresh prefix), with a budget maker of
 * the same kind; closed after the test.
 */
export async function openTestStore(options: TestStoreOptions): Promise<{ store: MailStore; budget(perSecond: number): RequestBudget }> {
  const url = testStore();
  if (!url) return { store: new MessageStore(options), budget: (perSecond) => new Budget(perSecond, options.clock) };
  const prefix = new URL(url).searchParams.get('prefix')!;
  const store = await RedisMailStore.open({ ...options, url: url.replace(/\?.*$/, ''), prefix, logger: silentLogger() });
  stores.push(store);
  let budgets = 0;
  return { store, budget: (perSecond) => store.budget(`b${++budgets}`, perSecond) };
}

export interface TestLabOptions {
  readonly clock: WallClock;
  readonly retention: number;
  readonly maxAttemptsPerAddress?: number;
  readonly maxAttempts?: number;
}

/**
 * The deferral lab's state on the suite's store, without a server: the
 * memory lab, or in the `redis` project a Redis lab under a fresh prefix
 * (its store closed after the test). `attemptsHeld` counts the whole log.
 */
export async function openTestLab(
  options: TestLabOptions,
): Promise<{ lab: LabStore; attemptsHeld: () => Promise<number>; another: (() => Promise<LabStore>) | undefined }> {
  const url = testStore();
  if (!url) {
    const lab = new MemoryLabStore(options);
    return { lab, attemptsHeld: () => Promise.resolve(lab.loggedAttempts), another: undefined };
  }
  const prefix = new URL(url).searchParams.get('prefix')!;
  const open = async () => {
    const store = await RedisMailStore.open({ ...options, maxMessages: Infinity, url: url.replace(/\?.*$/, ''), prefix, logger: silentLogger() });
    stores.push(store);
    return store.lab({ maxAttemptsPerAddress: options.maxAttemptsPerAddress, maxAttempts: options.maxAttempts });
  };
  const lab = await open();
  // `another`: the same lab through a connection of its own, as another server sees it
  return { lab, attemptsHeld: () => lab.loggedAttempts(), another: open };
}

/** A server on free ports with the suite's store (`testStore`), closed after the test. */
export async function start(options: ServerOptions = {}): Promise<MailroomServer> {
  const server = await startServer({ smtpPort: 0, httpPort: 0, logger: testServerLogger('server test'), store: testStore(), ...options });
  running.push(server);
  return server;
}

/**
 * One server for the tests of a file that need nothing of their own from it
 * (each works at fresh addresses), started at the first call and closed
 * after the file. What it saves: each server with webhooks loads its own
 * delivery thread (src/server/webhooks/threaded-sender.ts), which from
 * TypeScript source costs most of a second of CPU; a file of fifty webhook
 * tests paid that fifty times in each store's project.
 */
export function sharedServer(options: ServerOptions = {}): () => Promise<MailroomServer> {
  let server: Promise<MailroomServer> | undefined;
  afterAll(async () => {
    await (await server?.catch(() => undefined))?.close();
  });
  return () => (server ??= startServer({ smtpPort: 0, httpPort: 0, logger: testServerLogger('server test'), store: testStore(), ...options }));
}

export function silentLogger() {
  const lines: { level: string; message: string }[] = [];
  return {
    lines,
    info: (message: string) => void lines.push({ level: 'info', message }),
    warn: (message: string) => void lines.push({ level: 'warn', message }),
    error: (message: string) => void lines.push({ level: 'error', message }),
  };
}

export interface FakeClock {
  now(): number;
  advance(ms: number): void;
  set(ms: number): void;
}

export function fakeClock(start = Date.UTC(2030, 0, 1)): FakeClock {
  let now = start;
  return { now: () => now, advance: (ms) => void (now += ms), set: (ms) => void (now = ms) };
}

let unique = 0;
/** A fresh address at the default domain (distinct per call, so budgets never collide). */
export function freshAddress(prefix = 'user', domain = 'mailroom.test'): string {
  unique++;
  return `${prefix}-${process.pid}-${unique}-${Math.random().toString(36).slice(2, 8)}@${domain}`;
}

export type Mail = SendMailOptions;

export async function sendMail(server: MailroomServer, mail: Mail): Promise<string> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true });
  try {
    const info = await transport.sendMail({ from: 'App <app@example.com>', ...mail });
    return info.response;
  } finally {
    transport.close();
  }
}

export interface ApiAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: Buffer;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export async function call(
  server: MailroomServer,
  path: string,
  init: { method?: 'GET' | 'DELETE' | 'POST' | 'PUT' | 'PATCH' | 'HEAD' | 'OPTIONS'; headers?: Record<string, string>; body?: string } = {},
): Promise<ApiAnswer> {
  const response = await request(`${server.apiURL}${path}`, { method: init.method ?? 'GET', headers: init.headers, body: init.body });
  const body = Buffer.from(await response.body.arrayBuffer());
  const text = body.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, headers: response.headers, text, body, json };
}

export function listPath(address: string, limit?: number | string): string {
  const params = new URLSearchParams({ address });
  if (limit !== undefined) params.set('limit', String(limit));
  return `/api/v1/mailbox?${params}`;
}

export function messagePath(id: string, mailbox: string, suffix = ''): string {
  return `/api/v1/message/${id}${suffix}?${new URLSearchParams({ mailbox })}`;
}

/** A raw SMTP conversation over a plain socket: send a line, get the whole reply. */
export class SmtpDialogue {
  readonly socket: Socket;
  #buffer = '';
  #waiters: Array<() => void> = [];
  closed = false;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      this.#buffer += chunk;
      this.#wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.#wake();
    });
    socket.on('error', () => {});
  }

  static async open(port: number): Promise<{ dialogue: SmtpDialogue; greeting: string }> {
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const dialogue = new SmtpDialogue(socket);
    return { dialogue, greeting: await dialogue.reply() };
  }

  #wake(): void {
    for (const waiter of this.#waiters.splice(0)) waiter();
  }

  /** The next complete reply (all lines up to the one with a space after the code). */
  async reply(): Promise<string> {
    for (;;) {
      const match = /^(?:\d{3}-[^\r\n]*\r\n)*\d{3}(?: [^\r\n]*)?\r\n/.exec(this.#buffer);
      if (match) {
        this.#buffer = this.#buffer.slice(match[0].length);
        return match[0].trimEnd();
      }
      if (this.closed) throw new Error(`SMTP connection closed; unparsed: ${JSON.stringify(this.#buffer)}`);
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  async send(line: string | Buffer): Promise<string> {
    this.write(line);
    return this.reply();
  }

  /** Writes without waiting for a reply (for DATA bodies). Lines get CRLF when a string lacks it. */
  write(data: string | Buffer): void {
    this.socket.write(typeof data === 'string' && !data.endsWith('\r\n') ? `${data}\r\n` : data);
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Sends one message through a raw dialogue and returns the reply to the final dot. */
export async function sendRaw(port: number, from: string, to: readonly string[], source: string | Buffer): Promise<string> {
  const { dialogue } = await SmtpDialogue.open(port);
  try {
    await dialogue.send('EHLO test.example');
    await dialogue.send(`MAIL FROM:<${from}>`);
    for (const rcpt of to) {
      const reply = await dialogue.send(`RCPT TO:<${rcpt}>`);
      if (!reply.startsWith('250')) throw new Error(`RCPT ${rcpt} refused: ${reply}`);
    }
    const go = await dialogue.send('DATA');
    if (!go.startsWith('354')) throw new Error(`DATA refused: ${go}`);
    const body = typeof source === 'string' ? Buffer.from(source, 'latin1') : source;
    dialogue.write(Buffer.concat([dotStuff(body), Buffer.from('\r\n.\r\n')]));
    const done = await dialogue.reply();
    await dialogue.send('QUIT').catch(() => '');
    return done;
  } finally {
    dialogue.close();
  }
}

/** Escapes lines that start with a dot, as SMTP requires, and ends without a trailing CRLF duplication. */
export function dotStuff(body: Buffer): Buffer {
  const text = body
    .toString('latin1')
    .replace(/\r?\n/g, '\r\n')
    .replace(/(^|\r\n)\./g, '$1..');
  return Buffer.from(text.endsWith('\r\n') ? text.slice(0, -2) : text, 'latin1');
}
