// SMTP under fast-check: generated sessions (commands in any order, arguments
// well-formed and not, garbage, NUL and 8-bit bytes, long lines, AUTH
// exchanges, DATA with generated mail), written in one burst (pipelining
// abuse) or step by step, always ending in QUIT. Properties: every reply line
// is well formed, every refusal (4xx/5xx) carries an enhanced status code of
// its class, the server never fails internally (no 451, nothing logged as an
// error), the connection ends within a deadline, and every message the
// server said it stored lists, fetches (JSON and raw, as many bytes as
// listed) and deletes.
import { connect } from 'node:net';
import fc from 'fast-check';
import type { FuzzServer } from './http-fuzz.js';
import { dotStuffed, messageArb } from './mail-corpus.js';

export interface SmtpOutcome {
  readonly replies: readonly string[];
  readonly closed: boolean;
  /** What the replies say was stored: one entry per mailbox copy. */
  readonly storedCopies: number;
}

/** Writes `chunks` (each after the previous, `gapMs` apart) and reads replies until the server closes or `deadlineMs` passes. */
export function smtpExchange(port: number, chunks: readonly Buffer[], options: { gapMs: number; deadlineMs: number }): Promise<SmtpOutcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const replies = Buffer.concat(received)
        .toString('latin1')
        .split('\r\n')
        .filter((line, i, all) => line !== '' || i < all.length - 1);
      let storedCopies = 0;
      for (const line of replies) {
        if (/^250 2\.6\.0 Stored as [0-9a-z]{11} for /.test(line)) storedCopies += 1;
        const many = /^250 2\.6\.0 Stored for (\d+) mailboxes/.exec(line);
        if (many) storedCopies += Number(many[1]);
      }
      resolve({ replies, closed, storedCopies });
    };
    const timer = setTimeout(() => finish(false), options.deadlineMs);
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => finish(true));
    socket.once('connect', () => {
      void (async () => {
        for (const chunk of chunks) {
          if (done || socket.destroyed) return;
          socket.write(chunk);
          if (options.gapMs > 0) await new Promise((r) => setTimeout(r, options.gapMs));
        }
      })();
    });
  });
}

/** Everything wrong with the replies of one session. */
export function replyProblems(outcome: SmtpOutcome): string[] {
  const problems: string[] = [];
  if (!outcome.closed) problems.push('the session did not end within the deadline (QUIT was sent)');
  for (const line of outcome.replies) {
    const code = /^(\d)\d\d([ -])/.exec(line);
    if (!code) {
      problems.push(`malformed reply line ${JSON.stringify(line.slice(0, 120))}`);
      continue;
    }
    const cls = code[1]!;
    if ((cls === '4' || cls === '5') && !new RegExp(`^\\d{3}[ -]${cls}\\.\\d{1,3}\\.\\d{1,3}(?: |$)`).test(line)) {
      problems.push(`refusal without an enhanced status code: ${JSON.stringify(line.slice(0, 160))}`);
    }
    if (line.startsWith('451')) problems.push(`an internal failure: ${line.slice(0, 160)}`);
  }
  return problems;
}

interface Pool {
  readonly mailboxes: readonly string[];
  readonly recipients: fc.Arbitrary<string>;
}

let runCounter = 0;

function poolFor(domain: string, tag: string): Pool {
  // The last is on a domain the server does not serve: taken all the same, as the server catches all (its default).
  const mailboxes = [`fz${tag}a@${domain}`, `fz${tag}b@${domain}`, `ñ${tag}@${domain}`, `postmaster@${domain}`, `fz${tag}@elsewhere.example`];
  const recipients = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...mailboxes.slice(0, 3), mailboxes[4]!) },
    { weight: 2, arbitrary: fc.constantFrom(...mailboxes.slice(0, 2)).map((a) => a.toUpperCase()) },
    { weight: 1, arbitrary: fc.constant('postmaster') },
    {
      weight: 3,
      arbitrary: fc.constantFrom('no-at', 'a@b@c', '', `x..y@${domain}`, `${'l'.repeat(70)}@${domain}`, `a\u0000b@${domain}`, `"q"@${domain}`),
    },
  );
  return { mailboxes, recipients };
}

const senders = fc.constantFrom('a@example.com', '', 'bad', 'josé@example.com', `${'s'.repeat(300)}@example.com`, 'a@[127.0.0.1]');
const mailParams = fc.constantFrom(
  '',
  '',
  ' SIZE=100',
  ' SIZE=999999999999',
  ' SIZE=abc',
  ' BODY=8BITMIME',
  ' BODY=BINARYMIME',
  ' SMTPUTF8',
  ' XYZ=1',
  ' RET=HDRS ENVID=x',
);
const rcptParams = fc.constantFrom('', '', '', ' NOTIFY=NEVER', ' NOTIFY=NEVER,SUCCESS', ' ORCPT=rfc822;a@b', ' ORCPT=', ' XYZ');

/** DATA, the message as given (dot-stuffed, ended with CRLF if it was not) and the final dot. */
export function dataCommand(source: Buffer): Buffer {
  const ended = source.subarray(-2).toString('latin1') === '\r\n';
  return Buffer.concat([Buffer.from('DATA\r\n'), dotStuffed(source), Buffer.from(ended ? '.\r\n' : '\r\n.\r\n')]);
}

/** One whole, well-ordered transaction, so that generated sessions store mail often enough to check it. */
function transactionArb(pool: Pool): fc.Arbitrary<Buffer> {
  return fc
    .tuple(fc.boolean(), fc.array(pool.recipients, { minLength: 1, maxLength: 4 }), messageArb)
    .map(([greet, rcpts, message]) =>
      Buffer.concat([
        Buffer.from(`${greet ? 'EHLO fuzz.example\r\n' : ''}MAIL FROM:<a@example.com>\r\n${rcpts.map((r) => `RCPT TO:<${r}>\r\n`).join('')}`, 'utf8'),
        dataCommand(message),
      ]),
    );
}

function stepArb(pool: Pool): fc.Arbitrary<Buffer> {
  const line = (text: fc.Arbitrary<string>) => text.map((t) => Buffer.from(`${t}\r\n`, 'utf8'));
  return fc.oneof(
    { weight: 6, arbitrary: transactionArb(pool) },
    { weight: 3, arbitrary: line(fc.constantFrom('EHLO fuzz.example', 'HELO fuzz.example', 'EHLO', 'HELO', 'LHLO x', 'EHLO [127.0.0.1]', 'EHLO bad..name')) },
    { weight: 4, arbitrary: line(fc.tuple(senders, mailParams).map(([s, p]) => `MAIL FROM:<${s}>${p}`)) },
    { weight: 6, arbitrary: line(fc.tuple(pool.recipients, rcptParams).map(([r, p]) => `RCPT TO:<${r}>${p}`)) },
    {
      weight: 4,
      arbitrary: messageArb.map(dataCommand),
    },
    {
      weight: 3,
      arbitrary: line(
        fc.constantFrom('RSET', 'NOOP', 'NOOP hello', 'VRFY someone', 'EXPN list', 'HELP', 'STARTTLS', 'BDAT 10 LAST', 'ETRN x', 'TURN', 'DATA', 'QUIT extra'),
      ),
    },
    {
      weight: 2,
      arbitrary: line(
        fc.constantFrom(
          `AUTH PLAIN ${Buffer.from('\0user\0pass').toString('base64')}`,
          'AUTH PLAIN',
          'AUTH PLAIN !!!',
          'AUTH LOGIN\r\ndXNlcg==\r\ncGFzcw==',
          'AUTH LOGIN\r\n*',
          'AUTH CRAM-MD5\r\nnot base64',
          'AUTH XOAUTH2 garbage',
          'AUTH NOPE',
        ),
      ),
    },
    { weight: 1, arbitrary: line(fc.constantFrom('WIZ', 'SHELL', 'KILL', 'DEBUG', 'GET / HTTP/1.1', 'POST /mcp HTTP/1.1', 'Host: x')) },
    {
      weight: 2,
      arbitrary: fc.uint8Array({ maxLength: 80 }).map((b) => Buffer.concat([Buffer.from(b.filter((x) => x !== 0x0d && x !== 0x0a)), Buffer.from('\r\n')])),
    },
    { weight: 1, arbitrary: fc.integer({ min: 600, max: 70_000 }).map((n) => Buffer.from(`NOOP ${'n'.repeat(n)}\r\n`)) },
    { weight: 1, arbitrary: fc.constantFrom(Buffer.from('\r\n'), Buffer.from('\n'), Buffer.from('MAIL FROM:<a@example.com>\n'), Buffer.from('\0\0\0\r\n')) },
  );
}

export interface SmtpFuzzResult {
  readonly runs: number;
  readonly seed: number;
  /** Reply codes seen, counted. */
  readonly replies: Readonly<Record<string, number>>;
  /** Mailbox copies stored and checked through the API. */
  readonly stored: number;
}

/** Lists, fetches (JSON and raw) and deletes every message in `mailbox`; returns how many, or throws naming what failed. */
export async function roundTripMailbox(apiURL: string, mailbox: string): Promise<number> {
  const q = (name: string, value: string) => `${name}=${encodeURIComponent(value)}`;
  const list = await fetch(`${apiURL}/api/v1/mailbox?${q('address', mailbox)}&limit=100`);
  if (list.status !== 200) throw new Error(`list ${mailbox}: ${list.status} ${await list.text()}`);
  const { messages } = (await list.json()) as { messages: Array<{ id: string; size: number }> };
  for (const { id, size } of messages) {
    const message = await fetch(`${apiURL}/api/v1/message/${id}?${q('mailbox', mailbox)}`);
    const text = await message.text();
    if (message.status !== 200) throw new Error(`GET message ${id} of ${mailbox}: ${message.status} ${text.slice(0, 300)}`);
    if ((JSON.parse(text) as { id: string }).id !== id) throw new Error(`GET message ${id} answered another id: ${text.slice(0, 200)}`);
    const raw = await fetch(`${apiURL}/api/v1/message/${id}/raw?${q('mailbox', mailbox)}`);
    const bytes = Buffer.from(await raw.arrayBuffer());
    if (raw.status !== 200 || raw.headers.get('content-type') !== 'message/rfc822' || bytes.length !== size) {
      throw new Error(`GET raw ${id} of ${mailbox}: ${raw.status} ${raw.headers.get('content-type')}, ${bytes.length} bytes where the list said ${size}`);
    }
    const deleted = await fetch(`${apiURL}/api/v1/message/${id}?${q('mailbox', mailbox)}`, { method: 'DELETE' });
    const answer = await deleted.text();
    if (deleted.status !== 200 || answer !== '{"deleted":true}') throw new Error(`DELETE ${id} of ${mailbox}: ${deleted.status} ${answer}`);
  }
  const after = await fetch(`${apiURL}/api/v1/mailbox?${q('address', mailbox)}`);
  const left = ((await after.json()) as { messages: unknown[] }).messages.length;
  if (left !== 0) throw new Error(`${mailbox} still lists ${left} messages after each was deleted`);
  return messages.length;
}

export async function fuzzSmtp(target: FuzzServer, options: { runs: number; seed: number; deadlineMs?: number }): Promise<SmtpFuzzResult> {
  const { server, errors } = target;
  const domain = server.domains[0]!;
  const replies: Record<string, number> = {};
  let stored = 0;
  const session = fc
    .tuple(
      fc.constant(null).map(() => `${process.pid}x${++runCounter}`),
      fc.constantFrom(0, 0, 1),
    )
    .chain(([tag, gapMs]) => {
      const pool = poolFor(domain, tag);
      // a greeting first, mostly: without one every transaction is refused
      const steps = fc
        .tuple(fc.boolean(), fc.array(stepArb(pool), { minLength: 1, maxLength: 16 }))
        .map(([greet, rest]) => (greet ? [Buffer.from('EHLO fuzz.example\r\n'), ...rest] : rest));
      return fc.record({ pool: fc.constant(pool), gapMs: fc.constant(gapMs), steps });
    });
  await fc.assert(
    fc.asyncProperty(session, async ({ pool, gapMs, steps }) => {
      const before = errors().length;
      // The ending: a dot ends a DATA left open; three QUITs, as an AUTH left
      // waiting for credentials takes up to two lines as its answers.
      const outcome = await smtpExchange(server.smtpPort, [...steps, Buffer.from('\r\n.\r\nQUIT\r\nQUIT\r\nQUIT\r\n')], {
        gapMs,
        deadlineMs: options.deadlineMs ?? 5000,
      });
      for (const line of outcome.replies) {
        const code = line.slice(0, 3);
        replies[code] = (replies[code] ?? 0) + 1;
      }
      const problems = replyProblems(outcome);
      let copies = 0;
      for (const mailbox of pool.mailboxes) {
        try {
          copies += await roundTripMailbox(server.apiURL, mailbox);
        } catch (error) {
          problems.push((error as Error).message);
        }
      }
      if (copies !== outcome.storedCopies) problems.push(`the replies said ${outcome.storedCopies} copies were stored; the API had ${copies}`);
      stored += copies;
      const logged = errors().slice(before);
      if (logged.length > 0) problems.push(`the server logged an error: ${logged.join(' | ').slice(0, 600)}`);
      if (problems.length > 0) {
        const sent = Buffer.concat(steps).toString('latin1');
        throw new Error(
          `${problems.join('; ')}\nsent (${sent.length} bytes, gap ${gapMs} ms): ${JSON.stringify(sent.slice(0, 1500))}\nreplies: ${JSON.stringify(outcome.replies.slice(0, 40))}`,
        );
      }
    }),
    { numRuns: options.runs, seed: options.seed, endOnFailure: true, verbose: 0 },
  );
  return { runs: options.runs, seed: options.seed, replies, stored };
}
