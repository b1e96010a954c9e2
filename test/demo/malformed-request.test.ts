// A request target the URL parser refuses must get an answer, not take the
// demo app down with it (every test of a run shares one app).
import { connect } from 'node:net';
import { expect } from 'vitest';
import { fetch } from 'undici';
import { test } from './context.js';

/** Sends one raw HTTP/1.1 request and resolves with the status line. */
function rawStatusLine(url: string, target: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(`GET ${target} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`));
    let answer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
    socket.once('error', reject);
    socket.once('close', () => resolve(answer.split('\r\n')[0] ?? ''));
  });
}

test('answers a malformed request target with 400 and keeps serving', async ({ app }) => {
  expect(await rawStatusLine(app.url, '//[')).toBe('HTTP/1.1 400 Bad Request');
  expect((await fetch(`${app.url}/`)).status).toBe(200);
});
