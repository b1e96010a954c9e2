// A refusal with its stable slug (CONTRACT.md, "Refusals"). The HTTP API turns
// it into `{"error": slug, "message": text}` with its status; the MCP tools
// turn it into a tool error whose structured content carries the same two.
import type { Budget, BudgetDecision } from '../server/budgets/budget.js';

export class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly slug: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

export function rateRefusal(address: string, what: string, budget: Budget, decision: Exclude<BudgetDecision, { allowed: true }>): Refusal {
  const window = budget.windowMs === 1000 ? 'second' : `${budget.windowMs / 1000} s`;
  const allowance = `${budget.capacity} call${budget.capacity === 1 ? '' : 's'} per ${window} per address`;
  return new Refusal(429, 'rate_limited',
    `The ${what} budget of ${address} is spent (${allowance}; the last allowed call was ${(decision.sinceLastMs / 1000).toFixed(3)} s ago). Retry after ${decision.retryAfterSeconds} s; this refusal did not count against the budget`,
    { 'retry-after': String(decision.retryAfterSeconds) });
}
