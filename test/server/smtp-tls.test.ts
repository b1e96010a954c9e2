// SMTP over TLS on the embedded server, through real sockets: nodemailer as
// apps configure it when their mailer insists on TLS (STARTTLS required, or
// implicit TLS), a raw dialogue for the exact refusal before STARTTLS, the
// certificate made at start or given as files, and the default that offers
// no TLS at all, so an opportunistic client never meets a certificate.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { generate } from 'selfsigned';
import { describe, expect, it } from 'vitest';
import { startServer, type MailroomServer } from '../../src/server/index.js';
import { call, freshAddress, listPath, SmtpDialogue, start } from './helpers.js';
import { scratchDirs } from '../support/scratch-dirs.js';

/** Sends one mail with nodemailer configured as `transport` says; resolves to the server's final reply. */
async function sendWith(transport: SMTPTransport.Options, to: string, subject: string): Promise<string> {
  const mailer = nodemailer.createTransport({ host: '127.0.0.1', ...transport });
  try {
    return (await mailer.sendMail({ from: 'app@example.com', to, subject, text: 'over TLS' })).response;
  } finally {
    mailer.close();
  }
}

async function subjectsAt(server: MailroomServer, address: string): Promise<string[]> {
  return (await call(server, listPath(address))).json.messages.map((m: { subject: string }) => m.subject);
}

async function ehloOf(port: number): Promise<string> {
  const { dialogue } = await SmtpDialogue.open(port);
  try {
    return await dialogue.send('EHLO client.example');
  } finally {
    dialogue.close();
  }
}

/** Where the certificate files go; removed after the file's tests. */
const scratchDir = scratchDirs('mailroom-tls-');

/** A certificate and key pair of the test's own, for 127.0.0.1, written to a temp dir (EC: quick to make). */
async function certificateFiles(commonName: string): Promise<{ cert: string; key: string; certPath: string; keyPath: string; dir: string }> {
  const pems = await generate([{ name: 'commonName', value: commonName }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  const dir = scratchDir();
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  writeFileSync(certPath, pems.cert);
  writeFileSync(keyPath, pems.private);
  return { cert: pems.cert, key: pems.private, certPath, keyPath, dir };
}

/** The common name of the certificate the implicit-TLS port presents. */
function presentedName(port: number, ca: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, ca }, () => {
      const name = socket.getPeerCertificate().subject?.CN;
      socket.destroy();
      resolve(Array.isArray(name) ? name[0] : name);
    });
    socket.once('error', reject);
  });
}

describe('SMTP over TLS: off by default', () => {
  it('offers no STARTTLS and no implicit-TLS port, so nodemailer left at its defaults delivers without meeting a certificate', async () => {
    const server = await start();
    expect(await ehloOf(server.smtpPort)).not.toContain('STARTTLS');
    expect(server.smtpsPort).toBeUndefined();
    expect(server.smtpTlsCertificate).toBeUndefined();
    const to = freshAddress();
    // nodemailer's default: upgrade when STARTTLS is offered, and then verify the certificate.
    expect(await sendWith({ port: server.smtpPort }, to, 'Opportunistic')).toMatch(/^250 /);
    expect(await subjectsAt(server, to)).toEqual(['Opportunistic']);
    expect((await call(server, '/healthz')).json.features.smtp_tls).toBeUndefined();
  });
});

describe('SMTP over TLS: STARTTLS (smtpTls)', () => {
  it('delivers from nodemailer with requireTLS, verifying the certificate made at start (Laravel MAIL_ENCRYPTION=tls, Django EMAIL_USE_TLS)', async () => {
    const server = await start({ smtpTls: true });
    expect(await ehloOf(server.smtpPort)).toMatch(/^250[- ]STARTTLS$/m);
    const to = freshAddress();
    const reply = await sendWith({ port: server.smtpPort, requireTLS: true, tls: { ca: server.smtpTlsCertificate! } }, to, 'Over STARTTLS');
    expect(reply).toMatch(/^250 /);
    expect(await subjectsAt(server, to)).toEqual(['Over STARTTLS']);
    expect((await call(server, '/healthz')).json.features.smtp_tls).toEqual({ starttls: true, required: false });
  });

  it('delivers from nodemailer with requireTLS and rejectUnauthorized: false (a client told not to verify)', async () => {
    const server = await start({ smtpTls: true });
    const to = freshAddress();
    await sendWith({ port: server.smtpPort, requireTLS: true, tls: { rejectUnauthorized: false } }, to, 'Unverified');
    expect(await subjectsAt(server, to)).toEqual(['Unverified']);
  });

  it('makes one certificate per process, valid for localhost, 127.0.0.1 and ::1', async () => {
    const [a, b] = await Promise.all([start({ smtpTls: true }), start({ smtpsPort: 0 })]);
    expect(a.smtpTlsCertificate).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(b.smtpTlsCertificate).toBe(a.smtpTlsCertificate);
    const { X509Certificate } = await import('node:crypto');
    const made = new X509Certificate(a.smtpTlsCertificate!);
    expect(made.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    expect(made.issuer).toBe(made.subject);
    expect(made.verify(made.publicKey)).toBe(true);
    expect(made.publicKey.asymmetricKeyType).toBe('rsa');
  });
});

describe('SMTP over TLS: STARTTLS required (smtpRequireTls)', () => {
  it('refuses MAIL FROM before STARTTLS with 530 5.7.0', async () => {
    const server = await start({ smtpTls: true, smtpRequireTls: true });
    const { dialogue } = await SmtpDialogue.open(server.smtpPort);
    try {
      expect(await dialogue.send('EHLO client.example')).toMatch(/^250[- ]STARTTLS$/m);
      expect(await dialogue.send('MAIL FROM:<app@example.com>')).toBe('530 5.7.0 Must issue a STARTTLS command first');
      // Nothing else changed: the connection is still open for STARTTLS.
      expect(await dialogue.send('NOOP')).toMatch(/^250 /);
    } finally {
      dialogue.close();
    }
    expect((await call(server, '/healthz')).json.features.smtp_tls).toEqual({ starttls: true, required: true });
  });

  it('takes the mail once the client has upgraded (Spring mail.smtp.starttls.required), and refuses a client that never does', async () => {
    const server = await start({ smtpTls: true, smtpRequireTls: true });
    const to = freshAddress();
    await sendWith({ port: server.smtpPort, requireTLS: true, tls: { ca: server.smtpTlsCertificate! } }, to, 'Upgraded first');
    await expect(sendWith({ port: server.smtpPort, ignoreTLS: true }, to, 'Never upgraded')).rejects.toMatchObject({
      responseCode: 530,
      response: '530 5.7.0 Must issue a STARTTLS command first',
    });
    expect(await subjectsAt(server, to)).toEqual(['Upgraded first']);
  });
});

describe('SMTP over TLS: the implicit-TLS port (smtpsPort)', () => {
  it('delivers from nodemailer with secure: true, and the plain port stays as it was', async () => {
    const server = await start({ smtpsPort: 0 });
    expect(server.smtpsPort).toEqual(expect.any(Number));
    expect(server.smtpsPort).not.toBe(server.smtpPort);
    const to = freshAddress();
    const reply = await sendWith({ port: server.smtpsPort!, secure: true, tls: { ca: server.smtpTlsCertificate! } }, to, 'Implicit TLS');
    expect(reply).toMatch(/^250 /);
    expect(await subjectsAt(server, to)).toEqual(['Implicit TLS']);
    expect(await ehloOf(server.smtpPort)).not.toContain('STARTTLS');
    expect((await call(server, '/healthz')).json.features.smtp_tls).toEqual({ starttls: false, required: false, smtps_port: server.smtpsPort });
  });

  it('runs the same intake: the rules refuse and the attempt log records what came in over TLS', async () => {
    const server = await start({ smtpsPort: 0 });
    const to = freshAddress();
    const rules = `/api/v1/mailbox/rules?${new URLSearchParams({ address: to })}`;
    const set = await call(server, rules, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'reject' }) });
    expect(set.status).toBe(200);
    const secure = { port: server.smtpsPort!, secure: true, tls: { ca: server.smtpTlsCertificate! } };
    await expect(sendWith(secure, to, 'Refused')).rejects.toMatchObject({ responseCode: 550 });
    await sendWith(secure, to, 'Taken');
    const attempts = (await call(server, `/api/v1/mailbox/attempts?${new URLSearchParams({ address: to })}`)).json.attempts;
    expect(attempts.map((a: { code: number; subject: string }) => [a.code, a.subject])).toEqual([
      [550, 'Refused'],
      [250, 'Taken'],
    ]);
    expect(await subjectsAt(server, to)).toEqual(['Taken']);
  });

  it('shares the connection cap with the SMTP port: one open there, the next over TLS gets 421 4.4.5', async () => {
    const server = await start({ smtpsPort: 0, maxSmtpConnections: 1 });
    const { dialogue } = await SmtpDialogue.open(server.smtpPort);
    try {
      const greeting = await new Promise<string>((resolve, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port: server.smtpsPort!, ca: server.smtpTlsCertificate! });
        socket.setEncoding('latin1');
        socket.once('data', (chunk: string) => (socket.destroy(), resolve(chunk.trimEnd())));
        socket.once('error', reject);
      });
      expect(greeting).toMatch(/^421 4\.4\.5 /);
    } finally {
      dialogue.close();
    }
  });
});

describe('SMTP over TLS: a certificate given as files (smtpTlsCert, smtpTlsKey)', () => {
  it('presents the given pair on both listeners, STARTTLS offered without smtpTls', async () => {
    const files = await certificateFiles('files.mailroom.test');
    const server = await start({ smtpTlsCert: files.certPath, smtpTlsKey: files.keyPath, smtpsPort: 0 });
    expect(server.smtpTlsCertificate).toBe(files.cert);
    expect(await presentedName(server.smtpsPort!, files.cert)).toBe('files.mailroom.test');
    const to = freshAddress();
    await sendWith({ port: server.smtpPort, requireTLS: true, tls: { ca: files.cert } }, to, 'Given certificate');
    expect(await subjectsAt(server, to)).toEqual(['Given certificate']);
  });
});

describe('SMTP over TLS: options refused, each naming the option', () => {
  it('refuses missing files, a key without its certificate, a mismatched pair, and settings that cannot work', async () => {
    const files = await certificateFiles('one.mailroom.test');
    const other = await certificateFiles('two.mailroom.test');
    const missing = join(files.dir, 'missing.pem');
    const refusals: Array<[Parameters<typeof startServer>[0], RegExp]> = [
      [
        { smtpTlsCert: missing, smtpTlsKey: files.keyPath },
        /^Expected `smtpTlsCert` to be the path of a certificate, but ".*missing\.pem" cannot be read: ENOENT$/,
      ],
      [
        { smtpTlsCert: files.certPath, smtpTlsKey: missing },
        /^Expected `smtpTlsKey` to be the path of a private key, but ".*missing\.pem" cannot be read: ENOENT$/,
      ],
      [
        { smtpTlsCert: files.keyPath, smtpTlsKey: files.keyPath },
        /^Expected `smtpTlsCert` to be the path of a certificate, but ".*key\.pem" holds no PEM certificate$/,
      ],
      [{ smtpTlsKey: files.keyPath }, /^Expected `smtpTlsCert` to be the path of the certificate of smtpTlsKey/],
      [{ smtpTlsCert: files.certPath }, /^Expected `smtpTlsKey` to be the path of the private key of smtpTlsCert/],
      [
        { smtpTlsCert: files.certPath, smtpTlsKey: other.keyPath },
        /^Expected `smtpTlsKey` to be the private key of the certificate in smtpTlsCert .*: .*key values mismatch/,
      ],
      [{ smtpTlsCert: files.certPath, smtpTlsKey: files.keyPath, smtpTls: false }, /^Expected `smtpTlsCert` to be given only with smtpTls or smtpsPort on/],
      [{ smtpRequireTls: true }, /^Expected `smtpRequireTls` to be false while smtpTls is off/],
      [{ smtpTls: 'yes' as unknown as boolean }, /^Expected `smtpTls` to be a boolean, got "yes"$/],
      [{ smtpPort: 2600, smtpsPort: 2600 }, /^Expected `smtpsPort` to be a different port from smtpPort \(2600\)/],
      [{ smtpsPort: 70_000 }, /^Expected `smtpsPort` to be an integer from 0 to 65535/],
    ];
    for (const [options, message] of refusals) {
      await expect(startServer({ httpPort: 0, ...options }), JSON.stringify(options)).rejects.toThrow(message);
    }
  });
});
