// The HTTP fuzz run: a server fed some mail, then `runs` generated requests
// over real sockets, each answered as the contract says (answerProblems), the
// server's error log empty, and the server still healthy at the end.
import fc from 'fast-check';
import nodemailer from 'nodemailer';
import type { MailroomServer } from '../../../src/server/index.js';
import { answerProblems, describeRequest, httpRequestArb, requestBytes, type FuzzTargets } from './http-requests.js';
import { rawHttpExchange } from './raw-http.js';

export interface FuzzServer {
  readonly server: MailroomServer;
  /** What the server logged at error level so far. */
  readonly errors: () => readonly string[];
}

/** Server options for a fuzz target: every route served, budgets off so requests reach the handlers. */
export const FUZZ_SERVER_OPTIONS = Object.freeze({
  smtpPort: 0,
  httpPort: 0,
  waitSlots: 4,
  faultInjection: true,
  listPerSecond: Infinity,
  messagePerSecond: Infinity,
});

export function capturingLogger(): { errors: string[]; info(m: string): void; warn(m: string): void; error(m: string): void } {
  const errors: string[] = [];
  return { errors, info: () => {}, warn: () => {}, error: (message) => void errors.push(message) };
}

async function seed(server: MailroomServer): Promise<FuzzTargets> {
  const domain = server.domains[0]!;
  const seededAddress = `seeded@${domain}`;
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, ignoreTLS: true });
  try {
    await transport.sendMail({ from: 'a@example.com', to: seededAddress, subject: 'plain', text: 'hello' });
    await transport.sendMail({ from: 'a@example.com', to: seededAddress, subject: 'html', html: '<p>hi<script>x()</script></p>' });
    await transport.sendMail({
      from: '"Ünïcödé" <u@example.com>',
      to: seededAddress,
      subject: 'attachment\r\nX-Injected: yes',
      text: 'see attached',
      attachments: [{ filename: 'a\r\nb.txt', content: 'x' }],
    });
  } finally {
    transport.close();
  }
  const listed = await fetch(`${server.apiURL}/api/v1/mailbox?address=${seededAddress}`);
  const { messages } = (await listed.json()) as { messages: Array<{ id: string }> };
  return { domain, seededAddress, seededIds: messages.map((m) => m.id) };
}

export interface HttpFuzzResult {
  readonly runs: number;
  readonly seed: number;
  readonly statuses: Readonly<Record<number, number>>;
}

/** Runs the property; throws fast-check's report (seed, path, counterexample) on the first failure. */
export async function fuzzHttp(target: FuzzServer, options: { runs: number; seed: number; deadlineMs?: number }): Promise<HttpFuzzResult> {
  const { server, errors } = target;
  const targets = await seed(server);
  const statuses: Record<number, number> = {};
  const deadlineMs = options.deadlineMs ?? 5000;
  await fc.assert(
    fc.asyncProperty(httpRequestArb(targets), async (request) => {
      const before = errors().length;
      const outcome = await rawHttpExchange(server.httpPort, requestBytes(request), { timeoutMs: deadlineMs, isHead: request.method === 'HEAD' });
      server.faults.clear();
      if (outcome.kind === 'answer') statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
      const problems = answerProblems(request, outcome);
      const logged = errors().slice(before);
      if (logged.length > 0) problems.push(`the server logged an error: ${logged.join(' | ').slice(0, 600)}`);
      if (problems.length > 0) throw new Error(`${problems.join('; ')}\nrequest: ${describeRequest(request)}`);
    }),
    { numRuns: options.runs, seed: options.seed, endOnFailure: false, verbose: 0 },
  );
  const health = await fetch(`${server.apiURL}/healthz`);
  if (health.status !== 200) throw new Error(`after the fuzz run /healthz answered ${health.status}`);
  return { runs: options.runs, seed: options.seed, statuses };
}
