// The refusal a store answers when its backing service cannot be reached:
// `503 unavailable` with `Retry-After: 1` on HTTP and in MCP tool errors
// (docs/CONTRACT.md, "Refusals"); SMTP intake answers any failed store with
// `451 4.3.0`, so the sender keeps the mail and tries again.
import { Refusal } from '../../contract/refusal.js';

export function storeUnavailable(description: string, cause: unknown): Refusal {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return Object.assign(
    new Refusal(
      503,
      'unavailable',
      `The message store (${description}) cannot be reached: ${reason}. The server reconnects on its own; try again in a moment`,
      { 'retry-after': '1' },
    ),
    { cause },
  );
}
