// The fault matrix (cells.ts), run once for real and asserted cell by cell:
// each call comes to its outcome under each fault and strategy, within its
// deadline plus one request timeout, with the fault really applied, and
// nothing in the process is left as an unhandled rejection.
// `npm run faults` prints the same run as a table.
//
// One strategy's half per test file (matrix-polling.test.ts,
// matrix-server-wait.test.ts): the files are `npm test`'s last stage, which
// has the machine to itself, and as two processes side by side the halves
// take half the wall time the whole matrix took in one, each still holding
// 16 cells at once in its process, as the whole matrix did.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { cells, FAULTS, STRATEGIES, type Strategy } from './cells.js';
import { cameAsExpected, inTime, pastDeadline, runMatrix, SCHEDULING_SLACK_MS, type CellResult, type MatrixRun } from './matrix.js';

/** The test file of each strategy's half: a strategy added to cells.ts without one does not compile. */
const HALF_FILES: Readonly<Record<Strategy, string>> = { polling: 'matrix-polling.test.ts', 'server wait': 'matrix-server-wait.test.ts' };

export function describeMatrixHalf(strategy: Strategy): void {
  const all = cells().filter((cell) => cell.strategy === strategy);
  let run: MatrixRun;
  const results = new Map<string, CellResult>();

  beforeAll(async () => {
    run = await runMatrix({ cells: all });
    for (const result of run.results) results.set(result.cell.name, result);
    // About 10 s on two idle cores (cells run 16 at a time); the hook's own timeout is a hang guard.
  }, 120_000);

  describe(`the fault matrix, ${strategy}`, () => {
    it('covers every fault and every call, and each strategy has its half', () => {
      expect(run.results).toHaveLength(FAULTS.length * 4);
      expect(new Set(all.map((c) => c.name)).size).toBe(all.length);
      for (const each of STRATEGIES) {
        expect(readFileSync(new URL(HALF_FILES[each], import.meta.url), 'utf8'), HALF_FILES[each]).toContain(`describeMatrixHalf('${each}');`);
      }
    });

    it('left no rejection unhandled anywhere in the process', () => {
      expect(run.unhandledRejections.map(String)).toEqual([]);
    });

    it.each(all.map((cell) => [cell.name, cell] as const))('%s', (name, cell) => {
      const result = results.get(name)!;
      const checks = `checks ok/failed/429 ${result.checks.ok}/${result.checks.failed}/${result.checks.refused}`;
      const also = cell.after429 ? ` (or "${cell.after429}" after a 429)` : '';
      const took = `after ${Math.round(result.elapsedMs)} ms of a ${result.deadlineMs} ms deadline, ${result.requests.total} requests, ${result.injected} faulted`;
      expect(cameAsExpected(result), `came to "${result.outcome}", expected "${cell.expected}"${also}; ${checks}; ${took}: ${result.detail}`).toBe(true);
      // Within the deadline plus one request timeout (and the event loop's lateness, SCHEDULING_SLACK_MS).
      expect(inTime(result), `${Math.round(pastDeadline(result))} ms past the deadline, allowed ${result.allowedPastMs} + ${SCHEDULING_SLACK_MS}`).toBe(true);
      // The fault really happened: a cell whose fault never fired proves nothing.
      if (cell.fault.name === 'none') expect(result.injected).toBe(0);
      else expect(result.injected).toBeGreaterThan(0);
      // The strategy really was the one named: only a server wait holds.
      if (cell.strategy === 'polling' || cell.call === 'delete') expect(result.server.wait).toBe(0);
      if (cell.strategy === 'server wait' && cell.fault.name === 'none' && cell.call !== 'delete') expect(result.server.wait).toBeGreaterThan(0);
    });
  });
}
