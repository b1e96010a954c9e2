// What a benchmark section is: a name to pick it by on the command line, a
// line to head its table, and the run. Its own file, so the sections and the
// runner that lists them (run.ts) both import it and not each other.
export interface BenchSection {
  readonly name: string;
  readonly description: string;
  /** Another section's name that runs this one too (`store-bytes` is part of `store`). */
  readonly partOf?: string;
  run(): Promise<void>;
}
