// The webhooks' counters in Prometheus text format (`GET /metrics`), with
// prom-client: attempts, failures by reason, deliveries by how they ended
// (and how many succeeded only after a failure: the seed's "eventual
// successes"), and the attempts' latency. A registry of its own per server,
// so two servers in one process never mix their numbers. No label names a
// webhook or an address: a test suite registers thousands.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Delivery, DeliveryAttempt } from './webhook-store.js';

export class WebhookMetrics {
  readonly registry = new Registry();
  readonly #attempts: Counter<'event_type'>;
  readonly #failures: Counter<'reason'>;
  readonly #settled: Counter<'result'>;
  readonly #eventual: Counter;
  readonly #latency: Histogram;
  readonly #dropped: Counter;

  /** `pending`: how many events are queued or between attempts (a shared store's count is asked of it). */
  constructor(pending: () => number | Promise<number>) {
    const registers = [this.registry];
    this.#attempts = new Counter({
      name: 'mailroom_webhook_attempts_total',
      help: 'Webhook attempts made, by event type',
      labelNames: ['event_type'],
      registers,
    });
    this.#failures = new Counter({
      name: 'mailroom_webhook_failures_total',
      help: 'Webhook attempts that did not deliver, by one-word reason (503, timeout, refused, 4xx-not-retried, ...)',
      labelNames: ['reason'],
      registers,
    });
    this.#settled = new Counter({
      name: 'mailroom_webhook_deliveries_total',
      help: 'Webhook events that reached a final state, by result (delivered, dead_lettered)',
      labelNames: ['result'],
      registers,
    });
    this.#eventual = new Counter({
      name: 'mailroom_webhook_eventual_successes_total',
      help: 'Webhook events delivered after at least one failed attempt',
      registers,
    });
    this.#latency = new Histogram({
      name: 'mailroom_webhook_attempt_duration_seconds',
      help: 'From a webhook request going out to its answer (or failure)',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.#dropped = new Counter({
      name: 'mailroom_webhook_events_dropped_total',
      help: "Webhook events not queued because the webhook's log was full of pending ones",
      registers,
    });
    new Gauge({
      name: 'mailroom_webhook_pending',
      help: 'Webhook events queued or waiting for a retry',
      registers,
      collect() {
        const count = pending();
        if (typeof count === 'number') return this.set(count);
        return count.then((n) => this.set(n));
      },
    });
  }

  attempted(delivery: Delivery, attempt: DeliveryAttempt): void {
    this.#attempts.inc({ event_type: delivery.event.type });
    this.#latency.observe(attempt.latencyMs / 1000);
    if (attempt.outcome !== 'delivered') this.#failures.inc({ reason: attempt.reason });
  }

  settled(delivery: Delivery): void {
    if (delivery.state === 'delivered') {
      this.#settled.inc({ result: 'delivered' });
      if (delivery.attempts.some((a) => a.outcome !== 'delivered')) this.#eventual.inc();
    } else if (delivery.state === 'dead_lettered') this.#settled.inc({ result: 'dead_lettered' });
  }

  dropped(): void {
    this.#dropped.inc();
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
