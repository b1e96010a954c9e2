// The CI guide's recipe "Shards side by side against one server"
// (docs/ci-and-sharding.md), run by the pack check on the README's config in
// the project it built from the packed package: `npx mailroom serve` and
// `npm start` started once and waited for, then two `playwright test
// --shard` runs at once with REUSE_SERVERS=1 (the config's
// `reuseExistingServer` then takes the running servers on CI too), each with
// its own --output. It checks what the guide promises: both pass, they ran
// at the same time, each ran a part and together all of the specs (the
// caller checks), every test received its mail at one address of its own,
// no address was used by both, and the server holds no mailbox afterwards
// (each test's teardown deleted its own). The servers are this script's
// children, stopped by their process group when it is done.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stripVTControlCharacters } from 'node:util';

/** The pack check's `step`: runs a command, throws with its output unless it exits 0 and prints `expect`. */
export type Step = (title: string, command: string, args: readonly string[], cwd: string, env?: NodeJS.ProcessEnv, expect?: RegExp) => Promise<string>;

export interface ShardsOptions {
  readonly project: string;
  readonly ports: { readonly smtp: number; readonly http: number; readonly app: number };
  /** The environment of a CI job (CI set), pointing the tests at the server with MAILROOM_API_URL. */
  readonly env: NodeJS.ProcessEnv;
  /** Playwright's config file in the project. */
  readonly config: string;
  readonly step: Step;
}

/** The JSON reporter's shape, as far as the checks read it. */
interface JsonSuite {
  readonly suites?: readonly JsonSuite[];
  readonly specs?: readonly {
    readonly title: string;
    readonly tests: readonly { readonly results: readonly { readonly attachments: readonly { readonly name: string }[] }[] }[];
  }[];
}
export interface JsonReport {
  readonly stats: { readonly startTime: string; readonly duration: number; readonly expected: number; readonly unexpected: number };
  readonly suites: readonly JsonSuite[];
}

const SHARDS = 2;

/** Runs the recipe; resolves to both shards' output, for the caller to check which specs ran. */
export async function runShardsSideBySide({ project, ports, env, config, step }: ShardsOptions): Promise<string> {
  const serverURL = `http://127.0.0.1:${ports.http}`;
  const server = background('npx', ['mailroom', 'serve', '--smtp-port', String(ports.smtp), '--http-port', String(ports.http)], project, env);
  const app = background('npm', ['start'], project, { ...env, SMTP_HOST: '127.0.0.1', SMTP_PORT: String(ports.smtp) });
  try {
    await Promise.all([answering(`${serverURL}/healthz`, server), answering(`http://127.0.0.1:${ports.app}/`, app)]);
    const runs = await Promise.all(
      Array.from({ length: SHARDS }, async (_, i) => {
        const shard = `${i + 1}/${SHARDS}`;
        const reportFile = join(project, `shard-${i + 1}.json`);
        const args = ['test', '--config', config, `--shard=${shard}`, `--output=test-results/shard-${i + 1}`, '--reporter=list,json'];
        const shardEnv = { ...env, REUSE_SERVERS: '1', PLAYWRIGHT_JSON_OUTPUT_FILE: reportFile };
        const output = await step(
          `playwright --shard=${shard}, side by side on one mailroom serve (the CI guide's recipe)`,
          // `npx playwright` without npx's own CPU (pack-check.ts's projectBin says why).
          join(project, 'node_modules/.bin/playwright'),
          args,
          project,
          shardEnv,
          /\d+ passed/,
        );
        return { shard, output, report: JSON.parse(readFileSync(reportFile, 'utf8')) as JsonReport };
      }),
    );
    checkShards(runs);
    const listing = (await (await fetch(`${serverURL}/api/v1/mailboxes`)).json()) as { total: number; mailboxes: { address: string }[] };
    if (listing.total !== 0) {
      throw new Error(`pack check: after the shards the server still holds ${listing.total} mailboxes: ${listing.mailboxes.map((m) => m.address).join(', ')}`);
    }
    const tests = runs.map((r) => r.report.stats.expected).join(' and ');
    console.log(
      `pack check: shards ${runs.map((r) => r.shard).join(' and ')} overlapped on one server, ${tests} tests passed, no address shared, no mailbox left`,
    );
    return runs.map((r) => r.output).join('\n');
  } finally {
    await Promise.all([server.stop(), app.stop()]);
  }
}

/** Both passed, overlapped in time, each ran some tests, and every test received its mail at one address no other test used. */
export function checkShards(runs: readonly { readonly shard: string; readonly output: string; readonly report: JsonReport }[]): void {
  const problems: string[] = [];
  const spans = runs.map(({ report }) => {
    const start = Date.parse(report.stats.startTime);
    return [start, start + report.stats.duration] as const;
  });
  if (!spans.every(([start]) => spans.every(([, end]) => start < end))) problems.push('the shards did not run at the same time');
  const seen = new Map<string, string>();
  for (const { shard, report } of runs) {
    if (report.stats.unexpected > 0 || report.stats.expected === 0)
      problems.push(`shard ${shard} passed ${report.stats.expected} and failed ${report.stats.unexpected}`);
    const tests = addressesByTest(report);
    for (const [title, addresses] of tests) {
      if (addresses.length !== 1)
        problems.push(`shard ${shard}'s test "${title}" received mail at ${addresses.length} addresses (${addresses.join(', ')}), not one`);
    }
    for (const address of tests.flatMap(([, addresses]) => addresses)) {
      const other = seen.get(address);
      if (other !== undefined) problems.push(`${address} was used by shard ${other} and by shard ${shard}`);
      seen.set(address, shard);
    }
  }
  if (problems.length > 0) throw new Error(`pack check: the shards side by side: ${problems.join('; ')}\n${runs.map((r) => r.output).join('\n')}`);
}

/**
 * Each test's title and the distinct addresses its received mail was
 * attached under (`mail "Confirm your email" to a@mailroom.test.html`; every
 * spec of the examples receives mail): its inbox's, one per test.
 */
function addressesByTest(report: JsonReport): [string, string[]][] {
  const tests: [string, string[]][] = [];
  const walk = (suite: JsonSuite): void => {
    for (const spec of suite.specs ?? []) {
      for (const t of spec.tests) {
        for (const r of t.results) {
          const addresses = r.attachments.map((a) => /^mail ".*" to (\S+@\S+)\.(?:html|txt)$/.exec(a.name)?.[1]).filter((a) => a !== undefined);
          tests.push([spec.title, [...new Set(addresses)]]);
        }
      }
    }
    for (const child of suite.suites ?? []) walk(child);
  };
  for (const suite of report.suites) walk(suite);
  return tests;
}

interface Background {
  readonly child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** A command in its own process group (npx and npm start shells), its output kept for a failure. */
function background(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Background {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return {
    child,
    output: () => stripVTControlCharacters(output),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
      await exited;
    },
  };
}

/** Waits until `url` answers 2xx (what the guide's curl --retry does), failing early when the process exits. */
async function answering(url: string, by: Background, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (by.child.exitCode !== null)
      throw new Error(`pack check: ${by.child.spawnargs.join(' ')} exited with ${by.child.exitCode} before ${url} answered:\n${by.output()}`);
    const ok = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    await sleep(200);
  }
  throw new Error(`pack check: ${url} did not answer within ${timeoutMs / 1000} s:\n${by.output()}`);
}
