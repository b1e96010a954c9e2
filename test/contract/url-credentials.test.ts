// A URL's password never reaches an error message (issue 44, item 7): the
// masking itself, and the errors that echo a URL someone gave (the client's
// apiURL, a webhook's URL on both halves, a static webhook at start).
import { describe, expect, it } from 'vitest';
import { normalizeApiURL } from '../../src/client/client.js';
import { withoutCredentials } from '../../src/contract/url-credentials.js';
import { webhookInput } from '../../src/inbox/webhooks.js';
import { startServer } from '../../src/server/index.js';
import { call, start } from '../server/helpers.js';

describe('withoutCredentials', () => {
  it('masks the password of a URL, or a lone user name, and leaves the rest as the URL has it', () => {
    expect(withoutCredentials('redis://:hunter2@127.0.0.1:1/99')).toBe('redis://:***@127.0.0.1:1/99');
    expect(withoutCredentials('https://deploy:s3cret@ci.example/api?x=1')).toBe('https://deploy:***@ci.example/api?x=1');
    expect(withoutCredentials('https://ghp_token@github.com/org/repo')).toBe('https://***@github.com/org/repo');
  });

  it('leaves what carries none as it is, an email address included', () => {
    for (const text of ['http://127.0.0.1:8025', 'http://127.0.0.1:8025/?to=a@b.example', 'user@example.com', 'memory', '']) {
      expect(withoutCredentials(text)).toBe(text);
    }
  });

  it('masks what stands before the @ of a URL that does not parse (a password with a slash, a slash too few)', () => {
    expect(withoutCredentials('redis://:pass/word+base64=@cache:6379/0')).toBe('redis://***@cache:6379/0');
    expect(withoutCredentials('redis//:hunter2@cache')).toBe('redis//***@cache');
    expect(withoutCredentials('ftp://user:pass@[::1')).toBe('ftp://***@[::1');
  });
});

describe('errors that echo a URL', () => {
  it('show the client’s apiURL without its password', () => {
    expect(() => normalizeApiURL('ftp://robot:hunter2@mail.example')).toThrow('got "ftp://robot:***@mail.example/"');
    expect(() => normalizeApiURL('http://robot:hunter2@[::1')).toThrow('got "http://***@[::1"');
  });

  it('show a webhook URL without its password, in the client’s check, the server’s refusal and a static webhook at start', async () => {
    expect(() => webhookInput({ url: 'ftp://u:hunter2@hooks.example/x' }, 'a@mailroom.test')).toThrow('got "ftp://u:***@hooks.example/x"');
    const server = await start();
    const refused = await call(server, '/api/v1/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://u:hunter2@127.0.0.1:9/hook' }),
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('http://u:***@127.0.0.1:9/hook');
    expect(refused.text).not.toContain('hunter2');
    await expect(startServer({ smtpPort: 0, httpPort: 0, staticWebhooks: [{ url: 'http://u:hunter2@127.0.0.1:9/hook' }] })).rejects.toThrow(
      /^Invalid static webhook "http:\/\/u:\*\*\*@127\.0\.0\.1:9\/hook": Expected `url` to be an http\(s\) URL without credentials.*got "http:\/\/u:\*\*\*@127\.0\.0\.1:9\/hook"$/,
    );
  });
});
