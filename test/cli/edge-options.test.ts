// `--allowed-host` and `--allow-origin` (issue 26), and `--link-check-allow`
// (issue 44): from the command line, the environment and the Playwright
// webServer helper to startServer's options.
import { describe, expect, it } from 'vitest';
import { optionsFrom, UsageError } from '../../src/cli/serve-options.js';
import { mailroomWebServer } from 'mailroomjs/playwright';
import { resolveServerOptions } from '../../src/server/server-options.js';

describe('the edge options', () => {
  it('reach startServer from repeated flags or comma-separated variables, flags first', () => {
    const { options } = optionsFrom(['--allowed-host', 'mail.internal', '--allowed-host', 'box', '--allow-origin', 'http://localhost:3000/'], {
      MAILROOM_ALLOWED_HOST: 'ignored',
    });
    expect(options).toMatchObject({ allowedHosts: ['mail.internal', 'box'], allowOrigins: ['http://localhost:3000'] });
    const fromEnv = optionsFrom([], { MAILROOM_ALLOWED_HOST: 'a.internal, b.internal', MAILROOM_ALLOW_ORIGIN: 'https://app.example:8443' }).options;
    expect(fromEnv).toMatchObject({ allowedHosts: ['a.internal', 'b.internal'], allowOrigins: ['https://app.example:8443'] });
  });

  it('refuse a host with a port or an origin with a path, naming the option', () => {
    expect(() => optionsFrom(['--allowed-host', 'mail.internal:8025'], {})).toThrow(UsageError);
    expect(() => optionsFrom(['--allowed-host', 'mail.internal:8025'], {})).toThrow(/--allowed-host.*"mail.internal:8025"/);
    expect(() => resolveServerOptions({ allowOrigins: ['https://app.example/path'] })).toThrow(/allowOrigins/);
    expect(() => resolveServerOptions({ allowOrigins: ['evil.example'] })).toThrow(/allowOrigins/);
    expect(() => resolveServerOptions({ allowedHosts: ['bad host'] })).toThrow(/allowedHosts/);
  });

  it('are passed on by mailroomWebServer', () => {
    const server = mailroomWebServer({ allowedHosts: ['mailroom'], allowOrigins: ['http://localhost:3000'], linkCheckAllow: ['127.0.0.1'] });
    expect(server.command).toContain('--allowed-host mailroom --allow-origin http://localhost:3000 --link-check-allow 127.0.0.1');
  });

  it('take the hosts the link check may reach, and refuse one that is link-local, naming it', () => {
    expect(optionsFrom(['--link-check-allow', 'localhost', '--link-check-allow', '10.0.0.0/8'], {}).options.linkCheckAllow).toEqual([
      'localhost',
      '10.0.0.0/8',
    ]);
    expect(optionsFrom([], { MAILROOM_LINK_CHECK_ALLOW: '127.0.0.1, app.internal' }).options.linkCheckAllow).toEqual(['127.0.0.1', 'app.internal']);
    expect(() => resolveServerOptions({ linkCheckAllow: ['169.254.169.254'] })).toThrow(
      'Expected `linkCheckAllow` to be an array of host names, addresses or CIDRs such as ["127.0.0.1", "app.internal"], got "169.254.169.254": link-local or a cloud metadata address, which is never a destination',
    );
  });
});
