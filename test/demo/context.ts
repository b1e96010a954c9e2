// Vitest fixtures for the demo app's own tests: a real SMTP sink and the app
// sending to it, both on port 0, torn down after each test (app first).
import { test as base } from 'vitest';
import { fetch } from 'undici';
import { startDemoApp } from '../../fixtures/demo-app/index.js';
import type { DemoApp } from '../../fixtures/demo-app/index.js';
import { startSmtpSink } from '../../fixtures/smtp-sink.js';
import type { SinkMessage, SmtpSink } from '../../fixtures/smtp-sink.js';

export const test = base.extend<{ sink: SmtpSink; app: DemoApp }>({
  sink: async ({}, use) => {
    const sink = await startSmtpSink();
    await use(sink);
    await sink.close();
  },
  app: async ({ sink }, use) => {
    const app = await startDemoApp({ smtp: { host: sink.host, port: sink.port } });
    await use(app);
    await app.close();
  },
});

let counter = 0;
/** A fresh address per call, so one test's mail never looks like another's. */
export const freshAddress = (label = 'user'): string => `${label}-${process.pid}-${++counter}@example.test`;

export async function postJson(url: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

export async function getJson(url: string): Promise<Record<string, unknown>> {
  const res = await fetch(url);
  return (await res.json()) as Record<string, unknown>;
}

export async function postForm(url: string, fields: Record<string, string>): Promise<{ status: number; html: string }> {
  const res = await fetch(url, { method: 'POST', body: new URLSearchParams(fields) });
  return { status: res.status, html: await res.text() };
}

export function bySubject(messages: readonly SinkMessage[], subject: string): SinkMessage {
  const found = messages.find((m) => m.parsed.subject === subject);
  if (!found) {
    throw new Error(`No message with subject "${subject}"; saw ${messages.map((m) => `"${m.parsed.subject}"`).join(', ') || 'none'}`);
  }
  return found;
}

/** The confirmation link and code of a "Confirm your email" message, read from its text part. */
export function confirmationOf(message: SinkMessage): { link: string; code: string; text: string; html: string } {
  const text = message.parsed.text ?? '';
  const html = message.parsed.html ?? '';
  const link = /https?:\/\/\S+\/confirm\?token=[0-9a-f]+/.exec(text)?.[0];
  const codes = text.match(/\b\d{6}\b/g) ?? [];
  if (!link || codes.length !== 1) {
    throw new Error(`Expected one confirmation link and one 6-digit code in:\n${text}`);
  }
  return { link, code: codes[0], text, html };
}
