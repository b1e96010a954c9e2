// Writes what a reporter receives for each test (state, meta, annotations
// with their attachments, where its first error points) to the JSON file
// named by MAILROOM_INNER_REPORT, so the outer test can check what mailroom
// handed to Vitest's reporters.
import { writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

export default class AnnotationsReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const out = process.env.MAILROOM_INNER_REPORT;
    if (!out) throw new Error('Set MAILROOM_INNER_REPORT to the path of the JSON report');
    const tests = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const [frame] = test.result().errors?.[0]?.stacks ?? [];
        tests.push({
          name: test.name,
          state: test.result().state,
          meta: test.meta(),
          annotations: test.annotations(),
          errorAt: frame && { file: frame.file, line: frame.line, column: frame.column },
        });
      }
    }
    writeFileSync(out, JSON.stringify(tests, null, 2));
  }
}
