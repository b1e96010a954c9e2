// The provider APIs beside SMTP (issue 42, item 8), against the embedded
// server in its own process, through each provider's own SDK as an app uses
// it (one client, kept), in interleaved rounds so the machine's drift falls
// on every way alike:
//
//  1. Send to mail in hand: `expectMail()` already waiting on a fresh
//     address, then one send; from the call to the mail in hand. SMTP is
//     nodemailer's `sendMail()` over a new connection, as most apps send.
//     Goal: every provider's p50 at most 15 ms.
//  2. Ingest: the same composed mail (text and HTML, one attachment) sent
//     `BENCH_PROVIDER_MESSAGES` times a round, 4 at a time, each way; SMTP
//     over a pool of 4 connections. Goal: every provider at least SMTP's rate.
//     Beside it, the server's CPU per mail (all its threads, from /proc): the
//     sender runs here on the same two cores, so where a rate falls short the
//     server's cost tells whether the server or the SDK is the slower part.
//
// `BENCH_ROUNDS` (5) rounds; `BENCH_PROVIDER_SAMPLES` (20) latency samples a
// way a round.
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { SESClient, SendEmailCommand as SendEmailV1Command } from '@aws-sdk/client-ses';
import { BrevoClient } from '@getbrevo/brevo';
import sendgridClient from '@sendgrid/client';
import sgMail from '@sendgrid/mail';
import Mailgun from 'mailgun.js';
import nodemailer from 'nodemailer';
import * as postmark from 'postmark';
import { Resend } from 'resend';
import { createInbox, providerSettings } from '../src/index.js';
import type { BenchSection } from './section.js';
import { describe, formatMs, median, percentile, processCpuNs, startServerProcess, verdict, type ServerProcess } from './support.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SAMPLES = Number(process.env.BENCH_PROVIDER_SAMPLES ?? 20);
const MESSAGES = Number(process.env.BENCH_PROVIDER_MESSAGES ?? 400);
const CONCURRENCY = 4;
const LATENCY_GOAL_MS = 15;

const FROM = 'Acme <hello@acme.example>';
const TEXT = 'Hi there,\n\nYour confirmation code is 482913. Or confirm at https://acme.example/confirm?t=abc\n\nThe Acme team';
const HTML = '<p>Hi there,</p><p>Your confirmation code is <b>482913</b>.</p><p><a href="https://acme.example/confirm?t=abc">Confirm</a></p>';
const ATTACHMENT = Buffer.from('Terms of service, version 3.\n'.repeat(40));

/** One way of sending: a name, and a send that resolves once the server accepted the mail. */
interface Way {
  readonly name: string;
  send(to: string, subject: string): Promise<void>;
  close(): void;
}

function fail(name: string, detail: unknown): never {
  throw new Error(`${name} refused a bench mail: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`);
}

function ways(server: ServerProcess): Way[] {
  const settings = providerSettings(server.apiURL);
  const aws = { endpoint: server.apiURL, region: 'us-east-1', credentials: { accessKeyId: 'AKIDBENCH', secretAccessKey: 'bench' }, maxAttempts: 1 };
  const smtp = nodemailer.createTransport({
    host: '127.0.0.1',
    port: server.smtpPort,
    secure: false,
    ignoreTLS: true,
    pool: true,
    maxConnections: CONCURRENCY,
  });
  const resend = new Resend('re_bench', { baseUrl: settings.env.RESEND_BASE_URL });
  const sesV2 = new SESv2Client(aws);
  const sesV1 = new SESClient(aws);
  // The key first: setApiKey resets the base URL.
  sendgridClient.setApiKey('SG.bench');
  sendgridClient.setDefaultRequest('baseUrl', settings.sendgrid.baseUrl);
  sgMail.setClient(sendgridClient);
  const pm = new postmark.ServerClient('bench-token', settings.postmark);
  const mg = new Mailgun(FormData).client({ username: 'api', key: 'key-bench', url: settings.mailgun.url });
  const brevo = new BrevoClient({ apiKey: 'xkeysib-bench', baseUrl: settings.brevo.baseUrl });
  const b64 = ATTACHMENT.toString('base64');
  return [
    {
      name: 'SMTP (nodemailer, pool of 4)',
      send: async (to, subject) =>
        void (await smtp.sendMail({ from: FROM, to, subject, text: TEXT, html: HTML, attachments: [{ filename: 'terms.txt', content: ATTACHMENT }] })),
      close: () => smtp.close(),
    },
    {
      name: 'Resend',
      async send(to, subject) {
        const { error } = await resend.emails.send({
          from: FROM,
          to,
          subject,
          text: TEXT,
          html: HTML,
          attachments: [{ filename: 'terms.txt', content: ATTACHMENT }],
        });
        if (error) fail('Resend', error);
      },
      close() {},
    },
    {
      name: 'SES v2',
      async send(to, subject) {
        await sesV2.send(
          new SendEmailCommand({
            FromEmailAddress: FROM,
            Destination: { ToAddresses: [to] },
            Content: {
              Simple: {
                Subject: { Data: subject },
                Body: { Text: { Data: TEXT }, Html: { Data: HTML } },
                Attachments: [{ FileName: 'terms.txt', RawContent: ATTACHMENT, ContentType: 'text/plain' }],
              },
            },
          }),
        );
      },
      close: () => sesV2.destroy(),
    },
    {
      // SES v1's SendEmail has no attachments: the same text and HTML.
      name: 'SES v1',
      async send(to, subject) {
        await sesV1.send(
          new SendEmailV1Command({
            Source: FROM,
            Destination: { ToAddresses: [to] },
            Message: { Subject: { Data: subject }, Body: { Text: { Data: TEXT }, Html: { Data: HTML } } },
          }),
        );
      },
      close: () => sesV1.destroy(),
    },
    {
      name: 'SendGrid',
      send: async (to, subject) =>
        void (await sgMail.send({
          from: FROM,
          to,
          subject,
          text: TEXT,
          html: HTML,
          attachments: [{ content: b64, filename: 'terms.txt', type: 'text/plain' }],
        })),
      close() {},
    },
    {
      name: 'Postmark',
      send: async (to, subject) =>
        void (await pm.sendEmail({
          From: FROM,
          To: to,
          Subject: subject,
          TextBody: TEXT,
          HtmlBody: HTML,
          Attachments: [{ Name: 'terms.txt', Content: b64, ContentType: 'text/plain', ContentID: null }],
        })),
      close() {},
    },
    {
      name: 'Mailgun',
      send: async (to, subject) =>
        void (await mg.messages.create('acme.example', {
          from: FROM,
          to: [to],
          subject,
          text: TEXT,
          html: HTML,
          attachment: [{ filename: 'terms.txt', data: ATTACHMENT }],
        })),
      close() {},
    },
    {
      name: 'Brevo',
      send: async (to, subject) =>
        void (await brevo.transactionalEmails.sendTransacEmail(
          {
            sender: { email: 'hello@acme.example', name: 'Acme' },
            to: [{ email: to }],
            subject,
            textContent: TEXT,
            htmlContent: HTML,
            attachment: [{ name: 'terms.txt', content: b64 }],
          },
          { maxRetries: 0 },
        )),
      close() {},
    },
  ];
}

/** From the send to the mail in hand, `expectMail` already waiting. */
async function sendToMailInHand(server: ServerProcess, way: Way): Promise<number> {
  const inbox = await createInbox({ apiURL: server.apiURL, prefix: 'bench-provider' });
  const waiting = inbox.expectMail({ subject: 'Confirm' }, { timeout: 10_000 });
  // Let the wait settle into its hold before the app sends.
  await new Promise((resolve) => setTimeout(resolve, 150));
  const started = performance.now();
  await way.send(inbox.address, 'Confirm your email');
  await waiting;
  return performance.now() - started;
}

/** `MESSAGES` mails, `CONCURRENCY` at a time: mails per second, and the server's CPU per mail (all its threads, /proc). */
async function ingest(way: Way, round: number, serverPid: number | undefined): Promise<{ rate: number; serverUs: number | undefined }> {
  let next = 0;
  const cpuBefore = processCpuNs(serverPid)?.all;
  const started = performance.now();
  const worker = async () => {
    while (next < MESSAGES) {
      const n = next++;
      await way.send(`ingest-${round}-${n % 500}@mailroom.test`, `Receipt ${n}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const rate = MESSAGES / ((performance.now() - started) / 1000);
  const cpuAfter = processCpuNs(serverPid)?.all;
  return { rate, serverUs: cpuBefore === undefined || cpuAfter === undefined ? undefined : (cpuAfter - cpuBefore) / 1000 / MESSAGES };
}

export const providersBench: BenchSection = {
  name: 'providers',
  description: 'the provider APIs through their own SDKs beside SMTP: send to mail in hand, and ingest rate',
  async run() {
    const server = await startServerProcess({ args: ['--max-messages', 'unlimited'], env: { ...process.env, NODE_ENV: 'production' } });
    const all = ways(server);
    const latency = new Map(all.map((way) => [way.name, [] as number[]]));
    const rates = new Map(all.map((way) => [way.name, [] as number[]]));
    const serverUs = new Map(all.map((way) => [way.name, [] as number[]]));
    try {
      console.log(
        `mailroom serve in its own process; ${ROUNDS} rounds, the ways interleaved (order rotated each round); a round: ${SAMPLES} latency samples and ${MESSAGES} mails (${CONCURRENCY} at a time) per way.`,
      );
      for (const way of all) for (let i = 0; i < 3; i++) await sendToMailInHand(server, way); // warm-up: each SDK's first call loads it
      for (let round = 0; round < ROUNDS; round++) {
        const order = all.map((_, i) => all[(i + round) % all.length]!);
        for (const way of order) for (let i = 0; i < SAMPLES; i++) latency.get(way.name)!.push(await sendToMailInHand(server, way));
        for (const way of order) {
          const { rate, serverUs: us } = await ingest(way, round, server.child.child.pid);
          rates.get(way.name)!.push(rate);
          if (us !== undefined) serverUs.get(way.name)!.push(us);
        }
      }
      const format = formatMs(1);
      const smtpRate = median(rates.get(all[0]!.name)!);
      console.log('\n| way | send to mail in hand (p50, p90) | ingest, median of rounds (msgs/s) | vs SMTP | server CPU per mail (median) |');
      console.log('| --- | --- | --- | --- | --- |');
      for (const way of all) {
        const rate = median(rates.get(way.name)!);
        const rounds = rates
          .get(way.name)!
          .map((r) => r.toFixed(0))
          .join(', ');
        const us = serverUs.get(way.name)!;
        const cpu = us.length > 0 ? `${median(us).toFixed(0)} us` : 'n/a';
        console.log(
          `| ${way.name} | ${describe(latency.get(way.name)!, format, [50, 90])} | ${rate.toFixed(0)} (rounds ${rounds}) | ${(rate / smtpRate).toFixed(2)}x | ${cpu} |`,
        );
      }
      const providers = all.slice(1);
      const slow = providers.filter((way) => percentile(latency.get(way.name)!, 50) > LATENCY_GOAL_MS).map((way) => way.name);
      const behind = providers.filter((way) => median(rates.get(way.name)!) < smtpRate).map((way) => way.name);
      console.log(
        `\ngoal: every provider's send to mail in hand p50 <= ${LATENCY_GOAL_MS} ms: ${verdict(slow.length === 0)}${slow.length ? ` (over: ${slow.join(', ')})` : ''}`,
      );
      console.log(
        `goal: every provider's ingest at least SMTP's rate: ${verdict(behind.length === 0)}${behind.length ? ` (under: ${behind.join(', ')})` : ''}`,
      );
    } finally {
      for (const way of all) way.close();
      await server.stop();
    }
  },
};
