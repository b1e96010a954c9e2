// A webhook's attempts as a failure message and the report print them: one
// line per attempt, its time from the first, the event, the try, the
// answer, the latency, the outcome, and the wait chosen before the next.
//
//   Webhook wh_… → http://127.0.0.1:3000/webhooks/mail: 1 event, 3 attempts, times from the first (16:49:08.123 UTC):
//     +0.000 s  event 1 message.received  try 1  503          4 ms  retrying  next in 250 ms
//     +0.262 s  event 1 message.received  try 2  refused      1 ms  retrying  next in 500 ms
//     +0.771 s  event 1 message.received  try 3  204          3 ms  delivered
import type { WebhookAttempt, WebhookDelivery } from '../client/webhooks.js';
import { clockTime, formatDuration, offset, plural } from '../contract/format.js';

/** The whole timeline of a webhook: a heading line, then one line per attempt, oldest first. */
export function formatWebhookTimeline(webhook: { readonly id: string; readonly url: string }, deliveries: readonly WebhookDelivery[]): string {
  const heading = `Webhook ${webhook.id} → ${webhook.url}`;
  const rows: { at: Date; event: number; delivery: WebhookDelivery; attempt: WebhookAttempt }[] = [];
  deliveries.forEach((delivery, i) => {
    for (const attempt of delivery.attempts) rows.push({ at: attempt.at, event: i + 1, delivery, attempt });
  });
  rows.sort((a, b) => a.at.getTime() - b.at.getTime());
  const waiting = deliveries.filter((d) => d.attempts.length === 0 && d.state === 'pending' && !d.held).length;
  const held = deliveries.filter((d) => d.held === 'subscription_unconfirmed').length;
  const queued =
    (waiting > 0 ? `; ${plural(waiting, 'event')} queued, not yet attempted` : '') +
    (held > 0
      ? `; ${plural(held, 'event')} held: the SNS subscription is unconfirmed (the app has not fetched the SubscribeURL of the SubscriptionConfirmation)`
      : '');
  if (rows.length === 0) return `${heading}: ${plural(deliveries.length, 'event')}, no attempt yet${queued}.`;
  const first = rows[0]!.at.getTime();
  const copies = deliveries.some((d) => d.attempts.some((a) => a.copy > 1));
  const lines = rows.map(({ at, event, delivery, attempt }) => {
    const answer =
      attempt.status === null ? attempt.reason : attempt.reason === String(attempt.status) ? String(attempt.status) : `${attempt.status} ${attempt.reason}`;
    const notes = [attempt.nextDelayMs !== null ? `next in ${formatDuration(attempt.nextDelayMs)}` : '', attempt.outcome === 'failed' ? '→ dead letter' : ''];
    return [
      `  ${offset(at.getTime() - first).padStart(9)}`,
      `event ${event} ${delivery.eventType}`.padEnd(26),
      `${copies ? `copy ${attempt.copy}, ` : ''}try ${attempt.attempt}`.padEnd(copies ? 15 : 6),
      answer.padEnd(20),
      formatDuration(attempt.latencyMs).padStart(7),
      attempt.outcome.padEnd(9),
      ...notes.filter(Boolean),
    ]
      .join('  ')
      .trimEnd();
  });
  const states = deliveries.map((d, i) => `event ${i + 1} ${d.eventId} ${d.state.replace('_', '-')}`);
  return [
    `${heading}: ${plural(deliveries.length, 'event')}, ${plural(rows.length, 'attempt')}, times from the first (${clockTime(rows[0]!.at)})${queued}:`,
    ...lines,
    `  ${states.join('; ')}`,
  ].join('\n');
}
