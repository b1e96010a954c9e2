// A per-address budget shared by every server on one Redis: the same sliding
// log as budgets/budget.ts, kept in a Redis list per address and budget and
// changed by one script, so two list calls within the second on two servers
// are one too many, and the 429's Retry-After is the shared window's.
// Times come from each server's clock: replicas need clocks in step (NTP).
import { budgetRefusal, refusedFor, windowOf, type BudgetDecision, type RequestBudget } from '../budgets/budget.js';
import type { WallClock } from '../base/clock.js';
import type { RedisConnection, RedisReply } from './redis-connection.js';
import { luaScript } from './lua-scripts.js';

const BUDGET_SCRIPT = luaScript('budget');

const ALLOWED: BudgetDecision = Object.freeze({ allowed: true });

export class RedisBudget implements RequestBudget {
  readonly perSecond: number;
  readonly capacity: number;
  readonly windowMs: number;
  readonly #connection: RedisConnection;
  readonly #clock: WallClock;
  readonly #keyPrefix: string;

  /** `name` tells budgets apart in Redis (`list`, `message`). */
  constructor(options: { connection: RedisConnection; perSecond: number; clock: WallClock; prefix: string; name: string }) {
    this.perSecond = options.perSecond;
    ({ capacity: this.capacity, windowMs: this.windowMs } = windowOf(options.perSecond));
    this.#connection = options.connection;
    this.#clock = options.clock;
    this.#keyPrefix = `${options.prefix}:budget:${options.name}:`;
  }

  async take(key: string): Promise<BudgetDecision> {
    if (this.perSecond === Infinity) return ALLOWED;
    const reply = (await this.#run(key, 'take')) as RedisReply[];
    if (Number(reply[0]) === 1) return ALLOWED;
    return refusedFor(Number(String(reply[1])), Number(String(reply[2])));
  }

  async spend(key: string, what: string): Promise<void> {
    const decision = await this.take(key);
    if (!decision.allowed) throw budgetRefusal(this, key, what, decision);
  }

  async record(key: string): Promise<void> {
    if (this.perSecond === Infinity) return;
    await this.#run(key, 'record');
  }

  #run(key: string, mode: 'take' | 'record'): Promise<RedisReply> {
    return this.#connection.script(BUDGET_SCRIPT, [this.#keyPrefix + key], [String(this.#clock.now()), String(this.capacity), String(this.windowMs), mode]);
  }
}
