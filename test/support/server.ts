// The embedded server on free ports, and real SMTP to feed it.
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { startServer, type MailroomServer, type ServerOptions } from '../../src/server/index.js';
import { createInbox, type InboxEvent, type InboxOptions } from '../../src/index.js';
import type { Inbox } from '../../src/inbox/inbox.js';
import { testServerLogger } from './server-log.js';

/**
 * The embedded server on free ports. Without its long-poll by default
 * (`waitSlots: 0`, so it does not advertise one): these tests prove the
 * polling loop, request by request. The server-side wait has its own tests
 * (test/wait/long-poll-strategy.integration.test.ts), which pass `waitSlots`.
 */
export async function startTestServer(options: ServerOptions = {}): Promise<MailroomServer> {
  return startServer({ smtpPort: 0, httpPort: 0, faultInjection: true, waitSlots: 0, logger: testServerLogger('test server'), ...options });
}

/** Sends one message over real SMTP; resolves once the server answered 250 (the mail is visible). */
export async function send(server: MailroomServer, to: string, mail: Mail.Options = {}): Promise<void> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true });
  try {
    await transport.sendMail({ from: 'Acme <hello@acme.example>', to, subject: 'Hello', text: 'Hello there', ...mail });
  } finally {
    transport.close();
  }
}

export interface Observed {
  readonly inbox: Inbox;
  readonly events: InboxEvent[];
}

/** An inbox on the test server whose events are recorded. */
export async function observedInbox(server: MailroomServer, options: InboxOptions = {}): Promise<Observed> {
  const events: InboxEvent[] = [];
  const inbox = await createInbox({ apiURL: server.apiURL, domain: server.domains[0], onEvent: (event) => events.push(event), ...options });
  return { inbox, events };
}

export function eventsOf<T extends InboxEvent['type']>(events: readonly InboxEvent[], type: T): Extract<InboxEvent, { type: T }>[] {
  return events.filter((e): e is Extract<InboxEvent, { type: T }> => e.type === type);
}
