// `npm run faults`: the fault matrix (test/faults/cells.ts), run for real and
// printed as a table. Exits non-zero when a cell came out wrong or late, or
// anything was left unhandled. `npm test` asserts the same cells
// (test/faults/matrix-suite.ts). `npm run faults -- <text>` runs only the
// cells whose name contains the text.
import { cells } from '../test/faults/cells.js';
import { cellPassed, formatMatrix, runMatrix } from '../test/faults/matrix.js';

const only = process.argv[2];
const run = await runMatrix({ cells: cells().filter((cell) => only === undefined || cell.name.includes(only)) });
console.log(formatMatrix(run));
for (const r of run.results) if (!cellPassed(r)) console.log(`\n${r.cell.name}: ${r.detail}`);
for (const reason of run.unhandledRejections)
  console.log(`\nunhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`);
process.exitCode = run.results.every(cellPassed) && run.unhandledRejections.length === 0 ? 0 : 1;
