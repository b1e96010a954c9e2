// `tsx scripts/parallel.ts typecheck lint:eslint ...`: runs npm scripts side
// by side and exits non-zero when any of them failed. `npm test` runs the
// checks that only read the code this way (the type check, ESLint, Prettier,
// the layer rules): each is one process on one core, so together they take
// about the time of the slowest instead of the sum. Each script's output is
// printed whole when it ends, never interleaved with another's, under a line
// naming it and its time.
import { spawn } from 'node:child_process';

const scripts = process.argv.slice(2);
if (scripts.length === 0) {
  console.error('parallel: name the npm scripts to run, e.g. `tsx scripts/parallel.ts typecheck lint:eslint`');
  process.exit(2);
}

interface Finished {
  readonly script: string;
  readonly code: number | null;
}

function run(script: string): Promise<Finished> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      process.stdout.write(`\n> npm run ${script}: ${code === 0 ? 'passed' : `failed (exit ${code})`} in ${seconds} s\n${output}`);
      resolve({ script, code });
    });
  });
}

const finished = await Promise.all(scripts.map(run));
const failed = finished.filter((f) => f.code !== 0).map((f) => f.script);
if (failed.length > 0) {
  console.error(`\nparallel: ${failed.map((s) => `npm run ${s}`).join(', ')} failed`);
  process.exit(1);
}
