// A Vitest reporter that records each test file's wall time, from the start
// of its import to its last hook (test/support/times.ts).
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { recordFileTimes, type FileTime } from './times.js';

const key = (module: TestModule): string => `${module.project.name}\0${module.moduleId}`;

export default class TimesReporter implements Reporter {
  private readonly started = new Map<string, number>();
  private readonly ended = new Map<string, number>();

  onTestModuleStart(module: TestModule): void {
    this.started.set(key(module), performance.now());
  }

  onTestModuleEnd(module: TestModule): void {
    this.ended.set(key(module), performance.now());
  }

  onTestRunEnd(modules: readonly TestModule[]): void {
    const times = modules.map((module): FileTime => {
      const started = this.started.get(key(module));
      const ended = this.ended.get(key(module));
      const diagnostic = module.diagnostic();
      // A module that never started (a failed import) has only its own sums.
      const ms = started !== undefined && ended !== undefined ? ended - started : diagnostic.collectDuration + diagnostic.duration;
      return {
        runner: 'vitest',
        project: module.project.name,
        file: relative(process.cwd(), module.moduleId),
        seconds: Math.round(ms / 100) / 10,
        tests: [...module.children.allTests()].length,
      };
    });
    recordFileTimes('vitest', times);
  }
}
