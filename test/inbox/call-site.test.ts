// The caller's frames a wait keeps (inbox/call-site.ts): taken at the call,
// mailroom's own left out, and put into mailroom's errors only.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CallSite } from '../../src/inbox/call-site.js';
import { MailroomError } from '../../src/index.js';

const HERE = fileURLToPath(import.meta.url);

describe('CallSite', () => {
  it("points at the caller's line, mailroom's own frames left out", () => {
    // Taken on one line with an error of this file's own, whose stack says which line that is.
    const [site, probe] = [CallSite.capture(), new Error()];
    const line = Number(/call-site\.test\.ts:(\d+):/.exec(probe.stack!)![1]);
    expect(site.location).toEqual({ file: HERE, line, column: expect.any(Number) });
    expect(site.frames.length).toBeGreaterThan(0);
    expect(site.frames.join('\n')).not.toMatch(/[/\\]src[/\\](inbox|runner|wait)[/\\]/);
  });

  it("gives mailroom's errors, and the TypeError of a bad argument, the caller's frames; any other error keeps its own", async () => {
    const site = CallSite.capture();
    const afterAnAwait = async (error: Error) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      throw error;
    };
    for (const error of [new MailroomError('No mail arrived', { slug: 'mail_timeout' }), new TypeError('Expected `timeout` to be a number')]) {
      const thrown = (await site.run(() => afterAnAwait(error)).catch((e: unknown) => e)) as Error;
      expect(thrown).toBe(error);
      expect(thrown.stack).toBe(`${error.name}: ${error.message}\n${site.frames.join('\n')}`);
      expect(thrown.stack!.split('\n')[1]).toContain(`${HERE}:${site.location!.line}:`);
    }
    const bug = new ReferenceError('x is not defined');
    const own = bug.stack;
    await expect(site.run(() => afterAnAwait(bug))).rejects.toBe(bug);
    expect(bug.stack).toBe(own);
  });
});
