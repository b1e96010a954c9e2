// `npm run fuzz`: the fuzz properties of test/server/fuzz-*.test.ts, longer
// and on any seed. FUZZ_RUNS (default 2000) per property, FUZZ_SEED (default:
// random, printed so a failure can be replayed), FUZZ_ONLY=http|smtp.
//   FUZZ_RUNS=10000 npm run fuzz
//   FUZZ_SEED=1234 FUZZ_ONLY=smtp npm run fuzz
import { startServer } from '../src/server/index.js';
import { capturingLogger, FUZZ_SERVER_OPTIONS, fuzzHttp } from '../test/support/fuzz/http-fuzz.js';
import { fuzzSmtp } from '../test/support/fuzz/smtp-fuzz.js';

const runs = Number(process.env.FUZZ_RUNS ?? 2000);
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const only = process.env.FUZZ_ONLY;
if (!Number.isInteger(runs) || runs < 1) throw new Error(`FUZZ_RUNS must be a positive whole number, got ${process.env.FUZZ_RUNS}`);
if (!Number.isInteger(seed)) throw new Error(`FUZZ_SEED must be a whole number, got ${process.env.FUZZ_SEED}`);

async function property(name: string, body: () => Promise<string>): Promise<boolean> {
  const started = performance.now();
  try {
    const summary = await body();
    console.log(`fuzz ${name}: ${runs} runs, seed ${seed}: passed in ${((performance.now() - started) / 1000).toFixed(1)} s; ${summary}`);
    return true;
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? `\n${error.cause.message}` : '';
    console.error(`fuzz ${name}: seed ${seed}: FAILED\n${error instanceof Error ? error.message.slice(0, 4000) : String(error)}${cause}`);
    return false;
  }
}

let ok = true;
if (only === undefined || only === 'http') {
  ok &&= await property('http', async () => {
    const logger = capturingLogger();
    const server = await startServer({ ...FUZZ_SERVER_OPTIONS, logger });
    try {
      const result = await fuzzHttp({ server, errors: () => logger.errors }, { runs, seed });
      return `statuses ${JSON.stringify(result.statuses)}`;
    } finally {
      await server.close();
    }
  });
}
if (only === undefined || only === 'smtp') {
  ok &&= await property('smtp', async () => {
    const logger = capturingLogger();
    const server = await startServer({ ...FUZZ_SERVER_OPTIONS, logger });
    try {
      const result = await fuzzSmtp({ server, errors: () => logger.errors }, { runs, seed });
      return `replies ${JSON.stringify(result.replies)}, messages stored and checked ${result.stored}`;
    } finally {
      await server.close();
    }
  });
}
process.exitCode = ok ? 0 : 1;
