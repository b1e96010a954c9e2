// Issue 26, item 6: nothing crashes the server. The event stream never
// writes after its end; `mailroom serve` logs a stray rejection or
// exception as a bug and goes on serving.
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { internalsOf } from '../../src/server/start-server.js';
import { freshAddress, silentLogger, start } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('the event stream', () => {
  it('writes nothing after it was ended by close(), even with an arrival’s summary still being parsed', async () => {
    const logger = silentLogger();
    const server = await start({ logger });
    const errors: unknown[] = [];
    const opened = new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${server.apiURL}/api/v1/events`, (res) => {
        res.once('data', () => resolve());
        res.on('error', () => {});
      });
      req.on('error', reject);
      req.end();
    });
    await opened;
    const onError = (error: unknown) => errors.push(error);
    process.on('uncaughtException', onError);
    try {
      // Stored in this tick (the memory store), its summary parsed on the next: close() ends the stream in between.
      const stored = internalsOf(server).store.deliver([freshAddress().toLowerCase()], Buffer.from('Subject: late\r\n\r\nbody\r\n'));
      expect(Array.isArray(stored)).toBe(true);
      await server.close();
      // The parse and the write it would have made come within a few turns of the event loop.
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('uncaughtException', onError);
    }
    expect(errors).toEqual([]);
  });
});

describe('mailroom serve', () => {
  it('logs a promise rejected with no handler, and an exception thrown outside any request, as bugs, and goes on', async () => {
    // The CLI's guards in a process of their own: Vitest's would take the stray rejection first here.
    const script = `
      import { installProcessGuards } from './src/cli/process-guards.ts';
      installProcessGuards({ error: (line) => console.log(line.split('\\n')[0]) });
      Promise.reject(new Error('stray rejection'));
      setTimeout(() => { throw new Error('stray exception'); }, 10);
      setTimeout(() => console.log('still serving'), 100);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(out).toContain('BUG: a promise was rejected and nothing handled it (the server carries on): Error: stray rejection');
    expect(out).toContain('BUG: an exception reached the top (the server carries on): Error: stray exception');
    expect(out).toContain('still serving');
    expect(code).toBe(0);
  });
});
