// What Jest knows of the running test and tells no public API: its own
// timeout, and whether it has failed so far. Jest's runner, jest-circus,
// keeps its state on the test file's global under a symbol it does not
// export (`Symbol('JEST_STATE_SYMBOL')`, jest-circus/src/types.ts, the same
// in 29.7 and 30.5); this is the one place mailroom reads it. The fields
// read are the ones jest-circus itself reads to run a test:
// `currentlyRunningTest.timeout || testTimeout` is the timeout it gives the
// body (jest-circus/src/run.ts `_callCircusTest`), and
// `currentlyRunningTest.errors` is where a failed hook or body is recorded
// (eventHandler.ts, `test_fn_failure`, `hook_failure`).
//
// When Jest changes it, the state is not found or has other fields: the
// inbox then works without a deadline cut, `keepOnFailure` cannot tell a
// failure and says so, and the pack check's Jest runs fail on the lost
// cut (its failing wait must be cut before Jest's timeout).
// Pinned and tested with: jest 29.7.0 and 30.5.2.

/** The few fields of jest-circus's state mailroom reads. */
interface CircusState {
  readonly testTimeout?: unknown;
  readonly currentlyRunningTest?: {
    readonly name?: unknown;
    readonly timeout?: unknown;
    readonly errors?: unknown;
    readonly parent?: unknown;
  } | null;
}

const STATE_DESCRIPTION = 'JEST_STATE_SYMBOL';

function circusState(): CircusState | undefined {
  const symbol = Object.getOwnPropertySymbols(globalThis).find((s) => s.description === STATE_DESCRIPTION);
  if (symbol === undefined) return undefined;
  const state: unknown = Reflect.get(globalThis, symbol);
  return typeof state === 'object' && state !== null ? state : undefined;
}

/** The running test as jest-circus sees it, or undefined outside a test (or when Jest changed). */
function runningTest(): NonNullable<CircusState['currentlyRunningTest']> | undefined {
  return circusState()?.currentlyRunningTest ?? undefined;
}

/** The running test's timeout in ms, as Jest gives it to the body; undefined when unknown. */
export function testTimeout(): number | undefined {
  const own = runningTest()?.timeout;
  if (typeof own === 'number' && own > 0) return own;
  const configured = circusState()?.testTimeout;
  return typeof configured === 'number' && configured > 0 ? configured : undefined;
}

/** True once the running test's body or a hook has failed; undefined when Jest does not say. */
export function testHasFailed(): boolean | undefined {
  const errors = runningTest()?.errors;
  return Array.isArray(errors) ? errors.length > 0 : undefined;
}

/** The running test's describe blocks and name, outermost first (Jest's root block left out); empty when unknown. */
export function testNames(): string[] {
  const names: string[] = [];
  let block: unknown = runningTest();
  while (typeof block === 'object' && block !== null) {
    const { name, parent } = block as { name?: unknown; parent?: unknown };
    // The root describe block is ROOT_DESCRIBE_BLOCK and has no parent.
    if (typeof name === 'string' && parent !== undefined) names.unshift(name);
    block = parent;
  }
  return names;
}
