// A mistake on the command line: printed as it is (it names the command, the
// flag or variable, and what was wrong), and the command exits with code 2.

export class UsageError extends Error {}
