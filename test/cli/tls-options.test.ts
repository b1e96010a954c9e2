// SMTP over TLS's options (issue 28): from the command line, the environment
// and the Playwright webServer helper to startServer's options, each mistake
// named with its flag before the server starts.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mailroomWebServer } from 'mailroomjs/playwright';
import { describe, expect, it } from 'vitest';
import { optionsFrom, UsageError } from '../../src/cli/serve-options.js';
import { scratchDirs } from '../support/scratch-dirs.js';

/** Where the certificate files go; removed after the file's tests. */
const scratchDir = scratchDirs('mailroom-cli-tls-');

/** Two files that exist; the CLI checks only that it can read them (startServer checks what they hold). */
function files(): { cert: string; key: string } {
  const dir = scratchDir();
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  writeFileSync(cert, 'cert');
  writeFileSync(key, 'key');
  return { cert, key };
}

describe('the SMTP over TLS options', () => {
  it('are all off unless asked for', () => {
    const { options } = optionsFrom([], {});
    for (const name of ['smtpTls', 'smtpTlsCert', 'smtpTlsKey', 'smtpRequireTls', 'smtpsPort']) expect(options).not.toHaveProperty(name);
  });

  it('reach startServer from flags or variables, flags first', () => {
    const { cert, key } = files();
    expect(optionsFrom(['--smtp-tls', '--smtp-require-tls', '--smtps-port', '2465'], {}).options).toMatchObject({
      smtpTls: true,
      smtpRequireTls: true,
      smtpsPort: 2465,
    });
    const fromEnv = optionsFrom([], {
      MAILROOM_SMTP_TLS_CERT: cert,
      MAILROOM_SMTP_TLS_KEY: key,
      MAILROOM_SMTP_REQUIRE_TLS: '1',
      MAILROOM_SMTPS_PORT: '0',
    }).options;
    // A certificate given turns STARTTLS on, as startServer does.
    expect(fromEnv).toEqual({ smtpTls: true, smtpTlsCert: cert, smtpTlsKey: key, smtpRequireTls: true, smtpsPort: 0 });
    expect(optionsFrom(['--smtps-port', '1465'], { MAILROOM_SMTPS_PORT: '2465' }).options.smtpsPort).toBe(1465);
    expect(optionsFrom([], { MAILROOM_SMTP_TLS: 'no' }).options).not.toHaveProperty('smtpTls');
  });

  it('refuse what cannot work, naming the flag and its variable', () => {
    const { cert, key } = files();
    const refusals: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
      [['--smtp-tls-cert', cert], {}, /--smtp-tls-cert \(or MAILROOM_SMTP_TLS_CERT\) needs its private key: give --smtp-tls-key/],
      [[], { MAILROOM_SMTP_TLS_KEY: key }, /--smtp-tls-key \(or MAILROOM_SMTP_TLS_KEY\) needs the certificate it belongs to/],
      [
        ['--smtp-tls-cert', `${cert}.missing`, '--smtp-tls-key', key],
        {},
        /--smtp-tls-cert \(or MAILROOM_SMTP_TLS_CERT\) must be a readable file, but ".*\.missing" cannot be read \(ENOENT\)/,
      ],
      [['--smtp-require-tls'], {}, /--smtp-require-tls \(or MAILROOM_SMTP_REQUIRE_TLS\) needs STARTTLS offered: add --smtp-tls/],
      [['--smtps-port', 'secure'], {}, /--smtps-port \(or MAILROOM_SMTPS_PORT\) must be a port from 0 to 65535, got "secure"/],
      [[], { MAILROOM_SMTP_TLS: 'maybe' }, /MAILROOM_SMTP_TLS must be 1 \(offer STARTTLS\) or 0, got "maybe"/],
    ];
    for (const [argv, env, message] of refusals) {
      expect(() => optionsFrom(argv, env), argv.join(' ') || JSON.stringify(env)).toThrow(UsageError);
      expect(() => optionsFrom(argv, env), argv.join(' ') || JSON.stringify(env)).toThrow(message);
    }
  });

  it('are passed on by mailroomWebServer, and none by default', () => {
    expect(mailroomWebServer().command).not.toMatch(/--smtp-tls|--smtp-require-tls|--smtps-port/);
    const server = mailroomWebServer({
      smtpTls: true,
      smtpRequireTls: true,
      smtpsPort: 2465,
      smtpTlsCert: '/certs/mail.pem',
      smtpTlsKey: '/certs/mail key.pem',
    });
    expect(server.command).toContain('--smtp-tls --smtp-tls-cert /certs/mail.pem --smtp-tls-key "/certs/mail key.pem" --smtp-require-tls --smtps-port 2465');
    expect(() => mailroomWebServer({ smtpsPort: 70_000 })).toThrow(/`smtpsPort` to be a port from 1 to 65535, got 70000/);
    expect(() => mailroomWebServer({ smtpTls: 'yes' as unknown as boolean })).toThrow(/`smtpTls` to be a boolean, got "yes"/);
  });
});
