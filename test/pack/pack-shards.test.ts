// What the pack check's shards recipe (scripts/pack-shards.ts) refuses, on
// JSON reports shaped like Playwright's: the recipe itself runs in the pack
// check (`npm run test:pack`), where a pass proves nothing unless these fail.
import { describe, expect, it } from 'vitest';
import { checkShards, type JsonReport } from '../../scripts/pack-shards.js';

/** A shard's report: its tests, each with the addresses its received mail was attached under. */
function report(startTime: string, duration: number, tests: Record<string, string[]>, unexpected = 0): JsonReport {
  const specs = Object.entries(tests).map(([title, addresses]) => ({
    title,
    tests: [
      { results: [{ attachments: addresses.flatMap((a) => [{ name: `mail "Confirm your email" to ${a}.html` }, { name: `smtp attempts to ${a}.txt` }]) }] },
    ],
  }));
  return { stats: { startTime, duration, expected: specs.length - unexpected, unexpected }, suites: [{ specs }] };
}

const shard = (name: string, r: JsonReport) => ({ shard: name, output: `output of ${name}`, report: r });

describe('checkShards', () => {
  it('passes two overlapping shards whose tests each used one address of their own', () => {
    expect(() =>
      checkShards([
        shard('1/2', report('2030-01-01T12:00:00.000Z', 5_000, { signup: ['a@mailroom.test'], welcome: ['b@mailroom.test'] })),
        shard('2/2', report('2030-01-01T12:00:01.000Z', 3_000, { greylisting: ['c@mailroom.test'] })),
      ]),
    ).not.toThrow();
  });

  it('names an address both shards used, shards that ran one after the other, a failure, and a test with two addresses', () => {
    const run = () =>
      checkShards([
        shard('1/2', report('2030-01-01T12:00:00.000Z', 1_000, { signup: ['a@mailroom.test', 'x@mailroom.test'] })),
        shard('2/2', report('2030-01-01T12:00:02.000Z', 1_000, { welcome: ['a@mailroom.test'], greylisting: [] }, 1)),
      ]);
    expect(run).toThrow('the shards did not run at the same time');
    expect(run).toThrow('shard 1/2\'s test "signup" received mail at 2 addresses (a@mailroom.test, x@mailroom.test), not one');
    expect(run).toThrow('a@mailroom.test was used by shard 1/2 and by shard 2/2');
    expect(run).toThrow('shard 2/2 passed 1 and failed 1');
  });
});
