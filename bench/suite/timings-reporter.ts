// Collects what the suite benchmark's run measured: each test's timings (the
// annotation signup.bench.ts leaves), every test that did not pass, and the
// run's own wall time as Playwright counts it; writes them as JSON to
// MAILROOM_BENCH_SUITE_REPORT for bench/suite.ts.
import { writeFileSync } from 'node:fs';
import type { FullResult, Reporter, TestCase, TestResult } from '@playwright/test/reporter';
import { ENV, TIMINGS_ANNOTATION, type Timings } from './ways.js';

export interface SuiteRunReport {
  /** Playwright's own duration of the run: first worker started to last test done. */
  readonly wallMs: number;
  readonly status: FullResult['status'];
  readonly timings: readonly Timings[];
  readonly failures: readonly string[];
}

export default class TimingsReporter implements Reporter {
  readonly #timings: Timings[] = [];
  readonly #failures: string[] = [];

  onTestEnd(test: TestCase, result: TestResult): void {
    if (result.status !== 'passed') {
      this.#failures.push(`${test.title}: ${result.status} ${result.error?.message ?? ''}`);
      return;
    }
    const annotation = result.annotations.find((a) => a.type === TIMINGS_ANNOTATION);
    if (!annotation?.description) this.#failures.push(`${test.title}: passed without leaving its timings`);
    else this.#timings.push(JSON.parse(annotation.description) as Timings);
  }

  onError(error: { message?: string }): void {
    this.#failures.push(`outside a test: ${error.message ?? ''}`);
  }

  onEnd(result: FullResult): void {
    const file = process.env[ENV.report];
    if (!file) throw new Error(`${ENV.report} is not set`);
    const report: SuiteRunReport = { wallMs: result.duration, status: result.status, timings: this.#timings, failures: this.#failures };
    writeFileSync(file, JSON.stringify(report));
  }

  printsToStdio(): boolean {
    return false;
  }
}
