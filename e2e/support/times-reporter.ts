// A Playwright reporter that records each spec file's time (test/support/times.ts):
// from its first test's start to its last test's end, across workers.
import { relative } from 'node:path';
import type { Reporter, TestCase, TestResult } from '@playwright/test/reporter';
import { recordFileTimes, type FileTime } from '../../test/support/times.js';

interface Span {
  project: string;
  file: string;
  first: number;
  last: number;
  tests: number;
}

export default class TimesReporter implements Reporter {
  private readonly spans = new Map<string, Span>();

  onTestEnd(test: TestCase, result: TestResult): void {
    const project = test.parent.project()?.name ?? '';
    const file = relative(process.cwd(), test.location.file);
    const start = result.startTime.getTime();
    const end = start + result.duration;
    const span = this.spans.get(`${project}\0${file}`);
    if (span === undefined) this.spans.set(`${project}\0${file}`, { project, file, first: start, last: end, tests: 1 });
    else {
      span.first = Math.min(span.first, start);
      span.last = Math.max(span.last, end);
      span.tests += 1;
    }
  }

  onEnd(): void {
    const times = [...this.spans.values()].map((s): FileTime => ({
      runner: 'playwright',
      project: s.project,
      file: s.file,
      seconds: Math.round((s.last - s.first) / 100) / 10,
      tests: s.tests,
    }));
    recordFileTimes('playwright', times);
  }

  printsToStdio(): boolean {
    return false;
  }
}
