// The 25-second ceiling: a longer timeout is clamped, never honoured. The two
// waits really last 25 s, so they run side by side in one test, in a file of
// their own that runs beside the others.
import { expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { call, freshAddress, start } from './helpers.js';
import { connectMcp, waitPath } from './wait-helpers.js';

it('clamps wait_for_message timeout_seconds: 3600 and the long-poll timeout=3600 to 25 s', async () => {
  const server = await start();
  const client = await connectMcp(server);
  const [tool, longPoll] = await Promise.all([
    client.callTool({ name: 'wait_for_message', arguments: { address: freshAddress(), timeout_seconds: 3600 } }, undefined, {
      timeout: 50_000,
    }) as Promise<CallToolResult>,
    call(server, waitPath({ address: freshAddress(), timeout: 3600 })),
  ]);

  const facts = tool.structuredContent as { timed_out: boolean; waited_seconds: number };
  expect(facts.timed_out).toBe(true);
  expect(facts.waited_seconds).toBeGreaterThanOrEqual(24.9);
  expect(facts.waited_seconds).toBeLessThan(35);
  expect((tool.content[0] as { text: string }).text).toContain('within 25 s');

  expect(longPoll.status).toBe(200);
  expect(longPoll.json.timed_out).toBe(true);
  expect(longPoll.json.waited_seconds).toBeGreaterThanOrEqual(24.9);
  expect(longPoll.json.waited_seconds).toBeLessThan(35);
}, 50_000);
