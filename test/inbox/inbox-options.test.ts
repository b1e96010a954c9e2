import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { MailroomClient, normalizeApiURL, parseRetryAfter } from '../../src/client/client.js';
import { createHandledStore, openHandledStore } from '../../src/inbox/handled.js';
import { DEFAULT_TIMEOUT_MS, resolveConnection, resolveInboxOptions } from '../../src/inbox/inbox-options.js';
import { DEFAULT_API_URL, DEFAULT_DOMAIN } from '../../src/contract/defaults.js';

describe('resolveConnection', () => {
  it('takes options first, then MAILROOM_* variables, then the embedded server defaults', () => {
    expect(resolveConnection({}, {})).toEqual({
      backend: 'mailroom',
      apiURL: 'http://127.0.0.1:8025',
      credentials: undefined,
      domain: 'mailroom.test',
      token: undefined,
      requestTimeout: 5000,
    });
    expect(DEFAULT_API_URL).toBe('http://127.0.0.1:8025');
    expect(DEFAULT_DOMAIN).toBe('mailroom.test');
    const env = { MAILROOM_API_URL: 'https://mail.example/api/v1/', MAILROOM_DOMAIN: 'Inbox.Example', MAILROOM_TOKEN: 's3cret' };
    expect(resolveConnection({}, env)).toEqual({
      backend: 'mailroom',
      apiURL: 'https://mail.example',
      credentials: undefined,
      domain: 'inbox.example',
      token: 's3cret',
      requestTimeout: 5000,
    });
    expect(resolveConnection({ apiURL: 'http://localhost:9/', domain: 'x.test', token: 't' }, env)).toMatchObject({
      apiURL: 'http://localhost:9',
      domain: 'x.test',
      token: 't',
    });
    expect(resolveConnection({}, { MAILROOM_API_URL: '  ', MAILROOM_TOKEN: '' })).toMatchObject({ apiURL: DEFAULT_API_URL, token: undefined });
  });

  it('refuses bad values with a message that names them', () => {
    expect(() => resolveConnection({ apiURL: 'ftp://x' }, {})).toThrow('Expected `apiURL` to be an http(s) URL like "http://127.0.0.1:8025", got "ftp://x"');
    expect(() => resolveConnection({}, { MAILROOM_API_URL: 'not a url' })).toThrow(TypeError);
    expect(() => resolveConnection({ domain: 'bad domain' }, {})).toThrow('Expected `domain` to be a host name like "mailroom.test", got "bad domain"');
    expect(() => resolveConnection({ requestTimeout: 0 }, {})).toThrow('Expected `requestTimeout` to be a positive number of milliseconds, got 0');
  });
});

describe('resolveInboxOptions', () => {
  it('defaults the budget to 30 s and freezes the result', () => {
    const resolved = resolveInboxOptions({}, {});
    expect(resolved.timeout).toBe(DEFAULT_TIMEOUT_MS);
    expect(DEFAULT_TIMEOUT_MS).toBe(30_000);
    expect(Object.isFrozen(resolved)).toBe(true);
  });

  it('names bad inbox options', () => {
    expect(() => resolveInboxOptions({ timeout: -1 }, {})).toThrow('Expected `timeout` to be a non-negative number of milliseconds, got -1');
    expect(() => resolveInboxOptions({ address: 'nope' }, {})).toThrow(/Expected `address`/);
    expect(() => resolveInboxOptions({ watermark: 3 }, {})).toThrow(/Expected `watermark`/);
    expect(() => resolveInboxOptions({ client: {} }, {})).toThrow('Expected `client` to be a MailroomClient');
    expect(() => resolveInboxOptions({ handled: {} }, {})).toThrow(/Expected `handled`/);
  });

  it('takes the URL and request timeout of a shared client', () => {
    const client = new MailroomClient({ apiURL: 'http://127.0.0.1:9999', requestTimeout: 1234 });
    expect(resolveInboxOptions({ client }, {})).toMatchObject({ apiURL: 'http://127.0.0.1:9999', requestTimeout: 1234 });
  });
});

describe('client helpers', () => {
  it('normalises the API URL with or without /api/v1', () => {
    expect(normalizeApiURL('http://127.0.0.1:8025')).toBe('http://127.0.0.1:8025');
    expect(normalizeApiURL('http://127.0.0.1:8025/api/v1')).toBe('http://127.0.0.1:8025');
    expect(normalizeApiURL(new URL('https://h.example/mail/api/v1/'))).toBe('https://h.example/mail');
  });

  it('reads Retry-After as whole seconds (or a date), and the floor when it is missing', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(undefined)).toBe(1000);
    expect(parseRetryAfter('garbage')).toBe(1000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 7_000)).toBe(3000);
  });
});

describe('handled stores', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('remembers ids per address in memory', () => {
    const store = createHandledStore();
    store.add('A@mailroom.test', 'id1');
    expect(store.has('a@mailroom.test', 'id1')).toBe(true);
    expect(store.has('b@mailroom.test', 'id1')).toBe(false);
  });

  it('survives a restart, and sees lines another process appended', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-handled-'));
    dirs.push(dir);
    const path = join(dir, 'nested', 'handled.jsonl');
    const first = openHandledStore(path);
    first.add('a@mailroom.test', 'id1');
    first.add('a@mailroom.test', 'id1');
    expect(readFileSync(path, 'utf8')).toBe('["a@mailroom.test","id1"]\n');
    // A restart: a new store on the same file knows what the old one handled.
    const restarted = openHandledStore(path);
    expect(restarted.has('a@mailroom.test', 'id1')).toBe(true);

    // Another process (a real one) sees id1 and appends id2; the stores open
    // here pick that up on their next lookup.
    const module = fileURLToPath(new URL('../../src/inbox/handled.ts', import.meta.url));
    const child = [
      `const { openHandledStore } = await import(${JSON.stringify(module)});`,
      `const store = openHandledStore(${JSON.stringify(path)});`,
      `const sawId1 = store.has('a@mailroom.test', 'id1');`,
      `store.add('a@mailroom.test', 'id2');`,
      'console.log(JSON.stringify({ pid: process.pid, sawId1 }));',
    ].join('\n');
    const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', child], { encoding: 'utf8' });
    const reported = JSON.parse(output) as { pid: number; sawId1: boolean };
    expect(reported).toEqual({ pid: expect.any(Number), sawId1: true });
    expect(reported.pid).not.toBe(process.pid);
    expect(first.has('a@mailroom.test', 'id2')).toBe(true);
    expect(restarted.has('a@mailroom.test', 'id2')).toBe(true);
    expect(first.has('a@mailroom.test', 'id3')).toBe(false);
  });
});
