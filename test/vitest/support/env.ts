// What the global setup hands to the workers, and small helpers over real
// HTTP (undici) and SMTP (nodemailer) for the plugin's tests.
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { request } from 'undici';
import { inject } from 'vitest';
import type { RequestStats } from '../../../src/server/http/test-hooks/faults.js';

declare module 'vitest' {
  interface ProvidedContext {
    demoAppURL: string;
    mailroomSmtpPort: number;
  }
}

export function apiURL(): string {
  const url = inject('mailroom')?.apiURL;
  if (!url) throw new Error('The global setup did not provide `mailroom.apiURL`');
  return url;
}

export interface JsonAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** POSTs JSON to the demo app's API. */
export async function postApp(path: string, body: unknown): Promise<JsonAnswer> {
  const res = await request(new URL(path, inject('demoAppURL')), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

/** GETs a page (e.g. a link from a mail) and returns its status and HTML. */
export async function getPage(url: string): Promise<{ status: number; html: string }> {
  const res = await request(url);
  return { status: res.statusCode, html: await res.body.text() };
}

/** The embedded server's request counts for an address (watermark reads, deletes...). */
export async function stats(address: string): Promise<RequestStats> {
  const res = await request(`${apiURL()}/_mailroom/stats?address=${encodeURIComponent(address)}`);
  if (res.statusCode !== 200) throw new Error(`stats for ${address}: ${res.statusCode} ${await res.body.text()}`);
  return (await res.body.json()) as RequestStats;
}

/** Sends one message over real SMTP to the embedded server; resolves on its 250. */
export async function send(to: string, mail: Mail.Options = {}): Promise<void> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: inject('mailroomSmtpPort'), secure: false, ignoreTLS: true });
  try {
    await transport.sendMail({ from: 'Acme <hello@acme.example>', to, subject: 'Hello', text: 'Hello there', ...mail });
  } finally {
    transport.close();
  }
}
