// Runs a suite from e2e/inner/ as a child Playwright process against the
// same mailroom server and demo app as the outer run, and reads back what
// it printed and its JSON report.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import type { JSONReport, JSONReportSpec, JSONReportSuite, JSONReportTest, JSONReportTestResult } from '@playwright/test/reporter';
import { API_URL, ROOT } from '../servers.js';

const CLI = createRequire(import.meta.url).resolve('@playwright/test/cli');
const CONFIG = join(ROOT, 'e2e', 'inner', 'playwright.config.ts');

export interface InnerRun {
  readonly code: number | null;
  /** stdout and stderr as printed, without colours. */
  readonly output: string;
  readonly report: JSONReport;
  /** Every attempt of every test, flattened. */
  readonly results: readonly InnerResult[];
}

export interface InnerResult {
  /** `describe › test` */
  readonly title: string;
  readonly file: string;
  /** The test's outcome over all its attempts: expected, unexpected, flaky or skipped. */
  readonly outcome: JSONReportTest['status'];
  readonly result: JSONReportTestResult;
  /** The attempt's error messages, without colours, one after the other. */
  readonly error: string;
  /** What the attempt printed to stdout. */
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * `args` are passed to `playwright test` (files, --retries, --update-snapshots…). The
 * child gets the mailbox API only through MAILROOM_API_URL, as a user's CI
 * would, and none of this worker's own Playwright variables.
 */
export async function runInner(args: readonly string[], options: { readonly env?: Readonly<Record<string, string>> } = {}): Promise<InnerRun> {
  const dir = await mkdtemp(join(tmpdir(), 'mailroom-inner-'));
  const reportFile = join(dir, 'report.json');
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (/^(PLAYWRIGHT_|PW_|TEST_WORKER_INDEX$|TEST_PARALLEL_INDEX$|DEBUG_COLORS$)/.test(name)) delete env[name];
  }
  Object.assign(
    env,
    { FORCE_COLOR: '0', CI: '', MAILROOM_API_URL: API_URL, MAILROOM_INNER_REPORT: reportFile, MAILROOM_INNER_OUTPUT: join(dir, 'test-results') },
    options.env,
  );
  try {
    const child = spawn(process.execPath, [CLI, 'test', '--config', CONFIG, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    let report: JSONReport;
    try {
      report = JSON.parse(await readFile(reportFile, 'utf8')) as JSONReport;
    } catch (error) {
      throw new Error(`the inner run (exit ${code}) wrote no JSON report: ${(error as Error).message}\n${output}`, { cause: error });
    }
    const results = flatten(report);
    // Pictures live in files that go with the scratch folder: read them into the report first.
    for (const { result } of results) {
      for (const attachment of result.attachments) {
        if (attachment.contentType === 'image/png' && attachment.path && !attachment.body) {
          attachment.body = (await readFile(attachment.path)).toString('base64');
        }
      }
    }
    return { code, output: stripVTControlCharacters(output), report, results };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function flatten(report: JSONReport): InnerResult[] {
  const out: InnerResult[] = [];
  const visit = (suite: JSONReportSuite, path: readonly string[]): void => {
    const here = suite.title && !suite.title.endsWith('.ts') ? [...path, suite.title] : path;
    for (const spec of suite.specs) collect(spec, here);
    for (const child of suite.suites ?? []) visit(child, here);
  };
  const collect = (spec: JSONReportSpec, path: readonly string[]): void => {
    for (const test of spec.tests) {
      for (const result of test.results) {
        out.push({
          title: [...path, spec.title].join(' › '),
          file: spec.file,
          outcome: test.status,
          result,
          error: result.errors.map((e) => stripVTControlCharacters(e.message)).join('\n'),
          stdout: result.stdout.map((s) => ('text' in s ? s.text : Buffer.from(s.buffer, 'base64').toString())).join(''),
          stderr: result.stderr.map((s) => ('text' in s ? s.text : Buffer.from(s.buffer, 'base64').toString())).join(''),
        });
      }
    }
  };
  for (const suite of report.suites) visit(suite, []);
  return out;
}

/** How many of `file`'s tests ended each way, as the report's `stats` counts them for a whole run. */
export function outcomesOf(run: InnerRun, file: string): Record<JSONReportTest['status'], number> {
  const counts = { expected: 0, unexpected: 0, flaky: 0, skipped: 0 };
  const tests = new Map(run.results.filter((r) => r.file === file).map((r) => [r.title, r.outcome]));
  for (const outcome of tests.values()) counts[outcome]++;
  return counts;
}

/** The addresses an attempt printed as `inbox: <address>`. */
export function printedAddresses(result: InnerResult): string[] {
  return [...result.stdout.matchAll(/^inbox: (\S+)$/gm)].map((m) => m[1]!);
}
