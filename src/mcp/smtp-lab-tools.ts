// The SMTP deferral lab's MCP tools (docs/CONTRACT.md, "MCP endpoint" and
// "SMTP rules"): `set_smtp_rule`, `list_smtp_rules`, `clear_smtp_rules` and
// `list_smtp_attempts`, for an agent proving an app's mail retry path.
// Registered only when the backend has the lab (`MailTools.smtpLab`).
//
// A rule's fields are the HTTP API's, and they are checked where the API
// checks them, not here: the input schema advertises the names, types and
// bounds (from contract/smtp-lab.ts) but accepts any value and any extra
// field, so a mistake reaches the server's parser and comes back as the
// API's `invalid_request` naming the field, not as the SDK's own schema
// error. The attempt log is printed with the timeline the test runners print
// (contract/attempt-timeline.ts), so "mail 1, try 2" means the same to an
// agent as in a failure message.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { attemptFromWire, readLog } from '../contract/attempt-reading.js';
import { formatTimeline, replyOf } from '../contract/attempt-timeline.js';
import {
  DEFAULT_ENHANCED,
  DEFER_CODES,
  REJECT_CODES,
  RULE_DEFAULTS,
  SMTP_RULE_KINDS,
  SMTP_RULE_LIMITS,
  SMTP_RULE_STAGES,
  UNAVAILABLE_STATUSES,
} from '../contract/smtp-lab.js';
import type { WireSmtpAttempts, WireSmtpRule } from '../contract/wire.js';
import { address, answer, structured, type SmtpLabTools } from './tools.js';

const { maxWindowMs, maxDelayMs, maxTimes, maxLimit, maxTextLength, maxRulesPerAddress } = SMTP_RULE_LIMITS;

/** A field the schema describes to the agent and lets through unchecked (the backend checks it). */
function field(schema: Record<string, unknown>) {
  return z.unknown().optional().meta(schema);
}

const codes = (list: readonly number[]) => list.join(', ');

/** The rule's fields: the HTTP API's names (docs/CONTRACT.md, "SMTP rules"). */
const RULE_FIELDS = {
  kind: field({
    type: 'string',
    enum: [...SMTP_RULE_KINDS],
    description:
      'What the server does to mail for the address: greylist, throttle, defer, reject, slow or disconnect; rate_limit or unavailable (what a provider API answers when it is overloaded or down).',
  }),
  min_delay_ms: field({
    type: 'integer',
    minimum: 0,
    maximum: maxWindowMs,
    description: `greylist: how long after its first attempt a (client IP, MAIL FROM, RCPT TO) triple is let through, in ms (default ${RULE_DEFAULTS.greylist.minDelayMs}).`,
  }),
  reset_on_early_retry: field({
    type: 'boolean',
    description: `greylist: a retry before min_delay_ms starts the window over (default ${RULE_DEFAULTS.greylist.resetOnEarlyRetry}).`,
  }),
  limit: field({
    type: 'integer',
    minimum: 0,
    maximum: maxLimit,
    description: 'throttle (required): messages accepted in any sliding per_ms window; past it RCPT gets 421 4.7.0 and the connection is closed.',
  }),
  per_ms: field({
    type: 'integer',
    minimum: 1,
    maximum: maxWindowMs,
    description: `throttle: the window, in ms (default ${RULE_DEFAULTS.throttle.perMs}).`,
  }),
  code: field({
    type: 'integer',
    enum: [...DEFER_CODES, ...REJECT_CODES],
    description: `defer: ${codes(DEFER_CODES)} (default ${RULE_DEFAULTS.defer.code}); reject: ${codes(REJECT_CODES)} (default ${RULE_DEFAULTS.reject.code}).`,
  }),
  enhanced_code: field({
    type: 'string',
    pattern: '^[245]\\.\\d{1,3}\\.\\d{1,3}$',
    description: `defer, reject: the enhanced status code, of the same class as code (by default ${Object.entries(DEFAULT_ENHANCED)
      .map(([code, enhanced]) => `${enhanced} for ${code}`)
      .join(', ')}).`,
  }),
  text: field({
    type: 'string',
    maxLength: maxTextLength,
    description: `defer, reject: the reply text, one line of printable ASCII, at most ${maxTextLength} characters (the server adds that it is a test rule).`,
  }),
  stage: field({
    type: 'string',
    enum: [...SMTP_RULE_STAGES],
    description: `defer, reject, slow, disconnect: answer at RCPT TO or at the end of DATA (default ${RULE_DEFAULTS.defer.stage} for defer, slow and disconnect; ${RULE_DEFAULTS.reject.stage} for reject, so the refused mail's Message-ID is known).`,
  }),
  times: field({
    type: 'integer',
    minimum: 1,
    maximum: maxTimes,
    description: `defer, reject, disconnect, rate_limit, unavailable: how many attempts it acts on (default ${RULE_DEFAULTS.defer.times}); slow: every attempt until cleared unless given.`,
  }),
  retry_after_ms: field({
    type: 'integer',
    minimum: 0,
    maximum: maxWindowMs,
    description: `rate_limit: what the answer's Retry-After says, in ms (default ${RULE_DEFAULTS.rate_limit.retryAfterMs}).`,
  }),
  status: field({
    type: 'integer',
    enum: [...UNAVAILABLE_STATUSES],
    description: `unavailable: the HTTP status a provider API call gets (default ${RULE_DEFAULTS.unavailable.status}).`,
  }),
  delay_ms: field({
    type: 'integer',
    minimum: 0,
    maximum: maxDelayMs,
    description: 'slow (required): how long the reply is held, in ms; a client that gives up meanwhile is logged as dropped.',
  }),
};

const SET_RULE_DESCRIPTION = [
  'Makes this mail server answer SMTP for one address the way a busy or strict receiving server would, so you can prove that the app sending to it retries, backs off and gives up correctly.',
  'Only mail to `address` is affected, until clear_smtp_rules or until its mailbox is deleted; every SMTP attempt at the address is logged either way (list_smtp_attempts).',
  'Kinds and their fields (durations in ms; a field left out takes its default):',
  `greylist {min_delay_ms, reset_on_early_retry}: the first attempt of each (client IP, MAIL FROM, RCPT TO) gets 451 4.7.1 at RCPT, a retry at least min_delay_ms later passes;`,
  `throttle {limit, per_ms}: past limit messages per window, 421 4.7.0 and the connection is closed;`,
  `defer {code, enhanced_code, text, stage, times}: the next times attempts get a 4xx;`,
  `reject {code, enhanced_code, text, stage, times}: the same with a 5xx (a good sender never retries it);`,
  `slow {delay_ms, stage, times}: the reply is held delay_ms;`,
  `disconnect {stage, times}: the connection drops without a reply;`,
  `rate_limit {retry_after_ms, stage, times}: a provider API call (Resend, SES, SendGrid, Postmark, Mailgun, Brevo) gets that provider's 429 with Retry-After; over SMTP 451 4.7.0 saying when;`,
  `unavailable {status, stage, times}: a provider API call gets that provider's 500/502/503/504; over SMTP 451 4.3.0.`,
  'Rules act in the order they were set: defer with times 2, then reject, is a deferral that turns into a bounce.',
  `An address holds at most ${maxRulesPerAddress} rules. A malformed rule, or a field of another kind, fails with invalid_request naming the field.`,
  'Typical use: set {"kind": "greylist", "min_delay_ms": 1000}, make the app send mail to the address, then call list_smtp_attempts until it shows the 451 4.7.1 deferral and a retry accepted at least 1 s later (wait_for_message then returns the mail).',
].join(' ');

/** `min_delay_ms=1000, reset_on_early_retry=false`: a stored rule's fields, as the API names them. */
function ruleFields(rule: WireSmtpRule): string {
  return Object.entries(rule)
    .filter(([key, value]) => !['id', 'kind', 'set_at', 'remaining'].includes(key) && value !== null)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? JSON.stringify(value) : String(value)}`)
    .join(', ');
}

function ruleLine(rule: WireSmtpRule): string {
  const left =
    rule.remaining === null
      ? 'acts until cleared'
      : rule.remaining === 0
        ? 'used up'
        : `acts on the next ${rule.remaining === 1 ? 'attempt' : `${rule.remaining} attempts`}`;
  const fields = ruleFields(rule);
  return `${rule.id} ${rule.kind}${fields ? ` (${fields})` : ''}: ${left}`;
}

function rulesText(address: string, rules: readonly WireSmtpRule[]): string {
  if (rules.length === 0) return `${address} has no rules: its mail is answered as usual.`;
  return `${address} has ${rules.length === 1 ? '1 rule' : `${rules.length} rules`}, in the order they act:\n${rules.map((r) => `- ${ruleLine(r)}`).join('\n')}`;
}

const TIMELINE_KEY =
  "Each line: the time from the first attempt; which of the sender's mails it was and which try (mailroom takes an attempt for a retry by its Message-ID, or, refused at RCPT before any Message-ID, by its sender and by beginning after the reply it answers); " +
  'the SMTP stage; the reply code and enhanced code; the outcome (accepted; deferred: a 4xx, the sender should retry; rejected: a 5xx, it must not; dropped: no reply); ' +
  "the test rule that answered, in parentheses (none: the server's own reply); for a retry, how long the sender waited after the reply before it; the client IP and MAIL FROM; the subject once DATA was received. " +
  'The structured content has every entry in full (exact times, reply texts, Message-IDs, the stored message id of an accepted one).';

function attemptsText(log: WireSmtpAttempts): string {
  if (log.attempts.length === 0) {
    return `No SMTP attempt has named ${log.address} yet. Every attempt at the address is logged, with rules or without, so call again once the app has sent mail to it.`;
  }
  const attempts = log.attempts.map(attemptFromWire);
  const read = readLog(attempts);
  const timeline = formatTimeline(log.address, attempts, read, { senders: 'always', time: (date) => date.toISOString() });
  const mails = read.deliveries.map((d) => {
    const tries = d.attempts.length === 1 ? 'its first try' : `try ${d.attempts.length}`;
    const last = d.attempts.at(-1)!;
    if (d.state === 'accepted') return `mail ${d.number} was accepted on ${tries}`;
    if (d.state === 'rejected') return `mail ${d.number} was rejected on ${tries} (${replyOf(last)})`;
    return `mail ${d.number} is not through yet: its last attempt (${tries}) was ${last.outcome} (${replyOf(last)})`;
  });
  return `${timeline}\n\nSo far: ${mails.join('; ')}; ${read.retries === 1 ? '1 retry' : `${read.retries} retries`} in all.\n\n${TIMELINE_KEY}`;
}

export function registerSmtpLabTools(server: McpServer, lab: SmtpLabTools): void {
  server.registerTool(
    'set_smtp_rule',
    {
      title: 'Set an SMTP test rule on an address',
      description: SET_RULE_DESCRIPTION,
      // Loose: an unknown field reaches the server's parser, which refuses it by name.
      inputSchema: z.looseObject({ address, ...RULE_FIELDS }).meta({ required: ['address', 'kind'] }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (args, extra) =>
      answer(async () => {
        const { address: to, ...given } = args as Record<string, unknown> & { address: string };
        // A field given as null is taken as left out (some agents send every optional field).
        const rule = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== null && value !== undefined));
        const added = await lab.addRule(to, rule, extra.signal);
        const text = [
          `On ${added.address}, set ${ruleLine(added.rule)}. Fields left out took their defaults.`,
          rulesText(added.address, added.rules),
          `Next: make the app send mail to ${added.address}, then call list_smtp_attempts to see each SMTP attempt, the reply it got and whether the app retried.`,
        ].join('\n');
        return { content: [{ type: 'text', text }], structuredContent: structured(added) };
      }),
  );

  server.registerTool(
    'list_smtp_rules',
    {
      title: "List an address's SMTP test rules",
      description:
        'Lists the SMTP test rules of `address` in the order they act, every field filled in, with how many attempts each still acts on (remaining: null is until cleared, 0 is used up).',
      inputSchema: { address },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args, extra) =>
      answer(async () => {
        const listed = await lab.rules(args.address, extra.signal);
        return { content: [{ type: 'text', text: rulesText(listed.address, listed.rules) }], structuredContent: structured(listed) };
      }),
  );

  server.registerTool(
    'clear_smtp_rules',
    {
      title: "Clear an address's SMTP test rules",
      description:
        'Clears every SMTP test rule of `address` and what they remembered (greylisted senders, throttle windows), so its mail is answered as usual again. The attempt log stays. Idempotent: answers cleared: 0 when there were none.',
      inputSchema: { address },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args, extra) =>
      answer(async () => {
        const { cleared } = await lab.clearRules(args.address, extra.signal);
        const text =
          cleared === 0
            ? `${args.address} had no rules; nothing to clear.`
            : `Cleared ${cleared === 1 ? '1 rule' : `${cleared} rules`} of ${args.address} and what they remembered; its mail is answered as usual again. The attempt log stays: list_smtp_attempts still shows the earlier attempts.`;
        return { content: [{ type: 'text', text }], structuredContent: { cleared } };
      }),
  );

  server.registerTool(
    'list_smtp_attempts',
    {
      title: 'Read the SMTP attempt log of an address',
      description:
        'Every SMTP attempt that named `address` as a recipient, oldest first, with or without rules: when, from which client IP and MAIL FROM, at which stage, the reply (code and enhanced code), the outcome (accepted, deferred, rejected, dropped) and the test rule that answered. ' +
        "The text groups the attempts into the sender's mails and tries and says how long it waited before each retry, which is how to prove an app retried a deferral (and after how long), never retried a 5xx, and slowed down after a 421. " +
        "To watch for a retry, call it again every second or so: it draws on the address's message budget (10 calls a second by default), not on the list budget.",
      inputSchema: { address },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args, extra) =>
      answer(async () => {
        const log = await lab.attempts(args.address, extra.signal);
        return { content: [{ type: 'text', text: attemptsText(log) }], structuredContent: structured(log) };
      }),
  );
}
