// The ceiling on a server-side wait: a longer timeout is clamped, never
// honoured, and the answer says so. The server here is started with a
// one-second hold cap (`holdCap`), so the clamp shows after one second
// instead of the contract's 25; that 25 s is the default, checked below
// without waiting it out.
import { expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MAX_WAIT_SECONDS } from '../../src/contract/limits.js';
import { clampTimeout } from '../../src/mcp/tools.js';
import { parseWaitTimeout } from '../../src/server/http/mailbox/long-poll.js';
import { resolveServerOptions } from '../../src/server/server-options.js';
import { internalsOf } from '../../src/server/start-server.js';
import { call, freshAddress, start } from './helpers.js';
import { connectMcp, waitPath } from './wait-helpers.js';

const CAP_SECONDS = 1;

it('clamps wait_for_message timeout_seconds: 3600 and the long-poll timeout=3600 to the hold cap', async () => {
  const server = await start({ holdCap: CAP_SECONDS * 1000 });
  const client = await connectMcp(server);
  const [tool, longPoll] = await Promise.all([
    client.callTool({ name: 'wait_for_message', arguments: { address: freshAddress(), timeout_seconds: 3600 } }, undefined, {
      timeout: 50_000,
    }) as Promise<CallToolResult>,
    call(server, waitPath({ address: freshAddress(), timeout: 3600 })),
  ]);

  const facts = tool.structuredContent as { timed_out: boolean; waited_seconds: number };
  expect(facts.timed_out).toBe(true);
  expect(facts.waited_seconds).toBeGreaterThanOrEqual(CAP_SECONDS - 0.1);
  expect(facts.waited_seconds).toBeLessThan(CAP_SECONDS + 10);
  expect((tool.content[0] as { text: string }).text).toContain(`within ${CAP_SECONDS} s`);

  expect(longPoll.status).toBe(200);
  expect(longPoll.json.timed_out).toBe(true);
  expect(longPoll.json.waited_seconds).toBeGreaterThanOrEqual(CAP_SECONDS - 0.1);
  expect(longPoll.json.waited_seconds).toBeLessThan(CAP_SECONDS + 10);
}, 50_000);

it('holds at most 25 s unless told less, and never more', async () => {
  expect(MAX_WAIT_SECONDS).toBe(25);
  expect(resolveServerOptions().holdCap).toBe(25_000);
  expect(parseWaitTimeout('3600')).toBe(25);
  expect(parseWaitTimeout(undefined)).toBe(25);
  expect(parseWaitTimeout('3600', CAP_SECONDS)).toBe(CAP_SECONDS);
  expect(parseWaitTimeout('0.5', CAP_SECONDS)).toBe(0.5);
  expect(clampTimeout(3600, 25)).toBe(25);
  expect(clampTimeout(undefined, 25)).toBe(25);
  expect(clampTimeout(-3, 25)).toBe(0);
  expect(() => resolveServerOptions({ holdCap: 30_000 })).toThrow(
    "Expected `holdCap` to be a positive number of milliseconds, at most 25000 (the contract's clamp), got 30000",
  );
  expect(() => resolveServerOptions({ holdCap: 0 })).toThrow(/`holdCap`/);

  // A server started without the option tells an agent, and clamps to, 25 s.
  const server = await start();
  expect(internalsOf(server).options.holdCap).toBe(25_000);
  const client = await connectMcp(server);
  expect(client.getInstructions()).toContain('A wait holds for at most 25 s');
  const { tools } = await client.listTools();
  expect(tools.find((t) => t.name === 'wait_for_message')?.description).toContain('It holds for at most 25 seconds');
});
